/* test_bert.c -- the sentence-embedding model of examples/embed (bert.c) against
 * sentence-transformers' encode (tests/golden/embed_*, by tools/golden_embed.py) on 128
 * sentences: cosine similarity >= 0.99999 and max |difference| <= 1e-4 per vector; the
 * same vector alone and inside a padded batch; bad model folders (missing, truncated
 * or misshapen weights, a vocabulary without [UNK]) reported by file and tensor. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bert.h"
#include "model.h"
#include "test.h"

static Bert *load_model(void) {
  const char *dir = test_model_dir();
  if (!dir) return NULL;
  char err[1024];
  Bert *b = bert_load(dir, err, sizeof err);
  CHECK_MSG(b, "bert_load: %s", err);
  return b;
}

static bool on_interp(void) {
  const char *d = getenv("JAXC_DEVICE");
  return d && strcmp(d, "interp") == 0;
}

static void test_goldens(void) {
  Bert *b = load_model();
  if (!b) return;
  size_t len;
  char *text = test_read_file(JAXC_GOLDEN_DIR "/embed_sentences.txt", &len);
  jx_array *gold = jx_io_load_npy(JAXC_GOLDEN_DIR "/embed_minilm.npy");
  CHECK(text && gold);
  if (!text || !gold) goto done;
  const char *lines[128];
  int n = 0;
  for (char *p = text, *nl; n < 128 && (nl = strchr(p, '\n')); p = nl + 1) {
    *nl = 0;
    lines[n++] = p;
  }
  CHECK_EQ_INT(n, 128);
  CHECK_EQ_INT(jx_shape(gold)[0], 128);
  CHECK_EQ_INT(jx_shape(gold)[1], 384);
  /* The reference interpreter is slow: it checks the first 12 sentences. */
  int m = on_interp() ? 12 : n;
  float *want = malloc(128 * 384 * sizeof *want), *got = malloc(128 * 384 * sizeof *got);
  jx_read(gold, want, 128 * 384 * sizeof *want);
  int ntrunc = 0;
  CHECK_EQ_INT(bert_encode(b, m, lines, 32, 0, got, &ntrunc, NULL, NULL), JX_OK);
  CHECK_EQ_INT(ntrunc, m == n); /* sentence 29 has 400+ tokens */
  double worst_cos = 1, worst_diff = 0;
  for (int i = 0; i < m; i++) {
    double dot = 0, na = 0, nb = 0, diff = 0;
    for (int k = 0; k < 384; k++) {
      double x = got[i * 384 + k], y = want[i * 384 + k];
      dot += x * y, na += x * x, nb += y * y;
      if (fabs(x - y) > diff) diff = fabs(x - y);
    }
    double cos = dot / sqrt(na * nb);
    CHECK_MSG(cos >= 0.99999 && diff <= 1e-4, "sentence %d \"%.60s\": cosine %.8f, max diff %.3g",
              i, lines[i], cos, diff);
    if (cos < worst_cos) worst_cos = cos;
    if (diff > worst_diff) worst_diff = diff;
  }
  printf("%d sentences: worst cosine %.9f, worst max abs diff %.3g\n", m, worst_cos, worst_diff);
  free(want);
  free(got);
done:
  free(text);
  jx_free(gold);
  bert_free(b);
}

/* One sentence alone (L = 16) equals itself padded inside a batch (L = 32). */
static void test_padding_invariance(void) {
  Bert *b = load_model();
  if (!b) return;
  const char *texts[2] = {"A man is eating food.",
                          "A much longer sentence, with enough words in it to need a second "
                          "bucket of sixteen tokens."};
  float alone[384], both[768];
  CHECK_EQ_INT(bert_encode(b, 1, texts, 1, 0, alone, NULL, NULL, NULL), JX_OK);
  CHECK_EQ_INT(bert_encode(b, 2, texts, 2, 0, both, NULL, NULL, NULL), JX_OK);
  double diff = 0, norm = 0;
  for (int k = 0; k < 384; k++) {
    if (fabs(alone[k] - both[k]) > diff) diff = fabs(alone[k] - both[k]);
    norm += (double)alone[k] * alone[k];
  }
  CHECK_MSG(diff <= 1e-5, "padded vs alone: max diff %.3g", diff);
  CHECK_NEAR(norm, 1.0, 1e-5);
  bert_free(b);
}

/* A scratch model folder: links to the real config and tokenizer, plus `weights`
 * (NULL: none) saved as model.safetensors. Returns the folder (static). */
static const char *scratch_dir(const char *tag, bool with_vocab_only) {
  static char dir[512];
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/jaxc_bert_%d_%s", tmp && *tmp ? tmp : "/tmp", (int)getpid(), tag);
  mkdir(dir, 0755);
  const char *src = test_model_dir();
  char a[4200], l[4200];
  snprintf(a, sizeof a, "%s/config.json", src);
  snprintf(l, sizeof l, "%s/config.json", dir);
  if (symlink(a, l) != 0) CHECK_MSG(0, "symlink %s", l);
  if (with_vocab_only) {
    snprintf(l, sizeof l, "%s/vocab.txt", dir);
    FILE *f = fopen(l, "w");
    fputs("[PAD]\n[CLS]\n[SEP]\nhello\n", f); /* no [UNK] */
    fclose(f);
  } else {
    snprintf(a, sizeof a, "%s/tokenizer.json", src);
    snprintf(l, sizeof l, "%s/tokenizer.json", dir);
    if (symlink(a, l) != 0) CHECK_MSG(0, "symlink %s", l);
  }
  return dir;
}

static void remove_dir(const char *dir) {
  const char *names[] = {"config.json", "tokenizer.json", "vocab.txt", "model.safetensors"};
  char p[600];
  for (int i = 0; i < 4; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    unlink(p);
  }
  rmdir(dir);
}

static void expect_load_error(const char *dir, const char *needle) {
  char err[1024] = "";
  Bert *b = bert_load(dir, err, sizeof err);
  CHECK_MSG(!b, "bert_load(%s) should fail", dir);
  CHECK_MSG(strstr(err, needle), "error \"%s\" lacks \"%s\"", err, needle);
  bert_free(b);
  CHECK_EQ_INT(jx_last_status(), JX_OK); /* reported through err, not left pending */
}

static void test_bad_folders(void) {
  if (!test_model_dir()) return;
  expect_load_error("/nonexistent", "/nonexistent/config.json: cannot be read");
  /* No model.safetensors. */
  const char *dir = scratch_dir("noweights", false);
  expect_load_error(dir, "model.safetensors");
  /* A truncated model.safetensors. */
  char p[600];
  snprintf(p, sizeof p, "%s/model.safetensors", dir);
  FILE *f = fopen(p, "wb");
  fputs("\x40\x00\x00\x00\x00\x00\x00\x00{\"a\":", f);
  fclose(f);
  expect_load_error(dir, "model.safetensors");
  /* A word-embedding table of the wrong shape. */
  jx_array *small = jx_zeros(2, (int64_t[]){10, 384}, JX_FLOAT32);
  const char *name = "embeddings.word_embeddings.weight";
  CHECK_EQ_INT(jx_io_save_safetensors(p, 1, &name, &small), JX_OK);
  expect_load_error(dir, "tensor \"embeddings.word_embeddings.weight\" has shape (10, 384), "
                         "expected (30522, 384)");
  /* A missing tensor. */
  name = "embeddings.position_embeddings.weight";
  jx_array *pos = jx_zeros(2, (int64_t[]){512, 384}, JX_FLOAT32);
  CHECK_EQ_INT(jx_io_save_safetensors(p, 1, &name, &pos), JX_OK);
  expect_load_error(dir, "missing tensor \"embeddings.word_embeddings.weight\"");
  jx_free(small);
  jx_free(pos);
  remove_dir(dir);
  /* A vocabulary without [UNK]. */
  dir = scratch_dir("nounk", true);
  expect_load_error(dir, "no unknown token \"[UNK]\"");
  remove_dir(dir);
}

int main(void) {
  TEST_RUN(test_goldens);
  TEST_RUN(test_padding_invariance);
  TEST_RUN(test_bad_folders);
  return test_finish();
}
