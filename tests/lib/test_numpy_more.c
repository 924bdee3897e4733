/* test_numpy_more.c -- src/lib/numpy/more.c (frexp, ldexp, round(decimals), lax.div,
 * lax.rem, cumulative_sum/prod, digitize, interp, histogram(_bin_edges), unwrap,
 * polyval, polymul, take / take_along_axis fill values, weak types) against JAX
 * goldens (tools/golden_numpy_more.py -> tests/golden/numpy_more.txt), eagerly and under
 * jit, gradients included, and bad input. Tolerance: a few float32 ulps (sums and scans
 * may add in another order). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "test.h"

static double param_f(const GoldenCase *c, const char *key, double dflt) {
  const char *s = golden_param(c, key);
  return s ? atof(s) : dflt;
}

static int apply(const GoldenCase *c, const char *f, jx_array *const *x, jx_array **out) {
  int axis = (int)golden_param_int(c, "axis", JX_AXIS_NONE);
#define R(n, e) if (!strcmp(f, n)) return out[0] = (e), 1
  R("ldexp", jx_ldexp(x[0], x[1]));
  R("round", jx_round_decimals(x[0], (int)golden_param_int(c, "decimals", 0)));
  R("lax_div", jx_lax_div(x[0], x[1]));
  R("lax_rem", jx_lax_rem(x[0], x[1]));
  jx_dtype dt = JX_DTYPE_DEFAULT;
  if (golden_param(c, "dtype")) golden_parse_dtype(golden_param(c, "dtype"), &dt, &(bool){false});
  bool inc = golden_param_int(c, "include_initial", 0);
  R("cumulative_sum", jx_cumulative_sum(x[0], axis, dt, inc));
  R("cumulative_prod", jx_cumulative_prod(x[0], axis, dt, inc));
  R("digitize", jx_digitize(x[0], x[1], golden_param_int(c, "right", 0)));
  R("interp", jx_interp(x[0], x[1], x[2], c->nin > 3 ? x[3] : NULL, c->nin > 4 ? x[4] : NULL));
  double range[2] = {0, 0};
  const char *rs = golden_param(c, "range");
  if (rs) sscanf(rs, "%lf,%lf", &range[0], &range[1]);
  int64_t bins = golden_param_int(c, "bins", 10);
  R("histogram_bin_edges", jx_histogram_bin_edges(x[0], bins, rs ? range : NULL));
  R("unwrap", jx_unwrap(x[0], param_f(c, "discont", NAN), axis == JX_AXIS_NONE ? -1 : axis,
                        param_f(c, "period", 2 * M_PI)));
  R("polyval", jx_polyval(x[0], x[1]));
  R("polymul", jx_polymul(x[0], x[1]));
  int ax[JX_MAX_NDIM] = {0};
  const char *as = golden_param(c, "axes");
  int nax = as ? 1 : 0;
  if (as) ax[0] = atoi(as);
  const int *axes = as ? ax : NULL;
  bool kd = golden_param_int(c, "keepdims", 0);
  const char *is = golden_param(c, "initial");
  jx_array *init = is ? jx_scalar(atof(is)) : NULL;
  jx_array *w = c->nin > 1 ? x[1] : NULL;
  jx_array *r = NULL;
  bool hit = true;
  if (!strcmp(f, "sum_where")) r = jx_sum_where(x[0], nax, axes, kd, w, init);
  else if (!strcmp(f, "prod_where")) r = jx_prod_where(x[0], nax, axes, kd, w, init);
  else if (!strcmp(f, "max_where")) r = jx_max_where(x[0], nax, axes, kd, w, init);
  else if (!strcmp(f, "min_where")) r = jx_min_where(x[0], nax, axes, kd, w, init);
  else if (!strcmp(f, "mean_where")) r = jx_mean_where(x[0], nax, axes, kd, w);
  else if (!strcmp(f, "take_fill")) r = jx_take_fill(x[0], x[1], axis, param_f(c, "fill", 0));
  else if (!strcmp(f, "take_along_fill")) r = jx_take_along_axis_fill(x[0], x[1], axis, param_f(c, "fill", 0));
  else if (!strcmp(f, "take")) r = jx_take(x[0], x[1], axis);
  else if (!strcmp(f, "take_along")) r = jx_take_along_axis(x[0], x[1], axis, JX_INDEX_FILL);
  else if (!strcmp(f, "matmul")) r = jx_matmul(x[0], x[1]);
  else if (!strcmp(f, "dot")) r = jx_dot(x[0], x[1]);
  else if (!strcmp(f, "inner")) r = jx_inner(x[0], x[1]);
  else if (!strcmp(f, "vdot")) r = jx_vdot(x[0], x[1]);
  else if (!strcmp(f, "tensordot")) r = jx_tensordot(x[0], x[1], (int)golden_param_int(c, "n", 2));
  else if (!strcmp(f, "dus")) r = jx_lax_dynamic_update_slice(x[0], x[1], &x[2]);
  else if (!strcmp(f, "nan_to_num")) r = jx_nan_to_num(x[0], 0, NAN, NAN);
  else if (!strcmp(f, "heaviside")) r = jx_heaviside(x[0], x[1]);
  else if (!strcmp(f, "sinc")) r = jx_sinc(x[0]);
  else if (!strcmp(f, "logaddexp2")) r = jx_logaddexp2(x[0], x[1]);
  else hit = false;
  jx_free(init);
  if (hit) return out[0] = r, 1;
#undef R
  if (!strcmp(f, "frexp")) return jx_frexp(x[0], out), 2;
  int64_t size = golden_param_int(c, "size", -1), fillv[JX_MAX_NDIM];
  for (int d = 0; d < JX_MAX_NDIM; d++) fillv[d] = golden_param_int(c, "fill", 0);
  const int64_t *fill = golden_param(c, "fill") ? fillv : NULL;
  if (!strcmp(f, "nonzero")) return jx_nonzero(x[0], size, fill, out), jx_ndim(x[0]);
  int64_t kth = golden_param_int(c, "kth", 0);
#define R(n, e) if (!strcmp(f, n)) return out[0] = (e), 1
  R("flatnonzero", jx_flatnonzero(x[0], size, fill));
  R("argwhere", jx_argwhere(x[0], size, fill));
  R("partition", jx_partition(x[0], kth, axis == JX_AXIS_NONE ? -1 : axis));
  R("argpartition", jx_argpartition(x[0], kth, axis == JX_AXIS_NONE ? -1 : axis));
#undef R
  if (!strcmp(f, "histogram"))
    return jx_histogram(x[0], bins, rs ? range : NULL, c->nin > 1 ? x[1] : NULL, golden_param_int(c, "density", 0),
                        out), 2;
  return 0;
}

static jx_status f_value(void *ctx, jx_array *const *x, jx_array **out) {
  const GoldenCase *c = ctx;
  int n = apply(c, c->fn, x, out);
  if (!n) return JX_ERR_VALUE;
  for (int o = 0; o < n; o++)
    if (!out[o]) return jx_last_status() != JX_OK ? jx_last_status() : JX_ERR_INTERNAL;
  return JX_OK;
}
/* the functions the grad_ cases differentiate (as the generator writes them) */
static jx_status f_loss(void *ctx, jx_array *const *x, jx_array **out) {
  const GoldenCase *c = ctx;
  const char *f = c->fn + 5;
  jx_array *r = NULL;
  if (!strcmp(f, "interp")) r = jx_interp(x[0], x[1], x[2], NULL, NULL);
  if (!strcmp(f, "polyval")) r = jx_polyval(x[0], x[1]);
  if (!strcmp(f, "ldexp")) r = jx_ldexp(x[0], x[1]);
  if (!strcmp(f, "unwrap")) r = jx_square(jx_unwrap(x[0], NAN, -1, 2 * M_PI));
  if (!strcmp(f, "round")) r = jx_multiply(jx_round_decimals(x[0], 1), x[0]);
  if (!strcmp(f, "partition")) r = jx_multiply(jx_partition(x[0], 2, -1), jx_arange(0, 6, 1, JX_FLOAT32));
  if (!strcmp(f, "sum_where")) r = jx_square(jx_sum_where(x[0], 1, (int[]){1}, false, x[1], NULL));
  if (!strcmp(f, "mean_where")) r = jx_mean_where(x[0], 1, (int[]){0}, false, x[1]);
  out[0] = jx_sum(r, 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_goldens(void) {
  int n = 0;
  GoldenCase *cases = golden_load("numpy_more.txt", &n);
  CHECK_MSG(cases != NULL, "cannot load numpy_more.txt (run tools/golden_numpy_more.py)");
  int run = 0;
  for (int k = 0; cases && k < n; k++) {
    GoldenCase *c = &cases[k];
    jx_config_enable_x64(golden_param_int(c, "x64", 0));
    bool grad = !strncmp(c->fn, "grad_", 5);
    jx_fn *f = grad ? NULL : jx_fn_new(c->fn, c->nin, c->err ? 2 : c->nout, f_value, c);
    if (grad) {
      jx_fn *l = jx_fn_new(c->fn, c->nin, 1, f_loss, c);
      f = jx_grad(l, 1, (int[]){0});
      jx_fn_free(l);
    }
    jx_fn *jf = jx_jit(f);
    jx_array *in[6] = {NULL}, *out[2] = {NULL, NULL};
    for (int i = 0; i < c->nin; i++) in[i] = golden_to_array(&c->in[i]);
    for (int mode = 0; mode < 2; mode++) {
      char ctx[160];
      snprintf(ctx, sizeof ctx, "%s (line %d, %s)", c->name, c->line, mode ? "jit" : "eager");
      jx_status s = jx_call(mode ? jf : f, in, out);
      if (mode && golden_param_int(c, "size", 0) < 0) { /* a data-dependent size cannot be traced */
        CHECK_MSG(s == JX_ERR_VALUE, "%s: expected JX_ERR_VALUE, got %s", ctx, jx_status_name(s));
      } else if (c->err != JX_OK) {
        CHECK_MSG(s == c->err, "%s: expected %s, got %s (%s)", ctx, jx_status_name(c->err), jx_status_name(s),
                  jx_last_error());
      } else {
        CHECK_MSG(s == JX_OK, "%s: %s", ctx, jx_last_error());
        for (int o = 0; s == JX_OK && o < c->nout; o++) {
          jx_dtype d = c->out[o].dtype;
          double rtol = d == JX_FLOAT16 ? 1e-3 : d == JX_FLOAT64 ? 1e-13 : 4e-6;
          golden_compare(ctx, out[o], &c->out[o], rtol, rtol * 0.25);
        }
      }
      jx_clear_error();
      for (int o = 0; o < 2; o++) jx_free(out[o]), out[o] = NULL;
    }
    for (int i = 0; i < c->nin; i++) jx_free(in[i]);
    jx_fn_free(jf), jx_fn_free(f);
    run++;
  }
  jx_config_enable_x64(false);
  golden_free(cases, n);
  printf("%d golden numpy_more cases\n", run);
}

static void test_bad_inputs(void) {
  jx_array *x = jx_ones(1, (int64_t[]){3}, JX_FLOAT32), *m = jx_ones(2, (int64_t[]){2, 2}, JX_FLOAT32);
  jx_array *out[2];
  CHECK(jx_frexp(NULL, out) == JX_ERR_VALUE && out[0] == NULL && out[1] == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_frexp");
  CHECK(jx_digitize(x, m, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_digitize: bins must be a 1-dimensional array");
  CHECK(jx_interp(x, x, m, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_interp: xp and fp");
  CHECK(jx_histogram_bin_edges(x, -1, NULL) == NULL); /* 0 is JAX's one edge, no bins */
  CHECK_ERROR(JX_ERR_VALUE, "jx_histogram_bin_edges: bins must be non-negative");
  CHECK(jx_histogram(x, 3, NULL, m, false, out) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_histogram: weights");
  CHECK(jx_cumulative_sum(m, JX_AXIS_NONE, JX_DTYPE_DEFAULT, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_cumulative_sum: the input array has rank 2");
  CHECK(jx_cumulative_sum(m, 2, JX_DTYPE_DEFAULT, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_cumulative_sum: axis 2");
  CHECK(jx_unwrap(x, NAN, 1, 6.0) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_unwrap");
  CHECK(jx_max_where(m, 0, NULL, false, m, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "does not have an identity");
  CHECK(jx_polymul(m, x) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_polymul");
  /* lax.rem / lax.div: a weak scalar of another kind is refused as JAX refuses it
   * ("lax.rem requires arguments to have the same dtypes, got int32, float32"); one of
   * the same kind takes the array's dtype */
  jx_array *xi = jx_array_from((int8_t[]){7, -7}, JX_INT8, 1, (int64_t[]){2}), *h = jx_scalar(1.5), *two = jx_scalar_int(2);
  CHECK(jx_lax_rem(xi, h) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_lax_rem: requires arguments to have the same dtypes, got int8, float32");
  CHECK(jx_lax_div(h, xi) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_lax_div: requires arguments to have the same dtypes, got float32, int8");
  jx_array *r = jx_lax_rem(xi, two);
  int8_t rv[2] = {0, 0};
  CHECK(r && jx_dtype_of(r) == JX_INT8 && jx_read(r, rv, 2) == JX_OK && rv[0] == 1 && rv[1] == -1);
  jx_free(r), jx_free(xi), jx_free(h), jx_free(two);
  jx_free(x), jx_free(m);
}

int main(void) {
  TEST_RUN(test_goldens);
  TEST_RUN(test_bad_inputs);
  return test_finish();
}
