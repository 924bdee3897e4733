/* smallqr.c -- Householder QR (and LU with partial pivoting) of small float32 matrices, 16 at a time in the lanes of
 * AVX-512 vectors (layout (rows, cols, 16)), with LAPACK's conventions (geqrf's larfg:
 * beta = -sign(alpha) |x|, tau = (beta - alpha) / beta, tau = 0 for a column already
 * zero below the diagonal; orgqr: the reflectors applied to the identity, last first),
 * so q and r equal LAPACK's up to rounding, signs included. Each lane's arithmetic does
 * not depend on the other lanes. Why: at 16 x 16 LAPACK's gelqf + orglq cost ~3.5 us a
 * matrix in call overhead and scalar loops, for ~11k flops. */
#include "backend/smallqr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/jacobi.h" /* jacobi_available: the same CPU check and switch */

#if defined(__x86_64__)
#include <immintrin.h>

#define ATTR __attribute__((target("avx512f,fma")))
#define W 16
/* may_alias: lu_run's gathers and scatters reach the same memory through float * */
typedef float v16f __attribute__((vector_size(64), may_alias));
typedef int32_t v16i __attribute__((vector_size(64), may_alias));

ATTR static inline v16f vsplat(float x) { return (v16f)_mm512_set1_ps(x); }
ATTR static inline v16f vsqrt(v16f x) { return (v16f)_mm512_sqrt_ps((__m512)x); }
ATTR static inline v16f vsel(__mmask16 m, v16f a, v16f b) { return (v16f)_mm512_mask_blend_ps(m, (__m512)b, (__m512)a); }
ATTR static inline v16f vabs(v16f x) { return (v16f)((v16i)x & 0x7fffffff); }
ATTR static inline v16f vcopysign(v16f mag, v16f sgn) {
  return (v16f)(((v16i)mag & 0x7fffffff) | ((v16i)sgn & (int32_t)0x80000000u));
}

/* x := (I - tau v v^T) x on columns [c0, c1) of the (rows, ld, W) block x, rows [j, rows)
 * (v[j] = 1 implied, v[i] for i > j in column vj of x's rows, stride ld). */
ATTR static inline void reflect(v16f *x, int64_t ld, const v16f *v, int64_t vld, int64_t vj, int64_t j, int64_t rows,
                                v16f tau, int64_t c0, int64_t c1) {
  for (int64_t c = c0; c < c1; c++) {
    v16f w = x[j * ld + c];
    for (int64_t i = j + 1; i < rows; i++) w += v[i * vld + vj] * x[i * ld + c];
    w *= tau;
    x[j * ld + c] -= w;
    for (int64_t i = j + 1; i < rows; i++) x[i * ld + c] -= v[i * vld + vj] * w;
  }
}

ATTR static uint32_t qr_run(v16f *A, v16f *Q, const float *a, int cnt, int64_t n, int64_t m, int64_t kq, float *q,
                            float *r) {
  uint32_t bad = 0;
  int ex[W] = {0};
  float *Af = (float *)A, *Qf = (float *)Q;
  memset(A, 0, sizeof(v16f) * (size_t)(n * m));
  for (int l = 0; l < cnt; l++) {
    const float *al = a + (size_t)l * (size_t)(n * m);
    float sc = jacobi_lane_scale(al, (int)n, (int)m, false, false, &ex[l]);
    if (sc == 0) {
      bad |= 1u << l;
      continue;
    }
    for (int64_t i = 0; i < n * m; i++) Af[i * W + l] = al[i] * sc;
  }
  int64_t k = n < m ? n : m;
  v16f tau[64];
  const v16f zero = vsplat(0), one = vsplat(1);
  for (int64_t j = 0; j < k; j++) { /* larfg on A[j:, j], then the reflector on A[j:, j+1:] */
    v16f alpha = A[j * m + j], xn = zero;
    for (int64_t i = j + 1; i < n; i++) xn += A[i * m + j] * A[i * m + j];
    __mmask16 nz = _mm512_cmp_ps_mask((__m512)xn, (__m512)zero, _CMP_GT_OQ);
    v16f beta = -vcopysign(vsqrt(alpha * alpha + xn), alpha);
    beta = vsel(nz, beta, alpha);
    v16f t = vsel(nz, (beta - alpha) / vsel(nz, beta, one), zero);
    v16f scal = vsel(nz, one / vsel(nz, alpha - beta, one), zero);
    for (int64_t i = j + 1; i < n; i++) A[i * m + j] *= scal;
    A[j * m + j] = beta;
    tau[j] = t;
    reflect(A, m, A, m, j, j, n, t, j + 1, m);
  }
  /* q: H(0) ... H(k-1) applied to the identity's first kq columns, last first */
  memset(Q, 0, sizeof(v16f) * (size_t)(n * kq));
  for (int64_t i = 0; i < kq; i++) Q[i * kq + i] = one;
  for (int64_t j = k - 1; j >= 0; j--) reflect(Q, kq, A, m, j, j, n, tau[j], j, kq);
  for (int l = 0; l < cnt; l++) {
    if (bad >> l & 1) continue;
    float *ql = q + (size_t)l * (size_t)(n * kq), *rl = r + (size_t)l * (size_t)(kq * m);
    for (int64_t i = 0; i < n * kq; i++) ql[i] = Qf[i * W + l];
    for (int64_t i = 0; i < kq; i++)
      for (int64_t c = 0; c < m; c++) rl[i * m + c] = i < k && c >= i ? ldexpf(Af[(i * m + c) * W + l], ex[l]) : 0;
  }
  return bad & ((1u << cnt) - 1);
}

/* LU with partial pivoting as getf2 (right-looking: pivot = the first largest |a_ij| in
 * the column, whole rows swapped, multipliers scaled by the pivot's reciprocal, a zero
 * pivot leaving its zero column), row swaps per lane by gather and scatter. */
ATTR static uint32_t lu_run(v16f *A, const float *a, int cnt, int64_t n, int64_t m, float *luo, int32_t *piv) {
  uint32_t bad = 0;
  float *Af = (float *)A;
  memset(A, 0, sizeof(v16f) * (size_t)(n * m));
  for (int l = 0; l < cnt; l++) {
    const float *al = a + (size_t)l * (size_t)(n * m);
    for (int64_t i = 0; i < n * m; i++) {
      if (!isfinite(al[i])) {
        bad |= 1u << l;
        break;
      }
      Af[i * W + l] = al[i];
    }
  }
  int64_t k = n < m ? n : m;
  const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  __m512i pv[SMALLQR_MAX];
  const v16f zero = vsplat(0), one = vsplat(1);
  for (int64_t j = 0; j < k; j++) {
    v16f best = vabs(A[j * m + j]);
    __m512i bi = _mm512_set1_epi32((int)j);
    for (int64_t i = j + 1; i < n; i++) {
      v16f x = vabs(A[i * m + j]);
      __mmask16 gt = _mm512_cmp_ps_mask((__m512)x, (__m512)best, _CMP_GT_OQ);
      best = vsel(gt, x, best);
      bi = _mm512_mask_mov_epi32(bi, gt, _mm512_set1_epi32((int)i));
    }
    pv[j] = bi;
    __m512i row = _mm512_add_epi32(_mm512_slli_epi32(_mm512_mullo_epi32(bi, _mm512_set1_epi32((int)m)), 4), lane);
    for (int64_t c = 0; c < m; c++) { /* rows j and bi (per lane) swapped */
      __m512i idx = _mm512_add_epi32(row, _mm512_set1_epi32((int)(c * W)));
      v16f y = (v16f)_mm512_i32gather_ps(idx, Af, 4), x = A[j * m + c];
      _mm512_i32scatter_ps(Af, idx, (__m512)x, 4);
      A[j * m + c] = y; /* after the scatter: lanes with bi == j wrote x == y there */
    }
    v16f p = A[j * m + j];
    __mmask16 nz = _mm512_cmp_ps_mask((__m512)p, (__m512)zero, _CMP_NEQ_UQ);
    v16f rcp = vsel(nz, one / vsel(nz, p, one), zero);
    for (int64_t i = j + 1; i < n; i++) {
      v16f l = A[i * m + j] * rcp;
      A[i * m + j] = l;
      for (int64_t c = j + 1; c < m; c++) A[i * m + c] -= l * A[j * m + c];
    }
  }
  for (int l = 0; l < cnt; l++) {
    if (bad >> l & 1) continue;
    float *ol = luo + (size_t)l * (size_t)(n * m);
    for (int64_t i = 0; i < n * m; i++) ol[i] = Af[i * W + l];
    int32_t *pl = piv + (size_t)l * (size_t)k;
    for (int64_t j = 0; j < k; j++) {
      int32_t tmp[16];
      _mm512_storeu_si512(tmp, pv[j]);
      pl[j] = tmp[l];
    }
  }
  return bad & ((1u << cnt) - 1);
}

uint32_t smallqr_lu_f32(const float *a, int cnt, int64_t n, int64_t m, float *lu, int32_t *piv) {
  uint32_t all = (1u << cnt) - 1;
  if (cnt < 1 || cnt > W || n < 1 || m < 1 || n > SMALLQR_MAX || m > SMALLQR_MAX || !jacobi_available()) return all;
  v16f *buf = aligned_alloc(64, sizeof(v16f) * (size_t)(n * m));
  if (!buf) return all;
  uint32_t bad = lu_run(buf, a, cnt, n, m, lu, piv);
  free(buf);
  return bad;
}

uint32_t smallqr_f32(const float *a, int cnt, int64_t n, int64_t m, bool full, float *q, float *r) {
  uint32_t all = (1u << cnt) - 1;
  int64_t kq = full ? n : n < m ? n : m;
  if (cnt < 1 || cnt > W || n < 1 || m < 1 || n > SMALLQR_MAX || m > SMALLQR_MAX || !jacobi_available()) return all;
  v16f *buf = aligned_alloc(64, sizeof(v16f) * (size_t)(n * m + n * kq));
  if (!buf) return all;
  uint32_t bad = qr_run(buf, buf + n * m, a, cnt, n, m, kq, q, r);
  free(buf);
  return bad;
}

#else

uint32_t smallqr_lu_f32(const float *a, int cnt, int64_t n, int64_t m, float *lu, int32_t *piv) {
  (void)a, (void)n, (void)m, (void)lu, (void)piv;
  return cnt >= 32 ? ~0u : (1u << cnt) - 1;
}
uint32_t smallqr_f32(const float *a, int cnt, int64_t n, int64_t m, bool full, float *q, float *r) {
  (void)a, (void)n, (void)m, (void)full, (void)q, (void)r;
  return cnt >= 32 ? ~0u : (1u << cnt) - 1;
}

#endif
