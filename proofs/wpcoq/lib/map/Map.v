(* SPDX-License-Identifier: GPL-3.0-or-later *)
(* proofs/wpcoq/lib/map/Map.v: Why3's theory `map.Map`, which a file
   printed by Why3's Coq driver requires by name (proofs/wpcoq/README.md).
   Empty: the driver (coq-common.gen) prints every symbol of the theory
   that the exported definitions use as Coq's own (Z, R and their
   operations), so nothing needs defining here.  Should a later export use
   one that is not, the generated file stops compiling and names it. *)
