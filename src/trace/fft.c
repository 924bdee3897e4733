/* fft.c -- the fft primitive (jax/_src/lax/fft.py: fft_p): its shape rule, its routine
 * (ir/alu.h: ROUTINE_FFT, run by backend/fft.c) and its binder. Params: flags holds the
 * FftType (FFT_TYPE_*), ndim/shape the fft_lengths (1 to FFT_MAX_RANK of them; the
 * transformed axes are the operand's trailing ones, leading dims are a batch). */
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "core/shape.h"
#include "trace/prim.h"

static const char *const type_names[] = {"FFT", "IFFT", "RFFT", "IRFFT"};

const char *prim_fft_type_name(unsigned type) { return type < 4 ? type_names[type] : "?"; }

static void lens_text(char *buf, size_t n, const PrimParams *pp) {
  size_t k = (size_t)snprintf(buf, n, "(");
  for (int d = 0; d < pp->ndim && k < n; d++) k += (size_t)snprintf(buf + k, n - k, d ? ", %lld" : "%lld", (long long)pp->shape[d]);
  if (k < n) snprintf(buf + k, n - k, pp->ndim == 1 ? ",)" : ")");
}

static bool bad(jx_status s, const PrimParams *pp, const char *what, const Aval *x) {
  char a[200], l[120];
  aval_text(a, sizeof a, x);
  lens_text(l, sizeof l, pp);
  error_set(s, "fft: %s %s (operand %s, fft_lengths %s)", prim_fft_type_name(pp->flags), what, a, l);
  return false;
}

bool prim_fft_abstract_eval(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  const Aval *x = &in[0];
  int k = pp->ndim;
  if (nin != 1) {
    error_set(JX_ERR_VALUE, "fft: %d operands (expected 1)", nin);
    return false;
  }
  if (pp->flags > FFT_TYPE_IRFFT) {
    error_set(JX_ERR_VALUE, "fft: unknown fft_type %u", pp->flags);
    return false;
  }
  if (k < 1 || k > FFT_MAX_RANK) return bad(JX_ERR_VALUE, pp, "needs 1 to 3 fft_lengths", x);
  if (k > x->ndim) return bad(JX_ERR_SHAPE, pp, "input needs at least as many dimensions as fft_lengths", x);
  for (int d = 0; d < k; d++)
    if (pp->shape[d] < 0) return bad(JX_ERR_VALUE, pp, "fft_lengths must be >= 0", x);
  const int64_t *minor = x->shape + x->ndim - k;
  *out = *x;
  switch (pp->flags) {
  case FFT_TYPE_RFFT:
    if (x->dtype != JX_FLOAT32 && x->dtype != JX_FLOAT64) return bad(JX_ERR_DTYPE, pp, "input must be float32 or float64", x);
    if (memcmp(minor, pp->shape, (size_t)k * sizeof(int64_t)))
      return bad(JX_ERR_SHAPE, pp, "input's minor dimensions must equal fft_lengths", x);
    /* n//2+1 = 1 bin of nothing: NumPy and XLA reject it too */
    if (pp->shape[k - 1] == 0) return bad(JX_ERR_VALUE, pp, "needs a positive last fft_length (a real axis of 0 points)", x);
    out->shape[x->ndim - 1] = pp->shape[k - 1] / 2 + 1;
    out->dtype = dtype_to_complex(x->dtype);
    break;
  case FFT_TYPE_IRFFT:
    if (!dtype_is_complex(x->dtype)) return bad(JX_ERR_DTYPE, pp, "input must be complex64 or complex128", x);
    if (memcmp(minor, pp->shape, (size_t)(k - 1) * sizeof(int64_t)) || minor[k - 1] != pp->shape[k - 1] / 2 + 1)
      return bad(JX_ERR_SHAPE, pp, "input's minor dimensions must equal fft_lengths (the last one n//2+1)", x);
    out->shape[x->ndim - 1] = pp->shape[k - 1];
    out->dtype = dtype_real_part(x->dtype);
    break;
  default:
    if (!dtype_is_complex(x->dtype)) return bad(JX_ERR_DTYPE, pp, "input must be complex64 or complex128", x);
    if (memcmp(minor, pp->shape, (size_t)k * sizeof(int64_t)))
      return bad(JX_ERR_SHAPE, pp, "input's minor dimensions must equal fft_lengths", x);
    break;
  }
  return true;
}

void prim_fft_routine(const Aval *in, const PrimParams *pp, Routine *r) {
  const Aval *x = &in[0];
  *r = (Routine){.op = ROUTINE_FFT, .nin = 1, .nout = 1, .dtype = dtype_real_part(x->dtype),
                 .outer = shape_numel(x->ndim - pp->ndim, x->shape), .n = 1, .inner = 1,
                 .flags = pp->flags, .fft_rank = pp->ndim};
  for (int d = 0; d < pp->ndim; d++) r->fft_lens[d] = pp->shape[d];
  r->dtypes[0] = x->dtype;
}

jx_array *prim_fft(jx_array *x, unsigned type, int nlens, const int64_t *lens) {
  PrimParams pp = {.flags = type, .ndim = nlens};
  if (nlens < 0 || nlens > FFT_MAX_RANK) {
    error_set(JX_ERR_VALUE, "fft: %d fft_lengths (1 to %d)", nlens, FFT_MAX_RANK);
    return NULL;
  }
  memcpy(pp.shape, lens, (size_t)nlens * sizeof *lens);
  return prim_bind(PRIM_fft, 1, &x, &pp);
}
