/* test_float0.c -- jax.dtypes.float0 (JX_FLOAT0): the (co)tangents of integer and bool
 * values. JAX goldens (tests/golden/float0.txt, from tools/golden_float0.py) for
 * jx_grad_allow_int / jx_value_and_grad_allow_int (also under jit, vmap and
 * jit(vmap)), jx_vjp, jx_jvp and jx_linearize with integer primals, jx_jacrev_allow_int
 * and jacfwd / jacrev of functions with integer inputs; then float0
 * arrays themselves (shape, no data, printing, every operation refused), nesting, and
 * the errors. Every case ends with no live arrays and no live functions. */
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "jaxc/io.h"
#include "test.h"

#define OK(x) ((x) ? JX_OK : jx_last_status())

static jx_status mul(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_multiply(in[0], in[1]);
  return OK(out[0]);
}
static jx_status sum_mul(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sum(jx_multiply(in[0], in[1]), 0, NULL, false);
  return OK(out[0]);
}
static jx_status where_bool(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *x = in[0];
  out[0] = jx_sum(jx_where(in[1], jx_multiply(x, x), jx_multiply(jx_scalar(2.0), x)), 0, NULL, false);
  return OK(out[0]);
}
static jx_status mul_aux(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_multiply(in[0], in[1]);
  out[1] = jx_add(in[1], jx_scalar_int(1));
  return OK(out[0] && out[1]);
}
static jx_status int_only(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_multiply(jx_sum(in[0], 0, NULL, false), jx_scalar(2.0));
  return OK(out[0]);
}
static jx_status square_mul(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_multiply(jx_multiply(in[0], in[0]), in[1]);
  return OK(out[0]);
}

static const struct {
  const char *name;
  int nin, nout;
  jx_fn_impl impl;
} table[] = {
    {"mul", 2, 1, mul},           {"sum_mul", 2, 1, sum_mul}, {"where_bool", 2, 1, where_bool},
    {"mul_aux", 2, 2, mul_aux},   {"int_only", 2, 1, int_only}, {"square_mul", 2, 1, square_mul},
};

static jx_fn *table_fn(const char *name) {
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(table[i].name, name)) return jx_fn_new(name, table[i].nin, table[i].nout, table[i].impl, NULL);
  return NULL;
}

/* "0,1" -> {0, 1} */
static int parse_argnums(const char *s, int *an) {
  int n = 0;
  while (s && *s && n < 4) {
    an[n++] = (int)strtol(s, (char **)&s, 10);
    if (*s == ',') s++;
  }
  return n;
}

/* The transformation of case c applied to f: a new jx_fn (grad family) or NULL. */
static jx_fn *grad_family(const GoldenCase *c, jx_fn *f) {
  int an[4], na = parse_argnums(golden_param(c, "argnums"), an);
  const char *k = c->fn;
  if (!strcmp(k, "grad")) return jx_grad(f, na, an);
  if (!strcmp(k, "jacfwd")) return jx_jacfwd(f, na, an);
  if (!strcmp(k, "jacrev")) return jx_jacrev(f, na, an);
  if (!strcmp(k, "jacrev_allow_int")) return jx_jacrev_allow_int(f, na, an);
  if (!strcmp(k, "value_and_grad_allow_int")) return jx_value_and_grad_allow_int(f, na, an);
  jx_fn *g = jx_grad_allow_int(f, na, an), *r = NULL;
  if (!strcmp(k, "grad_allow_int")) return g;
  if (!strcmp(k, "jit_grad_allow_int")) r = jx_jit(g);
  else if (!strcmp(k, "vmap_grad_allow_int")) r = jx_vmap(g, NULL, NULL);
  else if (!strcmp(k, "jit_vmap_grad_allow_int")) {
    jx_fn *v = jx_vmap(g, NULL, NULL);
    r = jx_jit(v);
    jx_fn_free(v);
  }
  jx_fn_free(g);
  return r;
}

static void test_goldens(void) {
  int ncases = 0;
  GoldenCase *cases = golden_load("float0.txt", &ncases);
  CHECK_MSG(cases && ncases == 36, "float0.txt: %d cases", ncases);
  for (int i = 0; i < ncases; i++) {
    const GoldenCase *c = &cases[i];
    jx_scope_begin();
    jx_fn *f = table_fn(golden_param(c, "fn"));
    CHECK_MSG(f != NULL, "%s: no C function", c->name);
    if (!f) {
      jx_scope_end(0, NULL);
      continue;
    }
    int nin = jx_fn_nin(f), nout = jx_fn_nout(f);
    jx_array *in[8] = {NULL}, *out[8] = {NULL};
    for (int k = 0; k < c->nin && k < 8; k++) in[k] = golden_to_array(&c->in[k]);
    jx_status s;
    int ngot = c->nout;
    if (!strcmp(c->fn, "vjp")) {
      jx_fn *pb = jx_vjp(f, in, out);
      s = pb ? jx_call(pb, in + nin, out + nout) : jx_last_status();
      jx_fn_free(pb);
    } else if (!strcmp(c->fn, "jvp")) {
      s = jx_jvp(f, in, in + nin, out, out + nout);
    } else if (!strcmp(c->fn, "linearize")) {
      jx_array *po[8] = {NULL};
      jx_fn *lin = jx_linearize(f, in, po);
      s = lin ? jx_call(lin, in + nin, out) : jx_last_status();
      for (int o = 0; o < nout; o++) jx_free(po[o]);
      jx_fn_free(lin);
    } else {
      jx_fn *g = grad_family(c, f);
      s = g ? jx_call(g, in, out) : jx_last_status();
      if (g && !c->err) CHECK_MSG(jx_fn_nout(g) == c->nout, "%s: %d outputs", c->name, jx_fn_nout(g));
      jx_fn_free(g);
    }
    if (c->err) {
      CHECK_MSG(s == c->err, "%s: want %s, got %s (%s)", c->name, jx_status_name(c->err),
                jx_status_name(s), jx_last_error());
    } else {
      CHECK_MSG(s == JX_OK, "%s: %s", c->name, jx_last_error());
      for (int k = 0; s == JX_OK && k < ngot; k++) golden_compare(c->name, out[k], &c->out[k], 1e-6, 1e-6);
    }
    jx_clear_error();
    for (int k = 0; k < 8; k++) jx_free(out[k]);
    jx_fn_free(f);
    jx_scope_end(0, NULL);
  }
  golden_free(cases, ncases);
}

/* float0 arrays: a shape, itemsize 0, no data; NumPy's printing; no operation. */
static void test_arrays(void) {
  jx_scope_begin();
  CHECK_STR(jx_dtype_name(JX_FLOAT0), "float0");
  CHECK(jx_dtype_itemsize(JX_FLOAT0) == 0);
  jx_array *z = jx_zeros(2, (int64_t[]){2, 3}, JX_FLOAT0);
  CHECK(z && jx_dtype_of(z) == JX_FLOAT0 && jx_ndim(z) == 2 && jx_size(z) == 6);
  char dummy;
  CHECK(jx_read(z, &dummy, 0) == JX_OK);
  char *s = jx_to_string(z);
  CHECK_STR(s, "[[(b'',) (b'',) (b'',)]\n [(b'',) (b'',) (b'',)]]");
  free(s);
  s = jx_to_string(jx_zeros(0, NULL, JX_FLOAT0));
  CHECK_STR(s, "(b'',)");
  free(s);
  s = jx_to_string(jx_zeros(1, (int64_t[]){0}, JX_FLOAT0));
  CHECK_STR(s, "[]");
  free(s);
  /* NumPy wraps at 75 columns and summarizes past 1000 elements */
  s = jx_to_string(jx_zeros(1, (int64_t[]){20}, JX_FLOAT0));
  CHECK_STR(s, "[(b'',) (b'',) (b'',) (b'',) (b'',) (b'',) (b'',) (b'',) (b'',) (b'',)\n"
               " (b'',) (b'',) (b'',) (b'',) (b'',) (b'',) (b'',) (b'',) (b'',) (b'',)]");
  free(s);
  s = jx_to_string(jx_zeros(1, (int64_t[]){2000}, JX_FLOAT0));
  CHECK_STR(s, "[(b'',) (b'',) (b'',) ... (b'',) (b'',) (b'',)]");
  free(s);
  s = jx_to_string(jx_zeros(3, (int64_t[]){2, 2, 2}, JX_FLOAT0));
  CHECK_STR(s, "[[[(b'',) (b'',)]\n  [(b'',) (b'',)]]\n\n [[(b'',) (b'',)]\n  [(b'',) (b'',)]]]");
  free(s);
  jx_array *zl = jx_zeros_like(z);
  CHECK(zl && jx_dtype_of(zl) == JX_FLOAT0 && jx_size(zl) == 6);
  /* JAX: "float0s do not support any operations by design" */
  CHECK(jx_add(z, jx_scalar(1.0)) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_add: argument 1 is float0[2,3]");
  CHECK(jx_where(jx_scalar_of(1, JX_BOOL), jx_scalar(1.0), z) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_where: argument 3 is float0[2,3]");
  CHECK(jx_stack(2, (jx_array *[]){z, z}, 0) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "float0");
  CHECK(jx_io_save_npy("/nonexistent-dir/z.npy", z) == JX_ERR_UNSUPPORTED);
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "float0");
  jx_array *zi = jx_device_put(z, "interp"); /* no data to move */
  CHECK(zi && jx_dtype_of(zi) == JX_FLOAT0 && jx_size(zi) == 6);
  CHECK(jx_block_until_ready(zi) == JX_OK);
  CHECK(jx_astype(z, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "float0");
  CHECK(jx_reshape(z, 1, (int64_t[]){6}) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "float0");
  CHECK(jx_sum(z, 0, NULL, false) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "float0");
  CHECK(jx_ones_like(z) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "float0");
  CHECK(jx_ones(1, (int64_t[]){2}, JX_FLOAT0) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_ones: invalid dtype float0 (it holds no values");
  CHECK(jx_array_from(&dummy, JX_FLOAT0, 0, NULL) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_array_from: invalid dtype float0");
  CHECK(jx_astype(jx_scalar(1.0), JX_FLOAT0) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_astype: invalid dtype float0");
  CHECK(jx_scalar_of(0.0, JX_FLOAT0) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_scalar_of: invalid dtype float0");
  jx_item(jx_zeros(0, NULL, JX_FLOAT0));
  CHECK_ERROR(JX_ERR_DTYPE, "float0");
  CHECK(jx_read(z, &dummy, 1) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "needs 0 bytes");
  CHECK(jx_zeros(1, (int64_t[]){-1}, JX_FLOAT0) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "");
  jx_scope_end(0, NULL);
}

/* A function whose inputs are the outputs of float0 grads: grad of grad, and a float0
 * passed straight through jit (an input) and vmap (a mapped input and output). */
static jx_status grad_inner(void *ctx, jx_array *const *in, jx_array **out) {
  jx_fn *f = jx_fn_new("square_mul", 2, 1, square_mul, NULL);
  jx_fn *g = jx_grad_allow_int(f, 2, (int[]){0, 1});
  jx_array *r[2] = {NULL, NULL};
  jx_status s = jx_call(g, (jx_array *[]){in[0], jx_scalar_int(3)}, r);
  jx_fn_free(g), jx_fn_free(f);
  if (s != JX_OK) return s;
  out[0] = r[0];
  return r[1] && jx_dtype_of(r[1]) == JX_FLOAT0 ? JX_OK : JX_ERR_INTERNAL;
}
static jx_status pass_float0(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_multiply(in[0], jx_scalar(2.0));
  out[1] = jx_ref(in[1]);
  return OK(out[0]);
}

static void test_nesting(void) {
  jx_scope_begin();
  jx_fn *inner = jx_fn_new("grad_inner", 1, 1, grad_inner, NULL);
  jx_fn *gg = jx_grad(inner, 0, NULL);
  jx_array *r = NULL;
  CHECK(jx_call(gg, (jx_array *[]){jx_scalar_of(2.0, JX_FLOAT32)}, &r) == JX_OK);
  CHECK_NEAR(jx_item(r), 6.0, 1e-6); /* d/dx (2 x n) at n = 3 (JAX: 6.0) */
  jx_fn *p = jx_fn_new("pass_float0", 2, 2, pass_float0, NULL);
  jx_fn *jp = jx_jit(p), *vp = jx_vmap(p, NULL, NULL);
  jx_array *x = jx_arange(0, 3, 1, JX_FLOAT32), *z = jx_zeros(1, (int64_t[]){3}, JX_FLOAT0);
  jx_array *o[2] = {NULL, NULL};
  for (int rep = 0; rep < 2; rep++) { /* the second call hits jit's cache */
    CHECK(jx_call(jp, (jx_array *[]){x, z}, o) == JX_OK);
    CHECK(o[1] && jx_dtype_of(o[1]) == JX_FLOAT0 && jx_size(o[1]) == 3);
    jx_free(o[0]), jx_free(o[1]);
  }
  CHECK(jx_call(vp, (jx_array *[]){x, z}, o) == JX_OK);
  CHECK(o[1] && jx_dtype_of(o[1]) == JX_FLOAT0 && jx_ndim(o[1]) == 1 && jx_size(o[1]) == 3);
  jx_free(o[0]), jx_free(o[1]);
  /* jit under vmap (traced inputs: the call stays one equation without the float0) */
  jx_fn *vjp_ = jx_vmap(jp, NULL, NULL);
  CHECK(jx_call(vjp_, (jx_array *[]){x, z}, o) == JX_OK);
  CHECK(o[1] && jx_dtype_of(o[1]) == JX_FLOAT0 && jx_size(o[1]) == 3);
  CHECK(o[0] && jx_size(o[0]) == 3 && jx_item(jx_sum(o[0], 0, NULL, false)) == 6.0);
  jx_free(o[0]), jx_free(o[1]);
  jx_fn_free(vjp_);
  /* jvp of jit(grad_allow_int): the float0 grad's tangent is float0 */
  jx_fn *f = jx_fn_new("square_mul", 2, 1, square_mul, NULL);
  jx_fn *g = jx_grad_allow_int(f, 2, (int[]){0, 1}), *jg = jx_jit(g);
  jx_array *xs = jx_scalar_of(2.0, JX_FLOAT32), *ns = jx_scalar_of(3, JX_INT32);
  jx_array *po[2] = {NULL, NULL}, *to[2] = {NULL, NULL};
  CHECK(jx_jvp(jg, (jx_array *[]){xs, ns}, (jx_array *[]){jx_scalar_of(1.0, JX_FLOAT32),
                                                       jx_zeros(0, NULL, JX_FLOAT0)}, po, to) == JX_OK);
  CHECK(po[0] && jx_item(po[0]) == 12.0 && to[0] && jx_item(to[0]) == 6.0); /* 2xn, 2n */
  CHECK(po[1] && jx_dtype_of(po[1]) == JX_FLOAT0 && to[1] && jx_dtype_of(to[1]) == JX_FLOAT0);
  for (int k = 0; k < 2; k++) jx_free(po[k]), jx_free(to[k]);
  jx_fn_free(jg), jx_fn_free(g), jx_fn_free(f);
  jx_fn_free(jp), jx_fn_free(vp), jx_fn_free(p);
  jx_fn_free(gg), jx_fn_free(inner);
  jx_scope_end(0, NULL);
}

static void test_errors(void) {
  jx_scope_begin();
  jx_fn *f = jx_fn_new("mul", 2, 1, mul, NULL);
  jx_array *x = jx_scalar_of(2.0, JX_FLOAT32), *n = jx_scalar_of(3, JX_INT32);
  jx_array *out[2] = {NULL, NULL};
  /* JAX's message for grad of an integer input without allow_int */
  jx_fn *g = jx_grad(f, 1, (int[]){1});
  CHECK(jx_call(g, (jx_array *[]){x, n}, out) == JX_ERR_DTYPE);
  CHECK_ERROR(JX_ERR_DTYPE, "allow_int");
  jx_fn_free(g);
  /* allow_int still refuses a float0 argument */
  g = jx_grad_allow_int(f, 1, (int[]){1});
  CHECK(jx_call(g, (jx_array *[]){x, jx_zeros(0, NULL, JX_FLOAT0)}, out) == JX_ERR_DTYPE);
  CHECK_ERROR(JX_ERR_DTYPE, "float0");
  jx_fn_free(g);
  /* jacfwd / jacrev of an integer input (JAX's TypeError) */
  jx_fn *jf = jx_jacfwd(f, 1, (int[]){1}), *jr = jx_jacrev(f, 1, (int[]){1});
  CHECK(jx_call(jf, (jx_array *[]){x, n}, out) == JX_ERR_DTYPE);
  jx_clear_error();
  CHECK(jx_call(jr, (jx_array *[]){x, n}, out) == JX_ERR_DTYPE);
  jx_clear_error();
  jx_fn_free(jf), jx_fn_free(jr);
  /* the pullback: a float0 cotangent for a float output, a wrong-shaped one */
  jx_array *y = NULL;
  jx_fn *pb = jx_vjp(f, (jx_array *[]){x, n}, &y);
  CHECK(jx_call(pb, (jx_array *[]){jx_zeros(0, NULL, JX_FLOAT0)}, out) == JX_ERR_DTYPE);
  CHECK_ERROR(JX_ERR_DTYPE, "cotangent 0");
  jx_free(y), jx_fn_free(pb);
  jx_fn *fa = jx_fn_new("mul_aux", 2, 2, mul_aux, NULL);
  jx_array *ys[2] = {NULL, NULL};
  pb = jx_vjp(fa, (jx_array *[]){x, n}, ys);
  CHECK(jx_call(pb, (jx_array *[]){x, jx_zeros(1, (int64_t[]){2}, JX_FLOAT0)}, out) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "cotangent 1");
  CHECK(jx_call(pb, (jx_array *[]){x, x}, out) == JX_ERR_DTYPE);
  CHECK_ERROR(JX_ERR_DTYPE, "cotangent 1");
  jx_free(ys[0]), jx_free(ys[1]), jx_fn_free(pb), jx_fn_free(fa);
  /* linearize: an int tangent for an int primal */
  jx_fn *lin = jx_linearize(f, (jx_array *[]){x, n}, &y);
  CHECK(jx_call(lin, (jx_array *[]){x, n}, out) == JX_ERR_DTYPE);
  CHECK_ERROR(JX_ERR_DTYPE, "tangent 1");
  jx_free(y), jx_fn_free(lin);
  /* jvp's message names float0 */
  jx_array *to[1] = {NULL};
  CHECK(jx_jvp(f, (jx_array *[]){x, n}, (jx_array *[]){x, n}, &y, to) == JX_ERR_DTYPE);
  CHECK_ERROR(JX_ERR_DTYPE, "float0");
  jx_fn_free(f);
  jx_scope_end(0, NULL);
}

static void (*current_body)(void);
static void run_body(void) {
  int64_t fns = jx_live_fns();
  current_body();
  CHECK_MSG(jx_live_fns() == fns, "leaked %lld functions", (long long)(jx_live_fns() - fns));
}
#define RUN(fn) (current_body = fn, test_run(#fn, run_body))

int main(void) {
  RUN(test_arrays);
  RUN(test_goldens);
  RUN(test_nesting);
  RUN(test_errors);
  return test_finish();
}
