/* pocketfft.h -- the C face of pocketfft (backend/pocketfft.cc): plain C types only,
 * so that the C++ file needs nothing else from jaxc. */
#ifndef JAXC_BACKEND_POCKETFFT_H
#define JAXC_BACKEND_POCKETFFT_H

#include <stddef.h>
#include <stdint.h>

/* The 1-D transforms of one pass (pocketfft's c2c, r2c, c2r). */
enum { FFT_PASS_C2C, FFT_PASS_R2C, FFT_PASS_C2R };

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
#ifdef __cplusplus
}
#endif

#endif
