/* trace.h -- internals shared by the trace layer: the eval (impl) rules that run a
 * primitive on concrete arrays, and helpers to build kernels over array views. */
#ifndef JAXC_TRACE_TRACE_H
#define JAXC_TRACE_TRACE_H

#include "core/array.h"
#include "trace/prim.h"

/* Runs primitive p on concrete arrays (validated by prim_bind). */
jx_array *impl_apply(Prim p, int nin, jx_array *const *in, const PrimParams *params);

/* A contiguous copy of `a` (a new reference to `a` itself if already contiguous and
 * dense in its buffer). */
jx_array *impl_contiguous(jx_array *a);

#endif
