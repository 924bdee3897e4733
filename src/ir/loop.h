/* loop.h -- a whole loop as the backend runs it (jit/loop.c builds it from a while or
 * scan equation whose predicate and body lowered to programs of kernels and routines):
 * each trip runs steps over one table of buffer slots; a while reads its bool predicate
 * from a slot after the predicate's steps; after the body, carry slots are exchanged
 * with the slots the body wrote, so a trip allocates and copies nothing. A scan points
 * its x slots into the whole xs arrays and copies each y into the stacked ys. */
#ifndef JAXC_IR_LOOP_H
#define JAXC_IR_LOOP_H

#include <stddef.h>

#include "ir/alu.h"

typedef struct LoopStep {
  const Kernel *kernel;   /* a kernel, or NULL and ... */
  const Routine *routine; /* ... a routine */
  int nargs, nout;
  const int *args; /* slots read (kernel->nargs or routine->nin) */
  const int *outs; /* slots written (1 + kernel->nextra or routine->nout) */
} LoopStep;

typedef struct LoopPlan {
  bool scan;    /* a scan (length trips), else a while */
  bool reverse; /* scan: trips t = length - 1 .. 0 */
  int nslots;
  int ncond;       /* while: steps[0 .. ncond) compute the predicate ... */
  int pred;        /* ... into this slot (a bool scalar); the trip stops when it is false */
  int nsteps;
  LoopStep *steps; /* steps[ncond .. nsteps): the body */
  int ncopy;       /* after the body, before the exchanges: copy_bytes[i] bytes of slot */
  int *copy_src, *copy_dst; /* copy_src[i] to slot copy_dst[i] (a carry's new value that is */
  size_t *copy_bytes;       /* another carry, a constant or an x: into a temporary of its own) */
  int nswap;
  int (*swap)[2];  /* after the body: slots swap[i][0] and swap[i][1] exchanged */
  int nx;          /* scan: before the body, slot x_slot[i] = slot x_base[i] + t * x_bytes[i] */
  int *x_slot, *x_base;
  size_t *x_bytes;
  int ny;          /* scan: after the body, y_bytes[i] bytes of slot y_src[i] copied to */
  int *y_src, *y_base; /* slot y_base[i] + t * y_bytes[i] */
  size_t *y_bytes;
} LoopPlan;

#endif
