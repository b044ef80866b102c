/*
 * json.c - the JSON reader behind nn_json.h: recursive descent over the text, one tree node per
 * value.  Configuration files are small, so clarity wins over speed: children grow by doubling
 * and every string is copied out decoded.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_json.h"

typedef struct {
    const char *text;
    size_t length;
    size_t pos;
    char *error;
    size_t error_size;
    bool failed;
} json_reader;

static void fail(json_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Records the first error with its line and column (1-based). */
static void fail(json_reader *r, const char *fmt, ...)
{
    if (r->failed)
        return;
    r->failed = true;
    size_t line = 1, column = 1;
    for (size_t i = 0; i < r->pos && i < r->length; i++) {
        if (r->text[i] == '\n') {
            line++;
            column = 1;
        } else {
            column++;
        }
    }
    if (r->error == NULL || r->error_size == 0)
        return;
    int n = snprintf(r->error, r->error_size, "line %zu column %zu: ", line, column);
    if (n < 0 || (size_t)n >= r->error_size)
        return;
    va_list args;
    va_start(args, fmt);
    vsnprintf(r->error + n, r->error_size - (size_t)n, fmt, args);
    va_end(args);
}

static void skip_space(json_reader *r)
{
    while (r->pos < r->length) {
        char c = r->text[r->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            return;
        r->pos++;
    }
}

static int peek(const json_reader *r)
{
    return r->pos < r->length ? (unsigned char)r->text[r->pos] : -1;
}

static bool parse_value(json_reader *r, nn_json *out, int depth);

/* Appends one child slot to a container; NULL when out of memory. */
static nn_json *add_child(json_reader *r, nn_json *parent, size_t *capacity)
{
    if (parent->count == *capacity) {
        size_t grown = *capacity ? *capacity * 2 : 4;
        nn_json *children = realloc(parent->children, grown * sizeof *children);
        if (children == NULL) {
            fail(r, "out of memory");
            return NULL;
        }
        parent->children = children;
        *capacity = grown;
    }
    nn_json *child = &parent->children[parent->count++];
    memset(child, 0, sizeof *child);
    return child;
}

static int hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Reads the 4 hex digits after "\u"; -1 when they are not 4 hex digits. */
static long read_hex4(json_reader *r)
{
    if (r->length - r->pos < 4)
        return -1;
    long value = 0;
    for (int i = 0; i < 4; i++) {
        int digit = hex_digit((unsigned char)r->text[r->pos + (size_t)i]);
        if (digit < 0)
            return -1;
        value = value * 16 + digit;
    }
    r->pos += 4;
    return value;
}

static size_t put_utf8(char *out, unsigned long code)
{
    if (code < 0x80) {
        out[0] = (char)code;
        return 1;
    }
    if (code < 0x800) {
        out[0] = (char)(0xC0 | (code >> 6));
        out[1] = (char)(0x80 | (code & 0x3F));
        return 2;
    }
    if (code < 0x10000) {
        out[0] = (char)(0xE0 | (code >> 12));
        out[1] = (char)(0x80 | ((code >> 6) & 0x3F));
        out[2] = (char)(0x80 | (code & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (code >> 18));
    out[1] = (char)(0x80 | ((code >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((code >> 6) & 0x3F));
    out[3] = (char)(0x80 | (code & 0x3F));
    return 4;
}

/* A \u escape (the "\u" already read), with a surrogate pair when one follows. */
static bool read_unicode_escape(json_reader *r, char *out, size_t *used)
{
    long code = read_hex4(r);
    if (code < 0) {
        fail(r, "\\u must be followed by 4 hexadecimal digits");
        return false;
    }
    if (code >= 0xD800 && code <= 0xDBFF) {
        long low = -1;
        if (r->length - r->pos >= 2 && r->text[r->pos] == '\\' && r->text[r->pos + 1] == 'u') {
            r->pos += 2;
            low = read_hex4(r);
        }
        if (low < 0xDC00 || low > 0xDFFF) {
            fail(r, "a high surrogate \\u%04lX must be followed by a low surrogate", code);
            return false;
        }
        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    } else if (code >= 0xDC00 && code <= 0xDFFF) {
        fail(r, "a lone low surrogate \\u%04lX", code);
        return false;
    }
    if (code == 0) {
        fail(r, "\\u0000 inside a string is not accepted");
        return false;
    }
    *used += put_utf8(out + *used, (unsigned long)code);
    return true;
}

static bool read_escape(json_reader *r, char *out, size_t *used)
{
    int c = peek(r);
    r->pos++;
    switch (c) {
    case '"': out[(*used)++] = '"'; return true;
    case '\\': out[(*used)++] = '\\'; return true;
    case '/': out[(*used)++] = '/'; return true;
    case 'b': out[(*used)++] = '\b'; return true;
    case 'f': out[(*used)++] = '\f'; return true;
    case 'n': out[(*used)++] = '\n'; return true;
    case 'r': out[(*used)++] = '\r'; return true;
    case 't': out[(*used)++] = '\t'; return true;
    case 'u': return read_unicode_escape(r, out, used);
    default:
        r->pos--;
        fail(r, "unknown escape in a string");
        return false;
    }
}

/* A string (the opening quote is at r->pos); its decoded text in *out (malloc'd). */
static bool parse_string(json_reader *r, char **out)
{
    r->pos++; /* the opening quote */
    size_t start = r->pos;
    /* Decoded text is never longer than the source (an escape of 6 characters decodes to at
     * most 4 bytes; a 12-character pair to 4). */
    size_t end = start;
    while (end < r->length && r->text[end] != '"')
        end += r->text[end] == '\\' ? 2 : 1;
    if (end >= r->length) {
        fail(r, "a string is not closed");
        return false;
    }
    char *text = malloc(end - start + 1);
    if (text == NULL) {
        fail(r, "out of memory");
        return false;
    }
    size_t used = 0;
    while (r->pos < end) {
        unsigned char c = (unsigned char)r->text[r->pos];
        if (c < 0x20) {
            fail(r, "a control character (0x%02X) inside a string must be escaped", c);
            free(text);
            return false;
        }
        r->pos++;
        if (c != '\\') {
            text[used++] = (char)c;
        } else if (!read_escape(r, text, &used)) {
            free(text);
            return false;
        }
    }
    r->pos = end + 1;
    text[used] = '\0';
    *out = text;
    return true;
}

static bool is_digit_at(const json_reader *r, size_t i)
{
    return i < r->length && r->text[i] >= '0' && r->text[i] <= '9';
}

/* Steps *i over one or more digits; false (after fail(`missing`)) when none is there. */
static bool digit_run(json_reader *r, size_t *i, const char *missing)
{
    if (!is_digit_at(r, *i)) {
        r->pos = *i;
        fail(r, "%s", missing);
        return false;
    }
    while (is_digit_at(r, *i))
        (*i)++;
    return true;
}

static bool parse_number(json_reader *r, nn_json *out)
{
    size_t start = r->pos;
    size_t i = start;
    if (i < r->length && r->text[i] == '-')
        i++;
    if (i < r->length && r->text[i] == '0' && is_digit_at(r, i + 1)) {
        fail(r, "a number must not have a leading zero");
        return false;
    }
    if (!digit_run(r, &i, i > start ? "a digit must follow the minus sign" : "a number needs a digit"))
        return false;
    if (i < r->length && r->text[i] == '.') {
        i++;
        if (!digit_run(r, &i, "a digit must follow the decimal point"))
            return false;
    }
    if (i < r->length && (r->text[i] == 'e' || r->text[i] == 'E')) {
        i++;
        if (i < r->length && (r->text[i] == '+' || r->text[i] == '-'))
            i++;
        if (!digit_run(r, &i, "a digit must follow the exponent"))
            return false;
    }
    char digits[64];
    size_t n = i - start < sizeof digits - 1 ? i - start : sizeof digits - 1;
    memcpy(digits, r->text + start, n);
    digits[n] = '\0';
    out->type = NN_JSON_NUMBER;
    out->number = strtod(digits, NULL);
    r->pos = i;
    return true;
}

static bool parse_word(json_reader *r, const char *word, nn_json_type type, bool boolean, nn_json *out)
{
    size_t n = strlen(word);
    if (r->length - r->pos < n || memcmp(r->text + r->pos, word, n) != 0) {
        fail(r, "unexpected character '%c'", r->text[r->pos]);
        return false;
    }
    r->pos += n;
    out->type = type;
    out->boolean = boolean;
    return true;
}

/* After a container's item: 1 when `close` ends the container, 0 when a ',' announces another
 * item, -1 (after fail) otherwise. */
static int after_item(json_reader *r, char close, const char *container)
{
    skip_space(r);
    int c = peek(r);
    if (c == close || c == ',') {
        r->pos++;
        return c == close;
    }
    fail(r, "expected ',' or '%c' in %s", close, container);
    return -1;
}

/* Steps over a container's opening character; true when `close` follows at once (empty). */
static bool open_container(json_reader *r, nn_json *out, nn_json_type type, char close)
{
    out->type = type;
    r->pos++;
    skip_space(r);
    if (peek(r) != close)
        return false;
    r->pos++;
    return true;
}

static bool parse_array(json_reader *r, nn_json *out, int depth)
{
    size_t capacity = 0;
    if (open_container(r, out, NN_JSON_ARRAY, ']'))
        return true;
    for (;;) {
        nn_json *item = add_child(r, out, &capacity);
        if (item == NULL || !parse_value(r, item, depth + 1))
            return false;
        int next = after_item(r, ']', "an array");
        if (next != 0)
            return next == 1;
    }
}

static bool parse_object(json_reader *r, nn_json *out, int depth)
{
    size_t capacity = 0;
    if (open_container(r, out, NN_JSON_OBJECT, '}'))
        return true;
    for (;;) {
        skip_space(r);
        if (peek(r) != '"') {
            fail(r, "expected a quoted key in an object");
            return false;
        }
        char *key = NULL;
        if (!parse_string(r, &key))
            return false;
        nn_json *member = add_child(r, out, &capacity);
        if (member == NULL) {
            free(key);
            return false;
        }
        member->key = key;
        skip_space(r);
        if (peek(r) != ':') {
            fail(r, "expected ':' after the key \"%s\"", key);
            return false;
        }
        r->pos++;
        if (!parse_value(r, member, depth + 1))
            return false;
        int next = after_item(r, '}', "an object");
        if (next != 0)
            return next == 1;
    }
}

static bool parse_value(json_reader *r, nn_json *out, int depth)
{
    if (depth > NN_JSON_MAX_DEPTH) {
        fail(r, "nesting deeper than %d levels", NN_JSON_MAX_DEPTH);
        return false;
    }
    skip_space(r);
    switch (peek(r)) {
    case -1:
        fail(r, "unexpected end of the text");
        return false;
    case '{':
        return parse_object(r, out, depth);
    case '[':
        return parse_array(r, out, depth);
    case '"':
        out->type = NN_JSON_STRING;
        return parse_string(r, &out->string);
    case 't':
        return parse_word(r, "true", NN_JSON_BOOL, true, out);
    case 'f':
        return parse_word(r, "false", NN_JSON_BOOL, false, out);
    case 'n':
        return parse_word(r, "null", NN_JSON_NULL, false, out);
    default:
        return parse_number(r, out);
    }
}

static void free_contents(nn_json *value)
{
    for (size_t i = 0; i < value->count; i++)
        free_contents(&value->children[i]);
    free(value->children);
    free(value->string);
    free(value->key);
}

void nn_json_free(nn_json *value)
{
    if (value == NULL)
        return;
    free_contents(value);
    free(value);
}

nn_json *nn_json_parse(const char *text, size_t length, char *error, size_t error_size)
{
    if (error != NULL && error_size > 0)
        error[0] = '\0';
    json_reader reader = {text, length, 0, error, error_size, false};
    nn_json *root = calloc(1, sizeof *root);
    if (root == NULL) {
        fail(&reader, "out of memory");
        return NULL;
    }
    if (parse_value(&reader, root, 1)) {
        skip_space(&reader);
        if (reader.pos < reader.length)
            fail(&reader, "unexpected text after the JSON value");
    }
    if (reader.failed) {
        nn_json_free(root);
        return NULL;
    }
    return root;
}

const nn_json *nn_json_member(const nn_json *object, const char *key)
{
    if (object == NULL || object->type != NN_JSON_OBJECT)
        return NULL;
    for (size_t i = object->count; i-- > 0;)
        if (strcmp(object->children[i].key, key) == 0)
            return &object->children[i];
    return NULL;
}

const char *nn_json_type_name(nn_json_type type)
{
    static const char *const names[] = {"null", "boolean", "number", "string", "array", "object"};
    return (unsigned)type < sizeof names / sizeof names[0] ? names[type] : "?";
}
