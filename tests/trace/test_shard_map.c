/* test_shard_map.c -- jx_shard_map, jx_pmap and the collectives on 1, 2, 3 and 4 cpu
 * devices against JAX (tests/golden/parallel.txt from tools/golden_parallel.py, run with
 * XLA's forced host device count 4): psum, pmean, pmax, pmin, all_gather, psum_scatter,
 * ppermute, all_to_all (tiled and not), axis_index, each also with jit inside; grad and
 * jvp through each linear collective, vmap inside shard_map, a 2x2 mesh, pmap; outputs
 * fed back as sharded inputs; bad input (unbound axis names, specs naming unknown axes,
 * blocks that do not divide, devices disagreeing on output shapes, a device failing
 * while the others wait in a collective, pmax's missing derivative, more indices than
 * devices, a shard_map's input that does not divide under grad): clear errors, no hang,
 * no leaks. grad of the shard_map itself: test_shard_map_transforms.c. */
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "test.h"

/* One case's function: the collective by name and its params (tools/golden_parallel.py's
 * collective()). */
typedef struct Op {
  char op[32];
  int n, axis, axis2, tiled, shift, partial;
  jx_fn *inner; /* grad / jvp / vmap cases: the collective as a function */
} Op;

static jx_array *apply_collective(const Op *o, jx_array *a) {
  const char *x = "x";
  if (!strcmp(o->op, "psum")) return jx_lax_psum(a, x);
  if (!strcmp(o->op, "pmean")) return jx_lax_pmean(a, x);
  if (!strcmp(o->op, "pmax")) return jx_lax_pmax(a, x);
  if (!strcmp(o->op, "pmin")) return jx_lax_pmin(a, x);
  if (!strcmp(o->op, "all_gather")) return jx_lax_all_gather(a, x, o->axis, o->tiled);
  if (!strcmp(o->op, "psum_scatter")) return jx_lax_psum_scatter(a, x, o->axis, o->tiled);
  if (!strcmp(o->op, "ppermute")) {
    int pairs[64][2], np = 0;
    for (int i = 0; i < o->n - o->partial; i++) pairs[np][0] = i, pairs[np][1] = (i + o->shift) % o->n, np++;
    return jx_lax_ppermute(a, x, np, (const int (*)[2])pairs);
  }
  if (!strcmp(o->op, "all_to_all")) return jx_lax_all_to_all(a, x, o->axis, o->axis2, o->tiled);
  if (!strcmp(o->op, "axis_index"))
    return jx_add(jx_reshape(jx_lax_axis_index(x), 1, (int64_t[]){1}),
                  jx_multiply(jx_scalar_int(0), jx_astype(jx_sum(a, 0, NULL, false), JX_INT32)));
  return NULL;
}

static jx_status f_collective(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = apply_collective(ctx, in[0]);
  return out[0] ? JX_OK : jx_last_status();
}

/* sum(sin(L(b)) * cos(L(b) + 1)) */
static jx_status f_loss(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *l = apply_collective(ctx, in[0]);
  out[0] = jx_sum(jx_multiply(jx_sin(l), jx_cos(jx_add(l, jx_scalar(1.0)))), 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

static jx_status f_sin_l(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sin(apply_collective(ctx, in[0]));
  return out[0] ? JX_OK : jx_last_status();
}

/* Inside each device: grad / jvp / vmap of the collective (o->inner). */
static jx_status f_grad(void *ctx, jx_array *const *in, jx_array **out) {
  Op *o = ctx;
  jx_fn *g = jx_grad(o->inner, 0, NULL);
  jx_status s = jx_call(g, in, out);
  jx_fn_free(g);
  return s;
}

static jx_status f_jvp(void *ctx, jx_array *const *in, jx_array **out) {
  Op *o = ctx;
  jx_array *y = NULL;
  return jx_jvp(o->inner, in, (jx_array *[]){jx_cos(in[0])}, &y, out);
}

static jx_status f_vmap(void *ctx, jx_array *const *in, jx_array **out) {
  Op *o = ctx;
  jx_fn *v = jx_vmap(o->inner, (int[]){0}, (int[]){0});
  jx_status s = jx_call(v, in, out);
  jx_fn_free(v);
  return s;
}

static void op_from_case(const GoldenCase *c, const char *name, Op *o) {
  memset(o, 0, sizeof *o);
  snprintf(o->op, sizeof o->op, "%s", name);
  o->n = (int)golden_param_int(c, "n", 1);
  o->axis = (int)golden_param_int(c, "axis", 0);
  o->axis2 = (int)golden_param_int(c, "axis2", 0);
  o->tiled = (int)golden_param_int(c, "tiled", 0);
  o->shift = (int)golden_param_int(c, "shift", 1);
  o->partial = (int)golden_param_int(c, "partial", 0);
}

static jx_mesh *mesh1(int n) {
  return jx_mesh_new(1, (int64_t[]){n}, (const char *[]){"x"}, NULL);
}

/* Runs shard_map(f) over a 1-d mesh of n devices with P('x') in and out, and compares. */
static void run_1d(const GoldenCase *c, jx_fn *f, int n, const char *what) {
  jx_mesh *m = mesh1(n);
  jx_fn *sm = jx_shard_map(f, m, (const char *[]){"x"}, (const char *[]){"x"});
  jx_array *x = golden_to_array(&c->in[0]);
  jx_array *y = NULL;
  jx_status s = jx_call(sm, &x, &y);
  CHECK_MSG(s == JX_OK, "%s (%s): %s", c->name, what, jx_last_error());
  if (s == JX_OK) {
    char ctx[128];
    snprintf(ctx, sizeof ctx, "%s (%s)", c->name, what);
    golden_compare(ctx, y, &c->out[0], 2e-6, 2e-6);
    CHECK_EQ_INT(jx_num_shards(y), n);
  }
  jx_clear_error();
  jx_fn_free(sm);
  jx_mesh_free(m);
}

static void test_golden(void) {
  int ncases = 0;
  GoldenCase *cases = golden_load("parallel.txt", &ncases);
  CHECK(cases != NULL && ncases > 100);
  for (int k = 0; k < ncases; k++) {
    const GoldenCase *c = &cases[k];
    jx_scope_begin();
    Op o;
    if (!strncmp(c->fn, "grad_", 5) || !strncmp(c->fn, "jvp_", 4) || !strncmp(c->fn, "vmap_", 5)) {
      const char *name = strchr(c->fn, '_') + 1;
      op_from_case(c, name, &o);
      bool grad = c->fn[0] == 'g', jvp = c->fn[0] == 'j';
      o.inner = jx_fn_new("inner", 1, 1, grad ? f_loss : jvp ? f_sin_l : f_collective, &o);
      jx_fn *f = jx_fn_new(c->fn, 1, 1, grad ? f_grad : jvp ? f_jvp : f_vmap, &o);
      run_1d(c, f, o.n, "eager");
      jx_fn_free(f);
      jx_fn_free(o.inner);
    } else if (!strncmp(c->fn, "mesh2d", 6) || !strncmp(c->fn, "pmap", 4)) {
      /* below */
    } else {
      op_from_case(c, c->fn, &o);
      jx_fn *f = jx_fn_new(c->fn, 1, 1, f_collective, &o);
      run_1d(c, f, o.n, "eager");
      jx_fn *jf = jx_jit(f);
      run_1d(c, jf, o.n, "jit inside");
      jx_fn_free(jf);
      jx_fn_free(f);
    }
    jx_scope_end(0, NULL);
  }
  golden_free(cases, ncases);
}

static const char *over_axis;
static jx_status f_mesh2d_psum(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_lax_psum(in[0], over_axis);
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status f_mesh2d_gather(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_lax_all_gather(in[0], over_axis, 0, true);
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status f_mesh2d_both(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *w0 = jx_reshape(jx_slice(in[1], 1, (int64_t[]){0}, (int64_t[]){1}, NULL), 0, NULL);
  jx_array *s = jx_lax_psum(jx_lax_psum(jx_sum(jx_multiply(in[0], w0), 0, NULL, false), "x"), "y");
  out[0] = jx_reshape(s, 1, (int64_t[]){1});
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status f_pmap(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_multiply(in[0], jx_lax_psum(in[0], "i"));
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status f_pmap_axes(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_lax_pmean(jx_multiply(in[0], in[1]), "i");
  return out[0] ? JX_OK : jx_last_status();
}

static void test_golden_mesh_pmap(void) {
  int ncases = 0;
  GoldenCase *cases = golden_load("parallel.txt", &ncases);
  CHECK(cases != NULL);
  jx_mesh *m = jx_mesh_new(2, (int64_t[]){2, 2}, (const char *[]){"x", "y"}, NULL);
  int seen = 0;
  for (int k = 0; cases && k < ncases; k++) {
    const GoldenCase *c = &cases[k];
    jx_scope_begin();
    jx_fn *f = NULL, *g = NULL;
    const char *ins[2] = {"x, y", ""}, *outs[1] = {"x, y"};
    if (!strcmp(c->fn, "mesh2d_psum") || !strcmp(c->fn, "mesh2d_all_gather")) {
      over_axis = golden_param(c, "over");
      f = jx_fn_new(c->fn, 1, 1, c->fn[7] == 'p' ? f_mesh2d_psum : f_mesh2d_gather, NULL);
      g = jx_shard_map(f, m, ins, outs);
    } else if (!strcmp(c->fn, "mesh2d_psum_both")) {
      outs[0] = "";
      f = jx_fn_new(c->fn, 2, 1, f_mesh2d_both, NULL);
      g = jx_shard_map(f, m, ins, outs);
    } else if (!strcmp(c->fn, "pmap")) {
      f = jx_fn_new(c->fn, 1, 1, f_pmap, NULL);
      g = jx_pmap(f, "i", NULL, NULL);
    } else if (!strcmp(c->fn, "pmap_axes")) {
      f = jx_fn_new(c->fn, 2, 1, f_pmap_axes, NULL);
      g = jx_pmap(f, "i", (int[]){1, JX_NOT_MAPPED}, NULL);
    }
    if (g) {
      seen++;
      jx_array *x[2] = {golden_to_array(&c->in[0]), c->nin > 1 ? golden_to_array(&c->in[1]) : NULL};
      jx_array *y = NULL;
      CHECK_MSG(jx_call(g, x, &y) == JX_OK, "%s: %s", c->name, jx_last_error());
      golden_compare(c->name, y, &c->out[0], 2e-6, 2e-6);
      jx_clear_error();
    }
    jx_fn_free(g);
    jx_fn_free(f);
    jx_scope_end(0, NULL);
  }
  CHECK_EQ_INT(seen, 4 + 1 + 4 + 1);
  jx_mesh_free(m);
  golden_free(cases, ncases);
}

/* Outputs of one shard_map go into the next as they are (same mesh, same spec), and a
 * sharded array made by jx_device_put_sharded too. */
static jx_status f_double(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_multiply(in[0], jx_scalar(2.0));
  return out[0] ? JX_OK : jx_last_status();
}
static void test_chain(void) {
  jx_scope_begin();
  jx_mesh *m = mesh1(4);
  jx_fn *f = jx_fn_new("double", 1, 1, f_double, NULL);
  jx_fn *sm = jx_shard_map(f, m, (const char *[]){"x"}, (const char *[]){"x"});
  jx_sharding *s = jx_named_sharding(m, "x");
  jx_array *x = jx_device_put_sharded(jx_arange(0, 8, 1, JX_FLOAT32), s);
  jx_array *y = NULL, *z = NULL;
  CHECK(jx_call(sm, &x, &y) == JX_OK);
  CHECK(jx_call(sm, &y, &z) == JX_OK);
  CHECK(jx_sharding_of(z) != NULL);
  CHECK_STR(jx_sharding_spec(jx_sharding_of(z)), "P('x',)");
  for (int i = 0; i < 4; i++) {
    CHECK_STR(jx_device_of(jx_shard(z, i)), jx_mesh_device(m, i));
    CHECK_NEAR(jx_item(jx_slice(jx_shard(z, i), 1, (int64_t[]){1}, (int64_t[]){2}, NULL)), (2 * i + 1) * 4.0, 0);
  }
  jx_sharding_free(s);
  jx_fn_free(sm), jx_fn_free(f);
  jx_mesh_free(m);
  jx_scope_end(0, NULL);
}

/* psum of complex64 blocks sums both parts; pmax of them is refused (no order). */
static jx_status f_psum(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = ctx ? jx_lax_pmax(in[0], "x") : jx_lax_psum(in[0], "x");
  return out[0] ? JX_OK : jx_last_status();
}
static void test_complex(void) {
  jx_scope_begin();
  jx_mesh *m = mesh1(4);
  float v[16];
  for (int k = 0; k < 8; k++) v[2 * k] = (float)k, v[2 * k + 1] = (float)(-2 * k);
  jx_array *x = jx_array_from(v, JX_COMPLEX64, 1, (int64_t[]){8});
  jx_fn *f = jx_fn_new("psum", 1, 1, f_psum, NULL);
  jx_fn *sm = jx_shard_map(f, m, (const char *[]){"x"}, (const char *[]){"x"});
  jx_array *y = NULL;
  CHECK(jx_call(sm, &x, &y) == JX_OK);
  float got[16];
  CHECK(y && jx_read(y, got, sizeof got) == JX_OK);
  /* block j of 2: elements 2j, 2j+1; psum: 0+2+4+6 = 12 and 1+3+5+7 = 16 (imaginary -2x) */
  for (int k = 0; y && k < 8; k++) {
    CHECK_NEAR(got[2 * k], k % 2 ? 16.0 : 12.0, 0);
    CHECK_NEAR(got[2 * k + 1], k % 2 ? -32.0 : -24.0, 0);
  }
  jx_fn_free(sm), jx_fn_free(f);
  f = jx_fn_new("pmax", 1, 1, f_psum, (void *)1);
  sm = jx_shard_map(f, m, (const char *[]){"x"}, (const char *[]){"x"});
  CHECK(jx_call(sm, &x, &y) == JX_ERR_DTYPE);
  CHECK_ERROR(JX_ERR_DTYPE, "pmax: complex operands are not supported: complex64");
  jx_fn_free(sm), jx_fn_free(f);
  jx_mesh_free(m);
  jx_scope_end(0, NULL);
}

/* Device 1 fails before the psum the others wait in. */
static jx_status f_fail_on_1(void *ctx, jx_array *const *in, jx_array **out) {
  if (jx_item(jx_lax_axis_index("x")) == 1) {
    jx_reshape(in[0], 1, (int64_t[]){7}); /* a shape error */
    return jx_last_status();
  }
  out[0] = jx_lax_psum(in[0], "x");
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status f_shape_by_device(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_item(jx_lax_axis_index("x")) == 2 ? jx_concatenate(2, (jx_array *[]){in[0], in[0]}, 0) : jx_ref(in[0]);
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status f_bad_axis(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_lax_psum(in[0], "batch");
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status f_bad_perm(void *ctx, jx_array *const *in, jx_array **out) {
  static const int twice[2][2] = {{0, 1}, {1, 1}}, range[1][2] = {{0, 4}};
  out[0] = *(int *)ctx ? jx_lax_ppermute(in[0], "x", 1, range) : jx_lax_ppermute(in[0], "x", 2, twice);
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status f_grad_pmax(void *ctx, jx_array *const *in, jx_array **out) {
  Op *o = ctx;
  jx_fn *g = jx_grad(o->inner, 0, NULL);
  jx_status s = jx_call(g, in, out);
  jx_fn_free(g);
  return s;
}
static jx_status f_outer_sum(void *ctx, jx_array *const *in, jx_array **out) {
  jx_fn *sm = ctx;
  jx_array *y = NULL;
  jx_status s = jx_call(sm, in, &y);
  out[0] = s == JX_OK ? jx_sum(y, 0, NULL, false) : NULL;
  return s;
}

static void test_errors(void) {
  jx_scope_begin();
  jx_array *x = jx_arange(0, 8, 1, JX_FLOAT32);
  /* outside a shard_map */
  CHECK(jx_lax_psum(x, "x") == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "unbound axis name: x");
  CHECK(jx_lax_axis_index("i") == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "unbound axis name: i");
  CHECK_EQ_INT(jx_lax_axis_size("i"), -1);
  CHECK_ERROR(JX_ERR_VALUE, "unbound axis name: i");
  jx_mesh *m = mesh1(4);
  jx_fn *dbl = jx_fn_new("double", 1, 1, f_double, NULL);
  /* specs */
  CHECK(jx_shard_map(dbl, m, (const char *[]){"batch"}, (const char *[]){"x"}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "names axis 'batch', which the mesh does not have (its axes: 'x')");
  CHECK(jx_shard_map(dbl, m, NULL, (const char *[]){"x"}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "in_specs is NULL");
  jx_array *y = NULL;
  jx_fn *sm = jx_shard_map(dbl, m, (const char *[]){"x"}, (const char *[]){"x"});
  CHECK(jx_call(sm, (jx_array *[]){jx_arange(0, 6, 1, JX_FLOAT32)}, &y) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_shard_map: input 0: P('x',) splits dimension 0 into 4 shards, but its size 6 is not divisible by 4");
  jx_fn_free(sm);
  /* a device fails; the others, waiting in psum, stop too: the first error is reported */
  jx_fn *bad = jx_fn_new("fail_on_1", 1, 1, f_fail_on_1, NULL);
  sm = jx_shard_map(bad, m, (const char *[]){"x"}, (const char *[]){"x"});
  CHECK(jx_call(sm, &x, &y) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_shard_map(fail_on_1) on device cpu:1: ");
  jx_fn_free(sm), jx_fn_free(bad);
  /* devices disagree on an output's shape */
  bad = jx_fn_new("shape_by_device", 1, 1, f_shape_by_device, NULL);
  sm = jx_shard_map(bad, m, (const char *[]){"x"}, (const char *[]){"x"});
  CHECK(jx_call(sm, &x, &y) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "output 0 is float32[2] on device cpu but float32[4] on device cpu:2");
  jx_fn_free(sm), jx_fn_free(bad);
  /* an axis the mesh does not have */
  bad = jx_fn_new("bad_axis", 1, 1, f_bad_axis, NULL);
  sm = jx_shard_map(bad, m, (const char *[]){"x"}, (const char *[]){"x"});
  CHECK(jx_call(sm, &x, &y) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "unbound axis name: batch (the mesh's axes: 'x')");
  jx_fn_free(sm), jx_fn_free(bad);
  /* pmax has no derivative (as in JAX) */
  Op o = {.op = "pmax", .n = 4};
  o.inner = jx_fn_new("loss_pmax", 1, 1, f_loss, &o);
  bad = jx_fn_new("grad_pmax", 1, 1, f_grad_pmax, &o);
  sm = jx_shard_map(bad, m, (const char *[]){"x"}, (const char *[]){"x"});
  CHECK(jx_call(sm, &x, &y) == JX_ERR_UNSUPPORTED);
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "Differentiation rule for 'pmax' not implemented");
  jx_fn_free(sm), jx_fn_free(bad), jx_fn_free(o.inner);
  /* collectives' own shape rules */
  Op ps = {.op = "psum_scatter", .n = 4, .tiled = 1};
  bad = jx_fn_new("psum_scatter", 1, 1, f_collective, &ps);
  sm = jx_shard_map(bad, m, (const char *[]){"x"}, (const char *[]){"x"});
  CHECK(jx_call(sm, (jx_array *[]){jx_arange(0, 12, 1, JX_FLOAT32)}, &y) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "psum_scatter: the scatter dimension is not divisible by the axis size");
  jx_fn_free(sm), jx_fn_free(bad);
  for (int which = 0; which < 2; which++) {
    bad = jx_fn_new("bad_perm", 1, 1, f_bad_perm, &which);
    sm = jx_shard_map(bad, m, (const char *[]){"x"}, (const char *[]){"x"});
    CHECK(jx_call(sm, &x, &y) == JX_ERR_VALUE);
    CHECK_ERROR(JX_ERR_VALUE, which ? "ppermute: pair (0, 4) is out of range for axis 'x' of size 4"
                                    : "ppermute: perm sends from device 1 or to device 1 twice");
    jx_fn_free(sm), jx_fn_free(bad);
  }
  /* grad of a shard_map itself (test_shard_map_transforms.c has the rest): d/dx sum(2x)
   * is 2; an input that does not divide is refused under the transformation too */
  sm = jx_shard_map(dbl, m, (const char *[]){"x"}, (const char *[]){"x"});
  jx_fn *outer = jx_fn_new("outer", 1, 1, f_outer_sum, sm);
  jx_fn *g = jx_grad(outer, 0, NULL);
  CHECK(jx_call(g, &x, &y) == JX_OK);
  CHECK_NEAR(jx_item(jx_sum(y, 0, NULL, false)), 16.0, 0);
  CHECK(jx_call(g, (jx_array *[]){jx_zeros(1, (int64_t[]){6}, JX_FLOAT32)}, &y) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "divisible");
  jx_fn_free(g), jx_fn_free(outer), jx_fn_free(sm);
  /* pmap: more indices than devices, sizes that differ */
  jx_fn *pm = jx_pmap(dbl, "i", NULL, NULL);
  CHECK(jx_call(pm, (jx_array *[]){jx_zeros(2, (int64_t[]){5, 2}, JX_FLOAT32)}, &y) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "the mapped axis has size 5, but the process has 4 cpu devices");
  jx_fn_free(pm);
  jx_fn_free(dbl);
  jx_mesh_free(m);
  jx_scope_end(0, NULL);
}

int main(void) {
  if (jx_config_cpu_devices(4) != JX_OK) return 1;
  TEST_RUN(test_golden);
  TEST_RUN(test_golden_mesh_pmap);
  TEST_RUN(test_chain);
  TEST_RUN(test_complex);
  TEST_RUN(test_errors);
  return test_finish();
}
