/* render.h -- the C-family source renderer shared by the native backends. Two halves:
 * the portable expression emitter (emit.h: C types per dtype, one table of per-op
 * formats with per-target overrides -- tinygrad's CStyleLanguage -- constants, the
 * expression DAG as locals) and per-target framings that place it in loops or threads
 * (c.c: the cpu backend's thread ranges and SIMD blocks; a CUDA C framing fills the
 * same hooks). The prelude of helpers the formats name is split the same way: a
 * portable part (prelude.h) after a target part (prelude_c.h for GCC/Clang on the
 * CPU), both embedded at build time. */
#ifndef JAXC_RENDER_RENDER_H
#define JAXC_RENDER_RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/alu.h"

/* Longest kernel name, with its terminating NUL. */
#define RENDER_NAME_MAX 96

/* What differs between C-family targets. The op formats are shared; a target replaces
 * single entries through `overrides` ({op, float format, integer format}, terminated
 * by an entry with fmt_float == fmt_int == NULL). */
typedef struct RenderOverride {
  AluOp op;
  const char *fmt_float, *fmt_int;
} RenderOverride;

struct Buf;
typedef struct RenderLang RenderLang;

/* A target: the emitter's per-target entries and its framing. Formats use $-fields:
 * $T a compute type, $N a name, $K a count, $0/$1 operands. */
struct RenderLang {
  const char *name;            /* "c", "cuda" */
  const char *fn_prefix;       /* before "void NAME(...)": "" or "extern \"C\" __global__ " */
  const char *params;          /* the parameter list after NAME, "(void *const *in, ...)" */
  const char *restrict_kw;     /* "restrict" or "__restrict__" */
  const RenderOverride *overrides;
  /* The framing: appends the body of kernel k (after the opening brace, up to but not
   * including the closing one) computing every output element whose index it owns.
   * nlocals numbers the emitter's locals. false: failed, error set. */
  bool (*frame)(const RenderLang *lang, const Kernel *k, struct Buf *body, int *nlocals);
  /* Where this thread's output index comes from: NULL where the framing loops over a
   * range it is given (c: [start, end) of the thread pool); a GPU target's expression,
   * e.g. "((int64_t)blockIdx.x * blockDim.x + threadIdx.x)". */
  const char *global_index;
  const char *shared_fmt;       /* block-shared array, "__shared__ $T $N[$K];"; NULL: none */
  const char *barrier;          /* block-wide barrier statement, "__syncthreads();" */
  const char *warp_shuffle_fmt; /* $0 of lane (this lane ^ $1), "__shfl_xor_sync(~0u, $0, $1)" */
  int warp_size;                /* lanes of a warp-level reduction (32); 0: none */
  const char *div_const_f32;    /* float32 $0 / literal $1, correctly rounded; NULL: "/" */
  const char *prelude;          /* target part + portable part, NUL-terminated */
  const size_t *prelude_len;
};

/* Plain C11 for the cpu backend (gcc, clang): src/render/c.c. */
extern const RenderLang render_c;

/* Renders kernel k as one function
 *   <fn_prefix>void NAME<params> { <lang->frame's body> }
 * under the IR as a comment. For render_c the function is
 *   void NAME(void *const *in, void *const *out, int64_t start, int64_t end)
 * computing out[gidx] for every gidx in [start, end) (a subrange of [0, k->size)):
 * in[i] is input i (k->arg_dtypes[i] elements), out[o] holds k->size elements of output
 * o's dtype and aliases no input. Reductions keep ir/alu.h's accumulation order, so
 * results match the interpreter bit for bit (other targets: docs/kernels.md). NAME is
 * deterministic, k_<ops>_<size>_<hash>, and is copied to `name`. Returns malloc'd text
 * (no prelude), or NULL with the error set (JX_ERR_OOM; JX_ERR_UNSUPPORTED for an op
 * the target lacks for a dtype, e.g. an ill-typed node). */
char *render_kernel(const RenderLang *lang, const Kernel *k, char name[RENDER_NAME_MAX]);

struct LoopPlan;
/* A whole loop (ir/loop.h) as one C translation unit for the cpu backend (after the
 * prelude): the kernels of the steps with inline_call[k] set, then
 *   int64_t NAME(void **s, int64_t length, int (*host)(void *ctx, int step), void *ctx)
 * running the trips on the slot table s (render/loop_c.c says how). NAME (loop_...) is
 * copied to `name`. malloc'd text, or NULL with the error set. */
char *render_loop_c(const struct LoopPlan *l, const bool *inline_call, char name[RENDER_NAME_MAX]);

/* render_c's prelude (prelude_c.h + prelude.h), NUL-terminated; its length in bytes.
 * Generated translation units are prelude + rendered kernels. */
const char *render_prelude(void);
size_t render_prelude_len(void);

#endif
