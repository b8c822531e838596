/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli/report.c: what `pflref check` and `pflref verify` say about one
 * comparison: the PASS line, the FAIL block with its first divergence and
 * the vector's flags, and the same as JSON (pflref-check-report/1;
 * docs/formats.md, "Check reports"), with each quantity's tolerance and
 * its correct digits along the trajectory (pflref_digit_point), which
 * `pflref plot check` draws (cli/plot_check.c).
 *
 * The report stays meaningful when a value is far off: a divergence whose
 * sign differs says "sign differs", one off by orders of magnitude says
 * "off by 10^k", and the statistics then say so instead of a ULP distance
 * (which is then a count of doubles in between, like 9.2e18, that means
 * nothing); no correct digit is "no correct digits".  The statistics
 * cover every record compared, duplicates too, so they never contradict
 * the first divergence.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* The shortest decimal that reads back as x (at most 17 digits). */
static const char *shortest(double x, char buf[32])
{
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, 32, "%.*g", p, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return buf;
}

/* How far got is from expected, when a ULP distance would not say it:
 * " (sign differs)", " (off by 10^k)", or "". */
static const char *how_far(double expected, double got, char buf[48])
{
    buf[0] = '\0';
    if (expected == 0.0 || got == 0.0 || !isfinite(expected) ||
        !isfinite(got))
        return buf;
    double k = log10(fabs(got)) - log10(fabs(expected));
    if ((expected < 0.0) != (got < 0.0))
        snprintf(buf, 48, " (sign differs)");
    else if (fabs(k) >= 1.0)
        snprintf(buf, 48, " (off by 10^%d)",
                 (int)(k < 0.0 ? -floor(-k) : floor(k)));
    return buf;
}

void cli_print_divergence(const pflref_divergence *d, const char *who)
{
    printf("%s (%s", d->name, d->event);
    if (d->round >= 0)
        printf(", round %ld", d->round);
    if (d->client >= 0)
        printf(", client %ld", d->client);
    if (d->step >= 0)
        printf(", step %ld", d->step);
    if (d->record > 1)
        printf(", duplicate record: the %zu%s record of this quantity",
               d->record, d->record == 2 ? "nd" : d->record == 3 ? "rd" : "th");
    if (d->missing && d->got_len == 0)
        printf("): not produced by %s\n", who);
    else if (d->missing)
        printf("): %s's record has %zu numbers, the vector expects %zu\n", who,
               d->got_len, d->expected_len);
    else {
        char e[32], g[32], far[48];
        printf(")[%zu]: expected %s, got %s%s\n", d->index,
               shortest(d->expected, e), shortest(d->got, g),
               how_far(d->expected, d->got, far));
    }
}

/* ", 2.31 correct digits, max 4 ulp" or what stands for them when the
 * numbers are far apart. */
static void print_digits(double min_lre, uint64_t max_ulp, size_t sign,
                         size_t not_finite, int orders, int ulp)
{
    if (min_lre <= 0.0)
        printf(", no correct digits");
    else
        printf(", %s%.2f correct digits", ulp ? ">= " : "", min_lre);
    if (!ulp)
        return;
    if (not_finite > 0)
        printf(", %zu not finite", not_finite);
    if (sign > 0)
        printf(", sign differs in %zu number%s", sign, sign == 1 ? "" : "s");
    else if (orders > 0)
        printf(", off by up to 10^%d", orders);
    else if (not_finite == 0)
        printf(", max %llu ulp", (unsigned long long)max_ulp);
}

/* "  partial: 5 of 22 expected records compared (w, v); not recorded:
 * theta (12), w_local (5)". */
static void print_partial(const pflref_golden_report *rep, size_t needed)
{
    printf("  partial: %zu of %zu expected records compared", rep->quantities,
           rep->expected_records);
    const char *sep = " (";
    for (size_t k = 0; k < rep->n_names; k++)
        if (rep->by_name[k].quantities > 0) {
            printf("%s%s", sep, rep->by_name[k].name);
            sep = ", ";
        }
    printf("%s", sep[0] == ',' ? ")" : "");
    sep = "; not recorded: ";
    for (size_t k = 0; k < rep->n_names; k++)
        if (rep->by_name[k].skipped > 0) {
            printf("%s%s (%zu)", sep, rep->by_name[k].name,
                   rep->by_name[k].skipped);
            sep = ", ";
        }
    printf("; at least %zu required (--partial-min)", needed);
    printf("; rounds covered: %zu of %zu\n", rep->rounds_compared,
           rep->rounds_expected);
}

void cli_print_pass(const pflref_golden_report *rep, size_t needed)
{
    printf("PASS %s: %zu quantities, %zu numbers; max abs err %.3g, max rel "
           "err %.3g", rep->id, rep->quantities, rep->numbers,
           rep->max_abs_err, rep->max_rel_err);
    print_digits(rep->min_lre, rep->max_ulp, rep->sign_differs,
                 rep->not_finite, rep->max_orders, 1);
    if (rep->skipped > 0)
        printf(" (%zu expected quantities not recorded, skipped under "
               "--partial)", rep->skipped);
    printf("\n");
    if (needed > 0)
        print_partial(rep, needed);
}

void cli_print_flags(const char *flags)
{
    if (flags == NULL || strspn(flags, " ") == strlen(flags))
        return;
    printf("  flags:");
    const char *sep = " ";
    for (const char *f = flags; *f != '\0';) {
        const size_t n = strcspn(f, " ");
        if (n > 0) {
            printf("%s%.*s", sep, (int)n, f);
            sep = ", ";
        }
        f += n + (f[n] == ' ');
    }
    printf(" (the bug classes and caveats of the vector; its flags.json "
           "describes each)\n");
}

void cli_print_fail(const pflref_golden_report *rep, int resync,
                    size_t needed, const char *flags, const char *replay)
{
    if (!rep->diverged) {
        /* only too little compared under --partial: too few records, or
         * (enough of them) a round not covered without --partial-min */
        if (rep->quantities >= needed)
            printf("FAIL %s: --partial compared records of %zu of the %zu "
                   "rounds of the expected trajectory; without --partial-min "
                   "every round must be covered (a candidate that records "
                   "less passes only with an explicit --partial-min)\n",
                   rep->id, rep->rounds_compared, rep->rounds_expected);
        else
            printf("FAIL %s: --partial compared %zu of %zu expected records, "
                   "fewer than the %zu --partial-min requires\n", rep->id,
                   rep->quantities, rep->expected_records, needed);
        print_partial(rep, needed);
        cli_print_flags(flags);
        printf("  replay: %s\n", replay);
        return;
    }
    printf("FAIL %s: %zu of %zu quantities differ", rep->id, rep->mismatches,
           rep->quantities);
    if (rep->missing > 0)
        printf(" (%zu not recorded by the candidate)", rep->missing);
    if (rep->numbers > 0) {
        printf("; over the numbers compared: max abs err %.3g, max rel err "
               "%.3g", rep->max_abs_err, rep->max_rel_err);
        print_digits(rep->min_lre, 0, 0, 0, 0, 0);
    }
    printf("; first divergence: ");
    cli_print_divergence(&rep->first, "the candidate");
    for (size_t k = 0; k < rep->n_names; k++) {
        const pflref_quantity_stats *q = &rep->by_name[k];
        if (q->quantities == 0)
            continue;
        printf("  %-10s %zu of %zu differ", q->name, q->mismatches,
               q->quantities);
        if (q->numbers == 0) {
            printf("; no number compared\n");
            continue;
        }
        printf("; max abs err %.3g, max rel err %.3g", q->max_abs_err,
               q->max_rel_err);
        print_digits(q->min_lre, q->max_ulp, q->sign_differs, q->not_finite,
                     q->max_orders, 1);
        printf("\n");
    }
    for (size_t k = 1; resync && k < rep->n_listed; k++) {
        printf("  also: ");
        cli_print_divergence(&rep->listed[k], "the candidate");
    }
    if (needed > 0)
        print_partial(rep, needed);
    cli_print_mca(rep);
    cli_print_flags(flags);
    printf("  replay: %s\n", replay);
}

/* A record's key in words: name (event, round, client, step). */
static void print_key(const pflref_divergence *d)
{
    printf("%s (%s", d->name, d->event);
    if (d->round >= 0)
        printf(", round %ld", d->round);
    if (d->client >= 0)
        printf(", client %ld", d->client);
    if (d->step >= 0)
        printf(", step %ld", d->step);
    printf(")");
}

void cli_print_mca(const pflref_golden_report *rep)
{
    if (!rep->mca)
        return;
    printf("  precision: tolerance from %zu Monte Carlo runs at u = %.3g "
           "(C = %.3g; largest spread %.3g u of its record's magnitude)\n",
           rep->mca_runs, rep->mca_u, rep->mca_c, rep->mca_amplification);
    if (rep->mca_kinks > 0) {
        /* docs/validate.md, "Kinks and jumps" */
        printf("  kink: %zu quantities at a discontinuity of the perturbed "
               "runs, first ", rep->mca_kinks);
        print_key(&rep->mca_first_kink);
        const pflref_divergence *d = &rep->mca_first_kink;
        if (strcmp(rep->mca_kink_reason, "record") == 0)
            printf(": a perturbed run does not produce this record either "
                   "(a decision rounding flips)\n");
        else
            printf("[%zu] = %.17g, expected %.17g: out of the bound, within "
                   "the jump of the probe runs at %g u (a ReLU, argmax or "
                   "exact test at its threshold)\n",
                   d->index, d->got, d->expected, PFLREF_MCA_PROBE_SCALE);
    }
    if (rep->mca_chaotic == 0)
        return;
    printf("  chaotic: %zu records whose spread under random rounding "
           "reaches their own magnitude (or that a perturbed run did not "
           "produce), first ", rep->mca_chaotic);
    print_key(&rep->mca_first_chaotic);
    printf(": at this precision they cannot tell a bug from rounding\n");
}

/* ---- JSON ------------------------------------------------------------- */

json_t *cli_divergence_json(const pflref_divergence *d)
{
    json_t *o = json_object();
    json_object_set_new(o, "event", json_string(d->event));
    json_object_set_new(o, "phase", json_string(d->phase));
    if (d->round >= 0)
        json_object_set_new(o, "round", json_integer(d->round));
    if (d->client >= 0)
        json_object_set_new(o, "client", json_integer(d->client));
    if (d->step >= 0)
        json_object_set_new(o, "step", json_integer(d->step));
    json_object_set_new(o, "name", json_string(d->name));
    json_object_set_new(o, "position", cli_count_json(d->position));
    json_object_set_new(o, "missing", json_boolean(d->missing));
    if (d->record > 1)
        json_object_set_new(o, "duplicate_record",
                            json_integer((json_int_t)d->record));
    if (d->missing && d->got_len > 0)
        json_object_set_new(o, "got_length",
                            json_integer((json_int_t)d->got_len));
    if (!d->missing) {
        char far[48];
        json_object_set_new(o, "index", json_integer((json_int_t)d->index));
        json_object_set_new(o, "expected", json_real(d->expected));
        json_object_set_new(o, "got", json_real(d->got));
        how_far(d->expected, d->got, far);
        if (far[0] != '\0') {
            far[strlen(far) - 1] = '\0';   /* " (sign differs)" → text */
            json_object_set_new(o, "far", json_string(far + 2));
        }
    }
    return o;
}

json_t *cli_count_json(uint64_t n)
{
    return json_integer(n > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)n);
}

/* The statistics q as members of o, in the report's order; max_ulp is
 * null when the numbers are too far apart for it to mean anything. */
static void put_stats(json_t *o, const pflref_quantity_stats *q)
{
    json_object_set_new(o, "quantities", cli_count_json(q->quantities));
    json_object_set_new(o, "numbers", cli_count_json(q->numbers));
    json_object_set_new(o, "mismatches", cli_count_json(q->mismatches));
    json_object_set_new(o, "max_abs_err", json_real(q->max_abs_err));
    json_object_set_new(o, "max_rel_err", json_real(q->max_rel_err));
    json_object_set_new(o, "min_lre", json_real(q->min_lre));
    const int ulp_means = q->sign_differs == 0 && q->not_finite == 0 &&
                          q->max_orders == 0;
    json_object_set_new(o, "max_ulp", ulp_means ? cli_count_json(q->max_ulp)
                                                : json_null());
    json_object_set_new(o, "sign_differs", cli_count_json(q->sign_differs));
    json_object_set_new(o, "not_finite", cli_count_json(q->not_finite));
    json_object_set_new(o, "max_orders_off", json_integer(q->max_orders));
    json_object_set_new(o, "skipped", cli_count_json(q->skipped));
}

/* The digits of quantity slot `name` along the trajectory: parallel
 * arrays, one entry per point (pflref_digit_point), in position order;
 * round null where the record has none (the final state). */
static json_t *trajectory_digits(const pflref_golden_report *rep, size_t name)
{
    json_t *pos = json_array(), *round = json_array(), *lre = json_array(),
           *bad = json_array();
    for (size_t i = 0; i < rep->n_points; i++) {
        const pflref_digit_point *p = &rep->points[i];
        if (p->name != name)
            continue;
        json_array_append_new(pos, cli_count_json(p->position));
        json_array_append_new(round, p->round >= 0 ? json_integer(p->round)
                                                   : json_null());
        json_array_append_new(lre, json_real(p->min_lre));
        json_array_append_new(bad, cli_count_json(p->mismatches));
    }
    json_t *o = json_object();
    json_object_set_new(o, "position", pos);
    json_object_set_new(o, "round", round);
    json_object_set_new(o, "min_lre", lre);
    json_object_set_new(o, "mismatches", bad);
    return o;
}

/* A Monte Carlo run's seed as its exact decimal text: a seed is any 64-bit
 * value, above the largest JSON integer for half of them. */
static json_t *seed_text(uint64_t seed)
{
    char text[24];
    snprintf(text, sizeof text, "%llu", (unsigned long long)seed);
    return json_string(text);
}

void cli_put_comparison(json_t *entry, const pflref_golden_report *rep,
                        size_t needed)
{
    const pflref_quantity_stats all = {.quantities = rep->quantities,
                                       .numbers = rep->numbers,
                                       .mismatches = rep->mismatches,
                                       .max_abs_err = rep->max_abs_err,
                                       .max_rel_err = rep->max_rel_err,
                                       .min_lre = rep->min_lre,
                                       .max_ulp = rep->max_ulp,
                                       .sign_differs = rep->sign_differs,
                                       .not_finite = rep->not_finite,
                                       .max_orders = rep->max_orders,
                                       .skipped = rep->skipped};
    put_stats(entry, &all);
    json_object_set_new(entry, "expected_records",
                        cli_count_json(rep->expected_records));
    if (needed > 0) {
        json_object_set_new(entry, "partial_min", cli_count_json(needed));
        json_object_set_new(entry, "partial_short",
                            json_boolean(rep->quantities < needed));
        json_object_set_new(entry, "rounds_expected",
                            cli_count_json(rep->rounds_expected));
        json_object_set_new(entry, "rounds_compared",
                            cli_count_json(rep->rounds_compared));
    }
    json_t *names = json_array();
    for (size_t k = 0; k < rep->n_names; k++) {
        json_t *qo = json_object();
        json_object_set_new(qo, "name", json_string(rep->by_name[k].name));
        put_stats(qo, &rep->by_name[k]);
        json_object_set_new(qo, "atol", json_real(rep->by_name[k].atol));
        json_object_set_new(qo, "rtol", json_real(rep->by_name[k].rtol));
        json_object_set_new(qo, "trajectory_digits", trajectory_digits(rep, k));
        json_array_append_new(names, qo);
    }
    json_object_set_new(entry, "digits_stretch",
                        cli_count_json(rep->digits_stretch));
    json_object_set_new(entry, "by_quantity", names);
    if (rep->diverged) {
        json_object_set_new(entry, "first_divergence",
                            cli_divergence_json(&rep->first));
        json_t *list = json_array();
        for (size_t k = 0; k < rep->n_listed; k++)
            json_array_append_new(list, cli_divergence_json(&rep->listed[k]));
        json_object_set_new(entry, "divergences", list);
    }
    json_object_set_new(entry, "not_recorded", cli_count_json(rep->missing));
    json_object_set_new(entry, "skipped", cli_count_json(rep->skipped));
    if (!rep->mca)
        return;
    /* the Monte Carlo runs behind the tolerance (docs/formats.md) */
    json_t *m = json_object(), *seeds = json_array();
    json_object_set_new(m, "runs", cli_count_json(rep->mca_runs));
    json_object_set_new(m, "c", json_real(rep->mca_c));
    json_object_set_new(m, "u", json_real(rep->mca_u));
    for (size_t k = 0; k < rep->mca_runs && k < PFLREF_MCA_MAX_RUNS; k++)
        json_array_append_new(seeds, seed_text(rep->mca_seeds[k]));
    json_object_set_new(m, "seeds", seeds);
    json_object_set_new(m, "amplification",
                        isfinite(rep->mca_amplification)
                            ? json_real(rep->mca_amplification)
                            : json_null());
    json_object_set_new(m, "chaotic", cli_count_json(rep->mca_chaotic));
    json_object_set_new(m, "first_chaotic",
                        rep->mca_chaotic > 0
                            ? cli_divergence_json(&rep->mca_first_chaotic)
                            : json_null());
    json_object_set_new(m, "probe_runs",
                        cli_count_json(PFLREF_MCA_PROBE_RUNS));
    json_object_set_new(m, "probe_scale", json_real(PFLREF_MCA_PROBE_SCALE));
    json_object_set_new(m, "kinks", cli_count_json(rep->mca_kinks));
    json_object_set_new(m, "first_kink",
                        rep->mca_kinks > 0
                            ? cli_divergence_json(&rep->mca_first_kink)
                            : json_null());
    json_object_set_new(m, "kink_reason",
                        rep->mca_kinks > 0 ? json_string(rep->mca_kink_reason)
                                           : json_null());
    json_object_set_new(entry, "mca", m);
}
