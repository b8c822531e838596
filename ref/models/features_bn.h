/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/features_bn.h: the body features f_θ(x) of a layer list
 * with batch normalisation, in either of torch's modes, and the body's
 * gradient from a signal on them through a training pass
 * (ref/models/features_bn.c).  FedPAC's statistics, centroids and
 * feature-alignment term (ref/algorithms/fedpac.c).  MOON and FedProto take
 * theirs from pflref_model_features_mode and pflref_model_body_grad_train
 * (include/pflref/model.h, ref/models/outputs.c), a second pass of the same
 * arithmetic with another output layout. */
#ifndef PFLREF_MODELS_FEATURES_BN_H
#define PFLREF_MODELS_FEATURES_BN_H

#include <stddef.h>
#include "pflref/model.h"

/* A := Phi := f_θ(x_j) for the batch (nb × h, batch order; h the input of
 * the last, dense, layer), every layer before the head:
 *   train = 0: evaluation mode, each batchnorm layer on its running
 *              statistics, â = (a − r_μ)/√(r_v + ε): f_θ(x_j) a function
 *              of x_j alone (torch's eval());
 *   train = 1: a training pass, each batchnorm layer on the batch's μ_B,
 *              s²_B, which the pass leaves on ws for
 *              pflref_model_bn_update (torch's train()).
 * For a layer list without batch normalisation both are
 * pflref_model_features.  Returns PFLREF_EINVAL where "m" for a model
 * that is not a layer list, has no dense last layer after another, or has
 * a dropout layer; other arguments as pflref_model_features. */
pflref_status pflref_bn_features_mode(const pflref_model *m,
                                      const double *w,
                                      const pflref_data *D,
                                      const size_t *idx, size_t nb,
                                      int train,
                                      pflref_model_workspace *ws,
                                      double *A, double *Phi);

/* g's body entries := (1/nb) Σ_j J_jᵀ dPhi_j through the TRAINING pass of
 * the batch (batch normalisation's Jacobian includes μ_B's and s²_B's
 * dependence on every sample): on the outputs the last
 * pflref_bn_features_mode(train = 1) call left on ws (same batch, same
 * w), else after a training pass of its own.  Head entries untouched.
 * Returns as pflref_bn_features_mode. */
pflref_status pflref_bn_body_grad_features(const pflref_model *m,
                                           const double *w,
                                           const double *dPhi,
                                           const pflref_data *D,
                                           const size_t *idx,
                                           size_t nb,
                                           pflref_model_workspace *ws,
                                           double *g);

#endif
