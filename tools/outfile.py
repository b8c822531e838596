# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/outfile.py: the one way the project's scripts write a file (the
site's pages, tools/site/build.py; the bench's tables, data and figure,
bench/run.py), with the rules of pflref's own writer (ref/io/write.c;
docs/cli.md, "Output files and standard output"):

  - the target is a regular file or absent: a FIFO, a device, a socket or
    a folder is refused by name (OutputError) and never opened;
  - a symbolic link is followed and kept (the file it names is replaced);
    a dangling link is refused rather than creating the file it names;
  - a file that may not be written (no write bit, or os.access says no)
    is refused, not replaced;
  - the content goes to NAME.tmp.XXXXXX beside the (resolved) target,
    created with the permissions of a new file (0666 less the umask),
    fsynced and closed, each checked, and renamed over the target only
    then; on any failure the temporary file is removed and the target is
    as it was;
  - the target is looked at and renamed over through one open descriptor
    of its folder: an absent target is published with renameat2
    RENAME_NOREPLACE (or link(2) where the filesystem lacks the flag), so
    nothing that appeared meanwhile is replaced; an existing one only when
    the name still holds the regular file (device, inode) seen before.
    rename(2) cannot refuse a destination by its kind, so an entry swapped
    in between that last look and the rename is replaced (the one window
    left, as in ref/io/write.c).

Loaded by path, as tools/trace.py is (tools/ is not put on sys.path, where
tools/trace.py would stand in for the standard library's trace):

    spec = importlib.util.spec_from_file_location("pflref_outfile", PATH)
    outfile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(outfile)
    outfile.write(path, "text")           # str (UTF-8) or bytes
    outfile.copy(src, dst)                # a file's bytes
    outfile.write_with(path, step)        # step(fd) writes the content
                                          # (a child's stdout: gnuplot)

Tested by python/tests/test_outfile.py (make check-python).
"""
import ctypes
import errno
import os
import secrets
import stat

TMP_TAG = ".tmp."
TMP_RANDOM = 6
TMP_NAME_KEEP = 255 - len(TMP_TAG) - TMP_RANDOM   # NAME_MAX
TMP_ATTEMPTS = 100
ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
RENAME_NOREPLACE = 1


class OutputError(OSError):
    """A target the writer refuses, or a write that failed: .filename is
    the path as given, str() says what is wrong with it."""

    def __init__(self, code, message, path):
        super().__init__(code, message, path)
        self.message = message

    def __str__(self):
        return self.message


def _kind(mode):
    for test, words in ((stat.S_ISDIR, "a folder"),
                        (stat.S_ISFIFO, "a FIFO (named pipe)"),
                        (stat.S_ISSOCK, "a socket"),
                        (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device"),
                        (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return words
    return "not a file"


def _not_regular(path, mode, resolved=None):
    if resolved is not None:
        return OutputError(errno.EEXIST, "%s is a symbolic link to %s, which "
                           "is not a regular file (%s); output is written "
                           "only to regular files" % (path, resolved,
                                                      _kind(mode)), path)
    return OutputError(errno.EEXIST, "%s exists and is not a regular file "
                       "(%s); output is written only to regular files"
                       % (path, _kind(mode)), path)


def _resolve(path):
    """The target path names (links followed), or OutputError."""
    if not path:
        raise OutputError(errno.EINVAL, "the output file name is empty", path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path, None
    except OSError as e:
        raise OutputError(e.errno, "cannot write %s: %s"
                          % (path, os.strerror(e.errno)), path) from None
    if stat.S_ISLNK(st.st_mode):
        if not os.path.exists(path):
            raise OutputError(errno.ENOENT, "%s is a symbolic link to %s, "
                              "which does not exist (a dangling link); output "
                              "is written through a link only to an existing "
                              "regular file" % (path, os.readlink(path)), path)
        return os.path.realpath(path), os.path.realpath(path)
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(path, st.st_mode)
    return path, None


def _look(dirfd, name, path, resolved):
    """What is at name now: None (absent) or the regular file's stat."""
    try:
        st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(path, st.st_mode, resolved)
    eff = os.access in os.supports_effective_ids
    if st.st_mode & 0o222 == 0 or not os.access(
            name, os.W_OK, dir_fd=dirfd, effective_ids=eff):
        raise OutputError(errno.EACCES, "cannot write %s: the file is "
                          "read-only (mode %04o); nothing replaces a file it "
                          "may not write" % (path, st.st_mode & 0o7777), path)
    return st


def _open_tmp(dirfd, name):
    for _ in range(TMP_ATTEMPTS):
        tag = "".join(secrets.choice(ALNUM) for _ in range(TMP_RANDOM))
        tmp = name[:TMP_NAME_KEEP] + TMP_TAG + tag
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL |
                                os.O_NOFOLLOW | os.O_CLOEXEC, 0o666,
                                dir_fd=dirfd)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no fresh temporary name", name)


def _renameat2(dirfd, tmp, name):
    """0, or the errno of renameat2(RENAME_NOREPLACE) (ENOSYS when the C
    library has no renameat2)."""
    fn = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if fn is None:
        return errno.ENOSYS
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                   ctypes.c_char_p, ctypes.c_uint]
    if fn(dirfd, os.fsencode(tmp), dirfd, os.fsencode(name),
          RENAME_NOREPLACE) == 0:
        return 0
    return ctypes.get_errno()


def _raced(path, what):
    return OutputError(errno.EEXIST, "%s %s while it was written; it is left "
                       "as it is and nothing was written" % (path, what), path)


def _publish_absent(dirfd, tmp, name, path):
    """The temporary file gets the name only if nothing has it; True when
    the temporary name is gone (renamed), False when it is a second name
    still to remove (linked)."""
    code = _renameat2(dirfd, tmp, name)
    if code == 0:
        return True
    if code == errno.EEXIST:
        raise _raced(path, "appeared")
    if code not in (errno.EINVAL, errno.ENOSYS):
        raise OSError(code, os.strerror(code), path)
    try:                                   # link(2) never replaces either
        os.link(tmp, name, src_dir_fd=dirfd, dst_dir_fd=dirfd)
        return False
    except FileExistsError:
        raise _raced(path, "appeared") from None
    except OSError as e:
        if e.errno not in (errno.EPERM, errno.EOPNOTSUPP):
            raise
    try:                                   # no hard links: the one window
        os.stat(name, dir_fd=dirfd, follow_symlinks=False)
        raise _raced(path, "appeared")
    except FileNotFoundError:
        os.rename(tmp, name, src_dir_fd=dirfd, dst_dir_fd=dirfd)
        return True


def _publish_over(dirfd, tmp, name, path, seen):
    """Replace the regular file seen, and nothing else."""
    try:
        st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
    except FileNotFoundError:
        return _publish_absent(dirfd, tmp, name, path)
    if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (
            seen.st_dev, seen.st_ino):
        raise _raced(path, "was replaced by another file"
                     if stat.S_ISREG(st.st_mode) else
                     "was replaced by an entry that is not a regular file")
    os.rename(tmp, name, src_dir_fd=dirfd, dst_dir_fd=dirfd)   # the window
    return True


def write_with(path, step):
    """Write path, its content from step(fd) (fd: the temporary file, open
    for writing), by the rules above.  Raises OutputError for a refused
    target, OSError for a failed write, or what step raised; the target
    is then as it was."""
    path = os.fspath(path)
    target, resolved = _resolve(path)
    folder, name = os.path.split(target)
    if name in ("", ".", ".."):
        raise OutputError(errno.EISDIR, "%s names a folder, not a file; "
                          "output is written only to regular files" % path,
                          path)
    try:
        dirfd = os.open(folder or ".", os.O_PATH | os.O_DIRECTORY |
                        os.O_CLOEXEC)
    except OSError as e:
        raise OutputError(e.errno, "cannot write %s: %s"
                          % (path, os.strerror(e.errno)), path) from None
    tmp = None
    try:
        seen = _look(dirfd, name, path, resolved)
        tmp, fd = _open_tmp(dirfd, name)
        try:
            step(fd)
            os.fsync(fd)
        finally:
            os.close(fd)
        if seen is None:
            gone = _publish_absent(dirfd, tmp, name, path)
        else:
            gone = _publish_over(dirfd, tmp, name, path, seen)
        if gone:
            tmp = None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp, dir_fd=dirfd)
            except FileNotFoundError:
                pass
        os.close(dirfd)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write(path, data):
    """Write data (str, as UTF-8, or bytes) to path by the rules above."""
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    write_with(path, lambda fd: _write_all(fd, raw))


def copy(src, dst):
    """Write the bytes of the file src to dst by the rules above."""
    with open(src, "rb") as f:
        raw = f.read()
    write(dst, raw)
