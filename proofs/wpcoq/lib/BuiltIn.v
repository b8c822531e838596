(* SPDX-License-Identifier: GPL-3.0-or-later *)
(* proofs/wpcoq/lib/BuiltIn.v: what Why3's Coq printer asks of its library
   `BuiltIn` (proofs/wpcoq/README.md).  A file it prints opens with
   `Require Import BuiltIn`, names every type it declares a `WhyType`
   (a type with an inhabitant and a decidable equality: what Why3 needs of
   a type it quantifies over and compares), and writes the conversion from
   integers to reals as `BuiltIn.IZR`.  The driver (coq-common.gen) prints
   integers and reals as Coq's own Z and R, so this is all the printed
   ACSL definitions need; ZArith and Reals are exported for their
   notations (%Z, %R). *)
Require Export ZArith Reals.

Class WhyType (T : Type) := {
  why_inhabitant : T;
  why_decidable_eq : forall x y : T, {x = y} + {x <> y}
}.

Notation IZR := Reals.Rdefinitions.IZR.
