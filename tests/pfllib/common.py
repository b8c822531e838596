# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/common.py: what the PFLlib harnesses (tests/pfllib/<alg>.py)
share.  Each harness runs PFLlib's own client and server classes on a tiny
float64 problem, runs the same problem through `pflref run` with a preset,
and compares the models.

- `Harness(name, files)` copies PFLlib's system/flcore/<files> (and
  clients/clientbase.py, servers/serverbase.py) into a temporary folder
  with stubs for the imports a run without data files does not need
  (h5py, sklearn, utils.dlg, utils.data_utils.read_client_data, which
  serves the harness's problem), sets torch's default dtype to float64
  and replaces every imported module's DataLoader by one whose batch
  sampler records the indices it yields: PFLlib's loader shuffling
  (torch's RandomSampler, seeded by torch.manual_seed) becomes schedule
  data for pflref, batch by batch, in the order PFLlib trained.
- `regression(...)`, `classes(...)`: the problems (three clients of
  distinct sizes, two-decimal inputs).
- `mlp(d, h, k, w0)`: PFLlib's BaseHeadSplit of a one-hidden-layer net
  (base = Linear + ReLU, head = Linear), pflref's mlp in its block order;
  `flat`, `set_flat`, `half_sq`, `sq`, `spec`, `last` (a trajectory
  record's value) help the harnesses.
- `drive(H, srv, R, ...)`: R rounds of the FedAvg-shaped server loop
  (select, send, each selected client's train(), receive, aggregate), the
  participants and recorded batches returned as pflref's schedule rounds.
- `Harness.server(cls, clients, **attrs)`: a server object built without
  its __init__ (which reads files and command-line arguments), with the
  attributes serverbase.py's select_clients / send_models /
  receive_models / aggregate_parameters read.
- `Harness.select(srv)`: PFLlib's select_clients (numpy's global
  generator, seeded by the harness), the participants recorded.
- `Harness.run(spec)`: `pflref run SPEC -o -`, the result parsed; the
  environment's PFLREF_PRESET (e.g. paper) replaces the spec's preset and
  PFLREF_SWITCHES (k=v,k=v) sets switches, to show what a comparison
  detects.
- `Harness.report(pairs)`: the max abs difference over (PFLlib, pflref)
  vector pairs, one line `<alg>: agree | DIFFER ...`, and the exit
  status (0 agree, 1 differ); `cannot(why)` and any uncaught exception
  print `<alg>: cannot run: ...` and exit 2.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import types

TOL = 1e-12

STUBS = {
    "h5py.py": "",
    "sklearn/__init__.py": "",
    "sklearn/metrics.py": "",
    "sklearn/preprocessing.py": "def label_binarize(*a, **k):\n    raise NotImplementedError\n",
    "utils/__init__.py": "",
    "utils/data_utils.py": (
        "DATA = {}\n\n\nclass Tagged(list):\n    pass\n\n\n"
        "def read_client_data(dataset, idx, is_train=True, few_shot=0):\n"
        "    d = Tagged(DATA[idx] if is_train else DATA[idx][:1])\n"
        "    d.cid, d.is_train = idx, is_train\n    return d\n"),
    "utils/dlg.py": "def DLG(*a, **k):\n    return None\n",
    "flcore/__init__.py": "", "flcore/clients/__init__.py": "",
    "flcore/servers/__init__.py": "", "flcore/optimizers/__init__.py": "",
    "flcore/trainmodel/__init__.py": "",
}
BASE = ["clients/clientbase.py", "servers/serverbase.py"]


def cannot(name, why):
    print("%s: cannot run: %s" % (name, why))
    sys.exit(2)


class Harness:
    def __init__(self, name, files, utils=()):
        self.name = name
        self.pfllib = os.environ.get("PFLLIB_DIR")
        if not self.pfllib or not os.path.isdir(os.path.join(self.pfllib, "system", "flcore")):
            cannot(name, "set PFLLIB_DIR to a PFLlib checkout")
        self.pflref = sys.argv[1] if len(sys.argv) > 1 else "build/rel/pflref"
        self.scratch = tempfile.mkdtemp(prefix="pflref-pfllib-%s-" % name)
        for rel, text in STUBS.items():
            path = os.path.join(self.scratch, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        sysdir = os.path.join(self.pfllib, "system")
        for rel in BASE + list(files):
            src = os.path.join(sysdir, "flcore", rel)
            if not os.path.isfile(src):
                cannot(name, "PFLlib has no system/flcore/" + rel)
            shutil.copyfile(src, os.path.join(self.scratch, "flcore", rel))
        for rel in utils:
            shutil.copyfile(os.path.join(sysdir, "utils", rel),
                            os.path.join(self.scratch, "utils", rel))
        sys.path.insert(0, self.scratch)

        def hook(kind, value, tb):        # one line, not a traceback
            import traceback
            traceback.print_exception(kind, value, tb, file=sys.stderr)
            self.cleanup()
            print("%s: cannot run: %s: %s" % (name, kind.__name__, value))
            sys.stdout.flush()
            os._exit(2)
        sys.excepthook = hook
        import torch
        torch.set_default_dtype(torch.float64)
        self.torch = torch
        import utils.data_utils as du
        self.du = du
        self.log = []     # (client id, is_train, [indices]) per yielded batch

    # ---------- loaders ----------
    def patch_loaders(self):
        """Every imported flcore / utils module's DataLoader records its
        batches (call after importing PFLlib's classes)."""
        import torch.utils.data as tud
        log = self.log

        class RecordingBatches(tud.Sampler):
            def __init__(self, dataset, batch_size, drop_last, shuffle):
                self.ds = dataset
                self.sampler = (tud.RandomSampler(dataset) if shuffle
                                else tud.SequentialSampler(dataset))
                self.inner = tud.BatchSampler(self.sampler, batch_size, drop_last)

            def __iter__(self):
                for b in self.inner:
                    log.append((getattr(self.ds, "cid", None),
                                getattr(self.ds, "is_train", None), list(b)))
                    yield b

            def __len__(self):
                return len(self.inner)

        def loader(dataset, batch_size=1, drop_last=False, shuffle=False, **kw):
            return tud.DataLoader(dataset, batch_sampler=RecordingBatches(
                dataset, batch_size, drop_last, shuffle), **kw)

        for mod in list(sys.modules.values()):
            mname = getattr(mod, "__name__", "")
            if mname.startswith(("flcore", "utils")) and hasattr(mod, "DataLoader"):
                mod.DataLoader = loader

    def train_batches(self, cid):
        """The training batches client cid's loaders yielded since the last
        call (the log is emptied)."""
        out = [b for (c, tr, b) in self.log if c == cid and tr]
        self.log.clear()
        return out

    # ---------- problems ----------
    def set_data(self, raw, labels=False):
        torch = self.torch
        for k, (X, y) in enumerate(raw):
            self.du.DATA[k] = [(torch.tensor(x), torch.tensor(int(v)) if labels
                                else torch.tensor(v)) for x, v in zip(X, y)]

    def args(self, model, algorithm, **kw):
        a = dict(model=model, algorithm=algorithm, dataset="x", device="cpu",
                 save_folder_name="x", num_classes=1, batch_size=2,
                 local_learning_rate=0.1, local_epochs=1, few_shot=0,
                 learning_rate_decay_gamma=1.0, learning_rate_decay=False,
                 num_clients=3, join_ratio=1.0, random_join_ratio=False)
        a.update(kw)
        return types.SimpleNamespace(**a)

    def clients(self, cls, args, sizes, **extra):
        out = []
        for k, n in enumerate(sizes):
            c = cls(args, k, n, 1, train_slow=False, send_slow=False, **extra)
            out.append(c)
        return out

    def server(self, cls, args, clients, join, **attrs):
        import copy
        srv = object.__new__(cls)
        srv.args = args
        srv.clients, srv.num_clients, srv.device = clients, len(clients), "cpu"
        srv.global_model = copy.deepcopy(args.model)
        srv.selected_clients, srv.uploaded_ids = [], []
        srv.uploaded_weights, srv.uploaded_models = [], []
        srv.client_drop_rate, srv.time_threthold = 0.0, 1e18
        srv.num_join_clients, srv.current_num_join_clients = join, join
        srv.random_join_ratio = False
        srv.join_ratio = join / len(clients)
        srv.learning_rate_decay = args.learning_rate_decay
        srv.dataset, srv.algorithm = args.dataset, args.algorithm
        for k, v in attrs.items():
            setattr(srv, k, v)
        return srv

    def select(self, srv):
        srv.selected_clients = srv.select_clients()
        return [c.id for c in srv.selected_clients]

    # ---------- pflref ----------
    def run(self, spec):
        if os.environ.get("PFLREF_PRESET"):   # to show what the comparison detects
            spec["algorithm"]["preset"] = os.environ["PFLREF_PRESET"]
        for kv in filter(None, os.environ.get("PFLREF_SWITCHES", "").split(",")):
            k, v = kv.split("=", 1)
            spec["algorithm"].setdefault("switches", {})[k] = v
        path = os.path.join(self.scratch, "spec.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        out = subprocess.run([self.pflref, "run", path, "-o", "-"],
                             capture_output=True, text=True)
        if out.returncode:
            print(out.stderr.strip(), file=sys.stderr)
            why = out.stderr.strip().splitlines()[-1:] or [""]
            self.cleanup()
            cannot(self.name, "pflref run exited %d: %s" % (out.returncode, why[0]))
        return json.loads(out.stdout)

    def report(self, pairs, extra_ok=True, what="", verbose=False):
        """pairs: [(label, pfllib vector, pflref vector)]."""
        diff, scale, worst = 0.0, 0.0, ""
        for label, a, b in pairs:
            if len(a) != len(b):
                print("%s: DIFFER: %s has %d values in PFLlib, %d in pflref"
                      % (self.name, label, len(a), len(b)))
                self.cleanup()
                return 1
            for x, y in zip(a, b):
                scale = max(scale, abs(x))
                if abs(x - y) > diff or diff != diff:
                    diff, worst = abs(x - y), label
            if verbose:
                print("  %s PFLlib %s\n  %s pflref %s" % (label, a, label, b))
        self.cleanup()
        ok = diff <= TOL and extra_ok
        print("%s: %s (%s; max abs difference %.3g%s, max |value| %.3g)"
              % (self.name, "agree" if ok else "DIFFER", what, diff,
                 " at " + worst if diff > TOL else "", scale))
        return 0 if ok else 1

    def cleanup(self):
        shutil.rmtree(self.scratch, ignore_errors=True)


def regression(rng, sizes, d=2):
    raw = []
    for n in sizes:
        X = [[round(rng.uniform(-2, 2), 2) for _ in range(d)] for _ in range(n)]
        y = [round(0.7 * x[0] - 1.1 * x[-1] + rng.uniform(-1, 1), 2) for x in X]
        raw.append((X, y))
    return raw


def classes(rng, sizes, d=2, k=3):
    """Labels 0..k-1, every label present on every client (balanced-softmax
    and prototype algorithms count them)."""
    raw = []
    for n in sizes:
        y = [j % k for j in range(n)]
        rng.shuffle(y)
        X = [[round(rng.uniform(-1, 1) + (0.8 if v == i % k else 0.0), 2)
              for i in range(d)] for v in y]
        raw.append((X, [float(v) for v in y]))
    return raw


def flat(model):
    return [float(v) for p in model.parameters() for v in p.data.reshape(-1).tolist()]


def set_flat(model, w):
    import torch
    i = 0
    with torch.no_grad():
        for p in model.parameters():
            n = p.numel()
            p.copy_(torch.tensor(w[i:i + n]).reshape(p.shape))
            i += n


def half_sq(out, y):
    return 0.5 * ((out.squeeze(-1) - y) ** 2).mean()


def sq(out, y):
    return ((out.squeeze(-1) - y) ** 2).mean()


def spec(name, model, raw, w0, alg, rounds, labels=False):
    """A pflref-spec/1 with the whole data as training sets."""
    return {"format": "pflref-spec/1", "name": "pfllib " + name, "model": model,
            "problem": {"clients": [{"X": X, "y": y} for X, y in raw]},
            "init": {"kind": "given", "w": w0}, "algorithm": alg,
            "schedule": {"kind": "given", "rounds": rounds},
            "output": {"trajectory": "round"}}


def drive(H, srv, R, train=None, seed=3, before=None, after=None):
    """R rounds of serverbase.py's loop as the FedAvg-shaped servers' train()
    runs them (select_clients, send_models, each selected client's train(),
    receive_models, aggregate_parameters; evaluation left out: it changes no
    parameter), numpy's and torch's generators seeded first.  Returns the
    pflref schedule rounds: the participants in ascending id, each with the
    batches its loader yielded (the last train() pass; train(client) may
    return {key: batches} for other lists of the round, e.g. Ditto's
    "personal").  before(srv) replaces send_models, after(srv)
    receive_models and aggregate_parameters, for the servers whose train()
    calls others."""
    import numpy as np
    import random
    np.random.seed(seed)
    random.seed(seed)
    H.torch.manual_seed(seed)
    import contextlib
    import io
    rounds = []
    for _ in range(R):
        with contextlib.redirect_stdout(io.StringIO()):    # PFLlib's prints
            rounds.append(_round(H, srv, train, before, after))
    return rounds


def _round(H, srv, train, before, after):
    if True:
        sel = H.select(srv)
        (before or (lambda s: s.send_models()))(srv)
        got, extra = {}, {}
        for c in srv.selected_clients:
            H.log.clear()
            extra[c.id] = (train or (lambda cl: cl.train()))(c) or {}
            got[c.id] = H.train_batches(c.id)
        if after:
            after(srv)
        else:
            srv.receive_models()
            srv.aggregate_parameters()
        ids = sorted(sel)
        r = {"clients": ids, "batches": [got[k] for k in ids]}
        for key in extra[ids[0]]:
            r[key] = [extra[k][key] for k in ids]
        return r


def last(res, event, name, client=None):
    """The value of the last trajectory record (event, name[, client])."""
    val = None
    for e in res.get("trajectory", []):
        if e.get("event") == event and e.get("name") == name and \
                (client is None or e.get("client") == client):
            val = e["value"]
    return val


def names(res):
    return sorted(set((e.get("event"), e.get("name")) for e in res.get("trajectory", [])))


def mlp(d, h, k, w0, relu=True):
    """PFLlib's BaseHeadSplit (system/flcore/trainmodel/models.py) of a
    one-hidden-layer net: base = Linear(d, h) then ReLU, head = Linear(h, k);
    its parameters W1, b1, W2, b2 are pflref's mlp blocks in order."""
    import torch.nn as nn

    class BaseHeadSplit(nn.Module):
        def __init__(self, base, head):
            super().__init__()
            self.base, self.head = base, head

        def forward(self, x):
            return self.head(self.base(x))

    m = BaseHeadSplit(nn.Sequential(nn.Linear(d, h), nn.ReLU()) if relu
                      else nn.Sequential(nn.Linear(d, h)), nn.Linear(h, k))
    set_flat(m, w0)
    return m


def init_w(rng, P):
    return [round(rng.uniform(-0.9, 0.9), 2) or 0.15 for _ in range(P)]
