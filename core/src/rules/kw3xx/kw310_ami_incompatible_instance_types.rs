//! KW310 ami-incompatible-instance-types.

use crate::facts::{contains_ignore_ascii_case, find_ignore_ascii_case, Facts, Message};
use crate::rules::kw2xx::scheduling::tail_after;
use crate::rules::kw3xx::common::{
    claim_kind, join_names, named, nodeclaim_of, nodeclass_of_nodeclaim, nodepool_of_nodeclaim,
    push_unique, sole_nodeclass,
};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW310",
    slug: "ami-incompatible-instance-types",
    title: "The EC2NodeClass's AMIs fit none of the NodeClaim's instance types",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Karpenter picked instance types for the NodeClaim, but none of them satisfies the requirements
of the AMIs the EC2NodeClass selected, so it cannot build a launch template:
`getting launch template configs, getting launch templates, no instance types satisfy
requirements of amis [<ami ids>]` (`Reconciler error`, `launching nodeclaim, ...`; v1.2 maps it to
the NodeClaim's `Launched=Unknown LaunchFailed` `Error getting launch template configs: Instance
launch failed`). Every attempt fails the same way until the launch timeout deletes the
NodeClaim, and the next one fails again.

Before v1 the drift check prints the same text about a running node (`getting drift for node,
calculating ami drift, no instance types satisfy requirements of amis ...`): its instance type
fits none of the AMIs now selected. The node keeps running, drift cannot be computed, and a new
node of that type would fail to launch; reported as a warning.

## Why it happens
Almost always architecture: the AMIs are x86_64 (`kubernetes.io/arch In [amd64]`) and the
NodePool allows only Graviton (arm64) types, or the reverse; `amiSelectorTerms` that pin one AMI
ID select only one architecture. Less often another AMI requirement (an accelerated AMI variant
that needs GPU or Neuron types).

## How to fix
Add a `kubernetes.io/arch` requirement to the NodePool that matches the AMIs, or select AMIs for
both architectures (an `alias` such as `al2023@latest` resolves both; or add an ID or name term
for the other architecture).
"#,
};

const SIGNALS: &[&str] = &[
    "no instance types satisfy requirements of amis",
    // Read for the NodeClaim's instance types and NodePool.
    "created nodeclaim",
];

/// The drift check's form (`getting drift for node, calculating ami drift, no instance types
/// satisfy ...`, v0.28 to v0.3x): the running node's type fits none of the AMIs now selected.
fn is_drift_check(m: &Message) -> bool {
    contains_ignore_ascii_case(&m.text, "calculating ami drift")
        || contains_ignore_ascii_case(&m.text, "getting drift")
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let all: Vec<&Message> = facts
        .messages_containing("no instance types satisfy requirements of amis")
        .collect();
    if all.is_empty() {
        return Vec::new();
    }
    // A launch failure is the diagnosis; the drift check's error only when nothing failed to
    // launch.
    let launch: Vec<&Message> = all.iter().copied().filter(|m| !is_drift_check(m)).collect();
    let drift_only = launch.is_empty();
    let hits = if drift_only { all } else { launch };
    let mut amis: Vec<String> = Vec::new();
    let mut nodeclaims: Vec<String> = Vec::new();
    for m in &hits {
        if let Some(list) = tail_after(&m.text, "requirements of amis") {
            let inside = list
                .trim_start()
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or_default()
                .to_string();
            for a in inside.split([' ', ',']).filter(|a| a.starts_with("ami-")) {
                push_unique(&mut amis, a);
            }
        }
        if let Some(n) = nodeclaim_of(facts, m) {
            push_unique(&mut nodeclaims, n);
        }
    }
    let nodeclass = nodeclaims
        .iter()
        .find_map(|n| nodeclass_of_nodeclaim(facts, n))
        .or_else(|| sole_nodeclass(facts));
    let nodepool = nodeclaims
        .iter()
        .find_map(|n| nodepool_of_nodeclaim(facts, n))
        .or_else(|| hits.iter().find_map(|m| m.nodepool.clone()))
        .or_else(|| pasted_pool(facts, &nodeclaims, nodeclass.as_deref()));
    let types = instance_types(facts, &nodeclaims);
    let types_arch = requested_arch(facts, &nodeclaims, nodepool.as_deref())
        .or_else(|| types_architecture(&types));
    let ami_arch = amis.iter().find_map(|a| ami_architecture(facts, a));
    let ami_list = if amis.is_empty() {
        "the selected AMIs".to_string()
    } else {
        format!(
            "AMI{} {}",
            if amis.len() > 1 { "s" } else { "" },
            join_names(&amis)
        )
    };
    // Before v0.32 (`Could not launch node, ...`, `launching machine, ...`) the objects are a
    // Provisioner and its AWSNodeTemplate.
    let claim = nodeclaims
        .first()
        .map(|n| claim_kind(facts, n))
        .unwrap_or("NodeClaim");
    let legacy = claim == "Machine"
        || hits.iter().any(|m| {
            contains_ignore_ascii_case(&m.text, "could not launch node")
                || contains_ignore_ascii_case(&m.text, "launching machine")
        });
    let (pool_kind, class_kind) = if legacy {
        ("Provisioner", "AWSNodeTemplate")
    } else {
        ("NodePool", "EC2NodeClass")
    };
    let subject = match (nodeclaims.is_empty(), &nodepool, legacy) {
        (false, Some(np), _) => {
            format!("{} of {pool_kind} {np}", named(claim, &nodeclaims))
        }
        (false, None, _) => named(claim, &nodeclaims),
        (true, Some(np), true) => format!("A node of Provisioner {np}"),
        (true, Some(np), false) => format!("A NodeClaim of NodePool {np}"),
        (true, None, true) => "The node".to_string(),
        (true, None, false) => "The NodeClaim".to_string(),
    };
    let mut summary = if drift_only {
        format!(
            "Drift detection fails for {subject}: the instance type {} runs on satisfies the requirements of none of the AMIs the {class_kind} now selects ({ami_list}), so Karpenter cannot tell whether the node drifted, and a new node of that type would fail to launch the same way",
            if nodeclaims.len() > 1 { "each" } else { "it" }
        )
    } else {
        format!(
            "{subject} cannot launch: no instance type {} allows satisfies the requirements of {ami_list}",
            if nodeclaims.len() > 1 { "they" } else { "it" }
        )
    };
    if let Some(nc) = &nodeclass {
        summary.push_str(&format!(" ({class_kind} {nc})"));
    }
    summary.push('.');
    // An accelerated AMI variant whose architecture is not the problem: it needs GPU or Neuron
    // instance types.
    let variant = amis
        .iter()
        .find_map(|a| ami_variant(facts, a, &hits))
        // Not when the architectures are known to differ, or only the types' is known.
        .filter(|_| match (&types_arch, &ami_arch) {
            (Some(t), Some(a)) => t == a,
            (Some(_), None) => false,
            _ => true,
        });
    let same_arch =
        variant.is_none() && matches!((&types_arch, &ami_arch), (Some(t), Some(a)) if t == a);
    match (&types_arch, &ami_arch) {
        _ if variant.is_some() => {
            let v = variant.unwrap_or(Variant::Gpu);
            summary.push_str(&format!(
                " The AMI is {} variant: only instance types with {} satisfy its requirements, and the instance types {} allows have none.",
                v.words(),
                v.hardware(),
                nodepool
                    .as_deref()
                    .map(|n| format!("{pool_kind} {n}"))
                    .unwrap_or_else(|| format!("the {pool_kind}"))
            ));
        }
        (Some(t), Some(a)) if t == a => summary.push_str(&format!(
            " The instance types and the AMI are both {}: not an architecture mismatch, so another of the AMI's requirements excludes the types (a GPU or Neuron variant; the EC2NodeClass status.amis lists each AMI's requirements).",
            arch_words(t)
        )),
        (Some(t), Some(a)) => summary.push_str(&format!(
            " The instance types are {} and the AMI is {}: an architecture mismatch.",
            arch_words(t),
            arch_words(a)
        )),
        (Some(t), None) => summary.push_str(&format!(
            " The instance types{} are {}: the AMIs are most likely built for the other architecture.",
            if types.is_empty() {
                String::new()
            } else {
                format!(" ({})", short_list(&types))
            },
            arch_words(t)
        )),
        (None, Some(a)) if drift_only => summary.push_str(&format!(
            " The AMI is {}: the node's instance type is most likely {}.",
            arch_words(a),
            other_arch(a).map_or("of another architecture".into(), arch_words)
        )),
        (None, Some(a)) => summary.push_str(&format!(
            " The AMI is {}: the instance types the {pool_kind} allows are most likely of the other architecture.",
            arch_words(a)
        )),
        _ => summary.push_str(" Most often an architecture mismatch (arm64 types with x86_64 AMIs, or the reverse), else another AMI requirement (a GPU or Neuron AMI variant)."),
    }
    if drift_only {
        summary.push_str(
            " The node itself keeps running: this is the drift check's error, not a failed launch.",
        );
    } else {
        summary.push_str(" Every launch attempt fails the same way.");
    }
    // Named when known; else, from v0.32, looked up through the NodeClaim's label (as the
    // EC2NodeClass is below), so the command runs as pasted.
    let np = match (&nodepool, nodeclaims.first(), legacy) {
        (Some(np), _, _) => np.clone(),
        (None, Some(claim), false) => format!(
            "\"$(kubectl get nodeclaim {claim} -o jsonpath='{{.metadata.labels.karpenter\\.sh/nodepool}}')\""
        ),
        _ => format!("<{}>", pool_kind.to_ascii_lowercase()),
    };
    let np_named = match &nodepool {
        Some(n) => format!("NodePool {n}"),
        None => "the NodePool".to_string(),
    };
    // Named when known, else looked up through the NodeClaim (or NodePool) that uses it.
    let nc = crate::rules::kw3xx::common::Api { legacy: false }.nodeclass_cmd(
        nodeclass.as_deref(),
        nodeclaims.first().map(String::as_str),
        nodepool.as_deref(),
    );
    let nc_named = match &nodeclass {
        Some(n) => format!("EC2NodeClass {n}"),
        None => format!("the EC2NodeClass (`kubectl edit ec2nodeclass {nc}`)"),
    };
    let known_arch = ami_arch.clone().or_else(|| {
        types_arch
            .as_deref()
            .and_then(other_arch)
            .map(str::to_string)
    });
    // Neither the AMIs' nor the instance types' architecture is in the input: the value is an
    // example, and the step says the describe-images output decides it.
    let arch_hint = if known_arch.is_some() {
        ""
    } else {
        " (the Architecture describe-images shows: x86_64 is amd64, arm64 is arm64)"
    };
    // Unknown: a placeholder the describe-images output fills in, never a guessed amd64.
    let target_arch = known_arch.unwrap_or_else(|| "<amd64 or arm64>".to_string());
    let ami_ids = if amis.is_empty() {
        "<ami-id>".to_string()
    } else {
        amis.join(" ")
    };
    let steps = if legacy {
        vec![
            Remediation::command(
                "See each AMI's architecture and what the AWSNodeTemplate selects:",
                format!(
                    "aws ec2 describe-images --image-ids {ami_ids} --query 'Images[].[ImageId,Name,Architecture]' --output table; kubectl get awsnodetemplates -o jsonpath='{{range .items[*]}}{{.metadata.name}} {{.spec.amiSelector}}{{\"\\n\"}}{{end}}'"
                ),
            ),
            Remediation::yaml(
                format!("Either keep Provisioner {np} on the AMIs' architecture{arch_hint} (`kubectl edit provisioner {np}`):"),
                format!(
                    "spec:\n  requirements:\n    - key: kubernetes.io/arch\n      operator: In\n      values: [\"{target_arch}\"]\n"
                ),
            ),
            Remediation::text(format!(
                "Or let the AWSNodeTemplate{} select AMIs for both architectures: drop its `amiSelector` (Karpenter then resolves the EKS optimized AMI of each architecture from SSM), or make it match an AMI of the other architecture too.",
                nodeclass.as_deref().map(|n| format!(" {n}")).unwrap_or_default()
            )),
        ]
    } else {
        vec![
        Remediation::command(
            "See each AMI's architecture and what the EC2NodeClass resolved:",
            format!(
                "aws ec2 describe-images --image-ids {} --query 'Images[].[ImageId,Name,Architecture]' --output table; kubectl get ec2nodeclass {nc} -o jsonpath='{{.spec.amiSelectorTerms}}{{\"\\n\"}}{{.status.amis}}{{\"\\n\"}}'",
                ami_ids
            ),
        ),
        match variant {
            Some(v) => Remediation::yaml(
                format!("Either, if {np_named} is meant for nodes with {}, allow only such instance types (`kubectl edit nodepool {np}`):", v.hardware()),
                format!(
                    "spec:\n  template:\n    spec:\n      requirements:\n        - key: {}\n          operator: Gt\n          values: [\"0\"]\n",
                    v.count_label()
                ),
            ),
            // One architecture on both sides: an arch requirement changes nothing.
            None if same_arch => Remediation::text(format!(
                "Either compare each AMI's requirements in the EC2NodeClass's status.amis with the instance types {np_named} allows (`kubectl edit nodepool {np}`), and allow types that meet them (GPU or accelerator types for an accelerated AMI)."
            )),
            None => Remediation::yaml(
                format!("Either keep {np_named} (`kubectl edit nodepool {np}`) on the AMIs' architecture{arch_hint}:"),
                format!(
                    "spec:\n  template:\n    spec:\n      requirements:\n        - key: kubernetes.io/arch\n          operator: In\n          values: [\"{target_arch}\"]\n"
                ),
            ),
        },
        match variant {
            Some(_) => Remediation::yaml(
                format!("Or let {nc_named} select the standard AMI too (an alias resolves the standard, NVIDIA and Neuron variants, and Karpenter picks the one each instance type needs):"),
                "spec:\n  amiSelectorTerms:\n    - alias: al2023@latest\n",
            ),
            None if same_arch => Remediation::yaml(
                format!("Or let {nc_named} select the standard AMI (an alias resolves the standard, NVIDIA and Neuron variants of each architecture, and Karpenter picks the one each instance type needs):"),
                "spec:\n  amiSelectorTerms:\n    - alias: al2023@latest\n",
            ),
            None => Remediation::yaml(
                format!("Or let {nc_named} select AMIs for both architectures (an alias resolves amd64 and arm64; or add a term for the other architecture's AMI):"),
                "spec:\n  amiSelectorTerms:\n    - alias: al2023@latest\n",
            ),
        },
    ]
    };
    let object = nodeclaims
        .first()
        .map(|n| crate::rules::kw3xx::common::claim_ref(facts, n));
    let mut d = Diagnosis::new(&META, summary)
        .with_object(object.as_ref())
        .with_node_pool(nodepool.as_deref())
        .with_messages(hits.iter().copied())
        .with_remediation(steps);
    if drift_only {
        // Nothing is blocked now: the running node stays; the risk is the next launch.
        d = d.with_severity(Severity::Warning);
    }
    vec![d]
}

/// The NodePool a NodeClaim belongs to when only pasted objects tell: the pasted NodePool
/// whose name prefixes the claim's (`<nodepool>-<suffix>`), else the only pasted NodePool
/// that uses the EC2NodeClass.
fn pasted_pool(facts: &Facts, nodeclaims: &[String], nodeclass: Option<&str>) -> Option<String> {
    if let Some(np) = nodeclaims.iter().find_map(|n| {
        let (prefix, _) = n.rsplit_once('-')?;
        facts.nodepool(prefix).map(|p| p.meta.name.clone())
    }) {
        return Some(np);
    }
    let class = nodeclass?;
    let mut users = facts
        .nodepools
        .iter()
        .filter(|p| p.nodeclass_ref.as_deref() == Some(class));
    match (users.next(), users.next()) {
        (Some(p), None) => Some(p.meta.name.clone()),
        _ => None,
    }
}

/// An accelerated AMI variant.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Variant {
    Gpu,
    Neuron,
}

impl Variant {
    fn words(self) -> &'static str {
        match self {
            Variant::Gpu => "a GPU (NVIDIA)",
            Variant::Neuron => "a Neuron (Inferentia/Trainium)",
        }
    }

    fn hardware(self) -> &'static str {
        match self {
            Variant::Gpu => "GPUs",
            Variant::Neuron => "Neuron accelerators",
        }
    }

    fn count_label(self) -> &'static str {
        match self {
            Variant::Gpu => "karpenter.k8s.aws/instance-gpu-count",
            Variant::Neuron => "karpenter.k8s.aws/instance-accelerator-count",
        }
    }
}

/// The accelerated variant of an AMI when the input shows it: its resolved requirements (GPU
/// or accelerator count labels), or its name (`...-nvidia-...`, `amazon-eks-gpu-node-...`,
/// `...-neuron-...`), from the EC2NodeClass status or the error's pre-v0.32 AMI struct.
fn ami_variant(facts: &Facts, ami: &str, hits: &[&Message]) -> Option<Variant> {
    let by_text = |t: &str| {
        let t = t.to_ascii_lowercase();
        if t.contains("neuron") || t.contains("instance-accelerator-count") {
            Some(Variant::Neuron)
        } else if t.contains("nvidia") || t.contains("-gpu-") || t.contains("instance-gpu-count") {
            Some(Variant::Gpu)
        } else {
            None
        }
    };
    for a in facts
        .nodeclasses
        .iter()
        .flat_map(|c| c.status_amis.iter())
        .filter(|a| a.id == ami)
    {
        let keys: Vec<&str> = a.requirements.iter().map(|r| r.key.as_str()).collect();
        if keys.iter().any(|k| k.contains("instance-gpu")) {
            return Some(Variant::Gpu);
        }
        if keys.iter().any(|k| k.contains("instance-accelerator")) {
            return Some(Variant::Neuron);
        }
        if let Some(v) = a.name.as_deref().and_then(by_text) {
            return Some(v);
        }
    }
    // Before v0.32 the error prints each AMI whole: `{<name> <id> <created> [<requirements>]}`.
    hits.iter().find_map(|m| {
        let at = m.text.find(ami)?;
        let start = m.text[..at].rfind('{')?;
        let end = at + m.text[at..].find('}')?;
        by_text(&m.text[start..end])
    })
}

/// `arm64 (Graviton)`, `amd64 (x86_64)`; any other value (a label or requirement that says
/// `s390x`) as it is written.
fn arch_words(arch: &str) -> String {
    match arch {
        "arm64" => "arm64 (Graviton)".into(),
        "amd64" => "amd64 (x86_64)".into(),
        other => other.into(),
    }
}

/// The other of the two architectures EC2 offers; none for a value that is neither.
fn other_arch(arch: &str) -> Option<&'static str> {
    match arch {
        "arm64" => Some("amd64"),
        "amd64" => Some("arm64"),
        _ => None,
    }
}

fn short_list(types: &[String]) -> String {
    if types.len() > 4 {
        format!("{} and {} more", types[..4].join(", "), types.len() - 4)
    } else {
        types.join(", ")
    }
}

/// The instance types the NodeClaims could use: the typed NodeClaim's requirement, or the
/// `created nodeclaim` log's `instance-types`.
fn instance_types(facts: &Facts, nodeclaims: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for n in nodeclaims {
        if let Some(c) = facts.nodeclaims.iter().find(|c| &c.meta.name == n) {
            for r in &c.requirements {
                if r.key == "node.kubernetes.io/instance-type" && r.operator == "In" {
                    for v in &r.values {
                        push_unique(&mut out, v.clone());
                    }
                }
            }
        }
        for r in &facts.logs {
            // v0.32 to v0.36 spell the key `nodeclaim`; before v0.32 it is a `created machine`.
            let created = r.message.eq_ignore_ascii_case("created nodeclaim")
                || r.message.eq_ignore_ascii_case("created machine");
            if created
                && ["NodeClaim", "nodeclaim", "Machine", "machine"]
                    .iter()
                    .any(|k| r.names(k, n))
            {
                if let Some(list) = r.fields.get("instance-types").and_then(|v| v.as_str()) {
                    for t in list.split(", ") {
                        let t = t.split(" and ").next().unwrap_or(t).trim();
                        if t.contains('.') {
                            push_unique(&mut out, t);
                        }
                    }
                }
            }
        }
    }
    out
}

/// The architecture the NodeClaim or NodePool requires (`kubernetes.io/arch In [x]`), or a
/// `kubernetes.io/arch=<x>` label of a pasted NodeClaim.
fn requested_arch(facts: &Facts, nodeclaims: &[String], nodepool: Option<&str>) -> Option<String> {
    let single = |vals: &[String]| (vals.len() == 1).then(|| vals[0].clone());
    for n in nodeclaims {
        if let Some(c) = facts.nodeclaims.iter().find(|c| &c.meta.name == n) {
            if let Some(a) = c
                .requirements
                .iter()
                .find(|r| r.key == "kubernetes.io/arch" && r.operator == "In")
                .and_then(|r| single(&r.values))
            {
                return Some(a);
            }
            if let Some(a) = c.meta.labels.get("kubernetes.io/arch") {
                return Some(a.clone());
            }
        }
    }
    if let Some(a) = nodepool
        .and_then(|np| facts.nodepool(np))
        .and_then(|np| np.allowed_values("kubernetes.io/arch"))
        .and_then(|v| single(&v))
    {
        return Some(a);
    }
    let mut seen: Vec<String> = Vec::new();
    for m in &facts.messages {
        if let Some(v) = tail_after(&m.text, "kubernetes.io/arch=") {
            let v: String = v
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            if v == "arm64" || v == "amd64" {
                push_unique(&mut seen, v);
            }
        }
    }
    (seen.len() == 1).then(|| seen.remove(0))
}

/// All types Graviton, or all x86: their architecture.
fn types_architecture(types: &[String]) -> Option<String> {
    if types.is_empty() {
        return None;
    }
    let arm = types.iter().filter(|t| is_graviton(t)).count();
    if arm == types.len() {
        Some("arm64".into())
    } else if arm == 0 {
        Some("amd64".into())
    } else {
        None
    }
}

/// Graviton families have a `g` right after the generation digit (`c7g`, `m6gd`, `t4g`,
/// `im4gn`, `g5g`, `hpc7g`), plus the first-generation `a1`.
pub fn is_graviton(instance_type: &str) -> bool {
    let family = instance_type.split('.').next().unwrap_or_default();
    if family == "a1" {
        return true;
    }
    let Some(digit_at) = family.find(|c: char| c.is_ascii_digit()) else {
        return false;
    };
    family[digit_at..]
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .starts_with('g')
}

/// The architecture of an AMI when the input shows it: a line naming the AMI with its
/// `kubernetes.io/arch` requirement, `Architecture`, or name (`x86_64`, `arm64`).
fn ami_architecture(facts: &Facts, ami: &str) -> Option<String> {
    let typed = facts
        .nodeclasses
        .iter()
        .flat_map(|c| c.status_amis.iter())
        .filter(|a| a.id == ami)
        .find_map(|a| {
            let r = a
                .requirements
                .iter()
                .find(|r| r.key == "kubernetes.io/arch" && r.operator == "In")?;
            (r.values.len() == 1).then(|| r.values[0].clone())
        });
    if typed.is_some() {
        return typed;
    }
    for m in facts.messages.iter().filter(|m| m.text.contains(ami)) {
        if contains_ignore_ascii_case(&m.text, "no instance types satisfy") {
            // Before v0.32 the error prints each AMI whole: `[{<name> <id> <created>
            // [{kubernetes.io/arch In [arm64]}]} ...]`.
            if let Some(a) = printed_ami_arch(&m.text, ami) {
                return Some(a);
            }
            continue;
        }
        let after = &m.text[m.text.find(ami).unwrap_or(0)..];
        // The text about this AMI ends where the next AMI starts.
        let own = match after[ami.len()..].find("ami-") {
            Some(end) => &after[..ami.len() + end],
            None => after,
        };
        let arm = ["arm64", "aarch64"].iter().any(|s| own.contains(s));
        let x86 = ["amd64", "x86_64"].iter().any(|s| own.contains(s));
        match (arm, x86) {
            (true, false) => return Some("arm64".into()),
            (false, true) => return Some("amd64".into()),
            _ => {}
        }
    }
    None
}

/// The architecture of one AMI as a pre-v0.32 error prints it (`{amazon-eks-arm64-node-1.21-v1
/// ami-0c3d 2022-02-17T00:52:30.000Z [{kubernetes.io/arch In [arm64]}]}`): its requirement, else
/// its name. `None` for the v0.32+ list of bare IDs.
fn printed_ami_arch(text: &str, ami: &str) -> Option<String> {
    let list_at = find_ignore_ascii_case(text, "requirements of amis")?;
    let at = list_at + text[list_at..].find(ami)?;
    let start = list_at + text[list_at..at].rfind('{')?;
    let after = &text[at + ami.len()..];
    let end = match after.find("ami-") {
        Some(next) => after[..next].rfind('{').unwrap_or(next),
        None => after.len(),
    };
    let own = &text[start..at + ami.len() + end];
    for (needle, arch) in [
        ("kubernetes.io/arch In [arm64]", "arm64"),
        ("kubernetes.io/arch In [amd64]", "amd64"),
    ] {
        if own.contains(needle) {
            return Some(arch.into());
        }
    }
    let arm = ["arm64", "aarch64"].iter().any(|s| own.contains(s));
    let x86 = ["amd64", "x86_64"].iter().any(|s| own.contains(s));
    match (arm, x86) {
        (true, false) => Some("arm64".into()),
        (false, true) => Some("amd64".into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check_only, ids};

    #[test]
    fn every_form() {
        for text in [
            r#"{"level":"ERROR","message":"Reconciler error","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"graviton-x2v9q"},"error":"launching nodeclaim, creating instance, creating nodeclaim, getting launch template configs, getting launch templates, no instance types satisfy requirements of amis [ami-0f1e2d3c4b5a69788]"}"#,
            r#"{"level":"ERROR","message":"Reconciler error","NodeClaim":{"name":"arm-builders-d7k3x"},"error":"launching nodeclaim, creating instance, getting launch template configs, getting launch templates, no instance types satisfy requirements of amis [ami-04c9e7b1f3a2d8650]"}"#,
            "launching nodeclaim, creating instance, creating nodeclaim, getting launch template configs, getting launch templates, no instance types satisfy requirements of amis [ami-1 ami-2] (aws-error-code=x)",
        ] {
            assert_eq!(ids(&check_only("KW310", text)), ["KW310"], "{text}");
        }
    }

    #[test]
    fn infers_architectures() {
        let report = check_only(
            "KW310",
            "{\"level\":\"INFO\",\"message\":\"created nodeclaim\",\"NodePool\":{\"name\":\"graviton\"},\"NodeClaim\":{\"name\":\"graviton-x2v9q\"},\"instance-types\":\"c7g.2xlarge, c7g.xlarge, m7g.2xlarge, m7g.xlarge, r7g.xlarge and 4 other(s)\"}\n{\"level\":\"ERROR\",\"message\":\"Reconciler error\",\"NodeClaim\":{\"name\":\"graviton-x2v9q\"},\"error\":\"launching nodeclaim, creating instance, creating nodeclaim, getting launch template configs, getting launch templates, no instance types satisfy requirements of amis [ami-0f1e2d3c4b5a69788]\"}",
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("NodeClaim graviton-x2v9q of NodePool graviton"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("arm64 (Graviton)"), "{}", d.summary);
        assert!(d.remediation[1]
            .yaml
            .as_deref()
            .unwrap()
            .contains("[\"amd64\"]"));
        let b = check_only(
            "KW310",
            "Labels:       kubernetes.io/arch=arm64\n[{\"id\":\"ami-04c9e7b1f3a2d8650\",\"name\":\"amazon-eks-node-al2023-x86_64-standard-1.31-v20250203\",\"requirements\":[{\"key\":\"kubernetes.io/arch\",\"operator\":\"In\",\"values\":[\"amd64\"]}]}]\n{\"level\":\"ERROR\",\"message\":\"Reconciler error\",\"NodeClaim\":{\"name\":\"arm-1\"},\"error\":\"launching nodeclaim, creating instance, getting launch template configs, getting launch templates, no instance types satisfy requirements of amis [ami-04c9e7b1f3a2d8650]\"}",
        );
        assert!(
            b.diagnoses[0].summary.contains("an architecture mismatch"),
            "{}",
            b.diagnoses[0].summary
        );
    }

    #[test]
    fn reads_resolved_amis() {
        use crate::facts::{Meta, NodeClass, Requirement, ResolvedAmi};
        let mut facts = crate::ingest::ingest(&[crate::Document::new(
            "k.log",
            r#"{"level":"ERROR","message":"Reconciler error","NodeClaim":{"name":"g-1"},"error":"launching nodeclaim, creating instance, getting launch template configs, getting launch templates, no instance types satisfy requirements of amis [ami-0aaa]"}"#,
        )]);
        facts.nodeclasses.push(NodeClass {
            meta: Meta {
                name: "pinned".into(),
                ..Meta::default()
            },
            status_amis: vec![ResolvedAmi {
                id: "ami-0aaa".into(),
                name: None,
                requirements: vec![Requirement {
                    key: "kubernetes.io/arch".into(),
                    operator: "In".into(),
                    values: vec!["amd64".into()],
                    min_values: None,
                }],
            }],
            ..NodeClass::default()
        });
        let d = (crate::rules::find("KW310").unwrap().check)(&facts);
        assert!(
            d[0].summary.contains("The AMI is amd64"),
            "{}",
            d[0].summary
        );
        assert!(
            d[0].summary.contains("(EC2NodeClass pinned)"),
            "{}",
            d[0].summary
        );
    }

    /// The drift check's form is about a running node: not a failed launch, and a warning.
    #[test]
    fn drift_check_is_not_a_launch_failure() {
        let d = &check_only(
            "KW310",
            "karpenter-6d57cdbbd6-4xkzq controller 2023-09-12T10:01:42.130Z\tERROR\tcontroller\tReconciler error\t{\"commit\": \"d7e22b1-dirty\", \"controller\": \"machine.disruption\", \"Machine\": {\"name\":\"default-7k2qz\"}, \"error\": \"getting drift for node, calculating ami drift, no instance types satisfy requirements of amis [{amazon-eks-arm64-node-1.27-v20230825 ami-0c3d9b5e2a8f41b67 2023-08-25T00:52:30.000Z kubernetes.io/arch In [arm64]}],\"}",
        )
        .diagnoses[0];
        assert_eq!(d.severity, crate::rules::Severity::Warning);
        assert!(
            d.summary
                .starts_with("Drift detection fails for Machine default-7k2qz"),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("cannot launch"), "{}", d.summary);
        assert!(
            d.summary
                .contains("the node's instance type is most likely amd64"),
            "{}",
            d.summary
        );
        assert!(d.remediation[1]
            .text
            .contains("`kubectl edit provisioner <provisioner>`"));
    }

    /// v0.32 to v0.36 log the NodePool and NodeClaim in lower-case keys.
    #[test]
    fn lower_case_created_nodeclaim() {
        let d = &check_only(
            "KW310",
            "{\"level\":\"INFO\",\"logger\":\"controller.provisioner\",\"message\":\"created nodeclaim\",\"nodepool\":\"ci-arm\",\"nodeclaim\":\"ci-arm-hx7dl\",\"instance-types\":\"c6g.2xlarge, c7g.2xlarge\"}\n{\"level\":\"ERROR\",\"message\":\"Reconciler error\",\"controller\":\"nodeclaim.lifecycle\",\"NodeClaim\":{\"name\":\"ci-arm-hx7dl\"},\"error\":\"launching nodeclaim, creating instance, getting launch template configs, getting launch templates, no instance types satisfy requirements of amis [ami-0a9f8e7d6c5b4a321]\"}",
        )
        .diagnoses[0];
        assert!(
            d.summary
                .contains("NodeClaim ci-arm-hx7dl of NodePool ci-arm cannot launch"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("arm64 (Graviton)"), "{}", d.summary);
    }

    /// A GPU AMI variant of the right architecture: the NodePool needs GPU types, not an arch
    /// requirement.
    #[test]
    fn gpu_variant_is_not_an_architecture_mismatch() {
        let text = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: gpu\nstatus:\n  amis:\n    - id: ami-0f1e\n      name: amazon-eks-node-al2023-x86_64-nvidia-1.31-v20250304\n      requirements:\n        - key: kubernetes.io/arch\n          operator: In\n          values: [\"amd64\"]\n        - key: karpenter.k8s.aws/instance-gpu-count\n          operator: Exists\n---\n{\"level\":\"ERROR\",\"message\":\"Reconciler error\",\"NodeClaim\":{\"name\":\"general-x2k9d\"},\"error\":\"launching nodeclaim, creating instance, getting launch template configs, getting launch templates, no instance types satisfy requirements of amis [ami-0f1e]\"}";
        let d = &check_only("KW310", text).diagnoses[0];
        assert!(
            d.summary.contains("a GPU (NVIDIA) variant"),
            "{}",
            d.summary
        );
        assert!(
            !d.summary.contains("architecture mismatch"),
            "{}",
            d.summary
        );
        assert!(d.remediation[1]
            .yaml
            .as_deref()
            .is_some_and(|y| y.contains("instance-gpu-count")));
    }

    #[test]
    fn graviton_families() {
        for t in [
            "c7g.xlarge",
            "m6gd.large",
            "t4g.micro",
            "im4gn.large",
            "g5g.xlarge",
            "a1.large",
            "hpc7g.16xlarge",
            "c8g.4xlarge",
        ] {
            assert!(is_graviton(t), "{t}");
        }
        for t in [
            "g5.xlarge",
            "g4dn.xlarge",
            "m7i.large",
            "c6a.large",
            "inf2.xlarge",
            "trn1.2xlarge",
            "m7i-flex.large",
        ] {
            assert!(!is_graviton(t), "{t}");
        }
    }

    #[test]
    fn near_misses() {
        for text in [
            "no instance type met the scheduling requirements or had enough resources",
            "AMISelector did not match any AMIs",
        ] {
            assert!(ids(&check_only("KW310", text)).is_empty(), "{text}");
        }
    }
}
