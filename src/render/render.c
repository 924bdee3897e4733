/* render.c -- a kernel as one function of a target (render.h): the framing's body
 * under a signature, named after its text, with the IR as a comment above it. */
#include "render/render.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "render/emit.h"

char *render_kernel(const RenderLang *lang, const Kernel *k, char name[RENDER_NAME_MAX]) {
  if (!k || !k->exp || k->nargs < 0 || k->nargs > KERNEL_MAX_ARGS) {
    error_set(JX_ERR_INTERNAL, "render_kernel: invalid kernel");
    return NULL;
  }
  Buf body = {0};
  int nlocals = 0;
  bool ok = lang->frame(lang, k, &body, &nlocals);
  buf_str(&body, "}\n");
  char *text = buf_take(&body);
  if (!ok || !text) {
    free(text);
    if (ok) error_set(JX_ERR_OOM, "render: out of memory");
    return NULL;
  }
  emit_kernel_name(k, text, name);
  Buf full = {0};
  char *printed = kernel_print(k); /* the IR, as a comment above the function */
  if (printed) {
    buf_str(&full, "/*\n");
    for (char *line = printed, *nl; *line; line = nl ? nl + 1 : line + strlen(line)) {
      nl = strchr(line, '\n');
      size_t len = nl ? (size_t)(nl - line) : strlen(line);
      buf_str(&full, " * ");
      for (size_t c = 0; c < len; c++) /* never close the comment early */
        buf_add(&full, line[c] == '*' && c + 1 < len && line[c + 1] == '/' ? "+" : line + c, 1);
      buf_str(&full, "\n");
      if (!nl) break;
    }
    buf_str(&full, " */\n");
    free(printed);
  }
  buf_printf(&full, "%svoid %s%s {\n", lang->fn_prefix, name, lang->params);
  buf_str(&full, text);
  free(text);
  char *result = buf_take(&full);
  if (!result) error_set(JX_ERR_OOM, "render: out of memory");
  return result;
}

/* --------------------------------------------------------------- prelude */

const char *render_prelude(void) { return render_c.prelude; }
size_t render_prelude_len(void) { return *render_c.prelude_len; }
