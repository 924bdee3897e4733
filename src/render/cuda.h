/* cuda.h (render) -- the CUDA C target (render_cuda, src/render/cuda.c) and the launch
 * plan of a kernel, which the framing renders for and the cuda backend launches with. */
#ifndef JAXC_RENDER_CUDA_H
#define JAXC_RENDER_CUDA_H

#include <stdint.h>

#include "render/render.h"

extern const RenderLang render_cuda;

typedef enum RenderCudaKind {
  CUDA_ELEMENTWISE, /* grid-stride over outputs (vec of them a thread) */
  CUDA_THREAD_ROW,  /* a thread per reduced output */
  CUDA_WARP_ROW,    /* a warp per reduced output (blockDim / 32 a block) */
  CUDA_BLOCK_ROW,   /* a block per reduced output */
  CUDA_COLUMNS,     /* column reductions: 32 neighbouring outputs a block (a warp's
                       lanes), 8 row lanes, the rows split over gridDim.y blocks that
                       leave partials in scratch (size * gridDim.y), the last one
                       (ticket blockIdx.x) combining them */
} RenderCudaKind;

typedef struct RenderCudaPlan {
  RenderCudaKind kind;
  int threads;         /* block size (256) */
  int vec;             /* elementwise: outputs a thread computes at once (1 or 4) */
  int nvec;            /* elementwise vec 4: 16-byte vectors a thread a step, blockDim
                          apart (their loads in flight together); the grid covers the
                          work in one step. Halved while that grid would have fewer
                          than RENDER_CUDA_EW_FILL_BLOCKS blocks */
  uint64_t vec_inputs; /* elementwise vec 4: inputs read as 16-byte vectors (bit i);
                          block rows: inputs read along the row as 16-byte vectors
                          (the row loop then takes 4 elements a thread a step) */
  int group;           /* warp rows with 16-byte loads: outputs a warp computes
                          together (1, or G: outputs G w .. G w + G-1 that read a shared
                          row, cuda_group.c's cuda_warp_row_group); the grid covers
                          size / group warps. Columns: outputs a lane computes together
                          (column_group); a block for every 32 groups */
  int rows;            /* grouped warp rows: rows of `group` outputs a warp computes
                          together (1, 2 or 4: outputs (group rows) w + o; cuda_group.c's
                          cuda_warp_row_rows); the grid covers size / (group rows) warps */
  int64_t tile_b;      /* elementwise: 0, or B where loads read the output's [A, B] view
                          transposed (render/cuda.c's transpose_tile): a block a 32 x 32
                          tile, those loads coalesced along A into shared memory, the
                          outputs written along B; the grid a block a tile */
  bool split;          /* block rows over gridDim.y blocks; needs scratch of
                          size * gridDim.y accumulators (8 bytes each at most);
                          tickets in the module (prelude_cuda.h) */
} RenderCudaPlan;

/* Most rows of a split reduction (prelude_cuda.h's jx_split_tickets); CUDA_COLUMNS
 * takes one ticket per 32 outputs. */
#define RENDER_CUDA_SPLIT_ROWS 1024
/* CUDA_COLUMNS: outputs a block (one a lane) and row lanes (warps) a block */
#define RENDER_CUDA_COL_OUTS 32
#define RENDER_CUDA_COL_LANES 8

/* Elementwise kernels are vectorized (4 outputs a thread) only with at most this many
 * loads read once an output (neither 16-byte vector loads nor read once a vector of 4),
 * and at most RENDER_CUDA_EW_MAX_GROUP_LOADS loads besides the vector inputs at gidx
 * (render_cuda_plan). */
#define RENDER_CUDA_EW_MAX_SCALAR_LOADS 3
#define RENDER_CUDA_EW_FILL_BLOCKS 1056
#define RENDER_CUDA_EW_MAX_GROUP_LOADS 64

/* Most loads an elementwise kernel reads through transposed tiles (RenderCudaPlan.tile_b) */
#define RENDER_CUDA_TILE_LOADS 4

/* Most outputs a grouped warp row computes (RenderCudaPlan.group) */
#define RENDER_CUDA_ROW_GROUP_MAX 16
/* Most rows of them a warp computes together (RenderCudaPlan.rows) */
#define RENDER_CUDA_ROW_GROUP_ROWS_MAX 4

/* The plan of kernel k (a pure function of k). */
RenderCudaPlan render_cuda_plan(const Kernel *k);
/* Whether k's kernel takes tickets from its module's jx_split_tickets (prelude_cuda.h):
 * split rows and CUDA_COLUMNS. No two such kernels of one module may run at once (the
 * cuda backend keeps them on one branch of a recorded graph: cuda_graph_step). */
bool render_cuda_uses_tickets(const Kernel *k);

/* h's expression and extra outputs (and a reduction's epilogue) with int64 index
 * arithmetic in int32 wherever every value fits (the nodes' intervals), widened at the
 * loads (cuda_index.c); off with JAXC_CUDA_NARROW=0. False with the error set (out of
 * memory). The framing applies it to scalar elementwise kernels and a thread's rows. */
bool render_cuda_narrow_indices(Kernel *h);

#endif
