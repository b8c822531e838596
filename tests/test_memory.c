/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_memory.c: limits by memory (docs/performance.md, "Limits by
 * memory"): the memory available (pflref_memory_available, ref/models/
 * memory.c), the model workspace's bytes, and the run's up-front estimate
 * (ref/engine/run.c), which refuses a run that would not fit with
 * PFLREF_ENOMEM naming the sizes and otherwise lets it run.  Every test
 * pins the memory with PFLREF_MEMORY_LIMIT, so it holds on any machine.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

static void pin(const char *bytes)
{
    ck_assert_int_eq(setenv("PFLREF_MEMORY_LIMIT", bytes, 1), 0);
}

/* The variable gives the byte count exactly and names itself. */
START_TEST(test_env_limit)
{
    size_t bytes = 0;
    const char *source = NULL;
    pin("123456789");
    ck_assert_int_eq(pflref_memory_available(&bytes, &source, NULL),
                     PFLREF_OK);
    ck_assert_uint_eq(bytes, 123456789u);
    ck_assert_str_eq(source, "PFLREF_MEMORY_LIMIT");
    unsetenv("PFLREF_MEMORY_LIMIT");
}
END_TEST

/* Without it, the machine's own figure: positive, from /proc/meminfo on
 * Linux (or the address-space limit when one is set). */
START_TEST(test_machine_limit)
{
    unsetenv("PFLREF_MEMORY_LIMIT");
    size_t bytes = 0;
    const char *source = NULL;
    ck_assert_int_eq(pflref_memory_available(&bytes, &source, NULL),
                     PFLREF_OK);
    ck_assert_msg(bytes > 0, "no memory available?");
    ck_assert_msg(strcmp(source, "MemAvailable") == 0 ||
                      strcmp(source, "RLIMIT_AS") == 0 ||
                      strcmp(source, "sysconf") == 0,
                  "source %s", source);
}
END_TEST

/* A malformed value is refused, never read as "no limit". */
static const char *const bad_values[] = {"", "0", "-5", "12k", "1e9",
                                         " 7", "99999999999999999999999"};

START_TEST(test_env_malformed)
{
    size_t bytes = 0;
    pflref_error err;
    pin(bad_values[_i]);
    ck_assert_int_eq(pflref_memory_available(&bytes, NULL, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "PFLREF_MEMORY_LIMIT");
    ck_assert_msg(strstr(err.message, "not a positive number of bytes"),
                  "message: %s", err.message);
    unsetenv("PFLREF_MEMORY_LIMIT");
}
END_TEST

/* The workspace grows by nb·(d + 1 + 2k + 4h) doubles per extra batch
 * row (batch.c's buffers: X_b, y_b, Z, RZ, A, H, RH, T); an overflow
 * gives SIZE_MAX. */
START_TEST(test_workspace_bytes)
{
    pflref_model sm = tb_model(PFLREF_MODEL_SOFTMAX,
                               PFLREF_LOSS_CROSS_ENTROPY, 784, 10, 0, 1);
    size_t a = pflref_model_workspace_bytes(&sm, 50);
    size_t b = pflref_model_workspace_bytes(&sm, 80);
    ck_assert_uint_eq(b - a, 30u * (784 + 1 + 20) * 8);
    pflref_model mlp = tb_mlp(PFLREF_LOSS_CROSS_ENTROPY, 784, 10, 200,
                              PFLREF_ACT_RELU, 1, 1);
    a = pflref_model_workspace_bytes(&mlp, 50);
    b = pflref_model_workspace_bytes(&mlp, 51);
    ck_assert_uint_eq(b - a, (784u + 1 + 20 + 800) * 8);
    ck_assert_uint_eq(pflref_model_workspace_bytes(&mlp, SIZE_MAX / 100),
                      SIZE_MAX);
}
END_TEST

/* N clients of a softmax model with P = 10·50 + 10 = 510 parameters and
 * 4 samples each, local training (personal states N·P doubles). */
static tb_case *local_case(size_t N)
{
    pflref_model m = tb_model(PFLREF_MODEL_SOFTMAX,
                              PFLREF_LOSS_CROSS_ENTROPY, 50, 10, 0, 1);
    tb_case *c = tb_new(&m, N);
    double X[4 * 50], y[4] = {0, 3, 7, 9};
    for (size_t q = 0; q < 4 * 50; q++)
        X[q] = 0.01 * (double)(q % 17) - 0.05;
    for (size_t i = 0; i < N; i++)
        tb_train(c, i, 4, X, y);
    c->hyper.eta = 0.1;
    tb_generate(c, 1, 1, 0);
    return c;
}

/* The personal states alone exceed the limit: refused with PFLREF_ENOMEM
 * at "clients", naming the clients, P, each term and the limit; with the
 * states plus 1 MiB (the rest of this small run: about 30 KiB) it runs. */
START_TEST(test_run_refused_then_runs)
{
    const size_t N = 400, P = 510, personal = N * P * 8;
    tb_case *c = local_case(N);
    char limit[32];
    snprintf(limit, sizeof limit, "%zu", personal - 1);
    pin(limit);
    pflref_error err;
    tb_run_error(c, "local", PFLREF_ENOMEM, &err);
    ck_assert_str_eq(err.where, "clients");
    const char *want[] = {"400 clients × 510 parameters",
                          "personal states 1.6 MiB", "trajectory 0.0 MiB",
                          "memory available (PFLREF_MEMORY_LIMIT)"};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
        ck_assert_msg(strstr(err.message, want[k]) != NULL,
                      "the message lacks \"%s\": %s", want[k], err.message);
    snprintf(limit, sizeof limit, "%zu", personal + ((size_t)1 << 20));
    pin(limit);
    pflref_run_result *res = tb_run(c, "local", NULL);
    ck_assert_uint_eq(res->N, N);
    pflref_run_result_free(res);
    unsetenv("PFLREF_MEMORY_LIMIT");
    tb_free(c);
}
END_TEST

/* A recorded trajectory counts: FedAvg (no personal states) on 2 clients,
 * 10 rounds of 5 steps, recorded at step level, keeps at least
 * 2·(10 + 20) + 100 + 3 = 163 events of P = 510 doubles (≈ 650 KiB); the
 * same run unrecorded needs far less than 400 KiB. */
START_TEST(test_trajectory_counted)
{
    tb_case *c = local_case(2);
    tb_generate(c, 10, 5, 2);
    pin("409600");
    pflref_run_result *res = tb_run(c, "fedavg", NULL);
    pflref_run_result_free(res);

    pflref_schedule *sch = tb_schedule(c, "fedavg");
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_STEP);
    const pflref_trace tr = {.emit = pflref_trajectory_emit, .ctx = &tj};
    pflref_error err;
    res = NULL;
    pflref_status st = pflref_run(c->problem, pflref_algorithm_find("fedavg"),
                                  &c->hyper, sch, c->w0, &tr, &res, &err);
    ck_assert_int_eq(st, PFLREF_ENOMEM);
    ck_assert_ptr_null(res);
    ck_assert_uint_eq(tj.count, 0);      /* refused before round 0 */
    ck_assert_msg(strstr(err.message, "personal states 0.0 MiB") &&
                      strstr(err.message, "trajectory 0.6 MiB"),
                  "message: %s", err.message);
    pflref_trajectory_free(&tj);
    unsetenv("PFLREF_MEMORY_LIMIT");
    tb_free(c);
}
END_TEST

/* The command line: a malformed PFLREF_MEMORY_LIMIT is invalid input,
 * exit 2, naming the variable, nothing on standard output. */
START_TEST(test_cli_malformed_limit)
{
    char *spec = tu_repo_path("golden/fedavg/worked-samples.json");
    char args[4096];
    snprintf(args, sizeof args, "run %s", spec);
    pin("lots");
    char *out = NULL, *errout = NULL;
    int rc = tu_cli(args, &out, &errout);
    unsetenv("PFLREF_MEMORY_LIMIT");
    ck_assert_msg(rc == 2, "exit %d, stderr: %s", rc, errout);
    ck_assert_msg(strstr(errout, "PFLREF_MEMORY_LIMIT") != NULL,
                  "stderr: %s", errout);
    ck_assert_str_eq(out, "");
    free(out);
    free(errout);
    free(spec);
}
END_TEST

Suite *memory_suite(void)
{
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("memory");
    tcase_add_test(tc, test_env_limit);
    tcase_add_test(tc, test_machine_limit);
    tcase_add_loop_test(tc, test_env_malformed, 0,
                        (int)(sizeof bad_values / sizeof bad_values[0]));
    tcase_add_test(tc, test_workspace_bytes);
    tcase_add_test(tc, test_run_refused_then_runs);
    tcase_add_test(tc, test_trajectory_counted);
    tcase_add_test(tc, test_cli_malformed_limit);
    suite_add_tcase(s, tc);
    return s;
}
