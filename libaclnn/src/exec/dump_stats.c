/*
 * dump_stats.c - dump_data "stats": one CSV row of statistics per tensor instead of its .npy file,
 * in the layout of CANN's statistics files (runtime:src/dfx/adump/adump/adx_dump_record.cpp):
 *
 *   Input/Output,Index,Data Size,Data Type,Format,Shape,Max Value,Min Value,Avg Value,Count,
 *   Nan Count,Negative Inf Count,Positive Inf Count
 *
 * for the default items; another selection puts Count right after Shape and lists the chosen
 * items in that order (l2norm last).  Data types and formats are named as CANN's tables name them
 * ("DT_FLOAT", "ND"), the shape as "2x3x4" ("-" for a scalar).  Floating values print as C++'s
 * default stream format (%g, 6 digits); integer tensors print integers (the average truncated).
 *
 * What the card's kernel does with NaN and Inf in Max/Min/Avg/L2norm is not in the sources; here
 * NaN elements are left out of them (they are counted in Nan Count), infinities are included, and
 * the sums are in double.  Complex tensors get "NA" as CANN writes for statistics it cannot make.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "exec/nn_dump_stats.h"

typedef struct {
    double max, min, sum, sum_squares;
    int64_t nan, neg_inf, pos_inf, counted; /* counted: the non-NaN elements */
} tensor_stats;

static bool is_integer(aclDataType dtype)
{
    switch (dtype) {
    case ACL_INT8: case ACL_UINT8: case ACL_INT16: case ACL_UINT16: case ACL_INT32: case ACL_UINT32:
    case ACL_INT64: case ACL_UINT64: case ACL_BOOL:
        return true;
    default:
        return false;
    }
}

/* Element i as a double; false for a dtype without a real value (complex, sub-byte). */
static bool element(const void *data, aclDataType dtype, int64_t i, double *value)
{
    switch (dtype) {
    case ACL_FLOAT: *value = ((const float *)data)[i]; return true;
    case ACL_FLOAT16: *value = nn_f16_to_f32(((const uint16_t *)data)[i]); return true;
    case ACL_BF16: *value = nn_bf16_to_f32(((const uint16_t *)data)[i]); return true;
    case ACL_DOUBLE: *value = ((const double *)data)[i]; return true;
    case ACL_INT8: *value = ((const int8_t *)data)[i]; return true;
    case ACL_UINT8: *value = ((const uint8_t *)data)[i]; return true;
    case ACL_BOOL: *value = ((const uint8_t *)data)[i] != 0; return true;
    case ACL_INT16: *value = ((const int16_t *)data)[i]; return true;
    case ACL_UINT16: *value = ((const uint16_t *)data)[i]; return true;
    case ACL_INT32: *value = ((const int32_t *)data)[i]; return true;
    case ACL_UINT32: *value = ((const uint32_t *)data)[i]; return true;
    case ACL_INT64: *value = (double)((const int64_t *)data)[i]; return true;
    case ACL_UINT64: *value = (double)((const uint64_t *)data)[i]; return true;
    default: return false;
    }
}

static bool gather_stats(const void *data, aclDataType dtype, int64_t numel, tensor_stats *st)
{
    memset(st, 0, sizeof *st);
    st->max = -INFINITY;
    st->min = INFINITY;
    double value;
    if (numel > 0 && !element(data, dtype, 0, &value))
        return false;
    for (int64_t i = 0; i < numel; i++) {
        element(data, dtype, i, &value);
        if (isnan(value)) {
            st->nan++;
            continue;
        }
        st->neg_inf += value == -INFINITY;
        st->pos_inf += value == INFINITY;
        st->max = value > st->max ? value : st->max;
        st->min = value < st->min ? value : st->min;
        st->sum += value;
        st->sum_squares += value * value;
        st->counted++;
    }
    return true;
}

static const char *csv_dtype_name(aclDataType dtype)
{
    switch (dtype) {
    case ACL_FLOAT: return "DT_FLOAT";
    case ACL_FLOAT16: return "DT_FLOAT16";
    case ACL_BF16: return "DT_BF16";
    case ACL_DOUBLE: return "DT_DOUBLE";
    case ACL_INT8: return "DT_INT8";
    case ACL_UINT8: return "DT_UINT8";
    case ACL_INT16: return "DT_INT16";
    case ACL_UINT16: return "DT_UINT16";
    case ACL_INT32: return "DT_INT32";
    case ACL_UINT32: return "DT_UINT32";
    case ACL_INT64: return "DT_INT64";
    case ACL_UINT64: return "DT_UINT64";
    case ACL_BOOL: return "DT_BOOL";
    case ACL_COMPLEX64: return "DT_COMPLEX64";
    case ACL_COMPLEX128: return "DT_COMPLEX128";
    default: return "UNKNOW"; /* CANN's spelling for a type its table lacks */
    }
}

void nn_dump_append(char *row, size_t size, size_t *used, const char *fmt, ...)
{
    if (*used >= size)
        return;
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(row + *used, size - *used, fmt, args);
    va_end(args);
    if (n > 0)
        *used = *used + (size_t)n < size ? *used + (size_t)n : size;
}

/* A value column: integers for integer tensors, %g otherwise. */
static void append_value(char *row, size_t size, size_t *used, double value, bool integer)
{
    if (integer && isfinite(value))
        nn_dump_append(row, size, used, ",%lld", (long long)value);
    else
        nn_dump_append(row, size, used, ",%g", value);
}

static bool compatible_layout(unsigned items) { return items == NN_DUMP_STAT_DEFAULT; }

void nn_dump_stats_header(char *row, size_t size, unsigned items)
{
    static const char *const columns[] = {",Max Value", ",Min Value", ",Avg Value", ",Nan Count",
                                          ",Negative Inf Count", ",Positive Inf Count", ",l2norm"};
    size_t used = 0;
    nn_dump_append(row, size, &used, "Input/Output,Index,Data Size,Data Type,Format,Shape%s",
                compatible_layout(items) ? "" : ",Count");
    for (unsigned k = 0; k < 7; k++) {
        if (compatible_layout(items) && k == 3)
            nn_dump_append(row, size, &used, ",Count");
        if (items & (1u << k))
            nn_dump_append(row, size, &used, "%s", columns[k]);
    }
    nn_dump_append(row, size, &used, "\n");
}

/* Statistic k of st, appended as a column. */
static void append_stat(char *row, size_t size, size_t *used, unsigned k, const tensor_stats *st, bool integer)
{
    bool any = st->counted > 0;
    switch (k) {
    case 0: append_value(row, size, used, any ? st->max : NAN, integer); break;
    case 1: append_value(row, size, used, any ? st->min : NAN, integer); break;
    case 2: append_value(row, size, used, any ? st->sum / (double)st->counted : NAN, integer); break;
    case 3: nn_dump_append(row, size, used, ",%lld", (long long)st->nan); break;
    case 4: nn_dump_append(row, size, used, ",%lld", (long long)st->neg_inf); break;
    case 5: nn_dump_append(row, size, used, ",%lld", (long long)st->pos_inf); break;
    default: append_value(row, size, used, sqrt(st->sum_squares), false); break;
    }
}

void nn_dump_stats_row(char *row, size_t size, const nn_operand *op, const void *data, int ordinal,
                       unsigned items)
{
    size_t used = 0;
    nn_dump_append(row, size, &used, "%s,%d,%lld,%s,%s,", op->is_output ? "Output" : "Input", ordinal,
                (long long)op->numel * (long long)nn_dtype_size(op->dtype), csv_dtype_name(op->dtype),
                nn_format_name(op->format));
    if (op->ndim == 0)
        nn_dump_append(row, size, &used, "-");
    for (uint64_t d = 0; d < op->ndim; d++)
        nn_dump_append(row, size, &used, "%s%lld", d ? "x" : "", (long long)op->dims[d]);
    tensor_stats st;
    bool known = gather_stats(data, op->dtype, data != NULL ? op->numel : 0, &st);
    bool integer = is_integer(op->dtype);
    if (!compatible_layout(items))
        nn_dump_append(row, size, &used, ",%lld", (long long)op->numel);
    for (unsigned k = 0; k < 7; k++) {
        if (compatible_layout(items) && k == 3)
            nn_dump_append(row, size, &used, ",%lld", (long long)op->numel);
        if (!(items & (1u << k)))
            continue;
        if (known)
            append_stat(row, size, &used, k, &st, integer);
        else
            nn_dump_append(row, size, &used, ",NA");
    }
    nn_dump_append(row, size, &used, "\n");
}
