/* jacobi.h -- eigh and SVD of batches of small float32 matrices by Jacobi rotations,
 * 16 matrices at a time in the lanes of AVX-512 vectors (src/backend/lapack.c runs them
 * in place of syevd / gesdd, whose per-matrix cost at n = 16 is LAPACK's scalar
 * rotation loops and call overhead). Each lane's arithmetic does not depend on the other
 * lanes, so results do not depend on how a batch is grouped or split over threads. */
#ifndef JAXC_BACKEND_JACOBI_H
#define JAXC_BACKEND_JACOBI_H
#include <stdbool.h>
#include <stdint.h>

#define JACOBI_LANES 16 /* matrices per call */
#define JACOBI_MAX_N 32 /* the largest n the kernels take */

/* Whether the kernels run: on a CPU with AVX-512F, unless switched off by
 * jacobi_set_enabled (without them every call fails all lanes). */
bool jacobi_available(void);
/* Switches the kernels on or off (on by default), so that tests can compare them with
 * the LAPACK path on the same inputs; returns the previous setting. */
bool jacobi_set_enabled(bool on);

/* Symmetric eigendecomposition of cnt (1..JACOBI_LANES) consecutive n x n row-major
 * float32 matrices a (1 <= n <= JACOBI_MAX_N), reading the lower triangle (lower) or the
 * upper one, as LAPACK's ssyevd: w (cnt, n) ascending eigenvalues and v (cnt, n, n) the
 * orthonormal eigenvectors as columns (v[i, j] is component i of eigenvector j; signs as
 * the rotations leave them). Returns the bitmask of entries it did not compute (a
 * non-finite input, no convergence in its sweep limit, out of memory): their outputs
 * are unspecified and the caller computes them another way. */
uint32_t jacobi_eigh_f32(const float *a, int cnt, int n, bool lower, float *v, float *w);

/* Singular value decomposition of cnt (1..JACOBI_LANES) consecutive n x n row-major
 * float32 matrices a (1 <= n <= JACOBI_MAX_N) by one-sided Jacobi (Hestenes): s (cnt, n)
 * descending, and with uv, u (cnt, n, n) and vt (cnt, n, n) with a = u diag(s) vt (u and
 * vt NULL without uv). Returns the bitmask of entries it did not compute, as
 * jacobi_eigh_f32; a matrix of (numerically) deficient rank is one of them, since its
 * u would need completing to an orthonormal basis. */
uint32_t jacobi_svd_f32(const float *a, int cnt, int n, bool uv, float *s, float *u, float *vt);

/* The scale a lane's matrix (rows x cols, row-major; with tri, only its lower or upper
 * triangle) is brought to before the rotations or reflections: 2^-e with the largest
 * |entry| * 2^-e in [0.5, 1) (e clamped to [-125, 125] so the factor stays finite), e in
 * *e_out; 0 for a matrix with a non-finite entry. Shared with smallqr.c. */
float jacobi_lane_scale(const float *a, int rows, int cols, bool tri, bool lower, int *e_out);

#endif
