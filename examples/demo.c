/* demo.c -- jaxc end to end through the public header only: creation, reshape,
 * broadcasting, reductions over axes, matmul, where, slicing, JAX type promotion, a
 * sticky error, and a leak check. `tools/demo.sh` builds it (build/jaxc_demo; the install test runs it).
 * Exit status 0 iff every step worked and no array is left alive. */
#include <jaxc.h>

#include <stdio.h>
#include <stdlib.h>

static int failures = 0;

/* Prints `label = <array>` (with dtype and shape), or the pending error if a is NULL. */
static void show(const char *label, jx_array *a) {
  if (!a) {
    printf("%s: FAILED: %s: %s\n", label, jx_status_name(jx_last_status()),
           jx_last_error());
    jx_clear_error();
    failures++;
    return;
  }
  char *text = jx_to_string(a);
  printf("%s  (%s, shape (", label, jx_dtype_name(jx_dtype_of(a)));
  for (int i = 0; i < jx_ndim(a); i++)
    printf("%s%lld", i ? ", " : "", (long long)jx_shape(a)[i]);
  printf("%s))\n%s\n\n", jx_ndim(a) == 1 ? "," : "", text ? text : "(to_string failed)");
  if (!text) failures++;
  free(text);
}

int main(void) {
  printf("jaxc %d.%d.%d demo; devices:", JAXC_VERSION_MAJOR, JAXC_VERSION_MINOR,
         JAXC_VERSION_PATCH);
  for (const char *const *d = jx_devices(); d && *d; d++) printf(" %s", *d);
  printf("\n\n");

  jx_scope_begin(); /* everything below is released by the matching jx_scope_end */

  /* --- creation and reshape */
  jx_array *x = jx_reshape(jx_arange(0, 12, 1, JX_FLOAT32), 2, (int64_t[]){3, 4});
  show("x = arange(12).reshape(3, 4)", x); /* (3, 4) */
  const float wdata[4] = {1.0f, -1.0f, 0.5f, 2.0f};
  jx_array *w = jx_array_from(wdata, JX_FLOAT32, 1, (int64_t[]){4}); /* (4,) */
  show("w", w);

  /* --- broadcasting arithmetic: (3, 4) * (4,) + weak scalar stays float32 */
  show("x * w + 0.5", jx_add(jx_mul(x, w), jx_scalar(0.5)));

  /* --- unary math and reductions over axes */
  jx_array *e = jx_exp(jx_div(x, jx_scalar(10.0))); /* (3, 4) */
  show("sum(exp(x / 10), axis=1)", jx_sum(e, 1, (int[]){1}, false));        /* (3,) */
  show("mean(x, axis=0)", jx_mean(x, 1, (int[]){0}, false));                /* (4,) */
  show("max(x, axis=-1, keepdims=True)", jx_max(x, 1, (int[]){-1}, true));  /* (3, 1) */
  show("sum(x)", jx_sum(x, 0, NULL, false));                                /* () */
  printf("sum(x).item() = %g\n\n", jx_item(jx_sum(x, 0, NULL, false)));

  /* --- matmul: (3, 4) @ (4, 2) -> (3, 2) */
  jx_array *m = jx_reshape(jx_arange(1, 9, 1, JX_FLOAT32), 2, (int64_t[]){4, 2});
  show("x @ arange(1, 9).reshape(4, 2)", jx_matmul(x, m));

  /* --- where: keep entries above 5, zero elsewhere */
  show("where(x > 5, x, 0)", jx_where(jx_greater(x, jx_scalar(5.0)), x, jx_scalar(0.0)));

  /* --- slicing x[::2, 1:3] (a view: movement ops never copy) */
  show("x[::2, 1:3]", jx_slice(x, 2, (int64_t[]){0, 1}, (int64_t[]){JX_SLICE_END, 3},
                               (int64_t[]){2, 1}));

  /* --- JAX type promotion */
  const int8_t i8[3] = {-128, 0, 127};
  const uint8_t u8[3] = {0, 128, 255};
  jx_array *a8 = jx_array_from(i8, JX_INT8, 1, (int64_t[]){3});
  jx_array *b8 = jx_array_from(u8, JX_UINT8, 1, (int64_t[]){3});
  show("int8 + uint8 -> int16", jx_add(a8, b8));
  show("int8 + 1.5 (weak float) -> float32", jx_add(a8, jx_scalar(1.5)));
  show("int8 + 1 (weak int) -> int8, wraps", jx_add(a8, jx_scalar_int(1)));
  bool weak = false;
  printf("promote_types(int32, bfloat16) = %s, promote_types(float16, bfloat16) = %s\n\n",
         jx_dtype_name(jx_promote_types(JX_INT32, false, JX_BFLOAT16, false, &weak)),
         jx_dtype_name(jx_promote_types(JX_FLOAT16, false, JX_BFLOAT16, false, &weak)));

  /* --- a sticky error: (3, 4) + (3,) does not broadcast; the NULL flows through the
   * chain and the first error is kept for one check at the end. */
  jx_array *bad = jx_exp(jx_add(x, jx_arange(0, 3, 1, JX_FLOAT32)));
  printf("exp(x + arange(3)) -> %s, %s: %s\n\n", bad ? "an array (unexpected)" : "NULL",
         jx_status_name(jx_last_status()), jx_last_error());
  if (bad || jx_last_status() != JX_ERR_SHAPE) failures++;
  jx_clear_error();

  jx_scope_end(0, NULL);

  int64_t live = jx_live_arrays();
  printf("live arrays after jx_scope_end: %lld\n", (long long)live);
  if (live != 0) failures++;
  printf("%s\n", failures ? "demo FAILED" : "demo OK");
  return failures ? 1 : 0;
}
