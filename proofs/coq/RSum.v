(* proofs/coq/RSum.v: (R, +, 0) as a commutative monoid, for mathcomp's big
   sums over the reals; Pflego.v, Variance.v, ProxQuad.v and Selection.v
   sum with it.  No theorem. *)
From Coq Require Import Reals.
From mathcomp Require Import ssreflect ssrfun bigop.

Lemma Rplus_assoc' : associative Rplus.
Proof. by move=> x y z; rewrite Rplus_assoc. Qed.
Canonical Rplus_monoid := Monoid.Law Rplus_assoc' Rplus_0_l Rplus_0_r.
Canonical Rplus_comoid := Monoid.ComLaw Rplus_comm.
