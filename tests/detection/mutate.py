#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/detection/mutate.py: the golden suite's mutation score.

Generates mutants of the NumPy candidates in docs/examples (pfl_numpy.py,
its per-algorithm modules pfl_numpy_*.py, and fedavg_numpy.py) with
Python's ast, one small edit at one site each, runs every mutant on the
golden vectors whose run executes the mutated line, and asks
`pflref check` whether the vectors tell it from the correct candidate.
A mutant runs those vectors cheapest first (by the correct candidate's
time on each), each result checked as it is written, and stops at the
first vector that tells it apart: one is enough to kill it, so the verdict
is the one the whole set gives, at a fraction of the cost.  Each mutant
runs in a fork of a worker process that has NumPy imported (run_forked),
which halves the cost of a mutant against a new interpreter for each.

Operators (a mutant is named FILE:LINE:COL:OPERATOR[detail]):
  swap-hp       a hyperparameter read or used where another of the same kind
                is meant (real-valued: η, η_p, λ, β, μ, γ_u, γ_v, ρ, α, ...;
                counts: K, τ_v, G, k; thresholds: ε₁, ε₂, γ_max), at each
                use of the local that holds it and at each read of the spec
  drop-factor   a·b → b or a; a/b → a; x *= y, x /= y dropped
  double-factor a·b → 2·a·b; a/b → a/(2b); x *= 2y, x /= 2y
  off-by-one    range(.., n) → range(.., n − 1) and range(.., n + 1);
                an explicit start likewise
  schedule      the round's clients ↔ selected / drawn, selected ignored,
                the train batches ↔ the post batches
  weighting     one aggregation weighting for another (samples, uniform,
                batches, all_keep_old; global, sampled_normalised), in a
                comparison, a default or a preset; the clients' sizes n_i
                taken as 1 (uniform); the sampled set's size ↔ all clients
  sign          + ↔ − in an expression or augmented assignment, a unary
                minus dropped
  switch        one value of a client-optimizer switch (opt.*) for another
                of its domain, in a comparison or a default
  strict        a comparison's strictness flipped: < ↔ ≤, > ↔ ≥ (each
                operator of a chained comparison on its own); a decision
                taken exactly on its threshold (golden/boundaries.py lists
                the vectors that sit there) is what tells them apart
In the layer-list module (INDEX_FILES) the index arithmetic is mutated
too: np.arange(.., n) as range, and a slice a:b inside a subscript shifted
to a±1:b±1 (off-by-one[sliceI±1], I the slice's position).

Code that only a catalogued bug runs (BUG == "..." branches) and the
input/output plumbing (argument parsing, file reading, the recorder) are
not mutated; the labels of trajectory records (round=, client=, step=)
neither.

A mutant is
  killed      when `pflref check` fails on at least one vector (exit 1
              mismatch, exit 2 a malformed result such as NaN);
  killed by crash
              when the candidate raises or times out on a vector and the
              vectors it did finish all pass (a weak kill);
  not reached when no vector executes its line (coverage of the correct
              candidate, by sys.settrace): a gap in the vectors;
  equivalent  when it is listed, with its argument, in
              tests/detection/mutation-equivalent.json;
  survived    otherwise.
score = (killed + killed by crash) / (all mutants − equivalent).

usage: mutate.py [--fast] [--jobs N] [--report FILE] [--list] [--only NAME]
                 [--op OPERATOR]
  --fast   a deterministic sample (fixed seed, --per-group mutants for each
           algorithm) for `make check`; the default is every mutant
Exits 0 when the score reaches --target (default 98%), 1 when it does
not, 2 when it cannot start (e.g. the correct candidate fails a vector).
The pflref binary is $PFLREF_CLI (default build/rel/pflref).
"""
import argparse
import ast
import concurrent.futures
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     "..", ".."))
EXAMPLES = os.path.join(ROOT, "docs", "examples")
GOLDEN = os.path.join(ROOT, "golden")
EQUIVALENT = os.path.join(ROOT, "tests", "detection", "mutation-equivalent.json")
KNOWN = os.path.join(ROOT, "tests", "detection", "mutation-survivors.json")
PY = "/usr/bin/python3"

PFL_FILES = ("pfl_numpy.py", "pfl_numpy_perfedavg.py", "pfl_numpy_apfl.py",
             "pfl_numpy_interp.py", "pfl_numpy_cfl.py", "pfl_numpy_ifca.py",
             "pfl_numpy_fedfomo.py",
             "pfl_numpy_fedbn.py", "pfl_numpy_pfedhn.py",
             "pfl_numpy_lora.py", "pfl_numpy_layers.py", "pfl_numpy_optim.py",
             "pfl_numpy_feddyn.py", "pfl_numpy_scaffold.py",
             "pfl_numpy_moon.py", "pfl_numpy_fedprox.py",
             "pfl_numpy_fedrecon.py",
             "pfl_numpy_fedamp.py",
             "pfl_numpy_fedproto.py",
             "pfl_numpy_fedrod.py",
             "pfl_numpy_apple.py",
             "pfl_numpy_fedala.py",
             "pfl_numpy_fedpac.py")
# the files whose index arithmetic (np.arange bounds, slices) is mutated:
# the convolution's and the pools' windows, the padding, the blocks
INDEX_FILES = {"pfl_numpy_layers.py"}
FEDAVG_FILE = "fedavg_numpy.py"
FILES = PFL_FILES + (FEDAVG_FILE,)

# plumbing, not algorithm: never mutated
SKIP_FUNCTIONS = {"main", "run_file", "write_json", "_load_extensions",
                  "load_clients", "load_array", "model_blocks", "parameter_count",
                  "personal_mask", "split_names", "settings", "_host", "_base",
                  "_split", "has_exact_prox", "part", "put", "__init__",
                  "__call__", "outputs_and_backward.back",
                  "expand_preset", "layout", "options", "for_run"}
SKIP_IN_FEDAVG = {"log"}     # fedavg_numpy.py: main is the algorithm

# the spec's hyperparameters by kind (a swap stays within a kind)
HP_KIND = {"K": "count", "tau_v": "count", "interp.grid": "count",
           "ifca.k": "count", "cfl.min_cluster_size": "count",
           "cfl.warmup": "count",
           "eps1": "threshold", "eps2": "threshold", "gamma_max": "threshold"}
HP_REAL = {"eta", "eta_p", "eta_ft", "mu_ft", "lambda", "pfedme.mu", "beta",
           "gamma_u", "gamma_v", "rho", "pflego.beta", "alpha", "eta_alpha",
           "delta", "gamma", "ifca.init_shift", "pfedhn.alpha_v",
           "pfedhn.outer_momentum", "pfedhn.outer_wd", "pfedhn.inner_momentum",
           "pfedhn.inner_wd", "pfedhn.clip_norm",
           "opt.momentum", "opt.dampening", "opt.weight_decay", "opt.beta1",
           "opt.beta2", "opt.eps", "opt.clip_norm"}
HP_REAL |= {"moon.mu", "moon.tau"}       # MOON (pfl_numpy_moon.py)
HP_REAL |= {"fedprox.mu"}                # FedProx (pfl_numpy_fedprox.py)
HP_REAL |= {"fedrecon.eta_r", "fedrecon.eta_u", "fedrecon.eta_s"}
HP_REAL |= {"fedproto.lambda"}           # FedProto (pfl_numpy_fedproto.py)
for _k in HP_REAL:
    HP_KIND[_k] = "real"
HP_DICTS = {"cfg", "hp"}
# parameters of helpers that carry a hyperparameter
HP_PARAMS = {"eta": "real", "eta_p": "real", "lam": "real", "mu": "real",
             "K": "count", "gamma": "real"}
BUG_NAMES = {"BUG", "bug"}
SAMPLED_SETS = {"S_t", "M", "U", "A_k", "sent"}
# each weighting switch's values (a swap stays within the switch's domain)
WEIGHT_DOMAIN = {"fedavg.weights": {"samples", "uniform", "all_keep_old"},
                 "pfedme.weights": {"samples", "uniform"},
                 "ditto.weights": {"samples", "uniform"},
                 "pfl.weights": {"samples", "uniform", "batches"},
                 "pflego.theta_weights": {"global", "sampled_normalised"},
                 "perfedavg.weights": {"samples", "uniform"},
                 "cfl.cluster_weights": {"samples", "uniform"},
                 "fedprox.sampling": {"paper", "uniform_weighted"},
                 "fedproto.weights": {"class_counts", "uniform"}}
# the client optimizers' switches (operator "switch"; the same sites as a
# weighting switch: a comparison, a default)
SWITCH_DOMAIN = {"opt.method": {"sgd", "adam", "adamw"},
                 "opt.momentum_form": {"pytorch", "classical"},
                 "opt.nesterov": {"off", "on"},
                 "opt.weight_decay_form": {"coupled", "decoupled"},
                 "opt.decay_scope": {"all", "weights", "shared", "personal"},
                 "opt.clip": {"off", "norm"},
                 "opt.state": {"reset", "client", "server"}}
WEIGHT_DOMAIN.update(SWITCH_DOMAIN)
WEIGHT_DOMAIN["fedrecon.weights"] = {"samples", "uniform", "examples"}
# FedAMP (pfl_numpy_fedamp.py): its hyperparameters and switches
HP_REAL |= {"fedamp.alpha_k", "fedamp.lambda", "fedamp.sigma"}
for _k in ("fedamp.alpha_k", "fedamp.lambda", "fedamp.sigma"):
    HP_KIND[_k] = "real"
WEIGHT_DOMAIN.update({"fedamp.peers": {"all", "previous"},
                      "fedamp.start": {"message", "own"},
                      "fedamp.prox": {"squared", "detached"}})
# APPLE (pfl_numpy_apple.py): its hyperparameters and switches
HP_REAL |= {"apple.mu"}
HP_KIND["apple.mu"] = "real"
HP_KIND["apple.L"] = "count"
WEIGHT_DOMAIN.update({"apple.scheduler": {"cosine", "exponential"},
                      "apple.prox": {"half", "full"},
                      "apple.p_init": {"samples", "uniform"},
                      "apple.order": {"joint", "core_first"},
                      "apple.p_grad": {"inner", "block_mean"},
                      "apple.core_lr": {"eta", "n_eta"},
                      "apple.lambda_round": {"current", "previous"},
                      "apple.upload": {"core", "mixture"},
                      "apple.peers": {"snapshot", "sequential"}})
# FedALA (pfl_numpy_fedala.py): its hyperparameters and switches
HP_REAL |= {"fedala.eta", "fedala.s", "fedala.threshold"}
for _k in ("fedala.eta", "fedala.s", "fedala.threshold"):
    HP_KIND[_k] = "real"
for _k in ("fedala.p", "fedala.k", "fedala.max_epochs"):
    HP_KIND[_k] = "count"
WEIGHT_DOMAIN.update({"fedala.skip": {"first_round", "sum_first"},
                      "fedala.p_unit": {"layers", "tensors"}})
# the weighting switch a local holds, by function
WEIGHT_LOCALS = {("pfl_numpy.py", "aggregate", "scheme"): "fedavg.weights",
                 ("pfl_numpy.py", "pfl_weights", "scheme"): "pfl.weights",
                 ("pfl_numpy.py", "run_pflego", "theta_weights"): "pflego.theta_weights",
                 ("pfl_numpy_perfedavg.py", "run", "weights"): "perfedavg.weights",
                 ("pfl_numpy_cfl.py", "run", "weights"): "cfl.cluster_weights",
                 ("pfl_numpy_cfl.py", "run.update", "weights"): "cfl.cluster_weights"}
# the schedule's post batches exist only for these algorithms' code
POST_FUNCS = {("pfl_numpy.py", "fedavg_rounds"), ("pfl_numpy.py", "run_partial"),
              ("pfl_numpy_perfedavg.py", "run"),
              ("pfl_numpy_fedrecon.py", "run")}
# a round's selected may differ from its clients only for pfedme
SELECTED_FUNCS = {("pfl_numpy.py", "run_pfedme")}
WEIGHT_KEYS = set(WEIGHT_DOMAIN)
# operator "strict": each ordering comparison and its flipped strictness
STRICT_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
OP_TEXT = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


# ---- the sites -------------------------------------------------------------------

def parse(name):
    with open(os.path.join(EXAMPLES, name)) as f:
        return ast.parse(f.read(), filename=name)


def bug_value(node):
    """The value of a test with no bug switched on: True, False or None
    (unknown: it does not depend on the bug alone)."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and \
            isinstance(node.left, ast.Name) and node.left.id in BUG_NAMES:
        op = node.ops[0]
        if isinstance(op, (ast.Eq, ast.In, ast.Is)):
            return False
        if isinstance(op, (ast.NotEq, ast.NotIn, ast.IsNot)):
            return True
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        v = bug_value(node.operand)
        return None if v is None else not v
    if isinstance(node, ast.BoolOp):
        vals = [bug_value(v) for v in node.values]
        if isinstance(node.op, ast.Or):
            if True in vals:
                return True
            return False if all(v is False for v in vals) else None
        if False in vals:
            return False
        return True if all(v is True for v in vals) else None
    return None


def mentions_bug(node):
    return any(isinstance(n, ast.Name) and n.id in BUG_NAMES
               for n in ast.walk(node))


def hp_key(node):
    """The hyperparameter a node reads from the spec (cfg["eta"],
    hp.get("eta_alpha", ...)), or None."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
            and node.value.id in HP_DICTS and isinstance(node.slice, ast.Constant) \
            and node.slice.value in HP_KIND:
        return node.slice.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "get" and isinstance(node.func.value, ast.Name) \
            and node.func.value.id in HP_DICTS and node.args \
            and isinstance(node.args[0], ast.Constant) \
            and node.args[0].value in HP_KIND:
        return node.args[0].value
    return None


def hp_vars(func):
    """{local name: (kind, line of its first assignment, the spec read it
    holds)} of the hyperparameters a function holds in locals (assigned
    from a spec read; a helper's parameter has line 0 and no read)."""
    out = {}
    for a in func.args.args:
        if a.arg in HP_PARAMS:
            out[a.arg] = (HP_PARAMS[a.arg], 0, None)
    for node in ast.walk(func):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        tgt, val = node.targets[0], node.value
        pairs = []
        if isinstance(tgt, ast.Tuple) and isinstance(val, ast.Tuple) \
                and len(tgt.elts) == len(val.elts):
            pairs = list(zip(tgt.elts, val.elts))
        else:
            pairs = [(tgt, val)]
        for t, v in pairs:
            if not isinstance(t, ast.Name):
                continue
            reads = [n for n in ast.walk(v) if hp_key(n) is not None]
            keys = {hp_key(n) for n in reads}
            if len(keys) == 1:
                prev = out.get(t.id)
                if prev is None or prev[1] > node.lineno:
                    out[t.id] = (HP_KIND[keys.pop()], node.lineno, reads[0])
    return out


class Site:
    __slots__ = ("file", "index", "line", "end_line", "col", "end_col", "op",
                 "detail",
                 "func", "module_key", "make")

    def name(self):
        return "%s:%d:%d:%s[%s]" % (self.file, self.line, self.col, self.op,
                                    self.detail)


def const(v):
    return ast.Constant(value=v)


def call(fn, *args):
    return ast.Call(func=ast.Name(id=fn, ctx=ast.Load()), args=list(args),
                    keywords=[])


def get_call(obj, key, default):
    return ast.Call(func=ast.Attribute(value=obj, attr="get", ctx=ast.Load()),
                    args=[const(key), default], keywords=[])


def spec_sub(*keys):
    node = ast.Name(id="spec", ctx=ast.Load())
    for k in keys:
        node = ast.Subscript(value=node, slice=const(k) if isinstance(k, str)
                             else ast.UnaryOp(op=ast.USub(), operand=const(-k))
                             if k < 0 else const(k), ctx=ast.Load())
    return node


def is_seq_literal(node):
    return isinstance(node, (ast.List, ast.Tuple, ast.ListComp, ast.Set,
                             ast.Dict, ast.JoinedStr)) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str))


class Collector(ast.NodeVisitor):
    """Walks one module and records the mutation sites in order of
    ast.walk indices (so a fresh parse finds the same node)."""

    def __init__(self, fname, tree):
        self.fname = fname
        self.index = {id(n): i for i, n in enumerate(ast.walk(tree))}
        self.sites = []
        self.stack = []          # enclosing functions
        self.hp = [{}]           # hyperparameter locals in scope
        self.params = [set()]
        self.no_mutate = 0       # inside a skipped region
        self.top_dict = None     # the module-level dict being visited
        self.in_sorted = set()   # nodes whose order does not matter

    # -- helpers --
    def add(self, node, op, detail, make, anchor=None):
        if self.no_mutate:
            return
        s = Site()
        s.file, s.index = self.fname, self.index[id(node)]
        a = anchor or node
        s.line, s.end_line, s.col = a.lineno, a.end_lineno, a.col_offset
        s.end_col = a.end_col_offset
        s.op, s.detail, s.make = op, detail, make
        s.func = ".".join(f.name for f in self.stack) or "<module>"
        s.module_key = self.top_dict
        self.sites.append(s)

    def in_scope(self, name):
        return any(name in p for p in self.params) or any(
            name in h for h in self.hp)

    def skipped(self, func):
        qual = ".".join([f.name for f in self.stack] + [func.name])
        if self.fname == FEDAVG_FILE:
            return func.name in SKIP_IN_FEDAVG
        return func.name in SKIP_FUNCTIONS or qual in SKIP_FUNCTIONS

    # -- scopes --
    def visit_FunctionDef(self, node):
        skip = self.skipped(node)
        self.no_mutate += skip
        h = dict(self.hp[-1])
        h.update(hp_vars(node))
        self.hp.append(h)
        self.params.append(self.params[-1] | {a.arg for a in node.args.args})
        self.stack.append(node)
        for stmt in node.body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue                                   # docstring
            self.visit(stmt)
        self.stack.pop()
        self.params.pop()
        self.hp.pop()
        self.no_mutate -= skip

    def visit_ClassDef(self, node):
        for stmt in node.body:
            self.visit(stmt)

    def visit_Module(self, node):
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
                self.visit(stmt)
            elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Dict) \
                    and isinstance(stmt.targets[0], ast.Name) \
                    and stmt.targets[0].id in ("DEFAULTS", "PRESETS"):
                self.module_dict(stmt.targets[0].id, stmt.value, None)
            elif isinstance(stmt, ast.If):
                continue                       # if __name__ == "__main__"

    def module_dict(self, dname, d, preset):
        """Weighting values in DEFAULTS and PRESETS (module level)."""
        for k, v in zip(d.keys, d.values):
            if isinstance(v, ast.Dict):        # PRESETS[(alg, preset)] = {...}
                pk = ast.literal_eval(k) if k is not None else None
                self.module_dict(dname, v, pk)
            elif isinstance(k, ast.Constant) and k.value in WEIGHT_KEYS \
                    and isinstance(v, ast.Constant):
                self.top_dict = (dname, preset, k.value)
                self.weight_const(v, k.value)
                self.top_dict = None

    # -- skipped regions --
    def visit_If(self, node):
        self.branches(node, node.test, node.body, node.orelse)

    def visit_IfExp(self, node):
        self.branches(node, node.test, [node.body], [node.orelse])

    def branches(self, node, test, body, orelse):
        v = bug_value(test)
        if not mentions_bug(test):
            self.visit(test)
        for part, dead in ((body, v is False), (orelse, v is True)):
            self.no_mutate += dead
            for n in part:
                self.visit(n)
            self.no_mutate -= dead

    def visit_Raise(self, node):
        pass

    def visit_Assert(self, node):
        pass

    def visit_Call(self, node):
        f = node.func
        fname = f.id if isinstance(f, ast.Name) else \
            f.attr if isinstance(f, ast.Attribute) else None
        if fname in ("Unsupported", "print") or (
                isinstance(f, ast.Attribute) and f.attr == "Unsupported"):
            return
        if fname == "log":                     # only the value is mutated
            for a in node.args:
                self.visit(a)
            return
        if fname in ("sorted", "set") and node.args:
            self.in_sorted.add(id(node.args[0]))
        if fname == "range" or (fname == "arange" and self.fname in INDEX_FILES):
            self.range_site(node)
        if fname == "len" and len(node.args) == 1 and isinstance(node.args[0], ast.Name):
            self.count_site(node)
        if fname == "get" and isinstance(f, ast.Attribute):
            self.get_site(node)
        k = hp_key(node)
        if k is not None:
            self.hp_read(node, k)
        self.generic_visit(node)

    # -- the operators --
    def visit_Name(self, node):
        """x → y for the hyperparameter locals x, y of one kind; where y is
        not yet assigned at this use, y's own read of the spec (cfg["y"])."""
        if not isinstance(node.ctx, ast.Load):
            return
        h = self.hp[-1]
        if node.id not in h:
            return
        kind = h[node.id][0]
        for other in sorted(h):
            okind, line, read = h[other]
            if other == node.id or okind != kind or line == node.lineno:
                continue
            if line < node.lineno or read is None:
                make = (lambda n, o=other: ast.Name(id=o, ctx=ast.Load()))
            else:
                make = (lambda n, r=read: copy.deepcopy(r))
            self.add(node, "swap-hp", "%s->%s" % (node.id, other), make)

    def hp_read(self, node, key):
        """cfg["eta"] → cfg["eta_p"]: keys of the same kind read in the
        same function."""
        func = self.stack[-1] if self.stack else None
        if func is None:
            return
        keys = sorted({hp_key(n) for n in ast.walk(func)} - {None, key})
        for other in keys:
            if HP_KIND[other] != HP_KIND[key]:
                continue

            def make(n, o=other):
                n = copy.deepcopy(n)
                if isinstance(n, ast.Subscript):
                    n.slice = const(o)
                else:
                    n.args[0] = const(o)
                return n
            self.add(node, "swap-hp", "%s->%s" % (key, other), make)

    def visit_Subscript(self, node):
        key = node.slice.value if isinstance(node.slice, ast.Constant) else None
        if hp_key(node) is not None:
            self.hp_read(node, node.slice.value)
        top = (self.fname, self.stack[0].name if self.stack else "")
        v = node.value
        problem = isinstance(v, ast.Subscript) and isinstance(v.slice, ast.Constant) \
            and v.slice.value == "problem"
        if key == "clients" and isinstance(node.ctx, ast.Load) and not problem:
            alts = ["selected"] if top in SELECTED_FUNCS else []
            if id(node) not in self.in_sorted:      # drawn: the same set
                alts.append("drawn")
            for alt in alts:
                self.add(node, "schedule", "clients->%s" % alt,
                         lambda n, a=alt: get_call(copy.deepcopy(n.value), a,
                                                   copy.deepcopy(n)))
        if key == "batches" and isinstance(node.ctx, ast.Load) \
                and self.in_scope("spec") and top in POST_FUNCS:
            self.add(node, "schedule", "batches->post",
                     lambda n: ast.Call(
                         func=ast.Attribute(value=spec_sub("schedule"),
                                            attr="get", ctx=ast.Load()),
                         args=[const("post"), copy.deepcopy(n)], keywords=[]))
        if key == "post" and isinstance(node.ctx, ast.Load):
            self.add(node, "schedule", "post->last-round-batches",
                     lambda n: spec_sub("schedule", "rounds", -1, "batches"))
        if self.fname in INDEX_FILES:
            self.slice_sites(node)
        self.visit(node.value)
        if not isinstance(node.slice, ast.Constant):
            self.no_mutate += 1                # index arithmetic: not mutated
            self.visit(node.slice)
            self.no_mutate -= 1

    def slice_sites(self, node):
        """x[.., a:b, ..] → x[.., a±1:b±1, ..]: a window, the padding's
        offset or a block's bounds one entry off."""
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) \
            else [node.slice]
        for i, sl in enumerate(parts):
            if not isinstance(sl, ast.Slice) or sl.lower is None or \
                    sl.upper is None or sl.step is not None:
                continue
            for delta in (-1, 1):
                def make(n, i=i, delta=delta):
                    n = copy.deepcopy(n)
                    part = n.slice.elts[i] if isinstance(n.slice, ast.Tuple) \
                        else n.slice
                    op = ast.Sub if delta < 0 else ast.Add
                    part.lower = ast.BinOp(left=part.lower, op=op(),
                                           right=const(1))
                    part.upper = ast.BinOp(left=part.upper, op=op(),
                                           right=const(1))
                    return n
                self.add(node, "off-by-one", "slice%d%+d" % (i, delta), make)

    def get_site(self, node):
        """rnd.get("selected", rnd["clients"]): selected ignored, or drawn;
        spec["schedule"].get("post"): the last round's batches; a
        weighting default (sw.get("cfl.cluster_weights", "uniform"))."""
        if not node.args or not isinstance(node.args[0], ast.Constant):
            return
        key = node.args[0].value
        if key == "selected" and len(node.args) == 2 and \
                (self.fname, self.stack[0].name) in SELECTED_FUNCS:
            self.add(node, "schedule", "selected-ignored",
                     lambda n: copy.deepcopy(n.args[1]))
            self.add(node, "schedule", "selected->drawn",
                     lambda n: get_call(copy.deepcopy(n.func.value), "drawn",
                                        copy.deepcopy(n.args[1])))
        if key == "post":
            self.add(node, "schedule", "post->last-round-batches",
                     lambda n: spec_sub("schedule", "rounds", -1, "batches"))
        if key in WEIGHT_KEYS and len(node.args) == 2 and \
                isinstance(node.args[1], ast.Constant):
            self.weight_const(node.args[1], key)

    def visit_Compare(self, node):
        self.strict_sites(node)
        sides = [node.left] + node.comparators
        key = None
        for c in sides:
            if isinstance(c, ast.Subscript) and isinstance(c.slice, ast.Constant) \
                    and c.slice.value in WEIGHT_DOMAIN:
                key = c.slice.value
            if isinstance(c, ast.Name):
                key = WEIGHT_LOCALS.get((self.fname, self.qual(), c.id), key)
        for c in sides:
            if isinstance(c, ast.Constant) and key is not None:
                self.weight_const(c, key)
        self.generic_visit(node)

    def strict_sites(self, node):
        """a < b → a <= b, a <= b → a < b, a > b → a >= b, a >= b → a > b:
        the decision at the boundary a = b flipped."""
        for k, op in enumerate(node.ops):
            flip = STRICT_FLIP.get(type(op))
            if flip is None:
                continue

            def make(n, k=k, flip=flip):
                n = copy.deepcopy(n)
                n.ops[k] = flip()
                return n
            self.add(node, "strict", "%s->%s%s" % (
                OP_TEXT[type(op)], OP_TEXT[flip],
                "" if len(node.ops) == 1 else "@%d" % k), make)

    def qual(self):
        return ".".join(f.name for f in self.stack)

    def visit_Dict(self, node):
        for k, v in zip(node.keys, node.values):
            if isinstance(k, ast.Constant) and k.value in WEIGHT_KEYS \
                    and isinstance(v, ast.Constant):
                self.weight_const(v, k.value)
        self.generic_visit(node)

    def weight_const(self, node, key):
        if not isinstance(node.value, str):
            return
        ws = WEIGHT_DOMAIN.get(key, set())
        if node.value in ws:
            op = "switch" if key in SWITCH_DOMAIN else "weighting"
            for alt in sorted(ws - {node.value}):
                self.add(node, op, "%s->%s" % (node.value, alt),
                         lambda n, a=alt: const(a))

    def visit_Attribute(self, node):
        v = node.value
        if node.attr == "n" and isinstance(node.ctx, ast.Load) and (
                (isinstance(v, ast.Name) and v.id == "c") or
                (isinstance(v, ast.Subscript) and isinstance(v.value, ast.Name)
                 and v.value.id == "clients")):
            self.add(node, "weighting", "n_i->1", lambda n: const(1))
        self.generic_visit(node)

    def count_site(self, node):
        arg = node.args[0].id
        if arg in SAMPLED_SETS and self.in_scope("clients"):
            self.add(node, "weighting", "len(%s)->len(clients)" % arg,
                     lambda n: call("len", ast.Name(id="clients", ctx=ast.Load())))

    def assigned(self, name):
        return self.stack and any(
            isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
            for n in ast.walk(self.stack[-1]))

    def range_site(self, node):
        args = node.args
        if not args or len(args) > 2:
            return
        slots = [("stop", len(args) - 1)]
        if len(args) == 2:
            slots.append(("start", 0))
        for label, pos in slots:
            for delta, sym in ((-1, "-1"), (1, "+1")):
                def make(n, pos=pos, delta=delta):
                    n = copy.deepcopy(n)
                    n.args[pos] = ast.BinOp(left=n.args[pos],
                                            op=ast.Sub() if delta < 0 else ast.Add(),
                                            right=const(1))
                    return n
                self.add(node, "off-by-one", label + sym, make)
        # the bounds themselves are not mutated further (no sign flips)
        self.no_mutate += 1
        for a in args:
            self.visit(a)
        self.no_mutate -= 1
        node.args = []              # generic_visit below must not revisit
        self._restore = args

    def visit_BinOp(self, node):
        op = node.op
        lit = is_seq_literal(node.left) or is_seq_literal(node.right)
        both_const = isinstance(node.left, ast.Constant) and \
            isinstance(node.right, ast.Constant)
        if isinstance(op, ast.Mult) and not lit and not both_const:
            self.add(node, "drop-factor", "left", lambda n: copy.deepcopy(n.right))
            self.add(node, "drop-factor", "right", lambda n: copy.deepcopy(n.left))
            self.add(node, "double-factor", "x2",
                     lambda n: ast.BinOp(left=const(2.0), op=ast.Mult(),
                                         right=copy.deepcopy(n)))
        if isinstance(op, ast.Div) and not lit and not both_const:
            self.add(node, "drop-factor", "divisor", lambda n: copy.deepcopy(n.left))
            self.add(node, "double-factor", "divisor-x2",
                     lambda n: ast.BinOp(left=copy.deepcopy(n.left), op=ast.Div(),
                                         right=ast.BinOp(left=const(2.0), op=ast.Mult(),
                                                         right=copy.deepcopy(n.right))))
        if isinstance(op, (ast.Add, ast.Sub)) and not lit:
            new = ast.Sub if isinstance(op, ast.Add) else ast.Add
            self.add(node, "sign", "+->-" if isinstance(op, ast.Add) else "-->+",
                     lambda n, new=new: ast.BinOp(left=copy.deepcopy(n.left),
                                                  op=new(), right=copy.deepcopy(n.right)))
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
        if isinstance(node.op, ast.USub) and not isinstance(node.operand, ast.Constant):
            self.add(node, "sign", "unary-minus-dropped",
                     lambda n: copy.deepcopy(n.operand))
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        op, lit = node.op, is_seq_literal(node.value)
        if isinstance(op, (ast.Mult, ast.Div)) and not lit:
            self.add(node, "drop-factor", "aug", lambda n: ast.Pass())
            self.add(node, "double-factor", "aug-x2",
                     lambda n: ast.AugAssign(target=copy.deepcopy(n.target), op=n.op,
                                             value=ast.BinOp(left=const(2.0), op=ast.Mult(),
                                                             right=copy.deepcopy(n.value))))
        if isinstance(op, (ast.Add, ast.Sub)) and not lit:
            new = ast.Sub if isinstance(op, ast.Add) else ast.Add
            self.add(node, "sign", "+=->-=" if isinstance(op, ast.Add) else "-=->+=",
                     lambda n, new=new: ast.AugAssign(target=copy.deepcopy(n.target),
                                                      op=new(), value=copy.deepcopy(n.value)))
        self.visit(node.value)


def collect(fname):
    tree = parse(fname)
    c = Collector(fname, tree)
    c.visit(tree)
    seen = {}
    for s in c.sites:                    # one name per mutant
        base = s.name()
        seen[base] = seen.get(base, 0) + 1
        if seen[base] > 1:
            s.detail += "#%d" % seen[base]
    return c.sites


def apply(site):
    """The mutated source of site's file."""
    tree = parse(site.file)
    nodes = list(ast.walk(tree))
    target = nodes[site.index]
    new = site.make(target)
    for parent in nodes:
        for field, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, field, new)
                break
            if isinstance(value, list) and any(v is target for v in value):
                value[[i for i, v in enumerate(value) if v is target][0]] = new
                break
        else:
            continue
        break
    ast.fix_missing_locations(tree)
    return ast.unparse(tree) + "\n"


# ---- running a candidate (the worker: mutate.py --run DIR OUT KIND VEC...) --------

def run_candidate(src_dir, out_dir, kind, vectors, trace_file=None, pflref=None):
    """Runs the candidate in src_dir on each vector through its normal entry
    point (pfl_numpy.run_file, fedavg_numpy.main), writes the results and
    status.json {vector: "ok" | "unsupported" | "crash: ..."} and
    times.json {vector: seconds}.  With pflref (a mutant's run), each result
    is checked against its vector as soon as it is written, and the run
    stops at the first vector that tells the mutant apart: its status is
    "mismatch: LINE" (check's exit 1) or "malformed: LINE" (exit 2), and
    the vectors after it are not run (they could only add kills)."""
    import resource
    import signal
    import warnings
    warnings.simplefilter("ignore")
    limit = 2 << 30                        # a runaway mutant stops at 2 GiB
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    sys.path.insert(0, src_dir)
    sys.dont_write_bytecode = True
    os.makedirs(out_dir, exist_ok=True)
    cov = {}
    positions = {}
    files = {os.path.join(src_dir, f): f for f in FILES}

    def tracer(frame, event, arg):
        """Records every executed instruction of the candidate's files
        (opcode events), so a site is reached only when an instruction of
        its own expression ran (a branch of x if c else y on a line that
        ran is not enough)."""
        f = files.get(frame.f_code.co_filename)
        if f is None:
            return None
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False

        def local(frame, event, arg):
            if event == "opcode":
                cur.setdefault(f, set()).add((frame.f_code, frame.f_lasti))
            return local
        return local

    def alarm(signum, frame):
        raise TimeoutError("timed out")
    signal.signal(signal.SIGALRM, alarm)
    status = {}
    times = {}
    if kind == "pfl":
        import numpy as np
        np.seterr(all="ignore")
        mod = __import__("pfl_numpy")
    else:
        mod = __import__("fedavg_numpy")
    for i, vec in enumerate(vectors):
        out = os.path.join(out_dir, "r%03d.json" % i)
        cur = {}
        t_vec = time.time()
        # a mutant that loops stops at 20 s; the correct candidates' traced
        # run (coverage, several times slower) only guards against a hang,
        # so that a loaded machine cannot fail the base run
        signal.alarm(300 if trace_file else 20)
        try:
            if trace_file:
                sys.settrace(tracer)
            if kind == "pfl":
                mod.write_json(mod.run_file(vec), out)
            else:
                mod.main(vec, out)
            status[vec] = "ok"
        except Exception as e:             # noqa: a mutant may raise anything
            unsupported = (kind == "pfl" and isinstance(e, mod.Unsupported)) or \
                (kind == "fedavg" and isinstance(e, AssertionError))
            status[vec] = "unsupported" if unsupported else \
                "crash: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:80]
                                   if str(e) else "")
            if os.path.exists(out):
                os.remove(out)
        finally:
            sys.settrace(None)
            signal.alarm(0)
        times[vec] = time.time() - t_vec
        if pflref and status[vec] == "ok":
            rc, first = check(pflref, out, vec)
            if rc in (1, 2):
                status[vec] = ("mismatch: " if rc == 1 else "malformed: ") + first
                break
        spans = {}
        for f, seen in cur.items():
            out_f = spans.setdefault(f, set())
            for code, lasti in seen:
                pos = positions.get(code)
                if pos is None:
                    pos = positions[code] = list(code.co_positions())
                p = pos[lasti // 2] if lasti // 2 < len(pos) else None
                if p is not None and None not in p:
                    out_f.add(p)
        cov[vec] = {f: sorted(ps) for f, ps in spans.items()}
    with open(out_dir.rstrip("/") + ".status.json", "w") as f:
        json.dump(status, f)
    with open(out_dir.rstrip("/") + ".times.json", "w") as f:
        json.dump(times, f)
    if trace_file:
        with open(trace_file, "w") as f:
            json.dump(cov, f)


# ---- the driver ---------------------------------------------------------------------

def golden_vectors():
    out = []
    for root, dirs, files in os.walk(GOLDEN):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".json"):
                continue
            path = os.path.join(root, name)
            try:
                with open(path) as f:
                    doc = json.load(f)
            except ValueError:
                continue
            if isinstance(doc, dict) and doc.get("format") == "pflref-golden/1":
                out.append((path, doc["spec"]))
    return out


def check(pflref, out, expected=GOLDEN):
    """pflref check of a result folder against the golden folder, or of one
    result file against its vector: (exit status, first failing line)."""
    p = subprocess.run([pflref, "check", expected, out], capture_output=True,
                       text=True)
    first = ""
    for line in p.stdout.splitlines():
        if line.startswith("FAIL") or "malformed" in line.lower():
            first = line
            break
    if not first:
        lines = [l for l in (p.stdout + p.stderr).splitlines() if l.strip()]
        first = lines[0] if lines else ""
    return p.returncode, first


def run_set(kind, src_dir, vectors, pflref, work, trace=False, early=False):
    """Runs one candidate tree on vectors in a subprocess, then check: of
    the whole folder, or (early) of each result as it is written, up to the
    first that fails."""
    out = os.path.join(work, "out")
    cmd = [PY, os.path.abspath(__file__)]
    if trace:
        cmd += ["--trace", os.path.join(work, "trace.json")]
    if early:
        cmd += ["--early", pflref]
    cmd += ["--run", src_dir, out, kind]
    try:
        subprocess.run(cmd + vectors, capture_output=True,
                       timeout=3600 if trace else 120,
                       check=True, env=dict(os.environ, OPENBLAS_NUM_THREADS="1",
                                            OMP_NUM_THREADS="1"))
    except subprocess.TimeoutExpired:
        return {v: "crash: timeout" for v in vectors}, 0, "", None
    except subprocess.CalledProcessError as e:
        msg = (e.stderr.decode(errors="replace").strip().splitlines() or [""])[-1]
        return {v: "crash: " + msg[:80] for v in vectors}, 0, "", None
    return read_status(out, pflref, trace, early, work)


def read_status(out, pflref, trace, early, work):
    """run_set's verdict from the status file a candidate run left."""
    with open(out + ".status.json") as f:
        status = json.load(f)
    told = [m for m in status.values() if m.startswith(("mismatch: ", "malformed: "))]
    if early:
        rc, first = (0, "") if not told else \
            (1 if told[0].startswith("mismatch: ") else 2, told[0].split(": ", 1)[1])
        status = {v: m for v, m in status.items() if m not in told}
    else:
        rc, first = (0, "") if not any(s == "ok" for s in status.values()) \
            else check(pflref, out)
    cov = None
    if trace:
        with open(os.path.join(work, "trace.json")) as f:
            cov = json.load(f)
    return status, rc, first, cov


def run_forked(kind, src_dir, vectors, pflref, work):
    """run_set(kind, src_dir, vectors, pflref, work, early=True) in a fork
    of this process instead of a new interpreter: the fork starts with
    NumPy already imported (mutant_worker), so a mutant costs its own
    module's import and its vectors, not an interpreter's start.  The fork
    imports the candidate from src_dir afresh (no candidate module is ever
    imported here), runs under the same limits as the subprocess (2 GiB,
    20 s a vector, 120 s in all) and leaves the same status file."""
    out = os.path.join(work, "out")
    err = os.path.join(work, "stderr")
    pid = os.fork()
    if pid == 0:                                     # the mutant's process
        code = 1
        try:
            fd = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(fd, 2)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            run_candidate(src_dir, out, kind, vectors, pflref=pflref)
            code = 0
        except BaseException:                        # noqa: report, then exit
            import traceback
            traceback.print_exc()
        finally:
            sys.stderr.flush()
            os._exit(code)
    deadline = time.time() + 120
    while True:
        done, code = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.time() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return {v: "crash: timeout" for v in vectors}, 0, "", None
        time.sleep(0.002)
    if not os.WIFEXITED(code) or os.WEXITSTATUS(code) != 0:
        with open(err, errors="replace") as f:
            msg = (f.read().strip().splitlines() or [""])[-1]
        return {v: "crash: " + msg[:80] for v in vectors}, 0, "", None
    return read_status(out, pflref, False, True, work)


# mutant_worker's state: set before the pool forks its workers, so each
# worker inherits it (the plan holds closures, which cannot be pickled)
_WORKER = {}


def mutant_worker(i):
    """The verdict of the plan's mutant i (a pool worker's task)."""
    return _WORKER["one"](_WORKER["plan"][i])


def pfl_presets():
    """pfl_numpy.py's PRESETS, read from its source."""
    for stmt in parse("pfl_numpy.py").body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name) \
                and stmt.targets[0].id == "PRESETS":
            return ast.literal_eval(stmt.value)
    return {}


def module_dict_vectors(site, specs, by_kind):
    """The vectors for which a DEFAULTS / PRESETS weighting entry is the
    value in force (the vector neither sets it nor takes a preset that
    does)."""
    dname, preset, key = site.module_key
    readers = {"fedavg.weights": ("fedavg", "finetune", "interp"),
               "pfedme.weights": ("pfedme",), "ditto.weights": ("ditto",),
               "pfl.weights": ("fedalt", "fedsim"),
               "pflego.theta_weights": ("pflego",),
               "perfedavg.weights": ("perfedavg",)}.get(key, ())
    if key in SWITCH_DOMAIN:                 # pfl_numpy_optim.TAKES
        readers = ("fedavg", "local", "finetune")
    presets = pfl_presets()
    out = []
    for v in by_kind:
        alg = specs[v]["algorithm"]
        name, pre = alg["name"], alg.get("preset", "paper")
        if name not in readers or key in alg.get("switches", {}):
            continue
        if dname == "PRESETS" and preset != (name, pre):
            continue
        if dname == "DEFAULTS" and site.file == "pfl_numpy.py" and \
                key in presets.get((name, pre), {}):
            continue
        out.append(v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--trace", help=argparse.SUPPRESS)
    ap.add_argument("--early", help=argparse.SUPPRESS)
    ap.add_argument("--fast", action="store_true",
                    help="a deterministic sample of the mutants")
    ap.add_argument("--per-group", type=int, default=8,
                    help="mutants per algorithm with --fast (default 8)")
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--target", type=float, default=98.0)
    ap.add_argument("--report", default=os.path.join(ROOT, "build",
                                                     "mutation-report.txt"))
    ap.add_argument("--allow-known", action="store_true",
                    help="below the target, pass when every survivor is a known "
                    "one (listed with its reason in mutation-survivors.json)")
    ap.add_argument("--list", action="store_true", help="list the mutants")
    ap.add_argument("--only", action="append", default=[],
                    help="run only the mutants whose name starts with this")
    ap.add_argument("--op", action="append", default=[],
                    help="run only the mutants of this operator (e.g. strict)")
    ap.add_argument("--show", help="print the mutated source's diff for a mutant")
    args = ap.parse_args()
    if os.path.realpath(sys.executable) != os.path.realpath(PY) and not args.run:
        # the mutants' processes are forks of this one, which must be the
        # interpreter that has the candidates' NumPy (Debian's)
        os.execv(PY, [PY, os.path.abspath(__file__)] + sys.argv[1:])
    if args.run:
        run_candidate(args.run[0], args.run[1], args.run[2], args.run[3:],
                      args.trace, args.early)
        return 0

    sites = [s for f in FILES for s in collect(f)]
    if args.list:
        for s in sites:
            print(s.name())
        print("%d mutants" % len(sites), file=sys.stderr)
        return 0
    if args.show:
        import difflib
        for s in sites:
            if s.name() == args.show:
                orig = ast.unparse(parse(s.file)).splitlines()
                print("\n".join(difflib.unified_diff(orig, apply(s).splitlines(),
                                                     lineterm="", n=1)))
                return 0
        print("no mutant %s" % args.show, file=sys.stderr)
        return 2

    pflref = os.environ.get("PFLREF_CLI") or os.path.join(ROOT, "build", "rel", "pflref")
    pflref = os.path.abspath(pflref)
    if not os.access(pflref, os.X_OK):
        print("mutate.py: no pflref binary at %s (make build/rel/pflref, or set "
              "PFLREF_CLI)" % pflref, file=sys.stderr)
        return 2
    t0 = time.time()
    work = tempfile.mkdtemp(prefix="pflref-mutate-")
    try:
        return drive(args, sites, pflref, work, t0)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def drive(args, sites, pflref, work, t0):
    specs = {}
    for path, spec in golden_vectors():
        specs[path] = spec
    # the correct candidates: every vector they support passes, and their
    # coverage tells which vectors reach which line
    base = {}
    cost = {}                  # vector: the correct candidate's seconds on it

    def traced(kind):
        w = os.path.join(work, "base-" + kind)
        os.makedirs(w)
        vecs = sorted(v for v in specs if kind == "pfl" or
                      specs[v]["algorithm"]["name"] == "fedavg")
        return w, run_set(kind, EXAMPLES, vecs, pflref, w, trace=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        based = list(ex.map(traced, ("pfl", "fedavg")))
    for kind, (w, (status, rc, first, cov)) in zip(("pfl", "fedavg"), based):
        bad = [v for v, s in status.items() if s.startswith("crash")]
        if rc != 0 or bad:
            print("mutate.py: the correct %s candidate does not pass: %s %s"
                  % (kind, first, bad[:3]), file=sys.stderr)
            return 2
        ok = [v for v, s in status.items() if s == "ok"]
        base[kind] = (ok, cov)
        with open(os.path.join(w, "out.times.json")) as f:
            cost.update(json.load(f))

    equivalent = {}
    if os.path.exists(EQUIVALENT):
        with open(EQUIVALENT) as f:
            for e in json.load(f):
                equivalent[e["mutant"]] = e["reason"]

    known = {}
    if os.path.exists(KNOWN):
        with open(KNOWN) as f:
            for e in json.load(f):
                known[e["mutant"]] = e["reason"]
    names = {s.name() for s in sites}
    stale = sorted((set(equivalent) | set(known)) - names)

    def kind_of(s):
        return "fedavg" if s.file == FEDAVG_FILE else "pfl"

    def reached(s):
        ok, cov = base[kind_of(s)]
        if s.module_key is not None:
            return module_dict_vectors(s, specs, ok)
        lo, hi = (s.line, s.col), (s.end_line, s.end_col)
        return [v for v in ok if any(
            (p[0], p[2]) >= lo and (p[1], p[3]) <= hi
            for p in cov.get(v, {}).get(s.file, ()))]

    def alg_of(v):
        return specs[v]["algorithm"]["name"]

    # A mutant runs its vectors cheapest first and stops at the first that
    # tells it apart (run_set's early check): the verdict is the one the
    # whole set would give, since one failing vector kills.
    plan = []
    for s in sites:
        vecs = sorted(reached(s), key=lambda v: (cost.get(v, 0.0), v))
        s_group = sorted({alg_of(v) for v in vecs})[0] if vecs else "-"
        plan.append((s, vecs, s_group))
    if args.only:
        plan = [p for p in plan if any(p[0].name().startswith(o) for o in args.only)]
    if args.op:
        plan = [p for p in plan if p[0].op in args.op]
    if args.fast:
        rng = random.Random(args.seed)
        groups = {}
        for p in plan:
            if p[0].name() not in equivalent:
                groups.setdefault(p[2], []).append(p)
        plan = []
        for g in sorted(groups):
            members = groups[g]
            plan += rng.sample(members, min(args.per_group, len(members))) \
                if len(members) > args.per_group else members

    # The unmutated files compiled once: a mutant's fork imports every
    # module of the candidate, and compiling them all again took about
    # 65 ms of processor time a mutant (15 ms from the bytecode).  The
    # bytecode is validated by the source's hash, never its time stamp, so
    # a mutated file of the same size written within the same second is
    # still compiled from itself.
    base_src = os.path.join(work, "base-src")
    os.makedirs(base_src)
    for f in FILES:
        shutil.copy(os.path.join(EXAMPLES, f), base_src)
    import compileall
    import py_compile
    if not compileall.compile_dir(
            base_src, quiet=1,
            invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH):
        print("mutate.py: the candidate does not compile", file=sys.stderr)
        return 2

    results = {}

    def one(item):
        s, vecs, group = item
        name = s.name()
        if name in equivalent:
            return name, "equivalent", equivalent[name], vecs
        if not vecs:
            return name, "not reached", "no vector executes line %d" % s.line, vecs
        d = tempfile.mkdtemp(dir=work)
        src = os.path.join(d, "src")
        os.makedirs(src)
        for f in FILES:
            shutil.copy(os.path.join(base_src, f), src)
        # the compiled modules, shared read-only: each pyc is checked
        # against its source's hash, so the mutated file compiles afresh
        os.symlink(os.path.join(base_src, "__pycache__"),
                   os.path.join(src, "__pycache__"))
        try:
            with open(os.path.join(src, s.file), "w") as f:
                f.write(apply(s))
            status, rc, first, _ = run_forked(kind_of(s), src, vecs, pflref, d)
        finally:
            shutil.rmtree(d, ignore_errors=True)
        crashes = {v: m for v, m in status.items() if m != "ok"}
        if rc == 1:
            return name, "killed", first, vecs
        if rc == 2:
            return name, "killed", "malformed result: " + first, vecs
        if crashes:
            v, m = sorted(crashes.items())[0]
            return name, "killed by crash", "%s on %s" % (m, os.path.relpath(v, ROOT)), vecs
        return name, "survived", "", vecs

    # args.jobs workers forked from this process once NumPy is imported
    # (OPENBLAS_NUM_THREADS=1 first, as the subprocesses have it), each
    # forking again for each mutant (run_forked)
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = "1"
    import multiprocessing
    __import__("numpy")                              # preloaded for the forks
    _WORKER.update(one=one, plan=plan)
    with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
        for name, verdict, why, vecs in pool.imap(mutant_worker, range(len(plan))):
            results[name] = (verdict, why, vecs)
    elapsed = time.time() - t0
    return report(args, plan, results, stale, elapsed, specs, known)


def report(args, plan, results, stale, elapsed, specs, known):
    count = {}
    for verdict, _, _ in results.values():
        count[verdict] = count.get(verdict, 0) + 1
    total = len(results)
    eq = count.get("equivalent", 0)
    killed = count.get("killed", 0)
    crash = count.get("killed by crash", 0)
    nonequiv = total - eq
    score = 100.0 * (killed + crash) / nonequiv if nonequiv else 100.0
    ops = {}
    for s, _, _ in plan:
        v = results[s.name()][0]
        o = ops.setdefault(s.op, {})
        o[v] = o.get(v, 0) + 1
    summary = ("mutation%s: %.2f%% (%d/%d non-equivalent mutants killed: %d by "
               "check, %d by crash; %d survived, %d not reached; %d argued "
               "equivalent; %d mutants in all; %.0f s)"
               % (" (fast subset)" if args.fast else "", score, killed + crash,
                  nonequiv, killed, crash, count.get("survived", 0),
                  count.get("not reached", 0), eq, total, elapsed))
    lines = [summary, "", "by operator:"]
    for op in sorted(ops):
        lines.append("  %-14s %s" % (op, ", ".join(
            "%s %d" % (k, v) for k, v in sorted(ops[op].items()))))
    survivors = [(n, v, w) for n, (v, w, _) in sorted(results.items())
                 if v in ("survived", "not reached")]
    lines += ["", "survivors (%d):" % len(survivors)]
    for n, v, w in survivors:
        vecs = results[n][2]
        lines.append("  %s  %s%s" % (n, v, (": " + w) if w else
                                     " on %d vectors (%s)" % (
                                         len(vecs), ", ".join(sorted(
                                             {specs[x]["algorithm"]["name"] for x in vecs})))))
        lines.append("      why: %s" % known.get(n, "not yet explained"))
    lines += ["", "equivalent (argued in %s):" % os.path.relpath(EQUIVALENT, ROOT)]
    for n, (v, w, _) in sorted(results.items()):
        if v == "equivalent":
            lines.append("  %s: %s" % (n, w))
    if stale:
        lines += ["", "stale entries of the equivalence list (no such mutant):"]
        lines += ["  " + s for s in stale]
    lines += ["", "every mutant:"]
    for n, (v, w, vecs) in sorted(results.items()):
        lines.append("  %-16s %s  [%d vectors]%s" % (v, n, len(vecs),
                                                    ("  " + w) if w else ""))
    os.makedirs(os.path.dirname(args.report), exist_ok=True)
    with open(args.report, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(summary)
    for n, v, w in survivors:
        why = known.get(n, "NOT YET EXPLAINED")
        print("  survivor %s (%s): %s" % (n, v, why if len(why) < 90 else why[:87] + "..."))
    if stale:
        print("  stale entries (no such mutant): %s" % ", ".join(stale))
    unexplained = [n for n, _, _ in survivors if n not in known]
    print("mutation: score %.2f%% %s target %.0f%%; report in %s"
          % (score, ">=" if score >= args.target else "<", args.target,
             os.path.relpath(args.report, ROOT)))
    ok = score >= args.target and not stale
    if not ok and args.allow_known and not stale and not unexplained:
        print("mutation: below the target, but every survivor is a known gap "
              "of the vectors, listed with its reason in %s" % os.path.relpath(KNOWN, ROOT))
        ok = True
    elif unexplained:
        print("mutation: %d survivors not explained in %s"
              % (len(unexplained), os.path.relpath(KNOWN, ROOT)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
