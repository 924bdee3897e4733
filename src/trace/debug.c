/* debug.c -- jax.debug.print's primitive in the trace layer: the format interned as a
 * parameter, abstract evaluation (no results) and evaluation (formats the operands'
 * values with jx_to_string, as NumPy's str, and prints one line to stdout). Equations
 * run in program order, so prints are ordered (JAX's ordered=True); DCE keeps them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "trace/trace.h"

/* Formats are interned: a parameter is compared by pointer and lives as long as the
 * process (JAX keeps its format in the jaxpr the same way). */
static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static char **interned;
static int ninterned, cap_interned;

const char *debug_intern(const char *s) {
  const char *r = NULL;
  pthread_mutex_lock(&intern_lock);
  for (int i = 0; i < ninterned && !r; i++)
    if (!strcmp(interned[i], s)) r = interned[i];
  if (!r && ninterned == cap_interned) {
    int cap = cap_interned ? 2 * cap_interned : 16;
    char **grown = realloc(interned, (size_t)cap * sizeof *grown);
    if (grown) interned = grown, cap_interned = cap;
  }
  if (!r && ninterned < cap_interned && (interned[ninterned] = strdup(s))) r = interned[ninterned++];
  pthread_mutex_unlock(&intern_lock);
  if (!r) error_set(JX_ERR_OOM, "debug_print: out of memory");
  return r;
}

/* Writes fmt with the values' texts (texts[i] for field i) and a newline to out, then
 * flushes; false with JX_ERR_VALUE for a malformed format. out NULL: only checks. */
static bool debug_format(const char *fmt, int n, char *const *texts, FILE *out) {
  int next = 0;
  for (const char *c = fmt; *c; c++) {
    if ((c[0] == '{' && c[1] == '{') || (c[0] == '}' && c[1] == '}')) {
      if (out) fputc(*c, out);
      c++;
      continue;
    }
    if (*c == '}') {
      error_set(JX_ERR_VALUE, "debug_print: single '}' in format \"%s\"", fmt);
      return false;
    }
    if (*c != '{') {
      if (out) fputc(*c, out);
      continue;
    }
    const char *end = strchr(c, '}');
    int k = -1;
    if (end == c + 1) {
      k = next++;
    } else if (end) {
      char *stop;
      long v = strtol(c + 1, &stop, 10);
      if (stop == end && v >= 0 && v < 1 << 20) k = (int)v;
    }
    if (!end || k < 0 || k >= n) {
      error_set(JX_ERR_VALUE, "debug_print: format \"%s\" has %s at offset %d (%d values given; use {} "
                "or {index})", fmt, !end ? "an unclosed '{'" : k < 0 ? "a named or malformed field" :
                "a field past the values", (int)(c - fmt), n);
      return false;
    }
    if (out) fputs(texts[k], out);
    c = end;
  }
  if (out) fputc('\n', out), fflush(out);
  return true;
}

jx_status prim_debug_print(const char *fmt, int n, jx_array *const *in) {
  if (!debug_format(fmt, n, NULL, NULL)) return JX_ERR_VALUE;
  PrimParams pp = {.text = debug_intern(fmt)};
  if (!pp.text) return JX_ERR_OOM;
  return prim_bind_n(PRIM_debug_print, n, in, &pp, 0, NULL);
}

bool debug_abstract_eval(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  (void)in, (void)out;
  if (!pp->text) {
    error_set(JX_ERR_INTERNAL, "%s: no format", prim_name(p));
    return false;
  }
  return debug_format(pp->text, nin, NULL, NULL);
}

jx_status debug_impl(int nin, jx_array *const *in, const PrimParams *pp) {
  char **texts = calloc((size_t)nin + 1, sizeof *texts);
  jx_status s = texts ? JX_OK : JX_ERR_OOM;
  if (!texts) error_set(s, "debug_print: out of memory");
  for (int i = 0; s == JX_OK && i < nin; i++)
    if (!(texts[i] = jx_to_string(in[i]))) s = jx_last_status() ? jx_last_status() : JX_ERR_OOM;
  if (s == JX_OK && !debug_format(pp->text, nin, texts, stdout)) s = JX_ERR_VALUE;
  for (int i = 0; texts && i < nin; i++) free(texts[i]);
  free(texts);
  return s;
}
