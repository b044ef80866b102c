/*
 * test_core_json.c - the JSON reader of configuration files (base/json.c), compiled into this
 * program (its nn_* symbols are hidden in the shared object).  Expected trees and refusals are
 * RFC 8259's: every value kind, escapes and \u sequences (a surrogate pair becomes one 4-byte
 * UTF-8 character), numbers with fractions and exponents, a repeated key (the last one counts,
 * as in nlohmann::json, which CANN reads its files with), and texts that are not JSON, each
 * refused with the line and column of the problem.
 */
#include "../../libaclnn/src/base/json.c"

#include <stdio.h>
#include <string.h>

#include "test_util.h"

static nn_json *parse(const char *text, char *why, size_t why_size)
{
    return nn_json_parse(text, strlen(text), why, why_size);
}

static void test_values(void)
{
    char why[200];
    const char *text = "{\n  \"dump\": {\"dump_path\": \"/tmp/a b\", \"list\": [1, -2.5e2, 0.125, true, false, null,"
                       " {}, []],\n  \"esc\": \"q\\\"b\\\\s\\/n\\n\\u00e9\\ud83d\\ude00\"},\n  \"k\": 1, \"k\": 2\n}";
    nn_json *root = parse(text, why, sizeof why);
    CHECK(root != NULL, "valid text refused: %s", why);
    if (root == NULL)
        return;
    CHECK(root->type == NN_JSON_OBJECT && root->count == 3, "root: type %d, %zu members", root->type, root->count);
    const nn_json *dump = nn_json_member(root, "dump");
    CHECK(dump != NULL && dump->type == NN_JSON_OBJECT, "dump is an object");
    const nn_json *path = nn_json_member(dump, "dump_path");
    CHECK(path != NULL && path->type == NN_JSON_STRING && strcmp(path->string, "/tmp/a b") == 0,
          "dump_path keeps its space");
    const nn_json *list = nn_json_member(dump, "list");
    CHECK(list != NULL && list->type == NN_JSON_ARRAY && list->count == 8, "list has 8 items");
    if (list != NULL && list->count == 8) {
        CHECK(list->children[0].type == NN_JSON_NUMBER && list->children[0].number == 1.0, "1");
        CHECK(list->children[1].number == -250.0, "-2.5e2 = %g", list->children[1].number);
        CHECK(list->children[2].number == 0.125, "0.125");
        CHECK(list->children[3].type == NN_JSON_BOOL && list->children[3].boolean, "true");
        CHECK(list->children[4].type == NN_JSON_BOOL && !list->children[4].boolean, "false");
        CHECK(list->children[5].type == NN_JSON_NULL, "null");
        CHECK(list->children[6].type == NN_JSON_OBJECT && list->children[6].count == 0, "{}");
        CHECK(list->children[7].type == NN_JSON_ARRAY && list->children[7].count == 0, "[]");
    }
    const nn_json *esc = nn_json_member(dump, "esc");
    /* q"b\s/n<newline>, e-acute (C3 A9), U+1F600 (F0 9F 98 80) */
    const char want[] = "q\"b\\s/n\n\xc3\xa9\xf0\x9f\x98\x80";
    CHECK(esc != NULL && esc->type == NN_JSON_STRING && strcmp(esc->string, want) == 0, "escapes decoded: %s",
          esc && esc->string ? esc->string : "(none)");
    const nn_json *k = nn_json_member(root, "k");
    CHECK(k != NULL && k->number == 2.0, "a repeated key: the last one counts");
    CHECK(nn_json_member(root, "missing") == NULL && nn_json_member(path, "x") == NULL, "absent members");
    CHECK(strcmp(nn_json_type_name(NN_JSON_ARRAY), "array") == 0, "type names");
    nn_json_free(root);
    nn_json_free(NULL);

    root = parse("  \"top\"  ", why, sizeof why);
    CHECK(root != NULL && root->type == NN_JSON_STRING && strcmp(root->string, "top") == 0, "a scalar document");
    nn_json_free(root);
}

static void test_refusals(void)
{
    static const struct {
        const char *text;
        const char *words; /* the message must contain these */
    } cases[] = {
        {"", "line 1 column 1: unexpected end"},
        {"{\"a\": 1,}", "line 1 column 9: expected a quoted key"},
        {"{\"a\" 1}", "expected ':' after the key \"a\""},
        {"[1 2]", "line 1 column 4: expected ',' or ']'"},
        {"{\"a\": 1\n \"b\": 2}", "line 2 column 2: expected ',' or '}'"},
        {"\"abc", "not closed"},
        {"\"a\tb\"", "control character"},
        {"\"\\x\"", "unknown escape"},
        {"\"\\u12G4\"", "4 hexadecimal digits"},
        {"\"\\ud83d\"", "low surrogate"},
        {"\"\\ude00\"", "lone low surrogate"},
        {"\"\\u0000\"", "\\u0000"},
        {"01", "leading zero"},
        {"1.", "decimal point"},
        {"1e+", "exponent"},
        {"-", "digit"},
        {"tru", "unexpected character"},
        {"{} x", "unexpected text after"},
        {"'a'", "digit"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char why[200] = "unset";
        nn_json *root = parse(cases[i].text, why, sizeof why);
        CHECK(root == NULL, "\"%s\" accepted", cases[i].text);
        nn_json_free(root);
        CHECK(strstr(why, cases[i].words) != NULL, "\"%s\": message \"%s\" lacks \"%s\"", cases[i].text, why,
              cases[i].words);
    }
    char deep[2 * NN_JSON_MAX_DEPTH + 8];
    size_t n = 0;
    for (int i = 0; i <= NN_JSON_MAX_DEPTH; i++)
        deep[n++] = '[';
    for (int i = 0; i <= NN_JSON_MAX_DEPTH; i++)
        deep[n++] = ']';
    deep[n] = '\0';
    char why[200];
    nn_json *root = parse(deep, why, sizeof why);
    CHECK(root == NULL && strstr(why, "nesting deeper") != NULL, "%d nested arrays: %s", NN_JSON_MAX_DEPTH + 1,
          root ? "accepted" : why);
    nn_json_free(root);
    root = parse(deep + 1, why, sizeof why); /* one level less: unbalanced, but the depth is fine */
    CHECK(root == NULL && strstr(why, "unexpected text after") != NULL, "unbalanced: %s", why);
    nn_json_free(root);
}

int main(void)
{
    test_values();
    test_refusals();
    return tu_finish("test_core_json");
}
