/* dtype.h -- dtype properties, JAX type promotion (with weak types) and the x64 switch.
 * Promotion follows JAX's lattice (jax/_src/dtypes.py, "type promotion semantics"). */
#ifndef JAXC_CORE_DTYPE_H
#define JAXC_CORE_DTYPE_H

#include "jaxc.h"

/* Classification. bool is neither integer nor floating. */
bool dtype_is_bool(jx_dtype d);
bool dtype_is_integer(jx_dtype d);  /* signed or unsigned */
bool dtype_is_signed(jx_dtype d);   /* signed ints and floats */
bool dtype_is_unsigned(jx_dtype d); /* unsigned ints */
bool dtype_is_floating(jx_dtype d); /* real floating only: complex is not */
bool dtype_is_complex(jx_dtype d);  /* complex64, complex128 */
bool dtype_is_inexact(jx_dtype d);  /* floating or complex (jnp.inexact) */
/* The dtype of each part of a complex dtype (complex64 -> float32, complex128 ->
 * float64); other dtypes map to themselves. */
jx_dtype dtype_real_part(jx_dtype d);
/* The complex dtype with parts of d: float64 -> complex128, any other real dtype ->
 * complex64 (as lax.complex after promotion); complex dtypes map to themselves. */
jx_dtype dtype_to_complex(jx_dtype d);
/* One of the numeric dtypes (JX_FLOAT0, which holds no data, is not). */
bool dtype_is_valid(jx_dtype d);
/* For "invalid dtype" messages: "float0 (it holds no values; jx_zeros makes float0
 * arrays)" for JX_FLOAT0, else d's number. buf holds DTYPE_INVALID_BUF bytes. */
#define DTYPE_INVALID_BUF 16
const char *dtype_invalid_str(jx_dtype d, char *buf);
/* Bits per element (bool: 8). */
int dtype_bits(jx_dtype d);
/* Short name used in jaxprs and kernel IR: "f32", "bf16", "i32", "u8", "bool"; "float0". */
const char *dtype_short_name(jx_dtype d);

/* The x64 switch (JAX's jax_enable_x64). Initialized from JAXC_ENABLE_X64. */
bool dtype_x64(void);
/* Canonical dtype for the current mode: with x64 off, int64 -> int32,
 * uint64 -> uint32, float64 -> float32, complex128 -> complex64; otherwise d. */
jx_dtype dtype_canonicalize(jx_dtype d);
/* Default dtypes of the current mode (int32/float32, or int64/float64 with x64). */
jx_dtype dtype_default_int(void);
jx_dtype dtype_default_uint(void);
jx_dtype dtype_default_float(void);
jx_dtype dtype_default_complex(void);
/* dtypes.to_inexact_dtype (JAX 0.10): floating and complex dtypes stay; bool and the
 * integers of up to 32 bits become float32, int64 and uint64 float64 (float32 without
 * x64, where they do not exist) -- by width, not the mode's default float: under x64,
 * jnp.sin(int32) is float32 as in JAX. */
jx_dtype dtype_to_inexact(jx_dtype d);

/* jnp.result_type(a, b) where each side may be weakly typed; returns the canonical result
 * dtype and whether it is weak. Always succeeds for valid dtypes. */
jx_dtype dtype_promote(jx_dtype a, bool a_weak, jx_dtype b, bool b_weak, bool *weak_out);

/* Lowest and highest finite values of d, as double (bool: 0, 1). */
double dtype_min_value(jx_dtype d);
double dtype_max_value(jx_dtype d);

/* float16 / bfloat16 <-> float32, round to nearest even, NaN preserved. */
float dtype_f16_to_f32(uint16_t h);
uint16_t dtype_f32_to_f16(float f);
float dtype_bf16_to_f32(uint16_t h);
uint16_t dtype_f32_to_bf16(float f);

#endif
