/* config.c -- reads jaxc's environment variables (see config.h for the list). */
#include "core/config.h"

#include <stdlib.h>

int config_debug_level(void) {
  static int level = -1;
  if (level < 0) {
    const char *s = getenv("JAXC_DEBUG");
    level = s ? atoi(s) : 0;
    if (level < 0) level = 0;
  }
  return level;
}
