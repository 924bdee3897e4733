/* gemm.c -- jaxc's own GEMM (float32, float64): the classic Goto/BLIS structure, written
 * from the published description (no vendored code). For each KC-deep, NC-wide panel of
 * op(b) (packed into NR-wide slivers, zero-padded) and each MC-tall block of op(a)
 * (packed into MR-tall slivers), an MR x NR micro-kernel keeps its tile of c in vector
 * registers (GCC vector extensions: 2 x 8 floats or 2 x 4 doubles per row, 12
 * accumulators) and adds one rank-1 update per k with fused multiply-adds, each element
 * of a broadcast straight from memory (scalar * vector: one load; the earlier
 * `(V){0} + a[r]` cost a scalar add and a register broadcast on the FP ports per row and
 * k, ~8% of the GELU MLP step; the sums are the same, bit for bit, as the accumulators
 * start at +0). Transposed
 * operands only change the packing. The micro-kernel is compiled three times: for
 * AVX-512 (2 x 16 floats / 2 x 8 doubles per row, so NR doubles), for AVX2+FMA and for
 * the baseline ISA; the widest the CPU has is picked at run time (gemm_avx512). */
#include "backend/gemm.h"

#include <stdlib.h>
#include <string.h>

#define MR 6
#ifndef KC
#define KC 256
#endif
#ifndef MC
#define MC 96 /* a multiple of MR: the packed block of a (96 x 256) stays in L2 */
#endif
/* The packed panel of b (256 x 1024 floats) fits the 1 MB L2: NC = 2048 ran 10-20% slower
 * at 256 x 4096 x 1024 and its transposed-b product (one thread, AVX-512 tiles). */
#ifndef NC
#define NC 1024
#endif

typedef float v8f __attribute__((vector_size(32)));
typedef double v4d __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));
typedef double v8d __attribute__((vector_size(64)));

#define ATTR_NONE
#if defined(__x86_64__) || defined(__i386__)
#define ATTR_AVX2 __attribute__((target("avx2,fma")))
#define ATTR_AVX512 __attribute__((target("avx512f,fma")))
#define HAVE_DISPATCH 1
#include <immintrin.h>
#endif

/* c[0..mr) x [0..nr) (leading dimension ldc) = (or +=, with acc) the product of the packed
 * sliver a (kc x MR, k-major) and the packed sliver b (kc x NR, k-major). */
#define MICRO_KERNEL(NAME, T, V, ATTR)                                                       \
  ATTR static void NAME(int64_t kc, const T *restrict a, const T *restrict b, T *restrict c, \
                        int64_t ldc, int mr, int nr, bool acc) {                            \
    enum { W = sizeof(V) / sizeof(T), NR = 2 * W };                                          \
    V c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0};                      \
    V c30 = {0}, c31 = {0}, c40 = {0}, c41 = {0}, c50 = {0}, c51 = {0};                      \
    const T *pa = a; /* read by broadcasts: no alignment needed */                           \
    const T *pb = __builtin_assume_aligned(b, sizeof(V));                                    \
    for (int64_t k = 0; k < kc; k++, pa += MR, pb += NR) {                                   \
      V b0 = *(const V *)pb, b1 = *(const V *)(pb + W);                                      \
      c00 += pa[0] * b0, c01 += pa[0] * b1;                                                  \
      c10 += pa[1] * b0, c11 += pa[1] * b1;                                                  \
      c20 += pa[2] * b0, c21 += pa[2] * b1;                                                  \
      c30 += pa[3] * b0, c31 += pa[3] * b1;                                                  \
      c40 += pa[4] * b0, c41 += pa[4] * b1;                                                  \
      c50 += pa[5] * b0, c51 += pa[5] * b1;                                                  \
    }                                                                                        \
    V tile[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}}; \
    if (mr == MR && nr == NR) {                                                              \
      for (int r = 0; r < MR; r++)                                                           \
        for (int h = 0; h < 2; h++) {                                                        \
          V v = tile[r][h], old;                                                             \
          if (acc) memcpy(&old, c + r * ldc + h * W, sizeof old), v += old;                  \
          memcpy(c + r * ldc + h * W, &v, sizeof v);                                         \
        }                                                                                    \
      return;                                                                                \
    }                                                                                        \
    T flat[MR][NR];                                                                          \
    memcpy(flat, tile, sizeof flat);                                                         \
    for (int r = 0; r < mr; r++)                                                             \
      for (int j = 0; j < nr; j++) c[r * ldc + j] = acc ? c[r * ldc + j] + flat[r][j] : flat[r][j]; \
  }

/* One 16-deep block of a transposed b's NR-wide sliver: dst[kk * NR + q] = src[q * ldb + kk]
 * for kk < 16, q < NR (b stored (N, K): row q of the sliver, 16 consecutive k). */
#define TBLOCK(NAME, T, V, ATTR)                                                             \
  ATTR static inline void NAME(T *restrict dst, const T *restrict src, int64_t ldb) {        \
    enum { NR = 2 * (sizeof(V) / sizeof(T)) };                                               \
    for (int q = 0; q < NR; q++, src += ldb)                                                 \
      for (int kk = 0; kk < 16; kk++) dst[kk * NR + q] = src[kk];                            \
  }

/* The vectorized part of packing a full MR-row sliver of a stored (M, K): none (the k
 * it covered: 0); the float32 AVX-512 one is rows6_f32_avx512. */
#define ROWS6_NONE(ap, a, lda, kc, sign) 0

/* Packing: ap gets rows [i, i+mc) x k [p, p+kc) of op(a) as MR-tall slivers (rows past mc
 * are zeros); bp gets k [p, p+kc) x columns [j, j+nc) of op(b) as NR-wide slivers. Each
 * loop reads its source along memory (a row of a stored (M, K) is read whole into one
 * sliver's column; b stored (K, N) is read row by row and scattered over the slivers;
 * b stored (N, K) is transposed in 16-deep blocks): measured, the sliver-by-sliver order
 * spent a third of a 256 x 4096 x 1024 product in packing. */
#define PACKERS(SUF, T, V, ATTR, TBLK, ROWS6)                                                    \
  ATTR static void pack_a_##SUF(T *restrict ap, const T *restrict a, int64_t lda, bool ta, int64_t i, \
                           int64_t mc, int64_t p, int64_t kc, T sign) {                      \
    for (int64_t ir = 0; ir < mc; ir += MR, ap += MR * kc) {                                 \
      int64_t rows = mc - ir < MR ? mc - ir : MR;                                            \
      if (ta) {                                                                              \
        for (int64_t k = 0; k < kc; k++) {                                                   \
          const T *src = a + (p + k) * lda + i + ir;                                         \
          int r = 0;                                                                         \
          for (; r < rows; r++) ap[k * MR + r] = sign * src[r];                                     \
          for (; r < MR; r++) ap[k * MR + r] = 0;                                            \
        }                                                                                    \
      } else {                                                                               \
        int64_t k0 = rows == MR ? ROWS6(ap, a + (i + ir) * lda + p, lda, kc, sign) : 0;        \
        for (int r = 0; r < MR; r++) {                                                       \
          const T *src = a + (i + ir + r) * lda + p;                                         \
          if (r < rows)                                                                      \
            for (int64_t k = k0; k < kc; k++) ap[k * MR + r] = sign * src[k];                \
          else                                                                               \
            for (int64_t k = k0; k < kc; k++) ap[k * MR + r] = 0;                            \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }                                                                                          \
  ATTR static void pack_b_##SUF(T *restrict bp, const T *restrict b, int64_t ldb, bool tb, int64_t p, \
                           int64_t kc, int64_t j, int64_t nc) {                              \
    enum { NR = 2 * (sizeof(V) / sizeof(T)) };                                               \
    int64_t full = nc / NR * NR;                                                             \
    if (!tb) {                                                                               \
      for (int64_t k = 0; k < kc; k++) {                                                     \
        const T *src = b + (p + k) * ldb + j;                                                \
        for (int64_t jr = 0; jr < full; jr += NR)                                            \
          memcpy(bp + jr * kc + k * NR, src + jr, NR * sizeof(T));                           \
      }                                                                                      \
    } else {                                                                                 \
      for (int64_t jr = 0; jr < full; jr += NR) {                                            \
        T *dst = bp + jr * kc;                                                               \
        int64_t k0 = 0;                                                                      \
        for (; k0 + 16 <= kc; k0 += 16) TBLK(dst + k0 * NR, b + (j + jr) * ldb + p + k0, ldb); \
        for (int q = 0; q < NR; q++) {                                                       \
          const T *src = b + (j + jr + q) * ldb + p;                                         \
          for (int64_t k = k0; k < kc; k++) dst[k * NR + q] = src[k];                        \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
    if (full < nc) { /* the last, partial sliver, zero-padded */                            \
      T *dst = bp + full * kc;                                                               \
      int64_t cols = nc - full;                                                              \
      for (int64_t k = 0; k < kc; k++) {                                                     \
        int q = 0;                                                                           \
        for (; q < cols; q++)                                                                \
          dst[k * NR + q] = tb ? b[(j + full + q) * ldb + p + k] : b[(p + k) * ldb + j + full + q]; \
        for (; q < NR; q++) dst[k * NR + q] = 0;                                             \
      }                                                                                      \
    }                                                                                        \
  }

/* Rows [i0, i1) x columns [j0, j1) of c (leading dimension ldc) = op(a) @ op(b), or -=
 * with sub (a packed negated, every panel accumulated: the same products, so the same
 * sums as c - op(a) @ op(b) computed apart, in the order of the k panels). */
#define DRIVER(SUF, T, V, MICRO, PK)                                                           \
  static bool drive_##SUF(const T *a, int64_t lda, const T *b, int64_t ldb, T *c, int64_t ldc, \
                          int64_t K, bool ta, bool tb, int64_t i0, int64_t i1, int64_t j0,    \
                          int64_t j1, bool sub) {                                             \
    enum { NR = 2 * (sizeof(V) / sizeof(T)) };                                               \
    if (i1 <= i0 || j1 <= j0) return true;                                                    \
    if (K == 0) {                                                                             \
      for (int64_t i = i0; !sub && i < i1; i++) memset(c + i * ldc + j0, 0, (size_t)(j1 - j0) * sizeof(T)); \
      return true;                                                                            \
    }                                                                                        \
    int64_t kcap = K < KC ? K : KC, ncap = j1 - j0 < NC ? j1 - j0 : NC;                       \
    int64_t mcap = i1 - i0 < MC ? i1 - i0 : MC;                                               \
    size_t bn = (size_t)(kcap * ((ncap + NR - 1) / NR * NR)) * sizeof(T);                     \
    size_t an = (size_t)(kcap * ((mcap + MR - 1) / MR * MR)) * sizeof(T);                     \
    T *bp = aligned_alloc(64, (bn + 63) / 64 * 64), *ap = aligned_alloc(64, (an + 63) / 64 * 64); \
    if (!bp || !ap) {                                                                         \
      free(bp), free(ap);                                                                     \
      return false;                                                                           \
    }                                                                                        \
    for (int64_t jc = j0; jc < j1; jc += NC) {                                                \
      int64_t nc = j1 - jc < NC ? j1 - jc : NC;                                               \
      for (int64_t pc = 0; pc < K; pc += KC) {                                                \
        int64_t kc = K - pc < KC ? K - pc : KC;                                               \
        pack_b_##PK(bp, b, ldb, tb, pc, kc, jc, nc);                                         \
        for (int64_t ic = i0; ic < i1; ic += MC) {                                            \
          int64_t mc = i1 - ic < MC ? i1 - ic : MC;                                           \
          pack_a_##PK(ap, a, lda, ta, ic, mc, pc, kc, sub ? -1 : 1);                         \
          for (int64_t jr = 0; jr < nc; jr += NR)                                             \
            for (int64_t ir = 0; ir < mc; ir += MR)                                           \
              MICRO(kc, ap + ir * kc, bp + jr * kc, c + (ic + ir) * ldc + jc + jr, ldc,       \
                    (int)(mc - ir < MR ? mc - ir : MR), (int)(nc - jr < NR ? nc - jr : NR),   \
                    sub || pc > 0);                                                           \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
    free(bp), free(ap);                                                                       \
    return true;                                                                              \
  }

/* The same tile with both operands read in place, for small products whose operands stay
 * in cache (packing cost as much as the product there): row r of a's sliver at ar[r]
 * (element k at ar[r][k * aks]), row k of b's sliver at b + k * ldb, NR wide. */
#define MICRO_DIRECT(NAME, T, V, ATTR)                                                        \
  ATTR static void NAME(int64_t kc, const T *const *ar, int64_t aks, const T *b, int64_t ldb, \
                        T *restrict c, int64_t ldc, int mr, int nr) {                         \
    enum { W = sizeof(V) / sizeof(T), NR = 2 * W };                                          \
    V c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0};                      \
    V c30 = {0}, c31 = {0}, c40 = {0}, c41 = {0}, c50 = {0}, c51 = {0};                      \
    const T *a0 = ar[0], *a1 = ar[1], *a2 = ar[2], *a3 = ar[3], *a4 = ar[4], *a5 = ar[5];    \
    for (int64_t k = 0, o = 0; k < kc; k++, o += aks, b += ldb) {                            \
      V b0, b1;                                                                              \
      memcpy(&b0, b, sizeof b0), memcpy(&b1, b + W, sizeof b1);                              \
      c00 += a0[o] * b0, c01 += a0[o] * b1;                                                  \
      c10 += a1[o] * b0, c11 += a1[o] * b1;                                                  \
      c20 += a2[o] * b0, c21 += a2[o] * b1;                                                  \
      c30 += a3[o] * b0, c31 += a3[o] * b1;                                                  \
      c40 += a4[o] * b0, c41 += a4[o] * b1;                                                  \
      c50 += a5[o] * b0, c51 += a5[o] * b1;                                                  \
    }                                                                                        \
    V tile[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}}; \
    if (mr == MR && nr == NR) {                                                              \
      for (int r = 0; r < MR; r++)                                                           \
        for (int h = 0; h < 2; h++) memcpy(c + r * ldc + h * W, &tile[r][h], sizeof(V));     \
      return;                                                                                \
    }                                                                                        \
    T flat[MR][NR];                                                                          \
    memcpy(flat, tile, sizeof flat);                                                         \
    for (int r = 0; r < mr; r++)                                                             \
      for (int j = 0; j < nr; j++) c[r * ldc + j] = flat[r][j];                              \
  }

/* A product with K <= KC and b not transposed (gemm_direct), operands in place: the same
 * sums in the same order as the packed driver (one k panel), so the two agree bit for
 * bit. A last sliver of b narrower than NR is copied (zero-padded) so that no read passes
 * b's end; rows of a past i1 repeat row i1 - 1 (computed, not stored). */
#define DRIVER_DIRECT(SUF, T, V, MICRO)                                                        \
  static bool direct_##SUF(const T *a, const T *b, T *c, int64_t M, int64_t N, int64_t K,     \
                           bool ta, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {         \
    enum { NR = 2 * (sizeof(V) / sizeof(T)) };                                               \
    int64_t lda = ta ? M : K, aks = ta ? lda : 1, ars = ta ? 1 : lda;                         \
    T *edge = NULL;                                                                           \
    if ((j1 - j0) % NR) {                                                                     \
      int64_t cols = (j1 - j0) % NR, j = j1 - cols;                                           \
      if (!(edge = malloc((size_t)(K * NR) * sizeof(T)))) return false;                       \
      for (int64_t k = 0; k < K; k++) {                                                       \
        memcpy(edge + k * NR, b + k * N + j, (size_t)cols * sizeof(T));                       \
        memset(edge + k * NR + cols, 0, (size_t)(NR - cols) * sizeof(T));                     \
      }                                                                                      \
    }                                                                                        \
    for (int64_t ir = i0; ir < i1; ir += MR) {                                                \
      const T *ar[MR];                                                                        \
      for (int r = 0; r < MR; r++) ar[r] = a + (ir + r < i1 ? ir + r : i1 - 1) * ars;         \
      int mr = (int)(i1 - ir < MR ? i1 - ir : MR);                                            \
      for (int64_t jr = j0; jr < j1; jr += NR) {                                              \
        int nr = (int)(j1 - jr < NR ? j1 - jr : NR);                                          \
        if (nr == NR) MICRO(K, ar, aks, b + jr, N, c + ir * N + jr, N, mr, nr);               \
        else MICRO(K, ar, aks, edge, NR, c + ir * N + jr, N, mr, nr);                         \
      }                                                                                      \
    }                                                                                        \
    free(edge);                                                                               \
    return true;                                                                              \
  }

static int isa_cap = 2; /* gemm_set_isa_cap: the widest kernels allowed (tests) */
int gemm_set_isa_cap(int cap) { return __atomic_exchange_n(&isa_cap, cap, __ATOMIC_RELAXED); }

#ifdef HAVE_DISPATCH
/* 2: AVX-512F, 1: AVX2+FMA, 0: neither (the CPU's, read once; then capped). */
static int cpu_level(void) {
  static int level = -1;
  int l = __atomic_load_n(&level, __ATOMIC_RELAXED);
  if (l < 0) {
    __builtin_cpu_init();
    l = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (l && __builtin_cpu_supports("avx512f")) l = 2;
    __atomic_store_n(&level, l, __ATOMIC_RELAXED);
  }
  int cap = __atomic_load_n(&isa_cap, __ATOMIC_RELAXED);
  return l < cap ? l : cap;
}
bool gemm_avx512(void) { return cpu_level() == 2; }
/* The float32 AVX-512 block (NR = 32): two 16 x 16 transposes in registers (pairs of
 * rows interleaved, then pairs of pairs, then 128-bit lanes), 16-float loads and aligned
 * stores; the scalar loop spent a third of the product's packing time on dh = d @ w2^T. */
ATTR_AVX512 static inline void tblock_f32_avx512(float *restrict dst, const float *restrict src, int64_t ldb) {
  for (int half = 0; half < 2; half++, src += 16 * ldb, dst += 16) {
    __m512 r[16], t[16];
#pragma GCC unroll 16
    for (int q = 0; q < 16; q++) r[q] = _mm512_loadu_ps(src + q * ldb);
#pragma GCC unroll 8
    for (int q = 0; q < 16; q += 2)
      t[q] = _mm512_unpacklo_ps(r[q], r[q + 1]), t[q + 1] = _mm512_unpackhi_ps(r[q], r[q + 1]);
#pragma GCC unroll 4
    for (int g = 0; g < 16; g += 4) { /* r[g + i]: rows g..g+3, element 4 * lane + i */
      __m512d t0 = _mm512_castps_pd(t[g]), t1 = _mm512_castps_pd(t[g + 1]);
      __m512d t2 = _mm512_castps_pd(t[g + 2]), t3 = _mm512_castps_pd(t[g + 3]);
      r[g] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2)), r[g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
      r[g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3)), r[g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
      __m512 u = _mm512_shuffle_f32x4(r[i], r[4 + i], 0x88), v = _mm512_shuffle_f32x4(r[i], r[4 + i], 0xdd);
      __m512 u2 = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0x88), v2 = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0xdd);
      _mm512_store_ps(dst + i * 32, _mm512_shuffle_f32x4(u, u2, 0x88));
      _mm512_store_ps(dst + (4 + i) * 32, _mm512_shuffle_f32x4(v, v2, 0x88));
      _mm512_store_ps(dst + (8 + i) * 32, _mm512_shuffle_f32x4(u, u2, 0xdd));
      _mm512_store_ps(dst + (12 + i) * 32, _mm512_shuffle_f32x4(v, v2, 0xdd));
    }
  }
}
/* ap[k * 6 + r] = sign * a[r * lda + k] for r < 6 and k in 16-deep blocks (the rest is
 * left to the scalar loop: returns the k covered): rows paired in k order (r0 r1 r0 r1
 * ..., as 64-bit pairs), then the three pair streams interleaved per 8 pairs (a
 * two-source permute and a masked one-source permute per output vector). */
ATTR_AVX512 static int64_t rows6_f32_avx512(float *restrict ap, const float *restrict a, int64_t lda, int64_t kc,
                                            float sign) {
  const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  long long ia[6][8], ic[6][8];
  __mmask8 m[6] = {0};
  for (int j = 0; j < 6; j++)
    for (int q = 0; q < 8; q++) { /* output pair 8j+q: k = (8j+q)/3 (in its half), stream (8j+q)%3 */
      int g = 8 * j + q, kk = g / 3 - 8 * (j / 3), st = g % 3;
      ia[j][q] = st == 1 ? 8 + kk : kk, ic[j][q] = kk;
      if (st == 2) m[j] |= (__mmask8)(1u << q);
    }
  __m512 sg = _mm512_set1_ps(sign);
  int64_t k = 0;
  for (; k + 16 <= kc; k += 16) {
    __m512d pr[3][2];
    for (int st = 0; st < 3; st++) {
      __m512 e = _mm512_loadu_ps(a + 2 * st * lda + k), o = _mm512_loadu_ps(a + (2 * st + 1) * lda + k);
      pr[st][0] = _mm512_castps_pd(_mm512_permutex2var_ps(e, lo, o));
      pr[st][1] = _mm512_castps_pd(_mm512_permutex2var_ps(e, hi, o));
    }
#pragma GCC unroll 6
    for (int j = 0; j < 6; j++) {
      int h = j / 3;
      __m512d v = _mm512_permutex2var_pd(pr[0][h], _mm512_loadu_si512(ia[j]), pr[1][h]);
      v = _mm512_mask_permutexvar_pd(v, m[j], _mm512_loadu_si512(ic[j]), pr[2][h]);
      _mm512_storeu_ps(ap + k * 6 + 16 * j, _mm512_mul_ps(sg, _mm512_castpd_ps(v)));
    }
  }
  return k;
}
TBLOCK(tblock_f64w, double, v8d, ATTR_AVX512)
MICRO_KERNEL(micro_f32_avx512, float, v16f, ATTR_AVX512)
MICRO_KERNEL(micro_f64_avx512, double, v8d, ATTR_AVX512)
MICRO_KERNEL(micro_f32_avx2, float, v8f, ATTR_AVX2)
MICRO_KERNEL(micro_f64_avx2, double, v4d, ATTR_AVX2)
MICRO_DIRECT(microd_f32_avx512, float, v16f, ATTR_AVX512)
MICRO_DIRECT(microd_f64_avx512, double, v8d, ATTR_AVX512)
MICRO_DIRECT(microd_f32_avx2, float, v8f, ATTR_AVX2)
MICRO_DIRECT(microd_f64_avx2, double, v4d, ATTR_AVX2)
PACKERS(f32w, float, v16f, ATTR_AVX512, tblock_f32_avx512, rows6_f32_avx512)
PACKERS(f64w, double, v8d, ATTR_AVX512, tblock_f64w, ROWS6_NONE)
#else
bool gemm_avx512(void) { return false; }
#endif

TBLOCK(tblock_f32, float, v8f, ATTR_NONE)
TBLOCK(tblock_f64, double, v4d, ATTR_NONE)
MICRO_KERNEL(micro_f32, float, v8f, ATTR_NONE)
MICRO_KERNEL(micro_f64, double, v4d, ATTR_NONE)
PACKERS(f32, float, v8f, ATTR_NONE, tblock_f32, ROWS6_NONE)
PACKERS(f64, double, v4d, ATTR_NONE, tblock_f64, ROWS6_NONE)
MICRO_DIRECT(microd_f32, float, v8f, ATTR_NONE)
MICRO_DIRECT(microd_f64, double, v4d, ATTR_NONE)
DRIVER(f32, float, v8f, micro_f32, f32)
DRIVER(f64, double, v4d, micro_f64, f64)
DRIVER_DIRECT(f32, float, v8f, microd_f32)
DRIVER_DIRECT(f64, double, v4d, microd_f64)

#ifdef HAVE_DISPATCH
DRIVER(f32_avx2, float, v8f, micro_f32_avx2, f32)
DRIVER(f64_avx2, double, v4d, micro_f64_avx2, f64)
DRIVER(f32_avx512, float, v16f, micro_f32_avx512, f32w)
DRIVER(f64_avx512, double, v8d, micro_f64_avx512, f64w)
DRIVER_DIRECT(f32_avx2, float, v8f, microd_f32_avx2)
DRIVER_DIRECT(f64_avx2, double, v4d, microd_f64_avx2)
DRIVER_DIRECT(f32_avx512, float, v16f, microd_f32_avx512)
DRIVER_DIRECT(f64_avx512, double, v8d, microd_f64_avx512)
#endif

/* Products read in place rather than packed: one k panel, b not transposed, and b small
 * enough to stay in L2 (256 KiB) or few row slivers (M <= 32) to reuse it. Measured
 * (float32, AVX-512, one thread, load 17): 64^3 4.3-5.6 us vs 11-13 packed, 256^3 148
 * vs 369 us, 32 x 256 x 1024 (an LSTM step) 370-406 vs 438-499 us; a larger b with many
 * rows (1024 x 256 x 1024: 9.6 vs 5.0 ms) loses its L1 reuse (rows 4 KiB apart share a
 * set). Decided on the shapes only, never the block, so every thread's block sums alike. */
bool gemm_direct(int64_t M, int64_t N, int64_t K, bool tb, size_t itemsize) {
  return !tb && K > 0 && K <= KC && (M <= 32 || (double)K * (double)N * (double)itemsize <= (double)(256 << 10));
}

#define ENTRY(SUF, T)                                                                         \
  bool gemm_##SUF(const T *a, const T *b, T *c, int64_t M, int64_t N, int64_t K, bool ta,     \
                  bool tb, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {                  \
    bool direct = i1 > i0 && j1 > j0 && gemm_direct(M, N, K, tb, sizeof(T));                  \
    int64_t lda = ta ? M : K, ldb = tb ? K : N;                                               \
    DISPATCH(SUF);                                                                            \
    if (direct) return direct_##SUF(a, b, c, M, N, K, ta, i0, i1, j0, j1);                    \
    return drive_##SUF(a, lda, b, ldb, c, N, K, ta, tb, i0, i1, j0, j1, false);               \
  }                                                                                          \
  bool gemm_sub_##SUF(const T *a, int64_t lda, bool ta, const T *b, int64_t ldb, bool tb, T *c, \
                      int64_t ldc, int64_t M, int64_t N, int64_t K) {                         \
    SUB_DISPATCH(SUF);                                                                        \
    return drive_##SUF(a, lda, b, ldb, c, ldc, K, ta, tb, 0, M, 0, N, true);                  \
  }
#ifdef HAVE_DISPATCH
#define DISPATCH(SUF)                                                                         \
  switch (cpu_level()) {                                                                      \
  case 2:                                                                                     \
    if (direct) return direct_##SUF##_avx512(a, b, c, M, N, K, ta, i0, i1, j0, j1);          \
    return drive_##SUF##_avx512(a, lda, b, ldb, c, N, K, ta, tb, i0, i1, j0, j1, false);     \
  case 1:                                                                                     \
    if (direct) return direct_##SUF##_avx2(a, b, c, M, N, K, ta, i0, i1, j0, j1);            \
    return drive_##SUF##_avx2(a, lda, b, ldb, c, N, K, ta, tb, i0, i1, j0, j1, false);       \
  default: break;                                                                             \
  }
#define SUB_DISPATCH(SUF)                                                                     \
  switch (cpu_level()) {                                                                      \
  case 2: return drive_##SUF##_avx512(a, lda, b, ldb, c, ldc, K, ta, tb, 0, M, 0, N, true);   \
  case 1: return drive_##SUF##_avx2(a, lda, b, ldb, c, ldc, K, ta, tb, 0, M, 0, N, true);     \
  default: break;                                                                             \
  }
#else
#define DISPATCH(SUF) (void)0
#define SUB_DISPATCH(SUF) (void)0
#endif
ENTRY(f32, float)
ENTRY(f64, double)
