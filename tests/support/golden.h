/* golden.h -- golden cases written by JAX (tools/golden_*.py) and read by the tests:
 * a loader for the text format below, conversion of its arrays to jx_arrays, and a
 * comparison that reports mismatches through test_fail.
 *
 * FORMAT (the .txt files in tests/golden). One case per block; '#' lines and blank lines are
 * ignored; tokens are separated by spaces; every line is one record:
 *
 *   case <name> <function> [key=value ...]     starts a case; params are free-form
 *   in  <dtype> <ndim> <d0> ... <dn-1> : <v0> <v1> ...    one line per input, in order
 *   out <dtype> <ndim> <dims...> : <values...>            one line per output, or
 *   err <JX_ERR_NAME>                          the call must fail with this status
 *   end
 *
 * <dtype> is a NumPy name (jx_dtype_name: "float32", "bfloat16", "bool", ...), prefixed
 * with "weak_" for JAX weakly typed values ("weak_float32 0 : 2.5" is the Python float
 * 2.5; "weak_int32 0 : 3" the Python int 3). Values are C order, size = product of the
 * dims (none for empty arrays; ":" may then end the line). Floats are written with
 * Python's repr (17 significant digits: exact for every dtype) and read with strtod:
 * "nan", "inf", "-inf" and "-0.0" round-trip. Integers are decimal (int64/uint64
 * exact); bool is 0 or 1. "float0" (jax.dtypes.float0) arrays have a shape and no
 * values ("out float0 1 3 :"). Goldens are written with jax_enable_x64 off unless a case
 * says otherwise (param x64=1).
 */
#ifndef JAXC_TEST_GOLDEN_H
#define JAXC_TEST_GOLDEN_H

#include <stdbool.h>
#include <stdint.h>

#include "jaxc.h"

typedef struct GoldenArray {
  jx_dtype dtype;
  bool weak;
  int ndim;
  int64_t shape[JX_MAX_NDIM];
  int64_t size;
  double *f;  /* every value as double (floats exact; ints rounded beyond 2^53) */
  int64_t *i; /* integer and bool dtypes: exact values (uint64: the bit pattern) */
} GoldenArray;

typedef struct GoldenCase {
  char *name;
  char *fn;        /* the function under test, as named by the generator */
  int nparams;
  char **keys, **values;
  int nin, nout;
  GoldenArray *in, *out;
  jx_status err;   /* JX_OK, or the status the call must fail with (an `err` line) */
  int line;        /* line of the `case` record, for messages */
} GoldenCase;

/* Loads JAXC_GOLDEN_DIR/relpath. Returns the cases (golden_free them) and their count,
 * or NULL after printing the file, line and reason to stderr. */
GoldenCase *golden_load(const char *relpath, int *ncases);
void golden_free(GoldenCase *cases, int ncases);

/* The value of param `key` of a case, or NULL. */
const char *golden_param(const GoldenCase *c, const char *key);
/* Param `key` as an integer, or `dflt` when absent. */
long long golden_param_int(const GoldenCase *c, const char *key, long long dflt);
/* Param `key` as a shape, "(2,5)" or "()": its dims into shape (room for JX_MAX_NDIM)
 * and their count; -1 when absent or "none" (JAX's shape=None). */
int golden_param_shape(const GoldenCase *c, const char *key, int64_t *shape);

/* A new array holding a golden array: weak 0-d float32/int32 values come from
 * jx_scalar / jx_scalar_int (as a Python scalar would), everything else from the
 * host data with the recorded weak flag. 64-bit dtypes follow the x64 mode. */
jx_array *golden_to_array(const GoldenArray *g);

/* Checks that `got` has want's dtype (canonicalized), weak type, shape and values, and
 * reports every failure with test_fail naming ctx (at most a few elements listed).
 * Value rule: ints and bool exact; floats: NaN matches NaN, infinities and their signs
 * exactly, otherwise |got - want| <= atol + rtol * |want|; with rtol == atol == 0 the
 * sign of zero must match too. XLA on CPU flushes float32/bfloat16 subnormals to zero,
 * so a want of 0 accepts a got below the dtype's smallest normal (either sign).
 * Returns true when everything matched. got == NULL fails (naming the pending error). */
bool golden_compare(const char *ctx, jx_array *got, const GoldenArray *want, double rtol,
                    double atol);

/* Checks that the call of a case with an `err` line failed: got == NULL and the pending
 * status is c->err; reports through test_fail naming ctx. Returns true when it did. */
bool golden_check_err(const char *ctx, const GoldenCase *c, const jx_array *got);

/* The check of a one-output case: golden_check_err when the case has an `err` line, else
 * golden_compare of got against the case's output. */
bool golden_check(const char *ctx, const GoldenCase *c, jx_array *got, double rtol,
                  double atol);

/* Runs f (still the caller's) on the case's inputs eagerly and as jx_jit(f), and compares
 * every output with golden_compare; messages name "<case> (eager)" or "<case> (jit)".
 * At most 8 inputs and 8 outputs. */
void golden_check_eager_jit(const GoldenCase *c, jx_fn *f, double rtol, double atol);

/* Parses a dtype name ("float32", "weak_int32" sets *weak). false if unknown. */
bool golden_parse_dtype(const char *s, jx_dtype *d, bool *weak);

#endif
