/*
 * nn_dump_sink.h - where the bytes of a dump file go (exec/dump_sink.c): the file itself, or,
 * after acldumpRegCallback, the program's callback as acldumpChunk pieces ("dump data not put on
 * disk, obtained through the callback", CANN's page for aclmdlInitDump).
 */
#ifndef NN_DUMP_SINK_H
#define NN_DUMP_SINK_H

#include "runtime/nn_runtime.h"

/* The largest dataBuf of one chunk handed to a callback. */
#define NN_DUMP_CHUNK_BYTES (1u << 20)

typedef struct nn_dump_sink {
    int32_t (*callback)(const acldumpChunk *, int32_t); /* NULL: a file */
    char path[ACL_DUMP_MAX_FILE_PATH_LENGTH];
    int fd;                 /* the file, or -1 */
    bool append;            /* appended text (index, statistics): chunks carry offset -1 */
    int64_t offset;         /* the next chunk's offset in the file (not appending) */
    acldumpChunk *pending;  /* the chunk being filled */
    bool failed;
} nn_dump_sink;

/* Opens `path` for writing (from the start, or appending), or prepares chunks for `callback`. */
void nn_dump_sink_open(nn_dump_sink *sink, int32_t (*callback)(const acldumpChunk *, int32_t),
                       const char *path, bool append);
void nn_dump_sink_write(nn_dump_sink *sink, const void *data, size_t bytes);
/* Flushes (the callback's last chunk has isLastChunk 1) and closes; false when any step failed
 * (a callback that returned non-zero included). */
bool nn_dump_sink_close(nn_dump_sink *sink);

#endif /* NN_DUMP_SINK_H */
