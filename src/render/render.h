/* render.h -- the C-family source renderer shared by the native backends: one table of
 * per-op format strings (tinygrad's CStyleLanguage) plus a few per-target overrides,
 * turning a Kernel into one function, and the prelude of helpers those formats name
 * (src/render/prelude.h, embedded at build time). */
#ifndef JAXC_RENDER_RENDER_H
#define JAXC_RENDER_RENDER_H

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

typedef struct RenderLang {
  const char *name;            /* "c" */
  const char *fn_prefix;       /* before "void NAME(...)": "" or "extern \"C\" " */
  const char *restrict_kw;     /* "restrict" or "__restrict__" */
  const RenderOverride *overrides;
} RenderLang;

/* Plain C11 for the cpu backend (gcc, clang). */
extern const RenderLang render_c;

/* Renders kernel k as one function
 *   void NAME(void *const *in, void *out, int64_t start, int64_t end)
 * computing out[gidx] for every gidx in [start, end) (a subrange of [0, k->size)):
 * in[i] is input i (k->arg_dtypes[i] elements), out holds k->size elements of k->dtype
 * and does not alias an input. Reductions keep their accumulation order (ridx = 0, 1,
 * ... for each gidx), so results match the interpreter bit for bit. NAME is
 * deterministic, k_<ops>_<size>_<hash>, and is copied to `name`. Returns malloc'd text
 * (no prelude), or NULL with the error set (JX_ERR_OOM; JX_ERR_UNSUPPORTED for an op
 * the target lacks for a dtype, e.g. an ill-typed node). */
char *render_kernel(const RenderLang *lang, const Kernel *k, char name[RENDER_NAME_MAX]);

/* The prelude (src/render/prelude.h), NUL-terminated; its length in bytes. Generated
 * translation units are prelude + rendered kernels. */
const char *render_prelude(void);
size_t render_prelude_len(void);

#endif
