/* stage.c -- the staging trace (JAX's DynamicJaxprTrace / autodidax's JaxprTrace):
 * primitives applied to its tracers are recorded as Jaxpr equations instead of run.
 * make_jaxpr stages every input; linearize stages only tangents, so the primal work
 * runs and only the linear part is recorded (partial evaluation). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "transform/transform.h"

typedef struct StageTracer {
  Tracer base;
  int var;
} StageTracer;

static void stage_release_tracer(Tracer *t) {
  trace_unref(t->trace);
  free(t);
}

static jx_array *stage_tracer(Trace *t, int var, const Aval *aval) {
  StageTracer *s = malloc(sizeof *s);
  if (!s) {
    error_set(JX_ERR_OOM, "out of memory staging a jaxpr");
    return NULL;
  }
  *s = (StageTracer){.base = {.trace = trace_ref(t), .release = stage_release_tracer}, .var = var};
  return array_new_tracer(&s->base, aval->dtype, aval->weak, aval->ndim, aval->shape);
}

/* The variable standing for x in t's jaxpr (constants are added on first use). */
static int stage_var(Trace *t, jx_array *x) {
  if (trace_owns(t, x)) return ((StageTracer *)x->tracer)->var;
  return jaxpr_add_const(t->data, x);
}

static jx_status stage_process(Trace *t, Prim p, int nin, jx_array *const *in,
                               const PrimParams *pp, int nout, const Aval *avals, jx_array **out) {
  Jaxpr *j = t->data;
  int *vars = malloc((size_t)(nin + nout + 1) * sizeof *vars), *ov = vars + nin;
  bool ok = vars != NULL;
  if (!ok) error_set(JX_ERR_OOM, "out of memory staging a jaxpr");
  for (int i = 0; ok && i < nin; i++) ok = (vars[i] = stage_var(t, in[i])) >= 0;
  for (int o = 0; ok && o < nout; o++) ok = (ov[o] = jaxpr_add_var(j, &avals[o])) >= 0;
  ok = ok && jaxpr_add_eqn(j, p, pp, nin, vars, nout, ov);
  for (int o = 0; ok && o < nout; o++) ok = (out[o] = stage_tracer(t, ov[o], &avals[o])) != NULL;
  free(vars);
  return ok ? JX_OK : jx_last_status();
}

static void stage_release(void *data) { jaxpr_free(data); }

static const TraceType stage_type = {
    .name = "stage", .process = stage_process, .release = stage_release};

jx_array *stage_bind_like(const jx_array *like, Prim p, int nin, jx_array *const *in, const PrimParams *pp) {
  Trace *t = like ? trace_of(like) : NULL;
  if (!t || t->type != &stage_type || !t->active || nin > 4) return NULL;
  Aval avals[4], av;
  for (int i = 0; i < nin; i++) {
    if (!in[i]) return NULL;
    avals[i] = prim_aval_of(in[i]);
  }
  if (!prim_abstract_eval(p, nin, nin ? avals : NULL, pp, &av)) return NULL;
  jx_array *out = NULL;
  return stage_process(t, p, nin, in, pp, 1, &av, &out) == JX_OK ? out : NULL;
}

jx_array *stage_bind_nullary(const jx_array *like, Prim p, const PrimParams *pp) {
  return stage_bind_like(like, p, 0, NULL, pp);
}

/* This thread's staging traces, innermost last (references held), for
 * stage_bind_nullary_top; popped ones are dropped lazily. */
static _Thread_local Trace *stages[64];
static _Thread_local int nstages;

jx_array *stage_bind_nullary_top(Prim p, const PrimParams *pp) {
  while (nstages > 0 && !stages[nstages - 1]->active) trace_unref(stages[--nstages]);
  if (nstages == 0) return NULL;
  Trace *t = stages[nstages - 1];
  Aval av;
  if (!prim_abstract_eval(p, 0, NULL, pp, &av)) return NULL;
  jx_array *out = NULL;
  return stage_process(t, p, 0, NULL, pp, 1, &av, &out) == JX_OK ? out : NULL;
}

Trace *stage_begin(void) {
  Jaxpr *j = jaxpr_new();
  Trace *t = j ? trace_push(&stage_type, j) : NULL;
  while (t && nstages > 0 && !stages[nstages - 1]->active) trace_unref(stages[--nstages]);
  if (t && nstages < 64) stages[nstages++] = trace_ref(t);
  return t;
}

jx_array *stage_new_input(Trace *t, const Aval *aval) {
  int v = jaxpr_add_var(t->data, aval);
  if (v < 0 || !jaxpr_add_invar(t->data, v)) return NULL;
  return stage_tracer(t, v, aval);
}

Jaxpr *stage_end(Trace *t, int nout, jx_array *const *outs) {
  Jaxpr *j = t->data;
  bool ok = true;
  for (int i = 0; ok && i < nout; i++) {
    int v = outs[i] ? stage_var(t, outs[i]) : -1;
    ok = v >= 0 && jaxpr_add_outvar(j, v);
  }
  t->data = NULL; /* the jaxpr now belongs to the caller */
  trace_pop(t);
  while (nstages > 0 && !stages[nstages - 1]->active) trace_unref(stages[--nstages]); /* t's entry */
  if (!ok) {
    jaxpr_free(j);
    return NULL;
  }
  return j;
}

/* ------------------------------------------------------------ constants */

jx_array *tx_full(const Aval *aval, double value) {
  jx_dtype d = aval->dtype;
  AluValue v = alu_eval_op(ALU_CAST, d, JX_FLOAT64, (AluValue[]){{.f = value}});
  unsigned char bytes[16];
  alu_store(bytes, d, 0, v);
  jx_array *s = array_from_host(bytes, d, aval->weak, 0, NULL);
  if (!s || aval->ndim == 0) return s;
  jx_array *b = prim_broadcast_in_dim(s, aval->ndim, aval->shape, NULL);
  jx_free(s);
  return b;
}

jx_array *tx_zeros(const Aval *aval) { return tx_full(aval, 0.0); }

jx_array *tx_full_like(jx_array *x, double value) {
  if (!x) return NULL;
  Aval a = prim_aval_of(x);
  return tx_full(&a, value);
}

jx_array *tx_take_along(jx_array *x, jx_array *perm, int axis) {
  /* flat index = ((o * n) + perm) * inner + i over x's C-order layout */
  int nd = x->ndim;
  int64_t n = x->shape[axis], inner = shape_numel(nd - axis - 1, x->shape + axis + 1);
  int64_t total = shape_numel(nd, x->shape), flat_shape[1] = {total};
  jx_dtype it = total > INT32_MAX ? JX_INT64 : JX_INT32;
  jx_scope_begin();
  Aval pa = prim_aval_of(perm);
  pa.dtype = it;
  pa.weak = false;
  jx_array *p = prim_convert(perm, it, false);
  jx_array *flat = NULL, *g = NULL, *r = NULL;
  if (p) {
    /* base = position of element with axis index 0 = flat - axis_index * inner */
    jx_array *pos = NULL;
    for (int d = 0; d < nd; d++) {
      int64_t stride = shape_numel(nd - d - 1, x->shape + d + 1);
      jx_array *term = prim_binary(PRIM_mul, prim_iota(it, nd, x->shape, d), tx_full(&pa, (double)stride));
      if (d == axis) term = prim_binary(PRIM_mul, p, tx_full(&pa, (double)inner));
      pos = pos ? prim_binary(PRIM_add, pos, term) : term;
    }
    if (nd == 0) pos = p;
    flat = prim_reshape(x, 1, flat_shape);
    g = prim_gather(flat, pos, 0);
    r = g ? prim_reshape(g, nd, x->shape) : NULL;
  }
  (void)n;
  jx_scope_end(r ? 1 : 0, &r);
  return r;
}

int *tx_argnums(const char *fn, jx_fn *f, int *nargnums, const int *argnums) {
  if (!f) {
    if (!error_pending()) error_set(JX_ERR_VALUE, "%s: the function is NULL", fn);
    return NULL;
  }
  int nin = jx_fn_nin(f), def = 0, n = *nargnums;
  if (!argnums) n = 1, argnums = &def;
  if (n < 1 || n > nin) {
    error_set(JX_ERR_VALUE, "%s: %d argnums for a function of %d inputs", fn, n, nin);
    return NULL;
  }
  int *an = malloc((size_t)n * sizeof *an);
  if (!an) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return NULL;
  }
  for (int k = 0; k < n; k++) {
    int a = argnums[k] < 0 ? argnums[k] + nin : argnums[k];
    bool dup = false;
    for (int m = 0; m < k; m++) dup |= an[m] == a;
    if (a < 0 || a >= nin || dup) {
      error_set(JX_ERR_VALUE, "%s: argnum %d is %s for a function of %d inputs", fn, argnums[k],
                dup ? "repeated" : "out of range", nin);
      free(an);
      return NULL;
    }
    an[k] = a;
  }
  *nargnums = n;
  return an;
}

/* ------------------------------------------------------------ make_jaxpr */

char *jx_make_jaxpr(jx_fn *f, jx_array *const *example_in) {
  if (!f || (jx_fn_nin(f) > 0 && !example_in)) {
    error_set(JX_ERR_VALUE, "jx_make_jaxpr: %s is NULL", f ? "example_in" : "the function");
    return NULL;
  }
  int nin = jx_fn_nin(f), nout = jx_fn_nout(f);
  for (int i = 0; i < nin; i++)
    if (!example_in[i]) {
      if (!error_pending()) error_set(JX_ERR_VALUE, "jx_make_jaxpr: input %d is NULL", i);
      return NULL;
    }
  Trace *t = stage_begin();
  if (!t) return NULL;
  jx_scope_begin();
  jx_array **ins = calloc((size_t)nin + 1, sizeof *ins), **outs = calloc((size_t)nout, sizeof *outs);
  bool ok = ins && outs;
  for (int i = 0; ok && i < nin; i++) {
    Aval a = prim_aval_of(example_in[i]);
    ok = (ins[i] = stage_new_input(t, &a)) != NULL;
  }
  ok = ok && jx_call(f, ins, outs) == JX_OK;
  Jaxpr *j = stage_end(t, ok ? nout : 0, outs);
  for (int i = 0; ok && i < nout; i++) jx_free(outs[i]);
  jx_scope_end(0, NULL);
  free(ins), free(outs);
  char *text = ok && j ? jaxpr_print(j) : NULL;
  jaxpr_free(j);
  return text;
}

bool stage_hoist_tracer_consts(const char *fn, Jaxpr *j, int *nconsts, jx_array ***consts) {
  int n = 0;
  *nconsts = 0, *consts = NULL;
  for (int c = 0; c < j->nconst; c++) n += j->consts[c]->tracer != NULL;
  if (!n) return true;
  int *invars = malloc((size_t)(j->nin + n) * sizeof *invars);
  jx_array **moved = malloc((size_t)n * sizeof *moved);
  if (!invars || !moved) {
    free(invars), free(moved);
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return false;
  }
  int k = 0, kept = 0;
  for (int c = 0; c < j->nconst; c++) {
    if (j->consts[c]->tracer) {
      invars[k] = j->constvars[c];
      moved[k++] = j->consts[c]; /* the jaxpr's reference moves here */
    } else {
      j->constvars[kept] = j->constvars[c], j->consts[kept++] = j->consts[c];
    }
  }
  memcpy(invars + n, j->invars, (size_t)j->nin * sizeof *invars);
  free(j->invars);
  j->invars = invars, j->nin += n, j->nconst = kept;
  *nconsts = n, *consts = moved;
  return true;
}

void stage_consts_free(int n, jx_array **consts) {
  for (int i = 0; i < n; i++) array_drop(consts[i]);
  free(consts);
}

/* f traced on abstract values of in[]'s types; the tracer consts hoisted when nconsts is
 * given, refused otherwise (stage_trace_closed's message, with noun). */
static Jaxpr *trace_closed(const char *fn, jx_fn *f, jx_array *const *in, const char *noun, int *nconsts,
                           jx_array ***consts) {
  int nin = jx_fn_nin(f), nout = jx_fn_nout(f);
  Trace *t = stage_begin();
  if (!t) return NULL;
  jx_scope_begin();
  jx_array **ins = calloc((size_t)nin + 1, sizeof *ins), **outs = calloc((size_t)nout + 1, sizeof *outs);
  bool ok = ins && outs;
  if (!ok) error_set(JX_ERR_OOM, "%s: out of memory", fn);
  for (int i = 0; ok && i < nin; i++) {
    Aval a = prim_aval_of(in[i]);
    ok = (ins[i] = stage_new_input(t, &a)) != NULL;
  }
  ok = ok && jx_call(f, ins, outs) == JX_OK;
  Jaxpr *j = stage_end(t, ok ? nout : 0, outs);
  jx_scope_end(0, NULL);
  free(ins), free(outs);
  if (!ok || !j) {
    jaxpr_free(j);
    return NULL;
  }
  if (nconsts) {
    if (!stage_hoist_tracer_consts(fn, j, nconsts, consts)) {
      jaxpr_free(j);
      return NULL;
    }
  } else {
    for (int c = 0; c < j->nconst; c++)
      if (j->consts[c]->tracer) {
        error_set(JX_ERR_UNSUPPORTED, "%s: %s closes over a traced value of an enclosing "
                  "transformation; pass it as an %s instead", fn, jx_fn_name(f), noun);
        jaxpr_free(j);
        return NULL;
      }
  }
  if (!(j->name = strdup(jx_fn_name(f))) || jaxpr_simplify(j) != JX_OK) {
    if (!j->name) error_set(JX_ERR_OOM, "%s: out of memory", fn);
    jaxpr_free(j);
    if (nconsts) stage_consts_free(*nconsts, *consts), *nconsts = 0, *consts = NULL;
    return NULL;
  }
  return j;
}

Jaxpr *stage_trace_closed(const char *fn, jx_fn *f, jx_array *const *in, const char *noun) {
  return trace_closed(fn, f, in, noun, NULL, NULL);
}

Jaxpr *stage_trace_closure(const char *fn, jx_fn *f, jx_array *const *in, int *nconsts, jx_array ***consts) {
  *nconsts = 0, *consts = NULL;
  return trace_closed(fn, f, in, NULL, nconsts, consts);
}
