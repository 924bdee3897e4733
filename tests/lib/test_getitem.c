/* test_getitem.c -- x[idx] (jx_getitem) and x.at[idx] (jx_at_index_get/set/add/mul/min/max)
 * with whole index expressions against JAX goldens (tools/golden_indexing.py ->
 * tests/golden/indexing.txt): every entry kind, separated and adjacent advanced indices,
 * masks, 0-d bools, out-of-range indices, empty results, errors and gradients. Every case
 * runs eagerly; one in sixteen (and every third gradient) under jit too, the index arrays
 * then closed over (masks must be concrete; few, as every program is a compile). Also: vmap over x against a loop, traced masks
 * refused, a mask computed from x under grad, NULL arguments. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "test.h"

/* The idx= param ("1,::-1,N,E,@2") into entries; @K is in[K]. Returns the count. */
static int parse_idx(const char *s, jx_array *const *in, jx_index *out) {
  int n = 0;
  while (s && *s) {
    const char *end = strchr(s, ',');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    char tok[64];
    snprintf(tok, sizeof tok, "%.*s", (int)len, s);
    if (!strcmp(tok, "N")) {
      out[n++] = jx_idx_newaxis();
    } else if (!strcmp(tok, "E")) {
      out[n++] = jx_idx_ellipsis();
    } else if (tok[0] == '@') {
      out[n++] = jx_idx_array(in[atoi(tok + 1)]);
    } else if (strchr(tok, ':')) {
      int64_t v[3] = {JX_SLICE_END, JX_SLICE_END, 1};
      char *p = tok;
      for (int k = 0; k < 3 && p; k++) {
        char *colon = strchr(p, ':');
        if (colon) *colon = 0;
        if (*p) v[k] = strtoll(p, NULL, 10);
        p = colon ? colon + 1 : NULL;
      }
      out[n++] = jx_idx_slice(v[0], v[1], v[2]);
    } else {
      out[n++] = jx_idx_int(strtoll(tok, NULL, 10));
    }
    s = end ? end + 1 : NULL;
  }
  return n;
}

typedef enum Kind { K_GET, K_AT_GET, K_SET, K_ADD, K_MUL, K_MIN, K_MAX } Kind;

static jx_array *at_update(Kind k, jx_array *x, int n, const jx_index *idx, jx_array *y,
                           jx_index_mode m) {
  switch (k) {
  case K_SET: return jx_at_index_set(x, n, idx, y, m);
  case K_ADD: return jx_at_index_add(x, n, idx, y, m);
  case K_MUL: return jx_at_index_mul(x, n, idx, y, m);
  case K_MIN: return jx_at_index_min(x, n, idx, y, m);
  case K_MAX: return jx_at_index_max(x, n, idx, y, m);
  default: return NULL;
  }
}

/* One golden case as a function of x (and y); the index arrays are closed over. */
typedef struct Case {
  Kind kind;
  bool grad;             /* sum(sin(result)) */
  int n;
  jx_index idx[32];
  jx_index_mode mode;
  double fill;
} Case;

static jx_array *case_apply(const Case *c, jx_array *x, jx_array *y) {
  jx_array *r;
  if (c->kind == K_GET) r = jx_getitem(x, c->n, c->idx);
  else if (c->kind == K_AT_GET) r = jx_at_index_get(x, c->n, c->idx, c->mode, c->fill);
  else r = at_update(c->kind, x, c->n, c->idx, y, c->mode);
  return c->grad ? jx_sum(jx_sin(r), 0, NULL, false) : r;
}

static jx_status case_fn(void *ctx, jx_array *const *in, jx_array **out) {
  const Case *c = ctx;
  out[0] = case_apply(c, in[0], c->kind >= K_SET ? in[1] : NULL);
  return out[0] ? JX_OK : jx_last_status();
}

static jx_index_mode mode_of(const char *m, jx_index_mode dflt) {
  if (!m) return dflt;
  return !strcmp(m, "clip") ? JX_INDEX_CLIP : !strcmp(m, "fill") ? JX_INDEX_FILL
                                                                  : JX_INDEX_PROMISE_IN_BOUNDS;
}

static bool parse_case(const GoldenCase *g, jx_array *const *in, Case *c) {
  memset(c, 0, sizeof *c);
  const char *fn = g->fn;
  c->grad = !strncmp(fn, "grad_", 5);
  if (c->grad) fn += 5;
  static const char *names[] = {"getitem", "at_get", "at_set", "at_add", "at_mul", "at_min", "at_max"};
  int k = 0;
  while (k < 7 && strcmp(fn, names[k])) k++;
  if (k == 7) return false;
  c->kind = (Kind)k;
  c->n = parse_idx(golden_param(g, "idx"), in, c->idx);
  c->mode = mode_of(golden_param(g, "mode"), c->kind == K_AT_GET ? JX_INDEX_PROMISE_IN_BOUNDS : JX_INDEX_FILL);
  const char *f = golden_param(g, "fill");
  c->fill = f ? strtod(f, NULL) : NAN;
  return true;
}

static void test_goldens(void) {
  int ncases = 0;
  GoldenCase *cases = golden_load("indexing.txt", &ncases);
  CHECK(cases != NULL);
  int run = 0, jitted = 0;
  for (int ci = 0; ci < ncases; ci++) {
    const GoldenCase *g = &cases[ci];
    jx_scope_begin();
    jx_array *in[8] = {NULL};
    for (int i = 0; i < g->nin && i < 8; i++) in[i] = golden_to_array(&g->in[i]);
    Case c;
    char ctx[160];
    snprintf(ctx, sizeof ctx, "%s (line %d)", g->name, g->line);
    if (!parse_case(g, in, &c)) {
      CHECK_MSG(false, "%s: unknown golden fn %s", ctx, g->fn);
      jx_scope_end(0, NULL);
      continue;
    }
    bool upd = c.kind >= K_SET;
    double rtol = c.grad ? 2e-6 : c.kind == K_MUL ? 1e-6 : 0, atol = c.grad ? 1e-6 : 0;
    jx_array *got[2] = {NULL, NULL};
    if (c.grad) {
      int nin = upd ? 2 : 1;
      jx_fn *f = jx_fn_new(g->name, nin, 1, case_fn, &c);
      jx_fn *d = jx_grad(f, nin, (int[]){0, 1});
      CHECK_MSG(jx_call(d, in, got) == JX_OK, "%s: %s", ctx, jx_last_error());
      for (int o = 0; o < g->nout; o++) golden_compare(ctx, got[o], &g->out[o], rtol, atol);
      if (ci % 3 == 0) {
        jx_fn *j = jx_jit(d);
        jx_array *jg[2] = {NULL, NULL};
        char jctx[180];
        snprintf(jctx, sizeof jctx, "%s (jit)", ctx);
        CHECK_MSG(jx_call(j, in, jg) == JX_OK, "%s: %s", jctx, jx_last_error());
        for (int o = 0; o < g->nout; o++) golden_compare(jctx, jg[o], &g->out[o], rtol, atol);
        jitted++;
        jx_fn_free(j);
      }
      jx_fn_free(d), jx_fn_free(f);
    } else {
      got[0] = case_apply(&c, in[0], upd ? in[1] : NULL);
      if (g->err != JX_OK) {
        CHECK_MSG(!got[0] && jx_last_status() == g->err, "%s: expected %s, got %s (%s)", ctx,
                  jx_status_name(g->err), jx_status_name(jx_last_status()), jx_last_error());
        jx_clear_error();
      } else {
        golden_compare(ctx, got[0], &g->out[0], rtol, atol);
        if (ci % 16 == 0) { /* the same expression jitted, index arrays closed over */
          jx_fn *f = jx_fn_new(g->name, upd ? 2 : 1, 1, case_fn, &c), *j = jx_jit(f);
          jx_array *jr = NULL;
          char jctx[180];
          snprintf(jctx, sizeof jctx, "%s (jit)", ctx);
          CHECK_MSG(jx_call(j, in, &jr) == JX_OK, "%s: %s", jctx, jx_last_error());
          golden_compare(jctx, jr, &g->out[0], rtol, atol);
          jitted++;
          jx_fn_free(j), jx_fn_free(f);
        }
      }
    }
    if (jx_last_status() != JX_OK) {
      test_fail(__FILE__, __LINE__, "%s: %s", ctx, jx_last_error());
      jx_clear_error();
    }
    run++;
    jx_scope_end(0, NULL);
  }
  golden_free(cases, ncases);
  CHECK_MSG(run >= 180, "only %d indexing cases ran", run);
  printf("%d golden indexing cases (%d also under jit)\n", run, jitted);
}

/* ------------------------------------------------------- jit with traced indices */

/* x[i, :, j] and x.at[i, :, j].add(y) with i and j traced inputs */
static jx_status traced_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_index idx[3] = {jx_idx_array(in[1]), jx_idx_all(), jx_idx_array(in[2])};
  out[0] = jx_getitem(in[0], 3, idx);
  out[1] = jx_at_index_add(in[0], 3, idx, jx_scalar(1.5), JX_INDEX_FILL);
  return out[0] && out[1] ? JX_OK : jx_last_status();
}

static void test_jit_traced_indices(void) {
  jx_scope_begin();
  uint32_t seed = 7;
  jx_array *x = test_randn(&seed, 3, (int64_t[]){3, 4, 5});
  jx_array *i = jx_array_from((int8_t[]){2, -1, 0}, JX_INT8, 1, (int64_t[]){3});
  jx_array *j = jx_array_from((uint32_t[]){4, 9, 0, 4294967295u, 1, 2}, JX_UINT32, 2, (int64_t[]){2, 3});
  jx_array *in[3] = {x, i, j}, *a[2] = {NULL}, *b[2] = {NULL};
  jx_fn *f = jx_fn_new("traced", 3, 2, traced_fn, NULL), *jf = jx_jit(f);
  CHECK(jx_call(f, in, a) == JX_OK);
  CHECK_MSG(jx_call(jf, in, b) == JX_OK, "jit: %s", jx_last_error());
  for (int o = 0; o < 2; o++) {
    CHECK(a[o] && b[o] && jx_size(a[o]) == jx_size(b[o]));
    double *u = a[o] && b[o] ? test_read_f64(a[o]) : NULL, *v = u ? test_read_f64(b[o]) : NULL;
    for (int64_t k = 0; v && k < jx_size(a[o]); k++) CHECK_MSG(u[k] == v[k], "output %d elt %lld", o, (long long)k);
    free(u), free(v);
  }
  CHECK(a[0] && jx_ndim(a[0]) == 3 && jx_shape(a[0])[0] == 2 && jx_shape(a[0])[1] == 3 &&
        jx_shape(a[0])[2] == 4);
  jx_fn_free(jf), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* ------------------------------------------------------------------- vmap */

static jx_array *mask_const; /* closed over by vmapped */

/* x[1:, i, None, mask] and x.at[i, ..., 0].set(y) on one example */
static jx_status vmapped(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *i = ctx;
  out[0] = jx_getitem(in[0], 4, (jx_index[]){jx_idx_slice(1, JX_SLICE_END, 1), jx_idx_array(i),
                                             jx_idx_newaxis(), jx_idx_array(mask_const)});
  out[1] = jx_at_index_set(in[0], 3, (jx_index[]){jx_idx_array(i), jx_idx_ellipsis(), jx_idx_int(0)},
                           in[1], JX_INDEX_FILL);
  return out[0] && out[1] ? JX_OK : jx_last_status();
}

static void test_vmap(void) {
  jx_scope_begin();
  uint32_t seed = 11;
  jx_array *x = test_randn(&seed, 4, (int64_t[]){3, 3, 4, 5}); /* batch of 3 */
  jx_array *y = test_randn(&seed, 2, (int64_t[]){3, 4});       /* y per example: (4,) */
  jx_array *i = jx_array_from((int32_t[]){3, -1, 0, 1}, JX_INT32, 1, (int64_t[]){4});
  mask_const = jx_array_from((bool[]){true, false, true, true, true}, JX_BOOL, 1, (int64_t[]){5});
  jx_fn *f = jx_fn_new("vmapped", 2, 2, vmapped, i);
  jx_fn *v = jx_vmap(f, (int[]){0, 0}, NULL);
  jx_array *out[2] = {NULL};
  CHECK_MSG(jx_call(v, (jx_array *[]){x, y}, out) == JX_OK, "vmap: %s", jx_last_error());
  jx_array *parts[2][3];
  for (int64_t b = 0; b < 3; b++) {
    jx_array *o[2] = {NULL};
    CHECK(jx_call(f, (jx_array *[]){jx_take(x, jx_scalar_int(b), 0), jx_take(y, jx_scalar_int(b), 0)},
                  o) == JX_OK);
    parts[0][b] = o[0], parts[1][b] = o[1];
  }
  for (int o = 0; o < 2; o++) {
    jx_array *want = jx_stack(3, parts[o], 0);
    CHECK(out[o] && want && jx_size(out[o]) == jx_size(want) && jx_ndim(out[o]) == jx_ndim(want));
    double *u = out[o] && want ? test_read_f64(out[o]) : NULL, *w = u ? test_read_f64(want) : NULL;
    for (int64_t k = 0; w && k < jx_size(want); k++) CHECK_MSG(u[k] == w[k], "vmap output %d elt %lld", o, (long long)k);
    free(u), free(w);
  }
  jx_fn_free(v), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* ------------------------------------------------------------ bool masks traced */

static jx_status mask_of_input(void *ctx, jx_array *const *in, jx_array **out) {
  bool scalar = ctx != NULL;
  jx_array *m = scalar ? jx_greater(jx_sum(in[0], 0, NULL, false), jx_scalar(0))
                       : jx_greater(in[0], jx_scalar(0));
  out[0] = jx_sum(jx_getitem(in[0], 1, (jx_index[]){jx_idx_array(m)}), 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_traced_masks(void) {
  jx_scope_begin();
  jx_array *x = jx_array_from((float[]){1.5f, -2, 3, -0.5f, 0.25f, -1}, JX_FLOAT32, 2, (int64_t[]){2, 3});
  for (int scalar = 0; scalar < 2; scalar++) {
    jx_fn *f = jx_fn_new("mask_of_input", 1, 1, mask_of_input, scalar ? (void *)1 : NULL);
    /* under jit and vmap the mask is traced: JAX's NonConcreteBooleanIndexError */
    jx_fn *j = jx_jit(f);
    jx_array *r = NULL;
    CHECK(jx_call(j, &x, &r) != JX_OK && !r);
    CHECK_ERROR(JX_ERR_VALUE, "must be concrete");
    jx_fn *v = jx_vmap(f, NULL, NULL);
    CHECK(jx_call(v, &x, &r) != JX_OK);
    CHECK_ERROR(JX_ERR_VALUE, "must be concrete");
    /* under grad its primal is concrete, as in JAX: d sum(x[x > 0]) / dx = (x > 0) */
    jx_fn *g = jx_grad(f, 1, NULL);
    CHECK_MSG(jx_call(g, &x, &r) == JX_OK, "grad with a mask of x: %s", jx_last_error());
    float d[6] = {0};
    if (r && jx_read(r, d, sizeof d) == JX_OK) {
      for (int k = 0; k < 6; k++) CHECK_NEAR(d[k], scalar ? 1.0 : k == 0 || k == 2 || k == 4, 0);
    }
    jx_fn_free(g), jx_fn_free(v), jx_fn_free(j), jx_fn_free(f);
  }
  jx_scope_end(0, NULL);
}

/* ------------------------------------------------------------------ errors */

static void test_errors(void) {
  jx_scope_begin();
  jx_array *x = jx_zeros(2, (int64_t[]){3, 4}, JX_FLOAT32);
  jx_index one[1] = {jx_idx_int(1)};
  CHECK(!jx_getitem(NULL, 1, one));
  CHECK_ERROR(JX_ERR_VALUE, "x");
  CHECK(!jx_getitem(x, 1, NULL));
  CHECK_ERROR(JX_ERR_VALUE, "idx is NULL");
  CHECK(!jx_getitem(x, -1, one));
  CHECK_ERROR(JX_ERR_VALUE, "negative");
  CHECK(!jx_getitem(x, 1, (jx_index[]){jx_idx_array(NULL)}));
  CHECK_ERROR(JX_ERR_VALUE, "without its array");
  CHECK(!jx_getitem(x, 1, (jx_index[]){{.kind = (jx_index_kind)42}}));
  CHECK_ERROR(JX_ERR_VALUE, "unknown index kind");
  CHECK(!jx_getitem(x, 2, (jx_index[]){jx_idx_ellipsis(), jx_idx_ellipsis()}));
  CHECK_ERROR(JX_ERR_VALUE, "single ellipsis");
  CHECK(!jx_getitem(x, 3, (jx_index[]){jx_idx_int(0), jx_idx_all(), jx_idx_int(0)}));
  CHECK_ERROR(JX_ERR_SHAPE, "too many indices");
  CHECK(!jx_getitem(x, 1, (jx_index[]){jx_idx_array(jx_scalar(1))}));
  CHECK_ERROR(JX_ERR_DTYPE, "integer or boolean");
  jx_array *bad_mask = jx_array_from((bool[]){true, false}, JX_BOOL, 1, (int64_t[]){2});
  CHECK(!jx_getitem(x, 1, (jx_index[]){jx_idx_array(bad_mask)}));
  CHECK_ERROR(JX_ERR_SHAPE, "boolean index did not match");
  CHECK(!jx_getitem(jx_zeros(1, (int64_t[]){0}, JX_FLOAT32), 1, one));
  CHECK_ERROR(JX_ERR_SHAPE, "size 0");
  /* out-of-range scalar ints clamp, as JAX 0.10.2 (no IndexError by default) */
  jx_array *r = jx_getitem(jx_arange(0, 5, 1, JX_INT32), 1, (jx_index[]){jx_idx_int(7)});
  CHECK(r && jx_item(r) == 4);
  /* an error pending: the NULL result of an earlier op passes it through */
  jx_array *y = jx_scalar(1);
  CHECK(!jx_at_index_set(x, 1, one, NULL, JX_INDEX_FILL));
  CHECK_ERROR(JX_ERR_VALUE, "y");
  CHECK(!jx_at_index_add(x, 1, one, y, (jx_index_mode)9));
  CHECK_ERROR(JX_ERR_VALUE, "unknown index mode");
  CHECK(!jx_at_index_get(x, 1, one, (jx_index_mode)-1, NAN));
  CHECK_ERROR(JX_ERR_VALUE, "unknown index mode");
  CHECK(!jx_at_index_get(x, 1, one, JX_INDEX_WRAP, NAN)); /* JAX: Unknown gather mode "wrap" */
  CHECK_ERROR(JX_ERR_VALUE, "JX_INDEX_WRAP");
  CHECK(!jx_at_index_set(x, 1, one, y, JX_INDEX_WRAP));
  CHECK_ERROR(JX_ERR_VALUE, "JX_INDEX_WRAP");
  CHECK(!jx_at_index_min(NULL, 1, one, y, JX_INDEX_FILL));
  CHECK_ERROR(JX_ERR_VALUE, "x");
  /* a failed op's NULL in an array entry keeps that first error */
  jx_array *fail = jx_reshape(x, 1, (int64_t[]){5});
  CHECK(!fail);
  CHECK(!jx_getitem(x, 1, (jx_index[]){jx_idx_array(fail)}));
  CHECK_ERROR(JX_ERR_SHAPE, "");
  jx_scope_end(0, NULL);
}

int main(void) {
  int64_t fns = jx_live_fns();
  TEST_RUN(test_goldens);
  TEST_RUN(test_jit_traced_indices);
  TEST_RUN(test_vmap);
  TEST_RUN(test_traced_masks);
  TEST_RUN(test_errors);
  CHECK_EQ_INT(jx_live_fns(), fns);
  return test_finish();
}
