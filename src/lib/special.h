/* special.h -- lax's special-function primitives as special_call equations
 * (special_prims.c), shared by jax.scipy.special (special.c) and random's gamma
 * sampler. Operands: float32 or float64 arrays of one shape and dtype (callers promote,
 * broadcast and upcast half floats). New references; NULL with the error set. */
#ifndef JAXC_LIB_SPECIAL_H
#define JAXC_LIB_SPECIAL_H

#include "jaxc.h"
#include "trace/prim.h"

#define SPECIAL_MAX_ARGS 4

/* The expansion of a special function into primitives: out[0 .. nout) from in[]. */
typedef bool (*SpecialImpl)(jx_array *const *in, jx_array **out, int param);
/* Traces impl on abstract inputs like in[] into a closed jaxpr and binds it as one
 * special_call equation differentiated by `rule` (JAX's custom_jvp). */
jx_status special_custom_call(const SpecialRule *rule, int nin, jx_array *const *in, int nout,
                              jx_array **out, SpecialImpl impl, int param);

jx_array *special_lgamma(jx_array *x);
/* The Lanczos approximation lgamma and digamma use (XLA's kLanczosGamma,
 * kBaseLanczosCoeff, kLanczosCoefficients: g = 7, n = 9); random_discrete.c's lgamma
 * with XLA's rounding uses it too. */
extern const double special_lanczos_g, special_lanczos_base, special_lanczos[8];
jx_array *special_digamma(jx_array *x);
jx_array *special_polygamma(jx_array *n, jx_array *x);
jx_array *special_zeta(jx_array *x, jx_array *q);
jx_array *special_igamma(jx_array *a, jx_array *x);
jx_array *special_igammac(jx_array *a, jx_array *x);
jx_array *special_igamma_grad_a(jx_array *a, jx_array *x);
jx_array *special_random_gamma_grad(jx_array *a, jx_array *x);
/* lax.betainc (regularized_incomplete_beta): I_x(a, b), a while loop as JAX's. */
jx_array *special_betainc(jx_array *a, jx_array *b, jx_array *x);
jx_array *special_i0e(jx_array *x);
jx_array *special_i1e(jx_array *x);
/* lax.erf_inv with JAX's JVP (any float dtype: random_erf_inv's expansion). */
jx_array *special_erf_inv(jx_array *x);

#endif
