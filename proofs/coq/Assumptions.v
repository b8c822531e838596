(* proofs/coq/Assumptions.v: what every theorem of proofs/coq rests on.
   The Makefile compiles this file and fails unless each axiom printed below
   is one of the standard library's own for the reals (and the excluded
   middle that Coquelicot's derivatives use): no unfinished proof and no
   assumption of our own.  ClusterJoint.v's theorems may also rest on the
   ACSL logic function edge_pos as WP's translation declares it
   (L_edge_pos and its equation L_edge_pos'def; see that file). *)
From Pflref Require Import PFedMeInner ProxQuad Sampling Pflego Variance
  Bipartition PrimControl ClusterJoint SamplerJoint Selection.

Print Assumptions prox_minimises.
Print Assumptions inner_closed_form.
Print Assumptions window_iff.
Print Assumptions inner_converges.
Print Assumptions inner_no_contraction.
Print Assumptions envelope_gradient.
Print Assumptions line8_is_envelope_step.
Print Assumptions ProxQuad.prox_gap.
Print Assumptions ProxQuad.prox_minimises_vec.
Print Assumptions ProxQuad.prox_unique.
Print Assumptions ProxQuad.prox_point_c_form.
Print Assumptions ProxQuad.cg_residual.
Print Assumptions ProxQuad.prox_point_stop.
Print Assumptions ProxQuad.inner_error.
Print Assumptions ProxQuad.form_cauchy_schwarz.
Print Assumptions ProxQuad.cocoercive.
Print Assumptions ProxQuad.inner_contracts.
Print Assumptions ProxQuad.inner_converges_vec.
Print Assumptions ProxQuad.inner_window_sharp.
Print Assumptions ProxQuad.inner_cauchy.
Print Assumptions ProxQuad.prox_point_exists.
Print Assumptions ProxQuad.prox_map_exists.
Print Assumptions ProxQuad.envelope_expansion.
Print Assumptions ProxQuad.envelope_gradient_vec.
Print Assumptions ProxQuad.line8_is_envelope_step_vec.
Print Assumptions ProxQuad.prox_minimises_convex.
Print Assumptions ProxQuad.envelope_expansion_convex.
Print Assumptions ProxQuad.envelope_gradient_convex.
Print Assumptions card_containing.
Print Assumptions inclusion_probability.
Print Assumptions unbiased.
Print Assumptions without_alpha.
Print Assumptions biased_unless_equal.
Print Assumptions unbiased_head.
Print Assumptions unbiased_vec.
Print Assumptions unbiased_head_vec.
Print Assumptions proposition1.
Print Assumptions card_containing2.
Print Assumptions count_pair.
Print Assumptions sample_mean_unbiased.
Print Assumptions sample_mean_variance.
Print Assumptions sample_mean_unbiased_vec.
Print Assumptions sample_mean_variance_vec.
Print Assumptions crossing_edge.
Print Assumptions cross_after.
Print Assumptions bipartition_optimal.
Print Assumptions subtree_components.
Print Assumptions first_across_kruskal.
Print Assumptions first_across_exchange.
Print Assumptions prim_tree_kruskal.
Print Assumptions kruskal_acyclic.
Print Assumptions prim_spans.
Print Assumptions prim_equals_kruskal.
Print Assumptions before_of_positions.
Print Assumptions tree_exchange.
Print Assumptions prim_is_kruskal.
Print Assumptions prim_maximal.
Print Assumptions prim_bipartition_optimal.
Print Assumptions edge_pos_sym.
Print Assumptions edge_pos_inj.
Print Assumptions perm_order_inj.
Print Assumptions perm_order_onto.
Print Assumptions joined_cut.
Print Assumptions kruskal_run_joins.
Print Assumptions control_hypotheses.
Print Assumptions control_cut_fails.
Print Assumptions control_correct_cut.
Print Assumptions control_not_kruskal.
Print Assumptions control_not_maximal.
Print Assumptions control_cut_hypotheses.
Print Assumptions control_not_optimal.
Print Assumptions control_kruskal_refutes.
Print Assumptions control_maximal_refutes.
Print Assumptions control_optimal_refutes.
Print Assumptions ClusterJoint.L_edge_pos_exists.
Print Assumptions ClusterJoint.edge_pos_joint.
Print Assumptions ClusterJoint.edge_first_joint.
Print Assumptions ClusterJoint.last_edge_joint.
Print Assumptions ClusterJoint.ranked_tree_joint.
Print Assumptions ClusterJoint.in_subtree_joint.
Print Assumptions ClusterJoint.subtree_sides_joint.
Print Assumptions ClusterJoint.prim_perm_joint.
Print Assumptions ClusterJoint.prim_joined_joint.
Print Assumptions ClusterJoint.prim_joined_cut.
Print Assumptions ClusterJoint.best_link_joint.
Print Assumptions ClusterJoint.sides_forest.
Print Assumptions ClusterJoint.sides_components.
Print Assumptions ClusterJoint.prim_step_joint.
Print Assumptions ClusterJoint.bipartition_joint.
Print Assumptions SamplerJoint.ascending_subset_joint.
Print Assumptions SamplerJoint.ascending_increasing.
Print Assumptions SamplerJoint.chosen_is_draw.
Print Assumptions Selection.selection_uniform.
Print Assumptions Selection.selection_exact.
Print Assumptions Selection.tail_outside.
Print Assumptions Selection.fisher_yates_prefix_uniform.
