/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/core/mca_decide.h: exact tests under Monte Carlo arithmetic (private
 * to ref/).  Floor: core.
 *
 * Random rounding (ref/core/mca.h) moves a value by a continuous amount:
 * it never makes a sum exactly zero.  A candidate's rounding does: its
 * terms sit on the grid of its format, and a sum within its rounding
 * error of zero can come out exactly 0 (a bfloat16 Σ(Θ − Θ_i) of
 * differences that nearly cancel).  An algorithm that branches on
 * `sum == 0` asks this function instead, so that a perturbed run takes
 * the zero branch wherever the candidate's arithmetic could; the records
 * after the branch then spread, and the check reports them chaotic
 * (INCONCLUSIVE), not a false mismatch (docs/validate.md, "Candidate
 * precision"). */
#ifndef PFLREF_CORE_MCA_DECIDE_H
#define PFLREF_CORE_MCA_DECIDE_H

/* 1 when `sum`, computed from terms whose magnitudes add up to `mass`,
 * counts as zero: off (no perturbation active) when sum == 0 exactly;
 * in a perturbed run also when 0 < |sum| ≤ u·mass (u the candidate's
 * unit roundoff, the first-order error of a sum of stored values).
 *
 * u is the candidate's also in a check's probe run (pflref_mca_begin_scaled,
 * S = 4): the probe perturbs the sum at S·u, so it lands on either side of
 * the candidate's window more often, but the window itself is where the
 * candidate's format can make the sum 0.  A window of S·u made every probe
 * take the zero branch wherever |sum| ≤ 4u·mass: in bfloat16 that is nearly
 * every ALA of fedala/worked/official (|Σ(Θ − Θ_i)|/Σ|·| from 0.1 to
 * 0.9 per cent unperturbed, 4u = 1.6 per cent), so no probe followed a
 * candidate that skips one ALA and runs the next (its start phase then
 * moves to that round), and such a correct run was a false mismatch
 * (docs/validate.md, "Leave-one-out in bfloat16"). */
int pflref_mca_is_zero(double sum, double mass);

#endif
