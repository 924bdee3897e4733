/* alu.h -- the kernel IR: AluExp, a hash-consed DAG of scalar operations (ops in
 * alu.def), with interval analysis, a simplifier, a printer and a checker; and Kernel,
 * one loop nest computing an output array, with an optional Reduction.
 *
 * Every AluExp is immutable and unique: constructors return the existing node when an
 * equal one exists, so pointer equality is structural equality. Nodes live for the
 * process (an arena that grows with the number of distinct expressions). Index
 * arithmetic uses JX_INT64. */
#ifndef JAXC_IR_ALU_H
#define JAXC_IR_ALU_H

#include "jaxc.h"

typedef enum AluOp {
#define X(name, arity, group) ALU_##name,
#include "ir/alu.def"
#undef X
  ALU_NUM_OPS
} AluOp;

typedef enum AluGroup {
  ALU_GROUP_BINARY,
  ALU_GROUP_COMPARE,
  ALU_GROUP_UNARY,
  ALU_GROUP_UNARY_PRED,
  ALU_GROUP_SPECIAL,
  ALU_GROUP_LEAF
} AluGroup;

/* A scalar value. Signed ints and bool live in .i, sign-extended from their width;
 * unsigned ints in .u, zero-extended; floats in .f holding a value exactly
 * representable in the dtype (float32/float16/bfloat16 values are rounded); complex
 * values in .c (each part rounded to the part's dtype; .c.re aliases .f). Code that
 * compares or hashes values looks at .c.im only for complex dtypes. */
typedef union AluValue {
  int64_t i;
  uint64_t u;
  double f;
  struct {
    double re, im;
  } c;
} AluValue;

typedef struct AluExp AluExp;
struct AluExp {
  AluOp op;
  jx_dtype dtype;
  int nsrc;
  const AluExp *src[4];
  AluValue value;   /* ALU_CONST */
  int64_t arg;      /* SPECIAL: range; GLOBAL_INDEX: input number; else 0 */
  const char *name; /* SPECIAL / VARIABLE: interned name; else NULL */
  int64_t lo, hi;   /* interval of integer/bool values (INT64_MIN/MAX if unknown) */
  uint64_t hash;
  uint64_t id;      /* creation order: stable, deterministic ordering */
};

const char *alu_op_name(AluOp op); /* "ADD" */
int alu_op_arity(AluOp op);
AluGroup alu_op_group(AluOp op);

/* Constructors (hash-consed; they fold constants and apply cheap local rewrites).
 * They never fail except on OOM, where they return NULL and set JX_ERR_OOM; a NULL
 * source gives NULL. */
const AluExp *alu_const(jx_dtype dtype, AluValue v);
const AluExp *alu_const_int(jx_dtype dtype, int64_t v); /* any int/bool dtype */
const AluExp *alu_const_float(jx_dtype dtype, double v); /* rounds to dtype */
const AluExp *alu_special(const char *name, int64_t range); /* int64 in [0, range) */
const AluExp *alu_variable(const char *name, jx_dtype dtype);
const AluExp *alu_global(int64_t input, jx_dtype dtype, const AluExp *index);
/* Elementwise: srcs share a dtype (WHERE: src0 bool, src1/src2 equal; SHL/SHR: same
 * dtype). Result dtype: bool for COMPARE and UNARY_PRED, else the sources'. */
const AluExp *alu_unary(AluOp op, const AluExp *x);
const AluExp *alu_binary(AluOp op, const AluExp *a, const AluExp *b);
const AluExp *alu_where(const AluExp *cond, const AluExp *a, const AluExp *b);
const AluExp *alu_cast(const AluExp *x, jx_dtype dtype);
const AluExp *alu_bitcast(const AluExp *x, jx_dtype dtype);
/* Complex values (ir/complex.c). REAL / IMAG: a part of a complex value (dtype: the
 * part's); COMPLEX: re + im*i from two values of one real floating dtype. The ops
 * with complex operands the IR evaluates natively are ADD SUB MUL NEG CMPEQ CMPNE,
 * CAST, WHERE, loads and these three; alu_unary / alu_binary expand every other
 * complex op (DIV, EXP, LOG, SQRT, POW, trigonometric and hyperbolic functions, ABS
 * -> real, SIGN, ISNAN, ISINF) into real operations on the parts, with JAX's (XLA's)
 * formulas, so interpreter and renderers share them. */
const AluExp *alu_real(const AluExp *x);
const AluExp *alu_imag(const AluExp *x);
const AluExp *alu_complex(const AluExp *re, const AluExp *im);
/* Whether op on complex operands is native (see above); expansion otherwise. */
bool alu_complex_native(AluOp op);
/* The expansion of a non-native complex op (complex.c), NULL for unsupported ones
 * (JX_ERR_DTYPE set). */
const AluExp *alu_complex_expand(AluOp op, const AluExp *a, const AluExp *b);
const AluExp *alu_threefry2x32(const AluExp *k0, const AluExp *k1, const AluExp *c0,
                               const AluExp *c1);
/* a * b + c rounded once (ALU_FMA), for float32 or float64 operands of one dtype. */
const AluExp *alu_fma(const AluExp *a, const AluExp *b, const AluExp *c);
/* Word (0: high, 1: low) of alu_threefry2x32 as uint32. */
const AluExp *alu_threefry_word(const AluExp *k0, const AluExp *k1, const AluExp *c0,
                                const AluExp *c1, int word);
/* Generic constructor used by rewriting passes. */
const AluExp *alu_make(AluOp op, jx_dtype dtype, int nsrc, const AluExp *const *src,
                       AluValue value, int64_t arg, const char *name);

/* Scalar semantics of one op (alu.def), shared by the interpreter and constant folding.
 * `dtype` is the result dtype, src_dtype the dtype of src0 (matters for CAST/BITCAST
 * and compares). */
AluValue alu_eval_op(AluOp op, jx_dtype dtype, jx_dtype src_dtype, const AluValue *args);
/* Identity of a reduction op (ADD, MUL, MIN, MAX, AND, OR, XOR) in dtype: 0, 1, +inf or
 * the dtype's max, -inf or its min, all ones, 0. */
AluValue alu_reduce_identity(AluOp op, jx_dtype dtype);
/* The order of a reduction. Floating ADD and MUL over ALU_REDUCE_LANES or more
 * elements accumulate in ALU_REDUCE_LANES lanes: lane l takes ridx = l, l + 16, ... in
 * increasing order (each starting from the identity), and the lanes are then combined
 * as a tree, lane[l] = op(lane[l], lane[l + h]) for h = 8, 4, 2, 1 -- the order of a
 * 16-wide vector accumulator, which is what lets compiled kernels vectorize a row sum
 * and is also more accurate than one long chain (numpy sums pairwise for the same
 * reasons). Every other reduction accumulates ridx = 0, 1, ... in order (integer ops,
 * MIN/MAX (NaN-propagating), AND/OR give the same result in any order anyway).
 * Every backend follows this order, so their results agree bit for bit. */
#define ALU_REDUCE_LANES 16
bool alu_reduce_in_lanes(AluOp op, jx_dtype dtype, int64_t size);
/* Combines lane[0..ALU_REDUCE_LANES) as above; returns the result (lane is clobbered). */
AluValue alu_reduce_combine_lanes(AluOp op, jx_dtype dtype, AluValue *lane);
/* Rounds/wraps a raw value into the canonical representation of dtype. */
AluValue alu_normalize(jx_dtype dtype, AluValue v);
/* Reads element i of a buffer of dtype as an AluValue, and writes one. */
AluValue alu_load(const void *buf, jx_dtype dtype, int64_t i);
void alu_store(void *buf, jx_dtype dtype, int64_t i, AluValue v);

/* Replaces every VARIABLE/SPECIAL named `name` by `with`. */
const AluExp *alu_substitute(const AluExp *e, const char *name, const AluExp *with);
/* Full simplification: constant folding, algebraic identities that are exact for the
 * dtype (never x*0 -> 0 for floats), and the index rewrites that cancel the div/mod
 * chains views create, correct for truncating division of negative values (uses the
 * intervals). Idempotent. */
const AluExp *alu_simplify(const AluExp *e);
/* Type/shape check of the DAG: arities, dtypes per op, GLOBAL_INDEX inputs < nargs with
 * matching dtypes (arg_dtypes may be NULL to skip). Returns JX_OK or JX_ERR_INTERNAL
 * with a message naming the offending node. */
jx_status alu_check(const AluExp *e, int nargs, const jx_dtype *arg_dtypes);
/* Deterministic text: shared subexpressions are named (%0 = ADD i64 ...). malloc'd. */
char *alu_print(const AluExp *e);
/* Number of distinct nodes reachable from e. */
int64_t alu_count(const AluExp *e);

/* The local type rule of one node (arity, dtypes of its sources, leaf fields), not
 * recursive: NULL when well-typed, else `buf` holding the reason. Shared by the
 * constructors (which leave ill-typed nodes unrewritten) and alu_check. */
const char *alu_node_error(const AluExp *e, char *buf, size_t n);
/* The nodes reachable from e, each once, sources before users (post-order, so the
 * order is deterministic). malloc'd, count in *n; NULL with JX_ERR_OOM on failure. */
const AluExp **alu_toposort(const AluExp *e, int64_t *n);
/* A pointer-keyed map from nodes to values, for passes over a DAG. */
typedef struct AluMap {
  const AluExp **keys;
  const void **vals;
  size_t cap, count;
} AluMap;
void alu_map_init(AluMap *m);
bool alu_map_put(AluMap *m, const AluExp *k, const void *v); /* false: OOM (error set) */
bool alu_map_get(const AluMap *m, const AluExp *k, const void **v); /* found? v may be NULL */
void alu_map_free(AluMap *m);

/* ---------------------------------------------------------------- kernels */

/* A reduction: acc starts at identity; for ridx in [0, size): acc = op(acc, exp).
 * Then out = epilogue, where epilogue refers to the accumulator as VARIABLE "acc" (of
 * `dtype`). op is ADD, MUL, MIN, MAX, AND or OR. */
typedef struct Reduction {
  AluOp op;
  jx_dtype dtype;
  AluValue identity;
  int64_t size;
  const AluExp *epilogue; /* NULL: out = acc */
} Reduction;

#define KERNEL_MAX_ARGS 64

/* One output array of `size` elements of `dtype`: out[gidx] = exp (SPECIAL "gidx"),
 * or with a reduction, exp also uses SPECIAL "ridx" and out[gidx] = epilogue(acc).
 * Kernels may have further outputs of the same size, out_k[gidx] = extra[k - 1] for
 * k = 1 .. nextra: elementwise kernels compute them in the same loop from the same
 * inputs (horizontal fusion: an optimizer's new moments and new parameters read the
 * gradient once); for reductions they are further epilogues (of acc and pre).
 * Two-phase reductions (has_pre): for each output, pre_exp is first reduced by `pre`
 * over the same ridx range; that value is VARIABLE "pre" (of pre.dtype) in exp, the
 * epilogue and the extra outputs -- softmax's max and its sum of exp(x - max), or a
 * mean and the variance around it, in one pass over each row. */
#define KERNEL_MAX_OUTS 4
typedef struct Kernel {
  int nargs;
  jx_dtype arg_dtypes[KERNEL_MAX_ARGS];
  int64_t size;
  jx_dtype dtype;
  const AluExp *exp;
  bool has_reduction;
  Reduction reduction;
  bool has_pre;
  const AluExp *pre_exp;
  Reduction pre; /* pre.size == reduction.size; pre.epilogue unused */
  int nextra; /* outputs beyond the first */
  const AluExp *extra[KERNEL_MAX_OUTS - 1];
  jx_dtype extra_dtypes[KERNEL_MAX_OUTS - 1];
  /* A reduction's row output (only for backends with Backend.row_outputs; jit/lower.c's
   * fuse_row_output -- softmax's exp(x - max) / sum in the kernel of its sums): once a
   * row is reduced, row_exp (gidx, ridx, loads, acc = the reduced value before the
   * epilogue, pre) is stored at gidx * reduction.size + ridx for every ridx, as the
   * last output (after the extra ones), size * reduction.size elements of row_dtype. */
  bool has_row_out;
  const AluExp *row_exp;
  jx_dtype row_dtype;
  /* A group epilogue (only for backends with Backend.row_group; jit/lower.c's
   * fuse_group_post -- a 10-class log-softmax and its dlogits in the kernel of the
   * logits' rows): a reduction whose outputs form groups of G = post->reduction.size
   * (G gidx' .. G gidx' + G-1, as the backend computes them together), followed in the
   * same kernel by the reduction `post` over each group. post is a kernel of size
   * k->size / G whose args are k's, then one more of k->dtype: out0 of this kernel,
   * which it loads only at gidx * G + ridx. Its outputs follow this kernel's own (after
   * the extra ones and a row output, which a kernel with a post does not have); at most
   * KERNEL_MAX_OUTS outputs in all. Owned by the kernel's program step (freed with it;
   * NULL: none). */
  struct Kernel *post;
} Kernel;

/* ---------------------------------------------------------------- routines */

/* A routine: a custom operation that is not a loop nest of AluExps (sorting, scatter,
 * BLAS calls), with nin inputs and nout outputs. Operands are contiguous buffers laid
 * out as (outer, n, inner), the axis of interest in the middle. */
typedef enum RoutineOp {
  ROUTINE_SORT,        /* in: nin operands (outer,n,inner) -> out: each permuted by the
                          stable sort of operand 0 along n (JAX's total order) */
  ROUTINE_SCATTER_ADD, /* in: x (outer,n,inner), idx (m), upd (outer,m,inner) -> out:
                          x with upd[o,k,i] added at [o, clamp(idx[k], 0, n-1), i] */
  ROUTINE_GEMM,        /* in: a (outer, n, m), b (outer, m, inner) -> out: a @ b, float32
                          or float64 through CBLAS when jaxc was built with OpenBLAS
                          (routine_gemm_blas), else jaxc's own tiled kernel;
                          float16/bfloat16 accumulated in float32 and rounded once (on
                          the host through float32 copies; cuBLASLt on cuda); with
                          axpby a third input c: alpha (a @ b) + beta c */
  /* Dense linear algebra on LAPACK (backend/lapack.c), float32/float64/complex64/
   * complex128 (LAPACK's s/d/c/z routines), row-major matrices, `outer` independent batch entries, options in `flags` (LINALG_*): */
  ROUTINE_CHOLESKY,         /* a (outer,n,n) -> L (outer,n,n): lower, zeros above; all NaN
                               where a is not positive definite (potrf) */
  ROUTINE_TRIANGULAR_SOLVE, /* a (outer,k,k), b (outer,n,m) -> x (outer,n,m): op(a) x = b
                               (LEFT_SIDE, k = n) or x op(a) = b (k = m) (trsm) */
  ROUTINE_LU,               /* a (outer,n,m) -> lu (outer,n,m), pivots int32 (outer,min(n,m)),
                               permutation int32 (outer,n) (getrf; 0-based) */
  ROUTINE_QR,               /* a (outer,n,m) -> q (outer,n,kq), r (outer,kq,m); kq = n with
                               FULL_MATRICES, else min(n,m) (geqrf + orgqr) */
  ROUTINE_EIGH,             /* a (outer,n,n) symmetric/Hermitian -> v (outer,n,n)
                               eigenvectors as columns, w (outer,n) ascending, real;
                               NaN on failure (syevd/heevd) */
  ROUTINE_SVD,              /* a (outer,n,m) -> s (outer,k) descending (real), and with COMPUTE_UV
                               u (outer,n,ku), vt (outer,kv,m); ku = n, kv = m with
                               FULL_MATRICES, else k = min(n,m); NaN on failure (gesdd) */
  ROUTINE_EIG,              /* a (outer,n,n) -> w (outer,n), then vl (COMPUTE_LEFT) and vr
                               (COMPUTE_RIGHT) (outer,n,n) eigenvectors as columns, all
                               complex (geev); NaN on failure */
  ROUTINE_TRIDIAGONAL_SOLVE, /* dl, d, du (outer,n), b (outer,n,m) -> x (outer,n,m): the
                                tridiagonal system with sub-diagonal dl[1..n), diagonal d,
                                super-diagonal du[0..n-1) (gtsv, partial pivoting); NaN
                                where gtsv finds an exactly singular matrix */
  ROUTINE_FFT,              /* lax.fft over the trailing fft_rank axes of (outer, lens..)
                               (backend/fft.c, pocketfft): flags = FFT_TYPE_*, dtype =
                               float32/float64 (the precision), complex operands are
                               interleaved pairs; FFT/IFFT: complex lens -> complex lens;
                               RFFT: real lens -> complex (.., n/2+1); IRFFT: complex
                               (.., n/2+1) -> real lens; IFFT/IRFFT scaled by 1/prod(lens) */
} RoutineOp;

/* lax.FftType: the transform of an fft primitive or routine (JAX's numbering). */
enum { FFT_TYPE_FFT = 0, FFT_TYPE_IFFT = 1, FFT_TYPE_RFFT = 2, FFT_TYPE_IRFFT = 3 };
#define FFT_MAX_RANK 3

/* Options of the linear-algebra routines and primitives (lax.linalg's keywords). */
enum {
  LINALG_LEFT_SIDE = 1 << 0,     /* triangular_solve: solve op(a) x = b (else x op(a) = b) */
  LINALG_LOWER = 1 << 1,         /* triangular_solve: a is lower; eigh: read the lower half */
  LINALG_TRANSPOSE_A = 1 << 2,   /* triangular_solve: op(a) = a^T */
  LINALG_CONJUGATE_A = 1 << 3,   /* triangular_solve: conjugate a (no-op for real dtypes) */
  LINALG_UNIT_DIAGONAL = 1 << 4, /* triangular_solve: a's diagonal is taken as ones */
  LINALG_FULL_MATRICES = 1 << 5, /* qr, svd: complete (square) factors */
  LINALG_COMPUTE_UV = 1 << 6,    /* svd: u and vt as well as s */
  LINALG_COMPUTE_LEFT = 1 << 7,  /* eig: left eigenvectors */
  LINALG_COMPUTE_RIGHT = 1 << 8, /* eig: right eigenvectors */
  LINALG_UNSORTED = 1 << 9,      /* eigh: sort_eigenvalues=False (LAPACK/cuSOLVER sort anyway, as JAX on CPU/GPU) */
};
/* True for the linear-algebra routines above. */
#define ROUTINE_IS_LINALG(op) ((op) >= ROUTINE_CHOLESKY && (op) <= ROUTINE_TRIDIAGONAL_SOLVE)

/* dot_general products at least this large (m * n * k multiply-adds) go to GEMM. */
#define ROUTINE_GEMM_MIN_WORK (64 * 64 * 64)

/* Operands a routine may have (inputs or outputs); more is a JX_ERR_UNSUPPORTED error
 * where the routine is built (routine_check). */
#define ROUTINE_MAX_OPERANDS 16

typedef struct Routine {
  RoutineOp op;
  int nin, nout;
  jx_dtype dtype;       /* the data operand's dtype */
  jx_dtype dtypes[ROUTINE_MAX_OPERANDS]; /* sort: every operand's dtype */
  jx_dtype index_dtype; /* scatter's indices */
  int64_t outer, n, inner;
  int64_t m;            /* scatter: number of indices; gemm: the contracted size */
  bool trans_a, trans_b; /* gemm: a stored as (outer, m, n) / b as (outer, inner, m) */
  bool axpby;           /* gemm: out = alpha (a @ b) + beta c, c a third input laid out as
                           out (jit/lower.c's fuse_gemm_update; real floats) */
  double alpha, beta;
  unsigned flags;       /* linear algebra: LINALG_* options; fft: FFT_TYPE_* */
  int fft_rank;         /* fft: number of transformed (trailing) axes, 1..FFT_MAX_RANK */
  int64_t fft_lens[FFT_MAX_RANK]; /* fft: fft_lengths (the real side's for RFFT/IRFFT) */
} Routine;

const char *routine_name(RoutineOp op);
/* JX_OK if r's operand counts are in range; JX_ERR_UNSUPPORTED naming the routine and
 * the limit otherwise. */
jx_status routine_check(const Routine *r);
/* Bytes of output o of r. */
size_t routine_out_nbytes(const Routine *r, int o);
/* Runs a routine on host memory: inputs/outputs as described for its op. */
jx_status routine_run_host(const Routine *r, void *const *inputs, void *const *outs);
/* Makes OpenBLAS single-threaded, once, before a backend's first CBLAS call: jaxc splits
 * its GEMMs itself, and OpenBLAS's own threads would split (and round) otherwise. */
void routine_blas_single_threaded(void);
/* The block rows [i0, i1) x columns [j0, j1) of a GEMM routine's output (every batch
 * entry), computed in place; blocks are independent (the cpu backend runs them on its
 * threads). */
jx_status routine_gemm_block(const Routine *r, void *const *inputs, void *out, int64_t i0,
                             int64_t i1, int64_t j0, int64_t j1);
/* The blocks a GEMM routine runs as where its kernel's rounding depends on the split
 * (CBLAS: OpenBLAS's sums change with a call's rows and columns): a number of blocks
 * >= 1 over the rows (*by_rows) or columns, fixed by the shape and the machine's cores,
 * so that every thread count and the interpreter (routine_run_host) give the same bits.
 * 0 where the kernel rounds alike however it is split (jaxc's own GEMM): the backend
 * splits as it likes. */
int64_t routine_gemm_fixed_blocks(const Routine *r, bool *by_rows);
/* Runs blocks [b0, b1) of routine_gemm_fixed_blocks's split (nblocks of them). */
jx_status routine_gemm_fixed_run(const Routine *r, void *const *inputs, void *out, bool by_rows,
                                 int64_t nblocks, int64_t b0, int64_t b1);
/* Whether GEMM routines on the host call OpenBLAS: built with it and not turned off by
 * JAXC_BLAS=0 (or off) in the environment; otherwise jaxc's own cache-blocked,
 * register-tiled kernel (backend/gemm.c) computes them. routine_gemm_set_blas overrides
 * the environment (tests compare both). */
bool routine_gemm_blas(void);
void routine_gemm_set_blas(bool on);

/* The identity of a kernel (ir/kernel.c): every field that decides what it computes --
 * expressions, sizes, dtypes, the reduction and its epilogue, a two-phase kernel's
 * first phase (pre_exp, pre), extra outputs -- and nothing else (no unused slots, no
 * padding). Every kernel cache keys on kernel_equal; kernel_hash only picks a bucket. */
uint64_t kernel_hash(const Kernel *k);
/* Segments of the first stage of a reduction of R elements to `size` outputs: P partial
 * results per output, each reducing a contiguous 1/P of its elements, then a second
 * kernel reducing the P partials; 0 when one stage is better. Two stages split the work
 * across threads and bound how many elements one float32 accumulator lane adds (a single
 * stage over 2^29 ones saturates at 2^24 per lane); jit and eager both use it, so they
 * sum alike. */
int64_t kernel_reduce_lanes(int64_t size, int64_t R);
bool kernel_equal(const Kernel *a, const Kernel *b);
/* Outputs of k, its post's included (ir/alu.h, Kernel.post): 1 + nextra + has_row_out,
 * plus the post's. */
int kernel_nouts(const Kernel *k);
/* A group epilogue's index of its group's values, gidx * G + ridx (simplified; G =
 * post->reduction.size); NULL when out of memory. */
const AluExp *kernel_group_index(const Kernel *post);
/* Whether every load of arg `arg` in every part of k (expression, first phase,
 * epilogues, row output) is at index `at` (false when out of memory). */
bool kernel_reads_only_at(const Kernel *k, int64_t arg, const AluExp *at);
/* Elements and dtype of output o of k (o < kernel_nouts(k)): size, a row output's size
 * x reduction.size, or the post's outputs after k's own. */
int64_t kernel_out_elems(const Kernel *k, int o);
jx_dtype kernel_out_dtype(const Kernel *k, int o);

/* Checks a kernel (alu_check on its expressions, gidx/ridx ranges). */
jx_status kernel_check(const Kernel *k);
/* Readable deterministic text of a kernel. malloc'd. */
char *kernel_print(const Kernel *k);

#endif
