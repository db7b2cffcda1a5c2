//! Redaction of pasted or collected text before it is shared (a ticket, a Slack thread): AWS
//! account IDs, ARNs, IP addresses, EC2 instance and ENI IDs and EC2 hostnames are replaced by
//! numbered masks (`<account-1>`, `<ip-3>`, `<host-2>`...). The same value always gets the same
//! mask within one `Redactor`, so a reader can still follow "the node with `<ip-3>`" across
//! documents; masks never contain newlines, quotes or YAML/JSON indicators, so line numbers and
//! the text's structure survive. Used by the web page's "copy report as markdown" toggle and the
//! CLI's `collect --redact`, so both print the same masks.

use std::collections::HashMap;

/// The kinds of value that are masked; the mask is `<{kind}-{n}>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Account,
    Arn,
    Ip,
    Instance,
    Eni,
    Host,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Account => "account",
            Kind::Arn => "arn",
            Kind::Ip => "ip",
            Kind::Instance => "instance",
            Kind::Eni => "eni",
            Kind::Host => "host",
        }
    }
}

/// Remembers which mask each value received, so several texts redacted by one `Redactor`
/// share their masks.
#[derive(Debug, Default)]
pub struct Redactor {
    masks: HashMap<(Kind, String), String>,
    counts: HashMap<Kind, usize>,
}

/// Redacts one text with a fresh `Redactor`.
pub fn redact(text: &str) -> String {
    Redactor::new().redact(text)
}

impl Redactor {
    pub fn new() -> Self {
        Self::default()
    }

    /// Returns `text` with every sensitive value masked.
    pub fn redact(&mut self, text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        // Start of the text not yet copied to `out`.
        let mut copied = 0;
        let mut i = 0;
        while i < bytes.len() {
            let at_boundary = i == 0 || !is_word_byte(bytes[i - 1]);
            if at_boundary && starts_candidate(bytes[i]) {
                if let Some((end, replacement)) = self.match_at(text, i) {
                    out.push_str(&text[copied..i]);
                    out.push_str(&replacement);
                    i = end;
                    copied = end;
                    continue;
                }
            }
            i += 1;
        }
        out.push_str(&text[copied..]);
        out
    }

    fn mask(&mut self, kind: Kind, value: &str) -> String {
        if let Some(mask) = self.masks.get(&(kind, value.to_string())) {
            return mask.clone();
        }
        let n = self.counts.entry(kind).or_insert(0);
        *n += 1;
        let mask = format!("<{}-{}>", kind.label(), n);
        self.masks.insert((kind, value.to_string()), mask.clone());
        mask
    }

    /// Tries every pattern at `start` (a word boundary); returns where the match ends and
    /// its replacement.
    fn match_at(&mut self, text: &str, start: usize) -> Option<(usize, String)> {
        let bytes = text.as_bytes();
        if let Some(end) = arn_end(bytes, start) {
            return Some((end, self.redact_arn(&text[start..end])));
        }
        if let Some((label_end, end)) = ec2_hostname(bytes, start) {
            let mask = self.mask(Kind::Host, &text[start..label_end]);
            return Some((end, format!("{mask}{}", &text[label_end..end])));
        }
        if let Some((kind, end)) = aws_id(bytes, start) {
            return Some((end, self.mask(kind, &text[start..end])));
        }
        if let Some(end) = ipv4_end(bytes, start) {
            let ip = &text[start..end];
            if is_well_known_ip(ip) {
                return None;
            }
            return Some((end, self.mask(Kind::Ip, ip)));
        }
        if let Some(end) = ipv6_end(bytes, start) {
            return Some((end, self.mask(Kind::Ip, &text[start..end])));
        }
        if let Some(end) = account_end(bytes, start) {
            let mask = self.mask(Kind::Account, &text[start..end]);
            // An account ID that is a bare JSON number (`"owner": 123456789012`) becomes a
            // string so the JSON stays valid.
            if is_bare_json_number(bytes, start, end) {
                return Some((end, format!("\"{mask}\"")));
            }
            return Some((end, mask));
        }
        None
    }

    /// `arn:partition:service:region:account:resource`: the account gets its account mask,
    /// the resource type (`role/`, `instance/`...) is kept and the resource name masked.
    fn redact_arn(&mut self, arn: &str) -> String {
        let parts: Vec<&str> = arn.splitn(6, ':').collect();
        let [_, partition, service, region, account, resource] = parts[..] else {
            return self.mask(Kind::Arn, arn);
        };
        // Odd fields (an IP where the account should be) are still redacted, so a second
        // pass changes nothing.
        let account = if is_account_id(account) {
            self.mask(Kind::Account, account)
        } else {
            self.redact(account)
        };
        let (partition, service, region) = (
            self.redact(partition),
            self.redact(service),
            self.redact(region),
        );
        let (resource_type, name) = split_resource(resource);
        let name_mask = match aws_id(name.as_bytes(), 0) {
            _ if name.is_empty() => String::new(),
            Some((kind, end)) if end == name.len() => self.mask(kind, name),
            _ => self.mask(Kind::Arn, name),
        };
        format!("arn:{partition}:{service}:{region}:{account}:{resource_type}{name_mask}")
    }
}

/// Bytes that continue a word: a pattern may only start after one of these is absent, and
/// must end before one.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// First bytes any pattern can start with, to skip most positions cheaply.
fn starts_candidate(b: u8) -> bool {
    b.is_ascii_hexdigit() || matches!(b, b'a' | b'e' | b'i' | b':') || b.is_ascii_digit()
}

fn ends_word(bytes: &[u8], end: usize) -> bool {
    end >= bytes.len() || !is_word_byte(bytes[end])
}

fn is_account_id(s: &str) -> bool {
    s.len() == 12 && s.bytes().all(|b| b.is_ascii_digit())
}

fn arn_end(bytes: &[u8], start: usize) -> Option<usize> {
    if !bytes[start..].starts_with(b"arn:") {
        return None;
    }
    let mut end = start;
    while end < bytes.len() && is_arn_byte(bytes[end]) {
        end += 1;
    }
    // Right before a mask: this ARN was redacted already.
    if bytes.get(end) == Some(&b'<') {
        return None;
    }
    // Sentence punctuation after an ARN is not part of it.
    while end > start && matches!(bytes[end - 1], b'.' | b',' | b':') {
        end -= 1;
    }
    let mut fields = bytes[start..end].split(|&b| b == b':');
    let (_, partition, service) = (fields.next(), fields.next()?, fields.next()?);
    let partition_ok = partition.starts_with(b"aws")
        && partition
            .iter()
            .all(|b| b.is_ascii_lowercase() || *b == b'-');
    let service_ok = !service.is_empty()
        && service
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-');
    (partition_ok && service_ok && fields.count() >= 3).then_some(end)
}

fn is_arn_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-_:/+=,.@*".contains(&b)
}

/// Splits `role/KarpenterNodeRole-prod` into `role/` and the name; a resource without a
/// lower-case type prefix is all name.
fn split_resource(resource: &str) -> (&str, &str) {
    if let Some(pos) = resource.find(['/', ':']) {
        let prefix = &resource[..pos];
        if !prefix.is_empty()
            && prefix
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'-' || b == b'_')
        {
            return resource.split_at(pos + 1);
        }
    }
    ("", resource)
}

/// `i-0123456789abcdef0` / `i-01234567` and `eni-...`: 8 or 17 lower-case hex digits.
fn aws_id(bytes: &[u8], start: usize) -> Option<(Kind, usize)> {
    let (kind, prefix_len) = if bytes[start..].starts_with(b"i-") {
        (Kind::Instance, 2)
    } else if bytes[start..].starts_with(b"eni-") {
        (Kind::Eni, 4)
    } else {
        return None;
    };
    let hex_start = start + prefix_len;
    let hex_len = bytes[hex_start..]
        .iter()
        .take_while(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
        .count();
    let end = hex_start + hex_len;
    ((hex_len == 8 || hex_len == 17) && ends_word(bytes, end)).then_some((kind, end))
}

/// EC2 node hostnames: `ip-10-0-1-2` (alone or followed by `.ec2.internal`,
/// `.us-west-2.compute.internal`), and resource-name hostnames `i-0123....compute.internal`.
/// Returns the end of the first label (the part that is masked) and of the whole hostname
/// (the domain is kept: it names a region, not the user).
fn ec2_hostname(bytes: &[u8], start: usize) -> Option<(usize, usize)> {
    let label_end = if bytes[start..].starts_with(b"ip-") {
        let end = dashed_ipv4_end(bytes, start + 3)?;
        if !ends_word(bytes, end) {
            return None;
        }
        end
    } else {
        let (kind, end) = aws_id(bytes, start)?;
        if kind != Kind::Instance {
            return None;
        }
        end
    };
    let end = internal_domain_end(bytes, label_end);
    if end == label_end && !bytes[start..].starts_with(b"ip-") {
        // A bare instance ID is an instance, not a hostname.
        return None;
    }
    Some((label_end, end))
}

/// `10-0-1-2`: four decimal octets joined by dashes.
fn dashed_ipv4_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    for octet in 0..4 {
        if octet > 0 {
            if bytes.get(i) != Some(&b'-') {
                return None;
            }
            i += 1;
        }
        i = octet_end(bytes, i)?;
    }
    Some(i)
}

/// The end of an EC2 DNS domain (`.ec2.internal`, `.<region>.compute.internal`) that follows
/// `start`, or `start` when there is none.
fn internal_domain_end(bytes: &[u8], start: usize) -> usize {
    let rest = &bytes[start..];
    if rest.starts_with(b".ec2.internal") {
        return start + b".ec2.internal".len();
    }
    let Some(region) = rest.strip_prefix(b".") else {
        return start;
    };
    let region_len = region
        .iter()
        .take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || **b == b'-')
        .count();
    let is_region = region_len >= 9
        && region[..2].iter().all(u8::is_ascii_lowercase)
        && region[region_len - 1].is_ascii_digit()
        && region[region_len - 2] == b'-';
    if is_region && region[region_len..].starts_with(b".compute.internal") {
        start + 1 + region_len + b".compute.internal".len()
    } else {
        start
    }
}

/// A decimal octet (0-255, no leading zeros beyond a single `0`) starting at `start`.
fn octet_end(bytes: &[u8], start: usize) -> Option<usize> {
    let len = bytes[start.min(bytes.len())..]
        .iter()
        .take(4)
        .take_while(|b| b.is_ascii_digit())
        .count();
    if len == 0 || len > 3 {
        return None;
    }
    let digits = &bytes[start..start + len];
    if len > 1 && digits[0] == b'0' {
        return None;
    }
    let value: u32 = digits.iter().fold(0, |v, d| v * 10 + u32::from(d - b'0'));
    (value <= 255).then_some(start + len)
}

/// Dotted IPv4, not part of a longer dotted number (a version like `1.2.3.4.5`).
fn ipv4_end(bytes: &[u8], start: usize) -> Option<usize> {
    if start > 0 && bytes[start - 1] == b'.' {
        return None;
    }
    let mut i = start;
    for octet in 0..4 {
        if octet > 0 {
            if bytes.get(i) != Some(&b'.') {
                return None;
            }
            i += 1;
        }
        i = octet_end(bytes, i)?;
    }
    let followed_by_number =
        bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(|b| b.is_ascii_digit());
    (ends_word(bytes, i) && !followed_by_number).then_some(i)
}

/// Addresses that say nothing about the user (loopback, unspecified, the instance metadata
/// service, netmasks) and help the reader: kept.
fn is_well_known_ip(ip: &str) -> bool {
    ip.starts_with("127.")
        || ip.starts_with("255.")
        || ip == "0.0.0.0"
        || ip == "169.254.169.254"
        || ip == "169.254.170.2"
}

/// IPv6 written with `::` or as eight groups; times (`12:34:56`) and MAC-like strings do not
/// qualify.
fn ipv6_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut end = start;
    while end < bytes.len() && (bytes[end].is_ascii_hexdigit() || bytes[end] == b':') {
        end += 1;
    }
    // Glued to a mask (`fd00::1:<account-1>`): the first pass saw a longer run here and
    // rejected it, so this one must too.
    if bytes.get(end) == Some(&b'<') {
        return None;
    }
    // A trailing single colon is punctuation ("address fd00::1: refused").
    if end >= start + 2 && bytes[end - 1] == b':' && bytes[end - 2] != b':' {
        end -= 1;
    }
    if !ends_word(bytes, end) || bytes.get(end) == Some(&b'.') {
        return None;
    }
    let candidate = std::str::from_utf8(&bytes[start..end]).ok()?;
    let double = candidate.matches("::").count();
    let groups: Vec<&str> = candidate.split(':').collect();
    let groups_ok = groups.iter().all(|g| g.len() <= 4);
    let non_empty = groups.iter().filter(|g| !g.is_empty()).count();
    let shape_ok = match double {
        0 => groups.len() == 8,
        1 => groups.len() <= 8 && non_empty >= 2 && !candidate.contains(":::"),
        _ => false,
    };
    (groups_ok && shape_ok).then_some(end)
}

/// A 12-digit AWS account ID standing alone (not part of a longer number or a decimal).
fn account_end(bytes: &[u8], start: usize) -> Option<usize> {
    if start > 0 && bytes[start - 1] == b'.' {
        return None;
    }
    let len = bytes[start..]
        .iter()
        .take(13)
        .take_while(|b| b.is_ascii_digit())
        .count();
    let end = start + len;
    let decimal =
        bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(|b| b.is_ascii_digit());
    (len == 12 && !decimal && ends_word(bytes, end)).then_some(end)
}

/// True when the value at `start..end` is an unquoted JSON value (`"key": 123456789012`).
fn is_bare_json_number(bytes: &[u8], start: usize, end: usize) -> bool {
    let before = bytes[..start]
        .iter()
        .rev()
        .find(|b| !b.is_ascii_whitespace())
        .copied();
    let after = bytes[end..]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .copied();
    let key_quoted = bytes[..start]
        .iter()
        .rev()
        .skip_while(|b| b.is_ascii_whitespace())
        .nth(1)
        .is_some_and(|&b| b == b'"');
    match before {
        Some(b':') => key_quoted && matches!(after, None | Some(b',' | b'}' | b'\n' | b'\r')),
        Some(b'[') | Some(b',') => matches!(after, Some(b',' | b']')),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_each_kind() {
        let text = "account 123456789012 node ip-10-0-1-2.ec2.internal ip 10.0.1.2 \
                    instance i-0123456789abcdef0 eni eni-0a1b2c3d4e5f60718 v6 fd00:ec2::254";
        assert_eq!(
            redact(text),
            "account <account-1> node <host-1>.ec2.internal ip <ip-1> \
             instance <instance-1> eni <eni-1> v6 <ip-2>"
        );
    }

    #[test]
    fn same_value_same_mask_across_texts() {
        let mut r = Redactor::new();
        let a = r.redact("10.0.1.2 then 10.0.9.9 then 10.0.1.2");
        let b = r.redact("again 10.0.9.9");
        assert_eq!(a, "<ip-1> then <ip-2> then <ip-1>");
        assert_eq!(b, "again <ip-2>");
    }

    #[test]
    fn arn_keeps_service_and_resource_type() {
        let text = "not authorized: arn:aws:iam::123456789012:role/KarpenterNodeRole-prod. \
                    Owner 123456789012 launched arn:aws:ec2:us-west-2:123456789012:instance/i-0123456789abcdef0";
        assert_eq!(
            redact(text),
            "not authorized: arn:aws:iam::<account-1>:role/<arn-1>. \
             Owner <account-1> launched arn:aws:ec2:us-west-2:<account-1>:instance/<instance-1>"
        );
    }

    #[test]
    fn arn_without_account_and_sqs_queue() {
        assert_eq!(
            redact("arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"),
            "arn:aws:iam::aws:policy/<arn-1>"
        );
        assert_eq!(
            redact("queue arn:aws:sqs:eu-west-1:210987654321:Karpenter-prod"),
            "queue arn:aws:sqs:eu-west-1:<account-1>:<arn-1>"
        );
    }

    #[test]
    fn hostnames_share_the_label_mask_across_domains() {
        let text = "ip-192-168-12-7 ip-192-168-12-7.us-west-2.compute.internal \
                    i-0123456789abcdef0.eu-central-1.compute.internal";
        assert_eq!(
            redact(text),
            "<host-1> <host-1>.us-west-2.compute.internal <host-2>.eu-central-1.compute.internal"
        );
    }

    #[test]
    fn keeps_structure_of_json_and_yaml() {
        let json =
            r#"{"level":"ERROR","ip":"10.1.2.3","owner": 123456789012,"ids":[123456789012, 1]}"#;
        let redacted = redact(json);
        assert_eq!(
            redacted,
            r#"{"level":"ERROR","ip":"<ip-1>","owner": "<account-1>","ids":["<account-1>", 1]}"#
        );
        let parsed: serde_json::Value = serde_json::from_str(&redacted).unwrap();
        assert_eq!(parsed["owner"], "<account-1>");

        let yaml = "status:\n  addresses:\n  - address: 10.1.2.3\n    type: InternalIP\n  - address: ip-10-1-2-3.ec2.internal\n";
        let redacted = redact(yaml);
        assert_eq!(redacted.lines().count(), yaml.lines().count());
        let docs = yaml_rust2::YamlLoader::load_from_str(&redacted).unwrap();
        assert_eq!(
            docs[0]["status"]["addresses"][0]["address"].as_str(),
            Some("<ip-1>")
        );
    }

    #[test]
    fn leaves_look_alikes_alone() {
        for text in [
            "version 1.2.3.4.5 and v1.32.0",
            "ts 1699999999.123456789012 and 1234567890123 (13 digits)",
            "12:34:56 and 2024-05-01T10:11:12Z",
            "i-abc and eni-12 and taxi-0123456789abcdef0",
            "127.0.0.1 169.254.169.254 0.0.0.0 255.255.255.0",
            "kube-proxy-ip-10-0-1-2x",
            "300.1.2.3 and 010.1.2.3",
            "already <ip-1> and <account-2>",
            "unicode: näïve ünïcödé text, arn: short",
        ] {
            assert_eq!(redact(text), text, "{text}");
        }
    }

    #[test]
    fn cidr_and_punctuation_survive() {
        assert_eq!(
            redact("subnet 10.0.0.0/16, node (10.0.1.2)."),
            "subnet <ip-1>/16, node (<ip-2>)."
        );
    }

    /// A fixed linear congruential sequence: reproducible without a dependency.
    fn pseudo_random_texts(pieces: &[&str], separators: &[&str]) -> Vec<String> {
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) as usize % n
        };
        (0..2000)
            .map(|_| {
                let mut text = String::new();
                for _ in 0..12 {
                    text.push_str(pieces[next(pieces.len())]);
                    text.push_str(separators[next(separators.len())]);
                }
                text
            })
            .collect()
    }

    const PIECES: [&str; 14] = [
        "10.0.1.2",
        "ip-10-0-1-2",
        "ip-10-0-1-2.ec2.internal",
        "i-0123456789abcdef0",
        "eni-01234567",
        "123456789012",
        "arn:aws:iam::123456789012:role/x",
        "fd00::1",
        "255",
        "é",
        "1.2.3",
        "i-0123456789abcdef0.us-west-2.compute.internal",
        "arn:",
        "::",
    ];

    #[test]
    fn glued_fragments_never_panic_and_keep_lines() {
        let glue = ["", "", ".", ":", "-", "\n", "\""];
        for text in pseudo_random_texts(&PIECES, &glue) {
            let once = redact(&text);
            assert_eq!(once.lines().count(), text.lines().count(), "{text:?}");
        }
    }

    #[test]
    fn separated_values_are_redacted_once_for_all() {
        let separators = [" ", "\n", "\", \"", ": ", "/", "(", ") ", "=", ", "];
        for text in pseudo_random_texts(&PIECES, &separators) {
            let once = redact(&text);
            assert_eq!(once.lines().count(), text.lines().count(), "{text:?}");
            assert_eq!(redact(&once), once, "{text:?}");
            assert!(
                !once.contains("10.0.1.2") && !once.contains("123456789012"),
                "{once:?}"
            );
        }
    }

    #[test]
    fn empty_and_multibyte_input_never_panics() {
        assert_eq!(redact(""), "");
        let text = "é10.0.0.1ü arn:aws:s3:::bücket ï-01234567 ::";
        let redacted = redact(text);
        assert!(redacted.contains("<ip-1>") || redacted.contains("10.0.0.1"));
    }
}
