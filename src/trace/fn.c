/* fn.c -- jx_fn, the refcounted callable that transformations consume and produce,
 * and jx_call, which runs a user function inside an implicit scope. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "trace/trace.h"

struct jx_fn {
  int64_t refcount;
  char *name;
  int nin, nout;
  jx_fn_impl impl;
  void *ctx;
  void (*free_ctx)(void *ctx);
};

static int64_t live_fns; /* atomic */

jx_fn *jx_fn_new(const char *name, int nin, int nout, jx_fn_impl impl, void *ctx) {
  return jx_fn_new_with_free(name, nin, nout, impl, ctx, NULL);
}

jx_fn *jx_fn_new_with_free(const char *name, int nin, int nout, jx_fn_impl impl, void *ctx,
                           void (*free_ctx)(void *ctx)) {
  if (nin < 0 || nout < 1 || !impl) {
    error_set(JX_ERR_VALUE, "jx_fn_new(%s): needs nin >= 0, nout >= 1 and an impl (got %d, %d, %s)",
              name ? name : "", nin, nout, impl ? "impl" : "NULL");
    return NULL;
  }
  jx_fn *f = calloc(1, sizeof *f);
  char *copy = strdup(name ? name : "fn");
  if (!f || !copy) {
    free(f);
    free(copy);
    error_set(JX_ERR_OOM, "jx_fn_new: out of memory");
    return NULL;
  }
  *f = (jx_fn){.refcount = 1, .name = copy, .nin = nin, .nout = nout, .impl = impl, .ctx = ctx,
               .free_ctx = free_ctx};
  __atomic_add_fetch(&live_fns, 1, __ATOMIC_RELAXED);
  return f;
}

jx_fn *jx_fn_ref(jx_fn *f) {
  if (f) __atomic_add_fetch(&f->refcount, 1, __ATOMIC_RELAXED);
  return f;
}

void jx_fn_free(jx_fn *f) {
  if (!f || __atomic_sub_fetch(&f->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
  if (f->free_ctx) f->free_ctx(f->ctx);
  free(f->name);
  free(f);
  __atomic_sub_fetch(&live_fns, 1, __ATOMIC_RELAXED);
}

void *fn_ctx(const jx_fn *f, jx_fn_impl impl) { return f && f->impl == impl ? f->ctx : NULL; }

int jx_fn_nin(const jx_fn *f) { return f ? f->nin : 0; }
int jx_fn_nout(const jx_fn *f) { return f ? f->nout : 0; }
const char *jx_fn_name(const jx_fn *f) { return f ? f->name : NULL; }
int64_t jx_live_fns(void) { return __atomic_load_n(&live_fns, __ATOMIC_RELAXED); }

jx_status jx_call(jx_fn *f, jx_array *const *in, jx_array **out) {
  if (!f || !out || (f->nin > 0 && !in)) {
    error_set(JX_ERR_VALUE, "jx_call: %s is NULL", !f ? "the function" : !out ? "out" : "in");
    return JX_ERR_VALUE;
  }
  for (int i = 0; i < f->nout; i++) out[i] = NULL;
  for (int i = 0; i < f->nin; i++)
    if (!in[i]) {
      if (!error_pending())
        error_set(JX_ERR_VALUE, "jx_call(%s): input %d is NULL", f->name, i);
      return jx_last_status();
    }
  jx_scope_begin();
  jx_status s = f->impl(f->ctx, in, out);
  for (int i = 0; s == JX_OK && i < f->nout; i++)
    if (!out[i]) {
      s = error_pending() ? jx_last_status() : JX_ERR_VALUE;
      error_set(JX_ERR_VALUE, "jx_call(%s): output %d was not set", f->name, i);
    }
  if (s != JX_OK) {
    if (!error_pending()) error_set(s, "jx_call(%s): the function returned %s", f->name,
                                    jx_status_name(s));
    for (int i = 0; i < f->nout; i++) out[i] = NULL;
    jx_scope_end(0, NULL);
    return s;
  }
  /* Outputs may be borrowed (an input passed through): take a reference of our own
   * inside the scope, so the scope hands exactly one reference per output outward. */
  for (int i = 0; i < f->nout; i++) jx_ref(out[i]);
  jx_scope_end(f->nout, out);
  return JX_OK;
}
