(* proofs/coq/Selection.v: both samplers pflref offers draw every m-subset
   with the same probability: Knuth's selection sampling (Algorithm S, the
   default gsl) and the prefix of a Fisher–Yates shuffle (numpy_legacy).

   Algorithm.  D. E. Knuth, The Art of Computer Programming, vol. 2, §3.4.2,
   Algorithm S (selection sampling): go through the n items in order; with
   t items inspected and j chosen, choose the next with probability
   (m − j)/(n − t); stop when m are chosen.  gsl_ran_choose implements it:
   item i is copied when (n − i) · U < k − j, U = gsl_rng_uniform(r).
   pflref's default sampler, gsl (ref/sampling/sampler.c, gsl_choice),
   calls gsl_ran_choose on the ids 0..N−1 (spec rule 4, the requirement
   sampling.choose), so its output is the subset Algorithm S draws, in
   ascending order.

   Model.  The run is the sequence d of its n decisions (d_i = item i is
   chosen).  algS n m d is the probability that the run makes exactly
   those decisions, n the items left to inspect and m the items left to
   choose: the product, over the items, of m/n for a chosen item and of
   1 − m/n for one passed over, with n and m updated after each.  The end
   of the loop at m = 0 is the same run: every later item has probability
   0/n of being chosen.

   Proved.
     - selection_uniform: for every d of n decisions that chooses m items
       (m ≤ n), algS n m d = 1/C(n, m): every m-subset is drawn with the
       same probability, the hypothesis of Sampling.v's
       inclusion_probability and of Variance.v's theorems;
     - selection_exact: every d that does not choose exactly m items has
       probability 0: the run always returns m items (so the C(n, m)
       subsets of size m carry all the probability).
   Trusted, not proved: that gsl_ran_choose's code is this loop (read in
   GSL's randist/shuffle.c), and that U is uniform on [0, 1): for mt19937
   gsl_rng_uniform returns multiples of 2^−32, so each step's probability
   is (m − j)/(n − t) to within 2^−32, and the draws are as independent as
   the generator's outputs.

   The numpy_legacy sampler (numpy's RandomState.choice(n, m,
   replace=False): the first m entries of a Fisher–Yates permutation,
   ref/sampling/shuffle.c, sorted).  The shuffle fixes the places n − 1
   down to 1 in turn, swapping into place i the item at a uniform j in
   0..i, i.e. an item chosen uniformly among those not yet placed; the
   places m..n−1 are fixed by the first n − m steps, and the later steps
   only reorder places 0..m−1.  So the set of the first m entries is what
   n − m uniform removals from the n items leave.
     - fisher_yates_prefix_uniform: k uniform removals from a set U leave
       a given S ⊆ U with #|U| = #|S| + k with probability 1/C(#|U|, #|S|)
       (k = n − m: every m-subset alike);
     - tail_outside: they never leave a set that is not inside U.
   Trusted: that shuffle.c's swap loop is that process (WP proves it a
   permutation, proofs/README.md; the correspondence is read) and that its
   interval draw is uniform on 0..i given uniform 32-bit outputs of mt19937
   (numpy's rejection with a mask, which shuffle.c replicates).
   Real arithmetic; the binomial identities are mathcomp's (mul_bin_diag,
   mul_bin_down). *)
From Coq Require Import Reals Lra.
From mathcomp Require Import ssreflect ssrbool ssrfun eqtype ssrnat seq.
From mathcomp Require Import fintype finset bigop binomial.
From Pflref Require Import RSum.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Local Open Scope R_scope.

Fixpoint algS (n m : nat) (d : seq bool) : R :=
  match d with
  | [::] => if m == 0%N then 1 else 0
  | b :: d' =>
      if b then INR m / INR n * algS n.-1 m.-1 d'
      else (1 - INR m / INR n) * algS n.-1 m d'
  end.

Lemma algS_true n m d :
  algS n.+1 m (true :: d) = INR m / INR n.+1 * algS n m.-1 d.
Proof. by []. Qed.

Lemma algS_false n m d :
  algS n.+1 m (false :: d) = (1 - INR m / INR n.+1) * algS n m d.
Proof. by []. Qed.

Lemma INR_mul (a b : nat) : INR (a * b) = INR a * INR b.
Proof. by rewrite -mult_INR mulnE. Qed.

Lemma INR_bin_pos (n m : nat) : (m <= n)%N -> 0 < INR 'C(n, m).
Proof. by move=> H; apply: lt_0_INR; apply/ltP; rewrite bin_gt0. Qed.

(* req: sampling.choose, sampling.lemma21.incl *)
Theorem selection_uniform d m :
  (m <= size d)%N -> count id d = m -> algS (size d) m d = / INR 'C(size d, m).
Proof.
(* Induction on the decisions: the first item is chosen with probability
   m/n and the rest choose m − 1 of n − 1, or passed over with probability
   1 − m/n and the rest choose m of n − 1; (m/n)/C(n − 1, m − 1) and
   ((n − m)/n)/C(n − 1, m) are both 1/C(n, m) (mul_bin_diag, mul_bin_down). *)
elim: d m => [| b d IH] m Hm Hc.
  by move: Hc => /= <-; rewrite bin0 /=; lra.
rewrite [size _]/=; set s := size d.
have Hcs : (count id d <= s)%N by exact: count_size.
case: b Hm Hc => Hm Hc; rewrite ?algS_true ?algS_false;
  rewrite [count _ _]/= ?add1n ?add0n in Hc.
- (* selected: m = k + 1 *)
  have -> : m.-1 = count id d by rewrite -Hc.
  rewrite -Hc IH // -/s; set k := count id d.
  have E := mul_bin_diag s.+1 k; rewrite /= in E.
  have E' : INR s.+1 * INR 'C(s, k) = INR k.+1 * INR 'C(s.+1, k.+1)
    by rewrite -!INR_mul E.
  have P1 : 0 < INR 'C(s, k) by exact: INR_bin_pos.
  have P2 : 0 < INR 'C(s.+1, k.+1) by apply: INR_bin_pos.
  have P3 : 0 < INR s.+1 by apply: lt_0_INR; apply/ltP.
  have P4 : 0 < INR k.+1 by apply: lt_0_INR; apply/ltP.
  apply: (Rmult_eq_reg_l (INR s.+1 * INR 'C(s, k))); last by nra.
  have -> : INR s.+1 * INR 'C(s, k) * (INR k.+1 / INR s.+1 * / INR 'C(s, k)) =
            INR k.+1 by field; lra.
  rewrite E'; field; lra.
- (* not selected *)
  have Hms : (m <= s)%N by rewrite -Hc.
  rewrite IH // -/s.
  have E := mul_bin_down s.+1 m; rewrite /= in E.
  have Hsub : INR (s.+1 - m) = INR s.+1 - INR m.
    by rewrite -minus_INR ?subnE //; apply/leP; rewrite ltnW // ltnS.
  have E' : INR s.+1 * INR 'C(s, m) = (INR s.+1 - INR m) * INR 'C(s.+1, m)
    by rewrite -Hsub -!INR_mul E.
  have P1 : 0 < INR 'C(s, m) by exact: INR_bin_pos.
  have P2 : 0 < INR 'C(s.+1, m) by apply: INR_bin_pos; rewrite ltnW // ltnS.
  have P3 : 0 < INR s.+1 by apply: lt_0_INR; apply/ltP.
  have P4 : INR m < INR s.+1 by apply: lt_INR; apply/ltP; rewrite ltnS.
  apply: (Rmult_eq_reg_l (INR s.+1 * INR 'C(s, m))); last by nra.
  have -> : INR s.+1 * INR 'C(s, m) * ((1 - INR m / INR s.+1) * / INR 'C(s, m)) =
            INR s.+1 - INR m by field; lra.
  rewrite E'; field; lra.
Qed.

(* req: sampling.choose *)
Theorem selection_exact d m :
  (m <= size d)%N -> count id d <> m -> algS (size d) m d = 0.
Proof.
elim: d m => [| b d IH] m Hm Hc.
  by move: Hm; rewrite leqn0 => /eqP Hm0; elim: Hc; rewrite Hm0.
rewrite [size _]/=; set s := size d.
case: b Hm Hc => Hm Hc; rewrite ?algS_true ?algS_false;
  rewrite [count _ _]/= ?add1n ?add0n in Hc.
- case: m Hm Hc => [| k] Hm Hc.
    by rewrite /= /Rdiv Rmult_0_l Rmult_0_l.
  rewrite [k.+1.-1]/= IH; first by rewrite Rmult_0_r.
    by rewrite -ltnS.
  by move=> E; apply: Hc; rewrite E.
- case: (ltnP m s.+1) => Hms.
    by rewrite IH ?Rmult_0_r // -ltnS.
  have -> : m = s.+1 by apply/eqP; rewrite eqn_leq Hms andbT.
  have P : 0 < INR s.+1 by apply: lt_0_INR; apply/ltP.
  have -> : 1 - INR s.+1 / INR s.+1 = 0 by field; lra.
  by rewrite Rmult_0_l.
Qed.

(* ---- numpy_legacy: the first m entries of a Fisher–Yates permutation ---- *)


Section Tail.

Variable T : finType.

(* The probability that k steps, each taking out an item of the current set
   U chosen uniformly (one Fisher–Yates step: the item swapped into the
   last place not yet fixed), leave exactly S. *)
Fixpoint tail_prob (k : nat) (U S : {set T}) : R :=
  match k with
  | 0 => if U == S then 1 else 0
  | k'.+1 => \big[Rplus/0]_(x in U) (/ INR #|U| * tail_prob k' (U :\ x) S)
  end.

Lemma sum_const_in (A : pred T) (c : R) :
  \big[Rplus/0]_(x in A) c = INR #|A| * c.
Proof.
rewrite big_const; elim: #|A| => [| n IH]; first by rewrite /= Rmult_0_l.
rewrite iterS IH S_INR; ring.
Qed.

(* Only subsets of U can be left. *)
Lemma tail_outside k :
  forall U S : {set T}, ~~ (S \subset U) -> tail_prob k U S = 0.
Proof.
elim: k => [| k IH] U S HSU /=.
  case: eqP => // E; by rewrite E subxx in HSU.
rewrite big1 // => x xU; rewrite IH ?Rmult_0_r //.
apply: contra HSU => H; apply: (subset_trans H); exact: subsetDl.
Qed.

(* req: sampling.numpy, sampling.lemma21.incl *)
Theorem fisher_yates_prefix_uniform k :
  forall U S : {set T}, S \subset U -> #|U| = (#|S| + k)%N ->
  tail_prob k U S = / INR 'C(#|U|, #|S|).
Proof.
elim: k => [| k IH] U S HSU HU /=.
  have -> : U = S by apply/esym/eqP; rewrite eqEcard HSU HU addn0 leqnn.
  by rewrite eqxx binn /=; lra.
(* The first removal takes x ∈ U with probability 1/#|U|.  Taking an
   x ∈ S leaves S outside for good (tail_outside); each of the #|U| − #|S|
   others leaves S ⊆ U :\ x and k steps, 1/C(#|U| − 1, #|S|) by
   induction.  And (n − s)/(n C(n − 1, s)) = 1/C(n, s) (mul_bin_down). *)
rewrite (bigID (fun x => x \in S)) /=.
rewrite big1 => [| x /andP[xU xS]]; last first.
  rewrite tail_outside ?Rmult_0_r //.
  by apply/negP => H; move: (subsetP H x xS); rewrite !inE eqxx.
rewrite Rplus_0_l.
set n := #|U|; set s := #|S|.
have Hx : forall x, x \in U -> x \notin S -> #|U :\ x| = (s + k)%N.
  by move=> x xU _; move: HU; rewrite (cardsD1 x U) xU add1n addnS => -[].
rewrite (eq_bigr (fun _ => / INR n * / INR 'C(n.-1, s))); last first.
  move=> x /andP[xU xS]; rewrite IH.
  - rewrite (Hx x xU xS) -/s; congr (_ * / INR 'C(_, _)).
    by rewrite /n HU addnS.
  - apply/subsetP => y yS; rewrite !inE; apply/andP; split.
      by apply: contraNneq xS => <-.
    exact: (subsetP HSU).
  - exact: Hx.
rewrite (eq_bigl (mem (U :\: S))); last by move=> x; rewrite !inE andbC.
rewrite sum_const_in.
have Hc : #|U :\: S| = (n - s)%N.
  by rewrite cardsD (setIidPr HSU).
rewrite Hc.
have Hns : (n - s)%N = k.+1 by rewrite /n HU addKn.
have E := mul_bin_down n s.
have E' : INR n * INR 'C(n.-1, s) = INR (n - s) * INR 'C(n, s)
  by rewrite -!INR_mul E.
have P1 : 0 < INR 'C(n.-1, s) by apply: lt_0_INR; apply/ltP; rewrite bin_gt0
  /n HU addnS /= leq_addr.
have P2 : 0 < INR 'C(n, s) by apply: lt_0_INR; apply/ltP; rewrite bin_gt0
  /n HU leq_addr.
have P3 : 0 < INR n by apply: lt_0_INR; apply/ltP; rewrite /n HU addnS.
have P4 : 0 < INR (n - s) by rewrite Hns; apply: lt_0_INR; apply/ltP.
apply: (Rmult_eq_reg_l (INR n * INR 'C(n.-1, s))); last by nra.
have -> : INR n * INR 'C(n.-1, s) * (INR (n - s) * (/ INR n * / INR 'C(n.-1, s))) =
          INR (n - s) by field; lra.
rewrite E'; field; lra.
Qed.
End Tail.
