/* tests/suites.h: every Check suite of the test runner (tests/main.c). */
#ifndef PFLREF_TESTS_SUITES_H
#define PFLREF_TESTS_SUITES_H

#include <check.h>

/* Suites land one by one during development. */
#define PFLREF_WEAK __attribute__((weak))

Suite *status_suite(void) PFLREF_WEAK;
Suite *model_suite(void) PFLREF_WEAK;
Suite *problem_suite(void) PFLREF_WEAK;
Suite *sampler_suite(void) PFLREF_WEAK;
Suite *schedule_suite(void) PFLREF_WEAK;
Suite *metrics_suite(void) PFLREF_WEAK;
Suite *generate_suite(void) PFLREF_WEAK;
Suite *trace_suite(void) PFLREF_WEAK;
Suite *params_suite(void) PFLREF_WEAK;
Suite *fedavg_suite(void) PFLREF_WEAK;
Suite *local_only_suite(void) PFLREF_WEAK;
Suite *finetune_suite(void) PFLREF_WEAK;
Suite *io_suite(void) PFLREF_WEAK;
Suite *cli_suite(void) PFLREF_WEAK;
Suite *seed000_suite(void) PFLREF_WEAK;
Suite *golden_suite(void) PFLREF_WEAK;

#endif
