(* proofs/coq/PFedMeInner.v: pFedMe's inner loop on a scalar quadratic.

   Paper.  C. T. Dinh, N. H. Tran, T. D. Nguyen, "Personalized Federated
   Learning with Moreau Envelopes", NeurIPS 2020, arXiv:2006.08848,
   Algorithm 1 and eq. (3)-(4):
     line 7  "θ̃_i(w_{i,r}) ≈ argmin_θ h_i(θ) = f_i(θ; D_i) + (λ/2)‖θ − w_{i,r}‖²",
             solved in the code by K gradient steps
             θ ← θ − η_p (∇f_i(θ) + λ (θ − w_{i,r}))   (shared/spec notes, pFedMe);
     line 8  "w_{i,r+1} ← w_{i,r} − ηλ (w_{i,r} − θ̃_i(w_{i,r}))",
             a gradient step on the Moreau envelope F_i, whose gradient is
             (eq. (4)) "∇F_i(w) = λ (w − θ̂_i(w))".

   Here f(θ) = a/2 θ² − bθ (a scalar quadratic, a + λ > 0).  Proved:
     - prox_minimises: θ̂(w) = (b + λw)/(a + λ) is the unique minimiser of h;
     - inner_closed_form: after k steps, θ_k = θ̂ + q^k (θ_0 − θ̂),
       q = 1 − η_p (a + λ);
     - window_iff: |q| < 1 exactly when 0 < η_p < 2/(a + λ);
     - inner_converges: in that window θ_k → θ̂ (and outside it, for
       θ_0 ≠ θ̂, the distance never shrinks: inner_no_contraction);
     - envelope_gradient: the envelope F(w) = min_θ h(θ; w) has derivative
       λ (w − θ̂(w)).

   C code it justifies: the inner loop pflref_prox_inner and the exact
   proximal point of ref/engine/prox_inner.c (the `prox_inner` golden
   vectors compare the K-step iterate with θ̂ + q^K (θ_0 − θ̂)), and pFedMe's
   local update in ref/algorithms/pfedme.c (line 8). *)

From Coq Require Import Reals Lra.
From Coquelicot Require Import Coquelicot.
Open Scope R_scope.

(* h(θ; w) = f(θ) + λ/2 (θ − w)², f(θ) = a/2 θ² − bθ. *)
Definition h (a b lam w th : R) : R :=
  a / 2 * th ^ 2 - b * th + lam / 2 * (th - w) ^ 2.

(* The proximal point θ̂(w) = argmin_θ h(θ; w). *)
Definition prox (a b lam w : R) : R := (b + lam * w) / (a + lam).

(* h(θ) − h(θ̂) = (a + λ)/2 (θ − θ̂)²: θ̂ is the unique minimiser. *)
Lemma h_gap a b lam w th :
  a + lam <> 0 ->
  h a b lam w th - h a b lam w (prox a b lam w) =
  (a + lam) / 2 * (th - prox a b lam w) ^ 2.
Proof. intros Hc. unfold h, prox. field. exact Hc. Qed.

(* req: pfedme.eq3, prox.eq3 *)
Theorem prox_minimises a b lam w th :
  0 < a + lam ->
  h a b lam w (prox a b lam w) <= h a b lam w th /\
  (h a b lam w th = h a b lam w (prox a b lam w) -> th = prox a b lam w).
Proof.
  intros Hc. pose proof (h_gap a b lam w th (Rgt_not_eq _ _ Hc)) as G.
  split.
  - assert (0 <= (a + lam) / 2 * (th - prox a b lam w) ^ 2).
    { apply Rmult_le_pos; [lra | apply pow2_ge_0]. }
    lra.
  - intros E. assert (Z : (a + lam) / 2 * (th - prox a b lam w) ^ 2 = 0) by lra.
    apply Rmult_integral in Z. destruct Z as [Z | Z]; [lra |].
    destruct (Req_dec (th - prox a b lam w) 0) as [E0 | E0]; [lra |].
    exfalso. exact (pow_nonzero _ 2 E0 Z).
Qed.

(* One inner step, θ ← θ − η_p (∇f(θ) + λ (θ − w)), ∇f(θ) = aθ − b. *)
Definition step (a b lam w eta th : R) : R :=
  th - eta * ((a * th - b) + lam * (th - w)).

Fixpoint inner (a b lam w eta th0 : R) (k : nat) : R :=
  match k with
  | O => th0
  | S k' => step a b lam w eta (inner a b lam w eta th0 k')
  end.

(* The contraction factor q = 1 − η_p (a + λ). *)
Definition q (a lam eta : R) : R := 1 - eta * (a + lam).

Lemma step_towards_prox a b lam w eta th :
  a + lam <> 0 ->
  step a b lam w eta th - prox a b lam w =
  q a lam eta * (th - prox a b lam w).
Proof. intros Hc. unfold step, prox, q. field. exact Hc. Qed.

(* The K-step iterate in closed form. *)
(* req: prox.alg1.l7, pfedme.alg1.l7 *)
Theorem inner_closed_form a b lam w eta th0 k :
  a + lam <> 0 ->
  inner a b lam w eta th0 k =
  prox a b lam w + q a lam eta ^ k * (th0 - prox a b lam w).
Proof.
  intros Hc. induction k as [| k IH]; simpl.
  - ring.
  - pose proof (step_towards_prox a b lam w eta
                  (inner a b lam w eta th0 k) Hc) as Hs.
    set (X := inner a b lam w eta th0 k) in *.
    replace (step a b lam w eta X)
      with (prox a b lam w + (step a b lam w eta X - prox a b lam w))
      by ring.
    rewrite Hs, IH. ring.
Qed.

(* The step-size window: |q| < 1 iff 0 < η_p < 2/(a + λ). *)
(* req: prox.window *)
Theorem window_iff a lam eta :
  0 < a + lam ->
  (Rabs (q a lam eta) < 1 <-> 0 < eta < 2 / (a + lam)).
Proof.
  intros Hc. unfold q.
  assert (Hd : 2 / (a + lam) * (a + lam) = 2) by (field; lra).
  split.
  - intros Ha. apply Rabs_def2 in Ha. destruct Ha as [H1 H2]. split.
    + assert (0 < eta * (a + lam)) by lra.
      destruct (Rle_or_lt eta 0) as [Hn | Hp]; [| exact Hp].
      assert (eta * (a + lam) <= 0) by (apply Rmult_le_0_r; lra). lra.
    + apply (Rmult_lt_reg_r (a + lam)); [exact Hc |]. lra.
  - intros [H1 H2]. apply Rabs_def1.
    + assert (0 < eta * (a + lam)) by (apply Rmult_lt_0_compat; lra). lra.
    + assert (eta * (a + lam) < 2 / (a + lam) * (a + lam))
        by (apply Rmult_lt_compat_r; lra).
      lra.
Qed.

(* In the window the inner loop converges to the proximal point. *)
(* req: prox.window *)
Theorem inner_converges a b lam w eta th0 :
  0 < a + lam -> 0 < eta < 2 / (a + lam) ->
  Un_cv (inner a b lam w eta th0) (prox a b lam w).
Proof.
  intros Hc Hw eps Heps.
  pose proof (proj2 (window_iff a lam eta Hc) Hw) as Hq.
  set (d := Rabs (th0 - prox a b lam w)).
  assert (Hd : 0 <= d) by apply Rabs_pos.
  destruct (pow_lt_1_zero (q a lam eta) Hq (eps / (d + 1))) as [N HN].
  { apply Rdiv_lt_0_compat; lra. }
  exists N. intros n Hn. unfold R_dist.
  rewrite inner_closed_form by lra.
  replace (prox a b lam w + q a lam eta ^ n * (th0 - prox a b lam w)
           - prox a b lam w)
    with (q a lam eta ^ n * (th0 - prox a b lam w)) by ring.
  rewrite Rabs_mult. fold d.
  specialize (HN n Hn).
  assert (Hp : 0 <= Rabs (q a lam eta ^ n)) by apply Rabs_pos.
  apply Rle_lt_trans with (eps / (d + 1) * d).
  - apply Rmult_le_compat_r; lra.
  - assert (eps / (d + 1) * d = eps - eps / (d + 1)) by (field; lra).
    assert (0 < eps / (d + 1)) by (apply Rdiv_lt_0_compat; lra).
    lra.
Qed.

(* Outside the window the distance to θ̂ never shrinks. *)
Theorem inner_no_contraction a b lam w eta th0 k :
  0 < a + lam -> ~ (0 < eta < 2 / (a + lam)) ->
  Rabs (th0 - prox a b lam w) <=
  Rabs (inner a b lam w eta th0 k - prox a b lam w).
Proof.
  intros Hc Hw.
  assert (Hq : 1 <= Rabs (q a lam eta)).
  { destruct (Rlt_or_le (Rabs (q a lam eta)) 1) as [L | L]; [| exact L].
    exfalso. apply Hw. apply (window_iff a lam eta Hc). exact L. }
  rewrite inner_closed_form by lra.
  replace (prox a b lam w + q a lam eta ^ k * (th0 - prox a b lam w)
           - prox a b lam w)
    with (q a lam eta ^ k * (th0 - prox a b lam w)) by ring.
  rewrite Rabs_mult, <- RPow_abs.
  rewrite <- (Rmult_1_l (Rabs (th0 - prox a b lam w))) at 1.
  apply Rmult_le_compat_r; [apply Rabs_pos |].
  clear -Hq. induction k as [| k IH]; simpl; [lra |].
  rewrite <- (Rmult_1_l 1). apply Rmult_le_compat; lra.
Qed.

(* The Moreau envelope F(w) = min_θ h(θ; w) = h(θ̂(w); w), and its gradient
   λ (w − θ̂(w)) (Dinh et al., eq. (4)), the direction of Alg. 1, line 8. *)
Definition envelope (a b lam w : R) : R := h a b lam w (prox a b lam w).

(* req: pfedme.moreau_grad, pfedme.alg1.l8 *)
Theorem envelope_gradient a b lam w :
  a + lam <> 0 ->
  is_derive (envelope a b lam) w (lam * (w - prox a b lam w)).
Proof.
  intros Hc. unfold envelope, h, prox.
  auto_derive.
  - exact I.
  - field. exact Hc.
Qed.

(* Line 8 is a gradient step on the envelope:
   w − ηλ (w − θ̂(w)) = w − η ∇F(w). *)
Corollary line8_is_envelope_step a b lam w eta :
  a + lam <> 0 ->
  exists g, is_derive (envelope a b lam) w g /\
            w - eta * lam * (w - prox a b lam w) = w - eta * g.
Proof.
  intros Hc. exists (lam * (w - prox a b lam w)). split.
  - apply envelope_gradient. exact Hc.
  - ring.
Qed.
