/* test_prim.c -- the primitives' eval rules on the interpreter, against results computed
 * by plain C loops: elementwise kernels over views, reductions over every axis subset,
 * movement as views (never copies), concatenate, gather, dot_general, iota. */
#include <stdlib.h>

#include "core/array.h"
#include "test.h"
#include "trace/prim.h"

/* A float32 array of the given shape holding 0, 1, 2, ... */
static jx_array *iota_f32(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  float *d = malloc((size_t)(n ? n : 1) * sizeof *d);
  for (int64_t i = 0; i < n; i++) d[i] = (float)i;
  jx_array *a = jx_array_from(d, JX_FLOAT32, ndim, shape);
  free(d);
  return a;
}

static void read_f32(jx_array *a, float *out) {
  CHECK(a != NULL);
  if (a) CHECK_EQ_INT(jx_read(a, out, (size_t)jx_size(a) * 4), JX_OK);
}

static void test_movement_is_view(void) {
  jx_array *x = iota_f32(2, (int64_t[]){3, 4});
  jx_array *t = prim_transpose(x, (int[]){1, 0});
  jx_array *s = prim_slice(t, (int64_t[]){1, 0}, (int64_t[]){4, 3}, (int64_t[]){2, 2});
  jx_array *r = prim_rev(s, (bool[]){true, false});
  jx_array *p = prim_pad(r, (int64_t[]){1, 0}, (int64_t[]){0, 1}, 0.0);
  CHECK(t->buf == x->buf && s->buf == x->buf && r->buf == x->buf && p->buf == x->buf);
  /* t = x.T (4,3); s = t[1:4:2, 0:3:2] -> rows 1,3 cols 0,2: [[1,9],[3,11]];
   * r = s[::-1] -> [[3,11],[1,9]]; p pads one row before, one col after. */
  float out[3 * 3];
  read_f32(p, out);
  float want[9] = {0, 0, 0, 3, 11, 0, 1, 9, 0};
  for (int i = 0; i < 9; i++) CHECK_MSG(out[i] == want[i], "p[%d] = %g, want %g", i, out[i], want[i]);
  jx_array *q = prim_pad(r, (int64_t[]){0, 1}, (int64_t[]){0, 0}, -1.5);
  read_f32(q, out);
  float want_q[6] = {-1.5f, 3, 11, -1.5f, 1, 9};
  for (int i = 0; i < 6; i++) CHECK(out[i] == want_q[i]);
  jx_free(x), jx_free(t), jx_free(s), jx_free(r), jx_free(p), jx_free(q);
}

static void test_broadcast_reshape(void) {
  jx_array *x = iota_f32(1, (int64_t[]){3});
  jx_array *b = prim_broadcast_in_dim(x, 3, (int64_t[]){2, 3, 2}, (int[]){1});
  CHECK(b && b->buf == x->buf);
  jx_array *r = prim_reshape(b, 2, (int64_t[]){3, 4});
  float out[12];
  read_f32(r, out);
  for (int i = 0; i < 12; i++) CHECK(out[i] == (float)((i % 6) / 2));
  CHECK(prim_reshape(x, 1, (int64_t[]){4}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "reshape: sizes differ: float32[3] and float32[4]");
  CHECK(prim_broadcast_in_dim(x, 1, (int64_t[]){4}, (int[]){0}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "broadcast_in_dim");
  jx_free(x), jx_free(b), jx_free(r);
}

static void test_elementwise_over_views(void) {
  jx_array *x = iota_f32(2, (int64_t[]){2, 3});
  jx_array *t = prim_transpose(x, (int[]){1, 0});       /* (3,2) */
  jx_array *y = iota_f32(2, (int64_t[]){3, 2});
  jx_array *z = prim_binary(PRIM_mul, t, y);
  float out[6];
  read_f32(z, out);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++) CHECK(out[i * 2 + j] == (float)((j * 3 + i) * (i * 2 + j)));
  jx_array *lt = prim_binary(PRIM_lt, t, y);
  CHECK(lt && lt->dtype == JX_BOOL);
  jx_array *sel = prim_select(lt, t, y);
  read_f32(sel, out);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++) {
      float a = (float)(j * 3 + i), b = (float)(i * 2 + j);
      CHECK(out[i * 2 + j] == (a < b ? a : b));
    }
  CHECK(prim_binary(PRIM_add, x, y) == NULL); /* (2,3) vs (3,2) */
  CHECK_ERROR(JX_ERR_SHAPE, "add");
  jx_free(x), jx_free(t), jx_free(y), jx_free(z), jx_free(lt), jx_free(sel);
}

/* The fma primitive (jaxc's own): a * b + c rounded once, elementwise over views and on
 * every device; float32/float64 only, operands of one shape and dtype, each refusal a
 * clear error. */
static void test_fma(void) {
  jx_array *x = iota_f32(2, (int64_t[]){2, 3});
  jx_array *t = prim_transpose(x, (int[]){1, 0}), *y = iota_f32(2, (int64_t[]){3, 2});
  jx_array *r = prim_fma(t, y, y);
  float out[6];
  read_f32(r, out);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++) CHECK(out[i * 2 + j] == (float)((j * 3 + i) * (i * 2 + j) + (i * 2 + j)));
  /* (1 + 2^-12)^2 - (1 + 2^-11) = 2^-24: rounded once, not twice (which gives 0) */
  float a = 1 + 0x1p-12f, c = -(1 + 0x1p-11f), got = 0;
  jx_array *fa = jx_array_from(&a, JX_FLOAT32, 0, NULL), *fc = jx_array_from(&c, JX_FLOAT32, 0, NULL);
  jx_array *one = prim_fma(fa, fa, fc);
  CHECK(one && jx_read(one, &got, sizeof got) == JX_OK && got == 0x1p-24f);
  jx_array *n = prim_convert(x, JX_INT32, false);
  CHECK(prim_fma(n, n, n) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "float32 or float64");
  CHECK(prim_fma(x, x, y) == NULL); /* (2,3) with (3,2) */
  CHECK_ERROR(JX_ERR_SHAPE, "fma");
  jx_array *h = prim_convert(x, JX_FLOAT16, false);
  CHECK(prim_fma(h, h, h) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "fma");
  jx_free(x), jx_free(t), jx_free(y), jx_free(r), jx_free(fa), jx_free(fc), jx_free(one), jx_free(n), jx_free(h);
}

static void test_reduce_all_axis_subsets(void) {
  int64_t shape[3] = {2, 3, 4};
  jx_array *x = iota_f32(3, shape);
  for (int m = 0; m < 8; m++) {
    bool mask[3] = {m & 1, (m >> 1) & 1, (m >> 2) & 1};
    jx_array *s = prim_reduce(PRIM_reduce_sum, x, mask);
    jx_array *mx = prim_reduce(PRIM_reduce_max, x, mask);
    float got[24], gotm[24], want[24] = {0}, wantm[24];
    for (int i = 0; i < 24; i++) wantm[i] = -INFINITY;
    read_f32(s, got);
    read_f32(mx, gotm);
    /* reference: output index over kept dims in order */
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++)
        for (int k = 0; k < 4; k++) {
          int idx[3] = {i, j, k}, o = 0;
          for (int d = 0; d < 3; d++)
            if (!mask[d]) o = o * (int)shape[d] + idx[d];
          float v = (float)(i * 12 + j * 4 + k);
          want[o] += v;
          if (v > wantm[o]) wantm[o] = v;
        }
    for (int i = 0; i < jx_size(s); i++) {
      CHECK_MSG(got[i] == want[i], "mask %d: sum[%d] = %g, want %g", m, i, got[i], want[i]);
      CHECK(gotm[i] == wantm[i]);
    }
    jx_free(s), jx_free(mx);
  }
  jx_free(x);
}

static void test_reduce_empty(void) {
  jx_array *x = jx_zeros(2, (int64_t[]){3, 0}, JX_FLOAT32);
  jx_array *s = prim_reduce(PRIM_reduce_sum, x, (bool[]){false, true});
  jx_array *m = prim_reduce(PRIM_reduce_max, x, (bool[]){false, true});
  float out[3];
  read_f32(s, out);
  CHECK(out[0] == 0 && out[2] == 0);
  read_f32(m, out);
  CHECK(out[1] == -INFINITY);
  jx_free(x), jx_free(s), jx_free(m);
}

static void test_concatenate_gather(void) {
  jx_array *a = iota_f32(2, (int64_t[]){2, 2});
  jx_array *b = iota_f32(2, (int64_t[]){2, 3});
  jx_array *c = prim_concatenate(2, (jx_array *[]){a, b}, 1);
  float out[10];
  read_f32(c, out);
  float want[10] = {0, 1, 0, 1, 2, 2, 3, 3, 4, 5};
  for (int i = 0; i < 10; i++) CHECK(out[i] == want[i]);
  int32_t idx[3] = {2, 0, 7};
  jx_array *ind = jx_array_from(idx, JX_INT32, 1, (int64_t[]){3});
  jx_array *g = prim_gather(b, ind, 1); /* clamps 7 -> 2 */
  read_f32(g, out);
  float wg[6] = {2, 0, 2, 5, 3, 5};
  for (int i = 0; i < 6; i++) CHECK(out[i] == wg[i]);
  CHECK(prim_concatenate(2, (jx_array *[]){a, b}, 0) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "concatenate");
  jx_free(a), jx_free(b), jx_free(c), jx_free(ind), jx_free(g);
}

static void test_dot_general(void) {
  /* batched matmul (2,3,4) x (2,4,5) with a transposed rhs view */
  jx_array *x = iota_f32(3, (int64_t[]){2, 3, 4});
  jx_array *y0 = iota_f32(3, (int64_t[]){2, 5, 4});
  jx_array *y = prim_transpose(y0, (int[]){0, 2, 1});
  jx_array *z = prim_dot_general(x, y, 1, (int[]){2}, (int[]){1}, 1, (int[]){0}, (int[]){0});
  float out[30];
  read_f32(z, out);
  for (int b = 0; b < 2; b++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 5; j++) {
        float acc = 0;
        for (int k = 0; k < 4; k++) acc += (float)(b * 12 + i * 4 + k) * (float)(b * 20 + j * 4 + k);
        CHECK(out[(b * 3 + i) * 5 + j] == acc);
      }
  jx_free(x), jx_free(y0), jx_free(y), jx_free(z);
}

static void test_iota_convert_bitcast(void) {
  jx_array *i = prim_iota(JX_INT32, 2, (int64_t[]){2, 3}, 1);
  int32_t out[6];
  CHECK_EQ_INT(jx_read(i, out, sizeof out), JX_OK);
  for (int k = 0; k < 6; k++) CHECK(out[k] == k % 3);
  jx_array *f = prim_convert(i, JX_FLOAT32, false);
  jx_array *bits = prim_bitcast(f, JX_UINT32);
  uint32_t u[6];
  CHECK_EQ_INT(jx_read(bits, u, sizeof u), JX_OK);
  CHECK(u[1] == 0x3f800000u);
  CHECK(prim_bitcast(f, JX_FLOAT16) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "bitcast");
  jx_free(i), jx_free(f), jx_free(bits);
}

/* Products above ROUTINE_GEMM_MIN_WORK run as a GEMM routine (BLAS when available):
 * check batched, transposed-operand products against a float64 loop, eager and jit. */
static jx_status batched_product(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = prim_dot_general(in[0], in[1], 1, (int[]){1}, (int[]){2}, 1, (int[]){0}, (int[]){0});
  return out[0] ? JX_OK : jx_last_status();
}

static void test_gemm(void) {
  int64_t B = 2, M = 70, K = 65, N = 66;
  jx_scope_begin();
  /* x: (B, K, M) contracted on dim 1 (a transposed operand); y: (B, N, K) on dim 2 */
  jx_array *x = iota_f32(3, (int64_t[]){B, K, M}), *y = iota_f32(3, (int64_t[]){B, N, K});
  jx_array *xs = prim_binary(PRIM_mul, x, jx_full(3, (int64_t[]){B, K, M}, 1e-3, JX_FLOAT32));
  jx_fn *f = jx_fn_new("batched_product", 2, 1, batched_product, NULL), *jf = jx_jit(f);
  jx_array *z, *zj;
  CHECK_EQ_INT(jx_call(f, (jx_array *[]){xs, y}, &z), JX_OK);
  CHECK_EQ_INT(jx_call(jf, (jx_array *[]){xs, y}, &zj), JX_OK);
  float *got = malloc((size_t)(B * M * N) * 4), *gotj = malloc((size_t)(B * M * N) * 4);
  read_f32(z, got);
  read_f32(zj, gotj);
  for (int64_t b = 0; b < B; b++)
    for (int64_t i = 0; i < M; i += 7)
      for (int64_t j = 0; j < N; j += 5) {
        double acc = 0;
        for (int64_t k = 0; k < K; k++)
          acc += (double)(float)((float)((b * K + k) * M + i) * 1e-3f) * (double)((b * N + j) * K + k);
        float g = got[(b * M + i) * N + j];
        CHECK_MSG(fabs(g - acc) <= 1e-5 * fabs(acc) + 1e-3, "gemm[%lld,%lld,%lld] = %g, want %g",
                  (long long)b, (long long)i, (long long)j, g, acc);
        /* jit may pass a transposed operand to BLAS as is: another summation order */
        CHECK_NEAR(gotj[(b * M + i) * N + j], g, 1e-6 * fabs(g) + 1e-3);
      }
  free(got), free(gotj);
  jx_fn_free(jf), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

int main(void) {
  TEST_RUN(test_movement_is_view);
  TEST_RUN(test_broadcast_reshape);
  TEST_RUN(test_elementwise_over_views);
  TEST_RUN(test_fma);
  TEST_RUN(test_reduce_all_axis_subsets);
  TEST_RUN(test_reduce_empty);
  TEST_RUN(test_concatenate_gather);
  TEST_RUN(test_dot_general);
  TEST_RUN(test_iota_convert_bitcast);
  TEST_RUN(test_gemm);
  return test_finish();
}
