/* caches.c -- jx_clear_caches: the library-held caches emptied at the user's request
 * (jax.clear_caches). */
#include "jaxc.h"
#include "lib/random.h"
#include "trace/trace.h"

void jx_clear_caches(void) {
  random_sampler_cache_clear();
  eager_cache_clear();
}
