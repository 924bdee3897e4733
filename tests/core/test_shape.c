/* test_shape.c -- the shape tracker against a naive reference: each movement op is also
 * applied as a real copy to an array of element ids (-1 for padding), and the tracker's
 * index/valid expressions, evaluated at every element, must agree with it. */
#include <stdlib.h>

#include "core/shape.h"
#include "ir/shape.h"
#include "test.h"

/* ------------------------------------------------ a tiny AluExp evaluator */

/* Integer semantics of alu.def for the ops index arithmetic can produce, evaluated
 * independently of src/ir so a simplifier bug shows up as a mismatch here. */
typedef struct Env {
  int n;
  const char *names[JX_MAX_NDIM + 1];
  int64_t values[JX_MAX_NDIM + 1];
} Env;

static bool eval_ok;

static int64_t eval(const AluExp *e, const Env *env) {
  if (!e) {
    eval_ok = false;
    return 0;
  }
  int64_t a = e->nsrc > 0 ? eval(e->src[0], env) : 0;
  int64_t b = e->nsrc > 1 ? eval(e->src[1], env) : 0;
  switch (e->op) {
  case ALU_CONST: return e->value.i;
  case ALU_SPECIAL:
  case ALU_VARIABLE:
    for (int i = 0; i < env->n; i++)
      if (strcmp(env->names[i], e->name) == 0) return env->values[i];
    break;
  case ALU_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
  case ALU_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
  case ALU_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
  case ALU_DIV: return b == 0 ? -1 : a / b;
  case ALU_MOD: return b == 0 ? a : a % b;
  case ALU_MIN: return a < b ? a : b;
  case ALU_MAX: return a > b ? a : b;
  case ALU_AND: return a & b;
  case ALU_OR: return a | b;
  case ALU_XOR: return a ^ b;
  case ALU_SHL: return b < 0 || b >= 64 ? 0 : (int64_t)((uint64_t)a << b);
  case ALU_SHR: return b < 0 || b >= 64 ? (a < 0 ? -1 : 0) : a >> b;
  case ALU_CMPLT: return a < b;
  case ALU_CMPNE: return a != b;
  case ALU_CMPEQ: return a == b;
  case ALU_NEG: return (int64_t)(0 - (uint64_t)a);
  case ALU_ABS: return a < 0 ? -a : a;
  case ALU_NOT: return e->dtype == JX_BOOL ? !a : ~a;
  case ALU_CAST: return e->dtype == JX_BOOL ? a != 0 : a;
  case ALU_WHERE: return a ? b : eval(e->src[2], env);
  default: break;
  }
  eval_ok = false;
  return 0;
}

/* ------------------------------------------------------ the reference */

/* An array of element ids in C order; id -1 marks padding. */
typedef struct Ref {
  int ndim;
  int64_t shape[JX_MAX_NDIM];
  int64_t *data;
} Ref;

enum { OP_RESHAPE, OP_PERMUTE, OP_EXPAND, OP_PAD, OP_SHRINK, OP_STRIDE, OP_COUNT };

/* One movement op with its arguments (a, b per dim; perm for permute). */
typedef struct Op {
  int kind, ndim;
  int64_t a[JX_MAX_NDIM], b[JX_MAX_NDIM];
  int perm[JX_MAX_NDIM];
} Op;

static Ref ref_iota(int ndim, const int64_t *shape) {
  Ref r = {ndim, {0}, NULL};
  memcpy(r.shape, shape, (size_t)ndim * sizeof *shape);
  int64_t n = shape_numel(ndim, shape);
  r.data = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
  for (int64_t i = 0; i < n; i++) r.data[i] = i;
  return r;
}

/* Applies op as a real copy: for every output multi-index, the input multi-index it
 * reads (or padding). */
static Ref ref_apply(const Ref *in, const Op *op) {
  Ref out = {in->ndim, {0}, NULL};
  if (op->kind == OP_RESHAPE) out.ndim = op->ndim;
  for (int d = 0; d < out.ndim; d++) {
    int64_t n = in->shape[d];
    switch (op->kind) {
    case OP_RESHAPE: n = op->a[d]; break;
    case OP_PERMUTE: n = in->shape[op->perm[d]]; break;
    case OP_EXPAND: n = op->a[d]; break;
    case OP_PAD: n += op->a[d] + op->b[d]; break;
    case OP_SHRINK: n = op->b[d] - op->a[d]; break;
    case OP_STRIDE: {
      int64_t k = op->a[d] < 0 ? -op->a[d] : op->a[d];
      n = (n + k - 1) / k;
    } break;
    }
    out.shape[d] = n;
  }
  int64_t total = shape_numel(out.ndim, out.shape);
  out.data = malloc((size_t)(total ? total : 1) * sizeof(int64_t));
  int64_t o[JX_MAX_NDIM] = {0}, src[JX_MAX_NDIM];
  for (int64_t flat = 0; flat < total; flat++) {
    int64_t rem = flat;
    for (int d = out.ndim - 1; d >= 0; d--) {
      o[d] = rem % out.shape[d];
      rem /= out.shape[d];
    }
    bool pad = false;
    int64_t id;
    if (op->kind == OP_RESHAPE) {
      id = in->data[flat];
    } else {
      for (int d = 0; d < in->ndim; d++) {
        switch (op->kind) {
        case OP_PERMUTE: src[op->perm[d]] = o[d]; break;
        case OP_EXPAND: src[d] = in->shape[d] == 1 ? 0 : o[d]; break;
        case OP_PAD:
          src[d] = o[d] - op->a[d];
          pad |= src[d] < 0 || src[d] >= in->shape[d];
          break;
        case OP_SHRINK: src[d] = o[d] + op->a[d]; break;
        case OP_STRIDE:
          src[d] = op->a[d] > 0 ? o[d] * op->a[d] : in->shape[d] - 1 + o[d] * op->a[d];
          break;
        }
      }
      int64_t at = 0;
      for (int d = 0; d < in->ndim; d++) at = at * in->shape[d] + src[d];
      id = pad ? -1 : in->data[at];
    }
    out.data[flat] = id;
  }
  return out;
}

static ShapeTracker *st_apply(const ShapeTracker *st, const Op *op) {
  switch (op->kind) {
  case OP_RESHAPE: return shape_reshape(st, op->ndim, op->a);
  case OP_PERMUTE: return shape_permute(st, op->perm);
  case OP_EXPAND: return shape_expand(st, op->a);
  case OP_PAD: return shape_pad(st, op->a, op->b);
  case OP_SHRINK: return shape_shrink(st, op->a, op->b);
  case OP_STRIDE: return shape_stride(st, op->a);
  }
  return NULL;
}

/* Applies op to both, replacing them. */
static void both_apply(ShapeTracker **st, Ref *ref, const Op *op) {
  ShapeTracker *s = st_apply(*st, op);
  Ref r = ref_apply(ref, op);
  shape_free(*st);
  free(ref->data);
  *st = s;
  *ref = r;
}

/* Checks the tracker against the reference at every element, through both shape_to_exp
 * (one flat SPECIAL) and shape_to_exp_dims (one SPECIAL per dim). Returns false (after
 * reporting once, with `what` describing the case) on the first mismatch. */
static bool check_against(const ShapeTracker *st, const Ref *ref, const char *what) {
  CHECK_EQ_INT(shape_ndim(st), ref->ndim);
  for (int d = 0; d < ref->ndim; d++) CHECK_EQ_INT(shape_dims(st)[d], ref->shape[d]);
  int64_t n = shape_numel(ref->ndim, ref->shape);
  if (n == 0) return true;
  static const char *dim_names[JX_MAX_NDIM] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6",
                                               "i7", "i8", "i9", "i10", "i11", "i12",
                                               "i13", "i14", "i15"};
  const AluExp *index, *valid, *dindex, *dvalid, *dims[JX_MAX_NDIM];
  shape_to_exp(st, alu_special("gidx", n), &index, &valid);
  for (int d = 0; d < ref->ndim; d++) dims[d] = alu_special(dim_names[d], ref->shape[d]);
  shape_to_exp_dims(st, dims, &dindex, &dvalid);
  bool masked = false;
  for (int i = 0; i < st->nviews; i++) masked |= st->views[i].masked;
  if (!masked) { /* no mask anywhere: valid must be the constant, not merely true */
    CHECK(valid == alu_const_int(JX_BOOL, 1));
    CHECK(dvalid == alu_const_int(JX_BOOL, 1));
  }
  Env env = {1, {"gidx"}, {0}}, denv = {ref->ndim, {0}, {0}};
  for (int d = 0; d < ref->ndim; d++) denv.names[d] = dim_names[d];
  bool ok = true;
  for (int64_t i = 0; i < n && ok; i++) {
    env.values[0] = i;
    int64_t rem = i;
    for (int d = ref->ndim - 1; d >= 0; d--) {
      denv.values[d] = rem % ref->shape[d];
      rem /= ref->shape[d];
    }
    eval_ok = true;
    int64_t want = ref->data[i];
    int64_t v = eval(valid, &env), x = eval(index, &env);
    int64_t dv = eval(dvalid, &denv), dx = eval(dindex, &denv);
    ok = eval_ok && v == (want >= 0) && dv == v && (want < 0 || (x == want && dx == want));
    if (!ok) {
      char *s = shape_print(st);
      char *si = alu_print(index), *sv = alu_print(valid);
      test_fail(__FILE__, __LINE__,
                "%s: element %lld: want %lld, got index %lld valid %lld (dims: %lld, %lld)"
                "\n  tracker: %s\n  index: %s\n  valid: %s",
                what, (long long)i, (long long)want, (long long)x, (long long)v,
                (long long)dx, (long long)dv, s, si, sv);
      free(s);
      free(si);
      free(sv);
    }
  }
  test_checks++;
  return ok;
}

/* ------------------------------------------------------- basic behaviour */

static void test_numel(void) {
  int64_t s[3] = {2, 3, 4};
  CHECK_EQ_INT(shape_numel(3, s), 24);
  CHECK_EQ_INT(shape_numel(0, s), 1);
  CHECK_EQ_INT(shape_numel_checked(3, s), 24);
  int64_t big[3] = {INT64_C(1) << 40, INT64_C(1) << 30, 1};
  CHECK_EQ_INT(shape_numel_checked(3, big), -1);
  int64_t zero[3] = {INT64_C(1) << 40, INT64_C(1) << 30, 0};
  CHECK_EQ_INT(shape_numel_checked(3, zero), 0);
  int64_t neg[2] = {3, -1};
  CHECK_EQ_INT(shape_numel_checked(2, neg), -1);
  int64_t edge[2] = {INT64_MAX, 1};
  CHECK_EQ_INT(shape_numel_checked(2, edge), INT64_MAX);
}

static void test_contiguous(void) {
  int64_t s[3] = {2, 1, 4};
  ShapeTracker *st = shape_contiguous(3, s);
  CHECK(shape_is_contiguous(st));
  CHECK_EQ_INT(shape_ndim(st), 3);
  CHECK_EQ_INT(shape_dims(st)[2], 4);
  char *p = shape_print(st);
  CHECK_STR(p, "View(shape=(2,1,4), strides=(4,0,1), offset=0, mask=None)");
  free(p);
  ShapeTracker *sc = shape_contiguous(0, NULL);
  CHECK(shape_is_contiguous(sc));
  p = shape_print(sc);
  CHECK_STR(p, "View(shape=(), strides=(), offset=0, mask=None)");
  free(p);
  shape_free(sc);
  int perm[3] = {2, 1, 0};
  ShapeTracker *t = shape_permute(st, perm);
  CHECK(!shape_is_contiguous(t));
  ShapeTracker *tt = shape_permute(t, perm);
  CHECK(shape_is_contiguous(tt));
  CHECK(shape_equal(tt, st));
  shape_free(st);
  shape_free(t);
  shape_free(tt);
}

static void test_print_masked(void) {
  int64_t s[2] = {2, 3}, lo[2] = {1, 0}, hi[2] = {0, 2};
  ShapeTracker *st = shape_contiguous(2, s);
  ShapeTracker *p = shape_pad(st, lo, hi);
  char *txt = shape_print(p);
  CHECK_STR(txt, "View(shape=(3,5), strides=(3,1), offset=-3, mask=((1,3),(0,3)))");
  free(txt);
  int64_t r[1] = {15};
  ShapeTracker *q = shape_reshape(p, 1, r);
  CHECK_EQ_INT(q->nviews, 2);
  txt = shape_print(q);
  CHECK_STR(txt, "ShapeTracker(views=(View(shape=(3,5), strides=(3,1), offset=-3, "
                 "mask=((1,3),(0,3))), View(shape=(15,), strides=(1,), offset=0, mask=None)))");
  free(txt);
  shape_free(st);
  shape_free(p);
  shape_free(q);
}

/* ------------------------------------------------ targeted op sequences */

/* Runs ops from a contiguous tracker of `shape`, checking after each op; returns the
 * final tracker. */
static ShapeTracker *run_chain(int ndim, const int64_t *shape, int nops, const Op *ops,
                               const char *what) {
  ShapeTracker *st = shape_contiguous(ndim, shape);
  Ref ref = ref_iota(ndim, shape);
  for (int i = 0; i < nops; i++) {
    both_apply(&st, &ref, &ops[i]);
    if (!check_against(st, &ref, what)) break;
  }
  free(ref.data);
  return st;
}

static Op op_reshape(int ndim, const int64_t *shape) {
  Op op = {OP_RESHAPE, ndim, {0}, {0}, {0}};
  memcpy(op.a, shape, (size_t)ndim * sizeof *shape);
  return op;
}

static Op op_dims(int kind, int ndim, const int64_t *a, const int64_t *b) {
  Op op = {kind, ndim, {0}, {0}, {0}};
  memcpy(op.a, a, (size_t)ndim * sizeof *a);
  if (b) memcpy(op.b, b, (size_t)ndim * sizeof *b);
  return op;
}

static Op op_permute(int ndim, const int *perm) {
  Op op = {OP_PERMUTE, ndim, {0}, {0}, {0}};
  memcpy(op.perm, perm, (size_t)ndim * sizeof *perm);
  return op;
}

/* After a permute, a reshape that only splits dims or adds/removes size-1 dims stays in
 * one view; one that merges dims the permute separated needs a second view. */
static void test_reshape_views(void) {
  int64_t s[3] = {2, 3, 4};
  Op perm = op_permute(3, (int[]){1, 0, 2}); /* (3,2,4), strides (4,12,1) */
  struct {
    int ndim;
    int64_t shape[6];
    int nviews;
  } cases[] = {
      {2, {6, 4}, 2},          /* merges 3 and 2: not expressible */
      {2, {3, 8}, 2},          /* merges 2 and 4 with strides 12 and 1 */
      {4, {3, 2, 2, 2}, 1},    /* splits the 4 */
      {5, {3, 1, 2, 4, 1}, 1}, /* adds size-1 dims */
      {3, {3, 2, 4}, 1},       /* no-op */
      {1, {24}, 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    Op ops[2] = {perm, op_reshape(cases[i].ndim, cases[i].shape)};
    ShapeTracker *st = run_chain(3, s, 2, ops, "reshape after permute");
    CHECK_EQ_INT(st->nviews, cases[i].nviews);
    shape_free(st);
  }
  /* Contiguous reshapes never add views, however many. */
  ShapeTracker *st = shape_contiguous(3, s);
  int64_t shapes[4][4] = {{6, 4}, {24, 1}, {2, 12}, {4, 3, 2, 1}};
  int nd[4] = {2, 2, 2, 4};
  for (int i = 0; i < 4; i++) {
    ShapeTracker *t = shape_reshape(st, nd[i], shapes[i]);
    shape_free(st);
    st = t;
    CHECK(shape_is_contiguous(st));
  }
  shape_free(st);
  /* A pushed view stays pushed only as long as needed: splitting its result again
   * edits the new top view. */
  {
    Op ops[3] = {perm, op_reshape(2, (int64_t[]){6, 4}), op_reshape(3, (int64_t[]){6, 2, 2})};
    ShapeTracker *t = run_chain(3, s, 3, ops, "split after push");
    CHECK_EQ_INT(t->nviews, 2);
    shape_free(t);
  }
  /* Reshaping back pops the pushed view; reshaping elsewhere replaces it. */
  {
    Op ops[3] = {perm, op_reshape(1, (int64_t[]){24}), op_reshape(3, (int64_t[]){3, 2, 4})};
    ShapeTracker *t = run_chain(3, s, 3, ops, "reshape back");
    ShapeTracker *c = shape_contiguous(3, s), *p = st_apply(c, &perm);
    CHECK_EQ_INT(t->nviews, 1);
    CHECK(shape_equal(t, p));
    shape_free(t);
    shape_free(p);
    shape_free(c);
    Op ops2[3] = {perm, op_reshape(2, (int64_t[]){6, 4}), op_reshape(2, (int64_t[]){3, 8})};
    t = run_chain(3, s, 3, ops2, "reshape twice");
    CHECK_EQ_INT(t->nviews, 2);
    shape_free(t);
    Op ops3[3] = {perm, op_reshape(2, (int64_t[]){6, 4}), op_reshape(3, (int64_t[]){3, 2, 4})};
    t = run_chain(3, s, 3, ops3, "reshape back via merge");
    CHECK_EQ_INT(t->nviews, 1);
    shape_free(t);
  }
}

/* Reshapes of padded, expanded and shrunk views that must merge into the top view. */
static void test_reshape_merges(void) {
  int64_t s[2] = {2, 3};
  struct {
    const char *what;
    Op ops[3];
    int nops, nviews;
  } cases[] = {
      {"pad rows then flatten",
       {op_dims(OP_PAD, 2, (int64_t[]){1, 0}, (int64_t[]){1, 0}), op_reshape(1, (int64_t[]){12})},
       2, 1},
      {"pad cols then flatten",
       {op_dims(OP_PAD, 2, (int64_t[]){0, 1}, (int64_t[]){0, 0}), op_reshape(1, (int64_t[]){8})},
       2, 2},
      {"pad then add unit dims",
       {op_dims(OP_PAD, 2, (int64_t[]){0, 1}, (int64_t[]){0, 2}),
        op_reshape(4, (int64_t[]){1, 2, 6, 1})},
       2, 1},
      {"expand then merge broadcast dims",
       {op_reshape(4, (int64_t[]){2, 1, 1, 3}), op_dims(OP_EXPAND, 4, (int64_t[]){2, 4, 5, 3}, NULL),
        op_reshape(3, (int64_t[]){2, 20, 3})},
       3, 1},
      {"expand then split broadcast dim",
       {op_reshape(3, (int64_t[]){2, 1, 3}), op_dims(OP_EXPAND, 3, (int64_t[]){2, 6, 3}, NULL),
        op_reshape(4, (int64_t[]){2, 2, 3, 3})},
       3, 1},
      {"expand then flatten",
       {op_reshape(3, (int64_t[]){2, 1, 3}), op_dims(OP_EXPAND, 3, (int64_t[]){2, 2, 3}, NULL),
        op_reshape(1, (int64_t[]){12})},
       3, 2},
      {"single valid row merges",
       {op_dims(OP_SHRINK, 2, (int64_t[]){1, 0}, (int64_t[]){2, 3}),
        op_dims(OP_PAD, 2, (int64_t[]){1, 0}, (int64_t[]){1, 0}), op_reshape(1, (int64_t[]){9})},
       3, 1},
      {"padded split inside one block",
       {op_reshape(1, (int64_t[]){6}), op_dims(OP_PAD, 1, (int64_t[]){6}, (int64_t[]){12}),
        op_reshape(2, (int64_t[]){2, 12})},
       3, 1},
      {"padded split across blocks",
       {op_reshape(1, (int64_t[]){6}), op_dims(OP_PAD, 1, (int64_t[]){1}, (int64_t[]){1}),
        op_reshape(2, (int64_t[]){2, 4})},
       3, 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    ShapeTracker *st = run_chain(2, s, cases[i].nops, cases[i].ops, cases[i].what);
    CHECK_MSG(st->nviews == cases[i].nviews, "%s: %d views, expected %d", cases[i].what,
              st->nviews, cases[i].nviews);
    shape_free(st);
  }
}

/* Flips and strided slices compose, masks included, and undo each other exactly. */
static void test_flip_stride(void) {
  int64_t s[2] = {5, 7};
  Op flip = op_dims(OP_STRIDE, 2, (int64_t[]){-1, -1}, NULL);
  ShapeTracker *st = shape_contiguous(2, s);
  ShapeTracker *f1 = st_apply(st, &flip), *f2 = st_apply(f1, &flip);
  CHECK(shape_equal(f2, st));
  CHECK(!shape_equal(f1, st));
  shape_free(st);
  shape_free(f1);
  shape_free(f2);
  Op pad = op_dims(OP_PAD, 2, (int64_t[]){2, 1}, (int64_t[]){1, 3});
  Op steps[] = {
      op_dims(OP_STRIDE, 2, (int64_t[]){2, -3}, NULL),
      op_dims(OP_STRIDE, 2, (int64_t[]){-2, 3}, NULL),
      op_dims(OP_STRIDE, 2, (int64_t[]){-1, 2}, NULL),
      op_dims(OP_STRIDE, 2, (int64_t[]){3, -1}, NULL),
  };
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      ShapeTracker *t = shape_contiguous(2, s);
      Ref ref = ref_iota(2, s);
      Op ops[5] = {steps[i], pad, steps[j], {0}, steps[(i + j) % 4]};
      for (int k = 0; k < 5; k++) {
        if (k == 3) /* trim one element off each end of every dim that has three */
          ops[3] = op_dims(OP_SHRINK, 2, (int64_t[]){ref.shape[0] > 2, ref.shape[1] > 2},
                           (int64_t[]){ref.shape[0] - (ref.shape[0] > 2),
                                       ref.shape[1] - (ref.shape[1] > 2)});
        both_apply(&t, &ref, &ops[k]);
        if (!check_against(t, &ref, "strides, flips and masks")) break;
      }
      CHECK_EQ_INT(t->nviews, 1);
      shape_free(t);
      free(ref.data);
    }
  /* x[::-2][::3] == x[-1::-6]: the same view. */
  int64_t n[1] = {20};
  ShapeTracker *a = shape_contiguous(1, n);
  ShapeTracker *b = shape_stride(a, (int64_t[]){-2});
  ShapeTracker *c = shape_stride(b, (int64_t[]){3});
  ShapeTracker *d = shape_stride(a, (int64_t[]){-6});
  CHECK(shape_equal(c, d));
  shape_free(a);
  shape_free(b);
  shape_free(c);
  shape_free(d);
}

/* Arrays with no elements and views with no valid element. */
static void test_empty(void) {
  int64_t s[2] = {3, 4};
  Op ops[] = {op_dims(OP_SHRINK, 2, (int64_t[]){1, 2}, (int64_t[]){1, 4}),
              op_reshape(3, (int64_t[]){0, 2, 5})};
  ShapeTracker *st = run_chain(2, s, 2, ops, "empty");
  CHECK_EQ_INT(shape_numel(shape_ndim(st), shape_dims(st)), 0);
  shape_free(st);
  /* Pad a 1-element slice, shrink to the padding only: all invalid. */
  Op pads[] = {op_dims(OP_PAD, 2, (int64_t[]){2, 0}, (int64_t[]){0, 0}),
               op_dims(OP_SHRINK, 2, (int64_t[]){0, 0}, (int64_t[]){2, 4}),
               op_reshape(1, (int64_t[]){8}), op_reshape(2, (int64_t[]){4, 2})};
  st = run_chain(2, s, 4, pads, "all padding");
  const AluExp *index, *valid;
  shape_to_exp(st, alu_special("gidx", 8), &index, &valid);
  CHECK(valid == alu_const_int(JX_BOOL, 0));
  CHECK_EQ_INT(st->nviews, 1);
  shape_free(st);
}

/* Expressions of simple views are small once simplified, and need no simplifier
 * cleverness: a contiguous tracker's index is the flat index itself. */
static void test_expression_size(void) {
  int64_t s[3] = {2, 3, 4};
  const AluExp *gidx = alu_special("gidx", 24), *index, *valid;
  const AluExp *yes = alu_const_int(JX_BOOL, 1);
  ShapeTracker *st = shape_contiguous(3, s);
  shape_to_exp(st, gidx, &index, &valid);
  CHECK(index == gidx);
  CHECK(valid == yes);
  ShapeTracker *r = shape_reshape(st, 2, (int64_t[]){4, 6});
  shape_to_exp(r, gidx, &index, &valid);
  CHECK(index == gidx);
  CHECK(valid == yes);
  /* A shrink of the inner dim of (4,6): one div, one mod, a mul, adds. */
  ShapeTracker *k = shape_shrink(r, (int64_t[]){0, 1}, (int64_t[]){4, 5});
  const AluExp *g16 = alu_special("gidx", 16);
  shape_to_exp(k, g16, &index, &valid);
  CHECK_MSG(alu_count(index) <= 11, "shrink index has %lld nodes", (long long)alu_count(index));
  CHECK(valid == yes);
  /* Transpose of (2,3,4) -> (4,3,2): three per-dim terms. */
  ShapeTracker *t = shape_permute(st, (int[]){2, 1, 0});
  shape_to_exp(t, gidx, &index, &valid);
  CHECK_MSG(alu_count(index) <= 16, "transpose index has %lld nodes", (long long)alu_count(index));
  CHECK(valid == yes);
  /* Broadcast of a row: index = flat % 4, no stride-0 terms. */
  ShapeTracker *row = shape_contiguous(2, (int64_t[]){1, 4});
  ShapeTracker *e = shape_expand(row, (int64_t[]){6, 4});
  shape_to_exp(e, gidx, &index, &valid);
  CHECK(index == alu_binary(ALU_MOD, gidx, alu_const_int(JX_INT64, 4)));
  /* Pad of a vector: index = flat - 1, valid = 0 < flat < 5. */
  ShapeTracker *v = shape_contiguous(1, (int64_t[]){4});
  ShapeTracker *p = shape_pad(v, (int64_t[]){1}, (int64_t[]){2});
  const AluExp *g7 = alu_special("gidx", 7);
  shape_to_exp(p, g7, &index, &valid);
  CHECK_MSG(alu_count(index) <= 3, "pad index has %lld nodes", (long long)alu_count(index));
  CHECK_MSG(alu_count(valid) <= 7, "pad valid has %lld nodes", (long long)alu_count(valid));
  /* shape_to_exp_dims of a contiguous view: i0*12 + i1*4 + i2. */
  const AluExp *dims[3] = {alu_special("i0", 2), alu_special("i1", 3), alu_special("i2", 4)};
  shape_to_exp_dims(st, dims, &index, &valid);
  CHECK_MSG(alu_count(index) <= 9, "dims index has %lld nodes", (long long)alu_count(index));
  CHECK(valid == yes);
  shape_free(st);
  shape_free(r);
  shape_free(k);
  shape_free(t);
  shape_free(row);
  shape_free(e);
  shape_free(v);
  shape_free(p);
}

/* ------------------------------------------------------------ randomized */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static int64_t rnd(int64_t n) { /* uniform in [0, n), splitmix64 */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (int64_t)((z ^ (z >> 31)) % (uint64_t)n);
}

/* A random shape of ndim <= 5 with the same product: either adjacent dims merged or
 * dims split by random divisors, with size-1 dims sprinkled in. */
static Op random_reshape(const Ref *r) {
  Op op = {OP_RESHAPE, 0, {0}, {0}, {0}};
  int64_t numel = shape_numel(r->ndim, r->shape);
  if (rnd(2) && r->ndim >= 2) { /* merge a random adjacent pair */
    int at = (int)rnd(r->ndim - 1);
    for (int d = 0; d < r->ndim; d++) {
      if (d == at + 1) op.a[op.ndim - 1] *= r->shape[d];
      else op.a[op.ndim++] = r->shape[d];
    }
    return op;
  }
  int target = 1 + (int)rnd(5);
  int64_t rem = numel;
  while (op.ndim < target - 1 && rem > 0) {
    int64_t divs[64], nd = 0;
    for (int64_t k = 1; k <= rem && nd < 64; k++)
      if (rem % k == 0) divs[nd++] = k;
    int64_t k = divs[rnd(nd)];
    op.a[op.ndim++] = k;
    rem /= k;
  }
  op.a[op.ndim++] = rem;
  return op;
}

static Op random_op(const Ref *r) {
  int64_t numel = shape_numel(r->ndim, r->shape);
  for (;;) {
    int kind = (int)rnd(OP_COUNT);
    Op op = {kind, r->ndim, {0}, {0}, {0}};
    bool grows = kind == OP_PAD || kind == OP_EXPAND;
    if (grows && numel > 600) continue;
    switch (kind) {
    case OP_RESHAPE:
      if (numel == 0) continue;
      return random_reshape(r);
    case OP_PERMUTE:
      for (int d = 0; d < r->ndim; d++) op.perm[d] = d;
      for (int d = r->ndim - 1; d > 0; d--) {
        int k = (int)rnd(d + 1), tmp = op.perm[d];
        op.perm[d] = op.perm[k];
        op.perm[k] = tmp;
      }
      return op;
    case OP_EXPAND: {
      bool any = false;
      for (int d = 0; d < r->ndim; d++) {
        op.a[d] = r->shape[d];
        if (r->shape[d] == 1) {
          op.a[d] = 1 + rnd(4);
          any = true;
        }
      }
      if (!any) continue;
      return op;
    }
    case OP_PAD:
      for (int d = 0; d < r->ndim; d++) {
        op.a[d] = rnd(3);
        op.b[d] = rnd(3);
      }
      return op;
    case OP_SHRINK:
      for (int d = 0; d < r->ndim; d++) {
        int64_t n = r->shape[d];
        op.a[d] = rnd(n + 1);
        op.b[d] = op.a[d] + rnd(n - op.a[d] + 1);
        if (op.a[d] == op.b[d] && rnd(8) != 0) { /* mostly keep elements */
          op.a[d] = 0;
          op.b[d] = n;
        }
      }
      return op;
    case OP_STRIDE:
      for (int d = 0; d < r->ndim; d++) {
        int64_t k = 1 + rnd(3);
        op.a[d] = rnd(2) ? k : -k;
      }
      return op;
    }
  }
}

static void describe(char *buf, size_t cap, const int64_t *shape, int ndim, const Op *ops,
                     int nops) {
  size_t len = (size_t)snprintf(buf, cap, "start");
  for (int d = 0; d < ndim && len < cap; d++)
    len += (size_t)snprintf(buf + len, cap - len, " %lld", (long long)shape[d]);
  static const char *names[] = {"reshape", "permute", "expand", "pad", "shrink", "stride"};
  for (int i = 0; i < nops && len < cap; i++) {
    len += (size_t)snprintf(buf + len, cap - len, "; %s", names[ops[i].kind]);
    for (int d = 0; d < ops[i].ndim && len < cap; d++) {
      if (ops[i].kind == OP_PERMUTE)
        len += (size_t)snprintf(buf + len, cap - len, " %d", ops[i].perm[d]);
      else if (ops[i].kind == OP_PAD || ops[i].kind == OP_SHRINK)
        len += (size_t)snprintf(buf + len, cap - len, " %lld:%lld", (long long)ops[i].a[d],
                                (long long)ops[i].b[d]);
      else
        len += (size_t)snprintf(buf + len, cap - len, " %lld", (long long)ops[i].a[d]);
    }
  }
}

static void test_random_chains(void) {
  int failures = 0, pushed = 0;
  for (int trial = 0; trial < 4000 && failures < 3; trial++) {
    int ndim = 1 + (int)rnd(4);
    int64_t shape[JX_MAX_NDIM];
    for (int d = 0; d < ndim; d++) shape[d] = 1 + rnd(5);
    ShapeTracker *st = shape_contiguous(ndim, shape);
    Ref ref = ref_iota(ndim, shape);
    Op ops[8];
    int nops = 1 + (int)rnd(8);
    for (int i = 0; i < nops; i++) {
      ops[i] = random_op(&ref);
      both_apply(&st, &ref, &ops[i]);
      char what[1024];
      describe(what, sizeof what, shape, ndim, ops, i + 1);
      if (!check_against(st, &ref, what)) {
        failures++;
        break;
      }
    }
    pushed += st->nviews > 1;
    shape_free(st);
    free(ref.data);
  }
  /* Both paths of reshape ran. */
  CHECK(pushed > 100);
}

int main(void) {
  TEST_RUN(test_numel);
  TEST_RUN(test_contiguous);
  TEST_RUN(test_print_masked);
  TEST_RUN(test_reshape_views);
  TEST_RUN(test_reshape_merges);
  TEST_RUN(test_flip_stride);
  TEST_RUN(test_empty);
  TEST_RUN(test_expression_size);
  TEST_RUN(test_random_chains);
  return test_finish();
}
