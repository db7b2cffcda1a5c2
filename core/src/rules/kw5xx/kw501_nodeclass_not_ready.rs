//! KW501 nodeclass-not-ready.

use crate::document::Evidence;
use crate::facts::{Facts, Message, NodeClass};
use crate::rules::kw2xx::scheduling::{message_nodepool, record_of};
use crate::rules::kw3xx::common::join_names;
use crate::rules::kw4xx::disruption::{push_unique, unescaped};
use crate::rules::kw5xx::nodeclass::{
    describe_commands, go_map_tags, legacy_selector, legacy_selector_yaml, message_nodeclass,
    pairs_label, reports_condition, sole_nodeclass, term_label, terms_yaml, transition,
    undone_transition, Selected,
};
use crate::rules::names::near_match;
use crate::rules::text::cluster_name;
use crate::rules::text::{contains_any, quoted_after, token_after};
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW501",
    slug: "nodeclass-not-ready",
    title: "The EC2NodeClass (AWSNodeTemplate before v0.32) cannot resolve its subnets, security groups, AMIs or instance profile",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
An EC2NodeClass resolves its selector terms into real AWS resources: subnets, security groups,
AMIs, an instance profile (and, when used, a placement group and capacity reservations). One of
them resolved to nothing, so the EC2NodeClass is not ready, the NodePools that use it are not
ready either (KW208), and Karpenter launches no node from them.

Signals: conditions `SubnetsReady=False` (`SubnetsNotFound`: `SubnetSelector did not match any
Subnets`), `SecurityGroupsReady=False` (`SecurityGroupsNotFound`: `SecurityGroupSelector did not
match any SecurityGroups`), `AMIsReady=False` (`AMISelector did not match any AMIs`,
`UnsupportedAlias`, v1.0's `Ubuntu AMI discovery is not supported`), `InstanceProfileReady` not
True (`creating instance profile` / `getting instance profile` errors), `PlacementGroupReady=False`,
`CapacityReservationsReady=False`, the `Ready=False` roll-up (`UnhealthyDependents`) listing
them, v0.37's `Ready=False` with reason `NodeClassNotReady` and `Failed to resolve subnets`
(`security groups`, `AMIs`, `instance profile`; that release had no condition per dependent and
names only the first one missing), and the matching `Status condition transitioned` events; the pre-v1 logs `no subnets
found`, `no subnets matched selector map[...]`, `no subnets exist given constraints` (v0.32 to
v0.36 nodeclass controller), `no security groups exist given constraints`, `no
amis exist given constraints` and an empty `discovered subnets` (`no subnets found` still shows
in v1 logs, e.g. with `failed listing instance types`).

Before v0.32 the object was a v1alpha1 AWSNodeTemplate (used by v1alpha5 Provisioners through
`spec.providerRef`), with no conditions and one selector map per resource (`subnetSelector`,
`securityGroupSelector`, `amiSelector`: tags, `aws-ids`, `aws::name`, `aws::owners`). Evidence
from such a cluster (the objects, `karpenter.sh/v1alpha5` / `karpenter.k8s.aws/v1alpha1`, a
log's `provisioner` or `AWSNodeTemplate` field, a selector logged as a bare Go map `map[k:v]`)
gets the diagnosis and fix in those names. From v0.32 to v0.36 the v1beta1 EC2NodeClass and
NodePool carry no status conditions either (v0.37 added them): the diagnosis names no condition,
says the NodePools keep launching and failing, and the fix watches `status.subnets`,
`status.securityGroups`, `status.amis` and `status.instanceProfile` instead.

## Why it happens
The selector terms do not match what exists: a typo in a tag value, tags never put on the
subnets or security groups (`karpenter.sh/discovery: <cluster>`), resources in another VPC or
account, an AMI name or owner that matches nothing, an alias the family no longer publishes for
the cluster's Kubernetes version, or an instance profile Karpenter may not create.

## How to fix
Run the `aws ec2 describe-*` command for each selector term (filled in below): no output means
nothing carries those tags. Tag the resources (`aws ec2 create-tags`) or correct the terms in
the EC2NodeClass (the selector maps of the AWSNodeTemplate before v0.32); Karpenter re-resolves
them within minutes.
"#,
};

const SIGNALS: &[&str] = &[
    "subnetsready=false",
    "subnetsnotfound",
    "subnetselector did not match",
    "no subnets found",
    "no subnets matched selector",
    "no subnets exist given constraints",
    "discovered subnets",
    "securitygroupsready=false",
    "securitygroupsnotfound",
    "securitygroupselector did not match",
    "no security groups exist given constraints",
    "amisready=false",
    "amiselector did not match",
    "unsupportedalias",
    "ami discovery is not supported",
    "no amis exist given constraints",
    "instanceprofileready=false",
    "creating instance profile",
    "getting instance profile",
    "placementgroupready=false",
    "placementgroupresolutionfailed",
    "placementgroupnotfound",
    "failed to resolve placement group",
    "capacityreservationsready=false",
    "status condition transitioned",
    "nodeclassnotready",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dependent {
    Subnets,
    SecurityGroups,
    Amis,
    InstanceProfile,
    PlacementGroup,
    CapacityReservations,
}

const DEPENDENTS: [Dependent; 6] = [
    Dependent::Subnets,
    Dependent::SecurityGroups,
    Dependent::Amis,
    Dependent::InstanceProfile,
    Dependent::PlacementGroup,
    Dependent::CapacityReservations,
];

impl Dependent {
    fn condition(self) -> &'static str {
        match self {
            Dependent::Subnets => "SubnetsReady",
            Dependent::SecurityGroups => "SecurityGroupsReady",
            Dependent::Amis => "AMIsReady",
            Dependent::InstanceProfile => "InstanceProfileReady",
            Dependent::PlacementGroup => "PlacementGroupReady",
            Dependent::CapacityReservations => "CapacityReservationsReady",
        }
    }

    /// Texts that report this dependent failing besides its `<Condition>=False`.
    fn needles(self) -> &'static [&'static str] {
        match self {
            Dependent::Subnets => &[
                "SubnetsNotFound",
                "SubnetSelector did not match any Subnets",
                "no subnets found",
                "no subnets matched selector",
                "no subnets exist given constraints",
                "discovered subnets []",
                "discovered subnets: []",
            ],
            Dependent::SecurityGroups => &[
                "SecurityGroupsNotFound",
                "SecurityGroupSelector did not match any SecurityGroups",
                "no security groups exist given constraints",
            ],
            Dependent::Amis => &[
                "AMISelector did not match any AMIs",
                "UnsupportedAlias",
                "AMI discovery is not supported",
                "no amis exist given constraints",
            ],
            Dependent::InstanceProfile => {
                &["creating instance profile", "getting instance profile"]
            }
            Dependent::PlacementGroup => &[
                "PlacementGroupResolutionFailed",
                "PlacementGroupNotFound",
                "Failed to resolve placement group",
            ],
            Dependent::CapacityReservations => &[],
        }
    }

    /// v0.37's `Ready=False` roll-up (reason `NodeClassNotReady`) names the first dependent
    /// that resolved to nothing: `Failed to resolve <noun>` (v1.0 split it into one condition
    /// per dependent).
    fn v0_37_message(self) -> Option<&'static str> {
        match self {
            Dependent::Subnets => Some("Failed to resolve subnets"),
            Dependent::SecurityGroups => Some("Failed to resolve security groups"),
            Dependent::Amis => Some("Failed to resolve AMIs"),
            Dependent::InstanceProfile => Some("Failed to resolve instance profile"),
            _ => None,
        }
    }

    fn meaning(self) -> &'static str {
        match self {
            Dependent::Subnets => "no subnet matches its subnetSelectorTerms",
            Dependent::SecurityGroups => "no security group matches its securityGroupSelectorTerms",
            Dependent::Amis => "no AMI matches its amiSelectorTerms",
            Dependent::InstanceProfile => "its instance profile could not be created or found",
            Dependent::PlacementGroup => "its placement group could not be resolved",
            Dependent::CapacityReservations => "its capacity reservations could not be resolved",
        }
    }

    /// What an AWSNodeTemplate (before v0.32, no conditions) failed to resolve, and why.
    fn legacy_meaning(self) -> &'static str {
        match self {
            Dependent::Subnets => "no subnet matches its subnetSelector",
            Dependent::SecurityGroups => "no security group matches its securityGroupSelector",
            Dependent::Amis => "no AMI matches its amiSelector",
            Dependent::InstanceProfile => "its instance profile could not be found",
            _ => self.meaning(),
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Dependent::Subnets => "subnets",
            Dependent::SecurityGroups => "security groups",
            Dependent::Amis => "AMIs",
            Dependent::InstanceProfile => "instance profile",
            Dependent::PlacementGroup => "placement group",
            Dependent::CapacityReservations => "capacity reservations",
        }
    }

    fn selected(self) -> Option<Selected> {
        match self {
            Dependent::Subnets => Some(Selected::Subnets),
            Dependent::SecurityGroups => Some(Selected::SecurityGroups),
            Dependent::Amis => Some(Selected::Amis),
            _ => None,
        }
    }
}

/// v0.37's EC2NodeClass `Ready` condition with reason `NodeClassNotReady` (a condition, its
/// describe, or the event of its transition).
fn is_v0_37_rollup(m: &Message) -> bool {
    m.reason.as_deref() == Some("NodeClassNotReady") || m.text.contains("NodeClassNotReady")
}

/// The dependents a message reports failing.
fn reported(facts: &Facts, m: &Message) -> Vec<Dependent> {
    let t = unescaped(&m.text);
    let mut out = Vec::new();
    // The AWS Load Balancer Controller's `failed to resolve subnets` is about an Ingress: the
    // v0.37 text counts only with Karpenter's reason.
    let v0_37 = is_v0_37_rollup(m);
    for d in DEPENDENTS {
        if reports_condition(&t, d.condition(), "False")
            || contains_any(&t, d.needles())
            || (v0_37 && d.v0_37_message().is_some_and(|n| contains_any(&t, &[n])))
        {
            out.push(d);
        }
    }
    // A transition of the dependent's own condition with the reason carries it too.
    if let Some(tr) = transition(&t) {
        if let Some(d) = DEPENDENTS
            .iter()
            .find(|d| d.condition().eq_ignore_ascii_case(&tr.condition_type))
        {
            if tr.to.eq_ignore_ascii_case("False") && !out.contains(d) {
                out.push(*d);
            }
        }
    }
    // `discovered subnets` logged with an empty list (pre-v1 JSON logs).
    if let Some(r) = record_of(facts, m) {
        if r.message.eq_ignore_ascii_case("discovered subnets")
            && r.fields
                .get("subnets")
                .and_then(|v| v.as_array())
                .is_some_and(|a| a.is_empty())
            && !out.contains(&Dependent::Subnets)
        {
            out.push(Dependent::Subnets);
        }
    }
    out
}

struct Group<'a> {
    nodeclass: Option<String>,
    dependents: Vec<Dependent>,
    messages: Vec<&'a Message>,
    evidence: Vec<Evidence>,
    details: Vec<String>,
    nodepools: Vec<String>,
    inferred: bool,
    /// Read off a v1beta1 status that has no conditions to quote (v0.32 to v0.36).
    status_only: bool,
}

fn group_for<'g, 'a>(
    groups: &'g mut Vec<Group<'a>>,
    nodeclass: Option<String>,
) -> &'g mut Group<'a> {
    match groups.iter().position(|g| g.nodeclass == nodeclass) {
        Some(i) => &mut groups[i],
        None => {
            groups.push(Group {
                nodeclass,
                dependents: Vec::new(),
                messages: Vec::new(),
                evidence: Vec::new(),
                details: Vec::new(),
                nodepools: Vec::new(),
                inferred: false,
                status_only: false,
            });
            groups.last_mut().expect("just pushed")
        }
    }
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let mut groups: Vec<Group<'_>> = Vec::new();
    let default_nc = sole_nodeclass(facts);
    for m in &facts.messages {
        let deps = reported(facts, m);
        if deps.is_empty() || undone_transition(facts, m) {
            continue;
        }
        let nc = message_nodeclass(facts, m).or_else(|| default_nc.clone());
        let nodepool = message_nodepool(facts, m);
        let g = group_for(&mut groups, nc);
        for d in deps {
            push_unique(&mut g.dependents, d);
        }
        if let Some(tr) = transition(&unescaped(&m.text)) {
            if DEPENDENTS
                .iter()
                .any(|d| d.condition().eq_ignore_ascii_case(&tr.condition_type))
            {
                let detail = match (&tr.reason, &tr.message) {
                    (Some(r), Some(msg)) => format!("{}={} ({r}: {msg})", tr.condition_type, tr.to),
                    (Some(r), None) => format!("{}={} ({r})", tr.condition_type, tr.to),
                    _ => format!("{}={}", tr.condition_type, tr.to),
                };
                push_unique(&mut g.details, detail);
            }
        }
        // v0.37 sets no condition per dependent: quote the Ready roll-up instead.
        for d in DEPENDENTS {
            if let Some(text) = d
                .v0_37_message()
                .filter(|n| is_v0_37_rollup(m) && contains_any(&m.text, &[n]))
            {
                push_unique(
                    &mut g.details,
                    format!("Ready=False (NodeClassNotReady: {text})"),
                );
            }
        }
        if let Some(np) = nodepool {
            push_unique(&mut g.nodepools, np);
        }
        g.messages.push(m);
    }
    for nc in &facts.nodeclasses {
        let ready = nc
            .conditions
            .iter()
            .find(|c| c.condition_type == "Ready")
            .map(|c| c.status.as_str());
        let others_resolved = nc.conditions.iter().any(|c| {
            matches!(
                c.condition_type.as_str(),
                "SubnetsReady" | "SecurityGroupsReady" | "AMIsReady"
            ) && c.status == "True"
        });
        for c in &nc.conditions {
            let Some(d) = DEPENDENTS
                .iter()
                .find(|d| d.condition() == c.condition_type)
            else {
                continue;
            };
            // Karpenter never sets InstanceProfileReady False: a failure leaves it Unknown
            // while the other dependents resolve.
            let failing = c.status == "False"
                || (*d == Dependent::InstanceProfile
                    && c.status == "Unknown"
                    && ready != Some("True")
                    && others_resolved);
            if !failing {
                continue;
            }
            let g = group_for(&mut groups, Some(nc.meta.name.clone()));
            push_unique(&mut g.dependents, *d);
            g.evidence
                .extend(c.evidence.clone().or_else(|| nc.meta.evidence.clone()));
            let detail = match (&c.reason, &c.message) {
                (Some(r), Some(msg)) if !msg.is_empty() => {
                    format!("{}={} ({r}: {msg})", c.condition_type, c.status)
                }
                (Some(r), _) => format!("{}={} ({r})", c.condition_type, c.status),
                _ => format!("{}={}", c.condition_type, c.status),
            };
            push_unique(&mut g.details, detail);
            if c.status == "Unknown" {
                g.inferred = true;
            }
        }
        // A v1beta1 EC2NodeClass (v0.32 to v0.36) has no conditions. Its controller resolves
        // subnets, security groups, AMIs and the instance profile in one pass and clears
        // status.subnets when none match (`no subnets exist given constraints`): resolved
        // AMIs or profile beside no subnet mean the subnet selector matched nothing.
        let reconciled = !nc.status_amis.is_empty() || nc.status_instance_profile.is_some();
        if nc.conditions.is_empty()
            && !nc.is_aws_node_template
            && reconciled
            && nc.status_subnets.is_empty()
            && !nc.subnet_selector_terms.is_empty()
        {
            let g = group_for(&mut groups, Some(nc.meta.name.clone()));
            push_unique(&mut g.dependents, Dependent::Subnets);
            g.evidence.extend(nc.meta.evidence.clone());
            push_unique(
                &mut g.details,
                "status.subnets is empty while its AMIs or instance profile resolved (v1beta1 carries no conditions: inferred)".to_string(),
            );
            g.status_only = true;
        }
    }
    groups.iter().map(|g| diagnose(facts, g)).collect()
}

/// Whether the group's evidence is from a cluster before v0.32: an AWSNodeTemplate object, a
/// Provisioner using it, the v1alpha5/v1alpha1 kinds or API groups in the texts, a log field
/// naming a Provisioner or Machine, or a selector printed as the v1alpha1 map
/// (`no subnets matched selector map[k:v]`; v1beta1 and later print a list of terms, `[{map[...`),
/// or anything else that dates the input before v0.32 (`rules::version::before_v0_32`).
fn is_legacy(facts: &Facts, g: &Group<'_>, nodeclass: Option<&NodeClass>) -> bool {
    if let Some(nc) = nodeclass {
        return nc.is_aws_node_template;
    }
    let provisioner_uses = facts.nodepools.iter().any(|p| {
        p.is_provisioner
            && (g.nodepools.contains(&p.meta.name)
                || (g.nodeclass.is_some() && p.nodeclass_ref == g.nodeclass))
    });
    // The rest of the input dates it too: a console line of the v0.2x-v0.31 `awsnodetemplate`
    // controller names no object (`discovered subnets []`), yet only an AWSNodeTemplate is there.
    provisioner_uses
        || crate::rules::version::before_v0_32(facts)
        || g.messages.iter().any(|m| {
            let t = unescaped(&m.text);
            contains_any(
                &t,
                &[
                    "AWSNodeTemplate",
                    "karpenter.k8s.aws/v1alpha1",
                    "karpenter.sh/v1alpha5",
                    "matched selector map[",
                    "given constraints map[",
                ],
            ) || m
                .object
                .as_ref()
                .is_some_and(|o| matches!(o.kind.as_str(), "Provisioner" | "Machine"))
        })
        || g.messages
            .iter()
            .filter_map(|m| record_of(facts, m))
            .any(|r| {
                [
                    "AWSNodeTemplate",
                    "Provisioner",
                    "provisioner",
                    "Machine",
                    "machine",
                ]
                .iter()
                .any(|k| r.field_name(k).is_some())
            })
}

/// Whether the group is from v0.32 to v0.36: a v1beta1 EC2NodeClass that has no status
/// conditions yet (v0.37 added them, and NodePool readiness with them). A known version
/// decides; else a v1beta1 object without conditions, a status read without them, or the
/// reconciler's `... exist given constraints [{map[...` text of those releases.
fn before_conditions(facts: &Facts, g: &Group<'_>, nodeclass: Option<&NodeClass>) -> bool {
    if let Some(v) = crate::rules::version::at_least(facts, 0, 37) {
        return !v && crate::rules::version::at_least(facts, 0, 32) == Some(true);
    }
    let v1beta1 = nodeclass.is_some_and(|nc| {
        nc.conditions.is_empty()
            && nc
                .meta
                .api_version
                .as_deref()
                .is_some_and(|a| a.ends_with("/v1beta1"))
    });
    v1beta1
        || g.status_only
        || g.messages
            .iter()
            .any(|m| contains_any(&unescaped(&m.text), &["given constraints [{"]))
}

fn diagnose(facts: &Facts, g: &Group<'_>) -> Diagnosis {
    let nodeclass: Option<&NodeClass> = g.nodeclass.as_deref().and_then(|n| facts.nodeclass(n));
    // Before v0.32 the object was an AWSNodeTemplate used by Provisioners: no conditions, and
    // one selector map per resource rather than selector terms.
    let legacy = is_legacy(facts, g, nodeclass);
    let unconditioned = !legacy && before_conditions(facts, g, nodeclass);
    let (kind, placeholder) = if legacy {
        ("AWSNodeTemplate", "<awsnodetemplate>")
    } else {
        ("EC2NodeClass", "<ec2nodeclass>")
    };
    let name = g.nodeclass.as_deref().unwrap_or(placeholder);
    let label = g
        .nodeclass
        .as_deref()
        .map(|n| format!("{kind} {n}"))
        .unwrap_or_else(|| format!("The {kind}"));
    let mut failing: Vec<String> = g.details.clone();
    for d in &g.dependents {
        let from_status = g.status_only && *d == Dependent::Subnets;
        // v0.32-v0.36 set no condition to name.
        let quoted = g.details.iter().any(|x| {
            x.starts_with(d.condition()) || d.v0_37_message().is_some_and(|n| x.contains(n))
        });
        if !from_status && !unconditioned && !quoted {
            failing.push(match d {
                Dependent::InstanceProfile => "InstanceProfileReady not True".to_string(),
                _ => format!("{}=False", d.condition()),
            });
        }
    }
    let unsupported_alias = g.messages.iter().any(|m| {
        contains_any(
            &m.text,
            &["UnsupportedAlias", "AMI discovery is not supported"],
        )
    }) || g.details.iter().any(|x| x.contains("UnsupportedAlias"));
    let meanings: Vec<&str> = g
        .dependents
        .iter()
        .map(|d| {
            if legacy {
                d.legacy_meaning()
            } else if *d == Dependent::Amis && unsupported_alias {
                "its AMI alias is not supported (for this family or Kubernetes version)"
            } else {
                d.meaning()
            }
        })
        .collect();
    let nouns: Vec<String> = g.dependents.iter().map(|d| d.noun().to_string()).collect();
    let mut summary = if legacy || (unconditioned && failing.is_empty()) {
        format!(
            "{label} cannot resolve its {}: {}.",
            join_names(&nouns),
            meanings.join("; ")
        )
    } else if unconditioned {
        format!(
            "{label} cannot resolve its {}: {}; {}.",
            join_names(&nouns),
            failing.join(", "),
            meanings.join("; ")
        )
    } else {
        format!(
            "{label} is not ready: {}; {}.",
            failing.join(", "),
            meanings.join("; ")
        )
    };
    if g.details.iter().any(|x| x.contains("NodeClassNotReady")) {
        summary.push_str(" Karpenter v0.37 names only the first dependent that resolved to nothing (AMIs, then subnets, security groups, instance profile): once it is fixed, the Ready condition may name the next.");
    }
    let mut fallback_tags: Vec<(String, String)> = Vec::new();
    for m in &g.messages {
        let t = unescaped(&m.text);
        // Pre-v1 texts print the selector as a Go map: `no subnets matched selector map[k:v]`,
        // v0.32-v0.36 `no subnets exist given constraints [{map[k:v]  }]`.
        if contains_any(&t, &["matched selector", "given constraints"]) {
            let tags = go_map_tags(&t);
            if !tags.is_empty() {
                fallback_tags = tags;
            }
        }
    }
    let discovery = cluster_name(facts)
        .map(|c| vec![("karpenter.sh/discovery".to_string(), c)])
        .unwrap_or_default();
    for d in &g.dependents {
        let Some(sel) = d.selected() else { continue };
        match nodeclass.map(|nc| sel.terms(nc)) {
            Some(terms) if !terms.is_empty() && legacy => {
                summary.push_str(&format!(
                    " Its {}: {}.",
                    sel.legacy_field(),
                    pairs_label(&legacy_selector(terms))
                ));
            }
            Some(terms) if !terms.is_empty() => {
                let labels: Vec<String> = terms.iter().map(term_label).collect();
                summary.push_str(&format!(" Its {}: {}.", sel.field(), labels.join("; ")));
                if let Some(t) = nodeclass.and_then(|nc| sibling_typo(nc, sel, &g.dependents)) {
                    summary.push_str(&format!(
                        " Its {} select by {}: {}, and they resolve: {} is probably a typo for {}.",
                        t.sibling.field(),
                        t.key,
                        t.good,
                        t.bad,
                        t.good
                    ));
                }
            }
            _ if !fallback_tags.is_empty() && sel == Selected::Subnets && legacy => {
                summary.push_str(&format!(
                    " Its subnetSelector (as the log prints it): {}.",
                    pairs_label(&fallback_tags)
                ));
            }
            _ if !fallback_tags.is_empty() && sel == Selected::Subnets => {
                let pairs: Vec<String> = fallback_tags
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                summary.push_str(&format!(" The selector was tags {}.", pairs.join(",")));
            }
            _ => {}
        }
    }
    let mut uses: Vec<&str> = facts
        .nodepools
        .iter()
        .filter(|p| g.nodeclass.is_some() && p.nodeclass_ref == g.nodeclass)
        .map(|p| p.meta.name.as_str())
        .collect();
    for np in &g.nodepools {
        push_unique(&mut uses, np.as_str());
    }
    if legacy {
        match uses.as_slice() {
            [] => summary.push_str(
                " Provisioners whose spec.providerRef names it launch nothing until it resolves (Karpenter before v0.32).",
            ),
            [one] => summary.push_str(&format!(
                " Provisioner {one} uses it (spec.providerRef) and launches no node until it resolves (Karpenter before v0.32)."
            )),
            all => summary.push_str(&format!(
                " Provisioners {} use it (spec.providerRef) and launch no node until it resolves (Karpenter before v0.32).",
                all.join(", ")
            )),
        }
    } else if unconditioned {
        let users = match uses.as_slice() {
            [] => "NodePools that use it keep".to_string(),
            [one] => format!("NodePool {one} uses it and keeps"),
            all => format!("NodePools {} use it and keep", all.join(", ")),
        };
        summary.push_str(&format!(
            " Before v0.37 neither it nor a NodePool has status conditions: {users} trying to launch, and each launch fails for want of its {}.",
            join_names(&nouns)
        ));
    } else if uses.is_empty() {
        summary.push_str(" NodePools that use it are not ready either, so Karpenter launches no node from them (KW208).");
    } else {
        summary.push_str(&format!(
            " NodePool {} uses it and is not ready either, so Karpenter launches no node from it (KW208).",
            uses.join(", ")
        ));
    }
    if g.inferred {
        summary.push_str(
            " (InstanceProfileReady stays Unknown while the other dependents resolved: inferred.)",
        );
    }
    let node_role = node_role_in(&g.messages);
    if let Some(NodeRole {
        name: role,
        missing: true,
    }) = &node_role
    {
        summary.push_str(&format!(
            " IAM has no role {role} (NoSuchEntity): spec.role names a role that does not exist in this account."
        ));
    }
    let mut steps = Vec::new();
    if legacy && g.nodeclass.is_none() {
        let provisioner = uses.first().copied().unwrap_or("<provisioner>");
        steps.push(Remediation::command(
            format!("Find the AWSNodeTemplate Provisioner {provisioner} uses (spec.providerRef; an older Provisioner may inline the selectors in spec.provider instead):"),
            format!("kubectl get provisioner {provisioner} -o jsonpath='{{.spec.providerRef.name}}{{\"\\n\"}}{{.spec.provider}}{{\"\\n\"}}'"),
        ));
    }
    for d in &g.dependents {
        let tags = if fallback_tags.is_empty() {
            &discovery
        } else {
            &fallback_tags
        };
        let lx = Legacy {
            on: legacy,
            from_log: !fallback_tags.is_empty(),
        };
        if let (Some(sel), Some(nc), false) = (d.selected(), nodeclass, legacy) {
            if let Some(t) = sibling_typo(nc, sel, &g.dependents) {
                steps.push(Remediation::yaml(
                    format!(
                        "Correct the {} value in {} from {} to {} (`kubectl edit {} {name}`):",
                        t.key,
                        sel.field(),
                        t.bad,
                        t.good,
                        kind.to_ascii_lowercase()
                    ),
                    t.corrected,
                ));
            }
        }
        steps.extend(fix(
            *d,
            nodeclass,
            name,
            tags,
            unsupported_alias,
            lx,
            node_role.as_ref(),
        ));
    }
    if legacy {
        steps.push(Remediation::command(
            "After the fix, Karpenter re-resolves within minutes: the errors stop in its logs, and releases that record them list the subnets, security groups and AMIs in the status:",
            format!(
                "kubectl get awsnodetemplate {name} -o jsonpath='{{.status.subnets}}{{\"\\n\"}}{{.status.securityGroups}}{{\"\\n\"}}{{.status.amis}}{{\"\\n\"}}'"
            ),
        ));
    } else if unconditioned {
        steps.push(Remediation::command(
            "After the fix, Karpenter re-resolves within minutes; v0.32 to v0.36 have no conditions to watch, so watch the resolved resources appear in its status:",
            format!("kubectl get ec2nodeclass {name} -o jsonpath='{{.status.subnets}}{{\"\\n\"}}{{.status.securityGroups}}{{\"\\n\"}}{{.status.amis}}{{\"\\n\"}}{{.status.instanceProfile}}{{\"\\n\"}}'"),
        ));
    } else {
        steps.push(Remediation::command(
            "After the fix, Karpenter re-resolves within minutes; watch the conditions:",
            format!(
                "kubectl get ec2nodeclass {name} -o jsonpath='{{range .status.conditions[*]}}{{.type}}={{.status}} {{.reason}}: {{.message}}{{\"\\n\"}}{{end}}'"
            ),
        ));
    }
    let mut d = Diagnosis::new(&META, summary)
        .with_messages(g.messages.iter().copied())
        .with_evidence(g.evidence.clone())
        // A Provisioner had no readiness of its own: KW208's NodePool chain starts at v0.32.
        .with_related(if legacy || unconditioned {
            &[]
        } else {
            &["KW208"]
        })
        .with_remediation(steps);
    if let Some(n) = &g.nodeclass {
        d = d.with_object(Some(&crate::facts::ObjectRef::new(kind, None, n)));
    }
    let only_inferred = g.inferred && g.dependents == [Dependent::InstanceProfile]
        || g.status_only && g.dependents == [Dependent::Subnets] && g.messages.is_empty();
    if only_inferred {
        d = d.with_confidence(Confidence::Medium);
    }
    d
}

/// A tag value in the failing subnet (security-group) selector that is a near miss of the value
/// the same tag key has in the security-group (subnet) selector, which resolves: the usual
/// `karpenter.sh/discovery: my-clusterr` beside `my-cluster`.
struct SiblingTypo {
    sibling: Selected,
    key: String,
    bad: String,
    good: String,
    /// The failing selector's terms with the value corrected, as YAML.
    corrected: String,
}

fn sibling_typo(nc: &NodeClass, sel: Selected, failing: &[Dependent]) -> Option<SiblingTypo> {
    let (sibling, sibling_dep) = match sel {
        Selected::Subnets => (Selected::SecurityGroups, Dependent::SecurityGroups),
        Selected::SecurityGroups => (Selected::Subnets, Dependent::Subnets),
        Selected::Amis => return None,
    };
    if failing.contains(&sibling_dep) {
        return None;
    }
    let tags_of = |term: &serde_json::Value| -> Vec<(String, String)> {
        term.get("tags")
            .and_then(|t| t.as_object())
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    };
    let good_tags: Vec<(String, String)> = sibling.terms(nc).iter().flat_map(tags_of).collect();
    for (i, term) in sel.terms(nc).iter().enumerate() {
        // A `Name` differs between a subnet and a security group by nature: no typo to infer.
        for (key, bad) in tags_of(term)
            .into_iter()
            .filter(|(k, _)| !k.eq_ignore_ascii_case("name"))
        {
            let good = good_tags.iter().find(|(k, v)| {
                *k == key
                    && *v != bad
                    && !v.contains('*')
                    && !bad.contains('*')
                    && near_match(&bad, v)
            });
            if let Some((_, good)) = good {
                let mut fixed = nc.clone();
                let terms = match sel {
                    Selected::Subnets => &mut fixed.subnet_selector_terms,
                    _ => &mut fixed.security_group_selector_terms,
                };
                if let Some(v) = terms[i].get_mut("tags").and_then(|t| t.get_mut(&key)) {
                    *v = serde_json::Value::String(good.clone());
                }
                return Some(SiblingTypo {
                    sibling,
                    key,
                    bad,
                    good: good.clone(),
                    corrected: terms_yaml(sel, &fixed)?,
                });
            }
        }
    }
    None
}

/// How to word a fix for a pre-v0.32 AWSNodeTemplate.
#[derive(Debug, Clone, Copy)]
struct Legacy {
    on: bool,
    /// The selector is known only from a log's Go map.
    from_log: bool,
}

fn fix(
    d: Dependent,
    nodeclass: Option<&NodeClass>,
    name: &str,
    fallback_tags: &[(String, String)],
    unsupported_alias: bool,
    legacy: Legacy,
    logged_role: Option<&NodeRole>,
) -> Vec<Remediation> {
    let mut steps = Vec::new();
    let resource = if legacy.on {
        "awsnodetemplate"
    } else {
        "ec2nodeclass"
    };
    if let Some(sel) = d.selected() {
        let what = match sel {
            Selected::Subnets => "subnets",
            Selected::SecurityGroups => "security groups",
            Selected::Amis => "AMIs",
        };
        // A pre-v1 log prints the subnet selector only; the discovery tag serves both.
        let tags = if sel != Selected::Amis {
            fallback_tags
        } else {
            &[]
        };
        let terms_known = nodeclass.is_some_and(|nc| !sel.terms(nc).is_empty());
        if sel == Selected::Amis && !terms_known {
            // AMI terms have no common default to guess: read them first.
            if legacy.on {
                steps.push(Remediation::command(
                    "Read the AMI selector (aws::name, aws::owners, aws-ids or tags; without one, Karpenter takes the amiFamily's EKS-optimized AMIs):",
                    format!("kubectl get awsnodetemplate {name} -o jsonpath='{{.spec.amiFamily}} {{.spec.amiSelector}}{{\"\\n\"}}'"),
                ));
            } else {
                steps.push(Remediation::command(
                    "Read the AMI selector terms (alias, name/owner, id, tags, ssmParameter):",
                    format!("kubectl get ec2nodeclass {name} -o jsonpath='{{.spec.amiSelectorTerms}}{{\"\\n\"}}'"),
                ));
            }
            steps.push(Remediation::command(
                if legacy.on {
                    "Then see what its aws::name matches (owners: its aws::owners, else your account and Amazon):"
                } else {
                    "Then see what a name term matches (owners: the term's owner, else your account and Amazon):"
                },
                "aws ec2 describe-images --owners self amazon --filters \"Name=name,Values=<ami-name>\" --query 'Images[].[ImageId,Name,CreationDate,Architecture]' --output table",
            ));
        } else {
            for cmd in describe_commands(sel, nodeclass, tags) {
                // An alias or ssmParameter term is one SSM parameter: a version that does not
                // exist fails the read rather than printing nothing.
                let label = if cmd.starts_with("aws ssm get-parameter") {
                    "See which AMI the term resolves to (`ParameterNotFound`: no such AMI for that Kubernetes version):".to_string()
                } else {
                    format!(
                        "See which {what} the selector {} (no output: nothing matches):",
                        if legacy.on { "matches" } else { "term matches" }
                    )
                };
                steps.push(Remediation::command(label, cmd));
            }
        }
        let current = if legacy.on {
            match nodeclass {
                Some(nc) if terms_known => {
                    legacy_selector_yaml(sel, &legacy_selector(sel.terms(nc)))
                }
                _ if legacy.from_log && sel == Selected::Subnets => {
                    legacy_selector_yaml(sel, fallback_tags)
                }
                _ => None,
            }
        } else {
            nodeclass.and_then(|nc| terms_yaml(sel, nc))
        };
        if let Some(yaml) = current {
            let how = if legacy.on {
                format!(
                    "Correct the {} map if it is wrong (`kubectl edit awsnodetemplate {name}`); it is now:",
                    sel.legacy_field()
                )
            } else {
                format!(
                    "Correct the terms if they are wrong (`kubectl edit {resource} {name}`); they are now:"
                )
            };
            steps.push(Remediation::yaml(how, yaml));
        }
        // Terms that select by id only: tags play no part, so tagging resources cannot help;
        // the ids themselves are wrong (deleted, another region or account).
        let ids_only = nodeclass.is_some_and(|nc| {
            let terms = sel.terms(nc);
            !terms.is_empty()
                && terms.iter().all(|t| {
                    t.as_object()
                        .is_some_and(|o| o.len() == 1 && o.contains_key("id"))
                })
        });
        if sel != Selected::Amis && ids_only {
            steps.push(Remediation::text(format!(
                "The terms select {what} by id, so tags do not matter: each id must exist in the cluster's account and region (describe fails with `Invalid...ID.NotFound` for one that does not). Replace the ids that are gone, or select by tag instead."
            )));
        } else if sel != Selected::Amis {
            let (k, v) = first_tag(sel, nodeclass, tags).unwrap_or((
                "karpenter.sh/discovery".to_string(),
                "<cluster-name>".to_string(),
            ));
            let id = if sel == Selected::Subnets {
                "<subnet-id>"
            } else {
                "<security-group-id>"
            };
            steps.push(Remediation::command(
                format!("Or tag the {what} Karpenter should use:"),
                format!("aws ec2 create-tags --resources {id} --tags Key={k},Value={v}"),
            ));
        } else if unsupported_alias && !legacy.on {
            steps.push(Remediation::text(
                "An alias the family does not publish for the cluster's Kubernetes version (AL2 stops at Kubernetes 1.32; Karpenter v1.0 dropped Ubuntu discovery) needs another family (al2023@latest, bottlerocket@latest) or an AMI selected by id or name.",
            ));
        }
        return steps;
    }
    match d {
        Dependent::InstanceProfile if legacy.on => {
            let profile = nodeclass.and_then(|nc| nc.instance_profile.clone());
            steps.push(Remediation::command(
                "Check that the instance profile exists: the AWSNodeTemplate's spec.instanceProfile, else the aws.defaultInstanceProfile setting (karpenter-global-settings ConfigMap, helm settings.aws.defaultInstanceProfile):",
                format!(
                    "aws iam get-instance-profile --instance-profile-name {}",
                    profile.as_deref().unwrap_or("<instance-profile>")
                ),
            ));
        }
        Dependent::InstanceProfile => {
            let role = nodeclass
                .and_then(|nc| nc.role.clone())
                .or_else(|| logged_role.map(|r| r.name.clone()));
            let profile = nodeclass.and_then(|nc| nc.instance_profile.clone());
            if let (Some(r), Some(NodeRole { missing: true, .. })) = (&role, logged_role) {
                steps.push(Remediation::command(
                    format!("Role {r} does not exist: create the node role (trusting ec2.amazonaws.com, with AmazonEKSWorkerNodePolicy, AmazonEKS_CNI_Policy, AmazonEC2ContainerRegistryReadOnly and AmazonSSMManagedInstanceCore) and let its nodes join (an EKS access entry of type EC2_LINUX, or the aws-auth mapping), or set spec.role to the node role that exists. List the candidates:"),
                    "aws iam list-roles --query 'Roles[?contains(RoleName, `Node`)].[RoleName,Arn]' --output table",
                ));
            }
            let cmd = match (&profile, &role) {
                (Some(p), _) => format!("aws iam get-instance-profile --instance-profile-name {p}"),
                (None, Some(r)) => format!("aws iam get-role --role-name {r}"),
                (None, None) => "aws iam get-role --role-name <spec.role>".to_string(),
            };
            steps.push(Remediation::command(
                "Check that the role (spec.role) or instance profile (spec.instanceProfile) exists:",
                cmd,
            ));
            let role_missing = logged_role.is_some_and(|r| r.missing);
            steps.extend((!role_missing).then(|| Remediation::text(
                "With spec.role, Karpenter creates the instance profile itself: its controller role needs iam:CreateInstanceProfile, iam:TagInstanceProfile, iam:AddRoleToInstanceProfile, iam:GetInstanceProfile and iam:PassRole on the node role. The Reconciler error of the nodeclass controller names the refused call (KW105).",
            )));
        }
        Dependent::PlacementGroup => steps.push(Remediation::command(
            "Check that the placement group named in spec.placementGroup exists in the region:",
            "aws ec2 describe-placement-groups --query 'PlacementGroups[].[GroupName,GroupId,Strategy,State]' --output table",
        )),
        Dependent::CapacityReservations => steps.push(Remediation::command(
            "Check the capacity reservations spec.capacityReservationSelectorTerms should match (active, in the cluster's zones):",
            "aws ec2 describe-capacity-reservations --query 'CapacityReservations[].[CapacityReservationId,InstanceType,AvailabilityZone,State,AvailableInstanceCount]' --output table",
        )),
        _ => {}
    }
    steps
}

/// The node role a nodeclass reconciler error names: `adding role "<role>" to instance profile
/// "<profile>", ...`, and whether IAM answered that it does not exist (`NoSuchEntity: The role
/// with name <role> cannot be found.`).
struct NodeRole {
    name: String,
    missing: bool,
}

fn node_role_in(messages: &[&Message]) -> Option<NodeRole> {
    messages.iter().find_map(|m| {
        let t = unescaped(&m.text);
        let missing = token_after(&t, "The role with name ");
        let name = quoted_after(&t, "adding role ").or_else(|| missing.clone())?;
        Some(NodeRole {
            missing: missing.is_some_and(|n| n == name),
            name,
        })
    })
}

/// The first tag key and value of a selector's terms (or of a pre-v1 log's map) that can be
/// put on a resource: a wildcard value (`*private*`, `*`) is a filter, not a tag to create.
fn first_tag(
    sel: Selected,
    nodeclass: Option<&NodeClass>,
    fallback: &[(String, String)],
) -> Option<(String, String)> {
    let settable = |(_, v): &(String, String)| !v.is_empty() && !v.contains('*');
    let mut tags: Vec<(String, String)> = Vec::new();
    if let Some(nc) = nodeclass {
        for t in sel.terms(nc) {
            if let Some(m) = t.get("tags").and_then(|t| t.as_object()) {
                tags.extend(
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())),
                );
            }
        }
    }
    if tags.is_empty() {
        tags = fallback.to_vec();
    }
    // The discovery tag first: it is the one the Karpenter docs have users put on subnets and
    // security groups.
    // A wildcard term (`Name: stg-private-*`) is matched only by its own key: a value with
    // the wildcard to fill in, rather than a discovery tag the terms do not select on.
    tags.iter()
        .find(|t| t.0 == "karpenter.sh/discovery" && settable(t))
        .or_else(|| tags.iter().find(|t| settable(t)))
        .cloned()
        .or_else(|| {
            tags.iter()
                .find(|(_, v)| v.contains('*'))
                .map(|(k, v)| (k.clone(), v.replace('*', "<any>")))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Condition, Meta, NodePool};
    use crate::testing::{check_only, condition as cond, ids};

    /// The v0.2x-v0.31 `awsnodetemplate` controller's console lines name no object: the input
    /// still dates from before v0.32, so the words are AWSNodeTemplate and Provisioner.
    #[test]
    fn an_unnamed_pre_v0_32_template_is_an_awsnodetemplate() {
        let report = check_only(
            "KW501",
            "2023-08-10T11:42:17.301Z\tDEBUG\tcontroller.awsnodetemplate\tdiscovered subnets []\t{\"commit\": \"5a2fe84\"}",
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .starts_with("The AWSNodeTemplate cannot resolve its subnets")
                && d.summary
                    .contains("Provisioners whose spec.providerRef names it")
                && !d.summary.contains("NodePool")
                && !d.summary.contains("EC2NodeClass"),
            "{}",
            d.summary
        );
        assert!(d.related.is_empty(), "{:?}", d.related);
    }

    #[test]
    fn awsnodetemplate_logs_name_the_template_and_its_selector() {
        let report = crate::testing::check_only(
            "KW501",
            r#"2023-09-18T06:40:11.503Z	ERROR	controller	Reconciler error	{"commit": "322822a", "controller": "awsnodetemplate", "AWSNodeTemplate": {"name":"legacy"}, "error": "no subnets matched selector map[karpenter.sh/discovery:analytics]"}
{"level":"ERROR","logger":"controller.nodeclass","message":"Reconciler error","ec2nodeclass":"v1beta1","error":"no subnets exist given constraints [{map[karpenter.sh/discovery:prod-eu1]  }]"}"#,
        );
        let summaries: Vec<&str> = report
            .diagnoses
            .iter()
            .map(|d| d.summary.as_str())
            .collect();
        assert_eq!(summaries.len(), 2, "{summaries:?}");
        assert!(
            summaries[0].starts_with("AWSNodeTemplate legacy"),
            "{}",
            summaries[0]
        );
        assert!(
            summaries[1].starts_with("EC2NodeClass v1beta1"),
            "{}",
            summaries[1]
        );
        assert!(
            summaries[1].contains("karpenter.sh/discovery=prod-eu1"),
            "{}",
            summaries[1]
        );
    }

    #[test]
    fn every_signal_form() {
        for (text, cond) in [
            ("SubnetsReady=False SubnetsNotFound: SubnetSelector did not match any Subnets", "SubnetsReady"),
            ("reason: SubnetsNotFound", "SubnetsReady"),
            ("    Message:               SecurityGroupSelector did not match any SecurityGroups", "SecurityGroupsReady"),
            ("Normal  SecurityGroupsReady  1m  karpenter  Status condition transitioned, Type: SecurityGroupsReady, Status: True -> False, Reason: SecurityGroupsNotFound, Message: SecurityGroupSelector did not match any SecurityGroups", "SecurityGroupsReady"),
            ("AMIsReady=False AMINotFound: AMISelector did not match any AMIs", "AMIsReady"),
            ("AMIsReady=False UnsupportedAlias: AL2 AMIs are not supported for Kubernetes 1.33", "AMIsReady"),
            ("Ready=False UnhealthyDependents: SubnetsReady=False, ValidationSucceeded=False", "SubnetsReady"),
            ("Status condition transitioned, Type: PlacementGroupReady, Status: True -> False, Reason: PlacementGroupNotFound, Message: Placement group \"pg-1\" not found", "PlacementGroupReady"),
            (r#"{"level":"ERROR","message":"failed listing instance types","controller":"disruption","nodepool":"my-nodepool","error":"no subnets found"}"#, "SubnetsReady"),
            ("2023-02-01T10:00:00.000Z ERROR controller.provisioner Provisioning failed, launching node, creating cloud provider instance, getting launch template configs, getting subnets, no subnets matched selector map[karpenter.sh/discovery:demo]", "The AWSNodeTemplate cannot resolve its subnets"),
            ("ERROR controller Reconciler error {\"controller\": \"awsnodetemplate\", \"error\": \"no subnets exist given constraints map[karpenter.sh/discovery:demo]\"}", "The AWSNodeTemplate cannot resolve its subnets"),
            ("launching nodeclaim, creating instance, getting launch template configs, getting launch templates, no amis exist given constraints", "AMIsReady"),
            ("no security groups exist given constraints", "SecurityGroupsReady"),
            (r#"{"level":"ERROR","message":"Reconciler error","controller":"nodeclass","EC2NodeClass":{"name":"gpu"},"error":"creating instance profile, AccessDenied: not authorized to perform iam:CreateInstanceProfile"}"#, "InstanceProfileReady"),
        ] {
            let report = check_only("KW501", text);
            assert_eq!(ids(&report), ["KW501"], "{text}");
            assert!(report.diagnoses[0].summary.contains(cond), "{text}: {}", report.diagnoses[0].summary);
            let related: &[&str] = if cond.starts_with("The AWSNodeTemplate") {
                &[]
            } else {
                &["KW208"]
            };
            assert_eq!(report.diagnoses[0].related, related, "{text}");
        }
    }

    #[test]
    fn pre_v1_selector_fills_the_command() {
        let d = &check_only(
            "KW501",
            "ERROR controller.provisioner no subnets matched selector map[karpenter.sh/discovery:demo]",
        )
        .diagnoses[0];
        assert!(
            d.summary.contains(
                "Its subnetSelector (as the log prints it): karpenter.sh/discovery=demo."
            ),
            "{}",
            d.summary
        );
        assert!(d.remediation.iter().any(|r| r
            .command
            .as_deref()
            .is_some_and(|c| c.contains("\"Name=tag:karpenter.sh/discovery,Values=demo\""))));
        assert!(d.remediation.iter().any(|r| r.yaml.as_deref()
            == Some("spec:\n  subnetSelector:\n    karpenter.sh/discovery: demo\n")));
        // v0.32-v0.36 print selector terms: the EC2NodeClass's wording, but no condition yet.
        let d = &check_only(
            "KW501",
            "ERROR controller.nodeclass no subnets exist given constraints [{map[karpenter.sh/discovery:demo]  }]",
        )
        .diagnoses[0];
        assert!(
            d.summary
                .starts_with("The EC2NodeClass cannot resolve its subnets"),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("SubnetsReady"), "{}", d.summary);
        assert!(d.summary.contains("Before v0.37"), "{}", d.summary);
    }

    /// A console error names no template; the prompt line of a grepped spec does. Two prompts
    /// naming different ones name none.
    #[test]
    fn the_prompt_line_names_an_unnamed_template() {
        let error = "2023-09-27T02:41:55.412Z\tERROR\tcontroller.machine.lifecycle\tlaunching machine, creating cloud provider instance, getting launch template configs, getting launch templates, no subnets matched selector map[karpenter.sh/discovery:etl-old]\t{\"commit\": \"322822a\", \"machine\": \"jobs-2xk9p\", \"provisioner\": \"jobs\"}\n";
        let grep = "$ kubectl get awsnodetemplate nightly -o yaml | grep -A1 subnetSelector\n  subnetSelector:\n    karpenter.sh/discovery: etl-old\n";
        let d = &check_only("KW501", &format!("{error}{grep}")).diagnoses[0];
        assert!(
            d.summary.starts_with("AWSNodeTemplate nightly cannot"),
            "{}",
            d.summary
        );
        let other = "$ kubectl get awsnodetemplate default -o jsonpath='{.spec.subnetSelector}'\n{\"karpenter.sh/discovery\":\"etl-new\"}\n";
        let d = &check_only("KW501", &format!("{error}{grep}{other}")).diagnoses[0];
        assert!(
            d.summary.starts_with("The AWSNodeTemplate cannot"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn near_misses() {
        for text in [
            "NodeClassReady=False NodeClassNotFound: NodeClass not found on cluster",
            "message: NodeClassReady=False",
            "Ready=False UnhealthyDependents: ValidationSucceeded=False",
            "no instance types satisfy requirements of amis ami-0123 (al2023)",
            "type: SubnetsReady\nstatus: \"True\"\nreason: SubnetsReady",
            "Launched=Unknown AMINotFound: AMI used for instance launch either does not exist",
        ] {
            assert!(ids(&check_only("KW501", text)).is_empty(), "{text}");
        }
    }

    fn nodeclass(conditions: Vec<Condition>) -> NodeClass {
        NodeClass {
            meta: Meta {
                name: "default".into(),
                ..Default::default()
            },
            subnet_selector_terms: vec![
                serde_json::json!({"tags": {"karpenter.sh/discovery": "my-clusterr"}}),
            ],
            security_group_selector_terms: vec![
                serde_json::json!({"tags": {"karpenter.sh/discovery": "my-cluster"}}),
            ],
            role: Some("KarpenterNodeRole-my-cluster".into()),
            conditions,
            ..Default::default()
        }
    }

    #[test]
    fn names_selector_terms_and_fills_commands_from_objects() {
        let mut facts = Facts::default();
        facts.nodeclasses.push(nodeclass(vec![
            cond(
                "SubnetsReady",
                "False",
                "SubnetsNotFound",
                "SubnetSelector did not match any Subnets",
            ),
            cond("SecurityGroupsReady", "True", "SecurityGroupsReady", ""),
            cond(
                "Ready",
                "False",
                "UnhealthyDependents",
                "SubnetsReady=False",
            ),
        ]));
        facts.nodepools.push(NodePool {
            meta: Meta {
                name: "general".into(),
                ..Default::default()
            },
            nodeclass_ref: Some("default".into()),
            ..Default::default()
        });
        facts.messages.push(Message {
            text: "Ready=False UnhealthyDependents: SubnetsReady=False".into(),
            ..Default::default()
        });
        let d = check(&facts);
        assert_eq!(d.len(), 1, "{d:?}");
        let s = &d[0].summary;
        assert!(s.starts_with("EC2NodeClass default is not ready: SubnetsReady=False (SubnetsNotFound: SubnetSelector did not match any Subnets)"), "{s}");
        assert!(
            s.contains("Its subnetSelectorTerms: tags karpenter.sh/discovery=my-clusterr."),
            "{s}"
        );
        assert!(s.contains("NodePool general uses it"), "{s}");
        // The security groups resolve with karpenter.sh/discovery: my-cluster, so the
        // correction comes first, then the check of what the term matches now.
        assert!(
            s.contains("my-clusterr is probably a typo for my-cluster"),
            "{s}"
        );
        assert_eq!(
            d[0].remediation[1].command.as_deref(),
            Some("aws ec2 describe-subnets --filters \"Name=tag:karpenter.sh/discovery,Values=my-clusterr\" --query 'Subnets[].[SubnetId,AvailabilityZone,VpcId,AvailableIpAddressCount]' --output table")
        );
        assert!(d[0]
            .remediation
            .iter()
            .any(|r| r.command.as_deref() == Some("aws ec2 create-tags --resources <subnet-id> --tags Key=karpenter.sh/discovery,Value=my-clusterr")));
    }

    #[test]
    fn a_near_miss_of_the_sibling_selector_value_is_called_a_typo() {
        let yaml = |subnet_key: &str, subnet: &str, sg_key: &str, sg: &str| {
            format!("apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: shop\nspec:\n  subnetSelectorTerms:\n  - tags:\n      {subnet_key}: {subnet}\n  securityGroupSelectorTerms:\n  - tags:\n      {sg_key}: {sg}\nstatus:\n  conditions:\n  - type: SubnetsReady\n    status: \"False\"\n    reason: SubnetsNotFound\n    message: SubnetSelector did not match any Subnets\n  - type: SecurityGroupsReady\n    status: \"True\"\n    reason: SecurityGroupsReady\n    message: \"\"\n")
        };
        let text = yaml(
            "karpenter.sh/discovery",
            "shop-prd",
            "karpenter.sh/discovery",
            "shop-prod",
        );
        let d = &check_only("KW501", &text).diagnoses[0];
        assert!(
            d.summary
                .contains("shop-prd is probably a typo for shop-prod"),
            "{}",
            d.summary
        );
        assert!(d.remediation[0]
            .yaml
            .as_deref()
            .is_some_and(|y| y.contains("karpenter.sh/discovery: shop-prod")));
        // Names differ by nature; unrelated values and other keys are no typo.
        for text in [
            yaml("Name", "shop-private-a", "Name", "shop-private-b"),
            yaml(
                "karpenter.sh/discovery",
                "payments",
                "karpenter.sh/discovery",
                "shop-prod",
            ),
            yaml("team", "shop-prd", "karpenter.sh/discovery", "shop-prod"),
        ] {
            let d = &check_only("KW501", &text).diagnoses[0];
            assert!(!d.summary.contains("typo"), "{}", d.summary);
        }
    }

    #[test]
    fn id_terms_get_no_tagging_advice() {
        let text = r#"{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"windows"},"spec":{"subnetSelectorTerms":[{"id":"subnet-0123456789abcdef0"}]},"status":{"conditions":[{"message":"SubnetSelector did not match any Subnets","reason":"SubnetsNotFound","status":"False","type":"SubnetsReady"}]}}"#;
        let d = &crate::testing::check_only("KW501", text).diagnoses[0];
        assert!(
            !d.remediation.iter().any(|r| r
                .command
                .as_deref()
                .is_some_and(|c| c.contains("create-tags"))),
            "{:?}",
            d.remediation
        );
        assert!(d.remediation.iter().any(|r| r.text.contains("by id")));
    }

    #[test]
    fn instance_profile_unknown_while_others_resolved() {
        let mut facts = Facts::default();
        facts.nodeclasses.push(nodeclass(vec![
            cond("SubnetsReady", "True", "SubnetsReady", ""),
            cond(
                "InstanceProfileReady",
                "Unknown",
                "AwaitingReconciliation",
                "object is awaiting reconciliation",
            ),
            cond(
                "Ready",
                "Unknown",
                "ReconcilingDependents",
                "InstanceProfileReady=Unknown",
            ),
        ]));
        let d = check(&facts);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].confidence, Confidence::Medium);
        assert!(
            d[0].remediation[0].command.as_deref()
                == Some("aws iam get-role --role-name KarpenterNodeRole-my-cluster")
        );
        // Freshly created: everything Unknown is not a failure.
        let mut fresh = Facts::default();
        fresh.nodeclasses.push(nodeclass(vec![
            cond("SubnetsReady", "Unknown", "AwaitingReconciliation", ""),
            cond(
                "InstanceProfileReady",
                "Unknown",
                "AwaitingReconciliation",
                "",
            ),
        ]));
        assert!(check(&fresh).is_empty());
    }
}
