/* ulp_check.c -- measures the float32 and float64 transcendental functions of generated
 * cpu kernels against the correctly rounded result; prints the table in docs/api.md.
 *
 * Built by CMake (target jaxc_ulp_check) with the flags the cpu backend compiles kernels
 * with, and it includes the same prelude (src/render/prelude.h), so its loops call the
 * same vector variants (glibc's libmvec) a kernel calls. Not part of the test suite: a
 * full float32 run evaluates every one of the 2^32 inputs per one-argument function
 * (about a minute per function per core); tests/backend/test_cpu.c bounds the same
 * differences on samples with specials.
 *
 * Reference: float32 -- the interpreter's result, double libm rounded once to float
 * (src/ir/eval.c): glibc's double functions are within 1 double ulp, so this is the
 * correctly rounded float except where the exact value lies within ~2^-29 float ulp of
 * a rounding boundary. float64 -- glibc's long double (x87, 64-bit significand) libm
 * rounded to double: within ~2^-11 ulp, so a distance of 1 may be a reference artefact
 * there (float64 is sampled, not exhaustive). Error: the distance in units in the last
 * place between the result and the correctly rounded value (0 = correctly rounded; the
 * distance between adjacent floats is 1 everywhere, subnormals included). A result
 * whose class differs (NaN vs number, inf vs finite, the sign of a zero) is counted
 * separately as "special mismatches".
 *
 * Usage: jaxc_ulp_check [--threads N] [--step S] [--f64-samples N] [name ...]
 *   --step S  test every S-th float32 bit pattern (1 = all; default 1)
 *   names     only these functions (default: all). */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prelude_c.h"
#include "prelude.h"

/* ------------------------------------------------------------ the kernels */

/* One loop per function, as a generated kernel writes it: y[i] = f(x[i]). The forms
 * match emit.c's op table (libm names, which the prelude declares as vector
 * functions; exp, erf and erfc as the prelude's jx_*_f32) and the primitives' lowerings
 * (logistic as lib/nn.c builds it). */
#define LOOP1(NAME, F, EXPR)                                                             \
  static void NAME(const F *restrict x, F *restrict y, long n) {                         \
    JX_IVDEP JX_VECTOR_LOOP for (long i = 0; i < n; i++) {                                \
      F v = x[i];                                                                        \
      y[i] = (EXPR);                                                                     \
    }                                                                                    \
  }
#define LOOP2(NAME, F, EXPR)                                                             \
  static void NAME(const F *restrict x, const F *restrict z, F *restrict y, long n) {    \
    JX_IVDEP JX_VECTOR_LOOP for (long i = 0; i < n; i++) {                                \
      F v = x[i], w = z[i];                                                              \
      y[i] = (EXPR);                                                                     \
    }                                                                                    \
  }
/* logistic as lib/nn.c's sigmoid: e = exp(-|x|), (x >= 0 ? 1 : e) / (1 + e). */
#define LOGISTIC(F, EXPF) (((v) >= 0 ? (F)1 : EXPF(-fabs(v))) / ((F)1 + EXPF(-fabs(v))))

#define FUNCS(X)                                                                         \
  X(exp, jx_exp_f32(v), exp(v), expl(r), exp(d))                                         \
  X(exp2, exp2f(v), exp2(v), exp2l(r), exp2(d))                                          \
  X(expm1, expm1f(v), expm1(v), expm1l(r), expm1(d))                                     \
  X(log, logf(v), log(v), logl(r), log(d))                                               \
  X(log2, log2f(v), log2(v), log2l(r), log2(d))                                          \
  X(log1p, log1pf(v), log1p(v), log1pl(r), log1p(d))                                     \
  X(tanh, jx_tanh_f32(v), tanh(v), tanhl(r), tanh(d))                                        \
  X(logistic, LOGISTIC(float, jx_exp_f32), LOGISTIC(double, exp), 1.0L / (1.0L + expl(-r)),     \
    1.0 / (1.0 + exp(-d)))                                                               \
  X(sin, sinf(v), sin(v), sinl(r), sin(d))                                               \
  X(cos, cosf(v), cos(v), cosl(r), cos(d))                                               \
  X(tan, tanf(v), tan(v), tanl(r), tan(d))                                               \
  X(asin, asinf(v), asin(v), asinl(r), asin(d))                                          \
  X(acos, acosf(v), acos(v), acosl(r), acos(d))                                          \
  X(atan, atanf(v), atan(v), atanl(r), atan(d))                                          \
  X(sinh, sinhf(v), sinh(v), sinhl(r), sinh(d))                                          \
  X(cosh, coshf(v), cosh(v), coshl(r), cosh(d))                                          \
  X(asinh, asinhf(v), asinh(v), asinhl(r), asinh(d))                                     \
  X(acosh, acoshf(v), acosh(v), acoshl(r), acosh(d))                                     \
  X(atanh, atanhf(v), atanh(v), atanhl(r), atanh(d))                                     \
  X(erf, jx_erf_f32(v), erf(v), erfl(r), erf(d))                                            \
  X(erfc, jx_erfc_f32(v), erfc(v), erfcl(r), erfc(d))                                          \
  X(cbrt, cbrtf(v), cbrt(v), cbrtl(r), cbrt(d))                                          \
  X(rsqrt, jx_rsqrt_f32(v), jx_rsqrt_f64(v), 1.0L / sqrtl(r), 1.0 / sqrt(d))
#define FUNCS2(X)                                                                        \
  X(pow, powf(v, w), pow(v, w), powl(r, s), pow(d, e))                                   \
  X(atan2, atan2f(v, w), atan2(v, w), atan2l(r, s), atan2(d, e))

/* References are out of line so their calls stay scalar libm (the prelude's simd
 * declarations would otherwise let a loop over them call libmvec). */
#define DEF1(N, E32, E64, REF, REFD)                                                     \
  LOOP1(k32_##N, float, E32)                                                             \
  LOOP1(k64_##N, double, E64)                                                            \
  static __attribute__((noinline)) long double ref_##N(long double r) { return REF; }    \
  static __attribute__((noinline)) double refd_##N(double d) { return REFD; }
#define DEF2(N, E32, E64, REF, REFD)                                                     \
  LOOP2(k32_##N, float, E32)                                                             \
  LOOP2(k64_##N, double, E64)                                                            \
  static __attribute__((noinline)) long double ref_##N(long double r, long double s) {   \
    return REF;                                                                          \
  }                                                                                      \
  static __attribute__((noinline)) double refd_##N(double d, double e) { return REFD; }
FUNCS(DEF1)
FUNCS2(DEF2)

typedef struct Func {
  const char *name;
  void (*k32)(const float *, float *, long);
  void (*k64)(const double *, double *, long);
  long double (*ref)(long double);
  void (*k32b)(const float *, const float *, float *, long);
  void (*k64b)(const double *, const double *, double *, long);
  long double (*ref2)(long double, long double);
  double (*refd)(double);
  double (*refd2)(double, double);
} Func;
#define ROW1(N, ...) {#N, k32_##N, k64_##N, ref_##N, NULL, NULL, NULL, refd_##N, NULL},
#define ROW2(N, ...) {#N, NULL, NULL, NULL, k32_##N, k64_##N, ref_##N, NULL, refd_##N},
static const Func funcs[] = {FUNCS(ROW1) FUNCS2(ROW2)};
#define NFUNCS (int)(sizeof funcs / sizeof funcs[0])

/* ------------------------------------------------------------- distances */

static int64_t ord32(float f) {
  uint32_t u = jx_f32_bits(f);
  return u >> 31 ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
}
static int64_t ord64(double f) {
  uint64_t u = jx_f64_bits(f);
  return u >> 63 ? -(int64_t)(u & 0x7fffffffffffffffull) : (int64_t)u;
}
/* Whether got and want differ in class: NaN-ness, infinity, the sign of a zero. */
static int special32(float got, float want) {
  if (isnan(got) || isnan(want)) return isnan(got) != isnan(want);
  if (isinf(got) || isinf(want)) return got != want;
  if (got == 0 && want == 0) return signbit(got) != signbit(want);
  return 0;
}
static int special64(double got, double want) {
  if (isnan(got) || isnan(want)) return isnan(got) != isnan(want);
  if (isinf(got) || isinf(want)) return got != want;
  if (got == 0 && want == 0) return signbit(got) != signbit(want);
  return 0;
}

typedef struct Stat {
  uint64_t max_ulp, n, bad_special, inexact;
  double worst_x, worst_z;
  uint64_t flushed; /* results 0 where the correctly rounded value is subnormal */
} Stat;

static void stat_add(Stat *s, const Stat *t) {
  if (t->max_ulp > s->max_ulp || (s->n == 0 && t->n))
    s->max_ulp = t->max_ulp, s->worst_x = t->worst_x, s->worst_z = t->worst_z;
  s->n += t->n, s->bad_special += t->bad_special, s->inexact += t->inexact;
  s->flushed += t->flushed;
}

/* ------------------------------------------------------------ the sweeps */

#define CHUNK 4096

typedef struct Job {
  const Func *f;
  uint64_t lo, hi, step; /* float32 bit patterns [lo, hi) by step, or sample indices */
  int f64;
  Stat st;
} Job;

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* A float32 operand for two-argument sampling: mostly moderate magnitudes, some any. */
static float sample32(uint64_t *s) {
  uint64_t r = splitmix(s);
  if ((r & 7) == 0) return jx_bits_f32((uint32_t)(r >> 32));
  float m = (float)((r >> 40) & 0xffffff) / 16777216.0f * 8.0f;
  return (r >> 35) & 1 ? -m : m;
}
static double sample64(uint64_t *s, int wide) {
  uint64_t r = splitmix(s);
  if (wide && (r & 7) == 0) return jx_bits_f64(splitmix(s));
  double m = (double)(r >> 11) * 0x1p-53 * (wide ? 64.0 : 8.0);
  int e = (int)(splitmix(s) % 40) - 30; /* spread over 2^-30 .. 2^10 */
  m = ldexp(m, e);
  return r & 16 ? -m : m;
}

/* The float32 reference of element i: the vectorized double function (a few double
 * ulps) rounded to float, unless that double lies so near the midpoint between two
 * floats (or is not a normal float) that its error could decide the rounding -- then
 * the scalar double libm function, as the interpreter computes it. 10x faster than
 * calling scalar libm for each of the 2^32 inputs. */
static float want32(const Func *f, double quick, float x, float z) {
  float w = (float)quick;
  if (isnormal(w) && isfinite(quick)) {
    double ulp = (double)jx_bits_f32(jx_f32_bits(w) & 0x7f800000u) * 0x1p-23; /* normal w */
    double frac = fabs(quick - (double)w) / ulp; /* in [0, 0.5] */
    if (frac < 0.5 - 0x1p-20) return w;
  }
  return (float)(f->k32 ? f->refd(x) : f->refd2(x, z));
}

static void judge32(Job *j, float got, float want, float x, float z) {
  j->st.n++;
  if (special32(got, want)) {
    j->st.bad_special++;
    return;
  }
  if (isnan(want) || got == want) return;
  j->st.inexact++;
  if (got == 0 && fpclassify(want) == FP_SUBNORMAL) j->st.flushed++;
  int64_t d = ord32(got) - ord32(want);
  uint64_t u = (uint64_t)(d < 0 ? -d : d);
  if (u > j->st.max_ulp) j->st.max_ulp = u, j->st.worst_x = x, j->st.worst_z = z;
}

/* Each chunk runs twice: whole (the 16-lane AVX-512 variants of a kernel's main loop)
 * and in slices of 8 (the 8-lane AVX2 variants of its vectorized epilogue); both count. */
static void *run32(void *arg) {
  Job *j = arg;
  const Func *f = j->f;
  float x[CHUNK], z[CHUNK], y[CHUNK], y8[CHUNK];
  double xd[CHUNK], zd[CHUNK], q[CHUNK];
  uint64_t seed = j->lo * 7919 + 1;
  for (uint64_t b = j->lo; b < j->hi;) {
    long n = 0;
    for (; n < CHUNK && b < j->hi; b += j->step) {
      if (f->k32) x[n] = jx_bits_f32((uint32_t)b), z[n] = 0;
      else x[n] = sample32(&seed), z[n] = sample32(&seed);
      xd[n] = x[n], zd[n] = z[n];
      n++;
    }
    if (f->k32) {
      f->k32(x, y, n);
      for (long i = 0; i < n; i += 8) f->k32(x + i, y8 + i, n - i < 8 ? n - i : 8);
      f->k64(xd, q, n);
    } else {
      f->k32b(x, z, y, n);
      for (long i = 0; i < n; i += 8) f->k32b(x + i, z + i, y8 + i, n - i < 8 ? n - i : 8);
      f->k64b(xd, zd, q, n);
    }
    /* Vectorizable pass: results equal to a trustworthy rounded quick reference. */
    int32_t ok[CHUNK];
    for (long i = 0; i < n; i++) {
      double a = fabs(q[i]);
      float w = (float)q[i];
      uint32_t wb = jx_f32_bits(w), e = wb & 0x7f800000u;
      double ulp = (double)jx_bits_f32(e) * 0x1p-23;
      double frac = fabs(q[i] - (double)w) / ulp;
      /* trustworthy: a normal float not near a midpoint, or a double far past either
       * end of the float range, exactly 0, or NaN */
      int normal = (e != 0) & (e != 0x7f800000u) & (frac < 0.5 - 0x1p-20);
      int sure = normal | (a > 0x1p129) | (a < 0x1p-151) | (q[i] != q[i]);
      int same = (jx_f32_bits(y[i]) == wb) | ((y[i] != y[i]) & (w != w));
      int same8 = (jx_f32_bits(y8[i]) == wb) | ((y8[i] != y8[i]) & (w != w));
      ok[i] = sure & same & same8;
    }
    j->st.n += 2 * (uint64_t)n;
    for (long i = 0; i < n; i++) {
      if (ok[i]) continue;
      j->st.n -= 2;
      float want = want32(f, q[i], x[i], z[i]);
      judge32(j, y[i], want, x[i], z[i]);
      judge32(j, y8[i], want, x[i], z[i]);
    }
  }
  return NULL;
}

static void *run64(void *arg) {
  Job *j = arg;
  double x[CHUNK], z[CHUNK], y[CHUNK];
  uint64_t seed = j->lo * 104729 + 3;
  for (uint64_t b = j->lo; b < j->hi;) {
    long n = 0;
    for (; n < CHUNK && b < j->hi; b++) {
      x[n] = sample64(&seed, (b & 15) == 0);
      if (strcmp(j->f->name, "acosh") == 0) x[n] = 1 + fabs(x[n]);
      z[n] = sample64(&seed, (b & 15) == 1);
      n++;
    }
    if (j->f->k64) j->f->k64(x, y, n);
    else j->f->k64b(x, z, y, n);
    for (long i = 0; i < n; i++) {
      long double r = j->f->k64 ? j->f->ref(x[i]) : j->f->ref2(x[i], z[i]);
      double want = (double)r;
      j->st.n++;
      if (special64(y[i], want)) {
        j->st.bad_special++;
        continue;
      }
      if (isnan(want) || y[i] == want) continue;
      j->st.inexact++;
      if (y[i] == 0 && fpclassify(want) == FP_SUBNORMAL) j->st.flushed++;
      int64_t d = ord64(y[i]) - ord64(want);
      uint64_t u = (uint64_t)(d < 0 ? -d : d);
      if (u > j->st.max_ulp) j->st.max_ulp = u, j->st.worst_x = x[i], j->st.worst_z = z[i];
    }
  }
  return NULL;
}

static Stat sweep(const Func *f, int f64, int threads, uint64_t total, uint64_t step) {
  Job *jobs = calloc((size_t)threads, sizeof *jobs);
  pthread_t *tid = calloc((size_t)threads, sizeof *tid);
  uint64_t per = (total / step + (uint64_t)threads - 1) / (uint64_t)threads * step;
  for (int t = 0; t < threads; t++) {
    jobs[t] = (Job){.f = f, .lo = per * (uint64_t)t, .step = f64 ? 1 : step, .f64 = f64};
    jobs[t].hi = jobs[t].lo + per > total ? total : jobs[t].lo + per;
    if (jobs[t].lo > total) jobs[t].lo = total;
    pthread_create(&tid[t], NULL, f64 ? run64 : run32, &jobs[t]);
  }
  Stat s = {0};
  for (int t = 0; t < threads; t++) {
    pthread_join(tid[t], NULL);
    stat_add(&s, &jobs[t].st);
  }
  free(jobs);
  free(tid);
  return s;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Single-thread throughput in ns per element over 2^16 moderate float32 inputs. */
static double speed32(const Func *f) {
  enum { N = 1 << 16 };
  static float x[N], z[N], y[N];
  for (int i = 0; i < N; i++) x[i] = (float)(i % 1000) * 0.0009f + 0.05f, z[i] = 0.7f;
  double best = 1e9;
  for (int r = 0; r < 20; r++) {
    double t = now();
    if (f->k32) f->k32(x, y, N);
    else f->k32b(x, z, y, N);
    t = now() - t;
    if (t < best) best = t;
  }
  return best / N * 1e9;
}

int main(int argc, char **argv) {
  int threads = 2, nsel = 0;
  uint64_t step = 1, n64 = 1 << 24;
  const char *sel[64];
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--step") && i + 1 < argc) step = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--f64-samples") && i + 1 < argc)
      n64 = strtoull(argv[++i], NULL, 0);
    else if (nsel < 64) sel[nsel++] = argv[i];
  }
  if (threads < 1) threads = 1;
  if (step < 1) step = 1;
#ifdef JX_LIBMVEC
  printf("vector math: glibc libmvec\n");
#else
  printf("vector math: scalar libm (no libmvec)\n");
#endif
  printf("float32: %s inputs (step %llu); two-argument: %llu samples; float64: %llu "
         "samples\n\n",
         step == 1 ? "all 2^32" : "every step-th", (unsigned long long)step,
         (unsigned long long)((1ull << 32) / step), (unsigned long long)n64);
  printf("| function | f32 max ulp | f32 worst x | f32 special mismatches | f32 flushed "
         "subnormals | f32 ns/elem (1 thread) | f64 max ulp | f64 special mismatches |\n");
  printf("|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < NFUNCS; i++) {
    const Func *f = &funcs[i];
    int want = nsel == 0;
    for (int k = 0; k < nsel; k++) want |= !strcmp(sel[k], f->name);
    if (!want) continue;
    Stat s32 = sweep(f, 0, threads, 1ull << 32, step);
    Stat s64 = sweep(f, 1, threads, n64, 1);
    char worst[64];
    if (f->k32) snprintf(worst, sizeof worst, "%.9g", s32.worst_x);
    else snprintf(worst, sizeof worst, "%.9g, %.9g", s32.worst_x, s32.worst_z);
    printf("| %s | %llu | %s | %llu | %llu | %.2f | %llu | %llu |\n", f->name,
           (unsigned long long)s32.max_ulp, worst, (unsigned long long)s32.bad_special,
           (unsigned long long)s32.flushed, speed32(f), (unsigned long long)s64.max_ulp,
           (unsigned long long)s64.bad_special);
    fflush(stdout);
  }
  return 0;
}
