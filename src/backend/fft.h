/* fft.h -- the FFT routine (ir/alu.h: ROUTINE_FFT) on host memory: lax.fft's four
 * transforms over the trailing fft_rank axes of a batch of arrays, planned as passes of
 * 1-D transforms on pocketfft (backend/pocketfft.cc); each pass's lines can be spread
 * over a backend's threads. Complex operands are interleaved (re, im) pairs. */
#ifndef JAXC_BACKEND_FFT_H
#define JAXC_BACKEND_FFT_H

#include "backend/pocketfft.h" /* FftParallelFor: a way to spread work over threads */
#include "ir/alu.h"

/* Dtype and element count of the FFT routine's output (complex outputs count their
 * interleaved scalars). */
int64_t fft_out_numel(const Routine *r);
/* Runs r (in[0] -> out[0]) with up to nthreads threads through par. JX_ERR_OOM or
 * JX_ERR_INTERNAL with pocketfft's message on failure. */
jx_status fft_run(const Routine *r, const void *in, void *out, FftParallelFor par, int nthreads);

#endif
