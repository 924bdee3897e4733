/* fft.c -- the FFT routine (ir/alu.h: ROUTINE_FFT): lax.fft's FFT, IFFT, RFFT and IRFFT
 * over the trailing fft_rank axes of `outer` arrays, as passes of 1-D transforms on
 * pocketfft (backend/pocketfft.cc), one pass per transformed axis. A pass splits the
 * largest of its other dimensions into one rectangular block per thread, so every block
 * keeps whole lines (pocketfft transforms several lines at once with SIMD); complex
 * passes along other than the last axis go by blocks of neighbouring lines
 * (fft_pocketfft_columns). Long 1-D
 * transforms (fft_pocketfft_long_ok) run one array at a time, each spread over the
 * threads by the four-step algorithm (pocketfft.cc). */
#include <stdlib.h>
#include <string.h>

#include "backend/fft.h"
#include "backend/pocketfft.h"
#include "core/dtype.h"
#include "core/error.h"

int64_t fft_out_numel(const Routine *r) {
  int64_t n = r->outer;
  for (int d = 0; d < r->fft_rank; d++) {
    int64_t len = r->fft_lens[d];
    if (d == r->fft_rank - 1 && r->flags == FFT_TYPE_RFFT) len = len / 2 + 1;
    n *= len;
  }
  return r->flags == FFT_TYPE_IRFFT ? n : 2 * n; /* complex: (re, im) pairs */
}

/* One pass: 1-D transforms of `kind` along `axis` of (ndim, shape), byte strides. */
typedef struct Pass {
  int kind, f64, forward, ndim, axis, split;
  int64_t shape[FFT_MAX_RANK + 1], sin[FFT_MAX_RANK + 1], sout[FFT_MAX_RANK + 1];
  const char *in;
  char *out;
  double fct;
  _Atomic int failed;
  char err[160];
} Pass;

static void pass_block(void *ctx, int64_t start, int64_t end) {
  Pass *p = ctx;
  int64_t shape[FFT_MAX_RANK + 1];
  memcpy(shape, p->shape, sizeof shape);
  shape[p->split] = end - start;
  char err[160];
  int rc = fft_pocketfft_pass(p->kind, p->f64, p->forward, p->ndim, shape, p->sin, p->sout, p->axis,
                              p->in + start * p->sin[p->split], p->out + start * p->sout[p->split],
                              p->fct, err, sizeof err);
  if (rc && !p->failed) {
    p->failed = rc;
    memcpy(p->err, err, sizeof err);
  }
}

/* Rank 1, long lines: fft_pocketfft_long on each of the `outer` arrays in turn. */
static jx_status run_long(const Routine *r, int kind, int forward, const char *in, char *out, double fct,
                          FftParallelFor par, int nthreads) {
  int64_t n = r->fft_lens[0], item = (int64_t)jx_dtype_itemsize(r->dtype), half = n / 2 + 1;
  int64_t in_step = kind == FFT_PASS_R2C ? n * item : kind == FFT_PASS_C2R ? 2 * half * item : 2 * n * item;
  int64_t out_step = kind == FFT_PASS_R2C ? 2 * half * item : kind == FFT_PASS_C2R ? n * item : 2 * n * item;
  char err[160];
  for (int64_t b = 0; b < r->outer; b++) {
    int rc = fft_pocketfft_long(kind, r->dtype == JX_FLOAT64, forward, n, in + b * in_step, out + b * out_step, fct,
                                par, nthreads, err, sizeof err);
    if (rc) {
      jx_status s = rc == 1 ? JX_ERR_OOM : JX_ERR_INTERNAL;
      error_set(s, "fft: pocketfft: %s", err);
      return s;
    }
  }
  return JX_OK;
}

static jx_status run_pass(Pass *p, FftParallelFor par, int nthreads) {
  if (p->kind == FFT_PASS_C2C && p->axis < p->ndim - 1) { /* every C2C pass here is contiguous */
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < p->axis; d++) outer *= p->shape[d];
    for (int d = p->axis + 1; d < p->ndim; d++) inner *= p->shape[d];
    int rc = fft_pocketfft_columns(p->f64, p->forward, outer, p->shape[p->axis], inner, p->in, p->out, p->fct, par,
                                   nthreads, p->err, sizeof p->err);
    if (!rc) return JX_OK;
    jx_status s = rc == 1 ? JX_ERR_OOM : JX_ERR_INTERNAL;
    error_set(s, "fft: pocketfft: %s", p->err);
    return s;
  }
  p->split = p->axis == 0 ? 1 : 0; /* the largest other dimension */
  for (int d = 0; d < p->ndim; d++)
    if (d != p->axis && p->shape[d] > p->shape[p->split]) p->split = d;
  int64_t n = p->shape[p->split];
  int chunks = nthreads < n ? nthreads : (int)n;
  p->failed = 0;
  if (par && chunks >= 2) par(pass_block, p, n, chunks, 1);
  else pass_block(p, 0, n);
  if (!p->failed) return JX_OK;
  jx_status s = p->failed == 1 ? JX_ERR_OOM : JX_ERR_INTERNAL;
  error_set(s, "fft: pocketfft: %s", p->err);
  return s;
}

/* Contiguous byte strides of (ndim, shape) with `item`-byte elements. */
static void strides(int ndim, const int64_t *shape, int64_t item, int64_t *st) {
  for (int d = ndim - 1; d >= 0; d--) {
    st[d] = item;
    item *= shape[d];
  }
}

jx_status fft_run(const Routine *r, const void *in, void *out, FftParallelFor par, int nthreads) {
  int rank = r->fft_rank, nd = rank + 1, type = (int)r->flags;
  if (r->dtype != JX_FLOAT32 && r->dtype != JX_FLOAT64) {
    error_set(JX_ERR_DTYPE, "fft: precision %s (expected float32 or float64)", jx_dtype_name(r->dtype));
    return JX_ERR_DTYPE;
  }
  if (rank < 1 || rank > FFT_MAX_RANK) {
    error_set(JX_ERR_VALUE, "fft: %d transformed axes (1 to %d)", rank, FFT_MAX_RANK);
    return JX_ERR_VALUE;
  }
  int64_t real[FFT_MAX_RANK + 1], half[FFT_MAX_RANK + 1], total = 1; /* shapes with outer */
  real[0] = half[0] = r->outer;
  for (int d = 0; d < rank; d++) {
    real[d + 1] = half[d + 1] = r->fft_lens[d];
    total *= r->fft_lens[d];
  }
  half[rank] = r->fft_lens[rank - 1] / 2 + 1;
  for (int d = 0; d < nd; d++)
    if (real[d] == 0) return JX_OK; /* nothing to compute (abstract eval keeps lens >= 1) */
  int64_t item = (int64_t)jx_dtype_itemsize(r->dtype);
  int f64 = r->dtype == JX_FLOAT64;
  double scale = type == FFT_TYPE_IFFT || type == FFT_TYPE_IRFFT ? 1.0 / (double)total : 1.0;
  Pass p = {.f64 = f64, .ndim = nd, .fct = scale};
  jx_status s = JX_OK;
  if (rank == 1) {
    int kind = type == FFT_TYPE_RFFT ? FFT_PASS_R2C : type == FFT_TYPE_IRFFT ? FFT_PASS_C2R : FFT_PASS_C2C;
    if (fft_pocketfft_long_ok(kind, r->fft_lens[0]))
      return run_long(r, kind, type == FFT_TYPE_FFT || type == FFT_TYPE_RFFT, in, out, scale, par, nthreads);
  }
  switch (type) {
  case FFT_TYPE_FFT:
  case FFT_TYPE_IFFT: /* complex -> complex: the first pass out of place, then in place */
    memcpy(p.shape, real, sizeof real);
    strides(nd, real, 2 * item, p.sin);
    memcpy(p.sout, p.sin, sizeof p.sin);
    p.kind = FFT_PASS_C2C, p.forward = type == FFT_TYPE_FFT;
    for (int a = rank; a >= 1 && s == JX_OK; a--) {
      p.axis = a, p.in = a == rank ? in : out, p.out = out;
      s = run_pass(&p, par, nthreads);
      p.fct = 1.0;
    }
    return s;
  case FFT_TYPE_RFFT: /* real -> half complex along the last axis, then c2c in place */
    memcpy(p.shape, real, sizeof real);
    strides(nd, real, item, p.sin);
    strides(nd, half, 2 * item, p.sout);
    p.kind = FFT_PASS_R2C, p.forward = 1, p.axis = rank, p.in = in, p.out = out;
    s = run_pass(&p, par, nthreads);
    memcpy(p.shape, half, sizeof half);
    memcpy(p.sin, p.sout, sizeof p.sin);
    p.kind = FFT_PASS_C2C;
    for (int a = rank - 1; a >= 1 && s == JX_OK; a--) {
      p.axis = a, p.in = out, p.out = out;
      s = run_pass(&p, par, nthreads);
    }
    return s;
  case FFT_TYPE_IRFFT: { /* c2c on the leading axes into scratch, then c2r on the last */
    char *tmp = NULL;
    const char *src = in;
    strides(nd, half, 2 * item, p.sin);
    memcpy(p.sout, p.sin, sizeof p.sin);
    memcpy(p.shape, half, sizeof half);
    p.kind = FFT_PASS_C2C, p.forward = 0, p.fct = 1.0; /* scaled once, in the c2r pass */
    if (rank > 1) {
      tmp = malloc((size_t)(2 * item * r->outer * (total / r->fft_lens[rank - 1]) * half[rank]));
      if (!tmp) {
        error_set(JX_ERR_OOM, "fft: out of memory for IRFFT scratch");
        return JX_ERR_OOM;
      }
      for (int a = rank - 1; a >= 1 && s == JX_OK; a--) {
        p.axis = a, p.in = a == rank - 1 ? in : tmp, p.out = tmp;
        s = run_pass(&p, par, nthreads);
      }
      src = tmp;
    }
    if (s == JX_OK) {
      memcpy(p.shape, real, sizeof real);
      strides(nd, real, item, p.sout);
      p.kind = FFT_PASS_C2R, p.axis = rank, p.in = src, p.out = out, p.fct = scale;
      s = run_pass(&p, par, nthreads);
    }
    free(tmp);
    return s;
  }
  default: break;
  }
  error_set(JX_ERR_VALUE, "fft: unknown fft_type %d", type);
  return JX_ERR_VALUE;
}
