/* driver.c -- opens the CUDA driver (libcuda.so.1) with dlopen, finds device 0, retains
 * its primary context and creates the backend's one stream. Nothing here needs a CUDA
 * header or library at build time. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda.h"
#include "core/config.h"
#include "core/error.h"

/* Driver enum values used here (cuda.h). */
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN 97
#define CU_STREAM_NON_BLOCKING 1
#define CUDA_ERROR_OUT_OF_MEMORY 2

static pthread_once_t once = PTHREAD_ONCE_INIT;
static CudaDevice dev;
static bool ready;
static jx_status init_status;
static char init_message[512];

void *cuda_dlopen_any(const char *const *names, char *why, size_t nwhy) {
  const char *env_dirs[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH")};
  char path[1024];
  why[0] = 0;
  for (int i = 0; names[i]; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    if (!why[0]) snprintf(why, nwhy, "%s", dlerror());
    for (int d = 0; d < 3; d++) {
      const char *dir = d < 2 ? env_dirs[d] : "/usr/local/cuda";
      if (!dir || !*dir) continue;
      snprintf(path, sizeof path, "%s/lib64/%s", dir, names[i]);
      if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL))) return h;
    }
  }
  return NULL;
}

/* The driver's entry points by their ABI names (the _v2 ones are what cuda.h's macros
 * select for 64-bit device pointers). */
static const struct {
  const char *name;
  size_t offset;
} symbols[] = {
#define S(field, sym) {sym, offsetof(CudaDriver, field)}
    S(cuInit, "cuInit"),
    S(cuDriverGetVersion, "cuDriverGetVersion"),
    S(cuDeviceGetCount, "cuDeviceGetCount"),
    S(cuDeviceGet, "cuDeviceGet"),
    S(cuDeviceGetName, "cuDeviceGetName"),
    S(cuDeviceGetAttribute, "cuDeviceGetAttribute"),
    S(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    S(cuCtxSetCurrent, "cuCtxSetCurrent"),
    S(cuStreamCreate, "cuStreamCreate"),
    S(cuStreamCreateWithPriority, "cuStreamCreateWithPriority"),
    S(cuCtxGetStreamPriorityRange, "cuCtxGetStreamPriorityRange"),
    S(cuStreamSynchronize, "cuStreamSynchronize"),
    S(cuMemAlloc, "cuMemAlloc_v2"),
    S(cuMemFree, "cuMemFree_v2"),
    S(cuMemGetInfo, "cuMemGetInfo_v2"),
    S(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
    S(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
    S(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
    S(cuMemsetD8Async, "cuMemsetD8Async"),
    S(cuMemsetD32Async, "cuMemsetD32Async"),
    S(cuModuleLoadData, "cuModuleLoadData"),
    S(cuModuleGetFunction, "cuModuleGetFunction"),
    S(cuFuncSetAttribute, "cuFuncSetAttribute"),
    S(cuLaunchKernel, "cuLaunchKernel"),
    S(cuGetErrorName, "cuGetErrorName"),
    S(cuGetErrorString, "cuGetErrorString"),
    S(cuEventCreate, "cuEventCreate"),
    S(cuEventRecord, "cuEventRecord"),
    S(cuEventDestroy, "cuEventDestroy_v2"),
    S(cuStreamWaitEvent, "cuStreamWaitEvent"),
    S(cuEventSynchronize, "cuEventSynchronize"),
    S(cuEventElapsedTime, "cuEventElapsedTime_v2"),
    S(cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor"),
    S(cuStreamBeginCapture, "cuStreamBeginCapture_v2"),
    S(cuStreamEndCapture, "cuStreamEndCapture"),
    S(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags"),
    S(cuGraphLaunch, "cuGraphLaunch"),
    S(cuGraphExecDestroy, "cuGraphExecDestroy"),
    S(cuGraphDestroy, "cuGraphDestroy"),
#undef S
};

static void fail(const char *fmt, const char *a, const char *b) {
  init_status = JX_ERR_DEVICE;
  snprintf(init_message, sizeof init_message, fmt, a, b);
}

static const char *result_name(CUresult r) {
  const char *s = NULL;
  if (!dev.cu.cuGetErrorName || dev.cu.cuGetErrorName(r, &s) != 0 || !s) return "CUDA error";
  return s;
}

static void init_once(void) {
  char why[400];
  const char *names[] = {"libcuda.so.1", "libcuda.so", NULL};
  void *h = cuda_dlopen_any(names, why, sizeof why);
  if (!h) return fail("device \"cuda\" is not available: the CUDA driver library "
                      "libcuda.so.1 was not found (%s)%s", why, "");
  for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
    void *f = dlsym(h, symbols[i].name);
    if (!f && strcmp(symbols[i].name, "cuEventElapsedTime_v2") == 0) f = dlsym(h, "cuEventElapsedTime");
    if (!f) return fail("device \"cuda\" is not available: libcuda.so.1 has no %s%s", symbols[i].name, "");
    memcpy((char *)&dev.cu + symbols[i].offset, &f, sizeof f);
  }
  CudaDriver *cu = &dev.cu;
  CUresult r = cu->cuInit(0);
  int count = 0;
  if (r == 0) r = cu->cuDeviceGetCount(&count);
  if (r != 0) return fail("device \"cuda\" is not available: cuInit failed (%s)%s", result_name(r), "");
  if (count < 1) return fail("device \"cuda\" is not available: the CUDA driver found no GPU%s%s", "", "");
  cu->cuDriverGetVersion(&dev.driver_version);
  if ((r = cu->cuDeviceGet(&dev.ordinal, 0)) != 0 ||
      (r = cu->cuDeviceGetName(dev.name, (int)sizeof dev.name, dev.ordinal)) != 0 ||
      (r = cu->cuDeviceGetAttribute(&dev.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev.ordinal)) != 0 ||
      (r = cu->cuDeviceGetAttribute(&dev.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev.ordinal)) != 0 ||
      (r = cu->cuDeviceGetAttribute(&dev.sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev.ordinal)) != 0 ||
      (r = cu->cuDeviceGetAttribute(&dev.max_smem_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                    dev.ordinal)) != 0 ||
      (r = cu->cuDevicePrimaryCtxRetain(&dev.ctx, dev.ordinal)) != 0 ||
      (r = cu->cuCtxSetCurrent(dev.ctx)) != 0 ||
      (r = cu->cuStreamCreate(&dev.stream, CU_STREAM_NON_BLOCKING)) != 0)
    return fail("device \"cuda\" is not available: setting up GPU 0 failed (%s)%s", result_name(r), "");
  ready = true;
  if (config_debug_level() >= 1)
    fprintf(stderr, "jaxc cuda: %s, compute capability %d.%d, %d SMs, driver %d\n", dev.name,
            dev.cc_major, dev.cc_minor, dev.sm_count, dev.driver_version);
}

jx_status cuda_init(void) {
  pthread_once(&once, init_once);
  if (ready) return JX_OK;
  error_set(init_status, "%s", init_message);
  return init_status;
}

const CudaDevice *cuda_device(void) { return ready ? &dev : NULL; }

void cuda_make_current(void) {
  static _Thread_local bool current;
  if (!current && ready) {
    dev.cu.cuCtxSetCurrent(dev.ctx);
    current = true;
  }
}

jx_status cuda_check(CUresult r, const char *what) {
  if (r == 0) return JX_OK;
  const char *desc = NULL;
  if (dev.cu.cuGetErrorString) dev.cu.cuGetErrorString(r, &desc);
  jx_status s = r == CUDA_ERROR_OUT_OF_MEMORY ? JX_ERR_OOM : JX_ERR_DEVICE;
  error_set(s, "cuda: %s: %s (%d): %s", what, result_name(r), r, desc ? desc : "");
  return s;
}
