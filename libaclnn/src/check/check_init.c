/*
 * check_init.c - initcheck's record of which bytes of each device allocation were written
 * (docs/checking.md "initcheck"): one bit per byte, made on the first write (an allocation
 * nobody wrote has none), kept in the allocation's tool_state slot.  Copies in and fills set
 * bits, device-to-device copies carry the source's bits, operator outputs set the bytes their
 * views cover (check_launch.c), all at the time the call is made: the order is the program's.
 *
 * Cost: size/8 bytes per written allocation; a check or mark of n bytes touches n/8 bytes of
 * bitmap, a word at a time.
 */
#include <stdlib.h>
#include <string.h>

#include "check/check_internal.h"

#define SLOT 1 /* NN_CHECK_INITCHECK is bit 1 */

/* The state of an allocation whose bitmap could not be allocated: its bytes are unknown from
 * then on and never reported (no false alarm after an out-of-memory). */
static unsigned char g_unknown;

static unsigned char *bitmap_of(const nn_check_alloc *alloc)
{
    return alloc->tool_state[SLOT] == &g_unknown ? NULL : alloc->tool_state[SLOT];
}

static bool is_unknown(const nn_check_alloc *alloc)
{
    return alloc->tool_state[SLOT] == &g_unknown;
}

static unsigned char *bitmap_make(nn_check_alloc *alloc)
{
    if (alloc->tool_state[SLOT] == NULL) {
        alloc->tool_state[SLOT] = calloc((alloc->size + 7) / 8 + 1, 1);
        if (alloc->tool_state[SLOT] == NULL)
            alloc->tool_state[SLOT] = &g_unknown;
    }
    return bitmap_of(alloc);
}

void nn_check_init_forget(nn_check_alloc *alloc)
{
    if (!is_unknown(alloc))
        free(alloc->tool_state[SLOT]);
    alloc->tool_state[SLOT] = NULL;
}

/* Sets (value true) or clears bits [first, first + count). */
static void set_bits(unsigned char *bits, size_t first, size_t count, bool value)
{
    while (count > 0 && first % 8 != 0) {
        if (value)
            bits[first / 8] |= (unsigned char)(1u << (first % 8));
        else
            bits[first / 8] &= (unsigned char)~(1u << (first % 8));
        ++first;
        --count;
    }
    memset(bits + first / 8, value ? 0xff : 0, count / 8);
    first += count / 8 * 8;
    for (count %= 8; count > 0; --count, ++first) {
        if (value)
            bits[first / 8] |= (unsigned char)(1u << (first % 8));
        else
            bits[first / 8] &= (unsigned char)~(1u << (first % 8));
    }
}

static bool bit(const unsigned char *bits, size_t index)
{
    return (bits[index / 8] >> (index % 8)) & 1u;
}

static size_t clamp(const nn_check_alloc *alloc, size_t offset, size_t length)
{
    if (offset >= alloc->size)
        return 0;
    return length < alloc->size - offset ? length : alloc->size - offset;
}

void nn_check_init_mark_locked(nn_check_alloc *alloc, size_t offset, size_t length)
{
    length = clamp(alloc, offset, length);
    unsigned char *bits = length > 0 ? bitmap_make(alloc) : NULL;
    if (bits != NULL)
        set_bits(bits, offset, length, true);
}

void nn_check_init_copy_locked(nn_check_alloc *dst, size_t dst_offset, const nn_check_alloc *src,
                               size_t src_offset, size_t length)
{
    length = clamp(dst, dst_offset, clamp(src, src_offset, length));
    if (is_unknown(src) && length > 0) { /* unknown bytes make the destination unknown too */
        nn_check_init_forget(dst);
        dst->tool_state[SLOT] = &g_unknown;
        return;
    }
    const unsigned char *from = bitmap_of(src);
    if (length == 0 || (from == NULL && bitmap_of(dst) == NULL))
        return; /* nothing written on either side: stays unwritten */
    unsigned char *to = bitmap_make(dst);
    if (to == NULL)
        return;
    if (from == NULL) {
        set_bits(to, dst_offset, length, false);
        return;
    }
    if (src_offset % 8 == dst_offset % 8) { /* the usual case: both 64-byte aligned */
        size_t head = (8 - dst_offset % 8) % 8;
        head = head < length ? head : length;
        for (size_t i = 0; i < head; ++i)
            set_bits(to, dst_offset + i, 1, bit(from, src_offset + i));
        size_t bytes = (length - head) / 8;
        memmove(to + (dst_offset + head) / 8, from + (src_offset + head) / 8, bytes);
        for (size_t i = head + bytes * 8; i < length; ++i)
            set_bits(to, dst_offset + i, 1, bit(from, src_offset + i));
        return;
    }
    for (size_t i = 0; i < length; ++i) /* overlapping unaligned copies are left to memmove's order */
        set_bits(to, dst_offset + i, 1, bit(from, src_offset + i));
}

bool nn_check_init_written_locked(const nn_check_alloc *alloc, size_t offset, size_t length,
                                  size_t *first)
{
    length = clamp(alloc, offset, length);
    if (length == 0 || is_unknown(alloc))
        return true;
    const unsigned char *bits = bitmap_of(alloc);
    if (bits == NULL) {
        *first = offset;
        return false;
    }
    size_t i = offset, end = offset + length;
    while (i < end && i % 64 != 0) {
        if (!bit(bits, i)) {
            *first = i;
            return false;
        }
        ++i;
    }
    while (i + 64 <= end) { /* 64 bytes of memory per word of bitmap */
        uint64_t word;
        memcpy(&word, bits + i / 8, sizeof word);
        if (word != UINT64_MAX)
            break;
        i += 64;
    }
    for (; i < end; ++i) {
        if (!bit(bits, i)) {
            *first = i;
            return false;
        }
    }
    return true;
}
