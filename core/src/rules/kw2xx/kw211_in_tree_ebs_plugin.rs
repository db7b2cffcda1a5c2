//! KW211 in-tree-ebs-plugin.

use crate::facts::{contains_ignore_ascii_case, Facts, Message, StorageClass};
use crate::rules::kw2xx::scheduling::{record_of, tail_after};
use crate::rules::text::capitalised;
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW211",
    slug: "in-tree-ebs-plugin",
    title: "Volumes use the in-tree EBS plugin, whose attach limits Karpenter cannot compute",
    severity: Severity::Warning,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
A StorageClass or PersistentVolume uses the in-tree `kubernetes.io/aws-ebs` plugin (or an
`awsElasticBlockStore:` volume source) instead of the EBS CSI driver. Karpenter cannot discover
the volume attach limits of in-tree volumes, so it may pack more volume-carrying pods on a node
than the node can attach, and scale-ups fail.

Signals: `StorageClass .spec.provisioner uses an in-tree storage plugin which is unsupported by
Karpenter ...` and `PersistentVolume source 'AWSElasticBlockStore' uses an in-tree storage plugin
which is unsupported by Karpenter ...` (Karpenter v0.28 to v0.29), a StorageClass with
`provisioner: kubernetes.io/aws-ebs`, a PersistentVolume with `awsElasticBlockStore:`. Not
this rule: an in-tree class that is not the default and that none of the claims or volumes the
input shows uses (the leftover `gp2` of an older EKS cluster beside the CSI class in use).

## Why it happens
Clusters created before the EBS CSI driver keep the old `gp2` StorageClass (in-tree) and the PVs
made from it. Newer Karpenter translates in-tree names to CSI for counting, but the in-tree plugin
is deprecated and removed from Kubernetes: migrating is the lasting fix.

## How to fix
Install the EBS CSI driver, create a StorageClass with `provisioner: ebs.csi.aws.com`, make it
the default, and move workloads to it (new PVCs; existing data by snapshot and restore, or with
CSI migration enabled). When the input already shows an `ebs.csi.aws.com` StorageClass, the fix
names it (the default one first) rather than creating another.
"#,
};

const SIGNALS: &[&str] = &["uses an in-tree storage plugin which is unsupported by karpenter"];

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let messages: Vec<&Message> = facts
        .messages_containing("uses an in-tree storage plugin which is unsupported by karpenter")
        .collect();
    let mut classes: Vec<&str> = facts
        .storage_classes
        .iter()
        .filter(|sc| sc.provisioner.as_deref() == Some("kubernetes.io/aws-ebs"))
        .map(|sc| sc.meta.name.as_str())
        .collect();
    let mut volumes: Vec<&str> = facts
        .persistent_volumes
        .iter()
        .filter(|pv| pv.in_tree_ebs)
        .map(|pv| pv.meta.name.as_str())
        .collect();
    // The same object pasted twice (a table row, then its YAML) is named once.
    for names in [&mut classes, &mut volumes] {
        let mut seen: Vec<&str> = Vec::new();
        names.retain(|n| {
            let new = !seen.contains(n);
            seen.push(n);
            new
        });
    }
    if messages.is_empty() && classes.is_empty() && volumes.is_empty() {
        return Vec::new();
    }
    // An in-tree class that is not the default and that no claim or volume of the input uses,
    // while the input shows which classes they do use: the leftover `gp2` of an older EKS
    // cluster, listed beside the CSI class the workloads are on. Nothing scales up with it.
    if messages.is_empty() && volumes.is_empty() {
        let used: Vec<&str> = facts
            .pvcs
            .iter()
            .filter_map(|c| c.storage_class.as_deref())
            .chain(
                facts
                    .persistent_volumes
                    .iter()
                    .filter_map(|v| v.storage_class.as_deref()),
            )
            .collect();
        let unused_leftover = |name: &str| {
            !used.contains(&name)
                && !facts
                    .storage_classes
                    .iter()
                    .any(|sc| sc.meta.name == name && sc.is_default)
        };
        if !used.is_empty() && classes.iter().all(|c| unused_leftover(c)) {
            return Vec::new();
        }
    }
    // The log lines name the objects in their fields (`storage-class`, `persistent-volume`).
    let mut named_classes: Vec<String> = classes.iter().map(|s| s.to_string()).collect();
    let mut named_volumes: Vec<String> = volumes.iter().map(|s| s.to_string()).collect();
    for m in &messages {
        if let Some(r) = record_of(facts, m) {
            // v0.x fields are kebab-case strings, v1 ones object references (`{"name":"gp2"}`).
            for key in ["storage-class", "StorageClass"] {
                if let Some(sc) = r.field_name(key) {
                    push_unique(&mut named_classes, sc);
                }
            }
            for key in ["persistent-volume", "PersistentVolume"] {
                if let Some(pv) = r.field_name(key) {
                    push_unique(&mut named_volumes, pv);
                }
            }
        }
        for (key, list) in [
            ("\"storage-class\": \"", &mut named_classes),
            ("\"persistent-volume\": \"", &mut named_volumes),
        ] {
            if let Some(v) =
                tail_after(&m.text, key).and_then(|t| t.split('"').next().map(str::to_string))
            {
                push_unique(list, v);
            }
        }
    }
    let mut parts = Vec::new();
    if !named_classes.is_empty() {
        parts.push(format!("StorageClass {}", named_classes.join(", ")));
    }
    if !named_volumes.is_empty() {
        parts.push(format!("PersistentVolume {}", named_volumes.join(", ")));
    }
    let pv_text = messages
        .iter()
        .any(|m| contains_ignore_ascii_case(&m.text, "AWSElasticBlockStore"));
    let sc_text = messages
        .iter()
        .any(|m| contains_ignore_ascii_case(&m.text, "StorageClass .spec.provisioner"));
    if parts.is_empty() {
        if sc_text {
            parts.push("a StorageClass".to_string());
        }
        if pv_text {
            parts.push("a PersistentVolume".to_string());
        }
    }
    if parts.is_empty() {
        // Karpenter's text without either known lead-in: it still names the in-tree plugin.
        parts.push("a StorageClass or PersistentVolume".to_string());
    }
    let summary = capitalised(&format!(
        "{} use{} the in-tree EBS plugin (kubernetes.io/aws-ebs): Karpenter cannot discover the attach limits of these volumes, so scale-ups may put more volumes on a node than it can attach.",
        parts.join(" and "),
        if parts.len() == 1 && !parts[0].contains(", ") { "s" } else { "" }
    ));
    // Unnamed, the in-tree class is EKS's pre-CSI default `gp2`, but only a guess: say so.
    let (sc, which) = match named_classes.first() {
        Some(sc) => (sc.clone(), sc.clone()),
        None => (
            "gp2".to_string(),
            "the in-tree class (on EKS usually gp2; `kubectl get storageclass` shows each class's provisioner)".to_string(),
        ),
    };
    // A CSI class the input already shows is the one to move to: the default one first.
    let mut csi: Vec<&StorageClass> = facts
        .storage_classes
        .iter()
        .filter(|c| c.provisioner.as_deref() == Some("ebs.csi.aws.com"))
        .collect();
    csi.sort_by_key(|c| !c.is_default);
    let unset_default = |target: &str| {
        Remediation::command(
            format!("Stop {which} being the default, then move workloads to {target} (new PVCs; existing data by snapshot and restore):"),
            format!("kubectl patch storageclass {sc} -p '{{\"metadata\":{{\"annotations\":{{\"storageclass.kubernetes.io/is-default-class\":\"false\"}}}}}}'"),
        )
    };
    let steps = match csi.first() {
        Some(existing) => {
            let name = &existing.meta.name;
            let mut steps = Vec::new();
            let in_tree_default = facts.storage_classes.iter().any(|c| {
                c.is_default && c.provisioner.as_deref() == Some("kubernetes.io/aws-ebs")
            });
            if !existing.is_default || in_tree_default {
                steps.push(unset_default(name));
            }
            if existing.is_default {
                steps.push(Remediation::text(format!(
                    "StorageClass {name} already uses the EBS CSI driver (ebs.csi.aws.com) and is the default: move the workloads still on {which} to it (`storageClassName: {name}` on new PVCs; existing data by snapshot and restore)."
                )));
            } else {
                steps.push(Remediation::command(
                    format!("StorageClass {name} already uses the EBS CSI driver (ebs.csi.aws.com): make it the default instead, so new PVCs get CSI volumes:"),
                    format!("kubectl patch storageclass {name} -p '{{\"metadata\":{{\"annotations\":{{\"storageclass.kubernetes.io/is-default-class\":\"true\"}}}}}}'"),
                ));
            }
            steps
        }
        None => vec![
            Remediation::yaml(
                "Create a CSI StorageClass (the EBS CSI driver must be installed) and make it the default:",
                "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: gp3\n  annotations:\n    storageclass.kubernetes.io/is-default-class: \"true\"\nprovisioner: ebs.csi.aws.com\nvolumeBindingMode: WaitForFirstConsumer\nparameters:\n  type: gp3\n",
            ),
            unset_default("the new class"),
        ],
    };
    let mut d = Diagnosis::new(&META, summary)
        .with_messages(messages.iter().copied())
        .with_remediation(steps);
    let evidence: Vec<_> = facts
        .storage_classes
        .iter()
        .filter(|s| s.provisioner.as_deref() == Some("kubernetes.io/aws-ebs"))
        .filter_map(|s| s.meta.evidence.clone())
        .chain(
            facts
                .persistent_volumes
                .iter()
                .filter(|pv| pv.in_tree_ebs)
                .filter_map(|pv| pv.meta.evidence.clone()),
        )
        .collect();
    d = d.with_evidence(evidence);
    vec![d]
}

fn push_unique(list: &mut Vec<String>, v: String) {
    if !v.is_empty() && !list.contains(&v) {
        list.push(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{PersistentVolume, StorageClass};
    use crate::testing::{check_only, ids};

    #[test]
    fn both_log_forms() {
        for text in [
            "2023-04-05T23:56:53.464Z\tERROR\tcontroller.node_state\tStorageClass .spec.provisioner uses an in-tree storage plugin which is unsupported by Karpenter and is deprecated by Kubernetes. Scale-ups may fail because Karpenter will not discover driver limits.\t{\"commit\": \"b2af562\", \"storage-class\": \"gp2\", \"provisioner\": \"kubernetes.io/aws-ebs\"}",
            "PersistentVolume source 'AWSElasticBlockStore' uses an in-tree storage plugin which is unsupported by Karpenter and is deprecated by Kubernetes.",
        ] {
            assert_eq!(ids(&check_only("KW211", text)), ["KW211"], "{text}");
        }
        let report = check_only("KW211", "StorageClass .spec.provisioner uses an in-tree storage plugin which is unsupported by Karpenter\t{\"storage-class\": \"gp2\"}");
        assert!(
            report.diagnoses[0]
                .summary
                .starts_with("StorageClass gp2 uses"),
            "{}",
            report.diagnoses[0].summary
        );
    }

    #[test]
    fn an_existing_csi_class_is_named_instead_of_created() {
        let table = "$ kubectl get storageclass\nNAME            PROVISIONER             RECLAIMPOLICY   VOLUMEBINDINGMODE      ALLOWVOLUMEEXPANSION   AGE\ngp2 (default)   kubernetes.io/aws-ebs   Delete          WaitForFirstConsumer   false                  2y\nfast-ssd        ebs.csi.aws.com         Delete          WaitForFirstConsumer   true                   97d\n";
        let d = &check_only("KW211", table).diagnoses[0];
        let steps = crate::testing::remediation_text(d);
        assert!(!steps.contains("Create a CSI StorageClass"), "{steps}");
        assert!(
            steps.contains("kubectl patch storageclass fast-ssd"),
            "{steps}"
        );
        assert!(steps.contains("move workloads to fast-ssd"), "{steps}");
        // Without a CSI class in the input, one is created.
        let only_in_tree = table.lines().take(3).collect::<Vec<_>>().join("\n");
        let d = &check_only("KW211", &only_in_tree).diagnoses[0];
        assert!(crate::testing::remediation_text(d).contains("Create a CSI StorageClass"));
    }

    #[test]
    fn summary_always_has_a_subject() {
        // v1 logs name the StorageClass in an object-reference field; a Karpenter error wrapped
        // by another message carries neither known lead-in.
        let report = check_only(
            "KW211",
            r#"{"level":"ERROR","message":"StorageClass .spec.provisioner uses an in-tree storage plugin which is unsupported by Karpenter and is deprecated by Kubernetes.","StorageClass":{"name":"standard"},"provisioner":"kubernetes.io/aws-ebs"}"#,
        );
        assert!(
            report.diagnoses[0]
                .summary
                .starts_with("StorageClass standard uses"),
            "{}",
            report.diagnoses[0].summary
        );
        let report = check_only(
            "KW211",
            r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"mysql-0","namespace":"db"},"error":"tracking volume usage, gp2 uses an in-tree storage plugin which is unsupported by Karpenter and is deprecated by Kubernetes"}"#,
        );
        let s = &report.diagnoses[0].summary;
        assert!(
            s.starts_with("A StorageClass or PersistentVolume uses"),
            "{s}"
        );
        let report = check_only("KW211", "StorageClass .spec.provisioner uses an in-tree storage plugin which is unsupported by Karpenter");
        assert!(
            report.diagnoses[0]
                .summary
                .starts_with("A StorageClass uses"),
            "{}",
            report.diagnoses[0].summary
        );
    }

    #[test]
    fn from_objects() {
        let mut facts = Facts::default();
        let mut sc = StorageClass::default();
        sc.meta.name = "gp2".into();
        sc.provisioner = Some("kubernetes.io/aws-ebs".into());
        facts.storage_classes.push(sc);
        let mut pv = PersistentVolume::default();
        pv.meta.name = "pvc-1".into();
        pv.in_tree_ebs = true;
        facts.persistent_volumes.push(pv);
        let d = &check(&facts)[0];
        assert!(
            d.summary
                .contains("StorageClass gp2 and PersistentVolume pvc-1"),
            "{}",
            d.summary
        );
    }

    /// The leftover in-tree `gp2` beside the CSI default, with the claims of the input all on
    /// the CSI class, is not a problem; the same class as the default, or used by a claim, is.
    #[test]
    fn an_unused_leftover_in_tree_class_is_not_kw211() {
        let text = |gp2: &str, claim_class: &str| {
            format!(
                "$ kubectl get sc\n\
                 NAME            PROVISIONER             RECLAIMPOLICY   VOLUMEBINDINGMODE      ALLOWVOLUMEEXPANSION   AGE\n\
                 {gp2}   kubernetes.io/aws-ebs   Delete          WaitForFirstConsumer   false                  412d\n\
                 gp3             ebs.csi.aws.com         Delete          WaitForFirstConsumer   true                   98d\n\
                 $ kubectl get pvc -n monitoring\n\
                 NAME                             STATUS    VOLUME                                     CAPACITY   ACCESS MODES   STORAGECLASS   AGE\n\
                 prometheus-db-prometheus-k8s-0   Bound     pvc-0b6e2f4a-1c3d-4e5f-8a9b-0c1d2e3f4a5b   50Gi       RWO            {claim_class}            14m\n"
            )
        };
        assert!(ids(&check_only("KW211", &text("gp2          ", "gp3"))).is_empty());
        assert_eq!(
            ids(&check_only("KW211", &text("gp2 (default)", "gp3"))),
            ["KW211"]
        );
        assert_eq!(
            ids(&check_only("KW211", &text("gp2          ", "gp2"))),
            ["KW211"]
        );
    }

    #[test]
    fn csi_is_not_in_tree() {
        let mut facts = Facts::default();
        let mut sc = StorageClass::default();
        sc.meta.name = "gp3".into();
        sc.provisioner = Some("ebs.csi.aws.com".into());
        facts.storage_classes.push(sc);
        assert!(check(&facts).is_empty());
        let text = "checking volume usage, would exceed volume limit (provisioner=ebs.csi.aws.com, volume-count=26, volume-limit=25)";
        assert!(ids(&check_only("KW211", text)).is_empty());
    }
}
