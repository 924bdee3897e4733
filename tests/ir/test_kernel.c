/* test_kernel.c -- kernel identity (ir/kernel.c): kernel_equal tells apart kernels that
 * differ in any field that decides what they compute, including a two-phase kernel's
 * first phase, and ignores unused slots; every backend's kernel cache keys on it, so two
 * kernels differing only in their first phase never share an executable. */
#include <stdlib.h>

#include "backend/backend.h"
#include "test.h"

static const AluExp *ci(int64_t v) { return alu_const_int(JX_INT64, v); }
static const AluExp *f32(double v) { return alu_const_float(JX_FLOAT32, v); }

enum { ROWS = 6, COLS = 40 };

/* sum((x - pre)^2) over each row of x (ROWS, COLS), pre = the row's max (or min): the
 * first phase reduces x by pre_op; outputs: the sum, and 2 * pre as an extra output. */
static Kernel spread_kernel(AluOp pre_op) {
  const AluExp *g = alu_special("gidx", ROWS), *r = alu_special("ridx", COLS);
  const AluExp *x = alu_global(0, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, g, ci(COLS)), r));
  const AluExp *pre = alu_variable("pre", JX_FLOAT32), *d = alu_binary(ALU_SUB, x, pre);
  Kernel k = {.nargs = 1, .arg_dtypes = {JX_FLOAT32}, .size = ROWS, .dtype = JX_FLOAT32};
  k.exp = alu_binary(ALU_MUL, d, d);
  k.has_reduction = true;
  k.reduction = (Reduction){ALU_ADD, JX_FLOAT32, {.f = 0.0}, COLS, NULL};
  k.has_pre = true;
  k.pre_exp = x;
  k.pre = (Reduction){pre_op, JX_FLOAT32, alu_reduce_identity(pre_op, JX_FLOAT32), COLS, NULL};
  k.nextra = 1;
  k.extra[0] = alu_binary(ALU_MUL, pre, f32(2.0));
  k.extra_dtypes[0] = JX_FLOAT32;
  return k;
}

static void check_differs(const Kernel *a, const Kernel *b, const char *what) {
  CHECK_MSG(!kernel_equal(a, b) && !kernel_equal(b, a), "%s: kernels compare equal", what);
  CHECK_MSG(kernel_hash(a) != kernel_hash(b), "%s: same hash (a weak mix)", what);
}

static void test_identity_covers_every_field(void) {
  Kernel base = spread_kernel(ALU_MAX);
  CHECK(kernel_check(&base) == JX_OK);
  Kernel same = base;
  CHECK(kernel_equal(&base, &same) && kernel_hash(&base) == kernel_hash(&same));
  /* unused slots and fields a kernel does not use take no part */
  same.arg_dtypes[5] = JX_INT8;
  same.extra[2] = f32(7.0);
  same.extra_dtypes[2] = JX_INT16;
  same.pre.epilogue = f32(1.0); /* pre.epilogue is unused */
  CHECK(kernel_equal(&base, &same) && kernel_hash(&base) == kernel_hash(&same));
  Kernel plain = base, plain2;
  plain.has_reduction = plain.has_pre = false;
  plain.nextra = 0;
  plain.exp = f32(3.0);
  plain2 = plain;
  plain2.reduction.op = ALU_MUL, plain2.pre.op = ALU_MIN, plain2.pre_exp = NULL;
  CHECK(kernel_equal(&plain, &plain2) && kernel_hash(&plain) == kernel_hash(&plain2));

  Kernel v;
#define VARY(what, stmt) (v = base, stmt, check_differs(&base, &v, what))
  VARY("first phase op", v.pre.op = ALU_MIN);
  VARY("first phase expression", v.pre_exp = alu_binary(ALU_MUL, base.pre_exp, f32(2.0)));
  VARY("first phase identity", v.pre.identity.f = 0.0);
  VARY("first phase dtype", v.pre.dtype = JX_FLOAT64);
  VARY("first phase size", v.pre.size = COLS + 1);
  VARY("has_pre", v.has_pre = false);
  VARY("reduction op", v.reduction.op = ALU_MAX);
  VARY("reduction identity", v.reduction.identity.f = 1.0);
  VARY("reduction dtype", v.reduction.dtype = JX_FLOAT64);
  VARY("reduction size", v.reduction.size = COLS - 1);
  VARY("reduction epilogue", v.reduction.epilogue = alu_variable("acc", JX_FLOAT32));
  VARY("has_reduction", v.has_reduction = false);
  VARY("expression", v.exp = alu_binary(ALU_ADD, base.exp, f32(1.0)));
  VARY("size", v.size = ROWS + 1);
  VARY("dtype", v.dtype = JX_FLOAT16);
  VARY("nargs", (v.nargs = 2, v.arg_dtypes[1] = JX_FLOAT32));
  VARY("argument dtype", v.arg_dtypes[0] = JX_FLOAT64);
  VARY("extra output", v.extra[0] = alu_binary(ALU_MUL, alu_variable("pre", JX_FLOAT32), f32(3.0)));
  VARY("extra output dtype", v.extra_dtypes[0] = JX_INT32);
  VARY("number of outputs", v.nextra = 0);
#undef VARY
}

/* The regression of issue 10: sum((x - max(x))^2) then sum((x - min(x))^2) on one shape
 * in one process, on every backend -- the two kernels differ only in the first phase's
 * op and must not share an executable. */
static void test_first_phase_not_shared(void) {
  float x[ROWS * COLS];
  uint32_t seed = 7;
  for (int i = 0; i < ROWS * COLS; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)((seed >> 8) % 1000) / 100.0f - 5.0f;
  }
  static const char *const names[2] = {"interp", "cpu"};
  for (int b = 0; b < 2; b++) {
    const Backend *be = backend_get(names[b]);
    CHECK_MSG(be != NULL, "backend %s", names[b]);
    if (!be) continue;
    Buffer *in = buffer_new(be, sizeof x);
    CHECK(in && be->copy_in(be, in->mem, x, sizeof x) == JX_OK);
    for (int pass = 0; pass < 2; pass++) { /* the second pass hits the caches */
      for (int m = 0; m < 2; m++) {
        AluOp op = m ? ALU_MIN : ALU_MAX;
        Kernel k = spread_kernel(op);
        Buffer *outs[2] = {NULL, NULL};
        CHECK_EQ_INT(backend_run_outs(be, &k, &in, false, outs), JX_OK);
        float got[ROWS], got2[ROWS];
        CHECK(be->copy_out(be, got, outs[0]->mem, sizeof got) == JX_OK);
        CHECK(be->copy_out(be, got2, outs[1]->mem, sizeof got2) == JX_OK);
        for (int r = 0; r < ROWS; r++) {
          double p = x[r * COLS], want = 0;
          for (int c = 1; c < COLS; c++) p = m ? fmin(p, x[r * COLS + c]) : fmax(p, x[r * COLS + c]);
          for (int c = 0; c < COLS; c++) want += (x[r * COLS + c] - p) * (x[r * COLS + c] - p);
          CHECK_MSG(fabs(got[r] - want) <= 1e-5 * want, "%s %s pass %d row %d: %.9g, want %.9g",
                    names[b], m ? "min" : "max", pass, r, got[r], want);
          CHECK_MSG(got2[r] == (float)(2 * p), "%s %s row %d: extra output %g, want %g", names[b],
                    m ? "min" : "max", r, got2[r], 2 * p);
        }
        buffer_free(outs[0]), buffer_free(outs[1]);
      }
    }
    buffer_free(in);
  }
}

int main(void) {
  TEST_RUN(test_identity_covers_every_field);
  TEST_RUN(test_first_phase_not_shared);
  return test_finish();
}
