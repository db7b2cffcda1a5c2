//! YAML text into trees with line numbers, from yaml-rust2's marked events.

use std::collections::HashMap;

use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::TScalarStyle;

use super::tree::{Node, Value, MAX_DEPTH};

/// Alias expansion is bounded so that a "billion laughs" document cannot exhaust memory.
const MAX_ALIAS_NODES: usize = 100_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// 0-based segment line.
    pub line: usize,
    pub message: String,
}

/// Every document of `text`, node lines counted from `first_line` (the segment line `text`
/// starts on). On an error the documents read so far are returned with it; the caller decides
/// what the broken text still yields.
pub fn parse_documents(text: &str, first_line: usize) -> (Vec<Node>, Option<YamlError>) {
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(text);
    loop {
        match parser.next_token() {
            Ok((Event::StreamEnd, _)) => return (builder.documents, None),
            Ok((event, mark)) => {
                let line = first_line + mark.line().saturating_sub(1);
                if let Err(message) = builder.event(event, line) {
                    let error = YamlError { line, message };
                    return (builder.documents, Some(error));
                }
            }
            Err(e) => {
                let error = YamlError {
                    line: first_line + e.marker().line().saturating_sub(1),
                    message: format!("invalid YAML: {}", e.info()),
                };
                return (builder.documents, Some(error));
            }
        }
    }
}

enum Frame {
    Seq {
        items: Vec<Node>,
        line: usize,
        anchor: usize,
    },
    Map {
        entries: Vec<(String, Node)>,
        line: usize,
        anchor: usize,
        /// The key read, waiting for its value; `None` text for a key that is not a scalar.
        key: Option<(Option<String>, usize)>,
    },
}

#[derive(Default)]
struct Builder {
    documents: Vec<Node>,
    stack: Vec<Frame>,
    root: Option<Node>,
    anchors: HashMap<usize, Node>,
    alias_nodes: usize,
    /// The stack depth of the frame whose last element is a scalar value just read: the next
    /// event's line tells where that scalar ends (kubectl folds long strings over lines).
    open_scalar: Option<usize>,
}

impl Builder {
    fn event(&mut self, event: Event, line: usize) -> Result<(), String> {
        self.close_scalar(line);
        match event {
            Event::DocumentStart => {
                self.stack.clear();
                self.root = None;
                self.anchors.clear();
            }
            Event::DocumentEnd => {
                if let Some(root) = self.root.take() {
                    self.documents.push(root);
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                let is_str_tag = tag.is_some_and(|t| t.suffix == "str");
                let node = if style == TScalarStyle::Plain && !is_str_tag {
                    Node::plain(&text, line)
                } else {
                    Node::new(Value::Str(text), line)
                };
                self.insert(node, anchor);
            }
            Event::SequenceStart(anchor, _) => {
                self.open(Frame::Seq {
                    items: Vec::new(),
                    line,
                    anchor,
                })?;
            }
            Event::MappingStart(anchor, _) => {
                self.open(Frame::Map {
                    entries: Vec::new(),
                    line,
                    anchor,
                    key: None,
                })?;
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (node, anchor) = match self.stack.pop() {
                    Some(Frame::Seq {
                        items,
                        line,
                        anchor,
                    }) => (Node::new(Value::Seq(items), line), anchor),
                    Some(Frame::Map {
                        entries,
                        line,
                        anchor,
                        ..
                    }) => (Node::new(Value::Map(entries), line), anchor),
                    None => return Ok(()),
                };
                self.insert(node, anchor);
            }
            Event::Alias(id) => {
                let mut node = self
                    .anchors
                    .get(&id)
                    .cloned()
                    .unwrap_or_else(|| Node::new(Value::Null, line));
                self.alias_nodes += count_nodes(&node);
                if self.alias_nodes > MAX_ALIAS_NODES {
                    return Err(format!(
                        "YAML aliases expand to more than {MAX_ALIAS_NODES} nodes"
                    ));
                }
                node.line = line;
                self.insert(node, 0);
            }
            Event::StreamStart | Event::StreamEnd | Event::Nothing => {}
        }
        Ok(())
    }

    /// The scalar read last ends on the line before the next event's, if that is further on.
    fn close_scalar(&mut self, next_line: usize) {
        let Some(depth) = self.open_scalar.take() else {
            return;
        };
        let node = match self.stack.get_mut(depth.wrapping_sub(1)) {
            Some(Frame::Seq { items, .. }) => items.last_mut(),
            Some(Frame::Map { entries, .. }) => entries.last_mut().map(|(_, n)| n),
            None => None,
        };
        if let Some(node) = node {
            if next_line > node.line + 1 {
                node.last_line = next_line - 1;
            }
        }
    }

    fn open(&mut self, frame: Frame) -> Result<(), String> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(format!("YAML nested deeper than {MAX_DEPTH} levels"));
        }
        self.stack.push(frame);
        Ok(())
    }

    fn insert(&mut self, mut node: Node, anchor: usize) {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        let is_scalar = !matches!(node.value, Value::Seq(_) | Value::Map(_));
        let depth = self.stack.len();
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq { items, .. }) => {
                items.push(node);
                self.open_scalar = is_scalar.then_some(depth);
            }
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                None => *key = Some((node.text().map(str::to_string), node.line)),
                Some((text, key_line)) => {
                    node.line = key_line;
                    if let Some(text) = text {
                        entries.push((text, node));
                        self.open_scalar = is_scalar.then_some(depth);
                    }
                }
            },
        }
    }
}

fn count_nodes(node: &Node) -> usize {
    1 + match &node.value {
        Value::Seq(items) => items.iter().map(count_nodes).sum(),
        Value::Map(entries) => entries.iter().map(|(_, v)| count_nodes(v)).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_remember_their_key_lines() {
        let text = "kind: NodeClaim\nstatus:\n  conditions:\n  - type: Launched\n    message: |\n      multi\n      line\n";
        let (docs, err) = parse_documents(text, 0);
        assert!(err.is_none());
        let condition = &docs[0].path(&["status", "conditions"]).unwrap().items()[0];
        assert_eq!(condition.line, 3);
        let message = condition.get("message").unwrap();
        assert_eq!(message.line, 4);
        assert_eq!(message.text(), Some("multi\nline\n"));
    }

    #[test]
    fn quoted_scalars_stay_strings_and_plain_ones_resolve() {
        let (docs, _) = parse_documents("a: \"110\"\nb: 110\nc: !!str true\nd: ~\ne: 'x'\n", 0);
        let d = &docs[0];
        assert_eq!(d.get("a").unwrap().value, Value::Str("110".into()));
        assert_eq!(d.get("b").unwrap().value, Value::Number("110".into()));
        assert_eq!(d.get("c").unwrap().value, Value::Str("true".into()));
        assert!(d.get("d").unwrap().is_null());
    }

    #[test]
    fn flow_json_parses_too() {
        let (docs, err) = parse_documents("{\"kind\":\"Pod\",\"spec\":{\"nodeName\":\"n1\"}}", 0);
        assert!(err.is_none());
        assert_eq!(
            docs[0].path(&["spec", "nodeName"]).unwrap().text(),
            Some("n1")
        );
    }

    #[test]
    fn aliases_expand_and_are_bounded() {
        let (docs, err) = parse_documents("base: &b {x: 1}\ncopy: *b\n", 0);
        assert!(err.is_none());
        assert_eq!(docs[0].path(&["copy", "x"]).unwrap().int(), Some(1));
        assert_eq!(docs[0].get("copy").unwrap().line, 1);

        let names = ["a", "b", "c", "d", "e", "f", "g"];
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for pair in names.windows(2) {
            let aliases = vec![format!("*{}", pair[0]); 10].join(", ");
            bomb.push_str(&format!("{n}: &{n} [{aliases}]\n", n = pair[1]));
        }
        let (_, err) = parse_documents(&bomb, 0);
        assert!(err.unwrap().message.contains("aliases expand"));
    }

    #[test]
    fn errors_carry_the_line() {
        let (docs, err) = parse_documents("a: 1\nb: [1, 2\nc: 3\n", 0);
        assert!(docs.is_empty());
        let err = err.unwrap();
        assert!(err.message.starts_with("invalid YAML: "), "{}", err.message);
        assert_eq!(err.line, 2);
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!(
            "{}1{}",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        let (_, err) = parse_documents(&deep, 0);
        assert!(err.unwrap().message.contains("nested deeper"));
    }
}
