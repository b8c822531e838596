/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/core/mca.h: Monte Carlo arithmetic hook (private to ref/).  Floor:
 * core.
 *
 * `check --candidate-precision fp32|bf16|tf32` (ref/oracle/precision.c) re-runs
 * the reference with random rounding at its kernel outputs: every value a
 * choke point hands on (a minibatch gradient, a loss, a Hessian-vector
 * product, the parameters after a local step) becomes x (1 + u ξ), ξ
 * uniform on [−1, 1), u the candidate's unit roundoff — the "random
 * rounding" of Monte Carlo arithmetic (Parker 1997; Verificarlo, Denis et
 * al. 2016) applied at the kernels' outputs instead of at every
 * operation.  The spread of those runs is the candidate's legitimate
 * rounding noise (docs/validate.md, "Candidate precision").
 *
 * Off (the normal case) the hook is one test of a thread-local pointer per
 * kernel call: no arithmetic changes, results are bit for bit those of a
 * build without it. */
#ifndef PFLREF_CORE_MCA_H
#define PFLREF_CORE_MCA_H

#include <stddef.h>
#include <stdint.h>

/* Which kernel a value comes from: TF32 rounds matrix products' inputs
 * (u_product) but accumulates and steps in float32 (u). */
typedef enum {
    PFLREF_MCA_PRODUCT = 0,   /* layer outputs, losses, data              */
    PFLREF_MCA_UPDATE = 1,    /* the parameters after a step              */
    /* a gradient or Hessian-vector product: sums over the batch whose
     * terms may cancel, so each entry moves by u times the vector's
     * largest magnitude (normwise), not its own (the error of a sum is
     * ~u Σ|terms|: an entry exactly 0 in exact arithmetic, the gradient
     * of a batchnorm shift, is ~u‖g‖ in float32); u of PRODUCT.  An
     * entry marked exact (pflref_mca_mark_exact: all its terms are 0)
     * moves relative to itself */
    PFLREF_MCA_GRADIENT = 2
} pflref_mca_kind;

typedef struct {
    double u[2];        /* unit roundoff: [0] PRODUCT, GRADIENT; [1] UPDATE */
    double u_inner;     /* the unit roundoff inside one kernel (float32's:
                         * bfloat16 and TF32 kernels accumulate in float32),
                         * for pflref_mca_perturb_terms; S times it in a
                         * probe run                                       */
    double u_exact;     /* the window of an exact test (core/mca_decide.h):
                         * the candidate's u of PRODUCT, also in a probe
                         * run, whose u[] are S times it                  */
    uint64_t state;     /* the generator's state (splitmix64)             */
    uint64_t terms_state; /* pflref_mca_perturb_terms' own stream (from the
                         * seed, pflref_mca_terms_seed): the draws of
                         * `state` stay those a seed gave before           */
    uint64_t draws;     /* numbers perturbed so far                       */
    /* The gradient being built (pflref_mca_grad_open: its first entry and
     * length) and, per entry, 1 where every term of its sum is 0
     * (pflref_mca_mark_exact): a product with an exact 0 is 0 and a sum of
     * zeros is 0 in every format, so a float candidate's entry is the
     * same single value and the GRADIENT perturbation moves it relative
     * to itself, not normwise.  exact grows to exact_cap entries and is
     * freed by pflref_mca_release; where it cannot grow, nothing is
     * marked (every entry normwise, as before the marks). */
    double *grad;
    size_t grad_n;
    unsigned char *exact;
    size_t exact_cap;
} pflref_mca;

/* Thread-local storage; Frama-C's parser (proofs/run.sh reads this header
 * with ref/engine/sgd.c) has no _Thread_local, and no proved function
 * reads the variable, so there it is a plain global. */
#ifdef __FRAMAC__
#define PFLREF_THREAD_LOCAL
#else
#define PFLREF_THREAD_LOCAL _Thread_local
#endif

/* The active perturbation of this thread, or NULL (off). */
extern PFLREF_THREAD_LOCAL pflref_mca *pflref_mca_active;

/* x[i] := x[i] (1 + u ξ_i) for the active perturbation (called by
 * pflref_mca_perturb only when one is active). */
void pflref_mca_apply(pflref_mca *m, pflref_mca_kind kind, double *x,
                      size_t n);

/* The hook: a no-op unless a perturbation is active on this thread. */
static inline void pflref_mca_perturb(pflref_mca_kind kind, double *x,
                                      size_t n)
{
    pflref_mca *m = pflref_mca_active;
    if (m != NULL)
        pflref_mca_apply(m, kind, x, n);
}

/* pflref_mca_grad_open and pflref_mca_mark_exact's work (called only
 * when a perturbation is active). */
void pflref_mca_grad_open_apply(pflref_mca *m, double *g, size_t n);
void pflref_mca_mark_apply(pflref_mca *m, const double *x, size_t n,
                           size_t stride);
/* Frees m's marks (the struct itself is the caller's). */
void pflref_mca_release(pflref_mca *m);

/* Opens the marks of a gradient g of n entries, all unmarked: the next
 * pflref_mca_perturb(PFLREF_MCA_GRADIENT, g, n) reads them and closes
 * them.  A no-op unless a perturbation is active. */
static inline void pflref_mca_grad_open(double *g, size_t n)
{
    pflref_mca *m = pflref_mca_active;
    if (m != NULL)
        pflref_mca_grad_open_apply(m, g, n);
}

/* Marks x[k·stride], k < n, as entries of the open gradient whose every
 * term is an exact 0 (a weight whose input is 0 on every row of the
 * batch); entries outside the open gradient (a workspace, or none open)
 * are not marked.  A no-op unless a perturbation is active. */
static inline void pflref_mca_mark_exact(const double *x, size_t n,
                                         size_t stride)
{
    pflref_mca *m = pflref_mca_active;
    if (m != NULL)
        pflref_mca_mark_apply(m, x, n, stride);
}

/* The start of pflref_mca.terms_state for a run of seed `seed`. */
uint64_t pflref_mca_terms_seed(uint64_t seed);
/* x := x + u_inner ξ s (called by pflref_mca_perturb_terms). */
void pflref_mca_apply_terms(pflref_mca *m, double *x, double s);
/* The hook for a value that a kernel computes as a sum whose terms cancel,
 * of magnitude s ≥ |x| (the sum of their absolute values): its rounding
 * in float arithmetic is ~u s, which no perturbation relative to x (nor
 * to the kernel's inputs, when the cancellation is structural: batch
 * normalisation's backward pass on a batch of two is (γ/s)(1 − x̂²)(G₁ −
 * G₂)/2 for any G) reproduces.  A no-op unless a perturbation is active. */
static inline void pflref_mca_perturb_terms(double *x, double s)
{
    pflref_mca *m = pflref_mca_active;
    if (m != NULL)
        pflref_mca_apply_terms(m, x, s);
}
#endif
