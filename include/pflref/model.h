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
 *   mlp        z = W2 relu(W1 x + b1) + b2;  −log softmax(z)_y
 *
 * Parameter vector layout (the order of PyTorch's state_dict, flattened
 * row-major, so a torch model's parameters concatenate to the same vector):
 *
 *   quadratic  w (d)
 *   linear     w (d), then b (1) if bias
 *   softmax    W (k×d), then b (k) if bias
 *   mlp        W1 (h×d), b1 (h), W2 (k×h), b2 (k)     (mlp always has biases)
 *
 * Labels for softmax and mlp are stored as doubles holding integers 0..k−1.
 * ReLU: relu(a) = max(a, 0), relu'(0) = 0 (PyTorch's convention), relu'' = 0.
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
    PFLREF_MODEL_MLP = 3
} pflref_model_kind;

typedef enum {
    PFLREF_LOSS_SQUARED = 0,       /* (ŷ − y)²: gradient (2/n) Xᵀ(Xw − y)    */
    PFLREF_LOSS_HALF_SQUARED = 1,  /* ½(ŷ − y)²: gradient (1/n) Xᵀ(Xw − y)   */
    PFLREF_LOSS_CROSS_ENTROPY = 2, /* −log softmax(z)_y                       */
    PFLREF_LOSS_QUADRATIC = 3      /* the quadratic model's own f             */
} pflref_loss;

#define PFLREF_MAX_BLOCKS 4

/* A named, contiguous block of the parameter vector: entries
 * [offset, offset + size), viewed as a rows × cols row-major matrix
 * (cols = 1 for vectors). */
typedef struct {
    const char *name;   /* static string: "w", "b", "W", "W1", "b1", ... */
    size_t offset;
    size_t size;
    size_t rows;
    size_t cols;
    int is_input;       /* belongs to the input layer  */
    int is_head;        /* belongs to the output layer */
} pflref_block;

typedef struct {
    pflref_model_kind kind;
    pflref_loss loss;
    size_t d;      /* input features; for quadratic the dimension of w      */
    size_t k;      /* classes (softmax, mlp); 1 for quadratic and linear    */
    size_t h;      /* hidden units (mlp); 0 otherwise                       */
    int bias;      /* 1 when bias blocks are present                        */
    size_t P;      /* total number of parameters                            */
    size_t nblocks;
    pflref_block blocks[PFLREF_MAX_BLOCKS];
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

/* Largest parameter count and data size a model or problem may have: a spec
 * beyond these fails at once with PFLREF_ENOMEM and a message, instead of
 * being killed by the operating system. */
#define PFLREF_MAX_PARAMS ((size_t)1 << 26)   /* 64 Mi doubles = 512 MiB */
#define PFLREF_MAX_DATA   ((size_t)1 << 28)   /* 256 Mi doubles = 2 GiB  */

/* Fill m for the given kind and sizes, with its blocks and P.
 *   kind   model kind
 *   loss   linear: SQUARED or HALF_SQUARED; softmax, mlp: CROSS_ENTROPY;
 *          quadratic: QUADRATIC
 *   d      ≥ 1;  k ≥ 2 for softmax and mlp (ignored otherwise);
 *   h      ≥ 1 for mlp (ignored otherwise);  bias 0 or 1 (mlp: must be 1)
 * Returns PFLREF_EINVAL naming the bad argument, PFLREF_ENOMEM when P would
 * exceed PFLREF_MAX_PARAMS. */
pflref_status pflref_model_init(pflref_model *m, pflref_model_kind kind,
                                pflref_loss loss, size_t d, size_t k, size_t h,
                                int bias, pflref_error *err);

/* Names used in specs and results: "quadratic", "linear", ...; "squared", ... */
const char *pflref_model_kind_name(pflref_model_kind kind);
const char *pflref_loss_name(pflref_loss loss);

/* Index of the block called `name` in m, or -1. */
int pflref_model_block_index(const pflref_model *m, const char *name);

/* Workspace for the model functions: holds every temporary a batch of up to
 * max_batch samples needs, so the compute functions never allocate. */
typedef struct pflref_model_workspace pflref_model_workspace;

pflref_model_workspace *pflref_model_workspace_alloc(const pflref_model *m,
                                                     size_t max_batch);
void pflref_model_workspace_free(pflref_model_workspace *ws);

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

/* Hv := ∇²_w [(1/nb) Σ ℓ(w; x_j, y_j)] v   (P entries), exact (Pearlmutter's
 * R-operator; for mlp with relu'' = 0). */
pflref_status pflref_model_hvp(const pflref_model *m, const double *w,
                               const pflref_data *D, const size_t *idx,
                               size_t nb, const double *v,
                               pflref_model_workspace *ws, double *Hv);

/* Evaluation of w on a data set (all samples, index order). */
typedef struct {
    double loss;      /* mean per-sample training loss                       */
    double mse;       /* linear: mean (ŷ − y)²; NaN for other models         */
    double accuracy;  /* softmax, mlp: fraction argmax z = y (lowest index
                         wins ties); NaN for other models                    */
    size_t n;         /* samples evaluated                                   */
} pflref_eval;

pflref_status pflref_model_evaluate(const pflref_model *m, const double *w,
                                    const pflref_data *D,
                                    pflref_model_workspace *ws,
                                    pflref_eval *out);

/* Check that D fits m: sizes, finite values, labels integral in [0, k),
 * quadratic a_j > 0.  `where` prefixes the JSON path in messages (e.g.
 * "clients[2]"). */
pflref_status pflref_data_validate(const pflref_model *m, const pflref_data *D,
                                   const char *where, pflref_error *err);

/* A split marks each block shared (u) or personal (v_i).
 * personal[b] = 1 when block b is personal. */
typedef struct {
    unsigned char personal[PFLREF_MAX_BLOCKS];
} pflref_split;

/* Build a split from names: block names ("W1", "b", ...) or the groups
 * "input" (the first layer's blocks) and "head" (the output layer's blocks).
 * count may be 0 (everything shared).  Unknown names give PFLREF_EINVAL with
 * where = "<where>[j]". */
pflref_status pflref_split_from_names(const pflref_model *m,
                                      const char *const *names, size_t count,
                                      const char *where, pflref_split *out,
                                      pflref_error *err);

/* mask[p] := 1 if parameter p lies in a personal block, else 0  (P entries). */
void pflref_split_mask(const pflref_model *m, const pflref_split *split,
                       unsigned char *mask);

#ifdef __cplusplus
}
#endif
#endif
