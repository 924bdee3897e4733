/* error.c -- the thread's sticky first error (status + message). An op that fails
 * records here and returns NULL; later failures keep the first message, so a chain of
 * calls is checked once at its end. */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local jx_status err_status = JX_OK;
static _Thread_local char err_message[1024];
static _Thread_local uint64_t err_count; /* failures so far, recorded or not */

void error_set(jx_status status, const char *fmt, ...) {
  err_count++;
  if (err_status != JX_OK) return;
  err_status = status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err_message, sizeof err_message, fmt, ap);
  va_end(ap);
}

bool error_pending(void) { return err_status != JX_OK; }
uint64_t error_mark(void) { return err_count; }

ErrorSaved error_stash(void) {
  ErrorSaved e = {.status = err_status};
  memcpy(e.message, err_message, sizeof e.message);
  err_status = JX_OK;
  err_message[0] = '\0';
  return e;
}

void error_unstash(const ErrorSaved *e) {
  if (e->status == JX_OK) return; /* keep whatever the stashed-away code recorded */
  err_status = e->status;
  memcpy(err_message, e->message, sizeof err_message);
}
bool error_since(uint64_t mark) { return err_count != mark; }

const char *error_shape_str(char *buf, int ndim, const int64_t *shape) {
  int n = 0;
  buf[n++] = '(';
  for (int i = 0; i < ndim && i < JX_MAX_NDIM; i++)
    n += snprintf(buf + n, 22, i ? ",%lld" : "%lld", (long long)shape[i]);
  if (ndim == 1) buf[n++] = ',';
  buf[n++] = ')';
  buf[n] = '\0';
  return buf;
}

jx_status jx_last_status(void) { return err_status; }
const char *jx_last_error(void) { return err_status == JX_OK ? "" : err_message; }

void jx_clear_error(void) {
  err_status = JX_OK;
  err_message[0] = '\0';
}

jx_status jx_set_error(jx_status status, const char *fmt, ...) {
  if (status <= JX_OK || status > JX_ERR_INTERNAL) {
    error_set(JX_ERR_VALUE, "jx_set_error: %d is not an error status", (int)status);
    return JX_ERR_VALUE;
  }
  char msg[sizeof err_message] = "";
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
  }
  error_set(status, "%s", msg);
  return status;
}

const char *jx_status_name(jx_status s) {
  static const char *const names[] = {
      [JX_OK] = "JX_OK",
      [JX_ERR_SHAPE] = "JX_ERR_SHAPE",
      [JX_ERR_DTYPE] = "JX_ERR_DTYPE",
      [JX_ERR_VALUE] = "JX_ERR_VALUE",
      [JX_ERR_OOM] = "JX_ERR_OOM",
      [JX_ERR_DEVICE] = "JX_ERR_DEVICE",
      [JX_ERR_COMPILE] = "JX_ERR_COMPILE",
      [JX_ERR_IO] = "JX_ERR_IO",
      [JX_ERR_UNSUPPORTED] = "JX_ERR_UNSUPPORTED",
      [JX_ERR_INTERNAL] = "JX_ERR_INTERNAL",
  };
  if ((unsigned)s >= sizeof names / sizeof names[0]) return "JX_ERR_UNKNOWN";
  return names[s];
}
