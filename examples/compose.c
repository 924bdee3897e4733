/* compose.c -- jit(vmap(grad(f))) written as JAX users write it, with no handle to free
 * but the result: a function scope releases the intermediate jx_fn handles. The README
 * ("Composing transformations") shows this file; CTest runs it (example_compose). */
#include <jaxc.h>
#include <stdio.h>
#include <stdlib.h>

/* f(w, x) = sum(tanh(w * x)): a scalar for one example x [3] */
static jx_status f(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sum(jx_tanh(jx_mul(in[0], in[1])), 0, NULL, false);
  return JX_OK;
}

int main(void) {
  /* per-example gradients with respect to w: w shared, x batched along axis 0 */
  jx_fn_scope_begin();
  jx_fn *per_example = jx_jit(jx_vmap(jx_grad(jx_fn_new("f", 2, 1, f, NULL), 1, (int[]){0}),
                                      (int[]){JX_NOT_MAPPED, 0}, NULL));
  jx_fn_scope_end(1, &per_example); /* f, grad(f) and vmap(grad(f)) are released here */

  jx_scope_begin();
  jx_array *w = jx_full(1, (int64_t[]){3}, 0.5, JX_FLOAT32);
  jx_array *x = jx_reshape(jx_arange(0, 6, 1, JX_FLOAT32), 2, (int64_t[]){2, 3});
  jx_array *g[1] = {NULL};
  jx_status s = jx_call(per_example, (jx_array *[]){w, x}, g); /* g[0]: [2, 3] */
  char *text = s == JX_OK ? jx_to_string(g[0]) : NULL;
  printf("%s\n", text ? text : jx_last_error());
  free(text);
  jx_scope_end(0, NULL);
  jx_fn_free(per_example);

  printf("live functions: %lld, live arrays: %lld\n", (long long)jx_live_fns(),
         (long long)jx_live_arrays());
  return s == JX_OK && jx_live_fns() == 0 && jx_live_arrays() == 0 ? 0 : 1;
}
