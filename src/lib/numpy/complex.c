/* complex.c -- jnp's complex-number functions: real, imag, conj/conjugate, angle, and
 * lax.complex as jx_complex. Real inputs follow jax/_src/numpy/ufuncs.py: real(x) is
 * x, imag(x) zeros, conj(x) x; complex inputs bind lax's real/imag/conj/complex
 * primitives (differentiable, batchable, fused under jit). */
#include <math.h>

#include "lib/numpy/np.h"

static bool null_in(const char *fn, const void *x) {
  if (x) return false;
  if (jx_last_status() == JX_OK) error_set(JX_ERR_VALUE, "%s: an input is NULL", fn);
  return true;
}

jx_array *jx_real(jx_array *x) {
  if (null_in("jx_real", x)) return NULL;
  return dtype_is_complex(x->dtype) ? prim_unary(PRIM_real, x) : jx_ref(x);
}

jx_array *jx_imag(jx_array *x) {
  if (null_in("jx_imag", x)) return NULL;
  return dtype_is_complex(x->dtype) ? prim_unary(PRIM_imag, x) : jx_zeros_like(x);
}

jx_array *jx_conj(jx_array *x) {
  if (null_in("jx_conj", x)) return NULL;
  return dtype_is_complex(x->dtype) ? prim_unary(PRIM_conj, x) : jx_ref(x);
}

jx_array *jx_conjugate(jx_array *x) { return jx_conj(x); }

/* lax.complex(re, im) after jnp-style promotion: the two parts promote together to an
 * inexact dtype (ints -> dtype_to_inexact's float; float16/bfloat16 -> float32, the smallest
 * part dtype of a complex), then broadcast. Complex parts are JX_ERR_DTYPE (lax.complex
 * takes real floats). */
jx_array *jx_complex(jx_array *re, jx_array *im) {
  if (null_in("jx_complex", re) || null_in("jx_complex", im)) return NULL;
  if (dtype_is_complex(re->dtype) || dtype_is_complex(im->dtype)) {
    error_set(JX_ERR_DTYPE, "jx_complex: parts must be real, got %s and %s",
              jx_dtype_name(re->dtype), jx_dtype_name(im->dtype));
    return NULL;
  }
  jx_scope_begin();
  jx_array *p[2];
  if (!np_prepare("jx_complex", 2, (jx_array *[]){re, im}, p)) return np_scope_return(NULL);
  jx_dtype d = p[0]->dtype;
  d = dtype_to_inexact(d); /* bool / ints */
  jx_dtype part = d == JX_FLOAT64 ? JX_FLOAT64 : JX_FLOAT32;
  bool weak = p[0]->weak && p[1]->weak;
  jx_array *a = np_convert(p[0], part, weak), *b = np_convert(p[1], part, weak);
  jx_free(p[0]), jx_free(p[1]);
  return np_scope_return(prim_binary(PRIM_complex, a, b));
}

/* jnp.angle(z, deg=False): atan2(imag(z), real(z)) in an inexact dtype (radians). */
jx_array *jx_angle(jx_array *z, bool deg) {
  if (null_in("jx_angle", z)) return NULL;
  jx_scope_begin();
  jx_array *a = jx_arctan2(jx_imag(z), jx_real(z));
  if (deg) a = jx_rad2deg(a);
  return np_scope_return(a);
}

/* jnp.iscomplex / isreal (lax_numpy.py): imag(x) != 0 / imag(x) == 0 elementwise, as
 * bool (a real x: all false / all true). */
static jx_array *imag_test(const char *fn, jx_array *x, bool nonzero) {
  if (null_in(fn, x)) return NULL;
  jx_scope_begin();
  jx_array *i = jx_imag(x), *z = jx_zeros_like(i);
  return np_scope_return(nonzero ? jx_not_equal(i, z) : jx_equal(i, z));
}
jx_array *jx_iscomplex(jx_array *x) { return imag_test("jx_iscomplex", x, true); }
jx_array *jx_isreal(jx_array *x) { return imag_test("jx_isreal", x, false); }

/* jnp.sort_complex: sorted along the last axis (complex: lexicographic on (re, im)),
 * then converted to the complex dtype of to_inexact(x.dtype) (float64 / int64 ->
 * complex128, else complex64), strongly typed. */
jx_array *jx_sort_complex(jx_array *a) {
  if (null_in("jx_sort_complex", a)) return NULL;
  jx_scope_begin();
  jx_array *s = a->ndim ? jx_sort(a, -1, false) : jx_ref(a);
  return np_scope_return(s ? np_convert(s, dtype_canonicalize(dtype_to_complex(dtype_to_inexact(s->dtype))), false) : NULL);
}
