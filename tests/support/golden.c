/* golden.c -- loader, array conversion and comparison for JAX golden files (format in
 * golden.h). */
#include "golden.h"

#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "core/dtype.h"
#include "test.h"

/* ------------------------------------------------------------------ parsing */

bool golden_parse_dtype(const char *s, jx_dtype *d, bool *weak) {
  *weak = strncmp(s, "weak_", 5) == 0;
  if (*weak) s += 5;
  for (int i = 0; i < JX_NUM_DTYPES; i++)
    if (strcmp(s, jx_dtype_name((jx_dtype)i)) == 0) {
      *d = (jx_dtype)i;
      return true;
    }
  if (strcmp(s, "float0") == 0) { /* jax.dtypes.float0: a shape, no values */
    *d = JX_FLOAT0;
    return true;
  }
  return false;
}

static bool parse_status(const char *s, jx_status *st) {
  for (int i = 0; i <= JX_ERR_INTERNAL; i++)
    if (strcmp(s, jx_status_name((jx_status)i)) == 0) {
      *st = (jx_status)i;
      return true;
    }
  return false;
}

/* Next space-separated token of *p (NUL-terminated in place), or NULL at the end. */
static char *next_token(char **p) {
  char *s = *p;
  while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
  if (!*s) {
    *p = s;
    return NULL;
  }
  char *start = s;
  while (*s && *s != ' ' && *s != '\t' && *s != '\r' && *s != '\n') s++;
  if (*s) *s++ = '\0';
  *p = s;
  return start;
}

static bool is_int_dtype(jx_dtype d) { return d == JX_BOOL || dtype_is_integer(d); }

/* Parses "<dtype> <ndim> <dims...> : <values...>" into g. */
static bool parse_array(char *p, GoldenArray *g, const char **why) {
  memset(g, 0, sizeof *g);
  char *tok = next_token(&p);
  if (!tok || !golden_parse_dtype(tok, &g->dtype, &g->weak)) return *why = "bad dtype", false;
  tok = next_token(&p);
  char *end;
  long nd = tok ? strtol(tok, &end, 10) : -1;
  if (!tok || *end || nd < 0 || nd > JX_MAX_NDIM) return *why = "bad ndim", false;
  g->ndim = (int)nd;
  g->size = 1;
  for (int d = 0; d < g->ndim; d++) {
    tok = next_token(&p);
    long long v = tok ? strtoll(tok, &end, 10) : -1;
    if (!tok || *end || v < 0) return *why = "bad dimension", false;
    g->shape[d] = v;
    g->size *= v;
  }
  tok = next_token(&p);
  if (!tok || strcmp(tok, ":") != 0) return *why = "missing ':'", false;
  /* complex: two values (re im) per element, the parts interleaved as in memory */
  int64_t nvals = g->dtype == JX_FLOAT0 ? 0 : g->size * (dtype_is_complex(g->dtype) ? 2 : 1);
  size_t n = (size_t)(nvals ? nvals : 1);
  g->f = malloc(n * sizeof(double));
  g->i = is_int_dtype(g->dtype) ? malloc(n * sizeof(int64_t)) : NULL;
  if (!g->f || (is_int_dtype(g->dtype) && !g->i)) return *why = "out of memory", false;
  for (int64_t k = 0; k < nvals; k++) {
    tok = next_token(&p);
    if (!tok) return *why = "too few values", false;
    errno = 0;
    if (g->i) {
      if (g->dtype == JX_UINT64) g->i[k] = (int64_t)strtoull(tok, &end, 10);
      else g->i[k] = strtoll(tok, &end, 10);
      g->f[k] = g->dtype == JX_UINT64 ? (double)(uint64_t)g->i[k] : (double)g->i[k];
    } else {
      g->f[k] = strtod(tok, &end);
    }
    if (*end || errno == ERANGE) return *why = "bad value", false;
  }
  if (next_token(&p)) return *why = "too many values", false;
  return true;
}

static void free_array(GoldenArray *g) {
  free(g->f);
  free(g->i);
}

static void free_case(GoldenCase *c) {
  free(c->name);
  free(c->fn);
  for (int i = 0; i < c->nparams; i++) free(c->keys[i]), free(c->values[i]);
  free(c->keys);
  free(c->values);
  for (int i = 0; i < c->nin; i++) free_array(&c->in[i]);
  for (int i = 0; i < c->nout; i++) free_array(&c->out[i]);
  free(c->in);
  free(c->out);
}

void golden_free(GoldenCase *cases, int ncases) {
  if (!cases) return;
  for (int i = 0; i < ncases; i++) free_case(&cases[i]);
  free(cases);
}

static bool append_array(GoldenArray **arr, int *n, char *rest, const char **why) {
  GoldenArray *grown = realloc(*arr, (size_t)(*n + 1) * sizeof **arr);
  if (!grown) return *why = "out of memory", false;
  *arr = grown;
  bool ok = parse_array(rest, &grown[*n], why);
  (*n)++; /* counted even on failure so free_case releases what was parsed */
  return ok;
}

GoldenCase *golden_load(const char *relpath, int *ncases) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", JAXC_GOLDEN_DIR, relpath);
  *ncases = 0;
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "golden_load: cannot open %s: %s\n", path, strerror(errno));
    return NULL;
  }
  GoldenCase *cases = NULL, *cur = NULL;
  int n = 0, cap = 0, lineno = 0;
  char *line = NULL;
  size_t linecap = 0;
  const char *why = NULL;
  while (!why && getline(&line, &linecap, f) >= 0) {
    lineno++;
    char *p = line;
    char *tok = next_token(&p);
    if (!tok || tok[0] == '#') continue;
    if (strcmp(tok, "case") == 0) {
      if (cur) { why = "'case' before 'end'"; break; }
      if (n == cap) {
        cap = cap ? 2 * cap : 256;
        GoldenCase *grown = realloc(cases, (size_t)cap * sizeof *cases);
        if (!grown) { why = "out of memory"; break; }
        cases = grown;
      }
      cur = &cases[n++];
      memset(cur, 0, sizeof *cur);
      cur->line = lineno;
      char *name = next_token(&p), *fn = next_token(&p);
      if (!name || !fn) { why = "'case' needs a name and a function"; break; }
      cur->name = strdup(name);
      cur->fn = strdup(fn);
      for (char *kv; (kv = next_token(&p));) {
        char *eq = strchr(kv, '=');
        if (!eq) { why = "param without '='"; break; }
        *eq = '\0';
        cur->keys = realloc(cur->keys, (size_t)(cur->nparams + 1) * sizeof(char *));
        cur->values = realloc(cur->values, (size_t)(cur->nparams + 1) * sizeof(char *));
        cur->keys[cur->nparams] = strdup(kv);
        cur->values[cur->nparams] = strdup(eq + 1);
        cur->nparams++;
      }
    } else if (!cur) {
      why = "record outside a case";
    } else if (strcmp(tok, "in") == 0) {
      if (cur->nout || cur->err) why = "'in' after the results";
      else append_array(&cur->in, &cur->nin, p, &why);
    } else if (strcmp(tok, "out") == 0) {
      if (cur->err) why = "'out' with 'err'";
      else append_array(&cur->out, &cur->nout, p, &why);
    } else if (strcmp(tok, "err") == 0) {
      char *st = next_token(&p);
      if (cur->nout || !st || !parse_status(st, &cur->err) || cur->err == JX_OK)
        why = "bad 'err' record";
    } else if (strcmp(tok, "end") == 0) {
      if (!cur->nout && !cur->err) why = "case without 'out' or 'err'";
      cur = NULL;
    } else {
      why = "unknown record";
    }
  }
  if (!why && cur) why = "missing 'end' at end of file";
  free(line);
  fclose(f);
  if (why) {
    fprintf(stderr, "golden_load: %s:%d: %s\n", path, lineno, why);
    golden_free(cases, n);
    return NULL;
  }
  *ncases = n;
  return cases;
}

const char *golden_param(const GoldenCase *c, const char *key) {
  for (int i = 0; i < c->nparams; i++)
    if (strcmp(c->keys[i], key) == 0) return c->values[i];
  return NULL;
}

long long golden_param_int(const GoldenCase *c, const char *key, long long dflt) {
  const char *v = golden_param(c, key);
  return v ? strtoll(v, NULL, 10) : dflt;
}

int golden_param_shape(const GoldenCase *c, const char *key, int64_t *shape) {
  const char *s = golden_param(c, key);
  if (!s || !strcmp(s, "none")) return -1;
  int n = 0;
  for (const char *p = s; *p;) {
    if (*p >= '0' && *p <= '9') {
      char *end;
      shape[n++] = strtoll(p, &end, 10);
      p = end;
    } else {
      p++;
    }
  }
  return n;
}

/* ------------------------------------------------------------ conversion */

/* Writes element k of g into dst as dtype d (itemsize bytes); for complex dtypes, k
 * counts parts (2 per element). */
static void store(void *dst, jx_dtype d, const GoldenArray *g, int64_t k) {
  int64_t iv = g->i ? g->i[k] : 0;
  double fv = g->f[k];
  switch (d) {
  case JX_COMPLEX64: ((float *)dst)[k] = (float)fv; break;
  case JX_COMPLEX128: ((double *)dst)[k] = fv; break;
  case JX_BOOL: ((uint8_t *)dst)[k] = iv != 0; break;
  case JX_INT8: ((int8_t *)dst)[k] = (int8_t)iv; break;
  case JX_UINT8: ((uint8_t *)dst)[k] = (uint8_t)iv; break;
  case JX_INT16: ((int16_t *)dst)[k] = (int16_t)iv; break;
  case JX_UINT16: ((uint16_t *)dst)[k] = (uint16_t)iv; break;
  case JX_INT32: ((int32_t *)dst)[k] = (int32_t)iv; break;
  case JX_UINT32: ((uint32_t *)dst)[k] = (uint32_t)iv; break;
  case JX_INT64: ((int64_t *)dst)[k] = iv; break;
  case JX_UINT64: ((uint64_t *)dst)[k] = (uint64_t)iv; break;
  /* Golden float16/bfloat16 values are exact in float32, so one rounding is exact. */
  case JX_FLOAT16: ((uint16_t *)dst)[k] = dtype_f32_to_f16((float)fv); break;
  case JX_BFLOAT16: ((uint16_t *)dst)[k] = dtype_f32_to_bf16((float)fv); break;
  case JX_FLOAT32: ((float *)dst)[k] = (float)fv; break;
  case JX_FLOAT64: ((double *)dst)[k] = fv; break;
  default: break;
  }
}

jx_array *golden_to_array(const GoldenArray *g) {
  if (g->weak && g->ndim == 0 && g->dtype == JX_FLOAT32) return jx_scalar(g->f[0]);
  if (g->weak && g->ndim == 0 && g->dtype == JX_INT32) return jx_scalar_int(g->i[0]);
  if (g->dtype == JX_FLOAT0) return jx_zeros(g->ndim, g->shape, JX_FLOAT0);
  size_t item = jx_dtype_itemsize(g->dtype);
  void *data = calloc((size_t)(g->size ? g->size : 1), item);
  if (!data) return NULL;
  int64_t nvals = g->size * (dtype_is_complex(g->dtype) ? 2 : 1);
  for (int64_t k = 0; k < nvals; k++) store(data, g->dtype, g, k);
  jx_array *a = array_from_host(data, g->dtype, g->weak, g->ndim, g->shape);
  free(data);
  return a;
}

/* ------------------------------------------------------------- comparison */

/* Element k of a host buffer of dtype d, as double and (ints) as exact int64. */
static double load(const void *src, jx_dtype d, int64_t k, int64_t *iv) {
  int64_t i = 0;
  double f;
  switch (d) {
  case JX_BOOL: i = ((const uint8_t *)src)[k] != 0; break;
  case JX_INT8: i = ((const int8_t *)src)[k]; break;
  case JX_UINT8: i = ((const uint8_t *)src)[k]; break;
  case JX_INT16: i = ((const int16_t *)src)[k]; break;
  case JX_UINT16: i = ((const uint16_t *)src)[k]; break;
  case JX_INT32: i = ((const int32_t *)src)[k]; break;
  case JX_UINT32: i = ((const uint32_t *)src)[k]; break;
  case JX_INT64: i = ((const int64_t *)src)[k]; break;
  case JX_UINT64: i = (int64_t)((const uint64_t *)src)[k]; break;
  case JX_FLOAT16: return dtype_f16_to_f32(((const uint16_t *)src)[k]);
  case JX_BFLOAT16: return dtype_bf16_to_f32(((const uint16_t *)src)[k]);
  case JX_FLOAT32: return ((const float *)src)[k];
  case JX_FLOAT64: return ((const double *)src)[k];
  default: return NAN;
  }
  *iv = i;
  f = d == JX_UINT64 ? (double)(uint64_t)i : (double)i;
  return f;
}

static double smallest_normal(jx_dtype d) {
  switch (d) {
  case JX_FLOAT16: return 6.103515625e-05;
  case JX_BFLOAT16:
  case JX_FLOAT32: return FLT_MIN;
  default: return DBL_MIN;
  }
}

static bool float_match(jx_dtype d, double g, double w, double rtol, double atol) {
  if (isnan(w) || isnan(g)) return isnan(w) && isnan(g);
  if (isinf(w) || isinf(g)) return g == w;
  if (w == 0 && d != JX_FLOAT16 && fabs(g) < smallest_normal(d)) {
    /* XLA CPU flush-to-zero; exact comparisons still need the zero's sign. */
    return g != 0 || (rtol != 0 || atol != 0) || signbit(g) == signbit(w);
  }
  if (rtol == 0 && atol == 0) return g == w && signbit(g) == signbit(w);
  return fabs(g - w) <= atol + rtol * fabs(w);
}

static const char *shape_text(char *buf, size_t cap, int ndim, const int64_t *shape) {
  size_t len = (size_t)snprintf(buf, cap, "(");
  for (int d = 0; d < ndim && len < cap; d++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", d ? "," : "", (long long)shape[d]);
  if (len < cap) snprintf(buf + len, cap - len, ndim == 1 ? ",)" : ")");
  return buf;
}

bool golden_compare(const char *ctx, jx_array *got, const GoldenArray *want, double rtol,
                    double atol) {
  test_checks++;
  if (!got) {
    test_fail(__FILE__, __LINE__, "%s: got NULL (%s: %s)", ctx,
              jx_status_name(jx_last_status()), jx_last_error());
    return false;
  }
  jx_dtype wd = dtype_canonicalize(want->dtype), gd = jx_dtype_of(got);
  char a[256], b[256];
  if (gd != wd || jx_is_weak(got) != want->weak) {
    test_fail(__FILE__, __LINE__, "%s: dtype %s%s, expected %s%s", ctx,
              jx_is_weak(got) ? "weak_" : "", jx_dtype_name(gd), want->weak ? "weak_" : "",
              jx_dtype_name(wd));
    return false;
  }
  if (jx_ndim(got) != want->ndim ||
      memcmp(jx_shape(got), want->shape, (size_t)want->ndim * sizeof(int64_t)) != 0) {
    test_fail(__FILE__, __LINE__, "%s: shape %s, expected %s", ctx,
              shape_text(a, sizeof a, jx_ndim(got), jx_shape(got)),
              shape_text(b, sizeof b, want->ndim, want->shape));
    return false;
  }
  size_t nbytes = (size_t)want->size * jx_dtype_itemsize(gd);
  void *buf = malloc(nbytes ? nbytes : 1);
  if (!buf || jx_read(got, buf, nbytes) != JX_OK) {
    test_fail(__FILE__, __LINE__, "%s: jx_read failed (%s)", ctx, jx_last_error());
    free(buf);
    return false;
  }
  int64_t bad = 0;
  /* complex: part by part (k counts parts), each a value of the part's dtype */
  jx_dtype ld = dtype_real_part(gd);
  int64_t nvals = gd == JX_FLOAT0 ? 0 : want->size * (dtype_is_complex(gd) ? 2 : 1);
  for (int64_t k = 0; k < nvals; k++) {
    int64_t iv = 0;
    double g = load(buf, ld, k, &iv);
    bool ok = is_int_dtype(gd) ? iv == want->i[k] : float_match(ld, g, want->f[k], rtol, atol);
    if (ok) continue;
    if (bad++ < 6) {
      if (is_int_dtype(gd))
        test_fail(__FILE__, __LINE__, "%s: element %lld: got %lld, expected %lld", ctx,
                  (long long)k, (long long)iv, (long long)want->i[k]);
      else
        test_fail(__FILE__, __LINE__, "%s: element %lld: got %.9g, expected %.9g "
                  "(rtol %g, atol %g)", ctx, (long long)k, g, want->f[k], rtol, atol);
    }
  }
  if (bad > 6)
    test_fail(__FILE__, __LINE__, "%s: %lld of %lld elements differ", ctx, (long long)bad,
              (long long)want->size);
  free(buf);
  return bad == 0;
}

bool golden_check_err(const char *ctx, const GoldenCase *c, const jx_array *got) {
  test_checks++;
  if (got == NULL && jx_last_status() == c->err) return true;
  test_fail(__FILE__, __LINE__, "%s: expected %s, got %s (%s)", ctx, jx_status_name(c->err),
            jx_status_name(jx_last_status()), jx_last_error());
  return false;
}

bool golden_check(const char *ctx, const GoldenCase *c, jx_array *got, double rtol,
                  double atol) {
  if (c->err) return golden_check_err(ctx, c, got);
  return golden_compare(ctx, got, &c->out[0], rtol, atol);
}

void golden_check_eager_jit(const GoldenCase *c, jx_fn *f, double rtol, double atol) {
  test_checks++;
  if (c->nin > 8 || c->nout > 8) {
    test_fail(__FILE__, __LINE__, "%s: %d inputs, %d outputs (at most 8)", c->name, c->nin,
              c->nout);
    return;
  }
  jx_fn *jf = jx_jit(f);
  jx_array *in[8] = {NULL}, *out[8] = {NULL};
  for (int i = 0; i < c->nin; i++) in[i] = golden_to_array(&c->in[i]);
  for (int mode = 0; mode < 2; mode++) {
    char ctx[160];
    snprintf(ctx, sizeof ctx, "%s (%s)", c->name, mode ? "jit" : "eager");
    jx_status s = jx_call(mode ? jf : f, in, out);
    if (s != JX_OK) test_fail(__FILE__, __LINE__, "%s: %s", ctx, jx_last_error());
    jx_clear_error();
    for (int o = 0; o < c->nout; o++) {
      if (s == JX_OK) golden_compare(ctx, out[o], &c->out[o], rtol, atol);
      jx_free(out[o]), out[o] = NULL;
    }
  }
  for (int i = 0; i < c->nin; i++) jx_free(in[i]);
  jx_fn_free(jf);
}
