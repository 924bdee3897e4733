/* fn.c -- jx_fn, the refcounted callable that transformations consume and produce,
 * and jx_call, which runs a user function inside an implicit scope. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "trace/trace.h"

/* jx_fn.magic: FN_MAGIC_LIVE while referenced, poisoned when the last reference is
 * dropped so that JAXC_CHECKS builds catch a double jx_fn_free by name. */
#define FN_MAGIC_LIVE 0x6a78666eu /* "jxfn" */
#define FN_MAGIC_DEAD 0xdeadf00du

struct jx_fn {
  uint32_t magic;
  int64_t refcount;
  char *name;
  int nin, nout;
  jx_fn_impl impl;
  void *ctx;
  void (*free_ctx)(void *ctx);
  bool internal; /* made inside array_internal_begin: a library cache's, not jx_live_fns' */
  char name_buf[]; /* name points here: one allocation, readable in quarantine */
};

static int64_t live_fns;     /* atomic: the user's (jx_live_fns) ... */
static int64_t internal_fns; /* atomic: ... and the library caches' (fn_internal_live) */

/* ---------------------------------------------------------- function scopes */

/* The thread's open function scopes: each lists the references created since its
 * jx_fn_scope_begin that are still held (a jx_fn_free removes the entry it drops). */
typedef struct FnScope {
  jx_fn **items;
  int n, cap;
} FnScope;

static _Thread_local FnScope *fn_scopes;
static _Thread_local int fn_depth, fn_cap;

/* Freed when the thread exits (see the array scopes in core/array.c). */
static pthread_key_t fn_scopes_key;
static pthread_once_t fn_scopes_once = PTHREAD_ONCE_INIT;
static void fn_scopes_free(void *p) {
  (void)p;
  for (int d = 0; d < fn_depth; d++) free(fn_scopes[d].items);
  free(fn_scopes);
  fn_scopes = NULL, fn_depth = fn_cap = 0;
}
static void fn_scopes_key_create(void) { pthread_key_create(&fn_scopes_key, fn_scopes_free); }

static bool fn_scope_push(FnScope *s, jx_fn *f) {
  if (s->n == s->cap) {
    int cap = s->cap ? s->cap * 2 : 16;
    jx_fn **items = realloc(s->items, (size_t)cap * sizeof *items);
    if (!items) return false;
    s->items = items, s->cap = cap;
  }
  s->items[s->n++] = f;
  return true;
}

/* Registers a new reference to f with the innermost scope; false (JX_ERR_OOM) if the
 * list cannot grow. */
static bool fn_scope_register(const char *what, jx_fn *f) {
  if (fn_depth == 0 || fn_scope_push(&fn_scopes[fn_depth - 1], f)) return true;
  error_set(JX_ERR_OOM, "%s: out of memory", what);
  return false;
}

/* Removes the most recent entry for f (innermost scope first): the reference a
 * jx_fn_free drops is then no longer the scope's to drop. */
static void fn_scope_forget(jx_fn *f) {
  for (int d = fn_depth - 1; d >= 0; d--) {
    FnScope *s = &fn_scopes[d];
    for (int i = s->n - 1; i >= 0; i--)
      if (s->items[i] == f) {
        memmove(s->items + i, s->items + i + 1, (size_t)(s->n - i - 1) * sizeof *s->items);
        s->n--;
        return;
      }
  }
}

void jx_fn_scope_begin(void) {
  if (fn_depth == fn_cap) {
    int cap = fn_cap ? fn_cap * 2 : 4;
    FnScope *s = realloc(fn_scopes, (size_t)cap * sizeof *s);
    if (!s) {
      error_set(JX_ERR_OOM, "jx_fn_scope_begin: out of memory");
      return;
    }
    if (!fn_scopes) {
      pthread_once(&fn_scopes_once, fn_scopes_key_create);
      pthread_setspecific(fn_scopes_key, s);
    }
    fn_scopes = s, fn_cap = cap;
  }
  fn_scopes[fn_depth++] = (FnScope){0};
}

jx_status jx_fn_scope_end(int n, jx_fn *const *keep) {
  if (fn_depth == 0) {
    error_set(JX_ERR_VALUE, "jx_fn_scope_end: no function scope is open");
    return JX_ERR_VALUE;
  }
  jx_status status = JX_OK;
  if (n < 0 || (n > 0 && !keep)) {
    error_set(JX_ERR_VALUE, "jx_fn_scope_end: keep has %d entries but is %s", n,
              keep ? "given" : "NULL");
    status = JX_ERR_VALUE;
    n = 0;
  }
  FnScope s = fn_scopes[--fn_depth];
  FnScope *parent = fn_depth ? &fn_scopes[fn_depth - 1] : NULL;
  bool *kept = n ? calloc((size_t)n, sizeof *kept) : NULL;
  for (int i = 0; i < s.n; i++) {
    jx_fn *f = s.items[i];
    int j = 0;
    while (j < n && (keep[j] != f || (kept && kept[j]))) j++;
    if (j < n) { /* kept: handed to the enclosing scope, or to the caller */
      if (kept) kept[j] = true;
      if (parent && !fn_scope_push(parent, f)) {
        status = JX_ERR_OOM;
        error_set(status, "jx_fn_scope_end: out of memory");
      }
      continue;
    }
    fn_release(f);
  }
  free(kept);
  free(s.items);
  return status;
}

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
  if (!name) name = "fn";
  size_t len = strlen(name);
  jx_fn *f = calloc(1, sizeof *f + len + 1);
  if (!f) {
    error_set(JX_ERR_OOM, "jx_fn_new: out of memory");
    return NULL;
  }
  *f = (jx_fn){.magic = FN_MAGIC_LIVE, .refcount = 1, .name = f->name_buf, .nin = nin,
               .nout = nout, .impl = impl, .ctx = ctx, .free_ctx = free_ctx,
               .internal = array_internal_active()};
  memcpy(f->name_buf, name, len + 1);
  if (!fn_scope_register("jx_fn_new", f)) {
    free(f);
    return NULL;
  }
  __atomic_add_fetch(f->internal ? &internal_fns : &live_fns, 1, __ATOMIC_RELAXED);
  return f;
}

/* JAXC_CHECKS builds: abort naming the function when a released handle is used. The
 * name stays readable because released structs sit in the array quarantine. */
static void check_live(const char *what, const jx_fn *f) {
#ifdef JAXC_CHECKS
  uint32_t magic = __atomic_load_n(&f->magic, __ATOMIC_RELAXED);
  if (magic == FN_MAGIC_LIVE) return;
  fprintf(stderr, "jaxc: %s: function \"%s\" at %p was already released (reference count "
          "reached zero: one jx_fn_free too many, or a use after the last one)\n", what,
          magic == FN_MAGIC_DEAD && f->name ? f->name : "?", (const void *)f);
  abort();
#else
  (void)what, (void)f;
#endif
}

jx_fn *jx_fn_ref(jx_fn *f) {
  if (!f) return NULL;
  check_live("jx_fn_ref", f);
  __atomic_add_fetch(&f->refcount, 1, __ATOMIC_RELAXED);
  if (!fn_scope_register("jx_fn_ref", f)) {
    fn_release(f);
    return NULL;
  }
  return f;
}

jx_fn *fn_retain(jx_fn *f) {
  if (!f) return NULL;
  check_live("jx_fn_ref", f);
  __atomic_add_fetch(&f->refcount, 1, __ATOMIC_RELAXED);
  return f;
}

void jx_fn_free(jx_fn *f) {
  if (!f) return;
  check_live("jx_fn_free", f);
  if (fn_depth) fn_scope_forget(f);
  fn_release(f);
}

void fn_release(jx_fn *f) {
  if (!f) return;
  check_live("jx_fn_free", f);
  if (__atomic_sub_fetch(&f->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
  if (f->free_ctx) f->free_ctx(f->ctx);
  __atomic_store_n(&f->magic, FN_MAGIC_DEAD, __ATOMIC_RELAXED);
  bool internal = f->internal;
  array_quarantine(f);
  __atomic_sub_fetch(internal ? &internal_fns : &live_fns, 1, __ATOMIC_RELAXED);
}

void *fn_ctx(const jx_fn *f, jx_fn_impl impl) { return f && f->impl == impl ? f->ctx : NULL; }

int jx_fn_nin(const jx_fn *f) { return f ? f->nin : 0; }
int jx_fn_nout(const jx_fn *f) { return f ? f->nout : 0; }
const char *jx_fn_name(const jx_fn *f) { return f ? f->name : NULL; }
int64_t jx_live_fns(void) { return __atomic_load_n(&live_fns, __ATOMIC_RELAXED); }
int64_t fn_internal_live(void) { return __atomic_load_n(&internal_fns, __ATOMIC_RELAXED); }

jx_status jx_call(jx_fn *f, jx_array *const *in, jx_array **out) {
  if (f) check_live("jx_call", f);
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
  if (s < JX_OK || s > JX_ERR_INTERNAL) s = JX_ERR_VALUE; /* not a status: as jx_set_error maps it */
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
