/* kernel.c -- the identity of a Kernel: one hash and one equality over every field that
 * decides what it computes (its expressions, sizes, dtypes, reduction with epilogue, a
 * two-phase kernel's first phase, extra outputs), shared by every backend's cache.
 * Expressions are hash-consed, so pointer equality of AluExps is structural equality;
 * fields a kernel does not use (a reduction's when has_reduction is false, unused
 * array slots) take no part, so neither do padding bytes. */
#include <stdlib.h>

#include "ir/alu.h"

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

static uint64_t exp_hash(const AluExp *e) { return e ? e->hash : 0x5bd1e995u; }

static uint64_t reduction_hash(uint64_t h, const Reduction *r, bool with_epilogue) {
  h = mix(h, (uint64_t)r->op << 8 | (uint64_t)r->dtype);
  h = mix(h, r->identity.u);
  h = mix(h, (uint64_t)r->size);
  return with_epilogue ? mix(h, exp_hash(r->epilogue)) : h;
}

uint64_t kernel_hash(const Kernel *k) {
  uint64_t h = mix(exp_hash(k->exp), (uint64_t)k->size);
  h = mix(h, (uint64_t)k->nargs << 16 | (uint64_t)k->dtype);
  for (int i = 0; i < k->nargs && i < KERNEL_MAX_ARGS; i++) h = mix(h, (uint64_t)k->arg_dtypes[i]);
  h = mix(h, (uint64_t)k->has_reduction << 1 | (uint64_t)k->has_pre);
  if (k->has_reduction) h = reduction_hash(h, &k->reduction, true);
  if (k->has_pre) h = reduction_hash(mix(h, exp_hash(k->pre_exp)), &k->pre, false);
  h = mix(h, (uint64_t)k->nextra);
  for (int i = 0; i < k->nextra && i < KERNEL_MAX_OUTS - 1; i++)
    h = mix(h, exp_hash(k->extra[i]) ^ (uint64_t)k->extra_dtypes[i] << 56);
  if (k->has_row_out) h = mix(h, exp_hash(k->row_exp) ^ (uint64_t)k->row_dtype << 56);
  if (k->post) h = mix(h, kernel_hash(k->post));
  return h;
}

static bool reduction_equal(const Reduction *a, const Reduction *b, bool with_epilogue) {
  return a->op == b->op && a->dtype == b->dtype && a->identity.u == b->identity.u &&
         a->size == b->size && (!with_epilogue || a->epilogue == b->epilogue);
}

bool kernel_equal(const Kernel *a, const Kernel *b) {
  if (a == b) return true;
  if (a->exp != b->exp || a->size != b->size || a->nargs != b->nargs || a->dtype != b->dtype ||
      a->has_reduction != b->has_reduction || a->has_pre != b->has_pre || a->nextra != b->nextra)
    return false;
  for (int i = 0; i < a->nargs && i < KERNEL_MAX_ARGS; i++)
    if (a->arg_dtypes[i] != b->arg_dtypes[i]) return false;
  if (a->has_reduction && !reduction_equal(&a->reduction, &b->reduction, true)) return false;
  if (a->has_pre && (a->pre_exp != b->pre_exp || !reduction_equal(&a->pre, &b->pre, false)))
    return false;
  for (int i = 0; i < a->nextra && i < KERNEL_MAX_OUTS - 1; i++)
    if (a->extra[i] != b->extra[i] || a->extra_dtypes[i] != b->extra_dtypes[i]) return false;
  if (a->has_row_out != b->has_row_out ||
      (a->has_row_out && (a->row_exp != b->row_exp || a->row_dtype != b->row_dtype)))
    return false;
  if (!a->post != !b->post || (a->post && !kernel_equal(a->post, b->post))) return false;
  return true;
}

const AluExp *kernel_group_index(const Kernel *post) {
  int64_t G = post->reduction.size;
  const AluExp *g = alu_special("gidx", post->size), *r = alu_special("ridx", G);
  const AluExp *m = g ? alu_binary(ALU_MUL, g, alu_const_int(JX_INT64, G)) : NULL;
  return m && r ? alu_simplify(alu_binary(ALU_ADD, m, r)) : NULL;
}

static bool reads_only_at(const AluExp *e, int64_t arg, const AluExp *at) {
  if (!e) return true;
  int64_t n;
  const AluExp **order = alu_toposort(e, &n);
  bool ok = order != NULL;
  for (int64_t i = 0; ok && i < n; i++)
    ok = order[i]->op != ALU_GLOBAL_INDEX || order[i]->arg != arg || order[i]->src[0] == at;
  free((void *)order);
  return ok;
}

bool kernel_reads_only_at(const Kernel *k, int64_t arg, const AluExp *at) {
  bool ok = reads_only_at(k->exp, arg, at) && (!k->has_reduction || reads_only_at(k->reduction.epilogue, arg, at)) &&
            (!k->has_pre || reads_only_at(k->pre_exp, arg, at)) && (!k->has_row_out || reads_only_at(k->row_exp, arg, at));
  for (int o = 0; o < k->nextra && ok; o++) ok = reads_only_at(k->extra[o], arg, at);
  return ok;
}

int kernel_nouts(const Kernel *k) { return 1 + k->nextra + k->has_row_out + (k->post ? kernel_nouts(k->post) : 0); }

int64_t kernel_out_elems(const Kernel *k, int o) {
  int own = 1 + k->nextra + k->has_row_out;
  if (o >= own && k->post) return kernel_out_elems(k->post, o - own);
  return k->has_row_out && o == own - 1 ? k->size * k->reduction.size : k->size;
}

jx_dtype kernel_out_dtype(const Kernel *k, int o) {
  int own = 1 + k->nextra + k->has_row_out;
  if (o >= own && k->post) return kernel_out_dtype(k->post, o - own);
  if (k->has_row_out && o == own - 1) return k->row_dtype;
  return o ? k->extra_dtypes[o - 1] : k->dtype;
}

int64_t kernel_reduce_lanes(int64_t size, int64_t R) {
  if (size > 64 || R < (1 << 15)) return 0;
  for (int64_t P = 256; P >= 16; P /= 2)
    if (R % P == 0) return P;
  return 0;
}
