//! KW003 workload-without-pdb.

use std::collections::BTreeMap;

use crate::document::Evidence;
use crate::facts::{contains_ignore_ascii_case, Facts, Pdb, Pod, Workload};
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW003",
    slug: "workload-without-pdb",
    title: "A replicated workload on Karpenter nodes has no PodDisruptionBudget",
    severity: Severity::Warning,
    superseded_by: &[],
    signals: &["poddisruptionbudget"],
    docs: r#"## What it means
A Deployment or StatefulSet with two or more replicas runs on nodes Karpenter manages, and no
PodDisruptionBudget in its namespace selects its pods. Karpenter respects PDBs when it drains a
node; without one, nothing stops it from evicting every replica at once.

This is an inference from objects, not a message: the workload's replica count, its pods' nodes
(`karpenter.sh/nodepool` label, a NodeClaim's node, or a Karpenter-only node selector), and the
PDBs of the namespace (`matchLabels` and `matchExpressions` evaluated against the pod labels).
When the input holds no PDB list for the namespace, or lists its PDBs only as a `kubectl get pdb`
table (no selectors) and none is named after the workload, the report says so (info) instead of
claiming none selects it. Replicas that are all Pending on no node have nothing to drain yet:
the report is then about why they stay Pending, not this.

## Why it happens
Karpenter disrupts nodes on its own schedule: consolidation (`WhenEmptyOrUnderutilized`),
drift after an AMI or NodePool change, `expireAfter`, spot interruptions. Replicas packed onto
the same node, or onto nodes disrupted in the same round, go down together. Ingress
controllers, CoreDNS and gateways turn that into an outage.

## How to fix
Add a PDB with `minAvailable: 1` (or a percentage such as `maxUnavailable: 25%`) selecting the
workload's pods; for the ingress-nginx chart set `controller.minAvailable` (the chart renders
its PDB only when `controller.replicaCount > 1`). Spread replicas with a topology spread
constraint on `kubernetes.io/hostname` so one node never holds them all.
"#,
};

/// A Deployment or StatefulSet and the pods of it the input shows.
struct Unit<'a> {
    kind: &'static str,
    namespace: Option<String>,
    name: String,
    workload: Option<&'a Workload>,
    pods: Vec<&'a Pod>,
    /// How the owner was found when it was not read from the objects.
    owner_inferred: Option<&'static str>,
    /// `importance`, computed once.
    rank: u8,
}

/// Whether a node is Karpenter's: `Some(true)` / `Some(false)` when the facts say, `None`
/// when the node is not in the input.
fn node_is_karpenter(facts: &Facts, node: &str) -> Option<bool> {
    if facts
        .nodeclaims
        .iter()
        .any(|c| c.node_name.as_deref() == Some(node))
    {
        return Some(true);
    }
    let n = facts.nodes.iter().find(|n| n.meta.name == node)?;
    Some(
        n.meta.labels.contains_key("karpenter.sh/nodepool")
            || n.meta.labels.contains_key("karpenter.sh/provisioner-name")
            || n.meta
                .annotations
                .contains_key("karpenter.sh/nodepool-hash"),
    )
}

/// A pod that can only run on Karpenter nodes (its selector or required affinity names a
/// Karpenter label).
fn requires_karpenter_node(pod: &Pod) -> bool {
    binds_to_karpenter(&pod.node_selector, &pod.node_affinity)
}

/// A node selector or a required node affinity (every term) that only Karpenter's nodes
/// satisfy: a `karpenter.sh/` label asked for with `In` or `Exists`.
fn binds_to_karpenter(
    node_selector: &BTreeMap<String, String>,
    node_affinity: &[Vec<crate::facts::Requirement>],
) -> bool {
    let karpenter_key = |k: &str| k.starts_with("karpenter.sh/");
    node_selector.keys().any(|k| karpenter_key(k))
        || (!node_affinity.is_empty()
            && node_affinity.iter().all(|term| {
                term.iter().any(|r| {
                    karpenter_key(&r.key) && matches!(r.operator.as_str(), "In" | "Exists")
                })
            }))
}

/// Signs of Karpenter in the input when the pod's node itself is not in it.
fn karpenter_present(facts: &Facts) -> Option<&'static str> {
    if !facts.nodeclaims.is_empty() {
        Some("NodeClaims in the input")
    } else if !facts.nodepools.is_empty() {
        Some("NodePools in the input")
    } else if facts
        .nodes
        .iter()
        .any(|n| n.meta.labels.contains_key("karpenter.sh/nodepool"))
    {
        Some("Karpenter nodes in the input")
    } else {
        None
    }
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let mut units = units(facts);
    // Ranked once, not in every comparison: a big cluster's pod list makes thousands of units.
    for u in &mut units {
        u.rank = importance(u);
    }
    crate::rules::sort_stable_by(&mut units, |a, b| {
        (a.rank, &a.namespace, &a.name).cmp(&(b.rank, &b.namespace, &b.name))
    });
    units.iter().filter_map(|u| diagnose(facts, u)).collect()
}

/// Groups pods by their Deployment / StatefulSet, and adds workloads whose pods the input
/// lists without owners (a `kubectl get pods` table) by name.
fn units(facts: &Facts) -> Vec<Unit<'_>> {
    let mut units: Vec<Unit> = Vec::new();
    // The units of each (kind, name), whatever their namespace: a search of every unit per pod
    // would be quadratic on a big cluster's pod list.
    let mut named: std::collections::BTreeMap<(&str, String), Vec<usize>> = Default::default();
    for pod in &facts.pods {
        let ns = pod.meta.namespace.clone();
        let Some((kind, name, inferred)) = owner_of(facts, pod) else {
            continue;
        };
        let same = named.entry((kind, name.clone())).or_default();
        let i = match same
            .iter()
            .copied()
            .find(|&i| same_ns(&units[i].namespace, &ns))
        {
            Some(i) => i,
            None => {
                let workload = facts.workloads.iter().find(|w| {
                    w.kind == kind && w.meta.name == name && same_ns(&w.meta.namespace, &ns)
                });
                units.push(Unit {
                    kind,
                    namespace: ns
                        .clone()
                        .or_else(|| workload.and_then(|w| w.meta.namespace.clone())),
                    name,
                    workload,
                    pods: Vec::new(),
                    owner_inferred: inferred,
                    rank: 0,
                });
                same.push(units.len() - 1);
                units.len() - 1
            }
        };
        units[i].pods.push(pod);
    }
    // Workloads the input shows without any of their pods.
    for w in &facts.workloads {
        let kind = match w.kind.as_str() {
            "Deployment" => "Deployment",
            "StatefulSet" => "StatefulSet",
            _ => continue,
        };
        let known = named.get(&(kind, w.meta.name.clone())).is_some_and(|same| {
            same.iter()
                .any(|&i| same_ns(&units[i].namespace, &w.meta.namespace))
        });
        if !known {
            units.push(Unit {
                kind,
                namespace: w.meta.namespace.clone(),
                name: w.meta.name.clone(),
                workload: Some(w),
                pods: Vec::new(),
                owner_inferred: None,
                rank: 0,
            });
        }
    }
    units
}

fn same_ns(a: &Option<String>, b: &Option<String>) -> bool {
    a.is_none() || b.is_none() || a == b
}

/// `(kind, name, inferred)` of the Deployment or StatefulSet that owns a pod.
fn owner_of(facts: &Facts, pod: &Pod) -> Option<(&'static str, String, Option<&'static str>)> {
    let ns = &pod.meta.namespace;
    if let Some(owner) = pod.meta.owners.first() {
        return match owner.kind.as_str() {
            "StatefulSet" => Some(("StatefulSet", owner.name.clone(), None)),
            "ReplicaSet" => {
                let rs = facts.workloads.iter().find(|w| {
                    w.kind == "ReplicaSet"
                        && w.meta.name == owner.name
                        && same_ns(&w.meta.namespace, ns)
                });
                if let Some(d) = rs
                    .and_then(|rs| rs.meta.owners.first())
                    .filter(|o| o.kind == "Deployment")
                {
                    return Some(("Deployment", d.name.clone(), None));
                }
                if rs.is_some_and(|rs| rs.meta.owners.is_empty()) {
                    // A bare ReplicaSet: not a Deployment's.
                    return None;
                }
                let name = match pod.meta.labels.get("pod-template-hash") {
                    Some(h) => owner.name.strip_suffix(&format!("-{h}"))?.to_string(),
                    None => owner.name.rsplit_once('-')?.0.to_string(),
                };
                Some(("Deployment", name, Some("its ReplicaSet's name")))
            }
            _ => None,
        };
    }
    // No owner references (a table row): match the pod name against the workloads, else
    // read the controllers' naming conventions.
    let by_workload = facts.workloads.iter().find_map(|w| {
        if !same_ns(&w.meta.namespace, ns) {
            return None;
        }
        let rest = pod.meta.name.strip_prefix(&format!("{}-", w.meta.name))?;
        match w.kind.as_str() {
            "Deployment" => {
                let parts: Vec<&str> = rest.split('-').collect();
                (parts.len() == 2 && parts.iter().all(|p| !p.is_empty()))
                    .then(|| ("Deployment", w.meta.name.clone(), Some("the pod names")))
            }
            "StatefulSet" => rest
                .chars()
                .all(|c| c.is_ascii_digit())
                .then(|| ("StatefulSet", w.meta.name.clone(), Some("the pod names"))),
            _ => None,
        }
    });
    by_workload.or_else(|| owner_by_name(facts, pod))
}

/// A pod named `<deployment>-<pod-template-hash>-<suffix>`, or `<statefulset>-<ordinal>`
/// when another pod of the input shares the name with ordinal 0 or 1: a `kubectl get pods`
/// table names no owner, but the names do.
fn owner_by_name(facts: &Facts, pod: &Pod) -> Option<(&'static str, String, Option<&'static str>)> {
    let name = &pod.meta.name;
    let siblings = |prefix: &str| {
        facts
            .pods
            .iter()
            .filter(|p| p.meta.namespace == pod.meta.namespace && p.meta.name != *name)
            .filter(|p| p.meta.name.starts_with(prefix))
            .count()
    };
    if let Some(base) = crate::rules::names::deployment_of_pod(name) {
        return Some(("Deployment", base.to_string(), Some("the pod names")));
    }
    let (base, ordinal) = name.rsplit_once('-')?;
    let ordinal_ok = !ordinal.is_empty() && ordinal.chars().all(|c| c.is_ascii_digit());
    let first = [format!("{base}-0"), format!("{base}-1")];
    let has_first = facts
        .pods
        .iter()
        .any(|p| p.meta.namespace == pod.meta.namespace && first.contains(&p.meta.name));
    (ordinal_ok && has_first && siblings(&format!("{base}-")) >= 1)
        .then(|| ("StatefulSet", base.to_string(), Some("the pod names")))
}

/// Ingress controllers, CoreDNS and gateways first: an outage of theirs takes others down.
fn importance(u: &Unit) -> u8 {
    let mut words = vec![u.name.to_ascii_lowercase()];
    if let Some(w) = u.workload {
        words.extend(w.template_labels.values().map(|v| v.to_ascii_lowercase()));
    }
    for p in &u.pods {
        words.extend(p.meta.labels.values().map(|v| v.to_ascii_lowercase()));
    }
    let has = |needles: &[&str]| words.iter().any(|w| needles.iter().any(|n| w.contains(n)));
    if has(&["ingress", "traefik", "haproxy", "contour"]) {
        0
    } else if has(&["coredns", "kube-dns"]) {
        1
    } else if has(&[
        "gateway",
        "kong",
        "envoy",
        "istio",
        "ambassador",
        "emissary",
    ]) {
        2
    } else {
        3
    }
}

/// Pod labels for selector matching: the pod's own, else the workload's template labels.
fn pod_labels(u: &Unit, pod: Option<&Pod>) -> BTreeMap<String, String> {
    match pod {
        Some(p) if !p.meta.labels.is_empty() => p.meta.labels.clone(),
        _ => u
            .workload
            .map(|w| w.template_labels.clone())
            .unwrap_or_default(),
    }
}

/// What the input says about the PDBs of a namespace.
enum PdbList<'a> {
    /// The namespace's PDBs are in the input (possibly none).
    Known {
        pdbs: Vec<&'a Pdb>,
        how: String,
        /// The `kubectl get pdb` prompt line that collected the list, when the paste shows it.
        command: Option<Evidence>,
    },
    NotCollected,
}

fn pdb_list<'a>(facts: &'a Facts, ns: Option<&str>) -> PdbList<'a> {
    let in_ns: Vec<&Pdb> = facts
        .pdbs
        .iter()
        .filter(|p| ns.is_none() || p.meta.namespace.as_deref() == ns)
        .collect();
    let ns_label = ns.unwrap_or("the pods' namespace");
    // `kubectl get pdb` commands the paste shows: a list (not one named PDB) of all
    // namespaces, or of this one (no `-n`: the context's namespace, usually `default`).
    let lists = || {
        facts
            .commands
            .iter()
            .filter(|c| c.is("get", "PodDisruptionBudget") && c.name.is_none())
    };
    let all_namespaces_list = lists().find(|c| c.all_namespaces);
    let namespace_list =
        lists().find(|c| !c.all_namespaces && c.namespace.as_deref().or(Some("default")) == ns);
    let command_of = |c: Option<&crate::facts::ShellCommand>| c.map(|c| c.evidence.clone());
    if !in_ns.is_empty() {
        let names: Vec<String> = in_ns.iter().map(|p| p.meta.name.clone()).collect();
        return PdbList::Known {
            pdbs: in_ns,
            how: format!(
                "the PDBs of namespace {ns_label} in the input ({})",
                names.join(", ")
            ),
            command: command_of(namespace_list.or(all_namespaces_list)),
        };
    }
    let mut namespaces: Vec<&str> = facts
        .pdbs
        .iter()
        .filter_map(|p| p.meta.namespace.as_deref())
        .collect();
    namespaces.sort_unstable();
    namespaces.dedup();
    let all_namespaces_command = facts.messages.iter().any(|m| {
        let t = &m.text;
        contains_ignore_ascii_case(t, "kubectl get")
            && (contains_ignore_ascii_case(t, " pdb")
                || contains_ignore_ascii_case(t, "poddisruptionbudget"))
            && (t.contains(" -A") || t.contains("--all-namespaces"))
    });
    if namespaces.len() >= 2 || all_namespaces_command || all_namespaces_list.is_some() {
        return PdbList::Known {
            command: command_of(all_namespaces_list),
            pdbs: Vec::new(),
            how: format!(
                "an all-namespaces PDB list with none in namespace {ns_label}{}",
                if namespaces.is_empty() {
                    String::new()
                } else {
                    format!(" (PDBs only in {})", namespaces.join(", "))
                }
            ),
        };
    }
    let empty = facts.empty_lists.iter().any(|e| {
        e.resource.as_deref().is_some_and(|r| {
            let r = r.to_ascii_lowercase();
            r.starts_with("pdb") || r.starts_with("poddisruptionbudget")
        }) && (e.namespace.is_none() || e.namespace.as_deref() == ns)
    });
    if empty {
        return PdbList::Known {
            pdbs: Vec::new(),
            how: format!("`No resources found` for the PDBs of namespace {ns_label}"),
            command: command_of(namespace_list),
        };
    }
    if let Some(c) = namespace_list {
        return PdbList::Known {
            pdbs: Vec::new(),
            how: format!(
                "the output of the paste's `kubectl get pdb` for namespace {ns_label} (line {}), which lists none",
                c.evidence.line
            ),
            command: Some(c.evidence.clone()),
        };
    }
    PdbList::NotCollected
}

fn diagnose(facts: &Facts, u: &Unit) -> Option<Diagnosis> {
    // Replicas: the workload's spec, else the pods the input shows.
    let (replicas, replicas_from) = match u.workload.and_then(|w| w.replicas) {
        Some(r) => (r, format!("the {}'s spec.replicas", u.kind)),
        None => (
            u.pods.len() as i64,
            format!("{} of its pods in the input", u.pods.len()),
        ),
    };
    if replicas < 2 {
        return None;
    }
    // Replicas that do not run yet have nothing to be drained: every pod the input shows is
    // Pending on no node (or the workload reports none ready), and the report is about why
    // they stay Pending, not about disrupting them.
    let none_running = if u.pods.is_empty() {
        u.workload.and_then(|w| w.ready_replicas) == Some(0)
    } else {
        u.pods
            .iter()
            .all(|p| p.is_pending() && p.node_name.is_none())
    };
    if none_running {
        return None;
    }
    // Karpenter-managed: a pod's node, a Karpenter-only selector, or Karpenter in the input.
    let mut karpenter_nodes: Vec<String> = Vec::new();
    let mut other_nodes = 0;
    let mut unknown_nodes = 0;
    let mut selector_bound = false;
    for p in &u.pods {
        selector_bound |= requires_karpenter_node(p);
        if let Some(node) = p.node_name.as_deref() {
            match node_is_karpenter(facts, node) {
                Some(true) => {
                    if !karpenter_nodes.iter().any(|n| n == node) {
                        karpenter_nodes.push(node.to_string());
                    }
                }
                Some(false) => other_nodes += 1,
                None => unknown_nodes += 1,
            }
        }
    }
    let workload_bound = u
        .workload
        .is_some_and(|w| binds_to_karpenter(&w.node_selector, &w.node_affinity));
    let managed_from = if !karpenter_nodes.is_empty() {
        format!(
            "its pods' node{} {} (Karpenter's: {})",
            if karpenter_nodes.len() == 1 { "" } else { "s" },
            karpenter_nodes.join(", "),
            if crate::rules::version::before_v0_32(facts) {
                "karpenter.sh/provisioner-name label or a Machine's node"
            } else {
                "karpenter.sh/nodepool label or a NodeClaim's node"
            }
        )
    } else if selector_bound || workload_bound {
        "its node selector / affinity, which only Karpenter nodes satisfy".to_string()
    } else if unknown_nodes > 0 && other_nodes == 0 {
        karpenter_present(facts)?.to_string()
    } else {
        return None;
    };
    let ns = u.namespace.as_deref();
    let list = pdb_list(facts, ns);
    // Does any PDB select any of the pods (or, without pod objects, the template labels)?
    let samples: Vec<Option<&Pod>> = if u.pods.is_empty() {
        vec![None]
    } else {
        u.pods.iter().map(|p| Some(*p)).collect()
    };
    // PDBs of the namespace known only from a `kubectl get pdb` table: selectors unknown.
    let unlisted: Vec<&Pdb> = match &list {
        PdbList::Known { pdbs, .. } => pdbs.iter().copied().filter(|p| p.meta.from_table).collect(),
        PdbList::NotCollected => Vec::new(),
    };
    if let PdbList::Known { pdbs, .. } = &list {
        // Pods known only from a table, with no workload template: their labels are unknown,
        // so a PDB of their namespace may well select them.
        // PDBs that are themselves only table rows leave it unknown either way: that is the
        // info below (`listed without selectors`), not silence.
        let labels_unknown = samples
            .iter()
            .all(|p| pod_labels(u, *p).is_empty() && p.is_none_or(|p| p.meta.from_table));
        if labels_unknown && pdbs.iter().any(|pdb| !pdb.meta.from_table) {
            return None;
        }
        let selected = samples.iter().any(|p| {
            let labels = pod_labels(u, *p);
            pdbs.iter()
                .any(|pdb| !pdb.meta.from_table && pdb.selector.matches(&labels))
        });
        // A table row shows no selector: one named after the workload most likely selects it.
        let named_after = unlisted.iter().any(|pdb| {
            pdb.meta.name.starts_with(u.name.as_str()) || u.name.starts_with(&pdb.meta.name)
        });
        if selected || named_after {
            return None;
        }
    }
    let mut labels = selector_labels(u);
    let from_command = labels.is_empty();
    if from_command {
        labels = command_selector(facts, u);
    }
    let from_command = from_command && !labels.is_empty();
    let ns_name = ns.unwrap_or("<namespace>");
    let who = format!("{} {}/{}", u.kind, ns_name, u.name);
    let shared = shared_node(u);
    let mut summary = format!(
        "{who} runs {replicas} replicas on Karpenter-managed nodes and no PodDisruptionBudget selects its pods ({}): consolidation, drift or expiry can drain every replica at once.",
        format_labels(&labels)
    );
    let shared_sentence = shared
        .as_ref()
        .map(|(node, n)| {
            format!(" {n} of them share node {node}: one disruption takes them down together.")
        })
        .unwrap_or_default();
    summary.push_str(&shared_sentence);
    let (severity, confidence, pdb_from) = match &list {
        PdbList::Known { how, .. } if !unlisted.is_empty() => {
            let names: Vec<&str> = unlisted.iter().map(|p| p.meta.name.as_str()).collect();
            summary = format!(
                "{who} runs {replicas} replicas on Karpenter-managed nodes, and namespace {ns_name} has PDB {} listed without selectors: whether one protects it from being drained all at once is unknown (`kubectl get pdb -n {ns_name} -o yaml`).{shared_sentence}",
                names.join(", ")
            );
            (Severity::Info, Confidence::Low, how.clone())
        }
        PdbList::Known { how, .. } => (Severity::Warning, Confidence::Medium, how.clone()),
        PdbList::NotCollected => {
            summary = format!(
                "{who} runs {replicas} replicas on Karpenter-managed nodes, and the PDBs of namespace {ns_name} were not collected: whether one protects it from being drained all at once is unknown (`kubectl get pdb -n {ns_name}`).{shared_sentence}"
            );
            (
                Severity::Info,
                Confidence::Low,
                "no PDB list (not collected)".to_string(),
            )
        }
    };
    // A PDB with the right selector in another namespace protects nothing here: a classic
    // copy-paste between environments.
    let elsewhere: Vec<&crate::facts::Pdb> = facts
        .pdbs
        .iter()
        .filter(|pdb| !same_ns(&pdb.meta.namespace, &u.namespace))
        // A table row's selector is unknown, and an empty one matches anything.
        .filter(|pdb| {
            let empty =
                pdb.selector.match_labels.is_empty() && pdb.selector.match_expressions.is_empty();
            !pdb.meta.from_table && !empty
        })
        .filter(|pdb| {
            samples.iter().any(|p| {
                let labels = pod_labels(u, *p);
                !labels.is_empty() && pdb.selector.matches(&labels)
            })
        })
        .collect();
    for pdb in &elsewhere {
        let pdb_ns = pdb.meta.namespace.as_deref().unwrap_or("default");
        summary.push_str(&format!(
            " PDB {pdb_ns}/{} selects the same labels but lives in namespace {pdb_ns}: a PDB only covers pods of its own namespace.",
            pdb.meta.name
        ));
    }
    let mut inferred = format!(
        " Inferred from {replicas_from}; Karpenter-managed from {managed_from}; PDBs from {pdb_from}"
    );
    if from_command {
        inferred.push_str("; labels from the `-l` selector of the command that listed the pods");
    }
    if let Some(how) = u.owner_inferred {
        inferred.push_str(&format!("; the owning {} from {how}", u.kind));
    }
    inferred.push('.');
    summary.push_str(&inferred);

    let selectors_unknown = matches!(list, PdbList::NotCollected) || !unlisted.is_empty();
    // A PDB of the workload's own name that selects other labels: the YAML below replaces it.
    let namesake = facts.pdbs.iter().find(|p| {
        p.meta.name == u.name && p.meta.namespace.as_deref().unwrap_or("default") == ns_name
    });
    let steps = remediation(u, &labels, ns_name, selectors_unknown, namesake.is_some());
    let mut evidence: Vec<Evidence> = Vec::new();
    evidence.extend(u.workload.and_then(|w| w.meta.evidence.clone()));
    evidence.extend(
        u.pods
            .iter()
            .filter_map(|p| p.meta.evidence.clone())
            .take(3),
    );
    // (Quoted only when its line reads differently: equal lines collapse into one.)
    for e in elsewhere.iter().filter_map(|p| p.meta.evidence.clone()) {
        if !evidence.iter().any(|o| o.text.trim() == e.text.trim()) {
            evidence.push(e);
        }
    }
    if let PdbList::Known { pdbs, command, .. } = &list {
        evidence.extend(command.clone());
        evidence.extend(pdbs.iter().filter_map(|p| p.meta.evidence.clone()));
    }
    evidence.extend(
        facts
            .nodes
            .iter()
            .filter(|n| karpenter_nodes.contains(&n.meta.name))
            .filter_map(|n| n.meta.evidence.clone())
            .take(3),
    );
    // The workload is what lacks the PDB: a pod of it would name one replica of many.
    let object = crate::facts::ObjectRef::new(u.kind, ns, &u.name);
    Some(
        Diagnosis::new(&META, summary)
            .with_severity(severity)
            .with_confidence(confidence)
            .with_object(Some(&object))
            .with_evidence(evidence)
            .with_remediation(steps),
    )
}

/// The labels a PDB should select: the workload's own selector, else the pod's stable labels.
fn selector_labels(u: &Unit) -> BTreeMap<String, String> {
    if let Some(w) = u.workload {
        if !w.selector.match_labels.is_empty() && w.selector.match_expressions.is_empty() {
            return w.selector.match_labels.clone();
        }
    }
    let mut labels = pod_labels(u, u.pods.first().copied());
    labels.retain(|k, _| !crate::facts::VOLATILE_LABELS.contains(&k.as_str()));
    labels
}

/// The `-l k=v[,k=v]` selector of the `kubectl get pods` prompt line right above the unit's
/// pod rows: the labels every listed pod carries, when the rows show none. Only equality terms
/// (`!=`, `in (...)` or a bare key would make the PDB select other pods).
fn command_selector(facts: &Facts, u: &Unit) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Some(row) = u.pods.first().and_then(|p| p.meta.evidence.as_ref()) else {
        return out;
    };
    let command = facts
        .commands
        .iter()
        .filter(|c| c.evidence.source == row.source && c.evidence.line < row.line)
        .max_by_key(|c| c.evidence.line)
        .filter(|c| c.is("get", "Pod"));
    for term in command
        .and_then(|c| c.selector.as_deref())
        .unwrap_or("")
        .split(',')
    {
        let Some((k, v)) = term.split_once('=') else {
            return BTreeMap::new();
        };
        let (k, v) = (k.trim(), v.trim_start_matches('=').trim());
        let plain = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
        };
        if !plain(k) || !plain(v) {
            return BTreeMap::new();
        }
        out.insert(k.to_string(), v.to_string());
    }
    out
}

fn format_labels(labels: &BTreeMap<String, String>) -> String {
    if labels.is_empty() {
        return "labels not in the input".to_string();
    }
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The node holding the most replicas, when it holds two or more.
fn shared_node(u: &Unit) -> Option<(String, usize)> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &u.pods {
        if let Some(n) = p.node_name.as_deref() {
            *counts.entry(n).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .filter(|(_, c)| *c >= 2)
        .max_by_key(|(_, c)| *c)
        .map(|(n, c)| (n.to_string(), c))
}

fn remediation(
    u: &Unit,
    labels: &BTreeMap<String, String>,
    ns: &str,
    selectors_unknown: bool,
    namesake_pdb: bool,
) -> Vec<Remediation> {
    let mut steps = Vec::new();
    if selectors_unknown {
        steps.push(Remediation::command(
            format!("List the PodDisruptionBudgets of namespace {ns} with their selectors and check whether one selects the pods:"),
            format!("kubectl get pdb -n {ns} -o yaml"),
        ));
    }
    if labels.is_empty() {
        steps.push(Remediation::command(
            format!(
                "The input does not show the pods' labels: read the {}'s selector to fill in the PDB below:",
                u.kind
            ),
            format!(
                "kubectl get {} {} -n {ns} -o jsonpath='{{.spec.selector.matchLabels}}'",
                u.kind.to_ascii_lowercase(),
                u.name
            ),
        ));
    }
    let match_labels = if labels.is_empty() {
        "      <label>: <value>\n".to_string()
    } else {
        labels
            .iter()
            .map(|(k, v)| format!("      {k}: {}\n", yaml_scalar(v)))
            .collect()
    };
    let yaml = format!(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: {}\n  namespace: {ns}\nspec:\n  minAvailable: 1\n  selector:\n    matchLabels:\n{match_labels}",
        u.name
    );
    let ingress_nginx = u.name.contains("ingress-nginx")
        || labels.get("app.kubernetes.io/name").map(String::as_str) == Some("ingress-nginx");
    let workload_meta = u.workload.map(|w| &w.meta);
    let release = workload_meta
        .and_then(|m| m.annotations.get("meta.helm.sh/release-name").cloned())
        .or_else(|| labels.get("app.kubernetes.io/instance").cloned());
    if ingress_nginx {
        let release = release
            .clone()
            .unwrap_or_else(|| "ingress-nginx".to_string());
        steps.push(Remediation::command(
            "The ingress-nginx chart has the PDB built in: set controller.minAvailable (the chart renders the PDB only when controller.replicaCount > 1, or autoscaling.minReplicas > 1):",
            format!("helm upgrade {release} ingress-nginx/ingress-nginx -n {ns} --reuse-values --set controller.minAvailable=1"),
        ));
    }
    steps.push(Remediation::yaml(
        format!(
            "A PDB that keeps at least one replica up while Karpenter drains nodes (`kubectl apply -f pdb.yaml`; `maxUnavailable: 25%` is the alternative for larger workloads){}{}:",
            if ingress_nginx { ", if the chart does not manage it" } else { "" },
            if namesake_pdb {
                format!("; PDB {} exists but its selector matches none of these pods: applying this replaces the selector", u.name)
            } else {
                String::new()
            }
        ),
        yaml,
    ));
    if !ingress_nginx {
        if let Some(chart) = workload_meta.and_then(|m| m.labels.get("helm.sh/chart")) {
            steps.push(Remediation::text(format!(
                "{} {} comes from the helm chart {chart}{}: most charts have a value for the PDB (often `podDisruptionBudget.enabled=true`, see `helm show values`), which keeps it across upgrades.",
                u.kind,
                u.name,
                release
                    .as_deref()
                    .map(|r| format!(" (release {r})"))
                    .unwrap_or_default()
            )));
        }
    }
    if shared_node(u).is_some() {
        steps.push(Remediation::text(
            "Spread the replicas over nodes (a topologySpreadConstraints entry on kubernetes.io/hostname, or pod anti-affinity): a PDB keeps one replica up, spreading keeps one node's loss from taking several.",
        ));
    }
    steps
}

fn yaml_scalar(v: &str) -> String {
    let plain = !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
        && !v.chars().all(|c| c.is_ascii_digit() || c == '.')
        && !matches!(
            v.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null"
        );
    if plain {
        v.to_string()
    } else {
        format!("\"{}\"", v.replace('"', "\\\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{LabelSelector, Meta, Node, NodeClaim, ObjectRef, Requirement};
    use crate::testing::{check_only, ids};

    fn selector(pairs: &[(&str, &str)]) -> LabelSelector {
        LabelSelector {
            match_labels: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            match_expressions: Vec::new(),
        }
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn kong_facts() -> Facts {
        let mut facts = Facts::default();
        let template = labels(&[
            ("app.kubernetes.io/component", "app"),
            ("app.kubernetes.io/instance", "kong"),
            ("app.kubernetes.io/name", "gateway"),
        ]);
        facts.workloads.push(Workload {
            kind: "Deployment".into(),
            meta: Meta {
                name: "kong-gateway".into(),
                namespace: Some("gateway".into()),
                annotations: labels(&[("meta.helm.sh/release-name", "kong")]),
                labels: labels(&[("helm.sh/chart", "gateway-2.46.0")]),
                ..Default::default()
            },
            replicas: Some(2),
            selector: LabelSelector {
                match_labels: template.clone(),
                match_expressions: Vec::new(),
            },
            template_labels: template.clone(),
            ..Default::default()
        });
        facts.pdbs.push(Pdb {
            meta: Meta {
                name: "kong-controller".into(),
                namespace: Some("gateway".into()),
                ..Default::default()
            },
            selector: selector(&[
                ("app.kubernetes.io/component", "controller"),
                ("app.kubernetes.io/instance", "kong"),
                ("app.kubernetes.io/name", "gateway"),
            ]),
            disruptions_allowed: Some(1),
            ..Default::default()
        });
        for name in [
            "kong-gateway-84c7d9f6b5-p8nvd",
            "kong-gateway-84c7d9f6b5-tw4qs",
        ] {
            let mut l = template.clone();
            l.insert("pod-template-hash".into(), "84c7d9f6b5".into());
            facts.pods.push(Pod {
                meta: Meta {
                    name: name.into(),
                    namespace: Some("gateway".into()),
                    labels: l,
                    owners: vec![ObjectRef::new(
                        "ReplicaSet",
                        Some("gateway"),
                        "kong-gateway-84c7d9f6b5",
                    )],
                    ..Default::default()
                },
                phase: Some("Running".into()),
                node_name: Some("ip-10-40-3-117.eu-central-1.compute.internal".into()),
                ..Default::default()
            });
        }
        facts.nodes.push(Node {
            meta: Meta {
                name: "ip-10-40-3-117.eu-central-1.compute.internal".into(),
                labels: labels(&[("karpenter.sh/nodepool", "edge-on-demand")]),
                ..Default::default()
            },
            ..Default::default()
        });
        facts
    }

    #[test]
    fn deployment_without_matching_pdb() {
        let facts = kong_facts();
        let d = &check(&facts)[0];
        assert_eq!(d.severity, Severity::Warning);
        assert_eq!(d.confidence, Confidence::Medium);
        assert!(d.summary.starts_with("Deployment gateway/kong-gateway runs 2 replicas on Karpenter-managed nodes and no PodDisruptionBudget selects its pods (app.kubernetes.io/component=app, app.kubernetes.io/instance=kong, app.kubernetes.io/name=gateway)"), "{}", d.summary);
        assert!(
            d.summary.contains("2 of them share node ip-10-40-3-117"),
            "{}",
            d.summary
        );
        assert!(
            d.summary
                .contains("Inferred from the Deployment's spec.replicas"),
            "{}",
            d.summary
        );
        assert!(
            d.summary
                .contains("PDBs from the PDBs of namespace gateway in the input (kong-controller)"),
            "{}",
            d.summary
        );
        let yaml = d
            .remediation
            .iter()
            .find_map(|r| r.yaml.as_deref())
            .unwrap();
        assert_eq!(yaml, "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: kong-gateway\n  namespace: gateway\nspec:\n  minAvailable: 1\n  selector:\n    matchLabels:\n      app.kubernetes.io/component: app\n      app.kubernetes.io/instance: kong\n      app.kubernetes.io/name: gateway\n");
        assert!(d
            .remediation
            .iter()
            .any(|r| r.text.contains("helm chart gateway-2.46.0 (release kong)")));
    }

    #[test]
    fn a_selecting_pdb_silences_it() {
        let mut facts = kong_facts();
        facts.pdbs[0].selector = LabelSelector {
            match_labels: BTreeMap::new(),
            match_expressions: vec![Requirement {
                key: "app.kubernetes.io/component".into(),
                operator: "In".into(),
                values: vec!["app".into(), "controller".into()],
                min_values: None,
            }],
        };
        assert!(check(&facts).is_empty());
    }

    #[test]
    fn single_replica_non_karpenter_node_or_bare_pod_is_quiet() {
        let mut facts = kong_facts();
        facts.workloads[0].replicas = Some(1);
        assert!(check(&facts).is_empty());
        let mut facts = kong_facts();
        facts.nodes[0].meta.labels.clear();
        assert!(check(&facts).is_empty());
        let mut facts = kong_facts();
        for p in &mut facts.pods {
            p.meta.owners.clear();
            p.meta.name = format!("standalone-{}", p.meta.name.len());
        }
        assert!(check(&facts).is_empty());
    }

    #[test]
    fn nodeclaim_node_counts_as_karpenter() {
        let mut facts = kong_facts();
        facts.nodes.clear();
        facts.nodeclaims.push(NodeClaim {
            node_name: Some("ip-10-40-3-117.eu-central-1.compute.internal".into()),
            ..Default::default()
        });
        assert_eq!(check(&facts).len(), 1);
    }

    #[test]
    fn table_pods_are_grouped_by_their_names() {
        let tables = |pdbs: &str, pods: &str| {
            format!(
                "$ kubectl get pods -n shop -o wide\n\
                 NAME   READY   STATUS    RESTARTS   AGE   IP   NODE   NOMINATED NODE   READINESS GATES\n\
                 {pods}\n\
                 \n\
                 $ kubectl get nodeclaims\n\
                 NAME            TYPE        CAPACITY   ZONE         NODE        READY   AGE\n\
                 default-7kq2x   m7i.large   spot       us-east-1a   ip-10-0-1-5 True    6h\n\
                 \n\
                 $ kubectl get pdb -n shop\n\
                 {pdbs}\n"
            )
        };
        let web = "web-5f7c9d8b6d-4q2xk   1/1   Running   0   6h   10.0.1.7   ip-10-0-1-5   <none>   <none>\n\
                   web-5f7c9d8b6d-wv8m4   1/1   Running   0   6h   10.0.1.8   ip-10-0-1-5   <none>   <none>";
        let report = check_only(
            "KW003",
            &tables("No resources found in shop namespace.", web),
        );
        assert_eq!(ids(&report), ["KW003"]);
        assert!(
            report.diagnoses[0]
                .summary
                .starts_with("Deployment shop/web runs 2 replicas"),
            "{}",
            report.diagnoses[0].summary
        );
        // A PDB row of the namespace: the table pods' labels are unknown, it may select them.
        let listed = "NAME   MIN AVAILABLE   MAX UNAVAILABLE   ALLOWED DISRUPTIONS   AGE\n\
                      web    1               N/A               1                     30d";
        assert!(ids(&check_only("KW003", &tables(listed, web))).is_empty());
        // DaemonSet pods (`<name>-<suffix>`): no hash, no Deployment.
        let daemons = "node-exporter-7xk2p   1/1   Running   0   6h   10.0.1.7   ip-10-0-1-5   <none>   <none>\n\
                       node-exporter-9bq4z   1/1   Running   0   6h   10.0.1.8   ip-10-0-1-5   <none>   <none>";
        assert!(ids(&check_only(
            "KW003",
            &tables("No resources found in shop namespace.", daemons)
        ))
        .is_empty());
    }

    #[test]
    fn pdbs_not_collected_says_so() {
        let mut facts = kong_facts();
        facts.pdbs.clear();
        let d = &check(&facts)[0];
        assert_eq!(d.severity, Severity::Info);
        assert_eq!(d.confidence, Confidence::Low);
        assert!(d.summary.contains("were not collected"), "{}", d.summary);
        assert_eq!(
            d.remediation[0].command.as_deref(),
            Some("kubectl get pdb -n gateway -o yaml")
        );
    }

    #[test]
    fn a_pdb_command_for_the_namespace_means_the_list_was_collected() {
        use crate::facts::ShellCommand;
        let command = |ns: Option<&str>, all: bool| ShellCommand {
            tool: "kubectl".into(),
            verb: Some("get".into()),
            resource: Some("pdb".into()),
            kinds: vec!["PodDisruptionBudget".into()],
            namespace: ns.map(str::to_string),
            all_namespaces: all,
            evidence: Evidence::new("paste", 7, "$ kubectl get pdb -n gateway"),
            ..ShellCommand::default()
        };
        let mut facts = kong_facts();
        facts.pdbs.clear();
        facts.commands.push(command(Some("gateway"), false));
        let d = &check(&facts)[0];
        assert_eq!(d.severity, Severity::Warning);
        assert!(
            d.summary
                .contains("`kubectl get pdb` for namespace gateway (line 7), which lists none"),
            "{}",
            d.summary
        );
        assert!(d.evidence.iter().any(|e| e.line == 7));

        let mut facts = kong_facts();
        facts.pdbs.clear();
        facts.commands.push(command(None, true));
        let d = &check(&facts)[0];
        assert!(
            d.summary
                .contains("an all-namespaces PDB list with none in namespace gateway"),
            "{}",
            d.summary
        );

        // Another namespace's list says nothing about this one.
        let mut facts = kong_facts();
        facts.pdbs.clear();
        facts.commands.push(command(Some("shop"), false));
        assert!(check(&facts)[0].summary.contains("were not collected"));
    }

    #[test]
    fn all_namespaces_list_and_table_pods() {
        // A Deployment, pods from a table (no owners, no labels), PDBs of other namespaces.
        let mut facts = Facts::default();
        let template = labels(&[
            ("app.kubernetes.io/instance", "traefik-traefik"),
            ("app.kubernetes.io/name", "traefik"),
        ]);
        facts.workloads.push(Workload {
            kind: "Deployment".into(),
            meta: Meta {
                name: "traefik".into(),
                namespace: Some("traefik".into()),
                ..Default::default()
            },
            replicas: Some(3),
            selector: LabelSelector {
                match_labels: template.clone(),
                match_expressions: Vec::new(),
            },
            template_labels: template,
            ..Default::default()
        });
        for (name, node) in [
            ("traefik-6d5f8b9c7d-4hq2m", "n1"),
            ("traefik-6d5f8b9c7d-j7wxs", "n2"),
            ("traefik-6d5f8b9c7d-zr9kt", "n1"),
        ] {
            facts.pods.push(Pod {
                meta: Meta {
                    name: name.into(),
                    ..Default::default()
                },
                node_name: Some(node.into()),
                phase: Some("Running".into()),
                ..Default::default()
            });
        }
        for n in ["n1", "n2"] {
            facts.nodes.push(Node {
                meta: Meta {
                    name: n.into(),
                    labels: labels(&[("karpenter.sh/nodepool", "general-purpose")]),
                    ..Default::default()
                },
                ..Default::default()
            });
        }
        for (name, ns) in [("karpenter", "karpenter"), ("coredns", "kube-system")] {
            facts.pdbs.push(Pdb {
                meta: Meta {
                    name: name.into(),
                    namespace: Some(ns.into()),
                    ..Default::default()
                },
                ..Default::default()
            });
        }
        let d = &check(&facts)[0];
        assert!(
            d.summary
                .starts_with("Deployment traefik/traefik runs 3 replicas"),
            "{}",
            d.summary
        );
        assert!(
            d.summary
                .contains("an all-namespaces PDB list with none in namespace traefik"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("from the pod names"), "{}", d.summary);
        assert_eq!(d.severity, Severity::Warning);
    }

    #[test]
    fn ingress_nginx_gets_the_chart_value_and_comes_first() {
        let mut facts = kong_facts();
        let mut other = kong_facts();
        let w = &mut other.workloads[0];
        w.meta.name = "ingress-nginx-controller".into();
        w.meta.namespace = Some("ingress-nginx".into());
        w.meta.annotations.clear();
        w.meta.labels.clear();
        w.selector = selector(&[
            ("app.kubernetes.io/name", "ingress-nginx"),
            ("app.kubernetes.io/instance", "ingress-nginx"),
        ]);
        w.template_labels = w.selector.match_labels.clone();
        for p in &mut other.pods {
            p.meta.namespace = Some("ingress-nginx".into());
            p.meta.labels = w.template_labels.clone();
            p.meta
                .labels
                .insert("pod-template-hash".into(), "7c9f8d6b5".into());
            p.meta.owners = vec![ObjectRef::new(
                "ReplicaSet",
                Some("ingress-nginx"),
                "ingress-nginx-controller-7c9f8d6b5",
            )];
        }
        facts.workloads.extend(other.workloads);
        facts.pods.extend(other.pods);
        let all = check(&facts);
        assert_eq!(all.len(), 2);
        assert!(
            all[0]
                .summary
                .starts_with("Deployment ingress-nginx/ingress-nginx-controller"),
            "{}",
            all[0].summary
        );
        assert!(all[0].remediation.iter().any(|r| r.command.as_deref() == Some("helm upgrade ingress-nginx ingress-nginx/ingress-nginx -n ingress-nginx --reuse-values --set controller.minAvailable=1")));
    }

    #[test]
    fn workload_bound_to_karpenter_without_pods() {
        let mut facts = kong_facts();
        facts.pods.clear();
        assert!(
            check(&facts).is_empty(),
            "no pods, no Karpenter selector: unknown nodes"
        );
        facts.workloads[0]
            .node_selector
            .insert("karpenter.sh/nodepool".into(), "edge-on-demand".into());
        let d = &check(&facts)[0];
        assert!(
            d.summary
                .contains("Karpenter-managed from its node selector"),
            "{}",
            d.summary
        );
    }

    /// Pods and PDBs both known only from tables: whether a PDB of the namespace selects the
    /// pods is unknown, which is said (info, low confidence), not kept silent; a PDB named after
    /// the workload still most likely selects it.
    #[test]
    fn table_pods_and_table_pdbs_leave_it_unknown() {
        let text = |pdb: &str| {
            format!(
                "$ kubectl get pods -n kube-system -o wide\n\
                 NAME                       READY   STATUS    RESTARTS   AGE   IP          NODE     NOMINATED NODE   READINESS GATES\n\
                 coredns-5b8cc885bc-9xq2w   1/1   Running   0   2d   10.0.0.4   ip-a   <none>   <none>\n\
                 coredns-5b8cc885bc-tl7mv   1/1   Running   0   2d   10.0.0.5   ip-a   <none>   <none>\n\n\
                 $ kubectl get nodes -L karpenter.sh/nodepool\n\
                 NAME   STATUS   ROLES    AGE   VERSION   NODEPOOL\n\
                 ip-a   Ready    <none>   3d    v1.31.4   default\n\n\
                 $ kubectl get pdb -n kube-system\n\
                 NAME    MIN AVAILABLE   MAX UNAVAILABLE   ALLOWED DISRUPTIONS   AGE\n\
                 {pdb}   N/A             1                 1                     91d\n"
            )
        };
        let facts = crate::ingest::ingest(&[crate::Document::new("t", text("ebs-csi-controller"))]);
        let d = check(&facts);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].severity, Severity::Info);
        assert!(
            d[0].summary
                .contains("has PDB ebs-csi-controller listed without selectors")
                && d[0].summary.contains("2 of them share node ip-a"),
            "{}",
            d[0].summary
        );
        let facts = crate::ingest::ingest(&[crate::Document::new("t", text("coredns"))]);
        assert!(check(&facts).is_empty());
    }

    /// Replicas that are all Pending on no node (the paste is about why they do not start)
    /// have nothing to drain yet: no KW003 beside the scheduling diagnosis.
    #[test]
    fn pending_replicas_are_not_at_risk_yet() {
        let text = |status: &str, node: &str| {
            format!(
                "$ kubectl get deploy checkout -n shop -o yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: checkout\n  namespace: shop\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: checkout\n  template:\n    metadata:\n      labels:\n        app: checkout\n    spec:\n      nodeSelector:\n        karpenter.sh/nodepool: default\n---\n$ kubectl get pods -n shop -o wide\n\
                 NAME                        READY   STATUS    RESTARTS   AGE   IP       NODE     NOMINATED NODE   READINESS GATES\n\
                 checkout-6d8f7c9b5d-2kq7x   0/1     {status}   0          12m   <none>   {node}   <none>           <none>\n\
                 checkout-6d8f7c9b5d-9wz4m   0/1     {status}   0          12m   <none>   {node}   <none>           <none>\n"
            )
        };
        let facts = crate::ingest::ingest(&[crate::Document::new("t", text("Pending", "<none>"))]);
        assert!(check(&facts).is_empty());
        let facts = crate::ingest::ingest(&[crate::Document::new("t", text("Running", "ip-a"))]);
        assert_eq!(check(&facts).len(), 1);
    }

    #[test]
    fn yaml_scalars_are_quoted_when_needed() {
        assert_eq!(yaml_scalar("gateway"), "gateway");
        assert_eq!(yaml_scalar("3.9"), "\"3.9\"");
        assert_eq!(yaml_scalar("true"), "\"true\"");
    }

    #[test]
    fn pdb_selector_from_the_pods_commands_equality_terms_only() {
        let yaml_of = |selector: &str| {
            let text = format!(
                "$ kubectl get pods -n dns -l {selector} -o wide\n\
                 NAME                     READY   STATUS    RESTARTS   AGE   IP          NODE     NOMINATED NODE   READINESS GATES\n\
                 coredns-6f6d89bcc9-4tz8h   1/1   Running   0   3d   10.0.0.4   ip-a   <none>   <none>\n\
                 coredns-6f6d89bcc9-h2n7x   1/1   Running   0   3d   10.0.0.5   ip-a   <none>   <none>\n\n\
                 $ kubectl get nodes -L karpenter.sh/nodepool\n\
                 NAME   STATUS   ROLES    AGE   VERSION   NODEPOOL\n\
                 ip-a   Ready    <none>   3d    v1.31.4   default\n\n\
                 $ kubectl get pdb -n dns\n\
                 No resources found in dns namespace.\n"
            );
            let facts = crate::ingest::ingest(&[crate::Document::new("t", &text)]);
            let d = check(&facts);
            d.first()
                .and_then(|d| d.remediation.iter().find_map(|r| r.yaml.clone()))
                .unwrap_or_default()
        };
        assert!(yaml_of("k8s-app==kube-dns").contains("      k8s-app: kube-dns\n"));
        for s in ["k8s-app!=x", "k8s-app", "tier in (a,b)"] {
            assert!(yaml_of(s).contains("<label>: <value>"), "{s}");
        }
    }
}
