(* proofs/coq/ClusterJoint.v: the joint between the C's contracts and
   Bipartition.v, machine-checked on WP's own translation of the ACSL.

   Bipartition.v states CFL's bipartition over its own definitions: the
   order before_pos over positions edge_pos, the subtree in_subtree of a
   ranked tree, the permutation prim_perm and the test of joined_cut.  The
   C's contracts (ref/engine/cluster.c) state the same objects in ACSL
   (proofs/acsl/cluster.h), and WP proves them of the C.  Until this file
   the two were the same definitions written twice, matched by reading.
   Here the ACSL side is not rewritten by hand: Wp.WpAcsl
   (proofs/wpcoq/gen/WpAcsl.v) is the Why3 task WP builds from
   proofs/acsl/cluster.h (and from ref/sampling/kernels.h, for
   SamplerJoint.v), printed in Coq by Why3's own printer
   (proofs/wpcoq/export.sh; `make proofs` fails when the file is not what
   WP prints today).  Its P_edge_first, P_last_edge, P_best_link,
   P_ranked_tree, P_in_subtree, P_subtree_sides, P_prim_perm,
   P_prim_joined, P_prim_step and P_prim_cuts are the definitions the SMT solvers receive in the proofs
   of ref/engine/cluster.c (the same model, typed+real).

   Reading of the memory.  WP's typed model holds the C's arrays as maps
   from addresses: Mf64 the doubles (alpha), Mint the size_t entries
   (parent, link), Mbyte the unsigned char entries (in_tree, side), and
   the ghost arrays prim_order, prim_slot, prim_rank as maps from indices.
   Entry i of an array p is the map at shift p i.  The nat-indexed
   functions Bipartition.v quantifies over are these entries read at
   Z.of_nat i (alphaN, parN, linkN, inN, sideN, ghostN); a size_t entry
   is at least 0 (parent_nat, link_nat: the typed model's is_uint64 fact,
   which WP gives every read of a size_t).

   Proved (every theorem about every memory and every m).
     - edge_pos_joint: WP's L_edge_pos is edge_pos;
     - edge_first_joint: P_edge_first is before_pos with alpha = alphaN,
       pos = edge_pos m (an equivalence);
     - last_edge_joint: P_last_edge gives c_last's statement over the tree
       edges (parN v, v), 1 ≤ v < m;
     - best_link_joint: P_best_link gives Prim's key as before_pos states
       it;
     - ranked_tree_joint: P_ranked_tree gives the rank hypothesis of
       subtree_components (ranked) on the m vertices, with parN v < m;
     - in_subtree_joint: WP's inductive P_in_subtree and Bipartition.v's
       in_subtree (root 0, parent parN) hold of the same vertices (an
       equivalence);
     - subtree_sides_joint: P_subtree_sides is D_subtree for side 1 on the
       m vertices;
     - prim_perm_joint, prim_joined_joint, prim_joined_cut: P_prim_perm is
       prim_perm, P_prim_joined is joined_cut's hypothesis, and its
       conclusion follows;
     - sides_forest, sides_components: from P_ranked_tree and
       P_subtree_sides alone (the postconditions WP proves of
       max_spanning_tree and subtree_side), the C's sides are the
       components of its tree less the edge (parN c, c): two vertices have
       the same side exactly when the other tree edges join them.  This is
       subtree_components, applied to the C's m vertices as a subset type
       (subtree_components needs its forest as a finite list);
     - prim_step_joint: P_prim_step at step k, over the nat-indexed reading
       of the ghost slots and order;
     - run_joint: P_ranked_tree, P_prim_perm and P_prim_cuts at m (the
       postconditions `tree` and `run`) give every hypothesis the sections
       PrimKruskal and Maximal take of a run of Prim, its steps the ghost
       slots: step k's vertex prim_order[k], its edge from
       parent[prim_order[k]], the cut of step k the vertices of slot < k
       (prim_cut, order_inj, par_earlier, cut_joined, order_onto); the
       lemma run_steps reads the steps' vertices and parents over nat, which
       bipartition_joint uses too;
     - tree_maximal_joint, tree_kruskal_joint: the C's tree is a
       maximum-weight spanning tree (prim_maximal) and Kruskal's tree on
       line 1's sorted list (prim_is_kruskal);
     - bipartition_joint: the postconditions of optimal_bipartition
       (`tree`, `sides` for its cut vertex c, `run`) make the C's sides an
       optimal bipartition: every pair they separate is at most as similar
       as some pair any other bipartition separates
       (prim_bipartition_optimal, its steps those of run_joint, its cut
       step the slot of c, its forest sides_forest's);
     - L_edge_pos_exists: WP's translation declares L_edge_pos with a
       defining equation (L_edge_pos'def, the ACSL logic function
       edge_pos), which edge_pos_joint uses; a function meets it, so that
       equation assumes nothing a definition would not.
   Print Assumptions (Assumptions.v) lists L_edge_pos and L_edge_pos'def
   beside the reals' axioms, and nothing else of WpAcsl.v's.

   Negative controls: proofs/wpcoq/export.sh --controls runs the eleven of
   proofs/wpcoq/controls.txt for this file, each a change planted in a copy
   of proofs/acsl/cluster.h (edge_first's order reversed, last_edge's
   comparison turned round, ranked_tree's < made ≤, the root let into
   in_subtree, side 1 made side 0, prim_perm's inverse off by one,
   prim_joined's < made ≤, best_link over the vertices off the tree,
   prim_step's cut with the vertex of slot k left out of its far side,
   prim_step's parent allowed the same slot, prim_cuts' root slot not 0);
   it exports WP's translation of each and requires this file to fail to
   compile against it, first in the theorem that joins that definition. *)
From Coq Require Import ZArith Reals Bool List Lia Lra Peano_dec.
From Pflref Require Import Bipartition.
From Wp Require Import WpAcsl.

Lemma L_edge_pos_exists : exists f : Z -> Z -> Z -> Z,
  forall a b m, ((a < b)%Z -> f a b m = (b + a * m)%Z) /\
                (~ (a < b)%Z -> f a b m = (a + b * m)%Z).
Proof.
  exists (fun a b m => if Z.ltb a b then (b + a * m)%Z else (a + b * m)%Z).
  intros a b m; destruct (Z.ltb_spec a b); split; intro; lia.
Qed.

Section Joint.

Variable m : nat.
Variable Mf64 : addr -> R.
Variable Mint : addr -> Z.
Variable Mbyte : addr -> Z.
Variables alpha parent link in_tree side : addr.
Variables order slot rank : Z -> Z.

Definition at_ (p : addr) (i : nat) := shift p (Z.of_nat i).
Definition alphaN (i : nat) := Mf64 (at_ alpha i).
Definition parN (v : nat) := Z.to_nat (Mint (at_ parent v)).
Definition linkN (v : nat) := Z.to_nat (Mint (at_ link v)).
Definition inN (v : nat) := negb (Z.eqb (Mbyte (at_ in_tree v)) 0).
Definition sideN (v : nat) := Z.eqb (Mbyte (at_ side v)) 1.
Definition ghostN (g : Z -> Z) (k : nat) := Z.to_nat (g (Z.of_nat k)).

Theorem edge_pos_joint a b :
  L_edge_pos (Z.of_nat a) (Z.of_nat b) (Z.of_nat m) = Z.of_nat (edge_pos m a b).
Proof.
  destruct (L_edge_pos'def (Z.of_nat a) (Z.of_nat b) (Z.of_nat m)) as [Hlt Hge].
  unfold edge_pos; destruct (Nat.ltb_spec a b) as [H | H].
  - rewrite Hlt by lia; lia.
  - rewrite Hge by lia; lia.
Qed.

Theorem edge_first_joint a1 b1 a2 b2 :
  P_edge_first Mf64 alpha (Z.of_nat m) (Z.of_nat a1) (Z.of_nat b1)
    (Z.of_nat a2) (Z.of_nat b2) <->
  before_pos nat alphaN (edge_pos m) a1 b1 a2 b2.
Proof.
  unfold P_edge_first, before_pos, alphaN, at_; rewrite !edge_pos_joint.
  split; intros [H | [H1 H2]]; auto; right; split; auto; lia.
Qed.

Hypothesis parent_nat : forall i, (0 <= Mint (shift parent i))%Z.

Lemma parN_of v : Z.of_nat (parN v) = Mint (shift parent (Z.of_nat v)).
Proof. unfold parN, at_; rewrite Z2Nat.id; auto. Qed.

Theorem last_edge_joint c :
  P_last_edge Mf64 Mint alpha (Z.of_nat m) parent (Z.of_nat c) ->
  forall v, (1 <= v < m)%nat ->
  ~ before_pos nat alphaN (edge_pos m) (parN c) c (parN v) v.
Proof.
  intros H v Hv; rewrite <- edge_first_joint, !parN_of.
  apply H; lia.
Qed.

Theorem ranked_tree_joint :
  P_ranked_tree Mint rank parent (Z.of_nat m) ->
  (forall v, (v < m)%nat -> (ghostN rank v < m)%nat) /\
  (forall v, (1 <= v < m)%nat ->
     (parN v < m)%nat /\ (ghostN rank (parN v) < ghostN rank v)%nat).
Proof.
  intros [Hr Hp]; split.
  - intros v Hv; unfold ghostN.
    destruct (Hr (Z.of_nat v) ltac:(lia) ltac:(lia)); lia.
  - intros v Hv; unfold ghostN.
    destruct (Hp (Z.of_nat v) ltac:(lia) ltac:(lia)) as [H1 H2].
    pose proof (parN_of v) as Hpv; unfold at_ in Hpv.
    rewrite <- Hpv in H1, H2.
    destruct (Hr (Z.of_nat (parN v)) ltac:(lia) ltac:(lia)).
    destruct (Hr (Z.of_nat v) ltac:(lia) ltac:(lia)).
    split; lia.
Qed.

Theorem in_subtree_joint c v :
  P_in_subtree Mint parent (Z.of_nat c) (Z.of_nat v) <->
  in_subtree nat 0%nat c parN v.
Proof.
  split.
  - intro H.
    assert (Hz : forall M p cz z, P_in_subtree M p cz z -> M = Mint -> p = parent ->
                 cz = Z.of_nat c -> (0 <= z)%Z ->
                 in_subtree nat 0%nat c parN (Z.to_nat z)).
    { clear H; intros M p cz z H; induction H as [M p cz | M p cz w Hw0 Hwc Hpw IH];
        intros -> -> -> Hz.
      - rewrite Nat2Z.id; apply subtree_top.
      - apply subtree_below; [lia | lia |].
        unfold parN, at_; rewrite Z2Nat.id by lia; apply IH; auto. }
    rewrite <- (Nat2Z.id v); apply (Hz Mint parent (Z.of_nat c)); auto; lia.
  - induction 1 as [| w Hw0 Hwc _ IH].
    + apply Q_subtree_top.
    + apply Q_subtree_below; [lia | lia |].
      rewrite <- parN_of; exact IH.
Qed.

Theorem subtree_sides_joint c :
  P_subtree_sides Mint Mbyte parent (Z.of_nat m) (Z.of_nat c) side ->
  forall v, (v < m)%nat -> (sideN v = true <-> in_subtree nat 0%nat c parN v).
Proof.
  intros H v Hv; rewrite <- in_subtree_joint, (H (Z.of_nat v)) by lia.
  unfold sideN, at_; rewrite Z.eqb_eq; reflexivity.
Qed.

Theorem prim_perm_joint :
  P_prim_perm order slot (Z.of_nat m) -> prim_perm m (ghostN order) (ghostN slot).
Proof.
  intros [Hs Ho]; unfold prim_perm, ghostN; split.
  - intros k Hk; destruct (Ho (Z.of_nat k) ltac:(lia) ltac:(lia)) as [[He H0] Hm].
    rewrite Z2Nat.id by exact H0; rewrite He; lia.
  - intros v Hv; destruct (Hs (Z.of_nat v) ltac:(lia) ltac:(lia)) as [[He H0] Hm].
    rewrite Z2Nat.id by exact H0; rewrite He; lia.
Qed.

Theorem prim_joined_joint added :
  P_prim_perm order slot (Z.of_nat m) ->
  P_prim_joined Mbyte slot in_tree (Z.of_nat m) (Z.of_nat added) ->
  forall v, (v < m)%nat -> (inN v = true <-> (ghostN slot v < added)%nat).
Proof.
  intros [Hs _] Hj v Hv.
  destruct (Hs (Z.of_nat v) ltac:(lia) ltac:(lia)) as [[_ H0] _].
  specialize (Hj (Z.of_nat v) ltac:(lia) ltac:(lia)).
  unfold inN, ghostN, at_; rewrite negb_true_iff, Z.eqb_neq.
  split; intro H; [apply Hj in H | apply Hj]; lia.
Qed.

Corollary prim_joined_cut added :
  P_prim_perm order slot (Z.of_nat m) ->
  P_prim_joined Mbyte slot in_tree (Z.of_nat m) (Z.of_nat added) ->
  forall i, (i < added)%nat -> (i < m)%nat -> inN (ghostN order i) = true.
Proof.
  intros Hp Hj.
  apply (joined_cut m (ghostN order) (ghostN slot) inN added (prim_perm_joint Hp)).
  exact (prim_joined_joint added Hp Hj).
Qed.

Hypothesis link_nat : forall i, (0 <= Mint (shift link i))%Z.

Theorem best_link_joint v :
  P_best_link Mf64 Mint Mbyte alpha (Z.of_nat m) in_tree link (Z.of_nat v) ->
  forall u, (u < m)%nat -> inN u = true ->
  ~ before_pos nat alphaN (edge_pos m) u v (linkN v) v.
Proof.
  intros H u Hu Hin; rewrite <- edge_first_joint.
  unfold linkN, at_; rewrite Z2Nat.id by apply link_nat.
  unfold inN, at_ in Hin; rewrite negb_true_iff, Z.eqb_neq in Hin.
  apply H; [exact Hin | lia | lia].
Qed.

(* The C's sides are the components of its tree less the edge of c.  The
   tree edges (parN v, v), 1 ≤ v < m, less the one at c: *)
Definition tree_less (c : nat) : list (nat * nat) :=
  map (fun v => (parN v, v)) (filter (fun v => negb (Nat.eqb v c)) (seq 1 (m - 1))).

(* subtree_components and prim_bipartition_optimal are stated over any type
   of vertices; the C's vertices are 0..m−1, as a subset type. *)
Let Vm := {v : nat | (v < m)%nat}.

Let vm_eq (x y : Vm) : proj1_sig x = proj1_sig y -> x = y.
Proof.
  destruct x as [x Hx], y as [y Hy]; simpl; intros ->; f_equal; apply le_unique.
Qed.

Let vm_dec (x y : Vm) : {x = y} + {x <> y}.
Proof.
  destruct (Nat.eq_dec (proj1_sig x) (proj1_sig y)) as [e | n].
  - left; exact (vm_eq x y e).
  - right; intro e; apply n; rewrite e; reflexivity.
Qed.

Let all_vm : list Vm :=
  flat_map (fun v => match lt_dec v m with
                     | left H => exist _ v H :: nil
                     | right _ => nil
                     end) (seq 0 m).

Let in_all_vm (x : Vm) : In x all_vm.
Proof.
  destruct x as [x Hx]; apply in_flat_map; exists x; split.
  - apply in_seq; lia.
  - destruct (lt_dec x m) as [H | H]; [left; apply vm_eq; reflexivity | lia].
Qed.

(* One step of Prim's run, as P_prim_step states it over WP's memory: the
   vertex of slot k hangs from a vertex of a smaller slot, and no edge from
   a vertex of slot < k to one of slot ≥ k comes before its edge. *)
Theorem prim_step_joint k :
  P_prim_perm order slot (Z.of_nat m) ->
  P_prim_step Mf64 Mint order slot alpha (Z.of_nat m) parent (Z.of_nat k) ->
  (1 <= k < m)%nat ->
  (ghostN slot (parN (ghostN order k)) < k)%nat /\
  forall u w, (u < m)%nat -> (w < m)%nat ->
  (ghostN slot u < k)%nat -> (k <= ghostN slot w)%nat ->
  ~ before_pos nat alphaN (edge_pos m) u w (parN (ghostN order k)) (ghostN order k).
Proof.
  intros [Hs Ho] [Hp Hcut] Hk.
  destruct (Ho (Z.of_nat k) ltac:(lia) ltac:(lia)) as [[_ Hok] _].
  assert (Eo : Z.of_nat (ghostN order k) = order (Z.of_nat k))
    by (unfold ghostN; rewrite Z2Nat.id; [reflexivity | lia]).
  assert (Ep : Z.of_nat (parN (ghostN order k)) =
               Mint (shift parent (order (Z.of_nat k))))
    by (rewrite parN_of, Eo; reflexivity).
  split.
  - unfold ghostN at 1; rewrite Ep; lia.
  - intros u w Hu Hw Hsu Hsw.
    destruct (Hs (Z.of_nat u) ltac:(lia) ltac:(lia)) as [[_ Hu0] _].
    destruct (Hs (Z.of_nat w) ltac:(lia) ltac:(lia)) as [[_ Hw0] _].
    rewrite <- edge_first_joint, Ep, Eo.
    unfold ghostN in Hsu, Hsw.
    apply Hcut; lia.
Qed.

(* The vertices as Vm: a number below m is itself, any other the root 0
   (never read: parN v < m for v ≠ 0 in a ranked tree, and the ghost
   permutation's entries are below m). *)
Section Vertices.

Hypothesis m_pos : (0 < m)%nat.

Definition root_vm : Vm := exist _ 0%nat m_pos.

Definition vm_of (v : nat) : Vm :=
  match lt_dec v m with left H => exist _ v H | right _ => root_vm end.

Lemma vm_of_id v : (v < m)%nat -> proj1_sig (vm_of v) = v.
Proof. intro Hv; unfold vm_of; destruct (lt_dec v m); [reflexivity | lia]. Qed.

Definition parV (v : Vm) : Vm := vm_of (parN (proj1_sig v)).

(* The tree edges (parV v, v), v ≠ 0, less the one at c. *)
Definition forest (c : nat) : list (Vm * Vm) :=
  map (fun v => (parV v, v))
      (filter (fun v : Vm => negb (Nat.eqb (proj1_sig v) 0) &&
                             negb (Nat.eqb (proj1_sig v) c)) all_vm).

Lemma forest_in c x y : In (x, y) (forest c) <->
  proj1_sig y <> 0%nat /\ proj1_sig y <> c /\ x = parV y.
Proof.
  unfold forest; rewrite in_map_iff; split.
  - intros (v & He & Hin); injection He as <- <-.
    apply filter_In in Hin as [_ Hb]; apply andb_prop in Hb as [H1 H2].
    apply negb_true_iff, Nat.eqb_neq in H1; apply negb_true_iff, Nat.eqb_neq in H2.
    auto.
  - intros (H1 & H2 & ->); exists y; split; [reflexivity |].
    apply filter_In; split; [apply in_all_vm |].
    apply andb_true_intro; split; apply negb_true_iff, Nat.eqb_neq; assumption.
Qed.

(* req: cfl.alg1.l7 *)
Theorem sides_forest c :
  (1 <= c < m)%nat ->
  P_ranked_tree Mint rank parent (Z.of_nat m) ->
  P_subtree_sides Mint Mbyte parent (Z.of_nat m) (Z.of_nat c) side ->
  forall x y : Vm,
  sideN (proj1_sig x) = sideN (proj1_sig y) <-> joined Vm (forest c) x y.
Proof.
  intros Hc Hrk Hsd.
  destruct (ranked_tree_joint Hrk) as [_ Hrt].
  set (c0 := vm_of c).
  assert (Hc0 : proj1_sig c0 = c) by (apply vm_of_id; lia).
  assert (Hpar : forall v : Vm, proj1_sig v <> 0%nat ->
                 proj1_sig (parV v) = parN (proj1_sig v)).
  { intros [v Hv] H0; apply vm_of_id; simpl in *; apply (Hrt v); lia. }
  assert (Hforest : forall x y, In (x, y) (forest c) <->
                    y <> root_vm /\ y <> c0 /\ x = parV y).
  { intros x y; rewrite forest_in; split.
    - intros (H1 & H2 & H3); split; [| split; [| exact H3]].
      + intro e; apply H1; rewrite e; reflexivity.
      + intro e; apply H2; rewrite e; exact Hc0.
    - intros (H1 & H2 & H3); split; [| split; [| exact H3]].
      + intro e; apply H1, vm_eq; exact e.
      + intro e; apply H2, vm_eq; rewrite Hc0; exact e. }
  assert (Hranked : forall v : Vm, v <> root_vm ->
                    (ghostN rank (proj1_sig (parV v)) < ghostN rank (proj1_sig v))%nat).
  { intros v Hv.
    assert (H0 : proj1_sig v <> 0%nat) by (intro e; apply Hv, vm_eq; exact e).
    rewrite (Hpar v H0); destruct v as [v Hvm]; simpl in *.
    apply (Hrt v); lia. }
  (* the two subtrees hold of the same vertices *)
  assert (Hsub : forall v : Vm,
            in_subtree nat 0%nat c parN (proj1_sig v) <->
            in_subtree Vm root_vm c0 parV v).
  { intro v; split.
    - intro H; remember (proj1_sig v) as w eqn:Ew; revert v Ew.
      induction H as [| w Hw0 Hwc _ IH]; intros v Ew.
      + replace v with c0 by (apply vm_eq; rewrite Hc0; auto).
        apply subtree_top.
      + apply subtree_below.
        * intro e; apply Hw0; rewrite Ew, e; reflexivity.
        * intro e; apply Hwc; rewrite Ew, e; exact Hc0.
        * apply IH; rewrite Hpar; [rewrite Ew; reflexivity | lia].
    - induction 1 as [| v Hvr Hvc _ IH].
      + rewrite Hc0; apply subtree_top.
      + assert (H0 : proj1_sig v <> 0%nat) by (intro e; apply Hvr, vm_eq; exact e).
        assert (H1 : proj1_sig v <> c)
          by (intro e; apply Hvc, vm_eq; rewrite Hc0; exact e).
        apply subtree_below; auto.
        rewrite <- (Hpar v H0); exact IH. }
  assert (Hside : forall v : Vm,
            sideN (proj1_sig v) = true <-> in_subtree Vm root_vm c0 parV v).
  { intros [v Hv]; rewrite <- Hsub; apply (subtree_sides_joint c Hsd v Hv). }
  assert (Hcr : c0 <> root_vm)
    by (intro e; apply (f_equal (@proj1_sig _ _)) in e; simpl in e; lia).
  exact (subtree_components Vm root_vm c0 parV (fun v => ghostN rank (proj1_sig v))
           vm_dec Hcr Hranked (forest c) Hforest
           (fun v => sideN (proj1_sig v)) Hside).
Qed.

(* Prim's run with its steps k the ghost slots: the vertex of step k is
   prim_order[k], its edge hangs from parent[prim_order[k]], the cut of
   step k holds the vertices of slot < k, and an edge's position is
   edge_pos over the vertices' numbers. *)
Definition orderV (k : nat) : Vm := vm_of (ghostN order k).
Definition parS (k : nat) : Vm := parV (orderV k).
Definition joinedV (k : nat) (v : Vm) : bool := Nat.ltb (ghostN slot (proj1_sig v)) k.
Definition posV (u w : Vm) : nat := edge_pos m (proj1_sig u) (proj1_sig w).

Lemma posV_sym u w : posV u w = posV w u.
Proof. apply edge_pos_sym. Qed.

Lemma posV_inj u w u' w' : posV u w = posV u' w' -> same_edge Vm u w u' w'.
Proof.
  destruct u as [u Hu], w as [w Hw], u' as [u' Hu'], w' as [w' Hw']; intro He.
  destruct (edge_pos_inj m u w u' w' Hu Hw Hu' Hw' He) as [[-> ->] | [-> ->]].
  - left; split; apply vm_eq; reflexivity.
  - right; split; apply vm_eq; reflexivity.
Qed.

(* The steps' vertices read over nat: prim_order[k] as a Vm is itself, the
   root holds slot 0 (prim_cuts), so the vertex of a step k ≥ 1 is not the
   root, and its parent read as a Vm is parent[prim_order[k]]. *)
Lemma run_steps :
  P_ranked_tree Mint rank parent (Z.of_nat m) ->
  P_prim_perm order slot (Z.of_nat m) ->
  P_prim_cuts Mf64 Mint order slot alpha (Z.of_nat m) parent (Z.of_nat m) ->
  (forall k, (k <= m - 1)%nat -> proj1_sig (orderV k) = ghostN order k) /\
  ghostN slot 0 = 0%nat /\
  (forall k, (1 <= k <= m - 1)%nat -> (1 <= ghostN order k < m)%nat) /\
  (forall k, (1 <= k <= m - 1)%nat -> proj1_sig (parS k) = parN (ghostN order k)).
Proof.
  intros Hrk Hpm [Hs0 _].
  destruct (ranked_tree_joint Hrk) as [_ Hrt].
  destruct (prim_perm_joint Hpm) as [Ho _].
  assert (Hord : forall k, (k <= m - 1)%nat -> proj1_sig (orderV k) = ghostN order k)
    by (intros k Hk; apply vm_of_id, (Ho k); lia).
  assert (Hslot0 : ghostN slot 0 = 0%nat)
    by (unfold ghostN; change (Z.of_nat 0) with 0%Z; rewrite Hs0; reflexivity).
  assert (Hvx : forall k, (1 <= k <= m - 1)%nat -> (1 <= ghostN order k < m)%nat).
  { intros k Hk; destruct (Ho k ltac:(lia)) as [Hkm Hsk]; split; [| exact Hkm].
    destruct (Nat.eq_dec (ghostN order k) 0) as [e | ne]; [| lia].
    rewrite e, Hslot0 in Hsk; lia. }
  split; [exact Hord | split; [exact Hslot0 | split; [exact Hvx |]]].
  intros k Hk; unfold parS, parV; rewrite Hord by lia.
  apply vm_of_id, (Hrt (ghostN order k)), Hvx, Hk.
Qed.

(* What WP proves of the run (the postconditions `run` and `tree` of
   max_spanning_tree and optimal_bipartition) gives every hypothesis
   Bipartition.v's sections PrimKruskal and Maximal take of a run of Prim
   on the m vertices, n = m − 1: prim_cut, order_inj, par_earlier,
   cut_joined and order_onto. *)
Theorem run_joint :
  P_ranked_tree Mint rank parent (Z.of_nat m) ->
  P_prim_perm order slot (Z.of_nat m) ->
  P_prim_cuts Mf64 Mint order slot alpha (Z.of_nat m) parent (Z.of_nat m) ->
  (forall k, (1 <= k <= m - 1)%nat ->
     first_across Vm (before_pos Vm alphaN posV) (joinedV k) (parS k) (orderV k)) /\
  (forall i j, (i <= m - 1)%nat -> (j <= m - 1)%nat -> orderV i = orderV j -> i = j) /\
  (forall k, (1 <= k <= m - 1)%nat -> exists j, (j < k)%nat /\ parS k = orderV j) /\
  (forall j i, (1 <= j <= m - 1)%nat -> (i < j)%nat -> joinedV j (orderV i) = true) /\
  (forall v : Vm, exists k, (k <= m - 1)%nat /\ orderV k = v).
Proof.
  intros Hrk Hpm Hcuts.
  destruct (run_steps Hrk Hpm Hcuts) as (Hord & _ & Hvx & Hpar).
  destruct Hcuts as [_ Hsteps].
  destruct (ranked_tree_joint Hrk) as [_ Hrt].
  destruct (prim_perm_joint Hpm) as [Ho Hs].
  assert (Hstep : forall k, (1 <= k <= m - 1)%nat ->
    (ghostN slot (parN (ghostN order k)) < k)%nat /\
    forall u w, (u < m)%nat -> (w < m)%nat ->
    (ghostN slot u < k)%nat -> (k <= ghostN slot w)%nat ->
    ~ before_pos nat alphaN (edge_pos m) u w (parN (ghostN order k)) (ghostN order k)).
  { intros k Hk; apply prim_step_joint; [exact Hpm | apply Hsteps | ]; lia. }
  split; [| split; [| split; [| split]]].
  - intros k Hk; destruct (Hstep k Hk) as [Hearly Hfirst].
    destruct (Ho k ltac:(lia)) as [Hokm Hsk].
    assert (Hin : joinedV k (parS k) = true)
      by (unfold joinedV; rewrite Hpar by lia; apply Nat.ltb_lt; exact Hearly).
    assert (Hout : joinedV k (orderV k) = false)
      by (unfold joinedV; rewrite Hord by lia; apply Nat.ltb_ge; lia).
    split; [unfold crosses; rewrite Hin, Hout; discriminate |].
    intros [u Hu] [w Hw] Hcr; unfold crosses, joinedV in Hcr; simpl in Hcr.
    change (~ before_pos nat alphaN (edge_pos m) u w
                (proj1_sig (parS k)) (proj1_sig (orderV k))).
    rewrite Hpar, Hord by lia.
    destruct (Nat.ltb_spec (ghostN slot u) k) as [Hu' | Hu'],
             (Nat.ltb_spec (ghostN slot w) k) as [Hw' | Hw']; try congruence.
    + exact (Hfirst u w Hu Hw Hu' Hw').
    + unfold before_pos; rewrite (edge_pos_sym m u w).
      exact (Hfirst w u Hw Hu Hw' Hu').
  - intros i j Hi Hj He; apply (f_equal (@proj1_sig _ _)) in He.
    rewrite !Hord in He by lia.
    exact (perm_order_inj m (ghostN order) (ghostN slot) (conj Ho Hs) i j Hi Hj He).
  - intros k Hk; destruct (Hstep k Hk) as [Hearly _].
    exists (ghostN slot (parN (ghostN order k))); split; [exact Hearly |].
    apply vm_eq; rewrite Hpar, Hord by lia.
    symmetry; apply (Hs _ (proj1 (Hrt _ (Hvx k Hk)))).
  - intros j i Hj Hi; unfold joinedV; rewrite Hord by lia.
    apply Nat.ltb_lt; destruct (Ho i ltac:(lia)) as [_ Hsi]; rewrite Hsi; exact Hi.
  - intros [v Hv]; exists (ghostN slot v); destruct (Hs v Hv) as [Hsv Hosv].
    split; [lia |]; apply vm_eq; rewrite Hord by lia; exact Hosv.
Qed.

(* The C's tree is a maximum-weight spanning tree: no spanning tree of the
   m vertices (m − 1 distinct edges that join every two) has a larger sum
   of α over its edges than the tree edges (parent[v], v), listed in the
   order Prim adds them (prim_tree: step k's edge, k = 1..m − 1). *)
(* req: cfl.alg1.opt *)
Theorem tree_maximal_joint :
  P_ranked_tree Mint rank parent (Z.of_nat m) ->
  P_prim_perm order slot (Z.of_nat m) ->
  P_prim_cuts Mf64 Mint order slot alpha (Z.of_nat m) parent (Z.of_nat m) ->
  forall E : list (Vm * Vm), spanning_tree Vm posV (m - 1) E ->
  wsum Vm alphaN posV E <= wsum Vm alphaN posV (prim_tree Vm (m - 1) orderV parS).
Proof.
  intros Hrk Hpm Hcuts.
  destruct (run_joint Hrk Hpm Hcuts) as (Hcut & Hinj & Hearlier & Hjoined & _).
  exact (prim_maximal Vm vm_dec alphaN posV posV_sym posV_inj (m - 1) orderV parS
           joinedV Hcut Hinj Hearlier Hjoined).
Qed.

(* And it is Kruskal's tree on line 1's sorted list (lines 3–6 run over the
   whole list): a pair is kept by Kruskal's test exactly when it is a tree
   edge, named either way. *)
(* req: cfl.alg1.l3, cfl.alg1.l4, cfl.alg1.l6 *)
Theorem tree_kruskal_joint :
  P_ranked_tree Mint rank parent (Z.of_nat m) ->
  P_prim_perm order slot (Z.of_nat m) ->
  P_prim_cuts Mf64 Mint order slot alpha (Z.of_nat m) parent (Z.of_nat m) ->
  forall a b : Vm,
  kruskal_keeps Vm (before_pos Vm alphaN posV) a b <->
  prim_edge Vm (m - 1) orderV parS a b \/ prim_edge Vm (m - 1) orderV parS b a.
Proof.
  intros Hrk Hpm Hcuts.
  destruct (run_joint Hrk Hpm Hcuts) as (Hcut & _ & Hearlier & _ & Honto).
  exact (prim_is_kruskal Vm vm_dec alphaN posV posV_sym posV_inj (m - 1) orderV parS
           joinedV Hcut Hearlier Honto).
Qed.

End Vertices.

(* req: cfl.alg1.l7 *)
Theorem sides_components c :
  (1 <= c < m)%nat ->
  P_ranked_tree Mint rank parent (Z.of_nat m) ->
  P_subtree_sides Mint Mbyte parent (Z.of_nat m) (Z.of_nat c) side ->
  forall x y, (x < m)%nat -> (y < m)%nat ->
  (sideN x = sideN y <-> joined nat (tree_less c) x y).
Proof.
  intros Hc Hrk Hsd.
  assert (H0m : (0 < m)%nat) by lia.
  destruct (ranked_tree_joint Hrk) as [_ Hrt].
  pose proof (sides_forest H0m c Hc Hrk Hsd) as Hcomp.
  (* joined over the subset type is joined over nat on tree_less *)
  assert (Hin : forall a b : Vm, In (a, b) (forest H0m c) ->
                In (proj1_sig a, proj1_sig b) (tree_less c)).
  { intros a b H; apply forest_in in H as (H1 & H2 & ->).
    unfold tree_less; apply in_map_iff; exists (proj1_sig b).
    unfold parV; rewrite vm_of_id by (destruct b as [b Hb]; apply (Hrt b); simpl in *; lia).
    split; [reflexivity |].
    apply filter_In; split.
    - destruct b as [b Hb]; simpl in *; apply in_seq; lia.
    - apply negb_true_iff, Nat.eqb_neq; exact H2. }
  assert (Hback : forall a b, In (a, b) (tree_less c) ->
                  exists (Ha : (a < m)%nat) (Hb : (b < m)%nat),
                  In (exist _ a Ha, exist _ b Hb) (forest H0m c)).
  { intros a b H; unfold tree_less in H; apply in_map_iff in H as (v & He & Hv).
    injection He as <- <-; apply filter_In in Hv as [Hv Hne].
    apply in_seq in Hv; apply negb_true_iff, Nat.eqb_neq in Hne.
    assert (Hp : (parN v < m)%nat) by (apply (Hrt v); lia).
    assert (Hvm : (v < m)%nat) by lia.
    exists Hp, Hvm; apply forest_in; simpl; split; [lia | split; [exact Hne |]].
    apply vm_eq; unfold parV; rewrite vm_of_id; simpl; auto. }
  intros x y Hx Hy.
  rewrite (Hcomp (exist _ x Hx) (exist _ y Hy)); simpl; split.
  - intro H; remember (exist (fun v => (v < m)%nat) x Hx) as a eqn:Ea.
    remember (exist (fun v => (v < m)%nat) y Hy) as b eqn:Eb.
    revert x Hx Ea y Hy Eb; induction H as [a | a a' b Hab _ IH | a a' b Hab _ IH];
      intros x Hx Ea y Hy Eb; subst.
    + injection Eb as ->; apply joined_here.
    + apply Hin in Hab; destruct a' as [a' Ha'].
      apply (joined_fwd nat _ x a' y Hab), (IH a' Ha' eq_refl y Hy eq_refl).
    + apply Hin in Hab; destruct a' as [a' Ha'].
      apply (joined_bwd nat _ x a' y Hab), (IH a' Ha' eq_refl y Hy eq_refl).
  - intro H; revert Hx; induction H as [a | a a' b Hab _ IH | a a' b Hab _ IH]; intro Hx.
    + replace Hy with Hx by apply le_unique; apply joined_here.
    + destruct (Hback a a' Hab) as (Ha & Ha' & HF).
      replace Hx with Ha by apply le_unique.
      apply (joined_fwd Vm _ _ _ _ HF), IH.
    + destruct (Hback a' a Hab) as (Ha' & Ha & HF).
      replace Hx with Ha by apply le_unique.
      apply (joined_bwd Vm _ _ _ _ HF), IH.
Qed.

(* The end of the chain: what WP proves of optimal_bipartition (its
   postconditions `tree`, `sides` for the cut vertex c and `run`) makes
   the C's two sides an optimal bipartition in Algorithm 1's sense: every
   pair the sides separate is at most as similar as some pair separated by
   any other bipartition D of the m items.  This is
   prim_bipartition_optimal of Bipartition.v for the run of run_joint, the
   cut step the slot of c; every hypothesis of it is proved here from WP's
   definitions, none read. *)
(* req: cfl.alg1.opt, cfl.alg1.l7 *)
Theorem bipartition_joint c :
  (1 <= c < m)%nat ->
  P_ranked_tree Mint rank parent (Z.of_nat m) ->
  P_last_edge Mf64 Mint alpha (Z.of_nat m) parent (Z.of_nat c) ->
  P_subtree_sides Mint Mbyte parent (Z.of_nat m) (Z.of_nat c) side ->
  P_prim_perm order slot (Z.of_nat m) ->
  P_prim_cuts Mf64 Mint order slot alpha (Z.of_nat m) parent (Z.of_nat m) ->
  forall D : nat -> bool,
  (exists x y, (x < m)%nat /\ (y < m)%nat /\ D x <> D y) ->
  forall a b, (a < m)%nat -> (b < m)%nat -> sideN a <> sideN b ->
  exists i j, (i < m)%nat /\ (j < m)%nat /\ D i <> D j /\
    alphaN (edge_pos m a b) <= alphaN (edge_pos m i j).
Proof.
  intros Hc Hrk Hlast Hsd Hpm Hcuts D (x & y & Hx & Hy & Hxy) a b Ha Hb Hab.
  assert (H0m : (0 < m)%nat) by lia.
  destruct (run_joint H0m Hrk Hpm Hcuts) as (Hcut & Hinj & Hearlier & _ & Honto).
  destruct (run_steps H0m Hrk Hpm Hcuts) as (Hord & Hslot0 & Hvx & Hpar).
  destruct (prim_perm_joint Hpm) as [Ho Hs].
  (* the cut step: the slot of c *)
  set (cs := ghostN slot c).
  assert (Hocs : ghostN order cs = c) by (apply (Hs c); lia).
  assert (Hcs : (1 <= cs <= m - 1)%nat).
  { assert (cs < m)%nat by (apply (Hs c); lia).
    split; [| lia].
    destruct (Nat.eq_dec cs 0) as [e | ne]; [| lia].
    rewrite e in Hocs; destruct (Hs 0%nat H0m) as [_ Ho0].
    rewrite Hslot0 in Ho0; lia. }
  assert (Hclast : forall k, (1 <= k <= m - 1)%nat ->
            ~ before_pos Vm alphaN posV (parS H0m cs) (orderV H0m cs)
                (parS H0m k) (orderV H0m k)).
  { intros k Hk.
    change (~ before_pos nat alphaN (edge_pos m)
               (proj1_sig (parS H0m cs)) (proj1_sig (orderV H0m cs))
               (proj1_sig (parS H0m k)) (proj1_sig (orderV H0m k))).
    rewrite !Hpar, !Hord, Hocs by lia.
    apply (last_edge_joint c Hlast), Hvx, Hk. }
  (* the forest of sides_forest lists the tree edges of the steps ≠ cs *)
  assert (Hfe : forall u w, In (u, w) (forest H0m c) <->
            exists k, (1 <= k <= m - 1)%nat /\ k <> cs /\
                      u = parS H0m k /\ w = orderV H0m k).
  { intros u w; rewrite forest_in; split.
    - intros (H1 & H2 & ->).
      destruct w as [w Hw]; simpl in *.
      destruct (Hs w Hw) as [Hsw Hosw].
      assert (Hk1 : ghostN slot w <> 0%nat)
        by (intro e; rewrite e in Hosw; destruct (Hs 0%nat H0m) as [_ Ho0];
            rewrite Hslot0 in Ho0; lia).
      assert (Hwv : orderV H0m (ghostN slot w) = exist _ w Hw)
        by (apply vm_eq; rewrite Hord by lia; exact Hosw).
      exists (ghostN slot w); split; [lia |]; split.
      + intro e; apply H2; rewrite <- Hosw, <- Hocs, e; reflexivity.
      + split; [| symmetry; exact Hwv].
        unfold parS; rewrite Hwv; reflexivity.
    - intros (k & Hk & Hkc & -> & ->); split; [| split].
      + rewrite Hord by lia; apply Nat.neq_0_lt_0, Hvx, Hk.
      + rewrite Hord by lia; intro e; apply Hkc.
        apply (perm_order_inj m (ghostN order) (ghostN slot) (conj Ho Hs));
          try lia; rewrite e, Hocs; reflexivity.
      + reflexivity. }
  destruct (prim_bipartition_optimal Vm alphaN posV posV_sym posV_inj
              (m - 1) (orderV H0m) (parS H0m) joinedV
              Hcut Hinj Hearlier cs Hcs Hclast (forest H0m c) Hfe
              (fun v => sideN (proj1_sig v)) (sides_forest H0m c Hc Hrk Hsd) Honto
              (fun v => D (proj1_sig v))
              (ex_intro _ (exist _ x Hx) (ex_intro _ (exist _ y Hy) Hxy))
              (exist _ a Ha) (exist _ b Hb) Hab)
    as ([i Hi] & [j Hj] & Hd & Hle).
  exists i, j; auto.
Qed.

End Joint.
