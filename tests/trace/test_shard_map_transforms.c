/* test_shard_map_transforms.c -- grad, jvp, vmap and jit OF a shard_map and a pmap (the
 * shard_map primitive, transform/shard_map.c) on 4 cpu devices, against JAX
 * (tests/golden/shard_map.txt from tools/golden_shard_map.py, check_vma=False) and
 * against the unsharded function: replicated and sharded inputs and outputs, psum,
 * all_gather, ppermute, a 2x2 mesh, each as grad, jit(grad), grad(jit); vmap with batch
 * axes anywhere, vmap(grad), jit(vmap); the jaxpr printer; no leaks. */
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "test.h"

static jx_mesh *mesh, *mesh2;
static jx_fn *sm_rep, *sm_sharded, *sm_gathered, *sm_permuted, *sm_mesh2d, *sm_mesh2d_y, *pm;

static jx_status ret(jx_array **out, jx_array *r) {
  out[0] = r;
  return r ? JX_OK : jx_last_status();
}
static jx_array *arange2(int64_t n0, int64_t n1) {
  return jx_reshape(jx_arange(0, (double)(n0 * n1), 1, JX_FLOAT32), 2, (int64_t[]){n0, n1});
}
static jx_array *total(jx_array *x) { return jx_sum(x, 0, NULL, false); }

/* The bodies (tools/golden_shard_map.py mirrors them). */
static jx_status b_rep(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *s = jx_lax_psum(total(jx_multiply(jx_sin(in[0]), in[1])), "x");
  return ret(out, jx_reshape(s, 1, (int64_t[]){1}));
}
static jx_status b_sharded(void *ctx, jx_array *const *in, jx_array **out) {
  return ret(out, jx_multiply(in[0], jx_lax_psum(in[0], "x")));
}
static jx_status b_gathered(void *ctx, jx_array *const *in, jx_array **out) {
  return ret(out, jx_tanh(jx_matmul(jx_lax_all_gather(in[0], "x", 0, true), in[1])));
}
static jx_status b_permuted(void *ctx, jx_array *const *in, jx_array **out) {
  const int perm[4][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  return ret(out, jx_lax_ppermute(jx_sin(in[0]), "x", 4, perm));
}
static jx_status b_mesh2d(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *w0 = jx_reshape(jx_slice(in[1], 1, (int64_t[]){0}, (int64_t[]){1}, NULL), 0, NULL);
  jx_array *s = jx_lax_psum(jx_lax_psum(total(jx_multiply(in[0], w0)), "x"), "y");
  return ret(out, jx_reshape(s, 1, (int64_t[]){1}));
}
static jx_status b_mesh2d_y(void *ctx, jx_array *const *in, jx_array **out) {
  return ret(out, jx_cos(jx_lax_psum(in[0], "x")));
}
static jx_status b_pmap(void *ctx, jx_array *const *in, jx_array **out) {
  return ret(out, jx_multiply(in[0], jx_lax_psum(in[0], "i")));
}

/* The losses of the grad cases. */
static jx_status call1(jx_fn *f, jx_array *const *in, jx_array **y) { return jx_call(f, in, y); }
static jx_status l_rep(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *y = NULL;
  jx_status s = call1(sm_rep, in, &y);
  return s != JX_OK ? s : ret(out, total(y));
}
static jx_status l_rep_unsharded(void *ctx, jx_array *const *in, jx_array **out) {
  return ret(out, total(jx_multiply(jx_sin(in[0]), in[1])));
}
static jx_status l_sharded(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *y = NULL;
  jx_status s = call1(sm_sharded, in, &y);
  return s != JX_OK ? s : ret(out, total(jx_sin(y)));
}
static jx_status l_gathered(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *y = NULL;
  jx_status s = call1(sm_gathered, in, &y);
  return s != JX_OK ? s : ret(out, total(jx_multiply(y, arange2(8, 2))));
}
static jx_status l_permuted(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *y = NULL;
  jx_status s = call1(sm_permuted, in, &y);
  return s != JX_OK ? s : ret(out, total(jx_multiply(y, arange2(8, 3))));
}
static jx_status l_mesh2d(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *y = NULL;
  jx_status s = call1(sm_mesh2d, in, &y);
  return s != JX_OK ? s : ret(out, total(y));
}
static jx_status l_mesh2d_y(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *y = NULL;
  jx_status s = call1(sm_mesh2d_y, in, &y);
  return s != JX_OK ? s : ret(out, total(jx_multiply(y, arange2(2, 6))));
}
static jx_status l_pmap(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *y = NULL;
  jx_status s = call1(pm, in, &y);
  return s != JX_OK ? s : ret(out, total(jx_sin(y)));
}

static void setup(void) {
  mesh = jx_mesh_new(1, (int64_t[]){4}, (const char *[]){"x"}, NULL);
  mesh2 = jx_mesh_new(2, (int64_t[]){2, 2}, (const char *[]){"x", "y"}, NULL);
  jx_fn *f;
  f = jx_fn_new("rep", 2, 1, b_rep, NULL);
  sm_rep = jx_shard_map(f, mesh, (const char *[]){"x", ""}, (const char *[]){""});
  jx_fn_free(f);
  f = jx_fn_new("sharded", 1, 1, b_sharded, NULL);
  sm_sharded = jx_shard_map(f, mesh, (const char *[]){"x"}, (const char *[]){"x"});
  jx_fn_free(f);
  f = jx_fn_new("gathered", 2, 1, b_gathered, NULL);
  sm_gathered = jx_shard_map(f, mesh, (const char *[]){"x", ""}, (const char *[]){""});
  jx_fn_free(f);
  f = jx_fn_new("permuted", 1, 1, b_permuted, NULL);
  sm_permuted = jx_shard_map(f, mesh, (const char *[]){"x"}, (const char *[]){"x"});
  jx_fn_free(f);
  f = jx_fn_new("mesh2d", 2, 1, b_mesh2d, NULL);
  sm_mesh2d = jx_shard_map(f, mesh2, (const char *[]){"x, y", ""}, (const char *[]){""});
  jx_fn_free(f);
  f = jx_fn_new("mesh2d_y", 1, 1, b_mesh2d_y, NULL);
  sm_mesh2d_y = jx_shard_map(f, mesh2, (const char *[]){"x, y"}, (const char *[]){"None, y"});
  jx_fn_free(f);
  f = jx_fn_new("pmapped", 1, 1, b_pmap, NULL);
  pm = jx_pmap(f, "i", NULL, NULL);
  jx_fn_free(f);
  CHECK(sm_rep && sm_sharded && sm_gathered && sm_permuted && sm_mesh2d && sm_mesh2d_y && pm);
}

static void teardown(void) {
  jx_fn_free(sm_rep), jx_fn_free(sm_sharded), jx_fn_free(sm_gathered), jx_fn_free(sm_permuted);
  jx_fn_free(sm_mesh2d), jx_fn_free(sm_mesh2d_y), jx_fn_free(pm);
  jx_mesh_free(mesh), jx_mesh_free(mesh2);
}

static const double TOL = 3e-5;

/* grad of loss over every input, three ways (grad, jit(grad), grad(jit)), against
 * c->out[first ..]. */
static void check_grads(const GoldenCase *c, jx_fn_impl loss, int first) {
  int nin = c->nin;
  jx_fn *l = jx_fn_new(c->name, nin, 1, loss, NULL);
  jx_fn *jl = jx_jit(l);
  int argnums[2] = {0, 1};
  jx_fn *g[3] = {jx_grad(l, nin, argnums), NULL, jx_grad(jl, nin, argnums)};
  g[1] = jx_jit(g[0]);
  const char *mode[3] = {"grad", "jit(grad)", "grad(jit)"};
  jx_array *x[2] = {golden_to_array(&c->in[0]), nin > 1 ? golden_to_array(&c->in[1]) : NULL};
  for (int m = 0; m < 3; m++) {
    jx_array *gr[2] = {NULL, NULL};
    jx_status s = jx_call(g[m], x, gr);
    CHECK_MSG(s == JX_OK, "%s (%s): %s", c->name, mode[m], jx_last_error());
    char ctx[96];
    for (int i = 0; s == JX_OK && i < nin; i++) {
      snprintf(ctx, sizeof ctx, "%s (%s) d/dx%d", c->name, mode[m], i);
      golden_compare(ctx, gr[i], &c->out[first + i], TOL, TOL);
    }
    jx_clear_error();
  }
  for (int m = 0; m < 3; m++) jx_fn_free(g[m]);
  jx_fn_free(jl), jx_fn_free(l);
}

/* f(ins) once, eager and jitted, against c->out[k]. */
static void check_call(const GoldenCase *c, jx_fn *f, int nin, int k) {
  jx_fn *jf = jx_jit(f);
  jx_array *x[2] = {golden_to_array(&c->in[0]), nin > 1 ? golden_to_array(&c->in[1]) : NULL};
  for (int m = 0; m < 2; m++) {
    jx_array *y = NULL;
    jx_status s = jx_call(m ? jf : f, x, &y);
    CHECK_MSG(s == JX_OK, "%s (%s): %s", c->name, m ? "jit" : "eager", jx_last_error());
    char ctx[96];
    snprintf(ctx, sizeof ctx, "%s (%s)", c->name, m ? "jit" : "eager");
    if (s == JX_OK) golden_compare(ctx, y, &c->out[k], TOL, TOL);
    jx_clear_error();
  }
  jx_fn_free(jf);
}

static void test_golden(void) {
  int ncases = 0;
  GoldenCase *cases = golden_load("shard_map.txt", &ncases);
  CHECK(cases != NULL && ncases == 12);
  for (int k = 0; cases && k < ncases; k++) {
    const GoldenCase *c = &cases[k];
    const char *n = c->name;
    jx_scope_begin();
    if (!strcmp(n, "grad_replicated")) {
      check_grads(c, l_rep, 1);
      jx_fn *l = jx_fn_new("l", 2, 1, l_rep, NULL);
      check_call(c, l, 2, 0);
      jx_fn_free(l);
    } else if (!strcmp(n, "grad_sharded")) {
      check_grads(c, l_sharded, 0);
    } else if (!strcmp(n, "jvp_sharded")) {
      jx_array *x = golden_to_array(&c->in[0]), *t = jx_cos(x), *y = NULL, *ty = NULL;
      CHECK_MSG(jx_jvp(sm_sharded, &x, &t, &y, &ty) == JX_OK, "%s: %s", n, jx_last_error());
      golden_compare("jvp_sharded primal", y, &c->out[0], TOL, TOL);
      golden_compare("jvp_sharded tangent", ty, &c->out[1], TOL, TOL);
    } else if (!strcmp(n, "grad_gathered")) {
      check_call(c, sm_gathered, 2, 0);
      check_grads(c, l_gathered, 1);
    } else if (!strcmp(n, "grad_permuted")) {
      check_grads(c, l_permuted, 0);
    } else if (!strcmp(n, "grad_mesh2d")) {
      check_call(c, sm_mesh2d, 2, 0);
      check_grads(c, l_mesh2d, 1);
    } else if (!strcmp(n, "grad_mesh2d_y")) {
      check_call(c, sm_mesh2d_y, 1, 0);
      check_grads(c, l_mesh2d_y, 1);
    } else if (!strcmp(n, "vmap_sharded")) {
      jx_fn *v = jx_vmap(sm_sharded, (int[]){1}, (int[]){0});
      check_call(c, v, 1, 0);
      jx_fn_free(v);
    } else if (!strcmp(n, "vmap_replicated")) {
      jx_fn *v = jx_vmap(sm_rep, (int[]){0, JX_NOT_MAPPED}, (int[]){0});
      check_call(c, v, 2, 0);
      jx_fn_free(v);
    } else if (!strcmp(n, "vmap_grad_sharded")) {
      jx_fn *l = jx_fn_new("l", 1, 1, l_sharded, NULL), *g = jx_grad(l, 0, NULL), *v = jx_vmap(g, NULL, NULL);
      check_call(c, v, 1, 0);
      jx_fn_free(v), jx_fn_free(g), jx_fn_free(l);
    } else if (!strcmp(n, "grad_pmap")) {
      check_grads(c, l_pmap, 0);
    } else if (!strcmp(n, "vmap_pmap")) {
      jx_fn *v = jx_vmap(pm, NULL, NULL);
      check_call(c, v, 1, 0);
      jx_fn_free(v);
    } else {
      CHECK_MSG(false, "unknown case %s", n);
    }
    jx_scope_end(0, NULL);
  }
  golden_free(cases, ncases);
}

/* The gradient of the sharded function equals the unsharded function's. */
static void test_unsharded(void) {
  jx_scope_begin();
  jx_array *x = jx_random_normal(jx_random_key(3), 2, (int64_t[]){8, 5}, JX_FLOAT32);
  jx_array *w = jx_random_uniform(jx_random_key(4), 1, (int64_t[]){5}, JX_FLOAT32, -1, 1);
  jx_fn *a = jx_fn_new("sharded", 2, 1, l_rep, NULL), *b = jx_fn_new("unsharded", 2, 1, l_rep_unsharded, NULL);
  jx_fn *ga = jx_value_and_grad(a, 2, (int[]){0, 1}), *gb = jx_value_and_grad(b, 2, (int[]){0, 1});
  jx_array *ya[3] = {NULL}, *yb[3] = {NULL};
  CHECK_MSG(jx_call(ga, (jx_array *[]){x, w}, ya) == JX_OK, "%s", jx_last_error());
  CHECK_MSG(jx_call(gb, (jx_array *[]){x, w}, yb) == JX_OK, "%s", jx_last_error());
  for (int k = 0; k < 3 && ya[k] && yb[k]; k++) {
    jx_array *d = jx_max(jx_abs(jx_subtract(ya[k], yb[k])), 0, NULL, false);
    CHECK_NEAR(jx_item(d), 0.0, 2e-5);
  }
  jx_fn_free(ga), jx_fn_free(gb), jx_fn_free(a), jx_fn_free(b);
  jx_scope_end(0, NULL);
}

/* jit of a shard_map stages one shard_map equation holding the body's jaxpr. */
static void test_jaxpr(void) {
  jx_scope_begin();
  jx_array *x = jx_zeros(2, (int64_t[]){8, 3}, JX_FLOAT32);
  char *text = jx_make_jaxpr(sm_sharded, &x);
  CHECK(text != NULL);
  if (text) {
    CHECK_MSG(strstr(text, "shard_map[") && strstr(text, "in_specs=(P('x',),)") && strstr(text, "psum") &&
              strstr(text, "mesh=Mesh('x': 4)"), "%s", text);
    free(text);
  }
  jx_scope_end(0, NULL);
}

int main(void) {
  if (jx_config_cpu_devices(4) != JX_OK) return 1;
  setup();
  TEST_RUN(test_golden);
  TEST_RUN(test_unsharded);
  TEST_RUN(test_jaxpr);
  teardown();
  return test_finish();
}
