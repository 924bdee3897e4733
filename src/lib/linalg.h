/* linalg.h -- helpers shared by the linear-algebra files of src/lib (linalg.c,
 * linalg_more.c). */
#ifndef JAXC_LIB_LINALG_H
#define JAXC_LIB_LINALG_H

#include "lib/numpy/np.h"

/* A float operand of rank >= 2 (square if asked): bool/int promote to the default
 * float (promote_dtypes_inexact); NULL with JX_ERR_SHAPE naming fn otherwise. */
jx_array *linalg_matrix_arg(const char *fn, jx_array *a, bool square);
/* Ends the caller's scope keeping the n results and returns JX_OK when all of them
 * exist (else every out[i] is NULL and the pending status is returned). */
jx_status linalg_return_n(int n, jx_array **out);

#endif
