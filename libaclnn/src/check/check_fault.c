/*
 * check_fault.c - memcheck's fault handler (nn_check.h, docs/checking.md "memcheck").
 *
 * The program's view of device memory is PROT_NONE (check_mem.c), so a host load or store
 * through a device address faults.  The SIGSEGV/SIGBUS handler installed here finds the
 * allocation the address belongs to (live, freed and held back, or past its end inside its
 * slot), reports the access with the program's stack and ends the process.  A pinned block a
 * copy writes (check_pinned.c) is reported and opened again instead.  A fault anywhere else,
 * and a signal that was sent rather than raised by an instruction, goes to the handler that was
 * installed before ours.
 */
#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "check/check_internal.h"

/* The handlers installed before ours: a fault that is not ours goes to them. */
static struct sigaction g_previous_segv, g_previous_bus;

/* A signal another process or the program itself sent (si_code SI_USER, SI_QUEUE, SI_TKILL...,
 * all <= 0), not a fault of an instruction: its si_addr means nothing. */
static bool sent_signal(const siginfo_t *info)
{
    return info->si_code <= 0;
}

/* Hands a fault that is not ours to the handler installed before ours. */
static void chain(int sig, siginfo_t *info, void *context)
{
    const struct sigaction *previous = sig == SIGSEGV ? &g_previous_segv : &g_previous_bus;
    if ((previous->sa_flags & SA_SIGINFO) != 0 && previous->sa_sigaction != NULL) {
        previous->sa_sigaction(sig, info, context);
        return;
    }
    if (previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
        previous->sa_handler(sig);
        return;
    }
    /* The default action: restore it and return, so the faulting instruction faults again.  A
     * signal that was sent (kill, raise, sigqueue) has no instruction to repeat: raise it again,
     * to be delivered with the default action once this handler returns. */
    signal(sig, SIG_DFL);
    if (sent_signal(info))
        raise(sig);
}

/* The program counter of the faulting instruction. */
static void *fault_pc(void *context)
{
    const ucontext_t *uc = context;
#if defined(__x86_64__)
    return (void *)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (void *)uc->uc_mcontext.pc;
#else
    (void)uc;
    return NULL;
#endif
}

/* "write", "read", or "access" where the CPU does not say. */
static const char *fault_kind(void *context)
{
#if defined(__x86_64__)
    const ucontext_t *uc = context;
    return (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0 ? "write" : "read";
#else
    (void)context;
    return "access";
#endif
}

/* The stack from the faulting instruction outwards (the handler's own frames dropped). */
static void fault_trace(nn_check_trace *trace, void *pc)
{
    void *frames[NN_CHECK_TRACE_DEPTH + 16];
    int count = backtrace(frames, (int)(sizeof frames / sizeof frames[0]));
    int first = -1;
    for (int i = 0; i < count && first < 0; ++i)
        if (frames[i] == pc)
            first = i;
    if (first < 0) { /* the unwinder did not cross the signal frame: the pc alone */
        trace->frames[0] = pc;
        trace->count = pc != NULL ? 1 : 0;
        return;
    }
    trace->count = 0;
    for (int i = first; i < count && trace->count < NN_CHECK_TRACE_DEPTH; ++i)
        trace->frames[trace->count++] = frames[i];
}

/* Takes the registry lock from a signal handler: the faulting code is the program's and holds
 * no lock of ours, but another thread may, briefly. */
static bool lock_for_handler(void)
{
    for (int i = 0; i < 1000; ++i) {
        if (nn_check_alloc_trylock())
            return true;
        usleep(1000);
    }
    return false;
}

static void on_fault(int sig, siginfo_t *info, void *context)
{
    const void *address = info->si_addr;
    if (sent_signal(info) || !lock_for_handler()) {
        chain(sig, info, context);
        return;
    }
    nn_check_trace at;
    fault_trace(&at, fault_pc(context));
    if (nn_check_pinned_fault_locked(address, fault_kind(context), &at)) {
        nn_check_alloc_unlock(); /* reported and opened again: the access goes on */
        return;
    }
    bool freed = false;
    nn_check_alloc *alloc = nn_check_alloc_find_locked(address);
    if (alloc == NULL) {
        /* inside the mapping but past the usable size: still this allocation */
        alloc = nn_check_freed_find_locked(address);
        freed = alloc != NULL;
    }
    if (alloc == NULL)
        alloc = nn_check_alloc_find_mapped_locked(address, nn_check_slot_length);
    if (alloc == NULL) {
        nn_check_alloc_unlock();
        chain(sig, info, context);
        return;
    }
    size_t offset = (uintptr_t)address - alloc->base;
    nn_check_report *report = nn_check_begin(NN_CHECK_ERROR, NN_CHECK_MEMCHECK,
                                             freed ? "host access to freed device memory"
                                                   : "host access to device memory");
    nn_check_line(report, "access:", "host %s at %p, %zu bytes into allocation #%llu%s",
                  fault_kind(context), address, offset, (unsigned long long)alloc->id,
                  offset >= alloc->size ? " (past its end)" : "");
    nn_check_line(report, "at:", "the program's code:");
    nn_check_trace_lines(report, &at);
    if (freed)
        nn_check_freed_lines(report, alloc);
    else
        nn_check_alloc_lines(report, "object:", alloc);
    nn_check_line(report, "advice:", "device memory is not in the host's address space on an "
                  "NPU (this access crashes there); copy with aclrtMemcpy(..., "
                  "ACL_MEMCPY_HOST_TO_DEVICE) before the operator and aclrtMemcpy(..., "
                  "ACL_MEMCPY_DEVICE_TO_HOST) after aclrtSynchronizeStream");
    nn_check_alloc_unlock();
    nn_check_end(report);
    nn_check_fatal_exit();
}

void nn_check_fault_install(void)
{
    /* backtrace() loads its unwinder on first use: do it now, not inside the handler */
    void *frames[2];
    (void)backtrace(frames, 2);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &g_previous_segv);
    sigaction(SIGBUS, &action, &g_previous_bus);
}
