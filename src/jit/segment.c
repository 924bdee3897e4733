/* segment.c -- a jaxpr that does not lower as a whole (it holds a while, scan or cond
 * equation, a collective, debug_print) run as compiled pieces, as XLA compiles the
 * computations between control flow: each maximal run of at least two equations with
 * lowering rules becomes a closed sub-jaxpr (the run's equations and the constants they
 * read; inputs, the variables it reads from before the run; outputs, the ones read
 * after it), compiled once per device and x64 mode by jit.c's sub-jaxpr cache, and
 * every other equation is bound on its own, in the jaxpr's order (effects stay
 * ordered). Without this such a jaxpr ran equation by equation: a gamma sampler's
 * rejection loop bound dozens of eager operations a trip. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "core/config.h"
#include "core/error.h"
#include "jit/jit.h"
#include "trace/trace.h"

/* One piece: a compiled run of equations, or equation `eqn` bound alone. */
typedef struct Segment {
  Jaxpr *sub;   /* the run as a closed jaxpr; NULL: equation `eqn` alone */
  int eqn;
  int nin, *in;   /* sub's inputs: variables of the outer jaxpr */
  int nout, *out; /* sub's outputs: variables of the outer jaxpr */
} Segment;

struct JitSegments {
  int n;
  Segment *seg;
};

static int64_t pieces_compiled; /* atomic */

int64_t jit_segment_count(void) { return __atomic_load_n(&pieces_compiled, __ATOMIC_RELAXED); }

void jit_segments_free(JitSegments *s) {
  if (!s) return;
  for (int k = 0; k < s->n; k++) {
    jaxpr_free(s->seg[k].sub);
    free(s->seg[k].in), free(s->seg[k].out);
  }
  free(s->seg);
  free(s);
}

static bool lowers(const JaxprEqn *q) { return q->prim != PRIM_jit && jit_has_lower_rule(q->prim, NULL); }

/* The run of equations [a, b) of j as a closed jaxpr into *sg; last_use[v]: the last
 * equation reading v (INT_MAX: an output of j). map: nvars scratch entries of -1. */
static bool build_run(const Jaxpr *j, int a, int b, const int *last_use, const int *const_of, int *map,
                      Segment *sg) {
  Jaxpr *s = jaxpr_new();
  int *in = malloc((size_t)j->nvars * sizeof *in), *out = malloc((size_t)j->nvars * sizeof *out);
  int nin = 0, nout = 0;
  bool ok = s && in && out;
  for (int e = a; ok && e < b; e++) {
    const JaxprEqn *q = &j->eqns[e];
    int small[8], *args = q->nin <= 8 ? small : malloc((size_t)q->nin * sizeof *args);
    int osmall[8], *res = q->nout <= 8 ? osmall : malloc((size_t)q->nout * sizeof *res);
    ok = args && res;
    for (int i = 0; ok && i < q->nin; i++) {
      int v = q->in[i];
      if (map[v] < 0) { /* read from before the run: a constant of j's, or an input */
        if (const_of[v] >= 0) {
          map[v] = jaxpr_add_const(s, j->consts[const_of[v]]);
        } else {
          map[v] = jaxpr_add_var(s, &j->vars[v]);
          ok = map[v] >= 0 && jaxpr_add_invar(s, map[v]);
          in[nin++] = v;
        }
        ok = ok && map[v] >= 0;
      }
      if (ok) args[i] = map[v];
    }
    for (int o = 0; ok && o < q->nout; o++) {
      int v = q->out[o];
      ok = (map[v] = res[o] = jaxpr_add_var(s, &j->vars[v])) >= 0;
      if (ok && last_use[v] >= b) {
        ok = jaxpr_add_outvar(s, map[v]);
        out[nout++] = v;
      }
    }
    ok = ok && jaxpr_add_eqn(s, q->prim, &q->params, q->nin, args, q->nout, res);
    if (args != small) free(args);
    if (res != osmall) free(res);
  }
  /* reset the scratch map for the next run */
  for (int e = a; e < b; e++) {
    for (int i = 0; i < j->eqns[e].nin; i++) map[j->eqns[e].in[i]] = -1;
    for (int o = 0; o < j->eqns[e].nout; o++) map[j->eqns[e].out[o]] = -1;
  }
  if (ok && j->name) ok = (s->name = strdup(j->name)) != NULL;
  if (!ok) {
    jaxpr_free(s), free(in), free(out);
    if (!error_pending()) error_set(JX_ERR_OOM, "jit: out of memory segmenting a jaxpr");
    return false;
  }
  *sg = (Segment){.sub = s, .nin = nin, .in = in, .nout = nout, .out = out};
  return true;
}

JitSegments *jit_segments_new(const Jaxpr *j) {
  /* runs of lowering equations, of which one at least of two or more and not all */
  int longest = 0, cur = 0;
  for (int e = 0; e < j->neqns; e++) {
    cur = lowers(&j->eqns[e]) ? cur + 1 : 0;
    if (cur > longest) longest = cur;
  }
  if (longest < 2 || longest == j->neqns) return NULL;
  JitSegments *s = calloc(1, sizeof *s);
  int nv = j->nvars ? j->nvars : 1;
  int *last_use = malloc((size_t)nv * sizeof *last_use), *const_of = malloc((size_t)nv * sizeof *const_of);
  int *map = malloc((size_t)nv * sizeof *map);
  bool ok = s && last_use && const_of && map && (s->seg = calloc((size_t)j->neqns, sizeof *s->seg));
  if (ok) {
    for (int v = 0; v < nv; v++) last_use[v] = -1, const_of[v] = -1, map[v] = -1;
    for (int c = 0; c < j->nconst; c++) const_of[j->constvars[c]] = c;
    for (int e = 0; e < j->neqns; e++)
      for (int i = 0; i < j->eqns[e].nin; i++) last_use[j->eqns[e].in[i]] = e;
    for (int o = 0; o < j->nout; o++) last_use[j->outvars[o]] = INT_MAX;
  }
  for (int e = 0; ok && e < j->neqns;) {
    int b = e;
    while (b < j->neqns && lowers(&j->eqns[b])) b++;
    if (b - e >= 2) {
      ok = build_run(j, e, b, last_use, const_of, map, &s->seg[s->n++]);
      e = b;
    } else {
      s->seg[s->n++] = (Segment){.eqn = e};
      e++;
    }
  }
  free(last_use), free(const_of), free(map);
  if (!ok) {
    if (!error_pending()) error_set(JX_ERR_OOM, "jit: out of memory segmenting a jaxpr");
    jit_segments_free(s);
    return NULL;
  }
  if (config_debug_level() >= 2) { /* the plan: compiled runs and the equations between */
    fprintf(stderr, "[jaxc] jit pieces of %s:", j->name ? j->name : "a jaxpr");
    for (int k = 0; k < s->n; k++) {
      const Segment *g = &s->seg[k];
      if (g->sub) fprintf(stderr, " [%d equations, %d in, %d out]", g->sub->neqns, g->nin, g->nout);
      else fprintf(stderr, " %s", prim_name(j->eqns[g->eqn].prim));
    }
    fprintf(stderr, "\n");
  }
  return s;
}

jx_status jit_segments_eval(const JitSegments *sg, const Jaxpr *j, jx_array *const *in, jx_array **out) {
  jx_array **env = calloc((size_t)(j->nvars ? j->nvars : 1), sizeof *env);
  if (!env) {
    error_set(JX_ERR_OOM, "jit: out of memory");
    return JX_ERR_OOM;
  }
  jx_scope_begin(); /* every value made below, released at the end but the outputs */
  for (int i = 0; i < j->nconst; i++) env[j->constvars[i]] = j->consts[i];
  for (int i = 0; i < j->nin; i++) env[j->invars[i]] = in[i];
  jx_status s = JX_OK;
  for (int k = 0; k < sg->n && s == JX_OK; k++) {
    const Segment *g = &sg->seg[k];
    const JaxprEqn *q = g->sub ? NULL : &j->eqns[g->eqn];
    int nin = q ? q->nin : g->nin, nout = q ? q->nout : g->nout;
    const int *iv = q ? q->in : g->in, *ov = q ? q->out : g->out;
    /* a loop body's pieces run every trip: small argument lists stay on the stack */
    jx_array *args_small[8], *res_small[8] = {NULL};
    jx_array **args = nin <= 8 ? args_small : malloc((size_t)nin * sizeof *args);
    jx_array **res = nout <= 8 ? res_small : calloc((size_t)nout, sizeof *res);
    if (!args || !res) {
      error_set(JX_ERR_OOM, "jit: out of memory");
      s = JX_ERR_OOM;
    } else {
      for (int i = 0; i < nin; i++) args[i] = env[iv[i]];
      bool compiled = false;
      s = q ? prim_bind_n(q->prim, nin, args, &q->params, nout, res) : jit_run_sub(g->sub, args, res, &compiled);
      if (compiled) __atomic_add_fetch(&pieces_compiled, 1, __ATOMIC_RELAXED);
      for (int o = 0; s == JX_OK && o < nout; o++) env[ov[o]] = res[o];
    }
    if (args != args_small) free(args);
    if (res != res_small) free(res);
  }
  for (int i = 0; i < j->nout; i++) out[i] = s == JX_OK ? jx_ref(env[j->outvars[i]]) : NULL;
  jx_scope_end(s == JX_OK ? j->nout : 0, out);
  free(env);
  return s;
}
