//! KW2xx: provisioning (the pod stays Pending).

use super::{Remediation, Rule};
use crate::facts::Facts;

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

/// Whether a step only runs `kubectl get <kind> <name> -o jsonpath='...'` for fields the input
/// already shows of that object in full (its YAML, JSON or describe; not a table row): asking
/// the user to read them again adds nothing. Compound commands and fields not known here count
/// as not shown.
pub(crate) fn reads_only_shown(facts: &Facts, step: &Remediation) -> bool {
    let Some(command) = step.command.as_deref() else {
        return false;
    };
    let Some(path) = command
        .split_once(" -o jsonpath='")
        .and_then(|(_, p)| p.strip_suffix('\''))
    else {
        return false;
    };
    let words: Vec<&str> = command.split_whitespace().take(4).collect();
    let ["kubectl", "get", kind, name] = words.as_slice() else {
        return false;
    };
    if path.contains(['\'', '|', ';', '$', '&']) || name.starts_with('-') {
        return false;
    }
    // The absolute fields read: `{.a.b}` and `{range .a.b[*]}` (fields inside a range are
    // relative to it).
    let mut fields: Vec<&str> = Vec::new();
    let mut depth = 0usize;
    for part in path
        .split('{')
        .filter_map(|p| p.split_once('}').map(|(f, _)| f.trim()))
    {
        if part == "end" {
            depth = depth.saturating_sub(1);
        } else if let Some(f) = part.strip_prefix("range ") {
            if depth == 0 {
                fields.push(f.trim());
            }
            depth += 1;
        } else if depth == 0 && part.starts_with('.') {
            fields.push(part);
        }
    }
    let shown = |f: &str| -> bool {
        let has = |prefix: &str| f.starts_with(prefix);
        match *kind {
            "nodepool" | "provisioner" => facts.nodepool(name).is_some_and(|p| {
                !p.meta.from_table
                    && ((has(".spec.template.spec.requirements") || has(".spec.requirements"))
                        && !p.requirements.is_empty()
                        || has(".status.conditions") && !p.conditions.is_empty()
                        || has(".spec.limits") && !p.limits.is_empty()
                        || has(".status.resources") && !p.usage.is_empty()
                        || has(".spec.template.spec.nodeClassRef") && p.nodeclass_ref.is_some())
            }),
            "ec2nodeclass" | "awsnodetemplate" => facts.nodeclass(name).is_some_and(|c| {
                !c.meta.from_table
                    && (has(".status.conditions") && !c.conditions.is_empty()
                        || has(".spec.blockDeviceMappings") && !c.block_device_mappings.is_empty()
                        || has(".status.subnets") && !c.status_subnets.is_empty())
            }),
            "nodeclaim" | "machine" | "machines.karpenter.sh" => facts.nodeclaims.iter().any(|c| {
                c.meta.name == *name
                    && !c.meta.from_table
                    && (has(".status.conditions") && !c.conditions.is_empty()
                        || has(".spec.requirements") && !c.requirements.is_empty())
            }),
            _ => false,
        }
    };
    !fields.is_empty() && fields.into_iter().all(shown)
}
