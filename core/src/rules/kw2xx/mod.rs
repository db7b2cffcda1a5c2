//! KW2xx: provisioning (the pod stays Pending).

use super::Rule;

pub(crate) mod eni_limits;
mod kw200_karpenter_not_acting;
pub(crate) use kw200_karpenter_not_acting::standby_lease;
mod kw201_no_instance_type_fits;
mod kw202_no_offering_in_zone;
mod kw203_requirements_incompatible;
mod kw204_taint_not_tolerated;
mod kw205_nodepool_limits_reached;
mod kw206_topology_spread_unsatisfiable;
mod kw207_nodepool_filtered_all_types;
pub(crate) mod kw208_no_ready_nodepool;
mod kw209_pod_ignored_by_karpenter;
mod kw210_security_groups_for_pods_delay;
mod kw211_in_tree_ebs_plugin;
mod kw212_volume_attach_limit;
mod kw213_cni_ip_assignment_failed;
mod kw214_subnet_ip_exhausted;
mod kw215_insufficient_capacity;
mod kw216_spot_only_nodepool;
mod kw217_hostport_conflict;
pub(crate) mod scheduling;

pub const RULES: &[Rule] = &[
    kw200_karpenter_not_acting::RULE,
    kw201_no_instance_type_fits::RULE,
    kw202_no_offering_in_zone::RULE,
    kw203_requirements_incompatible::RULE,
    kw204_taint_not_tolerated::RULE,
    kw205_nodepool_limits_reached::RULE,
    kw206_topology_spread_unsatisfiable::RULE,
    kw207_nodepool_filtered_all_types::RULE,
    kw208_no_ready_nodepool::RULE,
    kw209_pod_ignored_by_karpenter::RULE,
    kw210_security_groups_for_pods_delay::RULE,
    kw211_in_tree_ebs_plugin::RULE,
    kw212_volume_attach_limit::RULE,
    kw213_cni_ip_assignment_failed::RULE,
    kw214_subnet_ip_exhausted::RULE,
    kw215_insufficient_capacity::RULE,
    kw216_spot_only_nodepool::RULE,
    kw217_hostport_conflict::RULE,
];
