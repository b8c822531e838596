(* proofs/coq/Pflego.v: PFLEGO's Proposition 1, unbiasedness of the
   I/r-scaled step, for both blocks (θ and the heads W_i).

   Paper.  G. Nikoloutsopoulos, M. Titsias, I. Koutsopoulos, "Personalized
   Federated Learning with Exact Stochastic Gradient Descent", arXiv:2202.09848
   (PFLEGO), Proposition 1, as the design notes reconstruct it
   (shared/spec notes-pflego-fedalt-fedsim-fedrep.md §2.6): with r of the I
   clients sampled without replacement and the head step scaled by α_i,
     "ĝ_θ = (I/r) Σ_{i∈I_t} α_i ∇_θ ℓ_i(W̃_i, θ^t)" satisfies
     "E_{I_t}[ĝ_θ] = ∇_θ L(θ^t, W̃)" = Σ_i α_i ∇_θ ℓ_i, and
     "Ĝ_{W_i} = (I/r) · 1[i∈I_t] · α_i ∇_W ℓ_i(W̃_i, θ^t)" satisfies
     "E_{I_t}[Ĝ_{W_i}] = ∇_{W_i} L(θ^t, W̃)" = α_i ∇_W ℓ_i for every i,
   "Proof. Pr[i∈I_t] = r/I; the rest is linearity of expectation."

   Proved, over a finite set of I clients, the expectation being the
   average over all C(I, r) client sets, with 0 < r ≤ I:
     - unbiased: E[(I/r) Σ_{i∈S} α_i g_i] = Σ_i α_i g_i, for reals g_i;
     - unbiased_head: E[(I/r) 1[i∈S] α_i G_i] = α_i G_i for every client i,
       for reals G_i;
     - unbiased_vec, unbiased_head_vec: the same for vectors
       g_i, G_i : 'I_d -> R, in every coordinate k;
     - proposition1: both together, θ in ℝ^p and the heads in ℝ^q, so the
       whole stochastic gradient (ĝ_θ, Ĝ_{W_1}, .., Ĝ_{W_I}) is unbiased
       for ∇L;
     - without_alpha: E[(1/r) Σ_{i∈S} g_i] = (1/I) Σ_i g_i, which equals
       Σ_i α_i g_i for every g exactly when every α_i = 1/I
       (biased_unless_equal): without α_i in the step the estimate is
       unbiased only for equal client weights.

   C code it justifies: the `exact_alpha` head step of
   ref/algorithms/pflego.c (pflego.head_step), W_i ← W̃_i − ρ (I/r) α_i G_i
   (unbiased_head, unbiased_head_vec), and the server's
   θ ← θ − ρ (I/r) Σ_{i∈I_t} α_i g_i (unbiased, unbiased_vec): together
   one exact SGD step on L (proposition1).  The seed head step, without α_i,
   is by unbiased_head (α_i := 1) unbiased for ∇_W ℓ_i = (1/α_i) ∇_{W_i} L
   instead. *)

From Coq Require Import Reals Lra.
From mathcomp Require Import ssreflect ssrbool ssrfun eqtype ssrnat seq.
From mathcomp Require Import fintype finset bigop binomial.
From Pflref Require Import Sampling.
From Pflref Require Export RSum.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Local Open Scope R_scope.

(* Σ_i k·F_i = k·Σ_i F_i. *)
Lemma sumR_scale (I : finType) (P : pred I) (k : R) (F : I -> R) :
  \big[Rplus/0]_(i | P i) (k * F i) = k * \big[Rplus/0]_(i | P i) F i.
Proof.
apply: (big_rec2 (fun x y => x = k * y)); first by rewrite Rmult_0_r.
by move=> i x y _ ->; rewrite Rmult_plus_distr_l.
Qed.

(* A constant summed over a set: #A · c. *)
Lemma sumR_const (I : finType) (A : pred I) (c : R) :
  \big[Rplus/0]_(i in A) c = INR #|A| * c.
Proof.
rewrite big_const; elim: #|A| => [|n IH]; first by rewrite /= Rmult_0_l.
by rewrite [iter _ _ _]/= IH S_INR; ring.
Qed.

Section Unbiased.

Variable T : finType.                  (* the I clients *)
Variable r : nat.                      (* clients sampled per round *)
Hypotheses (r_pos : (0 < r)%N) (r_le : (r <= #|T|)%N).

Definition nI := INR #|T|.  (* I, the number of clients, as a real *)

(* Every client set of size r, equally likely. *)
Definition draws := [set S : {set T} | #|S| == r].

(* E[X] = (1/C(I, r)) Σ_S X(S). *)
Definition expect (X : {set T} -> R) : R :=
  / INR #|draws| * \big[Rplus/0]_(S in draws) X S.

Lemma draws_pos : 0 < INR #|draws|.
Proof. by apply: lt_0_INR; apply/ltP; rewrite card_draws bin_gt0. Qed.

(* Σ_S Σ_{i∈S} c_i = C(I−1, r−1) Σ_i c_i: each client lies in as many
   sets. *)
Lemma sum_over_draws (c : T -> R) :
  \big[Rplus/0]_(S in draws) \big[Rplus/0]_(i in S) c i =
  \big[Rplus/0]_(i : T) (c i * INR #|containing i r|).
Proof.
under eq_bigr => S _ do rewrite big_mkcond.
rewrite exchange_big; apply: eq_bigr => i _.
rewrite -big_mkcondr.
transitivity (\big[Rplus/0]_(S in containing i r) c i).
  by apply: eq_bigl => S; rewrite !inE.
by rewrite sumR_const Rmult_comm.
Qed.

(* PFLEGO Proposition 1: E[(I/r) Σ_{i∈S} α_i g_i] = Σ_i α_i g_i. *)
(* req: pflego.prop1, pflego.alg1.l8 *)
Theorem unbiased (alpha g : T -> R) :
  expect (fun S => nI / INR r * \big[Rplus/0]_(i in S) (alpha i * g i)) =
  \big[Rplus/0]_(i : T) (alpha i * g i).
Proof.
have rR : 0 < INR r by apply: lt_0_INR; apply/ltP.
have IR : 0 < nI.
  by rewrite /nI; apply: lt_0_INR; apply/ltP; apply: leq_trans r_pos r_le.
have Dpos := draws_pos.
(* #{S ∋ i} · I = #{S} · r, the inclusion probability r/I (Sampling.v) *)
have incl (i : T) : INR #|containing i r| * nI = INR #|draws| * INR r.
  rewrite /nI -!mult_INR.
  by congr INR; rewrite multE /draws; apply: inclusion_probability.
rewrite /expect sumR_scale sum_over_draws.
rewrite (eq_bigr (fun i => (INR #|draws| * INR r / nI) *
                           (alpha i * g i))); last first.
  move=> i _; rewrite Rmult_comm; congr (_ * _).
  by rewrite -(incl i); field; lra.
rewrite (sumR_scale predT).
set s := \big[Rplus/0]_(i | predT i) _.
move: s => s.
have D0 : INR #|draws| <> 0 by lra.
have R0 : INR r <> 0 by lra.
have N0 : nI <> 0 by lra.
move: (INR #|draws|) (INR r) nI D0 R0 N0 => d x y D0 R0 N0.
field; auto.
Qed.

(* Without α_i in the step: E[(1/r) Σ_{i∈S} g_i] = (1/I) Σ_i g_i, the
   average with equal weights 1/I, whatever the α_i are. *)
Theorem without_alpha (g : T -> R) :
  expect (fun S => / INR r * \big[Rplus/0]_(i in S) g i) =
  / nI * \big[Rplus/0]_(i : T) g i.
Proof.
have rR : 0 < INR r by apply: lt_0_INR; apply/ltP.
have IR : 0 < nI.
  by rewrite /nI; apply: lt_0_INR; apply/ltP; apply: leq_trans r_pos r_le.
rewrite -(sumR_scale predT) -(unbiased (fun _ => / nI) g) /expect.
congr (_ * _); apply: eq_bigr => S _.
rewrite (sumR_scale (fun i => i \in S)).
field; lra.
Qed.

(* g_j: the values that single out client j (1 at j, 0 elsewhere). *)
Definition single (j : T) : T -> R := fun i => if i == j then 1 else 0.

Lemma sum_single (F : T -> R) (j : T) :
  \big[Rplus/0]_(i : T) (F i * single j i) = F j.
Proof.
rewrite (bigD1 j) // /single eqxx Rmult_1_r big1 /=; first exact: Rplus_0_r.
by move=> i /negbTE ->; rewrite Rmult_0_r.
Qed.

(* ... and that equals Σ_i α_i g_i for every g exactly when all α_i are
   equal (to 1/I): the step without α_i is unbiased only then. *)
Theorem biased_unless_equal (alpha : T -> R) :
  (forall g : T -> R,
     expect (fun S => / INR r * \big[Rplus/0]_(i in S) g i) =
     \big[Rplus/0]_(i : T) (alpha i * g i))
  <-> (forall i, alpha i = / nI).
Proof.
split.
  move=> H j; have := H (single j).
  rewrite without_alpha sum_single => <-.
  rewrite [X in _ * X = _](eq_bigr (fun i => 1 * single j i)); last first.
    by move=> i _; rewrite Rmult_1_l.
  by rewrite sum_single Rmult_1_r.
move=> Ha g; rewrite without_alpha -(sumR_scale predT).
by apply: eq_bigr => i _; rewrite Ha.
Qed.

(* Σ_{j∈S} F_j · [j = i] = F_i if i ∈ S, 0 otherwise. *)
Lemma sum_in_single (S : {set T}) (F : T -> R) (i : T) :
  \big[Rplus/0]_(j in S) (F j * single i j) = if i \in S then F i else 0.
Proof.
case: ifP => iS.
  rewrite (bigD1 i) //= /single eqxx Rmult_1_r big1 ?Rplus_0_r //.
  by move=> j /andP[_ /negbTE ->]; rewrite Rmult_0_r.
apply: big1 => j jS; rewrite /single; case: eqP => [ji | _].
  by move: jS; rewrite ji iS.
exact: Rmult_0_r.
Qed.

(* PFLEGO Proposition 1, head block: Ĝ_{W_i} = (I/r) 1[i∈S] α_i G_i has
   E[Ĝ_{W_i}] = α_i G_i = ∇_{W_i} L, for every client i, sampled or not. *)
Theorem unbiased_head (alpha G : T -> R) (i : T) :
  expect (fun S => nI / INR r * (if i \in S then alpha i * G i else 0)) =
  alpha i * G i.
Proof.
have E := unbiased alpha (fun j => G j * single i j).
have sum_i : \big[Rplus/0]_(j : T) (alpha j * (G j * single i j)) =
             alpha i * G i.
  rewrite -(sum_single (fun j => alpha j * G j) i).
  by apply: eq_bigr => j _; rewrite Rmult_assoc.
rewrite sum_i in E; rewrite -[RHS]E /expect; congr (_ * _).
apply: eq_bigr => S _; congr (_ * _).
rewrite -(sum_in_single S (fun j => alpha j * G j) i).
by apply: eq_bigr => j _; rewrite Rmult_assoc.
Qed.

(* Vector gradients, coordinate by coordinate: g_i, G_i : 'I_d -> R. *)

(* θ block: E[(I/r) Σ_{i∈S} α_i g_i] = Σ_i α_i g_i in every coordinate k. *)
(* req: pflego.prop1, pflego.alg1.l8 *)
Theorem unbiased_vec (d : nat) (alpha : T -> R) (g : T -> 'I_d -> R) :
  forall k : 'I_d,
  expect (fun S => nI / INR r * \big[Rplus/0]_(i in S) (alpha i * g i k)) =
  \big[Rplus/0]_(i : T) (alpha i * g i k).
Proof. by move=> k; apply: (unbiased alpha (fun i => g i k)). Qed.

(* Head blocks: E[(I/r) 1[i∈S] α_i G_i] = α_i G_i in every coordinate k,
   for every client i. *)
Theorem unbiased_head_vec (d : nat) (alpha : T -> R) (G : T -> 'I_d -> R) :
  forall (i : T) (k : 'I_d),
  expect (fun S => nI / INR r * (if i \in S then alpha i * G i k else 0)) =
  alpha i * G i k.
Proof. by move=> i k; apply: (unbiased_head alpha (fun j => G j k)). Qed.

(* PFLEGO Proposition 1, both blocks: the whole stochastic gradient
   (ĝ_θ, Ĝ_{W_1}, .., Ĝ_{W_I}), with θ in ℝ^p and each head in ℝ^q, is
   unbiased for ∇L = (Σ_i α_i g_i, α_1 G_1, .., α_I G_I). *)
(* req: pflego.prop1 *)
Theorem proposition1 (p q : nat) (alpha : T -> R)
    (g : T -> 'I_p -> R) (G : T -> 'I_q -> R) :
  (forall k : 'I_p,
     expect (fun S => nI / INR r * \big[Rplus/0]_(i in S) (alpha i * g i k)) =
     \big[Rplus/0]_(i : T) (alpha i * g i k)) /\
  (forall (i : T) (k : 'I_q),
     expect (fun S => nI / INR r * (if i \in S then alpha i * G i k else 0)) =
     alpha i * G i k).
Proof. by split; [apply: unbiased_vec | apply: unbiased_head_vec]. Qed.

End Unbiased.
