/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/params.c: the registry of hyperparameters and variant switches.
 *
 * One table names every hyperparameter (with its paper symbol and bounds)
 * and every switch (with its values, the paper's reading first).  The spec
 * reader, `pflref list` and the docs all read this table, so a switch is
 * spelled the same way everywhere (shared/spec/README.md rule 1).  The
 * lookups and setters on the table are in params_set.c; the presets that
 * set several switches at once are in presets.c.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "pflref/algorithm.h"
#include "engine/params_fedrecon.h"
#include "engine/params_apple.h"
#include "engine/params_fedrod.h"
#include "engine/params_fedala.h"
#include "engine/params_fedpac.h"
#include "engine/params_pfl_ft.h"
#include "engine/params_bn.h"
#include "engine/params_perfedavg.h"
#include "engine/params_ifca.h"
#include "engine/params_moon.h"

static const char *const fedavg_weights_values[] = {
    "samples", "uniform", "all_keep_old", NULL};
static const char *const finetune_scope_values[] = {"full", "personal", NULL};
static const char *const theta_start_values[] = {"reset", "warm", NULL};
static const char *const pfedme_weights_values[] = {"uniform", "samples",
                                                    NULL};
static const char *const pfedme_train_values[] = {"all", "sampled", NULL};
static const char *const personal_eval_values[] = {"theta", "local_w",
                                                   "global", NULL};
static const char *const pfedme_eval_reset_values[] = {"none", "initial",
                                                       NULL};
static const char *const ditto_order_values[] = {
    "interleaved_shared_batch", "personal_first", NULL};
static const char *const ditto_prox_values[] = {"squared", "norm", NULL};
static const char *const ditto_prox_ref_values[] = {"round_start", "moving",
                                                    NULL};
static const char *const ditto_weights_values[] = {"samples", "uniform", NULL};
static const char *const ditto_batches_values[] = {"shared", "separate", NULL};
static const char *const pfl_state_values[] = {"stateful", "stateless", NULL};
static const char *const pfl_weights_values[] = {"samples", "uniform",
                                                 "batches", NULL};
static const char *const pfl_finetune_values[] = {"personal", "full", NULL};
static const char *const pflego_head_values[] = {"seed", "exact_alpha", NULL};
static const char *const pflego_theta_values[] = {
    "global", "sampled_normalised", NULL};
static const char *const pflego_server_values[] = {"sgd", "adam", NULL};
static const char *const perfedavg_variant_values[] = {"exact", "fo", "hf",
                                                       NULL};
static const char *const perfedavg_weights_values[] = {"uniform", "samples",
                                                       NULL};
static const char *const perfedavg_eval_values[] = {
    "one_alpha_step", "alpha_then_beta", NULL};
static const char *const apfl_alpha_values[] = {"fixed", "adaptive", NULL};
static const char *const apfl_mix_values[] = {"parameter", "output", NULL};
static const char *const apfl_mix_w_values[] = {"old", "new", NULL};
static const char *const apfl_rule_values[] = {"paper", "fedtorch", NULL};
static const char *const apfl_variant_values[] = {"paper", "pfllib", NULL};
static const char *const apfl_weights_values[] = {"uniform", "samples", NULL};
static const char *const apfl_alpha_lr_values[] = {"decayed", "constant",
                                                   NULL};
static const char *const interp_alpha_values[] = {"fixed", "per_client_grid",
                                                  NULL};
static const char *const interp_select_values[] = {"validation", "test",
                                                   NULL};
static const char *const cfl_bipartition_values[] = {"optimal",
                                                    "complete_linkage", NULL};
static const char *const cfl_weights_values[] = {"uniform", "samples", NULL};
static const char *const ifca_mode_values[] = {"gradient", "model", NULL};
static const char *const fedfomo_distance_values[] = {
    "l2", "l1", "l2_squared", "l2_per_tensor_sum", NULL};
static const char *const fedfomo_val_loss_values[] = {"sample_mean",
                                                      "batch_mean", NULL};
static const char *const fedfomo_val_mode_values[] = {"train", "eval",
                                                      NULL};
static const char *const fedfomo_selection_values[] = {"eps_greedy", "topM",
                                                        NULL};
static const char *const fedfomo_p_update_values[] = {
    "weights", "signed_abs_sum", "raw", NULL};
static const char *const fedfomo_p_init_values[] = {"zeros", "own_0.1",
                                                     "identity", NULL};
static const char *const fedfomo_no_positive_values[] = {
    "anchor", "keep_current", NULL};
static const char *const fedfomo_anchor_values[] = {"pre_train", "post_train",
                                                     NULL};
static const char *const fedfomo_m_counts_values[] = {"others", "total",
                                                      NULL};
static const char *const fedfomo_self_values[] = {"included", "excluded",
                                                  "ranked", NULL};
static const char *const fedbn_weights_values[] = {"uniform", "samples",
                                                   NULL};
static const char *const fedbn_bn_values[] = {"local", "shared", NULL};
static const char *const fedbn_running_var_values[] = {"unbiased", "biased",
                                                       NULL};
static const char *const pfedhn_bias_values[] = {"on", "off", NULL};
static const char *const pfedhn_opt_values[] = {"sgd", "sgd_momentum_wd",
                                                NULL};
static const char *const pfedhn_clip_values[] = {"off", "norm", NULL};
static const char *const lr_schedule_values[] = {"constant", "exponential",
                                                 "step", NULL};
static const char *const lr_scope_values[] = {"all", "eta_p", "no_beta",
                                              NULL};
static const char *const lr_count_values[] = {"rounds", "trainings", NULL};
static const char *const lora_method_values[] = {"personal", "ffa", "fedavg",
                                                 "hetlora", NULL};
static const char *const lora_targets_values[] = {"all", "head",
                                                  "input", NULL};
static const char *const lora_weights_values[] = {"samples", "uniform", NULL};
static const char *const hetlora_weights_values[] = {"sparsity", "uniform",
                                                     "samples", NULL};
static const char *const hetlora_scaling_values[] = {"none", "alpha", NULL};
static const char *const opt_method_values[] = {"sgd", "adam", "adamw",
                                                NULL};
static const char *const opt_momentum_form_values[] = {"pytorch",
                                                       "classical", NULL};
static const char *const opt_nesterov_values[] = {"off", "on", NULL};
static const char *const opt_decay_form_values[] = {"coupled", "decoupled",
                                                    NULL};
static const char *const opt_decay_scope_values[] = {"all", "weights",
                                                     "shared", "personal",
                                                     NULL};
static const char *const opt_clip_values[] = {"off", "norm", NULL};
static const char *const opt_state_values[] = {"reset", "client", "server",
                                               NULL};
static const char *const bn_running_values[] = {"update", "frozen", NULL};
static const char *const bn_running_var_values[] = {"unbiased", "biased",
                                                    NULL};
static const char *const dyn_alpha_k[] = {"uniform", "size_scaled", NULL};
static const char *const dyn_prox[] = {"squared", "norm_half", NULL};
static const char *const dyn_h_sum[] = {"differences", "literal", NULL};
static const char *const scaffold_option_values[] = {"II", "I", NULL};
static const char *const scaffold_c_lr_values[] = {"round", "initial", NULL};
static const char *const fedprox_sampling_values[] = {"paper",
                                                    "uniform_weighted", NULL};
static const char *const fedamp_peers_values[] = {"all", "previous", NULL};
static const char *const fedamp_start_values[] = {"message", "own", NULL};
static const char *const fedamp_prox_values[] = {"squared", "detached", NULL};
static const char *const fedproto_distance_values[] = {"squared_l2", "mse",
                                                       NULL};
static const char *const fedproto_protos_values[] = {"trained",
                                                     "during_training", NULL};
static const char *const fedproto_weights_values[] = {"class_counts",
                                                      "uniform", NULL};
/* The algorithms whose clients step through the shared local solver
 * (ref/engine/sgd.c), or (lora) step their own vector with the same
 * optimizer, which opt.* applies to (ref/engine/optim.c); each has
 * opt_slots ≥ 1 in its pflref_algorithm. */
#define OPT_ALGORITHMS                                                       \
    "fedavg local finetune interp ditto fedalt fedsim ifca cfl fedfomo "    \
    "apfl pfedhn lora fedbn feddyn scaffold moon fedprox"                    \
    " fedproto fedala pfedme prox fedrecon apple perfedavg pflego fedrod"   \
    " fedpac"
/* The algorithms that train a model, which bn.* applies to: those whose
 * local steps move batch normalisation's running statistics (the shared
 * local solver, ditto, fedsim, fedbn, pfedhn) and those that refuse a model
 * with batch normalisation under bn.running = update (alg->bn_refusal). */
#define BN_ALGORITHMS                                                        \
    "fedavg local finetune prox pfedme ditto fedalt fedsim pflego "         \
    "perfedavg apfl interp cfl ifca fedfomo fedbn pfedhn lora feddyn "      \
    "scaffold fedprox fedrod fedpac fedala moon fedproto"
/* The algorithms with a step size, which lr.* applies to. */
#define LR_ALGORITHMS                                                        \
    "fedavg local finetune prox pfedme ditto fedalt fedsim pflego "         \
    "perfedavg apfl interp cfl ifca fedfomo fedbn feddyn scaffold moon fedprox" \
    " fedproto"                                                              \
    " fedrod"                                                                \
    " apple"                                                                 \
    " fedala"                                                                \
    " fedamp"                                                                \
    " fedpac"
/* Those whose clients count their own decay steps (pflref_client_lr): the
 * algorithms PFLlib runs. */
#define LR_COUNT_ALGORITHMS                                                  \
    "fedavg local pfedme ditto fedalt fedsim perfedavg apfl feddyn "        \
    "scaffold moon fedprox fedfomo"                                          \
    " fedproto"                                                              \
    " fedrod"                                                                \
    " fedala"                                                                \
    " fedbn"                                                                 \
    " fedamp"                                                                \
    " fedpac"

static const pflref_param params[] = {
    {"eta", "fedavg local finetune pfedme ditto apfl interp cfl fedfomo fedbn "
     "lora feddyn scaffold fedprox",
     "fedavg local finetune pfedme ditto apfl interp cfl fedfomo fedbn lora "
     "feddyn scaffold fedprox",
     PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, eta), NAN, 0.0, 1, NULL, "η",
     "client step size (local SGD; pFedMe's local update of w_{i,r}; "
     "APFL's w and v steps; interp's global and local training; CFL's "
     "local SGD)"},
    {"lambda", "pfedme ditto prox", "pfedme ditto prox", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, lambda), NAN, 0.0, 0, NULL, "λ",
     "proximal weight toward the global / reference model"},
    {"eta_p", "pfedme prox", "pfedme prox", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, eta_p), NAN, 0.0, 1, NULL, "η_p",
     "pFedMe's inner (personal) step size"},
    {"K", "pfedme prox", "pfedme prox", PFLREF_PARAM_INT,
     offsetof(pflref_hyper, K), NAN, 1.0, 0, NULL, "K",
     "pFedMe's inner gradient steps on one batch"},
    {"beta", "pfedme", "", PFLREF_PARAM_REAL, offsetof(pflref_hyper, beta),
     1.0, 0.0, 1, NULL, "β",
     "pFedMe's server mixing: w ← (1 − β) w + β · average"},
    {"pfedme.mu", "pfedme prox", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, pfedme.mu), 0.0, 0.0, 0, NULL, "μ",
     "the official code's extra μθ in the inner gradient (0 = the paper)"},
    {"eta_ft", "finetune fedalt fedsim", "finetune", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, eta_ft), NAN, 0.0, 1, NULL, "η_ft",
     "fine-tuning step size (fedalt, fedsim: needed with schedule.post)"},
    {"mu_ft", "finetune", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, mu_ft), 0.0, 0.0, 0, NULL, "μ_ft",
     "fine-tuning proximal weight toward the global model (0 = plain)"},
    {"fedavg.weights", "fedavg finetune interp", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedavg.weights), 0.0, 0.0, 0,
     fedavg_weights_values, "",
     "aggregation weights: n_k/Σ_{S_t} n_j (final paper) | 1/m | "
     "Σ_k n_k/n with unsampled clients keeping w_t"},
    {"finetune.scope", "finetune", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, finetune.scope), 0.0, 0.0, 0,
     finetune_scope_values, "",
     "which parameters fine-tuning moves: all | the split's personal blocks"},
    {"pfedme.theta_start", "pfedme prox", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, pfedme.theta_start), 0.0, 0.0, 0,
     theta_start_values, "",
     "inner loop start: θ ← w_{i,r} every local round | θ carried over"},
    {"pfedme.weights", "pfedme", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, pfedme.weights), 0.0, 0.0, 0,
     pfedme_weights_values, "",
     "server average over S^t: 1/S (paper) | n_i / Σ n_j"},
    {"pfedme.train", "pfedme", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, pfedme.train), 0.0, 0.0, 0, pfedme_train_values,
     "", "who trains: all N clients (paper) | only the sampled S^t"},
    {"pfedme.personal_eval", "pfedme", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, pfedme.personal_eval), 0.0, 0.0, 0,
     personal_eval_values, "",
     "the personalised model reported: last θ (paper) | w_{i,R} | global"},
    {"pfedme.eval_reset", "pfedme", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, pfedme.eval_reset), 0.0, 0.0, 0,
     pfedme_eval_reset_values, "",
     "defect: none | PFLlib's evaluation resets a never-trained client's θ "
     "start, so its first training starts θ at w⁰ (with theta_start warm)"},
    {"ditto.order", "ditto", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, ditto.order), 0.0, 0.0, 0, ditto_order_values,
     "", "per batch personal then global step | all personal steps first"},
    {"ditto.prox", "ditto", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, ditto.prox), 0.0, 0.0, 0, ditto_prox_values, "",
     "personal regulariser: (λ/2)‖v − w‖² (paper) | λ‖v − w‖"},
    {"ditto.prox_ref", "ditto", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, ditto.prox_ref), 0.0, 0.0, 0,
     ditto_prox_ref_values, "",
     "reference of the regulariser: round-start w^t (paper) | moving copy"},
    {"ditto.weights", "ditto", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, ditto.weights), 0.0, 0.0, 0,
     ditto_weights_values, "",
     "aggregation of the global copies: n_k/Σ n_j (as FedAvg) | simple mean"},
    {"ditto.batches", "ditto", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, ditto.batches), 0.0, 0.0, 0, ditto_batches_values,
     "", "the personal steps' batches: the global pass's (paper) | their own "
     "list, schedule.rounds[t].personal (PFLlib's ptrain(), -pls epochs)"},
    {"gamma_u", "fedalt fedsim", "fedalt fedsim", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, gamma_u), NAN, 0.0, 0, NULL, "γ_u",
     "local step size of the shared parameters u"},
    {"gamma_v", "fedalt fedsim", "fedalt fedsim", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, gamma_v), NAN, 0.0, 0, NULL, "γ_v",
     "local step size of the personal parameters v"},
    {"tau_v", "fedalt", "fedalt", PFLREF_PARAM_INT,
     offsetof(pflref_hyper, tau_v), NAN, 0.0, 0, NULL, "τ_v",
     "FedAlt's v steps: the first τ_v scheduled batches (τ_u = the rest)"},
    {"pfl.state", "fedalt fedsim", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, pfl.state), 0.0, 0.0, 0, pfl_state_values, "",
     "personal state: v_i persists | v_i ← v⁰ at every visit"},
    {"pfl.weights", "fedalt fedsim", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, pfl.weights), 0.0, 0.0, 0, pfl_weights_values,
     "", "server weights α_i in Σ_S α_i u_i / Σ_S α_i: N_i/N | 1/n | the "
     "device's batch count"},
    {"pfl.finetune", "fedalt fedsim", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, pfl.finetune), 0.0, 0.0, 0, pfl_finetune_values,
     "", "final fine-tuning (schedule.post) moves: v only | u and v"},
    PFL_FT_PARAMS    /* ref/engine/params_pfl_ft.h */
    {"rho", "pflego", "pflego", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, rho), NAN, 0.0, 1, NULL, "ρ",
     "server step size (also the last head step's)"},
    {"pflego.beta", "pflego", "pflego", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, pflego.beta), NAN, 0.0, 0, NULL, "β",
     "step size of the τ − 1 cheap head steps"},
    {"pflego.head_step", "pflego", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, pflego.head_step), 0.0, 0.0, 0,
     pflego_head_values, "",
     "last head step: W̃_i − ρ(I/r) G_i (seed, code) | − ρ(I/r) α_i G_i"},
    {"pflego.theta_weights", "pflego", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, pflego.theta_weights), 0.0, 0.0, 0,
     pflego_theta_values, "",
     "α_i in the θ step: N_i/N | N_i/Σ_{I_t} N_j (the authors' code)"},
    {"pflego.server", "pflego", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, pflego.server), 0.0, 0.0, 0,
     pflego_server_values, "",
     "server optimiser: SGD | Adam(ρ, 0.9, 0.999, 1e-8) (the authors' code)"},
    {"alpha", "perfedavg", "perfedavg", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, perfedavg.alpha), NAN, 0.0, 0, NULL, "α",
     "Per-FedAvg's inner step w̃ = w − α ∇f(w; D) (and the evaluation's)"},
    {"beta", "perfedavg", "perfedavg", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, perfedavg.beta), NAN, 0.0, 1, NULL, "β",
     "Per-FedAvg's outer (meta) step size"},
    {"delta", "perfedavg", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, perfedavg.delta), NAN, 0.0, 1, NULL, "δ",
     "Per-FedAvg HF: the finite-difference radius (needed by variant hf)"},
    {"perfedavg.variant", "perfedavg", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, perfedavg.variant), 0.0, 0.0, 0,
     perfedavg_variant_values, "",
     "the meta step: exact Hessian-vector product | first order | "
     "finite-difference Hessian-vector product around w"},
    {"perfedavg.weights", "perfedavg", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, perfedavg.weights), 0.0, 0.0, 0,
     perfedavg_weights_values, "",
     "server average: uniform over A_k (paper) | n_i / Σ n_j"},
    {"perfedavg.eval", "perfedavg", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, perfedavg.eval), 0.0, 0.0, 0,
     perfedavg_eval_values, "",
     "personalisation for evaluation: one α step (paper) | α then β step"},
    PERFEDAVG_RUN_PARAMS
    {"alpha", "apfl", "apfl", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, apfl.alpha), NAN, 0.0, 0, NULL, "α",
     "APFL's mixing weight α_i in [0, 1] (the initial value if adaptive)"},
    {"eta_alpha", "apfl", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, apfl.eta_alpha), NAN, 0.0, 1, NULL, "η_α",
     "APFL's adaptive α step size (unset: η, the paper's)"},
    {"apfl.alpha", "apfl", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, apfl.alpha_mode), 0.0, 0.0, 0,
     apfl_alpha_values, "", "α_i: fixed | adapted every step"},
    {"apfl.mix", "apfl", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, apfl.mix), 0.0, 0.0, 0, apfl_mix_values, "",
     "what v̄ mixes: parameters (paper) | outputs (FedTorch)"},
    {"apfl.mix_uses_w", "apfl", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, apfl.mix_uses_w), 0.0, 0.0, 0, apfl_mix_w_values,
     "", "the w_i in the mixture: before its step (paper) | after"},
    {"apfl.alpha_rule", "apfl", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, apfl.alpha_rule), 0.0, 0.0, 0, apfl_rule_values,
     "", "adaptive α: the paper's inner product, every step | FedTorch's "
     "alpha_update"},
    {"apfl.variant", "apfl", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, apfl.variant), 0.0, 0.0, 0, apfl_variant_values,
     "", "the local step: v through the mixture v̄ (paper) | PFLlib's: v on "
     "its own loss, α with +0.02 α, v ← (1 − α) w_i + α v at the end"},
    {"apfl.weights", "apfl", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, apfl.weights), 0.0, 0.0, 0, apfl_weights_values,
     "", "server average over U: 1/|U| (paper) | n_i / Σ_U n_j (PFLlib)"},
    {"apfl.alpha_lr", "apfl", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, apfl.alpha_lr), 0.0, 0.0, 0,
     apfl_alpha_lr_values, "",
     "η_α under lr.schedule: decays with η | constant (PFLlib's "
     "alpha_update reads the undecayed learning_rate)"},
    {"alpha", "interp", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, interp.alpha), NAN, 0.0, 0, NULL, "α",
     "the fixed interpolation weight in [0, 1] (needed by interp.alpha = "
     "fixed)"},
    {"interp.grid", "interp", "", PFLREF_PARAM_INT,
     offsetof(pflref_hyper, interp.grid), 10.0, 1.0, 0, NULL, "G",
     "per_client_grid: the grid α_j = j/G, j = 0..G"},
    {"interp.alpha", "interp", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, interp.alpha_mode), 0.0, 0.0, 0,
     interp_alpha_values, "",
     "α_i: one fixed α | per client, the best grid point"},
    {"interp.select", "interp", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, interp.select), 0.0, 0.0, 0,
     interp_select_values, "",
     "where per_client_grid scores α: the validation split | the test set "
     "(Exercise 14.7.2's reading)"},
    {"eps1", "cfl", "cfl", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, cfl.eps1), NAN, 0.0, 0, NULL, "ε₁",
     "CFL: a cluster may split only when its update's norm ‖Δθ_c‖ < ε₁"},
    {"eps2", "cfl", "cfl", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, cfl.eps2), NAN, 0.0, 0, NULL, "ε₂",
     "CFL: a cluster may split only when max_i ‖Δθ_i‖ > ε₂"},
    {"gamma_max", "cfl", "cfl", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, cfl.gamma_max), NAN, 0.0, 0, NULL, "γ_max",
     "CFL: a split needs γ_max < √((1 − α_max^cross)/2); γ_max in [0, 1)"},
    {"cfl.min_cluster_size", "cfl", "", PFLREF_PARAM_INT,
     offsetof(pflref_hyper, cfl.min_cluster_size), 0.0, 0.0, 0, NULL, "",
     "guard: only clusters of at least this many clients split (0 = off; "
     "the authors' notebook: 3)"},
    {"cfl.warmup", "cfl", "", PFLREF_PARAM_INT,
     offsetof(pflref_hyper, cfl.warmup), 0.0, 0.0, 0, NULL, "",
     "guard: no split before round t = this (0-based; 0 = off; the "
     "authors' notebook: 20)"},
    {"cfl.bipartition", "cfl", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, cfl.bipartition), 0.0, 0.0, 0,
     cfl_bipartition_values, "",
     "the split: Alg. 1's optimal bipartition | complete linkage on −α "
     "(the authors' notebook)"},
    {"cfl.cluster_weights", "cfl", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, cfl.cluster_weights), 0.0, 0.0, 0,
     cfl_weights_values, "",
     "cluster update Δθ_c: (1/|c|) Σ Δθ_i (Alg. 5) | Σ (|D_i|/|D_c|) Δθ_i "
     "(Alg. 2)"},
    {"gamma", "ifca", "ifca", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, ifca.gamma), NAN, 0.0, 1, NULL, "γ",
     "IFCA's step size (the server's gradient step; the local steps)"},
    {"ifca.k", "ifca", "ifca", PFLREF_PARAM_INT,
     offsetof(pflref_hyper, ifca.k), NAN, 1.0, 0, NULL, "k",
     "IFCA's number of cluster models (at most the number of clients)"},
    {"ifca.init_shift", "ifca", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, ifca.init_shift), 0.0, 0.0, 0, NULL, "δ",
     "IFCA's initial models θ_j⁰ = w⁰ + j δ 𝟙 + σ ξ_j: the shift δ"},
    {"ifca.init_sd", "ifca", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, ifca.init_sd), 0.0, 0.0, 0, NULL, "σ",
     "IFCA's initial models: the spread σ of the N(0, 1) draws ξ_j"},
    {"ifca.init_seed", "ifca", "", PFLREF_PARAM_INT,
     offsetof(pflref_hyper, ifca.init_seed), 1.0, 1.0, 0, NULL, "",
     "IFCA's initial models: the mt19937 seed of the draws ξ_j"},
    {"ifca.mode", "ifca", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, ifca.mode), 0.0, 0.0, 0, ifca_mode_values, "",
     "IFCA's update: gradient averaging (Option I) | model averaging "
     "(Option II)"},
    IFCA_PARAMS      /* ref/engine/params_ifca.h */
    {"fedfomo.distance", "fedfomo", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedfomo.distance), 0.0, 0.0, 0,
     fedfomo_distance_values, "",
     "FedFomo's distance in w_{i,n}: Euclidean (the paper) | L1 (the "
     "authors' code's default)"},
    {"fedfomo.self", "fedfomo", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedfomo.self), 0.0, 0.0, 0, fedfomo_self_values,
     "", "FedFomo's candidates: the M downloaded models and the client's own "
     "last upload (the authors' code) | the M models only | the M models, "
     "the own upload among them when P ranks it (PFLlib)"},
    {"fedfomo.epsilon0", "fedfomo", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, fedfomo.epsilon0), 0.3, 0.0, 0, NULL, "ε₀",
     "FedFomo's run-time peer choice: exploration ε_t = ε₀ − δ t, 0 ≤ ε₀ ≤ 1 "
     "(NVlabs README 0.3)"},
    {"fedfomo.delta", "fedfomo", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, fedfomo.delta), 0.05, 0.0, 0, NULL, "δ",
     "FedFomo's run-time peer choice: the decay δ of ε_t (NVlabs README "
     "0.05)"},
    {"fedfomo.distance_eps", "fedfomo", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, fedfomo.distance_eps), 0.0, 0.0, 0, NULL, "",
     "FedFomo: added to every distance ‖θ_n − a‖ (0 = the paper; PFLlib "
     "clientfomo.py weight_cal 1e-5)"},
    {"fedfomo.selection", "fedfomo", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedfomo.selection), 0.0, 0.0, 0,
     fedfomo_selection_values, "",
     "FedFomo's run-time peer choice: ε-greedy over P (the paper) | the M "
     "largest P_{i,n} (PFLlib)"},
    {"fedfomo.P_update", "fedfomo", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedfomo.p_update), 0.0, 0.0, 0,
     fedfomo_p_update_values, "",
     "FedFomo's affinity P_{i,n} += w_n (the paper) | r_n / |Σ r_m| (NVlabs) "
     "| r_n (PFLlib)"},
    {"fedfomo.P_init", "fedfomo", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedfomo.p_init), 0.0, 0.0, 0,
     fedfomo_p_init_values, "",
     "FedFomo's initial affinity: 0 | P_{i,i} = 1/10 (NVlabs) | I (PFLlib)"},
    {"fedfomo.no_positive", "fedfomo", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedfomo.no_positive), 0.0, 0.0, 0,
     fedfomo_no_positive_values, "",
     "FedFomo when no candidate improves: restart from the anchor | keep "
     "the current model θ_i (PFLlib)"},
    {"fedfomo.anchor", "fedfomo", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedfomo.anchor), 0.0, 0.0, 0,
     fedfomo_anchor_values, "",
     "FedFomo's anchor: φ_i, the start of the last training (both codes, "
     "PFLlib's old_model) | θ_i, its end"},
    {"fedfomo.M_counts", "fedfomo", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedfomo.m_counts), 0.0, 0.0, 0,
     fedfomo_m_counts_values, "",
     "FedFomo's schedule.peers = M counts: the other clients | every "
     "candidate, the own upload included"},
    {"fedfomo.val_loss", "fedfomo", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedfomo.val_loss), 0.0, 0.0, 0,
     fedfomo_val_loss_values, "",
     "FedFomo's L_i: the mean over the validation samples | the mean of "
     "the batch means (NVlabs train.py:258)"},
    {"fedfomo.val_batch", "fedfomo", "", PFLREF_PARAM_INT,
     offsetof(pflref_hyper, fedfomo.val_batch), 0.0, 0.0, 0, NULL, "",
     "FedFomo's validation batch size under val_loss = batch_mean (0: the "
     "whole split, one batch)"},
    {"fedfomo.val_mode", "fedfomo", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedfomo.val_mode), 0.0, 0.0, 0,
     fedfomo_val_mode_values, "",
     "FedFomo's L_i passes: training mode, BN on the batch statistics and "
     "a dropout mask per pass (PFLlib clientfomo.py:139-151) | evaluation "
     "mode, BN on r_mu, r_v and no dropout (NVlabs federation.py:163-166, "
     "train.py:81)"},
    {"fedbn.weights", "fedbn", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedbn.weights), 0.0, 0.0, 0,
     fedbn_weights_values, "",
     "FedBN's averaging weights: 1/m (the paper's box and code) | n_k/Σ n_j "
     "(PFLlib)"},
    {"fedbn.bn", "fedbn", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedbn.bn), 0.0, 0.0, 0, fedbn_bn_values, "",
     "BN parameters and running statistics: kept on the client (FedBN) | "
     "averaged like the rest (the FedAvg baseline, the code's --mode fedavg)"},
    {"fedbn.running_var", "fedbn", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedbn.running_var), 0.0, 0.0, 0,
     fedbn_running_var_values, "",
     "the variance fed to r_v: nb/(nb − 1) s²_B (PyTorch, the authors' "
     "code) | s²_B"},
    /* pFedHN (arXiv 2103.04628v1, Alg. 1; notes-lora-pfedhn.md §4) */
    {"eta", "pfedhn", "pfedhn", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, eta), NAN, 0.0, 1, NULL, "η",
     "pFedHN's client step size (Alg. 1 l. 8, the K local steps)"},
    {"alpha", "pfedhn", "pfedhn", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, pfedhn.alpha), NAN, 0.0, 1, NULL, "α",
     "pFedHN's hypernetwork step size (Alg. 1 l. 10: φ)"},
    {"pfedhn.alpha_v", "pfedhn", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, pfedhn.alpha_v), NAN, 0.0, 1, NULL, "α_v",
     "pFedHN's embedding step size (Alg. 1 l. 11: v_i); unset: α, the "
     "box's one rate (the code's --embed-lr, trainer.py:95)"},
    {"pfedhn.hn_bias", "pfedhn", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, pfedhn.bias), 0.0, 0.0, 0, pfedhn_bias_values,
     "", "pFedHN's linear hypernetwork: θ_i = W_h v_i + b_h | θ_i = W_h v_i "
     "(the paper's linear analysis form)"},
    {"pfedhn.outer_opt", "pfedhn", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, pfedhn.outer_opt), 0.0, 0.0, 0, pfedhn_opt_values,
     "", "pFedHN's step of φ and the embeddings: plain SGD (the box) | torch "
     "SGD with momentum and weight decay on every hypernetwork entry, every "
     "embedding included (AvivSham/pFedHN trainer.py:96-104)"},
    {"pfedhn.inner_opt", "pfedhn", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, pfedhn.inner_opt), 0.0, 0.0, 0, pfedhn_opt_values,
     "", "pFedHN's local steps: plain SGD (the box) | torch SGD with momentum "
     "and weight decay, a new optimizer every round (trainer.py:130-132)"},
    {"pfedhn.clip", "pfedhn", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, pfedhn.clip), 0.0, 0.0, 0, pfedhn_clip_values,
     "", "pFedHN's gradients: unclipped (the box) | clip_grad_norm_ at "
     "pfedhn.clip_norm, the local and the hypernetwork gradient "
     "(trainer.py:160, 180)"},
    {"pfedhn.outer_momentum", "pfedhn", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, pfedhn.outer_momentum), 0.9, 0.0, 0, NULL, "",
     "pfedhn.outer_opt = sgd_momentum_wd: the momentum (the code's 0.9)"},
    {"pfedhn.outer_wd", "pfedhn", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, pfedhn.outer_wd), 1e-3, 0.0, 0, NULL, "",
     "pfedhn.outer_opt = sgd_momentum_wd: the weight decay (the code's 1e-3)"},
    {"pfedhn.inner_momentum", "pfedhn", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, pfedhn.inner_momentum), 0.9, 0.0, 0, NULL, "",
     "pfedhn.inner_opt = sgd_momentum_wd: the momentum (the code's 0.9)"},
    {"pfedhn.inner_wd", "pfedhn", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, pfedhn.inner_wd), 5e-5, 0.0, 0, NULL, "",
     "pfedhn.inner_opt = sgd_momentum_wd: the weight decay (the code's 5e-5)"},
    {"pfedhn.clip_norm", "pfedhn", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, pfedhn.clip_norm), 50.0, 0.0, 1, NULL, "",
     "pfedhn.clip = norm: the bound on the gradient's Euclidean norm (the "
     "code's 50)"},
    /* low-rank adapters (ref/algorithms/lora.c) */
    {"lora.r", "lora", "lora", PFLREF_PARAM_INT,
     offsetof(pflref_hyper, lora.r), NAN, 1.0, 0, NULL, "r",
     "the adapters' rank r, 1 ≤ r ≤ min(k, d) of every target (HetLoRA: "
     "r_max, the global modules' rank)"},
    {"lora.alpha", "lora", "lora", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, lora.alpha), NAN, 0.0, 1, NULL, "α",
     "the adapters' scale s = α/r in W = W₀ + s B A (HetLoRA: read only "
     "with hetlora.scaling = alpha)"},
    {"lora.method", "lora", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, lora.method), 0.0, 0.0, 0, lora_method_values,
     "", "which blocks are trained and averaged: personal adapters over a "
     "frozen W₀ | FFA-LoRA (A frozen, B averaged) | naive FedAvg of A and B "
     "| HetLoRA"},
    {"lora.targets", "lora", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, lora.targets), 0.0, 0.0, 0, lora_targets_values,
     "", "the adapted blocks: every weight matrix (loralib on every Linear) "
     "| the output layer's only | the input layer's only"},
    {"lora.weights", "lora", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, lora.weights), 0.0, 0.0, 0, lora_weights_values,
     "", "ffa and fedavg: averaging weights n_k/Σ n_j (FedAvg) | 1/m"},
    {"hetlora.lambda", "lora", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, lora.lambda), 0.0, 0.0, 0, NULL, "λ",
     "HetLoRA's self-pruning weight λ ‖B_tail‖ ‖A_tail‖ (0: no regulariser "
     "and no pruning)"},
    {"hetlora.gamma", "lora", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, lora.gamma), 0.5, 0.0, 1, NULL, "γ",
     "HetLoRA's rank decay: the tail is ranks ⌊γ r_k⌋+1..r_k, pruning sets "
     "r_k ← ⌊γ r_k⌋ (γ < 1)"},
    {"hetlora.r_min", "lora", "", PFLREF_PARAM_INT,
     offsetof(pflref_hyper, lora.r_min), 1.0, 1.0, 0, NULL, "r_min",
     "HetLoRA: no regulariser and no pruning when ⌊γ r_k⌋ < r_min"},
    {"hetlora.weights", "lora", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, lora.het_weights), 0.0, 0.0, 0,
     hetlora_weights_values, "",
     "HetLoRA's aggregation weights: ‖B_k A_k‖_F / Σ_j ‖B_j A_j‖_F (sparsity) "
     "| 1/m (plain zero-padding) | n_k/Σ n_j"},
    {"hetlora.scaling", "lora", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, lora.scaling), 0.0, 0.0, 0,
     hetlora_scaling_values, "",
     "HetLoRA's ΔW: B A (the paper writes W₀ + B A) | (α/r_max) B A "
     "(loralib's scaling)"},
    {"lr.schedule", LR_ALGORITHMS, "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, lr.schedule), 0.0, 0.0, 0, lr_schedule_values,
     "", "step sizes across rounds: constant (the papers) | × γ^t in round t "
     "(PFLlib -ld) | × γ^⌊t/lr.step_rounds⌋"},
    {"lr.gamma", LR_ALGORITHMS, "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, lr.gamma), 1.0, 0.0, 1, NULL, "γ",
     "the decay factor of lr.schedule (PFLlib -ldg)"},
    {"lr.step_rounds", LR_ALGORITHMS, "", PFLREF_PARAM_INT,
     offsetof(pflref_hyper, lr.step_rounds), 1.0, 1.0, 0, NULL, "",
     "lr.schedule = step: the rounds between two decays"},
    {"lr.scope", LR_ALGORITHMS, "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, lr.scope), 0.0, 0.0, 0, lr_scope_values, "",
     "which step sizes decay: all of the round's | only pFedMe's η_p "
     "(PFLlib) | all but Per-FedAvg's β (PFLlib clientperavg.py: "
     "step(beta=self.beta), a float set once in __init__)"},
    {"lr.count", LR_COUNT_ALGORITHMS, "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, lr.count), 0.0, 0.0, 0, lr_count_values, "",
     "what the decay's exponent counts: the round t | the client's own "
     "train() calls before (PFLlib: its scheduler steps when it trains)"},
    /* the client optimizer (ref/engine/optim.c, docs/optimizers.md) */
    {"opt.method", OPT_ALGORITHMS, "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, opt.method), 0.0, 0.0, 0, opt_method_values, "",
     "the client optimizer: SGD (plain by default; torch.optim.SGD) | "
     "torch.optim.Adam | torch.optim.AdamW"},
    {"opt.momentum", OPT_ALGORITHMS, "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, opt.momentum), 0.0, 0.0, 0, NULL, "μ",
     "SGD's momentum (0 = plain SGD; torch.optim.SGD momentum)"},
    {"opt.dampening", OPT_ALGORITHMS, "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, opt.dampening), 0.0, 0.0, 0, NULL, "τ",
     "SGD's dampening: b ← μ b + (1 − τ) d (torch.optim.SGD dampening)"},
    {"opt.weight_decay", OPT_ALGORITHMS, "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, opt.weight_decay), 0.0, 0.0, 0, NULL, "λ",
     "weight decay (0 = none; torch's weight_decay)"},
    {"opt.beta1", OPT_ALGORITHMS, "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, opt.beta1), 0.9, 0.0, 0, NULL, "β₁",
     "Adam's first-moment decay, in [0, 1) (torch betas[0] = 0.9)"},
    {"opt.beta2", OPT_ALGORITHMS, "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, opt.beta2), 0.999, 0.0, 0, NULL, "β₂",
     "Adam's second-moment decay, in [0, 1) (torch betas[1] = 0.999)"},
    {"opt.eps", OPT_ALGORITHMS, "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, opt.eps), 1e-8, 0.0, 1, NULL, "ε",
     "Adam's ε in the denominator √v / √(1 − β₂^t) + ε (torch 1e-8)"},
    {"opt.clip_norm", OPT_ALGORITHMS, "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, opt.clip_norm), NAN, 0.0, 1, NULL, "c",
     "opt.clip = norm: the bound on the moving blocks' gradient norm "
     "(clip_grad_norm_'s max_norm; required with clipping)"},
    {"opt.momentum_form", OPT_ALGORITHMS, "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, opt.momentum_form), 0.0, 0.0, 0,
     opt_momentum_form_values, "",
     "SGD momentum: b ← μ b + (1 − τ) d, θ ← θ − η b (torch.optim.SGD) | "
     "v ← μ v − η d, θ ← θ + v (Polyak, Sutskever et al.; differs when η "
     "changes)"},
    {"opt.nesterov", OPT_ALGORITHMS, "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, opt.nesterov), 0.0, 0.0, 0, opt_nesterov_values,
     "", "SGD's Nesterov step: off | d ← d + μ b (torch.optim.SGD nesterov; "
     "needs μ > 0 and τ = 0)"},
    {"opt.weight_decay_form", OPT_ALGORITHMS, "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, opt.decay_form), 0.0, 0.0, 0,
     opt_decay_form_values, "",
     "weight decay of sgd and adam: d ← d + λθ (torch SGD, Adam) | θ ← "
     "θ(1 − ηλ) before the step (AdamW's form; adamw is always decoupled)"},
    {"opt.decay_scope", OPT_ALGORITHMS, "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, opt.decay_scope), 0.0, 0.0, 0,
     opt_decay_scope_values, "",
     "the blocks weight decay applies to: every moving block | not biases "
     "nor batch-norm blocks (the no-decay parameter group) | the split's "
     "shared blocks | its personal blocks"},
    {"opt.clip", OPT_ALGORITHMS, "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, opt.clip), 0.0, 0.0, 0, opt_clip_values, "",
     "gradient clipping: off | d ← d · min(1, c/(‖d‖₂ + 10⁻⁶)) over the "
     "moving blocks, before weight decay (torch clip_grad_norm_ between "
     "backward() and step())"},
    {"opt.state", OPT_ALGORITHMS, "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, opt.state), 0.0, 0.0, 0, opt_state_values, "",
     "the optimizer state's lifetime: a new optimizer per client update | "
     "one per client kept across rounds (PFLlib clientbase.py) | one "
     "carried from client to client in training order (a simulation "
     "defect)"},
    /* Batch normalisation's running statistics (ref/engine/sgd.c,
     * pflref_bn_running_move; docs/formats.md) */
    {"bn.running", BN_ALGORITHMS, "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, bn.running), 0.0, 0.0, 0, bn_running_values, "",
     "r_μ, r_v in training: moved after each local step's gradient pass "
     "(PyTorch's train(), torch.nn.BatchNorm1d/2d) | left as they are, the "
     "forward still on the batch statistics (torch: momentum = 0)"},
    {"bn.running_var", BN_ALGORITHMS, "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, bn.running_var), 0.0, 0.0, 0,
     bn_running_var_values, "",
     "the variance fed to r_v: M/(M − 1) s²_B over the M values a channel "
     "normalises (PyTorch) | s²_B (fedbn.running_var = biased is the same "
     "switch)"},
    BN_AGGREGATE_PARAMS
    SCAFFOLD_BN_PARAMS
    /* FedDyn (arXiv 2111.04263v2, Alg. 1; ref/algorithms/feddyn.c) */
    {"feddyn.alpha", "feddyn", "feddyn", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, feddyn.alpha), NAN, 0.0, 1, NULL, "α",
     "FedDyn's dynamic regulariser weight α > 0 (ll. 5, 6, 10; l. 11: 1/α)"},
    {"feddyn.alpha_k", "feddyn", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, feddyn.alpha_k), 0.0, 0.0, 0, dyn_alpha_k, "",
     "ll. 5-6's α: α | α/(n_k m/Σ n_j) (alpemreacar utils_methods.py:387)"},
    {"feddyn.prox", "feddyn", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, feddyn.prox), 0.0, 0.0, 0, dyn_prox, "",
     "l. 5's (α/2)‖θ − θ^{t−1}‖² | ‖·‖₂ not squared (PFLlib clientdyn.py:45)"},
    {"feddyn.h_sum", "feddyn", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, feddyn.h_sum), 0.0, 0.0, 0, dyn_h_sum, "",
     "l. 10's Σ_{k∈P_t}(θ_k^t − θ^{t−1}) | (Σ θ_k^t) − θ^{t−1} as printed"},
    {"scaffold.eta_g", "scaffold", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, scaffold.eta_g), 1.0, 0.0, 1, NULL, "η_g",
     "SCAFFOLD's global step size: x ← x + η_g Δx (Alg. 1 l. 17)"},
    {"scaffold.option", "scaffold", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, scaffold.option), 0.0, 0.0, 0,
     scaffold_option_values, "",
     "the control variate c_i⁺ (Alg. 1 l. 12): (ii) c_i − c + (x − y_i)/"
     "(K η_l) | (i) ∇f_i(x) over the client's whole training set"},
    {"scaffold.c_lr", "scaffold", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, scaffold.c_lr), 0.0, 0.0, 0,
     scaffold_c_lr_values, "",
     "option II's η_l under lr.*: the steps' η | the undecayed η (PFLlib)"},
    MOON_PARAMS      /* ref/engine/params_moon.h */
    /* FedProx (ref/algorithms/fedprox.c, docs/algorithms/fedprox.md) */
    {"fedprox.mu", "fedprox", "fedprox", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, fedprox.mu), NAN, 0.0, 0, NULL, "μ",
     "FedProx's proximal weight in h_k(w; w^t) = F_k(w) + (μ/2)‖w − w^t‖² "
     "(0: FedAvg's local solve)"},
    {"fedprox.sampling", "fedprox", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedprox.sampling), 0.0, 0.0, 0,
     fedprox_sampling_values, "",
     "S_t and the server's weights: K draws with replacement, P(k) = n_k/n, "
     "simple average over the draws (Alg. 2) | the schedule's sample "
     "without replacement, weights n_k/Σ_{S_t} n_j (the authors' code, "
     "PFLlib)"},
    FEDRECON_PARAMS  /* ref/engine/params_fedrecon.h */
    /* FedAMP (arXiv 2007.03797v5, Alg. 1; ref/algorithms/fedamp.c) */
    {"eta", "fedamp", "fedamp", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, eta), NAN, 0.0, 1, NULL, "η",
     "FedAMP's local step size (the steps on F_i(w) + (λ/(2α_k))‖w − u_i^k‖²)"},
    {"fedamp.alpha_k", "fedamp", "fedamp", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, fedamp.alpha_k), NAN, 0.0, 1, NULL, "α_k",
     "FedAMP's message-passing step: ξ_{i,j} = α_k A'(‖w_i − w_j‖²), and "
     "the proximal weight λ/α_k (a constant α_k, as in the experiments)"},
    {"fedamp.lambda", "fedamp", "fedamp", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, fedamp.lambda), NAN, 0.0, 0, NULL, "λ",
     "FedAMP's weight of the attention term: the local objective F_i(w) + "
     "(λ/(2α_k))‖w − u_i^k‖² (0: local training)"},
    {"fedamp.sigma", "fedamp", "fedamp", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, fedamp.sigma), NAN, 0.0, 1, NULL, "σ",
     "FedAMP's scale of A(x) = 1 − e^{−x/σ}: A'(x) = e^{−x/σ}/σ"},
    {"fedamp.peers", "fedamp", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedamp.peers), 0.0, 0.0, 0, fedamp_peers_values,
     "", "the w_j in u_i^k: every client's latest (the paper) | the previous "
     "round's participants' (PFLlib serveramp.py send_models)"},
    {"fedamp.start", "fedamp", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedamp.start), 0.0, 0.0, 0, fedamp_start_values,
     "", "the local solve's start: u_i^k | w_i^{k−1} (PFLlib clientamp.py "
     "train())"},
    {"fedamp.prox", "fedamp", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedamp.prox), 0.0, 0.0, 0, fedamp_prox_values,
     "", "the attention term's gradient (λ/α_k)(w − u_i^k) | none: PFLlib "
     "clientamp.py train() builds the term from p.data (plain SGD)"},
    /* FedProto (arXiv 2105.00243, Alg. 1; ref/algorithms/fedproto.c) */
    {"eta", "fedproto", "fedproto", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, eta), NAN, 0.0, 1, NULL, "η",
     "FedProto's local step size (LocalUpdate l. 5)"},
    {"fedproto.lambda", "fedproto", "fedproto", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, fedproto.lambda), NAN, 0.0, 0, NULL, "λ",
     "FedProto's weight of the prototype distance R in the local loss "
     "(Eq. 6)"},
    {"fedproto.distance", "fedproto", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedproto.distance), 0.0, 0.0, 0,
     fedproto_distance_values, "",
     "R(f(x), C̄^(y)): ‖f − C̄‖² | ‖f − C̄‖²/h, torch MSELoss over the "
     "batch (yuetan031/FedProto lib/update.py update_weights_het; PFLlib "
     "clientproto.py train)"},
    {"fedproto.client_protos", "fedproto", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedproto.client_protos), 0.0, 0.0, 0,
     fedproto_protos_values, "",
     "C_i^(j): the mean of f_i(x) over D_{i,j} with the trained model "
     "(Eq. 4) | the mean of the features of every local step's batch, "
     "before its step (update.py update_weights_het + utils.py agg_func; "
     "PFLlib clientproto.py train)"},
    {"fedproto.weights", "fedproto", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedproto.weights), 0.0, 0.0, 0,
     fedproto_weights_values, "",
     "C̄^(j): Σ_{i∈N_j} (|D_{i,j}|/N_j) C_i^(j) (Eq. 5) | the plain mean "
     "over N_j (utils.py proto_aggregation; PFLlib serverproto.py "
     "proto_aggregation)"},
    /* FedFomo's equality up to rounding (ref/algorithms/fedfomo.c, l. 3) */
    {"fedfomo.equal_rtol", "fedfomo", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, fedfomo.equal_rtol), 0x1p-50, 0.0, 0, NULL, "τ",
     "FedFomo: θ_n counts as the anchor (r_n = 0) when every |θ_n,p − a_p| "
     "≤ τ max(|θ_n,p|, |a_p|); 2⁻⁵⁰ = 8 unit roundoffs covers l. 5's two "
     "roundings (0: exact equality; at most 1e-6)"},
    FEDROD_PARAMS /* ref/engine/params_fedrod.h */
    APPLE_PARAMS  /* ref/engine/params_apple.h */
    FEDALA_PARAMS    /* ref/engine/params_fedala.h */
    FEDPAC_PARAMS    /* ref/engine/params_fedpac.h */
};


const pflref_param *pflref_params(size_t *count)
{
    *count = sizeof params / sizeof params[0];
    return params;
}
