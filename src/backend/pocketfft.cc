// pocketfft.cc -- the C face of pocketfft (third_party/pocketfft, BSD-3, the library
// NumPy 2 and SciPy use). Two entry points:
//  - fft_pocketfft_pass: one pass of 1-D transforms along one axis of a strided array,
//    float or double; backend/fft.c plans the passes of a multi-dimensional transform and
//    spreads their lines over threads; pocketfft vectorizes over lines within a pass and
//    uses Bluestein's algorithm for lengths with large prime factors (O(n log n) for all n).
//  - fft_pocketfft_long: one long 1-D transform, which pocketfft alone would run on one
//    thread with scalar code and poor cache use. The four-step algorithm (Bailey; the
//    scheme of FFTW's and DUCC's large 1-D transforms) turns it into two passes of short
//    transforms over many lines -- n2-point transforms down the columns of the n2 x n1
//    input, a twiddle multiply, n1-point transforms along the rows written transposed --
//    each vectorized over lines by pocketfft's plans and split over threads. Bluestein's
//    algorithm for lengths with a large prime factor and real transforms (a complex
//    transform of n/2 points plus one O(n) step) run on it.
// Plans (twiddles, chirps, sub-plans) are cached by length (pocketfft's get_plan, 16
// per kind, mutex-guarded); work buffers are allocated per call.
// The code is in pocketfft_impl.h, compiled twice: for the baseline ISA and, on x86-64
// with GCC, for AVX2+FMA (GCC's target pragma; pocketfft's vectors are then 8 floats or 4
// doubles wide), chosen at run time by the CPU (fft_pocketfft_isa).
#define POCKETFFT_NO_MULTITHREADING // the cpu backend's pool splits the work (fft.c)
#define POCKETFFT_CACHE_SIZE 16     // plans (twiddles) of recent lengths, mutex-guarded

// Every standard header pocketfft and pocketfft_impl.h use, included here, outside the
// ISA namespaces and the target pragma: the standard library's templates are compiled
// for the baseline ISA in every copy (one definition each, whichever the linker keeps).
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <complex>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <queue>
#include <stdexcept>
#include <thread>
#include <vector>

#include "backend/pocketfft.h"

// Shortest transform fft_pocketfft_long takes (complex points; R2C/C2R: of the half
// length). Below it the data fits the L2 cache and a single pocketfft line is as fast.
#define FFT_LONG_MIN 16384

namespace jx_fft_base {
#include "backend/pocketfft_impl.h"
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__AVX__)
#define JX_FFT_AVX2 1
#pragma GCC push_options
#pragma GCC target("avx2,fma")
// pocketfft picks its vector width from the ISA macros, which the target pragma leaves
// undefined: this copy's vectors are AVX's.
#define __AVX__ 1
namespace jx_fft_avx2 {
#include "backend/pocketfft_impl.h"
}
#undef __AVX__
#pragma GCC pop_options
#endif

namespace {
int isa_supported() {
#ifdef JX_FFT_AVX2
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : 0;
#else
  return 0;
#endif
}
std::atomic<int> isa_active(-1);
int isa() {
  int v = isa_active.load(std::memory_order_relaxed);
  if (v < 0) {
    static const int best = isa_supported();
    v = best;
    isa_active.store(v, std::memory_order_relaxed);
  }
  return v;
}
} // namespace

extern "C" int fft_pocketfft_isa(int want) {
  if (want >= 0) isa_active.store(want && isa_supported() ? 1 : 0);
  return isa();
}

extern "C" int fft_pocketfft_pass(int kind, int f64, int forward, int ndim, const int64_t *shape,
                                  const int64_t *stride_in, const int64_t *stride_out, int axis,
                                  const void *in, void *out, double fct, char *err, size_t errlen) {
#ifdef JX_FFT_AVX2
  if (isa()) return jx_fft_avx2::pass_entry(kind, f64, forward, ndim, shape, stride_in, stride_out, axis, in, out, fct, err, errlen);
#endif
  return jx_fft_base::pass_entry(kind, f64, forward, ndim, shape, stride_in, stride_out, axis, in, out, fct, err, errlen);
}

extern "C" int fft_pocketfft_columns(int f64, int forward, int64_t outer, int64_t len, int64_t inner, const void *in,
                                     void *out, double fct, FftParallelFor par, int nthreads, char *err,
                                     size_t errlen) {
#ifdef JX_FFT_AVX2
  if (isa()) return jx_fft_avx2::columns_entry(f64, forward, outer, len, inner, in, out, fct, par, nthreads, err, errlen);
#endif
  return jx_fft_base::columns_entry(f64, forward, outer, len, inner, in, out, fct, par, nthreads, err, errlen);
}

extern "C" int fft_pocketfft_long_ok(int kind, int64_t n) {
  if (kind == FFT_PASS_C2C) return n >= FFT_LONG_MIN;
  return n % 2 == 0 && n / 2 >= FFT_LONG_MIN;
}

extern "C" int fft_pocketfft_long(int kind, int f64, int forward, int64_t n, const void *in, void *out, double fct,
                                  FftParallelFor par, int nthreads, char *err, size_t errlen) {
  if (!fft_pocketfft_long_ok(kind, n) || (kind == FFT_PASS_R2C && !forward) || (kind == FFT_PASS_C2R && forward)) {
    std::snprintf(err, errlen, "no long transform of kind %d, length %lld", kind, (long long)n);
    return 2;
  }
#ifdef JX_FFT_AVX2
  if (isa()) return jx_fft_avx2::long_entry(kind, f64, forward, n, in, out, fct, par, nthreads, err, errlen);
#endif
  return jx_fft_base::long_entry(kind, f64, forward, n, in, out, fct, par, nthreads, err, errlen);
}
