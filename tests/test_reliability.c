/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_reliability.c: numerical failure and determinism, for every
 * registered algorithm.
 *
 * Numerical failure (docs/cli.md, exit status 3).  Each algorithm runs a
 * tiny spec whose iterates overflow at a place worked out by hand below,
 * through the program and through the C API, and the checks assert
 *   - `pflref run` exits 3, standard error is exactly the one line
 *     "pflref: SPEC: QUANTITY: QUANTITY is not finite (NaN or Inf) at
 *     round R, client C, local step S", standard output is empty, and the
 *     folder holding SPEC and an existing RESULT is unchanged (RESULT
 *     keeps its old bytes, no RESULT.tmp.* is left);
 *   - pflref_run returns PFLREF_EDIVERGE, no result, err.where = QUANTITY
 *     and err.round, err.client, err.step = R, C, S;
 *   - the divergence is caught at the first non-finite value: every value
 *     the run emitted before it stopped is finite, and the last event is
 *     client C's in round R, no later than step S.
 * Further checks: the phase after training (the message says "after the
 * last round (post phase)"), NaN arising in the middle of a run from finite
 * data (Inf − Inf, Inf/Inf at the server and inside a step), and the
 * evaluation: finite models whose metrics overflow.
 *
 * Determinism.  A golden vector per algorithm, and two larger problems on
 * which OpenBLAS would split its work between threads (a linear model with
 * d = 200 and n = 400 samples per client, an mlp with 64 hidden units), are
 * run three times: twice with OPENBLAS_NUM_THREADS=1 and once with 2.  The
 * three results are byte-identical and record "blas_threads": 1 (the
 * program pins OpenBLAS to one thread, ref/io/build_info.c).
 *
 * The divergence problem Q (docs/models.md, quadratic): two clients,
 *   f_0(w) = ½ w²,  f_1(w) = ½ (w − 4)²,  ∇f_0(w) = w,  ∇f_1(w) = w − 4,
 * w⁰ = 0.  Client 0 sits at its minimiser: every gradient it takes is
 * exactly 0, so no step size moves it.  Client 1 does not train in round
 * 0 (no steps, or not selected), so round 1 starts from w = 0, and its
 * plain gradient steps with step size 1e200 are
 *   step 1:  0 − 1e200·(0 − 4)             =  4e200
 *   step 2:  4e200 − 1e200·(4e200 − 4)     ≈ −4e400  →  −Inf.
 */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "suites.h"
#include "testutil.h"

/* ---- spec pieces -------------------------------------------------------- */

#define FMT "\"format\": \"pflref-spec/1\""
#define QUAD "\"model\": {\"kind\": \"quadratic\", \"d\": 1}"
#define Q "\"problem\": {\"clients\": [{\"a\": [1], \"c\": [0]}," \
          " {\"a\": [1], \"c\": [4]}]}"
#define ALG(name, hyper) \
    "\"algorithm\": {\"name\": \"" name "\", \"hyperparameters\": {" hyper "}}"
#define ALGS(name, hyper, sw) \
    "\"algorithm\": {\"name\": \"" name "\", \"hyperparameters\": {" hyper \
    "}, \"switches\": {" sw "}}"
#define GIVEN(rounds) "\"schedule\": {\"kind\": \"given\", \"rounds\": [" rounds "]}"
#define GIVEN_POST(rounds, post) \
    "\"schedule\": {\"kind\": \"given\", \"rounds\": [" rounds "], \"post\": " post "}"
#define SPEC(model, problem, alg, sched) \
    "{" FMT ", " model ", " problem ", " alg ", " sched "}"
#define QSPEC(alg, sched) SPEC(QUAD, Q, alg, sched)

/* Local steps on client sample 0 (the quadratic ignores the indices). */
#define B1 "[[0]]"
#define B2 "[[0], [0]]"
#define B3 "[[0], [0], [0]]"
#define B6 "[[0], [0], [0], [0], [0], [0]]"
/* Round 0: both clients listed, client 1 with no steps; round 1: both
 * with batches b. */
#define IDLE_THEN(b) \
    "{\"clients\": [0, 1], \"batches\": [" b ", []]}," \
    " {\"clients\": [0, 1], \"batches\": [" b ", " b "]}"
/* Round 0: client 0 alone; round 1: both with batches b. */
#define ONLY0_THEN(b) \
    "{\"clients\": [0], \"batches\": [" b "]}," \
    " {\"clients\": [0, 1], \"batches\": [" b ", " b "]}"
/* One post batch per client. */
#define POST1 "[" B1 ", " B1 "]"
#define POST2 "[" B2 ", " B2 "]"

/* ---- helpers ------------------------------------------------------------ */

typedef struct {
    const char *alg;       /* the algorithm (row label)                     */
    const char *spec;
    const char *quantity;  /* err.where and the message's first word(s)     */
    long round, client, step;
    const char *message;   /* the whole message, written out by hand        */
} diverge_case;

/* dir/name with text in it (malloc'd path). */
static char *write_in(const char *dir, const char *name, const char *text)
{
    char *path = malloc(512);
    ck_assert_ptr_nonnull(path);
    snprintf(path, 512, "%s/%s", dir, name);
    ck_assert_int_eq(tu_write(path, text), 0);
    return path;
}

/* The names in dir, other than . and .., joined by spaces (malloc'd). */
static char *list_dir(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    char *names = calloc(1, 4096);
    ck_assert_ptr_nonnull(names);
    const struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        strncat(names, e->d_name, 4096 - strlen(names) - 2);
        strcat(names, " ");
    }
    closedir(d);
    return names;
}

/* The program on SPEC (written into a fresh folder) must stop with exit 3,
 * exactly the line "pflref: SPEC: QUANTITY: MESSAGE" on standard error,
 * nothing on standard output, and leave the folder as it was: an existing
 * RESULT keeps its bytes and no temporary file is left.  Then the same
 * without -o. */
static void assert_cli_diverges(const char *spec_text, const char *quantity,
                                const char *message)
{
    char *dir = tu_tmpdir();
    char *spec = write_in(dir, "spec.json", spec_text);
    char *result = write_in(dir, "result.json", "previous result\n");
    char expected[1024];
    snprintf(expected, sizeof expected, "pflref: %s: %s: %s\n", spec, quantity,
             message);

    char args[2048], *out, *err;
    snprintf(args, sizeof args, "run %s -o %s", spec, result);
    int rc = tu_cli(args, &out, &err);
    ck_assert_msg(rc == 3, "exit %d, expected 3; stderr: %s", rc, err);
    ck_assert_msg(err != NULL && strcmp(err, expected) == 0,
                  "stderr\n  %s\nexpected\n  %s", err, expected);
    ck_assert_msg(out != NULL && out[0] == '\0', "stdout: %s", out);
    char *kept = tu_read(result);
    ck_assert_msg(kept != NULL && strcmp(kept, "previous result\n") == 0,
                  "the existing result was changed: %s", kept);
    char *names = list_dir(dir);
    ck_assert_msg(strcmp(names, "spec.json result.json ") == 0 ||
                      strcmp(names, "result.json spec.json ") == 0,
                  "the folder holds: %s", names);
    free(names);
    free(kept);
    free(out);
    free(err);

    snprintf(args, sizeof args, "run %s", spec);
    rc = tu_cli(args, &out, &err);
    ck_assert_msg(rc == 3, "without -o: exit %d, expected 3", rc);
    ck_assert_msg(err != NULL && strcmp(err, expected) == 0,
                  "without -o: stderr\n  %s\nexpected\n  %s", err, expected);
    ck_assert_msg(out != NULL && out[0] == '\0', "without -o, stdout: %s",
                  out);
    free(out);
    free(err);

    unlink(spec);
    unlink(result);
    rmdir(dir);
    free(spec);
    free(result);
    free(dir);
}

/* pflref_run on text with a step-level recorder; must fail with
 * PFLREF_EDIVERGE at (quantity, round, client, step) with `message`, and
 * must have emitted only finite values, the last of them client `client`'s
 * in round `round`, no later than step `step`. */
static void assert_api_diverges(const char *text, const char *quantity,
                                long round, long client, long step,
                                const char *message)
{
    pflref_spec *spec = tu_spec(text);
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_STEP);
    const pflref_trace trace = {pflref_trajectory_emit, &tj};
    pflref_run_result *res = NULL;
    pflref_error err;
    pflref_error_clear(&err);
    pflref_status st = pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                                  spec->schedule, spec->w0, &trace, &res,
                                  &err);
    ck_assert_msg(st == PFLREF_EDIVERGE, "status %s (%s), expected %s",
                  pflref_status_name(st), err.message,
                  pflref_status_name(PFLREF_EDIVERGE));
    ck_assert_msg(res == NULL, "a diverged run handed back a result");
    ck_assert_str_eq(err.where, quantity);
    ck_assert_str_eq(err.message, message);
    ck_assert_int_eq(err.round, round);
    ck_assert_int_eq(err.client, client);
    ck_assert_int_eq(err.step, step);

    ck_assert_msg(!tj.failed && tj.count > 0, "nothing was recorded");
    for (size_t k = 0; k < tj.count; k++) {
        const pflref_record *r = &tj.records[k];
        for (size_t j = 0; j < r->len; j++)
            ck_assert_msg(isfinite(tj.values[r->offset + j]),
                          "event %zu (%s %s, round %ld, client %ld, step %ld)"
                          " carries %g before the divergence was reported",
                          k, pflref_event_kind_name(r->kind), r->name,
                          r->round, r->client, r->step,
                          tj.values[r->offset + j]);
    }
    /* A client's divergence: its last event is that client's, at step S
     * at the latest.  The server's: the round's clients all ended and no
     * server event of the round was emitted. */
    const pflref_record *last = &tj.records[tj.count - 1];
    ck_assert_msg(last->round == round &&
                      (client < 0 ? last->kind == PFLREF_EV_CLIENT_END ||
                                        last->kind == PFLREF_EV_NOTE
                                  : last->client == client &&
                                        last->step <= step),
                  "the last event is %s %s at round %ld, client %ld, step "
                  "%ld; the divergence is at round %ld, client %ld, step %ld",
                  pflref_event_kind_name(last->kind), last->name, last->round,
                  last->client, last->step, round, client, step);
    for (size_t k = 0; client < 0 && k < tj.count; k++)
        ck_assert_msg(!(tj.records[k].kind == PFLREF_EV_SERVER &&
                        tj.records[k].round == round),
                      "a server event of round %ld was emitted", round);
    pflref_trajectory_free(&tj);
    pflref_spec_free(spec);
}

/* ---- every algorithm: an overflow located by hand ----------------------- */

static const diverge_case CASES[] = {
    /* FedAvg: client 1's w_local, the steps of problem Q. */
    {"fedavg", QSPEC(ALG("fedavg", "\"eta\": 1e200"), GIVEN(IDLE_THEN(B2))),
     "w_local", 1, 1, 2,
     "w_local is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* Local only: v_1 stays at w⁰ = 0 in round 0, then problem Q's steps. */
    {"local", QSPEC(ALG("local", "\"eta\": 1e200"), GIVEN(IDLE_THEN(B2))),
     "v", 1, 1, 2,
     "v is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* FedAvg-FT: the training rounds are FedAvg's. */
    {"finetune",
     QSPEC(ALG("finetune", "\"eta\": 1e200, \"eta_ft\": 0.5"),
           GIVEN_POST(IDLE_THEN(B2), POST1)),
     "w_local", 1, 1, 2,
     "w_local is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* prox: K = 2 inner steps per batch, numbered qK + k, reference w = 0,
     * θ ← θ − η_p (∇f_1(θ) + λ(θ − w)) with λ = 1, η_p = 1e100:
     *   step 1: 0 − 1e100·(−4)                 = 4e100
     *   step 2: 4e100 − 1e100·(4e100 − 4 + 4e100) ≈ −8e200
     *   step 3 (second batch): −8e200 − 1e100·(2·(−8e200) − 4) ≈ 1.6e301
     *   step 4: 1.6e301 − 1e100·(3.2e301)      ≈ −3.2e401 → −Inf. */
    {"prox",
     QSPEC(ALG("prox", "\"lambda\": 1, \"eta_p\": 1e100, \"K\": 2"),
           GIVEN(IDLE_THEN(B2))),
     "theta", 1, 1, 4,
     "theta is not finite (NaN or Inf) at round 1, client 1, local step 4"},
    /* pFedMe (η = λ = 1, η_p = 1e100, K = 2): local round r = 0 runs prox's
     * steps 1, 2 from w_{1,0} = 0 (θ ≈ −8e200), then
     * w_{1,1} = 0 − ηλ(0 − θ) ≈ −8e200; r = 1 restarts θ there:
     *   step 3: θ − 1e100·(θ − 4 + 0)           ≈ 8e300
     *   step 4: 8e300 − 1e100·(8e300 − 4 + 8e300 + 8e200) → −Inf. */
    {"pfedme",
     QSPEC(ALG("pfedme",
               "\"lambda\": 1, \"eta_p\": 1e100, \"K\": 2, \"eta\": 1"),
           GIVEN(IDLE_THEN(B2))),
     "theta", 1, 1, 4,
     "theta is not finite (NaN or Inf) at round 1, client 1, local step 4"},
    /* Ditto (λ = 0.5, η = 1e200, w^t = 0): the personal step comes first
     * on each batch: v = 0 − 1e200·(−4 + 0.5·0) = 4e200, then
     * v = 4e200 − 1e200·(4e200 − 4 + 0.5·4e200) → −Inf at step 2. */
    {"ditto", QSPEC(ALG("ditto", "\"lambda\": 0.5, \"eta\": 1e200"),
                    GIVEN(IDLE_THEN(B2))),
     "v", 1, 1, 2,
     "v is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* FedAlt (τ_v = 1, everything shared): step 1 moves v, which has no
     * entries, so w_local stays 0; steps 2 and 3 move u with γ_u = 1e200:
     * 4e200, then −Inf. */
    {"fedalt",
     QSPEC(ALG("fedalt",
               "\"gamma_u\": 1e200, \"gamma_v\": 0.5, \"tau_v\": 1"),
           GIVEN(ONLY0_THEN(B3))),
     "w_local", 1, 1, 3,
     "w_local is not finite (NaN or Inf) at round 1, client 1, local step 3"},
    /* FedSim: one joint step per batch, u with γ_u = 1e200. */
    {"fedsim",
     QSPEC(ALG("fedsim", "\"gamma_u\": 1e200, \"gamma_v\": 0.5"),
           GIVEN(IDLE_THEN(B2))),
     "w_local", 1, 1, 2,
     "w_local is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* PFLEGO on the mlp ŷ = W·(θ x) (P = 2, θ the body, W the head),
     * w⁰ = (θ, W) = (1, 0), x = 1 on both clients, y = 0 and 4.  Client 1,
     * τ = 3: φ = θ x = 1, the cheap head steps with β = 1e200 are
     *   step 1: W = 0 − 1e200·(0·1 − 4)·1 = 4e200
     *   step 2: W = 4e200 − 1e200·(4e200 − 4)  → −Inf. */
    {"pflego",
     SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 1, \"h\": 1, \"k\": 1,"
          " \"loss\": \"half_squared\", \"activation\": \"identity\","
          " \"bias\": false}, \"split\": {\"personal\": [\"head\"]},"
          " \"init\": {\"kind\": \"given\", \"w\": [1, 0]}",
          "\"problem\": {\"clients\": [{\"X\": [[1]], \"y\": [0]},"
          " {\"X\": [[1]], \"y\": [4]}]}",
          ALG("pflego", "\"rho\": 1, \"pflego.beta\": 1e200"),
          GIVEN("{\"clients\": [0], \"batches\": [" B1 "]},"
                " {\"clients\": [0, 1], \"batches\": [" B1 ", " B3 "]}")),
     "W_i", 1, 1, 2,
     "W_i is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* Per-FedAvg (exact, α = 0.5, β = 1e200; H = 1):
     *   step 1: w̃ = 0 − 0.5·(−4) = 2, q = −2, w = 0 − 1e200·(−2 + 1) = 1e200
     *   step 2: w̃ = 5e199, q ≈ 5e199, w = 1e200 − 1e200·(q − 0.5 q) → −Inf. */
    {"perfedavg",
     QSPEC(ALG("perfedavg", "\"alpha\": 0.5, \"beta\": 1e200"),
           GIVEN_POST(ONLY0_THEN(B6), POST1)),
     "w_local", 1, 1, 2,
     "w_local is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* APFL (α = 0.5, η = 1e200): the step of w_i comes first and is
     * problem Q's (v's step 1 is 0 − 1e200·0.5·(−4) = 2e200). */
    {"apfl", QSPEC(ALG("apfl", "\"eta\": 1e200, \"alpha\": 0.5"),
                   GIVEN(IDLE_THEN(B2))),
     "w_local", 1, 1, 2,
     "w_local is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* Interpolation: the training rounds are FedAvg's. */
    {"interp",
     QSPEC(ALG("interp", "\"eta\": 1e200, \"alpha\": 0.5"),
           GIVEN_POST(IDLE_THEN(B2), POST1)),
     "w_local", 1, 1, 2,
     "w_local is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* CFL: round 0's updates are 0 (‖Δθ_c‖ = 0 is not < ε₁ = 0: no split),
     * then client 1's local SGD is problem Q's. */
    {"cfl",
     QSPEC(ALG("cfl", "\"eta\": 1e200, \"eps1\": 0, \"eps2\": 0,"
                      " \"gamma_max\": 0"),
           GIVEN(IDLE_THEN(B2))),
     "theta", 1, 1, 2,
     "theta is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* IFCA, Option II, k = 1: θ_0⁰ = w⁰ = 0 stays 0 in round 0; client 1's
     * LocalUpdate with γ = 1e200 is problem Q's. */
    {"ifca",
     QSPEC(ALGS("ifca", "\"gamma\": 1e200, \"ifca.k\": 1",
                "\"ifca.mode\": \"model\""),
           GIVEN(ONLY0_THEN(B2))),
     "theta_local", 1, 1, 2,
     "theta_local is not finite (NaN or Inf) at round 1, client 1, local step "
     "2"},
    /* FedFomo, no peers: round 1's candidates equal the anchors (distance 0,
     * weight 0), so client 1's local SGD from w⁰ is problem Q's. */
    {"fedfomo",
     QSPEC(ALG("fedfomo", "\"eta\": 1e200"), GIVEN(IDLE_THEN(B2))),
     "theta", 1, 1, 2,
     "theta is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* FedBN on a BN mlp (d = h = k = 1, half_squared) from zeros (γ = 1):
     * a = 0, so x̂ = 0, u = β = 0, φ = 0, z = b2 = 0; client 0 (y = 0) has
     * a zero gradient and stays; client 1 (y = 2, 4) gets only
     * ∂F/∂b2 = −3 (G = E W2 = 0): step 1 b2 = 3e200, step 2
     * b2 = 3e200 − 1e200·(3e200 − 3) → −Inf. */
    {"fedbn",
     SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 1, \"h\": 1, \"k\": 1, "
          "\"loss\": \"half_squared\", \"bn\": true}",
          "\"problem\": {\"clients\": [{\"X\": [[0], [2]], \"y\": [0, 0]}, "
          "{\"X\": [[1], [3]], \"y\": [2, 4]}]}",
          ALG("fedbn", "\"eta\": 1e200"),
          GIVEN(IDLE_THEN("[[0, 1], [0, 1]]"))),
     "v", 1, 1, 2,
     "v is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* pFedHN: W_h = 0, b_h = 0, so every θ_i = 0; round 0's client 0
     * (c = 0) has a zero gradient, Δθ = 0 and nothing moves; round 1's
     * client 1 runs problem Q's steps from θ = 0. */
    {"pfedhn",
     SPEC(QUAD, Q ", \"init\": {\"kind\": \"zeros\", \"hypernetwork\": "
          "{\"W\": [[0]], \"b\": [0], \"v\": [[0.5], [-0.25]]}}",
          ALG("pfedhn", "\"eta\": 1e200, \"alpha\": 0.5"),
          GIVEN("{\"clients\": [0], \"batches\": [" B2 "]},"
                " {\"clients\": [1], \"batches\": [" B2 "]}")),
     "theta", 1, 1, 2,
     "theta is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* Personal low-rank adapters on a linear d = 1 model, W₀ = 0, A = 1,
     * B = 0, s = 1: client 0 (x = 0) has a zero gradient; client 1 (x = 1,
     * y = 2): step 1 B = 2e200, step 2 B = 2e200 − 1e200·(2e200 − 2) →
     * −Inf. */
    {"lora",
     SPEC("\"model\": {\"kind\": \"linear\", \"d\": 1, "
          "\"loss\": \"half_squared\"}",
          "\"problem\": {\"clients\": [{\"X\": [[0]], \"y\": [0]}, "
          "{\"X\": [[1]], \"y\": [2]}]}, \"init\": {\"kind\": "
          "\"zeros\", \"lora\": [1, 0]}",
          ALG("lora", "\"eta\": 1e200, \"lora.r\": 1, \"lora.alpha\": 1"),
          GIVEN(IDLE_THEN(B2))),
     "q", 1, 1, 2,
     "q is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* FedDyn: problem Q from θ = 0; round 0 moves nothing (client 0's
     * gradient is 0, client 1 idle), so ∇L_k = h = 0 and θ¹ = 0; round 1's
     * client 1: step 1 θ = 4e200 (no pull at θ = θ⁰), step 2 adds
     * α θ → −Inf. */
    {"feddyn",
     QSPEC(ALG("feddyn", "\"eta\": 1e200, \"feddyn.alpha\": 0.5"),
           GIVEN(IDLE_THEN(B2))),
     "theta_k", 1, 1, 2,
     "theta_k is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* SCAFFOLD (η_l = 1e200): round 0 moves nothing (client 0 at its
     * minimum, c = c_0 = 0); round 1, client 1 from x = 0 with c = c_1 = 0:
     * y = 0 − 1e200·(−4) = 4e200, then 4e200 − 1e200·(4e200 − 4) → −Inf. */
    {"scaffold", QSPEC(ALG("scaffold", "\"eta\": 1e200"), GIVEN(ONLY0_THEN(B2))),
     "y", 1, 1, 2,
     "y is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* MOON with μ = 0 on an mlp z = W2 (W1 x), w⁰ = (1, 0): client 0
     * (x = 0, y = 0) has a zero gradient; client 1 (x = 1, y = 2): step 1
     * W2 = 2e200 (W1's gradient r W2 x = 0), step 2 W2 = 2e200 −
     * 1e200·(2e200 − 2) → −Inf. */
    {"moon",
     SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 1, \"h\": 1, \"k\": 1, "
          "\"loss\": \"half_squared\", \"activation\": \"identity\", "
          "\"bias\": false}",
          "\"problem\": {\"clients\": [{\"X\": [[0]], \"y\": [0]}, "
          "{\"X\": [[1]], \"y\": [2]}]}, \"init\": {\"kind\": \"given\", "
          "\"w\": [1, 0]}",
          ALG("moon", "\"eta\": 1e200, \"moon.mu\": 0, \"moon.tau\": 0.5"),
          GIVEN(IDLE_THEN(B2))),
     "w_local", 1, 1, 2,
     "w_local is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* FedProx (μ = 0.5, the schedule's own participants): problem Q from
     * w = 0; round 0 moves nothing (client 0 at its minimum), round 1's
     * client 1: step 1 w = 4e200 (no pull at w = w^t), step 2 adds
     * μ (w − w^t) → −Inf. */
    {"fedprox",
     QSPEC(ALGS("fedprox", "\"eta\": 1e200, \"fedprox.mu\": 0.5",
                "\"fedprox.sampling\": \"uniform_weighted\""),
           GIVEN(IDLE_THEN(B2))),
     "w_local", 1, 1, 2,
     "w_local is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* FedRecon on ŷ = g·x + l (split: l = b), query = whole, no
     * evaluation phase, (g, l) = 0: client 0 (x = 0, y = 0) has zero
     * gradients; round 1's client 1 (x = 1, y = 2) reconstructs l with
     * η_r = 1e200: step 1 l = 2e200, step 2 l = 2e200 − 1e200·(2e200 − 2)
     * → −Inf. */
    {"fedrecon",
     SPEC("\"model\": {\"kind\": \"linear\", \"d\": 1, "
          "\"loss\": \"half_squared\", \"bias\": true}, "
          "\"split\": {\"personal\": [\"b\"]}",
          "\"problem\": {\"clients\": [{\"X\": [[0]], \"y\": [0]}, "
          "{\"X\": [[1]], \"y\": [2]}]}",
          ALGS("fedrecon", "\"fedrecon.eta_r\": 1e200, \"fedrecon.eta_u\": "
               "0.5, \"fedrecon.eta_s\": 0.5", "\"fedrecon.query\": "
               "\"whole\", \"fedrecon.eval\": \"kept\""),
          GIVEN("{\"clients\": [0, 1], \"personal\": [[[0]], []], "
                "\"batches\": [[[0]], []]}, {\"clients\": [0, 1], "
                "\"personal\": [[[0]], [[0], [0]]], \"batches\": "
                "[[[0]], []]}")),
     "w_recon", 1, 1, 2,
     "w_recon is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* FedAMP (α_k = 0.5, λ = 0.25, σ = 1.5): problem Q; every w_i stays 0
     * through round 0, so round 1's messages are u_i = 0 and client 1's
     * steps are Q's, step 2 adding (λ/α_k)(w − 0) → −Inf. */
    {"fedamp",
     QSPEC(ALG("fedamp", "\"eta\": 1e200, \"fedamp.alpha_k\": 0.5, "
               "\"fedamp.lambda\": 0.25, \"fedamp.sigma\": 1.5"),
           GIVEN(IDLE_THEN(B2))),
     "w_i", 1, 1, 2,
     "w_i is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* FedProto (λ = 0.5) on z = W2 (W1 x), k = 2, w⁰ = (1, 0, 0): client 0
     * (x = 0, class 1) never moves; round 0 gives C̄^(1) = (0 + 1)/2 = 0.5;
     * round 1's client 1 (x = 1, class 1): step 1 W1 = 1 − 1e200·λ·2(1 −
     * 0.5) = −5e199, W2 = (−5e199, 5e199); step 2's logits overflow → NaN. */
    {"fedproto",
     SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 1, \"h\": 1, \"k\": 2, "
          "\"activation\": \"identity\", \"bias\": false}",
          "\"problem\": {\"clients\": [{\"X\": [[0]], \"y\": [1]}, "
          "{\"X\": [[1]], \"y\": [1]}]}, \"init\": {\"kind\": \"given\", "
          "\"w\": [1, 0, 0]}",
          ALG("fedproto", "\"eta\": 1e200, \"fedproto.lambda\": 0.5"),
          GIVEN(IDLE_THEN(B2))),
     "v", 1, 1, 2,
     "v is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* FedRoD (η = 1e200) on z = W2 (W1 x), k = 2, w⁰ = (1, 0, 0), one
     * client x = 1 (class 0), x = 2 (class 1), N = (1, 1): step 1 gives
     * W2 = (−2.5e199, 2.5e199); step 2's softmax saturates and W1's
     * gradient is −2.5e199, so W1 = 1 + 2.5e399 → Inf. */
    {"fedrod",
     SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 1, \"h\": 1, \"k\": 2, "
          "\"activation\": \"identity\", \"bias\": false}",
          "\"problem\": {\"clients\": [{\"X\": [[1], [2]], \"y\": [0, 1]}]}, "
          "\"init\": {\"kind\": \"given\", \"w\": [1, 0, 0]}",
          ALG("fedrod", "\"eta\": 1e200"),
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 1], [0, 1]]]}")),
     "w_local", 0, 0, 2,
     "w_local is not finite (NaN or Inf) at round 0, client 0, local step 2"},
    /* APPLE (η = 1e200): problem Q; client 1 idle in round 0, then its
     * first step moves its core w_1 by η p_11 (c − w_p) = O(1e200), and
     * the second step's gradient, O(1e200), times η overflows. */
    {"apple",
     QSPEC(ALG("apple", "\"eta\": 1e200, \"eta_p\": 0.35, \"apple.mu\": 0.6, "
               "\"apple.L\": 2"),
           GIVEN(IDLE_THEN(B2))),
     "w_i", 1, 1, 2,
     "w_i is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* FedALA (η = 0.5, s = 100, p = 1): problem Q; every Θ_i and Θ stay 0
     * through round 0, so round 1's ALA has Θ − Θ_i = 0 (Θ̂_i = 0) and
     * client 1's steps are Q's: step 2 → −Inf. */
    {"fedala",
     QSPEC(ALG("fedala", "\"eta\": 1e200, \"fedala.eta\": 0.5, "
               "\"fedala.s\": 100, \"fedala.p\": 1"),
           GIVEN("{\"clients\": [0, 1], \"batches\": [" B2 ", []]}, "
                 "{\"clients\": [0, 1], \"personal\": [[[0]], [[0]]], "
                 "\"batches\": [" B2 ", " B2 "]}")),
     "theta_i", 1, 1, 2,
     "theta_i is not finite (NaN or Inf) at round 1, client 1, local step 2"},
    /* FedPAC (τ_φ = 1, η_φ = 1e200, η = 1e200) on z = W2 (W1 x), k = 2,
     * w⁰ = (1, 0, 0), one client x = 1 (class 0), x = 2 (class 1): the
     * classifier's step gives W2 = (−2.5e199, 2.5e199); in the body's
     * step the softmax saturates and W1's gradient is 2.5e199 (no
     * centroid in round 0), so W1 = 1 − 2.5e399 → −Inf. */
    {"fedpac",
     SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 1, \"h\": 1, \"k\": 2, "
          "\"activation\": \"identity\", \"bias\": false}",
          "\"problem\": {\"clients\": [{\"X\": [[1], [2]], \"y\": [0, 1]}]}, "
          "\"init\": {\"kind\": \"given\", \"w\": [1, 0, 0]}",
          ALG("fedpac", "\"eta\": 1e200, \"fedpac.lambda\": 0.5, "
              "\"fedpac.eta_phi\": 1e200, \"fedpac.tau_phi\": 1"),
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 1], [0, 1]]]}")),
     "v", 0, 0, 2,
     "v is not finite (NaN or Inf) at round 0, client 0, local step 2"},
};
#define NCASES ((int)(sizeof CASES / sizeof CASES[0]))

/* The registry and the table agree: one case per registered algorithm, in
 * the registry's order. */
START_TEST(test_every_algorithm_has_a_case)
{
    size_t count;
    const pflref_algorithm *const *algs = pflref_algorithms(&count);
    ck_assert_int_eq((int)count, NCASES);
    for (size_t i = 0; i < count; i++)
        ck_assert_str_eq(algs[i]->name, CASES[i].alg);
}
END_TEST

/* `pflref run`: exit 3, the exact location on standard error, no output. */
START_TEST(test_diverge_cli)
{
    const diverge_case *c = &CASES[_i];
    assert_cli_diverges(c->spec, c->quantity, c->message);
}
END_TEST

/* pflref_run: PFLREF_EDIVERGE with err.round/client/step, caught at the
 * first non-finite value. */
START_TEST(test_diverge_api)
{
    const diverge_case *c = &CASES[_i];
    assert_api_diverges(c->spec, c->quantity, c->round, c->client, c->step,
                        c->message);
}
END_TEST

/* ---- the phase after training ------------------------------------------ */

/* No training rounds (w = w⁰ = 0); each client's post phase takes two
 * plain steps of problem Q with the post step size 1e200 (Per-FedAvg:
 * θ = 0 − 0.5·(−4) = 2, then θ = 2 − 1e308·(2 − 4) → +Inf), so client 1
 * overflows at its step 2. */
static const diverge_case POST_CASES[] = {
    {"finetune",
     QSPEC(ALG("finetune", "\"eta\": 1, \"eta_ft\": 1e200"),
           GIVEN_POST("", POST2)),
     "theta", -1, 1, 2,
     "theta is not finite (NaN or Inf) after the last round (post phase), "
     "client 1, local step 2"},
    {"fedalt",
     QSPEC(ALGS("fedalt",
                "\"gamma_u\": 1, \"gamma_v\": 1, \"tau_v\": 0,"
                " \"eta_ft\": 1e200",
                "\"pfl.finetune\": \"full\""),
           GIVEN_POST("", POST2)),
     "v", -1, 1, 2,
     "v is not finite (NaN or Inf) after the last round (post phase), "
     "client 1, local step 2"},
    {"fedsim",
     QSPEC(ALGS("fedsim", "\"gamma_u\": 1, \"gamma_v\": 1, \"eta_ft\": 1e200",
                "\"pfl.finetune\": \"full\""),
           GIVEN_POST("", POST2)),
     "v", -1, 1, 2,
     "v is not finite (NaN or Inf) after the last round (post phase), "
     "client 1, local step 2"},
    {"perfedavg",
     QSPEC(ALGS("perfedavg", "\"alpha\": 0.5, \"beta\": 1e308",
                "\"perfedavg.eval\": \"alpha_then_beta\""),
           GIVEN_POST("", POST2)),
     "theta", -1, 1, 2,
     "theta is not finite (NaN or Inf) after the last round (post phase), "
     "client 1, local step 2"},
    {"interp",
     QSPEC(ALG("interp", "\"eta\": 1e200, \"alpha\": 0.5"),
           GIVEN_POST("", POST2)),
     "h", -1, 1, 2,
     "h is not finite (NaN or Inf) after the last round (post phase), "
     "client 1, local step 2"},
};
#define NPOST ((int)(sizeof POST_CASES / sizeof POST_CASES[0]))

START_TEST(test_diverge_post_phase)
{
    const diverge_case *c = &POST_CASES[_i];
    assert_cli_diverges(c->spec, c->quantity, c->message);
    assert_api_diverges(c->spec, c->quantity, c->round, c->client, c->step,
                        c->message);
}
END_TEST

/* ---- NaN in the middle of a run, from finite data ----------------------- */

static const diverge_case NAN_CASES[] = {
    /* Per-FedAvg HF with δ = 1e308.  Client 0 has q = 0, so its perturbed
     * points are w and its estimate 0/(2δ) = 0/Inf = 0.  Client 1 in round
     * 1, step 1: w̃ = 2, q = −2, w ± δq = ∓2e308 → ∓Inf, the two
     * gradients are ∓Inf and d = (−Inf − Inf)/(2δ = Inf) = NaN. */
    {"perfedavg",
     QSPEC(ALGS("perfedavg", "\"alpha\": 0.5, \"beta\": 0.5, \"delta\": 1e308",
                "\"perfedavg.variant\": \"hf\""),
           GIVEN_POST(ONLY0_THEN(B3), POST1)),
     "hvp", 1, 1, 1,
     "hvp is not finite (NaN or Inf) at round 1, client 1, local step 1"},
    /* pFedMe with β = 1e150 (K = 1, η_p = 0.5, η = λ = 1), f_1 centred at
     * 1.6e9.  Round 0: client 1's θ = 8e8, w_{1,1} = 8e8, the average is
     * 4e8 and w_1 = (1 − β)·0 + β·4e8 = 4e158.  Round 1: each client halves
     * its distance to its centre, the average is ≈ 2e158, and
     * w_2 = (1 − β)·4e158 + β·2e158 = (−4e308 → −Inf) + (2e308 → +Inf)
     * = NaN at the server. */
    {"pfedme",
     SPEC(QUAD,
          "\"problem\": {\"clients\": [{\"a\": [1], \"c\": [0]},"
          " {\"a\": [1], \"c\": [1.6e9]}]}",
          ALG("pfedme", "\"lambda\": 1, \"eta_p\": 0.5, \"K\": 1,"
                        " \"eta\": 1, \"beta\": 1e150"),
          GIVEN("{\"clients\": [0, 1], \"batches\": [" B1 ", " B1 "]},"
                " {\"clients\": [0, 1], \"batches\": [" B1 ", " B1 "]}")),
     "w", 1, -1, -1,
     "w is not finite (NaN or Inf) at round 1, server aggregation"},
};
#define NNAN ((int)(sizeof NAN_CASES / sizeof NAN_CASES[0]))

START_TEST(test_diverge_nan)
{
    const diverge_case *c = &NAN_CASES[_i];
    assert_cli_diverges(c->spec, c->quantity, c->message);
    assert_api_diverges(c->spec, c->quantity, c->round, c->client, c->step,
                        c->message);
}
END_TEST

/* ---- server quantities of PFLEGO ---------------------------------------- */

/* PFLEGO's server: on ŷ = W·(θ x) with x = 1, y = 0, the body gradient of
 * one client is g = (ŷ − y)·W·x = θ W².
 *   a) θ = 1e-140, W = 1e150 (ŷ = 1e10, loss 5e19): g = ĝ = 1e160, whose
 *      square 1e320 overflows Adam's second moment, which would freeze θ
 *      (its step ρ m̂/(√v̂ + ε) = 0); reported at the server of round 0.
 *   b) θ = 1, W = 1e154, two clients, client 0 sampled alone with
 *      theta_weights sampled_normalised: ĝ = (I/r)·1·g = 2·1e308 → Inf. */
START_TEST(test_pflego_server_overflow)
{
#define PFLEGO_MLP                                                          \
    "\"model\": {\"kind\": \"mlp\", \"d\": 1, \"h\": 1, \"k\": 1,"           \
    " \"loss\": \"half_squared\", \"activation\": \"identity\","            \
    " \"bias\": false}, \"split\": {\"personal\": [\"head\"]}"
    const char *adam = SPEC(
        PFLEGO_MLP ", \"init\": {\"kind\": \"given\", \"w\": [1e-140, 1e150]}",
        "\"problem\": {\"clients\": [{\"X\": [[1]], \"y\": [0]}]}",
        ALGS("pflego", "\"rho\": 1e-150, \"pflego.beta\": 0",
             "\"pflego.server\": \"adam\""),
        GIVEN("{\"clients\": [0], \"batches\": [" B1 "]}"));
    assert_cli_diverges(adam, "Adam's second moment",
                        "Adam's second moment is not finite (NaN or Inf) at "
                        "round 0, server aggregation");
    assert_api_diverges(adam, "Adam's second moment", 0, -1, -1,
                        "Adam's second moment is not finite (NaN or Inf) at "
                        "round 0, server aggregation");
    const char *ghat = SPEC(
        PFLEGO_MLP ", \"init\": {\"kind\": \"given\", \"w\": [1, 1e154]}",
        "\"problem\": {\"clients\": [{\"X\": [[1]], \"y\": [0]},"
        " {\"X\": [[1]], \"y\": [0]}]}",
        ALGS("pflego", "\"rho\": 1, \"pflego.beta\": 0",
             "\"pflego.theta_weights\": \"sampled_normalised\""),
        GIVEN("{\"clients\": [0], \"batches\": [" B1 "]}"));
    assert_api_diverges(ghat, "g_hat", 0, -1, -1,
                        "g_hat is not finite (NaN or Inf) at round 0, server "
                        "aggregation");
#undef PFLEGO_MLP
}
END_TEST

/* ---- finite models, overflowing metrics -------------------------------- */

/* The local-only baseline with no rounds reports v_i = w⁰ on quadratic
 * clients f_i(w) = ½ a_i w², so each client's loss is ½ a_i (w⁰)²:
 *   a) w⁰ = 1e160: ½·1e320 overflows → the evaluation loss of client 0,
 *      at `metrics.local` (round = the rounds run, 0; step −1);
 *   b) w⁰ = 1.2e154, three clients with a = 1: each loss 7.2e307 is
 *      finite, their sum 2.16e308 is not → the summary, exit 3;
 *   c) w⁰ = 1e80, a = 1 and 4: losses 5e159 and 2e160, mean 1.25e160,
 *      deviations ±7.5e159 whose squares overflow; the summary is still
 *      exact: sd = 7.5e159. */
START_TEST(test_evaluation_overflow)
{
#define LOCAL0(w0, clients)                                                  \
    SPEC(QUAD ", \"init\": {\"kind\": \"given\", \"w\": [" w0 "]}",          \
         "\"problem\": {\"clients\": [" clients "]}",                       \
         ALG("local", "\"eta\": 0.5"), GIVEN(""))
    const char *a = LOCAL0("1e160", "{\"a\": [1], \"c\": [0]}");
    assert_cli_diverges(a, "metrics.local",
                        "the evaluation loss of the local model is not finite "
                        "(NaN or Inf) on client 0, in the final evaluation "
                        "after 0 rounds");
    pflref_spec *spec = tu_spec(a);
    pflref_error err;
    tu_run_error(spec, PFLREF_EDIVERGE, &err);
    ck_assert_int_eq(err.round, 0);
    ck_assert_int_eq(err.client, 0);
    ck_assert_int_eq(err.step, -1);
    pflref_spec_free(spec);

    const char *b = LOCAL0("1.2e154", "{\"a\": [1], \"c\": [0]},"
                                      " {\"a\": [1], \"c\": [0]},"
                                      " {\"a\": [1], \"c\": [0]}");
    assert_cli_diverges(b, "metrics.local.summary",
                        "a summary of the per-client metrics of local is not "
                        "finite (NaN or Inf): the values are finite, their "
                        "sum overflows");

    const char *c = LOCAL0("1e80", "{\"a\": [1], \"c\": [0]},"
                                   " {\"a\": [4], \"c\": [0]}");
    spec = tu_spec(c);
    pflref_run_result *res = tu_run(spec, NULL);
    const pflref_summary *s = &res->eval[0].train_loss;
    ck_assert_msg(fabs(res->eval[0].train[0].loss - 5e159) <= 1e-15 * 5e159 &&
                      fabs(res->eval[0].train[1].loss - 2e160) <=
                          1e-15 * 2e160,
                  "losses %.17g, %.17g", res->eval[0].train[0].loss,
                  res->eval[0].train[1].loss);
    ck_assert_msg(fabs(s->mean - 1.25e160) <= 1e-15 * 1.25e160,
                  "mean %.17g", s->mean);
    ck_assert_msg(fabs(s->sd - 7.5e159) <= 1e-15 * 7.5e159, "sd %.17g", s->sd);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
    /* and the program writes it */
    char *dir = tu_tmpdir();
    char *path = write_in(dir, "c.json", c);
    char args[1024], *out;
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 0);
    /* the double nearest 7.5e159, in its shortest text */
    ck_assert_msg(strstr(out, "\"sd\":7.5e+159,") != NULL,
                  "%s", out);
    free(out);
    unlink(path);
    free(path);
    rmdir(dir);
    free(dir);
#undef LOCAL0
}
END_TEST

/* CFL's norms of a finite update are finite: quadratic clients with
 * a = 1e-150 and c = 1.2e4 in both entries, one step of η = 1e300 from 0:
 * Δθ_i = 1e300·1e-150·1.2e4 = 1.2e154 per entry, whose squares sum to
 * 2.88e308 (overflow), while ‖Δθ_i‖ = ‖Δθ_c‖ = 1.2e154·√2 ≈ 1.697e154.
 * The run succeeds and records that number (the loss ½·1e-150·2·1.44e308
 * is finite). */
START_TEST(test_cfl_large_update_norm)
{
    const char *text = SPEC(
        "\"model\": {\"kind\": \"quadratic\", \"d\": 2}",
        "\"problem\": {\"clients\": [{\"a\": [1e-150, 1e-150],"
        " \"c\": [1.2e4, 1.2e4]}, {\"a\": [1e-150, 1e-150],"
        " \"c\": [1.2e4, 1.2e4]}]}",
        ALG("cfl", "\"eta\": 1e300, \"eps1\": 1, \"eps2\": 0,"
                   " \"gamma_max\": 0"),
        GIVEN("{\"clients\": [0, 1], \"batches\": [" B1 ", " B1 "]}"));
    pflref_spec *spec = tu_spec(text);
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_ROUND);
    const pflref_trace trace = {pflref_trajectory_emit, &tj};
    pflref_run_result *res = tu_run(spec, &trace);
    const double want = 1.2e154 * sqrt(2.0);
    int seen = 0;
    for (size_t k = 0; k < tj.count; k++) {
        const pflref_record *r = &tj.records[k];
        if (strcmp(r->name, "norm_dtheta_c") != 0 &&
            strcmp(r->name, "max_norm_dtheta") != 0)
            continue;
        const double x = tj.values[r->offset];
        ck_assert_msg(fabs(x - want) <= 4e-16 * want, "%s = %.17g, want %.17g",
                      r->name, x, want);
        seen++;
    }
    ck_assert_int_eq(seen, 2);
    pflref_run_result_free(res);
    pflref_trajectory_free(&tj);
    pflref_spec_free(spec);

    char *dir = tu_tmpdir();
    char *path = write_in(dir, "s.json", text);
    char args[1024], *out;
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 0);
    ck_assert_msg(strstr(out, "\"name\":\"norm_dtheta_c\","
                              "\"value\":[1.6970562748477142e+154]") != NULL,
                  "%s", out);
    free(out);
    unlink(path);
    free(path);
    rmdir(dir);
    free(dir);
}
END_TEST

/* CFL with updates whose norm exceeds DBL_MAX (found by fuzz_algorithms,
 * fuzz/regressions/fuzz_algorithms/cfl-norm-overflow): f_i(θ) = ½‖θ − c‖²
 * with c = (1.5e308, 1.5e308), one step with η = 1 from 0 gives the finite
 * Δθ_i = c, but ‖Δθ_c‖ = 1.5e308·√2 overflows: exit 3 at the cluster of
 * client 0 in round 0, before any non-finite norm is recorded (it was
 * exit 2, "out of memory writing the result"). */
START_TEST(test_cfl_norm_overflow)
{
    const char *text = SPEC(
        "\"model\": {\"kind\": \"quadratic\", \"d\": 2}",
        "\"problem\": {\"clients\": [{\"a\": [1, 1], \"c\": [1.5e308, 1.5e308]},"
        " {\"a\": [1, 1], \"c\": [1.5e308, 1.5e308]}]}",
        ALG("cfl", "\"eta\": 1, \"eps1\": 1, \"eps2\": 0, \"gamma_max\": 0"),
        GIVEN("{\"clients\": [0, 1], \"batches\": [" B1 ", " B1 "]}"));
    assert_cli_diverges(text, "norm_dtheta_c",
                        "norm_dtheta_c is not finite (NaN or Inf) at round 0, "
                        "client 0");
    pflref_spec *spec = tu_spec(text);
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_STEP);
    const pflref_trace trace = {pflref_trajectory_emit, &tj};
    pflref_run_result *res = NULL;
    pflref_error err;
    ck_assert_int_eq(pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                                spec->schedule, spec->w0, &trace, &res, &err),
                     PFLREF_EDIVERGE);
    ck_assert_ptr_null(res);
    ck_assert_int_eq(err.round, 0);
    ck_assert_int_eq(err.client, 0);
    ck_assert_int_eq(err.step, -1);
    for (size_t k = 0; k < tj.count; k++)
        for (size_t j = 0; j < tj.records[k].len; j++)
            ck_assert(isfinite(tj.values[tj.records[k].offset + j]));
    pflref_trajectory_free(&tj);
    pflref_spec_free(spec);
}
END_TEST

/* The result writer refuses a non-finite number as a pflref bug
 * (PFLREF_EINTERNAL, exit 5), naming the field: JSON has no NaN or Inf,
 * and the run's checks stop every divergence before it gets there. */
START_TEST(test_writer_refuses_non_finite)
{
    pflref_spec *spec = tu_spec(QSPEC(ALG("fedavg", "\"eta\": 0.5"),
                                      GIVEN(IDLE_THEN(B2))));
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_ROUND);
    const pflref_trace trace = {pflref_trajectory_emit, &tj};
    pflref_run_result *res = tu_run(spec, &trace);
    pflref_build_info bi;
    pflref_build_info_get(&bi);
    char *text = NULL;
    pflref_error err;
    ck_assert_int_eq(pflref_result_to_json(spec, res, &tj, &bi, &text, &err),
                     PFLREF_OK);
    free(text);
    text = NULL;
    static const char *const field[] = {"w0", "final.w", "trajectory"};
    double *slot[] = {&res->w0[0], &res->w[0], &tj.values[0]};
    for (size_t k = 0; k < 3; k++) {
        const double keep = *slot[k];
        *slot[k] = k == 1 ? INFINITY : NAN;
        ck_assert_int_eq(pflref_result_to_json(spec, res, &tj, &bi, &text, &err),
                         PFLREF_EINTERNAL);
        ck_assert_str_eq(err.where, field[k]);
        ck_assert_ptr_null(text);
        *slot[k] = keep;
    }
    pflref_run_result_free(res);
    pflref_trajectory_free(&tj);
    pflref_spec_free(spec);
}
END_TEST

/* interp with per-client α: a grid point's test loss that overflows is
 * reported at that grid point.  Linear, w⁰ = 1; the training sample
 * (x, y) = (1, 1) has gradient 0, so h_0 = w = 1; the validation sample
 * (0, 0) scores loss 0 at every α; the test sample (1e200, 0) has
 * ŷ = 1e200 and squared loss 1e400 at α_0 = 0. */
START_TEST(test_interp_test_curve_overflow)
{
    const char *text = SPEC(
        "\"model\": {\"kind\": \"linear\", \"d\": 1, \"loss\": \"squared\"},"
        " \"init\": {\"kind\": \"given\", \"w\": [1]}",
        "\"problem\": {\"clients\": [{\"X\": [[1]], \"y\": [1],"
        " \"X_val\": [[0]], \"y_val\": [0],"
        " \"X_test\": [[1e200]], \"y_test\": [0]}]}",
        ALGS("interp", "\"eta\": 0.1, \"interp.grid\": 1",
             "\"interp.alpha\": \"per_client_grid\""),
        GIVEN_POST("", "[" B1 "]"));
    assert_api_diverges(text, "the test loss", -1, 0, 0,
                        "the test loss is not finite (NaN or Inf) after the "
                        "last round (post phase), client 0, local step 0");
}
END_TEST

/* ---- determinism -------------------------------------------------------- */

/* One golden vector per algorithm (a spec with its trajectory at step
 * level), data models where the algorithm has them. */
static const char *const GOLDEN[][2] = {
    {"fedavg", "golden/fedavg/worked-minibatch-b2-e2.json"},
    {"local", "golden/local/worked-two-rounds.json"},
    {"finetune", "golden/finetune/worked-personal-bias-prox.json"},
    {"prox", "golden/prox/worked-linear-warm-mu.json"},
    {"pfedme", "golden/pfedme/worked-linear-paper-minibatch.json"},
    {"ditto", "golden/ditto/worked-linear-moving-interleaved.json"},
    {"fedalt", "golden/fedalt/worked-notes-d-fedrep.json"},
    {"fedsim", "golden/fedsim/worked-notes-d-lg-fedavg.json"},
    {"pflego", "golden/pflego/worked-notes-c-code.json"},
    {"perfedavg", "golden/perfedavg/worked-mlp-identity-hf.json"},
    {"apfl", "golden/apfl/worked-mlp-output-adaptive.json"},
    {"interp", "golden/interp/worked-grid-validation-linear.json"},
    {"cfl", "golden/cfl/worked-seed003.json"},
    {"ifca", "golden/ifca/worked-partial-model.json"},
    {"fedfomo", "golden/fedfomo/worked-linear-val.json"},
    {"feddyn", "golden/feddyn/worked-linear-official.json"},
};
#define NGOLDEN ((int)(sizeof GOLDEN / sizeof GOLDEN[0]))

/* Problems whose products are above OpenBLAS's thresholds for splitting
 * the work between threads (gemv: m·n ≥ 9216; gemm: m·n·k ≥ 262144, with
 * its default GEMM_MULTITHREAD_THRESHOLD 4): gemv on 400 × 200 (tilt,
 * linear d = 200, full batches), gemm on 150..199 × 32 times 32 × 64
 * (dirichlet, mlp h = 64, full batches). */
static const char *const LARGE[] = {
    SPEC("\"model\": {\"kind\": \"linear\", \"d\": 200, \"loss\": \"squared\"}",
         "\"problem\": {\"generator\": {\"kind\": \"tilt\", \"K\": 2,"
         " \"n_train\": 400, \"n_test\": 100, \"seed\": 11}}",
         ALG("ditto", "\"eta\": 0.001, \"lambda\": 0.1"),
         "\"schedule\": {\"kind\": \"generate\", \"rounds\": 3,"
         " \"local\": {\"steps\": 2, \"batch_size\": 0}}"),
    SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 32, \"h\": 64, \"k\": 10},"
         " \"init\": {\"kind\": \"gaussian\", \"seed\": 3, \"sd\": 0.1}",
         "\"problem\": {\"generator\": {\"kind\": \"dirichlet\", \"K\": 3,"
         " \"n_min\": 150, \"n_max\": 200, \"n_test\": 50, \"seed\": 42}}",
         ALG("fedavg", "\"eta\": 0.05"),
         "\"schedule\": {\"kind\": \"generate\", \"rounds\": 2,"
         " \"local\": {\"steps\": 3, \"batch_size\": 0}}"),
};
#define NLARGE ((int)(sizeof LARGE / sizeof LARGE[0]))

/* `pflref run path` with OPENBLAS_NUM_THREADS = threads in the program's
 * environment; must exit 0; returns standard output (malloc'd). */
static char *run_with_threads(const char *path, const char *threads)
{
    const char *old = getenv("OPENBLAS_NUM_THREADS");
    char *saved = old != NULL ? strdup(old) : NULL;
    ck_assert_int_eq(setenv("OPENBLAS_NUM_THREADS", threads, 1), 0);
    char args[1024], *out, *err;
    snprintf(args, sizeof args, "run %s", path);
    const int rc = tu_cli(args, &out, &err);
    if (saved != NULL)
        setenv("OPENBLAS_NUM_THREADS", saved, 1);
    else
        unsetenv("OPENBLAS_NUM_THREADS");
    free(saved);
    ck_assert_msg(rc == 0, "%s with OPENBLAS_NUM_THREADS=%s: exit %d: %s",
                  path, threads, rc, err);
    ck_assert_ptr_nonnull(out);
    free(err);
    return out;
}

/* Three runs of path: two with one OpenBLAS thread, one with two; the
 * results are the same bytes, are results of `alg` and record the one
 * thread the program pins OpenBLAS to. */
static void assert_deterministic(const char *path, const char *alg)
{
    char *a = run_with_threads(path, "1");
    char *b = run_with_threads(path, "1");
    char *c = run_with_threads(path, "2");
    ck_assert_msg(strlen(a) > 0 && a[strlen(a) - 1] == '\n',
                  "%s: the result is not one line", path);
    ck_assert_msg(strcmp(a, b) == 0, "%s: two runs differ", path);
    ck_assert_msg(strcmp(a, c) == 0,
                  "%s: OPENBLAS_NUM_THREADS=2 changes the result", path);
    char name[64];
    snprintf(name, sizeof name, "\"algorithm\":{\"name\":\"%s\"", alg);
    ck_assert_msg(strstr(a, name) != NULL, "%s: not a result of %s", path,
                  alg);
    ck_assert_msg(strstr(a, "\"blas_threads\":1}") != NULL,
                  "%s: the result does not record one BLAS thread", path);
    free(a);
    free(b);
    free(c);
}

START_TEST(test_deterministic_golden)
{
    char *path = tu_repo_path(GOLDEN[_i][1]);
    assert_deterministic(path, GOLDEN[_i][0]);
    free(path);
}
END_TEST

START_TEST(test_deterministic_large)
{
    char *dir = tu_tmpdir();
    char *path = write_in(dir, "large.json", LARGE[_i]);
    assert_deterministic(path, _i == 0 ? "ditto" : "fedavg");
    unlink(path);
    free(path);
    rmdir(dir);
    free(dir);
}
END_TEST

Suite *reliability_suite(void)
{
    Suite *s = suite_create("reliability");
    TCase *tc = tcase_create("divergence");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_every_algorithm_has_a_case);
    tcase_add_loop_test(tc, test_diverge_cli, 0, NCASES);
    tcase_add_loop_test(tc, test_diverge_api, 0, NCASES);
    tcase_add_loop_test(tc, test_diverge_post_phase, 0, NPOST);
    tcase_add_loop_test(tc, test_diverge_nan, 0, NNAN);
    tcase_add_test(tc, test_pflego_server_overflow);
    tcase_add_test(tc, test_evaluation_overflow);
    tcase_add_test(tc, test_cfl_large_update_norm);
    tcase_add_test(tc, test_cfl_norm_overflow);
    tcase_add_test(tc, test_writer_refuses_non_finite);
    tcase_add_test(tc, test_interp_test_curve_overflow);
    suite_add_tcase(s, tc);
    TCase *td = tcase_create("determinism");
    tcase_set_timeout(td, 120);
    tcase_add_loop_test(td, test_deterministic_golden, 0, NGOLDEN);
    tcase_add_loop_test(td, test_deterministic_large, 0, NLARGE);
    suite_add_tcase(s, td);
    return s;
}
