/* test_jaxpr.c -- jx_make_jaxpr's text against what JAX 0.10.2 prints for the same
 * function (str(jax.make_jaxpr(f)(*args)), x64 off unless a case says otherwise), the
 * jaxprs of transformed functions, evaluation of linearized jaxprs, and errors.
 *
 * Where jaxc's text is JAX's, the expected string is JAX's output verbatim. Where they
 * differ, the case checks jaxc's own text (stable, golden-style) and the comment quotes
 * JAX's. The differences found:
 *  1. Line breaking. JAX's pretty printer lays a jaxpr out on one line when it fits in
 *     80 columns, with equations joined by "; " ("let b:f32[3] = sin a; c:f32[3] = exp b
 *     in"), and breaks even a single equation onto its own line when it does not fit.
 *     jaxc prints one equation on one line and more than one on separate lines, always.
 *  2. Unused equation outputs: JAX prints them as "_" (DropVar); jaxc names them.
 *  3. Params: JAX adds sharding params (reduce_sum[axes=(0,) out_sharding=None],
 *     reshape[... sharding=None], iota[... sharding=None]) and dot_general's
 *     preferred_element_type; jaxc prints only the params it has.
 *  4. Float literals: JAX prints repr(float(v)) (0.1 in float32 is
 *     "0.10000000149011612:f32[]", 1e10 is "10000000000.0:f32[]"); jaxc prints "%.8g"
 *     ("0.1:f32[]", "1e+10:f32[]"). Values exact in a few digits (2.0, 0.5, -3.0, inf,
 *     nan) print the same.
 *  5. An empty equation list: JAX prints "let  in" (two spaces), jaxc "let in".
 *  6. Operations on constants only: JAX stages them too ("sin 1.0:f32[]"); jaxc computes
 *     them when traced and prints the result as a literal or constvar. Likewise a weak
 *     Python scalar against an array: JAX keeps the literal ("mul a 2.0:f32[]") where
 *     jaxc broadcasts it first, giving a constvar of the array's shape.
 *  7. Derived functions: jnp.where is JAX's jit(_where) around select_n (operands
 *     swapped); jaxc's is select. Linear accumulation in transposes is JAX's add_any;
 *     jaxc's is add.
 *  8. jaxc has no squeeze primitive: jnp.matmul's squeeze of a size-1 batch dim is a
 *     reshape.
 * Also: rules written as f(g(..), h(..)) (src/transform/jvp.c jvp_mul, jvp_div, ...) stage
 * g and h in C's unspecified argument-evaluation order, so the equation order of a
 * jaxpr of grad(f) can differ between compilers; the cases below avoid such rules. */
#include <stdlib.h>

#include "test.h"
#include "trace/prim.h"

/* ------------------------------------------------------------ functions */

#define FN(name, ...)                                                        \
  static jx_status name(void *ctx, jx_array *const *x, jx_array **out) {   \
    (void)ctx;                                                               \
    __VA_ARGS__;                                                             \
    return out[0] ? JX_OK : jx_last_status();                                \
  }

FN(f_sin, out[0] = jx_sin(x[0]))
FN(f_add, out[0] = jx_add(x[0], x[1]))
FN(f_div, out[0] = jx_divide(x[0], x[1]))
FN(f_neg, out[0] = jx_negative(x[0]))
/* sin(x) - cos(x), staged in this order (C leaves argument evaluation order open) */
FN(f_sin_minus_cos, jx_array *s = jx_sin(x[0]); jx_array *c = jx_cos(x[0]);
   out[0] = jx_subtract(s, c))
FN(f_mul_sub, out[0] = jx_multiply(x[0], x[1]); out[1] = jx_subtract(x[0], x[1]))
FN(f_mul_pass, out[0] = jx_multiply(x[0], x[1]); out[1] = x[0])
FN(f_max_mul, out[0] = jx_multiply(jx_maximum(x[0], x[1]), x[0]))
FN(f_stop_mul, out[0] = jx_multiply(jx_stop_gradient(x[0]), x[0]))
FN(f_log_abs_exp, out[0] = jx_log(jx_abs(jx_exp(x[0]))))
FN(f_times2, out[0] = jx_multiply(x[0], jx_scalar(2.0)))
FN(f_plus_half, out[0] = jx_add(x[0], jx_scalar(0.5)))
FN(f_times_m3, out[0] = jx_multiply(x[0], jx_scalar(-3.0)))
FN(f_times_inf, out[0] = jx_multiply(x[0], jx_scalar(INFINITY)))
FN(f_plus_minf, out[0] = jx_add(x[0], jx_scalar(-INFINITY)))
FN(f_plus_nan, out[0] = jx_add(x[0], jx_scalar(NAN)))
FN(f_plus_3, out[0] = jx_add(x[0], jx_scalar_int(3)))
FN(f_times_int2, out[0] = jx_multiply(x[0], jx_scalar_int(2)))
FN(f_and_true, out[0] = jx_logical_and(x[0], jx_array_from((bool[]){true}, JX_BOOL, 0, NULL)))
FN(f_exp2x_minus_quarter, jx_array *e = jx_exp(jx_multiply(x[0], jx_scalar(2.0)));
   out[0] = jx_subtract(e, jx_scalar(0.25)))
FN(f_plus_const, out[0] = jx_add(x[0], jx_array_from((float[]){1, 2, 3}, JX_FLOAT32, 1,
                                                        (int64_t[]){3})))
FN(f_sin_exp, out[0] = jx_exp(jx_sin(x[0])))
FN(f_transpose, out[0] = jx_transpose(x[0], NULL))
FN(f_sum_sin, out[0] = jx_sum(jx_sin(x[0]), 0, NULL, false))
FN(f_identity, out[0] = x[0])
FN(f_swap, out[0] = x[1]; out[1] = x[0])
FN(f_times_tenth, out[0] = jx_multiply(x[0], jx_scalar(0.1)))
FN(f_times_1e10, out[0] = jx_multiply(x[0], jx_scalar(1e10)))
FN(f_where, jx_array *c = jx_less(x[0], x[1]); out[0] = jx_where(c, x[0], x[1]))
FN(f_sin_of_const, out[0] = jx_sin(jx_scalar_of(1.0, JX_FLOAT32)))
FN(f_astype, out[0] = jx_astype(x[0], JX_INT32))
FN(f_matmul, out[0] = jx_matmul(x[0], x[1]))
FN(f_bad_shapes, out[0] = jx_add(x[0], jx_zeros(1, (int64_t[]){7}, JX_FLOAT32)))

/* Calls of a jitted function (ctx) inside a traced one stay one jit equation. */
static jx_status f_neg_of_jit(void *ctx, jx_array *const *x, jx_array **out) {
  jx_array *r = NULL;
  jx_call(ctx, x, &r);
  out[0] = jx_negative(r);
  return out[0] ? JX_OK : jx_last_status();
}
FN(f_sin_and_mul, out[0] = jx_sin(x[0]); out[1] = jx_multiply(x[0], x[1]))
static jx_status f_sub_of_jit(void *ctx, jx_array *const *x, jx_array **out) {
  jx_array *r[2] = {NULL, NULL};
  jx_call(ctx, x, r);
  out[0] = jx_subtract(r[0], r[1]);
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status f_second_of_jit(void *ctx, jx_array *const *x, jx_array **out) {
  jx_array *r[2] = {NULL, NULL};
  jx_status s = jx_call(ctx, x, r);
  out[0] = r[1];
  return s;
}
static jx_status f_threefry(void *ctx, jx_array *const *x, jx_array **out) {
  return prim_threefry2x32(x[0], x[1], x[2], x[3], out);
}
static jx_status f_sort2(void *ctx, jx_array *const *x, jx_array **out) {
  return prim_sort_n(2, x, 0, out);
}

/* ------------------------------------------------------------ helpers */

/* jx_make_jaxpr of impl at the example inputs; the caller frees the text. */
static char *jaxpr_of(jx_fn_impl impl, int nin, int nout, jx_array *const *in) {
  jx_fn *f = jx_fn_new("f", nin, nout, impl, NULL);
  char *s = jx_make_jaxpr(f, in);
  jx_fn_free(f);
  return s;
}

#define CHECK_JAXPR(impl, nin, nout, in, want)      \
  do {                                              \
    char *_s = jaxpr_of(impl, nin, nout, in);      \
    CHECK_STR(_s, want);                            \
    if (!_s) jx_clear_error();                      \
    free(_s);                                       \
  } while (0)

static jx_array *f32v(int64_t n) { return jx_zeros(1, &n, JX_FLOAT32); }
static jx_array *f32s(double v) { return jx_scalar_of(v, JX_FLOAT32); }

/* ------------------------------------------------------------ the cases */

/* Text identical to JAX's. */
static void test_same_as_jax(void) {
  jx_array *a = f32v(3), *ab[2] = {f32v(3), f32v(3)}, *s = f32s(1.5);
  CHECK_JAXPR(f_sin, 1, 1, &a, "{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }");
  CHECK_JAXPR(f_neg, 1, 1, &a, "{ lambda ; a:f32[3]. let b:f32[3] = neg a in (b,) }");
  CHECK_JAXPR(f_add, 2, 1, ab, "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = add a b in (c,) }");
  CHECK_JAXPR(f_div, 2, 1, ab, "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = div a b in (c,) }");
  CHECK_JAXPR(f_mul_pass, 2, 2, ab,
              "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = mul a b in (c, a) }");
  /* multi-line: JAX breaks these because they do not fit in 80 columns */
  CHECK_JAXPR(f_sin_minus_cos, 1, 1, &a,
              "{ lambda ; a:f32[3]. let\n"
              "    b:f32[3] = sin a\n"
              "    c:f32[3] = cos a\n"
              "    d:f32[3] = sub b c\n"
              "  in (d,) }");
  CHECK_JAXPR(f_mul_sub, 2, 2, ab,
              "{ lambda ; a:f32[3] b:f32[3]. let\n"
              "    c:f32[3] = mul a b\n"
              "    d:f32[3] = sub a b\n"
              "  in (c, d) }");
  CHECK_JAXPR(f_max_mul, 2, 1, ab,
              "{ lambda ; a:f32[3] b:f32[3]. let\n"
              "    c:f32[3] = max a b\n"
              "    d:f32[3] = mul c a\n"
              "  in (d,) }");
  CHECK_JAXPR(f_stop_mul, 1, 1, &a,
              "{ lambda ; a:f32[3]. let\n"
              "    b:f32[3] = stop_gradient a\n"
              "    c:f32[3] = mul b a\n"
              "  in (c,) }");
  CHECK_JAXPR(f_log_abs_exp, 1, 1, &s,
              "{ lambda ; a:f32[]. let\n"
              "    b:f32[] = exp a\n"
              "    c:f32[] = abs b\n"
              "    d:f32[] = log c\n"
              "  in (d,) }");
  jx_free(a), jx_free(ab[0]), jx_free(ab[1]), jx_free(s);
}

/* Literals (0-d constants print inline) and constvars (the others). */
static void test_literals_and_constants(void) {
  jx_array *s = f32s(1.5), *a = f32v(3);
  CHECK_JAXPR(f_times2, 1, 1, &s, "{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }");
  CHECK_JAXPR(f_plus_half, 1, 1, &s,
              "{ lambda ; a:f32[]. let b:f32[] = add a 0.5:f32[] in (b,) }");
  CHECK_JAXPR(f_times_m3, 1, 1, &s,
              "{ lambda ; a:f32[]. let b:f32[] = mul a -3.0:f32[] in (b,) }");
  CHECK_JAXPR(f_times_inf, 1, 1, &s,
              "{ lambda ; a:f32[]. let b:f32[] = mul a inf:f32[] in (b,) }");
  CHECK_JAXPR(f_plus_minf, 1, 1, &s,
              "{ lambda ; a:f32[]. let b:f32[] = add a -inf:f32[] in (b,) }");
  CHECK_JAXPR(f_plus_nan, 1, 1, &s,
              "{ lambda ; a:f32[]. let b:f32[] = add a nan:f32[] in (b,) }");
  /* a weak int against float32: the literal takes the array's dtype */
  CHECK_JAXPR(f_times_int2, 1, 1, &s,
              "{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }");
  jx_array *i = jx_scalar_of(1, JX_INT32);
  CHECK_JAXPR(f_plus_3, 1, 1, &i, "{ lambda ; a:i32[]. let b:i32[] = add a 3:i32[] in (b,) }");
  jx_array *b = jx_array_from((bool[]){true}, JX_BOOL, 0, NULL);
  CHECK_JAXPR(f_and_true, 1, 1, &b,
              "{ lambda ; a:bool[]. let b:bool[] = and a True:bool[] in (b,) }");
  CHECK_JAXPR(f_exp2x_minus_quarter, 1, 1, &s,
              "{ lambda ; a:f32[]. let\n"
              "    b:f32[] = mul a 2.0:f32[]\n"
              "    c:f32[] = exp b\n"
              "    d:f32[] = sub c 0.25:f32[]\n"
              "  in (d,) }");
  /* a closed-over array is a constvar, listed before the ';' */
  CHECK_JAXPR(f_plus_const, 1, 1, &a,
              "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = add b a in (c,) }");
  /* x64: 64-bit avals and literals */
  bool x64 = jx_config_x64_enabled();
  jx_config_enable_x64(true);
  jx_array *d = jx_scalar_of(1, JX_FLOAT64), *l = jx_scalar_of(1, JX_INT64);
  CHECK_JAXPR(f_times2, 1, 1, &d, "{ lambda ; a:f64[]. let b:f64[] = mul a 2.0:f64[] in (b,) }");
  CHECK_JAXPR(f_plus_3, 1, 1, &l, "{ lambda ; a:i64[]. let b:i64[] = add a 3:i64[] in (b,) }");
  jx_free(d), jx_free(l);
  jx_config_enable_x64(x64);
  jx_free(s), jx_free(a), jx_free(i), jx_free(b);
}

/* jaxc's own text where JAX's differs (the numbers refer to the header comment). */
static void test_differs_from_jax(void) {
  jx_array *a = f32v(3), *ab[2] = {f32v(3), f32v(3)}, *s = f32s(1.5);
  jx_array *m = jx_zeros(2, (int64_t[]){2, 3}, JX_FLOAT32);
  /* 1. JAX: "{ lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = exp b in (c,) }" */
  CHECK_JAXPR(f_sin_exp, 1, 1, &a,
              "{ lambda ; a:f32[3]. let\n"
              "    b:f32[3] = sin a\n"
              "    c:f32[3] = exp b\n"
              "  in (c,) }");
  /* 1. JAX: "{ lambda ; a:f32[2,3]. let\n    b:f32[3,2] = transpose[permutation=(1, 0)] a
   *    \n  in (b,) }" */
  CHECK_JAXPR(f_transpose, 1, 1, &m,
              "{ lambda ; a:f32[2,3]. let b:f32[3,2] = transpose[permutation=(1, 0)] a in (b,) }");
  /* 1. JAX: "{ lambda ; a:f32[3]. let\n    b:i32[3] = convert_element_type[new_dtype=int32
   *    weak_type=False] a\n  in (b,) }" */
  CHECK_JAXPR(f_astype, 1, 1, &a,
              "{ lambda ; a:f32[3]. let b:i32[3] = convert_element_type[new_dtype=int32 "
              "weak_type=False] a in (b,) }");
  /* 3. JAX: "...c:f32[] = reduce_sum[axes=(0,) out_sharding=None] b..." */
  CHECK_JAXPR(f_sum_sin, 1, 1, &a,
              "{ lambda ; a:f32[3]. let\n"
              "    b:f32[3] = sin a\n"
              "    c:f32[] = reduce_sum[axes=(0,)] b\n"
              "  in (c,) }");
  /* 4. JAX: "mul a 0.10000000149011612:f32[]", "mul a 10000000000.0:f32[]" */
  CHECK_JAXPR(f_times_tenth, 1, 1, &s,
              "{ lambda ; a:f32[]. let b:f32[] = mul a 0.1:f32[] in (b,) }");
  CHECK_JAXPR(f_times_1e10, 1, 1, &s,
              "{ lambda ; a:f32[]. let b:f32[] = mul a 1e+10:f32[] in (b,) }");
  /* 5. JAX: "{ lambda ; a:f32[]. let  in (a,) }", "{ lambda ; a:f32[] b:f32[]. let  in
   *    (b, a) }" */
  CHECK_JAXPR(f_identity, 1, 1, &s, "{ lambda ; a:f32[]. let in (a,) }");
  jx_array *ss[2] = {f32s(1), f32s(2)};
  CHECK_JAXPR(f_swap, 2, 2, ss, "{ lambda ; a:f32[] b:f32[]. let in (b, a) }");
  /* 6. JAX: "{ lambda ; . let a:f32[] = sin 1.0:f32[] in (a,) }" */
  CHECK_JAXPR(f_sin_of_const, 0, 1, NULL, "{ lambda ; . let in (0.84147096:f32[],) }");
  /* 6. JAX: "{ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }" (its binary
   *    primitives take a 0-d literal; jaxc's broadcast it, staged with the tracer:
   *    np_broadcast_to_like) */
  CHECK_JAXPR(f_times2, 1, 1, &a,
              "{ lambda ; a:f32[3]. let\n"
              "    b:f32[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,)] 2.0:f32[]\n"
              "    c:f32[3] = mul a b\n"
              "  in (c,) }");
  /* 7. JAX: "...c:bool[3] = lt a b\n    d:f32[3] = jit[\n      name=_where\n      jaxpr={
   *    lambda ; c:bool[3] a:f32[3] b:f32[3]. let\n          d:f32[3] = select_n c b a\n
   *    in (d,) }\n    ] c a b..." */
  CHECK_JAXPR(f_where, 2, 1, ab,
              "{ lambda ; a:f32[3] b:f32[3]. let\n"
              "    c:bool[3] = lt a b\n"
              "    d:f32[3] = select c a b\n"
              "  in (d,) }");
  /* 1, 3. jnp.matmul broadcasts batch dims without materializing them: one dot_general
   * (the weight of x @ W is never copied per batch entry). JAX: "c:f32[2,3,5] =
   * dot_general[\n      dimension_numbers=(([2], [0]), ([], []))\n
   * preferred_element_type=float32\n    ] a b" */
  jx_array *mm[2] = {jx_zeros(3, (int64_t[]){2, 3, 4}, JX_FLOAT32),
                     jx_zeros(2, (int64_t[]){4, 5}, JX_FLOAT32)};
  CHECK_JAXPR(f_matmul, 2, 1, mm,
              "{ lambda ; a:f32[2,3,4] b:f32[4,5]. let c:f32[2,3,5] = dot_general["
              "dimension_numbers=(([2], [0]), ([], []))] a b in (c,) }");
  jx_free(mm[0]), jx_free(mm[1]);
  /* 3, 8. JAX: "c:f32[2,3,4] = squeeze[dimensions=(1,)] a", then the same dot_general
   *    and transpose */
  mm[0] = jx_zeros(4, (int64_t[]){2, 1, 3, 4}, JX_FLOAT32);
  mm[1] = jx_zeros(3, (int64_t[]){5, 4, 6}, JX_FLOAT32);
  CHECK_JAXPR(f_matmul, 2, 1, mm,
              "{ lambda ; a:f32[2,1,3,4] b:f32[5,4,6]. let\n"
              "    c:f32[2,3,4] = reshape[dimensions=None new_sizes=(2, 3, 4)] a\n"
              "    d:f32[2,3,5,6] = dot_general[dimension_numbers=(([2], [1]), ([], []))] c b\n"
              "    e:f32[2,5,3,6] = transpose[permutation=(0, 2, 1, 3)] d\n"
              "  in (e,) }");
  jx_free(mm[0]), jx_free(mm[1]);
  jx_free(a), jx_free(ab[0]), jx_free(ab[1]), jx_free(s), jx_free(m);
  jx_free(ss[0]), jx_free(ss[1]);
}

/* make_jaxpr of transformed functions. */
static void test_transformed(void) {
  jx_array *a = f32v(3), *s = f32s(1.5), *y = NULL;
  jx_fn *f = jx_fn_new("sin", 1, 1, f_sin, NULL);
  /* grad(sin): as JAX, the unused sin output is "_" and takes no name */
  jx_fn *g = jx_grad(f, 0, NULL);
  char *t = jx_make_jaxpr(g, &s);
  CHECK_STR(t, "{ lambda ; a:f32[]. let\n"
               "    _:f32[] = sin a\n"
               "    b:f32[] = cos a\n"
               "    c:f32[] = mul 1.0:f32[] b\n"
               "  in (c,) }");
  free(t);
  jx_fn_free(g);
  /* grad(sum(sin(x))): the ones cotangent is a constvar (JAX: broadcast_in_dim 1.0) */
  jx_fn *ss = jx_fn_new("sum_sin", 1, 1, f_sum_sin, NULL);
  g = jx_grad(ss, 0, NULL);
  t = jx_make_jaxpr(g, &a);
  CHECK_STR(t, "{ lambda a:f32[3]; b:f32[3]. let\n"
               "    c:f32[3] = sin b\n"
               "    d:f32[3] = cos b\n"
               "    _:f32[] = reduce_sum[axes=(0,)] c\n"
               "    e:f32[3] = mul a d\n"
               "  in (e,) }");
  free(t);
  jx_fn_free(g), jx_fn_free(ss);
  /* linearize(sin) and vjp(sin): cos(x) is a constvar, as in JAX (same text) */
  jx_fn *lin = jx_linearize(f, &a, &y);
  t = jx_make_jaxpr(lin, &a);
  CHECK_STR(t, "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = mul b a in (c,) }");
  free(t);
  jx_free(y);
  jx_fn *pb = jx_vjp(f, &a, &y);
  t = jx_make_jaxpr(pb, &a);
  CHECK_STR(t, "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = mul b a in (c,) }");
  free(t);
  jx_free(y);
  /* a linearized function traced at the wrong shape fails like a call would */
  jx_array *w = f32v(4);
  CHECK(jx_make_jaxpr(lin, &w) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "linearize");
  jx_fn_free(pb), jx_fn_free(lin), jx_fn_free(f);
  jx_free(a), jx_free(s), jx_free(w);
}

/* Several results per equation, and jit equations holding their jaxpr. */
static void test_calls_and_multi_output(void) {
  jx_array *a = f32v(3), *ab[2] = {f32v(3), f32v(3)};
  jx_fn *g = jx_fn_new("g", 1, 1, f_sin, NULL), *jg = jx_jit(g);
  jx_fn *f = jx_fn_new("f", 1, 1, f_neg_of_jit, jg);
  char *t = jx_make_jaxpr(f, &a);
  CHECK_STR(t, "{ lambda ; a:f32[3]. let\n"
               "    b:f32[3] = jit[\n"
               "      name=g\n"
               "      jaxpr={ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }\n"
               "    ] a\n"
               "    c:f32[3] = neg b\n"
               "  in (c,) }");
  free(t);
  jx_fn_free(f), jx_fn_free(jg), jx_fn_free(g);
  g = jx_fn_new("h", 2, 2, f_sin_and_mul, NULL), jg = jx_jit(g);
  f = jx_fn_new("f", 2, 1, f_sub_of_jit, jg);
  t = jx_make_jaxpr(f, ab);
  CHECK_STR(t, "{ lambda ; a:f32[3] b:f32[3]. let\n"
               "    c:f32[3] d:f32[3] = jit[\n"
               "      name=h\n"
               "      jaxpr={ lambda ; a:f32[3] b:f32[3]. let\n"
               "          c:f32[3] = sin a\n"
               "          d:f32[3] = mul a b\n"
               "        in (c, d) }\n"
               "    ] a b\n"
               "    e:f32[3] = sub c d\n"
               "  in (e,) }");
  free(t);
  jx_fn_free(f);
  /* an output nothing reads is "_" at the top level and in the jit's jaxpr, which
   * shares the outer names (JAX 0.10: jit(lambda a, b: (sin(a), a * b)) taking [1]) */
  f = jx_fn_new("f", 2, 1, f_second_of_jit, jg);
  t = jx_make_jaxpr(f, ab);
  CHECK_STR(t, "{ lambda ; a:f32[3] b:f32[3]. let\n"
               "    _:f32[3] c:f32[3] = jit[\n"
               "      name=h\n"
               "      jaxpr={ lambda ; a:f32[3] b:f32[3]. let\n"
               "          _:f32[3] = sin a\n"
               "          c:f32[3] = mul a b\n"
               "        in (_, c) }\n"
               "    ] a b\n"
               "  in (c,) }");
  free(t);
  jx_fn_free(f), jx_fn_free(jg), jx_fn_free(g);
  /* JAX breaks this one line at 80 columns (difference 1) */
  jx_array *u = jx_zeros(1, (int64_t[]){3}, JX_UINT32);
  CHECK_JAXPR(f_threefry, 4, 2, ((jx_array *[]){u, u, u, u}),
              "{ lambda ; a:u32[3] b:u32[3] c:u32[3] d:u32[3]. let e:u32[3] f:u32[3] = "
              "threefry2x32 a b c d in (e, f) }");
  jx_array *si[2] = {f32v(3), jx_zeros(1, (int64_t[]){3}, JX_INT32)};
  CHECK_JAXPR(f_sort2, 2, 2, si,
              "{ lambda ; a:f32[3] b:i32[3]. let c:f32[3] d:i32[3] = sort[dimension=0 "
              "is_stable=True num_keys=1] a b in (c, d) }");
  jx_free(u), jx_free(si[0]), jx_free(si[1]);
  jx_free(a), jx_free(ab[0]), jx_free(ab[1]);
}

/* The linear jaxpr behind jx_linearize, evaluated, equals jvp. */
static void test_linearized_eval(void) {
  jx_array *x = jx_array_from((float[]){0.5f, -1, 2}, JX_FLOAT32, 1, (int64_t[]){3});
  jx_array *t = jx_array_from((float[]){1, 0.25f, -3}, JX_FLOAT32, 1, (int64_t[]){3});
  jx_fn *f = jx_fn_new("sin_minus_cos", 1, 1, f_sin_minus_cos, NULL);
  jx_array *y = NULL, *lt = NULL, *jy = NULL, *jt = NULL;
  jx_fn *lin = jx_linearize(f, &x, &y);
  CHECK(jx_call(lin, &t, &lt) == JX_OK);
  CHECK(jx_jvp(f, &x, &t, &jy, &jt) == JX_OK);
  float a[3], b[3], p[3], q[3];
  CHECK(jx_read(lt, a, sizeof a) == JX_OK && jx_read(jt, b, sizeof b) == JX_OK);
  CHECK(jx_read(y, p, sizeof p) == JX_OK && jx_read(jy, q, sizeof q) == JX_OK);
  for (int i = 0; i < 3; i++) {
    CHECK(a[i] == b[i]); /* the same primitives on the same values */
    CHECK(p[i] == q[i]);
    float xi = i == 0 ? 0.5f : i == 1 ? -1.0f : 2.0f, ti = i == 0 ? 1 : i == 1 ? 0.25f : -3;
    CHECK_NEAR(a[i], ti * (cos(xi) + sin(xi)), 1e-6);
  }
  /* the jaxpr of the linearized function: cos(x) and -sin(x) are constvars. JAX keeps
   * sin(x) and negates the product ("e:f32[3] = mul c b\n    f:f32[3] = neg e\n    g:f32[3]
   * = sub d f"): jaxc's cos rule negates the primal factor, which linearize computes. */
  char *s = jx_make_jaxpr(lin, &t);
  CHECK_STR(s, "{ lambda a:f32[3] b:f32[3]; c:f32[3]. let\n"
               "    d:f32[3] = mul c a\n"
               "    e:f32[3] = mul c b\n"
               "    f:f32[3] = sub d e\n"
               "  in (f,) }");
  free(s);
  jx_free(y), jx_free(lt), jx_free(jy), jx_free(jt);
  jx_fn_free(lin), jx_fn_free(f);
  jx_free(x), jx_free(t);
}

static void test_errors(void) {
  jx_array *a = f32v(3);
  CHECK(jx_make_jaxpr(NULL, &a) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_make_jaxpr: the function is NULL");
  jx_fn *f = jx_fn_new("sin", 1, 1, f_sin, NULL);
  CHECK(jx_make_jaxpr(f, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_make_jaxpr: example_in is NULL");
  CHECK(jx_make_jaxpr(f, (jx_array *[]){NULL}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "input 0 is NULL");
  jx_fn *bad = jx_fn_new("bad", 1, 1, f_bad_shapes, NULL);
  CHECK(jx_make_jaxpr(bad, &a) == NULL); /* f's own error propagates */
  CHECK_ERROR(JX_ERR_SHAPE, "(7,)");
  /* the example's values do not matter, only its shape and dtype */
  jx_array *b = jx_ones(1, (int64_t[]){3}, JX_FLOAT32);
  char *s1 = jx_make_jaxpr(f, &a), *s2 = jx_make_jaxpr(f, &b);
  CHECK_STR(s1, s2);
  free(s1), free(s2);
  jx_fn_free(bad), jx_fn_free(f);
  jx_free(a), jx_free(b);
}

/* ------------------------------------------------------------ running */

static void (*current_body)(void);
static void run_body(void) {
  int64_t fns = jx_live_fns();
  bool x64 = jx_config_x64_enabled();
  jx_config_enable_x64(false); /* JAX's default, in which the expected texts were printed */
  current_body();
  jx_config_enable_x64(x64);
  CHECK_MSG(jx_live_fns() == fns, "leaked %lld functions", (long long)(jx_live_fns() - fns));
}
#define RUN(fn) (current_body = fn, test_run(#fn, run_body))

int main(void) {
  RUN(test_same_as_jax);
  RUN(test_literals_and_constants);
  RUN(test_differs_from_jax);
  RUN(test_transformed);
  RUN(test_linearized_eval);
  RUN(test_calls_and_multi_output);
  RUN(test_errors);
  return test_finish();
}
