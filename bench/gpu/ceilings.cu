// ceilings.cu -- hand-written CUDA ceilings for the GPU benchmark's memory-bound rows,
// built with nvcc on the GPU machine (tools/gpu_session.sh phase `ceil`): device copy,
// the 10-op chain in the forms jaxc's framing can take (grid-stride or one vector a
// thread, rounded float ops or contractable ones, IEEE division or the division by a
// constant with one correction step), softmax over rows in one kernel, and argmax as one
// pass over packed (value, index) keys. Each row: the least time of 20 launches (events).
// Usage: nvcc -O3 -arch=sm_90 -o ceilings bench/gpu/ceilings.cu && ./ceilings
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cuda_runtime.h>

#include "best_ms.cuh"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

static int sms;

__global__ void k_copy(const uint4 *__restrict__ x, uint4 *__restrict__ y, int64_t n4) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) y[i] = x[i];
}

// division by a constant c (r = RN(1/c)): q = RN(x r), one correction with the exact
// residual x - q c (Markstein), correctly rounded without underflow/overflow; zeros,
// tiny, huge and non-finite quotients take the IEEE division.
__device__ __forceinline__ float div_c(float x, float c, float r) {
  float q = __fmul_rn(x, r), a = fabsf(q);
  if (!(a >= 0x1p-100f && a <= 0x1p100f)) return __fdiv_rn(x, c);
  float e = __fmaf_rn(-q, c, x);
  return __fmaf_rn(e, r, q);
}

template <int MODE> __device__ __forceinline__ float chain(float x) {
  // MODE & 1: + - * rounded separately (jaxc's __fadd_rn); MODE & 2: div_c; MODE & 4: fast tanh/exp
  if (MODE & 1) {
    float a = (MODE & 4) ? tanhf(__fadd_rn(__fmul_rn(x, 1.5f), 0.25f)) : tanhf(__fadd_rn(__fmul_rn(x, 1.5f), 0.25f));
    float b = expf(-__fmul_rn(x, x));
    float c = sqrtf(__fadd_rn(fabsf(x), 1.0f));
    float d = (MODE & 2) ? div_c(x, 3.0f, 1.0f / 3.0f) : x / 3.0f;
    return __fsub_rn(__fadd_rn(__fmul_rn(a, b), c), d);
  } else {
    float a = tanhf(x * 1.5f + 0.25f);
    float b = expf(-(x * x));
    float c = sqrtf(fabsf(x) + 1.0f);
    float d = (MODE & 2) ? div_c(x, 3.0f, 1.0f / 3.0f) : x / 3.0f;
    return a * b + c - d;
  }
}

// V vectors of 4 a thread; grid-stride when the grid is smaller than the work
template <int MODE, int V> __global__ void __launch_bounds__(256) k_chain(const uint4 *__restrict__ x, uint4 *__restrict__ y, int64_t n4) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x * V;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x * V + threadIdx.x; i < n4; i += stride) {
    uint4 u[V];
#pragma unroll
    for (int v = 0; v < V; v++) u[v] = i + v * blockDim.x < n4 ? __ldg(x + i + v * blockDim.x) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int v = 0; v < V; v++) {
      float f[4];
      memcpy(f, &u[v], 16);
#pragma unroll
      for (int j = 0; j < 4; j++) f[j] = chain<MODE>(f[j]);
      memcpy(&u[v], f, 16);
      if (i + v * blockDim.x < n4) y[i + v * blockDim.x] = u[v];
    }
  }
}

// jaxc's present framing: grid-stride, 4 elements a thread, unroll 4 over the loop
template <int MODE> __global__ void __launch_bounds__(256) k_chain_gs(const uint4 *__restrict__ x, uint4 *__restrict__ y, int64_t n4) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
#pragma unroll 4
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
    uint4 u = __ldg(x + i);
    float f[4];
    memcpy(f, &u, 16);
#pragma unroll
    for (int j = 0; j < 4; j++) f[j] = chain<MODE>(f[j]);
    memcpy(&u, f, 16);
    y[i] = u;
  }
}

// cache hints: LD 0 __ldg (ld.global.nc), 1 __ldcs (evict-first), 2 __ldlu (last use);
// ST 0 a plain store, 1 __stcs (evict-first), 2 __stwt (write-through)
template <int LD> __device__ __forceinline__ uint4 ld_h(const uint4 *p) {
  return LD == 1 ? __ldcs(p) : LD == 2 ? __ldlu(p) : __ldg(p);
}
template <int ST> __device__ __forceinline__ void st_h(uint4 *p, uint4 v) {
  if (ST == 1) __stcs(p, v);
  else if (ST == 2) __stwt(p, v);
  else *p = v;
}
// jaxc's framing (V vectors a thread, loads first, a grid covering the work) with hints;
// MODE < 0: a copy
template <int MODE, int V, int LD, int ST> __global__ void __launch_bounds__(256) k_chain_h(const uint4 *__restrict__ x, uint4 *__restrict__ y, int64_t n4) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x * V + threadIdx.x;
  uint4 u[V];
#pragma unroll
  for (int v = 0; v < V; v++) if (i + v * blockDim.x < n4) u[v] = ld_h<LD>(x + i + v * blockDim.x);
#pragma unroll
  for (int v = 0; v < V; v++) {
    if (i + v * blockDim.x >= n4) continue;
    if (MODE >= 0) {
      float f[4];
      memcpy(f, &u[v], 16);
#pragma unroll
      for (int j = 0; j < 4; j++) f[j] = chain<(MODE < 0 ? 0 : MODE)>(f[j]);
      memcpy(&u[v], f, 16);
    }
    st_h<ST>(y + i + v * blockDim.x, u[v]);
  }
}

// ---------------------------------------------------------------- softmax over rows
template <int T, int R> __device__ __forceinline__ float block_max(float v, float *sh) {
  for (int o = 16; o; o /= 2) v = fmaxf(v, __shfl_xor_sync(~0u, v, o));
  if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
  __syncthreads();
  v = sh[0];
  for (int w = 1; w < T / 32; w++) v = fmaxf(v, sh[w]);
  __syncthreads();
  return v;
}
template <int T, int R> __device__ __forceinline__ float block_sum(float v, float *sh) {
  for (int o = 16; o; o /= 2) v += __shfl_xor_sync(~0u, v, o);
  if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
  __syncthreads();
  v = sh[0];
  for (int w = 1; w < T / 32; w++) v += sh[w];
  __syncthreads();
  return v;
}

// one block of T per row; REG: the row stays in registers, else it is read again (L1/L2)
template <int T, int R, bool REG> __global__ void __launch_bounds__(T) k_softmax(const float *__restrict__ x, float *__restrict__ y) {
  __shared__ float sh[32];
  const float *row = x + (int64_t)blockIdx.x * R;
  float *out = y + (int64_t)blockIdx.x * R;
  constexpr int PER = R / (4 * T);
  float4 v[PER];
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < PER; k++) {
    v[k] = __ldg((const float4 *)row + threadIdx.x + k * T);
    m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
  }
  m = block_max<T, R>(m, sh);
  float s = 0;
#pragma unroll
  for (int k = 0; k < PER; k++) {
    if (!REG) v[k] = __ldg((const float4 *)row + threadIdx.x + k * T);
    s += expf(v[k].x - m) + expf(v[k].y - m) + expf(v[k].z - m) + expf(v[k].w - m);
  }
  s = block_sum<T, R>(s, sh);
#pragma unroll
  for (int k = 0; k < PER; k++) {
    if (!REG) v[k] = __ldg((const float4 *)row + threadIdx.x + k * T);
    float4 o = make_float4(expf(v[k].x - m) / s, expf(v[k].y - m) / s, expf(v[k].z - m) / s, expf(v[k].w - m) / s);
    ((float4 *)out)[threadIdx.x + k * T] = o;
  }
}

// ---------------------------------------------------------------- argmax, packed keys
__device__ __forceinline__ unsigned long long key_of(float f, uint32_t i) {
  f = f == 0.0f ? 0.0f : f;
  uint32_t u = __float_as_uint(f);
  u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  if (f != f) u = 0xffffffffu;
  return (unsigned long long)u << 32 | (uint32_t)~i;
}
__device__ __forceinline__ unsigned long long kmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

__global__ void __launch_bounds__(256) k_argmax1(const float *__restrict__ x, int64_t n, unsigned long long *parts) {
  __shared__ unsigned long long sh[8];
  unsigned long long k = 0;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x * 4;
#pragma unroll 4
  for (int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * 4; i < n; i += stride) {
    float4 v = __ldg((const float4 *)(x + i));
    k = kmax(k, key_of(v.x, (uint32_t)i));
    k = kmax(k, key_of(v.y, (uint32_t)i + 1));
    k = kmax(k, key_of(v.z, (uint32_t)i + 2));
    k = kmax(k, key_of(v.w, (uint32_t)i + 3));
  }
  for (int o = 16; o; o /= 2) k = kmax(k, __shfl_xor_sync(~0u, k, o));
  if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = k;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < 8; w++) k = kmax(k, sh[w]);
    parts[blockIdx.x] = k;
  }
}
__global__ void k_argmax2(const unsigned long long *parts, int n, int *out) {
  unsigned long long k = 0;
  for (int i = threadIdx.x; i < n; i += 32) k = kmax(k, parts[i]);
  for (int o = 16; o; o /= 2) k = kmax(k, __shfl_xor_sync(~0u, k, o));
  if (threadIdx.x == 0) *out = (int)~(uint32_t)k;
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  sms = p.multiProcessorCount;
  printf("%s, %d SMs, L2 %d MB\n", p.name, sms, p.l2CacheSize >> 20);
  const int64_t n = (int64_t)1 << 28, n4 = n / 4;
  float *x, *y;
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&y, n * 4));
  {
    float *h = (float *)malloc(n * 4);
    uint32_t s = 3;
    for (int64_t i = 0; i < n; i++) s = s * 1664525u + 1013904223u, h[i] = (float)((s >> 9) & 0xffff) / 65536.0f - 0.5f;
    CK(cudaMemcpy(x, h, n * 4, cudaMemcpyHostToDevice));
    free(h);
  }
  const double bytes = 8.0 * n;
  auto tbs = [&](float ms) { return bytes / (ms * 1e-3) / 1e12; };
  float c = best_ms([&] { k_copy<<<(unsigned)((n4 + 255) / 256), 256>>>((const uint4 *)x, (uint4 *)y, n4); });
  float c2 = best_ms([&] { cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice); });
  printf("copy_kernel %.3f TB/s\ncopy_memcpy %.3f TB/s\n", tbs(c), tbs(c2));
  auto full = [&](int v) { return (unsigned)((n4 + 256 * v - 1) / (256 * v)); };
#define ROW(name, launch) do { float ms_ = best_ms([&] { launch; }); printf("%-28s %.3f TB/s  %5.1f%% of kernel copy\n", name, tbs(ms_), 100 * c / ms_); } while (0)
  ROW("chain_gs16_rn_div", (k_chain_gs<1><<<sms * 16, 256>>>((const uint4 *)x, (uint4 *)y, n4)));
  ROW("chain_gs8_rn_div", (k_chain_gs<1><<<sms * 8, 256>>>((const uint4 *)x, (uint4 *)y, n4)));
  ROW("chain_full1_rn_div", (k_chain<1, 1><<<full(1), 256>>>((const uint4 *)x, (uint4 *)y, n4)));
  ROW("chain_full2_rn_div", (k_chain<1, 2><<<full(2), 256>>>((const uint4 *)x, (uint4 *)y, n4)));
  ROW("chain_full4_rn_div", (k_chain<1, 4><<<full(4), 256>>>((const uint4 *)x, (uint4 *)y, n4)));
  ROW("chain_full1_rn_divc", (k_chain<3, 1><<<full(1), 256>>>((const uint4 *)x, (uint4 *)y, n4)));
  ROW("chain_full2_rn_divc", (k_chain<3, 2><<<full(2), 256>>>((const uint4 *)x, (uint4 *)y, n4)));
  ROW("chain_gs16_rn_divc", (k_chain_gs<3><<<sms * 16, 256>>>((const uint4 *)x, (uint4 *)y, n4)));
  ROW("chain_full1_fma_div", (k_chain<0, 1><<<full(1), 256>>>((const uint4 *)x, (uint4 *)y, n4)));
  ROW("chain_full1_fma_divc", (k_chain<2, 1><<<full(1), 256>>>((const uint4 *)x, (uint4 *)y, n4)));
  ROW("chain_full2_fma_divc", (k_chain<2, 2><<<full(2), 256>>>((const uint4 *)x, (uint4 *)y, n4)));
  // cache hints on the copy and on jaxc's chain form (rounded ops, division by a constant)
#define HROW(M, V, LD, ST) ROW("h_" #M "_v" #V "_ld" #LD "_st" #ST, (k_chain_h<M, V, LD, ST><<<full(V), 256>>>((const uint4 *)x, (uint4 *)y, n4)))
  HROW(-1, 1, 0, 0); HROW(-1, 2, 0, 0); HROW(-1, 2, 1, 1); HROW(-1, 2, 0, 1); HROW(-1, 2, 2, 1); HROW(-1, 4, 0, 0); HROW(-1, 4, 1, 1);
  HROW(3, 2, 0, 0); HROW(3, 2, 1, 0); HROW(3, 2, 0, 1); HROW(3, 2, 1, 1); HROW(3, 2, 2, 1); HROW(3, 2, 0, 2);
  HROW(3, 1, 1, 1); HROW(3, 4, 0, 0); HROW(3, 4, 1, 1);
  HROW(3, 2, 0, 0); HROW(3, 2, 1, 1);
  // softmax 4096 x 4096
  {
    const int rows = 4096;
    float s1 = best_ms([&] { k_softmax<256, 4096, true><<<rows, 256>>>(x, y); });
    float s2 = best_ms([&] { k_softmax<256, 4096, false><<<rows, 256>>>(x, y); });
    float s3 = best_ms([&] { k_softmax<512, 4096, true><<<rows, 512>>>(x, y); });
    float s4 = best_ms([&] { k_softmax<1024, 4096, true><<<rows, 1024>>>(x, y); });
    float s5 = best_ms([&] { k_softmax<128, 4096, true><<<rows, 128>>>(x, y); });
    printf("softmax_regs_256 %.4f ms\nsoftmax_reread_256 %.4f ms\nsoftmax_regs_512 %.4f ms\nsoftmax_regs_1024 %.4f ms\nsoftmax_regs_128 %.4f ms\n",
           s1, s2, s3, s4, s5);
  }
  // argmax 2^28
  {
    unsigned long long *parts;
    int *out, got;
    CK(cudaMalloc(&parts, 65536 * 8));
    CK(cudaMalloc(&out, 4));
    for (int bps : {2, 4, 8, 16}) {
      int nb = sms * bps;
      float ms = best_ms([&] {
        k_argmax1<<<nb, 256>>>(x, n, parts);
        k_argmax2<<<1, 32>>>(parts, nb, out);
      });
      CK(cudaMemcpy(&got, out, 4, cudaMemcpyDeviceToHost));
      printf("argmax_packed_%d/SM %.4f ms (index %d)\n", bps, ms, got);
    }
  }
  CK(cudaGetLastError());
  return 0;
}
