/*
 * nn_json.h - a small JSON reader (base/json.c) for the configuration files CANN's runtime takes
 * as JSON: aclInit's configPath and aclmdlSetDump's dumpCfgPath.  It builds a tree of values
 * (RFC 8259: objects, arrays, strings with escapes and \u sequences, numbers, true/false/null),
 * rejects trailing text and nesting deeper than NN_JSON_MAX_DEPTH, and says where a text is
 * wrong ("line 3 column 7: expected ':' after an object key").
 */
#ifndef NN_JSON_H
#define NN_JSON_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NN_JSON_MAX_DEPTH 64

typedef enum nn_json_type {
    NN_JSON_NULL,
    NN_JSON_BOOL,
    NN_JSON_NUMBER,
    NN_JSON_STRING,
    NN_JSON_ARRAY,
    NN_JSON_OBJECT
} nn_json_type;

typedef struct nn_json {
    nn_json_type type;
    bool boolean;               /* NN_JSON_BOOL */
    double number;              /* NN_JSON_NUMBER */
    char *string;               /* NN_JSON_STRING: UTF-8, NUL-terminated (a \u0000 is refused) */
    char *key;                  /* the member's name when this value sits in an object */
    struct nn_json *children;   /* NN_JSON_ARRAY items / NN_JSON_OBJECT members, in text order */
    size_t count;
} nn_json;

/* Parses `length` bytes of `text`.  NULL on error, with the reason (position included) in
 * error[error_size]; out of memory reads "out of memory". */
nn_json *nn_json_parse(const char *text, size_t length, char *error, size_t error_size);
/* Frees a tree from nn_json_parse; NULL is accepted. */
void nn_json_free(nn_json *value);
/* The member named `key` of an object (the last one when the text repeats a key, as
 * nlohmann::json, which CANN uses, keeps the last); NULL if absent or `object` is no object. */
const nn_json *nn_json_member(const nn_json *object, const char *key);
/* "null", "boolean", "number", "string", "array", "object". */
const char *nn_json_type_name(nn_json_type type);

#ifdef __cplusplus
}
#endif

#endif /* NN_JSON_H */
