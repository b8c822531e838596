/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/core/mca.c: the Monte Carlo arithmetic perturbation (ref/core/mca.h).
 * Floor: core. */
#include <math.h>
#include "core/mca.h"
#include "core/mca_decide.h"

PFLREF_THREAD_LOCAL pflref_mca *pflref_mca_active = NULL;

/* splitmix64 (Steele, Lea, Flood 2014): one 64-bit draw. */
static uint64_t next64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void pflref_mca_apply(pflref_mca *m, pflref_mca_kind kind, double *x,
                      size_t n)
{
    const double u = m->u[kind == PFLREF_MCA_UPDATE];
    double norm = 0.0;   /* GRADIENT: the largest magnitude */
    for (size_t i = 0; kind == PFLREF_MCA_GRADIENT && i < n; i++)
        norm = fabs(x[i]) > norm ? fabs(x[i]) : norm;
    for (size_t i = 0; i < n; i++) {
        /* ξ uniform on [−1, 1): the top 53 bits, scaled */
        const double xi =
            (double)(next64(&m->state) >> 11) * 0x1.0p-52 - 1.0;
        if (kind == PFLREF_MCA_GRADIENT)
            x[i] += u * xi * norm;
        else
            x[i] *= 1.0 + u * xi;
    }
    m->draws += n;
}

uint64_t pflref_mca_terms_seed(uint64_t seed)
{
    uint64_t s = seed ^ 0x5851F42D4C957F2DULL;   /* a stream apart */
    return next64(&s);
}

void pflref_mca_apply_terms(pflref_mca *m, double *x, double s)
{
    const double xi =
        (double)(next64(&m->terms_state) >> 11) * 0x1.0p-52 - 1.0;
    *x += m->u_inner * xi * s;
    m->draws++;
}

int pflref_mca_is_zero(double sum, double mass)
{
    const pflref_mca *m = pflref_mca_active;
    if (sum == 0.0)
        return 1;
    return m != NULL && fabs(sum) <= m->u_exact * mass;
}
