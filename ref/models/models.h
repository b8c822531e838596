/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/models.h: what the files of ref/models/ share (private to
 * ref/).  Floor: models.
 *
 *   model.c      describe a model; the split into blocks
 *   objective.c  the public loss, grad and hvp, which dispatch on the
 *                kind (pflref_model_ops_of)
 *   batch.c      the workspace, the argument and batch checks, the gather
 *   dense.c      GSL BLAS on flat row-major arrays; the dense layer
 *                Z = X Wᵀ + 1 bᵀ and its gradient
 *   losses.c     the per-sample losses on the outputs z (squared,
 *                cross-entropy), their output signals E = ∂ℓ/∂z and R{E}
 *   outputs.c    evaluation (pflref_model_evaluate, _evaluate_mix) and
 *                the outputs API of pflref/model.h
 *   quadratic.c, linear.c, softmax.c, mlp.c   one model each
 *   layers.c     the layer list: shapes, blocks, presets;
 *   layers_ops.c its forward, backward, R-operator and workspace;
 *   layers_conv.c  convolution, pooling, batch normalisation
 *   layers_dropout.c  the dropout layers' masks (their source, a pass's)
 *   problem.c    problems and their data sets (pflref_data_validate)
 *
 * Symbols and shapes are those of the table in model.c.  Every function
 * below trusts its caller: the public entry points test the arguments
 * (pflref_batch_check) before they call one.
 */
#ifndef PFLREF_MODELS_MODELS_H
#define PFLREF_MODELS_MODELS_H

#include <stddef.h>
#include <gsl/gsl_blas.h>
#include "pflref/model.h"

struct pflref_model_workspace {
    pflref_model_kind kind;   /* the model the workspace was sized for      */
    size_t d, k, h;
    size_t max_batch;         /* largest batch the buffers hold             */
    double *Xb;               /* max_batch × d   gathered rows X_b          */
    double *yb;               /* max_batch       targets or labels y_b      */
    double *Z;                /* max_batch × k   ŷ / r, z / p / G           */
    double *RZ;               /* max_batch × k   R{ŷ}, R{z} / R{p}          */
    double *A;                /* max_batch × h   a = W1 x + b1              */
    double *H;                /* max_batch × h   φ = σ(a)                   */
    double *RH;               /* max_batch × h   R{a}, then R{φ}            */
    double *T;                /* max_batch × h   δ, then R{δ}               */
    double *bn;               /* 4h: μ_B, s²_B, s = √(s² + ε) of the last
                                 BN pass (mlp with bn; x̂ lives in RH), then
                                 R{s} of the HVP                           */
    size_t bn_nb;             /* its batch size; 0 before a training pass   */
    int bn_train;             /* 1: BN in training mode (batch statistics);
                                 0: evaluation mode (running statistics)    */
    int grad_eval;            /* 1: pflref_model_grad_eval's pass: BN on the
                                 running statistics and its backward with
                                 them fixed, dropout the identity           */
    double *mem;              /* the one allocation behind the buffers      */
    size_t body_forward;      /* mlp: passes of a batch through the body    */
    size_t body_backward;     /* mlp: backward passes through the body      */
    /* layer lists (layers_ops.c; NULL / 0 for the other kinds) */
    size_t P;                 /* the model's P (a layer list is told apart
                                 from another of the same d, k by it too)  */
    double *act[PFLREF_MAX_LAYERS];  /* layer i's output Y_i, max_batch ×
                                 out_size: its own buffer, or its input's
                                 (flatten; relu, tanh, sigmoid in place);
                                 the last layer's is Z                      */
    double *Ract[PFLREF_MAX_LAYERS]; /* R{Y_i} alike (the last: RZ); NULL
                                 where R{Y_i} = 0 (a flatten of the data)  */
    double *xhat[PFLREF_MAX_LAYERS]; /* batchnorm: x̂, max_batch × size   */
    double *Rxhat[PFLREF_MAX_LAYERS]; /* batchnorm: R{x̂}                   */
    double *stats[PFLREF_MAX_LAYERS]; /* batchnorm: μ_B, s²_B, s, R{s} (C
                                 each) of the last training pass            */
    size_t *arg[PFLREF_MAX_LAYERS];  /* maxpool2d: the argmax of each output
                                 entry (an index into the input sample)    */
    double *sig[2], *Rsig[2]; /* signals ∂ℓ/∂Y and R{∂ℓ/∂Y}, max_batch ×
                                 the largest layer size (ping-pong)         */
    double *col, *dcol;       /* ONE sample's im2col: C·κ² × H'·W'        */
    size_t *imem;             /* the allocation behind arg                  */
    const double *w_fwd;      /* the parameters of the last forward pass
                                 (the head's gradient reads them)          */
    int body_cached;          /* 1: act[] holds the body outputs of the last
                                 pflref_layers_features call (no pass through
                                 the workspace since), for w_fwd and
                                 body_cached_nb samples                     */
    size_t body_cached_nb;
#ifndef __FRAMAC__   /* hidden from Frama-C as the dropout layer (model.h) */
    /* dropout (layers_ops.c): the source of the training passes' masks
       (pflref_model_workspace_dropout) and, per dropout layer, the mask
       of the last training pass (nb × in_size; NULL before one)         */
    pflref_dropout_source drop_src;
    void *drop_ctx;
    int drop_kind;            /* PFLREF_DROPOUT_PASS_*: the passes' kind   */
    const unsigned char *drop[PFLREF_MAX_LAYERS];
#endif
};

/* ---- batch.c ------------------------------------------------------- */

/* *out := a·b; 0 when the product overflows size_t. */
int pflref_size_mul(size_t a, size_t b, size_t *out);

/* *acc := *acc + a; 0 when the sum overflows size_t. */
int pflref_size_add(size_t *acc, size_t a);

/* 1 when y is a class of m: integral and in [0, k). */
int pflref_label_is_class(const pflref_model *m, double y);

/* m, w, D and ws non-NULL, ws sized for m, D holding the arrays m reads.
 * Errors carry where "m", "w", "D" or "ws" and no pflref_error. */
pflref_status pflref_batch_check_args(const pflref_model *m, const double *w,
                                      const pflref_data *D,
                                      const pflref_model_workspace *ws);

/* pflref_batch_check_args, then the batch: *nb_out := nb (idx given) or
 * D->n (idx NULL; nb must then be 0 or D->n), 1 ≤ *nb_out ≤ max_batch,
 * every idx[j] < D->n.  The quadratic model has no batch: *nb_out := 0. */
pflref_status pflref_batch_check(const pflref_model *m, const double *w,
                                 const pflref_data *D, const size_t *idx,
                                 size_t nb, const pflref_model_workspace *ws,
                                 size_t *nb_out);

/* Row j of X_b := x_i with i = idx[j], or i = first + j when idx is NULL. */
void pflref_batch_gather_rows(const pflref_model *m, const pflref_data *D,
                              const size_t *idx, size_t first, size_t nb,
                              pflref_model_workspace *ws);

/* y_b[j] := y_i with i as above; a classifier's labels must be classes. */
pflref_status pflref_batch_gather_labels(const pflref_model *m,
                                         const pflref_data *D,
                                         const size_t *idx, size_t first,
                                         size_t nb,
                                         pflref_model_workspace *ws);

/* Both: the rows X_b, then the targets y_b. */
pflref_status pflref_batch_gather(const pflref_model *m, const pflref_data *D,
                                  const size_t *idx, size_t first, size_t nb,
                                  pflref_model_workspace *ws);

/* ---- dense.c ------------------------------------------------------- */

/* C := alpha op(A) op(B) + beta C, with A ar × ac, B br × bc, C cr × cc
 * (the shapes of the stored arrays, before op). */
void pflref_gemm(CBLAS_TRANSPOSE_t tA, CBLAS_TRANSPOSE_t tB, double alpha,
                 const double *A, size_t ar, size_t ac, const double *B,
                 size_t br, size_t bc, double beta, double *C, size_t cr,
                 size_t cc);

/* y := alpha op(A) x + beta y, with A ar × ac. */
void pflref_gemv(CBLAS_TRANSPOSE_t tA, double alpha, const double *A,
                 size_t ar, size_t ac, const double *x, double beta,
                 double *y);

/* out[q] := alpha Σ_{j=0}^{nb−1} M[j][q]  (M nb × c), summed in batch
 * order. */
void pflref_colsum(const double *M, size_t nb, size_t c, double alpha,
                   double *out);

/* The dense layer on a batch: Z := 1 bᵀ (or 0 when b is NULL), then
 * Z := X Wᵀ + Z, with X nb × in, W out × in, b out, Z nb × out. */
void pflref_dense_forward(const double *X, size_t nb, size_t in,
                          const double *W, const double *b, size_t out,
                          double *Z);

/* Its gradient on the signal E (nb × out): gW := alpha Eᵀ X (out × in),
 * then gb := alpha Σ_j E_j (out) when gb is non-NULL. */
void pflref_dense_backward(const double *E, size_t nb, size_t out,
                           const double *X, size_t in, double alpha,
                           double *gW, double *gb);

/* ---- losses.c ------------------------------------------------------ */

/* ∂ℓ/∂ŷ = s r of the squared losses: s = 2 (squared) or 1 (half_squared). */
double pflref_squared_scale(const pflref_model *m);

/* Regression: Z := r = ŷ − y_b; *sum += Σ_j ℓ_j; *sq += Σ_j r_j² (sq may
 * be NULL). */
void pflref_residual_terms(const pflref_model *m, size_t nb,
                           pflref_model_workspace *ws, double *sum,
                           double *sq);

/* Classifiers: each row of Z := softmax(z) = p; *sum += Σ_j ℓ_j. */
void pflref_softmax_terms(size_t nb, size_t k, pflref_model_workspace *ws,
                          double *sum);

/* The per-sample losses of the outputs in Z: *sum += Σ_j ℓ_j (batch
 * order); leaves r (regression) or P (classifiers) in Z. */
void pflref_loss_terms(const pflref_model *m, size_t nb,
                       pflref_model_workspace *ws, double *sum);

/* Z := E = ∂ℓ/∂z per sample from what pflref_loss_terms left in Z:
 * P − Y (classifiers) or s r (regression). */
void pflref_output_signal(const pflref_model *m, size_t nb,
                          pflref_model_workspace *ws);

/* RZ := R{E}, the signal's directional derivative from R{z} in RZ and what
 * pflref_loss_terms left in Z: R{p} = p ⊙ (R{z} − (pᵀ R{z}) 1)
 * (classifiers) or s R{ŷ} (regression).  Call it before
 * pflref_output_signal, which overwrites p. */
void pflref_output_signal_r(const pflref_model *m, size_t nb,
                            pflref_model_workspace *ws);

/* ---- quadratic.c --------------------------------------------------- */

/* f(w) = ½ Σ_j a_j (w_j − c_j)². */
double pflref_quadratic_f(const pflref_model *m, const double *w,
                          const pflref_data *D);

/* g_j := a_j (w_j − c_j). */
void pflref_quadratic_grad(const pflref_model *m, const double *w,
                           const pflref_data *D, double *g);

/* (H v)_j := a_j v_j. */
void pflref_quadratic_hvp(const pflref_model *m, const pflref_data *D,
                          const double *v, double *Hv);

/* ---- linear.c, softmax.c, mlp.c ------------------------------------ */

/* A data model's kernels, each on the batch gathered into ws (nb samples:
 * X_b, y_b).  model.c and outputs.c pick the table by the model's kind
 * (pflref_model_ops_of) after the public entry point tested its
 * arguments. */
typedef struct {
    /* Z := z(w; X_b), nb × k: ŷ (linear, regression mlp) or the logits. */
    void (*forward)(const pflref_model *m, const double *w, size_t nb,
                    pflref_model_workspace *ws);
    /* g := ∇F(w; B), after forward and pflref_loss_terms (r or P in Z);
     * Z is overwritten. */
    void (*grad)(const pflref_model *m, const double *w, size_t nb,
                 pflref_model_workspace *ws, double *g);
    /* g := (1/nb) Σ_j J_j(w)ᵀ E_j for a signal E (nb × k; for the mlp
     * not one of the workspace's buffers, which it overwrites). */
    void (*backward)(const pflref_model *m, const double *w, size_t nb,
                     const double *E, pflref_model_workspace *ws, double *g);
    /* Hv := ∇²F(w; B) v, after forward and pflref_loss_terms when
     * hvp_at_w is 1, on the gathered batch alone when it is 0. */
    void (*hvp)(const pflref_model *m, const double *w, size_t nb,
                const double *v, pflref_model_workspace *ws, double *Hv);
    /* The head entries of g alone, after forward and pflref_loss_terms
     * (mlp: W2, b2, with no pass back through the body; NULL for the
     * models whose every block is a head block).  Bit for bit grad's. */
    void (*head_grad)(const pflref_model *m, size_t nb,
                      pflref_model_workspace *ws, double *g);
    int hvp_at_w;   /* 0: the Hessian does not depend on w (linear)    */
} pflref_model_ops;

extern const pflref_model_ops pflref_linear_ops;
extern const pflref_model_ops pflref_softmax_ops;
extern const pflref_model_ops pflref_mlp_ops;

extern const pflref_model_ops pflref_layers_ops;

/* ---- layers.c, layers_ops.c, layers_conv.c ---------------------------- */

/* 1 for relu, tanh, sigmoid; 1 for batchnorm1d, batchnorm2d. */
int pflref_layer_is_activation(pflref_layer_kind kind);
int pflref_layer_is_bn(pflref_layer_kind kind);

/* The layer buffers of a workspace of a layer list for batches of up to
 * nb samples: *nd doubles and *ns size_t entries.  With ws non-NULL, the
 * buffers are carved from mem (nd doubles, zeroed) and imem (ns entries)
 * into ws (whose Xb, Z and RZ are already set).  0 when a size overflows. */
int pflref_layers_ws_layout(const pflref_model *m, size_t nb,
                            pflref_model_workspace *ws, double *mem,
                            size_t *imem, size_t *nd, size_t *ns);

#ifndef __FRAMAC__
/* A training pass of nb samples of D: each dropout layer's mask from ws's
 * source (PFLREF_OK at once for a model without dropout). */
pflref_status pflref_layers_dropout_take(const pflref_model *m,
                                         const pflref_data *D, size_t nb,
                                         pflref_model_workspace *ws);
#endif

/* Running statistics of every batchnorm layer (pflref_model_bn_update). */
pflref_status pflref_layers_bn_update(const pflref_model *m,
                                      const pflref_model_workspace *ws,
                                      int biased, double *w,
                                      pflref_error *err);

/* The body/head split of a layer list (pflref_model_features and kin):
 * PFLREF_OK when the last layer is dense after a body without batchnorm,
 * else PFLREF_EINVAL where "m" naming what is missing. */
pflref_status pflref_layers_check_split(const pflref_model *m);
/* The kernels of ref/models/layers_ops.c that layers_body.c runs: the
 * layer's q-th block in x (w or v, or the gradient g), or NULL; layers
 * [0, end) forward; the backward pass of layers hi down to lo from the
 * signal E (E_ws: E when it is one of ws's buffers, which may be
 * overwritten), accumulating each parametrised layer's g blocks. */
const double *pflref_layers_blk(const pflref_model *m, const pflref_layer *L,
                                const double *x, size_t q);
double *pflref_layers_blk_out(const pflref_model *m, const pflref_layer *L,
                              double *x, size_t q);
void pflref_layers_forward_to(const pflref_model *m, const double *w,
                              size_t nb, pflref_model_workspace *ws,
                              size_t end);
void pflref_layers_backward_range(const pflref_model *m, const double *w,
                                  size_t nb, const double *E, double *E_ws,
                                  pflref_model_workspace *ws, double *g,
                                  size_t hi, size_t lo);
/* ref/models/layers_body.c:
 * Phi := the body's output (the head's input, nb × h), A := Phi. */
void pflref_layers_features(const pflref_model *m, const double *w,
                            size_t nb, pflref_model_workspace *ws,
                            double *A, double *Phi);
/* Z := Phi Wᵀ + 1 bᵀ with the head layer's W, b. */
void pflref_layers_head_forward(const pflref_model *m, const double *w,
                                size_t nb, const double *Phi,
                                pflref_model_workspace *ws);
/* The head's entries of g: (1/nb) Eᵀ Phi, (1/nb) Σ_j E_j. */
void pflref_layers_head_backward(const pflref_model *m, size_t nb,
                                 const double *Phi, const double *E,
                                 double *g);
/* The body's entries of g from E: dΦ = E W, back through the body on the
 * outputs the features call left in ws (the body forward again only after
 * another pass through ws). */
void pflref_layers_body_grad(const pflref_model *m, const double *w,
                             size_t nb, const double *E,
                             pflref_model_workspace *ws, double *g);

/* The body's entries of g from a signal dPhi (nb × h) on the body's
 * output, back through the body as pflref_layers_body_grad (MOON). */
void pflref_layers_body_grad_features(const pflref_model *m, const double *w,
                                      size_t nb, const double *dPhi,
                                      pflref_model_workspace *ws, double *g);

/* Batch normalisation in the body (MOON, ref/algorithms/moon.c): Phi :=
 * the body's output from a training pass (train = 1: BN on the batch's
 * statistics, left on ws for pflref_model_bn_update) or an evaluation pass
 * (train = 0: BN on w's running statistics). */
void pflref_layers_features_mode(const pflref_model *m, const double *w,
                                 size_t nb, pflref_model_workspace *ws,
                                 int train, double *Phi);
/* The body's entries of g from a signal dPhi on the output of the body's
 * TRAINING pass at w (run again here): (1/nb) Σ_j J_jᵀ dPhi_j, J the
 * Jacobian of the batch's body output (BN couples the samples). */
void pflref_layers_body_grad_train(const pflref_model *m, const double *w,
                                   size_t nb, const double *dPhi,
                                   pflref_model_workspace *ws, double *g);

/* Convolution of a batch (layers_conv.c), X, Y nb × in_size, out_size in
 * NCHW order, W O × C·κ², col one sample's im2col (C·κ² × H'·W'):
 *   Y_n := W col(X_n) + b 1ᵀ   (b may be NULL). */
void pflref_conv_forward(const pflref_layer *L, const double *W,
                         const double *b, const double *X, size_t nb,
                         double *Y, double *col);
/* R{Y}_n := v_b 1ᵀ + W col(R{X}_n) + V col(X_n)  (RX NULL: R{X} = 0). */
void pflref_conv_r_forward(const pflref_layer *L, const double *W,
                           const double *V, const double *vb,
                           const double *X, const double *RX, size_t nb,
                           double *RY, double *col);
/* gW := α Σ_n dY_n col(X_n)ᵀ (+ with RX: α Σ_n E2_n col(RX_n)ᵀ, see
 * layers_conv.c), gb := α Σ_n Σ_p dY_n[·, p]; dX_n := col2im(Wᵀ dY_n
 * (+ Vᵀ E2_n)) when dX is non-NULL. */
void pflref_conv_backward(const pflref_layer *L, const double *W,
                          const double *V, const double *X,
                          const double *RX, const double *dY,
                          const double *E2, size_t nb, double alpha,
                          double *gW, double *gb, double *dX, double *col,
                          double *dcol);
/* Pools: Y := pool(X) (arg: maxpool's argmax); dX := scatter of dY;
 * RY := the pool's R-operator on RX (through the argmax; NULL RX: 0). */
void pflref_pool_forward(const pflref_layer *L, const double *X, size_t nb,
                         double *Y, size_t *arg);
void pflref_pool_backward(const pflref_layer *L, const double *dY,
                          size_t nb, const size_t *arg, double *dX);
void pflref_pool_r_forward(const pflref_layer *L, const double *RX,
                           size_t nb, const size_t *arg, double *RY);
/* Batch normalisation (per channel over nb·H·W entries; H = W = 1 for
 * batchnorm1d), train: batch statistics into stats; else r_μ, r_v. */
void pflref_bn_forward(const pflref_layer *L, const double *p, size_t nb,
                       int train, const double *X, double *Y, double *xhat,
                       double *stats);
void pflref_bn_backward(const pflref_layer *L, const double *p, size_t nb,
                        const double *xhat, const double *stats, double *dY,
                        double *g);
void pflref_bn_backward_eval(const pflref_layer *L, const double *p,
                             size_t nb, const double *xhat, double *dY,
                             double *g);
void pflref_bn_r_forward(const pflref_layer *L, const double *p,
                         const double *v, size_t nb, const double *X,
                         const double *RX, const double *xhat, double *stats,
                         double *Rxhat, double *RY);
void pflref_bn_r_backward(const pflref_layer *L, const double *p,
                          const double *v, size_t nb, const double *xhat,
                          const double *Rxhat, const double *stats,
                          double *dY, double *RdY, double *Hv);

/* ---- memory.c ------------------------------------------------------ */

/* The byte count PFLREF_MEMORY_LIMIT pins, or SIZE_MAX when the variable
 * is unset or malformed (pflref_memory_available reports a malformed one:
 * it is never read as a limit here).  Data sizes honour it beside the
 * machine's physical memory (pflref_data_limit_bytes). */
size_t pflref_memory_pinned(void);

/* ---- model.c ------------------------------------------------------- */

/* The kernels of m's kind; NULL for the quadratic model. */
const pflref_model_ops *pflref_model_ops_of(const pflref_model *m);

#endif
