(* proofs/coq/Selection.v: Knuth's selection sampling (Algorithm S) draws
   every m-subset with the same probability.

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
   the generator's outputs.  The numpy_legacy sampler (a Fisher–Yates
   permutation's first m entries, ref/sampling/shuffle.c) is not covered
   here.  Real arithmetic; the binomial identities are mathcomp's
   (mul_bin_diag, mul_bin_down). *)
From Coq Require Import Reals Lra.
From mathcomp Require Import ssreflect ssrbool ssrfun eqtype ssrnat seq binomial.

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
