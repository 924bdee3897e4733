/* check.c -- the kernel IR's type rules: one node at a time (alu_node_error, which the
 * constructors also consult), whole DAGs (alu_check) and kernels (kernel_check: loop
 * indices, inputs, reductions). Checkers run after every pass in test builds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "ir/alu.h"

static bool numeric(jx_dtype d) { return dtype_is_integer(d) || dtype_is_floating(d); }
static bool intlike(jx_dtype d) { return dtype_is_integer(d) || dtype_is_bool(d); }

/* Which dtypes an elementwise op accepts (its sources' dtype). */
static bool op_accepts(AluOp op, jx_dtype d) {
  switch (op) {
  case ALU_ADD: case ALU_SUB: case ALU_MUL: case ALU_NEG: /* complex natively too */
    return numeric(d) || dtype_is_complex(d);
  case ALU_DIV: case ALU_MOD: case ALU_POW: case ALU_ABS: case ALU_SIGN:
    return numeric(d);
  case ALU_CMPNE: case ALU_CMPEQ:
    return true;
  case ALU_MIN: case ALU_MAX: case ALU_CMPLT:
    return !dtype_is_complex(d);
  case ALU_AND: case ALU_OR: case ALU_XOR: case ALU_NOT:
    return intlike(d);
  case ALU_SHL: case ALU_SHR:
    return dtype_is_integer(d);
  default: /* ATAN2, transcendental and rounding unary ops, ISNAN/ISINF */
    return dtype_is_floating(d);
  }
}

#define FAIL(...) (snprintf(buf, n, __VA_ARGS__), buf)

const char *alu_node_error(const AluExp *e, char *buf, size_t n) {
  AluOp op = e->op;
  if ((unsigned)op >= ALU_NUM_OPS) return FAIL("unknown op %d", (int)op);
  if (!dtype_is_valid(e->dtype)) return FAIL("invalid dtype %d", (int)e->dtype);
  if (e->nsrc != alu_op_arity(op))
    return FAIL("%d sources, expected %d", e->nsrc, alu_op_arity(op));
  for (int i = 0; i < e->nsrc; i++)
    if (!e->src[i]) return FAIL("source %d is NULL", i);
  jx_dtype d = e->dtype, s0 = e->nsrc ? e->src[0]->dtype : d;
  const char *dn = dtype_short_name(d), *sn = dtype_short_name(s0);
  switch (alu_op_group(op)) {
  case ALU_GROUP_BINARY:
  case ALU_GROUP_COMPARE: {
    jx_dtype s1 = e->src[1]->dtype;
    if (s0 != s1)
      return FAIL("sources have dtypes %s and %s, expected equal", sn, dtype_short_name(s1));
    if (alu_op_group(op) == ALU_GROUP_COMPARE ? d != JX_BOOL : d != s0)
      return FAIL("result dtype %s, expected %s", dn,
                  alu_op_group(op) == ALU_GROUP_COMPARE ? "bool" : sn);
    if (!op_accepts(op, s0)) return FAIL("dtype %s not accepted", sn);
    return NULL;
  }
  case ALU_GROUP_UNARY:
    if (d != s0) return FAIL("result dtype %s, expected the source's %s", dn, sn);
    if (!op_accepts(op, s0)) return FAIL("dtype %s not accepted", sn);
    return NULL;
  case ALU_GROUP_UNARY_PRED:
    if (d != JX_BOOL) return FAIL("result dtype %s, expected bool", dn);
    if (!op_accepts(op, s0)) return FAIL("dtype %s not accepted", sn);
    return NULL;
  default:
    break;
  }
  switch (op) {
  case ALU_CAST:
    return NULL;
  case ALU_REAL:
  case ALU_IMAG:
    if (!dtype_is_complex(s0)) return FAIL("source dtype %s, expected complex", sn);
    if (d != dtype_real_part(s0)) return FAIL("result dtype %s, expected the part's", dn);
    return NULL;
  case ALU_COMPLEX:
    if (!dtype_is_floating(s0) || e->src[1]->dtype != s0 ||
        (s0 != JX_FLOAT32 && s0 != JX_FLOAT64))
      return FAIL("parts have dtypes %s and %s, expected equal f32 or f64", sn,
                  dtype_short_name(e->src[1]->dtype));
    if (d != dtype_to_complex(s0)) return FAIL("result dtype %s, expected complex", dn);
    return NULL;
  case ALU_BITCAST:
    if (dtype_is_complex(d) || dtype_is_complex(s0))
      return FAIL("bitcast %s -> %s: complex", sn, dn);
    if (d == JX_BOOL || s0 == JX_BOOL || dtype_bits(d) != dtype_bits(s0))
      return FAIL("bitcast %s -> %s: itemsizes differ or bool", sn, dn);
    return NULL;
  case ALU_WHERE:
    if (s0 != JX_BOOL) return FAIL("condition dtype %s, expected bool", sn);
    if (e->src[1]->dtype != d || e->src[2]->dtype != d)
      return FAIL("branches have dtypes %s and %s, expected %s",
                  dtype_short_name(e->src[1]->dtype), dtype_short_name(e->src[2]->dtype), dn);
    return NULL;
  case ALU_FMA:
    if (d != JX_FLOAT32 && d != JX_FLOAT64) return FAIL("fma of %s, expected f32 or f64", dn);
    for (int i = 0; i < 3; i++)
      if (e->src[i]->dtype != d)
        return FAIL("source %d dtype %s, expected %s", i, dtype_short_name(e->src[i]->dtype), dn);
    return NULL;
  case ALU_THREEFRY2X32:
    for (int i = 0; i < 4; i++)
      if (e->src[i]->dtype != JX_UINT32)
        return FAIL("source %d dtype %s, expected u32", i, dtype_short_name(e->src[i]->dtype));
    if (d != JX_UINT64) return FAIL("result dtype %s, expected u64", dn);
    return NULL;
  case ALU_CONST: {
    AluValue v = alu_normalize(d, e->value);
    bool same = v.u == e->value.u || (dtype_is_inexact(d) && isnan(v.f) && isnan(e->value.f));
    if (dtype_is_complex(d))
      same = same && (memcmp(&v.c.im, &e->value.c.im, sizeof v.c.im) == 0 ||
                      (isnan(v.c.im) && isnan(e->value.c.im)));
    if (!same) return FAIL("constant 0x%llx not normalized for %s",
                           (unsigned long long)e->value.u, dn);
    return NULL;
  }
  case ALU_SPECIAL:
    if (d != JX_INT64) return FAIL("loop index of dtype %s, expected i64", dn);
    if (!e->name) return FAIL("loop index without a name");
    if (e->arg < 0) return FAIL("loop index %s with range %lld", e->name, (long long)e->arg);
    return NULL;
  case ALU_VARIABLE:
    return e->name ? NULL : FAIL("variable without a name");
  case ALU_GLOBAL_INDEX:
    if (s0 != JX_INT64) return FAIL("index dtype %s, expected i64", sn);
    if (e->arg < 0) return FAIL("input number %lld", (long long)e->arg);
    return NULL;
  default:
    return FAIL("unhandled op");
  }
}

#undef FAIL

/* Walks e; calls `visit` on every node in post-order with its printer number (%k for
 * non-leaves, -1 for leaves). Stops at the first error (status returned). */
typedef jx_status (*Visit)(const AluExp *node, int64_t num, void *ctx);

static jx_status walk(const AluExp *e, Visit visit, void *ctx) {
  int64_t n;
  const AluExp **order = alu_toposort(e, &n);
  if (!order) return e ? JX_ERR_OOM : JX_OK;
  jx_status st = JX_OK;
  int64_t num = 0;
  for (int64_t i = 0; i < n && st == JX_OK; i++)
    st = visit(order[i], order[i]->nsrc ? num++ : -1, ctx);
  free((void *)order);
  return st;
}

static void node_label(const AluExp *e, int64_t num, char *buf, size_t n) {
  if (num >= 0)
    snprintf(buf, n, "%%%lld = %s %s", (long long)num, alu_op_name(e->op),
             dtype_is_valid(e->dtype) ? dtype_short_name(e->dtype) : "?");
  else
    snprintf(buf, n, "%s %s%s%s", alu_op_name(e->op),
             dtype_is_valid(e->dtype) ? dtype_short_name(e->dtype) : "?", e->name ? " " : "",
             e->name ? e->name : "");
}

typedef struct {
  const char *who; /* "alu_check" or "kernel_check: epilogue" ... */
  int nargs;
  const jx_dtype *arg_dtypes;
} CheckCtx;

static jx_status check_node(const AluExp *e, int64_t num, void *vctx) {
  const CheckCtx *c = vctx;
  char msg[200], label[96];
  const char *err = alu_node_error(e, msg, sizeof msg);
  if (!err && e->op == ALU_GLOBAL_INDEX) {
    if (c->nargs >= 0 && e->arg >= c->nargs)
      err = (snprintf(msg, sizeof msg, "input #%lld but the kernel has %d inputs",
                      (long long)e->arg, c->nargs), msg);
    else if (c->arg_dtypes && e->dtype != c->arg_dtypes[e->arg])
      err = (snprintf(msg, sizeof msg, "loads input #%lld as %s but it is %s",
                      (long long)e->arg, dtype_short_name(e->dtype),
                      dtype_short_name(c->arg_dtypes[e->arg])), msg);
  }
  if (!err) return JX_OK;
  node_label(e, num, label, sizeof label);
  error_set(JX_ERR_INTERNAL, "%s: %s: %s", c->who, label, err);
  return JX_ERR_INTERNAL;
}

jx_status alu_check(const AluExp *e, int nargs, const jx_dtype *arg_dtypes) {
  if (!e) {
    error_set(JX_ERR_INTERNAL, "alu_check: NULL expression");
    return JX_ERR_INTERNAL;
  }
  CheckCtx c = {"alu_check", nargs, arg_dtypes};
  return walk(e, check_node, &c);
}

/* ------------------------------------------------------------------ kernels */

typedef struct {
  const char *part; /* "exp" or "epilogue" */
  const Kernel *k;
} LoopCtx;

/* Loop indices and variables a kernel part may use: gidx with the output size, ridx
 * with the reduction size (not in the epilogue), "acc" only in the epilogue. */
static jx_status check_leaf(const AluExp *e, int64_t num, void *vctx) {
  const LoopCtx *c = vctx;
  const Kernel *k = c->k;
  bool epi = strcmp(c->part, "epilogue") == 0, row = strcmp(c->part, "row output") == 0;
  if (e->op == ALU_SPECIAL) {
    if (strcmp(e->name, "gidx") == 0) {
      if (e->arg != k->size) goto bad_range;
      return JX_OK;
    }
    if (strcmp(e->name, "ridx") == 0 && !epi && k->has_reduction) {
      if (e->arg != k->reduction.size) goto bad_range;
      return JX_OK;
    }
    error_set(JX_ERR_INTERNAL, "kernel_check: %s uses loop index %s, which is not bound there",
              c->part, e->name);
    return JX_ERR_INTERNAL;
  bad_range:
    error_set(JX_ERR_INTERNAL, "kernel_check: %s: loop index %s has range %lld, expected %lld",
              c->part, e->name, (long long)e->arg,
              (long long)(e->name[0] == 'g' ? k->size : k->reduction.size));
    return JX_ERR_INTERNAL;
  }
  if (e->op == ALU_VARIABLE) {
    if (k->has_pre && strcmp(e->name, "pre") == 0 && strcmp(c->part, "pre") != 0) {
      if (e->dtype == k->pre.dtype) return JX_OK;
      error_set(JX_ERR_INTERNAL, "kernel_check: %s reads pre as %s, the first phase is %s",
                c->part, dtype_short_name(e->dtype), dtype_short_name(k->pre.dtype));
      return JX_ERR_INTERNAL;
    }
    if ((epi || row) && strcmp(e->name, "acc") == 0) {
      if (e->dtype == k->reduction.dtype) return JX_OK;
      error_set(JX_ERR_INTERNAL, "kernel_check: epilogue reads acc as %s, the reduction is %s",
                dtype_short_name(e->dtype), dtype_short_name(k->reduction.dtype));
      return JX_ERR_INTERNAL;
    }
    error_set(JX_ERR_INTERNAL, "kernel_check: %s uses unbound variable %s", c->part, e->name);
    return JX_ERR_INTERNAL;
  }
  return JX_OK;
}

static jx_status check_part(const Kernel *k, const char *part, const AluExp *e, jx_dtype want) {
  char who[64];
  snprintf(who, sizeof who, "kernel_check: %s", part);
  if (!e) {
    error_set(JX_ERR_INTERNAL, "%s is NULL", who);
    return JX_ERR_INTERNAL;
  }
  if (e->dtype != want) {
    error_set(JX_ERR_INTERNAL, "%s has dtype %s, expected %s", who,
              dtype_is_valid(e->dtype) ? dtype_short_name(e->dtype) : "?",
              dtype_short_name(want));
    return JX_ERR_INTERNAL;
  }
  CheckCtx c = {who, k->nargs, k->arg_dtypes};
  jx_status st = walk(e, check_node, &c);
  if (st != JX_OK) return st;
  LoopCtx l = {part, k};
  return walk(e, check_leaf, &l);
}

static jx_status check_kernel(const Kernel *k);

jx_status kernel_check(const Kernel *k) {
  jx_status st = check_kernel(k);
  if (st != JX_OK || !k->post) return st;
  const Kernel *q = k->post;
  bool ok = k->has_reduction && !k->has_row_out && q->has_reduction && !q->post && q->reduction.size > 0 &&
            q->size * q->reduction.size == k->size && q->nargs == k->nargs + 1 && kernel_nouts(k) <= KERNEL_MAX_OUTS;
  for (int i = 0; ok && i < k->nargs; i++) ok = q->arg_dtypes[i] == k->arg_dtypes[i];
  if (!ok || q->arg_dtypes[k->nargs] != k->dtype) {
    error_set(JX_ERR_INTERNAL, "kernel_check: a group epilogue of %lld x %lld over %lld outputs, %d args (the kernel's %d + 1), "
              "%d outputs in all (max %d)", (long long)q->size, (long long)q->reduction.size, (long long)k->size, q->nargs,
              k->nargs, kernel_nouts(k), KERNEL_MAX_OUTS);
    return JX_ERR_INTERNAL;
  }
  if ((st = check_kernel(q)) != JX_OK) return st;
  const AluExp *at = kernel_group_index(q);
  if (at && kernel_reads_only_at(q, q->nargs - 1, at)) return JX_OK;
  error_set(JX_ERR_INTERNAL, "kernel_check: the group epilogue reads the group's values other than at gidx * %lld + ridx",
            (long long)q->reduction.size);
  return JX_ERR_INTERNAL;
}

static jx_status check_kernel(const Kernel *k) {
  if (!k) {
    error_set(JX_ERR_INTERNAL, "kernel_check: NULL kernel");
    return JX_ERR_INTERNAL;
  }
  if (k->nargs < 0 || k->nargs > KERNEL_MAX_ARGS || k->size < 0 || !dtype_is_valid(k->dtype)) {
    error_set(JX_ERR_INTERNAL, "kernel_check: nargs %d (max %d), size %lld, dtype %d",
              k->nargs, KERNEL_MAX_ARGS, (long long)k->size, (int)k->dtype);
    return JX_ERR_INTERNAL;
  }
  for (int i = 0; i < k->nargs; i++)
    if (!dtype_is_valid(k->arg_dtypes[i])) {
      error_set(JX_ERR_INTERNAL, "kernel_check: input #%d has invalid dtype %d", i,
                (int)k->arg_dtypes[i]);
      return JX_ERR_INTERNAL;
    }
  if (k->nextra < 0 || k->nextra > KERNEL_MAX_OUTS - 1 || (k->has_pre && !k->has_reduction)) {
    error_set(JX_ERR_INTERNAL, "kernel_check: %d extra outputs (max %d)%s", k->nextra,
              KERNEL_MAX_OUTS - 1, k->has_pre && !k->has_reduction ? ", pre without a reduction" : "");
    return JX_ERR_INTERNAL;
  }
  for (int i = 0; i < k->nextra; i++)
    if (!dtype_is_valid(k->extra_dtypes[i])) {
      error_set(JX_ERR_INTERNAL, "kernel_check: output #%d has invalid dtype %d", i + 1,
                (int)k->extra_dtypes[i]);
      return JX_ERR_INTERNAL;
    }
  if (k->has_row_out && !k->has_reduction) {
    error_set(JX_ERR_INTERNAL, "kernel_check: a row output without a reduction");
    return JX_ERR_INTERNAL;
  }
  if (!k->has_reduction) {
    jx_status st = check_part(k, "exp", k->exp, k->dtype);
    for (int i = 0; i < k->nextra && st == JX_OK; i++)
      st = check_part(k, "extra output", k->extra[i], k->extra_dtypes[i]);
    return st;
  }
  const Reduction *r = &k->reduction;
  bool op_ok = r->op == ALU_ADD || r->op == ALU_MUL || r->op == ALU_MIN || r->op == ALU_MAX ||
               r->op == ALU_AND || r->op == ALU_OR;
  if (!op_ok || !dtype_is_valid(r->dtype) || r->size < 0) {
    error_set(JX_ERR_INTERNAL, "kernel_check: reduction op %s, dtype %d, size %lld",
              alu_op_name(r->op), (int)r->dtype, (long long)r->size);
    return JX_ERR_INTERNAL;
  }
  /* The accumulator step acc = op(acc, x) must itself be a well-typed node. */
  AluExp probe = {.op = r->op, .dtype = r->dtype, .nsrc = 2};
  const AluExp *acc = alu_variable("acc", r->dtype);
  if (!acc) return JX_ERR_OOM;
  probe.src[0] = probe.src[1] = acc;
  char msg[160];
  if (alu_node_error(&probe, msg, sizeof msg)) {
    error_set(JX_ERR_INTERNAL, "kernel_check: reduction %s over %s: %s", alu_op_name(r->op),
              dtype_short_name(r->dtype), msg);
    return JX_ERR_INTERNAL;
  }
  probe = (AluExp){.op = ALU_CONST, .dtype = r->dtype, .value = r->identity};
  if (alu_node_error(&probe, msg, sizeof msg)) {
    error_set(JX_ERR_INTERNAL, "kernel_check: reduction identity: %s", msg);
    return JX_ERR_INTERNAL;
  }
  jx_status st = check_part(k, "exp", k->exp, r->dtype);
  if (st != JX_OK) return st;
  if (k->has_pre) {
    const Reduction *q = &k->pre;
    bool ok = (q->op == ALU_ADD || q->op == ALU_MUL || q->op == ALU_MIN || q->op == ALU_MAX ||
               q->op == ALU_AND || q->op == ALU_OR) && dtype_is_valid(q->dtype) &&
              q->size == r->size && !q->epilogue;
    if (!ok) {
      error_set(JX_ERR_INTERNAL, "kernel_check: first phase %s, dtype %d, size %lld (reduction %lld)",
                alu_op_name(q->op), (int)q->dtype, (long long)q->size, (long long)r->size);
      return JX_ERR_INTERNAL;
    }
    if ((st = check_part(k, "pre", k->pre_exp, q->dtype)) != JX_OK) return st;
  }
  for (int i = 0; i < k->nextra; i++)
    if ((st = check_part(k, "epilogue", k->extra[i], k->extra_dtypes[i])) != JX_OK) return st;
  if (k->has_row_out) {
    if (k->nextra > KERNEL_MAX_OUTS - 2 || !dtype_is_valid(k->row_dtype)) {
      error_set(JX_ERR_INTERNAL, "kernel_check: row output after %d extra outputs (max %d), dtype %d",
                k->nextra, KERNEL_MAX_OUTS - 2, (int)k->row_dtype);
      return JX_ERR_INTERNAL;
    }
    if ((st = check_part(k, "row output", k->row_exp, k->row_dtype)) != JX_OK) return st;
  }
  if (!r->epilogue) {
    if (r->dtype == k->dtype) return JX_OK;
    error_set(JX_ERR_INTERNAL, "kernel_check: reduction dtype %s without an epilogue, output %s",
              dtype_short_name(r->dtype), dtype_short_name(k->dtype));
    return JX_ERR_INTERNAL;
  }
  return check_part(k, "epilogue", r->epilogue, k->dtype);
}
