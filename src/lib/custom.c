/* custom.c -- jax.custom_jvp, jax.custom_vjp and jax.checkpoint for C callbacks: the
 * returned jx_fn traces f into a closed jaxpr for its arguments' types on every call
 * and binds one primitive holding it and the user's rules (trace/custom.c), so every
 * transformation sees the rules (transform/custom.c) and jit compiles f itself. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "transform/transform.h"

typedef enum Kind { CUSTOM_JVP, CUSTOM_VJP, CHECKPOINT } Kind;

typedef struct Custom {
  Kind kind;
  jx_fn *f, *r0, *r1; /* held with fn_retain */
  unsigned nondiff;   /* custom_jvp: bit i set for nondiff_argnums entry i */
  unsigned policy;    /* checkpoint: PRIM_CHECKPOINT_* */
} Custom;

static void custom_free(void *ctx) {
  Custom *c = ctx;
  fn_release(c->f), fn_release(c->r0), fn_release(c->r1);
  free(c);
}

static const char *kind_name(Kind k) {
  return k == CUSTOM_JVP ? "jx_custom_jvp" : k == CUSTOM_VJP ? "jx_custom_vjp" : "jx_checkpoint";
}

/* checkpoint: the values f closes over that enclosing transformations trace become
 * leading operands of the checkpoint equation (JAX's closure conversion in
 * jax.checkpoint), so grad, vmap and jit see them. */
static jx_status checkpoint_call(Custom *c, jx_array *const *in, jx_array **out) {
  const char *fn = kind_name(c->kind);
  int nin = jx_fn_nin(c->f), nconsts;
  jx_array **consts;
  Jaxpr *j = stage_trace_closure(fn, c->f, in, &nconsts, &consts);
  if (!j) return jx_last_status();
  jx_status s = JX_OK;
  jx_array **ops = malloc((size_t)(nconsts + nin + 1) * sizeof *ops); /* (consts..., in...) */
  if (!ops) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    s = JX_ERR_OOM;
  } else {
    for (int i = 0; i < nconsts; i++) ops[i] = consts[i];
    for (int i = 0; i < nin; i++) ops[nconsts + i] = in[i];
    s = prim_checkpoint(j, c->policy, nconsts + nin, ops, out);
  }
  free(ops);
  stage_consts_free(nconsts, consts);
  jaxpr_free(j);
  return s;
}

static jx_status custom_call(void *ctx, jx_array *const *in, jx_array **out) {
  Custom *c = ctx;
  if (c->kind == CHECKPOINT) return checkpoint_call(c, in, out);
  int nin = jx_fn_nin(c->f);
  Jaxpr *j = stage_trace_closed(kind_name(c->kind), c->f, in, "argument");
  if (!j) return jx_last_status();
  jx_status s = c->kind == CUSTOM_JVP ? prim_custom_jvp_call(j, c->r0, c->nondiff, nin, in, out)
                                      : prim_custom_vjp_call(j, c->r0, c->r1, nin, in, out);
  jaxpr_free(j);
  return s;
}

static jx_fn *make(Kind kind, jx_fn *f, jx_fn *r0, jx_fn *r1, unsigned nondiff, unsigned policy) {
  Custom *c = malloc(sizeof *c);
  const char *prefix = kind == CUSTOM_JVP ? "custom_jvp(" : kind == CUSTOM_VJP ? "custom_vjp(" : "checkpoint(";
  char *name = malloc(strlen(prefix) + strlen(jx_fn_name(f)) + 2);
  if (!c || !name) {
    free(c), free(name);
    error_set(JX_ERR_OOM, "%s: out of memory", kind_name(kind));
    return NULL;
  }
  *c = (Custom){.kind = kind, .f = fn_retain(f), .r0 = fn_retain(r0), .r1 = fn_retain(r1),
                .nondiff = nondiff, .policy = policy};
  strcat(strcat(strcpy(name, prefix), jx_fn_name(f)), ")");
  jx_fn *g = jx_fn_new_with_free(name, jx_fn_nin(f), jx_fn_nout(f), custom_call, c, custom_free);
  free(name);
  if (!g) custom_free(c);
  return g;
}

static bool arity(const char *fn, jx_fn *rule, const char *what, int nin, int nout) {
  if (jx_fn_nin(rule) == nin && jx_fn_nout(rule) == nout) return true;
  error_set(JX_ERR_VALUE, "%s: %s %s takes %d inputs and gives %d outputs, but must take %d and give %d",
            fn, what, jx_fn_name(rule), jx_fn_nin(rule), jx_fn_nout(rule), nin, nout);
  return false;
}

jx_fn *jx_custom_jvp(jx_fn *f, jx_fn *jvp, int nnondiff, const int *nondiff_argnums) {
  const char *fn = "jx_custom_jvp";
  if (!f || !jvp || nnondiff < 0 || (nnondiff && !nondiff_argnums)) {
    error_set(JX_ERR_VALUE, "%s: %s is NULL", fn, !f ? "f" : !jvp ? "jvp" : "nondiff_argnums");
    return NULL;
  }
  int nin = jx_fn_nin(f), nout = jx_fn_nout(f);
  if (nin > 32) {
    error_set(JX_ERR_VALUE, "%s: %s takes %d inputs (at most 32)", fn, jx_fn_name(f), nin);
    return NULL;
  }
  unsigned nondiff = 0;
  for (int k = 0; k < nnondiff; k++) {
    int a = nondiff_argnums[k];
    if (a < 0 || a >= nin || (nondiff >> a & 1)) {
      error_set(JX_ERR_VALUE, "%s: nondiff_argnums[%d] = %d is %s for %s of %d inputs", fn, k, a,
                a >= 0 && a < nin ? "repeated" : "out of range", jx_fn_name(f), nin);
      return NULL;
    }
    nondiff |= 1u << a;
  }
  int ndiff = nin - nnondiff;
  if (!arity(fn, jvp, "the rule", nnondiff + 2 * ndiff, 2 * nout)) return NULL;
  return make(CUSTOM_JVP, f, jvp, NULL, nondiff, 0);
}

jx_fn *jx_custom_vjp(jx_fn *f, jx_fn *fwd, jx_fn *bwd) {
  const char *fn = "jx_custom_vjp";
  if (!f || !fwd || !bwd) {
    error_set(JX_ERR_VALUE, "%s: %s is NULL", fn, !f ? "f" : !fwd ? "fwd" : "bwd");
    return NULL;
  }
  int nin = jx_fn_nin(f), nout = jx_fn_nout(f);
  if (jx_fn_nin(fwd) != nin || jx_fn_nout(fwd) < nout) {
    error_set(JX_ERR_VALUE, "%s: fwd %s takes %d inputs and gives %d outputs, but must take %d and "
              "give %d outputs then the residuals", fn, jx_fn_name(fwd), jx_fn_nin(fwd),
              jx_fn_nout(fwd), nin, nout);
    return NULL;
  }
  int nres = jx_fn_nout(fwd) - nout;
  if (!arity(fn, bwd, "bwd", nres + nout, nin)) return NULL;
  return make(CUSTOM_VJP, f, fwd, bwd, 0, 0);
}

jx_fn *jx_checkpoint(jx_fn *f, jx_checkpoint_policy policy) {
  if (!f || (unsigned)policy > JX_CHECKPOINT_DOTS_WITH_NO_BATCH_DIMS_SAVEABLE) {
    error_set(JX_ERR_VALUE, "jx_checkpoint: %s", !f ? "f is NULL" : "unknown policy");
    return NULL;
  }
  static const unsigned prim_policy[] = {
      [JX_CHECKPOINT_NOTHING_SAVEABLE] = PRIM_CHECKPOINT_NOTHING,
      [JX_CHECKPOINT_EVERYTHING_SAVEABLE] = PRIM_CHECKPOINT_EVERYTHING,
      [JX_CHECKPOINT_DOTS_SAVEABLE] = PRIM_CHECKPOINT_DOTS,
      [JX_CHECKPOINT_DOTS_WITH_NO_BATCH_DIMS_SAVEABLE] = PRIM_CHECKPOINT_DOTS_NO_BATCH,
  };
  return make(CHECKPOINT, f, NULL, NULL, 0, prim_policy[policy]);
}

jx_fn *jx_remat(jx_fn *f, jx_checkpoint_policy policy) { return jx_checkpoint(f, policy); }
