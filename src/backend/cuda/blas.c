/* blas.c -- matrix products on the GPU through cuBLAS (dlopen'ed on the first product):
 * one cublasGemmStridedBatchedEx call per GEMM routine, operands row-major (outer, n, m)
 * @ (outer, m, inner), transposed operands passed as flags, never copied. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cuda.h"
#include "core/config.h"
#include "core/error.h"

/* cuBLAS / library_types.h values used here. */
enum { CUDA_R_32F = 0, CUDA_R_64F = 1, CUDA_R_16F = 2, CUDA_R_16BF = 14 };
enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
enum { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_64F = 70, CUBLAS_COMPUTE_32F_FAST_TF32 = 77 };
#define CUBLAS_GEMM_DEFAULT (-1)

typedef struct cublasContext *cublasHandle_t;
typedef int (*GemmFn)(cublasHandle_t, int, int, int, int, int, const void *, const void *, int,
                      int, long long, const void *, int, int, long long, const void *, void *, int,
                      int, long long, int, int, int);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static cublasHandle_t handle;
static GemmFn gemm;
static char load_error[512];

static void load_once(void) {
  char why[400];
  const char *names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so", NULL};
  void *h = cuda_dlopen_any(names, why, sizeof why);
  if (!h) {
    snprintf(load_error, sizeof load_error, "cuda: matrix products need cuBLAS, but "
             "libcublas.so.13 (or .12) was not found (%s)", why);
    return;
  }
  int (*create)(cublasHandle_t *) = (int (*)(cublasHandle_t *))dlsym(h, "cublasCreate_v2");
  int (*set_stream)(cublasHandle_t, CUstream) = (int (*)(cublasHandle_t, CUstream))dlsym(h, "cublasSetStream_v2");
  gemm = (GemmFn)dlsym(h, "cublasGemmStridedBatchedEx");
  int st = -1;
  if (!create || !set_stream || !gemm) {
    snprintf(load_error, sizeof load_error, "cuda: libcublas lacks cublasCreate_v2, "
             "cublasSetStream_v2 or cublasGemmStridedBatchedEx");
    gemm = NULL;
    return;
  }
  cuda_make_current();
  if ((st = create(&handle)) != 0 || (st = set_stream(handle, cuda_device()->stream)) != 0) {
    snprintf(load_error, sizeof load_error, "cuda: cublasCreate failed (cublasStatus %d)", st);
    gemm = NULL;
  }
}

jx_status cuda_gemm(const Routine *r, void *const *inputs, void *out) {
  int64_t M = r->n, K = r->m, N = r->inner, B = r->outer;
  if (M == 0 || N == 0 || B == 0) return JX_OK;
  if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || B > INT32_MAX) {
    error_set(JX_ERR_UNSUPPORTED, "cuda: matrix product of %lld x %lld x %lld (batch %lld) "
              "exceeds cuBLAS's 32-bit sizes", (long long)M, (long long)K, (long long)N, (long long)B);
    return JX_ERR_UNSUPPORTED;
  }
  if (K == 0) { /* an empty sum: zeros */
    const CudaDevice *d = cuda_device();
    return cuda_check(d->cu.cuMemsetD8Async((CUdeviceptr)(uintptr_t)out, 0, routine_out_nbytes(r, 0), d->stream),
                      "cuMemsetD8Async");
  }
  pthread_once(&once, load_once);
  if (!gemm) {
    error_set(JX_ERR_DEVICE, "%s", load_error);
    return JX_ERR_DEVICE;
  }
  cuda_make_current();
  int type, compute;
  switch (r->dtype) {
  case JX_FLOAT32:
    type = CUDA_R_32F;
    compute = config_matmul_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    break;
  case JX_FLOAT64: type = CUDA_R_64F, compute = CUBLAS_COMPUTE_64F; break;
  case JX_BFLOAT16: type = CUDA_R_16BF, compute = CUBLAS_COMPUTE_32F; break;
  case JX_FLOAT16: type = CUDA_R_16F, compute = CUBLAS_COMPUTE_32F; break;
  default:
    error_set(JX_ERR_UNSUPPORTED, "cuda: no matrix product for dtype %s", jx_dtype_name(r->dtype));
    return JX_ERR_UNSUPPORTED;
  }
  float alpha32 = 1.0f, beta32 = 0.0f;
  double alpha64 = 1.0, beta64 = 0.0;
  const void *alpha = compute == CUBLAS_COMPUTE_64F ? (const void *)&alpha64 : &alpha32;
  const void *beta = compute == CUBLAS_COMPUTE_64F ? (const void *)&beta64 : &beta32;
  /* Row-major C (M, N) is column-major C^T (N, M) = op(b)^T-as-stored @ op(a): cuBLAS
   * sees b first, with b's stored layout giving its leading dimension. */
  bool ta = r->trans_a, tb = r->trans_b;
  int st = gemm(handle, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)N, (int)M,
                (int)K, alpha, inputs[1], type, (int)(tb ? K : N), (long long)(K * N), inputs[0], type,
                (int)(ta ? M : K), (long long)(M * K), beta, out, type, (int)N, (long long)(M * N), (int)B,
                compute, CUBLAS_GEMM_DEFAULT);
  if (st != 0) {
    error_set(JX_ERR_DEVICE, "cuda: cublasGemmStridedBatchedEx failed (cublasStatus %d) for "
              "%s (%lld, %lld) @ (%lld, %lld), batch %lld", st, jx_dtype_name(r->dtype),
              (long long)M, (long long)K, (long long)K, (long long)N, (long long)B);
    return JX_ERR_DEVICE;
  }
  return JX_OK;
}
