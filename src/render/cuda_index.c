/* cuda_index.c -- int32 index arithmetic for the CUDA framing (render/cuda.c): a kernel's
 * int64 index computations rewritten in int32 where the IR's intervals show every value
 * fits (render_cuda_narrow_indices, render/cuda.h). */
#include <stdint.h>

#include "core/config.h"
#include "core/error.h"
#include "render/cuda.h"

/* 32-bit index arithmetic: where an int64 index computation's every value fits in int32
 * (the nodes' intervals), it runs in int32 and is widened at the load. The GPU divides
 * and multiplies int64 in several 32-bit steps: the Fashion-MNIST CNN's im2col (7.2M
 * outputs, five digits of the flat index a load) took 45.7 us compute-bound on an H100
 * in int64. A load's index that selects between indices (where(valid, i, 0), a guarded
 * load, emit_guarded_load) keeps that select in int64, its branches narrowed. Loads at
 * gidx or a constant stay as they are. Not for vectorized elementwise kernels: their
 * loads' classes (group_loads) are found again on the kernel rendered, and narrowed
 * indices lose them (the MLP step at batch 4096 took 0.100-0.103 ms so against
 * 0.090 with int64 indices, an H100). */
static bool fits_i32(const AluExp *x) {
  return x->dtype == JX_INT64 && x->lo >= INT32_MIN && x->hi <= INT32_MAX;
}

typedef struct Narrow {
  AluMap rw, n32;
} Narrow;

static const AluExp *narrow_rw(const AluExp *x, Narrow *m);

static const AluExp *narrow32(const AluExp *x, Narrow *m) {
  const void *hit;
  if (alu_map_get(&m->n32, x, &hit)) return hit;
  const AluExp *r = NULL;
  switch (x->op) {
  case ALU_CONST: r = alu_const_int(JX_INT32, x->value.i); break;
  case ALU_ADD: case ALU_SUB: case ALU_MUL: case ALU_DIV: case ALU_MOD: case ALU_MIN: case ALU_MAX:
  case ALU_NEG: {
    bool all = true;
    for (int i = 0; i < x->nsrc; i++) all &= fits_i32(x->src[i]);
    if (!all) break;
    const AluExp *src[2];
    for (int i = 0; i < x->nsrc; i++)
      if (!(src[i] = narrow32(x->src[i], m))) return NULL;
    r = alu_make(x->op, JX_INT32, x->nsrc, src, x->value, 0, NULL);
    break;
  }
  case ALU_WHERE:
    if (fits_i32(x->src[1]) && fits_i32(x->src[2])) {
      const AluExp *c = narrow_rw(x->src[0], m), *a = narrow32(x->src[1], m), *b = narrow32(x->src[2], m);
      r = c && a && b ? alu_where(c, a, b) : NULL;
      if (!r) return NULL;
    }
    break;
  default: break;
  }
  if (!r) {
    const AluExp *w = narrow_rw(x, m);
    r = w ? alu_cast(w, JX_INT32) : NULL;
  }
  if (r && !alu_map_put(&m->n32, x, r)) return NULL;
  return r;
}

/* A load's int64 index, narrowed (below the select of a guarded load). */
static const AluExp *narrow_index(const AluExp *i, Narrow *m) {
  if (i->op == ALU_SPECIAL || i->op == ALU_CONST || !fits_i32(i)) return narrow_rw(i, m);
  if (i->op == ALU_WHERE && i->src[2]->op == ALU_CONST && i->src[2]->value.i == 0) {
    const AluExp *c = narrow_rw(i->src[0], m), *a = narrow_index(i->src[1], m), *b = narrow_index(i->src[2], m);
    return c && a && b ? alu_where(c, a, b) : NULL;
  }
  const AluExp *n = narrow32(i, m);
  return n ? alu_cast(n, JX_INT64) : NULL;
}

static const AluExp *narrow_rw(const AluExp *x, Narrow *m) {
  if (!x->nsrc) return x;
  const void *hit;
  if (alu_map_get(&m->rw, x, &hit)) return hit;
  const AluExp *r;
  if (x->op == ALU_GLOBAL_INDEX) {
    const AluExp *i = narrow_index(x->src[0], m);
    r = i ? alu_global(x->arg, x->dtype, i) : NULL;
  } else if ((x->op == ALU_CMPLT || x->op == ALU_CMPEQ || x->op == ALU_CMPNE) && fits_i32(x->src[0]) &&
             fits_i32(x->src[1])) {
    const AluExp *a = narrow32(x->src[0], m), *b = narrow32(x->src[1], m);
    r = a && b ? alu_binary(x->op, a, b) : NULL;
  } else {
    const AluExp *src[4];
    for (int i = 0; i < x->nsrc; i++)
      if (!(src[i] = narrow_rw(x->src[i], m))) return NULL;
    r = alu_make(x->op, x->dtype, x->nsrc, src, x->value, x->arg, x->name);
  }
  if (r && !alu_map_put(&m->rw, x, r)) return NULL;
  return r;
}

/* JAXC_CUDA_NARROW=0: int64 index arithmetic as the IR has it (measuring). */
static bool narrow_on(void) {
  static int v = -1;
  return config_env_setting(&v, "JAXC_CUDA_NARROW", 1, 0, 1);
}

bool render_cuda_narrow_indices(Kernel *h) {
  if (!narrow_on()) return true;
  Narrow m;
  alu_map_init(&m.rw), alu_map_init(&m.n32);
  bool ok = (h->exp = narrow_rw(h->exp, &m)) != NULL;
  for (int o = 0; o < h->nextra && ok; o++) ok = (h->extra[o] = narrow_rw(h->extra[o], &m)) != NULL;
  if (ok && h->has_reduction && h->reduction.epilogue)
    ok = (h->reduction.epilogue = narrow_rw(h->reduction.epilogue, &m)) != NULL;
  alu_map_free(&m.rw), alu_map_free(&m.n32);
  if (!ok && jx_last_status() == JX_OK) error_set(JX_ERR_OOM, "render: out of memory");
  return ok;
}

