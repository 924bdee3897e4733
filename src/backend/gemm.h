/* gemm.h -- jaxc's own float32/float64 matrix product (backend/gemm.c): the GEMM
 * routine's kernel when jaxc is built without OpenBLAS or runs with JAXC_BLAS=0. */
#ifndef JAXC_BACKEND_GEMM_H
#define JAXC_BACKEND_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Rows [i0, i1) x columns [j0, j1) of c = op(a) @ op(b) for one (M, K) x (K, N) product,
 * row-major, c with leading dimension N; a is stored (K, M) when ta, b (N, K) when tb.
 * Cache-blocked (KC x NC panels of b, MC x KC blocks of a, both packed) with a 6 x 16
 * (float32) / 6 x 8 (float64) register tile of fused multiply-adds (AVX2+FMA where the
 * CPU has them; 6 x 32 / 6 x 16 with AVX-512; chosen at run time). false when out of memory for the packed panels
 * (nothing written then). */
bool gemm_f32(const float *a, const float *b, float *c, int64_t M, int64_t N, int64_t K, bool ta,
              bool tb, int64_t i0, int64_t i1, int64_t j0, int64_t j1);
bool gemm_f64(const double *a, const double *b, double *c, int64_t M, int64_t N, int64_t K, bool ta,
              bool tb, int64_t i0, int64_t i1, int64_t j0, int64_t j1);

/* c (M x N, leading dimension ldc) -= op(a) @ op(b): op(a) is (M, K) read with leading
 * dimension lda (stored (K, M) when ta), op(b) (K, N) with ldb (stored (N, K) when tb).
 * Always packed, so any block of c's columns (rows) sums alike; the update step of the
 * blocked triangular solve (backend/lapack.c). false when out of memory (nothing
 * written then). */
bool gemm_sub_f32(const float *a, int64_t lda, bool ta, const float *b, int64_t ldb, bool tb, float *c,
                  int64_t ldc, int64_t M, int64_t N, int64_t K);
bool gemm_sub_f64(const double *a, int64_t lda, bool ta, const double *b, int64_t ldb, bool tb, double *c,
                  int64_t ldc, int64_t M, int64_t N, int64_t K);

/* Whether the kernels above run with AVX-512 register tiles (6 x 32 floats / 6 x 16
 * doubles) on this CPU: routine_gemm_block then prefers them over OpenBLAS (measured
 * faster than OpenBLAS's AVX2 kernels at every shape it takes them for). */
bool gemm_avx512(void);

/* Whether an (M, K) x (K, N) product (b stored transposed: tb) runs with its operands read
 * in place instead of packed (K <= 256, b not transposed, b at most 256 KiB or M <= 32):
 * small products, where packing costs as much as the product. Same sums, same order. */
bool gemm_direct(int64_t M, int64_t N, int64_t K, bool tb, size_t itemsize);

/* Caps the kernels at 0 (baseline ISA), 1 (AVX2+FMA) or 2 (AVX-512, the default) on CPUs
 * that have more, so that tests run every variant; returns the previous cap. */
int gemm_set_isa_cap(int cap);

#endif
