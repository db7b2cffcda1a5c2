//! KW202 no-offering-in-zone.

use std::collections::BTreeSet;

use crate::facts::{Facts, Message, ObjectRef};
use crate::rules::kw2xx::kw216_spot_only_nodepool::{pool_requirements_yaml, spot_only_clause};
use crate::rules::kw2xx::scheduling::{
    format_resources, group_hits, hit_messages, in_values, nodepool_label, nodepool_subnets,
    pod_label, requirement_on, scheduling_errors, single_value, tag_subnet_command, Cause, Clause,
    SchedulingError,
};
use crate::rules::kw3xx::common::Api;
use crate::rules::text::{capitalised, is_region};
use crate::rules::version::before_v0_32;
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW202",
    slug: "no-offering-in-zone",
    title:
        "The instance types exist but none is offered in the zone or capacity type the pod needs",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Karpenter found instance types that match the pod and are large enough, but no *offering* of
them (an instance type in a zone, with a capacity type, on-demand or spot or reserved) is
available for the zones and capacity types the pod and the NodePool allow together.

Signals (inside `Failed to schedule pod, ...` and `could not schedule pod`): `no instance type
has the required offering`, and the combined texts ending in `or had a required offering`
(`no instance type met the scheduling requirements or had a required offering`, `... or had
enough resources or had a required offering`, `no instance type had enough resources or had a
required offering`, `no instance type which met the scheduling requirements and had enough
resources, had a required offering`); v1.5+ `incompatible volume requirements, key
topology.kubernetes.io/zone, ...` when the pod's volume pins a zone. The scheduler's `volume
node affinity conflict` corroborates.

## Why it happens
Most often a StatefulSet whose EBS volume lives in one zone (EBS volumes never leave their
zone) while the NodePool's `topology.kubernetes.io/zone` requirement, or the subnets its
EC2NodeClass selects, do not cover that zone. Also: a zone that does not exist
(`eu-west-2z`), or a `topology.kubernetes.io/zone DoesNotExist` requirement that no offering can
meet (every offering has a zone). A spot-only NodePool (before v0.32, Provisioner) whose spot
offerings were marked unavailable after insufficient-capacity errors is KW216 when nothing
points at a zone (no zone required, or the NodePool and its subnets both cover it); a zone the
facts show uncovered stays here, and then no capacity type helps.

## How to fix
Add the zone to the NodePool's zone requirement and make sure the EC2NodeClass selects a subnet
in it (`status.subnets` lists the zones it covers), or allow the other capacity type
(`karpenter.sh/capacity-type In [on-demand, spot]`). For a volume in a zone you no longer
serve, restore it from a snapshot in a covered zone.
"#,
};

const SIGNALS: &[&str] = &[
    "could not schedule pod",
    "failed to schedule pod",
    "required offering",
    "incompatible volume requirements",
    "volume node affinity conflict",
];

/// The node labels a zone requirement is written on (a volume's on the last two).
pub const ZONE_KEYS: &[&str] = &[
    "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/zone",
    "topology.ebs.csi.aws.com/zone",
];

fn is_offering_clause(c: &Clause) -> bool {
    match &c.cause {
        Cause::InstanceTypes(f) => f.offering,
        Cause::VolumeConflict { key, .. } => key.as_deref().is_none_or(|k| ZONE_KEYS.contains(&k)),
        _ => false,
    }
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let errors = scheduling_errors(facts);
    let groups = group_hits(&errors, is_offering_clause, |c| {
        format!("{:?}\u{0}{}", c.nodepool, c.reason)
    });
    let conflicts: Vec<&Message> = facts
        .messages_containing("volume node affinity conflict")
        .collect();
    let mut out = Vec::new();
    for hits in groups {
        let first = hits[0];
        let clause = first.clause;
        let pod = first.error.pod.as_ref();
        let zones = ZoneFacts::gather(facts, clause, pod, !conflicts.is_empty());
        // Spot only, and nothing points at a zone: spot offerings marked unavailable are
        // KW216's to explain (its fix, allow on-demand, is the one that helps).
        if spot_only_clause(facts, clause) && !zones.zone_suspect() {
            continue;
        }
        let mut summary = match zones.gap() {
            // What the facts show missing comes first; Karpenter's own phrase follows.
            Some(gap) => format!(
                "{} cannot get a node from {}: {gap}{} Karpenter reports: {}",
                pod_label(pod),
                nodepool_label(clause),
                zones.explain(),
                lead(clause)
            ),
            None => format!(
                "{} cannot get a node from {}: {}{}",
                pod_label(pod),
                nodepool_label(clause),
                lead(clause),
                zones.explain()
            ),
        };
        if let Some(res) = &clause.resources {
            summary.push_str(&format!(" Resources asked: {}.", format_resources(res)));
        }
        summary.push_str(&first.error.nearest_note(clause));
        let diagnosis = Diagnosis::new(&META, summary)
            .with_object(pod)
            .with_node_pool(clause.nodepool.as_deref())
            .with_messages(hit_messages(&hits))
            .with_messages(conflicts.iter().copied())
            .with_remediation(zones.remediation(clause));
        let diagnosis = if zones.spot_only && !zones.zone_missing_known() {
            diagnosis.with_related(&["KW216", "KW215"])
        } else {
            diagnosis
        };
        out.push(diagnosis);
    }
    out
}

/// Whether the facts show the zone an offering failure needs missing from the NodePool's
/// zones or its subnets' (or a zone requirement no offering can meet): a zone for KW202 to
/// name, which no capacity type fixes (KW216 leaves such a clause alone).
pub fn zone_gap_known(facts: &Facts, error: &SchedulingError<'_>, clause: &Clause) -> bool {
    ZoneFacts::gather(facts, clause, error.pod.as_ref(), false).zone_missing_known()
}

fn lead(clause: &Clause) -> String {
    match &clause.cause {
        Cause::VolumeConflict {
            incoming, existing, ..
        } => format!(
            "its volume requires {} but the NodePool allows {}.",
            incoming.as_deref().unwrap_or("another zone"),
            existing.as_deref().unwrap_or("other zones")
        ),
        Cause::InstanceTypes(f) if f.requirements && f.resources => {
            "no instance type meets its requirements, has enough resources and has an available offering (zone x capacity type) at once.".to_string()
        }
        Cause::InstanceTypes(f) if f.requirements => {
            "no instance type both meets its requirements and has an available offering (zone x capacity type).".to_string()
        }
        Cause::InstanceTypes(f) if f.resources => {
            "no instance type with enough resources has an available offering (zone x capacity type).".to_string()
        }
        _ => "no matching instance type has an available offering (zone x capacity type).".to_string(),
    }
}

/// What the facts say about the zones involved.
#[derive(Debug, Default)]
struct ZoneFacts {
    /// Zones the pod needs, with why.
    required: Vec<(String, String)>,
    /// The zones the clause's requirements allow (pod and NodePool combined).
    allowed_by_requirements: Option<Vec<String>>,
    zone_does_not_exist: bool,
    nodepool: Option<String>,
    nodepool_zones: Option<Vec<String>>,
    /// The NodePool's requirements are in the input and none is on a zone key: it allows
    /// every zone (a requirement list cut from the paste says nothing, hence non-empty).
    nodepool_every_zone: bool,
    nodeclass: Option<String>,
    subnet_zones: Option<Vec<String>>,
    subnet_tag: Option<(String, String)>,
    /// The capacity types left to the pod (the clause's requirements, else the NodePool's).
    capacity_types: Option<Vec<String>>,
    spot_only: bool,
    volume_conflict_seen: bool,
    /// Karpenter's own `incompatible volume requirements`: a zone conflict, not a capacity one.
    volume_conflict: bool,
    /// The v1alpha5 API (before v0.32): a Provisioner and its AWSNodeTemplate.
    legacy: bool,
    /// The capacity type the pod itself pins (its nodeSelector or one affinity term): no
    /// NodePool change offers it the other.
    pod_capacity_type: Option<String>,
    /// The command that shows the pod's volume zone, when the scheduler reports a volume
    /// conflict but the input does not say the zone.
    see_volume_zone: Option<String>,
}

impl ZoneFacts {
    fn gather(
        facts: &Facts,
        clause: &Clause,
        pod: Option<&ObjectRef>,
        volume_conflict_seen: bool,
    ) -> Self {
        let pool = clause.nodepool.as_deref().and_then(|n| facts.nodepool(n));
        let mut z = ZoneFacts {
            volume_conflict_seen,
            nodepool: clause.nodepool.clone(),
            legacy: match pool {
                Some(p) => p.is_provisioner,
                None => clause.provisioner || before_v0_32(facts),
            },
            ..Default::default()
        };
        if let Cause::VolumeConflict {
            incoming, existing, ..
        } = &clause.cause
        {
            z.volume_conflict = true;
            for key in ZONE_KEYS {
                for zone in incoming
                    .as_deref()
                    .and_then(|i| in_values(i, key))
                    .unwrap_or_default()
                {
                    z.push_required(zone, "its volume's node affinity");
                }
            }
            // `... not in <the NodePool's requirement>`: the zones the NodePool allows.
            z.nodepool_zones = existing
                .as_deref()
                .and_then(|e| ZONE_KEYS.iter().find_map(|k| in_values(e, k)));
        }
        if let Some(reqs) = &clause.requirements {
            z.allowed_by_requirements = ZONE_KEYS.iter().find_map(|k| in_values(reqs, k));
            z.zone_does_not_exist = ZONE_KEYS
                .iter()
                .any(|k| requirement_on(reqs, k).is_some_and(|r| r.ends_with(" DoesNotExist")));
            z.capacity_types = in_values(reqs, "karpenter.sh/capacity-type");
            z.spot_only = z.capacity_types.as_ref().is_some_and(|v| v == &["spot"]);
            // The message's requirements name the NodePool's EC2NodeClass (v1.0+), so the
            // subnet step can say which one even with no NodePool in the input.
            z.nodeclass = single_value(reqs, "karpenter.k8s.aws/ec2nodeclass");
        }
        let fact_pod = pod.and_then(|p| {
            facts.pods.iter().find(|fp| {
                fp.meta.name == p.name
                    && (p.namespace.is_none() || fp.meta.namespace == p.namespace)
            })
        });
        if let Some(fp) = fact_pod {
            for key in ZONE_KEYS {
                if let Some(zone) = fp.node_selector.get(*key) {
                    z.push_required(zone.clone(), "its nodeSelector");
                }
            }
            // A zone every nodeSelectorTerm requires (terms are ORed, so only a single term
            // pins the zone).
            if let [term] = fp.node_affinity.as_slice() {
                for r in term {
                    if ZONE_KEYS.contains(&r.key.as_str()) && r.operator == "In" {
                        for v in &r.values {
                            z.push_required(v.clone(), "its node affinity");
                        }
                    }
                }
            }
            const CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";
            z.pod_capacity_type = fp
                .node_selector
                .get(CAPACITY_TYPE)
                .cloned()
                .or_else(|| match fp.node_affinity.as_slice() {
                    [term] => term.iter().find_map(|r| match r.values.as_slice() {
                        [one] if r.key == CAPACITY_TYPE && r.operator == "In" => Some(one.clone()),
                        _ => None,
                    }),
                    _ => None,
                });
            for pv in &facts.persistent_volumes {
                let bound_to_pod = pv.claim.as_ref().is_some_and(|c| {
                    fp.pvc_names.contains(&c.name)
                        && (c.namespace.is_none() || c.namespace == fp.meta.namespace)
                });
                if bound_to_pod {
                    for zone in &pv.zones {
                        z.push_required(
                            zone.clone(),
                            &format!("its PersistentVolume {}", pv.meta.name),
                        );
                    }
                }
            }
        } else if let Some(ns) = pod.and_then(|p| p.namespace.as_deref()) {
            // Without the pod's spec, a PV claimed from the pod's namespace is the best
            // corroboration the input offers.
            for pv in &facts.persistent_volumes {
                if pv.claim.as_ref().and_then(|c| c.namespace.as_deref()) == Some(ns) {
                    for zone in &pv.zones {
                        z.push_required(
                            zone.clone(),
                            &format!("PersistentVolume {} of namespace {ns}", pv.meta.name),
                        );
                    }
                }
            }
        }
        // Only when nothing in the input says the zone (the message's requirements name it
        // from v1.0 to v1.4).
        if volume_conflict_seen && z.required.is_empty() && z.allowed_by_requirements.is_none() {
            let ns = fact_pod
                .and_then(|p| p.meta.namespace.as_deref())
                .or_else(|| pod.and_then(|p| p.namespace.as_deref()))
                .unwrap_or("<namespace>");
            z.see_volume_zone = match (fact_pod.and_then(|p| p.pvc_names.first()), pod) {
                (Some(claim), _) => Some(format!("kubectl get pv \"$(kubectl get pvc {claim} -n {ns} -o jsonpath='{{.spec.volumeName}}')\" -o jsonpath='{{.spec.nodeAffinity.required}}{{\"\\n\"}}'")),
                (None, Some(p)) => Some(format!("for pvc in $(kubectl get pod {} -n {ns} -o jsonpath='{{.spec.volumes[*].persistentVolumeClaim.claimName}}'); do echo \"$pvc: $(kubectl get pv \"$(kubectl get pvc \"$pvc\" -n {ns} -o jsonpath='{{.spec.volumeName}}')\" -o jsonpath='{{.spec.nodeAffinity.required}}')\"; done", p.name)),
                (None, None) => None,
            };
        }
        if let Some(np) = pool {
            if !np.meta.from_table {
                z.nodepool_zones = ZONE_KEYS
                    .iter()
                    .find_map(|k| np.allowed_values(k))
                    .or(z.nodepool_zones.take());
                z.nodepool_every_zone = z.nodepool_zones.is_none()
                    && !np.requirements.is_empty()
                    && !np
                        .requirements
                        .iter()
                        .any(|r| ZONE_KEYS.contains(&r.key.as_str()));
            }
            if z.nodeclass.is_none() {
                z.nodeclass = np.nodeclass_ref.clone();
            }
            if z.capacity_types.is_none() && !np.meta.from_table {
                z.capacity_types = np.allowed_values("karpenter.sh/capacity-type");
                z.spot_only = z.capacity_types.as_ref().is_some_and(|v| v == &["spot"]);
            }
            if let Some(subnets) = clause
                .nodepool
                .as_deref()
                .and_then(|n| nodepool_subnets(facts, n))
            {
                z.nodeclass = Some(subnets.nodeclass);
                z.subnet_zones = subnets.zones;
                z.subnet_tag = subnets.tag;
            }
        }
        z
    }

    fn push_required(&mut self, zone: String, why: &str) {
        if !self.required.iter().any(|(z, _)| *z == zone) {
            self.required.push((zone, why.to_string()));
        }
    }

    fn api(&self) -> Api {
        Api {
            legacy: self.legacy,
        }
    }

    /// `NodePool default` (or `Provisioner default`), `the NodePool` when unnamed.
    fn pool_named(&self) -> String {
        match self.nodepool.as_deref() {
            Some(n) => format!("{} {n}", self.api().pool()),
            None => format!("the {}", self.api().pool()),
        }
    }

    /// `EC2NodeClass default` (or `AWSNodeTemplate default`), `its EC2NodeClass` when unnamed.
    fn class_named(&self) -> String {
        match self.nodeclass.as_deref() {
            Some(n) => format!("{} {n}", self.api().class()),
            None => format!("its {}", self.api().class()),
        }
    }

    /// Whether the facts show the zone missing from the NodePool or the subnets, or a zone
    /// requirement no offering meets: no capacity type is offered there.
    fn zone_missing_known(&self) -> bool {
        self.zone_does_not_exist
            || !self.nonexistent().is_empty()
            || !self.missing_in_nodepool().is_empty()
            || !self.missing_in_subnets().is_empty()
    }

    /// Whether anything points at a zone rather than at capacity: a zone the facts show
    /// missing, a volume's zone, a zone requirement no offering meets, or a zone the pod
    /// needs (or is left) that the facts do not show both the NodePool and the subnets cover.
    fn zone_suspect(&self) -> bool {
        let covered = (self.nodepool_zones.is_some() || self.nodepool_every_zone)
            && self.subnet_zones.is_some();
        self.zone_missing_known()
            || self.volume_conflict
            || (!covered && (!self.wanted().is_empty() || self.volume_conflict_seen))
    }

    fn required_zones(&self) -> BTreeSet<&str> {
        // Inserts rather than `collect()`: no stable sort copy in wasm.
        let mut zones = BTreeSet::new();
        for (zone, _) in &self.required {
            zones.insert(zone.as_str());
        }
        zones
    }

    /// The zones to compare: those the pod needs, else those the requirements allow.
    /// Wanted zones no AWS region has: a region name then a letter past `f` (us-east-1, the
    /// largest, ends at f). Local Zones (`us-west-2-lax-1a`) are not region names plus a letter.
    fn nonexistent(&self) -> Vec<String> {
        self.wanted()
            .into_iter()
            .filter(|z| {
                z.strip_suffix(|c: char| c.is_ascii_lowercase() && c > 'f')
                    .is_some_and(is_region)
            })
            .collect()
    }

    fn wanted(&self) -> Vec<String> {
        if !self.required.is_empty() {
            return self.required.iter().map(|(z, _)| z.clone()).collect();
        }
        self.allowed_by_requirements.clone().unwrap_or_default()
    }

    fn missing_in_nodepool(&self) -> Vec<String> {
        match &self.nodepool_zones {
            Some(np) => self
                .wanted()
                .into_iter()
                .filter(|z| !np.contains(z))
                .collect(),
            None => Vec::new(),
        }
    }

    fn missing_in_subnets(&self) -> Vec<String> {
        match &self.subnet_zones {
            Some(s) => self
                .wanted()
                .into_iter()
                .filter(|z| !s.contains(z))
                .collect(),
            None => Vec::new(),
        }
    }

    /// The zones the facts say the NodePool or the subnets lack, as the sentence to lead with;
    /// `None` when the facts do not show the gap.
    fn gap(&self) -> Option<String> {
        let wanted = self.wanted();
        if wanted.is_empty() {
            return None;
        }
        let (np, nc) = (self.pool_named(), self.class_named());
        let np_zones = || self.nodepool_zones.as_deref().unwrap_or_default().join(" ");
        let subnet_zones = || self.subnet_zones.as_deref().unwrap_or_default().join(" ");
        let (missing_np, missing_sub) = (self.missing_in_nodepool(), self.missing_in_subnets());
        let zones = wanted.join(", ");
        Some(match (missing_np.is_empty(), missing_sub.is_empty()) {
            (false, false) => format!(
                "neither {np} (it allows [{}]) nor the subnets of {nc} (they cover [{}]) include {}, the zone it needs.",
                np_zones(),
                subnet_zones(),
                join_union(&missing_np, &missing_sub)
            ),
            (false, true) => {
                let mut s = format!(
                    "{np} does not allow {}, the zone it needs (it allows [{}]).",
                    missing_np.join(", "),
                    np_zones()
                );
                if self.subnet_zones.is_some() {
                    s.push_str(&format!(
                        " {nc} has a subnet there, so the {}'s zone requirement is what is missing.",
                        self.api().pool()
                    ));
                }
                s
            }
            (true, false) => {
                let mut s = format!(
                    "{nc} has no subnet in {}, the zone it needs (its subnets cover [{}]).",
                    missing_sub.join(", "),
                    subnet_zones()
                );
                if self.nodepool_zones.is_some() {
                    s.push_str(&format!(
                        " {np} already allows {zones}, so the subnets are what is missing."
                    ));
                } else if self.nodepool_every_zone {
                    s.push_str(&format!(
                        " {np} has no zone requirement, so it allows {zones}: the subnets are what is missing."
                    ));
                }
                s
            }
            (true, true)
                if (self.nodepool_zones.is_some() || self.nodepool_every_zone)
                    && self.subnet_zones.is_some() =>
            {
                format!(
                    "{np} and {nc} both cover {zones}, so no zone is missing: the offerings there are unavailable ({}).",
                    if self.single_capacity_type().is_some() {
                        "capacity, with a single capacity type allowed"
                    } else {
                        "capacity for the instance types allowed"
                    }
                )
            }
            _ => return None,
        })
    }

    /// The capacity type when only one is allowed (`spot`, `on-demand`).
    fn single_capacity_type(&self) -> Option<&str> {
        match self.capacity_types.as_deref() {
            Some([one]) => Some(one.as_str()),
            _ => None,
        }
    }

    fn explain(&self) -> String {
        let mut s = String::new();
        if self.zone_does_not_exist {
            s.push_str(&format!(" Its requirements include `topology.kubernetes.io/zone DoesNotExist`: every offering has a zone, so none can match; remove that requirement from the pod (or the {}).", self.api().pool()));
        }
        for (zone, why) in &self.required {
            s.push_str(&format!(" The pod needs zone {zone} ({why})."));
        }
        if self.required.is_empty() {
            if let Some(allowed) = &self.allowed_by_requirements {
                s.push_str(&format!(
                    " The zones left to it are [{}].",
                    allowed.join(" ")
                ));
            }
        }
        let bogus = self.nonexistent();
        if !bogus.is_empty() {
            s.push_str(&format!(
                " No AWS region has zone {}: zone names end in a letter from a to f, so no offering can match.",
                bogus.join(", ")
            ));
        }
        if self.gap().is_none() {
            if self.nodepool_every_zone && !self.wanted().is_empty() {
                s.push_str(&format!(
                    " {} has no zone requirement, so it allows {}: check the subnets of {}.",
                    capitalised(&self.pool_named()),
                    self.wanted().join(", "),
                    self.class_named()
                ));
            }
            let missing_np = self.missing_in_nodepool();
            if !missing_np.is_empty() {
                s.push_str(&format!(
                    " {} does not allow {} (it allows [{}]).",
                    capitalised(&self.pool_named()),
                    missing_np.join(", "),
                    self.nodepool_zones.as_deref().unwrap_or_default().join(" ")
                ));
            }
            let missing_sub = self.missing_in_subnets();
            if !missing_sub.is_empty() {
                s.push_str(&format!(
                    " {} has no subnet in {} (its subnets cover [{}]).",
                    capitalised(&self.class_named()),
                    missing_sub.join(", "),
                    self.subnet_zones.as_deref().unwrap_or_default().join(" ")
                ));
            }
        }
        if self.spot_only && !self.zone_missing_known() {
            s.push_str(" Only spot is allowed (`karpenter.sh/capacity-type In [spot]`): spot offerings that failed with insufficient capacity stay unavailable for a few minutes.");
        }
        if self.volume_conflict_seen && self.required.is_empty() {
            s.push_str(" The scheduler's `volume node affinity conflict` says a volume pins the pod to a zone.");
        }
        if let Some(ct) = &self.pod_capacity_type {
            s.push_str(&format!(
                " The pod itself asks for `karpenter.sh/capacity-type={ct}` only."
            ));
        }
        s
    }

    /// The steps for what is missing, the missing piece first; a piece the facts show already
    /// covering the zone gets no step.
    fn remediation(&self, clause: &Clause) -> Vec<Remediation> {
        let api = self.api();
        let (pool, pool_res, class, class_res) =
            (api.pool(), api.pool_res(), api.class(), api.class_res());
        let np = clause
            .nodepool
            .clone()
            .unwrap_or_else(|| format!("<{pool_res}>"));
        let np = np.as_str();
        let mut steps = Vec::new();
        if let Some(see) = &self.see_volume_zone {
            steps.push(Remediation::command(
                "See the zone the pod's volume lives in (the scheduler reports a volume node affinity conflict): that is the zone to cover.",
                see.clone(),
            ));
        }
        if self.zone_does_not_exist {
            steps.push(Remediation::text(format!(
                "Remove the `topology.kubernetes.io/zone DoesNotExist` requirement from the pod's node affinity (or the {pool}): no instance offering lacks a zone."
            )));
        }
        let bogus = self.nonexistent();
        if !bogus.is_empty() {
            // A typo in the zone name: no NodePool or subnet can cover it.
            steps.push(Remediation::command(
                format!("Correct zone {} where the pod (or the {pool}) asks for it: list the region's real zones:", bogus.join(", ")),
                "aws ec2 describe-availability-zones --query 'AvailabilityZones[].ZoneName'",
            ));
            return steps;
        }
        let wanted = self.wanted();
        let missing_np = self.missing_in_nodepool();
        let missing_sub = self.missing_in_subnets();
        // Unknown facts (no NodePool or EC2NodeClass in the input) leave both pieces to check.
        // A NodePool without a zone requirement already allows the zone: a step adding one with
        // only the pod's zone would shut every other zone out.
        let nodepool_step =
            (self.nodepool_zones.is_none() && !self.nodepool_every_zone) || !missing_np.is_empty();
        let subnet_step = self.subnet_zones.is_none() || !missing_sub.is_empty();
        let mut zone_steps = Vec::new();
        if nodepool_step {
            let mut zones: Vec<String> = self.nodepool_zones.clone().unwrap_or_default();
            for z in &missing_np {
                if !zones.contains(z) {
                    zones.push(z.clone());
                }
            }
            if zones.is_empty() {
                zones = wanted.clone();
            }
            let zone_list = if zones.is_empty() {
                "\"<zone>\"".to_string()
            } else {
                zones
                    .iter()
                    .map(|z| format!("\"{z}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let text = if missing_np.is_empty() {
                // The NodePool is not in the input: the requirement shown is what to merge into
                // one it has, not a list to replace its zones with.
                format!("Make sure {pool} {np} allows the zone: if it has a zone requirement, add {} to its values (`kubectl edit {pool_res} {np}`); without one it allows every zone:", if wanted.is_empty() { "the zone".to_string() } else { wanted.join(", ") })
            } else {
                format!(
                    "Allow {} in {pool} {np} (`kubectl edit {pool_res} {np}`):",
                    missing_np.join(", ")
                )
            };
            zone_steps.push((
                !missing_np.is_empty(),
                Remediation::yaml(
                    text,
                    pool_requirements_yaml(
                        self.legacy,
                        &format!("        - key: topology.kubernetes.io/zone\n          operator: In\n          values: [{zone_list}]\n"),
                    ),
                ),
            ));
        }
        if subnet_step {
            let nc = self
                .nodeclass
                .clone()
                .unwrap_or_else(|| format!("<{class_res}>"));
            // With no zone missing or required, every zone left to the pod is worth checking:
            // `Values=` of the AWS CLI filter takes them comma-separated.
            let (target, zones_filter, find) = match missing_sub
                .first()
                .cloned()
                .or_else(|| self.required_zones().into_iter().next().map(str::to_string))
            {
                Some(zone) => (zone.clone(), zone, "find one and give it"),
                None if wanted.len() > 1 => (
                    format!("each of {}", wanted.join(", ")),
                    wanted.join(","),
                    "where a zone has none, give one of its subnets",
                ),
                None => {
                    let zone = wanted
                        .first()
                        .cloned()
                        .unwrap_or_else(|| "<zone>".to_string());
                    (zone.clone(), zone, "find one and give it")
                }
            };
            let verb = if missing_sub.is_empty() {
                "Make sure {class} {nc} selects"
            } else {
                "Make {class} {nc} select"
            }
            .replace("{class}", class)
            .replace("{nc}", &nc);
            // The v1alpha1 AWSNodeTemplate selects with one `subnetSelector` map; what it
            // resolved shows in the EC2NodeClass's status.
            let see = if self.legacy {
                format!("its subnetSelector matches (`kubectl get {class_res} {nc} -o jsonpath='{{.spec.subnetSelector}}'`)")
            } else {
                format!("its subnetSelectorTerms match, then check `kubectl get {class_res} {nc} -o jsonpath='{{.status.subnets}}'`")
            };
            zone_steps.push((
                !missing_sub.is_empty(),
                Remediation::command(
                    format!("{verb} a subnet in {target}: {find} the tag {see}."),
                    tag_subnet_command(self.subnet_tag.as_ref(), &zones_filter),
                ),
            ));
        }
        // A step for a piece known to be missing before a step that only checks.
        let (missing, checks): (Vec<_>, Vec<_>) =
            zone_steps.into_iter().partition(|(missing, _)| *missing);
        steps.extend(missing.into_iter().map(|(_, step)| step));
        // When the zones left to the pod are exactly the NodePool's own (no pod or volume pin),
        // an unseen subnet is a less likely cause than the capacity type: its check follows the
        // capacity step instead of leading.
        let checks_last = self.required.is_empty()
            && !self.volume_conflict
            && !self.volume_conflict_seen
            && self.nodepool_zones.as_ref().is_some_and(|np| {
                wanted.len() == np.len() && wanted.iter().all(|z| np.contains(z))
            });
        let checks = checks.into_iter().map(|(_, step)| step);
        let mut checks_after = Vec::new();
        if checks_last {
            checks_after.extend(checks);
        } else {
            steps.extend(checks);
        }
        let or = if steps.is_empty() { "" } else { "Or " };
        match self.capacity_types.as_deref() {
            // No offering of any capacity type exists in a zone the facts show uncovered:
            // the other capacity type would not help there (nor KW216's on-demand).
            _ if self.volume_conflict || self.zone_missing_known() => {}
            // The pod's own selector leaves it one capacity type, whatever the NodePool allows.
            _ if self.pod_capacity_type.is_some() => {
                let ct = self.pod_capacity_type.as_deref().unwrap_or_default();
                steps.push(Remediation::text(format!(
                    "{or}drop `karpenter.sh/capacity-type={ct}` from the pod template's nodeSelector / node affinity, if the workload can run on either capacity type: while the pod pins it, allowing the other in the {pool} does not help."
                )));
            }
            Some([one]) => {
                let other = if one == "on-demand" { "spot" } else { "on-demand" };
                let allow = if or.is_empty() { "Allow" } else { "allow" };
                steps.push(Remediation::yaml(
                    format!("{or}{allow} {other} too in {pool} {np}, so an offering of the other capacity type can serve when {one} has none:"),
                    pool_requirements_yaml(self.legacy, &format!("        - key: karpenter.sh/capacity-type\n          operator: In\n          values: [\"{one}\", \"{other}\"]\n")),
                ));
            }
            Some(_) => {}
            None => steps.push(Remediation::yaml(
                format!("If {pool} {np} allows a single capacity type, allow both, so an offering of the other can serve:"),
                pool_requirements_yaml(self.legacy, "        - key: karpenter.sh/capacity-type\n          operator: In\n          values: [\"on-demand\", \"spot\"]\n"),
            )),
        }
        steps.extend(checks_after);
        if self
            .gap()
            .is_some_and(|_| missing_np.is_empty() && missing_sub.is_empty())
        {
            steps.push(Remediation::command(
                format!("Widen the instance types {pool} {np} allows (more families and sizes), so some type has an offering in the zone; look for insufficient-capacity errors (KW215) in the logs:"),
                "kubectl logs -n <karpenter-namespace> -l app.kubernetes.io/name=karpenter --since=1h | grep -iE 'insufficient capacity|InsufficientInstanceCapacity'",
            ));
        }
        if self
            .required
            .iter()
            .any(|(_, why)| why.contains("PersistentVolume") || why.contains("volume"))
        {
            steps.push(Remediation::text(format!(
                "If the zone should no longer be served, move the data: snapshot the EBS volume and restore it in a zone the {pool} covers."
            )));
        }
        steps
    }
}

/// `a` and the items of `b` not in it, joined with `, `.
fn join_union(a: &[String], b: &[String]) -> String {
    let mut all: Vec<&str> = a.iter().map(String::as_str).collect();
    for z in b {
        if !all.contains(&z.as_str()) {
            all.push(z);
        }
    }
    all.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Evidence;
    use crate::facts::{MessageOrigin, NodeClass, NodePool, PersistentVolume, Pod, Requirement};
    use crate::testing::{check_only, ids};

    #[test]
    fn required_offering_forms() {
        for phrase in [
            "no instance type has the required offering",
            "no instance type met the scheduling requirements or had a required offering",
            "no instance type met the scheduling requirements or had enough resources or had a required offering",
            "no instance type had enough resources or had a required offering",
            "no instance type which met the scheduling requirements and had enough resources, had a required offering",
        ] {
            let text = format!("Failed to schedule pod, {phrase}, requirements=karpenter.sh/nodepool In [a], topology.kubernetes.io/zone In [eu-west-2z], resources={{\"cpu\":\"1\"}}");
            let report = check_only("KW202", &text);
            assert_eq!(ids(&report), ["KW202"], "{phrase}");
            assert!(report.diagnoses[0].summary.contains("eu-west-2z"));
        }
    }

    #[test]
    fn a_zone_no_region_has_is_a_typo_not_a_missing_subnet() {
        let d = &check_only(
            "KW202",
            r#"Failed to schedule pod, incompatible with nodepool "default", no instance type satisfied resources {"cpu":"1"} and requirements karpenter.sh/nodepool In [default], topology.kubernetes.io/zone In [eu-west-2z] (no instance type has the required offering)"#,
        )
        .diagnoses[0];
        assert!(
            d.summary.contains("No AWS region has zone eu-west-2z"),
            "{}",
            d.summary
        );
        let fix = crate::testing::remediation_text(d);
        assert!(!fix.contains("subnet"), "{fix}");
        // A Local Zone is not a region name plus a letter.
        let z = ZoneFacts {
            allowed_by_requirements: Some(vec!["us-west-2-lax-1a".into(), "us-east-1f".into()]),
            ..Default::default()
        };
        assert!(z.nonexistent().is_empty());
    }

    #[test]
    fn the_subnet_step_names_the_nodeclass_the_message_names() {
        let d = &check_only(
            "KW202",
            r#"Failed to schedule pod, no instance type has the required offering, requirements=karpenter.k8s.aws/ec2nodeclass In [private-a], karpenter.sh/nodepool In [db], topology.kubernetes.io/zone In [us-east-1c], resources={"cpu":"1"}"#,
        )
        .diagnoses[0];
        let fix = crate::testing::remediation_text(d);
        assert!(
            fix.contains("EC2NodeClass private-a selects a subnet in us-east-1c"),
            "{fix}"
        );
        assert!(!fix.contains("<ec2nodeclass>"), "{fix}");
    }

    #[test]
    fn zone_does_not_exist_is_explained() {
        let report = check_only(
            "KW202",
            r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"ws","namespace":"coder"},"error":"did not tolerate taint (taint=CriticalAddonsOnly:NoSchedule); no instance type met the scheduling requirements or had a required offering, requirements=karpenter.sh/nodepool In [coder-workspace], topology.kubernetes.io/zone DoesNotExist, resources={\"cpu\":\"4180m\"}"}"#,
        );
        assert_eq!(ids(&report), ["KW202"]);
        let d = &report.diagnoses[0];
        assert_eq!(d.node_pool.as_deref(), Some("coder-workspace"));
        assert!(d.summary.contains("DoesNotExist"), "{}", d.summary);
    }

    #[test]
    fn resources_only_and_taints_are_not_kw202() {
        for text in [
            "Failed to schedule pod, no instance type has enough resources, requirements=a In [b], resources={}",
            "Failed to schedule pod, did not tolerate taint (taint=a:NoSchedule)",
            "Failed to schedule pod, incompatible volume requirements, key kubernetes.io/hostname, kubernetes.io/hostname In [a] not in kubernetes.io/hostname In [b]",
        ] {
            assert!(ids(&check_only("KW202", text)).is_empty(), "{text}");
        }
    }

    fn message(text: &str) -> Message {
        Message {
            origin: MessageOrigin::Event,
            text: text.to_string(),
            evidence: Evidence::new("describe", 1, text),
            object: Some(ObjectRef::new("Pod", Some("db"), "pg-0")),
            nodepool: None,
            reason: None,
            component: None,
            time: None,
        }
    }

    fn zone_req(zones: &[&str]) -> Requirement {
        Requirement {
            key: "topology.kubernetes.io/zone".into(),
            operator: "In".into(),
            values: zones.iter().map(|z| z.to_string()).collect(),
            min_values: None,
        }
    }

    fn facts_with(np_zones: &[&str], subnet_zones: &[&str]) -> Facts {
        let mut facts = Facts::default();
        facts.messages.push(message(
            "Failed to schedule pod, no instance type has the required offering, requirements=karpenter.sh/nodepool In [default], topology.kubernetes.io/zone In [us-east-1a], resources={\"cpu\":\"1\"}",
        ));
        let mut pod = Pod::default();
        pod.meta.name = "pg-0".into();
        pod.meta.namespace = Some("db".into());
        pod.phase = Some("Pending".into());
        pod.pvc_names = vec!["data-pg-0".into()];
        facts.pods.push(pod);
        let mut pv = PersistentVolume::default();
        pv.meta.name = "pvc-123".into();
        pv.zones = vec!["us-east-1a".into()];
        pv.claim = Some(ObjectRef::new(
            "PersistentVolumeClaim",
            Some("db"),
            "data-pg-0",
        ));
        facts.persistent_volumes.push(pv);
        let mut np = NodePool::default();
        np.meta.name = "default".into();
        np.nodeclass_ref = Some("default".into());
        np.requirements = vec![zone_req(np_zones)];
        facts.nodepools.push(np);
        let mut nc = NodeClass::default();
        nc.meta.name = "default".into();
        nc.status_subnets = subnet_zones
            .iter()
            .enumerate()
            .map(|(i, z)| (format!("subnet-{i}"), z.to_string()))
            .collect();
        facts.nodeclasses.push(nc);
        facts
    }

    #[test]
    fn says_the_nodepool_lacks_the_pv_zone() {
        let facts = facts_with(
            &["us-east-1b", "us-east-1c"],
            &["us-east-1a", "us-east-1b", "us-east-1c"],
        );
        let d = &check(&facts)[0];
        assert!(
            d.summary.contains("PersistentVolume pvc-123"),
            "{}",
            d.summary
        );
        assert!(
            d.summary
                .contains("NodePool default does not allow us-east-1a"),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("has no subnet"), "{}", d.summary);
        assert!(d.remediation[0]
            .yaml
            .as_deref()
            .unwrap()
            .contains("\"us-east-1a\""));
    }

    /// A NodePool whose requirements have no zone key allows every zone: no step may add a
    /// zone requirement (with only the pod's zone it would shut the others out), and the
    /// subnets are what to look at.
    #[test]
    fn a_nodepool_without_zone_requirement_gets_no_zone_step() {
        let capacity = Requirement {
            key: "karpenter.sh/capacity-type".into(),
            operator: "In".into(),
            values: vec!["on-demand".into()],
            min_values: None,
        };
        let mut facts = facts_with(&[], &["us-east-1b", "us-east-1c"]);
        facts.nodepools[0].requirements = vec![capacity.clone()];
        let d = &check(&facts)[0];
        assert!(
            d.summary.contains("EC2NodeClass default has no subnet in us-east-1a")
                && d.summary.contains(
                    "NodePool default has no zone requirement, so it allows us-east-1a: the subnets are what is missing"
                ),
            "{}",
            d.summary
        );
        let no_zone_yaml = |d: &Diagnosis| {
            !d.remediation.iter().any(|r| {
                r.yaml
                    .as_deref()
                    .is_some_and(|y| y.contains("topology.kubernetes.io/zone"))
            })
        };
        assert!(no_zone_yaml(d), "{:?}", d.remediation);
        // Subnets not in the input: still no zone step, and the summary says where to look.
        facts.nodeclasses.clear();
        let d = &check(&facts)[0];
        assert!(no_zone_yaml(d), "{:?}", d.remediation);
        assert!(
            d.summary.contains("NodePool default has no zone requirement, so it allows us-east-1a: check the subnets"),
            "{}",
            d.summary
        );
        // Without the NodePool's requirements the step stays, worded as a merge.
        facts.nodepools[0].requirements.clear();
        let d = &check(&facts)[0];
        assert!(!no_zone_yaml(d), "{:?}", d.remediation);
        assert!(
            d.remediation[0]
                .text
                .contains("add us-east-1a to its values"),
            "{}",
            d.remediation[0].text
        );
    }

    #[test]
    fn says_the_subnets_lack_the_pv_zone() {
        let facts = facts_with(&["us-east-1a", "us-east-1b"], &["us-east-1b", "us-east-1c"]);
        let d = &check(&facts)[0];
        assert!(
            d.summary
                .contains("EC2NodeClass default has no subnet in us-east-1a"),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("does not allow"), "{}", d.summary);
    }

    #[test]
    fn only_the_missing_piece_is_suggested_and_leads() {
        // The NodePool allows the zone; the subnets do not cover it.
        let facts = facts_with(&["us-east-1a", "us-east-1b"], &["us-east-1b", "us-east-1c"]);
        let d = &check(&facts)[0];
        assert!(
            d.summary
                .starts_with("Pod db/pg-0 cannot get a node from NodePool \"default\": EC2NodeClass default has no subnet in us-east-1a"),
            "{}",
            d.summary
        );
        assert!(
            d.summary.contains("already allows us-east-1a"),
            "{}",
            d.summary
        );
        assert!(
            d.remediation[0]
                .text
                .contains("select a subnet in us-east-1a"),
            "{:?}",
            d.remediation[0]
        );
        assert!(
            !d.remediation.iter().any(|r| r
                .yaml
                .as_deref()
                .is_some_and(|y| y.contains("topology.kubernetes.io/zone"))),
            "the NodePool already allows the zone: {:?}",
            d.remediation
        );
        // The subnets cover the zone; the NodePool does not allow it.
        let facts = facts_with(&["us-east-1b"], &["us-east-1a", "us-east-1b"]);
        let d = &check(&facts)[0];
        assert!(d.remediation[0]
            .text
            .starts_with("Allow us-east-1a in NodePool default"));
        assert!(!d
            .remediation
            .iter()
            .any(|r| r.text.contains("select a subnet")));
    }

    #[test]
    fn both_covering_points_at_the_offerings() {
        let mut facts = facts_with(&["us-east-1a"], &["us-east-1a"]);
        facts.nodepools[0].requirements.push(Requirement {
            key: "karpenter.sh/capacity-type".into(),
            operator: "In".into(),
            values: vec!["on-demand".into(), "spot".into()],
            min_values: None,
        });
        let d = &check(&facts)[0];
        assert!(d.summary.contains("both cover us-east-1a"), "{}", d.summary);
        assert!(
            !d.remediation
                .iter()
                .any(|r| r.text.contains("capacity type")
                    || r.text.contains("select a subnet")
                    || r.text.contains("in NodePool default (`kubectl edit")),
            "{:?}",
            d.remediation
        );
        assert!(d
            .remediation
            .iter()
            .any(|r| r.text.starts_with("Widen the instance types")));
    }

    #[test]
    fn a_single_capacity_type_suggests_the_other() {
        let report = check_only(
            "KW202",
            "Failed to schedule pod, no instance type has the required offering, requirements=karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [od], resources={\"cpu\":\"1\"}",
        );
        let steps = &report.diagnoses[0].remediation;
        assert!(
            steps
                .iter()
                .any(|r| r.text.starts_with("Or allow spot too in NodePool od")),
            "{steps:?}"
        );
    }

    #[test]
    fn volume_requirements_conflict_v1_5() {
        let report = check_only(
            "KW202",
            "Failed to schedule pod, incompatible volume requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [us-east-1a] not in topology.kubernetes.io/zone In [us-east-1b us-east-1c]",
        );
        assert_eq!(ids(&report), ["KW202"]);
        assert!(report.diagnoses[0].summary.contains("us-east-1a"));
    }

    /// A spot-only pool whose zones are all covered (or not restricted) is KW216's: spot
    /// offerings are unavailable, no zone is missing. A zone the facts do not show covered
    /// keeps KW202.
    #[test]
    fn spot_only_without_a_zone_is_kw216s() {
        for text in [
            "2023-04-18T11:52:07.631Z\tERROR\tcontroller.provisioner\tCould not schedule pod, incompatible with provisioner \"default\", no instance type satisfied resources {\"cpu\":\"3\"} and requirements karpenter.sh/capacity-type In [spot], karpenter.sh/provisioner-name In [default] (no instance type has the required offering)\t{\"commit\": \"7131be2\", \"pod\": \"jobs/etl-1\"}",
            r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"v","namespace":"b"},"error":"no instance type has the required offering, requirements=karpenter.sh/capacity-type In [spot], karpenter.sh/nodepool In [batch-spot], resources={\"cpu\":\"3\"}"}"#,
        ] {
            assert!(ids(&check_only("KW202", text)).is_empty(), "{text}");
        }
        let zoned = r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"v","namespace":"b"},"error":"no instance type has the required offering, requirements=karpenter.sh/capacity-type In [spot], karpenter.sh/nodepool In [batch-spot], topology.kubernetes.io/zone In [eu-west-1c], resources={\"cpu\":\"3\"}"}"#;
        assert_eq!(ids(&check_only("KW202", zoned)), ["KW202"]);
    }

    /// Before v0.32 the pool is a Provisioner and the class an AWSNodeTemplate: the names,
    /// the kubectl resources and the requirements path (`spec.requirements`) follow.
    #[test]
    fn provisioner_era_wording() {
        let report = check_only(
            "KW202",
            "2023-08-22T14:03:11.512Z\tERROR\tcontroller.provisioner\tCould not schedule pod, incompatible with provisioner \"default\", no instance type satisfied resources {\"cpu\":\"1\"} and requirements karpenter.sh/provisioner-name In [default], topology.kubernetes.io/zone In [eu-west-1c] (no instance type has the required offering)\t{\"commit\": \"322822a\", \"pod\": \"data/pg-0\"}",
        );
        let d = &report.diagnoses[0];
        let all: String = d
            .remediation
            .iter()
            .map(|r| {
                format!(
                    "{}\n{}\n{}\n",
                    r.text,
                    r.command.as_deref().unwrap_or(""),
                    r.yaml.as_deref().unwrap_or("")
                )
            })
            .collect();
        for wrong in [
            "NodePool",
            "nodepool",
            "EC2NodeClass",
            "ec2nodeclass",
            "template:",
        ] {
            assert!(!all.contains(wrong), "{wrong} in {all}");
        }
        assert!(all.contains("`kubectl edit provisioner default`"), "{all}");
        assert!(
            all.contains("spec:\n  requirements:\n    - key: topology.kubernetes.io/zone\n"),
            "{all}"
        );
        assert!(all.contains("kubectl get awsnodetemplate"), "{all}");
    }
}
