/*
 * dump_sink.c - a dump file's bytes to the file or to acldumpRegCallback's callback.
 *
 * For a callback each file becomes chunks of at most NN_DUMP_CHUNK_BYTES: fileName the file's
 * absolute path, offset where the chunk goes in the file (-1 for text appended to a file that
 * grows over a launch or a process: index.jsonl, a statistics CSV), isLastChunk 1 on the piece
 * that ends what this write produced, flag 0; the callback's second argument is
 * sizeof(acldumpChunk) + bufLen, as CANN's sample checks.  A callback that returns non-zero
 * receives nothing more of that file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/nn_base.h"
#include "exec/nn_dump_sink.h"

void nn_dump_sink_open(nn_dump_sink *sink, int32_t (*callback)(const acldumpChunk *, int32_t),
                       const char *path, bool append)
{
    memset(sink, 0, sizeof *sink);
    sink->callback = callback;
    sink->append = append;
    sink->fd = -1;
    snprintf(sink->path, sizeof sink->path, "%s", path);
    if (callback != NULL) {
        sink->pending = calloc(1, sizeof(acldumpChunk) + NN_DUMP_CHUNK_BYTES);
        sink->failed = sink->pending == NULL;
        return;
    }
    sink->fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0640);
    sink->failed = sink->fd < 0;
}

/* Hands the pending chunk to the callback and starts the next one. */
static void send_chunk(nn_dump_sink *sink, bool last)
{
    acldumpChunk *chunk = sink->pending;
    snprintf(chunk->fileName, sizeof chunk->fileName, "%s", sink->path);
    chunk->isLastChunk = last ? 1u : 0u;
    chunk->offset = sink->append ? -1 : sink->offset;
    chunk->flag = 0;
    int32_t length = (int32_t)(sizeof(acldumpChunk) + chunk->bufLen);
    if (sink->callback(chunk, length) != 0)
        sink->failed = true;
    sink->offset += chunk->bufLen;
    chunk->bufLen = 0;
}

void nn_dump_sink_write(nn_dump_sink *sink, const void *data, size_t bytes)
{
    if (sink->failed || bytes == 0)
        return;
    if (sink->callback == NULL) {
        sink->failed = !nn_write_all(sink->fd, data, bytes);
        return;
    }
    const char *p = data;
    while (bytes > 0 && !sink->failed) {
        if (sink->pending->bufLen == NN_DUMP_CHUNK_BYTES)
            send_chunk(sink, false);
        size_t room = NN_DUMP_CHUNK_BYTES - sink->pending->bufLen;
        size_t take = bytes < room ? bytes : room;
        memcpy(sink->pending->dataBuf + sink->pending->bufLen, p, take);
        sink->pending->bufLen += (uint32_t)take;
        p += take;
        bytes -= take;
    }
}

bool nn_dump_sink_close(nn_dump_sink *sink)
{
    if (sink->callback != NULL) {
        if (!sink->failed)
            send_chunk(sink, true);
        free(sink->pending);
        sink->pending = NULL;
    } else if (sink->fd >= 0 && close(sink->fd) != 0) {
        sink->failed = true;
    }
    sink->fd = -1;
    return !sink->failed;
}
