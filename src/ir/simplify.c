/* simplify.c -- alu_simplify and alu_substitute. Integer sums are kept in a canonical
 * linear form (sum of coefficient * atom + constant), which cancels the div/mod chains
 * that views create; the div/mod rules are those of tinygrad's symbolic rewriter, but
 * proved for C's truncating division: a rule that needs a sign or a no-overflow fact
 * only fires when the intervals (lo/hi, computed at construction) prove it. */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "ir/alu.h"

typedef struct {
  AluMap memo; /* node -> simplified node, for this call */
  int64_t fuel; /* bounds the number of rule applications: no rule cycle can hang */
} Simp;

static const AluExp *simp(Simp *c, const AluExp *e);

/* ---------------------------------------------------------------- helpers */

static bool is_const(const AluExp *e) { return e->op == ALU_CONST; }
static bool is_int(jx_dtype d) { return dtype_is_integer(d); }
static bool is_signed_int(jx_dtype d) { return is_int(d) && !dtype_is_unsigned(d); }

/* A positive integer constant (fits int64), or 0. */
static int64_t pos_const(const AluExp *e) {
  if (!is_const(e) || !is_int(e->dtype)) return 0;
  if (dtype_is_unsigned(e->dtype)) return e->value.u <= (uint64_t)INT64_MAX ? e->value.i : 0;
  return e->value.i > 0 ? e->value.i : 0;
}

static void dtype_limits(jx_dtype d, int64_t *lo, int64_t *hi) {
  int bits = dtype_bits(d);
  if (dtype_is_bool(d)) *lo = 0, *hi = 1;
  else if (d == JX_INT64 || d == JX_UINT64) *lo = INT64_MIN, *hi = INT64_MAX;
  else if (dtype_is_unsigned(d)) *lo = 0, *hi = (int64_t)((1ull << bits) - 1);
  else *lo = -(int64_t)(1ull << (bits - 1)), *hi = (int64_t)((1ull << (bits - 1)) - 1);
}

/* Is a*b a positive constant of dtype d (no overflow in int64 or in d)? */
static bool product_fits(jx_dtype d, int64_t a, int64_t b, int64_t *ab) {
  int64_t lo, hi;
  dtype_limits(d, &lo, &hi);
  return !__builtin_mul_overflow(a, b, ab) && *ab <= hi;
}

/* Proven free of wrap-around: constructors give a possibly-wrapped node the whole range
 * of its dtype, so any narrower interval was computed exactly. */
static bool nowrap(const AluExp *e) {
  if (!is_int(e->dtype)) return false;
  int64_t lo, hi;
  dtype_limits(e->dtype, &lo, &hi);
  if (e->dtype == JX_UINT64 && e->lo < 0) return false;
  return !(e->lo == lo && e->hi == hi);
}

/* Interprets v as a signed integer of `bits` bits (two's complement wrap). */
static int64_t wrapk(int bits, uint64_t v) {
  if (bits >= 64) return (int64_t)v;
  uint64_t m = 1ull << (bits - 1);
  v &= (m << 1) - 1;
  return (int64_t)(v ^ m) - (int64_t)m;
}

static __int128 floordiv(__int128 a, __int128 c) { /* c > 0 */
  __int128 q = a / c;
  return (a % c != 0 && a < 0) ? q - 1 : q;
}
static __int128 ceildiv(__int128 a, __int128 c) { return -floordiv(-a, c); }

static uint64_t gcd_u64(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}
static uint64_t uabs(int64_t v) { return v < 0 ? 0 - (uint64_t)v : (uint64_t)v; }

static const AluExp *kconst(jx_dtype d, int64_t v) { return alu_const_int(d, v); }
static const AluExp *bin(AluOp op, const AluExp *a, const AluExp *b) {
  return alu_binary(op, a, b);
}

/* A deterministic structural order (no addresses, no creation history where avoidable):
 * it orders the terms of a canonical sum, so printed kernels do not depend on the order
 * in which a process happened to build nodes. */
static int cmp_node(const AluExp *a, const AluExp *b, int depth) {
  if (a == b) return 0;
#define CMP(x, y) \
  if ((x) != (y)) return (x) < (y) ? -1 : 1
  CMP(a->op, b->op);
  CMP(a->dtype, b->dtype);
  if (a->name != b->name) {
    int r = strcmp(a->name ? a->name : "", b->name ? b->name : "");
    if (r) return r < 0 ? -1 : 1;
  }
  CMP(a->arg, b->arg);
  CMP(a->value.u, b->value.u);
  CMP(a->nsrc, b->nsrc);
  if (depth > 0)
    for (int i = 0; i < a->nsrc; i++) {
      int r = cmp_node(a->src[i], b->src[i], depth - 1);
      if (r) return r;
    }
  CMP(a->hash, b->hash);
  CMP(a->id, b->id);
#undef CMP
  return 0;
}

/* ------------------------------------------------------------ linear forms */

typedef struct {
  const AluExp *atom;
  int64_t k;
} Term;

#define LIN_MAX 64

/* sum(k_i * atom_i) + k0 over dtype d. In ring mode coefficients wrap (exact modulo
 * 2^bits, which is all ADD/SUB/MUL need); in exact mode (for DIV/MOD/CMP rules) only
 * nodes proven free of wrap-around are expanded, coefficients must not overflow, and the
 * form then equals the node's true integer value. ok = false: gave up. */
typedef struct {
  jx_dtype d;
  int bits;
  bool exact, ok;
  int n;
  Term t[LIN_MAX];
  int64_t k0;
} Lin;

static void lin_init(Lin *L, jx_dtype d, bool exact) {
  memset(L, 0, sizeof *L);
  L->d = d;
  L->bits = dtype_bits(d);
  L->exact = exact;
  L->ok = true;
}

static int64_t kmul(Lin *L, int64_t a, int64_t b) {
  int64_t r;
  if (L->exact) {
    if (__builtin_mul_overflow(a, b, &r)) L->ok = false;
    return r;
  }
  return wrapk(L->bits, (uint64_t)a * (uint64_t)b);
}
static int64_t kadd(Lin *L, int64_t a, int64_t b) {
  int64_t r;
  if (L->exact) {
    if (__builtin_add_overflow(a, b, &r)) L->ok = false;
    return r;
  }
  return wrapk(L->bits, (uint64_t)a + (uint64_t)b);
}

static void lin_add_term(Lin *L, const AluExp *atom, int64_t k) {
  for (int i = 0; i < L->n; i++)
    if (L->t[i].atom == atom) {
      L->t[i].k = kadd(L, L->t[i].k, k);
      return;
    }
  if (L->n == LIN_MAX) {
    L->ok = false;
    return;
  }
  L->t[L->n++] = (Term){atom, k};
}

static int64_t const_as_k(const Lin *L, const AluExp *e) {
  return wrapk(L->bits, e->value.u);
}

static void lin_collect(Lin *L, const AluExp *e, int64_t k) {
  if (!L->ok || k == 0) return;
  if (is_const(e)) {
    int64_t v = const_as_k(L, e);
    if (L->exact && dtype_is_unsigned(e->dtype) && v < 0) L->ok = false;
    L->k0 = kadd(L, L->k0, kmul(L, k, v));
    return;
  }
  bool expand = !L->exact || nowrap(e);
  if (expand) switch (e->op) {
    case ALU_ADD:
      lin_collect(L, e->src[0], k);
      lin_collect(L, e->src[1], k);
      return;
    case ALU_SUB:
      lin_collect(L, e->src[0], k);
      lin_collect(L, e->src[1], kmul(L, k, -1));
      return;
    case ALU_NEG:
      lin_collect(L, e->src[0], kmul(L, k, -1));
      return;
    case ALU_MUL:
      if (is_const(e->src[1])) {
        lin_collect(L, e->src[0], kmul(L, k, const_as_k(L, e->src[1])));
        return;
      }
      if (is_const(e->src[0])) {
        lin_collect(L, e->src[1], kmul(L, k, const_as_k(L, e->src[0])));
        return;
      }
      break;
    default:
      break;
    }
  lin_add_term(L, e, k);
}

static void lin_compact(Lin *L) {
  int m = 0;
  for (int i = 0; i < L->n; i++)
    if (L->t[i].k != 0) L->t[m++] = L->t[i];
  L->n = m;
}

static int term_cmp(const void *a, const void *b) {
  return cmp_node(((const Term *)a)->atom, ((const Term *)b)->atom, 6);
}

/* Builds the canonical node of a linear form: terms in structural order, negative
 * coefficients as subtractions, the constant last ("ADD x -3"). */
static const AluExp *lin_build(Lin *L) {
  lin_compact(L);
  qsort(L->t, (size_t)L->n, sizeof L->t[0], term_cmp);
  jx_dtype d = L->d;
  const AluExp *acc = NULL;
  for (int i = 0; i < L->n; i++) {
    const AluExp *a = L->t[i].atom;
    int64_t k = L->t[i].k;
    bool neg = k < 0 && k != INT64_MIN && acc;
    int64_t mag = neg ? -k : k;
    const AluExp *term = mag == 1 ? a : bin(ALU_MUL, a, kconst(d, mag));
    if (!acc) acc = k == -1 ? alu_unary(ALU_NEG, a) : term;
    else acc = bin(neg ? ALU_SUB : ALU_ADD, acc, term);
    if (!acc) return NULL;
  }
  if (!acc) return kconst(d, L->k0);
  return L->k0 ? bin(ALU_ADD, acc, kconst(d, L->k0)) : acc;
}

static int lin_find(const Lin *L, const AluExp *atom) {
  for (int i = 0; i < L->n; i++)
    if (L->t[i].atom == atom && L->t[i].k != 0) return i;
  return -1;
}

/* The div/mod recombinations, exact for every value (truncating semantics):
 *   (y/a)*a*m + (y%a)*m          -> y*m            ((y/a)*a + y%a == y in C)
 *   y*m - (y/a)*a*m              -> (y%a)*m        (y a linear part of the sum)
 *   ((y/a)%b)*a*m + (y%a)*m      -> (y%(a*b))*m    (a, b > 0; both sides are odd in y
 *                                                   and agree for y >= 0)
 * Partners are found by building the simplified partner node (hash-consing makes that a
 * pointer comparison). Returns whether anything changed. */
static bool lin_recombine(Simp *c, Lin *L) {
  for (int i = 0; i < L->n; i++) {
    const AluExp *t = L->t[i].atom;
    int64_t k = L->t[i].k;
    if (k == 0 || t->dtype != L->d) continue;
    if (t->op == ALU_DIV) {
      int64_t a = pos_const(t->src[1]);
      if (a <= 1 || k % a != 0) continue;
      int64_t m = k / a;
      const AluExp *y = t->src[0];
      const AluExp *mod = simp(c, bin(ALU_MOD, y, t->src[1]));
      if (!mod) return false;
      int j = lin_find(L, mod);
      if (j >= 0 && L->t[j].k == m) {
        L->t[i].k = L->t[j].k = 0;
        lin_collect(L, y, m);
        return true;
      }
      /* y*(-m) present as a sub-combination with (y/a) * (m*a)? -> -(y%a)*m */
      Lin Y;
      lin_init(&Y, L->d, false);
      lin_collect(&Y, y, 1);
      lin_compact(&Y);
      if (!Y.ok || Y.n == 0) continue;
      bool all = true;
      for (int q = 0; q < Y.n && all; q++) {
        int p = lin_find(L, Y.t[q].atom);
        all = p >= 0 && p != i && L->t[p].k == kmul(L, -m, Y.t[q].k);
      }
      if (!all) continue;
      for (int q = 0; q < Y.n; q++) {
        int p = lin_find(L, Y.t[q].atom);
        L->t[p].k = kadd(L, L->t[p].k, kmul(L, m, Y.t[q].k));
      }
      L->k0 = kadd(L, L->k0, kmul(L, m, Y.k0));
      L->t[i].k = 0;
      lin_add_term(L, mod, -m);
      return true;
    }
    if (t->op == ALU_MOD && t->src[0]->op == ALU_DIV) {
      const AluExp *dv = t->src[0], *y = dv->src[0];
      int64_t b = pos_const(t->src[1]), a = pos_const(dv->src[1]), ab;
      if (a <= 1 || b <= 1 || k % a != 0 || !product_fits(L->d, a, b, &ab)) continue;
      int64_t m = k / a;
      const AluExp *mod = simp(c, bin(ALU_MOD, y, dv->src[1]));
      if (!mod) return false;
      int j = lin_find(L, mod);
      if (j < 0 || L->t[j].k != m) continue;
      const AluExp *big = simp(c, bin(ALU_MOD, y, kconst(L->d, ab)));
      if (!big) return false;
      L->t[i].k = L->t[j].k = 0;
      lin_add_term(L, big, m);
      return true;
    }
  }
  return false;
}

/* Canonical form of an integer ADD/SUB/NEG/MUL-by-constant node. */
static const AluExp *rule_linear(Simp *c, const AluExp *e) {
  Lin L;
  lin_init(&L, e->dtype, false);
  lin_collect(&L, e, 1);
  for (int guard = 0; L.ok && guard < 2 * LIN_MAX && lin_recombine(c, &L); guard++) {
  }
  if (!L.ok) return e;
  const AluExp *r = lin_build(&L);
  /* Keep e when the new association order loses the no-wrap proof: the value is the
   * same either way, but the interval feeds the div/mod rules above this node. */
  if (r && nowrap(e) && !nowrap(r) && r->op != ALU_CONST) return e;
  return r;
}

/* ------------------------------------------------------------ div and mod */

/* How lin_split picks each term's remainder r = k - c*q: floor (r in [0, c)), trunc (r
 * with k's sign) or ceil (r in (-c, 0]). */
typedef enum { SPLIT_FLOOR, SPLIT_TRUNC, SPLIT_CEIL } SplitMode;

/* Splits an exact linear form of x by c > 0 into x = c*Q + R, term by term. Fails when
 * a term's remainder would be larger in magnitude than its coefficient: R must be no
 * more complex than x (constants may move freely). */
static bool lin_split(const Lin *X, int64_t c, SplitMode mode, Lin *Q, Lin *R) {
  lin_init(Q, X->d, false);
  lin_init(R, X->d, false);
  for (int i = -1; i < X->n; i++) {
    int64_t k = i < 0 ? X->k0 : X->t[i].k;
    __int128 q = mode == SPLIT_FLOOR ? floordiv(k, c)
                 : mode == SPLIT_CEIL ? ceildiv(k, c)
                                      : (__int128)k / c;
    __int128 r = k - q * c;
    if (i < 0) {
      Q->k0 = (int64_t)q;
      R->k0 = (int64_t)r;
      continue;
    }
    if (r < 0 ? -r > uabs(k) : r > (__int128)uabs(k)) return false;
    if (q) lin_add_term(Q, X->t[i].atom, (int64_t)q);
    if (r) lin_add_term(R, X->t[i].atom, (int64_t)r);
  }
  return Q->ok && R->ok;
}

/* Common factor g of every coefficient, the constant and c (so x = g*x'). */
static int64_t lin_gcd(const Lin *X, int64_t c) {
  uint64_t g = (uint64_t)c;
  for (int i = 0; i < X->n; i++) g = gcd_u64(g, uabs(X->t[i].k));
  g = gcd_u64(g, uabs(X->k0));
  return (int64_t)g;
}

static void lin_scale_down(Lin *X, int64_t g) {
  for (int i = 0; i < X->n; i++) X->t[i].k /= g;
  X->k0 /= g;
}

static bool lin_has_terms(const Lin *X) {
  for (int i = 0; i < X->n; i++)
    if (X->t[i].k) return true;
  return false;
}

/* The exact linear form of x, or false. */
static bool exact_form(const AluExp *x, Lin *X) {
  if (!is_signed_int(x->dtype) || !nowrap(x)) return false;
  lin_init(X, x->dtype, true);
  lin_collect(X, x, 1);
  lin_compact(X);
  return X->ok;
}

/* x / c or x % c by splitting x = c*Q + R. Truncation is floor division for x >= 0
 * and ceil division for x <= 0 (x of mixed sign: no rule), so
 *   x / c = Q + floor(R/c)  and  x % c = R - c*floor(R/c)   (x >= 0)
 *   x / c = Q + ceil(R/c)   and  x % c = R - c*ceil(R/c)    (x <= 0)
 * for any split. When R's interval lies in one bucket those are closed forms; else,
 * when R has x's sign, floor/ceil of R/c is R's own truncating division. Tries the
 * three remainder choices in turn. */
static const AluExp *split_divmod(const AluExp *e, const AluExp *x, const Lin *X, int64_t cv) {
  jx_dtype d = e->dtype;
  bool is_div = e->op == ALU_DIV, pos = x->lo >= 0;
  if (!pos && x->hi > 0) return e;
  for (SplitMode mode = SPLIT_FLOOR; mode <= SPLIT_CEIL; mode++) {
    Lin Q, R;
    if (!lin_split(X, cv, mode, &Q, &R)) continue;
    if (is_div && !lin_has_terms(&Q) && Q.k0 == 0) continue; /* nothing moved out */
    const AluExp *rn = lin_build(&R), *qn = is_div ? lin_build(&Q) : NULL;
    if (!rn || (is_div && !qn)) return NULL;
    if (!is_const(rn) && !nowrap(rn)) continue;
    __int128 b0 = pos ? floordiv(rn->lo, cv) : ceildiv(rn->lo, cv);
    __int128 b1 = pos ? floordiv(rn->hi, cv) : ceildiv(rn->hi, cv);
    if (b0 == b1) {
      if (is_div) return bin(ALU_ADD, qn, kconst(d, (int64_t)b0));
      return bin(ALU_SUB, rn, kconst(d, (int64_t)(b0 * cv)));
    }
    if (pos ? rn->lo < 0 : rn->hi > 0) continue;
    if (is_div) return bin(ALU_ADD, qn, bin(ALU_DIV, rn, e->src[1]));
    if (rn != x) return bin(ALU_MOD, rn, e->src[1]);
  }
  return e;
}

/* x / c and x % c for x >= 0 written as g*B + S with g > 1 dividing c and S (the terms
 * whose coefficient g does not divide, plus the constant's remainder) proven in [0, g):
 *   x / c == B / (c/g)    and    x % c == (B % (c/g))*g + S
 * (floor division in two steps: floor(x/g) = B as 0 <= S < g; then B >= 0 since x >= 0).
 * This is what separates the indices of a flattened (output, reduction) pair such as
 * (4*gidx + ridx) / 128 with ridx < 4 -> gidx / 32. g is tried from the gcd of c with
 * each coefficient in turn. NULL: no such split. */
static const AluExp *rule_small_remainder(const AluExp *e, const AluExp *x, const Lin *X,
                                          int64_t cv) {
  jx_dtype d = e->dtype;
  if (x->lo < 0) return NULL;
  for (int i = 0; i < X->n; i++) {
    int64_t g = (int64_t)gcd_u64(uabs(X->t[i].k), (uint64_t)cv);
    if (g <= 1) continue;
    Lin B, S;
    lin_init(&B, d, false);
    lin_init(&S, d, false);
    B.k0 = (int64_t)floordiv(X->k0, g);
    S.k0 = X->k0 - B.k0 * g;
    __int128 lo = S.k0, hi = S.k0;
    bool ok = true;
    for (int t = 0; t < X->n && ok; t++) {
      const AluExp *a = X->t[t].atom;
      int64_t k = X->t[t].k;
      if (k % g == 0) {
        lin_add_term(&B, a, k / g);
        continue;
      }
      ok = nowrap(a);
      lo += k > 0 ? (__int128)k * a->lo : (__int128)k * a->hi;
      hi += k > 0 ? (__int128)k * a->hi : (__int128)k * a->lo;
      lin_add_term(&S, a, k);
    }
    if (!ok || !B.ok || !S.ok || lo < 0 || hi >= g || !lin_has_terms(&S)) continue;
    const AluExp *bn = lin_build(&B), *q = kconst(d, cv / g);
    if (e->op == ALU_DIV) return bin(ALU_DIV, bn, q);
    return bin(ALU_ADD, bin(ALU_MUL, bin(ALU_MOD, bn, q), kconst(d, g)), lin_build(&S));
  }
  return NULL;
}

/* x / c with c > 0. */
static const AluExp *rule_div(const AluExp *e, const AluExp *x, int64_t cv) {
  jx_dtype d = e->dtype;
  /* (y / a) / c == y / (a*c) for a, c > 0: trunc(trunc(y/a)/c) = trunc(y/(a*c)) */
  int64_t a = x->op == ALU_DIV || x->op == ALU_MOD ? pos_const(x->src[1]) : 0, ac;
  if (x->op == ALU_DIV && a > 0 && product_fits(d, a, cv, &ac))
    return bin(ALU_DIV, x->src[0], kconst(d, ac));
  /* (y % (c*b)) / c == (y / c) % b: odd in y, and for y >= 0 both are digit b of y */
  if (x->op == ALU_MOD && a > 0 && a % cv == 0)
    return bin(ALU_MOD, bin(ALU_DIV, x->src[0], e->src[1]), kconst(d, a / cv));
  Lin X;
  if (!exact_form(x, &X)) return e;
  /* (g*x') / (g*c') == x' / c' exactly, for either sign of x' */
  int64_t g = lin_gcd(&X, cv);
  if (g > 1) {
    lin_scale_down(&X, g);
    return bin(ALU_DIV, lin_build(&X), kconst(d, cv / g));
  }
  const AluExp *r = rule_small_remainder(e, x, &X, cv);
  return r ? r : split_divmod(e, x, &X, cv);
}

/* x % c with c > 0. */
static const AluExp *rule_mod(const AluExp *e, const AluExp *x, int64_t cv) {
  jx_dtype d = e->dtype;
  /* |x| < c: x % c == x */
  if (nowrap(x) && x->lo > -cv && x->hi < cv) return x;
  /* (y % a) % c == y % c when c divides a: both are congruent to y, share its sign and
   * are smaller than c in magnitude */
  int64_t a = x->op == ALU_MOD ? pos_const(x->src[1]) : 0;
  if (a > 0 && a % cv == 0) return bin(ALU_MOD, x->src[0], e->src[1]);
  Lin X;
  if (!exact_form(x, &X)) return e;
  /* (g*x') % (g*c') == g * (x' % c') */
  int64_t g = lin_gcd(&X, cv);
  if (g > 1) {
    lin_scale_down(&X, g);
    return bin(ALU_MUL, bin(ALU_MOD, lin_build(&X), kconst(d, cv / g)), kconst(d, g));
  }
  const AluExp *r = rule_small_remainder(e, x, &X, cv);
  return r ? r : split_divmod(e, x, &X, cv);
}

/* --------------------------------------------------------------- compares */

/* x < k, x == k, x != k (or k < x) with x linear: move x's constant across and divide
 * by the common factor of its coefficients. Exact: x is proven free of wrap-around and
 * the moved constant must not overflow. */
static const AluExp *rule_cmp(const AluExp *e) {
  const AluExp *a = e->src[0], *b = e->src[1];
  bool const_left = is_const(a) && !is_const(b);
  const AluExp *x = const_left ? b : a, *kc = const_left ? a : b;
  if (!is_const(kc) || !is_signed_int(x->dtype) || !nowrap(x)) return e;
  if (e->op != ALU_CMPLT && const_left) return e; /* == and != keep x on the left */
  Lin X;
  lin_init(&X, x->dtype, true);
  lin_collect(&X, x, 1);
  lin_compact(&X);
  if (!X.ok || X.n == 0) return e;
  int64_t k = kc->value.i, k2;
  if (__builtin_sub_overflow(k, X.k0, &k2)) return e;
  X.k0 = 0;
  uint64_t gu = 0;
  for (int i = 0; i < X.n; i++) gu = gcd_u64(gu, uabs(X.t[i].k));
  int64_t g = gu > (uint64_t)INT64_MAX ? 1 : (int64_t)gu;
  if (g > 1) lin_scale_down(&X, g);
  int64_t lo, hi;
  dtype_limits(x->dtype, &lo, &hi);
  const AluExp *y = lin_build(&X);
  if (!y) return NULL;
  if (!nowrap(y)) return e;
  jx_dtype d = x->dtype;
  switch (e->op) {
  case ALU_CMPLT:
    if (const_left) { /* k < g*y  <=>  floor(k2/g) < y */
      __int128 t = g > 1 ? floordiv(k2, g) : k2;
      if (t < lo || t > hi) return e;
      return bin(ALU_CMPLT, kconst(d, (int64_t)t), y);
    } else { /* g*y < k  <=>  y < ceil(k2/g) */
      __int128 t = g > 1 ? ceildiv(k2, g) : k2;
      if (t < lo || t > hi) return e;
      return bin(ALU_CMPLT, y, kconst(d, (int64_t)t));
    }
  case ALU_CMPEQ:
  case ALU_CMPNE:
    if (k2 % g != 0) return kconst(JX_BOOL, e->op == ALU_CMPNE);
    if (k2 / g < lo || k2 / g > hi) return e;
    return bin(e->op, y, kconst(d, k2 / g));
  default:
    return e;
  }
}

/* -------------------------------------------------------------- dispatcher */

/* One round of rules on a node whose sources are simplified. Returns e if none fires. */
static const AluExp *rules(Simp *c, const AluExp *e) {
  jx_dtype d = e->dtype;
  switch (e->op) {
  case ALU_ADD:
  case ALU_SUB:
  case ALU_NEG:
    return is_int(d) ? rule_linear(c, e) : e;
  case ALU_MUL:
    if (is_int(d) && (is_const(e->src[0]) || is_const(e->src[1]))) return rule_linear(c, e);
    return e;
  case ALU_DIV:
  case ALU_MOD: {
    if (!is_int(d) || !is_const(e->src[1])) return e;
    const AluExp *x = e->src[0];
    int64_t dlo, dhi;
    dtype_limits(d, &dlo, &dhi);
    if (is_signed_int(d) && e->src[1]->value.i < 0 && e->src[1]->value.i != dlo) {
      /* trunc is odd in the divisor: x / -c == -(x / c); x % -c == x % c */
      const AluExp *pc = kconst(d, -e->src[1]->value.i);
      if (e->op == ALU_MOD) return bin(ALU_MOD, x, pc);
      return alu_unary(ALU_NEG, bin(ALU_DIV, x, pc));
    }
    int64_t cv = pos_const(e->src[1]);
    if (cv <= 0) return e;
    return e->op == ALU_DIV ? rule_div(e, x, cv) : rule_mod(e, x, cv);
  }
  case ALU_MIN:
  case ALU_MAX: {
    const AluExp *a = e->src[0], *b = e->src[1];
    if (!nowrap(a) && !is_const(a)) return e;
    if (!nowrap(b) && !is_const(b)) return e;
    bool a_le_b = a->hi <= b->lo, b_le_a = b->hi <= a->lo;
    if (e->op == ALU_MIN) return a_le_b ? a : b_le_a ? b : e;
    return b_le_a ? a : a_le_b ? b : e;
  }
  case ALU_CMPLT:
  case ALU_CMPEQ:
  case ALU_CMPNE:
    return rule_cmp(e);
  default:
    return e;
  }
}

static const AluExp *simp(Simp *c, const AluExp *e) {
  if (!e || e->nsrc == 0) return e;
  const void *v;
  if (alu_map_get(&c->memo, e, &v)) return v;
  const AluExp *s[4] = {0};
  bool changed = false;
  for (int i = 0; i < e->nsrc; i++) {
    if (!(s[i] = simp(c, e->src[i]))) return NULL;
    changed = changed || s[i] != e->src[i];
  }
  const AluExp *r = changed ? alu_make(e->op, e->dtype, e->nsrc, s, e->value, e->arg, e->name)
                            : e;
  if (!r) return NULL;
  if (r != e && alu_map_get(&c->memo, r, &v)) return alu_map_put(&c->memo, e, v) ? v : NULL;
  /* Provisional entries make a rule cycle end at the first repeat instead of looping. */
  if (!alu_map_put(&c->memo, e, r) || !alu_map_put(&c->memo, r, r)) return NULL;
  if (r->nsrc > 0 && c->fuel > 0) {
    c->fuel--;
    const AluExp *r2 = rules(c, r);
    if (!r2) return NULL;
    if (r2 != r) {
      const AluExp *r3 = simp(c, r2);
      if (!r3 || !alu_map_put(&c->memo, e, r3) || !alu_map_put(&c->memo, r, r3)) return NULL;
      r = r3;
    }
  }
  return r;
}

const AluExp *alu_simplify(const AluExp *e) {
  /* Each pass works bottom-up with a fresh memo; a rewrite can expose another one above
   * it that the provisional memo entries skipped, so repeat to a fixed point. */
  for (int pass = 0; e && pass < 8; pass++) {
    Simp c;
    alu_map_init(&c.memo);
    c.fuel = 10000 + 64 * alu_count(e); /* generous: only a runaway rule exhausts it */
    const AluExp *r = simp(&c, e);
    alu_map_free(&c.memo);
    if (r == e) return r;
    e = r;
  }
  return e;
}

/* ------------------------------------------------------------- substitute */

static const AluExp *subst(AluMap *memo, const AluExp *e, const char *name,
                           const AluExp *with) {
  if ((e->op == ALU_SPECIAL || e->op == ALU_VARIABLE) && e->name && strcmp(e->name, name) == 0)
    return with;
  if (e->nsrc == 0) return e;
  const void *v;
  if (alu_map_get(memo, e, &v)) return v;
  const AluExp *s[4] = {0};
  bool changed = false;
  for (int i = 0; i < e->nsrc; i++) {
    if (!(s[i] = subst(memo, e->src[i], name, with))) return NULL;
    changed = changed || s[i] != e->src[i];
  }
  const AluExp *r = changed ? alu_make(e->op, e->dtype, e->nsrc, s, e->value, e->arg, e->name)
                            : e;
  if (r && !alu_map_put(memo, e, r)) return NULL;
  return r;
}

const AluExp *alu_substitute(const AluExp *e, const char *name, const AluExp *with) {
  if (!e || !name || !with) return NULL;
  AluMap memo;
  alu_map_init(&memo);
  const AluExp *r = subst(&memo, e, name, with);
  alu_map_free(&memo);
  return r;
}
