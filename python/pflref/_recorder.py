# SPDX-License-Identifier: GPL-3.0-or-later
"""The candidate's side: a Recorder collects what a candidate computes,
record by record, and writes the pflref-result/1 document `check` reads
(docs/python.md, "Recorder"; docs/validate.md, "What to write").

Which records a vector needs is the C library's answer
(pflref_golden_required, ref/oracle/required.c: the records the
algorithm emits on the vector's spec, marked where the vector expects
them), so missing() names what a candidate forgot before anything is
compared, and unexpected() what it wrote under a key the algorithm never
emits (a misspelt name, a step off by one).
"""
import numbers

import numpy as np

from . import _lib
from ._arrays import INLINE_MAX, save_result
from ._vectors import as_vector

RESULT_FORMAT = "pflref-result/1"
EVENTS = ("round_begin", "client_begin", "step", "client_end", "server",
          "note")
FINAL_NAMES = ("w", "v", "alpha")


def to_float64(value, what="value"):
    """value as a flat float64 NumPy array, converted exactly: NumPy arrays
    and scalars of any real dtype, Python numbers and nested lists, torch
    tensors (detached, moved to the CPU, widened to float64; a float32
    widens exactly)."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):      # torch
        value = value.detach().cpu()
        if hasattr(value, "double"):
            value = value.double()
        value = value.numpy()
    arr = np.asarray(value)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.floating)
                                   or np.issubdtype(arr.dtype, np.integer)
                                   or arr.dtype == np.bool_):
        raise TypeError("%s: cannot convert a %s of dtype %s to float64"
                        % (what, type(value).__name__, arr.dtype))
    if arr.dtype == np.bool_:
        raise TypeError("%s: a boolean array is not a parameter vector"
                        % what)
    return np.array(arr, dtype=np.float64).reshape(-1)


def _key(event, phase, round, client, step, name):
    return (event, phase, -1 if round is None else int(round),
            -1 if client is None else int(client),
            -1 if step is None else int(step), name)


def describe_key(rec):
    """'step w_local (train, round 0, client 2, step 3)' for a record or
    a required entry."""
    where = [rec["phase"]]
    for k in ("round", "client", "step"):
        if rec.get(k) is not None and rec.get(k, -1) >= 0:
            where.append("%s %d" % (k, rec[k]))
    return "%s %s (%s)" % (rec["event"], rec["name"], ", ".join(where))


def _index(x, what):
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < 0:
        raise ValueError("%s: %r is not a non-negative integer" % (what, x))
    return int(x)


class Recorder:
    """Collects a candidate's records for one vector.

    rec = pflref.Recorder(vector)
    rec.round_begin(t, w)                       w_t, the round's start
    rec.step(t, i, s, name, value)              s = 0: client_begin (the
                                                starting iterate), s >= 1:
                                                the iterate after step s
    rec.client_end(t, i, name, value)
    rec.server(t, w, name="w")                  w_{t+1}
    rec.final(name, value, client=None)         "w"; "v" or "alpha" per
                                                client, or all at once
    rec.record(event, name, value, round=None, client=None, step=None,
               phase="train")                   anything else
    rec.missing(), rec.unexpected(), rec.result()
    rec.save(path, arrays="inline", inline_max=256)
                                                the result written to path;
                                                arrays="files": large arrays
                                                in NumPy files beside it

    Every method takes phase= ("train", "finetune", ...); in a phase after
    training pass round None.  Values are converted exactly to float64;
    the first non-finite value is not stored: it declares the outcome
    "diverged" at its round, client and step (check then reports a wrong
    outcome class instead of comparing numbers).
    """

    def __init__(self, vector):
        self.vector = as_vector(vector)
        self.trajectory = []
        self._final = {}
        self._v_rows = {}
        self._alpha = {}
        self.outcome = None
        self._required = None

    # ---- writing ------------------------------------------------------------

    def record(self, event, name, value, round=None, client=None, step=None,
               phase="train"):
        if event not in EVENTS:
            raise ValueError("event: %r is not one of %s (final state: "
                             "rec.final)" % (event, ", ".join(EVENTS)))
        if not isinstance(name, str) or not name:
            raise ValueError("name: %r is not a quantity name" % (name,))
        if not isinstance(phase, str) or not phase:
            raise ValueError("phase: %r is not a phase name" % (phase,))
        rec = {"event": event, "phase": phase}
        for k, x in (("round", round), ("client", client), ("step", step)):
            x = _index(x, k)
            if x is not None:
                rec[k] = x
        rec["name"] = name
        arr = to_float64(value, "%s %s" % (event, name))
        if not self._finite(arr, rec):
            return
        rec["value"] = arr.tolist()
        self.trajectory.append(rec)

    def round_begin(self, t, w, name="w", phase="train"):
        self.record("round_begin", name, w, round=t, phase=phase)

    def step(self, t, i, s, name, value, phase="train"):
        event = "client_begin" if _index(s, "step") == 0 else "step"
        self.record(event, name, value, round=t, client=i, step=s,
                    phase=phase)

    def client_begin(self, t, i, name, value, phase="train"):
        self.record("client_begin", name, value, round=t, client=i, step=0,
                    phase=phase)

    def client_end(self, t, i, name, value, phase="train"):
        self.record("client_end", name, value, round=t, client=i,
                    phase=phase)

    def server(self, t, w, name="w", phase="train"):
        self.record("server", name, w, round=t, phase=phase)

    def note(self, name, value, round=None, client=None, step=None,
             phase="train"):
        self.record("note", name, value, round=round, client=client,
                    step=step, phase=phase)

    def final(self, name, value, client=None):
        """The final state: "w" (flat); "v" per client (client=i) or as a
        matrix of one row per client; "alpha" per client or as a vector."""
        if name not in FINAL_NAMES:
            raise ValueError("final: %r is not one of %s"
                             % (name, ", ".join(FINAL_NAMES)))
        client = _index(client, "client")
        if name == "w":
            if client is not None:
                raise ValueError("final w: the global model has no client")
            arr = to_float64(value, "final w")
            if self._finite(arr, {"name": "final.w"}):
                self._final["w"] = arr.tolist()
            return
        rows = self._v_rows if name == "v" else self._alpha
        if client is not None:
            arr = to_float64(value, "final %s[%d]" % (name, client))
            if name == "alpha" and arr.size != 1:
                raise ValueError("final alpha[%d]: one number per client, "
                                 "not %d" % (client, arr.size))
            if self._finite(arr, {"name": "final.%s" % name, "client": client}):
                rows[client] = arr.tolist() if name == "v" else float(arr[0])
            return
        if hasattr(value, "detach"):
            value = value.detach().cpu().double().numpy()
        arr = np.asarray(value, dtype=np.float64)
        if name == "v":
            arr = arr.reshape(arr.shape[0], -1)
        for i, row in enumerate(arr):
            self.final(name, row, client=i)

    def _finite(self, arr, rec):
        if np.all(np.isfinite(arr)):
            return True
        if self.outcome is None:
            bad = int(np.flatnonzero(~np.isfinite(arr))[0])
            self.outcome = {"class": "diverged",
                            "message": "%s[%d] is %r" % (rec["name"], bad,
                                                         float(arr[bad]))}
            for k in ("round", "client", "step"):
                if rec.get(k) is not None:
                    self.outcome[k] = rec[k]
        return False

    # ---- reading --------------------------------------------------------------

    def required(self):
        """Every record the vector's algorithm writes on its spec, from the
        C library: dicts {event, phase, round?, client?, step?, name,
        length, required}; required marks those check compares."""
        if self._required is None:
            v = self.vector
            self._required = _lib.text_call("pflref_golden_required", v.text,
                                            v.folder)["records"]
        return self._required

    def _given_keys(self):
        keys = {_key(r["event"], r["phase"], r.get("round"), r.get("client"),
                     r.get("step"), r["name"]) for r in self.trajectory}
        if "w" in self._final:
            keys.add(_key("final", "final", None, None, None, "w"))
        for i in self._v_rows:
            keys.add(_key("final", "final", None, i, None, "v"))
        for i in self._alpha:
            keys.add(_key("final", "final", None, i, None, "alpha"))
        return keys

    def missing(self):
        """The required records not given, in the order the algorithm
        writes them (the final state last)."""
        given = self._given_keys()
        return [r for r in self.required() if r["required"] and
                _key(r["event"], r["phase"], r.get("round"), r.get("client"),
                     r.get("step"), r["name"]) not in given]

    def unexpected(self):
        """The records given whose key the algorithm never writes on this
        spec (check ignores them: often a misspelt name or a shifted
        step)."""
        known = {_key(r["event"], r["phase"], r.get("round"), r.get("client"),
                      r.get("step"), r["name"]) for r in self.required()}
        return [r for r in self.trajectory
                if _key(r["event"], r["phase"], r.get("round"),
                        r.get("client"), r.get("step"), r["name"]) not in known]

    def result(self):
        """The pflref-result/1 document (a dict) of what was recorded."""
        final = dict(self._final)
        for name, rows in (("v", self._v_rows), ("alpha", self._alpha)):
            if not rows:
                continue
            gaps = [i for i in range(max(rows) + 1) if i not in rows]
            if gaps:
                raise ValueError("final %s: no value for client%s %s (give "
                                 "every client 0..%d)" % (
                                     name, "s" if len(gaps) > 1 else "",
                                     ", ".join(map(str, gaps)), max(rows)))
            final[name] = [rows[i] for i in range(max(rows) + 1)]
        doc = {"format": RESULT_FORMAT, "id": self.vector.id,
               "final": final, "trajectory": list(self.trajectory)}
        if self.outcome is not None:
            doc["outcome"] = dict(self.outcome)
        return doc

    def save(self, path, arrays="inline", inline_max=INLINE_MAX):
        """Write result() to path (pflref.save_result) and return the
        document as written.  arrays: "inline" (every number in the JSON)
        or "files" (each array of more than inline_max numbers, and the
        trajectory's values when they number more in all, in a .npy file
        of STEM.arrays/ beside path, listed in "array_files")."""
        return save_result(path, self.result(), arrays=arrays,
                           inline_max=inline_max)

    def __repr__(self):
        return "<pflref.Recorder %s: %d records>" % (self.vector.id,
                                                     len(self.trajectory))

