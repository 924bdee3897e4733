/* alu.c -- AluExp nodes: the op tables generated from alu.def, hash-consing in one
 * global mutex-protected table (nodes and interned names live in an arena for the
 * process), interval analysis, and the constructors with their cheap local rewrites:
 * constant folding through alu_eval_op and identities that are exact for the dtype. */
#include "ir/alu.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"

/* ------------------------------------------------------------------ op tables */

static const struct {
  const char *name;
  int arity;
  AluGroup group;
} op_info[ALU_NUM_OPS] = {
#define X(name, arity, group) [ALU_##name] = {#name, arity, ALU_GROUP_##group},
#include "ir/alu.def"
#undef X
};

const char *alu_op_name(AluOp op) {
  return (unsigned)op < ALU_NUM_OPS ? op_info[op].name : "?";
}
int alu_op_arity(AluOp op) { return (unsigned)op < ALU_NUM_OPS ? op_info[op].arity : -1; }
AluGroup alu_op_group(AluOp op) {
  return (unsigned)op < ALU_NUM_OPS ? op_info[op].group : ALU_GROUP_LEAF;
}

/* ------------------------------------------------------------ hash-consing */

/* Everything below is guarded by `lock`: the node table, the name table, the arenas
 * and the id counter. Constructors compute a candidate node outside the lock and only
 * look up / insert under it. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
  const AluExp **slots; /* open addressing, linear probing; cap is a power of two */
  size_t cap, count;
} NodeTable;
static NodeTable nodes;
static uint64_t next_id;

typedef struct {
  const char **slots;
  size_t cap, count;
} NameTable;
static NameTable names;

/* Nodes are carved from chunks that are never freed: the DAG lives for the process. */
#define ARENA_CHUNK 1024
static AluExp *arena_next;
static size_t arena_left;

static uint64_t mix64(uint64_t x) { /* splitmix64 finalizer */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
static uint64_t hash_combine(uint64_t h, uint64_t v) {
  return mix64(h ^ (v + 0x9e3779b97f4a7c15ull));
}

static uint64_t hash_str(const char *s) { /* FNV-1a */
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

/* Hashes use source hashes and name contents, never addresses, so they are the same in
 * every process (they order terms in the simplifier and appear in kernel names). */
static uint64_t node_hash(const AluExp *e) {
  uint64_t h = hash_combine((uint64_t)e->op, (uint64_t)e->dtype);
  h = hash_combine(h, (uint64_t)e->nsrc);
  h = hash_combine(h, e->value.u);
  if (dtype_is_complex(e->dtype) && e->op == ALU_CONST) {
    uint64_t im;
    memcpy(&im, &e->value.c.im, sizeof im);
    h = hash_combine(h, im);
  }
  h = hash_combine(h, (uint64_t)e->arg);
  h = hash_combine(h, e->name ? hash_str(e->name) : 0);
  for (int i = 0; i < e->nsrc; i++) h = hash_combine(h, e->src[i]->hash);
  return h;
}

static bool node_equal(const AluExp *a, const AluExp *b) {
  if (a->hash != b->hash || a->op != b->op || a->dtype != b->dtype || a->nsrc != b->nsrc ||
      a->value.u != b->value.u || a->arg != b->arg || a->name != b->name)
    return false;
  if (dtype_is_complex(a->dtype) && a->op == ALU_CONST &&
      memcmp(&a->value.c.im, &b->value.c.im, sizeof(double)) != 0)
    return false;
  for (int i = 0; i < a->nsrc; i++)
    if (a->src[i] != b->src[i]) return false;
  return true;
}

static bool table_grow(NodeTable *t) {
  size_t cap = t->cap ? t->cap * 2 : 4096;
  const AluExp **slots = calloc(cap, sizeof *slots);
  if (!slots) return false;
  for (size_t i = 0; i < t->cap; i++) {
    const AluExp *e = t->slots[i];
    if (!e) continue;
    size_t j = (size_t)e->hash & (cap - 1);
    while (slots[j]) j = (j + 1) & (cap - 1);
    slots[j] = e;
  }
  free(t->slots);
  t->slots = slots;
  t->cap = cap;
  return true;
}

/* Returns the unique node equal to *proto (whose hash is set), inserting a copy. */
static const AluExp *intern_locked(const AluExp *proto) {
  if ((nodes.count + 1) * 2 > nodes.cap && !table_grow(&nodes)) return NULL;
  size_t j = (size_t)proto->hash & (nodes.cap - 1);
  for (; nodes.slots[j]; j = (j + 1) & (nodes.cap - 1))
    if (node_equal(nodes.slots[j], proto)) return nodes.slots[j];
  if (arena_left == 0) {
    arena_next = malloc(ARENA_CHUNK * sizeof *arena_next);
    if (!arena_next) return NULL;
    arena_left = ARENA_CHUNK;
  }
  AluExp *e = arena_next++;
  arena_left--;
  *e = *proto;
  e->id = next_id++;
  nodes.slots[j] = e;
  nodes.count++;
  return e;
}

static const AluExp *intern(AluExp *proto) {
  proto->hash = node_hash(proto);
  pthread_mutex_lock(&lock);
  const AluExp *e = intern_locked(proto);
  pthread_mutex_unlock(&lock);
  if (!e) error_set(JX_ERR_OOM, "alu: out of memory interning a %s node", alu_op_name(proto->op));
  return e;
}

static const char *intern_name(const char *s) {
  if (!s) return NULL;
  uint64_t h = hash_str(s);
  const char *out = NULL;
  pthread_mutex_lock(&lock);
  if ((names.count + 1) * 2 > names.cap) {
    size_t cap = names.cap ? names.cap * 2 : 64;
    const char **slots = calloc(cap, sizeof *slots);
    if (!slots) goto done;
    for (size_t i = 0; i < names.cap; i++) {
      if (!names.slots[i]) continue;
      size_t j = (size_t)hash_str(names.slots[i]) & (cap - 1);
      while (slots[j]) j = (j + 1) & (cap - 1);
      slots[j] = names.slots[i];
    }
    free(names.slots);
    names.slots = slots;
    names.cap = cap;
  }
  size_t j = (size_t)h & (names.cap - 1);
  for (; names.slots[j]; j = (j + 1) & (names.cap - 1))
    if (strcmp(names.slots[j], s) == 0) {
      out = names.slots[j];
      goto done;
    }
  size_t n = strlen(s) + 1;
  char *copy = malloc(n);
  if (!copy) goto done;
  memcpy(copy, s, n);
  names.slots[j] = copy;
  names.count++;
  out = copy;
done:
  pthread_mutex_unlock(&lock);
  if (!out) error_set(JX_ERR_OOM, "alu: out of memory interning name \"%s\"", s);
  return out;
}

/* ---------------------------------------------------------------- intervals */

#define IV_MIN INT64_MIN
#define IV_MAX INT64_MAX

/* The representable interval of a dtype. uint64 values above INT64_MAX and floats do
 * not fit an int64 interval: their "range" is the unknown sentinel [IV_MIN, IV_MAX],
 * which every rule treats as "nothing known" because it has lo < 0 and is full. */
static void dtype_range(jx_dtype d, int64_t *lo, int64_t *hi) {
  *lo = IV_MIN;
  *hi = IV_MAX;
  if (dtype_is_bool(d)) {
    *lo = 0;
    *hi = 1;
  } else if (dtype_is_integer(d) && d != JX_UINT64 && d != JX_INT64) {
    int bits = dtype_bits(d);
    if (dtype_is_unsigned(d)) {
      *lo = 0;
      *hi = (int64_t)((1ull << bits) - 1);
    } else {
      *lo = -(int64_t)(1ull << (bits - 1));
      *hi = (int64_t)((1ull << (bits - 1)) - 1);
    }
  }
}

static bool has_interval(jx_dtype d) { return dtype_is_bool(d) || dtype_is_integer(d); }

/* The interval of a source, or false when nothing is known (floats, unknown u64). */
static bool src_iv(const AluExp *s, __int128 *lo, __int128 *hi) {
  if (!has_interval(s->dtype)) return false;
  if (s->dtype == JX_UINT64 && s->lo < 0) return false;
  *lo = s->lo;
  *hi = s->hi;
  return true;
}

/* Stores [lo, hi] when it lies inside dtype's range (so no wrap-around happened), else
 * the whole range: a possibly-wrapped result is "anything of the dtype". */
static void iv_fit(jx_dtype d, __int128 lo, __int128 hi, int64_t *olo, int64_t *ohi) {
  int64_t dlo, dhi;
  dtype_range(d, &dlo, &dhi);
  if (d == JX_UINT64) dlo = 0; /* known u64 intervals live in [0, INT64_MAX] */
  if (lo >= dlo && hi <= dhi && lo <= hi) {
    *olo = (int64_t)lo;
    *ohi = (int64_t)hi;
  } else {
    dtype_range(d, olo, ohi);
  }
}

static __int128 min128(__int128 a, __int128 b) { return a < b ? a : b; }
static __int128 max128(__int128 a, __int128 b) { return a > b ? a : b; }
static __int128 abs128(__int128 a) { return a < 0 ? -a : a; }

/* Truncating quotient range of a in [alo, ahi] by b in [blo, bhi] with 0 outside [blo,
 * bhi]: trunc(a/b) is monotone in each argument on such a box, so corners bound it. */
static void div_corners(__int128 alo, __int128 ahi, __int128 blo, __int128 bhi, __int128 *lo,
                        __int128 *hi) {
  __int128 c[4] = {alo / blo, alo / bhi, ahi / blo, ahi / bhi};
  *lo = *hi = c[0];
  for (int i = 1; i < 4; i++) {
    *lo = min128(*lo, c[i]);
    *hi = max128(*hi, c[i]);
  }
}

static int bit_length(__int128 v) { /* v >= 0 */
  int n = 0;
  while (v > 0) {
    n++;
    v >>= 1;
  }
  return n;
}

/* Interval of a (well-typed) op node from its sources' intervals. */
static void compute_interval(AluExp *e) {
  jx_dtype d = e->dtype;
  int64_t *olo = &e->lo, *ohi = &e->hi;
  dtype_range(d, olo, ohi);
  if (!has_interval(d)) return;
  __int128 a0 = 0, a1 = 0, b0 = 0, b1 = 0;
  bool ka = e->nsrc > 0 && src_iv(e->src[0], &a0, &a1);
  bool kb = e->nsrc > 1 && src_iv(e->src[1], &b0, &b1);
  switch (e->op) {
  case ALU_CONST:
    if (dtype_is_unsigned(d) ? e->value.u <= (uint64_t)IV_MAX : true) *olo = *ohi = e->value.i;
    return;
  case ALU_SPECIAL:
    *olo = 0;
    *ohi = e->arg > 0 ? e->arg - 1 : 0;
    return;
  case ALU_ADD:
    if (ka && kb) iv_fit(d, a0 + b0, a1 + b1, olo, ohi);
    return;
  case ALU_SUB:
    if (ka && kb) iv_fit(d, a0 - b1, a1 - b0, olo, ohi);
    return;
  case ALU_MUL:
    if (ka && kb) {
      __int128 c[4] = {a0 * b0, a0 * b1, a1 * b0, a1 * b1}, lo = c[0], hi = c[0];
      for (int i = 1; i < 4; i++) {
        lo = min128(lo, c[i]);
        hi = max128(hi, c[i]);
      }
      iv_fit(d, lo, hi, olo, ohi);
    }
    return;
  case ALU_DIV:
    if (ka && kb && !dtype_is_bool(d)) {
      __int128 lo = 0, hi = 0, l, h;
      bool any = false;
      if (b0 <= -1) { /* negative divisors */
        div_corners(a0, a1, b0, min128(b1, -1), &l, &h);
        lo = l, hi = h, any = true;
      }
      if (b1 >= 1) {
        div_corners(a0, a1, max128(b0, 1), b1, &l, &h);
        lo = any ? min128(lo, l) : l, hi = any ? max128(hi, h) : h, any = true;
      }
      if (b0 <= 0 && b1 >= 0) { /* x/0: -1, or all ones for unsigned */
        int64_t dlo, dhi;
        dtype_range(d, &dlo, &dhi);
        __int128 z = dtype_is_unsigned(d) ? (__int128)dhi : -1;
        if (d == JX_UINT64) return; /* all ones is not representable */
        lo = any ? min128(lo, z) : z, hi = any ? max128(hi, z) : z;
      }
      iv_fit(d, lo, hi, olo, ohi);
    }
    return;
  case ALU_MOD:
    if (ka && kb && !dtype_is_bool(d)) {
      /* C remainder: sign of x, |x % b| < |b| and |x % b| <= |x|; x % 0 = x. */
      __int128 lo = min128(a0, 0), hi = max128(a1, 0);
      if (b0 > 0 || b1 < 0) {
        __int128 m = max128(abs128(b0), abs128(b1)) - 1;
        __int128 minabs = b0 > 0 ? b0 : -b1;
        if (a0 >= 0 && a1 < minabs) lo = a0, hi = a1;       /* x % b == x */
        else if (a1 <= 0 && -a0 < minabs) lo = a0, hi = a1; /* likewise */
        else lo = max128(lo, -m), hi = min128(hi, m);
      }
      iv_fit(d, lo, hi, olo, ohi);
    }
    return;
  case ALU_MIN:
    if (ka && kb) iv_fit(d, min128(a0, b0), min128(a1, b1), olo, ohi);
    return;
  case ALU_MAX:
    if (ka && kb) iv_fit(d, max128(a0, b0), max128(a1, b1), olo, ohi);
    return;
  case ALU_AND:
    if (dtype_is_bool(d) && ka && kb) iv_fit(d, a0 && b0, a1 && b1, olo, ohi);
    else if (ka && kb && a0 >= 0 && b0 >= 0) iv_fit(d, 0, min128(a1, b1), olo, ohi);
    else if (ka && a0 >= 0) iv_fit(d, 0, a1, olo, ohi);
    else if (kb && b0 >= 0) iv_fit(d, 0, b1, olo, ohi);
    return;
  case ALU_OR:
  case ALU_XOR:
    if (dtype_is_bool(d) && ka && kb) {
      if (e->op == ALU_OR) iv_fit(d, a0 || b0, a1 || b1, olo, ohi);
      else if (a0 == a1 && b0 == b1) iv_fit(d, a0 ^ b0, a0 ^ b0, olo, ohi);
    } else if (ka && kb && a0 >= 0 && b0 >= 0) {
      __int128 top = ((__int128)1 << bit_length(max128(a1, b1))) - 1;
      iv_fit(d, e->op == ALU_OR ? max128(a0, b0) : 0, top, olo, ohi);
    }
    return;
  case ALU_SHR:
    if (ka && kb && a0 >= 0 && b0 >= 0 && b1 < dtype_bits(d))
      iv_fit(d, a0 >> (int)b1, a1 >> (int)b0, olo, ohi);
    return;
  case ALU_CMPLT:
  case ALU_CMPNE:
  case ALU_CMPEQ: {
    *olo = 0, *ohi = 1;
    if (!ka || !kb) return;
    int v = -1; /* decided value, if any */
    if (e->op == ALU_CMPLT) v = a1 < b0 ? 1 : a0 >= b1 ? 0 : -1;
    else if (a1 < b0 || b1 < a0) v = e->op == ALU_CMPNE;
    else if (a0 == a1 && b0 == b1 && a0 == b0) v = e->op == ALU_CMPEQ;
    if (v >= 0) *olo = *ohi = v;
    return;
  }
  case ALU_NEG:
    if (ka && !dtype_is_bool(d)) iv_fit(d, -a1, -a0, olo, ohi);
    return;
  case ALU_NOT:
    if (!ka) return;
    if (dtype_is_bool(d)) iv_fit(d, 1 - a1, 1 - a0, olo, ohi);
    else if (dtype_is_unsigned(d)) {
      if (d != JX_UINT64) iv_fit(d, *ohi - a1, *ohi - a0, olo, ohi);
    } else iv_fit(d, -a1 - 1, -a0 - 1, olo, ohi);
    return;
  case ALU_ABS:
    if (!ka || dtype_is_bool(d)) return;
    if (a0 >= 0) iv_fit(d, a0, a1, olo, ohi);
    else if (a1 <= 0) iv_fit(d, -a1, -a0, olo, ohi);
    else iv_fit(d, 0, max128(-a0, a1), olo, ohi);
    return;
  case ALU_SIGN:
    if (ka && !dtype_is_bool(d))
      iv_fit(d, (a0 > 0) - (a0 < 0), (a1 > 0) - (a1 < 0), olo, ohi);
    return;
  case ALU_FLOOR:
  case ALU_CEIL:
  case ALU_ROUND:
  case ALU_TRUNC: /* identity on integers */
    if (ka) iv_fit(d, a0, a1, olo, ohi);
    return;
  case ALU_CAST:
    if (!ka) return; /* from float: saturating, anything of the target */
    if (dtype_is_bool(d)) {
      if (a0 > 0 || a1 < 0) *olo = *ohi = 1;
      else if (a0 == 0 && a1 == 0) *olo = *ohi = 0;
    } else {
      iv_fit(d, a0, a1, olo, ohi);
    }
    return;
  case ALU_WHERE: {
    __int128 c0 = e->src[0]->lo, c1 = e->src[0]->hi, x0, x1, y0, y1;
    bool kx = src_iv(e->src[1], &x0, &x1), ky = src_iv(e->src[2], &y0, &y1);
    if (c0 == 1 && kx) iv_fit(d, x0, x1, olo, ohi);
    else if (c1 == 0 && ky) iv_fit(d, y0, y1, olo, ohi);
    else if (kx && ky) iv_fit(d, min128(x0, y0), max128(x1, y1), olo, ohi);
    return;
  }
  default: /* SHL, POW, BITCAST, FMA, THREEFRY2X32, loads, variables: the dtype's range */
    return;
  }
}

/* -------------------------------------------------------------- constructors */

static AluExp proto_node(AluOp op, jx_dtype dtype, int nsrc, const AluExp *const *src) {
  AluExp p;
  memset(&p, 0, sizeof p);
  p.op = op;
  p.dtype = dtype;
  p.nsrc = nsrc;
  for (int i = 0; i < nsrc && i < 4; i++) p.src[i] = src[i];
  return p;
}

const AluExp *alu_const(jx_dtype dtype, AluValue v) {
  AluExp p = proto_node(ALU_CONST, dtype, 0, NULL);
  p.value = dtype_is_valid(dtype) ? alu_normalize(dtype, v) : v;
  compute_interval(&p);
  return intern(&p);
}

const AluExp *alu_const_int(jx_dtype dtype, int64_t v) {
  if (dtype_is_inexact(dtype)) return alu_const_float(dtype, (double)v);
  return alu_const(dtype, (AluValue){.i = v});
}

const AluExp *alu_const_float(jx_dtype dtype, double v) {
  if (!dtype_is_floating(dtype)) /* an int dtype: the cast's saturating conversion */
    return alu_const(dtype, alu_eval_op(ALU_CAST, dtype, JX_FLOAT64, &(AluValue){.f = v}));
  return alu_const(dtype, (AluValue){.f = v});
}

const AluExp *alu_special(const char *name, int64_t range) {
  AluExp p = proto_node(ALU_SPECIAL, JX_INT64, 0, NULL);
  if (!(p.name = intern_name(name))) return NULL;
  p.arg = range;
  compute_interval(&p);
  return intern(&p);
}

const AluExp *alu_variable(const char *name, jx_dtype dtype) {
  AluExp p = proto_node(ALU_VARIABLE, dtype, 0, NULL);
  if (!(p.name = intern_name(name))) return NULL;
  compute_interval(&p);
  return intern(&p);
}

const AluExp *alu_global(int64_t input, jx_dtype dtype, const AluExp *index) {
  if (!index) return NULL;
  AluExp p = proto_node(ALU_GLOBAL_INDEX, dtype, 1, &index);
  p.arg = input;
  compute_interval(&p);
  return intern(&p);
}

static bool is_const(const AluExp *e) { return e->op == ALU_CONST; }
static bool is_int(jx_dtype d) { return dtype_is_integer(d); }
static bool is_intlike(jx_dtype d) { return dtype_is_integer(d) || dtype_is_bool(d); }

/* Is e the constant v? For floats compares the double exactly, so 0.0 != -0.0. */
static bool const_is(const AluExp *e, double v) {
  if (!is_const(e)) return false;
  if (dtype_is_complex(e->dtype)) /* v + 0i (the imaginary zero's sign matters too) */
    return e->value.c.re == v && signbit(e->value.c.re) == signbit(v) &&
           e->value.c.im == 0.0 && signbit(e->value.c.im) == signbit(v);
  if (dtype_is_floating(e->dtype))
    return e->value.f == v && signbit(e->value.f) == signbit(v);
  if (dtype_is_unsigned(e->dtype)) return v >= 0 && e->value.u == (uint64_t)v;
  return e->value.i == (int64_t)v;
}

static bool const_all_ones(const AluExp *e) {
  if (!is_const(e) || !is_intlike(e->dtype)) return false;
  AluValue ones = alu_normalize(e->dtype, (AluValue){.i = -1});
  return e->value.u == ones.u;
}

/* Does the cast from -> to keep every value exactly (so a later cast may skip it)? */
static bool cast_is_exact(jx_dtype from, jx_dtype to) {
  if (from == to || dtype_is_bool(from)) return true;
  if (dtype_is_bool(to)) return false;
  if (is_int(from) && is_int(to)) {
    int64_t flo, fhi, tlo, thi;
    dtype_range(from, &flo, &fhi);
    dtype_range(to, &tlo, &thi);
    if (from == JX_UINT64) return to == JX_UINT64;
    if (to == JX_UINT64) return dtype_is_unsigned(from);
    return tlo <= flo && fhi <= thi;
  }
  if (is_int(from) && dtype_is_floating(to)) {
    static const int mant[JX_NUM_DTYPES] = {[JX_FLOAT16] = 11, [JX_BFLOAT16] = 8,
                                            [JX_FLOAT32] = 24, [JX_FLOAT64] = 53};
    int need = dtype_bits(from) - !dtype_is_unsigned(from);
    return need <= mant[to];
  }
  if (dtype_is_floating(from) && dtype_is_floating(to)) {
    if (to == JX_FLOAT64) return true;
    return to == JX_FLOAT32 && (from == JX_FLOAT16 || from == JX_BFLOAT16);
  }
  return false;
}

static const AluExp *build(AluOp op, jx_dtype dtype, int nsrc, const AluExp *const *s);

static const AluExp *mk1(AluOp op, jx_dtype d, const AluExp *a) { return build(op, d, 1, &a); }
static const AluExp *mk2(AluOp op, const AluExp *a, const AluExp *b) {
  const AluExp *s[2] = {a, b};
  AluGroup g = alu_op_group(op);
  return build(op, g == ALU_GROUP_COMPARE ? JX_BOOL : a->dtype, 2, s);
}

/* The cheap local rewrites. Returns the replacement, or NULL to keep the node. Every
 * rule here is exact for every value of the dtype (NaN, -0.0 and wrap-around included). */
static const AluExp *rewrite(AluOp op, jx_dtype d, const AluExp *const *s) {
  const AluExp *a = s[0], *b = op_info[op].arity > 1 ? s[1] : NULL;
  bool fl = dtype_is_floating(a->dtype), in = is_int(a->dtype);
  switch (op) {
  case ALU_ADD:
    if (in && const_is(b, 0)) return a;
    if (fl && const_is(b, -0.0)) return a; /* x + 0.0 is not x: -0.0 + 0.0 = +0.0 */
    return NULL;
  case ALU_SUB:
    if (in && const_is(b, 0)) return a;
    if (fl && const_is(b, 0.0)) return a;
    if (in && a == b) return alu_const_int(d, 0);
    return NULL;
  case ALU_MUL:
    if ((in || fl) && const_is(b, 1)) return a;
    if (in && const_is(b, 0)) return b; /* never for floats: NaN * 0, inf * 0, -x * 0 */
    return NULL;
  case ALU_DIV:
    if ((in || fl) && const_is(b, 1)) return a;
    return NULL;
  case ALU_MOD:
    if (in && (const_is(b, 1) || (!dtype_is_unsigned(d) && const_is(b, -1))))
      return alu_const_int(d, 0);
    if (in && const_is(b, 0)) return a; /* x % 0 = x */
    return NULL;
  case ALU_MIN:
  case ALU_MAX:
    return a == b ? a : NULL;
  case ALU_AND:
    if (a == b) return a;
    if (const_is(b, 0)) return b;
    if (const_all_ones(b)) return a;
    return NULL;
  case ALU_OR:
    if (a == b || const_is(b, 0)) return a;
    if (const_all_ones(b)) return b;
    return NULL;
  case ALU_XOR:
    if (const_is(b, 0)) return a;
    if (a == b && is_intlike(d)) return alu_const_int(d, 0);
    if (dtype_is_bool(d) && const_is(b, 1)) return mk1(ALU_NOT, d, a);
    return NULL;
  case ALU_SHL:
  case ALU_SHR:
    return const_is(b, 0) ? a : NULL;
  case ALU_CMPLT:
    return a == b ? alu_const_int(JX_BOOL, 0) : NULL; /* x < x is false, NaN included */
  case ALU_CMPNE:
  case ALU_CMPEQ:
    if (!is_intlike(a->dtype)) return NULL; /* NaN != NaN */
    if (a == b) return alu_const_int(JX_BOOL, op == ALU_CMPEQ);
    if (dtype_is_bool(a->dtype) && is_const(b)) /* x != false, x == true -> x */
      return (b->value.i != 0) == (op == ALU_CMPEQ) ? a : mk1(ALU_NOT, JX_BOOL, a);
    return NULL;
  case ALU_NEG:
    return a->op == ALU_NEG ? a->src[0] : NULL;
  case ALU_NOT:
    if (a->op == ALU_NOT) return a->src[0];
    /* != is the exact complement of == for every value, NaN included */
    if (a->op == ALU_CMPNE) return mk2(ALU_CMPEQ, a->src[0], a->src[1]);
    if (a->op == ALU_CMPEQ) return mk2(ALU_CMPNE, a->src[0], a->src[1]);
    return NULL;
  case ALU_FLOOR:
  case ALU_CEIL:
  case ALU_ROUND:
  case ALU_TRUNC:
    if (is_intlike(d)) return a;
    return a->op == op ? a : NULL;
  case ALU_ABS:
    /* abs(abs(x)) = abs(x) even for INT_MIN (it stays INT_MIN) */
    if (a->op == ALU_ABS || dtype_is_unsigned(d)) return a;
    return is_int(d) && a->lo >= 0 ? a : NULL;
  case ALU_CAST:
    if (a->dtype == d) return a;
    if (a->op == ALU_CAST && cast_is_exact(a->src[0]->dtype, a->dtype))
      return a->src[0]->dtype == d ? a->src[0] : mk1(ALU_CAST, d, a->src[0]);
    return NULL;
  case ALU_BITCAST:
    if (a->dtype == d) return a;
    if (a->op == ALU_BITCAST)
      return a->src[0]->dtype == d ? a->src[0] : mk1(ALU_BITCAST, d, a->src[0]);
    return NULL;
  case ALU_WHERE: {
    const AluExp *x = s[1], *y = s[2];
    if (is_const(a)) return a->value.i ? x : y;
    if (x == y) return x;
    if (dtype_is_bool(d) && const_is(x, 1) && const_is(y, 0)) return a;
    if (dtype_is_bool(d) && const_is(x, 0) && const_is(y, 1)) return mk1(ALU_NOT, d, a);
    if (a->op == ALU_NOT) {
      const AluExp *t[3] = {a->src[0], y, x};
      return build(ALU_WHERE, d, 3, t);
    }
    return NULL;
  }
  default:
    return NULL;
  }
}

static bool commutative(AluOp op) {
  switch (op) {
  case ALU_ADD: case ALU_MUL: case ALU_MIN: case ALU_MAX: case ALU_AND: case ALU_OR:
  case ALU_XOR: case ALU_CMPNE: case ALU_CMPEQ:
    return true;
  default:
    return false;
  }
}

/* The one path every non-leaf node takes: canonical operand order, constant folding,
 * local rewrites, intervals (a node whose interval is one point becomes that constant),
 * then hash-consing. An ill-typed node is interned as given, unrewritten, so that
 * alu_check can report it. */
static const AluExp *build(AluOp op, jx_dtype dtype, int nsrc, const AluExp *const *s) {
  for (int i = 0; i < nsrc; i++)
    if (!s[i]) return NULL;
  const AluExp *src[4] = {0};
  for (int i = 0; i < nsrc && i < 4; i++) src[i] = s[i];
  AluExp p = proto_node(op, dtype, nsrc, src);
  char msg[160];
  if (alu_node_error(&p, msg, sizeof msg)) { /* ill-typed: keep it for the checker */
    dtype_range(dtype_is_valid(dtype) ? dtype : JX_FLOAT32, &p.lo, &p.hi);
    return intern(&p);
  }
  if (commutative(op) && is_const(src[0]) && !is_const(src[1])) {
    const AluExp *t = src[0];
    p.src[0] = src[0] = src[1];
    p.src[1] = src[1] = t;
  }
  bool all_const = true;
  for (int i = 0; i < nsrc; i++) all_const = all_const && is_const(src[i]);
  if (all_const) {
    AluValue args[4];
    for (int i = 0; i < nsrc; i++) args[i] = src[i]->value;
    return alu_const(dtype, alu_eval_op(op, dtype, src[0]->dtype, args));
  }
  const AluExp *r = rewrite(op, dtype, src);
  if (r) return r;
  compute_interval(&p);
  if (has_interval(dtype) && p.lo == p.hi) return alu_const_int(dtype, p.lo);
  return intern(&p);
}

const AluExp *alu_unary(AluOp op, const AluExp *x) {
  if (!x) return NULL;
  if (!JX_CHECK(op_info[op].arity == 1 && op_info[op].group != ALU_GROUP_SPECIAL))
    return NULL;
  if (dtype_is_complex(x->dtype) && !alu_complex_native(op)) return alu_complex_expand(op, x, NULL);
  return build(op, op_info[op].group == ALU_GROUP_UNARY_PRED ? JX_BOOL : x->dtype, 1, &x);
}

const AluExp *alu_binary(AluOp op, const AluExp *a, const AluExp *b) {
  if (!a || !b) return NULL;
  if (!JX_CHECK(op_info[op].arity == 2)) return NULL;
  if (dtype_is_complex(a->dtype) && a->dtype == b->dtype && !alu_complex_native(op))
    return alu_complex_expand(op, a, b);
  return mk2(op, a, b);
}

const AluExp *alu_where(const AluExp *cond, const AluExp *a, const AluExp *b) {
  if (!cond || !a || !b) return NULL;
  const AluExp *s[3] = {cond, a, b};
  return build(ALU_WHERE, a->dtype, 3, s);
}

const AluExp *alu_cast(const AluExp *x, jx_dtype dtype) {
  return x ? build(ALU_CAST, dtype, 1, &x) : NULL;
}

const AluExp *alu_bitcast(const AluExp *x, jx_dtype dtype) {
  return x ? build(ALU_BITCAST, dtype, 1, &x) : NULL;
}

const AluExp *alu_real(const AluExp *x) {
  if (!x) return NULL;
  if (!dtype_is_complex(x->dtype)) return x; /* real(x) of a real value: itself */
  if (x->op == ALU_COMPLEX) return x->src[0];
  return build(ALU_REAL, dtype_real_part(x->dtype), 1, &x);
}

const AluExp *alu_imag(const AluExp *x) {
  if (!x) return NULL;
  if (!dtype_is_complex(x->dtype)) return alu_const_float(x->dtype, 0.0);
  if (x->op == ALU_COMPLEX) return x->src[1];
  return build(ALU_IMAG, dtype_real_part(x->dtype), 1, &x);
}

const AluExp *alu_complex(const AluExp *re, const AluExp *im) {
  if (!re || !im) return NULL;
  /* complex(real(z), imag(z)) = z */
  if (re->op == ALU_REAL && im->op == ALU_IMAG && re->src[0] == im->src[0]) return re->src[0];
  const AluExp *s[2] = {re, im};
  return build(ALU_COMPLEX, dtype_to_complex(re->dtype), 2, s);
}

const AluExp *alu_fma(const AluExp *a, const AluExp *b, const AluExp *c) {
  if (!a || !b || !c) return NULL;
  const AluExp *s[3] = {a, b, c};
  return build(ALU_FMA, a->dtype, 3, s);
}

const AluExp *alu_threefry2x32(const AluExp *k0, const AluExp *k1, const AluExp *c0,
                               const AluExp *c1) {
  const AluExp *s[4] = {k0, k1, c0, c1};
  return build(ALU_THREEFRY2X32, JX_UINT64, 4, s);
}

const AluExp *alu_make(AluOp op, jx_dtype dtype, int nsrc, const AluExp *const *src,
                       AluValue value, int64_t arg, const char *name) {
  if ((unsigned)op >= ALU_NUM_OPS || nsrc < 0 || nsrc > 4) {
    error_set(JX_ERR_INTERNAL, "alu_make: bad op %d or source count %d", (int)op, nsrc);
    return NULL;
  }
  for (int i = 0; i < nsrc; i++)
    if (!src[i]) return NULL;
  AluExp p = proto_node(op, dtype, nsrc, src);
  p.value = op == ALU_CONST ? value : (AluValue){.u = 0};
  p.arg = op == ALU_SPECIAL || op == ALU_GLOBAL_INDEX ? arg : 0;
  if (op == ALU_SPECIAL || op == ALU_VARIABLE) {
    if (!name) {
      error_set(JX_ERR_INTERNAL, "alu_make: %s without a name", alu_op_name(op));
      return NULL;
    }
    if (!(p.name = intern_name(name))) return NULL;
  }
  char msg[160];
  if (nsrc != op_info[op].arity || alu_node_error(&p, msg, sizeof msg)) {
    dtype_range(dtype_is_valid(dtype) ? dtype : JX_FLOAT32, &p.lo, &p.hi);
    return intern(&p); /* malformed on purpose (checker tests) or by a bug: keep as is */
  }
  switch (op) {
  case ALU_CONST: return alu_const(dtype, value);
  case ALU_SPECIAL: return alu_special(name, arg);
  case ALU_VARIABLE: return alu_variable(name, dtype);
  case ALU_GLOBAL_INDEX: return alu_global(arg, dtype, src[0]);
  default: return build(op, dtype, nsrc, src);
  }
}

/* ------------------------------------------------------------ DAG utilities */

void alu_map_init(AluMap *m) { memset(m, 0, sizeof *m); }

void alu_map_free(AluMap *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

static size_t ptr_slot(const AluExp *k, size_t cap) {
  return (size_t)mix64((uint64_t)(uintptr_t)k) & (cap - 1);
}

bool alu_map_put(AluMap *m, const AluExp *k, const void *v) {
  if ((m->count + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    const AluExp **keys = calloc(cap, sizeof *keys);
    const void **vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
      free(keys);
      free(vals);
      error_set(JX_ERR_OOM, "alu: out of memory growing a node map");
      return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->keys[i]) continue;
      size_t j = ptr_slot(m->keys[i], cap);
      while (keys[j]) j = (j + 1) & (cap - 1);
      keys[j] = m->keys[i];
      vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
  }
  size_t j = ptr_slot(k, m->cap);
  for (; m->keys[j]; j = (j + 1) & (m->cap - 1))
    if (m->keys[j] == k) {
      m->vals[j] = v;
      return true;
    }
  m->keys[j] = k;
  m->vals[j] = v;
  m->count++;
  return true;
}

bool alu_map_get(const AluMap *m, const AluExp *k, const void **v) {
  if (!m->cap) return false;
  for (size_t j = ptr_slot(k, m->cap); m->keys[j]; j = (j + 1) & (m->cap - 1))
    if (m->keys[j] == k) {
      if (v) *v = m->vals[j];
      return true;
    }
  return false;
}

/* Iterative post-order DFS (expressions can be deep; no recursion). */
const AluExp **alu_toposort(const AluExp *e, int64_t *n) {
  *n = 0;
  if (!e) return NULL;
  AluMap seen;
  alu_map_init(&seen);
  size_t cap = 64, top = 0, len = 0, lcap = 64;
  struct Frame { const AluExp *e; int next; } *stack = malloc(cap * sizeof *stack);
  const AluExp **list = malloc(lcap * sizeof *list);
  if (!stack || !list) goto oom;
  if (!alu_map_put(&seen, e, NULL)) goto fail;
  stack[top++] = (struct Frame){e, 0};
  while (top) {
    struct Frame *f = &stack[top - 1];
    if (f->next < f->e->nsrc) {
      const AluExp *s = f->e->src[f->next++];
      if (alu_map_get(&seen, s, NULL)) continue;
      if (!alu_map_put(&seen, s, NULL)) goto fail;
      if (top == cap) {
        void *p = realloc(stack, (cap *= 2) * sizeof *stack);
        if (!p) goto oom;
        stack = p;
      }
      stack[top++] = (struct Frame){s, 0};
    } else {
      if (len == lcap) {
        void *p = realloc(list, (lcap *= 2) * sizeof *list);
        if (!p) goto oom;
        list = p;
      }
      list[len++] = f->e;
      top--;
    }
  }
  free(stack);
  alu_map_free(&seen);
  *n = (int64_t)len;
  return list;
oom:
  error_set(JX_ERR_OOM, "alu_toposort: out of memory");
fail:
  free(stack);
  free(list);
  alu_map_free(&seen);
  return NULL;
}

int64_t alu_count(const AluExp *e) {
  int64_t n;
  free((void *)alu_toposort(e, &n));
  return n;
}

const AluExp *alu_threefry_word(const AluExp *k0, const AluExp *k1, const AluExp *c0,
                                const AluExp *c1, int word) {
  const AluExp *t = alu_threefry2x32(k0, k1, c0, c1);
  if (word == 0) t = alu_binary(ALU_SHR, t, alu_const_int(JX_UINT64, 32));
  return alu_cast(t, JX_UINT32);
}
