/* lapack.h -- host implementations of the linear-algebra routines (ir/alu.h:
 * ROUTINE_CHOLESKY .. ROUTINE_TRIDIAGONAL_SOLVE) on LAPACKE and CBLAS, one batch range
 * at a time so that a backend can spread a batch over its threads. */
#ifndef JAXC_BACKEND_LAPACK_H
#define JAXC_BACKEND_LAPACK_H

#include "backend/pocketfft.h" /* FftParallelFor: a way to spread work over threads */
#include "ir/alu.h"

/* Dtype and element count of output o of linear-algebra routine r (all outer entries). */
jx_dtype lapack_out_dtype(const Routine *r, int o);
int64_t lapack_out_numel(const Routine *r, int o);
/* Runs batch entries [b0, b1) of r: inputs and outputs as ir/alu.h describes. Entries
 * are independent, so disjoint ranges may run on separate threads. JX_ERR_UNSUPPORTED
 * when jaxc was built without LAPACKE, JX_ERR_DTYPE for dtypes other than float32/64 and complex64/128,
 * JX_ERR_OOM when scratch memory is exhausted. */
jx_status lapack_run(const Routine *r, void *const *in, void *const *out, int64_t b0, int64_t b1);
/* One batch entry of r in independent parts, for a backend to spread a single large
 * problem over its threads: lapack_parts(r) parts per entry (triangular_solve: b's
 * columns, left side, or rows, right side; every other routine: 1), and
 * lapack_run_parts solves parts [p0, p1) of entry b, with lapack_run's errors. */
int64_t lapack_parts(const Routine *r);
jx_status lapack_run_parts(const Routine *r, void *const *in, void *const *out, int64_t b, int64_t p0, int64_t p1);
/* Whether r (a single problem) runs faster with lapack_run_threads than on OpenBLAS's
 * own threads: the blocked LU and QR, whose trailing updates are jaxc's GEMM. */
bool lapack_threads_help(const Routine *r);
/* lapack_run over every entry with the work inside one problem (the blocked LU's and
 * QR's trailing columns) spread over up to nthreads threads through par; the same results
 * as lapack_run. */
jx_status lapack_run_threads(const Routine *r, void *const *in, void *const *out, FftParallelFor par, int nthreads);

#endif
