/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/trace_cluster.c: Algorithm 1's intermediates for --trace
 * (trace_cluster.h), from
 *   F. Sattler, K.-R. Müller, W. Samek, "Clustered Federated Learning:
 *   Model-Agnostic Distributed Multitask Optimization Under Privacy
 *   Constraints", IEEE TNNLS 32(8):3710–3722, 2021, Algorithm 1.
 * Trace-only: nothing here feeds a result (ref/engine/cluster.c computes
 * the bipartition itself).
 * Cost: O(m² log m) for the sort, O(m²) for the merges; m² + 3m words.
 */
#include <stdlib.h>
#include "engine/trace_cluster.h"

static const char *const STEP_LINE[] = {
    "Alg. 1 l. 2: s ← argsort(−α[:]) (row-major positions from 0; ties: "
    "the smaller position first)",
    "Alg. 1 l. 3: C ← {{1}, …, {m}} (each member's cluster, named by its "
    "smallest client)",
    "Alg. 1 l. 5: i₁ ← s_t div m; i₂ ← s_t mod m ([t, client of i₁, "
    "client of i₂], the t that join two clusters)",
    "Alg. 1 l. 6: C ← (C \\ those) ∪ {c_tmp} (each member's cluster, named "
    "by its smallest client)"};

typedef struct {
    double a;      /* α at the position */
    size_t k;      /* the row-major position */
} entry;

/* Decreasing α, then the smaller position. */
static int before(const void *x, const void *y)
{
    const entry *e = x, *f = y;
    if (e->a != f->a)
        return e->a > f->a ? -1 : 1;
    return e->k < f->k ? -1 : e->k > f->k;
}

void pflref_trace_bipartition_steps(const pflref_trace *tr, long t, long rep,
                                    const size_t *members, size_t m,
                                    const double *alpha)
{
    if (tr == NULL || tr->emit == NULL || m < 2 || m > ((size_t)-1) / m)
        return;
    const size_t mm = m * m;
    entry *s = malloc(mm * sizeof *s);
    double *out = malloc((mm > 3 ? mm : 3) * sizeof *out);
    size_t *label = malloc(m * sizeof *label);
    if (s == NULL || out == NULL || label == NULL)
        goto done;
    /* l. 2 */
    for (size_t k = 0; k < mm; k++) {
        s[k].a = alpha[k];
        s[k].k = k;
    }
    qsort(s, mm, sizeof *s, before);
    for (size_t k = 0; k < mm; k++)
        out[k] = (double)s[k].k;
    pflref_trace_emit(tr, PFLREF_EV_INTERMEDIATE, "train", t, rep, -1, "s",
                      out, mm, STEP_LINE[0]);
    /* l. 3: label[a] is the position of the smallest member of a's
     * cluster (members ascend, so its smallest client) */
    for (size_t a = 0; a < m; a++) {
        label[a] = a;
        out[a] = (double)members[a];
    }
    pflref_trace_emit(tr, PFLREF_EV_INTERMEDIATE, "train", t, rep, -1, "C",
                      out, m, STEP_LINE[1]);
    /* l. 4–7 */
    size_t clusters = m;
    for (size_t k = 0; k < mm && clusters > 2; k++) {
        const size_t i1 = s[k].k / m, i2 = s[k].k % m;
        const size_t A = label[i1], B = label[i2];
        if (A == B)
            continue;
        const size_t keep = A < B ? A : B, gone = A < B ? B : A;
        for (size_t a = 0; a < m; a++)
            if (label[a] == gone)
                label[a] = keep;
        clusters--;
        const double pair[3] = {(double)(k + 1), (double)members[i1],
                                (double)members[i2]};
        pflref_trace_emit(tr, PFLREF_EV_INTERMEDIATE, "train", t, rep, -1,
                          "pair", pair, 3, STEP_LINE[2]);
        for (size_t a = 0; a < m; a++)
            out[a] = (double)members[label[a]];
        pflref_trace_emit(tr, PFLREF_EV_INTERMEDIATE, "train", t, rep, -1,
                          "C", out, m, STEP_LINE[3]);
    }
done:
    free(s);
    free(out);
    free(label);
}
