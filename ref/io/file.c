/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/file.c: whole-file reading, and the folder that resolves the
 * relative paths a file names.  Writing is ref/io/write.c's.
 *
 * Reading never blocks: a path is opened without waiting (O_NONBLOCK) and
 * the open descriptor must be a regular file before a byte is read, so a
 * FIFO, a device, a socket or a folder named as an input is refused by
 * name (docs/bad-inputs.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pflref/io.h"

/* Inputs larger than this are refused before reading (1 GiB). */
#define MAX_FILE_BYTES ((size_t)1 << 30)

const char *pflref_file_kind(unsigned long st_mode)
{
    const mode_t mode = (mode_t)st_mode;
    if (S_ISDIR(mode))
        return "a folder";
    if (S_ISFIFO(mode))
        return "a FIFO (named pipe)";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISLNK(mode))
        return "a symbolic link";
    return "not a file";
}

/* UTF-16 (or UTF-32) text is named as such: a byte-order mark FF FE or
 * FE FF, or a NUL byte in the first two (JSON starts with an ASCII
 * character, which UTF-16 pads with a NUL). */
static pflref_status refuse_utf16(const char *path, const unsigned char *b,
                                  size_t n, pflref_error *err)
{
    if (n >= 2 && ((b[0] == 0xFF && b[1] == 0xFE) ||
                   (b[0] == 0xFE && b[1] == 0xFF)))
        return pflref_error_set(err, PFLREF_EINVAL, path,
                                "%s is UTF-16 text (byte-order mark %02X %02X);"
                                " pflref reads UTF-8 JSON", path, b[0], b[1]);
    if (n >= 2 && (b[0] == 0) != (b[1] == 0))
        return pflref_error_set(err, PFLREF_EINVAL, path,
                                "%s is UTF-16 text (NUL bytes between its "
                                "characters); pflref reads UTF-8 JSON", path);
    return PFLREF_OK;
}

/* Read exactly size bytes of fd into a new buffer (NUL-terminated). */
static pflref_status read_all(int fd, const char *path, size_t size,
                              char **out, pflref_error *err)
{
    char *buf = malloc(size + 1);
    if (buf == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, path, "out of memory");
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            free(buf);
            return pflref_error_set(err, PFLREF_EIO, path, "cannot read %s%s%s",
                                    path, r < 0 ? ": " : " (it shrank)",
                                    r < 0 ? strerror(errno) : "");
        }
        got += (size_t)r;
    }
    buf[size] = '\0';
    *out = buf;
    return PFLREF_OK;
}

pflref_status pflref_read_file_id(const char *path, char **out, size_t *len,
                                  pflref_file_id *id, pflref_error *err)
{
    *out = NULL;
    /* O_NONBLOCK: opening a FIFO with no writer returns at once instead of
     * waiting; the descriptor is then tested before anything is read, so
     * what was tested is what is read (no window between a stat and the
     * open). */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        /* a socket cannot be opened at all (ENXIO): named for what it is,
         * like the FIFO, the device and the folder below */
        const int e = errno;
        struct stat sb;
        if (e == ENXIO && stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
            return pflref_error_set(err, PFLREF_EIO, path,
                                    "%s is not a regular file (%s); refused "
                                    "without reading it", path,
                                    pflref_file_kind(sb.st_mode));
        return pflref_error_set(err, PFLREF_EIO, path, "cannot open %s: %s",
                                path, strerror(e));
    }
    struct stat sb;
    pflref_status st = PFLREF_OK;
    if (fstat(fd, &sb) != 0)
        st = pflref_error_set(err, PFLREF_EIO, path, "cannot stat %s: %s",
                              path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = pflref_error_set(err, PFLREF_EIO, path,
                              "%s is not a regular file (%s); refused "
                              "without reading it", path,
                              pflref_file_kind(sb.st_mode));
    else if ((unsigned long long)sb.st_size > MAX_FILE_BYTES)
        st = pflref_error_set(err, PFLREF_ENOMEM, path,
                              "%s is larger than the 1 GiB input limit", path);
    if (st == PFLREF_OK)
        st = read_all(fd, path, (size_t)sb.st_size, out, err);
    close(fd);
    if (st == PFLREF_OK) {
        st = refuse_utf16(path, (const unsigned char *)*out,
                          (size_t)sb.st_size, err);
        if (st != PFLREF_OK) {
            free(*out);
            *out = NULL;
        }
    }
    if (st == PFLREF_OK) {
        *len = (size_t)sb.st_size;
        if (id != NULL) {
            id->dev = (unsigned long long)sb.st_dev;
            id->ino = (unsigned long long)sb.st_ino;
        }
    }
    return st;
}

pflref_status pflref_read_file(const char *path, char **out, size_t *len,
                               pflref_error *err)
{
    return pflref_read_file_id(path, out, len, NULL, err);
}

int pflref_file_identify(const char *path, pflref_file_id *id)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return 0;
    id->dev = (unsigned long long)sb.st_dev;
    id->ino = (unsigned long long)sb.st_ino;
    return 1;
}

void pflref_file_folder(const char *path, char *out, size_t size)
{
    snprintf(out, size, "%s", path);
    char *slash = strrchr(out, '/');
    if (slash != NULL)
        *slash = '\0';
    else
        snprintf(out, size, ".");
}
