// pocketfft.cc -- the C face of pocketfft (third_party/pocketfft, BSD-3, the library
// NumPy 2 and SciPy use): one pass of 1-D transforms along one axis of a strided array,
// float or double. backend/fft.c plans the passes of a multi-dimensional transform and
// spreads their lines over threads; pocketfft vectorizes over lines within a pass and
// uses Bluestein's algorithm for lengths with large prime factors (O(n log n) for all n).
#define POCKETFFT_NO_MULTITHREADING // the cpu backend's pool splits the work (fft.c)
#define POCKETFFT_CACHE_SIZE 16     // plans (twiddles) of recent lengths, mutex-guarded
#include "../../third_party/pocketfft/pocketfft_hdronly.h"

#include <cstdio>
#include <new>

#include "backend/pocketfft.h"

namespace {

template <typename T>
void pass(int kind, bool forward, const pocketfft::shape_t &shape, const pocketfft::stride_t &sin,
          const pocketfft::stride_t &sout, size_t axis, const void *in, void *out, double fct) {
  using C = std::complex<T>;
  switch (kind) {
  case FFT_PASS_C2C:
    pocketfft::c2c<T>(shape, sin, sout, {axis}, forward, static_cast<const C *>(in), static_cast<C *>(out),
                      static_cast<T>(fct));
    break;
  case FFT_PASS_R2C:
    pocketfft::r2c<T>(shape, sin, sout, axis, forward, static_cast<const T *>(in), static_cast<C *>(out),
                      static_cast<T>(fct));
    break;
  default:
    pocketfft::c2r<T>(shape, sin, sout, axis, forward, static_cast<const C *>(in), static_cast<T *>(out),
                      static_cast<T>(fct));
    break;
  }
}

} // namespace

extern "C" int fft_pocketfft_pass(int kind, int f64, int forward, int ndim, const int64_t *shape,
                                  const int64_t *stride_in, const int64_t *stride_out, int axis,
                                  const void *in, void *out, double fct, char *err, size_t errlen) {
  try {
    pocketfft::shape_t sh(shape, shape + ndim);
    pocketfft::stride_t si(stride_in, stride_in + ndim), so(stride_out, stride_out + ndim);
    if (f64) pass<double>(kind, forward != 0, sh, si, so, (size_t)axis, in, out, fct);
    else pass<float>(kind, forward != 0, sh, si, so, (size_t)axis, in, out, fct);
    return 0;
  } catch (const std::bad_alloc &) {
    std::snprintf(err, errlen, "out of memory");
    return 1;
  } catch (const std::exception &e) {
    std::snprintf(err, errlen, "%s", e.what());
    return 2;
  } catch (...) {
    std::snprintf(err, errlen, "unknown C++ exception");
    return 2;
  }
}
