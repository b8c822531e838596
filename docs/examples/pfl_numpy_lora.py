"""pfl_numpy_lora.py: federated low-rank adapters for the NumPy candidate
(pfl_numpy.py loads it), written from LoRA (Hu et al., ICLR 2022, arXiv
2106.09685v2, eq. (3)), FFA-LoRA (Sun et al., ICLR 2024, arXiv 2403.12313)
and HetLoRA (Cho et al., EMNLP 2024, arXiv 2401.06432) as the spec notes
(notes-lora-pfedhn.md §1-3) give them, not from pflref's C code.

A targeted weight block W (k x d) is W0 + s B A, A (r x d), B (k x r),
s = alpha / r (HetLoRA: 1, or alpha / r_max with hetlora.scaling = alpha).
W0 and every bias stay frozen.  The adapter vector q lists, per target in
block order, A then B, row-major, as loralib's lora_A and lora_B.  A step:
G = grad of the loss at the merged model, dA = s B^T G, dB = s G A^T, both
at the step's start (FFA-LoRA: B only).  Methods: personal (nothing
averaged), ffa and fedavg (the round's clients start from the global q, the
server averages with n_k / sum n_j or 1/m), hetlora (truncation to r_k, the
regulariser lambda ||B_t|| ||A_t|| on the ranks floor(gamma r_k)..r_k - 1
when that cut is >= r_min and lambda > 0, pruning when the tail product
fell, weights ||B_k A_k||_F / sum_j, zero-padded averages).

Targets (lora.targets, or by name in init.lora_targets: a block, or a
layer's name meaning its weight; in block order): the linear, softmax and
mlp weights, and on a layer list ("kind": "layers", pfl_numpy_layers.py)
every dense and conv2d weight, a conv2d weight O x C x kappa x kappa as the
matrix O x (C kappa kappa).  With the client optimizer (opt.*,
pfl_numpy_optim.for_adapter) the step is the optimizer's on d = the
gradient above, per block <layer>.lora_A, <layer>.lora_B (FFA-LoRA's A
blocks never move); HetLoRA cuts the optimizer's buffers to the client's
rank with its adapter.  Batch normalisation in the frozen base: every
training pass moves the base's running statistics (bn.running = update,
pfl_numpy_layers' track); the base never leaves the client, so each
client's copy keeps its own, shown in its v_i; the global w keeps w0's.
"""
import importlib
import math
import sys

import numpy as np

ALGORITHM = "lora"
BUGS = ("lora-scale-alpha", "lora-sequential", "lora-ffa-trains-a",
        "lora-stale-start", "hetlora-no-truncate", "hetlora-sample-weights",
        "hetlora-no-regulariser", "hetlora-renormalise", "lora-bn-not-moved")


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


class Softmax:
    """z = W x (+ b), loss -log softmax(z)_y, mean over the batch.
    Parameters: W (k x d, row-major), then b (k)."""

    def __init__(self, model, client):
        self.X = np.asarray(client["X"], dtype=float)
        self.y = np.asarray(client["y"], dtype=int)
        self.n = len(self.y)
        self.d, self.k = model["d"], model["k"]
        self.bias = model.get("bias", False)

    def grad(self, theta, batch):
        d, k = self.d, self.k
        X, y = self.X[batch], self.y[batch]
        W = theta[:k * d].reshape(k, d)
        Z = X @ W.T + (theta[k * d:] if self.bias else 0.0)
        Z = Z - Z.max(axis=1, keepdims=True)
        E = np.exp(Z)
        E = E / E.sum(axis=1, keepdims=True)
        E[np.arange(len(batch)), y] -= 1.0          # softmax(z) - onehot(y)
        g = (E.T @ X).ravel() / len(batch)
        # the biases are frozen under LoRA: their gradient is never read
        return np.append(g, np.zeros(k)) if self.bias else g


def _install():
    """Read a softmax model's clients and blocks here: the base candidate
    has no softmax model."""
    base = _base()
    if getattr(base, "_lora_installed", False):
        return
    load, blocks = base.load_clients, base.model_blocks

    def load_clients(spec, base_dir):
        if spec["model"]["kind"] == "softmax":
            if "clients" not in spec["problem"]:
                raise base.Unsupported("softmax needs inline clients")
            return [Softmax(spec["model"], c) for c in spec["problem"]["clients"]]
        return load(spec, base_dir)

    def model_blocks(model):
        if model["kind"] != "softmax":
            return blocks(model)
        k, d = model["k"], model["d"]
        out = [("W", 0, k * d, ("input", "head"))]
        if model.get("bias", False):
            out.append(("b", k * d, k, ("input", "head")))
        return out

    base.load_clients, base.model_blocks = load_clients, model_blocks
    base._lora_installed = True


def _named(spec, blocks):
    """The block names init.lora_targets asks for (None: not given); a
    layer's name means its weight (docs/models.md, "Low-rank adapters")."""
    names = spec.get("init", {}).get("lora_targets")
    if names is None:
        return None
    have = {name for name, _, _, _ in blocks}
    return {n if n in have else n + ".weight" for n in names}


def _targets(spec, r, which):
    """[(offset of W, k, d, offset of A, offset of B, name)] in block order
    and the length Q.  A layer list's targets are its dense and conv2d
    weights, a conv2d weight O x C x kappa x kappa read as the matrix
    O x (C kappa kappa) (PEFT's Conv2d adapter)."""
    model = spec["model"]
    blocks = _base().model_blocks(model)
    named = _named(spec, blocks)
    if model["kind"] == "layers":
        layers = _base().pfl_numpy_layers.layout(model)[0]
        rows = {L["name"] + ".weight": L.get("out", L.get("out_channels"))
                for L in layers if L["type"] in ("dense", "conv2d")}
    out, Q = [], 0
    for name, off, size, groups in blocks:
        if model["kind"] == "layers":
            if name not in rows:
                continue
            k = rows[name]
            dd = size // k
        elif name not in ("w", "W", "W1", "W2"):
            continue
        elif model["kind"] == "linear":
            k, dd = 1, model["d"]
        elif name == "W":
            k, dd = model["k"], model["d"]
        elif name == "W1":
            k, dd = model["h"], model["d"]
        else:
            k, dd = model.get("k", 1), model["h"]
        if named is not None:
            if name not in named:
                continue
        elif which == "head" and "head" not in groups:
            continue
        elif which == "input" and "input" not in groups:
            continue
        layer = name[:-len(".weight")] if name.endswith(".weight") else name
        out.append((off, k, dd, Q, Q + r * dd, layer))
        Q += r * (dd + k)
    return out, Q


def _views(q, T, r):
    """Per target (A r x d, B k x r) views into q."""
    return [(q[oA:oA + r * d].reshape(r, d), q[oB:oB + k * r].reshape(k, r))
            for off, k, d, oA, oB, _ in T]


def _merge(w0, q, T, r, s):
    theta = w0.copy()
    for (off, k, d, oA, oB, _), (A, B) in zip(T, _views(q, T, r)):
        theta[off:off + k * d] += s * (B @ A).ravel()
    return theta


def _tail(q, T, r, c, rank):
    """per target (||B_t||, ||A_t||) of the ranks c..rank - 1."""
    return [(np.linalg.norm(B[:, c:rank]), np.linalg.norm(A[c:rank]))
            for A, B in _views(q, T, r)]


def _train(q, data, batches, w0, T, r, rank, cfg, log, bug, opt=None,
           buffers=None):
    """Line 2: the local steps on the adapter q.  The plain step is
    (B, A) <- (B, A) - eta grad; with a client optimizer opt (opt.*), its
    step on d = grad over the blocks lora_A, lora_B (FFA-LoRA: B only).
    w0 is the client's copy of the frozen base: each training pass moves
    its batchnorm buffers (the entries of `buffers`) by the batch, in
    place (bn.running = update)."""
    s, eta, method, lam, cut = cfg
    reg = method == "hetlora" and lam > 0 and cut >= _RMIN[0]
    before = sum((nb * na) ** 2 for nb, na in _tail(q, T, r, cut, rank)) if reg else 0.0
    move = np.ones(len(q), dtype=bool)            # FFA-LoRA: A never moves
    if method == "ffa" and bug != "lora-ffa-trains-a":
        for off, k, d, oA, oB, _ in T:
            move[oA:oB] = False
    for step, batch in enumerate(batches, start=1):
        merged = _merge(w0, q, T, r, s)
        g = data.grad(merged, batch)
        if buffers is not None and buffers.any() and \
                bug != "lora-bn-not-moved":
            w0[buffers] = _base().track(data, merged)[buffers]
        gq = np.zeros(len(q))
        new = q.copy()
        for (off, k, d, oA, oB, _), (A, B), (gA, gB), (An, Bn) in zip(
                T, _views(q, T, r), _views(gq, T, r), _views(new, T, r)):
            G = g[off:off + k * d].reshape(k, d)
            gB[:] = s * G @ A.T
            gA[:] = s * B.T @ G
            if reg and bug != "hetlora-no-regulariser":
                nB = np.linalg.norm(B[:, cut:rank])
                nA = np.linalg.norm(A[cut:rank])
                if nB > 0:
                    gB[:, cut:rank] += lam * nA * B[:, cut:rank] / nB
                if nA > 0:
                    gA[cut:rank] += lam * nB * A[cut:rank] / nA
            if opt is not None:
                continue
            Bn -= eta * gB
            if method != "ffa" or bug == "lora-ffa-trains-a":
                if bug == "lora-sequential":
                    gA = s * Bn.T @ G
                An -= eta * gA
        q = opt.step(q, gq, eta, move) if opt is not None else new
        log(step, q)
    pruned = reg and sum((nb * na) ** 2 for nb, na in _tail(q, T, r, cut, rank)) < before
    return q, pruned


def _truncate_state(opt, T, r, rank):
    """HetLoRA: the optimizer's buffers (momentum, Adam's moments) cut to
    rank with the adapter, so the zero padding stays zero; step counts
    are kept."""
    if opt is None:
        return
    for off, k, d, oA, oB, layer in T:
        for block, shape in ((layer + ".lora_A", (r, d)),
                             (layer + ".lora_B", (k, r))):
            st = opt.state.get(block, {})
            for key in ("b", "m", "v"):
                if isinstance(st.get(key), np.ndarray):
                    x = st[key].reshape(shape).copy()
                    if block.endswith("A"):
                        x[rank:] = 0.0
                    else:
                        x[:, rank:] = 0.0
                    st[key] = x.ravel()


_RMIN = [1]


def _truncate(q, T, r, rank):
    q = q.copy()
    for A, B in _views(q, T, r):
        A[rank:] = 0.0
        B[:, rank:] = 0.0
    return q


def run(spec, clients, w0, log, bug):
    base = _base()
    hp = spec["algorithm"]["hyperparameters"]
    sw = spec["algorithm"].get("switches", {})
    model = spec["model"]
    if model["kind"] not in ("linear", "softmax", "mlp", "layers"):
        raise base.Unsupported("lora on %s" % model["kind"])
    init = spec.get("init", {})
    method = sw.get("lora.method", "personal")
    r, eta = int(hp["lora.r"]), hp["eta"]
    alpha = hp["lora.alpha"]
    if method == "hetlora" and sw.get("hetlora.scaling", "none") == "none":
        s = 1.0
    elif bug == "lora-scale-alpha":
        s = alpha
    else:
        s = alpha / r
    lam = hp.get("hetlora.lambda", 0.0)
    gamma = hp.get("hetlora.gamma", 0.5)
    _RMIN[0] = int(hp.get("hetlora.r_min", 1))
    T, Q = _targets(spec, r, sw.get("lora.targets", "all"))
    opts = base.pfl_numpy_optim.for_adapter(
        spec, [(layer + part, lo, lo + n) for off, k, d, oA, oB, layer in T
               for part, lo, n in ((".lora_A", oA, r * d),
                                   (".lora_B", oB, k * r))], Q)
    q = np.asarray(init["lora"], dtype=float)
    N = len(clients)
    rank = [int(x) for x in init.get("lora_ranks", [r] * N)]
    qs = [_truncate(q, T, r, rank[i]) for i in range(N)]
    # each client's copy of the frozen base: its batchnorm buffers move in
    # its own training passes and are never sent (only the adapter is)
    buffers = np.zeros(len(w0), dtype=bool)
    if model["kind"] == "layers":
        for name, off, size, _ in base.model_blocks(model):
            if name.endswith("running_mean") or name.endswith("running_var"):
                buffers[off:off + size] = True
    bases = [np.array(w0, dtype=float) for _ in clients]
    v = [_merge(bases[i], qs[i], T, r, s) for i in range(N)]
    w = _merge(w0, q, T, r, s)
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        ids = rnd["clients"]
        for j, i in enumerate(ids):
            if method != "personal" and bug != "lora-stale-start":
                qs[i] = _truncate(q, T, r, r if bug == "hetlora-no-truncate" else rank[i])
            log("client_begin", "train", "q", qs[i], round=t, client=i, step=0)
            opt = opts and opts.begin(0, i)
            if method == "hetlora":
                _truncate_state(opt, T, r, rank[i])
            cut = math.floor(gamma * rank[i])
            qs[i], pruned = _train(
                qs[i], clients[i], rnd["batches"][j], bases[i], T, r, rank[i],
                (s, eta, method, lam, cut),
                lambda st, x, i=i, t=t: log("step", "train", "q", x, round=t,
                                            client=i, step=st), bug, opt,
                buffers)
            if pruned:
                rank[i] = cut
                qs[i] = _truncate(qs[i], T, r, cut)
                _truncate_state(opt, T, r, cut)
            if method == "hetlora":
                log("note", "train", "rank", [rank[i]], round=t, client=i)
            v[i] = _merge(bases[i], qs[i], T, r, s)
            log("client_end", "train", "q", qs[i], round=t, client=i)
        if method == "personal":
            continue
        p = np.zeros(N)
        if method == "hetlora":
            kind = sw.get("hetlora.weights", "sparsity")
            if bug == "hetlora-sample-weights":
                kind = "samples"
        else:
            kind = sw.get("lora.weights", "samples")
        for i in ids:
            if kind == "sparsity":
                p[i] = math.sqrt(sum(np.sum((B @ A) ** 2) for A, B in _views(qs[i], T, r)))
            elif kind == "uniform":
                p[i] = 1.0
            else:
                p[i] = clients[i].n
        Z = p.sum()
        for i in ids:
            p[i] = p[i] / Z if Z > 0 else 1.0 / len(ids)
        log("note", "train", "weights", p, round=t)
        new = q.copy() if method == "ffa" else np.zeros(Q)
        for (off, k, d, oA, oB, _) in T:
            lo = oB if method == "ffa" else oA
            new[lo:oB + k * r] = sum(p[i] * qs[i][lo:oB + k * r] for i in ids)
        if bug == "hetlora-renormalise":
            for A, B in _views(new, T, r):
                for rho in range(r):
                    tot = sum(p[i] for i in ids if rank[i] > rho)
                    if tot > 0:
                        A[rho] /= tot
                        B[:, rho] /= tot
        q = new
        log("server", "train", "q", q, round=t)
        w = _merge(w0, q, T, r, s)
        log("server", "train", "w", w, round=t)
    return {"w": w, "v": v}
# SPDX-License-Identifier: GPL-3.0-or-later


_install()
# SPDX-License-Identifier: GPL-3.0-or-later
