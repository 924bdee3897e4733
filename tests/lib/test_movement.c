/* test_movement.c -- jnp shape manipulation (src/lib/numpy/movement.c) against JAX
 * goldens (tests/golden/reduce_movement.txt, tools/golden_reduce_movement.py) and its
 * errors: NULL inputs, size mismatches, negative and overflowing dims, bad axes. */
#include <stdlib.h>

#include "golden.h"
#include "test.h"

static GoldenCase *cases;
static int ncases;

/* Param `key` as an int64 list ("2,-1"; "none" -> JX_SLICE_END); false when absent. */
static bool param_list(const GoldenCase *c, const char *key, int64_t *out, int *n) {
  const char *s = golden_param(c, key);
  *n = 0;
  if (!s) return false;
  while (*s && *n < 64) {
    char *end = (char *)s + 4;
    int64_t v = strncmp(s, "none", 4) == 0 ? JX_SLICE_END : strtoll(s, &end, 10);
    if (end == s) break;
    out[(*n)++] = v;
    s = *end == ',' ? end + 1 : end;
  }
  return true;
}

/* An int param where "none" means JX_AXIS_NONE. */
static int param_axis(const GoldenCase *c, const char *key) {
  const char *s = golden_param(c, key);
  return !s || !strcmp(s, "none") ? JX_AXIS_NONE : atoi(s);
}

static void to_int(const int64_t *v, int n, int *out) {
  for (int i = 0; i < n; i++) out[i] = (int)v[i];
}

/* Runs a movement case: fills out[], returns the number of results, or -1 if c->fn is
 * not a movement function. */
static int call_movement(const GoldenCase *c, jx_array **in, jx_array **out) {
  int64_t l[64];
  int n, ax[64];
  bool has = param_list(c, c->fn[0] == 'p' ? "pad" : "shape", l, &n);
  const char *f = c->fn;
  jx_array *x = in[0];
  if (!strcmp(f, "reshape")) return out[0] = jx_reshape(x, n, l), 1;
  if (!strcmp(f, "ravel")) return out[0] = jx_ravel(x), 1;
  if (!strcmp(f, "broadcast_to")) return out[0] = jx_broadcast_to(x, n, l), 1;
  if (!strcmp(f, "pad")) return out[0] = jx_pad(x, l, strtod(golden_param(c, "value"), NULL)), 1;
  if (!strcmp(f, "transpose")) {
    has = param_list(c, "perm", l, &n);
    to_int(l, n, ax);
    return out[0] = jx_transpose(x, has ? ax : NULL), 1;
  }
  if (!strcmp(f, "swapaxes"))
    return out[0] = jx_swapaxes(x, param_axis(c, "axis1"), param_axis(c, "axis2")), 1;
  if (!strcmp(f, "moveaxis"))
    return out[0] = jx_moveaxis(x, param_axis(c, "source"), param_axis(c, "destination")), 1;
  if (!strcmp(f, "expand_dims")) return out[0] = jx_expand_dims(x, param_axis(c, "axis")), 1;
  if (!strcmp(f, "squeeze") || !strcmp(f, "flip")) {
    has = param_list(c, "axes", l, &n);
    to_int(l, n, ax);
    out[0] = f[0] == 's' ? jx_squeeze(x, n, has ? ax : NULL) : jx_flip(x, n, has ? ax : NULL);
    return 1;
  }
  if (!strcmp(f, "concatenate"))
    return out[0] = jx_concatenate(c->nin, in, param_axis(c, "axis")), 1;
  if (!strcmp(f, "stack")) return out[0] = jx_stack(c->nin, in, param_axis(c, "axis")), 1;
  if (!strcmp(f, "split")) {
    int64_t k = golden_param_int(c, "sections", 1);
    jx_status s = jx_split(x, k, param_axis(c, "axis"), out);
    return s == JX_OK ? (int)k : 0;
  }
  if (!strcmp(f, "split_indices")) {
    param_list(c, "indices", l, &n);
    jx_status s = jx_split_indices(x, n, l, param_axis(c, "axis"), out);
    return s == JX_OK ? n + 1 : 0;
  }
  if (!strcmp(f, "roll"))
    return out[0] = jx_roll(x, golden_param_int(c, "shift", 0), param_axis(c, "axis")), 1;
  if (!strcmp(f, "tile")) {
    param_list(c, "reps", l, &n);
    return out[0] = jx_tile(x, n, l), 1;
  }
  if (!strcmp(f, "repeat"))
    return out[0] = jx_repeat(x, golden_param_int(c, "repeats", 1), param_axis(c, "axis")), 1;
  if (!strcmp(f, "take")) return out[0] = jx_take(x, in[1], param_axis(c, "axis")), 1;
  if (!strcmp(f, "slice")) {
    int64_t start[64], stop[64], step[64];
    int n1, n2;
    param_list(c, "start", start, &n);
    param_list(c, "stop", stop, &n1);
    param_list(c, "step", step, &n2);
    return out[0] = jx_slice(x, n, start, stop, step), 1;
  }
  return -1;
}

static void test_golden_movement(void) {
  int run = 0;
  CHECK_MSG(cases != NULL, "cannot load reduce_movement.txt (run tools/golden_reduce_movement.py)");
  for (int i = 0; i < ncases; i++) {
    const GoldenCase *c = &cases[i];
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s (line %d)", c->name, c->line);
    jx_scope_begin();
    jx_array *in[8] = {NULL}, *out[64] = {NULL};
    for (int k = 0; k < c->nin && k < 8; k++) in[k] = golden_to_array(&c->in[k]);
    int nout = c->nin ? call_movement(c, in, out) : -1;
    if (nout >= 0) {
      run++;
      if (c->err) {
        CHECK_MSG(jx_last_status() == c->err, "%s: expected %s, got %s (%s)", ctx,
                  jx_status_name(c->err), jx_status_name(jx_last_status()), jx_last_error());
      } else {
        CHECK_MSG(nout == c->nout, "%s: %d results, expected %d (%s)", ctx, nout, c->nout,
                  jx_last_error());
        for (int k = 0; k < c->nout && k < nout; k++) golden_compare(ctx, out[k], &c->out[k], 0, 0);
      }
    }
    jx_clear_error();
    jx_scope_end(0, NULL);
  }
  CHECK_MSG(run > 150, "only %d movement cases ran", run);
  printf("%d golden movement cases\n", run);
}

/* ------------------------------------------------------------ bad inputs */

static jx_array *cube(void) {
  float d[24];
  for (int i = 0; i < 24; i++) d[i] = (float)i;
  return jx_array_from(d, JX_FLOAT32, 3, (int64_t[]){2, 3, 4});
}

static void test_null_inputs(void) {
  jx_array *x = cube();
  CHECK(jx_reshape(NULL, 1, (int64_t[]){1}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_reshape");
  CHECK(jx_reshape(x, 2, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_reshape: shape is NULL");
  CHECK(jx_concatenate(2, (jx_array *[]){x, NULL}, 0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_concatenate");
  CHECK(jx_take(x, NULL, 0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_take: indices is NULL");
  CHECK(jx_pad(x, NULL, 0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_pad: pad_width is NULL");
  CHECK(jx_split(x, 2, 0, NULL) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_split: out is NULL");
  CHECK(jx_transpose(jx_flip(NULL, 0, NULL), NULL) == NULL); /* the chain keeps the first */
  CHECK_ERROR(JX_ERR_VALUE, "jx_flip");
  jx_free(x);
}

static void test_reshape_errors(void) {
  jx_array *x = cube();
  CHECK(jx_reshape(x, 2, (int64_t[]){5, -1}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_reshape: cannot reshape array of shape (2,3,4) (size 24) "
                            "into shape (5,-1)");
  CHECK(jx_reshape(x, 2, (int64_t[]){5, 5}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "into shape (5,5)");
  CHECK(jx_reshape(x, 3, (int64_t[]){-1, 2, -1}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "at most one -1");
  CHECK(jx_reshape(x, 2, (int64_t[]){-2, -12}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_reshape: bad shape (-2,-12)");
  CHECK(jx_reshape(x, 3, (int64_t[]){INT64_MAX / 2, 4, 3}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_reshape: cannot reshape array of shape (2,3,4) into shape "
                            "(4611686018427387903,4,3) (its size overflows int64)");
  CHECK(jx_reshape(x, 17, (int64_t[17]){0}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_reshape: ndim 17");
  jx_array *e = jx_zeros(1, (int64_t[]){0}, JX_FLOAT32);
  CHECK(jx_reshape(e, 2, (int64_t[]){-1, 0}) == NULL); /* -1 is ambiguous for size 0 */
  CHECK_ERROR(JX_ERR_SHAPE, "jx_reshape");
  jx_free(e);
  jx_free(x);
}

static void test_broadcast_errors(void) {
  jx_array *x = cube();
  CHECK(jx_broadcast_to(x, 3, (int64_t[]){2, 5, 4}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_broadcast_to: cannot broadcast shape (2,3,4) to shape (2,5,4)");
  CHECK(jx_broadcast_to(x, 2, (int64_t[]){3, 4}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "to shape (3,4)");
  CHECK(jx_broadcast_to(x, 4, (int64_t[]){-1, 2, 3, 4}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_broadcast_to: negative dimension in shape (-1,2,3,4)");
  CHECK(jx_broadcast_to(x, 5, (int64_t[]){INT64_MAX, 4, 2, 3, 4}) == NULL);
  CHECK_ERROR(JX_ERR_OOM, "jx_broadcast_to: the size of shape (9223372036854775807,4,2,3,4)");
  CHECK(jx_expand_dims(x, 4) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_expand_dims: axis 4");
  CHECK(jx_squeeze(x, 1, (int[]){1}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_squeeze: cannot squeeze axis 1 of shape (2,3,4)");
  CHECK(jx_squeeze(x, 2, (int[]){0, 0}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "repeated axis");
  CHECK(jx_transpose(x, (int[]){0, 1, 1}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_transpose: axes are not a permutation");
  CHECK(jx_transpose(x, (int[]){0, 1, 3}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_transpose: axis 3");
  CHECK(jx_swapaxes(x, 0, -4) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_swapaxes");
  CHECK(jx_moveaxis(x, 3, 0) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_moveaxis");
  CHECK(jx_flip(x, 1, (int[]){5}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_flip");
  jx_free(x);
}

static void test_join_split_errors(void) {
  jx_array *x = cube(), *s = jx_scalar(1.0), *parts[4] = {NULL};
  jx_array *y = jx_zeros(3, (int64_t[]){2, 4, 4}, JX_FLOAT32);
  CHECK(jx_concatenate(0, NULL, 0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_concatenate: need at least one array");
  CHECK(jx_concatenate(2, (jx_array *[]){x, y}, 2) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_concatenate: shapes (2,3,4) and (2,4,4)");
  CHECK(jx_concatenate(2, (jx_array *[]){s, s}, 0) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "zero-dimensional");
  CHECK(jx_concatenate(2, (jx_array *[]){x, x}, 3) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_concatenate: axis 3");
  CHECK(jx_stack(2, (jx_array *[]){x, y}, 0) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_stack: all input arrays must have the same shape");
  CHECK(jx_stack(1, (jx_array *[]){x}, 4) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_stack");
  CHECK(jx_split(x, 3, 2, parts) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_split: 3 sections do not divide axis 2 of size 4");
  CHECK(jx_split(x, 0, 0, parts) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_split");
  CHECK(jx_split_indices(x, 2, (int64_t[]){3, 1}, 2, parts) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_split_indices: indices must ascend");
  CHECK(jx_split_indices(x, 1, (int64_t[]){5}, 2, parts) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_split_indices");
  CHECK(jx_split_indices(x, 1, (int64_t[]){-1}, 2, parts) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_split_indices");
  CHECK(parts[0] == NULL);
  jx_free(x), jx_free(y), jx_free(s);
}

static void test_pad_tile_errors(void) {
  jx_array *x = cube();
  CHECK(jx_pad(x, (int64_t[]){0, 0, -1, 0, 0, 0}, 0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_pad: negative pad width (-1, 0) for axis 1");
  CHECK(jx_pad(x, (int64_t[]){0, 0, 0, INT64_MAX, 0, 0}, 0) == NULL);
  CHECK_ERROR(JX_ERR_OOM, "jx_pad: the result of shape (2,3,4) would have more than INT64_MAX");
  CHECK(jx_tile(x, 1, (int64_t[]){-2}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_tile: negative repetition count -2");
  CHECK(jx_tile(x, 2, (int64_t[]){INT64_MAX / 2, INT64_MAX / 2}) == NULL);
  CHECK_ERROR(JX_ERR_OOM, "jx_tile: the result of shape (2,3,4) would have more than");
  CHECK(jx_tile(x, 17, (int64_t[17]){0}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_tile");
  CHECK(jx_repeat(x, -1, 0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_repeat: negative repeat count");
  CHECK(jx_repeat(x, INT64_MAX / 2, JX_AXIS_NONE) == NULL);
  CHECK_ERROR(JX_ERR_OOM, "jx_repeat: the result of shape (2,3,4) would have more than");
  CHECK(jx_repeat(x, 2, 3) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_repeat: axis 3");
  CHECK(jx_roll(x, 1, 3) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_roll");
  jx_free(x);
}

static void test_slice_take_errors(void) {
  jx_array *x = cube();
  int64_t z[3] = {0, 0, 0}, e[3] = {JX_SLICE_END, JX_SLICE_END, JX_SLICE_END};
  CHECK(jx_slice(x, 3, z, e, (int64_t[]){1, 0, 1}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_slice: slice step cannot be zero (axis 1)");
  CHECK(jx_slice(x, 4, z, e, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_slice: 4 slices for an array of rank 3");
  /* Extreme bounds and steps clamp as Python does. */
  jx_array *s = jx_slice(x, 1, (int64_t[]){INT64_MIN}, (int64_t[]){INT64_MAX - 1},
                         (int64_t[]){INT64_MIN});
  CHECK(s && jx_shape(s)[0] == 0);
  jx_free(s);
  s = jx_slice(x, 1, (int64_t[]){JX_SLICE_END}, (int64_t[]){INT64_MIN}, (int64_t[]){INT64_MIN});
  CHECK(s && jx_shape(s)[0] == 1);
  jx_free(s);
  float fi[1] = {0};
  jx_array *fidx = jx_array_from(fi, JX_FLOAT32, 1, (int64_t[]){1});
  CHECK(jx_take(x, fidx, 0) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_take: indices must be integers, got float32[1]");
  int32_t ii[1] = {0};
  jx_array *idx = jx_array_from(ii, JX_INT32, 1, (int64_t[]){1});
  jx_array *empty = jx_zeros(2, (int64_t[]){2, 0}, JX_FLOAT32);
  CHECK(jx_take(empty, idx, 1) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_take: cannot do a non-empty take from an empty axis");
  CHECK(jx_take(x, idx, -4) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_take: axis -4");
  jx_free(x), jx_free(fidx), jx_free(idx), jx_free(empty);
}

/* More operands than one kernel takes (KERNEL_MAX_ARGS): joined in groups. */
static void test_stack_many(void) {
  jx_array *xs[100];
  for (int i = 0; i < 100; i++) xs[i] = jx_scalar_of(i, JX_INT16);
  jx_array *s = jx_stack(100, xs, 0);
  CHECK(s && jx_ndim(s) == 1 && jx_shape(s)[0] == 100 && jx_dtype_of(s) == JX_INT16);
  double *v = test_read_f64(s);
  for (int i = 0; v && i < 100; i++) CHECK_NEAR(v[i], i, 0);
  free(v);
  jx_free(s);
  for (int i = 0; i < 100; i++) jx_free(xs[i]);
}

/* jnp.repeat of a 0-d array along any axis, and sort / argsort / lexsort of NULL: as
 * jax 0.10.2 (helper-68's trial: jaxc said JX_ERR_SHAPE; sort(NULL) left no error) */
static void test_repeat_0d_and_null_sorts(void) {
  jx_scope_begin();
  for (int axis = -1; axis <= 1; axis++) {
    jx_array *r = jx_repeat(jx_scalar_of(7, JX_INT32), 3, axis);
    CHECK_MSG(r && jx_ndim(r) == 1 && jx_shape(r)[0] == 3 && jx_item(jx_sum(r, 0, NULL, false)) == 21, "axis %d: %s", axis,
              r ? "wrong" : jx_last_error());
  }
  CHECK(jx_sort(NULL, 0, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_sort: NULL argument 0");
  CHECK(jx_argsort(NULL, 0, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_argsort: NULL argument 0");
  CHECK(jx_lexsort(1, NULL, 0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lexsort: keys is NULL");
  jx_scope_end(0, NULL);
}

int main(void) {
  cases = golden_load("reduce_movement.txt", &ncases);
  TEST_RUN(test_golden_movement);
  TEST_RUN(test_null_inputs);
  TEST_RUN(test_reshape_errors);
  TEST_RUN(test_broadcast_errors);
  TEST_RUN(test_join_split_errors);
  TEST_RUN(test_pad_tile_errors);
  TEST_RUN(test_slice_take_errors);
  TEST_RUN(test_stack_many);
  TEST_RUN(test_repeat_0d_and_null_sorts);
  golden_free(cases, ncases);
  return test_finish();
}
