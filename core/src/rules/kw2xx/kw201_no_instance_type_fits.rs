//! KW201 no-instance-type-fits.

use crate::facts::{contains_ignore_ascii_case, Facts, ObjectRef, Pod};
use crate::rules::kw2xx::scheduling::{
    cpu_cores, format_resources, group_hits, hit_messages, in_values, nodepool_label, pod_label,
    pod_owner, pod_template_of, quantity_units, requirement_on, resource_bounds, resource_entries,
    resource_value, scheduling_errors, single_value, Cause, Clause, InstanceTypeFailure,
};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW201",
    slug: "no-instance-type-fits",
    title: "No instance type the NodePool allows has enough resources for the pod",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Karpenter simulated every instance type the NodePool allows and none can hold the pod: its
requests plus the daemonset overhead (the DaemonSet pods every new node also runs) exceed what
the largest allowed type offers, or no single type meets the requirements, the resources and
an offering at once. The pod's own request is, per resource, the larger of its biggest init
container's request and the sum of its app containers' (init containers run one at a time
before the app containers start): when the pod spec is in the input and an init container
asks for more, the diagnosis names it, since lowering the app containers would change nothing.
A native sidecar (an init container with `restartPolicy: Always`) keeps running: it counts with
the app containers and with every init container started after it.

Signals (inside `Failed to schedule pod, ...` and `could not schedule pod`):
`no instance type has enough resources, requirements=..., resources=...`, the v1.0 to v1.2
`no instance type satisfied resources <json> and requirements <reqs> (no instance type has
enough resources)`, and the combined texts `no instance type met the scheduling requirements or
had enough resources[ or had a required offering]`, `no instance type had enough resources or
had a required offering`, `no instance type met all requirements`, `no instance type met the
requirements/resources/offering tuple`. `(CPU request >= 1 Million, m vs M typo?)` marks a CPU
request of a million cores or more.

When the failure also involves offerings (`or had a required offering`, the tuple form) and the
requirements pin zones (`topology.kubernetes.io/zone`, `topology.k8s.aws/zone-id`) or capacity
types, the diagnosis says the choice is narrowed there, and by whom when the input shows it (the
pod's nodeSelector/affinity or the NodePool).

## Why it happens
The NodePool's requirements (`node.kubernetes.io/instance-type`, `karpenter.k8s.aws/instance-family`,
`-size`, `-cpu`) allow only types smaller than the pod, the pod asks for more than any type
offers (often a `M` where `m` was meant: `2000M` is two billion cores), or the daemonset
overhead pushes a pod that would fit over the edge. `resources=` in the message is the total
Karpenter tried to place; from v1.14, when the daemonset overhead differs between instance
types, it prints the smallest and largest total (`resources=min={...}, max={...}`) and the
report names each resource as a range. Sometimes no size would do: the requirements name instance types
(`node.kubernetes.io/instance-type In [m5.large]`, often from the pod's nodeSelector) that
their own category, family, generation or size requirement excludes (`instance-category In
[c r]`); the report says so, and the fix is to make the two agree. A pod that requests an
extended resource a device plugin advertises (`smarter-devices/fuse`, `amd.com/ama_u30`) fits
no type at all: Karpenter knows only the resources EC2 instance types report (CPU, memory,
pods, GPUs, Neuron, EFA, pod ENIs); the report names such a resource.

## How to fix
Widen the NodePool's instance requirements (more families, larger sizes, a
`karpenter.k8s.aws/instance-cpu` bound instead of a fixed type list), lower the pod's requests,
or trim the DaemonSets that run on every node. When the NodePool also excluded types because
they would breach its `spec.limits`, raise the limits (KW205). Make a device plugin's resource
known with a NodeOverlay (alpha `NodeOverlay` feature gate) that adds it to the instance types
carrying the device, or run those pods on nodes Karpenter does not launch; when a memory-heavy
pod needs it, bound `karpenter.k8s.aws/instance-memory` (MiB) as well as the CPU. An
`ephemeral-storage` need above the node's volume (Karpenter gives every instance type the
ephemeral storage of the EC2NodeClass's kubelet volume, 20Gi unless `blockDeviceMappings` set
more) fits no type however large: enlarge that volume, or use `instanceStorePolicy: RAID0` with
NVMe instance types.
"#,
};

const SIGNALS: &[&str] = &[
    "could not schedule pod",
    "failed to schedule pod",
    "no instance type has enough resources",
    "no instance type satisfied resources",
    "no instance type met",
    "no instance type had enough resources",
    "no instance type which",
];

/// The instance-type failures this rule explains: a resource shortfall, the tuple, or the
/// requirements alone. `met the scheduling requirements or had a required offering` (no
/// resource part) is KW202's.
pub fn is_resource_failure(f: &InstanceTypeFailure) -> bool {
    f.resources || f.tuple || (f.requirements && !f.offering)
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let errors = scheduling_errors(facts);
    let groups = group_hits(
        &errors,
        |c| matches!(&c.cause, Cause::InstanceTypes(f) if is_resource_failure(f)),
        |c| format!("{:?}\u{0}{}", c.nodepool, c.reason),
    );
    let mut out = Vec::new();
    for hits in groups {
        let first = hits[0];
        let clause = first.clause;
        let Cause::InstanceTypes(failure) = &clause.cause else {
            continue;
        };
        let pod = first.error.pod.as_ref();
        let owner = pod_owner(facts, pod);
        // A describe copied from `Status:` on shows no pod name, but its `Controlled By:` does
        // name the workload: say that rather than `Pod <namespace>/<pod>`.
        let subject = match (&owner, pod) {
            (Some(o), Some(p)) if p.name.starts_with('<') => {
                format!("A pod of {} {}", o.kind, o.qualified_name())
            }
            _ => pod_label(pod),
        };
        let pool = nodepool_label(clause);
        let init_heavy = pod.and_then(|p| facts.pod(p)).and_then(init_heavy_requests);
        let excluded_by_limits = clause
            .nodepool
            .as_deref()
            .is_some_and(|np| limits_exclusion_for(facts, np));
        let whole_cores = clause_whole_core_request(clause).filter(|_| !failure.cpu_typo);
        let mut summary = String::new();
        if let Some(cores) = whole_cores {
            summary.push_str(&format!(
                "{subject} requests {cores} CPU cores: far more than EC2 instance types have (c, m and r types top out at 192 vCPUs), almost surely a CPU request written without its `m` (`{cores}m` is {} cores). ",
                millicores_text(cores)
            ));
        }
        if failure.cpu_typo {
            summary.push_str(&format!(
                "{} requests a million CPU cores or more: almost surely an `m`/`M` typo in its CPU request (`M` is mega, `m` is milli). ",
                subject
            ));
        }
        summary.push_str(&format!(
            "{} does not fit {}: {}",
            if failure.cpu_typo || whole_cores.is_some() {
                "It".to_string()
            } else {
                subject
            },
            pool,
            failure_sentence(failure)
        ));
        if let Some(res) = &clause.resources {
            summary.push_str(&format!(" It needs {}", format_resources(res)));
            match &clause.daemonset_overhead {
                Some(o) => summary.push_str(&format!(
                    " (its requests plus daemonset overhead {})",
                    format_resources(o)
                )),
                None if resource_bounds(res).is_some() => summary.push_str(
                    " (its requests plus the daemonset overhead, which differs between instance types)",
                ),
                // Releases that gave no reason printed the pod's own requests only.
                None if clause.reason.contains("satisfied resources")
                    && !clause.reason.trim_end().ends_with(')') =>
                {
                    summary.push_str(" (its own requests; the daemonset overhead comes on top)")
                }
                None => summary.push_str(" (its requests plus the daemonset overhead)"),
            }
            summary.push('.');
            if let Some(note) = &init_heavy {
                summary.push_str(&format!(" {}", note.sentence()));
            }
            let unknown = unknown_resources(res);
            if !unknown.is_empty() {
                summary.push_str(&format!(
                    " It requests {}, which no EC2 instance type reports: Karpenter fits pods only to the resources instance types have (CPU, memory, pods, GPUs, Neuron, EFA, pod ENIs), never to a device plugin's, so no NodePool can launch a node for this pod (kubernetes-sigs/karpenter#751).",
                    backquoted(&unknown)
                ));
            }
        }
        if let Some(allowed) = clause
            .requirements
            .as_deref()
            .and_then(instance_requirements)
        {
            summary.push_str(&format!(" Instance requirements: {allowed}."));
        }
        let contradiction = clause
            .requirements
            .as_deref()
            .and_then(instance_type_contradiction);
        if let Some(c) = &contradiction {
            summary.push_str(&format!(" {c}"));
        }
        let pinned = pod_pinned_limits(facts, pod, clause);
        if !pinned.is_empty() && contradiction.is_none() {
            summary.push_str(&format!(
                " The pod itself pins {} (its nodeSelector or node affinity), not the {}: either the pinned size is too small for the requests, or the NodePool's other requirements, its EC2NodeClass or the region rule the pinned type out.",
                pinned.join(" and "),
                if clause.provisioner { "Provisioner" } else { "NodePool" }
            ));
        }
        let narrowed = (failure.offering || failure.tuple)
            .then(|| clause.requirements.as_deref().and_then(offering_narrowing))
            .flatten();
        if let Some(n) = &narrowed {
            summary.push_str(&format!(
                " The offerings are narrowed to {}: a type big enough for the pod must also be offered there, which leaves fewer types.",
                n.describe_with_sources(facts, pod, clause)
            ));
        }
        if let Some(short) = storage_short(facts, clause) {
            summary.push_str(&format!(
                " The ephemeral storage is what no type has: the pod needs ephemeral-storage {}, and Karpenter gives every instance type, however large, the ephemeral storage of the EC2NodeClass's volume for the kubelet (the root volume; Bottlerocket's data volume): {}.",
                short.need,
                match (&short.volume, &short.nodeclass) {
                    (Some(v), Some(nc)) => format!("{v} in EC2NodeClass {nc}"),
                    (Some(v), None) => v.clone(),
                    (None, _) => "20Gi unless its blockDeviceMappings set more".to_string(),
                }
            ));
        }
        if excluded_by_limits {
            summary.push_str(&format!(
                " Karpenter also excluded some of its instance types because they would breach the {}'s limits: a limits problem too (KW205).",
                if clause.provisioner { "Provisioner" } else { "NodePool" }
            ));
        }
        summary.push_str(&first.error.nearest_note(clause));
        let mut diagnosis = Diagnosis::new(&META, summary)
            .with_object(pod)
            .with_node_pool(clause.nodepool.as_deref())
            .with_messages(hit_messages(&hits))
            .with_remediation(remediation(
                facts,
                clause,
                failure,
                pod.map(|p| p.qualified_name()),
                owner.as_ref(),
                &pinned,
                init_heavy.as_ref(),
            ));
        if excluded_by_limits {
            diagnosis = diagnosis.with_related(&["KW205"]);
        }
        out.push(diagnosis);
    }
    out
}

/// The resources for which one init container asks more than the pod's app containers
/// together: the scheduler (and Karpenter) take, per resource, the larger of the biggest
/// init container request and the sum of the app containers' requests, since init
/// containers run one at a time before the app containers start.
#[derive(Debug, Clone, PartialEq)]
struct InitHeavy {
    /// (resource, init container, its request, the app containers' sum as a quantity).
    resources: Vec<(String, String, String, String)>,
    /// The pod has native sidecars: they count with the app containers.
    with_sidecars: bool,
    /// The init containers named whose request includes the sidecars started before them.
    after_sidecars: Vec<String>,
}

impl InitHeavy {
    fn names(&self) -> String {
        let mut names: Vec<&str> = self.resources.iter().map(|r| r.1.as_str()).collect();
        names.dedup();
        names.join(", ")
    }

    fn sentence(&self) -> String {
        // One clause per init container: `requests cpu 12 and memory 48Gi (... cpu 1100m,
        // memory 2112Mi)`.
        let mut parts: Vec<String> = Vec::new();
        let mut containers: Vec<&str> = self.resources.iter().map(|r| r.1.as_str()).collect();
        containers.dedup();
        for init in containers {
            let own: Vec<&(String, String, String, String)> =
                self.resources.iter().filter(|r| r.1 == init).collect();
            let asks: Vec<String> = own.iter().map(|r| format!("{} {}", r.0, r.2)).collect();
            let apps: Vec<String> = own.iter().map(|r| format!("{} {}", r.0, r.3)).collect();
            let together = if self.with_sidecars {
                "the app containers and sidecars together"
            } else {
                "the app containers together"
            };
            let with = if self.after_sidecars.iter().any(|n| n == init) {
                " with the sidecars started before it"
            } else {
                ""
            };
            parts.push(format!(
                "init container {init}{with} requests {} ({together}: {})",
                asks.join(" and "),
                apps.join(", ")
            ));
        }
        let runs = if self.with_sidecars {
            "an init container runs before the app containers, beside only the sidecars started before it"
        } else {
            "an init container runs alone before the app containers"
        };
        format!(
            "Of the pod's own requests, {}: {runs}, so the scheduler and Karpenter count the larger of the two, and that request is what must fit.",
            parts.join("; ")
        )
    }
}

fn init_heavy_requests(pod: &Pod) -> Option<InitHeavy> {
    let mut resources = Vec::new();
    let with_sidecars = pod.init_containers.iter().any(|c| c.is_sidecar());
    let mut after_sidecars: Vec<String> = Vec::new();
    for res in ["cpu", "memory", "ephemeral-storage"] {
        let units =
            |c: &crate::facts::Container| c.requests.get(res).and_then(|q| quantity_units(q));
        // A native sidecar (`restartPolicy: Always`) keeps running: it adds to the init
        // containers after it and to the app containers, as the scheduler counts it.
        let mut sidecars_so_far: u128 = 0;
        let mut heaviest: Option<(u128, &str, String)> = None;
        for c in &pod.init_containers {
            if c.is_sidecar() {
                sidecars_so_far += units(c).unwrap_or(0);
                continue;
            }
            let Some(own) = units(c) else {
                continue;
            };
            let peak = own + sidecars_so_far;
            if heaviest.as_ref().is_none_or(|(best, _, _)| peak > *best) {
                let shown = match (sidecars_so_far, c.requests.get(res)) {
                    (0, Some(q)) => q.clone(),
                    _ => units_text(res, peak),
                };
                heaviest = Some((peak, c.name.as_str(), shown));
                if sidecars_so_far > 0 && !after_sidecars.contains(&c.name) {
                    after_sidecars.push(c.name.clone());
                }
            }
        }
        let Some((init_units, name, value)) = heaviest else {
            continue;
        };
        let apps: u128 = pod
            .containers
            .iter()
            .chain(pod.init_containers.iter().filter(|c| c.is_sidecar()))
            .filter_map(units)
            .sum();
        if init_units > apps {
            resources.push((
                res.to_string(),
                name.to_string(),
                value,
                units_text(res, apps),
            ));
        }
    }
    after_sidecars.retain(|name| resources.iter().any(|r| &r.1 == name));
    (!resources.is_empty()).then_some(InitHeavy {
        resources,
        with_sidecars,
        after_sidecars,
    })
}

/// A sum of `quantity_units` (thousandths) as a quantity: cores or millicores for CPU, the
/// largest binary unit that divides it for byte amounts.
fn units_text(resource: &str, units: u128) -> String {
    if units == 0 {
        return "none".to_string();
    }
    if resource == "cpu" {
        if units.is_multiple_of(1000) {
            format!("{}", units / 1000)
        } else {
            format!("{units}m")
        }
    } else {
        let bytes = units / 1000;
        let unit = [("Gi", 1u128 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)]
            .into_iter()
            .find(|(_, size)| bytes.is_multiple_of(*size));
        match unit {
            Some((suffix, size)) => format!("{}{suffix}", bytes / size),
            None => bytes.to_string(),
        }
    }
}

/// The zones and capacity types a requirements string narrows the offerings to.
struct Narrowing {
    zones: Vec<String>,
    capacity_types: Vec<String>,
}

const ZONE_KEYS: [&str; 2] = ["topology.kubernetes.io/zone", "topology.k8s.aws/zone-id"];
const CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";

impl Narrowing {
    fn parts(&self) -> Vec<(String, Vec<&'static str>)> {
        let mut parts = Vec::new();
        if !self.zones.is_empty() {
            parts.push((
                format!(
                    "zone{} {}",
                    if self.zones.len() > 1 { "s" } else { "" },
                    self.zones.join(", ")
                ),
                ZONE_KEYS.to_vec(),
            ));
        }
        if !self.capacity_types.is_empty() {
            parts.push((
                format!(
                    "capacity type{} {}",
                    if self.capacity_types.len() > 1 {
                        "s"
                    } else {
                        ""
                    },
                    self.capacity_types.join(", ")
                ),
                vec![CAPACITY_TYPE],
            ));
        }
        parts
    }

    fn describe(&self) -> String {
        let parts: Vec<String> = self.parts().into_iter().map(|(p, _)| p).collect();
        parts.join(" and ")
    }

    /// Each part with where it comes from, when the input says.
    fn describe_with_sources(
        &self,
        facts: &Facts,
        pod: Option<&crate::facts::ObjectRef>,
        clause: &Clause,
    ) -> String {
        let parts: Vec<String> = self
            .parts()
            .into_iter()
            .map(|(p, keys)| format!("{p}{}", source(facts, pod, clause, &keys)))
            .collect();
        parts.join(" and ")
    }
}

/// The size-capping requirements (see `size_limits`) on keys the pod's own nodeSelector or
/// node affinity sets and the NodePool in the input does not: a pin widening the NodePool
/// cannot lift.
fn pod_pinned_limits(facts: &Facts, pod: Option<&ObjectRef>, clause: &Clause) -> Vec<String> {
    let Some(pod) = pod.and_then(|r| facts.pod(r)) else {
        return Vec::new();
    };
    let pool = clause.nodepool.as_deref().and_then(|n| facts.nodepool(n));
    SIZE_KEYS
        .iter()
        .filter(|key| {
            pod.selects_on(key)
                && !pool.is_some_and(|np| np.requirements.iter().any(|r| r.key == **key))
        })
        .filter_map(|key| requirement_on(clause.requirements.as_deref()?, key))
        .filter(|r| !r.contains(" Gt ") && !r.contains(" Exists"))
        .collect()
}

/// ` (by the pod's nodeSelector/affinity)` or ` (by NodePool <np>)` for requirements on
/// `keys`, when the input says which.
fn source(
    facts: &Facts,
    pod: Option<&crate::facts::ObjectRef>,
    clause: &Clause,
    keys: &[&str],
) -> String {
    let from_pod = pod
        .and_then(|r| facts.pod(r))
        .is_some_and(|p| keys.iter().any(|k| p.selects_on(k)));
    let from_pool = clause
        .nodepool
        .as_deref()
        .and_then(|n| facts.nodepool(n))
        .is_some_and(|np| {
            np.requirements
                .iter()
                .any(|r| keys.contains(&r.key.as_str()))
        });
    let kind = if clause.provisioner {
        "Provisioner"
    } else {
        "NodePool"
    };
    let np = clause.nodepool.as_deref().unwrap_or_default();
    match (from_pod, from_pool) {
        (true, true) => format!(" (by the pod's nodeSelector/affinity and {kind} {np})"),
        (true, false) => " (by the pod's nodeSelector/affinity)".to_string(),
        (false, true) => format!(" (by {kind} {np})"),
        (false, false) => String::new(),
    }
}

/// The `In` values of the zone and capacity-type requirements, when a requirements string
/// has them (`topology.kubernetes.io/zone In [us-east-1a]`, `karpenter.sh/capacity-type In
/// [spot]`).
fn offering_narrowing(requirements: &str) -> Option<Narrowing> {
    let values_of = |key: &str| -> Vec<String> {
        requirements
            .split(", ")
            .map(str::trim)
            .filter_map(|r| r.strip_prefix(key)?.trim_start().strip_prefix("In ["))
            .flat_map(|v| v.trim_end_matches(']').split_whitespace())
            .map(str::to_string)
            .collect()
    };
    let mut zones: Vec<String> = Vec::new();
    for k in ZONE_KEYS {
        zones.extend(values_of(k));
    }
    let capacity_types = values_of(CAPACITY_TYPE);
    (!zones.is_empty() || !capacity_types.is_empty()).then_some(Narrowing {
        zones,
        capacity_types,
    })
}

fn failure_sentence(f: &InstanceTypeFailure) -> &'static str {
    if f.tuple {
        "each of its requirements, resources and offerings is met by some instance type, but no single type meets all three."
    } else if f.requirements && f.resources && f.offering {
        "no instance type meets its requirements, has enough resources and has an available offering."
    } else if f.requirements && f.resources {
        "no instance type both meets its requirements and has enough resources."
    } else if f.resources && f.offering {
        "no instance type with enough resources has an available offering."
    } else if f.resources {
        "no instance type it allows has enough resources."
    } else {
        "no instance type meets all of its requirements."
    }
}

/// The instance-shaping requirements of a requirements string (type, family, size, cpu...).
fn instance_requirements(requirements: &str) -> Option<String> {
    let picked: Vec<&str> = requirements
        .split(", ")
        .map(str::trim)
        .filter(|r| {
            r.starts_with("node.kubernetes.io/instance-type ")
                || r.starts_with("karpenter.k8s.aws/instance-")
        })
        .collect();
    (!picked.is_empty()).then(|| picked.join(", "))
}

/// The instance-type attributes Karpenter derives from a type's name, as (requirement key,
/// attribute of the parsed name).
const NAME_ATTRIBUTES: [(&str, NameAttribute); 4] = [
    ("karpenter.k8s.aws/instance-category", |n| {
        n.category.clone()
    }),
    ("karpenter.k8s.aws/instance-family", |n| n.family.clone()),
    ("karpenter.k8s.aws/instance-generation", |n| {
        n.generation.clone()
    }),
    ("karpenter.k8s.aws/instance-size", |n| n.size.clone()),
];

type NameAttribute = fn(&InstanceTypeName) -> String;

/// An EC2 instance type name split like Karpenter's well-known labels: `m7gd.2xlarge` is
/// family `m7gd`, category `m`, generation `7`, size `2xlarge`.
struct InstanceTypeName {
    family: String,
    category: String,
    generation: String,
    size: String,
}

impl InstanceTypeName {
    fn parse(name: &str) -> Option<Self> {
        let (family, size) = name.split_once('.')?;
        let category: String = family
            .chars()
            .take_while(|c| c.is_ascii_lowercase())
            .collect();
        let generation: String = family[category.len()..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        (!category.is_empty() && !generation.is_empty() && !size.is_empty()).then(|| {
            InstanceTypeName {
                family: family.to_string(),
                category,
                generation,
                size: size.to_string(),
            }
        })
    }
}

/// When the requirements name instance types (`node.kubernetes.io/instance-type In [..]`) that
/// their own category / family / generation / size requirements exclude, no instance type can
/// ever match, whatever the resources: say which requirement rules out which types.
fn instance_type_contradiction(requirements: &str) -> Option<String> {
    let types = in_values(requirements, "node.kubernetes.io/instance-type")?;
    let parsed: Vec<(&String, InstanceTypeName)> = types
        .iter()
        .map(|t| Some((t, InstanceTypeName::parse(t)?)))
        .collect::<Option<_>>()?;
    let constraints: Vec<(&str, Vec<String>, NameAttribute)> = NAME_ATTRIBUTES
        .iter()
        .filter_map(|(key, attribute)| Some((*key, in_values(requirements, key)?, *attribute)))
        .collect();
    let excluded_by = |name: &InstanceTypeName| {
        constraints
            .iter()
            .find(|(_, allowed, attribute)| !allowed.contains(&attribute(name)))
    };
    if parsed.is_empty() || parsed.iter().any(|(_, name)| excluded_by(name).is_none()) {
        return None;
    }
    let mut keys: Vec<String> = Vec::new();
    let mut why: Vec<String> = Vec::new();
    for (t, name) in &parsed {
        let (key, allowed, attribute) = excluded_by(name)?;
        let requirement = format!("{key} In [{}]", allowed.join(" "));
        if !keys.contains(&requirement) {
            keys.push(requirement);
        }
        let short = key.trim_start_matches("karpenter.k8s.aws/instance-");
        why.push(format!("{t} is {short} {}", attribute(name)));
    }
    Some(format!(
        "The requirements exclude each other: node.kubernetes.io/instance-type In [{}] against {} ({}), so no instance type can match, however large.",
        types.join(" "),
        keys.join(" and "),
        why.join("; "),
    ))
}

/// A pod CPU request that is a milli-CPU value written without its `m`: the clause's
/// resources minus the daemonset overhead, when that is 1000 cores or more. Such a request fits
/// no instance type a NodePool normally allows (the largest c, m and r types have 192 vCPUs;
/// only a few high-memory types go beyond), and `cpu: 1500` for `1500m` is the classic slip.
/// Karpenter marks only the million-core case itself (`m vs M typo?`).
fn clause_whole_core_request(clause: &Clause) -> Option<u64> {
    let total = clause
        .resources
        .as_deref()
        .and_then(|r| resource_value(r, "cpu"))
        .and_then(|q| cpu_cores(&q))?;
    let overhead = clause
        .daemonset_overhead
        .as_deref()
        .and_then(|o| resource_value(o, "cpu"))
        .and_then(|q| cpu_cores(&q))
        .unwrap_or(0.0);
    let own = total - overhead;
    (1000.0..1e6).contains(&own).then(|| own.round() as u64)
}

/// A pod whose ephemeral-storage need is larger than the node's: Karpenter gives every
/// instance type the ephemeral storage of the EC2NodeClass's root volume (20Gi unless its
/// `blockDeviceMappings` say more), so no instance type, however large, fits it.
struct StorageShort {
    /// The need as Karpenter printed it (requests plus daemonset overhead).
    need: String,
    need_gib: f64,
    /// The volume size the EC2NodeClass sets, `None` for the default.
    volume: Option<String>,
    nodeclass: Option<String>,
    device: String,
}

const GIB_UNITS: f64 = 1000.0 * 1_073_741_824.0;

fn storage_short(facts: &Facts, clause: &Clause) -> Option<StorageShort> {
    let need = clause
        .resources
        .as_deref()
        .and_then(|r| resource_value(r, "ephemeral-storage"))?;
    let need_gib = quantity_units(&need)? as f64 / GIB_UNITS;
    let nodeclass = clause
        .requirements
        .as_deref()
        .and_then(|r| single_value(r, "karpenter.k8s.aws/ec2nodeclass"))
        .or_else(|| {
            clause
                .nodepool
                .as_deref()
                .and_then(|np| facts.nodepool(np))
                .and_then(|p| p.nodeclass_ref.clone())
        });
    // The largest volume stands for the one that holds the kubelet's data (the root volume on
    // AL2/AL2023, the data volume on Bottlerocket).
    let mapped = nodeclass
        .as_deref()
        .and_then(|n| facts.nodeclass(n))
        .and_then(|c| {
            c.block_device_mappings
                .iter()
                .filter_map(|m| {
                    let size = m.volume_size.clone()?;
                    let gib = quantity_units(&size)? as f64 / GIB_UNITS;
                    Some((gib, size, m.device_name.clone()))
                })
                .max_by(|a, b| a.0.total_cmp(&b.0))
        });
    let (volume_gib, volume, device) = match mapped {
        Some((gib, size, device)) => (gib, Some(size), device),
        None => (20.0, None, None),
    };
    (need_gib > volume_gib).then(|| StorageShort {
        need,
        need_gib,
        volume,
        nodeclass,
        device: device.unwrap_or_else(|| "/dev/xvda".to_string()),
    })
}

/// `1.5`, `2`, `0.064`: millicores as cores without trailing zeros. Integer arithmetic: a
/// float's `{:.3}` would link the float printer (about 5 KB of the gzipped web module).
fn millicores_text(millicores: u64) -> String {
    let (whole, frac) = (millicores / 1000, millicores % 1000);
    if frac == 0 {
        return whole.to_string();
    }
    let frac = format!("{frac:03}");
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

/// A DEBUG `instance types were excluded because they would breach limits` line for `np`.
pub fn limits_exclusion_for(facts: &Facts, np: &str) -> bool {
    facts
        .messages_containing("would breach")
        .any(|m| m.nodepool.as_deref() == Some(np) || contains_ignore_ascii_case(&m.text, np))
}

fn remediation(
    facts: &Facts,
    clause: &Clause,
    failure: &InstanceTypeFailure,
    pod: Option<String>,
    owner: Option<&ObjectRef>,
    pinned: &[String],
    init_heavy: Option<&InitHeavy>,
) -> Vec<Remediation> {
    let np = clause.nodepool.as_deref().unwrap_or("<nodepool>");
    let mut steps = Vec::new();
    if let Some(n) = (failure.offering || failure.tuple)
        .then(|| clause.requirements.as_deref().and_then(offering_narrowing))
        .flatten()
    {
        let mut widen = Vec::new();
        if !n.zones.is_empty() {
            widen.push("more zones");
        }
        if n.capacity_types.len() == 1 {
            widen.push(if n.capacity_types[0] == "spot" {
                "on-demand next to spot"
            } else {
                "another capacity type"
            });
        }
        if !widen.is_empty() {
            steps.push(Remediation::text(format!(
                "Widen the offerings the pod may use ({}): allow {} in the {} requirements and in the pod's nodeSelector/affinity, wherever the restriction is.",
                n.describe(),
                widen.join(" and "),
                if clause.provisioner { "Provisioner's" } else { "NodePool's" }
            )));
        }
    }
    let cpu = clause
        .resources
        .as_deref()
        .and_then(|r| resource_value(r, "cpu"));
    // What to read the pod spec from: the pod, or its workload's template when the input
    // shows the owner but not the pod's name.
    let (ns, name) = split_pod(facts, pod.as_deref());
    let (object, spec) = match owner {
        Some(o) if name.starts_with('<') => (
            format!(
                "{} {} -n {}",
                o.kind.to_ascii_lowercase(),
                o.name,
                o.namespace.as_deref().unwrap_or(&ns)
            ),
            ".spec.template.spec",
        ),
        _ => (format!("pod {name} -n {ns}"), ".spec"),
    };
    let unknown = clause
        .resources
        .as_deref()
        .map(unknown_resources)
        .unwrap_or_default();
    if !unknown.is_empty() {
        let types = in_values(
            clause.requirements.as_deref().unwrap_or(""),
            "node.kubernetes.io/instance-type",
        )
        .filter(|t| !t.is_empty())
        .map_or("<instance types that have the device>".to_string(), |t| {
            t.iter()
                .map(|t| format!("\"{t}\""))
                .collect::<Vec<_>>()
                .join(", ")
        });
        let capacity: String = unknown
            .iter()
            .map(|r| format!("    {r}: \"<devices per node>\"\n"))
            .collect();
        steps.push(Remediation::yaml(
            "Tell Karpenter which instance types carry it with a NodeOverlay (alpha: enable the `NodeOverlay` feature gate, Helm `settings.featureGates.nodeOverlay=true`), giving the count each node's device plugin advertises:",
            format!(
                "apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata:\n  name: {np}-devices\nspec:\n  requirements:\n    - key: node.kubernetes.io/instance-type\n      operator: In\n      values: [{types}]\n  capacity:\n{capacity}"
            ),
        ));
        steps.push(Remediation::text(
            "On a release without NodeOverlay: run the pod on nodes Karpenter does not launch (a managed node group running the device plugin), or have a placeholder pod without the resource (same nodeSelector) make Karpenter launch the node; once the device plugin advertises the resource there, the scheduler places this pod. Dropping the request is no fix: the device plugin only hands devices to containers that request them.",
        ));
        // Wider requirements or smaller requests would not help: no type has the resource.
        return steps;
    }
    if let Some(cores) = clause_whole_core_request(clause).filter(|_| !failure.cpu_typo) {
        steps.push(Remediation::command(
            format!("Check the CPU requests of the pod's containers: `{cores}` is {cores} cores, `{cores}m` {} cores. Fix the workload's manifest.", millicores_text(cores)),
            format!("kubectl get {object} -o jsonpath='{{range {spec}.initContainers[*]}}init {{.name}}: {{.resources.requests.cpu}}{{\"\\n\"}}{{end}}{{range {spec}.containers[*]}}{{.name}}: {{.resources.requests.cpu}}{{\"\\n\"}}{{end}}'"),
        ));
        // Widening the NodePool to a type with that many cores would find none (or the
        // rarest, costliest one): the request is the fix.
        return steps;
    }
    if failure.cpu_typo {
        steps.push(Remediation::command(
            "Check the CPU requests of the pod's containers: `2000m` is two cores, `2000M` two billion. Fix the workload's manifest.",
            format!("kubectl get {object} -o jsonpath='{{range {spec}.initContainers[*]}}init {{.name}}: {{.resources.requests.cpu}}{{\"\\n\"}}{{end}}{{range {spec}.containers[*]}}{{.name}}: {{.resources.requests.cpu}}{{\"\\n\"}}{{end}}'"),
        ));
        // A million cores fits no instance: widening the NodePool or trimming DaemonSets
        // would not help, the request is the fix.
        return steps;
    }
    if let Some(short) = storage_short(facts, clause) {
        // Room for the kubelet's reserve and eviction threshold, in round tens of GiB.
        let size = ((short.need_gib * 1.25 + 5.0) / 10.0).ceil() as u64 * 10;
        let nc = short.nodeclass.as_deref().unwrap_or("<ec2nodeclass>");
        steps.push(Remediation::yaml(
            format!(
                "Give EC2NodeClass {nc}'s nodes a larger volume (`kubectl edit ec2nodeclass {nc}`, keeping its other mappings; {} now; new nodes get it, existing ones keep theirs):",
                short.volume.as_deref().map_or("the default 20Gi", |v| v)
            ),
            format!(
                "spec:\n  blockDeviceMappings:\n    - deviceName: {}\n      ebs:\n        volumeSize: {size}Gi\n        volumeType: gp3\n        encrypted: true\n",
                short.device
            ),
        ));
        steps.push(Remediation::text(format!(
            "Or use the instance store: `instanceStorePolicy: RAID0` on EC2NodeClass {nc} with NVMe instance types (`karpenter.k8s.aws/instance-local-nvme` Gt the need) makes the local disks the ephemeral storage."
        )));
        steps.push(Remediation::text(
            "Or lower the pod's ephemeral-storage request, or give its scratch space a PersistentVolumeClaim (a generic ephemeral volume) instead of node storage.",
        ));
        // A larger type brings no more ephemeral storage: no NodePool widening.
        return steps;
    }
    let contradiction = clause
        .requirements
        .as_deref()
        .and_then(instance_type_contradiction)
        .is_some();
    if contradiction {
        let pool_requirements = if clause.provisioner {
            format!("kubectl get provisioner {np} -o jsonpath='{{.spec.requirements}}{{\"\\n\"}}'")
        } else {
            format!("kubectl get nodepool {np} -o jsonpath='{{.spec.template.spec.requirements}}{{\"\\n\"}}'")
        };
        steps.push(Remediation::command(
            "Make the requirements agree: find which side names the instance type (the pod's nodeSelector or node affinity, or the NodePool) and correct the one that is wrong:",
            format!("kubectl get {object} -o jsonpath='{{{spec}.nodeSelector}}{{\"\\n\"}}{{{spec}.affinity.nodeAffinity}}{{\"\\n\"}}'; {pool_requirements}"),
        ));
    }
    if !pinned.is_empty() {
        if contradiction {
            // The step above names both sides; the pinned type's size is beside the point.
            return steps;
        }
        let types = clause
            .requirements
            .as_deref()
            .and_then(|r| requirement_on(r, "node.kubernetes.io/instance-type"))
            .filter(|r| r.contains(" In ["))
            .and_then(|r| {
                Some(
                    r.split_once(" In [")?
                        .1
                        .trim_end_matches(']')
                        .replace(' ', ","),
                )
            });
        let template = match owner {
            Some(o) => pod_template_of(o, &ns),
            None => "the pod's manifest".to_string(),
        };
        let step = format!(
            "The pod pins {}: widening {kind} {np} cannot lift that. Check that the pinned type has the resources the pod needs and is offered in the zones {np} launches in, then change or drop the pin in {template}:",
            pinned.join(" and "),
            kind = if clause.provisioner { "Provisioner" } else { "NodePool" },
        );
        steps.push(match types {
            Some(types) => Remediation::command(
                step,
                format!("aws ec2 describe-instance-types --instance-types {} --query 'InstanceTypes[].[InstanceType,VCpuInfo.DefaultVCpus,MemoryInfo.SizeInMiB,GpuInfo.Gpus[0].Count]' --output table; aws ec2 describe-instance-type-offerings --location-type availability-zone --filters Name=instance-type,Values={types} --output table", types.replace(',', " ")),
            ),
            None => Remediation::text(step),
        });
        return steps;
    }
    let cores = cpu.as_deref().and_then(cpu_cores).filter(|c| *c < 1e5);
    let gt = cores.map(|c| (c.floor() as u64).max(1)).unwrap_or(4);
    let memory_gt = memory_bound(clause.resources.as_deref(), cores);
    let existing = facts
        .nodepool(np)
        .map(|p| !p.requirements.is_empty())
        .unwrap_or(false);
    // A v1alpha5 Provisioner (before v0.32) keeps its requirements at `spec.requirements`.
    let (kind, resource, path) = if clause.provisioner {
        ("Provisioner", "provisioner", "spec:\n  requirements:\n")
    } else {
        (
            "NodePool",
            "nodepool",
            "spec:\n  template:\n    spec:\n      requirements:\n",
        )
    };
    let indent = if clause.provisioner {
        "    "
    } else {
        "        "
    };
    let (scope_key, scope_values) = instance_scope(clause);
    let scope_values = scope_values
        .iter()
        .map(|v| format!("\"{v}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let requirements = clause.requirements.as_deref().unwrap_or("");
    let mut limits = size_limits(requirements);
    // Categories in place of a family list: the family requirement has to go too, or it keeps
    // every wider type out.
    if scope_key.ends_with("category") {
        if let Some(family) = requirement_on(requirements, "karpenter.k8s.aws/instance-family")
            .filter(|r| r.contains(" In "))
        {
            limits.push(format!("`{family}`"));
        }
    }
    // Nothing to replace when the requirements shown cap no size (a v1.5+ message without
    // them, or a NodePool limited elsewhere): then the step only adds.
    let change = if limits.is_empty() {
        "allow".to_string()
    } else {
        format!("replace {} by", limits.join(" and "))
    };
    steps.push(Remediation::yaml(
        format!(
            "Widen the instance requirements of {kind} {np} (`kubectl edit {resource} {np}`): {change} {} and {} large enough for the pod{}.",
            if scope_key.ends_with("family") { "families" } else { "categories" },
            if memory_gt.is_some() { "CPU and memory bounds (memory in MiB)" } else { "a CPU bound" },
            if existing { ", keeping the other requirements" } else { "" }
        ),
        format!(
            "{path}{indent}- key: {scope_key}\n{indent}  operator: In\n{indent}  values: [{scope_values}]\n{indent}- key: karpenter.k8s.aws/instance-cpu\n{indent}  operator: Gt\n{indent}  values: [\"{gt}\"]\n{}",
            memory_gt.map_or(String::new(), |mib| format!(
                "{indent}- key: karpenter.k8s.aws/instance-memory\n{indent}  operator: Gt\n{indent}  values: [\"{mib}\"]\n"
            ))
        ),
    ));
    if contradiction {
        // No request or overhead change helps while no instance type can match at all.
        return steps;
    }
    // When an init container's request is the larger, lowering the app containers' changes
    // nothing: name the init container to lower.
    let which = match init_heavy {
        Some(h) => format!("the requests of init container {}", h.names()),
        None => "the requests".to_string(),
    };
    steps.push(Remediation::text(match owner {
        Some(o) => format!(
            "Or lower {which} in {} so that they fit the largest allowed type, counting the daemonset overhead every node runs.",
            pod_template_of(o, &ns)
        ),
        None => format!("Or lower {} so that they fit the largest allowed type, counting the daemonset overhead every node runs.", which.replacen("the requests", "the pod's requests", 1)),
    }));
    if clause.daemonset_overhead.is_some() || clause.resources.is_some() {
        steps.push(Remediation::command(
            format!("Or trim the DaemonSets that land on every node of this {kind} (their requests are the daemonset overhead):"),
            "kubectl get daemonsets -A -o custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name,CPU:.spec.template.spec.containers[*].resources.requests.cpu,MEMORY:.spec.template.spec.containers[*].resources.requests.memory",
        ));
    }
    steps
}

/// The resources Karpenter's AWS provider reads from instance types. Anything else a pod
/// requests (an extended resource a device plugin advertises) fits no instance type.
const INSTANCE_TYPE_RESOURCES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "pods",
    "nvidia.com/gpu",
    "amd.com/gpu",
    "aws.amazon.com/neuron",
    "aws.amazon.com/neuroncore",
    "aws.amazon.com/neurondevice",
    "habana.ai/gaudi",
    "vpc.amazonaws.com/pod-eni",
    "vpc.amazonaws.com/efa",
    "vpc.amazonaws.com/PrivateIPv4Address",
];

/// The requested resources (non-zero) no instance type can have. Hugepages are left out:
/// whether an instance type offers them depends on the node's configuration, not on Karpenter.
fn unknown_resources(resources: &str) -> Vec<String> {
    resource_entries(resources)
        .into_iter()
        .filter(|(name, quantity)| {
            !INSTANCE_TYPE_RESOURCES.contains(&name.as_str())
                && !name.starts_with("hugepages-")
                && quantity != "0"
        })
        .map(|(name, _)| name)
        .collect()
}

fn backquoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `karpenter.k8s.aws/instance-memory` lower bound (MiB) to suggest when memory, not CPU,
/// is what no allowed type has enough of: the pod needs more than 4 GiB per core (the most a
/// general-purpose type gives), so a CPU bound alone would still admit types too small.
fn memory_bound(resources: Option<&str>, cores: Option<f64>) -> Option<u128> {
    let memory = resource_value(resources?, "memory")?;
    let mib = quantity_units(&memory)? / 1000 / (1 << 20);
    let per_core_mib = cores.unwrap_or(1.0).max(1.0) * 4096.0;
    (mib as f64 > per_core_mib).then_some(mib)
}

/// Requirement keys that can cap an instance's size.
const SIZE_KEYS: &[&str] = &[
    "node.kubernetes.io/instance-type",
    "karpenter.k8s.aws/instance-size",
    "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/instance-memory",
];

/// The requirements that cap an instance's size, as written: the ones to replace by a lower
/// bound (keeping them beside the suggested requirements would leave the same dead end).
fn size_limits(requirements: &str) -> Vec<String> {
    let capped = |r: &String| !r.contains(" Gt ") && !r.contains(" Exists");
    SIZE_KEYS
        .iter()
        .filter_map(|key| requirement_on(requirements, key))
        .filter(capped)
        .map(|r| format!("`{r}`"))
        .collect()
}

/// The instance kinds the widened requirements should name. Beside a fixed instance-type
/// list (the tight constraint), the NodePool's own family or category requirement stays as it
/// is. Otherwise: kinds that can carry the pod's accelerators, else the categories of the listed
/// instance types, else general purpose, compute and memory (`c m r`) plus the categories the
/// NodePool already named. Suggesting `c m r` to a pod that asks for a GPU would trade one dead
/// end for another.
fn instance_scope(clause: &Clause) -> (&'static str, Vec<String>) {
    const FAMILY: &str = "karpenter.k8s.aws/instance-family";
    const CATEGORY: &str = "karpenter.k8s.aws/instance-category";
    let requirements = clause.requirements.as_deref().unwrap_or("");
    let listed = |key: &str| in_values(requirements, key).filter(|v| !v.is_empty());
    let families = listed(FAMILY);
    let categories = listed(CATEGORY);
    let instance_types = listed("node.kubernetes.io/instance-type");
    if instance_types.is_some() {
        if let Some(families) = families.clone() {
            return (FAMILY, families);
        }
        if let Some(categories) = categories.clone() {
            return (CATEGORY, categories);
        }
    }
    let requests = clause.resources.as_deref().unwrap_or("");
    let requested = |name: &str| resource_value(requests, name).is_some_and(|v| v != "0");
    if requested("nvidia.com/gpu") {
        return (CATEGORY, vec!["g".to_string(), "p".to_string()]);
    }
    if [
        "aws.amazon.com/neuron",
        "aws.amazon.com/neuroncore",
        "aws.amazon.com/neurondevice",
    ]
    .iter()
    .any(|name| requested(name))
    {
        return (CATEGORY, vec!["inf".to_string(), "trn".to_string()]);
    }
    // `r5a.8xlarge` -> `r`, `inf2` -> `inf`, `u-6tb1.metal` -> `u`.
    let category_of = |name: &str| -> String {
        name.chars()
            .take_while(|c| c.is_ascii_lowercase())
            .collect()
    };
    let mut candidates: Vec<String> = instance_types
        .iter()
        .flatten()
        .filter(|t| t.contains('.'))
        .map(|t| category_of(t))
        .collect();
    if candidates.is_empty() {
        candidates = ["c", "m", "r"].map(str::to_string).to_vec();
        candidates.extend(categories.into_iter().flatten());
        candidates.extend(families.iter().flatten().map(|f| category_of(f)));
    }
    let mut out: Vec<String> = Vec::new();
    for category in candidates {
        if !category.is_empty() && !out.contains(&category) {
            out.push(category);
        }
    }
    (CATEGORY, out)
}

/// `(namespace, name)` for a command; a pod named without its namespace takes it from the
/// one pod of that name the input shows.
fn split_pod(facts: &Facts, pod: Option<&str>) -> (String, String) {
    match pod.and_then(|p| p.split_once('/')) {
        Some((ns, name)) => (ns.to_string(), name.to_string()),
        None => {
            let name = pod.unwrap_or("<pod>");
            let mut same = facts.pods.iter().filter(|p| p.meta.name == name);
            let ns = match (same.next(), same.next()) {
                (Some(p), None) => p.meta.namespace.clone(),
                _ => None,
            };
            (
                ns.unwrap_or_else(|| "<namespace>".to_string()),
                name.to_string(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{
        cpu_cores, instance_scope, instance_type_contradiction, memory_bound, offering_narrowing,
        split_pod, unknown_resources,
    };

    #[test]
    fn millicores_print_as_cores_without_trailing_zeros() {
        for (millicores, text) in [
            (0, "0"),
            (8, "0.008"),
            (64, "0.064"),
            (1500, "1.5"),
            (2000, "2"),
            (128_250, "128.25"),
        ] {
            assert_eq!(super::millicores_text(millicores), text);
        }
    }
    use crate::facts::{Facts, Meta, Pod};

    #[test]
    fn a_pod_named_without_namespace_takes_the_listed_pods_namespace() {
        let mut facts = Facts::default();
        let pod = |ns: &str| Pod {
            meta: Meta {
                name: "trainer-0".into(),
                namespace: Some(ns.into()),
                ..Meta::default()
            },
            ..Pod::default()
        };
        facts.pods.push(pod("ml"));
        assert_eq!(
            split_pod(&facts, Some("trainer-0")),
            ("ml".to_string(), "trainer-0".to_string())
        );
        // Two pods of that name: the namespace stays to be filled in.
        facts.pods.push(pod("ml-staging"));
        assert_eq!(split_pod(&facts, Some("trainer-0")).0, "<namespace>");
        assert_eq!(
            split_pod(&facts, Some("ops/trainer-0")),
            ("ops".to_string(), "trainer-0".to_string())
        );
    }
    use crate::rules::kw2xx::scheduling::parse_clause;
    use crate::testing::{check_only, ids};

    fn scope(requirements: &str, resources: &str) -> (&'static str, Vec<String>) {
        instance_scope(&parse_clause(&format!(
            "Failed to schedule pod, no instance type has enough resources, requirements={requirements}, resources={resources}"
        )))
    }

    /// Before v0.32 the limits are a Provisioner's.
    #[test]
    fn limits_of_a_provisioner_are_named_so() {
        let text = "2023-08-15T09:14:02.301Z\tDEBUG\tcontroller.provisioner\t390 out of 744 instance types were excluded because they would breach provisioner limits\t{\"commit\": \"61b3e1e\", \"provisioner\": \"default\"}\n2023-08-15T09:14:02.320Z\tERROR\tcontroller.provisioner\tCould not schedule pod, incompatible with provisioner \"default\", daemonset overhead={\"cpu\":\"200m\"}, no instance type satisfied resources {\"cpu\":\"4200m\"} and requirements karpenter.sh/provisioner-name In [default] (no instance type has enough resources)\t{\"commit\": \"61b3e1e\", \"pod\": \"web/frontend-0\"}";
        let d = &check_only("KW201", text).diagnoses[0];
        assert!(
            d.summary.contains("breach the Provisioner's limits"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn widened_requirements_keep_what_the_pod_needs() {
        let category = "karpenter.k8s.aws/instance-category";
        let family = "karpenter.k8s.aws/instance-family";
        // Beside a fixed type list, the NodePool's own family stays.
        assert_eq!(
            scope(
                "karpenter.k8s.aws/instance-family In [g5 g6], node.kubernetes.io/instance-type In [g5.2xlarge]",
                r#"{"cpu":"8210m","nvidia.com/gpu":"1"}"#
            ),
            (family, vec!["g5".to_string(), "g6".to_string()])
        );
        // A GPU pod gets GPU categories, never c/m/r.
        assert_eq!(
            scope(
                "karpenter.sh/capacity-type In [on-demand]",
                r#"{"cpu":"4","nvidia.com/gpu":"1"}"#
            ),
            (category, vec!["g".to_string(), "p".to_string()])
        );
        assert_eq!(
            scope(
                "karpenter.sh/capacity-type In [on-demand]",
                r#"{"cpu":"4","aws.amazon.com/neuron":"1"}"#
            )
            .1,
            ["inf", "trn"]
        );
        // A memory-optimised type list stays memory optimised.
        assert_eq!(
            scope(
                "karpenter.sh/nodepool In [default], node.kubernetes.io/instance-type In [r5a.8xlarge r6i.8xlarge]",
                r#"{"cpu":"29500m","memory":"246400Mi"}"#
            ),
            (category, vec!["r".to_string()])
        );
        // Without a type list the family was the limit: widen from c/m/r, keeping its category.
        assert_eq!(
            scope(
                "karpenter.k8s.aws/instance-family In [t3 t3a]",
                r#"{"cpu":"16"}"#
            )
            .1,
            ["c", "m", "r", "t"]
        );
        assert_eq!(
            scope("kubernetes.io/arch In [amd64]", r#"{"cpu":"16"}"#).1,
            ["c", "m", "r"]
        );
        assert_eq!(
            scope(
                "kubernetes.io/arch In [amd64]",
                r#"{"cpu":"16","nvidia.com/gpu":"0"}"#
            )
            .1,
            ["c", "m", "r"]
        );
    }

    #[test]
    fn a_device_plugin_resource_fits_no_instance_type() {
        assert_eq!(
            unknown_resources(r#"{"amd.com/ama_u30":"1","cpu":"150m","pods":"4"}"#),
            ["amd.com/ama_u30"]
        );
        // Resources instance types report, hugepages, and zero requests are not named.
        assert!(unknown_resources(
            r#"{"cpu":"2","nvidia.com/gpu":"1","vpc.amazonaws.com/efa":"1","hugepages-2Mi":"1Gi","smarter-devices/fuse":"0"}"#
        )
        .is_empty());
        let report = check_only(
            "KW201",
            r#"  Warning  FailedScheduling  1m  karpenter  Failed to schedule pod, incompatible with nodepool "build", daemonset overhead={"cpu":"100m","pods":"2"}, no instance type satisfied resources {"cpu":"1100m","pods":"3","smarter-devices/fuse":"1"} and requirements karpenter.sh/nodepool In [build] (no instance type has enough resources)"#,
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("`smarter-devices/fuse`, which no EC2 instance type reports"),
            "{}",
            d.summary
        );
        let overlay = d.remediation[0].yaml.as_deref().unwrap_or_default();
        assert!(
            overlay.contains("kind: NodeOverlay") && overlay.contains("smarter-devices/fuse: "),
            "{overlay}"
        );
        assert!(
            !d.remediation.iter().any(|r| r.text.contains("Widen")),
            "{:?}",
            d.remediation
        );
    }

    #[test]
    fn a_memory_bound_only_when_memory_outgrows_the_cores() {
        // 64 GiB for a fifth of a core: a CPU bound alone would admit 2-core types.
        assert_eq!(
            memory_bound(
                Some(r#"{"cpu":"155m","memory":"65650Mi"}"#),
                cpu_cores("155m")
            ),
            Some(65650)
        );
        assert_eq!(
            memory_bound(Some(r#"{"cpu":"2","memory":"64Gi"}"#), cpu_cores("2")),
            Some(65536)
        );
        // 4 GiB per core or less: general-purpose shapes, the CPU bound is enough.
        assert_eq!(
            memory_bound(Some(r#"{"cpu":"4","memory":"16Gi"}"#), cpu_cores("4")),
            None
        );
        assert_eq!(memory_bound(Some(r#"{"cpu":"4"}"#), cpu_cores("4")), None);
        assert_eq!(
            memory_bound(Some(r#"{"memory":"1.5Gi"}"#), None),
            None,
            "a fractional quantity is not guessed at"
        );
        let report = check_only(
            "KW201",
            r#"  Warning  FailedScheduling  2m  karpenter  Failed to schedule pod, incompatible with nodepool "default", daemonset overhead={"cpu":"155m","memory":"114Mi","pods":"3"}, no instance type satisfied resources {"cpu":"155m","memory":"65650Mi","pods":"4"} and requirements karpenter.sh/nodepool In [default], node.kubernetes.io/instance-type In [m5.large m5.xlarge] (no instance type has enough resources)"#,
        );
        let widen = &report.diagnoses[0].remediation[0];
        assert!(
            widen.yaml.as_deref().is_some_and(|y| y.contains(
                "instance-memory\n          operator: Gt\n          values: [\"65650\"]"
            )),
            "{widen:?}"
        );
    }

    #[test]
    fn v1_5_enough_resources_event() {
        let report = check_only(
            "KW201",
            r#"  Warning  FailedScheduling  90s (x2 over 6m40s)  karpenter  Failed to schedule pod, no instance type has enough resources, requirements=karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [default], node.kubernetes.io/instance-type In [r5a.8xlarge], resources={"cpu":"29500m","memory":"246400Mi","pods":"6"}"#,
        );
        assert_eq!(ids(&report), ["KW201"]);
        let d = &report.diagnoses[0];
        assert_eq!(d.node_pool.as_deref(), Some("default"));
        assert!(
            d.summary.contains("cpu 29500m, memory 246400Mi"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("r5a.8xlarge"), "{}", d.summary);
    }

    #[test]
    fn v1_14_min_max_resources_are_named_as_ranges() {
        let report = check_only(
            "KW201",
            r#"  Warning  FailedScheduling  2m  karpenter  Failed to schedule pod, no instance type has enough resources, requirements=karpenter.sh/nodepool In [default], node.kubernetes.io/instance-type In [m5.large], resources=min={"cpu":"1250m","memory":"512Mi","nvidia.com/gpu":"1","pods":"3"}, max={"cpu":"1690m","memory":"512Mi","nvidia.com/gpu":"1","pods":"4"}"#,
        );
        assert_eq!(ids(&report), ["KW201"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains(
                "It needs cpu 1250m to 1690m, memory 512Mi, nvidia.com/gpu 1, pods 3 to 4 (its requests plus the daemonset overhead, which differs between instance types)."
            ),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("min="), "{}", d.summary);
        // The GPU request is read from the range form too: the widened requirements keep GPUs.
        assert!(
            d.remediation.iter().any(|r| r
                .yaml
                .as_deref()
                .is_some_and(|y| y.contains(r#"values: ["g", "p"]"#))),
            "{:#?}",
            d.remediation
        );
    }

    #[test]
    fn bare_json_and_a_broken_range_stay_as_before() {
        // Equal bounds print as the bare JSON: no range, no "differs".
        let report = check_only(
            "KW201",
            r#"Failed to schedule pod, no instance type has enough resources, requirements=karpenter.sh/nodepool In [default], resources={"cpu":"1690m","pods":"4"}"#,
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("It needs cpu 1690m, pods 4 (its requests plus the daemonset overhead)."),
            "{}",
            d.summary
        );
        // A `min=` without its `max=` is not the range form: quoted as written.
        let report = check_only(
            "KW201",
            r#"Failed to schedule pod, no instance type has enough resources, requirements=karpenter.sh/nodepool In [default], resources=min={"cpu":"1"}"#,
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains(
                r#"It needs min={"cpu":"1"} (its requests plus the daemonset overhead)."#
            ),
            "{}",
            d.summary
        );
    }

    #[test]
    fn v1_0_satisfied_resources_log_names_overhead() {
        let report = check_only(
            "KW201",
            r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"trino-0","namespace":"analytics"},"error":"incompatible with nodepool \"default\", daemonset overhead={\"cpu\":\"500m\",\"memory\":\"640Mi\",\"pods\":\"5\"}, no instance type satisfied resources {\"cpu\":\"29500m\",\"memory\":\"246400Mi\",\"pods\":\"6\"} and requirements karpenter.sh/nodepool In [default], node.kubernetes.io/instance-type In [r5a.8xlarge] (no instance type has enough resources)"}"#,
        );
        assert_eq!(ids(&report), ["KW201"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.starts_with("Pod analytics/trino-0"),
            "{}",
            d.summary
        );
        assert!(
            d.summary.contains("daemonset overhead cpu 500m"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn combined_and_tuple_forms() {
        for phrase in [
            "no instance type met the scheduling requirements or had enough resources or had a required offering",
            "no instance type met the scheduling requirements or had enough resources",
            "no instance type had enough resources or had a required offering",
            "no instance type met all requirements",
            "no instance type met the requirements/resources/offering tuple",
            "no instance type which met the scheduling requirements and the required offering had the required resources",
        ] {
            let text = format!("Failed to schedule pod, {phrase}, requirements=karpenter.sh/nodepool In [a], resources={{\"cpu\":\"1\"}}");
            assert_eq!(ids(&check_only("KW201", &text)), ["KW201"], "{phrase}");
        }
    }

    #[test]
    fn whole_cores_for_millicores_lead() {
        // v1.5+: `cpu: "2000"` meant for `2000m`, plus 350m of daemonset overhead (which v1.5
        // folds into resources without printing it).
        let report = check_only(
            "KW201",
            r#"  Warning  FailedScheduling  30s  karpenter  Failed to schedule pod, incompatible with nodepool "general", daemonset overhead={"cpu":"350m","memory":"512Mi","pods":"4"}, no instance type satisfied resources {"cpu":"2000350m","memory":"4608Mi","pods":"5"} and requirements karpenter.sh/nodepool In [general], karpenter.k8s.aws/instance-category In [c m] (no instance type has enough resources)"#,
        );
        assert_eq!(ids(&report), ["KW201"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("requests 2000 CPU cores"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("`2000m` is 2 cores"), "{}", d.summary);
        let steps = crate::testing::remediation_text(d);
        assert!(steps.contains("`2000` is 2000 cores"), "{steps}");
        // No `instance-cpu Gt 2000`: no NodePool widening finds such a type.
        assert!(!steps.contains("Widen"), "{steps}");
    }

    #[test]
    fn ephemeral_storage_beyond_the_node_volume_leads() {
        let error = |storage: &str| {
            format!(
                r#"{{"level":"ERROR","message":"could not schedule pod","Pod":{{"name":"spark-exec-3","namespace":"etl"}},"error":"no instance type has enough resources, requirements=karpenter.k8s.aws/ec2nodeclass In [spark], karpenter.sh/nodepool In [spark], resources={{\"cpu\":\"4250m\",\"ephemeral-storage\":\"{storage}\",\"memory\":\"16684Mi\",\"pods\":\"6\"}}"}}"#
            )
        };
        let nodeclass = "\n---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: spark\nspec:\n  blockDeviceMappings:\n  - deviceName: /dev/xvda\n    ebs:\n      volumeSize: 100Gi\n";
        let report = check_only("KW201", &error("64Gi"));
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("ephemeral-storage 64Gi"),
            "{}",
            d.summary
        );
        let steps = crate::testing::remediation_text(d);
        assert!(steps.contains("volumeSize: 90Gi"), "{steps}");
        assert!(!steps.contains("Widen"), "{steps}");
        // The EC2NodeClass gives 100Gi: not the storage, the usual widening.
        let report = check_only("KW201", &format!("{}{nodeclass}", error("64Gi")));
        let d = &report.diagnoses[0];
        assert!(
            !d.summary.contains("ephemeral storage is what"),
            "{}",
            d.summary
        );
        assert!(crate::testing::remediation_text(d).contains("Widen"));
        // Within the default 20Gi: not the storage either.
        let report = check_only("KW201", &error("10Gi"));
        assert!(!report.diagnoses[0]
            .summary
            .contains("ephemeral storage is what"));
    }

    #[test]
    fn a_large_but_real_cpu_request_is_no_slip() {
        // 190 cores fit the largest c/m/r sizes: widening is the advice, not a typo.
        let report = check_only(
            "KW201",
            r#"Failed to schedule pod, no instance type has enough resources, requirements=karpenter.sh/nodepool In [default], karpenter.k8s.aws/instance-size In [xlarge 2xlarge], resources={"cpu":"190","memory":"300Gi","pods":"5"}"#,
        );
        assert_eq!(ids(&report), ["KW201"]);
        let d = &report.diagnoses[0];
        assert!(!d.summary.contains("without its `m`"), "{}", d.summary);
        assert!(crate::testing::remediation_text(d).contains("Widen"));
    }

    #[test]
    fn cpu_typo_leads() {
        let report = check_only(
            "KW201",
            r#"Failed to schedule pod, no instance type has enough resources, requirements=karpenter.sh/nodepool In [default], resources={"cpu":"2000000","pods":"1"} (CPU request >= 1 Million, m vs M typo?)"#,
        );
        assert_eq!(ids(&report), ["KW201"]);
        assert!(report.diagnoses[0].summary.contains("`m`/`M` typo"));
        // The request is the fix: no NodePool widening for a million cores.
        let steps = crate::testing::remediation_text(&report.diagnoses[0]);
        assert!(!steps.contains("Widen"), "{steps}");
    }

    #[test]
    fn an_init_container_asking_more_than_the_app_containers_is_named() {
        let describe = |init_cpu: &str| {
            format!("Name:             reindex-0\nNamespace:        search\nStatus:           Pending\nInit Containers:\n  warm-cache:\n    Image:      x\n    Requests:\n      cpu:     {init_cpu}\n      memory:  48Gi\nContainers:\n  reindex:\n    Image:      y\n    Requests:\n      cpu:     1\n      memory:  2Gi\n  metrics:\n    Image:      z\n    Requests:\n      cpu:     100m\n      memory:  64Mi\nEvents:\n  Type     Reason            Age  From       Message\n  ----     ------            ---  ----       -------\n  Warning  FailedScheduling  40s  karpenter  Failed to schedule pod, incompatible with nodepool \"general\", daemonset overhead={{\"cpu\":\"180m\"}}, no instance type has enough resources, requirements=karpenter.sh/nodepool In [general], resources={{\"cpu\":\"12180m\",\"memory\":\"49272Mi\",\"pods\":\"6\"}}\n")
        };
        let d = &check_only("KW201", &describe("12")).diagnoses[0];
        assert!(
            d.summary.contains("init container warm-cache requests cpu 12 and memory 48Gi (the app containers together: cpu 1100m, memory 2112Mi)"),
            "{}",
            d.summary
        );
        let steps = crate::testing::remediation_text(d);
        assert!(
            steps.contains("Or lower the requests of init container warm-cache"),
            "{steps}"
        );
        // An init container below the app containers' sum (CPU) is named for memory only.
        let d = &check_only("KW201", &describe("500m")).diagnoses[0];
        assert!(
            d.summary.contains("init container warm-cache requests memory 48Gi (the app containers together: memory 2112Mi)"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn native_sidecars_count_with_the_app_containers_and_the_init_containers_after_them() {
        let pod = |sidecar_policy: &str| {
            format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: migrate-0\n  namespace: shop\nspec:\n  initContainers:\n  - name: istio-proxy\n    image: proxy\n    {sidecar_policy}\n    resources:\n      requests:\n        cpu: \"2\"\n  - name: migrate\n    image: m\n    resources:\n      requests:\n        cpu: \"10\"\n  containers:\n  - name: app\n    image: a\n    resources:\n      requests:\n        cpu: \"1\"\nstatus:\n  phase: Pending\n---\n{{\"level\":\"ERROR\",\"message\":\"could not schedule pod\",\"Pod\":{{\"name\":\"migrate-0\",\"namespace\":\"shop\"}},\"error\":\"incompatible with nodepool \\\"general\\\", daemonset overhead={{\\\"cpu\\\":\\\"200m\\\"}}, no instance type has enough resources, requirements=karpenter.sh/nodepool In [general], resources={{\\\"cpu\\\":\\\"12200m\\\",\\\"pods\\\":\\\"4\\\"}}\"}}\n")
        };
        let d = &check_only("KW201", &pod("restartPolicy: Always")).diagnoses[0];
        assert!(
            d.summary.contains("init container migrate with the sidecars started before it requests cpu 12 (the app containers and sidecars together: cpu 3)"),
            "{}",
            d.summary
        );
        // Without the policy it is an ordinary init container: it runs alone, before migrate.
        let d = &check_only("KW201", &pod("imagePullPolicy: Always")).diagnoses[0];
        assert!(
            d.summary.contains(
                "init container migrate requests cpu 10 (the app containers together: cpu 1)"
            ),
            "{}",
            d.summary
        );
    }

    #[test]
    fn a_pod_shown_without_its_name_is_named_by_its_controller() {
        let event = r#"Events:
  Type     Reason            Age  From       Message
  ----     ------            ---  ----       -------
  Warning  FailedScheduling  40s  karpenter  Failed to schedule pod, incompatible with nodepool "general", no instance type satisfied resources {"cpu":"2000000000200m","pods":"5"} and requirements karpenter.sh/nodepool In [general] (no instance type has enough resources (CPU request >= 1 Million, m vs M typo?))
"#;
        let text = format!("Status:           Pending\nControlled By:    ReplicaSet/ingest-worker-5c7b9d8f6\nContainers:\n  ingest-worker:\n    Image:  x\nQoS Class:       Burstable\n{event}");
        let report = check_only("KW201", &text);
        assert_eq!(ids(&report), ["KW201"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .starts_with("A pod of Deployment ingest-worker requests a million CPU cores"),
            "{}",
            d.summary
        );
        let steps = crate::testing::remediation_text(d);
        assert!(steps.contains("kubectl get deployment ingest-worker -n <namespace> -o jsonpath='{range .spec.template.spec.initContainers[*]}"), "{steps}");
        assert!(!steps.contains("<pod>"), "{steps}");
        // With its name the pod itself is read, in its namespace.
        let text = format!("Name:             ingest-worker-5c7b9d8f6-q8z2m\nNamespace:        etl\nStatus:           Pending\nControlled By:    ReplicaSet/ingest-worker-5c7b9d8f6\nContainers:\n  ingest-worker:\n    Image:  x\n{event}");
        let report = check_only("KW201", &text);
        let steps = crate::testing::remediation_text(&report.diagnoses[0]);
        assert!(steps.contains("kubectl get pod ingest-worker-5c7b9d8f6-q8z2m -n etl -o jsonpath='{range .spec.initContainers[*]}"), "{steps}");
    }

    #[test]
    fn offering_only_and_scheduler_text_are_not_kw201() {
        for text in [
            "Failed to schedule pod, no instance type has the required offering, requirements=a In [b], resources={}",
            "Failed to schedule pod, no instance type met the scheduling requirements or had a required offering, requirements=a In [b], resources={}",
            "0/10 nodes are available: 10 Insufficient cpu, 10 Insufficient memory.",
            "no instance types satisfy requirements of amis [ami-0f1e2d3c4b5a69788]",
        ] {
            assert!(ids(&check_only("KW201", text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn one_diagnosis_per_nodepool_with_nearest() {
        let report = check_only(
            "KW201",
            r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"p","namespace":"n"},"error":"did not tolerate taint (taint=CriticalAddonsOnly:NoSchedule); no instance type has enough resources, requirements=karpenter.sh/nodepool In [big], resources={\"cpu\":\"64\"}"}
{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"p","namespace":"n"},"error":"did not tolerate taint (taint=CriticalAddonsOnly:NoSchedule); no instance type has enough resources, requirements=karpenter.sh/nodepool In [big], resources={\"cpu\":\"64\"}"}"#,
        );
        assert_eq!(ids(&report), ["KW201"]);
        let d = &report.diagnoses[0];
        assert_eq!(d.evidence.len(), 1);
        assert_eq!(d.evidence[0].count, 2);
    }

    #[test]
    fn instance_type_named_against_its_own_category() {
        assert_eq!(
            instance_type_contradiction("karpenter.k8s.aws/instance-category In [c r], karpenter.sh/capacity-type In [spot], node.kubernetes.io/instance-type In [m5.large]").as_deref(),
            Some("The requirements exclude each other: node.kubernetes.io/instance-type In [m5.large] against karpenter.k8s.aws/instance-category In [c r] (m5.large is category m), so no instance type can match, however large.")
        );
        assert_eq!(
            instance_type_contradiction("karpenter.k8s.aws/instance-generation In [6 7], node.kubernetes.io/instance-type In [c5.xlarge m5.xlarge]").as_deref(),
            Some("The requirements exclude each other: node.kubernetes.io/instance-type In [c5.xlarge m5.xlarge] against karpenter.k8s.aws/instance-generation In [6 7] (c5.xlarge is generation 5; m5.xlarge is generation 5), so no instance type can match, however large.")
        );
        for compatible in [
            // One of the named types satisfies every requirement.
            "karpenter.k8s.aws/instance-category In [c r], node.kubernetes.io/instance-type In [m5.large r5.large]",
            "karpenter.k8s.aws/instance-family In [m7gd], node.kubernetes.io/instance-type In [m7gd.2xlarge]",
            // No instance-type list, or a name Karpenter's labels cannot be derived from.
            "karpenter.k8s.aws/instance-category In [c r]",
            "karpenter.k8s.aws/instance-category In [c], node.kubernetes.io/instance-type In [custom]",
        ] {
            assert_eq!(instance_type_contradiction(compatible), None, "{compatible}");
        }
    }

    #[test]
    fn zone_and_capacity_type_narrowing_is_said_for_offering_failures() {
        let n = offering_narrowing("karpenter.sh/capacity-type In [spot], karpenter.sh/nodepool In [a], topology.kubernetes.io/zone In [eu-west-1b eu-west-1c]").unwrap();
        assert_eq!(n.zones, ["eu-west-1b", "eu-west-1c"]);
        assert_eq!(n.capacity_types, ["spot"]);
        assert_eq!(
            n.describe(),
            "zones eu-west-1b, eu-west-1c and capacity type spot"
        );
        assert!(
            offering_narrowing("karpenter.sh/nodepool In [a], kubernetes.io/arch In [amd64]")
                .is_none()
        );
        let offering = r#"Failed to schedule pod, no instance type had enough resources or had a required offering, requirements=karpenter.sh/capacity-type In [spot], karpenter.sh/nodepool In [render], topology.kubernetes.io/zone In [eu-west-1b], resources={"cpu":"60","pods":"1"}"#;
        let d = &check_only("KW201", offering).diagnoses[0];
        assert!(
            d.summary
                .contains("narrowed to zone eu-west-1b and capacity type spot"),
            "{}",
            d.summary
        );
        assert!(d
            .remediation
            .iter()
            .any(|r| r.text.contains("on-demand next to spot")));
        // Resources alone: the zone does not decide which types are big enough.
        let resources = r#"Failed to schedule pod, no instance type has enough resources, requirements=karpenter.sh/nodepool In [render], topology.kubernetes.io/zone In [eu-west-1b], resources={"cpu":"60","pods":"1"}"#;
        let d = &check_only("KW201", resources).diagnoses[0];
        assert!(!d.summary.contains("narrowed"), "{}", d.summary);
    }
}
