/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/suites.h: every Check suite of the test runner (tests/main.c). */
#ifndef PFLREF_TESTS_SUITES_H
#define PFLREF_TESTS_SUITES_H

#include <check.h>

Suite *core_suite(void);
Suite *dtoa_suite(void);
Suite *model_suite(void);
Suite *problem_suite(void);
Suite *sampler_suite(void);
Suite *schedule_suite(void);
Suite *metrics_suite(void);
Suite *generate_suite(void);
Suite *fedavg_suite(void);
Suite *local_only_suite(void);
Suite *finetune_suite(void);
Suite *prox_suite(void);
Suite *pfedme_suite(void);
Suite *ditto_suite(void);
Suite *fedalt_suite(void);
Suite *pflego_suite(void);
Suite *perfedavg_suite(void);
Suite *apfl_suite(void);
Suite *lr_suite(void);
Suite *optim_suite(void);
Suite *interp_suite(void);
Suite *cfl_suite(void);
Suite *ifca_suite(void);
Suite *fedfomo_suite(void);
Suite *layers_suite(void);
Suite *dropout_suite(void);
Suite *fedbn_suite(void);
Suite *bn_running_suite(void);
Suite *pfedhn_suite(void);
Suite *lora_suite(void);
Suite *moon_suite(void);
Suite *io_suite(void);
Suite *spec_suite(void);
Suite *cli_suite(void);
Suite *seed000_suite(void);
Suite *golden_suite(void);
Suite *badinput_suite(void);
Suite *hostile_suite(void);
Suite *reliability_suite(void);
Suite *api_suite(void);
Suite *tamper_suite(void);
Suite *bindings_suite(void);
Suite *freeze_suite(void);
/* The files form of frozen vectors (tests/test_freeze_files.c), a test
 * case of freeze_suite. */
TCase *freeze_files_tcase(void);
Suite *version_suite(void);
Suite *npy_suite(void);
Suite *memory_suite(void);
Suite *headonly_suite(void);
Suite *diagnose_suite(void);
Suite *plot_suite(void);
Suite *progress_suite(void);
Suite *output_suite(void);
Suite *arrays_suite(void);
Suite *result_files_suite(void);
Suite *feddyn_suite(void);
Suite *scaffold_suite(void);
Suite *fedprox_suite(void);
Suite *fedrecon_suite(void);
Suite *fedamp_suite(void);
Suite *fedproto_suite(void);
Suite *fedrod_suite(void);
Suite *apple_suite(void);
Suite *fedala_suite(void);
Suite *fedpac_suite(void);

#endif
