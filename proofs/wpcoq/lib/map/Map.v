(* SPDX-License-Identifier: GPL-3.0-or-later *)
(* Why3's theory map.Map, required by name; empty (proofs/wpcoq/README.md). *)
