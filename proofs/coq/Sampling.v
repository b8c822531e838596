(* proofs/coq/Sampling.v: sampling m of n clients without replacement.

   Paper.  K. Pillutla, K. Malik, A. Mohamed, M. Rabbat, M. Sanjabi,
   L. Xiao, "Federated Learning with Partial Model Personalization", ICML
   2022, arXiv:2204.03809, Lemma 21 (as the design notes cite it; shared/spec
   notes-cfl-ifca-sampling-metrics.md §3.5): for S drawn uniformly from the
   m-subsets of {1..n}, "P(i ∈ S) = C(n−1, m−1)/C(n, m) = m/n", so that
   E[(1/m) Σ_{i∈S} x_i] = x̄.

   The sample space is literally every m-subset of a finite type T of n
   elements, each equally likely, so a probability is a count divided by
   C(n, m) (card_draws).  Proved:
     - card_containing: exactly C(n−1, m−1) of the m-subsets contain a given
       client x;
     - inclusion_probability: C(n−1, m−1) · n = C(n, m) · m, i.e.
       P(x ∈ S) = m/n (in ℕ, without division).

   C code it justifies: pflref_sampler_choose (ref/sampling/sampler.c), whose
   output is an m-subset of 0..N−1 (the proved scan pflref_ids_first_bad
   checks it), and the inverse-probability factor N/m of the aggregations
   that scale sampled sums (PFLEGO's I/r: Pflego.v). *)

From mathcomp Require Import ssreflect ssrbool ssrfun eqtype ssrnat seq.
From mathcomp Require Import fintype finset binomial.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Section Inclusion.

Variable T : finType.

(* The m-subsets of T containing x. *)
Definition containing (x : T) (m : nat) :=
  [set A : {set T} | (#|A| == m) && (x \in A)].

(* The m-subsets of T avoiding x. *)
Definition avoiding (x : T) (m : nat) :=
  [set A : {set T} | (#|A| == m) && (x \notin A)].

(* Every m-subset contains x or avoids it: C(n, m) = both counts. *)
Lemma containing_avoiding x m :
  #|containing x m| + #|avoiding x m| = 'C(#|T|, m).
Proof.
rewrite -card_draws -[RHS](cardsID [set A : {set T} | x \in A]).
congr addn; apply: eq_card => A; rewrite !inE //.
by rewrite andbC.
Qed.

(* A ↦ x |: A is a bijection from the m-subsets avoiding x onto the
   (m+1)-subsets containing x (inverse A ↦ A :\ x). *)
Lemma containing_succ x m : #|containing x m.+1| = #|avoiding x m|.
Proof.
have -> : containing x m.+1 = (fun A => x |: A) @: avoiding x m.
  apply/setP => A; rewrite inE; apply/andP/imsetP.
    case=> /eqP cA xA; exists (A :\ x); last by rewrite setD1K.
    rewrite inE setD11 andbT; apply/eqP.
    by move: cA; rewrite (cardsD1 x A) xA add1n => -[].
  case=> B; rewrite inE => /andP[/eqP cB xB] ->.
  by rewrite cardsU1 xB cB setU11.
apply: card_in_imset => B1 B2; rewrite !inE => /andP[_ x1] /andP[_ x2] E.
by rewrite -(setU1K x1) -(setU1K x2) E.
Qed.

(* Exactly C(n−1, m) of the (m+1)-subsets contain x, for n ≥ 1. *)
Theorem card_containing x m : #|containing x m.+1| = 'C(#|T|.-1, m).
Proof.
have n_pos : 0 < #|T| by apply/card_gt0P; exists x.
case: #|T| n_pos (containing_avoiding x) => // n _ split_x.
elim: m => [|m IH].
  rewrite containing_succ bin0.
  have := split_x 0; rewrite bin0.
  suff -> : #|containing x 0| = 0 by [].
  apply/eqP; rewrite cards_eq0; apply/eqP/setP => A; rewrite !inE.
  by apply/negbTE; apply/andP => -[/eqP/cards0_eq -> ]; rewrite inE.
rewrite containing_succ.
have := split_x m.+1; rewrite IH binS => E.
by apply/eqP; rewrite -(eqn_add2l 'C(n, m)) E addnC.
Qed.

(* Lemma 21: P(x ∈ S) = C(n−1, m−1)/C(n, m) = m/n, stated without
   division for 1 ≤ m: #{S ∋ x} · n = #{S} · m. *)
(* req: sampling.lemma21.incl *)
Theorem inclusion_probability x m :
  0 < m -> #|containing x m| * #|T| = #|[set A : {set T} | #|A| == m]| * m.
Proof.
case: m => // m _.
have n_pos : 0 < #|T| by apply/card_gt0P; exists x.
rewrite card_containing card_draws.
case: #|T| n_pos => // n _ /=.
by rewrite mulnC mul_bin_diag mulnC.
Qed.

End Inclusion.
