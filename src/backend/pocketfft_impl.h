// pocketfft_impl.h -- the FFT code of backend/pocketfft.cc, included there once per
// instruction set, each time inside its own namespace (jx_fft_base, jx_fft_avx2) and
// with its own copy of pocketfft, so that the copies share no symbol; no include guard.
// What it holds is described in pocketfft.cc. It ends with the three entry points
// (pass_entry, columns_entry, long_entry) that pocketfft.cc's C functions dispatch to.
#undef POCKETFFT_HDRONLY_H // a second copy, in another namespace, for another ISA
#include "../../third_party/pocketfft/pocketfft_hdronly.h"

namespace {

namespace pf = pocketfft::detail;
using pf::cmplx;

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

// ------------------------------------------------------------------ lanes of a vector

// Lines transformed together: pocketfft's SIMD vector type (VLEN lanes) or one scalar.
#ifndef POCKETFFT_NO_VECTORS
template <typename T> using Vec = pf::vtype_t<T>;
template <typename T> struct Width { static constexpr size_t val = pf::VLEN<T>::val; };
#else
template <typename T> using Vec = T;
template <typename T> struct Width { static constexpr size_t val = 1; };
#endif

inline float get(float v, size_t) { return v; }
inline double get(double v, size_t) { return v; }
template <typename L> inline auto get(const L &v, size_t j) -> decltype(v[j]) { return v[j]; }
inline void set(float &v, size_t, float x) { v = x; }
inline void set(double &v, size_t, double x) { v = x; }
template <typename L, typename T> inline auto set(L &v, size_t j, T x) -> decltype(void(v[j] = x)) { v[j] = x; }

// a * b, or a * conj(b) when `conj`.
template <typename T> inline cmplx<T> mul(const cmplx<T> &a, const cmplx<T> &b, bool conj) {
  return conj ? cmplx<T>(a.r * b.r + a.i * b.i, a.i * b.r - a.r * b.i)
              : cmplx<T>(a.r * b.r - a.i * b.i, a.r * b.i + a.i * b.r);
}

// ------------------------------------------------------------------ threads

struct Par {
  FftParallelFor fn;
  int nthreads;
};

template <typename F> struct Job {
  const F *f;
  std::atomic<int> rc;
  char msg[160];
  void fail(int code, const char *m) {
    int none = 0;
    if (rc.compare_exchange_strong(none, code)) std::snprintf(msg, sizeof msg, "%s", m);
  }
};

// C++ exceptions stop at the chunk: the C pool never sees one.
template <typename F> void run_chunk(void *ctx, int64_t start, int64_t end) {
  Job<F> *j = static_cast<Job<F> *>(ctx);
  try {
    (*j->f)(static_cast<size_t>(start), static_cast<size_t>(end));
  } catch (const std::bad_alloc &) {
    j->fail(1, "out of memory");
  } catch (const std::exception &e) {
    j->fail(2, e.what());
  } catch (...) {
    j->fail(2, "unknown C++ exception");
  }
}

// f(start, end) over [0, n): chunks taken by the pool's threads as they come free (four
// per thread, so that a thread slowed by other load does not hold the others up).
template <typename F> void parallel_for(const Par &par, size_t n, const F &f) {
  if (n == 0) return;
  Job<F> j;
  j.f = &f;
  j.rc = 0;
  size_t chunks = static_cast<size_t>(par.nthreads > 1 ? 4 * par.nthreads : 1);
  if (chunks > n) chunks = n;
  if (par.fn && chunks >= 2) par.fn(run_chunk<F>, &j, static_cast<int64_t>(n), static_cast<int>(chunks), 1);
  else run_chunk<F>(&j, 0, static_cast<int64_t>(n));
  if (j.rc == 1) throw std::bad_alloc();
  if (j.rc) throw std::runtime_error(j.msg);
}

// ------------------------------------------------------------------ roots of unity

// exp(2 pi i k / n) for 0 <= k < n in double, as products of two table entries (the
// scheme of pocketfft's sincos_2pibyn, whose accurate values fill the tables).
class Roots {
  size_t shift = 0, mask;
  pf::arr<cmplx<double>> lo, hi;

public:
  explicit Roots(size_t n) {
    pf::sincos_2pibyn<double> s(n);
    while ((size_t(1) << (2 * shift)) < n) ++shift;
    mask = (size_t(1) << shift) - 1;
    lo.resize(mask + 1);
    hi.resize((n >> shift) + 1);
    for (size_t i = 0; i <= mask; ++i) lo[i] = s[i < n ? i : 0];
    for (size_t h = 0; h < hi.size(); ++h) hi[h] = s[(h << shift) < n ? h << shift : 0];
  }
  cmplx<double> operator()(size_t k) const {
    const cmplx<double> &a = lo[k & mask], &b = hi[k >> shift];
    return cmplx<double>(a.r * b.r - a.i * b.i, a.r * b.i + a.i * b.r);
  }
};

// ------------------------------------------------------------------ four-step transform

// n = n1 * n2 (as close to a square as n's divisors allow, both multiples of the vector
// width where possible); 0 when no split leaves both sides at least 16.
inline size_t split(size_t n, size_t width) {
  size_t best = 0, best_vec = 0;
  for (size_t d = 16; d * d <= n; ++d)
    if (n % d == 0) {
      best = d;
      if (d % width == 0 && (n / d) % width == 0) best_vec = d;
    }
  // a split aligned to the width, unless it is much less square than the best one
  if (best_vec && best_vec * 4 >= best) return best_vec;
  return best;
}

// The four-step plan of an n-point complex transform: x as an n2 x n1 matrix (n = c +
// n1 * r); n2-point transforms of its columns, times exp(-+2 pi i c k2 / n), n1-point
// transforms of its rows; X[k2 + n2 * k1] is row k2's entry k1.
template <typename T> struct FourStep {
  static constexpr size_t V = Width<T>::val;
  size_t n, n1, n2;
  std::shared_ptr<pf::pocketfft_c<T>> row, col; // n1 and n2 points
  Roots roots;                                  // exp(2 pi i k / n)
  pf::arr<cmplx<T>> step;                       // [k2 * V + j] = exp(2 pi i j k2 / n)

  explicit FourStep(size_t len)
      : n(len), n1(len / split(len, V)), n2(split(len, V)), row(pf::get_plan<pf::pocketfft_c<T>>(n1)),
        col(pf::get_plan<pf::pocketfft_c<T>>(n2)), roots(len), step(n2 * V) {
    for (size_t k = 0; k < n2; ++k)
      for (size_t j = 0; j < V; ++j) {
        cmplx<double> w = roots((j * k) % n);
        step[k * V + j] = cmplx<T>(T(w.r), T(w.i));
      }
  }
  size_t length() const { return n; }
};

// Column transforms of the W columns c0.. (W lanes of L): load(index) -> buf, transform,
// twiddle, into rows of s.
template <size_t W, typename L, typename T, typename Load>
void fs_columns(const FourStep<T> &p, const Load &load, cmplx<T> *s, size_t c0, bool fwd, cmplx<L> *buf) {
  const size_t n1 = p.n1, n2 = p.n2, V = FourStep<T>::V;
  for (size_t r = 0; r < n2; ++r)
    for (size_t j = 0; j < W; ++j) {
      cmplx<T> v = load(c0 + j + n1 * r);
      set(buf[r].r, j, v.r);
      set(buf[r].i, j, v.i);
    }
  p.col->exec(buf, T(1), fwd);
  for (size_t k = 0; k < n2; ++k) {
    cmplx<double> b = p.roots(c0 * k);
    T br = T(b.r), bi = T(fwd ? -b.i : b.i);
    L tr, ti;
    for (size_t j = 0; j < W; ++j) {
      const cmplx<T> &st = p.step[k * V + j];
      T si = fwd ? -st.i : st.i;
      set(tr, j, br * st.r - bi * si);
      set(ti, j, br * si + bi * st.r);
    }
    L xr = buf[k].r * tr - buf[k].i * ti, xi = buf[k].r * ti + buf[k].i * tr;
    cmplx<T> *o = s + k * n1 + c0;
    for (size_t j = 0; j < W; ++j) o[j] = cmplx<T>(get(xr, j), get(xi, j));
  }
}

// Row transforms of the W rows k0.. of s, results to store(index, value).
template <size_t W, typename L, typename T, typename Store>
void fs_rows(const FourStep<T> &p, const cmplx<T> *s, const Store &store, size_t k0, T fct, bool fwd,
             cmplx<L> *buf) {
  const size_t n1 = p.n1, n2 = p.n2;
  for (size_t c = 0; c < n1; ++c)
    for (size_t j = 0; j < W; ++j) {
      const cmplx<T> &v = s[(k0 + j) * n1 + c];
      set(buf[c].r, j, v.r);
      set(buf[c].i, j, v.i);
    }
  p.row->exec(buf, fct, fwd);
  for (size_t k = 0; k < n1; ++k)
    for (size_t j = 0; j < W; ++j) store(k0 + j + n2 * k, cmplx<T>(get(buf[k].r, j), get(buf[k].i, j)));
}

// One transform: x[i] = load(i), X[k] * fct -> store(k, .); s: n points of scratch.
template <typename T, typename Load, typename Store>
void four_step(const FourStep<T> &p, const Load &load, const Store &store, cmplx<T> *s, T fct, bool fwd,
               const Par &par) {
  const size_t V = FourStep<T>::V, ga = p.n1 / V, gb = p.n2 / V;
  parallel_for(par, ga + p.n1 % V, [&](size_t u0, size_t u1) {
    pf::arr<cmplx<Vec<T>>> bv(u0 < ga ? p.n2 : 0);
    pf::arr<cmplx<T>> bs(u1 > ga ? p.n2 : 0);
    for (size_t u = u0; u < u1; ++u)
      if (u < ga) fs_columns<Width<T>::val>(p, load, s, u * V, fwd, bv.data());
      else fs_columns<1>(p, load, s, ga * V + (u - ga), fwd, bs.data());
  });
  parallel_for(par, gb + p.n2 % V, [&](size_t u0, size_t u1) {
    pf::arr<cmplx<Vec<T>>> bv(u0 < gb ? p.n1 : 0);
    pf::arr<cmplx<T>> bs(u1 > gb ? p.n1 : 0);
    for (size_t u = u0; u < u1; ++u)
      if (u < gb) fs_rows<Width<T>::val>(p, s, store, u * V, fct, fwd, bv.data());
      else fs_rows<1>(p, s, store, gb * V + (u - gb), fct, fwd, bs.data());
  });
}

// ------------------------------------------------------------------ long complex transforms

// An n-point complex transform: four-step when n splits, else Bluestein's algorithm (a
// cyclic convolution with the chirp exp(i pi k^2 / n), as pocketfft's fftblue) on a
// four-step transform of m >= 2n - 1 points, m with factors 2, 3, 5, 7, 11 only.
template <typename T> struct Long {
  size_t n, m;
  std::shared_ptr<FourStep<T>> fs; // n points, or m for Bluestein
  pf::arr<cmplx<T>> bk, bkf;       // Bluestein: the chirp (n), its transform / m (m/2+1)

  explicit Long(size_t len) : n(len), m(0) {
    size_t d = split(len, 1);
    if (d && d * d * 256 >= len) { // split, and not too lopsided
      fs = pf::get_plan<FourStep<T>>(len);
      return;
    }
    m = pf::util::good_size_cmplx(2 * n - 1);
    fs = pf::get_plan<FourStep<T>>(m);
    bk.resize(n);
    bkf.resize(m / 2 + 1);
    pf::sincos_2pibyn<T> tmp(2 * n);
    bk[0].Set(1, 0);
    size_t coeff = 0;
    for (size_t k = 1; k < n; ++k) { // k^2 mod 2n
      coeff += 2 * k - 1;
      if (coeff >= 2 * n) coeff -= 2 * n;
      bk[k] = tmp[coeff];
    }
    pf::arr<cmplx<T>> t(m), s(m);
    T inv = T(1) / T(m);
    const cmplx<T> *b = bk.data();
    size_t nn = n, mm = m;
    auto chirp = [b, nn, mm, inv](size_t i) -> cmplx<T> {
      size_t k = i < nn ? i : mm - i < nn ? mm - i : nn;
      return k < nn ? b[k] * inv : cmplx<T>(0, 0);
    };
    auto keep = [&t](size_t i, cmplx<T> v) { t[i] = v; };
    four_step(*fs, chirp, keep, s.data(), T(1), true, Par{nullptr, 1});
    for (size_t i = 0; i <= m / 2; ++i) bkf[i] = t[i];
  }
  size_t length() const { return n; }

  template <typename Load, typename Store>
  void exec(const Load &load, const Store &store, T fct, bool fwd, const Par &par) const {
    if (!m) {
      pf::arr<cmplx<T>> s(n);
      four_step(*fs, load, store, s.data(), fct, fwd, par);
      return;
    }
    pf::arr<cmplx<T>> a(m), s(m);
    const cmplx<T> *b = bk.data(), *bf = bkf.data();
    cmplx<T> *pa = a.data();
    size_t nn = n, mm = m;
    auto in = [&load, b, nn, fwd](size_t i) { return i < nn ? mul(cmplx<T>(load(i)), b[i], fwd) : cmplx<T>(0, 0); };
    auto conv = [pa, bf, mm, fwd](size_t i, cmplx<T> v) { pa[i] = mul(v, bf[i <= mm / 2 ? i : mm - i], !fwd); };
    four_step(*fs, in, conv, s.data(), T(1), true, par);
    auto again = [pa](size_t i) { return pa[i]; };
    auto out = [&store, b, nn, fct, fwd](size_t i, cmplx<T> v) {
      if (i < nn) store(i, mul(v, b[i], fwd) * fct);
    };
    four_step(*fs, again, out, s.data(), T(1), false, par);
  }
};

// Real n-point transforms (n even) as complex transforms of h = n/2 points of
// z[k] = x[2k] + i x[2k+1]: X[k] = E[k] + w^k O[k] (w = exp(-2 pi i / n)), with E, O the
// transforms of the even and odd samples, E[k] = (Z[k] + conj Z[h-k]) / 2 and
// O[k] = (Z[k] - conj Z[h-k]) / 2i.
template <typename T> struct Real {
  size_t n, h;
  std::shared_ptr<Long<T>> half;
  Roots roots; // exp(2 pi i k / n)
  explicit Real(size_t len) : n(len), h(len / 2), half(pf::get_plan<Long<T>>(len / 2)), roots(len) {}
  size_t length() const { return n; }

  void r2c(const T *in, cmplx<T> *out, T fct, const Par &par) const {
    const cmplx<T> *z = reinterpret_cast<const cmplx<T> *>(in);
    half->exec([z](size_t i) { return z[i]; }, [out](size_t i, cmplx<T> v) { out[i] = v; }, T(1), true, par);
    parallel_for(par, h / 2 + 1, [&](size_t k0, size_t k1) {
      for (size_t k = k0; k < k1; ++k) {
        if (k == 0) {
          cmplx<T> z0 = out[0];
          out[0] = cmplx<T>((z0.r + z0.i) * fct, 0);
          out[h] = cmplx<T>((z0.r - z0.i) * fct, 0);
          continue;
        }
        cmplx<T> a = out[k], b = out[h - k];
        cmplx<T> e(T(0.5) * (a.r + b.r), T(0.5) * (a.i - b.i)), o(T(0.5) * (a.i + b.i), T(-0.5) * (a.r - b.r));
        cmplx<double> w = roots(k);
        cmplx<T> wo = mul(o, cmplx<T>(T(w.r), T(w.i)), true);
        out[k] = cmplx<T>((e.r + wo.r) * fct, (e.i + wo.i) * fct);
        out[h - k] = cmplx<T>((e.r - wo.r) * fct, (wo.i - e.i) * fct);
      }
    });
  }

  void c2r(const cmplx<T> *in, T *out, T fct, const Par &par) const {
    const Roots &r = roots;
    size_t hh = h;
    auto load = [in, &r, hh](size_t k) -> cmplx<T> {
      if (k == 0) return cmplx<T>(in[0].r + in[hh].r, in[0].r - in[hh].r);
      const cmplx<T> &x = in[k], &y = in[hh - k];
      cmplx<T> sum(x.r + y.r, x.i - y.i), dif(x.r - y.r, x.i + y.i);
      cmplx<double> w = r(k);
      cmplx<T> dw = mul(dif, cmplx<T>(T(w.r), T(w.i)), false);
      return cmplx<T>(sum.r - dw.i, sum.i + dw.r);
    };
    cmplx<T> *z = reinterpret_cast<cmplx<T> *>(out);
    half->exec(load, [z](size_t i, cmplx<T> v) { z[i] = v; }, fct, false, par);
  }
};

template <typename T>
void run_long(int kind, bool forward, size_t n, const void *in, void *out, T fct, const Par &par) {
  if (kind == FFT_PASS_C2C) {
    const cmplx<T> *x = static_cast<const cmplx<T> *>(in);
    cmplx<T> *y = static_cast<cmplx<T> *>(out);
    pf::get_plan<Long<T>>(n)->exec([x](size_t i) { return x[i]; }, [y](size_t i, cmplx<T> v) { y[i] = v; }, fct,
                                   forward, par);
  } else if (kind == FFT_PASS_R2C) {
    pf::get_plan<Real<T>>(n)->r2c(static_cast<const T *>(in), static_cast<cmplx<T> *>(out), fct, par);
  } else {
    pf::get_plan<Real<T>>(n)->c2r(static_cast<const cmplx<T> *>(in), static_cast<T *>(out), fct, par);
  }
}

// ------------------------------------------------------------------ strided passes

// Transforms along the middle axis of an outer x len x inner array (lines `inner` apart,
// neighbouring lines adjacent): blocks of B neighbouring lines are gathered position by
// position -- whole cache lines, each read once (pocketfft's pass reads VLEN lines at a
// time, half a cache line at SSE width, and at power-of-two strides the other half is
// evicted before its turn) -- transformed VLEN lines at a time, and written back alike.
template <typename T>
void columns(bool forward, size_t outer, size_t len, size_t inner, const cmplx<T> *in, cmplx<T> *out, T fct,
             const Par &par) {
  constexpr size_t V = Width<T>::val, B = (V > 128 / sizeof(cmplx<T>) ? V : 128 / sizeof(cmplx<T>));
  static_assert(B % V == 0, "block of whole vectors");
  std::shared_ptr<pf::pocketfft_c<T>> plan = pf::get_plan<pf::pocketfft_c<T>>(len);
  size_t nb = (inner + B - 1) / B;
  parallel_for(par, outer * nb, [&](size_t u0, size_t u1) {
    pf::arr<cmplx<Vec<T>>> vb(B / V * len);
    pf::arr<cmplx<T>> sb(V * len);
    for (size_t u = u0; u < u1; ++u) {
      size_t o = u / nb, c0 = u % nb * B, w = inner - c0 < B ? inner - c0 : B, nv = w / V, ns = w % V;
      const cmplx<T> *src = in + o * len * inner + c0;
      cmplx<T> *dst = out + o * len * inner + c0;
      for (size_t p = 0; p < len; ++p) {
        const cmplx<T> *row = src + p * inner;
        for (size_t g = 0; g < nv; ++g)
          for (size_t j = 0; j < V; ++j) {
            set(vb[g * len + p].r, j, row[g * V + j].r);
            set(vb[g * len + p].i, j, row[g * V + j].i);
          }
        for (size_t j = 0; j < ns; ++j) sb[j * len + p] = row[nv * V + j];
      }
      for (size_t g = 0; g < nv; ++g) plan->exec(vb.data() + g * len, fct, forward);
      for (size_t j = 0; j < ns; ++j) plan->exec(sb.data() + j * len, fct, forward);
      for (size_t p = 0; p < len; ++p) {
        cmplx<T> *row = dst + p * inner;
        for (size_t g = 0; g < nv; ++g)
          for (size_t j = 0; j < V; ++j) row[g * V + j] = cmplx<T>(get(vb[g * len + p].r, j), get(vb[g * len + p].i, j));
        for (size_t j = 0; j < ns; ++j) row[nv * V + j] = sb[j * len + p];
      }
    }
  });
}

template <typename F> int guarded(F &&f, char *err, size_t errlen) {
  try {
    f();
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

} // namespace

int pass_entry(int kind, int f64, int forward, int ndim, const int64_t *shape,
                                  const int64_t *stride_in, const int64_t *stride_out, int axis,
                                  const void *in, void *out, double fct, char *err, size_t errlen) {
  return guarded(
      [&] {
        pocketfft::shape_t sh(shape, shape + ndim);
        pocketfft::stride_t si(stride_in, stride_in + ndim), so(stride_out, stride_out + ndim);
        if (f64) pass<double>(kind, forward != 0, sh, si, so, (size_t)axis, in, out, fct);
        else pass<float>(kind, forward != 0, sh, si, so, (size_t)axis, in, out, fct);
      },
      err, errlen);
}

int columns_entry(int f64, int forward, int64_t outer, int64_t len, int64_t inner, const void *in,
                                     void *out, double fct, FftParallelFor par, int nthreads, char *err,
                                     size_t errlen) {
  Par p{par, nthreads};
  return guarded(
      [&] {
        if (f64)
          columns<double>(forward != 0, (size_t)outer, (size_t)len, (size_t)inner, static_cast<const cmplx<double> *>(in),
                          static_cast<cmplx<double> *>(out), fct, p);
        else
          columns<float>(forward != 0, (size_t)outer, (size_t)len, (size_t)inner, static_cast<const cmplx<float> *>(in),
                         static_cast<cmplx<float> *>(out), static_cast<float>(fct), p);
      },
      err, errlen);
}

int long_entry(int kind, int f64, int forward, int64_t n, const void *in, void *out, double fct, FftParallelFor par,
               int nthreads, char *err, size_t errlen) {
  Par p{par, nthreads};
  return guarded(
      [&] {
        if (f64) run_long<double>(kind, forward != 0, (size_t)n, in, out, fct, p);
        else run_long<float>(kind, forward != 0, (size_t)n, in, out, static_cast<float>(fct), p);
      },
      err, errlen);
}
