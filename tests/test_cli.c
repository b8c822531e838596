/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_cli.c: the pflref command line, run as a program: exit codes,
 * messages naming the field, no partial output, byte-identical results,
 * the trace, verify, table, list. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "suites.h"
#include "testutil.h"

static char *write_spec(const char *dir, const char *name, const char *text)
{
    char *path = malloc(512);
    ck_assert_ptr_nonnull(path);
    snprintf(path, 512, "%s/%s", dir, name);
    ck_assert_int_eq(tu_write(path, text), 0);
    return path;
}

static const char GOOD[] =
    "{\"format\": \"pflref-spec/1\","
    " \"model\": {\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"},"
    " \"problem\": {\"generator\": {\"kind\": \"tilt\", \"K\": 4, \"n_train\": 6,"
    "   \"n_test\": 10, \"seed\": 3}},"
    " \"init\": {\"kind\": \"uniform\", \"seed\": 9, \"scale\": 0.5},"
    " \"algorithm\": {\"name\": \"finetune\", \"hyperparameters\": {\"eta\": 0.05, \"eta_ft\": 0.02}},"
    " \"schedule\": {\"kind\": \"generate\", \"rounds\": 5, \"clients_per_round\": 2,"
    "   \"batches\": \"reshuffle\", \"batch_seed\": 4, \"client_seed\": 11,"
    "   \"local\": {\"epochs\": 2, \"batch_size\": 4}, \"post\": {\"steps\": 3, \"batch_size\": 2}},"
    " \"output\": {\"trajectory\": \"step\"}}";

/* A malformed spec: exit 2, the message names the field, no output file. */
START_TEST(test_malformed_spec)
{
    char *dir = tu_tmpdir();
    char *spec = write_spec(dir, "bad.json",
        "{\"format\": \"pflref-spec/1\","
        " \"model\": {\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"},"
        " \"problem\": {\"clients\": [{\"X\": [[1, 2], [3, \"x\"]], \"y\": [1, 2]}]},"
        " \"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": 0.1}},"
        " \"schedule\": {\"kind\": \"generate\", \"rounds\": 1, \"local\": {\"epochs\": 1}}}");
    char args[1024], *err;
    snprintf(args, sizeof args, "run %s -o %s/out.json", spec, dir);
    ck_assert_int_eq(tu_cli(args, NULL, &err), 2);
    ck_assert_msg(strstr(err, "problem.clients[0].X[1][1]") != NULL, "%s", err);
    snprintf(args, sizeof args, "%s/out.json", dir);
    ck_assert_msg(!tu_exists(args), "an output file was written");
    free(err);
    unlink(spec);
    free(spec);
    rmdir(dir);
    free(dir);
}
END_TEST

/* Two runs of one spec give byte-identical results, also with OpenBLAS
 * allowed two threads (the reference pins it to one). */
START_TEST(test_deterministic)
{
    char *dir = tu_tmpdir();
    char *spec = write_spec(dir, "s.json", GOOD);
    char args[1024];
    snprintf(args, sizeof args, "run %s -o %s/a.json", spec, dir);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    snprintf(args, sizeof args, "run %s -o %s/b.json", spec, dir);
    setenv("OPENBLAS_NUM_THREADS", "2", 1);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    unsetenv("OPENBLAS_NUM_THREADS");
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(b, sizeof b, "%s/b.json", dir);
    char *ta = tu_read(a), *tb = tu_read(b);
    ck_assert_ptr_nonnull(ta);
    ck_assert_ptr_nonnull(tb);
    ck_assert_msg(strcmp(ta, tb) == 0, "two runs differ");
    ck_assert_ptr_nonnull(strstr(ta, "\"format\":\"pflref-result/1\""));
    free(ta);
    free(tb);
    unlink(a);
    unlink(b);
    unlink(spec);
    free(spec);
    rmdir(dir);
    free(dir);
}
END_TEST

/* --trace prints the worked example's steps; stdout gets the result. */
START_TEST(test_trace)
{
    char *v = tu_repo_path("golden/fedavg/worked-samples.json");
    /* run the vector's spec: extract it with the CLI-independent reader */
    char *text = tu_read(v);
    ck_assert_ptr_nonnull(text);
    /* the vector's own "spec" member (not the digest hash.spec) */
    const char *at = strstr(text, "\n \"spec\": ");
    ck_assert_ptr_nonnull(at);
    at++;
    char *dir = tu_tmpdir();
    /* The spec object ends before "tolerance". */
    const char *end = strstr(at, ",\n \"tolerance\"");
    ck_assert_ptr_nonnull(end);
    size_t n = (size_t)(end - (at + 8));
    char *spec_text = malloc(n + 1);
    memcpy(spec_text, at + 8, n);
    spec_text[n] = '\0';
    char *spec = write_spec(dir, "s.json", spec_text);
    char args[1024], *out, *err;
    snprintf(args, sizeof args, "run %s --trace", spec);
    ck_assert_int_eq(tu_cli(args, &out, &err), 0);
    ck_assert_msg(strstr(err, "step 1: w_local = [0.5]") != NULL, "%s", err);
    ck_assert_msg(strstr(err, "step 2: w_local = [1.75]") != NULL, "%s", err);
    ck_assert_msg(strstr(err, "server: w = [3.7]") != NULL, "%s", err);
    /* 1379/320 in double arithmetic, printed in full (pflref/dtoa.h) */
    ck_assert_msg(strstr(err, "server: w = [4.309375000000001]") != NULL,
                  "%s", err);
    ck_assert_msg(strstr(err, "round 0: w = [0.0]") != NULL, "%s", err);
    ck_assert_msg(strstr(out, "pflref-result/1") != NULL, "no result on stdout");
    free(out);
    free(err);
    unlink(spec);
    free(spec);
    free(spec_text);
    free(text);
    free(v);
    rmdir(dir);
    free(dir);
}
END_TEST

/* A diverging run exits 3 and names round, client and step. */
START_TEST(test_divergence_exit)
{
    char *dir = tu_tmpdir();
    char *spec = write_spec(dir, "d.json",
        "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
        " \"problem\": {\"clients\": [{\"a\": [1e300], \"c\": [1e300]}]},"
        " \"algorithm\": {\"name\": \"local\", \"hyperparameters\": {\"eta\": 1e300}},"
        " \"schedule\": {\"kind\": \"generate\", \"rounds\": 1, \"local\": {\"steps\": 2}}}");
    char args[1024], *err;
    snprintf(args, sizeof args, "run %s -o %s/o.json", spec, dir);
    ck_assert_int_eq(tu_cli(args, NULL, &err), 3);
    ck_assert_msg(strstr(err, "round 0, client 0, local step 1") != NULL, "%s", err);
    snprintf(args, sizeof args, "%s/o.json", dir);
    ck_assert(!tu_exists(args));
    free(err);
    unlink(spec);
    free(spec);
    rmdir(dir);
    free(dir);
}
END_TEST

/* verify: the golden folder passes; an empty folder is "nothing ran" (4);
 * a corrupted vector fails (1) naming round, client and quantity, with the
 * command that replays it. */
START_TEST(test_verify)
{
    char *golden = tu_repo_path("golden");
    char args[1024], *out;
    snprintf(args, sizeof args, "verify %s", golden);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 0);
    ck_assert_msg(strstr(out, "vectors reproduced, 0 failed") != NULL, "%s", out);
    free(out);

    char *dir = tu_tmpdir();
    snprintf(args, sizeof args, "verify %s", dir);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 4);
    free(out);

    char *src = tu_repo_path("golden/fedavg/worked-samples.json");
    char *text = tu_read(src);
    /* The last occurrence of w_2 is the round-1 server record. */
    char *at = NULL;
    for (char *p = strstr(text, "4.309375"); p != NULL; p = strstr(p + 1, "4.309375"))
        at = p;
    ck_assert_ptr_nonnull(at);
    at[0] = '5';
    /* a deliberate new expectation, with its hash (a silent edit is
     * refused: tests/test_tamper.c) */
    char *rehashed = tu_vector_hashed(text, 1);
    char *bad = write_spec(dir, "bad.json", rehashed);
    free(rehashed);
    snprintf(args, sizeof args, "verify %s", dir);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 1);
    ck_assert_msg(strstr(out, "round 1") != NULL && strstr(out, "w (server") != NULL,
                  "%s", out);
    /* the replay line names the program as it was run (PFLREF_CLI), and
     * the vector's flags are shown */
    char want[1024];
    snprintf(want, sizeof want, "  flags: aggregation-weights, "
             "local-step-count (");
    ck_assert_msg(strstr(out, want) != NULL, "%s", out);
    snprintf(want, sizeof want, "replay: %s verify %s/bad.json\n",
             getenv("PFLREF_CLI"), dir);
    ck_assert_msg(strstr(out, want) != NULL, "'%s' not in: %s", want, out);
    free(out);
    ck_assert_int_eq(tu_write(bad, "{\"format\": \"pflref-golden/1\"}"), 0);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 2);
    /* two copies of one vector: a duplicate id */
    char *copy = write_spec(dir, "copy1.json", text);
    char *copy2 = write_spec(dir, "copy2.json", text);
    unlink(bad);
    char *e2;
    ck_assert_int_eq(tu_cli(args, NULL, &e2), 2);
    ck_assert_msg(strstr(e2, "duplicate id") != NULL, "%s", e2);
    free(e2);
    unlink(copy);
    unlink(copy2);
    free(copy);
    free(copy2);
    unlink(bad);
    free(bad);
    free(text);
    free(src);
    rmdir(dir);
    free(dir);
    free(golden);
}
END_TEST

START_TEST(test_table_list_help)
{
    char *dir = tu_tmpdir();
    char *spec = write_spec(dir, "s.json", GOOD);
    char args[1024], *out, *err;
    snprintf(args, sizeof args, "run %s -o %s/r.json", spec, dir);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    snprintf(args, sizeof args, "table g=%s/r.json:global p=%s/r.json:personalized",
             dir, dir);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 0);
    ck_assert_msg(strstr(out, "mean") && strstr(out, "worst"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "table g=%s/r.json:local", dir);
    ck_assert_int_eq(tu_cli(args, NULL, &err), 2);
    ck_assert_msg(strstr(err, "metrics.local") != NULL, "%s", err);
    free(err);
    ck_assert_int_eq(tu_cli("table nonsense", NULL, NULL), 2);
    ck_assert_int_eq(tu_cli("table", NULL, NULL), 2);
    ck_assert_int_eq(tu_cli("list", &out, NULL), 0);
    ck_assert_msg(strstr(out, "fedavg.weights") && strstr(out, "finetune"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_cli("--version", &out, NULL), 0);
    ck_assert_msg(strstr(out, "OpenBLAS") != NULL, "%s", out);
    free(out);
    ck_assert_int_eq(tu_cli("--help", NULL, NULL), 0);
    ck_assert_int_eq(tu_cli("", NULL, NULL), 2);
    ck_assert_int_eq(tu_cli("frobnicate", NULL, NULL), 2);
    ck_assert_int_eq(tu_cli("run", NULL, NULL), 2);
    ck_assert_int_eq(tu_cli("run a.json b.json", NULL, NULL), 2);
    ck_assert_int_eq(tu_cli("run a.json --fast", NULL, NULL), 2);
    ck_assert_int_eq(tu_cli("run a.json -o", NULL, NULL), 2);
    ck_assert_int_eq(tu_cli("run /nonexistent.json", NULL, &err), 2);
    ck_assert_msg(strstr(err, "/nonexistent.json") != NULL, "%s", err);
    free(err);
    snprintf(args, sizeof args, "run %s -o /nonexistent-dir/r.json", spec);
    ck_assert_int_eq(tu_cli(args, NULL, &err), 2);
    free(err);
    snprintf(args, sizeof args, "%s/r.json", dir);
    unlink(args);
    unlink(spec);
    free(spec);
    rmdir(dir);
    free(dir);
}
END_TEST


/* Run every golden vector through the reference into a folder of candidate
 * results (the reference is a correct candidate). */
static char *reference_candidates(void)
{
    char *dir = tu_tmpdir();
    static const char *const vectors[] = {
        "golden/fedavg/worked-samples.json",
        "golden/fedavg/worked-uniform.json",
        "golden/finetune/worked-mu1.json",
    };
    for (size_t i = 0; i < 3; i++) {
        char *v = tu_repo_path(vectors[i]);
        char args[2048];
        snprintf(args, sizeof args, "run %s -o %s/c%zu.json", v, dir, i);
        ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
        free(v);
    }
    return dir;
}

static void remove_candidates(char *dir)
{
    for (size_t i = 0; i < 4; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/c%zu.json", dir, i);
        unlink(p);
    }
    rmdir(dir);
    free(dir);
}

/* check: folders paired by id; the reference passes; vectors without a
 * candidate are skipped; filters; --min-vectors; --json. */
START_TEST(test_check_pass_and_filters)
{
    char *dir = reference_candidates();
    char *golden = tu_repo_path("golden");
    char args[2048], *out;
    snprintf(args, sizeof args, "check %s %s", golden, dir);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 0);
    ck_assert_msg(strstr(out, "3 compared: 3 passed") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "PASS fedavg/worked/notes-1g/samples") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "check %s %s --include 'fedavg/*' --exclude "
             "fedavg/worked/notes-1g/uniform", golden, dir);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 0);
    ck_assert_msg(strstr(out, "1 compared: 1 passed") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "check %s %s --include prox-sign", golden, dir);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 0);
    ck_assert_msg(strstr(out, "finetune/worked/notes-5.1g/mu1") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "check %s %s --min-vectors 4", golden, dir);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 4);
    snprintf(args, sizeof args, "check %s %s --json --resync", golden, dir);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 0);
    ck_assert_msg(strstr(out, "\"format\": \"pflref-check-report/1\"") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "\"status\": \"pass\"") != NULL, "%s", out);
    free(out);
    free(golden);
    remove_candidates(dir);
}
END_TEST

/* check --resync: a vector whose state is in no record (pFLEGO with the
 * server's Adam) is skipped with a SKIP line naming that state, and the
 * others are still compared (exit 0); alone, nothing is compared (exit 4,
 * never 2); without --resync it passes. */
START_TEST(test_check_resync_skips_refused)
{
    char *dir = reference_candidates();
    char *golden = tu_repo_path("golden");
    char *pv = tu_repo_path("golden/pflego/worked-adam-code.json");
    char args[2048], *out, *err;
    snprintf(args, sizeof args, "run %s -o %s/c3.json", pv, dir);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    snprintf(args, sizeof args, "check %s %s --resync", golden, dir);
    ck_assert_int_eq(tu_cli(args, &out, &err), 0);
    ck_assert_msg(strstr(out, "SKIP pflego/worked/adam-code: pflego cannot "
                              "be re-synchronised (--resync): Adam's "
                              "moments") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "3 compared: 3 passed") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "1 skipped (cannot be re-synchronised)") !=
                  NULL, "%s", out);
    ck_assert_msg(strstr(out, "PASS pflego") == NULL, "%s", out);
    free(out);
    free(err);
    snprintf(args, sizeof args, "check %s %s --resync --json", golden, dir);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 0);
    ck_assert_msg(strstr(out, "\"status\": \"skipped_resync\"") != NULL,
                  "%s", out);
    ck_assert_msg(strstr(out, "\"skipped_resync\": 1") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "check %s %s/c3.json --resync", pv, dir);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 4);
    ck_assert_msg(strstr(out, "SKIP pflego/worked/adam-code") != NULL, "%s",
                  out);
    free(out);
    snprintf(args, sizeof args, "check %s %s/c3.json", pv, dir);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    free(pv);
    free(golden);
    remove_candidates(dir);
}
END_TEST

/* check --candidate-precision fp32: the tolerance from Monte Carlo runs
 * (seeds in the JSON report, --mca-runs and --mca-seed in the replay
 * line); IFCA's cluster choice on a tie is chaotic under float32
 * rounding: INCONCLUSIVE, never PASS; --mca-runs or --mca-c out of range
 * is a usage error. */
START_TEST(test_check_precision_mca)
{
    char *dir = tu_tmpdir();
    char *iv = tu_repo_path("golden/ifca/worked-partial-model.json");
    char *fv = tu_repo_path("golden/fedavg/worked-samples.json");
    char args[2048], *out, *err;
    snprintf(args, sizeof args, "run %s -o %s/c0.json", iv, dir);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    snprintf(args, sizeof args, "run %s -o %s/c1.json", fv, dir);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    snprintf(args, sizeof args, "check %s %s/c0.json --candidate-precision "
             "fp32", iv, dir);
    ck_assert_int_eq(tu_cli(args, &out, &err), 0);
    ck_assert_msg(strstr(out, "INCONCLUSIVE ifca/worked/partial-model") !=
                  NULL, "%s", out);
    ck_assert_msg(strstr(out, "  chaotic: ") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "PASS ") == NULL, "%s", out);
    ck_assert_msg(strstr(out, "1 inconclusive (chaotic at fp32)") != NULL,
                  "%s", out);
    ck_assert_msg(strstr(err, "inconclusive at fp32") != NULL, "%s", err);
    free(out);
    free(err);
    snprintf(args, sizeof args, "check %s %s/c1.json --candidate-precision "
             "fp32 --mca-runs 3 --mca-seed 7 --json", fv, dir);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 0);
    ck_assert_msg(strstr(out, "\"status\": \"pass\"") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "\"runs\": 3") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "\"seeds\": [") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "--candidate-precision fp32 --mca-runs 3 "
                              "--mca-seed 7") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "check %s %s/c1.json --mca-runs 0", fv, dir);
    ck_assert_int_eq(tu_cli(args, NULL, &err), 2);
    ck_assert_msg(strstr(err, "--mca-runs takes a count from 1 to 64") !=
                  NULL, "%s", err);
    free(err);
    snprintf(args, sizeof args, "check %s %s/c1.json --mca-c 0.5", fv, dir);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 2);
    free(iv);
    free(fv);
    remove_candidates(dir);
}
END_TEST

/* The Monte Carlo options' ranges (docs/bad-inputs.md, rows K1..): each
 * value out of range is a usage error, exit 2, the option and the value
 * named, nothing on standard output, before any vector is read. */
static const struct {
    const char *no, *name, *opt, *what;
} MCA_ROWS[] = {
    {"K1", "check: Monte Carlo run count out of 1 .. 64", "--mca-runs 65",
     "--mca-runs takes a count from 1 to 64: 65"},
    {"K2", "check: Monte Carlo run count not a count", "--mca-runs 2.5",
     "--mca-runs takes a count from 1 to 64: 2.5"},
    {"K3", "check: Monte Carlo factor C out of 1 .. 1e6", "--mca-c 0.5",
     "--mca-c takes a number from 1 to 1e6: 0.5"},
    {"K4", "check: Monte Carlo factor C not a number", "--mca-c nan",
     "--mca-c takes a number from 1 to 1e6: nan"},
    {"K5", "check: Monte Carlo seed not a count", "--mca-seed -1",
     "--mca-seed takes a count below 2^64: -1"},
};
#define N_MCA_ROWS (sizeof MCA_ROWS / sizeof MCA_ROWS[0])

START_TEST(test_mca_options_refused)
{
    char args[512], *out, *err;
    tu_catalogue_row rows[N_MCA_ROWS];
    for (size_t i = 0; i < N_MCA_ROWS; i++) {
        /* the files need not exist: the options are read first */
        snprintf(args, sizeof args, "check /nonexistent/v.json "
                 "/nonexistent/c.json --candidate-precision fp32 %s",
                 MCA_ROWS[i].opt);
        ck_assert_int_eq(tu_cli(args, &out, &err), 2);
        ck_assert_msg(strstr(err, MCA_ROWS[i].what) != NULL, "%s: %s",
                      MCA_ROWS[i].no, err);
        ck_assert_msg(strstr(err, "/nonexistent") == NULL, "%s: %s",
                      MCA_ROWS[i].no, err);
        ck_assert_str_eq(out, "");
        free(out);
        free(err);
        rows[i] = (tu_catalogue_row){MCA_ROWS[i].no, MCA_ROWS[i].name,
                                     "test_mca_options_refused"};
    }
    /* the letter's sequence continues with the dropout rows K6.. (tests/
     * test_badinput.c, test_lettered_catalogue, checks it whole) */
    char *path = tu_repo_path("docs/bad-inputs.md");
    char *doc = tu_read(path);
    ck_assert_ptr_nonnull(doc);
    for (size_t i = 0; i < N_MCA_ROWS; i++) {
        char row[256];
        snprintf(row, sizeof row, "| %s | %s |", rows[i].no, rows[i].name);
        const char *at = strstr(doc, row);
        ck_assert_msg(at != NULL, "the catalogue lacks \"%s\"", row);
        const char *eol = strchr(at, '\n');
        const char *t = strstr(at, "`test_mca_options_refused`");
        ck_assert_msg(t != NULL && (eol == NULL || t < eol),
                      "the catalogue's row %s does not name its test",
                      rows[i].no);
    }
    free(doc);
    free(path);
}
END_TEST

/* check: an empty candidate folder compares nothing (exit 4); a wrong
 * value is a mismatch naming round, server and quantity, with the replay
 * command; a malformed candidate and an unknown option are exit 2; a
 * declared non-ok outcome is a wrong outcome class (exit 1). */
START_TEST(test_check_failures)
{
    char *dir = tu_tmpdir();
    char *golden = tu_repo_path("golden");
    char *vec = tu_repo_path("golden/fedavg/worked-samples.json");
    char args[2048], *out, *err;
    snprintf(args, sizeof args, "check %s %s", golden, dir);
    ck_assert_int_eq(tu_cli(args, &out, &err), 4);
    ck_assert_msg(strstr(out, "0 compared") != NULL, "%s", out);
    free(out);
    free(err);

    snprintf(args, sizeof args, "run %s -o %s/c0.json", vec, dir);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/c0.json", dir);
    char *text = tu_read(path);
    char *at = strstr(text, "\"event\":\"server\",\"phase\":\"train\",\"round\":0,"
                            "\"name\":\"w\",\"value\":[");
    ck_assert_ptr_nonnull(at);
    at = strchr(at, '[') + 1;
    at[0] = '9';   /* 3.7… → 9.7… */
    ck_assert_int_eq(tu_write(path, text), 0);
    snprintf(args, sizeof args, "check %s %s", vec, path);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 1);
    ck_assert_msg(strstr(out, "first divergence: w (server, round 0)[0]") != NULL, "%s", out);
    char want[2048];
    snprintf(want, sizeof want, "\n  flags: aggregation-weights, "
             "local-step-count (the bug classes and caveats of the vector; "
             "its flags.json describes each)\n  replay: %s check %s %s\n",
             getenv("PFLREF_CLI"), vec, path);
    ck_assert_msg(strstr(out, want) != NULL, "'%s' not in: %s", want, out);
    free(out);
    /* the JSON report lists the flags too */
    snprintf(args, sizeof args, "check %s %s --json", vec, path);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 1);
    ck_assert_msg(strstr(out, "\"flags\": [\n    \"aggregation-weights\",\n"
                              "    \"local-step-count\"\n   ]") != NULL,
                  "%s", out);
    free(out);

    /* run under another name, by a relative path, from another folder:
     * the replay line is that command, and it runs as printed (a path
     * with a quote is quoted) */
    char odd[600], cmd[8192];
    snprintf(odd, sizeof odd, "%s/it's.json", dir);
    ck_assert_int_eq(tu_write(odd, text), 0);
    snprintf(cmd, sizeof cmd, "ln -s %s %s/my-pflref && cd %s && "
             "./my-pflref check %s \"%s\" >out.txt", getenv("PFLREF_CLI"),
             dir, dir, vec, odd);
    ck_assert_int_eq(WEXITSTATUS(system(cmd)), 1);
    snprintf(cmd, sizeof cmd, "%s/out.txt", dir);
    out = tu_read(cmd);
    ck_assert_ptr_nonnull(out);
    snprintf(want, sizeof want, "  replay: ./my-pflref check %s '%s/it'\\''s.json'\n",
             vec, dir);
    char *line = strstr(out, want);
    ck_assert_msg(line != NULL, "'%s' not in: %s", want, out);
    /* the printed command, run in that folder, fails the same way */
    char *end = strchr(line + 2, '\n');
    *end = '\0';
    snprintf(cmd, sizeof cmd, "cd %s && %s >out2.txt", dir, line + 10);
    ck_assert_int_eq(WEXITSTATUS(system(cmd)), 1);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/out.txt", dir);
    unlink(cmd);
    snprintf(cmd, sizeof cmd, "%s/out2.txt", dir);
    unlink(cmd);
    snprintf(cmd, sizeof cmd, "%s/my-pflref", dir);
    unlink(cmd);
    unlink(odd);

    ck_assert_int_eq(tu_write(path, "{\"format\": \"pflref-result/1\", "
                                    "\"outcome\": {\"class\": \"diverged\"}}"), 0);
    snprintf(args, sizeof args, "check %s %s", vec, path);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 1);
    ck_assert_msg(strstr(out, "1 wrong outcome classes") != NULL, "%s", out);
    /* a wrong outcome class shows the flags too */
    ck_assert_msg(strstr(out, "\n  flags: aggregation-weights, "
                              "local-step-count (") != NULL, "%s", out);
    free(out);

    ck_assert_int_eq(tu_write(path, "{\"format\": \"pflref-result/1\", "
                                    "\"trajectory\": [{\"event\": \"jump\"}]}"), 0);
    ck_assert_int_eq(tu_cli(args, NULL, &err), 2);
    ck_assert_msg(strstr(err, "candidate:") != NULL, "%s", err);
    free(err);
    ck_assert_int_eq(tu_write(path, "{\"format\": \"other\"}"), 0);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 2);
    /* in folder mode a candidate needs its vector's id */
    ck_assert_int_eq(tu_write(path, "{\"format\": \"pflref-result/1\"}"), 0);
    snprintf(args, sizeof args, "check %s %s", golden, dir);
    ck_assert_int_eq(tu_cli(args, NULL, &err), 2);
    ck_assert_msg(strstr(err, "needs \"id\"") != NULL, "%s", err);
    free(err);
    snprintf(args, sizeof args, "check %s %s --candidate-precision fp16", vec, path);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 2);
    snprintf(args, sizeof args, "check %s", vec);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 2);
    snprintf(args, sizeof args, "check %s /nonexistent", vec);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 2);
    unlink(path);
    free(text);
    free(vec);
    free(golden);
    rmdir(dir);
    free(dir);
}
END_TEST

/* The digits along the trajectory stay bounded on a long run: seed 000's
 * FedAvg frozen per round (2813 expected records) is drawn in stretches,
 * the fewest that keep at most 1024 points; each quantity's points rise
 * in position, one per stretch, and their least digits are the
 * quantity's min_lre. */
START_TEST(test_check_digits_bounded)
{
    char *dir = tu_tmpdir(), args[2048], *out;
    char *spec = tu_repo_path("golden/seed000/fedavg-ft.json");
    snprintf(args, sizeof args, "freeze %s -o %s/v.json --trajectory round",
             spec, dir);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    snprintf(args, sizeof args, "run --quiet %s/v.json -o %s/c.json", dir, dir);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    snprintf(args, sizeof args, "check --json %s/v.json %s/c.json", dir, dir);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 0);
    json_error_t je;
    json_t *root = json_loads(out, 0, &je);
    ck_assert_msg(root != NULL, "%s", je.text);
    const json_t *v = json_array_get(json_object_get(root, "vectors"), 0);
    const json_int_t records =
        json_integer_value(json_object_get(v, "expected_records"));
    const json_int_t w = json_integer_value(json_object_get(v, "digits_stretch"));
    const json_t *byq = json_object_get(v, "by_quantity");
    const json_int_t names = (json_int_t)json_array_size(byq);
    ck_assert_int_gt(records, 1024);
    ck_assert_int_gt(w, 1);
    /* the fewest: one record fewer per stretch would allow too many */
    const json_int_t fewer = w - 1 < names ? w - 1 : names;
    ck_assert_int_gt((records + w - 2) / (w - 1) * fewer, 1024);
    size_t total = 0, q;
    const json_t *e;
    json_array_foreach(byq, q, e) {
        const json_t *td = json_object_get(e, "trajectory_digits");
        const json_t *pos = json_object_get(td, "position");
        const json_t *lre = json_object_get(td, "min_lre");
        ck_assert_uint_gt(json_array_size(pos), 0);
        ck_assert_uint_eq(json_array_size(pos), json_array_size(lre));
        double least = 99.0;
        for (size_t i = 0; i < json_array_size(pos); i++) {
            const json_int_t x = json_integer_value(json_array_get(pos, i));
            ck_assert_int_lt(x, records);
            if (i > 0)   /* the next stretch */
                ck_assert_int_gt(x / w, json_integer_value(
                                            json_array_get(pos, i - 1)) / w);
            const double d = json_real_value(json_array_get(lre, i));
            least = d < least ? d : least;
        }
        ck_assert_double_eq(least, json_real_value(json_object_get(e, "min_lre")));
        total += json_array_size(pos);
    }
    ck_assert_uint_le(total, 1024);
    json_decref(root);
    free(out);
    free(spec);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* A record the candidate did not write has no correct digit: its point
 * along the trajectory is 0 and a mismatch, at the first divergence's
 * position; the records around it keep their digits. */
START_TEST(test_check_digits_missing_record)
{
    char *dir = tu_tmpdir(), args[2048], path[600], *out;
    char *vec = tu_repo_path("golden/fedavg/worked-samples.json");
    snprintf(args, sizeof args, "run %s -o %s/c.json", vec, dir);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    snprintf(path, sizeof path, "%s/c.json", dir);
    json_error_t je;
    json_t *c = json_load_file(path, 0, &je);
    ck_assert_ptr_nonnull(c);
    /* drop the server's w of round 0 */
    json_t *traj = json_object_get(c, "trajectory");
    size_t i, gone = 0;
    json_t *r;
    json_array_foreach(traj, i, r) {
        const char *ev = json_string_value(json_object_get(r, "event"));
        if (strcmp(ev, "server") == 0 &&
            json_integer_value(json_object_get(r, "round")) == 0) {
            json_array_remove(traj, i);
            gone++;
            break;
        }
    }
    ck_assert_uint_eq(gone, 1);
    ck_assert_int_eq(json_dump_file(c, path, 0), 0);
    json_decref(c);
    snprintf(args, sizeof args, "check --json %s %s", vec, path);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 1);
    json_t *root = json_loads(out, 0, &je);
    ck_assert_ptr_nonnull(root);
    const json_t *v = json_array_get(json_object_get(root, "vectors"), 0);
    const json_t *d = json_object_get(v, "first_divergence");
    ck_assert(json_is_true(json_object_get(d, "missing")));
    const json_int_t at = json_integer_value(json_object_get(d, "position"));
    const json_t *w = json_array_get(json_object_get(v, "by_quantity"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(w, "name")), "w");
    const json_t *td = json_object_get(w, "trajectory_digits");
    size_t found = 0;
    for (size_t k = 0; k < json_array_size(json_object_get(td, "position")); k++) {
        const json_int_t x = json_integer_value(
            json_array_get(json_object_get(td, "position"), k));
        const double digits = json_real_value(
            json_array_get(json_object_get(td, "min_lre"), k));
        const json_int_t bad = json_integer_value(
            json_array_get(json_object_get(td, "mismatches"), k));
        if (x == at) {
            ck_assert_double_eq(digits, 0.0);
            ck_assert_int_eq(bad, 1);
            ck_assert_int_eq(json_integer_value(json_array_get(
                                 json_object_get(td, "round"), k)), 0);
            found++;
        } else {
            ck_assert_msg(digits > 13.0, "w at %lld: %g digits",
                          (long long)x, digits);
            ck_assert_int_eq(bad, 0);
        }
    }
    ck_assert_uint_eq(found, 1);
    json_decref(root);
    free(out);
    free(vec);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* The CLI's --trace prints seed 003's numbers for the prox algorithm
 * (tests/test_prox.c checks the same numbers through the C API). */
START_TEST(test_seed003_cli_trace)
{
    char *dir = tu_tmpdir();
    char path[512], args[1200];
    snprintf(path, sizeof path, "%s/seed003.json", dir);
    ck_assert_int_eq(
        tu_write(path,
                 "{\"format\": \"pflref-spec/1\","
                 " \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
                 " \"problem\": {\"clients\": [{\"a\": [1], \"c\": [5]}]},"
                 " \"init\": {\"kind\": \"given\", \"w\": [2]},"
                 " \"algorithm\": {\"name\": \"prox\", \"hyperparameters\":"
                 " {\"lambda\": 3, \"eta_p\": 0.1, \"K\": 2}},"
                 " \"schedule\": {\"kind\": \"generate\", \"rounds\": 1,"
                 " \"local\": {\"steps\": 1}}}"),
        0);
    snprintf(args, sizeof args, "run '%s' -o '%s/r.json' --trace", path, dir);
    char *out = NULL, *err = NULL;
    ck_assert_int_eq(tu_cli(args, &out, &err), 0);
    ck_assert_msg(strstr(err, "step 1: theta = [2.3]") != NULL, "%s", err);
    ck_assert_msg(strstr(err, "step 2: theta = [2.48]") != NULL, "%s", err);
    ck_assert_msg(strstr(err, "theta_hat = [2.75]") != NULL, "%s", err);
    free(out);
    free(err);
    /* the same through the golden vector itself */
    char *vec = tu_repo_path("golden/prox/worked-seed003-inner-loop.json");
    snprintf(args, sizeof args, "run '%s' -o '%s/g.json' --trace", vec, dir);
    ck_assert_int_eq(tu_cli(args, &out, &err), 0);
    ck_assert_msg(strstr(err, "step 1: theta = [2.3]") != NULL &&
                      strstr(err, "step 2: theta = [2.48]") != NULL &&
                      strstr(err, "theta_hat = [2.75]") != NULL,
                  "%s", err);
    free(vec);
    free(out);
    free(err);
    free(dir);
}
END_TEST

/* `pflref CMD --help` (or -h first) prints CMD's usage and paragraph on
 * standard output and exits 0, whatever else is on the line; an unknown
 * command with --help is still an unknown command. */
START_TEST(test_command_help)
{
    static const char *const cmds[] = {"run", "table", "verify", "check",
                                       "diagnose", "freeze", "plot", "list"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char args[128], want[64], *out;
        snprintf(args, sizeof args, "%s --help", cmds[i]);
        snprintf(want, sizeof want, "usage: pflref %s ", cmds[i]);
        ck_assert_int_eq(tu_cli(args, &out, NULL), 0);
        ck_assert_msg(strncmp(out, want, strlen(want)) == 0, "%s: %s", args, out);
        /* its own paragraph, not another command's */
        snprintf(want, sizeof want, "\n  %s ", cmds[i]);
        ck_assert_msg(strstr(out, want) != NULL, "%s: %s", args, out);
        ck_assert_msg(strstr(out, "exit status:") != NULL, "%s: %s", args, out);
        ck_assert_msg(strstr(out, "\n  freeze ") == NULL || i == 5, "%s: %s", args, out);
        free(out);
    }
    char *out;
    ck_assert_int_eq(tu_cli("check -h", &out, NULL), 0);
    ck_assert_ptr_nonnull(strstr(out, "usage: pflref check EXPECTED"));
    free(out);
    ck_assert_int_eq(tu_cli("run spec.json -o r.json --help", &out, NULL), 0);
    ck_assert_ptr_nonnull(strstr(out, "usage: pflref run SPEC"));
    free(out);
    char *err;
    ck_assert_int_eq(tu_cli("frobnicate --help", NULL, &err), 2);
    ck_assert_ptr_nonnull(strstr(err, "unknown command: frobnicate"));
    free(err);
}
END_TEST

Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_malformed_spec);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_trace);
    tcase_add_test(tc, test_divergence_exit);
    tcase_add_test(tc, test_verify);
    tcase_add_test(tc, test_table_list_help);
    tcase_add_test(tc, test_check_pass_and_filters);
    tcase_add_test(tc, test_check_failures);
    tcase_add_test(tc, test_check_digits_bounded);
    tcase_add_test(tc, test_check_digits_missing_record);
    tcase_add_test(tc, test_seed003_cli_trace);
    tcase_add_test(tc, test_command_help);
    tcase_add_test(tc, test_check_resync_skips_refused);
    tcase_add_test(tc, test_check_precision_mca);
    tcase_add_test(tc, test_mca_options_refused);
    suite_add_tcase(s, tc);
    return s;
}
