//! KW206 topology-spread-unsatisfiable.

use crate::facts::Facts;
use crate::rules::kw2xx::scheduling::{
    group_hits, hit_messages, in_values, nodepool_subnets, pod_label, pools_label,
    scheduling_errors, Cause, Clause, Hit, NodePoolSubnets,
};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW206",
    slug: "topology-spread-unsatisfiable",
    title: "The pod's topology spread or pod (anti-)affinity cannot be satisfied",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The pod has a `topologySpreadConstraints` with `whenUnsatisfiable: DoNotSchedule`, or a
required pod affinity / anti-affinity, and no node Karpenter could launch would keep the
constraint: the domain it would have to use (a zone, a hostname) is not one the NodePool can
produce.

Signals (inside `Failed to schedule pod, ...` and `could not schedule pod`):
`unsatisfiable topology constraint for topology spread, key=<key> (counts = ..., podDomains =
..., nodeDomains = ...` (Karpenter prints no closing parenthesis), and the same text for `pod
affinity` and `pod anti-affinity`. `counts` is how many matching pods each domain holds,
`podDomains` the domains the pod allows, `nodeDomains` those the NodePools can create.

## Why it happens
Eligible domains come from the pod's own requirements, not from the NodePool: a pod that
spreads over every zone (`maxSkew: 1`) while the only compatible NodePool allows two of three
zones needs a node in the third zone for its next replica, which no NodePool can make. A zone the
NodePool allows is still no node domain when its EC2NodeClass has no subnet there (offerings
take their zones from the subnets). For
anti-affinity on `kubernetes.io/hostname`, every replica needs a node of its own.

A domain with an empty name in the counts (`counts = : 0, ...`) is a known Karpenter
behaviour: instance-type offerings without a zone (Azure provider 1.6 to 1.7,
Azure/karpenter-provider-azure#1384) or nodes whose label value is empty
(kubernetes-sigs/karpenter#3146) add the domain `""`; with the fewest pods it is the only one
the skew allows, and Karpenter takes it for no domain, so the pod never schedules.

## How to fix
Restrict the pod's zones to the NodePool's with a `nodeAffinity` (then the spread is computed
over those zones only), or add the missing zone to the NodePool (and a subnet in it to its
EC2NodeClass); relax the constraint with
`whenUnsatisfiable: ScheduleAnyway` where balance is a preference. For anti-affinity: allow
more nodes (limits, instance types), or run fewer replicas than eligible nodes. For the empty
domain, give every NodePool an explicit requirement on the key and restrict the pod to the
real domains.
"#,
};

const SIGNALS: &[&str] = &[
    "could not schedule pod",
    "failed to schedule pod",
    "unsatisfiable topology constraint",
];

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let errors = scheduling_errors(facts);
    // One diagnosis per pod and NodePool: the constraints it cannot satisfy there are one
    // problem with one remediation, each step once.
    let groups = group_hits(
        &errors,
        |c| matches!(c.cause, Cause::Topology { .. }),
        |c| format!("{:?}", c.nodepool),
    );
    // Several NodePools failing on a spread in one message (one NodePool per zone is common)
    // are one problem: the domains they can create together are what the pod may use.
    let mut merged: Vec<Vec<Hit<'_, '_>>> = Vec::new();
    for g in groups {
        match merged
            .iter_mut()
            .find(|m| std::ptr::eq(m[0].error, g[0].error))
        {
            Some(m) => m.extend(g),
            None => merged.push(g),
        }
    }
    let mut out = Vec::new();
    for hits in merged {
        let first = hits[0];
        let pools: Vec<&Clause> = hits
            .iter()
            .filter(|h| std::ptr::eq(h.error, first.error))
            .map(|h| h.clause)
            .collect();
        let names: Vec<String> = pools.iter().filter_map(|c| c.nodepool.clone()).collect();
        let words = Words::of(facts, first.clause);
        let mut summary = String::new();
        let mut steps: Vec<Remediation> = Vec::new();
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for hit in &hits {
            let Cause::Topology {
                constraint, key, ..
            } = &hit.clause.cause
            else {
                continue;
            };
            // A repeated log line, or the same constraint with other counts: told once.
            if seen.contains(&(constraint.as_str(), key.as_str())) {
                continue;
            }
            seen.push((constraint.as_str(), key.as_str()));
            let Some((part, part_steps)) = one_constraint(facts, hit, seen.len() > 1, words) else {
                continue;
            };
            if !summary.is_empty() {
                summary.push(' ');
            }
            summary.push_str(&part);
            for step in part_steps {
                add_step(&mut steps, step);
            }
        }
        if summary.is_empty() {
            continue;
        }
        summary.push_str(&first.error.nearest_note_among(&pools));
        let spreads = seen.iter().filter(|(c, _)| !c.contains("affinity")).count();
        merge_key_steps(&mut steps, words);
        if spreads > 1 {
            // The relax step holds for every spread: said once, last, about them all.
            let relax = "ScheduleAnyway` on the constraint";
            if let Some(i) = steps.iter().position(|s| s.text.contains(relax)) {
                let mut step = steps.remove(i);
                step.text = step
                    .text
                    .replace(relax, "ScheduleAnyway` on those constraints");
                steps.push(step);
            }
        }
        out.push(
            Diagnosis::new(&META, summary)
                .with_object(first.error.pod.as_ref())
                .with_node_pools(&names)
                .with_messages(hit_messages(&hits))
                .with_remediation(steps),
        );
    }
    out
}

const REQUIREMENTS: &str = "spec:\n  template:\n    spec:\n      requirements:\n";
/// A v1alpha5 Provisioner's requirements are at the top of its spec.
const PROVISIONER_REQUIREMENTS: &str = "spec:\n  requirements:\n";

/// The words and resources of the user's Karpenter API: before v0.32 the Provisioner and its
/// AWSNodeTemplate (`kubectl edit nodepool` fails on such a cluster).
#[derive(Clone, Copy)]
struct Words {
    legacy: bool,
}

impl Words {
    fn of(facts: &Facts, clause: &crate::rules::kw2xx::scheduling::Clause) -> Words {
        Words {
            legacy: clause.provisioner
                || clause
                    .nodepool
                    .as_deref()
                    .and_then(|n| facts.nodepool(n))
                    .is_some_and(|p| p.is_provisioner)
                || crate::rules::version::before_v0_32(facts),
        }
    }
    fn pool(self) -> &'static str {
        if self.legacy {
            "Provisioner"
        } else {
            "NodePool"
        }
    }
    fn pool_res(self) -> &'static str {
        if self.legacy {
            "provisioner"
        } else {
            "nodepool"
        }
    }
    fn class(self) -> &'static str {
        if self.legacy {
            "AWSNodeTemplate"
        } else {
            "EC2NodeClass"
        }
    }
    fn requirements(self) -> &'static str {
        if self.legacy {
            PROVISIONER_REQUIREMENTS
        } else {
            REQUIREMENTS
        }
    }
    /// `Provisioner "default"` / `a NodePool`.
    fn label(self, clause: &crate::rules::kw2xx::scheduling::Clause) -> String {
        match &clause.nodepool {
            Some(np) => format!("{} \"{np}\"", self.pool()),
            None => format!("a {}", self.pool()),
        }
    }
}
const NODE_AFFINITY: &str = "affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n      nodeSelectorTerms:\n        - matchExpressions:\n";

/// Several keys to widen on one NodePool are one edit, and several keys to restrict the pod
/// to are one nodeAffinity term: their YAML items join the first such step, which then
/// speaks of them all.
fn merge_key_steps(steps: &mut Vec<Remediation>, words: Words) {
    merge_steps(steps, words.requirements(), &|text, yaml| {
        let text = text.replacen("the constraint needs", "the constraints need", 1);
        // The notes follow the `kubectl edit <pool> <np>` command: rebuild them for every key.
        let Some(start) = text.find("(`kubectl edit ") else {
            return text;
        };
        let Some(end) = text[start + 2..].find('`').map(|e| start + 2 + e + 1) else {
            return text;
        };
        format!("{}{}):", &text[..end], widen_notes(&keys_of(yaml), words))
    });
    merge_steps(steps, NODE_AFFINITY, &|_, yaml| {
        let keys: Vec<&str> = yaml
            .lines()
            .filter_map(|l| l.trim().strip_prefix("- key: "))
            .collect();
        format!(
            "Restrict the pod's {} to the domains the {}s can create, so each spread is computed over those only (pod template):",
            keys.join(" and "),
            words.pool()
        )
    });
}

fn keys_of(yaml: &str) -> Vec<&str> {
    yaml.lines()
        .filter_map(|l| l.trim().strip_prefix("- key: "))
        .collect()
}

fn is_zone_key(key: &str) -> bool {
    matches!(
        key,
        "topology.kubernetes.io/zone" | "failure-domain.beta.kubernetes.io/zone"
    )
}

/// What else a NodePool needs to launch nodes in each value of `key`, as `; <note>` clauses
/// after the edit command.
fn widen_notes(keys: &[&str], words: Words) -> String {
    let mut notes: Vec<String> = Vec::new();
    for key in keys {
        let note = if is_zone_key(key) {
            format!("its {} needs a subnet in each zone", words.class())
        } else if *key == "topology.k8s.aws/zone-id" {
            format!("its {} needs a subnet in each zone ID", words.class())
        } else if *key == "karpenter.sh/capacity-type" {
            "each capacity type needs offerings of the allowed instance types, and spot the EC2 Spot service-linked role".to_string()
        } else if key.starts_with("karpenter.k8s.aws/")
            || matches!(
                *key,
                "node.kubernetes.io/instance-type" | "kubernetes.io/arch" | "kubernetes.io/os"
            )
        {
            "each value needs instance types that have it".to_string()
        } else {
            "Karpenter labels a new node with one of the listed values, so list each one the constraint counts".to_string()
        };
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    notes.iter().map(|n| format!("; {n}")).collect()
}

/// Merges the steps whose YAML starts with `prefix` into the first of them (its items
/// appended), its text rewritten by `reword(text, merged yaml)` when there were several.
fn merge_steps(steps: &mut Vec<Remediation>, prefix: &str, reword: &dyn Fn(&str, &str) -> String) {
    let is_mergeable = |s: &Remediation| s.yaml.as_deref().is_some_and(|y| y.starts_with(prefix));
    let Some(first) = steps.iter().position(is_mergeable) else {
        return;
    };
    let mut items = String::new();
    let mut kept = Vec::new();
    for (i, step) in std::mem::take(steps).into_iter().enumerate() {
        match step.yaml.as_deref() {
            Some(y) if i != first && y.starts_with(prefix) => items.push_str(&y[prefix.len()..]),
            _ => kept.push(step),
        }
    }
    *steps = kept;
    if items.is_empty() {
        return;
    }
    let step = &mut steps[first];
    if let Some(y) = &mut step.yaml {
        y.push_str(&items);
        step.text = reword(&step.text, y);
    }
}

/// Adds `step` unless an equal one is there: the same YAML (restricting or widening one key
/// for two constraints on it) or, without YAML, the same text (the ScheduleAnyway advice).
fn add_step(steps: &mut Vec<Remediation>, step: Remediation) {
    let same = |s: &Remediation| match (&s.yaml, &step.yaml) {
        (Some(a), Some(b)) => a == b && s.command == step.command,
        (None, None) => s.text == step.text && s.command == step.command,
        _ => false,
    };
    if !steps.iter().any(same) {
        steps.push(step);
    }
}

/// The summary sentences and remediation steps of one unsatisfiable constraint; `again`
/// for the second and later constraints of the same pod and NodePool.
fn one_constraint(
    facts: &Facts,
    first: &Hit<'_, '_>,
    again: bool,
    words: Words,
) -> Option<(String, Vec<Remediation>)> {
    let (pool, pool_res, req) = (words.pool(), words.pool_res(), words.requirements());
    let clause = first.clause;
    let Cause::Topology {
        constraint,
        key,
        counts,
        pod_domains,
        node_domains,
    } = &clause.cause
    else {
        return None;
    };
    let pod = first.error.pod.as_ref();
    let counted = counts.as_deref().map(domains_of_counts).unwrap_or_default();
    let siblings: Vec<&Clause> = first
        .error
        .clauses
        .iter()
        .filter(|c| {
            matches!(&c.cause, Cause::Topology { constraint: k, key: kk, .. } if k == constraint && kk == key)
        })
        .collect();
    let mut node_values: Vec<String> = Vec::new();
    for c in &siblings {
        if let Cause::Topology {
            node_domains: Some(d),
            ..
        } = &c.cause
        {
            for v in in_values(d, key).unwrap_or_default() {
                if !node_values.contains(&v) {
                    node_values.push(v);
                }
            }
        }
    }
    let several: Vec<String> = siblings.iter().filter_map(|c| c.nodepool.clone()).collect();
    let several = (several.len() > 1).then_some(several);
    let pool_values = clause
        .nodepool
        .as_deref()
        .and_then(|n| facts.nodepool(n))
        .and_then(|np| np.allowed_values(key));
    let missing: Vec<&String> = counted
        .iter()
        .filter(|d| !node_values.is_empty() && !node_values.contains(d))
        .collect();
    let anti = constraint.contains("anti-affinity");
    let mut summary = if again {
        format!("It also cannot satisfy its {constraint} on {key}")
    } else {
        format!(
            "{} cannot satisfy its {constraint} on {key}",
            pod_label(pod)
        )
    };
    match &several {
        Some(names) => summary.push_str(&format!(" with {}", pools_label(pool, names))),
        None if clause.nodepool.is_some() => {
            summary.push_str(&format!(" with {}", words.label(clause)))
        }
        None => {}
    }
    summary.push('.');
    if let Some(c) = counts {
        summary.push_str(&format!(
            " Matching pods per domain: {}.",
            readable_counts(c)
        ));
    }
    if let Some(d) = pod_domains {
        summary.push_str(&format!(" The pod allows `{d}`"));
        match (node_domains, &several) {
            (Some(_), Some(_)) if !node_values.is_empty() => summary.push_str(&format!(
                ", the {pool}s together can create only {key} [{}].",
                node_values.join(" ")
            )),
            (Some(n), _) => summary.push_str(&format!(", the {pool}s can create only `{n}`.")),
            (None, _) => summary.push('.'),
        }
    }
    if !missing.is_empty() && !anti {
        let list: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
        if constraint.contains("affinity") {
            summary.push_str(&format!(
                " The pods it must join are in {}, where no {pool} can launch a node.",
                list.join(", ")
            ));
        } else {
            summary.push_str(&format!(
                " The spread counts {} too, where no {pool} can launch a node: the next replica would have to go there.",
                list.join(", ")
            ));
        }
    }
    let empty = counts
        .as_deref()
        .and_then(empty_domain_count)
        .filter(|_| !anti);
    if let Some(n) = empty {
        summary.push_str(&format!(
            " The counts include a domain with an empty name (`: {n}`): an offering or node whose {key} value is empty counts as a domain of its own with the fewest pods, and Karpenter takes a choice of the empty domain for no domain at all, so the constraint is unsatisfiable although the real domains have room."
        ));
    }
    if let Some(pool) = &pool_values {
        summary.push_str(&format!(
            " {} allows {key} [{}].",
            words.label(clause),
            pool.join(" ")
        ));
    }
    // Karpenter takes the zones of a NodePool's offerings from its node class's subnets: a
    // zone the NodePool allows still has no node domain when the class has no subnet there.
    let subnet_gaps = if is_zone_key(key) && !anti {
        subnet_gaps(facts, &siblings, clause, key, &missing)
    } else {
        Vec::new()
    };
    for (pool_name, subnets, zones) in &subnet_gaps {
        summary.push_str(&format!(
            " {} {} has no subnet in {}{}: {} \"{pool_name}\" allows the zone, but Karpenter launches only where its {} has a subnet.",
            words.class(),
            subnets.nodeclass,
            zones.join(", "),
            subnets
                .zones
                .as_ref()
                .map(|z| format!(" (its subnets cover [{}])", z.join(" ")))
                .unwrap_or_default(),
            pool,
            words.class(),
        ));
    }
    let placeholder = format!("<{pool_res}>");
    let np = clause.nodepool.as_deref().unwrap_or(&placeholder);
    let mut steps = Vec::new();
    if anti {
        steps.push(Remediation::text(format!(
            "Each replica needs its own {key} domain: let the {pool} launch more nodes (raise its limits, allow more instance types), run fewer replicas, or make the anti-affinity preferred (preferredDuringSchedulingIgnoredDuringExecution)."
        )));
    } else {
        if empty.is_some() {
            steps.push(Remediation::text(format!(
                "The empty domain is a known Karpenter behaviour, not your spread: an empty `{key}` value enters the domains when a provider offers instance types without a zone (Azure provider 1.6 to 1.7, Azure/karpenter-provider-azure#1384, fixed there by not offering them) and any {pool} lacks a {key} requirement, or when nodes carry the label with an empty value (kubernetes-sigs/karpenter#3146, open). Give every {pool} an explicit {key} requirement (In the real domains) and restrict the pod to the real domains (below), which keeps the empty value out of the count; upgrade the provider where the fix has shipped."
            )));
        }
        let values = if !node_values.is_empty() {
            quote_list(&node_values)
        } else if is_zone_key(key) || key == "topology.k8s.aws/zone-id" {
            "\"<zone-a>\", \"<zone-b>\"".to_string()
        } else {
            "\"<value-a>\", \"<value-b>\"".to_string()
        };
        let affinity = constraint.contains("affinity");
        let hostname = key == "kubernetes.io/hostname";
        if hostname {
            // Every node is a domain of its own: no requirement widens or narrows that.
            let text = if affinity {
                format!("With pod affinity on {key} the pod must join the node that runs the pods it matches, and a new node cannot be that node: make room on it, or make the affinity preferred (preferredDuringSchedulingIgnoredDuringExecution).")
            } else {
                format!("Each node is its own {key} domain, so no {pool} requirement widens it: the spread needs Karpenter to launch another node. Check that {pool} {np} may (its limits, KW205; instance types that fit the pod, KW201), or allow more skew (a higher maxSkew).")
            };
            add_step(&mut steps, Remediation::text(text));
        } else if !affinity {
            steps.push(Remediation::yaml(
            format!("Restrict the pod's {key} to the domains the {pool}s can create, so the spread is computed over those only (pod template):"),
            format!(
                "affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n      nodeSelectorTerms:\n        - matchExpressions:\n            - key: {key}\n              operator: In\n              values: [{values}]\n"
            ),
        ));
        }
        let own = || {
            node_domains
                .as_deref()
                .and_then(|d| in_values(d, key))
                .unwrap_or_default()
        };
        let mut widened: Vec<String> = pool_values.clone().unwrap_or_else(own);
        for m in &missing {
            if !widened.contains(m) {
                widened.push((*m).clone());
            }
        }
        // Nothing names the domain that is missing: the message's node domains are what the
        // NodePool creates already, so the edit must add one the input does not show (an empty
        // domain is another story: there the explicit list of the real ones is the fix).
        if missing.is_empty() && pool_values.is_none() && !widened.is_empty() && empty.is_none() {
            widened.push(
                if is_zone_key(key) {
                    "<another-zone>"
                } else {
                    "<another-value>"
                }
                .to_string(),
            );
        }
        // Widening a NodePool that already allows every zone the spread needs changes nothing.
        let widens = pool_values
            .as_ref()
            .is_none_or(|allowed| widened.iter().any(|w| !allowed.contains(w)));
        if !widened.is_empty() && !hostname && widens {
            steps.push(Remediation::yaml(
                format!(
                    "{} {pool} {np}{} to every domain the constraint needs (`kubectl edit {pool_res} {np}`{}):",
                    if affinity { "Widen" } else { "Or widen" },
                    if several.is_some() { format!(" (or another of them, or a new {pool})") } else { String::new() },
                    widen_notes(&[key.as_str()], words)
                ),
                // The item is indented under `requirements:` of either layout.
                format!(
                    "{req}{:indent$}- key: {key}\n{:indent$}  operator: In\n{:indent$}  values: [{}]\n",
                    "",
                    "",
                    "",
                    quote_list(&widened),
                    indent = req.lines().count() * 2,
                ),
            ));
        }
        let class_res = if words.legacy {
            "awsnodetemplate"
        } else {
            "ec2nodeclass"
        };
        for (_, subnets, zones) in &subnet_gaps {
            let nc = &subnets.nodeclass;
            steps.push(Remediation::command(
                format!(
                    "Or give {} {nc} a subnet in {}: tag an existing subnet there with the tag its subnet selector matches (create one in the cluster's VPC if the zone has none), then check `kubectl get {class_res} {nc} -o jsonpath='{{.status.subnets}}'`.",
                    words.class(),
                    zones.join(", "),
                ),
                subnets.tag_subnet_command(&zones.join(",")),
            ));
        }
        if !affinity {
            steps.push(Remediation::text(
                "Or, where balance is a preference rather than a rule, set `whenUnsatisfiable: ScheduleAnyway` on the constraint.",
            ));
        }
    }
    Some((summary, steps))
}

/// The NodePools of the constraint whose node class the input shows without a subnet in a
/// zone the spread needs and the NodePool allows (or does not restrict): each NodePool once,
/// with its node class's subnets and those zones.
fn subnet_gaps(
    facts: &Facts,
    siblings: &[&Clause],
    clause: &Clause,
    key: &str,
    needed: &[&String],
) -> Vec<(String, NodePoolSubnets, Vec<String>)> {
    let mut names: Vec<&str> = siblings
        .iter()
        .filter_map(|c| c.nodepool.as_deref())
        .collect();
    if let Some(n) = clause.nodepool.as_deref() {
        names.push(n);
    }
    let mut out: Vec<(String, NodePoolSubnets, Vec<String>)> = Vec::new();
    for name in names {
        if out.iter().any(|(n, _, _)| n == name) {
            continue;
        }
        let (Some(np), Some(subnets)) = (facts.nodepool(name), nodepool_subnets(facts, name))
        else {
            continue;
        };
        let allowed = np.allowed_values(key);
        let wanted: Vec<String> = needed
            .iter()
            .filter(|z| allowed.as_ref().is_none_or(|a| a.contains(z)))
            .map(|z| (*z).clone())
            .collect();
        let gaps: Vec<String> = subnets.missing(&wanted).into_iter().cloned().collect();
        if !gaps.is_empty() {
            out.push((name.to_string(), subnets, gaps));
        }
    }
    out
}

/// The domain names of `counts = us-east-1a: 2, us-east-1b: 1 and 3 other(s)` (v1.x), of the
/// comma-less `2: 0 3: 0 1: 2 ` some releases print, and of Go's `map[us-east-1a:2 ...]`
/// (v0.2x). An empty domain (`: 0`, a node without the key's label) names nothing.
fn domains_of_counts(counts: &str) -> Vec<String> {
    let cleaned = counts.replace("map[", " ").replace([']', ','], " ");
    let tokens: Vec<&str> = cleaned.split_whitespace().collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i];
        let count_follows = tokens.get(i + 1).is_some_and(|n| n.parse::<u64>().is_ok());
        let domain = match token.strip_suffix(':') {
            Some(d) if count_follows => {
                i += 1;
                Some(d)
            }
            Some(_) => None,
            None => token
                .rsplit_once(':')
                .filter(|(_, n)| n.parse::<u64>().is_ok())
                .map(|(d, _)| d),
        };
        if let Some(d) = domain.filter(|d| !d.is_empty()) {
            if !out.iter().any(|o| o == d) {
                out.push(d.to_string());
            }
        }
        i += 1;
    }
    out
}

/// Go's map form of the counts (`map[us-east-1a:1 us-east-1b:0]`, before v0.32) in the
/// `domain: count, ...` form later releases print; other forms as they are.
fn readable_counts(counts: &str) -> String {
    let Some(inner) = counts
        .trim()
        .strip_prefix("map[")
        .and_then(|c| c.strip_suffix(']'))
    else {
        return counts.to_string();
    };
    if inner.trim().is_empty() {
        return "none".to_string();
    }
    let pairs: Option<Vec<String>> = inner
        .split_whitespace()
        .map(|pair| {
            let (domain, n) = pair.rsplit_once(':')?;
            n.parse::<u64>().ok()?;
            Some(format!("{domain}: {n}"))
        })
        .collect();
    match pairs {
        Some(p) if !p.is_empty() => p.join(", "),
        _ => counts.to_string(),
    }
}

/// The count of the empty-named domain in `counts = : 0, us-east-1a: 2, ...` (or Go's
/// `map[:0 us-east-1a:2]`), when the counts have one.
fn empty_domain_count(counts: &str) -> Option<u64> {
    let cleaned = counts.replace("map[", " ").replace([']', ','], " ");
    let tokens: Vec<&str> = cleaned.split_whitespace().collect();
    tokens.iter().enumerate().find_map(|(i, t)| {
        if *t == ":" {
            tokens.get(i + 1)?.parse::<u64>().ok()
        } else {
            t.strip_prefix(':')?.parse::<u64>().ok()
        }
    })
}

fn quote_list(values: &[String]) -> String {
    values
        .iter()
        .map(|v| format!("\"{v}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

    #[test]
    fn v1_5_spread_names_the_missing_zone() {
        let report = check_only(
            "KW206",
            r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"es-2","namespace":"search"},"error":"unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone (counts = us-east-1a: 1, us-east-1b: 1, us-east-1c: 0, podDomains = topology.kubernetes.io/zone Exists, nodeDomains = topology.kubernetes.io/zone In [us-east-1a us-east-1b]"}"#,
        );
        assert_eq!(ids(&report), ["KW206"]);
        let d = &report.diagnoses[0];
        assert!(d.summary.contains("us-east-1c"), "{}", d.summary);
        let yaml = d.remediation[0].yaml.as_deref().unwrap();
        assert!(
            yaml.contains("values: [\"us-east-1a\", \"us-east-1b\"]"),
            "{yaml}"
        );
    }

    const SPREAD_LOG: &str = r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"web-1","namespace":"shop"},"error":"incompatible with nodepool \"general\", daemonset overhead={\"cpu\":\"180m\"}, unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone (counts = us-east-1a: 3, us-east-1b: 3, us-east-1c: 2, podDomains = topology.kubernetes.io/zone Exists, nodeDomains = topology.kubernetes.io/zone In [us-east-1a us-east-1b]"}"#;

    fn with_class(subnet_zones: &[&str]) -> String {
        let subnets: String = subnet_zones
            .iter()
            .enumerate()
            .map(|(i, z)| format!("  - id: subnet-{i}\n    zone: {z}\n"))
            .collect();
        format!(
            "{SPREAD_LOG}\n---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: general\nspec:\n  template:\n    spec:\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: shop-nodes\n      requirements:\n      - key: topology.kubernetes.io/zone\n        operator: In\n        values: [\"us-east-1a\", \"us-east-1b\", \"us-east-1c\"]\n---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: shop-nodes\nspec:\n  subnetSelectorTerms:\n  - tags:\n      karpenter.sh/discovery: shop\nstatus:\n  subnets:\n{subnets}"
        )
    }

    #[test]
    fn names_the_node_class_without_a_subnet_in_the_zone_the_spread_needs() {
        let report = check_only("KW206", &with_class(&["us-east-1a", "us-east-1b"]));
        assert_eq!(ids(&report), ["KW206"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("EC2NodeClass shop-nodes has no subnet in us-east-1c"),
            "{}",
            d.summary
        );
        let subnet_step = d
            .remediation
            .iter()
            .find(|r| r.text.contains("a subnet in us-east-1c"))
            .expect("a subnet step");
        let command = subnet_step.command.as_deref().unwrap();
        assert!(command.contains("Values=us-east-1c"), "{command}");
        assert!(
            command.contains("Key=karpenter.sh/discovery,Value=shop"),
            "{command}"
        );
        // The NodePool already allows the zone: telling the user to widen it would be a no-op.
        assert!(
            !d.remediation
                .iter()
                .any(|r| r.text.contains("widen NodePool")),
            "{:?}",
            d.remediation
        );
    }

    #[test]
    fn subnets_in_every_zone_are_not_blamed() {
        let report = check_only(
            "KW206",
            &with_class(&["us-east-1a", "us-east-1b", "us-east-1c"]),
        );
        assert_eq!(ids(&report), ["KW206"]);
        let d = &report.diagnoses[0];
        assert!(!d.summary.contains("has no subnet"), "{}", d.summary);
        assert!(!d.remediation.iter().any(|r| r.text.contains("a subnet in")));
    }

    #[test]
    fn v1_0_prefixed_anti_affinity_and_affinity() {
        for (text, kind) in [
            (r#"Failed to schedule pod, incompatible with nodepool "default", daemonset overhead={"cpu":"910m"}, unsatisfiable topology constraint for pod anti-affinity, key=kubernetes.io/hostname (counts = ip-10-0-1-10.ec2.internal: 1, podDomains = kubernetes.io/hostname Exists, nodeDomains = kubernetes.io/hostname In [hostname-placeholder-0001]"#, "pod anti-affinity"),
            ("Failed to schedule pod, unsatisfiable topology constraint for pod affinity, key=topology.kubernetes.io/zone (counts = , podDomains = topology.kubernetes.io/zone In [eu-west-1a], nodeDomains = topology.kubernetes.io/zone In [eu-west-1b]", "pod affinity"),
        ] {
            let report = check_only("KW206", text);
            assert_eq!(ids(&report), ["KW206"], "{text}");
            assert!(report.diagnoses[0].summary.contains(kind));
        }
    }

    #[test]
    fn counts_in_every_printed_shape() {
        for (counts, want) in [
            (
                "us-east-1a: 1, us-east-1b: 1, us-east-1c: 0",
                vec!["us-east-1a", "us-east-1b", "us-east-1c"],
            ),
            ("2: 0 3: 0 1: 2 ", vec!["2", "3", "1"]),
            (
                "map[us-west-2a:2 us-west-2b:0]",
                vec!["us-west-2a", "us-west-2b"],
            ),
            (
                ": 0, eastus2-1: 2, eastus2-2: 1",
                vec!["eastus2-1", "eastus2-2"],
            ),
            ("a: 1, b: 2 and 3 other(s)", vec!["a", "b"]),
        ] {
            assert_eq!(super::domains_of_counts(counts), want, "{counts}");
        }
    }

    #[test]
    fn go_map_counts_read_like_the_later_form() {
        assert_eq!(
            super::readable_counts("map[us-east-1a:1 us-east-1b:1 us-east-1c:0]"),
            "us-east-1a: 1, us-east-1b: 1, us-east-1c: 0"
        );
        assert_eq!(
            super::readable_counts("map[:0 us-west-2a:2]"),
            ": 0, us-west-2a: 2"
        );
        assert_eq!(super::readable_counts("map[]"), "none");
        assert_eq!(
            super::readable_counts("us-east-1a: 2, us-east-1b: 1"),
            "us-east-1a: 2, us-east-1b: 1"
        );
    }

    #[test]
    fn empty_domain_is_named_only_when_present() {
        for (counts, want) in [
            (": 0, eastus2-1: 2, eastus2-2: 1", Some(0)),
            ("us-east-1a: 2, : 3", Some(3)),
            ("map[:0 us-west-2a:2]", Some(0)),
            ("us-east-1a: 1, us-east-1b: 1, us-east-1c: 0", None),
            ("2: 0 3: 0 1: 2 ", None),
            ("", None),
        ] {
            assert_eq!(super::empty_domain_count(counts), want, "{counts}");
        }
        let text = |counts: &str| {
            format!("Failed to schedule pod, unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone (counts = {counts}, podDomains = topology.kubernetes.io/zone Exists, nodeDomains = topology.kubernetes.io/zone In [eastus2-1 eastus2-2 eastus2-3]")
        };
        let report = check_only(
            "KW206",
            &text(": 0, eastus2-1: 2, eastus2-2: 1, eastus2-3: 1"),
        );
        let d = &report.diagnoses[0];
        assert!(d.summary.contains("empty name (`: 0`)"), "{}", d.summary);
        assert!(d.remediation[0].text.contains("#3146"));
        let report = check_only("KW206", &text("eastus2-1: 2, eastus2-2: 1, eastus2-3: 0"));
        let d = &report.diagnoses[0];
        assert!(!d.summary.contains("empty name"), "{}", d.summary);
        assert!(d.remediation.iter().all(|r| !r.text.contains("#3146")));
    }

    #[test]
    fn the_widen_step_is_worded_for_its_key() {
        let report_for = |key: &str, counts: &str, nodes: &str| {
            check_only(
                "KW206",
                &format!("Failed to schedule pod, incompatible with nodepool \"general\", daemonset overhead={{\"cpu\":\"150m\"}}, unsatisfiable topology constraint for topology spread, key={key} (counts = {counts}, podDomains = {key} Exists, nodeDomains = {key} In [{nodes}]"),
            )
        };
        let all_text = |report: &crate::Report| {
            report.diagnoses[0]
                .remediation
                .iter()
                .map(|r| r.text.clone())
                .collect::<Vec<_>>()
                .join("\n")
        };
        let zone = all_text(&report_for(
            "topology.kubernetes.io/zone",
            "us-east-1a: 2, us-east-1b: 1",
            "us-east-1a",
        ));
        assert!(zone.contains("a subnet in each zone"), "{zone}");
        for (key, counts, nodes, want) in [
            (
                "karpenter.sh/capacity-type",
                "on-demand: 3, spot: 1",
                "on-demand",
                "each capacity type needs offerings",
            ),
            (
                "team.example.com/rack",
                "r1: 2, r2: 0",
                "r1",
                "list each one the constraint counts",
            ),
            (
                "kubernetes.io/hostname",
                "ip-10-0-1-1: 2",
                "ip-10-0-1-1",
                "Each node is its own kubernetes.io/hostname domain",
            ),
        ] {
            let text = all_text(&report_for(key, counts, nodes));
            assert!(!text.contains("subnet"), "{key}: {text}");
            assert!(text.contains(want), "{key}: {text}");
        }
        // No NodePool requirement for hostnames.
        let report = report_for("kubernetes.io/hostname", "ip-10-0-1-1: 2", "ip-10-0-1-1");
        assert!(report.diagnoses[0].remediation.iter().all(|r| !r
            .yaml
            .as_deref()
            .unwrap_or_default()
            .contains("kubernetes.io/hostname")));
    }

    /// Before v0.32 the pool is a Provisioner with its requirements at the top of its spec and
    /// an AWSNodeTemplate for subnets: `kubectl edit nodepool` fails there. Two keys merge
    /// into one Provisioner edit.
    #[test]
    fn a_provisioner_gets_provisioner_words_and_layout() {
        let line = |key: &str, counts: &str, nodes: &str| {
            format!("2023-03-02T11:20:31.440Z\tERROR\tcontroller.provisioner\tCould not schedule pod, incompatible with provisioner \"default\", unsatisfiable topology constraint for topology spread, key={key} (counts = map[{counts}], podDomains = {key} Exists, nodeDomains = {key} In [{nodes}]\t{{\"commit\": \"0d1d5d2\", \"pod\": \"default/inflate-1\"}}")
        };
        let text = format!(
            "{}\n{}",
            line(
                "topology.kubernetes.io/zone",
                "us-east-1a:2 us-east-1b:2 us-east-1c:1",
                "us-east-1a us-east-1b"
            ),
            line(
                "karpenter.sh/capacity-type",
                "on-demand:3 spot:1",
                "on-demand"
            ),
        );
        let d = &check_only("KW206", &text).diagnoses[0];
        let all: String = std::iter::once(d.summary.clone())
            .chain(
                d.remediation
                    .iter()
                    .map(|r| format!("{} {}", r.text, r.yaml.as_deref().unwrap_or_default())),
            )
            .collect::<Vec<_>>()
            .join("\n");
        for new in ["NodePool", "nodepool", "EC2NodeClass", "template:"] {
            assert!(!all.contains(new), "{new} in {all}");
        }
        let widen = d
            .remediation
            .iter()
            .find(|r| r.text.contains("`kubectl edit provisioner default`;"))
            .unwrap_or_else(|| panic!("{all}"));
        assert!(
            widen
                .text
                .contains("its AWSNodeTemplate needs a subnet in each zone"),
            "{}",
            widen.text
        );
        assert_eq!(
            widen.yaml.as_deref(),
            Some("spec:\n  requirements:\n    - key: topology.kubernetes.io/zone\n      operator: In\n      values: [\"us-east-1a\", \"us-east-1b\", \"us-east-1c\"]\n    - key: karpenter.sh/capacity-type\n      operator: In\n      values: [\"on-demand\", \"spot\"]\n")
        );
    }

    #[test]
    fn relaxation_and_preferred_advice_are_not_kw206() {
        for text in [
            r#"{"level":"INFO","message":"pod(s) have a preferred TopologySpreadConstraint which can prevent consolidation","pods":"search/es-0"}"#,
            "relaxing soft constraints for pod since it previously failed to schedule, removing: spec.topologySpreadConstraints = {\"maxSkew\":1}",
            "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints.",
        ] {
            assert!(ids(&check_only("KW206", text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn several_constraints_of_one_pod_share_one_remediation() {
        let line = |key: &str, counts: &str, nodes: &str| {
            format!(
                r#"{{"level":"ERROR","message":"could not schedule pod","Pod":{{"name":"api-5","namespace":"shop"}},"error":"unsatisfiable topology constraint for topology spread, key={key} (counts = {counts}, podDomains = {key} Exists, nodeDomains = {key} In [{nodes}]"}}"#
            )
        };
        let text = [
            line("topology.kubernetes.io/zone", "a: 2, b: 2, c: 1", "a b"),
            line(
                "karpenter.sh/capacity-type",
                "on-demand: 3, spot: 2",
                "on-demand",
            ),
            line("topology.kubernetes.io/zone", "a: 2, b: 3, c: 1", "a b"),
        ]
        .join("\n");
        let report = check_only("KW206", &text);
        assert_eq!(ids(&report), ["KW206"]);
        let d = &report.diagnoses[0];
        assert_eq!(
            d.summary.matches("cannot satisfy").count(),
            2,
            "{}",
            d.summary
        );
        let relax: Vec<&str> = d
            .remediation
            .iter()
            .map(|r| r.text.as_str())
            .filter(|t| t.contains("ScheduleAnyway"))
            .collect();
        assert_eq!(relax, ["Or, where balance is a preference rather than a rule, set `whenUnsatisfiable: ScheduleAnyway` on those constraints."]);
        assert!(d
            .remediation
            .last()
            .unwrap()
            .text
            .contains("ScheduleAnyway"));
        let merged = |marker: &str, keys: usize| {
            let yaml: Vec<&str> = d
                .remediation
                .iter()
                .filter(|r| r.text.contains(marker))
                .filter_map(|r| r.yaml.as_deref())
                .collect();
            assert_eq!(yaml.len(), 1, "one step {marker}");
            assert_eq!(yaml[0].matches("- key: ").count(), keys, "{}", yaml[0]);
        };
        merged("widen", 2);
        merged("Restrict", 2);
        let mut steps = d.remediation.clone();
        steps.dedup();
        assert_eq!(steps.len(), d.remediation.len());
    }
}
