/* loop_c.c -- a whole loop (ir/loop.h) as one C function for the cpu backend: its
 * kernels rendered by render_c into the same translation unit with hidden visibility
 * (so the compiler may inline them, small ones down to a few instructions), then
 *   int64_t NAME(void **s, int64_t length, int (*host)(void *, int), void *ctx)
 * which runs the trips over the slot table s: kernels marked inline are called on the
 * whole range [0, size) directly; the others (routines, kernels worth the thread pool)
 * through host(ctx, step), which reads its operands from s (nonzero: failed, the loop
 * returns -1). A while evaluates its predicate in the generated code and stops when it
 * is false or after length trips (length < 0: no bound); a scan runs length trips. The
 * carries' slots are exchanged after each trip (a carry whose new value is another
 * carry, a constant or an x is first copied into a temporary of its own); returns the
 * trips taken. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "ir/loop.h"
#include "render/emit.h"
#include "render/render.h"

static void render_step(Buf *b, const LoopPlan *l, int k, bool inline_call, char (*names)[RENDER_NAME_MAX]) {
  const LoopStep *st = &l->steps[k];
  if (!inline_call) {
    buf_printf(b, "    if (host(ctx, %d)) return -1;\n", k);
    return;
  }
  buf_str(b, "    {\n      void *const in[] = {");
  for (int a = 0; a < st->nargs; a++) buf_printf(b, "%ss[%d]", a ? ", " : "", st->args[a]);
  if (!st->nargs) buf_str(b, "0");
  buf_str(b, "};\n      void *const out[] = {");
  for (int o = 0; o < st->nout; o++) buf_printf(b, "%ss[%d]", o ? ", " : "", st->outs[o]);
  buf_printf(b, "};\n      %s(in, out, 0, %" PRId64 ");\n    }\n", names[k], st->kernel->size);
}

char *render_loop_c(const LoopPlan *l, const bool *inline_call, char name[RENDER_NAME_MAX]) {
  char (*names)[RENDER_NAME_MAX] = calloc((size_t)l->nsteps + 1, RENDER_NAME_MAX);
  char **texts = calloc((size_t)l->nsteps + 1, sizeof *texts);
  Buf b = {0};
  bool ok = names && texts;
  if (!ok) error_set(JX_ERR_OOM, "render_loop_c: out of memory");
  buf_str(&b, "#pragma GCC visibility push(hidden)\n");
  for (int k = 0; ok && k < l->nsteps; k++) {
    if (!l->steps[k].kernel || !inline_call[k]) continue;
    ok = (texts[k] = render_kernel(&render_c, l->steps[k].kernel, names[k])) != NULL;
    bool seen = false; /* the same kernel twice: one definition; a name clash: give up */
    for (int j = 0; ok && j < k && !seen; j++) {
      if (!texts[j] || strcmp(names[j], names[k]) != 0) continue;
      seen = true;
      if (strcmp(texts[j], texts[k]) != 0) {
        error_set(JX_ERR_UNSUPPORTED, "render_loop_c: two kernels named %s", names[k]);
        ok = false;
      }
    }
    if (ok && !seen) buf_str(&b, texts[k]);
  }
  buf_str(&b, "#pragma GCC visibility pop\n\n");
  /* the name: the kernels' and the structure's hash (the cache keys on the full text) */
  uint64_t h = 1469598103934665603ull;
  for (const char *c = b.s ? b.s : ""; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
  h = (h ^ (uint64_t)l->nslots) * 1099511628211ull;
  for (int k = 0; k < l->nsteps; k++) h = (h ^ (uint64_t)(k * 31 + inline_call[k])) * 1099511628211ull;
  for (int i = 0; i < l->ncopy; i++) h = (h ^ (uint64_t)(l->copy_src[i] * 131 + l->copy_dst[i])) * 1099511628211ull;
  snprintf(name, RENDER_NAME_MAX, "loop_%s_%d_%08" PRIx64, l->scan ? "scan" : "while", l->nsteps,
           h & 0xffffffffu);
  buf_printf(&b, "int64_t %s(void **s, int64_t length, int (*host)(void *, int), void *ctx) {\n", name);
  buf_str(&b, "  int64_t trip = 0;\n");
  if (l->scan) {
    buf_str(&b, "  for (; trip < length; trip++) {\n");
    buf_printf(&b, "    const int64_t t = %s;\n", l->reverse ? "length - 1 - trip" : "trip");
    for (int i = 0; i < l->nx; i++)
      buf_printf(&b, "    s[%d] = (char *)s[%d] + t * %zuLL;\n", l->x_slot[i], l->x_base[i], l->x_bytes[i]);
  } else {
    buf_str(&b, "  for (; length < 0 || trip < length; trip++) {\n");
  }
  for (int k = 0; ok && k < l->nsteps; k++) {
    if (!l->scan && k == l->ncond)
      buf_printf(&b, "    if (!*(const unsigned char *)s[%d]) break;\n", l->pred);
    render_step(&b, l, k, inline_call[k] && l->steps[k].kernel, names);
  }
  if (!l->scan && l->ncond == l->nsteps)
    buf_printf(&b, "    if (!*(const unsigned char *)s[%d]) break;\n", l->pred);
  for (int i = 0; i < l->ny; i++)
    buf_printf(&b, "    __builtin_memcpy((char *)s[%d] + t * %zuLL, s[%d], %zu);\n", l->y_base[i], l->y_bytes[i],
               l->y_src[i], l->y_bytes[i]);
  for (int i = 0; i < l->ncopy; i++)
    buf_printf(&b, "    __builtin_memcpy(s[%d], s[%d], %zu);\n", l->copy_dst[i], l->copy_src[i], l->copy_bytes[i]);
  for (int i = 0; i < l->nswap; i++)
    buf_printf(&b, "    { void *x = s[%d]; s[%d] = s[%d]; s[%d] = x; }\n", l->swap[i][0], l->swap[i][0],
               l->swap[i][1], l->swap[i][1]);
  buf_str(&b, "  }\n  return trip;\n}\n");
  for (int k = 0; texts && k < l->nsteps; k++) free(texts[k]);
  free(texts), free(names);
  char *text = buf_take(&b);
  if (!ok || !text) {
    if (ok) error_set(JX_ERR_OOM, "render_loop_c: out of memory");
    free(text);
    return NULL;
  }
  return text;
}
