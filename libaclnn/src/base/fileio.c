/*
 * fileio.c - the file helpers the runtime's writers share: making a directory path (plog files,
 * dumps) and writing a buffer whole (dump files, data-channel messages, profiling records).
 */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nn_base.h"

bool nn_make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            int rc = mkdir(path, 0750);
            *p = '/';
            if (rc != 0 && errno != EEXIST)
                return false;
        }
    }
    return mkdir(path, 0750) == 0 || errno == EEXIST;
}

bool nn_write_all(int fd, const void *data, size_t bytes)
{
    const char *p = data;
    while (bytes > 0) {
        ssize_t n = write(fd, p, bytes);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        bytes -= (size_t)n;
    }
    return true;
}
