/* autodiff.c -- the public differentiation API: jvp, linearize (jvp + partial
 * evaluation: tangents are staged into a linear jaxpr while primals are computed), vjp
 * (linearize + transpose), grad and value_and_grad (has_aux: outputs after the first
 * are auxiliary data), and stop_gradient. */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "transform/jvp.h"
#include "transform/transpose.h"

static bool check_fn_args(const char *fn, jx_fn *f, jx_array *const *in, int n, const char *what) {
  if (!f) {
    if (!error_pending()) error_set(JX_ERR_VALUE, "%s: the function is NULL", fn);
    return false;
  }
  if (n > 0 && !in) {
    error_set(JX_ERR_VALUE, "%s: %s is NULL", fn, what);
    return false;
  }
  for (int i = 0; i < n; i++)
    if (!in[i]) {
      if (!error_pending()) error_set(JX_ERR_VALUE, "%s: %s[%d] is NULL", fn, what, i);
      return false;
    }
  return true;
}

/* The tangent (and cotangent) dtype of values of dtype d: float0 for bool and integer
 * values, d itself otherwise (jax.core.primal_dtype_to_tangent_dtype). */
static jx_dtype ad_tangent_dtype(jx_dtype d) {
  return dtype_is_bool(d) || dtype_is_integer(d) || d == JX_FLOAT0 ? JX_FLOAT0 : d;
}

/* --------------------------------------------------------------------- jvp */

jx_status jx_jvp(jx_fn *f, jx_array *const *primals, jx_array *const *tangents,
                 jx_array **primals_out, jx_array **tangents_out) {
  int nin = jx_fn_nin(f), nout = jx_fn_nout(f);
  if (!check_fn_args("jx_jvp", f, primals, nin, "primals") ||
      !check_fn_args("jx_jvp", f, tangents, nin, "tangents"))
    return jx_last_status();
  if (!primals_out || !tangents_out) {
    error_set(JX_ERR_VALUE, "jx_jvp: output arrays are NULL");
    return JX_ERR_VALUE;
  }
  for (int i = 0; i < nin; i++) {
    Aval a = prim_aval_of(primals[i]), b = prim_aval_of(tangents[i]);
    jx_dtype want = ad_tangent_dtype(a.dtype);
    if ((want == JX_FLOAT0 || b.dtype == JX_FLOAT0) && b.dtype != want) {
      /* JAX's TypeError: int/bool primals take float0 tangents, and only they do */
      char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
      error_set(JX_ERR_DTYPE, "jx_jvp: tangent %d is %s but its primal is %s: dtypes must be "
                "equal, or in case of int/bool primal dtype the tangent dtype must be float0",
                i, array_describe(b0, tangents[i]), array_describe(b1, primals[i]));
      return JX_ERR_DTYPE;
    }
    if (b.dtype != want || a.ndim != b.ndim || memcmp(a.shape, b.shape, 8 * (size_t)a.ndim)) {
      char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
      error_set(JX_ERR_SHAPE, "jx_jvp: tangent %d is %s but its primal is %s", i,
                array_describe(b0, tangents[i]), array_describe(b1, primals[i]));
      return JX_ERR_SHAPE;
    }
  }
  Trace *t = jvp_begin();
  if (!t) return jx_last_status();
  jx_scope_begin();
  jx_array **in = calloc((size_t)nin + 1, sizeof *in), **out = calloc((size_t)nout, sizeof *out);
  jx_array **keep = calloc(2 * (size_t)nout, sizeof *keep);
  bool ok = in && out && keep;
  for (int i = 0; ok && i < nin; i++) { /* a float0 tangent is a symbolic zero */
    jx_array *tn = tangents[i]->dtype == JX_FLOAT0 ? NULL : tangents[i];
    ok = (in[i] = jvp_tracer(t, primals[i], tn)) != NULL;
  }
  ok = ok && jx_call(f, in, out) == JX_OK;
  for (int o = 0; ok && o < nout; o++) {
    jx_array *p, *tn;
    jvp_unpack(t, out[o], &p, &tn);
    keep[o] = jx_ref(p);
    keep[nout + o] = ad_tangent_dtype(p->dtype) == JX_FLOAT0 ? array_float0(p->ndim, p->shape)
                     : tn ? jx_ref(tn) : tx_full_like(p, 0.0);
    ok = keep[nout + o] != NULL;
  }
  trace_pop(t);
  jx_scope_end(ok ? 2 * nout : 0, keep);
  for (int o = 0; o < nout; o++) {
    primals_out[o] = ok ? keep[o] : NULL;
    tangents_out[o] = ok ? keep[nout + o] : NULL;
  }
  free(in), free(out), free(keep);
  if (!ok && !error_pending()) error_set(JX_ERR_OOM, "jx_jvp: out of memory");
  return ok ? JX_OK : jx_last_status();
}

/* -------------------------------------------------------------- linearize */

/* Linearizes f at primals with respect to the inputs with diff[i] (others are passed
 * through as constants) and the first `nlin` outputs. primals_out gets every output;
 * *lin the linear jaxpr from the diff inputs' tangents to the nlin output tangents. */
static jx_status linearize(const char *fn, jx_fn *f, jx_array *const *primals, const bool *diff,
                           int nlin, jx_array **primals_out, Jaxpr **lin) {
  int nin = jx_fn_nin(f), nout = jx_fn_nout(f);
  *lin = NULL;
  Trace *s = stage_begin();
  if (!s) return jx_last_status();
  Trace *t = jvp_begin();
  if (!t) {
    jaxpr_free(stage_end(s, 0, NULL));
    return jx_last_status();
  }
  jx_scope_begin();
  jx_array **in = calloc((size_t)nin + 1, sizeof *in), **out = calloc((size_t)nout, sizeof *out);
  jx_array **tout = calloc((size_t)nout, sizeof *tout);
  bool ok = in && out && tout;
  for (int i = 0; ok && i < nin; i++) {
    if (!diff[i]) {
      in[i] = primals[i];
      continue;
    }
    Aval a = prim_aval_of(primals[i]);
    jx_array *tan = stage_new_input(s, &a);
    ok = tan && (in[i] = jvp_tracer(t, primals[i], tan)) != NULL;
  }
  ok = ok && jx_call(f, in, out) == JX_OK;
  for (int o = 0; ok && o < nout; o++) {
    jx_array *p, *tn;
    jvp_unpack(t, out[o], &p, &tn);
    primals_out[o] = jx_ref(p);
    if (o < nlin) tout[o] = tn ? tn : tx_full_like(p, 0.0);
    ok = o >= nlin || tout[o];
  }
  trace_pop(t);
  Jaxpr *j = stage_end(s, ok ? nlin : 0, tout);
  jx_scope_end(ok ? nout : 0, primals_out);
  if (!ok || !j) {
    for (int o = 0; o < nout; o++) primals_out[o] = NULL;
    jaxpr_free(j);
    j = NULL;
    ok = false;
  }
  free(in), free(out), free(tout);
  if (!ok && !error_pending()) error_set(JX_ERR_OOM, "%s: out of memory", fn);
  if (j && jaxpr_simplify(j) != JX_OK) { /* cse, dce; typechecked after each */
    jaxpr_free(j);
    j = NULL;
    ok = false;
  }
  *lin = j;
  return ok ? JX_OK : jx_last_status();
}

/* vjp's pullback / linearize's pushforward: the linear jaxpr from the tangents of the
 * float and complex inputs (diff[i]) to the tangents of every output. Integer and bool
 * values have float0 (co)tangents, which are not in the jaxpr (as in JAX). */
typedef struct Linear {
  Jaxpr *jaxpr;
  int nin;      /* f's inputs */
  bool *diff;   /* [nin]: input i is differentiated (its tangent is a jaxpr input) */
  Aval *avals;  /* [nin]: the primals' avals (the float0 cotangents' shapes) */
} Linear;

static void linear_free(void *ctx) {
  Linear *l = ctx;
  jaxpr_free(l->jaxpr);
  free(l->diff), free(l->avals);
  free(l);
}

/* xs[i] against the aval `want` of a (co)tangent: float0 is what an int/bool value takes
 * (and the pullback also accepts the output's own dtype for it, as JAX does). */
static bool check_tangent(const char *fn, Aval want, jx_array *x, int i, const char *what,
                          bool also_own) {
  Aval got = prim_aval_of(x);
  jx_dtype td = ad_tangent_dtype(want.dtype);
  bool dtype_ok = got.dtype == td || (also_own && got.dtype == want.dtype);
  if (dtype_ok && want.ndim == got.ndim && !memcmp(want.shape, got.shape, 8 * (size_t)want.ndim))
    return true;
  char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
  jx_status s = dtype_ok || (got.dtype != JX_FLOAT0 && td != JX_FLOAT0) ? JX_ERR_SHAPE : JX_ERR_DTYPE;
  Aval w = want;
  w.dtype = td, w.weak = false;
  aval_text(b1, sizeof b1, &w);
  error_set(s, "%s: %s %d is %s but must be %s", fn, what, i, array_describe(b0, x), b1);
  return false;
}

static jx_status pullback_impl(void *ctx, jx_array *const *in, jx_array **out) {
  Linear *l = ctx;
  const Jaxpr *j = l->jaxpr;
  for (int o = 0; o < j->nout; o++)
    if (!check_tangent("vjp pullback", j->vars[j->outvars[o]], in[o], o, "cotangent", true))
      return jx_last_status();
  jx_array **ct = calloc((size_t)j->nout + 1, sizeof *ct), **res = calloc((size_t)j->nin + 1, sizeof *res);
  jx_status s = ct && res ? JX_OK : JX_ERR_OOM;
  if (s != JX_OK) error_set(s, "vjp pullback: out of memory");
  /* a float0 cotangent stands for zeros of the (int/bool) output's own dtype */
  for (int o = 0; s == JX_OK && o < j->nout; o++) {
    Aval a = j->vars[j->outvars[o]];
    ct[o] = in[o]->dtype == JX_FLOAT0 ? tx_zeros(&a) : jx_ref(in[o]);
    if (!ct[o]) s = jx_last_status();
  }
  if (s == JX_OK) s = transpose_jaxpr(l->jaxpr, ct, res);
  for (int i = 0, k = 0; s == JX_OK && i < l->nin; i++) {
    out[i] = l->diff[i] ? res[k++] : array_float0(l->avals[i].ndim, l->avals[i].shape);
    if (!out[i]) s = jx_last_status();
  }
  for (int o = 0; ct && o < j->nout; o++) jx_free(ct[o]);
  free(ct), free(res);
  return s;
}

static jx_status pushforward_impl(void *ctx, jx_array *const *in, jx_array **out) {
  Linear *l = ctx;
  const Jaxpr *j = l->jaxpr;
  for (int i = 0; i < l->nin; i++)
    if (!check_tangent("linearize", l->avals[i], in[i], i, "tangent", false)) return jx_last_status();
  jx_array **tin = calloc((size_t)j->nin + 1, sizeof *tin);
  if (!tin) {
    error_set(JX_ERR_OOM, "linearize: out of memory");
    return JX_ERR_OOM;
  }
  for (int i = 0, k = 0; i < l->nin; i++)
    if (l->diff[i]) tin[k++] = in[i];
  jx_status s = jaxpr_eval(l->jaxpr, tin, out);
  free(tin);
  for (int o = 0; s == JX_OK && o < j->nout; o++) /* int/bool outputs: float0 tangents */
    if (ad_tangent_dtype(out[o]->dtype) == JX_FLOAT0) {
      jx_array *z = array_float0(out[o]->ndim, out[o]->shape);
      jx_free(out[o]);
      out[o] = z;
      if (!z) s = jx_last_status();
    }
  return s;
}

static jx_fn *linear_fn(const char *name, Jaxpr *j, int nin, bool *diff, Aval *avals, bool transpose) {
  Linear *l = malloc(sizeof *l);
  if (!l) {
    jaxpr_free(j);
    free(diff), free(avals);
    error_set(JX_ERR_OOM, "%s: out of memory", name);
    return NULL;
  }
  *l = (Linear){.jaxpr = j, .nin = nin, .diff = diff, .avals = avals};
  jx_fn *g = transpose ? jx_fn_new_with_free(name, j->nout, nin, pullback_impl, l, linear_free)
                       : jx_fn_new_with_free(name, nin, j->nout, pushforward_impl, l, linear_free);
  if (!g) linear_free(l);
  return g;
}

static jx_fn *linearized(const char *fn, jx_fn *f, jx_array *const *primals,
                         jx_array **primals_out, bool transpose) {
  int nin = jx_fn_nin(f);
  if (!check_fn_args(fn, f, primals, nin, "primals")) return NULL;
  if (!primals_out) {
    error_set(JX_ERR_VALUE, "%s: primals_out is NULL", fn);
    return NULL;
  }
  bool *diff = malloc((size_t)nin + 1);
  Aval *avals = malloc(((size_t)nin + 1) * sizeof *avals);
  if (!diff || !avals) {
    free(diff), free(avals);
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return NULL;
  }
  for (int i = 0; i < nin; i++) { /* int/bool inputs: float0 (co)tangents, not traced */
    avals[i] = prim_aval_of(primals[i]);
    diff[i] = ad_tangent_dtype(avals[i].dtype) != JX_FLOAT0;
  }
  Jaxpr *j = NULL;
  jx_status s = linearize(fn, f, primals, diff, jx_fn_nout(f), primals_out, &j);
  if (s != JX_OK) {
    free(diff), free(avals);
    return NULL;
  }
  jx_fn *g = linear_fn(transpose ? "vjp" : "linearize", j, nin, diff, avals, transpose);
  if (!g)
    for (int o = 0; o < jx_fn_nout(f); o++) jx_free(primals_out[o]), primals_out[o] = NULL;
  return g;
}

jx_fn *jx_vjp(jx_fn *f, jx_array *const *primals, jx_array **primals_out) {
  return linearized("jx_vjp", f, primals, primals_out, true);
}

jx_fn *jx_linearize(jx_fn *f, jx_array *const *primals, jx_array **primals_out) {
  return linearized("jx_linearize", f, primals, primals_out, false);
}

/* --------------------------------------------------------- grad, value_and_grad */

typedef struct Grad {
  jx_fn *f;
  int nargnums;
  int *argnums;
  bool with_value;
  bool holomorphic; /* holomorphic=True: complex inputs and output, grad = f'(z) */
  bool allow_int;   /* allow_int=True: int/bool inputs get float0 grads */
} Grad;

static void grad_free(void *ctx) {
  Grad *g = ctx;
  fn_release(g->f);
  free(g->argnums);
  free(g);
}

static jx_status grad_impl(void *ctx, jx_array *const *in, jx_array **out) {
  Grad *g = ctx;
  const char *fn = g->with_value ? (g->allow_int ? "jx_value_and_grad_allow_int" : "jx_value_and_grad")
                   : g->holomorphic ? "jx_grad_holomorphic"
                   : g->allow_int   ? "jx_grad_allow_int"
                                    : "jx_grad";
  int nin = jx_fn_nin(g->f), nout = jx_fn_nout(g->f), na = g->nargnums;
  bool *diff = calloc((size_t)nin + 1, 1);
  if (!diff) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return JX_ERR_OOM;
  }
  for (int k = 0; k < na; k++) {
    jx_array *x = in[g->argnums[k]];
    bool intlike = dtype_is_integer(x->dtype) || dtype_is_bool(x->dtype);
    if (g->allow_int && intlike) continue; /* a float0 grad, not differentiated */
    if (g->holomorphic ? !dtype_is_complex(x->dtype) : !dtype_is_inexact(x->dtype)) {
      char b[ARRAY_DESCRIBE_BUF];
      error_set(JX_ERR_DTYPE, "%s: argument %d is %s; differentiation needs %s inputs%s", fn,
                g->argnums[k], array_describe(b, x),
                g->holomorphic ? "complex (holomorphic)" : "float or complex",
                intlike && !g->holomorphic ? " (JAX: grad requires real- or complex-valued inputs; "
                "for Boolean- or integer-valued inputs use vjp or set allow_int to True: "
                "jx_grad_allow_int, jx_value_and_grad_allow_int)" : "");
      free(diff);
      return JX_ERR_DTYPE;
    }
    diff[g->argnums[k]] = true;
  }
  jx_array **pout = calloc((size_t)nout, sizeof *pout), **cts = calloc((size_t)nin + 1, sizeof *cts);
  Jaxpr *j = NULL;
  jx_status s = pout && cts ? linearize(fn, g->f, in, diff, 1, pout, &j) : JX_ERR_OOM;
  if (s == JX_OK) {
    jx_array *y = pout[0];
    if (y->ndim != 0 || (g->holomorphic ? !dtype_is_complex(y->dtype) : !dtype_is_floating(y->dtype))) {
      char b[ARRAY_DESCRIBE_BUF];
      /* JAX: grad requires real-valued outputs; holomorphic=True complex ones */
      bool cpx = y->ndim == 0 && dtype_is_complex(y->dtype) && !g->holomorphic;
      error_set(cpx ? JX_ERR_DTYPE : JX_ERR_SHAPE, "%s: the function's first output must be a "
                "scalar %s, got %s%s", fn, g->holomorphic ? "complex" : "float", array_describe(b, y),
                cpx ? " (for holomorphic functions use jx_grad_holomorphic)" : "");
      s = cpx ? JX_ERR_DTYPE : JX_ERR_SHAPE;
    }
  }
  if (s == JX_OK) {
    jx_array *one = tx_full_like(pout[0], 1.0);
    s = one ? transpose_jaxpr(j, &one, cts) : jx_last_status();
    jx_free(one);
  }
  if (s == JX_OK) {
    /* value_and_grad: value, aux..., grads...; grad: grads..., aux... */
    int k = 0;
    if (g->with_value) out[k++] = pout[0];
    else jx_free(pout[0]);
    if (g->with_value)
      for (int o = 1; o < nout; o++) out[k++] = pout[o];
    /* cts are ordered like the jaxpr's invars: the diff inputs in input order */
    for (int a = 0; a < na; a++) {
      jx_array *x = in[g->argnums[a]];
      if (!diff[g->argnums[a]]) { /* allow_int: an int/bool input's grad is float0 */
        out[k] = array_float0(x->ndim, x->shape);
        if (!out[k++]) s = jx_last_status();
        continue;
      }
      int rank = 0;
      for (int i = 0; i < g->argnums[a]; i++) rank += diff[i];
      out[k++] = jx_ref(cts[rank]);
    }
    if (!g->with_value)
      for (int o = 1; o < nout; o++) out[k++] = pout[o];
    int ndiff = 0;
    for (int i = 0; i < nin; i++) ndiff += diff[i];
    for (int i = 0; i < ndiff; i++) jx_free(cts[i]);
  } else if (pout) {
    for (int o = 0; o < nout; o++) jx_free(pout[o]);
  }
  jaxpr_free(j);
  free(pout), free(cts), free(diff);
  if (s == JX_OK) return s;
  if (!error_pending()) error_set(s, "%s: failed", fn);
  return s;
}

static jx_fn *make_grad(const char *fn, jx_fn *f, int nargnums, const int *argnums, bool value,
                        bool holomorphic, bool allow_int) {
  int *an = tx_argnums(fn, f, &nargnums, argnums);
  Grad *g = an ? calloc(1, sizeof *g) : NULL;
  if (!g) {
    if (an) error_set(JX_ERR_OOM, "%s: out of memory", fn);
    free(an);
    return NULL;
  }
  int nin = jx_fn_nin(f);
  *g = (Grad){.f = fn_retain(f), .nargnums = nargnums, .argnums = an, .with_value = value,
              .holomorphic = holomorphic, .allow_int = allow_int};
  int nout = nargnums + jx_fn_nout(f) - 1 + (value ? 1 : 0);
  jx_fn *r = jx_fn_new_with_free(value ? "value_and_grad" : "grad", nin, nout, grad_impl, g, grad_free);
  if (!r) grad_free(g);
  return r;
}

jx_fn *jx_grad(jx_fn *f, int nargnums, const int *argnums) {
  return make_grad("jx_grad", f, nargnums, argnums, false, false, false);
}

jx_fn *jx_grad_allow_int(jx_fn *f, int nargnums, const int *argnums) {
  return make_grad("jx_grad_allow_int", f, nargnums, argnums, false, false, true);
}

jx_fn *jx_grad_holomorphic(jx_fn *f, int nargnums, const int *argnums) {
  return make_grad("jx_grad_holomorphic", f, nargnums, argnums, false, true, false);
}

jx_fn *jx_value_and_grad(jx_fn *f, int nargnums, const int *argnums) {
  return make_grad("jx_value_and_grad", f, nargnums, argnums, true, false, false);
}

jx_fn *jx_value_and_grad_allow_int(jx_fn *f, int nargnums, const int *argnums) {
  return make_grad("jx_value_and_grad_allow_int", f, nargnums, argnums, true, false, true);
}

/* ---------------------------------------------------------- stop_gradient */

jx_array *jx_stop_gradient(jx_array *x) {
  if (!x && jx_last_status() == JX_OK) error_set(JX_ERR_VALUE, "jx_stop_gradient: x is NULL");
  return x ? prim_unary(PRIM_stop_gradient, x) : NULL;
}

/* -------------------------------------------------------- linear_transpose */

typedef struct LinearT {
  Jaxpr *jaxpr; /* f staged at the primals' avals, closed */
} LinearT;

static void linear_t_free(void *ctx) {
  LinearT *l = ctx;
  jaxpr_free(l->jaxpr);
  free(l);
}

static jx_status linear_t_impl(void *ctx, jx_array *const *in, jx_array **out) {
  const LinearT *l = ctx;
  const Jaxpr *j = l->jaxpr;
  for (int o = 0; o < j->nout; o++) {
    /* JAX: "cotangent type does not match function output" */
    Aval want = j->vars[j->outvars[o]], got = prim_aval_of(in[o]);
    char b[ARRAY_DESCRIBE_BUF], w[ERROR_SHAPE_BUF];
    if (want.dtype != got.dtype || want.ndim != got.ndim ||
        memcmp(want.shape, got.shape, 8 * (size_t)want.ndim)) {
      jx_status s = want.dtype != got.dtype ? JX_ERR_DTYPE : JX_ERR_SHAPE;
      error_set(s, "jx_linear_transpose: cotangent %d is %s but the function's output %d is %s%s",
                o, array_describe(b, in[o]), o, jx_dtype_name(want.dtype),
                error_shape_str(w, want.ndim, want.shape));
      return s;
    }
  }
  return transpose_jaxpr(j, in, out);
}

/* Refuses a jaxpr that is not linear in its inputs: an equation applied to a value
 * depending on an input must have a transpose rule, and mul/div must keep one side
 * constant (JAX fails the same functions while transposing). The bodies of jit,
 * checkpoint, cond, scan and while are checked the same way, a loop's carries to a
 * fixpoint: in_dep[i] says input i depends on the function's inputs, out_dep[o] comes
 * back for each output. `where` names the enclosing body for the error ("" at the top). */
static bool linear_deps(const Jaxpr *j, const bool *in_dep, bool *out_dep, const char *where);

/* sub's outputs' dependence, given its inputs' in[], OR-ed into out_dep. */
static bool linear_sub(const Jaxpr *sub, const bool *in, bool *out_dep, const char *where) {
  bool *out = calloc((size_t)sub->nout + 1, 1);
  if (!out) error_set(JX_ERR_OOM, "jx_linear_transpose: out of memory");
  bool ok = out && linear_deps(sub, in, out, where);
  for (int o = 0; ok && o < sub->nout; o++) out_dep[o] |= out[o];
  free(out);
  return ok;
}

/* The dependence of q's operands [first, first + n) (a new array; NULL when out of
 * memory, reported). */
static bool *operand_deps(const JaxprEqn *q, const bool *dep, int first, int n) {
  bool *d = malloc((size_t)n + 1);
  if (!d) error_set(JX_ERR_OOM, "jx_linear_transpose: out of memory");
  for (int i = 0; d && i < n; i++) d[i] = dep[q->in[first + i]];
  return d;
}

/* A loop body with inputs in[] whose inputs [carry_at, carry_at + ncarry) are its
 * first ncarry outputs fed back: carries that come to depend on the inputs are marked
 * in in[] until nothing changes (each pass marks one more at least). */
static bool linear_loop(const Jaxpr *body, bool *in, int carry_at, int ncarry, bool *out_dep, const char *where) {
  for (bool changed = true; changed;) {
    changed = false;
    for (int o = 0; o < body->nout; o++) out_dep[o] = false;
    if (!linear_sub(body, in, out_dep, where)) return false;
    for (int c = 0; c < ncarry; c++)
      if (out_dep[c] && !in[carry_at + c]) in[carry_at + c] = changed = true;
  }
  return true;
}

static bool linear_deps(const Jaxpr *j, const bool *in_dep, bool *out_dep, const char *where) {
  bool *dep = calloc((size_t)j->nvars + 1, 1), *sub_out = NULL;
  if (!dep) {
    error_set(JX_ERR_OOM, "jx_linear_transpose: out of memory");
    return false;
  }
  for (int i = 0; i < j->nin; i++) dep[j->invars[i]] = in_dep[i];
  bool ok = true;
  for (int e = 0; ok && e < j->neqns; e++) {
    const JaxprEqn *q = &j->eqns[e];
    int nlin = 0;
    for (int i = 0; i < q->nin; i++) nlin += dep[q->in[i]];
    if (!nlin) continue;
    const char *why = NULL;
    const PrimParams *pp = &q->params;
    free(sub_out);
    sub_out = calloc((size_t)q->nout + 1, 1);
    if (!sub_out) {
      error_set(JX_ERR_OOM, "jx_linear_transpose: out of memory");
      ok = false;
      break;
    }
    bool all_out = true; /* every output depends on the inputs (unless a body says which) */
    if (!transpose_has_rule(q->prim, &why))
      ;
    else if (q->prim == PRIM_mul && nlin == 2)
      why = "a product of two values depending on the inputs";
    else if (q->prim == PRIM_div && dep[q->in[1]])
      why = "a division by a value depending on the inputs";
    else if ((q->prim == PRIM_jit || q->prim == PRIM_checkpoint) && pp->jaxpr && pp->jaxpr->nin == q->nin) {
      bool *in = operand_deps(q, dep, 0, q->nin);
      ok = in && linear_sub(pp->jaxpr, in, sub_out, q->prim == PRIM_jit ? "in a jit body" : "in a checkpoint body");
      free(in);
      all_out = false;
    } else if (q->prim == PRIM_cond && dep[q->in[0]]) {
      why = "a cond whose branch index depends on them";
    } else if (q->prim == PRIM_cond) {
      bool *in = operand_deps(q, dep, 1, q->nin - 1);
      ok = in != NULL;
      for (int b = 0; ok && b < pp->nbranches; b++) ok = linear_sub(pp->branches[b], in, sub_out, "in a cond branch");
      free(in);
      all_out = false;
    } else if (q->prim == PRIM_scan) { /* operands: consts, carries, xs; outputs: carries, ys */
      bool *in = operand_deps(q, dep, 0, q->nin);
      ok = in && linear_loop(pp->branches[0], in, pp->nconsts[0], pp->nconsts[1], sub_out, "in a scan body");
      free(in);
      all_out = false;
    } else if (q->prim == PRIM_while) {
      /* operands: cond consts, body consts, carries; the body takes body consts and
       * carries, the cond cond consts and carries, and must not depend on the inputs */
      int nc = pp->nconsts[0], nb = pp->nconsts[1], ncarry = q->nin - nc - nb;
      bool *in = operand_deps(q, dep, nc, nb + ncarry), *cin = operand_deps(q, dep, 0, nc + ncarry), cond_dep = false;
      ok = in && cin && linear_loop(pp->branches[1], in, nb, ncarry, sub_out, "in a while body");
      for (int c = 0; ok && c < ncarry; c++) cin[nc + c] = in[nb + c];
      ok = ok && linear_sub(pp->branches[0], cin, &cond_dep, "in a while condition");
      if (ok && cond_dep) why = "a while loop whose condition depends on them";
      free(in), free(cin);
      all_out = false;
    }
    if (ok && why) {
      error_set(JX_ERR_VALUE, "jx_linear_transpose: the function is not linear in its inputs: "
                "'%s' applied to them%s%s (%s)", prim_name(q->prim), *where ? " " : "", where, why);
      ok = false;
    }
    for (int o = 0; o < q->nout; o++) dep[q->out[o]] = all_out || sub_out[o];
  }
  for (int o = 0; ok && o < j->nout; o++) out_dep[o] = dep[j->outvars[o]];
  free(dep), free(sub_out);
  return ok;
}

static bool check_linear(const Jaxpr *j) {
  bool *in = malloc((size_t)j->nin + 1), *out = calloc((size_t)j->nout + 1, 1);
  bool ok = in && out;
  if (!ok) error_set(JX_ERR_OOM, "jx_linear_transpose: out of memory");
  for (int i = 0; ok && i < j->nin; i++) in[i] = true;
  ok = ok && linear_deps(j, in, out, "");
  free(in), free(out);
  return ok;
}

jx_fn *jx_linear_transpose(jx_fn *f, jx_array *const *primals) {
  const char *fn = "jx_linear_transpose";
  int nin = jx_fn_nin(f);
  if (!check_fn_args(fn, f, primals, nin, "primals")) return NULL;
  /* JAX: "[float or complex] -> [float or complex], and integer -> integer functions" */
  Jaxpr *j = stage_trace_closed(fn, f, primals, "argument");
  if (!j) return NULL;
  int ninexact = 0, nint = 0, n = j->nin + j->nout;
  for (int k = 0; k < n; k++) {
    jx_dtype d = j->vars[k < j->nin ? j->invars[k] : j->outvars[k - j->nin]].dtype;
    ninexact += dtype_is_inexact(d);
    nint += dtype_is_integer(d);
  }
  if (ninexact != n && nint != n) {
    error_set(JX_ERR_DTYPE, "%s: only [float or complex] -> [float or complex] and integer -> "
              "integer functions can be transposed (%s has inputs or outputs of other kinds)",
              fn, jx_fn_name(f));
    jaxpr_free(j);
    return NULL;
  }
  LinearT *l = check_linear(j) ? malloc(sizeof *l) : NULL;
  if (!l) {
    if (!error_pending()) error_set(JX_ERR_OOM, "%s: out of memory", fn);
    jaxpr_free(j);
    return NULL;
  }
  l->jaxpr = j;
  jx_fn *g = jx_fn_new_with_free("linear_transpose", j->nout, j->nin, linear_t_impl, l, linear_t_free);
  if (!g) linear_t_free(l);
  return g;
}
