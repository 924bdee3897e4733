/* test_nn.c -- jax.nn (src/lib/nn.c): every activation, softmax / log_softmax /
 * logsumexp, one_hot, standardize, dot_product_attention and the initializers against
 * JAX goldens (tests/golden/nn.txt, tools/golden_nn.py), values and derivatives;
 * numeric gradient checks in float64; vmap against a loop and jit against eager; bad
 * inputs.
 *
 * Tolerances (|got - want| <= atol + rtol |want|), float32 results:
 *  activation values   rtol 2e-6 (a few ulps: jaxc's exp/log1p/expm1 and XLA's differ by
 *                      an ulp or two, and compositions add theirs);
 *  first derivatives   rtol 1e-5, atol 2.5e-7 (4 ulps of 1): JAX's rules lose absolute
 *                      precision to cancellation -- sigmoid' = y (1 - y) is 0 for x >= 17
 *                      where jaxc's z / (1 + z)^2 keeps 2e-9; expm1' = y + 1;
 *  second derivatives  rtol 1e-4, atol 1e-6: JAX's softplus'' differentiates
 *                      exp(x - softplus(x)), whose exponent carries softplus's rounding
 *                      error (|x| ulps);
 *  gelu (tanh form), mish  atol 1e-6 / 5e-6 / 5e-5 for values / first / second
 *                      derivatives: XLA's float32 tanh saturates to +-1 for |z| > ~7.9
 *                      (the exact value is 1 - 1e-7), so 1 + tanh(z) and 1 - tanh^2 cancel
 *                      to noise that the derivatives multiply by up to ~|x|^3 (|x| <= 8);
 *  softmax family, standardize, attention  rtol 1e-5, atol 1e-6 (sums of several terms
 *                      in another order; values that cancel to ~0);
 *  float16 rtol 2e-3 and bfloat16 rtol 1.6e-2 (2 ulps): each op rounds to 16 bits as XLA
 *                      does, but another op order can move a result by an ulp;
 *  hard_sigmoid, hard_silu, hard_swish values: exact in every dtype.  */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "test.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static GoldenCase *cases;
static int ncases;

/* ------------------------------------------------------------ activations */

typedef jx_array *(*ActFn)(jx_array *x, double p);
typedef struct Act {
  const char *name;
  ActFn f;
  double p;   /* the parameter used by the numeric checks */
  double lo, hi;  /* numeric checks sample |x| in [lo, hi] with random signs, away from kinks */
} Act;

#define A0(name) static jx_array *a_##name(jx_array *x, double p) { (void)p; return jx_nn_##name(x); }
#define A1(name) static jx_array *a_##name(jx_array *x, double p) { return jx_nn_##name(x, p); }
A0(relu) A0(relu6) A0(sigmoid) A0(softplus) A0(sparse_plus) A0(soft_sign) A0(silu)
A0(swish) A0(log_sigmoid) A0(hard_sigmoid) A0(hard_silu) A0(hard_swish) A0(hard_tanh)
A0(selu) A0(mish) A0(identity)
A1(leaky_relu) A1(elu) A1(celu) A1(squareplus)
static jx_array *a_gelu(jx_array *x, double p) { return jx_nn_gelu(x, p != 0); }

static const Act ACTS[] = {
    {"relu", a_relu, 0, 0.1, 5},           {"relu6", a_relu6, 0, 0.1, 5.5},
    {"sigmoid", a_sigmoid, 0, 0, 8},       {"softplus", a_softplus, 0, 0, 8},
    {"sparse_plus", a_sparse_plus, 0, 0, 0.9}, {"soft_sign", a_soft_sign, 0, 0.1, 5},
    {"silu", a_silu, 0, 0, 6},             {"swish", a_swish, 0, 0, 6},
    {"log_sigmoid", a_log_sigmoid, 0, 0, 8}, {"hard_sigmoid", a_hard_sigmoid, 0, 0, 2.9},
    {"hard_silu", a_hard_silu, 0, 0, 2.9}, {"hard_swish", a_hard_swish, 0, 0, 2.9},
    {"hard_tanh", a_hard_tanh, 0, 0, 0.95}, {"selu", a_selu, 0, 0.1, 4},
    {"mish", a_mish, 0, 0, 6},             {"identity", a_identity, 0, 0, 5},
    {"leaky_relu", a_leaky_relu, 0.2, 0.1, 5}, {"elu", a_elu, 0.7, 0.1, 4},
    {"celu", a_celu, 1.5, 0.1, 4},         {"gelu", a_gelu, 1, 0, 5},
    {"squareplus", a_squareplus, 4, 0, 5},
};

static const Act *act_named(const char *name) {
  for (int i = 0; i < COUNT(ACTS); i++)
    if (!strcmp(ACTS[i].name, name)) return &ACTS[i];
  return NULL;
}

/* f(x) summed: the scalar function the gradient cases differentiate. */
typedef struct ActCtx {
  const Act *act;
  double p;
  jx_fn *inner; /* grad2: the gradient function whose sum is differentiated again */
} ActCtx;

static jx_status act_sum(void *ctx, jx_array *const *in, jx_array **out) {
  ActCtx *c = ctx;
  out[0] = jx_sum(c->act->f(in[0], c->p), 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status call_sum(void *ctx, jx_array *const *in, jx_array **out) {
  ActCtx *c = ctx;
  jx_array *g[1];
  jx_status s = jx_call(c->inner, in, g);
  out[0] = s == JX_OK ? jx_sum(g[0], 0, NULL, false) : NULL;
  return out[0] ? JX_OK : jx_last_status();
}

/* d/dx sum(f(x)) (order 1) or d/dx sum(d/dx sum(f(x))) (order 2). */
static jx_array *act_grad(const Act *a, double p, jx_array *x, int order) {
  ActCtx c1 = {a, p, NULL};
  jx_fn *f = jx_fn_new("act_sum", 1, 1, act_sum, &c1);
  jx_fn *g = jx_grad(f, 1, NULL);
  ActCtx c2 = {a, p, g};
  jx_fn *h = order == 2 ? jx_fn_new("grad_sum", 1, 1, call_sum, &c2) : NULL;
  jx_fn *g2 = order == 2 ? jx_grad(h, 1, NULL) : NULL;
  jx_array *out[1] = {NULL};
  jx_call(order == 2 ? g2 : g, &x, out);
  jx_fn_free(g2), jx_fn_free(h), jx_fn_free(g), jx_fn_free(f);
  return out[0];
}

/* ------------------------------------------------------------- parameters */

/* Param `key` as an axis list ("0,-1"; "none": NULL = all axes). */
static const int *param_axes(const GoldenCase *c, const char *key, int *axes, int *n) {
  const char *s = golden_param(c, key);
  *n = 0;
  if (!s || !strcmp(s, "none")) return NULL;
  while (*s && *n < JX_MAX_NDIM) {
    char *end;
    axes[(*n)++] = (int)strtol(s, &end, 10);
    s = *end == ',' ? end + 1 : end;
  }
  return axes;
}

static double param_double(const GoldenCase *c, const char *key, double dflt) {
  const char *s = golden_param(c, key);
  return s ? strtod(s, NULL) : dflt;
}

static jx_dtype param_dtype(const GoldenCase *c, const char *key) {
  jx_dtype d = JX_FLOAT32;
  bool weak;
  const char *s = golden_param(c, key);
  if (s) golden_parse_dtype(s, &d, &weak);
  return d;
}

static bool is_float(jx_dtype d) {
  return d == JX_FLOAT16 || d == JX_BFLOAT16 || d == JX_FLOAT32 || d == JX_FLOAT64;
}

static double rtol_of(jx_dtype d, double f32) {
  return d == JX_FLOAT16 ? 2e-3 : d == JX_BFLOAT16 ? 1.6e-2 : f32;
}

/* Runs one golden case through `run` (which fills outs from ins) and compares. */
typedef int (*CaseFn)(const GoldenCase *c, jx_array **in, jx_array **out);

static void run_case(const GoldenCase *c, CaseFn run, double rtol32, double atol32) {
  char ctx[256];
  snprintf(ctx, sizeof ctx, "%s (line %d)", c->name, c->line);
  jx_scope_begin();
  jx_array *in[8] = {NULL}, *out[4] = {NULL};
  for (int i = 0; i < c->nin && i < 8; i++) in[i] = golden_to_array(&c->in[i]);
  int nout = run(c, in, out);
  if (c->err) {
    golden_check_err(ctx, c, out[0]);
  } else {
    CHECK_MSG(nout == c->nout, "%s: %d outputs, want %d", ctx, nout, c->nout);
    for (int o = 0; o < c->nout && o < nout; o++) {
      jx_dtype d = c->out[o].dtype;
      double rtol = rtol_of(d, rtol32), atol = d == JX_FLOAT32 ? atol32 : 0;
      bool exact = !is_float(d) || rtol32 < 0;
      golden_compare(ctx, out[o], &c->out[o], exact ? 0 : rtol, exact ? 0 : atol);
    }
  }
  jx_clear_error();
  jx_scope_end(0, NULL);
}

/* ------------------------------------------------------------ golden runs */

static bool starts(const char *s, const char *prefix) {
  return !strncmp(s, prefix, strlen(prefix));
}


static int run_activation(const GoldenCase *c, jx_array **in, jx_array **out) {
  const char *fn = c->fn;
  int order = !strncmp(fn, "grad2_", 6) ? 2 : !strncmp(fn, "grad_", 5) ? 1 : 0;
  const Act *a = act_named(fn + (order == 2 ? 6 : order == 1 ? 5 : 0));
  double p = param_double(c, "p", 0);
  if (!a) return 0;
  out[0] = order ? act_grad(a, p, in[0], order) : a->f(in[0], p);
  return 1;
}

/* sum(glu(x) * (1, 2, 3, ...)): the golden's scalar for grad_glu. */
static jx_status glu_weighted(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *y = jx_nn_glu(in[0], *(int *)ctx);
  if (!y) return jx_last_status();
  jx_array *w = jx_reshape(jx_arange(1, 1 + (double)jx_size(y), 1, JX_FLOAT32), jx_ndim(y),
                           jx_shape(y));
  out[0] = jx_sum(jx_multiply(y, w), 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

static int run_glu(const GoldenCase *c, jx_array **in, jx_array **out) {
  int axis = (int)golden_param_int(c, "axis", -1);
  if (!strcmp(c->fn, "glu")) {
    out[0] = jx_nn_glu(in[0], axis);
    return 1;
  }
  jx_fn *f = jx_fn_new("glu_weighted", 1, 1, glu_weighted, &axis);
  jx_fn *g = jx_grad(f, 1, NULL);
  jx_call(g, in, out);
  jx_fn_free(g), jx_fn_free(f);
  return 1;
}

/* softmax / log_softmax / logsumexp and their gradients. */
typedef struct SmCtx {
  const GoldenCase *c;
  jx_array *weights, *b, *where; /* constants of the gradient cases */
} SmCtx;

static jx_array *softmax_like(const GoldenCase *c, const char *fn, jx_array *x, jx_array *b,
                              jx_array *where) {
  int axes[JX_MAX_NDIM], n;
  const int *ax = param_axes(c, "axes", axes, &n);
  bool kd = golden_param_int(c, "keepdims", 0) != 0;
  if (!strcmp(fn, "softmax")) return jx_nn_softmax(x, n, ax, where);
  if (!strcmp(fn, "log_softmax")) return jx_nn_log_softmax(x, n, ax, where);
  return jx_nn_logsumexp(x, n, ax, b, kd, where);
}

/* sum(where(mask, f(x) * c, 0)): the golden's scalar for the gradient cases. */
static jx_status softmax_loss(void *ctx, jx_array *const *in, jx_array **out) {
  SmCtx *s = ctx;
  const char *fn = s->c->fn + 5; /* after "grad_" */
  jx_array *y = jx_multiply(softmax_like(s->c, fn, in[0], s->b, s->where), s->weights);
  if (s->where && strcmp(fn, "logsumexp") != 0) y = jx_where(s->where, y, jx_scalar(0));
  out[0] = jx_sum(y, 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

static int run_softmax(const GoldenCase *c, jx_array **in, jx_array **out) {
  bool grad = !strncmp(c->fn, "grad_", 5);
  int k = grad ? 2 : 1;
  jx_array *b = golden_param_int(c, "b", 0) ? in[k++] : NULL;
  jx_array *where = golden_param_int(c, "where", 0) ? in[k++] : NULL;
  if (!grad) {
    out[0] = softmax_like(c, c->fn, in[0], b, where);
    return 1;
  }
  SmCtx s = {c, in[1], b, where};
  jx_fn *f = jx_fn_new("softmax_loss", 1, 1, softmax_loss, &s);
  jx_fn *g = jx_grad(f, 1, NULL);
  jx_call(g, in, out);
  jx_fn_free(g), jx_fn_free(f);
  return 1;
}

static int run_one_hot(const GoldenCase *c, jx_array **in, jx_array **out) {
  out[0] = jx_nn_one_hot(in[0], golden_param_int(c, "n", 0), param_dtype(c, "dtype"),
                         (int)golden_param_int(c, "axis", -1));
  return 1;
}

static jx_array *standardize_of(const GoldenCase *c, jx_array *x, jx_array **rest) {
  int axes[JX_MAX_NDIM], n, k = 0;
  const int *ax = param_axes(c, "axes", axes, &n);
  jx_array *mean = golden_param_int(c, "mean", 0) ? rest[k++] : NULL;
  jx_array *var = golden_param_int(c, "var", 0) ? rest[k++] : NULL;
  jx_array *where = golden_param_int(c, "where", 0) ? rest[k++] : NULL;
  return jx_nn_standardize(x, n, ax, mean, var, param_double(c, "eps", 1e-5), where);
}

typedef struct StdCtx {
  const GoldenCase *c;
  jx_array *weights, **rest;
} StdCtx;

static jx_status standardize_loss(void *ctx, jx_array *const *in, jx_array **out) {
  StdCtx *s = ctx;
  out[0] = jx_sum(jx_multiply(standardize_of(s->c, in[0], s->rest), s->weights), 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

static int run_standardize(const GoldenCase *c, jx_array **in, jx_array **out) {
  if (!strcmp(c->fn, "standardize")) {
    out[0] = standardize_of(c, in[0], in + 1);
    return 1;
  }
  StdCtx s = {c, in[1], in + 2};
  jx_fn *f = jx_fn_new("standardize_loss", 1, 1, standardize_loss, &s);
  jx_fn *g = jx_grad(f, 1, NULL);
  jx_call(g, in, out);
  jx_fn_free(g), jx_fn_free(f);
  return 1;
}

static jx_array *attention_of(const GoldenCase *c, jx_array *const *qkv, jx_array **rest) {
  int k = 0;
  jx_array *bias = golden_param_int(c, "bias", 0) ? rest[k++] : NULL;
  jx_array *mask = golden_param_int(c, "mask", 0) ? rest[k++] : NULL;
  return jx_nn_dot_product_attention(qkv[0], qkv[1], qkv[2], bias, mask,
                                     param_double(c, "scale", 0),
                                     golden_param_int(c, "causal", 0) != 0);
}

/* sum(attention(q, k, v, bias) * c); in = q, k, v[, bias], rest = {mask}. */
static jx_status attention_loss(void *ctx, jx_array *const *in, jx_array **out) {
  StdCtx *s = ctx;
  bool has_bias = golden_param_int(s->c, "bias", 0) != 0;
  jx_array *y = jx_nn_dot_product_attention(in[0], in[1], in[2], has_bias ? in[3] : NULL,
                                            s->rest[0], param_double(s->c, "scale", 0),
                                            golden_param_int(s->c, "causal", 0) != 0);
  out[0] = jx_sum(jx_multiply(y, s->weights), 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

static int run_attention(const GoldenCase *c, jx_array **in, jx_array **out) {
  if (!strcmp(c->fn, "attention")) {
    out[0] = attention_of(c, in, in + 3);
    return 1;
  }
  /* inputs q, k, v, bias (differentiated when present); constants c, mask */
  bool has_bias = golden_param_int(c, "bias", 0) != 0;
  jx_array *args[4] = {in[0], in[1], in[2], has_bias ? in[4] : NULL};
  jx_array *rest[2] = {NULL, NULL};
  if (golden_param_int(c, "mask", 0)) rest[0] = in[has_bias ? 5 : 4];
  StdCtx s = {c, in[3], rest};
  int n = has_bias ? 4 : 3;
  jx_fn *f = jx_fn_new("attention_loss", n, 1, attention_loss, &s);
  jx_fn *g = jx_grad(f, n, (int[]){0, 1, 2, 3});
  jx_call(g, args, out);
  jx_fn_free(g), jx_fn_free(f);
  return n;
}

/* Tolerances of a case (see the file comment). */
typedef void (*TolFn)(const GoldenCase *c, double *rtol, double *atol);

static int order_of(const char *fn) {
  return starts(fn, "grad2_") ? 2 : starts(fn, "grad_") ? 1 : 0;
}

static void act_tol(const GoldenCase *c, double *rtol, double *atol) {
  static const double R[3] = {2e-6, 1e-5, 1e-4}, A[3] = {0, 2.5e-7, 1e-6};
  static const double TANH_A[3] = {1e-6, 5e-6, 5e-5};
  int k = order_of(c->fn);
  const char *fn = c->fn + (k == 2 ? 6 : k == 1 ? 5 : 0);
  bool tanh_noise = !strcmp(fn, "mish") || (!strcmp(fn, "gelu") && param_double(c, "p", 0) != 0);
  *rtol = R[k];
  *atol = tanh_noise ? TANH_A[k] : A[k];
  /* hard_sigmoid multiplies by XLA's reciprocal of 6: JAX's bits in every dtype */
  if (k == 0 && starts(fn, "hard_") && strcmp(fn, "hard_tanh")) *rtol = -1;
}

static void reduction_tol(const GoldenCase *c, double *rtol, double *atol) {
  bool exact = strstr(c->name, "_exact") != NULL; /* 16-bit softmax rows: JAX's bits */
  *rtol = exact ? -1 : 1e-5; /* run_case: a negative rtol compares exactly */
  *atol = exact ? 0 : 1e-6;
}

static void exact_tol(const GoldenCase *c, double *rtol, double *atol) { *rtol = *atol = 0; }

/* Runs every golden case whose function satisfies `pick`. */
static int run_goldens(bool (*pick)(const char *fn), CaseFn run, TolFn tol) {
  int n = 0;
  for (int i = 0; i < ncases; i++) {
    const GoldenCase *c = &cases[i];
    if (!pick(c->fn)) continue;
    double rtol, atol;
    tol(c, &rtol, &atol);
    run_case(c, run, rtol, atol);
    n++;
  }
  return n;
}

static bool is_act(const char *fn) {
  if (starts(fn, "grad2_")) fn += 6;
  else if (starts(fn, "grad_")) fn += 5;
  return act_named(fn) != NULL;
}
static bool is_glu(const char *fn) { return !strcmp(fn, "glu") || !strcmp(fn, "grad_glu"); }
static bool is_softmax(const char *fn) {
  if (starts(fn, "grad_")) fn += 5;
  return !strcmp(fn, "softmax") || !strcmp(fn, "log_softmax") || !strcmp(fn, "logsumexp");
}
static bool is_one_hot(const char *fn) { return !strcmp(fn, "one_hot"); }
static bool is_standardize(const char *fn) {
  return !strcmp(fn, "standardize") || !strcmp(fn, "grad_standardize");
}
static bool is_attention(const char *fn) {
  return !strcmp(fn, "attention") || !strcmp(fn, "grad_attention");
}

static void test_golden_activations(void) {
  CHECK_MSG(cases != NULL, "cannot load nn.txt (run tools/golden_nn.py)");
  int n = run_goldens(is_act, run_activation, act_tol);
  n += run_goldens(is_glu, run_glu, act_tol);
  CHECK_MSG(n > 250, "only %d activation cases ran", n);
  printf("%d golden activation cases\n", n);
}

static void test_golden_softmax(void) {
  int n = run_goldens(is_softmax, run_softmax, reduction_tol);
  CHECK_MSG(n > 150, "only %d softmax cases ran", n);
  printf("%d golden softmax/log_softmax/logsumexp cases\n", n);
}

static void test_golden_misc(void) {
  int n = run_goldens(is_one_hot, run_one_hot, exact_tol);
  n += run_goldens(is_standardize, run_standardize, reduction_tol);
  n += run_goldens(is_attention, run_attention, reduction_tol);
  CHECK_MSG(n > 50, "only %d one_hot/standardize/attention cases ran", n);
  printf("%d golden one_hot/standardize/attention cases\n", n);
}

/* --------------------------------------------------------- initializers */

static int run_init(const GoldenCase *c, jx_array **in, jx_array **out) {
  int64_t shape[JX_MAX_NDIM];
  int ndim = 0;
  const char *s = golden_param(c, "shape");
  while (s && strcmp(s, "scalar") && *s && ndim < JX_MAX_NDIM) {
    char *end;
    shape[ndim++] = strtoll(s, &end, 10);
    s = *end == ',' ? end + 1 : end;
  }
  jx_dtype dt = param_dtype(c, "dtype");
  const char *name = golden_param(c, "init");
  jx_array *key = in[0];
  if (!name) return 0;
  if (!strcmp(name, "zeros")) out[0] = jx_nn_init_zeros(key, ndim, shape, dt);
  else if (!strcmp(name, "ones")) out[0] = jx_nn_init_ones(key, ndim, shape, dt);
  else if (!strcmp(name, "constant"))
    out[0] = jx_nn_init_constant(key, ndim, shape, dt, param_double(c, "value", 0));
  else if (!strcmp(name, "uniform"))
    out[0] = jx_nn_init_uniform(key, ndim, shape, dt, param_double(c, "scale", 0.01));
  else if (!strcmp(name, "normal"))
    out[0] = jx_nn_init_normal(key, ndim, shape, dt, param_double(c, "stddev", 0.01));
  else if (!strcmp(name, "truncated_normal"))
    out[0] = jx_nn_init_truncated_normal(key, ndim, shape, dt, param_double(c, "stddev", 0.01),
                                         param_double(c, "lower", -2), param_double(c, "upper", 2));
  else if (!strcmp(name, "variance_scaling")) {
    static const char *const modes[] = {"fan_in", "fan_out", "fan_avg", "fan_geo_avg"};
    static const char *const dists[] = {"truncated_normal", "normal", "uniform"};
    int m = 0, d = 0;
    for (int i = 0; i < 4; i++) if (!strcmp(golden_param(c, "mode"), modes[i])) m = i;
    for (int i = 0; i < 3; i++) if (!strcmp(golden_param(c, "distribution"), dists[i])) d = i;
    out[0] = jx_nn_init_variance_scaling(key, ndim, shape, dt, param_double(c, "scale", 1),
                                         (jx_nn_fan_mode)m, (jx_nn_distribution)d,
                                         (int)golden_param_int(c, "in_axis", -2),
                                         (int)golden_param_int(c, "out_axis", -1));
  }
  else if (!strcmp(name, "glorot_uniform")) out[0] = jx_nn_init_glorot_uniform(key, ndim, shape, dt);
  else if (!strcmp(name, "glorot_normal")) out[0] = jx_nn_init_glorot_normal(key, ndim, shape, dt);
  else if (!strcmp(name, "he_uniform")) out[0] = jx_nn_init_he_uniform(key, ndim, shape, dt);
  else if (!strcmp(name, "he_normal")) out[0] = jx_nn_init_he_normal(key, ndim, shape, dt);
  else if (!strcmp(name, "lecun_uniform")) out[0] = jx_nn_init_lecun_uniform(key, ndim, shape, dt);
  else if (!strcmp(name, "lecun_normal")) out[0] = jx_nn_init_lecun_normal(key, ndim, shape, dt);
  else return 0;
  return 1;
}

static bool is_init(const char *fn) { return !strcmp(fn, "init"); }

/* jx_random_* reproduces JAX's bits; the initializers multiply by a constant or two. The
 * normal and truncated-normal samplers go through erf_inv, which jaxc evaluates with
 * XLA's polynomial but possibly another operation order: 1 ulp (float32). */
static void init_tol(const GoldenCase *c, double *rtol, double *atol) {
  *rtol = 4e-7;
  *atol = 0;
}

static void test_golden_initializers(void) {
  int n = run_goldens(is_init, run_init, init_tol);
  CHECK_MSG(n > 40, "only %d initializer cases ran", n);
  printf("%d golden initializer cases\n", n);
}

static jx_status glorot_of_key(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_nn_init_glorot_normal(in[0], 2, (int64_t[]){3, 4}, JX_FLOAT32);
  return out[0] ? JX_OK : jx_last_status();
}

/* Initializers under vmap over a batch of keys equal a loop over the keys; bad inputs. */
static void test_initializers_vmap_and_errors(void) {
  int64_t fns = jx_live_fns();
  jx_scope_begin();
  jx_array *keys = jx_random_split(jx_random_key(7), 3);
  jx_fn *f = jx_fn_new("glorot_of_key", 1, 1, glorot_of_key, NULL), *vf = jx_vmap(f, NULL, NULL);
  jx_array *batched = NULL;
  CHECK(jx_call(vf, &keys, &batched) == JX_OK);
  CHECK(batched && jx_ndim(batched) == 3 && jx_shape(batched)[0] == 3);
  for (int64_t r = 0; r < 3; r++) {
    jx_array *one = NULL;
    CHECK(jx_call(f, (jx_array *[]){jx_take(keys, jx_scalar_int(r), 0)}, &one) == JX_OK);
    double *a = test_read_f64(jx_take(batched, jx_scalar_int(r), 0)), *b = test_read_f64(one);
    for (int i = 0; a && b && i < 12; i++) CHECK_MSG(a[i] == b[i], "key %lld [%d]: %g vs %g",
                                                      (long long)r, i, a[i], b[i]);
    free(a), free(b);
  }
  jx_fn_free(vf), jx_fn_free(f);
  jx_array *key = jx_random_key(1);
  int64_t s2[2] = {4, 5};
  CHECK(jx_nn_init_normal(key, 2, s2, JX_INT32, 1.0) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_nn_init_normal: dtype must be floating, got int32");
  CHECK(jx_nn_init_he_normal(key, 1, s2, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_nn_init_he_normal: can't compute input and output sizes of a "
                            "1-dimensional weights tensor");
  CHECK(jx_nn_init_variance_scaling(key, 2, s2, JX_FLOAT32, 1, JX_NN_FAN_IN, JX_NN_NORMAL, 2, -1) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_nn_init_variance_scaling: axis 2 is out of bounds");
  CHECK(jx_nn_init_variance_scaling(key, 2, s2, JX_FLOAT32, 1, (jx_nn_fan_mode)9, JX_NN_NORMAL, 0, 1) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "invalid mode 9");
  CHECK(jx_nn_init_glorot_uniform(key, 2, (int64_t[]){0, 5}, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_nn_init_glorot_uniform: zero fan");
  CHECK(jx_nn_init_uniform(NULL, 2, s2, JX_FLOAT32, 1.0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, NULL);
  jx_array *z = jx_nn_init_zeros(NULL, 2, s2, JX_FLOAT64); /* x64 off: float32 */
  CHECK(z && jx_dtype_of(z) == JX_FLOAT32 && jx_item(jx_sum(z, 0, NULL, false)) == 0);
  jx_scope_end(0, NULL);
  CHECK_EQ_INT(jx_live_fns(), fns);
}

/* ------------------------------------------------------ numeric gradients */

/* A reproducible uniform in [0, 1). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double urand(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) / 9007199254740992.0;
}

static jx_array *f64_rand(int ndim, const int64_t *shape, double lo, double hi, bool sym) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  double *v = malloc((size_t)(n ? n : 1) * sizeof(double));
  for (int64_t i = 0; i < n; i++) {
    v[i] = lo + (hi - lo) * urand();
    if (sym && urand() < 0.5) v[i] = -v[i];
  }
  jx_array *a = jx_array_from(v, JX_FLOAT64, ndim, shape);
  free(v);
  return a;
}

/* Every activation in float64 at 16 random points away from its kinks: the gradient
 * (reverse mode) against central differences of f, and the second derivative against
 * central differences of that gradient. h = 1e-5: truncation ~h^2 |f^(3)|, rounding
 * ~1e-16 / h, so |got - want| <= 1e-6 (1 + |want|); second order 1e-5. */
static void test_numeric_activation_grads(void) {
  jx_config_enable_x64(true);
  int64_t fns = jx_live_fns();
  const double h = 1e-5;
  for (int i = 0; i < COUNT(ACTS); i++) {
    const Act *a = &ACTS[i];
    jx_scope_begin();
    jx_array *x = f64_rand(1, (int64_t[]){16}, a->lo, a->hi, true);
    jx_array *xp = jx_add(x, jx_scalar(h)), *xm = jx_subtract(x, jx_scalar(h));
    jx_array *fd = jx_divide(jx_subtract(a->f(xp, a->p), a->f(xm, a->p)), jx_scalar(2 * h));
    jx_array *g = act_grad(a, a->p, x, 1);
    jx_array *gd = jx_divide(jx_subtract(act_grad(a, a->p, xp, 1), act_grad(a, a->p, xm, 1)),
                             jx_scalar(2 * h));
    jx_array *g2 = act_grad(a, a->p, x, 2);
    double *vf = test_read_f64(fd), *vg = test_read_f64(g), *vd = test_read_f64(gd);
    double *v2 = test_read_f64(g2), *vx = test_read_f64(x);
    CHECK_MSG(vf && vg && vd && v2 && jx_dtype_of(g) == JX_FLOAT64, "%s: %s", a->name,
              jx_last_error());
    for (int k = 0; vf && vg && vd && v2 && k < 16; k++) {
      CHECK_MSG(fabs(vg[k] - vf[k]) <= 1e-6 * (1 + fabs(vf[k])), "%s'(%.17g): %.17g vs %.17g",
                a->name, vx[k], vg[k], vf[k]);
      CHECK_MSG(fabs(v2[k] - vd[k]) <= 1e-5 * (1 + fabs(vd[k])), "%s''(%.17g): %.17g vs %.17g",
                a->name, vx[k], v2[k], vd[k]);
    }
    free(vf), free(vg), free(vd), free(v2), free(vx);
    jx_scope_end(0, NULL);
  }
  CHECK_EQ_INT(jx_live_fns(), fns);
  jx_config_enable_x64(false);
}

/* A scalar loss of several inputs; ctx selects it. Differentiated in every input. */
typedef enum Loss { L_SOFTMAX, L_LOG_SOFTMAX, L_LOGSUMEXP, L_STANDARDIZE, L_ATTENTION } Loss;
typedef struct LossCtx {
  Loss which;
  jx_array *w, *mask, *b; /* constants */
} LossCtx;

static jx_status loss_fn(void *ctx, jx_array *const *in, jx_array **out) {
  LossCtx *c = ctx;
  jx_array *y = NULL;
  switch (c->which) {
  case L_SOFTMAX: y = jx_nn_softmax(in[0], 1, (int[]){0}, c->mask); break;
  case L_LOG_SOFTMAX:
    y = jx_where(c->mask, jx_nn_log_softmax(in[0], 1, (int[]){-1}, c->mask), jx_scalar(0));
    break;
  case L_LOGSUMEXP: y = jx_nn_logsumexp(in[0], 1, (int[]){1}, c->b, true, NULL); break;
  case L_STANDARDIZE: y = jx_nn_standardize(in[0], 0, NULL, NULL, NULL, 1e-3, c->mask); break;
  case L_ATTENTION:
    y = jx_nn_dot_product_attention(in[0], in[1], in[2], in[3], c->mask, 0, true);
    break;
  }
  out[0] = jx_sum(jx_multiply(y, c->w), 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

/* JAX's check_grads in one random direction per input: (L(x + h v) - L(x - h v)) / 2h
 * against sum_i <grad_i, v_i>, float64, to tol (1 + |difference|). */
static void check_directional(const char *name, Loss which, int nin, jx_array **x,
                              jx_array *w, jx_array *mask, jx_array *b, double h, double tol) {
  LossCtx c = {which, w, mask, b};
  jx_fn *f = jx_fn_new(name, nin, 1, loss_fn, &c);
  int argnums[8];
  for (int i = 0; i < nin; i++) argnums[i] = i;
  jx_fn *g = jx_grad(f, nin, argnums);
  jx_array *grads[8] = {NULL}, *xp[8], *xm[8], *v[8], *lp = NULL, *lm = NULL;
  double dot = 0;
  CHECK_MSG(jx_call(g, x, grads) == JX_OK, "%s: %s", name, jx_last_error());
  for (int i = 0; i < nin; i++) {
    v[i] = f64_rand(jx_ndim(x[i]), jx_shape(x[i]), -1, 1, false);
    xp[i] = jx_add(x[i], jx_multiply(v[i], jx_scalar(h)));
    xm[i] = jx_subtract(x[i], jx_multiply(v[i], jx_scalar(h)));
    dot += jx_item(jx_vdot(grads[i], v[i]));
  }
  jx_call(f, xp, &lp);
  jx_call(f, xm, &lm);
  double fd = (jx_item(lp) - jx_item(lm)) / (2 * h);
  CHECK_MSG(fabs(dot - fd) <= tol * (1 + fabs(fd)), "%s: <grad, v> = %.17g, difference %.17g",
            name, dot, fd);
  jx_fn_free(g), jx_fn_free(f);
}

static void test_numeric_reduction_grads(void) {
  jx_config_enable_x64(true);
  int64_t fns = jx_live_fns();
  jx_scope_begin();
  int64_t s35[2] = {3, 5};
  jx_array *x = f64_rand(2, s35, -3, 3, false), *w = f64_rand(2, s35, -1, 1, false);
  bool mv[15] = {1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1};
  jx_array *mask = jx_array_from(mv, JX_BOOL, 2, s35);
  jx_array *b = f64_rand(2, s35, 0.2, 2, false);
  /* h = 1e-6: truncation ~1e-12, rounding ~1e-16 / 1e-6 = 1e-10: tolerance 1e-6. */
  check_directional("softmax", L_SOFTMAX, 1, &x, w, mask, NULL, 1e-6, 1e-6);
  check_directional("log_softmax", L_LOG_SOFTMAX, 1, &x, w, mask, NULL, 1e-6, 1e-6);
  check_directional("logsumexp", L_LOGSUMEXP, 1, &x,
                    jx_slice(w, 2, NULL, (int64_t[]){3, 1}, NULL), NULL, b, 1e-6, 1e-6);
  check_directional("standardize", L_STANDARDIZE, 1, &x, w, mask, NULL, 1e-6, 1e-6);
  /* attention: q (2,3,4,2), k, v (2,5,2,2) (grouped heads), bias (1,4,3,5), mask (3,5) */
  jx_array *qkvb[4] = {f64_rand(4, (int64_t[]){2, 3, 4, 2}, -1, 1, false),
                       f64_rand(4, (int64_t[]){2, 5, 2, 2}, -1, 1, false),
                       f64_rand(4, (int64_t[]){2, 5, 2, 2}, -1, 1, false),
                       f64_rand(4, (int64_t[]){1, 4, 3, 5}, -1, 1, false)};
  bool am[15] = {1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1};
  jx_array *amask = jx_array_from(am, JX_BOOL, 2, s35);
  /* JAX's attention takes its softmax in float32 even for float64 inputs, so L carries
   * float32 rounding (~1e-7 per term, 48 terms): h = 1e-3 keeps that below 1e-4 and the
   * truncation near 1e-6; tolerance 1e-3. */
  check_directional("attention", L_ATTENTION, 4, qkvb,
                    f64_rand(4, (int64_t[]){2, 3, 4, 2}, -1, 1, false), amask, NULL, 1e-3, 1e-3);
  jx_scope_end(0, NULL);
  CHECK_EQ_INT(jx_live_fns(), fns);
  jx_config_enable_x64(false);
}

/* ------------------------------------------------------- vmap and jit */

static jx_status row_fns(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_nn_log_softmax(in[0], 1, (int[]){-1}, in[1]);
  out[1] = jx_nn_logsumexp(in[0], 0, NULL, NULL, false, in[1]);
  out[2] = jx_nn_standardize(in[0], 1, (int[]){0}, NULL, NULL, 1e-5, NULL);
  out[3] = jx_nn_gelu(in[0], false);
  return out[0] && out[1] && out[2] && out[3] ? JX_OK : jx_last_status();
}

static jx_status attention3(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_nn_dot_product_attention(in[0], in[1], in[2], in[3], NULL, 0.5, true);
  return out[0] ? JX_OK : jx_last_status();
}

/* got and want have the same size and agree to rtol (relative, floor 1e-6). */
static void check_close(const char *what, jx_array *got, jx_array *want, double rtol) {
  CHECK_MSG(got && want && jx_size(got) == jx_size(want), "%s: sizes differ (%s)", what,
            jx_last_error());
  double *a = test_read_f64(got), *b = test_read_f64(want);
  for (int64_t i = 0; a && b && i < jx_size(want); i++)
    CHECK_MSG(fabs(a[i] - b[i]) <= rtol * (1e-6 + fabs(b[i])) || a[i] == b[i],
              "%s[%lld]: %.9g vs %.9g", what, (long long)i, a[i], b[i]);
  free(a), free(b);
}

/* vmap over rows (and jit of it) equals a loop over rows; vmap of the rank-3 attention
 * over the batch equals the rank-4 call. */
static void test_vmap_equals_loop(void) {
  int64_t fns = jx_live_fns();
  jx_scope_begin();
  int64_t s45[2] = {4, 5};
  float xv[20];
  bool mv[20];
  for (int i = 0; i < 20; i++) xv[i] = (float)(3 * urand() - 1.5), mv[i] = (i % 3) != 1;
  jx_array *x = jx_array_from(xv, JX_FLOAT32, 2, s45), *m = jx_array_from(mv, JX_BOOL, 2, s45);
  jx_fn *f = jx_fn_new("row_fns", 2, 4, row_fns, NULL);
  jx_fn *vf = jx_vmap(f, NULL, NULL), *jvf = jx_jit(vf);
  jx_array *batched[4] = {NULL}, *jitted[4] = {NULL};
  CHECK(jx_call(vf, (jx_array *[]){x, m}, batched) == JX_OK);
  CHECK(jx_call(jvf, (jx_array *[]){x, m}, jitted) == JX_OK);
  for (int64_t r = 0; r < 4; r++) {
    jx_array *xr = jx_take(x, jx_scalar_int(r), 0), *mr = jx_take(m, jx_scalar_int(r), 0);
    jx_array *row[4] = {NULL};
    CHECK(jx_call(f, (jx_array *[]){xr, mr}, row) == JX_OK);
    for (int o = 0; o < 4; o++) {
      check_close("vmap row", jx_take(batched[o], jx_scalar_int(r), 0), row[o], 1e-6);
      check_close("jit(vmap) row", jx_take(jitted[o], jx_scalar_int(r), 0), row[o], 1e-5);
    }
  }
  jx_array *q = f64_rand(4, (int64_t[]){3, 4, 2, 3}, -1, 1, false);
  jx_array *k = f64_rand(4, (int64_t[]){3, 5, 1, 3}, -1, 1, false);
  jx_array *v = f64_rand(4, (int64_t[]){3, 5, 1, 3}, -1, 1, false);
  jx_array *bias = f64_rand(3, (int64_t[]){3, 4, 5}, -1, 1, false); /* (B, T, S) */
  jx_fn *att = jx_fn_new("attention3", 4, 1, attention3, NULL);
  jx_fn *vatt = jx_vmap(att, NULL, NULL);
  jx_array *got = NULL;
  CHECK(jx_call(vatt, (jx_array *[]){q, k, v, bias}, &got) == JX_OK);
  jx_array *want = jx_nn_dot_product_attention(q, k, v, jx_expand_dims(bias, 1), NULL, 0.5, true);
  check_close("vmap attention", got, want, 1e-5);
  jx_fn_free(vatt), jx_fn_free(att), jx_fn_free(jvf), jx_fn_free(vf), jx_fn_free(f);
  jx_scope_end(0, NULL);
  CHECK_EQ_INT(jx_live_fns(), fns);
}

/* jit(value_and_grad(loss)) equals the eager one. */
static void test_jit_equals_eager(void) {
  int64_t fns = jx_live_fns();
  jx_scope_begin();
  int64_t s35[2] = {3, 5};
  float xv[15], wv[15];
  bool mv[15];
  for (int i = 0; i < 15; i++)
    xv[i] = (float)(6 * urand() - 3), wv[i] = (float)(urand() - 0.5), mv[i] = i % 4 != 2;
  jx_array *x = jx_array_from(xv, JX_FLOAT32, 2, s35), *w = jx_array_from(wv, JX_FLOAT32, 2, s35);
  jx_array *m = jx_array_from(mv, JX_BOOL, 2, s35);
  Loss ls[3] = {L_SOFTMAX, L_LOG_SOFTMAX, L_STANDARDIZE};
  for (int i = 0; i < 3; i++) {
    LossCtx c = {ls[i], w, m, NULL};
    jx_fn *f = jx_fn_new("loss", 1, 1, loss_fn, &c);
    jx_fn *g = jx_value_and_grad(f, 1, NULL), *jg = jx_jit(g);
    jx_array *e[2] = {NULL}, *j[2] = {NULL};
    CHECK(jx_call(g, &x, e) == JX_OK);
    CHECK(jx_call(jg, &x, j) == JX_OK);
    check_close("jit value", j[0], e[0], 1e-5);
    check_close("jit grad", j[1], e[1], 1e-5);
    jx_fn_free(jg), jx_fn_free(g), jx_fn_free(f);
  }
  jx_scope_end(0, NULL);
  CHECK_EQ_INT(jx_live_fns(), fns);
}

/* softmax multiplies by 1 / sum as XLA does (lib/nn.c): within 1 ulp of the correctly
 * rounded exp(x - max) / sum, eagerly and jitted (the cpu's fused kernel). The reference
 * divides the same exp values: rows of 1024 (no scalar loop tails, whose exp may differ
 * by an ulp from the vector one). */
static jx_status softmax_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_nn_softmax(in[0], 1, (int[]){-1}, NULL);
  return JX_OK;
}

static void test_softmax_reciprocal(void) {
  int64_t live = jx_live_arrays(), fns = jx_live_fns();
  jx_scope_begin();
  enum { B = 200, C = 1024 };
  float *xv = malloc((size_t)B * C * sizeof *xv);
  for (int i = 0; i < B * C; i++) xv[i] = (float)(40 * urand() - 20);
  jx_array *x = jx_array_from(xv, JX_FLOAT32, 2, (int64_t[]){B, C});
  jx_array *u = jx_exp(jx_subtract(x, jx_max(x, 1, (int[]){-1}, true)));
  jx_array *want = jx_divide(u, jx_sum(u, 1, (int[]){-1}, true));
  jx_fn *f = jx_fn_new("softmax", 1, 1, softmax_fn, NULL), *jf = jx_jit(f);
  jx_array *got[2] = {jx_nn_softmax(x, 1, (int[]){-1}, NULL), NULL};
  CHECK(jx_call(jf, &x, &got[1]) == JX_OK);
  float *w = malloc((size_t)B * C * sizeof *w), *g = malloc((size_t)B * C * sizeof *g);
  CHECK(jx_read(want, w, (size_t)B * C * sizeof *w) == JX_OK);
  for (int k = 0; k < 2; k++) {
    CHECK(jx_read(got[k], g, (size_t)B * C * sizeof *g) == JX_OK);
    int64_t worst = 0, differ = 0;
    for (int i = 0; i < B * C; i++) {
      int32_t a, b;
      memcpy(&a, &g[i], 4), memcpy(&b, &w[i], 4);
      int64_t d = llabs((int64_t)a - b); /* both >= 0: bit patterns order as the floats */
      worst = d > worst ? d : worst;
      differ += d != 0;
    }
    CHECK_MSG(worst <= 1, "softmax %s: %lld ulp from exp / sum", k ? "jit" : "eager", (long long)worst);
    CHECK(differ > 0); /* it does multiply by the reciprocal */
  }
  free(w), free(g), free(xv);
  jx_fn_free(jf), jx_fn_free(f);
  jx_scope_end(0, NULL);
  CHECK_EQ_INT(jx_live_arrays(), live);
  CHECK_EQ_INT(jx_live_fns(), fns);
}

/* ------------------------------------------------------------ bad inputs */

static void test_null_inputs(void) {
  for (int i = 0; i < COUNT(ACTS); i++) {
    CHECK(ACTS[i].f(NULL, ACTS[i].p) == NULL);
    char want[64];
    snprintf(want, sizeof want, "jx_nn_%s: x is NULL", ACTS[i].name);
    CHECK_ERROR(JX_ERR_VALUE, want);
  }
  CHECK(jx_nn_glu(NULL, -1) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_nn_glu: x is NULL");
  CHECK(jx_nn_softmax(NULL, 0, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_nn_softmax: x is NULL");
  CHECK(jx_nn_log_softmax(NULL, 0, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_nn_log_softmax");
  CHECK(jx_nn_logsumexp(NULL, 0, NULL, NULL, false, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_nn_logsumexp");
  CHECK(jx_nn_one_hot(NULL, 3, JX_FLOAT32, -1) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_nn_one_hot");
  CHECK(jx_nn_standardize(NULL, 0, NULL, NULL, NULL, 1e-5, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_nn_standardize");
  jx_array *q = jx_zeros(4, (int64_t[]){1, 2, 1, 2}, JX_FLOAT32);
  CHECK(jx_nn_dot_product_attention(q, NULL, q, NULL, NULL, 0, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_nn_dot_product_attention: key is NULL");
  /* A chain keeps the first error. */
  CHECK(jx_nn_relu(jx_nn_softmax(q, 1, (int[]){4}, NULL)) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_nn_softmax: axis 4 is out of bounds");
  jx_free(q);
}

static void test_bad_inputs(void) {
  jx_scope_begin();
  int32_t iv[3] = {1, 2, 3};
  jx_array *xi = jx_array_from(iv, JX_INT32, 1, (int64_t[]){3});
  jx_array *x = jx_ones(2, (int64_t[]){2, 3}, JX_FLOAT32);
  CHECK(jx_nn_sigmoid(xi) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_nn_sigmoid: logistic does not accept dtype int32");
  CHECK(jx_nn_silu(xi) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_nn_silu");
  CHECK(jx_nn_glu(x, 1) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_nn_glu: axis 1 of shape (2,3) has odd size 3");
  CHECK(jx_nn_glu(x, 2) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_nn_glu: axis 2 is out of bounds");
  CHECK(jx_nn_softmax(x, 2, (int[]){0, -2}, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_nn_softmax: repeated axis");
  CHECK(jx_nn_log_softmax(x, 1, (int[]){-1}, jx_ones(1, (int64_t[]){2}, JX_BOOL)) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE,
              "jx_nn_log_softmax: where of shape (2,) does not broadcast to x's shape (2,3)");
  CHECK(jx_nn_logsumexp(x, 1, (int[]){-1}, jx_ones(1, (int64_t[]){4}, JX_FLOAT32), false,
                        NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_nn_logsumexp: b of shape (4,)");
  CHECK(jx_nn_one_hot(xi, -2, JX_FLOAT32, -1) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_nn_one_hot: num_classes must be >= 0, got -2");
  CHECK(jx_nn_one_hot(jx_ones(1, (int64_t[]){2}, JX_BOOL), 2, JX_FLOAT32, -1) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_nn_one_hot: indices must be integers");
  CHECK(jx_nn_one_hot(xi, 2, (jx_dtype)99, -1) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_nn_one_hot: invalid dtype 99");
  CHECK(jx_nn_one_hot(xi, 2, JX_FLOAT32, 2) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_nn_one_hot: axis 2 is out of bounds");
  /* complex indices compare with the classes as JAX's (one_hot(1+0j, 3) = [0, 1, 0]) */
  jx_array *oh = jx_nn_one_hot(jx_astype(jx_scalar(1.0), JX_COMPLEX64), 3, JX_FLOAT32, -1);
  float ohv[3] = {9, 9, 9};
  CHECK(oh && jx_read(oh, ohv, sizeof ohv) == JX_OK && ohv[0] == 0 && ohv[1] == 1 && ohv[2] == 0);
  CHECK(jx_nn_standardize(x, 1, (int[]){3}, NULL, NULL, 1e-5, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_nn_standardize: axis 3");
  CHECK(jx_nn_standardize(x, 1, (int[]){-1}, jx_ones(1, (int64_t[]){2}, JX_FLOAT32), NULL,
                          1e-5, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_nn_standardize: mean of shape (2,) does not broadcast to x's shape (2,3)");
  jx_array *q = jx_ones(4, (int64_t[]){2, 3, 4, 5}, JX_FLOAT32);
  jx_array *k = jx_ones(4, (int64_t[]){2, 6, 2, 5}, JX_FLOAT32);
  jx_array *k3 = jx_ones(4, (int64_t[]){2, 6, 3, 5}, JX_FLOAT32);
  CHECK(jx_nn_dot_product_attention(jx_ones(2, (int64_t[]){3, 5}, JX_FLOAT32), k, k, NULL,
                                    NULL, 0, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_nn_dot_product_attention: query must be (B, T, N, H) or "
                            "(T, N, H), got shape (3,5)");
  CHECK(jx_nn_dot_product_attention(q, k3, k3, NULL, NULL, 0, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "multiple of key/value heads, got 4 vs 3");
  CHECK(jx_nn_dot_product_attention(q, k, jx_ones(4, (int64_t[]){2, 6, 2, 4}, JX_FLOAT32),
                                    NULL, NULL, 0, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "key (2,6,2,5) and value (2,6,2,4) must be equal");
  CHECK(jx_nn_dot_product_attention(q, k, jx_astype(k, JX_FLOAT16), NULL, NULL, 0, false) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "float32, float32, float16");
  CHECK(jx_nn_dot_product_attention(q, k, k, NULL, jx_ones(2, (int64_t[]){3, 6}, JX_INT32), 0,
                                    false) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "mask must be bool, got int32");
  CHECK(jx_nn_dot_product_attention(q, k, k, jx_ones(2, (int64_t[]){3, 5}, JX_FLOAT32), NULL, 0,
                                    false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "bias shape (1,1,3,5) does not broadcast to (B, N, T, S) = (2,4,3,6)");
  CHECK(jx_nn_dot_product_attention(q, k, k, jx_ones(5, (int64_t[]){1, 1, 1, 3, 6}, JX_FLOAT32),
                                    NULL, 0, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "bias must have rank <= 4");
  jx_scope_end(0, NULL);
}

int main(void) {
  int64_t fns = jx_live_fns();
  cases = golden_load("nn.txt", &ncases);
  TEST_RUN(test_golden_activations);
  TEST_RUN(test_golden_softmax);
  TEST_RUN(test_golden_misc);
  TEST_RUN(test_golden_initializers);
  TEST_RUN(test_initializers_vmap_and_errors);
  TEST_RUN(test_numeric_activation_grads);
  TEST_RUN(test_numeric_reduction_grads);
  TEST_RUN(test_vmap_equals_loop);
  TEST_RUN(test_jit_equals_eager);
  TEST_RUN(test_softmax_reciprocal);
  TEST_RUN(test_null_inputs);
  TEST_RUN(test_bad_inputs);
  golden_free(cases, ncases);
  CHECK_MSG(jx_live_fns() == fns, "leaked %lld functions", (long long)(jx_live_fns() - fns));
  return test_finish();
}
