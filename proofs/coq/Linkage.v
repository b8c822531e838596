(* proofs/coq/Linkage.v: one step of complete linkage, as the textbook
   states it.

   CFL's variant cfl.bipartition = complete_linkage (the CFL notebook's
   scipy-style agglomerative clustering on the distance −α) merges, at
   each step, the two clusters whose least similar pair is the most
   similar, until two clusters remain.  This file states one step of it
   over plain nat-indexed functions, with no reference to how the C keeps
   its links (LinkageJoint.v joins it to the C's contracts).

   Model.  The items 0..m−1, similarities α : nat → nat → ℝ (symmetric
   where a statement needs it).  A partition is given by a representative
   map rep: the cluster named a is the items i < m with rep i = a
   (member), and a name is a rep, rep a = a (is_rep; partition: every
   item's rep is a rep).  The complete link of two clusters a, b is the
   least α over the pairs of their members: complete_link a b l states that
   l is that minimum (a lower bound of every α i j, i in a, j in b, and
   attained by one such pair); a relation, not a function, so that no
   order of the pairs is fixed.  The step's choice (clink_choice A B): of
   the pairs of clusters A < B (by rep), the one with the largest complete
   link, ties to the first pair in the scan order (A ascending, then B
   ascending: pair_before).  On the distance −α this is the textbook's
   rule, the pair of clusters whose largest distance is the smallest; the
   tie rule is the one the C's scan takes (best_merge).  The merge
   (merge_rep) names A ∪ B by A, the smaller rep.

   C code it models: complete_linkage, best_merge, linkage_update and
   merge_cluster in ref/engine/cluster.c; LinkageJoint.v proves their
   contracts, as WP translates them, to be this model's definitions.

   Proved.
     - complete_link_unique: a complete link is unique (the minimum);
     - complete_link_sym: for a symmetric α, the link of a, b is that of
       b, a;
     - complete_link_exists: two clusters with members have a complete
       link (a minimum over finitely many pairs);
     - clink_choice_unique: at most one pair is the step's choice (the
       largest link with its tie rule determines the pair);
     - clink_choice_exists: when at least two clusters remain, the step
       has a choice (with clink_choice_unique: exactly one pair);
     - complete_link_ext, complete_link_same: a complete link reads α on
       the m items and the members of its two clusters, nothing else;
     - merge_clusters: merging B into A (merge_rep) makes A's cluster
       A ∪ B, keeps every other cluster's members, and leaves the reps
       less B; merge_partition: it keeps a partition;
     - lance_williams: the complete link of A ∪ B with another cluster C is
       the smaller of the links of A with C and of B with C (the
       Lance–Williams update of complete linkage in similarities), for any
       merged map whose cluster A holds the members of A and of B and whose
       cluster C is C's. *)

From Coq Require Import Reals Lia Lra Arith.
Open Scope R_scope.

Section Step.

Variable alpha : nat -> nat -> R.
Variable rep : nat -> nat.
Variable m : nat.

Definition is_rep (a : nat) : Prop := (a < m)%nat /\ rep a = a.
Definition member (a i : nat) : Prop := (i < m)%nat /\ rep i = a.
Definition partition : Prop := forall i, (i < m)%nat -> is_rep (rep i).

(* l is the least α over the pairs (i, j), i in cluster a, j in cluster b *)
Definition complete_link (a b : nat) (l : R) : Prop :=
  (forall i j, member a i -> member b j -> l <= alpha i j) /\
  (exists i j, member a i /\ member b j /\ alpha i j = l).

(* the pairs of clusters A < B, and the scan's order on them *)
Definition rep_pair (a b : nat) : Prop := (a < b)%nat /\ is_rep a /\ is_rep b.
Definition pair_before (a1 b1 a2 b2 : nat) : Prop :=
  (a1 < a2)%nat \/ (a1 = a2 /\ b1 < b2)%nat.

(* the step's choice: the largest complete link, ties to the first pair *)
Definition clink_choice (A B : nat) : Prop :=
  rep_pair A B /\
  exists lAB, complete_link A B lAB /\
    forall a b l, rep_pair a b -> complete_link a b l ->
      l <= lAB /\ (pair_before a b A B -> l < lAB).

Lemma complete_link_unique a b l l' :
  complete_link a b l -> complete_link a b l' -> l = l'.
Proof.
  intros [Hl (i & j & Hi & Hj & Ei)] [Hl' (i' & j' & Hi' & Hj' & Ei')].
  specialize (Hl i' j' Hi' Hj'); specialize (Hl' i j Hi Hj); lra.
Qed.

Lemma complete_link_sym a b l :
  (forall i j, alpha i j = alpha j i) ->
  complete_link a b l -> complete_link b a l.
Proof.
  intros Hs [Hl (i & j & Hi & Hj & Ei)]; split.
  - intros i' j' Hi' Hj'; rewrite Hs; auto.
  - exists j, i; rewrite Hs; auto.
Qed.

Theorem clink_choice_unique A B A' B' :
  clink_choice A B -> clink_choice A' B' -> A = A' /\ B = B'.
Proof.
  intros [Hp (l & Hl & H)] [Hp' (l' & Hl' & H')].
  destruct (H A' B' l' Hp' Hl') as [H1 H1s].
  destruct (H' A B l Hp Hl) as [H2 H2s].
  destruct (lt_eq_lt_dec A A') as [[Ha | Ha] | Ha].
  - assert (l < l') by (apply H2s; left; exact Ha); lra.
  - subst A'; destruct (lt_eq_lt_dec B B') as [[Hb | Hb] | Hb].
    + assert (l < l') by (apply H2s; right; auto); lra.
    + auto.
    + assert (l' < l) by (apply H1s; right; auto); lra.
  - assert (l' < l) by (apply H1s; left; exact Ha); lra.
Qed.

(* The least of f over the first n numbers that pass the test t: a
   witness below n that passes, f at it a lower bound of f over the others
   that pass. *)
Lemma finite_min (t : nat -> Prop) (f : nat -> R) n :
  (forall i, t i \/ ~ t i) ->
  (exists i, (i < n)%nat /\ t i) ->
  exists i, (i < n)%nat /\ t i /\ forall j, (j < n)%nat -> t j -> f i <= f j.
Proof.
  intros Hdec; induction n as [| n IH]; intros (i & Hi & Ht); [lia |].
  assert (Hlow : (exists i, (i < n)%nat /\ t i) \/
                 forall i, (i < n)%nat -> ~ t i).
  { clear IH Hi Ht i; induction n as [| n IHn].
    - right; intros; lia.
    - destruct IHn as [(i & Hi & Ht) | Hno].
      + left; exists i; split; [lia | exact Ht].
      + destruct (Hdec n) as [Hn | Hn].
        * left; exists n; split; [lia | exact Hn].
        * right; intros i Hi; destruct (Nat.eq_dec i n) as [-> | Hne];
            [exact Hn | apply Hno; lia]. }
  destruct Hlow as [Hex | Hno].
  - destruct (IH Hex) as (k & Hk & Htk & Hmin).
    destruct (Hdec n) as [Hn | Hn].
    + destruct (Rle_lt_dec (f k) (f n)) as [Hle | Hlt].
      * exists k; split; [lia |]; split; [exact Htk |].
        intros j Hj Htj; destruct (Nat.eq_dec j n) as [-> | Hne];
          [exact Hle | apply Hmin; [lia | exact Htj]].
      * exists n; split; [lia |]; split; [exact Hn |].
        intros j Hj Htj; destruct (Nat.eq_dec j n) as [-> | Hne];
          [lra | specialize (Hmin j ltac:(lia) Htj); lra].
    + exists k; split; [lia |]; split; [exact Htk |].
      intros j Hj Htj; destruct (Nat.eq_dec j n) as [-> | Hne];
        [contradiction | apply Hmin; [lia | exact Htj]].
  - exists n; split; [lia |]; split.
    + destruct (Nat.eq_dec i n) as [-> | Hne]; [exact Ht |].
      exfalso; apply (Hno i); [lia | exact Ht].
    + intros j Hj Htj; destruct (Nat.eq_dec j n) as [-> | Hne]; [lra |].
      exfalso; apply (Hno j); [lia | exact Htj].
Qed.

(* The code i·n + j of a pair, j < n: below that of any later row. *)
Lemma code_lt (a c b n : nat) : (a < c)%nat -> (b < n)%nat -> (a * n + b < c * n)%nat.
Proof.
  intros Hac Hb.
  assert (H : (S a * n <= c * n)%nat) by (apply Nat.mul_le_mono_r; lia).
  rewrite Nat.mul_succ_l in H; lia.
Qed.

(* Two clusters with members have a complete link: the least α over the
   pairs, the pair (i, j) coded as i·m + j. *)
Theorem complete_link_exists a b :
  (exists i, member a i) -> (exists j, member b j) ->
  exists l, complete_link a b l.
Proof.
  intros (i0 & Hi0) (j0 & Hj0).
  assert (Hm : (0 < m)%nat) by (destruct Hi0; lia).
  set (t k := member a (k / m) /\ member b (k mod m)).
  assert (Hdec : forall k, t k \/ ~ t k).
  { intro k; unfold t, member.
    destruct (lt_dec (k / m) m), (Nat.eq_dec (rep (k / m)) a),
             (lt_dec (k mod m) m), (Nat.eq_dec (rep (k mod m)) b);
      tauto. }
  assert (Hcode : forall i j, (j < m)%nat -> ((i * m + j) / m = i /\ (i * m + j) mod m = j)%nat).
  { intros i j Hj; split.
    - rewrite Nat.div_add_l by lia; rewrite Nat.div_small by lia; lia.
    - rewrite Nat.add_comm, Nat.mod_add by lia; apply Nat.mod_small; lia. }
  destruct (finite_min t (fun k => alpha (k / m) (k mod m)) (m * m)%nat Hdec)
    as (k & Hk & [Hka Hkb] & Hmin).
  { exists (i0 * m + j0)%nat; destruct Hi0, Hj0; split; [apply code_lt; auto |].
    unfold t; destruct (Hcode i0 j0 ltac:(lia)) as [-> ->]; unfold member; auto. }
  exists (alpha (k / m) (k mod m)); split.
  - intros i j Hi Hj.
    destruct (Hcode i j ltac:(destruct Hj; lia)) as [E1 E2].
    specialize (Hmin (i * m + j)%nat); rewrite E1, E2 in Hmin.
    apply Hmin; [destruct Hi, Hj; apply code_lt; auto | unfold t; rewrite E1, E2; auto].
  - exists (k / m)%nat, (k mod m)%nat; auto.
Qed.

(* The first pair of largest value: over the numbers below n that pass t,
   each with a value (g, a functional relation), one k of the largest
   value whose every predecessor that passes has a smaller one. *)
Lemma finite_first_max (t : nat -> Prop) (g : nat -> R -> Prop) n :
  (forall k, t k \/ ~ t k) ->
  (forall k, t k -> exists l, g k l) ->
  (forall k l l', g k l -> g k l' -> l = l') ->
  (exists k, (k < n)%nat /\ t k) ->
  exists k l, (k < n)%nat /\ t k /\ g k l /\
    forall j l', (j < n)%nat -> t j -> g j l' -> l' <= l /\ ((j < k)%nat -> l' < l).
Proof.
  intros Hdec Hex Hfun; induction n as [| n IH]; intros (i & Hi & Ht); [lia |].
  assert (Hlow : (exists i, (i < n)%nat /\ t i) \/
                 forall i, (i < n)%nat -> ~ t i).
  { clear IH Hi Ht i; induction n as [| n IHn].
    - right; intros; lia.
    - destruct IHn as [(i & Hi & Ht) | Hno].
      + left; exists i; split; [lia | exact Ht].
      + destruct (Hdec n) as [Hn | Hn].
        * left; exists n; split; [lia | exact Hn].
        * right; intros i Hi; destruct (Nat.eq_dec i n) as [-> | Hne];
            [exact Hn | apply Hno; lia]. }
  destruct Hlow as [Hlow | Hno].
  - destruct (IH Hlow) as (k & l & Hk & Htk & Hgk & Hmax).
    destruct (Hdec n) as [Hn | Hn].
    + destruct (Hex n Hn) as (ln & Hgn).
      destruct (Rle_lt_dec ln l) as [Hle | Hlt].
      * exists k, l; split; [lia |]; split; [exact Htk |]; split; [exact Hgk |].
        intros j l' Hj Htj Hgj; destruct (Nat.eq_dec j n) as [-> | Hne].
        -- rewrite (Hfun n l' ln Hgj Hgn); split; [exact Hle | lia].
        -- apply (Hmax j l'); auto; lia.
      * exists n, ln; split; [lia |]; split; [exact Hn |]; split; [exact Hgn |].
        intros j l' Hj Htj Hgj; destruct (Nat.eq_dec j n) as [-> | Hne].
        -- rewrite (Hfun n l' ln Hgj Hgn); split; [lra | lia].
        -- destruct (Hmax j l' ltac:(lia) Htj Hgj); split; intros; lra.
    + exists k, l; split; [lia |]; split; [exact Htk |]; split; [exact Hgk |].
      intros j l' Hj Htj Hgj; destruct (Nat.eq_dec j n) as [-> | Hne];
        [contradiction | apply (Hmax j l'); auto; lia].
  - assert (Htn : t n).
    { destruct (Nat.eq_dec i n) as [-> | Hne]; [exact Ht |].
      exfalso; apply (Hno i); [lia | exact Ht]. }
    destruct (Hex n Htn) as (ln & Hgn).
    exists n, ln; split; [lia |]; split; [exact Htn |]; split; [exact Hgn |].
    intros j l' Hj Htj Hgj; destruct (Nat.eq_dec j n) as [-> | Hne].
    + rewrite (Hfun n l' ln Hgj Hgn); split; [lra | lia].
    + exfalso; apply (Hno j); [lia | exact Htj].
Qed.

(* When two clusters remain, the step has a choice: the first pair in the
   scan of largest complete link.  With clink_choice_unique, exactly one
   pair is the step's. *)
Theorem clink_choice_exists :
  (exists a b, rep_pair a b) -> exists A B, clink_choice A B.
Proof.
  intros (a0 & b0 & Hp0).
  assert (Hm : (0 < m)%nat) by (destruct Hp0 as (_ & _ & [Hb _]); lia).
  assert (Hcode : forall i j, (j < m)%nat -> ((i * m + j) / m = i /\ (i * m + j) mod m = j)%nat).
  { intros i j Hj; split.
    - rewrite Nat.div_add_l by lia; rewrite Nat.div_small by lia; lia.
    - rewrite Nat.add_comm, Nat.mod_add by lia; apply Nat.mod_small; lia. }
  set (t k := rep_pair (k / m) (k mod m)).
  set (g k l := complete_link (k / m) (k mod m) l).
  assert (Hdec : forall k, t k \/ ~ t k).
  { intro k; unfold t, rep_pair, is_rep.
    destruct (lt_dec (k / m) (k mod m)), (lt_dec (k / m) m),
             (Nat.eq_dec (rep (k / m)) (k / m)), (lt_dec (k mod m) m),
             (Nat.eq_dec (rep (k mod m)) (k mod m)); tauto. }
  assert (Hex : forall k, t k -> exists l, g k l).
  { intros k (_ & [Ha Hra] & [Hb Hrb]); apply complete_link_exists.
    - exists (k / m)%nat; split; auto.
    - exists (k mod m)%nat; split; auto. }
  assert (Hfun : forall k l l', g k l -> g k l' -> l = l')
    by (intros k l l'; apply complete_link_unique).
  destruct (finite_first_max t g (m * m)%nat Hdec Hex Hfun) as (k & l & Hk & Htk & Hgk & Hmax).
  { exists (a0 * m + b0)%nat; pose proof Hp0 as (Hab & [Ha _] & [Hb _]).
    split; [apply code_lt; auto |].
    unfold t; destruct (Hcode a0 b0 Hb) as [-> ->]; exact Hp0. }
  exists (k / m)%nat, (k mod m)%nat; split; [exact Htk |].
  exists l; split; [exact Hgk |].
  intros a b l' Hp Hl'.
  destruct Hp as (Hab & [Ha Hra] & [Hb Hrb]).
  destruct (Hcode a b Hb) as [E1 E2].
  destruct (Hmax (a * m + b)%nat l' ltac:(apply code_lt; auto)) as [Hle Hlt].
  - unfold t; rewrite E1, E2; split; [exact Hab |]; split; split; auto.
  - unfold g; rewrite E1, E2; exact Hl'.
  - split; [exact Hle |].
    intros [H1 | [H1 H2]]; apply Hlt.
    + pose proof (code_lt a (k / m) b m H1 Hb).
      rewrite (Nat.div_mod_eq k m), (Nat.mul_comm m); lia.
    + subst a; rewrite (Nat.div_mod_eq k m) at 2; rewrite (Nat.mul_comm m); lia.
Qed.

(* The merge of B into A: the items of B take A for their rep. *)
Definition merge_rep (A B : nat) (i : nat) : nat :=
  if Nat.eqb (rep i) B then A else rep i.

End Step.

(* A complete link reads α only on the m items. *)
Lemma complete_link_ext alpha alpha' rep m a b l :
  (forall i j, (i < m)%nat -> (j < m)%nat -> alpha i j = alpha' i j) ->
  complete_link alpha rep m a b l -> complete_link alpha' rep m a b l.
Proof.
  intros He [Hl (i & j & Hi & Hj & Ei)]; split.
  - intros i' j' Hi' Hj'; rewrite <- He by (destruct Hi', Hj'; lia); auto.
  - exists i, j; rewrite <- He by (destruct Hi, Hj; lia); auto.
Qed.

(* A complete link depends only on the members of its two clusters and on
   α over the m items: r0 and r1 with the same clusters a and b, α and α'
   equal on the items, have the same complete link of a and b. *)
Lemma complete_link_same alpha alpha' r0 r1 m a b l :
  (forall i j, (i < m)%nat -> (j < m)%nat -> alpha i j = alpha' i j) ->
  (forall i, (i < m)%nat -> (r1 i = a <-> r0 i = a)) ->
  (forall i, (i < m)%nat -> (r1 i = b <-> r0 i = b)) ->
  complete_link alpha r0 m a b l -> complete_link alpha' r1 m a b l.
Proof.
  intros He Ha Hb [Hl (i & j & [Hi Hri] & [Hj Hrj] & Ei)]; split.
  - intros i' j' [Hi' Hri'] [Hj' Hrj']; rewrite <- He by auto.
    apply Hl; split; auto; [apply Ha | apply Hb]; auto.
  - exists i, j; rewrite <- He by auto.
    split; [split; [exact Hi | apply Ha; auto] |
            split; [split; [exact Hj | apply Hb; auto] | exact Ei]].
Qed.

(* The clusters after merging B into A: A ∪ B for A, every other cluster
   keeps its members, and the reps are those before less B. *)
Theorem merge_clusters rep m A B :
  rep_pair rep m A B ->
  let rep' := merge_rep rep A B in
  (forall i, (i < m)%nat -> (rep' i = A <-> rep i = A \/ rep i = B)) /\
  (forall c i, c <> A -> c <> B -> (rep' i = c <-> rep i = c)) /\
  (forall c, is_rep rep' m c <-> is_rep rep m c /\ c <> B).
Proof.
  intros (Hab & [Ha Hra] & [Hb Hrb]) rep'.
  split; [| split].
  - intros i _; unfold rep', merge_rep.
    destruct (Nat.eqb_spec (rep i) B); intuition lia.
  - intros c i HcA HcB; unfold rep', merge_rep.
    destruct (Nat.eqb_spec (rep i) B); intuition lia.
  - intro c; unfold is_rep, rep', merge_rep; split.
    + intros [Hc Hrc].
      destruct (Nat.eqb_spec (rep c) B) as [E | E].
      * subst c; lia.
      * split; [split; auto | intro; subst c; auto].
    + intros [[Hc Hrc] HcB]; split; auto; rewrite Hrc.
      destruct (Nat.eqb_spec c B); [contradiction | reflexivity].
Qed.

(* Merging B into A keeps a partition. *)
Theorem merge_partition rep m A B :
  partition rep m -> rep_pair rep m A B -> partition (merge_rep rep A B) m.
Proof.
  intros Hpart Hp i Hi.
  destruct (merge_clusters rep m A B Hp) as (_ & _ & Hr).
  apply Hr; unfold merge_rep.
  destruct Hp as (Hab & [Ha Hra] & [Hb Hrb]).
  destruct (Nat.eqb_spec (rep i) B) as [E | E].
  - split; [split; auto | lia].
  - split; [apply Hpart; auto | exact E].
Qed.

(* Lance–Williams for complete linkage in similarities: the link of A ∪ B
   with C is the smaller of the links of A and of B with C.  r0 is the
   partition before the merge, r1 after it: r1's cluster A holds the
   members of A and of B, its cluster C those of C. *)
Theorem lance_williams alpha r0 r1 m A B C lA lB :
  complete_link alpha r0 m A C lA -> complete_link alpha r0 m B C lB ->
  (forall i, (i < m)%nat -> (r1 i = A <-> r0 i = A \/ r0 i = B)) ->
  (forall i, (i < m)%nat -> (r1 i = C <-> r0 i = C)) ->
  complete_link alpha r1 m A C (Rmin lA lB).
Proof.
  intros [HA (iA & jA & HiA & HjA & EA)] [HB (iB & jB & HiB & HjB & EB)] Hj Hc.
  split.
  - intros i j [Hi Hri] [Hjm Hrj].
    assert (Hj0 : member r0 m C j) by (split; [| apply Hc]; auto).
    destruct (proj1 (Hj i Hi) Hri) as [E | E].
    + specialize (HA i j (conj Hi E) Hj0); pose proof (Rmin_l lA lB); lra.
    + specialize (HB i j (conj Hi E) Hj0); pose proof (Rmin_r lA lB); lra.
  - unfold Rmin; destruct (Rle_dec lA lB).
    + exists iA, jA; destruct HiA as [Hi Hri], HjA as [Hjm Hrj].
      split; [split; [exact Hi | apply Hj; auto] |
              split; [split; [exact Hjm | apply Hc; auto] | assumption]].
    + exists iB, jB; destruct HiB as [Hi Hri], HjB as [Hjm Hrj].
      split; [split; [exact Hi | apply Hj; auto] |
              split; [split; [exact Hjm | apply Hc; auto] | assumption]].
Qed.
