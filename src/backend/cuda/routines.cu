// routines.cu -- the cuda backend's routines that are not generated from the kernel IR,
// compiled by nvcc at build time into libjaxc_cuda_routines.so, which the backend
// dlopens (routines.c); the library works without it, with these routines then an
// error on cuda. Plain C entry points; every call is queued on the caller's stream and
// takes scratch memory from the caller's (caching) allocator.
//
// sort:        stable, JAX's total order (-0.0 == 0.0 tie; NaNs of any sign after
//              +inf, tied): keys are mapped to unsigned integers that order the same
//              way and sorted with CUB's radix sort (stable) as (key, position) pairs;
//              several rows at once sort on (row, key) composite keys; then every
//              operand is gathered by the permutation.
// scatter_add: out = x, then atomics add each update at its clamped index (the order
//              of additions into one element is unspecified, as in XLA on GPUs).
#include <cub/cub.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

typedef void *(*AllocFn)(size_t);
typedef void (*FreeFn)(void *);

enum { KEY_UNSIGNED = 0, KEY_SIGNED = 1, KEY_FLOAT = 2 };

#define GRID_STRIDE(i, n) \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

static unsigned grid_for(int64_t n) {
  int64_t b = (n + 255) / 256;
  return (unsigned)(b < 1 ? 1 : b > 65535 * 8 ? 65535 * 8 : b);
}

// Raw bits of element e (size `bytes`) of p, zero-extended.
__device__ __forceinline__ uint64_t load_bits(const void *p, int64_t e, int bytes) {
  switch (bytes) {
  case 1: return ((const uint8_t *)p)[e];
  case 2: return ((const uint16_t *)p)[e];
  case 4: return ((const uint32_t *)p)[e];
  default: return ((const uint64_t *)p)[e];
  }
}

// An unsigned key whose order is JAX's sort order for an integer with these bits.
__device__ __forceinline__ uint64_t order_key(uint64_t v, int kind, int bytes) {
  return kind == KEY_SIGNED ? v ^ (1ull << (bytes * 8 - 1)) : v;
}

// The same for a float with mant_bits of mantissa: NaNs (either sign) above +inf, tied;
// -0.0 tied with 0.0; negatives below positives in reverse bit order.
__device__ __forceinline__ uint64_t float_key(uint64_t v, int bytes, int mant_bits) {
  int bits = bytes * 8;
  uint64_t sign = 1ull << (bits - 1), mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  uint64_t mag = v & (sign - 1), inf = (mask >> (mant_bits + 1)) << mant_bits; // exponent all ones
  if (mag > inf) return mask;  // NaN, either sign: after everything, tied
  if (mag == 0) v = 0;         // -0.0 ties with 0.0
  return (v & sign) ? (~v & mask) : (v | sign);
}

// keys[s * n + k] = key of operand element (o, k, i) with s = o * inner + i, shifted up
// by the row number's bits when several rows sort together; pos[s * n + k] = k.
template <typename K>
__global__ void make_keys(const void *x, int kind, int bytes, int mant_bits, int64_t outer, int64_t n,
                          int64_t inner, int key_bits, K *keys, int32_t *pos) {
  int64_t total = outer * n * inner;
  GRID_STRIDE(j, total) {
    int64_t s = j / n, k = j % n, o = s / inner, i = s % inner;
    uint64_t v = load_bits(x, (o * n + k) * inner + i, bytes);
    uint64_t key = kind == KEY_FLOAT ? float_key(v, bytes, mant_bits) : order_key(v, kind, bytes);
    keys[j] = (K)(key | (key_bits < 64 ? (uint64_t)s << key_bits : 0));
    pos[j] = (int32_t)(key_bits < 64 ? k : j); // j: the row is sorted on in a second pass
  }
}

// out[(o, k, i)] = x[(o, pos[s * n + k], i)] for elements of `bytes` bytes.
__global__ void gather_rows(const void *x, void *out, const int32_t *pos, int bytes, int64_t n, int64_t inner,
                            int64_t total) {
  GRID_STRIDE(j, total) {
    int64_t s = j / n, k = j % n, o = s / inner, i = s % inner;
    int64_t dst = (o * n + k) * inner + i, src = (o * n + pos[j] % n) * inner + i;
    switch (bytes) {
    case 1: ((uint8_t *)out)[dst] = ((const uint8_t *)x)[src]; break;
    case 2: ((uint16_t *)out)[dst] = ((const uint16_t *)x)[src]; break;
    case 4: ((uint32_t *)out)[dst] = ((const uint32_t *)x)[src]; break;
    default: ((uint64_t *)out)[dst] = ((const uint64_t *)x)[src]; break;
    }
  }
}

template <typename K>
static cudaError_t sort_pairs(cudaStream_t st, AllocFn alloc, FreeFn release, K *keys, int32_t *pos,
                              K *keys2, int32_t *pos2, int64_t total, int end_bit, int32_t **sorted) {
  size_t temp = 0;
  cub::DoubleBuffer<K> kb(keys, keys2);
  cub::DoubleBuffer<int32_t> vb(pos, pos2);
  cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, temp, kb, vb, (int)total, 0, end_bit, st);
  if (e != cudaSuccess) return e;
  void *t = alloc(temp ? temp : 1);
  if (!t) return cudaErrorMemoryAllocation;
  e = cub::DeviceRadixSort::SortPairs(t, temp, kb, vb, (int)total, 0, end_bit, st);
  release(t);
  *sorted = vb.Current();
  return e;
}

// rows[j] = the row of the element at sorted position j (its global index / n).
__global__ void jx_rows_of_positions(const int32_t *pos, uint32_t *rows, int64_t n, int64_t total) {
  GRID_STRIDE(j, total) rows[j] = (uint32_t)(pos[j] / n);
}

// keys[j] = the order key of x[j] (one row: no positions needed).
template <typename K>
__global__ void make_keys_only(const void *x, int kind, int bytes, int mant_bits, int64_t total, K *keys) {
  GRID_STRIDE(j, total) {
    uint64_t v = load_bits(x, j, bytes);
    keys[j] = (K)(kind == KEY_FLOAT ? float_key(v, bytes, mant_bits) : order_key(v, kind, bytes));
  }
}

// One operand, one row: sort (key, value) pairs with the operand's own bits as the
// values, written straight to out -- no positions and no gather.
template <typename K, typename V>
static cudaError_t sort_values(cudaStream_t st, AllocFn alloc, FreeFn release, const void *x, void *out, int kind,
                               int bytes, int mant_bits, int64_t total) {
  K *keys = (K *)alloc(2 * total * sizeof(K));
  if (!keys) return cudaErrorMemoryAllocation;
  make_keys_only<K><<<grid_for(total), 256, 0, st>>>(x, kind, bytes, mant_bits, total, keys);
  size_t temp = 0;
  cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, temp, keys, keys + total, (const V *)x, (V *)out,
                                                  (int)total, 0, (int)sizeof(K) * 8, st);
  void *t = e == cudaSuccess ? alloc(temp ? temp : 1) : nullptr;
  if (e == cudaSuccess && !t) e = cudaErrorMemoryAllocation;
  if (e == cudaSuccess)
    e = cub::DeviceRadixSort::SortPairs(t, temp, keys, keys + total, (const V *)x, (V *)out, (int)total, 0,
                                        (int)sizeof(K) * 8, st);
  if (t) release(t);
  release(keys);
  return e;
}

static int bits_for(int64_t v) { // bits needed for values 0 .. v - 1
  int b = 0;
  while (b < 63 && (1ll << b) < v) b++;
  return b;
}

// Sorts nin operands (outer, n, inner) by operand 0 along n. kind/bytes/mant_bits
// describe operand 0; elem_bytes[x] every operand's element size.
extern "C" int jaxc_cuda_sort(void *stream, AllocFn alloc, FreeFn release, int nin, int kind, int key_bytes,
                              int mant_bits, const int *elem_bytes, const void *const *in, void *const *out,
                              int64_t outer, int64_t n, int64_t inner) {
  cudaStream_t st = (cudaStream_t)stream;
  int64_t rows = outer * inner, total = rows * n;
  if (total == 0) return 0;
  if (total > INT32_MAX) return (int)cudaErrorInvalidValue;
  if (nin == 1 && rows == 1) {
    switch (key_bytes) {
    case 1: return (int)sort_values<uint8_t, uint8_t>(st, alloc, release, in[0], out[0], kind, 1, mant_bits, total);
    case 2: return (int)sort_values<uint16_t, uint16_t>(st, alloc, release, in[0], out[0], kind, 2, mant_bits, total);
    case 4: return (int)sort_values<uint32_t, uint32_t>(st, alloc, release, in[0], out[0], kind, 4, mant_bits, total);
    default: return (int)sort_values<uint64_t, uint64_t>(st, alloc, release, in[0], out[0], kind, 8, mant_bits, total);
    }
  }
  int key_bits = key_bytes * 8, row_bits = rows > 1 ? bits_for(rows) : 0;
  bool wide = key_bits + row_bits > 32;
  // 64-bit keys of several rows: sort all by key (positions global), then stably by row
  bool two_pass = key_bits + row_bits > 64;
  size_t kb = wide ? 8 : 4;
  char *keys = (char *)alloc(2 * total * kb), *pos = (char *)alloc(2 * total * 4);
  cudaError_t e = cudaSuccess;
  int32_t *sorted = nullptr;
  if (!keys || !pos) e = cudaErrorMemoryAllocation;
  else if (wide) {
    make_keys<uint64_t><<<grid_for(total), 256, 0, st>>>(in[0], kind, key_bytes, mant_bits, outer, n, inner,
                                                         row_bits && !two_pass ? key_bits : 64, (uint64_t *)keys,
                                                         (int32_t *)pos);
    e = sort_pairs<uint64_t>(st, alloc, release, (uint64_t *)keys, (int32_t *)pos, (uint64_t *)keys + total,
                             (int32_t *)pos + total, total, two_pass ? 64 : key_bits + row_bits, &sorted);
    if (e == cudaSuccess && two_pass) {
      int32_t *other = sorted == (int32_t *)pos ? (int32_t *)pos + total : (int32_t *)pos;
      jx_rows_of_positions<<<grid_for(total), 256, 0, st>>>(sorted, (uint32_t *)keys, n, total);
      e = sort_pairs<uint32_t>(st, alloc, release, (uint32_t *)keys, sorted, (uint32_t *)keys + total, other, total,
                               row_bits, &sorted);
    }
  } else {
    make_keys<uint32_t><<<grid_for(total), 256, 0, st>>>(in[0], kind, key_bytes, mant_bits, outer, n, inner,
                                                         row_bits ? key_bits : 64, (uint32_t *)keys, (int32_t *)pos);
    e = sort_pairs<uint32_t>(st, alloc, release, (uint32_t *)keys, (int32_t *)pos, (uint32_t *)keys + total,
                             (int32_t *)pos + total, total, key_bits + row_bits, &sorted);
  }
  for (int x = 0; e == cudaSuccess && x < nin; x++) {
    gather_rows<<<grid_for(total), 256, 0, st>>>(in[x], out[x], sorted, elem_bytes[x], n, inner, total);
    e = cudaGetLastError();
  }
  release(keys), release(pos);
  return (int)e;
}

// ------------------------------------------------------------------ scatter-add

enum { ADD_F32, ADD_F64, ADD_F16, ADD_BF16, ADD_I32, ADD_I64, ADD_I16, ADD_I8, ADD_BOOL };

// 8/16-bit atomic add/or through a compare-and-swap on the aligned 32-bit word.
template <int BYTES, bool OR>
__device__ void atomic_small(void *addr, uint32_t v) {
  uintptr_t a = (uintptr_t)addr;
  uint32_t *word = (uint32_t *)(a & ~(uintptr_t)3);
  int shift = (int)(a & 3) * 8;
  uint32_t mask = (BYTES == 1 ? 0xffu : 0xffffu) << shift;
  uint32_t old = *word, assumed;
  do {
    assumed = old;
    uint32_t cur = (assumed & mask) >> shift;
    uint32_t nv = OR ? (cur | v) : (cur + v);
    old = atomicCAS(word, assumed, (assumed & ~mask) | ((nv << shift) & mask));
  } while (old != assumed);
}

__global__ void scatter_add_kernel(void *out, const void *idx, int idx_bytes, int idx_signed, const void *upd,
                                   int op, int64_t outer, int64_t n, int64_t m, int64_t inner) {
  int64_t total = outer * m * inner;
  GRID_STRIDE(j, total) {
    int64_t o = j / (m * inner), k = (j / inner) % m, i = j % inner;
    uint64_t raw = load_bits(idx, k, idx_bytes);
    int64_t t;
    if (idx_signed) t = idx_bytes == 8 ? (int64_t)raw : idx_bytes == 4 ? (int64_t)(int32_t)raw
                      : idx_bytes == 2 ? (int64_t)(int16_t)raw : (int64_t)(int8_t)raw;
    else t = raw > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)raw;
    t = t < 0 ? 0 : t >= n ? n - 1 : t;
    int64_t dst = (o * n + t) * inner + i;
    switch (op) {
    case ADD_F32: atomicAdd((float *)out + dst, ((const float *)upd)[j]); break;
    case ADD_F64: atomicAdd((double *)out + dst, ((const double *)upd)[j]); break;
    case ADD_F16: atomicAdd((__half *)out + dst, ((const __half *)upd)[j]); break;
    case ADD_BF16: atomicAdd((__nv_bfloat16 *)out + dst, ((const __nv_bfloat16 *)upd)[j]); break;
    case ADD_I32: atomicAdd((unsigned *)out + dst, ((const unsigned *)upd)[j]); break;
    case ADD_I64:
      atomicAdd((unsigned long long *)out + dst, ((const unsigned long long *)upd)[j]);
      break;
    case ADD_I16: atomic_small<2, false>((uint16_t *)out + dst, ((const uint16_t *)upd)[j]); break;
    case ADD_I8: atomic_small<1, false>((uint8_t *)out + dst, ((const uint8_t *)upd)[j]); break;
    case ADD_BOOL: atomic_small<1, true>((uint8_t *)out + dst, ((const uint8_t *)upd)[j]); break;
    }
  }
}

// out (outer, n, inner) = x, plus upd (outer, m, inner) at [o, clamp(idx[k]), i].
extern "C" int jaxc_cuda_scatter_add(void *stream, int op, int elem_bytes, const void *x, const void *idx,
                                     int idx_bytes, int idx_signed, const void *upd, void *out, int64_t outer,
                                     int64_t n, int64_t m, int64_t inner) {
  cudaStream_t st = (cudaStream_t)stream;
  size_t nbytes = (size_t)(outer * n * inner) * elem_bytes;
  if (nbytes == 0) return 0;
  cudaError_t e = cudaMemcpyAsync(out, x, nbytes, cudaMemcpyDeviceToDevice, st);
  int64_t total = outer * m * inner;
  if (e == cudaSuccess && total > 0) {
    scatter_add_kernel<<<grid_for(total), 256, 0, st>>>(out, idx, idx_bytes, idx_signed, upd, op, outer, n, m, inner);
    e = cudaGetLastError();
  }
  return (int)e;
}

extern "C" const char *jaxc_cuda_error_string(int e) { return cudaGetErrorString((cudaError_t)e); }
