(* proofs/coq/PrimControl.v: the negative control of Bipartition.v's
   prim_is_kruskal, prim_maximal and prim_bipartition_optimal.

   A planted bug, as the WP controls of proofs/negative.txt plant one in a
   copy of the C: Prim that takes the WORST edge across the cut at every
   join instead of the best (edge_before's test reversed in prim_next).
   The control is a model on which Coq proves that the theorems' statements
   fail, and that the one hypothesis the bug breaks is prim_cut (the WP
   assertion cut_property), every other hypothesis holding.  So neither
   theorem holds for a mutant of that kind, and the hypothesis that rules
   it out is the one ClusterJoint.v's run_joint proves of the C's run
   from its postcondition `run` (cut_property at every join).

   Model.  Three items 0, 1, 2 (m = 3), the upper-triangle positions of
   edge_pos (0·3+1 = 1, 0·3+2 = 2, 1·3+2 = 5, the diagonal 0, 4, 8) and
   α₀₁ = 3, α₀₂ = 2, α₁₂ = 1 (distinct, so the tie rule does not enter).
     correct Prim from 0: joins 1 by (0, 1), then 2 by (0, 2): weight 5;
     worst-edge Prim from 0: joins 2 by (0, 2), then 1 by (2, 1): weight 3.

   Proved.
     - control_hypotheses: the mutant's run satisfies order_inj,
       order_onto, par_earlier and cut_joined, and its positions pos_sym
       and pos_inj: everything prim_is_kruskal and prim_maximal assume but
       prim_cut;
     - control_cut_fails: it does not satisfy prim_cut;
     - control_correct_cut: the correct run does (prim_cut is not an
       impossible hypothesis, so the theorems are not vacuous here);
     - control_not_kruskal: the mutant's tree is not Kruskal's (Kruskal
       keeps (0, 1), which the mutant lacks): prim_is_kruskal's
       conclusion fails;
     - control_not_maximal: a spanning tree (the correct one) weighs more
       than the mutant's: prim_maximal's conclusion fails;
     - control_cut_hypotheses, control_not_optimal: the mutant's tree less
       its last edge satisfies the hypotheses of prim_bipartition_optimal
       on the cut edge and the sides (c_last, F_edges, side_components),
       and its sides are not optimal: prim_bipartition_optimal's
       conclusion fails;
     - control_kruskal_refutes, control_maximal_refutes,
       control_optimal_refutes: each theorem, applied to the mutant's run,
       refutes its prim_cut (the theorems are used, not restated). *)

From Coq Require Import Reals List Bool Lia Lra.
From Pflref Require Import Bipartition.
Import ListNotations.
Open Scope R_scope.

Inductive item := i0 | i1 | i2.

Lemma item_dec (x y : item) : {x = y} + {x <> y}.
Proof. decide equality. Qed.

Definition num (x : item) : nat := match x with i0 => 0 | i1 => 1 | i2 => 2 end.

(* edge_pos(a, b, 3) *)
Definition pos (a b : item) : nat :=
  if Nat.ltb (num a) (num b) then (num a * 3 + num b)%nat
  else (num b * 3 + num a)%nat.

Definition alpha (k : nat) : R :=
  match k with 1%nat => 3 | 2%nat => 2 | 5%nat => 1 | _ => 0 end.

Definition before := before_pos item alpha pos.

(* The worst-edge run: order 0 = 0, order 1 = 2 (by (0, 2)),
   order 2 = 1 (by (2, 1)); the cut at step k holds the items joined
   before it. *)
Definition m_order (k : nat) : item :=
  match k with 0%nat => i0 | 1%nat => i2 | _ => i1 end.
Definition m_par (k : nat) : item :=
  match k with 2%nat => i2 | _ => i0 end.
Definition m_cut (k : nat) (v : item) : bool :=
  match k, v with
  | 1%nat, i0 => true
  | 2%nat, i0 => true
  | 2%nat, i2 => true
  | _, _ => false
  end.

(* The correct run: order 1 = 1 by (0, 1), order 2 = 2 by (0, 2). *)
Definition c_order (k : nat) : item :=
  match k with 0%nat => i0 | 1%nat => i1 | _ => i2 end.
Definition c_par (k : nat) : item := i0.
Definition c_cut (k : nat) (v : item) : bool :=
  match k, v with
  | 1%nat, i0 => true
  | 2%nat, i0 => true
  | 2%nat, i1 => true
  | _, _ => false
  end.

Ltac items := repeat match goal with x : item |- _ => destruct x end.

Theorem control_hypotheses :
  (forall a b, pos a b = pos b a) /\
  (forall a b c d, pos a b = pos c d -> same_edge item a b c d) /\
  (forall i j, (i <= 2)%nat -> (j <= 2)%nat -> m_order i = m_order j -> i = j) /\
  (forall v, exists k, (k <= 2)%nat /\ m_order k = v) /\
  (forall k, (1 <= k <= 2)%nat -> exists j, (j < k)%nat /\ m_par k = m_order j) /\
  (forall j i, (1 <= j <= 2)%nat -> (i < j)%nat -> m_cut j (m_order i) = true).
Proof.
  split; [| split; [| split; [| split; [| split]]]].
  - intros a b; items; reflexivity.
  - intros a b c d; items; simpl; intro H;
      first [ discriminate H | left; split; reflexivity
            | right; split; reflexivity ].
  - intros i j Hi Hj.
    destruct i as [| [| [| i]]]; destruct j as [| [| [| j]]];
      simpl; intro H; try discriminate H; try reflexivity; lia.
  - intros []; [exists 0%nat | exists 2%nat | exists 1%nat]; split; auto.
  - intros k Hk; destruct k as [| [| [| k]]]; try lia.
    + exists 0%nat; split; [lia | reflexivity].
    + exists 1%nat; split; [lia | reflexivity].
  - intros j i Hj Hi; destruct j as [| [| [| j]]]; try lia;
      destruct i as [| [| i]]; try lia; reflexivity.
Qed.

Theorem control_cut_fails :
  ~ (forall k, (1 <= k <= 2)%nat ->
       first_across item before (m_cut k) (m_par k) (m_order k)).
Proof.
  intro H; destruct (H 1%nat ltac:(lia)) as [_ Hfirst].
  (* (0, 1) crosses {0} and comes before the mutant's (0, 2) *)
  apply (Hfirst i0 i1); [simpl; discriminate |].
  unfold before, before_pos, alpha, pos, num; simpl; left; lra.
Qed.

Theorem control_correct_cut :
  forall k, (1 <= k <= 2)%nat ->
    first_across item before (c_cut k) (c_par k) (c_order k).
Proof.
  intros k Hk; destruct k as [| [| [| k]]]; try lia; (split;
    [ unfold crosses; simpl; discriminate
    | intros a b Hc Hb; items; unfold crosses in Hc; simpl in Hc;
      try (elim Hc; reflexivity);
      unfold before, before_pos, alpha, pos, num, c_par, c_order in Hb;
      simpl in Hb;
      destruct Hb as [Hb | [Hb Hp]]; lra || lia ]).
Qed.

Lemma linked_none (P : item -> item -> Prop) x y :
  (forall c d, ~ P c d) -> linked item P x y -> x = y.
Proof.
  intros HP; induction 1 as [x | x y z H | x y z H];
    [reflexivity | elim (HP _ _ H) | elim (HP _ _ H)].
Qed.

Theorem control_not_kruskal :
  ~ (forall a b, kruskal_keeps item before a b <->
       prim_edge item 2 m_order m_par a b \/ prim_edge item 2 m_order m_par b a).
Proof.
  intro H.
  assert (Hk : kruskal_keeps item before i0 i1).
  { intro Hl; apply linked_none in Hl; [discriminate Hl |].
    intros c d; items; unfold before, before_pos, alpha, pos, num; simpl;
      intros [Hc | [Hc Hp]]; lra || lia. }
  apply H in Hk as [(k & Hk & Ha & Hb) | (k & Hk & Ha & Hb)];
    destruct k as [| [| [| k]]]; try lia; discriminate.
Qed.

Theorem control_not_maximal :
  exists E, spanning_tree item pos 2 E /\
    wsum item alpha pos (prim_tree item 2 m_order m_par) <
    wsum item alpha pos E.
Proof.
  exists [(i0, i1); (i0, i2)]; split.
  - split; [reflexivity | split].
    + simpl; repeat constructor; simpl; intuition discriminate.
    + assert (H0 : forall x, joined item [(i0, i1); (i0, i2)] i0 x).
      { intros []; [apply joined_here | |].
        - apply (joined_fwd _ _ i0 i1 i1); [now left | apply joined_here].
        - apply (joined_fwd _ _ i0 i2 i2); [right; now left | apply joined_here]. }
      intros x y.
      apply (jn_trans item _ x i0 y); [apply jn_sym |]; apply H0.
  - unfold wsum, prim_tree, epos; simpl; unfold alpha; simpl; lra.
Qed.

(* The mutant's bipartition: its last tree edge in the order is (2, 1)
   (α = 1, after (0, 2)), step c = 2; the tree less it is F = [(0, 2)] and
   the sides are {1} against {0, 2}: every hypothesis of
   prim_bipartition_optimal that concerns the cut holds (c_last, F_edges,
   side_components), and its conclusion fails: the sides separate (0, 1),
   α = 3, while the bipartition {2} against {0, 1} separates only pairs of
   α ≤ 2. *)
Definition m_side (v : item) : bool := match v with i1 => true | _ => false end.
Definition m_forest := [(i0, i2)].

Theorem control_cut_hypotheses :
  (forall k, (1 <= k <= 2)%nat ->
     ~ before (m_par 2) (m_order 2) (m_par k) (m_order k)) /\
  (forall x y, In (x, y) m_forest <->
     exists k, (1 <= k <= 2)%nat /\ k <> 2%nat /\ x = m_par k /\ y = m_order k) /\
  (forall x y, m_side x = m_side y <-> joined item m_forest x y).
Proof.
  split; [| split].
  - intros k Hk; destruct k as [| [| [| k]]]; try lia;
      unfold before, before_pos, alpha, pos, num; simpl;
      intros [H | [H Hp]]; lra || lia.
  - intros x y; split.
    + intros [H | []]; injection H as <- <-; exists 1%nat; auto.
    + intros (k & Hk & Hk2 & -> & ->).
      destruct k as [| [| [| k]]]; try lia; now left.
  - intros x y; split.
    + assert (J02 : joined item m_forest i0 i2)
        by (apply jn_edge; now left).
      destruct x, y; simpl; intro H; try discriminate H;
        first [ apply joined_here | exact J02 | exact (jn_sym item _ _ _ J02) ].
    + induction 1 as [x | x y z H _ IH | x y z H _ IH]; [reflexivity | |];
        destruct H as [H | []]; injection H as <- <-; exact IH.
Qed.

Theorem control_not_optimal :
  exists D : item -> bool, (exists x y, D x <> D y) /\
  exists a b, m_side a <> m_side b /\
    forall i j, D i <> D j -> alpha (pos i j) < alpha (pos a b).
Proof.
  exists (fun v => match v with i2 => true | _ => false end).
  split; [exists i0, i2; discriminate |].
  exists i0, i1; split; [discriminate |].
  intros i j Hd; destruct i, j; simpl in Hd; try (elim Hd; reflexivity);
    unfold alpha, pos, num; simpl; lra.
Qed.

(* The theorems themselves refute the mutant: applied to its run, with the
   hypotheses it satisfies (control_hypotheses, control_cut_hypotheses),
   each of prim_is_kruskal, prim_maximal and prim_bipartition_optimal
   yields that its run cannot satisfy prim_cut (control_kruskal_refutes,
   control_maximal_refutes, control_optimal_refutes).  A weakened
   statement of any of them would break these proofs. *)
Definition m_prim_cut := forall k, (1 <= k <= 2)%nat ->
  first_across item before (m_cut k) (m_par k) (m_order k).

Theorem control_kruskal_refutes : ~ m_prim_cut.
Proof.
  intro Hcut.
  destruct control_hypotheses as (Hsym & Hinj & Horder & Honto & Hpar & Hjoined).
  apply control_not_kruskal.
  exact (prim_is_kruskal item item_dec alpha pos Hsym Hinj 2 m_order m_par
           m_cut Hcut Hpar Honto).
Qed.

Theorem control_maximal_refutes : ~ m_prim_cut.
Proof.
  intro Hcut.
  destruct control_hypotheses as (Hsym & Hinj & Horder & Honto & Hpar & Hjoined).
  destruct control_not_maximal as (E & HE & Hlt).
  pose proof (prim_maximal item item_dec alpha pos Hsym Hinj 2 m_order m_par
                m_cut Hcut Horder Hpar Hjoined E HE) as Hle.
  lra.
Qed.

Theorem control_optimal_refutes : ~ m_prim_cut.
Proof.
  intro Hcut.
  destruct control_hypotheses as (Hsym & Hinj & Horder & Honto & Hpar & Hjoined).
  destruct control_cut_hypotheses as (Hlast & HF & Hside).
  destruct control_not_optimal as (D & HD & a & b & Hab & Hbig).
  destruct (prim_bipartition_optimal item alpha pos Hsym Hinj 2 m_order m_par
              m_cut Hcut Horder Hpar 2 ltac:(lia) Hlast m_forest HF m_side Hside
              Honto D HD a b Hab) as (i & j & Hd & Hle).
  pose proof (Hbig i j Hd); lra.
Qed.
