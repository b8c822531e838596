(* SPDX-License-Identifier: GPL-3.0-or-later *)
(* Written by proofs/wpcoq/export.sh: the Why3 task WP builds for
   proofs/wpcoq/question.c (its predicates, WP's own translation of the
   ACSL they name), printed by Why3's Coq printer, up to its goal.  Do not
   edit: export.sh --check keeps it current; proofs/coq/ClusterJoint.v,
   LinkageJoint.v and SamplerJoint.v join it to the theorems. *)
Require Import BuiltIn.
Require BuiltIn.
Require HighOrd.
Require bool.Bool.
Require int.Int.
Require int.Abs.
Require int.ComputerDivision.
Require real.Real.
Require real.RealInfix.
Require real.FromInt.
Require map.Map.

Parameter eqb:
  forall {a:Type} {a_WT:WhyType a}, a -> a -> Init.Datatypes.bool.

Axiom eqb1 :
  forall {a:Type} {a_WT:WhyType a},
  forall (x:a) (y:a), ((eqb x y) = Init.Datatypes.true) <-> (x = y).

Parameter neqb:
  forall {a:Type} {a_WT:WhyType a}, a -> a -> Init.Datatypes.bool.

Axiom neqb1 :
  forall {a:Type} {a_WT:WhyType a},
  forall (x:a) (y:a), ((neqb x y) = Init.Datatypes.true) <-> ~ (x = y).

Parameter zlt: Numbers.BinNums.Z -> Numbers.BinNums.Z -> Init.Datatypes.bool.

Parameter zleq:
  Numbers.BinNums.Z -> Numbers.BinNums.Z -> Init.Datatypes.bool.

Axiom zlt1 :
  forall (x:Numbers.BinNums.Z) (y:Numbers.BinNums.Z),
  ((zlt x y) = Init.Datatypes.true) <-> (x < y)%Z.

Axiom zleq1 :
  forall (x:Numbers.BinNums.Z) (y:Numbers.BinNums.Z),
  ((zleq x y) = Init.Datatypes.true) <-> (x <= y)%Z.

Parameter rlt:
  Reals.Rdefinitions.R -> Reals.Rdefinitions.R -> Init.Datatypes.bool.

Parameter rleq:
  Reals.Rdefinitions.R -> Reals.Rdefinitions.R -> Init.Datatypes.bool.

Axiom rlt1 :
  forall (x:Reals.Rdefinitions.R) (y:Reals.Rdefinitions.R),
  ((rlt x y) = Init.Datatypes.true) <-> (x < y)%R.

Axiom rleq1 :
  forall (x:Reals.Rdefinitions.R) (y:Reals.Rdefinitions.R),
  ((rleq x y) = Init.Datatypes.true) <-> (x <= y)%R.

(* Why3 assumption *)
Definition real_of_int (x:Numbers.BinNums.Z) : Reals.Rdefinitions.R :=
  BuiltIn.IZR x.

Axiom c_euclidian :
  forall (n:Numbers.BinNums.Z) (d:Numbers.BinNums.Z), ~ (d = 0%Z) ->
  (n = (((ZArith.BinInt.Z.quot n d) * d)%Z + (ZArith.BinInt.Z.rem n d))%Z).

Axiom cmod_remainder :
  forall (n:Numbers.BinNums.Z) (d:Numbers.BinNums.Z),
  ((0%Z <= n)%Z -> (0%Z < d)%Z ->
   (0%Z <= (ZArith.BinInt.Z.rem n d))%Z /\ ((ZArith.BinInt.Z.rem n d) < d)%Z) /\
  ((n <= 0%Z)%Z -> (0%Z < d)%Z ->
   ((-d)%Z < (ZArith.BinInt.Z.rem n d))%Z /\
   ((ZArith.BinInt.Z.rem n d) <= 0%Z)%Z) /\
  ((0%Z <= n)%Z -> (d < 0%Z)%Z ->
   (0%Z <= (ZArith.BinInt.Z.rem n d))%Z /\
   ((ZArith.BinInt.Z.rem n d) < (-d)%Z)%Z) /\
  ((n <= 0%Z)%Z -> (d < 0%Z)%Z ->
   (d < (ZArith.BinInt.Z.rem n d))%Z /\ ((ZArith.BinInt.Z.rem n d) <= 0%Z)%Z).

Axiom cdiv_neutral :
  forall (a:Numbers.BinNums.Z), ((ZArith.BinInt.Z.quot a 1%Z) = a).

Axiom cdiv_inv :
  forall (a:Numbers.BinNums.Z), ~ (a = 0%Z) ->
  ((ZArith.BinInt.Z.quot a a) = 1%Z).

Axiom cdiv_closed_remainder :
  forall (a:Numbers.BinNums.Z) (b:Numbers.BinNums.Z) (n:Numbers.BinNums.Z),
  (0%Z <= a)%Z -> (0%Z <= b)%Z ->
  (0%Z <= (b - a)%Z)%Z /\ ((b - a)%Z < n)%Z ->
  ((ZArith.BinInt.Z.rem a n) = (ZArith.BinInt.Z.rem b n)) -> (a = b).

(* Why3 assumption *)
Inductive addr :=
  | addr'mk : Numbers.BinNums.Z -> Numbers.BinNums.Z -> addr.
Axiom addr_WhyType : WhyType addr.
Existing Instance addr_WhyType.

(* Why3 assumption *)
Definition offset (v:addr) : Numbers.BinNums.Z :=
  match v with
  | addr'mk x x1 => x1
  end.

(* Why3 assumption *)
Definition base (v:addr) : Numbers.BinNums.Z :=
  match v with
  | addr'mk x x1 => x
  end.

Parameter addr_le: addr -> addr -> Prop.

Parameter addr_lt: addr -> addr -> Prop.

Parameter addr_le_bool: addr -> addr -> Init.Datatypes.bool.

Parameter addr_lt_bool: addr -> addr -> Init.Datatypes.bool.

Axiom addr_le_def :
  forall (p:addr) (q:addr), ((base p) = (base q)) ->
  addr_le p q <-> ((offset p) <= (offset q))%Z.

Axiom addr_lt_def :
  forall (p:addr) (q:addr), ((base p) = (base q)) ->
  addr_lt p q <-> ((offset p) < (offset q))%Z.

Axiom addr_le_bool_def :
  forall (p:addr) (q:addr),
  addr_le p q <-> ((addr_le_bool p q) = Init.Datatypes.true).

Axiom addr_lt_bool_def :
  forall (p:addr) (q:addr),
  addr_lt p q <-> ((addr_lt_bool p q) = Init.Datatypes.true).

(* Why3 assumption *)
Definition null : addr := addr'mk 0%Z 0%Z.

(* Why3 assumption *)
Definition global (b:Numbers.BinNums.Z) : addr := addr'mk b 0%Z.

(* Why3 assumption *)
Definition shift (p:addr) (k:Numbers.BinNums.Z) : addr :=
  addr'mk (base p) ((offset p) + k)%Z.

(* Why3 assumption *)
Definition included (p:addr) (a:Numbers.BinNums.Z) (q:addr)
    (b:Numbers.BinNums.Z) : Prop :=
  (0%Z < a)%Z ->
  (0%Z <= b)%Z /\
  ((base p) = (base q)) /\
  ((offset q) <= (offset p))%Z /\
  (((offset p) + a)%Z <= ((offset q) + b)%Z)%Z.

(* Why3 assumption *)
Definition separated (p:addr) (a:Numbers.BinNums.Z) (q:addr)
    (b:Numbers.BinNums.Z) : Prop :=
  (a <= 0%Z)%Z \/
  (b <= 0%Z)%Z \/
  ~ ((base p) = (base q)) \/
  (((offset q) + b)%Z <= (offset p))%Z \/
  (((offset p) + a)%Z <= (offset q))%Z.

(* Why3 assumption *)
Definition eqmem {a:Type} {a_WT:WhyType a} (m1:addr -> a) (m2:addr -> a)
    (p:addr) (a1:Numbers.BinNums.Z) : Prop :=
  forall (q:addr), included q 1%Z p a1 -> ((m1 q) = (m2 q)).

Parameter havoc:
  forall {a:Type} {a_WT:WhyType a}, (addr -> a) -> (addr -> a) -> addr ->
  Numbers.BinNums.Z -> addr -> a.

(* Why3 assumption *)
Definition valid_rw (m:Numbers.BinNums.Z -> Numbers.BinNums.Z) (p:addr)
    (n:Numbers.BinNums.Z) : Prop :=
  (0%Z < n)%Z ->
  (0%Z < (base p))%Z /\
  (0%Z <= (offset p))%Z /\ (((offset p) + n)%Z <= (m (base p)))%Z.

(* Why3 assumption *)
Definition valid_rd (m:Numbers.BinNums.Z -> Numbers.BinNums.Z) (p:addr)
    (n:Numbers.BinNums.Z) : Prop :=
  (0%Z < n)%Z ->
  ~ (0%Z = (base p)) /\
  (0%Z <= (offset p))%Z /\ (((offset p) + n)%Z <= (m (base p)))%Z.

(* Why3 assumption *)
Definition valid_obj (m:Numbers.BinNums.Z -> Numbers.BinNums.Z) (p:addr)
    (n:Numbers.BinNums.Z) : Prop :=
  (0%Z < n)%Z ->
  (p = null) \/
  ~ (0%Z = (base p)) /\
  (0%Z <= (offset p))%Z /\ (((offset p) + n)%Z <= (1%Z + (m (base p)))%Z)%Z.

(* Why3 assumption *)
Definition invalid (m:Numbers.BinNums.Z -> Numbers.BinNums.Z) (p:addr)
    (n:Numbers.BinNums.Z) : Prop :=
  (n <= 0%Z)%Z \/
  ((base p) = 0%Z) \/
  ((m (base p)) <= (offset p))%Z \/ (((offset p) + n)%Z <= 0%Z)%Z.

Axiom valid_rw_rd :
  forall (m:Numbers.BinNums.Z -> Numbers.BinNums.Z), forall (p:addr),
  forall (n:Numbers.BinNums.Z), valid_rw m p n -> valid_rd m p n.

Axiom valid_string :
  forall (m:Numbers.BinNums.Z -> Numbers.BinNums.Z), forall (p:addr),
  ((base p) < 0%Z)%Z ->
  (0%Z <= (offset p))%Z /\ ((offset p) < (m (base p)))%Z ->
  valid_rd m p 1%Z /\ ~ valid_rw m p 1%Z.

Axiom separated_1 :
  forall (p:addr) (q:addr),
  forall (a:Numbers.BinNums.Z) (b:Numbers.BinNums.Z) (i:Numbers.BinNums.Z)
    (j:Numbers.BinNums.Z),
  separated p a q b -> ((offset p) <= i)%Z /\ (i < ((offset p) + a)%Z)%Z ->
  ((offset q) <= j)%Z /\ (j < ((offset q) + b)%Z)%Z ->
  ~ ((addr'mk (base p) i) = (addr'mk (base q) j)).

Parameter region: Numbers.BinNums.Z -> Numbers.BinNums.Z.

Parameter linked: (Numbers.BinNums.Z -> Numbers.BinNums.Z) -> Prop.

Parameter sconst: (addr -> Numbers.BinNums.Z) -> Prop.

(* Why3 assumption *)
Definition framed (m:addr -> addr) : Prop :=
  forall (p:addr), ((region (base p)) <= 0%Z)%Z ->
  ((region (base (m p))) <= 0%Z)%Z.

Axiom separated_included :
  forall (p:addr) (q:addr),
  forall (a:Numbers.BinNums.Z) (b:Numbers.BinNums.Z), (0%Z < a)%Z ->
  (0%Z < b)%Z -> separated p a q b -> ~ included p a q b.

Axiom included_trans :
  forall (p:addr) (q:addr) (r:addr),
  forall (a:Numbers.BinNums.Z) (b:Numbers.BinNums.Z) (c:Numbers.BinNums.Z),
  included p a q b -> included q b r c -> included p a r c.

Axiom separated_trans :
  forall (p:addr) (q:addr) (r:addr),
  forall (a:Numbers.BinNums.Z) (b:Numbers.BinNums.Z) (c:Numbers.BinNums.Z),
  included p a q b -> separated q b r c -> separated p a r c.

Axiom separated_sym :
  forall (p:addr) (q:addr),
  forall (a:Numbers.BinNums.Z) (b:Numbers.BinNums.Z),
  separated p a q b <-> separated q b p a.

Axiom eqmem_included :
  forall {a:Type} {a_WT:WhyType a},
  forall (m1:addr -> a) (m2:addr -> a), forall (p:addr) (q:addr),
  forall (a1:Numbers.BinNums.Z) (b:Numbers.BinNums.Z), included p a1 q b ->
  eqmem m1 m2 q b -> eqmem m1 m2 p a1.

Axiom eqmem_sym :
  forall {a:Type} {a_WT:WhyType a},
  forall (m1:addr -> a) (m2:addr -> a), forall (p:addr),
  forall (a1:Numbers.BinNums.Z), eqmem m1 m2 p a1 -> eqmem m2 m1 p a1.

Axiom havoc_access :
  forall {a:Type} {a_WT:WhyType a},
  forall (m0:addr -> a) (m1:addr -> a), forall (q:addr) (p:addr),
  forall (a1:Numbers.BinNums.Z),
  (separated q 1%Z p a1 -> ((havoc m0 m1 p a1 q) = (m1 q))) /\
  (~ separated q 1%Z p a1 -> ((havoc m0 m1 p a1 q) = (m0 q))).

Parameter cinits: (addr -> Init.Datatypes.bool) -> Prop.

(* Why3 assumption *)
Definition is_init_range (m:addr -> Init.Datatypes.bool) (p:addr)
    (l:Numbers.BinNums.Z) : Prop :=
  forall (i:Numbers.BinNums.Z), (0%Z <= i)%Z /\ (i < l)%Z ->
  ((m (shift p i)) = Init.Datatypes.true).

Parameter set_init:
  (addr -> Init.Datatypes.bool) -> addr -> Numbers.BinNums.Z ->
  addr -> Init.Datatypes.bool.

Axiom set_init_access :
  forall (m:addr -> Init.Datatypes.bool), forall (q:addr) (p:addr),
  forall (a:Numbers.BinNums.Z),
  (separated q 1%Z p a -> ((set_init m p a q) = (m q))) /\
  (~ separated q 1%Z p a -> ((set_init m p a q) = Init.Datatypes.true)).

(* Why3 assumption *)
Definition monotonic_init (m1:addr -> Init.Datatypes.bool)
    (m2:addr -> Init.Datatypes.bool) : Prop :=
  forall (p:addr), ((m1 p) = Init.Datatypes.true) ->
  ((m2 p) = Init.Datatypes.true).

Parameter int_of_addr: addr -> Numbers.BinNums.Z.

Parameter addr_of_int: Numbers.BinNums.Z -> addr.

Axiom table : Type.
Parameter table_WhyType : WhyType table.
Existing Instance table_WhyType.

Parameter table_of_base: Numbers.BinNums.Z -> table.

Parameter table_to_offset: table -> Numbers.BinNums.Z -> Numbers.BinNums.Z.

Axiom table_to_offset_zero :
  forall (t:table), ((table_to_offset t 0%Z) = 0%Z).

Axiom table_to_offset_monotonic :
  forall (t:table), forall (o1:Numbers.BinNums.Z) (o2:Numbers.BinNums.Z),
  (o1 <= o2)%Z <-> ((table_to_offset t o1) <= (table_to_offset t o2))%Z.

Axiom int_of_addr_bijection :
  forall (a:Numbers.BinNums.Z), ((int_of_addr (addr_of_int a)) = a).

Axiom addr_of_int_bijection :
  forall (p:addr), ((addr_of_int (int_of_addr p)) = p).

Axiom addr_of_null : ((int_of_addr null) = 0%Z).

Parameter L_link_pos:
  Numbers.BinNums.Z -> Numbers.BinNums.Z -> Numbers.BinNums.Z ->
  Numbers.BinNums.Z.

Axiom L_link_pos'def :
  forall (a:Numbers.BinNums.Z) (b:Numbers.BinNums.Z) (m:Numbers.BinNums.Z),
  ((a < b)%Z -> ((L_link_pos a b m) = (b + (a * m)%Z)%Z)) /\
  (~ (a < b)%Z -> ((L_link_pos a b m) = (a + (b * m)%Z)%Z)).

(* Why3 assumption *)
Definition P_same_alpha (Mf64:addr -> Reals.Rdefinitions.R)
    (Mf641:addr -> Reals.Rdefinitions.R) (alpha:addr) (m:Numbers.BinNums.Z) :
    Prop :=
  forall (i:Numbers.BinNums.Z) (i1:Numbers.BinNums.Z),
  let a := shift alpha (L_link_pos i i1 m) in
  (0%Z <= i)%Z -> (i < m)%Z -> (0%Z <= i1)%Z -> (i1 < m)%Z ->
  ((Mf64 a) = (Mf641 a)).

(* Why3 assumption *)
Definition P_same_members (Mint:addr -> Numbers.BinNums.Z)
    (Mint1:addr -> Numbers.BinNums.Z) (rep:addr) (m:Numbers.BinNums.Z)
    (a:Numbers.BinNums.Z) : Prop :=
  forall (i:Numbers.BinNums.Z),
  let a1 := shift rep i in
  (0%Z <= i)%Z -> (i < m)%Z -> ((Mint a1) = a) <-> ((Mint1 a1) = a).

(* Why3 assumption *)
Definition P_clink (Mf64:addr -> Reals.Rdefinitions.R)
    (Mint:addr -> Numbers.BinNums.Z) (Lk:addr) (alpha:addr) (rep:addr)
    (m:Numbers.BinNums.Z) (a:Numbers.BinNums.Z) (b:Numbers.BinNums.Z) : Prop :=
  let r := Mf64 (shift Lk (L_link_pos a b m)) in
  (forall (i:Numbers.BinNums.Z) (i1:Numbers.BinNums.Z),
   ((Mint (shift rep i)) = a) -> ((Mint (shift rep i1)) = b) ->
   (0%Z <= i)%Z -> (i < m)%Z -> (0%Z <= i1)%Z -> (i1 < m)%Z ->
   (r <= (Mf64 (shift alpha (L_link_pos i i1 m))))%R) /\
  (exists i:Numbers.BinNums.Z, exists i1:Numbers.BinNums.Z,
   (((((((Mint (shift rep i)) = a) /\ ((Mint (shift rep i1)) = b)) /\
       ((Mf64 (shift alpha (L_link_pos i i1 m))) = r)) /\
      (0%Z <= i)%Z) /\
     (i < m)%Z) /\
    (0%Z <= i1)%Z) /\
   (i1 < m)%Z).

(* Why3 assumption *)
Definition P_lw_min (Mf64:addr -> Reals.Rdefinitions.R)
    (Mf641:addr -> Reals.Rdefinitions.R) (Lk:addr) (Lo:addr)
    (m:Numbers.BinNums.Z) (A:Numbers.BinNums.Z) (B:Numbers.BinNums.Z)
    (C:Numbers.BinNums.Z) : Prop :=
  let x := L_link_pos A C m in
  let r := Mf64 (shift Lk x) in
  let r1 := Mf641 (shift Lo x) in
  let r2 := Mf641 (shift Lo (L_link_pos B C m)) in
  ((r <= r1)%R /\ (r <= r2)%R) /\ ((r = r1) \/ (r = r2)).

Axiom Q_clink_merge :
  forall (Mf64:addr -> Reals.Rdefinitions.R) (Mint:addr -> Numbers.BinNums.Z)
    (Mf641:addr -> Reals.Rdefinitions.R) (Mint1:addr -> Numbers.BinNums.Z)
    (Lk:addr) (alpha:addr) (rep:addr) (m:Numbers.BinNums.Z)
    (A:Numbers.BinNums.Z) (B:Numbers.BinNums.Z) (C:Numbers.BinNums.Z),
  P_same_alpha Mf64 Mf641 alpha m -> P_same_members Mint Mint1 rep m C ->
  P_clink Mf641 Mint1 Lk alpha rep m A C ->
  P_clink Mf641 Mint1 Lk alpha rep m B C ->
  P_lw_min Mf64 Mf641 Lk Lk m A B C ->
  (forall (i:Numbers.BinNums.Z),
   let a := shift rep i in
   let x := Mint1 a in
   (0%Z <= i)%Z -> (i < m)%Z -> (x = A) \/ (x = B) <-> ((Mint a) = A)) ->
  P_clink Mf64 Mint Lk alpha rep m A C.

Axiom Q_clink_frame :
  forall (Mf64:addr -> Reals.Rdefinitions.R) (Mint:addr -> Numbers.BinNums.Z)
    (Mf641:addr -> Reals.Rdefinitions.R) (Mint1:addr -> Numbers.BinNums.Z)
    (Lk:addr) (alpha:addr) (rep:addr) (m:Numbers.BinNums.Z)
    (a:Numbers.BinNums.Z) (b:Numbers.BinNums.Z),
  let a1 := shift Lk (L_link_pos a b m) in
  ((Mf641 a1) = (Mf64 a1)) -> P_same_alpha Mf64 Mf641 alpha m ->
  P_same_members Mint Mint1 rep m a -> P_same_members Mint Mint1 rep m b ->
  P_clink Mf641 Mint1 Lk alpha rep m a b ->
  P_clink Mf64 Mint Lk alpha rep m a b.

Axiom Q_clink_sym :
  forall (Mf64:addr -> Reals.Rdefinitions.R) (Mint:addr -> Numbers.BinNums.Z)
    (Lk:addr) (alpha:addr) (rep:addr) (m:Numbers.BinNums.Z)
    (a:Numbers.BinNums.Z) (b:Numbers.BinNums.Z),
  P_clink Mf64 Mint Lk alpha rep m a b ->
  P_clink Mf64 Mint Lk alpha rep m b a.

Axiom Q_link_pos_inj :
  forall (a1:Numbers.BinNums.Z) (b1:Numbers.BinNums.Z) (a2:Numbers.BinNums.Z)
    (b2:Numbers.BinNums.Z) (m:Numbers.BinNums.Z),
  ~ (b1 = a1) -> ~ (b2 = a2) ->
  ((L_link_pos a2 b2 m) = (L_link_pos a1 b1 m)) -> (0%Z <= a1)%Z ->
  (a1 < m)%Z -> (0%Z <= a2)%Z -> (a2 < m)%Z -> (0%Z <= b1)%Z -> (b1 < m)%Z ->
  (0%Z <= b2)%Z -> (b2 < m)%Z ->
  (a2 = a1) /\ (b2 = b1) \/ (b1 = a2) /\ (b2 = a1).

Axiom Q_link_pos_ends :
  forall (a1:Numbers.BinNums.Z) (b1:Numbers.BinNums.Z) (a2:Numbers.BinNums.Z)
    (b2:Numbers.BinNums.Z) (m:Numbers.BinNums.Z),
  ((L_link_pos a2 b2 m) = (L_link_pos a1 b1 m)) -> (0%Z <= a1)%Z ->
  (a1 < m)%Z -> (0%Z <= a2)%Z -> (a2 < m)%Z -> (0%Z <= b1)%Z -> (b1 < m)%Z ->
  (0%Z <= b2)%Z -> (b2 < m)%Z ->
  (((a2 < b2)%Z ->
    ((a1 < b1)%Z -> (a2 = a1)) /\ (~ (a1 < b1)%Z -> (a2 = b1))) /\
   (~ (a2 < b2)%Z ->
    ((a1 < b1)%Z -> (b2 = a1)) /\ (~ (a1 < b1)%Z -> (b2 = b1)))) /\
  ((a2 < b2)%Z -> ((a1 < b1)%Z -> (b2 = b1)) /\ (~ (a1 < b1)%Z -> (b2 = a1))) /\
  (~ (a2 < b2)%Z ->
   ((a1 < b1)%Z -> (a2 = b1)) /\ (~ (a1 < b1)%Z -> (a2 = a1))).

Axiom Q_link_pos_in :
  forall (a:Numbers.BinNums.Z) (b:Numbers.BinNums.Z) (m:Numbers.BinNums.Z),
  let x := L_link_pos a b m in
  (0%Z <= a)%Z -> (a < m)%Z -> (0%Z <= b)%Z -> (b < m)%Z ->
  (0%Z <= x)%Z /\ (x < (m * m)%Z)%Z.

Axiom Q_link_pos_rows :
  forall (a:Numbers.BinNums.Z) (b:Numbers.BinNums.Z) (m:Numbers.BinNums.Z),
  ((a < b)%Z ->
   ((a < b)%Z -> (((m * a)%Z + b)%Z = (L_link_pos a b m))) /\
   (~ (a < b)%Z -> (((m * a)%Z + a)%Z = (L_link_pos a b m)))) /\
  (~ (a < b)%Z ->
   ((a < b)%Z -> (((m * b)%Z + b)%Z = (L_link_pos a b m))) /\
   (~ (a < b)%Z -> (((m * b)%Z + a)%Z = (L_link_pos a b m)))).

Axiom Q_link_pos_sym :
  forall (a:Numbers.BinNums.Z) (b:Numbers.BinNums.Z) (m:Numbers.BinNums.Z),
  ((L_link_pos b a m) = (L_link_pos a b m)).

Axiom Q_row_unique :
  forall (x1:Numbers.BinNums.Z) (y1:Numbers.BinNums.Z) (x2:Numbers.BinNums.Z)
    (y2:Numbers.BinNums.Z) (m:Numbers.BinNums.Z),
  ((L_link_pos x2 y2 m) = (L_link_pos x1 y1 m)) -> (0%Z <= x1)%Z ->
  (x1 < y1)%Z -> (0%Z <= x2)%Z -> (x2 < y2)%Z -> (y1 < m)%Z -> (y2 < m)%Z ->
  (x2 = x1) /\ (y2 = y1).

Axiom Q_square_fits_rank :
  forall (m:Numbers.BinNums.Z), (0%Z <= m)%Z ->
  ((m * m)%Z <= 18446744073709551615%Z)%Z -> (m <= 4294967295%Z)%Z.

Parameter L_edge_pos:
  Numbers.BinNums.Z -> Numbers.BinNums.Z -> Numbers.BinNums.Z ->
  Numbers.BinNums.Z.

Axiom L_edge_pos'def :
  forall (a:Numbers.BinNums.Z) (b:Numbers.BinNums.Z) (m:Numbers.BinNums.Z),
  ((a < b)%Z -> ((L_edge_pos a b m) = (b + (a * m)%Z)%Z)) /\
  (~ (a < b)%Z -> ((L_edge_pos a b m) = (a + (b * m)%Z)%Z)).

Axiom Q_edge_pos_sorted :
  forall (a:Numbers.BinNums.Z) (b:Numbers.BinNums.Z) (m:Numbers.BinNums.Z),
  ((a < b)%Z -> ~ (a < b)%Z -> ((L_edge_pos a a m) = (L_edge_pos a b m))) /\
  (~ (a < b)%Z ->
   ((a < b)%Z -> ((L_edge_pos b b m) = (L_edge_pos a b m))) /\
   (~ (a < b)%Z -> ((L_edge_pos b a m) = (L_edge_pos a b m)))).

(* Why3 assumption *)
Definition P_prim_perm (prim_order:Numbers.BinNums.Z -> Numbers.BinNums.Z)
    (prim_slot:Numbers.BinNums.Z -> Numbers.BinNums.Z)
    (m:Numbers.BinNums.Z) : Prop :=
  (forall (i:Numbers.BinNums.Z),
   let x := prim_slot i in
   (0%Z <= i)%Z -> (i < m)%Z ->
   (((prim_order x) = i) /\ (0%Z <= x)%Z) /\ (x < m)%Z) /\
  (forall (i:Numbers.BinNums.Z),
   let x := prim_order i in
   (0%Z <= i)%Z -> (i < m)%Z ->
   (((prim_slot x) = i) /\ (0%Z <= x)%Z) /\ (x < m)%Z).

(* Why3 assumption *)
Definition P_ranked_tree (Mint:addr -> Numbers.BinNums.Z)
    (prim_rank:Numbers.BinNums.Z -> Numbers.BinNums.Z) (parent:addr)
    (m:Numbers.BinNums.Z) : Prop :=
  (forall (i:Numbers.BinNums.Z),
   let x := prim_rank i in
   (0%Z <= i)%Z -> (i < m)%Z -> (0%Z <= x)%Z /\ (x < m)%Z) /\
  (forall (i:Numbers.BinNums.Z),
   let x := Mint (shift parent i) in
   (0%Z < i)%Z -> (i < m)%Z -> (x < m)%Z /\ ((prim_rank x) < (prim_rank i))%Z).

(* Why3 assumption *)
Definition P_ascending_subset (Mint:addr -> Numbers.BinNums.Z) (ids:addr)
    (m:Numbers.BinNums.Z) (N:Numbers.BinNums.Z) : Prop :=
  (forall (i:Numbers.BinNums.Z), (0%Z <= i)%Z -> (i < m)%Z ->
   ((Mint (shift ids i)) < N)%Z) /\
  (forall (i:Numbers.BinNums.Z), (0%Z < i)%Z -> (i < m)%Z ->
   ((Mint (shift ids ((-1%Z)%Z + i)%Z)) < (Mint (shift ids i)))%Z).

(* Why3 assumption *)
Definition P_prim_joined (Mint:addr -> Numbers.BinNums.Z)
    (prim_slot:Numbers.BinNums.Z -> Numbers.BinNums.Z) (in_tree:addr)
    (m:Numbers.BinNums.Z) (added:Numbers.BinNums.Z) : Prop :=
  forall (i:Numbers.BinNums.Z), (0%Z <= i)%Z -> (i < m)%Z ->
  ((prim_slot i) < added)%Z <-> ~ ((Mint (shift in_tree i)) = 0%Z).

(* Why3 assumption *)
Definition P_rep_pair (Mint:addr -> Numbers.BinNums.Z) (rep:addr)
    (m:Numbers.BinNums.Z) (a:Numbers.BinNums.Z) (b:Numbers.BinNums.Z) : Prop :=
  (((((Mint (shift rep a)) = a) /\ ((Mint (shift rep b)) = b)) /\
    (0%Z <= a)%Z) /\
   (a < b)%Z) /\
  (b < m)%Z.

(* Why3 assumption *)
Inductive P_in_subtree: (addr -> Numbers.BinNums.Z) -> addr ->
  Numbers.BinNums.Z -> Numbers.BinNums.Z -> Prop :=
  | Q_subtree_top :
      forall (Mint:addr -> Numbers.BinNums.Z) (parent:addr)
        (c:Numbers.BinNums.Z),
      P_in_subtree Mint parent c c
  | Q_subtree_below :
      forall (Mint:addr -> Numbers.BinNums.Z) (parent:addr)
        (c:Numbers.BinNums.Z) (v:Numbers.BinNums.Z),
      ~ (v = 0%Z) -> ~ (v = c) ->
      P_in_subtree Mint parent c (Mint (shift parent v)) ->
      P_in_subtree Mint parent c v.

(* Why3 assumption *)
Definition P_subtree_sides (Mint:addr -> Numbers.BinNums.Z)
    (Mint1:addr -> Numbers.BinNums.Z) (parent:addr) (m:Numbers.BinNums.Z)
    (c:Numbers.BinNums.Z) (side:addr) : Prop :=
  forall (i:Numbers.BinNums.Z), (0%Z <= i)%Z -> (i < m)%Z ->
  P_in_subtree Mint parent c i <-> ((Mint1 (shift side i)) = 1%Z).

(* Why3 assumption *)
Definition P_edge_first (Mf64:addr -> Reals.Rdefinitions.R) (alpha:addr)
    (m:Numbers.BinNums.Z) (a1:Numbers.BinNums.Z) (b1:Numbers.BinNums.Z)
    (a2:Numbers.BinNums.Z) (b2:Numbers.BinNums.Z) : Prop :=
  let x := L_edge_pos a2 b2 m in
  let r := Mf64 (shift alpha x) in
  let x1 := L_edge_pos a1 b1 m in
  let r1 := Mf64 (shift alpha x1) in (r < r1)%R \/ (r = r1) /\ (x1 < x)%Z.

(* Why3 assumption *)
Definition P_last_edge (Mf64:addr -> Reals.Rdefinitions.R)
    (Mint:addr -> Numbers.BinNums.Z) (alpha:addr) (m:Numbers.BinNums.Z)
    (parent:addr) (c:Numbers.BinNums.Z) : Prop :=
  forall (i:Numbers.BinNums.Z), (0%Z < i)%Z -> (i < m)%Z ->
  ~ P_edge_first Mf64 alpha m (Mint (shift parent c)) c
    (Mint (shift parent i)) i.

(* Why3 assumption *)
Definition P_complete_links (Mf64:addr -> Reals.Rdefinitions.R)
    (Mint:addr -> Numbers.BinNums.Z) (Lk:addr) (alpha:addr) (rep:addr)
    (m:Numbers.BinNums.Z) : Prop :=
  forall (i:Numbers.BinNums.Z) (i1:Numbers.BinNums.Z), ~ (i1 = i) ->
  ((Mint (shift rep i)) = i) -> ((Mint (shift rep i1)) = i1) ->
  (0%Z <= i)%Z -> (i < m)%Z -> (0%Z <= i1)%Z -> (i1 < m)%Z ->
  P_clink Mf64 Mint Lk alpha rep m i i1.

(* Why3 assumption *)
Definition P_best_link (Mf64:addr -> Reals.Rdefinitions.R)
    (Mint:addr -> Numbers.BinNums.Z) (Mint1:addr -> Numbers.BinNums.Z)
    (alpha:addr) (m:Numbers.BinNums.Z) (in_tree:addr) (link:addr)
    (v:Numbers.BinNums.Z) : Prop :=
  forall (i:Numbers.BinNums.Z), ~ ((Mint1 (shift in_tree i)) = 0%Z) ->
  (0%Z <= i)%Z -> (i < m)%Z ->
  ~ P_edge_first Mf64 alpha m i v (Mint (shift link v)) v.

(* Why3 assumption *)
Definition P_prim_step (Mf64:addr -> Reals.Rdefinitions.R)
    (Mint:addr -> Numbers.BinNums.Z)
    (prim_order:Numbers.BinNums.Z -> Numbers.BinNums.Z)
    (prim_slot:Numbers.BinNums.Z -> Numbers.BinNums.Z) (alpha:addr)
    (m:Numbers.BinNums.Z) (parent:addr) (k:Numbers.BinNums.Z) : Prop :=
  let x := prim_order k in
  let x1 := Mint (shift parent x) in
  ((prim_slot x1) < k)%Z /\
  (forall (i:Numbers.BinNums.Z) (i1:Numbers.BinNums.Z), (0%Z <= i)%Z ->
   (i < m)%Z -> (0%Z <= i1)%Z -> (i1 < m)%Z -> ((prim_slot i) < k)%Z ->
   (k <= (prim_slot i1))%Z -> ~ P_edge_first Mf64 alpha m i i1 x1 x).

(* Why3 assumption *)
Definition P_prim_cuts (Mf64:addr -> Reals.Rdefinitions.R)
    (Mint:addr -> Numbers.BinNums.Z)
    (prim_order:Numbers.BinNums.Z -> Numbers.BinNums.Z)
    (prim_slot:Numbers.BinNums.Z -> Numbers.BinNums.Z) (alpha:addr)
    (m:Numbers.BinNums.Z) (parent:addr) (added:Numbers.BinNums.Z) : Prop :=
  ((prim_slot 0%Z) = 0%Z) /\
  (forall (i:Numbers.BinNums.Z), (0%Z < i)%Z -> (i < added)%Z ->
   P_prim_step Mf64 Mint prim_order prim_slot alpha m parent i).

(* Why3 assumption *)
Definition P_pair_before (a1:Numbers.BinNums.Z) (b1:Numbers.BinNums.Z)
    (a2:Numbers.BinNums.Z) (b2:Numbers.BinNums.Z) : Prop :=
  (a1 < a2)%Z \/ (a2 = a1) /\ (b1 < b2)%Z.

(* Why3 assumption *)
Definition P_merge_best (Mf64:addr -> Reals.Rdefinitions.R)
    (Mint:addr -> Numbers.BinNums.Z) (Lk:addr) (rep:addr)
    (m:Numbers.BinNums.Z) (A:Numbers.BinNums.Z) (B:Numbers.BinNums.Z)
    (best:Reals.Rdefinitions.R) (bA:Numbers.BinNums.Z)
    (bB:Numbers.BinNums.Z) : Prop :=
  (forall (i:Numbers.BinNums.Z) (i1:Numbers.BinNums.Z),
   P_pair_before i i1 bA bB -> P_rep_pair Mint rep m i i1 ->
   ((Mf64 (shift Lk (i1 + (i * m)%Z)%Z)) < best)%R) /\
  (forall (i:Numbers.BinNums.Z) (i1:Numbers.BinNums.Z),
   P_pair_before i i1 A B -> P_rep_pair Mint rep m i i1 ->
   ((Mf64 (shift Lk (i1 + (i * m)%Z)%Z)) <= best)%R).

