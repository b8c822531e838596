/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedpac_qp.c: FedPAC's quadratic programme (Alg. 1 l. 13)
 * by its KKT points: the supports by size, the bordered system of each
 * solved by Gaussian elimination (ref/algorithms/fedpac_qp.h).
 */
#include <math.h>
#include "algorithms/fedpac_qp.h"

/* Solve the n × n system B z = z (B row-major, overwritten) by Gaussian
 * elimination with partial pivoting (the lowest row on a tie); z holds
 * the right-hand side on entry.  Returns 0 when a pivot is at most
 * FEDPAC_PIVOT_RTOL times B's largest entry (singular), else 1. */
static int solve(double *B, double *z, size_t n)
{
    double big = 0.0;
    for (size_t p = 0; p < n * n; p++)
        big = fmax(big, fabs(B[p]));
    for (size_t c = 0; c < n; c++) {
        size_t piv = c;
        for (size_t r = c + 1; r < n; r++)
            if (fabs(B[r * n + c]) > fabs(B[piv * n + c]))
                piv = r;
        if (!(fabs(B[piv * n + c]) > FEDPAC_PIVOT_RTOL * big))
            return 0;
        for (size_t u = 0; piv != c && u < n; u++) {
            const double tmp = B[c * n + u];
            B[c * n + u] = B[piv * n + u];
            B[piv * n + u] = tmp;
        }
        const double tz = z[c];
        z[c] = z[piv];
        z[piv] = tz;
        for (size_t r = c + 1; r < n; r++) {
            const double f = B[r * n + c] / B[c * n + c];
            for (size_t u = c; u < n; u++)
                B[r * n + u] -= f * B[c * n + u];
            z[r] -= f * z[c];
        }
    }
    for (size_t c = n; c-- > 0;) {
        for (size_t u = c + 1; u < n; u++)
            z[c] -= B[c * n + u] * z[u];
        z[c] /= B[c * n + c];
    }
    return 1;
}

/* The KKT point of support S (a bit set over the m participants) of
 * min αᵀQα, α ≥ 0, Σα = 1, into alpha: 1 when the bordered system is
 * regular and the point satisfies the KKT conditions, else 0. */
static int kkt_point(const double *Q, size_t m, unsigned long S,
                     double *alpha, double *B, double *z)
{
    size_t idx[FEDPAC_QP_MAX], s = 0;
    double qmax = 0.0;
    for (size_t j = 0; j < m; j++)
        if (S >> j & 1UL)
            idx[s++] = j;
    for (size_t p = 0; p < m * m; p++)
        qmax = fmax(qmax, fabs(Q[p]));
    /* [Q_SS 1; 1ᵀ 0] [α_S; μ] = [0; 1] */
    for (size_t a = 0; a < s; a++) {
        for (size_t c = 0; c < s; c++)
            B[a * (s + 1) + c] = Q[idx[a] * m + idx[c]];
        B[a * (s + 1) + s] = 1.0;   /* the column of 1 */
        B[s * (s + 1) + a] = 1.0;   /* the row 1ᵀ */
        z[a] = 0.0;
    }
    B[s * (s + 1) + s] = 0.0;
    z[s] = 1.0;
    if (!solve(B, z, s + 1))
        return 0;
    const double mu = z[s];
    for (size_t j = 0; j < m; j++)
        alpha[j] = 0.0;
    for (size_t a = 0; a < s; a++) {
        if (z[a] < -FEDPAC_KKT_RTOL)
            return 0;
        alpha[idx[a]] = z[a] > FEDPAC_KKT_RTOL ? z[a] : 0.0;
    }
    for (size_t j = 0; j < m; j++) {
        if (S >> j & 1UL)
            continue;
        double qa = 0.0;
        for (size_t c = 0; c < m; c++)
            qa += Q[j * m + c] * alpha[c];
        if (qa + mu < -FEDPAC_KKT_RTOL * qmax)
            return 0;
    }
    return 1;
}

static int popcount(unsigned long x)
{
    return x == 0 ? 0 : 1 + popcount(x & (x - 1));
}

/* l. 13 (ref/algorithms/fedpac_qp.h). */
int pflref_fedpac_qp(const double *Q, size_t m, double *alpha, double *B,
                     double *z)
{
    /* req: fedpac.qp.exact */
    const unsigned long all = (1UL << m) - 1UL;
    for (int size = 1; size <= (int)m; size++)
        for (unsigned long S = 1; S <= all; S++)
            if (popcount(S) == size && kkt_point(Q, m, S, alpha, B, z))
                return 1;
    return 0;
}

