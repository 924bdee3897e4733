/* jaxc/custom.h -- part of the public API of jaxc; included by <jaxc.h>, never on its own.
 * Custom derivatives and rematerialization: jax.custom_jvp, jax.custom_vjp,
 * jax.checkpoint (remat) with its policies; jax.debug.print. */
#ifndef JAXC_CUSTOM_H
#define JAXC_CUSTOM_H
#ifndef JAXC_H
#error "include <jaxc.h>, not <jaxc/custom.h>"
#endif

/* --------------------------------------------------------- custom derivatives */
/* The functions below take jx_fn callbacks (jx_fn_new: an impl with a context pointer,
 * or any transformed function) and return a new jx_fn (free it with jx_fn_free; it
 * holds its own references to f and the rules). Calling it traces f once per call on
 * abstract values of the arguments' types into a sub-program bound as one primitive,
 * so jit compiles f itself (the rules matter only to transformations) and make_jaxpr
 * shows the primitive as JAX prints it. A custom_jvp / custom_vjp f must not close over
 * a traced value of an enclosing transformation (pass it as an argument):
 * JX_ERR_UNSUPPORTED at the call; jx_checkpoint's f may (below).
 * Rules are called lazily, only when a transformation needs them, and may call the
 * returned function themselves. Every rule output is checked against the type it
 * stands for: a mismatch is JX_ERR_SHAPE / JX_ERR_DTYPE naming the rule, the output
 * and both types. */

/* jax.custom_jvp(f, nondiff_argnums) with f.defjvp(jvp): a function computing f whose
 * forward-mode derivative is given by `jvp` (reverse mode transposes it, so the tangent
 * outputs must be linear in the tangents, as JAX requires).
 *   f:   nin inputs -> nout outputs.
 *   jvp: (the nondiff inputs in order, the other ndiff = nin - nnondiff inputs (primals),
 *        their tangents) -> (nout primal outputs, nout tangent outputs); tangents have
 *        their primals' types, except that bool and integer primals have JX_FLOAT0
 *        tangents (as JAX passes them); a zero tangent is passed as zeros. The tangent
 *        output of a bool/integer output is JX_FLOAT0 zeros (JAX's type; jaxc also
 *        accepts zeros of the output's dtype, which JAX rejects).
 * nondiff_argnums (nnondiff entries, distinct, in [0, nin), nin <= 32) name inputs that
 * get no tangent (JAX passes them first to the rule, as here). grad/vjp through it
 * transposes the rule's tangent computation; vmap batches f and the rule.
 * Errors (NULL): JX_ERR_VALUE for NULL functions, bad nondiff_argnums, or a rule whose
 * arity is not (nnondiff + 2 ndiff) -> 2 nout.
 * Example (README "Custom derivatives"): log1pexp(x) = log(1 + exp(x)) with the stable
 * derivative 1 - 1/(1 + exp(x)): grad at x = 100 is 1, not NaN. */
jx_fn *jx_custom_jvp(jx_fn *f, jx_fn *jvp, int nnondiff, const int *nondiff_argnums);

/* jax.custom_vjp(f) with f.defvjp(fwd, bwd): a function computing f whose reverse-mode
 * derivative is given by fwd and bwd.
 *   fwd: nin inputs -> (nout outputs of f, nres residuals of any types), nres >= 0;
 *   bwd: (nres residuals, nout output cotangents) -> nin input cotangents, each of its
 *        input's type.
 * grad/vjp/value_and_grad call fwd on the way forward and bwd on the way back; vmap
 * batches f, fwd and bwd. Forward mode (jx_jvp, jacfwd, hessian) through it is an
 * error as in JAX: JX_ERR_UNSUPPORTED "can't apply forward-mode autodiff (jvp) to a
 * custom_vjp function". Errors (NULL): JX_ERR_VALUE for NULL functions or arities that
 * do not fit (fwd: nin -> at least nout; bwd: jx_fn_nout(fwd) -> nin). */
jx_fn *jx_custom_vjp(jx_fn *f, jx_fn *fwd, jx_fn *bwd);

/* jax.checkpoint_policies: which intermediate values reverse mode may keep from the
 * forward pass; the others are recomputed from the checkpointed function's inputs
 * during the backward pass. */
typedef enum jx_checkpoint_policy {
  JX_CHECKPOINT_NOTHING_SAVEABLE = 0,  /* nothing_saveable (jax.checkpoint's default) */
  JX_CHECKPOINT_EVERYTHING_SAVEABLE,   /* everything_saveable (as without checkpoint) */
  JX_CHECKPOINT_DOTS_SAVEABLE,         /* dots_saveable: results of dot_general */
  JX_CHECKPOINT_DOTS_WITH_NO_BATCH_DIMS_SAVEABLE /* dots_with_no_batch_dims_saveable */
} jx_checkpoint_policy;

/* jax.checkpoint(f, policy=...) (alias jax.remat): the same function, differentiated
 * by recomputing what `policy` does not save: the memory of the values kept between
 * the forward and the backward pass shrinks to f's inputs (nothing_saveable) at the
 * cost of evaluating f again. Values and derivatives equal those of f. Under jit the
 * program is compiled as a whole (checkpoint boundaries are inlined). f may close over
 * values an enclosing transformation traces (a weight reached through ctx inside a
 * jx_lax_scan body under jx_grad, the usual remat-inside-scan pattern): as JAX, they
 * become leading operands of the checkpoint equation (make_jaxpr prints them first), so
 * grad, jvp, vmap and jit differentiate and batch through them. Errors (NULL):
 * JX_ERR_VALUE for a NULL f or an unknown policy. */
jx_fn *jx_checkpoint(jx_fn *f, jx_checkpoint_policy policy);
/* jax.remat: jx_checkpoint. */
jx_fn *jx_remat(jx_fn *f, jx_checkpoint_policy policy);

/* ------------------------------------------------------------------ debug */
/* jax.debug.print(fmt, *args): prints fmt with its fields replaced by the values of
 * args (as NumPy's str: "1.5", "[1. 2. 3.]"), and a newline, to stdout (flushed).
 * Fields: "{}" takes the next argument, "{i}" argument i; "{{" and "}}" print braces.
 * Inside jit it prints when the compiled function runs, not when it is traced, with the
 * runtime values; prints are ordered as the program (JAX's ordered=True); under vmap
 * it prints once per batch element, under jvp/grad the primal values (as JAX). A
 * program containing prints is evaluated equation by equation under jit (not fused).
 * Errors: JX_ERR_VALUE for a NULL fmt or argument, a malformed format (unmatched
 * braces, a named field, an index past n). */
jx_status jx_debug_print(const char *fmt, int n, jx_array *const *args);

#endif
