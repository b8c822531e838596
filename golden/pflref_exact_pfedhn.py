# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_pfedhn.py: pFedHN (Shamsian, Navon, Fetaya, Chechik,
ICML 2021, arXiv 2103.04628v1, Algorithm 1) with a linear hypernetwork, in
exact rational arithmetic, written from shared/spec notes-lora-pfedhn.md
§4 and §4.1, independently of the C reference.

State (the spec's init.hypernetwork, every entry at the exact value of its
double): W_h (P×e), b_h (P; 0 and never moved with pfedhn.hn_bias = off),
the embeddings v_j (e each).  Round r of the given schedule names one
client i (Alg. 1 l. 3) and its K batches:
  θ_i = W_h v_i + b_h                                   (l. 4)
  θ̃_i = θ_i, then θ̃_i ← θ̃_i − η ∇L_i(θ̃_i; B_k), k = 1..K  (l. 5-8)
  Δθ_i = θ̃_i − θ_i                                      (l. 9)
  the surrogate ½‖θ̃_i − h(v_i; φ)‖² has, at the round's start,
    ∂/∂W_h = −Δθ_i v_iᵀ,  ∂/∂b_h = −Δθ_i,  ∂/∂v_i = −W_hᵀ Δθ_i,
  and one descent step on it is
    W_h ← W_h + α Δθ_i v_iᵀ,  b_h ← b_h + α Δθ_i       (l. 10)
    v_i ← v_i + α_v W_hᵀ Δθ_i   (W_h as it was)         (l. 11)
α_v = pfedhn.alpha_v when given, else α.  After the run every client's
model is h(v_j; φ) (the result's final v).

replay(spec, bugs) -> (trace, None, v, None).  Bugs (mutants):

  hn-ascent          φ and v_i step along +∇ (Δθ with the box's printed
                     minus sign taken literally)
  hn-embed-ascent    only v_i's step has the wrong sign
  hn-embed-new-w     ∇_{v_i} formed with the already updated W_h
  hn-w-new-v         W_h's outer product formed with the updated v_i
  hn-embed-alpha     v_i steps with α instead of α_v
  hn-bias-frozen     b_h never moves
  hn-embed-frozen    v_i never moves
  hn-all-embeddings  every client's embedding takes client i's step
  hn-eval-trained    a client's final model is its last θ̃ (the trained
                     model), not h(v_j; φ)
  hn-one-step        only the first of the K local batches is used
"""
from fractions import Fraction

import pflref_exact as px
from pflref_golden import Trace, exact, exact_vec

MUTANTS = {
    "pfedhn-sign": ["hn-ascent", "hn-embed-ascent"],
    "pfedhn-simultaneous": ["hn-embed-new-w", "hn-w-new-v"],
    "pfedhn-embed-rate": ["hn-embed-alpha"],
    "pfedhn-bias": ["hn-bias-frozen"],
    "pfedhn-embedding": ["hn-embed-frozen", "hn-all-embeddings"],
    "pfedhn-eval-model": ["hn-eval-trained"],
    "pfedhn-local-steps": ["hn-one-step"],
}


def hypernetwork(spec):
    """(W_h rows, b_h or None, [v_j]) exact, from init.hypernetwork."""
    h = spec["init"]["hypernetwork"]
    W = [exact_vec(row) for row in h["W"]]
    b = exact_vec(h["b"]) if "b" in h else None
    V = [exact_vec(row) for row in h["v"]]
    return W, b, V


def h_of(W, b, v):
    """θ = W v (+ b): θ_p = Σ_c W_pc v_c + b_p."""
    return [sum(Wp[c] * v[c] for c in range(len(v))) + (b[p] if b else 0)
            for p, Wp in enumerate(W)]


def replay(spec, bugs=frozenset()):
    alg = spec["algorithm"]
    hp, sw = alg["hyperparameters"], alg.get("switches", {})
    eta, alpha = exact(hp["eta"]), exact(hp["alpha"])
    alpha_v = exact(hp["pfedhn.alpha_v"]) if "pfedhn.alpha_v" in hp else alpha
    if "hn-embed-alpha" in bugs:
        alpha_v = alpha
    bias = sw.get("pfedhn.hn_bias", "on") == "on"
    pr = px.Problem(spec["model"], spec["problem"]["clients"])
    W, b, V = hypernetwork(spec)
    assert (b is not None) == bias
    P, e, N = len(W), len(V[0]), len(V)
    assert P == pr.P and N == len(pr.clients)
    trained = {}
    trace = Trace()
    sgn = -1 if "hn-ascent" in bugs else 1
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        assert len(rnd["clients"]) == 1
        i = rnd["clients"][0]
        steps = rnd["batches"][0]
        if "hn-one-step" in bugs:
            steps = steps[:1]
        theta = h_of(W, b, V[i])                              # req: pfedhn.alg1.l4
        trace.emit("client_begin", "train", t, i, 0, "theta", theta)
        tt = px.local_sgd(pr, i, theta, steps, eta, trace, "train", t,
                          "theta")                            # req: pfedhn.alg1.l8
        trace.emit("client_end", "train", t, i, None, "theta", tt)
        trained[i] = tt
        delta = [a - c for a, c in zip(tt, theta)]            # req: pfedhn.alg1.l9
        trace.emit("note", "train", t, i, None, "delta_theta", delta)
        v_old = list(V[i])
        # l. 11's direction W_hᵀ Δθ_i at the old W_h; req: pfedhn.alg1.l11
        g_v = [sum(W[p][c] * delta[p] for p in range(P)) for c in range(e)]
        esgn = -sgn if "hn-embed-ascent" in bugs else sgn
        v_new = [v_old[c] + esgn * alpha_v * g_v[c] for c in range(e)]
        v_for_w = v_new if "hn-w-new-v" in bugs else v_old
        # l. 10: W_h += α Δθ_i v_iᵀ, b_h += α Δθ_i; req: pfedhn.alg1.l10
        W = [[W[p][c] + sgn * alpha * delta[p] * v_for_w[c] for c in range(e)]
             for p in range(P)]
        if bias and "hn-bias-frozen" not in bugs:
            b = [b[p] + sgn * alpha * delta[p] for p in range(P)]
        if "hn-embed-new-w" in bugs:
            g_v = [sum(W[p][c] * delta[p] for p in range(P)) for c in range(e)]
            v_new = [v_old[c] + esgn * alpha_v * g_v[c] for c in range(e)]
        trace.emit("note", "train", t, i, None, "W_h",
                   [x for row in W for x in row])
        if bias:
            trace.emit("note", "train", t, i, None, "b_h", b)
        if "hn-embed-frozen" in bugs:
            v_new = v_old
        if "hn-all-embeddings" in bugs:
            step = [v_new[c] - v_old[c] for c in range(e)]
            V = [[V[j][c] + step[c] for c in range(e)] for j in range(N)]
        V[i] = v_new
        trace.emit("note", "train", t, i, None, "embedding", V[i])
    final = [h_of(W, b, V[j]) for j in range(N)]
    if "hn-eval-trained" in bugs:
        final = [trained.get(j, final[j]) for j in range(N)]
    return trace, None, final, None


def supported(spec):
    return (spec["algorithm"]["name"] == "pfedhn"
            and spec["model"]["kind"] in ("quadratic", "linear", "mlp")
            and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given")
