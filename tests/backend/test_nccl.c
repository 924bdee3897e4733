/* test_nccl.c -- the collectives between cuda devices through NCCL (backend/cuda/nccl.c):
 * psum, pmean, pmax, pmin, all_gather and psum_scatter (leading axis) inside a shard_map
 * over the process's cuda device, grad and jit of that shard_map, results on the device;
 * where libnccl.so.2 cannot be loaded, a clear JX_ERR_DEVICE saying where to find it.
 * Without a cuda device: skipped (77 under JAXC_DEVICE=cuda, else nothing to do). */
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda.h"
#include "test.h"

static jx_status f_all(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *a = in[0];
  out[0] = jx_lax_psum(a, "x");
  out[1] = jx_lax_pmean(a, "x");
  out[2] = jx_lax_pmax(a, "x");
  out[3] = jx_lax_pmin(jx_astype(a, JX_INT32), "x");
  out[4] = jx_lax_all_gather(a, "x", 0, true);
  out[5] = jx_lax_psum_scatter(jx_astype(a, JX_BFLOAT16), "x", 0, true);
  for (int o = 0; o < 6; o++)
    if (!out[o]) return jx_last_status();
  return JX_OK;
}

static jx_status f_loss_body(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_reshape(jx_lax_psum(jx_sum(jx_sin(in[0]), 0, NULL, false), "x"), 1, (int64_t[]){1});
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status f_loss(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *y = NULL;
  jx_status s = jx_call(ctx, in, &y);
  out[0] = s == JX_OK ? jx_sum(y, 0, NULL, false) : NULL;
  return s;
}

static double max_diff(jx_array *a, jx_array *b) {
  return jx_item(jx_max(jx_abs(jx_subtract(jx_astype(a, JX_FLOAT32), jx_astype(b, JX_FLOAT32))), 0, NULL, false));
}

static void test_collectives(void) {
  jx_scope_begin();
  jx_mesh *m = jx_mesh_new(1, (int64_t[]){1}, (const char *[]){"x"}, (const char *[]){"cuda"});
  CHECK(m != NULL);
  jx_array *x = jx_device_put(jx_reshape(jx_arange(-6, 6, 1, JX_FLOAT32), 2, (int64_t[]){4, 3}), "cuda");
  jx_fn *f = jx_fn_new("all", 1, 6, f_all, NULL);
  const char *outs[6] = {"x", "x", "x", "x", "x", "x"};
  jx_fn *sm = jx_shard_map(f, m, (const char *[]){"x"}, outs);
  jx_array *y[6] = {NULL};
  jx_status s = jx_call(sm, &x, y);
  if (s == JX_ERR_DEVICE && strstr(jx_last_error(), "libnccl.so.2 was not found")) {
    /* the error a user sees without NCCL: names the library and where to find it */
    CHECK_ERROR(JX_ERR_DEVICE, "psum on cuda: NCCL's libnccl.so.2 was not found");
    printf("NCCL missing here: checked the error only\n");
  } else {
    CHECK_MSG(s == JX_OK, "%s", jx_last_error());
    CHECK(cuda_nccl_version() > 0);
    printf("NCCL %d\n", cuda_nccl_version());
    for (int o = 0; s == JX_OK && o < 6; o++) {
      CHECK_STR(jx_device_of(y[o]), "cuda");
      CHECK_NEAR(max_diff(y[o], x), 0.0, 0.0); /* one device: each is the identity */
    }
    /* grad and jit of the shard_map (its transpose: psum again, over NCCL) */
    jx_fn *b = jx_fn_new("body", 1, 1, f_loss_body, NULL);
    jx_fn *smb = jx_shard_map(b, m, (const char *[]){"x"}, (const char *[]){""});
    jx_fn *l = jx_fn_new("loss", 1, 1, f_loss, smb), *g = jx_grad(l, 0, NULL), *jg = jx_jit(g);
    jx_array *gx = NULL;
    CHECK_MSG(jx_call(jg, &x, &gx) == JX_OK, "%s", jx_last_error());
    if (gx) CHECK_NEAR(max_diff(gx, jx_cos(x)), 0.0, 1e-6);
    jx_fn_free(jg), jx_fn_free(g), jx_fn_free(l), jx_fn_free(smb), jx_fn_free(b);
  }
  jx_clear_error();
  jx_fn_free(sm), jx_fn_free(f);
  jx_mesh_free(m);
  jx_scope_end(0, NULL);
}

int main(void) {
  if (jx_device_count("cuda") < 1) {
    const char *d = getenv("JAXC_DEVICE");
    printf("skipped: no cuda device\n");
    return d && !strcmp(d, "cuda") ? 77 : 0;
  }
  TEST_RUN(test_collectives);
  return test_finish();
}
