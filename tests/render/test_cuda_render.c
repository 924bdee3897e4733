/* test_cuda_render.c -- the CUDA C framing (src/render/cuda.c) on machines with or
 * without a GPU: kernels of every plan (16-byte vector elementwise, scalar elementwise
 * with broadcasts and several outputs, thread/warp/block rows, column reductions split
 * over blocks, split full reductions, two-phase rows, float16, integer and complex
 * reductions, threefry) render and compile with NVRTC for sm_90 (skipped, passing, where NVRTC is not found); their plans are the
 * ones the backend launches with. Results are checked on the GPU by every *_cuda test. */
#include <stdlib.h>

#include "backend/cuda/cuda.h"
#include "render/cuda.h"
#include "test.h"

static const AluExp *ld(int arg, jx_dtype d, const AluExp *idx) { return alu_global(arg, d, idx); }
static const AluExp *i64(int64_t v) { return alu_const_int(JX_INT64, v); }
static const AluExp *f32(double v) { return alu_const_float(JX_FLOAT32, v); }

typedef struct Case {
  const char *name;
  Kernel k;
  RenderCudaKind kind;
  bool split;
  int vec;
} Case;

static Kernel reduction(int64_t n, int64_t r, jx_dtype d, AluOp op, const AluExp *exp) {
  Kernel k = {.nargs = 1, .size = n, .dtype = d, .exp = exp, .has_reduction = true};
  k.arg_dtypes[0] = d;
  k.reduction = (Reduction){.op = op, .dtype = d, .identity = alu_reduce_identity(op, d), .size = r};
  return k;
}

static void test_render_compile(void) {
  setenv("JAXC_CUDA_COL_GROUP", "1", 1); /* grouped columns (off by default): rendered and compiled here */
  setenv("JAXC_CUDA_ROW_GROUP_ROWS", "2", 1); /* 2 rows a grouped warp row (off by default): the same */
  Case cases[64];
  int n = 0, bias_case = 0;
  const AluExp *g = alu_special("gidx", 1 << 20);
  /* chain-like elementwise on a contiguous float32 input: 16-byte vectors */
  const AluExp *x = ld(0, JX_FLOAT32, g);
  const AluExp *chain = alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_unary(ALU_TANH, alu_binary(ALU_ADD, alu_binary(ALU_MUL, x, f32(1.5)), f32(0.25))), alu_unary(ALU_EXP, alu_unary(ALU_NEG, alu_binary(ALU_MUL, x, x)))), alu_unary(ALU_SQRT, alu_binary(ALU_ADD, alu_unary(ALU_ABS, x), f32(1))));
  chain = alu_binary(ALU_SUB, chain, alu_binary(ALU_DIV, x, f32(3))); /* a division by a literal */
  cases[n++] = (Case){"chain", {.nargs = 1, .arg_dtypes = {JX_FLOAT32}, .size = 1 << 20, .dtype = JX_FLOAT32, .exp = chain},
                      CUDA_ELEMENTWISE, false, 4};
  /* broadcast add of a row vector, two outputs (sum and product) */
  const AluExp *g2 = alu_special("gidx", 999 * 3); /* not a multiple of 4: scalar */
  const AluExp *a = ld(0, JX_FLOAT32, g2), *b = ld(1, JX_FLOAT32, alu_binary(ALU_MOD, g2, i64(3)));
  Kernel two = {.nargs = 2, .arg_dtypes = {JX_FLOAT32, JX_FLOAT32}, .size = 2997, .dtype = JX_FLOAT32,
                .exp = alu_binary(ALU_ADD, a, b), .nextra = 1, .extra = {alu_binary(ALU_MUL, a, b)},
                .extra_dtypes = {JX_FLOAT32}};
  cases[n++] = (Case){"broadcast_two_outputs", two, CUDA_ELEMENTWISE, false, 1};
  /* a bias add (a load at gidx % 512: 4 contiguous a vector) and a relu backward fused
   * with a 6-term product (g[m, k]: the same for a vector's 4 outputs, w[k, n]: 4
   * contiguous) are 16-byte vectors; 4 loads at gidx % 510 + c (neither) are scalar:
   * vectorized, each would take 4 L1 wavefronts a warp instead of 1 */
  {
    const AluExp *gb = alu_special("gidx", 4096 * 512);
    const AluExp *col = alu_binary(ALU_MOD, gb, i64(512)), *row = alu_binary(ALU_DIV, gb, i64(512));
    const AluExp *h = alu_binary(ALU_ADD, ld(0, JX_FLOAT32, gb), ld(1, JX_FLOAT32, col));
    bias_case = n;
    cases[n++] = (Case){"bias_relu", {.nargs = 2, .arg_dtypes = {JX_FLOAT32, JX_FLOAT32}, .size = 4096 * 512,
                                      .dtype = JX_FLOAT32, .exp = alu_binary(ALU_MAX, h, f32(0))},
                        CUDA_ELEMENTWISE, false, 4};
    const AluExp *dot = f32(0);
    for (int kk = 0; kk < 6; kk++) {
      const AluExp *gk = ld(2, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, row, i64(6)), i64(kk)));
      const AluExp *wk = ld(3, JX_FLOAT32, alu_binary(ALU_ADD, col, i64(512 * kk)));
      dot = alu_binary(ALU_ADD, dot, alu_binary(ALU_MUL, gk, wk));
    }
    Kernel kd = {.nargs = 4, .arg_dtypes = {JX_FLOAT32, JX_FLOAT32, JX_FLOAT32, JX_FLOAT32}, .size = 4096 * 512,
                 .dtype = JX_FLOAT32, .exp = alu_where(alu_binary(ALU_CMPLT, f32(0), h), dot, f32(0))};
    cases[n++] = (Case){"relu_backward_dot", kd, CUDA_ELEMENTWISE, false, 4};
    const AluExp *odd = ld(0, JX_FLOAT32, gb);
    for (int c = 0; c < 4; c++)
      odd = alu_binary(ALU_ADD, odd, ld(1, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MOD, gb, i64(510)), i64(c))));
    cases[n++] = (Case){"strided_loads", {.nargs = 2, .arg_dtypes = {JX_FLOAT32, JX_FLOAT32}, .size = 4096 * 512,
                                          .dtype = JX_FLOAT32, .exp = odd}, CUDA_ELEMENTWISE, false, 1};
  }
  /* transposes (transpose_tile): x^T of the MLP's x (784 x 4096 outputs of a 4096 x 784
   * input), attention heads' (8, 128, 64) -> (8, 64, 128) plus a bias read along the
   * outputs, a 100 x 70 one (tiles cut at both edges) in float64, and two transposed
   * loads in one kernel */
  int tile_case = n;
  {
    const AluExp *gt = alu_special("gidx", 784 * 4096);
    const AluExp *at = alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_binary(ALU_MOD, gt, i64(4096)), i64(784)),
                                  alu_binary(ALU_DIV, gt, i64(4096)));
    cases[n++] = (Case){"transpose", {.nargs = 1, .arg_dtypes = {JX_FLOAT32}, .size = 784 * 4096, .dtype = JX_FLOAT32,
                                      .exp = ld(0, JX_FLOAT32, at)}, CUDA_ELEMENTWISE, false, 1};
    const AluExp *gh = alu_special("gidx", 8 * 64 * 128);
    const AluExp *hb = alu_binary(ALU_MUL, alu_binary(ALU_DIV, gh, i64(64 * 128)), i64(64 * 128));
    const AluExp *ah = alu_binary(ALU_ADD, alu_binary(ALU_ADD, hb, alu_binary(ALU_MUL, alu_binary(ALU_MOD, gh, i64(128)), i64(64))),
                                  alu_binary(ALU_MOD, alu_binary(ALU_DIV, gh, i64(128)), i64(64)));
    cases[n++] = (Case){"transpose_heads", {.nargs = 2, .arg_dtypes = {JX_FLOAT32, JX_FLOAT32}, .size = 8 * 64 * 128,
                                            .dtype = JX_FLOAT32,
                                            .exp = alu_binary(ALU_ADD, ld(0, JX_FLOAT32, ah), ld(1, JX_FLOAT32, alu_binary(ALU_MOD, gh, i64(128))))},
                        CUDA_ELEMENTWISE, false, 1};
    const AluExp *ge = alu_special("gidx", 100 * 70);
    const AluExp *ae = alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_binary(ALU_MOD, ge, i64(70)), i64(100)), alu_binary(ALU_DIV, ge, i64(70)));
    const AluExp *xe = ld(0, JX_FLOAT64, ae), *ye = ld(1, JX_FLOAT64, ae);
    cases[n++] = (Case){"transpose_edges_two", {.nargs = 2, .arg_dtypes = {JX_FLOAT64, JX_FLOAT64}, .size = 100 * 70,
                                                .dtype = JX_FLOAT64, .exp = alu_binary(ALU_MUL, xe, alu_unary(ALU_EXP, ye))},
                        CUDA_ELEMENTWISE, false, 1};
    /* the same transpose of float16, bfloat16 and bool inputs (tiles of each type) */
    const AluExp *h16 = ld(0, JX_FLOAT16, ae), *b16 = ld(1, JX_BFLOAT16, ae), *bl = ld(2, JX_BOOL, ae);
    const AluExp *sum16 = alu_binary(ALU_ADD, alu_cast(h16, JX_FLOAT32), alu_cast(b16, JX_FLOAT32));
    cases[n++] = (Case){"transpose_half_bool", {.nargs = 3, .arg_dtypes = {JX_FLOAT16, JX_BFLOAT16, JX_BOOL},
                                                .size = 100 * 70, .dtype = JX_FLOAT32,
                                                .exp = alu_where(bl, sum16, alu_const_float(JX_FLOAT32, 0))},
                        CUDA_ELEMENTWISE, false, 1};
  }
  /* a multiply-add rounded once (ALU_FMA: fmaf / fma), float32 and float64 */
  {
    const AluExp *gf = alu_special("gidx", 4096);
    const AluExp *fa = ld(0, JX_FLOAT32, gf), *d = ld(1, JX_FLOAT64, gf);
    cases[n++] = (Case){"fma", {.nargs = 2, .arg_dtypes = {JX_FLOAT32, JX_FLOAT64}, .size = 4096, .dtype = JX_FLOAT32,
                                .exp = alu_fma(fa, fa, f32(1)), .nextra = 1, .extra = {alu_fma(d, d, alu_const_float(JX_FLOAT64, 1))},
                                .extra_dtypes = {JX_FLOAT64}}, CUDA_ELEMENTWISE, false, 1};
  }
  /* an Adam update's step: p - lr(t) m, lr(t) = 0.001 (cos(pi t / 1e4) + 1) / 2 from the
   * step count t (an int32 scalar): 16-byte vectors, lr computed once a thread
   * (hoist_uniform) */
  int adam_case = n;
  {
    const AluExp *ga = alu_special("gidx", 1 << 16);
    const AluExp *t = alu_cast(ld(2, JX_INT32, i64(0)), JX_FLOAT32);
    const AluExp *lr = alu_binary(ALU_MUL, alu_binary(ALU_ADD, alu_unary(ALU_COS, alu_binary(ALU_MUL, t, f32(3.14159265e-4))), f32(1)), f32(5e-4));
    const AluExp *upd = alu_binary(ALU_SUB, ld(0, JX_FLOAT32, ga), alu_binary(ALU_MUL, lr, ld(1, JX_FLOAT32, ga)));
    cases[n++] = (Case){"adam_uniform", {.nargs = 3, .arg_dtypes = {JX_FLOAT32, JX_FLOAT32, JX_INT32}, .size = 1 << 16,
                                         .dtype = JX_FLOAT32, .exp = upd}, CUDA_ELEMENTWISE, false, 4};
  }
  /* a product's rows (trace/lower.c, lower_dot_rows): out[m, n] = sum_k x[m, k] w^T[n, k]
   * over 4096 x 10 outputs of 512: warp rows with 16-byte loads at each row's base */
  int rows_case = n, post_case = -1;
  {
    const AluExp *gp = alu_special("gidx", 40960), *rp = alu_special("ridx", 512);
    const AluExp *xp = ld(0, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_binary(ALU_DIV, gp, i64(10)), i64(512)), rp));
    const AluExp *wp = ld(1, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_binary(ALU_MOD, gp, i64(10)), i64(512)), rp));
    Kernel kp = reduction(40960, 512, JX_FLOAT32, ALU_ADD, alu_binary(ALU_MUL, xp, wp));
    kp.nargs = 2, kp.arg_dtypes[1] = JX_FLOAT32;
    cases[n++] = (Case){"product_rows", kp, CUDA_WARP_ROW, false, 1};
    /* rows of 510: no vectors (a base + ridx not a multiple of 4 elements) */
    const AluExp *rq = alu_special("ridx", 510);
    const AluExp *xq = ld(0, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_binary(ALU_DIV, gp, i64(10)), i64(510)), rq));
    cases[n++] = (Case){"product_rows_510", reduction(40960, 510, JX_FLOAT32, ALU_ADD, xq), CUDA_WARP_ROW, false, 1};
    /* the MLP's relu(x @ W1 + b1) @ W2 with its left operand recomputed (jit/lower.c,
     * lower_dot_rows_inlines): x[m, :] and b1 shared by the 10 outputs of a row */
    const AluExp *hp = alu_binary(ALU_ADD, xp, ld(2, JX_FLOAT32, rp));
    hp = alu_binary(ALU_MAX, hp, f32(0));
    Kernel kr = reduction(40960, 512, JX_FLOAT32, ALU_ADD, alu_binary(ALU_MUL, hp, wp));
    kr.nargs = 3, kr.arg_dtypes[1] = kr.arg_dtypes[2] = JX_FLOAT32;
    cases[n++] = (Case){"product_rows_relu", kr, CUDA_WARP_ROW, false, 1};
  }
  /* float16 elementwise: scalar */
  const AluExp *gh = alu_special("gidx", 4096);
  cases[n++] = (Case){"f16", {.nargs = 1, .arg_dtypes = {JX_FLOAT16}, .size = 4096, .dtype = JX_FLOAT16,
                              .exp = alu_unary(ALU_EXP, ld(0, JX_FLOAT16, gh))}, CUDA_ELEMENTWISE, false, 1};
  /* row sums: rows of 100 (warp), 4096 (block), 3 (thread) */
  int64_t rows[3] = {100, 4096, 3};
  RenderCudaKind kinds[3] = {CUDA_WARP_ROW, CUDA_BLOCK_ROW, CUDA_THREAD_ROW};
  for (int i = 0; i < 3; i++) {
    const AluExp *gr = alu_special("gidx", 512), *rr = alu_special("ridx", rows[i]);
    const AluExp *e = ld(0, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, gr, i64(rows[i])), rr));
    cases[n++] = (Case){"row_sum", reduction(512, rows[i], JX_FLOAT32, ALU_ADD, e), kinds[i], false, 1};
  }
  /* column sums of (1000, 16384): threads per output, coalesced; of (1000, 512) and
   * (4096, 10) (the MLP's bias gradients): too few outputs to fill the GPU, 32 columns a
   * block with the rows split over blocks, as of (100352, 32) (the Fashion-MNIST CNN's
   * first bias gradient: 1056 chunks an output on an H100); of (100, 512): warps per
   * column */
  static const int64_t colshape[5][2] = {{1000, 16384}, {1000, 512}, {4096, 10}, {100352, 32}, {100, 512}};
  static const RenderCudaKind colkind[5] = {CUDA_THREAD_ROW, CUDA_COLUMNS, CUDA_COLUMNS, CUDA_COLUMNS, CUDA_WARP_ROW};
  for (int i = 0; i < 5; i++) {
    int64_t nr = colshape[i][0], cols = colshape[i][1];
    const AluExp *gr = alu_special("gidx", cols), *rr = alu_special("ridx", nr);
    const AluExp *e = ld(0, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, rr, i64(cols)), gr));
    cases[n++] = (Case){"column_sum", reduction(cols, nr, JX_FLOAT32, ALU_ADD, e), colkind[i], false, 1};
  }
  /* a column max of int32 with an epilogue, and a complex64 column product */
  {
    const AluExp *gr = alu_special("gidx", 300), *rr = alu_special("ridx", 2000);
    Kernel km = reduction(300, 2000, JX_INT32, ALU_MAX, ld(0, JX_INT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, rr, i64(300)), gr)));
    km.reduction.epilogue = alu_binary(ALU_ADD, alu_variable("acc", JX_INT32), alu_const_int(JX_INT32, 1));
    cases[n++] = (Case){"column_max", km, CUDA_COLUMNS, false, 1};
    cases[n++] = (Case){"c64_column_prod",
                        reduction(300, 2000, JX_COMPLEX64, ALU_MUL,
                                  ld(0, JX_COMPLEX64, alu_binary(ALU_ADD, alu_binary(ALU_MUL, rr, i64(300)), gr))),
                        CUDA_COLUMNS, false, 1};
  }
  /* a weight gradient h^T @ g as one column reduction (trace/lower.c, lower_dot_cols):
   * out[m, n] = sum_k relu(x[k, m] + b[m]) g[k, n] over 512 x 10 outputs of 4096 rows,
   * and the same with h stored: grouped columns, 10 outputs a lane */
  int cols_case = n;
  {
    const AluExp *gc = alu_special("gidx", 5120), *rc = alu_special("ridx", 4096);
    const AluExp *m = alu_binary(ALU_DIV, gc, i64(10)), *nn = alu_binary(ALU_MOD, gc, i64(10));
    const AluExp *xc = ld(0, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, rc, i64(512)), m));
    const AluExp *gg = ld(1, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, rc, i64(10)), nn));
    const AluExp *hc = alu_binary(ALU_MAX, alu_binary(ALU_ADD, xc, ld(2, JX_FLOAT32, m)), f32(0));
    Kernel kc = reduction(5120, 4096, JX_FLOAT32, ALU_ADD, alu_binary(ALU_MUL, hc, gg));
    kc.nargs = 3, kc.arg_dtypes[1] = kc.arg_dtypes[2] = JX_FLOAT32;
    cases[n++] = (Case){"dw2_relu", kc, CUDA_COLUMNS, false, 1};
    Kernel kd = reduction(5120, 4096, JX_FLOAT32, ALU_ADD, alu_binary(ALU_MUL, xc, gg));
    kd.nargs = 2, kd.arg_dtypes[1] = JX_FLOAT32;
    cases[n++] = (Case){"dw2", kd, CUDA_COLUMNS, false, 1};
    /* epilogue outputs (jit/lower.c, fuse_consumer): W2 - 0.01 dW2 beside dW2 (grouped),
     * b1 - 0.01 db1 beside a bias gradient's column sum, -sum / n beside a split full sum */
    Kernel ke = kc;
    ke.nargs = 4, ke.arg_dtypes[3] = JX_FLOAT32;
    ke.nextra = 1, ke.extra_dtypes[0] = JX_FLOAT32;
    ke.extra[0] = alu_binary(ALU_SUB, ld(3, JX_FLOAT32, gc), alu_binary(ALU_MUL, alu_variable("acc", JX_FLOAT32), f32(0.01)));
    cases[n++] = (Case){"dw2_update", ke, CUDA_COLUMNS, false, 1};
    const AluExp *gb = alu_special("gidx", 512);
    Kernel kb = reduction(512, 4096, JX_FLOAT32, ALU_ADD, ld(0, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, rc, i64(512)), gb)));
    kb.nargs = 2, kb.arg_dtypes[1] = JX_FLOAT32;
    kb.nextra = 1, kb.extra_dtypes[0] = JX_FLOAT32;
    kb.extra[0] = alu_binary(ALU_SUB, ld(1, JX_FLOAT32, gb), alu_binary(ALU_MUL, alu_variable("acc", JX_FLOAT32), f32(0.01)));
    cases[n++] = (Case){"db1_update", kb, CUDA_COLUMNS, false, 1};
    const AluExp *rs = alu_special("ridx", 1 << 20);
    Kernel kl = reduction(1, 1 << 20, JX_FLOAT32, ALU_ADD, ld(0, JX_FLOAT32, rs));
    kl.nextra = 1, kl.extra_dtypes[0] = JX_FLOAT32;
    kl.extra[0] = alu_unary(ALU_NEG, alu_binary(ALU_MUL, alu_variable("acc", JX_FLOAT32), f32(1.0 / (1 << 20))));
    cases[n++] = (Case){"loss_split", kl, CUDA_BLOCK_ROW, true, 1};
  }
  /* full sum of 2^24: split over blocks; max too; integer sum; float16 sum */
  {
    const AluExp *gr = alu_special("gidx", 1), *rr = alu_special("ridx", 1 << 24);
    cases[n++] = (Case){"full_sum", reduction(1, 1 << 24, JX_FLOAT32, ALU_ADD, ld(0, JX_FLOAT32, rr)), CUDA_BLOCK_ROW, true, 1};
    cases[n++] = (Case){"full_max", reduction(1, 1 << 24, JX_FLOAT32, ALU_MAX, ld(0, JX_FLOAT32, rr)), CUDA_BLOCK_ROW, true, 1};
    cases[n++] = (Case){"int_sum", reduction(1, 1 << 24, JX_INT32, ALU_ADD, ld(0, JX_INT32, rr)), CUDA_BLOCK_ROW, true, 1};
    cases[n++] = (Case){"f16_sum", reduction(1, 1 << 24, JX_FLOAT16, ALU_ADD, ld(0, JX_FLOAT16, rr)), CUDA_BLOCK_ROW, true, 1};
    (void)gr;
  }
  /* two-phase row (softmax's denominator): sum of exp(x - max) over rows of 4096 */
  {
    const AluExp *gr = alu_special("gidx", 4096), *rr = alu_special("ridx", 4096);
    const AluExp *xv = ld(0, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, gr, i64(4096)), rr));
    Kernel k = reduction(4096, 4096, JX_FLOAT32, ALU_ADD,
                         alu_unary(ALU_EXP, alu_binary(ALU_SUB, xv, alu_variable("pre", JX_FLOAT32))));
    k.has_pre = true;
    k.pre_exp = xv;
    k.pre = (Reduction){.op = ALU_MAX, .dtype = JX_FLOAT32, .identity = alu_reduce_identity(ALU_MAX, JX_FLOAT32), .size = 4096};
    k.reduction.epilogue = alu_binary(ALU_ADD, alu_variable("acc", JX_FLOAT32), alu_variable("pre", JX_FLOAT32));
    cases[n++] = (Case){"two_phase", k, CUDA_BLOCK_ROW, false, 1};
    /* short rows: warps */
    const AluExp *gw = alu_special("gidx", 100000), *rw = alu_special("ridx", 40);
    const AluExp *xw = ld(0, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, gw, i64(40)), rw));
    Kernel kw = reduction(100000, 40, JX_FLOAT32, ALU_ADD,
                          alu_unary(ALU_EXP, alu_binary(ALU_SUB, xw, alu_variable("pre", JX_FLOAT32))));
    kw.has_pre = true, kw.pre_exp = xw, kw.pre = k.pre, kw.pre.size = 40;
    kw.reduction.epilogue = k.reduction.epilogue;
    cases[n++] = (Case){"two_phase_warp", kw, CUDA_WARP_ROW, false, 1};
    /* softmax in one kernel: the row output exp(x - max) / sum after each row's sums
     * (jit/lower.c's fuse_row_output), 16-byte vectors along block rows, scalar along
     * warp and thread rows */
    Kernel ks = k;
    ks.reduction.epilogue = NULL;
    ks.has_row_out = true, ks.row_dtype = JX_FLOAT32;
    ks.row_exp = alu_binary(ALU_DIV, alu_unary(ALU_EXP, alu_binary(ALU_SUB, xv, alu_variable("pre", JX_FLOAT32))),
                            alu_variable("acc", JX_FLOAT32));
    cases[n++] = (Case){"softmax_rows", ks, CUDA_BLOCK_ROW, false, 1};
    Kernel ksw = kw;
    ksw.reduction.epilogue = NULL;
    ksw.has_row_out = true, ksw.row_dtype = JX_FLOAT32;
    ksw.row_exp = alu_binary(ALU_DIV, alu_unary(ALU_EXP, alu_binary(ALU_SUB, xw, alu_variable("pre", JX_FLOAT32))),
                             alu_variable("acc", JX_FLOAT32));
    cases[n++] = (Case){"softmax_rows_warp", ksw, CUDA_WARP_ROW, false, 1};
    /* the cross-entropy step's rows of 10 (jit/lower.c: hoist_reductions, fuse_consumer):
     * the sum of exp(x - max) (e, stored) as the first phase, the loss row as the
     * second, the sum as a further output, and dlogits = -y / n + s / sum * e as the row
     * output, s (the labels' row sum) read at the row */
    {
      const AluExp *gx = alu_special("gidx", 4096), *rx = alu_special("ridx", 10);
      const AluExp *at = alu_binary(ALU_ADD, alu_binary(ALU_MUL, gx, i64(10)), rx);
      const AluExp *e = ld(0, JX_FLOAT32, at), *yl = ld(1, JX_FLOAT32, at), *pre = alu_variable("pre", JX_FLOAT32);
      Kernel kx = reduction(4096, 10, JX_FLOAT32, ALU_ADD, alu_binary(ALU_MUL, alu_unary(ALU_LOG, pre), yl));
      kx.nargs = 3, kx.arg_dtypes[1] = kx.arg_dtypes[2] = JX_FLOAT32;
      kx.has_pre = true, kx.pre_exp = e, kx.pre = k.pre;
      kx.pre.op = ALU_ADD, kx.pre.identity = alu_reduce_identity(ALU_ADD, JX_FLOAT32), kx.pre.size = 10;
      kx.nextra = 1, kx.extra[0] = pre, kx.extra_dtypes[0] = JX_FLOAT32;
      kx.has_row_out = true, kx.row_dtype = JX_FLOAT32;
      kx.row_exp = alu_binary(ALU_ADD, alu_binary(ALU_MUL, yl, f32(-1.0 / 4096)),
                              alu_binary(ALU_MUL, alu_binary(ALU_DIV, ld(2, JX_FLOAT32, gx), pre), e));
      cases[n++] = (Case){"xent_grad_rows", kx, CUDA_WARP_ROW, false, 1};
      /* the same rows as the group epilogue (ir/alu.h, Kernel.post) of the logits'
       * grouped warp rows relu(x + b1) @ w (args x, w, b1, then the post's y and s, and
       * its last: the logits) */
      const AluExp *gq = alu_special("gidx", 40960), *rq = alu_special("ridx", 512);
      const AluExp *xq = ld(0, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_binary(ALU_DIV, gq, i64(10)), i64(512)), rq));
      const AluExp *wq = ld(1, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_binary(ALU_MOD, gq, i64(10)), i64(512)), rq));
      const AluExp *hq = alu_binary(ALU_MAX, alu_binary(ALU_ADD, xq, ld(2, JX_FLOAT32, rq)), f32(0));
      Kernel kg = reduction(40960, 512, JX_FLOAT32, ALU_ADD, alu_binary(ALU_MUL, hq, wq));
      kg.nargs = 5;
      for (int q = 1; q < 5; q++) kg.arg_dtypes[q] = JX_FLOAT32;
      static Kernel post; /* (the case keeps a pointer) */
      post = kx;
      const AluExp *eq = ld(5, JX_FLOAT32, alu_simplify(at)), *yq = ld(3, JX_FLOAT32, at);
      post.nargs = 6;
      for (int q = 0; q < 6; q++) post.arg_dtypes[q] = JX_FLOAT32;
      post.exp = alu_binary(ALU_MUL, alu_unary(ALU_LOG, pre), yq);
      post.pre_exp = alu_unary(ALU_EXP, eq);
      post.row_exp = alu_binary(ALU_ADD, alu_binary(ALU_MUL, yq, f32(-1.0 / 4096)),
                                alu_binary(ALU_MUL, alu_binary(ALU_DIV, ld(4, JX_FLOAT32, gx), pre), eq));
      kg.post = &post;
      CHECK_EQ_INT(kernel_check(&kg), JX_OK);
      CHECK_EQ_INT(kernel_nouts(&kg), 4);
      post_case = n;
      cases[n++] = (Case){"group_post", kg, CUDA_WARP_ROW, false, 1};
      CHECK_EQ_INT(render_cuda_plan(&cases[post_case].k).group, 10);
    }
    /* rows of 3: a thread per row, the row output in float16 */
    const AluExp *gt = alu_special("gidx", 1000), *rt = alu_special("ridx", 3);
    const AluExp *xt = ld(0, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, gt, i64(3)), rt));
    Kernel kt = reduction(1000, 3, JX_FLOAT32, ALU_ADD, xt);
    kt.has_row_out = true, kt.row_dtype = JX_FLOAT16;
    kt.row_exp = alu_cast(alu_binary(ALU_SUB, xt, alu_variable("acc", JX_FLOAT32)), JX_FLOAT16);
    cases[n++] = (Case){"row_out_thread", kt, CUDA_THREAD_ROW, false, 1};
  }
  /* threefry bits */
  {
    const AluExp *gt = alu_special("gidx", 4096);
    const AluExp *c = alu_cast(gt, JX_UINT32), *k0 = alu_const_int(JX_UINT32, 42), *k1 = alu_const_int(JX_UINT32, 7);
    cases[n++] = (Case){"threefry", {.nargs = 0, .size = 4096, .dtype = JX_UINT32,
                                     .exp = alu_threefry_word(k0, k1, c, c, 1)}, CUDA_ELEMENTWISE, false, 1};
  }
  /* complex64/complex128 (never 16-byte vectors: 8/16 bytes an element): products and
   * sums elementwise with a comparison output; a float32 output from a complex input
   * beside a vectorized float32 input; warp, block, thread (16 lanes) and split rows of
   * sums and products, through part-by-part shuffles and volatile partial reads */
  {
    const AluExp *gc = alu_special("gidx", 1 << 20);
    const AluExp *z = ld(0, JX_COMPLEX64, gc), *w = ld(1, JX_COMPLEX64, gc);
    Kernel kc = {.nargs = 2, .arg_dtypes = {JX_COMPLEX64, JX_COMPLEX64}, .size = 1 << 20, .dtype = JX_COMPLEX64,
                 .exp = alu_binary(ALU_ADD, alu_binary(ALU_MUL, z, w), alu_unary(ALU_NEG, z)), .nextra = 1,
                 .extra = {alu_binary(ALU_CMPNE, z, w)}, .extra_dtypes = {JX_BOOL}};
    cases[n++] = (Case){"c64_elementwise", kc, CUDA_ELEMENTWISE, false, 1};
    const AluExp *zr = alu_binary(ALU_ADD, alu_real(z), ld(1, JX_FLOAT32, gc));
    Kernel kr = {.nargs = 2, .arg_dtypes = {JX_COMPLEX64, JX_FLOAT32}, .size = 1 << 20, .dtype = JX_FLOAT32,
                 .exp = alu_binary(ALU_MUL, zr, alu_imag(z))};
    cases[n++] = (Case){"c64_real_vec", kr, CUDA_ELEMENTWISE, false, 4};
    const AluExp *z2 = alu_complex(alu_cast(ld(0, JX_FLOAT64, alu_special("gidx", 4096)), JX_FLOAT64),
                                   alu_const_float(JX_FLOAT64, -0.5));
    cases[n++] = (Case){"c128_make", {.nargs = 1, .arg_dtypes = {JX_FLOAT64}, .size = 4096, .dtype = JX_COMPLEX128,
                                      .exp = alu_binary(ALU_SUB, z2, alu_cast(z2, JX_COMPLEX128))},
                        CUDA_ELEMENTWISE, false, 1};
    int64_t crows[3] = {100, 4096, 3};
    RenderCudaKind ckinds[3] = {CUDA_WARP_ROW, CUDA_BLOCK_ROW, CUDA_THREAD_ROW};
    for (int i = 0; i < 3; i++) {
      jx_dtype d = i == 1 ? JX_COMPLEX128 : JX_COMPLEX64;
      const AluExp *gr = alu_special("gidx", 512), *rr = alu_special("ridx", crows[i]);
      const AluExp *e = ld(0, d, alu_binary(ALU_ADD, alu_binary(ALU_MUL, gr, i64(crows[i])), rr));
      cases[n++] = (Case){"complex_row", reduction(512, crows[i], d, i == 0 ? ALU_MUL : ALU_ADD, e), ckinds[i], false, 1};
    }
    const AluExp *gcol = alu_special("gidx", 16384), *rcol = alu_special("ridx", 1000);
    const AluExp *ecol = ld(0, JX_COMPLEX128, alu_binary(ALU_ADD, alu_binary(ALU_MUL, rcol, i64(16384)), gcol));
    cases[n++] = (Case){"c128_column_sum", reduction(16384, 1000, JX_COMPLEX128, ALU_ADD, ecol), CUDA_THREAD_ROW, false, 1};
    const AluExp *rfull = alu_special("ridx", 1 << 24);
    cases[n++] = (Case){"c128_full_sum", reduction(1, 1 << 24, JX_COMPLEX128, ALU_ADD, ld(0, JX_COMPLEX128, rfull)),
                        CUDA_BLOCK_ROW, true, 1};
    cases[n++] = (Case){"c64_full_sum", reduction(1, 1 << 24, JX_COMPLEX64, ALU_ADD, ld(0, JX_COMPLEX64, rfull)),
                        CUDA_BLOCK_ROW, true, 1};
    /* the NaN flags of svd's entries (backend/cuda/solver.c): max of isnan over each entry */
    const AluExp *zf = ld(0, JX_COMPLEX64, rfull);
    Kernel kn = reduction(1, 1 << 24, JX_INT32, ALU_MAX,
                          alu_cast(alu_binary(ALU_OR, alu_unary(ALU_ISNAN, alu_real(zf)), alu_unary(ALU_ISNAN, alu_imag(zf))), JX_INT32));
    kn.arg_dtypes[0] = JX_COMPLEX64;
    cases[n++] = (Case){"nan_flag", kn, CUDA_BLOCK_ROW, true, 1};
  }
  CHECK(render_cuda_plan(&cases[rows_case].k).vec_inputs == 3);
  CHECK(render_cuda_plan(&cases[rows_case + 1].k).vec_inputs == 0);
  /* grouped warp rows: the product's 10 columns of 2 rows a warp (4096 rows: 2048 warps),
   * x (and b1) read once a step for a row's 10, w^T once a column for the 2 rows; the relu
   * computed once an element */
  for (int c = rows_case; c <= rows_case + 2; c += 2) {
    RenderCudaPlan pp = render_cuda_plan(&cases[c].k);
    CHECK_MSG(pp.group == 10 && pp.rows == 2, "%s: group %d, rows %d", cases[c].name, pp.group, pp.rows);
    char name[RENDER_NAME_MAX];
    char *t = render_kernel(&render_cuda, &cases[c].k, name);
    CHECK(t != NULL);
    int x_loads = 0, w_loads = 0, b_loads = 0, relus = 0;
    for (const char *q = t; q && (q = strstr(q, "(in0 + ")); q++) x_loads++;
    for (const char *q = t; q && (q = strstr(q, "(in1 + ")); q++) w_loads++;
    for (const char *q = t; q && (q = strstr(q, "(in2 + ")); q++) b_loads++;
    for (const char *q = t; q && (q = strstr(q, "jx_fmax")); q++) relus++;
    /* 2 steps of 128 elements ahead for each of the 2 rows (rows of 512), w^T's 10 for
     * both, the relu once a step and row for the 10 */
    CHECK_MSG(x_loads == 4 && w_loads == 20 && b_loads == (c == rows_case ? 0 : 2) && relus == (c == rows_case ? 0 : 4),
              "%s: %d loads of x, %d of w, %d of b, %d relus", cases[c].name, x_loads, w_loads, b_loads, relus);
    if (getenv("JAXC_TEST_DUMP")) puts(t);
    free(t);
  }
  CHECK(render_cuda_plan(&cases[rows_case + 1].k).group == 1);
  /* 128 rows (batch 128): a warp a row (2 a warp would leave 64 warps) */
  {
    const AluExp *gs = alu_special("gidx", 1280), *rs = alu_special("ridx", 512);
    const AluExp *xs = ld(0, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_binary(ALU_DIV, gs, i64(10)), i64(512)), rs));
    const AluExp *ws = ld(1, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_binary(ALU_MOD, gs, i64(10)), i64(512)), rs));
    Kernel ks = reduction(1280, 512, JX_FLOAT32, ALU_ADD, alu_binary(ALU_MUL, xs, ws));
    ks.nargs = 2, ks.arg_dtypes[1] = JX_FLOAT32;
    RenderCudaPlan ps = render_cuda_plan(&ks);
    CHECK_MSG(ps.kind == CUDA_WARP_ROW && ps.group == 10 && ps.rows == 1, "128 rows: group %d, rows %d", ps.group, ps.rows);
  }
  /* 16-byte vectors: 4 a thread where the grid still fills the GPU (2^26 elements), 1 a
   * thread where 4 would leave a few blocks a multiprocessor (the MLP's 4096 x 512) */
  {
    const AluExp *gl = alu_special("gidx", 1 << 26);
    Kernel big = {.nargs = 1, .arg_dtypes = {JX_FLOAT32}, .size = 1 << 26, .dtype = JX_FLOAT32,
                  .exp = alu_binary(ALU_MUL, ld(0, JX_FLOAT32, gl), f32(2))};
    RenderCudaPlan pb = render_cuda_plan(&big), pr = render_cuda_plan(&cases[bias_case].k);
    CHECK_MSG(pb.vec == 4 && pb.nvec == 4 && pr.vec == 4 && pr.nvec == 1, "vectors a thread: %d (2^26), %d (4096 x 512)",
              pb.nvec, pr.nvec);
  }
  /* int32 index arithmetic (narrow_indices) where every value fits: the digits of an
   * im2col's flat index; int64 kept where they may not (2^33 outputs) */
  for (int big = 0; big < 2; big++) {
    int64_t size = big ? (int64_t)1 << 33 : 7225344;
    const AluExp *gi = alu_special("gidx", size);
    const AluExp *tap = alu_binary(ALU_MOD, alu_binary(ALU_DIV, gi, i64(32)), i64(9));
    const AluExp *at = alu_binary(ALU_ADD, alu_binary(ALU_MUL, tap, i64(448)), alu_binary(ALU_MOD, gi, i64(32)));
    Kernel kn = {.nargs = 1, .arg_dtypes = {JX_FLOAT32}, .size = size, .dtype = JX_FLOAT32,
                 .exp = alu_binary(ALU_MUL, ld(0, JX_FLOAT32, at), f32(2))};
    char name[RENDER_NAME_MAX];
    char *t = render_kernel(&render_cuda, &kn, name);
    bool narrow = t && strstr(t, "((int32_t)gidx)") != NULL;
    CHECK_MSG(t && narrow == !big, "%s indices: %s", big ? "2^33" : "im2col", narrow ? "int32" : "int64");
    free(t);
  }
  /* the uniform learning rate: one cosine a thread, before its loop */
  {
    char name[RENDER_NAME_MAX];
    char *t = render_kernel(&render_cuda, &cases[adam_case].k, name);
    int coss = 0;
    for (const char *q = t; q && (q = strstr(q, "cos((double)")); q++) coss++;
    const char *loop = t ? strstr(t, "for (") : NULL, *c0 = t ? strstr(t, "cos((double)") : NULL;
    CHECK_MSG(coss == 1 && loop && c0 && c0 < loop, "adam_uniform: %d cosines (before the loop: %d)", coss, c0 && loop && c0 < loop);
    free(t);
  }
  /* grouped columns: x[k, m] read once a row for the 10 outputs of m (the relu computed
   * once), g[k, n] once an output */
  for (int c = cols_case; c <= cols_case + 1; c++) {
    RenderCudaPlan pc = render_cuda_plan(&cases[c].k);
    CHECK_MSG(pc.group == 10, "%s: group %d", cases[c].name, pc.group);
    char name[RENDER_NAME_MAX];
    char *t = render_kernel(&render_cuda, &cases[c].k, name);
    CHECK(t != NULL);
    int x_loads = 0, g_loads = 0, relus = 0;
    for (const char *q = t; q && (q = strstr(q, "in0[")); q++) x_loads++;
    for (const char *q = t; q && (q = strstr(q, "in1[")); q++) g_loads++;
    for (const char *q = t; q && (q = strstr(q, "jx_fmax")); q++) relus++;
    CHECK_MSG(x_loads == 1 && g_loads == 10 && relus == (c == cols_case ? 1 : 0), "%s: %d loads of x, %d of g, %d relus",
              cases[c].name, x_loads, g_loads, relus);
    if (getenv("JAXC_TEST_DUMP")) puts(t);
    free(t);
  }
  /* the bias gradients' column sums share nothing across outputs: ungrouped */
  for (int i = 0; i < n; i++)
    if (cases[i].kind == CUDA_COLUMNS && (i < cols_case || i > cols_case + 2))
      CHECK_MSG(render_cuda_plan(&cases[i].k).group == 1, "%s grouped", cases[i].name);
  /* rows that share nothing across outputs (row sums, softmax): one warp an output */
  for (int i = 0; i < n; i++)
    if (i != rows_case && i != rows_case + 2 && i != post_case && cases[i].kind == CUDA_WARP_ROW)
      CHECK_MSG(render_cuda_plan(&cases[i].k).group == 1, "%s grouped", cases[i].name);
  /* transposed tiles: B the outputs' inner extent, the loads read from shared memory; no
   * other case tiled */
  {
    static const int64_t want_b[4] = {4096, 128, 70, 70};
    for (int i = 0; i < n; i++) {
      int64_t tb = render_cuda_plan(&cases[i].k).tile_b;
      int t = i - tile_case;
      CHECK_MSG(tb == (t >= 0 && t < 4 ? want_b[t] : 0), "%s: tile_b %lld", cases[i].name, (long long)tb);
    }
    char name[RENDER_NAME_MAX];
    char *t = render_kernel(&render_cuda, &cases[tile_case + 2].k, name);
    CHECK(t && strstr(t, "jx_tl0[32][33]") && strstr(t, "jx_tl1[32][33]") && strstr(t, "__syncthreads"));
    if (t && getenv("JAXC_TEST_DUMP")) puts(t);
    free(t);
  }
  /* render all into one unit, as a jit program */
  size_t plen = *render_cuda.prelude_len, cap = plen + 2, len = 0;
  char *unit = malloc(cap);
  memcpy(unit, render_cuda.prelude, plen), len = plen, unit[len++] = '\n';
  for (int i = 0; i < n; i++) {
    CHECK_MSG(kernel_check(&cases[i].k) == JX_OK, "%s: %s", cases[i].name, jx_last_error());
    jx_clear_error();
    RenderCudaPlan p = render_cuda_plan(&cases[i].k);
    CHECK_MSG(p.kind == cases[i].kind, "%s: plan kind %d, expected %d", cases[i].name, p.kind, cases[i].kind);
    CHECK_MSG(p.split == cases[i].split, "%s: split %d", cases[i].name, p.split);
    CHECK_MSG(p.vec == cases[i].vec, "%s: vec %d, expected %d", cases[i].name, p.vec, cases[i].vec);
    char name[RENDER_NAME_MAX];
    char *t = render_kernel(&render_cuda, &cases[i].k, name);
    CHECK_MSG(t != NULL, "%s: %s", cases[i].name, jx_last_error());
    if (!t) continue;
    CHECK(strstr(t, "__global__") != NULL);
    /* the predicate the cuda backend schedules graph branches by (cuda.c graph_step)
     * agrees with the rendered text */
    CHECK_MSG(render_cuda_uses_tickets(&cases[i].k) == (strstr(t, "jx_split_tickets") != NULL), "%s: tickets %d",
              cases[i].name, render_cuda_uses_tickets(&cases[i].k));
    size_t tl = strlen(t);
    unit = realloc(unit, (cap = len + tl + 2));
    memcpy(unit + len, t, tl), len += tl, unit[len++] = '\n';
    unit[len] = 0;
    free(t);
  }
  unit[len] = 0;
  /* JAXC_TEST_UNIT=path: the unit written there (nvcc --resource-usage reads registers) */
  const char *up = getenv("JAXC_TEST_UNIT");
  FILE *uf = up ? fopen(up, "w") : NULL;
  if (uf) fputs(unit, uf), fclose(uf);
  size_t cubin = 0;
  jx_status s = cuda_nvrtc_check(unit, 90, &cubin);
  if (s == JX_ERR_DEVICE) printf("NVRTC not found, not compiled: %s\n", jx_last_error());
  else {
    CHECK_MSG(s == JX_OK && cubin > 0, "NVRTC: %.3000s", jx_last_error());
    if (s != JX_OK) fprintf(stderr, "%s\n", unit);
  }
  jx_clear_error();
  free(unit);
}

int main(void) {
  TEST_RUN(test_render_compile);
  return test_finish();
}
