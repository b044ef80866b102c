/*
 * nn_launch_dump.h - the executor's side of dumps (exec/launch_dump.c): the runtime (rt_dump.c)
 * says what a launch dumps; these write it while the launch runs on its stream, so the files hold
 * what the operator saw: its inputs just before the kernel, its outputs just after.
 */
#ifndef NN_LAUNCH_DUMP_H
#define NN_LAUNCH_DUMP_H

#include "exec/nn_exec.h"
#include "runtime/nn_runtime.h"

/* At the phase-2 call (nn_dump_wanted() is true): writes aclopStartDumpArgs's description of the
 * operator when that is on, and returns what the task must dump when it runs (free() it), or
 * NULL when no data dump applies. */
nn_dump_launch *nn_launch_dump_begin(const char *op_name, const nn_operand *operands, int count,
                                     nn_stream *stream);
/* In the task: writes the inputs (before the kernel) or the outputs (after it) that dump_mode
 * asks for, from the contiguous buffers the kernel reads and writes. */
void nn_launch_dump_tensors(const nn_dump_launch *dump, const char *op_name, const nn_operand *operands,
                            int count, bool outputs);
/* In the task, last: appends the launch's line to <dir>/index.jsonl. */
void nn_launch_dump_end(const nn_dump_launch *dump, const char *op_name, const nn_operand *operands,
                        int count, int status);

#endif /* NN_LAUNCH_DUMP_H */
