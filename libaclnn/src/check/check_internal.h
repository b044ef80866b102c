/*
 * check_internal.h - what the checking mode's own files share (the .c files of src/check); nothing outside
 * src/check includes it.  Functions named *_locked run under the allocation registry's lock
 * (nn_check_alloc_lock), which also guards memcheck's freed records and initcheck's bitmaps.
 */
#ifndef NN_CHECK_INTERNAL_H
#define NN_CHECK_INTERNAL_H

#include <pthread.h>
#include <sys/types.h>
#include <time.h>

#include "check/nn_check.h"

/* ---- the registry (check_alloc.c) ---- */

/* nn_check_alloc_lock for a signal handler: false when the lock is held. */
bool nn_check_alloc_trylock(void);
/* Waits on `cond` with the registry's lock held (released meanwhile), until `deadline`
 * (CLOCK_REALTIME); pthread_cond_timedwait's result. */
int nn_check_alloc_wait(pthread_cond_t *cond, const struct timespec *deadline);
/* The live allocation whose first extent(size) bytes contain `address` (its mapping may run past
 * its usable size to a page boundary), or NULL. */
nn_check_alloc *nn_check_alloc_find_mapped_locked(const void *address, size_t (*extent)(size_t size));

/* ---- memcheck (check_mem.c) ---- */

/* The freed allocation (still held back from reuse) whose addresses contain `address`, or NULL. */
nn_check_alloc *nn_check_freed_find_locked(const void *address);

/* Report lines for an allocation that was freed: the allocation and where it was freed. */
void nn_check_freed_lines(nn_check_report *report, const nn_check_alloc *alloc);

/* The library's address for `address` inside `alloc` (lib_base + offset). */
static inline void *nn_check_lib_of(const nn_check_alloc *alloc, const void *address)
{
    return (char *)alloc->lib_base + ((uintptr_t)address - alloc->base);
}

/* Writes `length` bytes to fd at `offset`; false on an error. */
bool nn_check_write_file(int fd, const unsigned char *bytes, size_t length, off_t offset);
/* The addresses an allocation of `size` bytes owns in the program's view (its slot): a host
 * access anywhere in them is attributed to it. */
size_t nn_check_slot_length(size_t size);

/* ---- memcheck's fault handler (check_fault.c) ---- */

/* Installs the SIGSEGV/SIGBUS handler that reports host accesses to device memory (once). */
void nn_check_fault_install(void);

/* ---- memcheck's pinned host memory (check_pinned.c) ---- */

/* The host waited for a stream or an event: blocks no queued copy writes any more open again. */
void nn_check_pinned_host_waited(void);
/* From the fault handler: a host access at `address` inside a pinned block a copy writes is
 * reported (true) and the block opened again. */
bool nn_check_pinned_fault_locked(const void *address, const char *kind, const nn_check_trace *at);
/* In a forked child: each pinned block gets a memfd of its own; the number that could not. */
size_t nn_check_pinned_fork_child_locked(void);

/* ---- initcheck (check_init.c) ---- */

/* Frees the allocation's record of written bytes. */
void nn_check_init_forget(nn_check_alloc *alloc);
/* Bytes [offset, offset + length) of `alloc` have been written. */
void nn_check_init_mark_locked(nn_check_alloc *alloc, size_t offset, size_t length);
/* Bytes [dst_offset, +length) of `dst` take the written-ness of [src_offset, +length) of `src`. */
void nn_check_init_copy_locked(nn_check_alloc *dst, size_t dst_offset, const nn_check_alloc *src,
                               size_t src_offset, size_t length);
/* Whether every byte of [offset, offset + length) was written; if not, *first is the first
 * byte that was not. */
bool nn_check_init_written_locked(const nn_check_alloc *alloc, size_t offset, size_t length,
                                  size_t *first);

/* A check reported why it refuses the call in progress on this thread: the status the call then
 * returns is not reported again as a failed call (check.c). */
void nn_check_note_refusal(void);

#endif /* NN_CHECK_INTERNAL_H */
