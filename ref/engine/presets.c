/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/presets.c: the named presets, each a set of switch values
 * that reproduces one implementation (an authors' repository, a library),
 * with its source.  "paper" is every algorithm's default and sets nothing;
 * the switches a preset names are those of the registry in params.c, set
 * through the same checked setters.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref/algorithm.h"

static const pflref_preset presets[] = {
    {"pfedme", "official",
     "pfedme.theta_start=warm pfedme.mu=0.001 pfedme.weights=samples "
     "pfedme.train=all pfedme.personal_eval=local_w", NULL,
     "CharlieDinh/pFedMe (shared/spec notes §2(f), run and read)"},
    {"pfedme", "pfllib",
     "pfedme.theta_start=warm pfedme.mu=0.001 pfedme.weights=samples "
     "pfedme.train=sampled pfedme.personal_eval=global lr.scope=eta_p "
     "lr.count=trainings bn.aggregate=parameters_only", NULL,
     "TsingZ0/PFLlib, clientpFedMe.py and fedoptimizer.py (pFedMeOptimizer's "
     "mu = 0.001 is never overridden; shared/spec notes §2(e), §7); "
     "d832e76f6a23 clientpFedMe.py:74-77 set_parameters, serverbase.py:"
     "138-150 and serverpFedMe.py:88-91 move parameters() only "
     "(bn.aggregate)"},
    {"ditto", "official",
     "ditto.order=interleaved_shared_batch ditto.prox=squared "
     "ditto.prox_ref=round_start ditto.weights=uniform", NULL,
     "litian96/ditto, TensorFlow (shared/spec notes §3(c))"},
    {"ditto", "pfllib",
     "ditto.order=personal_first ditto.prox=squared "
     "ditto.prox_ref=round_start ditto.weights=samples ditto.batches=separate "
     "lr.count=trainings bn.aggregate=parameters_only", NULL,
     "TsingZ0/PFLlib d832e76f6a23: clientditto.py (ptrain() over -pls epochs "
     "of its own loader, then train() over -ls), serverditto.py's n_i "
     "weights, send_models and aggregate_parameters (clientbase.py:67-69, "
     "serverbase.py:138-150: parameters() only, each client's global copy "
     "keeps its running statistics) (shared/spec notes §3(f); "
     "notes-pfllib-as-run §2.3)"},
    /* req: fedalt.preset.fedrep */
    {"fedalt", "fedrep",
     "pfl.state=stateful pfl.weights=uniform pfl.finetune=personal", "head",
     "Collins et al., ICML 2021, Alg. 1 (head first, then the "
     "representation; server (1/rn) Σ φ_i); shared/spec notes §4.1"},
    /* req: fedsim.preset.fedper */
    {"fedsim", "fedper",
     "pfl.state=stateful pfl.weights=samples pfl.finetune=personal", "head",
     "Arivazhagan et al. 2019 (joint steps, base layers averaged n_j/n); "
     "shared/spec notes §4.2"},
    /* req: fedsim.preset.lg_fedavg */
    {"fedsim", "lg_fedavg",
     "pfl.state=stateful pfl.weights=samples pfl.finetune=personal", "input",
     "Liang et al. 2020 (local representation, global top layers; joint "
     "steps, FedAvg mean); shared/spec notes §4.3"},
    /* req: fedsim.preset.fedbabu */
    {"fedsim", "fedbabu",
     "gamma_v=0 pfl.state=stateful pfl.weights=samples pfl.finetune=full",
     "head",
     "Oh, Kim, Yun, ICLR 2022 (body-only training, head frozen at its "
     "initial value and shared, then fine-tuning of the whole model); "
     "shared/spec notes §4.4 B4"},
    {"perfedavg", "pfedme_repo",
     "perfedavg.variant=fo perfedavg.weights=samples "
     "perfedavg.eval=alpha_then_beta", NULL,
     "CharlieDinh/pFedMe caf24b1f954d: UserPerAvg.train (FO, w restored "
     "before the β step since 2021-03-20), the shared server's n_i-weighted "
     "mean, train_one_step (α then β) before evaluation, which the repository "
     "takes on test batches; shared/spec notes §4(d)-(f)"},
    {"apfl", "fedtorch",
     "apfl.mix=output apfl.mix_uses_w=new apfl.alpha_rule=fedtorch", NULL,
     "MLOPTPSU/FedTorch ab8068dbc968 (APFL's training loop, inference_personal, "
     "alpha_update; apfl.alpha is left to the spec, as FedTorch's "
     "--fed_adaptive_alpha; shared/spec notes §6(f) items 1-3)"},
    {"fedavg", "pfllib",
     "fedavg.weights=samples lr.count=trainings bn.aggregate=parameters_only",
     NULL,
     "TsingZ0/PFLlib d832e76f6a23: clientavg.py train(), serverbase.py "
     "receive_models (weights n_i / Σ_U n_j), aggregate_parameters and "
     "clientbase.py set_parameters (parameters() only: running statistics "
     "kept per client, the global's the first uploader's); "
     "notes-pfllib-as-run §2.3"},
    {"local", "pfllib", "lr.count=trainings", NULL,
     "TsingZ0/PFLlib d832e76f6a23: serverlocal.py (send_models never "
     "called, no aggregation) with clientavg.py; notes-pfllib-as-run §2.3"},
    {"perfedavg", "pfllib",
     "perfedavg.variant=fo perfedavg.weights=samples "
     "perfedavg.eval=one_alpha_step perfedavg.calls=two lr.count=trainings "
     "lr.scope=no_beta perfedavg.eval_lr=decayed perfedavg.opt_steps=both "
     "bn.aggregate=parameters_only",
     NULL,
     "TsingZ0/PFLlib d832e76f6a23: clientperavg.py (first order, "
     "train_one_step's one α step), PerAvgOptimizer (one object stepping "
     "the α and the β step, :51 and :72), serverbase.py's n_i "
     "weights; α = β = η is left to the spec; notes-pfllib-as-run §2.3; "
     "serverperavg.py:26, :46 with clientbase.py:67-69 and "
     "serverbase.py:138-150 (parameters() only: bn.aggregate)"},
    {"fedfomo", "official",
     "fedfomo.distance=l1 fedfomo.self=included fedfomo.P_update=signed_abs_sum "
     "fedfomo.P_init=own_0.1 fedfomo.M_counts=total fedfomo.epsilon0=0.3 "
     "fedfomo.delta=0.05 fedfomo.val_mode=eval", NULL,
     "NVlabs/FedFomo @ fe04f66: federated/args.py:168,180 (l1, own weight "
     "0.1), client.py:285-288,320,347, federation.py:163-166 (eval() before "
     "the validation losses; federated/train.py:81), 396-418, README "
     "(ε₀ 0.3, δ 0.05); shared/spec notes-fedbn-fedfomo.md §2.8"},
    /* req: fedfomo.preset.pfllib */
    {"fedfomo", "pfllib",
     "fedfomo.distance=l2 fedfomo.distance_eps=1e-5 fedfomo.selection=topM "
     "fedfomo.P_update=raw fedfomo.P_init=identity fedfomo.anchor=pre_train "
     "fedfomo.no_positive=keep_current fedfomo.self=ranked "
     "fedfomo.val_loss=batch_mean lr.count=trainings "
     "bn.aggregate=parameters_only", NULL,
     "TsingZ0/PFLlib d832e76f6a23: clientfomo.py train() (old_model cloned "
     "right after aggregate_parameters: the anchor is the model local "
     "training starts from), weight_cal (norm + 1e-5), recalculate_loss "
     "(L / len(val_loader): the mean of batch means of -b samples, "
     "fedfomo.val_batch), weight_scale (no positive weight keeps the "
     "model); serverfomo.py (P = I, send_models: topk of the whole row "
     "P[client.id], own entry included; receive_models: P += raw weights); "
     "clientbase.py's ExponentialLR stepped per train() under -ld; "
     "clientfomo.py:106-109 (the distance over parameters()) and :153-165 "
     "(the mixture of parameters() only: each client keeps its running "
     "statistics, bn.aggregate)"},
    {"apfl", "pfllib",
     "apfl.variant=pfllib apfl.weights=samples apfl.alpha=adaptive "
     "lr.count=trainings apfl.alpha_lr=constant bn.aggregate=parameters_only",
     NULL,
     "TsingZ0/PFLlib d832e76f6a23: clientapfl.py train() and alpha_update "
     "(whose step reads self.learning_rate, undecayed under -ld), "
     "serverbase.py's n_i weights (the initial α is the spec's, as -al); "
     "notes-pfllib-as-run §2.3; clientbase.py:67-69 set_parameters, "
     "clientapfl.py:58-59 and serverbase.py:138-150 move parameters() only "
     "(bn.aggregate)"},
    {"fedalt", "fedrep_pfllib",
     "pfl.state=stateful pfl.weights=samples pfl.finetune=personal "
     "lr.count=trainings bn.aggregate=parameters_only", "head",
     "TsingZ0/PFLlib d832e76f6a23: clientrep.py (head epochs -pls first, "
     "then the base; one η), serverrep.py's n_i weights; "
     "notes-pfllib-as-run §2.3; clientrep.py:86-88 set_parameters and "
     "serverbase.py:138-150 move parameters() only (bn.aggregate)"},
    {"fedsim", "fedper_pfllib",
     "pfl.state=stateful pfl.weights=samples pfl.finetune=personal "
     "lr.count=trainings bn.aggregate=parameters_only", "head",
     "TsingZ0/PFLlib d832e76f6a23: clientper.py (joint steps), serverper.py "
     "(base averaged n_i / Σ_U n_j); notes-pfllib-as-run §2.3; "
     "clientper.py:45-47 set_parameters and serverbase.py:138-150 move "
     "parameters() only (bn.aggregate)"},
    {"fedsim", "lg_fedavg_pfllib",
     "pfl.state=stateful pfl.weights=samples pfl.finetune=personal "
     "lr.count=trainings bn.aggregate=parameters_only", "input",
     "TsingZ0/PFLlib d832e76f6a23: clientlg.py (joint steps; set_parameters "
     "copies the head only), serverlg.py (head averaged n_i / Σ_U n_j); "
     "clientlg.py:45-47 set_parameters and serverbase.py:138-150 move "
     "parameters() only (bn.aggregate)"},
    {"fedsim", "fedbabu_pfllib",
     "gamma_v=0 pfl.state=stateful pfl.weights=samples pfl.finetune=full "
     "lr.count=trainings bn.aggregate=parameters_only "
     "pfl.finetune_start=last_local "
     "pfl.finetune_lr=decayed",
     "head",
     "TsingZ0/PFLlib d832e76f6a23: clientbabu.py (head requires_grad = "
     "False; fine_tune of base and head with the client's own optimizer, "
     "whose lr its -ld scheduler decayed), serverbabu.py (base averaged n_i "
     "/ Σ_U n_j; send_models to every client at each round's start; after "
     "the last round every client fine-tunes the model it holds, no final "
     "send_models); clientbabu.py:51-53 set_parameters and "
     "serverbase.py:138-150 move parameters() only (bn.aggregate)"},
    {"pfedhn", "official",
     "pfedhn.outer_opt=sgd_momentum_wd pfedhn.inner_opt=sgd_momentum_wd "
     "pfedhn.clip=norm", NULL,
     "AvivSham/pFedHN @ 1bc0549, experiments/pfedhn/trainer.py:96-104, "
     "130-132, 160, 180 (shared/spec notes-lora-pfedhn.md §4.3 H1-H4)"},
    /* req: feddyn.preset.official */
    {"feddyn", "official", "feddyn.alpha_k=size_scaled opt.weight_decay=0.001",
     NULL,
     "alpemreacar/FedDyn 48a19fa: utils_methods.py:296-297, 387 (alpha_coef "
     "/ weight_list[clnt]), utils_general.py:190 (SGD weight_decay = "
     "alpha_coef + weight_decay), example_cifar_10.py:40 (weight_decay = "
     "1e-3); its clip_grad_norm_ at 10 (utils_general.py:224) is not "
     "reproduced (docs/algorithms/feddyn.md)"},
    /* req: feddyn.preset.pfllib */
    {"feddyn", "pfllib",
     "feddyn.prox=norm_half lr.count=trainings bn.aggregate=parameters_only",
     NULL,
     "TsingZ0/PFLlib d832e76f6a23: clientdyn.py:45 (alpha/2 * "
     "torch.norm(v1 - global, 2), not squared), :46, :54, :58-59 (each "
     "client's ExponentialLR stepped after its train()); serverdyn.py:80, "
     "93, 104, 107 (the box's h and θ with the differences); "
     "clientdyn.py:65-67 set_parameters and serverdyn.py:85-93 move "
     "parameters() only (bn.aggregate)"},
    {"scaffold", "pfllib",
     "scaffold.option=II scaffold.c_lr=initial lr.count=trainings "
     "bn.aggregate=parameters_only scaffold.bn_global=previous", NULL,
     "TsingZ0/PFLlib d832e76f6a23: clientscaffold.py (option II only, "
     "update_yc's 1/num_batches/max_local_epochs/self.learning_rate at :73, "
     "its ExponentialLR stepped per train() at :55-56), "
     "fedoptimizer.py:30 (p ← p − lr (grad + c − c_i)), "
     "serverscaffold.py:126-131 (Δy / num_join_clients · η_g, Δc / N); "
     "clientscaffold.py:62-64 set_parameters and serverscaffold.py:124-129 "
     "(a deepcopy of the previous global plus the updates of parameters() "
     "only: the global's running statistics stay w⁰'s, bn.aggregate)"},
    {"moon", "official", "opt.momentum=0.9 opt.weight_decay=0.00001", NULL,
     "QinbinLi/MOON 8fcba3c main.py:267-269 (torch.optim.SGD, momentum "
     "0.9, weight_decay --reg = 1e-5, a new optimizer per local "
     "training); its empty model pool in round 0 (466-476, 537-543) gives "
     "the paper's numbers (docs/algorithms/moon.md); with batch "
     "normalisation: global_model.eval() (486) and the previous nets' "
     "eval() (540, 547) give z_glob, z_prev on running statistics, which "
     "the state_dict average carries (508-514, 523): moon.passes = eval "
     "and bn.aggregate = average, the defaults"},
    {"moon", "pfllib",
     "lr.count=trainings moon.passes=train bn.aggregate=parameters_only",
     NULL,
     "TsingZ0/PFLlib d832e76f6a23: clientmoon.py:39-50 (model.base as R_w, "
     "the batch mean of l_con: the paper's l), 17 and 53 (old_model: the "
     "initial model, then the last local one), 55-56 (each client's -ld "
     "scheduler steps when it trains); serverbase.py's n_i weights; with "
     "batch normalisation: rep_old, rep_global of models left in train() "
     "mode (43-44; 17, 53 deepcopy a train()-mode model, serverbase.py:141 "
     "too), set_parameters copying parameters() only (62-66)"},
    {"fedprox", "official", "fedprox.sampling=uniform_weighted", NULL,
     "litian96/FedProx d2a4501f319f: flearn/trainers/fedbase.py:112 "
     "select_clients (np.random.choice without replacement, uniform, seed = "
     "round) and :121-123 aggregate (weights n_k / Σ n_j over the "
     "selected); fedprox.py:68-71 keeps the stragglers' partial solutions"},
    {"fedprox", "pfllib", "fedprox.sampling=uniform_weighted "
     "lr.count=trainings bn.aggregate=parameters_only", NULL,
     "TsingZ0/PFLlib d832e76f6a23: serverbase.py:99 select_clients "
     "(uniform without replacement) and :136 receive_models (n_k / Σ n_j), "
     "clientprox.py:21,55 (each client's ExponentialLR stepped after its "
     "train()), fedoptimizer.py:74 PerturbedGradientDescent (d = ∇f + "
     "μ(w − w^t), plain step), clientprox.py:61-64 set_parameters and "
     "serverbase.py:138-150 (parameters() only: bn.aggregate)"},
    /* req: fedamp.preset.pfllib */
    {"fedamp", "pfllib",
     "fedamp.peers=previous fedamp.start=own fedamp.prox=detached "
     "lr.count=trainings bn.aggregate=parameters_only", NULL,
     "TsingZ0/PFLlib d832e76f6a23: system/flcore/servers/serveramp.py:72-103 "
     "send_models (ξ over self.uploaded_models, the previous round's "
     "receive_models; nothing sent before the first upload), :108-109 "
     "(A'(x) = e^{−x/σ}/σ); clients/clientamp.py:22 (trains self.model, "
     "w_i^{k−1}), :40-42 (the term 0.5 λ/α ‖w − u‖ built from p.data: no "
     "gradient), :57-59 set_parameters (u_i = Σ_j ξ_{i,j} w_j + ξ_{i,i} "
     "w_i into client_u only), :50-51 (-ld: the client's ExponentialLR "
     "steps after its own train()); :84-85, :94-96 and clientamp.py:57-59 "
     "move parameters() only (bn.aggregate); no official preset: the "
     "authors' code was not found (docs/algorithms/fedamp.md)"},
    {"fedproto", "official",
     "fedproto.distance=mse fedproto.client_protos=during_training "
     "fedproto.weights=uniform opt.momentum=0.5", NULL,
     "yuetan031/FedProto 97e42e2741e1: lib/update.py update_weights_het "
     ":143-145 (torch.optim.SGD momentum 0.5, new per local update), "
     ":161-171 (nn.MSELoss of the features against C̄^(y), none while the "
     "global set is empty), :177-181 (features kept before :175's step), "
     "lib/utils.py:205 agg_func and :221 proto_aggregation (plain means); "
     "exps/federated_main.py:52, :72"},
    {"fedproto", "pfllib",
     "fedproto.distance=mse fedproto.client_protos=during_training "
     "fedproto.weights=uniform lr.count=trainings", NULL,
     "TsingZ0/PFLlib d832e76f6a23: system/flcore/clients/clientproto.py "
     "train :52 (MSELoss · lamda), :56 (rep kept before the step), :67 "
     "agg_func; servers/serverproto.py:45, :107 proto_aggregation (plain "
     "mean over the round's uploads)"},
    /* req: pfedme.preset.pfllib_run */
    {"pfedme", "pfllib_run",
     "pfedme.theta_start=warm pfedme.mu=0.001 pfedme.weights=samples "
     "pfedme.train=sampled pfedme.personal_eval=global lr.scope=eta_p "
     "lr.count=trainings pfedme.eval_reset=initial "
     "bn.aggregate=parameters_only", NULL,
     "TsingZ0/PFLlib d832e76f6a23: serverpFedMe.py train() as shipped, "
     "evaluate() before each round's training (eval_gap = 1) included: "
     "the preset pfllib plus its evaluation side effect "
     "(evaluate_personalized copies the initial parameters into a client's "
     "personalized model; docs/algorithms/pfedme.md, PFLlib's evaluation "
     "side effect); parameters() only moved, as the preset pfllib "
     "(bn.aggregate)"},
    /* req: fedbn.preset.pfllib */
    {"fedbn", "pfllib", "fedbn.weights=samples lr.count=trainings", NULL,
     "TsingZ0/PFLlib d832e76f6a23: clientbn.py (set_parameters copies every "
     "named parameter whose name lacks 'bn': γ, β and the running "
     "statistics stay the client's), serverbn.py with serverbase.py's "
     "receive_models / aggregate_parameters (weights n_i / Σ_U n_j), "
     "clientbn.py:39-40 (-ld: the client's scheduler steps after its own "
     "train()); docs/algorithms/fedbn.md, PFLlib"},
    /* req: fedrod.preset.pfllib */
    {"fedrod", "pfllib",
     "fedrod.features=before fedrod.phi_p0=generic lr.count=trainings "
     "bn.aggregate=parameters_only", NULL,
     "TsingZ0/PFLlib d832e76f6a23: system/flcore/clients/clientrod.py:15 "
     "(φ_P⁰ = copy.deepcopy(self.model.head)), :48-56 (rep and out_g "
     "before :53's optimizer.step(), detached in :55-56), :64-65 (each "
     "client's two ExponentialLR stepped after its train()), :142-155 "
     "balanced_softmax_loss (logits + log N); servers/serverbase.py:114-138 "
     "(weights n_i / Σ n_j over the uploads), :138-150 and clientbase.py:"
     "67-69 (parameters() only: bn.aggregate); no official preset: "
     "hongyouc/Fed-RoD holds a README only (docs/algorithms/fedrod.md)"},
    /* req: apple.preset.official */
    {"apple", "official", "apple.scheduler=exponential apple.prox=full",
     NULL,
     "ljaiverson/pFL-APPLE 8078196731b5: utils/losses.py:4-6 reg_loss "
     "(coef ‖p − p0‖², no ½), :8-21 get_reg_coef (exponential, ε = 0.001, "
     "the default of utils/utils.py:37); utils/apple.py:5-12 init_pss "
     "(p_i⁰ = p_0 = the sample shares); train_APPLE.py:46-62 (one SGD step "
     "on the cores and ps together); its momentum 0.9 (train_APPLE.py:52) "
     "is not expressible (APPLE takes its own plain steps)"},
    /* req: apple.preset.pfllib */
    {"apple", "pfllib",
     "apple.p_init=uniform apple.order=core_first apple.p_grad=block_mean "
     "apple.core_lr=n_eta apple.lambda_round=previous "
     "bn.aggregate=parameters_only", NULL,
     "TsingZ0/PFLlib d832e76f6a23: system/flcore/clients/clientapple.py:15 "
     "(λ = 1 before the first round), :18 (η N), :22 (p_i = 1/N), :55-56 "
     "(the core steps first), :58-66 (p's gradient: block means, with the "
     "new core), :68-71 (λ set after the round); servers/serverapple.py:"
     "26-32 (p_0 = the sample shares); :77 (the uploaded core is the last "
     "step's mixture) and the sequential downloads are the preset "
     "pfllib_run's; clientapple.py:93-100 mixes parameters() only "
     "(bn.aggregate) (docs/algorithms/apple.md)"},
    /* req: fedala.preset.official */
    {"fedala", "official",
     "fedala.skip=sum_first fedala.p_unit=tensors fedala.start=own "
     "bn.aggregate=parameters_only", NULL,
     "TsingZ0/FedALA a7a9b21: system/utils/ALA.py:82 (returns when "
     "torch.sum(params_g[0] - params[0]) == 0), :86,:95 (layer_idx counts "
     "parameters() entries from the output), :52,:146,:155 (one start "
     "phase per client); serverALA.py:93-94 runs ALA on every client each "
     "round (fedala.ala_clients = all); serverALA.py:111-123 averages "
     "parameters() only into a deepcopy of the first upload "
     "(bn.aggregate; docs/algorithms/fedala.md)"},
    /* req: fedala.preset.pfllib */
    {"fedala", "pfllib",
     "fedala.skip=sum_first fedala.p_unit=tensors fedala.start=own "
     "lr.count=trainings fedala.ala_mode=pfllib "
     "bn.aggregate=parameters_only", NULL,
     "TsingZ0/PFLlib d832e76f6a23: system/utils/ALA.py:82, :86, :95 (as "
     "the authors' code), clients/clientala.py:48-49 (each client's "
     "scheduler steps after its train()); servers/serverala.py:73-74 runs "
     "ALA on every client, which preset pfllib_run adds; "
     "serverbase.py:138-150, clientbase.py:67-69 (parameters() only: "
     "bn.aggregate); serverala.py:26-31 evaluate() after send_models, "
     "clientbase.py:84, :126 model.eval(), clientala.py:23 model.train() "
     "(ALA's passes in evaluation mode for a client that did not train in "
     "the previous round: fedala.ala_mode) (docs/algorithms/fedala.md)"},
    /* req: fedala.preset.pfllib_run */
    {"fedala", "pfllib_run",
     "fedala.skip=sum_first fedala.p_unit=tensors fedala.start=own "
     "lr.count=trainings fedala.ala_clients=all fedala.ala_mode=pfllib "
     "bn.aggregate=parameters_only", NULL,
     "TsingZ0/PFLlib d832e76f6a23: the preset pfllib and "
     "servers/serverala.py:73-74 (send_models calls local_initialization, "
     "ALA.py's adaptive_local_aggregation, on every client before the "
     "round's training: a client outside the round takes Θ̂_i, learns W_i "
     "and spends its start phase; docs/algorithms/fedala.md)"},
    /* req: fedpac.preset.official */
    {"fedpac", "official",
     "fedpac.distance=mse fedpac.alpha_small=renormalised "
     "fedpac.missing=own_start", NULL,
     "JianXu95/FedPAC 5770f4ff8f11: methods/fedpac.py:34, :242 "
     "(nn.MSELoss), :177, :233-241 (from round 1, a class without a global "
     "centroid aligned to the client's centroid before training); "
     "tools.py:133-140 (α ≤ 1e-3 set to 0), :76-91 (divided by the sum); "
     "not expressed: the SGD momentum 0.5 and weight decay 5e-4 of "
     "methods/fedpac.py:190-206 (preset official_run adds them; this "
     "preset's vectors keep the plain steps), the classifier's fixed step 0.1 (give "
     "fedpac.eta_phi = 0.1), cvxpy's iterative solve and its eigenvalue "
     "clipping (docs/algorithms/fedpac.md)"},
    /* req: fedpac.preset.official_run */
    {"fedpac", "official_run",
     "fedpac.distance=mse fedpac.alpha_small=renormalised "
     "fedpac.missing=own_start opt.momentum=0.5 opt.weight_decay=0.0005",
     NULL,
     "JianXu95/FedPAC 5770f4ff8f11: the preset official plus the clients' "
     "optimizers of methods/fedpac.py:194-195 (the classifier's) and "
     ":220-221 (the feature extractor's): torch.optim.SGD(momentum=0.5, "
     "weight_decay=0.0005), each built anew in every client update "
     "(opt.state = reset); not expressed: the classifier's fixed step 0.1 "
     "(give fedpac.eta_phi = 0.1), cvxpy (docs/algorithms/fedpac.md)"},
    /* req: fedpac.preset.pfllib */
    {"fedpac", "pfllib",
     "fedpac.distance=mse fedpac.alpha_small=raw "
     "fedpac.centroid_weights=uniform lr.count=trainings "
     "bn.aggregate=parameters_only", NULL,
     "TsingZ0/PFLlib d832e76f6a23: system/flcore/clients/clientpac.py:16, "
     ":72-78 (nn.MSELoss; a class without a global prototype keeps its own "
     "feature: no term, counted in the mean), :108 (V_i, h_i at the "
     "received model), :95-96 (the scheduler stepped after train()); "
     "servers/serverpac.py:178-193 (the plain mean of the "
     "prototypes), :242 (α ≤ 1e-3 set to 0), :166-174 (not renormalised), "
     "clientpac.py:105-107 (set_parameters copies parameters() only: each "
     "client keeps its running statistics); "
     "not expressed: cvxpy's solve and its eigenvalue clipping, the "
     "client's single optimizer (give fedpac.eta_phi = eta) "
     "(docs/algorithms/fedpac.md)"},
    /* req: apple.preset.pfllib_run */
    {"apple", "pfllib_run",
     "apple.p_init=uniform apple.order=core_first apple.p_grad=block_mean "
     "apple.core_lr=n_eta apple.lambda_round=previous apple.upload=mixture "
     "apple.peers=sequential bn.aggregate=parameters_only", NULL,
     "TsingZ0/PFLlib d832e76f6a23: APPLE.train() as shipped, every client "
     "every round: the preset pfllib plus clientapple.py:77 (the core "
     "carried on is the last step's mixture) and serverapple.py:46-47, :84 "
     "with clientapple.py:55-56, :74-75 (a client downloads the stepped "
     "cores of those that trained before it; tests/pfllib/apple.py)"},
};

const pflref_preset *pflref_presets(size_t *count)
{
    *count = sizeof presets / sizeof presets[0];
    return presets;
}

const pflref_preset *pflref_preset_find(const char *alg, const char *name)
{
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(presets[i].algorithm, alg) == 0 &&
            strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

pflref_status pflref_preset_apply(pflref_hyper *h, const char *alg,
                                  const char *name, const char *where,
                                  pflref_error *err)
{
    if (strcmp(name, "paper") == 0)
        return PFLREF_OK;
    const pflref_preset *pr = NULL;
    char known[256] = "paper";
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        if (strcmp(presets[i].algorithm, alg) != 0)
            continue;
        strncat(known, ", ", sizeof known - strlen(known) - 1);
        strncat(known, presets[i].name, sizeof known - strlen(known) - 1);
        if (strcmp(presets[i].name, name) == 0)
            pr = &presets[i];
    }
    if (pr == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "unknown preset \"%s\" for %s (known: %s)",
                                name, alg, known);
    /* settings: "name=value name=value ..." */
    const char *p = pr->settings;
    while (*p != '\0') {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        char item[128];
        snprintf(item, sizeof item, "%.*s", (int)n, p);
        p += n;
        char *eq = strchr(item, '=');
        if (eq == NULL)
            continue;
        *eq = '\0';
        const pflref_param *par = pflref_param_find_for(item, alg);
        pflref_status st = PFLREF_EINTERNAL;
        if (par != NULL && par->type == PFLREF_PARAM_ENUM)
            st = pflref_hyper_set_enum(h, par, eq + 1, where, err);
        else if (par != NULL && par->type == PFLREF_PARAM_REAL)
            st = pflref_hyper_set_real(h, par, strtod(eq + 1, NULL), where,
                                       err);
        if (st != PFLREF_OK)
            return pflref_error_set(err, PFLREF_EINTERNAL, where,
                                    "preset %s/%s sets %s, which failed",
                                    alg, name, item);
    }
    return PFLREF_OK;
}
