/*
 * exec_prof.c - what a profile records of an operator launch: its name and its inputs' shapes
 * and dtypes, as the label of the task the launch queues (runtime/prof_trace.c).  Only runs
 * while a profiling session records (nn_prof_active).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/nn_base.h"
#include "exec/nn_executor_impl.h"
#include "runtime/nn_runtime.h"

/* Room for one input's text: "[" + NN_MAX_DIMS numbers of up to 20 digits and commas + "];". */
#define INPUT_TEXT_MAX (NN_MAX_DIMS * 21 + 4)

/* Appends `text` to the growing string *out (length *len); false when out of memory. */
static bool append_text(char **out, size_t *len, const char *text)
{
    size_t add = strlen(text);
    char *grown = realloc(*out, *len + add + 1);
    if (grown == NULL)
        return false;
    memcpy(grown + *len, text, add + 1);
    *out = grown;
    *len += add;
    return true;
}

/* "[2,3]" (a scalar: "[]"; an absent optional input: "none"). */
static void shape_text(const nn_operand *op, char *text, size_t size)
{
    if (op->handle == NULL) {
        snprintf(text, size, "none");
        return;
    }
    size_t used = (size_t)snprintf(text, size, "[");
    for (uint64_t d = 0; d < op->ndim && used < size; d++)
        used += (size_t)snprintf(text + used, size - used, d ? ",%lld" : "%lld", (long long)op->dims[d]);
    if (used < size)
        snprintf(text + used, size - used, "]");
}

void nn_exec_prof_label(const char *op_name, const nn_operand *operands, int num_inputs)
{
    if (!nn_prof_active())
        return;
    char *shapes = NULL, *dtypes = NULL;
    size_t shapes_len = 0, dtypes_len = 0;
    bool ok = append_text(&shapes, &shapes_len, "") && append_text(&dtypes, &dtypes_len, "");
    for (int i = 0; ok && i < num_inputs; i++) {
        char text[INPUT_TEXT_MAX];
        shape_text(&operands[i], text, sizeof text);
        const char *dtype = operands[i].handle != NULL ? nn_dtype_name(operands[i].dtype) : "none";
        ok = (i == 0 || (append_text(&shapes, &shapes_len, ";") && append_text(&dtypes, &dtypes_len, ";"))) &&
             append_text(&shapes, &shapes_len, text) && append_text(&dtypes, &dtypes_len, dtype);
    }
    if (!ok) { /* the launch is labelled without its inputs rather than not at all */
        free(shapes);
        free(dtypes);
        shapes = dtypes = NULL;
    }
    nn_prof_label_launch(op_name, shapes, dtypes);
}
