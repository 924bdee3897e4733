/* test_linear_transpose.c -- jax.linear_transpose (jx_linear_transpose,
 * src/transform/autodiff.c) against JAX goldens (tests/golden/linear_transpose.txt from
 * tools/golden_linear_transpose.py): a table of linear functions (elementwise scaling,
 * sums, matmul by a constant, movement, broadcast + concatenate, an unused input,
 * complex conj/real, integer -> integer, cumsum of a where) transposed at the goldens'
 * primals and applied to their cotangents; nonlinear functions (sin, x * x) refused with
 * JX_ERR_VALUE and mixed float/int with JX_ERR_DTYPE, as JAX refuses them, also inside
 * cond branches, scan bodies (the carries' fixpoint) and jit bodies. Then the
 * transpose agrees with jx_vjp, works under jit and vmap, checks its cotangents, and
 * leaks nothing (TEST_RUN). */
#include <math.h>
#include <stdlib.h>

#include "golden.h"
#include "test.h"

#define OK(x) ((x) ? JX_OK : jx_last_status())

static jx_status scale_sum(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_add(jx_multiply(jx_scalar(2.0), in[0]), in[1]);
  out[1] = jx_sum(in[0], 0, NULL, false);
  return OK(out[0] && out[1]);
}
static jx_status matmul_const(void *ctx, jx_array *const *in, jx_array **out) {
  const float a[8] = {1.0f, -2.0f, 0.5f, 3.0f, 2.0f, 0.0f, -1.0f, 1.5f};
  out[0] = jx_matmul(jx_array_from(a, JX_FLOAT32, 2, (int64_t[]){4, 2}), in[0]);
  return OK(out[0]);
}
static jx_status movement(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *t = jx_reshape(jx_transpose(in[0], NULL), 1, (int64_t[]){6});
  out[0] = jx_multiply(jx_slice(t, 1, (int64_t[]){1}, (int64_t[]){5}, NULL), jx_scalar(3.0));
  return OK(out[0]);
}
static jx_status broadcast_concat(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *b = jx_multiply(jx_expand_dims(in[0], 0), jx_ones(2, (int64_t[]){2, 1}, JX_FLOAT32));
  out[0] = jx_concatenate(2, (jx_array *[]){b, in[1]}, 0);
  return OK(out[0]);
}
static jx_status unused_input(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_negative(in[0]);
  return OK(out[0]);
}
static jx_status complex_scale(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *c = jx_multiply(jx_scalar_complex(1.0, 2.0), jx_conj(in[0]));
  out[0] = jx_add(c, jx_astype(jx_real(in[0]), JX_COMPLEX64));
  return OK(out[0]);
}
static jx_status int_affine(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_add(jx_multiply(jx_scalar_int(3), in[0]), jx_roll(in[0], 1, 0));
  return OK(out[0]);
}
static jx_status cumsum_where(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *even = jx_equal(jx_remainder(jx_arange(0, 4, 1, JX_INT32), jx_scalar_int(2)),
                            jx_scalar_int(0));
  out[0] = jx_cumsum(jx_where(even, in[0], jx_scalar(0.0)), 0);
  return OK(out[0]);
}
static jx_status sin_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sin(in[0]);
  return OK(out[0]);
}
static jx_status square(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_multiply(in[0], in[0]);
  return OK(out[0]);
}
static jx_status mixed(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_multiply(in[0], jx_scalar(2.0));
  return OK(out[0]);
}

static const struct {
  const char *name;
  int nin, nout;
  jx_fn_impl impl;
} fns[] = {
    {"scale_sum", 2, 2, scale_sum},         {"matmul_const", 1, 1, matmul_const},
    {"movement", 1, 1, movement},           {"broadcast_concat", 2, 1, broadcast_concat},
    {"unused_input", 2, 1, unused_input},   {"complex_scale", 1, 1, complex_scale},
    {"int_affine", 1, 1, int_affine},       {"cumsum_where", 1, 1, cumsum_where},
    {"sin", 1, 1, sin_fn},                  {"square", 1, 1, square},
    {"mixed", 2, 1, mixed},
};

static jx_fn *table_fn(const char *name) {
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
    if (!strcmp(fns[i].name, name)) return jx_fn_new(name, fns[i].nin, fns[i].nout, fns[i].impl, NULL);
  return NULL;
}

static void test_goldens(void) {
  int ncases = 0;
  GoldenCase *cases = golden_load("linear_transpose.txt", &ncases);
  CHECK_MSG(cases && ncases == 11, "linear_transpose.txt: %d cases", ncases);
  for (int i = 0; i < ncases; i++) {
    const GoldenCase *c = &cases[i];
    jx_scope_begin();
    jx_fn *f = table_fn(c->fn);
    CHECK_MSG(f != NULL, "%s: no C function", c->fn);
    if (!f) continue;
    int nin = jx_fn_nin(f), nout = jx_fn_nout(f);
    jx_array *in[8] = {NULL}, *out[8] = {NULL};
    for (int k = 0; k < c->nin && k < 8; k++) in[k] = golden_to_array(&c->in[k]);
    jx_fn *ft = jx_linear_transpose(f, in);
    if (c->err) {
      CHECK_MSG(!ft && jx_last_status() == c->err, "%s: want %s, got %s (%s)", c->name,
                jx_status_name(c->err), jx_status_name(jx_last_status()), jx_last_error());
      CHECK_MSG(strstr(jx_last_error(), "jx_linear_transpose") != NULL, "%s: %s", c->name,
                jx_last_error());
    } else {
      CHECK_MSG(ft && jx_fn_nin(ft) == nout && jx_fn_nout(ft) == nin, "%s: %s", c->name,
                jx_last_error());
      CHECK_MSG(ft && jx_call(ft, in + nin, out) == JX_OK, "%s: %s", c->name, jx_last_error());
      for (int k = 0; k < nin; k++) golden_compare(c->name, out[k], &c->out[k], 1e-6, 1e-6);
    }
    jx_clear_error();
    jx_fn_free(ft), jx_fn_free(f);
    jx_scope_end(0, NULL);
  }
  golden_free(cases, ncases);
}

/* a and b hold the same values (within 1e-6 relative). */
static bool close(jx_array *a, jx_array *b) {
  if (!a || !b || jx_size(a) != jx_size(b)) return false;
  double *x = test_read_f64(a), *y = test_read_f64(b);
  bool ok = x && y;
  for (int64_t i = 0; ok && i < jx_size(a); i++) ok = fabs(x[i] - y[i]) <= 1e-6 * (1 + fabs(y[i]));
  free(x), free(y);
  return ok;
}

/* The transpose equals the vjp's pullback (at any primals: f is linear), and composes
 * with jit and vmap (vmap over a batch of cotangents). */
static void test_against_vjp_jit_vmap(void) {
  jx_scope_begin();
  jx_fn *f = jx_fn_new("matmul_const", 1, 1, matmul_const, NULL);
  jx_array *x = jx_reshape(jx_arange(0, 6, 1, JX_FLOAT32), 2, (int64_t[]){2, 3});
  jx_array *ct = jx_reshape(jx_arange(-6, 6, 1, JX_FLOAT32), 2, (int64_t[]){4, 3});
  jx_array *y = NULL, *a = NULL, *b = NULL, *c = NULL, *v = NULL;
  jx_fn *ft = jx_linear_transpose(f, &x), *pb = jx_vjp(f, &x, &y);
  jx_fn *jt = jx_jit(ft), *vt = jx_vmap(ft, (int[]){0}, (int[]){0});
  CHECK(jx_call(ft, &ct, &a) == JX_OK && jx_call(pb, &ct, &b) == JX_OK);
  CHECK(jx_call(jt, &ct, &c) == JX_OK);
  CHECK(close(a, b) && close(a, c));
  jx_array *cts = jx_stack(2, (jx_array *[]){ct, jx_negative(ct)}, 0);
  CHECK(jx_call(vt, &cts, &v) == JX_OK);
  CHECK(v && jx_ndim(v) == 3 && jx_shape(v)[0] == 2 && jx_shape(v)[1] == 2);
  jx_array *neg = jx_take(v, jx_scalar_int(1), 0);
  CHECK(close(jx_negative(a), neg));
  jx_free(neg), jx_free(cts);
  jx_free(x), jx_free(ct), jx_free(y), jx_free(a), jx_free(b), jx_free(c), jx_free(v);
  jx_fn_free(vt), jx_fn_free(jt), jx_fn_free(pb), jx_fn_free(ft), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* ---- loops and branches: their bodies are checked too (JAX fails them while
 * transposing: "Transpose rule ... for 'sin' not implemented") */
static jx_status neg_b(void *c, jx_array *const *x, jx_array **o) { return OK(o[0] = jx_negative(x[0])); }
static jx_status twice_b(void *c, jx_array *const *x, jx_array **o) { return OK(o[0] = jx_multiply(x[0], jx_scalar(2.0))); }
/* cond(true, branch, neg, x): ctx is the true branch */
static jx_status cond_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_fn *n = jx_fn_new("neg", 1, 1, neg_b, NULL);
  jx_status s = jx_lax_cond(jx_scalar_of(1, JX_BOOL), ctx, n, 1, in, out);
  jx_fn_free(n);
  return s;
}
/* scan body (a, b) -> (a, a * b), ys a + b: b depends on the input only from the second
 * trip (the carries' fixpoint) */
static jx_status ab_body(void *c, jx_array *const *x, jx_array **o) {
  o[0] = jx_ref(x[0]), o[1] = jx_multiply(x[0], x[1]), o[2] = jx_add(x[0], x[1]);
  return OK(o[0] && o[1] && o[2]);
}
/* scan body (c, x) -> (c + 2x, c) */
static jx_status lin_body(void *c, jx_array *const *x, jx_array **o) {
  o[0] = jx_add(x[0], jx_multiply(x[1], jx_scalar(2.0))), o[1] = jx_ref(x[0]);
  return OK(o[0] && o[1]);
}
static jx_status scan_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *ys[1], *carry[2];
  jx_status s;
  if (ctx) {
    jx_fn *b = jx_fn_new("ab", 2, 3, ab_body, NULL);
    s = jx_lax_scan(b, 2, (jx_array *[]){in[0], jx_zeros_like(in[0])}, 0, NULL, 3, false, 1, carry, ys);
    jx_fn_free(b);
  } else {
    jx_fn *b = jx_fn_new("lin", 2, 2, lin_body, NULL);
    s = jx_lax_scan(b, 1, (jx_array *[]){jx_zeros(0, NULL, JX_FLOAT32)}, 1, in, -1, false, 1, carry, ys);
    jx_fn_free(b);
  }
  if (s == JX_OK) out[0] = jx_sum(ys[0], 0, NULL, false), out[1] = carry[0];
  return s;
}
static jx_status jit_square(void *ctx, jx_array *const *in, jx_array **out) {
  return jx_call(ctx, in, out);
}
static void test_bodies(void) {
  jx_scope_begin();
  jx_array *x = jx_array_from((float[]){1, 2, 3}, JX_FLOAT32, 1, (int64_t[]){3});
  jx_fn *sinf_ = jx_fn_new("sin", 1, 1, sin_fn, NULL), *tw = jx_fn_new("twice", 1, 1, twice_b, NULL);
  jx_fn *c_sin = jx_fn_new("cond_sin", 1, 1, cond_fn, sinf_), *c_lin = jx_fn_new("cond_twice", 1, 1, cond_fn, tw);
  CHECK(jx_linear_transpose(c_sin, &x) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_linear_transpose: the function is not linear in its inputs: 'sin' applied to "
                            "them in a cond branch");
  /* a linear cond transposes: 2 * ct */
  jx_fn *t = jx_linear_transpose(c_lin, &x);
  jx_array *out[2] = {NULL, NULL};
  CHECK(t && jx_call(t, &x, out) == JX_OK);
  if (out[0]) CHECK_NEAR(jx_item(jx_sum(out[0], 0, NULL, false)), 12.0, 0);
  jx_fn_free(t);
  jx_fn *s_ab = jx_fn_new("scan_ab", 1, 2, scan_fn, ""), *s_lin = jx_fn_new("scan_lin", 1, 2, scan_fn, NULL);
  jx_array *x0 = jx_scalar_of(1, JX_FLOAT32);
  CHECK(jx_linear_transpose(s_ab, &x0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "'mul' applied to them in a scan body (a product of two values depending on the inputs)");
  /* sum(ys) = sum_i sum_{j<i} 2 x_j, carry = sum 2 x: d/dx_j = 2 (3 - 1 - j) + 2 */
  t = jx_linear_transpose(s_lin, &x);
  CHECK(t && jx_call(t, (jx_array *[]){jx_scalar_of(1, JX_FLOAT32), jx_scalar_of(1, JX_FLOAT32)}, out) == JX_OK);
  if (out[0]) {
    float g[3] = {0};
    CHECK(jx_read(out[0], g, sizeof g) == JX_OK && g[0] == 6 && g[1] == 4 && g[2] == 2);
  }
  jx_fn_free(t);
  jx_fn *sq0 = table_fn("square"), *sq = jx_jit(sq0), *j_sq = jx_fn_new("calls_jit_square", 1, 1, jit_square, sq);
  CHECK(jx_linear_transpose(j_sq, &x) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "'mul' applied to them in a jit body");
  jx_fn_free(j_sq), jx_fn_free(sq), jx_fn_free(sq0), jx_fn_free(s_ab), jx_fn_free(s_lin);
  jx_fn_free(c_sin), jx_fn_free(c_lin), jx_fn_free(sinf_), jx_fn_free(tw);
  jx_scope_end(0, NULL);
}

static void test_errors(void) {
  jx_scope_begin();
  jx_fn *f = jx_fn_new("scale_sum", 2, 2, scale_sum, NULL);
  jx_array *x = jx_zeros(1, (int64_t[]){3}, JX_FLOAT32);
  jx_fn *ft = jx_linear_transpose(f, (jx_array *[]){x, x});
  jx_array *out[2] = {NULL, NULL};
  /* JAX: "cotangent type does not match function output" */
  CHECK(jx_call(ft, (jx_array *[]){jx_zeros(1, (int64_t[]){3}, JX_INT32), jx_scalar_of(1, JX_FLOAT32)},
                out) == JX_ERR_DTYPE);
  CHECK(strstr(jx_last_error(), "jx_linear_transpose: cotangent 0") != NULL);
  jx_clear_error();
  CHECK(jx_call(ft, (jx_array *[]){x, jx_zeros(1, (int64_t[]){1}, JX_FLOAT32)}, out) == JX_ERR_SHAPE);
  jx_clear_error();
  CHECK(jx_linear_transpose(f, NULL) == NULL && jx_last_status() == JX_ERR_VALUE);
  jx_clear_error();
  CHECK(jx_linear_transpose(NULL, &x) == NULL && jx_last_status() == JX_ERR_VALUE);
  jx_clear_error();
  jx_fn_free(ft), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

int main(void) {
  TEST_RUN(test_goldens);
  TEST_RUN(test_against_vjp_jit_vmap);
  TEST_RUN(test_errors);
  TEST_RUN(test_bodies);
  return test_finish();
}
