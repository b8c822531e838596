#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# proofs/run.sh: the machine-checked part of pflref (proofs/README.md).
#
#  1. Frama-C WP proves the index kernels of ref/ against their ACSL
#     contracts, runtime-error guards included (-wp-rte, with unsigned
#     overflow counted as an error), with Z3 and CVC4 through Why3; it prints
#     proved/total per function and fails on any unproved goal.
#  2. The negative controls (proofs/negative.txt): one planted bug per proved
#     function, each in a copy of the real file, and the goal WP must then
#     fail to prove, named.  A control counts only when its goal is proved
#     in step 1's run of the unmodified file (else it would catch nothing),
#     and a goal counts as failed only when a prover answered Unknown or
#     stopped at its step limit: a crashed or missing prover, or one stopped
#     by the hang guard, does not count (a self-test below runs one control
#     with crashing provers and requires that it is NOT taken as a caught
#     bug).
#  3. Coq (proofs/coq/): every .v file compiles, and none holds Admitted,
#     admit or an Axiom.  The files of proofs/wpcoq/gen/, which the joints
#     (proofs/coq/ClusterJoint.v, SamplerJoint.v) read, must be WP's Coq
#     translation of their ACSL as WP prints it today (proofs/wpcoq/
#     export.sh --check), and each negative control of proofs/wpcoq/
#     controls.txt (an ACSL definition changed) must make its joint fail in
#     the theorem it names.
#  0. Gappa (proofs/gappa/, run first: seconds): every script proves its
#     rounding-error bound (the floating-point kernels, and the vectors
#     whose tolerance a bound justifies); the scripts are the ones their
#     generators write (make_*.py --check); and every script's control,
#     its bound one step tighter (its "# control:" line), must NOT prove,
#     with Gappa's own "not satisfied" (a syntax error is no caught
#     control); and a frozen vector's tolerance is derived from the
#     bounds (proofs/gappa/derive_tolerance.py, tested by
#     tests/lint/test_derive_tolerance.py, which freezes with the CLI:
#     PFLREF_CLI, else build/rel/pflref).  PROOFS_GAPPA_ONLY=1 runs this
#     step alone (it needs only gappa, python3 and the CLI).
#
#     proofs/run.sh            (make proofs installs the tools first)
#
# For whoever edits proofs/negative.txt: PROOFS_SHOW_NEGATIVE=1 skips the
# proofs and lists the goals each mutant fails; PROOFS_NEGATIVE_ONLY=f,g
# runs only the controls of those functions.  The jobs, then the controls, run
# on PROOFS_WORKERS workers at a time (2 by default: the machines it runs
# on have two cores).
#
# The verdicts do not depend on the machine's speed or load: every prover
# stops at a count of its own resource units (a step limit), which a goal
# uses the same on any machine, not at a number of seconds.  The jobs and
# the controls run under the same limits.  A wall-clock limit remains only
# as a hang guard, far above what any goal needs even on a loaded machine;
# a prover it stops counts as neither a proof nor a caught bug.
#
# The prover results are cached (proofs/cache/, kept in the repository):
# WP names each entry by a digest of the goal exactly as the prover reads
# it, the prover and its version, and the limits, so an entry is reused
# only for the identical question to the identical prover; any change to
# a contract, to the code or to the limits is a new goal, which the
# provers decide.  PROOFS_CACHE selects the use:
#   replay   (the default) use the entries, prove what has none, add none;
#   none     ignore the cache: every goal goes to the provers;
#   update   as replay, and add the results of what was proved;
#   rebuild  prove everything and write a fresh cache (make proofs-cache;
#            it drops the entries no goal uses any more).
# The crash self-test at the end never reads the cache.  The entries hold
# results of Z3 and CVC4 under the step limits below, which
# proofs/cache/LIMITS names; a cache written under other limits or prover
# versions is not read.  Gappa's answers (step 0) are kept the same way in
# proofs/gappa/cache/, each named by a digest of Gappa's version line and
# the script's text, under the same PROOFS_CACHE (the scripts themselves
# are still checked against their generators, and every recorded answer
# is read and judged as a live one would be: enclosures against the
# stated bounds, a control's refusal).
#
# WP's own work (parsing, generating and simplifying the goals) is recorded
# too: a run record (proofs/records/, below "run records") is the report of
# a job or a control that passed, named by a digest of its preprocessed
# translation unit, its options, limits and goal, and the tools' versions;
# a run whose name has a record is replayed, any other runs live, under
# the same PROOFS_CACHE.
#
# Exit status: 0 everything above holds; 1 otherwise; 2 a tool is missing.
set -eu
cd "$(dirname "$0")/.."

PROVERS=z3,cvc4
# The step limits per goal (proofs/README.md: their calibration), each in
# its prover's own unit: Z3's rlimit, CVC4's resource units (--rlimit).
# The goal that needs most of Z3 takes under half of its limit (5.5
# million); of CVC4, 576 thousand, and the next 462 thousand (measured;
# proofs/README.md, "Calibration").  A planted bug's goal is false,
# and a prover often spends its whole limit before it gives up, so the
# limits are what the negative controls cost: they are kept near twice
# what the proofs need, not more.  WP passes a single limit (-wp-steps) to
# every prover, and the two units are some fifteen times apart, so the
# Why3 configuration of the run (below) writes CVC4's limit into CVC4's
# command; -wp-steps is Z3's.  (Not the other way round: WP checks a cached
# answer's step count against -wp-steps, so with CVC4's limit there a goal
# Z3 proved in more than CVC4_STEPS of its units replayed as a step-out.)
Z3_STEPS=12000000
CVC4_STEPS=800000
# A negative control's limits.  Its goal is false, and a prover may spend
# its whole limit before it gives up, so a control runs at these smaller
# limits when they are at least CONTROL_MARGIN times the steps the goal
# took in step 1's proof of the unmodified file (its prover's unit; a goal
# Qed proved took none), and at the full limits above otherwise: the mutant
# always gets four times what the correct code needed.
Z3_CONTROL=2000000
CVC4_CONTROL=100000
CONTROL_MARGIN=4
# The hang guard (seconds, wall clock; WP stops a prover at GUARD + 2 s).
# A prover at its step limit takes under 30 s of processor time, and on a
# two-core machine loaded eight times over gets a quarter of a core: the
# guard is far above that, so that it stops only a prover that hangs.
GUARD=900
# Frama-C's own libc first; /usr/include last, for GSL's headers only.
CPP="-Iinclude -Iref -D_POSIX_C_SOURCE=200809L -idirafter /usr/include"
RTE="-wp-rte -warn-unsigned-overflow"

# The proofs, one job per line: name | file | WP options | functions.
#   rte         every property and every runtime-error guard;
#   calls       the callers of the kernels: each kernel's preconditions at
#               its call site, the callers' loop invariants and
#               postconditions (their own runtime guards are in rte_assert,
#               or they only format error messages);
#   rte_assert  the runtime-error guards of the function that reads the
#               indices the kernels vouched for;
#   rte_real    as rte, with a double taken for its real value (WP's
#               typed+real model) and no special-float guards: for the
#               kernels that only copy or compare doubles (finite ones),
#               or, for pflref_accumulate, compute one whose value is not
#               claimed; their index and assigns goals are the same;
#   calls_real  the algorithms' call sites of the block kernels: as calls,
#               with their own assigns, loop assigns and assertions, under the
#               typed+real model (their contexts hold doubles, on which
#               CVC4 1.8's floating-point theory gives up);
#   calls_in_reals  as calls, under the typed+real model: for a file
#               whose ACSL lemmas compare doubles (ref/engine/cluster.c),
#               since every goal's task carries every lemma of its file
#               and CVC4 1.8's floating-point theory gives up on them;
#   lemmas      the ACSL lemmas of the file (the listed names are the
#               lemmas, prefixed lemma_), which the other jobs use.
JOBS='ids | ref/sampling/ids.c | rte | pflref_ids_first_bad,pflref_index_first_out_of_range,pflref_size_mul_sat,pflref_size_add_sat,pflref_steps_first_bad,pflref_step_of,pflref_marks_set,pflref_selected_first_bad,pflref_drawn_first_bad,pflref_ids_iota,pflref_batch_copy
shuffle | ref/sampling/shuffle.c | rte | pflref_interval_mask,pflref_interval_draw,pflref_numpy_permutation
metrics | ref/core/metrics.c | rte | quantile_lo,worst_decile
metrics real | ref/core/metrics.c | rte_real | type7_at,pflref_quantile_sorted
schedule_check calls | ref/sampling/schedule_check.c | calls | validate_batches,check_participants,check_selected,validate_round,pflref_schedule_validate
schedule_check guards | ref/sampling/schedule_check.c | rte_assert | validate_round
schedule calls | ref/sampling/schedule.c | calls | choose_round,check_work_size,fill_batches
schedule | ref/sampling/schedule.c | rte | work_size_of,count_schedule
sampler calls | ref/sampling/sampler.c | calls | pflref_sampler_choose
cluster | ref/engine/cluster.c | rte_real | upper,subtree_side,merge_cluster
cluster real | ref/engine/cluster.c | rte_real | edge_before,prim_next,prim_keys,max_spanning_tree,last_tree_edge,optimal_bipartition,linkage_update,best_merge,complete_linkage
cluster lemmas | ref/engine/cluster.c | lemmas | lemma_edge_pos_sorted,lemma_square_fits_rank,lemma_row_unique,lemma_link_pos_sym,lemma_link_pos_rows,lemma_link_pos_in,lemma_link_pos_ends,lemma_link_pos_inj,lemma_clink_sym,lemma_clink_frame,lemma_clink_merge
cluster calls | ref/engine/cluster.c | calls_in_reals | pflref_cluster_bipartition
vec | ref/core/vec.c | rte_real | pflref_compose,pflref_accumulate
vec finite | ref/core/vec.c | rte | pflref_all_finite
sgd | ref/engine/sgd.c | rte_real | pflref_share_to_all,pflref_local_sgd_plain
sgd lemmas | ref/engine/sgd.c | lemmas | lemma_block_before,lemma_block_inside,lemma_block_ends_before,lemma_block_composed_kept,lemma_row_composed_kept
model | ref/models/model.c | rte | block_mask,pflref_split_mask,pflref_model_blocks_inside
ifca | ref/algorithms/ifca.c | rte_real | lowest_loss
schedule generate calls | ref/sampling/schedule.c | calls | check_counts,check_work,check_config,check_counted,fill_client,fill_trainers,fill_round,fill_schedule,pflref_schedule_generate
schedule generate guards | ref/sampling/schedule.c | rte_assert | check_counts,fill_client,fill_trainers,fill_round,fill_schedule,pflref_schedule_generate
state | ref/engine/state.c | rte_real | state_zero,state_rest_alloc,copy_rows,state_arrays_init
state alloc | ref/engine/state.c | rte_real | pflref_state_alloc
state lemmas | ref/engine/state.c | lemmas | lemma_product_fits
engine row | ref/engine/engine.h | rte_real | pflref_row
vec copy | ref/core/vec.h | rte_real | pflref_copy
fedalt calls | ref/algorithms/fedalt.c | calls_real | pfl_round,pfl_finetune,pfl_load_state
pflego calls | ref/algorithms/pflego.c | calls_real | pflego_round_with,client_round,server_step
fedbn calls | ref/algorithms/fedbn.c | calls_real | fedbn_round_with
fedavg calls | ref/algorithms/fedavg.c | calls_real | pflref_fedavg_round_with
round | ref/engine/round.c | rte_real | pflref_round_begin,pflref_client_begin,pflref_client_end,pflref_server_publish,pflref_round_end,pflref_post_begin,pflref_post_end
pfedme calls | ref/algorithms/pfedme.c | calls_real | pfedme_round_with,client_update
pfedme helpers | ref/algorithms/pfedme.c | rte_real | is_selected,first_training
ditto calls | ref/algorithms/ditto.c | calls_real | ditto_round_with
prox_inner job | ref/engine/prox_inner.c | calls_real | pflref_prox_inner_job
perfedavg calls | ref/algorithms/perfedavg.c | calls_real | perfedavg_round_with,perfedavg_finish_with
apfl calls | ref/algorithms/apfl.c | calls_real | apfl_round_with,client_rates,client_steps,apfl_step,pfllib_step,alpha_step,client_finish
apfl helpers | ref/algorithms/apfl.c | rte_real | clip01
ifca calls | ref/algorithms/ifca.c | calls_real | assign_all,machine_update,server_update,ifca_round_with
cfl calls | ref/algorithms/cfl.c | calls_real | cluster_update,local_updates,split_cluster,emit_similarity,test_cluster,apply_updates,cfl_round_with
cfl lemmas | ref/algorithms/cfl.c | lemmas | lemma_square_below,lemma_row_of_square'

# ---- the rebuilt caches ----------------------------------------------------
# install_fresh LABEL NEW DEST PATTERN WHAT FAILED: after PROOFS_CACHE=rebuild,
# replace the folder DEST by NEW's files named PATTERN (a `find -name`
# pattern) when FAILED is 0, and say how many WHAT it wrote; otherwise keep
# DEST and say why not.
install_fresh() {
    if [ "$6" -eq 0 ]; then
        rm -rf "$3"
        mkdir -p "$3" "$2"
        find "$2" -type f -name "$4" -exec cp {} "$3"/ \;
        echo "proofs: $1: $(find "$3" -type f -name "$4" | wc -l) $5 written to $3"
    else
        echo "proofs: $1: not written (the run failed)"
    fi
}

# ---- 0. Gappa: the floating-point bounds -----------------------------------
# gappa_step: prints one line per script and per control; fails (returns 1)
# when a script does not prove, a control proves, or a script is stale.
# The scripts run on WORKERS workers (proofs/gappa/check_one.sh each), their
# lines printed afterwards in the scripts' order.
gappa_step() {
    gst=0
    for gen in proofs/gappa/make_*.py; do
        if ! python3 "$gen" --check; then
            echo "proofs: gappa: $gen --check: the scripts are not the ones it writes"
            gst=1
        fi
    done
    glog=$(mktemp -d)
    # Gappa's recorded answers (proofs/gappa/cache/, read and written by
    # proofs/gappa/gappa_common.py): PROOFS_CACHE as for WP's cache below
    GAPPA_CACHE_READ=""; GAPPA_CACHE_WRITE=""
    case "$CACHE_MODE" in
        replay) GAPPA_CACHE_READ="$PWD/$GAPPA_CACHE" ;;
        update) GAPPA_CACHE_READ="$PWD/$GAPPA_CACHE"
                GAPPA_CACHE_WRITE="$PWD/$GAPPA_CACHE" ;;
        rebuild) GAPPA_CACHE_WRITE="$glog/cache"
                 mkdir -p "$glog/cache" ;;
    esac
    GAPPA_CACHE_LOG="$glog/answers"
    : >"$GAPPA_CACHE_LOG"
    export GAPPA_CACHE_READ GAPPA_CACHE_WRITE GAPPA_CACHE_LOG
    n=0
    for g in proofs/gappa/kernels/*.g proofs/gappa/vectors/*.g; do
        [ -f "$g" ] || continue
        n=$((n + 1))
        printf '%05d %s\n' "$n" "$g"
    done >"$glog/list"
    # each line "N SCRIPT" (sh -c's $1 and $2, $0 the folder): the script's
    # lines go to $glog/N.log, and a failure leaves $glog/N.failed
    xargs -P "$WORKERS" -L 1 sh -c \
        'sh proofs/gappa/check_one.sh "$2" >"$0/$1.log" 2>&1 || : >"$0/$1.failed"' \
        "$glog" <"$glog/list"
    while read -r k g; do
        cat "$glog/$k.log"
        [ -e "$glog/$k.failed" ] && gst=1
    done <"$glog/list"
    # a frozen vector's tolerance derived from these bounds
    # (proofs/gappa/derive_tolerance.py): its test freezes shipped specs
    # with the CLI (PFLREF_CLI, which `make proofs` builds and sets)
    if ! python3 tests/lint/test_derive_tolerance.py; then
        echo "proofs: gappa: tests/lint/test_derive_tolerance.py failed"
        gst=1
    fi
    # scripts and controls alike: one line each in $glog/answers
    echo "proofs: gappa: cache ($CACHE_MODE): found $(grep -c '^found$' "$glog/answers"), missed $(grep -c '^missed$' "$glog/answers"), written $(grep -c '^written$' "$glog/answers") answers"
    [ "$CACHE_MODE" != rebuild ] ||
        install_fresh "gappa: cache" "$glog/cache" "$GAPPA_CACHE" '*.json' answers "$gst"
    unset GAPPA_CACHE_READ GAPPA_CACHE_WRITE GAPPA_CACHE_LOG
    rm -rf "$glog"
    return $gst
}

for tool in gappa python3; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "proofs/run.sh: $tool not found (./deps.sh proofs installs it)" >&2
        exit 2
    fi
done
WORKERS=${PROOFS_WORKERS:-2}
# The caches' use (see the head of this file; WP's, below, also checks
# proofs/cache/LIMITS)
CACHE_MODE=${PROOFS_CACHE:-replay}
case "$CACHE_MODE" in
    replay|update|none|rebuild) ;;
    *) echo "proofs/run.sh: PROOFS_CACHE is replay, update, none or rebuild" >&2
       exit 2 ;;
esac
GAPPA_CACHE=proofs/gappa/cache
gappa_status=0
gappa_step || gappa_status=1
if [ -n "${PROOFS_GAPPA_ONLY:-}" ]; then
    [ "$gappa_status" -eq 0 ] && echo "proofs: gappa: every bound proved, every control failed" ||
        echo "proofs: gappa: FAILED"
    echo "proofs: PARTIAL RUN (PROOFS_GAPPA_ONLY): the Gappa step alone"
    exit "$gappa_status"
fi

for tool in frama-c why3 z3 cvc4 coqc setsid; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "proofs/run.sh: $tool not found (./deps.sh proofs installs it)" >&2
        exit 2
    fi
done
# Why3 must know both provers; detect them once per user, then insist.
if ! why3 config list-provers 2>/dev/null | grep -q "Z3" ||
   ! why3 config list-provers 2>/dev/null | grep -q "CVC4"; then
    why3 config detect >/dev/null 2>&1 || true
fi
for p in Z3 CVC4; do
    if ! why3 config list-provers 2>/dev/null | grep -q "^$p "; then
        echo "proofs/run.sh: Why3 does not know $p (why3 config detect)" >&2
        exit 2
    fi
done

# trim TEXT: TEXT without its leading and trailing blanks (one line; a
# "\n" in it stays two characters until awk reads it).
trim() {
    printf '%s' "$1" | sed 's/^ *//; s/ *$//'
}

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

# The cache (see the head of this file): its key names the limits and the
# provers' versions, which WP's own digest does not all cover (Z3's limit
# is in the Why3 command, below).
CACHE_DIR=proofs/cache
CACHE_KEY="wp-steps z3; z3 $Z3_STEPS $Z3_CONTROL cvc4 $CVC4_STEPS $CVC4_CONTROL margin $CONTROL_MARGIN; $(z3 --version 2>&1 | head -n 1); $(cvc4 --version 2>&1 | head -n 1)"
case "$CACHE_MODE" in
    none) ;;
    replay|update)
        if [ "$(cat "$CACHE_DIR/LIMITS" 2>/dev/null)" != "$CACHE_KEY" ]; then
            echo "proofs: cache: $CACHE_DIR/LIMITS does not name this run's limits and provers; every goal goes to the provers"
            CACHE_MODE=none
        fi ;;
    rebuild)
        CACHE_NEW="$log/cache"
        mkdir -p "$CACHE_NEW" ;;
esac
# cache_opts: WP's cache options for this run ("" for none).
cache_opts() {
    case "$CACHE_MODE" in
        none) ;;
        replay) printf '%s' "-wp-cache replay -wp-cache-dir $PWD/$CACHE_DIR" ;;
        update) printf '%s' "-wp-cache update -wp-cache-dir $PWD/$CACHE_DIR" ;;
        rebuild) printf '%s' "-wp-cache update -wp-cache-dir $CACHE_NEW" ;;
    esac
}

# The run's own Why3 configuration: the user's (every prover's command in
# full), with CVC4's step limit in place of -wp-steps in CVC4's command for
# a step limit (--rlimit=%S).  Every WP call below reads it.
why3 config show 2>/dev/null |
    sed "/cvc4/s/ --rlimit=%S / --rlimit=$CVC4_STEPS /" >"$log/why3.conf"
if ! grep -q "^command_steps = .*z3 .* rlimit=%S " "$log/why3.conf" ||
   ! grep -q "^command_steps = .*cvc4 .* --rlimit=$CVC4_STEPS " "$log/why3.conf"; then
    echo "proofs/run.sh: Why3 has no step-limited command for Z3 (rlimit=%S) or CVC4 (--rlimit=%S)" >&2
    exit 2
fi
WHY3CONFIG="$log/why3.conf"
export WHY3CONFIG

# ---- run records (proofs/records/) ------------------------------------------
# A record is the report of one WP run (a job, or a negative control) that
# passed: its goal lines and the provers' lines under them, nothing else.
# It is named by the SHA-256 of everything the run's verdicts depend on:
# the translation unit as Frama-C's preprocessor makes it (its command,
# below: the file, every header it includes, Frama-C's own libc, GSL's
# headers, comments and so the ACSL kept), the WP options, the functions,
# the provers' limits, the control's goal, and the versions of Frama-C,
# Why3, the provers and gcc.  The same name is the same question put to
# the same tools, which answer it the same on every machine (the step
# limits), so a record stands in for the run; a run with no record runs
# live.  PROOFS_CACHE chooses as for the prover cache: replay reads the
# records, update reads them and records the passing runs it made live,
# rebuild runs everything live and replaces the folder when the whole run
# passed, none neither reads nor writes them.  The crash self-test and
# PROOFS_SHOW_NEGATIVE never use them.
RECORDS=proofs/records
FRAMAC_SHARE=$(frama-c -print-share-path)
TOOLS="$(frama-c -version 2>&1 | head -n 1); $(why3 --version 2>&1 | head -n 1); gcc $(gcc -dumpfullversion)"

# records_read: whether this run replays records; records_dir: the folder
# this run writes records into ("" for none).
records_read() {
    [ -z "${PROOFS_SHOW_NEGATIVE:-}" ] || return 1
    case "$CACHE_MODE" in replay|update) return 0 ;; esac
    return 1
}
records_dir() {
    [ -z "${PROOFS_SHOW_NEGATIVE:-}" ] || return 0
    case "$CACHE_MODE" in
        update) printf '%s' "$RECORDS" ;;
        rebuild) printf '%s' "$log/records" ;;
    esac
}

# cvc4_limit: CVC4's step limit in the Why3 configuration WP reads now.
cvc4_limit() {
    sed -n 's/^command_steps = .*cvc4.* --rlimit=\([0-9][0-9]*\) .*/\1/p' "$WHY3CONFIG" |
        head -n 1
}

# record_name FILE RUN: the record's name for a WP run RUN (its options,
# functions, limits and goal) of FILE.  Frama-C's preprocessing command
# (frama-c -kernel-msg-key pp prints it), with -P: no line markers, which
# name the file's folder (a control's is temporary).
record_name() {
    # shellcheck disable=SC2086
    { printf '%s\n%s\n%s\n' "$CACHE_KEY" "$TOOLS" "$2"
      gcc -E -C -P -dD -I. -I"$FRAMAC_SHARE/libc" -D__FRAMAC__ \
          -D__FC_MACHDEP_X86_64 -nostdinc -m64 $CPP "$1" 2>&1
    } | sha256sum | cut -c1-64
}

# record_keep OUT TITLE: OUT, the output of a WP run that passed, becomes
# its record (when this run writes records and OUT was run live).
# (Its variables are its own: the shell's are global, and a caller's dir
# is a folder it removes.)
record_keep() {
    keep_dir=$(records_dir)
    [ -n "$keep_dir" ] && [ -f "$1.key" ] || return 0
    keep_name=$(cat "$1.key")
    mkdir -p "$keep_dir"
    # (without the times WP prints, which differ from run to run; a prover's
    # step count, which control_limits reads, stays)
    { printf '# %s\n' "$2"
      grep -E '^\[wp\] \[[^]]*\] Goal |^\[wp\] Proved goals:|^  [^ :][^:]*: [A-Z]' "$1" |
          sed -E 's/ \((Qed:)?[0-9]+(\.[0-9]+)?m?s\)//g'
    } >"$keep_dir/$keep_name.tmp.$$"
    mv "$keep_dir/$keep_name.tmp.$$" "$keep_dir/$keep_name"
    echo recorded >>"$log/records.log"
}

# wp FILE KIND FUNCTIONS OUT [PROPERTIES [GOAL]]: run WP, output in OUT;
# PROPERTIES (-wp-prop's syntax) narrows the goals to those properties;
# with GOAL, WP stops once it has reported GOAL (a negative control reads
# nothing else: the goals after it would only cost time).
wp() {
    case "$2" in
        rte) opts="$RTE" ;;
        calls) opts="-wp-prop=@requires,@invariant,@ensures" ;;
        calls_in_reals) opts="-wp-model typed+real -warn-special-float none -wp-prop=@requires,@invariant,@ensures" ;;
        calls_real) opts="-wp-model typed+real -warn-special-float none -wp-prop=@requires,@invariant,@ensures,@assigns,@assert" ;;
        rte_assert) opts="$RTE -wp-prop=@assert" ;;
        rte_real) opts="$RTE -wp-model typed+real -warn-special-float none" ;;
        lemmas) opts="-wp-model typed+real -wp-prop=@lemma" ;;
        *) echo "proofs/run.sh: unknown job kind $2" >&2; exit 1 ;;
    esac
    # A negative control asks only for its goal's kind of property.
    if [ -n "${5:-}" ]; then
        opts="$(printf '%s' "$opts" | sed 's/-wp-prop=[^ ]*//') -wp-prop=$5"
    fi
    fct="-wp-fct $3"
    [ "$2" != lemmas ] || fct=""
    # The run record of this WP run (below), replayed when there is one
    rm -f "$4.key"
    if records_read || [ -n "$(records_dir)" ]; then
        wp_record=$(record_name "$1" "$opts | $fct | ${z3_limit:-$Z3_STEPS} $(cvc4_limit) | ${6:-}")
        printf '%s\n' "$wp_record" >>"$log/records.names"
        if records_read && [ -f "$RECORDS/$wp_record" ]; then
            cp "$RECORDS/$wp_record" "$4"
            echo replayed >>"$log/records.log"
            return
        fi
        printf '%s\n' "$wp_record" >"$4.key"
        echo live >>"$log/records.log"
    fi
    if [ -z "${6:-}" ]; then
        # shellcheck disable=SC2086
        nice frama-c -variadic-no-translation -cpp-extra-args="$CPP" \
            -wp $opts $fct -wp-prover "$PROVERS" -wp-steps "$Z3_STEPS" \
            -wp-timeout "$GUARD" $(cache_opts) "$1" >"$4" 2>&1 || true
        return
    fi
    # In a session of its own, so that stopping it stops its Why3 server
    # and provers too; WP prints a goal's report (its line and one line
    # per prover) at once.
    # shellcheck disable=SC2086
    setsid nice frama-c -variadic-no-translation -cpp-extra-args="$CPP" \
        -wp $opts $fct -wp-prover "$PROVERS" -wp-steps "${z3_limit:-$Z3_STEPS}" \
        -wp-timeout "$GUARD" $(cache_opts) "$1" >"$4" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        # (-s: WP may not have made its output file yet)
        if grep -Eqs "Goal $6( :|\$)" "$4"; then
            sleep 1
            kill -TERM "-$pid" 2>/dev/null || true
            exit 0
        fi
        sleep 1
    done &
    watch=$!
    # (the shell would report the killed session as "Terminated")
    { wait "$pid"; } 2>/dev/null || true
    kill "$watch" 2>/dev/null || true
    wait "$watch" 2>/dev/null || true
}

# per_function FUNCTIONS OUT: "function proved total" for each function,
# from WP's goal lines (typed_<function>_<property>), then "= proved total"
# from WP's summary line.
per_function() {
    awk -v fns="$1" '
        BEGIN { n = split(fns, f, ",") }
        /^\[wp\] .*Goal typed_/ {
            g = $0; sub(/.*Goal typed_(real_)?/, "", g); sub(/ .*/, "", g)
            best = ""
            for (i = 1; i <= n; i++)
                if ((g == f[i] || index(g, f[i] "_") == 1) &&
                    length(f[i]) > length(best))
                    best = f[i]
            if (best == "") best = "?"
            total[best]++
            if ($0 ~ /: Valid/) proved[best]++
        }
        /Proved goals:/ { sub(/.*Proved goals: */, ""); split($0, s, "/")
                          wp_p = s[1] + 0; wp_t = s[2] + 0 }
        END {
            for (i = 1; i <= n; i++)
                printf "%s %d %d\n", f[i], proved[f[i]] + 0, total[f[i]] + 0
            if ("?" in total) printf "? %d %d\n", proved["?"] + 0, total["?"]
            printf "= %d %d\n", wp_p + 0, wp_t + 0
        }' "$2"
}

# goal_status GOAL OUT: from WP's output OUT, valid | caught (not proved;
# a prover answered Unknown or stopped at its step limit, and every other
# one too or failed: the same on every machine) | guard (not proved; a
# prover ran into the hang guard, so whether it would have proved the goal
# within its step limit is not known) | crashed (not proved; every prover
# failed or none ran) | absent.  WP reports a goal on one line ([wp] [Prover] Goal G :
# answer) or, when no prover proves it, as [wp] [Failed] Goal G followed
# by one line per prover (  Prover: answer).
goal_status() {
    awk -v goal="$1" '
        /^\[wp\] / { inside = 0 }
        /^\[wp\] .*Goal / {
            g = $0; sub(/.*Goal /, "", g); sub(/ .*/, "", g)
            if (g != goal) next
            seen = 1
            if ($0 ~ /: Valid/) { valid = 1; next }
            if ($0 ~ / : (Unknown|Step limit)/) gaveup = 1
            if ($0 ~ / : Timeout/) guard = 1
            inside = 1; next
        }
        inside && /^  [^:]*: (Unknown|Step limit)/ { gaveup = 1 }
        inside && /^  [^:]*: Timeout/ { guard = 1 }
        END {
            if (!seen) print "absent"
            else if (valid) print "valid"
            else if (guard) print "guard"
            else if (gaveup) print "caught"
            else print "crashed"
        }' "$2"
}

status=$gappa_status

# Two workers share the jobs and, after them, the controls (job k goes to
# worker k mod WORKERS); each item writes its report to a file of its own,
# printed in list order once all are done, so the output does not depend
# on the interleaving.  PROOFS_WORKERS=1 runs everything in turn.  (WORKERS
# is set before step 0, whose Gappa scripts share it.)

# ---- 1. the proofs ---------------------------------------------------------
# prove_job K LINE: job K (a line of JOBS) in $log/out.K; its report on
# the output, and $log/failed.K when a goal is unproved.
prove_job() {
    printf '%s\n' "$2" | {
        IFS='|' read -r name file kind fns
        name=$(trim "$name"); file=$(trim "$file"); kind=$(trim "$kind")
        fns=$(trim "$fns")
        out="$log/out.$1"
        wp "$file" "$kind" "$fns" "$out"
        per_function "$fns" "$out" >"$log/counts.$1"
        bad=0
        while read -r fn p t; do
            case "$fn" in
                "=") [ "$t" -gt 0 ] && [ "$p" -eq "$t" ] || bad=1 ;;
                "?") echo "proofs: $file: $t goals of no listed function"; bad=1 ;;
                *) mark="ok"
                   if [ "$t" -eq 0 ] || [ "$p" -ne "$t" ]; then
                       mark="NOT PROVED"; bad=1
                   fi
                   printf 'proofs: %-30s %-34s %3d/%-3d %s (%s)\n' "$file" \
                       "$fn" "$p" "$t" "$mark" "$kind" ;;
            esac
        done <"$log/counts.$1"
        if [ "$bad" -ne 0 ]; then
            echo "proofs: $name: unproved goals; WP said:"
            grep -E "Unknown|Step limit|Timeout|Failed|Error|error" "$out" |
                head -20
            echo fail >"$log/failed.$1"
        else
            record_keep "$out" "$file | $kind | $fns"
        fi
    }
}

# spread LIST FUNCTION: FUNCTION K LINE for every line K of the file LIST,
# line K on worker K mod WORKERS, each report in LIST.r.K; then the
# reports in list order.
spread() {
    w=0
    while [ "$w" -lt "$WORKERS" ]; do
        k=0
        while IFS= read -r line; do
            [ $((k % WORKERS)) -ne "$w" ] ||
                "$2" "$k" "$line" >"$1.r.$k" 2>&1
            k=$((k + 1))
        done <"$1" &
        w=$((w + 1))
    done
    wait
    k=0
    n=$(($(wc -l <"$1")))
    while [ "$k" -lt "$n" ]; do
        cat "$1.r.$k"
        k=$((k + 1))
    done
}

[ -n "${PROOFS_SHOW_NEGATIVE:-}" ] && JOBS_RUN="" || JOBS_RUN="$JOBS"
# PROOFS_ONLY=REGEX (for whoever edits a proved file) runs only the jobs
# whose name matches; such a run is partial and says so at its end.
# Their controls run (unless PROOFS_NEGATIVE_ONLY names others); the cache
# is never rebuilt from such a run.
if [ -n "${PROOFS_ONLY:-}" ]; then
    [ "$CACHE_MODE" != rebuild ] ||
        { echo "proofs: PROOFS_ONLY cannot rebuild the cache" >&2; exit 2; }
    JOBS_RUN=$(printf '%s\n' "$JOBS_RUN" | grep -E "^(${PROOFS_ONLY}) *[|]" || true)
    [ -n "$JOBS_RUN" ] ||
        { echo "proofs: PROOFS_ONLY=$PROOFS_ONLY matches no job" >&2; exit 2; }
    : "${PROOFS_NEGATIVE_ONLY:=$(printf '%s\n' "$JOBS_RUN" | cut -d'|' -f4 | tr -d ' ' | paste -sd, -)}"
fi
printf '%s\n' "$JOBS_RUN" | grep -v '^ *$' >"$log/jobs" || true
spread "$log/jobs" prove_job
if ls "$log"/failed.* >/dev/null 2>&1; then status=1; fi

# ---- 2. the negative controls ---------------------------------------------
# mutate FILE FROM TO OUT: OUT is FILE with the one occurrence of FROM
# (\n for a newline) replaced by TO; fails unless FROM occurs exactly once.
mutate() {
    awk -v from="$2" -v to="$3" '
        { text = text $0 "\n" }
        END {
            gsub(/\\n/, "\n", from); gsub(/\\n/, "\n", to)
            i = index(text, from)
            if (i == 0) exit 3
            rest = substr(text, i + length(from))
            if (index(rest, from) > 0) exit 4
            printf "%s%s%s", substr(text, 1, i - 1), to, rest
        }' "$1" >"$4"
}

# goal_kind GOAL: the -wp-prop category WP names GOAL from (empty: every
# property), so a control proves only goals of its named goal's kind (the
# names and their numbers do not depend on the selection); with
# PROOFS_SHOW_NEGATIVE, every property, to list all the goals a mutant fails.
goal_kind() {
    [ -z "${PROOFS_SHOW_NEGATIVE:-}" ] || return 0
    case "$1" in
        *_lemma_*) echo "@lemma" ;;
        *_loop_invariant*) echo "@invariant" ;;
        *_call_*_requires*) echo "@requires" ;;
        *_assert*) echo "@assert" ;;
        *_ensures*) echo "@ensures" ;;
        *) echo "" ;;
    esac
}

# negative DIR FUNCTION FILE KIND FROM TO GOAL LIMITS: prints "caught", or
# why not (the mutant and WP's output in DIR); LIMITS "Z3 CVC4" are the
# step limits of the control's provers.  FILE is the file WP proves, or
# FILE:HEADER when the bug is planted in HEADER, a proof header
# (proofs/acsl/) that FILE includes.  The mutant is a copy of the tree's
# FILE beside a copy of proofs/acsl/ (a file of ref/ includes its proof
# header by its path relative to itself), the bug planted in one of them.
negative() {
    target=${3%%:*}
    planted=${3#*:}
    mkdir -p "$1/m/$(dirname "$target")" "$1/m/proofs"
    cp -R proofs/acsl "$1/m/proofs/"
    [ "$planted" = "$target" ] || cp "$target" "$1/m/$target"
    mutant="$1/m/$target"
    if ! mutate "$planted" "$5" "$6" "$1/m/$planted"; then
        echo "stale: the text to mutate is not in $planted exactly once"
        return
    fi
    if [ -n "${PROOFS_SHOW_NEGATIVE:-}" ]; then
        wp "$mutant" "$4" "$2" "$1/neg" ""
    else
        # the control's limits ($8: "Z3 CVC4", from control_limits)
        z3_limit=${8% *}
        sed "s/ --rlimit=$CVC4_STEPS / --rlimit=${8#* } /" "$WHY3CONFIG" \
            >"$1/why3.conf"
        WHY3CONFIG="$1/why3.conf" wp "$mutant" "$4" "$2" "$1/neg" \
            "$(goal_kind "$7")" "$7"
        z3_limit=
    fi
    st=$(goal_status "$7" "$1/neg")
    [ "$st" != caught ] || [ -n "${PROOFS_SHOW_NEGATIVE:-}" ] ||
        record_keep "$1/neg" "control of $2 | $3 | $4 | $7"
    [ "$st" != guard ] ||
        st="guard: a prover ran into the hang guard ($GUARD s) before its step limit"
    echo "$st"
}

# job_output FUNCTION FILE KIND: the WP output of step 1's job that proves
# FUNCTION of FILE as KIND; nothing when there is none.
job_output() {
    k=0
    while IFS='|' read -r name jfile jkind jfns; do
        if [ "$(trim "$jfile")" = "$2" ] && [ "$(trim "$jkind")" = "$3" ]; then
            case ",$(trim "$jfns")," in
                *",$1,"*) echo "$log/out.$k"; return ;;
            esac
        fi
        k=$((k + 1))
    done <"$log/jobs"
}

# proved_before FUNCTION FILE KIND GOAL: GOAL's status in step 1's run of
# the job that proves FUNCTION of FILE as KIND (valid, or what it was
# there); "unchecked" when the proofs were skipped.  A control whose goal
# is not proved there would be caught without its bug.
proved_before() {
    [ -z "${PROOFS_SHOW_NEGATIVE:-}" ] || { echo unchecked; return; }
    out=$(job_output "$1" "$2" "$3")
    if [ -z "$out" ]; then
        echo "absent (no $3 job proves $1 of $2)"
    else
        goal_status "$4" "$out"
    fi
}

# control_limits FUNCTION FILE KIND GOAL: "Z3 CVC4", the step limits of
# GOAL's control: the control limits when they are CONTROL_MARGIN times
# the steps the prover that proved GOAL in step 1 took (WP's line
# "[wp] [Z3 4.8.12] Goal G : Valid (...) (STEPS)"; [Qed]: none), the full
# limits otherwise.
control_limits() {
    out=$(job_output "$1" "$2" "$3")
    line=$(grep -E "^\[wp\] \[[^]]*\] Goal $4 : Valid" "$out" 2>/dev/null |
               head -n 1)
    steps=$(printf '%s\n' "$line" |
                sed -n 's/.*(\([0-9][0-9]*\))\( (cached)\)\{0,1\}$/\1/p')
    case "$line" in
        *"[Z3 "*) need=$((CONTROL_MARGIN * ${steps:-$Z3_STEPS})); cap=$Z3_CONTROL ;;
        *"[CVC4 "*) need=$((CONTROL_MARGIN * ${steps:-$CVC4_STEPS})); cap=$CVC4_CONTROL ;;
        *"[Qed]"*) need=0; cap=0 ;;
        *) need=1; cap=0 ;;        # not found: the full limits
    esac
    if [ "$need" -le "$cap" ]; then
        echo "$Z3_CONTROL $CVC4_CONTROL"
    else
        echo "$Z3_STEPS $CVC4_STEPS"
    fi
}

# control K LINE: control K (a line of negative.txt) in $log/w.K; its
# report on the output, and $log/negfailed.K unless it is caught.
control() {
    dir="$log/w.$1"
    mkdir -p "$dir"
    printf '%s\n' "$2" | {
        IFS='|' read -r fn file kind from to goal why
        fn=$(trim "$fn"); file=$(trim "$file"); kind=$(trim "$kind")
        from=$(trim "$from"); to=$(trim "$to"); goal=$(trim "$goal")
        why=$(trim "$why")
        before=$(proved_before "$fn" "${file%%:*}" "$kind" "$goal")
        case "$before" in
            valid|unchecked)
                limits=$(control_limits "$fn" "${file%%:*}" "$kind" "$goal")
                verdict=$(negative "$dir" "$fn" "$file" "$kind" "$from" "$to" "$goal" "$limits") ;;
            *)
                verdict="its goal is not proved in the unmodified file's run ($before), so the control proves nothing" ;;
        esac
        if [ -n "${PROOFS_SHOW_NEGATIVE:-}" ]; then
            # for whoever edits negative.txt: the goals this mutant fails
            grep -E '^\[wp\] .*Goal ' "$dir/neg" | grep -v ': Valid' |
                sed 's/^/    /'
        fi
        if [ "$verdict" = "caught" ]; then
            printf 'proofs: negative %-28s %s fails, as intended (%s)\n' \
                "$fn" "$goal" "$why"
        else
            printf 'proofs: negative %-28s %s: %s (expected a failed proof: %s)\n' \
                "$fn" "$goal" "$verdict" "$why"
            echo fail >"$log/negfailed.$1"
        fi
    }
    rm -rf "$dir"
}

grep -v '^#' proofs/negative.txt | grep -v '^ *$' >"$log/negatives"
# the controls asked for (PROOFS_NEGATIVE_ONLY: those of the functions named)
: >"$log/chosen"
while IFS= read -r line; do
    fn=$(trim "${line%%|*}")
    case ",${PROOFS_NEGATIVE_ONLY:-$fn}," in
        *",$fn,"*) printf '%s\n' "$line" >>"$log/chosen" ;;
    esac
done <"$log/negatives"
spread "$log/chosen" control
if ls "$log"/negfailed.* >/dev/null 2>&1; then status=1; fi

# The negative controls cover every proved function.
[ -n "${PROOFS_ONLY:-}" ] && echo "proofs: PARTIAL RUN (PROOFS_ONLY=$PROOFS_ONLY): only the jobs matched and their controls"
echo "$JOBS" | while IFS='|' read -r name file kind fns; do
    for fn in $(echo "$fns" | tr ',' ' '); do
        grep -q "^$fn |" "$log/negatives" ||
            { echo "proofs: $fn has no negative control"; echo x >>"$log/nocontrol"; }
    done
done
[ -f "$log/nocontrol" ] && status=1

# A crash is not a caught bug: the first control again, with provers that
# die on a signal (the run's Why3 configuration with every prover's
# command replaced by the crashing script); it must come out "crashed",
# never "caught".
head -n 1 "$log/negatives" >"$log/first"
IFS='|' read -r fn file kind from to goal why <"$log/first"
fn=$(trim "$fn"); file=$(trim "$file"); kind=$(trim "$kind")
from=$(trim "$from"); to=$(trim "$to"); goal=$(trim "$goal")
printf '#!/bin/sh\nkill -SEGV $$\n' >"$log/crash"
chmod +x "$log/crash"
sed "s|^\(command[a-z_]* = \"\)[^ ]*|\1$log/crash|" "$WHY3CONFIG" \
    >"$log/why3-crash.conf"
mkdir -p "$log/crashtest"
verdict=$(WHY3CONFIG="$log/why3-crash.conf" CACHE_MODE=none negative "$log/crashtest" "$fn" "$file" "$kind" "$from" "$to" "$goal" "$Z3_CONTROL $CVC4_CONTROL")
if [ "$verdict" = "crashed" ]; then
    echo "proofs: self-test: crashing provers on $goal give \"crashed\", not a caught bug"
else
    echo "proofs: self-test: crashing provers on $goal gave \"$verdict\" (want crashed)"
    status=1
fi

# The cache: how much of the jobs' work it answered; with rebuild, the
# fresh cache replaces proofs/cache/ when everything above holds.
cat "$log"/out.* 2>/dev/null | sed -n 's/^\[wp\] \[Cache\] //p' |
    tr ',' '\n' | awk -F: '{ gsub(/ /, ""); n[$1] += $2; seen = 1 }
        END { if (seen) printf "proofs: cache (%s): found %d, missed %d, updated %d prover results of the jobs\n", mode, n["found"], n["missed"], n["updated"] }' mode="$CACHE_MODE"
# The run records: how many WP runs they answered; with rebuild, the fresh
# records replace proofs/records/ when everything above holds.
if [ -f "$log/records.log" ]; then
    echo "proofs: records ($CACHE_MODE): $(grep -c '^replayed$' "$log/records.log") WP runs replayed, $(grep -c '^live$' "$log/records.log") run live, $(grep -c '^recorded$' "$log/records.log") recorded"
fi
# A whole update run that passed names every record a run reads today:
# the others (of contracts, code or controls since changed) are dropped.
if [ "$CACHE_MODE" = update ] && [ "$status" -eq 0 ] &&
   [ -z "${PROOFS_ONLY:-}" ] && [ -f "$log/records.names" ]; then
    dropped=0
    for f in "$RECORDS"/*; do
        [ -f "$f" ] || continue
        if ! grep -qx "$(basename "$f")" "$log/records.names"; then
            rm -f "$f"
            dropped=$((dropped + 1))
        fi
    done
    echo "proofs: records (update): $dropped that no run names any more dropped"
fi
if [ "$CACHE_MODE" = rebuild ]; then
    install_fresh records "$log/records" "$RECORDS" '*' records "$status"
    install_fresh cache "$CACHE_NEW" "$CACHE_DIR" '*.json' "prover results" "$status"
    [ "$status" -ne 0 ] || printf '%s\n' "$CACHE_KEY" >"$CACHE_DIR/LIMITS"
fi

# ---- 3. Coq ----------------------------------------------------------------
if grep -nE '\b(Admitted|admit|Axiom|Axioms|Parameter|Parameters|Conjecture)\b' \
        proofs/coq/*.v; then
    echo "proofs: Coq: the lines above assume what they should prove"
    status=1
fi
# wpcoq MODE WHAT: proofs/wpcoq/export.sh MODE, its lines as Coq's; WHAT
# says what failed when it fails.
wpcoq() {
    if sh proofs/wpcoq/export.sh "$1" >"$log/wpcoq" 2>&1; then
        sed 's/^proofs\/wpcoq\/export.sh: /proofs: Coq: /' "$log/wpcoq"
    else
        cat "$log/wpcoq"
        echo "proofs: Coq: $2"
        status=1
    fi
}
# WP's translation of the ACSL that the joints read: today's
wpcoq --check "proofs/wpcoq/gen/WpAcsl.v is not WP's translation of the ACSL today"
if make -s -C proofs/coq >"$log/coq" 2>&1; then
    for v in proofs/coq/*.v; do
        if [ "${v%.v}.vo" -nt "$v" ]; then
            echo "proofs: Coq: $v compiled"
        else
            echo "proofs: Coq: $v is not compiled (missing from proofs/coq/Makefile)"
            status=1
        fi
    done
    sed 's/^/proofs: Coq: /' "$log/coq"
    # the joints' negative controls (they compile against proofs/coq)
    wpcoq --controls "a negative control of the joints (proofs/wpcoq/controls.txt) was not caught"
else
    cat "$log/coq"
    echo "proofs: Coq: compilation failed"
    status=1
fi

exit $status
