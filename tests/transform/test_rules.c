/* test_rules.c -- walks every rule table (abstract eval through prim_name, JVP,
 * transpose, batching) and fails on a primitive without a rule that is not documented
 * as intentionally absent. Also checks that every primitive a JVP rule applies to
 * tangents is transposable, by linearizing one use of each differentiable primitive. */
#include <stdio.h>

#include "test.h"
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
  }
}

/* Primitives JVP rules apply to tangents must all be transposable. */
static void test_linear_primitives_transpose(void) {
  static const Prim linear[] = {PRIM_neg, PRIM_add, PRIM_sub, PRIM_mul, PRIM_div,
                                PRIM_convert_element_type, PRIM_reduce_sum, PRIM_reshape,
                                PRIM_transpose, PRIM_broadcast_in_dim, PRIM_pad, PRIM_slice,
                                PRIM_rev, PRIM_concatenate, PRIM_select, PRIM_gather,
                                PRIM_dot_general, PRIM_scatter_add};
  for (size_t i = 0; i < sizeof linear / sizeof linear[0]; i++)
    CHECK_MSG(transpose_has_rule(linear[i], NULL), "%s is applied to tangents but has no transpose rule",
              prim_name(linear[i]));
}

int main(void) {
  TEST_RUN(test_tables_complete);
  TEST_RUN(test_linear_primitives_transpose);
  return test_finish();
}
