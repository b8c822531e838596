(* proofs/coq/LinkageJoint.v: the joint between the C's contracts of
   complete linkage and Linkage.v, machine-checked on WP's own translation
   of the ACSL.

   Linkage.v states one step of complete linkage over its own definitions:
   the clusters of a representative map, their complete link (the least α
   over the pairs of their members), and the step's choice clink_choice
   (the pair of clusters A < B of largest complete link, ties to the first
   pair in the scan, A ascending then B).  The C (complete_linkage,
   best_merge, linkage_update and merge_cluster in ref/engine/cluster.c)
   keeps the links in a matrix L, and its contracts state what L holds and
   which pair a merge takes in ACSL (proofs/acsl/cluster.h): complete_links
   (the loop invariant `links` of complete_linkage), rep_pair and
   merge_best (best_merge's postconditions `pair` and `merge`), lw_min
   (linkage_update's `min`).  Here the ACSL side is not rewritten by hand:
   Wp.WpAcsl (proofs/wpcoq/gen/WpAcsl.v) is the Why3 task WP builds from
   proofs/acsl/cluster.h (proofs/wpcoq/export.sh, as for ClusterJoint.v).
   Its P_clink, P_complete_links, P_rep_pair, P_pair_before,
   P_merge_best, P_lw_min, P_same_alpha and P_same_members are the
   definitions the SMT solvers receive in the proofs of
   ref/engine/cluster.c (model typed+real).

   Reading of the memory.  WP's typed model holds the doubles (α and L) in
   Mf64 and the size_t entries (rep) in Mint, maps from addresses; entry i
   of an array p is the map at shift p i.  The model's α is the upper
   triangle the C reads: alphaN M i j is α at upper m i j (i·m + j when
   i < j, else j·m + i; WP's L_link_pos, link_pos_joint), so it is
   symmetric (alphaN_sym); linkN M a b is L at the same position, and
   repN R i is rep[i] as a nat.  The readings take the memory as an
   argument, since a merge reads two states (before and after).  A size_t
   entry is at least 0 (rep_nat: the typed model's is_uint64 fact, which
   WP gives every read of a size_t).

   Proved (every theorem about every memory and every m).
     - link_pos_joint: WP's L_link_pos is upper;
     - rep_pair_joint, clink_joint, complete_links_joint: P_rep_pair is
       Linkage.v's rep_pair, P_clink is complete_link with the link read
       from L, and P_complete_links is "for every two reps a ≠ b, L(a, b)
       is the complete link of their clusters" (equivalences);
     - merge_best_joint: P_merge_best as best_merge's postcondition
       `merge` states it (scanned up to (m, 0)) is "every pair of reps has
       a link at most best, and every pair before (A, B) one below best"
       (an equivalence);
     - best_merge_joint: the invariant `links` (P_complete_links) and
       best_merge's rep_pair and merge_best on the pair (A, B) it returns,
       with best its link L[B + A·m] (as WP writes the postcondition),
       make (A, B) the model's choice
       clink_choice, read on the C's memory; so, by clink_choice_unique,
       the model's only choice;
     - best_merge_post_joint: the same from best_merge's three
       postconditions as they stand (`pair`, `none`, `merge`): either
       A < m and the model's choices are exactly (A, B), or A = m and the
       model has no choice (fewer than two clusters);
     - lw_min_joint, same_alpha_joint, same_members_joint: P_lw_min is
       "the new L(A, C) is the smaller of the old L(A, C) and L(B, C)";
       P_same_alpha and P_same_members are α and a cluster's members kept
       across two states;
     - update_joint: the Lance–Williams step on one cluster C, from WP's
       P_clink before, P_lw_min, the members of A ∪ B and P_same_members,
       P_same_alpha: the new L(A, C) is the model's complete link of A ∪ B
       and C (Linkage.v's lance_williams; not WP's lemma clink_merge,
       which WpAcsl.v carries as an axiom and this file does not use);
     - merge_step_joint: a whole merge.  From complete_links before it,
       best_merge's rep_pair, linkage_update's `min` and `kept` (lw_min
       for every other rep, the other links unchanged), merge_cluster's
       two postconditions and α unchanged: after it, L holds the model's
       complete links of the merged partition (merge_rep of Linkage.v),
       so P_complete_links holds again: the loop invariant `links` proved
       a second time, from the model and not from WP's lemmas;
     - L_link_pos_exists: WP's translation declares L_link_pos with a
       defining equation (L_link_pos'def, the ACSL logic function
       link_pos), which link_pos_joint uses; a function meets it, so that
       equation assumes nothing a definition would not.
   Print Assumptions (Assumptions.v) lists L_link_pos and L_link_pos'def
   beside the reals' axioms, and nothing else of WpAcsl.v's (WP's lemmas
   on link_pos and clink, which WpAcsl.v carries as axioms, are not used).

   Negative controls: seven lines of proofs/wpcoq/controls.txt plant a
   change in a copy of proofs/acsl/cluster.h (clink's bound turned round,
   clink's attained link made a bound, complete_links over every b and
   not the reps alone, rep_pair's a < b made ≤, merge_best's strict tie
   made ≤, pair_before's b1 < b2 made ≤, lw_min's bound by L(B, C) turned
   round); each must make this file fail to compile, first in the theorem
   that joins that definition.

   What stays read.  That the invariant and best_merge's postconditions
   hold of one memory (the loop head's) is best_merge's assigns clause
   (it writes only *outA and *outB), WP's; that merge_step_joint's
   hypotheses are the contracts of linkage_update and merge_cluster and
   the assertion alpha_kept, stated here over WP's memory as the ACSL
   states them (they are postconditions, not named predicates, so
   WpAcsl.v does not carry them), is read.  The run as a whole is not a
   theorem of this file: that the loop merges until two clusters remain
   (the ghost count cl_reps) and that the sides are the two final
   clusters (side_rep) are complete_linkage's loop invariants and
   postconditions, proved by WP.  That the C's rep is a partition
   (Linkage.v's partition) is not needed by any statement here: the
   model's clusters are named by the reps whatever the other entries. *)
From Coq Require Import ZArith Reals Lia Lra.
From Pflref Require Import Linkage.
From Wp Require Import WpAcsl.

Lemma L_link_pos_exists : exists f : Z -> Z -> Z -> Z,
  forall a b m, ((a < b)%Z -> f a b m = (b + a * m)%Z) /\
                (~ (a < b)%Z -> f a b m = (a + b * m)%Z).
Proof.
  exists (fun a b m => if Z.ltb a b then (b + a * m)%Z else (a + b * m)%Z).
  intros a b m; destruct (Z.ltb_spec a b); split; intro; lia.
Qed.

(* The C's upper-triangle position of the pair (a, b) (upper in
   ref/engine/cluster.c). *)
Definition upper (m a b : nat) : nat :=
  if Nat.ltb a b then (a * m + b)%nat else (b * m + a)%nat.

Lemma upper_sym m a b : upper m a b = upper m b a.
Proof.
  unfold upper; destruct (Nat.ltb_spec a b), (Nat.ltb_spec b a); try lia.
  replace b with a by lia; reflexivity.
Qed.

Section Joint.

Variable m : nat.
Variables alpha Lk rep : addr.

Definition at_ (p : addr) (i : nat) := shift p (Z.of_nat i).
Definition alphaN (Mf64 : addr -> R) (i j : nat) : R := Mf64 (at_ alpha (upper m i j)).
Definition linkN (Mf64 : addr -> R) (a b : nat) : R := Mf64 (at_ Lk (upper m a b)).
Definition repN (Mint : addr -> Z) (i : nat) : nat := Z.to_nat (Mint (at_ rep i)).
Definition rep_nat (Mint : addr -> Z) : Prop := forall i, (0 <= Mint (shift rep i))%Z.

Theorem link_pos_joint a b :
  L_link_pos (Z.of_nat a) (Z.of_nat b) (Z.of_nat m) = Z.of_nat (upper m a b).
Proof.
  destruct (L_link_pos'def (Z.of_nat a) (Z.of_nat b) (Z.of_nat m)) as [Hlt Hge].
  unfold upper; destruct (Nat.ltb_spec a b) as [H | H].
  - rewrite Hlt by lia; lia.
  - rewrite Hge by lia; lia.
Qed.

Lemma alphaN_sym Mf64 i j : alphaN Mf64 i j = alphaN Mf64 j i.
Proof. unfold alphaN; rewrite upper_sym; reflexivity. Qed.

Lemma linkN_sym Mf64 a b : linkN Mf64 a b = linkN Mf64 b a.
Proof. unfold linkN; rewrite upper_sym; reflexivity. Qed.

Lemma repN_eq Mint i a : rep_nat Mint ->
  Mint (shift rep (Z.of_nat i)) = Z.of_nat a <-> repN Mint i = a.
Proof.
  intro Hn; unfold repN, at_; specialize (Hn (Z.of_nat i)); split; intro H.
  - rewrite H; apply Nat2Z.id.
  - rewrite <- H, Z2Nat.id; auto.
Qed.

(* A Z in [0, m) is a nat below m. *)
Lemma z_nat (i : Z) : (0 <= i)%Z -> exists n : nat, i = Z.of_nat n.
Proof. intro H; exists (Z.to_nat i); rewrite Z2Nat.id; auto. Qed.

Theorem rep_pair_joint Mint a b : rep_nat Mint ->
  P_rep_pair Mint rep (Z.of_nat m) (Z.of_nat a) (Z.of_nat b) <->
  rep_pair (repN Mint) m a b.
Proof.
  intro Hn; unfold P_rep_pair, rep_pair, is_rep.
  rewrite !repN_eq by exact Hn; split; intuition lia.
Qed.

Theorem clink_joint Mf64 Mint a b : rep_nat Mint ->
  P_clink Mf64 Mint Lk alpha rep (Z.of_nat m) (Z.of_nat a) (Z.of_nat b) <->
  complete_link (alphaN Mf64) (repN Mint) m a b (linkN Mf64 a b).
Proof.
  intro Hn; unfold P_clink, complete_link, member, alphaN, linkN, at_.
  rewrite link_pos_joint; split.
  - intros [Hl (i & j & H)].
    split.
    + intros i' j' [Hi' Hri'] [Hj' Hrj'].
      rewrite <- (link_pos_joint i' j'); apply Hl; try lia; apply repN_eq; auto.
    + destruct H as ((((((Hri & Hrj) & E) & Hi0) & Hi) & Hj0) & Hj).
      destruct (z_nat i Hi0) as (i' & ->), (z_nat j Hj0) as (j' & ->).
      rewrite link_pos_joint in E.
      exists i', j'; split; [split; [lia | apply repN_eq; auto] |].
      split; [split; [lia | apply repN_eq; auto] | exact E].
  - intros [Hl (i & j & [Hi Hri] & [Hj Hrj] & E)]; split.
    + intros i' j' Hri' Hrj' Hi0 Hi' Hj0 Hj'.
      destruct (z_nat i' Hi0) as (i'' & ->), (z_nat j' Hj0) as (j'' & ->).
      rewrite link_pos_joint; apply Hl; (split; [lia | apply repN_eq; auto]).
    + exists (Z.of_nat i), (Z.of_nat j); rewrite link_pos_joint.
      rewrite !repN_eq by exact Hn; repeat split; auto; lia.
Qed.

Theorem complete_links_joint Mf64 Mint : rep_nat Mint ->
  P_complete_links Mf64 Mint Lk alpha rep (Z.of_nat m) <->
  forall a b, a <> b -> is_rep (repN Mint) m a -> is_rep (repN Mint) m b ->
  complete_link (alphaN Mf64) (repN Mint) m a b (linkN Mf64 a b).
Proof.
  intro Hn; unfold P_complete_links, is_rep; split.
  - intros H a b Hab [Ha Hra] [Hb Hrb]; apply clink_joint; auto.
    apply H; try lia; apply repN_eq; auto.
  - intros H a b Hab Hra Hrb Ha0 Ha Hb0 Hb.
    destruct (z_nat a Ha0) as (a' & ->), (z_nat b Hb0) as (b' & ->).
    apply clink_joint; auto.
    apply H; [lia | split; [lia | apply repN_eq; auto] |
                    split; [lia | apply repN_eq; auto]].
Qed.

(* A pair a < b sits at a·m + b, the index merge_best reads. *)
Lemma linkN_pair Mf64 a b : (a < b)%nat ->
  Mf64 (shift Lk (Z.of_nat b + Z.of_nat a * Z.of_nat m)) = linkN Mf64 a b.
Proof.
  intro Hab; unfold linkN, at_, upper; destruct (Nat.ltb_spec a b); [| lia].
  f_equal; f_equal; lia.
Qed.

Theorem merge_best_joint Mf64 Mint A B best : rep_nat Mint ->
  P_merge_best Mf64 Mint Lk rep (Z.of_nat m) (Z.of_nat m) 0 best
    (Z.of_nat A) (Z.of_nat B) <->
  forall a b, rep_pair (repN Mint) m a b ->
  linkN Mf64 a b <= best /\ (pair_before a b A B -> linkN Mf64 a b < best).
Proof.
  intro Hn; unfold P_merge_best, P_pair_before, pair_before; split.
  - intros [Hlt Hle] a b Hp.
    pose proof Hp as (Hab & [Ha _] & [Hb _]).
    apply rep_pair_joint in Hp; auto.
    rewrite <- linkN_pair by exact Hab; split.
    + apply Hle; auto; lia.
    + intro Hbf; apply Hlt; auto; lia.
  - intro H; split.
    + intros a b Hbf Hp.
      pose proof Hp as ((((_ & _) & Ha0) & Hab0) & _).
      destruct (z_nat a Ha0) as (a' & ->), (z_nat b ltac:(lia)) as (b' & ->).
      apply rep_pair_joint in Hp; auto.
      rewrite linkN_pair by (destruct Hp; lia); apply H; auto; lia.
    + intros a b Hbf Hp.
      pose proof Hp as ((((_ & _) & Ha0) & Hab0) & _).
      destruct (z_nat a Ha0) as (a' & ->), (z_nat b ltac:(lia)) as (b' & ->).
      apply rep_pair_joint in Hp; auto.
      rewrite linkN_pair by (destruct Hp; lia); apply H; auto.
Qed.

(* The joint of a merge: the pair best_merge returns is complete linkage's
   choice on the C's memory, over the clusters of rep and α. *)
Theorem best_merge_joint Mf64 Mint A B : rep_nat Mint ->
  P_complete_links Mf64 Mint Lk alpha rep (Z.of_nat m) ->
  P_rep_pair Mint rep (Z.of_nat m) (Z.of_nat A) (Z.of_nat B) ->
  P_merge_best Mf64 Mint Lk rep (Z.of_nat m) (Z.of_nat m) 0
    (Mf64 (shift Lk (Z.of_nat B + Z.of_nat A * Z.of_nat m)))
    (Z.of_nat A) (Z.of_nat B) ->
  clink_choice (alphaN Mf64) (repN Mint) m A B.
Proof.
  intros Hn Hlinks Hp Hbest.
  apply (rep_pair_joint Mint A B Hn) in Hp.
  rewrite complete_links_joint in Hlinks by exact Hn.
  rewrite linkN_pair in Hbest by (destruct Hp; lia).
  rewrite merge_best_joint in Hbest by exact Hn.
  destruct Hp as (HAB & HA & HB).
  split; [split; auto |].
  exists (linkN Mf64 A B); split; [apply Hlinks; auto; lia |].
  intros a b l (Hab & Ha & Hb) Hl.
  rewrite <- (complete_link_unique _ _ _ _ _ _ _ (Hlinks a b ltac:(lia) Ha Hb) Hl).
  apply Hbest; split; auto.
Qed.

(* best_merge's three postconditions as they stand: either it returns a
   pair, and that pair is the model's only choice, or it returns (m, m),
   and the model has no choice. *)
Theorem best_merge_post_joint Mf64 Mint A B : rep_nat Mint ->
  P_complete_links Mf64 Mint Lk alpha rep (Z.of_nat m) ->
  (P_rep_pair Mint rep (Z.of_nat m) (Z.of_nat A) (Z.of_nat B) \/
   Z.of_nat m = Z.of_nat B /\ Z.of_nat m = Z.of_nat A) ->
  (Z.of_nat A = Z.of_nat m ->
   forall a b, ~ P_rep_pair Mint rep (Z.of_nat m) a b) ->
  ((Z.of_nat A < Z.of_nat m)%Z ->
   P_merge_best Mf64 Mint Lk rep (Z.of_nat m) (Z.of_nat m) 0
     (Mf64 (shift Lk (Z.of_nat B + Z.of_nat A * Z.of_nat m)))
     (Z.of_nat A) (Z.of_nat B)) ->
  ((A < m)%nat /\
   forall A' B', clink_choice (alphaN Mf64) (repN Mint) m A' B' <-> A' = A /\ B' = B) \/
  (A = m /\ forall A' B', ~ clink_choice (alphaN Mf64) (repN Mint) m A' B').
Proof.
  intros Hn Hlinks Hpair Hnone Hmerge.
  destruct Hpair as [Hp | [_ HA]].
  2: { right; split; [lia |].
       intros A' B' [Hp' _].
       apply (Hnone ltac:(lia) (Z.of_nat A') (Z.of_nat B')).
       apply rep_pair_joint; auto. }
  - assert (HAm : (A < m)%nat) by (destruct Hp as ((((_ & _) & _) & ?) & ?); lia).
    assert (Hc : clink_choice (alphaN Mf64) (repN Mint) m A B)
      by (apply best_merge_joint; auto; apply Hmerge; lia).
    left; split; [exact HAm |]; intros A' B'; split.
    + intro Hc'; destruct (clink_choice_unique _ _ _ _ _ _ _ Hc' Hc); auto.
    + intros [-> ->]; exact Hc.
Qed.

(* Two states of a merge: M1/R1 after, M0/R0 before. *)
Theorem lw_min_joint M1 M0 A B C :
  P_lw_min M1 M0 Lk Lk (Z.of_nat m) (Z.of_nat A) (Z.of_nat B) (Z.of_nat C) <->
  linkN M1 A C = Rmin (linkN M0 A C) (linkN M0 B C).
Proof.
  unfold P_lw_min, linkN, at_; rewrite !link_pos_joint.
  unfold Rmin; destruct (Rle_dec _ _); split; intro H.
  - destruct H as ([H1 H2] & [H3 | H3]); lra.
  - rewrite H; split; [split; lra | left; reflexivity].
  - destruct H as ([H1 H2] & [H3 | H3]); lra.
  - rewrite H; split; [split; lra | right; reflexivity].
Qed.

Theorem same_alpha_joint M1 M0 :
  P_same_alpha M1 M0 alpha (Z.of_nat m) <->
  forall i j, (i < m)%nat -> (j < m)%nat -> alphaN M1 i j = alphaN M0 i j.
Proof.
  unfold P_same_alpha, alphaN, at_; split.
  - intros H i j Hi Hj; rewrite <- link_pos_joint; apply H; lia.
  - intros H i j Hi0 Hi Hj0 Hj.
    destruct (z_nat i Hi0) as (i' & ->), (z_nat j Hj0) as (j' & ->).
    rewrite link_pos_joint; apply H; lia.
Qed.

Theorem same_members_joint R1 R0 c : rep_nat R1 -> rep_nat R0 ->
  P_same_members R1 R0 rep (Z.of_nat m) (Z.of_nat c) <->
  forall i, (i < m)%nat -> (repN R1 i = c <-> repN R0 i = c).
Proof.
  intros H1 H0; unfold P_same_members; split.
  - intros H i Hi; rewrite <- !repN_eq by assumption; apply H; lia.
  - intros H i Hi0 Hi.
    destruct (z_nat i Hi0) as (i' & ->).
    rewrite !repN_eq by assumption; apply H; lia.
Qed.

(* The Lance–Williams step on one cluster C, as the assertions merge_pairs
   and joined of complete_linkage give it: the new L(A, C) is the model's
   complete link of A ∪ B and C after the merge. *)
Theorem update_joint M1 M0 R1 R0 A B C : rep_nat R1 -> rep_nat R0 ->
  P_clink M0 R0 Lk alpha rep (Z.of_nat m) (Z.of_nat A) (Z.of_nat C) ->
  P_clink M0 R0 Lk alpha rep (Z.of_nat m) (Z.of_nat B) (Z.of_nat C) ->
  P_lw_min M1 M0 Lk Lk (Z.of_nat m) (Z.of_nat A) (Z.of_nat B) (Z.of_nat C) ->
  (forall i, (0 <= i)%Z -> (i < Z.of_nat m)%Z ->
     (R1 (shift rep i) = Z.of_nat A <->
      R0 (shift rep i) = Z.of_nat A \/ R0 (shift rep i) = Z.of_nat B)) ->
  P_same_members R1 R0 rep (Z.of_nat m) (Z.of_nat C) ->
  P_same_alpha M1 M0 alpha (Z.of_nat m) ->
  complete_link (alphaN M1) (repN R1) m A C (linkN M1 A C) /\
  linkN M1 A C = Rmin (linkN M0 A C) (linkN M0 B C).
Proof.
  intros H1 H0 HAC HBC Hlw Hjoin HC Hal.
  apply (clink_joint M0 R0 A C H0) in HAC; apply (clink_joint M0 R0 B C H0) in HBC.
  apply lw_min_joint in Hlw; pose proof (proj1 (same_members_joint R1 R0 C H1 H0) HC) as HC1.
  pose proof (proj1 (same_alpha_joint M1 M0) Hal) as Hal1.
  split; [| exact Hlw]; rewrite Hlw.
  apply (complete_link_ext (alphaN M0)); [intros; symmetry; auto |].
  apply (lance_williams _ (repN R0) _ _ _ B); auto.
  intros i Hi; rewrite <- !repN_eq by assumption; apply Hjoin; lia.
Qed.

(* A whole merge of B into A: the links L holds after linkage_update and
   merge_cluster are the model's complete links of the merged partition.
   Hypotheses, in the order of complete_linkage's loop body: the invariant
   `links` before (P_complete_links), best_merge's pair (P_rep_pair),
   linkage_update's `min` and `kept` (L0 → L1, rep unchanged: R0),
   merge_cluster's two postconditions (R0 → R1), and α unchanged
   (the assertion alpha_kept). *)
Theorem merge_step_joint M1 M0 R1 R0 A B : rep_nat R1 -> rep_nat R0 ->
  P_complete_links M0 R0 Lk alpha rep (Z.of_nat m) ->
  P_rep_pair R0 rep (Z.of_nat m) (Z.of_nat A) (Z.of_nat B) ->
  (forall C, (0 <= C)%Z -> (C < Z.of_nat m)%Z -> R0 (shift rep C) = C ->
     C <> Z.of_nat A -> C <> Z.of_nat B ->
     P_lw_min M1 M0 Lk Lk (Z.of_nat m) (Z.of_nat A) (Z.of_nat B) C) ->
  (forall a b, (0 <= a)%Z -> (a < Z.of_nat m)%Z -> (0 <= b)%Z -> (b < Z.of_nat m)%Z ->
     a <> b -> a <> Z.of_nat A -> b <> Z.of_nat A ->
     M1 (shift Lk (L_link_pos a b (Z.of_nat m))) =
     M0 (shift Lk (L_link_pos a b (Z.of_nat m)))) ->
  (forall v, (0 <= v)%Z -> (v < Z.of_nat m)%Z -> R0 (shift rep v) = Z.of_nat B ->
     R1 (shift rep v) = Z.of_nat A) ->
  (forall v, (0 <= v)%Z -> (v < Z.of_nat m)%Z -> R0 (shift rep v) <> Z.of_nat B ->
     R1 (shift rep v) = R0 (shift rep v)) ->
  P_same_alpha M1 M0 alpha (Z.of_nat m) ->
  (forall i, (i < m)%nat -> repN R1 i = merge_rep (repN R0) A B i) /\
  (forall a b, a <> b -> is_rep (repN R1) m a -> is_rep (repN R1) m b ->
   complete_link (alphaN M1) (repN R1) m a b (linkN M1 a b)) /\
  P_complete_links M1 R1 Lk alpha rep (Z.of_nat m).
Proof.
  intros H1 H0 Hlinks Hp Hmin Hkept Hto Hfix Hal.
  pose proof (proj1 (complete_links_joint M0 R0 H0) Hlinks) as Hl0; clear Hlinks.
  apply (rep_pair_joint R0 A B H0) in Hp.
  pose proof (proj1 (same_alpha_joint M1 M0) Hal) as Hal1.
  pose proof Hp as (HAB & [HAm HrA] & [HBm HrB]).
  (* rep after the merge is merge_rep of rep before *)
  assert (Hrep : forall i, (i < m)%nat -> repN R1 i = merge_rep (repN R0) A B i).
  { intros i Hi; unfold merge_rep.
    destruct (Nat.eqb_spec (repN R0 i) B) as [E | E].
    - apply repN_eq; auto; apply Hto; try lia; apply repN_eq; auto.
    - unfold repN, at_; rewrite (Hfix (Z.of_nat i)); try lia; auto.
      rewrite repN_eq; auto. }
  destruct (merge_clusters (repN R0) m A B Hp) as (HjA & Hkeep & Hreps).
  assert (Hmem : forall c i, (i < m)%nat -> c <> A -> c <> B ->
                 (repN R1 i = c <-> repN R0 i = c))
    by (intros c i Hi HcA HcB; rewrite Hrep by exact Hi; apply Hkeep; auto).
  assert (HjA1 : forall i, (i < m)%nat -> (repN R1 i = A <-> repN R0 i = A \/ repN R0 i = B))
    by (intros i Hi; rewrite Hrep by exact Hi; apply HjA; exact Hi).
  assert (Hreps1 : forall c, is_rep (repN R1) m c -> is_rep (repN R0) m c /\ c <> B).
  { intros c [Hc Hrc]; apply Hreps; split; auto; rewrite <- Hrep; auto. }
  (* the link of A ∪ B with another cluster C *)
  assert (HA : forall C, C <> A -> is_rep (repN R1) m C ->
               complete_link (alphaN M1) (repN R1) m A C (linkN M1 A C)).
  { intros C HCA HC1; destruct (Hreps1 C HC1) as [[HCm HrC] HCB].
    assert (Hlw : linkN M1 A C = Rmin (linkN M0 A C) (linkN M0 B C)).
    { apply lw_min_joint, Hmin; try lia; apply repN_eq; auto. }
    rewrite Hlw.
    apply (complete_link_ext (alphaN M0)); [intros; symmetry; auto |].
    apply (lance_williams _ (repN R0) _ _ _ B).
    - apply Hl0; auto; split; auto.
    - apply Hl0; auto; split; auto.
    - exact HjA1.
    - intros i Hi; apply Hmem; auto. }
  split; [exact Hrep |].
  assert (Hall : forall a b, a <> b -> is_rep (repN R1) m a -> is_rep (repN R1) m b ->
                 complete_link (alphaN M1) (repN R1) m a b (linkN M1 a b)).
  { intros a b Hab Ha Hb.
    destruct (Nat.eq_dec a A) as [-> | HaA]; [apply HA; auto |].
    destruct (Nat.eq_dec b A) as [-> | HbA].
    - rewrite linkN_sym; apply complete_link_sym; [apply alphaN_sym |].
      apply HA; auto.
    - destruct (Hreps1 a Ha) as [Ha0 HaB], (Hreps1 b Hb) as [Hb0 HbB].
      destruct Ha0 as [Ham _], Hb0 as [Hbm _].
      assert (E : linkN M1 a b = linkN M0 a b).
      { unfold linkN, at_; rewrite <- link_pos_joint; apply Hkept; lia. }
      rewrite E.
      apply (complete_link_same (alphaN M0) _ (repN R0)).
      + intros; symmetry; auto.
      + intros i Hi; apply Hmem; auto.
      + intros i Hi; apply Hmem; auto.
      + apply Hl0; auto; apply Hreps1; auto. }
  split; [exact Hall |].
  apply complete_links_joint; auto.
Qed.

End Joint.
