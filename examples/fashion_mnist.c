/* fashion_mnist.c -- trains a classifier on Fashion-MNIST with jaxc, end to end: IDX
 * files (gzip) -> float arrays, parameters initialized from jx_random keys, minibatches
 * shuffled with jx_random_permutation, a training step jit(value_and_grad(loss)) + Adam
 * on a cosine-decayed learning rate (jx_optax) compiled once, test accuracy after every
 * epoch, then an SVG plot of the
 * curves, the parameters as safetensors, and optionally a Chrome trace.
 *
 *   fashion_mnist [--model mlp|cnn] [--epochs N] [--batch-size B] [--lr LR] [--seed S]
 *                 [--data DIR] [--device NAME] [--limit N] [--plot FILE] [--save FILE]
 *                 [--trace FILE] [--bench N] [--devices N] [--distributed]
 *
 * Bad input is refused before any work with a message naming the option and the value
 * (exit status 2): numbers must be whole and in range, --lr positive and finite, the
 * batch no larger than the training set. A loss that stops being finite ends training
 * (exit 1), as does a plot, parameter or trace file that cannot be written. The data:
 * <prefix>-images-idx3-ubyte[.gz] and <prefix>-labels-idx1-ubyte[.gz] for the train and
 * t10k splits, gzip or not, image and label counts checked against each other.
 *
 * --bench N times N training steps on one batch after a warm-up step (which compiles)
 * and prints "fm_<model>_step <ms> ms" and "fm_<model>_compile <ms> ms" (bench/run.py).
 *
 * --devices N trains data-parallel over N cpu devices (jx_config_cpu_devices): each step is
 * a jx_shard_map over a one-axis mesh "batch" -- parameters and optimizer state
 * replicated (P()), the batch split (P('batch')); every device runs the jitted
 * value_and_grad on its B/N images, the gradients and loss are averaged with
 * jx_lax_pmean (the shared-memory all-reduce), and every device applies the same jitted
 * Adam update, so the replicas stay equal. B must be divisible by N. With --device cuda
 * the mesh is the cuda devices ("cuda", "cuda:1", ...; --devices 1 included) and the
 * all-reduce is NCCL's (backend/cuda/nccl.c).
 *
 * --distributed, for processes started by mpirun (mpirun -np P fashion_mnist
 * --distributed ...): jx_distributed_initialize (Open MPI through dlopen); every process
 * draws the same shuffled batches and trains on its B/P rows of each, in a jx_pmap whose
 * axis spans the processes (the same step as --devices, with the pmean over MPI); process
 * 0 alone prints and writes the files. B must be divisible by P.
 *
 * MLP: 784-512-256-10 with ReLU. CNN: conv3x3(32)-relu-maxpool2, conv3x3(64)-relu-
 * maxpool2, dense(128)-relu, dense(10), NHWC. */
#define _GNU_SOURCE
#include <jaxc.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_PARAMS 8
#define NCLASS 10

typedef struct Options {
  const char *model, *data, *device, *plot, *save, *trace;
  int epochs, bench, devices;
  bool distributed, devices_set;
  int64_t batch, limit;
  double lr;
  uint64_t seed;
} Options;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Errors after the data is loaded end the process with exit(): what it holds is the
 * process's to release (and stays reachable for LeakSanitizer). */
static int fail(const char *what) {
  fprintf(stderr, "fashion_mnist: %s: %s (%s)\n", what, jx_last_error(),
          jx_status_name(jx_last_status()));
  return 1;
}

/* ------------------------------------------------------------------ data */

/* <dir>/<name>.gz if it exists, else <dir>/<name> (IDX files gzip-compressed or not). */
static jx_array *read_idx(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.gz", dir, name);
  if (access(path, R_OK) != 0) snprintf(path, sizeof path, "%s/%s", dir, name);
  return jx_io_read_idx(path);
}

/* images (N, 28, 28) uint8 -> float32 in [0, 1], shaped (N, 784) for the MLP or
 * (N, 28, 28, 1) for the CNN; labels (N,) uint8 -> int32. --limit keeps the first N of
 * each split (the test set too). false with a message printed. */
static bool load_split(const Options *o, const char *prefix, bool cnn, jx_array **x, jx_array **y) {
  char name[64];
  snprintf(name, sizeof name, "%s-images-idx3-ubyte", prefix);
  jx_array *img = read_idx(o->data, name);
  snprintf(name, sizeof name, "%s-labels-idx1-ubyte", prefix);
  jx_array *lab = img ? read_idx(o->data, name) : NULL;
  if (!img || !lab) {
    jx_free(img), jx_free(lab);
    fail("reading the data (install Debian's dataset-fashion-mnist or pass --data DIR)");
    return false;
  }
  if (jx_dtype_of(img) != JX_UINT8 || jx_dtype_of(lab) != JX_UINT8) {
    fprintf(stderr, "fashion_mnist: %s/%s: images of %s and labels of %s (expected uint8 for both)\n", o->data,
            prefix, jx_dtype_name(jx_dtype_of(img)), jx_dtype_name(jx_dtype_of(lab)));
    jx_free(img), jx_free(lab);
    return false;
  }
  bool shapes_ok = jx_ndim(img) == 3 && jx_shape(img)[1] == 28 && jx_shape(img)[2] == 28 && jx_ndim(lab) == 1;
  if (!shapes_ok || jx_shape(img)[0] != jx_shape(lab)[0]) {
    fprintf(stderr, "fashion_mnist: %s/%s: %lld images of %lldx%lld and %lld labels (expected N uint8 "
            "images of 28x28 and N uint8 labels)\n", o->data, prefix, (long long)jx_shape(img)[0],
            (long long)(jx_ndim(img) > 1 ? jx_shape(img)[1] : 0),
            (long long)(jx_ndim(img) > 2 ? jx_shape(img)[2] : 0), (long long)jx_shape(lab)[0]);
    jx_free(img), jx_free(lab);
    return false;
  }
  jx_array *top = jx_max(lab, 0, NULL, false); /* the classes are 0..9 */
  int64_t most = jx_shape(lab)[0] && top ? (int64_t)jx_item(top) : 0;
  jx_free(top);
  if (most > 9) {
    fprintf(stderr, "fashion_mnist: %s/%s: a label is %lld (Fashion-MNIST's classes are 0 to 9)\n", o->data,
            prefix, (long long)most);
    jx_free(img), jx_free(lab);
    return false;
  }
  int64_t n = jx_shape(img)[0];
  if (o->limit > 0 && o->limit < n) {
    jx_array *a = jx_slice(img, 1, (int64_t[]){0}, (int64_t[]){o->limit}, NULL);
    jx_array *b = jx_slice(lab, 1, (int64_t[]){0}, (int64_t[]){o->limit}, NULL);
    jx_free(img), jx_free(lab);
    img = a, lab = b, n = o->limit;
  }
  jx_scope_begin();
  jx_array *f = jx_div(jx_astype(img, JX_FLOAT32), jx_scalar(255.0));
  *x = cnn ? jx_reshape(f, 4, (int64_t[]){n, 28, 28, 1}) : jx_reshape(f, 2, (int64_t[]){n, 784});
  *y = jx_astype(lab, JX_INT32);
  jx_scope_end(2, (jx_array *[]){*x, *y});
  jx_free(img), jx_free(lab);
  if (!*x || !*y) fail("converting the data");
  return *x && *y;
}

/* ---------------------------------------------------------------- models */

typedef struct Model {
  bool cnn;
  int nparams;
  const char *names[MAX_PARAMS];
  jx_array *params[MAX_PARAMS];
} Model;

/* He-normal weights (JAX's he_normal: variance 2 / fan_in) and zero biases. */
static jx_array *he_normal(jx_array *key, int ndim, const int64_t *shape, int64_t fan_in) {
  jx_scope_begin();
  jx_array *w = jx_mul(jx_random_normal(key, ndim, shape, JX_FLOAT32), jx_scalar(sqrt(2.0 / (double)fan_in)));
  jx_scope_end(1, &w);
  return w;
}

static bool init_model(Model *m, bool cnn, uint64_t seed) {
  jx_scope_begin();
  jx_array *keys = jx_random_split(jx_random_key(seed), MAX_PARAMS);
  jx_array *k[MAX_PARAMS];
  for (int i = 0; i < MAX_PARAMS; i++) k[i] = jx_squeeze(jx_slice(keys, 1, (int64_t[]){i}, (int64_t[]){i + 1}, NULL), 1, (int[]){0});
  m->cnn = cnn;
  if (!cnn) {
    static const int64_t dims[4] = {784, 512, 256, NCLASS};
    static const char *const names[6] = {"dense0.kernel", "dense0.bias", "dense1.kernel", "dense1.bias", "dense2.kernel", "dense2.bias"};
    m->nparams = 6;
    for (int l = 0; l < 3; l++) {
      m->names[2 * l] = names[2 * l], m->names[2 * l + 1] = names[2 * l + 1];
      m->params[2 * l] = he_normal(k[l], 2, (int64_t[]){dims[l], dims[l + 1]}, dims[l]);
      m->params[2 * l + 1] = jx_zeros(1, &dims[l + 1], JX_FLOAT32);
    }
  } else {
    static const char *const names[8] = {"conv0.kernel", "conv0.bias", "conv1.kernel", "conv1.bias",
                                         "dense0.kernel", "dense0.bias", "dense1.kernel", "dense1.bias"};
    m->nparams = 8;
    for (int i = 0; i < 8; i++) m->names[i] = names[i];
    m->params[0] = he_normal(k[0], 4, (int64_t[]){3, 3, 1, 32}, 9);
    m->params[1] = jx_zeros(1, (int64_t[]){32}, JX_FLOAT32);
    m->params[2] = he_normal(k[1], 4, (int64_t[]){3, 3, 32, 64}, 9 * 32);
    m->params[3] = jx_zeros(1, (int64_t[]){64}, JX_FLOAT32);
    m->params[4] = he_normal(k[2], 2, (int64_t[]){7 * 7 * 64, 128}, 7 * 7 * 64);
    m->params[5] = jx_zeros(1, (int64_t[]){128}, JX_FLOAT32);
    m->params[6] = he_normal(k[3], 2, (int64_t[]){128, NCLASS}, 128);
    m->params[7] = jx_zeros(1, (int64_t[]){NCLASS}, JX_FLOAT32);
  }
  jx_scope_end(m->nparams, m->params);
  for (int i = 0; i < m->nparams; i++)
    if (!m->params[i]) return false;
  return true;
}

static jx_array *dense(jx_array *x, jx_array *w, jx_array *b) { return jx_add(jx_matmul(x, w), b); }

static jx_array *conv_block(jx_array *x, jx_array *w, jx_array *b) {
  static const jx_conv_options nhwc = {.lhs_spec = "NHWC", .rhs_spec = "HWIO", .out_spec = "NHWC"};
  jx_array *c = jx_lax_conv_general_dilated(x, w, 2, (int64_t[]){1, 1}, JX_PADDING_SAME, NULL, &nhwc);
  jx_array *r = jx_nn_relu(jx_add(c, b));
  return jx_lax_max_pool(r, 2, (int64_t[]){2, 2}, (int64_t[]){2, 2}, JX_PADDING_VALID, NULL);
}

/* logits of a batch; p = the parameters in order. */
static jx_array *forward(bool cnn, jx_array *const *p, jx_array *x) {
  if (!cnn) {
    jx_array *h = jx_nn_relu(dense(x, p[0], p[1]));
    h = jx_nn_relu(dense(h, p[2], p[3]));
    return dense(h, p[4], p[5]);
  }
  jx_array *h = conv_block(conv_block(x, p[0], p[1]), p[2], p[3]);
  int64_t n = jx_shape(x)[0];
  h = jx_reshape(h, 2, (int64_t[]){n, 7 * 7 * 64});
  h = jx_nn_relu(dense(h, p[4], p[5]));
  return dense(h, p[6], p[7]);
}

typedef struct Ctx {
  bool cnn;
  int nparams, nstate;
  jx_fn *value_and_grad, *update;
  jx_fn *vg_jit, *apply_jit; /* --devices: the jitted halves of a step, around the pmean */
  jx_fn *pmapped;            /* --distributed: pmap of dp_step over the processes */
  int nproc, rank;
} Ctx;

/* loss(params..., x, y) = mean softmax cross-entropy with integer labels */
static jx_status loss_fn(void *ctx, jx_array *const *in, jx_array **out) {
  const Ctx *c = ctx;
  jx_array *logits = forward(c->cnn, in, in[c->nparams]);
  jx_array *ce = jx_optax_softmax_cross_entropy_with_integer_labels(logits, in[c->nparams + 1], -1, NULL);
  out[0] = jx_mean(ce, 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

/* step(params..., state..., x, y) -> (params..., state..., loss) */
static jx_status step_fn(void *ctx, jx_array *const *in, jx_array **out) {
  const Ctx *c = ctx;
  int np = c->nparams, ns = c->nstate;
  jx_array *vg_in[MAX_PARAMS + 2], *vg_out[MAX_PARAMS + 1];
  for (int i = 0; i < np; i++) vg_in[i] = in[i];
  vg_in[np] = in[np + ns], vg_in[np + 1] = in[np + ns + 1];
  jx_status s = jx_call(c->value_and_grad, vg_in, vg_out);
  if (s != JX_OK) return s;
  /* optax update_fn: (grads, state, params) -> (updates, new state) */
  jx_array **u_in = malloc((size_t)(2 * np + ns) * sizeof *u_in), **u_out = malloc((size_t)(np + ns) * sizeof *u_out);
  for (int i = 0; i < np; i++) u_in[i] = vg_out[1 + i], u_in[np + ns + i] = in[i];
  for (int i = 0; i < ns; i++) u_in[np + i] = in[np + i];
  s = jx_call(c->update, u_in, u_out);
  if (s == JX_OK) {
    for (int i = 0; i < np; i++) out[i] = jx_add(in[i], u_out[i]);
    for (int i = 0; i < ns; i++) out[np + i] = u_out[np + i];
    out[np + ns] = vg_out[0];
  }
  free(u_in), free(u_out);
  return s;
}

/* apply(params..., state..., grads...) -> (params..., state...): the Adam update */
static jx_status apply_fn(void *ctx, jx_array *const *in, jx_array **out) {
  const Ctx *c = ctx;
  int np = c->nparams, ns = c->nstate;
  jx_array *u_in[3 * MAX_PARAMS + 64], *u_out[MAX_PARAMS + 64];
  for (int i = 0; i < np; i++) u_in[i] = in[np + ns + i], u_in[np + ns + i] = in[i];
  for (int i = 0; i < ns; i++) u_in[np + i] = in[np + i];
  jx_status s = jx_call(c->update, u_in, u_out);
  if (s != JX_OK) return s;
  for (int i = 0; i < np; i++) out[i] = jx_add(in[i], u_out[i]);
  for (int i = 0; i < ns; i++) out[np + i] = u_out[np + i];
  return JX_OK;
}

/* The data-parallel step, run on each device of the mesh on its slice of the batch:
 * step(params..., state..., x, y) -> (params..., state..., loss) with the gradients and
 * the loss averaged over the devices (lax.pmean over "batch"). */
static jx_status dp_step_fn(void *ctx, jx_array *const *in, jx_array **out) {
  const Ctx *c = ctx;
  int np = c->nparams, ns = c->nstate;
  jx_array *vg_in[MAX_PARAMS + 2], *vg_out[MAX_PARAMS + 1], *a_in[2 * MAX_PARAMS + 64];
  for (int i = 0; i < np; i++) vg_in[i] = in[i];
  vg_in[np] = in[np + ns], vg_in[np + 1] = in[np + ns + 1];
  jx_status s = jx_call(c->vg_jit, vg_in, vg_out);
  if (s != JX_OK) return s;
  for (int i = 0; i < np + ns; i++) a_in[i] = in[i];
  for (int i = 0; i < np; i++) a_in[np + ns + i] = jx_lax_pmean(vg_out[1 + i], "batch");
  jx_array *loss = jx_lax_pmean(vg_out[0], "batch");
  if (!loss) return jx_last_status();
  s = jx_call(c->apply_jit, a_in, out);
  out[np + ns] = loss;
  return s;
}

/* --distributed: step(params..., state..., x, y) on the whole batch: this process's rows
 * [rank B/P, (rank + 1) B/P) with a mapped axis of 1 through the pmap; its results (a
 * leading axis of 1) without it. */
static jx_status mp_step_fn(void *ctx, jx_array *const *in, jx_array **out) {
  const Ctx *c = ctx;
  int np = c->nparams, ns = c->nstate, n = np + ns + 2;
  jx_array *args[MAX_PARAMS + 64 + 2], *res[MAX_PARAMS + 64 + 1];
  for (int i = 0; i < np + ns; i++) args[i] = in[i];
  for (int i = np + ns; i < n; i++) {
    int64_t b = jx_shape(in[i])[0] / c->nproc;
    jx_array *rows = jx_slice(in[i], 1, (int64_t[]){c->rank * b}, (int64_t[]){(c->rank + 1) * b}, NULL);
    args[i] = jx_expand_dims(rows, 0);
  }
  jx_status s = jx_call(c->pmapped, args, res);
  for (int o = 0; o < np + ns + 1 && s == JX_OK; o++) out[o] = jx_squeeze(res[o], 1, (int[]){0});
  return s;
}

/* correct(params..., x, y) -> number of correct predictions (int32 scalar) */
static jx_status correct_fn(void *ctx, jx_array *const *in, jx_array **out) {
  const Ctx *c = ctx;
  jx_array *pred = jx_argmax(forward(c->cnn, in, in[c->nparams]), 1, false);
  out[0] = jx_sum(jx_equal(pred, in[c->nparams + 1]), 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

/* ------------------------------------------------------------- outputs */

/* The loss (left axis, 0..max) and test accuracy (right axis, scaled to the data in
 * steps of 5%) per epoch, as lines with a marker at every epoch (so one epoch shows).
 * false if the file cannot be written. */
static bool write_svg(const char *path, int epochs, const double *loss, const double *acc) {
  FILE *f = fopen(path, "w");
  if (!f) return false;
  const int W = 640, H = 360, L = 60, R = 60, T = 30, B = 40;
  double lmax = 0, alo = 100, ahi = 0;
  for (int e = 0; e < epochs; e++) {
    lmax = loss[e] > lmax ? loss[e] : lmax;
    alo = fmin(alo, acc[e] * 100), ahi = fmax(ahi, acc[e] * 100);
  }
  alo = fmax(0, 5 * floor((alo - 1) / 5)), ahi = fmin(100, 5 * ceil((ahi + 1) / 5));
  if (ahi <= alo) ahi = alo + 5;
  fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif' font-size='12'>\n", W, H);
  fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n");
  fprintf(f, "<text x='%d' y='18' text-anchor='middle'>jaxc Fashion-MNIST: train loss (blue) and test accuracy (orange)</text>\n", W / 2);
  fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='black'/>\n", L, H - B, W - R, H - B);
  fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='black'/>\n", L, T, L, H - B);
  fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='black'/>\n", W - R, T, W - R, H - B);
  for (int k = 0; k <= 4; k++) {
    int y = H - B - k * (H - B - T) / 4;
    fprintf(f, "<text x='%d' y='%d' text-anchor='end' fill='#1f77b4'>%.2f</text>\n", L - 5, y + 4, lmax * k / 4);
    fprintf(f, "<text x='%d' y='%d' fill='#ff7f0e'>%.1f%%</text>\n", W - R + 5, y + 4, alo + (ahi - alo) * k / 4);
  }
  for (int e = 0; e < epochs; e++) {
    int x = L + (epochs > 1 ? e * (W - L - R) / (epochs - 1) : (W - L - R) / 2);
    fprintf(f, "<text x='%d' y='%d' text-anchor='middle'>%d</text>\n", x, H - B + 16, e + 1);
  }
  fprintf(f, "<text x='%d' y='%d' text-anchor='middle'>epoch</text>\n", W / 2, H - 6);
  const char *color[2] = {"#1f77b4", "#ff7f0e"};
  for (int s = 0; s < 2; s++) {
    char points[64];
    fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='2' points='", color[s]);
    for (int pass = 0; pass < 2; pass++) /* the line, then its markers */
      for (int e = 0; e < epochs; e++) {
        int x = L + (epochs > 1 ? e * (W - L - R) / (epochs - 1) : (W - L - R) / 2);
        double v = s == 0 ? (lmax > 0 ? loss[e] / lmax : 0) : (acc[e] * 100 - alo) / (ahi - alo);
        v = v < 0 ? 0 : v > 1 ? 1 : v;
        int y = (int)(H - B - v * (H - B - T));
        snprintf(points, sizeof points, "%d,%d ", x, y);
        if (pass == 0) fputs(points, f);
        else fprintf(f, "<circle cx='%d' cy='%d' r='4' fill='%s'/>\n", x, y, color[s]);
        if (pass == 0 && e == epochs - 1) fprintf(f, "'/>\n");
      }
  }
  fprintf(f, "</svg>\n");
  bool ok = !ferror(f);
  return fclose(f) == 0 && ok;
}

/* ------------------------------------------------------------------ main */

/* Strict numbers: the whole value, in [lo, hi]; else a message naming option and value. */
static bool parse_int(const char *opt, const char *v, long long lo, long long hi, long long *out) {
  char *end = NULL;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (end == v || *end || errno == ERANGE || x < lo || x > hi) {
    fprintf(stderr, "fashion_mnist: %s %s: expected a whole number from %lld to %lld\n", opt, v, lo, hi);
    return false;
  }
  *out = x;
  return true;
}

static bool parse_positive(const char *opt, const char *v, double *out) {
  char *end = NULL;
  errno = 0;
  double x = strtod(v, &end);
  if (end == v || *end || errno == ERANGE || !isfinite(x) || !(x > 0)) {
    fprintf(stderr, "fashion_mnist: %s %s: expected a positive finite number\n", opt, v);
    return false;
  }
  *out = x;
  return true;
}

#define DEFAULT_DATA "/usr/share/datasets/fashion-mnist"

static void usage(const char *argv0) {
  printf("usage: %s [options]\n"
         "  --model mlp|cnn     the model (default mlp)\n"
         "  --epochs N          passes over the training set, 1..100000 (default 10)\n"
         "  --batch-size B      images per step, at most the training set (default 128)\n"
         "  --devices N         data-parallel over N devices (cpu; cuda: NCCL), B divisible by N\n"
         "  --distributed       data-parallel over the processes of mpirun -np P (Open MPI)\n"
         "  --lr LR             Adam's peak learning rate, cosine-decayed to 0 (default 0.001)\n"
         "  --seed S            parameter init and shuffling seed (default 0)\n"
         "  --data DIR          IDX files, gzip or not (default %s)\n"
         "  --device NAME       cpu, interp or cuda (default: JAXC_DEVICE, else cpu)\n"
         "  --limit N           use the first N images of the training and of the test set\n"
         "  --plot FILE         SVG of loss and accuracy per epoch (default fashion_mnist.svg)\n"
         "  --save FILE         parameters as safetensors (default fashion_mnist.safetensors)\n"
         "  --trace FILE        Chrome/Perfetto trace of the kernels run (JAXC_TRACE)\n"
         "  --bench N           time N training steps on one batch and exit\n"
         "Relative paths are relative to the current directory.\n", argv0, DEFAULT_DATA);
}

static int parse(int argc, char **argv, Options *o) {
  *o = (Options){.model = "mlp", .data = DEFAULT_DATA, .device = NULL,
                 .plot = "fashion_mnist.svg", .save = "fashion_mnist.safetensors", .epochs = 10,
                 .batch = 128, .lr = 1e-3, .seed = 0, .devices = 1};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(argv[0]);
      exit(0);
    }
    static const char *const known[] = {"--model", "--epochs", "--batch-size", "--lr", "--seed",
                                        "--data", "--device", "--limit", "--plot", "--save",
                                        "--trace", "--bench", "--devices"};
    bool ok = false;
    for (size_t k = 0; k < sizeof known / sizeof *known; k++) ok |= !strcmp(a, known[k]);
    if (!ok && !strcmp(a, "--distributed")) {
      o->distributed = true;
      continue;
    }
    if (!ok) return fprintf(stderr, "fashion_mnist: unknown option %s (see --help)\n", a), 2;
    if (!v) return fprintf(stderr, "fashion_mnist: %s needs a value\n", a), 2;
    long long n = 0;
    if (!strcmp(a, "--model")) o->model = v;
    else if (!strcmp(a, "--epochs")) ok = parse_int(a, v, 1, 100000, &n), o->epochs = (int)n;
    else if (!strcmp(a, "--batch-size")) ok = parse_int(a, v, 1, INT32_MAX, &n), o->batch = n;
    else if (!strcmp(a, "--lr")) ok = parse_positive(a, v, &o->lr);
    else if (!strcmp(a, "--seed")) ok = parse_int(a, v, 0, LLONG_MAX, &n), o->seed = (uint64_t)n;
    else if (!strcmp(a, "--data")) o->data = v;
    else if (!strcmp(a, "--device")) o->device = v;
    else if (!strcmp(a, "--limit")) ok = parse_int(a, v, 1, INT32_MAX, &n), o->limit = n;
    else if (!strcmp(a, "--plot")) o->plot = v;
    else if (!strcmp(a, "--save")) o->save = v;
    else if (!strcmp(a, "--trace")) o->trace = v;
    else if (!strcmp(a, "--bench")) ok = parse_int(a, v, 1, 1000000, &n), o->bench = (int)n;
    else if (!strcmp(a, "--devices")) ok = parse_int(a, v, 1, 64, &n), o->devices = (int)n, o->devices_set = true;
    if (!ok) return 2;
    i++;
  }
  if (o->distributed && o->devices > 1)
    return fprintf(stderr, "fashion_mnist: --distributed runs one device per process: drop --devices\n"), 2;
  if (o->batch % o->devices != 0)
    return fprintf(stderr, "fashion_mnist: --batch-size %lld is not divisible by --devices %d\n",
                   (long long)o->batch, o->devices), 2;
  if (strcmp(o->model, "mlp") && strcmp(o->model, "cnn"))
    return fprintf(stderr, "fashion_mnist: --model %s: expected mlp or cnn\n", o->model), 2;
  return 0;
}

/* An output file's directory must exist and be writable before hours of training. */
static bool writable(const char *opt, const char *path) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash) snprintf(dir, sizeof dir, ".");
  else if (slash == dir) dir[1] = 0;
  else *slash = 0;
  if (access(dir, W_OK | X_OK) == 0) return true;
  fprintf(stderr, "fashion_mnist: %s %s: cannot write there (%s: %s)\n", opt, path, dir, strerror(errno));
  return false;
}

int main(int argc, char **argv) {
  Options o;
  int rc = parse(argc, argv, &o);
  if (rc) return rc;
  if (!writable("--plot", o.plot) || !writable("--save", o.save) || (o.trace && !writable("--trace", o.trace)))
    return 1;
  bool on_cuda = o.device && !strncmp(o.device, "cuda", 4);
  if (o.devices > 1 && !on_cuda && jx_config_cpu_devices(o.devices) != JX_OK) return fail("--devices");
  int nproc = 1, rank = 0;
  if (o.distributed) {
    if (jx_distributed_initialize() != JX_OK) return fail("--distributed");
    nproc = jx_process_count(), rank = jx_process_index();
    if (o.batch % nproc != 0)
      return fprintf(stderr, "fashion_mnist: --batch-size %lld is not divisible by the %d processes\n",
                     (long long)o.batch, nproc), 2;
    if (rank != 0) { /* process 0 reports and writes the files */
      if (!freopen("/dev/null", "w", stdout)) return fail("--distributed");
      o.plot = "/dev/null", o.save = "/dev/null";
    }
  }
  if (o.device && jx_default_device(o.device) != JX_OK) return fail("--device") + 1; /* a bad value: 2 */
  if (o.trace && setenv("JAXC_TRACE", o.trace, 1) != 0) return fail("--trace");
  bool cnn = !strcmp(o.model, "cnn");
  jx_array *xtr, *ytr, *xte, *yte;
  double t0 = now();
  if (!load_split(&o, "train", cnn, &xtr, &ytr)) return 1;
  if (!load_split(&o, "t10k", cnn, &xte, &yte)) exit(1);
  int64_t ntrain = jx_shape(xtr)[0], ntest = jx_shape(xte)[0];
  if (o.batch > ntrain)
    exit((fprintf(stderr, "fashion_mnist: --batch-size %lld: larger than the %lld training images\n",
                  (long long)o.batch, (long long)ntrain), 2));
  printf("jaxc %d.%d: Fashion-MNIST %lld train / %lld test images from %s (%.1f s), model %s, device %s\n",
         JAXC_VERSION_MAJOR, JAXC_VERSION_MINOR, (long long)ntrain, (long long)ntest, o.data, now() - t0,
         o.model, jx_device_of(xtr));

  Model m;
  if (!init_model(&m, cnn, o.seed)) exit(fail("initializing the parameters"));
  /* Adam with the learning rate decayed to 0 along a cosine over the whole run
   * (optax.cosine_decay_schedule): the last epochs refine instead of bouncing around,
   * so the final accuracy does not hinge on where the last step happened to land. */
  int64_t total_steps = ntrain / o.batch * o.epochs;
  jx_optax_schedule *lr = jx_optax_cosine_decay_schedule(o.lr, total_steps > 0 ? total_steps : 1, 0.0, 1.0);
  jx_optax_transform *adam = jx_optax_adam_sched(lr, 0.9, 0.999, 1e-8);
  jx_optax_schedule_free(lr);
  jx_optax_state *st = jx_optax_init(adam, m.nparams, m.params);
  if (!st) exit(fail("jx_optax_init"));
  int ns = 0;
  jx_array *const *st_arrays = jx_optax_state_arrays(st, &ns);
  jx_array *state[64];
  for (int i = 0; i < ns; i++) state[i] = jx_ref(st_arrays[i]);
  jx_optax_state_free(st);

  Ctx c = {.cnn = cnn, .nparams = m.nparams, .nstate = ns};
  jx_fn *loss = jx_fn_new("loss", m.nparams + 2, 1, loss_fn, &c);
  int argnums[MAX_PARAMS];
  for (int i = 0; i < m.nparams; i++) argnums[i] = i;
  c.value_and_grad = jx_value_and_grad(loss, m.nparams, argnums);
  c.update = jx_optax_update_fn(adam, m.nparams);
  jx_fn *step_raw = jx_fn_new("train_step", m.nparams + ns + 2, m.nparams + ns + 1, step_fn, &c);
  jx_fn *step = jx_jit(step_raw);
  jx_fn *vg_jit = NULL, *apply_raw = NULL, *dp_raw = NULL;
  jx_mesh *mesh = NULL;
  if (o.devices > 1 || (o.devices_set && on_cuda)) { /* the step as a shard_map over the devices (see the top) */
    vg_jit = c.vg_jit = jx_jit(c.value_and_grad);
    apply_raw = jx_fn_new("apply", 2 * m.nparams + ns, m.nparams + ns, apply_fn, &c);
    c.apply_jit = jx_jit(apply_raw);
    dp_raw = jx_fn_new("dp_step", m.nparams + ns + 2, m.nparams + ns + 1, dp_step_fn, &c);
    const char *names[64];
    char cuda_names[64][16];
    for (int i = 0; i < o.devices; i++) {
      snprintf(cuda_names[i], sizeof cuda_names[i], i ? "cuda:%d" : "cuda", i);
      names[i] = cuda_names[i];
    }
    mesh = jx_mesh_new(1, (int64_t[]){o.devices}, (const char *[]){"batch"}, on_cuda ? names : NULL);
    if (!mesh) exit(fail("--devices"));
    const char *in_specs[MAX_PARAMS + 64 + 2], *out_specs[MAX_PARAMS + 64 + 1];
    for (int i = 0; i < m.nparams + ns; i++) in_specs[i] = out_specs[i] = "";
    in_specs[m.nparams + ns] = in_specs[m.nparams + ns + 1] = "batch";
    out_specs[m.nparams + ns] = "";
    jx_fn_free(step);
    step = mesh ? jx_shard_map(dp_raw, mesh, in_specs, out_specs) : NULL;
    printf("data-parallel over %d %s devices: %lld images per device per step\n", o.devices,
           on_cuda ? "cuda" : "cpu", (long long)(o.batch / o.devices));
  }
  jx_fn *mp_raw = NULL;
  if (o.distributed) { /* the same step, pmapped over the processes (see the top) */
    c.nproc = nproc, c.rank = rank;
    vg_jit = c.vg_jit = jx_jit(c.value_and_grad);
    apply_raw = jx_fn_new("apply", 2 * m.nparams + ns, m.nparams + ns, apply_fn, &c);
    c.apply_jit = jx_jit(apply_raw);
    dp_raw = jx_fn_new("dp_step", m.nparams + ns + 2, m.nparams + ns + 1, dp_step_fn, &c);
    int in_axes[MAX_PARAMS + 64 + 2];
    for (int i = 0; i < m.nparams + ns; i++) in_axes[i] = JX_NOT_MAPPED;
    in_axes[m.nparams + ns] = in_axes[m.nparams + ns + 1] = 0;
    c.pmapped = jx_pmap(dp_raw, "batch", in_axes, NULL);
    mp_raw = jx_fn_new("mp_step", m.nparams + ns + 2, m.nparams + ns + 1, mp_step_fn, &c);
    jx_fn_free(step);
    step = mp_raw;
    mp_raw = NULL;
    printf("data-parallel over %d MPI processes: %lld images per process per step\n", nproc,
           (long long)(o.batch / nproc));
  }
  jx_fn *correct_raw = jx_fn_new("correct", m.nparams + 2, 1, correct_fn, &c);
  jx_fn *correct = jx_jit(correct_raw);
  if (!step || !correct) exit(fail("building the training step"));

  if (o.bench > 0) { /* time steps on the first batch: bench/run.py's MLP/CNN rows */
    jx_array *in[MAX_PARAMS + 64 + 2], *out[MAX_PARAMS + 64 + 1];
    jx_scope_begin();
    jx_array *xb = jx_slice(xtr, 1, (int64_t[]){0}, (int64_t[]){o.batch}, NULL);
    jx_array *yb = jx_slice(ytr, 1, (int64_t[]){0}, (int64_t[]){o.batch}, NULL);
    double best = 1e30, compile = 0;
    for (int r = 0; r <= o.bench; r++) {
      for (int i = 0; i < m.nparams; i++) in[i] = m.params[i];
      for (int i = 0; i < ns; i++) in[m.nparams + i] = state[i];
      in[m.nparams + ns] = xb, in[m.nparams + ns + 1] = yb;
      double t = now();
      if (jx_call(step, in, out) != JX_OK) exit(fail("training step"));
      jx_block_until_ready(out[m.nparams + ns]);
      t = now() - t;
      if (r == 0) compile = t;
      else if (t < best) best = t;
      for (int i = 0; i < m.nparams; i++) jx_free(m.params[i]), m.params[i] = out[i];
      for (int i = 0; i < ns; i++) jx_free(state[i]), state[i] = out[m.nparams + i];
      jx_free(out[m.nparams + ns]);
    }
    jx_scope_end(0, NULL);
    printf("fm_%s_step %.3f ms\nfm_%s_compile %.1f ms\n", o.model, best * 1e3, o.model, compile * 1e3);
    return 0;
  }
  int64_t nbatch = ntrain / o.batch, eval_batch = 500;
  double *losses = calloc((size_t)o.epochs, sizeof *losses), *accs = calloc((size_t)o.epochs, sizeof *accs);
  double train_time = 0;
  jx_array *key = jx_random_key(o.seed + 1);
  /* a progress bar redrawn in place on a terminal; none in a log file */
  bool bar_on = isatty(fileno(stderr));
  for (int e = 0; e < o.epochs; e++) {
    double te = now(), running = 0;
    jx_scope_begin();
    jx_array *keys = jx_random_split(key, 2);
    jx_free(key);
    key = jx_squeeze(jx_slice(keys, 1, (int64_t[]){0}, (int64_t[]){1}, NULL), 1, (int[]){0});
    jx_array *sub = jx_squeeze(jx_slice(keys, 1, (int64_t[]){1}, (int64_t[]){2}, NULL), 1, (int[]){0});
    jx_array *perm = jx_random_permutation(sub, NULL, ntrain, 0, false);
    jx_scope_end(2, (jx_array *[]){key, perm});
    if (!perm) exit(fail("shuffling"));
    for (int64_t b = 0; b < nbatch; b++) {
      jx_scope_begin();
      jx_array *idx = jx_slice(perm, 1, (int64_t[]){b * o.batch}, (int64_t[]){(b + 1) * o.batch}, NULL);
      jx_array *in[MAX_PARAMS + 64 + 2], *out[MAX_PARAMS + 64 + 1];
      for (int i = 0; i < m.nparams; i++) in[i] = m.params[i];
      for (int i = 0; i < ns; i++) in[m.nparams + i] = state[i];
      in[m.nparams + ns] = jx_take(xtr, idx, 0);
      in[m.nparams + ns + 1] = jx_take(ytr, idx, 0);
      if (jx_call(step, in, out) != JX_OK) exit(fail("training step"));
      double l = jx_item(out[m.nparams + ns]);
      if (!isfinite(l)) {
        if (bar_on) fprintf(stderr, "\n");
        fprintf(stderr, "fashion_mnist: the loss is %g at epoch %d, step %lld: training stopped (--lr %g "
                "too large?)\n", l, e + 1, (long long)b + 1, o.lr);
        exit(1);
      }
      running = b == 0 ? l : 0.98 * running + 0.02 * l;
      for (int i = 0; i < m.nparams; i++) jx_free(m.params[i]), m.params[i] = out[i];
      for (int i = 0; i < ns; i++) jx_free(state[i]), state[i] = out[m.nparams + i];
      jx_scope_end(m.nparams + ns, out); /* keeps params and state; frees the loss */
      if (bar_on && (b % 20 == 0 || b == nbatch - 1)) { /* at most 79 columns */
        double dt = now() - te;
        int bar = (int)(20 * (b + 1) / nbatch);
        fprintf(stderr, "\repoch %3d/%-3d [%.*s%*s] %5.1f%% %7.0f img/s loss %.4f", e + 1, o.epochs, bar,
                "====================", 20 - bar, "", 100.0 * (double)(b + 1) / (double)nbatch,
                (double)((b + 1) * o.batch) / dt, running);
      }
    }
    jx_free(perm);
    double epoch_time = now() - te;
    train_time += epoch_time;
    /* test accuracy */
    int64_t right = 0;
    for (int64_t s = 0; s < ntest; s += eval_batch) {
      int64_t end = s + eval_batch < ntest ? s + eval_batch : ntest;
      jx_scope_begin();
      jx_array *in[MAX_PARAMS + 2], *out;
      for (int i = 0; i < m.nparams; i++) in[i] = m.params[i];
      in[m.nparams] = jx_slice(xte, 1, (int64_t[]){s}, (int64_t[]){end}, NULL);
      in[m.nparams + 1] = jx_slice(yte, 1, (int64_t[]){s}, (int64_t[]){end}, NULL);
      if (jx_call(correct, in, &out) != JX_OK) exit(fail("evaluation"));
      right += (int64_t)jx_item(out);
      jx_free(out);
      jx_scope_end(0, NULL);
    }
    losses[e] = running;
    accs[e] = (double)right / (double)ntest;
    if (bar_on) fprintf(stderr, "\r%*s\r", 79, "");
    printf("epoch %2d/%d  loss %.4f  test accuracy %.2f%%  %.1f s (%.0f samples/s)\n", e + 1, o.epochs,
           running, 100 * accs[e], epoch_time, (double)(nbatch * o.batch) / epoch_time);
    fflush(stdout);
  }
  jx_free(key);

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("final test accuracy %.2f%% after %d epoch%s; %.1f s per epoch; peak memory %.0f MiB\n",
         100 * accs[o.epochs - 1], o.epochs, o.epochs == 1 ? "" : "s", train_time / o.epochs, ru.ru_maxrss / 1024.0);
  int status = 0;
  if (write_svg(o.plot, o.epochs, losses, accs)) {
    printf("wrote %s\n", o.plot);
  } else {
    fprintf(stderr, "fashion_mnist: cannot write the plot %s: %s\n", o.plot, strerror(errno));
    status = 1;
  }
  if (jx_io_save_safetensors(o.save, m.nparams, m.names, m.params) == JX_OK) {
    printf("wrote %s\n", o.save);
  } else {
    fprintf(stderr, "fashion_mnist: cannot save the parameters: %s\n", jx_last_error());
    jx_clear_error();
    status = 1;
  }
  if (o.trace) printf("wrote %s\n", o.trace); /* (JAXC_TRACE wrote it event by event) */
  free(losses), free(accs);
  for (int i = 0; i < m.nparams; i++) jx_free(m.params[i]);
  for (int i = 0; i < ns; i++) jx_free(state[i]);
  jx_free(xtr), jx_free(ytr), jx_free(xte), jx_free(yte);
  jx_fn_free(step), jx_fn_free(step_raw), jx_fn_free(correct), jx_fn_free(correct_raw), jx_fn_free(loss);
  jx_fn_free(c.value_and_grad), jx_fn_free(c.update);
  jx_fn_free(vg_jit), jx_fn_free(c.apply_jit), jx_fn_free(apply_raw), jx_fn_free(dp_raw);
  jx_mesh_free(mesh);
  jx_fn_free(c.pmapped);
  jx_optax_transform_free(adam);
  if (jx_live_arrays() != 0) return fprintf(stderr, "leaked %lld arrays\n", (long long)jx_live_arrays()), 1;
  if (o.distributed && jx_distributed_shutdown() != JX_OK) return fail("MPI_Finalize");
  return status;
}
