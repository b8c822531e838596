/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/write.c: the one writer of every file pflref produces: results,
 * vectors, figures, reports (DESIGN.md, "Errors" and "One writer";
 * include/pflref/io.h, pflref_write_file_with).
 *
 * Method:
 *   1. Resolve the target (resolve).  lstat(path): absent, the path
 *      itself is the target; a symbolic link, realpath(3) names the
 *      target (the file the link names is replaced, the link kept), and a
 *      link whose end does not exist (dangling) is refused; anything but a
 *      regular file (a FIFO, a device, a socket, a folder) is refused by
 *      name, never opened.
 *   2. Open the target's folder (O_PATH | O_DIRECTORY) and from then on
 *      name the target only relative to that descriptor, so every later
 *      look and the rename act in one folder, whatever happens to the
 *      other parts of the path (open_folder).
 *   3. fstatat(folder, name, AT_SYMLINK_NOFOLLOW): absent, or a regular
 *      file whose (dev, ino) is kept and which may be written: a file
 *      with no write bit, or one faccessat(W_OK) refuses, is refused, not
 *      replaced behind its owner's back.
 *   4. Create NAME.tmp.XXXXXX in that folder with O_CREAT | O_EXCL |
 *      O_NOFOLLOW and mode 0666: the kernel applies the umask (and a
 *      folder's default ACL), so the file has its final permissions from
 *      the start, with no chmod and no umask(2) round trip (open_tmp).
 *   5. The caller's step writes the content into the descriptor; then
 *      fsync and close, each checked: an error of either (a full disk, a
 *      quota, a network filesystem's deferred error) fails the write
 *      (fill).
 *   6. Publish:
 *      a) target absent (publish_absent): renameat2(RENAME_NOREPLACE),
 *         which fails when anything appeared at the name meanwhile.  A
 *         filesystem without the flag (EINVAL; ENOSYS on an old kernel)
 *         gets linkat(2), which never replaces either; one without hard
 *         links (EPERM, EOPNOTSUPP: vfat) gets fstatat, then renameat.
 *      b) target a regular file (publish_over): fstatat again, and
 *         renameat only when the name still holds a regular file of the
 *         (dev, ino) of step 3.
 *   7. On any failure the temporary file is unlinked: the target is as it
 *      was.
 * pflref_write_file_check runs steps 1-3 alone and creates nothing, so a
 * caller with long work ahead (a run) refuses early; the write looks
 * again.
 *
 * What holds, and the window that remains:
 *   - No partial output: the target holds the previous file or the whole
 *     new one, synced before it got the name.  (A process killed between
 *     steps 4 and 6 leaves its NAME.tmp.XXXXXX behind; nothing else.)
 *   - What step 1 or 3 refuses (a FIFO, /dev/null, a folder, a dangling
 *     link, a read-only file) is never opened, written or renamed over.
 *   - An absent target: nothing another process creates at the name
 *     while the content is written is replaced; RENAME_NOREPLACE and
 *     linkat test and act in one system call.  Only on a filesystem with
 *     neither (the last fallback of 6a) is there a window, between its
 *     fstatat and renameat.
 *   - An existing regular target: rename(2) has no way to replace only a
 *     regular file, and no flag of renameat2 refuses a destination by its
 *     type (RENAME_EXCHANGE would swap the newcomer out to the temporary
 *     name, not leave it in place).  The re-check of 6b narrows the
 *     window to the few instructions between that fstatat and renameat: a
 *     process that swaps another entry (a FIFO, a device node, a link)
 *     in at that name at that moment gets its entry replaced.  The
 *     rename acts on that one entry of the one folder opened at step 2,
 *     so what can be replaced is only an entry that racing process itself
 *     put there, by a right to write the folder that already lets it
 *     remove the entry; a device node in another folder (/dev/null, for
 *     a target outside /dev) is out of its reach.
 *   - A concurrent writer of the same target (two runs with one -o) is
 *     seen by 6a or 6b: the later one is refused, and the file holds the
 *     other's complete output.
 *   - The folder itself is not fsynced (an O_PATH descriptor cannot be):
 *     that the rename survives a crash is left to the filesystem.
 */
/* renameat2, RENAME_NOREPLACE (glibc 2.28), O_PATH and getrandom. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "pflref/io.h"

/* The temporary name: NAME.tmp. and TMP_RANDOM characters, NAME cut to
 * TMP_NAME_KEEP bytes so the whole stays within NAME_MAX. */
#define TMP_TAG ".tmp."
#define TMP_RANDOM 6
#define TMP_NAME_KEEP (NAME_MAX - (sizeof TMP_TAG - 1) - TMP_RANDOM)
/* Fresh names tried before giving up: each is one of 62^6 ≈ 5.7e10, so
 * running out means someone is creating those names on purpose. */
#define TMP_ATTEMPTS 100

/* The target as the writer sees it. */
typedef struct {
    const char *path;       /* as the caller named it, for messages       */
    char *resolved;         /* realpath of a symbolic link, or NULL       */
    char *dir, *name;       /* the target's folder and its entry there    */
    int dirfd;              /* the folder, open (O_PATH), or -1           */
    int absent;             /* no entry at name when step 3 looked        */
    dev_t dev;              /* the regular file step 3 saw                */
    ino_t ino;
    char tmp[NAME_MAX + 1]; /* the temporary entry, "" when there is none */
} target;

static pflref_status cannot_write(const target *t, int errnum,
                                  pflref_error *err)
{
    return pflref_error_set(err, PFLREF_EIO, t->path, "cannot write %s: %s",
                            t->path, strerror(errnum));
}

/* A target that exists and is not a regular file, left as it is. */
static pflref_status not_regular(const target *t, unsigned long mode,
                                 pflref_error *err)
{
    if (t->resolved != NULL)
        return pflref_error_set(err, PFLREF_EIO, t->path,
                                "%s is a symbolic link to %s, which is not a "
                                "regular file (%s); output is written only "
                                "to regular files", t->path, t->resolved,
                                pflref_file_kind(mode));
    return pflref_error_set(err, PFLREF_EIO, t->path,
                            "%s exists and is not a regular file (%s); "
                            "output is written only to regular files",
                            t->path, pflref_file_kind(mode));
}

/* A link to nothing: refused rather than creating the file it names,
 * which may lie anywhere the link's author chose. */
static pflref_status dangling(const target *t, pflref_error *err)
{
    char to[PFLREF_PATH_MAX];
    ssize_t n = readlink(t->path, to, sizeof to - 1);
    to[n > 0 ? n : 0] = '\0';
    return pflref_error_set(err, PFLREF_EIO, t->path,
                            "%s is a symbolic link to %s, which does not "
                            "exist (a dangling link); output is written "
                            "through a link only to an existing regular "
                            "file", t->path, to);
}

/* t->dir and t->name from path: its folder ("." for a bare name, "/" at
 * the root) and its last component, which must name a file. */
static pflref_status split(target *t, const char *path, pflref_error *err)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash != NULL ? slash + 1 : path;
    if (name[0] == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return pflref_error_set(err, PFLREF_EIO, t->path,
                                "%s names a folder, not a file; output is "
                                "written only to regular files", t->path);
    size_t dlen = slash == NULL ? 1 : slash == path ? 1 : (size_t)(slash - path);
    t->dir = malloc(dlen + 1);
    t->name = strdup(name);
    if (t->dir == NULL || t->name == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, t->path, "out of memory");
    memcpy(t->dir, slash == NULL ? "." : path, dlen);
    t->dir[dlen] = '\0';
    return PFLREF_OK;
}

/* Step 1: what path names, links followed once, refused unless it is
 * absent or a regular file. */
static pflref_status resolve(target *t, pflref_error *err)
{
    if (t->path[0] == '\0')
        return pflref_error_set(err, PFLREF_EINVAL, "path",
                                "the output file name is empty");
    struct stat sb;
    if (lstat(t->path, &sb) != 0) {
        if (errno != ENOENT)
            return cannot_write(t, errno, err);
    } else if (S_ISLNK(sb.st_mode)) {
        t->resolved = realpath(t->path, NULL);
        if (t->resolved == NULL)
            return errno == ENOENT ? dangling(t, err)
                                   : cannot_write(t, errno, err);
        return split(t, t->resolved, err);
    } else if (!S_ISREG(sb.st_mode)) {
        return not_regular(t, sb.st_mode, err);
    }
    return split(t, t->path, err);
}

/* Steps 2 and 3: the folder, open, and what its entry is now. */
static pflref_status open_folder(target *t, pflref_error *err)
{
    t->dirfd = open(t->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (t->dirfd < 0)
        return cannot_write(t, errno, err);
    struct stat sb;
    if (fstatat(t->dirfd, t->name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno != ENOENT)
            return cannot_write(t, errno, err);
        t->absent = 1;
        return PFLREF_OK;
    }
    if (!S_ISREG(sb.st_mode))
        return not_regular(t, sb.st_mode, err);
    /* chmod a-w means "keep": refused whoever runs pflref, root too; any
     * other file the caller may not write is the kernel's to say */
    int denied = (sb.st_mode & 0222) == 0 ? EACCES : 0;
    if (denied == 0 && faccessat(t->dirfd, t->name, W_OK, AT_EACCESS) != 0)
        denied = errno;
    if (denied == EACCES || denied == EPERM)
        return pflref_error_set(err, PFLREF_EIO, t->path,
                                "cannot write %s: the file is read-only "
                                "(mode %04o: %s); pflref does not replace a "
                                "file it may not write", t->path,
                                (unsigned)(sb.st_mode & 07777),
                                strerror(denied));
    if (denied != 0)
        return cannot_write(t, denied, err);
    t->dev = sb.st_dev;
    t->ino = sb.st_ino;
    return PFLREF_OK;
}

/* TMP_RANDOM characters of [0-9A-Za-z] into out (NUL-terminated): from
 * getrandom, or, where it fails, from the clock, the process and the
 * attempt (names need only differ, O_EXCL catches a repeat). */
static void random_tag(char *out, unsigned attempt)
{
    static const char ALNUM[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "abcdefghijklmnopqrstuvwxyz";
    unsigned char b[TMP_RANDOM];
    if (getrandom(b, sizeof b, GRND_NONBLOCK) != (ssize_t)sizeof b) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned long long x = (unsigned long long)ts.tv_nsec ^
                               ((unsigned long long)getpid() << 32) ^
                               (0x9E3779B97F4A7C15ULL * (attempt + 1u));
        for (size_t i = 0; i < sizeof b; i++, x >>= 8)
            b[i] = (unsigned char)x;
    }
    for (size_t i = 0; i < TMP_RANDOM; i++)
        out[i] = ALNUM[b[i] % (sizeof ALNUM - 1)];
    out[TMP_RANDOM] = '\0';
}

/* Step 4: a new temporary file beside the target; its descriptor, or -1
 * with errno set (t->tmp then ""). */
static int open_tmp(target *t)
{
    for (unsigned k = 0; k < TMP_ATTEMPTS; k++) {
        char tag[TMP_RANDOM + 1];
        random_tag(tag, k);
        snprintf(t->tmp, sizeof t->tmp, "%.*s" TMP_TAG "%s",
                 (int)TMP_NAME_KEEP, t->name, tag);
        int fd = openat(t->dirfd, t->tmp,
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        0666);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            break;
    }
    int e = errno;
    t->tmp[0] = '\0';
    errno = e;
    return -1;
}

/* Step 5: the step's content into fd, synced and closed (fd is closed
 * whatever happens). */
static pflref_status fill(const target *t, pflref_write_step step, void *ctx,
                          int fd, pflref_error *err)
{
    pflref_error e;
    pflref_error_clear(&e);
    pflref_status st = step(ctx, fd, t->path, &e);
    if (st != PFLREF_OK) {
        if (err != NULL) {
            *err = e;
            err->status = st;
            if (err->where[0] == '\0')
                snprintf(err->where, sizeof err->where, "%s", t->path);
        }
    } else if (fsync(fd) != 0) {
        st = cannot_write(t, errno, err);
    }
    if (close(fd) != 0 && st == PFLREF_OK)
        st = cannot_write(t, errno, err);
    return st;
}

/* Another process made an entry at the name (6a) or replaced the file
 * there (6b) while the content was written: left as it is. */
static pflref_status raced(const target *t, const char *what,
                           pflref_error *err)
{
    return pflref_error_set(err, PFLREF_EIO, t->path,
                            "%s %s while pflref wrote it; it is left as it "
                            "is and nothing was written", t->path, what);
}

/* Step 6a: the temporary file gets the name only if nothing has it. */
static pflref_status publish_absent(target *t, pflref_error *err)
{
    if (renameat2(t->dirfd, t->tmp, t->dirfd, t->name, RENAME_NOREPLACE) == 0) {
        t->tmp[0] = '\0';
        return PFLREF_OK;
    }
    if (errno == EEXIST)
        return raced(t, "appeared", err);
    if (errno != EINVAL && errno != ENOSYS)
        return cannot_write(t, errno, err);
    /* no RENAME_NOREPLACE on this filesystem: link(2) never replaces
     * either; the temporary name is then removed like a failed one's */
    if (linkat(t->dirfd, t->tmp, t->dirfd, t->name, 0) == 0)
        return PFLREF_OK;
    if (errno == EEXIST)
        return raced(t, "appeared", err);
    if (errno != EPERM && errno != EOPNOTSUPP)
        return cannot_write(t, errno, err);
    /* no hard links either (vfat): look, then rename; the one window */
    struct stat sb;
    if (fstatat(t->dirfd, t->name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
        return raced(t, "appeared", err);
    if (errno != ENOENT)
        return cannot_write(t, errno, err);
    if (renameat(t->dirfd, t->tmp, t->dirfd, t->name) != 0)
        return cannot_write(t, errno, err);
    t->tmp[0] = '\0';
    return PFLREF_OK;
}

/* Step 6b: replace the regular file step 3 saw, and nothing else. */
static pflref_status publish_over(target *t, pflref_error *err)
{
    struct stat sb;
    if (fstatat(t->dirfd, t->name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno != ENOENT)
            return cannot_write(t, errno, err);
        return publish_absent(t, err);   /* removed meanwhile: now absent */
    }
    if (!S_ISREG(sb.st_mode) || sb.st_dev != t->dev || sb.st_ino != t->ino)
        return raced(t, S_ISREG(sb.st_mode) ? "was replaced by another file"
                                            : "was replaced by an entry that "
                                              "is not a regular file", err);
    /* The window of the header: from the fstatat above to this rename. */
    if (renameat(t->dirfd, t->tmp, t->dirfd, t->name) != 0)
        return cannot_write(t, errno, err);
    t->tmp[0] = '\0';
    return PFLREF_OK;
}

static void target_free(target *t)
{
    if (t->tmp[0] != '\0')
        unlinkat(t->dirfd, t->tmp, 0);
    if (t->dirfd >= 0)
        close(t->dirfd);
    free(t->resolved);
    free(t->dir);
    free(t->name);
}

/* Steps 1 to 3 for path into *t (which target_free releases whatever
 * the status). */
static pflref_status prepare(target *t, const char *path, pflref_error *err)
{
    *t = (target){.path = path, .resolved = NULL, .dir = NULL, .name = NULL,
                  .dirfd = -1, .absent = 0, .tmp = ""};
    if (path == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "path",
                                "the argument is NULL");
    pflref_status st = resolve(t, err);
    return st == PFLREF_OK ? open_folder(t, err) : st;
}

pflref_status pflref_write_file_check(const char *path, pflref_error *err)
{
    target t;
    pflref_status st = prepare(&t, path, err);
    target_free(&t);
    return st;
}

pflref_status pflref_write_file_with(const char *path, pflref_write_step step,
                                     void *ctx, pflref_error *err)
{
    if (path != NULL && step == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "step",
                                "the argument is NULL");
    target t;
    pflref_status st = prepare(&t, path, err);
    if (st == PFLREF_OK) {
        int fd = open_tmp(&t);
        st = fd < 0 ? cannot_write(&t, errno, err)
                    : fill(&t, step, ctx, fd, err);
    }
    if (st == PFLREF_OK)
        st = t.absent ? publish_absent(&t, err) : publish_over(&t, err);
    target_free(&t);
    return st;
}

pflref_status pflref_write_buffer_step(void *ctx, int fd, const char *name,
                                       pflref_error *err)
{
    const pflref_write_buffer *b = ctx;
    const char *p = b->bytes;
    size_t left = b->len;
    while (left > 0) {
        ssize_t k = write(fd, p, left);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return pflref_error_set(err, PFLREF_EIO, name,
                                    "cannot write %s: %s", name,
                                    k < 0 ? strerror(errno)
                                          : "the write made no progress");
        p += k;
        left -= (size_t)k;
    }
    return PFLREF_OK;
}

pflref_status pflref_write_file_bytes(const char *path, const void *bytes,
                                      size_t len, pflref_error *err)
{
    if (bytes == NULL && len > 0)
        return pflref_error_set(err, PFLREF_EINVAL, "bytes",
                                "the argument is NULL");
    pflref_write_buffer b = {bytes, len};
    return pflref_write_file_with(path, pflref_write_buffer_step, &b, err);
}

pflref_status pflref_write_file_atomic(const char *path, const char *text,
                                       pflref_error *err)
{
    if (text == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "text",
                                "the argument is NULL");
    return pflref_write_file_bytes(path, text, strlen(text), err);
}
