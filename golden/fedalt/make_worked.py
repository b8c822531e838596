#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedAlt and FedSim golden vectors (Pillutla et al., ICML 2022, Alg. 4
and 5) and the presets built on them, from the worked examples of
shared/spec notes-pflego-fedalt-fedsim-fedrep.md, in exact rational
arithmetic (pflref_exact_pfl.py).

Example A (notes §3.9): ŷ = u·x + v_i (shared slope u, personal bias v_i),
½(ŷ − y)², full-batch steps; client 1 = {(1,2),(2,3)}, client 2 =
{(1,−1),(2,−1),(3,−2)}, client 3 = {(1,1)} (0-based here: 0, 1, 2);
S⁰ = {1,2}, S¹ = {2,3}; u⁰ = 0.5, v⁰ = 0; γ_u = γ_v = 0.1; FedAlt τ_v = 1,
τ_u = 2; FedSim τ = 2; server α-ratio mean, α = (2,3,1)/6; final
fine-tuning τ_f = 2 steps on v with step 0.1 for all three clients.

Example D (notes §4.5): ŷ = h·(b·x), body b, head h (an mlp with d = h =
k = 1, identity activation, no biases), ½(ŷ − y)², clients 1–3 of Example
B, S = {1,2}, b⁰ = 1, h⁰ = 0.5, step 0.1: one round of FedRep (fedalt
preset), FedPer, LG-FedAvg and FedBABU (fedsim presets; FedBABU followed by
two full fine-tuning steps on every client).

Coincidence-free runs (golden/coincidences.py), FedAlt and FedSim each:
ŷ = x·u + v_i on three clients (n = 3, 2, 4), γ_u = 0.135, γ_v = 0.215,
η_ft = 0.165, minibatches, two rounds; (stateful, samples, personal),
(stateless, uniform, full), (stateful, batches, full).  fedrep-drawn: the
FedRep preset on that model with 3 and 4 batches per device and round 0 drawn
as [2, 0].  finetune-last-local-decayed (fedalt) and
fedbabu-pfllib-decay-head (fedsim): pfl.finetune_start = last_local and
pfl.finetune_lr = decayed with γ_v > 0 under -ld (lr.count = trainings).

Every generator asserts the notes' published numbers (to their 10 printed
digits) before writing.  Vectors (file = id without the folder, '/' → '-'):
see MAKERS.

    /usr/bin/python3 golden/fedalt/make_worked.py [OUTDIR]
"""
import os
import sys
from fractions import Fraction as F

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px        # noqa: E402
import pflref_exact_pfl as pp    # noqa: E402
import pflref_golden as pg       # noqa: E402

NOTES = "shared/spec notes-pflego-fedalt-fedsim-fedrep.md"
PAPER = ("Pillutla, Malik, Mohamed, Rabbat, Sanjabi, Xiao, ICML 2022 (the seed "
         "002_…), Alg. 4 (FedAlt) and Alg. 5 (FedSim)")
GENERATOR_ROOT = "golden/{}/make_worked.py (exact fractions, pflref_exact_pfl.py)"
TOL = {
    "atol": 1e-13,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: at most 3 local steps per device and round, two "
             "rounds and two fine-tuning steps, each a contraction on these "
             "data (γ times the largest batch-Hessian eigenvalue below 2, "
             "asserted for the linear model), each adding a few roundings of "
             "terms below 10 in magnitude; the accumulated error stays below "
             "1e-14, and every flagged bug moves some value by more than 1e3 "
             "times the tolerance.",
}

# The spread-* runs take up to 4 minibatch steps per device and round (the
# S_BATCHES lists); the same argument as TOL's, with that count.
TOL_SPREAD = dict(TOL, basis=TOL["basis"].replace(
    "at most 3 local steps", "at most 4 local steps"))
assert TOL_SPREAD["basis"] != TOL["basis"]

TOL_FEDREP = {
    "atol": 1e-13,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: at most 4 local steps per device and round, two "
             "rounds and two fine-tuning steps, each a contraction on these "
             "data (γ_v and η_ft times the trace of the batch Hessian below "
             "2, asserted; γ_u < γ_v), each adding a few roundings of terms "
             "below 10 in magnitude; the accumulated error stays below "
             "1e-14, and every flagged bug moves some value by more than 1e3 "
             "times the tolerance.",
}

A_MODEL = {"kind": "linear", "d": 1, "loss": "half_squared", "bias": True}
A_CLIENTS = [{"X": [[1.0], [2.0]], "y": [2.0, 3.0]},
             {"X": [[1.0], [2.0], [3.0]], "y": [-1.0, -1.0, -2.0]},
             {"X": [[1.0]], "y": [1.0]}]
A_INIT = {"kind": "given", "w": [0.5, 0.0]}
A_SPLIT = {"personal": ["b"]}
A_ROUNDS = [[0, 1], [1, 2]]

D_MODEL = {"kind": "mlp", "d": 1, "h": 1, "k": 1, "loss": "half_squared",
           "activation": "identity", "bias": False}
D_CLIENTS = [{"X": [[1.0], [2.0]], "y": [2.0, 3.0]},
             {"X": [[1.0], [2.0], [3.0]], "y": [-1.0, -1.0, -2.0]},
             {"X": [[1.0]], "y": [1.0]}]
D_INIT = {"kind": "given", "w": [1.0, 0.5]}          # (b, h) = (W1, W2)


def full(n, steps):
    return [list(range(n)) for _ in range(steps)]


def close(x, y, digits=10):
    """x (exact) agrees with the notes' printed value y to its digits."""
    return abs(float(x) - y) <= 0.6 * 10 ** -digits


def run_spec(spec, bugs=px.NO_BUGS):
    w, v, trace = pp.replay(spec, frozenset(bugs))
    return trace, w, v


def make(folder, vid_name, title, description, model, clients, init, split,
         algorithm, rounds, post, flags, mutants, check, source, tol=TOL):
    """Build the spec, run it exactly, assert the notes' numbers (check),
    and wrap the vector after the mutant check."""
    vid = f"{folder}/worked/{vid_name}"
    spec = pg.given_spec(title, description, model, clients, init, algorithm,
                         rounds, split=split, post=post)
    result = run_spec(spec)
    check(*result)
    exp = pg.checked_expected(vid, tol, flags, mutants, result,
                              lambda bugs=px.NO_BUGS: run_spec(spec, bugs),
                              lambda trace, w, v: (trace, w, v))
    prov = pg.provenance("independent", source, GENERATOR_ROOT.format(folder))
    return f"worked-{vid_name}.json", pg.vector(vid, title, prov, flags, spec, tol, exp)


def records(trace, event, name, rnd=None, client=None, phase="train"):
    return [r["value"] for r in trace.records if r["event"] == event
            and r["name"] == name and r["phase"] == phase
            and (rnd is None or r.get("round") == rnd)
            and (client is None or r.get("client") == client)]


def server_u(trace):
    return [v[0] for v in records(trace, "server", "w")]


# ---------------------------------------------------------------- Example A

def example_a(kind, stateless, weights="samples", finetune=True):
    alt = kind == "fedalt"
    hp = {"gamma_u": 0.1, "gamma_v": 0.1, "eta_ft": 0.1}
    if alt:
        hp["tau_v"] = 1
    sw = {"pfl.state": "stateless" if stateless else "stateful"}
    if weights != "samples":
        sw["pfl.weights"] = weights
    algorithm = {"name": kind, "hyperparameters": hp, "switches": sw}
    steps = 3 if alt else 2
    rounds = [{"clients": S, "batches": [full(len(A_CLIENTS[i]["y"]), steps) for i in S]}
              for S in A_ROUNDS]
    post = [full(len(c["y"]), 2) for c in A_CLIENTS] if finetune else None
    return algorithm, rounds, post


def fedalt_a_stateful():
    algorithm, rounds, post = example_a("fedalt", False)

    def check(trace, w, v):
        u = server_u(trace)
        assert close(u[0], 0.2263916667) and close(u[1], -0.1176527549), u
        c1 = records(trace, "step", "w_local", 0, 0)
        assert c1[0][0] == pg.exact(0.5) and close(c1[0][1], 0.175)
        assert close(c1[1][0], 0.74875) and close(c1[2][0], 0.9353125)
        end = records(trace, "client_end", "w_local", 1)
        assert close(end[0][0], -0.2764299037) and close(end[0][1], -0.3886116667)
        assert close(end[1][0], 0.3586786917) and close(end[1][1], 0.0773608333)
        for got, want in zip(v, (0.6502810351, -0.5234007365, 0.2750162984)):
            assert close(got[1], want), (got, want)

    flags = ["pfl-update-order", "stale-personal-state", "aggregation-weights"]
    mutants = {"pfl-update-order": ["fedalt-u-first", "fedalt-stale-v"],
               "stale-personal-state": ["reset-personal"],
               "aggregation-weights": ["uniform-weights"]}
    return make(
        "fedalt", "notes-a-stateful",
        "FedAlt worked example A, stateful: u¹ = 0.2263916667, "
        "u² = −0.1176527549, fine-tuned v = (0.6502810351, −0.5234007365, "
        "0.2750162984)",
        "ŷ = u·x + v_i (shared slope, personal bias), ½(ŷ − y)², three "
        "clients (n = 2, 3, 1), full-batch steps, u⁰ = 0.5, v⁰ = 0, "
        "γ_u = γ_v = 0.1, τ_v = 1 then τ_u = 2 (the first of each device's 3 "
        "batches moves v, the other two u), S⁰ = {0, 1}, S¹ = {1, 2}, "
        "server Σ α_i u_i / Σ α_i with α_i = N_i/N, then 2 fine-tuning "
        "steps on v (η_ft = 0.1) for every client.",
        A_MODEL, A_CLIENTS, A_INIT, A_SPLIT, algorithm, rounds, post, flags,
        mutants, check, f"{NOTES} §3.4, §3.9 (example A, FedAlt stateful); {PAPER}")


def fedalt_a_stateless():
    algorithm, rounds, post = example_a("fedalt", True)

    def check(trace, w, v):
        u = server_u(trace)
        assert close(u[1], -0.1659527549), u
        end = records(trace, "client_end", "w_local", 1, 1)
        assert close(end[0][0], -0.3408299037), end
        for got, want in zip(v, (0.5222965351, -0.1902712865, 0.2215310234)):
            assert close(got[1], want), (got, want)

    flags = ["stale-personal-state", "pfl-update-order"]
    mutants = {"stale-personal-state": ["keep-personal"],
               "pfl-update-order": ["fedalt-u-first"]}
    return make(
        "fedalt", "notes-a-stateless",
        "FedAlt worked example A, stateless (pfl.state = stateless): "
        "u² = −0.1659527549, fine-tuned v = (0.5222965351, −0.1902712865, "
        "0.2215310234)",
        "Example A with v_i re-initialised to v⁰ = 0 at every visit (client 1 "
        "restarts from 0 in round 1) and fine-tuning from v⁰.",
        A_MODEL, A_CLIENTS, A_INIT, A_SPLIT, algorithm, rounds, post, flags,
        mutants, check, f"{NOTES} §3.4 (stateless variant), §3.9; {PAPER}; "
        "the paper's App. C.4")


def fedalt_a_uniform():
    algorithm, rounds, post = example_a("fedalt", False, "uniform", False)

    def check(trace, w, v):
        u = server_u(trace)
        assert close(u[0], 0.3445451389) and close(u[1], 0.1105264307), u

    flags = ["aggregation-weights"]
    mutants = {"aggregation-weights": ["samples-weights"]}
    return make(
        "fedalt", "notes-a-uniform",
        "FedAlt worked example A with pfl.weights = uniform (the official "
        "code with full-batch clients): u¹ = 0.3445451389, u² = 0.1105264307",
        "Example A, stateful, no fine-tuning, the server's unweighted mean "
        "(1/m) Σ u_i (Alg. 1 line 8 with α_i = 1/n).",
        A_MODEL, A_CLIENTS, A_INIT, A_SPLIT, algorithm, rounds, None, flags,
        mutants, check, f"{NOTES} §3.8 P1, §3.9 (code-style weights); {PAPER}")


def fedsim_a(stateless):
    algorithm, rounds, post = example_a("fedsim", stateless)

    def check(trace, w, v):
        u = server_u(trace)
        if stateless:
            assert close(u[1], -0.1816655556), u
            want = (0.5267746833, -0.1843004222, 0.2245164556)
        else:
            assert close(u[0], 0.2193333333) and close(u[1], -0.1092822222), u
            c1 = records(trace, "step", "w_local", 0, 0)
            assert close(c1[0][0], 0.775) and close(c1[0][1], 0.175)
            assert close(c1[1][0], 0.955) and close(c1[1][1], 0.29125)
            want = (0.7420579333, -0.6511302889, 0.3245848222)
        for got, x in zip(v, want):
            assert close(got[1], x), (got, x)

    flags = ["pfl-update-order", "stale-personal-state"]
    mutants = {"pfl-update-order": ["fedsim-sequential"],
               "stale-personal-state": ["keep-personal" if stateless else "reset-personal"]}
    name = "stateless" if stateless else "stateful"
    title = ("FedSim worked example A, stateless: u² = −0.1816655556"
             if stateless else
             "FedSim worked example A, stateful: u¹ = 0.2193333333, "
             "u² = −0.1092822222, fine-tuned v = (0.7420579333, "
             "−0.6511302889, 0.3245848222)")
    return make(
        "fedsim", f"notes-a-{name}", title,
        "Example A (ŷ = u·x + v_i, ½(ŷ − y)², n = 2, 3, 1, u⁰ = 0.5, v⁰ = 0) "
        "with LocalSim: τ = 2 full-batch steps moving u and v from the same "
        "point, γ_u = γ_v = 0.1, S⁰ = {0, 1}, S¹ = {1, 2}, α-ratio server "
        "mean, then 2 fine-tuning steps on v" +
        (", v_i re-initialised to v⁰ at every visit." if stateless else "."),
        A_MODEL, A_CLIENTS, A_INIT, A_SPLIT, algorithm, rounds, post, flags,
        mutants, check, f"{NOTES} §3.4, §3.9 (example A, FedSim); {PAPER}")


# ---------------------------------------------------------------- Example D

def example_d(name, preset, hp, steps, post_steps, flags, mutants, check, title,
              description):
    folder = "fedalt" if preset == "fedrep" else "fedsim"
    algorithm = {"name": folder, "preset": preset, "hyperparameters": hp}
    rounds = [{"clients": [0, 1], "batches": [full(2, steps), full(3, steps)]}]
    post = [full(len(c["y"]), post_steps) for c in D_CLIENTS] if post_steps else None
    return make(folder, f"notes-d-{name}", title, description, D_MODEL, D_CLIENTS,
                D_INIT, None, algorithm, rounds, post, flags, mutants, check,
                f"{NOTES} §4.0 (mapping), §4.5 (example D, {preset}); {PAPER}")


D_TEXT = ("ŷ = h·(b·x) (an mlp with d = h = k = 1, identity activation, no "
          "biases; W1 = b the body, W2 = h the head), ½(ŷ − y)², clients "
          "(n = 2, 3, 1), S = {0, 1}, b⁰ = 1, h⁰ = 0.5, step 0.1, full-batch. ")


# req: fedalt.preset.fedrep
def fedrep_d():
    def check(trace, w, v):
        end = records(trace, "client_end", "w_local", 0)
        assert close(end[0][1], 0.98125) and close(end[1][1], -0.3177777778)
        assert close(end[0][0], 1.151787109375) and close(end[1][0], 1.0482080658)
        assert close(w[0], 1.0999975876), w

    return example_d(
        "fedrep", "fedrep", {"gamma_u": 0.1, "gamma_v": 0.1, "tau_v": 2}, 3, 0,
        ["pfl-update-order", "aggregation-weights"],
        {"pfl-update-order": ["fedalt-u-first", "fedalt-stale-v"],
         "aggregation-weights": ["samples-weights"]},
        check,
        "FedRep (fedalt preset fedrep) worked example D: 2 head steps then 1 "
        "body step; b = 1.0999975876 (plain mean)",
        D_TEXT + "FedRep: τ_v = 2 head steps with the body fixed, then 1 body "
        "step with the new head; the server's plain mean of the bodies.")


# req: fedsim.preset.fedper
def fedper_d():
    def check(trace, w, v):
        end = records(trace, "client_end", "w_local", 0)
        assert close(end[0][1], 0.9793056641) and close(end[1][1], -0.2449679012)
        assert close(end[0][0], 1.276697265625) and close(end[1][0], 0.7429530864)
        assert close(w[0], 0.9564507581), w

    return example_d(
        "fedper", "fedper", {"gamma_u": 0.1, "gamma_v": 0.1}, 2, 0,
        ["pfl-update-order", "aggregation-weights"],
        {"pfl-update-order": ["fedsim-sequential"],
         "aggregation-weights": ["uniform-weights"]},
        check,
        "FedPer (fedsim preset fedper) worked example D: 2 joint steps; "
        "b = 0.9564507581 (n-weighted)",
        D_TEXT + "FedPer: 2 joint steps on (b, h); the server's n-weighted "
        "mean of the bodies (2:3).")


# req: fedsim.preset.lg_fedavg
def lg_fedavg_d():
    def check(trace, w, v):
        end = records(trace, "client_end", "w_local", 0)
        assert close(end[0][1], 0.9793056641) and close(end[1][1], -0.2449679012)
        assert close(w[1], 0.2447415249), w
        assert w[0] == 1                       # the body is personal: w keeps b⁰

    return example_d(
        "lg-fedavg", "lg_fedavg", {"gamma_u": 0.1, "gamma_v": 0.1}, 2, 0,
        ["pfl-update-order", "aggregation-weights"],
        {"pfl-update-order": ["fedsim-sequential"],
         "aggregation-weights": ["uniform-weights"]},
        check,
        "LG-FedAvg (fedsim preset lg_fedavg) worked example D: personal "
        "input layer, shared head h = 0.2447415249 (n-weighted)",
        D_TEXT + "LG-FedAvg: the body b (input layer) is personal and the "
        "head h shared; 2 joint steps; the server's n-weighted mean of the "
        "heads.")


# req: fedsim.preset.fedbabu
def fedbabu_d():
    def check(trace, w, v):
        end = records(trace, "client_end", "w_local", 0)
        assert close(end[0][0], 1.26640625) and close(end[1][0], 0.4977777778)
        assert end[0][1] == end[1][1] == pg.exact(0.5)     # the head never moves
        assert close(w[0], 0.8052291667), w
        want = [(0.954075604282, 1.120224619824), (-0.076997979578, 0.526137280488),
                (0.593388922554, 0.864820971065)]
        for got, (h, b) in zip(v, want):
            assert close(got[1], h, 12) and close(got[0], b, 12), (got, h, b)

    return example_d(
        "fedbabu", "fedbabu", {"gamma_u": 0.1, "eta_ft": 0.1}, 2, 2,
        ["finetune-scope", "aggregation-weights"],
        {"finetune-scope": ["scope-flip"],
         "aggregation-weights": ["uniform-weights"]},
        check,
        "FedBABU (fedsim preset fedbabu) worked example D: body-only steps "
        "with the head frozen at 0.5, b = 0.8052291667, then full fine-tuning",
        D_TEXT + "FedBABU: FedSim with γ_v = 0 (the head frozen at its initial "
        "value and shared), 2 body steps, the n-weighted mean of the bodies, "
        "then every client fine-tunes (b, h) jointly for 2 steps at η_ft = 0.1.")


# ---------------------------------------------------------------- coincidence-free
# golden/coincidences.py: γ_u, γ_v, η_ft distinct and none 1 or 0, client
# sizes 3, 2, 4, different batch counts, τ_v ≠ τ_u for most client rounds,
# minibatches that differ from step to step, two rounds.

S_MODEL = {"kind": "linear", "d": 2, "loss": "half_squared", "bias": True}
S_CLIENTS = [
    {"X": [[0.815, -0.435], [-0.365, 1.145], [1.235, 0.285]],
     "y": [1.385, -0.715, 0.945]},
    {"X": [[-1.055, 0.625], [0.445, -0.955]], "y": [-1.265, 0.835]},
    {"X": [[0.565, 0.915], [-0.785, -0.345], [1.125, -0.665], [-0.235, 1.315]],
     "y": [0.455, -1.135, 1.715, -0.385]},
]
S_INIT = {"kind": "given", "w": [0.35, -0.15, 0.25]}
S_SPLIT = {"personal": ["b"]}
S_BATCHES = {
    (0, 0): [[0, 1], [2], [1, 2]],
    (0, 1): [[1], [0, 1], [0], [1]],
    (1, 1): [[0, 1], [1], [0]],
    (1, 2): [[0, 1], [2, 3], [3, 0], [1, 2]],
}
S_ROUNDS = [[0, 1], [1, 2]]
S_POST = [[[0, 2], [1]], [[1], [0]], [[3, 1], [0, 2]]]


def spread(kind, state, weights, finetune, tau_v=1):
    """tau_v = 3 (FedAlt): the devices with 3 minibatches in a round take
    every step on v and none on u, the boundary of a round's τ_v ≤ its
    batch count (issue 33 §3); those with 4 take one u step."""
    assert max(len(b) for b in S_BATCHES.values()) == 4   # TOL_SPREAD's count
    alt = kind == "fedalt"
    hp = {"gamma_u": 0.135, "gamma_v": 0.215, "eta_ft": 0.165}
    if alt:
        hp["tau_v"] = tau_v
    sw = {"pfl.state": state, "pfl.weights": weights, "pfl.finetune": finetune}
    algorithm = {"name": kind, "hyperparameters": hp, "switches": sw}
    rounds = [{"clients": S, "batches": [S_BATCHES[(t, i)] for i in S]}
              for t, S in enumerate(S_ROUNDS)]
    name = f"spread-{state}-{weights}-{finetune}" + ("" if tau_v == 1 else
                                                      f"-tau-v-{tau_v}")

    def check(trace, w, v):
        pr = px.Problem(S_MODEL, S_CLIENTS)
        for (t, i), steps in S_BATCHES.items():
            for b in steps:
                assert F(0.215) * px.curvature_bound(pr, i, b) < 2
        for i, steps in enumerate(S_POST):
            for b in steps:
                assert F(0.165) * px.curvature_bound(pr, i, b) < 2

    flags = ["pfl-update-order", "stale-personal-state", "finetune-scope"]
    mutants = {"pfl-update-order": (["fedalt-u-first", "fedalt-stale-v"] if alt
                                    else ["fedsim-sequential"]),
               "stale-personal-state": ["reset-personal" if state == "stateful"
                                        else "keep-personal"],
               "finetune-scope": ["scope-flip"]}
    if weights != "batches":
        flags.append("aggregation-weights")
        mutants["aggregation-weights"] = ["uniform-weights" if weights == "samples"
                                          else "samples-weights"]
    what = {"samples": "α_i = N_i", "uniform": "α_i = 1",
            "batches": "α_i = the device's batch count"}[weights]
    local = (("τ_v = 1 step on v, then the remaining steps on u" if tau_v == 1
              else f"τ_v = {tau_v} steps on v, then the remaining steps (none "
              f"for a device with {tau_v} minibatches) on u") if alt
             else "joint steps on (u, v) from the same point")
    return make(
        kind, name,
        f"{'FedAlt' if alt else 'FedSim'}, pfl.state = {state}, pfl.weights = "
        f"{weights}, pfl.finetune = {finetune}: γ_u = 0.135, γ_v = 0.215, "
        "η_ft = 0.165, minibatches, two rounds",
        "ŷ = x·u + v_i (shared weights u, personal bias v_i), ½(ŷ − y)², three "
        "clients (n = 3, 2, 4), w⁰ = (0.35, −0.15, 0.25), S⁰ = {0, 1}, "
        f"S¹ = {{1, 2}}, 3 or 4 minibatches per device and round, {local}; "
        f"server Σ α_i u_i / Σ α_i with {what}; then 2 fine-tuning minibatch "
        f"steps ({'v only' if finetune == 'personal' else 'u and v'}) for "
        "every client.",
        S_MODEL, S_CLIENTS, S_INIT, S_SPLIT, algorithm, rounds, S_POST, flags,
        mutants, check, f"{NOTES} §3.4 (FedAlt, FedSim, stateless variant), §3.8 "
                        f"(weights); {PAPER}", tol=TOL_SPREAD)


# req: fedalt.preset.fedrep
def fedrep_drawn():
    """Preset fedrep (the server's plain mean) on the linear model of the
    coincidence-free runs, with unequal batch counts in every round (3 and
    4), so α_i = 1 differs from α_i = the batch count, and round 0 drawn as
    [2, 0] (golden/CHANGES.md, 2026-11-25, "drawn order"): every batch of
    that round indexes the smaller client too."""
    algorithm = {"name": "fedalt", "preset": "fedrep",
                 "hyperparameters": {"gamma_u": 0.145, "gamma_v": 0.205,
                                     "eta_ft": 0.175, "tau_v": 1}}
    rounds = px.with_drawn([
        {"clients": [0, 2], "batches": [[[0, 1], [2], [1, 2]],
                                        [[1, 2], [0, 2], [2, 1], [0]]]},
        {"clients": [1, 2], "batches": [[[0, 1], [1], [0]],
                                        [[0, 1], [2, 3], [3, 0], [1, 2]]]},
    ], [[2, 0], [1, 2]])
    hp, sw = pp.settings(algorithm)[:2]
    assert sw["pfl.weights"] == "uniform"

    def check(trace, w, v):
        pr = px.Problem(S_MODEL, S_CLIENTS)
        for plan in px.plans_of(rounds):
            assert len({len(steps) for _, steps in plan}) > 1   # 3 ≠ 4
            for i, steps in plan:
                assert all(F(0.205) * px.curvature_bound(pr, i, b) < 2 for b in steps)
        for i, steps in enumerate(S_POST):
            assert all(F(0.175) * px.curvature_bound(pr, i, b) < 2 for b in steps)
        assert hp["gamma_u"] < hp["gamma_v"]
        spec = pg.given_spec("", None, S_MODEL, S_CLIENTS, S_INIT, algorithm,
                             rounds, split=S_SPLIT, post=S_POST)
        exp = pg.expected(trace, w, v)
        for wrong in (run_spec(px.spec_misread_drawn(spec)),    # drawn as clients
                      run_spec(spec, {"batches-weights"})):      # α_i = batches
            assert pg.detects(exp, pg.expected(*wrong), TOL_FEDREP) is not None

    flags = ["pfl-update-order", "stale-personal-state", "aggregation-weights",
             "finetune-scope"]
    mutants = {"pfl-update-order": ["fedalt-u-first", "fedalt-stale-v"],
               "stale-personal-state": ["reset-personal"],
               "aggregation-weights": ["samples-weights", "batches-weights"],
               "finetune-scope": ["scope-flip"]}
    return make(
        "fedalt", "fedrep-drawn",
        "FedRep (fedalt preset fedrep) on a linear model: unequal batch counts "
        "under the plain mean, a round drawn as [2, 0]; γ_u = 0.145, γ_v = "
        "0.205, η_ft = 0.175",
        "ŷ = x·u + v_i (shared weights u, personal bias v_i), ½(ŷ − y)², three "
        "clients (n = 3, 2, 4), w⁰ = (0.35, −0.15, 0.25), preset fedrep "
        "(stateful, pfl.weights = uniform, pfl.finetune = personal), τ_v = 1 "
        "step on v, then the remaining steps on u.  S⁰ = {0, 2} drawn by the "
        "sampler as [2, 0] (batches[j] still belongs to clients[j]), S¹ = "
        "{1, 2}; 3 and 4 minibatches per device and round; the server's plain "
        "mean of the u_i; then 2 fine-tuning minibatch steps on v for every "
        "client.",
        S_MODEL, S_CLIENTS, S_INIT, S_SPLIT, algorithm, rounds, S_POST, flags,
        mutants, check, f"{NOTES} §3.4 (FedAlt), §3.8 (weights), §4 (FedRep); "
                        f"{PAPER}; docs/formats.md (drawn: information only)",
        TOL_FEDREP)


# The decayed pfllib runs (fedrep and the fedsim presets): partial
# participation over three rounds, so each client's count of trainings
# differs from the round count.
DECAY_ROUNDS = [
    {"clients": [0, 2], "batches": [[[0, 1], [2], [1, 2]],
                                    [[1, 2], [0, 2], [2, 1], [0]]]},
    {"clients": [1, 2], "batches": [[[0, 1], [1], [0]],
                                    [[0, 1], [2, 3], [3, 0], [1, 2]]]},
    {"clients": [0, 1], "batches": [[[2, 0], [1], [0, 1, 2]],
                                    [[1], [0, 1], [0]]]},
]


def decay_check(rounds):
    """The contraction check of the decayed runs at their undecayed steps
    (γ_v = 0.205, η_ft = 0.175; a decayed step is smaller)."""
    def check(trace, w, v):
        pr = px.Problem(S_MODEL, S_CLIENTS)
        for r in rounds:
            for i, steps in zip(r["clients"], r["batches"]):
                assert all(F(0.205) * px.curvature_bound(pr, i, b) < 2 for b in steps)
        for i, steps in enumerate(S_POST):
            assert all(F(0.175) * px.curvature_bound(pr, i, b) < 2 for b in steps)
    return check


def fedrep_pfllib_decay():
    """Preset fedrep_pfllib (PFLlib's FedRep: head steps first, then the
    base, n_i weights, each client's -ld scheduler stepped when it trains,
    lr.count = trainings) with lr.schedule = exponential, γ = 0.6: client
    i's γ_u, γ_v in a round are times 0.6^(rounds i trained before).
    S⁰ = {0, 2}, S¹ = {1, 2}, S² = {0, 1}: client 1 first trains in round
    1 with the undecayed steps, client 0 in round 2 with one decay (the
    round count would give two)."""
    algorithm = {"name": "fedalt", "preset": "fedrep_pfllib",
                 "hyperparameters": {"gamma_u": 0.145, "gamma_v": 0.205,
                                     "eta_ft": 0.175, "tau_v": 1,
                                     "lr.gamma": 0.6},
                 "switches": {"lr.schedule": "exponential"}}
    rounds = DECAY_ROUNDS
    hp, sw = pp.settings(algorithm)[:2]
    assert sw["pfl.weights"] == "samples" and sw["lr.count"] == "trainings"

    check = decay_check(rounds)

    flags = ["lr-count", "lr-schedule", "pfl-update-order",
             "stale-personal-state", "aggregation-weights"]
    mutants = {"lr-count": ["lr-per-round"],
               "lr-schedule": ["lr-ignored", "lr-shifted"],
               "pfl-update-order": ["fedalt-u-first", "fedalt-stale-v"],
               "stale-personal-state": ["reset-personal"],
               "aggregation-weights": ["uniform-weights"]}
    return make(
        "fedalt", "fedrep-pfllib-decay",
        "FedRep as PFLlib runs it (fedalt preset fedrep_pfllib) with -ld: n_i "
        "weights, each client's steps decayed with the rounds it trained",
        "ŷ = x·u + v_i (shared weights u, personal bias v_i), ½(ŷ − y)², three "
        "clients (n = 3, 2, 4), w⁰ = (0.35, −0.15, 0.25), preset fedrep_pfllib "
        "(stateful, pfl.weights = samples, pfl.finetune = personal, lr.count = "
        "trainings) with lr.schedule = exponential, lr.gamma = 0.6: client i's "
        "γ_u = 0.145, γ_v = 0.205 times 0.6^(rounds i trained before); τ_v = 1 "
        "step on v, then the remaining steps on u; S = {0, 2}, {1, 2}, {0, 1}; "
        "the server's n_i-weighted mean of the u_i; then 2 fine-tuning "
        "minibatch steps on v (η_ft = 0.175, undecayed) for every client.",
        S_MODEL, S_CLIENTS, S_INIT, S_SPLIT, algorithm, rounds, S_POST, flags,
        mutants, check, f"{NOTES} §3.4 (FedAlt), §4 (FedRep); shared/spec/"
                        f"notes-pfllib-as-run.md §2.2 (-ld), §2.3 (FedRep); "
                        f"TsingZ0/PFLlib d832e76f6a23 system/flcore/clients/"
                        f"clientrep.py; {PAPER}",
        TOL_FEDREP)


def fedsim_pfllib_decay(preset):
    """A fedsim pfllib preset (PFLlib's FedPer, LG-FedAvg or FedBABU: joint
    steps, n_i weights, each client's -ld scheduler stepped when it
    trains, lr.count = trainings) with lr.schedule = exponential, γ = 0.6,
    on the rounds of fedrep-pfllib-decay (S = {0, 2}, {1, 2}, {0, 1}): a
    client's γ_u, γ_v are times 0.6^(rounds it trained before).  The split
    is given: the bias personal (fedper, fedbabu: the "head" of the linear
    model), the weights personal (lg_fedavg: the local input layer)."""
    lg = preset == "lg_fedavg_pfllib"
    babu = preset == "fedbabu_pfllib"
    hp = {"gamma_u": 0.145, "eta_ft": 0.175, "lr.gamma": 0.6}
    if not babu:
        hp["gamma_v"] = 0.205
    algorithm = {"name": "fedsim", "preset": preset, "hyperparameters": hp,
                 "switches": {"lr.schedule": "exponential"}}
    split = {"personal": ["w"]} if lg else S_SPLIT
    rounds = DECAY_ROUNDS
    hps, sw = pp.settings(algorithm)[:2]
    assert sw["pfl.weights"] == "samples" and sw["lr.count"] == "trainings"

    check = decay_check(rounds)

    flags = ["lr-count", "lr-schedule", "stale-personal-state",
             "aggregation-weights", "finetune-scope"]
    mutants = {"lr-count": ["lr-per-round"],
               "lr-schedule": ["lr-ignored", "lr-shifted"],
               "stale-personal-state": ["reset-personal"],
               "aggregation-weights": ["uniform-weights"],
               "finetune-scope": ["scope-flip"]}
    if not babu:
        flags.insert(2, "pfl-update-order")
        mutants["pfl-update-order"] = ["fedsim-sequential"]
    else:           # γ_v = 0: the personal part never moves in training
        flags.remove("stale-personal-state")
        del mutants["stale-personal-state"]
        # PFLlib's fine_tune: from each client's own model, decayed lr
        flags += ["finetune-start", "finetune-lr"]
        mutants["finetune-start"] = ["ft-start-global"]
        mutants["finetune-lr"] = ["ft-lr-constant"]
    name = preset.replace("_pfllib", "").replace("_", "-")
    what = {"fedper_pfllib": "FedPer", "lg_fedavg_pfllib": "LG-FedAvg",
            "fedbabu_pfllib": "FedBABU"}[preset]
    return make(
        "fedsim", f"{name}-pfllib-decay",
        f"{what} as PFLlib runs it (fedsim preset {preset}) with -ld: n_i "
        "weights, each client's steps decayed with the rounds it trained",
        "ŷ = x·w + b, ½(ŷ − y)², three clients (n = 3, 2, 4), w⁰ = (0.35, "
        f"−0.15, 0.25), personal {'w (the input layer)' if lg else 'b'}; "
        f"preset {preset} (stateful, pfl.weights = samples, lr.count = "
        f"trainings{', γ_v = 0, pfl.finetune = full' if babu else ''}) with "
        "lr.schedule = exponential, lr.gamma = 0.6: client i's γ_u = 0.145"
        f"{'' if babu else ', γ_v = 0.205'} times 0.6^(rounds i trained "
        "before); joint steps on every batch; S = {0, 2}, {1, 2}, {0, 1}; "
        "the server's n_i-weighted mean of the shared part; then 2 "
        + ("fine-tuning minibatch steps of each client from the model it "
           "holds after round 2 (clients 0 and 1 their trained models, "
           "client 2 the model sent at round 2's start: pfl.finetune_start "
           "= last_local) with η_ft = 0.175 times 0.6^(its trainings) "
           "(pfl.finetune_lr = decayed)." if babu else
           "fine-tuning minibatch steps (η_ft = 0.175, undecayed)."),
        S_MODEL, S_CLIENTS, S_INIT, split, algorithm, rounds, S_POST, flags,
        mutants, check, f"{NOTES} §3.4 (FedSim), §4 ({what}); shared/spec/"
                        "notes-pfllib-as-run.md §2.2 (-ld), §2.3; "
                        f"{PAPER}", TOL_FEDREP)


# The fine-tuning switches with a personal block that trains (issue 33 §3:
# fedbabu-pfllib-decay's γ_v = 0 is the rules' "a zero step freezes a
# block"): other step sizes than the decayed runs above, all distinct.
FT_HP = {"gamma_u": 0.155, "gamma_v": 0.195, "eta_ft": 0.185, "lr.gamma": 0.7}
# S = {0, 1}, {0, 2}, {0, 2}: the clients train 3, 1 and 2 times, so the
# decayed fine-tuning steps differ from client to client (η_ft 0.7^3,
# 0.7, 0.7^2), and client 1, absent from the last two rounds, fine-tunes
# the model it was sent at round 2's start
FT_ROUNDS = [
    {"clients": [0, 1], "batches": [[[0, 1], [2], [1, 2]],
                                    [[0, 1], [1], [0]]]},
    {"clients": [0, 2], "batches": [[[2, 0], [1], [0, 1, 2]],
                                    [[1, 2], [0, 2], [2, 1], [0]]]},
    {"clients": [0, 2], "batches": [[[1], [0, 2]],
                                    [[0, 1], [2, 3], [3, 0], [1, 2]]]},
]
FT_SOURCE = ("TsingZ0/PFLlib d832e76f6a23 system/flcore/servers/serverbabu.py "
             "train (fine_tune() on every client after the last round, no "
             "send_models first), clients/clientbabu.py fine_tune (the "
             "client's own optimizer, its lr decayed by -ld once per train())")


def finetune_switches(kind):
    """pfl.finetune_start = last_local and pfl.finetune_lr = decayed with
    γ_v > 0, free of the coincidence audit's rules, on FT_ROUNDS (lr.count
    = trainings, γ = 0.7):
      fedsim  preset fedbabu_pfllib with γ_v = 0.195 given (the preset's
              γ_v = 0 overridden: FedBABU's schedule, fine-tuning and
              weights, with a head that trains);
      fedalt  no preset: the two switches with lr.schedule = exponential
              and lr.count = trainings on the paper's defaults (stateful,
              n_i weights, fine-tuning v only).
    Under last_local clients 0 and 2 fine-tune their trained models, client
    1 the model it was sent at round 2's start; each at η_ft 0.7^(its
    trainings): 0.7^3, 0.7, 0.7^2."""
    alt = kind == "fedalt"
    hp = dict(FT_HP)
    if alt:
        hp["tau_v"] = 1
        algorithm = {"name": "fedalt", "hyperparameters": hp,
                     "switches": {"lr.schedule": "exponential",
                                  "lr.count": "trainings",
                                  "pfl.finetune_start": "last_local",
                                  "pfl.finetune_lr": "decayed"}}
    else:
        algorithm = {"name": "fedsim", "preset": "fedbabu_pfllib",
                     "hyperparameters": hp,
                     "switches": {"lr.schedule": "exponential"}}
    rounds = FT_ROUNDS
    hps, sw = pp.settings(algorithm)[:2]
    assert hps["gamma_v"] > 0 and sw["lr.count"] == "trainings"
    assert sw["pfl.finetune_start"] == "last_local"
    assert sw["pfl.finetune_lr"] == "decayed"
    assert sw["pfl.finetune"] == ("personal" if alt else "full")
    assert len(set(FT_HP.values())) == len(FT_HP)

    def check(trace, w, v):
        pr = px.Problem(S_MODEL, S_CLIENTS)
        for r in rounds:
            for i, steps in zip(r["clients"], r["batches"]):
                assert all(F(FT_HP["gamma_v"]) * px.curvature_bound(pr, i, b) < 2
                           for b in steps)
        for i, steps in enumerate(S_POST):
            assert all(F(FT_HP["eta_ft"]) * px.curvature_bound(pr, i, b) < 2
                       for b in steps)
        trained = [sum(i in r["clients"] for r in rounds) for i in range(3)]
        assert len(set(trained)) == 3 and trained != [len(rounds)] * 3
        assert rounds[-1]["clients"] != [0, 1, 2]
        # each switch alone changes the final models
        spec = pg.given_spec("", None, S_MODEL, S_CLIENTS, S_INIT, algorithm,
                             rounds, split=S_SPLIT, post=S_POST)
        for key, other in (("pfl.finetune_start", "global"),
                           ("pfl.finetune_lr", "constant")):
            alg = dict(algorithm, switches=dict(algorithm["switches"],
                                                **{key: other}))
            _, w2, v2 = run_spec(dict(spec, algorithm=alg))
            assert v2 != v, key

    flags = ["finetune-start", "finetune-lr", "lr-count", "lr-schedule",
             "pfl-update-order", "stale-personal-state",
             "aggregation-weights", "finetune-scope"]
    mutants = {"finetune-start": ["ft-start-global"],
               "finetune-lr": ["ft-lr-constant"],
               "lr-count": ["lr-per-round"],
               "lr-schedule": ["lr-ignored", "lr-shifted"],
               "pfl-update-order": (["fedalt-u-first", "fedalt-stale-v"] if alt
                                    else ["fedsim-sequential"]),
               "stale-personal-state": ["reset-personal"],
               "aggregation-weights": ["uniform-weights"],
               "finetune-scope": ["scope-flip"]}
    if alt:
        name = "finetune-last-local-decayed"
        title = ("FedAlt with PFLlib FedBABU's fine-tuning (pfl.finetune_start "
                 "= last_local, pfl.finetune_lr = decayed) under -ld")
        setting = ("no preset: stateful, pfl.weights = samples, pfl.finetune = "
                   "personal, τ_v = 1 step on v, then the remaining steps on u; "
                   "lr.count = trainings, pfl.finetune_start = last_local, "
                   "pfl.finetune_lr = decayed")
        what = "v only"
    else:
        name = "fedbabu-pfllib-decay-head"
        title = ("FedBABU as PFLlib runs it (fedsim preset fedbabu_pfllib) "
                 "with a head that trains (γ_v = 0.195 given) under -ld")
        setting = ("preset fedbabu_pfllib (stateful, pfl.weights = samples, "
                   "pfl.finetune = full, lr.count = trainings, "
                   "pfl.finetune_start = last_local, pfl.finetune_lr = "
                   "decayed) with its γ_v = 0 overridden by γ_v = 0.195: "
                   "joint steps on every batch")
        what = "u and v"
    return make(
        kind, name, title,
        "ŷ = x·w + b, ½(ŷ − y)², three clients (n = 3, 2, 4), w⁰ = (0.35, "
        f"−0.15, 0.25), personal b; {setting}; lr.schedule = exponential, "
        "lr.gamma = 0.7: client i's γ_u = 0.155, γ_v = 0.195 times "
        "0.7^(rounds i trained before); S = {0, 1}, {0, 2}, {0, 2}; the "
        "server's n_i-weighted mean of the shared part; then 2 fine-tuning "
        f"minibatch steps ({what}) of each client from the model it holds "
        "after round 2 (clients 0 and 2 their trained models, client 1 the "
        "model sent at round 2's start) with η_ft = 0.185 times 0.7^(its "
        "trainings): 0.7^3, 0.7, 0.7^2 for clients 0, 1, 2.",
        S_MODEL, S_CLIENTS, S_INIT, S_SPLIT, algorithm, rounds, S_POST, flags,
        mutants, check, f"{NOTES} §3.4 ({'FedAlt' if alt else 'FedSim'}), "
                        "§4 (FedBABU); shared/spec/notes-pfllib-as-run.md §2.2 "
                        f"(-ld), §2.3; {FT_SOURCE}; {PAPER}", TOL_FEDREP)


MAKERS = {
    "fedalt": (fedalt_a_stateful, fedalt_a_stateless, fedalt_a_uniform, fedrep_d,
               lambda: spread("fedalt", "stateful", "samples", "personal"),
               lambda: spread("fedalt", "stateless", "uniform", "full"),
               lambda: spread("fedalt", "stateful", "batches", "full"),
               fedrep_drawn, fedrep_pfllib_decay,
               lambda: spread("fedalt", "stateful", "samples", "personal", tau_v=3),
               lambda: finetune_switches("fedalt")),
    "fedsim": (lambda: fedsim_a(False), lambda: fedsim_a(True), fedper_d,
               lg_fedavg_d, fedbabu_d,
               lambda: spread("fedsim", "stateful", "samples", "personal"),
               lambda: spread("fedsim", "stateless", "uniform", "full"),
               lambda: spread("fedsim", "stateful", "batches", "full"),
               lambda: fedsim_pfllib_decay("fedper_pfllib"),
               lambda: fedsim_pfllib_decay("lg_fedavg_pfllib"),
               lambda: fedsim_pfllib_decay("fedbabu_pfllib"),
               lambda: finetune_switches("fedsim")),
}


def main():
    pg.write_all(sys.argv, HERE, MAKERS["fedalt"])


if __name__ == "__main__":
    main()
