/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/quadratic.c: the data-free quadratic model
 *
 *   f(w) = ½ Σ_j a_j (w_j − c_j)²,   ∇f(w)_j = a_j (w_j − c_j),
 *   ∇²f = diag(a),                   (∇²f v)_j = a_j v_j,
 *
 * with a_j > 0 and c_j a client's curvatures and centre (pflref_data's a
 * and c, d entries each; docs/models.md).  It has no batch, no outputs and
 * no workspace buffers: the public entry points in model.c call it after
 * their argument checks, whatever idx and nb are.
 *
 * Symbols:  w ↔ w (d)   a_j ↔ D->a[j]   c_j ↔ D->c[j]   v ↔ v (d)
 * Determinism: the sum runs over j = 0..d−1 in order.  Cost: O(d).
 */
#include "models/models.h"

double pflref_quadratic_f(const pflref_model *m, const double *w,
                          const pflref_data *D)
{
    double s = 0.0;
    for (size_t j = 0; j < m->d; j++) {
        const double e = w[j] - D->c[j];
        s += D->a[j] * (e * e);
    }
    return 0.5 * s;
}

void pflref_quadratic_grad(const pflref_model *m, const double *w,
                           const pflref_data *D, double *g)
{
    for (size_t j = 0; j < m->d; j++) /* g_j := a_j (w_j − c_j) */
        g[j] = D->a[j] * (w[j] - D->c[j]);
}

void pflref_quadratic_hvp(const pflref_model *m, const pflref_data *D,
                          const double *v, double *Hv)
{
    for (size_t j = 0; j < m->d; j++) /* (H v)_j := a_j v_j */
        Hv[j] = D->a[j] * v[j];
}
