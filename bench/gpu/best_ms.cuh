// best_ms.cuh -- the timing rule of bench/gpu's hand-written CUDA tools (ceilings.cu,
// gemm_algos.cu): one warm-up launch, then the least time of 20 samples, each `reps`
// launches back to back between two events on the default stream (reps > 1: the host's
// time to queue a library call is hidden behind the launch before it), in milliseconds
// a launch.
#ifndef JAXC_BENCH_GPU_BEST_MS_CUH
#define JAXC_BENCH_GPU_BEST_MS_CUH
#include <cuda_runtime.h>

template <class F> static float best_ms(F launch, int reps = 1) {
  cudaEvent_t a, b;
  cudaEventCreate(&a), cudaEventCreate(&b);
  launch();
  cudaDeviceSynchronize();
  float best = 1e30f;
  for (int i = 0; i < 20; i++) {
    cudaEventRecord(a);
    for (int r = 0; r < reps; r++) launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    ms /= reps;
    if (ms < best) best = ms;
  }
  cudaEventDestroy(a), cudaEventDestroy(b);
  return best;
}

#endif
