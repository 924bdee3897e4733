/* jaxc.h -- JAX for C: NumPy-compatible arrays, JAX's transformations (grad, vmap, jit,
 * ...) and a compiler that fuses array operations into native kernels.
 *
 *   #include <jaxc.h>
 *   int64_t shape[2] = {2, 3};
 *   float data[6] = {1, 2, 3, 4, 5, 6};
 *   jx_scope_begin();
 *   jx_array *x = jx_array_from(data, JX_FLOAT32, 2, shape);
 *   jx_array *y = jx_sum(jx_exp(x), 1, (int[]){1}, false);   // shape [2]
 *   char *s = jx_to_string(y);                                 // NULL if anything failed
 *   if (s) puts(s); else fprintf(stderr, "%s\n", jx_last_error());
 *   free(s);
 *   jx_scope_end(0, NULL);                                     // frees x, exp(x), y
 *
 * OWNERSHIP -- one rule. Arguments are borrowed: no function takes ownership of an
 * array you pass. Every function returning `jx_array *` returns a new reference;
 * `jx_free` drops one (NULL is fine), `jx_ref` adds one. Between `jx_scope_begin()` and
 * `jx_scope_end(n, keep)` every reference created is released at the end, except the n
 * arrays in `keep`, which are handed to the enclosing scope (or the caller). Freeing an
 * array early inside a scope is allowed; the scope then skips it.
 *
 * ERRORS -- sticky, never fatal. A failing op returns NULL and records the first error
 * of the thread (status + a message naming the function, the shapes/dtypes involved and
 * what was expected). An op given a NULL argument returns NULL and keeps the first
 * error, so a chain is checked once at its end. Calls that are not array-valued return
 * `jx_status`. The library never exits, aborts or prints on user error. An error that
 * is pending does not stop later ops on valid inputs: they run and succeed, and the
 * first error stays recorded until jx_clear_error.
 *
 * HANDLE CHECKS -- using a handle after its last reference is gone is a bug that would
 * corrupt memory; in builds with JAXC_CHECKS (the default) jx_free / jx_ref of a
 * released array and jx_fn_free / jx_fn_ref / jx_call of a released function abort
 * with a message naming the object ("jaxc: jx_free: float32[3] at 0x... was already
 * released"), from a poisoned magic field (released structs are quarantined a while).
 *
 * THREADS -- errors and scopes (array and function scopes) are per thread. Sharing
 * one jitted jx_fn between threads is not yet safe (issue 12, defect 1: its trace
 * cache is unlocked); give each thread its own jx_jit of the function.
 *
 * SEMANTICS follow jax.numpy: broadcasting, JAX's type promotion with weak types
 * (`jx_scalar` is a weakly typed Python float, `jx_scalar_int` a weak Python int), and
 * JAX's jax_enable_x64 switch (off by default: 64-bit dtypes canonicalize to 32 bits).
 * Shapes are int64_t. Axes are int; negative axes count from the end. An axis list is
 * (int naxes, const int *axes), and axes == NULL means every axis (axis=None).
 */
#ifndef JAXC_H
#define JAXC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define JAXC_VERSION_MAJOR 0
#define JAXC_VERSION_MINOR 1
#define JAXC_VERSION_PATCH 0

/* Largest rank an array may have. */
#define JX_MAX_NDIM 16

/* ------------------------------------------------------------------ types */

/* An n-d array (or, inside a transformation, a tracer). Opaque, refcounted. */
typedef struct jx_array jx_array;

/* Element types: JAX's dtypes. float16/bfloat16 are stored as 16 bits and computed in
 * float32 (each op rounds its result back to 16 bits). */
typedef enum jx_dtype {
  JX_BOOL,
  JX_INT8,
  JX_UINT8,
  JX_INT16,
  JX_UINT16,
  JX_INT32,
  JX_UINT32,
  JX_INT64,
  JX_UINT64,
  JX_FLOAT16,
  JX_BFLOAT16,
  JX_FLOAT32,
  JX_FLOAT64,
  JX_NUM_DTYPES
} jx_dtype;

typedef enum jx_status {
  JX_OK = 0,
  JX_ERR_SHAPE,       /* incompatible or invalid shapes, axes, indices */
  JX_ERR_DTYPE,       /* dtype not accepted by the operation */
  JX_ERR_VALUE,       /* bad scalar argument (NULL, negative count, ...) */
  JX_ERR_OOM,         /* allocation failed or size overflows int64 */
  JX_ERR_DEVICE,      /* device missing or failing */
  JX_ERR_COMPILE,     /* generated code failed to compile */
  JX_ERR_IO,          /* file missing, truncated or malformed */
  JX_ERR_UNSUPPORTED, /* valid request jaxc does not implement */
  JX_ERR_INTERNAL     /* a bug in jaxc: please report */
} jx_status;

/* ------------------------------------------------------- errors, lifetimes */

/* First error recorded on this thread since the last jx_clear_error (JX_OK if none). */
jx_status jx_last_status(void);
/* Its message ("" if none). Valid until the next jx_clear_error on this thread. */
const char *jx_last_error(void);
void jx_clear_error(void);
/* Short name of a status ("JX_ERR_SHAPE"). */
const char *jx_status_name(jx_status s);

/* Adds a reference to `a` and returns it (NULL passes through). */
jx_array *jx_ref(jx_array *a);
/* Drops one reference (NULL is fine). */
void jx_free(jx_array *a);
/* Opens a scope: references created until the matching jx_scope_end are released then. */
void jx_scope_begin(void);
/* Closes the innermost scope, releasing every reference created in it except the n
 * arrays of `keep` (NULL entries allowed), which move to the enclosing scope or, with
 * none open, to the caller. Returns JX_ERR_VALUE (and records it) when no scope is open,
 * or when n < 0 or keep is NULL with n > 0 (the scope is then closed keeping nothing). */
jx_status jx_scope_end(int n, jx_array *const *keep);
/* Number of arrays alive now (all threads): tests use it to prove there are no leaks. */
int64_t jx_live_arrays(void);

/* ------------------------------------------------------------ functions */

/* A callable, refcounted. Managed explicitly (jx_fn_free), or by a function scope:
 * between jx_fn_scope_begin() and jx_fn_scope_end(n, keep) every jx_fn reference
 * created -- by jx_fn_new, jx_fn_ref and every transformation (jx_jit, jx_grad, ...) --
 * is released at the end except the n functions in keep, so nested transformations
 * written as JAX users write them leak nothing:
 *
 *   jx_fn_scope_begin();
 *   jx_fn *step = jx_jit(jx_vmap(jx_grad(jx_fn_new("loss", 2, 1, loss, NULL), 1, NULL),
 *                                (int[]){JX_NOT_MAPPED, 0}, NULL));
 *   jx_fn_scope_end(1, &step);   // loss, grad(loss), vmap(grad(loss)) released here
 *   ... jx_call(step, ...) ...
 *   jx_fn_free(step);            // jx_live_fns() == 0
 *
 * Function scopes are per thread and independent of array scopes; a jx_fn_free inside
 * one drops a reference the scope then no longer drops (as jx_free does for arrays).
 * Without an open function scope nothing changes: each handle needs its jx_fn_free. */
typedef struct jx_fn jx_fn;
/* A user function: reads in[0..nin), fills out[0..nout) with arrays and returns JX_OK
 * (or an error status). It runs inside an implicit scope: it never frees anything; the
 * arrays it puts in out[] are handed to the caller. Arrays reached through ctx are
 * constants of a trace (closed-over values), as in JAX. */
typedef jx_status (*jx_fn_impl)(void *ctx, jx_array *const *in, jx_array **out);
/* A new function of nin inputs and nout outputs (nin >= 0, nout >= 1). name is copied
 * (NULL allowed). Returns NULL with JX_ERR_VALUE for bad counts or a NULL impl. */
jx_fn *jx_fn_new(const char *name, int nin, int nout, jx_fn_impl impl, void *ctx);
/* Same, and free_ctx(ctx) runs when the last reference is dropped (NULL: nothing). */
jx_fn *jx_fn_new_with_free(const char *name, int nin, int nout, jx_fn_impl impl, void *ctx,
                           void (*free_ctx)(void *ctx));
jx_fn *jx_fn_ref(jx_fn *f);
void jx_fn_free(jx_fn *f);
int jx_fn_nin(const jx_fn *f);
int jx_fn_nout(const jx_fn *f);
const char *jx_fn_name(const jx_fn *f);
/* Calls f: out[0..nout) receive new references (all NULL on failure). Returns JX_OK
 * or the first error: JX_ERR_VALUE for NULL arguments or an impl that left an output
 * unset, the impl's own status otherwise. */
jx_status jx_call(jx_fn *f, jx_array *const *in, jx_array **out);
/* Number of jx_fn alive now: tests use it to prove there are no leaks. */
int64_t jx_live_fns(void);
/* Opens a function scope on this thread (see jx_fn above). */
void jx_fn_scope_begin(void);
/* Closes the innermost function scope: releases every jx_fn reference created in it
 * except the n functions of keep (NULL entries allowed), which move to the enclosing
 * function scope or, with none open, to the caller. JX_ERR_VALUE when no function
 * scope is open or for n < 0 / keep NULL with n > 0 (the scope still closes). */
jx_status jx_fn_scope_end(int n, jx_fn *const *keep);

/* -------------------------------------------------------- transformations */
/* JAX's composable transformations. Each returns a new jx_fn holding its own reference
 * to f (free your handle whenever you like). Every transformation composes with every
 * other: grad(grad(f)), vmap(grad(f)), jacfwd(jacrev(f)), ... */

/* jax.make_jaxpr(f)(*example_in): the jaxpr of f traced at the shapes/dtypes of the
 * example inputs, in JAX's text format ("{ lambda ; a:f32[3]. let b:f32[3] = sin a in
 * (b,) }"). The caller free()s it. NULL on error (f's own errors propagate). */
char *jx_make_jaxpr(jx_fn *f, jx_array *const *example_in);

/* jax.jit(f): traces f once per input signature (shapes, dtypes, weak types) into a
 * jaxpr, fuses it into few kernels and runs those on later calls. Under another
 * transformation it behaves like f. Set JAXC_DEBUG=2 to see the jaxprs, 3 the kernels. */
jx_fn *jx_jit(jx_fn *f);

/* jax.jvp(f, primals, tangents): f's outputs and their tangents (new references).
 * Tangents must match their primals' shapes and dtypes (JX_ERR_SHAPE). */
jx_status jx_jvp(jx_fn *f, jx_array *const *primals, jx_array *const *tangents,
                 jx_array **primals_out, jx_array **tangents_out);
/* jax.vjp(f, *primals): fills primals_out with f's outputs and returns the pullback, a
 * jx_fn from output cotangents (one per output, same shapes/dtypes) to input
 * cotangents. */
jx_fn *jx_vjp(jx_fn *f, jx_array *const *primals, jx_array **primals_out);
/* jax.linearize(f, *primals): fills primals_out and returns f's JVP at primals as a
 * jx_fn from input tangents to output tangents. */
jx_fn *jx_linearize(jx_fn *f, jx_array *const *primals, jx_array **primals_out);
/* jax.grad(f, argnums, has_aux=True-style): f's first output must be a scalar float;
 * returns grads (one per argnum, like its input) followed by f's other outputs
 * (auxiliary data). argnums == NULL means {0}. Differentiated inputs must be float
 * (JX_ERR_DTYPE). */
jx_fn *jx_grad(jx_fn *f, int nargnums, const int *argnums);
/* jax.value_and_grad: returns value, aux..., grads.... */
jx_fn *jx_value_and_grad(jx_fn *f, int nargnums, const int *argnums);
/* jax.jacfwd / jax.jacrev(f, argnums): the returned function gives, for every output
 * y_o and differentiated input x_a, J[o][a] of shape y_o.shape + x_a.shape, ordered
 * o-major (out[o * nargnums + a]). jacfwd pushes the input basis through jvp under
 * vmap; jacrev pulls the output basis back through vjp under vmap. argnums == NULL
 * means {0}; differentiated inputs must be float (JX_ERR_DTYPE). */
jx_fn *jx_jacfwd(jx_fn *f, int nargnums, const int *argnums);
jx_fn *jx_jacrev(jx_fn *f, int nargnums, const int *argnums);
/* jax.hessian: jacfwd(jacrev(f, argnums), argnums); for a scalar output and one
 * argnum, an array of shape x.shape + x.shape. */
jx_fn *jx_hessian(jx_fn *f, int nargnums, const int *argnums);
/* lax.stop_gradient: x itself, with zero derivative. */
jx_array *jx_stop_gradient(jx_array *x);

/* jax.vmap(f, in_axes, out_axes): maps f over the axis in_axes[i] of input i
 * (JX_NOT_MAPPED: broadcast that input) and stacks the outputs along out_axes[o]
 * (JX_NOT_MAPPED: the output must not depend on the mapped axis). in_axes == NULL
 * maps axis 0 of every input; out_axes == NULL stacks every output on axis 0. Axes may
 * be negative. Errors at call time: JX_ERR_SHAPE for mapped axes of different sizes
 * or out of range, JX_ERR_VALUE when no input is mapped. */
#define JX_NOT_MAPPED (-2147483647 - 1)
jx_fn *jx_vmap(jx_fn *f, const int *in_axes, const int *out_axes);

/* -------------------------------------------------------- configuration */

/* JAX's jax_enable_x64 (default off, or the env var JAXC_ENABLE_X64=1/true). With it off,
 * requests for int64/uint64/float64 produce int32/uint32/float32 arrays, as in JAX.
 * Affects arrays created afterwards. */
void jx_config_enable_x64(bool enable);
bool jx_config_x64_enabled(void);
/* JAX's jax_default_matmul_precision for float32 matrix products on devices with
 * reduced-precision matrix units (cuda): "default", "fastest", "bfloat16", "high" or
 * "tensorfloat32" allow TF32 (10-bit mantissa inputs, float32 accumulation -- what JAX
 * does by default on NVIDIA GPUs since Ampere); "highest" or "float32" ask for full
 * float32. Also read from the env var JAXC_DEFAULT_MATMUL_PRECISION. The cpu and interp
 * devices always compute in full float32. JX_ERR_VALUE for another name. */
jx_status jx_config_default_matmul_precision(const char *precision);

/* --------------------------------------------------------------- dtypes */

/* NumPy name ("float32", "bfloat16", "bool"); NULL for an invalid value. */
const char *jx_dtype_name(jx_dtype d);
/* Bytes per element (bool: 1). 0 for an invalid value. */
size_t jx_dtype_itemsize(jx_dtype d);
/* jnp.result_type of two dtypes, each weak (Python scalar) or not: JAX's promotion
 * lattice (jax._src.dtypes), canonicalized for the current x64 mode. */
jx_dtype jx_promote_types(jx_dtype a, bool a_weak, jx_dtype b, bool b_weak, bool *weak_out);

/* -------------------------------------------------------------- devices */

/* NULL-terminated list of device names available in this process ("interp", "cpu", and
 * "cuda" where an NVIDIA driver and GPU are found). */
const char *const *jx_devices(void);
/* Sets the device new arrays are created on. JX_ERR_DEVICE for an unknown name, or for
 * one that cannot run here ("cuda" without a driver: the message names what is missing). */
jx_status jx_default_device(const char *name);
/* Name of the device holding `a` (NULL for NULL). */
const char *jx_device_of(const jx_array *a);
/* jax.device_put(a, device): `a` on the named device (a contiguous copy of its logical
 * contents when it was elsewhere, the same data when already there), committed to it:
 * operations and jitted calls on committed arrays run on their device, and arrays
 * committed to different devices in one operation are JX_ERR_DEVICE naming both
 * (uncommitted arrays follow the committed ones; docs/api.md, Devices). JX_ERR_DEVICE
 * for an unknown or unavailable device; NULL for NULL. */
jx_array *jx_device_put(jx_array *a, const char *device);

/* --------------------------------------------------------------- arrays */

/* Copies `data` (C order, dtype-sized elements) into a new array. `data` may be NULL
 * only when the shape has zero elements. int64/uint64/float64 data is converted to the
 * canonical 32-bit dtype when x64 is off (as jnp.asarray does).
 * Errors: JX_ERR_SHAPE for ndim outside [0, JX_MAX_NDIM] or negative dims,
 * JX_ERR_OOM for element counts that overflow int64, JX_ERR_VALUE for NULL data. */
jx_array *jx_array_from(const void *data, jx_dtype dtype, int ndim, const int64_t *shape);
/* A weakly typed float scalar (a Python float in JAX). */
jx_array *jx_scalar(double value);
/* A weakly typed int scalar (a Python int in JAX); values outside int32 with x64 off
 * are an error (JX_ERR_VALUE), as JAX raises OverflowError. */
jx_array *jx_scalar_int(int64_t value);
/* A strongly typed 0-d array: jnp.asarray(value, dtype). */
jx_array *jx_scalar_of(double value, jx_dtype dtype);

/* Rank of a (NULL: 0 and the sticky error JX_ERR_VALUE, keeping an earlier one). */
int jx_ndim(const jx_array *a);
/* Pointer to ndim dims, valid while `a` lives. */
const int64_t *jx_shape(const jx_array *a);
int64_t jx_size(const jx_array *a);
/* dtype of a (NULL: JX_FLOAT32 and the sticky error JX_ERR_VALUE). */
jx_dtype jx_dtype_of(const jx_array *a);
/* True for weakly typed arrays (results of jx_scalar and ops on weak inputs only). */
bool jx_is_weak(const jx_array *a);

/* Copies the elements, C order, into dst (nbytes must equal size * itemsize).
 * JX_ERR_VALUE for NULL or a wrong nbytes. */
jx_status jx_read(jx_array *a, void *dst, size_t nbytes);
/* The single element of a size-1 array, as double (NaN and the sticky error
 * JX_ERR_SHAPE otherwise; NaN and JX_ERR_VALUE for NULL). */
double jx_item(jx_array *a);
/* Waits until `a` is computed. */
jx_status jx_block_until_ready(jx_array *a);
/* str(np.asarray(a)) as NumPy 2 prints it ("[[1. 2.]\n [3. 4.]]"): shortest round-trip
 * digits (at most 8 after the point), one format per array, 75-column lines, "..." and
 * 3 edge items per axis above 1000 elements, a 0-d array as the bare scalar ("1.5",
 * "True"); bfloat16 as ml_dtypes prints it ("%g"-style, unaligned). The caller free()s
 * the text. NULL (JX_ERR_VALUE) for NULL. */
char *jx_to_string(jx_array *a);

/* ---------------------------------------------------------------- creation */
/* jnp.full / zeros / ones: one value broadcast (a view). dtype is canonicalized (x64
 * mode). Errors: JX_ERR_SHAPE for bad ndim or negative dims, JX_ERR_OOM when the size
 * overflows int64, JX_ERR_DTYPE for an invalid dtype. */
jx_array *jx_full(int ndim, const int64_t *shape, double value, jx_dtype dtype);
jx_array *jx_zeros(int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_ones(int ndim, const int64_t *shape, jx_dtype dtype);
/* jnp.zeros_like / ones_like / full_like: same shape, dtype and weak type as `a`. */
jx_array *jx_zeros_like(jx_array *a);
jx_array *jx_ones_like(jx_array *a);
jx_array *jx_full_like(jx_array *a, double value);
/* jnp.arange(start, stop, step, dtype): max(0, ceil((stop-start)/step)) elements
 * start + i*step, computed in dtype (float16/bfloat16: in float32) as JAX does.
 * JX_ERR_VALUE for step == 0 or non-finite arguments, JX_ERR_DTYPE for bool (lax.iota
 * rejects it), JX_ERR_OOM for a length beyond int64. */
jx_array *jx_arange(double start, double stop, double step, jx_dtype dtype);
/* jnp.linspace(start, stop, num, endpoint=True, dtype): start * (1 - t) + stop * t with
 * t = i / (num-1), computed in dtype (bool/int dtypes: the default float, then floor)
 * as XLA evaluates JAX's formula; the last element is exactly stop. JX_ERR_VALUE for
 * num < 0. */
jx_array *jx_linspace(double start, double stop, int64_t num, jx_dtype dtype);
/* jnp.eye(n, dtype): n x n identity. JX_ERR_SHAPE for n < 0. */
jx_array *jx_eye(int64_t n, jx_dtype dtype);
/* jnp.eye(n, m, k, dtype): ones on the k-th diagonal of an n x m array. */
jx_array *jx_eye_k(int64_t n, int64_t m, int64_t k, jx_dtype dtype);
/* jnp.tri(n, m, k, dtype): ones at and below the k-th diagonal. */
jx_array *jx_tri(int64_t n, int64_t m, int64_t k, jx_dtype dtype);
/* jnp.tril / jnp.triu(a, k) on the last two axes (ndim >= 2, else JX_ERR_SHAPE). */
jx_array *jx_tril(jx_array *a, int64_t k);
jx_array *jx_triu(jx_array *a, int64_t k);
/* jnp.astype(a, dtype): convert_element_type. float->int saturates, NaN -> 0
 * (XLA's conversion); to bool is a != 0. */
jx_array *jx_astype(jx_array *a, jx_dtype dtype);
/* lax.bitcast_convert_type between dtypes of equal itemsize (JX_ERR_DTYPE otherwise). */
jx_array *jx_bitcast(jx_array *a, jx_dtype dtype);

/* ---------------------------------------------------------- elementwise */
/* Binary ops broadcast (NumPy rules) and promote (JAX rules). Errors: JX_ERR_SHAPE for
 * shapes that do not broadcast; JX_ERR_DTYPE where JAX rejects the dtype (bitwise ops
 * on floats, ...). */
jx_array *jx_add(jx_array *x, jx_array *y);
jx_array *jx_subtract(jx_array *x, jx_array *y);
jx_array *jx_sub(jx_array *x, jx_array *y); /* alias of jx_subtract */
jx_array *jx_multiply(jx_array *x, jx_array *y);
jx_array *jx_mul(jx_array *x, jx_array *y); /* alias of jx_multiply */
/* jnp.divide / true_divide: integer inputs promote to the default float. */
jx_array *jx_divide(jx_array *x, jx_array *y);
jx_array *jx_div(jx_array *x, jx_array *y); /* alias of jx_divide */
jx_array *jx_true_divide(jx_array *x, jx_array *y);
/* jnp.floor_divide / remainder (Python semantics: result has the sign of y).
 * Integer x // 0 gives what JAX on CPU gives (-2, or -1 for 0 // 0) and x % 0 gives 0;
 * see docs/api.md. */
jx_array *jx_floor_divide(jx_array *x, jx_array *y);
jx_array *jx_remainder(jx_array *x, jx_array *y);
jx_array *jx_mod(jx_array *x, jx_array *y); /* alias of jx_remainder */
/* jnp.fmod: C fmod semantics (sign of x). */
jx_array *jx_fmod(jx_array *x, jx_array *y);
jx_array *jx_power(jx_array *x, jx_array *y);
jx_array *jx_maximum(jx_array *x, jx_array *y); /* NaN-propagating */
jx_array *jx_minimum(jx_array *x, jx_array *y);
jx_array *jx_fmax(jx_array *x, jx_array *y); /* NaN-ignoring */
jx_array *jx_fmin(jx_array *x, jx_array *y);
jx_array *jx_arctan2(jx_array *y, jx_array *x);
jx_array *jx_hypot(jx_array *x, jx_array *y);
jx_array *jx_logaddexp(jx_array *x, jx_array *y);
jx_array *jx_copysign(jx_array *x, jx_array *y);
/* Comparisons return bool arrays. */
jx_array *jx_equal(jx_array *x, jx_array *y);
jx_array *jx_not_equal(jx_array *x, jx_array *y);
jx_array *jx_less(jx_array *x, jx_array *y);
jx_array *jx_less_equal(jx_array *x, jx_array *y);
jx_array *jx_greater(jx_array *x, jx_array *y);
jx_array *jx_greater_equal(jx_array *x, jx_array *y);
/* Logical ops take any dtype (nonzero is true) and return bool. */
jx_array *jx_logical_and(jx_array *x, jx_array *y);
jx_array *jx_logical_or(jx_array *x, jx_array *y);
jx_array *jx_logical_xor(jx_array *x, jx_array *y);
jx_array *jx_logical_not(jx_array *x);
/* Bitwise ops: bool and integer dtypes only. */
jx_array *jx_bitwise_and(jx_array *x, jx_array *y);
jx_array *jx_bitwise_or(jx_array *x, jx_array *y);
jx_array *jx_bitwise_xor(jx_array *x, jx_array *y);
jx_array *jx_bitwise_not(jx_array *x);
jx_array *jx_invert(jx_array *x); /* alias of jx_bitwise_not */
/* Shifts: integers only; right_shift is arithmetic for signed dtypes; shift counts
 * outside [0, bits) give 0 (or -1 for negative values shifted right), as lax does. */
jx_array *jx_left_shift(jx_array *x, jx_array *y);
jx_array *jx_right_shift(jx_array *x, jx_array *y);

/* Unary math. Integer inputs of the transcendental functions promote to the default
 * float dtype, as in jax.numpy. */
jx_array *jx_negative(jx_array *x);
jx_array *jx_positive(jx_array *x);
jx_array *jx_abs(jx_array *x);
jx_array *jx_absolute(jx_array *x); /* alias of jx_abs */
jx_array *jx_sign(jx_array *x);
jx_array *jx_exp(jx_array *x);
jx_array *jx_exp2(jx_array *x);
jx_array *jx_expm1(jx_array *x);
jx_array *jx_log(jx_array *x);
jx_array *jx_log2(jx_array *x);
jx_array *jx_log10(jx_array *x);
jx_array *jx_log1p(jx_array *x);
jx_array *jx_sqrt(jx_array *x);
jx_array *jx_rsqrt(jx_array *x); /* lax.rsqrt */
jx_array *jx_cbrt(jx_array *x);
jx_array *jx_square(jx_array *x);
jx_array *jx_reciprocal(jx_array *x);
jx_array *jx_sin(jx_array *x);
jx_array *jx_cos(jx_array *x);
jx_array *jx_tan(jx_array *x);
jx_array *jx_arcsin(jx_array *x);
jx_array *jx_arccos(jx_array *x);
jx_array *jx_arctan(jx_array *x);
jx_array *jx_sinh(jx_array *x);
jx_array *jx_cosh(jx_array *x);
jx_array *jx_tanh(jx_array *x);
jx_array *jx_arcsinh(jx_array *x);
jx_array *jx_arccosh(jx_array *x);
jx_array *jx_arctanh(jx_array *x);
jx_array *jx_floor(jx_array *x);
jx_array *jx_ceil(jx_array *x);
jx_array *jx_trunc(jx_array *x);
/* jnp.round(x, decimals=0) / jnp.rint: round half to even. */
jx_array *jx_round(jx_array *x);
jx_array *jx_rint(jx_array *x);
jx_array *jx_isnan(jx_array *x);
jx_array *jx_isinf(jx_array *x);
jx_array *jx_isfinite(jx_array *x);
jx_array *jx_signbit(jx_array *x);
jx_array *jx_deg2rad(jx_array *x);
jx_array *jx_rad2deg(jx_array *x);

/* jnp.where(cond, x, y): cond is cast to bool; x, y promote together. */
jx_array *jx_where(jx_array *cond, jx_array *x, jx_array *y);
/* jnp.clip(x, lo, hi): either bound may be NULL (no bound). */
jx_array *jx_clip(jx_array *x, jx_array *lo, jx_array *hi);

/* ---------------------------------------------------------- reductions */
/* jnp.sum / prod / max / min / mean / any / all over (naxes, axes); axes == NULL reduces
 * every axis. Repeated or out-of-range axes: JX_ERR_SHAPE. sum/prod of bool and small
 * ints accumulate in the default int dtype (as JAX); float16/bfloat16 accumulate in
 * float32. max/min of an empty axis: JX_ERR_VALUE (JAX raises: no identity). Float
 * sums/products of 16+ elements accumulate in 16 lanes (docs/api.md, summation order). */
jx_array *jx_sum(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_prod(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_max(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_min(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_mean(jx_array *x, int naxes, const int *axes, bool keepdims);
/* jnp.var / std with ddof, two passes (mean, then squared deviations); int inputs give
 * the default float; a divisor count - ddof <= 0 gives NaN, as JAX. */
jx_array *jx_var(jx_array *x, int naxes, const int *axes, int64_t ddof, bool keepdims);
jx_array *jx_std(jx_array *x, int naxes, const int *axes, int64_t ddof, bool keepdims);
jx_array *jx_any(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_all(jx_array *x, int naxes, const int *axes, bool keepdims);
/* jnp.argmax / argmin along one axis, or of the flattened array with JX_AXIS_NONE
 * (with keepdims every axis is kept as size 1). Indices have the default int dtype
 * (int32; int64 with x64); the first occurrence wins, and a NaN counts as the extreme
 * (the first NaN wins), as lax.argmax does. JX_ERR_VALUE for an empty axis, JX_ERR_SHAPE
 * for a bad axis. */
jx_array *jx_argmax(jx_array *x, int axis, bool keepdims);
jx_array *jx_argmin(jx_array *x, int axis, bool keepdims);

/* ------------------------------------------------------------ movement */
/* Views where possible: movement never copies data. */
/* jnp.reshape; one dim may be -1 (inferred). JX_ERR_SHAPE if sizes differ, for dims
 * < -1, for several -1, or for a -1 next to a 0 dim (ambiguous). */
jx_array *jx_reshape(jx_array *x, int ndim, const int64_t *shape);
jx_array *jx_ravel(jx_array *x);
/* jnp.transpose(x, axes); perm == NULL reverses the axes. */
jx_array *jx_transpose(jx_array *x, const int *perm);
jx_array *jx_swapaxes(jx_array *x, int axis1, int axis2);
jx_array *jx_moveaxis(jx_array *x, int source, int destination);
jx_array *jx_broadcast_to(jx_array *x, int ndim, const int64_t *shape);
jx_array *jx_expand_dims(jx_array *x, int axis);
/* jnp.squeeze: axes == NULL drops every size-1 axis; naming an axis whose size is not 1
 * is JX_ERR_SHAPE. */
jx_array *jx_squeeze(jx_array *x, int naxes, const int *axes);
/* jnp.concatenate / stack of n arrays along axis (they promote together). */
jx_array *jx_concatenate(int n, jx_array *const *xs, int axis);
jx_array *jx_stack(int n, jx_array *const *xs, int axis);
/* jnp.split(x, sections, axis) into `sections` equal parts (JX_ERR_SHAPE if it does not
 * divide). Fills out[0..sections-1]; returns JX_OK or the error. */
jx_status jx_split(jx_array *x, int64_t sections, int axis, jx_array **out);
/* jnp.split at indices: nidx + 1 pieces into out. As in JAX the indices must ascend
 * within [0, dim] (JX_ERR_SHAPE otherwise; out is then all NULL). */
jx_status jx_split_indices(jx_array *x, int nidx, const int64_t *indices, int axis,
                           jx_array **out);
/* jnp.pad(x, pad_width, mode='constant', constant_values=value); pad_width holds
 * (before, after) per axis: 2*ndim non-negative entries (JX_ERR_VALUE otherwise;
 * JX_ERR_OOM if the result's size overflows int64). value is converted to x's dtype. */
jx_array *jx_pad(jx_array *x, const int64_t *pad_width, double value);
/* jnp.flip; axes == NULL flips every axis. */
jx_array *jx_flip(jx_array *x, int naxes, const int *axes);
/* jnp.roll(x, shift, axis); axis == JX_AXIS_NONE rolls the flattened array. */
#define JX_AXIS_NONE (-1000000)
jx_array *jx_roll(jx_array *x, int64_t shift, int axis);
/* jnp.tile(x, reps) with nreps repetition counts (>= 0; fewer than ndim apply to the
 * last axes, more add leading axes). */
jx_array *jx_tile(jx_array *x, int nreps, const int64_t *reps);
/* jnp.repeat(x, repeats, axis) with a scalar repeat count; axis == JX_AXIS_NONE
 * flattens first. */
jx_array *jx_repeat(jx_array *x, int64_t repeats, int axis);
/* Basic and strided slicing x[start:stop:step, ...] over the first nslice axes, with
 * Python's clamping of out-of-range bounds; step != 0 (JX_ERR_VALUE). JX_SLICE_END in
 * start or stop is an omitted bound (Python's None): x[::-1] is start = stop =
 * JX_SLICE_END, step = -1. NULL start/stop mean all JX_SLICE_END, NULL step all 1. */
#define JX_SLICE_END INT64_MAX
jx_array *jx_slice(jx_array *x, int nslice, const int64_t *start, const int64_t *stop,
                   const int64_t *step);
/* jnp.take(x, indices, axis) in JAX's default mode "fill": integer indices of any shape
 * (result shape x.shape[:axis] + indices.shape + x.shape[axis+1:]); indices in [-n, 0)
 * wrap; any other index outside [0, n) gives the fill value: NaN for floats, the most
 * negative value for signed ints, the largest for unsigned ints, true for bool.
 * axis == JX_AXIS_NONE flattens x. JX_ERR_DTYPE for non-integer indices, JX_ERR_SHAPE
 * for a non-empty take from an empty axis (an empty take gives zeros). */
jx_array *jx_take(jx_array *x, jx_array *indices, int axis);

/* ------------------------------------------------------------- sorting */
/* jnp.sort(x, axis, descending=...) with JAX's total order: -0.0 == 0.0, NaN (either
 * sign) after +inf, stable. descending reverses the ascending result (NaNs first).
 * axis == JX_AXIS_NONE sorts the flattened array. Differentiable (the tangent follows
 * the permutation), batchable, jittable. JX_ERR_SHAPE for a 0-d x or a bad axis. */
jx_array *jx_sort(jx_array *x, int axis, bool descending);
/* jnp.argsort: positions of the stable sort (int32; int64 with x64 on). With
 * descending, equal elements keep their input order, as in JAX. */
jx_array *jx_argsort(jx_array *x, int axis, bool descending);

/* ------------------------------------------------------------ products */
/* jnp.matmul / dot / vdot / inner / outer: operands promote (JAX rules); float16 and
 * bfloat16 accumulate in float32 and round back; bool products are or-of-ands.
 * matmul: 1-d operands are promoted as NumPy does; batch dims broadcast. Mismatched
 * shapes: JX_ERR_SHAPE naming both. */
jx_array *jx_matmul(jx_array *x, jx_array *y);
jx_array *jx_dot(jx_array *x, jx_array *y);
jx_array *jx_vdot(jx_array *x, jx_array *y);
jx_array *jx_inner(jx_array *x, jx_array *y);
jx_array *jx_outer(jx_array *x, jx_array *y);
/* jnp.tensordot(x, y, axes=n): contracts the last n axes of x with the first n of y. */
jx_array *jx_tensordot(jx_array *x, jx_array *y, int n);

/* ------------------------------------------------------------ linear algebra */
/* Dense linear algebra on LAPACK (OpenBLAS underneath; a batch runs on the cpu
 * backend's threads, one problem per thread), mirroring jax.lax.linalg,
 * jax.numpy.linalg and jax.scipy.linalg. Matrices are the last two dims; leading dims
 * are batch dims. float32 and float64 (bool/int inputs of the jnp/scipy functions
 * promote to the default float, as promote_dtypes_inexact; the lax functions take
 * floats only: JX_ERR_DTYPE). Differentiable (JAX's JVP rules; repeated eigenvalues
 * or singular values give infinities in the derivatives, as in JAX), batchable
 * (vmap moves batch dims to the front), jittable (each factorization is one routine
 * step). Errors: JX_ERR_SHAPE naming the function and shapes for rank < 2, non-square
 * input where square is needed, mismatched operands. Numerical failure is not an
 * error: as JAX on CPU, cholesky/eigh/svd give NaNs for a batch entry LAPACK cannot
 * factor, singular solves give inf/NaN. Not on the cuda device yet (its routines
 * report JX_ERR_UNSUPPORTED). Functions with several results fill out[] (new
 * references; all NULL on failure) and return the status. */

/* lax.linalg.cholesky(x, symmetrize_input): lower L with L L^T = x (x symmetrized as
 * (x + x^T)/2 first if asked, else only its lower half is read). Potrf. */
jx_array *jx_lax_linalg_cholesky(jx_array *x, bool symmetrize_input);
/* lax.linalg.triangular_solve(a, b, left_side, lower, transpose_a, conjugate_a,
 * unit_diagonal): x with op(a) x = b (left_side) or x op(a) = b, a (..., k, k)
 * triangular, b (..., m, n) with a's batch dims (or one dim less: a vector). trsm. */
jx_array *jx_lax_linalg_triangular_solve(jx_array *a, jx_array *b, bool left_side, bool lower, bool transpose_a,
                                         bool conjugate_a, bool unit_diagonal);
/* lax.linalg.lu(x): out[0] lu (..., m, n) (L below the unit diagonal, U on and
 * above), out[1] pivots int32 (..., min(m, n)), out[2] permutation int32 (..., m) with
 * x[perm] = L U. Partial pivoting (getrf); singular input is not an error. */
jx_status jx_lax_linalg_lu(jx_array *x, jx_array **out);
/* lax.linalg.lu_solve(lu, permutation, b, trans): solves a x = b (trans 0) or
 * a^T x = b (1, 2) from lu's factors; b (..., m, k), or (..., m) when it has one dim
 * less than lu; batch dims broadcast. */
jx_array *jx_lax_linalg_lu_solve(jx_array *lu, jx_array *permutation, jx_array *b, int trans);

/* jnp.linalg.cholesky(a, upper): L (or U = L^T with upper) of symmetric positive
 * definite a, symmetrized first; NaNs where a is not positive definite. */
jx_array *jx_linalg_cholesky(jx_array *a, bool upper);
/* jnp.linalg.solve(a, b): a (..., m, m); b (m,) a vector, else (..., m, n); batch dims
 * broadcast. Through LU with partial pivoting (singular a: inf/NaN). */
jx_array *jx_linalg_solve(jx_array *a, jx_array *b);
/* jnp.linalg.inv(a): solve(a, I). */
jx_array *jx_linalg_inv(jx_array *a);
/* jnp.linalg.det(a) and slogdet(a) (sign, log|det|) through LU: (..., n, n) ->
 * (...); a singular a gives det 0, slogdet (0, -inf). */
jx_array *jx_linalg_det(jx_array *a);
jx_status jx_linalg_slogdet(jx_array *a, jx_array **sign, jx_array **logabsdet);

/* jax.scipy.linalg.cholesky(a, lower): L (lower) or U = L^T from one triangle of a
 * (no symmetrization: lower reads the lower half, upper the upper half). */
jx_array *jx_scipy_linalg_cholesky(jx_array *a, bool lower);
/* jax.scipy.linalg.cho_factor(a, lower): the factor c (the `lower` flag is the
 * caller's, as in SciPy's (c, lower) pair); cho_solve((c, lower), b): a x = b with
 * b (..., m, k) or (..., m), c's batch dims. */
jx_array *jx_scipy_linalg_cho_factor(jx_array *a, bool lower);
jx_array *jx_scipy_linalg_cho_solve(jx_array *c, bool lower, jx_array *b);
/* jax.scipy.linalg.solve_triangular(a, b, trans, lower, unit_diagonal): op(a) x = b
 * with op = identity (trans 0), transpose (1) or conjugate transpose (2; = 1 for real
 * dtypes); b (..., m, n) or a vector (one dim less than a). Bad trans: JX_ERR_VALUE. */
jx_array *jx_scipy_linalg_solve_triangular(jx_array *a, jx_array *b, int trans, bool lower, bool unit_diagonal);
/* jax.scipy.linalg.lu_factor(a) -> (lu, piv) and lu_solve((lu, piv), b, trans). */
jx_status jx_scipy_linalg_lu_factor(jx_array *a, jx_array **lu, jx_array **piv);
jx_array *jx_scipy_linalg_lu_solve(jx_array *lu, jx_array *piv, jx_array *b, int trans);
/* jax.scipy.linalg.lu(a, permute_l): out = (p, l, u) with a = p l u, p (..., m, m),
 * l (..., m, k) unit lower, u (..., k, n), k = min(m, n); with permute_l out = (p l, u). */
jx_status jx_scipy_linalg_lu(jx_array *a, bool permute_l, jx_array **out);

/* lax.linalg.qr(x, full_matrices): out = (q, r), x (..., m, n): q (..., m, k) with
 * orthonormal columns, r (..., k, n) upper triangular, k = m with full_matrices else
 * min(m, n). Householder (geqrf + orgqr): LAPACK's signs. */
jx_status jx_lax_linalg_qr(jx_array *x, bool full_matrices, jx_array **out);
/* lax.linalg.eigh(x, lower, symmetrize_input): out = (v, w): v (..., n, n) eigenvectors
 * as columns, w (..., n) ascending (syevd; always sorted). NaNs where LAPACK fails. */
jx_status jx_lax_linalg_eigh(jx_array *x, bool lower, bool symmetrize_input, jx_array **out);
/* lax.linalg.svd(x, full_matrices, compute_uv): out = (u, s, vt) with compute_uv, else
 * out[0] = s; s (..., k) descending, k = min(m, n); u (..., m, m or k), vt (..., n or k,
 * n). Divide and conquer (gesdd). The JVP of full_matrices=True for non-square x is
 * JX_ERR_UNSUPPORTED, as in JAX. */
jx_status jx_lax_linalg_svd(jx_array *x, bool full_matrices, bool compute_uv, jx_array **out);
/* jnp.linalg.qr(a, mode): mode NULL or "reduced": out = (q, r); "complete": full q;
 * "r": out[0] = r only. Other modes: JX_ERR_VALUE. */
jx_status jx_linalg_qr(jx_array *a, const char *mode, jx_array **out);
/* jnp.linalg.eigh(a, UPLO, symmetrize_input): out = (eigenvalues, eigenvectors); UPLO
 * NULL or "L" reads the lower half, "U" the upper (JX_ERR_VALUE otherwise). eigvalsh:
 * the eigenvalues only. */
jx_status jx_linalg_eigh(jx_array *a, const char *UPLO, bool symmetrize_input, jx_array **out);
jx_array *jx_linalg_eigvalsh(jx_array *a, const char *UPLO);
/* jnp.linalg.svd(a, full_matrices, compute_uv): out = (u, s, vh) or out[0] = s;
 * svdvals: s. */
jx_status jx_linalg_svd(jx_array *a, bool full_matrices, bool compute_uv, jx_array **out);
jx_array *jx_linalg_svdvals(jx_array *a);

/* jnp.linalg.norm(x, ord, axis, keepdims): ord as text: NULL (None), a number ("1",
 * "-2", "0.5"), "inf", "-inf", "fro" or "nuc"; naxes = 1 is a vector norm (ord 0, 1,
 * 2, inf, -inf, p), naxes = 2 a matrix norm (fro, nuc, 1, 2, inf, -1, -2, -inf; 2 and
 * nuc through singular values); axes NULL: the whole array (2-norm when ord is NULL,
 * else by its rank). Bad ord: JX_ERR_VALUE; bad axes: JX_ERR_SHAPE. */
jx_array *jx_linalg_norm(jx_array *x, const char *ord, int naxes, const int *axes, bool keepdims);
/* jnp.linalg.vector_norm(x, axis, keepdims, ord) (ord a number, INFINITY allowed;
 * axes NULL: the flattened array) and matrix_norm(x, keepdims, ord) (ord NULL: "fro"). */
jx_array *jx_linalg_vector_norm(jx_array *x, double ord, int naxes, const int *axes, bool keepdims);
jx_array *jx_linalg_matrix_norm(jx_array *x, const char *ord, bool keepdims);
/* jnp.linalg.cond(x, p): p NULL or "2": s_max / s_min; "-2": its inverse; other norms
 * (square x): norm(x, p) * norm(inv(x), p); NaN results become inf where x has no NaN. */
jx_array *jx_linalg_cond(jx_array *x, const char *p);
/* jnp.linalg.pinv(a, rtol) through the SVD: singular values <= rtol * s_max dropped;
 * rtol NAN means None (10 * max(m, n) * eps). Its derivative goes through svd's JVP
 * (JAX uses a custom JVP; they agree for full rank and distinct singular values). */
jx_array *jx_linalg_pinv(jx_array *a, double rtol);
/* jnp.linalg.lstsq(a, b, rcond): out = (x, residuals, rank, s) for a 2-d a (m, n) and
 * b (m,) or (m, k); rcond NAN means None (eps * max(m, n)); residuals always computed
 * (JAX's numpy_resid=False). */
jx_status jx_linalg_lstsq(jx_array *a, jx_array *b, double rcond, jx_array **out);
/* jnp.linalg.matrix_rank(M, rtol): singular values above rtol (NAN: s_max * max(m, n)
 * * eps); rank < 2 input: any nonzero. int32. */
jx_array *jx_linalg_matrix_rank(jx_array *M, double rtol);
/* jnp.linalg.matrix_power(a, n): n < 0 through inv; binary powering as JAX. */
jx_array *jx_linalg_matrix_power(jx_array *a, int64_t n);
/* jnp.linalg.multi_dot: the chain product in the cheapest order (first and last
 * operands may be 1-d). */
jx_array *jx_linalg_multi_dot(int n, jx_array *const *arrays);
/* jnp.linalg.cross (3-vectors along axis, other dims broadcast), outer (1-d only),
 * vecdot (sum of products along axis), tensordot (= jx_tensordot), matrix_transpose
 * (last two axes swapped), diagonal and trace of the last two axes (offset k). */
jx_array *jx_linalg_cross(jx_array *x1, jx_array *x2, int axis);
jx_array *jx_linalg_outer(jx_array *x1, jx_array *x2);
jx_array *jx_linalg_vecdot(jx_array *x1, jx_array *x2, int axis);
jx_array *jx_linalg_tensordot(jx_array *x1, jx_array *x2, int axes);
jx_array *jx_linalg_matrix_transpose(jx_array *x);
jx_array *jx_linalg_diagonal(jx_array *x, int64_t offset);
jx_array *jx_linalg_trace(jx_array *x, int64_t offset);
/* jnp.diagonal(a, offset, axis1, axis2) (the diagonal becomes the last axis) and
 * jnp.trace(a, offset, axis1, axis2) (its sum). Rank < 2 or bad axes: JX_ERR_SHAPE. */
jx_array *jx_diagonal(jx_array *a, int64_t offset, int axis1, int axis2);
jx_array *jx_trace(jx_array *a, int64_t offset, int axis1, int axis2);
/* jnp.kron(a, b): the Kronecker product (ranks aligned on the right). */
jx_array *jx_kron(jx_array *a, jx_array *b);

/* ------------------------------------------------------------------ io */
/* Array files. Readers take plain or gzip-compressed files (recognized by content, not
 * by name) and return arrays on the default device, with the file's dtype and shape;
 * 64-bit data follows the x64 mode (converted to 32 bits when it is off, as
 * jnp.asarray does). Malformed, truncated or corrupt files give JX_ERR_IO with a
 * message naming the function, the path and what is wrong; valid files jaxc cannot
 * represent (a dtype it lacks, more than JX_MAX_NDIM dims) give JX_ERR_UNSUPPORTED.
 * Writers report JX_ERR_IO for files they cannot write and remove what they wrote. */

/* Reads an IDX file (the MNIST / Fashion-MNIST format: bytes 00 00 <type> <ndim>,
 * ndim big-endian int32 dims, then big-endian data in C order). Type codes: 0x08
 * uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64. The data must
 * fill the file exactly (a short or a longer file is JX_ERR_IO). */
jx_array *jx_io_read_idx(const char *path);
/* Writes `a` as IDX, gzip-compressed when `gzip`. dtypes: uint8, int8, int16, int32,
 * float32, float64 (JX_ERR_DTYPE otherwise); dims above INT32_MAX: JX_ERR_SHAPE. */
jx_status jx_io_write_idx(const char *path, jx_array *a, bool gzip);

/* Writes n arrays as a safetensors file (huggingface.co/docs/safetensors): tensor i
 * is called names[i]; names must be distinct and not "__metadata__" (JX_ERR_VALUE).
 * dtypes map to BOOL, U8, I8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64. */
jx_status jx_io_save_safetensors(const char *path, int n, const char *const *names,
                                 jx_array *const *arrays);
/* Reads a safetensors file: *n tensors, in the order of the file's header, named
 * (*names)[i] with data (*arrays)[i]. Each array is a new reference (jx_free it, or
 * let the enclosing scope release it); the two lists are malloc'd: free the names with
 * jx_io_free_names(*n, *names) and the pointer list with free(*arrays). "__metadata__"
 * is checked and skipped. On error *n = 0 and both lists are NULL. Offsets are
 * validated as the format requires (in range, no overlaps or holes, byte counts equal
 * to dtype size * shape); FP8 and other dtypes jaxc lacks: JX_ERR_UNSUPPORTED. */
jx_status jx_io_load_safetensors(const char *path, int *n, char ***names,
                                 jx_array ***arrays);
/* Frees n names and their list, as returned by jx_io_load_safetensors (NULL is fine). */
void jx_io_free_names(int n, char **names);

/* Reads a NumPy .npy file (format versions 1-3; numpy.lib.format): dtypes bool,
 * int8..int64, uint8..uint64, float16, float32, float64, either byte order. A
 * Fortran-order file gives the transposed view of its data (no copy). */
jx_array *jx_io_load_npy(const char *path);
/* Writes `a` as .npy, byte for byte as np.save does (format 1.0, little-endian, C
 * order, data 64-byte aligned). bfloat16 has no NumPy dtype: JX_ERR_UNSUPPORTED. */
jx_status jx_io_save_npy(const char *path, jx_array *a);

/* ------------------------------------------------------------------ nn */
/* jax.nn (src/lib/nn.c), built from jx_ operations: every function works under jx_grad,
 * jx_vmap and jx_jit, and its derivative is JAX's (custom JVPs included: relu'(0) = 0,
 * relu6'(0) = relu6'(6) = 0, softplus'(0) = sigmoid(0); sigmoid, softplus, log_sigmoid,
 * logsumexp, softmax and log_softmax have finite gradients at large |x|).
 * Activations are elementwise and keep x's shape. Integer inputs follow JAX: relu,
 * hard_tanh and identity keep them; sigmoid, silu/swish and glu reject them
 * (JX_ERR_DTYPE, as lax.logistic does); the others compute in the default float dtype.
 * Scalar parameters are Python floats in JAX (weakly typed: x's dtype is kept).
 * NULL x: JX_ERR_VALUE (or the pending error). */
jx_array *jx_nn_relu(jx_array *x);          /* max(x, 0) */
jx_array *jx_nn_relu6(jx_array *x);         /* min(max(x, 0), 6) */
jx_array *jx_nn_sigmoid(jx_array *x);       /* 1 / (1 + exp(-x)) */
jx_array *jx_nn_softplus(jx_array *x);      /* log(1 + exp(x)) = logaddexp(x, 0) */
jx_array *jx_nn_sparse_plus(jx_array *x);   /* 0 | (x+1)^2/4 | x on (-inf,-1] (-1,1) [1,inf) */
jx_array *jx_nn_soft_sign(jx_array *x);     /* x / (|x| + 1) */
jx_array *jx_nn_silu(jx_array *x);          /* x * sigmoid(x) */
jx_array *jx_nn_swish(jx_array *x);         /* alias of jx_nn_silu */
jx_array *jx_nn_log_sigmoid(jx_array *x);   /* -softplus(-x) */
jx_array *jx_nn_leaky_relu(jx_array *x, double negative_slope); /* JAX default 0.01 */
jx_array *jx_nn_hard_sigmoid(jx_array *x);  /* relu6(x + 3) / 6 */
jx_array *jx_nn_hard_silu(jx_array *x);     /* x * hard_sigmoid(x) */
jx_array *jx_nn_hard_swish(jx_array *x);    /* alias of jx_nn_hard_silu */
jx_array *jx_nn_hard_tanh(jx_array *x);     /* clip(x, -1, 1) */
jx_array *jx_nn_elu(jx_array *x, double alpha);  /* x > 0 ? x : alpha (exp(x) - 1); JAX 1.0 */
jx_array *jx_nn_celu(jx_array *x, double alpha); /* max(x,0) + alpha expm1(min(x,0)/alpha) */
jx_array *jx_nn_selu(jx_array *x);          /* 1.0507... * elu(x, 1.6732...) */
/* gelu: approximate (JAX's default true): the tanh form; false: 0.5 x erfc(-x / sqrt 2). */
jx_array *jx_nn_gelu(jx_array *x, bool approximate);
/* glu: x1 * sigmoid(x2) with x split in two halves along axis (JAX default -1).
 * JX_ERR_SHAPE for a bad axis or an odd size. */
jx_array *jx_nn_glu(jx_array *x, int axis);
jx_array *jx_nn_squareplus(jx_array *x, double b); /* (x + sqrt(x^2 + b)) / 2; JAX b = 4 */
jx_array *jx_nn_mish(jx_array *x);          /* x * tanh(softplus(x)) */
jx_array *jx_nn_identity(jx_array *x);      /* x (a new reference) */

/* jax.nn.softmax / log_softmax(x, axis, where) over (naxes, axes) (NULL = all axes, as
 * in jx_sum; JAX's default is {-1}); stable (shifted by the max). `where` (NULL = none)
 * is a mask broadcastable to x (any dtype, nonzero = true): masked elements are left
 * out of the max and the sum and give 0 (softmax) or -inf (log_softmax); a fully
 * masked slice gives 0 / -inf everywhere. Integer x computes in the default float.
 * Errors: JX_ERR_SHAPE for bad or repeated axes or a mask that does not broadcast. */
jx_array *jx_nn_softmax(jx_array *x, int naxes, const int *axes, jx_array *where);
jx_array *jx_nn_log_softmax(jx_array *x, int naxes, const int *axes, jx_array *where);
/* jax.nn.logsumexp(x, axis, b, keepdims, where): log(sum(b * exp(x))) over (naxes,
 * axes), stable, with gradient softmax(x) even where exp(x) overflows. b (NULL = none)
 * scales the terms and must broadcast to x (JX_ERR_SHAPE); a negative sum gives NaN.
 * `where` as in jx_nn_softmax; a fully masked (or empty) slice gives -inf. */
jx_array *jx_nn_logsumexp(jx_array *x, int naxes, const int *axes, jx_array *b,
                          bool keepdims, jx_array *where);
/* jax.nn.one_hot(x, num_classes, dtype, axis): x == class, cast to dtype, with the
 * class axis of size num_classes inserted at `axis` of the result (JAX default -1).
 * Out-of-range indices give all zeros. Errors: JX_ERR_VALUE for num_classes < 0,
 * JX_ERR_DTYPE for bool x, JX_ERR_SHAPE for a bad axis. */
jx_array *jx_nn_one_hot(jx_array *x, int64_t num_classes, jx_dtype dtype, int axis);
/* jax.nn.standardize(x, axis, mean, variance, epsilon, where) with JAX's default
 * algorithm "fast": (x - mean) * rsqrt(variance + epsilon), mean = mean(x) and variance =
 * max(mean(x^2) - mean^2, 0) over (naxes, axes) with keepdims, each computed only when
 * its argument is NULL (given ones must broadcast to x's shape). `where` (NULL = none)
 * restricts the means to the masked elements. JAX's default epsilon is 1e-5. */
jx_array *jx_nn_standardize(jx_array *x, int naxes, const int *axes, jx_array *mean,
                            jx_array *variance, double epsilon, jx_array *where);
/* jax.nn.dot_product_attention(query, key, value, bias, mask, scale=, is_causal=), the
 * "xla" implementation: softmax(scale * Q K^T + bias, masked) V per head.
 * Shapes: query (B, T, N, H); key, value (B, S, K, H) with N a multiple of K (grouped-
 * query attention); rank-3 inputs drop B. bias and mask (NULL = none) have rank <= 4,
 * broadcasting to (B, N, T, S); mask is bool (true = attend). scale == 0 means JAX's
 * default 1/sqrt(H). is_causal keeps key s <= query t. Masked logits become
 * -0.7 * float32 max, as in JAX (a fully masked row attends uniformly). Logits are
 * computed in promote(dtype, float32), the softmax in float32, the result in the
 * inputs' dtype, shaped like query. Errors: JX_ERR_SHAPE for mismatched shapes,
 * JX_ERR_DTYPE for differing or non-float dtypes or a non-bool mask. */
jx_array *jx_nn_dot_product_attention(jx_array *query, jx_array *key, jx_array *value,
                                      jx_array *bias, jx_array *mask, double scale,
                                      bool is_causal);

/* ----------------------------------------------------------- tokenizers */
/* BERT's WordPiece tokenizer (src/lib/tokenizer.c; files: src/io/tokenizer_files.c),
 * equal token for token to Hugging Face `tokenizers` (BertNormalizer,
 * BertPreTokenizer, WordPiece, the [CLS] A [SEP] template). Steps: special tokens
 * ([CLS], [SEP], [MASK], ... the file's added tokens) are matched in the raw text; the
 * rest is cleaned (NUL, U+FFFD and control/format/private-use characters dropped, every
 * whitespace becomes a space), CJK ideographs get spaces around them, accents are
 * stripped (Unicode NFD, then nonspacing marks removed) and text is lower-cased (both
 * when the vocabulary is uncased), split on whitespace and around every punctuation
 * character (Unicode P* and ASCII symbols), and each word is split greedily,
 * longest match first, into vocabulary pieces with "##" continuations; a word with no
 * split, or longer than 100 characters, becomes [UNK]. Unicode data comes from
 * utf8proc. Invalid UTF-8 is decoded as U+FFFD (as Python's errors="replace" does),
 * which cleaning then removes: it is never an error. */
typedef struct jx_tokenizer jx_tokenizer;

/* Loads a tokenizer: a tokenizer.json (HF `tokenizers` format; model WordPiece with a
 * BertNormalizer), a vocab.txt (one token per line, id = line number; BERT uncased
 * options), or a folder holding either (tokenizer.json preferred). NULL on error:
 * JX_ERR_IO (unreadable or malformed file, naming path and problem),
 * JX_ERR_UNSUPPORTED (another model or normalizer type), JX_ERR_VALUE (a vocabulary
 * without its unknown token "[UNK]", or without [CLS] / [SEP]). */
jx_tokenizer *jx_tokenizer_load(const char *path);
void jx_tokenizer_free(jx_tokenizer *tok); /* NULL is fine */
/* Vocabulary size; the id of a token (-1 if absent); the token of an id (NULL if out of
 * range; owned by tok). */
int64_t jx_tokenizer_vocab_size(const jx_tokenizer *tok);
int32_t jx_tokenizer_token_to_id(const jx_tokenizer *tok, const char *token);
const char *jx_tokenizer_id_to_token(const jx_tokenizer *tok, int32_t id);
/* Encodes text[0..len) (bytes, NULs allowed) as [CLS] tokens... [SEP], truncated to
 * max_length ids (the last kept id is [SEP]; max_length >= 2) written to ids[], and
 * returns how many were written. *full_length (NULL = ignored) receives the length
 * without truncation, so full_length > result means the text was truncated. -1 on
 * error (NULL tok/text, max_length < 2: JX_ERR_VALUE; out of memory: JX_ERR_OOM). */
int64_t jx_tokenizer_encode(const jx_tokenizer *tok, const char *text, size_t len,
                            int64_t max_length, int32_t *ids, int64_t *full_length);
/* Encodes n texts (NUL-terminated) into int32 arrays (n, L) on the default device:
 * input_ids padded with [PAD]'s id (0 if absent) and attention_mask (1 for tokens, 0
 * for padding). L is the longest encoding (each truncated to max_length), rounded up to
 * a multiple of pad_to_multiple_of (<= 1: no rounding) but never above max_length.
 * *ntruncated (NULL = ignored) counts the texts that were cut. On error both outputs
 * are NULL (errors as jx_tokenizer_encode; n < 1: JX_ERR_VALUE). */
jx_status jx_tokenizer_encode_batch(const jx_tokenizer *tok, int n, const char *const *texts,
                                    int64_t max_length, int64_t pad_to_multiple_of,
                                    jx_array **input_ids, jx_array **attention_mask,
                                    int *ntruncated);

/* ------------------------------------------------------- more jax.numpy */
/* src/lib/numpy/extra.c, composed from the functions above (grad/vmap/jit-safe). Axis
 * lists as in jx_sum; NULL inputs give JX_ERR_VALUE naming the function. */
/* jnp.nansum / nanprod / nanmax / nanmin / nanmean: NaNs ignored (float inputs; others
 * as jx_sum ...); an all-NaN slice gives NaN for nanmax/nanmin/nanmean. */
jx_array *jx_nansum(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_nanprod(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_nanmax(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_nanmin(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_nanmean(jx_array *x, int naxes, const int *axes, bool keepdims);
/* jnp.nanvar / nanstd(ddof): count - ddof <= 0 gives NaN; ints give the default float. */
jx_array *jx_nanvar(jx_array *x, int naxes, const int *axes, int64_t ddof, bool keepdims);
jx_array *jx_nanstd(jx_array *x, int naxes, const int *axes, int64_t ddof, bool keepdims);
/* jnp.nanargmax / nanargmin(axis or JX_AXIS_NONE): an all-NaN slice gives -1. */
jx_array *jx_nanargmax(jx_array *x, int axis, bool keepdims);
jx_array *jx_nanargmin(jx_array *x, int axis, bool keepdims);
/* jnp.nancumsum / nancumprod(axis or JX_AXIS_NONE): NaNs count as 0 / 1. */
jx_array *jx_nancumsum(jx_array *x, int axis);
jx_array *jx_nancumprod(jx_array *x, int axis);
/* jnp.amax / amin (aliases of jx_max / jx_min); jnp.ptp = max - min. */
jx_array *jx_amax(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_amin(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_ptp(jx_array *x, int naxes, const int *axes, bool keepdims);
/* jnp.count_nonzero: default int dtype (NaN counts as nonzero). */
jx_array *jx_count_nonzero(jx_array *x, int naxes, const int *axes, bool keepdims);
/* jnp.average(x, axis, weights, keepdims): weights NULL = mean; weights of x's shape,
 * or 1-d along the one reduced axis (JX_ERR_SHAPE otherwise); promoted to inexact. */
jx_array *jx_average(jx_array *x, jx_array *weights, int naxes, const int *axes,
                     bool keepdims);
/* jnp.quantile / percentile(x, q, axis, method='linear') and jnp.median (midpoint): q
 * of rank <= 1 (JX_ERR_SHAPE), result q.shape + the reduced shape; a NaN in a slice
 * makes it NaN; axis JX_AXIS_NONE flattens; an empty axis is JX_ERR_VALUE. */
jx_array *jx_quantile(jx_array *x, jx_array *q, int axis, bool keepdims);
jx_array *jx_percentile(jx_array *x, jx_array *q, int axis, bool keepdims);
jx_array *jx_median(jx_array *x, int axis, bool keepdims);
/* jnp.diff(x, n, axis) (bool: not_equal; n < 0: JX_ERR_VALUE; 0-d: JX_ERR_SHAPE) and
 * jnp.ediff1d(x) (diff of the flattened x). */
jx_array *jx_diff(jx_array *x, int n, int axis);
jx_array *jx_ediff1d(jx_array *x);
/* jnp.trapezoid(y, x, dx, axis): x (NULL: spacing dx) 1-d along axis or y's shape. */
jx_array *jx_trapezoid(jx_array *y, jx_array *x, double dx, int axis);
/* jnp.isclose(a, b, rtol, atol, equal_nan) (JAX defaults 1e-5, 1e-8, false): bool;
 * ints compare exactly. allclose = all(isclose), a 0-d bool. */
jx_array *jx_isclose(jx_array *a, jx_array *b, double rtol, double atol, bool equal_nan);
jx_array *jx_allclose(jx_array *a, jx_array *b, double rtol, double atol, bool equal_nan);
/* jnp.array_equal (false for other shapes) / array_equiv (false unless they
 * broadcast): 0-d bool. */
jx_array *jx_array_equal(jx_array *a, jx_array *b, bool equal_nan);
jx_array *jx_array_equiv(jx_array *a, jx_array *b);
/* jnp.isposinf / isneginf: bool (all false for non-float x). */
jx_array *jx_isposinf(jx_array *x);
jx_array *jx_isneginf(jx_array *x);
/* jnp.degrees / radians (aliases), conj / conjugate / real (x itself for real dtypes),
 * imag (zeros), fabs (abs in an inexact dtype). */
jx_array *jx_degrees(jx_array *x);
jx_array *jx_radians(jx_array *x);
jx_array *jx_conj(jx_array *x);
jx_array *jx_conjugate(jx_array *x);
jx_array *jx_real(jx_array *x);
jx_array *jx_imag(jx_array *x);
jx_array *jx_fabs(jx_array *x);
/* jnp.sinc: sin(pi x) / (pi x), 1 at 0 (inexact). */
jx_array *jx_sinc(jx_array *x);
/* jnp.heaviside(x1, x2): 0 below 0, x2 at 0, 1 above (inexact, broadcast). */
jx_array *jx_heaviside(jx_array *x1, jx_array *x2);
/* jnp.float_power: power in the promoted inexact dtype. */
jx_array *jx_float_power(jx_array *x, jx_array *y);
/* jnp.logaddexp2: log2(2^x + 2^y), stable. */
jx_array *jx_logaddexp2(jx_array *x, jx_array *y);
/* jnp.divmod: out[0] floor_divide, out[1] remainder (both NULL on error). */
jx_status jx_divmod(jx_array *x, jx_array *y, jx_array **out);
/* jnp.modf: out[0] = x - trunc(x), out[1] = trunc(x) (inexact). */
jx_status jx_modf(jx_array *x, jx_array **out);
/* jnp.nan_to_num(x, nan, posinf, neginf); NAN posinf/neginf mean the dtype's extremes
 * (JAX's None). Non-float x is returned as is. */
jx_array *jx_nan_to_num(jx_array *x, double nan, double posinf, double neginf);
/* jnp.atleast_1d / 2d / 3d of one array (NumPy's placement of the new axes). */
jx_array *jx_atleast_1d(jx_array *x);
jx_array *jx_atleast_2d(jx_array *x);
jx_array *jx_atleast_3d(jx_array *x);
/* jnp.hstack / vstack / dstack / column_stack of n (1..4096) arrays. */
jx_array *jx_hstack(int n, jx_array *const *xs);
jx_array *jx_vstack(int n, jx_array *const *xs);
jx_array *jx_dstack(int n, jx_array *const *xs);
jx_array *jx_column_stack(int n, jx_array *const *xs);
/* jnp.flipud (axis 0) / fliplr (axis 1; rank >= 2 else JX_ERR_SHAPE). */
jx_array *jx_flipud(jx_array *x);
jx_array *jx_fliplr(jx_array *x);
/* jnp.rot90(x, k, axes=(a0, a1)); JAX's default axes (0, 1). Bad axes: JX_ERR_SHAPE. */
jx_array *jx_rot90(jx_array *x, int k, int a0, int a1);
/* jnp.append(arr, values, axis); JX_AXIS_NONE flattens both. */
jx_array *jx_append(jx_array *arr, jx_array *values, int axis);
/* jnp.resize(a, new_shape): a's elements repeated cyclically (zeros for an empty a);
 * negative dims: JX_ERR_VALUE. */
jx_array *jx_resize(jx_array *a, int ndim, const int64_t *shape);
/* ------------------------------------------------------------------ lax */
/* jax.lax functions built from primitives (src/lib/lax.c, lax_conv.c); all of them are
 * differentiable and batchable through their primitives, and jit-compatible. */

/* lax.dot_general(lhs, rhs, ((lhs_contracting, rhs_contracting), (lhs_batch,
 * rhs_batch))): paired axes must have equal sizes; axes may be negative and may not
 * repeat within an operand. Result dims: batch, lhs free, rhs free (lax's order).
 * Operands promote (JAX rules; the result has the promoted dtype, as with
 * preferred_element_type=None); float16/bfloat16 accumulate in float32, bool is an or
 * of ands. Errors: JX_ERR_SHAPE for bad or mismatched axes, JX_ERR_VALUE for NULL. */
jx_array *jx_lax_dot_general(jx_array *lhs, jx_array *rhs, int ncontract,
                             const int *lhs_contracting, const int *rhs_contracting,
                             int nbatch, const int *lhs_batch, const int *rhs_batch);
/* jnp.einsum(subscripts, *operands) in NumPy's syntax: terms of letters a-z A-Z with at
 * most one "..." each, separated by ',', optional "->output" (spaces ignored). Without
 * "->" the output is the ellipsis dims, then the letters used once in ASCII order.
 * Repeated letters in a term take a diagonal; letters absent from the output are
 * summed; size-1 dims broadcast. Lowered to diagonals (strided slices), reduce_sum and
 * a left-to-right chain of dot_generals. Operands promote together (JAX rules).
 * Errors: JX_ERR_VALUE for malformed subscripts or a term count != n, JX_ERR_SHAPE
 * for terms that do not fit their operands or labels with conflicting sizes. */
jx_array *jx_einsum(const char *subscripts, int n, jx_array *const *operands);

/* Padding of a windowed op: explicit (lo, hi) pairs -- a `pads` array of 2 * nspatial
 * entries lo0, hi0, lo1, hi1, ...; negative amounts crop -- or one of JAX's strings:
 * VALID (none), SAME (output extent ceil(in / stride), odd padding's extra element at
 * the end), SAME_LOWER (extra element at the start). pads is ignored unless EXPLICIT. */
typedef enum jx_padding {
  JX_PADDING_EXPLICIT,
  JX_PADDING_VALID,
  JX_PADDING_SAME,
  JX_PADDING_SAME_LOWER
} jx_padding;

/* Rarely used options of a convolution; NULL, or a zero-initialized struct, gives
 * JAX's defaults. Arrays have nspatial entries. */
typedef struct jx_conv_options {
  const int64_t *lhs_dilation; /* NULL: all 1 (interior spacing of the input) */
  const int64_t *rhs_dilation; /* NULL: all 1 (atrous kernel spacing) */
  /* Dimension numbers as lax's strings, all three or none: lhs and out contain 'N'
   * (batch) and 'C' (features), rhs 'O' and 'I', and each the same spatial letters
   * ("NCHW", "OIHW", "NCHW"; "NHWC", "HWIO", "NHWC"). Spatial dims pair up in the
   * order of rhs_spec; strides, dilations and pads follow that order. NULL: "NC...",
   * "OI...", "NC..." (conv_transpose: "NHWC"-style; see there). */
  const char *lhs_spec, *rhs_spec, *out_spec;
  int64_t feature_group_count; /* 0 means 1: features split group-major */
  int64_t batch_group_count;   /* 0 means 1: the lhs batch splits group-major */
} jx_conv_options;

/* lax.conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation,
 * rhs_dilation, dimension_numbers, feature_group_count, batch_group_count): an n-d
 * convolution (cross-correlation, as XLA's) of lhs (N, C, spatial...) with rhs (O, I,
 * window...) giving (N / batch_group_count, O, out...), in the layouts the options
 * name. lhs and rhs have rank nspatial + 2 and one dtype; window_strides (NULL: 1) has
 * nspatial entries. Output extent per spatial dim: max(0, floor((dilated input + lo +
 * hi - dilated window) / stride) + 1); SAME/VALID are computed on the undilated input
 * and the dilated window (and are an error with lhs dilation, as in JAX). Computed as
 * one dot_general of the stacked window taps (strided-slice views) with the kernel;
 * float16/bfloat16 accumulate in float32. Errors: JX_ERR_SHAPE for ranks or feature /
 * group counts that do not fit, JX_ERR_DTYPE for differing dtypes, JX_ERR_VALUE for
 * bad dimension numbers, strides or dilations < 1, NULL arguments. */
jx_array *jx_lax_conv_general_dilated(jx_array *lhs, jx_array *rhs, int nspatial,
                                      const int64_t *window_strides, jx_padding padding,
                                      const int64_t *pads, const jx_conv_options *options);
/* lax.conv(lhs, rhs, window_strides, padding): NC.../OI... layouts, no dilation. */
jx_array *jx_lax_conv(jx_array *lhs, jx_array *rhs, int nspatial,
                      const int64_t *window_strides, jx_padding padding,
                      const int64_t *pads);
/* lax.conv_transpose(lhs, rhs, strides, padding, rhs_dilation, dimension_numbers,
 * transpose_kernel): a convolution with unit strides of lhs dilated by `strides`. SAME
 * and VALID give the padding of the forward conv's gradient (_conv_transpose_padding);
 * explicit pads are the transposed conv's own (use_consistent_padding=False). Default
 * layouts (NULL specs) are TensorFlow's: "NC"/"IO"/"NC", "NHC"/"HIO"/"NHC",
 * "NHWC"/"HWIO"/"NHWC", "NHWDC"/"HWDIO"/"NHWDC" for 0-3 spatial dims. transpose_kernel
 * flips the kernel's spatial dims and swaps its O and I (Keras' Conv2DTranspose).
 * options: only rhs_dilation and the specs apply (others JX_ERR_VALUE). */
jx_array *jx_lax_conv_transpose(jx_array *lhs, jx_array *rhs, int nspatial,
                                const int64_t *strides, jx_padding padding,
                                const int64_t *pads, bool transpose_kernel,
                                const jx_conv_options *options);

/* The reduction of a windowed op; its init value is the identity (0, 1, -inf or the
 * dtype's lowest, +inf or the dtype's highest), as lax.reduce_window_{sum,max,min}. */
typedef enum jx_window_op {
  JX_WINDOW_SUM,
  JX_WINDOW_PROD,
  JX_WINDOW_MAX,
  JX_WINDOW_MIN
} jx_window_op;
/* lax.reduce_window(x, identity, op, window_dimensions, window_strides, padding,
 * base_dilation, window_dilation): every array has ndim(x) entries (NULL strides and
 * dilations: 1); padding and base-dilation gaps hold the identity; SAME/VALID are
 * computed on the undilated operand and the dilated window. NaN propagates through
 * max/min. sum/prod need a numeric dtype (JX_ERR_DTYPE); max/min of bool are or/and.
 * Built as a reduction over the stacked window taps (strided-slice views). */
jx_array *jx_lax_reduce_window(jx_array *x, jx_window_op op,
                               const int64_t *window_dimensions,
                               const int64_t *window_strides, jx_padding padding,
                               const int64_t *pads, const int64_t *base_dilation,
                               const int64_t *window_dilation);
/* flax.linen.max_pool / avg_pool: x is (batch..., spatial..., features) with nspatial
 * spatial dims before the last (NHWC for images); window_shape and strides (NULL: 1)
 * have nspatial entries, pads 2 * nspatial. max_pool pads with -inf (ints: the lowest
 * value). avg_pool divides the window sum by the window size (count_include_pad) or by
 * the number of non-padding elements (flax: the result is then promoted with the
 * default float); integer inputs give floats. The gradient of a max at tied elements
 * is shared evenly among them (reduce_max's JVP); JAX's goes to one of them. */
jx_array *jx_lax_max_pool(jx_array *x, int nspatial, const int64_t *window_shape,
                          const int64_t *strides, jx_padding padding, const int64_t *pads);
jx_array *jx_lax_avg_pool(jx_array *x, int nspatial, const int64_t *window_shape,
                          const int64_t *strides, jx_padding padding, const int64_t *pads,
                          bool count_include_pad);

/* ---- Control flow (jax.lax.cond / jax.lax.switch). Branches are jx_fn callbacks
 * (jx_fn_new: an impl with a context pointer, or any transformed/jitted jx_fn) taking
 * the nops operands and giving the same number of outputs. Each branch is traced once
 * on abstract values of the operands' types into a sub-program, and the choice is one
 * `cond` equation: under jit it stays in the compiled program and the branch is picked
 * at run time; jvp/grad/vjp differentiate every branch (JAX's rules), and vmap with a
 * batched index runs every branch and selects per lane (lax.select_n), an unbatched
 * index stays a cond. out[] receives jx_fn_nout(branch) new references.
 * Errors: JX_ERR_SHAPE/JX_ERR_DTYPE for a non-scalar or non-integer index or for
 * branches whose outputs differ in shape or dtype (the message names output, both
 * types and both branches); JX_ERR_VALUE for arity mismatches or NULLs;
 * JX_ERR_UNSUPPORTED for more than 16 branches or a branch that closes over a traced
 * value of an enclosing transformation (pass it as an operand).
 *
 * lax.switch(index, branches, *operands): runs branches[clamp(index, 0, n-1)]; index
 * is an integer scalar. With one branch it is called directly (as JAX). */
jx_status jx_lax_switch(jx_array *index, int nbranches, jx_fn *const *branches, int nops,
                        jx_array *const *operands, jx_array **out);
/* lax.cond(pred, true_fun, false_fun, *operands): pred is a bool or numeric scalar
 * (nonzero is true). Example (README "Control flow"):
 *   jx_array *out[1];
 *   jx_lax_cond(p, f_sin, f_cos, 1, (jx_array *[]){x}, out);  // sin(x) if p else cos(x) */
jx_status jx_lax_cond(jx_array *pred, jx_fn *true_fn, jx_fn *false_fn, int nops,
                      jx_array *const *operands, jx_array **out);

/* lax.cumsum / cumprod / cummax / cummin(x, axis, reverse): inclusive scans along axis
 * (negative counts from the end), same dtype and shape; numeric dtypes only
 * (JX_ERR_DTYPE for bool). Log-step (Hillis-Steele) scans of pad/slice views and one
 * elementwise op per step: O(n log n) work, ceil(log2 n) steps. NaN propagates. */
jx_array *jx_lax_cumsum(jx_array *x, int axis, bool reverse);
jx_array *jx_lax_cumprod(jx_array *x, int axis, bool reverse);
jx_array *jx_lax_cummax(jx_array *x, int axis, bool reverse);
jx_array *jx_lax_cummin(jx_array *x, int axis, bool reverse);
/* jnp.cumsum / cumprod(x, axis): JX_AXIS_NONE (or a 0-d x) flattens; bool accumulates
 * in the default int dtype; the result is strongly typed. */
jx_array *jx_cumsum(jx_array *x, int axis);
jx_array *jx_cumprod(jx_array *x, int axis);

/* lax.dynamic_slice(x, start_indices, slice_sizes): start_indices holds ndim(x) 0-d
 * integer arrays (traced values are fine); a negative start counts from the end once,
 * then each start is clamped to [0, dim - size], as JAX and XLA do: the slice is
 * always in bounds. slice_sizes in [0, dim] (JX_ERR_SHAPE otherwise). */
jx_array *jx_lax_dynamic_slice(jx_array *x, jx_array *const *start_indices,
                               const int64_t *slice_sizes);
/* lax.dynamic_update_slice(x, update, start_indices): x with the box at the (wrapped,
 * clamped) starts replaced by update, which has x's rank and dtype (JX_ERR_DTYPE) and
 * fits inside x (JX_ERR_SHAPE). */
jx_array *jx_lax_dynamic_update_slice(jx_array *x, jx_array *update,
                                      jx_array *const *start_indices);
/* lax.select_n(which, *cases): cases[which] elementwise. cases share one shape and
 * dtype; which is bool (n <= 2: false picks cases[0]) or an integer, 0-d or of the
 * cases' shape; out-of-range values pick the first or last case (XLA's lowering). */
jx_array *jx_lax_select_n(jx_array *which, int n, jx_array *const *cases);

/* lax.RoundingMethod (same values as JAX's). */
typedef enum jx_rounding_method {
  JX_ROUNDING_AWAY_FROM_ZERO = 0,
  JX_ROUNDING_TO_NEAREST_EVEN = 1
} jx_rounding_method;
/* lax.round(x, rounding_method): floating x only (JX_ERR_DTYPE). */
jx_array *jx_lax_round(jx_array *x, jx_rounding_method method);

/* lax.erf, lax.erfc: the error function and its complement (jax.scipy.special.erf).
 * lax.erf_inv: its inverse on (-1, 1), +-inf at +-1, NaN outside, computed as XLA does
 * (Giles' single/double precision polynomials in w = -log1p(-x^2); "Approximating the
 * erfinv function", GPU Computing Gems, 2011) in one fused vector kernel: within a few
 * float32 ulps of JAX's (which fuses multiply-adds); its gradient is that of the
 * approximation. Floating x only (JX_ERR_DTYPE otherwise);
 * float16/bfloat16 are computed in float32. Accuracy of erf/erfc in docs/api.md. */
jx_array *jx_lax_erf(jx_array *x);
jx_array *jx_lax_erfc(jx_array *x);
jx_array *jx_lax_erf_inv(jx_array *x);

/* Out-of-bounds index modes of gathers (JAX's GatherScatterMode / jnp's mode=). */
typedef enum jx_index_mode {
  JX_INDEX_FILL,              /* "fill" (JAX's default): out-of-range reads give the fill
                                 value: NaN, the lowest signed / highest unsigned int, true */
  JX_INDEX_CLIP,              /* "clip": indices clamp into range */
  JX_INDEX_PROMISE_IN_BOUNDS  /* "promise_in_bounds": no wrapping; jaxc clamps */
} jx_index_mode;
/* jnp.take_along_axis(arr, indices, axis, mode): indices have arr's rank and broadcast
 * against it off `axis` (JX_AXIS_NONE: arr flattened, indices 1-d); negative indices
 * count from the end once (except PROMISE_IN_BOUNDS). JX_ERR_DTYPE for non-integer
 * indices, JX_ERR_SHAPE for shapes that do not fit. */
jx_array *jx_take_along_axis(jx_array *arr, jx_array *indices, int axis, jx_index_mode mode);

/* ------------------------------------------- indexed updates and more sorting */
/* (Declared here rather than with jx_sort: they use jx_index_mode.)
 * JAX's x.at[idx].op(y) for an integer index array along one axis (x.at[idx] for axis 0,
 * x.at[:, idx] for axis 1, ...): y broadcasts to the gathered shape x.shape[:axis] +
 * idx.shape + x.shape[axis+1:] and is converted to x's dtype; the result has x's dtype
 * and weak type. Negative indices wrap once (idx + n); mode JX_INDEX_FILL is JAX's
 * default "drop" (updates still out of range are ignored), JX_INDEX_CLIP (and
 * PROMISE_IN_BOUNDS) clamp them into range. at_set with duplicate indices: the last
 * occurrence wins (what JAX on CPU does; JAX documents it as unspecified), and the
 * gradient reaches only that update. at_mul/min/max combine every update of a position
 * (O(n*m) work for n positions and m indices). Differentiable, batchable, jittable.
 * JX_ERR_DTYPE for non-integer idx, JX_ERR_SHAPE for a 0-d x, a bad axis or a y that does
 * not broadcast, JX_ERR_VALUE for NULL arguments or an unknown mode. */
jx_array *jx_at_add(jx_array *x, jx_array *idx, jx_array *y, int axis, jx_index_mode mode);
jx_array *jx_at_set(jx_array *x, jx_array *idx, jx_array *y, int axis, jx_index_mode mode);
jx_array *jx_at_mul(jx_array *x, jx_array *idx, jx_array *y, int axis, jx_index_mode mode);
jx_array *jx_at_min(jx_array *x, jx_array *idx, jx_array *y, int axis, jx_index_mode mode);
jx_array *jx_at_max(jx_array *x, jx_array *idx, jx_array *y, int axis, jx_index_mode mode);
/* jnp.lexsort(keys, axis): indices (default int) that sort by the n keys (same shape,
 * n >= 1), the LAST key primary, stable, JAX's total order per key. */
jx_array *jx_lexsort(int n, jx_array *const *keys, int axis);
/* lax.top_k(x, k) along the last axis: the k largest (values, x's dtype) and their
 * positions (int32), descending, ties keeping the lower index first. Floats are ordered
 * as JAX's top_k orders them: IEEE total order (NaN > +inf, +0.0 > -0.0, -NaN lowest).
 * The gradient of values flows to the selected elements. 0 <= k <= x.shape[-1] and
 * x at least 1-d (JX_ERR_VALUE / JX_ERR_SHAPE). Either output pointer may be NULL. */
jx_status jx_top_k(jx_array *x, int64_t k, jx_array **values, jx_array **indices);
/* jnp.searchsorted(a, v, side): for each v the insertion position (int32, v's shape) in
 * the 1-d ascending a: count of a < v (left) or a <= v (side_right), with jnp.sort's
 * order (-0.0 == 0.0, NaN last). a and v promote together. */
jx_status jx_searchsorted(jx_array *a, jx_array *v, bool side_right, jx_array **out);
/* jnp.unique(x, size=size, fill_value=fill_value, return_index, return_inverse,
 * return_counts) of the flattened x: the sorted unique values (NaNs count as one,
 * -0.0 == 0.0 keeping the first in sorted order) as `size` entries -- truncated, or
 * padded with fill_value (NULL: the smallest value, as JAX). size < 0 means no static
 * size: the exact count, read from the data (eager only; JX_ERR_VALUE under a trace).
 * Optional outputs (NULL to skip): indices of first occurrences (padded as JAX: the
 * smallest value's), inverse (x's shape: each element's position in values), counts
 * (padded with 0); all in the default int dtype. */
jx_status jx_unique(jx_array *x, int64_t size, jx_array *fill_value, jx_array **values,
                    jx_array **indices, jx_array **inverse, jx_array **counts);

/* --------------------------------------------------------------- random */
/* jax.random with JAX's default PRNG (threefry2x32, jax_threefry_partitionable on, as
 * in current JAX): same key, same shape, same dtype give the same bits as JAX. Keys are
 * JAX's raw (legacy) keys: uint32 arrays of shape (2,), as jax.random.PRNGKey returns.
 * To draw with a batch of keys, map over them with jx_vmap (jx_random_split,
 * jx_random_fold_in and jx_random_bits also take a batch (..., 2) directly). Every
 * function is built from primitives: it works under jx_jit and jx_vmap.
 * Common errors: a NULL key or argument is JX_ERR_VALUE; a key that is not uint32 is
 * JX_ERR_DTYPE and one not of shape (2,) JX_ERR_SHAPE; shapes as for jx_zeros (ndim in
 * [0, JX_MAX_NDIM], dims >= 0; shape may be NULL when ndim is 0); a dtype of the wrong
 * kind is JX_ERR_DTYPE. dtype is canonicalized first (x64 off: float64 -> float32,
 * int64 -> int32, uint64 -> uint32), exactly as JAX does. Messages name the function.
 * Accuracy against JAX on the CPU (tests/lib/test_random.c): keys, bits, uniform,
 * randint, bernoulli, categorical, permutation, choice and, in float32/bfloat16/float16,
 * normal, gumbel, exponential, laplace, logistic and truncated_normal are bit for bit
 * (jaxc repeats XLA's float32 log/log1p and fused multiply-adds); cauchy is within 1
 * ulp (tan), float64 samplers within a few float64 ulps, multivariate_normal within a
 * few float32 ulps (LAPACK's Cholesky orders its sums differently). */

/* jax.random.PRNGKey(seed): [seed >> 32, seed & 0xFFFFFFFF]. With x64 off JAX first
 * converts the seed to int32, so the key is [0, seed mod 2^32]. */
jx_array *jx_random_key(uint64_t seed);
/* jax.random.split(key, num): num new keys, shape (num, 2) (key batch (..., 2):
 * (..., num, 2)). num < 0: JX_ERR_SHAPE. */
jx_array *jx_random_split(jx_array *key, int64_t num);
/* jax.random.fold_in(key, data): a new key (same shape as key) mixing in data. */
jx_array *jx_random_fold_in(jx_array *key, uint32_t data);
/* jax.random.bits(key, shape, dtype): uniform bits; dtype uint8/uint16/uint32/uint64
 * (others: JX_ERR_DTYPE). Key batch (..., 2): result (...) + shape. At most 2^32
 * elements (JX_ERR_UNSUPPORTED). */
jx_array *jx_random_bits(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
/* jax.random.uniform(key, shape, dtype, minval, maxval): floats in [minval, maxval)
 * from random mantissa bits (bfloat16 uses 8 random bits, 7 of them kept). float dtypes
 * only. As in JAX, minval >= maxval is not an error: the result is then minval
 * (max(minval, u * (maxval - minval) + minval)); NaN bounds give NaN. The bits are
 * those of JAX's eager call (under jax.jit with constant bounds whose difference rounds
 * to exactly 1, XLA reassociates the arithmetic and the last bit can differ). */
jx_array *jx_random_uniform(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                            double minval, double maxval);
/* jax.random.normal(key, shape, dtype): sqrt(2) * erf_inv(u), u uniform in
 * [nextafter(-1, 0), 1), with XLA's erf_inv approximation (not Box-Muller). */
jx_array *jx_random_normal(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
/* jax.random.randint(key, shape, minval, maxval, dtype): integers in [minval, maxval)
 * by JAX's modulus method on two split keys (dtypes under 32 bits sample in int32 with
 * the bounds clipped to the dtype; maxval may be dtype max + 1). maxval <= minval gives
 * minval. Integer dtypes only (JX_ERR_DTYPE); bounds outside the default int dtype
 * (int32 with x64 off) are JX_ERR_VALUE, as JAX raises OverflowError. */
jx_array *jx_random_randint(jx_array *key, int ndim, const int64_t *shape, int64_t minval,
                            int64_t maxval, jx_dtype dtype);
/* jax.random.bernoulli(key, p, shape): bool array, uniform(default float) < p. */
jx_array *jx_random_bernoulli(jx_array *key, double p, int ndim, const int64_t *shape);
/* jax.random.categorical(key, logits, axis): argmax over `axis` of logits + Gumbel
 * noise; the default int dtype, shape logits.shape without `axis`. logits must be
 * float (JX_ERR_DTYPE) with at least one axis; a bad axis is JX_ERR_SHAPE. */
jx_array *jx_random_categorical(jx_array *key, jx_array *logits, int axis);
/* jax.random.gumbel / exponential / laplace / logistic / cauchy(key, shape, dtype),
 * float dtypes: -log(-log(u)) (JAX's default mode "low"), -log1p(-u),
 * sign(u) * log1p(-|u|), log(u) - log1p(-u), tan(pi * (u - 0.5)), with u uniform over
 * JAX's ranges. */
jx_array *jx_random_gumbel(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_random_exponential(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_random_laplace(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_random_logistic(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_random_cauchy(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
/* jax.random.truncated_normal(key, lower, upper, shape, dtype): normal values in the
 * open interval (lower, upper) (infinite bounds allowed), by inverting the CDF between
 * erf(lower / sqrt 2) and erf(upper / sqrt 2). */
jx_array *jx_random_truncated_normal(jx_array *key, double lower, double upper, int ndim,
                                     const int64_t *shape, jx_dtype dtype);
/* jax.random.permutation(key, x, axis, independent): x shuffled along `axis` (whole
 * slices move together unless `independent`, which shuffles each 1-d slice on its
 * own), by JAX's rounds of sorting by random keys; x == NULL permutes range(n) (the
 * default int dtype). JX_ERR_SHAPE for a 0-d x or a bad axis, JX_ERR_VALUE for n < 0. */
jx_array *jx_random_permutation(jx_array *key, jx_array *x, int64_t n, int axis,
                                bool independent);
/* jax.random.choice(key, a, shape, replace, p) along axis 0: samples of a (ndim >= 1;
 * result shape + a.shape[1:], a's dtype), or of range(n) when a is NULL (default int
 * dtype). p (NULL: uniform) is a 1-d array of a.shape[0] (or n) weights, not
 * necessarily normalized (JX_ERR_SHAPE otherwise). With replacement: inverse CDF of p;
 * without: the head of a permutation, or with p the Gumbel top-k trick. With no draws
 * the result is zeros of `shape`, as JAX's. JX_ERR_VALUE for an empty population or,
 * without replacement, more draws than items. */
jx_array *jx_random_choice(jx_array *key, jx_array *a, int64_t n, int ndim,
                           const int64_t *shape, bool replace, jx_array *p);
/* jax.random.multivariate_normal(key, mean, cov, shape, dtype, method='cholesky'):
 * mean + L z with L the lower Cholesky factor of cov and z standard normal of `dtype`
 * (float; JAX's default is mean's dtype). mean (..., n) and cov (..., n, n) positive
 * definite (else NaNs) are promoted to a float dtype together; ndim < 0 means
 * shape=None (the broadcast of the batch shapes of mean and cov). Result shape: shape +
 * (n,); dtype: that of mean + L z. Shape mismatches: JX_ERR_SHAPE; n > 256:
 * JX_ERR_UNSUPPORTED (the factorization is unrolled). */
jx_array *jx_random_multivariate_normal(jx_array *key, jx_array *mean, jx_array *cov, int ndim,
                                        const int64_t *shape, jx_dtype dtype);

/* ------------------------------------------------------- nn.initializers */
/* jax.nn.initializers (src/lib/nn.c): init(key, shape, dtype) of each initializer, with
 * the factory's parameters as trailing arguments, drawing with jx_random_* exactly as
 * JAX does (same bits for the same key). key is a jx_random_key (unused, may be NULL,
 * for zeros/ones/constant); dtype must be floating (JX_ERR_DTYPE); shape errors as for
 * jx_zeros. delta_orthogonal is not provided yet. */
jx_array *jx_nn_init_zeros(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
/* orthogonal(scale, column_axis): scale * Q of the QR of a normal draw (JAX's recipe,
 * R's diagonal made positive), reshaped so column_axis holds the columns. ndim >= 2
 * (JX_ERR_SHAPE); the key must be concrete (JX_ERR_VALUE under jit/vmap/grad): the QR
 * runs on the host in float64 (Gram-Schmidt twice), so values agree with JAX's LAPACK
 * float32 QR to a few ulps. */
jx_array *jx_nn_init_orthogonal(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                                double scale, int column_axis);
jx_array *jx_nn_init_ones(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_nn_init_constant(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                              double value);
/* uniform(scale): U[0, scale); normal(stddev); truncated_normal(stddev, lower, upper):
 * stddev * a standard normal truncated to (lower, upper). JAX's defaults: scale 0.01,
 * stddev 0.01, lower -2, upper 2. */
jx_array *jx_nn_init_uniform(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                             double scale);
jx_array *jx_nn_init_normal(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                            double stddev);
jx_array *jx_nn_init_truncated_normal(jx_array *key, int ndim, const int64_t *shape,
                                      jx_dtype dtype, double stddev, double lower,
                                      double upper);
/* variance_scaling(scale, mode, distribution, in_axis, out_axis): variance = scale / n
 * with n the fan in, fan out, their mean or their geometric mean, where fan_in =
 * shape[in_axis] * receptive field and fan_out = shape[out_axis] * receptive field
 * (receptive field: the product of the other dims). Distributions: truncated normal in
 * (-2, 2) scaled to that variance, normal, or uniform in [-sqrt(3 variance),
 * sqrt(3 variance)). Errors: JX_ERR_SHAPE for a bad axis (JAX's default in_axis -2
 * needs ndim >= 2), JX_ERR_VALUE for a zero fan or a bad mode/distribution. */
typedef enum jx_nn_fan_mode {
  JX_NN_FAN_IN,
  JX_NN_FAN_OUT,
  JX_NN_FAN_AVG,
  JX_NN_FAN_GEO_AVG
} jx_nn_fan_mode;
typedef enum jx_nn_distribution {
  JX_NN_TRUNCATED_NORMAL,
  JX_NN_NORMAL,
  JX_NN_UNIFORM
} jx_nn_distribution;
jx_array *jx_nn_init_variance_scaling(jx_array *key, int ndim, const int64_t *shape,
                                      jx_dtype dtype, double scale, jx_nn_fan_mode mode,
                                      jx_nn_distribution distribution, int in_axis,
                                      int out_axis);
/* The named variance-scaling initializers with JAX's default axes (in -2, out -1):
 * glorot (xavier) = (1, fan_avg), he (kaiming) = (2, fan_in), lecun = (1, fan_in);
 * _uniform uses the uniform distribution, _normal the truncated normal. */
jx_array *jx_nn_init_glorot_uniform(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_nn_init_glorot_normal(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_nn_init_he_uniform(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_nn_init_he_normal(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_nn_init_lecun_uniform(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_nn_init_lecun_normal(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);

/* ---------------------------------------------------------------- optax */
/* optax (src/lib/optax*.c) over a flat list of n parameter arrays (optax's pytree is
 * the list). Three opaque, refcounted objects, each freed with its _free function (NULL
 * is fine); constructors take their own references to the objects they are given:
 *  jx_optax_schedule   a learning-rate schedule: step count -> value;
 *  jx_optax_transform  a gradient transformation (immutable; optax's
 *                      GradientTransformation);
 *  jx_optax_state      its state for n parameters: a flat list of ordinary jx_arrays.
 * Numerics follow optax 0.2 exactly (same formulas and operation order; Python floats
 * are weak scalars). Constructors return NULL with JX_ERR_VALUE for bad hyper-parameters
 * (non-finite values; b1, b2 outside [0, 1); decay outside [0, 1]; negative eps,
 * momentum or accumulator; max_norm <= 0; NULL schedules or transforms).
 *
 * Training loop:
 *   jx_optax_transform *tx = jx_optax_adam(1e-3, 0.9, 0.999, 1e-8);
 *   jx_optax_state *st = jx_optax_init(tx, 2, params);      // params: {W, b}
 *   ... grads from jx_grad ...
 *   jx_array *upd[2], *next[2];
 *   jx_optax_update(tx, st, 2, grads, params, upd);          // st now holds the new state
 *   jx_optax_apply_updates(2, params, upd, next);            // next = params + upd
 * Jitting a step: jx_optax_update_fn(tx, n) is update() as a jx_fn over (grads, state
 * arrays, params) -> (updates, new state arrays), to compose with jx_jit (or call it
 * inside your own jitted function); jx_optax_state_arrays / jx_optax_state_from_arrays
 * move a state in and out of such functions.
 *
 * STATE LAYOUT: the arrays of every stateful transform, in chain order (depth first);
 * per transform, for n parameters: trace (sgd momentum): trace[n]; scale_by_adam:
 * count, mu[n], nu[n]; scale_by_rms: nu[n]; scale_by_rss (adagrad): sum_of_squares[n];
 * a schedule-driven step (the _sched optimizers, scale_by_schedule): count; all others
 * none. count is a 0-d int32 array (optax's, saturating at INT32_MAX); the others have
 * their parameter's shape and dtype. So adam(...) is {count, mu[n], nu[n]} and
 * sgd_sched(s, 0.9, false) is {trace[n], count}. */
typedef struct jx_optax_schedule jx_optax_schedule;
typedef struct jx_optax_transform jx_optax_transform;
typedef struct jx_optax_state jx_optax_state;

/* Schedules (optax.schedules). Evaluated with jx_ ops on a count array, so they trace. */
jx_optax_schedule *jx_optax_constant_schedule(double value);
/* polynomial_schedule: (init - end) * (1 - clip(count - begin, 0, steps) / steps)^power
 * + end; transition_steps <= 0 gives the constant init_value (as optax). */
jx_optax_schedule *jx_optax_polynomial_schedule(double init_value, double end_value,
                                                double power, int64_t transition_steps,
                                                int64_t transition_begin);
jx_optax_schedule *jx_optax_linear_schedule(double init_value, double end_value,
                                            int64_t transition_steps, int64_t transition_begin);
/* exponential_decay: init * decay_rate^((count - begin) / transition_steps) (exponent
 * floored if staircase) after transition_begin, init before; end_value (NAN: none)
 * bounds it (a floor when decay_rate < 1, else a ceiling). transition_steps <= 0 or
 * decay_rate == 0 give the constant init_value. */
jx_optax_schedule *jx_optax_exponential_decay(double init_value, int64_t transition_steps,
                                              double decay_rate, int64_t transition_begin,
                                              bool staircase, double end_value);
/* cosine_decay_schedule: init * ((1 - alpha) * (0.5 (1 + cos(pi min(count, steps) /
 * steps)))^exponent + alpha); decay_steps > 0 (JX_ERR_VALUE). optax defaults: alpha 0,
 * exponent 1. */
jx_optax_schedule *jx_optax_cosine_decay_schedule(double init_value, int64_t decay_steps,
                                                  double alpha, double exponent);
/* warmup_cosine_decay_schedule: linear init -> peak over warmup_steps, then cosine decay
 * peak -> end_value until decay_steps (total, warmup included; must exceed
 * warmup_steps). */
jx_optax_schedule *jx_optax_warmup_cosine_decay_schedule(double init_value, double peak_value,
                                                         int64_t warmup_steps,
                                                         int64_t decay_steps, double end_value,
                                                         double exponent);
/* schedule(count): float32 (float64 with x64 when count promotes so) of count's shape. */
jx_array *jx_optax_schedule_value(jx_optax_schedule *s, jx_array *count);
jx_optax_schedule *jx_optax_schedule_ref(jx_optax_schedule *s);
void jx_optax_schedule_free(jx_optax_schedule *s);

/* Building blocks (optax.<same name>). */
jx_optax_transform *jx_optax_identity(void);
jx_optax_transform *jx_optax_scale(double step_size);                    /* u * step_size */
jx_optax_transform *jx_optax_scale_by_schedule(jx_optax_schedule *step_size_fn);
jx_optax_transform *jx_optax_scale_by_learning_rate(double learning_rate); /* u * -lr */
jx_optax_transform *jx_optax_scale_by_learning_rate_sched(jx_optax_schedule *learning_rate);
/* trace: t = u + decay * t; u = nesterov ? u + decay * t : t. */
jx_optax_transform *jx_optax_trace(double decay, bool nesterov);
jx_optax_transform *jx_optax_scale_by_adam(double b1, double b2, double eps, double eps_root,
                                           bool nesterov);
/* scale_by_rms (eps inside the sqrt, no bias correction): u / sqrt(nu + eps). */
jx_optax_transform *jx_optax_scale_by_rms(double decay, double eps, double initial_scale);
/* scale_by_rss (adagrad's): u / sqrt(sum u^2 + eps), 0 while the sum is 0. */
jx_optax_transform *jx_optax_scale_by_rss(double initial_accumulator_value, double eps);
/* add_decayed_weights: u + weight_decay * params (update() then needs params). */
jx_optax_transform *jx_optax_add_decayed_weights(double weight_decay);
/* clip_by_global_norm: u * max_norm / ||u|| when ||u|| (over all arrays) >= max_norm. */
jx_optax_transform *jx_optax_clip_by_global_norm(double max_norm);
/* chain: applies transforms[0], then [1], ... (n >= 0; none NULL). */
jx_optax_transform *jx_optax_chain(int n, jx_optax_transform *const *transforms);

/* Optimizers (optax.sgd, adam, adamw, rmsprop, adagrad): chains of the blocks above, with
 * a float learning rate or, in the _sched variants, a schedule (a count joins the
 * state). momentum == 0 means none (optax's None). optax defaults: adam b1 0.9, b2
 * 0.999, eps 1e-8; adamw weight_decay 1e-4; rmsprop decay 0.9, eps 1e-8, initial_scale
 * 0; adagrad initial_accumulator_value 0.1, eps 1e-7. */
jx_optax_transform *jx_optax_sgd(double learning_rate, double momentum, bool nesterov);
jx_optax_transform *jx_optax_sgd_sched(jx_optax_schedule *learning_rate, double momentum,
                                       bool nesterov);
jx_optax_transform *jx_optax_adam(double learning_rate, double b1, double b2, double eps);
jx_optax_transform *jx_optax_adam_sched(jx_optax_schedule *learning_rate, double b1, double b2,
                                        double eps);
jx_optax_transform *jx_optax_adamw(double learning_rate, double b1, double b2, double eps,
                                   double weight_decay);
jx_optax_transform *jx_optax_adamw_sched(jx_optax_schedule *learning_rate, double b1, double b2,
                                         double eps, double weight_decay);
jx_optax_transform *jx_optax_rmsprop(double learning_rate, double decay, double eps,
                                     double initial_scale, double momentum, bool nesterov);
jx_optax_transform *jx_optax_rmsprop_sched(jx_optax_schedule *learning_rate, double decay,
                                           double eps, double initial_scale, double momentum,
                                           bool nesterov);
jx_optax_transform *jx_optax_adagrad(double learning_rate, double initial_accumulator_value,
                                     double eps);
jx_optax_transform *jx_optax_adagrad_sched(jx_optax_schedule *learning_rate,
                                           double initial_accumulator_value, double eps);
jx_optax_transform *jx_optax_transform_ref(jx_optax_transform *tx);
void jx_optax_transform_free(jx_optax_transform *tx);

/* tx.init(params): a new state (NULL on error: JX_ERR_VALUE for NULL arguments). */
jx_optax_state *jx_optax_init(jx_optax_transform *tx, int n, jx_array *const *params);
/* tx.update(grads, state, params): fills updates_out[0..n) with new references and
 * replaces the state's arrays with the new ones (the old ones are released). params may
 * be NULL unless the transform needs them (add_decayed_weights). On error nothing
 * changes and updates_out is all NULL: JX_ERR_VALUE for NULL arguments, a state made
 * for another transform or another n; JX_ERR_SHAPE when grads, params and the state's
 * arrays disagree in shape. */
jx_status jx_optax_update(jx_optax_transform *tx, jx_optax_state *state, int n,
                          jx_array *const *grads, jx_array *const *params,
                          jx_array **updates_out);
/* optax.apply_updates: new_params_out[i] = (params[i] + updates[i]) cast to params[i]'s
 * dtype (new references; all NULL on error). */
jx_status jx_optax_apply_updates(int n, jx_array *const *params, jx_array *const *updates,
                                 jx_array **new_params_out);
/* The state's arrays (borrowed, valid until the next update or free; *n receives the
 * count) -- e.g. to pass a state into a jitted step. */
jx_array *const *jx_optax_state_arrays(const jx_optax_state *state, int *n);
/* Number of state arrays (-1 for NULL). */
int jx_optax_state_size(const jx_optax_state *state);
/* A state of tx for nparams parameters holding `arrays` (n of them, in the layout above;
 * references are taken) -- e.g. inside a jitted step, from its tracer inputs.
 * JX_ERR_VALUE when n is not the layout's count. */
jx_optax_state *jx_optax_state_from_arrays(jx_optax_transform *tx, int nparams, int n,
                                           jx_array *const *arrays);
void jx_optax_state_free(jx_optax_state *state);
/* update() as a function for jx_jit: inputs grads[nparams], state arrays[k], params[nparams];
 * outputs updates[nparams], new state arrays[k] (k = the layout's count). */
jx_fn *jx_optax_update_fn(jx_optax_transform *tx, int nparams);

/* Losses (optax.losses), unreduced. Logits must be floating (JX_ERR_DTYPE).
 * softmax_cross_entropy: -sum(labels * log_softmax(logits)) over axis (optax default -1);
 * `where` (NULL = none) masks classes (a mask of lower rank is expanded at axis). */
jx_array *jx_optax_softmax_cross_entropy(jx_array *logits, jx_array *labels, int axis,
                                         jx_array *where);
/* ... with integer labels of logits' shape without axis: logsumexp(logits) - the label's
 * logit; negative labels count from the end, labels outside [-C, C) give NaN (JAX's
 * take_along_axis fill); rows fully excluded by `where` give 0. */
jx_array *jx_optax_softmax_cross_entropy_with_integer_labels(jx_array *logits, jx_array *labels,
                                                             int axis, jx_array *where);
/* -labels log sigmoid(logits) - (1 - labels) log sigmoid(-logits), elementwise. */
jx_array *jx_optax_sigmoid_binary_cross_entropy(jx_array *logits, jx_array *labels);
/* (predictions - targets)^2, 0.5 * that (l2), and huber (quadratic within delta, linear
 * beyond; optax default delta 1). targets may be NULL (zeros); otherwise shapes must be
 * equal (JX_ERR_SHAPE). Predictions must be floating. */
jx_array *jx_optax_squared_error(jx_array *predictions, jx_array *targets);
jx_array *jx_optax_l2_loss(jx_array *predictions, jx_array *targets);
jx_array *jx_optax_huber_loss(jx_array *predictions, jx_array *targets, double delta);

#ifdef __cplusplus
}
#endif
#endif /* JAXC_H */
