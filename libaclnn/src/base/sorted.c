/* sorted.c - arrays of records sorted by a leading uintptr_t key (nn_base.h). */
#include <stdlib.h>
#include <string.h>

#include "nn_base.h"

static uintptr_t key_at(const void *records, size_t record_size, size_t index)
{
    uintptr_t key;
    memcpy(&key, (const unsigned char *)records + index * record_size, sizeof key);
    return key;
}

size_t nn_sorted_upper_bound(const void *records, size_t count, size_t record_size, uintptr_t key)
{
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_at(records, record_size, mid) <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void *nn_sorted_insert(void *records, size_t *count, size_t *capacity, size_t min_capacity,
                       size_t record_size, size_t index, const void *record)
{
    if (*count == *capacity) {
        size_t grown = *capacity ? *capacity * 2 : min_capacity;
        void *larger = realloc(records, grown * record_size);
        if (larger == NULL)
            return NULL;
        records = larger;
        *capacity = grown;
    }
    unsigned char *at = (unsigned char *)records + index * record_size;
    memmove(at + record_size, at, (*count - index) * record_size);
    memcpy(at, record, record_size);
    (*count)++;
    return records;
}

void nn_sorted_remove(void *records, size_t *count, size_t record_size, size_t index)
{
    unsigned char *at = (unsigned char *)records + index * record_size;
    memmove(at, at + record_size, (*count - index - 1) * record_size);
    (*count)--;
}
