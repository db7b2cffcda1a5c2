//! ENIs and IPv4 addresses per ENI of common EC2 instance types, for the VPC CNI's pod limit.
//!
//! Source: AWS, "Maximum IP addresses per network interface"
//! (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/AvailableIpPerENI.html), as published
//! for the VPC CNI in `amazon-vpc-cni-k8s` (`misc/eni-max-pods.txt`, generated from
//! `pkg/vpc/vpc_ip_resource_limit.go`). Nitro general purpose, compute and memory families of
//! generations 5 to 8 (Intel, AMD and Graviton) share one table by size; the burstable and GPU
//! families have their own. Types not listed (network-optimised `n` variants of generation 6+,
//! `zn`, high-memory, most accelerated types) return `None`: better no number than a wrong one.

/// `(ENIs, IPv4 addresses per ENI)` of an instance type, when known.
pub fn eni_limits(instance_type: &str) -> Option<(u32, u32)> {
    let (family, size) = instance_type.split_once('.')?;
    if let Some(limits) = special(family, size) {
        return Some(limits);
    }
    if !standard_family(family) {
        return None;
    }
    Some(match size {
        "medium" => (2, 4),
        "large" => (3, 10),
        "xlarge" | "2xlarge" => (4, 15),
        "4xlarge" | "8xlarge" | "9xlarge" | "12xlarge" => (8, 30),
        "16xlarge" | "18xlarge" | "24xlarge" | "32xlarge" | "48xlarge" | "metal" | "metal-24xl"
        | "metal-48xl" => (15, 50),
        _ => return None,
    })
}

/// The VPC CNI's pod limit without prefix delegation: every ENI but the primary IP of each
/// serves pods, plus two host-network pods (aws-node, kube-proxy).
pub fn max_pods(enis: u32, ips_per_eni: u32) -> u32 {
    enis * ips_per_eni.saturating_sub(1) + 2
}

/// m/c/r of generations 5 to 8 with the variant letters whose limits follow the size table.
fn standard_family(family: &str) -> bool {
    let family = family.strip_suffix("-flex").unwrap_or(family);
    let mut chars = family.chars();
    let (Some(class), Some(generation)) = (chars.next(), chars.next()) else {
        return false;
    };
    if !matches!(class, 'm' | 'c' | 'r') || !('5'..='8').contains(&generation) {
        return false;
    }
    let variant: String = chars.collect();
    match generation {
        // Generation 5 network variants (c5n, m5dn, r5n...) keep the table; zn does not.
        '5' => matches!(variant.as_str(), "" | "a" | "d" | "ad" | "n" | "dn" | "b"),
        // Later network-optimised variants (c6in, m7gn...) have more ENIs: not in the table.
        _ => matches!(
            variant.as_str(),
            "" | "a" | "i" | "g" | "d" | "id" | "gd" | "ad"
        ),
    }
}

fn special(family: &str, size: &str) -> Option<(u32, u32)> {
    let limits = match (family, size) {
        ("t3" | "t3a" | "t4g", "nano" | "micro") => (2, 2),
        ("t3" | "t4g", "small") => (3, 4),
        ("t3a", "small") => (2, 4),
        ("t3" | "t3a" | "t4g", "medium") => (3, 6),
        ("t3" | "t3a" | "t4g", "large") => (3, 12),
        ("t3" | "t3a" | "t4g", "xlarge" | "2xlarge") => (4, 15),
        ("g4dn", "xlarge" | "2xlarge" | "4xlarge") => (3, 10),
        ("g4dn", "8xlarge" | "16xlarge") => (4, 15),
        ("g4dn", "12xlarge") => (8, 30),
        ("g4dn", "metal") => (15, 50),
        ("g5", "xlarge" | "2xlarge") => (4, 15),
        ("g5", "4xlarge" | "8xlarge" | "16xlarge") => (8, 30),
        ("g5", "12xlarge" | "24xlarge") => (15, 50),
        ("g5", "48xlarge") => (7, 50),
        ("p3", "2xlarge") => (4, 15),
        ("p3", "8xlarge" | "16xlarge") => (8, 30),
        ("i4i", "large") => (3, 10),
        ("i4i", "xlarge" | "2xlarge") => (4, 15),
        ("i4i", "4xlarge" | "8xlarge") => (8, 30),
        ("i4i", "16xlarge" | "32xlarge" | "metal") => (15, 50),
        ("x2idn" | "x2iedn", "16xlarge" | "24xlarge" | "32xlarge" | "metal") => (15, 50),
        _ => return None,
    };
    Some(limits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values from eni-max-pods.txt.
    #[test]
    fn matches_published_max_pods() {
        for (t, pods) in [
            ("m5.large", 29),
            ("m5.xlarge", 58),
            ("c5.9xlarge", 234),
            ("r5.16xlarge", 737),
            ("c5n.18xlarge", 737),
            ("m6g.medium", 8),
            ("m7i.48xlarge", 737),
            ("m7i-flex.xlarge", 58),
            ("c7g.4xlarge", 234),
            ("t3.small", 11),
            ("t3a.small", 8),
            ("t3.medium", 17),
            ("t3.large", 35),
            ("g4dn.xlarge", 29),
            ("g4dn.12xlarge", 234),
            ("g5.48xlarge", 345),
        ] {
            let (e, i) = eni_limits(t).unwrap_or_else(|| panic!("{t} missing"));
            assert_eq!(max_pods(e, i), pods, "{t}");
        }
    }

    #[test]
    fn unknown_types_have_no_numbers() {
        for t in [
            "c6in.large",
            "m5zn.large",
            "u-6tb1.metal",
            "p5.48xlarge",
            "m5.huge",
            "nonsense",
            "",
        ] {
            assert_eq!(eni_limits(t), None, "{t}");
        }
    }
}
