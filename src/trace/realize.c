/* realize.c -- arrays at the boundary with the host: creation from host data and
 * scalars, readback, and moving arrays between devices. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "trace/trace.h"

/* Converts n elements of host data from `from` to `to` (x64 canonicalization). */
static void convert_host(void *dst, jx_dtype to, const void *src, jx_dtype from, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    AluValue v = alu_load(src, from, i);
    AluValue args[1] = {v};
    alu_store(dst, to, i, alu_eval_op(ALU_CAST, to, from, args));
  }
}

jx_array *array_from_host(const void *data, jx_dtype dtype, bool weak, int ndim,
                          const int64_t *shape) {
  jx_dtype canon = dtype_canonicalize(dtype);
  int64_t n = shape_numel(ndim, shape);
  size_t nbytes = (size_t)n * jx_dtype_itemsize(canon);
  const Backend *be = backend_default();
  Buffer *buf = buffer_new(be, nbytes);
  if (!buf) return NULL;
  jx_status s = JX_OK;
  if (canon == dtype) {
    s = be->copy_in(be, buf->mem, data, nbytes);
  } else {
    void *tmp = malloc(nbytes ? nbytes : 1);
    if (!tmp) s = JX_ERR_OOM;
    else {
      convert_host(tmp, canon, data, dtype, n);
      s = be->copy_in(be, buf->mem, tmp, nbytes);
      free(tmp);
    }
  }
  if (s != JX_OK) {
    buffer_free(buf);
    error_set(s, "copying %zu bytes to device %s failed", nbytes, be->name);
    return NULL;
  }
  return array_new(buf, shape_contiguous(ndim, shape), canon, weak);
}

jx_array *array_float0(int ndim, const int64_t *shape) {
  Buffer *buf = buffer_new(backend_default(), 0);
  return buf ? array_new(buf, shape_contiguous(ndim, shape), JX_FLOAT0, false) : NULL;
}

jx_array *jx_array_from(const void *data, jx_dtype dtype, int ndim, const int64_t *shape) {
  if (!dtype_is_valid(dtype)) {
    char b[DTYPE_INVALID_BUF];
    error_set(JX_ERR_DTYPE, "jx_array_from: invalid dtype %s", dtype_invalid_str(dtype, b));
    return NULL;
  }
  if (!array_check_shape("jx_array_from", ndim, shape)) return NULL;
  if (!data && shape_numel(ndim, shape) > 0) {
    error_set(JX_ERR_VALUE, "jx_array_from: data is NULL for a non-empty shape");
    return NULL;
  }
  return array_from_host(data, dtype, false, ndim, shape);
}

jx_array *jx_scalar(double value) {
  return array_from_host(&value, JX_FLOAT64, true, 0, NULL);
}

jx_array *jx_scalar_int(int64_t value) {
  if (!dtype_x64() && (value < INT32_MIN || value > INT32_MAX)) {
    error_set(JX_ERR_VALUE,
              "jx_scalar_int: %lld does not fit int32 (enable x64 for 64-bit integers)",
              (long long)value);
    return NULL;
  }
  return array_from_host(&value, JX_INT64, true, 0, NULL);
}

jx_array *jx_scalar_of(double value, jx_dtype dtype) {
  if (!dtype_is_valid(dtype)) {
    char b[DTYPE_INVALID_BUF];
    error_set(JX_ERR_DTYPE, "jx_scalar_of: invalid dtype %s", dtype_invalid_str(dtype, b));
    return NULL;
  }
  jx_dtype canon = dtype_canonicalize(dtype);
  if (dtype_is_integer(canon) && value == trunc(value) &&
      (value < dtype_min_value(canon) || value > dtype_max_value(canon))) { /* a Python int */
    error_set(JX_ERR_VALUE, "jx_scalar_of: %.17g is out of bounds for %s", value, jx_dtype_name(canon));
    return NULL;
  }
  AluValue v = alu_eval_op(ALU_CAST, canon, JX_FLOAT64, (AluValue[]){{.f = value}});
  unsigned char bytes[16];
  alu_store(bytes, canon, 0, v);
  return array_from_host(bytes, canon, false, 0, NULL);
}

jx_array *jx_scalar_complex(double re, double im) {
  double v[2] = {re, im};
  return array_from_host(v, JX_COMPLEX128, true, 0, NULL);
}

jx_array *jx_scalar_complex_of(double re, double im, jx_dtype dtype) {
  if (!dtype_is_complex(dtype)) {
    error_set(JX_ERR_DTYPE, "jx_scalar_complex_of: %s is not a complex dtype",
              dtype_is_valid(dtype) ? jx_dtype_name(dtype) : "an invalid value");
    return NULL;
  }
  jx_dtype canon = dtype_canonicalize(dtype);
  unsigned char bytes[16];
  alu_store(bytes, canon, 0, alu_normalize(canon, (AluValue){.c = {re, im}}));
  return array_from_host(bytes, canon, false, 0, NULL);
}

/* ------------------------------------------------------------- readback */

/* Readback needs data: a tracer has none (JAX's ConcretizationTypeError). */
static bool require_concrete(const char *fn, const jx_array *a) {
  if (!a->tracer) return true;
  char b[ARRAY_DESCRIBE_BUF];
  error_set(JX_ERR_VALUE, "%s: %s is a tracer inside a transformation; its value is not "
            "known here (JAX's ConcretizationTypeError)", fn, array_describe(b, a));
  return false;
}

jx_status jx_read(jx_array *a, void *dst, size_t nbytes) {
  if (!a || !dst) {
    if (!error_pending())
      error_set(JX_ERR_VALUE, "jx_read: %s is NULL", a ? "dst" : "the array");
    return jx_last_status();
  }
  if (!require_concrete("jx_read", a)) return JX_ERR_VALUE;
  size_t want = (size_t)jx_size(a) * jx_dtype_itemsize(a->dtype);
  if (nbytes != want) {
    char b[ARRAY_DESCRIBE_BUF];
    error_set(JX_ERR_VALUE, "jx_read: %s needs %zu bytes, got %zu", array_describe(b, a),
              want, nbytes);
    return JX_ERR_VALUE;
  }
  if (a->dtype == JX_FLOAT0) return JX_OK; /* no data */
  jx_array *c = impl_contiguous(a);
  if (!c) return jx_last_status();
  const Backend *be = c->buf->backend;
  jx_status s = be->synchronize(be);
  if (s == JX_OK) s = be->copy_out(be, dst, c->buf->mem, nbytes);
  jx_free(c);
  if (s != JX_OK) error_set(s, "jx_read: copy from device %s failed", be->name);
  return s;
}

double jx_item(jx_array *a) {
  if (!a) {
    error_set(JX_ERR_VALUE, "jx_item: the array is NULL"); /* keeps an earlier error */
    return NAN;
  }
  if (jx_size(a) != 1) {
    char b[ARRAY_DESCRIBE_BUF];
    error_set(JX_ERR_SHAPE, "jx_item: %s has %lld elements, expected 1", array_describe(b, a),
              (long long)jx_size(a));
    return NAN;
  }
  if (a->dtype == JX_FLOAT0) {
    error_set(JX_ERR_DTYPE, "jx_item: the array is float0, which holds no value");
    return NAN;
  }
  if (!require_concrete("jx_item", a)) return NAN; /* named as called, not as jx_read */
  unsigned char bytes[16];
  if (jx_read(a, bytes, jx_dtype_itemsize(a->dtype)) != JX_OK) return NAN;
  AluValue v = alu_load(bytes, a->dtype, 0);
  return alu_eval_op(ALU_CAST, JX_FLOAT64, a->dtype, &v).f; /* complex: the real part */
}

jx_status jx_item_complex(jx_array *a, double *re, double *im) {
  if (re) *re = NAN;
  if (im) *im = NAN;
  if (!a || !re || !im) {
    if (!error_pending() || a)
      error_set(JX_ERR_VALUE, "jx_item_complex: %s is NULL", !a ? "the array" : !re ? "re" : "im");
    return jx_last_status();
  }
  if (jx_size(a) != 1) {
    char b[ARRAY_DESCRIBE_BUF];
    error_set(JX_ERR_SHAPE, "jx_item_complex: %s has %lld elements, expected 1",
              array_describe(b, a), (long long)jx_size(a));
    return JX_ERR_SHAPE;
  }
  if (a->dtype == JX_FLOAT0) {
    error_set(JX_ERR_DTYPE, "jx_item_complex: the array is float0, which holds no value");
    return JX_ERR_DTYPE;
  }
  if (!require_concrete("jx_item_complex", a)) return JX_ERR_VALUE;
  unsigned char bytes[16];
  jx_status s = jx_read(a, bytes, jx_dtype_itemsize(a->dtype));
  if (s != JX_OK) return s;
  AluValue v = alu_eval_op(ALU_CAST, JX_COMPLEX128, a->dtype, (AluValue[]){alu_load(bytes, a->dtype, 0)});
  *re = v.c.re;
  *im = v.c.im;
  return JX_OK;
}

jx_status jx_block_until_ready(jx_array *a) {
  if (!a) {
    if (!error_pending()) error_set(JX_ERR_VALUE, "jx_block_until_ready: the array is NULL");
    return jx_last_status();
  }
  if (!require_concrete("jx_block_until_ready", a)) return JX_ERR_VALUE;
  return a->buf->backend->synchronize(a->buf->backend);
}

const Backend *realize_device(const char *fn, int nin, jx_array *const *in, bool *committed) {
  const jx_array *first = NULL, *pinned = NULL;
  for (int i = 0; i < nin; i++) {
    const jx_array *a = in[i];
    if (!a || !a->buf) continue;
    if (!first) first = a;
    if (!a->committed) continue;
    if (pinned && pinned->buf->backend != a->buf->backend) {
      char b1[ARRAY_DESCRIBE_BUF], b2[ARRAY_DESCRIBE_BUF];
      error_set(JX_ERR_DEVICE, "%s: arrays committed to different devices: %s on %s and %s "
                "on %s (move one with jx_device_put)", fn, array_describe(b1, pinned),
                pinned->buf->backend->name, array_describe(b2, a), a->buf->backend->name);
      return NULL;
    }
    if (!pinned) pinned = a;
  }
  *committed = pinned != NULL;
  return pinned ? pinned->buf->backend : first ? first->buf->backend : backend_default();
}

bool realize_args(const Backend *be, int nin, jx_array *const *in, jx_array *const **args) {
  *args = in;
  int i = 0;
  while (i < nin && (!in[i]->buf || in[i]->buf->backend == be)) i++;
  if (i == nin) return true; /* the common case: nothing to move */
  jx_array **moved = calloc((size_t)nin, sizeof *moved);
  if (!moved) {
    error_set(JX_ERR_OOM, "out of memory moving arrays to device %s", be->name);
    return false;
  }
  bool ok = true;
  for (i = 0; i < nin && ok; i++) {
    jx_array *a = in[i];
    if (!a->buf || a->buf->backend == be) {
      moved[i] = jx_ref(a);
      continue;
    }
    Buffer *b = backend_transfer(a->buf, be);
    ShapeTracker *st = b ? shape_copy(a->st) : NULL;
    moved[i] = st ? array_new(b, st, a->dtype, a->weak) : NULL;
    if (b && !st) buffer_free(b);
    ok = moved[i] != NULL;
  }
  *args = moved;
  if (!ok) {
    realize_args_free(nin, in, moved);
    *args = in;
  }
  return ok;
}

void realize_args_free(int nin, jx_array *const *in, jx_array *const *args) {
  if (args == in) return;
  for (int i = 0; i < nin; i++) jx_free(args[i]);
  free((void *)args);
}

const char *jx_device_of(const jx_array *a) {
  if (!a) return NULL;
  return a->buf ? a->buf->backend->name : "tracer";
}

jx_array *jx_device_put(jx_array *a, const char *device) {
  if (!a) return NULL;
  const Backend *be = backend_find("jx_device_put", device);
  if (!be) return NULL;
  if (!require_concrete("jx_device_put", a)) return NULL;
  jx_array *out = NULL;
  if (be == a->buf->backend) { /* the same data, now committed */
    ShapeTracker *st = shape_copy(a->st);
    out = st ? array_new(buffer_ref(a->buf), st, a->dtype, a->weak) : NULL;
    if (!st) error_set(JX_ERR_OOM, "jx_device_put: out of memory");
  } else { /* a contiguous copy on the device */
    jx_array *c = impl_contiguous(a);
    Buffer *buf = c ? backend_transfer(c->buf, be) : NULL;
    if (buf) out = array_new(buf, shape_contiguous(a->ndim, a->shape), a->dtype, a->weak);
    jx_free(c);
  }
  if (out) out->committed = true;
  return out;
}
