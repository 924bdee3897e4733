/* run.c -- executing a lowered Program: inputs made contiguous, kernels dispatched in
 * order on the inputs' backend, temporaries freed at their last use, outputs wrapped
 * as arrays (views where the program's output is a view of a buffer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/array.h"
#include "core/config.h"
#include "core/error.h"
#include "jit/jit.h"
#include "trace/trace.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* dtype[n] of a buffer as a flat array, appended to buf at *n (JSON string). */
static void append_buf(char *buf, size_t cap, size_t *n, const char *sep, jx_dtype d, const Buffer *b) {
  if (*n >= cap) return;
  size_t item = jx_dtype_itemsize(d);
  int w = snprintf(buf + *n, cap - *n, "%s\"%s[%lld]\"", sep, jx_dtype_name(d),
                   (long long)(b && item ? b->nbytes / item : 0));
  if (w > 0) *n += (size_t)w;
}

/* A trace event's args: what ran, on which shapes -- kernel: the output's elements, the
 * reduction length, and every operand and output as dtype[elements]; routine: its sizes
 * and operands. */
static void trace_args(const Step *st, Buffer *const *in, Buffer *const *outs, char *buf, size_t cap) {
  size_t n = 0;
  int w;
  if (st->is_routine) {
    const Routine *r = &st->routine;
    w = snprintf(buf, cap, "\"outer\":%lld,\"n\":%lld,\"inner\":%lld,\"m\":%lld,\"inputs\":[",
                 (long long)r->outer, (long long)r->n, (long long)r->inner, (long long)r->m);
    if (w > 0) n = (size_t)w;
    for (int a = 0; a < r->nin && n < cap; a++) { /* operands of several dtypes: bytes */
      w = snprintf(buf + n, cap - n, "%s\"%zu bytes\"", a ? "," : "", in[a] ? in[a]->nbytes : 0);
      if (w > 0) n += (size_t)w;
    }
  } else {
    const Kernel *k = &st->kernel;
    w = snprintf(buf, cap, "\"elements\":%lld,\"reduce\":%lld,\"inputs\":[", (long long)k->size,
                 (long long)(k->has_reduction ? k->reduction.size : 0));
    if (w > 0) n = (size_t)w;
    for (int a = 0; a < k->nargs; a++) append_buf(buf, cap, &n, a ? "," : "", k->arg_dtypes[a], in[a]);
    if (n < cap) n += (size_t)snprintf(buf + n, cap - n, "],\"outputs\":[");
    for (int o = 0; o < kernel_nouts(k); o++) append_buf(buf, cap, &n, o ? "," : "", kernel_out_dtype(k, o), outs[o]);
  }
  if (n < cap) snprintf(buf + n, cap - n, "]");
  if (n >= cap - 1) snprintf(buf, cap, "\"args\":\"too long\""); /* never cut JSON */
}

jx_status jit_run(const Program *p, const Jaxpr *j, const Backend *be, jx_array *const *in,
                  jx_array **out) {
  return jit_run_replay(p, j, be, NULL, in, out);
}

jx_status jit_run_replay(const Program *p, const Jaxpr *j, const Backend *be, JitReplay *r,
                         jx_array *const *in, jx_array **out) {
  Buffer **bufs = calloc((size_t)(p->nslots ? p->nslots : 1), sizeof *bufs);
  bool *moved = calloc((size_t)(p->nslots ? p->nslots : 1), sizeof *moved);
  jx_array **contig = calloc((size_t)(j->nin ? j->nin : 1), sizeof *contig);
  if (!bufs || !moved || !contig) {
    free(bufs), free(moved), free(contig);
    error_set(JX_ERR_OOM, "jit: out of memory");
    return JX_ERR_OOM;
  }
  jx_status s = JX_OK;
  for (int i = 0; i < j->nin && s == JX_OK; i++) {
    contig[i] = impl_contiguous(in[i]);
    if (!contig[i]) s = jx_last_status();
  }
  for (int slot = 0; slot < p->nslots && s == JX_OK; slot++) {
    if (p->kinds[slot] == SLOT_INPUT) bufs[slot] = contig[p->index[slot]]->buf;
    if (p->kinds[slot] == SLOT_CONST) {
      bufs[slot] = j->consts[p->index[slot]]->buf;
      if (bufs[slot]->backend != be) { /* a closed-over array from another device */
        bufs[slot] = backend_transfer(bufs[slot], be);
        moved[slot] = bufs[slot] != NULL;
        if (!bufs[slot]) s = jx_last_status();
      }
    }
  }
  int debug = config_debug_level();
  bool tracing = config_trace_enabled();
  bool replayed = s == JX_OK && jit_replay_steps(r, p, bufs, &s);
  for (int k = 0; !replayed && k < p->nsteps && s == JX_OK; k++) {
    const Step *st = &p->steps[k];
    Buffer *args[KERNEL_MAX_ARGS > ROUTINE_MAX_OPERANDS ? KERNEL_MAX_ARGS : ROUTINE_MAX_OPERANDS];
    Buffer *outs[KERNEL_MAX_OUTS > ROUTINE_MAX_OPERANDS ? KERNEL_MAX_OUTS : ROUTINE_MAX_OPERANDS] = {NULL};
    for (int a = 0; a < step_nargs(st); a++) args[a] = bufs[st->args[a]];
    double t0 = debug >= 1 || tracing ? now_us() : 0;
    s = st->is_routine ? backend_run_routine(be, &st->routine, args, outs)
                       : backend_run_outs(be, &st->kernel, args, false, outs);
    if (s != JX_OK) {
      s = jx_last_status() ? jx_last_status() : JX_ERR_INTERNAL;
      break;
    }
    for (int o = 0; o < st->nout; o++) bufs[st->outs[o]] = outs[o];
    if (tracing) {
      char args_json[1024];
      trace_args(st, args, outs, args_json, sizeof args_json);
      s = config_trace_event(st->is_routine ? routine_name(st->routine.op) : st->name ? st->name : "kernel",
                             st->is_routine ? "routine" : st->kernel.has_reduction ? "reduction" : "elementwise",
                             t0, now_us() - t0, args_json);
    }
    if (debug >= 1 && st->is_routine)
      fprintf(stderr, "[jaxc] jit step %d/%d: %s outer=%lld n=%lld inner=%lld m=%lld%s%s on %s, %.1f us\n",
              k + 1, p->nsteps, routine_name(st->routine.op), (long long)st->routine.outer,
              (long long)st->routine.n, (long long)st->routine.inner, (long long)st->routine.m,
              st->routine.trans_a ? " trans_a" : "", st->routine.trans_b ? " trans_b" : "",
              be->name, now_us() - t0);
    else if (debug >= 1)
      fprintf(stderr, "[jaxc] jit step %d/%d: %lld elements%s on %s, %.1f us\n", k + 1, p->nsteps,
              (long long)st->kernel.size, st->kernel.has_reduction ? " (reduction)" : "", be->name,
              now_us() - t0);
    for (int f = 0; f < st->nfree; f++) {
      buffer_free(bufs[st->frees[f]]);
      bufs[st->frees[f]] = NULL;
    }
  }
  for (int o = 0; o < p->nout; o++) {
    const ProgramOutput *po = &p->outs[o];
    out[o] = NULL;
    if (s != JX_OK) continue;
    out[o] = array_new(buffer_ref(bufs[po->slot]), shape_copy(po->st), po->aval.dtype, po->aval.weak);
    if (!out[o]) s = jx_last_status();
  }
  if (s != JX_OK)
    for (int o = 0; o < p->nout; o++) jx_free(out[o]), out[o] = NULL;
  for (int slot = 0; slot < p->nslots; slot++)
    if (p->kinds[slot] == SLOT_TEMP || moved[slot]) buffer_free(bufs[slot]);
  for (int i = 0; i < j->nin; i++) jx_free(contig[i]);
  free(bufs), free(moved), free(contig);
  return s;
}

char *jit_program_print(const Program *p) {
  size_t cap = 256, n = 0;
  char *text = malloc(cap);
  if (!text) return NULL;
  text[0] = '\0';
  for (int k = 0; k < p->nsteps; k++) {
    char *kt = p->steps[k].is_routine ? strdup(routine_name(p->steps[k].routine.op))
                                      : kernel_print(&p->steps[k].kernel);
    if (!kt) continue;
    size_t need = n + strlen(kt) + 64;
    if (need > cap) {
      char *t2 = realloc(text, cap = need * 2);
      if (!t2) {
        free(kt);
        break;
      }
      text = t2;
    }
    n += (size_t)snprintf(text + n, cap - n, "step %d -> slot %d:\n%s\n", k, p->steps[k].outs[0], kt);
    free(kt);
  }
  return text;
}
