/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/core/mca.c: the Monte Carlo arithmetic perturbation (ref/core/mca.h).
 * Floor: core. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
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
    /* the marks of the gradient x, when they are x's (and close them) */
    const unsigned char *exact = NULL;
    if (kind == PFLREF_MCA_GRADIENT && m->grad != NULL) {
        if (m->grad == x && m->grad_n == n)
            exact = m->exact;
        m->grad = NULL;
    }
    for (size_t i = 0; i < n; i++) {
        /* ξ uniform on [−1, 1): the top 53 bits, scaled */
        const double xi =
            (double)(next64(&m->state) >> 11) * 0x1.0p-52 - 1.0;
        if (kind == PFLREF_MCA_GRADIENT && !(exact != NULL && exact[i]))
            x[i] += u * xi * norm;
        else
            x[i] *= 1.0 + u * xi;
    }
    m->draws += n;
}

void pflref_mca_grad_open_apply(pflref_mca *m, double *g, size_t n)
{
    m->grad = NULL;
    if (n > m->exact_cap) {
        unsigned char *e = realloc(m->exact, n);
        if (e == NULL)
            return;        /* no marks: every entry normwise */
        m->exact = e;
        m->exact_cap = n;
    }
    if (n > 0)
        memset(m->exact, 0, n);
    m->grad = g;
    m->grad_n = n;
}

void pflref_mca_mark_apply(pflref_mca *m, const double *x, size_t n,
                           size_t stride)
{
    /* addresses as integers: x may point into another array (a
     * workspace), which C's pointer comparison does not order */
    const uintptr_t lo = (uintptr_t)m->grad, at_x = (uintptr_t)x;
    if (m->grad == NULL || n == 0 || at_x < lo ||
        (at_x - lo) % sizeof *x != 0 ||
        (at_x - lo) / sizeof *x >= m->grad_n)
        return;
    const size_t at = (at_x - lo) / sizeof *x;
    if ((n - 1) * stride >= m->grad_n - at)
        return;            /* runs past the gradient: not its entries */
    for (size_t k = 0; k < n; k++)
        m->exact[at + k * stride] = 1;
}

void pflref_mca_release(pflref_mca *m)
{
    free(m->exact);
    m->exact = NULL;
    m->exact_cap = 0;
    m->grad = NULL;
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
