/* test_tokenizer.c -- the WordPiece tokenizer (src/lib/tokenizer.c, src/io/
 * tokenizer_files.c) against Hugging Face `tokenizers`: token ids of 1,100 varied lines
 * (tests/golden/tokenizer_*.txt, by tools/golden_tokenizer.py) from all-MiniLM-L6-v2's
 * tokenizer.json and from its vocab.txt; truncation, batches with padding, and bad
 * files (missing, corrupt, no [UNK], unsupported model). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "test.h"

/* Splits a file into lines (pointers into text, which is modified). */
static int split_lines(char *text, size_t len, char ***lines, size_t **lens) {
  int n = 0;
  for (size_t i = 0; i < len; i++) n += text[i] == '\n';
  *lines = malloc((size_t)(n + 1) * sizeof **lines);
  *lens = malloc((size_t)(n + 1) * sizeof **lens);
  size_t start = 0;
  int k = 0;
  for (size_t i = 0; i < len; i++)
    if (text[i] == '\n') {
      (*lines)[k] = text + start;
      (*lens)[k++] = i - start;
      text[i] = 0;
      start = i + 1;
    }
  return k;
}

static void check_goldens(const char *which) {
  const char *dir = test_model_dir();
  if (!dir) return;
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, which);
  jx_tokenizer *tok = jx_tokenizer_load(path);
  CHECK_MSG(tok, "loading %s: %s", path, jx_last_error());
  if (!tok) return;
  CHECK_EQ_INT(jx_tokenizer_vocab_size(tok), 30522);
  size_t ilen, glen;
  char *input = test_read_file(JAXC_GOLDEN_DIR "/tokenizer_input.txt", &ilen);
  char *gold = test_read_file(JAXC_GOLDEN_DIR "/tokenizer_ids.txt", &glen);
  CHECK(input && gold);
  if (!input || !gold) goto done;
  char **in_lines, **gold_lines;
  size_t *in_lens, *gold_lens;
  int nin = split_lines(input, ilen, &in_lines, &in_lens);
  int ngold = split_lines(gold, glen, &gold_lines, &gold_lens);
  CHECK_EQ_INT(nin, 1100);
  CHECK_EQ_INT(ngold, nin + 1); /* a comment line first */
  int bad = 0;
  int32_t ids[4096];
  for (int i = 0; i < nin && i + 1 < ngold; i++) {
    int64_t full;
    int64_t n = jx_tokenizer_encode(tok, in_lines[i], in_lens[i], 4096, ids, &full);
    char got[65536];
    size_t p = 0;
    for (int64_t k = 0; k < n && p < sizeof got - 16; k++)
      p += (size_t)snprintf(got + p, sizeof got - p, k ? " %d" : "%d", (int)ids[k]);
    got[p] = 0;
    CHECK_EQ_INT(full, n);
    if (strcmp(got, gold_lines[i + 1]) != 0 && bad++ < 5)
      test_fail(__FILE__, __LINE__, "%s, line %d \"%.80s\":\n  got      %.300s\n  expected %.300s",
                which, i + 1, in_lines[i], got, gold_lines[i + 1]);
  }
  CHECK_MSG(bad == 0, "%s: %d of %d lines differ from HF tokenizers", which, bad, nin);
  free(in_lines);
  free(in_lens);
  free(gold_lines);
  free(gold_lens);
done:
  free(input);
  free(gold);
  jx_tokenizer_free(tok);
}

static void test_goldens_tokenizer_json(void) { check_goldens("tokenizer.json"); }
static void test_goldens_vocab_txt(void) { check_goldens("vocab.txt"); }

static jx_tokenizer *model_tokenizer(void) {
  const char *dir = test_model_dir();
  if (!dir) return NULL;
  jx_tokenizer *tok = jx_tokenizer_load(dir); /* the folder: tokenizer.json */
  CHECK_MSG(tok, "%s", jx_last_error());
  return tok;
}

static void test_vocabulary(void) {
  jx_tokenizer *tok = model_tokenizer();
  if (!tok) return;
  CHECK_EQ_INT(jx_tokenizer_token_to_id(tok, "[CLS]"), 101);
  CHECK_EQ_INT(jx_tokenizer_token_to_id(tok, "[SEP]"), 102);
  CHECK_EQ_INT(jx_tokenizer_token_to_id(tok, "[UNK]"), 100);
  CHECK_EQ_INT(jx_tokenizer_token_to_id(tok, "##ing"), 2075);
  CHECK_EQ_INT(jx_tokenizer_token_to_id(tok, "no-such-token"), -1);
  CHECK_STR(jx_tokenizer_id_to_token(tok, 1996), "the");
  CHECK(jx_tokenizer_id_to_token(tok, 30522) == NULL);
  CHECK(jx_tokenizer_id_to_token(tok, -1) == NULL);
  jx_tokenizer_free(tok);
}

static void test_truncation(void) {
  jx_tokenizer *tok = model_tokenizer();
  if (!tok) return;
  const char *text = "one two three four five six seven eight nine ten";
  int32_t ids[16];
  int64_t full;
  int64_t n = jx_tokenizer_encode(tok, text, strlen(text), 6, ids, &full);
  CHECK_EQ_INT(n, 6);
  CHECK_EQ_INT(full, 12);
  CHECK_EQ_INT(ids[0], 101);
  CHECK_EQ_INT(ids[1], jx_tokenizer_token_to_id(tok, "one"));
  CHECK_EQ_INT(ids[4], jx_tokenizer_token_to_id(tok, "four"));
  CHECK_EQ_INT(ids[5], 102);
  n = jx_tokenizer_encode(tok, text, strlen(text), 2, ids, &full);
  CHECK_EQ_INT(n, 2);
  CHECK(ids[0] == 101 && ids[1] == 102);
  n = jx_tokenizer_encode(tok, "", 0, 16, ids, NULL);
  CHECK_EQ_INT(n, 2);
  /* NUL bytes inside the text are dropped by cleaning, never end it. */
  n = jx_tokenizer_encode(tok, "a\0b", 3, 16, ids, NULL);
  CHECK_EQ_INT(n, 3);
  CHECK_EQ_INT(ids[1], jx_tokenizer_token_to_id(tok, "ab"));
  jx_tokenizer_free(tok);
}

static void test_batch(void) {
  jx_tokenizer *tok = model_tokenizer();
  if (!tok) return;
  const char *texts[3] = {"hello world", "a much longer sentence with several more words in it",
                          ""};
  jx_array *ids, *mask;
  int ntrunc = -1;
  CHECK_EQ_INT(jx_tokenizer_encode_batch(tok, 3, texts, 512, 16, &ids, &mask, &ntrunc), JX_OK);
  CHECK_EQ_INT(ntrunc, 0);
  CHECK_EQ_INT(jx_shape(ids)[0], 3);
  CHECK_EQ_INT(jx_shape(ids)[1], 16);
  CHECK_EQ_INT(jx_dtype_of(mask), JX_INT32);
  int32_t h[48], m[48];
  jx_read(ids, h, sizeof h);
  jx_read(mask, m, sizeof m);
  CHECK(h[0] == 101 && h[3] == 102 && h[4] == 0 && m[3] == 1 && m[4] == 0);
  CHECK(h[32] == 101 && h[33] == 102 && m[33] == 1 && m[34] == 0);
  int sum = 0;
  for (int i = 16; i < 32; i++) sum += m[i];
  CHECK_EQ_INT(sum, 12);
  jx_free(ids);
  jx_free(mask);
  /* Truncated rows are counted; L never exceeds max_length. */
  CHECK_EQ_INT(jx_tokenizer_encode_batch(tok, 3, texts, 5, 16, &ids, &mask, &ntrunc), JX_OK);
  CHECK_EQ_INT(ntrunc, 1);
  CHECK_EQ_INT(jx_shape(ids)[1], 5);
  jx_free(ids);
  jx_free(mask);
  CHECK_EQ_INT(jx_tokenizer_encode_batch(tok, 0, texts, 5, 16, &ids, &mask, NULL), JX_ERR_VALUE);
  CHECK(ids == NULL && mask == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "n < 1");
  jx_tokenizer_free(tok);
}

/* Writes text to a fresh file in the temp folder; returns its path (static buffer). */
static const char *temp_file(const char *name, const char *text) {
  static char path[512];
  const char *tmp = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/jaxc_tok_%d_%s", tmp && *tmp ? tmp : "/tmp", (int)getpid(),
           name);
  FILE *f = fopen(path, "wb");
  fputs(text, f);
  fclose(f);
  return path;
}

static void test_small_vocab(void) {
  const char *path = temp_file("vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nun\n##aff\n"
                                            "##able\nhello\n!\r\n");
  jx_tokenizer *tok = jx_tokenizer_load(path);
  CHECK_MSG(tok, "%s", jx_last_error());
  int32_t ids[32];
  const char *text = "UnAffable hello! unaffablex [MASK]";
  int64_t n = jx_tokenizer_encode(tok, text, strlen(text), 32, ids, NULL);
  int32_t want[] = {2, 5, 6, 7, 8, 9, 1, 4, 3};
  CHECK_EQ_INT(n, 9);
  for (int i = 0; i < 9 && i < n; i++) CHECK_EQ_INT(ids[i], want[i]);
  CHECK_EQ_INT(jx_tokenizer_token_to_id(tok, "!"), 9); /* "\r\n" line end */
  jx_tokenizer_free(tok);
  unlink(path);
}

static void test_bad_files(void) {
  CHECK(jx_tokenizer_load("/nonexistent/vocab.txt") == NULL);
  CHECK_ERROR(JX_ERR_IO, "/nonexistent/vocab.txt");
  CHECK(jx_tokenizer_load("/") == NULL);
  CHECK_ERROR(JX_ERR_IO, "neither tokenizer.json nor vocab.txt");
  const char *path = temp_file("nounk.txt", "[PAD]\n[CLS]\n[SEP]\nhello\n");
  CHECK(jx_tokenizer_load(path) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "has no unknown token \"[UNK]\"");
  unlink(path);
  path = temp_file("nosep.txt", "[UNK]\n[CLS]\nhello\n");
  CHECK(jx_tokenizer_load(path) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "[SEP]");
  unlink(path);
  path = temp_file("empty.txt", "");
  CHECK(jx_tokenizer_load(path) == NULL);
  CHECK_ERROR(JX_ERR_IO, "empty vocabulary");
  unlink(path);
  path = temp_file("badutf8.txt", "[UNK]\n[CLS]\n[SEP]\nab\xff\n");
  CHECK(jx_tokenizer_load(path) == NULL);
  CHECK_ERROR(JX_ERR_IO, "line 4 is not valid UTF-8");
  unlink(path);
  path = temp_file("corrupt.json", "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"a\": 0,");
  CHECK(jx_tokenizer_load(path) == NULL);
  CHECK_ERROR(JX_ERR_IO, "invalid JSON");
  unlink(path);
  path = temp_file("bpe.json", "{\"normalizer\": null, \"model\": {\"type\": \"BPE\", "
                               "\"vocab\": {\"a\": 0}}}");
  CHECK(jx_tokenizer_load(path) == NULL);
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "model \"BPE\"");
  unlink(path);
  path = temp_file("ids.json", "{\"normalizer\": {\"type\": \"BertNormalizer\"}, \"model\": "
                               "{\"type\": \"WordPiece\", \"vocab\": {\"[UNK]\": 0, \"a\": 0}}}");
  CHECK(jx_tokenizer_load(path) == NULL);
  CHECK_ERROR(JX_ERR_IO, "token \"a\" has id out of range or repeated");
  unlink(path);
  path = temp_file("nounk.json", "{\"normalizer\": {\"type\": \"BertNormalizer\"}, \"model\": "
                                 "{\"type\": \"WordPiece\", \"vocab\": {\"[CLS]\": 0, "
                                 "\"[SEP]\": 1}}}");
  CHECK(jx_tokenizer_load(path) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "no unknown token");
  unlink(path);
  CHECK(jx_tokenizer_load(NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "NULL path");
  int32_t ids[4];
  CHECK_EQ_INT(jx_tokenizer_encode(NULL, "a", 1, 4, ids, NULL), -1);
  CHECK_ERROR(JX_ERR_VALUE, "NULL tokenizer");
  jx_tokenizer_free(NULL);
}

static void test_bad_max_length(void) {
  jx_tokenizer *tok = model_tokenizer();
  if (!tok) return;
  int32_t ids[4];
  CHECK_EQ_INT(jx_tokenizer_encode(tok, "a", 1, 1, ids, NULL), -1);
  CHECK_ERROR(JX_ERR_VALUE, "max_length 1 is below 2");
  jx_tokenizer_free(tok);
}

int main(void) {
  TEST_RUN(test_goldens_tokenizer_json);
  TEST_RUN(test_goldens_vocab_txt);
  TEST_RUN(test_vocabulary);
  TEST_RUN(test_truncation);
  TEST_RUN(test_batch);
  TEST_RUN(test_small_vocab);
  TEST_RUN(test_bad_files);
  TEST_RUN(test_bad_max_length);
  return test_finish();
}
