/* test_smallqr.c -- the batched Householder QR (and LU) of small float32 matrices
 * (backend/smallqr.c, which lapack.c runs for float32 n, m <= 32) against the LAPACK path
 * (gelqf + orglq, the same public call with the kernels switched off) on random and edge
 * inputs: every shape from 1 x 1 to 33 x 33 in steps that cross 16, tall and wide,
 * reduced and complete, batches that are not multiples of 16, zero columns (tau = 0),
 * the zero matrix, rank-deficient matrices, scales of 1e+-30, NaN and inf entries
 * (LAPACK's results, bit for bit). q and r equal LAPACK's (the same sign conventions)
 * for full-rank input; Q R = A, Q^T Q = I and R upper triangular always; a matrix's
 * results do not depend on the batch around it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu.h"
#include "backend/jacobi.h"
#include "backend/smallqr.h"
#include "test.h"

static uint64_t rng_state = 0x3c6ef372fe94f82bull;
static double rnd_val(void) { /* splitmix64 -> [-1, 1) */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53 * 2.0 - 1.0;
}

typedef enum Kind { K_RANDOM, K_ZERO_COL, K_ZERO, K_RANK1, K_HUGE, K_TINY, K_NONFINITE, K_COUNT } Kind;

static void fill(float *a, int64_t n, int64_t m, Kind k) {
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++) {
      double v = rnd_val();
      if (k == K_ZERO || (k == K_ZERO_COL && (j == 0 || j == m / 2))) v = 0;
      if (k == K_RANK1) v = sin(i + 1.0) * cos(2.0 * j + 0.5);
      if (k == K_HUGE) v *= 1e30;
      if (k == K_TINY) v *= 1e-30;
      a[i * m + j] = (float)v;
    }
  if (k == K_NONFINITE) a[(n / 2) * m + m / 3] = (n + m) % 2 ? NAN : -INFINITY;
}

static float *host(jx_array *x, int64_t count) {
  float *p = malloc((size_t)(count ? count : 1) * sizeof *p);
  CHECK(x && jx_read(x, p, (size_t)count * sizeof *p) == JX_OK);
  return p;
}

static bool same_bits(const float *a, const float *b, int64_t count) {
  for (int64_t i = 0; i < count; i++)
    if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i])))) return false;
  return true;
}

static void check(int B, int64_t n, int64_t m, bool full, Kind k) {
  int64_t nm = n * m, kq = full ? n : n < m ? n : m;
  int64_t shape[3] = {B, n, m};
  float *a = malloc(sizeof(float) * (size_t)(B * nm));
  for (int b = 0; b < B; b++) fill(a + b * nm, n, m, b % 3 == 1 && k == K_NONFINITE ? K_RANDOM : k);
  jx_array *x = jx_array_from(a, JX_FLOAT32, 3, shape), *res[2][2];
  for (int on = 0; on < 2; on++) {
    jacobi_set_enabled(on);
    CHECK(jx_linalg_qr(x, full ? "complete" : "reduced", res[on]) == JX_OK);
  }
  jacobi_set_enabled(true);
  float *q = host(res[1][0], B * n * kq), *r = host(res[1][1], B * kq * m);
  float *ql = host(res[0][0], B * n * kq), *rl = host(res[0][1], B * kq * m);
  for (int b = 0; b < B; b++) {
    const float *ab = a + b * nm, *qb = q + b * n * kq, *rb = r + b * kq * m;
    bool finite = true;
    for (int64_t i = 0; i < nm; i++) finite = finite && isfinite(ab[i]);
    if (!finite) {
      CHECK_MSG(same_bits(qb, ql + b * n * kq, n * kq) && same_bits(rb, rl + b * kq * m, kq * m),
                "qr %lldx%lld kind %d entry %d: not LAPACK's", (long long)n, (long long)m, k, b);
      continue;
    }
    double norm = 0;
    for (int64_t i = 0; i < nm; i++) norm = fmax(norm, fabs(ab[i]));
    double tol = 4e-6 * (double)(n + m), re = 0, oe = 0, lo = 0, dq = 0, dr = 0;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < m; j++) {
        double acc = 0;
        for (int64_t t = 0; t < kq; t++) acc += (double)qb[i * kq + t] * rb[t * m + j];
        re = fmax(re, fabs(acc - ab[i * m + j]));
      }
    for (int64_t i = 0; i < kq; i++)
      for (int64_t j = 0; j < kq; j++) {
        double acc = 0;
        for (int64_t t = 0; t < n; t++) acc += (double)qb[t * kq + i] * qb[t * kq + j];
        oe = fmax(oe, fabs(acc - (i == j)));
      }
    for (int64_t i = 0; i < kq; i++)
      for (int64_t j = 0; j < m && j < i; j++) lo = fmax(lo, fabs(rb[i * m + j]));
    CHECK_MSG(re <= tol * (norm > 0 ? norm : 1) && oe <= tol && lo == 0,
              "qr %lldx%lld full %d kind %d entry %d: |QR - A| %g (|A| %g), |Q'Q - I| %g, below R's diagonal %g",
              (long long)n, (long long)m, full, k, b, re, norm, oe, lo);
    if (k == K_RANK1 || k == K_ZERO) continue; /* later reflectors are rounding noise in both */
    /* full rank: LAPACK's q and r (q's columns past min(n, m), complete q's, are the same
     * reflectors applied to the identity in both) */
    for (int64_t i = 0; i < n * kq; i++) dq = fmax(dq, fabs(qb[i] - ql[b * n * kq + i]));
    for (int64_t i = 0; i < kq * m; i++) dr = fmax(dr, fabs(rb[i] - rl[b * kq * m + i]));
    CHECK_MSG(dq <= 50 * tol && dr <= 50 * tol * (norm > 0 ? norm : 1),
              "qr %lldx%lld full %d kind %d entry %d vs LAPACK: |q - q'| %g, |r - r'| %g", (long long)n, (long long)m,
              full, k, b, dq, dr);
  }
  for (int b = 0; b < B; b += 7) { /* each entry alone: the batch's results */
    jx_array *xb = jx_array_from(a + b * nm, JX_FLOAT32, 2, shape + 1), *rb[2];
    CHECK(jx_linalg_qr(xb, full ? "complete" : "reduced", rb) == JX_OK);
    float *q1 = host(rb[0], n * kq), *r1 = host(rb[1], kq * m);
    CHECK_MSG(same_bits(q1, q + b * n * kq, n * kq) && same_bits(r1, r + b * kq * m, kq * m),
              "qr %lldx%lld kind %d entry %d alone differs", (long long)n, (long long)m, k, b);
    free(q1), free(r1);
    jx_free(xb), jx_free(rb[0]), jx_free(rb[1]);
  }
  free(a), free(q), free(r), free(ql), free(rl);
  jx_free(x);
  for (int i = 0; i < 4; i++) jx_free(res[i / 2][i % 2]);
}

static void test_shapes(void) {
  static const int64_t dims[] = {1, 2, 3, 7, 15, 16, 17, 24, 32, 33};
  int nd = (int)(sizeof dims / sizeof dims[0]), unit = 0;
  for (int i = 0; i < nd; i++)
    for (int j = 0; j < nd; j += 2)
      for (int k = 0; k < K_COUNT; k++, unit++) {
        if ((i + j + k) % 3 != 0 || !test_shard_mine()) continue;
        check(unit % 2 ? 37 : 5, dims[i], dims[(j + i % 2) % nd], unit % 4 < 2, (Kind)k);
      }
}

/* lu of B matrices of kind k (n x m) with the kernels on and off: P A = L U with |l| <= 1,
 * and LAPACK's factors and pivots for full-rank input (distinct magnitudes: no ties);
 * non-finite entries LAPACK's bit for bit; each entry alone as in the batch. */
static void check_lu(int B, int64_t n, int64_t m, Kind k) {
  int64_t nm = n * m, kk = n < m ? n : m, shape[3] = {B, n, m};
  float *a = malloc(sizeof(float) * (size_t)(B * nm));
  for (int b = 0; b < B; b++) fill(a + b * nm, n, m, b % 3 == 1 && k == K_NONFINITE ? K_RANDOM : k);
  jx_array *x = jx_array_from(a, JX_FLOAT32, 3, shape), *res[2][3];
  for (int on = 0; on < 2; on++) {
    jacobi_set_enabled(on);
    CHECK(jx_lax_linalg_lu(x, res[on]) == JX_OK);
  }
  jacobi_set_enabled(true);
  float *lu = host(res[1][0], B * nm), *lul = host(res[0][0], B * nm);
  int32_t *pv = malloc(sizeof(int32_t) * (size_t)(B * (kk + n) + 1)), *pvl = malloc(sizeof(int32_t) * (size_t)(B * (kk + n) + 1));
  CHECK(jx_read(res[1][1], pv, sizeof(int32_t) * (size_t)(B * kk)) == JX_OK);
  CHECK(jx_read(res[0][1], pvl, sizeof(int32_t) * (size_t)(B * kk)) == JX_OK);
  int32_t *perm = pv + B * kk, *perml = pvl + B * kk;
  CHECK(jx_read(res[1][2], perm, sizeof(int32_t) * (size_t)(B * n)) == JX_OK);
  CHECK(jx_read(res[0][2], perml, sizeof(int32_t) * (size_t)(B * n)) == JX_OK);
  for (int b = 0; b < B; b++) {
    const float *ab = a + b * nm, *f = lu + b * nm;
    bool finite = true;
    for (int64_t i = 0; i < nm; i++) finite = finite && isfinite(ab[i]);
    if (!finite) {
      CHECK_MSG(same_bits(f, lul + b * nm, nm) && !memcmp(pv + b * kk, pvl + b * kk, sizeof(int32_t) * (size_t)kk),
                "lu %lldx%lld kind %d entry %d: not LAPACK's", (long long)n, (long long)m, k, b);
      continue;
    }
    double norm = 0, re = 0, lmax = 0;
    for (int64_t i = 0; i < nm; i++) norm = fmax(norm, fabs(ab[i]));
    for (int64_t i = 0; i < n; i++) /* (L U)[i, j] = A[perm[i], j] */
      for (int64_t j = 0; j < m; j++) {
        double acc = 0;
        for (int64_t t = 0; t < kk && t <= i && t <= j; t++)
          acc += (t == i ? 1.0 : (double)f[i * m + t]) * f[t * m + j];
        re = fmax(re, fabs(acc - ab[perm[b * n + i] * m + j]));
        if (j < i && j < kk) lmax = fmax(lmax, fabs(f[i * m + j]));
      }
    double tol = 4e-6 * (double)(n + m) * (norm > 0 ? norm : 1);
    CHECK_MSG(re <= tol && lmax <= 1, "lu %lldx%lld kind %d entry %d: |PA - LU| %g (tol %g), max |l| %g", (long long)n,
              (long long)m, k, b, re, tol, lmax);
    if (k != K_RANDOM && k != K_HUGE && k != K_TINY) continue;
    double d = 0; /* l's multipliers are scale-free, u scales with a */
    for (int64_t i = 0; i < nm; i++)
      d = fmax(d, fabs(f[i] - lul[b * nm + i]) / (i % m < i / m && i % m < kk ? 1 : norm > 0 ? norm : 1));
    CHECK_MSG(!memcmp(pv + b * kk, pvl + b * kk, sizeof(int32_t) * (size_t)kk) && d <= 50 * tol / (norm > 0 ? norm : 1),
              "lu %lldx%lld kind %d entry %d vs LAPACK: pivots %s, |lu - lu'| %g", (long long)n, (long long)m, k, b,
              memcmp(pv + b * kk, pvl + b * kk, sizeof(int32_t) * (size_t)kk) ? "differ" : "equal", d);
  }
  for (int b = 0; b < B; b += 7) {
    jx_array *xb = jx_array_from(a + b * nm, JX_FLOAT32, 2, shape + 1), *rb[3];
    CHECK(jx_lax_linalg_lu(xb, rb) == JX_OK);
    float *f1 = host(rb[0], nm);
    int32_t p1[SMALLQR_MAX + 1];
    CHECK(jx_read(rb[1], p1, sizeof(int32_t) * (size_t)kk) == JX_OK);
    CHECK_MSG(same_bits(f1, lu + b * nm, nm) && !memcmp(p1, pv + b * kk, sizeof(int32_t) * (size_t)kk),
              "lu %lldx%lld kind %d entry %d alone differs", (long long)n, (long long)m, k, b);
    free(f1);
    jx_free(xb);
    for (int i = 0; i < 3; i++) jx_free(rb[i]);
  }
  free(a), free(lu), free(lul), free(pv), free(pvl);
  jx_free(x);
  for (int i = 0; i < 6; i++) jx_free(res[i / 3][i % 3]);
}

static void test_lu_shapes(void) {
  static const int64_t dims[] = {1, 2, 3, 7, 15, 16, 17, 24, 32, 33};
  int nd = (int)(sizeof dims / sizeof dims[0]), unit = 0;
  for (int i = 0; i < nd; i++)
    for (int j = 0; j < nd; j += 2)
      for (int k = 0; k < K_COUNT; k++, unit++) {
        if ((i + j + k) % 3 != 1 || !test_shard_mine()) continue;
        check_lu(unit % 2 ? 37 : 5, dims[i], dims[(j + i % 2) % nd], (Kind)k);
      }
}

/* The kernel itself: the mask of entries left to LAPACK, nothing written past cnt. */
static void test_kernel_mask(void) {
  if (!jacobi_available()) return;
  enum { N = 5, M = 3, C = 4 };
  float a[C * N * M], q[(C + 1) * N * N], r[(C + 1) * N * M];
  for (int i = 0; i < C * N * M; i++) a[i] = (float)rnd_val();
  a[2 * N * M + 7] = NAN;
  for (int i = 0; i < (C + 1) * N * M; i++) r[i] = -7;
  CHECK_EQ_INT(smallqr_f32(a, C, N, M, true, q, r), 1u << 2);
  CHECK(r[C * N * M] == -7);
  CHECK_EQ_INT(smallqr_f32(a, 1, SMALLQR_MAX + 1, 2, false, q, r), 1u);
}

int main(void) {
  TEST_RUN(test_kernel_mask);
  const char *dev = getenv("JAXC_DEVICE");
  if (dev && !strcmp(dev, "cuda")) return test_finish(); /* cuSOLVER's qr there */
  pool_configure(3);
  TEST_RUN_SPLIT(test_shapes);
  TEST_RUN_SPLIT(test_lu_shapes);
  return test_finish();
}
