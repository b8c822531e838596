(* proofs/coq/Pflego.v: PFLEGO's Proposition 1, unbiasedness of the
   I/r-scaled step.

   Paper.  G. Nikoloutsopoulos, M. Titsias, I. Koutsopoulos, "Personalized
   Federated Learning with Exact Stochastic Gradient Descent", arXiv:2202.09848
   (PFLEGO), Proposition 1, as the design notes reconstruct it
   (shared/spec notes-pflego-fedalt-fedsim-fedrep.md §2.6): with r of the I
   clients sampled without replacement and the head step scaled by α_i,
     "ĝ_θ = (I/r) Σ_{i∈I_t} α_i ∇_θ ℓ_i(W̃_i, θ^t)" satisfies
     "E_{I_t}[ĝ_θ] = ∇_θ L(θ^t, W̃)" = Σ_i α_i ∇_θ ℓ_i,
   "Proof. Pr[i∈I_t] = r/I; the rest is linearity of expectation."

   Proved, for any values c_i = α_i g_i (reals) over a finite set of I
   clients, the expectation being the average over all C(I, r) client sets:
     - unbiased: E[(I/r) Σ_{i∈S} α_i g_i] = Σ_i α_i g_i;
     - without_alpha: E[(1/r) Σ_{i∈S} g_i] = (1/I) Σ_i g_i, which equals
       Σ_i α_i g_i for every g exactly when every α_i = 1/I
       (biased_unless_equal): without α_i in the step the estimate is
       unbiased only for equal client weights.

   C code it justifies: the `exact_alpha` head step of
   ref/algorithms/pflego.c (pflego.head_step), and the server's
   θ ← θ − ρ (I/r) Σ_{i∈I_t} α_i g_i. *)

From Coq Require Import Reals Lra.
From mathcomp Require Import ssreflect ssrbool ssrfun eqtype ssrnat seq.
From mathcomp Require Import fintype finset bigop binomial.
From Pflref Require Import Sampling.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Local Open Scope R_scope.

(* (R, +, 0) as a commutative monoid, for mathcomp's big sums. *)
Lemma Rplus_assoc' : associative Rplus.
Proof. by move=> x y z; rewrite Rplus_assoc. Qed.
Canonical Rplus_monoid := Monoid.Law Rplus_assoc' Rplus_0_l Rplus_0_r.
Canonical Rplus_comoid := Monoid.ComLaw Rplus_comm.

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

End Unbiased.
