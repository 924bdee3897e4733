// gemm_algos.cu -- the MLP step's three large float32 GEMMs (bench_gpu's mlp at batch
// 4096, TF32 as under JAX's default precision) timed for every algorithm cuBLASLt's
// heuristic offers and for cublasGemmEx's default, in the operand layouts jaxc's cuda
// backend passes (backend/cuda/blas.c: row-major products as column-major C^T): which
// algorithm a timed choice would take for dW1 = x^T @ dh, where jaxc's graph spends
// 25.5 + 7 us (cutlass_80 + split-K) and XLA's autotuned cuBLAS 27 us. Each row: the least
// time a launch of 20 samples of 5 back-to-back launches (events). Usage (tools/gpu_session.sh phase `algos`):
//   nvcc -O3 -arch=sm_90 -o gemm_algos bench/gpu/gemm_algos.cu -lcublasLt -lcublas && ./gemm_algos
#include <cstdio>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "best_ms.cuh"


// column-major C (m, n) = op(A) (m, k) @ op(B) (k, n), as blas.c calls it
static void one(const char *name, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k) {
  float *A, *B, *C;
  void *ws;
  size_t wsb = 32u << 20;
  cudaMalloc(&A, (size_t)m * k * 4), cudaMalloc(&B, (size_t)k * n * 4), cudaMalloc(&C, (size_t)m * n * 4);
  cudaMalloc(&ws, wsb);
  cudaMemset(A, 0, (size_t)m * k * 4), cudaMemset(B, 0, (size_t)k * n * 4);
  int lda = ta == CUBLAS_OP_N ? m : k, ldb = tb == CUBLAS_OP_N ? k : n;
  float alpha = 1, beta = 0;
  double flop = 2.0 * m * n * k;
  cublasHandle_t h;
  cublasCreate(&h);
  cublasSetWorkspace(h, ws, wsb);
  float t = best_ms([&] {
    cublasGemmEx(h, ta, tb, m, n, k, &alpha, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, &beta, C, CUDA_R_32F, m,
                 CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
  }, 5);
  printf("%s m=%d n=%d k=%d  cublasGemmEx default: %.2f us (%.0f TFLOP/s)\n", name, m, n, k, t * 1e3, flop / t / 1e9);
  cublasLtHandle_t lt;
  cublasLtCreate(&lt);
  cublasLtMatmulDesc_t desc;
  cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, ta == CUBLAS_OP_N ? m : k, ta == CUBLAS_OP_N ? k : m, lda);
  cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, tb == CUBLAS_OP_N ? k : n, tb == CUBLAS_OP_N ? n : k, ldb);
  cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, m, n, m);
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb);
  cublasLtMatmulHeuristicResult_t res[128];
  int nres = 0;
  cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 64, res, &nres);
  // each split-K candidate again with split-K off (the same tile, one pass over K)
  for (int i = 0, n0 = nres; i < n0 && nres < 128; i++) {
    int splitk = 1;
    size_t sz;
    cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &sz);
    if (splitk <= 1) continue;
    cublasLtMatmulHeuristicResult_t r = res[i];
    int one = 1;
    uint32_t none = CUBLASLT_REDUCTION_SCHEME_NONE;
    cublasLtMatmulAlgoConfigSetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &one, sizeof one);
    cublasLtMatmulAlgoConfigSetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &none, sizeof none);
    if (cublasLtMatmulAlgoCheck(lt, desc, la, lb, lc, lc, &r.algo, &r) == CUBLAS_STATUS_SUCCESS) res[nres++] = r;
  }
  for (int i = 0; i < nres; i++) {
    int id = -1, tile = -1, splitk = -1, stages = -1;
    size_t sz;
    cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &sz);
    cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &sz);
    cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &sz);
    cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &sz);
    float tl = best_ms([&] {
      cublasLtMatmul(lt, desc, &alpha, A, la, B, lb, &beta, C, lc, C, lc, &res[i].algo, ws, wsb, 0);
    }, 5);
    printf("  Lt heuristic #%d (algo %d, tile %d, split-k %d, stages %d, ws %zu): %.2f us\n", i, id, tile, splitk,
           stages, res[i].workspaceSize, tl * 1e3);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb), cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc), cublasLtDestroy(lt), cublasDestroy(h);
  cudaFree(A), cudaFree(B), cudaFree(C), cudaFree(ws);
}

int main() {
  // row-major out (M, N) = a (M, K) @ b (K, N) is column-major out^T = b^T-as-stored @ a
  one("x @ W1 (M 4096, K 784, N 512)", CUBLAS_OP_N, CUBLAS_OP_N, 512, 4096, 784);
  one("dW1 = x^T @ dh (M 784, K 4096, N 512)", CUBLAS_OP_N, CUBLAS_OP_T, 512, 784, 4096);
  // dW1 with its operands (and output) in the other layouts: XLA's dW1 ran as a 27.2 us
  // sm90 128x128 kernel, where every candidate of the layout above is split-K
  one("dW1, dh stored transposed (tn)", CUBLAS_OP_T, CUBLAS_OP_T, 512, 784, 4096);
  one("dW1, x and dh stored transposed (tn)", CUBLAS_OP_T, CUBLAS_OP_N, 512, 784, 4096);
  one("dW1, x stored transposed (nn)", CUBLAS_OP_N, CUBLAS_OP_N, 512, 784, 4096);
  one("dW1^T (out transposed, nt)", CUBLAS_OP_N, CUBLAS_OP_T, 784, 512, 4096);
  one("dW1^T, dh stored transposed (nn)", CUBLAS_OP_N, CUBLAS_OP_N, 784, 512, 4096);
  one("dW1^T, x stored transposed (tt)", CUBLAS_OP_T, CUBLAS_OP_T, 784, 512, 4096);
  one("dW1^T, x and dh stored transposed (tn)", CUBLAS_OP_T, CUBLAS_OP_N, 784, 512, 4096);
  one("logits = h @ W2 (M 4096, K 512, N 10)", CUBLAS_OP_N, CUBLAS_OP_N, 10, 4096, 512);
  one("dW2 = h^T @ g (M 512, K 4096, N 10)", CUBLAS_OP_N, CUBLAS_OP_T, 10, 512, 4096);
  return 0;
}
