//! KW504 pricing-unreachable.

use crate::facts::{Facts, Message};
use crate::rules::kw1xx::credentials::NETWORK_MARKERS;
use crate::rules::kw4xx::disruption::unescaped;
use crate::rules::text::contains_any;
use crate::rules::text::karpenter_namespace_or_placeholder;
use crate::rules::version::{at_least, era_before_v0_32, pre_v0_32_logger_in, version_label};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW504",
    slug: "pricing-unreachable",
    title: "Karpenter cannot reach the AWS Price List API",
    severity: Severity::Warning,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Karpenter refreshes on-demand prices from the AWS Price List API
(`api.pricing.<region>.amazonaws.com`) to rank instance types by cost. It cannot reach it, so it
keeps using the prices built into its binary, which only an upgrade refreshes: cost decisions
(which type to launch, whether consolidation saves money) drift from real prices, and the error
repeats every 12 hours.

Signals: `updating on-demand pricing, ...` (before v1) or `updating pricing, retreiving
on-demand pricing data, ...` (v1, sic) with a network failure (`i/o timeout`, `dial tcp`, `no
such host`, `send request failed`) to `api.pricing.<region>.amazonaws.com`; in partitions without
a Price List endpoint (GovCloud) `UnrecognizedClientException: The security token included in
the request is invalid` from the pricing call. Not this rule: `running in an isolated VPC,
on-demand pricing information will not be updated` (the setting is already on), and an
`AccessDeniedException` on `pricing:GetProducts` (an IAM or SCP refusal, KW105).

## Why it happens
The cluster runs in a VPC without internet egress, and the Price List API has no VPC endpoint in
most regions; or the partition has no Price List API at all.

## How to fix
Tell Karpenter it runs in an isolated VPC so it stops calling the API and uses its built-in
prices: on Karpenter v0.32 and later (v1) `ISOLATED_VPC=true` (flag `--isolated-vpc`, helm
`--set settings.isolatedVPC=true`); before v0.32 `AWS_ISOLATED_VPC=true` (flag
`--aws-isolated-vpc`; v0.19 to v0.31 the `karpenter-global-settings` key `aws.isolatedVPC`, helm
`settings.aws.isolatedVPC`), the names the troubleshooting page still shows. Upgrade Karpenter
regularly to refresh the built-in prices.
"#,
};

const SIGNALS: &[&str] = &[
    "updating on-demand pricing",
    "on-demand pricing data",
    "updating pricing",
    "api.pricing.",
    "unrecognizedclientexception",
];

/// Where the isolated-VPC setting is written, across versions (env, flags, helm values,
/// the pre-v0.32 ConfigMap).
const ISOLATED_VPC_KEYS: &[&str] = &[
    "ISOLATED_VPC",
    "--isolated-vpc",
    "settings.isolatedVPC",
    "AWS_ISOLATED_VPC",
    "--aws-isolated-vpc",
    "aws.isolatedVPC",
    "settings.aws.isolatedVPC",
];

/// Texts that say the call is about on-demand prices (the Price List API): the pricing
/// controller's `updating pricing, retreiving on-demand pricing data, operation error Pricing:
/// GetProducts, ...` (Karpenter's own spelling of "retrieving"), or the endpoint.
const PRICING: &[&str] = &[
    "on-demand pricing",
    "updating pricing",
    "operation error Pricing",
    "Pricing: GetProducts",
    "api.pricing.",
];

/// A message about the Price List API call, by its text or by the controller that logged it.
/// KW103 leaves such a call's `UnrecognizedClientException` to this rule: in partitions
/// without a Price List endpoint (GovCloud, isolated regions) it is the answer to valid
/// credentials.
pub(crate) fn pricing_call(m: &Message) -> bool {
    contains_any(&m.text, PRICING) || from_pricing_controller(m)
}

/// `"controller":"providers.pricing"`, `"logger":"controller.pricing"`.
fn from_pricing_controller(m: &Message) -> bool {
    m.component
        .as_deref()
        .is_some_and(|c| contains_any(c, &["pricing"]))
}

/// The spot half of the pricing controller's error (`retrieving spot pricing data, operation
/// error EC2: DescribeSpotPriceHistory, ...`) is an EC2 call, not the Price List API.
const SPOT_ONLY: &[&str] = &["spot pricing data", "updating spot pricing"];

/// Texts that name the on-demand (Price List API) half of the pricing controller's error.
const ON_DEMAND: &[&str] = &[
    "on-demand pricing",
    "operation error Pricing",
    "Pricing: GetProducts",
    "api.pricing.",
];

fn is_signal(text: &str) -> bool {
    // `updating pricing, retrieving spot pricing data, ...` alone is the EC2 spot price call.
    let pricing = contains_any(text, PRICING)
        && (contains_any(text, ON_DEMAND) || !contains_any(text, SPOT_ONLY));
    // The SDK v2 gives up with `exceeded maximum number of attempts` around the network error.
    let unreachable = contains_any(text, NETWORK_MARKERS)
        || contains_any(text, &["exceeded maximum number of attempts"]);
    let govcloud = contains_any(text, &["UnrecognizedClientException"])
        && (pricing || contains_any(text, &["pricing", "us-gov-"]));
    let refused = contains_any(
        text,
        &[
            "AccessDeniedException",
            "not authorized to perform: pricing:",
        ],
    );
    ((pricing && unreachable) || govcloud) && !refused
}

/// The GovCloud refusal in a log line whose only pricing mark is the controller field
/// (`"controller":"providers.pricing"`, `"logger":"controller.pricing"`).
fn refused_in_pricing_controller(m: &Message) -> bool {
    from_pricing_controller(m) && contains_any(&m.text, &["UnrecognizedClientException"])
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let hits: Vec<&Message> = facts
        .messages
        .iter()
        .filter(|m| is_signal(&unescaped(&m.text)) || refused_in_pricing_controller(m))
        .collect();
    if hits.is_empty() {
        return Vec::new();
    }
    let texts: Vec<String> = hits
        .iter()
        .map(|m| unescaped(&m.text).into_owned())
        .collect();
    let endpoint = texts.iter().find_map(|t| endpoint_in(t));
    let govcloud = texts
        .iter()
        .any(|t| contains_any(t, &["UnrecognizedClientException"]));
    let mut summary = match &endpoint {
        Some(e) => format!(
            "Karpenter cannot reach the AWS Price List API ({e}) to refresh on-demand prices."
        ),
        None => {
            "Karpenter cannot reach the AWS Price List API to refresh on-demand prices.".to_string()
        }
    };
    if govcloud {
        summary.push_str(" The partition has no Price List endpoint (GovCloud answers UnrecognizedClientException).");
    } else if texts.iter().any(|t| contains_any(t, &["no such host"])) {
        // NXDOMAIN: a resolver answered that the name does not exist; that is DNS policy in
        // the VPC, not a missing route.
        summary.push_str(" Its name does not resolve (no such host): DNS in the VPC (a Route 53 private hosted zone or Resolver rule, a DNS Firewall, or a CoreDNS forward) does not answer for it, as in an isolated VPC, where the Price List API has no VPC endpoint in most regions.");
    } else {
        summary.push_str(" The VPC has no route to it (an isolated VPC: no internet egress, and the Price List API has no VPC endpoint in most regions).");
    }
    summary.push_str(" Karpenter falls back to the prices built into its binary, refreshed only by upgrades, so its cost decisions drift; it retries every 12 hours.");
    // The same error's spot half timing out on the EC2 endpoint: EC2 itself is unreachable,
    // which ISOLATED_VPC does not fix.
    // Before v1 the spot half is its own line (`updating spot pricing, RequestError: ...
    // Post "https://ec2.<region>.amazonaws.com/": ... i/o timeout, using existing pricing
    // data`), so look at every message, and quote that line too.
    let spot = facts
        .messages
        .iter()
        .find_map(|m| unreachable_ec2(&unescaped(&m.text)).map(|host| (host, m)));
    if let Some((ec2, _)) = &spot {
        let region = ec2
            .strip_prefix("ec2.")
            .and_then(|r| r.split('.').next())
            .filter(|r| !r.is_empty())
            .unwrap_or("<region>");
        summary.push_str(&format!(
            " The spot price call shows the EC2 API ({ec2}) unreachable too: Karpenter cannot launch anything without it, so the VPC needs an EC2 interface endpoint (com.amazonaws.{region}.ec2) or egress; the isolated-VPC setting does not change that."
        ));
    }
    if let Some(s) = facts
        .settings_named(ISOLATED_VPC_KEYS)
        .find(|s| s.value.eq_ignore_ascii_case("true"))
    {
        summary.push_str(&format!(
            " The input shows {}={} already set: these errors predate the change, or come from a controller that has not restarted since.",
            s.key, s.value
        ));
    } else if let Some(s) = facts
        .settings_named(ISOLATED_VPC_KEYS)
        .find(|s| s.value.eq_ignore_ascii_case("false"))
    {
        summary.push_str(&format!(
            " The input shows {}={}: the setting is off.",
            s.key, s.value
        ));
    }
    let ns = karpenter_namespace_or_placeholder(facts);
    let v1_env = Remediation::command(
        "Karpenter v0.32 and later (v1): set ISOLATED_VPC=true (flag --isolated-vpc; helm --set settings.isolatedVPC=true) so it stops calling the API:",
        format!("kubectl set env deployment/karpenter -n {ns} ISOLATED_VPC=true"),
    );
    let v1_helm = Remediation::command(
        "Or, for a helm-managed install (v0.32 and later), keep it in the chart values:",
        format!("helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --namespace {ns} --reuse-values --set settings.isolatedVPC=true"),
    );
    // v0.19 to v0.31 read settings from the karpenter-global-settings ConfigMap instead; a
    // Machine (v0.28 to v0.31) dates the input inside that range.
    let machines = facts.nodeclaims.iter().any(|c| c.is_machine)
        || facts.logs.iter().any(|r| {
            r.fields.contains_key("machine")
                || r.fields.contains_key("Machine")
                || r.logger
                    .as_deref()
                    .is_some_and(|l| l.starts_with("controller.machine"))
        });
    let global_settings = at_least(facts, 0, 19) == Some(true) || machines;
    let old = if global_settings {
        Remediation::command(
            "Before v0.32 (v0.19 to v0.31) the setting is the karpenter-global-settings key aws.isolatedVPC (helm settings.aws.isolatedVPC), the successor of AWS_ISOLATED_VPC; restart the controller after the change:",
            format!("kubectl patch configmap karpenter-global-settings -n {ns} --type merge -p '{{\"data\":{{\"aws.isolatedVPC\":\"true\"}}}}' && kubectl rollout restart deployment/karpenter -n {ns}"),
        )
    } else {
        Remediation::command(
            "Only before v0.32 (v0.31 and earlier): AWS_ISOLATED_VPC=true (flag --aws-isolated-vpc), the name Karpenter's troubleshooting page still shows, which v0.32 and later ignore; from v0.19 to v0.31 it lives in the karpenter-global-settings ConfigMap as aws.isolatedVPC (helm settings.aws.isolatedVPC):",
            format!("kubectl set env deployment/karpenter -n {ns} AWS_ISOLATED_VPC=true"),
        )
    };
    // Without a version, the input's API or log format may still date it (a Provisioner, a
    // `controller.aws.pricing` console line).
    let version = version_label(facts)
        .map(|v| format!("Karpenter {v}"))
        .unwrap_or_else(|| "this Karpenter".to_string());
    // The error's own wording dates it when nothing else does: AWS SDK v2 (`operation error
    // Pricing: GetProducts`) arrived with Karpenter v1.1.
    let sdk_v2 = texts
        .iter()
        .any(|t| contains_any(t, &["operation error Pricing"]));
    // v1 logs under the flat `controller` logger with a `controller` field (v0.3x dotted it).
    let v1_logs = crate::rules::kw4xx::disruption::era_before_v1(facts) == Some(false);
    let era_before = era_before_v0_32(facts).or((sdk_v2 || v1_logs).then_some(false));
    let dated_by = if version_label(facts).is_some() {
        String::new()
    } else if era_before == Some(true) {
        match pre_v0_32_logger_in(facts) {
            Some(l) => format!(" (its {l} log lines date it before v0.32)"),
            None => " (the input's Provisioner/Machine API dates it before v0.32)".to_string(),
        }
    } else if era_before_v0_32(facts).is_none() && sdk_v2 {
        " (its AWS SDK v2 error text, `operation error Pricing`, dates it v1.1 or later)"
            .to_string()
    } else if era_before_v0_32(facts).is_none() {
        " (its log records, under the `controller` logger with a `controller` field, date it v1)"
            .to_string()
    } else {
        " (the input's NodePool/NodeClaim API dates it v0.32 or later)".to_string()
    };
    let mut steps = match at_least(facts, 0, 32).or(era_before.map(|old| !old)) {
        Some(true) => {
            summary.push_str(&format!(" On {version}{dated_by} the setting is ISOLATED_VPC (AWS_ISOLATED_VPC, which the troubleshooting page still shows, is the pre-v0.32 name)."));
            vec![v1_env, v1_helm]
        }
        Some(false) => {
            summary.push_str(&format!(
                " On {version}{dated_by} the setting is the pre-v0.32 {}.",
                if global_settings {
                    "karpenter-global-settings key aws.isolatedVPC"
                } else {
                    "AWS_ISOLATED_VPC"
                }
            ));
            vec![old]
        }
        None => {
            // Both names exist, each for its own releases: say which is which, and how to
            // find the version, rather than list them side by side.
            summary.push_str(" The input does not show the Karpenter version, and the setting's name depends on it: ISOLATED_VPC on v0.32 and later (v1), AWS_ISOLATED_VPC before v0.32 (from v0.19 to v0.31 also the karpenter-global-settings key aws.isolatedVPC). Read the version first (below).");
            let version_step = Remediation::command(
                "Read the controller's version (the image tag) to pick the setting below:",
                format!("kubectl get deployment karpenter -n {ns} -o jsonpath='{{.spec.template.spec.containers[0].image}}{{\"\\n\"}}'"),
            );
            vec![version_step, v1_env, v1_helm, old]
        }
    };
    steps.push(Remediation::text(
        "Upgrade Karpenter regularly: in an isolated VPC each release brings the only price refresh.",
    ));
    let mut quoted = hits.clone();
    if let Some((_, m)) = spot {
        if !quoted.iter().any(|h| std::ptr::eq(*h, m)) {
            quoted.push(m);
        }
    }
    vec![Diagnosis::new(&META, summary)
        .with_messages(quoted.into_iter())
        .with_remediation(steps)]
}

/// `ec2.<region>.amazonaws.com` when the spot price call failed on the network.
fn unreachable_ec2(text: &str) -> Option<String> {
    // v1 `retrieving spot pricing data, ...`; before v1 `updating spot pricing, ...`.
    let at = text.find("spot pricing")?;
    let rest = &text[at..];
    if !contains_any(rest, NETWORK_MARKERS) {
        return None;
    }
    let start = rest.find("://ec2.")? + "://".len();
    let host: String = rest[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
        .collect();
    Some(host.trim_end_matches('.').to_string())
}

/// `api.pricing.us-east-1.amazonaws.com` in the text.
fn endpoint_in(text: &str) -> Option<String> {
    let start = text.find("api.pricing.")?;
    let host: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
        .collect();
    Some(host.trim_end_matches('.').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check_only, ids};

    #[test]
    fn govcloud_refusal_named_by_the_controller_field_only() {
        let mut facts = Facts::default();
        facts.messages.push(Message {
            text: "Reconciler error: UnrecognizedClientException: The security token included in the request is invalid.".into(),
            component: Some("providers.pricing".into()),
            ..Default::default()
        });
        assert_eq!(check(&facts).len(), 1);
        facts.messages[0].component = Some("nodeclass".into());
        assert!(check(&facts).is_empty());
    }

    #[test]
    fn every_form() {
        for text in [
            "ERROR   controller.aws.pricing  updating on-demand pricing, RequestError: send request failed",
            "caused by: Post \"https://api.pricing.us-east-1.amazonaws.com/\": dial tcp 52.94.231.236:443: i/o timeout, using existing pricing data from 2022-08-17T00:19:52Z",
            r#"{"level":"ERROR","message":"Reconciler error","controller":"providers.pricing","error":"updating pricing, retreiving on-demand pricing data, operation error Pricing: GetProducts, exceeded maximum number of attempts, 3, https response error StatusCode: 0, RequestID: , request send failed, Post \"https://api.pricing.us-east-1.amazonaws.com/\": dial tcp 52.94.231.236:443: i/o timeout"}"#,
            r#"{"level":"ERROR","message":"Reconciler error","controller":"providers.pricing","error":"updating pricing, retreiving on-demand pricing data, operation error Pricing: GetProducts, https response error StatusCode: 400, api error UnrecognizedClientException: The security token included in the request is invalid"}"#,
        ] {
            assert_eq!(ids(&check_only("KW504", text)), ["KW504"], "{text}");
        }
        let d = &check_only(
            "KW504",
            "updating on-demand pricing, RequestError: send request failed caused by: Post \"https://api.pricing.us-east-1.amazonaws.com/\": dial tcp: i/o timeout",
        )
        .diagnoses[0];
        assert!(
            d.summary.contains("(api.pricing.us-east-1.amazonaws.com)"),
            "{}",
            d.summary
        );
        // Version unknown: both names, labelled.
        assert!(d
            .remediation
            .iter()
            .any(|r| r.text.starts_with("Karpenter v0.32 and later")));
        assert!(d
            .remediation
            .iter()
            .any(|r| r.text.starts_with("Only before v0.32")));
    }

    #[test]
    fn no_such_host_is_dns_not_a_route() {
        let text = r#"{"level":"ERROR","message":"Reconciler error","controller":"providers.pricing","error":"updating pricing, retreiving on-demand pricing data, operation error Pricing: GetProducts, exceeded maximum number of attempts, 3, https response error StatusCode: 0, RequestID: , request send failed, Post \"https://api.pricing.us-east-1.amazonaws.com/\": dial tcp: lookup api.pricing.us-east-1.amazonaws.com on 172.20.0.10:53: no such host"}"#;
        let d = &check_only("KW504", text).diagnoses[0];
        assert!(
            d.summary.contains("does not resolve (no such host)"),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("no route"), "{}", d.summary);
    }

    /// Before v1 the spot half is a line of its own: still named, and quoted.
    #[test]
    fn pre_v1_spot_line_of_its_own_names_ec2_too() {
        let text = "2023-09-12T10:15:01.511Z\tERROR\tcontroller.pricing\tupdating spot pricing, RequestError: send request failed\ncaused by: Post \"https://ec2.ap-south-1.amazonaws.com/\": dial tcp 52.95.0.1:443: i/o timeout, using existing pricing data from 2023-08-30T13:51:16Z\t{\"commit\": \"61b3e1e\"}\n2023-09-12T10:15:02.511Z\tERROR\tcontroller.pricing\tupdating on-demand pricing, RequestError: send request failed\ncaused by: Post \"https://api.pricing.us-east-1.amazonaws.com/\": dial tcp 54.239.1.2:443: i/o timeout, using existing pricing data from 2023-08-30T13:51:16Z\t{\"commit\": \"61b3e1e\"}\n";
        let d = &check_only("KW504", text).diagnoses[0];
        assert!(
            d.summary
                .contains("EC2 API (ec2.ap-south-1.amazonaws.com) unreachable too"),
            "{}",
            d.summary
        );
        assert!(d.evidence.iter().any(|e| e.line == 1), "{:?}", d.evidence);
        // The spot line alone is not a Price List failure.
        let spot_only = text.lines().next().unwrap();
        assert!(ids(&check_only("KW504", spot_only)).is_empty());
    }

    /// Both halves failing on the network: the EC2 endpoint is named, since the isolated-VPC
    /// setting does not fix it.
    #[test]
    fn both_halves_name_ec2_too() {
        let d = &check_only(
            "KW504",
            r#"{"level":"ERROR","message":"Reconciler error","controller":"providers.pricing","error":"updating pricing, retreiving on-demand pricing data, operation error Pricing: GetProducts, exceeded maximum number of attempts, 3, https response error StatusCode: 0, RequestID: , request send failed, Post \"https://api.pricing.eu-central-1.amazonaws.com/\": dial tcp 3.65.110.4:443: connect: connection timed out; retrieving spot pricing data, operation error EC2: DescribeSpotPriceHistory, exceeded maximum number of attempts, 3, https response error StatusCode: 0, RequestID: , request send failed, Post \"https://ec2.eu-west-1.amazonaws.com/\": dial tcp 52.95.120.10:443: i/o timeout"}"#,
        )
        .diagnoses[0];
        assert!(
            d.summary
                .contains("(api.pricing.eu-central-1.amazonaws.com)"),
            "{}",
            d.summary
        );
        assert!(
            d.summary
                .contains("EC2 API (ec2.eu-west-1.amazonaws.com) unreachable too"),
            "{}",
            d.summary
        );
        assert!(
            d.summary.contains("(com.amazonaws.eu-west-1.ec2)"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn near_misses() {
        for text in [
            r#"{"level":"DEBUG","message":"running in an isolated VPC, on-demand pricing information will not be updated","controller":"providers.pricing"}"#,
            "AccessDeniedException: User: arn:aws:sts::111122223333:assumed-role/KarpenterController/1 is not authorized to perform: pricing:GetProducts with an explicit deny in a service control policy, using existing pricing data from 2023-02-27T15:52:29Z",
            "updating pricing, retrieving spot pricing data, no spot pricing found",
            // The spot half alone is the EC2 API, not the Price List API.
            r#"{"level":"ERROR","message":"Reconciler error","controller":"providers.pricing","error":"updating pricing, retrieving spot pricing data, operation error EC2: DescribeSpotPriceHistory, exceeded maximum number of attempts, 3, https response error StatusCode: 0, RequestID: , request send failed, Post \"https://ec2.eu-west-1.amazonaws.com/\": dial tcp 52.95.120.10:443: i/o timeout"}"#,
            "pricing-5d7b6c9f8-qq4tm   0/1   ContainerCreating   0   7m",
            "dial tcp: lookup sts.us-east-1.amazonaws.com: i/o timeout",
        ] {
            assert!(ids(&check_only("KW504", text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_logger_only_old_releases_had_dates_the_setting() {
        let old = "2023-03-02T08:00:10.125Z\tERROR\tcontroller.aws.pricing\tupdating on-demand pricing, RequestError: send request failed caused by: Post \"https://api.pricing.us-east-1.amazonaws.com/\": dial tcp 3.210.160.21:443: i/o timeout, using existing pricing data from 2023-02-28T00:10:15Z\t{\"commit\": \"5d2d8c0\"}";
        let d = &check_only("KW504", old).diagnoses[0];
        assert!(
            d.summary.contains("(its controller.aws.pricing log lines date it before v0.32) the setting is the pre-v0.32 AWS_ISOLATED_VPC"),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("does not show the Karpenter version"));
        assert!(d.remediation.iter().all(|r| !r
            .command
            .as_deref()
            .unwrap_or("")
            .contains(" ISOLATED_VPC=")));
        // `controller.pricing` logged the same way on v0.32 to v0.36: still unknown.
        let d = &check_only(
            "KW504",
            &old.replace("controller.aws.pricing", "controller.pricing"),
        )
        .diagnoses[0];
        assert!(
            d.summary.contains("does not show the Karpenter version"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn machines_date_the_global_settings_configmap() {
        let text = "2023-10-29T13:37:59.196Z\tINFO\tcontroller.machine.lifecycle\tlaunched machine\t{\"commit\": \"61b3e1e\", \"machine\": \"default-bmr6l\", \"provisioner\": \"default\"}\n2023-10-29T13:40:11.004Z\tERROR\tcontroller.pricing\tupdating on-demand pricing, RequestError: send request failed caused by: Post \"https://api.pricing.us-east-1.amazonaws.com/\": dial tcp 3.213.30.78:443: i/o timeout\t{\"commit\": \"61b3e1e\"}";
        let d = &check_only("KW504", text).diagnoses[0];
        assert!(
            d.summary.contains(
                "the setting is the pre-v0.32 karpenter-global-settings key aws.isolatedVPC"
            ),
            "{}",
            d.summary
        );
        assert!(d.remediation[0]
            .command
            .as_deref()
            .is_some_and(|c| c.starts_with("kubectl patch configmap karpenter-global-settings")));
    }

    #[test]
    fn setting_name_follows_the_version() {
        let text =
            "updating on-demand pricing, RequestError: send request failed: dial tcp: i/o timeout";
        let mut facts = Facts {
            karpenter_version: Some("1.3.2".into()),
            karpenter_namespace: Some("kube-system".into()),
            ..Default::default()
        };
        facts.messages.push(Message {
            text: text.into(),
            ..Default::default()
        });
        let d = &check(&facts)[0];
        assert_eq!(
            d.remediation[0].command.as_deref(),
            Some("kubectl set env deployment/karpenter -n kube-system ISOLATED_VPC=true")
        );
        assert!(!d.remediation.iter().any(|r| r
            .command
            .as_deref()
            .is_some_and(|c| c.contains("AWS_ISOLATED_VPC"))));
        assert!(d
            .summary
            .contains("On Karpenter v1.3.2 the setting is ISOLATED_VPC"));
        facts.karpenter_version = Some("0.18.1".into());
        let d = &check(&facts)[0];
        assert_eq!(
            d.remediation[0].command.as_deref(),
            Some("kubectl set env deployment/karpenter -n kube-system AWS_ISOLATED_VPC=true")
        );
        assert_eq!(d.remediation.len(), 2);
        facts.karpenter_version = Some("0.31.4".into());
        let d = &check(&facts)[0];
        assert!(d.remediation[0].command.as_deref().is_some_and(|c| c
            .contains("karpenter-global-settings")
            && c.contains("aws.isolatedVPC")));
        // Unknown version: each name with its releases, and how to read the version first.
        facts.karpenter_version = None;
        let d = &check(&facts)[0];
        assert!(
            d.summary
                .contains("ISOLATED_VPC on v0.32 and later (v1), AWS_ISOLATED_VPC before v0.32"),
            "{}",
            d.summary
        );
        assert!(d.remediation[0]
            .command
            .as_deref()
            .is_some_and(|c| c.starts_with("kubectl get deployment karpenter -n kube-system")));
        let old = d
            .remediation
            .iter()
            .find(|r| {
                r.command
                    .as_deref()
                    .is_some_and(|c| c.contains("AWS_ISOLATED_VPC"))
            })
            .unwrap();
        assert!(old.text.starts_with("Only before v0.32"), "{}", old.text);
    }
}
