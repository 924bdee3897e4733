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
/* Text of the program's kernels (JAXC_DEBUG=3). malloc'd. */
char *jit_program_print(const Program *p);

#endif
