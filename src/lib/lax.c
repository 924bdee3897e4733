/* lax.c -- jax.lax functions built from primitives: dot_general, einsum (NumPy syntax,
 * lowered to diagonals, reduce_sum and dot_general), the cumulative reductions as
 * log-step scans, dynamic_slice / dynamic_update_slice (clamped starts, via gather),
 * select_n, round with both rounding methods, and jnp.take_along_axis. The windowed
 * operations (conv, reduce_window, pooling) live in lax_conv.c. Semantics from
 * jax/_src/lax/lax.py, slicing.py, control_flow/loops.py and numpy/einsum.py. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/numpy/np.h"
#include "lib/random.h"
#include "lib/special.h"
#include "transform/transform.h"

/* Every public function runs in its own scope: temporaries die at its end, only the
 * result survives (a NULL result is fine). */
/* A 0-d array broadcast to shape. */
static jx_array *bcast0(jx_array *s, int ndim, const int64_t *shape) {
  int none[1] = {0};
  if (!s || ndim == 0) return jx_ref(s);
  return prim_broadcast_in_dim(s, ndim, shape, none);
}

static jx_array *bin(Prim p, jx_array *x, jx_array *y) { return prim_binary(p, x, y); }

/* A constant with x's shape, dtype and weak type. */
static jx_array *const_like(jx_array *x, double value) {
  return np_convert(np_full(value, x->dtype, x->ndim, x->shape), x->dtype, x->weak);
}

/* The dtype a contraction computes in: bool as int32 (an or of ands is a count tested
 * != 0), float16/bfloat16 in float32 (as XLA on CPU); the result converts back. */
static jx_dtype compute_dtype(jx_dtype d) {
  if (d == JX_BOOL) return JX_INT32;
  if (d == JX_FLOAT16 || d == JX_BFLOAT16) return JX_FLOAT32;
  return d;
}

/* ------------------------------------------------------------ dot_general */

/* Normalizes and validates one operand's contracting + batch axes (no repeats). */
static bool dot_axes(const char *fn, const char *which, const jx_array *x, int nc,
                     const int *c, int nb, const int *b, int *cn, int *bn) {
  bool used[JX_MAX_NDIM] = {false};
  for (int i = 0; i < nc + nb; i++) {
    int a = i < nc ? c[i] : b[i - nc];
    if (!array_normalize_axis(fn, &a, x->ndim)) return false;
    if (used[a]) {
      error_set(JX_ERR_SHAPE, "%s: %s axis %d is named twice in the dimension numbers", fn,
                which, a);
      return false;
    }
    used[a] = true;
    if (i < nc) cn[i] = a;
    else bn[i - nc] = a;
  }
  return true;
}

/* The order JAX's _dot_general_dtype_rule ranks operand dtypes by (XLA's
 * primitive_util HigherPrecisionType): complex, then the real part's finfo maxexp and
 * nmant (-1 for integers), its bit width, then signed over unsigned; written as one
 * integer, larger is higher. */
static int64_t dot_dtype_rank(jx_dtype d) {
  jx_dtype c = dtype_is_complex(d) ? dtype_real_part(d) : d;
  int maxexp = -1, nmant = -1;
  switch (c) {
  case JX_FLOAT16: maxexp = 16, nmant = 10; break;
  case JX_BFLOAT16: maxexp = 128, nmant = 7; break;
  case JX_FLOAT32: maxexp = 128, nmant = 23; break;
  case JX_FLOAT64: maxexp = 1024, nmant = 52; break;
  default: break;
  }
  int bits = c == JX_BOOL ? 1 : dtype_bits(c);
  return ((((int64_t)dtype_is_complex(d) * 2048 + (maxexp + 1)) * 64 + (nmant + 1)) * 128 + bits) * 2 +
         !dtype_is_unsigned(c);
}

/* lax.dot_general after validation: the result dtype is the higher of the operands'
 * (dot_dtype_rank; not jnp's promotion: int8 x uint8 is int8, float16 x bfloat16
 * bfloat16), both converted to it as XLA's operand upcasting does; contract in the
 * compute dtype, convert back. Weak only where both are. Result dims: batch, x's free
 * dims, y's free dims. Call inside a scope. */
static jx_array *dot_general_impl(const char *fn, jx_array *x, jx_array *y, int nc,
                                  const int *xc, const int *yc, int nb, const int *xb,
                                  const int *yb) {
  int64_t rx = dot_dtype_rank(x->dtype), ry = dot_dtype_rank(y->dtype);
  jx_dtype out = rx >= ry ? x->dtype : y->dtype, comp = compute_dtype(out);
  if (rx == ry && x->dtype != y->dtype) {
    error_set(JX_ERR_DTYPE, "%s: argument type error: %s, %s", fn, jx_dtype_name(x->dtype), jx_dtype_name(y->dtype));
    return NULL;
  }
  bool weak = x->weak && y->weak;
  jx_array *r = prim_dot_general(np_convert(np_convert(x, out, false), comp, false),
                                 np_convert(np_convert(y, out, false), comp, false), nc, xc, yc, nb, xb, yb);
  return np_convert(r, out, weak);
}

jx_array *jx_lax_dot_general(jx_array *lhs, jx_array *rhs, int ncontract,
                             const int *lhs_contracting, const int *rhs_contracting,
                             int nbatch, const int *lhs_batch, const int *rhs_batch) {
  const char *fn = "jx_lax_dot_general";
  if (np_null_arg(fn, lhs, "lhs") || np_null_arg(fn, rhs, "rhs")) return NULL;
  char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
  if (ncontract < 0 || nbatch < 0 || ncontract + nbatch > lhs->ndim ||
      ncontract + nbatch > rhs->ndim) {
    error_set(JX_ERR_SHAPE, "%s: %d contracting and %d batch dims do not fit lhs %s and "
              "rhs %s", fn, ncontract, nbatch, array_describe(b0, lhs),
              array_describe(b1, rhs));
    return NULL;
  }
  if ((ncontract && (np_null_arg(fn, lhs_contracting, "lhs_contracting") ||
                     np_null_arg(fn, rhs_contracting, "rhs_contracting"))) ||
      (nbatch && (np_null_arg(fn, lhs_batch, "lhs_batch") || np_null_arg(fn, rhs_batch, "rhs_batch"))))
    return NULL;
  int xc[JX_MAX_NDIM], yc[JX_MAX_NDIM], xb[JX_MAX_NDIM], yb[JX_MAX_NDIM];
  if (!dot_axes(fn, "lhs", lhs, ncontract, lhs_contracting, nbatch, lhs_batch, xc, xb) ||
      !dot_axes(fn, "rhs", rhs, ncontract, rhs_contracting, nbatch, rhs_batch, yc, yb))
    return NULL;
  for (int i = 0; i < ncontract + nbatch; i++) {
    bool con = i < ncontract;
    int a = con ? xc[i] : xb[i - ncontract], b = con ? yc[i] : yb[i - ncontract];
    if (lhs->shape[a] != rhs->shape[b]) {
      error_set(JX_ERR_SHAPE, "%s: lhs %s axis %d and rhs %s axis %d are %s dims of "
                "different sizes", fn, array_describe(b0, lhs), a, array_describe(b1, rhs),
                b, con ? "contracting" : "batch");
      return NULL;
    }
  }
  jx_scope_begin();
  return np_scope_return(dot_general_impl(fn, lhs, rhs, ncontract, xc, yc, nbatch, xb, yb));
}

/* ----------------------------------------------------------------- einsum */

/* Labels: 'A'-'Z' are 0-25, 'a'-'z' 26-51 (so ascending ids are ASCII order, the order
 * of an implicit output), and the dims an ellipsis stands for 52, 53, ... (right
 * aligned across operands, as NumPy broadcasts them). */
#define EIN_LETTERS 52
#define EIN_LABELS (EIN_LETTERS + JX_MAX_NDIM)

typedef struct Term {
  jx_array *a;
  int n;                  /* rank of a */
  int lab[JX_MAX_NDIM];   /* label of each dim */
} Term;

static int ein_letter(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + c - 'a';
  return -1;
}
static char ein_char(int l) {
  return l < 26 ? (char)('A' + l) : l < EIN_LETTERS ? (char)('a' + l - 26) : '.';
}

/* Parses one term ("ij", "i...j") into letters; *ell is the position of its ellipsis
 * among them (-1 if none). Returns the letter count, -1 on error. */
static int ein_term(const char *fn, const char *s, size_t len, int *letters, int *ell) {
  int n = 0;
  *ell = -1;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '.') {
      if (*ell >= 0 || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.') {
        error_set(JX_ERR_VALUE, "%s: bad ellipsis in term \"%.*s\" (one \"...\" at most)",
                  fn, (int)len, s);
        return -1;
      }
      *ell = n;
      i += 2;
      continue;
    }
    int l = ein_letter(s[i]);
    if (l < 0) {
      error_set(JX_ERR_VALUE, "%s: bad subscript '%c' in term \"%.*s\" (letters a-z, A-Z "
                "and one \"...\" only)", fn, s[i], (int)len, s);
      return -1;
    }
    if (n >= JX_MAX_NDIM) {
      error_set(JX_ERR_SHAPE, "%s: term \"%.*s\" has more than %d subscripts (arrays have at "
                "most %d dims)", fn, (int)len, s, JX_MAX_NDIM, JX_MAX_NDIM);
      return -1;
    }
    letters[n++] = l;
  }
  return n;
}

/* Takes the diagonal over every label repeated within one term (np.einsum("ii->i")):
 * the two dims go last, merge, and a slice with step m + 1 keeps the diagonal. */
static bool ein_diagonals(const char *fn, Term *t) {
  for (;;) {
    int p = -1, q = -1;
    for (int i = 0; i < t->n && p < 0; i++)
      for (int j = i + 1; j < t->n; j++)
        if (t->lab[i] == t->lab[j]) {
          p = i, q = j;
          break;
        }
    if (p < 0) return true;
    int64_t m = t->a->shape[p];
    if (t->a->shape[q] != m) {
      error_set(JX_ERR_SHAPE, "%s: label '%c' repeated in one operand has sizes %lld and "
                "%lld", fn, ein_char(t->lab[p]), (long long)m, (long long)t->a->shape[q]);
      return false;
    }
    int perm[JX_MAX_NDIM], lab[JX_MAX_NDIM], k = 0;
    int64_t s[JX_MAX_NDIM];
    for (int d = 0; d < t->n; d++)
      if (d != p && d != q) perm[k] = d, lab[k] = t->lab[d], s[k] = t->a->shape[d], k++;
    perm[k] = p, perm[k + 1] = q;
    s[k] = m * m;
    jx_array *r = prim_reshape(prim_transpose(t->a, perm), k + 1, s);
    int64_t start[JX_MAX_NDIM] = {0}, step[JX_MAX_NDIM];
    for (int d = 0; d <= k; d++) step[d] = 1;
    step[k] = m + 1;
    t->a = r ? prim_slice(r, start, s, step) : NULL;
    if (!t->a) return false;
    lab[k] = t->lab[p];
    t->n = k + 1;
    memcpy(t->lab, lab, sizeof lab);
  }
}

/* Drops the dims of t whose label is not in keep: sums them (size 1: a reshape). */
static bool ein_keep(Term *t, const bool *keep) {
  bool mask[JX_MAX_NDIM] = {false}, any = false;
  int k = 0;
  for (int d = 0; d < t->n; d++) {
    mask[d] = !keep[t->lab[d]];
    any |= mask[d];
    if (!mask[d]) t->lab[k++] = t->lab[d];
  }
  if (!any) return true;
  t->a = prim_reduce(PRIM_reduce_sum, t->a, mask);
  t->n = k;
  return t->a != NULL;
}

/* Contracts a with b: labels in both and in `later` are batch dims, other shared labels
 * contract. Result labels: batch, a's free, b's free (dot_general's order). */
static bool ein_contract(Term *a, const Term *b, const bool *later) {
  int ac[JX_MAX_NDIM], bc[JX_MAX_NDIM], ab[JX_MAX_NDIM], bb[JX_MAX_NDIM], nc = 0, nb = 0;
  int lab[JX_MAX_NDIM], n = 0;
  bool shared_a[JX_MAX_NDIM] = {false}, shared_b[JX_MAX_NDIM] = {false};
  for (int i = 0; i < a->n; i++)
    for (int j = 0; j < b->n; j++)
      if (a->lab[i] == b->lab[j]) {
        shared_a[i] = shared_b[j] = true;
        if (later[a->lab[i]]) ab[nb] = i, bb[nb] = j, lab[nb++] = a->lab[i];
        else ac[nc] = i, bc[nc++] = j;
      }
  n = nb;
  for (int i = 0; i < a->n; i++)
    if (!shared_a[i]) lab[n++] = a->lab[i];
  for (int j = 0; j < b->n; j++)
    if (!shared_b[j]) lab[n++] = b->lab[j];
  if (n > JX_MAX_NDIM) {
    error_set(JX_ERR_UNSUPPORTED, "jx_einsum: an intermediate result would have rank %d", n);
    return false;
  }
  a->a = prim_dot_general(a->a, b->a, nc, ac, bc, nb, ab, bb);
  a->n = n;
  memcpy(a->lab, lab, sizeof lab);
  return a->a != NULL;
}

/* Call inside a scope. */
static jx_array *einsum_impl(const char *fn, const char *subscripts, int n,
                             jx_array *const *ops) {
  /* ---- parse: terms, their labels, the output */
  size_t len = strlen(subscripts);
  char *buf = malloc(len + 1);
  Term *t = calloc((size_t)n, sizeof *t);
  jx_array *result = NULL;
  if (!buf || !t) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    goto done;
  }
  size_t m = 0;
  for (size_t i = 0; i < len; i++)
    if (subscripts[i] != ' ') buf[m++] = subscripts[i];
  buf[m] = '\0';
  char *arrow = strstr(buf, "->");
  if (arrow && strstr(arrow + 2, "->")) {
    error_set(JX_ERR_VALUE, "%s: \"%s\" has more than one \"->\"", fn, subscripts);
    goto done;
  }
  size_t in_len = arrow ? (size_t)(arrow - buf) : m;
  int nterms = 1;
  for (size_t i = 0; i < in_len; i++) nterms += buf[i] == ',';
  if (nterms != n) {
    error_set(JX_ERR_VALUE, "%s: \"%s\" has %d operand terms but %d operands were given", fn,
              subscripts, nterms, n);
    goto done;
  }
  int count[EIN_LABELS] = {0}, E = 0;
  int64_t size[EIN_LABELS];
  for (int l = 0; l < EIN_LABELS; l++) size[l] = 1;
  const char *s = buf;
  for (int k = 0; k < n; k++) {
    const char *e = s;
    while (e < buf + in_len && *e != ',') e++;
    int letters[JX_MAX_NDIM], ell, nl = ein_term(fn, s, (size_t)(e - s), letters, &ell);
    if (nl < 0) goto done;
    jx_array *a = ops[k];
    int ne = a->ndim - nl;
    if (ne < 0 || (ell < 0 && ne != 0)) {
      char b[ARRAY_DESCRIBE_BUF];
      error_set(JX_ERR_SHAPE, "%s: term \"%.*s\" does not fit operand %d %s", fn,
                (int)(e - s), s, k, array_describe(b, a));
      goto done;
    }
    if (ne > E) E = ne;
    t[k].n = a->ndim;
    for (int d = 0, li = 0; d < a->ndim; d++) {
      if (ell >= 0 && d >= ell && d < ell + ne) {
        t[k].lab[d] = -1 - (ne - (d - ell)); /* resolved below, once E is known */
      } else {
        t[k].lab[d] = letters[li++];
      }
    }
    s = e + 1;
  }
  for (int k = 0; k < n; k++)
    for (int d = 0; d < t[k].n; d++) {
      int l = t[k].lab[d];
      if (l < 0) l = t[k].lab[d] = EIN_LETTERS + E + l + 1; /* right-aligned in [0, E) */
      count[l]++;
      int64_t sz = ops[k]->shape[d];
      if (size[l] != 1 && sz != 1 && sz != size[l]) {
        error_set(JX_ERR_SHAPE, "%s: label '%c' has sizes %lld and %lld (sizes must match "
                  "or be 1)", fn, ein_char(l), (long long)size[l], (long long)sz);
        goto done;
      }
      if (sz != 1) size[l] = sz;
    }
  int out[EIN_LABELS], nout = 0;
  bool in_out[EIN_LABELS] = {false};
  if (arrow) {
    int letters[JX_MAX_NDIM], ell;
    int nl = ein_term(fn, arrow + 2, strlen(arrow + 2), letters, &ell);
    if (nl < 0) goto done; /* a ',' in the output is a bad subscript there */
    for (int i = 0; i <= nl; i++) {
      if (i == ell)
        for (int j = 0; j < E; j++) out[nout++] = EIN_LETTERS + j;
      if (i == nl) break;
      int l = letters[i];
      if (in_out[l] || !count[l]) {
        error_set(JX_ERR_VALUE, "%s: output label '%c' of \"%s\" %s", fn, ein_char(l),
                  subscripts, in_out[l] ? "appears twice" : "is in no input");
        goto done;
      }
      in_out[l] = true;
      out[nout++] = l;
    }
  } else { /* implicit: the ellipsis dims, then the labels seen once, sorted */
    for (int j = 0; j < E; j++) out[nout++] = EIN_LETTERS + j;
    for (int l = 0; l < EIN_LETTERS; l++)
      if (count[l] == 1) out[nout++] = l;
  }
  for (int i = 0; i < nout; i++) in_out[out[i]] = true;
  if (nout > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "%s: the result would have rank %d", fn, nout);
    goto done;
  }

  /* ---- lower: promote; per term diagonals, broadcast size-1 dims dropped, unique
   * labels summed; then contract left to right. */
  bool weak;
  jx_dtype dt = np_result_type(n, ops, &weak), comp = compute_dtype(dt);
  for (int k = 0; k < n; k++) {
    t[k].a = np_convert(ops[k], comp, false);
    if (!t[k].a || !ein_diagonals(fn, &t[k])) goto done;
    int64_t sh[JX_MAX_NDIM];
    int nk = 0;
    for (int d = 0; d < t[k].n; d++) /* a size-1 dim of a label sized > 1 broadcasts */
      if (!(t[k].a->shape[d] == 1 && size[t[k].lab[d]] != 1))
        sh[nk] = t[k].a->shape[d], t[k].lab[nk++] = t[k].lab[d];
    if (nk != t[k].n) t[k].a = prim_reshape(t[k].a, nk, sh), t[k].n = nk;
  }
  for (int k = 0; k < n; k++) { /* labels no other term and not the output needs */
    bool keep[EIN_LABELS];
    memcpy(keep, in_out, sizeof keep);
    for (int j = 0; j < n; j++)
      if (j != k)
        for (int d = 0; d < t[j].n; d++) keep[t[j].lab[d]] = true;
    if (!ein_keep(&t[k], keep)) goto done;
  }
  Term acc = t[0];
  for (int k = 1; k < n; k++) {
    bool later[EIN_LABELS];
    memcpy(later, in_out, sizeof later);
    for (int j = k + 1; j < n; j++)
      for (int d = 0; d < t[j].n; d++) later[t[j].lab[d]] = true;
    bool keep_a[EIN_LABELS], keep_b[EIN_LABELS];
    memcpy(keep_a, later, sizeof later);
    memcpy(keep_b, later, sizeof later);
    for (int d = 0; d < t[k].n; d++) keep_a[t[k].lab[d]] = true;
    for (int d = 0; d < acc.n; d++) keep_b[acc.lab[d]] = true;
    if (!ein_keep(&acc, keep_a) || !ein_keep(&t[k], keep_b) || !ein_contract(&acc, &t[k], later))
      goto done;
  }
  bool keep_out[EIN_LABELS];
  memcpy(keep_out, in_out, sizeof keep_out);
  if (!ein_keep(&acc, keep_out)) goto done;
  /* acc holds each output label once (a label sized 1 everywhere kept its dim). */
  int perm[JX_MAX_NDIM];
  for (int i = 0; i < nout; i++) {
    perm[i] = -1;
    for (int d = 0; d < acc.n; d++)
      if (acc.lab[d] == out[i]) perm[i] = d;
    if (!JX_CHECK(perm[i] >= 0 && acc.n == nout)) goto done;
  }
  result = np_convert(prim_transpose(acc.a, perm), dt, weak);
done:
  free(buf);
  free(t);
  return result;
}

jx_array *jx_einsum(const char *subscripts, int n, jx_array *const *operands) {
  const char *fn = "jx_einsum";
  if (np_null_arg(fn, subscripts, "subscripts")) return NULL;
  if (n < 1) {
    error_set(JX_ERR_VALUE, "%s: needs at least one operand, got %d", fn, n);
    return NULL;
  }
  if (np_null_arg(fn, operands, "operands")) return NULL;
  for (int k = 0; k < n; k++)
    if (!operands[k]) {
      error_set(JX_ERR_VALUE, "%s: operand %d is NULL", fn, k);
      return NULL;
    }
  jx_scope_begin();
  return np_scope_return(einsum_impl(fn, subscripts, n, operands));
}

/* ------------------------------------------------------- cumulative reductions */

typedef enum Cum { CUM_SUM, CUM_PROD, CUM_MAX, CUM_MIN } Cum;

/* XLA's CPU compiler scans up to this many elements directly (reduce-window rewriter's
 * base length, xla/service/cpu/cpu_compiler.cc); longer scans are tiled into rows of
 * it (xla_scan). */
enum { XLA_SCAN_BASE = 16 };

/* op(acc, x) as XLA's reducers take them; complex max / min are lexicographic (jnp's
 * maximum / minimum: lax.max's complex lowering). */
static jx_array *combine(Prim op, jx_array *acc, jx_array *x) {
  if (!acc || !x) return NULL;
  if (dtype_is_complex(acc->dtype) && op == PRIM_max) return jx_maximum(acc, x);
  if (dtype_is_complex(acc->dtype) && op == PRIM_min) return jx_minimum(acc, x);
  return bin(op, acc, x);
}

/* An inclusive scan along axis 1 of x (rows, n), n <= XLA_SCAN_BASE, the way XLA's CPU
 * evaluates a reduce_window whose window covers the axis: output k starts from the
 * identity and combines the window's elements in increasing index order -- elements
 * 0..k forward (a running combine, n - 1 ops), k..n-1 reverse (n (n - 1) / 2 ops).
 * Call inside a scope. */
static jx_array *window_scan(jx_array *x, bool reverse, Prim op, double id) {
  if (!x || x->shape[1] == 0) return jx_ref(x);
  int64_t n = x->shape[1], rows = x->shape[0];
  jx_array *elem[XLA_SCAN_BASE] = {NULL}, *out[XLA_SCAN_BASE];
  for (int64_t k = 0; k < n; k++)
    elem[k] = prim_slice(x, (int64_t[]){0, k}, (int64_t[]){rows, k + 1}, NULL);
  jx_array *idc = bcast0(np_full(id, x->dtype, 0, NULL), 2, (int64_t[]){rows, 1});
  for (int64_t k = 0; k < n; k++) {
    if (!reverse) {
      out[k] = combine(op, k ? out[k - 1] : idc, elem[k]);
      continue;
    }
    out[k] = idc;
    for (int64_t i = k; i < n; i++) out[k] = combine(op, out[k], elem[i]);
  }
  return jx_concatenate((int)n, out, 1);
}

/* A float or complex cumulative sum or product (or a complex cumulative max / min:
 * lexicographic, order-dependent where a part is NaN) along axis 1 of x (rows, n), bit
 * for bit as XLA's CPU computes lax.cumsum / cumprod / cummax / cummin (a reduce_window,
 * rewritten by reduce_window_rewriter.cc TryOptimizeCumSumOrProd): up to XLA_SCAN_BASE
 * elements by window_scan; longer, padded with the identity to m rows of XLA_SCAN_BASE,
 * each row scanned by window_scan, the rows' totals (last column forward, first
 * reverse) scanned by this function again and shifted by one row (an exclusive scan),
 * and each row combined with the total of the rows before it (after it, reverse). O(n)
 * work, log16(n) levels. Call inside a scope. */
static jx_array *xla_scan(jx_array *x, bool reverse, Prim op, double id) {
  if (!x) return NULL;
  int64_t rows = x->shape[0], n = x->shape[1];
  if (n <= XLA_SCAN_BASE) return window_scan(x, reverse, op, id);
  int64_t m = (n + XLA_SCAN_BASE - 1) / XLA_SCAN_BASE;
  jx_array *padded = m * XLA_SCAN_BASE == n ? jx_ref(x)
                     : prim_pad(x, (int64_t[]){0, 0}, (int64_t[]){0, m * XLA_SCAN_BASE - n}, id);
  jx_array *tiles = window_scan(prim_reshape(padded, 2, (int64_t[]){rows * m, XLA_SCAN_BASE}),
                                reverse, op, id); /* (rows m, XLA_SCAN_BASE) */
  int64_t col = reverse ? 0 : XLA_SCAN_BASE - 1;
  jx_array *totals = prim_reshape(prim_slice(tiles, (int64_t[]){0, col},
                                             (int64_t[]){rows * m, col + 1}, NULL),
                                  2, (int64_t[]){rows, m});
  jx_array *incl = xla_scan(totals, reverse, op, id), *excl; /* (rows, m) */
  if (reverse)
    excl = prim_pad(prim_slice(incl, (int64_t[]){0, 1}, (int64_t[]){rows, m}, NULL),
                    (int64_t[]){0, 0}, (int64_t[]){0, 1}, id);
  else
    excl = prim_pad(prim_slice(incl, (int64_t[]){0, 0}, (int64_t[]){rows, m - 1}, NULL),
                    (int64_t[]){0, 1}, (int64_t[]){0, 0}, id);
  jx_array *y = combine(op, prim_reshape(tiles, 3, (int64_t[]){rows, m, XLA_SCAN_BASE}),
                    prim_broadcast_in_dim(excl, 3, (int64_t[]){rows, m, XLA_SCAN_BASE}, (int[]){0, 1}));
  return prim_slice(prim_reshape(y, 2, (int64_t[]){rows, m * XLA_SCAN_BASE}), (int64_t[]){0, 0},
                    (int64_t[]){rows, n}, NULL);
}

/* A log-step (Hillis-Steele) inclusive scan along axis: for offsets 1, 2, 4, ... < n,
 * y = combine(y, y shifted by the offset, the vacated end filled with the identity).
 * ceil(log2 n) passes of n combines each, every shift a pad + slice view: O(n log n).
 * Exact whatever the order (integer sums and products wrap; real max and min), so used
 * where XLA's order cannot show; float and complex sums and products, and complex max
 * and min (identity -inf / inf + 0i, as JAX's), go through xla_scan, the axis moved
 * last. Call inside a scope. */
static jx_array *cum_scan(jx_array *x, int axis, bool reverse, Cum op) {
  static const Prim prim_of[] = {PRIM_add, PRIM_mul, PRIM_max, PRIM_min};
  jx_dtype d = x->dtype;
  double id = op == CUM_SUM ? 0 : op == CUM_PROD ? 1
            : op == CUM_MAX ? (dtype_is_inexact(d) ? -INFINITY : dtype_min_value(d))
                            : (dtype_is_inexact(d) ? INFINITY : dtype_max_value(d));
  if (((op == CUM_SUM || op == CUM_PROD) && dtype_is_inexact(d)) || dtype_is_complex(d)) {
    /* the axis swapped with the last, as XLA's rewriter does, the others flattened */
    int perm[JX_MAX_NDIM], last = x->ndim - 1;
    for (int i = 0; i < x->ndim; i++) perm[i] = i;
    perm[axis] = last, perm[last] = axis;
    jx_array *t = axis == last ? jx_ref(x) : prim_transpose(x, perm);
    if (!t) return NULL;
    int64_t shape[2] = {1, t->shape[last]};
    for (int i = 0; i < last; i++) shape[0] *= t->shape[i];
    jx_array *y = prim_reshape(xla_scan(prim_reshape(t, 2, shape), reverse, prim_of[op], id),
                               t->ndim, t->shape);
    return axis == last ? y : prim_transpose(y, perm);
  }
  int64_t n = x->shape[axis], lo[JX_MAX_NDIM] = {0}, hi[JX_MAX_NDIM] = {0};
  int64_t start[JX_MAX_NDIM] = {0}, stop[JX_MAX_NDIM];
  memcpy(stop, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  jx_array *y = jx_ref(x);
  for (int64_t off = 1; off < n && y; off *= 2) {
    if (reverse) hi[axis] = off, start[axis] = off, stop[axis] = n + off;
    else lo[axis] = off;
    jx_array *shifted = prim_slice(prim_pad(y, lo, hi, id), start, stop, NULL);
    y = bin(prim_of[op], y, shifted);
  }
  return y;
}

static jx_array *cumulative(const char *fn, Cum op, jx_array *x, int axis, bool reverse) {
  if (np_null_arg(fn, x, "x")) return NULL;
  char b[ARRAY_DESCRIBE_BUF];
  if (!dtype_is_integer(x->dtype) && !dtype_is_inexact(x->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: needs a numeric operand, got %s", fn, array_describe(b, x));
    return NULL;
  }
  if (!array_normalize_axis(fn, &axis, x->ndim)) return NULL;
  jx_scope_begin();
  return np_scope_return(cum_scan(x, axis, reverse, op));
}

jx_array *jx_lax_cumsum(jx_array *x, int axis, bool reverse) {
  return cumulative("jx_lax_cumsum", CUM_SUM, x, axis, reverse);
}
jx_array *jx_lax_cumprod(jx_array *x, int axis, bool reverse) {
  return cumulative("jx_lax_cumprod", CUM_PROD, x, axis, reverse);
}
jx_array *jx_lax_cummax(jx_array *x, int axis, bool reverse) {
  return cumulative("jx_lax_cummax", CUM_MAX, x, axis, reverse);
}
jx_array *jx_lax_cummin(jx_array *x, int axis, bool reverse) {
  return cumulative("jx_lax_cummin", CUM_MIN, x, axis, reverse);
}

/* jnp.cumsum / cumprod (reductions.py _cumulative_reduction): JX_AXIS_NONE (or a 0-d
 * x) flattens; bool accumulates in the default int dtype; the result is strongly
 * typed. */
static jx_array *np_cumulative(const char *fn, Cum op, jx_array *x, int axis) {
  if (np_null_arg(fn, x, "x")) return NULL;
  jx_scope_begin();
  jx_array *a = x;
  if (axis == JX_AXIS_NONE || x->ndim == 0) {
    int64_t size = jx_size(x);
    a = prim_reshape(x, 1, &size);
    if (axis == JX_AXIS_NONE) axis = 0;
  }
  jx_dtype d = x->dtype == JX_BOOL ? dtype_default_int() : x->dtype;
  a = np_convert(a, d, false);
  if (!a || !array_normalize_axis(fn, &axis, a->ndim)) return np_scope_return(NULL);
  return np_scope_return(cum_scan(a, axis, false, op));
}

jx_array *jx_cumsum(jx_array *x, int axis) { return np_cumulative("jx_cumsum", CUM_SUM, x, axis); }
jx_array *jx_cumprod(jx_array *x, int axis) {
  return np_cumulative("jx_cumprod", CUM_PROD, x, axis);
}

/* ------------------------------------------------------- dynamic slicing */

/* The clamped start of a window of `size` along a dim of extent `dim`, from a 0-d
 * integer index (slicing.py _dynamic_slice_indices, then XLA's clamp): a negative
 * index counts from the end once, then the start is clamped to [0, dim - size].
 * Returned in the default int dtype. */
static jx_array *clamped_start(const char *fn, jx_array *i, int k, int64_t dim,
                               int64_t size) {
  char b[ARRAY_DESCRIBE_BUF];
  if (!i) {
    error_set(JX_ERR_VALUE, "%s: start index %d is NULL", fn, k);
    return NULL;
  }
  if (!dtype_is_integer(i->dtype) || i->ndim != 0) {
    error_set(i->ndim ? JX_ERR_SHAPE : JX_ERR_DTYPE, "%s: start index %d must be a 0-d "
              "integer array, got %s", fn, k, array_describe(b, i));
    return NULL;
  }
  jx_dtype it = dtype_default_int(), id = i->dtype;
  int64_t hi = dim - size;
  i = np_convert(i, id, false);
  if (dtype_is_unsigned(id) && dtype_bits(id) >= dtype_bits(it)) {
    /* clamp in its own dtype first: its large values do not fit the signed type */
    i = bin(PRIM_min, i, np_constant(fmin((double)hi, dtype_max_value(id)), id));
  }
  if (dtype_is_signed(id)) {
    /* i + dim in i's own dtype, dim converted to it with wraparound, as JAX computes it
     * (an int8 -100 on a dim of 300 stays negative and clamps to 0) */
    int bits = dtype_bits(id);
    int64_t dw = dim;
    if (bits < 64) {
      dw = (int64_t)((uint64_t)dim & ((UINT64_C(1) << bits) - 1));
      if (dw >= (INT64_C(1) << (bits - 1))) dw -= INT64_C(1) << bits;
    }
    jx_array *z = np_constant(0, id);
    i = prim_select(bin(PRIM_lt, i, z), bin(PRIM_add, i, np_constant((double)dw, id)), i);
  }
  jx_array *s = np_convert(i, it, false), *zero = np_constant(0, it);
  return bin(PRIM_max, bin(PRIM_min, s, np_constant((double)hi, it)), zero);
}

/* start + iota(size), for gather along one axis. */
static jx_array *window_index(jx_array *start, int64_t size) {
  if (!start) return NULL;
  jx_array *io = prim_iota(start->dtype, 1, &size, 0);
  return bin(PRIM_add, bcast0(start, 1, &size), io);
}

jx_array *jx_lax_dynamic_slice(jx_array *x, jx_array *const *start_indices,
                               const int64_t *slice_sizes) {
  const char *fn = "jx_lax_dynamic_slice";
  if (np_null_arg(fn, x, "x")) return NULL;
  if (x->ndim > 0 && (np_null_arg(fn, start_indices, "start_indices") ||
                      np_null_arg(fn, slice_sizes, "slice_sizes")))
    return NULL;
  for (int d = 0; d < x->ndim; d++)
    if (slice_sizes[d] < 0 || slice_sizes[d] > x->shape[d]) {
      char b[ARRAY_DESCRIBE_BUF];
      error_set(JX_ERR_SHAPE, "%s: slice size %lld is outside [0, %lld] for axis %d of %s",
                fn, (long long)slice_sizes[d], (long long)x->shape[d], d,
                array_describe(b, x));
      return NULL;
    }
  jx_scope_begin();
  jx_array *y = x;
  for (int d = 0; d < x->ndim && y; d++) {
    jx_array *s = clamped_start(fn, start_indices[d], d, x->shape[d], slice_sizes[d]);
    if (!s) return np_scope_return(NULL);
    if (slice_sizes[d] == x->shape[d]) continue; /* the start clamps to 0 */
    y = prim_gather(y, window_index(s, slice_sizes[d]), d);
  }
  return np_scope_return(np_convert(y, x->dtype, x->weak));
}

jx_array *jx_lax_dynamic_update_slice(jx_array *x, jx_array *update,
                                      jx_array *const *start_indices) {
  const char *fn = "jx_lax_dynamic_update_slice";
  if (np_null_arg(fn, x, "x") || np_null_arg(fn, update, "update")) return NULL;
  char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
  if (update->dtype != x->dtype) {
    error_set(JX_ERR_DTYPE, "%s: update %s must have the dtype of x %s", fn,
              array_describe(b1, update), array_describe(b0, x));
    return NULL;
  }
  bool fits = update->ndim == x->ndim;
  for (int d = 0; d < x->ndim && fits; d++) fits = update->shape[d] <= x->shape[d];
  if (!fits) {
    error_set(JX_ERR_SHAPE, "%s: update %s must have x's rank and fit inside x %s", fn,
              array_describe(b1, update), array_describe(b0, x));
    return NULL;
  }
  if (x->ndim > 0 && np_null_arg(fn, start_indices, "start_indices")) return NULL;
  jx_scope_begin();
  /* The update spread over x's extent (gather with clamped indices i - start), and the
   * mask of the updated box. */
  jx_array *u = update, *mask = NULL;
  bool empty = false;
  for (int d = 0; d < x->ndim; d++) {
    int64_t n = x->shape[d], m = update->shape[d];
    jx_array *s = clamped_start(fn, start_indices[d], d, n, m);
    if (!s) return np_scope_return(NULL);
    empty |= m == 0;
    if (empty) continue;
    jx_array *io = prim_iota(s->dtype, 1, &n, 0);
    jx_array *rel = bin(PRIM_sub, io, bcast0(s, 1, &n));
    u = prim_gather(u, rel, d);
    jx_array *below = bin(PRIM_lt, rel, np_full(0, s->dtype, 1, &n));
    jx_array *in = bin(PRIM_and, prim_unary(PRIM_not, below),
                       bin(PRIM_lt, rel, np_full((double)m, s->dtype, 1, &n)));
    int bd[1] = {d};
    in = prim_broadcast_in_dim(in, x->ndim, x->shape, bd);
    mask = mask ? bin(PRIM_and, mask, in) : in;
  }
  /* strong even for weak x and update, as JAX's dynamic_update_slice_p */
  if (empty) return np_scope_return(np_convert(x, x->dtype, false));
  jx_array *r = mask ? prim_select(mask, u, x) : jx_ref(u);
  return np_scope_return(np_convert(r, x->dtype, false));
}

/* --------------------------------------------------------------- select_n */

/* The lowering of lax.select_n: a balanced tree of selects on which < offset + mid, so
 * an out-of-range which picks the first or the last case. */
static jx_array *select_tree(jx_array *which, int offset, int n, jx_array *const *cases) {
  if (n == 1 || !which) return jx_ref(n == 1 ? cases[0] : NULL);
  int mid = n / 2;
  jx_array *k = bcast0(np_constant(offset + mid, which->dtype), which->ndim, which->shape);
  return prim_select(bin(PRIM_lt, which, k), select_tree(which, offset, mid, cases),
                     select_tree(which, offset + mid, n - mid, cases + mid));
}

jx_array *jx_lax_select_n(jx_array *which, int n, jx_array *const *cases) {
  const char *fn = "jx_lax_select_n";
  if (np_null_arg(fn, which, "which")) return NULL;
  if (n < 1) {
    error_set(JX_ERR_VALUE, "%s: needs at least one case, got %d", fn, n);
    return NULL;
  }
  if (np_null_arg(fn, cases, "cases")) return NULL;
  char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
  bool weak = true;
  for (int k = 0; k < n; k++) {
    if (!cases[k]) {
      error_set(JX_ERR_VALUE, "%s: case %d is NULL", fn, k);
      return NULL;
    }
    if (cases[k]->dtype != cases[0]->dtype || cases[k]->ndim != cases[0]->ndim ||
        memcmp(cases[k]->shape, cases[0]->shape, sizeof(int64_t) * (size_t)cases[0]->ndim)) {
      error_set(cases[k]->dtype != cases[0]->dtype ? JX_ERR_DTYPE : JX_ERR_SHAPE,
                "%s: cases must have one shape and dtype, got %s and %s", fn,
                array_describe(b0, cases[0]), array_describe(b1, cases[k]));
      return NULL;
    }
    weak &= cases[k]->weak;
  }
  jx_array *c0 = cases[0];
  if (which->dtype == JX_BOOL ? n > 2 : !dtype_is_integer(which->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: which must be bool (at most 2 cases) or an integer, got %s "
              "with %d cases", fn, array_describe(b0, which), n);
    return NULL;
  }
  if (which->ndim != 0 && (which->ndim != c0->ndim ||
                           memcmp(which->shape, c0->shape, sizeof(int64_t) * (size_t)c0->ndim))) {
    error_set(JX_ERR_SHAPE, "%s: which %s must be 0-d or have the cases' shape %s", fn,
              array_describe(b0, which), array_describe(b1, c0));
    return NULL;
  }
  jx_scope_begin();
  jx_array *w = which->ndim == 0 ? bcast0(which, c0->ndim, c0->shape) : jx_ref(which);
  jx_array *r;
  if (n == 1) r = jx_ref(c0);
  else if (which->dtype == JX_BOOL) r = prim_select(w, cases[1], c0);
  else r = select_tree(w, 0, n, cases);
  return np_scope_return(np_convert(r, c0->dtype, weak));
}

/* ----------------------------------------------------------------- round */

jx_array *jx_lax_round(jx_array *x, jx_rounding_method method) {
  const char *fn = "jx_lax_round";
  if (np_null_arg(fn, x, "x")) return NULL;
  if (!dtype_is_floating(x->dtype)) {
    char b[ARRAY_DESCRIBE_BUF];
    error_set(JX_ERR_DTYPE, "%s: needs a floating operand, got %s", fn, array_describe(b, x));
    return NULL;
  }
  if (method == JX_ROUNDING_TO_NEAREST_EVEN) return prim_unary(PRIM_round, x);
  if (method != JX_ROUNDING_AWAY_FROM_ZERO) {
    error_set(JX_ERR_VALUE, "%s: unknown rounding method %d", fn, (int)method);
    return NULL;
  }
  /* Ties (|x - trunc(x)| == 0.5, an exact difference) step away from zero. */
  jx_scope_begin();
  jx_array *tr = prim_unary(PRIM_trunc, x);
  jx_array *tie = bin(PRIM_eq, prim_unary(PRIM_abs, bin(PRIM_sub, x, tr)), const_like(x, 0.5));
  jx_array *away = bin(PRIM_add, tr, prim_unary(PRIM_sign, x));
  return np_scope_return(prim_select(tie, away, prim_unary(PRIM_round, x)));
}

/* ------------------------------------------------------- take_along_axis */

/* The fill value of gather's "fill" mode: NaN, the most negative signed int, the
 * largest unsigned int, true. */
static double fill_value(jx_dtype d) {
  if (dtype_is_inexact(d)) return NAN; /* complex: NaN + 0j, as JAX */
  if (dtype_is_bool(d)) return 1;
  return dtype_is_unsigned(d) ? dtype_max_value(d) : dtype_min_value(d);
}

/* np_full, but under jit (like a staging tracer) a broadcast of the scalar staged in the
 * jaxpr, which the kernel reads as one value, not a materialized array (the index
 * arithmetic below: lu_solve's permutation on an n x n right-hand side read four n x n
 * int32 constants). */
static jx_array *full_like_trace(jx_array *like, double value, jx_dtype dtype, int nd, const int64_t *shape) {
  jx_array *c = np_constant(value, dtype);
  if (!c || nd == 0) return c;
  PrimParams pp = {.ndim = nd};
  memcpy(pp.shape, shape, (size_t)nd * sizeof *shape);
  jx_array *r = stage_bind_like(like, PRIM_broadcast_in_dim, 1, &c, &pp);
  if (r) return r;
  return prim_broadcast_in_dim(c, nd, shape, NULL);
}

/* iota along d, staged under jit like full_like_trace. */
static jx_array *iota_like_trace(jx_array *like, jx_dtype dtype, int nd, const int64_t *shape, int d) {
  PrimParams pp = {.dtype = dtype, .ndim = nd, .axis = d};
  memcpy(pp.shape, shape, (size_t)nd * sizeof *shape);
  jx_array *r = stage_bind_nullary(like, PRIM_iota, &pp);
  if (r) return r;
  return prim_iota(dtype, nd, shape, d);
}

/* indexing.py take_along_axis: indices broadcast against arr except along axis; the
 * result has the broadcast shape. Lowered to one gather over the flattened arr with
 * flat indices sum_d coord_d * stride_d (coord = the index along axis, an iota
 * elsewhere). Call inside a scope. */
static jx_array *take_along_impl(const char *fn, jx_array *arr, jx_array *idx, int axis,
                                 jx_index_mode mode) {
  char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
  if (axis == JX_AXIS_NONE) {
    if (idx->ndim != 1) {
      error_set(JX_ERR_SHAPE, "%s: indices must be 1-d with JX_AXIS_NONE, got %s", fn,
                array_describe(b1, idx));
      return NULL;
    }
    int64_t size = jx_size(arr);
    arr = prim_reshape(arr, 1, &size);
    axis = 0;
  }
  if (!arr) return NULL;
  if (idx->ndim != arr->ndim) {
    error_set(JX_ERR_SHAPE, "%s: indices %s and arr %s must have the same rank", fn,
              array_describe(b1, idx), array_describe(b0, arr));
    return NULL;
  }
  if (!array_normalize_axis(fn, &axis, arr->ndim)) return NULL;
  int nd = arr->ndim;
  int64_t out[JX_MAX_NDIM];
  for (int d = 0; d < nd; d++) {
    int64_t a = d == axis ? 1 : arr->shape[d], i = idx->shape[d];
    if (a != i && a != 1 && i != 1) {
      error_set(JX_ERR_SHAPE, "%s: indices %s do not broadcast against arr %s off axis %d",
                fn, array_describe(b1, idx), array_describe(b0, arr), axis);
      return NULL;
    }
    out[d] = a == 1 ? i : a;
  }
  int64_t n = arr->shape[axis];
  if (n == 0 || shape_numel(nd, out) == 0) return np_full(0, arr->dtype, nd, out);
  jx_dtype it = dtype_default_int();
  if ((double)jx_size(arr) > dtype_max_value(it)) {
    error_set(JX_ERR_UNSUPPORTED, "%s: arr %s has more elements than %s indexes", fn,
              array_describe(b0, arr), jx_dtype_name(it));
    return NULL;
  }
  jx_array *i = np_broadcast_to(fn, np_convert(idx, it, false), nd, out);
  if (!i) return NULL;
  jx_array *nn = full_like_trace(i, (double)n, it, nd, out);
  jx_array *zero = full_like_trace(i, 0, it, nd, out);
  if (mode != JX_INDEX_PROMISE_IN_BOUNDS) /* negative indices count from the end once */
    i = prim_select(bin(PRIM_lt, i, zero), bin(PRIM_add, i, nn), i);
  jx_array *valid = mode != JX_INDEX_FILL ? NULL
                    : bin(PRIM_and, prim_unary(PRIM_not, bin(PRIM_lt, i, zero)), bin(PRIM_lt, i, nn));
  /* clamped in every mode: a promise broken must not read outside arr */
  i = bin(PRIM_max, bin(PRIM_min, i, full_like_trace(i, (double)(n - 1), it, nd, out)), zero);
  jx_array *flat = NULL;
  int64_t stride = 1;
  for (int d = nd - 1; d >= 0; d--) {
    jx_array *coord = d == axis ? jx_ref(i)
                      : arr->shape[d] == 1 ? NULL : iota_like_trace(i, it, nd, out, d);
    if (coord) {
      jx_array *term = coord;
      if (stride != 1) term = bin(PRIM_mul, coord, full_like_trace(i, (double)stride, it, nd, out));
      flat = flat ? bin(PRIM_add, flat, term) : term;
    }
    stride *= arr->shape[d];
  }
  int64_t size = jx_size(arr);
  jx_array *g = prim_gather(prim_reshape(arr, 1, &size), flat, 0);
  if (mode != JX_INDEX_FILL) return g;
  return prim_select(valid, g, np_full(fill_value(arr->dtype), arr->dtype, nd, out));
}

jx_array *jx_take_along_axis(jx_array *arr, jx_array *indices, int axis, jx_index_mode mode) {
  const char *fn = "jx_take_along_axis";
  if (np_null_arg(fn, arr, "arr") || np_null_arg(fn, indices, "indices")) return NULL;
  if (!dtype_is_integer(indices->dtype)) {
    char b[ARRAY_DESCRIBE_BUF];
    error_set(JX_ERR_DTYPE, "%s: indices must be integers, got %s", fn,
              array_describe(b, indices));
    return NULL;
  }
  if (mode == JX_INDEX_WRAP) { /* JAX: ValueError 'Unknown gather mode "wrap"' */
    error_set(JX_ERR_VALUE, "%s: mode wrap is jnp.take's only (JAX's gather has no wrap mode)", fn);
    return NULL;
  }
  if ((int)mode < 0 || mode > JX_INDEX_PROMISE_IN_BOUNDS) {
    error_set(JX_ERR_VALUE, "%s: unknown index mode %d", fn, (int)mode);
    return NULL;
  }
  jx_scope_begin();
  jx_array *r = take_along_impl(fn, arr, indices, axis, mode);
  if (r && r->weak != arr->weak) r = np_convert(r, r->dtype, arr->weak);
  return np_scope_return(r);
}

/* ------------------------------------------------------- erf, erfc, erf_inv */

static bool floating_arg(const char *fn, jx_array *x) {
  if (np_null_arg(fn, x, "x")) return false;
  if (dtype_is_floating(x->dtype)) return true;
  char b[ARRAY_DESCRIBE_BUF];
  error_set(JX_ERR_DTYPE, "%s: needs a floating operand, got %s", fn, array_describe(b, x));
  return false;
}

jx_array *jx_lax_erf(jx_array *x) {
  return floating_arg("jx_lax_erf", x) ? prim_unary(PRIM_erf, x) : NULL;
}

jx_array *jx_lax_erfc(jx_array *x) {
  return floating_arg("jx_lax_erfc", x) ? prim_unary(PRIM_erfc, x) : NULL;
}

jx_array *jx_lax_erf_inv(jx_array *x) {
  if (!floating_arg("jx_lax_erf_inv", x)) return NULL;
  jx_scope_begin();
  return np_scope_return(special_erf_inv(x));
}

/* ------------------------------------------------------- reduce_precision */

/* A 0-d unsigned constant of dtype ud holding the bits v. */
static jx_array *ucst(uint64_t v, jx_dtype ud) {
  uint16_t h = (uint16_t)v;
  uint32_t w = (uint32_t)v;
  const void *p = ud == JX_UINT16 ? (const void *)&h : ud == JX_UINT32 ? (const void *)&w : &v;
  return jx_array_from(p, ud, 0, NULL);
}

/* XLA's reduce-precision (EmitReducePrecisionIR, quiet_nans = false) on the bits: round
 * the mantissa to nearest even, then flush exponents above the reduced range to signed
 * infinity and those at or below its bottom (the reduced format's denormals included)
 * to signed zero; NaN inputs are kept as they are (also for mantissa_bits 0, where
 * XLA's old emitter made them infinite: XLA's cpu in JAX 0.10.2 keeps them). */
static jx_array *reduce_precision_bits(jx_array *x, int ebits, int mbits) {
  jx_dtype dt = x->dtype, ud;
  int nbits, sm, se;
  switch (dt) {
  case JX_FLOAT16: nbits = 16, se = 5, sm = 10, ud = JX_UINT16; break;
  case JX_BFLOAT16: nbits = 16, se = 8, sm = 7, ud = JX_UINT16; break;
  case JX_FLOAT32: nbits = 32, se = 8, sm = 23, ud = JX_UINT32; break;
  default: nbits = 64, se = 11, sm = 52, ud = JX_UINT64; break;
  }
  jx_array *xi = jx_bitcast(x, ud);
  if (mbits < sm) {
    int sh = sm - mbits;
    uint64_t last = (uint64_t)1 << sh;
    jx_array *lastbit = jx_right_shift(jx_bitwise_and(xi, ucst(last, ud)), ucst((uint64_t)sh, ud));
    jx_array *bias = jx_add(lastbit, ucst((last >> 1) - 1, ud));
    uint64_t trunc = ~(last - 1);
    if (nbits < 64) trunc &= ((uint64_t)1 << nbits) - 1;
    xi = jx_bitwise_and(jx_add(xi, bias), ucst(trunc, ud));
  }
  if (ebits < se) {
    uint64_t sign = (uint64_t)1 << (nbits - 1);
    uint64_t expmask = (((uint64_t)1 << se) - 1) << sm;
    uint64_t ebias = ((uint64_t)1 << (se - 1)) - 1;
    uint64_t rbias = ((uint64_t)1 << (ebits - 1)) - 1;
    jx_array *xe = jx_bitwise_and(xi, ucst(expmask, ud));
    jx_array *over = jx_greater(xe, ucst((ebias + rbias) << sm, ud));
    jx_array *under = jx_less_equal(xe, ucst((ebias - rbias) << sm, ud));
    jx_array *szero = jx_bitwise_and(xi, ucst(sign, ud));
    jx_array *sinf = jx_bitwise_or(szero, ucst(expmask, ud));
    xi = jx_where(over, sinf, jx_where(under, szero, xi));
  }
  jx_array *r = jx_bitcast(xi, dt);
  return jx_where(jx_isnan(x), x, r);
}

typedef struct RpBits {
  int ebits, mbits;
} RpBits;

static jx_status rp_impl(void *ctx, jx_array *const *in, jx_array **out) {
  RpBits *b = ctx;
  out[0] = reduce_precision_bits(in[0], b->ebits, b->mbits);
  return out[0] ? JX_OK : jx_last_status();
}

typedef struct RpJvp {
  RpBits bits;
  jx_fn *lin; /* custom_vjp(rp, rp, rp): the tangent map */
} RpJvp;

static void rpjvp_free(void *ctx) {
  RpJvp *c = ctx;
  jx_fn_free(c->lin);
  free(c);
}

static jx_status rp_jvp(void *ctx, jx_array *const *in, jx_array **out) {
  RpJvp *c = ctx;
  out[0] = reduce_precision_bits(in[0], c->bits.ebits, c->bits.mbits);
  if (!out[0]) return jx_last_status();
  return jx_call(c->lin, in + 1, out + 1);
}

/* A jx_fn running reduce_precision_bits with its own copy of b (rules may outlive the
 * call, e.g. in a jitted function differentiated later). */
static jx_fn *rp_fn(const char *name, RpBits b) {
  RpBits *c = malloc(sizeof *c);
  if (!c) {
    error_set(JX_ERR_OOM, "jx_lax_reduce_precision: out of memory");
    return NULL;
  }
  *c = b;
  jx_fn *f = jx_fn_new_with_free(name, 1, 1, rp_impl, c, free);
  if (!f) free(c);
  return f;
}

jx_array *jx_lax_reduce_precision(jx_array *x, int exponent_bits, int mantissa_bits) {
  const char *fn = "jx_lax_reduce_precision";
  if (np_null_arg(fn, x, "x")) return NULL;
  if (!dtype_is_floating(x->dtype) || dtype_is_complex(x->dtype)) {
    char b[ARRAY_DESCRIBE_BUF];
    error_set(JX_ERR_DTYPE, "%s: needs a real floating operand, got %s", fn, array_describe(b, x));
    return NULL;
  }
  if (exponent_bits < 1 || mantissa_bits < 0) {
    error_set(JX_ERR_VALUE, "%s: needs exponent_bits >= 1 and mantissa_bits >= 0, got %d and %d",
              fn, exponent_bits, mantissa_bits);
    return NULL;
  }
  RpBits b = {exponent_bits, mantissa_bits};
  jx_fn *f = rp_fn("reduce_precision", b), *fwd = rp_fn("reduce_precision_fwd", b);
  jx_fn *bwd = rp_fn("reduce_precision_bwd", b);
  RpJvp *c = calloc(1, sizeof *c);
  jx_fn *jvp = NULL, *g = NULL;
  if (c) {
    c->bits = b;
    c->lin = f && fwd && bwd ? jx_custom_vjp(f, fwd, bwd) : NULL;
    jvp = c->lin ? jx_fn_new_with_free("reduce_precision_jvp", 2, 2, rp_jvp, c, rpjvp_free) : NULL;
    if (!jvp) rpjvp_free(c);
  } else {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
  }
  g = jvp ? jx_custom_jvp(f, jvp, 0, NULL) : NULL;
  jx_array *out = NULL;
  if (g && jx_call(g, &x, &out) != JX_OK) out = NULL;
  jx_fn_free(g), jx_fn_free(jvp), jx_fn_free(bwd), jx_fn_free(fwd), jx_fn_free(f);
  return out;
}
