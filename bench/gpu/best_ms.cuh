// best_ms.cuh -- the timing rule of bench/gpu's hand-written CUDA tools (ceilings.cu,
// gemm_algos.cu): one warm-up launch, then the least time of 20 launches, each between
// two events on the default stream, in milliseconds.
#ifndef JAXC_BENCH_GPU_BEST_MS_CUH
#define JAXC_BENCH_GPU_BEST_MS_CUH
#include <cuda_runtime.h>

template <class F> static float best_ms(F launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a), cudaEventCreate(&b);
  launch();
  cudaDeviceSynchronize();
  float best = 1e30f;
  for (int i = 0; i < 20; i++) {
    cudaEventRecord(a);
    launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    if (ms < best) best = ms;
  }
  cudaEventDestroy(a), cudaEventDestroy(b);
  return best;
}

#endif
