(* proofs/coq/SamplerJoint.v: the joint between pflref_sampler_choose's
   contract and Sampling.v, machine-checked on WP's own translation of the
   ACSL.

   Sampling.v counts the m-subsets of a finite set of n clients: its sample
   space is [set A : {set T} | #|A| == m] (card_draws), and
   inclusion_probability gives P(x ∈ S) = m/n when S is drawn uniformly
   from it.  The C's sampler (ref/sampling/sampler.c) returns its draw as
   an array: on PFLREF_OK, ascending_subset(chosen, m, N) (ref/sampling/
   kernels.h), proved by WP from the check with pflref_ids_first_bad.
   Wp.WpAcsl (proofs/wpcoq/gen/WpAcsl.v) holds the definition WP builds
   from that predicate, printed in Coq by Why3's own printer
   (proofs/wpcoq/export.sh; `make proofs` fails when the file is not what
   WP prints today).

   Reading of the memory.  WP's typed model holds the size_t entries of
   chosen in the map Mint; entry j is the map at shift chosen j, read here
   at Z.of_nat j (chosen_id j), and is at least 0 (size_t_nat: the typed
   model's is_uint64 fact, which WP gives every read of a size_t).

   Proved.
     - ascending_subset_joint: WP's P_ascending_subset is, over the nat
       entries, "the entry at every j < m is below N, and the entry at
       j − 1 is below the entry at j for 0 < j < m" (an equivalence);
     - ascending_increasing: such ids increase strictly, so distinct
       positions hold distinct clients;
     - chosen_is_draw: the set of the m ids, as a subset of the N clients
       'I_N, has exactly m elements: it is a point of Sampling.v's sample
       space [set A : {set 'I_N} | #|A| == m], and a client is in it
       exactly when some position holds it.  So the object the C returns
       is the object Sampling.v's theorems count, and inclusion_probability
       applies to it with T = 'I_N (#|T| = N) for any distribution that is
       uniform over that space; Selection.v proves that the algorithms
       both samplers run are (the libraries' code and generators are
       trusted there).
   No axiom: Print Assumptions (Assumptions.v) answers "Closed under the
   global context" for each.

   Negative controls: proofs/wpcoq/export.sh --controls plants two
   changes in a copy of ref/sampling/kernels.h (the bound N let in, the
   order made non-strict), exports WP's translation of it and requires
   this file to fail to compile against it, in ascending_subset_joint. *)
From Coq Require Import ZArith Lia.
From mathcomp Require Import ssreflect ssrbool ssrfun eqtype ssrnat seq.
From mathcomp Require Import fintype finset.
From Wp Require WpAcsl.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Section Joint.

Variables (N m : nat).
Variable Mint : WpAcsl.addr -> Z.
Variable chosen : WpAcsl.addr.

Hypothesis size_t_nat : forall i, (0 <= Mint (WpAcsl.shift chosen i))%Z.

Definition chosen_id (j : nat) : nat :=
  Z.to_nat (Mint (WpAcsl.shift chosen (Z.of_nat j))).

Lemma id_of j :
  Z.of_nat (chosen_id j) = Mint (WpAcsl.shift chosen (Z.of_nat j)).
Proof. by rewrite /chosen_id Z2Nat.id. Qed.

Lemma pred_of j : 0 < j -> Z.of_nat j.-1 = (-1 + Z.of_nat j)%Z.
Proof. by case: j => // j _; rewrite (_ : j.+1.-1 = j) //; lia. Qed.

Theorem ascending_subset_joint :
  WpAcsl.P_ascending_subset Mint chosen (Z.of_nat m) (Z.of_nat N) <->
  (forall j, j < m -> chosen_id j < N) /\
  (forall j, 0 < j < m -> chosen_id j.-1 < chosen_id j).
Proof.
split.
- case=> Hb Ho; split.
  + move=> j /ltP Hj; apply/ltP.
    have := Hb (Z.of_nat j); rewrite -id_of; lia.
  + move=> j /andP[/ltP H0 /ltP Hj]; apply/ltP.
    have := Ho (Z.of_nat j); rewrite -id_of -pred_of ?(introT ltP H0) // -id_of.
    lia.
- case=> Hb Ho; split.
  + move=> i H0 Hi; rewrite -(Z2Nat.id i H0) -id_of.
    have Hl : (Z.to_nat i < m)%coq_nat by lia.
    have /ltP := Hb (Z.to_nat i) (introT ltP Hl); lia.
  + move=> i H0 Hi.
    have Hr : 0 < Z.to_nat i < m by apply/andP; split; apply/ltP; lia.
    have Hp : 0 < Z.to_nat i by case/andP: Hr.
    have := pred_of Hp; rewrite Z2Nat.id; last lia.
    move=> <-; rewrite -{2}(Z2Nat.id i); last lia.
    rewrite -!id_of; have /ltP := Ho _ Hr; lia.
Qed.

Hypothesis below : forall j, j < m -> chosen_id j < N.
Hypothesis ascending : forall j, 0 < j < m -> chosen_id j.-1 < chosen_id j.

Lemma ascending_increasing j k :
  j < k -> k < m -> chosen_id j < chosen_id k.
Proof.
elim: k => // k IH jk km.
have step : chosen_id k < chosen_id k.+1
  by apply: (ascending (j := k.+1)); rewrite km.
rewrite leq_eqVlt in jk; case/orP: jk => [/eqP [->] // | jk].
exact: ltn_trans (IH jk (ltnW km)) step.
Qed.

Definition client (j : 'I_m) : 'I_N := Ordinal (below (ltn_ord j)).

Lemma client_inj : injective client.
Proof.
move=> j k /(congr1 val) /= E; apply/val_inj => /=.
case: (ltngtP j k) => // [jk | kj].
- by move: (ascending_increasing jk (ltn_ord k)); rewrite E ltnn.
- by move: (ascending_increasing kj (ltn_ord j)); rewrite E ltnn.
Qed.

(* req: sampling.lemma21.incl *)
Theorem chosen_is_draw :
  exists S : {set 'I_N},
    S \in [set A : {set 'I_N} | #|A| == m] /\
    forall x : 'I_N, (x \in S) = [exists j : 'I_m, chosen_id j == x].
Proof.
exists (client @: setT); split.
- by rewrite inE (card_imset _ client_inj) cardsT card_ord.
- move=> x; apply/imsetP/existsP.
  + by case=> j _ ->; exists j.
  + by case=> j /eqP E; exists j => //; apply/val_inj; rewrite /= E.
Qed.

End Joint.
