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
 * released array, an operation given one (every primitive, the numpy functions' and the
 * random functions' argument checks) and jx_fn_free / jx_fn_ref / jx_call of a released
 * function abort with a message naming the call and the object ("jaxc: jx_free:
 * float32[3] at 0x... was already released"), from a poisoned magic field (released
 * structs are quarantined a while: a handle released long before may escape the check).
 *
 * THREADS -- every function may be called from any thread, and a jx_fn (a jitted one
 * included, as in JAX) from any number of threads at once: jit's trace cache is locked
 * only to look up and insert entries, never while tracing, compiling or running, and an
 * entry evicted while another thread runs it lives until that call ends. Two threads
 * missing on one signature may both trace it (the user function runs twice). Per
 * thread: the pending error, array scopes and function scopes (so a handle created in a
 * scope belongs to that thread's scope). Shared across threads: arrays and functions
 * themselves (reference counts are atomic; jx_free a reference once, from any thread),
 * the kernel caches, the default device and the x64 switch (set them before starting
 * threads: changing them while other threads run affects their next calls). Arrays are
 * immutable, so reading one from several threads is safe. A user function passed to
 * jx_fn_new must itself be safe to call from the threads that call it.
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
 * float32 (each op rounds its result back to 16 bits). complex64/complex128 are stored
 * as NumPy stores them: interleaved (real, imaginary) pairs of float32/float64; with
 * x64 off complex128 canonicalizes to complex64, as float64 to float32. */
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
  JX_COMPLEX64,
  JX_COMPLEX128,
  JX_NUM_DTYPES, /* the number of numeric dtypes above; tables are indexed by them */
  /* jax.dtypes.float0: the tangent / cotangent type of bool and integer values
   * (grad(allow_int=True), vjp, jvp). Its itemsize is 0: a float0 array has a shape and
   * holds no data. No operation takes one (JX_ERR_DTYPE, as JAX's "float0s do not support
   * any operations by design"); it prints as NumPy prints it ("(b'',)" per element).
   * Numbered past JX_NUM_DTYPES so that it is not one of the numeric dtypes. */
  JX_FLOAT0 = 64
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
/* Records an error on this thread as jaxc's own functions do, for a user function that
 * rejects its inputs (JAX: raising in a Python function that jit, grad, vmap, ... trace):
 * return what this returns from the function, and jx_call reports this message instead
 * of "jx_call(f): the function returned ...". printf-style `fmt` (NULL: no message);
 * an earlier pending error stays the first one. Returns `status`; JX_OK or a value that
 * is not a jx_status records JX_ERR_VALUE and returns it. */
#if defined(__GNUC__) || defined(__clang__)
#define JX_PRINTF_FORMAT(f, a) __attribute__((format(printf, f, a))) /* format checks */
#else
#define JX_PRINTF_FORMAT(f, a)
#endif
jx_status jx_set_error(jx_status status, const char *fmt, ...) JX_PRINTF_FORMAT(2, 3);
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
/* Number of arrays alive now (all threads): tests use it to prove there are no leaks.
 * Every array the user creates or is handed counts until its last reference is
 * dropped; the arrays the library's own caches keep across calls (the constants of the
 * jitted samplers jx_random_normal, jx_random_gumbel, ... reuse, a bounded LRU cache)
 * do not, so a warm cache does not read as a leak. */
int64_t jx_live_arrays(void);
/* Bytes of device memory held by live arrays and jit programs' buffers now (all
 * devices, all threads), and the most held at once since the last
 * jx_reset_peak_buffer_bytes (which sets the peak to the bytes live now): JAX's
 * device.memory_stats()["bytes_in_use"] and ["peak_bytes_in_use"]. Views share their
 * base's buffer; freed memory a cache keeps for reuse is not counted. */
int64_t jx_live_buffer_bytes(void);
int64_t jx_peak_buffer_bytes(void);
void jx_reset_peak_buffer_bytes(void);
/* jax.clear_caches: empties the caches the library keeps across calls -- the cached
 * eager ops' programs (one a primitive, operand shapes and dtypes, device) and the
 * jitted jax.random samplers (jx_random_normal, ...: their constants and, on cuda, their
 * recorded graphs' buffers) -- so the memory they hold is released; later calls rebuild
 * what they need (a first call's cost again). A jitted function the user holds keeps
 * its own compiled programs (jx_fn_free releases them). Safe while other threads call
 * into the library: a program in use is freed by its last user. */
void jx_clear_caches(void);

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
 * arrays it puts in out[] are handed to the caller -- an input itself may be put there
 * as it is (out[0] = in[0]: no jx_ref needed, the caller gets its own reference). Arrays
 * reached through ctx are constants of a trace (closed-over values), as in JAX. */
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
/* Calls f: out[0..nout) receive new references (all NULL on failure); `in` holds
 * jx_fn_nin(f) arrays and `out` room for jx_fn_nout(f) -- a transformation's result has
 * its own count (jx_value_and_grad's is 1 + f's auxiliary outputs + nargnums), so size
 * `out` by jx_fn_nout rather than by f's (a shorter array is overrun). Returns JX_OK
 * or the first error: JX_ERR_VALUE for NULL arguments or an impl that left an output
 * unset or returned a value that is no jx_status, the impl's own status otherwise. */
jx_status jx_call(jx_fn *f, jx_array *const *in, jx_array **out);
/* Number of jx_fn alive now: tests use it to prove there are no leaks (the library's
 * cached functions, as in jx_live_arrays, not counted). */
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
 * Tangents must match their primals' shapes and dtypes (JX_ERR_SHAPE), except that bool
 * and integer primals take JX_FLOAT0 tangents (jx_zeros(ndim, shape, JX_FLOAT0)) and
 * only they do (JX_ERR_DTYPE otherwise, JAX's TypeError); the tangents of bool and
 * integer outputs are float0 arrays of their shapes. */
jx_status jx_jvp(jx_fn *f, jx_array *const *primals, jx_array *const *tangents,
                 jx_array **primals_out, jx_array **tangents_out);
/* jax.vjp(f, *primals): fills primals_out with f's outputs and returns the pullback, a
 * jx_fn from output cotangents (one per output, same shapes/dtypes) to input
 * cotangents. Bool and integer inputs get float0 cotangents of their shapes; the
 * cotangent of a bool or integer output is a float0 array of its shape (or, as JAX
 * also accepts, one of the output's own dtype); another dtype is JX_ERR_DTYPE for
 * float0 mix-ups, JX_ERR_SHAPE otherwise. */
jx_fn *jx_vjp(jx_fn *f, jx_array *const *primals, jx_array **primals_out);
/* jax.linearize(f, *primals): fills primals_out and returns f's JVP at primals as a
 * jx_fn from input tangents to output tangents (float0 for bool and integer values, as
 * in jx_jvp). */
jx_fn *jx_linearize(jx_fn *f, jx_array *const *primals, jx_array **primals_out);
/* jax.linear_transpose(f, *primals): f, linear in its inputs, is traced once at the
 * shapes/dtypes of primals (their values are not used) and the returned function maps
 * cotangents of f's outputs (one per output, same shapes and dtypes) to cotangents of
 * its inputs (zeros for inputs no output depends on): the transpose of f as a linear
 * map. f's inputs and outputs must be all float/complex or all integer (JX_ERR_DTYPE,
 * as JAX's TypeError); a function that is not linear in its inputs (a nonlinear
 * primitive such as sin applied to them, a product or quotient of two values depending
 * on them) is JX_ERR_VALUE naming the primitive; a function closing over a tracer of an
 * enclosing transformation JX_ERR_UNSUPPORTED. Calling the result with a cotangent of
 * another dtype is JX_ERR_DTYPE, of another shape JX_ERR_SHAPE. Composes with jit,
 * vmap and grad like any jx_fn. */
jx_fn *jx_linear_transpose(jx_fn *f, jx_array *const *primals);
/* jax.grad(f, argnums, has_aux=True-style): f's first output must be a scalar float;
 * returns grads (one per argnum, like its input) followed by f's other outputs
 * (auxiliary data). argnums == NULL means {0}. Differentiated inputs must be float or
 * complex (JX_ERR_DTYPE); for complex inputs the result is JAX's: the transpose of the
 * derivative applied to 1.0, i.e. df/dx - i df/dy for z = x + iy (grad of |z|^2 is
 * 2 conj(z)). A complex output is JX_ERR_DTYPE (use jx_grad_holomorphic). */
jx_fn *jx_grad(jx_fn *f, int nargnums, const int *argnums);
/* jax.grad(f, argnums, holomorphic=True): f's first output a complex scalar, the
 * differentiated inputs complex (JX_ERR_DTYPE otherwise); the grads are f'(z). */
jx_fn *jx_grad_holomorphic(jx_fn *f, int nargnums, const int *argnums);
/* jax.grad(f, argnums, allow_int=True): jx_grad that also accepts bool and integer
 * arguments; their gradients are JX_FLOAT0 arrays of the argument's shape (no data:
 * jax.dtypes.float0), the others are jx_grad's. Any other non-float argument is
 * JX_ERR_DTYPE. Composes with jit and vmap (a mapped float0 grad gets the batch axis). */
jx_fn *jx_grad_allow_int(jx_fn *f, int nargnums, const int *argnums);
/* jax.value_and_grad: returns value, aux..., grads... (jx_fn_nout(f) + nargnums outputs;
 * argnums == NULL means {0}). */
jx_fn *jx_value_and_grad(jx_fn *f, int nargnums, const int *argnums);
/* jax.value_and_grad(f, argnums, allow_int=True): as jx_grad_allow_int. */
jx_fn *jx_value_and_grad_allow_int(jx_fn *f, int nargnums, const int *argnums);
/* jax.jacfwd / jax.jacrev(f, argnums): the returned function gives, for every output
 * y_o and differentiated input x_a, J[o][a] of shape y_o.shape + x_a.shape, ordered
 * o-major (out[o * nargnums + a]). jacfwd pushes the input basis through jvp under
 * vmap; jacrev pulls the output basis back through vjp under vmap. argnums == NULL
 * means {0}; differentiated inputs must be float (JX_ERR_DTYPE). */
jx_fn *jx_jacfwd(jx_fn *f, int nargnums, const int *argnums);
jx_fn *jx_jacrev(jx_fn *f, int nargnums, const int *argnums);
/* jax.jacrev(f, argnums, allow_int=True): jx_jacrev that also accepts bool and integer
 * argnums; their entries J[o][a] are zeros of the argument's dtype and shape
 * y_o.shape + x_a.shape (JAX reshapes the float0 cotangents into that dtype). */
jx_fn *jx_jacrev_allow_int(jx_fn *f, int nargnums, const int *argnums);
/* jax.jacfwd / jacrev(f, argnums, holomorphic=True): complex inputs (JX_ERR_DTYPE
 * otherwise) and outputs; entries are the complex derivatives dy/dz. */
jx_fn *jx_jacfwd_holomorphic(jx_fn *f, int nargnums, const int *argnums);
jx_fn *jx_jacrev_holomorphic(jx_fn *f, int nargnums, const int *argnums);
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

/* NumPy name ("float32", "bfloat16", "bool", "float0"); NULL for an invalid value. */
const char *jx_dtype_name(jx_dtype d);
/* Bytes per element (bool: 1). 0 for JX_FLOAT0 and for an invalid value. */
size_t jx_dtype_itemsize(jx_dtype d);
/* jnp.result_type of two dtypes, each weak (Python scalar) or not: JAX's promotion
 * lattice (jax._src.dtypes), canonicalized for the current x64 mode. */
jx_dtype jx_promote_types(jx_dtype a, bool a_weak, jx_dtype b, bool b_weak, bool *weak_out);

/* -------------------------------------------------------------- devices */

/* NULL-terminated list of device names available in this process ("interp", "cpu", and
 * "cuda" where an NVIDIA driver and GPU are found). */
const char *const *jx_devices(void);
/* Sets the device new arrays are created on. JX_ERR_DEVICE for an unknown name, or for
 * one that cannot run here ("cuda" without a driver: the message names what is missing);
 * JX_ERR_VALUE for a NULL name. */
jx_status jx_default_device(const char *name);
/* Name of the device holding `a` (NULL for NULL). */
const char *jx_device_of(const jx_array *a);
/* jax.device_put(a, device): `a` on the named device (a contiguous copy of its logical
 * contents when it was elsewhere, the same data when already there), committed to it:
 * operations and jitted calls on committed arrays run on their device, and arrays
 * committed to different devices in one operation are JX_ERR_DEVICE naming both
 * (uncommitted arrays follow the committed ones; docs/api.md, Devices). JX_ERR_DEVICE
 * for an unknown or unavailable device, JX_ERR_VALUE for a NULL name; NULL for NULL. */
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
/* A strongly typed 0-d array: jnp.asarray(value, dtype). A whole number outside an
 * integer dtype's range is JX_ERR_VALUE (JAX's OverflowError); other values convert as
 * floats do (2.7 -> 2 for int8). */
jx_array *jx_scalar_of(double value, jx_dtype dtype);
/* A weakly typed complex scalar (a Python complex, re + im*1j, in JAX): complex64 with
 * x64 off, complex128 with it, weak, so complex64 arrays stay complex64 and float or
 * int arrays promote to the default complex dtype (JAX's lattice: f_ -> c_). */
jx_array *jx_scalar_complex(double re, double im);
/* A strongly typed complex 0-d array: jnp.asarray(complex(re, im), dtype) for
 * JX_COMPLEX64 / JX_COMPLEX128 (JX_ERR_DTYPE for another dtype). */
jx_array *jx_scalar_complex_of(double re, double im, jx_dtype dtype);

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
/* The single element of a size-1 array as a complex number: *re and *im (a real array
 * gives im = 0). JX_ERR_SHAPE for another size, JX_ERR_VALUE for NULL arguments (both
 * outputs are then NaN where given). */
jx_status jx_item_complex(jx_array *a, double *re, double *im);
/* jax.block_until_ready: waits until `a` is computed (on cuda, until the device's stream
 * has run it). NULL: the pending error of the call that returned NULL, else JX_ERR_VALUE;
 * a tracer: JX_ERR_VALUE. */
jx_status jx_block_until_ready(jx_array *a);
/* str(np.asarray(a)) as NumPy 2 prints it ("[[1. 2.]\n [3. 4.]]"): shortest round-trip
 * digits (at most 8 after the point), one format per array, 75-column lines, "..." and
 * 3 edge items per axis above 1000 elements, a 0-d array as the bare scalar ("1.5",
 * "True"); bfloat16 as ml_dtypes prints it ("%g"-style, unaligned). The caller free()s
 * the text. NULL (JX_ERR_VALUE) for NULL. */
char *jx_to_string(jx_array *a);

/* ---------------------------------------------------------------- creation */
/* jnp.full / zeros / ones: one value broadcast (a view). dtype is canonicalized (x64
 * mode). For an integer dtype a whole-number value converts as a Python int does in
 * JAX, wrapping to the width (300 -> 44 for int8, -1 -> 255 for uint8), any other as a
 * float (truncated toward zero, saturated: 2.7 -> 2, 300.5 -> 127). Errors: JX_ERR_SHAPE for bad ndim or negative dims, JX_ERR_OOM when the size
 * overflows int64, JX_ERR_DTYPE for an invalid dtype. jx_zeros also makes float0 arrays
 * (JX_FLOAT0: jnp.zeros(shape, float0), the tangents jx_jvp takes for int/bool primals);
 * jx_zeros_like of a float0 array is float0, jx_ones_like / jx_full_like JX_ERR_DTYPE. */
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
 * t = i / (num-1), computed in dtype (bool/int dtypes: in float32, float64 for int64 --
 * dtypes.to_inexact_dtype -- then floor) as XLA's CPU backend evaluates JAX's formula,
 * bit for bit for float32 / float64 / float16 / bfloat16 (jax 0.10.2 on x86-64: the FMA
 * contractions XLA's LLVM makes at each size are reproduced, src/lib/numpy/creation.c);
 * the last element is exactly stop. JX_ERR_VALUE for num < 0. */
jx_array *jx_linspace(double start, double stop, int64_t num, jx_dtype dtype);
/* jnp.linspace(..., endpoint=endpoint, dtype): endpoint true is jx_linspace; false
 * divides by num instead of num - 1 and leaves stop out (num values from start in steps
 * of (stop - start) / num), computed as jx_linspace computes its first num - 1 values
 * (the same FMA regimes by the number of values; float32's parallel one starts a value
 * earlier). Checked against jnp.linspace(endpoint=False) on 1,320 (start, stop, num,
 * dtype) for float32/float64/float16/bfloat16, num 0..59 and around every regime
 * boundary: bit for bit except two float32 cases at num 34 and 35 whose element 1 is
 * 1 ulp off (XLA's scalar-regime contraction there) and float64 at num >= 65533 (XLA's
 * parallel split differs: relative error up to ~1.3e-12, i.e. a few ulps near zero
 * crossings). JX_ERR_VALUE for num < 0. */
jx_array *jx_linspace_endpoint(double start, double stop, int64_t num, bool endpoint,
                               jx_dtype dtype);
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
/* jnp.divide / true_divide: integer inputs promote to a float by width (float32; float64
 * for int64 / uint64: dtypes.to_inexact_dtype, as JAX 0.10 -- also with x64 on). */
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
/* jnp.maximum / minimum: NaN-propagating; complex operands by (re, im) lexicographic
 * order, as lax.max's complex lowering (a NaN part picks y). */
jx_array *jx_maximum(jx_array *x, jx_array *y);
jx_array *jx_minimum(jx_array *x, jx_array *y);
jx_array *jx_fmax(jx_array *x, jx_array *y); /* NaN-ignoring */
jx_array *jx_fmin(jx_array *x, jx_array *y);
jx_array *jx_arctan2(jx_array *y, jx_array *x);
jx_array *jx_hypot(jx_array *x, jx_array *y);
jx_array *jx_logaddexp(jx_array *x, jx_array *y);
jx_array *jx_copysign(jx_array *x, jx_array *y);
/* Comparisons return bool arrays; less / greater (and _equal) order complex operands
 * lexicographically on (re, im), as jnp's. */
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
 * float dtype, as in jax.numpy. Complex x: exp2 is exp(log(2) x); log2 and log10 scale
 * the parts of log(x) by the real 1/log(2), 1/log(10) (log2(0) = -inf + 0j), as JAX. */
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
/* jnp.round(x, decimals=0) / jnp.rint: round half to even (complex x: each part). */
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
/* jnp.clip(x, lo, hi): either bound may be NULL (no bound); complex operands:
 * JX_ERR_DTYPE (JAX raises: no ordering to clip by). */
jx_array *jx_clip(jx_array *x, jx_array *lo, jx_array *hi);

/* ---------------------------------------------------------- reductions */
/* jnp.sum / prod / max / min / mean / any / all over (naxes, axes); axes == NULL reduces
 * every axis. Repeated or out-of-range axes: JX_ERR_SHAPE. sum/prod of bool and small
 * ints accumulate in the default int dtype (as JAX); float16/bfloat16 accumulate in
 * float32. max/min of an empty axis: JX_ERR_VALUE (JAX raises: no identity); of complex
 * x, lexicographic on (re, im) (NaN + NaNj where a reduced element has a NaN part: JAX's
 * result there depends on XLA's reduction order). Float
 * sums/products of 16+ elements accumulate in 16 lanes (docs/api.md, summation order). */
jx_array *jx_sum(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_prod(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_max(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_min(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_mean(jx_array *x, int naxes, const int *axes, bool keepdims);
/* jnp.var / std with ddof, two passes (mean, then squared deviations); int inputs give
 * float32 (float64 for int64: dtypes.to_inexact_dtype); a divisor count - ddof <= 0
 * gives NaN, as JAX. */
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
/* jnp.array_split(x, sections, axis): `sections` (>= 1, JX_ERR_VALUE otherwise) pieces,
 * the first dim % sections of them one element longer; fills out[0..sections-1]. */
jx_status jx_array_split(jx_array *x, int64_t sections, int axis, jx_array **out);
/* jnp.meshgrid(*xs, sparse=, indexing=) of n (<= JX_MAX_NDIM) 1-d arrays (JX_ERR_SHAPE
 * otherwise): out[i] varies along its own axis of the grid (len(xs[0]), ..., len(xs[n-1]))
 * -- with indexing "xy" (NULL: JAX's default) the first two axes swapped, with "ij" not
 * (another string: JX_ERR_VALUE); sparse keeps size 1 on the other axes. Dtypes kept. */
jx_status jx_meshgrid(int n, jx_array *const *xs, bool sparse, const char *indexing, jx_array **out);
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
 * flattens first, as does a 0-d x whatever the axis (JAX: repeat(7, 3, axis=0) is
 * [7, 7, 7]). */
jx_array *jx_repeat(jx_array *x, int64_t repeats, int axis);
/* Basic and strided slicing x[start:stop:step, ...] over the first nslice axes, with
 * Python's clamping of out-of-range bounds; step != 0 (JX_ERR_VALUE). JX_SLICE_END in
 * start or stop is an omitted bound (Python's None): x[::-1] is start = stop =
 * JX_SLICE_END, step = -1. NULL start/stop mean all JX_SLICE_END, NULL step all 1. */
#define JX_SLICE_END INT64_MAX
jx_array *jx_slice(jx_array *x, int nslice, const int64_t *start, const int64_t *stop,
                   const int64_t *step);
/* One entry of a NumPy/JAX index expression x[e0, e1, ...] (jx_getitem, jx_at_index_*).
 * Build entries with the jx_idx_* constructors below rather than by hand:
 *   x[i, 1:5, None, ..., mask]  is  jx_getitem(x, 5, (jx_index[]){jx_idx_array(i),
 *     jx_idx_slice(1, 5, 1), jx_idx_newaxis(), jx_idx_ellipsis(), jx_idx_array(mask)})
 * A zero-initialized entry is the integer 0. Arrays are borrowed (the caller's). */
typedef enum jx_index_kind {
  JX_IDX_INT = 0,   /* a Python int: `i` (negative counts from the end) */
  JX_IDX_SLICE,     /* start:stop:step; JX_SLICE_END in start/stop is an omitted bound */
  JX_IDX_NEWAXIS,   /* None / jnp.newaxis: a new axis of size 1 */
  JX_IDX_ELLIPSIS,  /* ...: as many full slices as the other entries leave axes */
  JX_IDX_ARRAY      /* `array`: integers (any int dtype and shape; a 0-d one too) or
                       bools (a mask over as many axes as it has dims; a 0-d bool adds an
                       axis: x[True] has shape (1, *x.shape), x[False] (0, *x.shape)) */
} jx_index_kind;
typedef struct jx_index {
  jx_index_kind kind;
  int64_t i;                  /* JX_IDX_INT */
  int64_t start, stop, step;  /* JX_IDX_SLICE (step != 0) */
  jx_array *array;            /* JX_IDX_ARRAY */
} jx_index;
jx_index jx_idx_int(int64_t i);
jx_index jx_idx_slice(int64_t start, int64_t stop, int64_t step);
jx_index jx_idx_all(void);      /* `:` -- jx_idx_slice(JX_SLICE_END, JX_SLICE_END, 1) */
jx_index jx_idx_newaxis(void);
jx_index jx_idx_ellipsis(void);
jx_index jx_idx_array(jx_array *a);
/* x[idx[0], ..., idx[n-1]]: jax.numpy's __getitem__ (jax/_src/numpy/indexing.py,
 * rewriting_take), the n entries read left to right, missing trailing entries being full
 * slices (n == 0: x itself). Slices, ints and newaxes alone give a view (jx_slice, then a
 * reshape); a 0-d integer array picks one element of its axis (a dynamic slice).
 * Advanced indexing, as JAX's _index_to_gather: once an integer array with >= 1 dims, a
 * bool mask or a 0-d bool appears, every int and integer array is an advanced index;
 * they broadcast together to a shape B, which takes the place of the first of them when
 * they are adjacent in idx, else comes first (x[:, i, :, j] -> B + the sliced dims,
 * x[:, i, j] -> x.shape[0] + B + ...). As in JAX a 0-d bool does not separate the others
 * (x[:, i, :, True] puts B second, NumPy first). A bool mask of k dims stands for its k
 * nonzero() coordinate arrays, which needs a concrete mask: a traced one (under jit or
 * vmap) is JX_ERR_VALUE, JAX's NonConcreteBooleanIndexError (under grad its primal value
 * is used, as JAX's). A mask dim must equal the axis it covers or be 0.
 * Out-of-range indices, as JAX 0.10.2 (jax_check_static_indices off): negative ones wrap
 * once (i + n), then every index is clamped into [0, n) (x[7] of 5 elements is x[4],
 * x[-7] is x[0]): JAX gathers in mode promise_in_bounds, which clamps on CPU and GPU.
 * Index arrays are taken to int32 as JAX's index dtype, after wrapping (a uint32 index
 * >= 2^31 wraps negative and clamps to 0, as in JAX); int8/int16 indices are widened
 * first (JAX raises OverflowError for an axis longer than the dtype's maximum).
 * Result dtype and weak type are x's. Differentiable (a gather: the gradient scatters
 * back), batchable, jittable (not with a traced mask).
 * Errors: JX_ERR_VALUE for a NULL x, a NULL idx with n > 0, an entry without its array,
 * an unknown kind, two ellipses, a zero slice step, a traced mask; JX_ERR_DTYPE for a
 * non-integer, non-bool index array; JX_ERR_SHAPE for more indexed axes than x has
 * ("too many indices"), a mask whose shape does not fit, index arrays that do not
 * broadcast, an int or 0-d index into an axis of size 0 (and any index into an empty
 * axis when the result is not empty: JAX's out-of-range gather), a result of rank >
 * JX_MAX_NDIM. */
jx_array *jx_getitem(jx_array *x, int n, const jx_index *idx);
/* jnp.take(x, indices, axis) in JAX's default mode "fill": integer indices of any shape
 * (result shape x.shape[:axis] + indices.shape + x.shape[axis+1:]); indices in [-n, 0)
 * wrap; any other index outside [0, n) gives the fill value: NaN for floats, NaN + 0j
 * for complex, the most negative value for signed ints, the largest for unsigned ints,
 * true for bool. The result is weakly typed iff x is.
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
 * matmul: 1-d operands are promoted as NumPy does; batch dims broadcast. The result is
 * weakly typed iff both operands are, as JAX's. Mismatched shapes: JX_ERR_SHAPE naming
 * both. */
jx_array *jx_matmul(jx_array *x, jx_array *y);
jx_array *jx_dot(jx_array *x, jx_array *y);
jx_array *jx_vdot(jx_array *x, jx_array *y); /* conj(x) . y, flattened */
jx_array *jx_inner(jx_array *x, jx_array *y);
jx_array *jx_outer(jx_array *x, jx_array *y);
/* jnp.tensordot(x, y, axes=n): contracts the last n axes of x with the first n of y
 * (weakly typed iff both operands are). */
jx_array *jx_tensordot(jx_array *x, jx_array *y, int n);

/* The families below live in include/jaxc/ (installed beside this header). */
#include "jaxc/linalg.h"
#include "jaxc/io.h"
#include "jaxc/nn.h"
#include "jaxc/numpy.h"
#include "jaxc/lax.h"
#include "jaxc/random.h"
#include "jaxc/optax.h"
#include "jaxc/custom.h"
#include "jaxc/fft.h"
#include "jaxc/special.h"
#include "jaxc/stats.h"
#include "jaxc/signal.h"
#include "jaxc/sharding.h"

#ifdef __cplusplus
}
#endif
#endif /* JAXC_H */
