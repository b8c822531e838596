(* SPDX-License-Identifier: GPL-3.0-or-later *)
(* Why3's theory real.RealInfix, required by name; empty (proofs/wpcoq/README.md). *)
