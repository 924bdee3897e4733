/* tokenizer.c -- BERT's WordPiece tokenizer, rule for rule as Hugging Face `tokenizers`
 * implements it (tokenizers/src/normalizers/bert.rs, pre_tokenizers/bert.rs,
 * models/wordpiece/mod.rs): raw-text special tokens, BertNormalizer (clean text, CJK
 * spacing, NFD accent stripping, lower-casing), BertPreTokenizer (whitespace and
 * punctuation), greedy longest-match WordPiece, then [CLS] ... [SEP]. Unicode
 * properties (categories, NFD, lower case) come from utf8proc. */
#include "lib/tokenizer.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "core/error.h"

struct jx_tokenizer {
  int32_t n;         /* vocabulary size: ids 0 .. n-1 */
  char **tokens;     /* id -> token (NUL-terminated copy) */
  size_t *lens;      /* id -> byte length */
  int32_t *slots;    /* open-addressing hash of token -> id; -1 = empty */
  size_t mask;       /* slots has mask + 1 entries (a power of two) */
  int32_t unk, cls, sep, pad;
  int nadded;        /* special tokens matched in the raw text, by id */
  int32_t *added;
  TokenizerOptions opt;
  char prefix[32];   /* continuing_subword_prefix, copied */
  size_t prefix_len;
};

TokenizerOptions tokenizer_default_options(void) {
  return (TokenizerOptions){.clean_text = true,
                            .handle_chinese_chars = true,
                            .strip_accents = true,
                            .lowercase = true,
                            .max_input_chars_per_word = 100,
                            .unk_token = "[UNK]",
                            .continuing_subword_prefix = "##",
                            .cls_token = "[CLS]",
                            .sep_token = "[SEP]",
                            .pad_token = "[PAD]"};
}

/* ------------------------------------------------------------ vocabulary */

static uint64_t hash_bytes(const char *s, size_t len) {
  uint64_t h = 1469598103934665603u; /* FNV-1a */
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211u;
  return h;
}

static int32_t vocab_find(const jx_tokenizer *t, const char *s, size_t len) {
  for (size_t i = hash_bytes(s, len) & t->mask;; i = (i + 1) & t->mask) {
    int32_t id = t->slots[i];
    if (id < 0) return -1;
    if (t->lens[id] == len && memcmp(t->tokens[id], s, len) == 0) return id;
  }
}

/* Inserts id; an equal token already present is replaced (the last one wins). */
static void vocab_insert(jx_tokenizer *t, int32_t id) {
  for (size_t i = hash_bytes(t->tokens[id], t->lens[id]) & t->mask;; i = (i + 1) & t->mask) {
    int32_t old = t->slots[i];
    if (old < 0 || (t->lens[old] == t->lens[id] &&
                    memcmp(t->tokens[old], t->tokens[id], t->lens[id]) == 0)) {
      t->slots[i] = id;
      return;
    }
  }
}

void jx_tokenizer_free(jx_tokenizer *t) {
  if (!t) return;
  if (t->tokens)
    for (int32_t i = 0; i < t->n; i++) free(t->tokens[i]);
  free(t->tokens);
  free(t->lens);
  free(t->slots);
  free(t->added);
  free(t);
}

static int32_t find_cstr(const jx_tokenizer *t, const char *s) {
  return s ? vocab_find(t, s, strlen(s)) : -1;
}

jx_tokenizer *tokenizer_new(const char *fn, const char *source, int32_t n,
                            const char *const *tokens, const size_t *lens,
                            const TokenizerOptions *opt) {
  jx_tokenizer *t = calloc(1, sizeof *t);
  size_t cap = 16;
  while (cap < 2 * (size_t)(n > 0 ? n : 1)) cap *= 2;
  if (t) {
    t->tokens = calloc(n > 0 ? (size_t)n : 1, sizeof *t->tokens);
    t->lens = calloc(n > 0 ? (size_t)n : 1, sizeof *t->lens);
    t->slots = malloc(cap * sizeof *t->slots);
  }
  if (!t || !t->tokens || !t->lens || !t->slots) goto oom;
  t->n = n;
  t->mask = cap - 1;
  memset(t->slots, 0xff, cap * sizeof *t->slots);
  for (int32_t i = 0; i < n; i++) {
    if (!(t->tokens[i] = malloc(lens[i] + 1))) goto oom;
    memcpy(t->tokens[i], tokens[i], lens[i]);
    t->tokens[i][lens[i]] = 0;
    t->lens[i] = lens[i];
    vocab_insert(t, i);
  }
  t->opt = *opt;
  const char *prefix = opt->continuing_subword_prefix ? opt->continuing_subword_prefix : "";
  t->prefix_len = strlen(prefix);
  if (t->prefix_len >= sizeof t->prefix) {
    error_set(JX_ERR_VALUE, "%s: %s: continuing_subword_prefix \"%.40s\" is longer than %zu "
              "bytes", fn, source, prefix, sizeof t->prefix - 1);
    jx_tokenizer_free(t);
    return NULL;
  }
  memcpy(t->prefix, prefix, t->prefix_len + 1);
  t->opt.continuing_subword_prefix = t->prefix;
  t->unk = find_cstr(t, opt->unk_token);
  t->cls = find_cstr(t, opt->cls_token);
  t->sep = find_cstr(t, opt->sep_token);
  t->pad = find_cstr(t, opt->pad_token);
  const char *missing = t->unk < 0 ? opt->unk_token : t->cls < 0 ? opt->cls_token
                      : t->sep < 0 ? opt->sep_token : NULL;
  if (t->unk < 0 || t->cls < 0 || t->sep < 0) {
    error_set(JX_ERR_VALUE, "%s: %s: the vocabulary (%d tokens) has no %s token \"%s\"", fn,
              source, (int)n, t->unk < 0 ? "unknown" : t->cls < 0 ? "[CLS]" : "[SEP]",
              missing ? missing : "(none given)");
    jx_tokenizer_free(t);
    return NULL;
  }
  if (t->pad < 0) t->pad = 0;
  /* Special tokens matched in the raw text. */
  static const char *const bert_specials[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  int na = opt->added ? opt->nadded : 5;
  const char *const *names = opt->added ? opt->added : bert_specials;
  if (!(t->added = malloc((size_t)(na > 0 ? na : 1) * sizeof *t->added))) goto oom;
  for (int i = 0; i < na; i++) {
    int32_t id = find_cstr(t, names[i]);
    if (id >= 0 && t->lens[id] > 0) t->added[t->nadded++] = id;
  }
  t->opt.added = NULL;
  t->opt.nadded = 0;
  t->opt.unk_token = t->tokens[t->unk];
  t->opt.cls_token = t->tokens[t->cls];
  t->opt.sep_token = t->tokens[t->sep];
  t->opt.pad_token = t->tokens[t->pad];
  return t;
oom:
  jx_tokenizer_free(t);
  error_set(JX_ERR_OOM, "%s: %s: out of memory building a vocabulary of %d tokens", fn, source,
            (int)n);
  return NULL;
}

int64_t jx_tokenizer_vocab_size(const jx_tokenizer *t) { return t ? t->n : 0; }

int32_t jx_tokenizer_token_to_id(const jx_tokenizer *t, const char *token) {
  return t && token ? vocab_find(t, token, strlen(token)) : -1;
}

const char *jx_tokenizer_id_to_token(const jx_tokenizer *t, int32_t id) {
  return t && id >= 0 && id < t->n ? t->tokens[id] : NULL;
}

/* ------------------------------------------------------- growable buffers */

typedef struct {
  int32_t *v;
  size_t n, cap;
  bool oom;
} Buf32;

static void buf_push(Buf32 *b, int32_t x) {
  if (b->oom) return;
  if (b->n == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 64;
    int32_t *v = realloc(b->v, cap * sizeof *v);
    if (!v) {
      b->oom = true;
      return;
    }
    b->v = v;
    b->cap = cap;
  }
  b->v[b->n++] = x;
}

/* ------------------------------------------------------- character classes */

/* Rust's char::is_whitespace (the White_Space property) plus \t \n \r. */
static bool is_whitespace(int32_t c) {
  if (c == ' ' || (c >= 9 && c <= 13) || c == 0x85) return true;
  if (c < 0x80) return false;
  utf8proc_category_t k = utf8proc_category(c);
  return k == UTF8PROC_CATEGORY_ZS || k == UTF8PROC_CATEGORY_ZL || k == UTF8PROC_CATEGORY_ZP;
}

/* bert.rs is_control: Cc, Cf, Co (and Cs) except \t \n \r. Unassigned code points (Cn)
 * are kept, as `tokenizers` does. */
static bool is_control(int32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  utf8proc_category_t k = utf8proc_category(c);
  return k == UTF8PROC_CATEGORY_CC || k == UTF8PROC_CATEGORY_CF || k == UTF8PROC_CATEGORY_CO ||
         k == UTF8PROC_CATEGORY_CS;
}

/* bert.rs is_chinese_char: the CJK Unified Ideographs blocks and their extensions. */
static bool is_chinese_char(int32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/* pre_tokenizers/bert.rs is_bert_punc: ASCII punctuation (which includes the symbols
 * $ + < = > ^ ` | ~) or any Unicode punctuation category. */
static bool is_punctuation(int32_t c) {
  if (c < 0x80)
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
           (c >= 123 && c <= 126);
  utf8proc_category_t k = utf8proc_category(c);
  return k >= UTF8PROC_CATEGORY_PC && k <= UTF8PROC_CATEGORY_PO;
}

/* --------------------------------------------------------------- decoding */

/* Decodes one code point at s[0..len); invalid or truncated sequences give U+FFFD and
 * consume their maximal valid prefix (at least one byte), as Python's "replace". */
static int32_t decode_utf8(const unsigned char *s, size_t len, size_t *used) {
  unsigned char b = s[0];
  if (b < 0x80) {
    *used = 1;
    return b;
  }
  int need;
  int32_t c;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) {
    need = 1, c = b & 0x1F;
  } else if (b >= 0xE0 && b <= 0xEF) {
    need = 2, c = b & 0x0F;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F; /* no surrogates */
  } else if (b >= 0xF0 && b <= 0xF4) {
    need = 3, c = b & 0x07;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
  } else {
    *used = 1;
    return 0xFFFD;
  }
  size_t i = 1;
  for (; i <= (size_t)need; i++) {
    unsigned char lo_i = i == 1 ? lo : 0x80, hi_i = i == 1 ? hi : 0xBF;
    if (i >= len || s[i] < lo_i || s[i] > hi_i) {
      *used = i;
      return 0xFFFD;
    }
    c = c << 6 | (s[i] & 0x3F);
  }
  *used = i;
  return c;
}

static size_t encode_utf8(int32_t c, char *out) {
  if (c < 0x80) {
    out[0] = (char)c;
    return 1;
  }
  if (c < 0x800) {
    out[0] = (char)(0xC0 | c >> 6);
    out[1] = (char)(0x80 | (c & 0x3F));
    return 2;
  }
  if (c < 0x10000) {
    out[0] = (char)(0xE0 | c >> 12);
    out[1] = (char)(0x80 | (c >> 6 & 0x3F));
    out[2] = (char)(0x80 | (c & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | c >> 18);
  out[1] = (char)(0x80 | (c >> 12 & 0x3F));
  out[2] = (char)(0x80 | (c >> 6 & 0x3F));
  out[3] = (char)(0x80 | (c & 0x3F));
  return 4;
}

/* ------------------------------------------------------------ normalizer */

/* BertNormalizer on the code points of one segment: in -> out. */
static void normalize(const jx_tokenizer *t, const int32_t *in, size_t n, Buf32 *out) {
  const TokenizerOptions *o = &t->opt;
  for (size_t i = 0; i < n; i++) {
    int32_t c = in[i];
    if (o->clean_text) {
      if (c == 0 || c == 0xFFFD || is_control(c)) continue;
      if (is_whitespace(c)) c = ' ';
    }
    bool cjk = o->handle_chinese_chars && is_chinese_char(c);
    if (cjk) buf_push(out, ' ');
    int32_t dec[32];
    utf8proc_ssize_t nd = 1;
    dec[0] = c;
    if (o->strip_accents) {
      nd = utf8proc_decompose_char(c, dec, 32, UTF8PROC_DECOMPOSE, NULL);
      if (nd < 0 || nd > 32) nd = 1, dec[0] = c;
    }
    for (utf8proc_ssize_t k = 0; k < nd; k++) {
      int32_t d = dec[k];
      if (o->strip_accents && utf8proc_category(d) == UTF8PROC_CATEGORY_MN) continue;
      if (o->lowercase) d = utf8proc_tolower(d);
      buf_push(out, d);
    }
    if (cjk) buf_push(out, ' ');
  }
  /* NFD's canonical ordering: stable sort of runs of combining classes > 0. Only marks
   * that survived stripping remain, so this rarely moves anything. */
  if (o->strip_accents && !out->oom)
    for (size_t i = 1; i < out->n; i++) {
      int cc = utf8proc_get_property(out->v[i])->combining_class;
      if (cc == 0) continue;
      for (size_t j = i; j > 0; j--) {
        int pc = utf8proc_get_property(out->v[j - 1])->combining_class;
        if (pc <= cc) break;
        int32_t tmp = out->v[j];
        out->v[j] = out->v[j - 1];
        out->v[j - 1] = tmp;
      }
    }
}

/* ------------------------------------------------------------- WordPiece */

/* Appends the ids of one word (code points w[0..n)) to ids. */
static void wordpiece(const jx_tokenizer *t, const int32_t *w, size_t n, Buf32 *ids,
                      char *bytes, size_t *offs) {
  if (n > (size_t)t->opt.max_input_chars_per_word) {
    buf_push(ids, t->unk);
    return;
  }
  /* bytes: the prefix, then the word's UTF-8; offs[i]: where char i starts. */
  size_t p = t->prefix_len;
  memcpy(bytes, t->prefix, p);
  for (size_t i = 0; i < n; i++) {
    offs[i] = p;
    p += encode_utf8(w[i], bytes + p);
  }
  offs[n] = p;
  size_t first = ids->n, start = 0;
  while (start < n) {
    int32_t found = -1;
    size_t end = n;
    for (; end > start; end--) {
      /* A continuation piece is looked up with the prefix just before it: the prefix is
       * copied over the bytes preceding char `start` (restored below). */
      const char *s = bytes + offs[start];
      size_t len = offs[end] - offs[start];
      if (start > 0) {
        char save[32];
        memcpy(save, bytes + offs[start] - t->prefix_len, t->prefix_len);
        memcpy(bytes + offs[start] - t->prefix_len, t->prefix, t->prefix_len);
        found = vocab_find(t, s - t->prefix_len, len + t->prefix_len);
        memcpy(bytes + offs[start] - t->prefix_len, save, t->prefix_len);
      } else {
        found = vocab_find(t, s, len);
      }
      if (found >= 0) break;
    }
    if (found < 0) {
      ids->n = first; /* no split: the whole word is unknown */
      buf_push(ids, t->unk);
      return;
    }
    buf_push(ids, found);
    start = end;
  }
}

/* BertPreTokenizer + WordPiece over normalized code points. */
static void split_words(const jx_tokenizer *t, const int32_t *c, size_t n, Buf32 *ids,
                        char *bytes, size_t *offs) {
  size_t i = 0;
  while (i < n) {
    if (is_whitespace(c[i])) {
      i++;
    } else if (is_punctuation(c[i])) {
      wordpiece(t, c + i, 1, ids, bytes, offs);
      i++;
    } else {
      size_t j = i;
      while (j < n && !is_whitespace(c[j]) && !is_punctuation(c[j])) j++;
      wordpiece(t, c + i, j - i, ids, bytes, offs);
      i = j;
    }
  }
}

/* The longest special token starting at s[0..len), or -1. */
static int32_t match_added(const jx_tokenizer *t, const char *s, size_t len) {
  int32_t best = -1;
  for (int k = 0; k < t->nadded; k++) {
    int32_t id = t->added[k];
    size_t l = t->lens[id];
    if (l <= len && memcmp(s, t->tokens[id], l) == 0 && (best < 0 || l > t->lens[best]))
      best = id;
  }
  return best;
}

/* All ids of text (without [CLS] / [SEP]) into ids. */
static void encode_all(const jx_tokenizer *t, const char *text, size_t len, Buf32 *ids) {
  Buf32 cps = {0}, norm = {0};
  char *bytes = NULL;
  size_t *offs = NULL;
  size_t pos = 0;
  while (pos <= len && !ids->oom) {
    /* One segment: the code points up to the next special token (or the end). */
    cps.n = 0;
    int32_t special = -1;
    while (pos < len) {
      if (t->nadded && (special = match_added(t, text + pos, len - pos)) >= 0) break;
      size_t used;
      buf_push(&cps, decode_utf8((const unsigned char *)text + pos, len - pos, &used));
      pos += used;
    }
    norm.n = 0;
    normalize(t, cps.v, cps.n, &norm);
    if (cps.oom || norm.oom) {
      ids->oom = true;
      break;
    }
    size_t maxw = (size_t)t->opt.max_input_chars_per_word;
    size_t wmax = norm.n < maxw ? norm.n : maxw;
    free(bytes);
    free(offs);
    bytes = malloc(t->prefix_len + 4 * wmax + 1);
    offs = malloc((wmax + 1) * sizeof *offs);
    if (!bytes || !offs) {
      ids->oom = true;
      break;
    }
    split_words(t, norm.v, norm.n, ids, bytes, offs);
    if (special < 0) break;
    buf_push(ids, special);
    pos += t->lens[special];
  }
  free(bytes);
  free(offs);
  free(cps.v);
  free(norm.v);
}

int64_t jx_tokenizer_encode(const jx_tokenizer *t, const char *text, size_t len,
                            int64_t max_length, int32_t *ids, int64_t *full_length) {
  if (error_pending()) return -1;
  if (!t || (!text && len) || !ids) {
    error_set(JX_ERR_VALUE, "jx_tokenizer_encode: NULL %s", !t ? "tokenizer" : !ids ? "ids"
                                                                             : "text");
    return -1;
  }
  if (max_length < 2) {
    error_set(JX_ERR_VALUE, "jx_tokenizer_encode: max_length %lld is below 2 (room for [CLS] "
              "and [SEP])", (long long)max_length);
    return -1;
  }
  Buf32 b = {0};
  encode_all(t, text ? text : "", len, &b);
  if (b.oom) {
    free(b.v);
    error_set(JX_ERR_OOM, "jx_tokenizer_encode: out of memory on a text of %zu bytes", len);
    return -1;
  }
  int64_t keep = (int64_t)b.n < max_length - 2 ? (int64_t)b.n : max_length - 2;
  ids[0] = t->cls;
  if (keep > 0) memcpy(ids + 1, b.v, (size_t)keep * sizeof *ids);
  ids[keep + 1] = t->sep;
  if (full_length) *full_length = (int64_t)b.n + 2;
  free(b.v);
  return keep + 2;
}

jx_status jx_tokenizer_encode_batch(const jx_tokenizer *t, int n, const char *const *texts,
                                    int64_t max_length, int64_t pad_to_multiple_of,
                                    jx_array **input_ids, jx_array **attention_mask,
                                    int *ntruncated) {
  if (input_ids) *input_ids = NULL;
  if (attention_mask) *attention_mask = NULL;
  if (ntruncated) *ntruncated = 0;
  if (error_pending()) return jx_last_status();
  if (!t || !texts || !input_ids || !attention_mask || n < 1 || max_length < 2) {
    error_set(JX_ERR_VALUE, "jx_tokenizer_encode_batch: %s",
              !t ? "NULL tokenizer" : !texts ? "NULL texts" : n < 1 ? "n < 1"
              : max_length < 2 ? "max_length below 2" : "NULL output");
    return JX_ERR_VALUE;
  }
  int32_t *all = malloc((size_t)n * (size_t)max_length * sizeof *all);
  int64_t *lens = malloc((size_t)n * sizeof *lens);
  if (!all || !lens) {
    free(all);
    free(lens);
    error_set(JX_ERR_OOM, "jx_tokenizer_encode_batch: out of memory for %d x %lld ids", n,
              (long long)max_length);
    return JX_ERR_OOM;
  }
  int64_t longest = 2;
  for (int i = 0; i < n; i++) {
    int64_t full = 0;
    const char *s = texts[i] ? texts[i] : "";
    lens[i] = jx_tokenizer_encode(t, s, strlen(s), max_length, all + (size_t)i * max_length,
                                  &full);
    if (lens[i] < 0) {
      free(all);
      free(lens);
      return jx_last_status();
    }
    if (full > lens[i] && ntruncated) (*ntruncated)++;
    if (lens[i] > longest) longest = lens[i];
  }
  int64_t L = longest;
  if (pad_to_multiple_of > 1) {
    L = (longest + pad_to_multiple_of - 1) / pad_to_multiple_of * pad_to_multiple_of;
    if (L > max_length) L = max_length;
  }
  int32_t *ids = malloc((size_t)n * (size_t)L * sizeof *ids);
  int32_t *mask = malloc((size_t)n * (size_t)L * sizeof *mask);
  if (ids && mask) {
    for (int i = 0; i < n; i++)
      for (int64_t j = 0; j < L; j++) {
        bool tok = j < lens[i];
        ids[(size_t)i * L + j] = tok ? all[(size_t)i * max_length + j] : t->pad;
        mask[(size_t)i * L + j] = tok;
      }
    int64_t shape[2] = {n, L};
    *input_ids = jx_array_from(ids, JX_INT32, 2, shape);
    *attention_mask = jx_array_from(mask, JX_INT32, 2, shape);
  } else {
    error_set(JX_ERR_OOM, "jx_tokenizer_encode_batch: out of memory for %d x %lld ids", n,
              (long long)L);
  }
  free(ids);
  free(mask);
  free(all);
  free(lens);
  if (!*input_ids || !*attention_mask) {
    jx_free(*input_ids);
    jx_free(*attention_mask);
    *input_ids = *attention_mask = NULL;
    return jx_last_status();
  }
  return JX_OK;
}
