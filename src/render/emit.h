/* emit.h -- the portable half of the renderer, shared by every C-family framing (c.c
 * for cpu threads, a CUDA C framing for GPUs): a text buffer, the C types of each
 * dtype, the per-op format table, constants, and the expression DAG of a kernel part
 * rendered as locals. Nothing here knows about loops, threads or blocks. */
#ifndef JAXC_RENDER_EMIT_H
#define JAXC_RENDER_EMIT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/render.h"

/* ------------------------------------------------------------ text buffer */

/* Growing text; an allocation failure sets oom and drops later appends. */
typedef struct Buf {
  char *s;
  size_t len, cap;
  bool oom;
} Buf;

static inline void buf_add(Buf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (b->len + n + 1 > cap) cap *= 2;
    char *p = realloc(b->s, cap);
    if (!p) {
      b->oom = true;
      return;
    }
    b->s = p;
    b->cap = cap;
  }
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = 0;
}

static inline void buf_str(Buf *b, const char *s) { buf_add(b, s, strlen(s)); }

static inline void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void buf_printf(Buf *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    buf_add(b, tmp, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    b->oom = true;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  buf_add(b, big, (size_t)n);
  free(big);
}

/* Takes the text (the buffer is reset); NULL if it ran out of memory. */
static inline char *buf_take(Buf *b) {
  char *s = b->oom ? NULL : b->s;
  if (b->oom) free(b->s);
  if (!s && !b->oom) s = calloc(1, 1);
  *b = (Buf){0};
  return s;
}

/* ------------------------------------------------------------ dtypes */

/* How values of a dtype live in generated code. Formats take the operand as $0. */
typedef struct EmitType {
  const char *elem;      /* buffer element type */
  const char *ctype;     /* type values are computed in (f16/bf16: float) */
  const char *sfx;       /* suffix of the prelude helpers for ctype: jx_add_i32 */
  const char *wide;      /* unsigned type integer arithmetic wraps in */
  const char *load;      /* buffer element -> value */
  const char *store;     /* value -> buffer element */
  const char *bits;      /* value -> unsigned bits of the same width (BITCAST) */
  const char *from_bits; /* unsigned bits -> value */
  const char *round;     /* float result -> value of the dtype (f16/bf16 only) */
  const char *round64;   /* double -> value of the dtype (floats only) */
} EmitType;

extern const EmitType emit_types[JX_NUM_DTYPES];

/* Appends the buffer element of dtype d holding `value` (d's store format). */
void emit_store(Buf *b, jx_dtype d, const char *value);

/* Appends constant v of dtype d as a literal that reads back exactly. */
void emit_const(Buf *b, jx_dtype d, AluValue v);

/* ------------------------------------------------------------ expressions */

/* One part of a kernel (its exp, an epilogue, a first phase) rendered as statements
 * into `out` (each line prefixed by `indent`). */
typedef struct EmitPart {
  const RenderLang *lang;
  Buf *out;
  const char *indent;
  int *nlocals; /* counter shared by the parts of a kernel: v0, v1, ... */
} EmitPart;

/* Renders the DAGs below roots[0..nroots) (the outputs of one kernel, which share their
 * nodes); results[r] gets the malloc'd text of root r's value (false: failed, error
 * set). Shared nodes (and long expressions) become `const` locals, in topological
 * order. SPECIAL and VARIABLE leaves render as their names: the framing declares them
 * (gidx, ridx, loop variables). */
bool emit_parts(EmitPart *p, const AluExp *const *roots, int nroots, char **results);

/* emit_parts for one root; the malloc'd text of its value, or NULL (error set). */
char *emit_part(EmitPart *p, const AluExp *root);

/* Appends the accumulator step acc = op(acc, x) of reduction r as an expression
 * (rounded for f16/bf16; wrapping forms for integers). */
bool emit_step(EmitPart *p, Buf *b, const Reduction *r, const char *acc, const char *x);

/* Whether e is a load whose index is guarded, in[valid ? i : 0] (reads in padding,
 * where the value is then discarded): emit_parts makes it a local read whether or not
 * it is used, so a select over it compiles to a blend. Element 0 is always readable:
 * backends allocate at least 64 bytes per buffer. */
bool emit_guarded_load(const AluExp *e);

/* ------------------------------------------------------------ kernels */

/* Appends `const T *restrict inI = (const T *)in[I];` for every input and
 * `T *restrict outO = (T *)out[O];` for every output but a row output, which the framing
 * declares (lang's restrict keyword). */
void emit_args(Buf *b, const RenderLang *lang, const Kernel *k);

/* The deterministic name k_<ops>_<size>_<hash of body> of kernel k into `name`. */
void emit_kernel_name(const Kernel *k, const char *body, char name[RENDER_NAME_MAX]);

/* ------------------------------------------------ hooks of parallel framings */

/* Appends a block-shared array `name` of `count` values of dtype d (lang->shared_fmt);
 * false with JX_ERR_UNSUPPORTED where the target has no shared memory. */
bool emit_shared(Buf *b, const RenderLang *lang, const char *indent, jx_dtype d,
                 const char *name, int64_t count);

/* Appends the target's block-wide barrier; false (JX_ERR_UNSUPPORTED) if it has none. */
bool emit_barrier(Buf *b, const RenderLang *lang, const char *indent);

/* Appends a butterfly over the lanes of a warp: for offsets W/2, W/4, ..., 1,
 * acc = step(acc, shuffle_xor(acc, offset)), so every lane ends with the reduction of
 * the warp's W values of `acc` (an lvalue of r's compute type) -- a tree, so floats
 * round differently from the interpreter (docs/kernels.md). false (JX_ERR_UNSUPPORTED)
 * if lang has no warp shuffle. */
bool emit_warp_reduce(EmitPart *p, Buf *b, const Reduction *r, const char *acc);

#endif
