/* bert.h -- a BERT-family sentence-embedding model (all-MiniLM-L6-v2 and its kin) in
 * jaxc operations: safetensors weights checked by name and shape, the encoder under
 * jx_jit with sequence lengths bucketed to multiples of 16, mean pooling over the
 * attention mask and L2 normalization -- what sentence-transformers' encode computes
 * for a Transformer + Pooling(mean) + Normalize model. Public API only (jaxc.h). */
#ifndef JAXC_EXAMPLES_BERT_H
#define JAXC_EXAMPLES_BERT_H

#include <jaxc.h>
#include <stddef.h>

typedef struct Bert Bert;

/* Sizes read from the folder (config.json, sentence_bert_config.json, the tensors). */
typedef struct BertConfig {
  int64_t vocab, hidden, heads, layers, intermediate, max_positions;
  double layer_norm_eps;
  int64_t max_seq_length; /* sentence_bert_config.json's max_seq_length (else 512) */
} BertConfig;

/* Loads model.safetensors, config.json and the tokenizer (tokenizer.json or vocab.txt)
 * from dir onto the default device. NULL on error with a message in err (errlen bytes)
 * naming the file and, for weights, the missing or misshapen tensor. */
Bert *bert_load(const char *dir, char *err, size_t errlen);
void bert_free(Bert *b);
const BertConfig *bert_config(const Bert *b);
const jx_tokenizer *bert_tokenizer(const Bert *b);

/* Embeddings of token ids (B, L) int32 with attention_mask (B, L) int32 (1 = token):
 * (B, hidden) float32, unit length. L must be <= max_positions. NULL + sticky error. */
jx_array *bert_embed(Bert *b, jx_array *input_ids, jx_array *attention_mask);

/* Called after each batch with the number of texts done so far. */
typedef void (*bert_progress_fn)(void *ctx, int done, int total);

/* Embeds n NUL-terminated texts in batches of batch_size, each truncated to max_length
 * tokens (<= 0: the model's max_seq_length), into out (n x hidden floats, row-major).
 * *ntruncated (NULL = ignored) counts texts that were cut. JX_OK or the error. */
jx_status bert_encode(Bert *b, int n, const char *const *texts, int batch_size,
                      int64_t max_length, float *out, int *ntruncated,
                      bert_progress_fn progress, void *progress_ctx);

#endif
