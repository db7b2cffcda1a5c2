//! The Karpenter version the input reveals, for advice that changed between releases
//! (KW402's duration value, KW406's policy names, KW502's validation cache, KW504's setting
//! names).

use crate::facts::Facts;

/// Karpenter's v1alpha5 Machine (v0.28-v0.31) as the kubectl resource of a printed command. A
/// bare `machine(s)` may name Cluster API's `machines.cluster.x-k8s.io` on a cluster that has
/// both.
pub const MACHINES_RESOURCE: &str = "machines.karpenter.sh";

/// `(major, minor, patch)` of `facts.karpenter_version` (`1.7.2`, `v0.37.0`, `1.5`).
pub fn karpenter_version(facts: &Facts) -> Option<(u64, u64, u64)> {
    parse(facts.karpenter_version.as_deref()?)
}

/// Whether the input's Karpenter is at least `major.minor`; `None` when the version is unknown.
pub fn at_least(facts: &Facts, major: u64, minor: u64) -> Option<bool> {
    karpenter_version(facts).map(|(ma, mi, _)| (ma, mi) >= (major, minor))
}

/// `v1.7.2` as written for a sentence, when known.
pub fn version_label(facts: &Facts) -> Option<String> {
    karpenter_version(facts).map(|(a, b, c)| format!("v{a}.{b}.{c}"))
}

/// `(major, minor, patch)` of a version as written (`1.7.2`, `v0.37.0`, `1.5`).
pub fn parse(raw: &str) -> Option<(u64, u64, u64)> {
    let core = raw.trim().trim_start_matches(['v', 'V']);
    let core = core.split(['-', '+', ' ']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>());
    let major = parts.next()?.ok()?;
    let minor = parts.next()?.ok()?;
    let patch = parts.next().and_then(Result::ok).unwrap_or(0);
    Some((major, minor, patch))
}

/// Whether the input is from a Karpenter before v0.32, whose API was the v1alpha5 Provisioner
/// and Machine and the v1alpha1 AWSNodeTemplate (`kubectl get provisioners`, `machines`,
/// `awsnodetemplates`) rather than NodePool, NodeClaim and EC2NodeClass. A known version
/// decides; otherwise the input must show the old API (those objects, their kinds or API
/// groups in messages, the `karpenter.sh/provisioner-name` label, a log field naming a
/// Provisioner or Machine) and nothing of the new one.
pub fn before_v0_32(facts: &Facts) -> bool {
    era_before_v0_32(facts) == Some(true)
}

/// Logger names of controllers that only Karpenter before v0.32 ran: the v1alpha5 Machine
/// controllers (`controller.machine.lifecycle`, v0.27-v0.31), the pre-v0.27 `provisioning`
/// controller, `deprovisioning` (renamed `disruption` at v0.32), the v1alpha1 AWSNodeTemplate
/// controller, the pre-v0.28 `inflightchecks`, and the cloud provider's `controller.aws.*`
/// loggers (`controller.aws.pricing`). `controller.provisioner` and `controller.pricing` do not
/// count: v0.32 to v0.36 log under those names too, in console format when configured so.
/// The log scanner keeps these loggers' lines (the recent ones, like any signal's) although
/// they are info level: an old log may tell its era only through them.
pub(crate) const PRE_V0_32_LOGGERS: &[&str] = &[
    "controller.machine",
    "controller.provisioning",
    "controller.deprovisioning",
    "controller.awsnodetemplate",
    "controller.inflightchecks",
    "controller.aws",
];

/// Log fields that name the API generation's objects in v0.2x-v0.37 logs: `"provisioner"`/
/// `"machine"` before v0.32, `"nodepool"`/`"nodeclaim"` from v0.32 (console `"nodepool":
/// "default"`, JSON `"nodepool":"default"`). The log scanner keeps the lines that hold them
/// (the recent ones, like any signal's) although they are info level: a log whose only error
/// is undated (a pricing timeout) is dated by its neighbours, so the fix names the setting of
/// its version. v1's `"NodePool":{"name":...}` is left out: nearly every v1 INFO line has it
/// (every one would be copied into the scanner's recent-lines ring, a cost on the hot path),
/// and v1 errors carry their own dating wording (AWS SDK v2's `operation error`).
pub(crate) const DATING_FIELDS: &[&str] = &[
    "\"provisioner\": \"",
    "\"provisioner\":\"",
    "\"machine\": \"",
    "\"machine\":\"",
    "\"nodepool\": \"",
    "\"nodepool\":\"",
    "\"nodeclaim\": \"",
    "\"nodeclaim\":\"",
];

/// Whether a logger is one of `PRE_V0_32_LOGGERS` or a child of one
/// (`controller.machine.lifecycle`), case-insensitively.
fn pre_v0_32_logger(logger: &str) -> bool {
    PRE_V0_32_LOGGERS.iter().any(|l| {
        logger.len() >= l.len()
            && logger.as_bytes()[..l.len()].eq_ignore_ascii_case(l.as_bytes())
            && matches!(logger.as_bytes().get(l.len()), None | Some(b'.'))
    })
}

/// The first logger of the input that only Karpenter before v0.32 had, as written.
pub fn pre_v0_32_logger_in(facts: &Facts) -> Option<&str> {
    facts
        .logs
        .iter()
        .filter_map(|r| r.logger.as_deref())
        .find(|l| pre_v0_32_logger(l))
}

/// `Some(true)` when the input is from a Karpenter before v0.32, `Some(false)` when it is from
/// v0.32 or later, `None` when it does not say: a known version decides, then the API the
/// input shows (see [`before_v0_32`]), then loggers only old releases had (see
/// `PRE_V0_32_LOGGERS`).
pub fn era_before_v0_32(facts: &Facts) -> Option<bool> {
    if let Some(version) = karpenter_version(facts) {
        return Some(version < (0, 32, 0));
    }
    let old_objects = facts.nodepools.iter().any(|p| p.is_provisioner)
        || facts.nodeclasses.iter().any(|c| c.is_aws_node_template)
        || facts.nodeclaims.iter().any(|c| c.is_machine);
    let new_objects = facts.nodepools.iter().any(|p| !p.is_provisioner)
        || facts.nodeclasses.iter().any(|c| !c.is_aws_node_template)
        || facts.nodeclaims.iter().any(|c| !c.is_machine);
    if new_objects {
        return Some(false);
    }
    if old_objects {
        return Some(true);
    }
    let labels = |key: &str| {
        facts.pods.iter().any(|p| p.selects_on(key))
            || facts.nodes.iter().any(|n| n.meta.label(key).is_some())
    };
    let kinds = |names: &[&str]| {
        facts.messages.iter().any(|m| {
            m.object
                .as_ref()
                .is_some_and(|o| names.contains(&o.kind.as_str()))
        })
    };
    let fields = |names: &[&str]| {
        facts.logs.iter().any(|r| {
            names
                .iter()
                .any(|k| r.field_name(k).is_some_and(|v| !v.contains('/')))
        })
    };
    let texts = |needles: &[&str]| facts.messages_containing_any(needles).next().is_some();
    let new = labels("karpenter.sh/nodepool")
        || kinds(&["NodePool", "NodeClaim", "EC2NodeClass"])
        || fields(&["NodePool", "NodeClaim", "nodepool", "nodeclaim"])
        || texts(&[
            "karpenter.sh/v1beta1",
            "karpenter.sh/v1/",
            "karpenter.k8s.aws/v1beta1",
        ]);
    if new {
        return Some(false);
    }
    let old = labels("karpenter.sh/provisioner-name")
        || kinds(&["Provisioner", "Machine", "AWSNodeTemplate"])
        || fields(&["Provisioner", "Machine", "provisioner", "machine"])
        || texts(&[
            "karpenter.sh/v1alpha5",
            "karpenter.k8s.aws/v1alpha1",
            "karpenter.sh/provisioner-name",
            // The scheduler's clause before v0.32; from v0.32 `incompatible with nodepool`.
            "incompatible with provisioner \"",
            // The v0.2x provisioner, which launched nodes without a Machine.
            "launching node, ",
            "could not launch node, ",
        ])
        || pre_v0_32_logger_in(facts).is_some();
    old.then_some(true)
}

/// `Some(true)` when the input is from a Karpenter before v0.28, which had no Machine: its
/// Provisioner launched the instance and created the Node itself, so `kubectl get machines`
/// fails there (the CRD arrived with v0.28). `Some(false)` from v0.28 on: a known version, a
/// Machine in any form, or the v1beta1 API. `None` when the input does not say, which is the
/// usual case for a pre-v0.32 input: only the pre-v0.28 wording proves the older era.
pub fn era_before_v0_28(facts: &Facts) -> Option<bool> {
    if let Some(version) = karpenter_version(facts) {
        return Some(version < (0, 28, 0));
    }
    if era_before_v0_32(facts) == Some(false) {
        return Some(false);
    }
    let machine_kind = facts.nodeclaims.iter().any(|c| c.is_machine)
        || facts.messages.iter().any(|m| {
            m.object
                .as_ref()
                .is_some_and(|o| o.kind.eq_ignore_ascii_case("machine"))
        });
    let machine_field = facts.logs.iter().any(|r| {
        ["machine", "Machine"]
            .iter()
            .any(|k| r.field_name(k).is_some())
            || r.logger.as_deref().is_some_and(|l| {
                l.len() >= "controller.machine".len()
                    && l.as_bytes()[.."controller.machine".len()]
                        .eq_ignore_ascii_case(b"controller.machine")
            })
    });
    // v0.28-v0.31 wording: `launching machine, ...`, `creating machine, ...`, the
    // `MachineLaunched` condition, `deprovisioning machine due to registration ttl`.
    let machine_text = facts
        .messages_containing_any(&[
            "launching machine",
            "creating machine",
            "launched machine",
            "created machine",
            "MachineLaunched",
            "MachineRegistered",
            "MachineInitialized",
            "machine due to",
            "machines.karpenter.sh",
        ])
        .next()
        .is_some();
    if machine_kind || machine_field || machine_text {
        return Some(false);
    }
    // The provisioner of v0.2x and before: `Provisioning failed, launching node, creating cloud
    // provider instance, ...` (its `launching node, %w`), the older `Could not launch node,
    // ...`, under the `provisioning` logger that v0.27 renamed.
    let node_launch = facts
        .messages_containing_any(&["launching node, ", "could not launch node, "])
        .next()
        .is_some();
    let provisioning_logger = facts.logs.iter().any(|r| {
        r.logger.as_deref().is_some_and(|l| {
            let p = "controller.provisioning";
            l.len() >= p.len()
                && l.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
                && matches!(l.as_bytes().get(p.len()), None | Some(b'.'))
        })
    });
    (node_launch || provisioning_logger).then_some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Document;

    fn era(text: &str) -> Option<bool> {
        era_before_v0_32(&crate::ingest::ingest(&[Document::new("t", text)]))
    }

    /// Console lines of v0.2x-v0.31 date the input by their logger; loggers v0.32-v0.36 also
    /// used do not.
    #[test]
    fn loggers_only_old_releases_had_date_the_input() {
        for line in [
            "2023-08-10T11:42:17.301Z\tDEBUG\tcontroller.machine.lifecycle\tdeprovisioning machine due to registration ttl\t{\"commit\": \"5a2fe84\", \"ttl\": \"15m0s\"}",
            "ERROR   controller.aws.pricing  updating on-demand pricing, RequestError: send request failed, using existing pricing data from 2022-08-17T00:19:52Z  {\"commit\": \"4b5f953\"}",
            "2023-04-21T06:05:00.044Z\tINFO\tcontroller.inflightchecks\tInflight check failed for node, Expected resource \"amd.com/gpu\" didn't register on the node\t{\"commit\": \"beb0a64-dirty\", \"node\": \"ip-1\"}",
            "2023-06-01T10:00:00.000Z\tINFO\tcontroller.deprovisioning\tdeprovisioning via consolidation delete, terminating 1 machines ip-1/m5.large/on-demand\t{\"commit\": \"5a2fe84\"}",
            "2022-11-03T08:12:44.551Z\tERROR\tcontroller.provisioning\tCould not schedule pod, incompatible with provisioner \"default\"\t{\"commit\": \"51becf8\"}",
            // The clause alone, under a logger v0.32-v0.36 kept.
            "2023-05-02T11:20:31.440Z\tERROR\tcontroller.provisioner\tCould not schedule pod, incompatible with provisioner \"gpu\", daemonset overhead={\"cpu\":\"300m\"}, did not tolerate nvidia.com/gpu=:NoSchedule\t{\"commit\": \"5a2fe84\", \"pod\": \"vision/detector-0\"}",
        ] {
            assert_eq!(era(line), Some(true), "{line}");
        }
        for line in [
            "2023-05-01T10:00:00.000Z\tERROR\tcontroller.pricing\tupdating pricing, retreiving on-demand pricing data, RequestError: send request failed\t{\"commit\": \"5a2fe84\"}",
            "2023-05-01T10:00:00.000Z\tINFO\tcontroller.provisioner\tfound provisionable pod(s)\t{\"commit\": \"5a2fe84\", \"pods\": \"default/web-0\"}",
            "2023-05-01T10:00:00.000Z\tINFO\tcontroller.awsx\tsomething\t{\"commit\": \"5a2fe84\"}",
            r#"{"level":"ERROR","time":"2025-07-01T00:00:12.345Z","logger":"controller","message":"Reconciler error","controller":"providers.pricing","error":"updating pricing"}"#,
        ] {
            assert_eq!(era(line), None, "{line}");
        }
        // A v0.32+ console line naming a NodePool dates it the other way.
        assert_eq!(
            era("2024-01-10T10:00:00.000Z\tINFO\tcontroller.disruption\tdisrupting via consolidation delete, terminating 1 candidates ip-1/m5.large/on-demand\t{\"commit\": \"1072d3b\", \"nodepool\": \"default\"}"),
            Some(false)
        );
    }

    /// The scanner drops INFO lines without a signal, but not those whose fields name the API
    /// generation's objects: a pricing error (undated) among them takes its era from them.
    #[test]
    fn info_lines_naming_the_api_objects_date_a_log() {
        let pricing = "2024-03-19T02:07:12.917Z\tERROR\tcontroller.pricing\tupdating on-demand pricing, RequestError: send request failed\t{\"commit\": \"8b2d1d7\"}";
        let log = |info: &str| {
            format!("2024-03-19T02:07:11.402Z\tINFO\tcontroller.provisioner\tfound provisionable pod(s)\t{{\"commit\": \"8b2d1d7\", \"pods\": \"etl/spark-0\"}}\n{pricing}\n{info}\n")
        };
        for (info, dated) in [
            ("2024-03-19T02:07:13.004Z\tINFO\tcontroller.disruption\tdisrupting via consolidation delete, terminating 1 candidates ip-1/m5.large/on-demand\t{\"commit\": \"8b2d1d7\", \"nodepool\": \"etl\"}", Some(false)),
            (r#"{"level":"INFO","time":"2024-03-19T02:07:13.004Z","logger":"controller.disruption","message":"disrupting via consolidation delete","commit":"8b2d1d7","nodepool":"etl"}"#, Some(false)),
            ("2023-03-19T02:07:13.004Z\tINFO\tcontroller.provisioner\tlaunching machine with 1 pods requesting {\"cpu\":\"155m\"} from types m5.large\t{\"commit\": \"5a2fe84\", \"provisioner\": \"etl\"}", Some(true)),
            ("2024-03-19T02:07:13.004Z\tINFO\tcontroller.provisioner\twaiting on cluster sync\t{\"commit\": \"8b2d1d7\"}", None),
        ] {
            assert_eq!(era(&log(info)), dated, "{info}");
        }
    }

    /// Only the v0.2x provisioner's own wording proves an input from before Machines; a
    /// Machine, its wording or the v1beta1 API rules it out, and a bare pre-v0.32 input says
    /// nothing either way.
    #[test]
    fn before_v0_28_needs_the_node_launch_wording() {
        let era28 =
            |text: &str| era_before_v0_28(&crate::ingest::ingest(&[Document::new("t", text)]));
        for line in [
            "2023-02-01T10:00:00.000Z\tERROR\tcontroller.provisioner\tProvisioning failed, launching node, creating cloud provider instance, getting launch template configs, getting subnets, no subnets matched selector map[karpenter.sh/discovery:demo]\t{\"commit\": \"5a2fe84\"}",
            "2022-03-14T09:12:02.730Z\tERROR\tcontroller.provisioning\tCould not launch node, launching instances, with fleet error(s), InsufficientInstanceCapacity\t{\"commit\": \"82ea63b\", \"provisioner\": \"default\"}",
            "2022-11-03T08:12:44.551Z\tINFO\tcontroller.provisioning\tBatched 3 pods in 1.000817353s\t{\"commit\": \"51becf8\"}",
        ] {
            assert_eq!(era28(line), Some(true), "{line}");
        }
        for line in [
            "2023-08-10T11:42:17.301Z\tDEBUG\tcontroller.machine.lifecycle\tdeprovisioning machine due to registration ttl\t{\"commit\": \"5a2fe84\", \"ttl\": \"15m0s\"}",
            "2023-08-10T11:42:17.301Z\tERROR\tcontroller.provisioner\tlaunching machine, creating cloud provider instance, with fleet error(s), InsufficientInstanceCapacity\t{\"commit\": \"5a2fe84\", \"provisioner\": \"default\"}",
            "2024-01-10T10:00:00.000Z\tERROR\tcontroller.provisioner\tlaunching nodeclaim, creating cloud provider instance, with fleet error(s), InsufficientInstanceCapacity\t{\"commit\": \"1072d3b\", \"nodepool\": \"default\"}",
        ] {
            assert_eq!(era28(line), Some(false), "{line}");
        }
        // Pre-v0.32 for sure, but v0.28-v0.31 or older is not said.
        let bare = "2023-06-01T10:00:00.000Z\tINFO\tcontroller.deprovisioning\tdeprovisioning via consolidation delete\t{\"commit\": \"5a2fe84\"}";
        assert_eq!(era(bare), Some(true));
        assert_eq!(era28(bare), None);
        let mut facts = Facts {
            karpenter_version: Some("0.27.5".into()),
            ..Facts::default()
        };
        assert_eq!(era_before_v0_28(&facts), Some(true));
        facts.karpenter_version = Some("0.28.0".into());
        assert_eq!(era_before_v0_28(&facts), Some(false));
    }

    #[test]
    fn parses_the_forms_ingest_writes() {
        assert_eq!(parse("1.7.2"), Some((1, 7, 2)));
        assert_eq!(parse("v0.37.0"), Some((0, 37, 0)));
        assert_eq!(parse("1.5"), Some((1, 5, 0)));
        assert_eq!(parse("1.12.0-rc.1"), Some((1, 12, 0)));
        assert_eq!(parse("latest"), None);
        let mut facts = Facts::default();
        assert_eq!(at_least(&facts, 1, 7), None);
        facts.karpenter_version = Some("1.6.3".into());
        assert_eq!(at_least(&facts, 1, 7), Some(false));
        assert_eq!(at_least(&facts, 1, 6), Some(true));
        assert_eq!(version_label(&facts).as_deref(), Some("v1.6.3"));
    }
}
