/* parallel.c -- lax's collectives (jax/_src/lax/parallel.py) over the primitives of
 * trace/collective.c; pmean is psum divided by the axis size, as in JAX. */
#include "core/error.h"
#include "trace/collective.h"

jx_array *jx_lax_psum(jx_array *x, const char *axis_name) { return prim_psum(x, axis_name); }
jx_array *jx_lax_pmax(jx_array *x, const char *axis_name) { return prim_pmax(x, axis_name); }
jx_array *jx_lax_pmin(jx_array *x, const char *axis_name) { return prim_pmin(x, axis_name); }

int64_t jx_lax_axis_size(const char *axis_name) {
  if (!axis_name) {
    error_set(JX_ERR_VALUE, "jx_lax_axis_size: axis_name is NULL");
    return -1;
  }
  const AxisFrame *f = collective_axis("jx_lax_axis_size", axis_name);
  return f ? f->size : -1;
}

jx_array *jx_lax_pmean(jx_array *x, const char *axis_name) {
  jx_array *s = prim_psum(x, axis_name);
  if (!s) return NULL;
  int64_t n = jx_lax_axis_size(axis_name);
  jx_array *r = jx_divide(s, jx_scalar((double)n));
  jx_free(s);
  return r;
}

jx_array *jx_lax_all_gather(jx_array *x, const char *axis_name, int axis, bool tiled) {
  if (x && axis < 0) axis += jx_ndim(x) + (tiled ? 0 : 1);
  return prim_all_gather(x, axis_name, axis, tiled);
}

jx_array *jx_lax_psum_scatter(jx_array *x, const char *axis_name, int scatter_dimension,
                              bool tiled) {
  if (x && scatter_dimension < 0) scatter_dimension += jx_ndim(x);
  return prim_psum_scatter(x, axis_name, scatter_dimension, tiled);
}

jx_array *jx_lax_ppermute(jx_array *x, const char *axis_name, int npairs, const int (*perm)[2]) {
  if (x && npairs > 0 && !perm) {
    error_set(JX_ERR_VALUE, "jx_lax_ppermute: perm is NULL for %d pairs", npairs);
    return NULL;
  }
  return prim_ppermute(x, axis_name, npairs < 0 ? 0 : npairs, perm);
}

jx_array *jx_lax_all_to_all(jx_array *x, const char *axis_name, int split_axis, int concat_axis,
                            bool tiled) {
  if (x && split_axis < 0) split_axis += jx_ndim(x);
  if (x && concat_axis < 0) concat_axis += jx_ndim(x);
  return prim_all_to_all(x, axis_name, split_axis, concat_axis, tiled);
}

jx_array *jx_lax_axis_index(const char *axis_name) { return prim_axis_index(axis_name); }
