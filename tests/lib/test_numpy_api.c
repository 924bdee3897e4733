/* test_numpy_api.c -- jax.numpy edge cases against JAX goldens (tools/golden_numpy_api.py ->
 * tests/golden/numpy_api.txt): zero-size arrays, clip / where with weak operands, split and
 * concatenate edge cases, quantile methods, scans of small ints, unique (axis=) / nonzero /
 * histogram (edges, 2d, dd) / digitize / searchsorted (sorter=) corners, out-of-bounds
 * take (mode="wrap") and .at[] updates, einsum corners, bincount, select, meshgrid,
 * array_split, jnp.pad's modes, cov and corrcoef. Every case runs eagerly,
 * under jit and under vmap twice -- each input stacked twice along a new leading axis,
 * then along a new last axis (in_axes = its rank); both slices of every output must
 * equal the golden -- and grad=1 cases check
 * d sum(f(x)^2)/2 / d x[0]. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "test.h"

static int axis_param(const GoldenCase *c, const char *key, int dflt) {
  const char *s = golden_param(c, key);
  if (!s) return dflt;
  return !strcmp(s, "none") ? JX_AXIS_NONE : atoi(s);
}

/* "a,b,c" into v (at most n); returns the count */
static int list_param(const GoldenCase *c, const char *key, double *v, int n) {
  const char *s = golden_param(c, key);
  int k = 0;
  while (s && *s && k < n) {
    char *end;
    v[k++] = strtod(s, &end);
    s = *end == ',' ? end + 1 : end;
    if (end == s && *s != ',') break;
  }
  return k;
}

static jx_index_mode mode_param(const GoldenCase *c) {
  const char *m = golden_param(c, "mode");
  return !m ? JX_INDEX_FILL : !strcmp(m, "clip") ? JX_INDEX_CLIP : !strcmp(m, "wrap") ? JX_INDEX_WRAP
         : !strcmp(m, "promise_in_bounds") ? JX_INDEX_PROMISE_IN_BOUNDS : JX_INDEX_FILL;
}

/* Calls the function the case names; returns its number of outputs (0: unknown fn). */
static int apply(const GoldenCase *c, jx_array *const *x, jx_array **out) {
  const char *f = c->fn;
  int axis = axis_param(c, "axis", -1);
  bool kd = golden_param_int(c, "keepdims", 0);
  int ax[1] = {axis_param(c, "axes", 0)};
  int nax = golden_param(c, "axes") ? 1 : 0;
  const int *axes = nax ? ax : NULL;
#define R(n, e) if (!strcmp(f, n)) return out[0] = (e), 1
  R("sort", jx_sort(x[0], axis, golden_param_int(c, "descending", 0)));
  R("argsort", jx_argsort(x[0], axis, golden_param_int(c, "descending", 0)));
  R("cumsum", jx_cumsum(x[0], axis));
  R("cumprod", jx_cumprod(x[0], axis));
  R("nancumsum", jx_nancumsum(x[0], axis));
  R("nancumprod", jx_nancumprod(x[0], axis));
  R("diff", jx_diff(x[0], (int)golden_param_int(c, "n", 1), axis));
  R("flip", jx_flip(x[0], 1, &axis));
  R("roll", jx_roll(x[0], golden_param_int(c, "shift", 0), axis));
  R("lexsort", jx_lexsort(c->nin, x, axis));
  R("partition", jx_partition(x[0], golden_param_int(c, "kth", 0), axis));
  R("median", jx_median(x[0], axis, kd));
  const char *ms = golden_param(c, "method");
  static const char *const methods[] = {"linear", "lower", "higher", "midpoint", "nearest"};
  jx_quantile_method qm = JX_QUANTILE_LINEAR;
  for (int m = 0; ms && m < 5; m++)
    if (!strcmp(ms, methods[m])) qm = (jx_quantile_method)m;
  R("quantile", ms ? jx_quantile_with_method(x[0], x[1], axis, qm, kd) : jx_quantile(x[0], x[1], axis, kd));
  R("percentile", ms ? jx_percentile_with_method(x[0], x[1], axis, qm, kd) : jx_percentile(x[0], x[1], axis, kd));
  R("nansum", jx_nansum(x[0], nax, axes, kd));
  R("nanprod", jx_nanprod(x[0], nax, axes, kd));
  R("nanmean", jx_nanmean(x[0], nax, axes, kd));
  R("nanmax", jx_nanmax(x[0], nax, axes, kd));
  R("nanvar", jx_nanvar(x[0], nax, axes, golden_param_int(c, "ddof", 0), kd));
  R("clip", jx_clip(x[0], x[1], x[2]));
  R("clip_lo", jx_clip(x[0], x[1], NULL));
  R("clip_hi", jx_clip(x[0], NULL, x[1]));
  R("clip_none", jx_clip(x[0], NULL, NULL));
  R("where", jx_where(x[0], x[1], x[2]));
  R("round", jx_round_decimals(x[0], (int)golden_param_int(c, "decimals", 0)));
  R("concatenate", jx_concatenate(c->nin, x, axis));
  R("stack", jx_stack(c->nin, x, axis));
  R("tril", jx_tril(x[0], golden_param_int(c, "k", 0)));
  R("triu", jx_triu(x[0], golden_param_int(c, "k", 0)));
  R("rot90", jx_rot90(x[0], (int)golden_param_int(c, "k", 1), (int)golden_param_int(c, "a0", 0),
                      (int)golden_param_int(c, "a1", 1)));
  int64_t size = golden_param_int(c, "size", -1), fillv[JX_MAX_NDIM];
  for (int d = 0; d < JX_MAX_NDIM; d++) fillv[d] = golden_param_int(c, "fill", 0);
  const int64_t *fill = golden_param(c, "fill") ? fillv : NULL;
  R("argwhere", jx_argwhere(x[0], size, fill));
  R("digitize", jx_digitize(x[0], x[1], golden_param_int(c, "right", 0)));
  R("take_along", jx_take_along_axis(x[0], x[1], axis, mode_param(c)));
  R("at_add", jx_at_add(x[0], x[1], x[2], axis, mode_param(c)));
  R("at_set", jx_at_set(x[0], x[1], x[2], axis, mode_param(c)));
  R("at_mul", jx_at_mul(x[0], x[1], x[2], axis, mode_param(c)));
  R("at_min", jx_at_min(x[0], x[1], x[2], axis, mode_param(c)));
  R("at_max", jx_at_max(x[0], x[1], x[2], axis, mode_param(c)));
  if (!strcmp(f, "at_get") && golden_param(c, "fill"))
    return out[0] = jx_take_fill(x[0], x[1], axis, atof(golden_param(c, "fill"))), 1;
  R("at_get", jx_take_mode(x[0], x[1], axis, mode_param(c)));
  R("diagonal", jx_diagonal(x[0], golden_param_int(c, "offset", 0), (int)golden_param_int(c, "axis1", 0),
                            (int)golden_param_int(c, "axis2", 1)));
  R("trace", jx_trace(x[0], golden_param_int(c, "offset", 0), (int)golden_param_int(c, "axis1", 0),
                      (int)golden_param_int(c, "axis2", 1)));
  R("kron", jx_kron(x[0], x[1]));
  if (!strcmp(f, "cov") || !strcmp(f, "corrcoef")) {
    /* inputs: m, then y / fweights / aweights as the params y / fw / aw say */
    int k = 1;
    jx_array *y = golden_param_int(c, "y", 0) ? x[k++] : NULL;
    jx_array *fw = golden_param_int(c, "fw", 0) ? x[k++] : NULL;
    jx_array *aw = golden_param_int(c, "aw", 0) ? x[k++] : NULL;
    bool rowvar = golden_param_int(c, "rowvar", 1) != 0;
    if (!strcmp(f, "corrcoef")) return out[0] = jx_corrcoef(x[0], y, rowvar), 1;
    const char *dd = golden_param(c, "ddof");
    int64_t ddof = dd && strcmp(dd, "none") ? atoll(dd) : 0;
    return out[0] = jx_cov(x[0], y, rowvar, golden_param_int(c, "bias", 0) != 0,
                           dd && strcmp(dd, "none") ? &ddof : NULL, fw, aw),
           1;
  }
  R("repeat", jx_repeat(x[0], golden_param_int(c, "repeats", 1), axis));
  if (!strcmp(f, "tile")) {
    double rv[JX_MAX_NDIM];
    int64_t reps[JX_MAX_NDIM];
    int nr = list_param(c, "reps", rv, JX_MAX_NDIM);
    for (int k = 0; k < nr; k++) reps[k] = (int64_t)rv[k];
    return out[0] = jx_tile(x[0], nr, reps), 1;
  }
  R("einsum", jx_einsum(golden_param(c, "subs"), c->nin, x));
  R("bincount", jx_bincount(x[0], c->nin > 1 ? x[1] : NULL, golden_param_int(c, "minlength", 0),
                            golden_param_int(c, "length", -1)));
  R("bincount_w0", jx_bincount(x[1], x[0], golden_param_int(c, "minlength", 0), golden_param_int(c, "length", -1)));
  if (!strcmp(f, "select")) { /* conds then choices; default a Python scalar */
    const char *ds = golden_param(c, "default");
    jx_array *d = strchr(ds, '.') ? jx_scalar(atof(ds)) : jx_scalar_int(atoll(ds));
    out[0] = jx_select(c->nin / 2, x, x + c->nin / 2, d);
    jx_free(d);
    return 1;
  }
  if (!strcmp(f, "pad_mode")) {
    static const char *const modes[] = {"constant", "edge", "wrap", "reflect", "symmetric", "linear_ramp",
                                        "maximum", "minimum", "mean", "median", "empty"};
    jx_pad_mode pm = JX_PAD_CONSTANT;
    for (int m = 0; m < 11; m++)
      if (!strcmp(golden_param(c, "mode"), modes[m])) pm = (jx_pad_mode)m;
    double pw[2 * JX_MAX_NDIM], cv[2 * JX_MAX_NDIM], ev[2 * JX_MAX_NDIM], slv[2 * JX_MAX_NDIM];
    int64_t pwi[2 * JX_MAX_NDIM], sli[2 * JX_MAX_NDIM];
    int np = list_param(c, "pad", pw, 2 * JX_MAX_NDIM);
    for (int k = 0; k < np; k++) pwi[k] = (int64_t)pw[k];
    int nsl = list_param(c, "sl", slv, 2 * JX_MAX_NDIM);
    for (int k = 0; k < nsl; k++) sli[k] = (int64_t)slv[k];
    jx_pad_options o = {list_param(c, "cv", cv, 2 * JX_MAX_NDIM) ? cv : NULL,
                        list_param(c, "ev", ev, 2 * JX_MAX_NDIM) ? ev : NULL, nsl ? sli : NULL,
                        golden_param_int(c, "odd", 0) != 0};
    return out[0] = jx_pad_with_mode(x[0], pwi, pm, &o), 1;
  }
#undef R
  if (!strcmp(f, "meshgrid"))
    return jx_meshgrid(c->nin, x, golden_param_int(c, "sparse", 0), golden_param(c, "indexing"), out), c->nin;
  if (!strcmp(f, "array_split"))
    return jx_array_split(x[0], golden_param_int(c, "sections", 1), axis, out), c->err ? 1 : c->nout;
  if (!strcmp(f, "split") || !strcmp(f, "split_indices")) {
    if (!strcmp(f, "split")) return jx_split(x[0], golden_param_int(c, "sections", 1), axis, out), c->err ? 1 : c->nout;
    int64_t idx[8];
    double v[8];
    int n = list_param(c, "indices", v, 8);
    for (int k = 0; k < n; k++) idx[k] = (int64_t)v[k];
    return jx_split_indices(x[0], n, idx, axis, out), c->err ? 1 : c->nout;
  }
  if (!strcmp(f, "nonzero")) return jx_nonzero(x[0], size, fill, out), jx_ndim(x[0]);
  if (!strcmp(f, "unique"))
    return jx_unique_axis(x[0], golden_param(c, "axis") ? axis : JX_AXIS_NONE, size,
                          golden_param_int(c, "fill", 0) ? x[1] : NULL, &out[0], &out[1], &out[2], &out[3]), 4;
  double range[2 * JX_MAX_NDIM] = {0}, binsv[JX_MAX_NDIM];
  int nrange = list_param(c, "range", range, 2 * JX_MAX_NDIM), nbins = list_param(c, "bins", binsv, JX_MAX_NDIM);
  const double *rs = nrange ? range : NULL;
  int64_t bins[JX_MAX_NDIM];
  for (int k = 0; k < nbins; k++) bins[k] = (int64_t)binsv[k];
  bool density = golden_param_int(c, "density", 0);
  if (!strcmp(f, "histogram"))
    return jx_histogram(x[0], nbins ? bins[0] : 10, rs, c->nin > 1 ? x[1] : NULL, density, out), 2;
  if (!strcmp(f, "histogram_w0")) return jx_histogram(x[1], nbins ? bins[0] : 10, rs, x[0], density, out), 2;
  if (!strcmp(f, "histogram_edges")) return jx_histogram_edges(x[0], x[1], c->nin > 2 ? x[2] : NULL, density, out), 2;
  if (!strcmp(f, "histogram_edges_w0")) return jx_histogram_edges(x[1], x[2], x[0], density, out), 2;
  if (!strcmp(f, "histogram_bin_edges")) return out[0] = jx_histogram_bin_edges(x[0], nbins ? bins[0] : 10, rs), 1;
  if (!strcmp(f, "histogram_bin_edges_array")) return out[0] = jx_histogram_bin_edges_array(x[0], x[1]), 1;
  if (!strcmp(f, "histogramdd"))
    return jx_histogramdd(x[0], nbins ? bins : NULL, NULL, rs, c->nin > 1 ? x[1] : NULL, density, out), 1 + nbins;
  if (!strcmp(f, "histogramdd_edges"))
    return jx_histogramdd(x[0], NULL, x + 1, NULL, NULL, density, out), c->nin;
  if (!strcmp(f, "histogram2d"))
    return jx_histogram2d(x[0], x[1], bins, NULL, rs, c->nin > 2 ? x[2] : NULL, density, out), 3;
  if (!strcmp(f, "searchsorted"))
    return jx_searchsorted(x[0], x[1], !strcmp(golden_param(c, "side"), "right"), out), 1;
  if (!strcmp(f, "searchsorted_sorter"))
    return jx_searchsorted_with_sorter(x[0], x[1], !strcmp(golden_param(c, "side"), "right"), x[2], out), 1;
  return 0;
}

/* apply() into a buffer of its own: a case expecting an error declares one output, while
 * the function (meshgrid, array_split, ...) may fill several */
static jx_status f_value(void *ctx, jx_array *const *x, jx_array **out) {
  const GoldenCase *c = ctx;
  jx_array *tmp[16] = {NULL};
  int n = apply(c, x, tmp), nout = c->err ? 1 : c->nout;
  for (int o = 0; o < 16; o++) {
    if (o < nout) out[o] = tmp[o];
    else jx_free(tmp[o]);
  }
  if (!n) return JX_ERR_UNSUPPORTED;
  for (int o = 0; o < n && o < nout; o++)
    if (!out[o]) return jx_last_status() != JX_OK ? jx_last_status() : JX_ERR_INTERNAL;
  return JX_OK;
}

/* 0.5 * sum(f(x)^2), the loss the grad=1 cases differentiate */
static jx_status f_loss(void *ctx, jx_array *const *x, jx_array **out) {
  const GoldenCase *c = ctx;
  jx_array *o[16] = {NULL}; /* room for every output of a multi-output function (histogram: 2) */
  if (!apply(c, x, o) || !o[0]) return jx_last_status() ? jx_last_status() : JX_ERR_UNSUPPORTED;
  jx_array *y = o[0];
  /* ramp=1: the generator multiplies the output by arange(size) (shaped like the output) */
  if (golden_param_int(c, "ramp", 0))
    y = jx_multiply(y, jx_reshape(jx_arange(0, (double)jx_size(y), 1, JX_FLOAT32), jx_ndim(y), jx_shape(y)));
  out[0] = jx_multiply(jx_scalar(0.5), jx_sum(jx_square(y), 0, NULL, false));
  return out[0] ? JX_OK : jx_last_status();
}

static int unsupported;

static void check_outs(const char *ctx, const GoldenCase *c, jx_status s, jx_array **out, int batch) {
  if (c->err != JX_OK) {
    CHECK_MSG(s == c->err, "%s: expected %s, got %s (%s)", ctx, jx_status_name(c->err), jx_status_name(s),
              jx_last_error());
    return;
  }
  CHECK_MSG(s == JX_OK, "%s: %s", ctx, jx_last_error());
  for (int o = 0; s == JX_OK && o < c->nout; o++) {
    jx_dtype d = c->out[o].dtype;
    double rtol = d == JX_FLOAT16 || d == JX_BFLOAT16 ? 2e-3 : 4e-6;
    if (strstr(c->name, "_exact")) rtol = 0; /* bit for bit */
    if (!batch) {
      golden_compare(ctx, out[o], &c->out[o], rtol, rtol * 0.25);
      continue;
    }
    for (int b = 0; b < batch; b++) {
      jx_array *i = jx_scalar_int(b), *sl = jx_take(out[o], i, 0);
      char bctx[200];
      snprintf(bctx, sizeof bctx, "%s[%d]", ctx, b);
      /* vmap of a weak value is weak as in JAX, but a stacked weak input is an array */
      golden_compare(bctx, sl, &c->out[o], rtol, rtol * 0.25);
      jx_free(sl), jx_free(i);
    }
  }
}

static void test_goldens(void) {
  int n = 0;
  GoldenCase *cases = golden_load("numpy_api.txt", &n);
  CHECK_MSG(cases != NULL, "cannot load numpy_api.txt (run tools/golden_numpy_api.py)");
  int run = 0;
  const char *only = getenv("CASE");
  for (int k = 0; cases && k < n; k++) {
    GoldenCase *c = &cases[k];
    if (only && !strstr(c->name, only)) continue;
    jx_config_enable_x64(golden_param_int(c, "x64", 0));
    bool grad = golden_param_int(c, "grad", 0);
    jx_array *probe[16] = {NULL};
    jx_array *in[8] = {NULL}, *out[16] = {NULL}, *bin[8] = {NULL};
    for (int i = 0; i < c->nin; i++) in[i] = golden_to_array(&c->in[i]);
    /* unknown function: counted, not failed */
    if (!apply(c, in, probe)) {
      jx_clear_error();
      for (int i = 0; i < c->nin; i++) jx_free(in[i]);
      printf("  unsupported: %s (%s)\n", c->name, c->fn);
      unsupported++;
      continue;
    }
    for (int o = 0; o < 16; o++) jx_free(probe[o]);
    jx_clear_error();
    jx_fn *f = jx_fn_new(c->fn, c->nin, c->err ? 1 : (grad ? 1 : c->nout), grad ? f_loss : f_value, c);
    if (grad) {
      jx_fn *l = f;
      f = jx_grad(l, 1, (int[]){0});
      jx_fn_free(l);
    }
    jx_fn *jf = jx_jit(f);
    int in_axes[8] = {0}, out_axes[16] = {0}, last_axes[8] = {0};
    jx_fn *vf = jx_vmap(f, in_axes, out_axes);
    /* the batch along each input's new last axis: batching rules that move axes */
    jx_array *bin_last[8] = {NULL};
    for (int i = 0; i < c->nin; i++) last_axes[i] = jx_ndim(in[i]);
    jx_fn *vlf = jx_vmap(f, last_axes, out_axes);
    for (int i = 0; i < c->nin; i++) bin[i] = jx_stack(2, (jx_array *[]){in[i], in[i]}, 0);
    for (int i = 0; i < c->nin; i++) bin_last[i] = jx_stack(2, (jx_array *[]){in[i], in[i]}, -1);
    bool nosize = golden_param_int(c, "size", 0) < 0 || golden_param_int(c, "length", 0) < 0;
    for (int mode = 0; mode < 4; mode++) {
      char ctx[160];
      static const char *const names[] = {"eager", "jit", "vmap", "vmap last axis"};
      snprintf(ctx, sizeof ctx, "%s (line %d, %s)", c->name, c->line, names[mode]);
      jx_fn *fm[] = {f, jf, vf, vlf};
      jx_status s = jx_call(fm[mode], mode == 2 ? bin : mode == 3 ? bin_last : in, out);
      if (mode && nosize) { /* a data-dependent size cannot be traced */
        CHECK_MSG(s != JX_OK, "%s: expected an error for a data-dependent size", ctx);
      } else {
        check_outs(ctx, c, s, out, mode >= 2 ? 2 : 0);
      }
      jx_clear_error();
      for (int o = 0; o < 16; o++) jx_free(out[o]), out[o] = NULL;
    }
    for (int i = 0; i < c->nin; i++) jx_free(in[i]), jx_free(bin[i]), jx_free(bin_last[i]);
    jx_fn_free(vlf), jx_fn_free(vf), jx_fn_free(jf), jx_fn_free(f);
    run++;
  }
  jx_config_enable_x64(false);
  golden_free(cases, n);
  printf("%d golden numpy_api cases, %d unsupported\n", run, unsupported);
}

/* NULL and bad arguments: NULL results naming the function, nothing leaked */
static void test_bad_inputs(void) {
  int64_t live = jx_live_arrays();
  jx_array *x = jx_arange(0, 6, 1, JX_FLOAT32), *i = jx_arange(0, 3, 1, JX_INT32), *out[8] = {NULL};
  jx_array *m = jx_ones(2, (int64_t[]){2, 3}, JX_INT32);
  CHECK(jx_bincount(NULL, NULL, 0, 3) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_bincount: x is NULL");
  CHECK(jx_bincount(i, NULL, -1, 3) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_bincount: minlength must be non-negative");
  CHECK(jx_bincount(i, x, 0, 3) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_bincount: shape of weights");
  CHECK(jx_select(0, NULL, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_select: condlist must be non-empty");
  CHECK(jx_select(1, (jx_array *[]){NULL}, (jx_array *[]){x}, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_select");
  CHECK(jx_select(1, (jx_array *[]){i}, (jx_array *[]){x}, NULL) == NULL); /* (3,) vs (6,) */
  CHECK_ERROR(JX_ERR_SHAPE, "");
  CHECK(jx_meshgrid(2, (jx_array *[]){x, NULL}, false, "ij", out) == JX_ERR_VALUE && !out[0] && !out[1]);
  CHECK_ERROR(JX_ERR_VALUE, "jx_meshgrid");
  CHECK(jx_meshgrid(2, (jx_array *[]){x, i}, false, "yx", out) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_meshgrid: valid values for indexing are 'xy' and 'ij', got 'yx'");
  CHECK(jx_meshgrid(1, NULL, false, NULL, NULL) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_meshgrid: out is NULL");
  CHECK(jx_array_split(x, 0, 0, out) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_array_split: the number of sections must be positive");
  CHECK(jx_array_split(x, 2, 1, out) != JX_OK);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_array_split");
  CHECK(jx_pad_with_mode(NULL, (int64_t[]){1, 1}, JX_PAD_EDGE, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_pad_with_mode: x is NULL");
  CHECK(jx_pad_with_mode(x, (int64_t[]){1, -1}, JX_PAD_EDGE, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_pad_with_mode: bad pad width (1, -1) for axis 0");
  CHECK(jx_pad_with_mode(x, (int64_t[]){1, 1}, (jx_pad_mode)99, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_pad_with_mode: unknown mode 99");
  CHECK(jx_pad_with_mode(m, (int64_t[]){1, 1, 0, 0}, JX_PAD_MEAN, &(jx_pad_options){.stat_length = (int64_t[]){0, 1, 1, 1}}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "stat_length of 0 yields no value for padding");
  jx_array *s0 = jx_scalar(2.0), *p0 = jx_pad_with_mode(s0, NULL, JX_PAD_REFLECT, NULL); /* 0-d: as is */
  CHECK(p0 && jx_ndim(p0) == 0 && jx_item(p0) == 2.0);
  jx_free(p0), jx_free(s0);
  CHECK(jx_quantile_with_method(x, i, 0, (jx_quantile_method)7, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_quantile_with_method: unknown method 7");
  CHECK(jx_percentile_with_method(x, NULL, 0, JX_QUANTILE_LOWER, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_percentile_with_method");
  CHECK(jx_take_mode(x, x, 0, JX_INDEX_CLIP) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_take_mode: indices must be integers, got float32");
  CHECK(jx_take_mode(x, i, 1, JX_INDEX_CLIP) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_take_mode");
  CHECK(jx_take_mode(x, i, 0, (jx_index_mode)9) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_take_mode: unknown mode 9");
  /* take(mode="wrap") and what rejects it */
  jx_array *iw = jx_arange(-7, 8, 5, JX_INT32), *tw = jx_take_mode(x, iw, 0, JX_INDEX_WRAP); /* [-7 -2 3] */
  float twv[3] = {0};
  CHECK(tw && jx_read(tw, twv, sizeof twv) == JX_OK && twv[0] == 5 && twv[1] == 4 && twv[2] == 3);
  jx_free(tw);
  CHECK(jx_take_mode(NULL, iw, 0, JX_INDEX_WRAP) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_take_mode: x is NULL");
  CHECK(jx_take_along_axis(x, iw, 0, JX_INDEX_WRAP) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_take_along_axis: mode wrap is jnp.take's only");
  CHECK(jx_at_mul(x, iw, x, 0, JX_INDEX_WRAP) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_at_mul: mode wrap is jnp.take's only");
  jx_array *big = jx_zeros(1, (int64_t[]){300}, JX_FLOAT32), *i8 = jx_astype(iw, JX_INT8);
  CHECK(jx_take_mode(big, i8, 0, JX_INDEX_WRAP) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_take_mode: mode wrap: axis size 300 does not fit the indices' dtype int8");
  jx_free(big), jx_free(i8), jx_free(iw);
  /* histograms */
  CHECK(jx_histogram_edges(x, NULL, NULL, false, out) == JX_ERR_VALUE && !out[0] && !out[1]);
  CHECK_ERROR(JX_ERR_VALUE, "jx_histogram_edges: bins is NULL");
  CHECK(jx_histogram_edges(NULL, i, NULL, false, out) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_histogram_edges: a is NULL");
  CHECK(jx_histogram_edges(x, i, NULL, false, NULL) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_histogram_edges: out is NULL");
  CHECK(jx_histogram_edges(x, m, NULL, false, out) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_histogram_edges: bin edges must be a non-empty 1-d array, got int32[2,3]");
  CHECK(jx_histogram_bin_edges_array(x, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_histogram_bin_edges_array: bins is NULL");
  CHECK(jx_histogram_bin_edges(x, -2, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_histogram_bin_edges: bins must be non-negative, got -2");
  CHECK(jx_histogramdd(NULL, NULL, NULL, NULL, NULL, false, out) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_histogramdd: sample is NULL");
  CHECK(jx_histogramdd(x, NULL, NULL, NULL, NULL, false, out) == JX_ERR_SHAPE && !out[0]);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_histogramdd: sample must be (N, D)");
  CHECK(jx_histogramdd(m, NULL, NULL, NULL, x, false, out) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_histogramdd: should have one weight for each sample");
  CHECK(jx_histogramdd(m, (int64_t[]){2, 2, -1}, NULL, NULL, NULL, false, out) == JX_ERR_VALUE && !out[0]);
  CHECK_ERROR(JX_ERR_VALUE, "bins must be non-negative");
  CHECK(jx_histogram2d(x, NULL, NULL, NULL, NULL, NULL, false, out) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_histogram2d: y is NULL");
  /* a NULL input from an earlier failed op: the first error is kept and returned */
  jx_set_error(JX_ERR_SHAPE, "earlier");
  CHECK(jx_histogram(NULL, 3, NULL, NULL, false, out) == JX_ERR_SHAPE && !out[0]);
  CHECK(jx_histogramdd(NULL, NULL, NULL, NULL, NULL, false, out) == JX_ERR_SHAPE && !out[0]);
  CHECK(jx_histogram2d(NULL, x, NULL, NULL, NULL, NULL, false, out) == JX_ERR_SHAPE && !out[0]);
  CHECK_ERROR(JX_ERR_SHAPE, "earlier");
  CHECK(jx_histogram2d(x, i, NULL, NULL, NULL, NULL, false, out) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_histogram2d: x and y must be 1-d of one length");
  /* searchsorted(sorter=) and unique(axis=) */
  CHECK(jx_searchsorted_with_sorter(x, x, false, i, NULL) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_searchsorted_with_sorter: NULL out");
  CHECK(jx_searchsorted_with_sorter(NULL, x, false, i, out) == JX_ERR_VALUE && !out[0]);
  CHECK_ERROR(JX_ERR_VALUE, "jx_searchsorted_with_sorter");
  CHECK(jx_searchsorted_with_sorter(x, x, false, m, out) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_searchsorted_with_sorter: sorter must be 1-d, got int32[2,3]");
  CHECK(jx_searchsorted_with_sorter(x, x, true, NULL, out) == JX_OK && out[0]); /* NULL: no sorter */
  jx_free(out[0]), out[0] = NULL;
  CHECK(jx_unique_axis(NULL, 0, -1, NULL, out, NULL, NULL, NULL) == JX_ERR_VALUE && !out[0]);
  CHECK_ERROR(JX_ERR_VALUE, "jx_unique_axis");
  CHECK(jx_unique_axis(m, -3, -1, NULL, out, NULL, NULL, NULL) == JX_ERR_SHAPE && !out[0]);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_unique_axis");
  CHECK(jx_unique_axis(m, 1, 2, NULL, out, NULL, NULL, NULL) == JX_OK && out[0]); /* values only */
  CHECK(jx_ndim(out[0]) == 2 && jx_shape(out[0])[0] == 2 && jx_shape(out[0])[1] == 2);
  jx_free(out[0]), out[0] = NULL;
  jx_free(x), jx_free(i), jx_free(m);
  CHECK(jx_live_arrays() == live);
}

int main(void) {
  TEST_RUN(test_goldens);
  TEST_RUN(test_bad_inputs);
  CHECK(jx_live_arrays() == 0);
  return test_finish();
}
