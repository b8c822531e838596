# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/site/lines.py: what the "worked example" column shows for each
line of a paper's box (tools/site/build.py's algorithm pages).

Every box line is one of

  computes   an assignment, an update, a return, a sum, a choice (a sampled
             client set, a minibatch): it must show values of the worked
             example's run.  They come from the trace (build.py: the line
             number in the formula; the formula's text or the symbol it
             assigns, text_line; PLACED below; the nearest `req:` tag above
             the C's use of the formula or the engine's event; the final
             records at the return line) or, for
             the random choices, from the run's result: its `schedule` is the
             record of every choice made (client sets S_t, minibatches), which
             docs/formats.md calls replayable; a line that keeps values
             (θ_k^t = θ_k^{t−1} for a client outside the round) shows the
             values kept, read from the trace (KEPT).  A computing line the C does
             compute but the trace prints no event for is listed in
             untraced.json with its reason, and shows that reason; any other
             computing line without values fails `make check-site`.
  loop       a loop header ("for t = 0, …, T − 1 do"): shows its index values
             in the run (the rounds, the clients of each round, the batches
             of each client's local work)
  input      an input line ("input: …", "Require", "initialize w_0"): the
             given values (w⁰ and the hyperparameters the result records)
  end        "end for", "end on client": closes a loop
  comment    a comment or an explanatory line of the box ("// update …")
  message    a line that moves values without computing them ("the server
             sends w^t"): the values sent, when the trace prints them
  header     a procedure's header ("ClientUpdate(k, w):")

The kind is found from the line's text (classify); KIND_OVERRIDES names the
few lines the patterns read wrongly, each with its reason.
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ALLOW = os.path.join(HERE, "untraced.json")
MOST = 6    # lines shown per cell

# (page, box line): kind, where the patterns below would read the line wrongly
KIND_OVERRIDES = {
    # "for each round t: S_t (the schedule's clients)": the round loop
    ("fedrod", "2"): "loop:rounds",
    # "for r = 0, …, R − 1 do   (local rounds)": pFedMe's local rounds
    ("pfedme", "6"): "loop:local",
    # "optional: α_i ← …": an update, run only when apfl.alpha = adaptive
    ("apfl", "7"): "computes",
    # "if t does not divide τ: U^(t+1) ← U^(t)": keeps the client set (a
    # choice) through the round's τ local steps: the set kept is the round's
    # clients, which the result's schedule records
    ("apfl", "8"): "computes:sample",
    # CFL's clustering box loops over the sorted pairs, not over rounds
    ("cfl", "4"): "loop:pairs",
    # "for each client i ∈ S_t: (Δ_i, n_i) ← ClientUpdate(i, g^t)": a loop header
    ("fedrecon", "4"): "loop:clients",
    # "split D_i into the support D_{i,s} and the query D_{i,q}": a choice the
    # result's schedule records (each client's personal and local batches)
    ("fedrecon", "7"): "computes:split",
    # "sample client i ∈ [n]": one client per round (pFedHN)
    ("pfedhn", "3"): "computes:sample",
    # "f_i(x) for x ∈ b": the body's features, computed
    ("fedproto", "localupdate-3"): "computes",
    # "W_i^p ← 1 for every i ∈ [N]" (l. 2): the weights' initialisation
    ("fedala", "2"): "input",
    # "D_i^{s,t} ← s% of D_i": the round's `personal` batches, data
    ("fedala", "7"): "computes:batches",
    # "for client i ∈ I^t in parallel:" and the round loop "for t = 1 … T:"
    # (no "do")
    ("fedala", "3"): "loop:rounds",
    ("fedala", "6"): "loop:clients",
    # "for each device k ∉ P_t: θ_k^t = θ_k^{t−1}, ∇L_k(θ_k^t) = …": the values
    # kept, which the run forms nothing for: shown from the trace (KEPT)
    ("feddyn", "9"): "computes:keep",
    # "every j ∉ I_t keeps W_j^{t+1} = W_j^t": the same
    ("pflego", "9"): "computes:keep",
    # "W_i^p ← W_i^p − η ∇ L(…)" (Eq. (5), l. 10 and l. 13) and "W_i^p ←
    # σ(W_i^p)" (l. 11, l. 14): updates of W_i
    ("fedala", "10"): "computes",
    ("fedala", "11"): "computes",
    ("fedala", "13"): "computes",
    ("fedala", "14"): "computes",
    # "(the gradients of ℒ at that point; …)": the gradients of line 7's ℒ
    ("apple", "8"): "comment",
}

# (page, a trace formula's text up to its first colon): the box line, where
# the formula's text names no line of the box and no `req:` tag above its use
# does (the box is a different algorithm of the same paper); (page, event,
# name): the box lines an engine event goes to, the first the box shows,
# where the tag above its call cites only another algorithm's line
PLACED = {
    # "[Alg. 1: (c₁, c₂) = argmin …]": the two clusters the bipartition returns
    ("cfl", "Alg. 1:"): 7,
    # "[Option II: θ_j ← Σ_i s_ij θ̃_i / Σ_i s_ij]": the server line of
    # Option II (its tag cites l. 8 and l. 9, Option I's first)
    ("ifca", "Option II:"): 9,
    # fedalt.c's `client i ends: v` sits under fedsim.alg5.l11's tag only;
    # for FedAlt it is Alg. 4 l. 10's v_i^(t+1)
    ("fedalt-fedsim", "ends", "v"): ("alg4.10", "alg5.11"),
}

# (page, a trace formula's text up to its first colon): the further box
# lines that formula's value belongs to, beside the one it is placed at:
# one statement the box spreads over several lines
SPREAD = {
    # ala_epochs, "[Alg. 1 l. 8-14: passes over D_i^s …]": the passes the
    # start stage's loop (l. 9) or the later rounds' one pass (l. 12) made
    ("fedala", "Alg. 1 l. 8-14:"): (9, 12),
    # W_i, "[Eq. (5): W_i ← clip_[0,1](…)]": Eq. (5) and σ, in the start
    # stage (l. 10-11) and in a later round (l. 13-14)
    ("fedala", "Eq. (5):"): (10, 11, 13, 14),
}

# (page, event, name): the further box lines whose value is that engine
# event's value, printed once under another line's citation: a line that
# only names the value another line computed or starts from (θ̃_i = θ_i)
SHARED = {
    # "Θ̂_i ← Θ_i^{t−1} + (Θ^{t−1} − Θ_i^{t−1}) ⊙ W_i" (l. 15) is where line
    # 16's local training starts: the C emits it as `client i starts: theta_i`
    ("fedala", "starts", "theta_i"): (15,),
    # "u_{i,0}^(t) = u^(t)" (Alg. 4 l. 11): the u entries of the round's w, which
    # holds (u^(t), v⁰) (docs/formats.md)
    ("fedalt-fedsim", "round", "w"): ("alg4.11",),
    # "u_i^(t+1) = u_{i,τ_u}^(t)" (Alg. 4 l. 15): the u entries of the device's
    # last iterate, `client i ends: w_local`
    ("fedalt-fedsim", "ends", "w_local"): ("alg4.15",),
    # "g_i ← g" (l. 10): the client's start iterate, `client i starts: w_local`
    # (emitted under l. 8's citation: l_i and g_i start together)
    ("fedrecon", "starts", "w_local"): (10,),
    # "θ̃_i = θ_i" (l. 5): the start of the steps, `client i starts: theta`
    ("pfedhn", "starts", "theta"): (5,),
    # "c_i ← c_i⁺" (l. 14): what the client keeps, `client i ends: c_i`
    ("scaffold", "ends", "c_i"): (14,),
    # "(ffa, fedavg) q_i ← q … (personal) q_i kept" (l. 1): the adapter the
    # client's steps start from, `client i starts: q`
    ("lora", "starts", "q"): (1,),
}

# page: the trace names a "keeps" line (computes:keep) shows: for each round,
# each client outside it and the value it keeps, its last `client k ends:
# NAME` (or a note NAME printed after it, such as FedDyn's grad_L); a client
# not yet trained keeps its start
KEPT = {
    "feddyn": ("theta_k", "grad_L"),
    "pflego": ("v",),
}

# page: [(vector, box lines, why)]: lines of the paper's other options, which
# the worked example (the paper's reading, build.py's paper_reading) does
# not run; their values come from a vector that runs them, named in the
# cell and below the table; the worked example stays the page's
SECOND = {
    # "m ← max(C·K, 1)": the worked example's schedule is given, so its run
    # forms no m; a generated schedule's run traces it each round
    # (ref/sampling/schedule_trace.c)
    "fedavg": [("golden/fedavg/worked-generated-m.json", (4,),
                "a generated schedule: clients_per_round m of K clients, S_t drawn")],
    # "optional: α_i ← α_i − η_t ⟨…⟩": the paper's adaptive α (§4)
    "apfl": [("golden/apfl/worked-notes-6g-adaptive.json", (7,), "apfl.alpha = adaptive")],
    # Option II of Algorithm 2: model averaging
    "ifca": [("golden/ifca/worked-notes-2.3-model.json", (7, 9), "ifca.mode = model, Option II")],
    # HetLoRA's rank pruning and the aggregation (ffa, fedavg and hetlora)
    "lora": [("golden/lora/worked-hand-hetlora.json", (3, 4), "lora.method = hetlora")],
}


def first_line(text):
    """The line's statement: its first line, the box's side notes (after
    three or more spaces) left out."""
    return re.split(r"\s{3,}", text.split("\n")[0].strip())[0]


def first_loop(box, key=None):
    """The key of the first loop of key's procedure (a box of several:
    the keys "<procedure>.<n>") that is not over clients or steps."""
    section = str(key).split(".")[0] if "." in str(key) else None
    for k, text in (box or {}).items():
        if section is not None and str(k).split(".")[0] != section:
            continue
        low = first_line(text).lower()
        if re.match(r"for\b", low) and not re.search(
                r"epoch|batch|local|step|iteration|τ|client|device|user|machine|all i\b|\bi ∈|\bk ∈|in parallel", low):
            return k
    return None


def classify(page, key, text, box=None):
    """The kind of box line `key` of `page` (see the module's doc), with a
    subtype after a colon for loops (rounds, clients, local) and for the
    choices (sample, batches)."""
    over = KIND_OVERRIDES.get((page, str(key).replace(".", "-")))
    if over:
        return over
    t = first_line(text)
    low = t.lower()
    assigns = bool(re.search(r"←|(?<![<>≤≥!=])=(?!=)", t))
    if t.startswith("//") or t.startswith("(") and not assigns:
        return "comment"
    if re.match(r"end\b", low):
        return "end"
    if re.match(r"(input|require|server input|client i's input)\b", low) or \
            re.match(r"initiali[sz]e\b", low) and "=" not in t:
        return "input"
    if re.match(r"the server initialises", low):
        return "input"
    if re.match(r"(sample|.*\bsamples?\b).*\b(data|mini-?batch|batch)", low) or \
            re.search(r"split .* into batches", low):
        return "computes:batches"
    if re.search(r"\b(samples?|random set|selects?)\b", low) and "batch" not in low:
        return "computes:sample"
    if re.match(r"(for|on client .* in parallel)\b", low):
        if re.search(r"epoch|batch|local|step|iteration|τ", low):
            return "loop:local"
        if re.search(r"client|device|user|machine|all i\b|\bi ∈|\bk ∈|in parallel", low):
            return "loop:clients"
        # the box's first other loop runs over the rounds, a later one over
        # the local steps ("for k = 1, …, K do" inside the client's loop)
        return "loop:rounds" if key == first_loop(box, key) else "loop:local"
    if re.match(r"[a-z][\w ]*(\([^)]*\))?:\s*(//.*)?$", t, re.I) and not assigns:
        return "header"
    if re.search(r"\b(sends?|communicate|download|transmit)\b", low) and not assigns:
        return "message"
    return "computes"


def allow_list():
    """{page: {box line: reason}}: the computing lines that show no trace
    value, each with the reason (untraced.json)."""
    with open(ALLOW, encoding="utf-8") as f:
        data = json.load(f)
    return {page: dict(lines) for page, lines in data.items() if not page.startswith("_")}


def loop_var(t, default):
    m = re.search(r"\bfor (?:each |all )?(?:round |client |device |user |machine )?(\w)\b ?[=∈∉]", t)
    return m.group(1) if m else default


def rounds_of(result):
    return (result or {}).get("schedule", {}).get("rounds", [])


def plural(n, one, many=None):
    return f"{n} {one if n == 1 else many or one + 's'}"


def clip(out):
    return out[:MOST] + ([f"… ({len(out) - MOST} more)"] if len(out) > MOST else [])


def loop_values(sub, t, result, trace_text):
    """The loop's index values in the run."""
    rounds = rounds_of(result)
    if sub == "rounds":
        var = loop_var(t, "t")
        one = bool(re.search(r"=\s*1\b", t))
        ts = [str(k + 1 if one else k) for k in range(len(rounds))]
        note = " (the trace numbers them from 0)" if one else ""
        return [f"{var} = {', '.join(ts)}: {plural(len(rounds), 'round')} run{note}"] if rounds else []
    if sub == "clients":
        var = loop_var(t, "i")
        n = (result or {}).get("problem", {}).get("N", 0)
        out = []
        for k, r in enumerate(rounds):
            who = r.get("clients", [])
            if "∉" in t:
                who = [c for c in range(n) if c not in who]
            out.append(f"round {k}: {var} ∈ {{{', '.join(map(str, who))}}}")
        return clip(out)
    if sub == "local":
        out = []
        for k, r in enumerate(rounds):
            for c, b in zip(r.get("clients", []), r.get("batches", [])):
                out.append(f"round {k}, client {c}: {plural(len(b), 'step')}, batches "
                           + ", ".join(json.dumps(x) for x in b[:4]) + (" …" if len(b) > 4 else ""))
        return clip(out)
    if sub == "pairs":
        n = (result or {}).get("problem", {}).get("N", 0)
        return [f"t = 1, …, {n * n}: the m² = {n * n} sorted pairs, until |C| = 2 (line 7)"] if n else []
    return []


def choice_values(sub, result):
    """A random choice's values: the result's schedule (its record)."""
    out = []
    for k, r in enumerate(rounds_of(result)):
        if sub == "sample":
            who = r.get("selected", r.get("clients", []))
            out.append(f"round {k}: {{{', '.join(map(str, who))}}}")
        elif sub == "split":
            # the support's batches (the personal steps), the query's (the
            # shared steps): the samples each part holds in this round
            def batches(bs):
                return ", ".join(json.dumps(x) for x in bs[:3]) + (" …" if len(bs) > 3 else "")
            for c, q, sp in zip(r.get("clients", []), r.get("batches", []), r.get("personal", [])):
                out.append(f"round {k}, client {c}: support batches {batches(sp)}; query batches {batches(q)}")
        else:
            for c, b in zip(r.get("clients", []), r.get("batches", [])):
                out.append(f"round {k}, client {c}: " + ", ".join(json.dumps(x) for x in b[:4])
                           + (" …" if len(b) > 4 else ""))
    return clip([x + "  (the result's schedule)" if i == 0 else x for i, x in enumerate(out)])


def kept_values(page, result, trace_text):
    """A "keeps" line's values: per round, the clients outside it and the
    values they keep (KEPT), read from the trace as the run went."""
    names = KEPT.get(page, ())
    rounds = rounds_of(result)
    n = (result or {}).get("problem", {}).get("N", 0)
    kept, last, t, out = {}, None, -1, []

    def keepers(t):
        inside = set(rounds[t].get("clients", [])) if 0 <= t < len(rounds) else set()
        for k in range(n):
            if k in inside:
                continue
            have = kept.get(k, {})
            vals = "; ".join(f"{x} = {have[x][0]} (from round {have[x][1]})" for x in names if x in have)
            out.append(f"round {t}: client {k} keeps " + (vals or "its start (not trained yet)"))

    for line in trace_text or []:
        m = re.match(r"round (\d+):", line)
        if m:
            if t >= 0:
                keepers(t)
            t = int(m.group(1))
            continue
        m = re.match(r"\s*client (\d+) ends: (\S+) = (\[.*?\])", line)
        if m:
            last = int(m.group(1))
            if m.group(2) in names:
                kept.setdefault(last, {})[m.group(2)] = (m.group(3), t)
            continue
        m = re.match(r"  (\S+) = (\[.*?\])", line)
        if m and last is not None and m.group(1) in names:
            kept.setdefault(last, {})[m.group(1)] = (m.group(2), t)
    if t >= 0:
        keepers(t)
    return clip(out)


def input_values(result):
    """The given values: w⁰ and the algorithm's own hyperparameters."""
    out = []
    w0 = (result or {}).get("w0")
    if w0 is not None:
        shown = ", ".join(repr(x) for x in w0[:4]) + (", …" if len(w0) > 4 else "")
        out.append(f"w0 = [{shown}]  ({plural(len(w0), 'entry', 'entries')})")
    hyper = (result or {}).get("algorithm", {}).get("hyperparameters", {})
    own = [f"{k} = {v}" for k, v in hyper.items()
           if v is not None and not k.startswith(("opt.", "lr.", "bn."))]
    if own:
        out.append(", ".join(own))
    rounds = rounds_of(result)
    if rounds:
        out.append(f"{plural(len(rounds), 'round')}, N = {(result or {}).get('problem', {}).get('N', '?')} clients")
    return out


def cell(page, key, text, traced, result, trace_text, allowed, box=None):
    """(kind, css class, [lines]) of the worked-example cell of one box line:
    class "values" (values of the run), "structure" (what a line that
    computes nothing is, with its index values) or "untraced" (a computing
    line of untraced.json: its reason)."""
    kind = classify(page, key, text, box)
    base, _, sub = kind.partition(":")
    t = first_line(text)
    if traced:
        return base, "values", traced
    if base == "computes":
        vals = choice_values(sub, result) if sub in ("sample", "batches", "split") else []
        vals = kept_values(page, result, trace_text) if sub == "keep" else vals
        if vals:
            return base, "values", vals
        reason = allowed.get(str(key).replace(".", "-"))
        if reason:
            return base, "untraced", [f"no traced value: {reason}"]
        return base, "values", []
    if base == "loop":
        vals = loop_values(sub, t, result, trace_text)
        return base, "structure", ["loop header; in this run:"] + vals if vals else ["loop header"]
    if base == "input":
        return base, "structure", ["input; given:"] + input_values(result)
    if base == "message":
        sent = [x.strip() for x in trace_text if re.match(r"round \d+:", x)][:3]
        return base, "structure", ["sends values, computes none"] + (
            ["the model sent each round: " + sent[0]] + sent[1:] if sent else [])
    return base, "structure", [{"end": "closes a loop; no value",
                                 "comment": "a comment of the box; no value",
                                 "header": "a procedure's header; no value"}.get(base, base)]


def squeeze(text):
    """A statement compared by its symbols: no spaces, no round or step
    superscripts (^(t), ^{t−1}), "←" read as "="."""
    text = re.sub(r"\^(\([^)]*\)|\{[^}]*\})", "", text)
    return re.sub(r"\s+", "", text).replace("←", "=")


def text_line(box, formula):
    """The box line whose statement the trace's formula writes out: first
    the one (of the box) whose statement, or a part of it between
    semicolons, equals or holds the formula's text after its "Alg. 1 …:"
    prefix (or is held by it; 8 characters at least); else the one line
    whose part assigns the quantity the formula assigns (the same symbol
    left of "←" or "=").  None when no line or more than one does."""
    body = squeeze(re.sub(r"^(Alg\.[^:]*|Option \w+|step \d+|eq\. \(\d+\)|§\d+[^:]*):\s*", "", formula))
    body = re.sub(r"\((ties|local|split|each|row)[^)]*\)$", "", body)
    parts = {key: [re.sub(r"(do|then)$", "", p) for p in squeeze(first_line(text)).split(";") if p]
             for key, text in box.items()}
    hits = [key for key, ps in parts.items()
            if any(len(p) >= 8 and len(body) >= 8 and (p == body or p in body or body in p) for p in ps)]
    if len(hits) == 1:
        return hits[0]
    lhs = body.split("=", 1)[0] if "=" in body else None
    if hits or not lhs or len(lhs) > 12:
        return None
    hits = [key for key, ps in parts.items() if any("=" in p and p.split("=", 1)[0] == lhs for p in ps)]
    return hits[0] if len(hits) == 1 else None
