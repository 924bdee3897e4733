/* prim.h -- binding primitives (primitives.def). Every array operation in src/lib is
 * built from these calls. A bind goes to the innermost active trace of the interpreter
 * stack; at the bottom, eval runs the primitive's implementation (a kernel or a view).
 *
 * Preconditions are the primitive's, not NumPy's: elementwise operands have equal
 * shapes and dtypes (src/lib broadcasts and promotes first). A violated precondition
 * sets JX_ERR_SHAPE / JX_ERR_DTYPE naming the primitive. NULL inputs give NULL.
 * Results are new references (registered with the innermost scope). The result of an
 * operation is weakly typed iff every operand is. */
#ifndef JAXC_TRACE_PRIM_H
#define JAXC_TRACE_PRIM_H

#include "jaxc.h"
#include "ir/alu.h"

typedef enum Prim {
#define X(name, kind, alu) PRIM_##name,
#include "trace/primitives.def"
#undef X
  PRIM_NUM
} Prim;

typedef enum PrimKind {
  PRIM_KIND_UNARY,
  PRIM_KIND_UNARY_PRED,
  PRIM_KIND_BINARY,
  PRIM_KIND_COMPARE,
  PRIM_KIND_SELECT,
  PRIM_KIND_CONVERT,
  PRIM_KIND_BITCAST,
  PRIM_KIND_REDUCE,
  PRIM_KIND_MOVEMENT,
  PRIM_KIND_CONCATENATE,
  PRIM_KIND_GATHER,
  PRIM_KIND_DOT,
  PRIM_KIND_IOTA,
  PRIM_KIND_THREEFRY,
  PRIM_KIND_ROUTINE,
  PRIM_KIND_CALL,
  PRIM_KIND_CONTROL,
  PRIM_KIND_EFFECT, /* no results, run for a side effect (never removed by DCE) */
  PRIM_KIND_COLLECTIVE /* communicates between the devices of a mesh axis */
} PrimKind;

struct Jaxpr;
struct ShardSpec;

/* special_call's rule (JAX's custom_jvp): the tangents ty[0 .. nout) of a call's
 * results (NULL: a symbolic zero) from its primals x, tangents t (NULL: zero) and primal
 * results y, computed with primitives (so the rule itself composes with every
 * transformation). Runs in a scope: temporaries need no freeing. Rules are static
 * objects; equations compare them by address and hash them by name. */
typedef struct SpecialRule {
  const char *name;
  jx_status (*jvp)(int nin, jx_array *const *x, jx_array *const *t, int nout,
                   jx_array *const *y, jx_array **ty);
} SpecialRule;

/* Most branches of one cond (lax.switch with more is refused with JX_ERR_UNSUPPORTED). */
#define PRIM_MAX_BRANCHES 16

/* The largest mesh axis a collective runs over (ppermute's perm holds one entry each). */
#define PRIM_MAX_AXIS_SIZE 64

/* Parameters of a primitive application (a jaxpr equation's params). Unused fields
 * are zero. */
typedef struct PrimParams {
  jx_dtype dtype;                /* convert_element_type, bitcast, iota */
  bool weak;                     /* convert_element_type: result weak type */
  int naxes;                     /* reduce_*, rev: axes; transpose: perm;        */
  int axes[JX_MAX_NDIM];         /* broadcast_in_dim: broadcast_dimensions       */
  int ndim;                      /* reshape, broadcast_in_dim, iota: result shape */
  int64_t shape[JX_MAX_NDIM];
  int64_t start[JX_MAX_NDIM];    /* slice: start/stop/step; pad: lo in start, */
  int64_t stop[JX_MAX_NDIM];     /*        hi in stop                         */
  int64_t step[JX_MAX_NDIM];
  double value;                  /* pad: padding value */
  int axis;                      /* concatenate, gather, iota */
  int ncontract, nbatch;         /* dot_general: lhs/rhs contracting and batch dims */
  int lhs_contract[JX_MAX_NDIM], rhs_contract[JX_MAX_NDIM];
  int lhs_batch[JX_MAX_NDIM], rhs_batch[JX_MAX_NDIM];
  unsigned flags;                /* linear algebra: LINALG_* options (ir/alu.h) */
  struct Jaxpr *jaxpr;           /* jit: the closed sub-program called (its consts
                                    included); an equation holds a reference */
  const SpecialRule *rule;       /* special_call: the rule differentiating `jaxpr` */
  int nbranches;                 /* cond: the closed branch jaxprs (index i runs */
  int nfns;                      /* custom derivatives: the user's rules, compared by  */
  jx_fn *fns[2];                 /* identity (JAX's jvp_jaxpr_fun / fwd / bwd); held:  */
                                 /* custom_jvp_call {jvp}, custom_vjp_call {fwd, bwd}, */
                                 /* custom_lin {bwd}                                   */
  int nres;                      /* custom_lin: residual operands before the tangents */
  const char *text;              /* debug_print: the format, interned (immortal, so
                                    compared by pointer) */
  struct Jaxpr *branches[PRIM_MAX_BRANCHES]; /* branches[i]); references held;
                                    while: {cond_jaxpr, body_jaxpr}; scan: {jaxpr} */
  int nconsts[2];                /* while: cond_nconsts, body_nconsts; scan:
                                    num_consts, num_carry */
  int64_t length;                /* scan: trips; while: the trip bound (0: none) */
  int unroll;                    /* scan: trips per loop step (a hint) */
  bool reverse;                  /* scan: from the last slice to the first */
  bool tiled;                    /* all_gather, psum_scatter, all_to_all: tiled */
  int axis2;                     /* all_to_all: concat_axis (`axis`: split_axis) */
  int16_t perm[PRIM_MAX_AXIS_SIZE]; /* ppermute: 1 + the destination of each source
                                    device (0: it sends nothing) */
  const struct ShardSpec *shard; /* shard_map: mesh and specs (interned: compared by
                                    address; trace/sharding.h) */
} PrimParams;


/* Structural hash and equality of p's params: every field p uses, sub-jaxprs compared
 * by structure (never pointers or padding bytes). For CSE and caches. */
uint64_t prim_params_hash(Prim p, const PrimParams *pp);
bool prim_params_equal(Prim p, const PrimParams *a, const PrimParams *b);

/* An abstract value: what a tracer knows about the array it stands for. */
typedef struct Aval {
  jx_dtype dtype;
  bool weak;
  int ndim;
  int64_t shape[JX_MAX_NDIM];
} Aval;

/* Number of results of p applied to nin operands with params pp (threefry2x32: 2;
 * sort: one per operand; jit: its jaxpr's outputs; otherwise 1). */
int prim_nout(Prim p, int nin, const PrimParams *pp);
/* A Jaxpr (JAX's closed jaxpr): typed variables, equations applying primitives,
 * constants closed over, and outputs. The type lives here because primitives take
 * jaxprs as parameters (jit, and later control flow); src/jaxpr builds, checks,
 * prints and simplifies them. Refcounted: equations holding one as a parameter share
 * it (jaxpr_ref / jaxpr_free). */
typedef struct JaxprEqn {
  Prim prim;
  PrimParams params;
  int nin;
  int *in;   /* variable ids */
  int nout;
  int *out;  /* variable ids of the results (prim_nout of them) */
} JaxprEqn;

typedef struct Jaxpr {
  int64_t refcount;
  char *name;        /* the function's name (jit prints it); NULL: none */
  int nvars, vcap;
  Aval *vars;        /* every variable's aval, by id */
  int nin;
  int *invars;
  int nconst;
  int *constvars;
  jx_array **consts; /* held with array_retain */
  int neqns, ecap;
  JaxprEqn *eqns;
  int nout;
  int *outvars;
  void *compiled;    /* a cache, not part of its value: the programs jit compiled */
  void (*compiled_free)(void *compiled); /* for it as a loop body (released with it) */
} Jaxpr;

/* Evaluates j on nin = j->nin inputs by binding each equation's primitive (so it
 * composes with every trace level): out[0 .. j->nout) new references. */
jx_status prim_eval_jaxpr(const Jaxpr *j, jx_array *const *in, jx_array **out);
/* Structural hash and equality of jaxprs: variables compared by position, params by
 * prim_params_equal, constants by aval and contents. */
uint64_t prim_jaxpr_hash(const Jaxpr *j);
bool prim_jaxpr_equal(const Jaxpr *a, const Jaxpr *b);

/* Abstract evaluation: validates p's operands and params and computes the results'
 * avals out[0 .. prim_nout), without data. The shared check every trace level relies
 * on; on failure sets JX_ERR_SHAPE / JX_ERR_DTYPE naming the primitive and returns
 * false. */
bool prim_abstract_eval(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out);
/* True if p has an abstract eval rule (every primitive should: a test walks them). */
bool prim_has_abstract_rule(Prim p);
/* Aval of an array. */
Aval prim_aval_of(const jx_array *a);
/* An aval as error messages spell it (array_type_str: "float32[3]") into buf (n bytes). */
void aval_text(char *buf, size_t n, const Aval *a);

/* dot_general as a batched matrix product: x permuted by xperm to (batch, free,
 * contract) and reshaped to (B, M, K); y permuted by yperm to (batch, contract, free)
 * and reshaped to (B, K, N); the (B, M, N) product reshapes to the result. */
typedef struct DotLayout {
  int xperm[JX_MAX_NDIM], yperm[JX_MAX_NDIM];
  int64_t B, M, K, N;
} DotLayout;
void prim_dot_layout(const PrimParams *pp, const Aval *x, const Aval *y, DotLayout *out);

const char *prim_name(Prim p);
PrimKind prim_kind(Prim p);
AluOp prim_alu_op(Prim p);

/* The one entry point: applies p to nin inputs, giving nout = prim_nout results in
 * out[] (new references; all NULL on failure, with the error set). */
jx_status prim_bind_n(Prim p, int nin, jx_array *const *in, const PrimParams *params, int nout,
                      jx_array **out);
/* prim_bind_n for primitives with one result. */
jx_array *prim_bind(Prim p, int nin, jx_array *const *in, const PrimParams *params);

/* Convenience wrappers over prim_bind. */
jx_array *prim_unary(Prim p, jx_array *x);
jx_array *prim_binary(Prim p, jx_array *x, jx_array *y);
/* lax.select_n with a bool predicate: cond ? x : y (equal shapes; x, y equal dtypes). */
jx_array *prim_select(jx_array *cond, jx_array *x, jx_array *y);
/* a * b + c rounded once (the fma primitive: jaxc's own, not JAX's; float32/float64
 * arrays of one shape and dtype): what XLA's CPU backend computes where it contracts a
 * multiply and an add, which jax.random's samplers rely on bit for bit. */
jx_array *prim_fma(jx_array *a, jx_array *b, jx_array *c);
/* lax.convert_element_type (weak: result weak type). */
jx_array *prim_convert(jx_array *x, jx_dtype dtype, bool weak);
jx_array *prim_bitcast(jx_array *x, jx_dtype dtype);
/* Reduces the axes with mask[d] true (removed from the shape). Result dtype = x's. */
jx_array *prim_reduce(Prim p, jx_array *x, const bool *mask);
jx_array *prim_reshape(jx_array *x, int ndim, const int64_t *shape);
jx_array *prim_transpose(jx_array *x, const int *perm);
/* lax.broadcast_in_dim: x's dim i becomes result dim bdims[i] (bdims increasing); x's
 * dims are equal to the result's or 1. */
jx_array *prim_broadcast_in_dim(jx_array *x, int ndim, const int64_t *shape,
                                const int *bdims);
/* lax.pad with lo/hi >= 0 and no interior padding. */
jx_array *prim_pad(jx_array *x, const int64_t *lo, const int64_t *hi, double value);
/* lax.slice with strides: 0 <= start <= stop <= dim, step >= 1. */
jx_array *prim_slice(jx_array *x, const int64_t *start, const int64_t *stop,
                     const int64_t *step);
/* lax.rev over the axes with mask[d] true. */
jx_array *prim_rev(jx_array *x, const bool *mask);
/* lax.concatenate: equal dtypes and equal shapes except along axis. */
jx_array *prim_concatenate(int n, jx_array *const *xs, int axis);
/* Gathers along `axis` of x with integer indices (any shape): the result's shape is
 * x.shape[:axis] + idx.shape + x.shape[axis+1:]; indices are clamped to [0, dim-1]. */
jx_array *prim_gather(jx_array *x, jx_array *idx, int axis);
/* lax.dot_general with equal input dtypes; result dims: batch, lhs free, rhs free. */
jx_array *prim_dot_general(jx_array *x, jx_array *y, int ncontract, const int *lhs_contract,
                           const int *rhs_contract, int nbatch, const int *lhs_batch,
                           const int *rhs_batch);
/* The threefry2x32 hash of counts (c0, c1) under key (k0, k1): four uint32 arrays of
 * one shape -> its two uint32 words out[0], out[1] (JAX's threefry2x32_p). */
jx_status prim_threefry2x32(jx_array *k0, jx_array *k1, jx_array *c0, jx_array *c1,
                            jx_array **out);
/* lax.sort of n operands of one shape along axis, keyed by operand 0 (num_keys=1;
 * stable; -0.0 == 0.0; NaN last): out[i] is operand i permuted by that sort. */
jx_status prim_sort_n(int n, jx_array *const *xs, int axis, jx_array **out);
/* prim_sort_n of one operand; and the sorting permutation (the sort of (x, iota): int32
 * positions, int64 when x64 is on and dimension needs it: dtype chosen by caller). */
jx_array *prim_sort(jx_array *x, int axis);
jx_array *prim_argsort(jx_array *x, int axis, jx_dtype index_dtype);
/* jax.jit's call primitive: applies the closed jaxpr j to nin = j->nin inputs, giving
 * j->nout results, as one equation holding j (JAX's jit/pjit_p). */
jx_status prim_call(struct Jaxpr *j, int nin, jx_array *const *in, jx_array **out);
/* special_call: prim_call of j, differentiated by `rule` instead of through j. */
jx_status prim_special_call(const SpecialRule *rule, struct Jaxpr *j, int nin, jx_array *const *in,
                               jx_array **out);
/* lax.cond's primitive: index (an int32 scalar, clamped to [0, n)) picks which of the
 * n closed jaxprs runs on the nin operands (each branch takes nin inputs of the
 * operands' types and all give equal output types); out[] gets branches[0]->nout
 * results (JAX's cond_p). */
jx_status prim_cond(int n, struct Jaxpr *const *branches, jx_array *index, int nin,
                    jx_array *const *in, jx_array **out);
/* lax.while_loop's primitive (JAX's while_p): operands are cond's nc consts, body's nb
 * consts, then the carries; cond(cconsts, carry) -> bool scalar, body(bconsts, carry)
 * -> carry. max_trips > 0 bounds the trips (jx_lax_while_loop_bounded; reverse-mode
 * differentiable). out[] gets the final carries. */
jx_status prim_while(struct Jaxpr *cond, int nc, struct Jaxpr *body, int nb, int64_t max_trips,
                     int nin, jx_array *const *in, jx_array **out);
/* lax.scan's primitive (JAX's scan_p): operands are nconsts consts, ncarry carries,
 * then the xs (leading axis `length`); body(consts, carry, x slices) -> (carry, y
 * slices). out[] gets the final carries, then the ys stacked along a new axis 0. */
jx_status prim_scan(struct Jaxpr *body, int nconsts, int ncarry, int64_t length, bool reverse,
                    int unroll, int nin, jx_array *const *in, jx_array **out);
/* x with upd added at the positions gather(x, idx, axis) reads (clamped): the
 * transpose of prim_gather. upd has gather's result shape. */
jx_array *prim_scatter_add(jx_array *x, jx_array *idx, jx_array *upd, int axis);
/* ---- custom derivatives and rematerialization (trace/custom.c). The primal
 * program is a closed jaxpr taking the operands; rules are jx_fn held by reference.
 * jax.custom_jvp's custom_jvp_call: runs `primal`; JVP calls `jvp` on (nondiff
 * operands, diff primals, diff tangents) -> (outs, tangent outs); nondiff is a bit mask
 * of operands (at most 32) that get no tangent (nondiff_argnums). */
jx_status prim_custom_jvp_call(struct Jaxpr *primal, jx_fn *jvp, unsigned nondiff, int nin,
                               jx_array *const *in, jx_array **out);
/* jax.custom_vjp's custom_vjp_call: runs `primal`; JVP calls fwd (-> outs, residuals)
 * and binds custom_lin; its transpose calls bwd(residuals, cotangents). */
jx_status prim_custom_vjp_call(struct Jaxpr *primal, jx_fn *fwd, jx_fn *bwd, int nin,
                               jx_array *const *in, jx_array **out);
/* custom_lin (JAX's custom_lin_p): the tangents of custom_vjp_call's outputs as a
 * linear function of the operands' tangents known only through bwd: operands are the
 * nres residuals then one tangent per primal input; results have the primal outputs'
 * types. Evaluating it (forward mode) is an error, as in JAX. */
jx_status prim_custom_lin(struct Jaxpr *primal, jx_fn *bwd, int nres, int nin,
                          jx_array *const *in, jx_array **out);
/* jax.checkpoint's primitive (remat): calls `jaxpr`; under differentiation the values
 * the policy (flags: PRIM_CHECKPOINT_*) does not save are recomputed. */
enum { PRIM_CHECKPOINT_NOTHING = 0, PRIM_CHECKPOINT_EVERYTHING = 1, PRIM_CHECKPOINT_DOTS = 2,
       PRIM_CHECKPOINT_DOTS_NO_BATCH = 3 };
jx_status prim_checkpoint(struct Jaxpr *j, unsigned policy, int nin, jx_array *const *in,
                          jx_array **out);
/* jax.debug.print's primitive: prints fmt ("{}" / "{0}" placeholders, "{{" "}}"
 * escapes, already checked) with the n operands' values when evaluated; no results.
 * Under vmap it prints once per batch element, under jvp the primals (as JAX). */
jx_status prim_debug_print(const char *fmt, int n, jx_array *const *in);
/* ---- linear algebra (lax.linalg primitives; trace/linalg.c). Operands are float32 or
 * float64 with at least two dims; leading dims are batch dims, equal across operands.
 * Errors: JX_ERR_SHAPE (rank < 2, non-square where square is needed, mismatched
 * shapes), JX_ERR_DTYPE (not float32/64), naming the primitive and the shapes. */
/* True for cholesky .. svd. */
bool prim_is_linalg(Prim p);
/* The routine computing linalg primitive p on operands `in` (avals) with params pp. */
void prim_linalg_routine(Prim p, const Aval *in, const PrimParams *pp, Routine *r);
/* Abstract eval and result count of the linalg primitives (prim_abstract_eval /
 * prim_nout dispatch here). */
bool prim_linalg_abstract_eval(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out);
int prim_linalg_nout(Prim p, const PrimParams *pp);
/* lax.linalg.cholesky_p: the lower Cholesky factor of a (read from its lower half);
 * NaNs for a batch entry that is not positive definite. */
jx_array *prim_cholesky(jx_array *a);
/* lax.linalg.triangular_solve_p with flags LINALG_LEFT_SIDE | LOWER | TRANSPOSE_A |
 * CONJUGATE_A | UNIT_DIAGONAL. */
jx_array *prim_triangular_solve(jx_array *a, jx_array *b, unsigned flags);
/* lax.linalg.tridiagonal_solve_p: dl, d, du (..., m), b (..., m, n) -> x (..., m, n). */
jx_array *prim_tridiagonal_solve(jx_array *dl, jx_array *d, jx_array *du, jx_array *b);
/* lax.linalg.lu_p: out[0] lu, out[1] pivots, out[2] permutation. */
jx_status prim_lu(jx_array *a, jx_array **out);
/* lax.linalg.qr_p: out[0] q, out[1] r (flags: LINALG_FULL_MATRICES). */
jx_status prim_qr(jx_array *a, unsigned flags, jx_array **out);
/* lax.linalg.eigh_p (no subset): out[0] v, out[1] w (flags: LINALG_LOWER, LINALG_UNSORTED). */
jx_status prim_eigh(jx_array *a, unsigned flags, jx_array **out);
/* lax.linalg.svd_p: out[0] s and, with LINALG_COMPUTE_UV, out[1] u, out[2] vt
 * (flags: LINALG_FULL_MATRICES | LINALG_COMPUTE_UV). */
jx_status prim_svd(jx_array *a, unsigned flags, jx_array **out);
/* lax.linalg.eig_p: out[0] w, then vl (LINALG_COMPUTE_LEFT), then vr
 * (LINALG_COMPUTE_RIGHT), all complex. */
jx_status prim_eig(jx_array *a, unsigned flags, jx_array **out);

/* ---- the fft primitive (lax.fft's fft_p; trace/fft.c): params.flags = FFT_TYPE_*,
 * params.ndim/shape = fft_lengths (1 to FFT_MAX_RANK), over the trailing axes. */
bool prim_fft_abstract_eval(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out);
void prim_fft_routine(const Aval *in, const PrimParams *pp, Routine *r);
/* "FFT", "IFFT", "RFFT", "IRFFT". */
const char *prim_fft_type_name(unsigned type);
/* lax.fft(x, fft_type, fft_lengths) on an operand of the right dtype (complex; float
 * for RFFT): no conversion here. */
jx_array *prim_fft(jx_array *x, unsigned type, int nlens, const int64_t *lens);

/* lax.broadcasted_iota. */
jx_array *prim_iota(jx_dtype dtype, int ndim, const int64_t *shape, int dimension);

#endif
