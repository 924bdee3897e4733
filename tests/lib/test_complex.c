/* test_complex.c -- complex64/complex128 (issue 15) against JAX goldens
 * (tests/golden/complex.txt, tools/golden_complex.py): arithmetic over special values,
 * parts, predicates, comparisons, casts, weak complex scalars, reductions, matrix
 * products (fused kernel and cgemm/zgemm), sorting, lexicographic comparisons and
 * max/min, vdot, exp2/log2/log10/round; plus printing as NumPy, readback,
 * creation, errors for operations complex does not support, and jit against eager. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "golden.h"
#include "jaxc.h"
#include "jaxc/lax.h"
#include "jaxc/numpy.h"
#include "test.h"

/* ------------------------------------------------------------ golden cases */

static const GoldenCase *g_case;
static int g_count;

/* The unary functions of the golden file, by NumPy name. */
typedef jx_array *(*Unary)(jx_array *);
static const struct {
  const char *name;
  Unary fn;
} unary[] = {
    {"exp", jx_exp},         {"expm1", jx_expm1},     {"log", jx_log},
    {"log1p", jx_log1p},     {"sqrt", jx_sqrt},       {"sin", jx_sin},
    {"cos", jx_cos},         {"tan", jx_tan},         {"sinh", jx_sinh},
    {"cosh", jx_cosh},       {"tanh", jx_tanh},       {"arcsin", jx_arcsin},
    {"arccos", jx_arccos},   {"arctan", jx_arctan},   {"arcsinh", jx_arcsinh},
    {"arccosh", jx_arccosh}, {"arctanh", jx_arctanh}, {"reciprocal", jx_reciprocal},
    {"negative", jx_negative}, {"conj", jx_conj},     {"square", jx_square},
    {"real", jx_real},       {"imag", jx_imag},       {"abs", jx_abs},
};

static Unary find_unary(const char *name) {
  for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++)
    if (strcmp(unary[i].name, name) == 0) return unary[i].fn;
  return NULL;
}

static jx_array *angle_rad(jx_array *z) { return jx_angle(z, false); }

/* Relative tolerance of fn in the part dtype of d (ulps of float32 / float64). */
static double rtol_of(const char *fn, jx_dtype d) {
  bool c128 = d == JX_COMPLEX128 || d == JX_FLOAT64;
  double eps = c128 ? 2.220446049250313e-16 : 1.1920929e-07;
  static const char *const exact[] = {"add", "subtract", "multiply", "negative", "real", "imag", "conj",
                                      "complex", "equal", "not_equal", "isnan", "isinf",
                                      "isfinite", "astype", "sort", "round", "iscomplex", "isreal",
                                      "sort_complex", "less", "less_equal", "greater", "greater_equal",
                                      "maximum", "minimum", "max", "min"};
  for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
    if (strcmp(fn, exact[i]) == 0) return 0;
  if (strcmp(fn, "sum") == 0 || strcmp(fn, "mean") == 0 || strcmp(fn, "prod") == 0 || strcmp(fn, "vdot") == 0 ||
      strncmp(fn, "exp2", 4) == 0 || strncmp(fn, "log", 3) == 0)
    return 64 * eps;
  if (strcmp(fn, "matmul") == 0) return 1024 * eps; /* 80-term dots with cancellation */
  /* transcendental functions and derivatives: formulas of several libm calls */
  if (find_unary(fn) || strchr(fn, '_') || strcmp(fn, "power") == 0) return 64 * eps;
  return 4 * eps;
}

static jx_dtype param_dtype(const GoldenCase *c) {
  const char *s = golden_param(c, "dtype");
  jx_dtype d = JX_FLOAT32;
  bool weak;
  if (s) golden_parse_dtype(s, &d, &weak);
  return d;
}

/* ---- derivative cases: grad_<f>, holo_{grad,jacfwd,jacrev}_<f>, jvp_<f>, vjp_<f>,
 * vjp2_<f>, vjp_complex (tools/golden_complex.py: GRAD_FNS, HOLO_FNS) */
static jx_array *grad_fn(const char *name, jx_array *z) {
  if (!strcmp(name, "abs2")) return jx_sum(jx_real(jx_mul(z, jx_conj(z))), 0, NULL, false);
  if (!strcmp(name, "abs")) return jx_sum(jx_abs(z), 0, NULL, false);
  if (!strcmp(name, "real_exp_conj")) return jx_sum(jx_real(jx_mul(jx_exp(z), jx_conj(z))), 0, NULL, false);
  if (!strcmp(name, "imag_log_real_sqrt"))
    return jx_sum(jx_add(jx_imag(jx_log(z)), jx_real(jx_sqrt(z))), 0, NULL, false);
  if (!strcmp(name, "abs_sin_real_tan"))
    return jx_sum(jx_add(jx_abs(jx_sin(z)), jx_real(jx_tan(z))), 0, NULL, false);
  if (!strcmp(name, "angle")) return jx_sum(jx_angle(z, false), 0, NULL, false);
  if (!strcmp(name, "real_ratio"))
    return jx_real(jx_sum(jx_div(jx_mul(z, z), jx_add(z, jx_scalar(2))), 0, NULL, false));
  if (!strcmp(name, "abs_matmul"))
    return jx_sum(jx_abs(jx_matmul(jx_outer(z, jx_conj(z)), z)), 0, NULL, false);
  if (!strcmp(name, "mean_abs_tanh"))
    return jx_abs(jx_mean(jx_mul(jx_tanh(z), jx_cosh(z)), 0, NULL, false));
  if (!strcmp(name, "z2exp")) return jx_mul(jx_mul(z, z), jx_exp(z));
  if (!strcmp(name, "log_sin")) return jx_add(jx_log(jx_sin(z)), jx_divide(jx_scalar(1), z));
  if (!strcmp(name, "pow")) return jx_add(jx_power(z, jx_scalar_complex(1.5, 0.5)), jx_arctan(z));
  return NULL;
}

static jx_status grad_impl(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = grad_fn(ctx, in[0]);
  return out[0] ? JX_OK : jx_last_status();
}

typedef jx_array *(*Binary)(jx_array *, jx_array *);
static jx_status unary_impl(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = ((Unary)ctx)(in[0]);
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status binary_impl(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = ((Binary)ctx)(in[0], in[1]);
  return out[0] ? JX_OK : jx_last_status();
}

static Binary find_binary(const char *name) {
  if (!strcmp(name, "multiply")) return jx_multiply;
  if (!strcmp(name, "divide")) return jx_divide;
  if (!strcmp(name, "add")) return jx_add;
  if (!strcmp(name, "subtract")) return jx_subtract;
  if (!strcmp(name, "power")) return jx_power;
  if (!strcmp(name, "complex")) return jx_complex;
  return NULL;
}

/* Result r of calling g on in (one output); NULL on failure. */
static jx_array *call1(jx_fn *g, jx_array *const *in) {
  jx_array *out[1] = {NULL};
  jx_status s = g ? jx_call(g, in, out) : jx_last_status();
  jx_fn_free(g);
  return s == JX_OK ? out[0] : NULL;
}

static jx_array *derivative_case(const char *f, jx_array **in) {
  if (!strncmp(f, "grad_", 5) && grad_fn(f + 5, in[0])) {
    jx_fn *h = jx_fn_new(f, 1, 1, grad_impl, (void *)(f + 5)), *g = jx_grad(h, 0, NULL);
    jx_fn_free(h);
    return call1(g, in);
  }
  if (!strncmp(f, "holo_", 5)) {
    const char *kind = f + 5, *name = strchr(kind, '_') + 1;
    jx_fn *h = jx_fn_new(f, 1, 1, grad_impl, (void *)name), *g;
    if (!strncmp(kind, "grad", 4)) g = jx_grad_holomorphic(h, 0, NULL);
    else if (!strncmp(kind, "jacfwd", 6)) g = jx_jacfwd_holomorphic(h, 0, NULL);
    else g = jx_jacrev_holomorphic(h, 0, NULL);
    jx_fn_free(h);
    return call1(g, in);
  }
  bool jvp = !strncmp(f, "jvp_", 4), vjp = !strncmp(f, "vjp_", 4), vjp2 = !strncmp(f, "vjp2_", 5);
  const char *name = strchr(f, '_') + 1;
  Unary u = !strcmp(name, "angle") ? angle_rad : find_unary(name);
  if (jvp && u) {
    jx_fn *h = jx_fn_new(f, 1, 1, unary_impl, (void *)u);
    jx_array *t = jx_mul(jx_ones_like(in[0]), jx_scalar_complex(0.5, -0.25)), *po[1], *to[1];
    jx_status s = jx_jvp(h, in, &t, po, to);
    jx_fn_free(h);
    return s == JX_OK ? to[0] : NULL;
  }
  if (vjp && (u || !strcmp(name, "complex"))) {
    bool cpx = !strcmp(name, "complex");
    jx_fn *h = cpx ? jx_fn_new(f, 2, 1, binary_impl, (void *)jx_complex)
                   : jx_fn_new(f, 1, 1, unary_impl, (void *)u);
    jx_array *po[1];
    jx_fn *pb = jx_vjp(h, in, po);
    jx_fn_free(h);
    if (!pb) return NULL;
    bool real_out = !strcmp(name, "real") || !strcmp(name, "imag") || !strcmp(name, "abs") ||
                    !strcmp(name, "angle");
    jx_array *ct = real_out ? jx_full_like(po[0], 1.5)
                   : cpx    ? jx_mul(jx_ones_like(po[0]), jx_scalar_complex(0.5, 2))
                            : jx_mul(jx_ones_like(po[0]), jx_scalar_complex(1, 2));
    jx_array *cts[2] = {NULL, NULL};
    jx_status s = jx_call(pb, &ct, cts);
    jx_fn_free(pb);
    return s == JX_OK ? cts[cpx ? 1 : 0] : NULL;
  }
  Binary b = vjp2 ? find_binary(name) : NULL;
  if (b) {
    jx_fn *h = jx_fn_new(f, 2, 1, binary_impl, (void *)b);
    jx_array *po[1];
    jx_fn *pb = jx_vjp(h, in, po);
    jx_fn_free(h);
    if (!pb) return NULL;
    jx_array *ct = jx_mul(jx_ones_like(po[0]), jx_scalar_complex(1, -1)), *cts[2] = {NULL, NULL};
    jx_status s = jx_call(pb, &ct, cts);
    jx_fn_free(pb);
    return s == JX_OK ? cts[1] : NULL;
  }
  return NULL;
}

static jx_array *call_case(const GoldenCase *c, jx_array **in) {
  const char *f = c->fn;
  if (!strncmp(f, "grad_", 5) || !strncmp(f, "holo_", 5) || !strncmp(f, "jvp_", 4) ||
      !strncmp(f, "vjp", 3))
    return derivative_case(f, in);
  if (c->nin == 1 && find_unary(f)) return find_unary(f)(in[0]);
  if (c->nin == 2 && !strcmp(f, "power")) return jx_power(in[0], in[1]);
  int axis = (int)golden_param_int(c, "axis", -100);
  int *axes = axis == -100 ? NULL : &axis;
  int naxes = axes ? 1 : 0;
  if (c->nin == 2) {
    if (!strcmp(f, "add")) return jx_add(in[0], in[1]);
    if (!strcmp(f, "subtract")) return jx_subtract(in[0], in[1]);
    if (!strcmp(f, "multiply")) return jx_multiply(in[0], in[1]);
    if (!strcmp(f, "divide")) return jx_divide(in[0], in[1]);
    if (!strcmp(f, "equal")) return jx_equal(in[0], in[1]);
    if (!strcmp(f, "not_equal")) return jx_not_equal(in[0], in[1]);
    if (!strcmp(f, "complex")) return jx_complex(in[0], in[1]);
    if (!strcmp(f, "matmul")) return jx_matmul(in[0], in[1]);
    if (!strcmp(f, "vdot")) return jx_vdot(in[0], in[1]);
    if (!strcmp(f, "less")) return jx_less(in[0], in[1]);
    if (!strcmp(f, "less_equal")) return jx_less_equal(in[0], in[1]);
    if (!strcmp(f, "greater")) return jx_greater(in[0], in[1]);
    if (!strcmp(f, "greater_equal")) return jx_greater_equal(in[0], in[1]);
    if (!strcmp(f, "maximum")) return jx_maximum(in[0], in[1]);
    if (!strcmp(f, "minimum")) return jx_minimum(in[0], in[1]);
    if (!strcmp(f, "heaviside")) return jx_heaviside(in[0], in[1]);
    if (!strcmp(f, "fmax")) return jx_fmax(in[0], in[1]);
    if (!strcmp(f, "fmin")) return jx_fmin(in[0], in[1]);
    if (!strcmp(f, "logaddexp")) return jx_logaddexp(in[0], in[1]);
    if (!strcmp(f, "logaddexp2")) return jx_logaddexp2(in[0], in[1]);
  }
  if (c->nin == 1) {
    if (!strcmp(f, "negative")) return jx_negative(in[0]);
    if (!strcmp(f, "real")) return jx_real(in[0]);
    if (!strcmp(f, "imag")) return jx_imag(in[0]);
    if (!strcmp(f, "conj")) return jx_conj(in[0]);
    if (!strcmp(f, "abs")) return jx_abs(in[0]);
    if (!strcmp(f, "isnan")) return jx_isnan(in[0]);
    if (!strcmp(f, "isinf")) return jx_isinf(in[0]);
    if (!strcmp(f, "isfinite")) return jx_isfinite(in[0]);
    if (!strcmp(f, "sign")) return jx_sign(in[0]);
    if (!strcmp(f, "reciprocal")) return jx_reciprocal(in[0]);
    if (!strcmp(f, "angle")) return jx_angle(in[0], false);
    if (!strcmp(f, "astype")) return jx_astype(in[0], param_dtype(c));
    if (!strcmp(f, "sum")) return jx_sum(in[0], naxes, axes, false);
    if (!strcmp(f, "mean")) return jx_mean(in[0], naxes, axes, false);
    if (!strcmp(f, "prod")) return jx_prod(in[0], naxes, axes, false);
    if (!strcmp(f, "sort")) return jx_sort(in[0], -1, false);
    if (!strcmp(f, "exp2")) return jx_exp2(in[0]);
    if (!strcmp(f, "log2")) return jx_log2(in[0]);
    if (!strcmp(f, "log10")) return jx_log10(in[0]);
    if (!strcmp(f, "round")) return jx_round(in[0]);
    if (!strcmp(f, "round_decimals")) return jx_round_decimals(in[0], (int)golden_param_int(c, "decimals", 0));
    if (!strcmp(f, "iscomplex")) return jx_iscomplex(in[0]);
    if (!strcmp(f, "isreal")) return jx_isreal(in[0]);
    if (!strcmp(f, "sort_complex")) return jx_sort_complex(in[0]);
    if (!strcmp(f, "max")) return jx_max(in[0], naxes, axes, false);
    if (!strcmp(f, "min")) return jx_min(in[0], naxes, axes, false);
    if (!strcmp(f, "clip")) return jx_clip(in[0], jx_scalar_int(-1), jx_scalar_int(1));
    bool rev = golden_param_int(c, "reverse", 0) != 0;
    if (!strcmp(f, "cummax")) return jx_lax_cummax(in[0], 0, rev);
    if (!strcmp(f, "cummin")) return jx_lax_cummin(in[0], 0, rev);
    if (!strcmp(f, "quantile")) return jx_quantile(in[0], jx_scalar(0.5), JX_AXIS_NONE, false);
    if (!strcmp(f, "median")) return jx_median(in[0], JX_AXIS_NONE, false);
    if (!strcmp(f, "percentile")) return jx_percentile(in[0], jx_scalar(50), JX_AXIS_NONE, false);
    if (!strcmp(f, "floor_divide")) return jx_floor_divide(in[0], in[0]);
    if (!strcmp(f, "remainder")) return jx_remainder(in[0], in[0]);
    if (!strcmp(f, "fmod")) return jx_fmod(in[0], in[0]);
  }
  return NULL;
}

/* case(inputs) eagerly and through jit: the same function under jx_jit. */
static jx_status call_impl(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = call_case(ctx, (jx_array **)in);
  return out[0] ? JX_OK : jx_last_status();
}

/* The inverse functions (arc*) on and near their branch cuts and at special values:
 * besides the values, a zero part must have JAX's sign (the side of the cut). */
static void check_zero_signs(const char *ctx, jx_array *got, const GoldenCase *c) {
  if (!got || strncmp(c->fn, "arc", 3) != 0) return;
  const GoldenArray *w = &c->out[0];
  int64_t n = 2 * w->size;
  double *g = malloc((size_t)(n ? n : 1) * sizeof *g);
  jx_array *g64 = jx_astype(got, JX_COMPLEX128);
  if (g64 && jx_read(g64, g, (size_t)n * sizeof *g) == JX_OK)
    for (int64_t e = 0; e < n; e++)
      if (w->f[e] == 0 && g[e] == 0)
        CHECK_MSG(signbit(w->f[e]) == signbit(g[e]), "%s: element %lld %s part: %s0, JAX -0 vs +0: %s0", ctx,
                  (long long)e / 2, e % 2 ? "imaginary" : "real", signbit(g[e]) ? "-" : "+",
                  signbit(w->f[e]) ? "-" : "+");
  free(g);
}

static void run_golden_case(void) {
  const GoldenCase *c = g_case;
  bool x64 = golden_param_int(c, "x64", 0) != 0;
  jx_config_enable_x64(x64);
  jx_scope_begin();
  jx_array *in[4] = {0};
  CHECK(c->nin <= 4);
  for (int i = 0; i < c->nin && i < 4; i++) {
    in[i] = golden_to_array(&c->in[i]);
    CHECK_MSG(in[i], "%s: input %d: %s", c->name, i, jx_last_error());
  }
  char ctx[256];
  snprintf(ctx, sizeof ctx, "%s (line %d)", c->name, c->line);
  jx_array *out = call_case(c, in);
  if (c->err != JX_OK) {
    CHECK_MSG(!out && jx_last_status() == c->err, "%s: expected %s, got %s", ctx,
              jx_status_name(c->err), jx_status_name(jx_last_status()));
  } else {
    double rtol = rtol_of(c->fn, c->out[0].dtype);
    golden_compare(ctx, out, &c->out[0], rtol, rtol);
    check_zero_signs(ctx, out, c);
    /* jit: the fused kernels give the same values */
    jx_fn *f = jx_fn_new(c->name, c->nin, 1, call_impl, (void *)c), *jf = jx_jit(f);
    jx_array *jo[1] = {NULL};
    jx_status s = jx_call(jf, in, jo);
    CHECK_MSG(s == JX_OK, "%s: jit: %s", ctx, jx_last_error());
    snprintf(ctx, sizeof ctx, "%s (line %d, jit)", c->name, c->line);
    if (s == JX_OK) golden_compare(ctx, jo[0], &c->out[0], rtol, rtol), check_zero_signs(ctx, jo[0], c);
    jx_fn_free(jf);
    jx_fn_free(f);
  }
  jx_clear_error();
  jx_scope_end(0, NULL);
  jx_config_enable_x64(false);
  g_count++;
}

/* ------------------------------------------------------------ other checks */

static char *str_of(jx_array *a) {
  char *s = jx_to_string(a);
  return s ? s : strdup("(null)");
}

#define CHECK_PRINT(a, want)                                                            \
  do {                                                                                  \
    char *s_ = str_of(a);                                                               \
    CHECK_MSG(strcmp(s_, want) == 0, "printed %s, NumPy prints %s", s_, want);           \
    free(s_);                                                                           \
  } while (0)

/* NumPy 2's str of complex arrays and scalars (written by numpy, see the issue). */
static void test_print(void) {
  jx_scope_begin();
  float a[8] = {1, 2, 3, -4.5f, NAN, 1, NAN, -INFINITY};
  CHECK_PRINT(jx_array_from(a, JX_COMPLEX64, 1, (int64_t[]){4}), "[ 1.+2.j   3.-4.5j nan+1.j  nan-infj]");
  double b[4] = {1e-5, 2, 3e8, -4.5};
  CHECK_PRINT(jx_array_from(b, JX_COMPLEX128, 2, (int64_t[]){1, 2}), "[[1.e-05+2.j  3.e+08-4.5j]]");
  double z[4] = {0, 0, -0.0, 0};
  CHECK_PRINT(jx_array_from(z, JX_COMPLEX128, 1, (int64_t[]){2}), "[ 0.+0.j -0.+0.j]");
  float c[6] = {1.5f, 100, 2.25f, -3, 3, 0.125f};
  CHECK_PRINT(jx_array_from(c, JX_COMPLEX64, 1, (int64_t[]){3}), "[1.5 +100.j    2.25  -3.j    3.    +0.125j]");
  CHECK_PRINT(jx_scalar_complex_of(1, 2, JX_COMPLEX64), "(1+2j)");
  CHECK_PRINT(jx_scalar_complex_of(1.5, -0.25, JX_COMPLEX128), "(1.5-0.25j)");
  CHECK_PRINT(jx_scalar_complex_of(0, 2, JX_COMPLEX64), "2j");
  CHECK_PRINT(jx_scalar_complex_of(0, 0, JX_COMPLEX64), "0j");
  CHECK_PRINT(jx_scalar_complex_of(NAN, INFINITY, JX_COMPLEX64), "(nan+infj)");
  CHECK_PRINT(jx_scalar_complex_of(1e20, 1e-5, JX_COMPLEX128), "(1e+20+1e-05j)");
  CHECK_PRINT(jx_scalar_complex_of(-INFINITY, NAN, JX_COMPLEX64), "(-inf+nanj)");
  jx_scope_end(0, NULL);
}

static void test_create_and_read(void) {
  jx_scope_begin();
  /* interleaved storage, as NumPy */
  float d[4] = {1, 2, -3, 0.5f};
  jx_array *x = jx_array_from(d, JX_COMPLEX64, 1, (int64_t[]){2});
  float back[4] = {0};
  CHECK(jx_read(x, back, sizeof back) == JX_OK);
  CHECK(memcmp(back, d, sizeof d) == 0);
  CHECK(jx_read(x, back, 8) == JX_ERR_VALUE);
  jx_clear_error();
  double re, im;
  CHECK(jx_item_complex(jx_imag(jx_mul(x, x)), &re, &im) == JX_ERR_SHAPE);
  jx_clear_error();
  jx_array *p = jx_sum(jx_mul(x, jx_conj(x)), 0, NULL, false); /* |1+2i|^2 + |-3+.5i|^2 */
  CHECK(jx_item_complex(p, &re, &im) == JX_OK);
  CHECK(re == 14.25 && im == 0);
  CHECK(jx_item(p) == 14.25); /* the real part */
  /* weak complex scalars: complex64 without x64, weak */
  jx_array *w = jx_scalar_complex(1, -1);
  CHECK(jx_dtype_of(w) == JX_COMPLEX64 && jx_is_weak(w));
  CHECK(jx_dtype_of(jx_add(jx_ones(1, (int64_t[]){2}, JX_FLOAT16), w)) == JX_COMPLEX64);
  /* complex128 data canonicalizes to complex64 with x64 off */
  double e[2] = {0.1, -0.2};
  jx_array *c = jx_array_from(e, JX_COMPLEX128, 0, NULL);
  CHECK(jx_dtype_of(c) == JX_COMPLEX64);
  CHECK(jx_item_complex(c, &re, &im) == JX_OK && re == (float)0.1 && im == (float)-0.2);
  CHECK(!jx_scalar_complex_of(1, 2, JX_FLOAT32) && jx_last_status() == JX_ERR_DTYPE);
  jx_clear_error();
  CHECK(jx_item_complex(NULL, &re, &im) == JX_ERR_VALUE && isnan(re));
  jx_clear_error();
  /* zeros / ones / full of complex dtypes */
  CHECK(jx_item_complex(jx_sum(jx_ones(1, (int64_t[]){3}, JX_COMPLEX64), 0, NULL, false), &re, &im) == JX_OK);
  CHECK(re == 3 && im == 0);
  jx_scope_end(0, NULL);
  CHECK_EQ_INT(jx_live_arrays(), 0);
}

/* Operations complex does not have are refused by name, never computed silently. */
static void test_unsupported(void) {
  jx_scope_begin();
  jx_array *x = jx_scalar_complex_of(1, 2, JX_COMPLEX64);
  for (int i = 0; i < 7; i++) {
    jx_array *r = i == 0   ? jx_clip(x, NULL, jx_scalar(1)) /* maximum / less order complex, as JAX */
                  : i == 1 ? jx_heaviside(x, x)
                  : i == 2 ? jx_floor(x)
                  : i == 3 ? jx_remainder(x, x)
                  : i == 4 ? jx_signbit(x)
                  : i == 5 ? jx_argmax(x, JX_AXIS_NONE, false)
                           : jx_bitcast(x, JX_FLOAT64);
    CHECK_MSG(!r && jx_last_status() == JX_ERR_DTYPE, "case %d: %s", i, jx_last_error());
    jx_clear_error();
  }
  CHECK(!jx_complex(x, x) && jx_last_status() == JX_ERR_DTYPE);
  jx_clear_error();
  jx_scope_end(0, NULL);
}

/* Derivatives through the complex primitives (JAX's conventions: see issue 15). */
static jx_status f_abs2(void *ctx, jx_array *const *in, jx_array **out) {
  /* sum(|z|^2) via real(z * conj(z)): grad = 2 z (JAX: conj of d/dz-bar convention) */
  out[0] = jx_sum(jx_real(jx_mul(in[0], jx_conj(in[0]))), 0, NULL, false);
  return JX_OK;
}

static void test_grad_basic(void) {
  jx_scope_begin();
  float d[4] = {1, 2, -3, 0.5f};
  jx_array *z = jx_array_from(d, JX_COMPLEX64, 1, (int64_t[]){2});
  jx_fn *f = jx_fn_new("abs2", 1, 1, f_abs2, NULL), *g = jx_grad(f, 0, NULL);
  jx_array *out[1] = {NULL};
  CHECK(jx_call(g, &z, out) == JX_OK);
  float got[4] = {0};
  CHECK(out[0] && jx_dtype_of(out[0]) == JX_COMPLEX64);
  if (out[0]) CHECK(jx_read(out[0], got, sizeof got) == JX_OK);
  /* jax.grad(lambda z: jnp.sum(jnp.real(z * jnp.conj(z))))(z) = 2 conj(z): JAX's
   * convention (its FAQ: grad of x^2 + y^2 at 3+4j is 6-8j) */
  for (int i = 0; i < 4; i++) {
    float want = (i % 2 ? -2 : 2) * d[i];
    CHECK_MSG(got[i] == want, "%d: %g vs %g", i, got[i], want);
  }
  jx_fn_free(g);
  jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* Values where the math (and JAX, except acosh's derivative and the product) part from
 * the plain formulas; a trial against JAX 0.10.2 found each. Expected values: JAX (and
 * mpmath for the acosh derivative). */
static jx_status f_mul(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_multiply(in[0], in[1]);
  return JX_OK;
}
static jx_status f_sum_acosh(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sum(jx_arccosh(in[0]), 0, NULL, false);
  return JX_OK;
}
static jx_array *c64(float re, float im) {
  float d[2] = {re, im};
  return jx_array_from(d, JX_COMPLEX64, 1, (int64_t[]){1});
}
/* got == (re, im) exactly (NaN == NaN, zeros by sign), or within rel where rel > 0 */
static void check_c64(const char *what, jx_array *z, float re, float im, double rel) {
  float g[2] = {NAN, NAN};
  CHECK_MSG(z && jx_read(z, g, sizeof g) == JX_OK, "%s: no result", what);
  for (int i = 0; i < 2; i++) {
    float w = i ? im : re;
    bool ok = isnan(w) ? isnan(g[i])
              : rel > 0 && w != 0 && isfinite(w) ? fabs(g[i] - w) <= rel * fabs(w)
                                                  : g[i] == w && signbit(g[i]) == signbit(w);
    CHECK_MSG(ok, "%s: %s part %.9g, expected %.9g", what, i ? "imaginary" : "real", g[i], w);
  }
}
static void test_special_values(void) {
  jx_scope_begin();
  /* a jitted product of 64 elements (vectorized on the cpu) equals the interpreter's and
   * JAX's fma(a, c, -bd) + fma(b, c, ad)i = inf - inf i ((ac - bd) + (ad + bc)i rounded
   * at each step gives inf + NaN i; the exact product is 3e58 - 9e76i) */
  float a[128], b[128];
  for (int i = 0; i < 64; i++) a[2 * i] = 3e38f, a[2 * i + 1] = 1e20f, b[2 * i] = 1e20f, b[2 * i + 1] = -3e38f;
  jx_array *in[2] = {jx_array_from(a, JX_COMPLEX64, 1, (int64_t[]){64}),
                     jx_array_from(b, JX_COMPLEX64, 1, (int64_t[]){64})};
  jx_fn *f = jx_fn_new("mul", 2, 1, f_mul, NULL), *jf = jx_jit(f);
  jx_array *out = NULL;
  CHECK(jx_call(jf, in, &out) == JX_OK);
  float r[128] = {0};
  if (out) CHECK(jx_read(out, r, sizeof r) == JX_OK);
  for (int i = 0; i < 64; i++)
    CHECK_MSG(r[2 * i] == INFINITY && r[2 * i + 1] == -INFINITY, "%d: %g%+gi", i, r[2 * i], r[2 * i + 1]);
  jx_fn_free(jf), jx_fn_free(f);
  /* log1p keeps the relative accuracy of small arguments (log(1 + z) gave 0) */
  check_c64("log1p(1e-20)", jx_log1p(c64(1e-20f, 0)), 1e-20f, 0, 0);
  check_c64("log1p(1e-4)", jx_log1p(c64(1e-4f, 0)), 9.9995e-05f, 0, 2e-7);
  check_c64("log1p(-1e-4 + 0.0141421356i)", jx_log1p(c64(-1e-4f, 0.0141421356f)), 4.995942e-09f,
            0.01414261f, 2e-5);
  check_c64("log1p(3 + 4i)", jx_log1p(c64(3, 4)), 1.732868f, 0.7853982f, 2e-7);
  check_c64("log1p(-1)", jx_log1p(c64(-1, 0)), -INFINITY, 0, 0);
  /* expm1 and tanh of a real argument stay real */
  check_c64("expm1(1e4)", jx_expm1(c64(1e4f, 0)), INFINITY, 0, 0);
  check_c64("tanh(nan + 0i)", jx_tanh(c64(NAN, 0)), NAN, 0, 0);
  /* C99 Annex G's special values of tanh and tan, as JAX */
  check_c64("tanh(inf + inf i)", jx_tanh(c64(INFINITY, INFINITY)), 1, 0, 0);
  check_c64("tanh(inf + nan i)", jx_tanh(c64(INFINITY, NAN)), 1, 0, 0);
  check_c64("tanh(-inf + inf i)", jx_tanh(c64(-INFINITY, INFINITY)), -1, 0, 0);
  check_c64("tan(inf + inf i)", jx_tan(c64(INFINITY, INFINITY)), 0, 1, 0);
  check_c64("tan(nan + inf i)", jx_tan(c64(NAN, INFINITY)), 0, 1, 0);
  check_c64("tanh(1 + 2i)", jx_tanh(c64(1, 2)), 1.1667362f, -0.2434582f, 4e-7);
  /* square as chlo.square: (a - b)(a + b) + 2ab i */
  check_c64("square(1e20 + 1e20i)", jx_square(c64(1e20f, 1e20f)), 0, INFINITY, 0);
  check_c64("square(1e20 + 3e38i)", jx_square(c64(1e20f, 3e38f)), -INFINITY, INFINITY, 0);
  /* sinh(x + 0i) = sinh x + 0i (the imaginary part was -0) */
  check_c64("sinh(1 + 0i)", jx_sinh(c64(1, 0)), 1.1752012f, 0, 2e-7);
  /* d/dz acosh z = 1 / (sqrt(z - 1) sqrt(z + 1)): left of the imaginary axis JAX's
   * rsqrt((z - 1)(z + 1)) has the opposite sign (-0.2172869 - 0.9204421i) */
  jx_fn *g = jx_fn_new("sum_acosh", 1, 1, f_sum_acosh, NULL), *dg = jx_grad_holomorphic(g, 0, NULL);
  jx_array *z = c64(-0.5f, 0.5f), *d = NULL;
  CHECK(dg && jx_call(dg, &z, &d) == JX_OK);
  check_c64("acosh'(-0.5 + 0.5i)", d, -0.2172869f, -0.9204421f, 1e-5);
  jx_fn_free(dg), jx_fn_free(g);
  jx_scope_end(0, NULL);
}

/* npy ('<c8' / '<c16', as NumPy writes complex64/complex128) and safetensors (C64,
 * C128) round trips. */
static void test_io(void) {
  for (int x64 = 0; x64 < 2; x64++) {
    jx_config_enable_x64(x64);
    jx_scope_begin();
    jx_dtype d = x64 ? JX_COMPLEX128 : JX_COMPLEX64;
    double v[6] = {1.5, -2, 0, NAN, -INFINITY, 0.25};
    jx_array *a = jx_astype(jx_array_from(v, JX_COMPLEX128, 1, (int64_t[]){3}), d);
    char path[64];
    snprintf(path, sizeof path, "/tmp/jaxc_complex_%d_%d.npy", (int)getpid(), x64);
    CHECK(jx_io_save_npy(path, a) == JX_OK);
    FILE *f = fopen(path, "rb");
    char head[64] = {0};
    if (f) fread(head, 1, sizeof head - 1, f), fclose(f);
    CHECK_MSG(strstr(head + 10, x64 ? "'descr': '<c16'" : "'descr': '<c8'"), "header %s", head + 10);
    jx_array *b = jx_io_load_npy(path);
    remove(path);
    CHECK(b && jx_dtype_of(b) == d);
    CHECK(jx_item(jx_all(jx_logical_or(jx_equal(a, b), jx_isnan(a)), 0, NULL, false)) == 1);
    snprintf(path, sizeof path, "/tmp/jaxc_complex_%d_%d.safetensors", (int)getpid(), x64);
    const char *name = "z";
    CHECK(jx_io_save_safetensors(path, 1, &name, &a) == JX_OK);
    int n = 0;
    char **names = NULL;
    jx_array **arrs = NULL;
    CHECK(jx_io_load_safetensors(path, &n, &names, &arrs) == JX_OK);
    remove(path);
    CHECK(n == 1 && arrs && jx_dtype_of(arrs[0]) == d);
    if (n == 1 && arrs)
      CHECK(jx_item(jx_all(jx_logical_or(jx_equal(a, arrs[0]), jx_isnan(a)), 0, NULL, false)) == 1);
    for (int i = 0; i < n; i++) jx_free(arrs[i]);
    jx_io_free_names(n, names);
    free(arrs);
    jx_scope_end(0, NULL);
  }
  jx_config_enable_x64(false);
}

int main(void) {
  int n = 0;
  GoldenCase *cases = golden_load("complex.txt", &n);
  CHECK_MSG(cases != NULL, "cannot load complex.txt");
  for (int i = 0; i < n; i++) {
    g_case = &cases[i];
    test_run(cases[i].name, run_golden_case);
  }
  printf("golden: %d cases\n", g_count);
  golden_free(cases, n);
  TEST_RUN(test_print);
  TEST_RUN(test_create_and_read);
  TEST_RUN(test_unsupported);
  TEST_RUN(test_grad_basic);
  TEST_RUN(test_special_values);
  TEST_RUN(test_io);
  CHECK_EQ_INT(jx_live_arrays(), 0);
  CHECK_EQ_INT(jx_live_fns(), 0);
  return test_finish();
}
