(* proofs/coq/Variance.v: the variance of the mean of a sample drawn
   without replacement.

   Paper.  Pillutla et al., ICML 2022, arXiv:2204.03809, Lemma 21 (as the
   design notes cite it; shared/spec notes-cfl-ifca-sampling-metrics.md
   §3.5): for S uniform over the m-subsets of n values x_i with mean x̄ and
   σ² = (1/n) Σ_i (x_i − x̄)²,
     "E‖(1/m) Σ_{i∈S} x_i − x̄‖² = ((n − m)/(m(n − 1))) · σ²",
   i.e. (σ²/m)(n − m)/(n − 1), the finite-population correction.

   Proved:
     - card_containing2: C(n−2, m) of the (m+2)-subsets contain two given
       clients, so P(i, j ∈ S) = m(m−1)/(n(n−1));
     - sample_mean_unbiased: E[(1/m) Σ_{i∈S} x_i] = x̄, for scalars x_i;
     - sample_mean_variance: the statement above, for scalars x_i;
     - sample_mean_unbiased_vec, sample_mean_variance_vec: both for vectors
       x_i ∈ ℝ^d (x : T -> 'I_d -> R), x̄ taken per coordinate and
       ‖v‖² = Σ_k v_k², so σ² = (1/n) Σ_i ‖x_i − x̄‖²; from the scalar ones
       coordinate by coordinate (the expectation's sum over samples
       exchanged with the sum over k).

   C code it justifies: pflref_sampler_choose (ref/sampling/sampler.c),
   whose uniform m-subsets feed the sampled aggregations of
   ref/algorithms/ (FedAvg's average over S_t): the exact variance of that
   average, which the notes' rational enumeration (x = (3, 7, 1, 9, 4, 6))
   checks numerically and this proves for every n, m and x. *)

From Coq Require Import Reals Lra.
From mathcomp Require Import ssreflect ssrbool ssrfun eqtype ssrnat seq.
From mathcomp Require Import fintype finset bigop binomial.
From Pflref Require Import Sampling Pflego.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Section Pairs.

Variable T : finType.

(* The m-subsets of T containing both x and y. *)
Definition containing2 (x y : T) (m : nat) :=
  [set A : {set T} | (#|A| == m) && (x \in A) && (y \in A)].

(* The (m+1)-subsets containing x and y correspond to the m-subsets
   containing y and avoiding x (A ↦ A :\ x). *)
Lemma containing2_succ x y m : x != y ->
  #|containing2 x y m.+1| =
  #|[set A : {set T} | (#|A| == m) && (x \notin A) && (y \in A)]|.
Proof.
move=> xy.
have -> : containing2 x y m.+1 =
  (fun A => x |: A) @: [set A : {set T} | (#|A| == m) && (x \notin A) && (y \in A)].
  apply/setP => A; rewrite inE; apply/idP/imsetP.
    case/andP => /andP[/eqP cA xA] yA; exists (A :\ x); last by rewrite setD1K.
    rewrite !inE eqxx (eq_sym y x) xy yA /= !andbT; apply/eqP.
    by move: cA; rewrite (cardsD1 x A) xA add1n => -[].
  case=> B; rewrite inE => /andP[/andP[/eqP cB xB] yB] ->.
  by rewrite cardsU1 xB cB add1n !inE !eqxx yB orbT.
apply: card_in_imset => B1 B2; rewrite !inE => /andP[/andP[_ x1] _] /andP[/andP[_ x2] _] E.
by rewrite -(setU1K x1) -(setU1K x2) E.
Qed.

(* Exactly C(n−2, m) of the (m+2)-subsets contain two given clients. *)
Theorem card_containing2 x y m : x != y ->
  #|containing2 x y m.+2| = 'C(#|T|.-2, m).
Proof.
move=> xy.
(* the m.+1-subsets containing y split by x *)
have split_y k : #|containing2 x y k.+1| +
                 #|[set A : {set T} | (#|A| == k.+1) && (x \notin A) && (y \in A)]| =
                 #|containing y k.+1|.
  rewrite -[RHS](cardsID [set A : {set T} | x \in A]).
  congr addn; apply: eq_card => A; rewrite !inE.
    by case: (#|A| == k.+1); case: (x \in A); case: (y \in A).
  by case: (#|A| == k.+1); case: (x \in A); case: (y \in A).
have n2 : 1 < #|T|.
  rewrite (cardD1 x) inE ltnS lt0n; apply/eqP => /card0_eq /(_ y).
  by rewrite !inE eq_sym xy.
elim: m => [|m IH].
  rewrite containing2_succ // bin0.
  have := split_y 0; rewrite card_containing bin0 => E.
  suff C0 : #|containing2 x y 1| = 0 by move: E; rewrite C0 add0n.
  apply/eqP; rewrite cards_eq0; apply/eqP/setP => A; rewrite !inE.
  apply/negbTE; apply/andP => -[/andP[/eqP cA xA] yA].
  have := cA; rewrite (cardsD1 x A) xA (cardsD1 y (A :\ x)) !inE yA (eq_sym y) xy.
  by [].
rewrite containing2_succ //.
have := split_y m.+1; rewrite IH card_containing.
case: #|T| n2 => [|[|n]] // _ /= E.
by apply/eqP; rewrite -(eqn_add2l 'C(n, m)) E binS addnC.
Qed.

End Pairs.

Local Open Scope R_scope.

(* (Σ_i a_i)(Σ_j b_j) = Σ_i Σ_j a_i b_j, over any two index sets. *)
Lemma sumR_mul (I : finType) (P Q : pred I) (a b : I -> R) :
  \big[Rplus/0]_(i | P i) a i * \big[Rplus/0]_(j | Q j) b j =
  \big[Rplus/0]_(i | P i) \big[Rplus/0]_(j | Q j) (a i * b j).
Proof.
rewrite Rmult_comm -sumR_scale; apply: eq_bigr => i _.
by rewrite Rmult_comm -sumR_scale.
Qed.

Section Variance.

Variable T : finType.                  (* the n clients *)
Variable m : nat.                      (* the sample size *)
Hypotheses (m_pos : (0 < m)%N) (m_le : (m <= #|T|)%N) (n2 : (1 < #|T|)%N).
Variable x : T -> R.                   (* one value per client *)

Definition nR := INR #|T|.              (* n, as a real *)
Definition mean := / nR * \big[Rplus/0]_(i : T) x i.
Definition sigma2 := / nR * \big[Rplus/0]_(i : T) (x i - mean) ^ 2.
Definition sample_mean (S : {set T}) := / INR m * \big[Rplus/0]_(i in S) x i.

Let y i := x i - mean.

Lemma n_pos : 0 < nR.
Proof. by apply: lt_0_INR; apply/ltP; apply: ltn_trans n2. Qed.

Lemma m_posR : 0 < INR m.
Proof. by apply: lt_0_INR; apply/ltP. Qed.

(* A constant summed over every client: n · c. *)
Lemma sumR_const_all (c : R) : \big[Rplus/0]_(i : T) c = nR * c.
Proof.
rewrite /nR (_ : #|T| = #|predT : pred T|) // -sumR_const; apply: eq_bigl => i.
by rewrite unfold_in.
Qed.

(* Σ_i (F_i − c) = Σ_i F_i − n c. *)
Lemma sumR_minus_const (F : T -> R) (c : R) :
  \big[Rplus/0]_(i : T) (F i - c) = \big[Rplus/0]_(i : T) F i - nR * c.
Proof.
rewrite /Rminus big_split /= sumR_const_all.
by rewrite Ropp_mult_distr_r.
Qed.

Lemma sum_y : \big[Rplus/0]_(i : T) y i = 0.
Proof.
have np := n_pos.
rewrite /y sumR_minus_const /mean -/nR.
field; lra.
Qed.

(* Σ_{i∈A} (F_i − c) = Σ_{i∈A} F_i − #A · c. *)
Lemma sumR_minus_in (A : pred T) (F : T -> R) (c : R) :
  \big[Rplus/0]_(i in A) (F i - c) =
  \big[Rplus/0]_(i in A) F i - INR #|A| * c.
Proof.
rewrite /Rminus big_split /= sumR_const.
by rewrite Ropp_mult_distr_r.
Qed.

(* On a sample S of m clients: (1/m) Σ_{i∈S} x_i − x̄ = (1/m) Σ_{i∈S} y_i. *)
Lemma sample_dev (S : {set T}) : S \in draws T m ->
  sample_mean S - mean = / INR m * \big[Rplus/0]_(i in S) y i.
Proof.
rewrite inE => /eqP cS.
have mp := m_posR.
rewrite /y sumR_minus_in /sample_mean.
have -> : #|(fun i => i \in S) : pred T| = m by rewrite -cS.
field; lra.
Qed.

(* Σ_{S∈D} Σ_{i∈S} Σ_{j∈S} F_ij = Σ_i Σ_j F_ij · #{S ∈ D : i, j ∈ S}. *)
Lemma sum_pairs_over_draws (F : T -> T -> R) :
  \big[Rplus/0]_(S in draws T m)
     \big[Rplus/0]_(i in S) \big[Rplus/0]_(j in S) F i j =
  \big[Rplus/0]_(i : T) \big[Rplus/0]_(j : T)
     (F i j * INR #|containing2 i j m|).
Proof.
have inner (S : {set T}) :
  \big[Rplus/0]_(i in S) \big[Rplus/0]_(j in S) F i j =
  \big[Rplus/0]_(i : T) \big[Rplus/0]_(j : T)
     (if (i \in S) && (j \in S) then F i j else 0).
  rewrite big_mkcond; apply: eq_bigr => i _.
  case: (i \in S) => /=; first by rewrite big_mkcond.
  by rewrite big1.
rewrite (eq_bigr _ (fun S _ => inner S)) exchange_big.
apply: eq_bigr => i _; rewrite exchange_big; apply: eq_bigr => j _.
rewrite -big_mkcondr.
transitivity (\big[Rplus/0]_(S in containing2 i j m) F i j).
  by apply: eq_bigl => S; rewrite !inE andbA.
by rewrite sumR_const Rmult_comm.
Qed.

(* The pair counts, against #D = C(n, m) sets in all: #{S ∋ i} · n = #D · m
   (Sampling.v), and for i ≠ j #{S ∋ i, j} · n (n − 1) = #D · m (m − 1). *)
Lemma count_same (i : T) : #|containing2 i i m| = #|containing i m|.
Proof. by apply: eq_card => S; rewrite !inE -andbA andbb. Qed.

Lemma count_one (i : T) : INR #|containing i m| * nR = INR #|draws T m| * INR m.
Proof.
rewrite /nR -!mult_INR; congr INR; rewrite multE.
exact: inclusion_probability.
Qed.

Lemma count_pair (i j : T) : i != j ->
  INR #|containing2 i j m| * nR * (nR - 1) =
  INR #|draws T m| * INR m * (INR m - 1).
Proof.
move=> ij; rewrite /nR.
case: m m_pos m_le => [|[|k]] // _ mle.
  have -> : #|containing2 i j 1| = 0%N.
    apply/eqP; rewrite cards_eq0; apply/eqP/setP => A; rewrite !inE.
    apply/negbTE; apply/andP => -[/andP[/eqP cA iA] jA].
    move: cA; rewrite (cardsD1 i A) iA (cardsD1 j (A :\ i)) !inE jA.
    by rewrite (eq_sym j) ij.
  by rewrite /= Rmult_0_l !Rmult_0_l; ring.
rewrite card_containing2 // card_draws.
case: #|T| n2 mle => [|[|N]] // _ _.
change (N.+2.-2) with N.
have d1 : (N.+1 * 'C(N, k) = k.+1 * 'C(N.+1, k.+1))%N := mul_bin_diag N.+1 k.
have d2 : (N.+2 * 'C(N.+1, k.+1) = k.+2 * 'C(N.+2, k.+2))%N :=
  mul_bin_diag N.+2 k.+1.
have e1 : (INR N + 1) * INR 'C(N, k) = (INR k + 1) * INR 'C(N.+1, k.+1).
  by rewrite -!S_INR -!mult_INR multE d1.
have e2 : (INR N + 1 + 1) * INR 'C(N.+1, k.+1) =
          (INR k + 1 + 1) * INR 'C(N.+2, k.+2).
  by rewrite -!S_INR -!mult_INR multE d2.
rewrite !S_INR.
transitivity ((INR N + 1 + 1) * ((INR N + 1) * INR 'C(N, k))); first ring.
rewrite e1.
transitivity ((INR k + 1) * ((INR N + 1 + 1) * INR 'C(N.+1, k.+1)));
  first ring.
rewrite e2; ring.
Qed.

(* #{S ∋ i, j} as a real: c1 on the diagonal, c2 off it. *)
Definition c1R := INR #|draws T m| * INR m / nR.
Definition c2R := INR #|draws T m| * INR m * (INR m - 1) / (nR * (nR - 1)).

Lemma n_gt1 : 1 < nR.
Proof. by rewrite /nR; apply: (lt_INR 1); apply/ltP. Qed.

Lemma pair_term (i j : T) :
  y i * y j * INR #|containing2 i j m| =
  c2R * (y i * y j) + (c1R - c2R) * (y i * y i) * single i j.
Proof.
have np := n_pos; have n1 := n_gt1.
rewrite /single /=; case: eqP => [-> | /eqP ji].
  rewrite count_same /c1R -(count_one i).
  move: (y i) (INR #|containing i m|) (c2R) nR np => a c d e np1.
  field; lra.
rewrite /c2R -(count_pair (i := i) (j := j)); last by rewrite eq_sym.
move: (y i) (y j) (INR #|containing2 i j m|) c1R nR np n1 => a b c d e np1 n11.
field; lra.
Qed.

(* On a sample: (x̄_S − x̄)² = (1/m²) Σ_{i∈S} Σ_{j∈S} y_i y_j. *)
Lemma summand (S : {set T}) : S \in draws T m ->
  (sample_mean S - mean) ^ 2 =
  / INR m ^ 2 * \big[Rplus/0]_(i in S) \big[Rplus/0]_(j in S) (y i * y j).
Proof.
move=> HS; have mp := m_posR.
rewrite sample_dev // -(sumR_mul (fun i => i \in S) (fun i => i \in S) y y).
move: (\big[Rplus/0]_(i in S) y i) (INR m) mp => a b bp.
field; lra.
Qed.

(* Lemma 21, second half: the variance of the sample mean. *)
(* req: sampling.lemma21.var *)
Theorem sample_mean_variance :
  expect m (fun S => (sample_mean S - mean) ^ 2) =
  sigma2 / INR m * (nR - INR m) / (nR - 1).
Proof.
have np := n_pos; have mp := m_posR; have n1 := n_gt1.
have Dp : 0 < INR #|draws T m| := draws_pos m_le.
rewrite /expect (eq_bigr _ (fun S HS => summand HS)).
rewrite sumR_scale sum_pairs_over_draws.
rewrite (eq_bigr (fun i => (c1R - c2R) * (y i * y i))); last first.
  move=> i _; rewrite (eq_bigr _ (fun j _ => pair_term i j)) big_split /=.
  rewrite (sumR_scale predT c2R) (sumR_scale predT (y i)) sum_y.
  rewrite (sum_single (fun _ => (c1R - c2R) * (y i * y i))).
  ring.
have -> : sigma2 = / nR * \big[Rplus/0]_(i : T) (y i * y i).
  by rewrite /sigma2; congr (_ * _); apply: eq_bigr => i _; rewrite /y; ring.
rewrite sumR_scale /c1R /c2R.
move: (\big[Rplus/0]_(i : T) (y i * y i)) (INR #|draws T m|) (INR m) nR
      np mp n1 Dp => s d k e np1 mp1 n11 Dp1.
field; lra.
Qed.

(* Lemma 21, first half: the sample mean is unbiased. *)
Theorem sample_mean_unbiased : expect m sample_mean = mean.
Proof.
have np := n_pos; have mp := m_posR.
rewrite /mean -(sumR_scale predT) -(unbiased m_pos m_le (fun _ => / nR) x).
rewrite /expect; congr (_ * _); apply: eq_bigr => S _.
rewrite /sample_mean (sumR_scale (fun i => i \in S)) /nI -/nR.
field; lra.
Qed.

End Variance.

(* Vectors in ℝ^d, coordinate by coordinate: client i's value is
   x_i : 'I_d -> R and ‖v‖² = Σ_k v_k². *)
Section VarianceVec.

Variable T : finType.                  (* the n clients *)
Variable m : nat.                      (* the sample size *)
Hypotheses (m_pos : (0 < m)%N) (m_le : (m <= #|T|)%N) (n2 : (1 < #|T|)%N).
Variable d : nat.                      (* the dimension *)
Variable x : T -> 'I_d -> R.           (* one vector per client *)

(* ‖v‖² = Σ_k v_k². *)
Definition sqnorm (v : 'I_d -> R) := \big[Rplus/0]_(k : 'I_d) v k ^ 2.

(* x̄, (1/m) Σ_{i∈S} x_i: the scalar ones in each coordinate k. *)
Definition mean_vec (k : 'I_d) := mean (fun i => x i k).
Definition sample_mean_vec (S : {set T}) (k : 'I_d) :=
  sample_mean m (fun i => x i k) S.
(* σ² = (1/n) Σ_i ‖x_i − x̄‖². *)
Definition sigma2_vec :=
  / nR T * \big[Rplus/0]_(i : T) sqnorm (fun k => x i k - mean_vec k).

(* σ² is the sum over coordinates of the scalar variances. *)
Lemma sigma2_vec_coords :
  sigma2_vec = \big[Rplus/0]_(k : 'I_d) sigma2 (fun i => x i k).
Proof.
rewrite /sigma2_vec /sqnorm exchange_big -sumR_scale.
by apply: eq_bigr => k _.
Qed.

(* Lemma 21, first half, in ℝ^d: E[(1/m) Σ_{i∈S} x_i] = x̄ in every
   coordinate. *)
Theorem sample_mean_unbiased_vec :
  forall k : 'I_d, expect m (fun S => sample_mean_vec S k) = mean_vec k.
Proof.
move=> k; exact: (sample_mean_unbiased m_pos m_le n2 (fun i => x i k)).
Qed.

(* Lemma 21, second half, in ℝ^d:
   E‖(1/m) Σ_{i∈S} x_i − x̄‖² = ((n − m)/(m(n − 1))) σ². *)
(* req: sampling.lemma21.var *)
Theorem sample_mean_variance_vec :
  expect m (fun S => sqnorm (fun k => sample_mean_vec S k - mean_vec k)) =
  sigma2_vec / INR m * (nR T - INR m) / (nR T - 1).
Proof.
(* E Σ_k = Σ_k E: exchange the sum over draws with the sum over k *)
have -> : expect m (fun S => sqnorm (fun k => sample_mean_vec S k - mean_vec k)) =
          \big[Rplus/0]_(k : 'I_d)
            expect m (fun S => (sample_mean_vec S k - mean_vec k) ^ 2).
  rewrite /expect /sqnorm exchange_big -sumR_scale.
  by apply: eq_bigr => k _.
rewrite (eq_bigr (fun k => (/ INR m * (nR T - INR m) / (nR T - 1)) *
                           sigma2 (fun i => x i k))); last first.
  move=> k _; rewrite /sample_mean_vec /mean_vec.
  rewrite (sample_mean_variance m_pos m_le n2 (fun i => x i k)).
  by rewrite /Rdiv; ring.
rewrite (sumR_scale predT) sigma2_vec_coords /Rdiv.
move: (\big[Rplus/0]_(k < d) sigma2 (fun i => x i k)) => s.
ring.
Qed.

End VarianceVec.
