(* SPDX-License-Identifier: GPL-3.0-or-later *)
(* Why3's theory HighOrd, required by name; empty (proofs/wpcoq/README.md). *)
