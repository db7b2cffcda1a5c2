//! KW304 node-unauthorized.

use crate::facts::{
    contains_ignore_ascii_case, find_ignore_ascii_case, Facts, Message, MessageOrigin, ObjectRef,
};
use crate::rules::kw2xx::scheduling::tail_after;
use crate::rules::kw3xx::common::{account_id, join_names, node_of, push_unique, registered_after};
use crate::rules::text::capitalised;
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW304",
    slug: "node-unauthorized",
    title: "The API server refuses the node's kubelet",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The kubelet on the new instance reaches the API server but is refused: it cannot register its
Node, so the NodeClaim never gets past `Registered=Unknown` (KW303) and Karpenter replaces it
after 15 minutes, again and again.

Signals (kubelet journal): `Unable to register node with API server` with `err="Unauthorized"`,
`Failed to contact API server when waiting for CSINode publishing: Unauthorized`, reflector
errors such as `failed to list *v1.CSIDriver: Unauthorized`, other kubelet errors whose last
cause is `Unauthorized` (`Failed to initialize CSINode: ...; caused by: Unauthorized`), and `node "<a>" is not allowed to
modify node "<b>"` (the kubelet authenticates as a different node name than the one it
registers).

## Why it happens
EKS maps the node's IAM role to the `system:node:<name>` identity through an access entry of
type `EC2_LINUX` (or `EC2_WINDOWS`) or an `aws-auth` `mapRoles` entry. The Karpenter node role
(the EC2NodeClass `spec.role`) has neither, so its credentials are anonymous (`Unauthorized`);
or the role is mapped without the node identity, so the API server knows it only as the role
session (`is forbidden: User "arn:aws:sts::<account>:assumed-role/<role>/<instance-id>"`: an
access entry of type `STANDARD`, whose type cannot be changed, or an `aws-auth` entry with another
username or without `system:nodes`); or the mapping's username does not match the node's
hostname (`is not allowed to modify node`).

## How to fix
Create the access entry (`aws eks create-access-entry --cluster-name <cluster> --principal-arn
<node role arn> --type EC2_LINUX`), or add the role to `aws-auth` `mapRoles` with groups
`system:bootstrappers` and `system:nodes` and username `system:node:{{EC2PrivateDNSName}}`. Check
with `kubectl get configmaps -n kube-system aws-auth -o yaml` and `aws eks list-access-entries`.
"#,
};

const SIGNALS: &[&str] = &[
    "unable to register node",
    "waiting for csinode publishing: unauthorized",
    "is not allowed to modify node",
    "failed to list *v1.",
    "can only access node lease with the same name",
    "err=\"unauthorized\"",
];

fn is_signal(m: &Message) -> bool {
    let text = m.text.as_str();
    register_refused(text)
        || contains_ignore_ascii_case(text, "waiting for CSINode publishing: Unauthorized")
        || contains_ignore_ascii_case(text, "is not allowed to modify node")
        || contains_ignore_ascii_case(text, "can only access node lease with the same name")
        || list_unauthorized(text)
        || (from_kubelet(m)
            && (contains_ignore_ascii_case(text, "err=\"Unauthorized\"") || refused_at_end(text)))
}

/// A kubelet error whose final cause is the API server's `Unauthorized`: the klog text
/// `...: Unauthorized` or `...; caused by: Unauthorized` (`Failed to initialize CSINode: error
/// updating CSINode annotation: ...; caused by: Unauthorized`).
fn refused_at_end(text: &str) -> bool {
    let t = text.trim_end_matches(['"', '\\', ' ', '.']);
    let n = t.len().saturating_sub("Unauthorized".len());
    t.get(n..)
        .is_some_and(|w| w.eq_ignore_ascii_case("Unauthorized"))
        && t.get(..n).is_some_and(|head| head.ends_with(": "))
}

/// `Unable to register node with API server" err="Unauthorized"` (klog structured, Kubernetes
/// 1.20+) and `Unable to register node "<name>" with API server: Unauthorized` (before), refused
/// for the node's identity: Unauthorized, an anonymous or group-less user, or another node's name.
/// Not the NodeRestriction refusal of restricted labels (`is not allowed to modify labels`).
fn register_refused(text: &str) -> bool {
    let Some(at) = find_ignore_ascii_case(text, "Unable to register node") else {
        return false;
    };
    let rest = &text[at..];
    contains_ignore_ascii_case(rest, "with API server")
        && (contains_ignore_ascii_case(rest, "Unauthorized")
            || contains_ignore_ascii_case(rest, "is not allowed to modify node")
            || (contains_ignore_ascii_case(rest, "forbidden")
                && (contains_ignore_ascii_case(rest, "system:anonymous")
                    || contains_ignore_ascii_case(rest, "cannot create resource"))))
}

/// A kubelet informer refused: `failed to list *v1.CSIDriver: Unauthorized`, also inside the
/// Kubernetes 1.31+ `"Unhandled Error" err="...: failed to list *v1.Node: Unauthorized"
/// logger="UnhandledError"`.
fn list_unauthorized(text: &str) -> bool {
    let mut rest = text;
    while let Some(at) = find_ignore_ascii_case(rest, "failed to list *v1.") {
        rest = &rest[at + "failed to list *v1.".len()..];
        if let Some((_, after)) = rest.split_once(": ") {
            let after = after.trim_start();
            if after
                .get(..12)
                .is_some_and(|w| w.eq_ignore_ascii_case("Unauthorized"))
                && after[12..]
                    .chars()
                    .next()
                    .is_none_or(|c| c == '"' || c == '\\' || c.is_whitespace())
            {
                return true;
            }
        }
    }
    false
}

/// A kubelet line: its `err="Unauthorized"` is the API server refusing the node's credentials
/// (the lease controller's `Failed to ensure lease exists, will retry`, node status updates);
/// not containerd's or another unit's.
fn from_kubelet(m: &Message) -> bool {
    m.origin == MessageOrigin::Kubelet
        && m.component
            .as_deref()
            .is_some_and(|c| c.eq_ignore_ascii_case("kubelet"))
}

/// `Unable to register node "<name>" with API server` (before Kubernetes 1.20) names the node.
fn registered_name(text: &str) -> Option<String> {
    let tail = tail_after(text, "Unable to register node \"")?;
    let name: String = tail.chars().take_while(|c| *c != '"').collect();
    (!name.is_empty()).then_some(name)
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    // A refusal the kubelet got over (it registered on a later try: the access entry or the
    // aws-auth edit took effect) is boot history; one after the registration still counts.
    let hits: Vec<&Message> = facts
        .messages
        .iter()
        .filter(|m| is_signal(m) && !registered_after(facts, m))
        .collect();
    if hits.is_empty() {
        return Vec::new();
    }
    // `Error getting node ... not found` corroborates: the Node was never created.
    let corroborating: Vec<&Message> = facts
        .messages
        .iter()
        .filter(|m| {
            contains_ignore_ascii_case(&m.text, "Error getting node")
                && contains_ignore_ascii_case(&m.text, "not found")
        })
        .collect();
    let mut nodes: Vec<String> = Vec::new();
    for m in &hits {
        if let Some(n) = node_of(facts, m).or_else(|| registered_name(&m.text)) {
            push_unique(&mut nodes, n);
        }
    }
    let mismatch = hits.iter().find_map(|m| identity_mismatch(&m.text));
    // Refused (forbidden) as the IAM role session itself: the credentials authenticate, but the
    // mapping does not turn them into a node identity.
    let refused_role = hits.iter().find_map(|m| forbidden_role_session(&m.text));
    let role = node_role(facts).or_else(|| refused_role.as_ref().map(|r| r.arn()));
    let account = account_id(facts);
    let role_arn = match (&role, &account) {
        (Some(r), _) if r.starts_with("arn:") => r.clone(),
        (Some(r), Some(a)) => format!("arn:aws:iam::{a}:role/{r}"),
        (Some(r), None) => format!("arn:aws:iam::<account-id>:role/{r}"),
        (None, _) => format!(
            "arn:aws:iam::{}:role/<KarpenterNodeRole>",
            account.as_deref().unwrap_or("<account-id>")
        ),
    };
    let cluster = crate::rules::text::cluster_name_or_placeholder(facts);
    let node_list = if nodes.is_empty() {
        "the new node".to_string()
    } else {
        format!("node {}", join_names(&nodes))
    };
    // The kubelet registered earlier in this paste and is refused since: the mapping was
    // removed or changed after the join, so the Node stops reporting and goes NotReady.
    let registered_before = hits.iter().any(|m| {
        facts.messages.iter().any(|earlier| {
            earlier.evidence.source == m.evidence.source
                && earlier.evidence.line < m.evidence.line
                && contains_ignore_ascii_case(&earlier.text, "Successfully registered node")
        })
    });
    let consequence = if registered_before {
        "so the node, registered earlier in this log, fails its status updates and lease renewals and goes NotReady"
    } else {
        "so the node never registers"
    };
    let mut summary = match (&mismatch, &refused_role) {
        (Some((identity, node)), _) => format!(
            "The kubelet of {node_list} authenticates as node \"{identity}\" but registers Node \"{node}\": the API server's node authorizer refuses it (is not allowed to modify node). The node role's username mapping does not match the node's hostname."
        ),
        (None, Some(r)) => format!(
            "The API server answers forbidden to the kubelet of {node_list}: it knows the credentials as the IAM role {} (User \"{}\"), not as a node. The role is mapped, but without the node identity: an EKS access entry of type STANDARD instead of EC2_LINUX, or an aws-auth mapRoles entry whose username is not system:node:{{{{EC2PrivateDNSName}}}} (or without the system:nodes group). {}.",
            r.role,
            r.user,
            capitalised(consequence)
        ),
        (None, None) => format!(
            "The API server answers Unauthorized to the kubelet of {node_list}: the node's IAM role{} is not mapped to a Kubernetes identity (no EKS access entry, no aws-auth mapRoles entry), {consequence}.",
            role.as_deref().map(|r| format!(" {r}")).unwrap_or_default()
        ),
    };
    if !corroborating.is_empty() && mismatch.is_none() {
        summary.push_str(" The kubelet also reports its Node as not found.");
    }
    let mut evidence_extra = Vec::new();
    if let Some(auth) = &facts.aws_auth {
        let entry = role.as_deref().and_then(|r| {
            auth.map_roles
                .iter()
                .find(|m| m.role_arn == r || m.role_arn.ends_with(&format!("/{r}")))
        });
        match (entry, &role) {
            (None, Some(r)) => summary.push_str(&format!(
                " The aws-auth ConfigMap in the input maps {} role{} but not {r}.",
                auth.map_roles.len(),
                if auth.map_roles.len() == 1 { "" } else { "s" }
            )),
            (Some(e), _) => {
                let groups_ok = ["system:bootstrappers", "system:nodes"]
                    .iter()
                    .all(|g| e.groups.iter().any(|x| x == g));
                let username = e.username.as_deref().unwrap_or("");
                summary.push_str(&format!(
                    " aws-auth maps the role to username \"{username}\" with groups [{}]{}.",
                    e.groups.join(", "),
                    if groups_ok {
                        ""
                    } else {
                        ": system:bootstrappers and system:nodes are both needed"
                    }
                ));
                evidence_extra.extend(e.evidence.clone());
            }
            (None, None) => {}
        }
    }
    let mut steps = Vec::new();
    if let Some((identity, node)) = &mismatch {
        steps.push(Remediation::yaml(
            format!(
                "Make the identity and the node name agree. The kubelet registers as \"{node}\" but its credentials map to \"system:node:{identity}\": map the role with the username template that yields the hostname the node uses (`{{{{EC2PrivateDNSName}}}}` for IP-based names like ip-10-0-0-1.<region>.compute.internal; an access entry of type EC2_LINUX does this), in `kubectl edit configmap aws-auth -n kube-system`:"
            ),
            map_roles_yaml(&role_arn),
        ));
        steps.push(Remediation::command(
            "Check which hostname type the node's subnet gives instances (ip-name vs resource-name); it must match the mapping:",
            "aws ec2 describe-subnets --subnet-ids <subnet-id> --query 'Subnets[].PrivateDnsNameOptionsOnLaunch'",
        ));
    } else if refused_role.is_some() {
        steps.push(Remediation::command(
            "See the type of the role's access entry (an entry's type cannot be changed: replace a STANDARD one):",
            format!(
                "aws eks describe-access-entry --cluster-name {cluster} --principal-arn {role_arn} --query accessEntry.type"
            ),
        ));
        steps.push(Remediation::command(
            "If it is STANDARD, recreate it as EC2_LINUX (clusters with authentication mode API or API_AND_CONFIG_MAP):",
            format!(
                "aws eks delete-access-entry --cluster-name {cluster} --principal-arn {role_arn} && aws eks create-access-entry --cluster-name {cluster} --principal-arn {role_arn} --type EC2_LINUX"
            ),
        ));
        steps.push(Remediation::yaml(
            "Or, with the aws-auth ConfigMap, give the role's `mapRoles` entry the node username and groups (`kubectl edit configmap aws-auth -n kube-system`):",
            map_roles_yaml(&role_arn),
        ));
    } else {
        steps.push(Remediation::command(
            "Give the node role an EKS access entry (clusters with authentication mode API or API_AND_CONFIG_MAP):",
            format!(
                "aws eks create-access-entry --cluster-name {cluster} --principal-arn {role_arn} --type EC2_LINUX"
            ),
        ));
        steps.push(Remediation::yaml(
            "Or, with the aws-auth ConfigMap (authentication mode CONFIG_MAP), add the role to `mapRoles` (`kubectl edit configmap aws-auth -n kube-system`):",
            map_roles_yaml(&role_arn),
        ));
    }
    steps.push(Remediation::command(
        "Check what the cluster maps today:",
        format!(
            "kubectl get configmaps -n kube-system aws-auth -o yaml; aws eks list-access-entries --cluster-name {cluster}; aws eks describe-cluster --name {cluster} --query cluster.accessConfig.authenticationMode"
        ),
    ));
    let object = nodes.first().map(|n| ObjectRef::new("Node", None, n));
    vec![Diagnosis::new(&META, summary)
        .with_object(object.as_ref())
        .with_messages(hits.iter().copied())
        .with_messages(corroborating.iter().copied())
        .with_evidence(evidence_extra)
        .with_related(&["KW303"])
        .with_remediation(steps)]
}

/// `node "i-0ed..." is not allowed to modify node "ip-10-..."` -> (identity, node).
fn identity_mismatch(text: &str) -> Option<(String, String)> {
    let clean = text.replace("\\\"", "\"");
    let tail = tail_after(&clean, "is not allowed to modify node \"")?;
    let node: String = tail.chars().take_while(|c| *c != '"').collect();
    let at = clean.find(" is not allowed to modify node")?;
    let before = clean[..at].trim_end_matches('"');
    let identity = before.rsplit('"').next()?.to_string();
    (!identity.is_empty() && !node.is_empty()).then_some((identity, node))
}

/// The IAM role session a refusal names: `is forbidden: User
/// "arn:aws:sts::<account>:assumed-role/<role>/<session>" cannot ...`.
struct RoleSession {
    /// The whole user name, as the API server wrote it.
    user: String,
    partition: String,
    account: String,
    role: String,
}

impl RoleSession {
    /// The role's ARN. An assumed-role ARN drops the role's path: a role under a path needs it
    /// put back by hand.
    fn arn(&self) -> String {
        format!(
            "arn:{}:iam::{}:role/{}",
            self.partition, self.account, self.role
        )
    }
}

fn forbidden_role_session(text: &str) -> Option<RoleSession> {
    let clean = text.replace("\\\"", "\"");
    let at = find_ignore_ascii_case(&clean, "forbidden: User \"")?;
    let user: String = clean[at + "forbidden: User \"".len()..]
        .chars()
        .take_while(|c| *c != '"')
        .collect();
    let rest = user.strip_prefix("arn:")?;
    let (partition, rest) = rest.split_once(":sts::")?;
    let (account, rest) = rest.split_once(':')?;
    let rest = rest.strip_prefix("assumed-role/")?;
    let (role, _session) = rest.split_once('/')?;
    let valid = !partition.is_empty()
        && account.len() == 12
        && account.chars().all(|c| c.is_ascii_digit())
        && !role.is_empty();
    valid.then(|| RoleSession {
        user: user.clone(),
        partition: partition.to_string(),
        account: account.to_string(),
        role: role.to_string(),
    })
}

/// The node role: the EC2NodeClass `spec.role` when there is exactly one.
fn node_role(facts: &Facts) -> Option<String> {
    let mut roles: Vec<String> = Vec::new();
    for c in &facts.nodeclasses {
        if let Some(r) = &c.role {
            push_unique(&mut roles, r.clone());
        }
    }
    (roles.len() == 1).then(|| roles.remove(0))
}

fn map_roles_yaml(role_arn: &str) -> String {
    format!(
        "data:\n  mapRoles: |\n    - groups:\n        - system:bootstrappers\n        - system:nodes\n      rolearn: {role_arn}\n      username: system:node:{{{{EC2PrivateDNSName}}}}\n"
    )
}

#[cfg(test)]
mod tests {
    use crate::facts::{Meta, NodeClass};
    use crate::rules;
    use crate::testing::{check_only, ids};

    #[test]
    fn every_form() {
        for text in [
            "Unable to register node with API server\" err=\"Unauthorized\" node=\"ip-192-168-67-130.ec2.internal\"",
            "Failed to contact API server when waiting for CSINode publishing: Unauthorized",
            "Jan 27 21:24:02 ip-172-31-9-51.eu-west-1.compute.internal kubelet[3130]: W0127 21:24:02.311489    3130 reflector.go:569] k8s.io/client-go/informers/factory.go:160: failed to list *v1.CSIDriver: Unauthorized",
            r#"Dec 10 12:37:43 ip-10-20-30-40.ec2.internal kubelet[2239]: E1210 12:37:43.000051    2239 kubelet_node_status.go:96] "Unable to register node with API server" err="nodes \"ip-10-20-30-40.ec2.internal\" is forbidden: node \"i-0ed67a34f87240f5c\" is not allowed to modify node \"ip-10-20-30-40.ec2.internal\"" node="ip-10-20-30-40.ec2.internal""#,
            // Before Kubernetes 1.20.
            r#"E0914 09:02:11.162991    4021 kubelet_node_status.go:92] Unable to register node "ip-1.ec2.internal" with API server: Unauthorized"#,
            // Kubernetes 1.31+ reflector errors, and the lease controller.
            r#"E1120 14:40:02.901102    2214 reflector.go:158] "Unhandled Error" err="k8s.io/client-go/informers/factory.go:160: Failed to watch *v1.CSIDriver: failed to list *v1.CSIDriver: Unauthorized" logger="UnhandledError""#,
            r#"E1120 14:40:03.017730    2214 controller.go:145] "Failed to ensure lease exists, will retry" err="Unauthorized" interval="400ms""#,
            // An anonymous user: no mapping at all.
            r#""Unable to register node with API server" err="nodes is forbidden: User \"system:anonymous\" cannot create resource \"nodes\" in API group \"\" at the cluster scope""#,
        ] {
            assert_eq!(ids(&check_only("KW304", text)), ["KW304"], "{text}");
        }
    }

    #[test]
    fn forbidden_as_the_role_session_names_the_role() {
        let d = &check_only(
            "KW304",
            r#"E1206 20:44:12.118901    2011 kubelet_node_status.go:95] "Unable to register node with API server" err="nodes is forbidden: User \"arn:aws:sts::111122223333:assumed-role/KarpenterNodeRole-prod/i-0b1c2d3e4f5061728\" cannot create resource \"nodes\" in API group \"\" at the cluster scope" node="ip-10-0-81-9.ec2.internal""#,
        )
        .diagnoses[0];
        assert!(d.summary.contains("STANDARD"), "{}", d.summary);
        assert!(d.remediation.iter().any(|r| r.command.as_deref().is_some_and(|c| c
            .contains("--principal-arn arn:aws:iam::111122223333:role/KarpenterNodeRole-prod --type EC2_LINUX"))));
        // Not a role session: the generic advice.
        assert!(super::forbidden_role_session(
            r#"forbidden: User "system:anonymous" cannot create"#
        )
        .is_none());
        assert!(super::forbidden_role_session(
            r#"forbidden: User "arn:aws:sts::12:assumed-role/x/y" cannot"#
        )
        .is_none());
    }

    #[test]
    fn names_node_and_mismatch() {
        let report = check_only(
            "KW304",
            r#"Dec 10 12:37:43 ip-10-20-30-40.ec2.internal kubelet[2239]: E1210 12:37:43.000051    2239 kubelet_node_status.go:96] "Unable to register node with API server" err="nodes \"ip-10-20-30-40.ec2.internal\" is forbidden: node \"i-0ed67a34f87240f5c\" is not allowed to modify node \"ip-10-20-30-40.ec2.internal\"" node="ip-10-20-30-40.ec2.internal""#,
        );
        let d = &report.diagnoses[0];
        assert!(d.summary.contains("i-0ed67a34f87240f5c"), "{}", d.summary);
        assert!(
            d.summary.contains("node ip-10-20-30-40.ec2.internal"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn fills_in_the_node_role() {
        let mut facts = crate::ingest::ingest(&[crate::Document::new(
            "kubelet.log",
            "Unable to register node with API server\" err=\"Unauthorized\" node=\"ip-1.ec2.internal\"\nrolearn: arn:aws:iam::111122223333:role/eks-admin",
        )]);
        facts.nodeclasses.push(NodeClass {
            meta: Meta {
                name: "default".into(),
                ..Meta::default()
            },
            role: Some("KarpenterNodeRole-prod".into()),
            ..NodeClass::default()
        });
        let d = (rules::find("KW304").unwrap().check)(&facts);
        let yaml = d[0].remediation[1].yaml.as_deref().unwrap();
        assert!(
            yaml.contains("rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-prod"),
            "{yaml}"
        );
        assert!(
            yaml.contains("username: system:node:{{EC2PrivateDNSName}}"),
            "{yaml}"
        );
        assert!(d[0].remediation[0]
            .command
            .as_deref()
            .unwrap()
            .contains("--principal-arn arn:aws:iam::111122223333:role/KarpenterNodeRole-prod --type EC2_LINUX"));
    }

    #[test]
    fn says_what_aws_auth_maps() {
        use crate::facts::{AwsAuth, MapRole};
        let mut facts = crate::ingest::ingest(&[crate::Document::new(
            "kubelet.log",
            "Unable to register node with API server\" err=\"Unauthorized\" node=\"ip-1.ec2.internal\"",
        )]);
        facts.nodeclasses.push(NodeClass {
            meta: Meta {
                name: "default".into(),
                ..Meta::default()
            },
            role: Some("KarpenterNodeRole-prod".into()),
            ..NodeClass::default()
        });
        facts.aws_auth = Some(AwsAuth {
            meta: Meta::default(),
            map_roles: vec![MapRole {
                role_arn: "arn:aws:iam::111122223333:role/eks-managed-ng".into(),
                username: Some("system:node:{{EC2PrivateDNSName}}".into()),
                groups: vec!["system:bootstrappers".into(), "system:nodes".into()],
                evidence: None,
            }],
        });
        let d = (rules::find("KW304").unwrap().check)(&facts);
        assert!(
            d[0].summary
                .contains("maps 1 role but not KarpenterNodeRole-prod"),
            "{}",
            d[0].summary
        );
    }

    #[test]
    fn near_misses() {
        for text in [
            "UnauthorizedOperation: You are not authorized to perform this operation.",
            "\"command failed\" err=\"failed to run Kubelet: running with swap on is not supported, please disable swap!...\"",
            "Attempting to register node\" node=\"ip-192-168-67-130.ec2.internal\"",
            "failed to list *v1.Pod: Get \"https://10.0.0.1:443/api/v1/pods\": dial tcp 10.0.0.1:443: i/o timeout",
            // NodeRestriction refusing restricted labels: not the identity mapping.
            r#"E0602 11:20:31.144731    3310 kubelet_node_status.go:94] "Unable to register node with API server" err="nodes \"ip-1\" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/worker" node="ip-1""#,
            // containerd (not the kubelet) and a registry's 401.
            r#"Jul 09 16:01:12 ip-10-2-9-77.ec2.internal containerd[1890]: time="2025-07-09T16:01:12.439Z" level=error msg="PullImage failed" err="Unauthorized""#,
            "failed to list *v1.Node: UnauthorizedOperation",
        ] {
            assert!(ids(&check_only("KW304", text)).is_empty(), "{text}");
        }
    }
}
