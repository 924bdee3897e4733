/* test_emit.c -- the renderer's split: the portable emitter (emit.h) behind a framing
 * other than the cpu one. A test target fills RenderLang's GPU hooks as a CUDA C
 * framing would (one thread per output, the index from `global_index`), and the
 * hook helpers render the shared-memory, barrier and warp-reduction statements. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "render/emit.h"
#include "test.h"

/* One output per thread: gidx from the target, a bounds guard, the expression. */
static bool thread_frame(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals) {
  emit_args(b, lang, k);
  buf_printf(b, "  const int64_t gidx = %s;\n  if (gidx >= n) return;\n", lang->global_index);
  EmitPart p = {.lang = lang, .out = b, .indent = "  ", .nlocals = nlocals};
  char *v = emit_part(&p, k->exp);
  if (!v) return false;
  buf_str(b, "  out0[gidx] = ");
  emit_store(b, k->dtype, v);
  buf_str(b, ";\n");
  free(v);
  return true;
}

static const RenderLang gpu_like = {
    .name = "gpu-like",
    .fn_prefix = "extern \"C\" __global__ ",
    .params = "(void *const *in, void *const *out, int64_t n)",
    .restrict_kw = "__restrict__",
    .frame = thread_frame,
    .global_index = "((int64_t)blockIdx.x * blockDim.x + threadIdx.x)",
    .shared_fmt = "__shared__ $T $N[$K];",
    .barrier = "__syncthreads();",
    .warp_shuffle_fmt = "__shfl_xor_sync(0xffffffffu, $0, $1)",
    .warp_size = 32,
};

static Kernel axpb(int64_t n, jx_dtype d) {
  const AluExp *g = alu_special("gidx", n);
  Kernel k = {.nargs = 1, .arg_dtypes = {d}, .size = n, .dtype = d};
  k.exp = alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_global(0, d, g), alu_const_float(d, 2)),
                     alu_const_float(d, 1));
  return k;
}

static void test_framing(void) {
  Kernel k = axpb(1000, JX_FLOAT32);
  char name[RENDER_NAME_MAX], cname[RENDER_NAME_MAX];
  char *t = render_kernel(&gpu_like, &k, name);
  char *c = render_kernel(&render_c, &k, cname);
  CHECK(t && c);
  if (!t || !c) goto done;
  char sig[256];
  snprintf(sig, sizeof sig, "extern \"C\" __global__ void %s(void *const *in, void *const *out, int64_t n) {\n", name);
  CHECK_MSG(strstr(t, sig) != NULL, "signature missing in\n%s", t);
  CHECK(strstr(t, "const float *__restrict__ in0 = (const float *)in[0];") != NULL);
  CHECK(strstr(t, "const int64_t gidx = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x);") != NULL);
  CHECK(strstr(t, "out0[gidx] = ((in0[gidx] * 2.0f) + 1.0f);") != NULL);
  CHECK(strncmp(t, "/*\n * kernel size=1000", 22) == 0); /* the IR above the function */
  /* the same expression text in both framings; the cpu one loops over [start, end) */
  CHECK(strstr(c, "((in0[gidx] * 2.0f) + 1.0f)") != NULL);
  CHECK(strstr(c, "for (int64_t gidx = start; gidx < end; gidx++)") != NULL);
  CHECK(strstr(t, "start") == NULL);
  CHECK(strncmp(name, "k_add_mul_1000_", 15) == 0 && strcmp(name, cname) != 0);
done:
  free(t);
  free(c);
}

static void test_hooks(void) {
  Buf b = {0};
  CHECK(emit_shared(&b, &gpu_like, "  ", JX_FLOAT16, "part", 256));
  CHECK(emit_barrier(&b, &gpu_like, "  "));
  char *s = buf_take(&b);
  CHECK_STR(s, "  __shared__ float part[256];\n  __syncthreads();\n"); /* f16 computes in float */
  free(s);

  int nlocals = 0;
  EmitPart p = {.lang = &gpu_like, .out = &b, .indent = "    ", .nlocals = &nlocals};
  Reduction fsum = {.op = ALU_ADD, .dtype = JX_FLOAT32};
  CHECK(emit_warp_reduce(&p, &b, &fsum, "acc"));
  s = buf_take(&b);
  CHECK_STR(s, "    for (int o = 16; o > 0; o /= 2) acc = (acc + __shfl_xor_sync(0xffffffffu, acc, o));\n");
  free(s);
  Reduction imax = {.op = ALU_MAX, .dtype = JX_INT32}, isum = {.op = ALU_ADD, .dtype = JX_INT32};
  CHECK(emit_warp_reduce(&p, &b, &imax, "a"));
  CHECK(emit_warp_reduce(&p, &b, &isum, "a"));
  s = buf_take(&b);
  CHECK_STR(s, "    for (int o = 16; o > 0; o /= 2) a = jx_max_i32(a, __shfl_xor_sync(0xffffffffu, a, o));\n"
               "    for (int o = 16; o > 0; o /= 2) a = jx_add_i32(a, __shfl_xor_sync(0xffffffffu, a, o));\n");
  free(s);

  /* the cpu target has none of them: clear errors, nothing appended */
  EmitPart pc = {.lang = &render_c, .out = &b, .indent = "", .nlocals = &nlocals};
  CHECK(!emit_shared(&b, &render_c, "", JX_FLOAT32, "x", 4));
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "target c has no shared memory");
  CHECK(!emit_barrier(&b, &render_c, ""));
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "target c has no block barrier");
  CHECK(!emit_warp_reduce(&pc, &b, &fsum, "acc"));
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "target c has no warp shuffle");
  s = buf_take(&b);
  CHECK_STR(s, "");
  free(s);
}

/* The portable prelude needs no compiler builtins or pragmas: those live in the
 * target part (prelude_c.h), which comes first. */
static void test_prelude_split(void) {
  const char *p = render_prelude();
  CHECK(render_prelude_len() == strlen(p));
  const char *portable = strstr(p, "/* prelude.h --");
  CHECK(portable != NULL);
  if (!portable) return;
  CHECK(strstr(p, "#define JX_IVDEP") < portable && strstr(p, "jx_exp_f32(float x)") < portable);
  CHECK(strstr(portable, "__builtin") == NULL && strstr(portable, "_Pragma") == NULL &&
        strstr(portable, "#include") == NULL);
  CHECK(strstr(portable, "JX_SIGNED_OPS(i32, int32_t") != NULL && strstr(portable, "jx_threefry2x32") != NULL);
}

int main(void) {
  TEST_RUN(test_framing);
  TEST_RUN(test_hooks);
  TEST_RUN(test_prelude_split);
  return test_finish();
}
