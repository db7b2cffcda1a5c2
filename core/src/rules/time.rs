//! Times and ages as the input writes them. Core reads no clock: "now" is `Facts::now` (the
//! caller's `Options.now`) or, failing that, the latest timestamp the input holds.

use crate::facts::Facts;

/// Seconds since the Unix epoch of an RFC 3339 timestamp (`2025-06-03T09:31:05Z`,
/// `2025-06-03T09:31:05.507Z`, `+02:00` offsets) or the space-separated form exports write
/// (`2025-06-03 09:31:05.507`, taken as UTC). Anything else (journal `Mar 04 10:15:02`, klog
/// `I0304`) has no year or zone: `None`.
pub fn epoch_seconds(text: &str) -> Option<i64> {
    let t = text.trim().trim_matches('"');
    let b = t.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !(b[10] == b'T' || b[10] == b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = t.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    let mut rest = &t[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        rest = &frac[digits..];
    }
    let offset = match rest {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let hhmm = rest[1..].replace(':', "");
            if hhmm.len() != 4 || !hhmm.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let h: i64 = hhmm[..2].parse().ok()?;
            let m: i64 = hhmm[2..].parse().ok()?;
            sign * (h * 3600 + m * 60)
        }
    };
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Seconds of a kubectl age (`45s`, `14m`, `2m14s`, `5h3m`, `3d`, `2y`), as `kubectl get` and
/// `describe` print them; for a describe event's `2m14s (x6 over 12m)`, the span since the first
/// occurrence (`12m`). `<unknown>` and anything else: `None`.
pub fn age_seconds(text: &str) -> Option<i64> {
    let t = text.trim();
    let t = match t.rfind(" over ") {
        Some(i) => t[i + " over ".len()..].trim_end_matches(')'),
        None => t,
    };
    let mut total = 0i64;
    let mut number = String::new();
    let mut any = false;
    for c in t.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'y' => 365 * 86_400,
            _ => return None,
        };
        let n: i64 = number.parse().ok()?;
        total += n * unit;
        number.clear();
        any = true;
    }
    (any && number.is_empty()).then_some(total)
}

/// "Now" for ages: the caller's time, else the latest timestamp in the input (log lines,
/// events, conditions), leaving out the timestamps `exclude` says are about the object being
/// aged (its own times say nothing about when the paste was taken).
pub fn now_seconds(facts: &Facts, exclude: impl Fn(&crate::facts::Message) -> bool) -> Option<i64> {
    if let Some(now) = facts.now.as_deref().and_then(epoch_seconds) {
        return Some(now);
    }
    // Every log record, event and condition is also a message, with its time.
    facts
        .messages
        .iter()
        .filter(|m| !exclude(m))
        .filter_map(|m| m.time.as_deref().or(m.evidence.last_seen.as_deref()))
        .filter_map(epoch_seconds)
        .max()
}

/// `95s` as `1m35s`, `14m`, `2h5m`: how kubectl would print the age.
pub fn format_age(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..=119 => format!("{s}s"),
        120..=3599 if s % 60 == 0 || s >= 600 => format!("{}m", s / 60),
        120..=3599 => format!("{}m{}s", s / 60, s % 60),
        _ if s % 3600 / 60 == 0 || s >= 8 * 3600 => format!("{}h", s / 3600),
        _ => format!("{}h{}m", s / 3600, s % 3600 / 60),
    }
}

/// Whether `message` comes after every one of `earlier` (false when there are none): later by
/// time when both lines carry one; else (a panic line, a console line without a time) by
/// position in the same source.
pub fn later_than_all(message: &crate::facts::Message, earlier: &[&crate::facts::Message]) -> bool {
    let epoch = |m: &crate::facts::Message| m.time.as_deref().and_then(epoch_seconds);
    !earlier.is_empty()
        && earlier.iter().all(|h| match (epoch(h), epoch(message)) {
            (Some(a), Some(b)) => b > a,
            _ => {
                message.evidence.source == h.evidence.source
                    && message.evidence.line > h.evidence.line
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Evidence;
    use crate::facts::{Message, ObjectRef};

    #[test]
    fn rfc3339_forms() {
        assert_eq!(epoch_seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(epoch_seconds("2025-06-03T09:31:05Z"), Some(1_748_943_065));
        assert_eq!(
            epoch_seconds("2025-06-03T09:31:05.507Z"),
            epoch_seconds("2025-06-03T09:31:05Z")
        );
        assert_eq!(
            epoch_seconds("2025-06-03T11:31:05+02:00"),
            epoch_seconds("2025-06-03T09:31:05Z")
        );
        assert_eq!(
            epoch_seconds("2025-06-03 09:31:05.507"),
            epoch_seconds("2025-06-03T09:31:05Z")
        );
        assert_eq!(epoch_seconds("2024-02-29T00:00:00Z"), Some(1_709_164_800));
        for bad in [
            "Mar 04 10:15:02",
            "I0304 10:15:02.118293",
            "",
            "2025-13-01T00:00:00Z",
            "2025-06-03T09:31:05Q",
            "2025-06-03T09:31",
        ] {
            assert_eq!(epoch_seconds(bad), None, "{bad}");
        }
    }

    #[test]
    fn kubectl_ages() {
        assert_eq!(age_seconds("45s"), Some(45));
        assert_eq!(age_seconds("14m"), Some(840));
        assert_eq!(age_seconds("2m14s"), Some(134));
        assert_eq!(age_seconds("5h3m"), Some(5 * 3600 + 180));
        assert_eq!(age_seconds("3d"), Some(3 * 86_400));
        assert_eq!(age_seconds("2m14s (x6 over 12m)"), Some(720));
        for bad in ["<unknown>", "", "12", "m", "5 minutes"] {
            assert_eq!(age_seconds(bad), None, "{bad}");
        }
        assert_eq!(format_age(35), "35s");
        assert_eq!(format_age(134), "2m14s");
        assert_eq!(format_age(840), "14m");
        assert_eq!(format_age(3 * 3600 + 300), "3h5m");
    }

    #[test]
    fn now_is_the_callers_or_the_latest_other_timestamp() {
        let at = |time: &str, name: &str| Message {
            time: Some(time.to_string()),
            object: Some(ObjectRef::new("NodeClaim", None, name)),
            evidence: Evidence::new("x", 1, ""),
            ..Message::default()
        };
        let mut facts = Facts::default();
        facts.messages.push(at("2025-06-03T09:31:05Z", "young"));
        facts.messages.push(at("2025-06-03T09:30:00Z", "other"));
        let own = |m: &Message| m.object.as_ref().is_some_and(|o| o.name == "young");
        assert_eq!(
            now_seconds(&facts, own),
            epoch_seconds("2025-06-03T09:30:00Z")
        );
        assert_eq!(
            now_seconds(&facts, |_| false),
            epoch_seconds("2025-06-03T09:31:05Z")
        );
        facts.now = Some("2025-06-03T10:00:00Z".into());
        assert_eq!(
            now_seconds(&facts, own),
            epoch_seconds("2025-06-03T10:00:00Z")
        );
    }
}
