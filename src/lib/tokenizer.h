/* tokenizer.h -- the WordPiece tokenizer's construction from a vocabulary (src/lib/
 * tokenizer.c), called by the file loaders (src/io/tokenizer_files.c). */
#ifndef JAXC_LIB_TOKENIZER_H
#define JAXC_LIB_TOKENIZER_H

#include "jaxc.h"

/* The options of HF `tokenizers`' BertNormalizer and WordPiece model. */
typedef struct TokenizerOptions {
  bool clean_text;           /* drop controls, map whitespace to ' ' */
  bool handle_chinese_chars; /* spaces around CJK ideographs */
  bool strip_accents;        /* NFD, then drop nonspacing marks */
  bool lowercase;
  int max_input_chars_per_word; /* longer words become the unknown token (100) */
  const char *unk_token;        /* "[UNK]" */
  const char *continuing_subword_prefix; /* "##" */
  const char *cls_token, *sep_token, *pad_token; /* "[CLS]", "[SEP]", "[PAD]" */
  /* Tokens matched in the raw text before normalization (added / special tokens);
   * NULL with nadded 0 means the usual BERT specials present in the vocabulary. */
  int nadded;
  const char *const *added;
} TokenizerOptions;

/* BERT uncased defaults (bert-base-uncased's tokenizer). */
TokenizerOptions tokenizer_default_options(void);

/* Builds a tokenizer from n tokens (token i has id i; a repeated token maps to its last
 * id, as HF's vocab.txt reader does). tokens are copied. `fn` and `source` name the
 * caller and the file for messages. NULL with the error recorded: JX_ERR_VALUE when the
 * unknown, [CLS] or [SEP] token is missing, JX_ERR_OOM. */
jx_tokenizer *tokenizer_new(const char *fn, const char *source, int32_t n,
                            const char *const *tokens, const size_t *lens,
                            const TokenizerOptions *opt);

#endif
