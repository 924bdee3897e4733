/* loop.c -- a while or scan equation run as one compiled loop: when its predicate and
 * body lower to programs (jit.c's sub-jaxpr cache) and the device compiles whole loops
 * (Backend.prepare_loop: the cpu backend generates one C function), the programs'
 * steps are laid over one table of buffer slots (ir/loop.h) -- the operands, the
 * programs' constants and temporaries, scan slices and stacked ys -- and the device
 * runs every trip: no arrays, scopes or allocations per trip, the predicate read in
 * generated code, carries exchanged with the slots the body wrote (or, when a carry's
 * new value is another carry, a constant or an x, with a copy of it). Anything else (a
 * program output that is a view, no compiler) is declined and control.c runs the
 * trips from the host as before, which is also the oracle the tests compare against. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "core/config.h"
#include "core/dtype.h"
#include "core/error.h"
#include "jit/jit.h"
#include "trace/trace.h"

/* A loop built for one body jaxpr on one device: the key it was built for, the plan
 * and the device's executable. */
struct JitLoop {
  Prim prim;
  Jaxpr *cond;            /* while: held (jaxpr_ref); compared by identity */
  int nconsts[2];         /* while: cond_nconsts, body_nconsts; scan: num_consts, num_carry */
  bool reverse;
  int nin;                /* operand slots [0, nin) */
  bool declined;          /* the loop cannot run compiled (cached as such) */
  const Backend *be;
  void *exe;
  LoopPlan plan;
  int ncarry, *carry_slot, *carry_temp; /* carry i: its slot, and the temp swapped with it (-1: none) */
  int nconst, *const_slot;              /* program constants: their slots ... */
  const jx_array **const_arr;           /* ... and arrays (the jaxprs hold them) */
  int ntemp, *temp_slot;                /* temporaries and their sizes */
  size_t *temp_bytes;
  int nys;                              /* scan: the ys' base slots (plan.y_base) */
};

static int64_t loops_compiled; /* loops run compiled (tests read it); atomic */

int64_t jit_loop_count(void) { return __atomic_load_n(&loops_compiled, __ATOMIC_RELAXED); }

void jit_loop_free(JitLoop *l) {
  if (!l) return;
  if (l->exe && l->be->release_loop) l->be->release_loop(l->be, l->exe);
  jaxpr_free(l->cond);
  for (int k = 0; k < l->plan.nsteps; k++) {
    free((void *)l->plan.steps[k].args);
    free((void *)l->plan.steps[k].outs);
  }
  free(l->plan.steps), free(l->plan.swap);
  free(l->plan.copy_src), free(l->plan.copy_dst), free(l->plan.copy_bytes);
  free(l->plan.x_slot), free(l->plan.x_base), free(l->plan.x_bytes);
  free(l->plan.y_src), free(l->plan.y_base), free(l->plan.y_bytes);
  free(l->carry_slot), free(l->carry_temp), free(l->const_slot), free(l->const_arr);
  free(l->temp_slot), free(l->temp_bytes);
  free(l);
}

/* Maps one program's slots to the loop's: inputs through `input_slot`, constants and
 * temporaries appended. */
typedef struct Map {
  const Program *p;
  const Jaxpr *j;
  int *slot; /* program slot -> loop slot */
} Map;

static bool view_plain(const ProgramOutput *po) { return shape_is_contiguous(po->st); }

static size_t aval_bytes(const Aval *a) {
  return (size_t)shape_numel(a->ndim, a->shape) * jx_dtype_itemsize(a->dtype);
}

/* Step outputs' sizes in bytes (as backend_run_outs allocates them). */
static size_t step_out_bytes(const Step *st, int o) {
  if (st->is_routine) return routine_out_nbytes(&st->routine, o);
  return (size_t)kernel_out_elems(&st->kernel, o) * jx_dtype_itemsize(kernel_out_dtype(&st->kernel, o));
}

/* Assigns loop slots to p's constants and temporaries (inputs already mapped). */
static bool map_program(JitLoop *l, Map *m, int *nslots) {
  const Program *p = m->p;
  for (int s = 0; s < p->nslots; s++) {
    if (p->kinds[s] == SLOT_CONST) {
      l->const_slot[l->nconst] = *nslots;
      l->const_arr[l->nconst++] = m->j->consts[p->index[s]];
      m->slot[s] = (*nslots)++;
    }
  }
  for (int k = 0; k < p->nsteps; k++)
    for (int o = 0; o < p->steps[k].nout; o++) {
      int s = p->steps[k].outs[o];
      if (p->kinds[s] != SLOT_TEMP || m->slot[s] >= 0) return false; /* written twice */
      l->temp_slot[l->ntemp] = *nslots;
      l->temp_bytes[l->ntemp++] = step_out_bytes(&p->steps[k], o);
      m->slot[s] = (*nslots)++;
    }
  for (int s = 0; s < p->nslots; s++)
    if (m->slot[s] < 0) return false; /* a slot nothing defines */
  return true;
}

static bool add_steps(JitLoop *l, const Map *m) {
  for (int k = 0; k < m->p->nsteps; k++) {
    const Step *st = &m->p->steps[k];
    LoopStep *ls = &l->plan.steps[l->plan.nsteps++];
    int na = step_nargs(st);
    int *args = malloc(((size_t)na + 1) * sizeof *args), *outs = malloc(((size_t)st->nout + 1) * sizeof *outs);
    *ls = (LoopStep){.kernel = st->is_routine ? NULL : &st->kernel, .routine = st->is_routine ? &st->routine : NULL,
                     .nargs = na, .nout = st->nout, .args = args, .outs = outs};
    if (!args || !outs) return false;
    for (int a = 0; a < na; a++) args[a] = m->slot[st->args[a]];
    for (int o = 0; o < st->nout; o++) outs[o] = m->slot[st->outs[o]];
  }
  return true;
}

static int count_slots(const Program *p, SlotKind kind) {
  int n = 0;
  for (int s = 0; p && s < p->nslots; s++) n += p->kinds[s] == kind;
  return n;
}

/* The plan for a while (cp: the predicate's program) or scan over body program bp;
 * false: the loop cannot run compiled. */
static bool build_plan(JitLoop *l, const Jaxpr *cj, const Program *cp, const Jaxpr *bj, const Program *bp,
                       int nin, const PrimParams *pp) {
  bool scan = l->prim == PRIM_scan;
  int nc = scan ? 0 : pp->nconsts[0], nb = scan ? pp->nconsts[0] : pp->nconsts[1];
  int ncarry = scan ? pp->nconsts[1] : nin - nc - nb, nx = scan ? nin - nb - ncarry : 0;
  int ny = scan ? bj->nout - ncarry : 0;
  int nconst = count_slots(cp, SLOT_CONST) + count_slots(bp, SLOT_CONST);
  int ntemp = count_slots(cp, SLOT_TEMP) + count_slots(bp, SLOT_TEMP);
  int nsteps = (cp ? cp->nsteps : 0) + bp->nsteps;
  l->ncarry = ncarry, l->nys = ny;
  l->carry_slot = malloc(((size_t)ncarry + 1) * sizeof(int));
  l->carry_temp = malloc(((size_t)ncarry + 1) * sizeof(int));
  l->const_slot = malloc(((size_t)nconst + 1) * sizeof(int));
  l->const_arr = malloc(((size_t)nconst + 1) * sizeof(jx_array *));
  l->temp_slot = malloc(((size_t)(ntemp + ncarry) + 1) * sizeof(int)); /* + the carries' copies */
  l->temp_bytes = malloc(((size_t)(ntemp + ncarry) + 1) * sizeof(size_t));
  l->plan.copy_src = malloc(((size_t)ncarry + 1) * sizeof(int));
  l->plan.copy_dst = malloc(((size_t)ncarry + 1) * sizeof(int));
  l->plan.copy_bytes = malloc(((size_t)ncarry + 1) * sizeof(size_t));
  l->plan.steps = calloc((size_t)nsteps + 1, sizeof *l->plan.steps);
  l->plan.swap = malloc(((size_t)ncarry + 1) * sizeof *l->plan.swap);
  l->plan.x_slot = malloc(((size_t)nx + 1) * sizeof(int));
  l->plan.x_base = malloc(((size_t)nx + 1) * sizeof(int));
  l->plan.x_bytes = malloc(((size_t)nx + 1) * sizeof(size_t));
  l->plan.y_src = malloc(((size_t)ny + 1) * sizeof(int));
  l->plan.y_base = malloc(((size_t)ny + 1) * sizeof(int));
  l->plan.y_bytes = malloc(((size_t)ny + 1) * sizeof(size_t));
  Map cm = {.p = cp, .j = cj}, bm = {.p = bp, .j = bj};
  cm.slot = cp ? malloc(((size_t)cp->nslots + 1) * sizeof(int)) : NULL;
  bm.slot = malloc(((size_t)bp->nslots + 1) * sizeof(int));
  bool ok = l->carry_slot && l->carry_temp && l->const_slot && l->const_arr && l->temp_slot && l->temp_bytes &&
            l->plan.steps && l->plan.swap && l->plan.copy_src && l->plan.copy_dst && l->plan.copy_bytes && l->plan.x_slot && l->plan.x_base && l->plan.x_bytes && l->plan.y_src &&
            l->plan.y_base && l->plan.y_bytes && (!cp || cm.slot) && bm.slot;
  if (!ok) {
    free(cm.slot), free(bm.slot);
    error_set(JX_ERR_OOM, "jit: out of memory planning a loop");
    return false;
  }
  int nslots = nin;
  /* operands: while (cond consts, body consts, carries); scan (consts, carries, xs),
   * where the xs operands are the bases and each x slice gets a slot of its own */
  for (int i = 0; i < ncarry; i++) l->carry_slot[i] = (scan ? nb : nc + nb) + i;
  for (int i = 0; i < nx; i++) {
    int base = nb + ncarry + i;
    const Aval *xa = &bj->vars[bj->invars[base]];
    l->plan.x_base[i] = base, l->plan.x_slot[i] = nslots++, l->plan.x_bytes[i] = aval_bytes(xa);
  }
  if (cp) {
    for (int s = 0; s < cp->nslots; s++) {
      int k = cp->index[s];
      cm.slot[s] = cp->kinds[s] != SLOT_INPUT ? -1 : k < nc ? k : nc + nb + (k - nc);
    }
  }
  for (int s = 0; s < bp->nslots; s++) {
    int k = bp->index[s];
    bm.slot[s] = bp->kinds[s] != SLOT_INPUT ? -1
               : scan ? (k < nb + ncarry ? k : l->plan.x_slot[k - nb - ncarry])
               : (k < nb ? nc + k : nc + nb + (k - nb));
  }
  ok = (!cp || map_program(l, &cm, &nslots)) && map_program(l, &bm, &nslots);
  ok = ok && (!cp || add_steps(l, &cm));
  l->plan.ncond = l->plan.nsteps;
  ok = ok && add_steps(l, &bm);
  if (ok && cp) { /* the predicate: a plain bool scalar */
    const ProgramOutput *po = &cp->outs[0];
    ok = cp->nout == 1 && view_plain(po) && po->aval.dtype == JX_BOOL && po->aval.ndim == 0;
    if (ok) l->plan.pred = cm.slot[po->slot];
  }
  /* carries: each either the temporary the body wrote (exchanged after the trip), the
   * carry's own input (unchanged), or -- another carry, a constant, an x, a temporary
   * another carry takes -- copied into a temporary of its own, then exchanged */
  for (int i = 0; ok && i < ncarry; i++) {
    const ProgramOutput *po = &bp->outs[i];
    int s = bm.slot[po->slot];
    l->carry_temp[i] = -1;
    ok = view_plain(po);
    if (!ok || s == l->carry_slot[i]) continue;
    bool own = bp->kinds[po->slot] == SLOT_TEMP;
    for (int j = 0; own && j < i; j++) own = l->carry_temp[j] != s;
    for (int t = 0; own && t < l->ntemp; t++)
      if (l->temp_slot[t] == s) own = l->temp_bytes[t] == aval_bytes(&po->aval);
    if (!own) {
      int d = nslots++, c = l->plan.ncopy++;
      l->plan.copy_src[c] = s, l->plan.copy_dst[c] = d, l->plan.copy_bytes[c] = aval_bytes(&po->aval);
      l->temp_slot[l->ntemp] = d, l->temp_bytes[l->ntemp++] = aval_bytes(&po->aval);
      s = d;
    }
    l->carry_temp[i] = s;
    l->plan.swap[l->plan.nswap][0] = l->carry_slot[i], l->plan.swap[l->plan.nswap++][1] = s;
  }
  for (int i = 0; ok && i < ny; i++) {
    const ProgramOutput *po = &bp->outs[ncarry + i];
    ok = view_plain(po);
    l->plan.y_src[i] = bm.slot[po->slot], l->plan.y_base[i] = nslots++, l->plan.y_bytes[i] = aval_bytes(&po->aval);
  }
  l->plan.scan = scan, l->plan.reverse = l->reverse, l->plan.nx = nx, l->plan.ny = ny, l->plan.nslots = nslots;
  l->nin = nin;
  free(cm.slot), free(bm.slot);
  return ok;
}

static bool key_matches(const JitLoop *l, Prim p, const PrimParams *pp, int nin) {
  bool scan = p == PRIM_scan;
  return l->prim == p && l->nin == nin && l->nconsts[0] == pp->nconsts[0] && l->nconsts[1] == pp->nconsts[1] &&
         l->reverse == (scan && pp->reverse) && (scan || l->cond == pp->branches[0]);
}

/* The loop for this equation on be, built (and cached on the body) at first use. *own
 * is set when it could not be cached (the caller frees it after the run). */
static JitLoop *get_loop(Prim p, int nin, const PrimParams *pp, const Backend *be, bool *own) {
  *own = false;
  bool scan = p == PRIM_scan;
  const Jaxpr *cj = scan ? NULL : pp->branches[0], *bj = pp->branches[scan ? 0 : 1];
  JitLoop **cache = NULL;
  const Program *bp = jit_sub_program(bj, be, &cache, &bj); /* their constants: the */
  const Program *cp = scan ? NULL : jit_sub_program(cj, be, NULL, &cj); /* lowered jaxprs' */
  if (!bp || (!scan && !cp) || !cache) return NULL;
  JitLoop *l = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
  if (l) {
    if (key_matches(l, p, pp, nin)) return l->declined ? NULL : l;
    l = NULL; /* the body serves another loop too: build one for this call only */
  }
  l = calloc(1, sizeof *l);
  if (!l) return NULL;
  *l = (JitLoop){.prim = p, .cond = scan ? NULL : jaxpr_ref(pp->branches[0]), .nconsts = {pp->nconsts[0], pp->nconsts[1]},
                 .reverse = scan && pp->reverse, .nin = nin, .be = be};
  ErrorSaved older = error_stash();
  bool ok = build_plan(l, cj, cp, bj, bp, nin, pp) && be->prepare_loop(be, &l->plan, &l->exe) == JX_OK;
  if (!ok && config_debug_level() >= 1)
    fprintf(stderr, "[jaxc] jit: %s runs its trips from the host (%s)\n", prim_name(p),
            error_pending() ? jx_last_error() : "a program output is a view");
  jx_clear_error();
  error_unstash(&older);
  l->declined = !ok;
  JitLoop *expected = NULL;
  if (!__atomic_compare_exchange_n(cache, &expected, l, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    /* another thread cached one meanwhile (or another loop holds the slot) */
    if (key_matches(expected, p, pp, nin)) {
      jit_loop_free(l);
      return expected->declined ? NULL : expected;
    }
    *own = true;
  }
  if (l->declined && *own) {
    jit_loop_free(l);
    *own = false;
    return NULL;
  }
  return l->declined ? NULL : l;
}

jx_status jit_loop_run(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout, jx_array **out,
                       bool *declined) {
  *declined = true;
  bool committed = false;
  const Backend *be = realize_device("jit", nin, in, &committed);
  if (!be) {
    jx_clear_error();
    return JX_OK;
  }
  if (!be->prepare_loop || !be->host_memory) return JX_OK;
  bool own = false;
  JitLoop *l = get_loop(p, nin, pp, be, &own);
  if (!l) return JX_OK;
  *declined = false;
  bool scan = p == PRIM_scan;
  int64_t length = scan ? pp->length : pp->length > 0 ? pp->length : -1;
  const LoopPlan *pl = &l->plan;
  void **slots = calloc((size_t)pl->nslots + 1, sizeof *slots);
  Buffer **owned = calloc((size_t)pl->nslots + 1, sizeof *owned); /* buffers this call made */
  jx_array **contig = calloc((size_t)nin + 1, sizeof *contig);
  jx_array *const *args = in; /* every operand on be: uncommitted ones copied there */
  jx_status s = slots && owned && contig ? JX_OK : JX_ERR_OOM;
  if (s != JX_OK) error_set(s, "jit: out of memory running a loop");
  if (s == JX_OK && !realize_args(be, nin, in, &args)) s = jx_last_status(), args = NULL;
  for (int i = 0; s == JX_OK && i < nin; i++) {
    if (!(contig[i] = impl_contiguous(args[i]))) s = jx_last_status();
    else slots[i] = contig[i]->buf->mem;
  }
  for (int i = 0; s == JX_OK && i < l->ncarry; i++) { /* carries: written in place, so copies */
    int c = l->carry_slot[i];
    Aval a = prim_aval_of(in[c]);
    Buffer *b = buffer_new(be, aval_bytes(&a));
    if (!b) s = jx_last_status();
    else memcpy(b->mem, slots[c], b->nbytes), slots[c] = b->mem, owned[c] = b;
  }
  for (int i = 0; s == JX_OK && i < l->nconst; i++) {
    Buffer *b = l->const_arr[i]->buf;
    if (b->backend != be) {
      if (!(b = owned[l->const_slot[i]] = backend_transfer(b, be))) s = jx_last_status();
    }
    if (s == JX_OK) slots[l->const_slot[i]] = b->mem;
  }
  for (int i = 0; s == JX_OK && i < l->ntemp; i++) {
    Buffer *b = buffer_new(be, l->temp_bytes[i]);
    if (!b) s = jx_last_status();
    else slots[l->temp_slot[i]] = b->mem, owned[l->temp_slot[i]] = b;
  }
  for (int i = 0; s == JX_OK && i < pl->ny; i++) {
    Buffer *b = buffer_new(be, (size_t)length * pl->y_bytes[i]);
    if (!b) s = jx_last_status();
    else slots[pl->y_base[i]] = b->mem, owned[pl->y_base[i]] = b;
  }
  int64_t trips = 0;
  if (s == JX_OK) s = be->run_loop(be, l->exe, pl, slots, length, &trips);
  if (s == JX_OK) __atomic_add_fetch(&loops_compiled, 1, __ATOMIC_RELAXED);
  /* after an odd number of trips each carry's value is in the buffer of its temporary */
  for (int o = 0; o < nout; o++) out[o] = NULL;
  for (int i = 0; s == JX_OK && i < l->ncarry; i++) {
    int c = l->carry_slot[i], t = l->carry_temp[i];
    Buffer *b = t >= 0 && trips % 2 ? owned[t] : owned[c];
    const jx_array *a = in[c];
    out[i] = array_new(buffer_ref(b), shape_contiguous(a->ndim, a->shape), a->dtype, a->weak);
    if (!out[i]) s = jx_last_status();
  }
  for (int i = 0; s == JX_OK && i < pl->ny; i++) {
    const Jaxpr *bj = pp->branches[0];
    Aval y = bj->vars[bj->outvars[l->ncarry + i]];
    memmove(y.shape + 1, y.shape, (size_t)y.ndim * sizeof(int64_t));
    y.shape[0] = length, y.ndim++;
    out[l->ncarry + i] = array_new(buffer_ref(owned[pl->y_base[i]]), shape_contiguous(y.ndim, y.shape), y.dtype, y.weak);
    if (!out[l->ncarry + i]) s = jx_last_status();
  }
  if (s != JX_OK)
    for (int o = 0; o < nout; o++) jx_free(out[o]), out[o] = NULL;
  for (int o = 0; s == JX_OK && committed && o < nout; o++) out[o]->committed = true;
  for (int i = 0; owned && i < pl->nslots; i++) buffer_free(owned[i]);
  for (int i = 0; contig && i < nin; i++) jx_free(contig[i]);
  if (args) realize_args_free(nin, in, args);
  free(slots), free(owned), free(contig);
  if (own) jit_loop_free(l);
  return s;
}
