//! KW215 insufficient-capacity.

use crate::facts::find_ignore_ascii_case;
use crate::facts::{
    contains_ignore_ascii_case, CapacityReservation, Facts, Message, NodeClass, Requirement,
};
use crate::rules::kw2xx::kw214_subnet_ip_exhausted::mentions_subnet_exhaustion;
use crate::rules::kw2xx::kw216_spot_only_nodepool::pool_requirements_yaml;
use crate::rules::kw2xx::scheduling::{
    in_values, nodepool_subnets, scheduling_errors, tail_after, Cause,
};
use crate::rules::kw3xx::common::pods_waiting_on;
use crate::rules::text::is_region;
use crate::rules::version::before_v0_32;
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW215",
    slug: "insufficient-capacity",
    title: "EC2 has no capacity (or quota) for the requested instance types",
    severity: Severity::Warning,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Karpenter asked EC2 for an instance and EC2 had none to give for that instance type, zone and
capacity type (insufficient capacity), or an account quota forbids it, or the EC2 capacity
reservation (On-Demand Capacity Reservation or Capacity Block, `cr-...`) the launch targeted is
full or not active yet. Karpenter deletes the
NodeClaim, marks the offering unavailable for a few minutes and tries other types and zones;
when none remains, the pod stays Pending (an error). When Karpenter's log shows a NodeClaim of
the same NodePool launched after the shortage, the fallback worked: the diagnosis is then
information, worth acting on only if the shortage comes back.

Signals: the ICE codes `InsufficientInstanceCapacity`, `MaxSpotInstanceCountExceeded`,
`VcpuLimitExceeded`, `UnfulfillableCapacity`, `MaxFleetCountExceeded`,
`ReservationCapacityExceeded`; `creating instance, insufficient capacity, ...`, `insufficient
capacity, all requested instance types were unavailable during launch`; the NodeClaim event
`InsufficientCapacityError`; EC2's own `We currently do not have sufficient <type> capacity in
the Availability Zone you requested (<zone>)`; and `SpotMaxPriceTooLow` (`Your Spot request
price of ... is lower than the minimum required Spot request fulfillment price`). For a
reservation: `ReservationCapacityExceeded` (`The requested reservation does not have sufficient
compatible and available capacity for this request.`) and `Your Capacity Block reservation <id>
is not active yet`; any insufficient-capacity code on a launch into a reservation (v1.3+: the
DEBUG line `marking capacity reservation unavailable` with `capacity-reservation-id` and the EC2
`reason`, a NodeClaim labelled `karpenter.sh/capacity-type: reserved`, or a NodePool allowing
only `reserved`) is about that reservation too. The reservation is named from the text, that
DEBUG line, the NodeClaim's `karpenter.k8s.aws/capacity-reservation-id` label or requirement,
or the NodePool's. Not this
rule: `insufficient capacity, resolving nodeclass, ec2nodeclasses.karpenter.k8s.aws "<name>" not
found`, which Karpenter files as insufficient capacity though EC2 was never asked: the
EC2NodeClass does not exist (KW503).

## Why it happens
Popular types (large GPU, latest generation) run out in a zone, spot pools dry up, a capacity
reservation is full, or the account's quotas (running On-Demand vCPUs, spot instance requests,
fleets) are reached. A NodePool that allows few types, one zone or only spot has nothing to fall
back to.

## How to fix
Allow more instance families, sizes and zones in the NodePool, allow on-demand as a fallback for
spot (KW216); for the quota codes ask for a Service Quotas increase; remove a spot max price.
For a full reservation, the fix is about the reservation, not more instance types: see what
occupies it (`kubectl get nodes -l karpenter.k8s.aws/capacity-reservation-id=<cr-id>`), enlarge
an On-Demand Capacity Reservation (`aws ec2 modify-capacity-reservation`) or buy another Capacity
Block, and let the NodePool fall back with `karpenter.sh/capacity-type In [reserved,
on-demand]`; a Capacity Block that is not active yet starts at its `StartDate`. A Capacity
Block is a fixed window: it cannot be enlarged and it ends at its `EndDate` (Karpenter drains its
nodes before then), so buy another block. The EC2NodeClass's `status.capacityReservations` names
each reservation's type, instance type and zone; a NodePool whose `karpenter.sh/capacity-type`
leaves out `reserved` never uses them. When the input shows the zones the NodePool and its
subnets allow, the zones with no reported shortage are named. When EC2's message suggests
zones (`... by not specifying an Availability Zone in your request or choosing us-east-1b,
us-east-1c.`), they are named, and the fix adds those the NodePool does not allow to its zone
requirement (keeping its zones) and names the EC2NodeClass when it has no subnet there. For a pre-v0.32 Provisioner the
requirements sit directly under its `spec`.
"#,
};

const SIGNALS: &[&str] = &[
    "insufficientinstancecapacity",
    "maxspotinstancecountexceeded",
    "vcpulimitexceeded",
    "unfulfillablecapacity:",
    "maxfleetcountexceeded",
    "reservationcapacityexceeded",
    "insufficient capacity",
    "all requested instance types were unavailable",
    "insufficientcapacityerror",
    "we currently do not have sufficient",
    "spotmaxpricetoolow",
    "lower than the minimum required spot request fulfillment price",
    "requested reservation does not have sufficient",
    "capacity block reservation",
    // The NodeClaim messages Karpenter maps the quota codes to (v1.2+).
    "would exceed your spot instance quota",
    "would exceed your fleet request quota",
    "would exceed your vcpu quota",
];

/// The NodeClaim `Launched` reasons and messages Karpenter writes for the quota codes.
const MAPPED: &[(&str, &str)] = &[
    ("SpotQuotaExceeded", "MaxSpotInstanceCountExceeded"),
    (
        "would exceed your spot instance quota",
        "MaxSpotInstanceCountExceeded",
    ),
    ("FleetQuotaExceeded", "MaxFleetCountExceeded"),
    (
        "would exceed your fleet request quota",
        "MaxFleetCountExceeded",
    ),
    ("would exceed your VCPU quota", "VcpuLimitExceeded"),
];

/// The EC2 codes Karpenter counts as insufficient capacity, with the quota to raise when the
/// code is a quota.
const CODES: &[(&str, Option<&str>)] = &[
    ("InsufficientInstanceCapacity", None),
    (
        "MaxSpotInstanceCountExceeded",
        Some("EC2 \"All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests\" (L-34B43A08), or the quota of the instance family's class"),
    ),
    (
        "VcpuLimitExceeded",
        Some("EC2 \"Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances\" (L-1216C47A), or the quota of the instance family's class (G and VT, P, ...)"),
    ),
    ("UnfulfillableCapacity", None),
    (
        "MaxFleetCountExceeded",
        Some("EC2 Fleet \"Fleet requests\" quota"),
    ),
    ("ReservationCapacityExceeded", None),
    ("SpotMaxPriceTooLow", None),
];

fn is_signal(text: &str) -> bool {
    SIGNALS
        .iter()
        .filter(|s| **s != "capacity block reservation")
        .any(|s| contains_ignore_ascii_case(text, s))
        || capacity_block_not_active(text)
}

/// EC2's `Your Capacity Block reservation <cr-id> is not active yet`.
fn capacity_block_not_active(text: &str) -> bool {
    contains_ignore_ascii_case(text, "capacity block reservation")
        && contains_ignore_ascii_case(text, "is not active yet")
}

/// The launch failed against a capacity reservation: EC2's reservation code or texts.
fn about_reservation(text: &str) -> bool {
    contains_ignore_ascii_case(text, "ReservationCapacityExceeded")
        || contains_ignore_ascii_case(text, "requested reservation does not have sufficient")
        || capacity_block_not_active(text)
}

/// The capacity reservation ids (`cr-` and 17 or 8 hex digits) a text names, in order.
fn reservation_ids(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while let Some(at) = text[i..].find("cr-") {
        let start = i + at;
        let boundary =
            start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'-');
        let hex: String = text[start + 3..]
            .chars()
            .take_while(char::is_ascii_hexdigit)
            .collect();
        let end = start + 3 + hex.len();
        let clean_end =
            end == text.len() || !(bytes[end].is_ascii_alphanumeric() || bytes[end] == b'-');
        if boundary && clean_end && (hex.len() == 17 || hex.len() == 8) {
            let id = format!("cr-{}", hex.to_ascii_lowercase());
            if !out.contains(&id) {
                out.push(id);
            }
        }
        i = start + 3;
    }
    out
}

/// A hit another rule explains better: the only fleet error is subnet exhaustion (KW214) or the
/// spot service-linked role (KW101), both of which Karpenter files under insufficient capacity;
/// or the NodeClaim's EC2NodeClass does not exist (KW503): Karpenter's `Create` wraps
/// `resolving nodeclass, ec2nodeclasses.karpenter.k8s.aws "<name>" not found` in an
/// InsufficientCapacityError so the scheduler stops trying it, though EC2 was never asked.
fn explained_elsewhere(text: &str) -> bool {
    let ice_code = CODES
        .iter()
        .any(|(c, _)| contains_ignore_ascii_case(text, &format!("{c}:")))
        || MAPPED
            .iter()
            .any(|(t, _)| contains_ignore_ascii_case(text, t))
        || contains_ignore_ascii_case(text, "we currently do not have sufficient")
        || contains_ignore_ascii_case(text, "unavailable during launch");
    !ice_code
        && (mentions_subnet_exhaustion(text)
            || contains_ignore_ascii_case(text, "ServiceLinkedRoleCreationNotPermitted")
            || nodeclass_missing(text))
}

/// The NodePool in a NodeClaim's generated name (`general-x7k2p` -> `general`); a pre-v0.32
/// Machine is named the same way after its Provisioner.
fn nodepool_by_claim_name(claim: &str) -> Option<String> {
    let (prefix, suffix) = claim.rsplit_once('-')?;
    (!prefix.is_empty()
        && suffix.len() == 5
        && suffix
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
    .then(|| prefix.to_string())
}

fn nodeclass_missing(text: &str) -> bool {
    (contains_ignore_ascii_case(text, "resolving nodeclass")
        || contains_ignore_ascii_case(text, "resolving node class"))
        && contains_ignore_ascii_case(text, "not found")
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let hits: Vec<&Message> = facts
        .messages
        .iter()
        .filter(|m| is_signal(&m.text) && !explained_elsewhere(&m.text))
        .collect();
    if hits.is_empty() {
        return Vec::new();
    }
    let mut codes: Vec<&str> = Vec::new();
    let mut quotas: Vec<&str> = Vec::new();
    let mut shortages: Vec<(String, String)> = Vec::new();
    // The zones EC2's own message says have the capacity (`... or choosing us-east-1b, ...`).
    let mut suggested: Vec<String> = Vec::new();
    let mut nodeclaims: Vec<String> = Vec::new();
    let mut all_unavailable = false;
    let mut spot_text = false;
    let mut reservation_hit = false;
    let mut block_not_active = false;
    let mut reservations: Vec<String> = Vec::new();
    for m in &hits {
        let t = &m.text;
        if about_reservation(t) {
            reservation_hit = true;
            block_not_active |= capacity_block_not_active(t);
            for id in reservation_ids(t) {
                if !reservations.contains(&id) {
                    reservations.push(id);
                }
            }
        }
        for (code, quota) in CODES {
            let present = if *code == "UnfulfillableCapacity" {
                // The v1.5+ `aws-error-code=UnfulfillableCapacity` suffix is on every fleet
                // error; only `UnfulfillableCapacity: <message>` is the code itself.
                contains_ignore_ascii_case(t, "UnfulfillableCapacity:")
            } else {
                contains_ignore_ascii_case(t, code)
                    || MAPPED
                        .iter()
                        .any(|(text, c)| c == code && contains_ignore_ascii_case(t, text))
            };
            if present && !codes.contains(code) {
                codes.push(code);
                if let Some(q) = quota {
                    quotas.push(q);
                }
            }
        }
        // A fleet error lists one shortage per type tried: `...g5.2xlarge capacity in ...
        // (us-east-1a)...; InsufficientInstanceCapacity: ...g6.2xlarge capacity in ...`.
        for pair in types_and_zones(t) {
            if !shortages.contains(&pair) {
                shortages.push(pair);
            }
        }
        for zone in suggested_zones(t) {
            if !suggested.contains(&zone) {
                suggested.push(zone);
            }
        }
        all_unavailable |=
            contains_ignore_ascii_case(t, "all requested instance types were unavailable");
        spot_text |= contains_ignore_ascii_case(t, "spot");
        if let Some(o) = m
            .object
            .as_ref()
            .filter(|o| o.kind.eq_ignore_ascii_case("nodeclaim"))
        {
            if !nodeclaims.contains(&o.name) {
                nodeclaims.push(o.name.clone());
            }
        } else if let Some(name) = tail_after(t, "NodeClaim ")
            .and_then(|r| r.split_whitespace().next().map(str::to_string))
        {
            if t.contains(" event: ") && !nodeclaims.contains(&name) {
                nodeclaims.push(name);
            }
        }
    }
    for r in &facts.logs {
        let t = format!("{} {}", r.message, r.error.as_deref().unwrap_or(""));
        if is_signal(&t) && !explained_elsewhere(&t) {
            if let Some(nc) = r.field_name("NodeClaim") {
                if !nodeclaims.contains(&nc) {
                    nodeclaims.push(nc);
                }
            }
        }
    }
    let nodepools: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for m in &hits {
            if let Some(np) = &m.nodepool {
                if !v.contains(np) {
                    v.push(np.clone());
                }
            }
        }
        for nc in &nodeclaims {
            // The NodeClaim object, or the `created nodeclaim` log line naming both.
            let from_objects = facts
                .nodeclaims
                .iter()
                .find(|c| &c.meta.name == nc)
                .and_then(|c| c.nodepool.clone());
            let from_logs = || facts.nodepool_of_claim_in_logs(nc);
            if let Some(np) = from_objects.or_else(from_logs) {
                if !v.contains(&np) {
                    v.push(np);
                }
            }
        }
        // Nothing names one: the only NodePool the input shows.
        if let ([], [only]) = (v.as_slice(), facts.nodepools.as_slice()) {
            v.push(only.meta.name.clone());
        }
        // Still none: Karpenter names each NodeClaim `<nodepool>-<5 random characters>`.
        if v.is_empty() {
            for nc in &nodeclaims {
                if let Some(np) = nodepool_by_claim_name(nc) {
                    if !v.contains(&np) {
                        v.push(np);
                    }
                }
            }
        }
        v
    };
    let legacy = before_v0_32(facts);
    // v1.3+: a launch into a reservation that fails for any reason (InsufficientInstanceCapacity
    // too, not only ReservationCapacityExceeded) makes Karpenter mark the reservation
    // unavailable, logged at DEBUG with the reservation and the EC2 code. A NodePool or
    // NodeClaim allowing only `reserved` launches nowhere else either.
    let mut reserved_ice = false;
    if !reservation_hit {
        let marked: Vec<String> = facts
            .logs
            .iter()
            .filter(|r| r.message == "marking capacity reservation unavailable")
            .filter(|r| {
                r.field_name("NodeClaim")
                    .is_none_or(|nc| nodeclaims.is_empty() || nodeclaims.contains(&nc))
            })
            .filter_map(|r| r.field_name("capacity-reservation-id"))
            .collect();
        let only_reserved = |values: Option<Vec<String>>| {
            values.is_some_and(|v| !v.is_empty() && v.iter().all(|c| c == "reserved"))
        };
        let pool_only_reserved = facts
            .nodepools
            .iter()
            .filter(|np| nodepools.contains(&np.meta.name))
            .any(|np| only_reserved(np.allowed_values("karpenter.sh/capacity-type")));
        let claim_only_reserved = facts
            .nodeclaims
            .iter()
            .filter(|c| nodeclaims.contains(&c.meta.name))
            .any(|c| {
                c.capacity_type.as_deref() == Some("reserved")
                    || c.meta.label("karpenter.sh/capacity-type") == Some("reserved")
                    || c.requirements.iter().any(|r| {
                        r.key == "karpenter.sh/capacity-type"
                            && r.operator == "In"
                            && only_reserved(Some(r.values.clone()))
                    })
            });
        if !marked.is_empty() || pool_only_reserved || claim_only_reserved {
            reservation_hit = true;
            reserved_ice = true;
            for id in marked {
                if id.starts_with("cr-") && !reservations.contains(&id) {
                    reservations.push(id);
                }
            }
        }
    }
    // The EC2NodeClasses of those NodePools (else every one in the input) and the capacity
    // reservations they select.
    let classes = nodeclasses_of(facts, &nodepools);
    let selected: Vec<&CapacityReservation> = classes
        .iter()
        .flat_map(|c| c.status_capacity_reservations.iter())
        .collect();
    // The reservation the launch targeted, when the text does not name it: the NodeClaim's
    // label or requirement (v1.3+ reserved offerings), else the NodePool's requirement, else
    // the EC2NodeClass's resolved reservations.
    let mut capacity_block = block_not_active;
    if reservation_hit {
        const ID_KEY: &str = "karpenter.k8s.aws/capacity-reservation-id";
        const TYPE_KEY: &str = "karpenter.k8s.aws/capacity-reservation-type";
        let mut from_claims: Vec<&str> = Vec::new();
        for c in facts
            .nodeclaims
            .iter()
            .filter(|c| nodeclaims.contains(&c.meta.name))
        {
            from_claims.extend(c.meta.label(ID_KEY));
            for r in c
                .requirements
                .iter()
                .filter(|r| r.key == ID_KEY && r.operator == "In")
            {
                if let [only] = r.values.as_slice() {
                    from_claims.push(only);
                }
            }
            capacity_block |= c.meta.label(TYPE_KEY) == Some("capacity-block")
                || c.requirements.iter().any(|r| {
                    r.key == TYPE_KEY
                        && !r.values.is_empty()
                        && r.values.iter().all(|v| v == "capacity-block")
                });
        }
        let from_pools: Vec<String> = facts
            .nodepools
            .iter()
            .filter(|np| nodepools.contains(&np.meta.name))
            .filter_map(|np| np.allowed_values(ID_KEY))
            .flatten()
            .collect();
        let found: Vec<String> = if reservations.is_empty() && from_claims.is_empty() {
            from_pools
        } else {
            from_claims.iter().map(|s| s.to_string()).collect()
        };
        for id in found {
            if id.starts_with("cr-") && !reservations.contains(&id) {
                reservations.push(id);
            }
        }
        // Still none: the reservations the EC2NodeClass resolved (its status).
        if reservations.is_empty() {
            for r in &selected {
                if !reservations.contains(&r.id) {
                    reservations.push(r.id.clone());
                }
            }
        }
    }
    let known: Vec<&CapacityReservation> = reservations
        .iter()
        .filter_map(|id| selected.iter().copied().find(|r| &r.id == id))
        .collect();
    if reservation_hit && !known.is_empty() && known.iter().all(|r| r.is_capacity_block()) {
        capacity_block = true;
    }
    // No offering left: every requested type was unavailable, or Karpenter then reports that no
    // instance type has the required offering.
    // The one NodePool hit allows a single offering (one type, one zone, one capacity type):
    // whatever EC2 lacked, it was that offering, and nothing is left to retry with.
    let single = (!reservation_hit && !reserved_ice)
        .then(|| single_offering(facts, &nodepools, &shortages))
        .flatten();
    let no_offering_left = all_unavailable
        || single.is_some()
        || scheduling_errors(facts).iter().any(|e| {
            e.clauses
                .iter()
                .any(|c| matches!(c.cause, Cause::InstanceTypes(f) if f.offering))
        });
    let quota_codes: Vec<&str> = codes
        .iter()
        .copied()
        .filter(|c| CODES.iter().any(|(k, q)| k == c && q.is_some()))
        .collect();
    let capacity_codes: Vec<&str> = codes
        .iter()
        .copied()
        // A reserved launch's codes are the reservation's answer, said with it.
        .filter(|_| !reserved_ice)
        .filter(|c| {
            !quota_codes.contains(c)
                && *c != "SpotMaxPriceTooLow"
                && !(reservation_hit && *c == "ReservationCapacityExceeded")
        })
        .collect();
    let price_too_low = codes.contains(&"SpotMaxPriceTooLow");
    let mut summary = String::new();
    let kind = if capacity_block {
        "Capacity Block"
    } else {
        "capacity reservation"
    };
    let named = match reservations.as_slice() {
        [] => None,
        ids => Some(ids.join(", ")),
    };
    let described = match reservations.as_slice() {
        [] => None,
        ids => Some(
            ids.iter()
                .map(|id| match selected.iter().find(|r| &r.id == id) {
                    Some(r) => describe_reservation(r, !capacity_block),
                    None => id.clone(),
                })
                .collect::<Vec<_>>()
                .join(", "),
        ),
    };
    let full = reservation_hit
        && (codes.contains(&"ReservationCapacityExceeded")
            || hits.iter().any(|m| {
                contains_ignore_ascii_case(
                    &m.text,
                    "requested reservation does not have sufficient",
                )
            }));
    if reservation_hit {
        let subject = match &described {
            Some(ids) => format!("EC2 {kind} {ids}"),
            None => format!("The EC2 {kind} the launch targeted"),
        };
        if full {
            summary.push_str(&format!(
                "{subject} has no free capacity left (ReservationCapacityExceeded: every reserved instance is in use, or still terminating): more instance types will not help, the reservation needs room or a fallback."
            ));
        }
        if reserved_ice {
            let codes: Vec<&str> = codes
                .iter()
                .copied()
                .filter(|c| !quota_codes.contains(c))
                .collect();
            let answer = match codes.as_slice() {
                [] => "an insufficient-capacity error".to_string(),
                c => c.join(", "),
            };
            let place = match shortages.as_slice() {
                [] => String::new(),
                s => format!(" for {}", shortage_list(s)),
            };
            summary.push_str(&format!(
                "{subject} could not take the launch: Karpenter launched into it (capacity type `reserved`) and EC2 answered {answer}{place}. A reservation holds only instances of its own type and zone, up to the count bought, while it is active: more instance types will not help, the reservation needs room or a fallback."
            ));
        }
        if block_not_active {
            if !summary.is_empty() {
                summary.push(' ');
            }
            summary.push_str(&format!(
                "{subject} is not active yet: instances launch into a Capacity Block only from its start time."
            ));
        }
        if named.is_none() {
            summary.push_str(" The text does not name it; the NodeClaim's `karpenter.k8s.aws/capacity-reservation-id` label and the EC2NodeClass's `capacityReservationSelectorTerms` do.");
        }
        if capacity_block {
            summary.push_str(
                " A Capacity Block is a fixed window bought in advance: a fixed number of instances from its start to its end, and it cannot be enlarged; Karpenter drains its nodes before the block expires."
            );
        }
        let expiring: Vec<&str> = known
            .iter()
            .filter(|r| r.state.as_deref() == Some("expiring"))
            .map(|r| r.id.as_str())
            .collect();
        if !expiring.is_empty() {
            summary.push_str(&format!(
                " The EC2NodeClass reports {} as expiring: Karpenter no longer launches into it.",
                expiring.join(", ")
            ));
        }
    }
    let other_capacity = !reserved_ice
        && (!shortages.is_empty()
            || !capacity_codes.is_empty()
            || (quota_codes.is_empty() && !price_too_low && !reservation_hit));
    if other_capacity {
        if !summary.is_empty() {
            summary.push(' ');
        }
        summary.push_str("EC2 has no capacity");
        if !shortages.is_empty() {
            summary.push_str(&format!(" for {}", shortage_list(&shortages)));
        }
        if !capacity_codes.is_empty() {
            summary.push_str(&format!(" ({})", capacity_codes.join(", ")));
        }
        summary.push('.');
    }
    let zones = zones_left(facts, &nodepools, &classes, &shortages);
    match &zones {
        Some(ZonesLeft::Free(free)) => summary.push_str(&format!(
            " Zone{} the input shows with no shortage reported: {}.",
            if free.len() > 1 { "s" } else { "" },
            free.join(", ")
        )),
        Some(ZonesLeft::NoneLeft(allowed)) => summary.push_str(&format!(
            " {} {} allows only {}, and {} the shortage.",
            if legacy { "Provisioner" } else { "NodePool" },
            nodepools.first().map(String::as_str).unwrap_or_default(),
            allowed.join(", "),
            if allowed.len() == 1 {
                "that zone reports"
            } else {
                "every one of them reports"
            }
        )),
        None => {}
    }
    // EC2's suggestion minus the zones that report the shortage themselves.
    suggested.retain(|z| !shortages.iter().any(|(_, short)| short == z));
    let pool_zones: Option<Vec<String>> = facts
        .nodepools
        .iter()
        .filter(|np| nodepools.contains(&np.meta.name))
        .find_map(|np| np.allowed_values("topology.kubernetes.io/zone"));
    let subnets = nodepools.first().and_then(|n| nodepool_subnets(facts, n));
    if !suggested.is_empty() {
        summary.push_str(&format!(
            " EC2 says it has the capacity in {}.",
            suggested.join(", ")
        ));
    }
    // Not a reservation launch, but the EC2NodeClass selects reservations the NodePool cannot
    // use: their capacity sits idle while the on-demand/spot launch fails.
    let unused: Vec<&CapacityReservation> = if reservation_hit {
        Vec::new()
    } else {
        selected
            .iter()
            .copied()
            .filter(|r| r.state.as_deref() != Some("expiring"))
            .filter(|_| {
                facts
                    .nodepools
                    .iter()
                    .filter(|np| nodepools.contains(&np.meta.name))
                    .any(|np| {
                        np.allowed_values("karpenter.sh/capacity-type")
                            .is_some_and(|v| !v.iter().any(|c| c == "reserved"))
                    })
            })
            .collect()
    };
    if !unused.is_empty() {
        summary.push_str(&format!(
            " The EC2NodeClass selects capacity reservation{} {}, but the NodePool's `karpenter.sh/capacity-type` does not allow `reserved`, so Karpenter never launches into {}.",
            if unused.len() > 1 { "s" } else { "" },
            unused.iter().map(|r| describe_reservation(r, true)).collect::<Vec<_>>().join(", "),
            if unused.len() > 1 { "them" } else { "it" }
        ));
    }
    if price_too_low {
        if !summary.is_empty() {
            summary.push(' ');
        }
        summary.push_str(
            "The spot request's max price is below EC2's current spot price (SpotMaxPriceTooLow).",
        );
    }
    if !quota_codes.is_empty() {
        if !summary.is_empty() {
            summary.push(' ');
        }
        summary.push_str(&format!(
            "An account quota refuses the launch ({}).",
            quota_codes.join(", ")
        ));
    }
    if !nodeclaims.is_empty() {
        summary.push_str(&format!(
            " Karpenter deleted the NodeClaim{} {} and marked the {} unavailable for a few minutes.",
            if nodeclaims.len() > 1 { "s" } else { "" },
            nodeclaims.join(", "),
            if reservation_hit && !other_capacity { "reservation" } else { "offering" }
        ));
    }
    if let Some((it, zone, capacity)) = &single {
        summary.push_str(&format!(
            " NodePool {} allows a single offering ({it}, {capacity}, {zone}): no other offering remains, so the pods stay Pending until EC2 has that capacity again.",
            nodepools.first().map(String::as_str).unwrap_or_default()
        ));
    } else if no_offering_left {
        summary.push_str(" No other offering remains: every requested instance type was unavailable, so the pods stay Pending.");
    } else if reservation_hit && !other_capacity {
        summary.push_str(" Karpenter retries with the NodePool's other capacity types, if it allows any besides `reserved`.");
    } else if !other_capacity
        && quota_codes
            .iter()
            .any(|c| matches!(*c, "VcpuLimitExceeded" | "MaxSpotInstanceCountExceeded"))
    {
        // A vCPU or spot quota is per account and instance class, not per offering: another
        // zone or size of the same class hits the same limit.
        summary.push_str(" Karpenter retries with the other allowed types and zones, but the quota counts every instance of its class: the types of the same class fail too until it is raised.");
    } else if let Some(it) = only_type(facts, &nodepools, &nodeclaims) {
        // Nothing else to fall back to but another zone or capacity type of that one type.
        summary.push_str(&format!(
            " Only {it} is allowed, so Karpenter can only retry it in another zone or capacity type{}.",
            if matches!(zones, Some(ZonesLeft::NoneLeft(_))) {
                ", and every allowed zone reports the shortage"
            } else {
                ""
            }
        ));
    } else {
        // With every allowed zone short, only other instance types are left to try.
        summary.push_str(if matches!(zones, Some(ZonesLeft::NoneLeft(_))) {
            " Karpenter retries with the other allowed instance types."
        } else {
            " Karpenter retries with the other allowed types and zones."
        });
    }
    let fallback = fallback_launch(facts, &hits, &nodeclaims, &nodepools);
    if let Some(launched) = &fallback {
        summary.push_str(&format!(
            " Karpenter then launched NodeClaim {launched} for the same NodePool: the fallback worked, and nothing needs fixing unless the shortage comes back."
        ));
    }
    let np = nodepools
        .first()
        .map(String::as_str)
        .unwrap_or("<nodepool>");
    let mut steps = Vec::new();
    if reservation_hit {
        let id = named.clone().unwrap_or_else(|| "<cr-id>".to_string());
        let first = reservations
            .first()
            .cloned()
            .unwrap_or_else(|| "<cr-id>".to_string());
        let describe = match reservations.as_slice() {
            [] => "aws ec2 describe-capacity-reservations --filters Name=state,Values=active,scheduled,pending".to_string(),
            ids => format!("aws ec2 describe-capacity-reservations --capacity-reservation-ids {}", ids.join(" ")),
        };
        steps.push(Remediation::command(
            format!("Look at {kind} {id}: its type (default or capacity-block), state, start and end, total and available instances:"),
            format!("{describe} --query 'CapacityReservations[].[CapacityReservationId,ReservationType,InstanceType,AvailabilityZone,State,StartDate,EndDate,TotalInstanceCount,AvailableInstanceCount]' --output table"),
        ));
        if full || reserved_ice {
            steps.push(Remediation::command(
                "See which Karpenter nodes occupy it (a node being consolidated or terminating still holds its slot for a few minutes):",
                format!("kubectl get nodes -l karpenter.k8s.aws/capacity-reservation-id={first} -L karpenter.sh/nodepool,node.kubernetes.io/instance-type"),
            ));
        }
        if block_not_active {
            steps.push(Remediation::text(format!(
                "Capacity Block {id} is not active yet: pods that must run on it wait until its StartDate (above); schedule the workload for that window, or let the NodePool use on-demand until then."
            )));
        }
        if !full {
            // Not active yet: nothing to enlarge.
        } else if capacity_block {
            let ty = known
                .iter()
                .find_map(|r| r.instance_type.clone())
                .unwrap_or_else(|| "<instance-type>".to_string());
            steps.push(Remediation::command(
                format!("A Capacity Block cannot be enlarged and ends at a fixed time{}: buy another block (or extend this one) for the extra instances and the time you need:", block_end(&known).map(|e| format!(" ({e})")).unwrap_or_default()),
                format!("aws ec2 describe-capacity-block-offerings --instance-type {ty} --instance-count <n> --capacity-duration-hours <hours>"),
            ));
        } else {
            steps.push(Remediation::command(
                format!("Enlarge On-Demand Capacity Reservation {first} to the number of instances you need:"),
                format!("aws ec2 modify-capacity-reservation --capacity-reservation-id {first} --instance-count <total-instances>"),
            ));
        }
        steps.push(Remediation::yaml(
            format!("Or let NodePool {np} fall back to on-demand while the reservation {}; Karpenter still fills the reservation first (`kubectl edit nodepool {np}`):", if full {
                "is full"
            } else if reserved_ice {
                "is unavailable"
            } else {
                "is not active"
            }),
            "spec:\n  template:\n    spec:\n      requirements:\n        - key: karpenter.sh/capacity-type\n          operator: In\n          values: [\"reserved\", \"on-demand\"]\n",
        ));
    }
    if !unused.is_empty() {
        let ids: Vec<&str> = unused.iter().map(|r| r.id.as_str()).collect();
        steps.push(Remediation::yaml(
            format!("Let NodePool {np} use the reserved capacity ({}) before on-demand and spot (`kubectl edit nodepool {np}`):", ids.join(", ")),
            "spec:\n  template:\n    spec:\n      requirements:\n        - key: karpenter.sh/capacity-type\n          operator: In\n          values: [\"reserved\", \"on-demand\", \"spot\"]\n",
        ));
    }
    // Only the account's fleet-request quota refused the launch: more families, zones or
    // capacity types would hit the same quota.
    let fleet_quota_only = !other_capacity
        && !reservation_hit
        && !price_too_low
        && !quota_codes.is_empty()
        && quota_codes.iter().all(|c| *c == "MaxFleetCountExceeded");
    if (other_capacity || !reservation_hit) && !fleet_quota_only {
        let zones_hint = match &zones {
            Some(ZonesLeft::NoneLeft(_)) => "more zones",
            _ => "every zone",
        };
        // On-demand next to spot only for a NodePool the input shows limited to spot; when the
        // input does not show its capacity types, a step of its own says when it applies.
        let capacity = capacity_types_of(facts, &nodepools, &nodeclaims);
        let spot_only = capacity == Some(true);
        let sets = requirement_sets(facts, &nodepools, &nodeclaims);
        let fallback = fallback_requirements(&shortages, &pool_categories(&sets), spot_only);
        let capacity_hint = if spot_only {
            ", and on-demand next to spot"
        } else {
            ""
        };
        let zones_and = if spot_only {
            format!(", {zones_hint}")
        } else {
            format!(" and {zones_hint}")
        };
        let families = if fallback.contains("generation") {
            "more families and sizes"
        } else {
            // GPU and other accelerated types fall back to their own kind only.
            "more accelerated families and sizes"
        };
        // The fallback's category requirement is ANDed with a narrower family or type list.
        let replaces = narrowing_key(&sets)
            .map(|k| format!("; the category requirement below replaces its `{k}` one"))
            .unwrap_or_default();
        let (pool, pool_res) = if legacy {
            ("Provisioner", "provisioner")
        } else {
            ("NodePool", "nodepool")
        };
        steps.push(Remediation::yaml(
            format!("Give {pool} {np} more to fall back to: {families}{zones_and}{capacity_hint} (`kubectl edit {pool_res} {np}`{replaces}):"),
            pool_requirements_yaml(legacy, &indent(&fallback, 8)),
        ));
        if capacity.is_none() {
            steps.push(Remediation::yaml(
                format!("If {pool} {np} allows only spot (`karpenter.sh/capacity-type In [spot]`; `kubectl get {pool_res} {np} -o yaml` shows it), add on-demand next to it: Karpenter still prefers spot and launches on-demand when spot has no capacity (`kubectl edit {pool_res} {np}`):"),
                pool_requirements_yaml(legacy, &indent(CAPACITY_BOTH, 8)),
            ));
        }
    }
    if !suggested.is_empty() {
        let pool = if legacy { "Provisioner" } else { "NodePool" };
        let pool_res = if legacy { "provisioner" } else { "nodepool" };
        let not_allowed: Vec<&String> = match &pool_zones {
            Some(allowed) => suggested.iter().filter(|z| !allowed.contains(z)).collect(),
            None => Vec::new(),
        };
        if let (Some(allowed), false) = (&pool_zones, not_allowed.is_empty()) {
            // The NodePool's zones stay: the YAML is the whole list with EC2's zones added.
            let mut zones = allowed.clone();
            zones.extend(not_allowed.iter().map(|z| (*z).clone()));
            let values = zones
                .iter()
                .map(|z| format!("\"{z}\""))
                .collect::<Vec<_>>()
                .join(", ");
            let requirements = if legacy {
                format!("spec:\n  requirements:\n    - key: topology.kubernetes.io/zone\n      operator: In\n      values: [{values}]\n")
            } else {
                format!("spec:\n  template:\n    spec:\n      requirements:\n        - key: topology.kubernetes.io/zone\n          operator: In\n          values: [{values}]\n")
            };
            steps.insert(
                0,
                Remediation::yaml(
                    format!(
                        "Let {pool} {np} launch where EC2 has the capacity: add {} to its zones (`kubectl edit {pool_res} {np}`):",
                        not_allowed.iter().map(|z| z.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                    requirements,
                ),
            );
        }
        if let Some(sub) = &subnets {
            let lacking = sub.missing(&suggested);
            if !lacking.is_empty() {
                let zones: Vec<&str> = lacking.iter().map(|z| z.as_str()).collect();
                let class = if legacy {
                    "AWSNodeTemplate"
                } else {
                    "EC2NodeClass"
                };
                let at = usize::from(!not_allowed.is_empty() && pool_zones.is_some());
                steps.insert(
                    at,
                    Remediation::command(
                        format!(
                            "{class} {} has no subnet in {}: give it one there (tag a subnet with the tag its selector matches), or Karpenter cannot launch in the zones EC2 suggests:",
                            sub.nodeclass,
                            zones.join(", ")
                        ),
                        sub.tag_subnet_command(&zones.join(",")),
                    ),
                );
            }
        }
    }
    // A quota alone is the cause: asking for more of it comes first.
    let quota_first = !other_capacity && !reservation_hit && !price_too_low;
    for (i, q) in quotas.iter().enumerate() {
        let step = Remediation::command(
            format!("Ask for a Service Quotas increase: {q}."),
            "aws service-quotas list-service-quotas --service-code ec2 --query \"Quotas[?contains(QuotaName, 'Spot') || contains(QuotaName, 'On-Demand') || contains(QuotaName, 'Fleet')].[QuotaName,QuotaCode,Value]\" --output table",
        );
        if quota_first {
            steps.insert(i.min(steps.len()), step);
        } else {
            steps.push(step);
        }
    }
    if codes.contains(&"SpotMaxPriceTooLow") {
        steps.push(Remediation::text(
            if legacy {
                "Remove the spot max price (the AWSNodeTemplate's launch template or the Provisioner's provider settings): Karpenter's spot requests should pay up to the on-demand price."
            } else {
                "Remove the spot max price (a launch template or old provisioner setting): Karpenter's spot requests should pay up to the on-demand price."
            },
        ));
    }
    // The pods the failed launches were for: what the user is asking about.
    let waiting = pods_waiting_on(facts, hits.iter().copied(), &nodeclaims);
    let mut related: Vec<&'static str> = Vec::new();
    if spot_text || codes.contains(&"MaxSpotInstanceCountExceeded") {
        related.push("KW216");
    }
    vec![Diagnosis::new(&META, summary)
        .with_severity(if fallback.is_some() {
            Severity::Info
        } else if no_offering_left {
            Severity::Error
        } else {
            Severity::Warning
        })
        .with_node_pool(nodepools.first().map(String::as_str))
        .with_objects(&waiting)
        .with_messages(hits.iter().copied())
        .with_related(&related)
        .with_remediation(steps)]
}

/// A NodeClaim of the same NodePool that Karpenter's log shows launched after the last
/// shortage, as `name (type in zone)`: the retry found an offering, so the shortage is history.
/// Ordered by the records' timestamps, or by line within one document when a time is missing.
fn fallback_launch(
    facts: &Facts,
    hits: &[&Message],
    failed: &[String],
    nodepools: &[String],
) -> Option<String> {
    let last = hits.last()?;
    let after_last = |time: Option<&str>, evidence: &crate::document::Evidence| match (
        time,
        last.time.as_deref(),
    ) {
        (Some(t), Some(l))
            if t.len() == l.len() && t.as_bytes().first().is_some_and(u8::is_ascii_digit) =>
        {
            t > l
        }
        _ => evidence.source == last.evidence.source && evidence.line > last.evidence.line,
    };
    facts.logs.iter().find_map(|r| {
        if !matches!(
            r.message.as_str(),
            "launched nodeclaim" | "launched machine"
        ) {
            return None;
        }
        let claim = ["NodeClaim", "nodeclaim", "Machine", "machine"]
            .iter()
            .find_map(|k| r.field_name(k))?;
        let pool = facts
            .nodepool_of_claim_in_logs(&claim)
            .or_else(|| nodepool_by_claim_name(&claim))?;
        if failed.contains(&claim)
            || !nodepools.contains(&pool)
            || !after_last(r.time.as_deref(), &r.evidence)
        {
            return None;
        }
        let field = |k: &str| r.fields.get(k).and_then(|v| v.as_str());
        Some(match (field("instance-type"), field("zone")) {
            (Some(it), Some(zone)) => format!("{claim} ({it} in {zone})"),
            _ => claim,
        })
    })
}

/// The EC2NodeClasses the NodePools reference; every one in the input when none is found.
fn nodeclasses_of<'a>(facts: &'a Facts, nodepools: &[String]) -> Vec<&'a NodeClass> {
    let referenced: Vec<&NodeClass> = facts
        .nodepools
        .iter()
        .filter(|np| nodepools.contains(&np.meta.name))
        .filter_map(|np| facts.nodeclass(np.nodeclass_ref.as_deref()?))
        .collect();
    if referenced.is_empty() {
        facts.nodeclasses.iter().collect()
    } else {
        referenced
    }
}

/// `cr-... (Capacity Block, p5.48xlarge in us-east-1a, ends <time>)` from the EC2NodeClass
/// status, with what it names (the type only when `with_type`).
fn describe_reservation(r: &CapacityReservation, with_type: bool) -> String {
    let mut parts: Vec<String> = Vec::new();
    match r.reservation_type.as_deref().filter(|_| with_type) {
        Some("capacity-block") => parts.push("Capacity Block".to_string()),
        Some("default") => parts.push("On-Demand Capacity Reservation".to_string()),
        Some(other) => parts.push(other.to_string()),
        None => {}
    }
    match (&r.instance_type, &r.zone) {
        (Some(t), Some(z)) => parts.push(format!("{t} in {z}")),
        (Some(t), None) => parts.push(t.clone()),
        (None, Some(z)) => parts.push(format!("in {z}")),
        (None, None) => {}
    }
    if let Some(end) = &r.end_time {
        parts.push(format!("ends {end}"));
    }
    if parts.is_empty() {
        r.id.clone()
    } else {
        format!("{} ({})", r.id, parts.join(", "))
    }
}

/// `ends <time>` of the first Capacity Block with a known end.
fn block_end(known: &[&CapacityReservation]) -> Option<String> {
    known
        .iter()
        .filter(|r| r.is_capacity_block())
        .find_map(|r| r.end_time.as_ref().map(|e| format!("ends {e}")))
}

enum ZonesLeft {
    /// Zones the NodePool (and its EC2NodeClass subnets) allow with no shortage reported.
    Free(Vec<String>),
    /// The NodePool allows only these zones, and each reports the shortage.
    NoneLeft(Vec<String>),
}

/// The zones the launch could still use, from the NodePool's zone requirement and the
/// EC2NodeClass's resolved subnets, minus those a shortage names. `None` without a named
/// shortage or without zones in the input.
/// The single offering (instance type, zone, capacity type) of the only NodePool hit, when its
/// requirements allow exactly one of each (`In` with one value) and no shortage EC2 names is of
/// another type or zone (the NodePool shown would then not be the one that launched).
fn single_offering(
    facts: &Facts,
    nodepools: &[String],
    shortages: &[(String, String)],
) -> Option<(String, String, String)> {
    let [np] = nodepools else {
        return None;
    };
    let pool = facts.nodepools.iter().find(|p| &p.meta.name == np)?;
    let one = |key: &str| {
        pool.allowed_values(key)
            .filter(|v| v.len() == 1)
            .and_then(|v| v.into_iter().next())
    };
    let it = one("node.kubernetes.io/instance-type")?;
    let zone = one("topology.kubernetes.io/zone")?;
    let capacity = one("karpenter.sh/capacity-type")?;
    shortages
        .iter()
        .all(|(t, z)| *t == it && *z == zone)
        .then_some((it, zone, capacity))
}

/// The one instance type the NodeClaims hit (or else the NodePools hit) allow, when each allows
/// exactly that one (`node.kubernetes.io/instance-type In [<type>]`).
fn only_type(facts: &Facts, nodepools: &[String], nodeclaims: &[String]) -> Option<String> {
    let sets = requirement_sets(facts, nodepools, nodeclaims);
    let mut types = sets.iter().map(|reqs| {
        let mut it = reqs
            .iter()
            .filter(|r| r.key == "node.kubernetes.io/instance-type" && r.operator == "In");
        match (it.next(), it.next()) {
            (Some(r), None) if r.values.len() == 1 => Some(r.values[0].clone()),
            _ => None,
        }
    });
    let first = types.next()??;
    types.all(|t| t.as_deref() == Some(&first)).then_some(first)
}

fn zones_left(
    facts: &Facts,
    nodepools: &[String],
    classes: &[&NodeClass],
    shortages: &[(String, String)],
) -> Option<ZonesLeft> {
    if shortages.is_empty() {
        return None;
    }
    let pool_zones: Option<Vec<String>> = facts
        .nodepools
        .iter()
        .filter(|np| nodepools.contains(&np.meta.name))
        .find_map(|np| np.allowed_values("topology.kubernetes.io/zone"));
    let mut subnet_zones: Vec<String> = Vec::new();
    for (_, z) in classes.iter().flat_map(|c| c.status_subnets.iter()) {
        if !z.is_empty() && !subnet_zones.contains(z) {
            subnet_zones.push(z.clone());
        }
    }
    let allowed: Vec<String> = match (pool_zones, subnet_zones.is_empty()) {
        (Some(p), true) => p,
        (Some(p), false) => p.into_iter().filter(|z| subnet_zones.contains(z)).collect(),
        (None, false) => subnet_zones,
        (None, true) => return None,
    };
    if allowed.is_empty() {
        return None;
    }
    let short: Vec<&str> = shortages.iter().map(|(_, z)| z.as_str()).collect();
    let free: Vec<String> = allowed
        .iter()
        .filter(|z| !short.contains(&z.as_str()))
        .cloned()
        .collect();
    Some(if free.is_empty() {
        ZonesLeft::NoneLeft(allowed)
    } else {
        ZonesLeft::Free(free)
    })
}

/// The zones EC2 suggests in an insufficient-capacity or unsupported-zone message: `You can
/// currently get <type> capacity by not specifying an Availability Zone in your request or
/// choosing us-east-1b, us-east-1c.` / `... launching in us-east-1a, us-east-1c`. Only tokens
/// shaped like a zone (a region and a letter) count; the list ends at the first other word.
fn suggested_zones(text: &str) -> Vec<String> {
    let mut zones: Vec<String> = Vec::new();
    for marker in ["choosing ", "launching in "] {
        let mut rest = text;
        while let Some(at) = find_ignore_ascii_case(rest, marker) {
            rest = &rest[at + marker.len()..];
            for token in rest
                .split([',', ' '])
                .filter(|t| !t.is_empty() && *t != "or" && *t != "and")
            {
                let zone = token.trim_end_matches(['.', ';', ')']);
                let is_zone = zone.len() > 1
                    && zone.ends_with(|c: char| c.is_ascii_lowercase())
                    && is_region(&zone[..zone.len() - 1]);
                if !is_zone {
                    break;
                }
                if !zones.iter().any(|z| z == zone) {
                    zones.push(zone.to_string());
                }
                if token.len() != zone.len() {
                    // `us-east-1d.`: the sentence ends.
                    break;
                }
            }
        }
    }
    zones
}

/// `g5.2xlarge, g6.2xlarge in us-east-1a, m5.large in us-east-1b`: the types short in each
/// zone, zones in the order the text names them.
fn shortage_list(shortages: &[(String, String)]) -> String {
    let mut zones: Vec<(&str, Vec<&str>)> = Vec::new();
    for (ty, zone) in shortages {
        match zones.iter_mut().find(|(z, _)| z == zone) {
            Some((_, types)) => types.push(ty),
            None => zones.push((zone, vec![ty])),
        }
    }
    zones
        .iter()
        .map(|(zone, types)| format!("{} in {zone}", types.join(", ")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Instance categories of accelerated hardware: a pool short of GPUs falls back to other GPU
/// families, never to general-purpose ones.
const ACCELERATED_CATEGORIES: &[&str] = &["g", "gr", "p", "inf", "trn", "dl", "f", "vt"];

/// The requirement list items of the fall-back step: more families of the short types'
/// categories when those are all accelerated (no generation bound: inf1/inf2 and trn1 would
/// fail one), else the current general-purpose generations.
fn fallback_requirements(
    shortages: &[(String, String)],
    pool_categories: &[String],
    with_capacity_types: bool,
) -> String {
    let mut categories: Vec<String> = Vec::new();
    for (ty, _) in shortages {
        let c = category_of(ty);
        if !categories.contains(&c) {
            categories.push(c);
        }
    }
    // No type named in the error: the categories the NodePool (or NodeClaim) allows.
    if categories.is_empty() {
        categories = pool_categories.to_vec();
    }
    let accelerated = !categories.is_empty()
        && categories
            .iter()
            .all(|c| ACCELERATED_CATEGORIES.contains(&c.as_str()));
    let capacity = if with_capacity_types {
        CAPACITY_BOTH
    } else {
        ""
    };
    if accelerated {
        let values: Vec<String> = categories.iter().map(|c| format!("\"{c}\"")).collect();
        format!(
            "- key: karpenter.k8s.aws/instance-category\n  operator: In\n  values: [{}]\n{capacity}",
            values.join(", ")
        )
    } else {
        format!("- key: karpenter.k8s.aws/instance-category\n  operator: In\n  values: [\"c\", \"m\", \"r\"]\n- key: karpenter.k8s.aws/instance-generation\n  operator: Gt\n  values: [\"5\"]\n{capacity}")
    }
}

const CAPACITY_BOTH: &str =
    "- key: karpenter.sh/capacity-type\n  operator: In\n  values: [\"spot\", \"on-demand\"]\n";

/// The instance category of a type or family name: its leading letters (`g5.2xlarge` -> `g`,
/// `inf2` -> `inf`, `p4d` -> `p`).
fn category_of(ty: &str) -> String {
    ty.chars().take_while(|c| c.is_ascii_lowercase()).collect()
}

/// The requirements of the NodeClaims hit (they carry their NodePool's), else of their
/// NodePools as the input shows them.
fn requirement_sets<'a>(
    facts: &'a Facts,
    nodepools: &[String],
    nodeclaims: &[String],
) -> Vec<&'a [Requirement]> {
    let claims: Vec<&[Requirement]> = facts
        .nodeclaims
        .iter()
        .filter(|c| nodeclaims.contains(&c.meta.name) && !c.requirements.is_empty())
        .map(|c| c.requirements.as_slice())
        .collect();
    if !claims.is_empty() {
        return claims;
    }
    facts
        .nodepools
        .iter()
        .filter(|p| nodepools.contains(&p.meta.name) && !p.meta.from_table)
        .map(|p| p.requirements.as_slice())
        .collect()
}

/// The instance categories the requirements allow, from their category, family or type `In`
/// lists; a GPU requirement without one of those means the GPU categories.
fn pool_categories(sets: &[&[Requirement]]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut gpu = false;
    for r in sets.iter().flat_map(|s| s.iter()) {
        gpu |= r.key.starts_with("karpenter.k8s.aws/instance-gpu-") && r.operator != "DoesNotExist";
        if r.operator != "In" {
            continue;
        }
        let values: Vec<String> = match r.key.as_str() {
            "karpenter.k8s.aws/instance-category" => r.values.clone(),
            "karpenter.k8s.aws/instance-family" | "node.kubernetes.io/instance-type" => {
                r.values.iter().map(|v| category_of(v)).collect()
            }
            _ => continue,
        };
        for v in values {
            if !v.is_empty() && !out.contains(&v) {
                out.push(v);
            }
        }
    }
    if out.is_empty() && gpu {
        out = vec!["g".to_string(), "p".to_string()];
    }
    out
}

/// The family or type list that a new category requirement would still be ANDed with.
fn narrowing_key(sets: &[&[Requirement]]) -> Option<&'static str> {
    [
        "karpenter.k8s.aws/instance-family",
        "node.kubernetes.io/instance-type",
    ]
    .into_iter()
    .find(|k| {
        sets.iter()
            .flat_map(|s| s.iter())
            .any(|r| r.key == *k && r.operator == "In")
    })
}

/// What the input shows of the capacity types the NodePool hit allows: `Some(true)` only spot,
/// `Some(false)` on-demand too (a NodePool shown without the requirement defaults to
/// on-demand), `None` when it does not show them.
fn capacity_types_of(facts: &Facts, nodepools: &[String], nodeclaims: &[String]) -> Option<bool> {
    const KEY: &str = "karpenter.sh/capacity-type";
    let of = |reqs: &[Requirement]| {
        reqs.iter()
            .filter(|r| r.key == KEY)
            .find_map(|r| match r.operator.as_str() {
                "In" => Some(!r.values.is_empty() && r.values.iter().all(|v| v == "spot")),
                "NotIn" => Some(r.values.iter().any(|v| v == "on-demand")),
                _ => None,
            })
    };
    let claims = facts
        .nodeclaims
        .iter()
        .filter(|c| nodeclaims.contains(&c.meta.name))
        .find_map(|c| of(&c.requirements));
    let pools = || {
        facts
            .nodepools
            .iter()
            .filter(|p| nodepools.contains(&p.meta.name) && !p.meta.from_table)
            .map(|p| of(&p.requirements).unwrap_or(false))
            .reduce(|a, b| a && b)
    };
    // The scheduler's `requirements=` are the NodePool's and the pod's together.
    let scheduling = || {
        scheduling_errors(facts).iter().find_map(|e| {
            e.clauses
                .iter()
                .filter(|c| c.nodepool.as_ref().is_none_or(|n| nodepools.contains(n)))
                .find_map(|c| in_values(c.requirements.as_deref()?, KEY))
                .map(|v| v == ["spot"])
        })
    };
    claims.or_else(pools).or_else(scheduling)
}

/// `text` with every line indented by `n` spaces.
fn indent(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    text.lines().map(|l| format!("{pad}{l}\n")).collect()
}

/// Every `(instance type, zone)` of `We currently do not have sufficient <type> capacity in
/// the Availability Zone you requested (<zone>)`, in order.
fn types_and_zones(text: &str) -> Vec<(String, String)> {
    const MARKER: &str = "do not have sufficient ";
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = find_ignore_ascii_case(rest, MARKER) {
        let after = &rest[at + MARKER.len()..];
        rest = after;
        let Some(ty) = after.split_whitespace().next() else {
            break;
        };
        // The zone of this shortage: before the next one starts.
        let this = &after[..find_ignore_ascii_case(after, MARKER).unwrap_or(after.len())];
        let Some(zone_at) = find_ignore_ascii_case(this, "you requested (") else {
            continue;
        };
        let zone: String = this[zone_at + "you requested (".len()..]
            .chars()
            .take_while(|c| *c != ')')
            .collect();
        if !zone.is_empty() {
            out.push((ty.to_string(), zone));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check_only, ids};

    #[test]
    fn every_shortage_of_a_fleet_error_and_a_gpu_fallback() {
        let text = "InsufficientInstanceCapacity: We currently do not have sufficient g5.2xlarge capacity in the Availability Zone you requested (us-east-1a). You can currently get g5.2xlarge capacity by not specifying an Availability Zone in your request or choosing us-east-1b.; InsufficientInstanceCapacity: We currently do not have sufficient g6.2xlarge capacity in the Availability Zone you requested (us-east-1c). Our system will be working on provisioning additional capacity.";
        let shortages = types_and_zones(text);
        let pair = |t: &str, z: &str| (t.to_string(), z.to_string());
        assert_eq!(
            shortages,
            [
                pair("g5.2xlarge", "us-east-1a"),
                pair("g6.2xlarge", "us-east-1c")
            ]
        );
        let gpu = fallback_requirements(&shortages, &[], true);
        assert!(
            gpu.contains("values: [\"g\"]") && !gpu.contains("generation"),
            "{gpu}"
        );
        let mixed =
            fallback_requirements(&[pair("g5.xlarge", "a"), pair("m5.large", "a")], &[], true);
        assert!(mixed.contains("[\"c\", \"m\", \"r\"]"), "{mixed}");
        assert!(fallback_requirements(&[], &[], true).contains("instance-generation"));
        // A NodePool already allowing both capacity types gets no capacity-type entry.
        assert!(fallback_requirements(&[], &[], true).contains("capacity-type"));
        assert!(!fallback_requirements(&[], &[], false).contains("capacity-type"));
        let same_zone = [
            pair("g5.2xlarge", "a"),
            pair("m5.large", "b"),
            pair("g6.2xlarge", "a"),
        ];
        assert_eq!(
            shortage_list(&same_zone),
            "g5.2xlarge, g6.2xlarge in a, m5.large in b"
        );
    }

    #[test]
    fn on_demand_advice_only_for_a_pool_shown_spot_only() {
        let ice = r#"{"level":"ERROR","message":"failed launching nodeclaim","NodeClaim":{"name":"web-8wq2m"},"error":"creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient m5.xlarge capacity in the Availability Zone you requested (us-east-1a)."}"#;
        let pool = |values: &str| {
            format!("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      requirements:\n        - key: karpenter.sh/capacity-type\n          operator: In\n          values: [{values}]\n---\n{ice}\n")
        };
        let fix = |text: &str| {
            check_only("KW215", text).diagnoses[0]
                .remediation
                .iter()
                .map(|r| format!("{} {}", r.text, r.yaml.as_deref().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join("\n")
        };
        // Not shown: said conditionally, in a step of its own.
        let unknown = fix(ice);
        assert!(!unknown.contains("and on-demand next to spot"), "{unknown}");
        assert!(
            unknown.contains("If NodePool web allows only spot"),
            "{unknown}"
        );
        // Shown spot only: part of the fallback.
        let spot = fix(&pool(r#""spot""#));
        assert!(spot.contains("and on-demand next to spot"), "{spot}");
        assert!(!spot.contains("If NodePool"), "{spot}");
        // Shown on-demand: no capacity-type advice at all.
        let on_demand = fix(&pool(r#""on-demand""#));
        assert!(!on_demand.contains("capacity-type"), "{on_demand}");
        // The scheduler's requirements say spot only.
        let scheduled = format!(
            "{ice}\n{}",
            r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"api-1","namespace":"web"},"error":"incompatible with nodepool \"web\", daemonset overhead={\"cpu\":\"200m\"}, no instance type has the required offering, requirements=karpenter.sh/capacity-type In [spot], karpenter.sh/nodepool In [web], resources={\"cpu\":\"3\"}"}"#
        );
        assert!(fix(&scheduled).contains("and on-demand next to spot"));
    }

    #[test]
    fn a_gpu_pool_falls_back_to_accelerated_categories() {
        let text = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: gpu\nspec:\n  template:\n    spec:\n      requirements:\n        - key: karpenter.k8s.aws/instance-family\n          operator: In\n          values: [\"g5\"]\n---\nlaunching nodeclaim, creating instance, insufficient capacity, all requested instance types were unavailable during launch\n";
        let d = &check_only("KW215", text).diagnoses[0];
        let step = d
            .remediation
            .iter()
            .find(|r| r.text.contains("families and sizes"))
            .expect("fallback step");
        let yaml = step.yaml.as_deref().unwrap_or_default();
        assert!(yaml.contains("values: [\"g\"]"), "{yaml}");
        assert!(!yaml.contains("\"c\""), "{yaml}");
        assert!(step.text.contains("accelerated") && step.text.contains("instance-family"));
        let cats = |key: &str, op: &str, v: &[&str]| {
            let r = Requirement {
                key: key.to_string(),
                operator: op.to_string(),
                values: v.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            };
            pool_categories(&[std::slice::from_ref(&r)])
        };
        assert_eq!(
            cats(
                "node.kubernetes.io/instance-type",
                "In",
                &["inf2.xlarge", "trn1.2xlarge"]
            ),
            ["inf", "trn"]
        );
        assert_eq!(
            cats("karpenter.k8s.aws/instance-gpu-count", "Gt", &["0"]),
            ["g", "p"]
        );
    }

    #[test]
    fn zones_ec2_suggests() {
        assert_eq!(
            suggested_zones("We currently do not have sufficient m5.large capacity in the Availability Zone you requested (us-east-1b). Our system will be working on provisioning additional capacity. You can currently get m5.large capacity by not specifying an Availability Zone in your request or choosing us-east-1a, us-east-1c, us-east-1d."),
            ["us-east-1a", "us-east-1c", "us-east-1d"]
        );
        assert_eq!(
            suggested_zones("try launching in us-west-2a or us-west-2c; the rest"),
            ["us-west-2a", "us-west-2c"]
        );
        // Not a zone after the marker: nothing.
        assert!(suggested_zones("choosing a different instance type").is_empty());
    }

    #[test]
    fn the_suggested_zones_join_the_nodepool_zones_in_the_fix() {
        let text = r#"{"level":"ERROR","message":"failed launching nodeclaim","NodeClaim":{"name":"web-x1"},"error":"creating instance, insufficient capacity, InsufficientInstanceCapacity: We currently do not have sufficient m5.large capacity in the Availability Zone you requested (us-east-1a). Our system will be working on provisioning additional capacity. You can currently get m5.large capacity by not specifying an Availability Zone in your request or choosing us-east-1b, us-east-1c."}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: web
spec:
  template:
    spec:
      requirements:
      - key: topology.kubernetes.io/zone
        operator: In
        values: ["us-east-1a"]
"#;
        let d = &check_only("KW215", text).diagnoses[0];
        assert!(
            d.summary
                .contains("EC2 says it has the capacity in us-east-1b, us-east-1c"),
            "{}",
            d.summary
        );
        let yaml = d.remediation[0].yaml.as_deref().unwrap_or_default();
        assert!(
            yaml.contains("values: [\"us-east-1a\", \"us-east-1b\", \"us-east-1c\"]"),
            "{yaml}"
        );
    }

    #[test]
    fn quota_reasons_of_a_nodeclaim_condition() {
        for (reason, message, code) in [
            ("SpotQuotaExceeded", "A spot instance launch was requested but this would exceed your spot instance quota", "MaxSpotInstanceCountExceeded"),
            ("FleetQuotaExceeded", "A fleet launch was requested but this would exceed your fleet request quota", "MaxFleetCountExceeded"),
            ("VCPULimitExceeded", "An instance was requested that would exceed your VCPU quota", "VcpuLimitExceeded"),
        ] {
            let text = format!("apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: gpu-1\nstatus:\n  conditions:\n  - type: Launched\n    status: Unknown\n    reason: {reason}\n    message: {message}\n");
            let report = check_only("KW215", &text);
            assert_eq!(ids(&report), ["KW215"], "{reason}");
            assert!(report.diagnoses[0].summary.contains(code), "{}", report.diagnoses[0].summary);
        }
    }

    #[test]
    fn every_form() {
        for text in [
            r#"{"level":"ERROR","message":"failed launching nodeclaim","NodeClaim":{"name":"gpu-1"},"error":"insufficient capacity, all requested instance types were unavailable during launch"}"#,
            "creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient m7g.8xlarge capacity in the Availability Zone you requested (eu-west-1c).",
            "creating instance, insufficient capacity, with fleet error(s), MaxSpotInstanceCountExceeded: Max spot instance count exceeded",
            // A real ICE in the same launch as a NodeClass lookup is still an ICE.
            r#"creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient p5.48xlarge capacity in the Availability Zone you requested (us-east-1a). resolving nodeclass, ec2nodeclasses.karpenter.k8s.aws "gpu" not found"#,
            "creating instance, insufficient capacity, with fleet error(s), VcpuLimitExceeded: You have requested more vCPU capacity than your current vCPU limit of 32 allows",
            "UnfulfillableCapacity: Unable to fulfill capacity due to your request configuration.",
            "MaxFleetCountExceeded: You've reached your quota for maximum Fleet Requests for this account.",
            "ReservationCapacityExceeded: The requested reservation does not have sufficient compatible and available capacity for this request.",
            "3s  Warning  InsufficientCapacityError  nodeclaim/trino-m7g-4kq8r  NodeClaim trino-m7g-4kq8r event: creating instance, insufficient capacity",
            "We currently do not have sufficient p4d.24xlarge capacity in the Availability Zone you requested (us-east-1a).",
            "SpotMaxPriceTooLow: Your Spot request price of 0.05 is lower than the minimum required Spot request fulfillment price of 0.0832.",
        ] {
            assert_eq!(ids(&check_only("KW215", text)), ["KW215"], "{text}");
        }
    }

    #[test]
    fn a_nodepool_with_a_single_offering_has_none_left() {
        let pool = |types: &str| {
            format!(
                r#"{{"level":"ERROR","message":"failed launching nodeclaim","NodeClaim":{{"name":"ci-spot-hq7vd"}},"error":"creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: There is no Spot capacity available that matches your request."}}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: ci-spot
spec:
  template:
    spec:
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot"]
        - key: node.kubernetes.io/instance-type
          operator: In
          values: [{types}]
        - key: topology.kubernetes.io/zone
          operator: In
          values: ["eu-west-1a"]
"#
            )
        };
        let report = check_only("KW215", &pool(r#""c7i.4xlarge""#));
        let d = &report.diagnoses[0];
        assert_eq!(d.severity, Severity::Error);
        assert!(
            d.summary
                .contains("allows a single offering (c7i.4xlarge, spot, eu-west-1a)"),
            "{}",
            d.summary
        );
        // A second type is another offering to retry with.
        let report = check_only("KW215", &pool(r#""c7i.4xlarge", "c6i.4xlarge""#));
        let d = &report.diagnoses[0];
        assert_eq!(d.severity, Severity::Warning);
        assert!(!d.summary.contains("single offering"), "{}", d.summary);
    }

    #[test]
    fn names_type_zone_nodeclaim_and_severity() {
        let report = check_only(
            "KW215",
            r#"{"level":"ERROR","message":"failed launching nodeclaim","NodeClaim":{"name":"trino-m7g-4kq8r"},"error":"creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient m7g.8xlarge capacity in the Availability Zone you requested (eu-west-1c). Our system will be working on provisioning additional capacity."}"#,
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("m7g.8xlarge in eu-west-1c"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("trino-m7g-4kq8r"), "{}", d.summary);
        assert_eq!(d.severity, Severity::Warning);
        let all = check_only(
            "KW215",
            "insufficient capacity, all requested instance types were unavailable during launch",
        );
        assert_eq!(all.diagnoses[0].severity, Severity::Error);
    }

    #[test]
    fn quota_codes_name_the_quota() {
        let report = check_only(
            "KW215",
            "MaxSpotInstanceCountExceeded: Max spot instance count exceeded",
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .starts_with("An account quota refuses the launch (MaxSpotInstanceCountExceeded)"),
            "{}",
            d.summary
        );
        assert!(d.remediation.iter().any(|r| r.text.contains("L-34B43A08")));
    }

    #[test]
    fn an_insufficient_capacity_answer_to_a_reserved_launch_is_about_the_reservation() {
        let ice = "creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient p4d.24xlarge capacity in the Availability Zone you requested (us-east-1d).";
        // The NodeClaim launched as `reserved`, into the reservation its label names.
        let claim = format!("apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: train-odcr-x7k2p\n  labels:\n    karpenter.sh/nodepool: train-reserved\n    karpenter.sh/capacity-type: reserved\n    karpenter.k8s.aws/capacity-reservation-id: cr-0a1b2c3d4e5f67890\nspec:\n  nodeClassRef:\n    group: karpenter.k8s.aws\n    kind: EC2NodeClass\n    name: gpu\nstatus:\n  conditions:\n  - type: Launched\n    status: \"False\"\n    reason: InsufficientCapacityError\n    message: \"{ice}\"\n");
        // A NodePool that allows only `reserved`: every launch goes into a reservation.
        let pool = format!("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: train-reserved\nspec:\n  template:\n    spec:\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: gpu\n      requirements:\n      - key: karpenter.sh/capacity-type\n        operator: In\n        values: [\"reserved\"]\n---\n{{\"level\":\"ERROR\",\"message\":\"failed launching nodeclaim\",\"NodePool\":{{\"name\":\"train-reserved\"}},\"NodeClaim\":{{\"name\":\"train-reserved-4kq9d\"}},\"error\":\"{ice}\"}}\n");
        for text in [claim, pool] {
            let report = check_only("KW215", &text);
            assert_eq!(ids(&report), ["KW215"]);
            let d = &report.diagnoses[0];
            assert!(
                d.summary.contains("could not take the launch: Karpenter launched into it (capacity type `reserved`) and EC2 answered InsufficientInstanceCapacity for p4d.24xlarge in us-east-1d"),
                "{}",
                d.summary
            );
            assert!(!d.summary.contains("EC2 has no capacity"), "{}", d.summary);
            // Never the spot/on-demand advice that would drop `reserved`.
            assert!(
                !d.remediation
                    .iter()
                    .any(|r| r.text.contains("families and sizes")),
                "{:?}",
                d.remediation
            );
            assert!(d
                .remediation
                .iter()
                .any(|r| r.text.contains("NodePool train-reserved")
                    && r.text.contains("is unavailable")));
        }
        // An on-demand NodePool's shortage stays the generic one.
        let text = format!("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      requirements:\n      - key: karpenter.sh/capacity-type\n        operator: In\n        values: [\"on-demand\"]\n---\n{{\"level\":\"ERROR\",\"message\":\"failed launching nodeclaim\",\"NodePool\":{{\"name\":\"web\"}},\"error\":\"{ice}\"}}\n");
        let report = check_only("KW215", &text);
        assert!(
            report.diagnoses[0]
                .summary
                .starts_with("EC2 has no capacity"),
            "{}",
            report.diagnoses[0].summary
        );
    }

    #[test]
    fn a_full_reservation_is_named_and_fixed_there() {
        // v1.3+ reserved launch: the NodeClaim carries the reservation; EC2's text does not.
        let text = "apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: gpu-odcr-x7k2p\n  labels:\n    karpenter.sh/nodepool: gpu-reserved\n    karpenter.sh/capacity-type: reserved\n    karpenter.k8s.aws/capacity-reservation-id: cr-0a1b2c3d4e5f67890\n    karpenter.k8s.aws/capacity-reservation-type: default\nspec:\n  nodeClassRef:\n    group: karpenter.k8s.aws\n    kind: EC2NodeClass\n    name: gpu\nstatus:\n  conditions:\n  - type: Launched\n    status: \"False\"\n    reason: InsufficientCapacityError\n    message: \"creating instance, insufficient capacity, with fleet error(s), ReservationCapacityExceeded: The requested reservation does not have sufficient compatible and available capacity for this request.\"\n";
        let report = check_only("KW215", text);
        assert_eq!(ids(&report), ["KW215"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .starts_with("EC2 capacity reservation cr-0a1b2c3d4e5f67890 has no free capacity"),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("EC2 has no capacity"), "{}", d.summary);
        let commands: Vec<&str> = d
            .remediation
            .iter()
            .filter_map(|r| r.command.as_deref())
            .collect();
        assert!(
            commands
                .iter()
                .any(|c| c.contains("--capacity-reservation-ids cr-0a1b2c3d4e5f67890")),
            "{commands:?}"
        );
        assert!(
            commands.iter().any(|c| c.contains(
                "modify-capacity-reservation --capacity-reservation-id cr-0a1b2c3d4e5f67890"
            )),
            "{commands:?}"
        );
        assert!(
            commands
                .iter()
                .any(|c| c.contains("capacity-reservation-id=cr-0a1b2c3d4e5f67890")),
            "{commands:?}"
        );
        // Not the generic "more instance types" advice.
        assert!(
            !d.remediation
                .iter()
                .any(|r| r.text.contains("families and sizes")),
            "{:?}",
            d.remediation
        );
        assert!(d
            .remediation
            .iter()
            .any(|r| r.text.contains("NodePool gpu-reserved")
                && r.yaml
                    .as_deref()
                    .is_some_and(|y| y.contains("\"reserved\", \"on-demand\""))));
    }

    #[test]
    fn a_reservation_without_its_id_and_a_capacity_block() {
        let report = check_only(
            "KW215",
            "creating instance, insufficient capacity, with fleet error(s), ReservationCapacityExceeded: The requested reservation does not have sufficient compatible and available capacity for this request.",
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.starts_with(
                "The EC2 capacity reservation the launch targeted has no free capacity"
            ),
            "{}",
            d.summary
        );
        assert!(
            d.summary.contains("capacityReservationSelectorTerms"),
            "{}",
            d.summary
        );
        let report = check_only(
            "KW215",
            "launching nodeclaim, creating instance, insufficient capacity, with fleet error(s), Your Capacity Block reservation cr-0fedcba9876543210 is not active yet.",
        );
        assert_eq!(ids(&report), ["KW215"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("EC2 Capacity Block cr-0fedcba9876543210 is not active yet"),
            "{}",
            d.summary
        );
        // Not active yet: wait for its start, nothing to enlarge or buy.
        assert!(d.remediation.iter().any(|r| r.text.contains("StartDate")));
        assert!(!d.remediation.iter().any(|r| r
            .command
            .as_deref()
            .is_some_and(|c| c.contains("describe-capacity-block-offerings"))));
        assert!(!d.remediation.iter().any(|r| r
            .command
            .as_deref()
            .is_some_and(|c| c.contains("modify-capacity-reservation"))));
        // A reservation next to a real shortage of another type keeps both fixes.
        let report = check_only(
            "KW215",
            "creating instance, insufficient capacity, with fleet error(s), ReservationCapacityExceeded: The requested reservation does not have sufficient compatible and available capacity for this request.; InsufficientInstanceCapacity: We currently do not have sufficient p5.48xlarge capacity in the Availability Zone you requested (us-east-2b).",
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("p5.48xlarge in us-east-2b"),
            "{}",
            d.summary
        );
        assert!(d
            .remediation
            .iter()
            .any(|r| r.text.contains("families and sizes")));
        assert!(d.remediation.iter().any(|r| r
            .text
            .contains("fall back to on-demand while the reservation is full")));
    }

    #[test]
    fn a_provisioner_pinned_to_the_short_zone() {
        let text = "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: batch\nspec:\n  requirements:\n  - key: topology.kubernetes.io/zone\n    operator: In\n    values: [\"us-east-1a\"]\n---\n2023-09-04T17:40:02.118Z\tERROR\tcontroller.machine.lifecycle\tlaunching machine, creating cloud provider instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient c5.4xlarge capacity in the Availability Zone you requested (us-east-1a).\t{\"machine\": \"batch-x8k2p\", \"provisioner\": \"batch\"}\n";
        let report = check_only("KW215", text);
        assert_eq!(ids(&report), ["KW215"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains(
                "Provisioner batch allows only us-east-1a, and that zone reports the shortage"
            ),
            "{}",
            d.summary
        );
        assert!(
            d.remediation
                .iter()
                .any(|r| r.text.contains("`kubectl edit provisioner batch`")
                    && r.text.contains("more zones")
                    && !r.yaml.as_deref().unwrap_or_default().contains("template")),
            "{:?}",
            d.remediation
        );
        assert!(!d.remediation.iter().any(|r| r.text.contains("NodePool")));
    }

    #[test]
    fn the_nodepool_is_read_from_the_claim_name_when_nothing_else_names_it() {
        let text = r#"{"level":"ERROR","message":"failed launching nodeclaim","NodeClaim":{"name":"llm-train-q8w2x"},"error":"creating instance, insufficient capacity, with fleet error(s), ReservationCapacityExceeded: The requested reservation does not have sufficient compatible and available capacity for this request."}"#;
        let report = check_only("KW215", text);
        let d = &report.diagnoses[0];
        assert_eq!(d.node_pool.as_deref(), Some("llm-train"));
        assert!(
            d.remediation
                .iter()
                .any(|r| r.text.contains("NodePool llm-train fall back")),
            "{:?}",
            d.remediation
        );
        assert_eq!(nodepool_by_claim_name("default"), None);
        assert_eq!(nodepool_by_claim_name("web-7d9f8c6b5"), None);
    }

    #[test]
    fn reservation_ids_are_whole_words() {
        assert_eq!(reservation_ids("cr-0a1b2c3d4e5f67890 and cr-1234abcd, not xcr-0a1b2c3d4e5f67890 or cr-0a1b2c3d4e5f678901"), ["cr-0a1b2c3d4e5f67890", "cr-1234abcd"]);
    }

    #[test]
    fn near_misses() {
        for text in [
            "launching nodeclaim, creating instance, with fleet error(s), InvalidBlockDeviceMapping: Invalid device name /dev/xvda (aws-error-code=UnfulfillableCapacity, aws-operation-name=CreateFleet)",
            "launching nodeclaim, creating instance, with fleet error(s), too few instances returned: too few instances returned",
            "creating instance, insufficient capacity, with fleet error(s), InsufficientFreeAddressesInSubnet: There are not enough free addresses in subnet 'subnet-1' to satisfy the requested number of instances.",
            "creating instance, insufficient capacity, with fleet error(s), AuthFailure.ServiceLinkedRoleCreationNotPermitted: The provided credentials do not have permission to create the service-linked role for EC2 Spot Instances.",
            "0/4 nodes are available: 4 Insufficient cpu.",
            r#"launching nodeclaim, creating instance, insufficient capacity, resolving nodeclass, ec2nodeclasses.karpenter.k8s.aws "batch" not found"#,
            r#"launching nodeclaim, insufficient capacity, resolving node class, ec2nodeclasses.karpenter.k8s.aws "default-v2" not found"#,
            r#"3s  Warning  InsufficientCapacityError  nodeclaim/batch-7xk2p  NodeClaim batch-7xk2p event: insufficient capacity, resolving nodeclass, ec2nodeclasses.karpenter.k8s.aws "batch" not found"#,
            // A reservation that is only discovered, or a Capacity Block that is active.
            r#"{"level":"INFO","message":"discovered capacity reservations","capacity-reservations":["cr-0a1b2c3d4e5f67890"]}"#,
            "Your Capacity Block reservation cr-0fedcba9876543210 is active until 2026-12-05T11:30:00Z.",
        ] {
            assert!(ids(&check_only("KW215", text)).is_empty(), "{text}");
        }
    }
}
