/* jacobi.c -- cyclic Jacobi eigh and one-sided Jacobi (Hestenes) SVD of small float32
 * matrices, one matrix per lane of an AVX-512 vector (layout (n, n, 16): element (i, j)
 * of the 16 matrices is one vector). Written from the textbook algorithms (Golub & Van
 * Loan 8.5 and 8.6.3; Demmel & Veselic's stopping rule), no vendored code. Every lane
 * decides its own rotations (a rotation it skips leaves it unchanged), so a lane's result
 * is the one it would get alone. Each matrix is first scaled by a power of two (exact)
 * so that its largest entry is in [0.5, 1): no sum of squares overflows or underflows
 * for matrices of full numerical rank. Why not LAPACK: at n = 16, OpenBLAS's ssyevd
 * spent its time in scalar rotation loops (slasr, slartg: 40% of perf samples) and call
 * overhead, ~7-14 us a matrix; the lanes here share every instruction. */
#include "backend/jacobi.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define SWEEPS_MAX 30 /* a lane still rotating after this many sweeps has failed */

#if defined(__x86_64__)
#include <immintrin.h>

#define ATTR __attribute__((target("avx512f,fma")))
#define W JACOBI_LANES
typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));

static _Atomic bool enabled = true;
bool jacobi_available(void) { return enabled && __builtin_cpu_supports("avx512f"); }
bool jacobi_set_enabled(bool on) { return atomic_exchange(&enabled, on); }

ATTR static inline v16f vsplat(float x) { return (v16f)_mm512_set1_ps(x); }
ATTR static inline v16f vsqrt(v16f x) { return (v16f)_mm512_sqrt_ps((__m512)x); }
ATTR static inline v16f vabs(v16f x) { return (v16f)((v16i)x & 0x7fffffff); }
/* |mag| with the sign of sgn */
ATTR static inline v16f vcopysign(v16f mag, v16f sgn) {
  return (v16f)(((v16i)mag & 0x7fffffff) | ((v16i)sgn & (int32_t)0x80000000u));
}
/* a in the lanes of m, b elsewhere */
ATTR static inline v16f vsel(__mmask16 m, v16f a, v16f b) { return (v16f)_mm512_mask_blend_ps(m, (__m512)b, (__m512)a); }
ATTR static inline __mmask16 vgt(v16f a, v16f b) { return _mm512_cmp_ps_mask((__m512)a, (__m512)b, _CMP_GT_OQ); }

/* The rotation that zeroes the off-diagonal g of the symmetric 2 x 2 [[x, g], [g, y]]
 * (eigh: a_pp, a_pq, a_qq; SVD: |a_p|^2, a_p . a_q, |a_q|^2) in the lanes of m, the
 * identity (t = s = 0, c = 1) elsewhere: t = tan, the smaller root of t^2 + 2 zeta t - 1
 * with zeta = (y - x) / 2g (Rutishauser). A |zeta| above ~1e19 squares to inf and gives
 * t = 0: the dropped g is below 1e-19 |y - x|. */
ATTR static inline void rotation(__mmask16 m, v16f x, v16f g, v16f y, v16f *t, v16f *c, v16f *s) {
  const v16f one = vsplat(1);
  v16f zeta = (y - x) / (2 * vsel(m, g, one));
  v16f tt = vsel(m, vcopysign(one / (vabs(zeta) + vsqrt(zeta * zeta + one)), zeta), vsplat(0));
  v16f cc = one / vsqrt(tt * tt + one);
  *t = tt, *c = cc, *s = tt * cc;
}

/* x' = c x - s y, y' = s x + c y on columns p and q of the (n, n, W) matrix m. */
ATTR static inline void rotate_cols(v16f *m, int n, int p, int q, v16f c, v16f s) {
  for (int k = 0; k < n; k++) {
    v16f x = m[k * n + p], y = m[k * n + q];
    m[k * n + p] = c * x - s * y, m[k * n + q] = s * x + c * y;
  }
}

float jacobi_lane_scale(const float *a, int rows, int cols, bool tri, bool lower, int *e_out) {
  float mx = 0;
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) {
      if (tri && (lower ? j > i : j < i)) continue;
      float x = fabsf(a[i * cols + j]);
      if (!isfinite(x)) return 0;
      if (x > mx) mx = x;
    }
  int e = 0;
  if (mx > 0) frexpf(mx, &e);
  if (e < -125) e = -125;
  if (e > 125) e = 125;
  *e_out = e;
  return ldexpf(1, -e);
}

/* Indices 0..n-1 ordered by key (ascending, or descending with desc), ties in index
 * order (insertion sort: n <= 32). */
static void order(const float *key, int n, bool desc, int *idx) {
  for (int i = 0; i < n; i++) {
    int j = i;
    for (; j > 0 && (desc ? key[idx[j - 1]] < key[i] : key[idx[j - 1]] > key[i]); j--) idx[j] = idx[j - 1];
    idx[j] = i;
  }
}

ATTR static uint32_t eigh_run(v16f *A, v16f *V, const float *a, int cnt, int n, bool lower, float *vout,
                              float *wout) {
  uint32_t bad = 0;
  int ex[W] = {0};
  float *Af = (float *)A, *Vf = (float *)V;
  memset(A, 0, sizeof(v16f) * (size_t)(n * n));
  memset(V, 0, sizeof(v16f) * (size_t)(n * n));
  for (int l = 0; l < cnt; l++) {
    const float *al = a + (size_t)l * n * n;
    float sc = jacobi_lane_scale(al, n, n, true, lower, &ex[l]);
    if (sc == 0) {
      bad |= 1u << l;
      continue;
    }
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        bool mine = lower ? i >= j : i <= j;
        Af[(i * n + j) * W + l] = (mine ? al[i * n + j] : al[j * n + i]) * sc;
      }
  }
  for (int i = 0; i < n; i++) V[i * n + i] = vsplat(1);
  /* Demmel & Veselic: rotate while |a_pq| > tol sqrt(|a_pp a_qq|) (relative accuracy);
   * atol ends matrices with zero diagonals (all entries scaled below 1) */
  const v16f tol = vsplat(0x1p-23f), atol = vsplat(0x1p-60f), zero = vsplat(0);
  __mmask16 live = 0xffff;
  int sweep = 0;
  for (; sweep < SWEEPS_MAX && live; sweep++) {
    __mmask16 rotated = 0;
    for (int p = 0; p + 1 < n; p++)
      for (int q = p + 1; q < n; q++) {
        v16f apq = A[p * n + q], app = A[p * n + p], aqq = A[q * n + q], g = vabs(apq);
        __mmask16 m = vgt(g, tol * vsqrt(vabs(app)) * vsqrt(vabs(aqq))) & vgt(g, atol);
        if (!m) continue;
        rotated |= m;
        v16f t, c, s;
        rotation(m, app, apq, aqq, &t, &c, &s);
        v16f tau = t * apq;
        /* rows and columns p, q of the symmetric A: A' = J^T A J, kept symmetric */
        for (int k = 0; k < n; k++) {
          if (k == p || k == q) continue;
          v16f x = A[k * n + p], y = A[k * n + q];
          v16f nx = c * x - s * y, ny = s * x + c * y;
          A[k * n + p] = A[p * n + k] = nx;
          A[k * n + q] = A[q * n + k] = ny;
        }
        A[p * n + p] = app - tau, A[q * n + q] = aqq + tau;
        A[p * n + q] = A[q * n + p] = vsel(m, zero, apq);
        rotate_cols(V, n, p, q, c, s);
      }
    live = rotated;
  }
  if (live) bad |= live;
  float d[JACOBI_MAX_N];
  int idx[JACOBI_MAX_N];
  for (int l = 0; l < cnt; l++) {
    if (bad >> l & 1) continue;
    for (int i = 0; i < n; i++) d[i] = Af[(i * n + i) * W + l];
    order(d, n, false, idx);
    float *vl = vout + (size_t)l * n * n, *wl = wout + (size_t)l * n;
    for (int j = 0; j < n; j++) {
      wl[j] = ldexpf(d[idx[j]], ex[l]);
      for (int i = 0; i < n; i++) vl[i * n + j] = Vf[(i * n + idx[j]) * W + l];
    }
  }
  return bad & ((1u << cnt) - 1);
}

ATTR static uint32_t svd_run(v16f *G, v16f *V, const float *a, int cnt, int n, bool uv, float *sout, float *uout,
                             float *vtout) {
  uint32_t bad = 0;
  int ex[W] = {0};
  float *Gf = (float *)G, *Vf = (float *)V;
  memset(G, 0, sizeof(v16f) * (size_t)(n * n));
  for (int l = 0; l < cnt; l++) {
    const float *al = a + (size_t)l * n * n;
    float sc = jacobi_lane_scale(al, n, n, false, false, &ex[l]);
    if (sc == 0) {
      bad |= 1u << l;
      continue;
    }
    for (int i = 0; i < n * n; i++) Gf[i * W + l] = al[i] * sc;
  }
  if (uv) {
    memset(V, 0, sizeof(v16f) * (size_t)(n * n));
    for (int i = 0; i < n; i++) V[i * n + i] = vsplat(1);
  }
  /* rotate columns p, q while |a_p . a_q| > tol |a_p| |a_q| (LAPACK's sgesvj: tol =
   * sqrt(rows) eps; here 4 eps at every n <= 32) */
  const v16f tol = vsplat(0x1p-22f), atol = vsplat(0x1p-100f);
  __mmask16 live = 0xffff;
  for (int sweep = 0; sweep < SWEEPS_MAX && live; sweep++) {
    __mmask16 rotated = 0;
    for (int p = 0; p + 1 < n; p++)
      for (int q = p + 1; q < n; q++) {
        v16f al = vsplat(0), be = vsplat(0), ga = vsplat(0);
        for (int k = 0; k < n; k++) {
          v16f x = G[k * n + p], y = G[k * n + q];
          al += x * x, be += y * y, ga += x * y;
        }
        v16f g = vabs(ga);
        __mmask16 m = vgt(g, tol * vsqrt(al) * vsqrt(be)) & vgt(g, atol);
        if (!m) continue;
        rotated |= m;
        v16f t, c, s;
        rotation(m, al, ga, be, &t, &c, &s);
        rotate_cols(G, n, p, q, c, s);
        if (uv) rotate_cols(V, n, p, q, c, s);
      }
    live = rotated;
  }
  bad |= live;
  /* column norms: the singular values (scaled); a column of negligible norm has no
   * direction to give u */
  v16f nrm[JACOBI_MAX_N];
  for (int j = 0; j < n; j++) {
    v16f acc = vsplat(0);
    for (int k = 0; k < n; k++) acc += G[k * n + j] * G[k * n + j];
    nrm[j] = acc;
    bad |= (uint32_t)_mm512_cmp_ps_mask((__m512)acc, (__m512)vsplat(0x1p-100f), _CMP_LT_OQ);
  }
  float sg[JACOBI_MAX_N];
  int idx[JACOBI_MAX_N];
  for (int l = 0; l < cnt; l++) {
    if (bad >> l & 1) continue;
    for (int j = 0; j < n; j++) sg[j] = sqrtf(nrm[j][l]);
    order(sg, n, true, idx);
    float *sl = sout + (size_t)l * n;
    for (int j = 0; j < n; j++) sl[j] = ldexpf(sg[idx[j]], ex[l]);
    if (!uv) continue;
    float *ul = uout + (size_t)l * n * n, *vl = vtout + (size_t)l * n * n;
    for (int j = 0; j < n; j++) {
      float r = 1 / sg[idx[j]];
      for (int k = 0; k < n; k++) ul[k * n + j] = Gf[(k * n + idx[j]) * W + l] * r;
      for (int i = 0; i < n; i++) vl[j * n + i] = Vf[(i * n + idx[j]) * W + l];
    }
  }
  return bad & ((1u << cnt) - 1);
}

/* Two (n, n, W) float blocks, 64-byte aligned, or NULL. */
static v16f *blocks(int n) { return aligned_alloc(64, 2 * sizeof(v16f) * (size_t)(n * n)); }

uint32_t jacobi_eigh_f32(const float *a, int cnt, int n, bool lower, float *v, float *w) {
  uint32_t all = (1u << cnt) - 1;
  if (cnt < 1 || cnt > W || n < 1 || n > JACOBI_MAX_N || !jacobi_available()) return all;
  v16f *m = blocks(n);
  if (!m) return all;
  uint32_t bad = eigh_run(m, m + n * n, a, cnt, n, lower, v, w);
  free(m);
  return bad;
}

uint32_t jacobi_svd_f32(const float *a, int cnt, int n, bool uv, float *s, float *u, float *vt) {
  uint32_t all = (1u << cnt) - 1;
  if (cnt < 1 || cnt > W || n < 1 || n > JACOBI_MAX_N || !jacobi_available()) return all;
  v16f *m = blocks(n);
  if (!m) return all;
  uint32_t bad = svd_run(m, m + n * n, a, cnt, n, uv, s, u, vt);
  free(m);
  return bad;
}

#else

bool jacobi_available(void) { return false; }
bool jacobi_set_enabled(bool on) {
  (void)on;
  return false;
}
uint32_t jacobi_eigh_f32(const float *a, int cnt, int n, bool lower, float *v, float *w) {
  (void)a, (void)n, (void)lower, (void)v, (void)w;
  return cnt >= 32 ? ~0u : (1u << cnt) - 1;
}
uint32_t jacobi_svd_f32(const float *a, int cnt, int n, bool uv, float *s, float *u, float *vt) {
  (void)a, (void)n, (void)uv, (void)s, (void)u, (void)vt;
  return cnt >= 32 ? ~0u : (1u << cnt) - 1;
}

#endif
