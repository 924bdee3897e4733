/* test_jacobi.c -- the batched Jacobi eigh and SVD of small float32 matrices
 * (backend/jacobi.c, which lapack.c runs for float32 n <= 32) against the LAPACK path
 * (ssyevd / sgesdd, the same public calls with the kernels switched off) on random and
 * edge inputs: every n from 1 to 33, batches that are not multiples of 16, repeated
 * eigenvalues, zero and identity matrices, unsorted diagonals, rank-deficient matrices,
 * scales of 1e+-30, garbage in the unread triangle, NaN and inf entries (which go to
 * LAPACK: bitwise its results). Eigenvalues and singular values match LAPACK's within
 * float32 bounds; eigenvectors and singular vectors (signs and bases of repeated
 * eigenvalues are arbitrary, in LAPACK too) satisfy A v = w v, a = u diag(s) vt and
 * orthonormality; a matrix's results do not depend on the batch around it. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu.h"
#include "backend/jacobi.h"
#include "test.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double rnd_val(void) { /* splitmix64 -> [-1, 1) */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53 * 2.0 - 1.0;
}

typedef enum Kind {
  K_RANDOM,   /* symmetric (eigh) or general (svd) uniform entries */
  K_SPD,      /* g g^T + n I, as bench/'s rows */
  K_REPEATED, /* H diag(d) H with a Householder H and d in {1, 1, 1, 2, 2, -3, ...} */
  K_DIAG,     /* an unsorted diagonal, with ties */
  K_ZERO,
  K_IDENTITY,
  K_RANK1,  /* x y^T (x x^T for eigh) */
  K_HUGE,   /* random * 1e30 */
  K_TINY,   /* random * 1e-30 */
  K_NONFINITE, /* random with a NaN or an inf entry */
  K_COUNT
} Kind;

/* One n x n float32 matrix of the kind into m (symmetric with sym; K_REPEATED, K_DIAG,
 * K_SPD and the rest always are). */
static void fill(float *m, int n, Kind k, bool sym) {
  double h[64], d[64], hh = 0;
  for (int i = 0; i < n; i++) h[i] = rnd_val(), hh += h[i] * h[i];
  for (int i = 0; i < n; i++) d[i] = (double)((i % 3) == 2 ? -3 : 1 + i % 2) * (i < 3 ? 1 : 1 + i / 3);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double v = 0;
      switch (k) {
      case K_RANDOM: case K_HUGE: case K_TINY: case K_NONFINITE:
        v = rnd_val() * (k == K_HUGE ? 1e30 : k == K_TINY ? 1e-30 : 1);
        break;
      case K_SPD:
        v = i == j ? n : 0;
        for (int q = 0; q < n; q++) v += (double)(float)sin(i * 7.0 + q) * (float)sin(j * 7.0 + q);
        break;
      case K_REPEATED: /* (H D H)_ij with H = I - 2 h h^T / h^T h */
        for (int q = 0; q < n; q++) {
          double hi = (i == q) - 2 * h[i] * h[q] / hh, hj = (q == j) - 2 * h[q] * h[j] / hh;
          v += hi * d[q] * hj;
        }
        break;
      case K_DIAG: v = i == j ? (double)((i * 5) % 7) - 3 : 0; break;
      case K_ZERO: v = 0; break;
      case K_IDENTITY: v = i == j; break;
      case K_RANK1: v = sin(i + 1.0) * (sym ? sin(j + 1.0) : cos(2.0 * j + 0.5)); break;
      default: break;
      }
      m[i * n + j] = (float)v;
    }
  if (sym && (k == K_RANDOM || k == K_HUGE || k == K_TINY || k == K_NONFINITE))
    for (int i = 0; i < n; i++)
      for (int j = 0; j < i; j++) m[j * n + i] = m[i * n + j];
  if (k == K_NONFINITE) m[(n / 2) * n + n / 3] = n % 2 ? NAN : INFINITY;
}

/* Reads a float32 array into a malloc'd buffer. */
static float *host(jx_array *a, int64_t count) {
  float *p = malloc((size_t)(count ? count : 1) * sizeof *p);
  CHECK(a && jx_read(a, p, (size_t)count * sizeof *p) == JX_OK);
  return p;
}

static bool same_bits(const float *a, const float *b, int64_t count) {
  for (int64_t i = 0; i < count; i++)
    if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i])))) return false;
  return true;
}

static bool finite_all(const float *m, int64_t count) {
  for (int64_t i = 0; i < count; i++)
    if (!isfinite(m[i])) return false;
  return true;
}

/* max |V^T V - I| over the columns of the n x n v (row-major, vectors as columns when
 * cols, as rows otherwise). */
static double orth_err(const float *v, int n, bool cols) {
  double e = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double acc = 0;
      for (int k = 0; k < n; k++)
        acc += cols ? (double)v[k * n + i] * v[k * n + j] : (double)v[i * n + k] * v[j * n + k];
      e = fmax(e, fabs(acc - (i == j)));
    }
  return e;
}

/* eigh of B matrices of kind k, size n (lower or upper read, the other triangle garbage
 * when !sym_input) with the kernels on and off. */
static void check_eigh(int B, int n, Kind k, bool lower) {
  int64_t shape[3] = {B, n, n}, nn = (int64_t)n * n;
  float *a = malloc(sizeof(float) * (size_t)(B * nn));
  for (int b = 0; b < B; b++) {
    fill(a + b * nn, n, b % 3 == 1 && k == K_NONFINITE ? K_RANDOM : k, true);
    for (int i = 0; i < n; i++) /* garbage in the triangle eigh does not read */
      for (int j = 0; j < n; j++)
        if (lower ? j > i : j < i) a[b * nn + i * n + j] = 1e3f * (float)rnd_val();
  }
  jx_array *x = jx_array_from(a, JX_FLOAT32, 3, shape), *r[2][2];
  for (int on = 0; on < 2; on++) {
    jacobi_set_enabled(on);
    CHECK(jx_linalg_eigh(x, lower ? "L" : "U", false, r[on]) == JX_OK);
  }
  jacobi_set_enabled(true);
  float *w = host(r[1][0], B * n), *v = host(r[1][1], B * nn), *wl = host(r[0][0], B * n), *vl = host(r[0][1], B * nn);
  for (int b = 0; b < B; b++) {
    const float *ab = a + b * nn, *wb = w + b * n, *vb = v + b * nn, *wlb = wl + b * n;
    if (!finite_all(ab, nn) || !finite_all(wlb, n)) { /* LAPACK's results, bit for bit */
      CHECK_MSG(same_bits(wb, wlb, n) && same_bits(vb, vl + b * nn, nn), "eigh n=%d kind %d entry %d: not LAPACK's", n,
                k, b);
      continue;
    }
    double scale = 0;
    for (int i = 0; i < n; i++) scale = fmax(scale, fabs(wlb[i]));
    double tol = 2e-5 * (scale > 0 ? scale : 1), we = 0, re = 0;
    for (int j = 0; j < n; j++) {
      we = fmax(we, fabs((double)wb[j] - wlb[j]));
      if (j) CHECK_MSG(wb[j - 1] <= wb[j], "eigh n=%d kind %d: eigenvalues not ascending", n, k);
      for (int i = 0; i < n; i++) { /* (A v_j)_i - w_j v_ij, A from the read triangle */
        double acc = 0;
        for (int q = 0; q < n; q++) {
          bool mine = lower ? i >= q : i <= q;
          acc += (double)(mine ? ab[i * n + q] : ab[q * n + i]) * vb[q * n + j];
        }
        re = fmax(re, fabs(acc - (double)wb[j] * vb[i * n + j]));
      }
    }
    double oe = orth_err(vb, n, true);
    CHECK_MSG(we <= tol && re <= tol && oe <= 2e-5,
              "eigh n=%d kind %d lower=%d entry %d: |w - lapack| %g, |Av - wv| %g (tol %g), |V'V - I| %g", n, k, lower,
              b, we, re, tol, oe);
  }
  /* each entry alone: the same results as inside the batch */
  for (int b = 0; b < B; b += 7) {
    jx_array *xb = jx_array_from(a + b * nn, JX_FLOAT32, 2, shape + 1), *rb[2];
    CHECK(jx_linalg_eigh(xb, lower ? "L" : "U", false, rb) == JX_OK);
    float *w1 = host(rb[0], n), *v1 = host(rb[1], nn);
    CHECK_MSG(same_bits(w1, w + b * n, n) && same_bits(v1, v + b * nn, nn), "eigh n=%d kind %d entry %d alone differs",
              n, k, b);
    free(w1), free(v1);
    jx_free(xb), jx_free(rb[0]), jx_free(rb[1]);
  }
  free(a), free(w), free(v), free(wl), free(vl);
  jx_free(x);
  for (int i = 0; i < 4; i++) jx_free(r[i / 2][i % 2]);
}

/* svd (compute_uv or not) of B matrices of kind k, size n, kernels on and off. */
static void check_svd(int B, int n, Kind k, bool uv) {
  int64_t shape[3] = {B, n, n}, nn = (int64_t)n * n;
  float *a = malloc(sizeof(float) * (size_t)(B * nn));
  for (int b = 0; b < B; b++) fill(a + b * nn, n, b % 3 == 1 && k == K_NONFINITE ? K_RANDOM : k, false);
  jx_array *x = jx_array_from(a, JX_FLOAT32, 3, shape), *r[2][3] = {{0}};
  for (int on = 0; on < 2; on++) {
    jacobi_set_enabled(on);
    if (uv) CHECK(jx_linalg_svd(x, false, true, r[on]) == JX_OK);
    else CHECK((r[on][1] = jx_linalg_svdvals(x)) != NULL);
  }
  jacobi_set_enabled(true);
  float *s = host(r[1][1], B * n), *sl = host(r[0][1], B * n);
  float *u = uv ? host(r[1][0], B * nn) : NULL, *vt = uv ? host(r[1][2], B * nn) : NULL;
  float *ul = uv ? host(r[0][0], B * nn) : NULL, *vtl = uv ? host(r[0][2], B * nn) : NULL;
  for (int b = 0; b < B; b++) {
    const float *ab = a + b * nn, *sb = s + b * n, *slb = sl + b * n;
    if (!finite_all(ab, nn)) {
      CHECK_MSG(same_bits(sb, slb, n) && (!uv || (same_bits(u + b * nn, ul + b * nn, nn) &&
                                                  same_bits(vt + b * nn, vtl + b * nn, nn))),
                "svd n=%d kind %d entry %d: not LAPACK's", n, k, b);
      continue;
    }
    double tol = 2e-5 * (slb[0] > 0 ? slb[0] : 1), se = 0;
    for (int j = 0; j < n; j++) {
      se = fmax(se, fabs((double)sb[j] - slb[j]));
      if (j) CHECK_MSG(sb[j - 1] >= sb[j], "svd n=%d kind %d: singular values not descending", n, k);
    }
    CHECK_MSG(se <= tol, "svd n=%d kind %d entry %d: |s - lapack| %g (tol %g)", n, k, b, se, tol);
    if (!uv) continue;
    const float *ub = u + b * nn, *vb = vt + b * nn;
    double re = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double acc = 0;
        for (int q = 0; q < n; q++) acc += (double)ub[i * n + q] * sb[q] * vb[q * n + j];
        re = fmax(re, fabs(acc - ab[i * n + j]));
      }
    double ou = orth_err(ub, n, true), ov = orth_err(vb, n, false);
    CHECK_MSG(re <= tol && ou <= 2e-5 && ov <= 2e-5,
              "svd n=%d kind %d entry %d: |u s vt - a| %g (tol %g), |U'U - I| %g, |V'V - I| %g", n, k, b, re, tol, ou,
              ov);
  }
  for (int b = 0; b < B; b += 7) {
    jx_array *xb = jx_array_from(a + b * nn, JX_FLOAT32, 2, shape + 1), *rb[3] = {0};
    if (uv) CHECK(jx_linalg_svd(xb, false, true, rb) == JX_OK);
    else rb[1] = jx_linalg_svdvals(xb);
    float *s1 = host(rb[1], n);
    bool same = same_bits(s1, s + b * n, n);
    if (uv) {
      float *u1 = host(rb[0], nn), *v1 = host(rb[2], nn);
      same = same && same_bits(u1, u + b * nn, nn) && same_bits(v1, vt + b * nn, nn);
      free(u1), free(v1);
    }
    CHECK_MSG(same, "svd n=%d kind %d entry %d alone differs", n, k, b);
    free(s1);
    jx_free(xb);
    for (int i = 0; i < 3; i++) jx_free(rb[i]);
  }
  free(a), free(s), free(sl), free(u), free(vt), free(ul), free(vtl);
  jx_free(x);
  for (int i = 0; i < 6; i++) jx_free(r[i / 3][i % 3]);
}

static const int sizes[] = {1, 2, 3, 5, 8, 15, 16, 17, 24, 31, 32, 33};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

static void test_eigh(void) {
  for (int si = 0; si < NSIZES; si++)
    for (int k = 0; k < K_COUNT; k++) {
      if (!test_shard_mine()) continue;
      check_eigh(si % 2 ? 37 : 5, sizes[si], (Kind)k, (si + k) % 2 == 0);
    }
}

static void test_svd(void) {
  for (int si = 0; si < NSIZES; si++)
    for (int k = 0; k < K_COUNT; k++) {
      if (!test_shard_mine()) continue;
      check_svd(si % 2 ? 37 : 5, sizes[si], (Kind)k, (si + k) % 3 != 0);
    }
}

/* The kernels themselves: the mask of entries left to LAPACK (non-finite input, a
 * rank-deficient svd), and nothing written for lanes past cnt. */
static void test_kernel_masks(void) {
  if (!jacobi_available()) return;
  enum { N = 4, C = 5 };
  float a[C * N * N], v[(C + 1) * N * N], w[(C + 1) * N], u[(C + 1) * N * N], vt[(C + 1) * N * N], s[(C + 1) * N];
  for (int b = 0; b < C; b++) fill(a + b * N * N, N, K_SPD, true);
  a[1 * N * N + 5] = NAN;       /* entry 1: NaN in the lower triangle */
  a[3 * N * N + 2] = INFINITY;  /* entry 3: inf in the upper triangle, unread by a lower eigh */
  for (int i = 0; i < N * N; i++) a[4 * N * N + i] = i < N; /* entry 4: rank 1, columns e_0 */
  for (int i = 0; i < (C + 1) * N; i++) w[i] = s[i] = -7;
  uint32_t m = jacobi_eigh_f32(a, C, N, true, v, w);
  CHECK_EQ_INT(m, 1u << 1);
  CHECK_EQ_INT(jacobi_eigh_f32(a, C, N, false, v, w), (1u << 1) | (1u << 3));
  CHECK(w[C * N] == -7); /* past the last entry: untouched */
  CHECK_EQ_INT(jacobi_svd_f32(a, C, N, true, s, u, vt), (1u << 1) | (1u << 3) | (1u << 4));
  CHECK_EQ_INT(jacobi_svd_f32(a, C, N, false, s, NULL, NULL), (1u << 1) | (1u << 3) | (1u << 4));
  CHECK(s[C * N] == -7);
  CHECK_EQ_INT(jacobi_eigh_f32(a, 1, JACOBI_MAX_N + 1, true, v, w), 1u); /* too large: all left */
}

int main(void) {
  TEST_RUN(test_kernel_masks);
  /* the kernels run on the host: on cuda the public calls are cuSOLVER's */
  const char *dev = getenv("JAXC_DEVICE");
  if (dev && !strcmp(dev, "cuda")) return test_finish();
  pool_configure(3); /* batches of 37 split over threads: chunks that are not multiples of 16 */
  TEST_RUN_SPLIT(test_eigh);
  TEST_RUN_SPLIT(test_svd);
  return test_finish();
}
