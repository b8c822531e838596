# SPDX-License-Identifier: GPL-3.0-or-later
"""load_result and save_result: a pflref-result/1 document (a reference
result or a candidate's) with its arrays as NumPy arrays, inline or in
NumPy files (docs/python.md, "load_result and save_result"; the files
form of docs/formats.md).  Pure Python and NumPy: nothing here calls the
C library.

The files form.  An array field of a result may hold, instead of its
numbers, a file reference: the path of a .npy file, or "ARCHIVE.npz:MEMBER"
(MEMBER may leave out its .npy), relative to the folder of the JSON file.
The fields (symbol, shape by the result's model.P and problem.N):

    w0              P         final.w      P
    theta0          k x P     final.v      N x P
    hypernetwork.W  P x e     final.alpha  N
    hypernetwork.b  P
    hypernetwork.v  N x e

The trajectory's values may sit in one 1-D array, the top-level
"trajectory_values" (a reference); a record's "value" is then
{"offset": o, "count": c}, the values trajectory_values[o : o + c].
The top-level "array_files" lists every file referenced, once, in the
order first named: {"path" (as the JSON writes it), "sha256" (64
lower-case hex digits of the whole file), "bytes" (its size)}.

A file holds '<f8' (or '<f4', widened exactly) in C order, format 1.0,
2.0 or 3.0, its shape exactly the field's (a vector (n,), a matrix
(r, c)), nothing after the data.  The messages follow the C reader's
(ref/io/npy.c; docs/bad-inputs.md N1-N22): the JSON field is .where, the
file is named as the JSON writes it.

Writing (save_result): in the files form an array of more than inline_max
numbers goes to STEM.arrays/FIELD.npy beside the result (STEM: the file's
name without a final .json), every value of the trajectory to
STEM.arrays/trajectory.npy when they number more than inline_max in all;
each file is what np.save writes ('<f8', C order, format 1.0, header
padded to 64 bytes); the JSON (compact, keys in the document's order)
is written last.  Everything is staged under temporary names first and
renamed into place at the end; on any failure every file of the save is
removed and the target is as it was.
"""
import ast
import hashlib
import json
import math
import os
import secrets
import stat
import sys
import zipfile
import zlib

import numpy as np

from ._errors import Error, InvalidInput

RESULT_FORMAT = "pflref-result/1"
# The array fields a file may hold: JSON path -> shape, each entry a size
# the document fixes ("P": model.P, "N": problem.N) or None (free).
ARRAY_FIELDS = {
    ("w0",): ("P",),
    ("theta0",): (None, "P"),
    ("hypernetwork", "W"): ("P", None),
    ("hypernetwork", "b"): ("P",),
    ("hypernetwork", "v"): ("N", None),
    ("final", "w"): ("P",),
    ("final", "v"): ("N", "P"),
    ("final", "alpha"): ("N",),
}
SIZE_FIELDS = {"P": ("model", "P"), "N": ("problem", "N")}
TRAJECTORY_VALUES = "trajectory_values"
TRAJECTORY_FILE = "trajectory.npy"
MANIFEST = "array_files"
FORMS = ("inline", "files")
# An array of more numbers than this goes to a file in the files form
# (the spec's output.inline_max default).
INLINE_MAX = 256
READ_DTYPES = ("<f8", "<f4")
NPY_MAGIC = b"\x93NUMPY"
NPY_KEYS = ("descr", "fortran_order", "shape")
# The longest .npy header read: the C reader's NPY_MAX_HEADER.
NPY_MAX_HEADER = 65536
# Bytes read at a time when a file is hashed or copied.
CHUNK = 1 << 20
SHA256_HEX = frozenset("0123456789abcdef")
# Temporary files: NAME.tmp.XXXXXX beside the target (ref/io/write.c).
TMP_TAG = ".tmp."
TMP_RANDOM = 6
TMP_ATTEMPTS = 100
ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
EIO = 3                                    # PFLREF_EIO (include/pflref/status.h)


def _invalid(where, message):
    return InvalidInput(1, where, message)


def _field_name(path):
    return ".".join(path)


# ---- the sizes a document fixes ---------------------------------------------

def _sizes(doc):
    """{"P": model.P, "N": problem.N} for those the document gives as
    integers."""
    out = {}
    for sym, (obj, key) in SIZE_FIELDS.items():
        v = doc.get(obj, {}).get(key) if isinstance(doc.get(obj), dict) \
            else None
        if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
            out[sym] = v
    return out


def _shape_text(shape):
    return "(%s)" % (", ".join(map(str, shape)) + ("," if len(shape) == 1
                                                   else ""))


def _check_shape(shape, where, template, sizes, source):
    """Refuse a shape that is not the field's: its dimensions, then the
    sizes the document fixes.  source: "" (inline) or "FILE: header field
    'shape' is " (a file)."""
    kind = "a vector, shape (n,)" if len(template) == 1 else \
        "a matrix, shape (rows, columns)"
    if len(shape) != len(template):
        raise _invalid(where, "%s%s: %s is %s" % (
            source or "shape ", _shape_text(shape), where, kind))
    want = tuple(sizes.get(s) if s else None for s in template)
    if any(w is not None and w != n for w, n in zip(want, shape)):
        named = ", ".join("%s = %d (%s)" % (s, sizes[s],
                                             ".".join(SIZE_FIELDS[s]))
                          for s in template if s in sizes)
        raise _invalid(where, "%s%s: %s is %s with %s" % (
            source or "shape ", _shape_text(shape), where,
            _shape_text(tuple(s or "?" for s in template)), named))


# ---- .npy headers and data --------------------------------------------------

def _npy_header(read, name, where):
    """(descr, shape, data offset) of the .npy stream read(n) reads; name is
    the file as the JSON writes it, where the JSON field."""
    pre = read(8)
    if len(pre) < 6 or pre[:6] != NPY_MAGIC:
        raise _invalid(where, "%s: not a .npy file (the magic \\x93NUMPY is "
                       "missing%s)" % (name, ": the file is truncated"
                                       if len(pre) < 6 else ""))
    if len(pre) < 8:
        raise _invalid(where, "%s: truncated in the version field" % name)
    major, minor = pre[6], pre[7]
    if major not in (1, 2, 3) or minor != 0:
        raise _invalid(where, "%s: format version %d.%d: pflref reads 1.0, "
                       "2.0 and 3.0" % (name, major, minor))
    nlen = 2 if major == 1 else 4
    raw = read(nlen)
    if len(raw) < nlen:
        raise _invalid(where, "%s: truncated in the header length field"
                       % name)
    hlen = int.from_bytes(raw, "little")
    if hlen > NPY_MAX_HEADER:
        raise _invalid(where, "%s: the header length field says %d bytes (at "
                       "most %d)" % (name, hlen, NPY_MAX_HEADER))
    text = read(hlen)
    if len(text) < hlen:
        raise _invalid(where, "%s: the header length field says %d bytes but "
                       "only %d follow (truncated, or the length lies)"
                       % (name, hlen, len(text)))
    text = text.decode("utf-8" if major == 3 else "latin-1", "replace")
    if not text.endswith("\n"):
        raise _invalid(where, "%s: the header does not end in a newline (its "
                       "length field lies or the file is truncated)" % name)
    try:
        d = ast.literal_eval(text.strip(" \n"))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        d = None
    if not isinstance(d, dict):
        raise _invalid(where, "%s: the header is not a dict literal of "
                       "'descr', 'fortran_order' and 'shape'" % name)
    for key in d:
        if key not in NPY_KEYS:
            raise _invalid(where, "%s: header field '%s' is unknown (the "
                           "header has exactly 'descr', 'fortran_order' and "
                           "'shape')" % (name, key))
    for key in NPY_KEYS:
        if key not in d:
            raise _invalid(where, "%s: header field '%s' is missing"
                           % (name, key))
    descr, fortran, shape = (d[k] for k in NPY_KEYS)
    if not isinstance(descr, str):
        raise _invalid(where, "%s: header field 'descr' is not a dtype "
                       "string such as '<f8'" % name)
    if descr not in READ_DTYPES:
        raise _invalid(where, "%s: header field 'descr' is '%s': result "
                       "arrays are '<f8' (or '<f4', widened exactly)"
                       % (name, descr))
    if fortran is True:
        raise _invalid(where, "%s: header field 'fortran_order' is True: "
                       "pflref reads C (row-major) order only; save with "
                       "np.ascontiguousarray" % name)
    if fortran is not False:
        raise _invalid(where, "%s: header field 'fortran_order' is not False "
                       "or True" % name)
    if not isinstance(shape, tuple) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0
            for n in shape):
        raise _invalid(where, "%s: header field 'shape' is not a tuple of "
                       "non-negative integers" % name)
    return descr, shape, 8 + nlen + hlen


def _check_size(descr, shape, offset, total, name, where):
    """The data after the header is exactly the shape's (C: npy_check_size)."""
    count = math.prod(shape)
    need = count * np.dtype(descr).itemsize
    have = total - offset
    if have < need:
        raise _invalid(where, "%s: truncated: header field 'shape' promises "
                       "%d elements (%d bytes of data) but the file has %d "
                       "bytes of data" % (name, count, need, have))
    if have > need:
        raise _invalid(where, "%s: the header lies: field 'shape' describes "
                       "%d bytes of data but %d follow the header"
                       % (name, need, have))


def _read_into(read_into, arr, name, where):
    """Fill arr's bytes from read_into(buffer) -> count."""
    view = memoryview(arr).cast("B")
    done = 0
    while done < len(view):
        n = read_into(view[done:done + CHUNK])
        if not n:
            raise _invalid(where, "%s: truncated while read (%d of %d bytes "
                           "of data)" % (name, done, len(view)))
        done += n


def _float64(arr, shape):
    out = arr if arr.dtype == np.float64 else arr.astype(np.float64)
    return out.reshape(shape)


# ---- the files a document references ----------------------------------------

def _split_ref(ref, where):
    """(file, member or None) of a reference "X.npy" or "A.npz:MEMBER" (the
    first ".npz:" splits, as the C reader does)."""
    at = ref.find(".npz:")
    file, member = (ref, None) if at < 0 else (ref[:at + 4], ref[at + 5:])
    if not file or member == "":
        raise _invalid(where, "\"%s\" is not a data file name (a .npy path, "
                       "or ARCHIVE.npz:MEMBER)" % ref)
    return file, member


def _kind(mode):
    for test, words in ((stat.S_ISDIR, "a folder"),
                        (stat.S_ISFIFO, "a FIFO (named pipe)"),
                        (stat.S_ISSOCK, "a socket"),
                        (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device")):
        if test(mode):
            return words
    return "not a file"


class _File:
    """One referenced file, opened once: a regular file (a FIFO or a device
    is refused without being read), its size, its archive when an .npz."""

    def __init__(self, folder, file, where):
        self.name, self.where = file, where
        if folder is None and not os.path.isabs(file):
            raise _invalid(where, "%s: a file reference in a document read "
                           "from memory (load it from its file with "
                           "pflref.load_result)" % file)
        full = file if os.path.isabs(file) else os.path.join(folder, file)
        try:
            fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as e:
            raise _invalid(where, "cannot open %s: %s"
                           % (file, e.strerror)) from None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise _invalid(where, "%s is not a regular file (%s); refused "
                           "without reading it" % (file, _kind(st.st_mode)))
        self.f = os.fdopen(fd, "rb")
        self.size = st.st_size
        self.zip = None

    def digest(self):
        """The SHA-256 (hex) and the size of the whole file, read now."""
        sha, n = hashlib.sha256(), 0
        self.f.seek(0)
        while True:
            chunk = self.f.read(CHUNK)
            if not chunk:
                return sha.hexdigest(), n
            sha.update(chunk)
            n += len(chunk)

    def npy(self, ref, where, template, sizes, mmap):
        """The .npy file's array, checked against its field."""
        self.f.seek(0)
        descr, shape, offset = _npy_header(self.f.read, ref, where)
        _check_shape(shape, where, template, sizes,
                     "%s: header field 'shape' is " % ref)
        _check_size(descr, shape, offset, self.size, ref, where)
        if math.prod(shape) == 0:
            return np.empty(shape, dtype=np.float64)
        if mmap and descr == "<f8":
            # what np.load(path, mmap_mode="r") does, on the descriptor
            # checked above: read-only, no copy
            return np.memmap(self.f, dtype="<f8", mode="r", offset=offset,
                             shape=shape, order="C")
        arr = np.empty(math.prod(shape), dtype=descr)
        self.f.seek(offset)
        _read_into(self.f.readinto, arr, ref, where)
        return _float64(arr, shape)

    def npz(self, ref, member, where, template, sizes):
        """The .npz member's array (read whole; libzip's checks here are
        zipfile's: the CRC-32 at the member's end)."""
        try:
            if self.zip is None:
                self.zip = zipfile.ZipFile(self.f)
            names = {i.filename: i for i in self.zip.infolist()}
            info = names.get(member) or names.get(member + ".npy")
            if info is None:
                raise _invalid(where, "%s: the archive has no member \"%s\" "
                               "(nor \"%s.npy\"; it has %d)"
                               % (ref, member, member, len(names)))
            with self.zip.open(info) as s:
                descr, shape, offset = _npy_header(s.read, ref, where)
                _check_shape(shape, where, template, sizes,
                             "%s: header field 'shape' is " % ref)
                _check_size(descr, shape, offset, info.file_size, ref, where)
                arr = np.empty(math.prod(shape), dtype=descr)
                _read_into(s.readinto, arr, ref, where)
                if s.read(1):                   # the end: the CRC check
                    raise _invalid(where, "%s: data after the array" % ref)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
            raise _invalid(where, "%s: not a readable zip archive: %s"
                           % (ref, e)) from None
        return _float64(arr, shape)

    def close(self):
        if self.zip is not None:
            self.zip.close()
        self.f.close()


# ---- reading ----------------------------------------------------------------

def _inline(value, where, template, sizes):
    """A JSON list of numbers (rows of numbers for a matrix) as a float64
    array of the field's shape."""
    try:
        arr = np.asarray(value)
    except ValueError:
        arr = None
    if arr is None or arr.dtype.kind not in "iuf":
        raise _invalid(where, "an array of numbers%s or a file reference "
                       "(a .npy path, or ARCHIVE.npz:MEMBER)" % (
                           " (rows of numbers)" if len(template) == 2 else ""))
    if arr.size == 0 and len(template) == 2 and arr.ndim == 1:
        arr = arr.reshape(0, 0)                 # [] as a matrix of no rows
    _check_shape(arr.shape, where, template, sizes, "")
    return arr.astype(np.float64)


def _is_index(x):
    return isinstance(x, int) and not isinstance(x, bool)


class _Reader:
    """The arrays of one document: its references gathered in the order
    named, the manifest checked, then every array loaded."""

    def __init__(self, doc, folder, mmap, verify):
        self.doc, self.folder = doc, folder
        self.mmap, self.verify = mmap, verify
        self.sizes = _sizes(doc)
        # (where, ref, file, member, template, put) in the order named
        self.refs = []
        self.files = {}                 # file -> _File, opened once

    def load(self):
        doc = self.doc
        for key in list(doc):
            if key == TRAJECTORY_VALUES:
                self._field(doc, key, key, (None,))
            elif (key,) in ARRAY_FIELDS:
                self._field(doc, key, key, ARRAY_FIELDS[(key,)])
            elif isinstance(doc[key], dict) and any(
                    p[0] == key for p in ARRAY_FIELDS if len(p) == 2):
                for sub in list(doc[key]):
                    if (key, sub) in ARRAY_FIELDS:
                        self._field(doc[key], sub, "%s.%s" % (key, sub),
                                    ARRAY_FIELDS[(key, sub)])
        try:
            for where, ref, file, member, template, put in self.refs:
                if file not in self.files:
                    self.files[file] = _File(self.folder, file, where)
            if self.verify:
                self._manifest()
            for where, ref, file, member, template, put in self.refs:
                f = self.files[file]
                put(f.npy(ref, where, template, self.sizes, self.mmap)
                    if member is None else
                    f.npz(ref, member, where, template, self.sizes))
        finally:
            for f in self.files.values():
                f.close()
        self._trajectory()
        return doc

    def _field(self, obj, key, where, template):
        value = obj[key]
        if isinstance(value, str):
            file, member = _split_ref(value, where)

            def put(arr, obj=obj, key=key):
                obj[key] = arr
            self.refs.append((where, value, file, member, template, put))
        elif key == TRAJECTORY_VALUES:
            raise _invalid(where, "a file reference (a .npy path, or "
                           "ARCHIVE.npz:MEMBER) to a 1-D array")
        else:
            obj[key] = _inline(value, where, template, self.sizes)

    def _named_by(self, file):
        return next(where for where, _, f, *_ in self.refs if f == file)

    def _manifest(self):
        """array_files: every referenced file listed once, its size and
        SHA-256 as listed; every listed file referenced."""
        entries = self.doc.get(MANIFEST)
        if entries is None:
            return                      # a candidate may leave it out
        if not isinstance(entries, list):
            raise _invalid(MANIFEST, "a list of {\"path\", \"sha256\", "
                           "\"bytes\"}")
        listed = {}
        for j, e in enumerate(entries):
            where = "%s[%d]" % (MANIFEST, j)
            if not isinstance(e, dict) or set(e) != {"path", "sha256",
                                                     "bytes"}:
                raise _invalid(where, "an object of exactly \"path\", "
                               "\"sha256\" and \"bytes\"")
            path, sha, size = e["path"], e["sha256"], e["bytes"]
            if not isinstance(path, str) or not path:
                raise _invalid(where + ".path", "a file name")
            if not isinstance(sha, str) or len(sha) != 64 or \
                    not set(sha) <= SHA256_HEX:
                raise _invalid(where + ".sha256", "64 lower-case hex digits")
            if not _is_index(size) or size < 0:
                raise _invalid(where + ".bytes", "a non-negative integer")
            if path in listed:
                raise _invalid(where, "%s is listed twice (also %s[%d])"
                               % (path, MANIFEST, listed[path]))
            if path not in self.files:
                raise _invalid(where, "%s is listed but no array of the "
                               "document names it" % path)
            listed[path] = j
        for file in self.files:
            if file not in listed:
                raise _invalid(MANIFEST, "%s (named by %s) is not listed"
                               % (file, self._named_by(file)))
        for file, j in listed.items():
            e, f = entries[j], self.files[file]
            where = "%s[%d]" % (MANIFEST, j)
            if f.size != e["bytes"]:
                raise _invalid(where, "%s (named by %s) has %d bytes, the "
                               "manifest says %d" % (file, self._named_by(
                                   file), f.size, e["bytes"]))
            digest, n = f.digest()
            if digest != e["sha256"] or n != e["bytes"]:
                raise _invalid(where, "%s (named by %s): its SHA-256 is %s, "
                               "the manifest says %s (the file changed after "
                               "the document was written)" % (
                                   file, self._named_by(file), digest,
                                   e["sha256"]))

    def _trajectory(self):
        """Inline values as arrays; ranged ones as views of
        trajectory_values."""
        records = self.doc.get("trajectory")
        if not isinstance(records, list):
            return
        values = self.doc.get(TRAJECTORY_VALUES)
        for r, rec in enumerate(records):
            if not isinstance(rec, dict) or "value" not in rec:
                continue
            where = "trajectory[%d].value" % r
            v = rec["value"]
            if isinstance(v, dict):
                rec["value"] = self._range(v, values, where)
            elif isinstance(v, list):
                rec["value"] = _inline(v, where, (None,), {})
            else:
                raise _invalid(where, "an array of numbers, or {\"offset\", "
                               "\"count\"} into %s" % TRAJECTORY_VALUES)

    @staticmethod
    def _range(v, values, where):
        if set(v) != {"offset", "count"} or not _is_index(v["offset"]) or \
                not _is_index(v["count"]):
            raise _invalid(where, "a ranged value is {\"offset\": o, "
                           "\"count\": c} with integers o and c")
        o, c = v["offset"], v["count"]
        if o < 0 or c < 1:
            raise _invalid(where, "offset %d, count %d: the offset is >= 0 "
                           "and the count >= 1" % (o, c))
        if values is None:
            raise _invalid(where, "a ranged value {\"offset\", \"count\"} "
                           "but the document has no %s" % TRAJECTORY_VALUES)
        if o + c > len(values):
            raise _invalid(where, "offset %d + count %d = %d is beyond the "
                           "%d numbers of %s" % (o, c, o + c, len(values),
                                                 TRAJECTORY_VALUES))
        return values[o:o + c]


def arrays_of(doc, folder=None, mmap=True, verify=True):
    """doc (a parsed pflref-result/1 document, modified in place and
    returned) with every array a float64 NumPy array; references resolved
    in folder (None: a reference is an error)."""
    if not isinstance(doc, dict) or doc.get("format") != RESULT_FORMAT:
        raise _invalid("format", "not a %s document" % RESULT_FORMAT)
    return _Reader(doc, folder, mmap, verify).load()


def load_result(path, mmap=True, verify=True):
    """Read a pflref-result/1 document (a reference result or a candidate,
    inline or in the files form) from path: a dict mirroring the JSON with
    every array a float64 NumPy array (matrices 2-D).

    mmap: a '<f8' .npy file is mapped read-only (an np.memmap, no copy);
    False reads it into a writable array.  verify: check "array_files"
    (each file's size and SHA-256, every referenced file listed, every
    listed file referenced); False skips it.  A ranged trajectory value is
    a view of "trajectory_values".  Raises pflref.InvalidInput, .where
    naming the field (final.v, trajectory[3].value, array_files[0]) and the
    message the file as the JSON writes it."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        raw = f.read()
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise _invalid("", "%s: not UTF-8 text (%s)" % (path, e)) from None
    except json.JSONDecodeError as e:
        raise _invalid("line %d, column %d" % (e.lineno, e.colno),
                       "%s: not JSON: %s" % (path, e.msg)) from None
    return arrays_of(doc, os.path.dirname(os.path.abspath(path)), mmap,
                     verify)


# ---- writing: the document --------------------------------------------------

def _as_float64(value, where, ndim):
    """value (a list, a NumPy array, a torch tensor) as a finite float64
    array of ndim dimensions, converted exactly."""
    if isinstance(value, str):
        raise ValueError("%s: a file reference (%r) is not an array; read the "
                         "document with pflref.load_result first"
                         % (where, value))
    if isinstance(value, dict):
        raise ValueError("%s: a ranged value is not an array; read the "
                         "document with pflref.load_result first" % where)
    if hasattr(value, "detach") and hasattr(value, "cpu"):        # torch
        value = value.detach().cpu().double().numpy()
    try:
        arr = np.asarray(value)
    except ValueError:
        arr = None
    if arr is None or arr.dtype.kind not in "iuf":
        raise ValueError("%s: an array of numbers, not %s" % (
            where, type(value).__name__ if arr is None else
            "an array of dtype %s" % arr.dtype))
    if arr.size == 0 and ndim == 2 and arr.ndim == 1:
        arr = arr.reshape(0, 0)
    if arr.ndim != ndim:
        raise ValueError("%s: %d dimension%s (shape %s): %s is %s" % (
            where, arr.ndim, "" if arr.ndim == 1 else "s",
            _shape_text(arr.shape), where,
            "a vector" if ndim == 1 else "a matrix (rows of numbers)"))
    arr = np.ascontiguousarray(arr, dtype="<f8")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        at = np.unravel_index(int(bad[0]), arr.shape)
        raise ValueError("%s%s is %r: a result holds finite numbers only (a "
                         "diverged run says so in its outcome)" % (
                             where, "".join("[%d]" % i for i in at),
                             float(arr[at])))
    return arr


def _document(doc):
    """The pflref-result/1 dict of a dict, a Recorder or a Result."""
    from ._check import Result
    from ._recorder import Recorder
    if isinstance(doc, Recorder):
        doc = doc.result()
    elif isinstance(doc, Result):
        doc = doc.raw
    if not isinstance(doc, dict):
        raise TypeError("doc: a pflref-result/1 dict, a Recorder or a "
                        "Result, not %s" % type(doc).__name__)
    if doc.get("format") != RESULT_FORMAT:
        raise ValueError("doc: its format is %r, not %r"
                         % (doc.get("format"), RESULT_FORMAT))
    return doc


def _plan(doc, files, inline_max, prefix):
    """(the document to write, [(file name, field, array)]): doc with each
    array inline (a list) or, in the files form, a reference to the file
    it goes to; the files in the order the document names them."""
    out, written = {}, []

    def place(path, value):
        where = _field_name(path)
        arr = _as_float64(value, where, len(ARRAY_FIELDS[path]))
        if files and arr.size > inline_max:
            written.append((where + ".npy", where, arr))
            return prefix + where + ".npy"
        return arr.tolist()

    for key, value in doc.items():
        if key in (TRAJECTORY_VALUES, MANIFEST):
            continue                    # rewritten below, as needed
        if (key,) in ARRAY_FIELDS:
            out[key] = place((key,), value)
        elif key in ("final", "hypernetwork") and isinstance(value, dict):
            out[key] = {k: place((key, k), v) if (key, k) in ARRAY_FIELDS
                        else v for k, v in value.items()}
        elif key == "trajectory" and isinstance(value, list):
            records, values = _plan_trajectory(value, files, inline_max)
            if values is not None:
                out[TRAJECTORY_VALUES] = prefix + TRAJECTORY_FILE
                written.append((TRAJECTORY_FILE, TRAJECTORY_VALUES, values))
            out[key] = records
        else:
            out[key] = value
    return out, written


def _plan_trajectory(records, files, inline_max):
    """(the records, the 1-D array of every value or None): in the files
    form, when the values number more than inline_max, every record's value
    is {offset, count} into one array, in record order (an empty value
    stays [])."""
    arrays = []
    for r, rec in enumerate(records):
        if not isinstance(rec, dict) or "value" not in rec:
            raise ValueError("trajectory[%d]: a record is a dict with a "
                             "\"value\"" % r)
        arrays.append(_as_float64(rec["value"], "trajectory[%d].value" % r,
                                  1))
    total = sum(a.size for a in arrays)
    if not files or total <= inline_max:
        return [dict(rec, value=a.tolist()) for rec, a in
                zip(records, arrays)], None
    out, offset = [], 0
    for rec, a in zip(records, arrays):
        value = {"offset": offset, "count": a.size} if a.size else []
        out.append(dict(rec, value=value))
        offset += a.size
    return out, np.concatenate(arrays) if arrays else np.empty(0)


def _json_default(x):
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError("a value of type %s is not JSON" % type(x).__name__)


def dumps(doc):
    """The document's JSON text as written: compact, keys in order, each
    double in its shortest form (repr), ended by a newline."""
    return json.dumps(doc, separators=(",", ":"), allow_nan=False,
                      default=_json_default) + "\n"


# ---- writing: the files -----------------------------------------------------

def _io(path, message):
    return Error(EIO, os.fspath(path), message)


def _target(path):
    """The file path names (a link followed), or an Error: the target is a
    regular file, writable, or absent (ref/io/write.c's rules)."""
    if not path:
        raise _io(path, "the output file name is empty")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path
    except OSError as e:
        raise _io(path, "cannot write it: %s" % e.strerror) from None
    real = path
    if stat.S_ISLNK(st.st_mode):
        if not os.path.exists(path):
            raise _io(path, "a symbolic link to %s, which does not exist (a "
                      "dangling link); output is written through a link "
                      "only to an existing regular file" % os.readlink(path))
        real = os.path.realpath(path)
        st = os.stat(real)
    if not stat.S_ISREG(st.st_mode):
        raise _io(path, "exists and is not a regular file (%s); output is "
                  "written only to regular files" % _kind(st.st_mode))
    if st.st_mode & 0o222 == 0 or not os.access(real, os.W_OK):
        raise _io(path, "the file is read-only (mode %04o); nothing replaces "
                  "a file it may not write" % (st.st_mode & 0o7777))
    return real


class _HashingWriter:
    """A file object for np.save: writes to fd, hashing and counting."""

    def __init__(self, fd):
        self.fd, self.sha, self.size = fd, hashlib.sha256(), 0

    def write(self, data):
        view = memoryview(data).cast("B")
        self.sha.update(view)
        self.size += len(view)
        while view:
            view = view[os.write(self.fd, view):]
        return len(data)


class _Staging:
    """The files of one save, each written under a temporary name beside
    its target and renamed over it at the end (publish); undo removes
    every temporary file, every file published and a folder made."""

    def __init__(self):
        self.staged, self.published, self.made = [], [], None

    def mkdir(self, folder):
        try:
            st = os.stat(folder)
        except FileNotFoundError:
            try:
                os.mkdir(folder, 0o777)
            except OSError as e:
                raise _io(folder, "cannot make the folder: %s"
                          % e.strerror) from None
            self.made = folder
            return
        if not stat.S_ISDIR(st.st_mode):
            raise _io(folder, "exists and is not a folder (%s); the files "
                      "form writes the arrays into it" % _kind(st.st_mode))

    def write(self, path, step):
        """step(fd) writes the content of path (a target already checked);
        the temporary file gets the permissions of a new file."""
        folder, name = os.path.split(path)
        for _ in range(TMP_ATTEMPTS):
            tmp = os.path.join(folder, "%s%s%s" % (name, TMP_TAG, "".join(
                secrets.choice(ALNUM) for _ in range(TMP_RANDOM))))
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL |
                             os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
                break
            except FileExistsError:
                continue
            except OSError as e:
                raise _io(path, "cannot write it: %s" % e.strerror) from None
        else:
            raise _io(path, "no fresh temporary name beside it")
        self.staged.append((tmp, path))
        try:
            out = step(fd)
            os.fsync(fd)
        except OSError as e:
            raise _io(path, "cannot write it: %s" % e.strerror) from None
        finally:
            os.close(fd)
        return out

    def publish(self):
        for tmp, path in self.staged:
            os.replace(tmp, path)
            self.published.append(path)
        for folder in sorted({os.path.dirname(p) or "." for p in
                              self.published}):
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def undo(self):
        for path in [t for t, _ in self.staged] + self.published:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        if self.made is not None:
            try:
                os.rmdir(self.made)
            except OSError:
                pass


def _write_npy(staging, path, arr):
    """arr as np.save writes it ('<f8', C order); (sha256 hex, bytes)."""
    def step(fd):
        w = _HashingWriter(fd)
        np.save(w, arr, allow_pickle=False)
        return w.sha.hexdigest(), w.size
    return staging.write(path, step)


def _write_bytes(staging, path, raw):
    def step(fd):
        _HashingWriter(fd).write(raw)
    staging.write(path, step)


def stem(path):
    """The result's file name without a final .json (out.json -> out)."""
    name = os.path.basename(path)
    return name[:-len(".json")] if name.endswith(".json") else name


def _file_matches(path, size, sha256):
    """1 when path is a regular file of size bytes whose SHA-256 is sha256
    (hex): a file the earlier result wrote, unchanged since."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) != size:
            return False
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest() == sha256
    except OSError:
        return False


# the names save_result gives its files: FIELD.npy and the trajectory's
_FILE_NAMES = frozenset([".".join(f) + ".npy" for f in ARRAY_FIELDS]
                        + [TRAJECTORY_FILE])


def _stale_files(path, folder, prefix, keep):
    """The files of the result at path (a pflref-result/1 with a manifest)
    under prefix, of a name save_result gives, that the new result does
    not write (not in keep) and that are still as that result wrote them
    (size and SHA-256): the C writer's rule (ref/io/result_files.c,
    find_stale) for the results this package writes.  Nothing found is no
    error: the result at path may be absent, unreadable or inline."""
    try:
        if not os.path.isdir(folder):
            return []
        with open(path, "r", encoding="utf-8") as f:
            old = json.load(f)
    except (OSError, ValueError):
        return []
    if not isinstance(old, dict) or old.get("format") != RESULT_FORMAT:
        return []
    stale = []
    for entry in old.get(MANIFEST) or []:
        if not isinstance(entry, dict):
            continue
        ref, sha, size = entry.get("path"), entry.get("sha256"), entry.get("bytes")
        if (not isinstance(ref, str) or not isinstance(sha, str)
                or not _is_index(size) or not ref.startswith(prefix)):
            continue
        leaf = ref[len(prefix):]
        if leaf not in _FILE_NAMES or leaf in keep:
            continue
        full = os.path.join(folder, leaf)
        if _file_matches(full, size, sha):
            stale.append(full)
    return stale


def save_result(path, doc, arrays="inline", inline_max=INLINE_MAX):
    """Write a pflref-result/1 document (a dict, a Recorder, a Result;
    arrays as lists, NumPy arrays or torch tensors) to path, inline or in
    the files form, and return the document as written (references and
    manifest in place of the arrays written to files).

    arrays: "inline" (every number in the JSON) or "files" (an array of
    more than inline_max numbers in STEM.arrays/FIELD.npy beside path, the
    trajectory's values in STEM.arrays/trajectory.npy when they number
    more than inline_max in all, and "array_files" listing them).
    path: a file name (a regular file or absent; a symbolic link is
    followed and kept); in the inline form also "-" (standard output) or
    a file object open for text.  The files form needs a file name.
    Raises ValueError naming the field for an array that is not finite or
    not of its field's dimensions, pflref.Error (kind "io") naming the path
    for a target it may not write; then nothing is written."""
    if arrays not in FORMS:
        raise ValueError("arrays: %r is not one of %s"
                         % (arrays, ", ".join(map(repr, FORMS))))
    if not _is_index(inline_max) or inline_max < 0:
        raise ValueError("inline_max: %r is not an integer >= 0"
                         % (inline_max,))
    doc = _document(doc)
    files = arrays == "files"
    if isinstance(path, (str, bytes, os.PathLike)):
        path = os.fsdecode(path)
    elif hasattr(path, "write"):
        if files:
            raise ValueError("arrays: the files form writes STEM.arrays/ "
                             "beside a result file; a file object has no "
                             "folder (save to a file name, or "
                             "arrays=\"inline\")")
        out, _ = _plan(doc, False, inline_max, "")
        path.write(dumps(out))
        return out
    else:
        raise TypeError("path: a file name or a file object, not %s"
                        % type(path).__name__)
    if path == "-":
        if files:
            raise ValueError("arrays: the files form writes STEM.arrays/ "
                             "beside a result file; \"-\" (standard output) "
                             "is not one (arrays=\"inline\" writes there)")
        out, _ = _plan(doc, False, inline_max, "")
        sys.stdout.write(dumps(out))
        return out
    prefix = stem(path) + ".arrays/"
    if files and ".npz:" in prefix:
        raise ValueError("path: %s: its name holds \".npz:\", which would "
                         "make its references read as .npz members" % path)
    out, written = _plan(doc, files, inline_max, prefix)
    target = _target(path)
    folder = os.path.join(os.path.dirname(path), prefix[:-1])
    # an earlier result's files this one does not rewrite, removed once
    # the new document is in place (a rerun into the same path leaves no
    # file its manifest does not list)
    stale = _stale_files(target, folder, prefix, {name for name, _, _ in written})
    staging = _Staging()
    try:
        if written:
            staging.mkdir(folder)
            manifest = []
            for name, _, arr in written:
                sha, size = _write_npy(staging, _target(
                    os.path.join(folder, name)), arr)
                manifest.append({"path": prefix + name, "sha256": sha,
                                 "bytes": size})
            out[MANIFEST] = manifest
        _write_bytes(staging, target, dumps(out).encode("utf-8"))
        staging.publish()
    except BaseException:
        staging.undo()
        raise
    for f in stale:
        try:
            os.unlink(f)
        except OSError:
            pass
    if stale and not written:
        try:
            os.rmdir(folder)   # only when empty
        except OSError:
            pass
    return out


__all__ = ["load_result", "save_result", "arrays_of", "dumps", "stem",
           "ARRAY_FIELDS", "INLINE_MAX"]
