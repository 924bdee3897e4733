/* test_control.c -- lax.switch / lax.cond (src/lib/control.c) against JAX goldens
 * (tools/golden_control.py -> tests/golden/control.txt): values, grad, jvp and vmap
 * with a batched and an unbatched index, each run eagerly and under jit, also of
 * branches closing over traced values (inside a scan too) and over a constant; the
 * jaxpr text against JAX's; bad input with clear errors. Leaks are checked by TEST_RUN. */
#include <stdlib.h>

#include "golden.h"
#include "test.h"

static jx_fn *B[3]; /* sin(x) * y, cos(x) + y, x * x * y */

static jx_status b0(void *c, jx_array *const *x, jx_array **o) { (void)c; o[0] = jx_multiply(jx_sin(x[0]), x[1]); return JX_OK; }
static jx_status b1(void *c, jx_array *const *x, jx_array **o) { (void)c; o[0] = jx_add(jx_cos(x[0]), x[1]); return JX_OK; }
static jx_status b2(void *c, jx_array *const *x, jx_array **o) { (void)c; o[0] = jx_multiply(jx_multiply(x[0], x[0]), x[1]); return JX_OK; }

static jx_status f_switch3(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  return jx_lax_switch(x[0], 3, B, 2, x + 1, o);
}
static jx_status f_cond2(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  return jx_lax_cond(x[0], B[0], B[1], 2, x + 1, o);
}
static jx_status f_loss(void *c, jx_array *const *x, jx_array **o) {
  jx_array *s[1];
  jx_status st = c ? f_cond2(NULL, x, s) : f_switch3(NULL, x, s);
  o[0] = st == JX_OK ? jx_sum(s[0], 0, NULL, false) : NULL;
  return st;
}
/* switch3 with the index from ctx: a function of (x, y) only, for jvp */
static jx_status f_switch_xy(void *c, jx_array *const *x, jx_array **o) {
  return jx_lax_switch(c, 3, B, 2, x, o);
}
/* (i, p_1..p_n, t_1..t_n) -> jvp of f(i; p...) at p along t: f takes the index as ctx */
static jx_status jvp_with_index(jx_status (*f)(void *, jx_array *const *, jx_array **), int n, jx_array *const *x,
                                jx_array **o) {
  jx_fn *g = jx_fn_new("f_of_index", n, 1, f, x[0]);
  jx_status s = jx_jvp(g, x + 1, x + 1 + n, o, o + 1);
  jx_fn_free(g);
  return s;
}
static jx_status f_jvp(void *c, jx_array *const *x, jx_array **o) { return jvp_with_index(f_switch_xy, 2, x, o); }

/* sum(f(x...)) for f held in ctx */
static jx_status f_sum_of(void *c, jx_array *const *x, jx_array **o) {
  jx_array *r[1];
  jx_status s = jx_call(c, x, r);
  o[0] = s == JX_OK ? jx_sum(r[0], 0, NULL, false) : NULL;
  return s;
}
static void fn_free(void *c) { jx_fn_free(c); }

/* ---- branches closing over traced values (tools/golden_control.py's closure_cases):
 * w and v reach the branches through ctx, so they are values the enclosing
 * transformation traces, joined as leading operands of the cond. */
static jx_status c_sin_xw(void *w, jx_array *const *x, jx_array **o) { o[0] = jx_sin(jx_multiply(x[0], w)); return JX_OK; }
static jx_status c_cos(void *c, jx_array *const *x, jx_array **o) { (void)c; o[0] = jx_cos(x[0]); return JX_OK; }
static jx_status c_add_v(void *v, jx_array *const *x, jx_array **o) { o[0] = jx_add(x[0], v); return JX_OK; }
static jx_status c_mul_wv(void *wv, jx_array *const *x, jx_array **o) {
  jx_array **a = wv;
  o[0] = jx_multiply(jx_multiply(x[0], a[0]), a[1]);
  return JX_OK;
}
static jx_status c_mul(void *c, jx_array *const *x, jx_array **o) { o[0] = jx_multiply(x[0], c); return JX_OK; }
static jx_status c_half_plus_w(void *w, jx_array *const *x, jx_array **o) {
  o[0] = jx_add(jx_multiply(x[0], jx_scalar(0.5)), w);
  return JX_OK;
}

/* cond_closure(p, w, x): true sin(x * w), false cos(x) */
static jx_status f_cond_closure(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  jx_fn *t = jx_fn_new("sin_xw", 1, 1, c_sin_xw, x[1]), *e = jx_fn_new("cos", 1, 1, c_cos, NULL);
  jx_status s = jx_lax_cond(x[0], t, e, 1, &x[2], o);
  jx_fn_free(t), jx_fn_free(e);
  return s;
}
/* switch_closure(i, w, v, x): sin(x * w), x + v, x * w * v */
static jx_status f_switch_closure(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  jx_array *wv[2] = {x[1], x[2]};
  jx_fn *b[3] = {jx_fn_new("sin_xw", 1, 1, c_sin_xw, x[1]), jx_fn_new("add_v", 1, 1, c_add_v, x[2]),
                 jx_fn_new("mul_wv", 1, 1, c_mul_wv, wv)};
  jx_status s = jx_lax_switch(x[0], 3, b, 1, &x[3], o);
  for (int k = 0; k < 3; k++) jx_fn_free(b[k]);
  return s;
}
/* (w, v, x) -> switch_closure(i, w, v, x), i = ctx */
static jx_status f_switch_closure_wvx(void *i, jx_array *const *x, jx_array **o) {
  return f_switch_closure(NULL, (jx_array *[]){i, x[0], x[1], x[2]}, o);
}
/* (i, w, v, x, tw, tv, tx) -> jvp of f_switch_closure_wvx */
static jx_status f_jvp_switch_closure(void *c, jx_array *const *x, jx_array **o) {
  return jvp_with_index(f_switch_closure_wvx, 3, x, o);
}
/* (c, x) -> (c', c' * x), c' = cond(x > 0, sin(c * w), c * 0.5 + w), w = ctx */
static jx_status scan_cond_body(void *w, jx_array *const *x, jx_array **o) {
  jx_fn *t = jx_fn_new("sin_cw", 1, 1, c_sin_xw, w), *e = jx_fn_new("half_plus_w", 1, 1, c_half_plus_w, w);
  jx_status s = jx_lax_cond(jx_greater(x[1], jx_scalar(0.0)), t, e, 1, x, o);
  jx_fn_free(t), jx_fn_free(e);
  o[1] = s == JX_OK ? jx_multiply(o[0], x[1]) : NULL;
  return s;
}
/* scan_cond(w, xs): c, ys = scan(scan_cond_body, 1.0, xs); c + sum(ys) */
static jx_status f_scan_cond(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  jx_fn *b = jx_fn_new("body", 2, 2, scan_cond_body, x[0]);
  jx_array *c0 = jx_scalar_of(1.0, JX_FLOAT32), *cf[1], *ys[1];
  jx_status s = jx_lax_scan(b, 1, &c0, 1, &x[1], -1, false, 1, cf, ys);
  jx_fn_free(b);
  o[0] = s == JX_OK ? jx_add(cf[0], jx_sum(ys[0], 0, NULL, false)) : NULL;
  return s;
}
/* cond(p, x * CONST, sin(x)), CONST a constant array (no tracer) */
static const float CONST[3] = {0.5f, -1.25f, 2.0f}; /* golden_control.py's CONST */
static jx_status b_sin(void *c, jx_array *const *x, jx_array **o) { (void)c; o[0] = jx_sin(x[0]); return JX_OK; }
static jx_status f_cond_const(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  jx_array *k = jx_array_from(CONST, JX_FLOAT32, 1, (int64_t[]){3});
  jx_fn *t = jx_fn_new("times_const", 1, 1, c_mul, k), *e = jx_fn_new("sin", 1, 1, b_sin, NULL);
  jx_status s = jx_lax_cond(x[0], t, e, 1, &x[1], o);
  jx_fn_free(t), jx_fn_free(e);
  return s;
}
static jx_status f_sum_of(void *c, jx_array *const *x, jx_array **o);
static void fn_free(void *c);

/* grad of sum(impl) over argnums [first, nin) */
static jx_fn *grad_sum(const char *name, int nin, jx_fn_impl impl, int first) {
  jx_fn *f = jx_fn_new(name, nin, 1, impl, NULL);
  jx_fn *l = jx_fn_new_with_free("sum", nin, 1, f_sum_of, f, fn_free);
  int argnums[8];
  for (int k = first; k < nin; k++) argnums[k - first] = k;
  jx_fn *g = jx_grad(l, nin - first, argnums);
  jx_fn_free(l);
  return g;
}

static jx_fn *make_closure(const char *fn) {
  if (!strcmp(fn, "grad_cond_closure")) return grad_sum("cond_closure", 3, f_cond_closure, 1);
  if (!strcmp(fn, "grad_switch_closure")) return grad_sum("switch_closure", 4, f_switch_closure, 1);
  if (!strcmp(fn, "grad_cond_const")) return grad_sum("cond_const", 2, f_cond_const, 1);
  if (!strcmp(fn, "jvp_switch_closure")) return jx_fn_new("jvp_switch_closure", 7, 2, f_jvp_switch_closure, NULL);
  if (!strcmp(fn, "grad_scan_cond")) {
    jx_fn *f = jx_fn_new("scan_cond", 2, 1, f_scan_cond, NULL), *g = jx_grad(f, 2, (int[]){0, 1});
    jx_fn_free(f);
    return g;
  }
  jx_fn *sc = jx_fn_new("switch_closure", 4, 1, f_switch_closure, NULL), *r = NULL;
  if (!strcmp(fn, "switch_closure")) r = jx_fn_ref(sc);
  if (!strcmp(fn, "vmap_switch_closure_i"))
    r = jx_vmap(sc, (int[]){0, 0, JX_NOT_MAPPED, JX_NOT_MAPPED}, (int[]){0});
  if (!strcmp(fn, "vmap_switch_closure_w"))
    r = jx_vmap(sc, (int[]){JX_NOT_MAPPED, 0, JX_NOT_MAPPED, JX_NOT_MAPPED}, (int[]){0});
  jx_fn_free(sc);
  return r;
}

static jx_fn *make(const char *fn) {
  if (strstr(fn, "closure") || strstr(fn, "_const") || !strcmp(fn, "grad_scan_cond")) return make_closure(fn);
  jx_fn *sw = jx_fn_new("switch3", 3, 1, f_switch3, NULL), *r = NULL;
  if (!strcmp(fn, "switch3")) return sw;
  if (!strcmp(fn, "cond2")) r = jx_fn_new("cond2", 3, 1, f_cond2, NULL);
  if (!strcmp(fn, "jvp_switch3")) r = jx_fn_new("jvp_switch3", 5, 2, f_jvp, NULL);
  if (!strcmp(fn, "grad_switch3") || !strcmp(fn, "grad_cond2")) {
    jx_fn *l = jx_fn_new("loss", 3, 1, f_loss, fn[5] == 'c' ? (void *)1 : NULL);
    r = jx_grad(l, 2, (int[]){1, 2});
    jx_fn_free(l);
  }
  if (!strcmp(fn, "vmap_switch3_i")) r = jx_vmap(sw, (int[]){0, 0, JX_NOT_MAPPED}, (int[]){0});
  if (!strcmp(fn, "vmap_switch3_x")) r = jx_vmap(sw, (int[]){JX_NOT_MAPPED, 0, JX_NOT_MAPPED}, (int[]){0});
  if (!strcmp(fn, "grad_vmap_switch3")) {
    jx_fn *v = jx_vmap(sw, (int[]){0, 0, JX_NOT_MAPPED}, (int[]){0});
    jx_fn *l = jx_fn_new_with_free("sum_vmap", 3, 1, f_sum_of, jx_fn_ref(v), fn_free);
    r = jx_grad(l, 2, (int[]){1, 2});
    jx_fn_free(l), jx_fn_free(v);
  }
  jx_fn_free(sw);
  return r;
}


static void test_goldens(void) {
  int n = 0;
  GoldenCase *cases = golden_load("control.txt", &n);
  CHECK(cases != NULL);
  for (int k = 0; cases && k < n; k++) {
    GoldenCase *c = &cases[k];
    jx_fn *f = make(c->fn);
    CHECK_MSG(f != NULL, "%s: no function %s", c->name, c->fn);
    if (!f) continue;
    golden_check_eager_jit(c, f, 2e-6, 2e-6);
    jx_fn_free(f);
  }
  golden_free(cases, n);
}

/* make_jaxpr as JAX 0.10.2 prints jax.make_jaxpr(lambda i, x, y: lax.switch(i, [b0, b1],
 * x, y)) except JAX's clamp of the index, which jaxc writes as max then min. */
static jx_status f_switch2(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  return jx_lax_switch(x[0], 2, B, 2, x + 1, o);
}
static void test_make_jaxpr(void) {
  jx_fn *f = jx_fn_new("switch2", 3, 1, f_switch2, NULL);
  jx_array *i = jx_scalar_int(0), *i32 = jx_astype(i, JX_INT32), *x = jx_zeros(1, (int64_t[]){3}, JX_FLOAT32);
  char *text = jx_make_jaxpr(f, (jx_array *[]){i32, x, x});
  CHECK_STR(text, "{ lambda ; a:i32[] b:f32[3] c:f32[3]. let\n"
                  "    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
                  "    e:i32[] = max d 0:i32[]\n"
                  "    f:i32[] = min e 1:i32[]\n"
                  "    g:f32[3] = cond[\n"
                  "      branches=(\n"
                  "        { lambda ; h:f32[3] i:f32[3]. let\n"
                  "            j:f32[3] = sin h\n"
                  "            k:f32[3] = mul j i\n"
                  "          in (k,) }\n"
                  "        { lambda ; l:f32[3] m:f32[3]. let\n"
                  "            n:f32[3] = cos l\n"
                  "            o:f32[3] = add n m\n"
                  "          in (o,) }\n"
                  "      )\n"
                  "    ] f b c\n"
                  "  in (g,) }");
  free(text);
  jx_free(i), jx_free(i32), jx_free(x);
  jx_fn_free(f);
}

static jx_status b_int(void *c, jx_array *const *x, jx_array **o) { (void)c; o[0] = jx_astype(x[0], JX_INT32); return JX_OK; }
static jx_status b_short(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  o[0] = jx_sum(x[0], 1, (int[]){0}, false);
  return JX_OK;
}

/* a branch y -> y * c with c from ctx; (x) -> sum(cond(true, that, that, x)) closes over x:
 * sum(x * x) */
static jx_status b_closure(void *c, jx_array *const *x, jx_array **o) { o[0] = jx_multiply(x[0], c); return JX_OK; }
static jx_status f_closes_over(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  jx_fn *b = jx_fn_new("closure", 1, 1, b_closure, x[0]);
  jx_array *r[1], *t = jx_astype(jx_scalar(1.0), JX_BOOL);
  jx_status s = jx_lax_cond(t, b, b, 1, x, r);
  jx_fn_free(b);
  o[0] = s == JX_OK ? jx_sum(r[0], 0, NULL, false) : NULL;
  return s;
}

/* a floating-point predicate: nonzero (NaN too) is true, as JAX 0.10.2's lax.cond
 * (`ne pred 0.0`): cond(p, x + 1, x - 1) of 1.0 for p = 2.0, 0.0, NaN, -0.0, a weak 0.5;
 * the jaxpr as JAX prints it */
static jx_status b_inc(void *c, jx_array *const *x, jx_array **o) { o[0] = jx_add(x[0], jx_scalar(1.0)); return JX_OK; }
static jx_status b_dec(void *c, jx_array *const *x, jx_array **o) { o[0] = jx_subtract(x[0], jx_scalar(1.0)); return JX_OK; }
static jx_status b_weak_one(void *c, jx_array *const *x, jx_array **o) { o[0] = jx_scalar(1.0); return JX_OK; }
static jx_status b_twice(void *c, jx_array *const *x, jx_array **o) { o[0] = jx_multiply(x[0], jx_scalar(2.0)); return JX_OK; }
static jx_status f_float_pred(void *c, jx_array *const *x, jx_array **o) {
  jx_fn *t = jx_fn_new("inc", 1, 1, b_inc, NULL), *e = jx_fn_new("dec", 1, 1, b_dec, NULL);
  jx_status s = jx_lax_cond(x[0], t, e, 1, (jx_array *[]){x[1]}, o);
  jx_fn_free(t), jx_fn_free(e);
  return s;
}
static void test_float_predicate(void) {
  jx_scope_begin();
  jx_fn *f = jx_fn_new("float_pred", 2, 1, f_float_pred, NULL), *jf = jx_jit(f);
  jx_array *one = jx_scalar_of(1, JX_FLOAT32), *out[1];
  const double preds[] = {2.0, 0.0, NAN, -0.0}, want[] = {2.0, 0.0, 2.0, 0.0};
  for (int i = 0; i < 4; i++) {
    jx_array *p = jx_scalar_of(preds[i], JX_FLOAT32);
    CHECK(jx_call(f, (jx_array *[]){p, one}, out) == JX_OK && jx_item(out[0]) == want[i]);
    CHECK(jx_call(jf, (jx_array *[]){p, one}, out) == JX_OK && jx_item(out[0]) == want[i]);
  }
  CHECK(jx_call(f, (jx_array *[]){jx_scalar(0.5), one}, out) == JX_OK && jx_item(out[0]) == 2.0);
  /* the result's weak type is branch 0's, the false branch (JAX 0.10.2:
   * lax.cond(p, lambda x: x * 2, lambda x: 1.0, float32 x) is weak, swapped strong) */
  jx_fn *w = jx_fn_new("weak_one", 1, 1, b_weak_one, NULL), *t2 = jx_fn_new("twice", 1, 1, b_twice, NULL);
  jx_array *p1 = jx_scalar_of(1, JX_BOOL);
  CHECK(jx_lax_cond(p1, t2, w, 1, &one, out) == JX_OK && jx_is_weak(out[0]) && jx_item(out[0]) == 2.0);
  CHECK(jx_lax_cond(p1, w, t2, 1, &one, out) == JX_OK && !jx_is_weak(out[0]) && jx_item(out[0]) == 1.0);
  jx_fn_free(w), jx_fn_free(t2);
  char *text = jx_make_jaxpr(f, (jx_array *[]){one, one});
  CHECK(text && strstr(text, "c:bool[] = ne a 0.0:f32[]"));
  free(text);
  jx_fn_free(jf), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* A branch closing over its own operand's tracer (both branches the same function: the
 * value joins the operands once): grad(sum(x * x)) = 2x, eagerly and under jit. */
static void test_closes_over_operand(void) {
  jx_array *x = jx_linspace(-1.0, 1.0, 5, JX_FLOAT32), *out[1] = {NULL};
  jx_fn *fc = jx_fn_new("closes_over", 1, 1, f_closes_over, NULL), *gc = jx_grad(fc, 1, NULL), *jgc = jx_jit(gc);
  for (int j = 0; j < 2; j++) {
    CHECK(jx_call(j ? jgc : gc, &x, out) == JX_OK);
    float got[5];
    CHECK(out[0] && jx_read(out[0], got, sizeof got) == JX_OK);
    for (int i = 0; out[0] && i < 5; i++) CHECK(got[i] == (float)(2 * (-1.0 + 0.5 * i)));
    jx_free(out[0]), out[0] = NULL;
  }
  jx_fn_free(jgc), jx_fn_free(gc), jx_fn_free(fc);
  jx_free(x);
}

/* make_jaxpr of branches closing over w and v (f32[3]): JAX 0.10.2 prints for
 * jax.make_jaxpr(lambda p, w, v, x: lax.cond(p, lambda x: jnp.sin(x * w), lambda x: x + v,
 * x)) and lax.switch(i, [lambda x: jnp.sin(x * w), lambda x: x + v, lambda x: x * w * v], x)
 * the texts below (the switch's clamp of the index, which jaxc writes as max then min,
 * aside): the closed-over values lead the operands, true_fn's first, each once. */
static jx_status f_cond_closure_v(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  jx_fn *t = jx_fn_new("sin_xw", 1, 1, c_sin_xw, x[1]), *e = jx_fn_new("add_v", 1, 1, c_add_v, x[2]);
  jx_status s = jx_lax_cond(x[0], t, e, 1, &x[3], o);
  jx_fn_free(t), jx_fn_free(e);
  return s;
}
static void test_make_jaxpr_closure(void) {
  jx_fn *fc = jx_fn_new("cond_closure", 4, 1, f_cond_closure_v, NULL);
  jx_fn *fs = jx_fn_new("switch_closure", 4, 1, f_switch_closure, NULL);
  jx_array *p = jx_scalar_of(1, JX_BOOL), *i = jx_scalar_of(1, JX_INT32), *x = jx_ones(1, (int64_t[]){3}, JX_FLOAT32);
  char *text = jx_make_jaxpr(fc, (jx_array *[]){p, x, x, x});
  CHECK_STR(text, "{ lambda ; a:bool[] b:f32[3] c:f32[3] d:f32[3]. let\n"
                  "    e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
                  "    f:f32[3] = cond[\n"
                  "      branches=(\n"
                  "        { lambda ; g:f32[3] h:f32[3] i:f32[3]. let j:f32[3] = add i h in (j,) }\n"
                  "        { lambda ; k:f32[3] l:f32[3] m:f32[3]. let\n"
                  "            n:f32[3] = mul m k\n"
                  "            o:f32[3] = sin n\n"
                  "          in (o,) }\n"
                  "      )\n"
                  "    ] e b c d\n"
                  "  in (f,) }");
  free(text);
  text = jx_make_jaxpr(fs, (jx_array *[]){i, x, x, x});
  CHECK_STR(text, "{ lambda ; a:i32[] b:f32[3] c:f32[3] d:f32[3]. let\n"
                  "    e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
                  "    f:i32[] = max e 0:i32[]\n"
                  "    g:i32[] = min f 2:i32[]\n"
                  "    h:f32[3] = cond[\n"
                  "      branches=(\n"
                  "        { lambda ; i:f32[3] j:f32[3] k:f32[3]. let\n"
                  "            l:f32[3] = mul k i\n"
                  "            m:f32[3] = sin l\n"
                  "          in (m,) }\n"
                  "        { lambda ; n:f32[3] o:f32[3] p:f32[3]. let q:f32[3] = add p o in (q,) }\n"
                  "        { lambda ; r:f32[3] s:f32[3] t:f32[3]. let\n"
                  "            u:f32[3] = mul t r\n"
                  "            v:f32[3] = mul u s\n"
                  "          in (v,) }\n"
                  "      )\n"
                  "    ] g b c d\n"
                  "  in (h,) }");
  free(text);
  jx_free(p), jx_free(i), jx_free(x);
  jx_fn_free(fc), jx_fn_free(fs);
}

static void test_errors(void) {
  jx_array *x = jx_ones(1, (int64_t[]){3}, JX_FLOAT32), *out[2] = {NULL};
  jx_array *p3 = jx_ones(1, (int64_t[]){3}, JX_BOOL), *pf = jx_scalar(1.0), *p = jx_astype(pf, JX_BOOL);
  jx_fn *fi = jx_fn_new("as_int", 1, 1, b_int, NULL), *fs = jx_fn_new("sum", 1, 1, b_short, NULL);
  jx_fn *fb = jx_fn_new("sin_times", 2, 1, b0, NULL);
  /* a non-scalar predicate */
  CHECK(jx_lax_cond(p3, fb, fb, 2, (jx_array *[]){x, x}, out) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_lax_cond: the predicate must be a scalar bool, integer or floating-point, got bool[3]");
  /* a complex predicate (JAX: "Pred type must be either boolean or number") */
  jx_array *pc = jx_astype(pf, JX_COMPLEX64);
  CHECK(jx_lax_cond(pc, fb, fb, 2, (jx_array *[]){x, x}, out) == JX_ERR_DTYPE);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_lax_cond: the predicate must be a scalar bool, integer or floating-point, got complex64[]");
  jx_free(pc);
  /* a float index for switch */
  CHECK(jx_lax_switch(pf, 2, (jx_fn *[]){fb, fb}, 2, (jx_array *[]){x, x}, out) == JX_ERR_DTYPE);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_lax_switch: the index must be a scalar integer, got float32[]");
  /* branches whose outputs differ in dtype, then in shape: both types named */
  CHECK(jx_lax_cond(p, fi, fb, 1, (jx_array *[]){x}, out) != JX_OK);
  jx_clear_error();
  jx_fn *fsin = jx_fn_new("sin", 1, 1, b_int, NULL);
  jx_fn_free(fsin);
  CHECK(jx_lax_cond(p, fi, fs, 1, (jx_array *[]){x}, out) == JX_ERR_DTYPE);
  /* named as the caller passed them (true_fn, false_fn), not by cond's internal branch index */
  CHECK_ERROR(JX_ERR_DTYPE, "jx_lax_cond: branches must give equal output types: output 0 is float32[] in false_fn "
                            "(sum) but int32[3] in true_fn (as_int)");
  CHECK(out[0] == NULL);
  /* a NULL predicate, a NULL index */
  CHECK(jx_lax_cond(NULL, fb, fb, 2, (jx_array *[]){x, x}, out) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_cond: the predicate is NULL");
  CHECK(jx_lax_switch(NULL, 2, (jx_fn *[]){fb, fb}, 2, (jx_array *[]){x, x}, out) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_switch: the index is NULL");
  CHECK(jx_lax_cond(p, NULL, fb, 2, (jx_array *[]){x, x}, out) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_cond: true_fn is NULL");
  CHECK(jx_lax_cond(p, fb, NULL, 2, (jx_array *[]){x, x}, out) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_cond: false_fn is NULL");
  /* wrong operand count for a branch */
  CHECK(jx_lax_cond(p, fb, fb, 1, (jx_array *[]){x}, out) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "sin_times takes 2 inputs, 1 operands given");
  jx_free(x), jx_free(p3), jx_free(pf), jx_free(p);
  jx_fn_free(fi), jx_fn_free(fs), jx_fn_free(fb);
}

int main(void) {
  B[0] = jx_fn_new("b0", 2, 1, b0, NULL);
  B[1] = jx_fn_new("b1", 2, 1, b1, NULL);
  B[2] = jx_fn_new("b2", 2, 1, b2, NULL);
  TEST_RUN(test_goldens);
  TEST_RUN(test_make_jaxpr);
  TEST_RUN(test_errors);
  TEST_RUN(test_float_predicate);
  TEST_RUN(test_closes_over_operand);
  TEST_RUN(test_make_jaxpr_closure);
  for (int b = 0; b < 3; b++) jx_fn_free(B[b]);
  return test_finish();
}
