/* test_indexed.c -- indexed updates (jx_at_add/set/mul/min/max) and the sorting routines
 * beyond sort/argsort (jx_lexsort, jx_top_k, jx_searchsorted, jx_unique) against JAX
 * goldens (tests/golden/indexed.txt, tools/golden_indexed.py); gradients by central
 * differences in float64; vmap against a loop; jit against eager; bad inputs. */
#include <math.h>
#include <stdlib.h>

#include "golden.h"
#include "test.h"

static GoldenCase *cases;
static int ncases;

typedef enum Op { OP_ADD, OP_SET, OP_MUL, OP_MIN, OP_MAX, OP_TOPK, OP_SEARCH, OP_UNIQUE,
                  OP_LEX } Op;

typedef struct Cfg {
  Op op;
  int axis;
  jx_index_mode mode;
  int64_t k;           /* top_k k, unique size */
  bool right;          /* searchsorted side */
  bool reduce;         /* weighted_sum of the (first) result */
  int nout;
} Cfg;

static jx_array *at_op(Op op, jx_array *x, jx_array *i, jx_array *y, int axis, jx_index_mode m) {
  switch (op) {
  case OP_ADD: return jx_at_add(x, i, y, axis, m);
  case OP_SET: return jx_at_set(x, i, y, axis, m);
  case OP_MUL: return jx_at_mul(x, i, y, axis, m);
  case OP_MIN: return jx_at_min(x, i, y, axis, m);
  case OP_MAX: return jx_at_max(x, i, y, axis, m);
  default: return NULL;
  }
}

/* sum(y * sin(0.7 i + 0.3)) over y's flat index i. */
static jx_array *weighted_sum(jx_array *y) {
  if (!y) return NULL;
  int64_t n = jx_size(y);
  jx_array *r = jx_sin(jx_add(jx_mul(jx_arange(0, (double)n, 1, jx_dtype_of(y)),
                                     jx_scalar(0.7)), jx_scalar(0.3)));
  return jx_sum(jx_mul(y, jx_reshape(r, jx_ndim(y), jx_shape(y))), 0, NULL, false);
}

/* in: x, y, idx for the at_ ops; x for top_k/unique; a, v for searchsorted. */
static jx_status cfg_fn(void *ctx, jx_array *const *in, jx_array **out) {
  const Cfg *c = ctx;
  jx_status st = JX_OK;
  for (int o = 0; o < c->nout; o++) out[o] = NULL;
  switch (c->op) {
  case OP_TOPK: st = jx_top_k(in[0], c->k, &out[0], c->nout > 1 ? &out[1] : NULL); break;
  case OP_SEARCH: st = jx_searchsorted(in[0], in[1], c->right, &out[0]); break;
  case OP_UNIQUE:
    st = jx_unique(in[0], c->k, NULL, &out[0], &out[1], &out[2], &out[3]);
    break;
  case OP_LEX: out[0] = jx_lexsort(2, in, c->axis); break;
  default: out[0] = at_op(c->op, in[0], in[2], in[1], c->axis, c->mode); break;
  }
  if (st != JX_OK) return st;
  if (c->reduce) {
    jx_array *r = weighted_sum(out[0]);
    jx_free(out[0]);
    out[0] = r;
  }
  return out[0] ? JX_OK : jx_last_status();
}

/* ------------------------------------------------------------------- goldens */

static void test_goldens(void) {
  cases = golden_load("indexed.txt", &ncases);
  CHECK(cases != NULL);
  int run = 0;
  for (int ci = 0; ci < ncases; ci++) {
    const GoldenCase *c = &cases[ci];
    jx_scope_begin();
    jx_array *in[8] = {NULL}, *got[4] = {NULL};
    for (int i = 0; i < c->nin && i < 8; i++) in[i] = golden_to_array(&c->in[i]);
    const char *mode = golden_param(c, "mode");
    jx_index_mode m = !mode ? JX_INDEX_FILL : !strcmp(mode, "clip") ? JX_INDEX_CLIP
                    : !strcmp(mode, "promise") ? JX_INDEX_PROMISE_IN_BOUNDS : JX_INDEX_FILL;
    int axis = (int)golden_param_int(c, "axis", 0);
    double rtol = 0;
    const char *fn = c->fn;
    if (!strncmp(fn, "at_", 3)) {
      Op op = !strcmp(fn, "at_add") ? OP_ADD : !strcmp(fn, "at_set") ? OP_SET
            : !strcmp(fn, "at_mul") ? OP_MUL : !strcmp(fn, "at_min") ? OP_MIN : OP_MAX;
      if (op == OP_MUL) rtol = 1e-6;
      got[0] = at_op(op, in[0], in[1], in[2], axis, m);
    } else if (!strcmp(fn, "lexsort")) {
      got[0] = jx_lexsort(c->nin, in, axis);
    } else if (!strcmp(fn, "top_k")) {
      jx_top_k(in[0], golden_param_int(c, "k", 0), &got[0], &got[1]);
    } else if (!strcmp(fn, "searchsorted")) {
      const char *side = golden_param(c, "side");
      jx_searchsorted(in[0], in[1], side && !strcmp(side, "right"), &got[0]);
    } else if (!strcmp(fn, "unique")) {
      jx_unique(in[0], golden_param_int(c, "size", -1),
                golden_param_int(c, "fill", 0) ? in[1] : NULL, &got[0], &got[1], &got[2],
                &got[3]);
    } else {
      CHECK_MSG(false, "unknown golden fn %s", fn);
    }
    char ctx[160];
    snprintf(ctx, sizeof ctx, "%s (line %d)", c->name, c->line);
    if (c->err != JX_OK) { /* JAX raised: the same status, no result */
      CHECK_MSG(!got[0] && jx_last_status() == c->err, "%s: expected %s, got %s (%s)", ctx,
                jx_status_name(c->err), jx_status_name(jx_last_status()), jx_last_error());
      jx_clear_error();
    }
    for (int o = 0; o < c->nout && o < 4; o++) golden_compare(ctx, got[o], &c->out[o], rtol, 0);
    if (jx_last_status() != JX_OK) {
      test_fail(__FILE__, __LINE__, "%s: %s", ctx, jx_last_error());
      jx_clear_error();
    }
    run++;
    jx_scope_end(0, NULL);
  }
  golden_free(cases, ncases);
  CHECK_MSG(run >= 60, "only %d indexed cases ran", run);
  printf("%d golden indexed cases\n", run);
}

/* ------------------------------------------------------- numeric gradients */

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform(double lo, double hi) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (hi - lo) * (double)(rng >> 11) / 9007199254740992.0;
}

static jx_array *rand64(int ndim, const int64_t *shape, double lo, double hi) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  double *v = malloc((size_t)(n ? n : 1) * sizeof(double));
  for (int64_t i = 0; i < n; i++) v[i] = uniform(lo, hi);
  jx_array *a = jx_array_from(v, JX_FLOAT64, ndim, shape);
  free(v);
  return a;
}


static void grad_at(const char *what, Op op, int axis, jx_index_mode mode, int xnd,
                    const int64_t *xs, int ynd, const int64_t *ys, int ni, const int32_t *iv) {
  jx_config_enable_x64(true);
  jx_scope_begin();
  Cfg c = {.op = op, .axis = axis, .mode = mode, .reduce = true, .nout = 1};
  jx_fn *f = jx_fn_new(what, 3, 1, cfg_fn, &c);
  jx_array *in[3] = {rand64(xnd, xs, -1.5, 1.5), rand64(ynd, ys, -1.5, 1.5),
                     jx_array_from(iv, JX_INT32, 1, (int64_t[]){ni})};
  test_check_grad(what, f, 2, 3, in, 1e-6);
  jx_fn_free(f);
  jx_scope_end(0, NULL);
  jx_config_enable_x64(false);
}

static void test_grad_at(void) {
  static const int32_t dup[6] = {1, -1, 1, 9, -8, 0};
  const int64_t x1[1] = {5}, y1[1] = {6}, x2[2] = {3, 5}, y2[2] = {3, 6}, yc[2] = {6, 5};
  for (int m = 0; m < 2; m++) {
    jx_index_mode mode = m ? JX_INDEX_CLIP : JX_INDEX_FILL;
    grad_at(m ? "at_add clip" : "at_add drop", OP_ADD, 0, mode, 1, x1, 1, y1, 6, dup);
    grad_at(m ? "at_set clip" : "at_set drop", OP_SET, 0, mode, 1, x1, 1, y1, 6, dup);
    grad_at(m ? "at_mul clip" : "at_mul drop", OP_MUL, 0, mode, 1, x1, 1, y1, 6, dup);
  }
  grad_at("at_add axis1", OP_ADD, 1, JX_INDEX_FILL, 2, x2, 2, y2, 6, dup);
  grad_at("at_set axis1", OP_SET, 1, JX_INDEX_FILL, 2, x2, 2, y2, 6, dup);
  grad_at("at_mul axis1", OP_MUL, 1, JX_INDEX_CLIP, 2, x2, 2, y2, 6, dup);
  grad_at("at_set axis0 rows", OP_SET, 0, JX_INDEX_FILL, 2, (int64_t[]){4, 5}, 2, yc, 6, dup);
  /* min/max: distinct random values, so the derivative is the selected element's */
  grad_at("at_min", OP_MIN, 0, JX_INDEX_FILL, 1, x1, 1, y1, 6, dup);
  grad_at("at_max", OP_MAX, 0, JX_INDEX_CLIP, 1, x1, 1, y1, 6, dup);
}

static void test_grad_top_k(void) {
  jx_config_enable_x64(true);
  jx_scope_begin();
  Cfg c = {.op = OP_TOPK, .k = 3, .reduce = true, .nout = 1};
  jx_fn *f = jx_fn_new("top_k", 1, 1, cfg_fn, &c);
  jx_array *x = rand64(2, (int64_t[]){3, 7}, -2, 2);
  test_check_grad("top_k values", f, 1, 1, &x, 1e-6);
  /* exact: the gradient is the weights scattered to the selected positions */
  double v[5] = {1, 5, 3, 5, -2};
  jx_array *x5 = jx_array_from(v, JX_FLOAT64, 1, (int64_t[]){5});
  jx_fn *g = jx_grad(f, 1, NULL);
  jx_array *d = NULL;
  CHECK(jx_call(g, &x5, &d) == JX_OK);
  double *gv = d ? test_read_f64(d) : NULL;
  if (gv) { /* top 3: indices 1, 3, 2 with weights sin(0.3), sin(1.0), sin(1.7) */
    CHECK_NEAR(gv[1], sin(0.3), 1e-12);
    CHECK_NEAR(gv[3], sin(1.0), 1e-12);
    CHECK_NEAR(gv[2], sin(1.7), 1e-12);
    CHECK(gv[0] == 0 && gv[4] == 0);
  }
  free(gv);
  jx_fn_free(g), jx_fn_free(f);
  jx_scope_end(0, NULL);
  jx_config_enable_x64(false);
}

/* ------------------------------------------------------------ vmap, jit */

static double max_diff(jx_array *a, jx_array *b) {
  if (!a || !b || jx_ndim(a) != jx_ndim(b) ||
      memcmp(jx_shape(a), jx_shape(b), sizeof(int64_t) * (size_t)jx_ndim(a)))
    return NAN;
  double *x = test_read_f64(a), *y = test_read_f64(b), m = 0;
  for (int64_t i = 0; i < jx_size(a); i++)
    if (!(isnan(x[i]) && isnan(y[i]))) m = fmax(m, fabs(x[i] - y[i]));
  free(x), free(y);
  return m;
}

/* vmap(f) over axis 0 of the inputs with in_axes (JX_NOT_MAPPED entries broadcast)
 * equals a loop over the batch (B = 3), output by output. */
static void vmap_equals_loop(const char *what, Cfg c, int nin, const int *in_axes,
                             jx_array *const *x) {
  jx_scope_begin();
  jx_fn *f = jx_fn_new(what, nin, c.nout, cfg_fn, &c);
  jx_fn *v = jx_vmap(f, in_axes, NULL);
  jx_array *y[4] = {NULL}, *parts[4][3] = {{NULL}};
  CHECK_MSG(jx_call(v, x, y) == JX_OK, "%s: vmap: %s", what, jx_last_error());
  for (int64_t b = 0; b < 3; b++) {
    jx_array *xb[8], *o[4] = {NULL};
    for (int i = 0; i < nin; i++)
      xb[i] = in_axes && in_axes[i] == JX_NOT_MAPPED ? x[i] : jx_take(x[i], jx_scalar_int(b), 0);
    CHECK(jx_call(f, xb, o) == JX_OK);
    for (int k = 0; k < c.nout; k++) parts[k][b] = o[k];
  }
  for (int k = 0; k < c.nout; k++) {
    double d = max_diff(y[k], jx_stack(3, parts[k], 0));
    CHECK_MSG(d == 0, "%s: vmap output %d differs from the loop by %g", what, k, d);
  }
  jx_fn_free(v), jx_fn_free(f);
  jx_clear_error();
  jx_scope_end(0, NULL);
}

static jx_array *ints(int n, const int32_t *v) {
  return jx_array_from(v, JX_INT32, 1, (int64_t[]){n});
}

static jx_array *grid(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  /* few distinct values (ties) on a 1/4 grid */
  return jx_reshape(jx_floor(jx_mul(jx_sin(jx_arange(0, (double)n, 1, JX_FLOAT32)),
                                    jx_scalar(4))), ndim, shape);
}

static void test_vmap(void) {
  jx_scope_begin();
  static const int32_t iv[5] = {2, -1, 2, 7, 0};
  const int mapped_xy[3] = {0, 0, JX_NOT_MAPPED};
  jx_array *in[3] = {grid(2, (int64_t[]){3, 4}), grid(2, (int64_t[]){3, 5}), ints(5, iv)};
  vmap_equals_loop("at_add", (Cfg){.op = OP_ADD, .nout = 1}, 3, mapped_xy, in);
  vmap_equals_loop("at_set", (Cfg){.op = OP_SET, .nout = 1}, 3, mapped_xy, in);
  vmap_equals_loop("at_max clip", (Cfg){.op = OP_MAX, .mode = JX_INDEX_CLIP, .nout = 1}, 3,
                   mapped_xy, in);
  /* batched indices too */
  jx_array *bi[3] = {in[0], in[1],
                     jx_reshape(ints(15, (int32_t[]){0, 1, 2, 3, 3, 3, -1, 0, 9, 1, 1, 1, 2, 2, -4}),
                                2, (int64_t[]){3, 5})};
  vmap_equals_loop("at_set batched idx", (Cfg){.op = OP_SET, .nout = 1}, 3, NULL, bi);
  vmap_equals_loop("at_mul batched idx", (Cfg){.op = OP_MUL, .nout = 1}, 3, NULL, bi);
  jx_array *t = grid(3, (int64_t[]){3, 2, 6});
  vmap_equals_loop("top_k", (Cfg){.op = OP_TOPK, .k = 4, .nout = 2}, 1, NULL, &t);
  jx_array *u = grid(2, (int64_t[]){3, 8});
  vmap_equals_loop("unique", (Cfg){.op = OP_UNIQUE, .k = 5, .nout = 4}, 1, NULL, &u);
  jx_array *ss[2] = {jx_arange(-2, 3, 1, JX_FLOAT32), grid(2, (int64_t[]){3, 4})};
  const int mapped_v[2] = {JX_NOT_MAPPED, 0};
  vmap_equals_loop("searchsorted", (Cfg){.op = OP_SEARCH, .right = true, .nout = 1}, 2,
                   mapped_v, ss);
  /* a batched too: each row's own binary search (a gather of a batched a per step) */
  jx_array *sb[2] = {jx_sort(grid(2, (int64_t[]){3, 9}), -1, false), grid(2, (int64_t[]){3, 4})};
  vmap_equals_loop("searchsorted batched a", (Cfg){.op = OP_SEARCH, .nout = 1}, 2, NULL, sb);
  const int mapped_a[2] = {0, JX_NOT_MAPPED};
  jx_array *sa[2] = {sb[0], jx_arange(-4, 4, 0.5, JX_FLOAT32)};
  vmap_equals_loop("searchsorted batched a only", (Cfg){.op = OP_SEARCH, .right = true, .nout = 1},
                   2, mapped_a, sa);
  jx_scope_end(0, NULL);
}

static void jit_equals_eager(const char *what, Cfg c, int nin, jx_array *const *x) {
  jx_scope_begin();
  jx_fn *f = jx_fn_new(what, nin, c.nout, cfg_fn, &c);
  jx_fn *j = jx_jit(f);
  jx_array *a[4] = {NULL}, *b[4] = {NULL}, *e[4] = {NULL};
  CHECK_MSG(jx_call(f, x, a) == JX_OK, "%s: eager: %s", what, jx_last_error());
  CHECK_MSG(jx_call(j, x, b) == JX_OK, "%s: jit: %s", what, jx_last_error());
  CHECK_MSG(jx_call(j, x, e) == JX_OK, "%s: jit again: %s", what, jx_last_error());
  for (int k = 0; k < c.nout; k++) {
    double d = max_diff(a[k], b[k]), d2 = max_diff(a[k], e[k]);
    CHECK_MSG(d == 0 && d2 == 0, "%s: jit output %d differs from eager by %g", what, k, d);
  }
  jx_fn_free(j), jx_fn_free(f);
  jx_clear_error();
  jx_scope_end(0, NULL);
}

static void test_jit(void) {
  jx_scope_begin();
  static const int32_t iv[6] = {2, -1, 2, 7, 0, -9};
  jx_array *in[3] = {grid(2, (int64_t[]){4, 3}), grid(2, (int64_t[]){4, 6}), ints(6, iv)};
  for (int op = OP_ADD; op <= OP_MAX; op++)
    jit_equals_eager("at_op", (Cfg){.op = (Op)op, .axis = 1, .nout = 1}, 3, in);
  jit_equals_eager("at_set clip", (Cfg){.op = OP_SET, .axis = -1, .mode = JX_INDEX_CLIP,
                   .nout = 1}, 3, in);
  jx_array *t = grid(2, (int64_t[]){3, 9});
  jit_equals_eager("top_k", (Cfg){.op = OP_TOPK, .k = 5, .nout = 2}, 1, &t);
  jit_equals_eager("unique", (Cfg){.op = OP_UNIQUE, .k = 7, .nout = 4}, 1, &t);
  jx_array *ss[2] = {jx_arange(-2, 3, 0.5, JX_FLOAT32), t};
  jit_equals_eager("searchsorted", (Cfg){.op = OP_SEARCH, .nout = 1}, 2, ss);
  jx_array *lk[2] = {t, grid(2, (int64_t[]){3, 9})};
  jit_equals_eager("lexsort", (Cfg){.op = OP_LEX, .axis = 0, .nout = 1}, 2, lk);
  jx_scope_end(0, NULL);
}

/* top_k orders float16/bfloat16 (16-bit keys) like float32 */
static void test_top_k_dtypes(void) {
  jx_scope_begin();
  static const float v[11] = {3.0f, -0.0f, NAN, 0.0f, -INFINITY, 1.0f, -NAN, INFINITY, 1.0f,
                              0.0f, -0.0f};
  jx_array *x = jx_array_from(v, JX_FLOAT32, 1, (int64_t[]){11}), *want = NULL;
  CHECK(jx_top_k(x, 11, NULL, &want) == JX_OK);
  jx_dtype ds[2] = {JX_FLOAT16, JX_BFLOAT16};
  for (int d = 0; d < 2; d++) {
    jx_array *got = NULL, *vals = NULL;
    CHECK(jx_top_k(jx_astype(x, ds[d]), 11, &vals, &got) == JX_OK);
    CHECK(vals && jx_dtype_of(vals) == ds[d]);
    CHECK_MSG(max_diff(got, want) == 0, "top_k %s order", jx_dtype_name(ds[d]));
  }
  jx_scope_end(0, NULL);
}

/* searchsorted is a binary search (JAX's method='scan'): a large a against many queries
 * matches a C bisection on both sides, eager and under jit, and no intermediate has
 * len(v) x len(a) elements (the pairwise comparison it replaced held a 100k x 100k
 * table eagerly: the process was OOM-killed); its gradient is zero, as JAX's. */
static int64_t bisect_ref(const float *a, int64_t n, float v, bool right) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (right ? !(v < a[mid]) : a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static jx_status search_sum(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_array *i = NULL;
  if (jx_searchsorted(in[0], in[1], false, &i) != JX_OK) return jx_last_status();
  out[0] = jx_sum(jx_mul(jx_astype(i, JX_FLOAT32), in[1]), 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_searchsorted_large(void) {
  jx_scope_begin();
  enum { N = 100003, M = 4096 };
  static float a[N], v[M];
  static int32_t got[M];
  for (int64_t i = 0; i < N; i++) a[i] = (float)(i / 3) * 0.25f - 5000.0f; /* runs of 3 */
  for (int j = 0; j < M; j++) v[j] = (float)((j * 7919LL) % 40000) * 0.25f - 5200.0f;
  jx_array *A = jx_array_from(a, JX_FLOAT32, 1, (int64_t[]){N});
  jx_array *V = jx_array_from(v, JX_FLOAT32, 1, (int64_t[]){M});
  for (int mode = 0; mode < 4; mode++) {
    bool right = mode & 1, jit = mode & 2;
    Cfg c = {.op = OP_SEARCH, .right = right, .nout = 1};
    jx_fn *f = jx_fn_new("searchsorted", 2, 1, cfg_fn, &c), *g = jit ? jx_jit(f) : jx_fn_ref(f);
    jx_array *r = NULL;
    CHECK_MSG(jx_call(g, (jx_array *[]){A, V}, &r) == JX_OK && jx_read(r, got, sizeof got) == JX_OK,
              "searchsorted large: %s", jx_last_error());
    int bad = 0;
    for (int j = 0; j < M; j++) bad += got[j] != bisect_ref(a, N, v[j], right);
    CHECK_MSG(bad == 0, "searchsorted large (%s, %s): %d of %d positions differ",
              right ? "right" : "left", jit ? "jit" : "eager", bad, M);
    jx_fn_free(g), jx_fn_free(f);
    jx_clear_error();
  }
  /* no len(v) x len(a) intermediate in the program */
  Cfg c = {.op = OP_SEARCH, .nout = 1};
  jx_fn *f = jx_fn_new("searchsorted", 2, 1, cfg_fn, &c);
  char *text = jx_make_jaxpr(f, (jx_array *[]){jx_zeros(1, (int64_t[]){500}, JX_FLOAT32),
                                               jx_zeros(1, (int64_t[]){300}, JX_FLOAT32)});
  CHECK_MSG(text && !strstr(text, "300,500") && !strstr(text, "500,300"),
            "searchsorted compares all pairs:\n%s", text ? text : jx_last_error());
  free(text);
  jx_fn_free(f);
  /* grad: zero through the positions; d/dv sum(i * v) = i */
  jx_fn *sf = jx_fn_new("search_sum", 2, 1, search_sum, NULL), *gf = jx_grad(sf, 1, (int[]){1});
  jx_array *sa = jx_array_from((float[]){-1, 0, 0, 2}, JX_FLOAT32, 1, (int64_t[]){4});
  jx_array *sv = jx_array_from((float[]){-2, 0, 1, 3}, JX_FLOAT32, 1, (int64_t[]){4}), *gv = NULL;
  float want_g[4] = {0, 1, 3, 4}, got_g[4] = {0};
  CHECK_MSG(jx_call(gf, (jx_array *[]){sa, sv}, &gv) == JX_OK && jx_read(gv, got_g, sizeof got_g) == JX_OK,
            "searchsorted grad: %s", jx_last_error());
  CHECK(!memcmp(got_g, want_g, sizeof want_g));
  jx_fn_free(gf), jx_fn_free(sf);
  jx_clear_error();
  jx_scope_end(0, NULL);
}

/* ------------------------------------------------------------- bad inputs */

/* grad of sum(w * base.at[idx].max/min(x)) where updates tie with each other and with
 * base, against jax 0.10.2 (the tangent is averaged over the tied contributors: 1/3 each
 * for base and two updates; jaxc gave 0.25, 0.25, 0.5), eager and under jit; the value
 * keeps -0.0 and infinities. */
typedef struct TieCase {
  bool use_min;
  jx_array *idx, *w;
} TieCase;
static jx_status tie_fn(void *ctx, jx_array *const *in, jx_array **out) {
  const TieCase *c = ctx;
  jx_array *r = c->use_min ? jx_at_min(in[1], c->idx, in[0], 0, JX_INDEX_FILL) : jx_at_max(in[1], c->idx, in[0], 0, JX_INDEX_FILL);
  out[0] = jx_sum(jx_multiply(r, c->w), 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}
static jx_array *f32v(int n, const float *v) { return jx_array_from(v, JX_FLOAT32, 1, (int64_t[]){n}); }
static void test_grad_at_ties(void) {
  jx_scope_begin();
  static const struct {
    bool use_min;
    int nx, nb;
    float x[2], base[2];
    int32_t idx[2];
    float dx[2], dbase[2];
  } ties[] = {
      {false, 1, 1, {2.5f}, {2.5f}, {0}, {0.5f}, {0.5f}},
      {false, 2, 1, {3, 3}, {1}, {0, 0}, {0.5f, 0.5f}, {0}},
      {false, 2, 1, {3, 3}, {3}, {0, 0}, {1 / 3.f, 1 / 3.f}, {1 / 3.f}},
      {true, 1, 1, {2.5f}, {2.5f}, {0}, {0.5f}, {0.5f}},
      {false, 2, 2, {2.5f, 1}, {2.5f, 2.5f}, {0, 1}, {0.5f, 0}, {0.5f, 1}},
  };
  for (size_t c = 0; c < sizeof ties / sizeof ties[0]; c++)
    for (int jit = 0; jit < 2; jit++) {
      TieCase tc = {ties[c].use_min, jx_array_from(ties[c].idx, JX_INT32, 1, (int64_t[]){ties[c].nx}),
                    jx_ones(1, (int64_t[]){ties[c].nb}, JX_FLOAT32)};
      jx_fn *f = jx_fn_new("tie", 2, 1, tie_fn, &tc), *g = jx_grad(f, 2, (int[]){0, 1}), *jg = jit ? jx_jit(g) : NULL;
      jx_array *o[2] = {NULL, NULL};
      CHECK_MSG(jx_call(jg ? jg : g, (jx_array *[]){f32v(ties[c].nx, ties[c].x), f32v(ties[c].nb, ties[c].base)}, o) ==
                    JX_OK, "case %zu: %s", c, jx_last_error());
      float dx[2] = {0}, db[2] = {0};
      if (o[0] && o[1]) jx_read(o[0], dx, sizeof(float) * (size_t)ties[c].nx), jx_read(o[1], db, sizeof(float) * (size_t)ties[c].nb);
      for (int k = 0; k < ties[c].nx; k++) CHECK_MSG(fabsf(dx[k] - ties[c].dx[k]) < 1e-6f, "case %zu%s: dx[%d] %g", c, jit ? " jit" : "", k, dx[k]);
      for (int k = 0; k < ties[c].nb; k++) CHECK_MSG(fabsf(db[k] - ties[c].dbase[k]) < 1e-6f, "case %zu%s: dbase[%d] %g", c, jit ? " jit" : "", k, db[k]);
      jx_fn_free(jg), jx_fn_free(g), jx_fn_free(f);
    }
  float v[3];
  jx_array *r = jx_at_max(f32v(3, (float[]){-0.0f, -INFINITY, 1}), jx_array_from((int32_t[]){0, 1}, JX_INT32, 1, (int64_t[]){2}),
                          f32v(2, (float[]){-1, -INFINITY}), 0, JX_INDEX_FILL);
  CHECK(r && jx_read(r, v, sizeof v) == JX_OK && v[0] == 0 && signbit(v[0]) && v[1] == -INFINITY && v[2] == 1);
  jx_scope_end(0, NULL);
}

/* at_set with many duplicated indices (40,000 into 300 positions, some negative, some
 * out of range and dropped): the last valid update of each position wins, as a C loop
 * says; an m x m comparison made this 12.8 GB, now a sort. Also clip mode. */
static void test_set_many(void) {
  jx_scope_begin();
  enum { M = 40000, N = 300 };
  static int32_t ix[M], yv[M], want[N], got[N];
  for (int mode = 0; mode < 2; mode++) {
    for (int j = 0; j < M; j++) ix[j] = (int32_t)((j * 7919LL) % 700) - 350, yv[j] = j; /* [-350, 349] */
    for (int p = 0; p < N; p++) want[p] = -1;
    for (int j = 0; j < M; j++) {
      int32_t q = ix[j] < 0 ? ix[j] + N : ix[j];
      if (mode == 1) q = q < 0 ? 0 : q >= N ? N - 1 : q; /* clip */
      if (q >= 0 && q < N) want[q] = yv[j];
    }
    jx_array *r = jx_at_set(jx_full(1, (int64_t[]){N}, -1, JX_INT32), jx_array_from(ix, JX_INT32, 1, (int64_t[]){M}),
                            jx_array_from(yv, JX_INT32, 1, (int64_t[]){M}), 0, mode ? JX_INDEX_CLIP : JX_INDEX_FILL);
    CHECK_MSG(r && jx_read(r, got, sizeof got) == JX_OK, "at_set: %s", jx_last_error());
    int bad = 0;
    for (int p = 0; p < N; p++) bad += got[p] != want[p];
    CHECK_MSG(bad == 0, "at_set (%s): %d of %d positions differ from the last update", mode ? "clip" : "fill", bad, N);
  }
  jx_scope_end(0, NULL);
}

/* An int x updated with float values computes in the promoted float dtype and converts
 * back (jax 0.10.2's _scatter_impl): int32 [10, 11].at[[0, 1]].add([1.7, -1.7]) is
 * [11, 9] (jaxc cast the update first: [11, 10]), .at[0].multiply(1.5) 15, .at[0].set(
 * 2.7) 2. */
static void test_int_float_updates(void) {
  jx_scope_begin();
  jx_array *x = jx_array_from((int32_t[]){10, 11}, JX_INT32, 1, (int64_t[]){2});
  jx_array *i01 = jx_array_from((int32_t[]){0, 1}, JX_INT32, 1, (int64_t[]){2}), *i0 = jx_scalar_int(0);
  int32_t v[2];
  jx_array *r = jx_at_add(x, i01, jx_array_from((float[]){1.7f, -1.7f}, JX_FLOAT32, 1, (int64_t[]){2}), 0, JX_INDEX_FILL);
  CHECK(r && jx_dtype_of(r) == JX_INT32 && jx_read(r, v, sizeof v) == JX_OK && v[0] == 11 && v[1] == 9);
  r = jx_at_mul(x, i0, jx_scalar(1.5), 0, JX_INDEX_FILL);
  CHECK(r && jx_dtype_of(r) == JX_INT32 && !jx_is_weak(r) && jx_read(r, v, sizeof v) == JX_OK && v[0] == 15 && v[1] == 11);
  r = jx_at_set(x, i0, jx_scalar(2.7), 0, JX_INDEX_FILL);
  CHECK(r && jx_read(r, v, sizeof v) == JX_OK && v[0] == 2 && v[1] == 11);
  jx_scope_end(0, NULL);
}

static void test_errors(void) {
  jx_scope_begin();
  jx_array *x = jx_zeros(1, (int64_t[]){4}, JX_FLOAT32), *i = ints(2, (int32_t[]){0, 1});
  jx_array *fi = jx_zeros(1, (int64_t[]){2}, JX_FLOAT32), *o = NULL, *o2 = NULL;
  CHECK(jx_at_add(x, fi, jx_scalar(1), 0, JX_INDEX_FILL) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_at_add: indices must be integers");
  CHECK(jx_at_set(jx_scalar(1), i, jx_scalar(1), 0, JX_INDEX_FILL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_at_set");
  CHECK(jx_at_mul(x, i, jx_scalar(1), 1, JX_INDEX_FILL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_at_mul");
  CHECK(jx_at_min(x, i, jx_scalar(1), 0, (jx_index_mode)7) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "unknown index mode");
  CHECK(jx_at_max(x, i, jx_zeros(1, (int64_t[]){3}, JX_FLOAT32), 0, JX_INDEX_FILL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_at_max");
  CHECK(jx_at_add(NULL, i, x, 0, JX_INDEX_FILL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_at_add");
  CHECK(jx_top_k(x, 5, &o, &o2) == JX_ERR_VALUE && !o && !o2);
  CHECK_ERROR(JX_ERR_VALUE, "jx_top_k: k = 5");
  CHECK(jx_top_k(jx_scalar(2), 0, &o, NULL) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_top_k");
  CHECK(jx_searchsorted(jx_zeros(2, (int64_t[]){2, 2}, JX_FLOAT32), x, false, &o) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_searchsorted: a must be 1-d");
  CHECK(jx_lexsort(0, NULL, 0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lexsort: need at least one key");
  CHECK(jx_lexsort(2, (jx_array *[]){x, i}, 0) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_lexsort: all keys need the same shape");
  CHECK(jx_unique(jx_zeros(1, (int64_t[]){0}, JX_FLOAT32), 3, NULL, &o, NULL, NULL, NULL)
        == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "fill_value");
  /* no static size under jit: an error, not a crash */
  Cfg c = {.op = OP_UNIQUE, .k = -1, .nout = 4};
  jx_fn *f = jx_fn_new("unique_nosize", 1, 4, cfg_fn, &c), *j = jx_jit(f);
  jx_array *r[4] = {NULL};
  CHECK(jx_call(j, &x, r) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "static size");
  jx_fn_free(j), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

int main(void) {
  int64_t fns = jx_live_fns();
  TEST_RUN(test_goldens);
  TEST_RUN(test_grad_at);
  TEST_RUN(test_grad_top_k);
  TEST_RUN(test_vmap);
  TEST_RUN(test_jit);
  TEST_RUN(test_top_k_dtypes);
  TEST_RUN(test_set_many);
  TEST_RUN(test_searchsorted_large);
  TEST_RUN(test_int_float_updates);
  TEST_RUN(test_grad_at_ties);
  TEST_RUN(test_errors);
  CHECK_EQ_INT(jx_live_fns(), fns);
  return test_finish();
}
