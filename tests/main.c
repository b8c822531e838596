/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/main.c: the one test runner.  Runs every suite of tests/suites.h in
 * one SRunner, so `make check` ends with Check's single summary line
 * ("100%: Checks: N, Failures: 0, Errors: 0").
 *
 * Environment: CK_FORK, CK_VERBOSITY, CK_RUN_SUITE, CK_RUN_CASE as Check
 * documents; PFLREF_CLI (path of the pflref binary) and PFLREF_ROOT (the
 * repository) are set by the Makefile.
 */
#include <stdlib.h>
#include <gsl/gsl_errno.h>
#include "suites.h"
#include "pflref.h"

typedef Suite *(*suite_fn)(void);

int main(void)
{
    const suite_fn suites[] = {
        core_suite,     dtoa_suite,
        model_suite,    problem_suite, sampler_suite,
        schedule_suite, metrics_suite,  generate_suite,
        fedavg_suite,   local_only_suite, finetune_suite, prox_suite,
        pfedme_suite,   ditto_suite,    fedalt_suite,  pflego_suite,
        perfedavg_suite, apfl_suite,    lr_suite,      optim_suite,
        interp_suite,
        cfl_suite,      ifca_suite,     fedfomo_suite,
        fedbn_suite,    bn_running_suite, layers_suite, dropout_suite,
        pfedhn_suite,
        lora_suite,
        moon_suite,
        io_suite,       cli_suite,      seed000_suite,  golden_suite,
        spec_suite,
        badinput_suite, reliability_suite, api_suite,
        hostile_suite,  tamper_suite,   bindings_suite,
        freeze_suite,   version_suite,  npy_suite,
        memory_suite,   headonly_suite, diagnose_suite,
        plot_suite,     progress_suite, output_suite,
        arrays_suite,
        result_files_suite,
        feddyn_suite,
        scaffold_suite,
        fedprox_suite,
        fedrecon_suite,
        fedamp_suite,
        fedproto_suite,
        fedrod_suite,
        apple_suite,
        fedala_suite,
        fedpac_suite,
    };
    /* As in the CLI: GSL reports through return codes, never aborts, and
     * OpenBLAS runs on one thread. */
    gsl_set_error_handler_off();
    pflref_blas_pin_threads();
    SRunner *sr = NULL;
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        if (sr == NULL)
            sr = srunner_create(suites[i]());
        else
            srunner_add_suite(sr, suites[i]());
    }
    if (sr == NULL)
        return EXIT_FAILURE;
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
