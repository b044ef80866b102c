/*
 * check_init.c - initcheck's record of which bytes of each device allocation were written
 * (docs/checking.md "initcheck"): one bit per byte, made on the first write (an allocation
 * nobody wrote has none), kept in the allocation's tool_state slot.  Copies in and fills set
 * bits, device-to-device copies carry the source's bits, operator outputs set the bytes their
 * views cover (check_launch.c), all at the time the call is made: the order is the program's.
 *
 * Cost: size/8 bytes per written allocation; a check or mark of n bytes touches n/8 bytes of
 * bitmap, a word at a time.  The written bytes that start the allocation are kept as a length
 * (`prefix`) instead of bits: a tensor copied in whole, or an output that covers its memory, is
 * then checked and marked in constant time.  A large operator's input scan and output fill were
 * most of what initcheck cost it (a Prelu on 16 Mi floats, one thread: 21 ms under memcheck,
 * 30 ms with initcheck as well).
 */
#include <stdlib.h>
#include <string.h>

#include "check/check_internal.h"

#define SLOT 1 /* NN_CHECK_INITCHECK is bit 1 */

typedef struct init_state {
    size_t prefix;        /* bytes [0, prefix) are written, whatever `bits` say */
    unsigned char bits[]; /* one per byte, for the bytes from `prefix` on */
} init_state;

/* The state of an allocation whose bitmap could not be allocated: its bytes are unknown from
 * then on and never reported (no false alarm after an out-of-memory). */
static init_state g_unknown;

static init_state *state_of(const nn_check_alloc *alloc)
{
    return alloc->tool_state[SLOT] == &g_unknown ? NULL : alloc->tool_state[SLOT];
}

static bool is_unknown(const nn_check_alloc *alloc)
{
    return alloc->tool_state[SLOT] == &g_unknown;
}

static init_state *state_make(nn_check_alloc *alloc)
{
    if (alloc->tool_state[SLOT] == NULL) {
        alloc->tool_state[SLOT] = calloc(sizeof(init_state) + (alloc->size + 7) / 8 + 1, 1);
        if (alloc->tool_state[SLOT] == NULL)
            alloc->tool_state[SLOT] = &g_unknown;
    }
    return state_of(alloc);
}

/* The prefix written out as bits, before some bits are cleared. */
static void spell_out(init_state *state)
{
    memset(state->bits, 0xff, state->prefix / 8);
    for (size_t i = state->prefix / 8 * 8; i < state->prefix; ++i)
        state->bits[i / 8] |= (unsigned char)(1u << (i % 8));
    state->prefix = 0;
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
    init_state *state = length > 0 ? state_make(alloc) : NULL;
    if (state == NULL || offset + length <= state->prefix)
        return;
    if (offset <= state->prefix)
        state->prefix = offset + length;
    else
        set_bits(state->bits, offset, length, true);
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
    const init_state *from_state = state_of(src);
    if (length == 0 || (from_state == NULL && state_of(dst) == NULL))
        return; /* nothing written on either side: stays unwritten */
    if (from_state != NULL && src_offset + length <= from_state->prefix) {
        nn_check_init_mark_locked(dst, dst_offset, length);
        return;
    }
    init_state *to_state = state_make(dst);
    if (to_state == NULL)
        return;
    if (dst_offset < to_state->prefix)
        spell_out(to_state); /* bits inside the prefix may be cleared */
    if (from_state != NULL && src_offset < from_state->prefix)
        spell_out((init_state *)from_state); /* the bits copied must say it all */
    unsigned char *to = to_state->bits;
    if (from_state == NULL) {
        set_bits(to, dst_offset, length, false);
        return;
    }
    const unsigned char *from = from_state->bits;
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
    const init_state *state = state_of(alloc);
    if (state == NULL) {
        *first = offset;
        return false;
    }
    if (offset + length <= state->prefix)
        return true;
    const unsigned char *bits = state->bits;
    size_t i = offset > state->prefix ? offset : state->prefix, end = offset + length;
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
