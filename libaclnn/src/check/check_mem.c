/*
 * check_mem.c - memcheck's device memory (nn_check.h, docs/checking.md "memcheck").
 *
 * Under memcheck device memory is carved from arenas: one memfd mapped twice, PROT_NONE where
 * the program holds its addresses, read-write at the library's view (nn_check_lib_addr), so the
 * process has two mappings per arena however many allocations are alive (one mapping per view
 * and allocation ran into vm.max_map_count at ~32,700 live blocks).  A host load or store through
 * the program's address faults; the SIGSEGV/SIGBUS handler installed here names the allocation
 * and ends the process.  A fault anywhere else goes to the handler that was installed before ours.
 *
 * Each allocation takes a slot of whole pages (2 MiB aligned from 2 MiB up) of one size class;
 * a slot of the same class is taken again before the arena's top moves.  A freed allocation's
 * slot is held back for a while (up to QUARANTINE_BYTES and QUARANTINE_COUNT, oldest first), as
 * AddressSanitizer holds freed memory back: its addresses are not handed out again at once, so a
 * later use names the freed allocation, and a task queued before the free still writes memory
 * that exists.  Leaving the quarantine, the slot goes back to its class and its pages to the
 * system (PUNCH_HOLE), but for a few small slots kept warm for the next allocations of their
 * class.  Nothing is unmapped while the process lives.
 *
 * The SIGSEGV/SIGBUS handler itself is in check_fault.c; this file installs it with the fork
 * handlers at the first checked allocation.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check/check_internal.h"

#define QUARANTINE_BYTES ((size_t)256 << 20)
#define QUARANTINE_COUNT 4096
#define HUGE_BYTES ((size_t)2 << 20)
/* An arena reserves this much address space per view (less where the address space is small:
 * halved until the reservation succeeds); an allocation larger gets an arena of its own size. */
#define ARENA_BYTES ((size_t)1 << 40)
#define ARENA_MIN_BYTES ((size_t)1 << 30)
#define MAX_ARENAS 64
/* Size classes: counts of units (pages below 2 MiB, 2 MiB blocks from there) up to 8 exactly,
 * then four classes per doubling (a slot wastes at most a quarter of its address space, never
 * memory: the pages past the allocation are never touched). */
#define EXACT_UNITS 8
#define LARGE_CLASS_BASE 128
#define CLASS_COUNT (2 * LARGE_CLASS_BASE)
/* From this size up, an allocation is first tried as the unchecked runtime makes it (private
 * memory the kernel's overcommit rules must accept), so that a size the system cannot back fails
 * as it fails without checking, though the arena's memfd could map it. */
#define PROBE_BYTES ((size_t)1 << 20)
/* Free slots up to WARM_SLOT_BYTES keep their pages while the kept ones total WARM_BYTES at
 * most; every other freed slot gives its pages back when it leaves the quarantine. */
#define WARM_SLOT_BYTES ((size_t)64 << 10)
#define WARM_BYTES ((size_t)32 << 20)

static size_t page_bytes(void)
{
    static size_t page;
    if (page == 0)
        page = (size_t)sysconf(_SC_PAGESIZE);
    return page;
}

/* The bytes of an allocation of `size` bytes up to its last page. */
static size_t mapped_length(size_t size)
{
    size_t page = page_bytes();
    return (size + page - 1) / page * page;
}

/* ---- size classes ---------------------------------------------------------------------------- */

/* `units` rounded up to its class; *index gets the class's number among classes of one unit. */
static size_t round_units(size_t units, size_t *index)
{
    if (units <= EXACT_UNITS) {
        *index = units - 1;
        return units;
    }
    int top_bit = 63 - __builtin_clzll((unsigned long long)(units - 1)); /* 2^top_bit < units */
    size_t step = (size_t)1 << (top_bit - 2);
    size_t rounded = (units + step - 1) / step * step;
    *index = EXACT_UNITS + (size_t)(top_bit - 3) * 4 + (rounded / step - 5);
    return rounded;
}

/* The slot an allocation of `size` bytes takes: its length, alignment and class. */
typedef struct slot_shape {
    size_t length, align, index;
} slot_shape;

static slot_shape shape_of(size_t size)
{
    slot_shape shape;
    if (size >= HUGE_BYTES) { /* as the runtime places blocks of 2 MiB and more (memory.c) */
        shape.length = round_units((size + HUGE_BYTES - 1) / HUGE_BYTES, &shape.index) * HUGE_BYTES;
        shape.align = HUGE_BYTES;
        shape.index += LARGE_CLASS_BASE;
    } else {
        shape.length = round_units(mapped_length(size) / page_bytes(), &shape.index) * page_bytes();
        shape.align = page_bytes();
    }
    return shape;
}

/* The addresses an allocation of `size` bytes owns in the program's view: a host access
 * anywhere in them is attributed to it. */
size_t nn_check_slot_length(size_t size)
{
    return shape_of(size).length;
}

/* ---- arenas (under the registry lock) ---------------------------------------------------------- */

typedef struct arena {
    int fd;            /* the memfd both views map (kept: holes are punched through it) */
    char *program;     /* PROT_NONE: the addresses the program receives */
    char *library;     /* read-write: where the library reads and writes the bytes */
    size_t length;     /* of each view and of the memfd */
    size_t top;        /* slots are carved from [0, top); the rest was never handed out */
} arena;

typedef struct slot_stack {
    uintptr_t *programs; /* the program's address of each free slot of the class */
    size_t count, capacity;
} slot_stack;

static arena g_arenas[MAX_ARENAS];
static size_t g_arena_count;
static slot_stack g_free_slots[CLASS_COUNT];

/* Maps `length` bytes of fd at an address aligned to HUGE_BYTES: reserve more, map over the
 * aligned part, give back the rest. */
static char *map_aligned(int fd, size_t length, int prot)
{
    char *reserved = mmap(NULL, length + HUGE_BYTES, PROT_NONE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (reserved == MAP_FAILED)
        return NULL;
    char *start = (char *)(((uintptr_t)reserved + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1));
    if (mmap(start, length, prot, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
        munmap(reserved, length + HUGE_BYTES);
        return NULL;
    }
    if (start > reserved)
        munmap(reserved, (size_t)(start - reserved));
    munmap(start + length, (size_t)(reserved + HUGE_BYTES - start));
    return start;
}

/* A new arena of `length` bytes; false when neither the memfd nor both views can be had. */
static bool arena_create(arena *made, size_t length)
{
    int fd = memfd_create("aclnn-device-memory", MFD_CLOEXEC);
    if (fd < 0)
        return false;
    char *library = ftruncate(fd, (off_t)length) == 0 ? map_aligned(fd, length, PROT_READ | PROT_WRITE) : NULL;
    char *program = library != NULL ? map_aligned(fd, length, PROT_NONE) : NULL;
    if (program == NULL) {
        if (library != NULL)
            munmap(library, length);
        close(fd);
        return false;
    }
    (void)madvise(library, length, MADV_HUGEPAGE); /* where shmem may use huge pages */
    *made = (arena){fd, program, library, length, 0};
    return true;
}

/* Adds an arena with room for a slot of `needed` bytes: ARENA_BYTES, halved while the address
 * space refuses it, or `needed` itself when larger. */
static arena *arena_add(size_t needed)
{
    if (g_arena_count == MAX_ARENAS)
        return NULL;
    arena *made = &g_arenas[g_arena_count];
    for (size_t length = ARENA_BYTES; length >= ARENA_MIN_BYTES; length /= 2) {
        if (length < needed)
            break;
        if (arena_create(made, length)) {
            ++g_arena_count;
            return made;
        }
    }
    if (needed > ARENA_BYTES && arena_create(made, needed)) {
        ++g_arena_count;
        return made;
    }
    return NULL;
}

static arena *arena_of(uintptr_t program)
{
    for (size_t i = 0; i < g_arena_count; ++i)
        if (program - (uintptr_t)g_arenas[i].program < g_arenas[i].length)
            return &g_arenas[i];
    return NULL;
}

/* A slot carved from the newest arena's top (a new arena when it has no room). */
static uintptr_t carve_slot(slot_shape shape)
{
    arena *newest = g_arena_count > 0 ? &g_arenas[g_arena_count - 1] : NULL;
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (newest != NULL) {
            size_t start = (newest->top + shape.align - 1) / shape.align * shape.align;
            if (start <= newest->length && shape.length <= newest->length - start) {
                newest->top = start + shape.length;
                return (uintptr_t)newest->program + start;
            }
        }
        newest = arena_add(shape.length);
    }
    return 0;
}

/* Free slots whose pages were kept (WARM_BYTES at most, small slots only) carry this mark in
 * their address (slots are page aligned): punching a hole, and faulting the pages back in when
 * the slot is taken again, cost an allocate/free loop more than the loop itself. */
#define WARM_MARK ((uintptr_t)1)
static size_t g_warm_bytes;

static uintptr_t take_slot(slot_shape shape)
{
    slot_stack *stack = &g_free_slots[shape.index];
    if (stack->count == 0)
        return carve_slot(shape);
    uintptr_t slot = stack->programs[--stack->count];
    if ((slot & WARM_MARK) != 0)
        g_warm_bytes -= shape.length;
    return slot & ~WARM_MARK;
}

/* Gives a slot back to its class; false (the slot is lost to reuse) when out of memory. */
static bool put_slot(uintptr_t program, slot_shape shape)
{
    slot_stack *stack = &g_free_slots[shape.index];
    if (stack->count == stack->capacity) {
        size_t capacity = stack->capacity > 0 ? 2 * stack->capacity : 64;
        uintptr_t *grown = realloc(stack->programs, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        stack->programs = grown;
        stack->capacity = capacity;
    }
    stack->programs[stack->count++] = program;
    return true;
}

/* Maps the arena's file back over both views of a slot; false if either mapping failed. */
static bool map_arena_back(uintptr_t program, void *library, size_t length)
{
    arena *home = arena_of(program);
    off_t offset = (off_t)(program - (uintptr_t)home->program);
    return mmap((void *)program, length, PROT_NONE, MAP_SHARED | MAP_FIXED, home->fd, offset) != MAP_FAILED &&
           mmap(library, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, home->fd, offset) != MAP_FAILED;
}

/* The library's view of a slot of 2 MiB and more becomes private anonymous memory advised for
 * transparent huge pages, as the unchecked runtime's blocks are (memory.c): shmem gets none
 * where /sys/kernel/mm/transparent_hugepage/shmem_enabled says never, and a large operator ran
 * 1.5x slower on 4 KiB pages.  The program's view stays the arena's PROT_NONE pages: no host
 * access through it can succeed, so the two need not share memory.  Marked views_replaced, the
 * slot maps the arena back when it is recycled (which gives the pages back). */
static bool huge_library_view(void *library, size_t size)
{
    const size_t length = shape_of(size).length;
    if (size < HUGE_BYTES || mmap(library, length, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED)
        return false;
    (void)madvise(library, length, MADV_HUGEPAGE);
    return true;
}

/* The pages of a slot leaving the quarantine go back to the system; views an IPC export moved
 * onto a file of its own (nn_check_device_views_replaced), or a large slot's anonymous library
 * view, map the arena again. */
static void recycle_slot(const nn_check_alloc *alloc)
{
    slot_shape shape = shape_of(alloc->size);
    arena *home = arena_of(alloc->base);
    off_t offset = (off_t)(alloc->base - (uintptr_t)home->program);
    if (alloc->views_replaced && !map_arena_back(alloc->base, alloc->lib_base, shape.length))
        return; /* the slot stays out of use rather than on another file */
    const bool warm = !alloc->views_replaced && shape.length <= WARM_SLOT_BYTES &&
                      g_warm_bytes + shape.length <= WARM_BYTES;
    if (!warm)
        (void)fallocate(home->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, (off_t)shape.length);
    if (put_slot(alloc->base | (warm ? WARM_MARK : 0), shape) && warm)
        g_warm_bytes += shape.length;
}

/* Whether the system would give the unchecked runtime `size` bytes (memory.c: posix_memalign,
 * 2 MiB aligned from 2 MiB up): the same overcommit rules, asked without touching a page. */
static bool system_would_allocate(size_t size)
{
    if (size < PROBE_BYTES)
        return true;
    size_t length = mapped_length(size) + (size >= HUGE_BYTES ? HUGE_BYTES : 0);
    void *probe = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (probe == MAP_FAILED)
        return false;
    munmap(probe, length);
    return true;
}

/* A slot for `size` bytes: *program gets its PROT_NONE address, *library its read-write one. */
static bool arena_alloc(size_t size, void **program, void **library)
{
    if (!system_would_allocate(size))
        return false;
    slot_shape shape = shape_of(size);
    nn_check_alloc_lock();
    uintptr_t slot = take_slot(shape);
    arena *home = slot != 0 ? arena_of(slot) : NULL;
    nn_check_alloc_unlock();
    if (home == NULL)
        return false;
    *program = (void *)slot;
    *library = home->library + (slot - (uintptr_t)home->program);
    return true;
}

/* ---- freed allocations held back (under the registry lock) ---------------------------------- */

typedef struct freed_slot {
    uintptr_t base; /* sort key */
    nn_check_alloc *alloc;
} freed_slot;

/* By address, for lookups; and in the order they were freed (a ring), oldest leaving first. */
static freed_slot *g_freed;
static size_t g_freed_count, g_freed_capacity, g_freed_bytes;
static nn_check_alloc **g_freed_order;
static size_t g_order_head, g_order_count, g_order_capacity;

nn_check_alloc *nn_check_freed_find_locked(const void *address)
{
    size_t at = nn_sorted_upper_bound(g_freed, g_freed_count, sizeof *g_freed, (uintptr_t)address);
    if (at == 0)
        return NULL;
    nn_check_alloc *alloc = g_freed[at - 1].alloc;
    return (uintptr_t)address - alloc->base < nn_check_slot_length(alloc->size) ? alloc : NULL;
}

/* Appends to the ring of freed allocations; false when out of memory. */
static bool order_push(nn_check_alloc *alloc)
{
    if (g_order_count == g_order_capacity) { /* full: unroll into a ring twice the size */
        size_t capacity = g_order_capacity > 0 ? 2 * g_order_capacity : 64;
        nn_check_alloc **grown = malloc(capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        for (size_t i = 0; i < g_order_count; ++i)
            grown[i] = g_freed_order[(g_order_head + i) % g_order_capacity];
        free(g_freed_order);
        g_freed_order = grown;
        g_order_capacity = capacity;
        g_order_head = 0;
    }
    g_freed_order[(g_order_head + g_order_count++) % g_order_capacity] = alloc;
    return true;
}

/* Recycles the oldest freed allocations until the held-back memory is within bounds. */
static void trim_freed_locked(void)
{
    while (g_order_count > 0 &&
           (g_freed_bytes > QUARANTINE_BYTES || g_order_count > QUARANTINE_COUNT)) {
        nn_check_alloc *oldest = g_freed_order[g_order_head];
        g_order_head = (g_order_head + 1) % g_order_capacity;
        --g_order_count;
        size_t at = nn_sorted_upper_bound(g_freed, g_freed_count, sizeof *g_freed, oldest->base);
        nn_sorted_remove(g_freed, &g_freed_count, sizeof *g_freed, at - 1);
        g_freed_bytes -= mapped_length(oldest->size);
        recycle_slot(oldest);
        nn_check_alloc_release(oldest);
    }
}

/* Puts a freed allocation no queued task uses into the quarantine (under the lock). */
static void quarantine_locked(nn_check_alloc *alloc)
{
    if (!order_push(alloc)) { /* no room to remember the order: recycled at once */
        size_t at = nn_sorted_upper_bound(g_freed, g_freed_count, sizeof *g_freed, alloc->base);
        nn_sorted_remove(g_freed, &g_freed_count, sizeof *g_freed, at - 1);
        recycle_slot(alloc);
        nn_check_alloc_release(alloc);
        return;
    }
    g_freed_bytes += mapped_length(alloc->size);
    trim_freed_locked();
}

/* aclrtFree of an allocation a queued task uses, when racecheck (which reports it with the
 * task's side) is off.  Under the lock: once the task has run, the record may go. */
static void report_free_under_task(const nn_check_alloc *alloc)
{
    nn_check_report *report = nn_check_begin(NN_CHECK_ERROR, NN_CHECK_MEMCHECK,
                                             "aclrtFree frees memory a queued task still uses");
    nn_check_line(report, "call:", "aclrtFree of allocation #%llu, at:", (unsigned long long)alloc->id);
    nn_check_trace_lines(report, &alloc->freed);
    nn_check_alloc_lines(report, "object:", alloc);
    nn_check_line(report, "advice:", "wait for the tasks that use it first (aclrtSynchronizeStream): "
                  "aclrtFree does not wait, so on a card the task reads or writes freed memory; here "
                  "the memory stays until the task has run");
    nn_check_end(report);
}

/* Holds a freed allocation back: named by address lookups from now on, and in the quarantine
 * once no queued task uses it (until then it waits, whatever its size: nn_check_task_release). */
static void hold_freed(nn_check_alloc *alloc)
{
    nn_check_capture(&alloc->freed);
    nn_check_init_forget(alloc); /* nothing reads a freed allocation's bytes legitimately */
    freed_slot slot = {alloc->base, alloc};
    nn_check_alloc_lock();
    const bool waiting = alloc->queued > 0; /* (a waiting record is not released below) */
    if (waiting && !nn_check_on(NN_CHECK_RACECHECK))
        report_free_under_task(alloc);
    size_t at = nn_sorted_upper_bound(g_freed, g_freed_count, sizeof slot, slot.base);
    freed_slot *grown = nn_sorted_insert(g_freed, &g_freed_count, &g_freed_capacity, 64, sizeof slot, at, &slot);
    if (grown != NULL) {
        g_freed = grown;
        alloc->free_waiting = waiting;
        if (!waiting)
            quarantine_locked(alloc);
    } else if (!waiting) { /* no room to remember it: recycled at once */
        recycle_slot(alloc);
        nn_check_alloc_release(alloc);
    } /* (else the slot is lost to reuse: a queued task still writes it) */
    nn_check_alloc_unlock();
}

/* ---- tasks that use allocations -------------------------------------------------------------- */

typedef struct task_hold {
    int count;
    nn_check_alloc *allocs[];
} task_hold;

void *nn_check_task_hold(const void *const *addresses, int count)
{
    if (!nn_check_on(NN_CHECK_MEMCHECK) || count <= 0)
        return NULL;
    task_hold *hold = malloc(sizeof *hold + (size_t)count * sizeof hold->allocs[0]);
    if (hold == NULL)
        return NULL; /* the task runs unguarded, as before */
    hold->count = 0;
    nn_check_alloc_lock();
    for (int i = 0; i < count; ++i) {
        nn_check_alloc *alloc = addresses[i] != NULL ? nn_check_alloc_find_locked(addresses[i]) : NULL;
        if (alloc != NULL && alloc->lib_base != (void *)alloc->base) {
            ++alloc->queued;
            hold->allocs[hold->count++] = alloc;
        }
    }
    nn_check_alloc_unlock();
    if (hold->count == 0) {
        free(hold);
        return NULL;
    }
    return hold;
}

void nn_check_task_release(void *held)
{
    task_hold *hold = held;
    if (hold == NULL)
        return;
    nn_check_alloc_lock();
    for (int i = 0; i < hold->count; ++i) {
        nn_check_alloc *alloc = hold->allocs[i];
        if (--alloc->queued == 0 && alloc->free_waiting) {
            alloc->free_waiting = false;
            quarantine_locked(alloc);
        }
    }
    nn_check_alloc_unlock();
    free(hold);
}

void nn_check_freed_lines(nn_check_report *report, const nn_check_alloc *alloc)
{
    nn_check_alloc_lines(report, "object:", alloc);
    nn_check_line(report, "freed:", "allocation #%llu was freed at:", (unsigned long long)alloc->id);
    nn_check_trace_lines(report, &alloc->freed);
}

/* ---- fork ------------------------------------------------------------------------------------ */

/* Without checking, a forked child's device memory is a copy of its parent's (private pages,
 * copied on write).  Under memcheck both views of an arena map one memfd, which the child
 * shares: its writes would change its parent's data.  So the child gives each arena a memfd of
 * its own holding the live allocations' bytes, mapped over both views in place. */
bool nn_check_write_file(int fd, const unsigned char *bytes, size_t length, off_t offset)
{
    for (size_t done = 0; done < length;) {
        ssize_t n = pwrite(fd, bytes + done, length - done, offset + (off_t)done);
        if (n <= 0)
            return false;
        done += (size_t)n;
    }
    return true;
}

typedef struct child_copy {
    int fds[MAX_ARENAS]; /* the child's memfd for each arena (-1: could not be made) */
    size_t failures;
} child_copy;

static void copy_for_child(nn_check_alloc *alloc, void *context)
{
    child_copy *copy = context;
    arena *home = alloc->lib_base != (void *)alloc->base ? arena_of(alloc->base) : NULL;
    if (home == NULL)
        return; /* heap memory: already the child's own */
    int fd = copy->fds[home - g_arenas];
    off_t offset = (off_t)(alloc->base - (uintptr_t)home->program);
    if (fd < 0 || !nn_check_write_file(fd, alloc->lib_base, mapped_length(alloc->size), offset))
        ++copy->failures;
}

/* Maps the child's memfd over both views of the arena; false if either mapping failed. */
static bool remap_arena(arena *home, int fd)
{
    bool ok = mmap(home->library, home->length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED &&
              mmap(home->program, home->length, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED;
    close(home->fd);
    home->fd = fd;
    return ok;
}

static void fork_prepare(void) { nn_check_alloc_lock(); }
static void fork_parent(void) { nn_check_alloc_unlock(); }

static void fork_child(void)
{
    child_copy copy = {.failures = 0};
    for (size_t i = 0; i < g_arena_count; ++i) {
        copy.fds[i] = memfd_create("aclnn-device-memory", MFD_CLOEXEC);
        if (copy.fds[i] >= 0 && ftruncate(copy.fds[i], (off_t)g_arenas[i].length) != 0) {
            close(copy.fds[i]);
            copy.fds[i] = -1;
        }
    }
    nn_check_alloc_each_locked(copy_for_child, &copy);
    copy.failures += nn_check_pinned_fork_child_locked();
    for (size_t i = 0; i < g_arena_count; ++i)
        if (copy.fds[i] < 0 || !remap_arena(&g_arenas[i], copy.fds[i]))
            ++copy.failures;
    nn_check_alloc_unlock();
    if (copy.failures > 0)
        fprintf(stderr, "========= ACLNN_CHECK: fork: %zu device allocation(s) or arena(s) could not be "
                        "copied for the child; it shares them with its parent\n", copy.failures);
}

static pthread_once_t g_handler_once = PTHREAD_ONCE_INIT;

/* Once, at the first checked allocation: the fork handlers and the fault handler
 * (check_fault.c). */
static void install_handler(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    nn_check_fault_install();
}

/* ---- allocation and translation ------------------------------------------------------------- */

void *nn_check_device_alloc(const char *api, size_t size)
{
    void *program = NULL, *library = NULL;
    if (nn_check_on(NN_CHECK_MEMCHECK)) {
        pthread_once(&g_handler_once, install_handler);
        if (!arena_alloc(size, &program, &library))
            return NULL;
    } else { /* placed as the runtime places device memory (memory.c: huge pages) */
        size_t padded = (size + 63) / 64 * 64;
        if (posix_memalign(&program, padded >= HUGE_BYTES ? HUGE_BYTES : 64, padded) != 0)
            return NULL;
        if (padded >= HUGE_BYTES)
            (void)madvise(program, padded, MADV_HUGEPAGE);
        library = program;
    }
    const bool huge = library != program && huge_library_view(library, size);
    nn_check_alloc *alloc = nn_check_alloc_add(program, size, api, library);
    if (alloc == NULL) {
        if (library != program) { /* never touched: straight back to its class */
            nn_check_alloc_lock();
            if (!huge || map_arena_back((uintptr_t)program, library, shape_of(size).length))
                (void)put_slot((uintptr_t)program, shape_of(size));
            nn_check_alloc_unlock();
        } else {
            free(program);
        }
        return NULL;
    }
    if (huge) {
        nn_check_alloc_lock();
        alloc->views_replaced = true;
        nn_check_alloc_unlock();
    }
    return program;
}

void nn_check_device_free(void *base)
{
    nn_check_alloc *alloc = nn_check_alloc_detach(base);
    if (alloc == NULL) { /* not ours (made before checking was read): the heap's */
        free(base);
        return;
    }
    if (alloc->lib_base == (void *)alloc->base) {
        free(base);
        nn_check_alloc_release(alloc);
        return;
    }
    hold_freed(alloc);
}

void nn_check_device_views_replaced(const void *address)
{
    nn_check_alloc_lock();
    nn_check_alloc *alloc = nn_check_alloc_find_locked(address);
    if (alloc != NULL)
        alloc->views_replaced = true;
    nn_check_alloc_unlock();
}

void *nn_check_lib_addr(const void *address)
{
    if (!nn_check_on(NN_CHECK_MEMCHECK))
        return (void *)address;
    nn_check_alloc_lock();
    nn_check_alloc *alloc = nn_check_alloc_find_locked(address);
    void *lib = alloc != NULL ? nn_check_lib_of(alloc, address) : (void *)address;
    nn_check_alloc_unlock();
    return lib;
}

uint64_t nn_check_alloc_id_at(const void *address)
{
    nn_check_alloc_lock();
    nn_check_alloc *alloc = nn_check_alloc_find_locked(address);
    uint64_t id = alloc != NULL ? alloc->id : 0;
    nn_check_alloc_unlock();
    return id;
}
