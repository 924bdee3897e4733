/* consumer.c -- a program outside the project: includes only <jaxc.h> and links the
 * installed library (shared or static). Exit 0 iff the library works and leaks nothing. */
#include <jaxc.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int64_t shape[2] = {2, 3};
  jx_scope_begin();
  jx_array *z = jx_zeros(2, shape, JX_FLOAT32);           /* (2, 3) */
  jx_array *s = jx_sum(jx_add(z, jx_scalar(1.5)), 0, NULL, false); /* () = 9 */
  double v = jx_item(s);
  char *text = jx_to_string(s);
  jx_scope_end(0, NULL);
  if (jx_last_status() != JX_OK) {
    fprintf(stderr, "consumer.c: %s\n", jx_last_error());
    free(text);
    return 1;
  }
  printf("consumer.c: sum = %s (%g), live arrays = %lld\n", text ? text : "(null)", v,
         (long long)jx_live_arrays());
  free(text);
  if (fabs(v - 9.0) > 1e-6 || jx_live_arrays() != 0) return 1;
  return 0;
}
