/* test_orthogonal.c -- jax.nn.initializers.orthogonal against JAX 0.10.2. Expected values
 * printed by: init = jax.nn.initializers.orthogonal(scale, column_axis);
 * np.asarray(init(jax.random.PRNGKey(seed), shape, jnp.float32)).ravel().tolist(). JAX's
 * float32 LAPACK QR and jaxc's float64 Gram-Schmidt agree to ~1e-6. */
#include <stdlib.h>

#include "test.h"

static void check(uint64_t seed, int ndim, const int64_t *shape, double scale, int axis,
                  const double *want, int n) {
  jx_scope_begin();
  jx_array *w = jx_nn_init_orthogonal(jx_random_key(seed), ndim, shape, JX_FLOAT32, scale, axis);
  CHECK_MSG(w != NULL, "orthogonal: %s", jx_last_error());
  if (w) {
    CHECK_EQ_INT(jx_size(w), n);
    double *got = test_read_f64(w);
    for (int i = 0; i < n; i++) CHECK_NEAR(got[i], want[i], 2e-6 * (1 + fabs(want[i])));
    free(got);
  }
  jx_scope_end(0, NULL);
}

static void test_orthogonal_matches_jax(void) {
  static const double tall[12] = {0.47362983226776123, 1.3290380239486694, -0.22537386417388916,
                                  -0.14793512225151062, 0.5579740405082703, 0.20521004498004913,
                                  -0.13574302196502686, -0.11404021084308624, -1.4680424928665161,
                                  -1.409029245376587, 0.39914602041244507, 0.04412605240941048};
  check(7, 2, (int64_t[]){4, 3}, 1.5, -1, tall, 12);
  static const double wide[15] = {0.4442616105079651, -0.13876214623451233, -0.12732604146003723,
                                  -1.3216601610183716, 0.5199803113937378, 1.0438199043273926,
                                  0.3520037531852722, -0.11321364343166351, -0.07223375141620636,
                                  -1.009207010269165, 0.33531811833381653, 0.4291398525238037,
                                  -1.1908413171768188, 0.4184918999671936, 0.6001352071762085};
  check(7, 2, (int64_t[]){3, 5}, 1.5, -1, wide, 15);
  static const double rank3[24] = {
      0.2911491394042969, 0.9149413108825684, 0.19138413667678833, 0.04675885662436485,
      0.39713525772094727, 0.07828874886035919, -0.1506822407245636, -0.1017146185040474,
      -0.9533559679985046, -0.4589287042617798, -0.6975409984588623, 0.17303842306137085,
      0.3407718241214752, -0.9534360766410828, 0.8635588884353638, 0.44154542684555054,
      -0.16437426209449768, 0.40437281131744385, -0.010402200743556023, 1.3914965391159058,
      0.9774885177612305, -0.35153910517692566, -0.9789080619812012, 0.27622610330581665};
  check(7, 3, (int64_t[]){2, 3, 4}, 1.5, -1, rank3, 24);
  static const double col0[12] = {-0.48706746101379395, 0.6636888384819031, -0.41939911246299744,
                                  -0.38260552287101746, 0.7265363335609436, 0.19257184863090515,
                                  -0.6485683917999268, 0.12008364498615265, 0.2024156153202057,
                                  -0.40162351727485657, -0.057526323944330215, -0.8913007378578186};
  check(3, 2, (int64_t[]){3, 4}, 1.0, 0, col0, 12);
}

static void test_orthogonal_errors(void) {
  jx_scope_begin();
  jx_array *k = jx_random_key(0);
  CHECK(jx_nn_init_orthogonal(k, 1, (int64_t[]){4}, JX_FLOAT32, 1.0, -1) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_nn_init_orthogonal");
  CHECK(jx_nn_init_orthogonal(k, 2, (int64_t[]){4, 4}, JX_INT32, 1.0, -1) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_nn_init_orthogonal");
  CHECK(jx_nn_init_orthogonal(k, 2, (int64_t[]){4, 4}, JX_FLOAT32, 1.0, 2) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_nn_init_orthogonal");
  CHECK(jx_nn_init_orthogonal(NULL, 2, (int64_t[]){4, 4}, JX_FLOAT32, 1.0, -1) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "key");
  jx_scope_end(0, NULL);
}

int main(void) {
  TEST_RUN(test_orthogonal_matches_jax);
  TEST_RUN(test_orthogonal_errors);
  return test_finish();
}
