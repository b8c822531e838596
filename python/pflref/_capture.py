# SPDX-License-Identifier: GPL-3.0-or-later
"""pflref.Capture: record a training run as it happens, then check it
(docs/python.md, "Capturing a run").

A capture holds what a run did, as data, in the order it did it:

    the clients' data      (X_i, y_i), given once, written as .npy files
    w⁰                     the global model before the first round
    the schedule           per round, the clients in the order they
                           trained, and each client's minibatches as
                           arrays of its own sample indices (the
                           schedule's "given" form, docs/formats.md)
    the records            per round, each client's quantities at the end
                           of its work (client_end) and the server's after
                           aggregation (server): the round-level
                           trajectory of docs/formats.md

From that, check() writes a spec (pflref-spec/1: model, problem, w⁰,
schedule as given), freezes the reference's run of it as a vector
(pflref.freeze), writes the candidate result the records make, compares
them (pflref.check) and, when they differ, asks pflref.diagnose which
known variant the run computes.  Nothing is recomputed here: the
reference is the C library.

This module imports no deep-learning framework: NumPy (or JAX, through
np.asarray) users call batch() and record() themselves; pflref.torch
(python/pflref/_torch.py) observes a PyTorch DataLoader instead and
snapshots nn.Modules through a declared layout.

Bad input (an index out of range, a client twice in one round, a value
of the wrong size, a NaN) raises pflref.InvalidInput whose .where names
the round, the client and the record, when it is recorded; check()
validates everything before it writes, and writes into a temporary
folder renamed into place only when complete, so a failed capture
leaves nothing behind.
"""
import functools
import json
import os
import shlex
import shutil
import tempfile

import numpy as np

from ._errors import InvalidInput
from . import _lib

SPEC_FORMAT = "pflref-spec/1"
# the quantities that are a whole model: P numbers, checked at record time
MODEL_NAMES = ("w", "w_local", "v", "theta", "u", "w_personal")


def invalid(where, message, round=None, client=None):
    """pflref.InvalidInput (status 1, the CLI's exit 2) located at where."""
    return InvalidInput(1, where, message,
                        -1 if round is None else round,
                        -1 if client is None else client)


def _where(round=None, client=None, record=None, batch=None):
    parts = ["capture"]
    if round is not None:
        parts.append("round %d" % round)
    if client is not None:
        parts.append("client %d" % client)
    if batch is not None:
        parts.append("batch %d" % batch)
    if record is not None:
        parts.append("record %s" % record)
    return ", ".join(parts)


def model_blocks(model):
    """The blocks [{name, offset, rows, cols}] and P of a pflref model
    object, as the library lays it out: a run of zero rounds on one
    placeholder client (ref/model.c decides; nothing is recomputed)."""
    d = _input_width(model)
    k = model.get("k", 1) if model.get("kind") != "quadratic" else 1
    if model.get("kind") == "quadratic":
        client = {"a": [1.0] * model["d"], "c": [0.0] * model["d"]}
    else:
        client = {"X": [[0.0] * d], "y": [0.0 if k < 2 else 0]}
    spec = {"format": SPEC_FORMAT, "model": model,
            "problem": {"clients": [client]},
            "algorithm": {"name": "fedavg", "hyperparameters": {"eta": 1}},
            "schedule": {"kind": "given", "rounds": []},
            "output": {"trajectory": "none"}}
    raw = json.loads(_lib.run_text(json.dumps(spec), None))["model"]
    return raw["blocks"], int(raw["P"])


def _input_width(model):
    if model.get("kind") == "layers":
        return int(np.prod(model["input"]))
    return int(model["d"])


def _scope(enter, leave):
    """A context manager calling enter() and leave(failed)."""
    class _Scope:
        def __enter__(self):
            enter()
            return self

        def __exit__(self, etype, value, tb):
            leave(etype is not None)
            return False
    return _Scope()


class Capture:
    """One run, recorded as it happens (module doc).

    cap = pflref.Capture("fedavg", model, hyperparameters={"eta": 0.1})
    cap.clients([(X0, y0), (X1, y1), ...])     the data, once
    cap.init(w0)                                w⁰ (P numbers)
    with cap.round():                           or @cap.round on a function
        with cap.client(i):                     or @cap.client
            cap.batch(indices)                  one minibatch (one step)
            cap.record("w_local", w_i)          client_end w_local
        with cap.personal(i): ...               a personal pass's batches
        cap.select(S)                           S^t, when fewer than trained
        cap.record("w", w)                      server w
    cap.final("v", v_i, client=i)               the final state (final w:
                                                the last server w)
    verdict = cap.check("capture-out")          PASS / FAIL, diagnosis
    raise SystemExit(cap.main("capture-out"))   the same, printed; exit 0/1

    model: a pflref model object (docs/formats.md, "model"), or a layout
    (pflref.torch.layout).  hyperparameters, switches, preset: the
    spec's algorithm object (the names of docs/algorithms/<name>.md).
    """

    def __init__(self, algorithm, model, hyperparameters=None,
                 switches=None, preset=None, name=None):
        if not isinstance(algorithm, str) or not algorithm:
            raise ValueError("algorithm: %r is not an algorithm name"
                             % (algorithm,))
        self.layout = model if hasattr(model, "model_spec") else None
        self.model = dict(self.layout.model_spec if self.layout else model)
        self.blocks, self.P = model_blocks(self.model)
        self.algorithm = {"name": algorithm,
                          "hyperparameters": dict(hyperparameters or {})}
        if switches:
            self.algorithm["switches"] = dict(switches)
        if preset:
            self.algorithm["preset"] = preset
        self.name = name or "capture of a %s run" % algorithm
        self.data = []              # (X, y) per client
        self.w0 = None
        self.rounds = []            # {"order": [i], "batches": {i: [..]},
        #                              "personal": {i: [..]}}
        self.records = []           # (event, round, client, name, value)
        self.finals = {}            # (name, client) -> value
        self._round = None          # the open round's dict
        self._client = None         # [client id or None, phase, explicit]
        self._lengths = {}

    # ---- the data and w⁰ -----------------------------------------------------

    def clients(self, data):
        """Each client's training data, client 0 first: a list of (X, y),
        X of n_i rows (each row flattened), y of n_i targets."""
        data = list(data)
        if not data:
            raise invalid("capture.clients", "no client")
        self.data = [self._client_data(i, X, y)
                     for i, (X, y) in enumerate(data)]

    def _client_data(self, i, X, y):
        where = "capture.clients[%d]" % i
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y)
        n = X.shape[0] if X.ndim else 0
        if n < 1:
            raise invalid(where + ".X", "no samples", client=i)
        X = X.reshape(n, -1)
        y = y.reshape(-1)
        if y.shape[0] != n:
            raise invalid(where + ".y", "%d targets for %d samples"
                          % (y.shape[0], n), client=i)
        if X.shape[1] != _input_width(self.model):
            raise invalid(where + ".X", "rows of %d numbers, the model "
                          "reads %d" % (X.shape[1],
                                        _input_width(self.model)), client=i)
        for name, arr in (("X", X), ("y", y)):
            if np.issubdtype(arr.dtype, np.floating) and \
                    not np.all(np.isfinite(arr)):
                bad = np.argwhere(~np.isfinite(arr))[0]
                raise invalid("%s.%s[%s]" % (where, name, ", ".join(
                    str(int(b)) for b in bad)),
                              "%r is not finite" % float(arr[tuple(bad)]),
                              client=i)
        if self.model.get("loss", "cross_entropy") == "cross_entropy" and \
                self.model.get("kind") in ("softmax", "mlp", "layers"):
            if np.any(y != np.round(y.astype(np.float64))):
                raise invalid(where + ".y", "class labels must be integers",
                              client=i)
            y = y.astype(np.int64)
        else:
            y = y.astype(np.float64)
        return X, y

    def init(self, w):
        """w⁰: the global model before the first round (P numbers)."""
        self.w0 = self._value(w, "init w", None, None, "w")

    # ---- rounds and clients ----------------------------------------------------

    def round(self, fn=None):
        """A scope for one communication round: `with cap.round():`, or
        `@cap.round` on the function that runs one round (each call one
        round, numbered from 0)."""
        if fn is None:
            return _scope(self._round_enter, self._round_leave)

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self.round():
                return fn(*args, **kwargs)
        return wrapped

    def client(self, arg=None, personal=False):
        """A scope for one client's work in the open round: `with
        cap.client(i):`, or `@cap.client` on the function that trains one
        client (the client is then the one whose data its batches come
        from).  personal=True: the batches are the personal pass's
        (Ditto's schedule.rounds[t].personal)."""
        if callable(arg):
            fn = arg

            @functools.wraps(fn)
            def wrapped(*args, **kwargs):
                with self.client(personal=personal):
                    return fn(*args, **kwargs)
            return wrapped
        if arg is not None and (isinstance(arg, bool) or
                                not isinstance(arg, (int, np.integer))):
            raise ValueError("client: %r is not a client id" % (arg,))
        phase = "personal" if personal else "batches"
        return _scope(lambda: self._client_enter(arg, phase),
                      lambda failed: self._client_leave())

    def select(self, ids):
        """The clients the server aggregates in the open round, in the
        order drawn, when they are fewer than those that trained (pFedMe's
        S^t with pfedme.train = all: schedule.rounds[t].selected)."""
        t = len(self.rounds) - 1
        if self._round is None:
            raise invalid(_where(), "a selection outside a round")
        ids = [int(i) for i in ids]
        if not ids or len(set(ids)) != len(ids):
            raise invalid(_where(t) + ", selected", "%r is not a non-empty "
                          "set of client ids" % (ids,), round=t)
        self._round["selected"] = ids

    def personal(self, arg=None):
        """client(arg, personal=True)."""
        return self.client(arg, personal=True)

    def _round_enter(self):
        if self._round is not None:
            raise invalid(_where(len(self.rounds) - 1),
                          "a round opened inside round %d"
                          % (len(self.rounds) - 1))
        if self.w0 is None:
            self._default_init()
        self._round = {"order": [], "batches": {}, "personal": {}}
        self.rounds.append(self._round)

    def _round_leave(self, failed=False):
        t = len(self.rounds) - 1
        self._round, self._client = None, None
        if not failed and not self.rounds[t]["order"]:
            raise invalid(_where(t), "no client trained in this round "
                          "(no batch and no client scope seen)", round=t)

    def _default_init(self):
        raise invalid("capture.init", "w⁰ not given: call cap.init(w0) "
                      "before the first round")

    def _client_enter(self, i, phase):
        t = len(self.rounds) - 1
        if self._round is None:
            raise invalid(_where(), "a client scope outside a round")
        if self._client is not None and self._client[2]:
            raise invalid(_where(t, self._client[0]),
                          "a client scope inside another")
        self._client = [None, phase, True]
        if i is not None:
            self._join(int(i), phase)

    def _client_leave(self):
        self._client = None

    def _join(self, i, phase):
        """Client i takes part in the open round (its first appearance)."""
        t = len(self.rounds) - 1
        if self.data and not 0 <= i < len(self.data):
            raise invalid(_where(t, i), "client %d does not exist (%d "
                          "clients)" % (i, len(self.data)), round=t)
        rnd = self._round
        if self._client is not None:
            self._client[0] = i
        if i in rnd[phase]:
            raise invalid(_where(t, i), "client %d trains twice in one "
                          "round (%s)" % (i, phase), round=t, client=i)
        if i not in rnd["order"]:
            rnd["order"].append(i)
        rnd[phase][i] = []

    def batch(self, indices, client=None):
        """One minibatch (one local step) of the current client: the
        indices of its samples, in the order the loader gave them."""
        t = len(self.rounds) - 1
        if self._round is None:
            raise invalid(_where(), "a batch outside a round")
        cur = self._client
        if client is None:
            if cur is None or cur[0] is None:
                raise invalid(_where(t), "a batch with no client: open "
                              "cap.client(i) or pass client=", round=t)
            client = cur[0]
        client = int(client)
        phase = cur[1] if cur is not None else "batches"
        if cur is not None and cur[2] and cur[0] is not None and \
                cur[0] != client:
            raise invalid(_where(t, cur[0]), "a batch of client %d's data "
                          "inside client %d's scope" % (client, cur[0]),
                          round=t, client=cur[0])
        if cur is None:               # no scope: an implicit entry per
            self._client = cur = [None, phase, False]   # run of batches
        if cur[0] is None or (not cur[2] and cur[0] != client):
            self._join(client, phase)
        steps = self._round[phase][client]
        idx = self._indices(indices, t, client, len(steps))
        steps.append(idx)

    def _indices(self, indices, t, i, s):
        where = _where(t, i, batch=s)
        arr = np.asarray(indices)
        if arr.ndim == 0:
            arr = arr.reshape(1)
        if arr.size == 0:
            raise invalid(where, "an empty batch", round=t, client=i)
        if arr.ndim != 1 or not (np.issubdtype(arr.dtype, np.integer)):
            raise invalid(where, "sample indices must be a list of "
                          "integers, not %s of %s" % (arr.shape, arr.dtype),
                          round=t, client=i)
        if self.data:
            n = self.data[i][0].shape[0]
            bad = np.flatnonzero((arr < 0) | (arr >= n))
            if bad.size:
                raise invalid(where, "sample index %d out of range (client "
                              "%d has %d samples)" % (int(arr[bad[0]]), i, n),
                              round=t, client=i)
        return [int(x) for x in arr]

    # ---- records -----------------------------------------------------------

    def record(self, name, value):
        """A quantity the algorithm records (docs/validate.md, "Every
        algorithm's records"): inside a client scope its client_end value,
        inside a round its server value; recorded twice in one scope, the
        last value is kept."""
        t = len(self.rounds) - 1
        if self._round is None:
            raise invalid(_where(record=name), "a record outside a round "
                          "(the final state: cap.final)")
        if self._client is not None and self._client[2]:
            i = self._client[0]
            if i is None:
                raise invalid(_where(t, record=name), "the client is not "
                              "known yet (no batch seen): open "
                              "cap.client(i)", round=t)
            event = "client_end"
        else:
            i, event = None, "server"
        arr = self._value(value, name, t, i, name)
        self.records = [r for r in self.records
                        if r[:4] != (event, t, i, name)]
        self.records.append((event, t, i, name, arr))

    def final(self, name, value, client=None):
        """The final state (Recorder.final's names): by default final w is
        the last server w, final v of a client the last v it recorded."""
        arr = self._value(value, "final " + name, None, client, name)
        self.finals[(name, client)] = arr

    def _value(self, value, what, t, i, name):
        arr = self.flat(value, t, i, what)
        where = _where(t, i, record=what)
        if not np.all(np.isfinite(arr)):
            bad = int(np.flatnonzero(~np.isfinite(arr))[0])
            raise invalid(where, "entry %d is %r" % (bad, float(arr[bad])),
                          round=t, client=i)
        want = self.P if name in MODEL_NAMES else self._lengths.get(name)
        if want is not None and arr.size != want:
            raise invalid(where, "%d numbers, expected %d (the model's "
                          "parameters changed shape?)" % (arr.size, want),
                          round=t, client=i)
        self._lengths.setdefault(name, arr.size)
        return arr

    def flat(self, value, t=None, i=None, what="value"):
        """value as a flat float64 array (the torch capture overrides it
        to read modules and state_dicts through the layout)."""
        arr = np.asarray(value)
        if not (np.issubdtype(arr.dtype, np.floating) or
                np.issubdtype(arr.dtype, np.integer)):
            raise invalid(_where(t, i, record=what), "not a numeric array "
                          "(%s)" % arr.dtype, round=t, client=i)
        return np.array(arr, dtype=np.float64).reshape(-1)

    # ---- the spec and the result ------------------------------------------------

    def _validate(self):
        if self._round is not None:
            raise invalid(_where(len(self.rounds) - 1), "the round is still "
                          "open")
        if not self.data:
            raise invalid("capture.clients", "no client data: call "
                          "cap.clients(...)")
        if self.w0 is None:
            self._default_init()
        N = len(self.data)
        for t, rnd in enumerate(self.rounds):
            for i in rnd["order"]:
                if not 0 <= i < N:
                    raise invalid(_where(t, i), "client %d does not exist "
                                  "(%d clients)" % (i, N), round=t)
                for phase in ("batches", "personal"):
                    for s, b in enumerate(rnd[phase].get(i, [])):
                        self._indices(b, t, i, s)
            for i in rnd.get("selected", []):
                if i not in rnd["order"]:
                    raise invalid(_where(t, i) + ", selected", "client %d is "
                                  "selected but did not train" % i, round=t,
                                  client=i)

    def spec(self, data_dir="data"):
        """The pflref-spec/1 document of the run (data as .npy paths
        relative to the spec's folder: data_dir/clientNNN_X.npy)."""
        clients = [{"X": "%s/client%03d_X.npy" % (data_dir, i),
                    "y": "%s/client%03d_y.npy" % (data_dir, i)}
                   for i in range(len(self.data))]
        rounds = []
        for rnd in self.rounds:
            ids = sorted(rnd["order"])
            r = {"clients": ids, "drawn": list(rnd["order"]),
                 "batches": [rnd["batches"].get(i, []) for i in ids]}
            if "selected" in rnd:
                r["selected"] = sorted(rnd["selected"])
                r["drawn"] = list(rnd["selected"])
            if any(rnd["personal"].values()):
                r["personal"] = [rnd["personal"].get(i, []) for i in ids]
            rounds.append(r)
        return {"format": SPEC_FORMAT, "name": self.name,
                "model": self.model, "problem": {"clients": clients},
                "init": {"kind": "given", "w": self.w0.tolist()},
                "algorithm": self.algorithm,
                "schedule": {"kind": "given", "rounds": rounds},
                "output": {"trajectory": "round"}}

    def fill(self, rec):
        """Write the records and the final state into a pflref.Recorder."""
        last = {}
        for event, t, i, name, arr in self.records:
            rec.record(event, name, arr, round=t, client=i)
            if event == "server" and name == "w":
                last[("w", None)] = arr
            elif event == "client_end" and name == "v":
                last[("v", i)] = arr
        # derived values only where the algorithm has a final one; the
        # ones given by final() always (check names any it does not want)
        wanted = {(r["name"], r.get("client")) for r in rec.required()
                  if r["event"] == "final"}
        last = {k: v for k, v in last.items() if k in wanted}
        last.update(self.finals)
        for (name, i), arr in sorted(last.items(), key=lambda kv: (
                kv[0][0], -1 if kv[0][1] is None else kv[0][1])):
            rec.final(name, arr, client=i)
        return rec

    # ---- check -------------------------------------------------------------

    def check(self, out, diagnose=True, precision="fp64"):
        """Write the capture to the folder out (spec.json, data/*.npy,
        vector.json: the reference's run frozen, candidate.json: the
        records, report.txt), check the candidate against the vector and,
        on failure, diagnose it.  out is replaced whole, and only once all
        is written; any error leaves it as it was.  Returns a Verdict."""
        from ._check import check as _check
        from ._diagnose import diagnose as _diagnose
        from ._freeze import freeze
        from ._recorder import Recorder
        self._validate()
        out = os.path.abspath(os.fspath(out))
        parent = os.path.dirname(out)
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".%s.tmp-" % os.path.basename(out),
                               dir=parent)
        try:
            os.mkdir(os.path.join(tmp, "data"))
            for i, (X, y) in enumerate(self.data):
                np.save(os.path.join(tmp, "data", "client%03d_X.npy" % i), X)
                np.save(os.path.join(tmp, "data", "client%03d_y.npy" % i), y)
            spec_path = os.path.join(tmp, "spec.json")
            with open(spec_path, "w", encoding="utf-8") as f:
                json.dump(self.spec(), f, indent=1, allow_nan=False)
            vector = freeze(spec_path, out=os.path.join(tmp, "vector.json"),
                            id="capture/%s" % self.algorithm["name"],
                            trajectory="round")
            rec = self.fill(Recorder(vector))
            rec.save(os.path.join(tmp, "candidate.json"))
            report = _check(vector, rec, precision=precision)
            report._replay = _replay_line(out, precision)
            diag = None
            if not report.passed and diagnose and not report.missing:
                diag = _diagnose(vector, rec, precision=precision)
            verdict = Verdict(report, diag, out)
            with open(os.path.join(tmp, "report.txt"), "w",
                      encoding="utf-8") as f:
                f.write(str(verdict) + "\n")
            _replace(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return verdict

    def main(self, out, **options):
        """check(out), the verdict printed; returns the exit status (0
        PASS, 1 FAIL): `raise SystemExit(cap.main("out"))`."""
        return main(self, out, **options)


def main(cap, out, **options):
    """Capture.main's body: check, print the verdict, the exit status."""
    verdict = cap.check(out, **options)
    print(verdict)
    return 0 if verdict.passed else 1


def _replay_line(out, precision):
    """The replay command naming the files where they end up (out/)."""
    from ._check import cli_command
    argv = [cli_command(), "check", os.path.join(out, "vector.json"),
            os.path.join(out, "candidate.json")]
    if precision != "fp64":
        argv += ["--candidate-precision", precision]
    return lambda: " ".join(shlex.quote(a) for a in argv)


def _replace(tmp, out):
    """Rename the complete folder tmp to out, replacing a previous one."""
    old = None
    if os.path.lexists(out):
        if not os.path.isdir(out) or os.path.islink(out):
            raise invalid(out, "exists and is not a folder")
        old = tempfile.mkdtemp(prefix=".%s.old-" % os.path.basename(out),
                               dir=os.path.dirname(out))
        os.rename(out, os.path.join(old, "previous"))
    os.rename(tmp, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


class Verdict:
    """The outcome of Capture.check: .passed, .report (pflref.Report),
    .diagnosis (pflref.Diagnosis or None), .folder (spec.json,
    vector.json, candidate.json, data/, report.txt); str() the report
    and the diagnosis's summary."""

    def __init__(self, report, diagnosis, folder):
        self.report, self.diagnosis, self.folder = report, diagnosis, folder
        self.passed = report.passed
        self.first = report.first

    def __bool__(self):
        return self.passed

    def __str__(self):
        text = str(self.report)
        if self.diagnosis is not None:
            text += "\ndiagnose: " + str(self.diagnosis)
        return text

    def __repr__(self):
        return "<pflref.capture.Verdict %s>" % ("PASS" if self.passed
                                                else "FAIL")

