/* tokenizer_files.c -- jx_tokenizer_load: a WordPiece tokenizer from Hugging Face's files,
 * tokenizer.json (the `tokenizers` serialization: normalizer options, model vocabulary,
 * added tokens) or vocab.txt (one token per line, BERT uncased options), or a folder
 * holding one of them. The tokenizer itself is src/lib/tokenizer.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "io/io.h"
#include "io/json.h"
#include "lib/tokenizer.h"

#define FN "jx_tokenizer_load"
/* Larger files are not tokenizers (tokenizer.json of a 250k vocabulary is ~17 MB). */
#define TOK_MAX_FILE (512u << 20)

/* Reads a whole (plain or gzip) file into a NUL-terminated block; NULL on error. */
static char *read_all(const char *path, size_t *len) {
  IoReader r;
  if (!io_reader_open_file(&r, FN, path)) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    n += io_read(&r, buf + n, cap - n);
    if (r.status != JX_OK || n < cap) break; /* an error, or the end of the data */
    if (cap >= TOK_MAX_FILE) {
      io_fail(JX_ERR_IO, FN, path, "larger than %u MB: not a tokenizer file", TOK_MAX_FILE >> 20);
      break;
    }
    char *grown = realloc(buf, 2 * cap + 1);
    if (!grown) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = grown;
    cap *= 2;
  }
  bool ok = buf && r.status == JX_OK && !error_pending();
  io_reader_close(&r);
  if (!buf) io_fail(JX_ERR_OOM, FN, path, "out of memory reading the file");
  if (!ok) {
    free(buf);
    return NULL;
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

/* vocab.txt: token i is line i (a final newline ends the last line; "\r\n" endings lose
 * the "\r", as Python's text mode does). */
static jx_tokenizer *load_vocab_txt(const char *path) {
  size_t len;
  char *text = read_all(path, &len);
  if (!text) return NULL;
  size_t nlines = 0;
  for (size_t i = 0; i < len; i++) nlines += text[i] == '\n';
  if (len > 0 && text[len - 1] != '\n') nlines++;
  if (nlines == 0 || nlines > INT32_MAX) {
    free(text);
    io_fail(JX_ERR_IO, FN, path, "%s", nlines ? "too many lines" : "empty vocabulary");
    return NULL;
  }
  const char **toks = malloc(nlines * sizeof *toks);
  size_t *lens = malloc(nlines * sizeof *lens);
  jx_tokenizer *t = NULL;
  if (toks && lens) {
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= len && k < nlines; i++) {
      if (i < len && text[i] != '\n') continue;
      size_t l = i - start;
      if (l > 0 && text[start + l - 1] == '\r') l--;
      if (!json_valid_utf8(text + start, l)) {
        io_fail(JX_ERR_IO, FN, path, "line %zu is not valid UTF-8", k + 1);
        break;
      }
      toks[k] = text + start;
      lens[k++] = l;
      start = i + 1;
    }
    if (k == nlines) {
      TokenizerOptions opt = tokenizer_default_options();
      t = tokenizer_new(FN, path, (int32_t)nlines, toks, lens, &opt);
    }
  } else {
    io_fail(JX_ERR_OOM, FN, path, "out of memory for %zu tokens", nlines);
  }
  free(toks);
  free(lens);
  free(text);
  return t;
}

static bool get_bool(const JsonValue *obj, const char *key, bool dflt, bool *ok) {
  const JsonValue *v = json_get(obj, key);
  if (!v || v->kind == JSON_NULL) return dflt;
  if (v->kind != JSON_BOOL) *ok = false;
  return v->kind == JSON_BOOL ? v->boolean : dflt;
}

static const char *get_str(const JsonValue *obj, const char *key, const char *dflt) {
  const JsonValue *v = json_get(obj, key);
  return v && v->kind == JSON_STRING ? v->str : dflt;
}

/* tokenizer.json of a WordPiece model with a BertNormalizer. */
static jx_tokenizer *load_tokenizer_json(const char *path) {
  size_t len;
  char *text = read_all(path, &len);
  if (!text) return NULL;
  JsonValue root;
  char err[160];
  bool oom = false;
  if (!json_parse(text, len, &root, err, sizeof err, &oom)) {
    free(text);
    io_fail(oom ? JX_ERR_OOM : JX_ERR_IO, FN, path, "invalid JSON: %s", err);
    return NULL;
  }
  free(text);
  jx_tokenizer *t = NULL;
  const char **toks = NULL, **added = NULL;
  size_t *lens = NULL;
  const JsonValue *model = json_get(&root, "model"), *norm = json_get(&root, "normalizer");
  const JsonValue *vocab = model && model->kind == JSON_OBJECT ? json_get(model, "vocab") : NULL;
  const char *mtype = model && model->kind == JSON_OBJECT ? get_str(model, "type", "?") : "?";
  const char *ntype = norm && norm->kind == JSON_OBJECT ? get_str(norm, "type", "?") : "none";
  if (root.kind != JSON_OBJECT || !model || model->kind != JSON_OBJECT) {
    io_fail(JX_ERR_IO, FN, path, "no \"model\" object: not a tokenizer.json");
    goto done;
  }
  if (strcmp(mtype, "WordPiece") != 0 || strcmp(ntype, "BertNormalizer") != 0) {
    io_fail(JX_ERR_UNSUPPORTED, FN, path, "model \"%.40s\" with normalizer \"%.40s\": only "
            "WordPiece with BertNormalizer (BERT tokenizers) is supported", mtype, ntype);
    goto done;
  }
  if (!vocab || vocab->kind != JSON_OBJECT || vocab->n == 0) {
    io_fail(JX_ERR_IO, FN, path, "model.vocab is missing, empty or not an object");
    goto done;
  }
  int32_t n = vocab->n;
  toks = calloc((size_t)n, sizeof *toks);
  lens = calloc((size_t)n, sizeof *lens);
  if (!toks || !lens) {
    io_fail(JX_ERR_OOM, FN, path, "out of memory for %d tokens", (int)n);
    goto done;
  }
  for (int32_t i = 0; i < n; i++) {
    const JsonValue *id = &vocab->items[i];
    if (id->kind != JSON_NUMBER || !id->is_int || id->integer < 0 || id->integer >= n ||
        toks[id->integer]) {
      io_fail(JX_ERR_IO, FN, path, "model.vocab: token \"%.40s\" has id %s (ids must be "
              "distinct integers 0..%d)", vocab->keys[i],
              id->kind == JSON_NUMBER && id->is_int ? "out of range or repeated" : "not an integer",
              (int)n - 1);
      goto done;
    }
    toks[id->integer] = vocab->keys[i];
    lens[id->integer] = vocab->keylens[i];
  }
  TokenizerOptions opt = tokenizer_default_options();
  bool ok = true;
  opt.clean_text = get_bool(norm, "clean_text", true, &ok);
  opt.handle_chinese_chars = get_bool(norm, "handle_chinese_chars", true, &ok);
  opt.lowercase = get_bool(norm, "lowercase", true, &ok);
  opt.strip_accents = get_bool(norm, "strip_accents", opt.lowercase, &ok);
  if (!ok) {
    io_fail(JX_ERR_IO, FN, path, "normalizer options must be true, false or null");
    goto done;
  }
  opt.unk_token = get_str(model, "unk_token", "[UNK]");
  opt.continuing_subword_prefix = get_str(model, "continuing_subword_prefix", "##");
  const JsonValue *mx = json_get(model, "max_input_chars_per_word");
  if (mx && mx->kind == JSON_NUMBER && mx->is_int && mx->integer > 0 && mx->integer < 1 << 20)
    opt.max_input_chars_per_word = (int)mx->integer;
  const JsonValue *at = json_get(&root, "added_tokens");
  if (at && at->kind == JSON_ARRAY && at->n > 0) {
    if (!(added = calloc((size_t)at->n, sizeof *added))) {
      io_fail(JX_ERR_OOM, FN, path, "out of memory");
      goto done;
    }
    for (int i = 0; i < at->n; i++) {
      const char *c = at->items[i].kind == JSON_OBJECT ? get_str(&at->items[i], "content", NULL)
                                                       : NULL;
      if (c) added[opt.nadded++] = c;
    }
    opt.added = added;
  }
  t = tokenizer_new(FN, path, n, toks, lens, &opt);
done:
  free(toks);
  free(lens);
  free(added);
  json_free(&root);
  return t;
}

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

jx_tokenizer *jx_tokenizer_load(const char *path) {
  if (error_pending()) return NULL;
  if (!path) {
    error_set(JX_ERR_VALUE, FN ": NULL path");
    return NULL;
  }
  if (!is_dir(path))
    return ends_with(path, ".json") ? load_tokenizer_json(path) : load_vocab_txt(path);
  size_t n = strlen(path);
  char *file = malloc(n + 32);
  if (!file) {
    error_set(JX_ERR_OOM, FN ": out of memory");
    return NULL;
  }
  jx_tokenizer *t = NULL;
  snprintf(file, n + 32, "%s/tokenizer.json", path);
  if (exists(file)) {
    t = load_tokenizer_json(file);
  } else {
    snprintf(file, n + 32, "%s/vocab.txt", path);
    if (exists(file))
      t = load_vocab_txt(file);
    else
      io_fail(JX_ERR_IO, FN, path, "folder has neither tokenizer.json nor vocab.txt");
  }
  free(file);
  return t;
}
