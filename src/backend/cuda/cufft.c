/* cufft.c -- the FFT routine (ir/alu.h: ROUTINE_FFT) on the GPU through cuFFT, opened
 * with dlopen on first use: one batched plan (cufftPlanMany, the basic contiguous
 * layout, which is the routine's: `outer` arrays of fft_lens, the last axis halved plus
 * one on the complex side of RFFT/IRFFT) per shape and transform, cached, run on the
 * device's stream; IFFT and IRFFT scaled by 1/prod(lens) afterwards (cuFFT's inverse is
 * unnormalized) with cuBLAS's scal; IRFFT's input copied first (cuFFT's complex-to-real
 * transforms overwrite their input). Complex operands are interleaved (re, im) pairs,
 * cuFFT's cufftComplex. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cuda.h"
#include "backend/fft.h"
#include "core/dtype.h"
#include "core/error.h"

typedef int FftHandle;
typedef struct cublasContext *BlasHandle;
enum { R2C = 0x2a, C2R = 0x2c, C2C = 0x29, D2Z = 0x6a, Z2D = 0x6c, Z2Z = 0x69 };
enum { FORWARD = -1, INVERSE = 1 };

static struct {
  int (*plan_many)(FftHandle *, int, int *, int *, int, int, int *, int, int, int, int);
  int (*set_stream)(FftHandle, CUstream);
  int (*exec_c2c)(FftHandle, void *, void *, int), (*exec_r2c)(FftHandle, void *, void *);
  int (*exec_c2r)(FftHandle, void *, void *), (*exec_z2z)(FftHandle, void *, void *, int);
  int (*exec_d2z)(FftHandle, void *, void *), (*exec_z2d)(FftHandle, void *, void *);
  int (*destroy)(FftHandle);
  int (*sscal)(BlasHandle, int, const float *, float *, int), (*dscal)(BlasHandle, int, const double *, double *, int);
  BlasHandle bh;
  bool ok;
  char error[512];
} F;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  char why[400];
  const char *fn[] = {"libcufft.so.12", "libcufft.so.11", "libcufft.so.13", "libcufft.so", NULL};
  const char *bn[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so", NULL};
  void *fl = cuda_dlopen_any(fn, why, sizeof why);
  if (!fl) {
    snprintf(F.error, sizeof F.error, "cuda: fft needs cuFFT, but libcufft.so.12 (or .11) was not found (%s)", why);
    return;
  }
  void *bl = cuda_dlopen_any(bn, why, sizeof why);
  if (!bl) {
    snprintf(F.error, sizeof F.error, "cuda: fft needs cuBLAS to scale inverse transforms (%s)", why);
    return;
  }
#define L(field, lib, sym) F.field = (__typeof__(F.field))dlsym(lib, sym)
  L(plan_many, fl, "cufftPlanMany"), L(set_stream, fl, "cufftSetStream"), L(exec_c2c, fl, "cufftExecC2C");
  L(exec_r2c, fl, "cufftExecR2C"), L(exec_c2r, fl, "cufftExecC2R"), L(exec_z2z, fl, "cufftExecZ2Z");
  L(exec_d2z, fl, "cufftExecD2Z"), L(exec_z2d, fl, "cufftExecZ2D"), L(destroy, fl, "cufftDestroy");
  L(sscal, bl, "cublasSscal_v2"), L(dscal, bl, "cublasDscal_v2");
#undef L
  int (*bcreate)(BlasHandle *) = (int (*)(BlasHandle *))dlsym(bl, "cublasCreate_v2");
  int (*bset_stream)(BlasHandle, CUstream) = (int (*)(BlasHandle, CUstream))dlsym(bl, "cublasSetStream_v2");
  if (!F.plan_many || !F.set_stream || !F.exec_c2c || !F.exec_r2c || !F.exec_c2r || !F.exec_z2z || !F.exec_d2z ||
      !F.exec_z2d || !F.destroy || !F.sscal || !F.dscal || !bcreate || !bset_stream) {
    snprintf(F.error, sizeof F.error, "cuda: libcufft or libcublas lacks an entry point jaxc calls");
    return;
  }
  cuda_make_current();
  int e;
  if ((e = bcreate(&F.bh)) != 0 || (e = bset_stream(F.bh, cuda_device()->stream)) != 0) {
    snprintf(F.error, sizeof F.error, "cuda: cublasCreate failed (status %d)", e);
    return;
  }
  F.ok = true;
}

/* Plans by (type, rank, lens, batch): a training or signal loop repeats a few shapes. */
typedef struct Plan {
  int type, rank, batch;
  int lens[FFT_MAX_RANK];
  FftHandle h;
} Plan;
#define PLANS 32
static Plan plans[PLANS];
static int nplans, next_victim;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The plan (locked: cuFFT plans are not to be executed from two threads at once). */
static jx_status plan_for(const Routine *r, int type, Plan **out) {
  int lens[FFT_MAX_RANK] = {0};
  for (int d = 0; d < r->fft_rank; d++) lens[d] = (int)r->fft_lens[d];
  for (int i = 0; i < nplans; i++) {
    Plan *p = &plans[i];
    if (p->type == type && p->rank == r->fft_rank && p->batch == (int)r->outer && !memcmp(p->lens, lens, sizeof lens)) {
      *out = p;
      return JX_OK;
    }
  }
  Plan *p = &plans[nplans < PLANS ? nplans++ : next_victim++ % PLANS];
  if (p->rank) F.destroy(p->h), p->rank = 0; /* stream-ordered work of the old plan is done by the time
                                                 cuFFT frees it: cufftDestroy waits */
  FftHandle h;
  int st = F.plan_many(&h, r->fft_rank, lens, NULL, 1, 0, NULL, 1, 0, type, (int)r->outer);
  if (st == 0) st = F.set_stream(h, cuda_device()->stream);
  if (st != 0) {
    error_set(st == 2 ? JX_ERR_OOM : JX_ERR_DEVICE, "cuda: cufftPlanMany failed (cufftResult %d) for a rank-%d "
              "transform of batch %lld", st, r->fft_rank, (long long)r->outer);
    return st == 2 ? JX_ERR_OOM : JX_ERR_DEVICE;
  }
  *p = (Plan){.type = type, .rank = r->fft_rank, .batch = (int)r->outer, .h = h};
  memcpy(p->lens, lens, sizeof lens);
  *out = p;
  return JX_OK;
}

jx_status cuda_fft(const Routine *r, void *const *inputs, void *const *outs) {
  int64_t total = r->outer;
  for (int d = 0; d < r->fft_rank; d++) total *= r->fft_lens[d];
  if (total == 0) return JX_OK;
  bool f64 = r->dtype == JX_FLOAT64;
  if ((r->dtype != JX_FLOAT32 && !f64) || r->outer > INT32_MAX || r->fft_rank < 1 || r->fft_rank > 3) {
    error_set(JX_ERR_UNSUPPORTED, "cuda: fft of %s, batch %lld, rank %d is not supported by cuFFT",
              jx_dtype_name(r->dtype), (long long)r->outer, r->fft_rank);
    return JX_ERR_UNSUPPORTED;
  }
  for (int d = 0; d < r->fft_rank; d++)
    if (r->fft_lens[d] > INT32_MAX) {
      error_set(JX_ERR_UNSUPPORTED, "cuda: fft length %lld exceeds cuFFT's 32-bit sizes", (long long)r->fft_lens[d]);
      return JX_ERR_UNSUPPORTED;
    }
  pthread_once(&once, load);
  if (!F.ok) {
    error_set(JX_ERR_DEVICE, "%s", F.error);
    return JX_ERR_DEVICE;
  }
  cuda_make_current();
  int kind = (int)r->flags;
  int type = kind == FFT_TYPE_RFFT ? (f64 ? D2Z : R2C) : kind == FFT_TYPE_IRFFT ? (f64 ? Z2D : C2R) : (f64 ? Z2Z : C2C);
  void *in = inputs[0], *scratch = NULL;
  jx_status s = JX_OK;
  if (kind == FFT_TYPE_IRFFT) { /* C2R overwrites its input */
    size_t nb = (size_t)(total / r->fft_lens[r->fft_rank - 1] * (r->fft_lens[r->fft_rank - 1] / 2 + 1)) * 2 *
                (f64 ? 8 : 4);
    const CudaDevice *d = cuda_device();
    if (!(scratch = cuda_alloc(nb))) return jx_last_status();
    s = cuda_check(d->cu.cuMemcpyDtoDAsync((CUdeviceptr)(uintptr_t)scratch, (CUdeviceptr)(uintptr_t)in, nb, d->stream),
                   "cuMemcpyDtoDAsync");
    in = scratch;
  }
  pthread_mutex_lock(&lock);
  Plan *p = NULL;
  if (s == JX_OK) s = plan_for(r, type, &p);
  int st = 0;
  if (s == JX_OK) {
    switch (type) {
    case C2C: st = F.exec_c2c(p->h, in, outs[0], kind == FFT_TYPE_FFT ? FORWARD : INVERSE); break;
    case Z2Z: st = F.exec_z2z(p->h, in, outs[0], kind == FFT_TYPE_FFT ? FORWARD : INVERSE); break;
    case R2C: st = F.exec_r2c(p->h, in, outs[0]); break;
    case D2Z: st = F.exec_d2z(p->h, in, outs[0]); break;
    case C2R: st = F.exec_c2r(p->h, in, outs[0]); break;
    case Z2D: st = F.exec_z2d(p->h, in, outs[0]); break;
    }
    if (st != 0) s = JX_ERR_DEVICE, error_set(s, "cuda: cufftExec failed (cufftResult %d)", st);
  }
  if (s == JX_OK && (kind == FFT_TYPE_IFFT || kind == FFT_TYPE_IRFFT)) {
    int64_t n = fft_out_numel(r); /* scalars of the output */
    double inv = 1.0 / (double)(total / r->outer);
    float inv32 = (float)inv;
    for (int64_t at = 0; s == JX_OK && at < n; at += INT32_MAX) { /* scal's count is an int */
      int cnt = (int)(n - at < INT32_MAX ? n - at : INT32_MAX);
      st = f64 ? F.dscal(F.bh, cnt, &inv, (double *)outs[0] + at, 1) : F.sscal(F.bh, cnt, &inv32, (float *)outs[0] + at, 1);
      if (st != 0) s = JX_ERR_DEVICE, error_set(s, "cuda: cublas scal failed (status %d) scaling an inverse fft", st);
    }
  }
  pthread_mutex_unlock(&lock);
  cuda_free(scratch); /* stream-ordered */
  return s;
}
