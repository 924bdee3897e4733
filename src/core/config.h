/* config.h -- the environment variables jaxc reads, all in one place:
 *   JAXC_DEBUG=1..4   1: kernel launches and timings; 2: jaxprs; 3: kernel IR; 4: source
 *   JAXC_ENABLE_X64   jax_enable_x64 (read in dtype.c through config_env_flag)
 *   JAXC_CACHE_DIR, JAXC_NUM_THREADS  (used by the cpu backend, when it exists) */
#ifndef JAXC_CORE_CONFIG_H
#define JAXC_CORE_CONFIG_H

#include <stdbool.h>

/* JAXC_DEBUG as an integer (0 if unset or not a number), read once. */
int config_debug_level(void);

#endif
