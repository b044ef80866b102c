/*
 * nn_executor_impl.h - the executor object and its registry, shared by exec/executor.c (the
 * framework ops use) and exec/executor_api.c (the public aclSet*TensorAddr & co.).
 * Not for operators: they only use the nn_executor_* functions of nn_exec.h.
 */
#ifndef NN_EXECUTOR_IMPL_H
#define NN_EXECUTOR_IMPL_H

#include <pthread.h>

#include "exec/nn_exec.h"

#define NN_OP_NAME_MAX 64
/* An executor starts with this word while it is alive (the registry decides liveness; the word
 * only helps a debugger). */
#define NN_MAGIC_EXECUTOR 0x45584543u

struct aclOpExecutor {
    uint32_t magic;               /* NN_MAGIC_EXECUTOR while alive */
    char op_name[NN_OP_NAME_MAX];
    nn_kernel_fn kernel;          /* NULL: phase 2 does nothing */
    void *plan;                   /* the op's frozen parameters (owned) */
    nn_operand operands[NN_MAX_OPERANDS];
    int num_operands;
    int num_inputs;               /* operands[0, num_inputs) are inputs, the rest outputs */
    bool overflow;                /* more than NN_MAX_OPERANDS were added */
    uint64_t scratch_bytes;
    uint64_t scratch_offset;
    uint64_t workspace_size;      /* planned at finish */
    bool repeatable;
    /* The overflow mode (docs/precision.md, "Overflow mode"): the product's modes, frozen at
     * create like the product; a stream that can switch brings its own at each phase-2 call. */
    bool saturation_only;         /* the product has only saturation mode (Ascend910, 310P) */
    bool saturation_possible;     /* aclrtSetDeviceSatMode can switch it to saturation (A2/A3) */
    bool computed_outputs;        /* nn_executor_saturate_outputs: saturate them in that mode */
    int refs;                     /* the registry's reference + one per queued task */
    bool registered;              /* its handle is in the registry (executor.c) */
    uintptr_t handle;             /* what the program holds as aclOpExecutor * (never reused) */
};

/* The registry of live executors.  Everything that reads or writes a registered executor's
 * fields (other than a task's private snapshot) holds nn_executor_lock. */
extern pthread_mutex_t nn_executor_lock;

/* The registered (live, not consumed) executor a program's `handle` names, or NULL.  Caller
 * holds the lock.  A program's aclOpExecutor * is a handle, never the object's address. */
aclOpExecutor *nn_executor_live_locked(const aclOpExecutor *handle);
/* Removes `ex` from the registry and drops the registry's reference.  Caller holds the lock. */
void nn_executor_unregister_locked(aclOpExecutor *ex);

/* Checking mode: notes which device allocation the operand's view lies in at phase 1, so that a
 * launch finds it freed or reallocated since. */
void nn_operand_note_alloc(nn_operand *op);
/* Copies what an operand needs of tensor `t` (NULL: an absent optional one), as phase 1 does. */
void nn_operand_freeze(nn_operand *op, const aclTensor *t, bool is_output);

/* Profiling (exec_prof.c): labels the task a launch is about to queue with the operator's name
 * and its inputs' shapes and dtypes, while a session records (nothing otherwise). */
void nn_exec_prof_label(const char *op_name, const nn_operand *operands, int num_inputs);

#endif /* NN_EXECUTOR_IMPL_H */
