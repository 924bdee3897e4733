/* transpose.c -- transposition of linear Jaxprs (reverse mode): a backward pass over the
 * equations, accumulating cotangents, with one rule per linear primitive. Written with
 * primitives only, so the backward pass itself can be differentiated, batched, staged.
 * The jaxprs come from linearize: every equation is linear in the jaxpr's inputs, and
 * its other operands are constants. */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "transform/transpose.h"
#include "transform/custom.h"
#include "transform/linalg.h"
#include "transform/loops.h"
#include "transform/shard_map.h"
#include "trace/collective.h"

/* Cotangents of the linear operands (ct_in[i] for linear[i]) from the output's ct.
 * x[i] are the constant operands (NULL where linear); in[i] every operand's aval. */
typedef bool (*TransposeRule)(jx_array *ct, int nin, jx_array *const *x, const bool *linear,
                              const Aval *in, const PrimParams *pp, jx_array **ct_in);
/* The same for primitives with several results: cts[o] per result (NULL: zero). */
typedef bool (*TransposeRuleN)(jx_array *const *cts, int nin, jx_array *const *x,
                               const bool *linear, const Aval *in, const PrimParams *pp,
                               jx_array **ct_in);

static jx_array *zeros_like(jx_array *x) { return tx_full_like(x, 0.0); }

static bool t_neg(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                  const PrimParams *pp, jx_array **out) {
  out[0] = prim_unary(PRIM_neg, ct);
  return out[0] != NULL;
}
static bool t_add(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                  const PrimParams *pp, jx_array **out) {
  out[0] = lin[0] ? ct : NULL;
  out[1] = lin[1] ? ct : NULL;
  return true;
}
static bool t_sub(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                  const PrimParams *pp, jx_array **out) {
  out[0] = lin[0] ? ct : NULL;
  out[1] = lin[1] ? prim_unary(PRIM_neg, ct) : NULL;
  return !lin[1] || out[1];
}
static bool t_mul(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                  const PrimParams *pp, jx_array **out) {
  if (lin[0] && lin[1]) {
    error_set(JX_ERR_INTERNAL, "transpose: mul of two linear operands");
    return false;
  }
  out[0] = lin[0] ? prim_binary(PRIM_mul, ct, x[1]) : NULL;
  out[1] = lin[1] ? prim_binary(PRIM_mul, x[0], ct) : NULL;
  return (out[0] || !lin[0]) && (out[1] || !lin[1]);
}
static bool t_div(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                  const PrimParams *pp, jx_array **out) {
  if (lin[1]) {
    error_set(JX_ERR_INTERNAL, "transpose: div by a linear operand");
    return false;
  }
  out[0] = prim_binary(PRIM_div, ct, x[1]);
  return out[0] != NULL;
}
static bool t_convert(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                      const PrimParams *pp, jx_array **out) {
  out[0] = prim_convert(ct, in[0].dtype, in[0].weak);
  return out[0] != NULL;
}
/* lax's complex parts (jax/_src/lax/lax.py): real^T t = complex(t, 0), imag^T t =
 * complex(0, -t), conj^T = conj, complex^T t = (real(t), imag(-t)). */
static bool t_real(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                   const PrimParams *pp, jx_array **out) {
  out[0] = prim_binary(PRIM_complex, ct, zeros_like(ct));
  return out[0] != NULL;
}
static bool t_imag(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                   const PrimParams *pp, jx_array **out) {
  out[0] = prim_binary(PRIM_complex, zeros_like(ct), prim_unary(PRIM_neg, ct));
  return out[0] != NULL;
}
static bool t_conj(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                   const PrimParams *pp, jx_array **out) {
  out[0] = prim_unary(PRIM_conj, ct);
  return out[0] != NULL;
}
static bool t_complex(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                      const PrimParams *pp, jx_array **out) {
  out[0] = lin[0] ? prim_unary(PRIM_real, ct) : NULL;
  out[1] = lin[1] ? prim_unary(PRIM_imag, prim_unary(PRIM_neg, ct)) : NULL;
  return (out[0] || !lin[0]) && (out[1] || !lin[1]);
}
static bool t_reduce_sum(jx_array *ct, int nin, jx_array *const *x, const bool *lin,
                         const Aval *in, const PrimParams *pp, jx_array **out) {
  bool mask[JX_MAX_NDIM] = {false};
  int bdims[JX_MAX_NDIM], n = 0;
  for (int i = 0; i < pp->naxes; i++) mask[pp->axes[i]] = true;
  for (int d = 0; d < in[0].ndim; d++)
    if (!mask[d]) bdims[n++] = d;
  out[0] = prim_broadcast_in_dim(ct, in[0].ndim, in[0].shape, bdims);
  return out[0] != NULL;
}
static bool t_reshape(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                      const PrimParams *pp, jx_array **out) {
  out[0] = prim_reshape(ct, in[0].ndim, in[0].shape);
  return out[0] != NULL;
}
static bool t_transpose(jx_array *ct, int nin, jx_array *const *x, const bool *lin,
                        const Aval *in, const PrimParams *pp, jx_array **out) {
  int inv[JX_MAX_NDIM];
  for (int d = 0; d < pp->naxes; d++) inv[pp->axes[d]] = d;
  out[0] = prim_transpose(ct, inv);
  return out[0] != NULL;
}
static bool t_broadcast(jx_array *ct, int nin, jx_array *const *x, const bool *lin,
                        const Aval *in, const PrimParams *pp, jx_array **out) {
  /* sum over the new dims and over the dims broadcast from size 1 */
  bool mask[JX_MAX_NDIM];
  for (int d = 0; d < pp->ndim; d++) mask[d] = true;
  for (int i = 0; i < in[0].ndim; i++)
    mask[pp->axes[i]] = in[0].shape[i] == 1 && pp->shape[pp->axes[i]] != 1;
  jx_array *s = prim_reduce(PRIM_reduce_sum, ct, mask);
  out[0] = prim_reshape(s, in[0].ndim, in[0].shape);
  return out[0] != NULL;
}
static bool t_pad(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                  const PrimParams *pp, jx_array **out) {
  int64_t stop[JX_MAX_NDIM];
  for (int d = 0; d < in[0].ndim; d++) stop[d] = pp->start[d] + in[0].shape[d];
  out[0] = prim_slice(ct, pp->start, stop, NULL);
  return out[0] != NULL;
}
static bool t_slice(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                    const PrimParams *pp, jx_array **out) {
  /* Spread strided elements apart with zeros (insert a unit dim after d, pad it to the
   * stride, merge), then pad to the operand's extent. */
  jx_array *g = ct;
  int nd = in[0].ndim;
  for (int d = 0; d < nd && g; d++) {
    if (pp->step[d] == 1 || g->shape[d] == 0) continue;
    if (nd + 1 > JX_MAX_NDIM) {
      error_set(JX_ERR_UNSUPPORTED, "transpose of a strided slice needs rank %d", nd + 1);
      return false;
    }
    int64_t shape[JX_MAX_NDIM], lo[JX_MAX_NDIM] = {0}, hi[JX_MAX_NDIM] = {0};
    int k = 0;
    for (int e = 0; e < nd; e++) {
      shape[k++] = g->shape[e];
      if (e == d) shape[k++] = 1;
    }
    hi[d + 1] = pp->step[d] - 1;
    jx_array *p = prim_pad(prim_reshape(g, nd + 1, shape), lo, hi, 0.0);
    if (!p) return false;
    memcpy(shape, g->shape, sizeof(int64_t) * (size_t)nd);
    shape[d] *= pp->step[d];
    g = prim_reshape(p, nd, shape);
  }
  if (!g) return false;
  int64_t lo[JX_MAX_NDIM], hi[JX_MAX_NDIM], start[JX_MAX_NDIM] = {0}, stop[JX_MAX_NDIM];
  bool trim = false;
  for (int d = 0; d < nd; d++) {
    lo[d] = pp->start[d];
    hi[d] = in[0].shape[d] - pp->start[d] - g->shape[d];
    stop[d] = g->shape[d];
    if (hi[d] < 0) stop[d] += hi[d], hi[d] = 0, trim = true;
  }
  if (trim) g = prim_slice(g, start, stop, NULL);
  out[0] = prim_pad(g, lo, hi, 0.0);
  return out[0] != NULL;
}
static bool t_rev(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                  const PrimParams *pp, jx_array **out) {
  out[0] = prim_bind(PRIM_rev, 1, &ct, pp);
  return out[0] != NULL;
}
/* fft (jax/_src/lax/fft.py: _fft_transpose_rule). FFT and IFFT are symmetric maps; the
 * half-spectrum ones weigh each bin by mask = [1, 2, .., 2, 1 if n is even] (the bins
 * that stand for two): RFFT^T ct = N * IRFFT(conj(ct) / mask), IRFFT^T ct =
 * conj(RFFT(ct) * mask / N). num * mask^power (power +-1) as a complex (.., n//2+1) array
 * of the given shape. */
static jx_array *fft_weights(const PrimParams *pp, double num, int power, jx_dtype cdtype, int ndim,
                             const int64_t *shape) {
  int64_t n = pp->shape[pp->ndim - 1], m = n / 2 + 1;
  double *w = malloc((size_t)m * sizeof *w);
  if (!w) {
    error_set(JX_ERR_OOM, "transpose: out of memory");
    return NULL;
  }
  for (int64_t k = 0; k < m; k++) w[k] = k == 0 || (n % 2 == 0 && k == m - 1) ? num : power > 0 ? 2 * num : num / 2;
  jx_array *v = jx_array_from(w, JX_FLOAT64, 1, &m);
  free(w);
  int last[1] = {ndim - 1};
  v = v ? prim_convert(v, cdtype, false) : NULL;
  return v ? prim_broadcast_in_dim(v, ndim, shape, last) : NULL;
}
static bool t_fft(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                  const PrimParams *pp, jx_array **out) {
  double N = 1;
  for (int d = 0; d < pp->ndim; d++) N *= (double)pp->shape[d];
  switch (pp->flags) {
  case FFT_TYPE_RFFT: { /* ct complex (.., n//2+1) -> real (.., n) */
    jx_array *w = fft_weights(pp, N, -1, ct->dtype, ct->ndim, ct->shape);
    jx_array *c = w ? prim_binary(PRIM_mul, prim_unary(PRIM_conj, ct), w) : NULL;
    out[0] = c ? prim_fft(c, FFT_TYPE_IRFFT, pp->ndim, pp->shape) : NULL;
    break;
  }
  case FFT_TYPE_IRFFT: { /* ct real (.., n) -> complex (.., n//2+1) */
    jx_array *y = prim_fft(ct, FFT_TYPE_RFFT, pp->ndim, pp->shape);
    jx_array *w = y ? fft_weights(pp, 1.0 / N, 1, y->dtype, y->ndim, y->shape) : NULL;
    out[0] = w ? prim_unary(PRIM_conj, prim_binary(PRIM_mul, y, w)) : NULL;
    break;
  }
  default: out[0] = prim_fft(ct, pp->flags, pp->ndim, pp->shape); break;
  }
  return out[0] != NULL;
}
static bool t_concatenate(jx_array *ct, int nin, jx_array *const *x, const bool *lin,
                          const Aval *in, const PrimParams *pp, jx_array **out) {
  int64_t start[JX_MAX_NDIM] = {0}, stop[JX_MAX_NDIM], off = 0;
  for (int i = 0; i < nin; i++) {
    out[i] = NULL;
    if (lin[i]) {
      memcpy(stop, ct->shape, sizeof(int64_t) * (size_t)ct->ndim);
      start[pp->axis] = off;
      stop[pp->axis] = off + in[i].shape[pp->axis];
      if (!(out[i] = prim_slice(ct, start, stop, NULL))) return false;
    }
    off += in[i].shape[pp->axis];
  }
  return true;
}
static bool t_select(jx_array *ct, int nin, jx_array *const *x, const bool *lin,
                     const Aval *in, const PrimParams *pp, jx_array **out) {
  jx_array *z = zeros_like(ct);
  out[0] = NULL;
  out[1] = lin[1] ? prim_select(x[0], ct, z) : NULL;
  out[2] = lin[2] ? prim_select(x[0], z, ct) : NULL;
  return (!lin[1] || out[1]) && (!lin[2] || out[2]);
}
static bool t_gather(jx_array *ct, int nin, jx_array *const *x, const bool *lin,
                     const Aval *in, const PrimParams *pp, jx_array **out) {
  /* gather's transpose is a scatter-add of ct into zeros at the same clamped indices */
  jx_array *z = tx_zeros(&in[0]);
  out[0] = z ? prim_scatter_add(z, x[1], ct, pp->axis) : NULL;
  out[1] = NULL;
  return out[0] != NULL;
}
static bool t_scatter_add(jx_array *ct, int nin, jx_array *const *x, const bool *lin,
                          const Aval *in, const PrimParams *pp, jx_array **out) {
  if (lin[1]) {
    error_set(JX_ERR_INTERNAL, "transpose: scatter_add with linear indices");
    return false;
  }
  out[0] = lin[0] ? ct : NULL;
  out[1] = NULL;
  out[2] = lin[2] ? prim_gather(ct, x[1], pp->axis) : NULL;
  return !lin[2] || out[2];
}
/* Position of value v in the sorted list of the n dims. */
static int rank_among(int v, int n, const int *dims) {
  int r = 0;
  for (int i = 0; i < n; i++) r += dims[i] < v;
  return r;
}
static bool t_dot_general(jx_array *ct, int nin, jx_array *const *x, const bool *lin,
                          const Aval *in, const PrimParams *pp, jx_array **out) {
  /* ct dims: [batch, lhs free, rhs free]. The operand's ct is ct contracted with the
   * other operand over the other's free dims, batched over batch dims, then permuted
   * back into the operand's dim order. */
  int nb = pp->nbatch, nc = pp->ncontract;
  for (int side = 0; side < 2; side++) {
    out[side] = NULL;
    if (!lin[side]) continue;
    const Aval *me = &in[side], *other = &in[1 - side];
    const int *my_c = side ? pp->rhs_contract : pp->lhs_contract;
    const int *my_b = side ? pp->rhs_batch : pp->lhs_batch;
    const int *ot_c = side ? pp->lhs_contract : pp->rhs_contract;
    const int *ot_b = side ? pp->lhs_batch : pp->rhs_batch;
    int nlf = in[0].ndim - nb - nc, nrf = in[1].ndim - nb - nc;
    int my_nf = side ? nrf : nlf, ot_nf = side ? nlf : nrf;
    int ct_ot_free0 = nb + (side ? 0 : nlf); /* where the other's free dims sit in ct */
    int ct_my_free0 = nb + (side ? nlf : 0);
    bool used[JX_MAX_NDIM] = {false};
    for (int i = 0; i < nc; i++) used[ot_c[i]] = true;
    for (int i = 0; i < nb; i++) used[ot_b[i]] = true;
    int lc[JX_MAX_NDIM], rc[JX_MAX_NDIM], lb[JX_MAX_NDIM], rb[JX_MAX_NDIM], k = 0;
    for (int d = 0; d < other->ndim; d++)
      if (!used[d]) lc[k] = ct_ot_free0 + k, rc[k] = d, k++;
    for (int i = 0; i < nb; i++) lb[i] = i, rb[i] = ot_b[i];
    /* lhs: dot(ct, y) has dims [batch, my free (ct order), y's contract dims (y order)].
     * rhs: dot(x, ct) has [batch, x's contract dims (x order), my free (ct order)] --
     * for a matrix product both are already in the operand's layout (dx = ct @ y^T,
     * dy = x^T @ ct), so no transpose (and no strided read of a weight gradient). */
    jx_array *r = side == 0 ? prim_dot_general(ct, x[1], ot_nf, lc, rc, nb, lb, rb)
                            : prim_dot_general(x[0], ct, ot_nf, rc, lc, nb, rb, lb);
    if (!r) return false;
    int ctr0 = side == 0 ? nb + my_nf : nb, free0 = side == 0 ? nb : nb + nc;
    bool mine_c[JX_MAX_NDIM] = {false}, mine_b[JX_MAX_NDIM] = {false};
    for (int i = 0; i < nc; i++) mine_c[my_c[i]] = true;
    for (int i = 0; i < nb; i++) mine_b[my_b[i]] = true;
    int perm[JX_MAX_NDIM], f = 0;
    bool identity = true;
    for (int d = 0; d < me->ndim; d++) {
      if (mine_b[d]) {
        for (int i = 0; i < nb; i++)
          if (my_b[i] == d) perm[d] = i;
      } else if (mine_c[d]) {
        for (int i = 0; i < nc; i++)
          if (my_c[i] == d) perm[d] = ctr0 + rank_among(ot_c[i], nc, ot_c);
      } else {
        perm[d] = free0 + f++;
      }
      identity &= perm[d] == d;
    }
    (void)ct_my_free0;
    out[side] = identity ? r : prim_transpose(r, perm);
    if (!out[side]) return false;
  }
  return true;
}

/* A call: its jaxpr transposed with respect to the linear operands, the others known
 * (transpose_partial evaluates what depends only on them first). */
static bool t_call(jx_array *const *cts, int nin, jx_array *const *x, const bool *lin,
                   const Aval *in, const PrimParams *pp, jx_array **out) {
  return transpose_partial(pp->jaxpr, lin, x, cts, out) == JX_OK;
}

/* A cond branch transposed (JAX's _cond_transpose): a jaxpr from the known operands
 * and the output cotangents to the linear operands' cotangents, its primal work
 * recomputed from the known operands (transpose_partial evaluates it first). */
static Jaxpr *transpose_branch(const Jaxpr *br, const bool *lin) {
  int nin = br->nin, nout = br->nout, nlin = 0;
  jx_array **known = calloc((size_t)nin + 1, sizeof *known), **ct_in = calloc((size_t)nin + 1, sizeof *ct_in);
  jx_array **cts = calloc((size_t)nout + 1, sizeof *cts), **res = calloc((size_t)nin + 1, sizeof *res);
  Trace *st = known && ct_in && cts && res ? stage_begin() : NULL;
  bool ok = st != NULL;
  for (int i = 0; ok && i < nin; i++)
    if (!lin[i]) ok = (known[i] = stage_new_input(st, &br->vars[br->invars[i]])) != NULL;
  for (int o = 0; ok && o < nout; o++) ok = (cts[o] = stage_new_input(st, &br->vars[br->outvars[o]])) != NULL;
  ok = ok && transpose_partial(br, lin, known, cts, ct_in) == JX_OK;
  for (int i = 0; ok && i < nin; i++)
    if (lin[i]) res[nlin++] = ct_in[i];
  Jaxpr *J = st ? stage_end(st, ok ? nlin : 0, res) : NULL;
  for (int i = 0; i < nin; i++) jx_free(ct_in[i]);
  if (!ok) jaxpr_free(J), J = NULL;
  if (!known || !ct_in || !cts || !res) error_set(JX_ERR_OOM, "transpose: out of memory");
  free(known), free(ct_in), free(cts), free(res);
  if (J && br->name && (J->name = malloc(strlen(br->name) + 12)))
    strcat(strcat(strcpy(J->name, "transpose("), br->name), ")");
  return J;
}

/* cond: a cond of the transposed branches on the same (known) index, given the known
 * operands and every output's cotangent (zeros instantiated). */
static bool t_cond(jx_array *const *cts, int nin, jx_array *const *x, const bool *lin,
                   const Aval *in, const PrimParams *pp, jx_array **out) {
  int n = pp->nbranches, nout = pp->branches[0]->nout, nargs = 0, nlin = 0;
  if (lin[0]) {
    error_set(JX_ERR_INTERNAL, "transpose: cond with a linear index");
    return false;
  }
  Jaxpr *T[PRIM_MAX_BRANCHES] = {NULL};
  jx_array **args = calloc((size_t)(nin + nout + 1), sizeof *args), **res = calloc((size_t)nin + 1, sizeof *res);
  bool ok = args && res;
  if (!ok) error_set(JX_ERR_OOM, "transpose: out of memory");
  for (int b = 0; ok && b < n; b++) ok = (T[b] = transpose_branch(pp->branches[b], lin + 1)) != NULL;
  for (int i = 1; ok && i < nin; i++)
    if (!lin[i]) args[nargs++] = x[i];
    else nlin++;
  for (int o = 0; ok && o < nout; o++) {
    const Jaxpr *b0 = pp->branches[0];
    ok = (args[nargs++] = cts[o] ? cts[o] : tx_zeros(&b0->vars[b0->outvars[o]])) != NULL;
  }
  ok = ok && prim_cond(n, T, x[0], nargs, args, res) == JX_OK;
  for (int i = 1, k = 0; ok && i < nin; i++)
    out[i] = lin[i] ? res[k++] : NULL;
  out[0] = NULL;
  (void)nlin;
  for (int b = 0; b < n; b++) jaxpr_free(T[b]);
  free(args), free(res);
  return ok;
}

/* Collectives (JAX's pmap-style rules, shard_map with check_vma=False): psum's transpose
 * is psum, all_gather's is psum_scatter and back, ppermute's the inverse permutation,
 * all_to_all's the one with split and concat axes swapped. */
static bool t_psum(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                   const PrimParams *pp, jx_array **out) {
  out[0] = prim_collective_like(PRIM_psum, ct, pp);
  return out[0] != NULL;
}
static bool t_all_gather(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                         const PrimParams *pp, jx_array **out) {
  out[0] = prim_collective_like(PRIM_psum_scatter, ct, pp);
  return out[0] != NULL;
}
static bool t_psum_scatter(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                           const PrimParams *pp, jx_array **out) {
  out[0] = prim_collective_like(PRIM_all_gather, ct, pp);
  return out[0] != NULL;
}
static bool t_ppermute(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                       const PrimParams *pp, jx_array **out) {
  PrimParams inv = *pp;
  memset(inv.perm, 0, sizeof inv.perm);
  for (int s = 0; s < PRIM_MAX_AXIS_SIZE; s++)
    if (pp->perm[s]) inv.perm[pp->perm[s] - 1] = (int16_t)(s + 1);
  out[0] = prim_collective_like(PRIM_ppermute, ct, &inv);
  return out[0] != NULL;
}
static bool t_all_to_all(jx_array *ct, int nin, jx_array *const *x, const bool *lin, const Aval *in,
                         const PrimParams *pp, jx_array **out) {
  PrimParams sw = *pp;
  sw.axis = pp->axis2;
  sw.axis2 = pp->axis;
  out[0] = prim_collective_like(PRIM_all_to_all, ct, &sw);
  return out[0] != NULL;
}

/* One line per linear primitive. Others never appear in linear jaxprs (linearize
 * evaluates them on known values); meeting one is an internal error. */
static const struct {
  TransposeRule one;   /* primitives with one result */
  TransposeRuleN many; /* primitives with several */
} transpose_rules[PRIM_NUM] = {
    [PRIM_neg] = {t_neg},
    [PRIM_add] = {t_add},
    [PRIM_sub] = {t_sub},
    [PRIM_mul] = {t_mul},
    [PRIM_div] = {t_div},
    [PRIM_convert_element_type] = {t_convert},
    [PRIM_real] = {t_real},
    [PRIM_imag] = {t_imag},
    [PRIM_conj] = {t_conj},
    [PRIM_complex] = {t_complex},
    [PRIM_reduce_sum] = {t_reduce_sum},
    [PRIM_reshape] = {t_reshape},
    [PRIM_transpose] = {t_transpose},
    [PRIM_broadcast_in_dim] = {t_broadcast},
    [PRIM_pad] = {t_pad},
    [PRIM_slice] = {t_slice},
    [PRIM_rev] = {t_rev},
    [PRIM_concatenate] = {t_concatenate},
    [PRIM_select] = {t_select},
    [PRIM_gather] = {t_gather},
    [PRIM_scatter_add] = {t_scatter_add},
    [PRIM_dot_general] = {t_dot_general},
    [PRIM_jit] = {.many = t_call},
    [PRIM_triangular_solve] = {linalg_transpose_triangular_solve},
    [PRIM_tridiagonal_solve] = {linalg_transpose_tridiagonal_solve},
    [PRIM_fft] = {t_fft},
    [PRIM_cond] = {.many = t_cond},
    [PRIM_checkpoint] = {.many = t_call}, /* recomputes what the policy did not save */
    [PRIM_custom_lin] = {.many = custom_transpose_custom_lin}, /* bwd (transform/custom.c) */
    [PRIM_custom_vjp_call] = {.many = custom_transpose_custom_vjp_call}, /* bwd, no residuals */
    [PRIM_while] = {.many = loops_transpose_while},
    [PRIM_scan] = {.many = loops_transpose_scan},
    [PRIM_psum] = {t_psum},
    [PRIM_all_gather] = {t_all_gather},
    [PRIM_psum_scatter] = {t_psum_scatter},
    [PRIM_ppermute] = {t_ppermute},
    [PRIM_all_to_all] = {t_all_to_all},
    [PRIM_shard_map] = {.many = shard_map_transpose}, /* transform/shard_map.c */
};

bool transpose_has_rule(Prim p, const char **absent) {
  /* JVP rules apply only these primitives to tangents; everything else is nonlinear
   * and evaluated on known values during linearize, so it never needs transposing. */
  bool has = (unsigned)p < PRIM_NUM && (transpose_rules[p].one || transpose_rules[p].many);
  if (absent) *absent = (unsigned)p < PRIM_NUM && !has ? "not linear in any operand" : NULL;
  return has;
}

/* ct[v] += g */
static bool accumulate(jx_array **ct, int v, jx_array *g) {
  if (!g) return true;
  ct[v] = ct[v] ? prim_binary(PRIM_add, ct[v], g) : g;
  return ct[v] != NULL;
}

jx_status transpose_partial(const Jaxpr *j, const bool *linear, jx_array *const *known,
                            jx_array *const *ct_out, jx_array **ct_in) {
  int nv = j->nvars ? j->nvars : 1;
  jx_array **ct = calloc((size_t)nv, sizeof *ct);
  bool *is_known = calloc((size_t)nv, 1);
  jx_array **val = calloc((size_t)nv, sizeof *val);
  int cap = 8;
  jx_array **x = malloc((size_t)cap * sizeof *x), **g = malloc((size_t)cap * sizeof *g);
  bool *lin = malloc((size_t)cap * sizeof *lin);
  Aval *in = malloc((size_t)cap * sizeof *in);
  if (!ct || !is_known || !val || !x || !g || !lin || !in) {
    free(ct), free(is_known), free(val), free(x), free(g), free(lin), free(in);
    error_set(JX_ERR_OOM, "transpose: out of memory");
    return JX_ERR_OOM;
  }
  for (int i = 0; i < j->nconst; i++) is_known[j->constvars[i]] = true, val[j->constvars[i]] = j->consts[i];
  for (int i = 0; i < j->nin; i++)
    if (linear && !linear[i]) is_known[j->invars[i]] = true, val[j->invars[i]] = known[i];
  jx_scope_begin();
  bool ok = true;
  /* Forward: equations of known values only are evaluated (they are not linear). */
  for (int e = 0; ok && e < j->neqns; e++) {
    const JaxprEqn *q = &j->eqns[e];
    bool all = true;
    for (int i = 0; i < q->nin; i++) all &= is_known[q->in[i]];
    if (!all) continue;
    jx_array **args = malloc((size_t)(q->nin + 1) * sizeof *args), **res = malloc((size_t)(q->nout + 1) * sizeof *res);
    ok = args && res;
    for (int i = 0; ok && i < q->nin; i++) args[i] = val[q->in[i]];
    ok = ok && prim_bind_n(q->prim, q->nin, args, &q->params, q->nout, res) == JX_OK;
    for (int o = 0; ok && o < q->nout; o++) is_known[q->out[o]] = true, val[q->out[o]] = res[o];
    free(args), free(res);
  }
  for (int i = 0; ok && i < j->nout; i++)
    if (!is_known[j->outvars[i]]) ok = accumulate(ct, j->outvars[i], ct_out[i]);
  /* Backward over the equations with a linear operand. */
  for (int e = j->neqns - 1; ok && e >= 0; e--) {
    const JaxprEqn *q = &j->eqns[e];
    bool any_ct = false, any_lin = false;
    for (int o = 0; o < q->nout; o++) any_ct |= ct[q->out[o]] != NULL;
    for (int i = 0; i < q->nin; i++) any_lin |= !is_known[q->in[i]];
    if (!any_ct || !any_lin) continue; /* zero cotangent, or nothing linear */
    if (!transpose_rules[q->prim].one && !transpose_rules[q->prim].many) {
      error_set(JX_ERR_INTERNAL, "transpose: no rule for %s in a linear jaxpr", prim_name(q->prim));
      ok = false;
      break;
    }
    if (q->nin > cap || q->nout > cap) {
      cap = (q->nin > q->nout ? q->nin : q->nout) * 2;
      free(x), free(g), free(lin), free(in);
      x = malloc((size_t)cap * sizeof *x), g = malloc((size_t)cap * sizeof *g);
      lin = malloc((size_t)cap * sizeof *lin), in = malloc((size_t)cap * sizeof *in);
      if (!x || !g || !lin || !in) {
        error_set(JX_ERR_OOM, "transpose: out of memory");
        ok = false;
        break;
      }
    }
    for (int i = 0; i < q->nin; i++) {
      lin[i] = !is_known[q->in[i]];
      x[i] = lin[i] ? NULL : val[q->in[i]];
      in[i] = j->vars[q->in[i]];
      g[i] = NULL;
    }
    if (transpose_rules[q->prim].many) {
      jx_array **cts = malloc((size_t)q->nout * sizeof *cts);
      ok = cts != NULL;
      for (int o = 0; ok && o < q->nout; o++) cts[o] = ct[q->out[o]];
      ok = ok && transpose_rules[q->prim].many(cts, q->nin, x, lin, in, &q->params, g);
      free(cts);
    } else {
      ok = transpose_rules[q->prim].one(ct[q->out[0]], q->nin, x, lin, in, &q->params, g);
    }
    for (int i = 0; ok && i < q->nin; i++)
      if (lin[i]) ok = accumulate(ct, q->in[i], g[i]);
  }
  int nct = 0;
  for (int i = 0; i < j->nin; i++) {
    if (linear && !linear[i]) continue;
    int v = j->invars[i];
    ct_in[i] = !ok ? NULL : ct[v] ? jx_ref(ct[v]) : tx_zeros(&j->vars[v]);
    ok = ok && ct_in[i];
    nct++;
  }
  /* scope_end keeps a dense list: the linear inputs' cotangents */
  jx_array **keep = malloc((size_t)(nct + 1) * sizeof *keep);
  int k = 0;
  for (int i = 0; keep && i < j->nin; i++)
    if (!linear || linear[i]) keep[k++] = ok ? ct_in[i] : NULL;
  ok = ok && keep;
  jx_scope_end(ok ? nct : 0, keep);
  for (int i = 0; i < j->nin; i++)
    if (!ok || (linear && !linear[i])) ct_in[i] = NULL;
  free(keep);
  free(ct), free(is_known), free(val), free(x), free(g), free(lin), free(in);
  return ok ? JX_OK : (jx_last_status() ? jx_last_status() : JX_ERR_INTERNAL);
}

jx_status transpose_jaxpr(const Jaxpr *j, jx_array *const *ct_out, jx_array **ct_in) {
  return transpose_partial(j, NULL, NULL, ct_out, ct_in);
}
