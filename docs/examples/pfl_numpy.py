#!/usr/bin/python3
"""pfl_numpy.py: an independent NumPy candidate for pflref's golden vectors.

Written from the papers and the specification notes (shared/spec notes §1 and
§5.1), not from pflref's C code:

  fedavg    McMahan et al., AISTATS 2017, Algorithm 1 (switch fedavg.weights)
  local     every client trains its own v_i from w0; nothing is communicated
  finetune  FedAvg rounds, then per client θ_i ← w and
            θ_i ← θ_i − η_ft (∇f_i(θ_i; D) + μ_ft (θ_i − w))   (notes §5.1)

on the quadratic and linear models.  It replays the vector's given schedule
(client sets and minibatch index lists) and writes a pflref-result/1 file with
the final state and every trajectory record, for `pflref check`.

usage: pfl_numpy.py VECTOR.json -o RESULT.json [--bug NAME]
       pfl_numpy.py --all GOLDEN_DIR -o OUTDIR [--bug NAME]

--bug NAME switches on one deliberate, realistic bug from the catalogue
tests/detection/bugs.json, to show that `pflref check` catches it.
"""
import argparse
import json
import os
import sys

import numpy as np

BUG = None          # the --bug switch; None = the correct algorithm
BUGS = ("uniform-weights", "weights-over-all-K", "delta-without-w_t",
        "stale-model-unsampled", "one-step-fewer", "one-step-extra",
        "ragged-batch-dropped", "batch-grad-summed", "squared-loss-no-2",
        "bias-not-updated", "start-from-w0", "local-model-aliases-global",
        "unsampled-client-trains", "local-reset-each-round",
        "ft-prox-sign", "ft-prox-half", "ft-prox-to-w0", "ft-moves-shared",
        "ft-from-w0", "ft-eta-train", "ft-reports-global")


class Unsupported(Exception):
    """The vector needs something this example does not implement."""


# ---- models ---------------------------------------------------------------

class Quadratic:
    """f_i(w) = ½ Σ_j a_j (w_j − c_j)²: data-free, so batches are ignored;
    n_i (default 1) is only the client's aggregation weight."""

    def __init__(self, model, client):
        self.a = np.asarray(client["a"], dtype=float)
        self.c = np.asarray(client["c"], dtype=float)
        self.n = client.get("n", 1)

    def grad(self, w, batch):
        return self.a * (w - self.c)


class Linear:
    """ŷ = xᵀw (+ b); loss = mean over the batch of (ŷ − y)² ("squared") or
    ½(ŷ − y)² ("half_squared").  Parameters: w (d entries), then b."""

    def __init__(self, model, client):
        self.X = np.asarray(client["X"], dtype=float)
        self.y = np.asarray(client["y"], dtype=float)
        self.n = len(self.y)
        self.d = model["d"]
        self.bias = model.get("bias", False)
        self.s = 2.0 if model["loss"] == "squared" else 1.0   # ∂ℓ/∂ŷ = s·r
        if BUG == "squared-loss-no-2":
            self.s = 1.0

    def grad(self, theta, batch):
        X, y = self.X[batch], self.y[batch]
        w, b = theta[:self.d], (theta[self.d] if self.bias else 0.0)
        r = X @ w + b - y                               # residuals ŷ − y
        scale = self.s if BUG == "batch-grad-summed" else self.s / len(batch)
        g = scale * (X.T @ r)                           # ∇_w of the mean loss
        if self.bias:
            g_b = 0.0 if BUG == "bias-not-updated" else scale * r.sum()
            g = np.append(g, g_b)                       # ∇_b
        return g


def load_clients(spec, base_dir):
    model = spec["model"]
    kinds = {"quadratic": Quadratic, "linear": Linear}
    if model["kind"] not in kinds:
        raise Unsupported("model %r (only quadratic and linear)" % model["kind"])
    problem = spec["problem"]
    if "file" in problem:            # a pflref-problem/1 file beside the spec
        with open(os.path.join(base_dir, problem["file"])) as f:
            problem = json.load(f)
    if "clients" not in problem:
        raise Unsupported("a generated problem (give the clients as data)")
    return [kinds[model["kind"]](model, c) for c in problem["clients"]]


def parameter_count(model):
    return model["d"] + (1 if model.get("bias", False) else 0)


def personal_mask(spec):
    """1 for entries in the split's personal blocks.  Layout (PyTorch
    state_dict order): w is entries 0..d-1, then b.  A single-layer model's
    one layer is both its "input" and its "head" group."""
    d, P = spec["model"]["d"], parameter_count(spec["model"])
    mask = np.zeros(P, dtype=bool)
    for name in spec.get("split", {}).get("personal", []):
        if name in ("w", "input", "head"):
            mask[:d] = True
        if name in ("b", "input", "head") and P > d:
            mask[d:] = True
    return mask


# ---- the trajectory ---------------------------------------------------------

class Recorder:
    """Collects trajectory records {event, phase, round, client, step, name,
    value}; round, client and step are left out where they do not apply."""

    def __init__(self):
        self.records = []

    def __call__(self, event, phase, name, value, round=None, client=None,
                 step=None):
        rec = {"event": event, "phase": phase}
        for key, val in (("round", round), ("client", client), ("step", step)):
            if val is not None:
                rec[key] = val
        rec["name"] = name
        rec["value"] = [float(x) for x in value]
        self.records.append(rec)


def local_sgd(theta, data, batches, eta, log, mu=0.0, anchor=None, mask=None):
    """Minibatch SGD over the given batches, in order:
        θ ← θ − η (∇f(θ; b) + μ (θ − anchor))
    μ = 0 is FedAvg's ClientUpdate (Alg. 1: w ← w − η∇ℓ(w; b)).  Only the
    entries where mask is true move.  log(step, θ) records each step."""
    if BUG == "one-step-fewer":
        batches = batches[:-1]
    if BUG == "one-step-extra":
        batches = batches + batches[-1:]
    if BUG == "ragged-batch-dropped":                  # drop_last=True
        batches = [b for b in batches if len(b) == len(batches[0])]
    for s, batch in enumerate(batches, start=1):
        g = data.grad(theta, batch)
        if mu != 0.0:
            pull = theta - anchor
            if BUG == "ft-prox-sign":
                pull = anchor - theta
            g = g + (mu / 2 if BUG == "ft-prox-half" else mu) * pull
        step = eta * g
        if mask is not None and BUG != "ft-moves-shared":
            step = np.where(mask, step, 0.0)
        if BUG == "local-model-aliases-global":
            theta -= step                              # in place: no copy made
        else:
            theta = theta - step
        log(s, theta)
    return theta


# ---- the algorithms -----------------------------------------------------------

def aggregate(w_t, local, n, scheme):
    """Alg. 1 server: w_{t+1} ← Σ_{k∈S_t} (n_k/m_t) w^k_{t+1}, m_t = Σ_{k∈S_t} n_k
    (scheme "samples"), or 1/m ("uniform"), or Σ_{k∈S_t} (n_k/n) w^k +
    Σ_{k∉S_t} (n_k/n) w_t over all K clients ("all_keep_old").  Summed in
    ascending client id.  local: {k: w^k_{t+1}} for k ∈ S_t."""
    S_t = sorted(local)
    if BUG == "uniform-weights":
        scheme = "uniform"
    if BUG == "weights-over-all-K":          # n_k/n, unsampled clients dropped
        coef = {k: n[k] / sum(n) for k in S_t}
    elif scheme == "samples":
        m_t = sum(n[k] for k in S_t)
        coef = {k: n[k] / m_t for k in S_t}
    elif scheme == "uniform":
        coef = {k: 1.0 / len(S_t) for k in S_t}
    elif scheme == "all_keep_old":
        coef = {k: n[k] / sum(n) for k in range(len(n))}
    else:
        raise Unsupported("fedavg.weights %r" % scheme)
    w = np.zeros_like(w_t)
    for k in sorted(coef):
        w_k = local.get(k, w_t)              # an unsampled client keeps w_t
        if BUG == "delta-without-w_t":       # Σ c_k (w^k − w_t), w_t not added
            w_k = w_k - w_t
        w = w + coef[k] * w_k
    return w


def fedavg_rounds(spec, clients, w0, log):
    """FedAvg (Alg. 1) over the schedule's rounds; returns the final w."""
    eta = spec["algorithm"]["hyperparameters"]["eta"]
    scheme = spec["algorithm"].get("switches", {}).get("fedavg.weights",
                                                        "samples")
    n = [c.n for c in clients]
    w = w0.copy()
    stale = {}                               # read by one bug only
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        log("round_begin", "train", "w", w, round=t)
        batches = dict(zip(rnd["clients"], rnd["batches"]))   # S_t and its plan
        local = {}
        for k in sorted(batches):            # for each client k ∈ S_t
            w_k = w0.copy() if BUG == "start-from-w0" else w.copy()
            if BUG == "local-model-aliases-global":
                w_k = w                      # "w_k = w": the same array
            log("client_begin", "train", "w_local", w_k, round=t, client=k,
                step=0)
            w_k = local_sgd(w_k, clients[k], batches[k], eta,   # ClientUpdate
                            lambda s, x: log("step", "train", "w_local", x,
                                             round=t, client=k, step=s))
            log("client_end", "train", "w_local", w_k, round=t, client=k)
            local[k] = w_k.copy()
            stale[k] = local[k]
        if BUG == "stale-model-unsampled" and scheme == "all_keep_old":
            local = dict(stale)              # unsampled: last local model, not w_t
        w = aggregate(w, local, n, scheme)   # w_{t+1}
        log("server", "train", "w", w, round=t)
    return w


def run_fedavg(spec, clients, w0, log):
    return {"w": fedavg_rounds(spec, clients, w0, log)}


def run_local(spec, clients, w0, log):
    """Each client keeps v_i (starting at w0) across rounds and trains it on
    its own batches when it takes part; nothing is averaged."""
    eta = spec["algorithm"]["hyperparameters"]["eta"]
    v = [w0.copy() for _ in clients]
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        batches = dict(zip(rnd["clients"], rnd["batches"]))
        if BUG == "local-reset-each-round":
            v = [w0.copy() for _ in clients]
        if BUG == "unsampled-client-trains":   # ignores S_t: full-batch step
            for i in range(len(clients)):
                batches.setdefault(i, [list(range(clients[i].n))])
        for i in sorted(batches):
            log("client_begin", "train", "v", v[i], round=t, client=i, step=0)
            v[i] = local_sgd(v[i], clients[i], batches[i], eta,
                             lambda s, x: log("step", "train", "v", x,
                                              round=t, client=i, step=s))
            log("client_end", "train", "v", v[i], round=t, client=i)
    return {"v": v}


def run_finetune(spec, clients, w0, log):
    """FedAvg rounds, then every client i fine-tunes a copy of the final w
    (notes §5.1): θ_i ← w; for each post batch D:
    θ_i ← θ_i − η_ft (∇f_i(θ_i; D) + μ_ft (θ_i − w)).  w does not change.
    finetune.scope = personal: only the split's personal blocks move."""
    hyper = spec["algorithm"]["hyperparameters"]
    eta_ft, mu_ft = hyper["eta_ft"], hyper.get("mu_ft", 0.0)
    if BUG == "ft-eta-train":
        eta_ft = hyper["eta"]
    scope = spec["algorithm"].get("switches", {}).get("finetune.scope", "full")
    mask = personal_mask(spec) if scope == "personal" else None
    w = fedavg_rounds(spec, clients, w0, log)
    anchor = w0 if BUG == "ft-prox-to-w0" else w
    theta = []
    for i, batches in enumerate(spec["schedule"]["post"]):
        th = (w0 if BUG == "ft-from-w0" else w).copy()          # θ_i ← w
        log("client_begin", "finetune", "theta", th, client=i, step=0)
        th = local_sgd(th, clients[i], batches, eta_ft,
                       lambda s, x: log("step", "finetune", "theta", x,
                                        client=i, step=s),
                       mu=mu_ft, anchor=anchor, mask=mask)
        log("client_end", "finetune", "theta", th, client=i)
        theta.append(w if BUG == "ft-reports-global" else th)
    return {"w": w, "v": theta}


ALGORITHMS = {"fedavg": run_fedavg, "local": run_local,
              "finetune": run_finetune}


# ---- input and output -----------------------------------------------------------

def run_file(path):
    """Run one golden vector (or a bare pflref-spec/1 file); return the
    candidate result as a dict."""
    with open(path) as f:
        doc = json.load(f)
    if doc.get("format") == "pflref-golden/1":
        vid, spec = doc["id"], doc["spec"]
    elif doc.get("format") == "pflref-spec/1":
        vid, spec = os.path.splitext(os.path.basename(path))[0], doc
    else:
        raise Unsupported("not a golden vector or spec (format %r)"
                          % doc.get("format"))
    algo = spec["algorithm"]["name"]
    if algo not in ALGORITHMS:
        raise Unsupported("algorithm %r (only fedavg, local, finetune)" % algo)
    if spec["schedule"]["kind"] != "given":
        raise Unsupported("a generated schedule (replay a given one)")
    clients = load_clients(spec, os.path.dirname(path))
    init = spec.get("init", {"kind": "zeros"})
    P = parameter_count(spec["model"])
    if init["kind"] == "zeros":
        w0 = np.zeros(P)
    elif init["kind"] == "given":
        w0 = np.asarray(init["w"], dtype=float)
    else:
        raise Unsupported("init %r (give w0 as data)" % init["kind"])

    log = Recorder()
    final = ALGORITHMS[algo](spec, clients, w0, log)
    out = {"w": [float(x) for x in final["w"]]} if "w" in final else {}
    if "v" in final:
        out["v"] = [[float(x) for x in v_i] for v_i in final["v"]]
    return {"format": "pflref-result/1", "id": vid, "final": out,
            "trajectory": log.records}


def write_json(obj, path):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)   # Python writes the shortest round-trip repr
        f.write("\n")
    os.replace(tmp, path)


def main():
    global BUG
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vector", nargs="?", help="a golden vector or spec file")
    ap.add_argument("--all", metavar="GOLDEN_DIR",
                    help="run every supported vector under GOLDEN_DIR")
    ap.add_argument("-o", required=True, metavar="OUT",
                    help="result file (folder with --all)")
    ap.add_argument("--bug", choices=BUGS, help="switch on one catalogued bug")
    args = ap.parse_args()
    BUG = args.bug
    if (args.vector is None) == (args.all is None):
        ap.error("give one VECTOR or --all GOLDEN_DIR")

    if args.vector:
        try:
            write_json(run_file(args.vector), args.o)
        except Unsupported as e:
            sys.exit("pfl_numpy.py: %s: unsupported: %s" % (args.vector, e))
        return

    os.makedirs(args.o, exist_ok=True)
    ran = 0
    for root, dirs, files in sorted(os.walk(args.all)):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            if not name.endswith(".json"):
                continue
            with open(path) as f:
                try:
                    if json.load(f).get("format") != "pflref-golden/1":
                        continue              # problem files, plain specs
                except (ValueError, AttributeError):
                    continue
            try:
                result = run_file(path)
            except Unsupported as e:
                print("skipped %s: %s" % (path, e), file=sys.stderr)
                continue
            out = os.path.join(args.o, result["id"].replace("/", "__") + ".json")
            write_json(result, out)
            ran += 1
    print("pfl_numpy.py: %d vectors run, results in %s" % (ran, args.o),
          file=sys.stderr)


if __name__ == "__main__":
    main()
