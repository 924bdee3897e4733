/* safetensors.c -- the safetensors format (github.com/huggingface/safetensors): an
 * 8-byte little-endian header length N, N bytes of JSON
 *   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
 *    "__metadata__": {"key": "value", ...}}
 * then the data buffer, which the tensors' [begin, end) ranges must cover exactly (no
 * overlaps, no holes: the format forbids both). Data is little-endian, C order. */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "io/io.h"
#include "io/json.h"

/* Headers larger than this are rejected (the reference implementation's limit). */
#define ST_MAX_HEADER (100u << 20)

static const struct {
  const char *name;
  jx_dtype dtype;
} st_dtypes[] = {
    {"BOOL", JX_BOOL},     {"U8", JX_UINT8},   {"I8", JX_INT8},       {"I16", JX_INT16},
    {"U16", JX_UINT16},    {"I32", JX_INT32},  {"U32", JX_UINT32},    {"I64", JX_INT64},
    {"U64", JX_UINT64},    {"F16", JX_FLOAT16}, {"BF16", JX_BFLOAT16}, {"F32", JX_FLOAT32},
    {"F64", JX_FLOAT64},   {"C64", JX_COMPLEX64}, {"C128", JX_COMPLEX128}, /* (re, im) */
};
#define ST_NDTYPES (int)(sizeof st_dtypes / sizeof st_dtypes[0])

/* Dtypes of the format that jaxc has no counterpart for. */
static const char *const st_unsupported[] = {
    "F8_E4M3", "F8_E5M2", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "F6_E2M3", "F6_E3M2",
    "F4",
};

/* One tensor entry of a header. */
typedef struct StTensor {
  const char *name; /* points into the parsed header */
  jx_dtype dtype;
  int ndim;
  int64_t shape[JX_MAX_NDIM];
  int64_t begin, end;
  int index; /* position among the tensors, in header order */
} StTensor;

/* Cuts long names for messages. */
static const char *short_name(const char *name, char *buf, size_t cap) {
  size_t n = strlen(name);
  if (n < cap) return name;
  memcpy(buf, name, cap - 4);
  memcpy(buf + cap - 4, "...", 4);
  return buf;
}

static bool st_nonneg_int(const JsonValue *v) {
  return v && v->kind == JSON_NUMBER && v->is_int && v->integer >= 0;
}

/* Fills t from the header entry v of the tensor called name. */
static jx_status st_tensor_info(IoReader *r, const char *name, const JsonValue *v, StTensor *t) {
  char nb[72];
  const char *sn = short_name(name, nb, sizeof nb);
  if (v->kind != JSON_OBJECT)
    return io_fail(JX_ERR_IO, r->fn, r->name, "header entry of tensor \"%s\" is a %s, not an "
                   "object", sn, json_kind_name(v->kind));
  const JsonValue *dt = json_get(v, "dtype"), *sh = json_get(v, "shape"),
                  *off = json_get(v, "data_offsets");
  if (!dt || !sh || !off)
    return io_fail(JX_ERR_IO, r->fn, r->name, "tensor \"%s\" lacks \"%s\"", sn,
                   !dt ? "dtype" : !sh ? "shape" : "data_offsets");
  if (dt->kind != JSON_STRING)
    return io_fail(JX_ERR_IO, r->fn, r->name, "dtype of tensor \"%s\" is not a string", sn);
  int d = 0;
  bool has_nul = strlen(dt->str) != dt->len;
  while (d < ST_NDTYPES && (has_nul || strcmp(st_dtypes[d].name, dt->str) != 0)) d++;
  if (d == ST_NDTYPES) {
    char db[40];
    for (size_t i = 0; i < sizeof st_unsupported / sizeof st_unsupported[0]; i++)
      if (strcmp(st_unsupported[i], dt->str) == 0)
        return io_fail(JX_ERR_UNSUPPORTED, r->fn, r->name,
                       "tensor \"%s\" has dtype %s, which jaxc does not support", sn, dt->str);
    return io_fail(JX_ERR_IO, r->fn, r->name, "tensor \"%s\" has unknown dtype \"%s\"", sn,
                   short_name(dt->str, db, sizeof db));
  }
  t->dtype = st_dtypes[d].dtype;
  if (sh->kind != JSON_ARRAY)
    return io_fail(JX_ERR_IO, r->fn, r->name, "shape of tensor \"%s\" is not an array", sn);
  if (sh->n > JX_MAX_NDIM)
    return io_fail(JX_ERR_UNSUPPORTED, r->fn, r->name,
                   "tensor \"%s\" has %d dimensions, more than the %d jaxc supports", sn, sh->n,
                   JX_MAX_NDIM);
  t->ndim = sh->n;
  for (int i = 0; i < sh->n; i++) {
    if (!st_nonneg_int(&sh->items[i]))
      return io_fail(JX_ERR_IO, r->fn, r->name,
                     "shape of tensor \"%s\": dimension %d is not a non-negative integer", sn, i);
    t->shape[i] = sh->items[i].integer;
  }
  if (off->kind != JSON_ARRAY || off->n != 2 || !st_nonneg_int(&off->items[0]) ||
      !st_nonneg_int(&off->items[1]))
    return io_fail(JX_ERR_IO, r->fn, r->name,
                   "data_offsets of tensor \"%s\" is not [begin, end] with non-negative integers",
                   sn);
  t->begin = off->items[0].integer;
  t->end = off->items[1].integer;
  if (t->end < t->begin)
    return io_fail(JX_ERR_IO, r->fn, r->name, "tensor \"%s\": data_offsets [%lld, %lld] end "
                   "before they begin", sn, (long long)t->begin, (long long)t->end);
  int64_t nbytes = io_nbytes(t->ndim, t->shape, jx_dtype_itemsize(t->dtype));
  char sb[ERROR_SHAPE_BUF];
  if (nbytes < 0)
    return io_fail(JX_ERR_IO, r->fn, r->name, "tensor \"%s\": shape %s overflows", sn,
                   error_shape_str(sb, t->ndim, t->shape));
  if (nbytes != t->end - t->begin)
    return io_fail(JX_ERR_IO, r->fn, r->name,
                   "tensor \"%s\": %s %s needs %lld bytes but data_offsets [%lld, %lld] hold "
                   "%lld", sn, st_dtypes[d].name, error_shape_str(sb, t->ndim, t->shape),
                   (long long)nbytes, (long long)t->begin, (long long)t->end,
                   (long long)(t->end - t->begin));
  return JX_OK;
}

static int cmp_by_offset(const void *a, const void *b) {
  const StTensor *x = a, *y = b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return x->index - y->index;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp((*(const StTensor *const *)a)->name, (*(const StTensor *const *)b)->name);
}

static jx_status st_check_metadata(IoReader *r, const JsonValue *m) {
  if (m->kind != JSON_OBJECT)
    return io_fail(JX_ERR_IO, r->fn, r->name, "__metadata__ is a %s, not an object",
                   json_kind_name(m->kind));
  for (int i = 0; i < m->n; i++)
    if (m->items[i].kind != JSON_STRING)
      return io_fail(JX_ERR_IO, r->fn, r->name, "__metadata__ value of \"%.60s\" is a %s, not "
                     "a string", m->keys[i], json_kind_name(m->items[i].kind));
  return JX_OK;
}

/* Parses the header and reads every tensor; fills the outputs only on success. */
static jx_status st_load(IoReader *r, int *n_out, char ***names_out, jx_array ***arrays_out) {
  unsigned char lenbuf[8];
  if (!io_read_exact(r, lenbuf, 8, "header length")) return r->status;
  uint64_t hlen = 0;
  for (int i = 7; i >= 0; i--) hlen = hlen << 8 | lenbuf[i];
  if (hlen > ST_MAX_HEADER)
    return io_fail(JX_ERR_IO, r->fn, r->name,
                   "header length %llu exceeds the limit of %u bytes (not a safetensors file?)",
                   (unsigned long long)hlen, ST_MAX_HEADER);
  char *text = io_read_alloc(r, (size_t)hlen, "JSON header");
  if (!text) return r->status;
  if (hlen == 0 || text[0] != '{') {
    free(text);
    return io_fail(JX_ERR_IO, r->fn, r->name, "the header does not start with '{'");
  }
  JsonValue root;
  char err[128];
  bool oom;
  if (!json_parse(text, (size_t)hlen, &root, err, sizeof err, &oom)) {
    free(text);
    return io_fail(oom ? JX_ERR_OOM : JX_ERR_IO, r->fn, r->name, "malformed JSON header: %s",
                   err);
  }
  free(text);

  jx_status s = JX_OK;
  int nt = 0;
  StTensor *ts = calloc((size_t)root.n + 1, sizeof *ts);
  StTensor **by_name = calloc((size_t)root.n + 1, sizeof *by_name);
  char **names = NULL;
  jx_array **arrays = NULL;
  if (!ts || !by_name) s = io_fail(JX_ERR_OOM, r->fn, r->name, "out of memory");
  for (int i = 0; i < root.n && s == JX_OK; i++) {
    if (strlen(root.keys[i]) != root.keylens[i]) {
      s = io_fail(JX_ERR_IO, r->fn, r->name, "a tensor name contains a NUL character");
    } else if (strcmp(root.keys[i], "__metadata__") == 0) {
      s = st_check_metadata(r, &root.items[i]);
    } else {
      StTensor *t = &ts[nt];
      t->name = root.keys[i];
      t->index = nt;
      s = st_tensor_info(r, t->name, &root.items[i], t);
      by_name[nt] = t;
      nt++;
    }
  }
  /* Names are unique (checked on sorted pointers, before ts is reordered). */
  if (s == JX_OK && nt > 1) {
    qsort(by_name, (size_t)nt, sizeof *by_name, cmp_names);
    for (int i = 1; i < nt && s == JX_OK; i++)
      if (strcmp(by_name[i - 1]->name, by_name[i]->name) == 0) {
        char nb[72];
        s = io_fail(JX_ERR_IO, r->fn, r->name, "tensor \"%s\" appears twice in the header",
                    short_name(by_name[i]->name, nb, sizeof nb));
      }
  }
  free(by_name);
  /* The ranges, sorted, must tile [0, buffer end) exactly. */
  if (s == JX_OK) {
    qsort(ts, (size_t)nt, sizeof *ts, cmp_by_offset);
    int64_t at = 0;
    for (int i = 0; i < nt && s == JX_OK; i++) {
      char nb[72];
      if (ts[i].begin != at)
        s = io_fail(JX_ERR_IO, r->fn, r->name,
                    "tensor \"%s\": data_offsets [%lld, %lld] %s (expected to begin at %lld)",
                    short_name(ts[i].name, nb, sizeof nb), (long long)ts[i].begin,
                    (long long)ts[i].end,
                    ts[i].begin < at ? "overlap another tensor" : "leave a hole before them",
                    (long long)at);
      at = ts[i].end;
    }
  }
  if (s == JX_OK) {
    names = calloc((size_t)nt + 1, sizeof *names);
    arrays = calloc((size_t)nt + 1, sizeof *arrays);
    if (!names || !arrays) s = io_fail(JX_ERR_OOM, r->fn, r->name, "out of memory");
  }
  for (int i = 0; i < nt && s == JX_OK; i++) {
    StTensor *t = &ts[i];
    char what[128], nb[72];
    snprintf(what, sizeof what, "data of tensor \"%s\"", short_name(t->name, nb, sizeof nb));
    size_t nbytes = (size_t)(t->end - t->begin);
    unsigned char *data = io_read_alloc(r, nbytes, what);
    if (!data) {
      s = r->status;
      break;
    }
    size_t itemsize = jx_dtype_itemsize(t->dtype);
    int64_t count = (int64_t)(nbytes / itemsize);
    if (t->dtype == JX_BOOL) io_normalize_bool(data, count);
    if (!io_host_little_endian()) { /* complex: each part swaps on its own */
      size_t unit = dtype_is_complex(t->dtype) ? itemsize / 2 : itemsize;
      io_swap_bytes(data, (int64_t)(nbytes / unit), unit);
    }
    arrays[t->index] = jx_array_from(data, t->dtype, t->ndim, t->shape);
    free(data);
    names[t->index] = strdup(t->name);
    if (!names[t->index]) s = io_fail(JX_ERR_OOM, r->fn, r->name, "out of memory");
    else if (!arrays[t->index]) s = jx_last_status() != JX_OK ? jx_last_status() : JX_ERR_OOM;
  }
  if (s == JX_OK && !io_expect_end(r)) s = r->status;
  if (s == JX_OK) {
    *n_out = nt;
    *names_out = names;
    *arrays_out = arrays;
  } else {
    for (int i = 0; i < nt && arrays; i++) jx_free(arrays[i]);
    jx_io_free_names(nt, names);
    free(arrays);
  }
  free(ts);
  json_free(&root);
  return s;
}

static jx_status st_load_from(IoReader *r, int *n, char ***names, jx_array ***arrays) {
  jx_status s = st_load(r, n, names, arrays);
  io_reader_close(r);
  if (s == JX_OK) {
    /* n == 0: no lists (free(NULL) and jx_io_free_names(0, NULL) are fine). */
    if (*n == 0) {
      free(*names);
      free(*arrays);
      *names = NULL;
      *arrays = NULL;
    }
  }
  return s;
}

jx_status jx_io_load_safetensors(const char *path, int *n, char ***names, jx_array ***arrays) {
  static const char fn[] = "jx_io_load_safetensors";
  if (n) *n = 0;
  if (names) *names = NULL;
  if (arrays) *arrays = NULL;
  if (!path || !n || !names || !arrays) {
    error_set(JX_ERR_VALUE, "%s: %s is NULL", fn,
              !path ? "path" : !n ? "n" : !names ? "names" : "arrays");
    return JX_ERR_VALUE;
  }
  IoReader r;
  if (!io_reader_open_file(&r, fn, path)) return r.status;
  return st_load_from(&r, n, names, arrays);
}

jx_status safetensors_load_memory(const char *name, const void *data, size_t len, int *n,
                                  char ***names, jx_array ***arrays) {
  *n = 0;
  *names = NULL;
  *arrays = NULL;
  IoReader r;
  if (!io_reader_open_memory(&r, "jx_io_load_safetensors", name, data, len)) {
    io_reader_close(&r);
    return r.status;
  }
  return st_load_from(&r, n, names, arrays);
}

void jx_io_free_names(int n, char **names) {
  if (!names) return;
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}

/* ------------------------------------------------------------- writing */

typedef struct Text {
  char *d;
  size_t n, cap;
  bool oom;
} Text;

static void text_put(Text *t, const char *s, size_t n) {
  if (t->oom) return;
  if (t->cap - t->n < n + 1) {
    size_t cap = t->cap ? t->cap : 256;
    while (cap - t->n < n + 1) cap *= 2;
    char *d = realloc(t->d, cap);
    if (!d) {
      t->oom = true;
      return;
    }
    t->d = d;
    t->cap = cap;
  }
  memcpy(t->d + t->n, s, n);
  t->n += n;
  t->d[t->n] = '\0';
}

static void text_str(Text *t, const char *s) { text_put(t, s, strlen(s)); }

static void text_int(Text *t, long long v) {
  char b[24];
  text_put(t, b, (size_t)snprintf(b, sizeof b, "%lld", v));
}

/* A JSON string literal for UTF-8 text s. */
static void text_json_string(Text *t, const char *s) {
  text_put(t, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') {
      char e[2] = {'\\', (char)*p};
      text_put(t, e, 2);
    } else if (*p < 0x20) {
      char e[8];
      text_put(t, e, (size_t)snprintf(e, sizeof e, "\\u%04x", *p));
    } else {
      text_put(t, (const char *)p, 1);
    }
  }
  text_put(t, "\"", 1);
}

static const char *st_dtype_name(jx_dtype d) {
  for (int i = 0; i < ST_NDTYPES; i++)
    if (st_dtypes[i].dtype == d) return st_dtypes[i].name;
  return NULL;
}

jx_status jx_io_save_safetensors(const char *path, int n, const char *const *names,
                                 jx_array *const *arrays) {
  static const char fn[] = "jx_io_save_safetensors";
  if (!path || n < 0 || (n > 0 && (!names || !arrays))) {
    error_set(JX_ERR_VALUE, "%s: %s", fn,
              !path ? "path is NULL" : n < 0 ? "n is negative" : "names or arrays is NULL");
    return JX_ERR_VALUE;
  }
  for (int i = 0; i < n; i++) {
    if (!arrays[i]) {
      if (error_pending()) return jx_last_status();
      error_set(JX_ERR_VALUE, "%s: arrays[%d] is NULL", fn, i);
      return JX_ERR_VALUE;
    }
    const char *why = !names[i]                                   ? "is NULL"
                      : strcmp(names[i], "__metadata__") == 0     ? "is reserved"
                      : !json_valid_utf8(names[i], strlen(names[i])) ? "is not valid UTF-8"
                                                                    : NULL;
    for (int j = 0; j < i && !why; j++)
      if (strcmp(names[i], names[j]) == 0) why = "is used twice";
    if (why) {
      char nb[72];
      if (!names[i]) error_set(JX_ERR_VALUE, "%s: %s: names[%d] is NULL", fn, path, i);
      else error_set(JX_ERR_VALUE, "%s: %s: name %d (\"%s\") %s", fn, path, i, short_name(names[i], nb, sizeof nb), why);
      return JX_ERR_VALUE;
    }
    if (!st_dtype_name(jx_dtype_of(arrays[i]))) {
      error_set(JX_ERR_DTYPE, "%s: %s: no safetensors dtype for %s", fn, path,
                jx_dtype_name(jx_dtype_of(arrays[i])));
      return JX_ERR_DTYPE;
    }
  }
  /* Data order: larger items first (then the caller's order), so every tensor starts
   * aligned to its item size after the 8-aligned header. */
  int *order = malloc(((size_t)n + 1) * sizeof *order);
  int64_t *begin = malloc(((size_t)n + 1) * sizeof *begin);
  if (!order || !begin) {
    free(order);
    free(begin);
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return JX_ERR_OOM;
  }
  int k = 0;
  for (size_t size = 16; size >= 1; size /= 2) /* complex128: 16 */
    for (int i = 0; i < n; i++)
      if (jx_dtype_itemsize(jx_dtype_of(arrays[i])) == size) order[k++] = i;
  int64_t at = 0;
  for (int j = 0; j < k; j++) {
    jx_array *a = arrays[order[j]];
    begin[order[j]] = at;
    at += jx_size(a) * (int64_t)jx_dtype_itemsize(jx_dtype_of(a));
  }
  Text h = {0};
  text_str(&h, "{");
  for (int i = 0; i < n; i++) {
    jx_array *a = arrays[i];
    if (i) text_str(&h, ",");
    text_json_string(&h, names[i]);
    text_str(&h, ":{\"dtype\":\"");
    text_str(&h, st_dtype_name(jx_dtype_of(a)));
    text_str(&h, "\",\"shape\":[");
    for (int d = 0; d < jx_ndim(a); d++) {
      if (d) text_str(&h, ",");
      text_int(&h, jx_shape(a)[d]);
    }
    text_str(&h, "],\"data_offsets\":[");
    text_int(&h, begin[i]);
    text_str(&h, ",");
    text_int(&h, begin[i] + jx_size(a) * (int64_t)jx_dtype_itemsize(jx_dtype_of(a)));
    text_str(&h, "]}");
  }
  text_str(&h, "}");
  while ((8 + h.n) % 8) text_str(&h, " "); /* the data starts 8-aligned */
  jx_status s = JX_OK;
  if (h.oom) s = JX_ERR_OOM, error_set(s, "%s: out of memory", fn);
  IoWriter w;
  if (s == JX_OK) s = io_writer_open(&w, fn, path, false);
  if (s == JX_OK) {
    unsigned char lenbuf[8];
    for (int i = 0; i < 8; i++) lenbuf[i] = (unsigned char)((uint64_t)h.n >> (8 * i));
    io_write(&w, lenbuf, 8);
    io_write(&w, h.d, h.n);
    for (int j = 0; j < k && w.status == JX_OK; j++) {
      jx_array *a = arrays[order[j]];
      size_t nbytes;
      void *data = io_array_bytes(fn, a, &nbytes);
      if (!data) {
        io_writer_fail(&w, jx_last_status() != JX_OK ? jx_last_status() : JX_ERR_INTERNAL);
        break;
      }
      size_t itemsize = jx_dtype_itemsize(jx_dtype_of(a));
      if (dtype_is_complex(jx_dtype_of(a))) itemsize /= 2; /* complex: part by part */
      if (!io_host_little_endian()) io_swap_bytes(data, (int64_t)(nbytes / itemsize), itemsize);
      io_write(&w, data, nbytes);
      free(data);
    }
    s = io_writer_close(&w);
  }
  free(h.d);
  free(order);
  free(begin);
  return s;
}
