#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""bench/run.py: make bench, pflref against NumPy (hand-written gradients)
and PyTorch-CPU fp64 on one core, side by side.

  /usr/bin/python3 bench/run.py [--quick | --full] [--only=NAME,...]
                                [--reps=R]

A benchmark, never a test: it measures and reports, and fails only when
it cannot run or the contenders disagree beyond 1e-9 (normwise).

What it does, in order:
  1. data: synthetic federations generated once into build/bench/data/
     (bench/gen_data.py; reused when present);
  2. the single-core dgemm peak of this machine (OPENBLAS_NUM_THREADS=1,
     the best of several square products through NumPy's OpenBLAS, the
     library pflref links, timed in CPU seconds; measured again before
     every workload, the best kept);
  3. each workload: every contender runs R times, the contenders
     alternating (their order rotated each repetition), whole process
     timed from outside (CPU seconds by perf stat's task-clock, or GNU
     time's user + sys without perf; wall clock; the child's peak RSS by
     GNU time);
     the contenders time their own load and training inside;
     pflref's training time is its whole-process time minus the median
     of the same spec with 0 rounds (load, validation, evaluation and
     output alone; not measured for cnn-N1000, a memory measurement).  CPU seconds lead the table: on a machine shared with
     other work, wall time mostly measures the waiting;
  4. agreement: the final parameters of every contender against pflref's,
     max |a − b| / max |b| over the vector (normwise, so entries near zero
     do not blow it up);
  5. the table on standard output, build/bench/bench.json, build/bench/
     table.md and a gnuplot plot build/bench/bench.svg.

pflref reads its data from .npy files when it can (the format agreed in
docs/formats.md); a pflref without the .npy reader is detected and the
bench then runs the --quick profile on JSON problems, saying so, and skips
the 1000-client runs, which only .npy makes possible.
"""
import atexit
import importlib.util
import io
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import gen_data  # noqa: E402

# every file the bench writes (specs, tables, the figure) goes through
# tools/outfile.py: pflref's writer's rules (regular files only, links
# kept, nothing partial)
_spec = importlib.util.spec_from_file_location(
    "pflref_outfile", os.path.join(ROOT, "tools", "outfile.py"))
outfile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(outfile)

OUT = os.path.join(ROOT, "build", "bench")
DATA = os.path.join(OUT, "data")
WORK = os.path.join(OUT, "work")
PFLREF = os.path.join(ROOT, "build", "rel", "pflref")
PY = "/usr/bin/python3"
SEEDS = os.environ.get("PFLREF_SEEDS", "/work/shared/seeds")
ENV1 = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
            MKL_NUM_THREADS="1")
AGREE = 1e-9
CPU = [0.0]     # CPU seconds of the last child run_rss reaped
HAVE_PERF = subprocess.run(["perf", "stat", "-e", "task-clock", "true"],
                           capture_output=True).returncode == 0 \
    if shutil.which("perf") else False


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------------------
# Processes, timed from outside
# ---------------------------------------------------------------------------

def run_rss(argv, cwd=None):
    """(wall seconds, peak RSS in MiB, stdout text) of one child; CPU[0]
    := its CPU seconds.  perf stat's task-clock gives the CPU time (to the
    microsecond; GNU time's is in hundredths) of GNU time and the child,
    GNU time the child's own peak RSS (/usr/bin/time -f %M: getrusage of a
    child forked from this Python process would count the parent's pages
    it started with).  Raises on a non-zero exit."""
    # this process's own files: two bench runs may share OUT
    rss_file = os.path.join(OUT, ".rss.%d" % os.getpid())
    cpu_file = os.path.join(OUT, ".cpu.%d" % os.getpid())
    wrapped = (["perf", "stat", "-x,", "-o", cpu_file, "-e", "task-clock",
                "--"] if HAVE_PERF else []) + \
        ["/usr/bin/time", "-f", "%M %U %S", "-o", rss_file] + argv
    t0 = time.perf_counter()
    p = subprocess.run(wrapped, cwd=cwd, env=ENV1, capture_output=True,
                       text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (
            " ".join(argv), p.returncode, p.stderr[-2000:]))
    with open(rss_file) as f:
        rss_kib, user, sys_ = map(float, f.read().split()[-3:])
    CPU[0] = user + sys_
    if HAVE_PERF:
        with open(cpu_file) as f:
            for line in f:
                if "task-clock" in line:
                    CPU[0] = float(line.split(",")[0]) / 1e3
    return dt, rss_kib / 1024.0, p.stdout


# ---------------------------------------------------------------------------
# The machine
# ---------------------------------------------------------------------------

# CPU seconds (process_time), as the table's rates: on a loaded machine a
# wall-clock peak counts the waiting and falls below the rates it divides
PEAK_CODE = r"""
import sys, time, numpy as np
best = 0.0
for n in ((1024,) if "quick" in sys.argv else (1024, 2048)):
    a = np.random.default_rng(1).random((n, n)); b = a.T.copy(); c = a @ b
    for _ in range(4):
        t = time.process_time(); np.matmul(a, b, out=c)
        best = max(best, 2.0 * n ** 3 / (time.process_time() - t) / 1e9)
print(best)
"""


def dgemm_peak(quick=False):
    """The best single-core dgemm rate seen (GFLOP/s per CPU second).  On
    a shared machine one measurement may catch a bad moment: run.py
    measures again before every workload and keeps the best."""
    _, _, out = run_rss([PY, "-c", PEAK_CODE] + (["quick"] if quick else []))
    return float(out.strip())


def machine():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import torch
    return {"cpu": cpu, "cores": os.cpu_count(),
            "mem_gib": round(os.sysconf("SC_PAGE_SIZE") *
                             os.sysconf("SC_PHYS_PAGES") / 2 ** 30, 1),
            "numpy": np.__version__, "torch": torch.__version__,
            "load": os.getloadavg()}


def save_npy(path, array):
    """np.save through tools/outfile.py."""
    buf = io.BytesIO()
    np.save(buf, array)
    outfile.write(path, buf.getvalue())


def npy_supported():
    """1 when this pflref reads .npy problem data (the agreed format)."""
    d = os.path.join(OUT, "probe")
    os.makedirs(d, exist_ok=True)
    save_npy(os.path.join(d, "X.npy"), np.array([[1.0], [2.0]]))
    save_npy(os.path.join(d, "y.npy"), np.array([1.0, 3.0]))
    spec = {"format": "pflref-spec/1",
            "model": {"kind": "linear", "d": 1, "loss": "squared"},
            "problem": {"clients": [{"X": "X.npy", "y": "y.npy"}]},
            "algorithm": {"name": "fedavg",
                          "hyperparameters": {"eta": 0.1}},
            "schedule": {"kind": "generate", "rounds": 1,
                         "local": {"steps": 1}}}
    path = os.path.join(d, "spec.json")
    outfile.write(path, json.dumps(spec))
    r = subprocess.run([PFLREF, "run", path, "-o",
                        os.path.join(d, "r.json")], capture_output=True)
    return r.returncode == 0


# ---------------------------------------------------------------------------
# Workloads
# ---------------------------------------------------------------------------

MNIST = {"seed": 17, "n": 600, "d": 784, "k": 10}
# image shapes [C, H, W] of the CNN rows' pools (d = C·H·W)
SHAPE = {"mnist": [1, 28, 28], "cifar": [3, 32, 32]}


def model_of(kind, d, k, pool):
    if kind == "softmax":
        return {"kind": "softmax", "d": d, "k": k, "bias": True}
    if kind == "fedavgcnn":         # PFLlib's FedAvgCNN (docs/models.md)
        return {"kind": "layers", "input": SHAPE[pool], "preset": kind,
                "k": k}
    return {"kind": "mlp", "d": d, "k": k, "h": 200, "activation": "relu",
            "bias": True}


def cnn_layers(m):
    """FedAvgCNN's parametrised layers as (fan_in, out, positions): conv1
    (C·25 → 32 at H1·W1 output positions), conv2 (800 → 64), fc1 (dim →
    512), fc (512 → k); positions 1 for the dense layers."""
    C, H, W = m["input"]
    h1, w1 = H - 4, W - 4
    h2, w2 = h1 // 2 - 4, w1 // 2 - 4
    return [(C * 25, 32, h1 * w1), (32 * 25, 64, h2 * w2),
            (64 * (h2 // 2) * (w2 // 2), 512, 1), (512, m["k"], 1)]


def P_of(m):
    if m["kind"] == "layers":
        return sum(f * o + o for f, o, _ in cnn_layers(m))
    d, k = m["d"], m["k"]
    if m["kind"] == "softmax":
        return k * d + k
    h = m["h"]
    return h * d + h + k * h + k


def flops(w):
    """Training flops (multiply-adds × 2) from the schedule's shape."""
    m, n, B = w["model"], w["n"], w["B"] or w["n"]
    d, k = w["d"], m["k"]
    steps = w["epochs"] * -(-n // B)
    part = w["T"] * w["m"]
    if m["kind"] == "softmax":
        per = 4.0 * B * d * k
    elif m["kind"] == "layers":
        # FedAvgCNN: 2 flops a multiply-add; the forward pass's products,
        # then the backward's two (weight gradient, input signal), save
        # the first layer's input signal; pooling, ReLU and the softmax
        # are not counted
        macs = [f * o * q for f, o, q in cnn_layers(m)]
        per = 2.0 * B * (3 * sum(macs) - macs[0])
    else:
        h = m["h"]
        per = 4.0 * B * d * h + 6.0 * B * h * k
    alg = w["algorithm"]
    if alg == "pfedme":
        per *= w["hyper"]["K"]
    if alg == "ditto":
        per *= 2
    if alg == "pflego":
        h = m["h"]
        return part * (4.0 * n * d * h + w["tau"] * 4.0 * n * h * k
                       + 2.0 * n * h * k)
    return part * steps * per


def workloads(quick, npy):
    """The list of workloads (name, pool, sizes, algorithm, reps)."""
    N100 = 20 if quick else 100
    n = 120 if quick else MNIST["n"]
    big = 2 if quick else 3
    base = dict(pool="mnist", n=n, d=784, k=10, T=10, m=10, epochs=5, B=50,
                client_seed=1, reps=5)
    L = []

    def add(name, **kw):
        w = dict(base)
        w.update(kw)
        w["name"] = name
        L.append(w)

    add("fedavg-softmax", N=N100, model="softmax", algorithm="fedavg",
        hyper={"eta": 0.01})
    add("fedavg-mlp", N=N100, model="mlp", algorithm="fedavg",
        hyper={"eta": 0.01}, reps=big)
    add("pfedme-softmax", N=N100, model="softmax", algorithm="pfedme",
        epochs=1, hyper={"eta": 0.01, "lambda": 1.0, "eta_p": 0.01, "K": 5,
                         "beta": 1.0},
        switches={"pfedme.train": "sampled"})
    add("ditto-softmax", N=N100, model="softmax", algorithm="ditto",
        epochs=2, hyper={"eta": 0.01, "lambda": 0.1})
    for tau in (1, 2, 5, 10, 50):
        # quick (JSON): 5 clients, 40 rounds, so that the training is not
        # lost in the noise of reading the JSON problem
        add("pflego-tau%d" % tau, N=5 if quick else 20, m=5,
            T=40 if quick else 5, model="mlp",
            algorithm="pflego", tau=tau, epochs=1, B=0,
            hyper={"rho": 0.05, "pflego.beta": 0.1},
            split=["head"], reps=3)
    for N in (10, 100) + ((1000,) if npy and not quick else ()):
        add("scale-N%d" % N, N=N, model="softmax", algorithm="fedavg",
            hyper={"eta": 0.01}, reps=5 if N < 1000 else 2,
            contenders=("pflref", "numpy") if N == 1000 else None)
    for d in (196, 784, 3136):
        add("scale-d%d" % d, N=10, d=d, pool="mnist" if d == 784 else
            "d%d" % d, model="softmax", algorithm="fedavg",
            hyper={"eta": 0.01})
    # FedAvgCNN (PFLlib) at MNIST (1 × 28 × 28) and CIFAR (3 × 32 × 32)
    # shape: 100 clients of 20 samples, 5 rounds of 10 sampled, 1 epoch of
    # batches of 10 (PFLlib's default batch); FedAvg with torch's SGD
    # momentum 0.9 and weight decay 5e-4, Ditto with the paper's plain SGD
    cnn = dict(model="fedavgcnn", N=20 if quick else 100,
               n=10 if quick else 20, T=2 if quick else 5,
               m=5 if quick else 10, epochs=1, B=5 if quick else 10,
               reps=2)
    for pool, d in (("mnist", 784), ("cifar", 3072)):
        add("cnn-%s-fedavg" % pool, pool=pool, d=d, algorithm="fedavg",
            hyper={"eta": 0.01, "opt.momentum": 0.9,
                   "opt.weight_decay": 5e-4}, **cnn)
        add("cnn-%s-ditto" % pool, pool=pool, d=d, algorithm="ditto",
            hyper={"eta": 0.01, "lambda": 0.1}, **cnn)
    if npy and not quick:
        # the 1000-client MNIST federation (scale-N1000's pool) with the
        # CNN: peak RSS against the data; one round of 10 clients, 1 epoch
        # of batches of 50; pflref alone, once, and no 0-round run (its
        # evaluation of 1000 × 600 samples is most of the process: about
        # 10 minutes of CPU, so it runs only when --only names it)
        add("cnn-N1000", N=1000, model="fedavgcnn", algorithm="fedavg",
            T=1, epochs=1, hyper={"eta": 0.01}, reps=1, baseline=False,
            contenders=("pflref",), opt_in=True)
        add("pfedme-N1000", N=1000, model="softmax", algorithm="pfedme",
            epochs=1, hyper={"eta": 0.01, "lambda": 1.0, "eta_p": 0.01,
                             "K": 5, "beta": 1.0},
            switches={"pfedme.train": "sampled"}, reps=2,
            contenders=("pflref",))
    for w in L:
        w["model"] = model_of(w["model"], w["d"], w["k"], w["pool"])
        w.setdefault("tau", 1)
    return L


def pool_dir(w):
    return os.path.join(DATA, "%s-n%d" % (w["pool"], w["n"]))


def prepare(w, npy, quick):
    """Data, w0, pflref's specs (T rounds and 0 rounds) and the contenders'
    work file of workload w."""
    folder = pool_dir(w)
    seed = MNIST["seed"] + (0 if w["pool"] == "mnist" else w["d"])
    contenders = w.get("contenders") or ("pflref", "numpy", "torch")
    npz = gen_data.ensure_pool(folder, seed, w["N"], w["n"], w["d"], w["k"],
                               log=log, npz=contenders != ("pflref",))
    os.makedirs(WORK, exist_ok=True)
    rng = np.random.default_rng(3)
    P = P_of(w["model"])
    if w["model"]["kind"] == "softmax":
        w0 = np.zeros(P)
    elif w["model"]["kind"] == "layers":   # PyTorch's default init scale:
        # weight and bias of each layer U(−1/√fan_in, 1/√fan_in)
        w0 = np.concatenate([rng.uniform(-1, 1, f * o + o) / np.sqrt(f)
                             for f, o, _ in cnn_layers(w["model"])])
    else:                                  # PyTorch's default init scale
        d, h = w["model"]["d"], w["model"]["h"]
        w0 = np.concatenate([
            rng.uniform(-1, 1, h * d + h) / np.sqrt(d),
            rng.uniform(-1, 1, P - h * d - h) / np.sqrt(h)])
    w0_path = os.path.join(WORK, w["name"] + "-w0.npy")
    save_npy(w0_path, w0)
    if npy:
        problem = "problem-npy-N%d.json" % w["N"]
    else:
        problem = os.path.basename(gen_data.ensure_json_problem(folder,
                                                                w["N"]))
    local = {"batch_size": w["B"]}
    local.update({"steps": w["tau"]} if w["algorithm"] == "pflego"
                 else {"epochs": w["epochs"]})
    alg = {"name": w["algorithm"], "hyperparameters": w["hyper"]}
    if w.get("switches"):
        alg["switches"] = w["switches"]
    specs = {}
    for T in (w["T"], 0):
        spec = {"format": "pflref-spec/1", "name": "bench " + w["name"],
                "model": w["model"], "problem": {"file": problem},
                # w0 from its .npy file and the result's large arrays in
                # .npy files (docs/formats.md, "Arrays in files"), as the
                # contenders read and write theirs
                "init": {"kind": "given", "w": w0_path},
                "algorithm": alg,
                "schedule": {"kind": "generate", "rounds": T,
                             "clients_per_round": w["m"],
                             "sampler": "numpy_legacy",
                             "client_seed": w["client_seed"],
                             "batches": "split_once", "local": local},
                "output": {"trajectory": "none", "arrays": "files"}}
        if w.get("split"):
            spec["split"] = {"personal": w["split"]}
        path = os.path.join(folder, "spec-%s-T%d.json" % (w["name"], T))
        outfile.write(path, json.dumps(spec))
        specs[T] = path
    work = {k: w[k] for k in ("N", "n", "T", "m", "epochs", "B",
                              "client_seed", "algorithm", "hyper", "model",
                              "tau")}
    work.update(npz=npz, w0=w0_path, out=os.path.join(WORK, w["name"]))
    work_path = os.path.join(WORK, w["name"] + ".json")
    outfile.write(work_path, json.dumps(work))
    return specs, work_path


# ---------------------------------------------------------------------------
# One workload
# ---------------------------------------------------------------------------

def run_workload(w, npy, quick):
    specs, work_path = prepare(w, npy, quick)
    names = list(w.get("contenders") or ("pflref", "numpy", "torch"))
    res_path = os.path.join(WORK, w["name"] + "-pflref.json")
    runs = {c: [] for c in names}
    zero = []
    for r in range(w["reps"]):
        order = names[r % len(names):] + names[:r % len(names)]
        for c in order:
            if c == "pflref":
                dt, rss, _ = run_rss([PFLREF, "run", specs[w["T"]], "-o",
                                      res_path])
                runs[c].append({"total": dt, "rss": rss, "cpu": CPU[0]})
                if r < 2 and w.get("baseline", True):
                    # the 0-round baseline, twice
                    dt0, _, _ = run_rss([PFLREF, "run", specs[0], "-o",
                                         res_path + ".T0"])
                    zero.append((dt0, CPU[0]))
                    # run_rss set CPU[0] to the baseline's; restore ours
                    CPU[0] = runs[c][-1]["cpu"]
            else:
                dt, rss, out = run_rss([PY, os.path.join(HERE,
                                                         "contender.py"),
                                        c, work_path])
                inner = json.loads(out.strip().splitlines()[-1])
                inner.update(total=dt, rss=rss, cpu=CPU[0])
                runs[c].append(inner)
                for key in ("w", "v"):     # each contender's own copy
                    p = os.path.join(WORK, "%s_%s.npy" % (w["name"], key))
                    if os.path.exists(p):
                        outfile.copy(p, p.replace(".npy", "-%s.npy" % c))
                        os.unlink(p)
    # pflref's training: whole process less the 0-round run's (NaN when
    # the difference is within the noise of the whole, 2%)
    z = statistics.median(a for a, _ in zero) if zero else 0.0
    zc = statistics.median(b for _, b in zero) if zero else 0.0
    for x in runs.get("pflref", []):
        x["train"] = x["total"] - z
        x["train_cpu"] = x["cpu"] - zc
        if x["train"] < 0.02 * x["total"]:
            x["train"] = float("nan")
        if not zero:                       # no 0-round run (baseline=False)
            x["train"] = x["train_cpu"] = float("nan")
        x["load"] = z
    agree = agreement(w, res_path, names)
    s = summarize(w, runs, agree)
    # the raw data: X (n × d) and y (n) doubles per client
    s["data_mib"] = w["N"] * w["n"] * (w["d"] + 1) * 8 / 2 ** 20
    if zero:                     # pflref's 0-round run, CPU seconds
        s["pflref_baseline_cpu"] = zc
    return s


def agreement(w, res_path, names):
    with open(res_path) as f:
        final = json.load(f)["final"]
    for key, value in final.items():   # the files form: a .npy beside it
        if isinstance(value, str):
            final[key] = np.load(os.path.join(os.path.dirname(res_path),
                                              value))
    out = {}
    for c in names:
        if c == "pflref":
            continue
        worst = 0.0
        for key in ("w", "v"):
            q = os.path.join(WORK, "%s_%s-%s.npy" % (w["name"], key, c))
            if key not in final or not os.path.exists(q):
                continue
            b = np.asarray(final[key], dtype=np.float64)
            a = np.load(q)
            worst = max(worst, float(np.max(np.abs(a - b)) /
                                     max(np.max(np.abs(b)), 1e-300)))
        out[c] = worst
    return out


def summarize(w, runs, agree, gflop=None):
    """Min and median of each contender's times: wall and CPU (user + sys)
    of the whole process, and of its training."""
    s = {"name": w["name"], "N": w["N"], "n": w["n"], "d": w["d"],
         "algorithm": w["algorithm"], "model": w["model"]["kind"],
         "reps": w["reps"],
         "gflop": flops(w) / 1e9 if gflop is None else gflop,
         "contenders": {}}
    for c, xs in runs.items():
        def stat(key):
            v = [x[key] for x in xs if key in x and x[key] == x[key]]
            return (min(v), statistics.median(v)) if v else (float("nan"),
                                                             float("nan"))
        s["contenders"][c] = {
            "wall": stat("total"), "cpu": stat("cpu"),
            "train_wall": stat("train"), "train_cpu": stat("train_cpu"),
            "rss_mib": max(x["rss"] for x in xs),
            "agree": agree.get(c, 0.0)}
    return s


# ---------------------------------------------------------------------------
# Seed 000: the whole experiment, both runs and the table
# ---------------------------------------------------------------------------

TABLE_NUM = re.compile(r"-?\d+\.\d+")


def seed000(reps):
    src = None
    for name in sorted(os.listdir(SEEDS)) if os.path.isdir(SEEDS) else []:
        if name.startswith("000_"):
            src = os.path.join(SEEDS, name)
    if src is None:
        log("bench: seed 000's text is not in %s (PFLREF_SEEDS): "
            "seed000 skipped" % SEEDS)
        return None
    code, keep = [], False
    with open(src) as f:                   # the seed's own NumPy script
        for line in f:
            if line.startswith("import numpy as np"):
                keep = True
            if keep:
                code.append(line)
                if line.startswith('print(f"  worst'):
                    break
    script = os.path.join(WORK, "seed000_numpy.py")
    os.makedirs(WORK, exist_ok=True)
    outfile.write(script, "".join(code))
    g = os.path.join(ROOT, "golden", "seed000")
    ft, lo = os.path.join(WORK, "s0-ft.json"), os.path.join(WORK,
                                                           "s0-local.json")
    sh = ("{p} run {g}/fedavg-ft.json -o {ft} && {p} run {g}/local.json -o "
          "{lo} && {p} table --metric test_mse global={ft}:global "
          "local={lo}:local personalized={ft}:personalized").format(
              p=PFLREF, g=g, ft=ft, lo=lo)
    runs = {"pflref": [], "numpy": []}
    outs = {}
    for r in range(reps):
        for c in (("pflref", "numpy") if r % 2 == 0 else ("numpy", "pflref")):
            argv = ["/bin/sh", "-c", sh] if c == "pflref" else [PY, script]
            dt, rss, out = run_rss(argv)
            runs[c].append({"total": dt, "train": dt, "rss": rss,
                            "cpu": CPU[0], "train_cpu": CPU[0]})
            outs[c] = out
    a = [float(x) for x in TABLE_NUM.findall(outs["pflref"])]
    b = [float(x) for x in TABLE_NUM.findall(outs["numpy"])]
    same = len(a) == len(b) and all(abs(x - y) < 1e-9 for x, y in zip(a, b))
    s = summarize({"name": "seed000", "N": 6, "n": 14, "d": 12,
                   "algorithm": "finetune+local", "model": {"kind": "linear"},
                   "reps": reps, "T": 0, "m": 0, "B": 0, "epochs": 0},
                  runs, {"numpy": 0.0 if same else float("inf")}, gflop=0.0)
    s["note"] = ("whole process: pflref's two runs and its table vs the "
                 "seed's own script; tables %s" % (
                     "identical to 3 decimals" if same else "DIFFER"))
    return s


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

def report(results, peak, mach, profile):
    """The table: CPU seconds (user + sys, one core) first, since the
    machine may be shared; wall medians beside them."""
    lines = []
    head = ("| workload | contender | whole CPU min / median (s) | "
            "training CPU min / median (s) | whole wall median (s) | "
            "whole ×pflref | training ×pflref | GFLOP/s | % peak | "
            "peak RSS (MiB) | max rel diff |")
    lines += [head, "|" + "---|" * 11]
    for s in results:
        ref = s["contenders"].get("pflref")
        for c, x in s["contenders"].items():
            t = x["train_cpu"][1]
            gfs = s["gflop"] / t if s["gflop"] and t > 0 else float("nan")
            rw = x["cpu"][1] / ref["cpu"][1] if ref else float("nan")
            rt = t / ref["train_cpu"][1] if ref else float("nan")
            lines.append(
                "| %s | %s | %.3f / %.3f | %.3f / %.3f | %.3f | %.2f | "
                "%.2f | %.1f | %.0f%% | %.0f | %s |" % (
                    s["name"], c, x["cpu"][0], x["cpu"][1],
                    x["train_cpu"][0], t, x["wall"][1], rw, rt, gfs,
                    100.0 * gfs / peak, x["rss_mib"],
                    "—" if c == "pflref" else "%.1e" % x["agree"]))
    text = "\n".join(lines)
    log("")
    log("make bench (%s profile): %s, %d cores, %.1f GiB; numpy %s, torch "
        "%s; single-core dgemm peak %.1f GFLOP/s; load average %s" % (
            profile, mach["cpu"], mach["cores"], mach["mem_gib"],
            mach["numpy"], mach["torch"], peak,
            " ".join("%.1f" % a for a in os.getloadavg())))
    log("(×pflref: the contender's median over pflref's; > 1 means pflref "
        "is faster)")
    log(text)
    for s in results:
        ref = s["contenders"].get("pflref")
        if ref and "pflref_baseline_cpu" in s and s["name"] in (
                "fedavg-softmax", "fedavg-mlp", "scale-N1000"):
            log("%s: pflref's 0-round run (reading, checking, evaluating, "
                "writing) is %.0f%% of its whole process" % (
                    s["name"], 100.0 * s["pflref_baseline_cpu"] /
                    ref["cpu"][1]))
        if ref and s.get("data_mib") and s["N"] >= 1000:
            log("%s: pflref's peak RSS %.0f MiB = %.2f × the raw data "
                "(%.0f MiB; target ≤ 1.3)" % (
                    s["name"], ref["rss_mib"], ref["rss_mib"] / s["data_mib"],
                    s["data_mib"]))
    outfile.write(os.path.join(OUT, "table.md"), text + "\n")
    return text


def plot(results):
    dat = os.path.join(OUT, "bench.dat")
    rows = ["workload pflref numpy torch\n"]
    for s in results:
        c = s["contenders"]
        rows.append("%s %s\n" % (s["name"], " ".join(
            "%.6g" % c[k]["train_cpu"][1] if k in c else "NaN"
            for k in ("pflref", "numpy", "torch"))))
    outfile.write(dat, "".join(rows))
    gp = os.path.join(OUT, "bench.gp")
    # the figure on gnuplot's standard output, which outfile writes
    outfile.write(gp, """set terminal svg size 1200,600 dynamic
set output
set title 'make bench: training CPU time, median (s), one core, fp64'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set ylabel 'seconds'
set xtics rotate by -45
set key top left
plot '%s' using 2:xtic(1) title 'pflref', '' using 3 title 'NumPy', \\
     '' using 4 title 'PyTorch'
""" % dat)
    if shutil.which("gnuplot"):
        try:
            outfile.write_with(os.path.join(OUT, "bench.svg"),
                               lambda fd: subprocess.run(["gnuplot", gp],
                                                         stdout=fd, check=True))
        except subprocess.CalledProcessError as e:
            log("bench: gnuplot failed (%s): no plot" % e)
    else:
        log("bench: gnuplot not found (./deps.sh bench): no plot")


def main():
    quick = "--quick" in sys.argv
    only = None
    reps_override = None
    for a in sys.argv[1:]:
        if a.startswith("--only="):
            only = set(a.split("=", 1)[1].split(","))
        if a.startswith("--reps="):
            reps_override = int(a.split("=", 1)[1])
    if not os.path.exists(PFLREF):
        sys.exit("bench: %s is missing (make)" % PFLREF)
    os.makedirs(OUT, exist_ok=True)
    atexit.register(lambda: [os.unlink(p) for p in (
        os.path.join(OUT, ".%s.%d" % (x, os.getpid())) for x in ("rss", "cpu"))
        if os.path.exists(p)])
    t_start = time.perf_counter()
    npy = npy_supported()
    if not npy and "--full" in sys.argv:
        log("bench: no .npy reader: JSON problems at full size (slow "
            "loads), as --full asks; 1000-client runs skipped")
    elif not npy and not quick:
        log("bench: this pflref does not read .npy problem data yet: "
            "running the --quick profile on JSON problems, and skipping "
            "the 1000-client runs (FedAvg and pFedMe from .npy)")
        quick = True
    elif not npy:
        log("bench: no .npy reader: JSON problems; 1000-client runs "
            "skipped")
    profile = "quick" if quick else "full"
    mach = machine()
    peak = dgemm_peak()
    log("bench: single-core dgemm peak %.1f GFLOP/s" % peak)
    results = []
    if only is None or "seed000" in only:
        s = seed000(reps_override or 5)
        if s is not None:
            results.append(s)
            log("bench: seed000 done (%.0f s)" % (time.perf_counter() -
                                                 t_start))
    for w in workloads(quick, npy):
        if (only is not None or w.get("opt_in")) and \
                w["name"] not in (only or ()):
            continue
        if reps_override:
            w["reps"] = reps_override
        peak = max(peak, dgemm_peak(quick=True))
        results.append(run_workload(w, npy, quick))
        log("bench: %s done (%.0f s)" % (w["name"],
                                        time.perf_counter() - t_start))
    report(results, peak, mach, profile)
    outfile.write(os.path.join(OUT, "bench.json"), json.dumps(
        {"format": "pflref-bench/1", "profile": profile,
         "npy": npy, "machine": mach, "dgemm_peak_gflops": peak,
         "agree_limit": AGREE, "workloads": results,
         "seconds": time.perf_counter() - t_start}, indent=1))
    plot(results)
    bad = [(s["name"], c, x["agree"]) for s in results
           for c, x in s["contenders"].items() if x["agree"] > AGREE]
    log("bench: %d workloads in %.0f s; build/bench/bench.json, table.md, "
        "bench.svg" % (len(results), time.perf_counter() - t_start))
    if bad:
        sys.exit("bench: contenders disagree: %s" % bad)


if __name__ == "__main__":
    main()
