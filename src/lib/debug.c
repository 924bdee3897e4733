/* debug.c -- jax.debug.print: checks the format and binds one debug_print equation
 * (trace/debug.c prints; transformations and jit keep it in program order). */
#include "core/error.h"
#include "trace/prim.h"

jx_status jx_debug_print(const char *fmt, int n, jx_array *const *args) {
  if (!fmt || n < 0 || (n > 0 && !args)) {
    error_set(JX_ERR_VALUE, "jx_debug_print: %s", !fmt ? "fmt is NULL" : "args is NULL");
    return JX_ERR_VALUE;
  }
  for (int i = 0; i < n; i++)
    if (!args[i]) {
      if (!error_pending()) error_set(JX_ERR_VALUE, "jx_debug_print: argument %d is NULL", i);
      return jx_last_status();
    }
  return prim_debug_print(fmt, n, args);
}
