/* test_rules.c -- walks every rule table (names, abstract eval, eval, lowering, JVP,
 * transpose, batching) and fails on a primitive without a rule that is not documented
 * as intentionally absent. Also checks numerically that the transpose rule of every
 * primitive a JVP rule applies to tangents is the adjoint of that linear map. */
#include <stdio.h>
#include <stdlib.h>

#include "test.h"
#include "core/dtype.h"
#include "jit/jit.h"
#include "trace/trace.h"
#include "trace/prim.h"
#include "transform/jvp.h"
#include "transform/transform.h"
#include "transform/transpose.h"

static void test_tables_complete(void) {
  for (int p = 0; p < PRIM_NUM; p++) {
    const char *why = NULL;
    CHECK_MSG(strcmp(prim_name((Prim)p), "?") != 0, "primitive %d has no name", p);
    bool jvp = jvp_has_rule((Prim)p, &why);
    CHECK_MSG(jvp || why, "%s: no JVP rule and no documented reason", prim_name((Prim)p));
    CHECK_MSG(!(jvp && why), "%s: has a JVP rule but is also listed as absent", prim_name((Prim)p));
    why = NULL;
    bool vm = vmap_has_rule((Prim)p, &why);
    CHECK_MSG(vm || why, "%s: no batching rule and no documented reason", prim_name((Prim)p));
    why = NULL;
    bool tr = transpose_has_rule((Prim)p, &why);
    CHECK_MSG(tr || why, "%s: no transpose rule and no documented reason", prim_name((Prim)p));
    CHECK_MSG(prim_has_abstract_rule((Prim)p), "%s: no abstract eval rule", prim_name((Prim)p));
    CHECK_MSG(impl_has_rule((Prim)p), "%s: no eval (impl) rule", prim_name((Prim)p));
    why = NULL;
    bool lo = jit_has_lower_rule((Prim)p, &why);
    CHECK_MSG(lo || why, "%s: no lowering rule and no documented reason", prim_name((Prim)p));
    CHECK_MSG(!(lo && why), "%s: has a lowering rule but is also listed as absent", prim_name((Prim)p));
  }
}

/* Every primitive a JVP rule applies to tangents is linear in its `lin` operands, and
 * its transpose rule must be that linear map's adjoint: for random x and cotangent ct,
 * <ct, f(x)> == sum_i <pullback(ct)_i, x_i>, checked numerically through jx_vjp (which
 * transposes the linearized function with these rules). The other operands are fixed
 * (closed over). */
typedef struct LinCase {
  Prim prim;
  int nin;
  unsigned lin;          /* bit i: operand i is a linear input */
  const char *kinds;     /* per operand: f float32, b bool predicate, i int32 indices */
  int ndim[3];
  int64_t shape[3][3];
  PrimParams pp;
  jx_array *fixed[3];    /* the non-linear operands */
} LinCase;

#define CASE(p, n, l, k, ...) {.prim = PRIM_##p, .nin = n, .lin = l, .kinds = k, __VA_ARGS__}
static LinCase lin_cases[] = {
    CASE(neg, 1, 1, "f", .ndim = {2}, .shape = {{2, 3}}),
    CASE(add, 2, 3, "ff", .ndim = {2, 2}, .shape = {{2, 3}, {2, 3}}),
    CASE(sub, 2, 3, "ff", .ndim = {2, 2}, .shape = {{2, 3}, {2, 3}}),
    CASE(mul, 2, 1, "ff", .ndim = {2, 2}, .shape = {{2, 3}, {2, 3}}),
    CASE(div, 2, 1, "ff", .ndim = {2, 2}, .shape = {{2, 3}, {2, 3}}),
    CASE(convert_element_type, 1, 1, "f", .ndim = {2}, .shape = {{2, 3}}, .pp = {.dtype = JX_FLOAT64}),
    CASE(reduce_sum, 1, 1, "f", .ndim = {3}, .shape = {{2, 3, 4}}, .pp = {.naxes = 1, .axes = {1}}),
    CASE(reshape, 1, 1, "f", .ndim = {2}, .shape = {{2, 3}}, .pp = {.ndim = 2, .shape = {3, 2}}),
    CASE(transpose, 1, 1, "f", .ndim = {3}, .shape = {{2, 3, 4}}, .pp = {.naxes = 3, .axes = {2, 0, 1}}),
    CASE(broadcast_in_dim, 1, 1, "f", .ndim = {1}, .shape = {{3}},
         .pp = {.naxes = 1, .axes = {1}, .ndim = 2, .shape = {2, 3}}),
    CASE(pad, 1, 1, "f", .ndim = {2}, .shape = {{2, 3}}, .pp = {.start = {1, 0}, .stop = {0, 2}}),
    CASE(slice, 1, 1, "f", .ndim = {2}, .shape = {{4, 5}},
         .pp = {.start = {1, 0}, .stop = {4, 5}, .step = {2, 2}}),
    CASE(rev, 1, 1, "f", .ndim = {2}, .shape = {{2, 3}}, .pp = {.naxes = 1, .axes = {1}}),
    CASE(concatenate, 2, 3, "ff", .ndim = {2, 2}, .shape = {{2, 3}, {2, 2}}, .pp = {.axis = 1}),
    CASE(select, 3, 6, "bff", .ndim = {2, 2, 2}, .shape = {{2, 3}, {2, 3}, {2, 3}}),
    CASE(gather, 2, 1, "fi", .ndim = {2, 1}, .shape = {{5, 3}, {4}}, .pp = {.axis = 0}),
    CASE(dot_general, 2, 1, "ff", .ndim = {2, 2}, .shape = {{2, 3}, {3, 4}},
         .pp = {.ncontract = 1, .lhs_contract = {1}, .rhs_contract = {0}}),
    CASE(dot_general, 2, 2, "ff", .ndim = {2, 2}, .shape = {{2, 3}, {3, 4}},
         .pp = {.ncontract = 1, .lhs_contract = {1}, .rhs_contract = {0}}),
    CASE(scatter_add, 3, 5, "fif", .ndim = {2, 1, 2}, .shape = {{5, 3}, {4}, {4, 3}}, .pp = {.axis = 0}),
};
#undef CASE

static uint32_t lin_seed = 12345;
static double lin_rand(void) {
  lin_seed = lin_seed * 1664525u + 1013904223u;
  return (double)(lin_seed >> 8) / (double)(1u << 24) * 2.0 - 1.0;
}

/* A random operand of case c: floats in [-1, 1) (divisors in [1, 2)), indices with a
 * repeat (scatter adds twice there), a mixed predicate. */
static jx_array *lin_operand(const LinCase *c, int i) {
  int64_t n = 1;
  for (int d = 0; d < c->ndim[i]; d++) n *= c->shape[i][d];
  jx_dtype dt = c->kinds[i] == 'b' ? JX_BOOL : c->kinds[i] == 'i' ? JX_INT32 : JX_FLOAT32;
  double v[64];
  for (int64_t k = 0; k < n; k++) {
    double r = lin_rand();
    if (dt == JX_BOOL) v[k] = r > 0;
    else if (dt == JX_INT32) v[k] = (double)((k * 3 + 1) % 5 == 4 ? 1 : (k * 3 + 1) % 5);
    else if (c->prim == PRIM_div && i == 1) v[k] = 1.5 + 0.5 * r;
    else v[k] = r;
  }
  jx_array *f = jx_array_from(v, JX_FLOAT64, c->ndim[i], c->shape[i]);
  jx_array *a = jx_astype(f, dt);
  jx_free(f);
  return a;
}

static jx_status lin_apply(void *ctx, jx_array *const *in, jx_array **out) {
  const LinCase *c = ctx;
  jx_array *ops[3];
  for (int i = 0, k = 0; i < c->nin; i++) ops[i] = c->lin >> i & 1 ? in[k++] : c->fixed[i];
  out[0] = prim_bind(c->prim, c->nin, ops, &c->pp);
  return out[0] ? JX_OK : jx_last_status();
}

/* <a, b> in float64 */
static double inner(jx_array *a, jx_array *b) {
  jx_array *p = jx_sum(jx_multiply(jx_astype(a, JX_FLOAT64), jx_astype(b, JX_FLOAT64)), 0, NULL, false);
  double r = p ? jx_item(p) : NAN;
  return r;
}

static void test_transpose_rules_are_adjoints(void) {
  bool x64 = dtype_x64();
  jx_config_enable_x64(true);
  for (size_t t = 0; t < sizeof lin_cases / sizeof lin_cases[0]; t++) {
    LinCase *c = &lin_cases[t];
    jx_scope_begin();
    int nlin = 0;
    jx_array *x[3];
    for (int i = 0; i < c->nin; i++) {
      jx_array *a = lin_operand(c, i);
      if (c->lin >> i & 1) x[nlin++] = a;
      else c->fixed[i] = a;
    }
    jx_fn *f = jx_fn_new(prim_name(c->prim), nlin, 1, lin_apply, c);
    jx_array *y = NULL, *cts[3] = {NULL, NULL, NULL};
    jx_fn *pb = jx_vjp(f, x, &y);
    CHECK_MSG(pb && y, "%s: vjp failed: %s", prim_name(c->prim), jx_last_error());
    jx_clear_error();
    if (pb && y) {
      int64_t n = jx_size(y);
      double v[64];
      for (int64_t k = 0; k < n; k++) v[k] = lin_rand();
      jx_array *ct = jx_astype(jx_array_from(v, JX_FLOAT64, jx_ndim(y), jx_shape(y)), jx_dtype_of(y));
      CHECK_EQ_INT(jx_call(pb, &ct, cts), JX_OK);
      double lhs = inner(ct, y), rhs = 0;
      for (int i = 0; i < nlin; i++) rhs += inner(cts[i], x[i]);
      CHECK_MSG(fabs(lhs - rhs) <= 1e-5 * (1 + fabs(lhs)),
                "%s (case %zu): <ct, f(x)> = %.9g but <transpose(f)(ct), x> = %.9g",
                prim_name(c->prim), t, lhs, rhs);
    }
    jx_fn_free(pb), jx_fn_free(f);
    jx_scope_end(0, NULL);
  }
  jx_config_enable_x64(x64);
}

/* Every primitive a JVP rule applies to tangents is covered by a case above. */
static void test_linear_primitives_covered(void) {
  static const Prim linear[] = {PRIM_neg, PRIM_add, PRIM_sub, PRIM_mul, PRIM_div,
                                PRIM_convert_element_type, PRIM_reduce_sum, PRIM_reshape,
                                PRIM_transpose, PRIM_broadcast_in_dim, PRIM_pad, PRIM_slice,
                                PRIM_rev, PRIM_concatenate, PRIM_select, PRIM_gather,
                                PRIM_dot_general, PRIM_scatter_add};
  for (size_t i = 0; i < sizeof linear / sizeof linear[0]; i++) {
    bool found = false;
    for (size_t t = 0; t < sizeof lin_cases / sizeof lin_cases[0]; t++) found |= lin_cases[t].prim == linear[i];
    CHECK_MSG(found, "%s is applied to tangents but its transpose is not checked", prim_name(linear[i]));
  }
}

int main(void) {
  TEST_RUN(test_tables_complete);
  TEST_RUN(test_transpose_rules_are_adjoints);
  TEST_RUN(test_linear_primitives_covered);
  return test_finish();
}
