/* nccl.c -- the engine between GPUs: NVIDIA's NCCL (libnccl.so.2, opened with dlopen on
 * first use, so jaxc builds and runs without it), for the collectives of a shard_map or
 * pmap whose operands live on cuda devices. One communicator per process: over the
 * processes of an MPI job (bootstrapped through MPI: process 0's ncclUniqueId reaches the
 * others in an MPI_Allgather, then ncclCommInitRank), or of the process alone. Every call
 * is queued on the device's one stream (cuda.h), in order with the kernels around it. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cuda.h"
#include "backend/mpi.h"
#include "core/error.h"

typedef struct { char internal[128]; } NcclUniqueId;
typedef struct NcclCommSt *NcclCommT;
typedef int NcclResult;

#define NCCL_MAX_RANKS 64

static struct {
  void *lib;
  NcclResult (*GetVersion)(int *);
  NcclResult (*GetUniqueId)(NcclUniqueId *);
  NcclResult (*CommInitRank)(NcclCommT *, int, NcclUniqueId, int);
  NcclResult (*CommDestroy)(NcclCommT);
  NcclResult (*AllReduce)(const void *, void *, size_t, int, int, NcclCommT, CUstream);
  NcclResult (*AllGather)(const void *, void *, size_t, int, NcclCommT, CUstream);
  NcclResult (*ReduceScatter)(const void *, void *, size_t, int, int, NcclCommT, CUstream);
  const char *(*GetErrorString)(NcclResult);
  int version;
  NcclCommT comm;  /* the process's communicator (created once) */
  int nranks, rank;
  jx_status status; /* of loading / creating, repeated to later callers */
  char message[512];
} N;
static pthread_mutex_t nccl_lock = PTHREAD_MUTEX_INITIALIZER;

static jx_status fail(const char *fmt, const char *a, const char *b) {
  snprintf(N.message, sizeof N.message, fmt, a, b);
  N.status = JX_ERR_DEVICE;
  return N.status;
}

static jx_status load(void) {
  const char *names[] = {"libnccl.so.2", "libnccl.so", NULL};
  char why[256];
  N.lib = cuda_dlopen_any(names, why, sizeof why);
  if (!N.lib)
    return fail("NCCL's libnccl.so.2 was not found (%s; pip's nvidia-nccl-cu12 or PyTorch ship it "
                "under site-packages/nvidia/nccl/lib: add that to LD_LIBRARY_PATH)%s", why, "");
  struct {
    const char *name;
    void **slot;
  } syms[] = {{"ncclGetVersion", (void **)&N.GetVersion},       {"ncclGetUniqueId", (void **)&N.GetUniqueId},
              {"ncclCommInitRank", (void **)&N.CommInitRank},   {"ncclCommDestroy", (void **)&N.CommDestroy},
              {"ncclAllReduce", (void **)&N.AllReduce},         {"ncclAllGather", (void **)&N.AllGather},
              {"ncclReduceScatter", (void **)&N.ReduceScatter}, {"ncclGetErrorString", (void **)&N.GetErrorString}};
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
    if (!(*syms[i].slot = dlsym(N.lib, syms[i].name)))
      return fail("libnccl.so.2 has no %s%s", syms[i].name, "");
  N.GetVersion(&N.version);
  return JX_OK;
}

static jx_status check(NcclResult r, const char *what) {
  if (r == 0) return JX_OK;
  error_set(JX_ERR_DEVICE, "%s: NCCL error %d: %s", what, r, N.GetErrorString ? N.GetErrorString(r) : "?");
  return JX_ERR_DEVICE;
}

/* The process's communicator: over the MPI job when one is active, else this process. */
static jx_status world(void) {
  if (N.comm || N.status != JX_OK) return N.status;
  jx_status s = cuda_init();
  if (s != JX_OK) return fail("%s%s", jx_last_error(), "");
  if (load() != JX_OK) return N.status;
  N.nranks = mpi_active() ? mpi_size() : 1;
  N.rank = mpi_active() ? mpi_rank() : 0;
  NcclUniqueId id, all[NCCL_MAX_RANKS];
  memset(&id, 0, sizeof id);
  if (N.rank == 0 && check(N.GetUniqueId(&id), "ncclGetUniqueId") != JX_OK) return fail("%s%s", jx_last_error(), "");
  if (N.nranks > NCCL_MAX_RANKS) return fail("NCCL over more than 64 processes%s%s", "", "");
  if (N.nranks > 1) { /* the bootstrap: everyone gets process 0's id */
    if (mpi_allgather("NCCL bootstrap", &id, sizeof id, all) != JX_OK) return fail("%s%s", jx_last_error(), "");
    id = all[0];
  }
  cuda_make_current();
  if (check(N.CommInitRank(&N.comm, N.nranks, id, N.rank), "ncclCommInitRank") != JX_OK) {
    N.comm = NULL;
    return fail("%s%s", jx_last_error(), "");
  }
  return JX_OK;
}

jx_status cuda_nccl_ready(const char *fn, int nranks, int rank) {
  pthread_mutex_lock(&nccl_lock);
  jx_status s = world();
  if (s != JX_OK) error_set(s, "%s on cuda: %s", fn, N.message);
  else if (nranks != N.nranks || rank != N.rank) {
    s = JX_ERR_DEVICE;
    error_set(s, "%s on cuda: the axis has %d devices (this one %d), but NCCL's communicator spans "
              "%d processes (this one %d): one cuda device per process", fn, nranks, rank, N.nranks, N.rank);
  }
  pthread_mutex_unlock(&nccl_lock);
  return s;
}

int cuda_nccl_version(void) { return N.version; }

/* NCCL's ncclDataType_t for a dtype (-1: none; complex types go as their parts). */
static int nccl_type(jx_dtype dt, size_t *count) {
  switch (dt) {
  case JX_INT8: return 0;
  case JX_UINT8: return 1;
  case JX_INT32: return 2;
  case JX_UINT32: return 3;
  case JX_INT64: return 4;
  case JX_UINT64: return 5;
  case JX_FLOAT16: return 6;
  case JX_FLOAT32: return 7;
  case JX_FLOAT64: return 8;
  case JX_BFLOAT16: return 9;
  case JX_COMPLEX64: *count *= 2; return 7;
  case JX_COMPLEX128: *count *= 2; return 8;
  default: return -1;
  }
}

bool cuda_nccl_supports(jx_dtype dt, int op) {
  size_t n = 1;
  int t = nccl_type(dt, &n);
  return t >= 0 && !(n == 2 && op != CUDA_NCCL_SUM); /* no max of complex numbers */
}

jx_status cuda_nccl_all_reduce(const char *fn, const void *send, void *recv, size_t count, jx_dtype dt, int op) {
  int t = nccl_type(dt, &count);
  cuda_make_current();
  return check(N.AllReduce(send, recv, count, t, op, N.comm, cuda_device()->stream), fn);
}

jx_status cuda_nccl_all_gather(const char *fn, const void *send, void *recv, size_t count, jx_dtype dt) {
  int t = nccl_type(dt, &count);
  cuda_make_current();
  return check(N.AllGather(send, recv, count, t, N.comm, cuda_device()->stream), fn);
}

jx_status cuda_nccl_reduce_scatter(const char *fn, const void *send, void *recv, size_t count, jx_dtype dt) {
  int t = nccl_type(dt, &count);
  cuda_make_current();
  return check(N.ReduceScatter(send, recv, count, t, CUDA_NCCL_SUM, N.comm, cuda_device()->stream), fn);
}
