/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/dense.c: GSL BLAS on flat row-major arrays, and the dense
 * layer Z = X Wᵀ + 1 bᵀ on a batch with its gradient, which softmax's
 * logits and both layers of the mlp are made of.
 *
 * Symbols (for a batch of nb samples):
 *   X   nb × in    the layer's input rows (X_b, or the hidden φ)
 *   W   out × in   the weights (W, W1, W2, or a direction V)
 *   b   out        the bias (b, b1, b2, or a direction v_b); may be absent
 *   Z   nb × out   the layer's output rows
 *   E   nb × out   a per-sample signal ∂ℓ/∂Z (or its R{·})
 *
 * The products go through GSL BLAS (OpenBLAS underneath) with GSL views on
 * the arrays; the bias column sums are explicit, in batch order.
 */
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>
#include "core/mca.h"
#include "models/models.h"

void pflref_gemm(CBLAS_TRANSPOSE_t tA, CBLAS_TRANSPOSE_t tB, double alpha,
                 const double *A, size_t ar, size_t ac, const double *B,
                 size_t br, size_t bc, double beta, double *C, size_t cr,
                 size_t cc)
{
    gsl_matrix_const_view Av = gsl_matrix_const_view_array(A, ar, ac);
    gsl_matrix_const_view Bv = gsl_matrix_const_view_array(B, br, bc);
    gsl_matrix_view Cv = gsl_matrix_view_array(C, cr, cc);
    gsl_blas_dgemm(tA, tB, alpha, &Av.matrix, &Bv.matrix, beta, &Cv.matrix);
}

void pflref_gemv(CBLAS_TRANSPOSE_t tA, double alpha, const double *A,
                 size_t ar, size_t ac, const double *x, double beta,
                 double *y)
{
    gsl_matrix_const_view Av = gsl_matrix_const_view_array(A, ar, ac);
    gsl_vector_const_view xv =
        gsl_vector_const_view_array(x, tA == CblasNoTrans ? ac : ar);
    gsl_vector_view yv =
        gsl_vector_view_array(y, tA == CblasNoTrans ? ar : ac);
    gsl_blas_dgemv(tA, alpha, &Av.matrix, &xv.vector, beta, &yv.vector);
}

void pflref_colsum(const double *M, size_t nb, size_t c, double alpha,
                   double *out)
{
    for (size_t q = 0; q < c; q++) {
        double s = 0.0;
        for (size_t j = 0; j < nb; j++)
            s += M[j * c + q];
        out[q] = alpha * s;
    }
}

/* Every row of M (nb × c) := b, or 0 when b is NULL. */
static void fill_rows(double *M, size_t nb, size_t c, const double *b)
{
    for (size_t j = 0; j < nb; j++)
        for (size_t q = 0; q < c; q++)
            M[j * c + q] = b != NULL ? b[q] : 0.0;
}

void pflref_dense_forward(const double *X, size_t nb, size_t in,
                          const double *W, const double *b, size_t out,
                          double *Z)
{
    fill_rows(Z, nb, out, b);           /* Z := 1 bᵀ  (or 0) */
    /* Z := X Wᵀ + Z */
    pflref_gemm(CblasNoTrans, CblasTrans, 1.0, X, nb, in, W, out, in, 1.0, Z,
                nb, out);
}

void pflref_dense_backward(const double *E, size_t nb, size_t out,
                           const double *X, size_t in, double alpha,
                           double *gW, double *gb)
{
    /* g_W := alpha Eᵀ X   (out × in) */
    pflref_gemm(CblasTrans, CblasNoTrans, alpha, E, nb, out, X, nb, in, 0.0,
                gW, out, in);
    if (gb != NULL)                     /* g_b := alpha Σ_j E_j */
        pflref_colsum(E, nb, out, alpha, gb);
    /* Monte Carlo arithmetic (ref/core/mca.h): an input that is 0 on every
     * row makes column i of g_W a sum of exact zeros, 0 in any format */
    for (size_t i = 0; pflref_mca_active != NULL && i < in; i++) {
        size_t j = 0;
        while (j < nb && X[j * in + i] == 0.0)
            j++;
        if (j == nb)
            pflref_mca_mark_exact(gW + i, out, in);
    }
}
