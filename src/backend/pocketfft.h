/* pocketfft.h -- the C face of pocketfft (backend/pocketfft.cc): plain C types only,
 * so that the C++ file needs nothing else from jaxc. */
#ifndef JAXC_BACKEND_POCKETFFT_H
#define JAXC_BACKEND_POCKETFFT_H

#include <stddef.h>
#include <stdint.h>

/* The 1-D transforms of one pass (pocketfft's c2c, r2c, c2r). */
enum { FFT_PASS_C2C, FFT_PASS_R2C, FFT_PASS_C2R };

/* A way to run fn over [0, n) in nchunks pieces taken by threads as they come free (the
 * cpu pool's pool_run); NULL runs everything on the calling thread. */
typedef void (*FftChunkFn)(void *ctx, int64_t start, int64_t end);
typedef void (*FftParallelFor)(FftChunkFn fn, void *ctx, int64_t n, int nchunks, int64_t align);

#ifdef __cplusplus
extern "C" {
#endif
/* One pass of 1-D transforms along `axis` of an ndim array of `shape` (for R2C the real
 * input's shape, for C2R the real output's; the complex side's axis has n/2+1 entries),
 * strides in bytes, every result multiplied by fct. 0 on success; otherwise err holds
 * pocketfft's message (1: out of memory, 2: other). */
int fft_pocketfft_pass(int kind, int f64, int forward, int ndim, const int64_t *shape,
                       const int64_t *stride_in, const int64_t *stride_out, int axis,
                       const void *in, void *out, double fct, char *err, size_t errlen);

/* Complex transforms along the middle axis of contiguous outer x len x inner arrays
 * (in == out allowed), in blocks of neighbouring lines read and written a cache line at
 * a time, spread over up to nthreads threads through par. Return codes as
 * fft_pocketfft_pass. */
int fft_pocketfft_columns(int f64, int forward, int64_t outer, int64_t len, int64_t inner, const void *in, void *out,
                          double fct, FftParallelFor par, int nthreads, char *err, size_t errlen);

/* The instruction set the transforms run with: 0 the baseline, 1 AVX2+FMA (x86-64 built
 * with GCC, on a CPU that has both; the default there). want >= 0 selects one (1 only
 * where supported; tests run both), -1 asks. Returns the one in use. */
int fft_pocketfft_isa(int want);

/* Whether one long 1-D transform of `kind` and length n (for R2C/C2R the real length)
 * is better run by fft_pocketfft_long than as a pass: n at least FFT_LONG_MIN (C2C, or
 * even n for R2C/C2R). */
int fft_pocketfft_long_ok(int kind, int64_t n);
/* One 1-D transform of length n on contiguous data, spread over up to nthreads threads
 * through par: the four-step algorithm (n = n1 * n2: n2-point transforms of columns,
 * twiddles, n1-point transforms of rows written transposed, each step vectorized over
 * lines by pocketfft and split over threads), Bluestein's algorithm on a four-step
 * transform for lengths with a large prime factor, and R2C/C2R as a complex transform of
 * n/2 points with a post/pre-processing step. Results multiplied by fct; return codes as
 * fft_pocketfft_pass. */
int fft_pocketfft_long(int kind, int f64, int forward, int64_t n, const void *in, void *out, double fct,
                       FftParallelFor par, int nthreads, char *err, size_t errlen);
#ifdef __cplusplus
}
#endif

#endif
