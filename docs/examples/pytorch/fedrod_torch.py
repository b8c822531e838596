#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""fedrod_torch.py: FedRoD (linear personal head) in PyTorch, checked by
`pflref check`.

Chen and Chao, "On Bridging Generic and Personalized Federated Learning
for Image Classification", ICLR 2022 (arXiv 2107.00778), Algorithm 1
(lines as in docs/algorithms/fedrod.md):

  l. 4    the client's generic model ← w_t (body net[:-1], head net[-1])
  l. 7    per scheduled batch: rep = net[:-1](x), out_g = net[-1](rep);
          loss = CE(out_g + log N_i, y), N_i the client's class counts
          (init.class_counts[i] when the spec gives them)
          (log 0 = −inf: an absent class has probability 0);
          loss.backward(); optimizer.step()  (torch.optim.SGD(lr=η))
  l. 8    out_p = head_p(rep'), loss = CE(out_g'.detach() + out_p, y),
          rep' and out_g' of the updated model (fedrod.features = before:
          rep.detach(), out_g.detach() of l. 7's forward pass);
          opt_head.step()  (torch.optim.SGD(head_p, lr=η))
  l. 12   w = Σ (n_i / Σ n_j) w_i over the round's clients
head_p is a torch.nn.Linear of net[-1]'s shape, zero at the start
(fedrod.phi_p0 = generic: a copy of w⁰'s head), kept by the client.
Records: round_begin / server "w"; client_begin / step / client_end
"w_local"; step "phi_P" after each l. 8; note "phi_P" per participant;
final w.  The mlp vectors (the preset pfllib too).

usage: fedrod_torch.py VECTOR.json -o RESULT.json
"""
import copy

import torch

from torch_common import (Problem, Recorder, Unsupported, clone, flat,
                          load_flat, main, plan)

PFLLIB = {"fedrod.features": "before", "fedrod.phi_p0": "generic",
          "lr.count": "trainings"}


def head_values(head):
    """φ_P as pflref records it: W_P row-major, then b_P."""
    parts = [head.weight.detach().reshape(-1)]
    if head.bias is not None:
        parts.append(head.bias.detach())
    return torch.cat(parts)


def client_update(prob, rec, t, i, model, head, batches, before):
    """Client i's round: returns its trained generic model's parameters."""
    data, eta = prob.clients[i], prob.cfg["eta"]
    net = clone(model)
    opt = torch.optim.SGD(net.parameters(), lr=eta)
    opt_head = torch.optim.SGD(head.parameters(), lr=eta)
    K = net[-1].out_features
    counts = torch.bincount(data.y.long(), minlength=K).to(torch.float64)
    given = prob.spec.get("init", {}).get("class_counts")
    if given is not None:     # PFLlib's first pass with drop_last, as given
        counts = torch.tensor(given[i], dtype=torch.float64)
    rec.record("client_begin", "w_local", net, round=t, client=i, step=0)
    for s, b in enumerate(batches, start=1):
        idx = torch.tensor(b, dtype=torch.long)
        x, y = data.X[idx], data.y[idx].long()
        rep = net[:-1](x)
        out_g = net[-1](rep)
        loss_bsm = torch.nn.functional.cross_entropy(out_g + counts.log(), y)
        opt.zero_grad()
        loss_bsm.backward()
        opt.step()
        rec.step(t, i, s, "w_local", net)
        if not before:
            with torch.no_grad():
                rep = net[:-1](x)
                out_g = net[-1](rep)
        out_p = head(rep.detach())
        loss = torch.nn.functional.cross_entropy(out_g.detach() + out_p, y)
        opt_head.zero_grad()
        loss.backward()
        opt_head.step()
        rec.step(t, i, s, "phi_P", head_values(head))
    rec.client_end(t, i, "w_local", net)
    rec.record("note", "phi_P", head_values(head), round=t, client=i)
    return flat(net)


def run(vector_raw):
    """FedRoD on a golden vector; returns its pflref-result/1 dict."""
    raw = copy.deepcopy(vector_raw)
    alg = raw.get("spec", {}).get("algorithm", {})
    if alg.get("preset") == "pfllib":    # its switches, spelled out
        alg.pop("preset")
        alg["switches"] = dict(PFLLIB, **alg.get("switches", {}))
    prob = Problem(raw, "fedrod")
    if prob.model["kind"] != "mlp":
        raise Unsupported("a %s model (this example builds the mlp)"
                          % prob.model["kind"])
    if prob.cfg["lr.schedule"] != "constant":
        raise Unsupported("lr.schedule %r" % prob.cfg["lr.schedule"])
    before = prob.cfg.get("fedrod.features", "after") == "before"
    generic = prob.cfg.get("fedrod.phi_p0", "zero") == "generic"
    rec, model = Recorder(prob.id), prob.global_model
    heads = []
    for _ in prob.clients:
        head = copy.deepcopy(model[-1])
        if not generic:
            with torch.no_grad():
                for p in head.parameters():
                    p.zero_()
        heads.append(head)
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, model)
        m_t = sum(prob.n[i] for i in rnd["clients"])
        w = None
        for i, batches in plan(rnd).items():
            w_i = client_update(prob, rec, t, i, model, heads[i], batches,
                                before)
            c = prob.n[i] / m_t
            w = c * w_i if w is None else w + c * w_i
        load_flat(model, w)
        rec.server(t, model)
    rec.final("w", model)
    return rec.result()


if __name__ == "__main__":
    main(run)
