/* lower.h -- the one lowering of primitives to kernels, shared by eager evaluation (a
 * primitive runs as a one-equation program: trace/eager.c) and jit (a whole jaxpr:
 * jit/lower.c). Every value is a Lazy: a source (a program slot holding a buffer, or a
 * scalar expression of the flat index "idx" of its contiguous shape) seen through a
 * shape tracker. Movement primitives change only the tracker; elementwise primitives
 * build expressions; reductions, dot_general and routines emit steps (kernels whose
 * loads inline their producers, or routine calls) into a Program. */
#ifndef JAXC_TRACE_LOWER_H
#define JAXC_TRACE_LOWER_H

#include "backend/backend.h"
#include "core/shape.h"
#include "trace/prim.h"

/* Where a program value lives: an input, a constant, or a kernel's output. */
typedef enum SlotKind { SLOT_INPUT, SLOT_CONST, SLOT_TEMP } SlotKind;

typedef struct Step {
  Kernel kernel;     /* a kernel step, or ... */
  bool is_routine;   /* ... a routine step (sort, scatter, gemm): */
  Routine routine;
  int *args; /* kernel.nargs (or routine.nin) slots read */
  int nout;  /* 1 + kernel.nextra (or routine.nout) ... */
  int *outs; /* ... slots written */
  int nfree; /* slots whose last use is this step */
  int *frees;
  char *name; /* a kernel's k_<ops>_<size>_<hash> (render_c), for JAXC_TRACE; else NULL */
} Step;

/* Slots a step reads. */
static inline int step_nargs(const Step *s) { return s->is_routine ? s->routine.nin : s->kernel.nargs; }

typedef struct ProgramOutput {
  int slot;          /* the buffer ... */
  ShapeTracker *st;  /* ... seen through this view */
  Aval aval;
} ProgramOutput;

typedef struct Program {
  int nslots;
  SlotKind *kinds;
  int *index;        /* SLOT_INPUT: input number; SLOT_CONST: const number */
  int nsteps;
  Step *steps;
  int nout;
  ProgramOutput *outs;
  int nkernels_fused_ops; /* primitive applications folded into kernels (stats) */
} Program;

void lower_program_free(Program *p);
/* kernel_check on every kernel step and routine_check on every routine step of p, after
 * the lowering pass `pass`: JX_ERR_INTERNAL naming the pass and the step otherwise. */
jx_status lower_program_check(const Program *p, const char *pass);

typedef struct Lazy {
  int slot;              /* >= 0: the source is this slot's buffer */
  const AluExp *src;     /* else: value at VARIABLE "idx" over src_shape */
  int src_ndim;
  int64_t src_shape[JX_MAX_NDIM];
  ShapeTracker *st;      /* the view of the source that is this value (owned) */
  Aval aval;
  int uses;              /* consumers left (equations and outputs; jit's bookkeeping) */
} Lazy;

/* A lowering in progress: steps are appended to p. */
typedef struct Lower {
  Program *p;
  bool cheap_recompute;  /* the device's (backend.h) */
  int recompute_ops;     /* the device's (backend.h), 0 replaced by 2 */
  int dot_unroll_max_k;  /* the device's (backend.h) */
  int dot_rows_max_n;    /* the device's (backend.h) */
  bool dot_cols;         /* the device's (backend.h) */
  bool gemm_k_major;     /* the device's (backend.h) */
  bool dot_gemm;         /* float32/float64 products of LOWER_EAGER_GEMM_MIN_WORK
                          * multiply-adds or more as the GEMM routine (eager.c, on a
                          * device with eager_dot_gemm) */
} Lower;

/* A lowering into p with device be's settings (NULL: none), each as the configuration
 * overrides it (core/config.h: JAXC_DOT_UNROLL_MAX_K and the like); eager (trace/eager.c)
 * and jit (jit/lower.c) lower with the same. */
Lower lower_settings(Program *p, const Backend *be);
/* Below this many multiply-adds an eager product stays a kernel where dot_gemm is set
 * (the interpreter's few microseconds; it accumulates in float64 and rounds once, so
 * tiny products keep the bits of their jitted and vmapped forms' kernels). */
#define LOWER_EAGER_GEMM_MIN_WORK 512
/* A new slot of p; -1 with JX_ERR_OOM. */
int lower_new_slot(Lower *L, SlotKind kind, int index);
/* The value of lazy v at per-dim indices idx (of v's shape), with slot loads as
 * GLOBAL_INDEX(slot). Reads in padding give 0. */
const AluExp *lower_load(const Lazy *v, const AluExp *const *idx);
/* Whether dot_general (pp) of x, y lowers as a product's rows kernel that recomputes x
 * from its sources (lower_dot_rows): x must then stay lazy (jit/lower.c does not store a
 * shared product operand for it). */
bool lower_dot_rows_inlines(const Lower *L, const PrimParams *pp, const Lazy *x, const Lazy *y, const Aval *av);
/* Appends a step reading `args` and writing nout new slots; returns the first (the
 * others follow it), -1 on failure. */
int lower_push_step(Lower *L, const Step *st, const int *args, int nargs, int nout);
/* Emits kernel k (exp and extra outputs over SPECIAL gidx/ridx with slot loads, renumbered
 * here to kernel args) as a step; returns its first output slot, -1 on failure. */
int lower_emit(Lower *L, Kernel *k);
/* Materializes v into a contiguous buffer slot (no-op if it already is one). */
bool lower_realize(Lower *L, Lazy *v);
/* Materializes the expressions vs[0 .. n) (slot < 0, one shape, n <= KERNEL_MAX_OUTS)
 * with one kernel of n outputs (threefry's two words in one pass). */
bool lower_realize_group(Lower *L, int n, Lazy *const *vs);

/* The lowering rule of primitive p: reads operands in[0 .. nin), fills out[0 .. nout)
 * (results of avals[0 .. nout)); false with the error set. NULL for a primitive
 * without one; lower_has_rule gives the documented reason. */
typedef bool (*LowerRule)(Lower *L, Prim p, const PrimParams *pp, int nin, Lazy *const *in,
                          int nout, Lazy *out, const Aval *avals);
LowerRule lower_rule(Prim p);
/* True if p has a lowering rule; else *why (if why) is the documented reason it has
 * none (NULL: a missing rule). */
bool lower_has_rule(Prim p, const char **why);

#endif
