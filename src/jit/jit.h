/* jit.h -- compiling Jaxprs into Programs of fused kernels (JAX's jit, rebuilt the
 * jax-js/tinygrad way): elementwise chains, views, gathers and concatenations fuse into
 * the kernel that consumes them; a reduction fuses with its elementwise producers;
 * values are materialized only when they are outputs, feed several consumers, or are
 * reduced. Buffers are freed at their last use. */
#ifndef JAXC_JIT_JIT_H
#define JAXC_JIT_JIT_H

#include "backend/backend.h"
#include "core/shape.h"
#include "jaxpr/jaxpr.h"
#include "trace/lower.h"

/* Program, Step, ProgramOutput: trace/lower.h (eager evaluation builds them too). */

/* Kernel and routine steps of p (tests assert fusion by them). */
int jit_program_nsteps(const Program *p);
int jit_program_nkernels(const Program *p);
int jit_program_nroutines(const Program *p);
/* The program jf (a jx_jit function) compiled for inputs of in's signature by an earlier
 * call; NULL if there is none (not called yet, or evaluated as a jaxpr). */
const Program *jit_program_for(jx_fn *jf, jx_array *const *in);
/* kernel_check on every kernel step and routine_check on every routine step of p, after
 * the lowering pass `pass`: JX_ERR_INTERNAL naming the pass and the step otherwise. */
jx_status jit_program_check(const Program *p, const char *pass);

/* True if primitive p has a lowering rule; else *why (if why) is the documented reason
 * it has none (NULL: a missing rule). */
bool jit_has_lower_rule(Prim p, const char **why);

/* Lowers a (checked) jaxpr into a program for device be (NULL: any; its
 * cheap_recompute shapes what is materialized). NULL with the error set on failure. */
Program *jit_lower(const Jaxpr *j, const Backend *be);
void jit_program_free(Program *p);
/* Runs p on device be (which p was prepared for) on concrete inputs held by be (any
 * views; made contiguous first) with j's constants (copied to be if elsewhere). */
jx_status jit_run(const Program *p, const Jaxpr *j, const Backend *be, jx_array *const *in,
                  jx_array **out);
/* replay.c: repeated calls of one program replayed as a recorded device graph
 * (Backend.graph_*), state kept per compiled program (jit.c's cache entry). NULL where
 * be records no graphs. */
typedef struct JitReplay JitReplay;
JitReplay *jit_replay_new(const Backend *be);
void jit_replay_free(JitReplay *r);
/* jit_run with r: its steps may be replayed. */
jx_status jit_run_replay(const Program *p, const Jaxpr *j, const Backend *be, JitReplay *r,
                         jx_array *const *in, jx_array **out);
/* For run.c: allocates every step's outputs into bufs (the temporaries past their last
 * use freed, NULL in bufs) and replays or records the steps; false (nothing done) where
 * this call runs step by step. *status: the outcome when true. */
bool jit_replay_steps(JitReplay *r, const Program *p, Buffer **bufs, jx_status *status);
typedef struct JitReplayStats {
  int64_t records, replays; /* graphs recorded, calls that replayed one */
  bool off;                 /* the program stopped recording */
} JitReplayStats;
JitReplayStats jit_replay_stats(const JitReplay *r);
/* A critical path of a recording (Backend.graph_step's `critical`): n steps in issue
 * order, step k costing cost[k] and following the earlier steps deps[at[k] .. at[k +
 * 1]); critical[k] is set for the steps of one chain of dependent steps of the greatest
 * total cost (where several tie, the one ending first in issue order, through the latest
 * of equal dependencies; none where every cost is 0). The critical path method (Kelley
 * and Walker, 1959): the longest path ending at each step, then back from the end. */
void jit_critical_path(int n, const double *cost, const int *at, const int *deps, bool *critical);
/* The replay state of jf's program for in's signature (NULL: none yet) and the jaxpr
 * it was lowered from -- tests. */
const Jaxpr *jit_jaxpr_for(jx_fn *jf, jx_array *const *in);
const JitReplay *jit_replay_for(jx_fn *jf, jx_array *const *in);

/* Sub-jaxprs (loop bodies and predicates, cond branches) compiled once per device and
 * x64 mode and cached on the jaxpr (jit.c): the program for j on be, or NULL where j
 * does not lower (then it runs in pieces or its equations are bound one by one). With
 * `loop`, *loop is set to the cache slot where loop.c keeps a loop built with j as its
 * body; with `lowered`, to the jaxpr the program was lowered from (j, or j with its
 * calls inlined), whose constants the program reads. */
typedef struct JitLoop JitLoop;
const Program *jit_sub_program(const Jaxpr *j, const Backend *be, JitLoop ***loop, const Jaxpr **lowered);

/* j on concrete inputs: its program from the sub-jaxpr cache, its compiled pieces, or
 * (where neither) its equations bound one by one; *compiled (if given): not the last. */
jx_status jit_run_sub(const Jaxpr *j, jx_array *const *in, jx_array **out, bool *compiled);

/* segment.c: a jaxpr that does not lower as a whole, as pieces -- each maximal run of at
 * least two equations with lowering rules a closed sub-jaxpr run by jit_run_sub, every
 * other equation bound alone, in order. new: NULL where nothing would be compiled (no
 * such run, or the whole jaxpr is one) or out of memory (the error set). eval: j's
 * outputs from its inputs, as jaxpr_eval. */
typedef struct JitSegments JitSegments;
JitSegments *jit_segments_new(const Jaxpr *j);
void jit_segments_free(JitSegments *s);
jx_status jit_segments_eval(const JitSegments *s, const Jaxpr *j, jx_array *const *in, jx_array **out);
/* Pieces run compiled by jit_segments_eval so far, in all threads (tests read it). */
int64_t jit_segment_count(void);

/* loop.c: a while or scan equation on concrete inputs run as one compiled loop on the
 * inputs' device (Backend.prepare_loop); *declined (nothing done, JX_OK) where it
 * cannot be, and control.c runs the trips from the host. */
jx_status jit_loop_run(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout, jx_array **out,
                       bool *declined);
void jit_loop_free(JitLoop *l);
/* Loops run compiled since the process started (tests). */
int64_t jit_loop_count(void);

/* Text of the program's kernels (JAXC_DEBUG=3). malloc'd. */
char *jit_program_print(const Program *p);

#endif
