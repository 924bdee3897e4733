/* json.c -- strict recursive-descent JSON parser (RFC 8259): no trailing commas, no
 * leading zeros, no raw control characters in strings, escapes and surrogate pairs
 * decoded, UTF-8 validated, depth bounded by JSON_MAX_DEPTH. */
#include "io/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Parser {
  const unsigned char *s;
  size_t len, pos;
  char *err;
  size_t errlen;
  bool failed, oom;
  int64_t nvalues; /* values created so far, bounded by JSON_MAX_VALUES */
} Parser;

static bool fail(Parser *p, const char *what) {
  if (!p->failed) snprintf(p->err, p->errlen, "%s at byte %zu", what, p->pos);
  p->failed = true;
  return false;
}

static bool fail_oom(Parser *p) {
  p->oom = true;
  return fail(p, "out of memory");
}

static void skip_ws(Parser *p) {
  while (p->pos < p->len) {
    unsigned char c = p->s[p->pos];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    p->pos++;
  }
}

static bool literal(Parser *p, const char *word) {
  size_t n = strlen(word);
  if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
    return fail(p, "invalid literal");
  p->pos += n;
  return true;
}

/* A growable byte buffer for decoded strings. */
typedef struct Buf {
  char *d;
  size_t n, cap;
} Buf;

static bool buf_put(Parser *p, Buf *b, const void *src, size_t n) {
  if (b->cap - b->n < n + 1) {
    size_t cap = b->cap ? b->cap : 16;
    while (cap - b->n < n + 1) {
      if (cap > SIZE_MAX / 2) return fail_oom(p);
      cap *= 2;
    }
    char *d = realloc(b->d, cap);
    if (!d) return fail_oom(p);
    b->d = d;
    b->cap = cap;
  }
  memcpy(b->d + b->n, src, n);
  b->n += n;
  b->d[b->n] = '\0';
  return true;
}

/* Length of the valid UTF-8 sequence at s[0..avail), or 0 if invalid (overlongs,
 * surrogates and code points above U+10FFFF are invalid). */
static size_t utf8_len(const unsigned char *s, size_t avail) {
  unsigned char c = s[0];
  size_t n;
  uint32_t cp;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
  else return 0;
  if (avail < n) return 0;
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (s[i] & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

static int hex4(const unsigned char *s) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    unsigned char c = s[i];
    int d = c >= '0' && c <= '9' ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

static bool put_utf8(Parser *p, Buf *b, uint32_t cp) {
  unsigned char u[4];
  size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  static const unsigned char lead[5] = {0, 0x00, 0xC0, 0xE0, 0xF0};
  for (size_t i = n - 1; i > 0; i--, cp >>= 6) u[i] = (unsigned char)(0x80 | (cp & 0x3F));
  u[0] = (unsigned char)(lead[n] | cp);
  return buf_put(p, b, u, n);
}

/* Parses a string starting at the opening quote into a malloc'd NUL-terminated text. */
static bool parse_string(Parser *p, char **out, size_t *outlen) {
  Buf b = {0};
  p->pos++; /* the opening quote */
  if (!buf_put(p, &b, "", 0)) return false;
  for (;;) {
    if (p->pos >= p->len) {
      free(b.d);
      return fail(p, "unterminated string");
    }
    unsigned char c = p->s[p->pos];
    if (c == '"') {
      p->pos++;
      break;
    }
    if (c < 0x20) {
      free(b.d);
      return fail(p, "control character in string");
    }
    if (c != '\\') {
      /* Copy a run of plain bytes, validating UTF-8. */
      size_t start = p->pos;
      while (p->pos < p->len && p->s[p->pos] != '"' && p->s[p->pos] != '\\' &&
             p->s[p->pos] >= 0x20) {
        size_t k = utf8_len(p->s + p->pos, p->len - p->pos);
        if (!k) {
          free(b.d);
          return fail(p, "invalid UTF-8 in string");
        }
        p->pos += k;
      }
      if (!buf_put(p, &b, p->s + start, p->pos - start)) {
        free(b.d);
        return false;
      }
      continue;
    }
    if (p->pos + 1 >= p->len) {
      free(b.d);
      return fail(p, "unterminated escape");
    }
    unsigned char e = p->s[p->pos + 1];
    const char *simple = NULL;
    switch (e) {
      case '"': simple = "\""; break;
      case '\\': simple = "\\"; break;
      case '/': simple = "/"; break;
      case 'b': simple = "\b"; break;
      case 'f': simple = "\f"; break;
      case 'n': simple = "\n"; break;
      case 'r': simple = "\r"; break;
      case 't': simple = "\t"; break;
      default: break;
    }
    if (simple) {
      p->pos += 2;
      if (!buf_put(p, &b, simple, 1)) {
        free(b.d);
        return false;
      }
      continue;
    }
    if (e != 'u') {
      free(b.d);
      return fail(p, "invalid escape in string");
    }
    int hi = p->len - p->pos >= 6 ? hex4(p->s + p->pos + 2) : -1;
    if (hi < 0) {
      free(b.d);
      return fail(p, "invalid \\u escape");
    }
    p->pos += 6;
    uint32_t cp = (uint32_t)hi;
    if (hi >= 0xDC00 && hi <= 0xDFFF) {
      free(b.d);
      return fail(p, "unpaired low surrogate in \\u escape");
    }
    if (hi >= 0xD800 && hi <= 0xDBFF) {
      int lo = p->len - p->pos >= 6 && p->s[p->pos] == '\\' && p->s[p->pos + 1] == 'u'
                   ? hex4(p->s + p->pos + 2)
                   : -1;
      if (lo < 0xDC00 || lo > 0xDFFF) {
        free(b.d);
        return fail(p, "unpaired high surrogate in \\u escape");
      }
      p->pos += 6;
      cp = 0x10000 + (((uint32_t)hi - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
    }
    if (!put_utf8(p, &b, cp)) {
      free(b.d);
      return false;
    }
  }
  *out = b.d;
  *outlen = b.n;
  return true;
}

static bool parse_number(Parser *p, JsonValue *v) {
  size_t start = p->pos;
  bool neg = false, is_int = true;
  if (p->s[p->pos] == '-') neg = true, p->pos++;
  if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
    return fail(p, "invalid number");
  if (p->s[p->pos] == '0') {
    p->pos++;
    if (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
      return fail(p, "leading zero in number");
  } else {
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
  }
  size_t int_end = p->pos;
  if (p->pos < p->len && p->s[p->pos] == '.') {
    is_int = false;
    p->pos++;
    size_t d = p->pos;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
    if (p->pos == d) return fail(p, "digit expected after decimal point");
  }
  if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
    is_int = false;
    p->pos++;
    if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-')) p->pos++;
    size_t d = p->pos;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
    if (p->pos == d) return fail(p, "digit expected in exponent");
  }
  v->kind = JSON_NUMBER;
  /* Exact integer when it fits int64 (accumulated as a negative to reach INT64_MIN). */
  if (is_int) {
    int64_t acc = 0;
    for (size_t i = start + neg; i < int_end && is_int; i++) {
      int d = p->s[i] - '0';
      if (acc < (INT64_MIN + d) / 10) is_int = false;
      else acc = acc * 10 - d;
    }
    if (is_int && !neg && acc == INT64_MIN) is_int = false;
    if (is_int) {
      v->is_int = true;
      v->integer = neg ? acc : -acc;
      v->number = (double)v->integer;
      return true;
    }
  }
  /* strtod needs a terminated copy; literals longer than this are absurd in a header. */
  char tmp[128];
  size_t n = p->pos - start;
  if (n >= sizeof tmp) return fail(p, "number literal too long");
  memcpy(tmp, p->s + start, n);
  tmp[n] = '\0';
  v->number = strtod(tmp, NULL);
  return true;
}

static bool parse_value(Parser *p, JsonValue *v, int depth);

/* Appends a zeroed item to an array or object value; returns it, or NULL on OOM. */
static JsonValue *push_item(Parser *p, JsonValue *v, int *cap) {
  if (++p->nvalues > JSON_MAX_VALUES) {
    fail(p, "too many values");
    return NULL;
  }
  if (v->n == *cap) {
    int ncap = *cap ? *cap * 2 : 4;
    JsonValue *items = realloc(v->items, (size_t)ncap * sizeof *items);
    if (!items) {
      fail_oom(p);
      return NULL;
    }
    v->items = items;
    if (v->kind == JSON_OBJECT) {
      char **keys = realloc(v->keys, (size_t)ncap * sizeof *keys);
      if (keys) v->keys = keys;
      size_t *keylens = keys ? realloc(v->keylens, (size_t)ncap * sizeof *keylens) : NULL;
      if (keylens) v->keylens = keylens;
      if (!keys || !keylens) {
        fail_oom(p);
        return NULL;
      }
    }
    *cap = ncap;
  }
  JsonValue *it = &v->items[v->n];
  memset(it, 0, sizeof *it);
  if (v->kind == JSON_OBJECT) {
    v->keys[v->n] = NULL;
    v->keylens[v->n] = 0;
  }
  v->n++;
  return it;
}

static bool parse_container(Parser *p, JsonValue *v, int depth, bool object) {
  if (depth >= JSON_MAX_DEPTH) return fail(p, "nesting too deep");
  v->kind = object ? JSON_OBJECT : JSON_ARRAY;
  char close = object ? '}' : ']';
  int cap = 0;
  p->pos++;
  skip_ws(p);
  if (p->pos < p->len && p->s[p->pos] == close) {
    p->pos++;
    return true;
  }
  for (;;) {
    skip_ws(p);
    JsonValue *it = push_item(p, v, &cap);
    if (!it) return false;
    if (object) {
      if (p->pos >= p->len || p->s[p->pos] != '"') return fail(p, "object key expected");
      if (!parse_string(p, &v->keys[v->n - 1], &v->keylens[v->n - 1])) return false;
      skip_ws(p);
      if (p->pos >= p->len || p->s[p->pos] != ':') return fail(p, "':' expected");
      p->pos++;
      skip_ws(p);
    }
    if (!parse_value(p, it, depth + 1)) return false;
    skip_ws(p);
    if (p->pos >= p->len) return fail(p, object ? "unterminated object" : "unterminated array");
    if (p->s[p->pos] == ',') {
      p->pos++;
      continue;
    }
    if (p->s[p->pos] == close) {
      p->pos++;
      return true;
    }
    return fail(p, object ? "',' or '}' expected" : "',' or ']' expected");
  }
}

static bool parse_value(Parser *p, JsonValue *v, int depth) {
  skip_ws(p);
  if (p->pos >= p->len) return fail(p, "value expected");
  switch (p->s[p->pos]) {
    case '{': return parse_container(p, v, depth, true);
    case '[': return parse_container(p, v, depth, false);
    case '"':
      v->kind = JSON_STRING;
      return parse_string(p, &v->str, &v->len);
    case 't':
      v->kind = JSON_BOOL;
      v->boolean = true;
      return literal(p, "true");
    case 'f':
      v->kind = JSON_BOOL;
      return literal(p, "false");
    case 'n':
      v->kind = JSON_NULL;
      return literal(p, "null");
    default:
      if (p->s[p->pos] == '-' || (p->s[p->pos] >= '0' && p->s[p->pos] <= '9'))
        return parse_number(p, v);
      return fail(p, "unexpected character");
  }
}

bool json_parse(const char *text, size_t len, JsonValue *out, char *err, size_t errlen,
                bool *oom) {
  Parser p = {(const unsigned char *)text, len, 0, err, errlen, false, false, 1};
  memset(out, 0, sizeof *out);
  if (errlen) err[0] = '\0';
  bool ok = parse_value(&p, out, 0);
  if (ok) {
    skip_ws(&p);
    if (p.pos != p.len) ok = fail(&p, "unexpected data after the JSON value");
  }
  if (oom) *oom = p.oom;
  if (!ok) {
    json_free(out);
    memset(out, 0, sizeof *out);
  }
  return ok;
}

void json_free(JsonValue *v) {
  if (!v) return;
  free(v->str);
  for (int i = 0; i < v->n; i++) {
    json_free(&v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->keylens);
  v->str = NULL;
  v->items = NULL;
  v->keys = NULL;
  v->keylens = NULL;
  v->n = 0;
}

const JsonValue *json_get(const JsonValue *v, const char *key) {
  if (!v || v->kind != JSON_OBJECT) return NULL;
  size_t n = strlen(key);
  for (int i = 0; i < v->n; i++)
    if (v->keylens[i] == n && memcmp(v->keys[i], key, n) == 0) return &v->items[i];
  return NULL;
}

bool json_valid_utf8(const char *s, size_t len) {
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; i < len;) {
    size_t k = utf8_len(u + i, len - i);
    if (!k) return false;
    i += k;
  }
  return true;
}

const char *json_kind_name(JsonKind k) {
  static const char *const names[] = {"null", "bool", "number", "string", "array", "object"};
  return (unsigned)k < 6 ? names[k] : "?";
}
