/* cuda_group.h (render) -- the parts of the CUDA framing (render/cuda.c) shared with its
 * grouped warp rows (render/cuda_group.c): the plan's choice of a group and its rows,
 * the rendering of such a kernel and of its group epilogue, and the helpers of cuda.c
 * they use. Internal to src/render. */
#ifndef JAXC_RENDER_CUDA_GROUP_H
#define JAXC_RENDER_CUDA_GROUP_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/alu.h"
#include "render/cuda.h"
#include "render/emit.h"

static inline const char *ctype_of(jx_dtype d) { return emit_types[d].ctype; }

/* The classes of a grouped warp row's vector loads: inputs (bits) whose row base is the
 * same for every output of the group (`all`: a bias b1[:]), for the G outputs of each row
 * (`row`: x[m, :]), or for each output j of a row over the rows (`col`: w^T[j, :]). */
typedef struct GroupClasses {
  uint64_t all, row, col;
} GroupClasses;

/* cuda.c */
/* Whether every load of e that depends on ridx reads a 4-byte input at base + ridx (a
 * multiple of 4 elements, one base an input); their bits added to *mask, bases[arg]
 * set. `later`: also an index (b + ridx) + c that b + ridx + c simplifies to. */
bool cuda_row_loads_based_at(const AluExp *e, const Kernel *k, uint64_t *mask, const AluExp **bases, bool later);
bool cuda_row_loads_based(const AluExp *e, const Kernel *k, uint64_t *mask, const AluExp **bases);
/* e with node `from` replaced by `to`; NULL on out of memory. */
const AluExp *cuda_replace_node(const AluExp *e, const AluExp *from, const AluExp *to);
/* The stores of a reduced output `acc` at gidx (its epilogue, row output, extra
 * outputs), the kernel's outputs from out<obase> on (cuda_red_store: obase 0). */
bool cuda_red_store_at(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals, const char *indent,
                       const char *acc, int obase);
bool cuda_red_store(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals, const char *indent, const char *acc);

/* cuda_group.c */
/* e for output gidx = G jx_w + j (jx_w in [0, N / G)), simplified. */
const AluExp *cuda_grouped_exp(const AluExp *e, int64_t N, int G, int j);
/* JAXC_CUDA_ROW_GROUP: the most outputs a group takes (RENDER_CUDA_ROW_GROUP_MAX). */
int cuda_row_group_cap(void);
/* The outputs a warp row computes together (RenderCudaPlan.group), 1 if none. */
int cuda_warp_row_group(const Kernel *k, uint64_t vec);
/* The rows of them a warp computes (RenderCudaPlan.rows), 1 if none. */
int cuda_warp_row_rows(const Kernel *k, int G, uint64_t vec);
/* e (output G r + j of a group) with its vector loads as VARIABLEs xv<i> (all),
 * xv<i>r<r> (row), xv<i>_<j> (col). */
const AluExp *cuda_grouped_vector_loads(const AluExp *e, const Kernel *k, const GroupClasses *c, int r, int j);
/* A grouped warp row kernel's body (plan group > 1), its group epilogue included. */
bool cuda_render_warp_group(const RenderLang *lang, const Kernel *k, const RenderCudaPlan *plan, Buf *b, int *nlocals);

#endif
