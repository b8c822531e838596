/* ref/io/file.c: whole-file reading, atomic writing, and the folder that
 * resolves the relative paths a file names.
 *
 * Writing goes to a temporary file in the destination's folder, which is
 * then renamed over the destination, so a reader never sees a partial file
 * and a failed write leaves nothing behind (DESIGN.md, "Errors"). */
/* realpath() is an X/Open extension in glibc. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pflref/io.h"

static pflref_status write_atomic(const char *path, const char *text,
                                  pflref_error *err);

/* Inputs larger than this are refused before reading (1 GiB). */
#define MAX_FILE_BYTES ((size_t)1 << 30)

pflref_status pflref_read_file(const char *path, char **out, size_t *len,
                               pflref_error *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return pflref_error_set(err, PFLREF_EIO, path, "cannot open %s: %s",
                                path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return pflref_error_set(err, PFLREF_EIO, path,
                                "%s is not a regular file", path);
    }
    if ((unsigned long long)sb.st_size > MAX_FILE_BYTES) {
        fclose(f);
        return pflref_error_set(err, PFLREF_ENOMEM, path,
                                "%s is larger than the 1 GiB input limit",
                                path);
    }
    size_t size = (size_t)sb.st_size;
    char *buf = malloc(size + 1);
    if (buf == NULL) {
        fclose(f);
        return pflref_error_set(err, PFLREF_ENOMEM, path, "out of memory");
    }
    size_t got = fread(buf, 1, size, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || got != size) {
        free(buf);
        return pflref_error_set(err, PFLREF_EIO, path, "cannot read %s",
                                path);
    }
    buf[size] = '\0';
    *out = buf;
    *len = size;
    return PFLREF_OK;
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

pflref_status pflref_write_file_atomic(const char *path, const char *text,
                                       pflref_error *err)
{
    /* Only regular files are (re)written: renaming over a device, a folder
     * or a socket would replace it.  A symbolic link is followed, so the
     * file it names is replaced and the link kept. */
    struct stat sb;
    char *resolved = NULL;
    if (stat(path, &sb) == 0) {
        if (!S_ISREG(sb.st_mode))
            return pflref_error_set(err, PFLREF_EIO, path,
                                    "%s exists and is not a regular file; "
                                    "results are written only to regular "
                                    "files", path);
        resolved = realpath(path, NULL);
        if (resolved == NULL)
            return pflref_error_set(err, PFLREF_EIO, path,
                                    "cannot resolve %s: %s", path,
                                    strerror(errno));
        path = resolved;
    }
    pflref_status st = write_atomic(path, text, err);
    free(resolved);
    return st;
}

/* Write text to a temporary file beside path, then rename it to path. */
static pflref_status write_atomic(const char *path, const char *text,
                                  pflref_error *err)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (tmp == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, path, "out of memory");
    snprintf(tmp, n + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        pflref_status st = pflref_error_set(err, PFLREF_EIO, path,
                                            "cannot write %s: %s", path,
                                            strerror(errno));
        free(tmp);
        return st;
    }
    FILE *f = fdopen(fd, "wb");
    size_t len = strlen(text);
    int ok = f != NULL && fwrite(text, 1, len, f) == len;
    if (f != NULL)
        ok = (fclose(f) == 0) && ok;
    else
        close(fd);
    /* mkstemp creates 0600; give the file the usual 0644 (less umask). */
    mode_t mask = umask(0);
    umask(mask);
    if (ok)
        ok = chmod(tmp, 0666 & ~mask) == 0;
    if (ok)
        ok = rename(tmp, path) == 0;
    pflref_status st = PFLREF_OK;
    if (!ok) {
        st = pflref_error_set(err, PFLREF_EIO, path, "cannot write %s: %s",
                              path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return st;
}
