/* shape.c - element counts, contiguity and printable shapes, shared by the meta objects, the
 * executor and the operators' messages. */
#include <stdio.h>

#include "nn_base.h"

int64_t nn_numel(uint64_t ndim, const int64_t *dims)
{
    int64_t count = 1;
    for (uint64_t i = 0; i < ndim; i++) {
        if (dims[i] < 0 || __builtin_mul_overflow(count, dims[i], &count))
            return -1; /* invalid shape: callers validated it, this is a backstop */
    }
    return count;
}

const char *nn_shape_str(char *buf, size_t buf_size, uint64_t ndim, const int64_t *dims)
{
    if (buf == NULL || buf_size == 0)
        return buf;
    size_t used = 0;
    int n = snprintf(buf, buf_size, "[");
    used = n > 0 ? (size_t)n : 0;
    for (uint64_t i = 0; i < ndim && used < buf_size; i++) {
        n = snprintf(buf + used, buf_size - used, i ? ", %lld" : "%lld", (long long)dims[i]);
        used += n > 0 ? (size_t)n : 0;
    }
    if (used < buf_size)
        snprintf(buf + used, buf_size - used, "]");
    return buf;
}

bool nn_view_is_contiguous(uint64_t ndim, const int64_t *dims, const int64_t *strides)
{
    int64_t expected = 1;
    for (uint64_t i = ndim; i-- > 0;) {
        if (dims[i] == 0)
            return true;
        if (dims[i] == 1)
            continue;
        if (strides[i] != expected)
            return false;
        expected *= dims[i];
    }
    return true;
}
