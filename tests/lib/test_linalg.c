/* test_linalg.c -- linear algebra (src/lib/linalg.c on the LAPACK routines): JAX goldens
 * (tools/golden_linalg.py: values, edge cases, errors, float64 and complex128
 * gradients, complex64/complex128 inputs, eig/eigvals, tensorsolve/tensorinv), factorization identities (real
 * and complex), gradients by central differences at first and second order, vmap
 * against a loop, jit against eager, and bad-input errors. */
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "test.h"

static GoldenCase *cases;
static int ncases;

static int iparam(const GoldenCase *c, const char *k) { return (int)golden_param_int(c, k, 0); }

/* Runs the function a golden case names on in[]; out[] gets its results; returns their
 * count (0 on failure, -1 for an unknown function). */
static int call_case(const GoldenCase *c, jx_array *const *in, jx_array **out);

/* fn + "_ri": fn's results with each complex one split into its real and imaginary
 * parts (real-valued losses of complex functions for the gradient cases). */
static int call_ri(const GoldenCase *c, jx_array *const *in, jx_array **out) {
  GoldenCase base = *c;
  char name[64];
  snprintf(name, sizeof name, "%.*s", (int)strlen(c->fn) - 3, c->fn);
  base.fn = name;
  jx_array *r[4] = {NULL};
  int n = call_case(&base, in, r), k = 0;
  for (int i = 0; i < n; i++) {
    if (jx_dtype_of(r[i]) == JX_COMPLEX64 || jx_dtype_of(r[i]) == JX_COMPLEX128) {
      out[k++] = jx_real(r[i]), out[k++] = jx_imag(r[i]);
      jx_free(r[i]);
    } else {
      out[k++] = r[i];
    }
  }
  return n > 0 ? k : n;
}

static jx_array *abs2(jx_array *x) {
  jx_array *a = jx_abs(x);
  return jx_multiply(a, a);
}

static jx_status det_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  return (out[0] = jx_linalg_det(in[0])) ? JX_OK : jx_last_status();
}
static jx_status logdet_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_array *s = NULL;
  jx_status st = jx_linalg_slogdet(in[0], &s, &out[0]);
  jx_free(s);
  return st;
}

static int call_case(const GoldenCase *c, jx_array *const *in, jx_array **out) {
  const char *fn = c->fn;
  size_t len = strlen(fn);
  if (len > 3 && !strcmp(fn + len - 3, "_ri")) return call_ri(c, in, out);
  if (!strcmp(fn, "linalg_cholesky")) return (out[0] = jx_linalg_cholesky(in[0], iparam(c, "upper"))) ? 1 : 0;
  if (!strcmp(fn, "scipy_cholesky")) return (out[0] = jx_scipy_linalg_cholesky(in[0], iparam(c, "lower"))) ? 1 : 0;
  if (!strcmp(fn, "lax_cholesky"))
    return (out[0] = jx_lax_linalg_cholesky(in[0], iparam(c, "symmetrize"))) ? 1 : 0;
  if (!strcmp(fn, "lax_triangular_solve"))
    return (out[0] = jx_lax_linalg_triangular_solve(in[0], in[1], iparam(c, "left"), iparam(c, "lower"),
                                                    iparam(c, "trans"), iparam(c, "conj"), iparam(c, "unit"))) ? 1 : 0;
  if (!strcmp(fn, "scipy_solve_triangular"))
    return (out[0] = jx_scipy_linalg_solve_triangular(in[0], in[1], iparam(c, "trans"), iparam(c, "lower"),
                                                      iparam(c, "unit"))) ? 1 : 0;
  if (!strcmp(fn, "lax_lu")) return jx_lax_linalg_lu(in[0], out) == JX_OK ? 3 : 0;
  if (!strcmp(fn, "lax_lu_lu")) {
    jx_array *r[3];
    if (jx_lax_linalg_lu(in[0], r) != JX_OK) return 0;
    out[0] = r[0];
    jx_free(r[1]), jx_free(r[2]);
    return 1;
  }
  if (!strcmp(fn, "scipy_lu")) {
    bool pl = iparam(c, "permute_l");
    return jx_scipy_linalg_lu(in[0], pl, out) == JX_OK ? (pl ? 2 : 3) : 0;
  }
  if (!strcmp(fn, "scipy_lu_solve")) {
    jx_array *lu, *piv;
    if (jx_scipy_linalg_lu_factor(in[0], &lu, &piv) != JX_OK) return 0;
    out[0] = jx_scipy_linalg_lu_solve(lu, piv, in[1], iparam(c, "trans"));
    jx_free(lu), jx_free(piv);
    return out[0] ? 1 : 0;
  }
  if (!strcmp(fn, "scipy_cho_solve")) {
    bool low = iparam(c, "lower");
    jx_array *f = jx_scipy_linalg_cho_factor(in[0], low);
    out[0] = jx_scipy_linalg_cho_solve(f, low, in[1]);
    jx_free(f);
    return out[0] ? 1 : 0;
  }
  if (!strcmp(fn, "linalg_solve")) return (out[0] = jx_linalg_solve(in[0], in[1])) ? 1 : 0;
  if (!strcmp(fn, "linalg_inv")) return (out[0] = jx_linalg_inv(in[0])) ? 1 : 0;
  if (!strcmp(fn, "linalg_det")) return (out[0] = jx_linalg_det(in[0])) ? 1 : 0;
  if (!strcmp(fn, "linalg_slogdet")) return jx_linalg_slogdet(in[0], &out[0], &out[1]) == JX_OK ? 2 : 0;
  if (!strcmp(fn, "linalg_det_grad") || !strcmp(fn, "linalg_det_hessian") || !strcmp(fn, "linalg_logdet_hessian")) {
    /* grad / hessian of det or log|det|, under jit (jit=1) or vmap over axis 0 (vmap=1) */
    jx_fn *f = jx_fn_new(fn, 1, 1, strcmp(fn, "linalg_logdet_hessian") ? det_fn : logdet_fn, NULL);
    jx_fn *d = strcmp(fn, "linalg_det_grad") ? jx_hessian(f, 1, NULL) : jx_grad(f, 1, NULL), *g = d;
    if (iparam(c, "jit")) g = jx_jit(d);
    if (iparam(c, "vmap")) g = jx_vmap(d, (int[]){0}, (int[]){0});
    jx_status s = jx_call(g, in, out);
    if (g != d) jx_fn_free(g);
    jx_fn_free(d), jx_fn_free(f);
    return s == JX_OK ? 1 : 0;
  }
  if (!strcmp(fn, "linalg_det_jvp")) { /* (det, its tangent) */
    jx_fn *f = jx_fn_new(fn, 1, 1, det_fn, NULL);
    jx_status s = jx_jvp(f, &in[0], &in[1], &out[0], &out[1]);
    jx_fn_free(f);
    return s == JX_OK ? 2 : 0;
  }
  if (!strcmp(fn, "linalg_slogdet_logdet")) {
    jx_array *s;
    if (jx_linalg_slogdet(in[0], &s, &out[0]) != JX_OK) return 0;
    jx_free(s);
    return 1;
  }
  if (!strcmp(fn, "linalg_qr")) {
    const char *mode = golden_param(c, "mode");
    return jx_linalg_qr(in[0], mode, out) == JX_OK ? (!strcmp(mode, "r") ? 1 : 2) : 0;
  }
  if (!strcmp(fn, "linalg_svdvals")) return (out[0] = jx_linalg_svdvals(in[0])) ? 1 : 0;
  if (!strcmp(fn, "linalg_eigvalsh")) return (out[0] = jx_linalg_eigvalsh(in[0], golden_param(c, "uplo"))) ? 1 : 0;
  if (!strcmp(fn, "linalg_eigh_w") || !strcmp(fn, "linalg_eigh_sq")) {
    jx_array *r[2];
    bool sym = golden_param_int(c, "sym", 1);
    if (jx_linalg_eigh(in[0], golden_param(c, "uplo"), sym, r) != JX_OK) return 0;
    out[0] = r[0];
    if (!strcmp(fn, "linalg_eigh_w")) return jx_free(r[1]), 1;
    out[1] = jx_multiply(r[1], r[1]);
    jx_free(r[1]);
    return out[1] ? 2 : 0;
  }
  if (!strcmp(fn, "lax_eigh_sq")) { /* (w, |v|^2) of lax.linalg.eigh */
    jx_array *r[2];
    if (jx_lax_linalg_eigh(in[0], iparam(c, "lower"), iparam(c, "sym"), iparam(c, "sort"), r) != JX_OK) return 0;
    out[0] = r[1], out[1] = abs2(r[0]);
    jx_free(r[0]);
    return out[1] ? 2 : 0;
  }
  if (!strcmp(fn, "linalg_eigh_abs2")) {
    jx_array *r[2];
    if (jx_linalg_eigh(in[0], NULL, true, r) != JX_OK) return 0;
    out[0] = r[0], out[1] = abs2(r[1]);
    jx_free(r[1]);
    return out[1] ? 2 : 0;
  }
  if (!strcmp(fn, "linalg_svd_abs2")) {
    jx_array *r[3];
    if (jx_linalg_svd(in[0], false, true, r) != JX_OK) return 0;
    out[0] = abs2(r[0]), out[1] = r[1], out[2] = abs2(r[2]);
    jx_free(r[0]), jx_free(r[2]);
    return out[0] && out[2] ? 3 : 0;
  }
  if (!strcmp(fn, "linalg_eigvals_sorted")) {
    jx_array *w = jx_linalg_eigvals(in[0]);
    out[0] = w ? jx_sort(w, -1, false) : NULL;
    jx_free(w);
    return out[0] ? 1 : 0;
  }
  if (!strcmp(fn, "linalg_eigvals_sym")) { /* re/im of sum(w^2) and sum(w^3) */
    jx_array *w = jx_linalg_eigvals(in[0]);
    if (!w) return 0;
    jx_array *w2 = jx_multiply(w, w);
    jx_array *s2 = jx_sum(w2, 0, NULL, false), *s3 = jx_sum(jx_multiply(w2, w), 0, NULL, false);
    out[0] = jx_real(s2), out[1] = jx_imag(s2), out[2] = jx_real(s3), out[3] = jx_imag(s3);
    jx_free(w), jx_free(w2), jx_free(s2), jx_free(s3);
    return out[3] ? 4 : 0;
  }
  if (!strcmp(fn, "linalg_svd_sq")) {
    jx_array *r[3];
    if (jx_linalg_svd(in[0], false, true, r) != JX_OK) return 0;
    out[0] = jx_multiply(r[0], r[0]), out[1] = r[1], out[2] = jx_multiply(r[2], r[2]);
    jx_free(r[0]), jx_free(r[2]);
    return out[0] && out[2] ? 3 : 0;
  }
  const char *ordp = golden_param(c, "ord"), *pp = golden_param(c, "p");
  const char *ord = ordp && strcmp(ordp, "none") ? ordp : NULL, *pcond = pp && strcmp(pp, "none") ? pp : NULL;
  if (!strcmp(fn, "linalg_norm")) {
    const char *ax = golden_param(c, "axes");
    int axes[2], na = 0;
    if (ax) na = sscanf(ax, "%d,%d", &axes[0], &axes[1]);
    return (out[0] = jx_linalg_norm(in[0], ord, na, ax ? axes : NULL, iparam(c, "keepdims"))) ? 1 : 0;
  }
  if (!strcmp(fn, "linalg_cond")) return (out[0] = jx_linalg_cond(in[0], pcond)) ? 1 : 0;
  if (!strcmp(fn, "linalg_pinv")) return (out[0] = jx_linalg_pinv(in[0], NAN)) ? 1 : 0;
  if (!strcmp(fn, "linalg_matrix_rank")) return (out[0] = jx_linalg_matrix_rank(in[0], NAN)) ? 1 : 0;
  if (!strcmp(fn, "linalg_lstsq")) {
    const char *rcond = golden_param(c, "rcond"); /* absent: None */
    return jx_linalg_lstsq(in[0], in[1], rcond ? atof(rcond) : NAN, out) == JX_OK ? 4 : 0;
  }
  if (!strcmp(fn, "linalg_matrix_power")) return (out[0] = jx_linalg_matrix_power(in[0], iparam(c, "n"))) ? 1 : 0;
  if (!strcmp(fn, "linalg_multi_dot")) return (out[0] = jx_linalg_multi_dot(c->nin, in)) ? 1 : 0;
  if (!strcmp(fn, "linalg_cross")) return (out[0] = jx_linalg_cross(in[0], in[1], iparam(c, "axis"))) ? 1 : 0;
  if (!strcmp(fn, "linalg_vecdot")) return (out[0] = jx_linalg_vecdot(in[0], in[1], iparam(c, "axis"))) ? 1 : 0;
  if (!strcmp(fn, "kron")) return (out[0] = jx_kron(in[0], in[1])) ? 1 : 0;
  if (!strcmp(fn, "diagonal")) return (out[0] = jx_diagonal(in[0], iparam(c, "offset"), 1, 2)) ? 1 : 0;
  if (!strcmp(fn, "trace"))
    return (out[0] = jx_trace(in[0], iparam(c, "offset"), (int)golden_param_int(c, "axis1", 0),
                              (int)golden_param_int(c, "axis2", 1))) ? 1 : 0;
  if (!strcmp(fn, "lax_tridiagonal_solve"))
    return (out[0] = jx_lax_linalg_tridiagonal_solve(in[0], in[1], in[2], in[3])) ? 1 : 0;
  if (!strcmp(fn, "scipy_expm"))
    return (out[0] = jx_scipy_linalg_expm(in[0], iparam(c, "upper"), iparam(c, "maxsq"))) ? 1 : 0;
  if (!strcmp(fn, "linalg_tensorsolve")) { /* axes=none or a comma list */
    int axes[JX_MAX_NDIM], naxes = 0;
    const char *p = golden_param(c, "axes");
    for (char *end; p && strcmp(p, "none") && *p && naxes < JX_MAX_NDIM; p = *end ? end + 1 : end)
      axes[naxes++] = (int)strtol(p, &end, 10);
    return (out[0] = jx_linalg_tensorsolve(in[0], in[1], naxes, naxes ? axes : NULL)) ? 1 : 0;
  }
  if (!strcmp(fn, "linalg_tensorinv")) return (out[0] = jx_linalg_tensorinv(in[0], iparam(c, "ind"))) ? 1 : 0;
  return -1;
}

/* Number of array arguments of a golden function (the rest of a gradient case's
 * inputs are the weights). */
static int nargs_of(const char *fn) {
  if (!strncmp(fn, "lax_tridiagonal_solve", 21)) return 4;
  return !strncmp(fn, "lax_triangular_solve", 20) || !strncmp(fn, "linalg_solve", 12) ||
                 !strcmp(fn, "linalg_tensorsolve")
             ? 2
             : 1;
}

/* sum_i sum(f(x)_i * w_i) for a gradient case: in = args..., weights... */
typedef struct GradCtx {
  const GoldenCase *c;
  int nargs;
  jx_array **w;
  int nw;
} GradCtx;

static jx_status weighted_loss(void *ctx, jx_array *const *in, jx_array **out) {
  GradCtx *g = ctx;
  jx_array *r[4] = {NULL};
  int n = call_case(g->c, in, r);
  if (n <= 0) return jx_last_status() ? jx_last_status() : JX_ERR_INTERNAL;
  jx_array *acc = jx_scalar(0);
  for (int i = 0, k = 0; i < n && k < g->nw; i++) {
    if (jx_dtype_of(r[i]) != JX_FLOAT64) continue;
    acc = jx_add(acc, jx_sum(jx_multiply(r[i], g->w[k++]), 0, NULL, false));
  }
  out[0] = acc;
  return acc ? JX_OK : jx_last_status();
}

static void run_grad_case(const GoldenCase *c, jx_array **in, const char *ctx) {
  GradCtx g = {c, nargs_of(c->fn), in + nargs_of(c->fn), c->nin - nargs_of(c->fn)};
  jx_fn *f = jx_fn_new(c->name, g.nargs, 1, weighted_loss, &g);
  int argnums[4] = {0, 1, 2, 3};
  jx_fn *df = jx_grad(f, g.nargs, argnums);
  jx_array *grads[4] = {NULL, NULL, NULL, NULL};
  jx_status s = jx_call(df, in, grads);
  CHECK_MSG(s == JX_OK, "%s: grad failed: %s", ctx, jx_last_error());
  for (int i = 0; s == JX_OK && i < g.nargs && i < c->nout; i++) golden_compare(ctx, grads[i], &c->out[i], 1e-8, 1e-9);
  for (int i = 0; i < 4; i++) jx_free(grads[i]);
  jx_fn_free(df), jx_fn_free(f);
}

static void test_golden(void) {
  int run = 0;
  CHECK_MSG(cases != NULL, "cannot load linalg.txt (run tools/golden_linalg.py)");
  for (int i = 0; cases && i < ncases; i++) {
    if (!test_shard_mine()) continue;
    const GoldenCase *c = &cases[i];
    bool x64 = golden_param_int(c, "x64", 0);
    jx_config_enable_x64(x64);
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s (line %d)", c->name, c->line);
    jx_scope_begin();
    jx_array *in[8] = {NULL}, *out[8] = {NULL};
    for (int k = 0; k < c->nin && k < 8; k++) in[k] = golden_to_array(&c->in[k]);
    if (!strncmp(c->name, "grad_", 5)) {
      run_grad_case(c, in, ctx);
      run++;
    } else {
      int n = call_case(c, in, out);
      CHECK_MSG(n != -1, "%s: unknown function %s", ctx, c->fn);
      run++;
      if (c->err) {
        CHECK_MSG(n == 0 && jx_last_status() == c->err, "%s: expected %s, got %s (%s)", ctx,
                  jx_status_name(c->err), jx_status_name(jx_last_status()), jx_last_error());
        jx_clear_error();
      } else {
        CHECK_MSG(n == c->nout, "%s: %d results for %d expected (%s)", ctx, n, c->nout, jx_last_error());
        bool f64 = c->out[0].dtype == JX_FLOAT64 || c->out[0].dtype == JX_COMPLEX128;
        for (int o = 0; n == c->nout && o < n; o++)
          golden_compare(ctx, out[o], &c->out[o], f64 ? 1e-10 : 2e-5, f64 ? 1e-11 : 2e-5);
      }
    }
    jx_clear_error();
    jx_scope_end(0, NULL);
    jx_config_enable_x64(false);
  }
  CHECK_MSG(run >= 260 || test_sharded(), "only %d linalg cases ran", run);
  printf("%d golden linalg cases\n", run);
}

/* ------------------------------------------------------------ helpers */

static uint64_t rng = 0x1234567887654321ull;
static double uniform(double lo, double hi) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (hi - lo) * (double)(rng >> 11) / 9007199254740992.0;
}

/* A random array of the dtype (x64 must be on for float64). */
static jx_array *random_array(jx_dtype d, int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
  for (int64_t i = 0; i < n; i++) v[i] = uniform(-1, 1);
  jx_array *a = jx_astype(jx_array_from(v, JX_FLOAT64, ndim, shape), d);
  free(v);
  return a;
}

/* Symmetric positive definite: a a^T + n I. */
static jx_array *random_spd(jx_dtype d, int ndim, const int64_t *shape) {
  jx_array *a = random_array(d, ndim, shape);
  int64_t n = shape[ndim - 1];
  return jx_add(jx_matmul(a, jx_swapaxes(a, -1, -2)), jx_multiply(jx_eye(n, d), jx_scalar((double)n)));
}

static double max_abs_diff(jx_array *a, jx_array *b) {
  jx_array *d = jx_max(jx_abs(jx_subtract(jx_astype(a, JX_FLOAT64), jx_astype(b, JX_FLOAT64))), 0, NULL, false);
  return d ? jx_item(d) : INFINITY;
}

/* ------------------------------------------------------------ identities */

static void test_identities(void) {
  jx_scope_begin();
  int64_t s[3] = {3, 6, 6};
  jx_array *a = random_spd(JX_FLOAT32, 3, s);
  jx_array *l = jx_linalg_cholesky(a, false);
  CHECK(max_abs_diff(jx_matmul(l, jx_swapaxes(l, -1, -2)), a) < 1e-4);
  CHECK(max_abs_diff(l, jx_tril(l, 0)) == 0);
  /* P A = L U, square and rectangular */
  int64_t shapes[3][3] = {{2, 5, 5}, {2, 4, 7}, {2, 7, 4}};
  for (int i = 0; i < 3; i++) {
    jx_array *x = random_array(JX_FLOAT32, 3, shapes[i]), *p[3];
    CHECK(jx_scipy_linalg_lu(jx_take(x, jx_zeros(0, NULL, JX_INT32), 0), false, p) == JX_OK);
    CHECK(max_abs_diff(jx_matmul(p[0], jx_matmul(p[1], p[2])), jx_take(x, jx_zeros(0, NULL, JX_INT32), 0)) < 1e-5);
    jx_array *f[3];
    CHECK(jx_lax_linalg_lu(x, f) == JX_OK);
    CHECK_EQ_INT(jx_dtype_of(f[1]), JX_INT32);
    CHECK_EQ_INT(jx_dtype_of(f[2]), JX_INT32);
  }
  /* Q R = A with orthonormal Q; A v = v diag(w); U diag(s) V^T = A (every shape kind) */
  int64_t qshapes[4][3] = {{3, 5, 5}, {3, 6, 4}, {3, 4, 6}, {3, 1, 1}};
  for (int i = 0; i < 4; i++) {
    jx_array *x = random_array(JX_FLOAT32, 3, qshapes[i]), *q[2], *u[3];
    int64_t k = qshapes[i][1] < qshapes[i][2] ? qshapes[i][1] : qshapes[i][2];
    for (int full = 0; full < 2; full++) {
      CHECK(jx_linalg_qr(x, full ? "complete" : "reduced", q) == JX_OK);
      int64_t kq = jx_shape(q[0])[2];
      CHECK(kq == (full ? qshapes[i][1] : k));
      CHECK(max_abs_diff(jx_matmul(q[0], q[1]), x) < 1e-5);
      CHECK(max_abs_diff(jx_matmul(jx_swapaxes(q[0], -1, -2), q[0]), jx_eye(kq, JX_FLOAT32)) < 1e-5);
      CHECK(max_abs_diff(q[1], jx_triu(q[1], 0)) == 0);
      CHECK(jx_linalg_svd(x, full, true, u) == JX_OK);
      jx_array *uk = jx_slice(u[0], 3, (int64_t[]){0, 0, 0}, (int64_t[]){JX_SLICE_END, JX_SLICE_END, k}, NULL);
      jx_array *vk = jx_slice(u[2], 2, (int64_t[]){0, 0}, (int64_t[]){JX_SLICE_END, k}, NULL);
      CHECK(max_abs_diff(jx_matmul(jx_multiply(uk, jx_expand_dims(u[1], -2)), vk), x) < 1e-5);
      CHECK(max_abs_diff(jx_matmul(jx_swapaxes(u[0], -1, -2), u[0]), jx_eye(jx_shape(u[0])[2], JX_FLOAT32)) < 1e-5);
      CHECK(max_abs_diff(jx_matmul(u[2], jx_swapaxes(u[2], -1, -2)), jx_eye(jx_shape(u[2])[1], JX_FLOAT32)) < 1e-5);
    }
  }
  jx_array *sym = random_spd(JX_FLOAT32, 3, (int64_t[]){3, 5, 5}), *e[2];
  CHECK(jx_linalg_eigh(sym, NULL, true, e) == JX_OK);
  CHECK(max_abs_diff(jx_matmul(sym, e[1]), jx_multiply(e[1], jx_expand_dims(e[0], -2))) < 1e-4);
  CHECK(max_abs_diff(jx_matmul(jx_swapaxes(e[1], -1, -2), e[1]), jx_eye(5, JX_FLOAT32)) < 1e-5);
  /* a batch with one bad matrix: only its entry is NaN */
  jx_array *bad = jx_concatenate(2, (jx_array *[]){sym, jx_full(3, (int64_t[]){1, 5, 5}, NAN, JX_FLOAT32)}, 0);
  CHECK(jx_linalg_eigh(bad, NULL, true, e) == JX_OK);
  CHECK(jx_item(jx_sum(jx_astype(jx_isnan(e[0]), JX_INT32), 0, NULL, false)) == 5);
  CHECK(jx_item(jx_sum(jx_astype(jx_isnan(jx_linalg_svdvals(bad)), JX_INT32), 0, NULL, false)) == 5);
  CHECK(jx_item(jx_sum(jx_astype(jx_isnan(jx_linalg_cholesky(bad, false)), JX_INT32), 0, NULL, false)) == 15);

  /* solve, inv, det agree with each other */
  jx_array *m = jx_add(random_array(JX_FLOAT32, 3, (int64_t[]){4, 5, 5}), jx_multiply(jx_eye(5, JX_FLOAT32), jx_scalar(3)));
  jx_array *inv = jx_linalg_inv(m);
  CHECK(max_abs_diff(jx_matmul(m, inv), jx_broadcast_to(jx_eye(5, JX_FLOAT32), 3, (int64_t[]){4, 5, 5})) < 1e-5);
  jx_array *det_inv = jx_linalg_det(inv), *det = jx_linalg_det(m);
  CHECK(max_abs_diff(jx_multiply(det, det_inv), jx_ones(1, (int64_t[]){4}, JX_FLOAT32)) < 1e-4);
  jx_scope_end(0, NULL);
}

/* A random complex array (real and imaginary parts in [-1, 1)). */
static jx_array *random_complex(jx_dtype d, int ndim, const int64_t *shape) {
  jx_dtype r = d == JX_COMPLEX128 ? JX_FLOAT64 : JX_FLOAT32;
  return jx_complex(random_array(r, ndim, shape), random_array(r, ndim, shape));
}

/* The conjugate transpose of the last two dims. */
static jx_array *ctrans(jx_array *x) { return jx_conj(jx_swapaxes(x, -1, -2)); }

/* Complex factorizations and eig: Q R = A with Q^H Q = I, L L^H = A, V diag(w) V^H = A
 * (Hermitian), U diag(s) V^H = A, A vr = vr diag(w) and vl^H A = diag(w) vl^H (geev,
 * real and complex input), a NaN batch entry of eig, and eig's errors. */
static void test_complex_identities(void) {
  jx_scope_begin();
  jx_dtype dts[2] = {JX_COMPLEX64, JX_COMPLEX128};
  for (int t = 0; t < 2; t++) {
    jx_dtype d = dts[t];
    jx_config_enable_x64(d == JX_COMPLEX128);
    double tol = d == JX_COMPLEX128 ? 1e-12 : 2e-5;
    jx_array *x = random_complex(d, 3, (int64_t[]){2, 5, 4}), *q[2], *u[3], *e[2];
    CHECK(jx_linalg_qr(x, NULL, q) == JX_OK);
    CHECK_MSG(max_abs_diff(jx_abs(jx_subtract(jx_matmul(q[0], q[1]), x)), jx_zeros(0, NULL, JX_FLOAT32)) < tol * 4,
              "complex qr %d", t);
    jx_array *qhq = jx_matmul(ctrans(q[0]), q[0]);
    CHECK(max_abs_diff(jx_abs(jx_subtract(qhq, jx_eye(4, d))), jx_zeros(0, NULL, JX_FLOAT32)) < tol * 4);
    CHECK(jx_linalg_svd(x, false, true, u) == JX_OK);
    CHECK_EQ_INT(jx_dtype_of(u[1]), d == JX_COMPLEX128 ? JX_FLOAT64 : JX_FLOAT32);
    jx_array *usv = jx_matmul(jx_multiply(u[0], jx_astype(jx_expand_dims(u[1], -2), d)), u[2]);
    CHECK_MSG(max_abs_diff(jx_abs(jx_subtract(usv, x)), jx_zeros(0, NULL, JX_FLOAT32)) < tol * 8, "complex svd %d", t);
    jx_array *h = jx_add(jx_matmul(x, ctrans(x)), jx_multiply(jx_eye(5, d), jx_scalar(5))); /* Hermitian PD */
    jx_array *l = jx_linalg_cholesky(h, false);
    CHECK_MSG(max_abs_diff(jx_abs(jx_subtract(jx_matmul(l, ctrans(l)), h)), jx_zeros(0, NULL, JX_FLOAT32)) < tol * 40,
              "complex cholesky %d", t);
    CHECK(jx_linalg_eigh(h, NULL, true, e) == JX_OK);
    CHECK_EQ_INT(jx_dtype_of(e[0]), d == JX_COMPLEX128 ? JX_FLOAT64 : JX_FLOAT32);
    jx_array *av = jx_matmul(h, e[1]), *vw = jx_multiply(e[1], jx_astype(jx_expand_dims(e[0], -2), d));
    CHECK_MSG(max_abs_diff(jx_abs(jx_subtract(av, vw)), jx_zeros(0, NULL, JX_FLOAT32)) < tol * 40, "complex eigh %d", t);
    /* eig of a general complex matrix and of a real one (complex conjugate pairs) */
    jx_dtype rd = d == JX_COMPLEX128 ? JX_FLOAT64 : JX_FLOAT32;
    jx_array *gens[2] = {random_complex(d, 3, (int64_t[]){3, 4, 4}), random_array(rd, 3, (int64_t[]){3, 4, 4})};
    for (int g = 0; g < 2; g++) {
      jx_array *a = gens[g], *v[3];
      CHECK(jx_lax_linalg_eig(a, true, true, v) == JX_OK);
      CHECK_EQ_INT(jx_dtype_of(v[0]), d);
      CHECK_EQ_INT(jx_dtype_of(v[2]), d);
      jx_array *ac = jx_astype(a, d), *w = jx_expand_dims(v[0], -2);
      double right = max_abs_diff(jx_abs(jx_subtract(jx_matmul(ac, v[2]), jx_multiply(v[2], w))), jx_zeros(0, NULL, rd));
      double left = max_abs_diff(jx_abs(jx_subtract(jx_matmul(ctrans(v[1]), ac), jx_multiply(ctrans(v[1]), jx_swapaxes(w, -1, -2)))),
                                 jx_zeros(0, NULL, rd));
      CHECK_MSG(right < tol * 40 && left < tol * 40, "eig %d/%d: right %g left %g", t, g, right, left);
      /* unit 2-norm columns */
      jx_array *norms = jx_sum(abs2(v[2]), 1, (int[]){-2}, false);
      CHECK(max_abs_diff(norms, jx_ones(2, (int64_t[]){3, 4}, rd)) < tol * 10);
      jx_array *vr[2];
      CHECK(jx_linalg_eig(a, vr) == JX_OK);
      /* without left vectors (and eigvals without any) geev may round differently */
      CHECK(max_abs_diff(jx_abs(jx_subtract(vr[1], v[2])), jx_zeros(0, NULL, rd)) < tol * 40);
      CHECK(max_abs_diff(jx_abs(jx_subtract(jx_linalg_eigvals(a), v[0])), jx_zeros(0, NULL, rd)) < tol * 40);
    }
  }
  jx_config_enable_x64(false);
  /* a NaN batch entry: only its eigenvalues are NaN */
  jx_array *good = random_array(JX_FLOAT32, 3, (int64_t[]){1, 3, 3});
  jx_array *bad = jx_concatenate(2, (jx_array *[]){good, jx_full(3, (int64_t[]){1, 3, 3}, NAN, JX_FLOAT32)}, 0);
  jx_array *w = jx_linalg_eigvals(bad);
  CHECK(w && jx_item(jx_sum(jx_astype(jx_isnan(w), JX_INT32), 0, NULL, false)) == 3);
  /* errors */
  jx_array *out[3];
  CHECK(jx_lax_linalg_eig(jx_ones(2, (int64_t[]){2, 2}, JX_INT32), false, true, out) == JX_ERR_DTYPE && !out[0]);
  CHECK_ERROR(JX_ERR_DTYPE, "eig: needs float32, float64, complex64 or complex128 matrices");
  CHECK(jx_linalg_eig(jx_ones(2, (int64_t[]){2, 3}, JX_FLOAT32), out) == JX_ERR_SHAPE && !out[0] && !out[1]);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_linalg_eig: needs square matrices, got shape (2,3)");
  CHECK(jx_linalg_eigvals(jx_ones(1, (int64_t[]){3}, JX_FLOAT32)) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_linalg_eigvals: needs an array of rank >= 2");
  CHECK(jx_lax_linalg_eig(NULL, true, true, out) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_linalg_eig: x is NULL");
  CHECK(jx_linalg_eig(good, NULL) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_linalg_eig: out is NULL");
  jx_scope_end(0, NULL);
}

/* eig under vmap (against a loop) and jit (against eager), its jaxpr as JAX prints it,
 * and the derivative of eigenvectors refused as JAX refuses it. */
static jx_status eig_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  return jx_lax_linalg_eig(in[0], true, true, out);
}

static jx_status eig_vec_loss(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_array *v[2];
  if (jx_linalg_eig(in[0], v) != JX_OK) return jx_last_status();
  out[0] = jx_sum(jx_real(v[1]), 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_eig_transforms(void) {
  jx_scope_begin();
  jx_array *a = random_array(JX_FLOAT32, 3, (int64_t[]){4, 3, 3});
  jx_fn *f = jx_fn_new("eig", 1, 3, eig_fn, NULL), *j = jx_jit(f), *v = jx_vmap(f, NULL, NULL);
  jx_array *bat[3], *jit[3], *eag[3];
  CHECK(jx_call(v, &a, bat) == JX_OK && jx_call(j, &a, jit) == JX_OK && jx_call(f, &a, eag) == JX_OK);
  for (int o = 0; o < 3; o++) {
    CHECK_MSG(max_abs_diff(jx_abs(jx_subtract(jit[o], eag[o])), jx_zeros(0, NULL, JX_FLOAT32)) == 0, "jit eig %d", o);
    for (int i = 0; i < 4; i++) {
      jx_array *one[3];
      CHECK(jx_call(f, (jx_array *[]){jx_take(a, jx_scalar_int(i), 0)}, one) == JX_OK);
      CHECK_MSG(max_abs_diff(jx_abs(jx_subtract(jx_take(bat[o], jx_scalar_int(i), 0), one[o])), jx_zeros(0, NULL, JX_FLOAT32)) == 0,
                "vmap eig %d entry %d", o, i);
    }
  }
  jx_array *a0 = jx_take(a, jx_scalar_int(0), 0);
  char *text = jx_make_jaxpr(f, &a0);
  CHECK_MSG(text && strstr(text, "b:c64[3] c:c64[3,3] d:c64[3,3] = eig[") &&
                strstr(text, "compute_left_eigenvectors=True") && strstr(text, "enable_eigvec_derivs=False"),
            "%s", text ? text : "NULL");
  free(text);
  jx_fn *lf = jx_fn_new("eig_vec_loss", 1, 1, eig_vec_loss, NULL), *gl = jx_grad(lf, 1, NULL);
  jx_array *gr = NULL;
  CHECK(jx_call(gl, &a0, &gr) == JX_ERR_UNSUPPORTED && gr == NULL);
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "jvp of eig: derivatives of non-symmetric eigenvectors");
  jx_fn_free(gl), jx_fn_free(lf), jx_fn_free(v), jx_fn_free(j), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* ------------------------------------------------------------ gradients */

typedef struct Fn1 {
  int which;
} Fn1;

/* Scalar functions of one float64 matrix, for finite differences. */
static jx_status scalar_fn(void *ctx, jx_array *const *in, jx_array **out) {
  Fn1 *f = ctx;
  jx_array *x = in[0], *r = NULL, *w = jx_reshape(jx_arange(1, 1 + (double)jx_size(x), 1, JX_FLOAT64), jx_ndim(x), jx_shape(x));
  switch (f->which) {
  case 0: { /* cholesky of x x^T + 3 I */
    jx_array *a = jx_add(jx_matmul(x, jx_swapaxes(x, -1, -2)), jx_multiply(jx_eye(jx_shape(x)[1], JX_FLOAT64), jx_scalar(3)));
    r = jx_sum(jx_multiply(jx_linalg_cholesky(a, false), w), 0, NULL, false);
    break;
  }
  case 1: r = jx_linalg_det(x); break;
  case 2: r = jx_sum(jx_multiply(jx_linalg_inv(x), w), 0, NULL, false); break;
  case 3: r = jx_sum(jx_multiply(jx_linalg_solve(x, jx_ones(1, (int64_t[]){jx_shape(x)[0]}, JX_FLOAT64)), jx_arange(1, 1 + (double)jx_shape(x)[0], 1, JX_FLOAT64)), 0, NULL, false); break;
  case 4: { /* lu's packed factors */
    jx_array *p[3];
    if (jx_lax_linalg_lu(x, p) != JX_OK) return jx_last_status();
    r = jx_sum(jx_multiply(p[0], w), 0, NULL, false);
    break;
  }
  case 5: { /* triangular solve in both operands */
    jx_array *t = jx_add(jx_tril(x, 0), jx_multiply(jx_eye(jx_shape(x)[1], JX_FLOAT64), jx_scalar(3)));
    r = jx_sum(jx_multiply(jx_lax_linalg_triangular_solve(t, x, true, true, false, false, false), w), 0, NULL, false);
    break;
  }
  case 6: { /* qr of x[:, :3] (tall) */
    jx_array *q[2];
    if (jx_linalg_qr(jx_slice(x, 2, (int64_t[]){0, 0}, (int64_t[]){JX_SLICE_END, 3}, NULL), NULL, q) != JX_OK)
      return jx_last_status();
    jx_array *wq = jx_reshape(jx_arange(1, 13, 1, JX_FLOAT64), 2, (int64_t[]){4, 3});
    jx_array *wr = jx_reshape(jx_arange(-4, 5, 1, JX_FLOAT64), 2, (int64_t[]){3, 3});
    r = jx_add(jx_sum(jx_multiply(q[0], wq), 0, NULL, false), jx_sum(jx_multiply(q[1], wr), 0, NULL, false));
    break;
  }
  case 7: { /* eigh: eigenvalues and squared eigenvectors (sign-free) */
    jx_array *e[2];
    if (jx_linalg_eigh(x, NULL, true, e) != JX_OK) return jx_last_status();
    r = jx_add(jx_sum(jx_multiply(e[0], jx_arange(1, 5, 1, JX_FLOAT64)), 0, NULL, false),
               jx_sum(jx_multiply(jx_multiply(e[1], e[1]), w), 0, NULL, false));
    break;
  }
  case 8: { /* svd of x[:3]: u diag(s) and squared vectors */
    jx_array *u[3];
    if (jx_linalg_svd(jx_slice(x, 1, (int64_t[]){0}, (int64_t[]){3}, NULL), false, true, u) != JX_OK)
      return jx_last_status();
    jx_array *us = jx_multiply(u[0], jx_expand_dims(u[1], -2));
    r = jx_add(jx_sum(jx_multiply(us, us), 0, NULL, false),
               jx_sum(jx_multiply(jx_multiply(u[2], u[2]), jx_reshape(jx_arange(1, 13, 1, JX_FLOAT64), 2, (int64_t[]){3, 4})), 0, NULL, false));
    r = jx_add(r, jx_sum(jx_multiply(u[1], jx_arange(1, 4, 1, JX_FLOAT64)), 0, NULL, false));
    break;
  }
  }
  out[0] = r;
  return r ? JX_OK : jx_last_status();
}

static jx_status grad_dot_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_fn *g = ctx;
  jx_array *gr;
  if (jx_call(g, in, &gr) != JX_OK) return jx_last_status();
  jx_array *w = jx_reshape(jx_linspace(-1, 1, jx_size(gr), JX_FLOAT64), jx_ndim(gr), jx_shape(gr));
  out[0] = jx_sum(jx_multiply(gr, w), 0, NULL, false);
  return JX_OK;
}

/* Repeated eigenvalues (JAX's documented degenerate case): eigh's eigenvalue tangents
 * stay finite and exact, its eigenvector tangents in the repeated pair are inf/NaN,
 * the rest finite; JAX 0.10.2 gives dw = (0, 0, 1) and dv[:, 2] = (0.5, 0.25, 0). */
static jx_status eigh_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  return jx_linalg_eigh(in[0], NULL, true, out);
}

static void test_eigh_degenerate(void) {
  jx_config_enable_x64(true);
  jx_scope_begin();
  jx_array *x = jx_multiply(jx_eye(3, JX_FLOAT64), jx_array_from((double[]){1, 1, 2}, JX_FLOAT64, 1, (int64_t[]){3}));
  jx_array *t = jx_array_from((double[]){0, 1, 0.5, 1, 0, 0.25, 0.5, 0.25, 1}, JX_FLOAT64, 2, (int64_t[]){3, 3});
  jx_fn *f = jx_fn_new("eigh", 1, 2, eigh_fn, NULL);
  jx_array *y[2], *ty[2];
  CHECK(jx_jvp(f, &x, &t, y, ty) == JX_OK);
  CHECK(max_abs_diff(ty[0], jx_array_from((double[]){0, 0, 1}, JX_FLOAT64, 1, (int64_t[]){3})) == 0);
  double dv[9];
  CHECK(jx_read(ty[1], dv, sizeof dv) == JX_OK);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++) CHECK_MSG(!isfinite(dv[i * 3 + j]), "dv[%d][%d] = %g should be inf/NaN", i, j, dv[i * 3 + j]);
  CHECK(fabs(fabs(dv[2]) - 0.5) < 1e-12 && fabs(fabs(dv[5]) - 0.25) < 1e-12 && dv[8] == 0);
  jx_fn_free(f);
  jx_scope_end(0, NULL);
  jx_config_enable_x64(false);
}

static void test_numeric_grads(void) {
  jx_config_enable_x64(true);
  jx_scope_begin();
  const char *names[] = {"cholesky", "det", "inv", "solve", "lu", "triangular_solve", "qr", "eigh", "svd"};
  for (int k = 0; k < 9; k++) {
    Fn1 ctx = {k};
    jx_array *x = jx_add(random_array(JX_FLOAT64, 2, (int64_t[]){4, 4}), jx_multiply(jx_eye(4, JX_FLOAT64), jx_scalar(2)));
    jx_fn *f = jx_fn_new(names[k], 1, 1, scalar_fn, &ctx);
    test_check_grad(names[k], f, 1, 1, &x, 1e-6);
    /* second order: d/dx <grad f(x), w> */
    jx_fn *g = jx_grad(f, 1, NULL);
    jx_fn *h = jx_fn_new("grad_dot", 1, 1, grad_dot_fn, g);
    char what[64];
    snprintf(what, sizeof what, "%s (second order)", names[k]);
    test_check_grad(what, h, 1, 1, &x, 1e-5);
    jx_fn_free(h), jx_fn_free(g), jx_fn_free(f);
  }
  jx_scope_end(0, NULL);
  jx_config_enable_x64(false);
}

/* ------------------------------------------------------------ vmap, jit */

static jx_status factor_all(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_array *a = in[0], *b = in[1];
  jx_array *spd = jx_add(jx_matmul(a, jx_swapaxes(a, -1, -2)), jx_multiply(jx_eye(jx_shape(a)[jx_ndim(a) - 1], JX_FLOAT32), jx_scalar(4)));
  out[0] = jx_linalg_cholesky(spd, false);
  out[1] = jx_linalg_solve(a, b);
  out[2] = jx_linalg_det(a);
  out[3] = jx_scipy_linalg_solve_triangular(out[0], b, 1, true, false);
  jx_array *f[3];
  if (jx_lax_linalg_lu(a, f) != JX_OK) return jx_last_status();
  out[4] = f[0], out[5] = f[2];
  return JX_OK;
}

static void test_vmap_jit(void) {
  jx_scope_begin();
  int64_t as[3] = {5, 4, 4}, bs[3] = {5, 4, 2};
  jx_array *a = jx_add(random_array(JX_FLOAT32, 3, as), jx_multiply(jx_eye(4, JX_FLOAT32), jx_scalar(2)));
  jx_array *b = random_array(JX_FLOAT32, 3, bs);
  jx_fn *f = jx_fn_new("factor_all", 2, 6, factor_all, NULL);
  jx_fn *v = jx_vmap(f, (int[]){0, 0}, (int[]){0, 0, 0, 0, 0, 0});
  jx_fn *vb = jx_vmap(f, (int[]){2, JX_NOT_MAPPED}, (int[]){1, 0, 0, 2, 0, 1}); /* odd axes, one unmapped */
  jx_fn *j = jx_jit(f);
  jx_array *batched[6], *jitted[6], *odd[6];
  CHECK(jx_call(v, (jx_array *[]){a, b}, batched) == JX_OK);
  CHECK(jx_call(j, (jx_array *[]){a, b}, jitted) == JX_OK);
  jx_array *b0 = jx_take(b, jx_zeros(0, NULL, JX_INT32), 0);
  CHECK(jx_call(vb, (jx_array *[]){jx_moveaxis(a, 0, 2), b0}, odd) == JX_OK);
  jx_array *eager[6];
  CHECK(jx_call(f, (jx_array *[]){a, b}, eager) == JX_OK);
  for (int o = 0; o < 6; o++) {
    CHECK_MSG(max_abs_diff(batched[o], eager[o]) < 1e-5, "vmap output %d", o);
    CHECK_MSG(max_abs_diff(jitted[o], eager[o]) < 1e-5, "jit output %d", o);
  }
  /* the loop: each batch entry alone */
  for (int i = 0; i < 5; i++) {
    jx_array *one[6], *idx = jx_scalar_int(i);
    CHECK(jx_call(f, (jx_array *[]){jx_take(a, idx, 0), jx_take(b, idx, 0)}, one) == JX_OK);
    for (int o = 0; o < 6; o++) CHECK_MSG(max_abs_diff(jx_take(batched[o], idx, 0), one[o]) < 1e-5, "loop %d output %d", i, o);
    jx_array *odd_one[6];
    CHECK(jx_call(f, (jx_array *[]){jx_take(a, idx, 0), b0}, odd_one) == JX_OK);
    CHECK(max_abs_diff(jx_take(odd[0], idx, 1), odd_one[0]) < 1e-5);
    CHECK(max_abs_diff(jx_take(odd[1], idx, 0), odd_one[1]) < 1e-5);
    CHECK(max_abs_diff(jx_take(odd[3], idx, 2), odd_one[3]) < 1e-5);
  }
  /* jit of grad */
  jx_config_enable_x64(true);
  Fn1 ctx = {2};
  jx_fn *sf = jx_fn_new("inv_sum", 1, 1, scalar_fn, &ctx), *gf = jx_grad(sf, 1, NULL), *jg = jx_jit(gf);
  jx_array *x = jx_add(random_array(JX_FLOAT64, 2, (int64_t[]){3, 3}), jx_multiply(jx_eye(3, JX_FLOAT64), jx_scalar(2)));
  jx_array *g1, *g2;
  CHECK(jx_call(gf, &x, &g1) == JX_OK && jx_call(jg, &x, &g2) == JX_OK);
  CHECK(max_abs_diff(g1, g2) < 1e-12);
  jx_config_enable_x64(false);
  jx_fn_free(jg), jx_fn_free(gf), jx_fn_free(sf);
  jx_fn_free(j), jx_fn_free(vb), jx_fn_free(v), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* expm under jit (the lax.switch / lax.cond of the Pade order and the squarings run
 * compiled) and under vmap (a batched index runs every branch and selects), against
 * eager calls on each matrix; norms span every order and several squarings. */
static jx_status expm_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_scipy_linalg_expm(in[0], false, 16);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_expm_transforms(void) {
  jx_scope_begin();
  const double scales[5] = {0.01, 0.3, 1.0, 3.0, 30.0};
  jx_array *mats[5];
  for (int i = 0; i < 5; i++)
    mats[i] = jx_multiply(random_array(JX_FLOAT32, 2, (int64_t[]){4, 4}), jx_scalar(scales[i] / 4));
  jx_array *stack = jx_stack(5, mats, 0);
  jx_fn *f = jx_fn_new("expm", 1, 1, expm_fn, NULL), *j = jx_jit(f), *v = jx_vmap(f, NULL, NULL);
  jx_array *batched, *eager_batch = jx_scipy_linalg_expm(stack, false, 16);
  CHECK(jx_call(v, &stack, &batched) == JX_OK);
  for (int i = 0; i < 5; i++) {
    jx_array *e, *jj;
    CHECK(jx_call(f, &mats[i], &e) == JX_OK && jx_call(j, &mats[i], &jj) == JX_OK);
    double tol = 2e-5 * (1 + max_abs_diff(e, jx_zeros_like(e)));
    CHECK_MSG(max_abs_diff(jj, e) <= tol, "jit expm %d: %g", i, max_abs_diff(jj, e));
    jx_array *idx = jx_scalar_int(i);
    CHECK_MSG(max_abs_diff(jx_take(batched, idx, 0), e) <= tol, "vmap expm %d", i);
    CHECK_MSG(max_abs_diff(jx_take(eager_batch, idx, 0), e) <= tol, "batched expm %d", i);
  }
  /* exp of a diagonal matrix is the elementwise exp of its diagonal; expm(0) = I */
  jx_array *d = jx_multiply(jx_eye(3, JX_FLOAT32), jx_array_from((float[]){-2, 0.5f, 3}, JX_FLOAT32, 1, (int64_t[]){3}));
  double dd = max_abs_diff(jx_log(jx_diagonal(jx_scipy_linalg_expm(d, false, 16), 0, 0, 1)),
                          jx_array_from((float[]){-2, 0.5f, 3}, JX_FLOAT32, 1, (int64_t[]){3}));
  CHECK_MSG(dd < 1e-5, "log(diag(expm(diag(d)))) - d: %g", dd);
  CHECK(max_abs_diff(jx_scipy_linalg_expm(jx_zeros(2, (int64_t[]){3, 3}, JX_FLOAT32), true, 16),
                     jx_eye(3, JX_FLOAT32)) == 0);
  CHECK(jx_scipy_linalg_expm(d, false, -1) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_scipy_linalg_expm: max_squarings must be >= 0, got -1");
  CHECK(jx_scipy_linalg_expm(NULL, false, 16) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_scipy_linalg_expm: a is NULL");
  jx_fn_free(v), jx_fn_free(j), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* tridiagonal_solve: vmap over a middle axis of b with the diagonals unbatched against
 * a loop, jit against eager, the transpose rule through vjp (<ct, A^-1 b> =
 * <A^-T ct, b>), and the jaxpr as JAX prints it. */
static jx_status tridiag_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_lax_linalg_tridiagonal_solve(in[0], in[1], in[2], in[3]);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_tridiagonal_transforms(void) {
  jx_scope_begin();
  int64_t m = 6;
  jx_array *dl = random_array(JX_FLOAT32, 1, &m), *du = random_array(JX_FLOAT32, 1, &m);
  jx_array *d = jx_add(random_array(JX_FLOAT32, 1, &m), jx_scalar(5));
  jx_array *b = random_array(JX_FLOAT32, 3, (int64_t[]){6, 4, 2}); /* mapped over axis 1 */
  jx_fn *f = jx_fn_new("tridiag", 4, 1, tridiag_fn, NULL), *j = jx_jit(f);
  jx_fn *v = jx_vmap(f, (int[]){JX_NOT_MAPPED, JX_NOT_MAPPED, JX_NOT_MAPPED, 1}, (int[]){0});
  jx_array *in[4] = {dl, d, du, NULL}, *batched, *eager, *jitted;
  in[3] = b;
  CHECK(jx_call(v, in, &batched) == JX_OK);
  for (int i = 0; i < 4; i++) {
    in[3] = jx_take(b, jx_scalar_int(i), 1);
    CHECK(jx_call(f, in, &eager) == JX_OK && jx_call(j, in, &jitted) == JX_OK);
    CHECK_MSG(max_abs_diff(jx_take(batched, jx_scalar_int(i), 0), eager) < 1e-6, "vmap tridiagonal %d", i);
    CHECK_MSG(max_abs_diff(jitted, eager) < 1e-6, "jit tridiagonal %d", i);
  }
  /* vjp in b: ct . A^-1 b == (A^-T ct) . b */
  in[3] = jx_take(b, jx_scalar_int(0), 1);
  jx_array *ct = random_array(JX_FLOAT32, 2, (int64_t[]){6, 2}), *y, *cts[4] = {NULL};
  jx_fn *pb = jx_vjp(f, in, &y);
  CHECK(pb && jx_call(pb, &ct, cts) == JX_OK);
  jx_fn_free(pb);
  double lhs = jx_item(jx_sum(jx_multiply(ct, y), 0, NULL, false));
  double rhs = cts[3] ? jx_item(jx_sum(jx_multiply(cts[3], in[3]), 0, NULL, false)) : NAN;
  CHECK_MSG(fabs(lhs - rhs) < 1e-4 * (1 + fabs(lhs)), "transpose: %g vs %g", lhs, rhs);
  char *text = jx_make_jaxpr(f, in);
  CHECK_MSG(text && strstr(text, "tridiagonal_solve[perturb_singular=False] a b c d"), "%s", text ? text : "NULL");
  free(text);
  CHECK(jx_lax_linalg_tridiagonal_solve(dl, d, du, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_linalg_tridiagonal_solve: b is NULL");
  CHECK(jx_lax_linalg_tridiagonal_solve(dl, d, jx_astype(du, JX_INT32), in[3]) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "tridiagonal_solve: dl, d, du and b must have one dtype");
  jx_fn_free(v), jx_fn_free(j), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* ------------------------------------------------- qr and svd on every path */

/* max |a - b| over complex or real elements. */
static double cdiff(jx_array *a, jx_array *b) {
  return max_abs_diff(jx_abs(jx_subtract(a, b)), jx_zeros(0, NULL, JX_FLOAT32));
}

/* qr and svd over the paths a device takes (on cuda: gesvdjBatched for a batch of
 * matrices of at most 32 x 32, gesvdj per entry, geqrf + orgqr/ungqr), every dtype, tall
 * and wide, reduced and complete: Q R = A with Q^H Q = I and R upper triangular,
 * U diag(s) V^H = A with orthonormal U and V, and the singular values equal the cpu
 * device's (LAPACK gesdd) on the same input. */
static void test_factorization_paths(void) {
  jx_scope_begin();
  jx_dtype dts[4] = {JX_FLOAT32, JX_FLOAT64, JX_COMPLEX64, JX_COMPLEX128};
  int64_t shapes[4][3] = {{20, 8, 8}, {2, 40, 33}, {1, 33, 70}, {3, 32, 5}};
  for (int t = 0; t < 4; t++) {
    jx_dtype d = dts[t];
    bool x64 = d == JX_FLOAT64 || d == JX_COMPLEX128, cpx = t >= 2;
    jx_config_enable_x64(x64);
    double tol = x64 ? 1e-11 : 1e-4;
    for (int i = 0; i < 4; i++) {
      jx_array *x = cpx ? random_complex(d, 3, shapes[i]) : random_array(d, 3, shapes[i]), *q[2], *u[3];
      int64_t n = shapes[i][1], m = shapes[i][2], k = n < m ? n : m;
      for (int full = 0; full < 2; full++) {
        CHECK(jx_linalg_qr(x, full ? "complete" : "reduced", q) == JX_OK);
        int64_t kq = full ? n : k;
        CHECK_MSG(cdiff(jx_matmul(q[0], q[1]), x) < tol, "qr %s %lldx%lld full=%d: %g", jx_dtype_name(d),
                  (long long)n, (long long)m, full, cdiff(jx_matmul(q[0], q[1]), x));
        CHECK_MSG(cdiff(jx_matmul(ctrans(q[0]), q[0]), jx_eye(kq, d)) < tol, "q^H q %s %lldx%lld", jx_dtype_name(d),
                  (long long)n, (long long)m);
        CHECK(cdiff(q[1], jx_triu(q[1], 0)) == 0);
        CHECK(jx_linalg_svd(x, full, true, u) == JX_OK);
        jx_array *uk = jx_slice(u[0], 3, (int64_t[]){0, 0, 0}, (int64_t[]){JX_SLICE_END, JX_SLICE_END, k}, NULL);
        jx_array *vk = jx_slice(u[2], 2, (int64_t[]){0, 0}, (int64_t[]){JX_SLICE_END, k}, NULL);
        jx_array *usv = jx_matmul(jx_multiply(uk, jx_astype(jx_expand_dims(u[1], -2), d)), vk);
        CHECK_MSG(cdiff(usv, x) < tol, "svd %s %lldx%lld full=%d: %g", jx_dtype_name(d), (long long)n, (long long)m,
                  full, cdiff(usv, x));
        CHECK(cdiff(jx_matmul(ctrans(u[0]), u[0]), jx_eye(full ? n : k, d)) < tol);
        CHECK(cdiff(jx_matmul(u[2], ctrans(u[2])), jx_eye(full ? m : k, d)) < tol);
      }
      jx_array *s_here = jx_linalg_svdvals(x), *s_cpu = jx_linalg_svdvals(jx_device_put(x, "cpu"));
      CHECK_MSG(cdiff(s_here, jx_device_put(s_cpu, jx_device_of(x))) < tol, "svdvals %s %lldx%lld vs cpu",
                jx_dtype_name(d), (long long)n, (long long)m);
      /* descending */
      jx_array *ds = jx_subtract(jx_slice(s_here, 2, (int64_t[]){0, 1}, (int64_t[]){JX_SLICE_END, JX_SLICE_END}, NULL),
                                 jx_slice(s_here, 2, (int64_t[]){0, 0}, (int64_t[]){JX_SLICE_END, k - 1}, NULL));
      CHECK(jx_item(jx_max(ds, 0, NULL, false)) <= 0);
    }
  }
  jx_config_enable_x64(false);
  jx_scope_end(0, NULL);
}

/* Single triangular solves with many right-hand sides, which the cpu backend splits
 * into column (left side) or row (right side) blocks on its threads, against the
 * unsplit routine on another backend (cpu's against the interpreter's), and inv of a
 * matrix of that size (A inv(A) = I). */
static void test_split_solves(void) {
  jx_scope_begin();
  jx_dtype dts[4] = {JX_FLOAT32, JX_FLOAT64, JX_COMPLEX64, JX_COMPLEX128};
  /* left, lower, transpose_a, conjugate_a, unit_diagonal */
  bool flags[4][5] = {{1, 1, 0, 0, 0}, {1, 0, 1, 1, 0}, {0, 1, 0, 1, 1}, {0, 0, 1, 0, 0}};
  int64_t k = 128, rhs = 200; /* rhs not a multiple of the blocks' 16 */
  for (int t = 0; t < 4; t++) {
    jx_dtype d = dts[t];
    bool x64 = d == JX_FLOAT64 || d == JX_COMPLEX128, cpx = t >= 2;
    jx_config_enable_x64(x64);
    double tol = x64 ? 1e-12 : 1e-5;
    int64_t ks[2] = {k, k};
    jx_array *a = cpx ? random_complex(d, 2, ks) : random_array(d, 2, ks);
    /* off-diagonal entries of size 1/k around I: well conditioned with and without
     * unit_diagonal (a unit triangle of O(1) random entries has a condition number
     * growing like 2^k, and the cuda trsm's other summation order then differs by it) */
    a = jx_add(jx_multiply(a, jx_scalar(1.0 / (double)k)), jx_eye(k, d));
    const char *here = jx_device_of(a), *other = strcmp(here, "cpu") ? "cpu" : "interp";
    for (int f = 0; f < 4; f++) {
      bool *fl = flags[f];
      int64_t bs[2] = {fl[0] ? k : rhs, fl[0] ? rhs : k};
      jx_array *b = cpx ? random_complex(d, 2, bs) : random_array(d, 2, bs);
      jx_array *x = jx_lax_linalg_triangular_solve(a, b, fl[0], fl[1], fl[2], fl[3], fl[4]);
      jx_array *xo = jx_lax_linalg_triangular_solve(jx_device_put(a, other), jx_device_put(b, other), fl[0], fl[1],
                                                    fl[2], fl[3], fl[4]);
      double e = cdiff(x, jx_device_put(xo, here));
      CHECK_MSG(e < tol, "triangular_solve %s flags %d vs %s: %g", jx_dtype_name(d), f, other, e);
    }
    jx_array *inv = jx_linalg_inv(a);
    double e = cdiff(jx_matmul(a, inv), jx_eye(k, d));
    CHECK_MSG(e < (x64 ? 1e-12 : 1e-5), "inv %s: a inv(a) - I = %g", jx_dtype_name(d), e);
  }
  jx_config_enable_x64(false);
  jx_scope_end(0, NULL);
}

/* The blocked triangular solve (backend/lapack.c: 128-wide diagonal blocks by trsm, the
 * rest by jaxc's GEMM, from k = 256 with 16 right-hand sides where the CPU has AVX-512;
 * elsewhere trsm): sizes on and around the block edges, every side, triangle, transpose
 * and unit diagonal, float32 and float64, a batch; the residual op(T) x - b (left) or
 * x op(T) - b (right) with T the triangle the solve reads, and the cpu's column (row)
 * blocks against the interpreter's single call. */
static void test_blocked_solves(void) {
  jx_scope_begin();
  int64_t ks[4] = {256, 300, 385, 512}, rhs[4] = {16, 40, 300, 17};
  for (int t = 0; t < 2; t++) {
    jx_dtype d = t ? JX_FLOAT64 : JX_FLOAT32;
    jx_config_enable_x64(t == 1);
    double tol = t ? 1e-11 : 2e-4;
    for (int c = 0; c < 16; c++) {
      bool left = c & 1, lower = c & 2, trans = c & 4, unit = c & 8;
      int64_t k = ks[(c + t) % 4], nr = rhs[(c / 4 + t) % 4], batch = c == 5 ? 2 : 0;
      int64_t as[3] = {2, k, k}, bs[3] = {2, left ? k : nr, left ? nr : k};
      jx_array *a = random_array(d, batch ? 3 : 2, batch ? as : as + 1);
      a = jx_add(jx_multiply(a, jx_scalar(1.0 / (double)k)), jx_eye(k, d));
      jx_array *b = random_array(d, batch ? 3 : 2, batch ? bs : bs + 1);
      jx_array *x = jx_lax_linalg_triangular_solve(a, b, left, lower, trans, false, unit);
      jx_array *tri = lower ? jx_tril(a, 0) : jx_triu(a, 0);
      if (unit) tri = jx_add(jx_subtract(tri, jx_multiply(tri, jx_eye(k, d))), jx_eye(k, d));
      if (trans) tri = jx_swapaxes(tri, -1, -2);
      jx_array *res = left ? jx_matmul(tri, x) : jx_matmul(x, tri);
      double e = cdiff(res, b);
      CHECK_MSG(e < tol, "blocked triangular_solve %s k %lld rhs %lld left %d lower %d trans %d unit %d: residual %g",
                jx_dtype_name(d), (long long)k, (long long)nr, left, lower, trans, unit, e);
      const char *here = jx_device_of(a), *other = strcmp(here, "cpu") ? "cpu" : "interp";
      jx_array *xo = jx_lax_linalg_triangular_solve(jx_device_put(a, other), jx_device_put(b, other), left, lower,
                                                    trans, false, unit);
      e = cdiff(x, jx_device_put(xo, here));
      CHECK_MSG(e < tol, "blocked triangular_solve %s k %lld vs %s: %g", jx_dtype_name(d), (long long)k, other, e);
    }
  }
  jx_config_enable_x64(false);
  jx_scope_end(0, NULL);
}

/* The blocked LU (backend/lapack.c: 128-column panels by getrf, the trailing columns'
 * swaps, trsm and GEMM update spread over the cpu's threads, from min(n, m) = 256 where
 * the CPU has AVX-512): square, tall and wide shapes around the panel edges, float32 and
 * float64, a batch; P A = L U, multipliers |l_ij| <= 1 (partial pivoting), the
 * permutation the pivots give, and the cpu against the interpreter. */
static jx_array *last2(jx_array *x, int64_t rows, int64_t cols) { /* x[..., :rows, :cols] */
  int nd = jx_ndim(x);
  int64_t start[3] = {0, 0, 0}, stop[3] = {JX_SLICE_END, JX_SLICE_END, JX_SLICE_END};
  stop[nd - 2] = rows, stop[nd - 1] = cols;
  return jx_slice(x, nd, start, stop, NULL);
}
static void test_blocked_lu(void) {
  jx_scope_begin();
  int64_t shapes[5][3] = {{1, 256, 256}, {1, 385, 385}, {1, 300, 260}, {1, 260, 390}, {2, 257, 257}};
  for (int t = 0; t < 2; t++) {
    jx_dtype d = t ? JX_FLOAT64 : JX_FLOAT32;
    jx_config_enable_x64(t == 1);
    double tol = t ? 1e-11 : 1e-4;
    for (int i = 0; i < 5; i++) {
      int64_t *sh = shapes[i], n = sh[1], m = sh[2], k = n < m ? n : m;
      bool batch = sh[0] > 1;
      jx_array *a = random_array(d, batch ? 3 : 2, batch ? sh : sh + 1), *f[3], *g[3];
      CHECK(jx_lax_linalg_lu(a, f) == JX_OK);
      /* l: n x k unit lower, u: k x m upper; p a = l u, p from the permutation */
      jx_array *lk = jx_tril(last2(f[0], n, k), -1);
      jx_array *l = jx_add(lk, last2(jx_eye(n, d), n, k)), *u = jx_triu(last2(f[0], k, m), 0);
      jx_array *pa = jx_take_along_axis(a, jx_broadcast_to(jx_expand_dims(f[2], -1), jx_ndim(a), jx_shape(a)), -2,
                                        JX_INDEX_PROMISE_IN_BOUNDS);
      double e = cdiff(jx_matmul(l, u), pa);
      CHECK_MSG(e < tol * 10, "blocked lu %s %lldx%lld: |P A - L U| = %g", jx_dtype_name(d), (long long)n, (long long)m, e);
      CHECK_MSG(jx_item(jx_max(jx_abs(lk), 0, NULL, false)) <= 1, "blocked lu %s %lldx%lld: |l| > 1",
                jx_dtype_name(d), (long long)n, (long long)m);
      const char *here = jx_device_of(a), *other = strcmp(here, "cpu") ? "cpu" : "interp";
      /* the interp runs the cpu's host routine (the same rounding); cuda runs cuSOLVER's
       * getrf, whose other summation order moves float32 factors of these sizes by up to
       * ~5e-4 (H200, 12:00) */
      double tol_other = strcmp(here, "cuda") ? tol : t ? 1e-9 : 2e-3;
      CHECK(jx_lax_linalg_lu(jx_device_put(a, other), g) == JX_OK);
      CHECK_MSG(cdiff(f[0], jx_device_put(g[0], here)) < tol_other, "blocked lu %s %lldx%lld vs %s: %g", jx_dtype_name(d),
                (long long)n, (long long)m, other, cdiff(f[0], jx_device_put(g[0], here)));
      CHECK(jx_item(jx_all(jx_equal(f[1], jx_device_put(g[1], here)), 0, NULL, false)) == 1);
    }
  }
  jx_config_enable_x64(false);
  jx_scope_end(0, NULL);
}

/* The blocked QR (backend/lapack.c: geqr2 + larft panels of 32 columns, the block
 * reflectors applied by jaxc's GEMM, spread over the cpu's threads, from min(n, m) =
 * 256 where the CPU has AVX-512): square, tall and wide shapes around the panel edges,
 * reduced and complete, float32 and float64, a batch; Q R = A, Q^T Q = I, R upper
 * triangular, q and r equal to the LAPACK path's (cgeqrf + cungqr on the same matrix as
 * complex: the same Householder signs), and the cpu against the interpreter. */
static void test_blocked_qr(void) {
  jx_scope_begin();
  int64_t shapes[5][3] = {{1, 256, 256}, {1, 385, 385}, {1, 300, 260}, {1, 260, 390}, {2, 257, 257}};
  for (int t = 0; t < 2; t++) {
    jx_dtype d = t ? JX_FLOAT64 : JX_FLOAT32;
    jx_config_enable_x64(t == 1);
    double tol = t ? 1e-11 : 2e-4;
    for (int i = 0; i < 10; i++) {
      int64_t *sh = shapes[i / 2], n = sh[1], m = sh[2];
      bool batch = sh[0] > 1, full = i % 2;
      jx_array *a = random_array(d, batch ? 3 : 2, batch ? sh : sh + 1), *f[2], *g[2], *h[2];
      CHECK(jx_lax_linalg_qr(a, full, f) == JX_OK);
      int64_t kq = jx_shape(f[0])[jx_ndim(a) - 1];
      double e = cdiff(jx_matmul(f[0], f[1]), a);
      double o = cdiff(jx_matmul(jx_swapaxes(f[0], -1, -2), f[0]), jx_eye(kq, d));
      CHECK_MSG(e < tol * 10 && o < tol * 10 && cdiff(f[1], jx_triu(f[1], 0)) == 0,
                "blocked qr %s %lldx%lld full %d: |QR - A| %g, |Q'Q - I| %g", jx_dtype_name(d), (long long)n,
                (long long)m, full, e, o);
      jx_dtype cd = t ? JX_COMPLEX128 : JX_COMPLEX64;
      CHECK(jx_lax_linalg_qr(jx_astype(a, cd), full, h) == JX_OK);
      double eq = cdiff(f[0], jx_real(h[0])), er = cdiff(f[1], jx_real(h[1]));
      CHECK_MSG(eq < tol * 10 && er < tol * 10, "blocked qr %s %lldx%lld full %d vs LAPACK: q %g, r %g",
                jx_dtype_name(d), (long long)n, (long long)m, full, eq, er);
      const char *here = jx_device_of(a), *other = strcmp(here, "cpu") ? "cpu" : "interp";
      double tol_other = strcmp(here, "cuda") ? tol : t ? 1e-9 : 2e-3;
      CHECK(jx_lax_linalg_qr(jx_device_put(a, other), full, g) == JX_OK);
      CHECK_MSG(cdiff(f[0], jx_device_put(g[0], here)) < tol_other && cdiff(f[1], jx_device_put(g[1], here)) < tol_other,
                "blocked qr %s %lldx%lld vs %s", jx_dtype_name(d), (long long)n, (long long)m, other);
    }
  }
  jx_config_enable_x64(false);
  jx_scope_end(0, NULL);
}

/* The blocked eigh (backend/lapack.c: sytrd and stedc by LAPACK, the back-transformation
 * by Q's block reflectors on jaxc's GEMM, from n = 256 where the CPU has AVX-512):
 * sizes around the 64-column blocks, float32 and float64, lower and upper (the other
 * triangle garbage), a batch; A V = V diag(w), V^T V = I, w equal to the LAPACK path's
 * (cheevd on the same matrix as complex), the cpu against the interpreter, and a NaN
 * entry in a batch giving NaNs for it alone. */
static void test_blocked_eigh(void) {
  jx_scope_begin();
  int64_t shapes[4][3] = {{1, 256, 256}, {1, 300, 300}, {1, 385, 385}, {2, 257, 257}};
  for (int t = 0; t < 2; t++) {
    jx_dtype d = t ? JX_FLOAT64 : JX_FLOAT32;
    jx_config_enable_x64(t == 1);
    double tol = t ? 1e-11 : 2e-4;
    for (int i = 0; i < 8; i++) {
      int64_t *sh = shapes[i / 2], n = sh[1];
      bool batch = sh[0] > 1, lower = i % 2;
      jx_array *g = random_array(d, batch ? 3 : 2, batch ? sh : sh + 1);
      jx_array *a = jx_add(g, jx_swapaxes(g, -1, -2)); /* symmetric, entries in (-2, 2) */
      /* garbage in the unread triangle */
      jx_array *x = lower ? jx_add(jx_tril(a, 0), jx_triu(jx_multiply(g, jx_scalar(100.0)), 1))
                          : jx_add(jx_triu(a, 0), jx_tril(jx_multiply(g, jx_scalar(100.0)), -1));
      jx_array *f[2], *h[2], *o[2];
      CHECK(jx_lax_linalg_eigh(x, lower, false, true, f) == JX_OK); /* (v, w) */
      double r = cdiff(jx_matmul(a, f[0]), jx_multiply(f[0], jx_expand_dims(f[1], -2)));
      double orth = cdiff(jx_matmul(jx_swapaxes(f[0], -1, -2), f[0]), jx_eye(n, d));
      CHECK_MSG(r < tol * 40 && orth < tol * 10, "blocked eigh %s n %lld lower %d: |AV - VW| %g, |V'V - I| %g",
                jx_dtype_name(d), (long long)n, lower, r, orth);
      CHECK(jx_lax_linalg_eigh(jx_astype(x, t ? JX_COMPLEX128 : JX_COMPLEX64), lower, false, true, h) == JX_OK);
      double ew = cdiff(f[1], h[1]);
      CHECK_MSG(ew < tol * 40, "blocked eigh %s n %lld vs LAPACK: |w - w'| %g", jx_dtype_name(d), (long long)n, ew);
      const char *here = jx_device_of(a), *other = strcmp(here, "cpu") ? "cpu" : "interp";
      double tol_other = strcmp(here, "cuda") ? tol : t ? 1e-9 : 2e-3;
      CHECK(jx_lax_linalg_eigh(jx_device_put(x, other), lower, false, true, o) == JX_OK);
      CHECK_MSG(cdiff(f[1], jx_device_put(o[1], here)) < tol_other * 40, "blocked eigh %s n %lld vs %s",
                jx_dtype_name(d), (long long)n, other);
      if (batch) { /* entry 1 NaN: its results NaN, entry 0's as before */
        jx_array *bad = jx_concatenate(2, (jx_array *[]){jx_slice(x, 3, (int64_t[]){0, 0, 0}, (int64_t[]){1, n, n}, NULL),
                                                jx_full(3, (int64_t[]){1, n, n}, NAN, d)}, 0);
        jx_array *e[2];
        CHECK(jx_lax_linalg_eigh(bad, lower, false, true, e) == JX_OK);
        CHECK(jx_item(jx_sum(jx_astype(jx_isnan(e[1]), JX_INT32), 0, NULL, false)) == (double)n);
        CHECK(jx_item(jx_sum(jx_astype(jx_isnan(e[0]), JX_INT32), 0, NULL, false)) == (double)(n * n));
      }
    }
  }
  jx_config_enable_x64(false);
  jx_scope_end(0, NULL);
}

/* The blocked svd (backend/lapack.c: square real matrices from n = 256 with u and vt:
 * gebrd and bdsdc by LAPACK, the back-transformations by Q's and P's block reflectors
 * on jaxc's GEMM): sizes around the 64-column blocks, float32 and float64, a batch;
 * u diag(s) vt = a, orthonormal u and vt, s equal to the LAPACK path's (cgesdd on the
 * same matrix as complex, and svdvals' sgesdd without vectors), the cpu against the
 * interpreter, a NaN entry in a batch giving NaNs for it alone. */
static void test_blocked_svd(void) {
  jx_scope_begin();
  int64_t shapes[4][3] = {{1, 256, 256}, {1, 300, 300}, {1, 385, 385}, {2, 257, 257}};
  for (int t = 0; t < 2; t++) {
    jx_dtype d = t ? JX_FLOAT64 : JX_FLOAT32;
    jx_config_enable_x64(t == 1);
    double tol = t ? 1e-11 : 2e-4;
    for (int i = 0; i < 4; i++) {
      int64_t *sh = shapes[i], n = sh[1];
      bool batch = sh[0] > 1;
      jx_array *a = random_array(d, batch ? 3 : 2, batch ? sh : sh + 1), *f[3], *h[3], *o[3];
      CHECK(jx_lax_linalg_svd(a, false, true, f) == JX_OK); /* (u, s, vt) */
      double r = cdiff(jx_matmul(jx_multiply(f[0], jx_expand_dims(f[1], -2)), f[2]), a);
      double ou = cdiff(jx_matmul(jx_swapaxes(f[0], -1, -2), f[0]), jx_eye(n, d));
      double ov = cdiff(jx_matmul(f[2], jx_swapaxes(f[2], -1, -2)), jx_eye(n, d));
      CHECK_MSG(r < tol * 40 && ou < tol * 10 && ov < tol * 10, "blocked svd %s n %lld: |USV - A| %g, |U'U - I| %g, |VV' - I| %g",
                jx_dtype_name(d), (long long)n, r, ou, ov);
      CHECK(jx_lax_linalg_svd(jx_astype(a, t ? JX_COMPLEX128 : JX_COMPLEX64), false, true, h) == JX_OK);
      double es = cdiff(f[1], h[1]), ev = cdiff(f[1], jx_linalg_svdvals(a));
      CHECK_MSG(es < tol * 40 && ev < tol * 40, "blocked svd %s n %lld vs LAPACK: |s - s'| %g, vs svdvals %g",
                jx_dtype_name(d), (long long)n, es, ev);
      const char *here = jx_device_of(a), *other = strcmp(here, "cpu") ? "cpu" : "interp";
      double tol_other = strcmp(here, "cuda") ? tol : t ? 1e-9 : 2e-3;
      CHECK(jx_lax_linalg_svd(jx_device_put(a, other), false, true, o) == JX_OK);
      CHECK_MSG(cdiff(f[1], jx_device_put(o[1], here)) < tol_other * 40, "blocked svd %s n %lld vs %s",
                jx_dtype_name(d), (long long)n, other);
      if (batch) {
        jx_array *bad = jx_concatenate(2, (jx_array *[]){jx_slice(a, 3, (int64_t[]){0, 0, 0}, (int64_t[]){1, n, n}, NULL),
                                                         jx_full(3, (int64_t[]){1, n, n}, NAN, d)}, 0);
        jx_array *e[3];
        CHECK(jx_lax_linalg_svd(bad, false, true, e) == JX_OK);
        CHECK(jx_item(jx_sum(jx_astype(jx_isnan(e[1]), JX_INT32), 0, NULL, false)) == (double)n);
        CHECK(jx_item(jx_sum(jx_astype(jx_isnan(e[0]), JX_INT32), 0, NULL, false)) == (double)(n * n));
        CHECK(jx_item(jx_sum(jx_astype(jx_isnan(e[2]), JX_INT32), 0, NULL, false)) == (double)(n * n));
      }
    }
  }
  jx_config_enable_x64(false);
  jx_scope_end(0, NULL);
}

/* Complex tridiagonal_solve (LAPACK cgtsv): the residual of A x = b, vmap against a
 * loop, jit against eager and the transpose through vjp (<ct, A^-1 b> = <A^-T ct, b>,
 * bilinear: JAX's linear transpose, no conjugation). */
static jx_array *crandom(int ndim, const int64_t *shape) {
  return jx_astype(jx_complex(random_array(JX_FLOAT32, ndim, shape), random_array(JX_FLOAT32, ndim, shape)),
                   JX_COMPLEX64);
}
static double cmax_diff(jx_array *a, jx_array *b) {
  jx_array *d = jx_max(jx_abs(jx_subtract(a, b)), 0, NULL, false);
  return d ? jx_item(d) : INFINITY;
}

static void test_tridiagonal_complex(void) {
  jx_scope_begin();
  int64_t m = 6;
  jx_array *dl = crandom(1, &m), *du = crandom(1, &m), *d = jx_add(crandom(1, &m), jx_scalar(5));
  jx_array *b = crandom(3, (int64_t[]){6, 4, 2});
  jx_fn *f = jx_fn_new("tridiag", 4, 1, tridiag_fn, NULL), *j = jx_jit(f);
  jx_fn *v = jx_vmap(f, (int[]){JX_NOT_MAPPED, JX_NOT_MAPPED, JX_NOT_MAPPED, 1}, (int[]){0});
  jx_array *in[4] = {dl, d, du, b}, *batched = NULL, *eager = NULL, *jitted = NULL;
  CHECK(jx_call(v, in, &batched) == JX_OK && jx_dtype_of(batched) == JX_COMPLEX64);
  for (int i = 0; i < 4; i++) {
    in[3] = jx_take(b, jx_scalar_int(i), 1);
    CHECK(jx_call(f, in, &eager) == JX_OK && jx_call(j, in, &jitted) == JX_OK);
    CHECK_MSG(cmax_diff(jx_take(batched, jx_scalar_int(i), 0), eager) < 1e-6, "vmap complex tridiagonal %d", i);
    CHECK_MSG(cmax_diff(jitted, eager) < 1e-6, "jit complex tridiagonal %d", i);
    /* A x: dl[k] x[k-1] + d[k] x[k] + du[k] x[k+1] */
    jx_array *x = eager, *z = jx_zeros(2, (int64_t[]){1, 2}, JX_COMPLEX64);
    jx_array *xm = jx_concatenate(2, (jx_array *[]){z, jx_slice(x, 1, (int64_t[]){0}, (int64_t[]){5}, NULL)}, 0);
    jx_array *xp = jx_concatenate(2, (jx_array *[]){jx_slice(x, 1, (int64_t[]){1}, (int64_t[]){6}, NULL), z}, 0);
    jx_array *ax = jx_add(jx_add(jx_multiply(jx_expand_dims(dl, 1), xm), jx_multiply(jx_expand_dims(d, 1), x)),
                          jx_multiply(jx_expand_dims(du, 1), xp));
    CHECK_MSG(cmax_diff(ax, in[3]) < 1e-5, "complex tridiagonal residual %d: %g", i, cmax_diff(ax, in[3]));
  }
  jx_array *ct = crandom(2, (int64_t[]){6, 2}), *y = NULL, *cts[4] = {NULL};
  jx_fn *pb = jx_vjp(f, in, &y);
  CHECK(pb && jx_call(pb, &ct, cts) == JX_OK);
  jx_fn_free(pb);
  jx_array *lhs = jx_sum(jx_multiply(ct, y), 0, NULL, false);
  jx_array *rhs = cts[3] ? jx_sum(jx_multiply(cts[3], in[3]), 0, NULL, false) : NULL;
  CHECK_MSG(rhs && cmax_diff(lhs, rhs) < 1e-4, "complex transpose");
  jx_fn_free(v), jx_fn_free(j), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* lax.linalg.eigh(sort_eigenvalues=False): printed as JAX, results as the sorted call's
 * (LAPACK sorts), also under vmap and jit. */
static jx_status eigh_nosort_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  return jx_lax_linalg_eigh(in[0], true, true, false, out);
}

static void test_eigh_nosort(void) {
  jx_scope_begin();
  jx_array *a = random_spd(JX_FLOAT32, 3, (int64_t[]){3, 4, 4}), *r[2], *s[2], *vj[2];
  jx_fn *f = jx_fn_new("eigh_nosort", 1, 2, eigh_nosort_fn, NULL), *j = jx_jit(f);
  jx_fn *v = jx_vmap(f, NULL, NULL);
  CHECK(jx_lax_linalg_eigh(a, true, true, true, s) == JX_OK);
  CHECK(jx_call(j, &a, r) == JX_OK && jx_call(v, &a, vj) == JX_OK);
  CHECK(max_abs_diff(r[1], s[1]) == 0 && max_abs_diff(vj[1], s[1]) == 0);
  CHECK(max_abs_diff(jx_abs(r[0]), jx_abs(s[0])) == 0);
  jx_array *a0 = jx_take(a, jx_scalar_int(0), 0);
  char *text = jx_make_jaxpr(f, &a0);
  CHECK_MSG(text && strstr(text, "eigh[lower=True sort_eigenvalues=False]"), "%s", text ? text : "NULL");
  free(text);
  jx_fn_free(v), jx_fn_free(j), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* ------------------------------------------------------------ errors */

static void test_errors(void) {
  jx_scope_begin();
  jx_array *v = jx_ones(1, (int64_t[]){3}, JX_FLOAT32), *r = jx_ones(2, (int64_t[]){2, 3}, JX_FLOAT32);
  CHECK(jx_linalg_inv(v) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_linalg_inv: needs an array of rank >= 2");
  CHECK(jx_linalg_det(r) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "needs square matrices, got shape (2,3)");
  CHECK(jx_lax_linalg_cholesky(jx_ones(2, (int64_t[]){2, 2}, JX_INT32), false) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "cholesky: needs float32, float64, complex64 or complex128 matrices");
  CHECK(jx_lax_linalg_triangular_solve(jx_eye(3, JX_FLOAT32), r, true, true, false, false, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "triangular_solve: incompatible shapes");
  CHECK(jx_scipy_linalg_solve_triangular(jx_eye(3, JX_FLOAT32), v, 3, true, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "trans must be 0");
  CHECK(jx_linalg_solve(jx_ones(3, (int64_t[]){2, 3, 3}, JX_FLOAT32), jx_ones(3, (int64_t[]){3, 3, 1}, JX_FLOAT32)) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "do not broadcast");
  /* lax entry points check squareness before symmetrizing (x + x^H of a (2, 3) x was
   * jx_add's broadcast error) */
  jx_array *out[3];
  CHECK(jx_lax_linalg_eigh(r, true, true, true, out) == JX_ERR_SHAPE && out[0] == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_lax_linalg_eigh: needs square matrices, got shape (2,3)");
  CHECK(jx_lax_linalg_eigh(v, true, true, true, out) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_lax_linalg_eigh: needs an array of rank >= 2");
  CHECK(jx_lax_linalg_cholesky(r, true) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_lax_linalg_cholesky: needs square matrices, got shape (2,3)");
  CHECK(jx_lax_linalg_eig(r, false, true, out) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_lax_linalg_eig: needs square matrices, got shape (2,3)");
  CHECK(jx_lax_linalg_lu(NULL, out) != JX_OK && out[0] == NULL);
  jx_clear_error();
  jx_scope_end(0, NULL);
}

/* Complex expm (JAX's: the Pade orders and thresholds of float64 for complex128, of
 * float32 for complex64) against the real expm (tested against JAX's goldens) of the
 * real embedding [[X, -Y], [Y, X]] of A = X + iY, whose exponential is [[Re, -Im], [Im,
 * Re]] of expm(A); norms from 0.05 to 40 (no scaling to 10 squarings); a batch too. */
static void test_expm_complex(void) {
  jx_config_enable_x64(true);
  jx_scope_begin();
  const double scales[4] = {0.05, 0.8, 4.0, 40.0};
  for (int i = 0; i < 4; i++)
    for (int c64 = 0; c64 < 2; c64++) {
      jx_array *x = jx_multiply(random_array(JX_FLOAT64, 2, (int64_t[]){5, 5}), jx_scalar(scales[i] / 5));
      jx_array *y = jx_multiply(random_array(JX_FLOAT64, 2, (int64_t[]){5, 5}), jx_scalar(scales[i] / 5));
      jx_array *emb = jx_concatenate(2, (jx_array *[]){jx_concatenate(2, (jx_array *[]){x, jx_negative(y)}, 1),
                                                       jx_concatenate(2, (jx_array *[]){y, x}, 1)}, 0);
      jx_array *a = jx_complex(x, y), *er = jx_scipy_linalg_expm(emb, false, 16);
      if (c64) a = jx_astype(a, JX_COMPLEX64), er = jx_scipy_linalg_expm(jx_astype(emb, JX_FLOAT32), false, 16);
      jx_array *e = jx_scipy_linalg_expm(a, false, 16);
      CHECK_MSG(e && jx_dtype_of(e) == (c64 ? JX_COMPLEX64 : JX_COMPLEX128), "expm: %s", e ? "dtype" : jx_last_error());
      if (!e || !er) continue;
      jx_array *re = jx_slice(er, 2, (int64_t[]){0, 0}, (int64_t[]){5, 5}, NULL);
      jx_array *im = jx_slice(er, 2, (int64_t[]){5, 0}, (int64_t[]){10, 5}, NULL);
      double scale = jx_item(jx_max(jx_abs(e), 0, NULL, false)) + 1;
      double d = fmax(max_abs_diff(jx_real(e), re), max_abs_diff(jx_imag(e), im)) / scale;
      CHECK_MSG(d < (c64 ? 2e-5 : 1e-12), "expm of a %s matrix of 1-norm ~%g: %g from the embedding's", c64 ? "complex64" : "complex128",
                scales[i], d);
    }
  jx_array *z = jx_complex(random_array(JX_FLOAT64, 3, (int64_t[]){3, 4, 4}), random_array(JX_FLOAT64, 3, (int64_t[]){3, 4, 4}));
  jx_array *eb = jx_scipy_linalg_expm(z, false, 16);
  for (int b = 0; b < 3 && eb; b++) {
    jx_array *zb = jx_take(z, jx_scalar_int(b), 0);
    CHECK(max_abs_diff(jx_real(jx_take(eb, jx_scalar_int(b), 0)), jx_real(jx_scipy_linalg_expm(zb, false, 16))) < 1e-13);
  }
  CHECK(jx_scipy_linalg_expm(jx_zeros(2, (int64_t[]){2, 2}, JX_FLOAT16), false, 16) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "float16 is not supported");
  jx_scope_end(0, NULL);
  jx_config_enable_x64(false);
}

/* Norms of empty arrays, as jax 0.10.2: ord 1, 2 and inf take jnp.amax(..., initial=0)
 * -- 0 where nothing is reduced (jaxc's max of nothing failed, naming jx_max); ord -1
 * and -inf take amin without an initial (JAX's ValueError), except where the reduced
 * axis of the min is not empty ((0, 3), ord -1: the column sums are 0). */
static void test_norm_empty(void) {
  jx_scope_begin();
  static const int64_t shapes[3][2] = {{3, 0}, {0, 3}, {0, 0}};
  static const char *const ords[] = {"1", "2", "inf", "fro", "nuc"};
  for (int s = 0; s < 3; s++) {
    jx_array *x = jx_zeros(2, shapes[s], JX_FLOAT32);
    for (int o = 0; o < 5; o++) {
      jx_array *r = jx_linalg_norm(x, ords[o], 0, NULL, false);
      CHECK_MSG(r && jx_ndim(r) == 0 && jx_item(r) == 0, "norm of (%lld, %lld), ord %s: %s", (long long)shapes[s][0],
                (long long)shapes[s][1], ords[o], r ? "not 0" : jx_last_error());
      jx_clear_error();
    }
  }
  jx_array *r = jx_linalg_norm(jx_zeros(2, (int64_t[]){0, 3}, JX_FLOAT32), "-1", 0, NULL, false);
  CHECK(r && jx_item(r) == 0);
  CHECK(jx_linalg_norm(jx_zeros(2, (int64_t[]){3, 0}, JX_FLOAT32), "-1", 0, NULL, false) == NULL);
  CHECK(jx_last_status() == JX_ERR_VALUE);
  jx_clear_error();
  jx_array *v = jx_zeros(1, (int64_t[]){0}, JX_FLOAT32);
  r = jx_linalg_norm(v, "inf", 0, NULL, false);
  CHECK(r && jx_item(r) == 0);
  CHECK(jx_linalg_norm(v, "-inf", 0, NULL, false) == NULL);
  CHECK(jx_last_status() == JX_ERR_VALUE);
  jx_clear_error();
  r = jx_linalg_norm(jx_zeros(3, (int64_t[]){2, 0, 3}, JX_FLOAT32), "inf", 2, (int[]){1, 2}, false);
  CHECK(r && jx_ndim(r) == 1 && jx_shape(r)[0] == 2 && jx_item(jx_sum(r, 0, NULL, false)) == 0);
  jx_scope_end(0, NULL);
}

/* Result dtypes as jax 0.10.2 with x64: scipy lu's p is real for complex a (float64),
 * lstsq's rank int64 also for an empty a; a repeated norm axis is JAX's ValueError. */
static void test_result_dtypes(void) {
  jx_config_enable_x64(true);
  jx_scope_begin();
  jx_array *a = jx_complex(random_array(JX_FLOAT64, 2, (int64_t[]){3, 3}), random_array(JX_FLOAT64, 2, (int64_t[]){3, 3}));
  jx_array *plu[3];
  CHECK(jx_scipy_linalg_lu(a, false, plu) == JX_OK && jx_dtype_of(plu[0]) == JX_FLOAT64 &&
        jx_dtype_of(plu[1]) == JX_COMPLEX128);
  CHECK(max_abs_diff(jx_real(jx_matmul(plu[0], jx_matmul(plu[1], plu[2]))), jx_real(a)) < 1e-12);
  for (int e = 0; e < 2; e++) {
    jx_array *out[4];
    int64_t m = e ? 0 : 4;
    CHECK(jx_linalg_lstsq(jx_ones(2, (int64_t[]){m, 3}, JX_FLOAT64), jx_ones(1, &m, JX_FLOAT64), NAN, out) == JX_OK &&
          jx_dtype_of(out[2]) == JX_INT64);
  }
  CHECK(jx_linalg_norm(a, NULL, 2, (int[]){1, -1}, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_linalg_norm: duplicate value in 'axis'");
  jx_scope_end(0, NULL);
  jx_config_enable_x64(false);
}

int main(void) {
  cases = golden_load("linalg.txt", &ncases);
  TEST_RUN_SPLIT(test_golden);
  TEST_RUN(test_identities);
  TEST_RUN(test_complex_identities);
  TEST_RUN(test_factorization_paths);
  TEST_RUN(test_split_solves);
  TEST_RUN(test_blocked_solves);
  TEST_RUN(test_blocked_lu);
  TEST_RUN(test_blocked_qr);
  TEST_RUN(test_blocked_eigh);
  TEST_RUN(test_blocked_svd);
  TEST_RUN(test_eig_transforms);
  TEST_RUN(test_numeric_grads);
  TEST_RUN(test_eigh_degenerate);
  TEST_RUN(test_vmap_jit);
  TEST_RUN(test_expm_transforms);
  TEST_RUN(test_tridiagonal_transforms);
  TEST_RUN(test_tridiagonal_complex);
  TEST_RUN(test_eigh_nosort);
  TEST_RUN(test_errors);
  TEST_RUN(test_norm_empty);
  TEST_RUN(test_expm_complex);
  TEST_RUN(test_result_dtypes);
  golden_free(cases, ncases);
  return test_finish();
}
