/* jacobian.c -- jacfwd (vmap of jvp over the input's standard basis), jacrev (vmap of
 * the vjp pullback over the output's basis) and hessian (jacfwd of jacrev), as in JAX.
 * For a function of outputs y_o and differentiated inputs x_a (argnums), the result
 * function returns J[o][a] of shape y_o.shape + x_a.shape, ordered o-major. */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "transform/transform.h"

typedef struct Jac {
  jx_fn *f;
  int nargnums;
  int *argnums;
  bool reverse;
  bool holomorphic; /* holomorphic=True: complex inputs (and outputs), f'(z) */
  bool allow_int;   /* jacrev(allow_int=True): int/bool inputs get zero jacobians */
} Jac;

static void jac_free(void *ctx) {
  Jac *j = ctx;
  fn_release(j->f);
  free(j->argnums);
  free(j);
}

/* eye(n) reshaped to (n, *shape) in dtype: the standard basis of an array of shape. */
static jx_array *basis(jx_dtype dtype, int ndim, const int64_t *shape) {
  int64_t n = shape_numel(ndim, shape), sq[2] = {n, n}, full[JX_MAX_NDIM + 1] = {n};
  if (ndim + 1 > JX_MAX_NDIM) {
    error_set(JX_ERR_UNSUPPORTED, "jacobian: rank %d is too large", ndim);
    return NULL;
  }
  memcpy(full + 1, shape, (size_t)ndim * sizeof(int64_t));
  jx_array *i = prim_iota(JX_INT32, 2, sq, 0), *j = prim_iota(JX_INT32, 2, sq, 1);
  jx_array *e = prim_convert(prim_binary(PRIM_eq, i, j), dtype, false);
  jx_array *r = prim_reshape(e, ndim + 1, full);
  jx_free(i), jx_free(j), jx_free(e);
  return r;
}

/* (n, *a) -> (*a, n) -> (*a, *b) where n = prod(b): batch axis moved last, split. */
static jx_array *batch_last(jx_array *x, int nb, const int64_t *b) {
  int perm[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim - 1; d++) perm[d] = d + 1;
  perm[x->ndim - 1] = 0;
  jx_array *t = prim_transpose(x, perm);
  if (!t) return NULL;
  int64_t shape[JX_MAX_NDIM];
  int na = x->ndim - 1;
  if (na + nb > JX_MAX_NDIM) {
    jx_free(t);
    error_set(JX_ERR_UNSUPPORTED, "jacobian: result rank %d is too large", na + nb);
    return NULL;
  }
  memcpy(shape, t->shape, (size_t)na * sizeof(int64_t));
  memcpy(shape + na, b, (size_t)nb * sizeof(int64_t));
  jx_array *r = prim_reshape(t, na + nb, shape);
  jx_free(t);
  return r;
}

/* The linear map a jacobian is taken of, as a jx_fn for vmap: forward, the JVP with
 * one input's tangent; reverse, the pullback with one output's cotangent. */
typedef struct Slice {
  jx_fn *f;          /* forward: f; reverse: the pullback */
  jx_array *const *in; /* forward: the primals */
  const Aval *avals; /* forward: input avals; reverse: output avals */
  int n, which;      /* number of inputs (fwd) / outputs (rev) and the one that varies */
  int nsel;          /* reverse: number of argnums returned */
  const int *sel;
} Slice;

static jx_status fwd_impl(void *ctx, jx_array *const *in, jx_array **out) {
  Slice *s = ctx;
  int nout = jx_fn_nout(s->f);
  jx_array **tan = calloc((size_t)s->n + 1, sizeof *tan), **pout = calloc((size_t)nout, sizeof *pout);
  if (!tan || !pout) {
    free(tan), free(pout);
    error_set(JX_ERR_OOM, "jx_jacfwd: out of memory");
    return JX_ERR_OOM;
  }
  for (int i = 0; i < s->n; i++) { /* int/bool inputs (not differentiated): float0 tangents */
    const Aval *a = &s->avals[i];
    tan[i] = i == s->which ? in[0]
             : dtype_is_integer(a->dtype) || dtype_is_bool(a->dtype) ? array_float0(a->ndim, a->shape)
                                                                    : tx_zeros(a);
  }
  jx_status st = jx_jvp(s->f, s->in, tan, pout, out);
  for (int i = 0; i < s->n; i++)
    if (i != s->which) jx_free(tan[i]);
  for (int o = 0; st == JX_OK && o < nout; o++) jx_free(pout[o]);
  free(tan), free(pout);
  return st;
}

static jx_status rev_impl(void *ctx, jx_array *const *in, jx_array **out) {
  Slice *s = ctx;
  int nin = jx_fn_nout(s->f);
  jx_array **ct = calloc((size_t)s->n + 1, sizeof *ct), **all = calloc((size_t)nin + 1, sizeof *all);
  if (!ct || !all) {
    free(ct), free(all);
    error_set(JX_ERR_OOM, "jx_jacrev: out of memory");
    return JX_ERR_OOM;
  }
  for (int o = 0; o < s->n; o++) ct[o] = o == s->which ? in[0] : tx_zeros(&s->avals[o]);
  jx_status st = jx_call(s->f, ct, all);
  for (int o = 0; o < s->n; o++)
    if (o != s->which) jx_free(ct[o]);
  for (int i = 0; st == JX_OK && i < nin; i++) {
    bool keep = false;
    for (int k = 0; k < s->nsel; k++)
      if (s->sel[k] == i) out[k] = all[i], keep = true;
    if (!keep) jx_free(all[i]);
  }
  free(ct), free(all);
  return st;
}

static jx_status jac_forward(Jac *j, jx_array *const *in, jx_array **out) {
  int nin = jx_fn_nin(j->f), nout = jx_fn_nout(j->f);
  Aval *avals = calloc((size_t)nin + 1, sizeof *avals);
  if (!avals) return JX_ERR_OOM;
  for (int i = 0; i < nin; i++) avals[i] = prim_aval_of(in[i]);
  jx_status st = JX_OK;
  for (int k = 0; st == JX_OK && k < j->nargnums; k++) {
    int a = j->argnums[k];
    Slice s = {.f = j->f, .in = in, .avals = avals, .n = nin, .which = a};
    jx_fn *g = jx_fn_new("jacfwd_slice", 1, nout, fwd_impl, &s);
    jx_fn *vg = jx_vmap(g, NULL, NULL);
    jx_array *b = basis(in[a]->dtype, in[a]->ndim, in[a]->shape);
    jx_array **cols = calloc((size_t)nout, sizeof *cols);
    st = vg && b && cols ? jx_call(vg, &b, cols) : jx_last_status() ? jx_last_status() : JX_ERR_OOM;
    for (int o = 0; st == JX_OK && o < nout; o++) {
      out[o * j->nargnums + k] = batch_last(cols[o], in[a]->ndim, in[a]->shape);
      if (!out[o * j->nargnums + k]) st = jx_last_status();
    }
    for (int o = 0; cols && o < nout; o++) jx_free(cols[o]);
    free(cols);
    jx_free(b);
    jx_fn_free(vg);
    jx_fn_free(g);
  }
  free(avals);
  return st;
}

static jx_status jac_reverse(Jac *j, jx_array *const *in, jx_array **out) {
  int nout = jx_fn_nout(j->f), na = j->nargnums;
  jx_array **y = calloc((size_t)nout, sizeof *y);
  Aval *avals = calloc((size_t)nout, sizeof *avals);
  jx_fn *pb = y && avals ? jx_vjp(j->f, in, y) : NULL;
  jx_status st = pb ? JX_OK : jx_last_status() ? jx_last_status() : JX_ERR_OOM;
  for (int o = 0; st == JX_OK && o < nout; o++) avals[o] = prim_aval_of(y[o]);
  for (int o = 0; st == JX_OK && o < nout; o++) {
    Slice s = {.f = pb, .avals = avals, .n = nout, .which = o, .nsel = na, .sel = j->argnums};
    jx_fn *h = jx_fn_new("jacrev_slice", 1, na, rev_impl, &s);
    jx_fn *vh = jx_vmap(h, NULL, NULL);
    jx_array *b = basis(y[o]->dtype, y[o]->ndim, y[o]->shape);
    jx_array **rows = calloc((size_t)na, sizeof *rows);
    st = vh && b && rows ? jx_call(vh, &b, rows) : jx_last_status() ? jx_last_status() : JX_ERR_OOM;
    for (int k = 0; st == JX_OK && k < na; k++) {
      /* rows[k]: (m, *x.shape) -> (*y.shape, *x.shape) */
      jx_array *x = in[j->argnums[k]];
      int64_t shape[JX_MAX_NDIM];
      int nd = y[o]->ndim + x->ndim;
      if (nd > JX_MAX_NDIM) {
        error_set(JX_ERR_UNSUPPORTED, "jx_jacrev: result rank %d is too large", nd);
        st = JX_ERR_UNSUPPORTED;
        break;
      }
      memcpy(shape, y[o]->shape, (size_t)y[o]->ndim * sizeof(int64_t));
      memcpy(shape + y[o]->ndim, x->shape, (size_t)x->ndim * sizeof(int64_t));
      /* allow_int: the rows are float0; JAX reshapes them into zeros of x's dtype */
      out[o * na + k] = rows[k]->dtype == JX_FLOAT0 ? jx_zeros(nd, shape, x->dtype)
                                                    : prim_reshape(rows[k], nd, shape);
      if (!out[o * na + k]) st = jx_last_status();
    }
    for (int k = 0; rows && k < na; k++) jx_free(rows[k]);
    free(rows);
    jx_free(b);
    jx_fn_free(vh);
    jx_fn_free(h);
  }
  for (int o = 0; y && o < nout; o++) jx_free(y[o]);
  jx_fn_free(pb);
  free(y), free(avals);
  return st;
}

static jx_status jac_impl(void *ctx, jx_array *const *in, jx_array **out) {
  Jac *j = ctx;
  for (int k = 0; k < j->nargnums; k++) {
    jx_array *x = in[j->argnums[k]];
    if (j->allow_int && (dtype_is_integer(x->dtype) || dtype_is_bool(x->dtype))) continue;
    /* JAX: real inputs, or complex ones with holomorphic=True (then only complex) */
    if (j->holomorphic ? !dtype_is_complex(x->dtype) : !dtype_is_floating(x->dtype)) {
      char b[ARRAY_DESCRIBE_BUF];
      error_set(JX_ERR_DTYPE, "%s: argument %d is %s; jacobians need %s", j->holomorphic
                ? (j->reverse ? "jx_jacrev_holomorphic" : "jx_jacfwd_holomorphic")
                : (j->reverse ? "jx_jacrev" : "jx_jacfwd"), j->argnums[k], array_describe(b, x),
                j->holomorphic ? "complex inputs (holomorphic)"
                : dtype_is_complex(x->dtype) ? "float inputs (for complex ones pass holomorphic: "
                                               "jx_jacfwd_holomorphic / jx_jacrev_holomorphic)"
                : j->reverse && !dtype_is_floating(x->dtype)
                    ? "float inputs (for Boolean- or integer-valued ones: jx_jacrev_allow_int)"
                    : "float inputs");
      return JX_ERR_DTYPE;
    }
  }
  return j->reverse ? jac_reverse(j, in, out) : jac_forward(j, in, out);
}

static jx_fn *make_jac(const char *fn, jx_fn *f, int nargnums, const int *argnums, bool reverse,
                       bool holomorphic, bool allow_int) {
  int *an = tx_argnums(fn, f, &nargnums, argnums);
  Jac *j = an ? calloc(1, sizeof *j) : NULL;
  if (!j) {
    if (an) error_set(JX_ERR_OOM, "%s: out of memory", fn);
    free(an);
    return NULL;
  }
  int nin = jx_fn_nin(f);
  *j = (Jac){.f = fn_retain(f), .nargnums = nargnums, .argnums = an, .reverse = reverse,
             .holomorphic = holomorphic, .allow_int = allow_int};
  jx_fn *r = jx_fn_new_with_free(reverse ? "jacrev" : "jacfwd", nin, jx_fn_nout(f) * nargnums,
                                 jac_impl, j, jac_free);
  if (!r) jac_free(j);
  return r;
}

jx_fn *jx_jacfwd(jx_fn *f, int nargnums, const int *argnums) {
  return make_jac("jx_jacfwd", f, nargnums, argnums, false, false, false);
}

jx_fn *jx_jacrev(jx_fn *f, int nargnums, const int *argnums) {
  return make_jac("jx_jacrev", f, nargnums, argnums, true, false, false);
}

jx_fn *jx_jacrev_allow_int(jx_fn *f, int nargnums, const int *argnums) {
  return make_jac("jx_jacrev_allow_int", f, nargnums, argnums, true, false, true);
}

jx_fn *jx_hessian(jx_fn *f, int nargnums, const int *argnums) {
  if (!f) { /* named as the caller called it, not by the jacrev inside */
    if (!error_pending()) error_set(JX_ERR_VALUE, "jx_hessian: the function is NULL");
    return NULL;
  }
  jx_fn *r = jx_jacrev(f, nargnums, argnums);
  jx_fn *h = r ? jx_jacfwd(r, nargnums, argnums) : NULL;
  jx_fn_free(r);
  return h;
}

jx_fn *jx_jacfwd_holomorphic(jx_fn *f, int nargnums, const int *argnums) {
  return make_jac("jx_jacfwd_holomorphic", f, nargnums, argnums, false, true, false);
}

jx_fn *jx_jacrev_holomorphic(jx_fn *f, int nargnums, const int *argnums) {
  return make_jac("jx_jacrev_holomorphic", f, nargnums, argnums, true, true, false);
}
