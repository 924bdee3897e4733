/* mpi.h -- the engine between processes: Open MPI's libmpi, opened with dlopen at run
 * time (so jaxc builds and runs without it), for jx_distributed_initialize and the
 * collectives of a jx_pmap whose axis spans the processes of an mpirun job. */
#ifndef JAXC_BACKEND_MPI_H
#define JAXC_BACKEND_MPI_H

#include <stddef.h>

#include "jaxc.h"

/* Opens libmpi.so.40 (Open MPI; then libmpi.so) and initializes MPI (thread level
 * MPI_THREAD_SERIALIZED at least: collectives run on device threads, one at a time).
 * Idempotent. JX_ERR_DEVICE naming what is missing (the library, a symbol, or the thread
 * level) when MPI cannot run here. */
jx_status mpi_init(void);
/* True after a successful mpi_init (and before mpi_finalize). */
bool mpi_active(void);
/* This process's rank and the job's size (0 and 1 when MPI is not active). */
int mpi_rank(void);
int mpi_size(void);
/* MPI_Allgather of nbytes from every process into all (size * nbytes, rank order).
 * JX_ERR_DEVICE naming `fn` when MPI reports an error. */
jx_status mpi_allgather(const char *fn, const void *mine, size_t nbytes, void *all);
/* MPI_Finalize (once; MPI cannot start again in the process). */
jx_status mpi_finalize(void);

#endif
