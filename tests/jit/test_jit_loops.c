/* test_jit_loops.c -- whole loops compiled into one function (jit/loop.c, the cpu
 * backend's prepare_loop): while and scan under jit on the default device against the
 * same jitted function on the interpreter (which runs the trips from the host, the
 * oracle), on fixed loops (Newton's method, a matmul fori_loop whose product is a GEMM
 * routine run through the host callback, a reversed scan with several xs and ys, zero
 * trips, a bounded while stopping at its bound, carries exchanged, passed through or
 * copied from another carry, a constant or an x)
 * and on randomized elementwise bodies. On cpu with a compiler the tests also check
 * that the loops did run compiled (jit_loop_count). A jaxpr that does not lower as a whole
 * (a while whose body holds a while, a cond between other operations) runs in compiled
 * pieces (jit/segment.c), checked against C arithmetic. */
#include <stdlib.h>

#include "jit/jit.h"
#include "transform/loops.h"
#include "test.h"

static bool compiled_here(void) {
  const char *d = getenv("JAXC_DEVICE");
  return !d || !strcmp(d, "cpu");
}

/* f on the default device and on the interpreter, jitted each; every output compared
 * (relative tolerance tol); *ran gets the loops run compiled during the default call. */
static void compare(jx_fn *f, int nin, jx_array *const *in, double tol, int64_t *ran) {
  int nout = jx_fn_nout(f);
  jx_fn *jf = jx_jit(f);
  jx_array *got[8] = {NULL}, *want[8] = {NULL}, *iin[8] = {NULL};
  int64_t before = jit_loop_count();
  CHECK_MSG(jx_call(jf, in, got) == JX_OK, "%s: %s", jx_fn_name(f), jx_last_error());
  if (ran) *ran = jit_loop_count() - before;
  for (int i = 0; i < nin; i++) iin[i] = jx_device_put(in[i], "interp");
  CHECK_MSG(jx_call(jf, iin, want) == JX_OK, "%s on interp: %s", jx_fn_name(f), jx_last_error());
  for (int o = 0; o < nout && got[o] && want[o]; o++) {
    CHECK_EQ_INT(jx_dtype_of(got[o]), jx_dtype_of(want[o]));
    CHECK_EQ_INT(jx_size(got[o]), jx_size(want[o]));
    jx_array *g = jx_astype(got[o], JX_FLOAT32), *w = jx_astype(jx_device_put(want[o], jx_device_of(got[o])), JX_FLOAT32);
    int64_t n = jx_size(g);
    float *gv = malloc((size_t)(n + 1) * sizeof *gv), *wv = malloc((size_t)(n + 1) * sizeof *wv);
    jx_read(g, gv, (size_t)n * sizeof *gv), jx_read(w, wv, (size_t)n * sizeof *wv);
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 3; i++)
      if (!(fabs(gv[i] - wv[i]) <= tol * (1 + fabs(wv[i]))) && !(isnan(gv[i]) && isnan(wv[i]))) {
        test_fail(__FILE__, __LINE__, "%s output %d [%lld]: %.9g on %s, %.9g on interp", jx_fn_name(f), o,
                  (long long)i, gv[i], jx_device_of(got[o]), wv[i]);
        bad++;
      }
    free(gv), free(wv);
  }
  for (int o = 0; o < nout; o++) jx_free(got[o]), jx_free(want[o]);
  for (int i = 0; i < nin; i++) jx_free(iin[i]);
  jx_fn_free(jf);
}

/* ---- Newton's method for sqrt(a), scalar: while |y*y - a| > 1e-6 a, at most 100 trips */
static jx_status newton_cond(void *c, jx_array *const *in, jx_array **out) {
  out[0] = jx_logical_and(jx_less(in[0], jx_scalar_int(100)),
                          jx_greater(jx_abs(jx_subtract(jx_multiply(in[1], in[1]), c)), jx_multiply(c, jx_scalar(1e-6))));
  return JX_OK;
}
static jx_status newton_body(void *c, jx_array *const *in, jx_array **out) {
  out[0] = jx_add(in[0], jx_scalar_int(1));
  out[1] = jx_multiply(jx_add(in[1], jx_divide(c, in[1])), jx_scalar(0.5));
  return JX_OK;
}
static jx_status newton(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_fn *cf = jx_fn_new("cond", 2, 1, newton_cond, in[0]), *bf = jx_fn_new("newton", 2, 2, newton_body, in[0]);
  jx_status s = jx_lax_while_loop(cf, bf, 2, (jx_array *[]){jx_astype(jx_scalar_int(0), JX_INT32), in[0]}, out);
  jx_fn_free(cf), jx_fn_free(bf);
  return s;
}

static void test_newton(void) {
  jx_scope_begin();
  jx_fn *f = jx_fn_new("newton", 1, 2, newton, NULL);
  for (int k = 0; k < 4; k++) {
    float a = (float)(k * k) * 37.5f + 2.0f;
    jx_array *x = jx_array_from(&a, JX_FLOAT32, 0, NULL);
    int64_t ran = 0;
    compare(f, 1, &x, 1e-6, &ran);
    if (compiled_here()) CHECK_EQ_INT(ran, 1);
    jx_array *o[2];
    jx_fn *jf = jx_jit(f);
    CHECK(jx_call(jf, &x, o) == JX_OK);
    CHECK_NEAR(jx_item(o[1]), sqrt(a), 1e-5 * sqrt(a));
    CHECK(jx_item(o[0]) > 0 && jx_item(o[0]) < 100);
    jx_free(o[0]), jx_free(o[1]), jx_free(x);
    jx_fn_free(jf);
  }
  jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* ---- fori_loop of x @ w / 8 + 0.01: a GEMM routine inside the loop */
static jx_status mm_body(void *w, jx_array *const *in, jx_array **out) {
  out[0] = jx_add(jx_divide(jx_matmul(in[1], w), jx_scalar(8.0)), jx_scalar(0.01));
  return JX_OK;
}
static jx_status fori_mm(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_fn *bf = jx_fn_new("mm", 2, 1, mm_body, in[1]);
  jx_status s = jx_lax_fori_loop(jx_scalar_int(0), jx_scalar_int(25), bf, 1, in, out);
  jx_fn_free(bf);
  return s;
}

static void test_fori_matmul(void) {
  jx_scope_begin();
  int64_t n = 64;
  jx_array *x = jx_random_uniform(jx_random_key(1), 2, (int64_t[]){n, n}, JX_FLOAT32, 0, 1);
  jx_array *w = jx_random_uniform(jx_random_key(2), 2, (int64_t[]){n, n}, JX_FLOAT32, -1, 1);
  jx_fn *f = jx_fn_new("fori_mm", 2, 1, fori_mm, NULL);
  int64_t ran = 0;
  compare(f, 2, (jx_array *[]){x, w}, 1e-4, &ran);
  if (compiled_here()) CHECK_EQ_INT(ran, 1);
  jx_fn_free(f);
  jx_free(x), jx_free(w);
  jx_scope_end(0, NULL);
}

/* ---- reversed scan: (c, d; x, z) -> (c * 0.9 + x, d + z * c; c + d, x * 2) */
static jx_status sc_body(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_add(jx_multiply(in[0], jx_scalar(0.9)), in[2]);
  out[1] = jx_add(in[1], jx_multiply(in[3], in[0]));
  out[2] = jx_add(in[0], in[1]);
  out[3] = jx_multiply(in[2], jx_scalar(2.0));
  return JX_OK;
}
static jx_status scan2(void *ctx, jx_array *const *in, jx_array **out) {
  jx_fn *bf = jx_fn_new("sc", 4, 4, sc_body, NULL);
  jx_status s = jx_lax_scan(bf, 2, in, 2, in + 2, -1, ctx != NULL, 1, out, out + 2);
  jx_fn_free(bf);
  return s;
}

static void test_scan(void) {
  jx_scope_begin();
  for (int reverse = 0; reverse < 2; reverse++)
    for (int64_t len = 0; len < 9; len += 4) {
      jx_array *c = jx_linspace(0, 1, 5, JX_FLOAT32), *d = jx_ones(1, (int64_t[]){5}, JX_FLOAT32);
      jx_array *xs = jx_random_normal(jx_random_key(3), 2, (int64_t[]){len, 5}, JX_FLOAT32);
      jx_array *zs = jx_random_normal(jx_random_key(4), 2, (int64_t[]){len, 5}, JX_FLOAT32);
      jx_fn *f = jx_fn_new(reverse ? "scan_reverse" : "scan", 4, 4, scan2, reverse ? (void *)1 : NULL);
      int64_t ran = 0;
      compare(f, 4, (jx_array *[]){c, d, xs, zs}, 1e-6, &ran);
      if (compiled_here()) CHECK_EQ_INT(ran, 1);
      jx_fn_free(f);
      jx_free(c), jx_free(d), jx_free(xs), jx_free(zs);
    }
  jx_scope_end(0, NULL);
}

/* ---- carries exchanged (a, b) -> (b, a + b) and one passed through unchanged; a bound */
static jx_status fib_cond(void *c, jx_array *const *in, jx_array **out) {
  (void)c;
  out[0] = jx_less(in[0], jx_scalar(1e6));
  return JX_OK;
}
static jx_status fib_body(void *c, jx_array *const *in, jx_array **out) {
  (void)c;
  out[0] = jx_ref(in[1]);
  out[1] = jx_add(in[0], in[1]);
  out[2] = jx_ref(in[2]);
  return JX_OK;
}
static jx_status fib(void *bounded, jx_array *const *in, jx_array **out) {
  jx_fn *cf = jx_fn_new("fib_cond", 3, 1, fib_cond, NULL), *bf = jx_fn_new("fib", 3, 3, fib_body, NULL);
  jx_status s = bounded ? jx_lax_while_loop_bounded(cf, bf, 7, 3, in, out) : jx_lax_while_loop(cf, bf, 3, in, out);
  jx_fn_free(cf), jx_fn_free(bf);
  return s;
}

static void test_carries(void) {
  jx_scope_begin();
  jx_array *a = jx_scalar(1.0), *b = jx_scalar(1.0), *z = jx_arange(0, 4, 1, JX_FLOAT32);
  a = jx_astype(a, JX_FLOAT32), b = jx_astype(b, JX_FLOAT32);
  for (int bounded = 0; bounded < 2; bounded++) {
    jx_fn *f = jx_fn_new(bounded ? "fib_bounded" : "fib", 3, 3, fib, bounded ? (void *)1 : NULL);
    int64_t ran = 0;
    compare(f, 3, (jx_array *[]){a, b, z}, 0, &ran);
    if (compiled_here()) CHECK_EQ_INT(ran, 1); /* carry 0 <- carry 1: copied, still compiled */
    jx_fn *jf = jx_jit(f);
    jx_array *o[3];
    CHECK(jx_call(jf, (jx_array *[]){a, b, z}, o) == JX_OK);
    CHECK_NEAR(jx_item(o[0]), bounded ? 21 : 1346269, 0); /* F(8), F(31): the first >= 1e6 */
    for (int k = 0; k < 3; k++) jx_free(o[k]);
    jx_fn_free(jf), jx_fn_free(f);
  }
  /* zero trips: the initial carries come back */
  jx_array *big = jx_astype(jx_scalar(2e6), JX_FLOAT32);
  jx_fn *f = jx_fn_new("fib", 3, 3, fib, NULL);
  compare(f, 3, (jx_array *[]){big, b, z}, 0, NULL);
  jx_fn_free(f);
  jx_free(big), jx_free(a), jx_free(b), jx_free(z);
  jx_scope_end(0, NULL);
}

/* ---- carries whose new value is not a temporary of their own: an x, a constant, a
 * carry swapped with another, the same value for two carries (copied, still compiled) */
static jx_status cp_body(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx; /* (a, b, c, d; x) -> (x, 3, a + b, a + b; a) */
  jx_array *s = jx_add(in[0], in[1]);
  out[0] = jx_ref(in[4]);
  out[1] = jx_full(1, (int64_t[]){4}, 3.0, JX_FLOAT32);
  out[2] = s, out[3] = jx_ref(s);
  out[4] = jx_ref(in[0]);
  return JX_OK;
}
static jx_status cp_scan(void *ctx, jx_array *const *in, jx_array **out) {
  jx_fn *bf = jx_fn_new("cp", 5, 5, cp_body, NULL);
  jx_status s = jx_lax_scan(bf, 4, in, 1, in + 4, -1, ctx != NULL, 1, out, out + 4);
  jx_fn_free(bf);
  return s;
}
static void test_carry_copies(void) {
  jx_scope_begin();
  for (int reverse = 0; reverse < 2; reverse++) {
    jx_array *in[5] = {jx_linspace(0, 1, 4, JX_FLOAT32), jx_ones(1, (int64_t[]){4}, JX_FLOAT32),
                       jx_zeros(1, (int64_t[]){4}, JX_FLOAT32), jx_zeros(1, (int64_t[]){4}, JX_FLOAT32),
                       jx_random_normal(jx_random_key(11), 2, (int64_t[]){5, 4}, JX_FLOAT32)};
    jx_fn *f = jx_fn_new(reverse ? "carry_copies_reverse" : "carry_copies", 5, 5, cp_scan, reverse ? (void *)1 : NULL);
    int64_t ran = 0;
    compare(f, 5, in, 0, &ran);
    if (compiled_here()) CHECK_EQ_INT(ran, 1);
    jx_fn_free(f);
  }
  jx_scope_end(0, NULL);
}

/* ---- randomized bodies: carries c0, c1 (n,) float32 and xs (len, n); each output an
 * expression of up to 6 ops drawn from a seed over the inputs and constants */
typedef struct Rand {
  unsigned seed;
  int ncarry, nx, ny;
} Rand;

static unsigned next(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 16;
}

static jx_array *rand_expr(unsigned *s, int nin, jx_array *const *in) {
  jx_array *v = in[next(s) % (unsigned)nin];
  int nops = 1 + (int)(next(s) % 6);
  for (int k = 0; k < nops; k++) {
    jx_array *w = next(s) % 3 ? in[next(s) % (unsigned)nin] : jx_scalar((double)(next(s) % 7) / 4.0 - 0.75);
    switch (next(s) % 8) {
    case 0: v = jx_add(v, w); break;
    case 1: v = jx_subtract(v, w); break;
    case 2: v = jx_multiply(v, jx_tanh(w)); break;
    case 3: v = jx_sin(v); break;
    case 4: v = jx_maximum(v, w); break;
    case 5: v = jx_where(jx_greater(v, w), v, jx_multiply(w, jx_scalar(0.5))); break;
    case 6: v = jx_multiply(v, jx_scalar(0.75)); break;
    default: v = jx_add(v, jx_sum(w, 0, NULL, true)); break; /* a reduction */
    }
  }
  return jx_tanh(v); /* bounded: trips cannot overflow */
}

static jx_status rand_body(void *ctx, jx_array *const *in, jx_array **out) {
  const Rand *r = ctx;
  unsigned s = r->seed;
  int nin = r->ncarry + r->nx;
  for (int o = 0; o < r->ncarry + r->ny; o++) out[o] = rand_expr(&s, nin, in);
  return JX_OK;
}
static jx_status rand_scan(void *ctx, jx_array *const *in, jx_array **out) {
  Rand *r = ctx;
  jx_fn *bf = jx_fn_new("rand_body", r->ncarry + r->nx, r->ncarry + r->ny, rand_body, r);
  jx_status s = jx_lax_scan(bf, r->ncarry, in, r->nx, in + r->ncarry, -1, r->seed % 2, 1, out, out + r->ncarry);
  jx_fn_free(bf);
  return s;
}
/* while: carry (i, c...) with i < 5 + seed % 7 */
static jx_status rand_cond(void *ctx, jx_array *const *in, jx_array **out) {
  const Rand *r = ctx;
  out[0] = jx_less(in[0], jx_scalar_int(5 + (int)(r->seed % 7)));
  return JX_OK;
}
static jx_status rand_wbody(void *ctx, jx_array *const *in, jx_array **out) {
  Rand r = *(const Rand *)ctx;
  r.nx = r.ny = 0; /* the carries only */
  out[0] = jx_add(in[0], jx_scalar_int(1));
  return rand_body(&r, in + 1, out + 1);
}
static jx_status rand_while(void *ctx, jx_array *const *in, jx_array **out) {
  Rand *r = ctx;
  jx_fn *cf = jx_fn_new("rand_cond", 1 + r->ncarry, 1, rand_cond, r);
  jx_fn *bf = jx_fn_new("rand_wbody", 1 + r->ncarry, 1 + r->ncarry, rand_wbody, r);
  jx_array *init[8] = {jx_astype(jx_scalar_int(0), JX_INT32)};
  for (int i = 0; i < r->ncarry; i++) init[1 + i] = in[i];
  jx_status s = jx_lax_while_loop(cf, bf, 1 + r->ncarry, init, out);
  jx_fn_free(cf), jx_fn_free(bf);
  return s;
}

static void test_random_bodies(void) {
  int64_t n = 6, len = 7, compiled = 0;
  for (unsigned seed = 1; seed <= 24; seed++) {
    jx_scope_begin();
    Rand r = {.seed = seed * 2654435761u, .ncarry = 1 + (int)(seed % 2), .nx = 1 + (int)(seed % 3 == 0), .ny = (int)(seed % 3)};
    jx_array *in[6];
    for (int i = 0; i < r.ncarry; i++) in[i] = jx_random_normal(jx_random_key(seed * 10 + i), 1, (int64_t[]){n}, JX_FLOAT32);
    for (int i = 0; i < r.nx; i++)
      in[r.ncarry + i] = jx_random_normal(jx_random_key(seed * 10 + 5 + i), 2, (int64_t[]){len, n}, JX_FLOAT32);
    jx_fn *fs = jx_fn_new("rand_scan", r.ncarry + r.nx, r.ncarry + r.ny, rand_scan, &r);
    jx_fn *fw = jx_fn_new("rand_while", r.ncarry, 1 + r.ncarry, rand_while, &r);
    int64_t ran = 0;
    compare(fs, r.ncarry + r.nx, in, 1e-5, &ran);
    compiled += ran;
    compare(fw, r.ncarry, in, 1e-5, &ran);
    compiled += ran;
    jx_fn_free(fs), jx_fn_free(fw);
    jx_scope_end(0, NULL);
  }
  if (compiled_here()) CHECK_MSG(compiled >= 40, "only %lld of 48 random loops ran compiled", (long long)compiled);
}

/* ---- scan partial evaluation: an LSTM's value_and_grad runs the forward once. The
 * known scan saves residuals (stacked per trip), the transposed tangent scan runs
 * backward over them; so jit(value_and_grad) runs two loops (not three: no forward
 * recomputed for the transpose) and its jaxpr holds two scans and five products (the
 * forward's two, the backward's three), where the unsplit rule needed nine. */
enum { LB = 3, LH = 4, LT = 6 };
static jx_status lstm_cell(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array **p = ctx; /* W (H, 4H), U (H, 4H), b (4H); carry h, c (B, H); x (B, H) */
  jx_array *z = jx_add(jx_add(jx_matmul(in[2], p[0]), jx_matmul(in[0], p[1])), p[2]);
  jx_array *g[4];
  for (int k = 0; k < 4; k++) g[k] = jx_slice(z, 2, (int64_t[]){0, k * LH}, (int64_t[]){LB, (k + 1) * LH}, NULL);
  jx_array *c = jx_add(jx_mul(jx_nn_sigmoid(g[1]), in[1]), jx_mul(jx_nn_sigmoid(g[0]), jx_tanh(g[2])));
  jx_array *h = jx_mul(jx_nn_sigmoid(g[3]), jx_tanh(c));
  out[0] = h, out[1] = c, out[2] = h;
  return JX_OK;
}
/* (W, U, b, xs (T, B, H), h0, c0) -> mean(ys^2) + sum(c_T); ctx non-NULL: reversed */
static jx_status lstm_loss(void *ctx, jx_array *const *in, jx_array **out) {
  jx_fn *cell = jx_fn_new("lstm_cell", 3, 3, lstm_cell, (void *)in);
  jx_array *carry[2], *ys[1];
  jx_status s = jx_lax_scan(cell, 2, in + 4, 1, in + 3, -1, ctx != NULL, 1, carry, ys);
  jx_fn_free(cell);
  if (s != JX_OK) return s;
  out[0] = jx_add(jx_mean(jx_mul(ys[0], ys[0]), 0, NULL, false), jx_sum(carry[1], 0, NULL, false));
  return JX_OK;
}
static jx_status lstm_unrolled(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_array *h = in[4], *c = in[5], *total = jx_scalar(0.0);
  for (int64_t t = 0; t < LT; t++) {
    jx_array *x = jx_squeeze(jx_slice(in[3], 1, (int64_t[]){t}, (int64_t[]){t + 1}, NULL), 1, (int[]){0});
    jx_array *r[3];
    lstm_cell((void *)in, (jx_array *[]){h, c, x}, r);
    total = jx_add(total, jx_sum(jx_mul(r[2], r[2]), 0, NULL, false));
    h = r[0], c = r[1];
  }
  out[0] = jx_add(jx_divide(total, jx_scalar((double)(LT * LB * LH))), jx_sum(c, 0, NULL, false));
  return JX_OK;
}
static int count_of(const char *text, const char *word) {
  int n = 0;
  for (const char *p = text; p && (p = strstr(p, word)); p += strlen(word)) n++;
  return n;
}
static void test_scan_partial_eval(void) {
  jx_scope_begin();
  jx_array *in[6] = {jx_random_normal(jx_random_key(5), 2, (int64_t[]){LH, 4 * LH}, JX_FLOAT32),
                     jx_random_normal(jx_random_key(6), 2, (int64_t[]){LH, 4 * LH}, JX_FLOAT32),
                     jx_random_normal(jx_random_key(7), 1, (int64_t[]){4 * LH}, JX_FLOAT32),
                     jx_random_normal(jx_random_key(8), 3, (int64_t[]){LT, LB, LH}, JX_FLOAT32),
                     jx_random_normal(jx_random_key(9), 2, (int64_t[]){LB, LH}, JX_FLOAT32),
                     jx_zeros(2, (int64_t[]){LB, LH}, JX_FLOAT32)};
  jx_fn *f = jx_fn_new("lstm", 6, 1, lstm_loss, NULL);
  jx_fn *vg = jx_value_and_grad(f, 4, (int[]){0, 1, 2, 4});
  int64_t ran = 0;
  compare(vg, 6, in, 1e-4, &ran);
  if (compiled_here()) CHECK_EQ_INT(ran, 2);
  char *text = jx_make_jaxpr(vg, in);
  CHECK_MSG(text && count_of(text, "= scan[") == 2, "%d scans", count_of(text, "= scan["));
  CHECK_MSG(text && count_of(text, "dot_general") == 5, "%d products", count_of(text, "dot_general"));
  free(text);
  /* against the same loss unrolled in C (no scan) */
  jx_fn *fu = jx_fn_new("lstm_unrolled", 6, 1, lstm_unrolled, NULL);
  jx_fn *vgu = jx_value_and_grad(fu, 4, (int[]){0, 1, 2, 4}), *jvg = jx_jit(vg);
  jx_array *got[5] = {NULL}, *want[5] = {NULL};
  CHECK(jx_call(jvg, in, got) == JX_OK);
  CHECK(jx_call(vgu, in, want) == JX_OK);
  for (int o = 0; o < 5 && got[o] && want[o]; o++) {
    double d = jx_item(jx_max(jx_abs(jx_subtract(got[o], want[o])), 0, NULL, false));
    double m = jx_item(jx_max(jx_abs(want[o]), 0, NULL, false));
    CHECK_MSG(d <= 1e-4 * (1 + m), "output %d: off by %g (max %g)", o, d, m);
  }
  jx_fn_free(fu), jx_fn_free(vgu);
  jx_fn_free(jvg), jx_fn_free(vg), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* ---- jit's hoisting of products out of scans (transform/loops_hoist.c): the LSTM's
 * input projection x_t @ W runs once for all trips before the forward loop, and the
 * backward loop's weight gradients acc + x_t^T g_t, h_t^T g_t become one product each
 * after it; values and gradients equal the eager (unhoisted) ones, forward and reversed. */
static char *hoisted_text(jx_fn *f, int nin, jx_array *const *in) {
  Trace *t = stage_begin();
  jx_array *ins[8], *outs[8];
  jx_scope_begin();
  for (int i = 0; i < nin; i++) {
    Aval a = prim_aval_of(in[i]);
    ins[i] = stage_new_input(t, &a);
  }
  CHECK(jx_call(f, ins, outs) == JX_OK);
  Jaxpr *j = stage_end(t, jx_fn_nout(f), outs);
  jx_scope_end(0, NULL);
  CHECK(j && jaxpr_simplify(j) == JX_OK);
  j = loops_hoist_scans(j);
  char *text = jaxpr_print(j);
  jaxpr_free(j);
  return text;
}
static void test_scan_hoisting(void) {
  jx_scope_begin();
  jx_array *in[6] = {jx_random_normal(jx_random_key(15), 2, (int64_t[]){LH, 4 * LH}, JX_FLOAT32),
                     jx_random_normal(jx_random_key(16), 2, (int64_t[]){LH, 4 * LH}, JX_FLOAT32),
                     jx_random_normal(jx_random_key(17), 1, (int64_t[]){4 * LH}, JX_FLOAT32),
                     jx_random_normal(jx_random_key(18), 3, (int64_t[]){LT, LB, LH}, JX_FLOAT32),
                     jx_random_normal(jx_random_key(19), 2, (int64_t[]){LB, LH}, JX_FLOAT32),
                     jx_random_normal(jx_random_key(20), 2, (int64_t[]){LB, LH}, JX_FLOAT32)};
  for (int reverse = 0; reverse < 2; reverse++) {
    jx_fn *f = jx_fn_new("lstm", 6, 1, lstm_loss, reverse ? (void *)1 : NULL);
    jx_fn *vg = jx_value_and_grad(f, 4, (int[]){0, 1, 2, 3});
    char *text = hoisted_text(f, 6, in);
    CHECK_MSG(text && strstr(text, "f32[6,3,16] = dot_general"), "input projection not hoisted:\n%s", text);
    free(text);
    text = hoisted_text(vg, 6, in);
    CHECK_MSG(text && count_of(text, "dot_general[dimension_numbers=(([0, 1], [0, 1])") == 2,
              "weight gradients not hoisted:\n%s", text);
    free(text);
    jx_fn *jf = jx_jit(f), *jvg = jx_jit(vg);
    jx_array *got[5] = {NULL}, *want[5] = {NULL};
    CHECK(jx_call(jf, in, got) == JX_OK && jx_call(f, in, want) == JX_OK);
    CHECK_MSG(fabs(jx_item(got[0]) - jx_item(want[0])) <= 1e-5 * (1 + fabs(jx_item(want[0]))), "loss");
    jx_free(got[0]), jx_free(want[0]);
    CHECK(jx_call(jvg, in, got) == JX_OK && jx_call(vg, in, want) == JX_OK);
    for (int o = 0; o < 5 && got[o] && want[o]; o++) {
      double d = jx_item(jx_max(jx_abs(jx_subtract(got[o], want[o])), 0, NULL, false));
      double m = jx_item(jx_max(jx_abs(want[o]), 0, NULL, false));
      CHECK_MSG(d <= 1e-4 * (1 + m), "reverse %d output %d: off by %g (max %g)", reverse, o, d, m);
    }
    jx_fn_free(jf), jx_fn_free(jvg), jx_fn_free(vg), jx_fn_free(f);
  }
  jx_scope_end(0, NULL);
}

/* ---- compiled pieces (jit/segment.c): a jaxpr that does not lower as a whole runs its
 * runs of lowering equations as compiled sub-programs. f(x, w): a = 2x + 1, t = a w;
 * 4 trips of { y = exp(-t^2) + cos t; 3 inner trips of z = sin(z) / 2 + z / 4 from y;
 * t = 0.9 z + tanh t } (the outer body holds a while: it does not lower, so its pieces
 * do, as gamma's rejection loops); outputs u a + w (a crosses the loop), x itself and
 * u - 3. Checked against the same arithmetic in C doubles. */
static jx_status inner_cond(void *c, jx_array *const *in, jx_array **out) {
  (void)c;
  out[0] = jx_less(in[0], jx_scalar_int(3));
  return JX_OK;
}
static jx_status inner_body(void *c, jx_array *const *in, jx_array **out) {
  (void)c;
  out[0] = jx_add(in[0], jx_scalar_int(1));
  out[1] = jx_add(jx_multiply(jx_sin(in[1]), jx_scalar(0.5)), jx_multiply(in[1], jx_scalar(0.25)));
  return JX_OK;
}
static jx_status outer_cond(void *c, jx_array *const *in, jx_array **out) {
  (void)c;
  out[0] = jx_less(in[0], jx_scalar_int(4));
  return JX_OK;
}
static jx_status outer_body(void *c, jx_array *const *in, jx_array **out) {
  (void)c;
  jx_array *t = in[1], *y = jx_add(jx_exp(jx_negative(jx_multiply(t, t))), jx_cos(t)), *r[2];
  jx_fn *cf = jx_fn_new("inner_cond", 2, 1, inner_cond, NULL), *bf = jx_fn_new("inner", 2, 2, inner_body, NULL);
  jx_status s = jx_lax_while_loop(cf, bf, 2, (jx_array *[]){jx_astype(jx_scalar_int(0), JX_INT32), y}, r);
  jx_fn_free(cf), jx_fn_free(bf);
  if (s != JX_OK) return s;
  out[0] = jx_add(in[0], jx_scalar_int(1));
  out[1] = jx_add(jx_multiply(r[1], jx_scalar(0.9)), jx_tanh(t));
  return JX_OK;
}
static jx_status nested(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_array *a = jx_add(jx_multiply(in[0], jx_scalar(2.0)), jx_scalar(1.0)), *r[2];
  jx_fn *cf = jx_fn_new("outer_cond", 2, 1, outer_cond, NULL), *bf = jx_fn_new("outer", 2, 2, outer_body, NULL);
  jx_status s = jx_lax_while_loop(cf, bf, 2, (jx_array *[]){jx_astype(jx_scalar_int(0), JX_INT32), jx_multiply(a, in[1])}, r);
  jx_fn_free(cf), jx_fn_free(bf);
  if (s != JX_OK) return s;
  out[0] = jx_add(jx_multiply(r[1], a), in[1]);
  out[1] = jx_ref(in[0]);
  out[2] = jx_subtract(r[1], jx_scalar(3.0));
  return JX_OK;
}

/* f2(x): cond(sum(x) > 0, sin, cos) of 3x, plus x^2 -- a cond between two pieces */
static jx_status br_sin(void *c, jx_array *const *in, jx_array **out) {
  (void)c;
  out[0] = jx_sin(in[0]);
  return JX_OK;
}
static jx_status br_cos(void *c, jx_array *const *in, jx_array **out) {
  (void)c;
  out[0] = jx_cos(in[0]);
  return JX_OK;
}
static jx_status with_cond(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_fn *t = jx_fn_new("sin", 1, 1, br_sin, NULL), *f = jx_fn_new("cos", 1, 1, br_cos, NULL);
  jx_array *p = jx_greater(jx_sum(jx_multiply(in[0], jx_scalar(0.5)), 0, NULL, false), jx_scalar(0.0)), *r = NULL;
  jx_status s = jx_lax_cond(p, t, f, 1, (jx_array *[]){jx_multiply(in[0], jx_scalar(3.0))}, &r);
  jx_fn_free(t), jx_fn_free(f);
  if (s != JX_OK) return s;
  out[0] = jx_add(r, jx_multiply(in[0], in[0]));
  return JX_OK;
}

static void test_pieces(void) {
  jx_scope_begin();
  enum { N = 37 };
  float x[N], w[N];
  for (int i = 0; i < N; i++) x[i] = (float)(i - 18) / 9.0f, w[i] = 0.5f + (float)i / 40.0f;
  jx_array *xa = jx_array_from(x, JX_FLOAT32, 1, (int64_t[]){N}), *wa = jx_array_from(w, JX_FLOAT32, 1, (int64_t[]){N});
  jx_fn *f = jx_fn_new("nested", 2, 3, nested, NULL), *jf = jx_jit(f);
  for (int call = 0; call < 2; call++) { /* the second call reuses the compiled pieces */
    jx_array *o[3] = {NULL};
    int64_t before = jit_segment_count();
    CHECK_MSG(jx_call(jf, (jx_array *[]){xa, wa}, o) == JX_OK, "%s", jx_last_error());
    CHECK(jit_segment_count() > before);
    float u0[N], u1[N], u2[N];
    CHECK(o[0] && o[1] && o[2]);
    if (!o[0] || !o[1] || !o[2]) break;
    jx_read(o[0], u0, sizeof u0), jx_read(o[1], u1, sizeof u1), jx_read(o[2], u2, sizeof u2);
    for (int i = 0; i < N; i++) {
      double a = 2.0 * x[i] + 1, t = a * w[i];
      for (int n = 0; n < 4; n++) {
        double z = exp(-t * t) + cos(t);
        for (int k = 0; k < 3; k++) z = sin(z) * 0.5 + z * 0.25;
        t = z * 0.9 + tanh(t);
      }
      CHECK_NEAR(u0[i], t * a + w[i], 1e-5 * (1 + fabs(t * a + w[i])));
      CHECK_EQ_INT(u1[i] == x[i], 1);
      CHECK_NEAR(u2[i], t - 3, 1e-5 * (1 + fabs(t - 3)));
    }
  }
  jx_fn *g = jx_fn_new("with_cond", 1, 1, with_cond, NULL), *jg = jx_jit(g);
  for (int sign = -1; sign <= 1; sign += 2) {
    jx_array *xs = jx_multiply(xa, jx_scalar(sign)), *r = NULL;
    jx_array *shifted = jx_add(xs, jx_scalar(0.1 * sign)); /* sum(x) != 0 */
    int64_t before = jit_segment_count();
    CHECK_MSG(jx_call(jg, &shifted, &r) == JX_OK, "%s", jx_last_error());
    CHECK_EQ_INT(jit_segment_count(), before + 2); /* the pieces before and after the cond */
    float got[N], in[N];
    jx_read(r, got, sizeof got), jx_read(shifted, in, sizeof in);
    double sum = 0;
    for (int i = 0; i < N; i++) sum += in[i];
    for (int i = 0; i < N; i++) {
      double want = (sum > 0 ? sin(3.0 * in[i]) : cos(3.0 * in[i])) + (double)in[i] * in[i];
      CHECK_NEAR(got[i], want, 1e-5 * (1 + fabs(want)));
    }
  }
  jx_fn_free(jg), jx_fn_free(g), jx_fn_free(jf), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* ---- a loop body holding a call (a special function's special_call): lowered with the
 * call inlined, so the loop still runs compiled (poisson's rejection loop calls lgamma).
 * 5 trips of c = c / 2 + lgamma(c + 1) / 10, against C's lgamma. */
static jx_status lg_body(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_add(jx_multiply(in[1], jx_scalar(0.5)),
                  jx_multiply(jx_special_gammaln(jx_add(in[1], jx_scalar(1.0))), jx_scalar(0.1)));
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status fori_lgamma(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_fn *bf = jx_fn_new("lg", 2, 1, lg_body, NULL);
  jx_status s = jx_lax_fori_loop(jx_scalar_int(0), jx_scalar_int(5), bf, 1, in, out);
  jx_fn_free(bf);
  return s;
}

static void test_call_in_body(void) {
  jx_scope_begin();
  enum { N = 19 };
  float x[N], got[N];
  for (int i = 0; i < N; i++) x[i] = 0.25f + (float)i * 0.7f;
  jx_array *xa = jx_array_from(x, JX_FLOAT32, 1, (int64_t[]){N}), *r = NULL;
  jx_fn *f = jx_fn_new("fori_lgamma", 1, 1, fori_lgamma, NULL), *jf = jx_jit(f);
  int64_t before = jit_loop_count();
  CHECK_MSG(jx_call(jf, &xa, &r) == JX_OK, "%s", jx_last_error());
  if (compiled_here()) CHECK_EQ_INT(jit_loop_count(), before + 1);
  jx_read(r, got, sizeof got);
  for (int i = 0; i < N; i++) {
    double c = x[i];
    for (int t = 0; t < 5; t++) c = c * 0.5 + lgamma(c + 1) * 0.1;
    CHECK_NEAR(got[i], c, 1e-5 * (1 + fabs(c)));
  }
  jx_fn_free(jf), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* ---- randomized pieces: programs of elementwise steps, while loops and conds over a
 * pool of values (each step reads random earlier ones, so values cross the control
 * equations), three random pool values out (an input possibly among them). jit(f) on
 * the default device -- top level in pieces -- against f run eagerly on the
 * interpreter, the oracle. */
typedef struct PieceGen {
  unsigned seed, state;
} PieceGen;
static unsigned pg_next(PieceGen *g) { return g->state = g->state * 1103515245u + 12345u, g->state >> 16; }
static jx_status pg_body(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_add(in[0], jx_scalar_int(1));
  out[1] = jx_add(jx_multiply(jx_tanh(in[1]), jx_scalar(0.75)), jx_scalar(0.125));
  return JX_OK;
}
static jx_status pg_cond(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_less(in[0], jx_scalar_int(3));
  return JX_OK;
}
static jx_status random_pieces(void *ctx, jx_array *const *in, jx_array **out) {
  PieceGen *g = ctx;
  g->state = g->seed; /* the same program at every call */
  jx_array *pool[32] = {in[0], in[1]};
  int n = 2;
  jx_fn *t = jx_fn_new("sin", 1, 1, br_sin, NULL), *f = jx_fn_new("cos", 1, 1, br_cos, NULL);
  jx_fn *cf = jx_fn_new("pg_cond", 2, 1, pg_cond, NULL), *bf = jx_fn_new("pg_body", 2, 2, pg_body, NULL);
  jx_status s = JX_OK;
  for (int k = 0; k < 14 && s == JX_OK; k++) {
    jx_array *a = pool[pg_next(g) % n], *b = pool[pg_next(g) % n], *r = NULL;
    switch (pg_next(g) % 8) {
    case 0: r = jx_add(a, b); break;
    case 1: r = jx_multiply(a, jx_scalar(0.5)); break;
    case 2: r = jx_sin(jx_subtract(a, b)); break;
    case 3: r = jx_maximum(a, jx_tanh(b)); break;
    case 4: r = jx_add(jx_exp(jx_negative(jx_abs(a))), b); break;
    case 5: { /* a while loop of three trips */
      jx_array *o[2];
      s = jx_lax_while_loop(cf, bf, 2, (jx_array *[]){jx_astype(jx_scalar_int(0), JX_INT32), a}, o);
      r = s == JX_OK ? o[1] : NULL;
      break;
    }
    case 6: { /* cond on the sign of a's sum */
      jx_array *p = jx_greater(jx_sum(a, 0, NULL, false), jx_scalar(0.0));
      s = jx_lax_cond(p, t, f, 1, &b, &r);
      break;
    }
    default: r = jx_multiply(a, b);
    }
    if (s == JX_OK && !r) s = jx_last_status();
    if (s == JX_OK) pool[n++] = r;
  }
  for (int o = 0; o < 3 && s == JX_OK; o++) out[o] = jx_ref(pool[pg_next(g) % n]);
  jx_fn_free(t), jx_fn_free(f), jx_fn_free(cf), jx_fn_free(bf);
  return s;
}

static void test_random_pieces(void) {
  int64_t n = 11, pieces = jit_segment_count();
  for (unsigned seed = 1; seed <= 30; seed++) {
    jx_scope_begin();
    PieceGen g = {.seed = seed * 2654435761u};
    jx_array *in[2] = {jx_random_normal(jx_random_key(seed), 1, &n, JX_FLOAT32),
                       jx_random_normal(jx_random_key(seed + 100), 1, &n, JX_FLOAT32)};
    jx_fn *f = jx_fn_new("random_pieces", 2, 3, random_pieces, &g), *jf = jx_jit(f);
    jx_array *got[3] = {NULL}, *want[3] = {NULL};
    jx_array *iin[2] = {jx_device_put(in[0], "interp"), jx_device_put(in[1], "interp")};
    CHECK_MSG(jx_call(jf, in, got) == JX_OK, "seed %u: %s", seed, jx_last_error());
    CHECK_MSG(jx_call(f, iin, want) == JX_OK, "seed %u eager on interp: %s", seed, jx_last_error());
    for (int o = 0; o < 3 && got[o] && want[o]; o++) {
      float gv[11], wv[11];
      jx_read(got[o], gv, sizeof gv), jx_read(want[o], wv, sizeof wv);
      for (int i = 0; i < n; i++)
        CHECK_MSG(fabsf(gv[i] - wv[i]) <= 1e-5f * (1 + fabsf(wv[i])), "seed %u output %d [%d]: %.9g jit, %.9g eager",
                  seed, o, i, gv[i], wv[i]);
    }
    jx_fn_free(jf), jx_fn_free(f);
    jx_scope_end(0, NULL);
  }
  CHECK(jit_segment_count() > pieces + 20);
}

int main(void) {
  int64_t fns = jx_live_fns();
  TEST_RUN(test_newton);
  TEST_RUN(test_fori_matmul);
  TEST_RUN(test_scan);
  TEST_RUN(test_carries);
  TEST_RUN(test_carry_copies);
  TEST_RUN(test_random_bodies);
  TEST_RUN(test_scan_partial_eval);
  TEST_RUN(test_scan_hoisting);
  TEST_RUN(test_pieces);
  TEST_RUN(test_call_in_body);
  TEST_RUN(test_random_pieces);
  if (jx_live_fns() != fns) test_fail(__FILE__, __LINE__, "leaked %lld functions", (long long)(jx_live_fns() - fns));
  return test_finish();
}
