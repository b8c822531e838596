/* ref/sampling/kernels.h: the proved index kernels of the sampling floor
 * (private).  Each is plain C (no library call, no floating point) and
 * carries an ACSL contract beside its definition, proved with Frama-C's WP
 * plugin with runtime-error guards (`make proofs`, proofs/README.md):
 *
 *   ids.c      the schedule's scans (the two public ones are declared in
 *              pflref/schedule.h), the step-offset scan and the position
 *              search, the participant / selected / drawn bitmap, the
 *              saturating size arithmetic, the copy of one minibatch;
 *   shuffle.c  numpy's interval draw and its mask, the Fisher–Yates
 *              permutation of numpy's legacy choice.
 *
 * The generator those kernels draw from is opaque to them: they reach it
 * through pflref_rng_raw32 (defined in sampler.c on gsl_rng_get), whose
 * contract below says it changes the generator's state and nothing the
 * kernels read or write.  That contract is the one assumption of the proofs
 * of shuffle.c (the generator is a GSL object, separate from every index
 * array).
 */
#ifndef PFLREF_SAMPLING_KERNELS_H
#define PFLREF_SAMPLING_KERNELS_H

#include <stddef.h>

/*@ ghost int pflref_rng_state; */

/*@ inductive all_ones(integer m) {
      case zero: all_ones(0);
      case twice_plus_one:
        \forall integer k; all_ones(k) ==> all_ones(2 * k + 1);
    }
    predicate is_permutation{L}(size_t *p, integer n) =
      (\forall integer k; 0 <= k < n ==> p[k] < n) &&
      (\forall integer k, l; 0 <= k < l < n ==> p[k] != p[l]);
 */

/* The generator's next raw 32-bit output (gsl_rng_get on mt19937). */
/*@ assigns pflref_rng_state; */
unsigned long pflref_rng_raw32(void *rng);

/* shuffle.c */
unsigned long pflref_interval_mask(unsigned long max);
unsigned long pflref_interval_draw(void *rng, unsigned long max);
void pflref_numpy_permutation(void *rng, size_t *perm, size_t N);

/* ids.c */
size_t pflref_size_mul_sat(size_t a, size_t b);
size_t pflref_size_add_sat(size_t a, size_t b);
size_t pflref_steps_first_bad(const size_t *step_off, size_t nsteps);
size_t pflref_step_of(const size_t *step_off, size_t nsteps, size_t pos);
void pflref_marks_set(unsigned char *mark, size_t N, const size_t *ids,
                      size_t len, unsigned char value);
size_t pflref_selected_first_bad(const size_t *selected, size_t len,
                                 size_t N, unsigned char *mark);
size_t pflref_drawn_first_bad(const size_t *drawn, size_t len, size_t N,
                              unsigned char *mark);
void pflref_ids_iota(size_t *ids, size_t *drawn, size_t N);
size_t pflref_batch_copy(const size_t *perm, size_t n, size_t lo, size_t hi,
                         size_t *idx, size_t off, size_t cap);

#endif
