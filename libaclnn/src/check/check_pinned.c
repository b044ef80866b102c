/*
 * check_pinned.c - memcheck's aclrtMallocHost memory (nn_check.h; docs/checking.md, "Pinned
 * host memory").
 *
 * The program may read and write its pinned buffers, except while an asynchronous copy writes
 * one: a host read of the destination of an aclrtMemcpyAsync(..., ACL_MEMCPY_DEVICE_TO_HOST)
 * before the program waited for it reads old or partial data on a card.  So under memcheck each
 * aclrtMallocHost block is a memfd mapped twice, read-write for the program and for the library;
 * queuing a copy into it makes the program's view PROT_NONE until the copy has run and the host
 * has waited for a stream or an event, while the stream's worker writes through the library's
 * view.  A host access meanwhile faults; check_mem.c's handler asks nn_check_pinned_fault_locked,
 * which reports it, opens the block again and lets the access go on (a card would read the old
 * bytes: no reason to end the program).
 *
 * Blocks are few (staging buffers), so they live in a small array searched in order, under the
 * allocation registry's lock.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check/check_internal.h"

typedef struct pinned_block {
    uintptr_t base;        /* the program's view */
    size_t length;         /* whole pages */
    size_t size;           /* what aclrtMallocHost was asked for */
    char *lib;             /* the library's view */
    nn_check_trace where;  /* aclrtMallocHost's caller */
    nn_check_trace queued; /* the newest copy into it */
    unsigned writes;       /* queued copies into it that have not run */
    bool closed;           /* the program's view is PROT_NONE */
} pinned_block;

static pinned_block *g_blocks;
static size_t g_count, g_capacity;

static size_t page_bytes(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

static pinned_block *find_locked(const void *address)
{
    for (size_t i = 0; i < g_count; ++i)
        if ((uintptr_t)address - g_blocks[i].base < g_blocks[i].length)
            return &g_blocks[i];
    return NULL;
}

void *nn_check_pinned_alloc(size_t size)
{
    const size_t length = (size + page_bytes() - 1) / page_bytes() * page_bytes();
    int fd = memfd_create("aclnn-pinned-memory", MFD_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *lib = ftruncate(fd, (off_t)length) == 0
                    ? mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    char *program = lib != MAP_FAILED ? mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                                      : MAP_FAILED;
    close(fd);
    pinned_block block = {(uintptr_t)program, length, size, lib, {{0}, 0}, {{0}, 0}, 0, false};
    nn_check_capture(&block.where);
    nn_check_alloc_lock();
    pinned_block *grown = program != MAP_FAILED
                              ? nn_sorted_insert(g_blocks, &g_count, &g_capacity, 8, sizeof block, g_count, &block)
                              : NULL;
    if (grown != NULL)
        g_blocks = grown;
    nn_check_alloc_unlock();
    if (grown != NULL)
        return program;
    if (program != MAP_FAILED)
        munmap(program, length);
    if (lib != MAP_FAILED)
        munmap(lib, length);
    return NULL;
}

bool nn_check_pinned_free(void *base)
{
    nn_check_alloc_lock();
    pinned_block *block = find_locked(base);
    pinned_block gone = block != NULL ? *block : (pinned_block){0};
    if (block != NULL)
        nn_sorted_remove(g_blocks, &g_count, sizeof *block, (size_t)(block - g_blocks));
    nn_check_alloc_unlock();
    if (block == NULL)
        return false;
    munmap((void *)gone.base, gone.length);
    munmap(gone.lib, gone.length);
    return true;
}

void *nn_check_pinned_lib_addr(const void *address)
{
    if (!nn_check_on(NN_CHECK_MEMCHECK))
        return (void *)address;
    nn_check_alloc_lock();
    const pinned_block *block = find_locked(address);
    void *lib = block != NULL ? block->lib + ((uintptr_t)address - block->base) : (void *)address;
    nn_check_alloc_unlock();
    return lib;
}

bool nn_check_pinned_write_queued(const void *dst)
{
    if (!nn_check_on(NN_CHECK_MEMCHECK))
        return false;
    nn_check_alloc_lock();
    pinned_block *block = find_locked(dst);
    if (block != NULL) {
        ++block->writes;
        nn_check_capture(&block->queued);
        if (!block->closed)
            block->closed = mprotect((void *)block->base, block->length, PROT_NONE) == 0;
    }
    nn_check_alloc_unlock();
    return block != NULL;
}

void nn_check_pinned_write_done(const void *dst)
{
    nn_check_alloc_lock();
    pinned_block *block = find_locked(dst);
    if (block != NULL && block->writes > 0)
        --block->writes;
    nn_check_alloc_unlock();
}

void nn_check_pinned_host_waited(void)
{
    if (!nn_check_on(NN_CHECK_MEMCHECK))
        return;
    nn_check_alloc_lock();
    for (size_t i = 0; i < g_count; ++i) {
        pinned_block *block = &g_blocks[i];
        if (block->closed && block->writes == 0)
            block->closed = mprotect((void *)block->base, block->length, PROT_READ | PROT_WRITE) != 0;
    }
    nn_check_alloc_unlock();
}

bool nn_check_pinned_fault_locked(const void *address, const char *kind, const nn_check_trace *at)
{
    pinned_block *block = find_locked(address);
    if (block == NULL || !block->closed)
        return false;
    nn_check_report *report = nn_check_begin(NN_CHECK_ERROR, NN_CHECK_MEMCHECK,
                                             "host access to pinned memory an asynchronous copy writes");
    nn_check_line(report, "access:", "host %s at %p, %zu bytes into the %zu-byte aclrtMallocHost block at %p",
                  kind, address, (size_t)((uintptr_t)address - block->base), block->size, (void *)block->base);
    nn_check_line(report, "at:", "the program's code:");
    nn_check_trace_lines(report, at);
    nn_check_line(report, "object:", "the block, from aclrtMallocHost at:");
    nn_check_trace_lines(report, &block->where);
    nn_check_line(report, "other:", "aclrtMemcpyAsync into it (%s), queued at:",
                  block->writes > 0 ? "not run yet" : "run, but the host has not waited for it");
    nn_check_trace_lines(report, &block->queued);
    nn_check_line(report, "advice:", "wait for the copy (aclrtSynchronizeStream on its stream, or "
                  "aclrtSynchronizeEvent on an event recorded after it) before reading the buffer: "
                  "on a card it holds old or partial data until then");
    nn_check_end(report);
    /* open it again so that the access goes on, as it would on a card */
    block->closed = mprotect((void *)block->base, block->length, PROT_READ | PROT_WRITE) != 0;
    return true;
}

/* A forked child's pinned memory is its own copy, as without checking: each block moves to a
 * memfd of its own holding the same bytes, mapped over both views in place. */
size_t nn_check_pinned_fork_child_locked(void)
{
    size_t failures = 0;
    for (size_t i = 0; i < g_count; ++i) {
        pinned_block *block = &g_blocks[i];
        int fd = memfd_create("aclnn-pinned-memory", MFD_CLOEXEC);
        bool ok = fd >= 0 && ftruncate(fd, (off_t)block->length) == 0 &&
                  nn_check_write_file(fd, (const unsigned char *)block->lib, block->length, 0) &&
                  mmap(block->lib, block->length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED &&
                  mmap((void *)block->base, block->length, block->closed ? PROT_NONE : PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED;
        if (fd >= 0)
            close(fd);
        failures += !ok;
    }
    return failures;
}
