/* routines.c -- sort and scatter-add on the device, from libjaxc_cuda_routines.so
 * (routines.cu, built with nvcc when jaxc is built where nvcc is found; CUB's radix sort
 * inside), opened with dlopen on first use. Without it these routines are an error on
 * cuda (never a silent trip through the host). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cuda.h"
#include "core/dtype.h"
#include "core/error.h"

typedef void *(*AllocFn)(size_t);
typedef void (*FreeFn)(void *);
typedef int (*SortFn)(void *, AllocFn, FreeFn, int, int, int, int, const int *, const void *const *,
                      void *const *, int64_t, int64_t, int64_t);
typedef int (*ScatterFn)(void *, int, int, const void *, const void *, int, int, const void *, void *,
                         int64_t, int64_t, int64_t, int64_t);
enum { KEY_UNSIGNED = 0, KEY_SIGNED = 1, KEY_FLOAT = 2 };
enum { ADD_F32, ADD_F64, ADD_F16, ADD_BF16, ADD_I32, ADD_I64, ADD_I16, ADD_I8, ADD_BOOL };

static pthread_once_t once = PTHREAD_ONCE_INIT;
static SortFn sort_fn;
static ScatterFn scatter_fn;
static const char *(*error_string)(int);
static char load_error[700];

static void load_once(void) {
  const char *paths[] = {
#ifdef JAXC_CUDA_ROUTINES_PATH
      JAXC_CUDA_ROUTINES_PATH,
#endif
#ifdef JAXC_CUDA_ROUTINES_INSTALLED
      JAXC_CUDA_ROUTINES_INSTALLED,
#endif
      "libjaxc_cuda_routines.so"};
  void *h = NULL;
  for (size_t i = 0; !h && i < sizeof paths / sizeof paths[0]; i++) h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(load_error, sizeof load_error, "libjaxc_cuda_routines.so was not found (jaxc is built "
             "with it where nvcc is found at build time): %s", dlerror());
    return;
  }
  sort_fn = (SortFn)dlsym(h, "jaxc_cuda_sort");
  scatter_fn = (ScatterFn)dlsym(h, "jaxc_cuda_scatter_add");
  error_string = (const char *(*)(int))dlsym(h, "jaxc_cuda_error_string");
  if (!sort_fn || !scatter_fn || !error_string) {
    sort_fn = NULL, scatter_fn = NULL;
    snprintf(load_error, sizeof load_error, "libjaxc_cuda_routines.so lacks its entry points");
  }
}

static bool loaded(const Routine *r) {
  pthread_once(&once, load_once);
  if (sort_fn) return true;
  error_set(JX_ERR_UNSUPPORTED, "cuda: %s has no device version here: %s", routine_name(r->op), load_error);
  return false;
}

static jx_status check(int e, const Routine *r) {
  if (e == 0) return JX_OK;
  jx_status s = e == 2 /* cudaErrorMemoryAllocation */ ? JX_ERR_OOM : JX_ERR_DEVICE;
  error_set(s, "cuda: %s of %s (%lld, %lld, %lld) failed: %s", routine_name(r->op), jx_dtype_name(r->dtype),
            (long long)r->outer, (long long)r->n, (long long)r->inner, error_string(e));
  return s;
}

jx_status cuda_sort(const Routine *r, void *const *inputs, void *const *outs) {
  if (!loaded(r)) return JX_ERR_UNSUPPORTED;
  jx_dtype d = r->dtypes[0];
  int kind = dtype_is_floating(d) ? KEY_FLOAT : dtype_is_unsigned(d) || d == JX_BOOL ? KEY_UNSIGNED : KEY_SIGNED;
  int mant = d == JX_FLOAT16 ? 10 : d == JX_BFLOAT16 ? 7 : d == JX_FLOAT32 ? 23 : 52;
  int bytes[ROUTINE_MAX_OPERANDS];
  for (int x = 0; x < r->nin; x++) bytes[x] = (int)jx_dtype_itemsize(r->dtypes[x]);
  if (r->outer * r->n * r->inner > INT32_MAX) {
    error_set(JX_ERR_UNSUPPORTED, "cuda: sort of %lld elements (at most 2^31 - 1 at once)",
              (long long)(r->outer * r->n * r->inner));
    return JX_ERR_UNSUPPORTED;
  }
  cuda_make_current();
  return check(sort_fn(cuda_stream(), cuda_alloc, cuda_free, r->nin, kind, bytes[0], mant, bytes,
                       (const void *const *)inputs, outs, r->outer, r->n, r->inner), r);
}

jx_status cuda_scatter_add(const Routine *r, void *const *inputs, void *out) {
  if (!loaded(r)) return JX_ERR_UNSUPPORTED;
  int op;
  switch (r->dtype) {
  case JX_FLOAT32: op = ADD_F32; break;
  case JX_FLOAT64: op = ADD_F64; break;
  case JX_FLOAT16: op = ADD_F16; break;
  case JX_BFLOAT16: op = ADD_BF16; break;
  case JX_INT32: case JX_UINT32: op = ADD_I32; break;
  case JX_INT64: case JX_UINT64: op = ADD_I64; break;
  case JX_INT16: case JX_UINT16: op = ADD_I16; break;
  case JX_INT8: case JX_UINT8: op = ADD_I8; break;
  default: op = ADD_BOOL; break;
  }
  cuda_make_current();
  return check(scatter_fn(cuda_stream(), op, (int)jx_dtype_itemsize(r->dtype), inputs[0], inputs[1],
                          (int)jx_dtype_itemsize(r->index_dtype), !dtype_is_unsigned(r->index_dtype) && r->index_dtype != JX_BOOL,
                          inputs[2], out, r->outer, r->n, r->m, r->inner), r);
}
