/* error.h -- the thread's sticky first error, and the internal assertion macro. */
#ifndef JAXC_CORE_ERROR_H
#define JAXC_CORE_ERROR_H

#include "jaxc.h"

/* Records (status, message) unless an error is already pending on this thread.
 * The message should name the public function, the shapes/dtypes involved and what
 * was expected: "jx_add: shapes (2,3) and (4,) do not broadcast". */
void error_set(jx_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool error_pending(void);
/* Did anything fail since error_mark() returned `mark`? Unlike error_pending, this
 * ignores an earlier, unread error: code that must know whether *its own* steps failed
 * (an op on valid inputs while the user has not yet read an old error) uses a mark. */
uint64_t error_mark(void);
bool error_since(uint64_t mark);
/* Code that inspects the status of its own failure (to recover from some) sets the
 * pending error aside first and puts it back after: the older error stays the first. */
typedef struct ErrorSaved {
  jx_status status;
  char message[1024];
} ErrorSaved;
ErrorSaved error_stash(void);
void error_unstash(const ErrorSaved *e);

/* Formats a shape as "(2,3)" into buf (at least ERROR_SHAPE_BUF bytes); returns buf. */
#define ERROR_SHAPE_BUF (JX_MAX_NDIM * 21 + 4)
const char *error_shape_str(char *buf, int ndim, const int64_t *shape);

/* Internal invariant: on failure records JX_ERR_INTERNAL naming file and line. Used for
 * conditions that only a bug in jaxc can make false. */
#define JX_CHECK(cond)                                                                  \
  ((cond) ? true                                                                        \
          : (error_set(JX_ERR_INTERNAL, "internal check failed at %s:%d: %s", __FILE__, \
                       __LINE__, #cond),                                                \
             false))

#endif
