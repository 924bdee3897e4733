/* test_fft_engine.c -- the FFT routine on raw buffers (src/backend/fft.c on pocketfft):
 * numpy.fft goldens (tools/golden_fft.py: FFT, IFFT, RFFT, IRFFT over 1-3 axes; lengths
 * 1, 2, primes, powers of two, mixed radices; empty batches) in float64 and float32, on
 * the calling thread and split over the cpu pool; a direct DFT for n = 1000 and 4096;
 * the prime 1,000,003 (Bluestein) against direct sums at sample bins and a round trip. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu.h"
#include "backend/fft.h"
#include "backend/pocketfft.h"
#include "golden.h"
#include "test.h"

static GoldenCase *cases;
static int ncases;

static Routine fft_routine(int type, jx_dtype prec, int64_t outer, int rank, const int64_t *lens) {
  Routine r = {.op = ROUTINE_FFT, .nin = 1, .nout = 1, .dtype = prec, .outer = outer,
               .flags = (unsigned)type, .fft_rank = rank};
  for (int d = 0; d < rank; d++) r.fft_lens[d] = lens[d];
  return r;
}

/* Runs r on doubles `x` (converted to r's precision) into doubles; NULL on failure. */
static double *run(const Routine *r, const double *x, int64_t nx, bool threaded) {
  bool f32 = r->dtype == JX_FLOAT32;
  int64_t ny = fft_out_numel(r);
  void *in = malloc((size_t)(nx ? nx : 1) * 8), *out = calloc((size_t)(ny ? ny : 1), 8);
  for (int64_t i = 0; i < nx; i++) {
    if (f32) ((float *)in)[i] = (float)x[i];
    else ((double *)in)[i] = x[i];
  }
  jx_status s = fft_run(r, in, out, threaded ? pool_run : NULL, threaded ? 4 : 1);
  double *y = NULL;
  if (s == JX_OK) {
    y = malloc((size_t)(ny ? ny : 1) * sizeof *y);
    for (int64_t i = 0; i < ny; i++) y[i] = f32 ? ((float *)out)[i] : ((double *)out)[i];
  }
  free(in), free(out);
  return y;
}

/* max |got - want| <= tol * max(1, max |want|). */
static void check_close(const char *what, const double *got, const double *want, int64_t n, double tol) {
  double big = 1, err = 0;
  int64_t at = -1;
  for (int64_t i = 0; i < n; i++) big = fmax(big, fabs(want[i]));
  for (int64_t i = 0; i < n; i++)
    if (!(fabs(got[i] - want[i]) <= err)) err = fabs(got[i] - want[i]), at = i;
  CHECK_MSG(err <= tol * big, "%s: max error %.3g at %lld (got %.17g, want %.17g; scale %.3g)", what, err,
            (long long)at, at >= 0 ? got[at] : 0, at >= 0 ? want[at] : 0, big);
}

static void test_golden(void) {
  CHECK(cases != NULL);
  for (int c = 0; c < ncases; c++) {
    const GoldenCase *g = &cases[c];
    int type = (int)golden_param_int(g, "type", -1);
    int64_t outer = golden_param_int(g, "outer", -1), lens[FFT_MAX_RANK];
    int rank = 0;
    for (const char *p = golden_param(g, "lens"); p && *p && rank < FFT_MAX_RANK;) {
      char *end;
      lens[rank++] = strtoll(p, &end, 10);
      p = *end == ',' ? end + 1 : end;
    }
    for (int prec = 0; prec < 2; prec++)
      for (int threaded = 0; threaded < 2; threaded++) {
        Routine r = fft_routine(type, prec ? JX_FLOAT32 : JX_FLOAT64, outer, rank, lens);
        CHECK_EQ_INT(fft_out_numel(&r), g->out[0].size);
        double *y = run(&r, g->in[0].f, g->in[0].size, threaded);
        char what[200];
        snprintf(what, sizeof what, "%s %s%s", g->name, prec ? "float32" : "float64", threaded ? " threaded" : "");
        CHECK_MSG(y != NULL, "%s: %s", what, jx_last_error());
        if (y) check_close(what, y, g->out[0].f, g->out[0].size, prec ? 4e-6 : 1e-13);
        free(y);
        jx_clear_error();
      }
  }
}

/* Deterministic inputs in [-1, 1). */
static double *noise(int64_t n, unsigned seed) {
  double *x = malloc((size_t)n * sizeof *x);
  uint64_t s = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (int64_t i = 0; i < n; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    x[i] = (double)(s >> 11) / 4503599627370496.0 - 1.0;
  }
  return x;
}

/* The twiddles exp(-2 pi i j / n), j < n, in long double (the reference's). */
static long double *twiddles(int64_t n) {
  long double *w = malloc((size_t)(2 * n) * sizeof *w);
  for (int64_t j = 0; j < n; j++) {
    long double a = -2.0L * 3.14159265358979323846264338327950288L * (long double)j / (long double)n;
    w[2 * j] = cosl(a), w[2 * j + 1] = sinl(a);
  }
  return w;
}

/* Bin k of the forward DFT of n complex pairs x, summed in long double with the twiddle
 * index reduced exactly (j * k mod n). */
static void dft_bin(const double *x, const long double *w, int64_t n, int64_t k, double *re, double *im) {
  long double sr = 0, si = 0;
  for (int64_t j = 0, jk = 0; j < n; j++, jk = jk + k >= n ? jk + k - n : jk + k) {
    long double c = w[2 * jk], s = w[2 * jk + 1];
    sr += x[2 * j] * c - x[2 * j + 1] * s;
    si += x[2 * j] * s + x[2 * j + 1] * c;
  }
  *re = (double)sr, *im = (double)si;
}

static void test_direct_dft(void) {
  for (int t = 0; t < 2; t++) {
    int64_t n = t ? 4096 : 1000;
    double *x = noise(2 * n, 3), *want = malloc((size_t)(2 * n) * sizeof *want);
    long double *w = twiddles(n);
    for (int64_t k = 0; k < n; k++) dft_bin(x, w, n, k, &want[2 * k], &want[2 * k + 1]);
    free(w);
    for (int prec = 0; prec < 2; prec++) {
      Routine r = fft_routine(FFT_TYPE_FFT, prec ? JX_FLOAT32 : JX_FLOAT64, 1, 1, &n);
      double *y = run(&r, x, 2 * n, true);
      CHECK(y != NULL);
      if (y) check_close(prec ? "direct dft float32" : "direct dft float64", y, want, 2 * n, prec ? 4e-6 : 1e-13);
      free(y);
    }
    free(x), free(want);
  }
}

/* The prime 1,000,003 (Bluestein's algorithm on a four-step transform): sample bins against
 * direct sums, and IFFT(FFT(x)) == x; RFFT's bins equal FFT's of the real input. */
static void test_large_prime(void) {
  int64_t n = 1000003;
  double *x = noise(2 * n, 7);
  int64_t bins[] = {0, 1, 2, 499999, 500001, 777777, n - 1};
  enum { NB = sizeof bins / sizeof bins[0] };
  double wre[NB], wim[NB];
  long double *w = twiddles(n);
  for (int i = 0; i < NB; i++) dft_bin(x, w, n, bins[i], &wre[i], &wim[i]);
  free(w);
  for (int prec = 0; prec < 2; prec++) {
    jx_dtype d = prec ? JX_FLOAT32 : JX_FLOAT64;
    double tol = prec ? 2e-4 : 1e-10; /* of sqrt(n) ~ 577, the bins' size */
    Routine f = fft_routine(FFT_TYPE_FFT, d, 1, 1, &n), b = fft_routine(FFT_TYPE_IFFT, d, 1, 1, &n);
    double *y = run(&f, x, 2 * n, true);
    CHECK(y != NULL);
    if (!y) continue;
    for (int i = 0; i < NB; i++) {
      double re = wre[i], im = wim[i];
      CHECK_MSG(fabs(y[2 * bins[i]] - re) <= tol * 577 && fabs(y[2 * bins[i] + 1] - im) <= tol * 577,
                "prime bin %lld (%s): got %.10g%+.10gi want %.10g%+.10gi", (long long)bins[i],
                jx_dtype_name(d), y[2 * bins[i]], y[2 * bins[i] + 1], re, im);
    }
    double *z = run(&b, y, 2 * n, true);
    if (z) check_close("prime round trip", z, x, 2 * n, prec ? 2e-5 : 1e-12);
    free(y), free(z);
  }
  free(x);
}

/* A 2-D transform whose outer size is 1 splits over its other axis; 3-D and batched
 * RFFT/IRFFT round trips; a power of two 2^20. */
static void test_round_trips(void) {
  int64_t l2[2] = {64, 48}, l3[3] = {6, 10, 9}, big = 1 << 20;
  struct { int rank; const int64_t *lens; int64_t outer; } shapes[] = {{2, l2, 1}, {3, l3, 3}, {1, &big, 1}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int rank = shapes[s].rank;
    int64_t outer = shapes[s].outer, total = outer;
    for (int d = 0; d < rank; d++) total *= shapes[s].lens[d];
    double *x = noise(total, 11);
    Routine f = fft_routine(FFT_TYPE_RFFT, JX_FLOAT64, outer, rank, shapes[s].lens);
    Routine b = fft_routine(FFT_TYPE_IRFFT, JX_FLOAT64, outer, rank, shapes[s].lens);
    double *y = run(&f, x, total, true), *z = y ? run(&b, y, fft_out_numel(&f), true) : NULL;
    double *y1 = run(&f, x, total, false);
    CHECK(z != NULL && y1 != NULL);
    if (z) check_close("rfft/irfft round trip", z, x, total, 1e-12);
    if (y && y1) check_close("threaded == one thread", y, y1, fft_out_numel(&f), 1e-15);
    free(x), free(y), free(z), free(y1);
  }
}

/* The long path (fft_pocketfft_long: four-step, Bluestein on four-step, real transforms
 * through a half-length complex one) against pocketfft's own single-line pass, for each
 * kind, both precisions, on one thread and on four: powers of two, odd and even mixed
 * radices, primes, twice a prime (a Bluestein half), a lopsided 16 * prime; C2R inputs
 * are random, not Hermitian (both sides ignore the imaginary parts of bins 0 and n/2). */
static void test_long_vs_pass(void) {
  static const int64_t lens[] = {16384, 32768, 255255, 39366, 16411, 2 * 40009, 16 * 2053, 1 << 20};
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
    for (int kind = 0; kind < 3; kind++)
      for (int prec = 0; prec < 2; prec++) {
        int64_t n = lens[li], half = n / 2 + 1;
        if (!fft_pocketfft_long_ok(kind, n)) {
          CHECK(kind != FFT_PASS_C2C); /* odd real lengths stay on the pass path */
          continue;
        }
        if (n == 1 << 20 && prec == 0) continue; /* float64 2^20 is covered by the round trips */
        bool f32 = prec == 1;
        int64_t item = f32 ? 4 : 8, nin = kind == FFT_PASS_C2C ? 2 * n : kind == FFT_PASS_R2C ? n : 2 * half;
        int64_t nout = kind == FFT_PASS_C2C ? 2 * n : kind == FFT_PASS_R2C ? 2 * half : n;
        double *x = noise(nin, 17 + (unsigned)li);
        char *in = malloc((size_t)(nin * item)), *want = malloc((size_t)(nout * item));
        for (int64_t i = 0; i < nin; i++) {
          if (f32) ((float *)in)[i] = (float)x[i];
          else ((double *)in)[i] = x[i];
        }
        int forward = kind != FFT_PASS_C2R;
        double fct = forward ? 1.0 : 1.0 / (double)n;
        int64_t shape[1] = {n}, sin[1] = {kind == FFT_PASS_R2C ? item : 2 * item};
        int64_t sout[1] = {kind == FFT_PASS_C2R ? item : 2 * item};
        char err[160];
        CHECK_EQ_INT(fft_pocketfft_pass(kind, !f32, forward, 1, shape, sin, sout, 0, in, want, fct, err, sizeof err), 0);
        double *wd = malloc((size_t)nout * sizeof *wd);
        for (int64_t i = 0; i < nout; i++) wd[i] = f32 ? ((float *)want)[i] : ((double *)want)[i];
        for (int threaded = 0; threaded < 2; threaded++) {
          char *got = malloc((size_t)(nout * item));
          int rc = fft_pocketfft_long(kind, !f32, forward, n, in, got, fct, threaded ? pool_run : NULL,
                                      threaded ? 4 : 1, err, sizeof err);
          CHECK_MSG(rc == 0, "long kind %d n %lld: %s", kind, (long long)n, err);
          double *gd = malloc((size_t)nout * sizeof *gd);
          for (int64_t i = 0; i < nout; i++) gd[i] = f32 ? ((float *)got)[i] : ((double *)got)[i];
          char what[120];
          snprintf(what, sizeof what, "long kind %d n %lld %s%s", kind, (long long)n, f32 ? "float32" : "float64",
                   threaded ? " threaded" : "");
          /* errors grow like log n; the scale is the largest output (~sqrt n for C2C/R2C) */
          if (rc == 0) check_close(what, gd, wd, nout, f32 ? 2e-6 : 5e-15);
          free(got), free(gd);
        }
        free(x), free(in), free(want), free(wd);
      }
  char err[160];
  double buf[4] = {0};
  CHECK(!fft_pocketfft_long_ok(FFT_PASS_C2C, 1000) && !fft_pocketfft_long_ok(FFT_PASS_R2C, 32769));
  CHECK(fft_pocketfft_long(FFT_PASS_C2C, 1, 1, 8, buf, buf, 1.0, NULL, 1, err, sizeof err) == 2);
  CHECK(strstr(err, "no long transform") != NULL);
}

static void test_bad(void) {
  int64_t n = 8;
  Routine r = fft_routine(FFT_TYPE_FFT, JX_INT32, 1, 1, &n);
  double x[16] = {0};
  CHECK(run(&r, x, 16, false) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "float32 or float64");
  r = fft_routine(7, JX_FLOAT32, 1, 1, &n);
  CHECK(run(&r, x, 16, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "fft_type 7");
}

int main(void) {
  cases = golden_load("fft_engine.txt", &ncases);
  pool_configure(4);
  /* every case for each instruction set pocketfft.cc is built for (baseline, AVX2+FMA) */
  int best = fft_pocketfft_isa(-1);
  for (int isa = 0; isa <= best; isa++) {
    CHECK_EQ_INT(fft_pocketfft_isa(isa), isa);
    TEST_RUN(test_golden);
  }
  /* the routine runs on the host whatever the device: the long cases once, on cpu */
  const char *dev = getenv("JAXC_DEVICE");
  if (dev && strcmp(dev, "cpu") != 0) {
    golden_free(cases, ncases);
    return test_finish();
  }
  TEST_RUN(test_direct_dft);
  TEST_RUN(test_large_prime);
  TEST_RUN(test_round_trips);
  for (int isa = 0; isa <= best; isa++) {
    fft_pocketfft_isa(isa);
    TEST_RUN(test_long_vs_pass);
  }
  TEST_RUN(test_bad);
  golden_free(cases, ncases);
  return test_finish();
}
