/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedpac_qp.h: FedPAC's quadratic programme of Alg. 1
 * l. 13 (Xu, Tong, Huang, ICLR 2023), solved exactly by its KKT points
 * (ref/algorithms/fedpac_qp.c; the method is argued in the header of
 * ref/algorithms/fedpac.c and in docs/algorithms/fedpac.md).
 */
#ifndef PFLREF_FEDPAC_QP_H
#define PFLREF_FEDPAC_QP_H

#include <stddef.h>

/* The most participants of a round: the QP enumerates 2^m supports. */
#define FEDPAC_QP_MAX 16
/* A pivot counts as 0 when |pivot| ≤ this times the system's largest
 * entry: 2⁻⁴⁰ ≈ 9e-13, ~1e3 unit roundoffs for at most 17 rows. */
#define FEDPAC_PIVOT_RTOL 0x1p-40
/* The KKT sign tests: α_j ≥ −τ and (Qα)_j + μ ≥ −τ max|Q| (τ = 2⁻⁴⁰, the
 * rounding of the solve, as above). */
#define FEDPAC_KKT_RTOL 0x1p-40

/* l. 13: α_i = argmin αᵀ Q_i α over α ≥ 0, Σα = 1, for the m ≤
 * FEDPAC_QP_MAX participants: the first KKT point by support size, then
 * by the support's bit value Σ_{j∈S} 2^j.  Q [in] m × m row-major;
 * alpha [out] m; B, z [work] (m + 1)², m + 1.  Returns 1, or 0 when no
 * support gave one (only by rounding). */
int pflref_fedpac_qp(const double *Q, size_t m, double *alpha, double *B,
                     double *z);

#endif
