/* mpi_collectives.c -- collectives between the processes of an MPI job (run by CTest as
 * mpirun -np 2 and -np 3; exits 77, skipped, where Open MPI is not installed): jx_pmap
 * over the processes (one index each) with psum, pmean, pmax, all_gather, psum_scatter,
 * ppermute, all_to_all, axis_index, each against its definition, jit inside, grad through
 * psum, and a mapped axis that is not 1 (JX_ERR_SHAPE). Every process checks its own
 * results; no leaks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static int P, R; /* process count, this process's index */

static jx_array *local(double scale, int64_t n) { /* [1, n]: (R + 1) * scale * (1 .. n) */
  float v[64];
  for (int64_t i = 0; i < n; i++) v[i] = (float)((R + 1) * scale * (double)(i + 1));
  return jx_array_from(v, JX_FLOAT32, 2, (int64_t[]){1, n});
}

static int which;
static jx_status body(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *x = in[0];
  int pairs[64][2];
  for (int i = 0; i < P; i++) pairs[i][0] = i, pairs[i][1] = (i + 1) % P;
  switch (which) {
  case 0: out[0] = jx_lax_psum(x, "p"); break;
  case 1: out[0] = jx_lax_pmean(x, "p"); break;
  case 2: out[0] = jx_lax_pmax(x, "p"); break;
  case 3: out[0] = jx_lax_all_gather(x, "p", 0, false); break;
  case 4: out[0] = jx_lax_ppermute(x, "p", P, (const int (*)[2])pairs); break;
  case 5: out[0] = jx_astype(jx_lax_axis_index("p"), JX_FLOAT32); break;
  }
  return out[0] ? JX_OK : jx_last_status();
}

static double *run(jx_fn *f, jx_array *x, int64_t *n) {
  jx_fn *pm = jx_pmap(f, "p", NULL, NULL);
  jx_array *y = NULL;
  jx_status s = jx_call(pm, &x, &y);
  CHECK_MSG(s == JX_OK, "case %d: %s", which, jx_last_error());
  jx_fn_free(pm);
  if (s != JX_OK) return NULL;
  CHECK_EQ_INT(jx_shape(y)[0], 1);
  *n = jx_size(y);
  double *v = test_read_f64(y);
  jx_free(y);
  return v;
}

static void test_collectives(void) {
  jx_scope_begin();
  jx_fn *f = jx_fn_new("body", 1, 1, body, NULL);
  for (int jit = 0; jit < 2; jit++)
    for (which = 0; which < 6; which++) {
      int64_t n = 0;
      jx_fn *jf = jx_jit(f); /* one per case: body reads `which` */
      double *v = run(jit ? jf : f, local(1, 3), &n);
      jx_fn_free(jf);
      if (!v) continue;
      double S = P * (P + 1) / 2.0; /* the sum of (r + 1) over the processes */
      CHECK_EQ_INT(n, which == 3 ? 3 * P : which == 5 ? 1 : 3);
      for (int64_t i = 0; i < n; i++) {
        double want = 0;
        switch (which) {
        case 0: want = S * (double)(i + 1); break;
        case 1: want = S / P * (double)(i + 1); break;
        case 2: want = P * (double)(i + 1); break;
        case 3: want = (double)(i / 3 + 1) * (double)(i % 3 + 1); break;
        case 4: want = (double)((R - 1 + P) % P + 1) * (double)(i + 1); break;
        case 5: want = R; break;
        }
        CHECK_NEAR(v[i], want, 1e-4);
      }
      free(v);
    }
  jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* psum_scatter and all_to_all over a last axis of 2P: checked on their own below */
static jx_status scatter_body(void *ctx, jx_array *const *in, jx_array **out) {
  /* x [2P] (the mapped axis dropped) -> psum_scatter (tiled): [2] = sums of 2R, 2R+1 */
  out[0] = jx_lax_psum_scatter(in[0], "p", 0, true);
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status a2a_body(void *ctx, jx_array *const *in, jx_array **out) {
  /* x [2P]: block j (2 values) goes to process j, received blocks joined in order */
  out[0] = jx_lax_all_to_all(in[0], "p", 0, 0, true);
  return out[0] ? JX_OK : jx_last_status();
}
static void test_scatter_a2a(void) {
  jx_scope_begin();
  double S = P * (P + 1) / 2.0;
  jx_fn *f = jx_fn_new("scatter", 1, 1, scatter_body, NULL);
  jx_fn *pm = jx_pmap(f, "p", NULL, NULL);
  jx_array *y = NULL;
  CHECK(jx_call(pm, (jx_array *[]){local(1, 2 * P)}, &y) == JX_OK);
  double *v = y ? test_read_f64(y) : NULL;
  CHECK_EQ_INT(jx_size(y), 2);
  for (int i = 0; v && i < 2; i++) CHECK_NEAR(v[i], S * (2 * R + i + 1), 1e-4);
  free(v);
  jx_fn_free(pm), jx_fn_free(f);
  f = jx_fn_new("a2a", 1, 1, a2a_body, NULL);
  pm = jx_pmap(f, "p", NULL, NULL);
  CHECK(jx_call(pm, (jx_array *[]){local(1, 2 * P)}, &y) == JX_OK);
  v = y ? test_read_f64(y) : NULL;
  CHECK_EQ_INT(jx_size(y), 2 * P);
  /* received from process j: its columns 2R, 2R+1, i.e. (j + 1) * (2R + 1 + k) */
  for (int j = 0; v && j < P; j++)
    for (int k = 0; k < 2; k++) CHECK_NEAR(v[j * 2 + k], (j + 1) * (2 * R + 1 + k), 1e-4);
  free(v);
  jx_fn_free(pm), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* grad(sum(sin(psum(x)))) = psum(cos(psum(x))) = P cos(S x) elementwise */
static jx_status loss(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sum(jx_sin(jx_lax_psum(in[0], "p")), 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status grad_body(void *ctx, jx_array *const *in, jx_array **out) {
  return jx_call((jx_fn *)ctx, in, out);
}
static void test_grad(void) {
  jx_scope_begin();
  jx_fn *l = jx_fn_new("loss", 1, 1, loss, NULL);
  jx_fn *g = jx_grad(l, 0, NULL);
  jx_fn *b = jx_fn_new("grad_body", 1, 1, grad_body, g);
  jx_fn *pm = jx_pmap(b, "p", NULL, NULL);
  jx_array *y = NULL;
  CHECK(jx_call(pm, (jx_array *[]){local(0.25, 3)}, &y) == JX_OK);
  double *v = y ? test_read_f64(y) : NULL;
  double S = P * (P + 1) / 2.0;
  for (int i = 0; v && i < 3; i++) CHECK_NEAR(v[i], P * cos(S * 0.25 * (i + 1)), 1e-4);
  free(v);
  /* a mapped axis of 2 under MPI: each process maps one index */
  if (P > 1) {
    CHECK(jx_call(pm, (jx_array *[]){jx_zeros(2, (int64_t[]){2, 3}, JX_FLOAT32)}, &y) == JX_ERR_SHAPE);
    CHECK_ERROR(JX_ERR_SHAPE, "each of the");
  }
  jx_fn_free(pm), jx_fn_free(b), jx_fn_free(g), jx_fn_free(l);
  jx_scope_end(0, NULL);
}

int main(void) {
  if (jx_distributed_initialize() != JX_OK) {
    printf("skipped: %s\n", jx_last_error());
    return 77;
  }
  P = jx_process_count();
  R = jx_process_index();
  printf("process %d of %d\n", R, P);
  TEST_RUN(test_collectives);
  TEST_RUN(test_scatter_a2a);
  TEST_RUN(test_grad);
  int rc = test_finish();
  if (jx_distributed_shutdown() != JX_OK) rc = 1;
  return rc;
}
