/* smallqr.h -- Householder QR and LU of batches of small float32 matrices, 16 at a time
 * in the lanes of AVX-512 vectors (src/backend/lapack.c runs them in place of LAPACK's
 * gelqf + orglq and getrf for n, m <= SMALLQR_MAX). */
#ifndef JAXC_BACKEND_SMALLQR_H
#define JAXC_BACKEND_SMALLQR_H
#include <stdbool.h>
#include <stdint.h>

#define SMALLQR_MAX 32 /* the largest n and m the kernel takes */

/* QR of cnt (1..16) consecutive n x m row-major float32 matrices a (1 <= n, m <=
 * SMALLQR_MAX) with LAPACK's geqrf + orgqr conventions (r's diagonal -sign(a_jj) |x|):
 * q (cnt, n, kq) with orthonormal columns and r (cnt, kq, m) upper triangular, kq = n
 * with full else min(n, m). Returns the bitmask of entries it did not compute (a
 * non-finite input; every entry where the CPU lacks AVX-512, the kernels are switched off
 * (jacobi_set_enabled) or memory runs out): their outputs are unspecified. */
uint32_t smallqr_f32(const float *a, int cnt, int64_t n, int64_t m, bool full, float *q, float *r);

/* LU with partial pivoting of cnt (1..16) consecutive n x m row-major float32 matrices a
 * (1 <= n, m <= SMALLQR_MAX), as LAPACK's getf2: lu (cnt, n, m) holds the unit lower L
 * below the diagonal and U on and above it, piv (cnt, min(n, m)) the 0-based row each
 * step swapped in (the first largest |entry| of its column; a zero column is left as is).
 * Returns the bitmask of entries not computed (non-finite input, as smallqr_f32). */
uint32_t smallqr_lu_f32(const float *a, int cnt, int64_t n, int64_t m, float *lu, int32_t *piv);

#endif
