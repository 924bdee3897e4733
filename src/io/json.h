/* json.h -- a small strict JSON (RFC 8259) parser for file headers (safetensors): a
 * tree of values, UTF-8 checked, nesting depth bounded, integers kept exact. */
#ifndef JAXC_IO_JSON_H
#define JAXC_IO_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum JsonKind {
  JSON_NULL,
  JSON_BOOL,
  JSON_NUMBER,
  JSON_STRING,
  JSON_ARRAY,
  JSON_OBJECT
} JsonKind;

typedef struct JsonValue {
  JsonKind kind;
  bool boolean;
  /* Numbers: `number` always; `is_int` when the literal has no fraction or exponent and
   * fits int64, and then `integer` is exact. */
  double number;
  bool is_int;
  int64_t integer;
  /* Strings: decoded UTF-8, NUL-terminated; len excludes the NUL (a "\u0000" escape may
   * put NULs inside). */
  char *str;
  size_t len;
  /* Arrays and objects: n items (objects: keys[i] / keylens[i] name items[i], in file
   * order; duplicate keys are kept). */
  int n;
  struct JsonValue *items;
  char **keys;
  size_t *keylens;
} JsonValue;

/* Deepest nesting accepted (bounds the parser's recursion), and most values in one
 * document (bounds its memory: a safetensors header of 100k tensors has ~1M). */
#define JSON_MAX_DEPTH 64
#define JSON_MAX_VALUES (1 << 22)

/* Parses text[0..len) (trailing whitespace allowed) into *out. On failure returns false
 * and writes "what is wrong, at byte N" into err (errlen bytes); *out is then empty.
 * oom is set when the failure was an allocation. */
bool json_parse(const char *text, size_t len, JsonValue *out, char *err, size_t errlen,
                bool *oom);
void json_free(JsonValue *v);
/* The item of object v under key (first match), or NULL. */
const JsonValue *json_get(const JsonValue *v, const char *key);
/* True when s[0..len) is valid UTF-8 (no overlongs, surrogates or code points above
 * U+10FFFF). */
bool json_valid_utf8(const char *s, size_t len);
/* "null", "bool", "number", "string", "array" or "object". */
const char *json_kind_name(JsonKind k);

#endif
