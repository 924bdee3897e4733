/* test_jit_graphs.c -- repeated calls of a jitted program replayed as a recorded device
 * graph (jit/replay.c; CUDA graphs on cuda, issue 13 item 5): a replayed MLP SGD step
 * (cuBLAS products, fused kernels, split reductions with scratch) gives the same bits
 * as the step run kernel by kernel (JAXC_CUDA_GRAPHS=0's path), over many calls, a
 * training loop whose buffers alternate, fresh inputs every call, and eight threads
 * sharing one jitted function; programs with a step that cannot be recorded (cuSOLVER)
 * and one-step programs are never recorded. On the cpu and interp devices nothing is
 * recorded and the same checks pass; on the cpu, replay.c's logic also runs over a
 * recording backend made of the cpu's entries (test_replay_logic_cpu), so CI checks it
 * without a GPU. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/cpu/cpu.h"
#include "backend/cuda/cuda.h"
#include "core/array.h"
#include "core/config.h"
#include "jit/jit.h"
#include "test.h"

#define B 64
#define NI 48
#define NH 96
#define NO 10
#define BIG (1 << 16) /* split reductions (rows of >= 32768): scratch in the graph */

static bool on_cuda;
/* JAXC_CUDA_GRAPHS as the test started: what a check that turns graphs off restores */
static bool graphs_default = true;

/* loss(w1, b1, w2, b2, x, y) = -mean(sum(y * log_softmax(relu(x w1 + b1) w2 + b2))) +
 * 1e-3 * mean(tanh(x))^2 (x of BIG elements: two split reductions). */
static jx_status mlp_loss(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *w1 = in[0], *b1 = in[1], *w2 = in[2], *b2 = in[3], *x = in[4], *y = in[5];
  jx_array *xs = jx_reshape(x, 2, (int64_t[]){B, BIG / B});
  jx_array *h = jx_nn_relu(jx_add(jx_matmul(jx_slice(xs, 2, (int64_t[]){0, 0}, (int64_t[]){B, NI}, NULL), w1), b1));
  jx_array *logp = jx_nn_log_softmax(jx_add(jx_matmul(h, w2), b2), 1, (int[]){-1}, NULL);
  jx_array *ce = jx_negative(jx_mean(jx_sum(jx_mul(logp, y), 1, (int[]){1}, false), 0, NULL, false));
  jx_array *m = jx_mean(jx_tanh(x), 0, NULL, false);
  out[0] = jx_add(ce, jx_mul(jx_mul(m, m), jx_scalar(1e-3)));
  return out[0] ? JX_OK : jx_last_status();
}

static jx_fn *grad_fn;
/* One SGD step: new w1, b1, w2, b2 and the loss. */
static jx_status mlp_step(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *res[5];
  jx_status s = jx_call(grad_fn, in, res);
  if (s != JX_OK) return s;
  out[4] = res[0];
  for (int i = 0; i < 4; i++) out[i] = jx_sub(in[i], jx_mul(res[1 + i], jx_scalar(0.05)));
  return JX_OK;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float rnd(void) { /* xorshift, in [-1, 1) */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (float)((rng >> 40) * 0x1p-23 - 1.0);
}

static jx_array *rand_arr(int ndim, const int64_t *shape, float scale) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  float *v = malloc((size_t)n * sizeof *v);
  for (int64_t i = 0; i < n; i++) v[i] = rnd() * scale;
  jx_array *a = jx_array_from(v, JX_FLOAT32, ndim, shape);
  free(v);
  return a;
}

typedef struct Inputs {
  jx_array *a[6];
} Inputs;

static Inputs make_inputs(void) {
  Inputs in;
  in.a[0] = rand_arr(2, (int64_t[]){NI, NH}, 0.2f);
  in.a[1] = rand_arr(1, (int64_t[]){NH}, 0.1f);
  in.a[2] = rand_arr(2, (int64_t[]){NH, NO}, 0.2f);
  in.a[3] = rand_arr(1, (int64_t[]){NO}, 0.1f);
  in.a[4] = rand_arr(1, (int64_t[]){BIG}, 1.0f);
  float *y = calloc(B * NO, sizeof *y);
  for (int i = 0; i < B; i++) y[i * NO + (i * 7) % NO] = 1.0f;
  in.a[5] = jx_array_from(y, JX_FLOAT32, 2, (int64_t[]){B, NO});
  free(y);
  return in;
}

static void free_inputs(Inputs *in) {
  for (int i = 0; i < 6; i++) jx_free(in->a[i]);
}

/* The step's five outputs read back: NI*NH + NH + NH*NO + NO + 1 floats. */
#define NOUT_FLOATS (NI * NH + NH + NH * NO + NO + 1)
static bool read_outs(jx_array **out, float *dst) {
  bool ok = true;
  for (int o = 0; o < 5; o++) {
    size_t n = (size_t)jx_size(out[o]);
    ok &= jx_read(out[o], dst, n * sizeof *dst) == JX_OK;
    dst += n;
  }
  return ok;
}

static jx_fn *new_step(void) {
  jx_fn *loss = jx_fn_new("mlp_loss", 6, 1, mlp_loss, NULL);
  grad_fn = jx_value_and_grad(loss, 4, (int[]){0, 1, 2, 3});
  jx_fn_free(loss);
  jx_fn *f = jx_fn_new("mlp_step", 6, 5, mlp_step, NULL);
  jx_fn *step = jx_jit(f);
  jx_fn_free(f);
  return step;
}

static void free_step(jx_fn *step) {
  jx_fn_free(step);
  jx_fn_free(grad_fn);
  grad_fn = NULL;
}

/* The step's outputs on `in`, run kernel by kernel (no graph). */
static void reference(jx_fn *step, Inputs *in, float *ref) {
  config_set_cuda_graphs(false);
  jx_array *out[5];
  CHECK(jx_call(step, in->a, out) == JX_OK);
  CHECK(read_outs(out, ref));
  for (int o = 0; o < 5; o++) jx_free(out[o]);
  config_set_cuda_graphs(graphs_default);
}

static void test_repeated_calls(void) {
  jx_fn *step = new_step();
  Inputs in = make_inputs();
  float *ref = malloc(NOUT_FLOATS * sizeof *ref), *got = malloc(NOUT_FLOATS * sizeof *got);
  reference(step, &in, ref);
  int same = 0;
  for (int c = 0; c < 30; c++) {
    jx_array *out[5];
    CHECK(jx_call(step, in.a, out) == JX_OK);
    CHECK(read_outs(out, got));
    same += memcmp(got, ref, NOUT_FLOATS * sizeof *got) == 0;
    for (int o = 0; o < 5; o++) jx_free(out[o]);
  }
  CHECK_EQ_INT(same, 30); /* bit for bit */
  JitReplayStats st = jit_replay_stats(jit_replay_for(step, in.a));
  if (on_cuda) {
    /* the allocator's free lists settle within a call or two: one or two address sets */
    CHECK_MSG(st.records >= 1 && st.records <= 4 && st.replays >= 25, "records %lld, replays %lld", (long long)st.records,
              (long long)st.replays);
  } else {
    CHECK(st.records == 0 && st.replays == 0);
  }
  /* JAXC_CUDA_GRAPHS=0: step by step, nothing more recorded or replayed */
  config_set_cuda_graphs(false);
  for (int c = 0; c < 3; c++) {
    jx_array *out[5];
    CHECK(jx_call(step, in.a, out) == JX_OK);
    for (int o = 0; o < 5; o++) jx_free(out[o]);
  }
  config_set_cuda_graphs(graphs_default);
  JitReplayStats st2 = jit_replay_stats(jit_replay_for(step, in.a));
  CHECK(st2.records == st.records && st2.replays == st.replays);
  free(ref), free(got);
  free_inputs(&in);
  free_step(step);
}

/* params = step(params) 25 times, with and without graphs: the same bits. The new
 * parameters land in buffers earlier steps freed, so a few address sets cycle (up to 6:
 * b2 and the loss share the allocator's smallest class, test_replay_training_cpu). */
static void train(jx_fn *step, bool graphs, float *final) {
  config_set_cuda_graphs(graphs);
  rng = 12345;
  Inputs in = make_inputs();
  for (int it = 0; it < 25; it++) {
    jx_array *out[5];
    CHECK(jx_call(step, in.a, out) == JX_OK);
    for (int i = 0; i < 4; i++) jx_free(in.a[i]), in.a[i] = out[i];
    if (it < 24) jx_free(out[4]);
    else {
      CHECK(read_outs(out, final));
      jx_free(out[4]);
    }
  }
  free_inputs(&in);
  config_set_cuda_graphs(graphs_default);
}

static void test_training_loop(void) {
  float *a = malloc(NOUT_FLOATS * sizeof *a), *b = malloc(NOUT_FLOATS * sizeof *b);
  jx_fn *step = new_step();
  train(step, false, a);
  free_step(step);
  step = new_step();
  train(step, true, b);
  CHECK(memcmp(a, b, NOUT_FLOATS * sizeof *a) == 0);
  Inputs probe = make_inputs();
  JitReplayStats st = jit_replay_stats(jit_replay_for(step, probe.a));
  free_inputs(&probe);
  if (on_cuda)
    CHECK_MSG(st.records >= 1 && st.records <= 8 && st.replays >= 16 && !st.off, "records %lld, replays %lld",
              (long long)st.records, (long long)st.replays);
  free_step(step);
  free(a), free(b);
}

/* Fresh input arrays (new values, new buffers) every call. */
static void test_new_inputs(void) {
  jx_fn *step = new_step();
  float *ref = malloc(NOUT_FLOATS * sizeof *ref), *got = malloc(NOUT_FLOATS * sizeof *got);
  int same = 0;
  for (int c = 0; c < 12; c++) {
    Inputs in = make_inputs();
    reference(step, &in, ref);
    jx_array *out[5];
    CHECK(jx_call(step, in.a, out) == JX_OK);
    CHECK(read_outs(out, got));
    same += memcmp(got, ref, NOUT_FLOATS * sizeof *got) == 0;
    for (int o = 0; o < 5; o++) jx_free(out[o]);
    free_inputs(&in);
  }
  CHECK_EQ_INT(same, 12);
  free(ref), free(got);
  free_step(step);
}

#define NTHREADS 8
#define CALLS 25
typedef struct Worker {
  jx_fn *step;
  Inputs in;
  const float *ref;
  int same, errors;
  char first_diff[256]; /* the first mismatch: which float, got and expected */
} Worker;

static void *worker(void *arg) {
  Worker *w = arg;
  float *got = malloc(NOUT_FLOATS * sizeof *got);
  for (int c = 0; c < CALLS; c++) {
    jx_array *out[5];
    if (jx_call(w->step, w->in.a, out) != JX_OK || !read_outs(out, got)) {
      w->errors++;
      jx_clear_error();
      continue;
    }
    bool same = memcmp(got, w->ref, NOUT_FLOATS * sizeof *got) == 0;
    w->same += same;
    if (!same && !w->first_diff[0]) { /* which floats differ, how many and by how much */
      int first = -1, ndiff = 0;
      double worst = 0;
      for (int i = 0; i < NOUT_FLOATS; i++)
        if (memcmp(&got[i], &w->ref[i], sizeof *got) != 0) {
          double d = fabs((double)got[i] - (double)w->ref[i]);
          first = first < 0 ? i : first, ndiff++, worst = d > worst ? d : worst;
        }
      JitReplayStats st = jit_replay_stats(jit_replay_for(w->step, w->in.a));
      snprintf(w->first_diff, sizeof w->first_diff,
               "call %d, %d of %d floats, first %d: %.9g, expected %.9g, largest difference %.3g (program: %lld "
               "recorded, %lld replayed)",
               c, ndiff, NOUT_FLOATS, first, got[first], w->ref[first], worst, (long long)st.records,
               (long long)st.replays);
    }
    for (int o = 0; o < 5; o++) jx_free(out[o]);
  }
  free(got);
  return NULL;
}

static void test_threads(void) {
  jx_fn *step = new_step();
  Worker w[NTHREADS];
  float *refs = malloc((size_t)NTHREADS * NOUT_FLOATS * sizeof *refs);
  for (int t = 0; t < NTHREADS; t++) {
    w[t] = (Worker){.step = step, .in = make_inputs(), .ref = refs + (size_t)t * NOUT_FLOATS};
    reference(step, &w[t].in, refs + (size_t)t * NOUT_FLOATS);
  }
  pthread_t th[NTHREADS];
  for (int t = 0; t < NTHREADS; t++) pthread_create(&th[t], NULL, worker, &w[t]);
  for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
  for (int t = 0; t < NTHREADS; t++) {
    CHECK_EQ_INT(w[t].errors, 0);
    CHECK_MSG(w[t].same == CALLS, "thread %d: %d of %d calls the same; first difference: %s", t, w[t].same, CALLS,
              w[t].first_diff);
    free_inputs(&w[t].in);
  }
  free(refs);
  free_step(step);
}

/* cholesky (cuSOLVER waits for its info word) is never recorded; neither is a program
 * of one kernel. Both still give the step-by-step results. */
static jx_status chol_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *a = jx_add(jx_matmul(in[0], jx_transpose(in[0], NULL)), jx_eye(8, JX_FLOAT32));
  out[0] = jx_sum(jx_linalg_cholesky(a, false), 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status one_kernel(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_tanh(in[0]);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_not_recorded(void) {
  jx_fn *fs[2] = {jx_fn_new("chol", 1, 1, chol_fn, NULL), jx_fn_new("one", 1, 1, one_kernel, NULL)};
  jx_array *x = rand_arr(2, (int64_t[]){8, 8}, 1.0f);
  for (int i = 0; i < 2; i++) {
    jx_fn *j = jx_jit(fs[i]);
    jx_array *out = NULL;
    float first = 0;
    for (int c = 0; c < 5; c++) {
      CHECK(jx_call(j, &x, &out) == JX_OK);
      float v[64];
      CHECK(jx_read(out, v, (size_t)jx_size(out) * sizeof(float)) == JX_OK);
      if (c == 0) first = v[0];
      CHECK(v[0] == first);
      jx_free(out);
    }
    JitReplayStats st = jit_replay_stats(jit_replay_for(j, &x));
    CHECK_MSG(st.records == 0 && st.replays == 0, "%s: records %lld", i ? "one kernel" : "cholesky",
              (long long)st.records);
    jx_fn_free(j);
    jx_fn_free(fs[i]);
  }
  jx_free(x);
}

/* ----------------------------------------- replay.c's logic on the cpu, in CI
 *
 * A recording backend made of the cpu's entries: between graph_begin and graph_end the
 * thread's dispatches and routines are appended to a list (and memory it frees is kept
 * by the list, as the cuda backend keeps it with the graph); a launch runs the list.
 * Then jit_run_replay on it checks, without a GPU, that recordings are made once per
 * address set, replayed for matching calls, own their temporaries, and give the bits
 * the step-by-step path gives -- from one thread and from eight. The list also takes
 * each step's dependencies (Backend.graph_step) and a launch runs the steps in the
 * order those allow that is furthest from issue order (the latest ready step first),
 * as a graph's parallel branches may: a missing dependency changes the bits. */
#define FAKE_MAX_DEPS 64
typedef struct FakeOp {
  void *exe;
  const Kernel *k;  /* or ... */
  const Routine *r; /* ... a routine */
  void *args[KERNEL_MAX_ARGS], *outs[KERNEL_MAX_OUTS + ROUTINE_MAX_OPERANDS];
  int step, ndeps, deps[FAKE_MAX_DEPS]; /* the step it belongs to and the steps it follows */
} FakeOp;
typedef struct FakeGraph {
  FakeOp *ops;
  int n, cap;
  void **kept;
  int nkept, capk;
  int step, ndeps, deps[FAKE_MAX_DEPS]; /* the step being issued (graph_step) */
  bool truncated;                        /* more dependencies than FAKE_MAX_DEPS */
  int64_t steps_told;                    /* graph_step calls */
} FakeGraph;
static int64_t fake_steps_told; /* graph_step calls, all recordings */
static int64_t fake_reordered;  /* ops a launch ran before an op issued earlier */
static _Thread_local FakeGraph *fake_rec;
static int64_t fake_launches;

/* A caching allocator as the cuda backend's: freed blocks are handed out again, newest
 * first, by the cuda allocator's size classes; while recording, new blocks only. */
typedef struct FakeBlock {
  void *mem;
  size_t nbytes;
} FakeBlock;
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static FakeBlock fake_cache[4096], fake_live[4096];
static int fake_ncache, fake_nlive;
static void *fake_alloc(const Backend *be, size_t nbytes) {
  void *mem = NULL;
  nbytes = cuda_alloc_class(nbytes);
  pthread_mutex_lock(&fake_lock);
  for (int i = fake_ncache - 1; i >= 0 && !fake_rec && !mem; i--)
    if (fake_cache[i].nbytes == nbytes) {
      mem = fake_cache[i].mem;
      memmove(&fake_cache[i], &fake_cache[i + 1], (size_t)(--fake_ncache - i) * sizeof *fake_cache);
    }
  if (!mem) mem = backend_cpu.alloc(&backend_cpu, nbytes);
  if (mem && fake_nlive < 4096) fake_live[fake_nlive++] = (FakeBlock){mem, nbytes};
  pthread_mutex_unlock(&fake_lock);
  return mem;
}
static void fake_cache_put(void *mem) {
  pthread_mutex_lock(&fake_lock);
  size_t nbytes = 0;
  for (int i = 0; i < fake_nlive; i++)
    if (fake_live[i].mem == mem) nbytes = fake_live[i].nbytes, fake_live[i] = fake_live[--fake_nlive];
  if (fake_ncache < 4096) fake_cache[fake_ncache++] = (FakeBlock){mem, nbytes};
  else backend_cpu.free(&backend_cpu, mem);
  pthread_mutex_unlock(&fake_lock);
}
static void fake_empty_cache(void) {
  for (int i = 0; i < fake_ncache; i++) backend_cpu.free(&backend_cpu, fake_cache[i].mem);
  fake_ncache = 0;
}

static jx_status fake_prepare(const Backend *be, const Kernel *k, void **exe) {
  return backend_cpu.prepare(&backend_cpu, k, exe);
}
static void fake_free(const Backend *be, void *mem) {
  FakeGraph *g = fake_rec;
  if (!g) {
    fake_cache_put(mem);
    return;
  }
  if (g->nkept == g->capk) g->kept = realloc(g->kept, (size_t)(g->capk = 2 * g->capk + 8) * sizeof *g->kept);
  g->kept[g->nkept++] = mem;
}
static FakeOp *fake_append(void) {
  FakeGraph *g = fake_rec;
  if (g->n == g->cap) g->ops = realloc(g->ops, (size_t)(g->cap = 2 * g->cap + 8) * sizeof *g->ops);
  FakeOp *op = &g->ops[g->n++];
  memset(op, 0, sizeof *op);
  op->step = g->step, op->ndeps = g->ndeps;
  memcpy(op->deps, g->deps, (size_t)g->ndeps * sizeof *g->deps);
  return op;
}
static jx_status fake_dispatch(const Backend *be, void *exe, const Kernel *k, void *const *in, void *const *out) {
  if (!fake_rec) return backend_cpu.dispatch(&backend_cpu, exe, k, in, out);
  FakeOp *op = fake_append();
  op->exe = exe, op->k = k;
  memcpy(op->args, in, (size_t)k->nargs * sizeof *in);
  memcpy(op->outs, out, (size_t)(1 + k->nextra + k->has_row_out) * sizeof *out);
  return JX_OK;
}
static jx_status fake_routine(const Backend *be, const Routine *r, void *const *in, void *const *out) {
  if (!fake_rec) return backend_cpu.routine ? backend_cpu.routine(&backend_cpu, r, in, out) : routine_run_host(r, in, out);
  FakeOp *op = fake_append();
  op->r = r;
  memcpy(op->args, in, (size_t)r->nin * sizeof *in);
  memcpy(op->outs, out, (size_t)r->nout * sizeof *out);
  return JX_OK;
}
static jx_status fake_begin(const Backend *be) {
  fake_rec = calloc(1, sizeof *fake_rec);
  fake_rec->step = -1;
  return JX_OK;
}
/* The last recording's critical flags and dependencies per step (the first 256 steps) */
#define FAKE_CRIT_STEPS 256
static bool fake_crit[FAKE_CRIT_STEPS];
static int fake_crit_ndeps[FAKE_CRIT_STEPS], fake_crit_deps[FAKE_CRIT_STEPS][FAKE_MAX_DEPS];
static jx_status fake_step(const Backend *be, int step, int ndeps, const int *deps, bool critical,
                           const Routine *routine, const Kernel *kernel) {
  FakeGraph *g = fake_rec;
  if (step >= 0 && step < FAKE_CRIT_STEPS) {
    fake_crit[step] = critical, fake_crit_ndeps[step] = ndeps < FAKE_MAX_DEPS ? ndeps : FAKE_MAX_DEPS;
    memcpy(fake_crit_deps[step], deps, (size_t)fake_crit_ndeps[step] * sizeof *deps);
  }
  g->step = step, g->ndeps = ndeps < FAKE_MAX_DEPS ? ndeps : FAKE_MAX_DEPS;
  g->truncated |= ndeps > FAKE_MAX_DEPS;
  memcpy(g->deps, deps, (size_t)g->ndeps * sizeof *deps);
  __atomic_add_fetch(&fake_steps_told, 1, __ATOMIC_RELAXED);
  return JX_OK;
}
/* Whether every op of the steps op depends on has run. */
static bool fake_ready(const FakeGraph *g, const FakeOp *op, const bool *done) {
  for (int i = 0; i < g->n; i++)
    if (!done[i] && g->ops[i].step != op->step)
      for (int d = 0; d < op->ndeps; d++)
        if (g->ops[i].step == op->deps[d]) return false;
  /* ops of one step (none here: a step is one dispatch or routine) keep their order */
  for (int i = 0; i < g->n && &g->ops[i] != op; i++)
    if (!done[i] && g->ops[i].step == op->step) return false;
  return true;
}
static jx_status fake_end(const Backend *be, void **exec) {
  *exec = fake_rec;
  fake_rec = NULL;
  return JX_OK;
}
static jx_status fake_launch(const Backend *be, void *exec) {
  FakeGraph *g = exec;
  __atomic_add_fetch(&fake_launches, 1, __ATOMIC_RELAXED);
  jx_status s = JX_OK;
  bool *done = calloc((size_t)g->n + 1, sizeof *done);
  for (int left = g->n; left > 0 && s == JX_OK; left--) {
    int i = g->n - 1; /* the latest ready op (in issue order when no dependencies were told) */
    while (i >= 0 && (done[i] || (g->truncated || g->step < 0 ? i != g->n - left : !fake_ready(g, &g->ops[i], done)))) i--;
    if (i < 0) {
      s = JX_ERR_INTERNAL;
      break;
    }
    if (i != g->n - left) __atomic_add_fetch(&fake_reordered, 1, __ATOMIC_RELAXED);
    done[i] = true;
    FakeOp *op = &g->ops[i];
    FakeGraph *saved = fake_rec;
    fake_rec = NULL;
    s = op->k ? backend_cpu.dispatch(&backend_cpu, op->exe, op->k, op->args, op->outs)
              : backend_cpu.routine ? backend_cpu.routine(&backend_cpu, op->r, op->args, op->outs)
                                    : routine_run_host(op->r, op->args, op->outs);
    fake_rec = saved;
  }
  free(done);
  return s;
}
static void fake_release(const Backend *be, void *exec) {
  FakeGraph *g = exec;
  for (int i = 0; i < g->nkept; i++) fake_cache_put(g->kept[i]);
  free(g->kept), free(g->ops), free(g);
}
static bool fake_routine_ok(const Backend *be, const Routine *r) { return r->op == ROUTINE_GEMM; }
static Backend fake;

/* (a, b, c) -> (tanh(a @ b) * c + c, sum((a @ b)^2)): a product, two kernels and a
 * temporary (a @ b), no constants. */
static jx_status fake_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *ab = jx_matmul(in[0], in[1]);
  out[0] = jx_add(jx_mul(jx_tanh(ab), in[2]), in[2]);
  out[1] = jx_sum(jx_mul(ab, ab), 0, NULL, false);
  return out[1] ? JX_OK : jx_last_status();
}

typedef struct FakeRun {
  const Program *p;
  const Jaxpr *j;
  JitReplay *r;
  jx_array *in[3];
  float ref[16 * 24 + 1];
  int same, calls;
} FakeRun;

static bool fake_call(FakeRun *f, float *got) {
  jx_array *out[2];
  if (jit_run_replay(f->p, f->j, &fake, f->r, f->in, out) != JX_OK) return false;
  bool ok = jx_read(out[0], got, 16 * 24 * sizeof *got) == JX_OK && jx_read(out[1], got + 16 * 24, sizeof *got) == JX_OK;
  jx_free(out[0]), jx_free(out[1]);
  return ok;
}

static void *fake_worker(void *arg) {
  FakeRun *f = arg;
  float got[16 * 24 + 1];
  for (int c = 0; c < f->calls; c++) f->same += fake_call(f, got) && memcmp(got, f->ref, sizeof got) == 0;
  return NULL;
}

static void test_replay_logic_cpu(void) {
  fake = backend_cpu;
  fake.name = "cpu";
  fake.host_memory = false; /* freed memory goes to fake_free, not the host buffer cache */
  fake.prepare = fake_prepare, fake.prepare_batch = NULL, fake.dispatch = fake_dispatch, fake.routine = fake_routine;
  fake.alloc = fake_alloc, fake.free = fake_free, fake.prepare_loop = NULL;
  fake.graph_begin = fake_begin, fake.graph_end = fake_end, fake.graph_launch = fake_launch;
  fake.graph_release = fake_release, fake.graph_routine_ok = fake_routine_ok, fake.graph_step = fake_step;
  jx_fn *fn = jx_fn_new("fake_fn", 3, 2, fake_fn, NULL), *jf = jx_jit(fn);
  FakeRun runs[NTHREADS];
  for (int t = 0; t < NTHREADS; t++) {
    FakeRun *f = &runs[t];
    memset(f, 0, sizeof *f);
    f->in[0] = rand_arr(2, (int64_t[]){16, 32}, 1.0f);
    f->in[1] = rand_arr(2, (int64_t[]){32, 24}, 0.3f);
    f->in[2] = rand_arr(1, (int64_t[]){24}, 1.0f);
    jx_array *out[2];
    CHECK(jx_call(jf, f->in, out) == JX_OK); /* compiled for the cpu; the reference */
    CHECK(jx_read(out[0], f->ref, 16 * 24 * sizeof(float)) == JX_OK);
    CHECK(jx_read(out[1], f->ref + 16 * 24, sizeof(float)) == JX_OK);
    jx_free(out[0]), jx_free(out[1]);
    f->p = jit_program_for(jf, f->in);
    f->j = jit_jaxpr_for(jf, f->in);
  }
  CHECK(runs[0].p && runs[0].j && runs[0].j->nconst == 0);
  if (!runs[0].p || !runs[0].j || runs[0].j->nconst != 0) goto done;
  /* one thread, 20 calls: the first step by step, one recording, 18 replays */
  JitReplay *r = jit_replay_new(&fake);
  runs[0].r = r, runs[0].calls = 20;
  int64_t launches0 = fake_launches;
  fake_worker(&runs[0]);
  JitReplayStats st = jit_replay_stats(r);
  CHECK_EQ_INT(runs[0].same, 20);
  CHECK_MSG(st.records == 1 && st.replays == 18 && !st.off, "records %lld, replays %lld", (long long)st.records,
            (long long)st.replays);
  CHECK_EQ_INT((int)(fake_launches - launches0), 19);
  /* JAXC_CUDA_GRAPHS=0's switch: step by step */
  config_set_cuda_graphs(false);
  runs[0].same = 0, runs[0].calls = 3;
  fake_worker(&runs[0]);
  config_set_cuda_graphs(graphs_default);
  CHECK_EQ_INT(runs[0].same, 3);
  CHECK(jit_replay_stats(r).replays == 18);
  /* eight threads sharing the program (and its four recordings): each call the bits of
   * its own inputs' reference */
  pthread_t th[NTHREADS];
  for (int t = 0; t < NTHREADS; t++) runs[t].r = r, runs[t].same = 0, runs[t].calls = 30;
  for (int t = 0; t < NTHREADS; t++) pthread_create(&th[t], NULL, fake_worker, &runs[t]);
  for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
  for (int t = 0; t < NTHREADS; t++) CHECK_MSG(runs[t].same == 30, "thread %d: %d of 30 the same", t, runs[t].same);
  st = jit_replay_stats(r);
  CHECK_MSG(st.records >= 1 && st.replays >= 1, "records %lld, replays %lld", (long long)st.records,
            (long long)st.replays);
  jit_replay_free(r);
  fake_empty_cache();
done:
  for (int t = 0; t < NTHREADS; t++)
    for (int i = 0; i < 3; i++) jx_free(runs[t].in[i]);
  jx_fn_free(jf), jx_fn_free(fn);
}

/* (w, v, x) -> (w - tanh(w) * v, v - sum(tanh(x @ w), 0), sum(x @ w)): fed back as a
 * training step's parameters are; v' (96 bytes) and the loss (4) share the allocator's
 * smallest class, so the address sets cycle with period 6 (3 for them, 2 for w). */
static jx_status fake_train(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *xw = jx_matmul(in[2], in[0]);
  out[0] = jx_sub(in[0], jx_mul(jx_tanh(in[0]), in[1]));
  out[1] = jx_sub(in[1], jx_sum(jx_tanh(xw), 1, (int[]){0}, false));
  out[2] = jx_sum(xw, 0, NULL, false);
  return out[2] ? JX_OK : jx_last_status();
}

/* 30 steps fed back; the loss freed after the parameters (order 0) or before (1): each
 * order cycles the smallest class's blocks differently (period 2 or 3). */
static bool train_fake(jx_fn *jf, JitReplay *r, const Program **p, const Jaxpr **j, int order, float *res) {
  rng = 777;
  jx_array *in[3] = {rand_arr(2, (int64_t[]){32, 24}, 0.5f), rand_arr(1, (int64_t[]){24}, 0.1f),
                     rand_arr(2, (int64_t[]){16, 32}, 0.2f)};
  bool ok = true;
  for (int it = 0; it < 30 && ok; it++) {
    jx_array *out[3];
    ok = (r ? jit_run_replay(*p, *j, &fake, r, in, out) : jx_call(jf, in, out)) == JX_OK;
    if (!ok) break;
    if (!r && it == 0) *p = jit_program_for(jf, in), *j = jit_jaxpr_for(jf, in);
    if (it == 29) {
      ok = jx_read(out[0], res, 32 * 24 * sizeof(float)) == JX_OK && jx_read(out[1], res + 32 * 24, 24 * sizeof(float)) == JX_OK &&
           jx_read(out[2], res + 32 * 24 + 24, sizeof(float)) == JX_OK;
    }
    if (order == 1) jx_free(out[2]);
    for (int i = 0; i < 2; i++) jx_free(in[i]), in[i] = out[i];
    if (order == 0) jx_free(out[2]);
  }
  for (int i = 0; i < 3; i++) jx_free(in[i]);
  return ok;
}

static void test_replay_training_cpu(void) {
  jx_fn *fn = jx_fn_new("fake_train", 3, 3, fake_train, NULL), *jf = jx_jit(fn);
  float ref[32 * 24 + 24 + 1], got[32 * 24 + 24 + 1];
  const Program *p = NULL;
  const Jaxpr *j = NULL;
  CHECK(train_fake(jf, NULL, &p, &j, 0, ref)); /* jx_call on the cpu */
  CHECK(p && j && j->nconst == 0);
  for (int order = 0; p && j && !j->nconst && order < 2; order++) {
    JitReplay *r = jit_replay_new(&fake);
    memset(got, 0, sizeof got);
    CHECK(train_fake(jf, r, &p, &j, order, got));
    CHECK(memcmp(ref, got, sizeof ref) == 0);
    JitReplayStats st = jit_replay_stats(r);
    CHECK_MSG(st.records >= 1 && st.records <= 8 && st.replays >= 21 && !st.off, "order %d: records %lld, replays %lld",
              order, (long long)st.records, (long long)st.replays);
    jit_replay_free(r);
    fake_empty_cache();
  }
  jx_fn_free(jf), jx_fn_free(fn);
}

/* The MLP step (two products, the softmax's reductions, split reductions with scratch,
 * reused temporaries, four parameter updates) recorded by the fake backend with its
 * dependencies and replayed out of issue order: the bits of the cpu's step by step. */
static void test_replay_mlp_reordered_cpu(void) {
  jx_fn *step = new_step();
  Inputs in = make_inputs();
  float *ref = malloc(NOUT_FLOATS * sizeof *ref), *got = malloc(NOUT_FLOATS * sizeof *got);
  jx_array *out[5];
  CHECK(jx_call(step, in.a, out) == JX_OK);
  CHECK(read_outs(out, ref));
  for (int o = 0; o < 5; o++) jx_free(out[o]);
  const Program *p = jit_program_for(step, in.a);
  const Jaxpr *j = jit_jaxpr_for(step, in.a);
  CHECK(p && j && p->nsteps > 4);
  if (p && j) {
    JitReplay *r = jit_replay_new(&fake);
    int64_t told0 = fake_steps_told, reordered0 = fake_reordered;
    int same = 0;
    for (int c = 0; c < 6; c++) {
      memset(got, 0, NOUT_FLOATS * sizeof *got);
      if (jit_run_replay(p, j, &fake, r, in.a, out) != JX_OK) continue;
      same += read_outs(out, got) && memcmp(got, ref, NOUT_FLOATS * sizeof *got) == 0;
      for (int o = 0; o < 5; o++) jx_free(out[o]);
    }
    CHECK_EQ_INT(same, 6);
    JitReplayStats st = jit_replay_stats(r);
    CHECK_MSG(st.records >= 1 && st.replays >= 3, "records %lld, replays %lld", (long long)st.records,
              (long long)st.replays);
    CHECK_MSG(fake_steps_told - told0 == st.records * p->nsteps, "graph_step told %lld times for %lld x %d steps",
              (long long)(fake_steps_told - told0), (long long)st.records, p->nsteps);
    CHECK(fake_reordered > reordered0); /* the replays did run steps out of issue order */
    /* the steps told critical form one chain, each following the one before it */
    int ncrit = 0, prev = -1;
    for (int k = 0; k < p->nsteps && k < FAKE_CRIT_STEPS; k++) {
      if (!fake_crit[k]) continue;
      bool follows = prev < 0;
      for (int d = 0; d < fake_crit_ndeps[k] && !follows; d++) follows = fake_crit_deps[k][d] == prev;
      CHECK_MSG(follows, "critical step %d does not follow critical step %d", k, prev);
      prev = k, ncrit++;
    }
    CHECK_MSG(ncrit >= 3 && ncrit < p->nsteps, "%d of %d steps critical", ncrit, p->nsteps);
    jit_replay_free(r);
    fake_empty_cache();
  }
  free(ref), free(got), free_inputs(&in), free_step(step);
}

/* jit_critical_path on hand-made dependencies: the longest chain by cost, one chain
 * where two tie, none where nothing costs anything. */
static void test_critical_path(void) {
  /* 0 (10) -> 2 (1) -> 4 (1); 1 (1) -> 3 (5) -> 4; 5 (3) alone: 0, 2, 4 (12) */
  int at[] = {0, 0, 0, 1, 2, 4, 4}, deps[] = {0, 1, 3, 2};
  double cost[] = {10, 1, 1, 5, 1, 3};
  bool crit[6];
  jit_critical_path(6, cost, at, deps, crit);
  bool want[] = {true, false, true, false, true, false};
  for (int k = 0; k < 6; k++) CHECK_MSG(crit[k] == want[k], "step %d: critical %d", k, crit[k]);
  /* two equal chains 0 -> 2, 1 -> 3: the one ending first (3 is not marked) */
  int at2[] = {0, 0, 0, 1, 2}, deps2[] = {0, 1};
  double cost2[] = {2, 2, 2, 2};
  jit_critical_path(4, cost2, at2, deps2, crit);
  CHECK(crit[0] && !crit[1] && crit[2] && !crit[3]);
  /* a join of two equal chains: through the latest of the equal dependencies */
  int at3[] = {0, 0, 0, 2}, deps3[] = {1, 0};
  double cost3[] = {4, 4, 1};
  jit_critical_path(3, cost3, at3, deps3, crit);
  CHECK(!crit[0] && crit[1] && crit[2]);
  double zero[] = {0, 0, 0, 0};
  jit_critical_path(4, zero, at2, deps2, crit);
  CHECK(!crit[0] && !crit[1] && !crit[2] && !crit[3]);
  jit_critical_path(0, zero, at2, deps2, crit);
}

int main(void) {
  jx_array *probe = jx_scalar(0.0);
  on_cuda = strcmp(jx_device_of(probe), "cuda") == 0;
  bool on_cpu = strcmp(jx_device_of(probe), "cpu") == 0;
  jx_free(probe);
  graphs_default = config_cuda_graphs();
  on_cuda = on_cuda && graphs_default; /* JAXC_CUDA_GRAPHS=0: nothing recorded */
  TEST_RUN(test_critical_path);
  TEST_RUN(test_repeated_calls);
  TEST_RUN(test_training_loop);
  TEST_RUN(test_new_inputs);
  TEST_RUN(test_threads);
  TEST_RUN(test_not_recorded);
  /* replay.c's logic over the fake recording backend, whatever JAXC_CUDA_GRAPHS says */
  config_set_cuda_graphs(graphs_default = true);
  if (on_cpu) TEST_RUN(test_replay_logic_cpu);
  if (on_cpu) TEST_RUN(test_replay_training_cpu);
  if (on_cpu) TEST_RUN(test_replay_mlp_reordered_cpu);
  return test_finish();
}
