/*
 * tdt_message.c - the messages of the queues (tdt_shared.c): each one a POSIX shared-memory
 * object of its own, "/aclnn-tdt-<uid>-m<serial>", written by the sender before it takes the
 * registry's lock and read then unlinked by the receiver after it let go of it, so that no
 * payload is ever copied under the lock.
 *
 * An object's layout: a uint32 segment count, then per segment a uint64 length, a uint32 user
 * data length, the user data and the bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/tdt_internal.h"

void nn_tdt_shm_name(char *buf, size_t size, const char *tail)
{
    snprintf(buf, size, "/aclnn-tdt-%u-%s", (unsigned)getuid(), tail);
}

static void message_name(char *buf, size_t size, uint64_t serial)
{
    char tail[32];
    snprintf(tail, sizeof tail, "m%llu", (unsigned long long)serial);
    nn_tdt_shm_name(buf, size, tail);
}

void nn_tdt_message_unlink(uint64_t serial)
{
    char name[64];
    message_name(name, sizeof name, serial);
    shm_unlink(name);
}

aclError nn_tdt_message_write(const char *api, uint64_t serial, const nn_tdt_segment *segs, uint32_t count)
{
    char name[64];
    message_name(name, sizeof name, serial);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return nn_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "%s: cannot create the message %s: %s.", api, name,
                        strerror(errno));
    bool ok = nn_write_all(fd, &count, sizeof count);
    for (uint32_t i = 0; ok && i < count; i++) {
        uint64_t len = segs[i].len;
        uint32_t user_len = (uint32_t)segs[i].user_len;
        ok = nn_write_all(fd, &len, sizeof len) && nn_write_all(fd, &user_len, sizeof user_len) &&
             nn_write_all(fd, segs[i].user, user_len) && nn_write_all(fd, segs[i].data, segs[i].len);
    }
    int saved = errno;
    close(fd);
    if (!ok) {
        shm_unlink(name);
        return nn_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "%s: cannot write the message %s: %s.", api, name,
                        strerror(saved));
    }
    return ACL_SUCCESS;
}

aclError nn_tdt_message_read(const char *api, uint64_t serial, nn_tdt_message *out)
{
    char name[64];
    message_name(name, sizeof name, serial);
    int fd = shm_open(name, O_RDONLY, 0600);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return nn_error(ACL_ERROR_FAILURE, "%s: the message %s is gone: %s.", api, name, strerror(errno));
    }
    size_t size = (size_t)st.st_size;
    unsigned char *bytes = malloc(size ? size : 1);
    size_t got = 0;
    while (bytes != NULL && got < size) {
        ssize_t n = pread(fd, bytes + got, size - got, (off_t)got);
        if (n <= 0 && !(n < 0 && errno == EINTR))
            break;
        if (n > 0)
            got += (size_t)n;
    }
    close(fd);
    shm_unlink(name);
    if (bytes == NULL || got < size) {
        free(bytes);
        return nn_error(ACL_ERROR_BAD_ALLOC, "%s: cannot read the message %s (%zu bytes).", api, name, size);
    }
    out->bytes = bytes;
    out->size = size;
    memcpy(&out->segments, bytes, sizeof out->segments);
    out->data_total = 0;
    for (uint32_t i = 0; i < out->segments; i++) {
        nn_tdt_segment seg;
        nn_tdt_message_segment(out, i, &seg);
        out->data_total += seg.len;
    }
    return ACL_SUCCESS;
}

/* A second object with the same contents (a route with several destinations). */
bool nn_tdt_message_copy(uint64_t from, uint64_t to)
{
    char src_name[64], dst_name[64];
    message_name(src_name, sizeof src_name, from);
    message_name(dst_name, sizeof dst_name, to);
    int in = shm_open(src_name, O_RDONLY, 0600);
    int out = in < 0 ? -1 : shm_open(dst_name, O_RDWR | O_CREAT | O_EXCL, 0600);
    bool ok = out >= 0;
    unsigned char chunk[65536];
    for (off_t at = 0; ok;) {
        ssize_t n = pread(in, chunk, sizeof chunk, at);
        if (n <= 0) {
            ok = n == 0;
            break;
        }
        ok = nn_write_all(out, chunk, (size_t)n);
        at += n;
    }
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    if (!ok && out >= 0)
        shm_unlink(dst_name);
    return ok;
}

void nn_tdt_message_segment(const nn_tdt_message *message, uint32_t index, nn_tdt_segment *out)
{
    size_t at = sizeof(uint32_t);
    for (uint32_t i = 0;; i++) {
        uint64_t len;
        uint32_t user_len;
        memcpy(&len, message->bytes + at, sizeof len);
        memcpy(&user_len, message->bytes + at + sizeof len, sizeof user_len);
        at += sizeof len + sizeof user_len;
        if (i == index) {
            out->user = message->bytes + at;
            out->user_len = user_len;
            out->data = message->bytes + at + user_len;
            out->len = (size_t)len;
            return;
        }
        at += user_len + (size_t)len;
    }
}

void nn_tdt_message_free(nn_tdt_message *message)
{
    free(message->bytes);
    message->bytes = NULL;
    message->size = 0;
}
