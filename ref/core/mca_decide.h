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
 * unit roundoff, the first-order error of a sum of stored values). */
int pflref_mca_is_zero(double sum, double mass);

#endif
