/* jaxc/io.h -- part of the public API of jaxc; included by <jaxc.h>, never on its own.
 * Files and text: npy/IDX/safetensors readers and writers, the WordPiece tokenizer. */
#ifndef JAXC_IO_H
#define JAXC_IO_H
#ifndef JAXC_H
#error "include <jaxc.h>, not <jaxc/io.h>"
#endif

/* ------------------------------------------------------------------ io */
/* Array files. Readers take plain or gzip-compressed files (recognized by content, not
 * by name) and return arrays on the default device, with the file's dtype and shape;
 * 64-bit data follows the x64 mode (converted to 32 bits when it is off, as
 * jnp.asarray does). Malformed, truncated or corrupt files give JX_ERR_IO with a
 * message naming the function, the path and what is wrong; valid files jaxc cannot
 * represent (a dtype it lacks, more than JX_MAX_NDIM dims) give JX_ERR_UNSUPPORTED.
 * Writers report JX_ERR_IO for files they cannot write and remove what they wrote. */

/* Reads an IDX file (the MNIST / Fashion-MNIST format: bytes 00 00 <type> <ndim>,
 * ndim big-endian int32 dims, then big-endian data in C order). Type codes: 0x08
 * uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64. The data must
 * fill the file exactly (a short or a longer file is JX_ERR_IO). */
jx_array *jx_io_read_idx(const char *path);
/* Writes `a` as IDX, gzip-compressed when `gzip`. dtypes: uint8, int8, int16, int32,
 * float32, float64 (JX_ERR_DTYPE otherwise); dims above INT32_MAX: JX_ERR_SHAPE. */
jx_status jx_io_write_idx(const char *path, jx_array *a, bool gzip);

/* Writes n arrays as a safetensors file (huggingface.co/docs/safetensors): tensor i
 * is called names[i]; names must be distinct and not "__metadata__" (JX_ERR_VALUE).
 * dtypes map to BOOL, U8, I8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64, C64, C128
 * (complex: interleaved (re, im) pairs). */
jx_status jx_io_save_safetensors(const char *path, int n, const char *const *names,
                                 jx_array *const *arrays);
/* Reads a safetensors file: *n tensors, in the order of the file's header, named
 * (*names)[i] with data (*arrays)[i]. Each array is a new reference (jx_free it, or
 * let the enclosing scope release it); the two lists are malloc'd: free the names with
 * jx_io_free_names(*n, *names) and the pointer list with free(*arrays). "__metadata__"
 * is checked and skipped. On error *n = 0 and both lists are NULL. Offsets are
 * validated as the format requires (in range, no overlaps or holes, byte counts equal
 * to dtype size * shape); FP8 and other dtypes jaxc lacks: JX_ERR_UNSUPPORTED. */
jx_status jx_io_load_safetensors(const char *path, int *n, char ***names,
                                 jx_array ***arrays);
/* Frees n names and their list, as returned by jx_io_load_safetensors (NULL is fine). */
void jx_io_free_names(int n, char **names);

/* Reads a NumPy .npy file (format versions 1-3; numpy.lib.format): dtypes bool,
 * int8..int64, uint8..uint64, float16, float32, float64, complex64 ('<c8'), complex128
 * ('<c16'), either byte order (each complex part swapped on its own). A
 * Fortran-order file gives the transposed view of its data (no copy). Errors
 * (JX_ERR_IO naming the path): a missing or unreadable file, a bad magic or header,
 * data shorter than the header's shape, and bytes after the data (numpy.load ignores
 * those; jaxc takes them for a damaged or concatenated file); other dtypes (object,
 * structured, bfloat16) JX_ERR_UNSUPPORTED; a NULL path JX_ERR_VALUE. */
jx_array *jx_io_load_npy(const char *path);
/* Writes `a` as .npy, byte for byte as np.save does (format 1.0, little-endian, C
 * order, data 64-byte aligned). bfloat16 has no NumPy dtype: JX_ERR_UNSUPPORTED. */
jx_status jx_io_save_npy(const char *path, jx_array *a);

/* ----------------------------------------------------------- tokenizers */
/* BERT's WordPiece tokenizer (src/lib/tokenizer.c; files: src/io/tokenizer_files.c),
 * equal token for token to Hugging Face `tokenizers` (BertNormalizer,
 * BertPreTokenizer, WordPiece, the [CLS] A [SEP] template). Steps: special tokens
 * ([CLS], [SEP], [MASK], ... the file's added tokens) are matched in the raw text; the
 * rest is cleaned (NUL, U+FFFD and control/format/private-use characters dropped, every
 * whitespace becomes a space), CJK ideographs get spaces around them, accents are
 * stripped (Unicode NFD, then nonspacing marks removed) and text is lower-cased (both
 * when the vocabulary is uncased), split on whitespace and around every punctuation
 * character (Unicode P* and ASCII symbols), and each word is split greedily,
 * longest match first, into vocabulary pieces with "##" continuations; a word with no
 * split, or longer than 100 characters, becomes [UNK]. Unicode data comes from
 * utf8proc. Invalid UTF-8 is decoded as U+FFFD (as Python's errors="replace" does),
 * which cleaning then removes: it is never an error. */
typedef struct jx_tokenizer jx_tokenizer;

/* Loads a tokenizer: a tokenizer.json (HF `tokenizers` format; model WordPiece with a
 * BertNormalizer), a vocab.txt (one token per line, id = line number; BERT uncased
 * options), or a folder holding either (tokenizer.json preferred). NULL on error:
 * JX_ERR_IO (unreadable or malformed file, naming path and problem),
 * JX_ERR_UNSUPPORTED (another model or normalizer type), JX_ERR_VALUE (a vocabulary
 * without its unknown token "[UNK]", or without [CLS] / [SEP]). */
jx_tokenizer *jx_tokenizer_load(const char *path);
void jx_tokenizer_free(jx_tokenizer *tok); /* NULL is fine */
/* Vocabulary size; the id of a token (-1 if absent); the token of an id (NULL if out of
 * range; owned by tok). */
int64_t jx_tokenizer_vocab_size(const jx_tokenizer *tok);
int32_t jx_tokenizer_token_to_id(const jx_tokenizer *tok, const char *token);
const char *jx_tokenizer_id_to_token(const jx_tokenizer *tok, int32_t id);
/* Encodes text[0..len) (bytes, NULs allowed) as [CLS] tokens... [SEP], truncated to
 * max_length ids (the last kept id is [SEP]; max_length >= 2) written to ids[], and
 * returns how many were written. *full_length (NULL = ignored) receives the length
 * without truncation, so full_length > result means the text was truncated. -1 on
 * error (NULL tok/text, max_length < 2: JX_ERR_VALUE; out of memory: JX_ERR_OOM). */
int64_t jx_tokenizer_encode(const jx_tokenizer *tok, const char *text, size_t len,
                            int64_t max_length, int32_t *ids, int64_t *full_length);
/* Encodes n texts (NUL-terminated) into int32 arrays (n, L) on the default device:
 * input_ids padded with [PAD]'s id (0 if absent) and attention_mask (1 for tokens, 0
 * for padding). L is the longest encoding (each truncated to max_length), rounded up to
 * a multiple of pad_to_multiple_of (<= 1: no rounding) but never above max_length.
 * *ntruncated (NULL = ignored) counts the texts that were cut. On error both outputs
 * are NULL (errors as jx_tokenizer_encode; n < 1: JX_ERR_VALUE). */
jx_status jx_tokenizer_encode_batch(const jx_tokenizer *tok, int n, const char *const *texts,
                                    int64_t max_length, int64_t pad_to_multiple_of,
                                    jx_array **input_ids, jx_array **attention_mask,
                                    int *ntruncated);

#endif /* JAXC_IO_H */
