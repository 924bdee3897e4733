/* mpi.c -- Open MPI through dlopen: the handful of MPI calls jaxc's collectives between
 * processes need. Open MPI's handles are pointers to its predefined objects
 * (MPI_COMM_WORLD is &ompi_mpi_comm_world, MPI_BYTE &ompi_mpi_byte), looked up by name;
 * the library is opened RTLD_GLOBAL because Open MPI's own plugins resolve against it. */
#include "backend/mpi.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

#define MPI_SUCCESS_ 0
#define MPI_THREAD_SERIALIZED_ 2
#define MPI_THREAD_MULTIPLE_ 3

typedef void *Handle;
static struct {
  void *lib;
  int (*Initialized)(int *flag);
  int (*Finalized)(int *flag);
  int (*Init_thread)(int *argc, char ***argv, int required, int *provided);
  int (*Comm_rank)(Handle comm, int *rank);
  int (*Comm_size)(Handle comm, int *size);
  int (*Allgather)(const void *sendbuf, int sendcount, Handle sendtype, void *recvbuf, int recvcount,
                   Handle recvtype, Handle comm);
  int (*Finalize)(void);
  Handle comm_world, byte;
  bool active;
  int rank, size;
} M;
static pthread_mutex_t mpi_lock = PTHREAD_MUTEX_INITIALIZER;

static jx_status load(void) {
  const char *names[] = {"libmpi.so.40", "libmpi.so"};
  for (size_t i = 0; i < 2 && !M.lib; i++) M.lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
  if (!M.lib) {
    error_set(JX_ERR_DEVICE, "jx_distributed_initialize: Open MPI's libmpi.so.40 was not found "
              "(install Debian's openmpi-bin; tools/install_deps.sh does)");
    return JX_ERR_DEVICE;
  }
  struct {
    const char *name;
    void **slot;
  } syms[] = {{"MPI_Initialized", (void **)&M.Initialized},   {"MPI_Finalized", (void **)&M.Finalized},
              {"MPI_Init_thread", (void **)&M.Init_thread},   {"MPI_Comm_rank", (void **)&M.Comm_rank},
              {"MPI_Comm_size", (void **)&M.Comm_size},       {"MPI_Allgather", (void **)&M.Allgather},
              {"MPI_Finalize", (void **)&M.Finalize},         {"ompi_mpi_comm_world", &M.comm_world},
              {"ompi_mpi_byte", &M.byte}};
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    *syms[i].slot = dlsym(M.lib, syms[i].name);
    if (!*syms[i].slot) {
      error_set(JX_ERR_DEVICE, "jx_distributed_initialize: %s lacks %s (is it Open MPI?)",
                "libmpi", syms[i].name);
      dlclose(M.lib);
      M.lib = NULL;
      return JX_ERR_DEVICE;
    }
  }
  return JX_OK;
}

jx_status mpi_init(void) {
  pthread_mutex_lock(&mpi_lock);
  jx_status s = M.active ? JX_OK : M.lib ? JX_OK : load();
  if (s == JX_OK && !M.active) {
    int done = 0, provided = 0;
    M.Finalized(&done);
    if (done) {
      s = JX_ERR_DEVICE;
      error_set(s, "jx_distributed_initialize: MPI was already finalized in this process");
    } else {
      M.Initialized(&done);
      if (!done && M.Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE_, &provided) != MPI_SUCCESS_) {
        s = JX_ERR_DEVICE;
        error_set(s, "jx_distributed_initialize: MPI_Init_thread failed");
      } else if (!done && provided < MPI_THREAD_SERIALIZED_) {
        s = JX_ERR_DEVICE;
        error_set(s, "jx_distributed_initialize: MPI gives thread level %d; jaxc needs "
                  "MPI_THREAD_SERIALIZED or more (collectives run on device threads)", provided);
      }
    }
    if (s == JX_OK && (M.Comm_rank(M.comm_world, &M.rank) != MPI_SUCCESS_ ||
                       M.Comm_size(M.comm_world, &M.size) != MPI_SUCCESS_)) {
      s = JX_ERR_DEVICE;
      error_set(s, "jx_distributed_initialize: MPI_Comm_rank/size failed");
    }
    M.active = s == JX_OK;
  }
  pthread_mutex_unlock(&mpi_lock);
  return s;
}

bool mpi_active(void) {
  pthread_mutex_lock(&mpi_lock);
  bool a = M.active;
  pthread_mutex_unlock(&mpi_lock);
  return a;
}

int mpi_rank(void) { return mpi_active() ? M.rank : 0; }
int mpi_size(void) { return mpi_active() ? M.size : 1; }

jx_status mpi_allgather(const char *fn, const void *mine, size_t nbytes, void *all) {
  if (!mpi_active()) {
    error_set(JX_ERR_DEVICE, "%s: MPI is not initialized (jx_distributed_initialize)", fn);
    return JX_ERR_DEVICE;
  }
  if (nbytes > (size_t)INT_MAX) { /* MPI counts are ints */
    error_set(JX_ERR_UNSUPPORTED, "%s: a collective of %zu bytes per process (at most %d)", fn, nbytes,
              INT_MAX);
    return JX_ERR_UNSUPPORTED;
  }
  static const char none[1];
  if (M.Allgather(nbytes ? mine : none, (int)nbytes, M.byte, all, (int)nbytes, M.byte, M.comm_world) !=
      MPI_SUCCESS_) {
    error_set(JX_ERR_DEVICE, "%s: MPI_Allgather of %zu bytes failed", fn, nbytes);
    return JX_ERR_DEVICE;
  }
  return JX_OK;
}

jx_status mpi_finalize(void) {
  pthread_mutex_lock(&mpi_lock);
  jx_status s = JX_OK;
  if (M.active && M.Finalize() != MPI_SUCCESS_) {
    s = JX_ERR_DEVICE;
    error_set(s, "jx_distributed_shutdown: MPI_Finalize failed");
  }
  M.active = false;
  pthread_mutex_unlock(&mpi_lock);
  return s;
}

/* ------------------------------------------------------------ public API */

jx_status jx_distributed_initialize(void) { return mpi_init(); }
int jx_process_index(void) { return mpi_rank(); }
int jx_process_count(void) { return mpi_size(); }
jx_status jx_distributed_shutdown(void) { return mpi_finalize(); }
