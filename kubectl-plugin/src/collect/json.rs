//! Indents compact JSON as the API server sends it, keeping key order and every byte of every
//! string, so evidence lines point at one field each instead of one 50 KB line.

/// Re-indents `text` with two spaces. Text that is not JSON comes out with the same tokens
/// (the function never fails; it only moves whitespace outside strings).
pub fn pretty(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                let close = if c == '{' { '}' } else { ']' };
                skip_whitespace(&mut chars);
                if chars.peek() == Some(&close) {
                    out.push(close);
                    chars.next();
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

fn skip_whitespace(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while chars.peek().is_some_and(|c| c.is_whitespace()) {
        chars.next();
    }
}

fn newline(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

#[cfg(test)]
mod tests {
    use super::pretty;

    #[test]
    fn indents_and_keeps_key_order_and_strings() {
        let compact = r#"{"kind":"Pod","metadata":{"name":"web-0","labels":{}},"spec":{"a":[1,2],"b":[]},"msg":"x: {\"y\", [z]}"}"#;
        let expected = "{\n  \"kind\": \"Pod\",\n  \"metadata\": {\n    \"name\": \"web-0\",\n    \"labels\": {}\n  },\n  \"spec\": {\n    \"a\": [\n      1,\n      2\n    ],\n    \"b\": []\n  },\n  \"msg\": \"x: {\\\"y\\\", [z]}\"\n}";
        assert_eq!(pretty(compact), expected);
        let reparsed: serde_json::Value = serde_json::from_str(&pretty(compact)).unwrap();
        assert_eq!(
            reparsed,
            serde_json::from_str::<serde_json::Value>(compact).unwrap()
        );
    }

    #[test]
    fn already_indented_json_is_normalised() {
        let indented = "{\n    \"a\" : [ 1 , { } ]\n}\n";
        assert_eq!(pretty(indented), "{\n  \"a\": [\n    1,\n    {}\n  ]\n}");
    }
}
