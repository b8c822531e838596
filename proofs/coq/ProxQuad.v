(* proofs/coq/ProxQuad.v: pFedMe's inner problem on a d-dimensional
   strongly convex quadratic, and its envelope for every convex f.

   Paper.  C. T. Dinh, N. H. Tran, T. D. Nguyen, "Personalized Federated
   Learning with Moreau Envelopes", NeurIPS 2020, arXiv:2006.08848,
   Algorithm 1 and eq. (3)-(4), as PFedMeInner.v quotes them (there for a
   scalar quadratic; here for θ ∈ ℝ^d):
     eq. (3)  θ̂(w) = prox_{f/λ}(w) = argmin_θ h(θ; w),
              h(θ; w) = f(θ) + (λ/2)‖θ − w‖²;
     line 7   K steps θ ← θ − η_p (∇f(θ) + λ (θ − w));
     line 8   w ← w − ηλ (w − θ̂(w)), a gradient step on the Moreau envelope
              F(w) = min_θ h(θ; w), whose gradient is (eq. (4))
              ∇F(w) = λ (w − θ̂(w)).

   Here f(θ) = ½⟨Aθ, θ⟩ − ⟨b, θ⟩ with A a symmetric d×d matrix,
   μ‖x‖² ≤ ⟨Ax, x⟩ ≤ L‖x‖² for all x, and B = A + λI, the Hessian of h.
   The proximal point is any θ̂ with (A + λI) θ̂ = b + λw, h's first-order
   condition (`normal`; for μ + λ > 0 it has exactly one solution:
   `prox_unique`, and `prox_point_exists` below).
   Proved:
     - prox_gap, prox_minimises_vec, prox_unique: h(θ) − h(θ̂) =
       ½⟨B(θ − θ̂), θ − θ̂⟩ ≥ ((μ + λ)/2)‖θ − θ̂‖², so θ̂ is the unique
       minimiser of h when μ + λ > 0;
     - prox_point_c_form: θ̂ = w + x with (A + λI) x = −∇f(w), the form
       pflref_prox_point solves, satisfies the first-order condition;
     - cg_residual, residual_error, prox_point_stop: pflref_prox_point's
       loop (x_{k+1} = x_k + α_k p_k, r_{k+1} = r_k − α_k B p_k from x_0 = 0,
       r_0 = −∇f(w)) keeps r_k = −∇f(w) − B x_k for any α_k and p_k, and
       (μ + λ)² ‖x − y‖² ≤ ‖Bx − By‖²; so when the loop stops by its test
       ‖r_k‖ ≤ rtol ‖r_0‖, its θ̂ = w + x_k is within rtol ‖∇f(w)‖/(μ + λ)
       of eq. (3)'s θ̂ (in real arithmetic; that conjugate gradients meet
       the test within the C's 2P iterations is not proved);
     - inner_error: after k steps, θ_k − θ̂ = (I − η_p B)^k (θ_0 − θ̂);
     - cocoercive: ‖Bx‖² ≤ (L + λ)⟨Bx, x⟩ (from the Cauchy–Schwarz
       inequality of the form ⟨B·, ·⟩, `form_cauchy_schwarz`; no spectral
       theorem);
     - inner_contracts, inner_converges_vec: for 0 < η_p < 2/(L + λ) and
       μ + λ > 0, ‖θ_k − θ̂‖² ≤ ρ^k ‖θ_0 − θ̂‖² with
       ρ = 1 − η_p (μ + λ)(2 − η_p (L + λ)) ∈ [0, 1), so every coordinate
       of θ_k converges to θ̂'s;
     - inner_cauchy, prox_point_exists, prox_map_exists: in that window
       each coordinate of θ_k is a Cauchy sequence, and its limit (ℝ is
       complete) meets the first-order condition, so θ̂(w) exists for every
       w (no matrix inverse is needed: the loop itself builds it);
     - inner_window_sharp: if L is attained (Ax = Lx for some x ≠ 0) and
       η_p is outside that window, the loop started at θ̂ + x never comes
       closer to θ̂: the window of PFedMeInner.window_iff, for d dimensions;
     - envelope_expansion, envelope_gradient_vec, line8_is_envelope_step_vec:
       for f convex (μ ≥ 0) and λ > 0, F(w + v) = F(w) + ⟨λ(w − θ̂(w)), v⟩
       + R with 0 ≤ R ≤ (λ/2)‖v‖², so F is differentiable with gradient
       λ(w − θ̂(w)) (eq. (4)) and line 8 is a gradient step on F;
     - prox_minimises_convex, envelope_expansion_convex,
       envelope_gradient_convex: eq. (3)'s minimiser and eq. (4)'s
       gradient for every convex f on ℝ^d
       (f(y) ≥ f(x) + ⟨∇f(x), y − x⟩) and θ̂ given by its first-order
       condition ∇f(θ̂) + λ(θ̂ − w) = 0: h(θ) ≥ h(θ̂) + (λ/2)‖θ − θ̂‖², and
       the same expansion of F, so ∇F(w) = λ(w − θ̂(w)) for convex f too.
   The official code's extra term μ_off θ in line 7 (pfedme.mu) is the same
   loop with A + μ_off I for A.

   C code it concerns: pflref_prox_point (ref/engine/prox_inner.c, the
   exact θ̂ by conjugate gradients on (H + λI) x = −∇f(w; D) for a model
   quadratic in θ, H its Hessian), pflref_prox_inner_run (line 7) and
   pFedMe's line 8 (ref/algorithms/pfedme.c); see proofs/README.md for how
   far each link reaches.  Vectors are functions 'I_d -> R and A a function
   'I_d -> 'I_d -> R; sums are mathcomp's big sums. *)

From Coq Require Import Reals Lra FunctionalExtensionality.
From mathcomp Require Import ssreflect ssrbool ssrfun eqtype ssrnat seq.
From mathcomp Require Import fintype bigop.
From Pflref Require Import RSum.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Local Open Scope R_scope.

Section Quadratic.

Variable d : nat.

Definition vec := 'I_d -> R.

(* ⟨u, v⟩ = Σ_i u_i v_i *)
Definition dot (u v : vec) : R := \big[Rplus/0]_(i < d) (u i * v i).

(* u + v, u − v and c·u, locked (ssreflect's `locked`) so that rewriting
   never reads u − v as u + (−v); `coords` opens them coordinate by
   coordinate. *)
Definition vadd : vec -> vec -> vec := locked (fun u v i => u i + v i).
Definition vsub : vec -> vec -> vec := locked (fun u v i => u i - v i).
Definition vscal : R -> vec -> vec := locked (fun c u i => c * u i).

Lemma vadd_i u v i : vadd u v i = u i + v i. Proof. by rewrite /vadd -lock. Qed.
Lemma vsub_i u v i : vsub u v i = u i - v i. Proof. by rewrite /vsub -lock. Qed.
Lemma vscal_i c u i : vscal c u i = c * u i. Proof. by rewrite /vscal -lock. Qed.
Ltac coords := repeat (first [rewrite vadd_i | rewrite vsub_i | rewrite vscal_i]).

(* (A x)_i = Σ_j A_ij x_j *)
Definition mv (A : 'I_d -> 'I_d -> R) (x : vec) : vec :=
  fun i => \big[Rplus/0]_(j < d) (A i j * x j).

(* ---- the sums' algebra ---- *)

Lemma sum_add (F G : 'I_d -> R) :
  \big[Rplus/0]_(i < d) (F i + G i) =
  \big[Rplus/0]_(i < d) F i + \big[Rplus/0]_(i < d) G i.
Proof. exact: big_split. Qed.

Lemma sum_scale (k : R) (F : 'I_d -> R) :
  \big[Rplus/0]_(i < d) (k * F i) = k * \big[Rplus/0]_(i < d) F i.
Proof.
apply: (big_rec2 (fun x y => x = k * y)); first by rewrite Rmult_0_r.
by move=> i x y _ ->; rewrite Rmult_plus_distr_l.
Qed.

Lemma sum_ext (F G : 'I_d -> R) :
  (forall i, F i = G i) ->
  \big[Rplus/0]_(i < d) F i = \big[Rplus/0]_(i < d) G i.
Proof. by move=> E; apply: eq_bigr => i _; exact: E. Qed.

Lemma sum_sub (F G : 'I_d -> R) :
  \big[Rplus/0]_(i < d) (F i - G i) =
  \big[Rplus/0]_(i < d) F i - \big[Rplus/0]_(i < d) G i.
Proof.
have E : \big[Rplus/0]_(i < d) F i =
         \big[Rplus/0]_(i < d) ((F i - G i) + G i).
  by apply: sum_ext => i; ring.
by rewrite E sum_add; ring.
Qed.

Lemma sum_nonneg (F : 'I_d -> R) :
  (forall i, 0 <= F i) -> 0 <= \big[Rplus/0]_(i < d) F i.
Proof.
move=> H; apply: (big_rec (fun x => 0 <= x)); first lra.
by move=> i x _ Hx; move: (H i) => Hi; lra.
Qed.

Lemma dot_sym u v : dot u v = dot v u.
Proof. by apply: sum_ext => i; ring. Qed.

Lemma dot_addl u v w : dot (vadd u v) w = dot u w + dot v w.
Proof. by rewrite /dot -sum_add; apply: sum_ext => i; coords; ring. Qed.

Lemma dot_subl u v w : dot (vsub u v) w = dot u w - dot v w.
Proof. by rewrite /dot -sum_sub; apply: sum_ext => i; coords; ring. Qed.

Lemma dot_scall c u w : dot (vscal c u) w = c * dot u w.
Proof. by rewrite /dot -sum_scale; apply: sum_ext => i; coords; ring. Qed.

Lemma dot_addr u v w : dot w (vadd u v) = dot w u + dot w v.
Proof. by rewrite dot_sym dot_addl (dot_sym u) (dot_sym v). Qed.

Lemma dot_subr u v w : dot w (vsub u v) = dot w u - dot w v.
Proof. by rewrite dot_sym dot_subl (dot_sym u) (dot_sym v). Qed.

Lemma dot_scalr c u w : dot w (vscal c u) = c * dot w u.
Proof. by rewrite dot_sym dot_scall dot_sym. Qed.

Lemma dot_self_nonneg u : 0 <= dot u u.
Proof. by apply: sum_nonneg => i; apply: Rle_0_sqr. Qed.

(* A coordinate's square is at most the squared norm. *)
Lemma coord_le_norm u i : u i * u i <= dot u u.
Proof.
rewrite /dot (bigD1 i) //= -{1}(Rplus_0_r (u i * u i)).
apply: Rplus_le_compat_l; apply: (big_rec (fun x => 0 <= x)); first lra.
by move=> j x _ Hx; move: (Rle_0_sqr (u j)); rewrite /Rsqr; lra.
Qed.

(* A remainder R(v) with 0 ≤ R(v) ≤ (c/2)‖v‖², c > 0, is o(‖v‖):
   |R(v)| ≤ ε‖v‖ once ‖v‖ < 2ε/c.  Both envelope theorems end with it. *)
Lemma small_remainder (c : R) (Rv : vec -> R) :
  0 < c -> (forall v, 0 <= Rv v <= c / 2 * dot v v) ->
  forall eps, 0 < eps -> exists delta, 0 < delta /\
    forall v, sqrt (dot v v) < delta -> Rabs (Rv v) <= eps * sqrt (dot v v).
Proof.
move=> Hc HR eps Heps; exists (2 * eps / c); split.
  by apply: Rdiv_lt_0_compat; lra.
move=> v Hv; have [R0 R1] := HR v.
set n := sqrt (dot v v) in Hv *.
have Hn : 0 <= n by exact: sqrt_pos.
have Hvv : dot v v = n * n by rewrite /n sqrt_sqrt //; exact: dot_self_nonneg.
rewrite Hvv in R1; rewrite Rabs_pos_eq //.
have Hnc : n * c < 2 * eps.
  have : n * c < 2 * eps / c * c by apply: Rmult_lt_compat_r.
  by have -> : 2 * eps / c * c = 2 * eps by field; lra.
have : c / 2 * (n * n) <= eps * n.
  have -> : c / 2 * (n * n) = (n * c) / 2 * n by field.
  by apply: Rmult_le_compat_r => //; lra.
lra.
Qed.

(* Limits pass through the finite sums. *)
Lemma cv_const (a : R) : Un_cv (fun _ => a) a.
Proof. by move=> eps Heps; exists O => n _; rewrite /R_dist Rminus_diag_eq // Rabs_R0. Qed.

Lemma sum_cv (F : 'I_d -> nat -> R) (G : 'I_d -> R) :
  (forall j, Un_cv (F j) (G j)) ->
  Un_cv (fun k => \big[Rplus/0]_(j < d) F j k) (\big[Rplus/0]_(j < d) G j).
Proof.
move=> H.
pose op1 := fun (f g : nat -> R) (k : nat) => f k + g k.
have E : (fun k => \big[Rplus/0]_(j < d) F j k) = \big[op1/(fun _ => 0)]_(j < d) F j.
  apply: functional_extensionality => k.
  apply: (big_ind2 (fun (t : R) (f : nat -> R) => t = f k)) => //.
  by move=> a f c g -> ->.
rewrite E; apply: (big_ind2 (fun (f : nat -> R) (t : R) => Un_cv f t)) => //.
  exact: cv_const.
by move=> f a g c Hf Hg; apply: CV_plus.
Qed.

Variable A : 'I_d -> 'I_d -> R.
Hypothesis A_sym : forall i j, A i j = A j i.

Lemma mv_add u v : mv A (vadd u v) = vadd (mv A u) (mv A v).
Proof.
apply: functional_extensionality => i; rewrite /mv vadd_i -sum_add.
by apply: sum_ext => j; coords; ring.
Qed.

Lemma mv_sub u v : mv A (vsub u v) = vsub (mv A u) (mv A v).
Proof.
apply: functional_extensionality => i; rewrite /mv vsub_i -sum_sub.
by apply: sum_ext => j; coords; ring.
Qed.

Lemma mv_scal c u : mv A (vscal c u) = vscal c (mv A u).
Proof.
apply: functional_extensionality => i; rewrite /mv vscal_i -sum_scale.
by apply: sum_ext => j; coords; ring.
Qed.

(* A is symmetric: ⟨Ax, y⟩ = ⟨x, Ay⟩ = ⟨Ay, x⟩. *)
Lemma mv_sym x y : dot (mv A x) y = dot (mv A y) x.
Proof.
rewrite /dot /mv.
have E : forall (F : 'I_d -> R) (c : R),
    (\big[Rplus/0]_(j < d) F j) * c = \big[Rplus/0]_(j < d) (F j * c).
  by move=> F c; rewrite Rmult_comm -sum_scale; apply: sum_ext => j; ring.
rewrite (eq_bigr (fun i => \big[Rplus/0]_(j < d) (A i j * x j * y i)));
  last by move=> i _; rewrite E.
rewrite [RHS](eq_bigr (fun i => \big[Rplus/0]_(j < d) (A i j * y j * x i)));
  last by move=> i _; rewrite E.
rewrite exchange_big /=; apply: eq_bigr => i _; apply: eq_bigr => j _.
by rewrite A_sym; ring.
Qed.

(* ---- the quadratic, h, and its first-order condition ---- *)

Variable b : vec.
Variable lam : R.                      (* λ *)

(* f(θ) = ½⟨Aθ, θ⟩ − ⟨b, θ⟩, ∇f(θ) = Aθ − b *)
Definition f (th : vec) : R := / 2 * dot (mv A th) th - dot b th.

(* h(θ; w) = f(θ) + (λ/2)‖θ − w‖², eq. (3)'s objective *)
Definition h (w th : vec) : R := f th + lam / 2 * dot (vsub th w) (vsub th w).

(* B x = (A + λI) x, h's Hessian *)
Definition Bop (x : vec) : vec := vadd (mv A x) (vscal lam x).

(* ∇h(θ̂; w) = 0: (A + λI) θ̂ = b + λw *)
Definition normal (w p : vec) : Prop :=
  forall i, mv A p i + lam * p i = b i + lam * w i.

Lemma dot_Bop x y : dot (Bop x) y = dot (mv A x) y + lam * dot x y.
Proof. by rewrite /Bop dot_addl dot_scall. Qed.

Lemma normal_dot w p v :
  normal w p -> dot (mv A p) v + lam * dot p v = dot b v + lam * dot w v.
Proof.
move=> N.
have E : dot (vadd (mv A p) (vscal lam p)) v = dot (vadd b (vscal lam w)) v.
  by apply: sum_ext => i; coords; rewrite N.
by move: E; rewrite !dot_addl !dot_scall.
Qed.

Lemma vec_eq (u v : vec) : (forall i, u i = v i) -> u = v.
Proof. exact: functional_extensionality. Qed.

Lemma add_sub (p th : vec) : th = vadd p (vsub th p).
Proof. by apply: vec_eq => i; coords; ring. Qed.

(* h(θ̂ + e) − h(θ̂) = ½⟨B e, e⟩ at a point of the first-order condition. *)
Lemma prox_gap_e w p e :
  normal w p -> h w (vadd p e) - h w p = / 2 * dot (Bop e) e.
Proof.
move=> N.
have F1 : dot (mv A (vadd p e)) (vadd p e) =
          dot (mv A p) p + 2 * dot (mv A p) e + dot (mv A e) e.
  by rewrite mv_add dot_addl !dot_addr (mv_sym e p); ring.
have F2 : vsub (vadd p e) w = vadd (vsub p w) e.
  by apply: vec_eq => i; coords; ring.
have F3 : dot (vadd (vsub p w) e) (vadd (vsub p w) e) =
          dot (vsub p w) (vsub p w) + 2 * (dot p e - dot w e) + dot e e.
  by rewrite dot_addl !dot_addr (dot_sym e (vsub p w)) (dot_subl p w e); ring.
have G := normal_dot e N.
rewrite /h /f F2 F3 F1 dot_addr dot_Bop.
lra.
Qed.

(* req: pfedme.eq3, prox.eq3 *)
Theorem prox_gap w p th :
  normal w p -> h w th - h w p = / 2 * dot (Bop (vsub th p)) (vsub th p).
Proof. by move=> N; rewrite {1}(add_sub p th); exact: prox_gap_e. Qed.

Lemma norm0 (u : vec) : dot u u = 0 -> u = (fun _ => 0).
Proof.
move=> Z; apply: vec_eq => i.
have := coord_le_norm u i; rewrite Z => H.
have := Rle_0_sqr (u i); rewrite /Rsqr => H0.
by apply: Rsqr_0_uniq; rewrite /Rsqr; lra.
Qed.

(* θ̂ is the unique minimiser of h, with the quadratic growth of a
   (μ + λ)-strongly convex function. *)
(* req: pfedme.eq3, prox.eq3 *)
Theorem prox_minimises_vec mu w p th :
  (forall x, mu * dot x x <= dot (mv A x) x) -> 0 < mu + lam ->
  normal w p ->
  (mu + lam) / 2 * dot (vsub th p) (vsub th p) <= h w th - h w p /\
  h w p <= h w th /\
  (h w th = h w p -> th = p).
Proof.
move=> Hmu Hm N; have G := prox_gap th N; rewrite dot_Bop in G.
set e := vsub th p in G *.
have He := Hmu e; have Hee := dot_self_nonneg e.
have Lo : (mu + lam) / 2 * dot e e <= / 2 * (dot (mv A e) e + lam * dot e e) by lra.
have P : 0 <= (mu + lam) / 2 * dot e e by apply: Rmult_le_pos; lra.
split; [lra | split; [lra |]].
move=> Eq.
have Z : dot e e = 0.
  have : (mu + lam) / 2 * dot e e <= 0 by lra.
  move=> H; apply: Rle_antisym => //.
  apply: (Rmult_le_reg_l ((mu + lam) / 2)); lra.
rewrite (add_sub p th) -/e (norm0 Z); apply: vec_eq => i; coords; ring.
Qed.

Theorem prox_unique mu w p q :
  (forall x, mu * dot x x <= dot (mv A x) x) -> 0 < mu + lam ->
  normal w p -> normal w q -> p = q.
Proof.
move=> Hmu Hm Np Nq.
have [_ [Hpq _]] := prox_minimises_vec q Hmu Hm Np.
have [_ [Hqp _]] := prox_minimises_vec p Hmu Hm Nq.
have [_ [_ U]] := prox_minimises_vec q Hmu Hm Np.
by symmetry; apply: U; lra.
Qed.

(* pflref_prox_point's form: θ̂ = w + x with (A + λI) x = −∇f(w). *)
Theorem prox_point_c_form w x :
  (forall i, mv A x i + lam * x i = - (mv A w i - b i)) ->
  normal w (vadd w x).
Proof.
move=> Hx i; rewrite mv_add; coords.
have := Hx i; lra.
Qed.

(* ---- the stopping test of pflref_prox_point ---- *)

(* The C's loop, for ANY step sizes α_k and directions p_k (conjugate
   gradients' are one choice): x_0 = 0, r_0 = c and
   x_{k+1} = x_k + α_k p_k, r_{k+1} = r_k − α_k B p_k. *)
Fixpoint cg_run (alpha : nat -> R) (p : nat -> vec) (c : vec) (k : nat)
  : vec * vec :=
  match k with
  | 0 => ((fun _ => 0), c)
  | k'.+1 =>
      let xr := cg_run alpha p c k' in
      (vadd xr.1 (vscal (alpha k') (p k')),
       vsub xr.2 (vscal (alpha k') (Bop (p k'))))
  end.

(* The residual the loop updates is the true residual c − B x_k, in real
   arithmetic, whatever α_k and p_k. *)
Theorem cg_residual alpha p c k :
  (cg_run alpha p c k).2 = vsub c (Bop (cg_run alpha p c k).1).
Proof.
elim: k => [| k IH] /=.
  apply: vec_eq => i; rewrite /Bop /mv; coords.
  by rewrite big1 => [| j _]; ring.
rewrite IH /Bop mv_add mv_scal; apply: vec_eq => i; coords; ring.
Qed.

(* A residual bounds the error: (μ + λ)² ‖x − x*‖² ≤ ‖B x − B x*‖². *)
Lemma residual_error mu x y :
  (forall z, mu * dot z z <= dot (mv A z) z) -> 0 < mu + lam ->
  (mu + lam) * (mu + lam) * dot (vsub x y) (vsub x y) <=
  dot (vsub (Bop x) (Bop y)) (vsub (Bop x) (Bop y)).
Proof.
move=> Hmu Hm.
set e := vsub x y; set s := mu + lam.
have Be : vsub (Bop x) (Bop y) = Bop e.
  by rewrite /e /Bop mv_sub; apply: vec_eq => i; coords; ring.
rewrite Be; set g := Bop e.
have Hlow : s * dot e e <= dot g e by rewrite /g /s dot_Bop; have := Hmu e; lra.
have Hsq := dot_self_nonneg (vsub (vscal s e) g).
rewrite dot_subl !dot_subr !dot_scall !dot_scalr (dot_sym e g) in Hsq.
have Hs : 0 <= s by rewrite /s; lra.
have H2 := Rmult_le_compat_l s _ _ Hs Hlow.
lra.
Qed.

(* pflref_prox_point stops when ‖r_k‖ ≤ rtol ‖r_0‖, r_0 = −∇f(w) = b − Aw.
   Its θ̂ = w + x_k is then within rtol ‖∇f(w)‖ / (μ + λ) of eq. (3)'s θ̂,
   in real arithmetic, whatever α_k and p_k led there. *)
(* req: pfedme.eq3, prox.eq3 *)
Theorem prox_point_stop mu w th alpha p k rtol :
  (forall z, mu * dot z z <= dot (mv A z) z) -> 0 < mu + lam ->
  normal w th ->
  let c := vsub b (mv A w) in
  let xr := cg_run alpha p c k in
  dot xr.2 xr.2 <= rtol * rtol * dot c c ->
  (mu + lam) * (mu + lam) * dot (vsub (vadd w xr.1) th) (vsub (vadd w xr.1) th)
    <= rtol * rtol * dot c c.
Proof.
move=> Hmu Hm N c xr Hstop.
have Hstar : Bop (vsub th w) = c.
  apply: vec_eq => i; rewrite /c /Bop mv_sub; coords.
  have := N i; lra.
have E : vsub (vadd w xr.1) th = vsub xr.1 (vsub th w).
  by apply: vec_eq => i; coords; ring.
have R : vsub (Bop xr.1) (Bop (vsub th w)) = vscal (-1) xr.2.
  rewrite Hstar /xr cg_residual; apply: vec_eq => i; coords; ring.
rewrite E.
apply: (Rle_trans _ _ _ (residual_error xr.1 (vsub th w) Hmu Hm)).
by rewrite R dot_scall dot_scalr; lra.
Qed.

(* ---- line 7: the inner loop ---- *)

Variable eta : R.                      (* η_p *)

(* θ ← θ − η_p (∇f(θ) + λ (θ − w)) *)
Definition step (w th : vec) : vec :=
  fun i => th i - eta * ((mv A th i - b i) + lam * (th i - w i)).

Fixpoint inner (w th0 : vec) (k : nat) : vec :=
  match k with
  | O => th0
  | S k' => step w (inner w th0 k')
  end.

(* The error map e ↦ (I − η_p B) e. *)
Definition err_step (e : vec) : vec := vsub e (vscal eta (Bop e)).

Lemma step_error w p th :
  normal w p -> vsub (step w th) p = err_step (vsub th p).
Proof.
move=> N; apply: vec_eq => i.
rewrite /err_step /Bop mv_sub /step; coords.
have Hb : b i = mv A p i + lam * p i - lam * w i by have := N i; lra.
rewrite Hb; ring.
Qed.

(* req: prox.alg1.l7, pfedme.alg1.l7 *)
Theorem inner_error w p th0 k :
  normal w p -> vsub (inner w th0 k) p = iter k err_step (vsub th0 p).
Proof.
move=> N; elim: k => [| k IH] //=.
by rewrite step_error // IH.
Qed.

(* The Cauchy–Schwarz inequality of the form ⟨B·, ·⟩ when it is positive
   semidefinite: ⟨Bx, y⟩² ≤ ⟨Bx, x⟩⟨By, y⟩. *)
Lemma Bop_expand x y t :
  dot (Bop (vadd x (vscal t y))) (vadd x (vscal t y)) =
  dot (Bop x) x + 2 * t * dot (Bop x) y + t * t * dot (Bop y) y.
Proof.
rewrite !dot_Bop mv_add mv_scal !dot_addl !dot_addr !dot_scall !dot_scalr.
rewrite (mv_sym y x) (dot_sym y x); ring.
Qed.

Lemma form_cauchy_schwarz x y :
  (forall z, 0 <= dot (Bop z) z) ->
  dot (Bop x) y * dot (Bop x) y <= dot (Bop x) x * dot (Bop y) y.
Proof.
move=> Hpos.
set a := dot (Bop x) x; set c := dot (Bop x) y; set e := dot (Bop y) y.
have Q : forall t, 0 <= a + 2 * t * c + t * t * e.
  by move=> t; rewrite /a /c /e -Bop_expand; exact: Hpos.
have He : 0 <= e by exact: Hpos.
have Ha : 0 <= a by exact: Hpos.
case: (Rle_lt_or_eq_dec 0 e He) => [Hlt | Heq].
  have := Q (- c / e).
  have -> : a + 2 * (- c / e) * c + - c / e * (- c / e) * e = a - c * c / e
    by field; lra.
  move=> H.
  have : 0 <= (a - c * c / e) * e by apply: Rmult_le_pos; lra.
  have -> : (a - c * c / e) * e = a * e - c * c by field; lra.
  lra.
have Hc : c = 0.
  case: (Req_dec c 0) => // Hc0.
  have := Q (- (a + 1) / (2 * c)).
  rewrite -Heq.
  have -> : a + 2 * (- (a + 1) / (2 * c)) * c + - (a + 1) / (2 * c) * (- (a + 1) / (2 * c)) * 0 = - 1
    by field.
  lra.
rewrite Hc -Heq; lra.
Qed.

(* ‖Bx‖² ≤ (L + λ)⟨Bx, x⟩: B is co-coercive. *)
Lemma cocoercive L x :
  (forall z, dot (mv A z) z <= L * dot z z) ->
  (forall z, 0 <= dot (Bop z) z) -> 0 <= L + lam ->
  dot (Bop x) (Bop x) <= (L + lam) * dot (Bop x) x.
Proof.
move=> HL Hpos HM.
set y := Bop x.
have CS := form_cauchy_schwarz x y Hpos.
have Hy : dot (Bop y) y <= (L + lam) * dot y y.
  by rewrite dot_Bop; have := HL y; lra.
have Ha : 0 <= dot (Bop x) x by exact: Hpos.
have Hn : 0 <= dot y y by exact: dot_self_nonneg.
rewrite -/y in CS *.
case: (Rle_lt_or_eq_dec 0 (dot y y) Hn) => [Hlt | Heq].
  have : dot y y * dot y y <= ((L + lam) * dot (Bop x) x) * dot y y.
    apply: (Rle_trans _ _ _ CS).
    have -> : (L + lam) * dot (Bop x) x * dot y y = dot (Bop x) x * ((L + lam) * dot y y) by ring.
    by apply: Rmult_le_compat_l.
  by move=> H; apply: (Rmult_le_reg_r (dot y y)).
rewrite -Heq; apply: Rmult_le_pos => //.
Qed.

(* The contraction factor ρ = 1 − η_p (μ + λ)(2 − η_p (L + λ)). *)
Definition rho (mu L : R) : R := 1 - eta * (mu + lam) * (2 - eta * (L + lam)).

Lemma rho_bounds mu L :
  0 < mu + lam -> mu <= L -> 0 < eta < 2 / (L + lam) ->
  0 <= rho mu L < 1.
Proof.
move=> Hm HmL [He1 He2].
have HM : 0 < L + lam by lra.
have HeM : eta * (L + lam) < 2.
  have : eta * (L + lam) < 2 / (L + lam) * (L + lam) by apply: Rmult_lt_compat_r.
  by have -> : 2 / (L + lam) * (L + lam) = 2 by field; lra.
have Hem : eta * (mu + lam) <= eta * (L + lam) by apply: Rmult_le_compat_l; lra.
rewrite /rho; split.
  have : 0 <= (1 - eta * (mu + lam)) * (1 - eta * (mu + lam)) by exact: Rle_0_sqr.
  have : 0 <= eta * (mu + lam) * (eta * (L + lam) - eta * (mu + lam)).
    by apply: Rmult_le_pos; [apply: Rmult_le_pos; lra | lra].
  move=> H1 H2; nra.
have : 0 < eta * (mu + lam) * (2 - eta * (L + lam)).
  by apply: Rmult_lt_0_compat; [apply: Rmult_lt_0_compat | ]; lra.
lra.
Qed.

Lemma step_contracts mu L x :
  (forall z, mu * dot z z <= dot (mv A z) z) ->
  (forall z, dot (mv A z) z <= L * dot z z) ->
  0 < mu + lam -> mu <= L -> 0 < eta < 2 / (L + lam) ->
  dot (err_step x) (err_step x) <= rho mu L * dot x x.
Proof.
move=> Hmu HL Hm HmL [He1 He2].
have HM : 0 < L + lam by lra.
have HeM : eta * (L + lam) < 2.
  have : eta * (L + lam) < 2 / (L + lam) * (L + lam) by apply: Rmult_lt_compat_r.
  by have -> : 2 / (L + lam) * (L + lam) = 2 by field; lra.
have Hpos : forall z, 0 <= dot (Bop z) z.
  move=> z; rewrite dot_Bop; have := Hmu z; have := dot_self_nonneg z.
  move=> H0 H1.
  have : 0 <= (mu + lam) * dot z z by apply: Rmult_le_pos; lra.
  lra.
have Co := cocoercive x HL Hpos (Rlt_le _ _ HM).
have Ex : dot (err_step x) (err_step x) =
          dot x x - 2 * eta * dot (Bop x) x + eta * eta * dot (Bop x) (Bop x).
  rewrite /err_step !dot_subl !dot_subr !dot_scall !dot_scalr (dot_sym x (Bop x)); ring.
rewrite Ex /rho.
set a := dot (Bop x) x; set n := dot x x; set g := dot (Bop x) (Bop x).
have Ha : (mu + lam) * n <= a by rewrite /a /n dot_Bop; have := Hmu x; lra.
have S1 : eta * eta * g <= eta * eta * ((L + lam) * a).
  by apply: Rmult_le_compat_l; [apply: Rmult_le_pos; lra | exact: Co].
have S2 : eta * (2 - eta * (L + lam)) * ((mu + lam) * n)
          <= eta * (2 - eta * (L + lam)) * a.
  by apply: Rmult_le_compat_l; [apply: Rmult_le_pos; lra | exact: Ha].
have -> : (1 - eta * (mu + lam) * (2 - eta * (L + lam))) * n
        = n - eta * (2 - eta * (L + lam)) * ((mu + lam) * n) by ring.
have -> : n - 2 * eta * a + eta * eta * g
        = n - eta * (2 - eta * (L + lam)) * a
          + (eta * eta * g - eta * eta * ((L + lam) * a)) by ring.
lra.
Qed.

(* ‖θ_k − θ̂‖² ≤ ρ^k ‖θ_0 − θ̂‖² *)
(* req: prox.window *)
Theorem inner_contracts mu L w p th0 k :
  (forall z, mu * dot z z <= dot (mv A z) z) ->
  (forall z, dot (mv A z) z <= L * dot z z) ->
  0 < mu + lam -> mu <= L -> 0 < eta < 2 / (L + lam) ->
  normal w p ->
  dot (vsub (inner w th0 k) p) (vsub (inner w th0 k) p) <=
  rho mu L ^ k * dot (vsub th0 p) (vsub th0 p).
Proof.
move=> Hmu HL Hm HmL Hw N.
have [R0 R1] := rho_bounds Hm HmL Hw.
elim: k => [| k IH] /=; first lra.
rewrite step_error //.
apply: (Rle_trans _ _ _ (step_contracts _ Hmu HL Hm HmL Hw)).
rewrite Rmult_assoc; exact: Rmult_le_compat_l.
Qed.

(* In the window every coordinate of θ_k converges to θ̂'s. *)
(* req: prox.window *)
Theorem inner_converges_vec mu L w p th0 i :
  (forall z, mu * dot z z <= dot (mv A z) z) ->
  (forall z, dot (mv A z) z <= L * dot z z) ->
  0 < mu + lam -> mu <= L -> 0 < eta < 2 / (L + lam) ->
  normal w p ->
  Un_cv (fun k => inner w th0 k i) (p i).
Proof.
move=> Hmu HL Hm HmL Hw N eps Heps.
have [R0 R1] := rho_bounds Hm HmL Hw.
set n0 := dot (vsub th0 p) (vsub th0 p).
have Hn0 : 0 <= n0 by exact: dot_self_nonneg.
have Hr : Rabs (rho mu L) < 1 by rewrite Rabs_pos_eq; lra.
have Hy : 0 < eps * eps / (n0 + 1).
  by apply: Rdiv_lt_0_compat; [apply: Rmult_lt_0_compat | ]; lra.
have [M HM] := pow_lt_1_zero _ Hr _ Hy.
exists M => k Hk; rewrite /R_dist.
have Hc := inner_contracts th0 k Hmu HL Hm HmL Hw N.
have Hi := coord_le_norm (vsub (inner w th0 k) p) i.
have Hp := HM k Hk.
rewrite Rabs_pos_eq in Hp; last by apply: pow_le; lra.
have Hlt : rho mu L ^ k * n0 < eps * eps.
  apply: (Rle_lt_trans _ (eps * eps / (n0 + 1) * n0)).
    by apply: Rmult_le_compat_r; lra.
  have -> : eps * eps / (n0 + 1) * n0 = eps * eps - eps * eps / (n0 + 1)
    by field; lra.
  lra.
have Hsq : Rsqr (inner w th0 k i - p i) < Rsqr eps.
  by rewrite /Rsqr; move: Hi Hc; coords; rewrite -/n0; lra.
have := Rsqr_lt_abs_0 _ _ Hsq; rewrite (Rabs_pos_eq eps) //; lra.
Qed.

(* Outside the window, the loop started on an eigenvector of L never comes
   closer: the window is sharp. *)
Theorem inner_window_sharp L w p x k :
  (forall i, mv A x i = L * x i) -> 0 < L + lam ->
  ~ (0 < eta < 2 / (L + lam)) ->
  normal w p ->
  dot x x <= dot (vsub (inner w (vadd p x) k) p) (vsub (inner w (vadd p x) k) p).
Proof.
move=> Hx HM Hw N.
set q := 1 - eta * (L + lam).
have Hq : 1 <= Rabs q.
  case: (Rlt_or_le (Rabs q) 1) => // Lt; exfalso; apply: Hw.
  have := Rabs_def2 _ _ Lt; move=> [H1 H2]; split.
    case: (Rle_or_lt eta 0) => // Hn.
    have : 0 <= - eta * (L + lam) by apply: Rmult_le_pos; lra.
    rewrite /q in H1 H2; lra.
  apply: (Rmult_lt_reg_r (L + lam)) => //.
  have -> : 2 / (L + lam) * (L + lam) = 2 by field; lra.
  rewrite /q in H1 H2; lra.
have E : vsub (inner w (vadd p x) k) p = vscal (q ^ k) x.
  elim: k => [| k IH] /=.
    by apply: vec_eq => i; coords; ring.
  rewrite step_error // IH; apply: vec_eq => i.
  by rewrite /err_step /Bop mv_scal; coords; rewrite Hx /q; ring.
rewrite E dot_scall dot_scalr.
have Hq2 : 1 <= q * q.
  have H0 : 0 <= q * q by move: (Rle_0_sqr q); rewrite /Rsqr.
  have : 1 * 1 <= Rabs q * Rabs q by apply: Rmult_le_compat; lra.
  by rewrite -Rabs_mult Rabs_pos_eq //; lra.
have Hk : 1 <= q ^ k * q ^ k by rewrite -Rpow_mult_distr; exact: pow_R1_Rle.
have Hn := dot_self_nonneg x.
have : 1 * dot x x <= q ^ k * q ^ k * dot x x by apply: Rmult_le_compat_r.
lra.
Qed.

(* ---- the proximal point exists: the loop's limit ---- *)

(* Two runs of line 7 from x and from y differ by (I − η_p B)(x − y). *)
Lemma step_diff w x y : vsub (step w x) (step w y) = err_step (vsub x y).
Proof.
apply: vec_eq => i; rewrite /err_step /Bop mv_sub /step; coords; ring.
Qed.

Section Limit.

Variables (mu L : R) (w th0 : vec).
Hypotheses (Hmu : forall z, mu * dot z z <= dot (mv A z) z)
           (HL : forall z, dot (mv A z) z <= L * dot z z)
           (Hm : 0 < mu + lam) (HmL : mu <= L) (Hw : 0 < eta < 2 / (L + lam)).

Let u k := inner w th0 k.
Let D0 := dot (vsub (u 1) (u 0)) (vsub (u 1) (u 0)).
Let s := sqrt (rho mu L).
Let c := sqrt D0.

(* ‖θ_{k+1} − θ_k‖² ≤ ρ^k ‖θ_1 − θ_0‖² *)
Lemma diff_bound k :
  dot (vsub (u k.+1) (u k)) (vsub (u k.+1) (u k)) <= rho mu L ^ k * D0.
Proof.
have [R0 R1] := rho_bounds Hm HmL Hw.
elim: k => [| k IH]; first by rewrite /= Rmult_1_l; exact: Rle_refl.
rewrite /u /= -/(u k.+1) -/(u k) in IH *.
have -> : step w (step w (u k)) = step w (u k.+1) by [].
rewrite step_diff.
apply: (Rle_trans _ _ _ (step_contracts _ Hmu HL Hm HmL Hw)).
by rewrite Rmult_assoc; apply: Rmult_le_compat_l.
Qed.

Lemma s_bounds : 0 <= s < 1.
Proof.
have [R0 R1] := rho_bounds Hm HmL Hw.
split; first exact: sqrt_pos.
by rewrite -sqrt_1; apply: sqrt_lt_1_alt; lra.
Qed.

(* |θ_{k+1,i} − θ_{k,i}| ≤ s^k c, s = √ρ, c = ‖θ_1 − θ_0‖ *)
Lemma coord_diff k i : Rabs (u k.+1 i - u k i) <= s ^ k * c.
Proof.
have [R0 R1] := rho_bounds Hm HmL Hw.
have Hs : s * s = rho mu L by rewrite /s sqrt_sqrt.
have Hc : c * c = D0 by rewrite /c sqrt_sqrt //; exact: dot_self_nonneg.
have Hcp : 0 <= c by exact: sqrt_pos.
have Hsk : 0 <= s ^ k by apply: pow_le; exact: sqrt_pos.
have := coord_le_norm (vsub (u k.+1) (u k)) i; coords => Hi.
have := diff_bound k; rewrite -Hs -Hc Rpow_mult_distr => Hb.
rewrite -(Rabs_pos_eq (s ^ k * c)); last exact: Rmult_le_pos.
apply: Rsqr_le_abs_0; rewrite /Rsqr.
apply: (Rle_trans _ _ _ Hi); apply: (Rle_trans _ _ _ Hb); right; ring.
Qed.

(* (1 − s)|θ_{n+p,i} − θ_{n,i}| ≤ c s^n (1 − s^p) *)
Lemma tail_bound n p i :
  (1 - s) * Rabs (u (n + p)%nat i - u n i) <= c * s ^ n * (1 - s ^ p).
Proof.
have [S0 S1] := s_bounds.
elim: p => [| p IH].
  by rewrite addn0 (Rminus_diag_eq (u n i) (u n i)) // Rabs_R0 /=; right; ring.
rewrite addnS; set q := (n + p)%nat.
have T := Rabs_triang (u q.+1 i - u q i) (u q i - u n i).
have E : u q.+1 i - u q i + (u q i - u n i) = u q.+1 i - u n i by ring.
rewrite E in T.
have Cd := coord_diff q i.
have Pw : s ^ q = s ^ n * s ^ p by rewrite /q -plusE pow_add.
rewrite Pw in Cd.
have : (1 - s) * Rabs (u q.+1 i - u n i)
       <= (1 - s) * (s ^ n * s ^ p * c) + (1 - s) * Rabs (u q i - u n i).
  rewrite -Rmult_plus_distr_l; apply: Rmult_le_compat_l; lra.
move=> H; apply: (Rle_trans _ _ _ H).
have -> : c * s ^ n * (1 - s ^ p.+1) = (1 - s) * (s ^ n * s ^ p * c) + c * s ^ n * (1 - s ^ p)
  by rewrite /=; ring.
by move: IH; rewrite -/q => IH; lra.
Qed.

(* Each coordinate of θ_k is a Cauchy sequence. *)
Lemma inner_cauchy i : Cauchy_crit (fun k => u k i).
Proof.
have [S0 S1] := s_bounds.
have Hcp : 0 <= c by exact: sqrt_pos.
move=> eps Heps.
have Hy : 0 < eps * (1 - s) / (c + 1).
  by apply: Rdiv_lt_0_compat; [apply: Rmult_lt_0_compat | ]; lra.
have Hsa : Rabs s < 1 by rewrite Rabs_pos_eq.
have [N HN] := pow_lt_1_zero _ Hsa _ Hy.
(* for N ≤ n ≤ m: |θ_m − θ_n| < ε *)
have Key : forall n m, (n >= N)%coq_nat -> (n <= m)%N -> Rabs (u m i - u n i) < eps.
  move=> n m Hn Hnm.
  have := tail_bound n (m - n) i; rewrite subnKC // => Tb.
  have Hsn := HN n Hn; rewrite Rabs_pos_eq in Hsn; last by apply: pow_le.
  have Hsp : 0 <= s ^ (m - n) by apply: pow_le.
  have Hsn0 : 0 <= s ^ n by apply: pow_le.
  have : c * s ^ n * (1 - s ^ (m - n)) <= c * s ^ n.
    have : 0 <= c * s ^ n * s ^ (m - n) by apply: Rmult_le_pos => //; apply: Rmult_le_pos.
    lra.
  have : c * s ^ n <= c * (eps * (1 - s) / (c + 1)).
    by apply: Rmult_le_compat_l => //; lra.
  have : c * (eps * (1 - s) / (c + 1)) < eps * (1 - s).
    have E : (c + 1) * (eps * (1 - s) / (c + 1)) = eps * (1 - s) by field; lra.
    move: Hy E; set y := eps * (1 - s) / (c + 1) => Hy E; lra.
  move=> H1 H2 H3.
  apply: (Rmult_lt_reg_l (1 - s)); first lra.
  lra.
exists N => n m Hn Hm'; rewrite /R_dist.
case: (leqP n m) => Hnm.
  by rewrite Rabs_minus_sym; apply: Key.
by apply: Key => //; apply: ltnW.
Qed.

End Limit.

(* The proximal point exists: for η_p in the window, line 7's iterates from
   any θ_0 converge, coordinate by coordinate (each a Cauchy sequence,
   `inner_cauchy`; ℝ is complete), to a point of the first-order condition
   (pass to the limit in θ_{k+1} = θ_k − η_p(Aθ_k − b + λ(θ_k − w))). *)
Theorem prox_point_exists mu L w :
  (forall z, mu * dot z z <= dot (mv A z) z) ->
  (forall z, dot (mv A z) z <= L * dot z z) ->
  0 < mu + lam -> mu <= L -> 0 < eta < 2 / (L + lam) ->
  {p : vec | normal w p}.
Proof.
move=> Hmu HL Hm HmL Hw.
have C : forall i, Cauchy_crit (fun k => inner w w k i).
  by move=> i; exact: (inner_cauchy w w Hmu HL Hm HmL Hw i).
exists (fun i => proj1_sig (R_complete _ (C i))) => i.
set l := fun i => proj1_sig (R_complete _ (C i)).
have Hl : forall j, Un_cv (fun k => inner w w k j) (l j).
  by move=> j; exact: (proj2_sig (R_complete _ (C j))).
have Hs : Un_cv (fun k => inner w w k.+1 i) (l i).
  move=> eps Heps; have [N HN] := Hl i eps Heps.
  by exists N => n Hn; apply: HN; apply/leP; apply: leqW; apply/leP.
have Hmv : Un_cv (fun k => mv A (inner w w k) i) (mv A l i).
  by rewrite /mv; apply: sum_cv => j; apply: CV_mult; [exact: cv_const | exact: Hl].
have Hstep : Un_cv (fun k => inner w w k.+1 i)
                   (l i - eta * ((mv A l i - b i) + lam * (l i - w i))).
  have -> : (fun k => inner w w k.+1 i) =
            (fun k => inner w w k i - eta * ((mv A (inner w w k) i - b i)
                                             + lam * (inner w w k i - w i))) by [].
  apply: CV_minus; first exact: Hl.
  apply: CV_mult; first exact: cv_const.
  apply: CV_plus; first by apply: CV_minus; [exact: Hmv | exact: cv_const].
  apply: CV_mult; first exact: cv_const.
  by apply: CV_minus; [exact: Hl | exact: cv_const].
have E := UL_sequence _ _ _ Hs Hstep.
have Z : eta * ((mv A l i - b i) + lam * (l i - w i)) = 0 by lra.
case: (Rmult_integral _ _ Z) => [He | H0]; first by case: Hw; lra.
by change (mv A l i + lam * l i = b i + lam * w i); lra.
Qed.

(* ---- line 8: the Moreau envelope ---- *)

(* θ̂(·): any map meeting the first-order condition at every w (for
   μ + λ > 0 and μ ≤ L there is exactly one: prox_unique, and
   prox_map_exists after the section). *)
Variable prox : vec -> vec.
Hypothesis prox_normal : forall w, normal w (prox w).

(* F(w) = min_θ h(θ; w) = h(θ̂(w); w) *)
Definition envelope (w : vec) : R := h w (prox w).

(* eq. (4): ∇F(w) = λ (w − θ̂(w)) *)
Definition grad_env (w : vec) : vec := vscal lam (vsub w (prox w)).

(* F(w + v) = F(w) + ⟨λ(w − θ̂(w)), v⟩ + R, 0 ≤ R ≤ (λ/2)‖v‖², for f
   convex and λ ≥ 0. *)
Theorem envelope_expansion w v :
  (forall z, 0 <= dot (mv A z) z) -> 0 <= lam ->
  0 <= envelope (vadd w v) - envelope w - dot (grad_env w) v <= lam / 2 * dot v v.
Proof.
move=> Hpsd Hlam.
set p := prox w; set u := vsub (prox (vadd w v)) p.
have Np : normal w p by exact: prox_normal.
have Hp' : prox (vadd w v) = vadd p u by exact: add_sub.
(* B u = λ v: the two first-order conditions, subtracted *)
have Bu : forall z, dot (mv A u) z + lam * dot u z = lam * dot v z.
  move=> z.
  have E : dot (vadd (mv A u) (vscal lam u)) z = dot (vscal lam v) z.
    apply: sum_ext => i; rewrite /u mv_sub; coords.
    have := prox_normal (vadd w v) i; have := Np i; coords => H1 H2.
    rewrite -/p; congr (_ * _); lra.
  by move: E; rewrite dot_addl !dot_scall.
have Hs : vsub (vadd p u) (vadd w v) = vadd (vsub p w) (vsub u v).
  by apply: vec_eq => i; coords; ring.
have F1 : dot (mv A (vadd p u)) (vadd p u) =
          dot (mv A p) p + 2 * dot (mv A p) u + dot (mv A u) u.
  by rewrite mv_add dot_addl !dot_addr (mv_sym u p); ring.
have F3 : dot (vadd (vsub p w) (vsub u v)) (vadd (vsub p w) (vsub u v)) =
          dot (vsub p w) (vsub p w)
          + 2 * (dot p u - dot p v - dot w u + dot w v)
          + (dot u u - 2 * dot u v + dot v v).
  rewrite dot_addl !dot_addr (dot_sym (vsub u v) (vsub p w)).
  rewrite (dot_subl p w (vsub u v)) (dot_subr u v p) (dot_subr u v w).
  rewrite (dot_subl u v (vsub u v)) (dot_subr u v u) (dot_subr u v v).
  by rewrite (dot_sym v u); ring.
have G : dot (grad_env w) v = lam * (dot w v - dot p v).
  by rewrite /grad_env dot_scall dot_subl.
have N := normal_dot u Np.
have Bu_u := Bu u; rewrite (dot_sym v u) in Bu_u.
have Auu := Hpsd u.
have Luu : 0 <= lam * dot u u by apply: Rmult_le_pos => //; exact: dot_self_nonneg.
have Lzz : 0 <= lam * dot (vsub u v) (vsub u v)
  by apply: Rmult_le_pos => //; exact: dot_self_nonneg.
rewrite (dot_subl u v (vsub u v)) (dot_subr u v u) (dot_subr u v v) (dot_sym v u) in Lzz.
rewrite /envelope Hp' /h /f Hs F3 F1 G dot_addr -/p.
split; lra.
Qed.

(* F is differentiable at w with gradient λ(w − θ̂(w)) (eq. (4)):
   |F(w + v) − F(w) − ⟨λ(w − θ̂(w)), v⟩| ≤ ε‖v‖ once ‖v‖ < 2ε/λ. *)
(* req: pfedme.moreau_grad, pfedme.alg1.l8 *)
Theorem envelope_gradient_vec w :
  (forall z, 0 <= dot (mv A z) z) -> 0 < lam ->
  forall eps, 0 < eps -> exists delta, 0 < delta /\
    forall v, sqrt (dot v v) < delta ->
      Rabs (envelope (vadd w v) - envelope w - dot (grad_env w) v)
      <= eps * sqrt (dot v v).
Proof.
move=> Hpsd Hlam; apply: (small_remainder Hlam) => v.
exact: envelope_expansion w v Hpsd (Rlt_le _ _ Hlam).
Qed.

(* Line 8, w − ηλ(w − θ̂(w)), is the gradient step w − η ∇F(w). *)
Corollary line8_is_envelope_step_vec w eta_w :
  vsub w (vscal (eta_w * lam) (vsub w (prox w))) = vsub w (vscal eta_w (grad_env w)).
Proof. by apply: vec_eq => i; rewrite /grad_env; coords; ring. Qed.

End Quadratic.

(* θ̂(·) exists: whenever μ + λ > 0 and μ ≤ L, every w has a point of the
   first-order condition (η_p = 1/(L + λ) is in the window), so the map the
   envelope theorems take (`prox`, `prox_normal`) exists; prox_unique makes
   it the only one. *)
Corollary prox_map_exists d (A : 'I_d -> 'I_d -> R)
    (A_sym : forall i j, A i j = A j i) (b : vec d) (lam mu L : R) :
  (forall z, mu * dot z z <= dot (mv A z) z) ->
  (forall z, dot (mv A z) z <= L * dot z z) ->
  0 < mu + lam -> mu <= L ->
  {prox : vec d -> vec d | forall w, normal A b lam w (prox w)}.
Proof.
move=> Hmu HL Hm HmL.
have HM : 0 < L + lam by lra.
have Hw : 0 < / (L + lam) < 2 / (L + lam).
  split; first exact: Rinv_0_lt_compat.
  rewrite /Rdiv -{1}(Rmult_1_l (/ (L + lam))).
  by apply: Rmult_lt_compat_r; [exact: Rinv_0_lt_compat | lra].
exists (fun w => proj1_sig (prox_point_exists A_sym b w Hmu HL Hm HmL Hw)).
by move=> w; exact: proj2_sig.
Qed.

(* A tactic does not outlive its section: `coords` again, for the next. *)
Ltac coords := repeat (first [rewrite vadd_i | rewrite vsub_i | rewrite vscal_i]).

(* ---- eq. (3)-(4) for every convex f ---- *)

(* The same statements for any convex f on ℝ^d with gradient ∇f, given
   through the first-order characterisation of convexity,
   f(y) ≥ f(x) + ⟨∇f(x), y − x⟩, and θ̂(w) through its first-order
   condition ∇f(θ̂) + λ(θ̂ − w) = 0 (Dinh et al., Proposition 1 / eq. (4),
   for convex f_i).  No derivative is taken: the gradient of F comes out of
   the two-sided bound of envelope_expansion_convex. *)
Section Convex.

Variable d : nat.
Variable f : vec d -> R.
Variable grad_f : vec d -> vec d.
Hypothesis f_convex : forall x y, f x + dot (grad_f x) (vsub y x) <= f y.
Variable lam : R.                      (* λ > 0 *)
Hypothesis lam_pos : 0 < lam.
Variable prox : vec d -> vec d.        (* θ̂(·) *)
Hypothesis prox_foc :
  forall w i, grad_f (prox w) i + lam * (prox w i - w i) = 0.

Definition hc (w th : vec d) : R := f th + lam / 2 * dot (vsub th w) (vsub th w).
Definition envelope_c (w : vec d) : R := hc w (prox w).

Lemma grad_at_prox w z :
  dot (grad_f (prox w)) z = lam * (dot w z - dot (prox w) z).
Proof.
rewrite -dot_subl -dot_scall; apply: sum_ext => i; coords.
by have := prox_foc w i; move=> H; congr (_ * _); lra.
Qed.

(* θ̂(w) minimises h(·; w), with growth λ/2: h(θ) ≥ h(θ̂) + (λ/2)‖θ − θ̂‖². *)
(* req: pfedme.eq3, prox.eq3 *)
Theorem prox_minimises_convex w th :
  hc w (prox w) + lam / 2 * dot (vsub th (prox w)) (vsub th (prox w)) <= hc w th.
Proof.
set p := prox w; set e := vsub th p.
have Hc := f_convex p th; rewrite -/e grad_at_prox -/p in Hc.
have Ht : vsub th w = vadd (vsub p w) e.
  by apply: vec_eq => i; rewrite /e; coords; ring.
rewrite /hc Ht dot_addl !dot_addr (dot_sym e (vsub p w)) (dot_subl p w e).
lra.
Qed.

(* F(w + v) = F(w) + ⟨λ(w − θ̂(w)), v⟩ + R with 0 ≤ R ≤ (λ/2)‖v‖². *)
Theorem envelope_expansion_convex w v :
  0 <= envelope_c (vadd w v) - envelope_c w
       - dot (vscal lam (vsub w (prox w))) v <= lam / 2 * dot v v.
Proof.
set p := prox w; set u := vsub (prox (vadd w v)) p.
have Hp' : prox (vadd w v) = vadd p u by exact: add_sub.
have G : dot (vscal lam (vsub w p)) v = lam * (dot w v - dot p v)
  by rewrite dot_scall dot_subl.
(* upper: F(w + v) ≤ h(θ̂(w); w + v) *)
have Up := prox_minimises_convex (vadd w v) p.
have Hn := dot_self_nonneg (vsub p (prox (vadd w v))).
have Hs1 : vsub p (vadd w v) = vsub (vsub p w) v.
  by apply: vec_eq => i; coords; ring.
have E1 : dot (vsub p (vadd w v)) (vsub p (vadd w v)) =
          dot (vsub p w) (vsub p w) - 2 * (dot p v - dot w v) + dot v v.
  rewrite Hs1 (dot_subl (vsub p w) v) (dot_subr (vsub p w) v (vsub p w)).
  rewrite (dot_subr (vsub p w) v v) (dot_sym v (vsub p w)) (dot_subl p w v); ring.
(* lower: convexity at θ̂(w), towards θ̂(w + v) *)
have Lo := f_convex p (vadd p u).
rewrite grad_at_prox -/p in Lo.
have Hu : vsub (vadd p u) p = u by apply: vec_eq => i; coords; ring.
rewrite Hu in Lo.
have Hs2 : vsub (vadd p u) (vadd w v) = vadd (vsub p w) (vsub u v).
  by apply: vec_eq => i; coords; ring.
have E2 : dot (vadd (vsub p w) (vsub u v)) (vadd (vsub p w) (vsub u v)) =
          dot (vsub p w) (vsub p w)
          + 2 * (dot p u - dot p v - dot w u + dot w v)
          + dot (vsub u v) (vsub u v).
  rewrite dot_addl !dot_addr (dot_sym (vsub u v) (vsub p w)).
  by rewrite (dot_subl p w (vsub u v)) (dot_subr u v p) (dot_subr u v w); ring.
have Luv : 0 <= lam * dot (vsub u v) (vsub u v)
  by apply: Rmult_le_pos; [lra | exact: dot_self_nonneg].
have Lp : 0 <= lam * dot (vsub p (prox (vadd w v))) (vsub p (prox (vadd w v)))
  by apply: Rmult_le_pos; [lra | exact: Hn].
rewrite /envelope_c -/p G; rewrite /hc -/p in Up *.
rewrite Hp' in Lp Up; rewrite E1 Hs2 E2 in Up; rewrite Hp' Hs2 E2.
split; lra.
Qed.

(* F is differentiable with gradient λ(w − θ̂(w)) (eq. (4)). *)
(* req: pfedme.moreau_grad, pfedme.alg1.l8 *)
Theorem envelope_gradient_convex w :
  forall eps, 0 < eps -> exists delta, 0 < delta /\
    forall v, sqrt (dot v v) < delta ->
      Rabs (envelope_c (vadd w v) - envelope_c w
            - dot (vscal lam (vsub w (prox w))) v)
      <= eps * sqrt (dot v v).
Proof.
by apply: (small_remainder lam_pos) => v; exact: envelope_expansion_convex.
Qed.

End Convex.
