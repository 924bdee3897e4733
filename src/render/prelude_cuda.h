/* prelude_cuda.h -- the CUDA C part of the kernel prelude (NVRTC, no system headers),
 * placed before the portable part (prelude.h) in every translation unit the cuda
 * backend compiles: the fixed-width integer types and limits, how helpers are declared
 * (JX_FN), memcpy/INFINITY, the loop pragmas of the C framing (empty here), the kernel
 * parameter structs, and exp through CUDA's expf/exp. Transcendentals are CUDA's,
 * without -use_fast_math (CUDA C Programming Guide, "Mathematical Functions"): exp, tanh
 * and sqrt of float32 in float (expf, tanhf: 2 ulp; sqrtf correctly rounded), the others
 * (sin, log, erf, pow, ...) evaluated in double and rounded once, which makes them
 * correctly rounded in practice, as the cpu's libm (src/render/cuda.c's overrides). */
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#define INT8_MIN (-128)
#define INT8_MAX 127
#define INT16_MIN (-32768)
#define INT16_MAX 32767
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT64_MAX 9223372036854775807LL
#define UINT8_MAX 255
#define UINT16_MAX 65535
#define UINT32_MAX 4294967295u
#define UINT64_MAX 18446744073709551615ull
#define INT8_C(c) c
#define INT16_C(c) c
#define INT32_C(c) c
#define INT64_C(c) c##LL
#define UINT8_C(c) c
#define UINT16_C(c) c
#define UINT32_C(c) c##u
#define UINT64_C(c) c##ULL
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fc00000)
#define HUGE_VALF __int_as_float(0x7f800000)
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
/* NVRTC declares no memcpy; fixed-size copies of this compile to register moves. */
static __device__ __forceinline__ void jx_memcpy(void *d, const void *s, unsigned long long n) {
  for (unsigned long long i = 0; i < n; i++) ((char *)d)[i] = ((const char *)s)[i];
}
#define memcpy jx_memcpy

#define JX_FN static __device__ __forceinline__
#define JX_IVDEP
#define JX_VECTOR_LOOP
#define JX_PREFETCH(p) ((void)0)

/* The tickets of split reductions (render/cuda.c; RENDER_CUDA_SPLIT_ROWS of them): zero
 * when the module loads, and the block that takes a row's last ticket sets it back to
 * zero, so each launch finds them zero without a memset before it. No two launches of a
 * module's kernels that take them run at once: kernels run one after another on the
 * backend's one stream, and a recorded graph keeps a module's such kernels on one branch
 * (render_cuda_uses_tickets, backend/cuda/graph.c cuda_graph_step). */
__device__ unsigned jx_split_tickets[1024];

/* Kernel parameters: input and output pointers by value (in[i], out[o] as in C). */
struct JxIn {
  void *p[64];
  __device__ __forceinline__ void *operator[](int i) const { return p[i]; }
};
struct JxOut {
  void *p[4];
  __device__ __forceinline__ void *operator[](int i) const { return p[i]; }
};

JX_FN float jx_exp_f32(float x) { return expf(x); }
JX_FN double jx_exp_f64(double x) { return exp(x); }

/* Float + - * rounded on their own (__fadd_rn and friends are never contracted into a
 * fused multiply-add; render/cuda.c's overrides use them). */
JX_FN float jx_add_rn(float a, float b) { return __fadd_rn(a, b); }
JX_FN float jx_sub_rn(float a, float b) { return __fsub_rn(a, b); }
JX_FN float jx_mul_rn(float a, float b) { return __fmul_rn(a, b); }
JX_FN double jx_add_rn(double a, double b) { return __dadd_rn(a, b); }
JX_FN double jx_sub_rn(double a, double b) { return __dsub_rn(a, b); }
JX_FN double jx_mul_rn(double a, double b) { return __dmul_rn(a, b); }

/* x / c for a literal c, r = 1.0f / c (folded by the compiler, correctly rounded): q =
 * RN(x r) is faithful and one step with the exact residual x - q c (a fused
 * multiply-add) gives the correctly rounded quotient (Markstein's theorem; Muller et al.,
 * Handbook of Floating-Point Arithmetic, 2nd ed., section 4.7) as long as the residual
 * is exact: x and the quotient far from underflow and overflow. Other x (zeros,
 * subnormals, non-finite) take the IEEE division. Fewer instructions than __fdiv_rn,
 * which bandwidth-bound chains such as x/3 notice (bench/gpu/ceilings.cu). */
JX_FN float jx_div_c_f32(float x, float c, float r) {
  const float q = __fmul_rn(x, r), a = fabsf(q), ax = fabsf(x);
  if (!(a >= 0x1p-100f && a <= 0x1p100f && ax >= 0x1p-64f && ax <= 0x1p64f)) return __fdiv_rn(x, c);
  return __fmaf_rn(__fmaf_rn(-q, c, x), r, q);
}

/* Complex + - * part by part through the same never-contracted operations (prelude.h's
 * hooks), and the complex types' warp shuffles and volatile loads part by part: the
 * framing's warp reductions call __shfl_xor_sync and a split reduction reads its
 * partials through jx_vload for every accumulator type (render/cuda.c). */
#define JX_ADD_RN(a, b) jx_add_rn(a, b)
#define JX_SUB_RN(a, b) jx_sub_rn(a, b)
#define JX_MUL_RN(a, b) jx_mul_rn(a, b)
template <typename T> JX_FN T jx_vload(const volatile T *p) { return *p; }
/* A load through L2 only (ld.global.cg: L1 is not coherent with other blocks' stores,
 * which a __threadfence made visible in L2), of any accumulator type by its bytes. Not
 * volatile, so an unrolled loop issues several before the first is used: the last block
 * of a column reduction reads its column's 64 partials in flight together, where
 * volatile loads went one L2 round trip at a time (the MLP's bias gradients). */
template <int S> struct JxCgBits;
template <> struct JxCgBits<1> { typedef unsigned char U; };
template <> struct JxCgBits<2> { typedef unsigned short U; };
template <> struct JxCgBits<4> { typedef unsigned U; };
template <> struct JxCgBits<8> { typedef unsigned long long U; };
template <> struct JxCgBits<16> { typedef uint4 U; };
template <typename T> JX_FN T jx_cgload(const T *p) {
  typedef typename JxCgBits<sizeof(T)>::U U;
  const U u = __ldcg((const U *)p);
  T v;
  memcpy(&v, &u, sizeof v);
  return v;
}
#define JX_COMPLEX_TARGET(S, T)                                                             \
  JX_FN jx_##S __shfl_xor_sync(unsigned m, jx_##S v, int o) {                               \
    return jx_mk_##S(__shfl_xor_sync(m, v.re, o), __shfl_xor_sync(m, v.im, o));             \
  }                                                                                         \
  JX_FN jx_##S jx_vload(const volatile jx_##S *p) { return jx_mk_##S(p->re, p->im); }
