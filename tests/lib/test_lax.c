/* test_lax.c -- the non-windowed lax functions (src/lib/lax.c): dot_general, einsum,
 * cumsum/cumprod/cummax/cummin (and jnp's cumsum/cumprod), dynamic_slice,
 * dynamic_update_slice, select_n, round and take_along_axis against JAX goldens
 * (tests/golden/lax.txt, tools/golden_lax.py); gradients by central differences in
 * float64; vmap against a loop; jit against eager; the scans' O(n log n) size; bad
 * inputs with their messages. The windowed ops are in test_conv.c. */
#include <stdlib.h>

#include "golden.h"
#include "test.h"

#define NM JX_NOT_MAPPED

static GoldenCase *cases;
static int ncases;

/* ------------------------------------------------------------ golden params */

/* Param `key` as an int list ("1,-2"); count, or -1 for "-" or absent. */
static int ilist(const GoldenCase *c, const char *key, int *buf) {
  const char *s = golden_param(c, key);
  if (!s || !strcmp(s, "-")) return s ? 0 : -1;
  int n = 0;
  while (*s && n < JX_MAX_NDIM) {
    char *end;
    buf[n++] = (int)strtol(s, &end, 10);
    s = *end == ',' ? end + 1 : end;
  }
  return n;
}

static int axis_param(const GoldenCase *c) {
  const char *s = golden_param(c, "axis");
  return s && !strcmp(s, "none") ? JX_AXIS_NONE : (int)golden_param_int(c, "axis", 0);
}

/* Runs a case of lax.c's functions; *known is false for other functions. */
/* reduce_precision(in[0], ctx[0], ctx[1]) as a jx_fn (for its jvp / vjp cases). */
static jx_status rp_call(void *ctx, jx_array *const *in, jx_array **out) {
  const int *em = ctx;
  out[0] = jx_lax_reduce_precision(in[0], em[0], em[1]);
  return out[0] ? JX_OK : jx_last_status();
}

static jx_array *call_case(const GoldenCase *c, jx_array **in, bool *known) {
  const char *f = c->fn;
  int axis = axis_param(c);
  bool rev = golden_param_int(c, "reverse", 0) != 0;
  *known = true;
  if (!strcmp(f, "cumsum")) return jx_lax_cumsum(in[0], axis, rev);
  if (!strcmp(f, "cumprod")) return jx_lax_cumprod(in[0], axis, rev);
  if (!strcmp(f, "cummax")) return jx_lax_cummax(in[0], axis, rev);
  if (!strcmp(f, "cummin")) return jx_lax_cummin(in[0], axis, rev);
  if (!strcmp(f, "np_cumsum")) return jx_cumsum(in[0], axis);
  if (!strcmp(f, "np_cumprod")) return jx_cumprod(in[0], axis);
  if (!strcmp(f, "dynamic_slice")) {
    int sz[JX_MAX_NDIM];
    int n = ilist(c, "sizes", sz);
    int64_t sizes[JX_MAX_NDIM];
    for (int d = 0; d < n; d++) sizes[d] = sz[d];
    return jx_lax_dynamic_slice(in[0], in + 1, sizes);
  }
  if (!strcmp(f, "dynamic_update_slice")) return jx_lax_dynamic_update_slice(in[0], in[1], in + 2);
  if (!strcmp(f, "einsum")) {
    char subs[128];
    snprintf(subs, sizeof subs, "%s", golden_param(c, "subs"));
    for (char *p = subs; *p; p++)
      if (*p == '_') *p = ' ';
    return jx_einsum(subs, c->nin, in);
  }
  if (!strcmp(f, "dot_general")) {
    int lc[16], rc[16], lb[16], rb[16];
    int nc = ilist(c, "lc", lc), nb = ilist(c, "lb", lb);
    ilist(c, "rc", rc), ilist(c, "rb", rb);
    return jx_lax_dot_general(in[0], in[1], nc, lc, rc, nb, lb, rb);
  }
  if (!strcmp(f, "select_n")) return jx_lax_select_n(in[0], c->nin - 1, in + 1);
  if (!strcmp(f, "round"))
    return jx_lax_round(in[0], (jx_rounding_method)golden_param_int(c, "method", 0));
  if (!strcmp(f, "take_along_axis")) {
    const char *m = golden_param(c, "mode");
    return jx_take_along_axis(in[0], in[1], axis,
                              !strcmp(m, "clip") ? JX_INDEX_CLIP : JX_INDEX_FILL);
  }
  if (!strncmp(f, "reduce_precision", 16)) {
    int e = (int)golden_param_int(c, "e", 8), m = (int)golden_param_int(c, "m", 7);
    if (!strcmp(f, "reduce_precision")) return jx_lax_reduce_precision(in[0], e, m);
    int em[2] = {e, m};
    jx_fn *fr = jx_fn_new("rp", 1, 1, rp_call, em);
    jx_array *po = NULL, *to = NULL;
    if (!strcmp(f, "reduce_precision_jvp")) {
      if (jx_jvp(fr, in, in + 1, &po, &to) != JX_OK) to = NULL;
    } else {
      jx_fn *b = jx_vjp(fr, in, &po);
      if (!b || jx_call(b, in + 1, &to) != JX_OK) to = NULL;
      jx_fn_free(b);
    }
    jx_fn_free(fr);
    return to;
  }
  if (!strcmp(f, "erf")) return jx_lax_erf(in[0]);
  if (!strcmp(f, "erfc")) return jx_lax_erfc(in[0]);
  if (!strcmp(f, "erf_inv")) return jx_lax_erf_inv(in[0]);
  *known = false;
  return NULL;
}

/* Sums and products in another order than XLA's: a few ulps of the result dtype;
 * everything else is exact (the cumulative sums and products too: XLA's order). */
static void tolerance(const GoldenCase *c, jx_dtype d, double *rtol, double *atol) {
  bool sums = !strcmp(c->fn, "einsum") || !strcmp(c->fn, "dot_general");
  *rtol = *atol = 0;
  if (!strncmp(c->fn, "erf", 3)) { /* libm/libmvec vs XLA's polynomials: a few ulps */
    if (d == JX_FLOAT32) *rtol = 1e-6, *atol = 1e-7;
    if (d == JX_FLOAT16) *rtol = *atol = 1e-3;
    if (d == JX_BFLOAT16) *rtol = *atol = 8e-3;
    return;
  }
  if (!sums) return;
  if (d == JX_FLOAT32) *rtol = 1e-5, *atol = 2e-5;
  if (d == JX_FLOAT16) *rtol = 4e-3, *atol = 4e-3;
  if (d == JX_BFLOAT16) *rtol = 2e-2, *atol = 3e-2;
}

static void test_golden_lax(void) {
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
      if (!c->err) tolerance(c, c->out[0].dtype, &rtol, &atol);
      golden_check(ctx, c, got, rtol, atol);
    }
    jx_clear_error();
    jx_scope_end(0, NULL);
  }
  CHECK_MSG(run >= 170, "only %d lax cases ran", run);
  printf("%d golden lax cases\n", run);
}

/* ------------------------------------------------------- numeric gradients */

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform(double lo, double hi) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (hi - lo) * (double)(rng >> 11) / 9007199254740992.0;
}

/* A float64 array of uniform values in [lo, hi) (x64 must be on). */
static jx_array *rand64(int ndim, const int64_t *shape, double lo, double hi) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  double *v = malloc((size_t)(n ? n : 1) * sizeof(double));
  for (int64_t i = 0; i < n; i++) v[i] = uniform(lo, hi);
  jx_array *a = jx_array_from(v, JX_FLOAT64, ndim, shape);
  free(v);
  return a;
}

/* sum(y * sin(0.7 i + 0.3)) over y's flat index i. */
static jx_array *weighted_sum(jx_array *y) {
  if (!y) return NULL;
  int64_t n = jx_size(y);
  jx_array *r = jx_sin(jx_add(jx_mul(jx_arange(0, (double)n, 1, jx_dtype_of(y)),
                                     jx_scalar(0.7)), jx_scalar(0.3)));
  return jx_sum(jx_mul(y, jx_reshape(r, jx_ndim(y), jx_shape(y))), 0, NULL, false);
}


typedef enum Op { OP_CUMSUM, OP_CUMPROD, OP_CUMMAX, OP_CUMMIN, OP_DSLICE, OP_DUPDATE,
                  OP_EINSUM, OP_DOT, OP_TAKE, OP_SELECT, OP_NP_CUMSUM } Op;

/* One function under test: inputs are the float operands then the int indices. */
typedef struct Cfg {
  Op op;
  int axis;
  bool reverse;
  const char *subs;     /* einsum */
  int nops;             /* einsum operands / select_n cases */
  int64_t sizes[4];     /* dynamic_slice */
  jx_index_mode mode;   /* take_along_axis */
  bool reduce;          /* weighted_sum of the result */
} Cfg;

static jx_status cfg_fn(void *ctx, jx_array *const *in, jx_array **out) {
  const Cfg *c = ctx;
  jx_array *y = NULL;
  switch (c->op) {
  case OP_CUMSUM: y = jx_lax_cumsum(in[0], c->axis, c->reverse); break;
  case OP_CUMPROD: y = jx_lax_cumprod(in[0], c->axis, c->reverse); break;
  case OP_CUMMAX: y = jx_lax_cummax(in[0], c->axis, c->reverse); break;
  case OP_CUMMIN: y = jx_lax_cummin(in[0], c->axis, c->reverse); break;
  case OP_NP_CUMSUM: y = jx_cumsum(in[0], c->axis); break;
  case OP_DSLICE: y = jx_lax_dynamic_slice(in[0], in + 1, c->sizes); break;
  case OP_DUPDATE: y = jx_lax_dynamic_update_slice(in[0], in[1], in + 2); break;
  case OP_EINSUM: y = jx_einsum(c->subs, c->nops, in); break;
  case OP_DOT: y = jx_lax_dot_general(in[0], in[1], 1, (int[]){-1}, (int[]){1}, 1,
                                      (int[]){0}, (int[]){0}); break;
  case OP_TAKE: y = jx_take_along_axis(in[0], in[1], c->axis, c->mode); break;
  case OP_SELECT: y = jx_lax_select_n(in[c->nops], c->nops, in); break;
  }
  out[0] = c->reduce ? weighted_sum(y) : y;
  return out[0] ? JX_OK : jx_last_status();
}

/* grad of weighted_sum(op(x...)) at float64 inputs of the given shapes (values in
 * [lo, hi)), the extra int inputs `idx` passed through. */
static void grad_case(const char *what, Cfg c, int nd, const int *ndims,
                      const int64_t (*shapes)[4], double lo, double hi, int nidx,
                      jx_array *const *idx) {
  jx_config_enable_x64(true);
  c.reduce = true;
  jx_fn *f = jx_fn_new(what, nd + nidx, 1, cfg_fn, &c);
  jx_array *x[8];
  for (int i = 0; i < nd; i++) x[i] = rand64(ndims[i], shapes[i], lo, hi);
  for (int i = 0; i < nidx; i++) x[nd + i] = idx[i];
  test_check_grad(what, f, nd, nd + nidx, x, 1e-6);
  for (int i = 0; i < nd; i++) jx_free(x[i]);
  jx_fn_free(f);
  jx_config_enable_x64(false);
}

static void test_grad_scans(void) {
  const int64_t s[1][4] = {{3, 9}};
  const int nd[1] = {2};
  grad_case("cumsum", (Cfg){.op = OP_CUMSUM, .axis = 1}, 1, nd, s, -1, 1, 0, NULL);
  grad_case("cumsum reverse", (Cfg){.op = OP_CUMSUM, .axis = 0, .reverse = true}, 1, nd, s,
            -1, 1, 0, NULL);
  grad_case("cumprod", (Cfg){.op = OP_CUMPROD, .axis = -1}, 1, nd, s, 0.5, 1.5, 0, NULL);
  grad_case("cumprod reverse with negatives", (Cfg){.op = OP_CUMPROD, .axis = 1, .reverse = true},
            1, nd, s, -1.5, 1.5, 0, NULL);
  grad_case("cummax", (Cfg){.op = OP_CUMMAX, .axis = 1}, 1, nd, s, -1, 1, 0, NULL);
  grad_case("cummin reverse", (Cfg){.op = OP_CUMMIN, .axis = 1, .reverse = true}, 1, nd, s,
            -1, 1, 0, NULL);
  grad_case("jnp.cumsum flat", (Cfg){.op = OP_NP_CUMSUM, .axis = JX_AXIS_NONE}, 1, nd, s, -1,
            1, 0, NULL);
}

static void test_grad_indexing(void) {
  jx_scope_begin();
  const int64_t s2[2][4] = {{5, 6}, {2, 3}};
  const int nd2[2] = {2, 2};
  jx_array *starts[2] = {jx_scalar_of(-1, JX_INT32), jx_scalar_of(2, JX_INT32)};
  grad_case("dynamic_slice", (Cfg){.op = OP_DSLICE, .sizes = {2, 3}}, 1, nd2, s2, -1, 1, 2,
            starts);
  grad_case("dynamic_update_slice", (Cfg){.op = OP_DUPDATE}, 2, nd2, s2, -1, 1, 2, starts);
  jx_array *far[2] = {jx_scalar_of(7, JX_INT32), jx_scalar_of(-9, JX_INT32)};
  grad_case("dynamic_update_slice clamped", (Cfg){.op = OP_DUPDATE}, 2, nd2, s2, -1, 1, 2, far);
  const int64_t st[1][4] = {{3, 4}};
  const int ndt[1] = {2};
  jx_array *idx = jx_array_from((int32_t[]){0, 3, -1, 4, -5, 2, 1, 1, 1, 1, -4, 0}, JX_INT32, 2,
                                (int64_t[]){3, 4});
  grad_case("take_along_axis clip", (Cfg){.op = OP_TAKE, .axis = 1, .mode = JX_INDEX_CLIP}, 1,
            ndt, st, -1, 1, 1, &idx);
  jx_array *in_range = jx_array_from((int32_t[]){0, 3, -1, 2, -4, 2, 1, 1, 1, 1, -3, 0},
                                     JX_INT32, 2, (int64_t[]){3, 4});
  grad_case("take_along_axis fill", (Cfg){.op = OP_TAKE, .axis = 1, .mode = JX_INDEX_FILL}, 1,
            ndt, st, -1, 1, 1, &in_range);
  jx_array *which = jx_array_from((int32_t[]){0, 1, 2, 2, 1, 0}, JX_INT32, 2, (int64_t[]){2, 3});
  const int64_t sc[3][4] = {{2, 3}, {2, 3}, {2, 3}};
  const int ndc[3] = {2, 2, 2};
  grad_case("select_n", (Cfg){.op = OP_SELECT, .nops = 3}, 3, ndc, sc, -1, 1, 1, &which);
  jx_scope_end(0, NULL);
}

static void test_grad_products(void) {
  const int64_t e[3][4] = {{2, 3, 4}, {2, 4, 3}, {3, 3}};
  const int nde[3] = {3, 3, 2};
  grad_case("einsum bij,bjk,kk->bi", (Cfg){.op = OP_EINSUM, .subs = "bij,bjk,kk->bi", .nops = 3},
            3, nde, e, -1, 1, 0, NULL);
  const int64_t d[2][4] = {{2, 3, 4}, {2, 4, 5}};
  const int ndd[2] = {3, 3};
  grad_case("dot_general", (Cfg){.op = OP_DOT}, 2, ndd, d, -1, 1, 0, NULL);
}

/* ------------------------------------------------------------ vmap, jit */

static double max_diff(jx_array *a, jx_array *b) {
  if (!a || !b || jx_ndim(a) != jx_ndim(b) ||
      memcmp(jx_shape(a), jx_shape(b), sizeof(int64_t) * (size_t)jx_ndim(a)))
    return NAN;
  double *x = test_read_f64(a), *y = test_read_f64(b), m = 0;
  for (int64_t i = 0; i < jx_size(a); i++) m = fmax(m, fabs(x[i] - y[i]));
  free(x), free(y);
  return m;
}

/* vmap(f) over axis 0 of every input equals a loop over the batch (B = 3). */
static void vmap_equals_loop(const char *what, Cfg c, int nin, jx_array *const *x) {
  jx_scope_begin();
  jx_fn *f = jx_fn_new(what, nin, 1, cfg_fn, &c);
  jx_fn *v = jx_vmap(f, NULL, NULL);
  jx_array *y = NULL, *parts[3];
  CHECK_MSG(jx_call(v, x, &y) == JX_OK, "%s: vmap: %s", what, jx_last_error());
  for (int64_t b = 0; b < 3; b++) {
    jx_array *xb[8];
    for (int i = 0; i < nin; i++) xb[i] = jx_take(x[i], jx_scalar_int(b), 0);
    CHECK(jx_call(f, xb, &parts[b]) == JX_OK);
  }
  double d = max_diff(y, jx_stack(3, parts, 0));
  CHECK_MSG(d <= 1e-5, "%s: vmap differs from the loop by %g", what, d);
  jx_fn_free(v), jx_fn_free(f);
  jx_clear_error();
  jx_scope_end(0, NULL);
}

static jx_array *ramp(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  return jx_sin(jx_reshape(jx_arange(0, (double)n, 1, JX_FLOAT32), ndim, shape));
}

static void test_vmap(void) {
  jx_scope_begin();
  jx_array *x = ramp(3, (int64_t[]){3, 4, 9});
  vmap_equals_loop("cumsum", (Cfg){.op = OP_CUMSUM, .axis = 1}, 1, &x);
  vmap_equals_loop("cummax reverse", (Cfg){.op = OP_CUMMAX, .axis = -1, .reverse = true}, 1, &x);
  /* batched start indices: each batch element slices somewhere else */
  jx_array *s0 = jx_array_from((int32_t[]){0, 2, -1}, JX_INT32, 1, (int64_t[]){3});
  jx_array *s1 = jx_array_from((int32_t[]){5, -3, 1}, JX_INT32, 1, (int64_t[]){3});
  vmap_equals_loop("dynamic_slice", (Cfg){.op = OP_DSLICE, .sizes = {2, 4}}, 3,
                   (jx_array *[]){x, s0, s1});
  jx_array *u = ramp(3, (int64_t[]){3, 2, 3});
  vmap_equals_loop("dynamic_update_slice", (Cfg){.op = OP_DUPDATE}, 4,
                   (jx_array *[]){x, u, s0, s1});
  jx_array *a = ramp(4, (int64_t[]){3, 2, 3, 4}), *b = ramp(4, (int64_t[]){3, 2, 4, 5});
  vmap_equals_loop("einsum", (Cfg){.op = OP_EINSUM, .subs = "bij,bjk->ik", .nops = 2}, 2,
                   (jx_array *[]){a, b});
  jx_array *i = jx_array_from((int32_t[]){0, 8, -1, 9, 3, 3, 1, 2, 0, -20, 7, 4}, JX_INT32, 3,
                              (int64_t[]){3, 4, 1});
  vmap_equals_loop("take_along_axis", (Cfg){.op = OP_TAKE, .axis = 1, .mode = JX_INDEX_FILL}, 2,
                   (jx_array *[]){x, i});
  jx_scope_end(0, NULL);
}

static void jit_equals_eager(const char *what, Cfg c, int nin, jx_array *const *x) {
  jx_fn *f = jx_fn_new(what, nin, 1, cfg_fn, &c);
  jx_fn *j = jx_jit(f);
  jx_array *a = NULL, *b = NULL, *e = NULL;
  CHECK_MSG(jx_call(f, x, &a) == JX_OK, "%s: eager: %s", what, jx_last_error());
  CHECK_MSG(jx_call(j, x, &b) == JX_OK, "%s: jit: %s", what, jx_last_error());
  CHECK_MSG(jx_call(j, x, &e) == JX_OK, "%s: jit again: %s", what, jx_last_error());
  double d = fmax(max_diff(a, b), max_diff(a, e));
  CHECK_MSG(d <= 1e-5, "%s: jit differs from eager by %g", what, d);
  jx_free(a), jx_free(b), jx_free(e);
  jx_fn_free(j), jx_fn_free(f);
}

static void test_jit(void) {
  jx_scope_begin();
  jx_array *x = ramp(2, (int64_t[]){4, 37});
  jit_equals_eager("cumsum", (Cfg){.op = OP_CUMSUM, .axis = 1}, 1, &x);
  jit_equals_eager("cumprod reverse", (Cfg){.op = OP_CUMPROD, .axis = 1, .reverse = true}, 1, &x);
  jit_equals_eager("cummin", (Cfg){.op = OP_CUMMIN, .axis = 0}, 1, &x);
  /* traced start indices */
  jx_array *s[2] = {jx_scalar_of(3, JX_INT32), jx_scalar_of(-5, JX_INT32)};
  jit_equals_eager("dynamic_slice", (Cfg){.op = OP_DSLICE, .sizes = {2, 7}}, 3,
                   (jx_array *[]){x, s[0], s[1]});
  jx_array *u = ramp(2, (int64_t[]){2, 5});
  jit_equals_eager("dynamic_update_slice", (Cfg){.op = OP_DUPDATE}, 4,
                   (jx_array *[]){x, u, s[0], s[1]});
  jx_array *a = ramp(3, (int64_t[]){2, 3, 4}), *b = ramp(2, (int64_t[]){4, 4});
  jit_equals_eager("einsum", (Cfg){.op = OP_EINSUM, .subs = "bij,jj->bi", .nops = 2}, 2,
                   (jx_array *[]){a, b});
  jx_array *i = jx_array_from((int32_t[]){0, 36, -1, 40}, JX_INT32, 2, (int64_t[]){4, 1});
  jit_equals_eager("take_along_axis", (Cfg){.op = OP_TAKE, .axis = 1, .mode = JX_INDEX_CLIP}, 2,
                   (jx_array *[]){x, i});
  jx_scope_end(0, NULL);
}

/* The scans' sizes: a float cumsum of length 1024 traces XLA's CPU tiling -- rows of 16
 * summed from 0 left to right (16 adds of (64, 1) columns), their totals the same way
 * (16), those totals (4), and two row combines: 38 adds, O(n) work; an int32 cumsum is
 * the log-step scan, ceil(log2 1024) = 10 adds. */
static jx_status cumsum_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_lax_cumsum(in[0], 0, false);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_scan_sizes(void) {
  jx_fn *f = jx_fn_new("cumsum", 1, 1, cumsum_fn, NULL);
  for (int k = 0; k < 2; k++) {
    jx_array *x = jx_zeros(1, (int64_t[]){1024}, k ? JX_INT32 : JX_FLOAT32);
    char *text = jx_make_jaxpr(f, &x);
    int adds = 0, want = k ? 10 : 38;
    for (const char *p = text; p && (p = strstr(p, " add ")); p++) adds++;
    CHECK_MSG(text && adds == want, "expected %d adds in the cumsum jaxpr, got %d:\n%s", want,
              adds, text ? text : jx_last_error());
    free(text);
    jx_free(x);
  }
  jx_fn_free(f);
}

/* ------------------------------------------------------------ bad inputs */

/* Complex cumulative sums and sum windows (JAX 0.10.2, c = [1+1j, 2+3j, 1, -1+1j, 2j]:
 * lax.cumsum(c, reverse=True) = [3+7j, 2+6j, 3j, -1+3j, 2j]; reduce_window add over 2
 * = [3+4j, 3+3j, 1j, -1+3j]; lax.cummax(c) = [1+1j, 2+3j, 2+3j, 2+3j, 2+3j],
 * lexicographic: tools/golden_complex.py has the order's cases); complex max/min
 * windows are unsupported, named. */
static void test_complex_cumulative(void) {
  jx_scope_begin();
  jx_array *c = jx_array_from((float[]){1, 1, 2, 3, 1, 0, -1, 1, 0, 2}, JX_COMPLEX64, 1, (int64_t[]){5});
  float got[10] = {0}, w1[10] = {3, 7, 2, 6, 0, 3, -1, 3, 0, 2}, w2[8] = {3, 4, 3, 3, 0, 1, -1, 3};
  jx_array *r = jx_lax_cumsum(c, 0, true);
  CHECK(r && jx_read(r, got, sizeof got) == JX_OK && memcmp(got, w1, sizeof w1) == 0);
  jx_array *s = jx_lax_reduce_window(c, JX_WINDOW_SUM, (int64_t[]){2}, NULL, JX_PADDING_VALID, NULL, NULL, NULL);
  CHECK(s && jx_read(s, got, sizeof w2) == JX_OK && memcmp(got, w2, sizeof w2) == 0);
  jx_array *m = jx_lax_cummax(c, 0, false);
  float w3[10] = {1, 1, 2, 3, 2, 3, 2, 3, 2, 3};
  CHECK(m && jx_read(m, got, sizeof got) == JX_OK && memcmp(got, w3, sizeof w3) == 0);
  CHECK(jx_lax_reduce_window(c, JX_WINDOW_MAX, (int64_t[]){2}, NULL, JX_PADDING_VALID, NULL, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "jx_lax_reduce_window: max and min windows of complex operands are not supported");
  jx_scope_end(0, NULL);
}

static void test_errors(void) {
  jx_scope_begin();
  jx_array *a = jx_ones(2, (int64_t[]){2, 3}, JX_FLOAT32);
  jx_array *b = jx_ones(2, (int64_t[]){4, 2}, JX_FLOAT32);
  CHECK(jx_lax_dot_general(a, b, 1, (int[]){1}, (int[]){0}, 0, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_lax_dot_general: lhs float32[2,3] axis 1 and rhs float32[4,2] "
              "axis 0 are contracting dims of different sizes");
  CHECK(jx_lax_dot_general(a, b, 1, (int[]){2}, (int[]){0}, 0, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_lax_dot_general");
  CHECK(jx_lax_dot_general(a, a, 1, (int[]){0}, (int[]){0}, 1, (int[]){0}, (int[]){1}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "lhs axis 0 is named twice");
  CHECK(jx_lax_dot_general(a, a, 3, (int[]){0, 1, 1}, (int[]){0, 1, 1}, 0, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "3 contracting and 0 batch dims do not fit");
  CHECK(jx_lax_dot_general(a, a, 1, NULL, (int[]){0}, 0, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "lhs_contracting is NULL");
  CHECK(jx_lax_dot_general(NULL, a, 0, NULL, NULL, 0, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_dot_general: lhs is NULL");

  jx_array *ops[2] = {a, b};
  CHECK(jx_einsum(NULL, 2, ops) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_einsum: subscripts is NULL");
  CHECK(jx_einsum("ij", 0, ops) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "needs at least one operand");
  CHECK(jx_einsum("ij,jk", 2, (jx_array *[]){a, NULL}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_einsum: operand 1 is NULL");
  CHECK(jx_einsum("ij,jk->ik", 2, ops) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "label 'j' has sizes 3 and 4 (sizes must match or be 1)");
  CHECK(jx_einsum("ij", 2, ops) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "\"ij\" has 1 operand terms but 2 operands were given");
  CHECK(jx_einsum("ij,k", 2, ops) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "term \"k\" does not fit operand 1 float32[4,2]");
  CHECK(jx_einsum("i2", 1, ops) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "bad subscript '2' in term \"i2\"");
  jx_clear_error();
  CHECK(jx_einsum("abcdefghijklmnopqrstu,jk->ik", 2, ops) == NULL); /* 'q' is fine: 17 dims are not */
  CHECK_ERROR(JX_ERR_SHAPE, "term \"abcdefghijklmnopqrstu\" has more than 16 subscripts");
  CHECK(jx_einsum("i....", 1, ops) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "bad ellipsis");
  CHECK(jx_einsum("...i...", 1, ops) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "bad ellipsis");
  CHECK(jx_einsum("ij->jj", 1, ops) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "output label 'j' of \"ij->jj\" appears twice");
  CHECK(jx_einsum("ij->k", 1, ops) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "output label 'k' of \"ij->k\" is in no input");
  CHECK(jx_einsum("ij->i->j", 1, ops) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "more than one \"->\"");
  CHECK(jx_einsum("ii", 1, ops) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "label 'i' has sizes 2 and 3");
  jx_array *c13 = jx_ones(2, (int64_t[]){1, 3}, JX_FLOAT32);
  CHECK(jx_einsum("ii", 1, &c13) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "label 'i' repeated in one operand has sizes 1 and 3");

  jx_array *bo = jx_ones(1, (int64_t[]){3}, JX_BOOL);
  CHECK(jx_lax_cumsum(bo, 0, false) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_lax_cumsum: needs a numeric operand, got bool[3]");
  CHECK(jx_lax_cummax(a, 2, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_lax_cummax");
  CHECK(jx_lax_cumprod(NULL, 0, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_cumprod: x is NULL");
  CHECK(jx_cumsum(a, 5) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_cumsum");

  jx_array *i0 = jx_scalar_of(1, JX_INT32), *f0 = jx_scalar_of(1, JX_FLOAT32);
  jx_array *iv = jx_ones(1, (int64_t[]){2}, JX_INT32);
  CHECK(jx_lax_dynamic_slice(a, (jx_array *[]){i0, i0}, (int64_t[]){3, 1}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "slice size 3 is outside [0, 2] for axis 0 of float32[2,3]");
  CHECK(jx_lax_dynamic_slice(a, (jx_array *[]){i0, f0}, (int64_t[]){1, 1}) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "start index 1 must be a 0-d integer array, got float32[]");
  CHECK(jx_lax_dynamic_slice(a, (jx_array *[]){iv, i0}, (int64_t[]){1, 1}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "start index 0 must be a 0-d integer array, got int32[2]");
  CHECK(jx_lax_dynamic_slice(a, (jx_array *[]){i0, NULL}, (int64_t[]){1, 1}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "start index 1 is NULL");
  CHECK(jx_lax_dynamic_slice(a, NULL, (int64_t[]){1, 1}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "start_indices is NULL");
  CHECK(jx_lax_dynamic_update_slice(a, b, (jx_array *[]){i0, i0}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "update float32[4,2] must have x's rank and fit inside x float32[2,3]");
  jx_array *a16 = jx_ones(2, (int64_t[]){1, 1}, JX_FLOAT16);
  CHECK(jx_lax_dynamic_update_slice(a, a16, (jx_array *[]){i0, i0}) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "must have the dtype of x");

  CHECK(jx_lax_select_n(i0, 0, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "needs at least one case");
  CHECK(jx_lax_select_n(i0, 2, (jx_array *[]){a, b}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE,
              "cases must have one shape and dtype, got float32[2,3] and float32[4,2]");
  CHECK(jx_lax_select_n(iv, 2, (jx_array *[]){a, a}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "which int32[2] must be 0-d or have the cases' shape");
  CHECK(jx_lax_select_n(f0, 2, (jx_array *[]){a, a}) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "which must be bool (at most 2 cases) or an integer");

  CHECK(jx_lax_round(i0, JX_ROUNDING_AWAY_FROM_ZERO) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_lax_round: needs a floating operand, got int32[]");
  CHECK(jx_lax_round(a, (jx_rounding_method)3) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "unknown rounding method 3");
  CHECK(jx_lax_reduce_precision(NULL, 8, 7) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_reduce_precision: x is NULL");
  CHECK(jx_lax_reduce_precision(i0, 8, 7) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_lax_reduce_precision: needs a real floating operand, got int32[]");
  CHECK(jx_lax_reduce_precision(a, 0, 3) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "needs exponent_bits >= 1 and mantissa_bits >= 0, got 0 and 3");

  CHECK(jx_take_along_axis(a, iv, 1, JX_INDEX_FILL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "indices int32[2] and arr float32[2,3] must have the same rank");
  jx_array *i23 = jx_ones(2, (int64_t[]){3, 3}, JX_INT32);
  CHECK(jx_take_along_axis(a, i23, 1, JX_INDEX_FILL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "do not broadcast against arr");
  CHECK(jx_take_along_axis(a, i23, JX_AXIS_NONE, JX_INDEX_FILL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "indices must be 1-d with JX_AXIS_NONE");
  CHECK(jx_take_along_axis(a, a, 1, JX_INDEX_FILL) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "indices must be integers");
  CHECK(jx_take_along_axis(a, i23, 1, (jx_index_mode)9) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "unknown index mode 9");
  jx_scope_end(0, NULL);
}

int main(void) {
  cases = golden_load("lax.txt", &ncases);
  TEST_RUN(test_golden_lax);
  TEST_RUN(test_grad_scans);
  TEST_RUN(test_grad_indexing);
  TEST_RUN(test_grad_products);
  TEST_RUN(test_vmap);
  TEST_RUN(test_jit);
  TEST_RUN(test_scan_sizes);
  TEST_RUN(test_errors);
  TEST_RUN(test_complex_cumulative);
  golden_free(cases, ncases);
  return test_finish();
}
