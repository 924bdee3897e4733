/* print.c -- jx_to_string: NumPy's str() of an array, as numpy/_core/arrayprint.py
 * (NumPy 2.x) does it with its default options: precision 8, floatmode 'maxprec',
 * threshold 1000, edgeitems 3, linewidth 75. A 0-d array prints as NumPy's scalar str;
 * bfloat16 prints as ml_dtypes' scalars do (C++ stream "%g" style, no alignment). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/numpy/np.h"

/* ------------------------------------------------------------ growable text */

typedef struct Str {
  char *p;
  size_t n, cap;
  bool oom;
} Str;

static void str_put(Str *s, const char *t, size_t n) {
  if (s->oom) return;
  if (s->n + n + 1 > s->cap) {
    size_t cap = s->cap ? s->cap : 64;
    while (cap < s->n + n + 1) cap *= 2;
    char *p = realloc(s->p, cap);
    if (!p) {
      s->oom = true;
      return;
    }
    s->p = p;
    s->cap = cap;
  }
  memcpy(s->p + s->n, t, n);
  s->n += n;
  s->p[s->n] = '\0';
}

static void str_puts(Str *s, const char *t) { str_put(s, t, strlen(t)); }

static void str_pad(Str *s, int n, char c) {
  for (int i = 0; i < n; i++) str_put(s, &c, 1);
}

/* ------------------------------------------------------- shortest digits */

/* A decimal: digits d[0..n) (d[0] != '0' unless the value is 0), value d[0].d[1..] x 10^e. */
typedef struct Dec {
  char d[40];
  int n, e;
} Dec;

/* Parses "d.ddde+XX" (printf %e) into dec, dropping trailing zeros when trim. */
static void parse_e(const char *s, Dec *dec, bool trim) {
  dec->n = 0;
  for (; *s && *s != 'e'; s++)
    if (*s >= '0' && *s <= '9') dec->d[dec->n++] = *s;
  dec->e = *s == 'e' ? atoi(s + 1) : 0;
  while (trim && dec->n > 1 && dec->d[dec->n - 1] == '0') dec->n--;
  dec->d[dec->n] = '\0';
}

static void dec_format(const Dec *dec, char *out) {
  sprintf(out, "%c.%se%d", dec->d[0], dec->n > 1 ? dec->d + 1 : "0", dec->e);
}

/* Value of a 16-bit float pattern of dtype dt, as double. */
static double half_value(uint16_t h, jx_dtype dt) {
  return dt == JX_FLOAT16 ? dtype_f16_to_f32(h) : dtype_bf16_to_f32(h);
}

/* Does decimal string s read back as v (positive, finite) in dtype dt? float16 and
 * bfloat16 compare against the exact rounding interval of v (round half to even). */
static bool round_trips(const char *s, double v, jx_dtype dt) {
  if (dt == JX_FLOAT64) return strtod(s, NULL) == v;
  if (dt == JX_FLOAT32) return strtof(s, NULL) == (float)v;
  uint16_t h = dt == JX_FLOAT16 ? dtype_f32_to_f16((float)v) : dtype_f32_to_bf16((float)v);
  double prev = half_value((uint16_t)(h - 1), dt), next = half_value((uint16_t)(h + 1), dt);
  if (isinf(next)) next = 2 * v - prev;
  double lo = (prev + v) / 2, hi = (v + next) / 2, c = strtod(s, NULL);
  if (c > lo && c < hi) return true;
  return (c == lo || c == hi) && (h & 1) == 0;
}

/* The p-digit neighbor of dec one unit in the last place up (+1) or down (-1); false
 * if it would change the digit count. */
static bool dec_step(const Dec *dec, int delta, Dec *out) {
  *out = *dec;
  int i = out->n - 1;
  char lo = delta > 0 ? '9' : '0', wrap = delta > 0 ? '0' : '9';
  while (i >= 0 && out->d[i] == lo) out->d[i--] = wrap;
  if (i < 0) return false;
  out->d[i] = (char)(out->d[i] + delta);
  return out->d[0] != '0';
}

/* Shortest digits that read back as v (positive, finite, nonzero) in dtype dt, the
 * closest such when several have that length -- what NumPy's Dragon4 "unique" mode
 * produces. */
static void shortest(double v, jx_dtype dt, Dec *out) {
  char s[64], t[64];
  for (int p = 1; p <= 17; p++) {
    snprintf(s, sizeof s, "%.*e", p - 1, v);
    if (round_trips(s, v, dt)) {
      parse_e(s, out, true);
      return;
    }
    Dec d, nb;
    parse_e(s, &d, false);
    double best = INFINITY;
    for (int delta = -1; delta <= 1; delta += 2) {
      if (!dec_step(&d, delta, &nb)) continue;
      dec_format(&nb, t);
      if (round_trips(t, v, dt) && fabs(strtod(t, NULL) - v) < best) {
        best = fabs(strtod(t, NULL) - v);
        parse_e(t, out, true);
      }
    }
    if (best < INFINITY) return;
  }
  snprintf(s, sizeof s, "%.16e", v);
  parse_e(s, out, true);
}

/* |v| in positional notation: integer digits and fraction digits, the fraction cut to
 * at most cap digits (cap < 0: none) and then stripped of trailing zeros. */
static void positional(double v, jx_dtype dt, int cap, char *ip, char *fp) {
  v = fabs(v);
  if (v == 0) {
    strcpy(ip, "0"), fp[0] = '\0';
    return;
  }
  Dec g;
  shortest(v, dt, &g);
  int nfrac = g.n - 1 - g.e;
  if (cap >= 0 && nfrac > cap) {
    char s[400];
    snprintf(s, sizeof s, "%.*f", cap, v);
    char *dot = strchr(s, '.');
    if (dot) *dot = '\0';
    strcpy(ip, s);
    strcpy(fp, dot ? dot + 1 : "");
    for (size_t n = strlen(fp); n > 0 && fp[n - 1] == '0'; n--) fp[n - 1] = '\0';
    return;
  }
  if (g.e < 0) {
    strcpy(ip, "0");
    memset(fp, '0', (size_t)(-g.e - 1));
    strcpy(fp + (-g.e - 1), g.d);
    return;
  }
  int ni = g.e + 1;
  for (int i = 0; i < ni; i++) ip[i] = i < g.n ? g.d[i] : '0';
  ip[ni] = '\0';
  strcpy(fp, g.n > ni ? g.d + ni : "");
}

/* |v| in scientific notation: one digit, fraction digits (at most cap, trailing zeros
 * stripped) and the decimal exponent. */
static void scientific(double v, jx_dtype dt, int cap, char *ip, char *fp, int *e) {
  v = fabs(v);
  Dec g = {.d = "0", .n = 1, .e = 0};
  if (v != 0) shortest(v, dt, &g);
  if (cap >= 0 && g.n - 1 > cap) {
    char s[64];
    snprintf(s, sizeof s, "%.*e", cap, v);
    parse_e(s, &g, true);
  }
  ip[0] = g.d[0], ip[1] = '\0';
  strcpy(fp, g.n > 1 ? g.d + 1 : "");
  *e = g.e;
}

/* ------------------------------------------------------------ the elements */

typedef union Val {
  double f;
  int64_t i;
  uint64_t u;
} Val;

typedef enum Kind { K_BOOL, K_INT, K_UINT, K_FLOAT, K_BF16, K_FLOAT0 } Kind;

typedef struct Printer Printer;
struct Printer {
  jx_dtype dtype;
  Kind kind;
  bool plus;       /* sign='+': positive values print '+' (a complex's imaginary part) */
  Printer *imag;   /* complex arrays: this printer formats the real parts, imag the
                      imaginary ones (ComplexFloatingFormat) */
  int ndim;
  const int64_t *shape;
  int64_t stride[JX_MAX_NDIM];
  Val *v;
  bool summarize; /* size > threshold: show edgeitems per axis around "..." */
  /* statistics over the shown elements */
  bool any_finite, any_nonfinite, neg_inf, any_nonzero;
  double max_abs, min_abs;
  int64_t imax, imin;
  uint64_t umax;
  /* the common format (FloatingFormat / IntegerFormat fields) */
  bool exp;
  int width, pad_left, pad_right, prec, exp_size;
};

static Kind kind_of(jx_dtype d) {
  if (d == JX_BOOL) return K_BOOL;
  if (d == JX_FLOAT0) return K_FLOAT0;
  if (d == JX_BFLOAT16) return K_BF16;
  if (dtype_is_inexact(d)) return K_FLOAT; /* complex: per part */
  return dtype_is_unsigned(d) ? K_UINT : K_INT;
}

/* Reads a's elements (C order) into vals, widened to double / int64 / uint64. */
static Val *read_values(jx_array *a, int64_t n) {
  if (a->dtype == JX_FLOAT0) { /* no data: every element prints alike */
    Val *v = calloc(n ? (size_t)n : 1, sizeof *v);
    if (!v) error_set(JX_ERR_OOM, "jx_to_string: out of memory");
    return v;
  }
  size_t item = jx_dtype_itemsize(a->dtype);
  unsigned char *raw = malloc(n ? (size_t)n * item : 1);
  /* complex: real parts in v[0..n), imaginary parts in v[n..2n) */
  int64_t parts = dtype_is_complex(a->dtype) ? 2 : 1;
  Val *v = malloc(n ? (size_t)(parts * n) * sizeof *v : 1);
  if (!raw || !v || jx_read(a, raw, (size_t)n * item) != JX_OK) {
    if (!raw || !v) error_set(JX_ERR_OOM, "jx_to_string: out of memory");
    free(raw), free(v);
    return NULL;
  }
  for (int64_t k = 0; k < n; k++) {
    const unsigned char *q = raw + k * (int64_t)item;
    uint16_t h;
    switch (a->dtype) {
    case JX_BOOL: v[k].i = *q != 0; break;
    case JX_INT8: v[k].i = *(const int8_t *)q; break;
    case JX_UINT8: v[k].u = *q; break;
    case JX_INT16: { int16_t t; memcpy(&t, q, 2); v[k].i = t; } break;
    case JX_UINT16: { uint16_t t; memcpy(&t, q, 2); v[k].u = t; } break;
    case JX_INT32: { int32_t t; memcpy(&t, q, 4); v[k].i = t; } break;
    case JX_UINT32: { uint32_t t; memcpy(&t, q, 4); v[k].u = t; } break;
    case JX_INT64: memcpy(&v[k].i, q, 8); break;
    case JX_UINT64: memcpy(&v[k].u, q, 8); break;
    case JX_FLOAT16: memcpy(&h, q, 2), v[k].f = dtype_f16_to_f32(h); break;
    case JX_BFLOAT16: memcpy(&h, q, 2), v[k].f = dtype_bf16_to_f32(h); break;
    case JX_FLOAT32: { float t; memcpy(&t, q, 4); v[k].f = t; } break;
    case JX_COMPLEX64: { float t[2]; memcpy(t, q, 8); v[k].f = t[0], v[n + k].f = t[1]; } break;
    case JX_COMPLEX128: memcpy(&v[k].f, q, 8), memcpy(&v[n + k].f, q + 8, 8); break;
    default: memcpy(&v[k].f, q, 8); break;
    }
  }
  free(raw);
  return v;
}

/* Calls f on every shown element: all of them, or with summarization the first and
 * last 3 along every axis longer than 6 (arrayprint._leading_trailing). */
static void visit(Printer *p, int axis, int64_t base, void (*f)(Printer *, Val)) {
  if (axis == p->ndim) {
    f(p, p->v[base]);
    return;
  }
  int64_t n = p->shape[axis];
  for (int64_t i = 0; i < n; i++) {
    if (p->summarize && n > 6 && i == 3) i = n - 3;
    visit(p, axis + 1, base + i * p->stride[axis], f);
  }
}

/* x rounded to the printed dtype: NumPy compares a dtype scalar with Python floats in
 * that dtype (NEP 50). */
static double in_dtype(double x, jx_dtype dt) {
  if (dt == JX_FLOAT32) return (float)x;
  if (dt == JX_FLOAT16) return dtype_f16_to_f32(dtype_f32_to_f16((float)x));
  return x;
}

static void stat_elem(Printer *p, Val x) {
  if (p->kind == K_INT || p->kind == K_BOOL) {
    p->imax = x.i > p->imax ? x.i : p->imax;
    p->imin = x.i < p->imin ? x.i : p->imin;
  } else if (p->kind == K_UINT) {
    p->umax = x.u > p->umax ? x.u : p->umax;
  } else if (!isfinite(x.f)) {
    p->any_nonfinite = true;
    p->neg_inf |= (isinf(x.f) && x.f < 0) || p->plus; /* sign '+': room for a sign */
  } else {
    p->any_finite = true;
    if (x.f != 0) {
      double a = fabs(x.f);
      p->any_nonzero = true;
      p->max_abs = fmax(p->max_abs, a);
      p->min_abs = fmin(p->min_abs, a);
    }
  }
}

static int imax(int a, int b) { return a > b ? a : b; }

/* FloatingFormat.fillFormat's first pass: pad widths from every shown finite value. */
static void size_elem(Printer *p, Val x) {
  if (!isfinite(x.f)) return;
  char ip[400], fp[400];
  int e, il;
  if (p->exp) {
    scientific(x.f, p->dtype, 8, ip, fp, &e);
    char es[16];
    int el = snprintf(es, sizeof es, "%d", abs(e));
    p->exp_size = imax(p->exp_size, imax(el, 2));
    p->prec = imax(p->prec, (int)strlen(fp));
  } else {
    positional(x.f, p->dtype, 8, ip, fp);
    p->pad_right = imax(p->pad_right, (int)strlen(fp));
  }
  il = (int)strlen(ip) + (signbit(x.f) || p->plus ? 1 : 0);
  p->pad_left = imax(p->pad_left, il);
}

static void float_setup(Printer *p) {
  p->min_abs = INFINITY;
  visit(p, 0, 0, stat_elem);
  /* Exponential format: max >= 10**min(8, finfo.precision), min < 1e-4, or a ratio
   * above 1000 (arrayprint.FloatingFormat.fillFormat). */
  double cutoff = p->dtype == JX_FLOAT16 ? 1e3 : p->dtype == JX_FLOAT32 ? 1e6 : 1e8;
  p->exp = p->any_nonzero &&
           (p->max_abs >= cutoff || p->min_abs < in_dtype(1e-4, p->dtype) ||
            in_dtype(p->dtype == JX_FLOAT64 ? p->max_abs / p->min_abs
                                            : (double)((float)p->max_abs / (float)p->min_abs),
                     p->dtype) > 1000.0);
  if (p->any_finite) visit(p, 0, 0, size_elem);
  if (p->exp && p->any_finite) p->pad_right = p->exp_size + 2 + p->prec;
  if (p->any_nonfinite) {
    int off = p->pad_right + 1;
    p->pad_left = imax(p->pad_left, imax(3 - off, 3 + (p->neg_inf ? 1 : 0) - off));
  }
}

static void put_part(Printer *p, Val x, Str *s);

/* One element with the common format (a complex one: both parts, and 'j' after the
 * imaginary part's digits, before its padding). */
static void put_elem(Printer *p, int64_t k, Str *s) {
  put_part(p, p->v[k], s);
  if (!p->imag) return;
  Str t = {0};
  str_put(&t, "", 0);
  put_part(p->imag, p->imag->v[k], &t);
  size_t end = t.n;
  while (end > 0 && t.p[end - 1] == ' ') end--;
  str_put(s, t.p, end);
  str_puts(s, "j");
  str_put(s, t.p + end, t.n - end);
  s->oom |= t.oom;
  free(t.p);
}

static void put_part(Printer *p, Val x, Str *s) {
  char buf[64], ip[400], fp[400];
  switch (p->kind) {
  case K_BOOL: str_puts(s, x.i ? " True" : "False"); return;
  case K_FLOAT0: str_puts(s, "(b'',)"); return; /* NumPy's str of a V0 record */
  case K_INT:
    snprintf(buf, sizeof buf, "%*lld", p->width, (long long)x.i);
    str_puts(s, buf);
    return;
  case K_UINT:
    snprintf(buf, sizeof buf, "%*llu", p->width, (unsigned long long)x.u);
    str_puts(s, buf);
    return;
  case K_BF16:
    if (isnan(x.f)) str_puts(s, "nan");
    else if (isinf(x.f)) str_puts(s, x.f < 0 ? "-inf" : "inf");
    else snprintf(buf, sizeof buf, "%g", x.f), str_puts(s, buf);
    return;
  case K_FLOAT: break;
  }
  if (!isfinite(x.f)) {
    const char *t = isnan(x.f) ? (p->plus ? "+nan" : "nan")
                    : x.f < 0  ? "-inf"
                    : p->plus  ? "+inf"
                               : "inf";
    str_pad(s, p->pad_left + p->pad_right + 1 - (int)strlen(t), ' ');
    str_puts(s, t);
    return;
  }
  int e = 0;
  if (p->exp) {
    scientific(x.f, p->dtype, 8, ip, fp, &e);
    if ((int)strlen(fp) < p->prec) { /* min_digits: more digits of the exact value */
      Dec g;
      snprintf(buf, sizeof buf, "%.*e", p->prec, fabs(x.f));
      parse_e(buf, &g, false);
      ip[0] = g.d[0], ip[1] = '\0', e = g.e;
      strcpy(fp, g.d + 1);
    }
  } else {
    positional(x.f, p->dtype, 8, ip, fp);
  }
  int il = (int)strlen(ip) + (signbit(x.f) || p->plus ? 1 : 0);
  str_pad(s, p->pad_left - il, ' ');
  if (signbit(x.f)) str_puts(s, "-");
  else if (p->plus) str_puts(s, "+");
  str_puts(s, ip);
  str_puts(s, ".");
  str_puts(s, fp);
  if (p->exp) { /* the exponent padded to the common width */
    snprintf(buf, sizeof buf, "e%c%0*d", e < 0 ? '-' : '+', p->exp_size, abs(e));
    str_puts(s, buf);
  } else {
    str_pad(s, p->pad_right - (int)strlen(fp), ' ');
  }
}

/* ----------------------------------------------------------- the layout */

/* arrayprint._extendLine: wraps before `word` when the line would pass width, unless
 * the line holds only the hanging indent. */
static void extend_line(Str *s, Str *line, const char *word, int width, int hang) {
  size_t wl = strlen(word);
  if ((int)(line->n + wl) > width && (int)line->n > hang) {
    size_t n = line->n;
    while (n > 0 && line->p[n - 1] == ' ') n--;
    str_put(s, line->p, n);
    str_puts(s, "\n");
    line->n = 0;
    str_pad(line, hang, ' ');
  }
  str_puts(line, word);
}

/* arrayprint._formatArray's recurser (separator ' ', legacy off): the text of the
 * sub-array at `axis` starting at flat offset base. */
static void recurse(Printer *p, int axis, int64_t base, int hang, int width, Str *out) {
  int64_t n = p->shape[axis], stride = p->stride[axis];
  bool summary = p->summarize && n > 6;
  int64_t lead = summary ? 3 : 0, trail = summary ? 3 : n;
  Str s = {0};
  if (axis == p->ndim - 1) {
    Str line = {0}, w = {0};
    str_pad(&line, hang, ' ');
    for (int64_t i = 0; i < n; i++) {
      if (i == lead && summary) {
        extend_line(&s, &line, "...", width - 1, hang);
        str_puts(&line, " ");
      }
      if (i >= lead && i < n - trail) i = n - trail;
      w.n = 0;
      str_put(&w, "", 0);
      put_elem(p, base + i * stride, &w);
      extend_line(&s, &line, w.p, width - 1, hang);
      if (i < n - 1) str_puts(&line, " ");
    }
    str_put(&s, line.p, line.n);
    s.oom |= line.oom || w.oom;
    free(line.p), free(w.p);
  } else {
    int nl = p->ndim - 1 - axis; /* newlines between rows */
    for (int64_t i = 0; i < n; i++) {
      if (i == lead && summary) {
        str_pad(&s, hang, ' ');
        str_puts(&s, "...");
        str_pad(&s, nl, '\n');
      }
      if (i >= lead && i < n - trail) i = n - trail;
      str_pad(&s, hang, ' ');
      recurse(p, axis + 1, base + i * stride, hang + 1, width - 1, &s);
      if (i < n - 1) str_pad(&s, nl, '\n');
    }
  }
  /* '[' + s[len(hanging_indent):] + ']' */
  str_puts(out, "[");
  size_t skip = (size_t)hang;
  if (s.n > skip) str_put(out, s.p + skip, s.n - skip);
  str_puts(out, "]");
  out->oom |= s.oom;
  free(s.p);
}

/* ------------------------------------------------------------- scalars */

/* NumPy's str of a float scalar: positional with at least one fraction digit when
 * 1e-4 <= |v| < 10**cutoff (float16: 1e3, float32: 1e6, float64: 1e16), else
 * scientific with a two-digit exponent; shortest round-trip digits either way. */
static void scalar_float(double v, jx_dtype dt, Str *s) {
  char ip[400], fp[400], buf[32];
  if (isnan(v) || isinf(v)) {
    str_puts(s, isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
    return;
  }
  double a = fabs(v), hi = dt == JX_FLOAT16 ? 1e3 : dt == JX_FLOAT32 ? 1e6 : 1e16;
  if (signbit(v)) str_puts(s, "-");
  if (a == 0 || (a >= 1e-4 && a < hi)) {
    positional(a, dt, -1, ip, fp);
    str_puts(s, ip);
    str_puts(s, ".");
    str_puts(s, fp[0] ? fp : "0");
    return;
  }
  int e;
  scientific(a, dt, -1, ip, fp, &e);
  str_puts(s, ip);
  if (fp[0]) str_puts(s, "."), str_puts(s, fp);
  snprintf(buf, sizeof buf, "e%c%02d", e < 0 ? '-' : '+', abs(e));
  str_puts(s, buf);
}

/* NumPy's str of a complex scalar: "(re+imj)" with each part as a float scalar less a
 * trailing ".0" ("(1+2j)", "(1e+20+1e-05j)"), the imaginary part signed; "imj" alone
 * when re is +0.0 ("2j", "0j"); non-finite parts as nan / inf. */
static void scalar_complex(double re, double im, jx_dtype part, Str *s) {
  Str r = {0}, i = {0};
  str_put(&r, "", 0), str_put(&i, "", 0);
  scalar_float(re, part, &r);
  scalar_float(im, part, &i);
  if (!r.oom && r.n >= 2 && strcmp(r.p + r.n - 2, ".0") == 0) r.p[r.n -= 2] = '\0';
  if (!i.oom && i.n >= 2 && strcmp(i.p + i.n - 2, ".0") == 0) i.p[i.n -= 2] = '\0';
  if (re == 0 && !signbit(re)) {
    str_puts(s, i.p ? i.p : "");
    str_puts(s, "j");
  } else {
    str_puts(s, "(");
    str_puts(s, r.p ? r.p : "");
    if (isnan(im) || (!signbit(im) && i.p && i.p[0] != '-')) str_puts(s, "+");
    str_puts(s, isnan(im) ? "nan" : i.p ? i.p : "");
    str_puts(s, "j)");
  }
  s->oom |= r.oom || i.oom;
  free(r.p), free(i.p);
}

static void scalar_str(Printer *p, Str *s) {
  char buf[64];
  Val x = p->v[0];
  if (p->imag) {
    scalar_complex(x.f, p->imag->v[0].f, p->dtype, s);
    return;
  }
  switch (p->kind) {
  case K_BOOL: str_puts(s, x.i ? "True" : "False"); break;
  case K_FLOAT0: str_puts(s, "(b'',)"); break;
  case K_INT: snprintf(buf, sizeof buf, "%lld", (long long)x.i), str_puts(s, buf); break;
  case K_UINT: snprintf(buf, sizeof buf, "%llu", (unsigned long long)x.u), str_puts(s, buf); break;
  case K_BF16: p->width = 0, put_part(p, x, s); break;
  case K_FLOAT: scalar_float(x.f, p->dtype, s); break;
  }
}

/* ------------------------------------------------------------- entry point */

static int digits_of(long long v) {
  char b[32];
  return snprintf(b, sizeof b, "%lld", v);
}

char *jx_to_string(jx_array *a) {
  if (!a) {
    error_set(JX_ERR_VALUE, "jx_to_string: argument is NULL");
    return NULL;
  }
  int64_t n = jx_size(a);
  Printer p = {.dtype = dtype_real_part(a->dtype), .kind = kind_of(a->dtype), .ndim = a->ndim,
               .shape = a->shape, .summarize = n > 1000, .imax = INT64_MIN, .imin = INT64_MAX};
  for (int d = a->ndim - 1; d >= 0; d--)
    p.stride[d] = d == a->ndim - 1 ? 1 : p.stride[d + 1] * a->shape[d + 1];
  Printer pi = p; /* complex: the imaginary parts, always signed */
  pi.plus = true;
  if (dtype_is_complex(a->dtype)) p.imag = &pi;
  Str s = {0};
  str_put(&s, "", 0);
  if (a->ndim > 0 && n == 0) {
    str_puts(&s, "[]");
  } else if (!(p.v = read_values(a, n)) || ((pi.v = p.v + n), false)) {
    free(s.p);
    return NULL;
  } else if (a->ndim == 0) {
    scalar_str(&p, &s);
  } else {
    if (p.kind == K_FLOAT) float_setup(&p);
    if (p.imag) float_setup(&pi);
    if (p.kind == K_INT || p.kind == K_UINT) {
      visit(&p, 0, 0, stat_elem);
      char b[32];
      p.width = p.kind == K_UINT ? snprintf(b, sizeof b, "%llu", (unsigned long long)p.umax)
                                 : imax(digits_of(p.imax), digits_of(p.imin));
    }
    recurse(&p, 0, 0, 1, 75, &s);
  }
  free(p.v);
  if (s.oom) {
    free(s.p);
    error_set(JX_ERR_OOM, "jx_to_string: out of memory");
    return NULL;
  }
  return s.p;
}
