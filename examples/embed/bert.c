/* bert.c -- see bert.h. The forward pass follows Hugging Face transformers' BertModel
 * (modeling_bert.py: embeddings + LayerNorm, then per layer self-attention -> dense ->
 * residual LayerNorm -> GELU MLP -> residual LayerNorm) and sentence-transformers'
 * Pooling (mean over the mask) and Normalize (x / max(|x|, 1e-12)). */
#include "bert.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Layer {
  jx_array *wq, *bq, *wk, *bk, *wv, *bv; /* (H, H) transposed to (in, out); (H,) */
  jx_array *wo, *bo, *ln1_w, *ln1_b;     /* attention output dense, LayerNorm */
  jx_array *wi, *bi;                     /* (H, I), (I,): intermediate dense */
  jx_array *wo2, *bo2, *ln2_w, *ln2_b;   /* (I, H), (H,): output dense, LayerNorm */
} Layer;

struct Bert {
  BertConfig cfg;
  jx_tokenizer *tok;
  jx_array *word, *pos, *type; /* (V, H), (P, H), (2, H) */
  jx_array *ln_w, *ln_b;       /* (H,) */
  Layer *layer;                /* cfg.layers */
  jx_fn *fn, *jit;             /* (ids, mask) -> embeddings */
  int nweights;                /* every array above, for bert_free */
  jx_array **weights;
};

static void set_err(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

/* The number after "key": in a small JSON file's text, or dflt when absent. */
static double json_number(const char *text, const char *key, double dflt) {
  char pat[96];
  snprintf(pat, sizeof pat, "\"%s\"", key);
  const char *p = text ? strstr(text, pat) : NULL;
  if (!p) return dflt;
  p += strlen(pat);
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ':') p++;
  char *end;
  double v = strtod(p, &end);
  return end == p ? dflt : v;
}

static char *read_text(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = n >= 0 && n < (1 << 24) ? malloc((size_t)n + 1) : NULL;
  if (s) s[fread(s, 1, (size_t)n, f)] = 0;
  fclose(f);
  return s;
}

/* ------------------------------------------------------------- weights */

typedef struct Loaded {
  int n;
  char **names;
  jx_array **arrays;
  const char *path;
  char *err;
  size_t errlen;
  bool failed;
} Loaded;

/* The tensor called name with the given shape, as float32 (a new reference kept in
 * b->weights); NULL with err set when it is missing or misshapen. */
static jx_array *weight(Bert *b, Loaded *l, const char *name, int ndim, int64_t d0, int64_t d1) {
  if (l->failed) return NULL;
  for (int i = 0; i < l->n; i++) {
    if (strcmp(l->names[i], name) != 0) continue;
    jx_array *a = l->arrays[i];
    const int64_t *s = jx_shape(a);
    if (jx_ndim(a) != ndim || s[0] != d0 || (ndim == 2 && s[1] != d1)) {
      char want[64], got[96] = "";
      if (ndim == 1) snprintf(want, sizeof want, "(%lld)", (long long)d0);
      else snprintf(want, sizeof want, "(%lld, %lld)", (long long)d0, (long long)d1);
      for (int k = 0; k < jx_ndim(a); k++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", k ? ", " : "",
                 (long long)s[k]);
      set_err(l->err, l->errlen, "%s: tensor \"%s\" has shape (%s), expected %s", l->path, name,
              got, want);
      l->failed = true;
      return NULL;
    }
    jx_array *f = jx_astype(a, JX_FLOAT32);
    if (!f) {
      set_err(l->err, l->errlen, "%s: tensor \"%s\": %s", l->path, name, jx_last_error());
      jx_clear_error();
      l->failed = true;
      return NULL;
    }
    b->weights[b->nweights++] = f;
    return f;
  }
  set_err(l->err, l->errlen, "%s: missing tensor \"%s\"", l->path, name);
  l->failed = true;
  return NULL;
}

/* A linear layer's weight (out, in) as its transpose (in, out) for x @ W^T. */
static jx_array *weight_t(Bert *b, Loaded *l, const char *name, int64_t out, int64_t in) {
  jx_array *w = weight(b, l, name, 2, out, in);
  if (!w) return NULL;
  jx_array *t = jx_transpose(w, NULL);
  b->weights[b->nweights++] = t;
  return t;
}

/* ------------------------------------------------------------- forward */

static jx_array *layer_norm(jx_array *x, jx_array *w, jx_array *bias, double eps) {
  int ax = -1;
  jx_array *d = jx_sub(x, jx_mean(x, 1, &ax, true));
  jx_array *var = jx_mean(jx_mul(d, d), 1, &ax, true);
  return jx_add(jx_mul(jx_mul(d, jx_rsqrt(jx_add(var, jx_scalar(eps)))), w), bias);
}

static jx_array *linear(jx_array *x, jx_array *wt, jx_array *bias) {
  return jx_add(jx_matmul(x, wt), bias);
}

/* in: ids (B, L) int32, mask (B, L) int32; out: (B, H) float32 unit vectors. */
static jx_status forward(void *ctx, jx_array *const *in, jx_array **out) {
  Bert *b = ctx;
  const BertConfig *c = &b->cfg;
  int64_t B = jx_shape(in[0])[0], L = jx_shape(in[0])[1], H = c->hidden, N = c->heads;
  int64_t zero = 0, one = 1;
  jx_array *pos = jx_slice(b->pos, 1, &zero, &L, NULL);     /* (L, H) */
  jx_array *type = jx_slice(b->type, 1, &zero, &one, NULL); /* (1, H): token type 0 */
  jx_array *x = jx_add(jx_add(jx_take(b->word, in[0], 0), pos), type); /* (B, L, H) */
  x = layer_norm(x, b->ln_w, b->ln_b, c->layer_norm_eps);
  jx_array *keep = jx_reshape(jx_not_equal(in[1], jx_scalar_int(0)), 4,
                              (int64_t[]){B, 1, 1, L}); /* (B, 1, 1, L) bool: attend */
  int64_t heads_shape[4] = {B, L, N, H / N}, flat_shape[3] = {B, L, H};
  for (int64_t i = 0; i < c->layers; i++) {
    const Layer *ly = &b->layer[i];
    jx_array *q = jx_reshape(linear(x, ly->wq, ly->bq), 4, heads_shape); /* (B, L, N, Hd) */
    jx_array *k = jx_reshape(linear(x, ly->wk, ly->bk), 4, heads_shape);
    jx_array *v = jx_reshape(linear(x, ly->wv, ly->bv), 4, heads_shape);
    jx_array *att = jx_nn_dot_product_attention(q, k, v, NULL, keep, 0.0, false);
    att = linear(jx_reshape(att, 3, flat_shape), ly->wo, ly->bo); /* (B, L, H) */
    x = layer_norm(jx_add(x, att), ly->ln1_w, ly->ln1_b, c->layer_norm_eps);
    jx_array *h = jx_nn_gelu(linear(x, ly->wi, ly->bi), false); /* (B, L, I), exact erf */
    x = layer_norm(jx_add(x, linear(h, ly->wo2, ly->bo2)), ly->ln2_w, ly->ln2_b,
                   c->layer_norm_eps);
  }
  /* Mean pooling over the mask, then L2 normalization (sentence-transformers). */
  int ax1 = 1, axl = -1;
  jx_array *m = jx_expand_dims(jx_astype(in[1], JX_FLOAT32), -1); /* (B, L, 1) */
  jx_array *sum = jx_sum(jx_mul(x, m), 1, &ax1, false);           /* (B, H) */
  jx_array *cnt = jx_maximum(jx_sum(m, 1, &ax1, false), jx_scalar(1e-9));
  jx_array *mean = jx_divide(sum, cnt);
  jx_array *norm = jx_sqrt(jx_sum(jx_mul(mean, mean), 1, &axl, true));
  out[0] = jx_divide(mean, jx_maximum(norm, jx_scalar(1e-12)));
  return out[0] ? JX_OK : jx_last_status();
}

/* ------------------------------------------------------------- loading */

void bert_free(Bert *b) {
  if (!b) return;
  for (int i = 0; i < b->nweights; i++) jx_free(b->weights[i]);
  free(b->weights);
  free(b->layer);
  jx_fn_free(b->jit);
  jx_fn_free(b->fn);
  jx_tokenizer_free(b->tok);
  free(b);
}

const BertConfig *bert_config(const Bert *b) { return &b->cfg; }
const jx_tokenizer *bert_tokenizer(const Bert *b) { return b->tok; }

static bool load_weights(Bert *b, const char *dir, char *err, size_t errlen) {
  char path[4096];
  snprintf(path, sizeof path, "%s/model.safetensors", dir);
  Loaded l = {.path = path, .err = err, .errlen = errlen};
  if (jx_io_load_safetensors(path, &l.n, &l.names, &l.arrays) != JX_OK) {
    set_err(err, errlen, "%s", jx_last_error());
    jx_clear_error();
    return false;
  }
  BertConfig *c = &b->cfg;
  /* The layer count is the number of encoder.layer.<i> blocks present. */
  c->layers = 0;
  for (int i = 0; i < l.n; i++) {
    int k;
    char rest[64];
    if (sscanf(l.names[i], "encoder.layer.%d.%63s", &k, rest) == 2 && k + 1 > c->layers &&
        k < 1000)
      c->layers = k + 1;
  }
  int64_t H = c->hidden, I = c->intermediate;
  b->layer = calloc((size_t)(c->layers ? c->layers : 1), sizeof *b->layer);
  b->weights = calloc((size_t)(8 + 24 * c->layers), sizeof *b->weights);
  b->word = weight(b, &l, "embeddings.word_embeddings.weight", 2, c->vocab, H);
  b->pos = weight(b, &l, "embeddings.position_embeddings.weight", 2, c->max_positions, H);
  b->type = weight(b, &l, "embeddings.token_type_embeddings.weight", 2, 2, H);
  b->ln_w = weight(b, &l, "embeddings.LayerNorm.weight", 1, H, 0);
  b->ln_b = weight(b, &l, "embeddings.LayerNorm.bias", 1, H, 0);
  for (int64_t i = 0; i < c->layers && !l.failed; i++) {
    Layer *ly = &b->layer[i];
    char n[128];
#define NAME(s) (snprintf(n, sizeof n, "encoder.layer.%lld.%s", (long long)i, s), n)
    ly->wq = weight_t(b, &l, NAME("attention.self.query.weight"), H, H);
    ly->bq = weight(b, &l, NAME("attention.self.query.bias"), 1, H, 0);
    ly->wk = weight_t(b, &l, NAME("attention.self.key.weight"), H, H);
    ly->bk = weight(b, &l, NAME("attention.self.key.bias"), 1, H, 0);
    ly->wv = weight_t(b, &l, NAME("attention.self.value.weight"), H, H);
    ly->bv = weight(b, &l, NAME("attention.self.value.bias"), 1, H, 0);
    ly->wo = weight_t(b, &l, NAME("attention.output.dense.weight"), H, H);
    ly->bo = weight(b, &l, NAME("attention.output.dense.bias"), 1, H, 0);
    ly->ln1_w = weight(b, &l, NAME("attention.output.LayerNorm.weight"), 1, H, 0);
    ly->ln1_b = weight(b, &l, NAME("attention.output.LayerNorm.bias"), 1, H, 0);
    ly->wi = weight_t(b, &l, NAME("intermediate.dense.weight"), I, H);
    ly->bi = weight(b, &l, NAME("intermediate.dense.bias"), 1, I, 0);
    ly->wo2 = weight_t(b, &l, NAME("output.dense.weight"), H, I);
    ly->bo2 = weight(b, &l, NAME("output.dense.bias"), 1, H, 0);
    ly->ln2_w = weight(b, &l, NAME("output.LayerNorm.weight"), 1, H, 0);
    ly->ln2_b = weight(b, &l, NAME("output.LayerNorm.bias"), 1, H, 0);
#undef NAME
  }
  if (!l.failed && c->layers == 0) {
    set_err(err, errlen, "%s: no encoder.layer.<i> tensors", path);
    l.failed = true;
  }
  for (int i = 0; i < l.n; i++) jx_free(l.arrays[i]);
  free(l.arrays);
  jx_io_free_names(l.n, l.names);
  return !l.failed;
}

Bert *bert_load(const char *dir, char *err, size_t errlen) {
  Bert *b = calloc(1, sizeof *b);
  BertConfig *c = &b->cfg;
  char *cfg = read_text(dir, "config.json");
  if (!cfg) {
    set_err(err, errlen, "%s/config.json: cannot be read", dir);
    bert_free(b);
    return NULL;
  }
  c->hidden = (int64_t)json_number(cfg, "hidden_size", 0);
  c->heads = (int64_t)json_number(cfg, "num_attention_heads", 0);
  c->intermediate = (int64_t)json_number(cfg, "intermediate_size", 0);
  c->vocab = (int64_t)json_number(cfg, "vocab_size", 0);
  c->max_positions = (int64_t)json_number(cfg, "max_position_embeddings", 512);
  c->layer_norm_eps = json_number(cfg, "layer_norm_eps", 1e-12);
  bool gelu = strstr(cfg, "\"hidden_act\": \"gelu\"") || strstr(cfg, "\"hidden_act\":\"gelu\"");
  free(cfg);
  if (c->hidden <= 0 || c->heads <= 0 || c->hidden % c->heads || c->intermediate <= 0 ||
      c->vocab <= 0 || c->max_positions <= 0 || !gelu) {
    set_err(err, errlen, "%s/config.json: needs positive hidden_size (a multiple of "
            "num_attention_heads), intermediate_size, vocab_size and hidden_act \"gelu\"", dir);
    bert_free(b);
    return NULL;
  }
  char *st = read_text(dir, "sentence_bert_config.json");
  c->max_seq_length = (int64_t)json_number(st, "max_seq_length", 512);
  free(st);
  if (c->max_seq_length > c->max_positions) c->max_seq_length = c->max_positions;
  if (!(b->tok = jx_tokenizer_load(dir))) {
    set_err(err, errlen, "%s", jx_last_error());
    jx_clear_error();
    bert_free(b);
    return NULL;
  }
  if (jx_tokenizer_vocab_size(b->tok) > c->vocab) {
    set_err(err, errlen, "%s: the tokenizer has %lld tokens, the model's vocab_size is %lld", dir,
            (long long)jx_tokenizer_vocab_size(b->tok), (long long)c->vocab);
    bert_free(b);
    return NULL;
  }
  if (!load_weights(b, dir, err, errlen)) {
    bert_free(b);
    return NULL;
  }
  b->fn = jx_fn_new("bert_embed", 2, 1, forward, b);
  b->jit = jx_jit(b->fn);
  if (!b->jit) {
    set_err(err, errlen, "jit: %s", jx_last_error());
    jx_clear_error();
    bert_free(b);
    return NULL;
  }
  return b;
}

/* ------------------------------------------------------------- encoding */

jx_array *bert_embed(Bert *b, jx_array *input_ids, jx_array *attention_mask) {
  jx_array *out = NULL;
  if (jx_call(b->jit, (jx_array *[]){input_ids, attention_mask}, &out) != JX_OK) return NULL;
  return out;
}

typedef struct {
  size_t len;
  int index;
} ByLength;

static int longest_first(const void *x, const void *y) {
  const ByLength *a = x, *b = y;
  return a->len != b->len ? (a->len < b->len ? 1 : -1) : a->index - b->index;
}

jx_status bert_encode(Bert *b, int n, const char *const *texts, int batch_size,
                      int64_t max_length, float *out, int *ntruncated,
                      bert_progress_fn progress, void *progress_ctx) {
  if (ntruncated) *ntruncated = 0;
  if (max_length <= 0 || max_length > b->cfg.max_positions)
    max_length = max_length <= 0 ? b->cfg.max_seq_length : b->cfg.max_positions;
  if (batch_size < 1) batch_size = 1;
  /* Longest texts first, as sentence-transformers batches them: rows of one batch then
   * have similar lengths, so little padding is computed. */
  ByLength *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
  const char **batch = malloc((size_t)batch_size * sizeof *batch);
  float *tmp = malloc((size_t)batch_size * (size_t)b->cfg.hidden * sizeof *tmp);
  jx_status st = JX_OK;
  for (int i = 0; i < n; i++) order[i] = (ByLength){strlen(texts[i]), i};
  qsort(order, (size_t)n, sizeof *order, longest_first);
  for (int start = 0; start < n && st == JX_OK; start += batch_size) {
    int nb = n - start < batch_size ? n - start : batch_size, nt = 0;
    for (int i = 0; i < nb; i++) batch[i] = texts[order[start + i].index];
    jx_array *ids, *mask;
    st = jx_tokenizer_encode_batch(b->tok, nb, batch, max_length, 16, &ids, &mask, &nt);
    if (st != JX_OK) break;
    if (ntruncated) *ntruncated += nt;
    jx_array *e = bert_embed(b, ids, mask);
    st = e ? jx_read(e, tmp, (size_t)nb * (size_t)b->cfg.hidden * sizeof *tmp) : jx_last_status();
    for (int i = 0; i < nb && st == JX_OK; i++)
      memcpy(out + (size_t)order[start + i].index * (size_t)b->cfg.hidden,
             tmp + (size_t)i * (size_t)b->cfg.hidden, (size_t)b->cfg.hidden * sizeof *tmp);
    jx_free(e);
    jx_free(ids);
    jx_free(mask);
    if (progress && st == JX_OK) progress(progress_ctx, start + nb, n);
  }
  free(order);
  free(batch);
  free(tmp);
  return st;
}
