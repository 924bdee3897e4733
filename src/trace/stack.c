/* stack.c -- the interpreter stack (JAX's autodidax design): a per-thread list of trace
 * levels. prim_bind hands a primitive to the highest level among its inputs' tracers;
 * with none, eval runs it. Levels are pushed and popped by transformations. */
#include <stdlib.h>

#include "core/error.h"
#include "trace/trace.h"

static _Thread_local int depth;

Trace *trace_push(const TraceType *type, void *data) {
  Trace *t = calloc(1, sizeof *t);
  if (!t) {
    if (type->release) type->release(data);
    error_set(JX_ERR_OOM, "out of memory pushing a %s trace", type->name);
    return NULL;
  }
  *t = (Trace){.type = type, .level = depth++, .active = true, .refcount = 1, .data = data};
  return t;
}

void trace_pop(Trace *t) {
  if (!t) return;
  JX_CHECK(t->level == depth - 1);
  depth = t->level;
  t->active = false;
  trace_unref(t);
}

Trace *trace_ref(Trace *t) {
  if (t) t->refcount++;
  return t;
}

void trace_unref(Trace *t) {
  if (!t || --t->refcount > 0) return;
  if (t->type->release) t->type->release(t->data);
  free(t);
}

Trace *trace_of(const jx_array *a) { return a && a->tracer ? a->tracer->trace : NULL; }
bool trace_owns(const Trace *t, const jx_array *a) { return a && a->tracer && a->tracer->trace == t; }
int trace_depth(void) { return depth; }
