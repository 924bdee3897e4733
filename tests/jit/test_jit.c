/* test_jit.c -- jit against eager: every kind of primitive fused into kernels, random
 * fused graphs, trace caching by signature, views as outputs, composition with grad
 * and vmap, and errors. */
#include <math.h>
#include <stdlib.h>

#include "backend/cpu/cpu.h"
#include "core/config.h"
#include "jit/jit.h"
#include "test.h"
#include "trace/lower.h"

/* Compares two arrays: same dtype and shape; values equal up to a few float32 ulps
 * (jit runs compiled kernels whose vector libm calls differ from the interpreter's
 * correctly rounded results by up to 4 ulps, docs/api.md; arithmetic itself is exact). */
static void check_close(jx_array *a, jx_array *b, const char *what, double rel_cpu);
static void check_same(jx_array *a, jx_array *b, const char *what) { check_close(a, b, what, 1e-6); }

/* check_same with a bound of rel_cpu off cuda. */
static void check_close(jx_array *a, jx_array *b, const char *what, double rel_cpu) {
  CHECK_MSG(a && b, "%s: NULL (%s)", what, jx_last_error());
  if (!a || !b) return;
  CHECK_EQ_INT(jx_dtype_of(a), jx_dtype_of(b));
  CHECK_EQ_INT(jx_ndim(a), jx_ndim(b));
  for (int d = 0; d < jx_ndim(a) && d < jx_ndim(b); d++) CHECK_EQ_INT(jx_shape(a)[d], jx_shape(b)[d]);
  if (jx_size(a) != jx_size(b)) return;
  double *x = test_read_f64(a), *y = test_read_f64(b);
  /* cuda: fused and eager reductions may combine in different trees (docs/kernels.md).
   * The bound is relative to the array's largest magnitude: a few-ulp libm difference
   * becomes a larger relative one in an element that sums terms which cancel. */
  double rel = strcmp(jx_device_of(a), "cuda") == 0 ? 1e-5 : rel_cpu, scale = 0;
  for (int64_t i = 0; y && i < jx_size(b); i++)
    if (isfinite(y[i]) && fabs(y[i]) > scale) scale = fabs(y[i]);
  for (int64_t i = 0; x && y && i < jx_size(a); i++)
    CHECK_MSG(x[i] == y[i] || (isnan(x[i]) && isnan(y[i])) || fabs(x[i] - y[i]) <= rel * scale,
              "%s[%lld]: %.9g vs %.9g", what,
              (long long)i, x[i], y[i]);
  free(x), free(y);
}

/* jf's program for inputs `in` (compiled by an earlier call) has `kernels` kernel steps
 * and `routines` routine steps: what fusion promises, asserted. */
static void check_steps(jx_fn *jf, jx_array *const *in, int kernels, int routines, const char *what) {
  const Program *p = jit_program_for(jf, in);
  CHECK_MSG(p != NULL, "%s: no compiled program", what);
  if (!p) return;
  CHECK_MSG(jit_program_nkernels(p) == kernels && jit_program_nroutines(p) == routines,
            "%s: %d kernels and %d routines, expected %d and %d", what, jit_program_nkernels(p),
            jit_program_nroutines(p), kernels, routines);
}

/* A model-like function touching every primitive family. */
static jx_status mixed(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *x = in[0], *w = in[1]; /* x (4,6), w (6,3) */
  jx_array *h = jx_tanh(jx_add(jx_matmul(x, w), jx_scalar(0.5)));          /* (4,3) */
  jx_array *s = jx_sum(jx_exp(jx_sub(h, jx_max(h, 1, (int[]){1}, true))), 1, (int[]){1}, false);
  jx_array *t = jx_transpose(jx_slice(x, 2, (int64_t[]){0, 5}, (int64_t[]){4, 0},
                                      (int64_t[]){1, -2}), NULL);           /* (3,4) */
  jx_array *c = jx_concatenate(2, (jx_array *[]){t, jx_flip(t, 0, NULL)}, 1); /* (3,8) */
  jx_array *p = jx_pad(c, (int64_t[]){1, 0, 0, 2}, 1.5);                     /* (4,10) */
  jx_array *g = jx_take(p, jx_array_from((int32_t[]){3, 0, 9, 9}, JX_INT32, 1, (int64_t[]){4}), 1);
  out[0] = jx_add(jx_mean(g, 1, (int[]){0}, false), s);                      /* (4,) */
  out[1] = jx_where(jx_greater(p, jx_scalar(0.0)), p, jx_mul(p, jx_scalar(0.1)));
  out[2] = jx_transpose(h, NULL); /* a view output */
  return JX_OK;
}

static void test_mixed_matches_eager(void) {
  uint32_t seed = 1;
  jx_array *x = test_randn(&seed, 2, (int64_t[]){4, 6}), *w = test_randn(&seed, 2, (int64_t[]){6, 3});
  jx_fn *f = jx_fn_new("mixed", 2, 3, mixed, NULL), *jf = jx_jit(f);
  jx_array *e[3], *j[3], *j2[3];
  CHECK_EQ_INT(jx_call(f, (jx_array *[]){x, w}, e), JX_OK);
  CHECK_EQ_INT(jx_call(jf, (jx_array *[]){x, w}, j), JX_OK);
  CHECK_EQ_INT(jx_call(jf, (jx_array *[]){x, w}, j2), JX_OK); /* cached program */
  for (int i = 0; i < 3; i++) {
    check_same(e[i], j[i], "jit vs eager");
    check_same(j[i], j2[i], "second call");
    jx_free(e[i]), jx_free(j[i]), jx_free(j2[i]);
  }
  jx_free(x), jx_free(w);
  jx_fn_free(jf), jx_fn_free(f);
}

/* Random elementwise/broadcast/reduce/view chains. */
typedef struct Recipe {
  int ops[12];
  int n;
} Recipe;

static jx_status random_graph(void *ctx, jx_array *const *in, jx_array **out) {
  const Recipe *r = ctx;
  jx_array *a = in[0], *b = in[1]; /* (5,4) and (4,) */
  for (int i = 0; i < r->n; i++) {
    switch (r->ops[i]) {
    case 0: a = jx_add(a, b); break;
    case 1: a = jx_mul(a, jx_sin(a)); break;
    case 2: a = jx_sub(a, jx_mean(a, 1, (int[]){0}, true)); break;
    case 3: a = jx_flip(a, 1, (int[]){1}); break;
    case 4: a = jx_maximum(a, jx_scalar(-0.25)); break;
    case 5: a = jx_astype(jx_astype(a, JX_FLOAT16), JX_FLOAT32); break;
    case 6: a = jx_reshape(jx_transpose(jx_reshape(a, 2, (int64_t[]){4, 5}), NULL), 2, (int64_t[]){5, 4}); break;
    case 7: b = jx_sum(a, 1, (int[]){0}, false); break;
    case 8: a = jx_where(jx_less(a, b), a, jx_exp(jx_negative(a))); break;
    case 9: a = jx_roll(a, 2, 0); break;
    default: a = jx_sqrt(jx_abs(a)); break;
    }
  }
  out[0] = jx_add(a, b);
  return JX_OK;
}

static void test_random_fused_graphs(void) {
  uint32_t seed = 7;
  for (int trial = 0; trial < 40; trial++) {
    Recipe r = {.n = 1 + trial % 12};
    for (int i = 0; i < r.n; i++) {
      seed = seed * 1664525u + 1013904223u;
      r.ops[i] = (int)((seed >> 10) % 11);
    }
    jx_array *a = test_randn(&seed, 2, (int64_t[]){5, 4}), *b = test_randn(&seed, 1, (int64_t[]){4});
    jx_fn *f = jx_fn_new("random", 2, 1, random_graph, &r), *jf = jx_jit(f);
    jx_array *e, *j;
    CHECK_EQ_INT(jx_call(f, (jx_array *[]){a, b}, &e), JX_OK);
    CHECK_EQ_INT(jx_call(jf, (jx_array *[]){a, b}, &j), JX_OK);
    check_same(e, j, "random graph");
    jx_free(e), jx_free(j), jx_free(a), jx_free(b);
    jx_fn_free(jf), jx_fn_free(f);
  }
}

static int ncalls;
static jx_status counted(void *ctx, jx_array *const *in, jx_array **out) {
  ncalls++;
  out[0] = jx_sum(jx_square(in[0]), 0, NULL, false);
  return JX_OK;
}

static void test_trace_cache(void) {
  jx_fn *f = jx_fn_new("counted", 1, 1, counted, NULL), *jf = jx_jit(f);
  jx_array *a = jx_ones(1, (int64_t[]){3}, JX_FLOAT32), *b = jx_ones(1, (int64_t[]){4}, JX_FLOAT32);
  jx_array *o;
  ncalls = 0;
  for (int i = 0; i < 3; i++) {
    CHECK_EQ_INT(jx_call(jf, &a, &o), JX_OK);
    CHECK(jx_item(o) == 3.0);
    jx_free(o);
  }
  CHECK_EQ_INT(ncalls, 1); /* traced once */
  CHECK_EQ_INT(jx_call(jf, &b, &o), JX_OK);
  CHECK(jx_item(o) == 4.0);
  jx_free(o);
  CHECK_EQ_INT(ncalls, 2); /* a new shape traces again */
  jx_scope_begin();
  jx_array *t = jx_transpose(jx_reshape(jx_arange(0, 6, 1, JX_FLOAT32), 2, (int64_t[]){2, 3}), NULL);
  jx_array *r = jx_ravel(t); /* a non-contiguous input view of 6 elements */
  jx_array *want = jx_sum(jx_square(r), 0, NULL, false);
  jx_scope_end(3, (jx_array *[]){t, r, want});
  CHECK_EQ_INT(jx_call(jf, &r, &o), JX_OK);
  check_same(want, o, "view input");
  jx_free(o), jx_free(want), jx_free(r), jx_free(t);
  jx_free(a), jx_free(b);
  jx_fn_free(jf), jx_fn_free(f);
}

static jx_status loss(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sum(jx_mul(jx_tanh(jx_matmul(in[1], in[0])), in[1]), 0, NULL, false);
  return JX_OK;
}

static void test_composes_with_grad_and_vmap(void) {
  uint32_t seed = 3;
  jx_array *w = test_randn(&seed, 2, (int64_t[]){3, 3}), *x = test_randn(&seed, 1, (int64_t[]){3});
  jx_fn *f = jx_fn_new("loss", 2, 1, loss, NULL);
  jx_fn *jf = jx_jit(f);
  jx_fn *g = jx_grad(f, 1, NULL), *gj = jx_grad(jf, 1, NULL), *jg = jx_jit(g);
  jx_array *a, *b, *c;
  CHECK_EQ_INT(jx_call(g, (jx_array *[]){w, x}, &a), JX_OK);
  CHECK_EQ_INT(jx_call(gj, (jx_array *[]){w, x}, &b), JX_OK);
  CHECK_EQ_INT(jx_call(jg, (jx_array *[]){w, x}, &c), JX_OK);
  check_same(a, b, "grad(jit(f))");
  double *va = test_read_f64(a), *vc = test_read_f64(c);
  for (int i = 0; i < 9; i++) CHECK_NEAR(va[i], vc[i], 1e-6);
  free(va), free(vc);
  jx_free(a), jx_free(b), jx_free(c);
  /* vmap(jit(f)) over a batch of x */
  jx_array *xs = test_randn(&seed, 2, (int64_t[]){4, 3});
  jx_fn *vf = jx_vmap(jf, (int[]){JX_NOT_MAPPED, 0}, NULL), *vj = jx_vmap(f, (int[]){JX_NOT_MAPPED, 0}, NULL);
  CHECK_EQ_INT(jx_call(vf, (jx_array *[]){w, xs}, &a), JX_OK);
  CHECK_EQ_INT(jx_call(vj, (jx_array *[]){w, xs}, &b), JX_OK);
  check_same(a, b, "vmap(jit(f))");
  jx_free(a), jx_free(b), jx_free(xs), jx_free(w), jx_free(x);
  jx_fn_free(vf), jx_fn_free(vj), jx_fn_free(jg), jx_fn_free(gj), jx_fn_free(g), jx_fn_free(jf);
  jx_fn_free(f);
}

static jx_status bias_relu(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_maximum(jx_add(in[0], in[1]), jx_scalar(0.0));
  return JX_OK;
}

/* Kernels reading a broadcast row (b[gidx % C]) render as row loops on cpu: check rows
 * that do not divide the thread chunks (odd C, partial rows at chunk ends) against the
 * interpreter, exactly. */
static void test_row_loops_match_interp(void) {
  static const int64_t shapes[3][2] = {{300, 129}, {1000, 8}, {77, 1001}};
  uint32_t seed = 11;
  for (int s = 0; s < 3; s++) {
    jx_scope_begin();
    jx_array *x = test_randn(&seed, 2, shapes[s]), *b = test_randn(&seed, 1, &shapes[s][1]);
    jx_fn *f = jx_fn_new("bias_relu", 2, 1, bias_relu, NULL), *jf = jx_jit(f);
    jx_array *got, *want;
    CHECK_EQ_INT(jx_call(jf, (jx_array *[]){x, b}, &got), JX_OK);
    check_steps(jf, (jx_array *[]){x, b}, 1, 0, "bias_relu: one kernel");
    jx_array *xi = jx_device_put(x, "interp"), *bi = jx_device_put(b, "interp");
    CHECK_EQ_INT(jx_call(f, (jx_array *[]){xi, bi}, &want), JX_OK);
    double *g = test_read_f64(got), *w = test_read_f64(want);
    for (int64_t i = 0; i < jx_size(want); i++)
      CHECK_MSG(g[i] == w[i], "shape %d, element %lld: %g vs %g", s, (long long)i, g[i], w[i]);
    free(g), free(w);
    jx_fn_free(jf), jx_fn_free(f);
    jx_scope_end(0, NULL);
  }
}

/* A conv block's loss: conv 3x3 SAME (padding reads), relu, 2x2 max pool, weighted sum. */
static jx_status conv_loss(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  static const jx_conv_options nhwc = {.lhs_spec = "NHWC", .rhs_spec = "HWIO", .out_spec = "NHWC"};
  jx_array *c = jx_lax_conv_general_dilated(in[0], in[1], 2, (int64_t[]){1, 1}, JX_PADDING_SAME,
                                            NULL, &nhwc);
  jx_array *r = jx_lax_max_pool(jx_nn_relu(c), 2, (int64_t[]){2, 2}, (int64_t[]){2, 2},
                                JX_PADDING_VALID, NULL);
  out[0] = jx_sum(jx_mul(r, in[2]), 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

/* Kernels whose indices are digits of the flat index (im2col, pooling and their
 * gradients) render as loop nests on cpu, specialized on small select chains and
 * unswitched at image borders: jit(grad) on cpu against the interpreter, with thread
 * chunks that cut the nests' blocks. */
static void test_conv_nests_match_interp(void) {
  uint32_t seed = 5;
  static const int64_t xs[2][4] = {{6, 10, 12, 8}, {3, 14, 14, 16}};
  for (int s = 0; s < 2; s++) {
    jx_scope_begin();
    int64_t ws[4] = {3, 3, xs[s][3], 12}, rs[4] = {xs[s][0], xs[s][1] / 2, xs[s][2] / 2, 12};
    jx_array *x = test_randn(&seed, 4, xs[s]), *w = test_randn(&seed, 4, ws), *m = test_randn(&seed, 4, rs);
    jx_fn *f = jx_fn_new("conv_loss", 3, 1, conv_loss, NULL);
    jx_fn *g = jx_value_and_grad(f, 2, (int[]){0, 1}), *jg = jx_jit(g);
    jx_array *got[3], *want[3];
    CHECK_EQ_INT(jx_call(jg, (jx_array *[]){x, w, m}, got), JX_OK);
    jx_array *in[3] = {jx_device_put(x, "interp"), jx_device_put(w, "interp"),
                       jx_device_put(m, "interp")};
    CHECK_EQ_INT(jx_call(g, in, want), JX_OK);
    static const char *const what[3] = {"loss", "dx", "dw"};
    for (int o = 0; o < 3; o++) check_same(got[o], want[o], what[o]);
    jx_fn_free(jg), jx_fn_free(g), jx_fn_free(f);
    jx_scope_end(0, NULL);
  }
}

/* A concatenation along the last axis, and the gradient of its four slices (an LSTM's
 * gates: the transposes of the slices, padded and summed): their kernels compare the
 * innermost index with the segments' borders, so the cpu renderer splits the row loop
 * there (render_inner_split). Segments of 37, 64, 5 and 90 columns cross vector widths;
 * 33 rows and thread chunks cut the rows. jit on cpu against the interpreter. */
static jx_status gates_loss(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  static const int64_t w[5] = {0, 37, 101, 106, 196};
  jx_array *z = in[0], *g[4];
  for (int k = 0; k < 4; k++) g[k] = jx_slice(z, 2, (int64_t[]){0, w[k]}, (int64_t[]){33, w[k + 1]}, NULL);
  jx_array *c = jx_concatenate(4, (jx_array *[]){jx_tanh(g[0]), jx_nn_sigmoid(g[1]), jx_mul(g[2], g[2]), jx_exp(g[3])}, 1);
  out[0] = jx_sum(jx_mul(c, in[1]), 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_concat_rows_match_interp(void) {
  uint32_t seed = 13;
  jx_scope_begin();
  jx_array *z = test_randn(&seed, 2, (int64_t[]){33, 196}), *m = test_randn(&seed, 2, (int64_t[]){33, 196});
  jx_fn *f = jx_fn_new("gates_loss", 2, 1, gates_loss, NULL);
  jx_fn *g = jx_value_and_grad(f, 1, (int[]){0}), *jg = jx_jit(g);
  jx_array *got[2], *want[2];
  CHECK_EQ_INT(jx_call(jg, (jx_array *[]){z, m}, got), JX_OK);
  jx_array *in[2] = {jx_device_put(z, "interp"), jx_device_put(m, "interp")};
  CHECK_EQ_INT(jx_call(g, in, want), JX_OK);
  /* The loss sums 6468 float32 terms (up to ~20 in magnitude, sum of magnitudes 7565)
   * that cancel to 13.38, so each side's summation rounding alone is ~1e-5 -- relative
   * to the loss that is beyond check_same's bound (exactly, in float64, 13.3836092; the
   * interpreter gave 13.3835754 and the kernels, whose exp is within 1 ulp, 13.383606).
   * The bound is one float32 rounding of the sum of magnitudes instead. */
  double *zv = test_read_f64(z), *mv = test_read_f64(m), mag = 0;
  for (int i = 0; i < 33 * 196; i++) {
    int col = i % 196;
    double v = zv[i], c = col < 37 ? tanh(v) : col < 101 ? 1 / (1 + exp(-v)) : col < 106 ? v * v : exp(v);
    mag += fabs(c * mv[i]);
  }
  double *gl = test_read_f64(got[0]), *wl = test_read_f64(want[0]);
  CHECK_MSG(fabs(gl[0] - wl[0]) <= 0x1p-24 * mag, "loss: %.9g vs %.9g (sum of magnitudes %g)", gl[0], wl[0], mag);
  free(zv), free(mv), free(gl), free(wl);
  check_same(got[1], want[1], "dz");
  jx_fn_free(jg), jx_fn_free(g), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* An Adam-like update: the two new moments read the gradient, so jit fuses their
 * kernels into one with two outputs (lower.c, fuse_siblings); the new parameters read
 * both moments (outputs, so materialized) in a second kernel. */
static jx_status adam_like(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_array *p = in[0], *g = in[1], *m = in[2], *v = in[3];
  out[0] = jx_add(jx_mul(m, jx_scalar(0.9)), jx_mul(g, jx_scalar(0.1)));
  out[1] = jx_add(jx_mul(v, jx_scalar(0.999)), jx_mul(jx_mul(g, g), jx_scalar(0.001)));
  out[2] = jx_sub(p, jx_div(jx_mul(out[0], jx_scalar(0.01)), jx_add(jx_sqrt(out[1]), jx_scalar(1e-8))));
  return JX_OK;
}

static void test_multi_output_matches_interp(void) {
  uint32_t seed = 9;
  static const int64_t sizes[3] = {1, 1000, 70001};
  for (int s = 0; s < 3; s++) {
    jx_scope_begin();
    jx_array *in[4];
    for (int i = 0; i < 4; i++) in[i] = test_randn(&seed, 1, &sizes[s]);
    in[3] = jx_abs(in[3]);
    jx_fn *f = jx_fn_new("adam_like", 4, 3, adam_like, NULL), *jf = jx_jit(f);
    jx_array *got[3], *want[3], *ii[4];
    CHECK_EQ_INT(jx_call(jf, in, got), JX_OK);
    check_steps(jf, in, 2, 0, "adam_like: the moments in one kernel, the parameters in another");
    for (int i = 0; i < 4; i++) ii[i] = jx_device_put(in[i], "interp");
    CHECK_EQ_INT(jx_call(f, ii, want), JX_OK);
    for (int o = 0; o < 3; o++) {
      double *g = test_read_f64(got[o]), *w = test_read_f64(want[o]);
      for (int64_t i = 0; i < sizes[s]; i++)
        CHECK_MSG(g[i] == w[i], "size %lld, output %d, element %lld: %g vs %g",
                  (long long)sizes[s], o, (long long)i, g[i], w[i]);
      free(g), free(w);
    }
    jx_fn_free(jf), jx_fn_free(f);
    jx_scope_end(0, NULL);
  }
}

/* Layer normalization. The two-phase pass (lower.c, fuse_two_phase) fuses a reduction
 * reading an earlier one at its own row -- but here x - mean is two operations on loads
 * (the sum and the mean's division, which is not in the reduction's epilogue), so
 * maybe_share materializes it, the variance reads that buffer instead of x, and nothing
 * fuses: sum, x - mean, sum of squares, normalization, and the two (rows,) divisions
 * are six kernels on the interpreter (asserted, so that a fusion change shows here);
 * cpu and cuda recompute x - mean (Backend.cheap_recompute) and need fewer. */
static jx_status layer_norm(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_array *x = in[0];
  jx_array *mean = jx_mean(x, 1, (int[]){-1}, true);
  jx_array *d = jx_sub(x, mean);
  jx_array *var = jx_mean(jx_mul(d, d), 1, (int[]){-1}, true);
  out[0] = jx_div(d, jx_sqrt(jx_add(var, jx_scalar(1e-5))));
  out[1] = jx_squeeze(var, 1, (int[]){-1});
  out[2] = jx_squeeze(mean, 1, (int[]){-1});
  return JX_OK;
}

/* The spread around the row maximum: sum((x - max)^2) reads the max at its own row, and
 * x - max is one operation, recomputed: the two reductions fuse into one two-phase
 * kernel with two outputs. */
static jx_status max_spread(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_array *m = jx_max(in[0], 1, (int[]){-1}, true), *d = jx_sub(in[0], m);
  out[0] = jx_sum(jx_mul(d, d), 1, (int[]){-1}, false);
  out[1] = jx_squeeze(m, 1, (int[]){-1});
  out[2] = jx_mul(d, jx_scalar(2.0));
  return JX_OK;
}

static void test_two_phase_matches_interp(void) {
  uint32_t seed = 13;
  static const int64_t shapes[3][2] = {{7, 5}, {300, 129}, {33, 1000}};
  for (int s = 0; s < 6; s++) {
    jx_scope_begin();
    jx_array *x = test_randn(&seed, 2, shapes[s % 3]);
    jx_fn *f = s < 3 ? jx_fn_new("layer_norm", 1, 3, layer_norm, NULL)
                     : jx_fn_new("max_spread", 1, 3, max_spread, NULL);
    jx_fn *jf = jx_jit(f);
    jx_array *got[3], *want[3];
    CHECK_EQ_INT(jx_call(jf, &x, got), JX_OK);
    /* max_spread: the two reductions in one two-phase kernel for rows of 16 or more (else
     * two kernels; on cuda, whose warp and thread rows take any length, one), then
     * 2 (x - max) in one elementwise kernel -- or, where the rows are too short for one
     * two-phase kernel, the max kernel's row output (jit/lower.c's fuse_consumer, in the
     * max's place: the sum reads the max in between); squeezes are views */
    /* cpu and cuda recompute x - mean (Backend.cheap_recompute) and fuse row outputs
     * (Backend.row_outputs); the interpreter does neither: its layer norm is 4 kernels
     * (the mean, x - mean, the variance with sqrt(var + eps) as an epilogue output, the
     * division) */
    bool fusing = strcmp(jx_device_of(x), "interp") != 0;
    if (s < 3 && fusing) {
      const Program *p = jit_program_for(jf, &x);
      CHECK_MSG(p && jit_program_nkernels(p) <= 6 && jit_program_nroutines(p) == 0, "layer_norm on %s: %d kernels",
                jx_device_of(x), p ? jit_program_nkernels(p) : -1);
    } else
      /* on cpu and cuda 2 (x - max) is the two-phase kernel's row output */
      check_steps(jf, &x, s < 3 ? 4 : s == 3 ? (strcmp(jx_device_of(x), "cuda") == 0 ? 1 : fusing ? 2 : 3) : fusing ? 1 : 2, 0,
                  s < 3 ? "layer_norm" : "max_spread");
    jx_array *xi = jx_device_put(x, "interp");
    CHECK_EQ_INT(jx_call(f, &xi, want), JX_OK);
    for (int o = 0; o < 3; o++) {
      /* bit for bit, except on cuda, whose warp and block rows combine in trees
       * (docs/kernels.md): there within 1e-5 of the array's largest magnitude */
      double *g = test_read_f64(got[o]), *w = test_read_f64(want[o]), scale = 0;
      double rel = strcmp(jx_device_of(got[o]), "cuda") == 0 ? 1e-5 : 0;
      for (int64_t i = 0; i < jx_size(want[o]); i++) scale = fmax(scale, fabs(w[i]));
      for (int64_t i = 0; i < jx_size(want[o]); i++)
        CHECK_MSG(g[i] == w[i] || fabs(g[i] - w[i]) <= rel * scale, "shape %d, output %d, element %lld: %.9g vs %.9g",
                  s, o, (long long)i, g[i], w[i]);
      free(g), free(w);
    }
    jx_fn_free(jf), jx_fn_free(f);
    jx_scope_end(0, NULL);
  }
}

/* sum((x - max(x))^2) (ctx NULL) or sum((x - min(x))^2) (ctx non-NULL) over rows: the
 * two programs' two-phase kernels differ only in their first phase, and running both on
 * one shape in one process must not share an executable (issue 10's regression). */
static jx_status spread(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *m = ctx ? jx_min(in[0], 1, (int[]){-1}, true) : jx_max(in[0], 1, (int[]){-1}, true);
  jx_array *d = jx_sub(in[0], m);
  out[0] = jx_sum(jx_mul(d, d), 1, (int[]){-1}, false);
  return JX_OK;
}

static void test_two_phase_first_phase_in_cache_key(void) {
  uint32_t seed = 17;
  static int use_min;
  jx_array *x = test_randn(&seed, 2, (int64_t[]){40, 64}), *xi = jx_device_put(x, "interp");
  for (int pass = 0; pass < 2; pass++)
    for (int m = 0; m < 2; m++) {
      jx_fn *f = jx_fn_new(m ? "min_spread" : "max_spread", 1, 1, spread, m ? &use_min : NULL);
      jx_fn *jf = jx_jit(f);
      jx_array *got = NULL, *want = NULL;
      CHECK_EQ_INT(jx_call(jf, &x, &got), JX_OK);
      check_steps(jf, &x, 1, 0, "spread: one two-phase kernel");
      CHECK_EQ_INT(jx_call(f, &xi, &want), JX_OK);
      check_same(got, want, m ? "jit sum((x - min)^2)" : "jit sum((x - max)^2)");
      jx_free(got), jx_free(want);
      jx_fn_free(jf), jx_fn_free(f);
    }
  jx_free(x), jx_free(xi);
}

/* Elementwise cones (lower.c, elementwise_sinks): a shared transcendental value whose
 * every consumer ends in one elementwise result is inlined, not materialized -- sigmoid's
 * exp(-|x|) feeds 1 + z and z / (1 + z), softplus's and silu's likewise -- so each is one
 * kernel; a value also read by a reduction (softmax's exp(x - max)) is a buffer unless
 * the backend recomputes it (Backend.cheap_recompute).
 * Values: the interpreter's, within check_same's few ulps; specials (+-inf, NaN, +-0,
 * far tails) included. */
static jx_status activations(void *ctx, jx_array *const *in, jx_array **out) {
  switch (*(const int *)ctx) {
  case 0: out[0] = jx_nn_sigmoid(in[0]); break;
  case 1: out[0] = jx_nn_softplus(in[0]); break;
  default: out[0] = jx_nn_silu(in[0]); break;
  }
  return JX_OK;
}

static jx_status exp_shared_with_sum(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_array *e = jx_exp(in[0]);
  out[0] = jx_mul(e, jx_sum(e, 0, NULL, false));
  return JX_OK;
}

static void test_elementwise_cones_fuse(void) {
  uint32_t seed = 29;
  jx_scope_begin();
  jx_array *x = test_randn(&seed, 1, (int64_t[]){1000});
  float sp[] = {INFINITY, -INFINITY, NAN, 0.0f, -0.0f, 88.0f, -88.0f, -100.0f, -104.0f, 30.0f, -30.0f, 1e-30f};
  jx_array *s = jx_array_from(sp, JX_FLOAT32, 1, (int64_t[]){12});
  static const int which[3] = {0, 1, 2};
  static const char *const names[3] = {"jit sigmoid", "jit softplus", "jit silu"};
  for (int a = 0; a < 3; a++)
    for (int in = 0; in < 2; in++) {
      jx_array *v = in ? s : jx_mul(x, jx_scalar(20.0));
      jx_fn *f = jx_fn_new(names[a], 1, 1, activations, (void *)&which[a]), *jf = jx_jit(f);
      jx_array *got = NULL, *want = NULL, *vi = jx_device_put(v, "interp");
      CHECK_EQ_INT(jx_call(jf, &v, &got), JX_OK);
      check_steps(jf, &v, 1, 0, names[a]);
      CHECK_EQ_INT(jx_call(f, &vi, &want), JX_OK);
      check_same(got, want, names[a]);
      jx_fn_free(jf), jx_fn_free(f);
    }
  jx_fn *f = jx_fn_new("exp_shared_with_sum", 1, 1, exp_shared_with_sum, NULL), *jf = jx_jit(f);
  jx_array *got = NULL;
  CHECK_EQ_INT(jx_call(jf, &x, &got), JX_OK);
  const Program *p = jit_program_for(jf, &x);
  if (strcmp(jx_device_of(x), "interp") == 0) /* exp, sum, product; cpu and cuda recompute exp */
    CHECK_MSG(p && jit_program_nkernels(p) == 3, "exp shared with a sum: %d kernels", p ? jit_program_nkernels(p) : -1);
  jx_fn_free(jf), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* Epilogues (jit/lower.c, fuse_consumer): an elementwise step reading a reduction's
 * results at its own index is a further output of the reduction's kernel -- an SGD step
 * on a bias b - 0.1 * sum(g, 0) (the column sum's result also an output), and a loss
 * -sum(x) / n of one element. One kernel each, on every backend; the interpreter's
 * values, eagerly. */
static jx_status bias_sgd(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_array *db = jx_sum(in[1], 1, (int[]){0}, false);
  out[0] = jx_subtract(in[0], jx_multiply(jx_scalar(0.1), db));
  out[1] = db;
  out[2] = jx_negative(jx_divide(jx_sum(in[1], 0, NULL, false), jx_scalar(300.0)));
  return JX_OK;
}

static void test_epilogues_fuse(void) {
  uint32_t seed = 31;
  jx_scope_begin();
  jx_array *in[2] = {test_randn(&seed, 1, (int64_t[]){48}), test_randn(&seed, 2, (int64_t[]){300, 48})};
  jx_fn *f = jx_fn_new("bias_sgd", 2, 3, bias_sgd, NULL), *jf = jx_jit(f);
  jx_array *got[3] = {NULL}, *want[3] = {NULL};
  jx_array *ii[2] = {jx_device_put(in[0], "interp"), jx_device_put(in[1], "interp")};
  CHECK_EQ_INT(jx_call(jf, in, got), JX_OK);
  CHECK_EQ_INT(jx_call(f, ii, want), JX_OK);
  /* the column sum with the update, the full sum with the loss */
  check_steps(jf, in, 2, 0, "bias sgd and loss");
  const char *names[3] = {"b - 0.1 db", "db", "-sum / n"};
  for (int o = 0; o < 3; o++) check_same(got[o], want[o], names[o]);
  jx_fn_free(jf), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* The longest chain of steps from p's input `in` to the step writing `slot` (0 if that
 * step does not depend on the input). */
static int chain_to(const Program *p, int in, int slot) {
  int *depth = calloc((size_t)(p->nsteps ? p->nsteps : 1), sizeof *depth), found = 0;
  for (int i = 0; depth && i < p->nsteps; i++) {
    const Step *s = &p->steps[i];
    bool reads = false;
    for (int a = 0; a < step_nargs(s); a++) {
      reads |= p->kinds[s->args[a]] == SLOT_INPUT && p->index[s->args[a]] == in;
      for (int j = 0; j < i; j++)
        for (int o = 0; o < p->steps[j].nout; o++)
          if (p->steps[j].outs[o] == s->args[a] && depth[j] > depth[i]) depth[i] = depth[j];
    }
    if (reads || depth[i]) depth[i]++;
    for (int o = 0; o < s->nout; o++)
      if (s->outs[o] == slot) found = depth[i];
  }
  free(depth);
  return found;
}

/* The log-softmax cross-entropy's gradient over rows of 10 (the MLP's logits): dlogits
 * = -y / n + sum(y / n) softmax reads the sum of exp(x - max) and the sum of the labels'
 * row, which reads only the labels. With row outputs (cpu, cuda) that sum runs first
 * (jit/lower.c, hoist_reductions) and dlogits is the exp sum's row output: two kernels
 * from the logits to it (the max with exp(x - max), then the sum), not three; one on
 * cuda, whose two-phase warp rows take the max too. */
static jx_status xent_loss(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_array *lp = jx_nn_log_softmax(in[0], 1, (int[]){-1}, NULL);
  out[0] = jx_negative(jx_mean(jx_sum(jx_mul(lp, in[1]), 1, (int[]){-1}, false), 0, NULL, false));
  return JX_OK;
}

static void test_xent_grad_chain(void) {
  uint32_t seed = 37;
  jx_scope_begin();
  jx_array *l = test_randn(&seed, 2, (int64_t[]){512, 10});
  float *yv = calloc(5120, sizeof *yv);
  for (int i = 0; yv && i < 512; i++) yv[i * 10 + (i * 7) % 10] = 1.0f;
  jx_array *y = jx_array_from(yv, JX_FLOAT32, 2, (int64_t[]){512, 10}), *in[2] = {l, y};
  free(yv);
  jx_fn *loss = jx_fn_new("xent", 2, 1, xent_loss, NULL), *f = jx_value_and_grad(loss, 1, (int[]){0}), *jf = jx_jit(f);
  jx_array *got[2] = {NULL, NULL}, *want[2] = {NULL, NULL};
  jx_array *ii[2] = {jx_device_put(l, "interp"), jx_device_put(y, "interp")};
  CHECK_EQ_INT(jx_call(jf, in, got), JX_OK);
  CHECK_EQ_INT(jx_call(f, ii, want), JX_OK);
  check_same(got[0], want[0], "xent loss");
  check_same(got[1], want[1], "xent dlogits");
  /* cuda's warp rows fuse two phases over rows of any length: one kernel there */
  const Program *p = jit_program_for(jf, in);
  int want_chain = strcmp(jx_device_of(l), "cuda") == 0 ? 1 : 2;
  if (p && strcmp(jx_device_of(l), "interp") != 0)
    CHECK_MSG(chain_to(p, 0, p->outs[1].slot) == want_chain, "dlogits %d kernels from the logits, want %d",
              chain_to(p, 0, p->outs[1].slot), want_chain);
  jx_fn_free(jf), jx_fn_free(f), jx_fn_free(loss);
  jx_scope_end(0, NULL);
}

/* A biased softmax's exp(l + b - max) -- three operations -- recomputed where
 * Backend.recompute_ops (config_set_recompute_ops, JAXC_RECOMPUTE_OPS) allows 3: the
 * max, the sum of exp and dlogits are then one two-phase kernel with a row output, one
 * kernel from the logits to dlogits, where stored (2 operations, the default) it takes
 * two. Rows of 32 (the cpu fuses two phases over rows of 16 or more). */
static jx_status biased_xent_loss(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_array *lp = jx_nn_log_softmax(jx_add(in[0], in[2]), 1, (int[]){-1}, NULL);
  out[0] = jx_negative(jx_mean(jx_sum(jx_mul(lp, in[1]), 1, (int[]){-1}, false), 0, NULL, false));
  return JX_OK;
}

static void test_recompute_ops(void) {
  uint32_t seed = 41;
  jx_scope_begin();
  jx_array *l = test_randn(&seed, 2, (int64_t[]){256, 32}), *b = test_randn(&seed, 1, (int64_t[]){32});
  float *yv = calloc(256 * 32, sizeof *yv);
  for (int i = 0; yv && i < 256; i++) yv[i * 32 + (i * 5) % 32] = 1.0f;
  jx_array *y = jx_array_from(yv, JX_FLOAT32, 2, (int64_t[]){256, 32}), *in[3] = {l, y, b};
  free(yv);
  jx_array *ii[3] = {jx_device_put(l, "interp"), jx_device_put(y, "interp"), jx_device_put(b, "interp")};
  jx_fn *loss = jx_fn_new("biased_xent", 3, 1, biased_xent_loss, NULL), *f = jx_value_and_grad(loss, 1, (int[]){0});
  jx_array *want[2] = {NULL, NULL};
  CHECK_EQ_INT(jx_call(f, ii, want), JX_OK);
  for (int ops = 2; ops <= 3; ops++) {
    config_set_recompute_ops(ops);
    jx_fn *jf = jx_jit(f);
    jx_array *got[2] = {NULL, NULL};
    CHECK_EQ_INT(jx_call(jf, in, got), JX_OK);
    check_same(got[0], want[0], "biased xent loss");
    check_same(got[1], want[1], "biased xent dlogits");
    const Program *p = jit_program_for(jf, in);
    int chain = p ? chain_to(p, 0, p->outs[1].slot) : -1, expect = ops == 3 ? 1 : 2;
    if (strcmp(jx_device_of(l), "interp") != 0)
      CHECK_MSG(chain == expect, "recompute %d ops: dlogits %d kernels from the logits, expected %d", ops, chain, expect);
    jx_fn_free(jf);
  }
  config_set_recompute_ops(-1);
  jx_fn_free(f), jx_fn_free(loss);
  jx_scope_end(0, NULL);
}

/* Softmax over rows: on cpu and cuda (Backend.cheap_recompute, row_outputs) one kernel --
 * the max and the sum of exp(x - max) as a two-phase reduction, exp(x - max) / sum its
 * row output; the cpu stores each exp(x - max) of the sum in the output row and reads it
 * back (render/c.c). Shapes: rows of fewer than 16 (flat form), a row length with a tail
 * after the 16-lane blocks, row counts that leave a shifted last block of 8 rows in each
 * thread's range (whose recomputed rows must not be stored again), float16 (computed in
 * float32 and rounded: nothing kept). Values: the interpreter's within check_same's few
 * ulps; the log_softmax cross-entropy of bench/ too. */
static jx_status softmax_rows(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_nn_softmax(in[0], 1, (int[]){-1}, NULL);
  return JX_OK;
}

static jx_status xent_rows(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_array *lp = jx_nn_log_softmax(in[0], 1, (int[]){-1}, NULL);
  out[0] = jx_negative(jx_mean(jx_sum(jx_mul(lp, in[1]), 1, (int[]){-1}, false), 0, NULL, false));
  return JX_OK;
}

static void test_softmax_rows_match_interp(void) {
  uint32_t seed = 31;
  static const int64_t shapes[5][2] = {{200, 10}, {130, 129}, {131, 1024}, {9, 16}, {257, 48}};
  for (int s = 0; s < 6; s++) {
    jx_scope_begin();
    jx_array *x = jx_mul(test_randn(&seed, 2, shapes[s % 5]), jx_scalar(4.0));
    if (s == 5) x = jx_astype(x, JX_FLOAT16);
    jx_fn *f = jx_fn_new("softmax_rows", 1, 1, softmax_rows, NULL), *jf = jx_jit(f);
    jx_array *got = NULL, *want = NULL, *xi = jx_device_put(x, "interp");
    CHECK_EQ_INT(jx_call(jf, &x, &got), JX_OK);
    if (strcmp(jx_device_of(x), "interp") != 0 && shapes[s % 5][1] >= 16)
      check_steps(jf, &x, 1, 0, "softmax: one kernel");
    CHECK_EQ_INT(jx_call(f, &xi, &want), JX_OK);
    check_same(got, want, "jit softmax");
    jx_array *y = jx_nn_one_hot(jx_argmax(x, 1, false), shapes[s % 5][1], JX_FLOAT32, -1), *yi = jx_device_put(y, "interp");
    jx_fn *g = jx_fn_new("xent_rows", 2, 1, xent_rows, NULL), *jg = jx_jit(g);
    CHECK_EQ_INT(jx_call(jg, (jx_array *[]){x, y}, &got), JX_OK);
    CHECK_EQ_INT(jx_call(g, (jx_array *[]){xi, yi}, &want), JX_OK);
    check_same(got, want, "jit log_softmax cross-entropy");
    jx_fn_free(jf), jx_fn_free(f), jx_fn_free(jg), jx_fn_free(g);
    jx_scope_end(0, NULL);
  }
}

/* A function calling another (ctx: the callee, jitted or not): with the callee jitted,
 * transformations see one jit equation and go through its rules. */
static jx_status inner2(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_array *h = jx_tanh(jx_matmul(in[1], in[0])); /* x (3) @ w (3,3) */
  out[0] = jx_mul(h, in[1]);
  out[1] = jx_sum(jx_sin(in[0]), 0, NULL, false);
  return JX_OK;
}

static jx_status outer2(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *r[2];
  jx_status s = jx_call(ctx, in, r);
  if (s != JX_OK) return s;
  out[0] = jx_add(jx_sum(jx_exp(r[0]), 0, NULL, false), jx_mul(r[1], r[1]));
  return JX_OK;
}

static void test_nested_jit_matches_inlined(void) {
  uint32_t seed = 21;
  jx_array *w = test_randn(&seed, 2, (int64_t[]){3, 3}), *x = test_randn(&seed, 1, (int64_t[]){3});
  jx_array *in[2] = {w, x};
  jx_fn *g = jx_fn_new("inner", 2, 2, inner2, NULL), *jg = jx_jit(g);
  jx_fn *fi = jx_fn_new("inlined", 2, 1, outer2, g), *fn = jx_fn_new("nested", 2, 1, outer2, jg);
  jx_array *a, *b, *ga[2], *gb[2];
  /* jit(f) with a nested jit: the call is inlined into one program */
  jx_fn *jfn = jx_jit(fn);
  CHECK_EQ_INT(jx_call(fi, in, &a), JX_OK);
  CHECK_EQ_INT(jx_call(jfn, in, &b), JX_OK);
  check_same(b, a, "jit(nested)");
  jx_free(a), jx_free(b);
  /* grad through the call: JVP rule, linearize, transpose of the tangent call */
  jx_fn *gi = jx_grad(fi, 2, (int[]){0, 1}), *gn = jx_grad(fn, 2, (int[]){0, 1});
  CHECK_EQ_INT(jx_call(gi, in, ga), JX_OK);
  CHECK_EQ_INT(jx_call(gn, in, gb), JX_OK);
  check_same(gb[0], ga[0], "grad(nested) w");
  check_same(gb[1], ga[1], "grad(nested) x");
  jx_free(gb[0]), jx_free(gb[1]);
  jx_fn *jgn = jx_jit(gn);
  CHECK_EQ_INT(jx_call(jgn, in, gb), JX_OK);
  check_same(gb[0], ga[0], "jit(grad(nested)) w");
  check_same(gb[1], ga[1], "jit(grad(nested)) x");
  jx_free(gb[0]), jx_free(gb[1]), jx_free(ga[0]), jx_free(ga[1]);
  /* second order: hessian through the call */
  jx_fn *hi = jx_hessian(fi, 1, (int[]){1}), *hn = jx_hessian(fn, 1, (int[]){1});
  CHECK_EQ_INT(jx_call(hi, in, &a), JX_OK);
  CHECK_EQ_INT(jx_call(hn, in, &b), JX_OK);
  check_same(b, a, "hessian(nested)");
  jx_free(a), jx_free(b);
  /* vmap over x, and vmap of grad */
  jx_array *xs = test_randn(&seed, 2, (int64_t[]){4, 3}), *bin[2] = {w, xs};
  jx_fn *vi = jx_vmap(fi, (int[]){JX_NOT_MAPPED, 0}, NULL), *vn = jx_vmap(fn, (int[]){JX_NOT_MAPPED, 0}, NULL);
  CHECK_EQ_INT(jx_call(vi, bin, &a), JX_OK);
  CHECK_EQ_INT(jx_call(vn, bin, &b), JX_OK);
  check_same(b, a, "vmap(nested)");
  jx_free(a), jx_free(b);
  jx_fn *vgi = jx_vmap(gi, (int[]){JX_NOT_MAPPED, 0}, NULL), *vgn = jx_vmap(gn, (int[]){JX_NOT_MAPPED, 0}, NULL);
  CHECK_EQ_INT(jx_call(vgi, bin, ga), JX_OK);
  CHECK_EQ_INT(jx_call(vgn, bin, gb), JX_OK);
  check_same(gb[0], ga[0], "vmap(grad(nested)) w");
  check_same(gb[1], ga[1], "vmap(grad(nested)) x");
  jx_free(gb[0]), jx_free(gb[1]), jx_free(ga[0]), jx_free(ga[1]);
  jx_free(xs), jx_free(w), jx_free(x);
  jx_fn *fns[] = {vgi, vgn, vi, vn, hi, hn, jgn, gi, gn, jfn, fi, fn, jg, g};
  for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) jx_fn_free(fns[i]);
}

/* Group epilogues (ir/alu.h, Kernel.post; jit/lower.c's fuse_group_post): an MLP
 * head's loss -- logits = relu(h) @ w + b as rows of products, then the log-softmax
 * over each row of C classes with its dlogits -- on a backend that computes a row's C
 * logits together. */
static jx_status head_loss(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_array *logits = jx_add(jx_matmul(jx_nn_relu(in[0]), in[1]), in[2]);
  jx_array *lp = jx_nn_log_softmax(logits, 1, (int[]){-1}, NULL);
  out[0] = jx_negative(jx_mean(jx_sum(jx_mul(lp, in[3]), 1, (int[]){-1}, false), 0, NULL, false));
  return JX_OK;
}

/* The same with each row's classes reversed before the log-softmax: its kernel reads the
 * logits at gidx * C + C-1 - ridx, not at its own group's order, so stays a kernel of its
 * own. */
static jx_status head_loss_flipped(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_array *logits = jx_add(jx_matmul(jx_nn_relu(in[0]), in[1]), in[2]);
  jx_array *lp = jx_nn_log_softmax(jx_flip(logits, 1, (int[]){1}), 1, (int[]){-1}, NULL);
  out[0] = jx_negative(jx_mean(jx_sum(jx_mul(lp, in[3]), 1, (int[]){-1}, false), 0, NULL, false));
  return JX_OK;
}

/* a and b hold the same values bit for bit (read as float64). */
static void check_bits(jx_array *a, jx_array *b, const char *what, const char *how) {
  double *x = a ? test_read_f64(a) : NULL, *z = b ? test_read_f64(b) : NULL;
  CHECK_MSG(x && z && memcmp(x, z, (size_t)jx_size(a) * sizeof *x) == 0, "%s: %s", what, how);
  free(x), free(z);
}

static bool has_post(const Program *p) {
  for (int s = 0; p && s < p->nsteps; s++)
    if (!p->steps[s].is_routine && p->steps[s].kernel.post) return true;
  return false;
}

/* The cpu's entries with row_group: the main part and the group epilogue of a kernel
 * with one run as two cpu kernels, the second reading the first's output. */
static Backend group_be;
static int group_of(const Kernel *k) { return k->dtype == JX_FLOAT32 && k->size % 16 == 0 ? 16 : 1; }
typedef struct GroupExe {
  void *main, *post;
} GroupExe;
static GroupExe *group_exes[16]; /* freed by the test (the cpu's own exes are its cache's) */
static int group_nexes;
static Kernel group_main(const Kernel *k) {
  Kernel m = *k;
  m.post = NULL;
  return m;
}
static jx_status group_prepare(const Backend *be, const Kernel *k, void **exe) {
  if (!k->post) return backend_cpu.prepare(&backend_cpu, k, exe);
  GroupExe *g = group_nexes < 16 ? calloc(1, sizeof *g) : NULL;
  if (g) group_exes[group_nexes++] = g;
  Kernel m = group_main(k);
  jx_status s = g ? backend_cpu.prepare(&backend_cpu, &m, &g->main) : JX_ERR_OOM;
  if (s == JX_OK) s = backend_cpu.prepare(&backend_cpu, k->post, &g->post);
  *exe = g;
  return s;
}
static jx_status group_dispatch(const Backend *be, void *exe, const Kernel *k, void *const *in, void *const *outs) {
  if (!k->post) return backend_cpu.dispatch(&backend_cpu, exe, k, in, outs);
  GroupExe *g = exe;
  Kernel m = group_main(k);
  jx_status s = backend_cpu.dispatch(&backend_cpu, g->main, &m, in, outs);
  void *qin[KERNEL_MAX_ARGS];
  for (int i = 0; i < k->nargs; i++) qin[i] = in[i];
  qin[k->nargs] = outs[0];
  return s == JX_OK ? backend_cpu.dispatch(&backend_cpu, g->post, k->post, qin, outs + kernel_nouts(&m)) : s;
}

/* The head's value and gradients (head_loss) over random h (N, H), w (H, C), b (C) and
 * one-hot labels y under jit, checked against interp's (want[4]); in[] its inputs, *f and
 * *jf its value_and_grad and that jitted (the caller frees them and the loss, *loss) */
static void head_case(uint32_t seed, int N, int H, int C, jx_array **in, jx_array **want, jx_fn **loss, jx_fn **f,
                      jx_fn **jf) {
  jx_array *h = test_randn(&seed, 2, (int64_t[]){N, H}), *w = test_randn(&seed, 2, (int64_t[]){H, C});
  jx_array *b = test_randn(&seed, 1, (int64_t[]){C});
  float *yv = calloc((size_t)N * C, sizeof *yv);
  for (int i = 0; yv && i < N; i++) yv[i * C + (i * 7) % C] = 1.0f;
  jx_array *y = jx_array_from(yv, JX_FLOAT32, 2, (int64_t[]){N, C});
  free(yv);
  in[0] = h, in[1] = w, in[2] = b, in[3] = y;
  *loss = jx_fn_new("head", 4, 1, head_loss, NULL), *f = jx_value_and_grad(*loss, 3, (int[]){0, 1, 2});
  *jf = jx_jit(*f);
  jx_array *got[4] = {NULL};
  jx_array *ii[4] = {jx_device_put(h, "interp"), jx_device_put(w, "interp"), jx_device_put(b, "interp"),
                     jx_device_put(y, "interp")};
  CHECK_EQ_INT(jx_call(*jf, in, got), JX_OK);
  CHECK_EQ_INT(jx_call(*f, ii, want), JX_OK);
  /* (the products' sums in BLAS's order: dh's elements cancel to 1e-5 of its largest) */
  const char *what[4] = {"head loss", "head dh", "head dw", "head db"};
  for (int o = 0; o < 4; o++) check_close(got[o], want[o], what[o], 2e-5);
}

static void test_group_post(void) {
  jx_scope_begin();
  enum { N = 256, H = 128, C = 16 }; /* (rows of 128: cuda's grouped warp rows read 16-byte vectors) */
  jx_array *in[4], *want[4] = {NULL};
  jx_fn *loss, *f, *jf;
  head_case(53, N, H, C, in, want, &loss, &f, &jf);
  jx_array *h = in[0];
  const char *what[4] = {"head loss", "head dh", "head dw", "head db"};
  const char *dev = jx_device_of(h);
  const Program *p = jit_program_for(jf, in);
  /* cuda: the logits' grouped warp rows (16 a warp) carry the log-softmax */
  if (p && strcmp(dev, "cuda") == 0) CHECK_MSG(has_post(p), "cuda: no group epilogue in the head's program");
  if (p && strcmp(dev, "cpu") == 0) {
    CHECK(!has_post(p)); /* the cpu computes no groups */
    group_be = backend_cpu;
    group_be.row_group = group_of, group_be.dot_rows_max_n = C;
    group_be.prepare = group_prepare, group_be.prepare_batch = NULL, group_be.dispatch = group_dispatch;
    const Jaxpr *j = jit_jaxpr_for(jf, in);
    Program *gp = j ? jit_lower(j, &group_be) : NULL;
    CHECK_MSG(gp && has_post(gp), "no group epilogue (%s)", jx_last_error());
    /* backends without row_group refuse such a kernel, clearly */
    for (int s = 0; gp && s < gp->nsteps; s++)
      if (!gp->steps[s].is_routine && gp->steps[s].kernel.post) {
        void *exe = NULL;
        CHECK_EQ_INT(backend_interp.prepare(&backend_interp, &gp->steps[s].kernel, &exe), JX_ERR_UNSUPPORTED);
        CHECK_ERROR(JX_ERR_UNSUPPORTED, "group epilogue");
        CHECK(backend_cpu.prepare(&backend_cpu, &gp->steps[s].kernel, &exe) != JX_OK);
        CHECK_ERROR(JX_ERR_UNSUPPORTED, "group epilogue");
      }
    /* and without row_group, the same lowering runs the two steps apart: the same bits */
    group_be.row_group = NULL;
    Program *sp = j ? jit_lower(j, &group_be) : NULL;
    CHECK(sp && !has_post(sp) && gp && sp->nsteps == gp->nsteps + 1);
    jx_array *g[4] = {NULL}, *sep[4] = {NULL};
    if (gp && sp) {
      CHECK_EQ_INT(jit_run(gp, j, &group_be, in, g), JX_OK);
      CHECK_EQ_INT(jit_run(sp, j, &group_be, in, sep), JX_OK);
      for (int o = 0; o < 4; o++) {
        check_bits(g[o], sep[o], what[o], "fused and separate differ");
        check_close(g[o], want[o], what[o], 2e-5);
      }
    }
    for (int o = 0; o < 4; o++) jx_free(g[o]), jx_free(sep[o]);
    jit_program_free(gp), jit_program_free(sp);
    /* reversed rows: no group epilogue, the same values as the cpu's */
    jx_fn *lf = jx_fn_new("head_flipped", 4, 1, head_loss_flipped, NULL), *ff = jx_value_and_grad(lf, 3, (int[]){0, 1, 2});
    jx_fn *jff = jx_jit(ff);
    jx_array *fr[4] = {NULL}, *fg[4] = {NULL};
    CHECK_EQ_INT(jx_call(jff, in, fr), JX_OK);
    const Jaxpr *jfl = jit_jaxpr_for(jff, in);
    group_be.row_group = group_of;
    Program *fp = jfl ? jit_lower(jfl, &group_be) : NULL;
    CHECK_MSG(fp && !has_post(fp), "reversed rows: %s", fp ? "a group epilogue" : jx_last_error());
    if (fp) {
      CHECK_EQ_INT(jit_run(fp, jfl, &group_be, in, fg), JX_OK);
      for (int o = 0; o < 4; o++) check_close(fg[o], fr[o], what[o], 2e-5);
    }
    for (int o = 0; o < 4; o++) jx_free(fr[o]), jx_free(fg[o]);
    jit_program_free(fp);
    jx_fn_free(jff), jx_fn_free(ff), jx_fn_free(lf);
    while (group_nexes > 0) free(group_exes[--group_nexes]);
  }
  jx_fn_free(jf), jx_fn_free(f), jx_fn_free(loss);
  jx_scope_end(0, NULL);
}

/* The same head at 4096 rows of 10 classes, as the MLP's step at batch 4096: on cuda its
 * grouped warp rows take 2 rows a warp (RenderCudaPlan.rows), the epilogue row by row;
 * the values match interp's */
static void test_group_post_rows(void) {
  jx_scope_begin();
  jx_array *in[4], *want[4] = {NULL};
  jx_fn *loss, *f, *jf;
  head_case(59, 4096, 128, 10, in, want, &loss, &f, &jf);
  const Program *p = jit_program_for(jf, in);
  if (p && strcmp(jx_device_of(in[0]), "cuda") == 0) CHECK_MSG(has_post(p), "cuda: no group epilogue in the head's program");
  jx_fn_free(jf), jx_fn_free(f), jx_fn_free(loss);
  jx_scope_end(0, NULL);
}

/* Selected loads (jit/lower.c, select_loads; Backend.select_loads): a 3x3 SAME
 * convolution's im2col concatenates 9 shifted, padded views of x, a select between 9
 * masked loads an element, which becomes one load at a selected index. The value and
 * gradient of a small conv block (conv_loss) under jit match interp on every device; on the cpu, the
 * cpu's entries with select_loads lower the same jaxpr to fewer loads and the same bits. */
static int64_t program_loads(const Program *p) {
  int64_t loads = 0;
  for (int s = 0; p && s < p->nsteps; s++) {
    if (p->steps[s].is_routine) continue;
    int64_t n;
    const AluExp **order = alu_toposort(p->steps[s].kernel.exp, &n);
    for (int64_t i = 0; order && i < n; i++) loads += order[i]->op == ALU_GLOBAL_INDEX;
    free((void *)order);
  }
  return loads;
}

static void test_select_loads(void) {
  uint32_t seed = 61;
  jx_scope_begin();
  jx_array *x = test_randn(&seed, 4, (int64_t[]){4, 10, 8, 3}), *w = test_randn(&seed, 4, (int64_t[]){3, 3, 3, 8});
  jx_array *m = test_randn(&seed, 4, (int64_t[]){4, 5, 4, 8});
  jx_array *in[3] = {x, w, m};
  jx_array *ii[3] = {jx_device_put(x, "interp"), jx_device_put(w, "interp"), jx_device_put(m, "interp")};
  jx_fn *loss = jx_fn_new("conv_loss", 3, 1, conv_loss, NULL), *f = jx_value_and_grad(loss, 2, (int[]){0, 1});
  jx_fn *jf = jx_jit(f);
  jx_array *got[3] = {NULL}, *want[3] = {NULL};
  const char *what[3] = {"conv loss", "conv dx", "conv dw"};
  CHECK_EQ_INT(jx_call(jf, in, got), JX_OK);
  CHECK_EQ_INT(jx_call(f, ii, want), JX_OK);
  for (int o = 0; o < 3; o++) check_close(got[o], want[o], what[o], 2e-5);
  if (strcmp(jx_device_of(x), "cpu") == 0) {
    const Jaxpr *j = jit_jaxpr_for(jf, in);
    Backend sel = backend_cpu;
    sel.select_loads = true;
    Program *sp = j ? jit_lower(j, &sel) : NULL, *pp = j ? jit_lower(j, &backend_cpu) : NULL;
    int64_t ls = program_loads(sp), lp = program_loads(pp);
    /* the im2col's 9 loads an element become 1 */
    CHECK_MSG(sp && pp && ls <= lp - 8, "select_loads: %lld loads against %lld", (long long)ls, (long long)lp);
    jx_array *a[3] = {NULL}, *b[3] = {NULL};
    if (sp && pp) {
      CHECK_EQ_INT(jit_run(sp, j, &sel, in, a), JX_OK);
      CHECK_EQ_INT(jit_run(pp, j, &backend_cpu, in, b), JX_OK);
      for (int o = 0; o < 3; o++) check_bits(a[o], b[o], what[o], "selected loads differ");
    }
    for (int o = 0; o < 3; o++) jx_free(a[o]), jx_free(b[o]);
    jit_program_free(sp), jit_program_free(pp);
  }
  jx_fn_free(jf), jx_fn_free(f), jx_fn_free(loss);
  jx_scope_end(0, NULL);
}

static jx_status bad(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_add(in[0], jx_ones(1, (int64_t[]){5}, JX_FLOAT32));
  return out[0] ? JX_OK : jx_last_status();
}

static void test_errors(void) {
  CHECK(jx_jit(NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_jit");
  jx_fn *f = jx_fn_new("bad", 1, 1, bad, NULL), *jf = jx_jit(f);
  jx_array *a = jx_ones(1, (int64_t[]){3}, JX_FLOAT32), *o;
  CHECK_EQ_INT(jx_call(jf, &a, &o), JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "(5,)");
  jx_free(a);
  jx_fn_free(jf), jx_fn_free(f);
}

int main(void) {
  /* cuda: 2 rows a grouped warp row (off by default) where the rows allow it: the 4096-row
   * head of test_group_post_rows against interp */
  setenv("JAXC_CUDA_ROW_GROUP_ROWS", "2", 0);
  int64_t fns = jx_live_fns();
  TEST_RUN(test_mixed_matches_eager);
  TEST_RUN(test_random_fused_graphs);
  TEST_RUN(test_trace_cache);
  TEST_RUN(test_composes_with_grad_and_vmap);
  TEST_RUN(test_row_loops_match_interp);
  TEST_RUN(test_conv_nests_match_interp);
  TEST_RUN(test_concat_rows_match_interp);
  TEST_RUN(test_multi_output_matches_interp);
  TEST_RUN(test_two_phase_matches_interp);
  TEST_RUN(test_two_phase_first_phase_in_cache_key);
  TEST_RUN(test_nested_jit_matches_inlined);
  TEST_RUN(test_elementwise_cones_fuse);
  TEST_RUN(test_epilogues_fuse);
  TEST_RUN(test_xent_grad_chain);
  TEST_RUN(test_recompute_ops);
  TEST_RUN(test_softmax_rows_match_interp);
  TEST_RUN(test_group_post);
  TEST_RUN(test_group_post_rows);
  TEST_RUN(test_select_loads);
  TEST_RUN(test_errors);
  if (jx_live_fns() != fns) test_fail(__FILE__, __LINE__, "leaked %lld functions", (long long)(jx_live_fns() - fns));
  return test_finish();
}
