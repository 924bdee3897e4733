/* test_vmap.c -- jx_vmap against a C loop over the batch: every primitive under many
 * in_axes / out_axes (0, 1, negative, JX_NOT_MAPPED mixes), nested vmap, functions of
 * the public API mixing mapped and unmapped inputs, closures, and the errors. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/array.h"
#include "test.h"
#include "trace/collective.h"
#include "trace/prim.h"
#include "trace/trace.h"
#include "transform/transform.h"

#define NM JX_NOT_MAPPED

/* ------------------------------------------------------------ harness */

/* Every case also ends with as many live jx_fn as it began with and an empty stack. */
static void (*case_body)(void);
static void case_wrapper(void) {
  int64_t fns = jx_live_fns();
  int depth = trace_depth();
  case_body();
  CHECK_EQ_INT(jx_live_fns(), fns);
  CHECK_EQ_INT(trace_depth(), depth);
}
#define RUN(fn) (case_body = fn, test_run(#fn, case_wrapper))
/* a case made of check_prim_case calls: under JAXC_TEST_SHARD each call is a unit */
#define RUN_SPLIT(fn) (case_body = fn, test_run_split(#fn, case_wrapper))

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform(void) { /* [0, 1) */
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rng >> 11) / 9007199254740992.0;
}

typedef enum Gen {
  G_F,       /* float in [-2, 2) */
  G_POS,     /* float in [0.2, 2) */
  G_UNIT,    /* float in [-0.9, 0.9) */
  G_GE1,     /* float in [1.1, 3) */
  G_SPECIAL, /* floats with NaN and infinities among them */
  G_INT,     /* int in [-6, 6] */
  G_SHIFT,   /* int in [0, 7] */
  G_BOOL,
  G_IDX,     /* int in [-3, 7]: indices, some out of range (gather clamps) */
} Gen;

typedef struct InSpec {
  jx_dtype dtype;
  Gen gen;
  int ndim;
  int64_t shape[6];
} InSpec;

static double gen_value(Gen g, int64_t i) {
  switch (g) {
  case G_F: return -2 + 4 * uniform();
  case G_POS: return 0.2 + 1.8 * uniform();
  case G_UNIT: return -0.9 + 1.8 * uniform();
  case G_GE1: return 1.1 + 1.9 * uniform();
  case G_SPECIAL: {
    static const double special[] = {NAN, INFINITY, -INFINITY, 0.5, -1.0};
    return i % 3 == 0 ? special[(i / 3) % 5] : -2 + 4 * uniform();
  }
  case G_INT: return floor(13 * uniform()) - 6;
  case G_SHIFT: return floor(8 * uniform());
  case G_BOOL: return uniform() < 0.5;
  case G_IDX: return floor(11 * uniform()) - 3;
  }
  return 0;
}

/* A concrete array of dtype/gen with the given shape. */
static jx_array *make_array(jx_dtype dtype, Gen gen, int ndim, const int64_t *shape) {
  if (dtype == JX_COMPLEX64 || dtype == JX_COMPLEX128) { /* both parts from gen */
    jx_dtype part = dtype == JX_COMPLEX64 ? JX_FLOAT32 : JX_FLOAT64;
    jx_array *re = make_array(part, gen, ndim, shape), *im = make_array(part, gen, ndim, shape);
    jx_array *z = jx_complex(re, im);
    jx_free(re), jx_free(im);
    return z;
  }
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
  for (int64_t i = 0; i < n; i++) v[i] = gen_value(gen, i);
  jx_array *a64 = jx_array_from(v, JX_FLOAT64, ndim, shape);
  free(v);
  jx_array *a = jx_astype(a64, dtype);
  jx_free(a64);
  return a;
}

/* spec's array with a batch axis of size B inserted at `axis` (JX_NOT_MAPPED: none). */
static jx_array *make_input(const InSpec *s, int axis, int64_t B) {
  if (axis == NM) return make_array(s->dtype, s->gen, s->ndim, s->shape);
  int64_t shape[JX_MAX_NDIM];
  if (axis < 0) axis += s->ndim + 1;
  for (int d = 0, k = 0; d <= s->ndim; d++) shape[d] = d == axis ? B : s->shape[k++];
  return make_array(s->dtype, s->gen, s->ndim + 1, shape);
}

/* x[..., b, ...] along axis (axis removed). */
static jx_array *slice_at(jx_array *x, int axis, int64_t b) {
  int64_t start[JX_MAX_NDIM] = {0}, stop[JX_MAX_NDIM];
  for (int d = 0; d < jx_ndim(x); d++) stop[d] = jx_shape(x)[d];
  start[axis] = b;
  stop[axis] = b + 1;
  jx_array *s = prim_slice(x, start, stop, NULL), *r = jx_squeeze(s, 1, &axis);
  jx_free(s);
  return r;
}

/* got equals want: shape, dtype and values (NaN == NaN; floats within a relative 1e-5). */
static void check_same(const char *what, jx_array *got, jx_array *want) {
  CHECK_MSG(got && want, "%s: got %p want %p (%s)", what, (void *)got, (void *)want, jx_last_error());
  if (!got || !want) return;
  char *gs = NULL, *ws = NULL;
  bool ok = jx_ndim(got) == jx_ndim(want) && jx_dtype_of(got) == jx_dtype_of(want);
  for (int d = 0; ok && d < jx_ndim(got); d++) ok = jx_shape(got)[d] == jx_shape(want)[d];
  if (ok) {
    double *g = test_read_f64(got), *w = test_read_f64(want);
    for (int64_t i = 0; ok && g && w && i < jx_size(got); i++) {
      bool same = g[i] == w[i] || (isnan(g[i]) && isnan(w[i])) ||
                  fabs(g[i] - w[i]) <= 1e-5 * fmax(1.0, fabs(w[i]));
      if (!same) ok = false;
    }
    ok = ok && g && w;
    free(g), free(w);
  }
  if (!ok) {
    gs = jx_to_string(got), ws = jx_to_string(want);
    char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
    test_fail(__FILE__, __LINE__, "%s: vmap gave %s\n%s\nthe loop gave %s\n%s", what,
              array_describe(b0, got), gs ? gs : "?", array_describe(b1, want), ws ? ws : "?");
  }
  free(gs), free(ws);
}

/* vmap(f, in_axes, out_axes)(xs) equals a loop calling f on slices of the mapped
 * inputs (unmapped ones whole) and stacking each output along out_axes[o]. */
static void check_vmap(const char *what, jx_fn *f, jx_array *const *xs, const int *in_axes,
                       const int *out_axes) {
  int nin = jx_fn_nin(f), nout = jx_fn_nout(f);
  jx_scope_begin();
  jx_fn *v = jx_vmap(f, in_axes, out_axes);
  jx_array *got[8] = {0}, *outs[8][8] = {{0}}, *ins[8];
  jx_status s = jx_call(v, xs, got);
  CHECK_MSG(s == JX_OK, "%s: vmap failed: %s", what, jx_last_error());
  int64_t B = -1;
  int axes[8];
  for (int i = 0; i < nin; i++) {
    axes[i] = in_axes ? in_axes[i] : 0;
    if (axes[i] == NM) continue;
    if (axes[i] < 0) axes[i] += jx_ndim(xs[i]);
    B = jx_shape(xs[i])[axes[i]];
  }
  CHECK(B >= 1 && B <= 8);
  for (int64_t b = 0; s == JX_OK && b < B; b++) {
    for (int i = 0; i < nin; i++) ins[i] = axes[i] == NM ? xs[i] : slice_at(xs[i], axes[i], b);
    s = jx_call(f, ins, outs[b]);
    CHECK_MSG(s == JX_OK, "%s: loop failed: %s", what, jx_last_error());
  }
  for (int o = 0; s == JX_OK && o < nout; o++) {
    int oa = out_axes ? out_axes[o] : 0;
    jx_array *col[8];
    for (int64_t b = 0; b < B; b++) col[b] = outs[b][o];
    if (oa == NM) {
      for (int64_t b = 1; b < B; b++) check_same(what, col[0], col[b]);
      check_same(what, got[o], col[0]);
    } else {
      check_same(what, got[o], jx_stack((int)B, col, oa));
    }
  }
  jx_clear_error();
  jx_fn_free(v);
  jx_scope_end(0, NULL);
}

/* ------------------------------------------------------------ primitives */

/* A function applying one primitive with fixed params. */
typedef struct PrimCase {
  const char *name;
  Prim p;
  int nin;
  InSpec in[4];
  PrimParams pp;
} PrimCase;

static int case_nout(const PrimCase *c) { return prim_nout(c->p, c->nin, &c->pp); }

static jx_status prim_impl(void *ctx, jx_array *const *in, jx_array **out) {
  const PrimCase *c = ctx;
  return prim_bind_n(c->p, c->nin, in, &c->pp, case_nout(c), out);
}

static bool covered[PRIM_NUM];

/* The in_axes of configuration k for input i of rank nd (batched rank nd + 1). */
static int config_axis(int k, int i, int nd) {
  switch (k) {
  case 0: return 0;
  case 1: return -1;
  case 2: return nd >= 1 ? 1 : 0;
  case 3: return i == 0 ? nd : NM;              /* first mapped (last axis), rest not */
  case 4: return i == 0 ? NM : i % (nd + 1);    /* first not mapped */
  case 5: return i % 2 == 0 ? 0 : -1;           /* different axes per operand */
  default: return i % 2 == 0 ? -(nd + 1) : NM;  /* negative, mixed */
  }
}
#define NCONFIG 7

/* Runs c under every configuration (and out axes 0, -1, 1 and the last). */
static void check_prim_case(const PrimCase *c) {
  covered[c->p] = true;
  if (!test_shard_mine()) return;
  jx_fn *f = jx_fn_new(c->name, c->nin, case_nout(c), prim_impl, (void *)c);
  /* The unbatched output ranks, for choosing out axes (lu's and eigh's differ). */
  jx_scope_begin();
  jx_array *ex[4], *y[4] = {NULL};
  for (int i = 0; i < c->nin; i++) ex[i] = make_input(&c->in[i], NM, 0);
  CHECK_EQ_INT(jx_call(f, ex, y), JX_OK);
  int onds[4] = {0};
  for (int o = 0; o < 4; o++) onds[o] = y[o] ? jx_ndim(y[o]) : y[0] ? jx_ndim(y[0]) : 0;
  jx_scope_end(0, NULL);
  for (int k = 0; k < NCONFIG; k++) {
    if (k == 4 && c->nin == 1) continue;
    int in_axes[4], out_axes[4];
    for (int o = 0; o < 4; o++) {
      int ond = onds[o];
      out_axes[o] = (int[]){0, -1, ond >= 1 ? 1 : 0, ond, -1, 0, -(ond + 1)}[k];
    }
    for (int i = 0; i < c->nin; i++) in_axes[i] = config_axis(k, i, c->in[i].ndim);
    jx_scope_begin();
    jx_array *xs[4];
    for (int i = 0; i < c->nin; i++) xs[i] = make_input(&c->in[i], in_axes[i], 3);
    char what[160];
    snprintf(what, sizeof what, "%s (config %d: in_axes %d %d %d, out_axis %d)", c->name, k,
             in_axes[0], c->nin > 1 ? in_axes[1] : 0, c->nin > 2 ? in_axes[2] : 0, out_axes[0]);
    check_vmap(what, f, xs, in_axes, out_axes);
    jx_scope_end(0, NULL);
  }
  jx_fn_free(f);
}

#define F32(...) {JX_FLOAT32, G_F, __VA_ARGS__}
#define S23 2, {2, 3}
#define S234 3, {2, 3, 4}

static void test_elementwise(void) {
  for (int p = 0; p < PRIM_NUM; p++) {
    PrimKind k = prim_kind((Prim)p);
    if (k != PRIM_KIND_UNARY && k != PRIM_KIND_UNARY_PRED && k != PRIM_KIND_BINARY &&
        k != PRIM_KIND_COMPARE)
      continue;
    Gen g = G_F;
    jx_dtype dt = JX_FLOAT32;
    switch ((Prim)p) {
    case PRIM_log: case PRIM_log2: case PRIM_log1p: case PRIM_sqrt: case PRIM_rsqrt:
    case PRIM_pow: case PRIM_div: case PRIM_rem: g = G_POS; break;
    case PRIM_asin: case PRIM_acos: case PRIM_atanh: g = G_UNIT; break;
    case PRIM_acosh: g = G_GE1; break;
    case PRIM_is_nan: case PRIM_is_inf: g = G_SPECIAL; break;
    case PRIM_not: case PRIM_and: case PRIM_or: case PRIM_xor: dt = JX_INT32, g = G_INT; break;
    case PRIM_shift_left: case PRIM_shift_right: dt = JX_INT32, g = G_SHIFT; break;
    case PRIM_real: case PRIM_imag: case PRIM_conj: dt = JX_COMPLEX64; break;
    default: break;
    }
    int nin = k == PRIM_KIND_BINARY || k == PRIM_KIND_COMPARE ? 2 : 1;
    PrimCase c = {.name = prim_name((Prim)p), .p = (Prim)p, .nin = nin,
                  .in = {{dt, g, S234}, {dt, g, S234}}, .pp = {0}};
    check_prim_case(&c);
  }
  /* Rank 0 operands (batched rank 1) and bool logic. */
  check_prim_case(&(PrimCase){"mul rank 0", PRIM_mul, 2, {F32(0, {0}), F32(0, {0})}, {0}});
  /* complex operands through the same elementwise rule */
  check_prim_case(&(PrimCase){"div c64", PRIM_div, 2, {{JX_COMPLEX64, G_F, S234}, {JX_COMPLEX64, G_F, S234}}, {0}});
  check_prim_case(&(PrimCase){"exp c64", PRIM_exp, 1, {{JX_COMPLEX64, G_F, S234}}, {0}});
  check_prim_case(&(PrimCase){"abs c64", PRIM_abs, 1, {{JX_COMPLEX64, G_F, S234}}, {0}});
  check_prim_case(&(PrimCase){"and bool", PRIM_and, 2, {{JX_BOOL, G_BOOL, S23}, {JX_BOOL, G_BOOL, S23}}, {0}});
}

static void test_select_convert(void) {
  check_prim_case(&(PrimCase){"select", PRIM_select, 3,
                              {{JX_BOOL, G_BOOL, S234}, F32(S234), F32(S234)}, {0}});
  check_prim_case(&(PrimCase){"fma", PRIM_fma, 3, {F32(S234), F32(S234), F32(S234)}, {0}});
  check_prim_case(&(PrimCase){"select rank 1", PRIM_select, 3,
                              {{JX_BOOL, G_BOOL, 1, {5}}, {JX_INT32, G_INT, 1, {5}}, {JX_INT32, G_INT, 1, {5}}}, {0}});
  check_prim_case(&(PrimCase){"convert f32->i32", PRIM_convert_element_type, 1, {F32(S234)},
                              {.dtype = JX_INT32}});
  check_prim_case(&(PrimCase){"convert i32->bool", PRIM_convert_element_type, 1,
                              {{JX_INT32, G_INT, S23}}, {.dtype = JX_BOOL}});
  check_prim_case(&(PrimCase){"convert f32->f16", PRIM_convert_element_type, 1, {F32(S23)},
                              {.dtype = JX_FLOAT16}});
  check_prim_case(&(PrimCase){"bitcast f32->i32", PRIM_bitcast_convert_type, 1, {F32(S234)},
                              {.dtype = JX_INT32}});
  check_prim_case(&(PrimCase){"bitcast i16->f16", PRIM_bitcast_convert_type, 1,
                              {{JX_INT16, G_INT, S23}}, {.dtype = JX_FLOAT16}});
}

static void test_reduce(void) {
  static const struct { int naxes, axes[3]; } sets[] = {{0, {0}}, {1, {0}}, {1, {1}}, {1, {2}},
                                                         {2, {0, 2}}, {2, {2, 1}}, {3, {0, 1, 2}}};
  Prim ps[] = {PRIM_reduce_sum, PRIM_reduce_prod, PRIM_reduce_max, PRIM_reduce_min,
               PRIM_reduce_and, PRIM_reduce_or};
  for (size_t i = 0; i < sizeof ps / sizeof *ps; i++)
    for (size_t s = 0; s < sizeof sets / sizeof *sets; s++) {
      bool logical = ps[i] == PRIM_reduce_and || ps[i] == PRIM_reduce_or;
      PrimCase c = {.name = prim_name(ps[i]), .p = ps[i], .nin = 1,
                    .in = {{logical ? JX_BOOL : JX_FLOAT32, logical ? G_BOOL : G_F, S234}},
                    .pp = {.naxes = sets[s].naxes}};
      memcpy(c.pp.axes, sets[s].axes, sizeof sets[s].axes);
      check_prim_case(&c);
    }
}

static void test_movement(void) {
  check_prim_case(&(PrimCase){"reshape 234->64", PRIM_reshape, 1, {F32(S234)}, {.ndim = 2, .shape = {6, 4}}});
  check_prim_case(&(PrimCase){"reshape 234->24", PRIM_reshape, 1, {F32(S234)}, {.ndim = 1, .shape = {24}}});
  check_prim_case(&(PrimCase){"reshape 23->3121", PRIM_reshape, 1, {F32(S23)}, {.ndim = 4, .shape = {3, 1, 2, 1}}});
  check_prim_case(&(PrimCase){"reshape 1->0d", PRIM_reshape, 1, {F32(1, {1})}, {.ndim = 0}});
  check_prim_case(&(PrimCase){"transpose 201", PRIM_transpose, 1, {F32(S234)}, {.naxes = 3, .axes = {2, 0, 1}}});
  check_prim_case(&(PrimCase){"transpose 10", PRIM_transpose, 1, {F32(S23)}, {.naxes = 2, .axes = {1, 0}}});
  check_prim_case(&(PrimCase){"broadcast 31->234", PRIM_broadcast_in_dim, 1, {F32(2, {3, 1})},
                              {.naxes = 2, .axes = {1, 2}, .ndim = 3, .shape = {2, 3, 4}}});
  check_prim_case(&(PrimCase){"broadcast 0d->23", PRIM_broadcast_in_dim, 1, {F32(0, {0})},
                              {.naxes = 0, .ndim = 2, .shape = {2, 3}}});
  check_prim_case(&(PrimCase){"broadcast 3->32", PRIM_broadcast_in_dim, 1, {F32(1, {3})},
                              {.naxes = 1, .axes = {0}, .ndim = 2, .shape = {3, 2}}});
  check_prim_case(&(PrimCase){"pad", PRIM_pad, 1, {F32(S234)},
                              {.start = {1, 0, 2}, .stop = {0, 2, 1}, .value = -7.5}});
  check_prim_case(&(PrimCase){"slice", PRIM_slice, 1, {F32(S234)},
                              {.start = {1, 0, 1}, .stop = {2, 3, 4}, .step = {1, 2, 2}}});
  check_prim_case(&(PrimCase){"rev 02", PRIM_rev, 1, {F32(S234)}, {.naxes = 2, .axes = {0, 2}}});
  check_prim_case(&(PrimCase){"rev 1", PRIM_rev, 1, {F32(S234)}, {.naxes = 1, .axes = {1}}});
  check_prim_case(&(PrimCase){"stop_gradient", PRIM_stop_gradient, 1, {F32(S234)}, {0}});
  check_prim_case(&(PrimCase){"sort axis 1", PRIM_sort, 1, {{JX_FLOAT32, G_SPECIAL, 3, {2, 3, 4}}}, {.axis = 1}});
  check_prim_case(&(PrimCase){"sort axis 0 int", PRIM_sort, 1, {{JX_INT32, G_INT, 2, {5, 3}}}, {.axis = 0}});
  check_prim_case(&(PrimCase){"sort with payload", PRIM_sort, 2,
                              {{JX_INT32, G_INT, 2, {3, 6}}, F32(2, {3, 6})}, {.axis = 1}});
  check_prim_case(&(PrimCase){"sort three operands", PRIM_sort, 3,
                              {F32(2, {4, 3}), {JX_INT32, G_INT, 2, {4, 3}}, F32(2, {4, 3})},
                              {.axis = 0}});
  /* linear algebra: batch dims move to the front (results equal the loop exactly) */
  check_prim_case(&(PrimCase){"cholesky", PRIM_cholesky, 1, {F32(3, {2, 3, 3})}, {0}});
  check_prim_case(&(PrimCase){"triangular_solve left lower", PRIM_triangular_solve, 2,
                              {F32(2, {3, 3}), F32(2, {3, 2})}, {.flags = LINALG_LEFT_SIDE | LINALG_LOWER}});
  check_prim_case(&(PrimCase){"triangular_solve right transposed", PRIM_triangular_solve, 2,
                              {F32(3, {2, 3, 3}), F32(3, {2, 4, 3})}, {.flags = LINALG_TRANSPOSE_A}});
  check_prim_case(&(PrimCase){"lu", PRIM_lu, 1, {F32(2, {3, 4})}, {0}});
  check_prim_case(&(PrimCase){"qr", PRIM_qr, 1, {F32(2, {4, 3})}, {0}});
  check_prim_case(&(PrimCase){"qr full", PRIM_qr, 1, {F32(2, {4, 3})}, {.flags = LINALG_FULL_MATRICES}});
  check_prim_case(&(PrimCase){"eigh", PRIM_eigh, 1, {F32(2, {3, 3})}, {.flags = LINALG_LOWER}});
  check_prim_case(&(PrimCase){"svd", PRIM_svd, 1, {F32(2, {3, 4})}, {.flags = LINALG_COMPUTE_UV}});
  check_prim_case(&(PrimCase){"svd values", PRIM_svd, 1, {F32(3, {2, 4, 3})}, {0}});
  check_prim_case(&(PrimCase){"eig", PRIM_eig, 1, {F32(3, {2, 3, 3})},
                               {.flags = LINALG_COMPUTE_LEFT | LINALG_COMPUTE_RIGHT}});
  check_prim_case(&(PrimCase){"eigvals", PRIM_eig, 1, {F32(2, {4, 4})}, {0}});
  check_prim_case(&(PrimCase){"tridiagonal_solve", PRIM_tridiagonal_solve, 4,
                              {F32(1, {4}), F32(1, {4}), F32(1, {4}), F32(2, {4, 2})}, {0}});
  check_prim_case(&(PrimCase){"tridiagonal_solve batched", PRIM_tridiagonal_solve, 4,
                              {F32(2, {2, 3}), F32(2, {2, 3}), F32(2, {2, 3}), F32(3, {2, 3, 1})}, {0}});
  check_prim_case(&(PrimCase){"scatter_add axis 1", PRIM_scatter_add, 3,
                              {F32(2, {3, 4}), {JX_INT32, G_IDX, 1, {5}}, F32(2, {3, 5})}, {.axis = 1}});
  check_prim_case(&(PrimCase){"scatter_add axis 0", PRIM_scatter_add, 3,
                              {F32(2, {4, 2}), {JX_INT32, G_IDX, 2, {2, 3}}, F32(3, {2, 3, 2})}, {.axis = 0}});
  /* uint32 keys and counts from small ints (wrapped); both words */
  check_prim_case(&(PrimCase){"threefry2x32", PRIM_threefry2x32, 4,
                              {{JX_UINT32, G_SHIFT, 2, {2, 3}}, {JX_UINT32, G_INT, 2, {2, 3}},
                               {JX_UINT32, G_SHIFT, 2, {2, 3}}, {JX_UINT32, G_INT, 2, {2, 3}}},
                              {0}});
}

static void test_concatenate(void) {
  check_prim_case(&(PrimCase){"concatenate axis 0", PRIM_concatenate, 3,
                              {F32(2, {1, 3}), F32(2, {2, 3}), F32(2, {4, 3})}, {.axis = 0}});
  check_prim_case(&(PrimCase){"concatenate axis 1", PRIM_concatenate, 2,
                              {F32(3, {2, 1, 4}), F32(3, {2, 3, 4})}, {.axis = 1}});
  check_prim_case(&(PrimCase){"concatenate axis 2", PRIM_concatenate, 3,
                              {F32(S234), F32(3, {2, 3, 1}), F32(S234)}, {.axis = 2}});
}

static void test_gather(void) {
  InSpec idx1 = {JX_INT32, G_IDX, 1, {4}}, idx2 = {JX_INT32, G_IDX, 2, {2, 3}};
  check_prim_case(&(PrimCase){"gather axis 0", PRIM_gather, 2, {F32(2, {5, 4}), idx2}, {.axis = 0}});
  check_prim_case(&(PrimCase){"gather axis 1", PRIM_gather, 2, {F32(2, {4, 5}), idx2}, {.axis = 1}});
  check_prim_case(&(PrimCase){"gather axis 1 of 3", PRIM_gather, 2, {F32(3, {2, 5, 3}), idx1}, {.axis = 1}});
  check_prim_case(&(PrimCase){"gather axis 2", PRIM_gather, 2, {F32(3, {2, 3, 5}), idx2}, {.axis = 2}});
  check_prim_case(&(PrimCase){"gather 0-d idx", PRIM_gather, 2,
                              {F32(2, {5, 4}), {JX_INT32, G_IDX, 0, {0}}}, {.axis = 0}});
  /* Narrow index dtypes: clamping happens before the batch offset is added. */
  check_prim_case(&(PrimCase){"gather int8 idx", PRIM_gather, 2,
                              {F32(2, {5, 4}), {JX_INT8, G_IDX, 2, {2, 3}}}, {.axis = 0}});
  check_prim_case(&(PrimCase){"gather uint8 idx", PRIM_gather, 2,
                              {F32(2, {3, 5}), {JX_UINT8, G_SHIFT, 1, {6}}}, {.axis = 1}});
  check_prim_case(&(PrimCase){"gather int idx", PRIM_gather, 2,
                              {{JX_INT32, G_INT, 2, {5, 2}}, idx2}, {.axis = 0}});
}

static void test_dot_general(void) {
  /* matmul: (2,3) x (3,4) */
  check_prim_case(&(PrimCase){"dot matmul", PRIM_dot_general, 2, {F32(S23), F32(2, {3, 4})},
                              {.ncontract = 1, .lhs_contract = {1}, .rhs_contract = {0}}});
  /* contract over a middle lhs dim and last rhs dim: (2,3,4) x (5,3) -> (2,4,5) */
  check_prim_case(&(PrimCase){"dot middle", PRIM_dot_general, 2, {F32(S234), F32(2, {5, 3})},
                              {.ncontract = 1, .lhs_contract = {1}, .rhs_contract = {1}}});
  /* batched: (2,3,4) x (2,4,5), batch 0/0, contract 2/1 -> (2,3,5) */
  check_prim_case(&(PrimCase){"dot batched", PRIM_dot_general, 2, {F32(S234), F32(3, {2, 4, 5})},
                              {.ncontract = 1, .lhs_contract = {2}, .rhs_contract = {1},
                               .nbatch = 1, .lhs_batch = {0}, .rhs_batch = {0}}});
  /* batch dims not leading: (3,2,4) x (4,5,2), batch 1/2, contract 2/0 -> (2,3,5) */
  check_prim_case(&(PrimCase){"dot batch inside", PRIM_dot_general, 2,
                              {F32(3, {3, 2, 4}), F32(3, {4, 5, 2})},
                              {.ncontract = 1, .lhs_contract = {2}, .rhs_contract = {0},
                               .nbatch = 1, .lhs_batch = {1}, .rhs_batch = {2}}});
  /* outer product: no contraction; and a full contraction to a scalar */
  check_prim_case(&(PrimCase){"dot outer", PRIM_dot_general, 2, {F32(1, {3}), F32(1, {4})}, {0}});
  check_prim_case(&(PrimCase){"dot vdot", PRIM_dot_general, 2, {F32(S23), F32(S23)},
                              {.ncontract = 2, .lhs_contract = {0, 1}, .rhs_contract = {0, 1}}});
  check_prim_case(&(PrimCase){"dot int", PRIM_dot_general, 2,
                              {{JX_INT32, G_INT, S23}, {JX_INT32, G_INT, 2, {3, 2}}},
                              {.ncontract = 1, .lhs_contract = {1}, .rhs_contract = {0}}});
}

/* iota has no operands: it is never batched, but appears inside batched functions. */
static jx_status iota_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *i = prim_convert(prim_iota(JX_INT32, 2, (int64_t[]){2, 3}, 1), JX_FLOAT32, false);
  out[0] = prim_binary(PRIM_mul, in[0], i);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_iota(void) {
  covered[PRIM_iota] = true;
  jx_fn *f = jx_fn_new("iota", 1, 1, iota_fn, NULL);
  InSpec s = F32(S23);
  for (int k = 0; k < 3; k++) {
    int ax = (int[]){0, 1, -1}[k];
    jx_array *x = make_input(&s, ax, 4);
    check_vmap("iota", f, &x, &ax, (int[]){-1});
    jx_free(x);
  }
  jx_fn_free(f);
}

/* A jitted function called inside a batched one: one jit equation, batched by its
 * rule (the jaxpr batched and called once), equal to the loop. */
static jx_status inner_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_add(jx_mul(jx_sin(in[0]), in[1]), jx_sum(in[0], 0, NULL, false));
  out[1] = jx_cos(in[1]);
  return JX_OK;
}

static jx_status outer_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *r[2];
  jx_status s = jx_call(ctx, in, r);
  if (s != JX_OK) return s;
  out[0] = jx_multiply(r[0], jx_scalar(2.0));
  out[1] = r[1];
  return JX_OK;
}

static void test_call(void) {
  covered[PRIM_jit] = true;
  jx_fn *g = jx_fn_new("inner", 2, 2, inner_fn, NULL), *jg = jx_jit(g);
  jx_fn *f = jx_fn_new("outer", 2, 2, outer_fn, jg);
  InSpec s = F32(S23);
  for (int k = 0; k < 4; k++) {
    int in_axes[2] = {(int[]){0, 1, -1, NM}[k], (int[]){0, NM, 0, 1}[k]};
    jx_array *xs[2] = {make_input(&s, in_axes[0], 3), make_input(&s, in_axes[1], 3)};
    check_vmap("nested jit", f, xs, in_axes, (int[]){0, -1});
    jx_free(xs[0]), jx_free(xs[1]);
  }
  jx_fn_free(f), jx_fn_free(jg), jx_fn_free(g);
}

/* lax.cond whose predicate depends on x: batched when x is (every branch runs, lanes
 * selected), unbatched when only y is (one cond of batched branches); equal to the loop. */
static jx_status br_a(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_mul(jx_sin(in[0]), in[1]);
  return JX_OK;
}
static jx_status br_b(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_add(jx_cos(in[1]), in[0]);
  return JX_OK;
}
static jx_status cond_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_fn **br = ctx;
  jx_array *pred = jx_greater(jx_sum(in[0], 0, NULL, false), jx_scalar(0.0));
  return jx_lax_cond(pred, br[0], br[1], 2, in, out);
}

static void test_cond(void) {
  covered[PRIM_cond] = true;
  jx_fn *br[2] = {jx_fn_new("a", 2, 1, br_a, NULL), jx_fn_new("b", 2, 1, br_b, NULL)};
  jx_fn *f = jx_fn_new("cond", 2, 1, cond_fn, br);
  InSpec s = F32(S23);
  for (int k = 0; k < 4; k++) {
    int in_axes[2] = {(int[]){0, 1, NM, NM}[k], (int[]){0, NM, 0, 1}[k]};
    jx_array *xs[2] = {make_input(&s, in_axes[0], 5), make_input(&s, in_axes[1], 5)};
    check_vmap("cond", f, xs, in_axes, (int[]){0});
    jx_free(xs[0]), jx_free(xs[1]);
  }
  jx_fn_free(f), jx_fn_free(br[0]), jx_fn_free(br[1]);
}

/* custom_jvp, custom_vjp, checkpoint (each batches its primal and its rules) and
 * debug_print (once per element) under vmap, equal to the loop; grad inside vmap runs
 * custom_lin's transpose on batched residuals. */
static jx_fn *custom_self;
static jx_status sin_mul(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_mul(jx_sin(in[0]), in[1]);
  return JX_OK;
}
static jx_status sin_mul_jvp(void *ctx, jx_array *const *in, jx_array **out) {
  jx_status s = jx_call(custom_self, in, out); /* x, y, tx, ty */
  out[1] = jx_add(jx_mul(jx_mul(jx_cos(in[0]), in[2]), in[1]), jx_mul(jx_sin(in[0]), in[3]));
  return s;
}
static jx_status sin_mul_fwd(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_mul(jx_sin(in[0]), in[1]), out[1] = in[0], out[2] = in[1];
  return JX_OK;
}
static jx_status sin_mul_bwd(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_mul(jx_mul(jx_cos(in[0]), in[1]), in[2]), out[1] = jx_mul(jx_sin(in[0]), in[2]);
  return JX_OK;
}
static jx_status printing(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_mul(in[0], in[1]);
  return jx_debug_print("{} {}", 2, in);
}
static jx_status sum_first(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *r[1];
  jx_status s = jx_call(ctx, in, r);
  out[0] = s == JX_OK ? jx_sum(r[0], 0, NULL, false) : NULL;
  return s;
}

static void test_custom(void) {
  covered[PRIM_custom_jvp_call] = covered[PRIM_custom_vjp_call] = covered[PRIM_checkpoint] = true;
  covered[PRIM_custom_lin] = covered[PRIM_debug_print] = true;
  jx_fn *f = jx_fn_new("sin_mul", 2, 1, sin_mul, NULL);
  jx_fn *rule = jx_fn_new("sin_mul_jvp", 4, 2, sin_mul_jvp, NULL);
  jx_fn *fwd = jx_fn_new("fwd", 2, 3, sin_mul_fwd, NULL), *bwd = jx_fn_new("bwd", 3, 2, sin_mul_bwd, NULL);
  jx_fn *fs[4] = {jx_custom_jvp(f, rule, 0, NULL), jx_custom_vjp(f, fwd, bwd),
                  jx_checkpoint(f, JX_CHECKPOINT_NOTHING_SAVEABLE), jx_fn_new("printing", 2, 1, printing, NULL)};
  custom_self = fs[0];
  InSpec s = F32(S23);
  int devnull = open("/dev/null", O_WRONLY), saved = dup(1);
  for (int c = 0; c < 4; c++) {
    jx_fn *sum = jx_fn_new("sum", 2, 1, sum_first, fs[c]), *g = jx_grad(sum, 2, (int[]){0, 1});
    for (int k = 0; k < 4; k++) {
      int in_axes[2] = {(int[]){0, 1, NM, -1}[k], (int[]){0, NM, 0, 1}[k]};
      jx_array *xs[2] = {make_input(&s, in_axes[0], 3), make_input(&s, in_axes[1], 3)};
      fflush(stdout), dup2(devnull, 1); /* debug_print's lines */
      check_vmap(jx_fn_name(fs[c]), fs[c], xs, in_axes, (int[]){0});
      check_vmap("grad", g, xs, in_axes, (int[]){0, 0});
      fflush(stdout), dup2(saved, 1);
      jx_free(xs[0]), jx_free(xs[1]);
    }
    jx_fn_free(g), jx_fn_free(sum);
  }
  close(devnull), close(saved);
  for (int c = 0; c < 4; c++) jx_fn_free(fs[c]);
  jx_fn_free(f), jx_fn_free(rule), jx_fn_free(fwd), jx_fn_free(bwd);
}

/* special_call (jax.scipy.special's lax functions): gammainc(x, y) and gammaln(x) of
 * positive inputs, batched along either operand, equal to the loop. */
static jx_status special_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *a = jx_add(jx_abs(in[0]), jx_scalar(0.5)), *x = jx_add(jx_abs(in[1]), jx_scalar(0.25));
  out[0] = jx_add(jx_special_gammainc(a, x), jx_special_gammaln(a));
  return out[0] ? JX_OK : jx_last_status();
}
static void test_special_call(void) {
  covered[PRIM_special_call] = true;
  jx_fn *f = jx_fn_new("special", 2, 1, special_fn, NULL);
  InSpec s = F32(S23);
  for (int k = 0; k < 3; k++) {
    int in_axes[2] = {(int[]){0, 1, NM}[k], (int[]){0, NM, 1}[k]};
    jx_array *xs[2] = {make_input(&s, in_axes[0], 5), make_input(&s, in_axes[1], 5)};
    check_vmap("special_call", f, xs, in_axes, (int[]){0});
    jx_free(xs[0]), jx_free(xs[1]);
  }
  jx_fn_free(f);
}

/* fft (lax.fft): rfft of a real row, a complex fft of it and irfft back, batched along
 * either operand's leading or trailing axis, equal to the loop. */
static jx_status fft_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *r = jx_fft_rfft(in[0], -1, -1, NULL);
  jx_array *z = jx_fft_fft(jx_mul(r, jx_fft_rfft(in[1], -1, -1, "ortho")), -1, -1, "forward");
  out[0] = jx_fft_irfft(z, 3, -1, NULL);
  return out[0] ? JX_OK : jx_last_status();
}
static void test_fft(void) {
  covered[PRIM_fft] = true;
  jx_fn *f = jx_fn_new("fft", 2, 1, fft_fn, NULL);
  InSpec s = F32(S23);
  for (int k = 0; k < 3; k++) {
    int in_axes[2] = {(int[]){0, 1, NM}[k], (int[]){0, NM, 1}[k]};
    jx_array *xs[2] = {make_input(&s, in_axes[0], 5), make_input(&s, in_axes[1], 5)};
    check_vmap("fft", f, xs, in_axes, (int[]){0});
    jx_free(xs[0]), jx_free(xs[1]);
  }
  jx_fn_free(f);
}

/* while_loop with a predicate that depends on x (lanes finish after different trip
 * counts when x is batched) and scan over x's leading axis, carrying a row of y. */
static jx_status lw_cond(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_less(jx_sum(in[0], 0, NULL, false), jx_scalar(3.0));
  return JX_OK;
}
static jx_status lw_body(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_add(in[0], jx_scalar(0.5));
  out[1] = jx_mul(in[1], jx_scalar(1.1));
  return JX_OK;
}
static jx_status while_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_fn *c = jx_fn_new("c", 2, 1, lw_cond, NULL), *b = jx_fn_new("b", 2, 2, lw_body, NULL);
  jx_status s = jx_lax_while_loop(c, b, 2, in, out);
  jx_fn_free(c), jx_fn_free(b);
  return s;
}
static jx_status ls_body(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_add(jx_mul(in[0], in[1]), jx_scalar(1.0));
  out[1] = jx_sin(in[0]);
  return JX_OK;
}
static jx_status scan_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_fn *b = jx_fn_new("f", 2, 2, ls_body, NULL);
  jx_array *c0 = jx_squeeze(jx_slice(in[1], 1, (int64_t[]){0}, (int64_t[]){1}, NULL), 1, (int[]){0});
  jx_status s = jx_lax_scan(b, 1, &c0, 1, in, -1, ctx != NULL, 1, out, out + 1);
  jx_fn_free(b);
  return s;
}

static void test_loops(void) {
  covered[PRIM_while] = covered[PRIM_scan] = true;
  jx_fn *fw = jx_fn_new("while", 2, 2, while_fn, NULL), *fs = jx_fn_new("scan", 2, 2, scan_fn, NULL);
  jx_fn *fr = jx_fn_new("scan_reverse", 2, 2, scan_fn, (void *)1);
  InSpec s = F32(S23);
  for (int k = 0; k < 4; k++) {
    int in_axes[2] = {(int[]){0, 1, NM, NM}[k], (int[]){0, NM, 0, 1}[k]};
    jx_array *xs[2] = {make_input(&s, in_axes[0], 5), make_input(&s, in_axes[1], 5)};
    check_vmap("while", fw, xs, in_axes, (int[]){0, 0});
    check_vmap("scan", fs, xs, in_axes, (int[]){0, 0});
    check_vmap("scan reverse", fr, xs, in_axes, (int[]){0, 0});
    jx_free(xs[0]), jx_free(xs[1]);
  }
  jx_fn_free(fw), jx_fn_free(fs), jx_fn_free(fr);
}

/* Collectives under vmap, on a mesh axis "i" of one device bound on this thread (their
 * values between several devices are tested in tests/trace/test_shard_map.c against JAX;
 * here the batching rules -- batch dims kept or moved in front, axes shifted -- are
 * checked against a loop). */
static jx_status collective_fn(void *ctx, jx_array *const *in, jx_array **out) {
  switch ((int)(intptr_t)ctx) {
  case 0: out[0] = jx_lax_psum(in[0], "i"); break;
  case 1: out[0] = jx_lax_pmax(in[0], "i"); break;
  case 2: out[0] = jx_lax_pmin(in[0], "i"); break;
  case 3: out[0] = jx_lax_all_gather(in[0], "i", 1, false); break;
  case 4: out[0] = jx_lax_psum_scatter(in[0], "i", 1, true); break;
  case 5: out[0] = jx_lax_ppermute(in[0], "i", 1, (const int[][2]){{0, 0}}); break;
  case 6: out[0] = jx_lax_all_to_all(in[0], "i", 1, 0, true); break;
  default: out[0] = jx_add(in[0], jx_astype(jx_lax_axis_index("i"), JX_FLOAT32)); break;
  }
  return out[0] ? JX_OK : jx_last_status();
}

static void test_collectives(void) {
  static const Prim prims[] = {PRIM_psum, PRIM_pmax, PRIM_pmin, PRIM_all_gather, PRIM_psum_scatter,
                               PRIM_ppermute, PRIM_all_to_all, PRIM_axis_index};
  Comm *c = comm_new(1);
  AxisFrame frame = {.name = "i", .size = 1, .index = 0, .comm = c, .device = backend_default()};
  collective_set_axes(1, &frame);
  InSpec s = F32(S23);
  for (int k = 0; k < 8; k++) {
    covered[prims[k]] = true;
    jx_fn *f = jx_fn_new(prim_name(prims[k]), 1, 1, collective_fn, (void *)(intptr_t)k);
    for (int a = 0; a < 3; a++) {
      int in_axis = (int[]){0, 1, 2}[a];
      jx_array *x = make_input(&s, in_axis, 4);
      check_vmap(prim_name(prims[k]), f, &x, &in_axis, (int[]){0});
      jx_free(x);
    }
    jx_fn_free(f);
  }
  collective_set_axes(0, NULL);
  comm_free(c);
}

/* vmap of a shard_map itself (the shard_map primitive's batching rule; a mesh of the one
 * cpu device here -- tests/trace/test_shard_map_transforms.c has 4 devices and JAX's
 * goldens): the batch axis anywhere, the body's psum and axis_index batched too. */
static jx_status shard_body(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_add(jx_multiply(in[0], jx_lax_psum(in[0], "m")), jx_astype(jx_lax_axis_index("m"), JX_FLOAT32));
  return out[0] ? JX_OK : jx_last_status();
}
static void test_shard_map(void) {
  covered[PRIM_shard_map] = true;
  jx_mesh *m = jx_mesh_new(1, (int64_t[]){1}, (const char *[]){"m"}, NULL);
  jx_fn *f = jx_fn_new("shard_body", 1, 1, shard_body, NULL);
  jx_fn *sm = jx_shard_map(f, m, (const char *[]){"m"}, (const char *[]){"m"});
  InSpec s = F32(S23);
  for (int a = 0; a < 3; a++) {
    int in_axis = a;
    jx_array *x = make_input(&s, in_axis, 4);
    check_vmap("shard_map", sm, &x, &in_axis, (int[]){a == 2 ? 1 : 0});
    jx_free(x);
  }
  jx_fn_free(sm), jx_fn_free(f);
  jx_mesh_free(m);
}

static void test_rule_table(void) {
  for (int p = 0; p < PRIM_NUM; p++) {
    const char *why = NULL;
    bool has = vmap_has_rule((Prim)p, &why);
    CHECK_MSG(has || (why && *why), "%s has no batching rule and no documented reason",
              prim_name((Prim)p));
    CHECK_MSG(!(has && why), "%s has both a rule and a reason", prim_name((Prim)p));
  }
}

/* Run last: every primitive went through vmap in the tests above. */
static void test_coverage(void) {
  if (test_sharded()) return; /* the other shards ran the rest */
  for (int p = 0; p < PRIM_NUM; p++)
    CHECK_MSG(covered[p], "%s was not tested under vmap", prim_name((Prim)p));
}

/* --------------------------------------------------- out_axes, pass-through */

/* (x, y) -> (x + y, x, y, sum(x)) : outputs passed through, mapped and not. */
static jx_status multi_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_add(in[0], in[1]);
  out[1] = in[0];
  out[2] = in[1];
  out[3] = jx_sum(in[0], 0, NULL, false);
  return out[0] && out[3] ? JX_OK : jx_last_status();
}

static void test_out_axes(void) {
  jx_fn *f = jx_fn_new("multi", 2, 4, multi_fn, NULL);
  InSpec s = F32(S23);
  struct { int in[2], out[4]; } cfg[] = {
      {{0, 0}, {0, 0, 0, 0}},         {{1, NM}, {-1, 2, 0, 0}},
      {{NM, 2}, {1, 0, -1, -1}},      {{-1, 0}, {2, -3, 1, 0}},
      {{0, NM}, {0, 1, NM, 0}},       /* the unmapped y comes back as it is */
      {{NM, 0}, {1, NM, 0, 0}},
  };
  for (size_t k = 0; k < sizeof cfg / sizeof *cfg; k++) {
    jx_array *xs[2] = {make_input(&s, cfg[k].in[0], 3), make_input(&s, cfg[k].in[1], 3)};
    char what[64];
    snprintf(what, sizeof what, "out_axes config %zu", k);
    check_vmap(what, f, xs, cfg[k].in, cfg[k].out);
    jx_free(xs[0]), jx_free(xs[1]);
  }
  /* NULL axes: everything 0. */
  jx_array *xs[2] = {make_input(&s, 0, 2), make_input(&s, 0, 2)};
  check_vmap("NULL axes", f, xs, NULL, NULL);
  /* The same array may be two outputs; with out_axes NM the unmapped output is the
   * input itself (a borrowed array passed through, with a fresh reference). */
  jx_fn *v = jx_vmap(f, (int[]){0, NM}, (int[]){0, 0, NM, 0});
  jx_array *y = make_input(&s, NM, 0), *out[4];
  int64_t live = jx_live_arrays();
  CHECK_EQ_INT(jx_call(v, (jx_array *[]){xs[0], y}, out), JX_OK);
  CHECK(out[2] == y);
  CHECK(out[1] == xs[0]); /* moving axis 0 to 0 is no operation */
  CHECK_EQ_INT(jx_live_arrays(), live + 2);
  for (int o = 0; o < 4; o++) jx_free(out[o]);
  CHECK_EQ_INT(jx_live_arrays(), live);
  jx_free(xs[0]), jx_free(xs[1]), jx_free(y);
  jx_fn_free(v);
  jx_fn_free(f);
}

/* --------------------------------------------------------- nested vmap */

static jx_status bin_fn(void *ctx, jx_array *const *in, jx_array **out) {
  /* x: (3,), y: (3, 4) -> (4,): x @ y + sum(y) */
  out[0] = jx_add(jx_matmul(in[0], in[1]), jx_sum(in[1], 0, NULL, false));
  return out[0] ? JX_OK : jx_last_status();
}

static void test_nested(void) {
  jx_fn *f = jx_fn_new("bin", 2, 1, bin_fn, NULL);
  struct { int inner[2], inner_out, outer[2], outer_out; int64_t shx[3], shy[4]; int ndx, ndy; } cfg[] = {
      /* inner maps x axis 0 and y axis 0; outer maps both at 0 again */
      {{0, 0}, 0, {0, 0}, 0, {2, 5, 3}, {2, 5, 3, 4}, 3, 4},
      /* inner maps only y (axis 2), outer only x (axis 1) */
      {{NM, 2}, 1, {1, NM}, -1, {3, 2}, {3, 4, 5}, 2, 3},
      /* inner maps x at -1, y unmapped; outer maps y at 0 and x at 0 */
      {{-1, NM}, 0, {0, 0}, 1, {2, 3, 5}, {2, 3, 4}, 3, 3},
  };
  for (size_t k = 0; k < sizeof cfg / sizeof *cfg; k++) {
    jx_fn *inner = jx_vmap(f, cfg[k].inner, &cfg[k].inner_out);
    jx_array *xs[2] = {make_array(JX_FLOAT32, G_F, cfg[k].ndx, cfg[k].shx),
                       make_array(JX_FLOAT32, G_F, cfg[k].ndy, cfg[k].shy)};
    char what[64];
    snprintf(what, sizeof what, "nested config %zu", k);
    check_vmap(what, inner, xs, cfg[k].outer, &cfg[k].outer_out);
    /* and vmap(vmap(f)) against the inner vmap checked on each slice */
    for (int64_t b = 0; b < 2 && k == 0; b++) {
      jx_array *sl[2] = {slice_at(xs[0], 0, b), slice_at(xs[1], 0, b)};
      check_vmap("inner slice", f, sl, cfg[k].inner, &cfg[k].inner_out);
      jx_free(sl[0]), jx_free(sl[1]);
    }
    jx_free(xs[0]), jx_free(xs[1]);
    jx_fn_free(inner);
  }
  /* Triple nesting of an elementwise op with the batch axes in every position. */
  PrimCase add = {"add", PRIM_add, 2, {F32(1, {3}), F32(1, {3})}, {0}};
  jx_fn *g = jx_fn_new("add", 2, 1, prim_impl, &add);
  jx_fn *v1 = jx_vmap(g, (int[]){0, NM}, (int[]){1});
  jx_fn *v2 = jx_vmap(v1, (int[]){1, 0}, (int[]){0});
  jx_fn_free(v1);
  jx_array *x = make_array(JX_FLOAT32, G_F, 4, (int64_t[]){2, 3, 4, 3});
  jx_array *y = make_array(JX_FLOAT32, G_F, 3, (int64_t[]){3, 4, 3});
  check_vmap("triple", v2, (jx_array *[]){x, y}, (int[]){2, 1}, (int[]){-1});
  jx_free(x), jx_free(y);
  jx_fn_free(v2);
  jx_fn_free(g);
  jx_fn_free(f);
}

/* ------------------------------------------------- functions of the public API */

/* (W (4,3), b (3,), x (4,)) -> tanh(x @ W + b), log_softmax-like normalization */
static jx_status mlp_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *h = jx_tanh(jx_add(jx_matmul(in[2], in[0]), in[1]));
  jx_array *m = jx_max(h, 1, (int[]){-1}, true);
  jx_array *z = jx_subtract(h, m);
  out[0] = jx_subtract(z, jx_log(jx_sum(jx_exp(z), 1, (int[]){-1}, true)));
  out[1] = jx_argmax(h, 0, false);
  return out[0] && out[1] ? JX_OK : jx_last_status();
}

/* (table (5,3), idx (4,) int) -> take, where, clip, concatenate, pad, flip, roll... */
static jx_status misc_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *t = jx_take(in[0], in[1], 0);                          /* (4,3) */
  jx_array *w = jx_where(jx_greater(t, jx_scalar(0)), t, jx_multiply(t, jx_scalar(0.1)));
  jx_array *c = jx_concatenate(2, (jx_array *[]){w, jx_flip(in[0], 0, NULL)}, 0); /* (9,3) */
  jx_array *p = jx_pad(c, (int64_t[]){1, 0, 0, 2}, 0.5);           /* (10,5) */
  jx_array *r = jx_roll(jx_transpose(p, NULL), 2, 1);              /* (5,10) */
  jx_array *v = jx_var(r, 1, (int[]){1}, 1, false);                /* (5,) */
  out[0] = jx_add(jx_tril(jx_outer(v, v), 0), jx_clip(jx_mean(r, 0, NULL, false), jx_scalar(-1), NULL));
  out[1] = jx_tile(jx_repeat(in[1], 2, 0), 2, (int64_t[]){2, 1});
  return out[0] && out[1] ? JX_OK : jx_last_status();
}

static void test_public_functions(void) {
  jx_fn *mlp = jx_fn_new("mlp", 3, 2, mlp_fn, NULL);
  InSpec W = F32(2, {4, 3}), b = F32(1, {3}), x = F32(1, {4});
  struct { int in[3], out[2]; } cfg[] = {
      {{NM, NM, 0}, {0, 0}}, {{0, NM, 1}, {1, -1}}, {{2, 0, NM}, {0, 0}}, {{-1, -1, -1}, {-1, 0}},
  };
  for (size_t k = 0; k < sizeof cfg / sizeof *cfg; k++) {
    jx_array *xs[3] = {make_input(&W, cfg[k].in[0], 3), make_input(&b, cfg[k].in[1], 3),
                       make_input(&x, cfg[k].in[2], 3)};
    char what[32];
    snprintf(what, sizeof what, "mlp config %zu", k);
    check_vmap(what, mlp, xs, cfg[k].in, cfg[k].out);
    jx_free(xs[0]), jx_free(xs[1]), jx_free(xs[2]);
  }
  jx_fn_free(mlp);

  jx_fn *misc = jx_fn_new("misc", 2, 2, misc_fn, NULL);
  InSpec table = F32(2, {5, 3}), idx = {JX_INT32, G_IDX, 1, {4}};
  int in_cfg[][2] = {{0, NM}, {NM, 0}, {0, 0}, {2, -1}, {1, 0}};
  for (size_t k = 0; k < sizeof in_cfg / sizeof *in_cfg; k++) {
    jx_array *xs[2] = {make_input(&table, in_cfg[k][0], 3), make_input(&idx, in_cfg[k][1], 3)};
    int out_axes[2] = {(int)k % 3 - 1, in_cfg[k][1] == NM ? NM : 0};
    char what[32];
    snprintf(what, sizeof what, "misc config %zu", k);
    check_vmap(what, misc, xs, in_cfg[k], out_axes);
    jx_free(xs[0]), jx_free(xs[1]);
  }
  jx_fn_free(misc);
}

/* A closure: ctx holds a concrete array, a constant of the trace. */
static jx_status closure_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *c = ctx;
  out[0] = jx_add(jx_multiply(in[0], c), jx_sum(c, 0, NULL, false));
  return out[0] ? JX_OK : jx_last_status();
}

static void test_closure(void) {
  jx_array *c = make_array(JX_FLOAT32, G_F, 1, (int64_t[]){4});
  jx_fn *f = jx_fn_new("closure", 1, 1, closure_fn, c);
  InSpec s = F32(1, {4});
  jx_array *x = make_input(&s, 1, 3);
  check_vmap("closure", f, &x, (int[]){1}, (int[]){0});
  jx_free(x), jx_free(c);
  jx_fn_free(f);
}

/* Weak types survive batching: jx_scalar-only arithmetic stays weak. */
static jx_status weak_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_multiply(in[0], jx_scalar(2.0));
  return out[0] ? JX_OK : jx_last_status();
}

static void test_weak_and_sizes(void) {
  jx_fn *f = jx_fn_new("weak", 1, 1, weak_fn, NULL);
  jx_fn *v = jx_vmap(f, NULL, NULL);
  jx_scope_begin();
  jx_array *x = jx_broadcast_to(jx_scalar(1.5), 1, (int64_t[]){3}), *y = NULL;
  CHECK(jx_is_weak(x));
  CHECK_EQ_INT(jx_call(v, &x, &y), JX_OK);
  CHECK(y && jx_is_weak(y) && jx_dtype_of(y) == JX_FLOAT32);
  CHECK(y && jx_item(jx_sum(y, 0, NULL, false)) == 9.0);
  /* A batch of one, and a batch of zero (shapes only). */
  x = make_array(JX_FLOAT32, G_F, 2, (int64_t[]){1, 2});
  check_vmap("batch of one", f, &x, (int[]){0}, (int[]){1});
  x = jx_zeros(2, (int64_t[]){0, 2}, JX_FLOAT32);
  CHECK_EQ_INT(jx_call(v, &x, &y), JX_OK);
  CHECK(y && jx_ndim(y) == 2 && jx_shape(y)[0] == 0 && jx_shape(y)[1] == 2);
  jx_scope_end(0, NULL);
  jx_fn_free(v);
  jx_fn_free(f);
}

/* ------------------------------------------------------- with autodiff */

/* f(w (3,), x (3,)) = sum(sin(x) * w) + sum(w * w * x) : a scalar */
static jx_status loss_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *w = in[0], *x = in[1];
  out[0] = jx_add(jx_sum(jx_multiply(jx_sin(x), w), 0, NULL, false),
                  jx_sum(jx_multiply(jx_multiply(w, w), x), 0, NULL, false));
  return out[0] ? JX_OK : jx_last_status();
}

/* h(w, xs (B,3)) = sum over the batch of vmap(f, {NM, 0})(w, xs) */
static jx_status batch_loss_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_fn *v = jx_vmap(ctx, (int[]){NM, 0}, NULL);
  jx_array *per[1];
  jx_status s = jx_call(v, in, per);
  jx_fn_free(v);
  if (s != JX_OK) return s;
  out[0] = jx_sum(per[0], 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_autodiff(void) {
  jx_fn *f = jx_fn_new("loss", 2, 1, loss_fn, NULL);
  jx_fn *g = jx_grad(f, 2, (int[]){0, 1});
  CHECK(g != NULL);
  InSpec s = F32(1, {3});
  /* vmap(grad(f)) against grad(f) on each slice */
  int cfg[][2] = {{0, 0}, {NM, 0}, {0, NM}, {-1, 0}};
  for (size_t k = 0; k < sizeof cfg / sizeof *cfg; k++) {
    jx_array *xs[2] = {make_input(&s, cfg[k][0], 4), make_input(&s, cfg[k][1], 4)};
    char what[32];
    snprintf(what, sizeof what, "vmap(grad) config %zu", k);
    check_vmap(what, g, xs, cfg[k], (int[]){0, -1});
    jx_free(xs[0]), jx_free(xs[1]);
  }
  /* grad of a vmapped sum: d/dw sum_b f(w, x_b) = sum_b grad_w f(w, x_b), and
   * d/dxs[b] = grad_x f(w, x_b). w is an unmapped JVP value under the batch trace. */
  jx_fn *h = jx_fn_new("batch_loss", 2, 1, batch_loss_fn, f);
  jx_fn *gh = jx_grad(h, 2, (int[]){0, 1});
  jx_scope_begin();
  jx_array *w = make_input(&s, NM, 0), *xs = make_input(&s, 0, 4), *got[2] = {0};
  CHECK_EQ_INT(jx_call(gh, (jx_array *[]){w, xs}, got), JX_OK);
  jx_array *dw = NULL, *dx[4];
  for (int64_t b = 0; b < 4; b++) {
    jx_array *gb[2];
    CHECK_EQ_INT(jx_call(g, (jx_array *[]){w, slice_at(xs, 0, b)}, gb), JX_OK);
    dw = dw ? jx_add(dw, gb[0]) : gb[0];
    dx[b] = gb[1];
  }
  check_same("grad(vmap) dw", got[0], dw);
  check_same("grad(vmap) dxs", got[1], jx_stack(4, dx, 0));
  /* jvp through vmap: the tangent of vmap(f) is vmap of f's tangents. */
  jx_fn *v = jx_vmap(f, (int[]){NM, 0}, NULL);
  jx_array *tw = make_input(&s, NM, 0), *tx = make_input(&s, 0, 4), *po, *to;
  CHECK_EQ_INT(jx_jvp(v, (jx_array *[]){w, xs}, (jx_array *[]){tw, tx}, &po, &to), JX_OK);
  for (int64_t b = 0; b < 4; b++) {
    jx_array *pb, *tb;
    CHECK_EQ_INT(jx_jvp(f, (jx_array *[]){w, slice_at(xs, 0, b)},
                        (jx_array *[]){tw, slice_at(tx, 0, b)}, &pb, &tb), JX_OK);
    dx[b] = tb;
  }
  check_same("jvp(vmap)", to, jx_stack(4, dx, 0));
  jx_clear_error();
  jx_scope_end(0, NULL);
  jx_fn_free(v);
  jx_fn_free(gh);
  jx_fn_free(h);
  jx_fn_free(g);
  jx_fn_free(f);
}

static jx_status sin_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sin(in[0]);
  return out[0] ? JX_OK : jx_last_status();
}

/* Staging a vmapped function records the batched primitives. */
static void test_make_jaxpr(void) {
  jx_fn *f = jx_fn_new("sin", 1, 1, sin_fn, NULL);
  jx_fn *v = jx_vmap(f, (int[]){1}, (int[]){1});
  jx_array *x = jx_zeros(2, (int64_t[]){3, 2}, JX_FLOAT32);
  char *text = jx_make_jaxpr(v, &x);
  CHECK_MSG(text && strstr(text, "sin") && strstr(text, "f32[3,2]"), "jaxpr: %s",
            text ? text : jx_last_error());
  free(text);
  jx_free(x);
  jx_fn_free(v);
  jx_fn_free(f);
}

/* ------------------------------------------------------------ errors */

static jx_status bad_add_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = prim_binary(PRIM_add, in[0], jx_zeros(1, (int64_t[]){7}, JX_FLOAT32));
  return out[0] ? JX_OK : jx_last_status();
}

static jx_array *leaked;
static jx_status leak_fn(void *ctx, jx_array *const *in, jx_array **out) {
  leaked = array_retain(in[0]);
  out[0] = jx_negative(in[0]);
  return out[0] ? JX_OK : jx_last_status();
}

static jx_status rank_fn(void *ctx, jx_array *const *in, jx_array **out) {
  int64_t shape[JX_MAX_NDIM];
  for (int d = 0; d < JX_MAX_NDIM; d++) shape[d] = 1;
  shape[0] = jx_size(in[0]);
  out[0] = jx_reshape(in[0], JX_MAX_NDIM, shape);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_errors(void) {
  jx_fn *f = jx_fn_new("multi", 2, 4, multi_fn, NULL);
  jx_array *a = jx_zeros(2, (int64_t[]){3, 2}, JX_FLOAT32), *b = jx_zeros(2, (int64_t[]){4, 2}, JX_FLOAT32);
  jx_array *out[4];
  int64_t live = jx_live_arrays();

  jx_fn *v = jx_vmap(f, NULL, NULL); /* sizes 3 and 4 on axis 0 */
  CHECK_STR(jx_fn_name(v), "vmap(multi)");
  CHECK_EQ_INT(jx_call(v, (jx_array *[]){a, b}, out), JX_ERR_SHAPE);
  CHECK(out[0] == NULL && out[3] == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_vmap(multi): mapped axes have different sizes: input 1 has size 4 on axis 0 but input 0 has size 3");
  jx_fn_free(v);

  v = jx_vmap(f, (int[]){2, 0}, NULL);
  CHECK_EQ_INT(jx_call(v, (jx_array *[]){a, a}, out), JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_vmap(multi): in_axes[0] = 2 is out of range for input 0 of float32[3,2]");
  jx_fn_free(v);
  v = jx_vmap(f, (int[]){0, -3}, NULL);
  CHECK_EQ_INT(jx_call(v, (jx_array *[]){a, a}, out), JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "in_axes[1] = -3");
  jx_fn_free(v);

  v = jx_vmap(f, (int[]){NM, NM}, NULL);
  CHECK_EQ_INT(jx_call(v, (jx_array *[]){a, b}, out), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_vmap(multi): no input is mapped");
  jx_fn_free(v);

  v = jx_vmap(f, (int[]){0, NM}, (int[]){0, NM, 0, 0}); /* output 1 is x: mapped */
  CHECK_EQ_INT(jx_call(v, (jx_array *[]){a, b}, out), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "output 1 depends on the mapped axis but out_axes[1] is JX_NOT_MAPPED");
  jx_fn_free(v);

  v = jx_vmap(f, (int[]){0, NM}, (int[]){0, 2, 0, 0}); /* output 1 has rank 1 unbatched */
  CHECK_EQ_INT(jx_call(v, (jx_array *[]){a, b}, out), JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "out_axes[1] = 2 is out of range for output 1 of rank 1");
  jx_fn_free(v);

  /* The function's own error propagates, and nothing leaks. */
  jx_fn *g = jx_fn_new("bad_add", 1, 1, bad_add_fn, NULL);
  v = jx_vmap(g, NULL, NULL);
  CHECK_EQ_INT(jx_call(v, &a, out), JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "add");
  jx_fn_free(v);
  jx_fn_free(g);

  /* A tracer kept past its vmap has escaped. */
  g = jx_fn_new("leak", 1, 1, leak_fn, NULL);
  v = jx_vmap(g, NULL, NULL);
  CHECK_EQ_INT(jx_call(v, &a, out), JX_OK);
  jx_free(out[0]);
  CHECK(prim_unary(PRIM_neg, leaked) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "escaped");
  array_drop(leaked);
  jx_fn_free(v);
  jx_fn_free(g);

  /* Batching a result of rank JX_MAX_NDIM would exceed the rank limit. */
  g = jx_fn_new("rank", 1, 1, rank_fn, NULL);
  v = jx_vmap(g, NULL, NULL);
  CHECK_EQ_INT(jx_call(v, &a, out), JX_ERR_UNSUPPORTED);
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "vmap: batching reshape needs rank 17");
  jx_fn_free(v);
  jx_fn_free(g);

  CHECK(jx_vmap(NULL, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_vmap: the function is NULL");
  CHECK_EQ_INT(jx_live_arrays(), live);
  jx_free(a), jx_free(b);
  jx_fn_free(f);
}

int main(void) {
  RUN(test_rule_table);
  RUN(test_collectives);
  RUN(test_shard_map);
  RUN_SPLIT(test_elementwise);
  RUN_SPLIT(test_select_convert);
  RUN_SPLIT(test_reduce);
  RUN_SPLIT(test_movement);
  RUN_SPLIT(test_concatenate);
  RUN_SPLIT(test_gather);
  RUN_SPLIT(test_dot_general);
  RUN(test_iota);
  RUN(test_call);
  RUN(test_cond);
  RUN(test_custom);
  RUN(test_special_call);
  RUN(test_loops);
  RUN(test_fft);
  RUN(test_coverage);
  RUN(test_out_axes);
  RUN(test_nested);
  RUN(test_public_functions);
  RUN(test_closure);
  RUN(test_weak_and_sizes);
  RUN(test_autodiff);
  RUN(test_make_jaxpr);
  RUN(test_errors);
  return test_finish();
}
