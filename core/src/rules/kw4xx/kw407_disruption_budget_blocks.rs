//! KW407 disruption-budget-blocks.

use crate::document::Evidence;
use crate::facts::{
    contains_ignore_ascii_case, Facts, Message, MessageOrigin, NodePool, ObjectRef,
};
use crate::rules::kw4xx::disruption::{
    command_nodepool, consolidation_rejected_reason, era_before_v1, hits, node_or_claim,
    push_unique, subject_of, subjects_label, unescaped, Hits,
};
use crate::rules::text::{contains_any, token_after};
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW407",
    slug: "disruption-budget-blocks",
    title: "The NodePool's disruption budget allows no disruption now",
    severity: Severity::Info,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The NodePool's own `spec.disruption.budgets` (not a PodDisruptionBudget) allows zero nodes to be
disrupted right now, for every reason or for the reason named, so Karpenter holds back
consolidation, drift or emptiness on the NodePool's nodes.

Signals: the NodePool `DisruptionBlocked` events `No allowed disruptions due to blocking budget`
and `No allowed disruptions for disruption reason <Underutilized|Empty|Drifted> due to blocking
budget`; and the Node/NodeClaim `ConsolidationRejected` event `Consolidation rejected: <command>,
reason: budget (savings: $<x>)` (recent releases), where the re-check just before acting found
the budget used up, or a pod nominated to the node (Karpenter names both `budget`). Without
those events: the NodePool's spec holds a budget of `nodes: "0"` (or `"0%"`) while the input
shows one of its nodes waiting (a NodeClaim `Drifted=True`, `Empty=True` or
`Consolidatable=True`, a drift, consolidation or `DisruptionBlocked` event) and none being
disrupted; a budget with a `schedule` blocks only inside its window, which the engine cannot
check (it reads no clock), and the report says so.

## Why it happens
A budget with `nodes: "0"` (or `"0%"`), a scheduled window (`schedule` + `duration`) that is
active now, or a budget already used up by nodes being disrupted. Karpenter scales a percentage
by the NodePool's node count rounding up, as Kubernetes does for a PDB's `maxUnavailable`:
`10%` of 3 nodes allows 1 node, of 25 nodes 3, so a percentage never allows zero by itself on a
NodePool with nodes; it blocks once the nodes already being deleted (and those not Ready, which
Karpenter counts against the budget too) use it up. When the input shows the NodePool's node
count (the `NODES` column of `kubectl get nodepools`, or `status.resources.nodes`), the report
shows this arithmetic for each budget. Budgets may be limited to `reasons`; the most
restrictive active budget wins. With no budgets the default is `nodes: "10%"`.

## How to fix
Read `spec.disruption.budgets`; if the block is not intended, widen the budget (`nodes: "1"` or
a percentage), shorten or move its window, or scope it to the reasons you mean to hold back.
Otherwise wait for the window to end.
"#,
};

const SIGNALS: &[&str] = &["no allowed disruptions", "consolidation rejected:"];

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let found = hits(facts, |t| {
        (contains_ignore_ascii_case(t, "no allowed disruptions")
            && contains_ignore_ascii_case(t, "blocking budget"))
            || is_budget_rejection(t)
    });
    let mut out: Vec<Diagnosis> = by_nodepool(found)
        .into_iter()
        .map(|group| diagnose(facts, group))
        .collect();
    for np in &facts.nodepools {
        if !out
            .iter()
            .any(|d| d.node_pool.as_deref() == Some(np.meta.name.as_str()))
        {
            out.extend(from_spec(facts, np));
        }
    }
    out
}

/// Whether a budget allows no node at all (`nodes: "0"` or `"0%"`) whenever it is active.
fn allows_no_node(budget: &serde_json::Value) -> bool {
    let nodes = match budget.get("nodes") {
        Some(serde_json::Value::String(s)) => s.trim().trim_end_matches('%').to_string(),
        Some(n @ serde_json::Value::Number(_)) => n.to_string(),
        _ => return false,
    };
    nodes == "0"
}

/// The disruption reasons a budget is limited to (empty: every reason).
fn budget_reasons(budget: &serde_json::Value) -> Vec<&str> {
    budget
        .get("reasons")
        .and_then(|r| r.as_array())
        .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default()
}

/// The NodePool of a Node (its label) or NodeClaim (the claim's), when the input shows it.
fn pool_of(facts: &Facts, object: &ObjectRef) -> Option<String> {
    if !matches!(object.kind.as_str(), "Node" | "NodeClaim" | "Machine") {
        return None;
    }
    node_or_claim(facts, object)?.1.map(str::to_string)
}

/// The disruption reasons a message shows a node waiting for (empty: not said), `None` when
/// it shows no node held back. `Some(true)` in the second place: the node is being
/// disrupted, so no budget blocks it now.
fn waiting_reasons(text: &str) -> Option<(Vec<&'static str>, bool)> {
    if contains_ignore_ascii_case(text, "no allowed disruptions") {
        return None;
    }
    let disrupting = contains_ignore_ascii_case(text, "disrupting");
    let mut reasons = Vec::new();
    if contains_ignore_ascii_case(text, "drift") {
        reasons.push("Drifted");
    }
    if contains_any(text, &["underutilized", "consolidat"]) {
        reasons.push("Underutilized");
    }
    if contains_ignore_ascii_case(text, "empty") {
        reasons.push("Empty");
    }
    let blocked = contains_any(
        text,
        &["disruptionblocked", "cannot disrupt", "be disrupted"],
    );
    (disrupting || blocked || !reasons.is_empty()).then_some((reasons, disrupting))
}

/// A NodePool whose spec holds a zero-node budget while the input shows one of its nodes
/// waiting to be disrupted (a NodeClaim `Drifted=True`, `Empty=True`, `Consolidatable=True`, or
/// a drift / consolidation / `DisruptionBlocked` event or log line about a node), with no sign
/// of its nodes being disrupted. Karpenter writes no `No allowed disruptions` event in every
/// version, and a user often pastes only the spec and the node.
fn from_spec(facts: &Facts, np: &NodePool) -> Option<Diagnosis> {
    let zero: Vec<&serde_json::Value> = np
        .disruption
        .budgets
        .iter()
        .filter(|b| allows_no_node(b))
        .collect();
    if zero.is_empty() {
        return None;
    }
    let ours = |object: Option<&ObjectRef>| -> bool {
        match object.and_then(|o| pool_of(facts, o)) {
            Some(pool) => pool == np.meta.name,
            None => facts.nodepools.len() == 1,
        }
    };
    let mut waiting: Vec<(ObjectRef, Vec<&'static str>, Evidence)> = Vec::new();
    for c in &facts.nodeclaims {
        let object = ObjectRef::new(
            if c.is_machine { "Machine" } else { "NodeClaim" },
            None,
            &c.meta.name,
        );
        if c.nodepool
            .as_deref()
            .map_or(facts.nodepools.len() != 1, |p| p != np.meta.name)
        {
            continue;
        }
        for (condition, reason) in [
            ("Drifted", "Drifted"),
            ("Empty", "Empty"),
            ("Consolidatable", "Underutilized"),
        ] {
            if let Some(e) = c
                .condition(condition)
                .filter(|k| k.status.eq_ignore_ascii_case("true"))
                .and_then(|k| k.evidence.clone())
            {
                waiting.push((object.clone(), vec![reason], e));
            }
        }
    }
    for m in &facts.messages {
        let subject = subject_of(m).filter(|s| s.kind != "NodePool" && s.kind != "Pod");
        if m.origin == MessageOrigin::Condition || !ours(subject.as_ref()) {
            continue;
        }
        let Some((reasons, disrupting)) = waiting_reasons(&unescaped(&m.text)) else {
            continue;
        };
        if disrupting {
            return None;
        }
        if let Some(s) = subject {
            waiting.push((s, reasons, m.evidence.clone()));
        }
    }
    // The budgets that hold back what the nodes wait for.
    let blocks = |b: &&serde_json::Value| {
        let scope = budget_reasons(b);
        scope.is_empty()
            || waiting
                .iter()
                .any(|(_, r, _)| r.is_empty() || r.iter().any(|r| scope.contains(r)))
    };
    let blocking: Vec<&serde_json::Value> = zero.into_iter().filter(blocks).collect();
    if waiting.is_empty() || blocking.is_empty() {
        return None;
    }
    let always = blocking.iter().any(|b| b.get("schedule").is_none());
    let mut objects: Vec<ObjectRef> = Vec::new();
    let mut reasons: Vec<&str> = Vec::new();
    for (o, r, _) in &waiting {
        push_unique(&mut objects, o.clone());
        for r in r {
            push_unique(&mut reasons, *r);
        }
    }
    let name = &np.meta.name;
    let all_block = blocking.len() == np.disruption.budgets.len();
    let blocking_line = one_line(
        &budgets_yaml(&blocking.into_iter().cloned().collect::<Vec<_>>()).unwrap_or_default(),
    );
    let waits = if reasons.is_empty() {
        String::new()
    } else {
        format!(" ({})", reasons.join(", ").to_ascii_lowercase())
    };
    let mut summary = if always {
        format!(
            "NodePool {name}'s disruption budget allows no node to be disrupted at any time ({}), so {}{waits} is not disrupted. This is spec.disruption.budgets, not a PodDisruptionBudget.",
            blocking_line.trim_end_matches('.'),
            subjects_label(&objects)
        )
    } else {
        format!(
            "NodePool {name}'s disruption budget allows no node to be disrupted inside its window ({}), and {}{waits} is not disrupted. Whether the window covers now cannot be checked here (the engine reads no clock): Karpenter reads the schedule in UTC, so compare it with the time of the events. This is spec.disruption.budgets, not a PodDisruptionBudget.",
            blocking_line.trim_end_matches('.'),
            subjects_label(&objects)
        )
    };
    let quoted = budgets_yaml(&np.disruption.budgets);
    if let Some(yaml) = quoted.as_ref().filter(|_| !all_block) {
        summary.push_str(&format!(" All its budgets: {}", one_line(yaml)));
    }
    Some(
        Diagnosis::new(&META, summary)
            .with_confidence(if always {
                Confidence::High
            } else {
                Confidence::Medium
            })
            .with_objects(objects.iter())
            .with_node_pool(Some(name))
            .with_evidence(np.disruption.evidence.clone().or(np.meta.evidence.clone()))
            .with_evidence_per_object(
                waiting
                    .into_iter()
                    .map(|(o, _, e)| (Some(o.qualified_name()), e)),
            )
            .with_remediation(steps(facts, name, quoted.as_deref())),
    )
}

/// `Consolidation rejected: <command>, reason: budget (savings: $<x>)`.
fn is_budget_rejection(text: &str) -> bool {
    consolidation_rejected_reason(text).as_deref() == Some("budget")
}

/// One group per NodePool the events are about (each NodePool has its own budgets). Rows
/// that name no NodePool (a bare `Events:` table) join the one NodePool named, else stand
/// alone.
fn by_nodepool(found: Hits<'_>) -> Vec<Hits<'_>> {
    let nodepool_of = |m: &Message| {
        subject_of(m).filter(|s| s.kind == "NodePool").or_else(|| {
            command_nodepool(&unescaped(&m.text)).map(|np| ObjectRef::new("NodePool", None, &np))
        })
    };
    let mut names: Vec<String> = Vec::new();
    for m in &found.messages {
        if let Some(np) = nodepool_of(m) {
            push_unique(&mut names, np.name);
        }
    }
    let unnamed_joins = names.len() == 1;
    let mut groups: Vec<Hits<'_>> = names.iter().map(|_| Hits::default()).collect();
    let mut unnamed = Hits::default();
    for m in found.messages {
        let np = nodepool_of(m);
        let group = match np
            .as_ref()
            .and_then(|np| names.iter().position(|n| *n == np.name))
        {
            Some(i) => &mut groups[i],
            None if unnamed_joins => &mut groups[0],
            None => &mut unnamed,
        };
        if let Some(np) = np {
            push_unique(&mut group.subjects, np);
        }
        group.messages.push(m);
    }
    if !unnamed.is_empty() {
        groups.push(unnamed);
    }
    groups
}

fn diagnose(facts: &Facts, found: Hits<'_>) -> Diagnosis {
    let mut reasons: Vec<String> = Vec::new();
    for m in &found.messages {
        let t = unescaped(&m.text);
        if let Some(r) = token_after(&t, "for disruption reason") {
            push_unique(&mut reasons, r);
        }
    }
    // A Node or NodeClaim event (`ConsolidationRejected`) names no NodePool, but the node's
    // `karpenter.sh/nodepool` label or the claim does when the input shows them.
    let pools_of_nodes: Vec<String> = found
        .messages
        .iter()
        .filter_map(|m| pool_of(facts, m.object.as_ref()?))
        .collect();
    // Only when they agree: the group may hold nodes of several NodePools.
    let of_node = pools_of_nodes
        .first()
        .filter(|first| pools_of_nodes.iter().all(|p| p == *first))
        .cloned();
    let nodepool: Option<&NodePool> = found
        .subjects
        .iter()
        .find(|s| s.kind == "NodePool")
        .and_then(|s| facts.nodepool(&s.name))
        .or_else(|| of_node.as_deref().and_then(|n| facts.nodepool(n)))
        .or(match facts.nodepools.as_slice() {
            [only] => Some(only),
            _ => None,
        });
    let name = found
        .subjects
        .iter()
        .find(|s| s.kind == "NodePool")
        .map(|s| s.name.clone())
        .or_else(|| of_node.clone())
        .or_else(|| nodepool.map(|p| p.meta.name.clone()));
    let np_label = name
        .as_deref()
        .map(|n| format!("NodePool {n}"))
        .unwrap_or_else(|| "The NodePool".to_string());
    let scope = if reasons.is_empty() {
        "for any reason".to_string()
    } else {
        format!("for {}", reasons.join(", "))
    };
    let rejections: Vec<&Message> = found
        .messages
        .iter()
        .copied()
        .filter(|m| is_budget_rejection(&unescaped(&m.text)))
        .collect();
    let mut rejected: Vec<ObjectRef> = Vec::new();
    for m in &rejections {
        if let Some(s) = subject_of(m).filter(|s| s.kind != "NodePool") {
            push_unique(&mut rejected, s);
        }
    }
    let rejected_label = subjects_label(&rejected);
    let only_rejections = rejections.len() == found.messages.len();
    let mut summary = if only_rejections {
        let np_label = name
            .as_deref()
            .map(|n| format!("NodePool {n}"))
            .unwrap_or_else(|| "the NodePool".to_string());
        format!(
            "Karpenter planned to consolidate {rejected_label}, but the re-check just before acting rejected it with reason budget: {np_label}'s disruption budget no longer allowed another node (spec.disruption.budgets, not a PodDisruptionBudget), or a pod was nominated to the node meanwhile (Karpenter reports both as budget). It retries on a later pass."
        )
    } else {
        let mut s = format!(
            "{np_label}'s disruption budget allows no node to be disrupted now ({scope}), so Karpenter waits. This is spec.disruption.budgets, not a PodDisruptionBudget."
        );
        if !rejections.is_empty() {
            s.push_str(&format!(
                " Consolidating {rejected_label} was rejected for the same reason (reason: budget)."
            ));
        }
        s
    };
    let quoted = nodepool.map(|p| budgets_yaml(&p.disruption.budgets));
    match &quoted {
        Some(Some(yaml)) => summary.push_str(&format!(" Its budgets: {}", one_line(yaml))),
        Some(None) => summary.push_str(
            " Its spec shows no budgets (the default is nodes: 10%): the nodes already being disrupted use up the budget.",
        ),
        None => {}
    }
    let mut used_up = false;
    if let Some(np) = nodepool.filter(|_| !only_rejections) {
        let (sentence, full) = arithmetic(np, &reasons);
        summary.push_str(&sentence);
        used_up = full;
    }
    let confidence = if only_rejections {
        // `budget` also names a pod nominated to the node during validation (KW409).
        Confidence::Medium
    } else {
        Confidence::High
    };
    Diagnosis::new(&META, summary)
        .with_confidence(confidence)
        .with_object(found.subjects.first().or(rejected.first()))
        .with_node_pool(name.as_deref())
        .with_messages_per_object(found.messages.iter().copied(), &subject_of)
        .with_evidence(nodepool.and_then(|p| p.meta.evidence.clone()))
        .with_remediation({
            let np = name.as_deref().unwrap_or("<nodepool>");
            let mut steps = steps(facts, np, quoted.flatten().as_deref());
            if used_up {
                // The budget is not zero: the nodes holding it are the ones to look at.
                steps.insert(
                    0,
                    Remediation::command(
                        "Find the NodePool's nodes that hold the budget (being deleted, or not Ready); once they are gone Karpenter continues by itself:",
                        format!("kubectl get nodeclaims -l karpenter.sh/nodepool={np} -o wide; kubectl get nodes -l karpenter.sh/nodepool={np}"),
                    ),
                );
            }
            steps
        })
}

/// The nodes a budget allows to be disrupted at once in a NodePool of `nodes` nodes, with how
/// it was reached; `None` for a value Karpenter would not accept or a percentage of an unknown
/// count. Karpenter scales a percentage with `intstr.GetScaledValueFromIntOrPercent(..., true)`,
/// which rounds up.
fn allowed_nodes(budget: &serde_json::Value, nodes: Option<u64>) -> Option<(u64, String)> {
    let written = match budget.get("nodes") {
        Some(serde_json::Value::String(s)) => s.trim().to_string(),
        Some(serde_json::Value::Number(n)) => n.to_string(),
        // The CRD defaults an item without `nodes` to 10%.
        None => "10%".to_string(),
        _ => return None,
    };
    match written.strip_suffix('%') {
        Some(percent) => {
            let percent: u64 = percent.trim().parse().ok().filter(|p| *p <= 100)?;
            let nodes = nodes?;
            let allowed = (percent * nodes).div_ceil(100);
            let rounded = if (percent * nodes).is_multiple_of(100) {
                ""
            } else {
                ", rounded up as Karpenter does"
            };
            Some((
                allowed,
                format!("nodes: \"{written}\" allows {allowed} ({percent}% of {nodes}{rounded})"),
            ))
        }
        None => {
            let allowed: u64 = written.parse().ok()?;
            Some((allowed, format!("nodes: \"{written}\" allows {allowed}")))
        }
    }
}

/// What each budget that applies to the blocked reasons allows for the NodePool's node count
/// (`status.resources.nodes`, or the NODES column), and what a non-zero result means: the
/// event says the allowance is used up by nodes already being disrupted (`true` in the second
/// place). Empty when the count is unknown and nothing can be computed.
fn arithmetic(np: &NodePool, reasons: &[String]) -> (String, bool) {
    let nodes: Option<u64> = np.usage.get("nodes").and_then(|n| n.trim().parse().ok());
    let default = [serde_json::json!({"nodes": "10%"})];
    let budgets: &[serde_json::Value] = if np.disruption.budgets.is_empty() {
        &default
    } else {
        &np.disruption.budgets
    };
    let applies = |b: &&serde_json::Value| {
        let scope = budget_reasons(b);
        scope.is_empty()
            || reasons.is_empty()
            || reasons.iter().any(|r| scope.contains(&r.as_str()))
    };
    let mut parts: Vec<String> = Vec::new();
    let mut least: Option<u64> = None;
    // A zero from a budget without a schedule, not only from a window.
    let mut zero_always = false;
    for b in budgets.iter().filter(applies) {
        let Some((allowed, how)) = allowed_nodes(b, nodes) else {
            continue;
        };
        let window = if b.get("schedule").is_some() {
            " inside its window"
        } else {
            ""
        };
        parts.push(format!("{how}{window}"));
        least = Some(least.map_or(allowed, |l| l.min(allowed)));
        zero_always |= allowed == 0 && window.is_empty();
    }
    let has_percent = budgets.iter().filter(applies).any(|b| {
        b.get("nodes")
            .and_then(|n| n.as_str())
            .is_none_or(|n| n.trim().ends_with('%'))
    });
    let used_up = least.is_some_and(|l| l > 0) && (nodes.is_some() || !has_percent);
    let sentence = match (nodes, least) {
        (Some(n), Some(0)) => format!(
            " With {n} node{} in the NodePool: {}; the most restrictive active budget wins, so no node may be disrupted{}.",
            if n == 1 { "" } else { "s" },
            parts.join("; "),
            if zero_always {
                ""
            } else {
                " while the window is open (Karpenter reads the schedule in UTC)"
            }
        ),
        (Some(n), Some(least)) => format!(
            " With {n} node{} in the NodePool: {}. The event means {} already taken: Karpenter counts the NodePool's nodes being deleted, and those not Ready, against the budget, and waits for them to finish.",
            if n == 1 { "" } else { "s" },
            parts.join("; "),
            if least == 1 {
                "that 1 node is".to_string()
            } else {
                format!("those {least} nodes are")
            }
        ),
        (None, Some(least)) if least > 0 && !has_percent => format!(
            " By its budgets: {}. The event means {} already taken: Karpenter counts the NodePool's nodes being deleted, and those not Ready, against the budget, and waits for them to finish.",
            parts.join("; "),
            if least == 1 {
                "that 1 node is".to_string()
            } else {
                format!("those {least} nodes are")
            }
        ),
        // A zero budget explains the block whatever the count.
        (None, Some(0)) if zero_always => {
            " A budget of zero nodes applies at any time, so no node may be disrupted.".to_string()
        }
        (None, Some(0)) => {
            " A budget of zero nodes applies inside its window, so no node may be disrupted while the window is open (Karpenter reads the schedule in UTC).".to_string()
        }
        (None, _) if has_percent => format!(
            " Karpenter rounds a percentage up (10% of 3 nodes allows 1), so a percentage blocks only once nodes already being deleted or not Ready use it up; `kubectl get nodepool {}` shows the node count.",
            np.meta.name
        ),
        _ => String::new(),
    };
    (sentence, used_up)
}

const BUDGET_EXAMPLE: &str = "spec:\n  disruption:\n    budgets:\n      - nodes: \"10%\"\n      - nodes: \"0\"\n        schedule: \"0 9 * * mon-fri\"\n        duration: 8h\n        reasons: [\"Drifted\", \"Underutilized\"]\n";

/// Read the budgets (shown instead when the input has them), and a budget that allows some
/// disruption. A budget's `reasons` came with the v1 API: the v1beta1 NodePool of v0.3x
/// refuses the field, so the example leaves it out there.
fn steps(facts: &Facts, np: &str, quoted: Option<&str>) -> Vec<Remediation> {
    let mut steps = Vec::new();
    let before_v1 = era_before_v1(facts) == Some(true);
    let fields = if before_v1 {
        "nodes, schedule, duration"
    } else {
        "nodes, schedule, duration, reasons"
    };
    match quoted {
        Some(yaml) => steps.push(Remediation::yaml(
            format!("NodePool {np}'s current budgets ({fields}; a schedule with a duration blocks only inside its window):"),
            format!("spec:\n  disruption:\n    budgets:\n{yaml}"),
        )),
        None => steps.push(Remediation::command(
            format!("Read the budgets ({fields}); a schedule with a duration blocks only inside its window:"),
            format!("kubectl get nodepool {np} -o jsonpath='{{.spec.disruption.budgets}}{{\"\\n\"}}'"),
        )),
    }
    steps.push(Remediation::yaml(
        format!(
            "If the block is not intended, allow some disruption (keep a zero-node window only for the hours it is meant for) with `kubectl edit nodepool {np}`:"
        ),
        if before_v1 {
            BUDGET_EXAMPLE
                .split_inclusive('\n')
                .filter(|l| !l.contains("reasons:"))
                .collect()
        } else {
            BUDGET_EXAMPLE.to_string()
        },
    ));
    steps
}

/// The budgets as YAML list items (indented for `spec.disruption.budgets`), `None` when there
/// are none.
fn budgets_yaml(budgets: &[serde_json::Value]) -> Option<String> {
    if budgets.is_empty() {
        return None;
    }
    let mut out = String::new();
    for b in budgets {
        let Some(map) = b.as_object() else {
            out.push_str(&format!("      - {b}\n"));
            continue;
        };
        // Karpenter's documented order first, then anything else.
        let mut keys: Vec<&String> = map.keys().collect();
        let rank = |k: &str| {
            ["nodes", "schedule", "duration", "reasons"]
                .iter()
                .position(|x| *x == k)
                .unwrap_or(9)
        };
        crate::rules::sort_stable_by(&mut keys, |a, b| {
            (rank(a), a.to_string()).cmp(&(rank(b), b.to_string()))
        });
        for (i, k) in keys.iter().enumerate() {
            let value = match &map[k.as_str()] {
                serde_json::Value::String(s) => format!("\"{s}\""),
                serde_json::Value::Array(items) => format!(
                    "[{}]",
                    items
                        .iter()
                        .map(|v| match v {
                            serde_json::Value::String(s) => format!("\"{s}\""),
                            other => other.to_string(),
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                other => other.to_string(),
            };
            let lead = if i == 0 { "      - " } else { "        " };
            out.push_str(&format!("{lead}{k}: {value}\n"));
        }
    }
    Some(out)
}

/// `- nodes: "0"; schedule: ...` on one line for the summary.
fn one_line(yaml: &str) -> String {
    let items: Vec<String> = yaml
        .split("      - ")
        .filter(|s| !s.trim().is_empty())
        .map(|item| {
            item.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .map(|i| format!("[{i}]"))
        .collect();
    format!("{}.", items.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{DisruptionSpec, Message, Meta, ObjectRef};
    use crate::rules::Confidence;
    use crate::testing::{check_only, ids};

    #[test]
    fn both_wordings() {
        let report = check_only(
            "KW407",
            "Normal  DisruptionBlocked  30s  karpenter  No allowed disruptions for disruption reason Drifted due to blocking budget\nNormal  DisruptionBlocked  30s  karpenter  No allowed disruptions due to blocking budget",
        );
        assert_eq!(ids(&report), ["KW407"]);
        let d = &report.diagnoses[0];
        assert!(d.summary.contains("(for Drifted)"), "{}", d.summary);
        assert!(d.summary.contains("not a PodDisruptionBudget"));
        assert_eq!(d.evidence.len(), 2);
        assert_eq!(d.confidence, Confidence::High);
        for near in [
            "Pdb prevents pod evictions (PodDisruptionBudget=default/x)",
            "No allowed disruptions",
        ] {
            assert!(ids(&check_only("KW407", near)).is_empty(), "{near}");
        }
    }

    #[test]
    fn consolidation_rejected_for_budget() {
        let report = check_only(
            "KW407",
            "LAST SEEN   TYPE     REASON                  OBJECT            MESSAGE
2m          Normal   ConsolidationRejected   node/ip-10-0-1-2  Consolidation rejected: Underutilized/6f1c: delete: nodepools=[general]: [ip-10-0-1-2] (savings: $0.09), reason: budget (savings: $0.09)
",
        );
        assert_eq!(ids(&report), ["KW407"]);
        let d = &report.diagnoses[0];
        assert_eq!(d.node_pool.as_deref(), Some("general"));
        assert!(
            d.summary
                .starts_with("Karpenter planned to consolidate node ip-10-0-1-2, but"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("a pod was nominated"), "{}", d.summary);
        assert_eq!(d.confidence, Confidence::Medium);
        // Alongside the NodePool's own event, the rejection only adds a sentence.
        let both = check_only(
            "KW407",
            "Normal  DisruptionBlocked  30s  karpenter  No allowed disruptions due to blocking budget\nNormal  ConsolidationRejected  20s  karpenter  Consolidation rejected: delete: [ip-10-0-1-2], reason: budget (savings: $0.11)",
        );
        let d = &both.diagnoses[0];
        assert_eq!(d.confidence, Confidence::High);
        assert!(
            d.summary.contains("was rejected for the same reason"),
            "{}",
            d.summary
        );
        for near in [
            "Consolidation rejected: delete: [ip-10-0-1-2], reason: scheduling (savings: $0.11)",
            "Consolidation rejected: delete: [ip-10-0-1-2], reason: churn (savings: $0.11)",
            "Consolidation rejected: delete: [ip-10-0-1-2], reason: unknown (savings: $0.11)",
            "Consolidation rejected: delete: [ip-10-0-1-2], reason: budgets-ok (savings: $0.11)",
            "Consolidation candidate: delete: [ip-10-0-1-2] (savings: $0.11)",
        ] {
            assert!(ids(&check_only("KW407", near)).is_empty(), "{near}");
        }
    }

    #[test]
    fn one_diagnosis_per_nodepool() {
        let report = check_only(
            "KW407",
            "LAST SEEN   TYPE     REASON              OBJECT              MESSAGE
1m          Normal   DisruptionBlocked   nodepool/default    No allowed disruptions for disruption reason Drifted due to blocking budget
1m          Normal   DisruptionBlocked   nodepool/batch      No allowed disruptions due to blocking budget
30s         Normal   DisruptionBlocked   nodepool/default    No allowed disruptions for disruption reason Underutilized due to blocking budget
",
        );
        assert_eq!(ids(&report), ["KW407", "KW407"]);
        let [default, batch] = &report.diagnoses[..] else {
            unreachable!()
        };
        assert_eq!(default.node_pool.as_deref(), Some("default"));
        assert!(
            default.summary.starts_with("NodePool default's"),
            "{}",
            default.summary
        );
        assert!(
            default.summary.contains("(for Drifted, Underutilized)"),
            "{}",
            default.summary
        );
        assert_eq!(default.evidence.len(), 2);
        assert_eq!(batch.node_pool.as_deref(), Some("batch"));
        assert!(
            batch.summary.starts_with("NodePool batch's"),
            "{}",
            batch.summary
        );
        assert!(
            batch.summary.contains("(for any reason)"),
            "{}",
            batch.summary
        );
        assert!(batch.remediation[0]
            .command
            .as_deref()
            .is_some_and(|c| c.contains("nodepool batch")));
    }

    #[test]
    fn percentages_round_up_as_karpenter_does() {
        let allowed = |nodes: serde_json::Value, count: Option<u64>| {
            allowed_nodes(&serde_json::json!({ "nodes": nodes }), count).map(|(n, _)| n)
        };
        assert_eq!(allowed("10%".into(), Some(3)), Some(1));
        assert_eq!(allowed("10%".into(), Some(25)), Some(3));
        assert_eq!(allowed("10%".into(), Some(20)), Some(2));
        assert_eq!(allowed("0%".into(), Some(40)), Some(0));
        assert_eq!(allowed("100%".into(), Some(7)), Some(7));
        assert_eq!(allowed("10%".into(), Some(0)), Some(0));
        assert_eq!(allowed("10%".into(), None), None);
        assert_eq!(allowed("3".into(), None), Some(3));
        assert_eq!(allowed(2.into(), Some(9)), Some(2));
        for bad in ["150%", "x%", "ten", "-1"] {
            assert_eq!(allowed(bad.into(), Some(5)), None, "{bad}");
        }
        // No `nodes`: the CRD default.
        assert_eq!(
            allowed_nodes(&serde_json::json!({}), Some(11)).map(|(n, _)| n),
            Some(2)
        );
        let (_, how) = allowed_nodes(&serde_json::json!({"nodes": "10%"}), Some(3)).unwrap();
        assert_eq!(
            how,
            r#"nodes: "10%" allows 1 (10% of 3, rounded up as Karpenter does)"#
        );
    }

    #[test]
    fn shows_the_arithmetic_with_the_node_count() {
        let mut np = NodePool {
            meta: Meta {
                name: "general".into(),
                ..Default::default()
            },
            ..Default::default()
        };
        // No count, no budgets: only how a percentage rounds.
        let (sentence, used_up) = arithmetic(&np, &[]);
        assert!(sentence.contains("rounds a percentage up"), "{sentence}");
        assert!(!used_up);
        np.usage.insert("nodes".into(), "3".into());
        let (sentence, used_up) = arithmetic(&np, &[]);
        assert!(
            sentence.contains(r#"With 3 nodes in the NodePool: nodes: "10%" allows 1"#),
            "{sentence}"
        );
        assert!(
            sentence.contains("that 1 node is already taken"),
            "{sentence}"
        );
        assert!(used_up);
        np.disruption.budgets = vec![
            serde_json::json!({"nodes": "50%"}),
            serde_json::json!({"nodes": "0", "schedule": "@daily", "duration": "1h", "reasons": ["Drifted"]}),
        ];
        let (sentence, used_up) = arithmetic(&np, &["Drifted".to_string()]);
        assert!(
            sentence.contains("allows 0 inside its window"),
            "{sentence}"
        );
        assert!(sentence.contains("while the window is open"), "{sentence}");
        assert!(!used_up);
        // The Drifted-only window does not hold back consolidation.
        let (sentence, _) = arithmetic(&np, &["Underutilized".to_string()]);
        assert!(!sentence.contains("inside its window"), "{sentence}");
        assert!(
            sentence.contains("those 2 nodes are already taken"),
            "{sentence}"
        );
    }

    #[test]
    fn quotes_the_budgets() {
        let mut facts = Facts::default();
        facts.nodepools.push(NodePool {
            meta: Meta {
                name: "default".into(),
                ..Default::default()
            },
            disruption: DisruptionSpec {
                budgets: vec![
                    serde_json::json!({"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h", "reasons": ["Drifted"]}),
                    serde_json::json!({"nodes": "10%"}),
                ],
                ..Default::default()
            },
            ..Default::default()
        });
        facts.messages.push(Message {
            text: "No allowed disruptions for disruption reason Drifted due to blocking budget"
                .into(),
            object: Some(ObjectRef::new("NodePool", None, "default")),
            ..Default::default()
        });
        let d = &check(&facts)[0];
        assert!(d
            .summary
            .starts_with("NodePool default's disruption budget"));
        assert!(d.summary.contains(
            r#"Its budgets: [nodes: "0", schedule: "0 9 * * mon-fri", duration: "8h", reasons: ["Drifted"]] [nodes: "10%"]."#
        ), "{}", d.summary);
        // Shown, not asked for again.
        assert!(d.remediation.iter().all(|r| r.command.is_none()));
        assert_eq!(
            d.remediation[0].yaml.as_deref(),
            Some("spec:\n  disruption:\n    budgets:\n      - nodes: \"0\"\n        schedule: \"0 9 * * mon-fri\"\n        duration: \"8h\"\n        reasons: [\"Drifted\"]\n      - nodes: \"10%\"\n")
        );
        facts.nodepools[0].disruption.budgets.clear();
        assert!(check(&facts)[0].summary.contains("default is nodes: 10%"));
    }
}
