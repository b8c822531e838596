(* proofs/coq/Bipartition.v: CFL's optimal bipartition.

   Paper.  F. Sattler, K.-R. Müller, W. Samek, "Clustered Federated
   Learning: Model-Agnostic Distributed Multitask Optimization Under Privacy
   Constraints", IEEE TNNLS 32(8):3710–3722, 2021, arXiv 1910.01991, §III
   and Algorithm 1 ("Optimal Bipartition"): the bipartition
     (c₁, c₂) = argmin over c₁ ⊔ c₂ = c, c₁, c₂ ≠ ∅ of max_{i∈c₁, j∈c₂} α_ij
   is what Algorithm 1 returns: sort the pairs by decreasing α (line 1),
   merge the clusters of each pair in that order (lines 3–5), and stop when
   two clusters remain (line 6).

   Model.  Items of any type V, similarities α : V → V → ℝ (no symmetry
   needed), the sorted list s of every pair (line 1: s holds every (a, b);
   every pair among its first k precedes, in α, every pair after them).
   When Algorithm 1 stops after k pairs, its two clusters are the connected
   components of the graph on those first k pairs; C : V → bool names them
   (components: C x = C y exactly when x and y are joined by a path of
   those pairs, in either direction).  Any bipartition is a D : V → bool
   taking both values.

   Proved.
     - crossing_edge: a path from x to y with D x ≠ D y has an edge whose
       ends D separates;
     - cross_after: every pair C separates comes after the first k pairs, so
       its α is at most that of any of them;
     - bipartition_optimal: for every bipartition D and every pair (a, b)
       that C separates, some pair (i, j) that D separates has α_ab ≤ α_ij.
       So max over D's cross pairs ≥ max over C's cross pairs: C minimises
       the largest cross-cluster similarity (α_max^cross) over all
       bipartitions, as the paper states.
   The sort key's tie rule (the row-major position) does not enter: any
   order by decreasing α gives an optimal C.

   C code it justifies: optimal_bipartition in ref/engine/cluster.c
   (pflref_cluster_bipartition with PFLREF_BIPARTITION_OPTIMAL), which
   builds Algorithm 1's forest as the maximum spanning tree under the strict
   order of line 1 (Prim) less its last edge in that order; the kernels of
   its subtree walk are proved by Frama-C (proofs/README.md).  The
   sections at the end prove that Prim's tree is Kruskal's under that
   order (prim_equals_kruskal, prim_is_kruskal), that it is a
   maximum-weight spanning tree (prim_maximal), and that the C's sides,
   the tree less its last edge, satisfy bipartition_optimal's conclusion
   (prim_bipartition_optimal, proved from Prim's tree directly);
   PrimControl.v is their negative control. *)

From Coq Require Import Reals List Bool Lia Lra Permutation.
Import ListNotations.
Open Scope R_scope.

Section Bipartition.

Variable V : Type.
Variable alpha : V -> V -> R.

Inductive joined (E : list (V * V)) : V -> V -> Prop :=
| joined_here x : joined E x x
| joined_fwd x y z : In (x, y) E -> joined E y z -> joined E x z
| joined_bwd x y z : In (y, x) E -> joined E y z -> joined E x z.

Lemma crossing_edge (E : list (V * V)) (D : V -> bool) x y :
  joined E x y -> D x <> D y ->
  exists i j, In (i, j) E /\ D i <> D j.
Proof.
  induction 1 as [x | x y z Hxy _ IH | x y z Hyx _ IH]; intro Hd.
  - now elim Hd.
  - destruct (bool_dec (D x) (D y)) as [e | n].
    + apply IH; now rewrite <- e.
    + now exists x, y.
  - destruct (bool_dec (D x) (D y)) as [e | n].
    + apply IH; now rewrite <- e.
    + exists y, x; split; auto.
Qed.

Variable s : list (V * V).
Variable k : nat.
Variable C : V -> bool.

Hypothesis every_pair : forall a b, In (a, b) s.
Hypothesis sorted : forall e f, In e (firstn k s) -> In f (skipn k s) ->
  alpha (fst f) (snd f) <= alpha (fst e) (snd e).
Hypothesis components : forall x y, C x = C y <-> joined (firstn k s) x y.

Lemma cross_after a b : C a <> C b ->
  forall i j, In (i, j) (firstn k s) -> alpha a b <= alpha i j.
Proof.
  intros Hab i j Hij.
  assert (Hs : In (a, b) (firstn k s ++ skipn k s))
    by (rewrite firstn_skipn; apply every_pair).
  apply in_app_or in Hs as [Hf | Hl].
  - elim Hab; apply components.
    apply (joined_fwd _ a b b Hf), joined_here.
  - exact (sorted (i, j) (a, b) Hij Hl).
Qed.

Lemma split_side (D : V -> bool) x y a b : C a <> C b -> C x = C a -> C y = C b ->
  D x <> D y -> exists i j, D i <> D j /\ alpha a b <= alpha i j.
Proof.
  intros Hab Hxa Hyb Hxy.
  destruct (bool_dec (D a) (D x)) as [ea | na].
  2: { destruct (crossing_edge (firstn k s) D a x) as (i & j & Hij & Hd).
       - apply components; now rewrite Hxa.
       - exact na.
       - exists i, j; split; [exact Hd | exact (cross_after a b Hab i j Hij)]. }
  destruct (bool_dec (D b) (D y)) as [eb | nb].
  2: { destruct (crossing_edge (firstn k s) D b y) as (i & j & Hij & Hd).
       - apply components; now rewrite Hyb.
       - exact nb.
       - exists i, j; split; [exact Hd | exact (cross_after a b Hab i j Hij)]. }
  exists a, b; split.
  - rewrite ea, eb; exact Hxy.
  - apply Rle_refl.
Qed.

(* req: cfl.alg1.opt *)
Theorem bipartition_optimal (D : V -> bool) :
  (exists x y, D x <> D y) ->
  forall a b, C a <> C b -> exists i j, D i <> D j /\ alpha a b <= alpha i j.
Proof.
  intros (x & y & Hxy) a b Hab.
  destruct (bool_dec (C x) (C y)) as [exy | nxy].
  - destruct (crossing_edge (firstn k s) D x y) as (i & j & Hij & Hd).
    + now apply components.
    + exact Hxy.
    + exists i, j; split; [exact Hd | exact (cross_after a b Hab i j Hij)].
  - destruct (bool_dec (C x) (C a)) as [exa | nxa].
    + apply (split_side D x y a b Hab exa).
      destruct (C y), (C b), (C x), (C a); congruence.
      exact Hxy.
    + apply (split_side D y x a b Hab).
      * destruct (C y), (C b), (C x), (C a); congruence.
      * destruct (C y), (C b), (C x), (C a); congruence.
      * intro e; exact (Hxy (eq_sym e)).
Qed.

End Bipartition.

(* The C's sides are the components (the hypothesis `components` above).

   optimal_bipartition (ref/engine/cluster.c) takes side 1 to be the
   subtree of c in Prim's tree: the ACSL predicate in_subtree of
   proofs/acsl/cluster.h, which WP proves the C computes (subtree_side's
   postcondition `subtree`), defined here the same way: c, and every
   v ≠ r (the root, item 0) whose parent is in it.  WP also proves that
   Prim's parent array is a tree rooted at r (ranked_tree: a rank that
   falls strictly from every v ≠ r to its parent).  Under that hypothesis,
   subtree_components proves that the subtree of c is one component of the
   tree less its edge (parent c, c) and the rest the other: two items are on
   the same side exactly when the remaining tree edges join them, which is
   `components` for the forest F = tree less that edge.  That these sides
   are optimal is prim_bipartition_optimal (section Maximal), which takes
   this theorem's conclusion as its hypothesis side_components. *)

Section Subtree.

Local Open Scope nat_scope.

Variable V : Type.
Variable r c : V.
Variable parent : V -> V.
Variable rank : V -> nat.

Hypothesis eq_dec : forall x y : V, {x = y} + {x <> y}.
Hypothesis c_not_root : c <> r.
Hypothesis ranked : forall v, v <> r -> rank (parent v) < rank v.

Inductive in_subtree : V -> Prop :=
| subtree_top : in_subtree c
| subtree_below v : v <> r -> v <> c -> in_subtree (parent v) -> in_subtree v.

(* F: the tree edges (parent v, v), v ≠ r, less the edge of c. *)
Variable F : list (V * V).
Hypothesis forest : forall x y, In (x, y) F <-> y <> r /\ y <> c /\ x = parent y.

Variable D : V -> bool.
Hypothesis D_subtree : forall v, D v = true <-> in_subtree v.

Lemma joined_trans x y z : joined V F x y -> joined V F y z -> joined V F x z.
Proof.
  induction 1 as [x | x y' w H _ IH | x y' w H _ IH]; intro Hz; auto.
  - exact (joined_fwd V F x y' z H (IH Hz)).
  - exact (joined_bwd V F x y' z H (IH Hz)).
Qed.

Lemma joined_sym x y : joined V F x y -> joined V F y x.
Proof.
  induction 1 as [x | x y' w H _ IH | x y' w H _ IH].
  - apply joined_here.
  - apply (joined_trans w y' x IH).
    apply (joined_bwd V F y' x x H), joined_here.
  - apply (joined_trans w y' x IH).
    apply (joined_fwd V F y' x x H), joined_here.
Qed.

Lemma subtree_step v : v <> r -> v <> c -> (in_subtree v <-> in_subtree (parent v)).
Proof.
  intros Hr Hc; split.
  - intro H; inversion H as [Hv | w _ _ Hp]; [now elim Hc | exact Hp].
  - intro Hp; exact (subtree_below v Hr Hc Hp).
Qed.

Lemma root_outside : ~ in_subtree r.
Proof.
  intro H; inversion H as [Hv | w Hr _ _]; [exact (c_not_root Hv) | now elim Hr].
Qed.

(* Every item is joined, by F, to c when it is in the subtree, else to r:
   by induction on its rank. *)
Lemma joined_top n : forall v, rank v = n ->
  (in_subtree v -> joined V F v c) /\ (~ in_subtree v -> joined V F v r).
Proof.
  induction n as [n IH] using lt_wf_ind; intros v Hn.
  destruct (eq_dec v c) as [-> | Hc].
  { split; intro H; [apply joined_here | elim H; apply subtree_top]. }
  destruct (eq_dec v r) as [-> | Hr].
  { split; intro H; [elim (root_outside H) | apply joined_here]. }
  assert (Hedge : In (parent v, v) F) by (apply forest; auto).
  assert (Hlt : rank (parent v) < n) by (rewrite <- Hn; apply ranked, Hr).
  destruct (IH (rank (parent v)) Hlt (parent v) eq_refl) as [Hin Hout].
  split; intro H.
  - apply (joined_bwd V F v (parent v) c Hedge), Hin.
    exact (proj1 (subtree_step v Hr Hc) H).
  - apply (joined_bwd V F v (parent v) r Hedge), Hout.
    intro Hp; exact (H (proj2 (subtree_step v Hr Hc) Hp)).
Qed.

Lemma edge_same x y : In (x, y) F -> D x = D y.
Proof.
  intro H; apply forest in H as (Hr & Hc & ->).
  pose proof (subtree_step y Hr Hc) as Hs.
  destruct (D (parent y)) eqn:Ep, (D y) eqn:Ey; auto.
  - apply D_subtree in Ep; apply Hs, D_subtree in Ep; congruence.
  - apply D_subtree in Ey; apply Hs, D_subtree in Ey; congruence.
Qed.

(* req: cfl.alg1.l7 *)
Theorem subtree_components x y : D x = D y <-> joined V F x y.
Proof.
  split.
  - intro Hxy.
    destruct (joined_top (rank x) x eq_refl) as [Hxi Hxo].
    destruct (joined_top (rank y) y eq_refl) as [Hyi Hyo].
    destruct (D x) eqn:Ex.
    + assert (Ix : in_subtree x) by (apply D_subtree; exact Ex).
      assert (Iy : in_subtree y) by (apply D_subtree; congruence).
      exact (joined_trans x c y (Hxi Ix) (joined_sym y c (Hyi Iy))).
    + assert (Ix : ~ in_subtree x)
        by (intro I; apply D_subtree in I; congruence).
      assert (Iy : ~ in_subtree y)
        by (intro I; apply D_subtree in I; congruence).
      exact (joined_trans x r y (Hxo Ix) (joined_sym y r (Hyo Iy))).
  - induction 1 as [x | x y' z H _ IH | x y' z H _ IH].
    + reflexivity.
    + rewrite (edge_same x y' H); exact IH.
    + rewrite <- (edge_same y' x H); exact IH.
Qed.

End Subtree.

(* Prim's tree is the maximum spanning tree (the cut property, in Coq).

   Model.  Items of any type V and a strict order on the edges of the
   complete graph, `before a b c d`: the edge {a, b} comes strictly before
   {c, d} (larger α, then the smaller upper-triangle position: edge_first
   of proofs/acsl/cluster.h, line 1's stable argsort(−α[:])).  Only
   first_across_exchange needs a property of it: totality (before_total:
   of two distinct edges one comes first, as the positions of distinct
   edges differ).  A cut is S : V → bool (the tree so far, against the
   rest), and an edge (u, w) is first across S when it crosses S and no
   edge crossing S, named either way round, comes before it: that is the
   WP assertion cut_property of max_spanning_tree (ref/engine/cluster.c),
   with S the vertices in_tree at the join and (u, w) = (link[best], best),
   the edge (parent[best], best) that joins.  cut_property names each
   crossing edge from its tree end; edge_first does not depend on the
   order of an edge's ends (edge_pos(a, b) = edge_pos(b, a) by its
   definition), so it covers the other naming too (ClusterJoint.v's
   run_joint proves it for the C's run, with S the vertices of slot < k
   at step k: the postcondition `run`, prim_cuts, keeps cut_property of
   every join).

   Proved.
     - first_across_kruskal: an edge first across some cut is not closed
       by the edges before it: the edges that come strictly before (u, w)
       never join u and w.  That is Kruskal's test (Algorithm 1, l. 3–5,
       merges the clusters of a pair exactly when they differ), so Kruskal
       on the sorted list keeps every edge Prim adds;
     - first_across_exchange: an edge first across a cut lies in every
       edge set that joins its ends, or that set holds an edge crossing the
       cut that comes strictly after it (the exchange step of the cut
       property: a spanning tree without it has a later edge on the path
       between its ends, and trading the two gives a better tree);
     - prim_tree_kruskal: for a run of Prim, each join's edge first across
       the cut of the vertices joined before it, every tree edge is an edge
       that Kruskal's run on the sorted list keeps.
   That the two trees are equal, and maximal, is the next two sections'
   (prim_equals_kruskal, prim_maximal; tree_exchange is the exchange's
   other half).  The link to the C is machine-checked in ClusterJoint.v
   on WP's translation: `before` is edge_first (edge_first_joint: the
   same definition, before_pos below: larger α, then the smaller
   edge_pos), and first_across is proved of every step of the C's run
   (run_joint). *)

Section Prim.

Variable V : Type.
Variable before : V -> V -> V -> V -> Prop.

Definition same_edge (a b c d : V) := (a = c /\ b = d) \/ (a = d /\ b = c).

Hypothesis before_total : forall a b c d,
  before a b c d \/ before c d a b \/ same_edge a b c d.

Definition crosses (S : V -> bool) (a b : V) := S a <> S b.

(* cut_property: (u, w) crosses S, and no crossing edge comes before it. *)
Definition first_across (S : V -> bool) (u w : V) :=
  crosses S u w /\ forall a b, crosses S a b -> ~ before a b u w.

(* req: cfl.alg1.opt *)
Theorem first_across_kruskal (S : V -> bool) u w (E : list (V * V)) :
  first_across S u w ->
  (forall a b, In (a, b) E -> before a b u w) ->
  ~ joined V E u w.
Proof.
  intros [Hc Hfirst] Hbefore Hj.
  destruct (crossing_edge V E S u w Hj Hc) as (i & j & Hij & Hd).
  exact (Hfirst i j Hd (Hbefore i j Hij)).
Qed.

(* req: cfl.alg1.opt *)
Theorem first_across_exchange (S : V -> bool) u w (E : list (V * V)) :
  first_across S u w -> joined V E u w ->
  In (u, w) E \/ In (w, u) E \/
  exists a b, In (a, b) E /\ crosses S a b /\ before u w a b.
Proof.
  intros [Hc Hfirst] Hj.
  destruct (crossing_edge V E S u w Hj Hc) as (a & b & Hab & Hd).
  destruct (before_total a b u w) as [Hb | [Hb | [[-> ->] | [-> ->]]]].
  - elim (Hfirst a b Hd Hb).
  - right; right; exists a, b; auto.
  - left; exact Hab.
  - right; left; exact Hab.
Qed.

(* A run of Prim on n + 1 vertices: vertex (order k) joins at step k
   (order 0 is the root), by the edge (par k, order k) from a vertex
   joined before; the cut at step k, joined_by k, is the set of the
   vertices joined at steps < k (in_tree before the join; the theorem
   needs nothing of it but prim_cut).  Each join's edge is first across
   that cut: the WP assertion cut_property at every join. *)
Variable n : nat.
Variable order : nat -> V.
Variable par : nat -> V.
Variable joined_by : nat -> V -> bool.
Hypothesis prim_cut : forall k, (1 <= k <= n)%nat ->
  first_across (joined_by k) (par k) (order k).

(* Kruskal's run on the sorted list s (every pair, in the order `before`,
   Bipartition's model) keeps the pair (a, b) exactly when the pairs
   before it do not join a and b.  Every edge of Prim's tree passes that
   test, whatever the pairs before it are. *)
(* req: cfl.alg1.opt *)
Theorem prim_tree_kruskal k (E : list (V * V)) : (1 <= k <= n)%nat ->
  (forall a b, In (a, b) E -> before a b (par k) (order k)) ->
  ~ joined V E (par k) (order k).
Proof.
  intros Hk HE.
  exact (first_across_kruskal (joined_by k) (par k) (order k) E
           (prim_cut k Hk) HE).
Qed.

End Prim.

(* Prim's tree is Kruskal's tree, and a maximum-weight spanning tree.

   Model.  As in the section Prim (the same run: prim_cut at every join),
   with what WP proves of the run besides the cut property:
     - order_onto: every vertex joins at some step k ≤ n (the C's
       postcondition `spanning`, every in_tree[v] ≠ 0, with the ghost
       permutation prim_order: the vertex of slot k);
     - par_earlier: the edge of step k ≥ 1 hangs from a vertex joined at a
       step j < k (the postcondition `run`: prim_step's
       prim_slot[parent[prim_order[k]]] < k, run_joint);
   and of the order `before` (edge_first), that it is a strict total
   order on the edges: irreflexive on an edge however its ends are named,
   transitive, total (before_total).  before_of_positions below proves
   these three for edge_first's definition itself (larger α, then the
   smaller position), given the two facts of edge_pos that its definition
   shows: the same position whichever end is named first, distinct
   positions for distinct edges.

   Kruskal's tree (Algorithm 1, l. 3–5, run on the whole sorted list, and
   not stopped) keeps the pair (a, b) exactly when the pairs strictly
   before it do not join a and b: kruskal_keeps, the model of
   prim_tree_kruskal.  (The run tests (a, b) against the pairs it kept
   before it, which join the same items as all the pairs before it, a
   pair it drops having its ends joined already: kruskal_run_joins, at the
   end of the file.  On the sorted list the pairs before (a, b) are those
   strictly before it in the order and earlier namings of the same edge,
   whose second naming the run drops: read, not proved.)

   Proved.
     - kruskal_acyclic: Kruskal's edges hold no cycle: a list of kept
       pairs that joins the ends of a kept pair holds that pair (were it
       missing, the latest pair of the list would be closed by earlier
       ones, through the walk around it);
     - prim_spans: Prim's tree joins every two items;
     - prim_equals_kruskal: a pair is kept by Kruskal exactly when it is
       an edge of Prim's tree (either way round): one half is
       prim_tree_kruskal's argument, the other kruskal_acyclic applied to
       Prim's tree, whose edges Kruskal keeps and which joins the ends of
       every pair.  So Prim's tree is Kruskal's, edge for edge, under the
       code's strict order with its tie rule. *)

Section PrimKruskal.

Local Open Scope nat_scope.

Variable V : Type.
Hypothesis eq_dec : forall x y : V, {x = y} + {x <> y}.
Variable before : V -> V -> V -> V -> Prop.

Hypothesis before_irrefl : forall a b c d,
  same_edge V a b c d -> ~ before a b c d.
Hypothesis before_trans : forall a b c d e f,
  before a b c d -> before c d e f -> before a b e f.
Hypothesis before_total : forall a b c d,
  before a b c d \/ before c d a b \/ same_edge V a b c d.

Lemma same_edge_sym a b c d : same_edge V a b c d -> same_edge V c d a b.
Proof. unfold same_edge; intuition congruence. Qed.

Lemma same_edge_trans a b c d e f :
  same_edge V a b c d -> same_edge V c d e f -> same_edge V a b e f.
Proof. unfold same_edge; intuition congruence. Qed.

Lemma same_edge_dec a b c d : {same_edge V a b c d} + {~ same_edge V a b c d}.
Proof.
  unfold same_edge.
  destruct (eq_dec a c), (eq_dec b d), (eq_dec a d), (eq_dec b c);
    subst; tauto.
Qed.

(* An edge's place in the order does not depend on how it is named. *)
Lemma before_same_l a b c d e f :
  same_edge V a b c d -> before c d e f -> before a b e f.
Proof.
  intros Hs Hb.
  destruct (before_total a b e f) as [H | [H | H]]; [exact H | |].
  - elim (before_irrefl c d a b (same_edge_sym _ _ _ _ Hs)).
    exact (before_trans _ _ _ _ _ _ Hb H).
  - elim (before_irrefl c d e f).
    + exact (same_edge_trans _ _ _ _ _ _ (same_edge_sym _ _ _ _ Hs) H).
    + exact Hb.
Qed.

Lemma before_same_r a b c d e f :
  same_edge V c d e f -> before a b c d -> before a b e f.
Proof.
  intros Hs Hb.
  destruct (before_total a b e f) as [H | [H | H]]; [exact H | |].
  - elim (before_irrefl a b a b); [left; auto |].
    apply (before_trans _ _ _ _ _ _ Hb).
    exact (before_same_l _ _ _ _ _ _ Hs H).
  - elim (before_irrefl a b c d).
    + exact (same_edge_trans _ _ _ _ _ _ H (same_edge_sym _ _ _ _ Hs)).
    + exact Hb.
Qed.

Lemma swap_edge a b : same_edge V a b b a.
Proof. right; auto. Qed.

(* Items joined by a set of edges given by a predicate (the edges before a
   pair are not a list). *)
Inductive linked (P : V -> V -> Prop) : V -> V -> Prop :=
| linked_here x : linked P x x
| linked_fwd x y z : P x y -> linked P y z -> linked P x z
| linked_bwd x y z : P y x -> linked P y z -> linked P x z.

Lemma linked_trans P x y z : linked P x y -> linked P y z -> linked P x z.
Proof.
  induction 1 as [x | x y' w H _ IH | x y' w H _ IH]; intro Hz; auto.
  - exact (linked_fwd P x y' z H (IH Hz)).
  - exact (linked_bwd P x y' z H (IH Hz)).
Qed.

Lemma linked_sym P x y : linked P x y -> linked P y x.
Proof.
  induction 1 as [x | x y' w H _ IH | x y' w H _ IH].
  - apply linked_here.
  - apply (linked_trans P w y' x IH).
    apply (linked_bwd P y' x x H), linked_here.
  - apply (linked_trans P w y' x IH).
    apply (linked_fwd P y' x x H), linked_here.
Qed.

Lemma linked_of_joined (E : list (V * V)) (P : V -> V -> Prop) x y :
  (forall c d, In (c, d) E -> P c d) -> joined V E x y -> linked P x y.
Proof.
  intros HP.
  induction 1 as [x | x y' w H _ IH | x y' w H _ IH].
  - apply linked_here.
  - exact (linked_fwd P x y' w (HP _ _ H) IH).
  - exact (linked_bwd P x y' w (HP _ _ H) IH).
Qed.

Lemma linked_cross (P : V -> V -> Prop) (D : V -> bool) x y :
  linked P x y -> D x <> D y -> exists i j, P i j /\ D i <> D j.
Proof.
  induction 1 as [x | x y z Hxy _ IH | x y z Hyx _ IH]; intro Hd.
  - now elim Hd.
  - destruct (bool_dec (D x) (D y)) as [e | ne].
    + apply IH; now rewrite <- e.
    + now exists x, y.
  - destruct (bool_dec (D x) (D y)) as [e | ne].
    + apply IH; now rewrite <- e.
    + exists y, x; split; auto.
Qed.

Lemma jn_trans (E : list (V * V)) x y z :
  joined V E x y -> joined V E y z -> joined V E x z.
Proof.
  induction 1 as [x | x y' w H _ IH | x y' w H _ IH]; intro Hz; auto.
  - exact (joined_fwd V E x y' z H (IH Hz)).
  - exact (joined_bwd V E x y' z H (IH Hz)).
Qed.

Lemma jn_sym (E : list (V * V)) x y : joined V E x y -> joined V E y x.
Proof.
  induction 1 as [x | x y' w H _ IH | x y' w H _ IH].
  - apply joined_here.
  - apply (jn_trans E w y' x IH).
    apply (joined_bwd V E y' x x H), joined_here.
  - apply (jn_trans E w y' x IH).
    apply (joined_fwd V E y' x x H), joined_here.
Qed.

Lemma jn_edge (E : list (V * V)) x y : In (x, y) E -> joined V E x y.
Proof. intro H; apply (joined_fwd V E x y y H), joined_here. Qed.

(* Kruskal keeps (a, b) when the pairs strictly before it do not join a and
   b (a pair a = b is never kept). *)
Definition kruskal_keeps (a b : V) :=
  ~ linked (fun c d => before c d a b) a b.

Lemma linked_mono (P Q : V -> V -> Prop) x y :
  (forall c d, P c d -> Q c d) -> linked P x y -> linked Q x y.
Proof.
  intros HPQ.
  induction 1 as [x | x y z H _ IH | x y z H _ IH].
  - apply linked_here.
  - exact (linked_fwd Q x y z (HPQ _ _ H) IH).
  - exact (linked_bwd Q x y z (HPQ _ _ H) IH).
Qed.

Lemma keeps_sym a b : kruskal_keeps a b -> kruskal_keeps b a.
Proof.
  intros Hk Hl; apply Hk.
  apply linked_sym.
  apply (linked_mono (fun c d => before c d b a)); [| exact Hl].
  intros c d; apply before_same_r, swap_edge.
Qed.

Lemma pair_dec (e f : V * V) : {e = f} + {e <> f}.
Proof. decide equality. Qed.

(* The latest edge of a non-empty list. *)
Lemma latest_edge (E : list (V * V)) : E <> [] ->
  exists p q, In (p, q) E /\ forall c d, In (c, d) E -> ~ before p q c d.
Proof.
  induction E as [| [x y] t IH]; intro Hne; [now elim Hne |].
  destruct t as [| h t'].
  - exists x, y; split; [now left |].
    intros c d [Hc | []]; injection Hc as <- <-.
    apply before_irrefl; left; auto.
  - destruct IH as (p & q & Hin & Hmax); [discriminate |].
    destruct (before_total p q x y) as [Hb | [Hb | Hs]].
    + exists x, y; split; [now left |].
      intros c d [Hc | Hc].
      * injection Hc as <- <-; apply before_irrefl; left; auto.
      * intro Hxc; exact (Hmax c d Hc (before_trans _ _ _ _ _ _ Hb Hxc)).
    + exists p, q; split; [now right |].
      intros c d [Hc | Hc].
      * injection Hc as <- <-; intro H.
        exact (before_irrefl p q p q (or_introl (conj eq_refl eq_refl))
                 (before_trans _ _ _ _ _ _ H Hb)).
      * exact (Hmax c d Hc).
    + exists p, q; split; [now right |].
      intros c d [Hc | Hc].
      * injection Hc as <- <-; apply before_irrefl; exact Hs.
      * exact (Hmax c d Hc).
Qed.

(* The list less every naming of the edge (p, q). *)
Definition drop_edge (p q : V) (E : list (V * V)) :=
  filter (fun e => if same_edge_dec (fst e) (snd e) p q then false else true) E.

Lemma drop_edge_in p q E c d :
  In (c, d) (drop_edge p q E) <-> In (c, d) E /\ ~ same_edge V c d p q.
Proof.
  unfold drop_edge; rewrite filter_In; simpl.
  destruct (same_edge_dec c d p q); intuition discriminate.
Qed.

Lemma drop_edge_shorter p q E :
  In (p, q) E -> length (drop_edge p q E) < length E.
Proof.
  induction E as [| [x y] t IH]; intros H; [destruct H |].
  unfold drop_edge; simpl.
  destruct (same_edge_dec x y p q) as [Hs | Hs].
  - fold (drop_edge p q t).
    apply Nat.lt_succ_r.
    clear IH H; induction t as [| [u w] t' IH']; simpl; [apply le_n |].
    unfold drop_edge in IH' |- *; simpl.
    destruct (same_edge_dec u w p q); simpl; lia.
  - destruct H as [H | H].
    + injection H as -> ->; elim Hs; left; auto.
    + fold (drop_edge p q t); simpl.
      apply (proj1 (Nat.succ_lt_mono _ _)), IH, H.
Qed.

(* A walk of E from x to b either avoids the edge (p, q) or crosses it. *)
Definition around (E : list (V * V)) p q x b :=
  joined V E x b \/ (joined V E x p /\ joined V E q b) \/
  (joined V E x q /\ joined V E p b).

Lemma around_swap E p q x y b :
  (x = p /\ y = q) \/ (x = q /\ y = p) -> around E p q y b -> around E p q x b.
Proof.
  unfold around; intros [[-> ->] | [-> ->]] [H | [[H1 H2] | [H1 H2]]].
  - right; left; split; [apply joined_here | exact H].
  - left; exact (jn_trans E p q b (jn_sym E q p H1) H2).
  - left; exact H2.
  - right; right; split; [apply joined_here | exact H].
  - left; exact H2.
  - left; exact (jn_trans E q p b (jn_sym E p q H1) H2).
Qed.

Lemma walk_around E p q x b :
  joined V E x b -> around (drop_edge p q E) p q x b.
Proof.
  induction 1 as [x | x y z H _ IH | x y z H _ IH].
  - left; apply joined_here.
  - destruct (same_edge_dec x y p q) as [Hs | Hs].
    + apply (around_swap _ p q x y z); [destruct Hs; auto | exact IH].
    + assert (H' : In (x, y) (drop_edge p q E)) by (apply drop_edge_in; auto).
      destruct IH as [J | [[J1 J2] | [J1 J2]]]; unfold around.
      * left; exact (joined_fwd _ _ x y z H' J).
      * right; left; split; [exact (joined_fwd _ _ x y p H' J1) | exact J2].
      * right; right; split; [exact (joined_fwd _ _ x y q H' J1) | exact J2].
  - destruct (same_edge_dec y x p q) as [Hs | Hs].
    + apply (around_swap _ p q x y z);
        [destruct Hs as [[-> ->] | [-> ->]]; auto | exact IH].
    + assert (H' : In (y, x) (drop_edge p q E)) by (apply drop_edge_in; auto).
      destruct IH as [J | [[J1 J2] | [J1 J2]]]; unfold around.
      * left; exact (joined_bwd _ _ x y z H' J).
      * right; left; split; [exact (joined_bwd _ _ x y p H' J1) | exact J2].
      * right; right; split; [exact (joined_bwd _ _ x y q H' J1) | exact J2].
Qed.

(* Kruskal's edges hold no cycle: a list of kept edges that joins the ends
   of a kept pair holds that pair. *)
Theorem kruskal_acyclic (E : list (V * V)) a b :
  (forall c d, In (c, d) E -> kruskal_keeps c d) ->
  kruskal_keeps a b -> joined V E a b -> In (a, b) E \/ In (b, a) E.
Proof.
  remember (length E) as len eqn:Hlen.
  revert E Hlen.
  induction len as [len IH] using lt_wf_ind; intros E Hlen HE Hab Hj.
  destruct (in_dec pair_dec (a, b) E)
    as [Hi | Hni]; [now left |].
  destruct (in_dec pair_dec (b, a) E)
    as [Hi | Hni']; [now right |].
  destruct E as [| e0 E0] eqn:HE0.
  { inversion Hj as [x Hx Hy | x y z Hin | x y z Hin];
      [| destruct Hin | destruct Hin].
    subst; elim Hab; apply linked_here. }
  rewrite <- HE0 in *.
  destruct (latest_edge E) as (p & q & Hpq & Hmax); [rewrite HE0; discriminate |].
  (* every edge of E other than (p, q) comes before it *)
  assert (Hearly : forall c d, In (c, d) E -> ~ same_edge V c d p q ->
                   before c d p q).
  { intros c d Hc Hs.
    destruct (before_total c d p q) as [H | [H | H]];
      [exact H | elim (Hmax c d Hc H) | elim (Hs H)]. }
  assert (Hne : ~ same_edge V a b p q).
  { intros [[-> ->] | [-> ->]]; auto. }
  destruct (before_total p q a b) as [Hlate | [Hlate | Hs]]; [| | elim (Hne (same_edge_sym _ _ _ _ Hs))].
  - (* (a, b) is the latest: E joins a and b by edges before it *)
    elim Hab.
    apply (linked_of_joined E); [| exact Hj].
    intros c d Hc.
    destruct (same_edge_dec c d p q) as [Hs | Hs].
    + exact (before_same_l _ _ _ _ _ _ Hs Hlate).
    + exact (before_trans _ _ _ _ _ _ (Hearly c d Hc Hs) Hlate).
  - (* (p, q) is later than (a, b): a walk around it closes it *)
    assert (Hdrop : forall c d, In (c, d) (drop_edge p q E) -> before c d p q).
    { intros c d Hc; apply drop_edge_in in Hc as [Hc Hs].
      exact (Hearly c d Hc Hs). }
    destruct (walk_around E p q a b Hj) as [J | [[J1 J2] | [J1 J2]]].
    + destruct (IH (length (drop_edge p q E))) with (E := drop_edge p q E)
        as [H | H]; auto.
      * rewrite Hlen; apply drop_edge_shorter, Hpq.
      * intros c d Hc; apply drop_edge_in in Hc as [Hc _]; exact (HE c d Hc).
      * apply drop_edge_in in H as [H _]; now left.
      * apply drop_edge_in in H as [H _]; now right.
    + elim (HE p q Hpq).
      apply (linked_trans _ p a q).
      * exact (linked_sym _ a p (linked_of_joined _ _ a p Hdrop J1)).
      * apply (linked_fwd _ a b q Hlate).
        exact (linked_sym _ q b (linked_of_joined _ _ q b Hdrop J2)).
    + elim (HE p q Hpq).
      apply (linked_trans _ p b q).
      * exact (linked_of_joined _ _ p b Hdrop J2).
      * apply (linked_bwd _ b a q Hlate).
        exact (linked_of_joined _ _ a q Hdrop J1).
Qed.

(* The run of Prim, as in the section Prim, and what WP proves of it. *)
Variable n : nat.
Variable order : nat -> V.
Variable par : nat -> V.
Variable joined_by : nat -> V -> bool.
Hypothesis prim_cut : forall k, (1 <= k <= n)%nat ->
  first_across V before (joined_by k) (par k) (order k).
Hypothesis order_onto : forall v, exists k, (k <= n)%nat /\ order k = v.
Hypothesis par_earlier : forall k, (1 <= k <= n)%nat ->
  exists j, (j < k)%nat /\ par k = order j.

Definition prim_edges := map (fun k => (par k, order k)) (seq 1 n).

Definition prim_edge (a b : V) :=
  exists k, (1 <= k <= n)%nat /\ a = par k /\ b = order k.

Lemma prim_edges_in a b : In (a, b) prim_edges <-> prim_edge a b.
Proof.
  unfold prim_edges, prim_edge; rewrite in_map_iff; split.
  - intros (k & Hk & Hin); apply in_seq in Hin.
    injection Hk as <- <-; exists k; split; [lia | auto].
  - intros (k & Hk & -> & ->); exists k; split; [auto | apply in_seq; lia].
Qed.

Lemma prim_edge_kept a b : prim_edge a b -> kruskal_keeps a b.
Proof.
  intros (k & Hk & -> & ->) Hl.
  destruct (prim_cut k Hk) as [Hc Hfirst].
  destruct (linked_cross _ (joined_by k) _ _ Hl Hc) as (i & j & Hb & Hd).
  exact (Hfirst i j Hd Hb).
Qed.

(* Prim's tree joins every item to the root, order 0. *)
Lemma prim_reaches_root k : (k <= n)%nat ->
  joined V prim_edges (order k) (order 0).
Proof.
  induction k as [k IH] using lt_wf_ind; intro Hk.
  destruct k as [| k']; [apply joined_here |].
  destruct (par_earlier (S k')) as (j & Hj & Hp); [lia |].
  apply (joined_bwd V prim_edges (order (S k')) (par (S k'))).
  - apply prim_edges_in; exists (S k'); split; [lia | auto].
  - rewrite Hp; apply IH; lia.
Qed.

Theorem prim_spans x y : joined V prim_edges x y.
Proof.
  destruct (order_onto x) as (i & Hi & <-).
  destruct (order_onto y) as (j & Hj & <-).
  exact (jn_trans _ _ _ _ (prim_reaches_root i Hi)
           (jn_sym _ _ _ (prim_reaches_root j Hj))).
Qed.

(* req: cfl.alg1.opt *)
Theorem prim_equals_kruskal a b :
  kruskal_keeps a b <-> prim_edge a b \/ prim_edge b a.
Proof.
  split.
  - intro Hk.
    destruct (kruskal_acyclic prim_edges a b) as [H | H].
    + intros c d Hc; apply prim_edge_kept, prim_edges_in, Hc.
    + exact Hk.
    + apply prim_spans.
    + left; apply prim_edges_in, H.
    + right; apply prim_edges_in, H.
  - intros [H | H].
    + exact (prim_edge_kept a b H).
    + exact (keeps_sym b a (prim_edge_kept b a H)).
Qed.

End PrimKruskal.

(* Prim's tree has the largest weight of all spanning trees.

   Model.  The order is edge_first itself: each edge {a, b} has a position
   pos a b (edge_pos: the same whichever end is named first, pos_sym, and
   distinct for distinct edges, pos_inj, as edge_pos's definition shows)
   and a similarity α(pos a b) (the entry of the upper triangle the C
   reads), and (a, b) comes before (c, d) when its α is larger, or equal
   with the smaller position (before_pos, edge_first's definition).
   before_of_positions proves it a strict total order, the hypotheses of
   the section PrimKruskal.  The run of Prim is the section Prim's, with
   the cut at step j holding the vertices joined before it (cut_joined:
   the loop invariant `joined`, prim_joined, in_tree[v] ≠ 0 exactly when
   prim_slot[v] < added), no vertex joined twice (order_inj: prim_perm)
   and every tree edge hanging from an earlier vertex (par_earlier, as in
   PrimKruskal).  A spanning tree of the n + 1 items is a list of n
   distinct edges (distinct positions) that joins every two items; its
   weight the sum of α over its edges.

   Proved.
     - before_of_positions: before_pos is irreflexive on an edge however
       named, transitive and total;
     - tree_exchange: a walk from a to b whose ends a cut D separates holds
       an edge (p, q) across D that (a, b) can replace: the walk's edges
       less (p, q), with (a, b), still join p and q;
     - prim_maximal: every spanning tree's weight is at most that of
       Prim's tree (the exchange argument: the first edge of Prim's tree a
       spanning tree lacks replaces, in it, an edge across the same cut,
       which by the cut property is no heavier; n such steps turn it into
       Prim's tree without losing weight). *)

Section Maximal.

Variable V : Type.
Hypothesis eq_dec : forall x y : V, {x = y} + {x <> y}.
Variable alpha : nat -> R.
Variable pos : V -> V -> nat.
Hypothesis pos_sym : forall a b, pos a b = pos b a.
Hypothesis pos_inj : forall a b c d, pos a b = pos c d -> same_edge V a b c d.

(* edge_first (proofs/acsl/cluster.h). *)
Definition before_pos (a b c d : V) :=
  alpha (pos c d) < alpha (pos a b) \/
  (alpha (pos a b) = alpha (pos c d) /\ (pos a b < pos c d)%nat).

Lemma same_edge_pos a b c d : same_edge V a b c d -> pos a b = pos c d.
Proof. intros [[-> ->] | [-> ->]]; auto. Qed.

Theorem before_of_positions :
  (forall a b c d, same_edge V a b c d -> ~ before_pos a b c d) /\
  (forall a b c d e f,
     before_pos a b c d -> before_pos c d e f -> before_pos a b e f) /\
  (forall a b c d,
     before_pos a b c d \/ before_pos c d a b \/ same_edge V a b c d).
Proof.
  unfold before_pos; split; [| split].
  - intros a b c d Hs; rewrite (same_edge_pos a b c d Hs).
    intros [H | [_ H]]; [lra | lia].
  - intros a b c d e f [H1 | [H1 H1']] [H2 | [H2 H2']].
    + left; lra.
    + left; lra.
    + left; lra.
    + right; split; [lra | lia].
  - intros a b c d.
    destruct (total_order_T (alpha (pos a b)) (alpha (pos c d)))
      as [[H | H] | H].
    + right; left; left; exact H.
    + destruct (lt_eq_lt_dec (pos a b) (pos c d)) as [[Hp | Hp] | Hp].
      * left; right; auto.
      * right; right; apply pos_inj, Hp.
      * right; left; right; auto.
    + left; left; exact H.
Qed.

Variable n : nat.
Variable order : nat -> V.
Variable par : nat -> V.
Variable joined_by : nat -> V -> bool.
Hypothesis prim_cut : forall k, (1 <= k <= n)%nat ->
  first_across V before_pos (joined_by k) (par k) (order k).
Hypothesis order_inj : forall i j, (i <= n)%nat -> (j <= n)%nat ->
  order i = order j -> i = j.
Hypothesis par_earlier : forall k, (1 <= k <= n)%nat ->
  exists j, (j < k)%nat /\ par k = order j.
Hypothesis cut_joined : forall j i, (1 <= j <= n)%nat -> (i < j)%nat ->
  joined_by j (order i) = true.

Definition epos (e : V * V) := pos (fst e) (snd e).
Definition wsum (E : list (V * V)) : R :=
  fold_right (fun e s => alpha (epos e) + s) 0 E.
Definition prim_tree := map (fun k => (par k, order k)) (seq 1 n).

(* the lemmas of lists the exchange needs *)
Lemma joined_incl (E E' : list (V * V)) x y :
  (forall c d, In (c, d) E -> joined V E' c d) -> joined V E x y ->
  joined V E' x y.
Proof.
  intros HE.
  induction 1 as [x | x y' w H _ IH | x y' w H _ IH].
  - apply joined_here.
  - exact (jn_trans V E' x y' w (HE _ _ H) IH).
  - exact (jn_trans V E' x y' w (jn_sym V E' y' x (HE _ _ H)) IH).
Qed.

Lemma joined_sub (E E' : list (V * V)) x y :
  (forall e, In e E -> In e E') -> joined V E x y -> joined V E' x y.
Proof.
  intros HE; apply joined_incl; intros c d H; apply jn_edge, HE, H.
Qed.

Theorem tree_exchange (E : list (V * V)) (D : V -> bool) a b :
  joined V E a b -> D a <> D b ->
  exists p q, In (p, q) E /\ D p <> D q /\
    joined V ((a, b) :: drop_edge V eq_dec p q E) p q.
Proof.
  remember (length E) as len eqn:Hlen.
  revert E Hlen.
  induction len as [len IH] using lt_wf_ind; intros E Hlen Hj Hd.
  destruct (crossing_edge V E D a b Hj Hd) as (p & q & Hpq & Hc).
  assert (Hsub : forall e, In e (drop_edge V eq_dec p q E) ->
                 In e ((a, b) :: drop_edge V eq_dec p q E))
    by (intros e He; now right).
  destruct (walk_around V eq_dec E p q a b Hj) as [J | [[J1 J2] | [J1 J2]]].
  - destruct (IH (length (drop_edge V eq_dec p q E))) with
        (E := drop_edge V eq_dec p q E) as (p' & q' & Hin & Hc' & J');
      auto.
    + rewrite Hlen; apply drop_edge_shorter, Hpq.
    + apply drop_edge_in in Hin as [Hin _].
      exists p', q'; split; [exact Hin | split; [exact Hc' |]].
      apply (joined_sub ((a, b) :: drop_edge V eq_dec p' q'
                                      (drop_edge V eq_dec p q E)) _ p' q');
        [| exact J'].
      intros [c d] [He | He]; [now left | right].
      apply drop_edge_in in He as [He Hs]; apply drop_edge_in in He as [He _].
      apply drop_edge_in; auto.
  - exists p, q; split; [exact Hpq | split; [exact Hc |]].
    apply (jn_trans V _ p a q).
    + exact (jn_sym V _ a p (joined_sub _ _ a p Hsub J1)).
    + apply (joined_fwd V _ a b q); [now left |].
      exact (jn_sym V _ q b (joined_sub _ _ q b Hsub J2)).
  - exists p, q; split; [exact Hpq | split; [exact Hc |]].
    apply (jn_trans V _ p b q).
    + exact (joined_sub _ _ p b Hsub J2).
    + apply (joined_bwd V _ b a q); [now left |].
      exact (joined_sub _ _ a q Hsub J1).
Qed.

(* Dropping an edge of a list of distinct edges takes one entry out. *)
Lemma drop_all (E : list (V * V)) p q :
  (forall c d, In (c, d) E -> ~ same_edge V c d p q) ->
  drop_edge V eq_dec p q E = E.
Proof.
  induction E as [| [c d] t IH]; intro H; [reflexivity |].
  unfold drop_edge in *; simpl.
  destruct (same_edge_dec V eq_dec c d p q) as [Hs | Hs].
  - elim (H c d (or_introl eq_refl) Hs).
  - f_equal; apply IH; intros c' d' Hi; apply H; now right.
Qed.

Lemma drop_one (E : list (V * V)) p q :
  In (p, q) E -> NoDup (map epos E) ->
  length E = S (length (drop_edge V eq_dec p q E)) /\
  wsum E = alpha (pos p q) + wsum (drop_edge V eq_dec p q E).
Proof.
  induction E as [| [c d] t IH]; intros Hin Hnd; [destruct Hin |].
  simpl in Hnd; apply NoDup_cons_iff in Hnd as [Hnot Hnd].
  unfold drop_edge; simpl.
  destruct (same_edge_dec V eq_dec c d p q) as [Hs | Hs].
  - fold (drop_edge V eq_dec p q t).
    rewrite drop_all.
    + unfold epos at 1; simpl; rewrite (same_edge_pos c d p q Hs); auto.
    + intros c' d' Hi Hs'; apply Hnot.
      unfold epos at 1; simpl; rewrite (same_edge_pos c d p q Hs).
      rewrite <- (same_edge_pos c' d' p q Hs').
      apply (in_map epos t (c', d') Hi).
  - destruct Hin as [Hin | Hin].
    + injection Hin as -> ->; elim Hs; left; auto.
    + fold (drop_edge V eq_dec p q t).
      destruct (IH Hin Hnd) as [Hl Hw]; simpl.
      rewrite Hl, Hw; split; [reflexivity | ring].
Qed.

Lemma nodup_drop (E : list (V * V)) p q :
  NoDup (map epos E) -> NoDup (map epos (drop_edge V eq_dec p q E)).
Proof.
  induction E as [| [c d] t IH]; intro Hnd; [constructor |].
  simpl in Hnd; apply NoDup_cons_iff in Hnd as [Hnot Hnd].
  unfold drop_edge; simpl.
  destruct (same_edge_dec V eq_dec c d p q); fold (drop_edge V eq_dec p q t).
  - exact (IH Hnd).
  - simpl; constructor; [| exact (IH Hnd)].
    intro Hi; apply Hnot.
    apply in_map_iff in Hi as ([c' d'] & He & Hi).
    apply drop_edge_in in Hi as [Hi _].
    rewrite <- He; exact (in_map epos t (c', d') Hi).
Qed.

Lemma sum_perm (l l' : list nat) : Permutation l l' ->
  fold_right (fun k s => alpha k + s) 0 l =
  fold_right (fun k s => alpha k + s) 0 l'.
Proof.
  induction 1 as [| x l l' _ IH | x y l | l l' l'' _ IH1 _ IH2]; simpl.
  - reflexivity.
  - rewrite IH; reflexivity.
  - ring.
  - rewrite IH1; exact IH2.
Qed.

Lemma wsum_positions (E : list (V * V)) :
  wsum E = fold_right (fun k s => alpha k + s) 0 (map epos E).
Proof.
  induction E as [| e t IH]; simpl; [reflexivity | rewrite IH; reflexivity].
Qed.

(* The edges of Prim's tree: (par k, order k), 1 ≤ k ≤ n. *)
Lemma prim_tree_in a b : In (a, b) prim_tree <->
  exists k, (1 <= k <= n)%nat /\ a = par k /\ b = order k.
Proof.
  unfold prim_tree; rewrite in_map_iff; split.
  - intros (k & Hk & Hin); apply in_seq in Hin.
    injection Hk as <- <-; exists k; split; [lia | auto].
  - intros (k & Hk & -> & ->); exists k; split; [auto | apply in_seq; lia].
Qed.

Lemma prim_distinct i j : (1 <= i <= n)%nat -> (1 <= j <= n)%nat ->
  pos (par i) (order i) = pos (par j) (order j) -> i = j.
Proof.
  intros Hi Hj Hp.
  destruct (pos_inj _ _ _ _ Hp) as [[_ Ho] | [Hpo Hop]].
  - apply order_inj; auto; lia.
  - destruct (par_earlier i Hi) as (i' & Hi' & Hpi).
    destruct (par_earlier j Hj) as (j' & Hj' & Hpj).
    rewrite Hpi in Hpo; rewrite Hpj in Hop.
    apply order_inj in Hpo; [| lia | lia].
    apply order_inj in Hop; [| lia | lia].
    lia.
Qed.

Lemma nodup_seq_map (g : nat -> nat) len s :
  (forall i j, (s <= i < s + len)%nat -> (s <= j < s + len)%nat ->
     g i = g j -> i = j) ->
  NoDup (map g (seq s len)).
Proof.
  revert s; induction len as [| len IH]; intros s Hg; simpl; [constructor |].
  constructor.
  - intro Hi; apply in_map_iff in Hi as (x & Hx & Hin).
    apply in_seq in Hin.
    assert (x = s) by (apply Hg; [lia | lia | exact Hx]); lia.
  - apply IH; intros i j Hi Hj; apply Hg; lia.
Qed.

Lemma prim_tree_nodup : NoDup (map epos prim_tree).
Proof.
  unfold prim_tree; rewrite map_map.
  apply nodup_seq_map; intros i j Hi Hj Hp; apply prim_distinct; auto; lia.
Qed.

Lemma prim_tree_length : length prim_tree = n.
Proof. unfold prim_tree; rewrite map_length, seq_length; reflexivity. Qed.

(* A spanning tree: n distinct edges joining every two items. *)
Definition spanning_tree (E : list (V * V)) :=
  length E = n /\ NoDup (map epos E) /\ forall x y, joined V E x y.

Definition holds_prim (E : list (V * V)) k :=
  forall i, (1 <= i <= k)%nat -> In (pos (par i) (order i)) (map epos E).

(* A spanning tree that holds all of Prim's edges weighs what Prim's does. *)
Lemma holds_all E : spanning_tree E -> holds_prim E n ->
  wsum E = wsum prim_tree.
Proof.
  intros (Hl & Hnd & _) Hh.
  rewrite !wsum_positions; symmetry; apply sum_perm.
  assert (Hincl : incl (map epos prim_tree) (map epos E)).
  { intros x Hx; apply in_map_iff in Hx as ([a b] & <- & Hx).
    apply prim_tree_in in Hx as (k & Hk & -> & ->); exact (Hh k Hk). }
  apply NoDup_Permutation; [exact prim_tree_nodup | exact Hnd |].
  intro x; split; [apply Hincl |].
  apply (NoDup_length_incl prim_tree_nodup); [| exact Hincl].
  rewrite !map_length, prim_tree_length, Hl; apply le_n.
Qed.

(* One exchange: a spanning tree holding Prim's first k edges but not its
   (k+1)-th weighs at most one that holds the first k + 1. *)
Lemma exchange_step E k : (k < n)%nat -> spanning_tree E -> holds_prim E k ->
  ~ In (pos (par (S k)) (order (S k))) (map epos E) ->
  exists E', spanning_tree E' /\ holds_prim E' (S k) /\ wsum E <= wsum E'.
Proof.
  intros Hk (Hl & Hnd & Hsp) Hh Hnot.
  set (j := S k); set (a := par j); set (b := order j).
  assert (Hj : (1 <= j <= n)%nat) by (unfold j; lia).
  destruct (prim_cut j Hj) as [Hcross Hfirst].
  destruct (tree_exchange E (joined_by j) a b (Hsp a b) Hcross)
    as (p & q & Hpq & Hc & Jpq).
  set (E' := (a, b) :: drop_edge V eq_dec p q E).
  destruct (drop_one E p q Hpq Hnd) as [Hlen Hw].
  (* an edge inside the cut is not (p, q) *)
  assert (Hinside : forall i, (1 <= i <= k)%nat ->
            ~ same_edge V (par i) (order i) p q).
  { intros i Hi Hs; apply Hc.
    destruct (par_earlier i) as (i' & Hi' & Hp); [lia |].
    assert (Hpar : joined_by j (par i) = true)
      by (rewrite Hp; apply cut_joined; [exact Hj | lia]).
    assert (Hord : joined_by j (order i) = true)
      by (apply cut_joined; [exact Hj | unfold j; lia]).
    destruct Hs as [[<- <-] | [<- <-]]; congruence. }
  exists E'; split; [split; [| split] | split].
  - unfold E'; simpl; rewrite <- Hl; symmetry; exact Hlen.
  - unfold E'; simpl; constructor; [| exact (nodup_drop E p q Hnd)].
    intro Hi; apply Hnot.
    apply in_map_iff in Hi as ([c d] & He & Hi).
    apply drop_edge_in in Hi as [Hi _].
    apply in_map_iff; exists (c, d); split; [exact He | exact Hi].
  - intros x y; apply (joined_incl E E'); [| apply Hsp].
    intros c d Hcd.
    destruct (same_edge_dec V eq_dec c d p q) as [[[-> ->] | [-> ->]] | Hs].
    + exact Jpq.
    + exact (jn_sym V E' p q Jpq).
    + apply jn_edge; right; apply drop_edge_in; auto.
  - intros i Hi.
    destruct (Nat.eq_dec i j) as [-> | Hij]; [left; reflexivity |].
    right.
    destruct (in_map_iff epos E (pos (par i) (order i))) as [Hm _].
    destruct (Hm (Hh i ltac:(unfold j in *; lia))) as ([c d] & He & Hcd).
    apply in_map_iff; exists (c, d); split; [exact He |].
    apply drop_edge_in; split; [exact Hcd |].
    intros Hs; apply (Hinside i); [unfold j in *; lia |].
    apply (same_edge_trans V _ _ c d); [| exact Hs].
    apply pos_inj; symmetry; exact He.
  - unfold E'; rewrite Hw; simpl; fold (epos (a, b)).
    assert (Hle : alpha (pos p q) <= alpha (pos a b)).
    { apply Rnot_lt_le; intro Hlt; apply (Hfirst p q Hc); left; exact Hlt. }
    unfold epos; simpl; lra.
Qed.

(* prim_equals_kruskal for edge_first's own order: Prim's tree is, edge for
   edge, Kruskal's under the C's order, its tie rule included. *)
(* req: cfl.alg1.opt *)
Theorem prim_is_kruskal :
  (forall v, exists k, (k <= n)%nat /\ order k = v) ->
  forall a b, kruskal_keeps V before_pos a b <->
              prim_edge V n order par a b \/ prim_edge V n order par b a.
Proof.
  intros Honto a b.
  destruct before_of_positions as (Hirr & Htrans & Htot).
  exact (prim_equals_kruskal V eq_dec before_pos Hirr Htrans Htot n order par
           joined_by prim_cut Honto par_earlier a b).
Qed.

(* req: cfl.alg1.opt *)
Theorem prim_maximal (E : list (V * V)) :
  spanning_tree E -> wsum E <= wsum prim_tree.
Proof.
  intro Ht.
  assert (Hgen : forall d k E, (n - k = d)%nat -> (k <= n)%nat ->
            spanning_tree E -> holds_prim E k -> wsum E <= wsum prim_tree).
  { induction d as [| d IH]; intros k E0 Hd Hk Ht0 Hh.
    - rewrite (holds_all E0 Ht0); [apply Rle_refl |].
      intros i Hi; apply Hh; lia.
    - destruct (in_dec Nat.eq_dec (pos (par (S k)) (order (S k)))
                  (map epos E0)) as [Hin | Hnot].
      + apply (IH (S k) E0); [lia | lia | exact Ht0 |].
        intros i Hi; destruct (Nat.eq_dec i (S k)) as [-> | Hne];
          [exact Hin | apply Hh; lia].
      + destruct (exchange_step E0 k) as (E' & Ht' & Hh' & Hw);
          [lia | exact Ht0 | exact Hh | exact Hnot |].
        apply (Rle_trans _ (wsum E')); [exact Hw |].
        apply (IH (S k) E'); [lia | lia | exact Ht' | exact Hh']. }
  apply (Hgen (n - 0)%nat 0%nat E); [lia | lia | exact Ht |].
  intros i Hi; lia.
Qed.

(* The C's bipartition is optimal.  optimal_bipartition cuts the tree edge
   (par c, order c) that no other tree edge follows (last_tree_edge's
   postcondition `last`, and `sides`' last_edge), and its sides are the
   components of the tree less that edge (subtree_components, with the
   tree edges of the steps k ≠ c: `forest`).  Then every pair the sides
   separate has α at most the cut edge's (were it heavier, it would close
   the cut edge with the rest of the tree, all before it, and Kruskal
   would not keep the cut edge), and every bipartition D separates some
   tree edge (the tree spans), whose α is at least the cut edge's.  That
   is bipartition_optimal's conclusion for the C's sides, proved from
   Prim's tree directly, with no appeal to Kruskal's forest stopped at
   two components. *)
Variable c : nat.
Hypothesis c_step : (1 <= c <= n)%nat.
Hypothesis c_last : forall k, (1 <= k <= n)%nat ->
  ~ before_pos (par c) (order c) (par k) (order k).
Variable F : list (V * V).
Hypothesis F_edges : forall x y, In (x, y) F <->
  exists k, (1 <= k <= n)%nat /\ k <> c /\ x = par k /\ y = order k.
Variable side : V -> bool.
Hypothesis side_components : forall x y, side x = side y <-> joined V F x y.

Lemma F_before x y : In (x, y) F -> before_pos x y (par c) (order c).
Proof.
  intro H; apply F_edges in H as (k & Hk & Hkc & -> & ->).
  destruct (proj2 (proj2 before_of_positions) (par k) (order k) (par c) (order c))
    as [Hb | [Hb | Hs]].
  - exact Hb.
  - elim (c_last k Hk Hb).
  - elim Hkc; apply prim_distinct; auto.
    exact (same_edge_pos _ _ _ _ Hs).
Qed.

(* req: cfl.alg1.opt, cfl.alg1.l7 *)
Theorem prim_bipartition_optimal :
  (forall v, exists k, (k <= n)%nat /\ order k = v) ->
  forall D : V -> bool, (exists x y, D x <> D y) ->
  forall a b, side a <> side b ->
  exists i j, D i <> D j /\ alpha (pos a b) <= alpha (pos i j).
Proof.
  intros Honto D (x & y & Hxy) a b Hab.
  set (p := par c); set (q := order c).
  assert (Hkept : kruskal_keeps V before_pos p q)
    by (apply (prim_edge_kept V before_pos n order par joined_by prim_cut);
        exists c; auto).
  assert (Hlinked : forall u w, joined V F u w -> linked V (fun e f => before_pos e f p q) u w)
    by (intros u w; apply linked_of_joined; exact F_before).
  (* the cut edge crosses the sides *)
  assert (Hpq : side p <> side q).
  { intro He; apply Hkept, Hlinked, side_components, He. }
  (* every pair across the sides: α at most the cut edge's *)
  assert (Hcross : alpha (pos a b) <= alpha (pos p q)).
  { apply Rnot_lt_le; intro Hlt.
    assert (Hb : before_pos a b p q) by (left; exact Hlt).
    apply Hkept.
    destruct (bool_dec (side a) (side p)) as [Hap | Hap].
    - assert (Hbq : side b = side q)
        by (destruct (side a), (side b), (side p), (side q); congruence).
      apply (linked_trans V _ p a q).
      + apply Hlinked, side_components; congruence.
      + apply (linked_fwd V _ a b q Hb), Hlinked, side_components; exact Hbq.
    - assert (Haq : side a = side q)
        by (destruct (side a), (side p), (side q); congruence).
      assert (Hbp : side b = side p)
        by (destruct (side a), (side b), (side p), (side q); congruence).
      apply (linked_trans V _ p b q).
      + apply Hlinked, side_components; congruence.
      + apply (linked_bwd V _ b a q Hb), Hlinked, side_components; congruence. }
  (* D separates a tree edge, which weighs at least the cut edge *)
  destruct (crossing_edge V (prim_edges V n order par) D x y
              (prim_spans V n order par Honto par_earlier x y) Hxy)
    as (i & j & Hij & Hd).
  apply prim_edges_in in Hij as (k & Hk & -> & ->).
  exists (par k), (order k); split; [exact Hd |].
  apply (Rle_trans _ _ _ Hcross).
  apply Rnot_lt_le; intro Hlt; apply (c_last k Hk); left; exact Hlt.
Qed.

End Maximal.

(* Refinement: the hypotheses above that follow from ACSL definitions of
   proofs/acsl/cluster.h, transcribed over the items 0..m−1 (nat).

   edge_pos(a, b, m) = a < b ? a·m + b : b·m + a gives pos_sym and
   pos_inj (edge_pos_sym, edge_pos_inj: distinct edges of items < m have
   distinct positions); the ghost permutation prim_perm(m) (prim_order and
   its inverse prim_slot on 0..m−1, the loop invariant `order`) gives
   order_inj and order_onto with n = m − 1 and order k = prim_order[k]
   (perm_order_inj, perm_order_onto); and prim_joined(in_tree, m, added)
   (the loop invariant `joined`: in_tree[v] ≠ 0 exactly when
   prim_slot[v] < added) gives cut_joined with joined_by k v = in_tree[v] at
   the join of added = k (joined_cut).  ClusterJoint.v proves these, and
   the rest of the hypotheses, on WP's own translation of the ACSL
   (run_joint, bipartition_joint; proofs/README.md, table (b)). *)

Section Acsl.

Local Open Scope nat_scope.

Variable m : nat.

Definition edge_pos (a b : nat) := if a <? b then a * m + b else b * m + a.

Lemma edge_pos_sym a b : edge_pos a b = edge_pos b a.
Proof.
  unfold edge_pos.
  destruct (Nat.ltb_spec a b), (Nat.ltb_spec b a); try lia.
  assert (a = b) by lia; subst; reflexivity.
Qed.

Lemma row_col a b c d : b < m -> d < m -> a * m + b = c * m + d ->
  a = c /\ b = d.
Proof.
  intros Hb Hd H.
  assert (Hm : m <> 0) by lia.
  assert (Ha : (a * m + b) / m = a)
    by (rewrite Nat.div_add_l by exact Hm; rewrite Nat.div_small by exact Hb; lia).
  assert (Hc : (c * m + d) / m = c)
    by (rewrite Nat.div_add_l by exact Hm; rewrite Nat.div_small by exact Hd; lia).
  assert (a = c) by (rewrite <- Ha, <- Hc, H; reflexivity).
  subst; split; [reflexivity | lia].
Qed.

Theorem edge_pos_inj a b c d : a < m -> b < m -> c < m -> d < m ->
  edge_pos a b = edge_pos c d -> same_edge nat a b c d.
Proof.
  unfold edge_pos, same_edge; intros Ha Hb Hc Hd.
  destruct (Nat.ltb_spec a b) as [Hab | Hab], (Nat.ltb_spec c d) as [Hcd | Hcd];
    intro He; apply row_col in He as [H1 H2]; auto; subst; auto.
Qed.

Variables prim_order prim_slot : nat -> nat.

(* prim_perm(m) of proofs/acsl/cluster.h *)
Definition prim_perm :=
  (forall k, k < m -> prim_order k < m /\ prim_slot (prim_order k) = k) /\
  (forall v, v < m -> prim_slot v < m /\ prim_order (prim_slot v) = v).

Theorem perm_order_inj : prim_perm -> forall i j, i <= m - 1 -> j <= m - 1 ->
  prim_order i = prim_order j -> i = j.
Proof.
  intros [Ho _] i j Hi Hj He.
  destruct (Nat.eq_dec m 0) as [-> | Hm]; [lia |].
  destruct (Ho i ltac:(lia)) as [_ Hsi].
  destruct (Ho j ltac:(lia)) as [_ Hsj].
  rewrite <- Hsi, <- Hsj, He; reflexivity.
Qed.

Theorem perm_order_onto : prim_perm -> forall v, v < m ->
  exists k, k <= m - 1 /\ prim_order k = v.
Proof.
  intros [_ Hs] v Hv; destruct (Hs v Hv) as [Hlt Hov].
  exists (prim_slot v); split; [lia | exact Hov].
Qed.

(* prim_joined(in_tree, m, added) *)
Theorem joined_cut (in_tree : nat -> bool) added : prim_perm ->
  (forall v, v < m -> (in_tree v = true <-> prim_slot v < added)) ->
  forall i, i < added -> i < m -> in_tree (prim_order i) = true.
Proof.
  intros [Ho _] Hj i Hi Him.
  destruct (Ho i Him) as [Hlt Hs].
  apply Hj; [exact Hlt | rewrite Hs; exact Hi].
Qed.

End Acsl.

(* Kruskal's run on a list s of pairs (Algorithm 1, l. 3–5): each pair is
   kept when the pairs kept before it do not join its ends, else dropped.
   kruskal_run_joins: after any prefix, the kept pairs join exactly the
   items all the pairs of the prefix join, the invariant by which the
   run's test (against the kept pairs) is kruskal_keeps' test (against
   all the pairs before, which on the sorted list are those strictly
   before in the order, and earlier namings of the same edge). *)

Section KruskalRun.

Variable V : Type.

Inductive kruskal_run : list (V * V) -> list (V * V) -> Prop :=
| run_nil : kruskal_run [] []
| run_keep s K a b : kruskal_run s K -> ~ joined V K a b ->
    kruskal_run (s ++ [(a, b)]) (K ++ [(a, b)])
| run_drop s K a b : kruskal_run s K -> joined V K a b ->
    kruskal_run (s ++ [(a, b)]) K.

Lemma joined_app_l (E E' : list (V * V)) x y :
  joined V E x y -> joined V (E ++ E') x y.
Proof.
  apply joined_sub; intros e He; apply in_or_app; now left.
Qed.

Theorem kruskal_run_joins s K : kruskal_run s K ->
  forall x y, joined V K x y <-> joined V s x y.
Proof.
  induction 1 as [| s K a b _ IH Hn | s K a b _ IH Hj]; intros x y.
  - reflexivity.
  - split; apply joined_incl; intros c d Hcd;
      apply in_app_or in Hcd as [Hcd | [Hcd | []]].
    + apply joined_app_l, IH, jn_edge, Hcd.
    + injection Hcd as <- <-; apply jn_edge, in_or_app; right; now left.
    + apply joined_app_l, IH, jn_edge, Hcd.
    + injection Hcd as <- <-; apply jn_edge, in_or_app; right; now left.
  - split.
    + intro H; apply joined_app_l, IH, H.
    + apply joined_incl; intros c d Hcd.
      apply in_app_or in Hcd as [Hcd | [Hcd | []]].
      * apply IH, jn_edge, Hcd.
      * injection Hcd as <- <-; exact Hj.
Qed.

End KruskalRun.
