/* loops.c -- lax loops (lax.while_loop, fori_loop, scan, map) and jaxc's bounded
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
  for (int i = 0; i < t->nconsts; i++) array_drop(t->consts[i]);
  free(t->consts);
  jaxpr_free(t->j);
  *t = (Traced){0};
}

/* Moves j's constants that are tracers to the front of its inputs. */
static bool hoist_tracer_consts(const char *fn, Traced *t) {
  Jaxpr *j = t->j;
  int n = 0;
  for (int c = 0; c < j->nconst; c++) n += j->consts[c]->tracer != NULL;
  if (!n) return true;
  int *invars = malloc((size_t)(j->nin + n) * sizeof *invars);
  t->consts = malloc((size_t)n * sizeof *t->consts);
  if (!invars || !t->consts) {
    free(invars);
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return false;
  }
  int k = 0, kept = 0;
  for (int c = 0; c < j->nconst; c++) {
    if (j->consts[c]->tracer) {
      invars[k] = j->constvars[c];
      t->consts[k++] = j->consts[c]; /* the jaxpr's reference moves here */
    } else {
      j->constvars[kept] = j->constvars[c], j->consts[kept++] = j->consts[c];
    }
  }
  memcpy(invars + n, j->invars, (size_t)j->nin * sizeof *invars);
  free(j->invars);
  j->invars = invars, j->nin += n, j->nconst = kept, t->nconsts = n;
  return true;
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
  ok = ok && t->j && (t->j->name = strdup(jx_fn_name(f))) && hoist_tracer_consts(fn, t) &&
       jaxpr_simplify(t->j) == JX_OK;
  if (!ok) traced_free(t);
  return ok;
}

static void aval_text(char *buf, size_t n, const Aval *a) {
  char shape[ERROR_SHAPE_BUF];
  error_shape_str(shape, a->ndim, a->shape);
  snprintf(buf, n, "%s%s", jx_dtype_name(a->dtype), shape);
}

static bool same_type(const Aval *a, const Aval *b) {
  return a->dtype == b->dtype && a->ndim == b->ndim &&
         memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t)) == 0;
}

/* The body's carry outputs (from output `at`) against the carries' avals. A weak
 * carry whose output is strong of the same type is made strong (JAX promotes weakly
 * typed inputs the same way) and *retrace set; other differences are errors naming
 * both types. */
static bool check_carry(const char *fn, jx_fn *body, const Jaxpr *j, int at, int ncarry, Aval *carry,
                        bool *retrace) {
  for (int o = 0; o < ncarry; o++) {
    Aval got = j->vars[j->outvars[at + o]];
    if (same_type(&got, &carry[o])) {
      if (carry[o].weak && !got.weak) carry[o].weak = false, *retrace = true;
      continue;
    }
    char b0[ERROR_SHAPE_BUF + 16], b1[ERROR_SHAPE_BUF + 16];
    aval_text(b0, sizeof b0, &got), aval_text(b1, sizeof b1, &carry[o]);
    error_set(got.dtype != carry[o].dtype ? JX_ERR_DTYPE : JX_ERR_SHAPE,
              "%s: %s gives %s for carry %d, but the carry's initial value is %s (the carry must "
              "keep its shape and dtype across iterations)", fn, jx_fn_name(body), b0, o, b1);
    return false;
  }
  return true;
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

/* Carries converted to the avals' weak types (after a retrace made some strong). */
static bool carries_as(int n, jx_array *const *init, const Aval *av, jx_array **out) {
  for (int i = 0; i < n; i++) {
    out[i] = init[i]->weak == av[i].weak ? init[i] : prim_convert(init[i], av[i].dtype, av[i].weak);
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
  bool ok = true, retrace = true;
  for (int pass = 0; ok && retrace && pass <= ncarry; pass++) { /* again after weak carries turn strong */
    traced_free(&b);
    retrace = false;
    ok = trace_fn(fn, body_fn, ncarry, av, &b) && check_carry(fn, body_fn, b.j, 0, ncarry, av, &retrace);
  }
  ok = ok && trace_fn(fn, cond_fn, ncarry, av, &c);
  if (ok) {
    Aval p = c.j->vars[c.j->outvars[0]];
    if (p.ndim != 0 || p.dtype != JX_BOOL) {
      char b0[ERROR_SHAPE_BUF + 16];
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
  bool ok = true, retrace = true;
  for (int pass = 0; ok && retrace && pass <= ncarry; pass++) {
    traced_free(&b);
    retrace = false;
    ok = trace_fn(fn, f, ncarry + nxs, av, &b) && check_carry(fn, f, b.j, 0, ncarry, av, &retrace);
  }
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
