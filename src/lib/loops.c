/* loops.c -- lax loops (lax.while_loop, fori_loop, scan, map, associative_scan) and jaxc's bounded
 * while_loop: the user's callbacks (jx_fn) are traced once into closed jaxprs for the
 * carries' types and bound as one while or scan equation, so every transformation
 * and jit sees the loop (JAX's jax/_src/lax/control_flow/loops.py). Values the
 * callbacks close over that are traced by an enclosing transformation become the
 * loop's consts (JAX's closure conversion), so loops differentiate with respect to
 * them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "transform/transform.h"

/* A traced callback: its jaxpr, with the enclosing traces' values it closed over moved
 * to leading inputs (consts[0 .. nconsts), references held). */
typedef struct Traced {
  Jaxpr *j;
  int nconsts;
  jx_array **consts;
} Traced;

static void traced_free(Traced *t) {
  stage_consts_free(t->nconsts, t->consts);
  jaxpr_free(t->j);
  *t = (Traced){0};
}

/* Traces f on abstract inputs of avals in[0 .. nin) into t (tracer consts hoisted). */
static bool trace_fn(const char *fn, jx_fn *f, int nin, const Aval *in, Traced *t) {
  *t = (Traced){0};
  if (jx_fn_nin(f) != nin) {
    error_set(JX_ERR_VALUE, "%s: %s takes %d inputs, %d given", fn, jx_fn_name(f), jx_fn_nin(f), nin);
    return false;
  }
  int nout = jx_fn_nout(f);
  Trace *st = stage_begin();
  if (!st) return false;
  jx_scope_begin();
  jx_array **ins = calloc((size_t)nin + 1, sizeof *ins), **outs = calloc((size_t)nout + 1, sizeof *outs);
  bool ok = ins && outs;
  if (!ok) error_set(JX_ERR_OOM, "%s: out of memory", fn);
  for (int i = 0; ok && i < nin; i++) ok = (ins[i] = stage_new_input(st, &in[i])) != NULL;
  ok = ok && jx_call(f, ins, outs) == JX_OK;
  t->j = stage_end(st, ok ? nout : 0, outs);
  jx_scope_end(0, NULL);
  free(ins), free(outs);
  ok = ok && t->j && (t->j->name = strdup(jx_fn_name(f))) &&
       stage_hoist_tracer_consts(fn, t->j, &t->nconsts, &t->consts) && jaxpr_simplify(t->j) == JX_OK;
  if (!ok) traced_free(t);
  return ok;
}

static bool same_type(const Aval *a, const Aval *b) {
  return a->dtype == b->dtype && a->ndim == b->ndim &&
         memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t)) == 0;
}

/* The body's carry outputs (from output `at`) against the carries' avals. A weakly typed
 * carry whose output is strong or of another dtype becomes strong
 * result_type(carry, output) and *retrace is set (JAX's _promote_weak_typed_input converts
 * the initial value: a scalar 0.5 carried through a float16 body becomes float16); other
 * differences are errors naming both types. */
static bool check_carry(const char *fn, jx_fn *body, const Jaxpr *j, int at, int ncarry, Aval *carry,
                        bool *retrace) {
  for (int o = 0; o < ncarry; o++) {
    Aval got = j->vars[j->outvars[at + o]];
    if (carry[o].weak && got.ndim == carry[o].ndim &&
        memcmp(got.shape, carry[o].shape, (size_t)got.ndim * sizeof(int64_t)) == 0) {
      bool weak;
      jx_dtype d = dtype_promote(carry[o].dtype, true, got.dtype, got.weak, &weak);
      if (d != carry[o].dtype || !got.weak) {
        carry[o].dtype = d, carry[o].weak = false, *retrace = true;
        continue;
      }
    }
    if (same_type(&got, &carry[o])) continue;
    char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
    aval_text(b0, sizeof b0, &got), aval_text(b1, sizeof b1, &carry[o]);
    error_set(got.dtype != carry[o].dtype ? JX_ERR_DTYPE : JX_ERR_SHAPE,
              "%s: %s gives %s for carry %d, but the carry's initial value is %s (the carry must "
              "keep its shape and dtype across iterations)", fn, jx_fn_name(body), b0, o, b1);
    return false;
  }
  return true;
}

/* Traces body (through trace_fn into *b) until its carry outputs match the carries' avals
 * av[0..ncarry), promoting weakly typed carries between traces (check_carry; a promoted
 * carry is strong, so at most ncarry + 1 traces). */
static bool trace_carried(const char *fn, jx_fn *body, int nin, int ncarry, Aval *av, Traced *b) {
  bool ok = true, retrace = true;
  while (ok && retrace) {
    traced_free(b);
    retrace = false;
    ok = trace_fn(fn, body, nin, av, b) && check_carry(fn, body, b->j, 0, ncarry, av, &retrace);
  }
  return ok;
}

static bool check_arrays(const char *fn, const char *what, int n, jx_array *const *xs) {
  if (n < 0 || (n && !xs)) {
    error_set(JX_ERR_VALUE, "%s: %d %s and no array of them", fn, n, what);
    return false;
  }
  for (int i = 0; i < n; i++)
    if (!xs[i]) {
      if (!error_pending()) error_set(JX_ERR_VALUE, "%s: %s %d is NULL", fn, what, i);
      return false;
    }
  return true;
}

/* Carries converted to the avals (after check_carry promoted weakly typed ones). */
static bool carries_as(int n, jx_array *const *init, const Aval *av, jx_array **out) {
  for (int i = 0; i < n; i++) {
    bool same = init[i]->weak == av[i].weak && init[i]->dtype == av[i].dtype;
    out[i] = same ? init[i] : prim_convert(init[i], av[i].dtype, av[i].weak);
    if (!out[i]) return false;
  }
  return true;
}

/* ----------------------------------------------------------- while_loop */

static jx_status while_loop(const char *fn, jx_fn *cond_fn, jx_fn *body_fn, int64_t max_trips, int ncarry,
                            jx_array *const *init, jx_array **out) {
  if (!cond_fn || !body_fn || !out || !check_arrays(fn, "carries", ncarry, init)) {
    if (!error_pending()) error_set(JX_ERR_VALUE, "%s: cond_fun, body_fun and out must not be NULL", fn);
    return jx_last_status();
  }
  if (jx_fn_nout(cond_fn) != 1 || jx_fn_nout(body_fn) != ncarry) {
    error_set(JX_ERR_VALUE, "%s: cond_fun %s gives %d outputs (must be 1) and body_fun %s %d (must be the "
              "%d carries)", fn, jx_fn_name(cond_fn), jx_fn_nout(cond_fn), jx_fn_name(body_fn),
              jx_fn_nout(body_fn), ncarry);
    return JX_ERR_VALUE;
  }
  for (int o = 0; o < ncarry; o++) out[o] = NULL;
  Aval *av = calloc((size_t)ncarry + 1, sizeof *av);
  if (!av) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return JX_ERR_OOM;
  }
  for (int i = 0; i < ncarry; i++) av[i] = prim_aval_of(init[i]);
  Traced c = {0}, b = {0};
  bool ok = trace_carried(fn, body_fn, ncarry, ncarry, av, &b);
  ok = ok && trace_fn(fn, cond_fn, ncarry, av, &c);
  if (ok) {
    Aval p = c.j->vars[c.j->outvars[0]];
    if (p.ndim != 0 || p.dtype != JX_BOOL) {
      char b0[ARRAY_DESCRIBE_BUF];
      aval_text(b0, sizeof b0, &p);
      error_set(p.ndim ? JX_ERR_SHAPE : JX_ERR_DTYPE, "%s: cond_fun %s must give a bool scalar, got %s", fn,
                jx_fn_name(cond_fn), b0);
      ok = false;
    }
  }
  jx_scope_begin();
  int nin = c.nconsts + b.nconsts + ncarry;
  jx_array **ops = ok ? calloc((size_t)nin + 1, sizeof *ops) : NULL;
  ok = ok && ops;
  for (int i = 0; ok && i < c.nconsts; i++) ops[i] = c.consts[i];
  for (int i = 0; ok && i < b.nconsts; i++) ops[c.nconsts + i] = b.consts[i];
  ok = ok && carries_as(ncarry, init, av, ops + c.nconsts + b.nconsts);
  ok = ok && prim_while(c.j, c.nconsts, b.j, b.nconsts, max_trips, nin, ops, out) == JX_OK;
  jx_scope_end(ok ? ncarry : 0, out);
  free(ops), free(av);
  traced_free(&c), traced_free(&b);
  if (!ok)
    for (int o = 0; o < ncarry; o++) out[o] = NULL;
  return ok ? JX_OK : jx_last_status() ? jx_last_status() : JX_ERR_OOM;
}

jx_status jx_lax_while_loop(jx_fn *cond_fn, jx_fn *body_fn, int ncarry, jx_array *const *init, jx_array **out) {
  return while_loop("jx_lax_while_loop", cond_fn, body_fn, 0, ncarry, init, out);
}

jx_status jx_lax_while_loop_bounded(jx_fn *cond_fn, jx_fn *body_fn, int64_t max_trips, int ncarry,
                                    jx_array *const *init, jx_array **out) {
  if (max_trips < 1) {
    error_set(JX_ERR_VALUE, "jx_lax_while_loop_bounded: max_trips must be at least 1, got %lld",
              (long long)max_trips);
    return JX_ERR_VALUE;
  }
  return while_loop("jx_lax_while_loop_bounded", cond_fn, body_fn, max_trips, ncarry, init, out);
}

/* ----------------------------------------------------------------- scan */

jx_status jx_lax_scan(jx_fn *f, int ncarry, jx_array *const *init, int nxs, jx_array *const *xs, int64_t length,
                      bool reverse, int unroll, jx_array **carry_out, jx_array **ys) {
  const char *fn = "jx_lax_scan";
  if (!f || !check_arrays(fn, "carries", ncarry, init) || !check_arrays(fn, "xs", nxs, xs)) {
    if (!error_pending()) error_set(JX_ERR_VALUE, "%s: f is NULL", fn);
    return jx_last_status();
  }
  int nout = jx_fn_nout(f), ny = nout - ncarry;
  if (ny < 0 || jx_fn_nin(f) != ncarry + nxs || (ncarry && !carry_out) || (ny && !ys)) {
    error_set(JX_ERR_VALUE, "%s: f (%s) takes %d inputs and gives %d outputs; it must take the %d carries and "
              "%d xs slices and give the carries then the ys (with out arrays for both)", fn, jx_fn_name(f),
              jx_fn_nin(f), nout, ncarry, nxs);
    return JX_ERR_VALUE;
  }
  for (int i = 0; i < nxs; i++) {
    if (xs[i]->ndim < 1) {
      error_set(JX_ERR_SHAPE, "%s: xs %d is a scalar; scanned arrays need a leading axis", fn, i);
      return JX_ERR_SHAPE;
    }
    if (length < 0) length = xs[i]->shape[0];
    if (xs[i]->shape[0] != length) {
      error_set(JX_ERR_SHAPE, "%s: xs %d has leading axis %lld but the scan's length is %lld", fn, i,
                (long long)xs[i]->shape[0], (long long)length);
      return JX_ERR_SHAPE;
    }
  }
  if (length < 0) {
    error_set(JX_ERR_VALUE, "%s: without xs the length must be given", fn);
    return JX_ERR_VALUE;
  }
  if (unroll < 1) { /* JAX: ValueError, `unroll` must be a `bool` or a positive `int` */
    error_set(JX_ERR_VALUE, "%s: unroll must be a positive int, got %d", fn, unroll);
    return JX_ERR_VALUE;
  }
  for (int o = 0; o < ncarry; o++) carry_out[o] = NULL;
  for (int o = 0; o < ny; o++) ys[o] = NULL;
  Aval *av = calloc((size_t)(ncarry + nxs) + 1, sizeof *av);
  jx_array **res = calloc((size_t)nout + 1, sizeof *res);
  if (!av || !res) {
    free(av), free(res);
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return JX_ERR_OOM;
  }
  for (int i = 0; i < ncarry; i++) av[i] = prim_aval_of(init[i]);
  for (int i = 0; i < nxs; i++) {
    Aval a = prim_aval_of(xs[i]);
    a.ndim--;
    memmove(a.shape, a.shape + 1, (size_t)a.ndim * sizeof(int64_t));
    av[ncarry + i] = a;
  }
  Traced b = {0};
  bool ok = trace_carried(fn, f, ncarry + nxs, ncarry, av, &b);
  jx_scope_begin();
  int nin = b.nconsts + ncarry + nxs;
  jx_array **ops = ok ? calloc((size_t)nin + 1, sizeof *ops) : NULL;
  ok = ok && ops;
  for (int i = 0; ok && i < b.nconsts; i++) ops[i] = b.consts[i];
  ok = ok && carries_as(ncarry, init, av, ops + b.nconsts);
  for (int i = 0; ok && i < nxs; i++) ops[b.nconsts + ncarry + i] = xs[i];
  ok = ok && prim_scan(b.j, b.nconsts, ncarry, length, reverse, unroll, nin, ops, res) == JX_OK;
  jx_scope_end(ok ? nout : 0, res);
  for (int o = 0; ok && o < nout; o++) {
    if (o < ncarry) carry_out[o] = res[o];
    else ys[o - ncarry] = res[o];
  }
  free(ops), free(av), free(res);
  traced_free(&b);
  return ok ? JX_OK : jx_last_status() ? jx_last_status() : JX_ERR_OOM;
}

jx_status jx_lax_map(jx_fn *f, int nxs, jx_array *const *xs, jx_array **ys) {
  if (!f || nxs < 1) {
    if (!error_pending()) error_set(JX_ERR_VALUE, "jx_lax_map: needs f and at least one xs");
    return jx_last_status();
  }
  return jx_lax_scan(f, 0, NULL, nxs, xs, -1, false, 1, NULL, ys);
}

/* ------------------------------------------------------------ fori_loop */

typedef struct Fori {
  jx_fn *body; /* (i, carry...) -> carry... */
  int ncarry;
} Fori;

/* scan form: carry (i, carry...) -> (i + 1, body(i, carry...)) */
static jx_status fori_scan_body(void *ctx, jx_array *const *in, jx_array **out) {
  Fori *F = ctx;
  jx_array *one = jx_full(0, NULL, 1, in[0]->dtype);
  out[0] = jx_add(in[0], one);
  jx_free(one);
  return jx_call(F->body, in, out + 1);
}

/* while form: carry (i, upper, carry...) */
static jx_status fori_while_cond(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_less(in[0], in[1]);
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status fori_while_body(void *ctx, jx_array *const *in, jx_array **out) {
  Fori *F = ctx;
  jx_array **args = malloc((size_t)(F->ncarry + 1) * sizeof *args);
  if (!args) {
    error_set(JX_ERR_OOM, "jx_lax_fori_loop: out of memory");
    return JX_ERR_OOM;
  }
  args[0] = in[0];
  for (int i = 0; i < F->ncarry; i++) args[1 + i] = in[2 + i];
  jx_array *one = jx_full(0, NULL, 1, in[0]->dtype);
  out[0] = jx_add(in[0], one);
  jx_free(one);
  out[1] = jx_ref(in[1]);
  jx_status s = jx_call(F->body, args, out + 2);
  free(args);
  return s;
}

jx_status jx_lax_fori_loop(jx_array *lower, jx_array *upper, jx_fn *body_fn, int ncarry, jx_array *const *init,
                           jx_array **out) {
  const char *fn = "jx_lax_fori_loop";
  if (!lower || !upper || !body_fn || !out || !check_arrays(fn, "carries", ncarry, init)) {
    if (!error_pending()) error_set(JX_ERR_VALUE, "%s: lower, upper, body_fun and out must not be NULL", fn);
    return jx_last_status();
  }
  if (lower->ndim || upper->ndim || !dtype_is_integer(lower->dtype) || !dtype_is_integer(upper->dtype)) {
    char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
    error_set(JX_ERR_DTYPE, "%s: lower and upper must be integer scalars, got %s and %s", fn,
              array_describe(b0, lower), array_describe(b1, upper));
    return JX_ERR_DTYPE;
  }
  if (jx_fn_nin(body_fn) != ncarry + 1 || jx_fn_nout(body_fn) != ncarry) {
    error_set(JX_ERR_VALUE, "%s: body_fun %s must take (i, %d carries) and give the %d carries", fn,
              jx_fn_name(body_fn), ncarry, ncarry);
    return JX_ERR_VALUE;
  }
  Fori F = {.body = body_fn, .ncarry = ncarry};
  jx_scope_begin();
  /* the index dtype: lower and upper promoted (JAX: weak Python ints give int32) */
  bool weak = false;
  jx_dtype it = jx_promote_types(lower->dtype, lower->weak, upper->dtype, upper->weak, &weak);
  jx_array *lo = jx_astype(lower, it), *hi = jx_astype(upper, it);
  jx_array **res = calloc((size_t)ncarry + 3, sizeof *res), **carry = calloc((size_t)ncarry + 3, sizeof *carry);
  jx_status s = lo && hi && res && carry ? JX_OK : jx_last_status() ? jx_last_status() : JX_ERR_OOM;
  char name[256];
  snprintf(name, sizeof name, "%s", jx_fn_name(body_fn));
  if (s == JX_OK && !lower->tracer && !upper->tracer) { /* concrete bounds: scan (reverse-differentiable) */
    int64_t a = (int64_t)jx_item(lo), b = (int64_t)jx_item(hi);
    jx_fn *sb = jx_fn_new(name, ncarry + 1, ncarry + 1, fori_scan_body, &F);
    carry[0] = lo;
    for (int i = 0; i < ncarry; i++) carry[1 + i] = init[i];
    s = sb ? jx_lax_scan(sb, ncarry + 1, carry, 0, NULL, b > a ? b - a : 0, false, 1, res, NULL) : jx_last_status();
    jx_fn_free(sb);
  } else if (s == JX_OK) { /* traced bounds: while */
    jx_fn *cf = jx_fn_new("fori_cond", ncarry + 2, 1, fori_while_cond, &F);
    jx_fn *bf = jx_fn_new(name, ncarry + 2, ncarry + 2, fori_while_body, &F);
    carry[0] = lo, carry[1] = hi;
    for (int i = 0; i < ncarry; i++) carry[2 + i] = init[i];
    s = cf && bf ? jx_lax_while_loop(cf, bf, ncarry + 2, carry, res) : jx_last_status();
    jx_fn_free(cf), jx_fn_free(bf);
    for (int i = 0; s == JX_OK && i < ncarry; i++) res[1 + i] = res[2 + i];
  }
  for (int i = 0; i < ncarry; i++) out[i] = s == JX_OK ? res[1 + i] : NULL;
  jx_scope_end(s == JX_OK ? ncarry : 0, out);
  free(res), free(carry);
  return s;
}

/* ---------------------------------------------------- associative_scan */

/* lax.associative_scan's recursion (jax/_src/lax/control_flow/loops.py): combine the
 * pairs (e[0], e[1]), (e[2], e[3]), ...; scan those (the odd positions' results);
 * combine each with the next even element; interleave. O(n) applications of fn on
 * arrays halving in length, ceil(log2 n) levels deep. */
#define ASSOC_MAX 16 /* elems (include/jaxc/lax.h) */

static bool same_type_arrays(const jx_array *a, const jx_array *b) {
  return a->dtype == b->dtype && a->ndim == b->ndim && memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t)) == 0;
}

typedef struct Assoc {
  jx_fn *fn;
  int n;    /* elems */
  int axis; /* normalized */
  const char *name;
} Assoc;

/* e[start:stop:step] along axis (stop clamps). */
static jx_array *slice_axis(jx_array *e, int axis, int64_t start, int64_t stop, int64_t step) {
  int64_t lo[JX_MAX_NDIM], hi[JX_MAX_NDIM], st[JX_MAX_NDIM];
  for (int d = 0; d <= axis; d++) lo[d] = 0, hi[d] = JX_SLICE_END, st[d] = 1;
  lo[axis] = start, hi[axis] = stop, st[axis] = step;
  return jx_slice(e, axis + 1, lo, hi, st);
}

/* fn(a..., b...) into out[0 .. n), each checked to keep a's shape and dtype. */
static bool assoc_combine(const Assoc *A, jx_array *const *a, jx_array *const *b, jx_array **out) {
  jx_array *args[2 * ASSOC_MAX];
  for (int i = 0; i < A->n; i++) {
    if (!a[i] || !b[i]) return false;
    args[i] = a[i], args[A->n + i] = b[i];
  }
  if (jx_call(A->fn, args, out) != JX_OK) return false;
  for (int i = 0; i < A->n; i++) {
    if (same_type_arrays(out[i], a[i])) continue;
    char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
    error_set(out[i]->dtype != a[i]->dtype ? JX_ERR_DTYPE : JX_ERR_SHAPE,
              "%s: fn %s gives %s for element %d combining operands of %s (it must keep their shape "
              "and dtype)", A->name, jx_fn_name(A->fn), array_describe(b0, out[i]), i, array_describe(b1, a[i]));
    return false;
  }
  return true;
}

/* a and b interleaved along axis: a[0], b[0], a[1], b[1], ... (len a = len b or len b + 1). */
static jx_array *interleave(jx_array *a, jx_array *b, int axis) {
  int64_t la = a->shape[axis], lb = b->shape[axis];
  if (la == lb + 1) {
    int64_t pw[2 * JX_MAX_NDIM] = {0};
    pw[2 * axis + 1] = 1;
    jx_array *r = interleave(a, jx_pad(b, pw, 0), axis);
    return r ? slice_axis(r, axis, 0, 2 * la - 1, 1) : NULL;
  }
  int64_t shape[JX_MAX_NDIM + 1];
  int nd = a->ndim;
  memcpy(shape, a->shape, (size_t)nd * sizeof(int64_t));
  memmove(shape + axis + 2, shape + axis + 1, (size_t)(nd - axis - 1) * sizeof(int64_t));
  shape[axis + 1] = 1;
  jx_array *ab[2] = {jx_reshape(a, nd + 1, shape), jx_reshape(b, nd + 1, shape)};
  jx_array *c = jx_concatenate(2, ab, axis + 1);
  memcpy(shape, a->shape, (size_t)nd * sizeof(int64_t));
  shape[axis] = 2 * la;
  return jx_reshape(c, nd, shape);
}

static bool assoc_rec(const Assoc *A, jx_array *const *e, jx_array **out) {
  int n = A->n, ax = A->axis;
  int64_t len = e[0]->shape[ax];
  if (len < 2) {
    for (int i = 0; i < n; i++) out[i] = jx_ref(e[i]);
    return true;
  }
  jx_array *x[ASSOC_MAX], *y[ASSOC_MAX], *red[ASSOC_MAX], *odd[ASSOC_MAX], *even[ASSOC_MAX];
  for (int i = 0; i < n; i++) x[i] = slice_axis(e[i], ax, 0, len - 1, 2), y[i] = slice_axis(e[i], ax, 1, len, 2);
  if (!assoc_combine(A, x, y, red) || !assoc_rec(A, red, odd)) return false;
  for (int i = 0; i < n; i++) {
    y[i] = slice_axis(e[i], ax, 2, len, 2);
    x[i] = len % 2 == 0 ? slice_axis(odd[i], ax, 0, odd[i]->shape[ax] - 1, 1) : odd[i];
  }
  if (!assoc_combine(A, x, y, even)) return false;
  for (int i = 0; i < n; i++) {
    jx_array *parts[2] = {slice_axis(e[i], ax, 0, 1, 1), even[i]};
    if (!(out[i] = interleave(jx_concatenate(2, parts, ax), odd[i], ax))) return false;
  }
  return true;
}

jx_status jx_lax_associative_scan(jx_fn *fn, int nelems, jx_array *const *elems, bool reverse, int axis,
                                  jx_array **out) {
  const char *name = "jx_lax_associative_scan";
  if (!fn || !out || nelems < 1 || !check_arrays(name, "elems", nelems, elems)) {
    if (!error_pending()) error_set(JX_ERR_VALUE, "%s: needs fn, at least one of elems and out", name);
    return jx_last_status();
  }
  if (nelems > ASSOC_MAX || jx_fn_nin(fn) != 2 * nelems || jx_fn_nout(fn) != nelems) {
    error_set(JX_ERR_VALUE, "%s: fn %s takes %d inputs and gives %d outputs; with %d elems (at most %d) it must "
              "take %d and give %d", name, jx_fn_name(fn), jx_fn_nin(fn), jx_fn_nout(fn), nelems, ASSOC_MAX,
              2 * nelems, nelems);
    return JX_ERR_VALUE;
  }
  for (int i = 0; i < nelems; i++) out[i] = NULL;
  int nd = elems[0]->ndim, ax = axis < 0 ? axis + nd : axis;
  for (int i = 0; i < nelems; i++) {
    char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
    if (ax < 0 || ax >= elems[i]->ndim) {
      error_set(JX_ERR_SHAPE, "%s: axis %d is out of range for elems %d, %s", name, axis, i,
                array_describe(b0, elems[i]));
      return JX_ERR_SHAPE;
    }
    if (elems[i]->shape[ax] != elems[0]->shape[ax]) {
      error_set(JX_ERR_SHAPE, "%s: every elems must have the same length along axis %d: elems 0 is %s, "
                "elems %d is %s", name, axis, array_describe(b0, elems[0]), i, array_describe(b1, elems[i]));
      return JX_ERR_SHAPE;
    }
  }
  Assoc A = {.fn = fn, .n = nelems, .axis = ax, .name = name};
  jx_scope_begin();
  jx_array *e[ASSOC_MAX];
  for (int i = 0; i < nelems; i++) e[i] = reverse ? jx_flip(elems[i], 1, &ax) : elems[i];
  bool ok = assoc_rec(&A, e, out);
  for (int i = 0; ok && reverse && i < nelems; i++) ok = (out[i] = jx_flip(out[i], 1, &ax)) != NULL;
  if (!ok)
    for (int i = 0; i < nelems; i++) out[i] = NULL;
  jx_scope_end(ok ? nelems : 0, out);
  return ok ? JX_OK : jx_last_status() ? jx_last_status() : JX_ERR_OOM;
}
