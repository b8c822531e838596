/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pflref/model.h: the models, their losses, gradients and Hessian-vector
 * products, and the named parameter blocks that a split marks shared or
 * personal.
 *
 * Every loss is the MEAN over a batch of the per-sample loss
 * (../docs/models.md; spec README rule 3):
 *
 *   quadratic  f(w) = ½ Σ_j a_j (w_j − c_j)²           data-free; a_j > 0
 *   linear     ŷ = x·w (+ b);  squared (ŷ − y)²  or  half_squared ½(ŷ − y)²
 *   softmax    z = W x (+ b);  −log softmax(z)_y       (multinomial logistic)
 *   mlp        z = W2 σ(W1 x (+ b1)) (+ b2),  σ = relu or identity;
 *              cross_entropy −log softmax(z)_y  (k ≥ 2 classes), or
 *              squared (z − y)² / half_squared ½(z − y)²  (k = 1: z is ŷ)
 *   layers     a list of layers (dense, conv2d, pools, flatten, relu, tanh,
 *              sigmoid, batchnorm1d/2d, dropout; pflref_layer below), then one of
 *              the losses on the last layer's output
 *
 * Parameter vector layout (the order of PyTorch's state_dict, flattened
 * row-major, so a torch model's parameters concatenate to the same vector):
 *
 *   quadratic  w (d)
 *   linear     w (d), then b (1) if bias
 *   softmax    W (k×d), then b (k) if bias
 *   mlp        W1 (h×d), b1 (h) if hidden_bias, then, when bn,
 *              bn_gamma (h), bn_beta (h), bn_running_mean (h),
 *              bn_running_var (h), then W2 (k×h), b2 (k) if bias
 *              (the order of a torch state_dict of Linear, BatchNorm1d,
 *              Linear without BatchNorm1d's num_batches_tracked)
 *
 * Batch normalisation (mlp option bn; docs/models.md): after the hidden
 * affine map a = W1 x + b1, per hidden unit q,
 *   training mode (loss, grad):  μ_B = (1/nb) Σ_j a_jq,
 *       s²_B = (1/nb) Σ_j (a_jq − μ_B)² (biased),  â = (a − μ_B)/√(s²_B + ε)
 *   evaluation mode (evaluate, outputs):  â = (a − r_μ)/√(r_v + ε)
 *   u = γ ⊙ â + β,  φ = σ(u).
 * γ (bn_gamma) and β (bn_beta) are learned parameters; r_μ
 * (bn_running_mean) and r_v (bn_running_var) are BUFFERS (is_buffer = 1):
 * state carried in the vector, never trained (their gradient is 0), moved
 * only by pflref_model_bn_update (after each local step's gradient pass
 * under bn.running = update: ref/engine/sgd.c, pflref_bn_running_move).
 *
 * Labels for softmax and the cross-entropy mlp are stored as doubles
 * holding integers 0..k−1; regression targets (linear, squared-loss mlp)
 * are any finite doubles.
 * ReLU: relu(a) = max(a, 0), relu'(0) = 0 (PyTorch's convention), relu'' = 0.
 * Identity: σ(a) = a, σ' = 1, σ'' = 0.
 */
#ifndef PFLREF_MODEL_H
#define PFLREF_MODEL_H

#include <stddef.h>
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    PFLREF_MODEL_QUADRATIC = 0,
    PFLREF_MODEL_LINEAR = 1,
    PFLREF_MODEL_SOFTMAX = 2,
    PFLREF_MODEL_MLP = 3,
    PFLREF_MODEL_LAYERS = 4        /* a list of layers (pflref_layer)       */
} pflref_model_kind;

typedef enum {
    PFLREF_LOSS_SQUARED = 0,       /* (ŷ − y)²: gradient (2/n) Xᵀ(Xw − y)    */
    PFLREF_LOSS_HALF_SQUARED = 1,  /* ½(ŷ − y)²: gradient (1/n) Xᵀ(Xw − y)   */
    PFLREF_LOSS_CROSS_ENTROPY = 2, /* −log softmax(z)_y                       */
    PFLREF_LOSS_QUADRATIC = 3      /* the quadratic model's own f             */
} pflref_loss;

/* The mlp's hidden activation σ (unused by the other models, which store
 * PFLREF_ACT_RELU). */
typedef enum {
    PFLREF_ACT_RELU = 0,           /* σ(a) = max(a, 0), σ'(0) = 0            */
    PFLREF_ACT_IDENTITY = 1        /* σ(a) = a: a linear hidden layer         */
} pflref_activation;

#define PFLREF_MAX_BLOCKS 64

/* A block name's room, its terminating NUL included: a layer's name (at
 * most PFLREF_LAYER_NAME_MAX − 1 characters) and ".running_mean". */
#define PFLREF_BLOCK_NAME_MAX 48

/* A named, contiguous block of the parameter vector: entries
 * [offset, offset + size), viewed as a rows × cols row-major matrix
 * (cols = 1 for vectors).  The name lives in the block, so a model can be
 * copied by value. */
typedef struct {
    char name[PFLREF_BLOCK_NAME_MAX]; /* "w", "b", "W1", ..., "conv1.weight" */
    size_t offset;
    size_t size;
    size_t rows;
    size_t cols;
    int is_input;       /* belongs to the input layer  */
    int is_head;        /* belongs to the output layer */
    int is_bn;          /* a batch-normalisation block (γ, β, r_μ, r_v) */
    int is_buffer;      /* state, not a parameter: gradient 0 (r_μ, r_v) */
} pflref_block;

/* ---- Layer lists (kind "layers"; ref/models/layers.c, docs/models.md) --
 *
 * A model of kind PFLREF_MODEL_LAYERS is a sequence of layers applied to
 * the input x (a vector of d entries, or an image C × H × W flattened in
 * PyTorch's NCHW order: entry c·H·W + h·W + w), followed by the loss on
 * the last layer's output (k logits for cross_entropy, one ŷ for the
 * squared losses).  Shapes are [C, H, W] for images, [n] for vectors. */
typedef enum {
    PFLREF_LAYER_DENSE = 0,       /* z = W x + b  (torch.nn.Linear)          */
    PFLREF_LAYER_CONV2D = 1,      /* torch.nn.Conv2d, square kernel, zeros
                                     padding, no dilation, one group        */
    PFLREF_LAYER_MAXPOOL2D = 2,   /* torch.nn.MaxPool2d, no padding          */
    PFLREF_LAYER_AVGPOOL2D = 3,   /* torch.nn.AvgPool2d, no padding          */
    PFLREF_LAYER_FLATTEN = 4,     /* [C, H, W] → [C·H·W], NCHW order kept    */
    PFLREF_LAYER_RELU = 5,        /* max(a, 0), relu'(0) = 0                 */
    PFLREF_LAYER_TANH = 6,
    PFLREF_LAYER_SIGMOID = 7,     /* 1/(1 + e^−a)                            */
    PFLREF_LAYER_BATCHNORM1D = 8, /* per feature of a vector                 */
    PFLREF_LAYER_BATCHNORM2D = 9  /* per channel over batch × H × W          */
    /* The dropout layer and its members below are hidden from Frama-C
     * (proofs/README.md, "What Frama-C parses"): no proved function reads
     * them, and WP's goals hold these types' definitions, so hiding them
     * leaves every proved goal, and the prover cache, as it was. */
#ifndef __FRAMAC__
    ,
    PFLREF_LAYER_DROPOUT = 10     /* torch.nn.Dropout(p): y = x ⊙ m · s in
                                     training, s = fl(1/(1 − p)), the mask m
                                     given (pflref_model_workspace_dropout);
                                     the identity in evaluation              */
#endif
} pflref_layer_kind;

#define PFLREF_MAX_LAYERS 32

/* A layer's name's room, NUL included (block names add ".running_mean"). */
#define PFLREF_LAYER_NAME_MAX 35

/* One layer.  The caller of pflref_model_init_layers fills the first
 * group; the model fills the second. */
typedef struct {
    pflref_layer_kind kind;
    char name[PFLREF_LAYER_NAME_MAX]; /* "" → the index ("0", "4"), as
                                         nn.Sequential names its members  */
    size_t out;          /* dense: outputs; conv2d: out_channels            */
    size_t kernel;       /* conv2d, pools: the square kernel's side         */
    size_t stride;       /* conv2d: 0 → 1; pools: 0 → kernel                */
    size_t padding;      /* conv2d: zeros on every side                     */
    int bias;            /* dense, conv2d: 0 or 1                           */
    double eps;          /* batchnorm: ε ≥ 0 inside √(s² + ε)              */
    double momentum;     /* batchnorm: ρ in [0, 1]                          */
#ifndef __FRAMAC__
    double p;            /* dropout: the drop probability, in [0, 1)        */
#endif
    /* filled by the model */
    size_t in_shape[3];  /* [C, H, W], or [n, 1, 1] for a vector           */
    size_t out_shape[3];
    int in_rank, out_rank; /* 3: an image; 1: a vector                     */
    size_t in_size, out_size; /* entries per sample                        */
    int first_block;     /* its first block in blocks[], −1 without         */
    size_t nblocks;      /* weight, bias; batchnorm: γ, β, r_μ, r_v         */
} pflref_layer;

typedef struct {
    pflref_model_kind kind;
    pflref_loss loss;
    size_t d;      /* input features; for quadratic the dimension of w      */
    size_t k;      /* classes (softmax, cross-entropy mlp); outputs: 1 for
                      quadratic, linear and the squared-loss mlp            */
    size_t h;      /* hidden units (mlp); 0 otherwise                       */
    int bias;      /* 1 when bias blocks are present; mlp: the OUTPUT bias
                      b2                                                     */
    int hidden_bias;           /* mlp: 1 when b1 is present; 0 otherwise    */
    pflref_activation activation; /* mlp: σ; PFLREF_ACT_RELU otherwise     */
    int bn;        /* mlp: 1 when batch normalisation follows W1 x + b1     */
    double bn_eps;       /* ε of the BN denominator √(s² + ε); ≥ 0          */
    double bn_momentum;  /* ρ of the running statistics; in [0, 1]          */
    size_t P;      /* total number of parameters                            */
    size_t nblocks;
    pflref_block blocks[PFLREF_MAX_BLOCKS];
    /* layers only (d = the input's entries, k = the last layer's outputs,
       h = the input width of the last dense layer, the head's features;
       bn = 1 when a batchnorm layer is present) */
    size_t input[3];     /* [C, H, W] or [d, 1, 1]                          */
    int input_rank;      /* 3 or 1                                          */
    size_t nlayers;
    pflref_layer layers[PFLREF_MAX_LAYERS];
    char preset[16];     /* "" or the preset the list was expanded from     */
} pflref_model;

/* One client's data.  For data models X is n × d row-major and y has n
 * entries.  For the quadratic model X and y are NULL, a and c hold d entries
 * each, and n is the client's sample count used only for aggregation
 * weights (default 1). */
typedef struct {
    size_t n;
    double *X;
    double *y;
    double *a;
    double *c;
} pflref_data;

/* Fixed sizes the spec reader still applies to what it reads (given
 * cluster models); the model and the run are limited by memory instead
 * (pflref_memory_available), and data sizes by the machine's memory
 * (pflref_data_limit_bytes, pflref/problem.h). */
#define PFLREF_MAX_PARAMS ((size_t)1 << 26)   /* 64 Mi doubles = 512 MiB */

/* Limits by memory, not by fixed constants: a model whose parameter
 * vector, or a run whose estimated memory (pflref_run), exceeds the memory
 * the process may still use fails at once with PFLREF_ENOMEM and a
 * message naming the sizes, instead of being killed by the operating
 * system.
 *
 * *bytes := the memory the process may still use: the environment
 * variable PFLREF_MEMORY_LIMIT (a decimal byte count) when set, else
 * MemAvailable of /proc/meminfo, else sysconf(_SC_AVPHYS_PAGES) · page
 * size; a finite RLIMIT_AS less the address space already mapped caps it.
 * *source (may be NULL) := "PFLREF_MEMORY_LIMIT", "MemAvailable",
 * "sysconf" or "RLIMIT_AS", whichever gave the value.
 * Returns PFLREF_EINVAL (where "PFLREF_MEMORY_LIMIT") when the variable is
 * set but not a positive integer, or (where "bytes") for NULL bytes. */
pflref_status pflref_memory_available(size_t *bytes, const char **source,
                                      pflref_error *err);

/* Fill m for the given kind and sizes, with its blocks and P.
 *   kind   model kind
 *   loss   linear: SQUARED or HALF_SQUARED; softmax: CROSS_ENTROPY;
 *          mlp: CROSS_ENTROPY, SQUARED or HALF_SQUARED; quadratic: QUADRATIC
 *   d      ≥ 1;  k ≥ 2 for softmax and the cross-entropy mlp, k = 1 for
 *          the squared-loss mlp (ignored for quadratic and linear);
 *   h      ≥ 1 for mlp (ignored otherwise);  bias 0 or 1 (quadratic: 0)
 * An mlp gets the ReLU activation and both biases b1, b2 when bias = 1, or
 * neither when bias = 0 (pflref_model_init_mlp sets each on its own).
 * Returns PFLREF_EINVAL naming the bad argument, PFLREF_ENOMEM (where "P")
 * when P overflows or one parameter vector of P doubles exceeds the memory
 * available (pflref_memory_available). */
pflref_status pflref_model_init(pflref_model *m, pflref_model_kind kind,
                                pflref_loss loss, size_t d, size_t k, size_t h,
                                int bias, pflref_error *err);

/* Fill m with a one-hidden-layer network z = W2 σ(W1 x + b1) + b2.
 *   loss         CROSS_ENTROPY (k ≥ 2 classes), or SQUARED / HALF_SQUARED
 *                (regression: k must be 1, the output z is ŷ)
 *   d ≥ 1 inputs;  h ≥ 1 hidden units;  act  RELU or IDENTITY
 *   hidden_bias  0 or 1: b1 present (where "hidden_bias" on error)
 *   output_bias  0 or 1: b2 present (m->bias; where "bias" on error)
 * Returns PFLREF_EINVAL naming the bad argument ("loss", "d", "k", "h",
 * "activation", "hidden_bias", "bias"), PFLREF_ENOMEM (where "P") when P
 * overflows or one vector of P doubles exceeds the memory available. */
pflref_status pflref_model_init_mlp(pflref_model *m, pflref_loss loss,
                                    size_t d, size_t k, size_t h,
                                    pflref_activation act, int hidden_bias,
                                    int output_bias, pflref_error *err);

/* Add batch normalisation after the hidden affine map of the mlp m
 * (re-describing it: P grows by 4h, blocks bn_gamma, bn_beta,
 * bn_running_mean, bn_running_var between b1 and W2).
 *   eps       ε ≥ 0, finite (PyTorch's default 1e-5; 0 only where every
 *             batch variance is nonzero)
 *   momentum  ρ in [0, 1] (PyTorch's default 0.1):
 *             r ← (1 − ρ) r + ρ · batch statistic
 * Returns PFLREF_EINVAL where "m" (not an mlp, or already normalised),
 * "bn_eps" or "bn_momentum". */
pflref_status pflref_model_add_bn(pflref_model *m, double eps,
                                  double momentum, pflref_error *err);

/* Fill m with a layer list (kind PFLREF_MODEL_LAYERS; docs/models.md):
 *   loss         CROSS_ENTROPY (the last layer gives k ≥ 2 logits), or
 *                SQUARED / HALF_SQUARED (the last layer gives one ŷ)
 *   input        [C, H, W] (input_rank 3) or [d] (input_rank 1), each
 *                size in [1, 2^24]; d = C·H·W
 *   layers       nlayers (1 ≤ nlayers ≤ PFLREF_MAX_LAYERS) descriptions:
 *                kind, name ("" → the index), out (dense: outputs;
 *                conv2d: out_channels; batchnorm: num_features or 0),
 *                kernel, stride (0: the default), padding, bias, eps,
 *                momentum; the rest is filled in m->layers
 * Blocks follow PyTorch's state_dict order (NAME.weight, NAME.bias,
 * NAME.running_mean, NAME.running_var); is_input marks the first
 * parametrised layer's blocks, is_head the last's.
 * Returns PFLREF_EINVAL with where "loss", "input", "layers" or
 * "layers[i]" (".field") naming the layer, the field and both shapes
 * involved when the shapes do not chain; PFLREF_ENOMEM (where "P") as
 * pflref_model_init. */
pflref_status pflref_model_init_layers(pflref_model *m, pflref_loss loss,
                                       const size_t *input, int input_rank,
                                       const pflref_layer *layers,
                                       size_t nlayers, pflref_error *err);

/* Expand a preset into a layer list (the caller's PFLREF_MAX_LAYERS
 * entries; *nlayers its length), each layer named as the state_dict of the
 * code it reproduces (docs/models.md):
 *   "fedavgcnn"  PFLlib's FedAvgCNN (an image input; k classes)
 *   "lenet5"     the LeNet-5 of Dive into Deep Learning §7.6 (an image)
 *   "mlp"        Linear/act pairs of the nhidden widths hidden[], then
 *                Linear(·, k), named by index; a Flatten first for an image
 *                input; act RELU, TANH or SIGMOID
 * Returns PFLREF_EINVAL where "preset", "input", "hidden" or "activation". */
pflref_status pflref_layers_preset(const char *preset, int input_rank,
                                   size_t k, const size_t *hidden,
                                   size_t nhidden, pflref_layer_kind act,
                                   pflref_layer *layers, size_t *nlayers,
                                   pflref_error *err);

/* "dense", "conv2d", ...; NULL outside the enum. */
const char *pflref_layer_kind_name(pflref_layer_kind kind);

/* PyTorch's initial BN entries of w: γ = 1, β = 0, r_μ = 0, r_v = 1.
 * Nothing for a model without bn. */
void pflref_model_bn_reset(const pflref_model *m, double *w);

/* Names used in specs and results: "quadratic", "linear", ...; "squared", ...;
 * "relu", "identity".  NULL for a value outside the enum. */
const char *pflref_model_kind_name(pflref_model_kind kind);
const char *pflref_loss_name(pflref_loss loss);
const char *pflref_activation_name(pflref_activation act);

/* 1 when m predicts a real target with a squared loss (linear, or mlp with
 * SQUARED / HALF_SQUARED): evaluation reports mse, labels are any finite y.
 * 0 otherwise (and for NULL). */
int pflref_model_is_regression(const pflref_model *m);

/* 1 when m is a softmax classifier (softmax, or mlp with CROSS_ENTROPY):
 * evaluation reports accuracy, labels are integral classes in [0, k).
 * 0 otherwise (and for NULL). */
int pflref_model_is_classifier(const pflref_model *m);

/* Index of the block called `name` in m, or -1. */
int pflref_model_block_index(const pflref_model *m, const char *name);

/* Workspace for the model functions: holds every temporary a batch of up to
 * max_batch samples needs, so the compute functions never allocate. */
typedef struct pflref_model_workspace pflref_model_workspace;

pflref_model_workspace *pflref_model_workspace_alloc(const pflref_model *m,
                                                     size_t max_batch);
void pflref_model_workspace_free(pflref_model_workspace *ws);

/* The bytes pflref_model_workspace_alloc(m, max_batch) allocates;
 * SIZE_MAX when the count overflows. */
size_t pflref_model_workspace_bytes(const pflref_model *m, size_t max_batch);

/* Batch selection shared by the functions below: the batch is the samples
 * idx[0..nb−1] of D (indices < D->n, in this order), or all n samples in
 * index order when idx is NULL.  nb ≤ the workspace's max_batch.  The
 * quadratic model ignores idx and nb (its f has no data).
 * Sums over the batch run in batch order; products go through BLAS. */

/* *loss := (1/nb) Σ_{j∈batch} ℓ(w; x_j, y_j). */
pflref_status pflref_model_loss(const pflref_model *m, const double *w,
                                const pflref_data *D, const size_t *idx,
                                size_t nb, pflref_model_workspace *ws,
                                double *loss);

/* g := ∇_w (1/nb) Σ ℓ(w; x_j, y_j)   (P entries); *loss (if non-NULL) gets
 * the batch loss at w. */
pflref_status pflref_model_grad(const pflref_model *m, const double *w,
                                const pflref_data *D, const size_t *idx,
                                size_t nb, pflref_model_workspace *ws,
                                double *g, double *loss);

#ifndef __FRAMAC__
/* The same gradient in evaluation mode (torch's eval()): batch
 * normalisation on w's running statistics, held fixed (no gradient
 * through them, none moved), dropout the identity; *loss the
 * evaluation-mode batch loss.  Without batch normalisation and dropout,
 * pflref_model_grad bit for bit.  FedALA's passes under fedala.ala_mode =
 * pfllib.  (Hidden from Frama-C: no proved code calls it.) */
pflref_status pflref_model_grad_eval(const pflref_model *m, const double *w,
                                     const pflref_data *D, const size_t *idx,
                                     size_t nb, pflref_model_workspace *ws,
                                     double *g, double *loss);
#endif

/* The gradient of the same loss on the blocks marked in mask (P entries,
 * 1 = wanted; a split's mask, pflref_split_mask): g's marked entries are
 * pflref_model_grad's bit for bit; the others may be left untouched (an
 * mlp whose marked blocks are all head blocks: the head's gradient alone,
 * with no backward pass through the body) or written.  mask NULL: every
 * block.  Errors as pflref_model_grad. */
pflref_status pflref_model_grad_blocks(const pflref_model *m, const double *w,
                                       const pflref_data *D,
                                       const size_t *idx, size_t nb,
                                       const unsigned char *mask,
                                       pflref_model_workspace *ws, double *g,
                                       double *loss);

/* Hv := ∇²_w [(1/nb) Σ ℓ(w; x_j, y_j)] v   (P entries), exact (Pearlmutter's
 * R-operator; for mlp with σ'' = 0).  An mlp with bn: through the
 * training-mode layer, batch statistics included; the running statistics'
 * entries of Hv are 0, v's are ignored, and w is not written. */
pflref_status pflref_model_hvp(const pflref_model *m, const double *w,
                               const pflref_data *D, const size_t *idx,
                               size_t nb, const double *v,
                               pflref_model_workspace *ws, double *Hv);

/* ---- Body and head of the mlp ---------------------------------------
 *
 * (Not for an mlp with bn, whose body output depends on the whole batch:
 * these functions return PFLREF_EINVAL, where "m".)
 * The mlp splits into a BODY, the hidden layer φ(x) = σ(W1 x + b1) (blocks
 * W1, b1), and a HEAD, z = W2 φ + b2 (blocks W2, b2).  A "body forward
 * pass" is one pflref_model_features call on a batch, a "body backward
 * pass" one pflref_model_body_grad call; an algorithm that caches features
 * (PFLEGO) counts them.  Composed on one batch,
 *
 *   features(w) → (A, Phi);  head_grad(w, Phi) → (g_head, E, loss);
 *   body_grad(w, A, E) → g_body
 *
 * gives exactly pflref_model_grad (the same operations in the same order:
 * bit for bit).  Batch selection and the workspace are as for
 * pflref_model_grad (D holds X and y even where only one is read); A, Phi
 * and E are the caller's, in batch order; none of these functions
 * allocates.  Each returns PFLREF_EINVAL for a model that is neither an
 * mlp nor a layer list (checked right after m itself), and for a NULL
 * argument or a bad batch as the functions above.
 *
 * A layer list (kind layers) splits the same way when its last layer is
 * dense and it has no batchnorm layer: the head is that last layer, the
 * body every layer before it; A and Phi both receive the body's output Φ.
 * The body's intermediate outputs do not fit in A: body_grad reads those
 * the last features call left in the workspace (the same batch and body
 * parameters, as the mlp's A), and runs the body forward again, counted as
 * a body forward pass, only when another pass went through the workspace
 * since. */

/* Body forward: A := X_B W1ᵀ (+ 1 b1ᵀ) and Phi := act(A), both nb × h
 * row-major (batch order).  mlp only.
 *   w [in] P;  A, Phi [out] nb × h each (distinct arrays).
 * Reads only W1, b1 of w and X of D (labels are not read). */
pflref_status pflref_model_features(const pflref_model *m, const double *w,
                                    const pflref_data *D, const size_t *idx,
                                    size_t nb, pflref_model_workspace *ws,
                                    double *A, double *Phi);

/* Head on cached features: the mean loss of z_j = W2 Phi_j (+ b2); writes
 * ONLY the head entries (W2, b2) of g (P entries; other entries untouched)
 * with ∇ of the batch-mean loss; E (nb × k, may be NULL) := per-sample
 * ∂ℓ_j/∂z_j (NOT divided by nb); *loss (may be NULL) the batch loss.  Does
 * not read W1/b1.
 *   Phi [in] nb × h;  labels y of D are read (checked as classes for the
 *   cross-entropy head) but not X;  g [out] P;  E [out] nb × k or NULL. */
pflref_status pflref_model_head_grad(const pflref_model *m, const double *w,
                                     const double *Phi, const pflref_data *D,
                                     const size_t *idx, size_t nb,
                                     pflref_model_workspace *ws, double *g,
                                     double *E, double *loss);

/* Body backward: δ_j = (W2ᵀ E_j) ⊙ act'(A_j); writes ONLY the body entries
 * (W1, b1) of g: (1/nb) Σ_j δ_j x_jᵀ and (1/nb) Σ_j δ_j.
 *   A [in] nb × h pre-activations (from pflref_model_features);
 *   E [in] nb × k per-sample ∂ℓ/∂z (from pflref_model_head_grad);
 *   g [out] P (head entries untouched).  Reads W2 of w and X of D. */
pflref_status pflref_model_body_grad(const pflref_model *m, const double *w,
                                     const double *A, const double *E,
                                     const pflref_data *D, const size_t *idx,
                                     size_t nb, pflref_model_workspace *ws,
                                     double *g);

/* Body backward from a signal on the features (MOON's contrastive term,
 * ref/algorithms/moon.c): with dΦ_j = ∂ℓ_j/∂Φ_j the per-sample signal on
 * the body's output (NOT divided by nb), writes ONLY the body entries of
 * g: (1/nb) Σ_j J_jᵀ dΦ_j, J_j = ∂Φ_j/∂(body parameters).  mlp:
 * δ_j = dΦ_j ⊙ act'(A_j), g_W1 := (1/nb) Σ_j δ_j x_jᵀ, g_b1 := (1/nb) Σ_j δ_j;
 * a layer list: back through every layer before the head, on the outputs
 * the last features call left in ws (as pflref_model_body_grad).
 *   A [in] nb × h (from pflref_model_features);  dPhi [in] nb × h;
 *   g [out] P (head entries untouched).  Reads X of D, not the head. */
pflref_status pflref_model_body_grad_features(const pflref_model *m,
                                              const double *w,
                                              const double *A,
                                              const double *dPhi,
                                              const pflref_data *D,
                                              const size_t *idx, size_t nb,
                                              pflref_model_workspace *ws,
                                              double *g);

/* The body passes a workspace has seen since it was allocated (mlp only;
 * 0 for other models): *forward counts every pass of a batch through the
 * body (loss, grad, evaluate, features, and hvp's R-forward), *backward
 * every backward pass through it (grad, body_grad, hvp's R-backward).
 * PFLEGO reads them around a client's update to report its body passes. */
void pflref_model_workspace_passes(const pflref_model_workspace *ws,
                                   size_t *forward, size_t *backward);

#ifndef __FRAMAC__
/* ---- Dropout masks (docs/models.md, "Dropout") ------------------------
 *
 * A layer list with dropout layers takes, in each training pass (every
 * pflref_model_loss, _grad, _grad_blocks, _hvp and _grad_from_output call
 * on ws), the next pass of masks from the source set on ws: src(ctx, m,
 * D, nb, kind, &pass), D the data the pass reads (so a run tells its
 * clients apart), kind the passes' kind (below), sets pass to the pass's
 * masks, one per dropout layer in layer order, each nb × the layer's
 * input entries per sample (row-major, an image in NCHW order), 0 or 1
 * each, and returns PFLREF_OK; or it returns
 * PFLREF_EINVAL (no mask left, or masks of another batch size), which the
 * training pass returns (the source keeps the message).  With no source
 * set, a training pass through a dropout layer fails with PFLREF_EINVAL
 * (where "ws").  Evaluation passes (evaluate, outputs) take no mask: the
 * layer is the identity there.  src NULL removes the source. */
typedef pflref_status (*pflref_dropout_source)(void *ctx,
                                               const pflref_model *m,
                                               const pflref_data *D,
                                               size_t nb, int kind,
                                               const unsigned char **pass);

void pflref_model_workspace_dropout(pflref_model_workspace *ws,
                                    pflref_dropout_source src, void *ctx);

/* What the training passes on ws are, handed to the source as its kind
 * (so a run feeds each from its own schedule list): an algorithm's
 * training passes (the default), or IFCA's cluster estimate F_i(θ_j)
 * under ifca.estimate_mode = train (ref/algorithms/ifca_estimate.c sets
 * it around each of its loss passes; docs/models.md, "Dropout"). */
enum {
    PFLREF_DROPOUT_PASS_TRAIN = 0,
    PFLREF_DROPOUT_PASS_ESTIMATE = 1
};

/* Set the kind of ws's next training passes; returns the kind it had. */
int pflref_model_workspace_dropout_kind(pflref_model_workspace *ws,
                                        int kind);

/* The number of dropout layers of m (0 for every kind but layers). */
size_t pflref_model_dropout_layers(const pflref_model *m);
#endif

/* The running statistics after one training forward pass (the last
 * pflref_model_loss or pflref_model_grad on ws), PyTorch's rule:
 *   r_μ ← (1 − ρ) r_μ + ρ μ_B,
 *   r_v ← (1 − ρ) r_v + ρ (nb/(nb − 1)) s²_B   (unbiased; biased = 0)
 *   r_v ← (1 − ρ) r_v + ρ s²_B                 (biased = 1)
 *   w [in,out] P: only bn_running_mean and bn_running_var are written.
 * Returns PFLREF_EINVAL where "m" (no bn), "ws" (no training pass on this
 * workspace since its allocation) or "nb" (a batch of one sample with the
 * unbiased rule, which PyTorch refuses too). */
pflref_status pflref_model_bn_update(const pflref_model *m,
                                     const pflref_model_workspace *ws,
                                     int biased, double *w,
                                     pflref_error *err);

/* Evaluation of w on a data set (all samples, index order). */
typedef struct {
    double loss;      /* mean per-sample training loss                       */
    double mse;       /* regression (linear, squared-loss mlp): mean
                         (ŷ − y)²; NaN for other models                      */
    double accuracy;  /* classifiers (softmax, cross-entropy mlp): fraction
                         argmax z = y (lowest index wins ties); NaN for
                         other models                                        */
    size_t n;         /* samples evaluated                                   */
} pflref_eval;

pflref_status pflref_model_evaluate(const pflref_model *m, const double *w,
                                    const pflref_data *D,
                                    pflref_model_workspace *ws,
                                    pflref_eval *out);

/* ---- Outputs, output errors and the gradient through the outputs ----
 *
 * The OUTPUT z(w; x) of a data model is ŷ (linear, squared-loss mlp; one
 * entry) or the logits z (softmax, cross-entropy mlp; k entries): what the
 * per-sample loss ℓ(z; y) is applied to.  Composed on one batch,
 *
 *   outputs(w) → Z;  output_grad(Z) → (E, loss);  grad_from_output(w, E) → g
 *
 * gives the gradient of the batch-mean loss at w (pflref_model_grad up to
 * the order of a few roundings).  Separately they serve a loss of a
 * COMBINATION of outputs, such as APFL's output mixture
 * ℓ(α z(v; x) + (1 − α) z(w; x); y) (Deng et al. 2020 as the FedTorch code
 * trains it): its gradient in v is α (1/nb) Σ_j J_j(v)ᵀ E_j with E_j the
 * loss's derivative at the mixed output, i.e. grad_from_output(v, α E).
 *
 * The quadratic model has no outputs: each function returns PFLREF_EINVAL
 * with where "m".  Batch selection, the workspace and the NULL checks are
 * as for pflref_model_grad; Z and E are the caller's nb × k row-major
 * arrays in batch order; nothing allocates. */

/* Z := z(w; x_j) for every sample j of the batch (nb × k).  Reads X of D
 * only (labels are not read). */
pflref_status pflref_model_outputs(const pflref_model *m, const double *w,
                                   const pflref_data *D, const size_t *idx,
                                   size_t nb, pflref_model_workspace *ws,
                                   double *Z);

#ifndef __FRAMAC__
/* The same outputs from a TRAINING pass: batch normalisation on the
 * batch's statistics (which the pass leaves on ws for
 * pflref_model_bn_update), dropout layers with the pass's masks, as
 * pflref_model_grad's forward pass (pflref_model_outputs runs evaluation
 * mode).  FedRoD's logits z_G, z_P of a body with batch normalisation.
 * (Hidden from Frama-C: no proved code calls it, so the proved files'
 * goals stay as they were.) */
pflref_status pflref_model_outputs_train(const pflref_model *m,
                                         const double *w,
                                         const pflref_data *D,
                                         const size_t *idx, size_t nb,
                                         pflref_model_workspace *ws,
                                         double *Z);
#endif

#ifndef __FRAMAC__
/* MOON's representation with batch normalisation in the body
 * (ref/algorithms/moon.c): a layer list whose last layer is dense after
 * at least one layer, without dropout.
 * pflref_model_features_mode: Phi (nb × h) := the body's output of a
 * training pass (train ≠ 0: batch normalisation on the batch's statistics,
 * left on ws for pflref_model_bn_update) or an evaluation pass (train = 0:
 * on w's running statistics).
 * pflref_model_body_grad_train: the body's entries of g (head entries
 * untouched) := (1/nb) Σ_j J_jᵀ dPhi_j, J_j = ∂Φ_j/∂(body parameters) of
 * the TRAINING pass at w, where Φ_j depends on every sample of the batch
 * through μ_B, s²_B (the body forward runs again, a training pass).
 * Both return PFLREF_EINVAL where "m" for another model, and as
 * pflref_model_outputs for a NULL argument or a bad batch. */
pflref_status pflref_model_features_mode(const pflref_model *m,
                                         const double *w,
                                         const pflref_data *D,
                                         const size_t *idx, size_t nb,
                                         pflref_model_workspace *ws,
                                         int train, double *Phi);
pflref_status pflref_model_body_grad_train(const pflref_model *m,
                                           const double *w,
                                           const pflref_data *D,
                                           const size_t *idx, size_t nb,
                                           const double *dPhi,
                                           pflref_model_workspace *ws,
                                           double *g);
#endif

/* E_j := ∂ℓ(z; y_j)/∂z at z = Z_j, per sample (NOT divided by nb): s·(z −
 * y) for the squared losses (s = 2 squared, 1 half_squared), softmax(z) −
 * onehot(y) for cross-entropy; *loss (may be NULL) := (1/nb) Σ_j ℓ(Z_j; y_j)
 * (cross-entropy evaluated stably, as pflref_model_loss).  Reads the labels
 * y of D only (classes are checked).  E may be Z (the errors overwrite the
 * outputs). */
pflref_status pflref_model_output_grad(const pflref_model *m, const double *Z,
                                       const pflref_data *D, const size_t *idx,
                                       size_t nb, pflref_model_workspace *ws,
                                       double *E, double *loss);

/* g := (1/nb) Σ_j J_j(w)ᵀ E_j, with J_j = ∂z(w; x_j)/∂w (k × P): the
 * gradient at w of (1/nb) Σ_j ⟨E_j, z(w; x_j)⟩ for fixed E.
 *   E [in] nb × k (any values; must not be the workspace's);  g [out] P.
 * Reads X of D only. */
pflref_status pflref_model_grad_from_output(const pflref_model *m,
                                            const double *w,
                                            const pflref_data *D,
                                            const size_t *idx, size_t nb,
                                            const double *E,
                                            pflref_model_workspace *ws,
                                            double *g);

/* Evaluation of the OUTPUT mixture ẑ(x) = α z(v; x) + (1 − α) z(w; x) on
 * all of D (index order, in chunks of the workspace's max_batch): loss
 * (1/n) Σ_j ℓ(ẑ_j; y_j), mse (regression) and accuracy (classifiers: argmax
 * ẑ = y, lowest index on ties), as pflref_model_evaluate reports them.  For
 * α = 1 (0) the result is pflref_model_evaluate of v (w) bit for bit.
 *   v, w [in] P;  alpha [in] finite.
 * Returns PFLREF_EINVAL for the quadratic model (where "m"), a bad
 * argument (alpha not finite: where "alpha") or a label that is not a
 * class. */
pflref_status pflref_model_evaluate_mix(const pflref_model *m, const double *v,
                                        const double *w, double alpha,
                                        const pflref_data *D,
                                        pflref_model_workspace *ws,
                                        pflref_eval *out);

/* Check that D fits m: sizes, finite values, classifier labels integral in
 * [0, k) (regression targets: any finite y), quadratic a_j > 0.  `where`
 * prefixes the JSON path in messages (e.g. "clients[2]"). */
pflref_status pflref_data_validate(const pflref_model *m, const pflref_data *D,
                                   const char *where, pflref_error *err);

/* A split marks each block shared (u) or personal (v_i).
 * personal[b] = 1 when block b is personal. */
typedef struct {
    unsigned char personal[PFLREF_MAX_BLOCKS];
} pflref_split;

/* Build a split from names: block names ("W1", "b", "conv1.weight", ...),
 * a layer list's layer names (all the layer's blocks), or the groups
 * "input" (the first layer's blocks), "head" (the output layer's blocks)
 * and, for a layer list, "bn" (every batchnorm block).
 * count may be 0 (everything shared).  Unknown names give PFLREF_EINVAL with
 * where = "<where>[j]". */
pflref_status pflref_split_from_names(const pflref_model *m,
                                      const char *const *names, size_t count,
                                      const char *where, pflref_split *out,
                                      pflref_error *err);

/* mask[p] := 1 if parameter p lies in a personal block of split, else 0.
 *   m [in];  split [in] (NULL: everything shared);  mask [out] P entries.
 * Does nothing when m or mask is NULL.  Proved (ref/models/model.c): every
 * block of m must lie inside its P entries, as pflref_model_init makes
 * them; mask is then 1 exactly on split's personal blocks. */
/*@ // some block r < q marked personal holds entry p
    predicate in_personal{L}(pflref_block *B, unsigned char *pers, integer q,
                             integer p) = \exists integer r; 0 <= r < q &&
      pers[r] != 0 && B[r].offset <= p < B[r].offset + B[r].size;
    // the nb blocks of B lie inside P entries
    predicate blocks_within{L}(pflref_block *B, integer nb, integer P) =
      \forall integer q; 0 <= q < nb ==> B[q].offset + B[q].size <= P; */
/*@ requires m != \null ==> \valid_read(m) &&
             m->nblocks <= PFLREF_MAX_BLOCKS &&
             blocks_within(&m->blocks[0], m->nblocks, m->P);
    requires split == \null || \valid_read(split);
    requires m != \null && mask != \null ==>
             \valid(mask + (0 .. m->P - 1)) &&
             \separated(mask + (0 .. m->P - 1), m) &&
             (split == \null || \separated(mask + (0 .. m->P - 1), split));
    assigns mask[0 .. m->P - 1];
    ensures m != \null && mask != \null ==> \forall integer p; 0 <= p < m->P ==>
            (mask[p] == 1 <==> split != \null &&
               in_personal(&m->blocks[0], &split->personal[0], m->nblocks, p)) &&
            (mask[p] == 0 || mask[p] == 1); */
void pflref_split_mask(const pflref_model *m, const pflref_split *split,
                       unsigned char *mask);

/* 1 when m has at most PFLREF_MAX_BLOCKS blocks and each lies inside its P
 * entries (offset + size ≤ P, as pflref_model_init and its kin make
 * them), else 0: the run refuses any other model (ref/engine/state.c).
 * Proved (ref/models/model.c): the result is exactly blocks_within. */
/*@ requires \valid_read(m);
    assigns \nothing;
    ensures \result == 0 || \result == 1;
    ensures \result == 1 <==> m->nblocks <= PFLREF_MAX_BLOCKS &&
            blocks_within(&m->blocks[0], m->nblocks, m->P);
 */
int pflref_model_blocks_inside(const pflref_model *m);

#ifdef __cplusplus
}
#endif
#endif
