/* test_conv.c -- lax's windowed ops (src/lib/lax_conv.c): conv_general_dilated, conv,
 * conv_transpose, reduce_window, max/avg pooling against JAX goldens
 * (tests/golden/lax.txt, tools/golden_lax.py); gradients by central differences in
 * float64; vmap against a loop; jit against eager; bad inputs with their messages. */
#include <stdlib.h>

#include "golden.h"
#include "test.h"

#define NM JX_NOT_MAPPED

static GoldenCase *cases;
static int ncases;

/* ------------------------------------------------------------ golden params */

/* Param `key` as an int64 list ("1,-2"); NULL for "-" or absent. */
static const int64_t *plist(const GoldenCase *c, const char *key, int64_t *buf) {
  const char *s = golden_param(c, key);
  if (!s || !strcmp(s, "-")) return NULL;
  int n = 0;
  while (*s && n < 2 * JX_MAX_NDIM) {
    char *end;
    buf[n++] = strtoll(s, &end, 10);
    s = *end == ',' ? end + 1 : end;
  }
  return buf;
}

static jx_padding padding_of(const GoldenCase *c) {
  const char *p = golden_param(c, "padding");
  if (!p || !strcmp(p, "EXPLICIT")) return JX_PADDING_EXPLICIT;
  if (!strcmp(p, "VALID")) return JX_PADDING_VALID;
  if (!strcmp(p, "SAME")) return JX_PADDING_SAME;
  return JX_PADDING_SAME_LOWER;
}

/* "NCHW,OIHW,NCHW" into three strings in buf. */
static void specs_of(const GoldenCase *c, char buf[3][JX_MAX_NDIM + 1], jx_conv_options *o) {
  const char *s = golden_param(c, "specs");
  if (!s || !strcmp(s, "-")) return;
  for (int k = 0; k < 3; k++) {
    size_t n = strcspn(s, ",");
    memcpy(buf[k], s, n);
    buf[k][n] = '\0';
    s += n + (s[n] == ',');
  }
  o->lhs_spec = buf[0], o->rhs_spec = buf[1], o->out_spec = buf[2];
}

/* Runs a windowed-op case; *known is false for other functions. */
static jx_array *call_case(const GoldenCase *c, jx_array **in, bool *known) {
  int64_t st[32], pd[32], ld[32], rd[32], win[32], bd[32], wd[32];
  char sp[3][JX_MAX_NDIM + 1];
  int n = (int)golden_param_int(c, "n", 0);
  const int64_t *strides = plist(c, "strides", st), *pads = plist(c, "pads", pd);
  jx_padding pad = padding_of(c);
  *known = true;
  if (!strcmp(c->fn, "conv_general_dilated")) {
    jx_conv_options o = {.lhs_dilation = plist(c, "lhs_dil", ld),
                         .rhs_dilation = plist(c, "rhs_dil", rd),
                         .feature_group_count = golden_param_int(c, "fgc", 1),
                         .batch_group_count = golden_param_int(c, "bgc", 1)};
    specs_of(c, sp, &o);
    return jx_lax_conv_general_dilated(in[0], in[1], n, strides, pad, pads, &o);
  }
  if (!strcmp(c->fn, "conv")) return jx_lax_conv(in[0], in[1], n, strides, pad, pads);
  if (!strcmp(c->fn, "conv_transpose")) {
    jx_conv_options o = {.rhs_dilation = plist(c, "rhs_dil", rd)};
    specs_of(c, sp, &o);
    return jx_lax_conv_transpose(in[0], in[1], n, strides, pad, pads,
                                 golden_param_int(c, "tk", 0) != 0, &o);
  }
  if (!strcmp(c->fn, "reduce_window")) {
    const char *op = golden_param(c, "op");
    jx_window_op w = !strcmp(op, "sum") ? JX_WINDOW_SUM : !strcmp(op, "prod") ? JX_WINDOW_PROD
                     : !strcmp(op, "max") ? JX_WINDOW_MAX : JX_WINDOW_MIN;
    return jx_lax_reduce_window(in[0], w, plist(c, "window", win), strides, pad, pads,
                                plist(c, "base_dil", bd), plist(c, "win_dil", wd));
  }
  if (!strcmp(c->fn, "max_pool"))
    return jx_lax_max_pool(in[0], n, plist(c, "window", win), strides, pad, pads);
  if (!strcmp(c->fn, "avg_pool"))
    return jx_lax_avg_pool(in[0], n, plist(c, "window", win), strides, pad, pads,
                           golden_param_int(c, "cip", 1) != 0);
  *known = false;
  return NULL;
}

/* Sums of products in another order than XLA's: a few ulps of the result dtype. */
static void tolerance(jx_dtype d, double *rtol, double *atol) {
  *rtol = *atol = 0;
  if (d == JX_FLOAT32) *rtol = 2e-5, *atol = 2e-5;
  if (d == JX_FLOAT16) *rtol = 4e-3, *atol = 4e-3;
  if (d == JX_BFLOAT16) *rtol = 2e-2, *atol = 3e-2;
}

static void test_golden_windows(void) {
  int run = 0;
  CHECK_MSG(cases != NULL, "cannot load lax.txt (run tools/golden_lax.py)");
  for (int i = 0; i < ncases; i++) {
    const GoldenCase *c = &cases[i];
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s (line %d)", c->name, c->line);
    jx_scope_begin();
    jx_array *in[8] = {NULL};
    for (int k = 0; k < c->nin && k < 8; k++) in[k] = golden_to_array(&c->in[k]);
    bool known;
    jx_array *got = call_case(c, in, &known);
    if (known) {
      run++;
      double rtol = 0, atol = 0;
      if (!c->err) tolerance(c->out[0].dtype, &rtol, &atol);
      golden_check(ctx, c, got, rtol, atol);
    }
    jx_clear_error();
    jx_scope_end(0, NULL);
  }
  CHECK_MSG(run >= 80, "only %d windowed cases ran", run);
  printf("%d golden windowed cases\n", run);
}

/* ------------------------------------------------------- numeric gradients */

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double uniform(double lo, double hi) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (hi - lo) * (double)(rng >> 11) / 9007199254740992.0;
}

/* A float64 array of uniform values (x64 must be on). */
static jx_array *rand64(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  double *v = malloc((size_t)(n ? n : 1) * sizeof(double));
  for (int64_t i = 0; i < n; i++) v[i] = uniform(-1, 1);
  jx_array *a = jx_array_from(v, JX_FLOAT64, ndim, shape);
  free(v);
  return a;
}

/* sum(y * sin(0.7 i + 0.3)) over y's flat index i: a scalar that weights every output
 * differently. */
static jx_array *weighted_sum(jx_array *y) {
  if (!y) return NULL;
  int64_t n = jx_size(y);
  jx_array *r = jx_sin(jx_add(jx_mul(jx_arange(0, (double)n, 1, jx_dtype_of(y)),
                                     jx_scalar(0.7)), jx_scalar(0.3)));
  return jx_sum(jx_mul(y, jx_reshape(r, jx_ndim(y), jx_shape(y))), 0, NULL, false);
}


/* A conv configuration run through a jx_fn: (lhs, rhs) -> weighted_sum(conv). */
typedef struct ConvCfg {
  int n;
  int64_t strides[3];
  jx_padding padding;
  int64_t pads[6];
  jx_conv_options o;
  bool transpose, reduce; /* conv_transpose; weighted_sum of the result */
} ConvCfg;

static jx_status conv_fn(void *ctx, jx_array *const *in, jx_array **out) {
  const ConvCfg *c = ctx;
  jx_array *y = c->transpose
                    ? jx_lax_conv_transpose(in[0], in[1], c->n, c->strides, c->padding,
                                            c->pads, false, &c->o)
                    : jx_lax_conv_general_dilated(in[0], in[1], c->n, c->strides, c->padding,
                                                  c->pads, &c->o);
  out[0] = c->reduce ? weighted_sum(y) : y;
  return out[0] ? JX_OK : jx_last_status();
}

static void grad_conv(const char *what, ConvCfg cfg, int nd, const int64_t *ls,
                      const int64_t *rs) {
  jx_config_enable_x64(true);
  cfg.reduce = true;
  jx_fn *f = jx_fn_new(what, 2, 1, conv_fn, &cfg);
  jx_array *x[2] = {rand64(nd, ls), rand64(nd, rs)};
  test_check_grad(what, f, 2, 2, x, 1e-6);
  jx_free(x[0]), jx_free(x[1]);
  jx_fn_free(f);
  jx_config_enable_x64(false);
}

static void test_grad_conv(void) {
  grad_conv("conv1d_same_s2", (ConvCfg){.n = 1, .strides = {2}, .padding = JX_PADDING_SAME},
            3, (int64_t[]){2, 3, 7}, (int64_t[]){2, 3, 3});
  grad_conv("conv1d_dilated_negpad",
            (ConvCfg){.n = 1, .strides = {1}, .padding = JX_PADDING_EXPLICIT, .pads = {-1, 2},
                      .o = {.lhs_dilation = (int64_t[]){2}, .rhs_dilation = (int64_t[]){2}}},
            3, (int64_t[]){1, 2, 5}, (int64_t[]){2, 2, 3});
  grad_conv("conv2d_nhwc_groups",
            (ConvCfg){.n = 2, .strides = {2, 1}, .padding = JX_PADDING_SAME,
                      .o = {.lhs_spec = "NHWC", .rhs_spec = "HWIO", .out_spec = "NHWC",
                            .feature_group_count = 2}},
            4, (int64_t[]){1, 4, 4, 4}, (int64_t[]){2, 2, 2, 4});
  grad_conv("conv2d_batch_groups",
            (ConvCfg){.n = 2, .strides = {1, 1}, .padding = JX_PADDING_VALID,
                      .o = {.batch_group_count = 2}},
            4, (int64_t[]){2, 1, 4, 3}, (int64_t[]){2, 1, 2, 2});
  grad_conv("conv3d_valid", (ConvCfg){.n = 3, .strides = {1, 2, 1}, .padding = JX_PADDING_VALID},
            5, (int64_t[]){1, 1, 3, 4, 3}, (int64_t[]){2, 1, 2, 2, 2});
  grad_conv("conv_transpose2d",
            (ConvCfg){.n = 2, .strides = {2, 2}, .padding = JX_PADDING_SAME, .transpose = true},
            4, (int64_t[]){1, 3, 2, 2}, (int64_t[]){2, 2, 2, 3});
}

/* Pooling and reduce_window: x -> weighted_sum(pool(x)). */
typedef struct PoolCfg {
  int kind; /* 0 max_pool, 1 avg_pool, 2 avg_pool excluding padding, 3 reduce_window */
  int n;
  int64_t window[4], strides[4];
  jx_padding padding;
  int64_t pads[8];
  jx_window_op op;
  int64_t base_dil[4], win_dil[4];
} PoolCfg;

static jx_status pool_fn(void *ctx, jx_array *const *in, jx_array **out) {
  const PoolCfg *c = ctx;
  jx_array *y;
  if (c->kind == 0) y = jx_lax_max_pool(in[0], c->n, c->window, c->strides, c->padding, c->pads);
  else if (c->kind < 3)
    y = jx_lax_avg_pool(in[0], c->n, c->window, c->strides, c->padding, c->pads, c->kind == 1);
  else
    y = jx_lax_reduce_window(in[0], c->op, c->window, c->strides, c->padding, c->pads,
                             c->base_dil, c->win_dil);
  out[0] = weighted_sum(y);
  return out[0] ? JX_OK : jx_last_status();
}

static void grad_pool(const char *what, PoolCfg cfg, int nd, const int64_t *shape) {
  jx_config_enable_x64(true);
  jx_fn *f = jx_fn_new(what, 1, 1, pool_fn, &cfg);
  jx_array *x = rand64(nd, shape);
  test_check_grad(what, f, 1, 1, &x, 1e-6);
  jx_free(x);
  jx_fn_free(f);
  jx_config_enable_x64(false);
}

static void test_grad_pool(void) {
  grad_pool("max_pool2d_same", (PoolCfg){.kind = 0, .n = 2, .window = {2, 2}, .strides = {2, 2},
                                         .padding = JX_PADDING_SAME},
            4, (int64_t[]){2, 5, 5, 2});
  grad_pool("max_pool1d_overlap", (PoolCfg){.kind = 0, .n = 1, .window = {3}, .strides = {1},
                                            .padding = JX_PADDING_VALID},
            3, (int64_t[]){1, 8, 2});
  grad_pool("avg_pool2d", (PoolCfg){.kind = 1, .n = 2, .window = {3, 2}, .strides = {1, 2},
                                    .padding = JX_PADDING_SAME},
            4, (int64_t[]){1, 4, 5, 2});
  grad_pool("avg_pool2d_excl", (PoolCfg){.kind = 2, .n = 2, .window = {3, 3}, .strides = {2, 2},
                                         .padding = JX_PADDING_SAME},
            4, (int64_t[]){1, 5, 5, 1});
  grad_pool("max_pool3d", (PoolCfg){.kind = 0, .n = 3, .window = {2, 2, 2}, .strides = {1, 2, 2},
                                    .padding = JX_PADDING_VALID},
            5, (int64_t[]){1, 3, 4, 4, 1});
  grad_pool("reduce_window_min_dilated",
            (PoolCfg){.kind = 3, .op = JX_WINDOW_MIN, .window = {2, 2}, .strides = {1, 1},
                      .padding = JX_PADDING_EXPLICIT, .pads = {1, 0, 0, 1},
                      .base_dil = {2, 1}, .win_dil = {1, 2}},
            2, (int64_t[]){3, 4});
  grad_pool("reduce_window_prod",
            (PoolCfg){.kind = 3, .op = JX_WINDOW_PROD, .window = {2, 3}, .strides = {1, 2},
                      .padding = JX_PADDING_SAME, .base_dil = {1, 1}, .win_dil = {1, 1}},
            2, (int64_t[]){3, 5});
}

/* ------------------------------------------------------------ vmap, jit */

/* Largest |a - b| (NaN if shapes differ or either is NULL). */
static double max_diff(jx_array *a, jx_array *b) {
  if (!a || !b || jx_ndim(a) != jx_ndim(b) ||
      memcmp(jx_shape(a), jx_shape(b), sizeof(int64_t) * (size_t)jx_ndim(a)))
    return NAN;
  double *x = test_read_f64(a), *y = test_read_f64(b), m = 0;
  for (int64_t i = 0; i < jx_size(a); i++) m = fmax(m, fabs(x[i] - y[i]));
  free(x), free(y);
  return m;
}

/* Element b of axis `axis` of x (the axis removed). */
static jx_array *index_axis(jx_array *x, int axis, int64_t b) {
  return jx_take(x, jx_scalar_int(b), axis);
}

/* A float32 array of the shape holding sin(i) (kind 0) or cos(i) (kind 1). */
static jx_array *filled(int ndim, const int64_t *shape, int kind) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  jx_array *i = jx_reshape(jx_arange(0, (double)n, 1, JX_FLOAT32), ndim, shape);
  return kind ? jx_cos(i) : jx_sin(i);
}

/* vmap(conv) over the in_axes equals a loop of conv over the batch. */
static void vmap_conv(const char *what, ConvCfg cfg, int nd, const int64_t *ls,
                      const int64_t *rs, int lax_, int rax) {
  const int64_t B = 3;
  jx_scope_begin();
  int64_t lb[JX_MAX_NDIM + 1], rb[JX_MAX_NDIM + 1];
  for (int d = 0, k = 0; d <= nd && lax_ != NM; d++) lb[d] = d == lax_ ? B : ls[k++];
  for (int d = 0, k = 0; d <= nd && rax != NM; d++) rb[d] = d == rax ? B : rs[k++];
  jx_array *l = filled(nd + (lax_ != NM), lax_ != NM ? lb : ls, 0);
  jx_array *r = filled(nd + (rax != NM), rax != NM ? rb : rs, 1);
  jx_fn *f = jx_fn_new(what, 2, 1, conv_fn, &cfg);
  jx_fn *v = jx_vmap(f, (int[]){lax_, rax}, (int[]){0});
  jx_array *y = NULL;
  CHECK_MSG(jx_call(v, (jx_array *[]){l, r}, &y) == JX_OK, "%s: vmap: %s", what, jx_last_error());
  jx_array *parts[3];
  for (int64_t b = 0; b < B; b++) {
    jx_array *lb_ = lax_ == NM ? l : index_axis(l, lax_, b);
    jx_array *rb_ = rax == NM ? r : index_axis(r, rax, b);
    CHECK(jx_call(f, (jx_array *[]){lb_, rb_}, &parts[b]) == JX_OK);
  }
  jx_array *loop = jx_stack(3, parts, 0);
  double d = max_diff(y, loop);
  CHECK_MSG(d <= 1e-4, "%s: vmap differs from the loop by %g", what, d);
  jx_fn_free(v), jx_fn_free(f);
  jx_clear_error();
  jx_scope_end(0, NULL);
}

static void test_vmap_conv(void) {
  ConvCfg c2 = {.n = 2, .strides = {2, 1}, .padding = JX_PADDING_SAME};
  int64_t ls[4] = {2, 3, 5, 4}, rs[4] = {4, 3, 3, 2};
  vmap_conv("lhs axis 0", c2, 4, ls, rs, 0, NM);
  vmap_conv("rhs axis 0", c2, 4, ls, rs, NM, 0);
  vmap_conv("both, lhs axis 2, rhs axis 4", c2, 4, ls, rs, 2, 4);
  ConvCfg g = {.n = 1, .strides = {1}, .padding = JX_PADDING_VALID,
               .o = {.feature_group_count = 2, .lhs_dilation = (int64_t[]){2}}};
  g.padding = JX_PADDING_EXPLICIT;
  g.pads[0] = 1, g.pads[1] = 1;
  vmap_conv("grouped, dilated, both axis 1", g, 3, (int64_t[]){2, 4, 5}, (int64_t[]){4, 2, 2},
            1, 1);
  ConvCfg t = {.n = 2, .strides = {2, 2}, .padding = JX_PADDING_VALID, .transpose = true};
  vmap_conv("conv_transpose lhs axis 3", t, 4, (int64_t[]){1, 3, 3, 2}, (int64_t[]){2, 2, 2, 3},
            3, NM);
}

static jx_status pool_raw_fn(void *ctx, jx_array *const *in, jx_array **out) {
  const PoolCfg *c = ctx;
  out[0] = c->kind == 0 ? jx_lax_max_pool(in[0], c->n, c->window, c->strides, c->padding, c->pads)
           : jx_lax_avg_pool(in[0], c->n, c->window, c->strides, c->padding, c->pads, c->kind == 1);
  return out[0] ? JX_OK : jx_last_status();
}

/* jit(f) equals f, on two calls (the second hits the cache). */
static void jit_equals_eager(const char *what, jx_fn *f, int nin, jx_array *const *x,
                             double tol) {
  jx_fn *j = jx_jit(f);
  jx_array *a = NULL, *b = NULL, *c = NULL;
  CHECK_MSG(jx_call(f, x, &a) == JX_OK, "%s: eager: %s", what, jx_last_error());
  CHECK_MSG(jx_call(j, x, &b) == JX_OK, "%s: jit: %s", what, jx_last_error());
  CHECK_MSG(jx_call(j, x, &c) == JX_OK, "%s: jit again: %s", what, jx_last_error());
  double d = fmax(max_diff(a, b), max_diff(a, c));
  CHECK_MSG(d <= tol, "%s: jit differs from eager by %g", what, d);
  jx_free(a), jx_free(b), jx_free(c);
  jx_fn_free(j);
}

static void test_jit_windows(void) {
  jx_scope_begin();
  ConvCfg cfg = {.n = 2, .strides = {2, 1}, .padding = JX_PADDING_SAME,
                 .o = {.rhs_dilation = (int64_t[]){1, 2}, .feature_group_count = 1}};
  jx_array *l = jx_sin(jx_reshape(jx_arange(0, 120, 1, JX_FLOAT32), 4, (int64_t[]){2, 3, 5, 4}));
  jx_array *r = jx_cos(jx_reshape(jx_arange(0, 72, 1, JX_FLOAT32), 4, (int64_t[]){4, 3, 3, 2}));
  jx_fn *f = jx_fn_new("conv", 2, 1, conv_fn, &cfg);
  jit_equals_eager("conv2d", f, 2, (jx_array *[]){l, r}, 1e-5);
  /* jit of grad of conv */
  cfg.reduce = true;
  jx_fn *g = jx_grad(f, 2, (int[]){0, 1});
  jx_fn *jg = jx_jit(g);
  jx_array *ga[2], *gb[2];
  CHECK(jx_call(g, (jx_array *[]){l, r}, ga) == JX_OK);
  CHECK(jx_call(jg, (jx_array *[]){l, r}, gb) == JX_OK);
  CHECK_MSG(max_diff(ga[0], gb[0]) <= 1e-4 && max_diff(ga[1], gb[1]) <= 1e-4,
            "jit(grad(conv)) differs from grad(conv)");
  jx_fn_free(jg), jx_fn_free(g), jx_fn_free(f);
  PoolCfg p = {.kind = 0, .n = 2, .window = {3, 3}, .strides = {2, 2},
               .padding = JX_PADDING_SAME};
  jx_array *x = jx_sin(jx_reshape(jx_arange(0, 100, 1, JX_FLOAT32), 4, (int64_t[]){1, 5, 5, 4}));
  jx_fn *pf = jx_fn_new("max_pool", 1, 1, pool_raw_fn, &p);
  jit_equals_eager("max_pool", pf, 1, &x, 0);
  jx_fn_free(pf);
  p.kind = 2;
  pf = jx_fn_new("avg_pool", 1, 1, pool_raw_fn, &p);
  jit_equals_eager("avg_pool excluding padding", pf, 1, &x, 1e-6);
  jx_fn_free(pf);
  jx_scope_end(0, NULL);
}

/* ------------------------------------------------------------ bad inputs */

static void test_errors(void) {
  jx_scope_begin();
  jx_array *x = jx_ones(4, (int64_t[]){1, 3, 5, 5}, JX_FLOAT32);
  jx_array *w = jx_ones(4, (int64_t[]){2, 3, 3, 3}, JX_FLOAT32);
  jx_array *w16 = jx_ones(4, (int64_t[]){2, 3, 3, 3}, JX_FLOAT16);
  jx_array *w3 = jx_ones(3, (int64_t[]){2, 3, 3}, JX_FLOAT32);
  CHECK(jx_lax_conv(NULL, w, 2, NULL, JX_PADDING_VALID, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_conv: lhs is NULL");
  CHECK(jx_lax_conv_general_dilated(x, NULL, 2, NULL, JX_PADDING_VALID, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_conv_general_dilated: rhs is NULL");
  CHECK(jx_lax_conv(x, w3, 2, NULL, JX_PADDING_VALID, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "lhs float32[1,3,5,5] and rhs float32[2,3,3] must both have rank");
  CHECK(jx_lax_conv(x, w, 1, NULL, JX_PADDING_VALID, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "rank nspatial + 2 = 3");
  CHECK(jx_lax_conv(x, w16, 2, NULL, JX_PADDING_VALID, NULL) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "must have the same dtype");
  CHECK(jx_lax_conv(x, w, 2, (int64_t[]){1, 0}, JX_PADDING_VALID, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "strides and dilations must be >= 1");
  CHECK(jx_lax_conv(x, w, 2, NULL, JX_PADDING_EXPLICIT, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "pads (with JX_PADDING_EXPLICIT) is NULL");
  CHECK(jx_lax_conv(x, w, 2, NULL, (jx_padding)9, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "unknown padding mode 9");
  CHECK(jx_lax_conv(x, w, -1, NULL, JX_PADDING_VALID, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "nspatial -1");
  jx_conv_options o = {.lhs_spec = "NCHW", .rhs_spec = "OIHW"};
  CHECK(jx_lax_conv_general_dilated(x, w, 2, NULL, JX_PADDING_VALID, NULL, &o) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "all three specs or none, out_spec is NULL");
  o.out_spec = "NCH";
  CHECK(jx_lax_conv_general_dilated(x, w, 2, NULL, JX_PADDING_VALID, NULL, &o) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "out_spec \"NCH\" has 3 letters but the operands have rank 4");
  o.out_spec = "NCHH";
  CHECK(jx_lax_conv_general_dilated(x, w, 2, NULL, JX_PADDING_VALID, NULL, &o) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "out_spec \"NCHH\" repeats 'H'");
  o.out_spec = "NXHW";
  CHECK(jx_lax_conv_general_dilated(x, w, 2, NULL, JX_PADDING_VALID, NULL, &o) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "must contain 'N' and 'C' exactly once");
  o.out_spec = "NCHX";
  CHECK(jx_lax_conv_general_dilated(x, w, 2, NULL, JX_PADDING_VALID, NULL, &o) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "must each have the same spatial letters");
  o = (jx_conv_options){.feature_group_count = 2};
  CHECK(jx_lax_conv_general_dilated(x, w, 2, NULL, JX_PADDING_VALID, NULL, &o) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "feature_group_count must divide the lhs feature dimension");
  o = (jx_conv_options){.feature_group_count = -1};
  CHECK(jx_lax_conv_general_dilated(x, w, 2, NULL, JX_PADDING_VALID, NULL, &o) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "must be >= 1");
  o = (jx_conv_options){.lhs_dilation = (int64_t[]){2, 1}};
  CHECK(jx_lax_conv_general_dilated(x, w, 2, NULL, JX_PADDING_SAME, NULL, &o) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "SAME/VALID padding is not defined with lhs dilation");
  CHECK(jx_lax_conv_transpose(x, w, 2, NULL, JX_PADDING_SAME, NULL, false, &o) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "not options of conv_transpose");
  CHECK(jx_lax_conv_transpose(x, w, 4, NULL, JX_PADDING_SAME, NULL, false, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "no default dimension numbers for 4 spatial dims");
  CHECK(jx_lax_conv_transpose(x, w, 2, NULL, JX_PADDING_SAME_LOWER, NULL, false, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "padding must be SAME, VALID or explicit");

  CHECK(jx_lax_reduce_window(NULL, JX_WINDOW_MAX, NULL, NULL, JX_PADDING_VALID, NULL, NULL,
                             NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_reduce_window: x is NULL");
  CHECK(jx_lax_reduce_window(x, JX_WINDOW_MAX, NULL, NULL, JX_PADDING_VALID, NULL, NULL,
                             NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "window_dimensions is NULL");
  CHECK(jx_lax_reduce_window(x, (jx_window_op)7, (int64_t[]){1, 1, 2, 2}, NULL,
                             JX_PADDING_VALID, NULL, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "unknown window op 7");
  CHECK(jx_lax_reduce_window(x, JX_WINDOW_SUM, (int64_t[]){1, 1, -2, 2}, NULL,
                             JX_PADDING_VALID, NULL, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "window dimension -2 in dim 2 must be >= 1");
  /* zero-size windows (issue 12: they returned arrays larger than x, filled with -inf) */
  CHECK(jx_lax_reduce_window(x, JX_WINDOW_MAX, (int64_t[]){1, 1, 0, 2}, NULL,
                             JX_PADDING_VALID, NULL, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_reduce_window: window dimension 0 in dim 2 must be >= 1");
  CHECK(jx_lax_max_pool(x, 2, (int64_t[]){0, 2}, NULL, JX_PADDING_VALID, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_max_pool: window dimension 0 in dim 0 must be >= 1");
  CHECK(jx_lax_avg_pool(x, 2, (int64_t[]){2, 0}, NULL, JX_PADDING_SAME, NULL, true) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_avg_pool: window dimension 0 in dim 1 must be >= 1");
  CHECK(jx_lax_avg_pool(x, 2, (int64_t[]){-1, 1}, NULL, JX_PADDING_VALID, NULL, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_avg_pool: window dimension -1 in dim 0 must be >= 1");
  jx_array *b = jx_ones(1, (int64_t[]){4}, JX_BOOL);
  CHECK(jx_lax_reduce_window(b, JX_WINDOW_SUM, (int64_t[]){2}, NULL, JX_PADDING_VALID, NULL,
                             NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "sum and prod windows need a numeric operand, got bool[4]");
  jx_array *bm = jx_lax_reduce_window(b, JX_WINDOW_MAX, (int64_t[]){2}, NULL, JX_PADDING_VALID,
                                      NULL, NULL, NULL);
  CHECK(bm && jx_dtype_of(bm) == JX_BOOL && jx_shape(bm)[0] == 3);
  CHECK(jx_lax_max_pool(x, 4, (int64_t[]){2, 2, 2, 2}, NULL, JX_PADDING_VALID, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "needs rank >= nspatial + 1 = 5");
  CHECK(jx_lax_avg_pool(x, 2, NULL, NULL, JX_PADDING_VALID, NULL, true) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "window_shape is NULL");
  jx_scope_end(0, NULL);
}

/* A zero-initialized options struct equals NULL options (JAX's defaults), and an
 * empty window (zero-size kernel) gives zeros / the identity. */
static void test_defaults_and_empty(void) {
  jx_scope_begin();
  jx_array *x = jx_sin(jx_reshape(jx_arange(0, 40, 1, JX_FLOAT32), 3, (int64_t[]){2, 4, 5}));
  jx_array *w = jx_cos(jx_reshape(jx_arange(0, 24, 1, JX_FLOAT32), 3, (int64_t[]){3, 4, 2}));
  jx_conv_options zero = {0};
  jx_array *a = jx_lax_conv_general_dilated(x, w, 1, NULL, JX_PADDING_SAME, NULL, NULL);
  jx_array *b = jx_lax_conv_general_dilated(x, w, 1, NULL, JX_PADDING_SAME, NULL, &zero);
  CHECK(max_diff(a, b) == 0);
  jx_array *w0 = jx_ones(3, (int64_t[]){3, 4, 0}, JX_FLOAT32);
  jx_array *z = jx_lax_conv(x, w0, 1, NULL, JX_PADDING_VALID, NULL);
  CHECK(z && jx_shape(z)[2] == 6 && jx_item(jx_sum(jx_abs(z), 0, NULL, false)) == 0);
  jx_array *m = jx_lax_reduce_window(x, JX_WINDOW_MAX, (int64_t[]){1, 0, 1}, NULL,
                                     JX_PADDING_VALID, NULL, NULL, NULL);
  /* JAX: "window_dimensions must have every element be strictly positive" (TypeError) */
  CHECK(m == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "window dimension 0 in dim 1 must be >= 1");
  /* SAME padding of an empty spatial dim pads window - stride at most: empty results
   * (JAX 0.10.2: conv of (1, 1, 0) by (1, 1, 3) -> (1, 1, 0); reduce_window sum of (0, 4)
   * by (3, 1) -> (0, 4); max_pool of (1, 0, 4, 1) by (2, 2) -> (1, 0, 4, 1)) */
  jx_array *e = jx_lax_conv_general_dilated(jx_zeros(3, (int64_t[]){1, 1, 0}, JX_FLOAT32),
                                            jx_ones(3, (int64_t[]){1, 1, 3}, JX_FLOAT32), 1, NULL, JX_PADDING_SAME,
                                            NULL, NULL);
  CHECK(e && jx_ndim(e) == 3 && jx_shape(e)[2] == 0);
  jx_array *rw = jx_lax_reduce_window(jx_zeros(2, (int64_t[]){0, 4}, JX_FLOAT32), JX_WINDOW_SUM, (int64_t[]){3, 1},
                                      NULL, JX_PADDING_SAME, NULL, NULL, NULL);
  CHECK(rw && jx_shape(rw)[0] == 0 && jx_shape(rw)[1] == 4);
  jx_array *mp = jx_lax_max_pool(jx_zeros(4, (int64_t[]){1, 0, 4, 1}, JX_FLOAT32), 2, (int64_t[]){2, 2}, NULL,
                                 JX_PADDING_SAME, NULL);
  CHECK(mp && jx_shape(mp)[1] == 0 && jx_shape(mp)[2] == 4);
  jx_scope_end(0, NULL);
}

int main(void) {
  cases = golden_load("lax.txt", &ncases);
  TEST_RUN(test_golden_windows);
  TEST_RUN(test_grad_conv);
  TEST_RUN(test_grad_pool);
  TEST_RUN(test_vmap_conv);
  TEST_RUN(test_jit_windows);
  TEST_RUN(test_errors);
  TEST_RUN(test_defaults_and_empty);
  golden_free(cases, ncases);
  return test_finish();
}
