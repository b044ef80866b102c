/*
 * nn_dump_stats.h - the text helpers of a launch's dump files (exec/dump_stats.c): the bounded
 * appender the index and descriptions are built with, and dump_data "stats"' CSV rows.
 */
#ifndef NN_DUMP_STATS_H
#define NN_DUMP_STATS_H

#include "exec/nn_exec.h"
#include "runtime/nn_runtime.h"

/* Appends formatted text to out[*used..size); stops quietly (truncating) when full. */
void nn_dump_append(char *out, size_t size, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The CSV header for the NN_DUMP_STAT_* `items`, with its newline. */
void nn_dump_stats_header(char *row, size_t size, unsigned items);
/* The CSV row of one tensor argument whose `numel` elements are `data` (row-major; NULL when
 * the tensor is empty), `ordinal` its place among the inputs (outputs), with its newline. */
void nn_dump_stats_row(char *row, size_t size, const nn_operand *op, const void *data, int ordinal,
                       unsigned items);

#endif /* NN_DUMP_STATS_H */
