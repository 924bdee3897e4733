/* jaxc/linalg.h -- part of the public API of jaxc; included by <jaxc.h>, never on its own.
 * Linear algebra: jax.numpy.linalg, jax.scipy.linalg, jax.lax.linalg. */
#ifndef JAXC_LINALG_H
#define JAXC_LINALG_H
#ifndef JAXC_H
#error "include <jaxc.h>, not <jaxc/linalg.h>"
#endif

/* ------------------------------------------------------------ linear algebra */
/* Dense linear algebra on LAPACK (OpenBLAS underneath; a batch runs on the cpu
 * backend's threads, in chunks of problems), mirroring jax.lax.linalg,
 * jax.numpy.linalg and jax.scipy.linalg. Matrices are the last two dims; leading dims
 * are batch dims. float32, float64, complex64 and complex128 (LAPACK's s/d/c/z
 * routines: potrf, trsm, getrf, geqrf/orgqr/ungqr, syevd/heevd, gesdd, geev, gtsv;
 * float32 eigh and svd of square matrices up to 32 x 32 run instead on jaxc's own
 * Jacobi kernels, 16 matrices a vector, on CPUs with AVX-512 (src/backend/jacobi.c:
 * eigenvalues ascending and singular values descending as LAPACK's, vectors' signs
 * arbitrary as LAPACK's; non-finite or rank-deficient entries go to LAPACK), and
 * float32 qr up to 32 x 32 on a Householder kernel of the same kind with LAPACK's sign
 * conventions (src/backend/smallqr.c); real qr, eigh and svd from n = 256 apply their
 * block reflectors with jaxc's GEMM (src/backend/lapack.c);
 * bool/int inputs of the jnp/scipy functions promote to float32 (float64 for int64), as
 * promote_dtypes_inexact; the lax functions take inexact dtypes only: JX_ERR_DTYPE).
 * For complex input, transposes are conjugate transposes where JAX's are (cholesky's
 * L L^H, eigh's Hermitian input, svd's u s vh, qr's unitary q); eigenvalues (eigh)
 * and singular values are real. Differentiable (JAX's JVP rules, with JAX's
 * conjugates for complex input; repeated eigenvalues
 * or singular values give infinities in the derivatives, as in JAX), batchable
 * (vmap moves batch dims to the front), jittable (each factorization is one routine
 * step). Errors: JX_ERR_SHAPE naming the function and shapes for rank < 2, non-square
 * input where square is needed, mismatched operands. Numerical failure is not an
 * error: as JAX on CPU, cholesky/eigh/svd give NaNs for a batch entry LAPACK cannot
 * factor, singular solves give inf/NaN. Not on the cuda device yet (its routines
 * report JX_ERR_UNSUPPORTED). Functions with several results fill out[] (new
 * references; all NULL on failure) and return the status. */

/* lax.linalg.cholesky(x, symmetrize_input): lower L with L L^H = x (x symmetrized as
 * (x + x^H)/2 first if asked, else only its lower half is read). Potrf. */
jx_array *jx_lax_linalg_cholesky(jx_array *x, bool symmetrize_input);
/* lax.linalg.triangular_solve(a, b, left_side, lower, transpose_a, conjugate_a,
 * unit_diagonal): x with op(a) x = b (left_side) or x op(a) = b, a (..., k, k)
 * triangular, b (..., m, n) with a's batch dims (or one dim less: a vector); op
 * transposes (transpose_a) and conjugates (conjugate_a; ignored for real a). trsm. */
jx_array *jx_lax_linalg_triangular_solve(jx_array *a, jx_array *b, bool left_side, bool lower, bool transpose_a,
                                         bool conjugate_a, bool unit_diagonal);
/* lax.linalg.lu(x): out[0] lu (..., m, n) (L below the unit diagonal, U on and
 * above), out[1] pivots int32 (..., min(m, n)), out[2] permutation int32 (..., m) with
 * x[perm] = L U. Partial pivoting (getrf); singular input is not an error. */
jx_status jx_lax_linalg_lu(jx_array *x, jx_array **out);
/* lu_solve(lu, permutation, b, trans) of jax._src.lax.linalg (not public in
 * jax.lax.linalg; jax.scipy.linalg.lu_solve calls it): solves a x = b (trans 0), a^T x = b
 * (1) or a^H x = b (2) from lu's factors; b (..., m, k), or (..., m) when it has one dim
 * less than lu; the batch dims of lu, permutation and b broadcast. */
jx_array *jx_lax_linalg_lu_solve(jx_array *lu, jx_array *permutation, jx_array *b, int trans);

/* jnp.linalg.cholesky(a, upper): L (or U = L^T with upper) of symmetric positive
 * definite a, symmetrized first; NaNs where a is not positive definite. */
jx_array *jx_linalg_cholesky(jx_array *a, bool upper);
/* jnp.linalg.solve(a, b): a (..., m, m); b (m,) a vector, else (..., m, n); batch dims
 * broadcast. Through LU with partial pivoting (singular a: inf/NaN). */
jx_array *jx_linalg_solve(jx_array *a, jx_array *b);
/* jnp.linalg.inv(a): solve(a, I). */
jx_array *jx_linalg_inv(jx_array *a);
/* jnp.linalg.det(a) and slogdet(a) (sign, log|det|) through LU: (..., n, n) ->
 * (...); a singular a gives det 0, slogdet (0, -inf); an a holding a NaN gives det NaN,
 * slogdet (NaN, NaN) (JAX's sign is +-1 there for n >= 3). Complex a: sign is the
 * complex phase det / |det| (a's dtype), logabsdet real. det has JAX's JVP rule,
 * d det(a) = tr(adj(a) da) through a cofactor solve (_cofactor_solve), so its
 * derivative at a singular a is the cofactor matrix (rank n - 1) or 0 (rank < n - 1),
 * not NaN; unlike JAX's it holds also where partial pivoting leaves the zero pivot
 * before the last (JAX gives 0 there). Second derivatives at nonsingular a are JAX's;
 * at singular a they may be NaN (JAX's closed forms for n = 2, 3 give finite ones). */
jx_array *jx_linalg_det(jx_array *a);
jx_status jx_linalg_slogdet(jx_array *a, jx_array **sign, jx_array **logabsdet);

/* jax.scipy.linalg.cholesky(a, lower): L (lower) or U = L^T from one triangle of a
 * (no symmetrization: lower reads the lower half, upper the upper half). */
jx_array *jx_scipy_linalg_cholesky(jx_array *a, bool lower);
/* jax.scipy.linalg.cho_factor(a, lower): the factor c (the `lower` flag is the
 * caller's, as in SciPy's (c, lower) pair); cho_solve((c, lower), b): a x = b with
 * b (..., m, k) or (..., m), c's batch dims. */
jx_array *jx_scipy_linalg_cho_factor(jx_array *a, bool lower);
jx_array *jx_scipy_linalg_cho_solve(jx_array *c, bool lower, jx_array *b);
/* jax.scipy.linalg.solve_triangular(a, b, trans, lower, unit_diagonal): op(a) x = b
 * with op = identity (trans 0), transpose (1) or conjugate transpose (2; = 1 for real
 * dtypes), a (..., m, m). b is a vector (..., m) when it is 1-d, or has one dim less
 * than a and a's last dim m (JAX's deprecated batched-vector case), else (..., m, n);
 * the batch dims of a and b broadcast (JAX's jnp.vectorize): a (2, 3, 3) with b (3, 2)
 * gives (2, 3, 2), a (3, 3) with b (4, 3, 2) gives (4, 3, 2), a (2, 3, 3) with b (3,)
 * gives (2, 3). Errors: JX_ERR_VALUE for a bad trans; JX_ERR_SHAPE for a non-square a,
 * b's rows not m, or batch dims that do not broadcast. */
jx_array *jx_scipy_linalg_solve_triangular(jx_array *a, jx_array *b, int trans, bool lower, bool unit_diagonal);
/* lax.linalg.tridiagonal_solve(dl, d, du, b): x with A x = b for the tridiagonal A of
 * sub-diagonal dl, diagonal d and super-diagonal du, each (..., m) (dl[..., 0] and
 * du[..., m-1] are not read), b (..., m, n), same batch dims, one dtype (float32,
 * float64, complex64 or complex128; no promotion, as JAX). LAPACK s/d/c/z gtsv
 * (Gaussian elimination with partial pivoting); an exactly singular system gives NaNs,
 * as JAX on CPU. JVP in every operand, transpose in b (no conjugation: the linear
 * transpose, as JAX), batching, jit (jax/_src/lax/linalg.py's rules). Errors:
 * JX_ERR_SHAPE (b rank < 2, diagonals not of shape b.shape[:-1]), JX_ERR_DTYPE. */
jx_array *jx_lax_linalg_tridiagonal_solve(jx_array *dl, jx_array *d, jx_array *du, jx_array *b);
/* jax.scipy.linalg.expm(a, upper_triangular, max_squarings): the matrix exponential of
 * a (..., n, n) (batch dims mapped as jnp.vectorize does), by scaling and squaring with
 * the Pade approximant that the 1-norm picks (orders 3/5/7 in float32, 3/5/7/9/13 in
 * float64; Higham 2005, SIAM J. Matrix Anal. Appl. 26(4), JAX's thresholds). The
 * squarings needed past max_squarings (JAX's default 16) give NaNs, as JAX. As JAX,
 * the number of squarings is floor(log2(|a|_1 / theta)), not Higham's ceil: a 1-norm in
 * [theta, 2 theta) is not scaled (float32: relative errors up to ~3e-3 there, as JAX's).
 * upper_triangular: a is taken as upper triangular (a triangular solve for Q^-1 P).
 * Integer inputs become float32 (float64 for int64). Differentiable (through lax.cond,
 * lax.switch, solve), jit- and vmap-safe. complex64/complex128 take float32's/float64's
 * orders and thresholds, as JAX. Errors: JX_ERR_SHAPE for rank < 2 or non-square,
 * JX_ERR_DTYPE for float16/bfloat16 (JAX raises too), JX_ERR_VALUE for a negative
 * max_squarings. */
jx_array *jx_scipy_linalg_expm(jx_array *a, bool upper_triangular, int max_squarings);
/* jax.scipy.linalg.lu_factor(a) -> (lu, piv) and lu_solve((lu, piv), b, trans): a x = b
 * (trans 0), a^T x = b (1) or a^H x = b (2) with lu (..., m, m) and piv (..., m); b's
 * rule and broadcasting are solve_triangular's: lu (2, 3, 3) with b (3, 2) gives
 * (2, 3, 2), with b (3,) (2, 3). Errors: JX_ERR_VALUE for a bad trans, JX_ERR_SHAPE
 * as solve_triangular. */
jx_status jx_scipy_linalg_lu_factor(jx_array *a, jx_array **lu, jx_array **piv);
jx_array *jx_scipy_linalg_lu_solve(jx_array *lu, jx_array *piv, jx_array *b, int trans);
/* jax.scipy.linalg.lu(a, permute_l): out = (p, l, u) with a = p l u, p (..., m, m) of
 * a's real dtype (float64 for complex128, as JAX), l (..., m, k) unit lower, u (..., k,
 * n), k = min(m, n); with permute_l out = (p l, u). Leading batch dimensions are an
 * extension (JAX's takes a 2-D a). */
jx_status jx_scipy_linalg_lu(jx_array *a, bool permute_l, jx_array **out);

/* lax.linalg.qr(x, full_matrices): out = (q, r), x (..., m, n): q (..., m, k) with
 * orthonormal columns, r (..., k, n) upper triangular, k = m with full_matrices else
 * min(m, n). Householder (geqrf + orgqr): LAPACK's signs. */
jx_status jx_lax_linalg_qr(jx_array *x, bool full_matrices, jx_array **out);
/* lax.linalg.eigh(x, lower, symmetrize_input, sort_eigenvalues): out = (v, w): v (..., n,
 * n) eigenvectors as columns, w (..., n) real (float32 for complex64 x; syevd, heevd for
 * complex x). sort_eigenvalues=false is recorded on the equation (printed as JAX) but,
 * as JAX's CPU and GPU lowerings, LAPACK and cuSOLVER return ascending eigenvalues
 * anyway, so the results equal the sorted call's. NaNs where LAPACK fails. */
jx_status jx_lax_linalg_eigh(jx_array *x, bool lower, bool symmetrize_input, bool sort_eigenvalues,
                             jx_array **out);
/* lax.linalg.svd(x, full_matrices, compute_uv): out = (u, s, vt) with compute_uv, else
 * out[0] = s; s (..., k) descending and real, k = min(m, n); u (..., m, m or k), vt (..., n or k,
 * n). Divide and conquer (gesdd). The JVP of full_matrices=True for non-square x is
 * JX_ERR_UNSUPPORTED, as in JAX. */
jx_status jx_lax_linalg_svd(jx_array *x, bool full_matrices, bool compute_uv, jx_array **out);
/* jnp.linalg.qr(a, mode): mode NULL or "reduced": out = (q, r); "complete": full q;
 * "r": out[0] = r only. Other modes: JX_ERR_VALUE. */
jx_status jx_linalg_qr(jx_array *a, const char *mode, jx_array **out);
/* jnp.linalg.eigh(a, UPLO, symmetrize_input): out = (eigenvalues, eigenvectors); UPLO
 * NULL or "L" reads the lower half, "U" the upper (JX_ERR_VALUE otherwise). eigvalsh:
 * the eigenvalues only. */
jx_status jx_linalg_eigh(jx_array *a, const char *UPLO, bool symmetrize_input, jx_array **out);
jx_array *jx_linalg_eigvalsh(jx_array *a, const char *UPLO);
/* jnp.linalg.svd(a, full_matrices, compute_uv): out = (u, s, vh) or out[0] = s;
 * svdvals: s. */
jx_status jx_linalg_svd(jx_array *a, bool full_matrices, bool compute_uv, jx_array **out);
jx_array *jx_linalg_svdvals(jx_array *a);

/* lax.linalg.eig(x, compute_left_eigenvectors, compute_right_eigenvectors): the
 * eigendecomposition of a general square x (..., n, n) by LAPACK geev: out[0] = w
 * (..., n) eigenvalues, then vl (with compute_left) and vr (with compute_right)
 * (..., n, n), eigenvectors as columns (A vr[:, j] = w[j] vr[:, j], vl[:, j]^H A =
 * w[j] vl[:, j]^H; LAPACK's normalization: unit 2-norm, largest component real). All
 * outputs are complex (complex64 for float32/complex64 x, complex128 for float64/
 * complex128), unsorted (LAPACK's order), as JAX on CPU; a matrix geev cannot reduce
 * gives NaNs. CPU and interp (cuda: JX_ERR_UNSUPPORTED).
 * Differentiable in the eigenvalues only (JAX's rule: dw = diag(vr^-1 dx vr)); the
 * derivative of an eig with eigenvectors is JX_ERR_UNSUPPORTED (JAX's default
 * enable_eigvec_derivs=False). Batching and jit as the other routines. Errors:
 * JX_ERR_SHAPE (rank < 2, non-square), JX_ERR_DTYPE (not float32/64, complex64/128). */
jx_status jx_lax_linalg_eig(jx_array *x, bool compute_left_eigenvectors, bool compute_right_eigenvectors,
                            jx_array **out);
/* jnp.linalg.eig(a): out = (w, v) with v the right eigenvectors (lax eig without left
 * ones); jnp.linalg.eigvals(a): w only. bool/int a promote to float32 (int64: float64). */
jx_status jx_linalg_eig(jx_array *a, jx_array **out);
jx_array *jx_linalg_eigvals(jx_array *a);

/* jnp.linalg.norm(x, ord, axis, keepdims) (real results for complex x): ord as text:
 * NULL (None), a number ("1", "-2", "0.5"), "inf", "-inf", "fro" or "nuc"; naxes = 1
 * is a vector norm (ord 0, 1,
 * 2, inf, -inf, p), naxes = 2 a matrix norm (fro, nuc, 1, 2, inf, -1, -2, -inf; 2 and
 * nuc through singular values); axes NULL: the whole array (2-norm when ord is NULL,
 * else by its rank). Bad ord: JX_ERR_VALUE; bad axes: JX_ERR_SHAPE. */
jx_array *jx_linalg_norm(jx_array *x, const char *ord, int naxes, const int *axes, bool keepdims);
/* jnp.linalg.vector_norm(x, axis, keepdims, ord) (ord a number, INFINITY allowed;
 * axes NULL: the flattened array) and matrix_norm(x, keepdims, ord) (ord NULL: "fro"). */
jx_array *jx_linalg_vector_norm(jx_array *x, double ord, int naxes, const int *axes, bool keepdims);
jx_array *jx_linalg_matrix_norm(jx_array *x, const char *ord, bool keepdims);
/* jnp.linalg.cond(x, p): p NULL or "2": s_max / s_min; "-2": its inverse; other norms
 * (square x): norm(x, p) * norm(inv(x), p); NaN results become inf where x has no NaN. */
jx_array *jx_linalg_cond(jx_array *x, const char *p);
/* jnp.linalg.pinv(a, rtol) through the SVD: singular values <= rtol * s_max dropped;
 * rtol NAN means None (10 * max(m, n) * eps). Its derivative goes through svd's JVP
 * (JAX uses a custom JVP; they agree for full rank and distinct singular values). */
jx_array *jx_linalg_pinv(jx_array *a, double rtol);
/* jnp.linalg.lstsq(a, b, rcond): out = (x, residuals, rank, s) for a 2-d a (m, n) and
 * b (m,) or (m, k); rcond NAN means None (eps * max(m, n)), a negative rcond eps;
 * singular values below rcond * s[0], and zero ones whatever rcond is, are dropped
 * (JAX's mask (s > 0) & (s >= rcond * s[0])); residuals always computed (JAX's
 * numpy_resid=False). */
jx_status jx_linalg_lstsq(jx_array *a, jx_array *b, double rcond, jx_array **out);
/* jnp.linalg.matrix_rank(M, rtol): singular values above rtol (NAN: s_max * max(m, n)
 * * eps); rank < 2 input: any nonzero. The default int (int32; int64 with x64). */
jx_array *jx_linalg_matrix_rank(jx_array *M, double rtol);
/* jnp.linalg.matrix_power(a, n): n < 0 through inv; binary powering as JAX. */
jx_array *jx_linalg_matrix_power(jx_array *a, int64_t n);
/* jnp.linalg.multi_dot: the chain product in the cheapest order (first and last
 * operands may be 1-d). */
jx_array *jx_linalg_multi_dot(int n, jx_array *const *arrays);
/* jnp.linalg.tensorsolve(a, b, axes): x with tensordot(a', x, x.ndim) = b, where a' is a
 * with the naxes axes (NULL: none) moved to the end in ascending order (as JAX, whatever
 * order axes lists them in); a' must have shape b.shape + x.shape with b.size ==
 * x.size; through solve on (b.size, b.size). tensorinv(a, ind): the inverse of a as a
 * (prod(a.shape[:ind]), prod(a.shape[ind:])) matrix, shaped a.shape[ind:] +
 * a.shape[:ind]. Errors: JX_ERR_SHAPE for shapes that do not fit (or bad axes),
 * JX_ERR_VALUE for ind <= 0. */
jx_array *jx_linalg_tensorsolve(jx_array *a, jx_array *b, int naxes, const int *axes);
jx_array *jx_linalg_tensorinv(jx_array *a, int ind);
/* jnp.linalg.cross (3-vectors along axis, other dims broadcast), outer (1-d only),
 * vecdot (sum(conj(x1) * x2) along axis, other dims broadcast; x1 conjugated when
 * complex, as vdot), tensordot (= jx_tensordot), matrix_transpose
 * (last two axes swapped), diagonal and trace of the last two axes (offset k). */
jx_array *jx_linalg_cross(jx_array *x1, jx_array *x2, int axis);
jx_array *jx_linalg_outer(jx_array *x1, jx_array *x2);
jx_array *jx_linalg_vecdot(jx_array *x1, jx_array *x2, int axis);
jx_array *jx_linalg_tensordot(jx_array *x1, jx_array *x2, int axes);
jx_array *jx_linalg_matrix_transpose(jx_array *x);
jx_array *jx_linalg_diagonal(jx_array *x, int64_t offset);
jx_array *jx_linalg_trace(jx_array *x, int64_t offset);
/* jnp.diagonal(a, offset, axis1, axis2) (the diagonal becomes the last axis) and
 * jnp.trace(a, offset, axis1, axis2) (its sum). Rank < 2 or bad axes: JX_ERR_SHAPE. */
jx_array *jx_diagonal(jx_array *a, int64_t offset, int axis1, int axis2);
jx_array *jx_trace(jx_array *a, int64_t offset, int axis1, int axis2);
/* jnp.kron(a, b): the Kronecker product (ranks aligned on the right). */
jx_array *jx_kron(jx_array *a, jx_array *b);

#endif /* JAXC_LINALG_H */
