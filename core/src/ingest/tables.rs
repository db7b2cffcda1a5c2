//! Column tables (`kubectl get`, helm, and the tables inside `kubectl describe`) and
//! `No resources found`.
//!
//! Cells are cut at the header's column positions (kubectl aligns every cell of a column, so
//! an empty cell stays empty); a row that does not align falls back to splitting on runs of
//! two or more spaces.

use crate::facts::{
    Collected, Condition, Container, EmptyList, LabelSelector, Message, MessageOrigin, Meta, Node,
    NodeClaim, NodeClass, NodePool, ObjectRef, Pdb, PersistentVolume, PersistentVolumeClaim, Pod,
    StorageClass, Workload,
};

use super::segment::{self, canonical_kind, Command};
use super::{events_table, Context, Part, Sink};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Upper-case name.
    pub name: String,
    /// Character index of the column's first character in the header.
    start: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub columns: Vec<Column>,
    tabs: bool,
    /// `-o custom-columns` columns printing one label or annotation: (column index, true for
    /// an annotation, key).
    meta_columns: Vec<(usize, bool, String)>,
}

impl Table {
    /// A `kubectl get` (or helm) header: upper-case column names, among them `NAME`, or
    /// `TYPE` and `REASON`, or `LAST SEEN`.
    pub fn from_header(line: &str) -> Option<Table> {
        if line.starts_with(char::is_whitespace) {
            return None;
        }
        let table = Table::columns_of(line)?;
        let upper = table.columns.iter().all(|c| {
            c.name
                .chars()
                .next()
                .is_some_and(|ch| ch.is_ascii_uppercase())
                && c.name.chars().all(|ch| {
                    ch.is_ascii_uppercase() || ch.is_ascii_digit() || " ()%/_.-".contains(ch)
                })
        });
        let known = table.has("NAME")
            || (table.has("TYPE") && table.has("REASON"))
            || table.has("LAST SEEN");
        (upper && known).then_some(table)
    }

    /// Any header of two or more columns (describe's `Type  Reason  Age  From  Message`,
    /// `Namespace  Name  CPU Requests ...`).
    pub fn from_any_header(line: &str) -> Option<Table> {
        Table::columns_of(line)
    }

    fn columns_of(line: &str) -> Option<Table> {
        let tabs = line.trim().contains('\t');
        let mut columns = Vec::new();
        if tabs {
            let mut pos = 0usize;
            for cell in line.split('\t') {
                let name = cell.trim();
                if !name.is_empty() {
                    columns.push(Column {
                        name: name.to_ascii_uppercase(),
                        start: pos,
                    });
                }
                pos += cell.chars().count() + 1;
            }
        } else {
            let chars: Vec<char> = line.trim_end().chars().collect();
            let mut k = 0;
            while k < chars.len() {
                if chars[k] == ' ' {
                    k += 1;
                    continue;
                }
                let start = k;
                let mut name = String::new();
                while k < chars.len() {
                    if chars[k] == ' ' && chars.get(k + 1).is_none_or(|c| *c == ' ') {
                        break;
                    }
                    name.push(chars[k]);
                    k += 1;
                }
                columns.push(Column {
                    name: name.to_ascii_uppercase(),
                    start,
                });
            }
        }
        let words_ok = columns
            .iter()
            .all(|c| c.name.len() <= 40 && !c.name.contains(':') && !c.name.contains('='));
        (columns.len() >= 2 && words_ok).then_some(Table {
            columns,
            tabs,
            meta_columns: Vec::new(),
        })
    }

    /// The header of a `kubectl get ... -o custom-columns=HEADER:.path,...` table: its columns
    /// that print a field kubectl's own tables print are named as there (`.metadata.name` is
    /// NAME, `.spec.nodeName` NODE), so that its rows read as `kubectl get` rows, and those
    /// that print one label or annotation fill the object's. `None` unless the line is the
    /// header the command's columns make.
    pub fn custom_columns(line: &str, command: Option<&Command>) -> Option<Table> {
        let spec = command?
            .output
            .as_deref()?
            .strip_prefix("custom-columns=")?;
        let fields: Vec<(&str, &str)> = spec
            .trim_matches(['\'', '"'])
            .split(',')
            .filter_map(|c| c.split_once(':'))
            .collect();
        let mut table = Table::columns_of(line)?;
        if table.tabs
            || fields.len() != table.columns.len()
            || fields
                .iter()
                .zip(&table.columns)
                .any(|((header, _), c)| !header.eq_ignore_ascii_case(&c.name))
        {
            return None;
        }
        for (i, (_, path)) in fields.iter().enumerate() {
            // `.metadata.labels.karpenter\.sh/nodepool`, or in braces as jsonpath.
            let path = path
                .trim_start_matches('{')
                .trim_end_matches('}')
                .trim_start_matches('.')
                .replace("\\.", ".");
            let standard = match path.as_str() {
                "metadata.name" => "NAME",
                "metadata.namespace" => "NAMESPACE",
                "spec.nodeName" | "status.nodeName" => "NODE",
                "status.phase" => "STATUS",
                "spec.volumeName" => "VOLUME",
                "spec.storageClassName" => "STORAGECLASS",
                _ => {
                    let meta = [("metadata.labels.", false), ("metadata.annotations.", true)]
                        .into_iter()
                        .find_map(|(prefix, annotation)| {
                            Some((annotation, path.strip_prefix(prefix)?.to_string()))
                        });
                    if let Some((annotation, key)) = meta.filter(|(_, k)| !k.is_empty()) {
                        table.meta_columns.push((i, annotation, key));
                    }
                    continue;
                }
            };
            if !table.has(standard) {
                table.columns[i].name = standard.to_string();
            }
        }
        table.has("NAME").then_some(table)
    }

    pub fn has(&self, name: &str) -> bool {
        self.index(name).is_some()
    }

    pub fn index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// The cell of column `name` in a cut row, when non-empty.
    pub fn cell<'r>(&self, cells: &'r [String], name: &str) -> Option<&'r str> {
        let i = self.index(name)?;
        cells.get(i).map(String::as_str).filter(|c| !c.is_empty())
    }

    /// The cells of a row, one per column.
    pub fn cut(&self, row: &str) -> Option<Vec<String>> {
        if self.tabs {
            let mut cells: Vec<String> = row.split('\t').map(|c| c.trim().to_string()).collect();
            if cells.len() > self.columns.len() {
                let rest = cells.split_off(self.columns.len() - 1).join(" ");
                cells.push(rest);
            }
            cells.resize(self.columns.len(), String::new());
            return Some(cells);
        }
        self.cut_at_positions(row)
            .or_else(|| self.cut_on_gaps(row))
            .or_else(|| self.cut_near_positions(row))
    }

    /// The cells of a row whose cells start a little off the header's columns (a name
    /// shortened or lengthened by hand to anonymise a paste shifts the rest of its row) and
    /// that has empty cells (so the gaps do not tell them): each cell goes to the column that
    /// starts within [`SHIFT`] characters of it. `None` when a cell is nowhere near one.
    fn cut_near_positions(&self, row: &str) -> Option<Vec<String>> {
        const SHIFT: usize = 3;
        let mut cells = vec![String::new(); self.columns.len()];
        let last = self.columns.len() - 1;
        let mut offset = 0;
        for part in split_gaps(row.trim_end()) {
            // Character position of `part` in the row (parts are subslices, in order).
            let byte = row[offset..].find(part)? + offset;
            offset = byte + part.len();
            let at = row[..byte].chars().count();
            let (nearest, distance) = self
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| (i, c.start.abs_diff(at)))
                .min_by_key(|(_, d)| *d)?;
            let column = if distance <= SHIFT {
                nearest
            } else if at > self.columns[last].start {
                last
            } else {
                return None;
            };
            if cells[column].is_empty() {
                cells[column] = part.to_string();
            } else if column == last {
                cells[column].push_str("  ");
                cells[column].push_str(part);
            } else {
                return None;
            }
        }
        Some(cells)
    }

    /// The cells of a row cut at the header's column positions; `None` when the row does not
    /// align.
    pub fn cut_at_positions(&self, row: &str) -> Option<Vec<String>> {
        let chars: Vec<char> = row.trim_end().chars().collect();
        let first = self.columns.first()?.start;
        if chars[..first.min(chars.len())].iter().any(|c| *c != ' ') {
            return None;
        }
        let mut cells = Vec::with_capacity(self.columns.len());
        for (n, column) in self.columns.iter().enumerate() {
            let start = column.start.min(chars.len());
            let end = self
                .columns
                .get(n + 1)
                .map_or(chars.len(), |c| c.start.min(chars.len()));
            if n > 0 && start < chars.len() && start > 0 && chars[start - 1] != ' ' {
                return None;
            }
            let cell: String = chars[start..end.max(start)].iter().collect();
            let cell = cell.trim();
            // kubectl pads columns with at least three spaces and no value but the last has a
            // run of two: one here means the row's cells moved (an anonymiser shortened a
            // name), so the gaps cut it rather than the header's positions.
            if n + 1 < self.columns.len() && cell.contains("  ") {
                return None;
            }
            cells.push(cell.to_string());
        }
        Some(cells)
    }

    fn cut_on_gaps(&self, row: &str) -> Option<Vec<String>> {
        let parts: Vec<&str> = split_gaps(row.trim());
        let n = self.columns.len();
        match parts.len() {
            len if len == n => Some(parts.iter().map(|p| p.to_string()).collect()),
            len if len > n => {
                let mut cells: Vec<String> = parts[..n - 1].iter().map(|p| p.to_string()).collect();
                cells.push(parts[n - 1..].join("  "));
                Some(cells)
            }
            _ => None,
        }
    }
}

/// Splits on runs of two or more spaces (or tabs).
pub fn split_gaps(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut k = 0;
    while k < bytes.len() {
        let gap = bytes[k] == b'\t'
            || (bytes[k] == b' ' && bytes.get(k + 1).is_some_and(|b| *b == b' ' || *b == b'\t'));
        if gap {
            if k > start {
                parts.push(&text[start..k]);
            }
            while k < bytes.len() && (bytes[k] == b' ' || bytes[k] == b'\t') {
                k += 1;
            }
            start = k;
        } else {
            k += 1;
        }
    }
    if start < bytes.len() {
        parts.push(&text[start..]);
    }
    parts
}

/// A row of dashes under a header (describe tables).
pub fn is_separator(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && t.chars().all(|c| c == '-' || c == ' ' || c == '\t')
}

/// A `kubectl get` table at `i`: events tables become events; the other kinds become objects
/// known only by their row (merged at the end, never over a fuller description). Returns the
/// index after the table.
pub fn ingest(part: &Part<'_>, i: usize, table: Table, cx: &Context, sink: &mut Sink) -> usize {
    let end = table_end(&part.lines, i);
    if events_table::is_events_table(&table) {
        // `kubectl get events` without `-n` lists the default namespace.
        let namespace = cx
            .command
            .as_ref()
            .filter(|c| c.lists_events())
            .and_then(|c| {
                c.namespace
                    .clone()
                    .or_else(|| (!c.all_namespaces).then(|| "default".to_string()))
            });
        events_table::ingest_rows(part, i + 1, end, &table, namespace.as_deref(), None, sink);
        return end;
    }
    let listed = cx.command.as_ref().and_then(Command::listed_kind);
    for j in i + 1..end {
        let line = part.lines[j];
        if is_separator(line) {
            continue;
        }
        let Some(cells) = table.cut(line) else {
            sink.unrecognised(part, j);
            continue;
        };
        let row = Row {
            table: &table,
            cells: &cells,
            part,
            index: j,
            command: cx.command.as_ref(),
        };
        // A condition's reason or message in custom columns (`-o custom-columns=...,REASON:
        // .status.conditions[?(@.type=="Launched")].reason`) is read by the rules that scan
        // text, as the same line of a describe is.
        let conditions = table.has("REASON") || table.has("MESSAGE");
        if !row.ingest(listed, sink) || conditions {
            sink.unrecognised(part, j);
        }
    }
    end
}

/// Rows of a `kubectl get pods|nodes|nodeclaims` whose header a filter dropped (`kubectl get
/// pods -A | grep Pending`, `kubectl get nodes --show-labels | grep ip-10-0-1-2`): right under
/// the prompt, read with the columns kubectl prints for that resource and those flags
/// (`-A`, `-o wide`, `--show-labels`, `-L`), cut at their gaps. A row with fewer cells than
/// the columns (an empty cell) stays unrecognised.
pub fn headerless(part: &Part<'_>, i: usize, cx: &Context, sink: &mut Sink) -> Option<usize> {
    let command = cx.command.as_ref()?;
    if i == 0 || super::segment::command_line(part.lines[i - 1]).is_none() {
        return None;
    }
    if !command.filtered && !part.lines[i - 1].contains("--no-headers") {
        return None;
    }
    let wide = match command.output.as_deref() {
        None => false,
        Some("wide") => true,
        Some(_) => return None,
    };
    // `helm list -A | grep karpenter`: the releases, whose chart tells the version.
    let helm_list = command.tool == "helm"
        && matches!(
            command.positional.first().map(String::as_str),
            Some("list" | "ls")
        );
    let listed = if helm_list {
        None
    } else {
        Some(command.listed_kind()?)
    };
    let mut columns: Vec<&str> = Vec::new();
    let namespaced = match listed {
        None => {
            columns.extend([
                "NAME",
                "NAMESPACE",
                "REVISION",
                "UPDATED",
                "STATUS",
                "CHART",
                "APP VERSION",
            ]);
            false
        }
        Some("Pod") => {
            columns.extend(["NAME", "READY", "STATUS", "RESTARTS", "AGE"]);
            if wide {
                columns.extend(["IP", "NODE", "NOMINATED NODE", "READINESS GATES"]);
            }
            true
        }
        Some("Node") => {
            columns.extend(["NAME", "STATUS", "ROLES", "AGE", "VERSION"]);
            if wide {
                columns.extend([
                    "INTERNAL-IP",
                    "EXTERNAL-IP",
                    "OS-IMAGE",
                    "KERNEL-VERSION",
                    "CONTAINER-RUNTIME",
                ]);
            }
            false
        }
        Some("NodeClaim") => {
            columns.extend(["NAME", "TYPE", "CAPACITY", "ZONE", "NODE", "READY", "AGE"]);
            if wide {
                columns.extend(["ID", "NODEPOOL", "NODECLASS"]);
            }
            false
        }
        _ => return None,
    };
    if namespaced && command.all_namespaces {
        columns.insert(0, "NAMESPACE");
    }
    let labels: Vec<String> = command
        .label_columns
        .iter()
        .map(|l| l.rsplit('/').next().unwrap_or(l).to_ascii_uppercase())
        .collect();
    columns.extend(labels.iter().map(String::as_str));
    if command.show_labels {
        columns.push("LABELS");
    }
    let line = part.lines[i];
    // Blank cells leave no gap to count: only NodeClaim rows, whose cells each look like
    // what their column holds, are read with fewer cells than columns.
    let blank_cells = labels.is_empty() && !command.show_labels && columns[0] == "NAME";
    let cells_of = |row: &str| -> Option<Vec<String>> {
        let parts = split_gaps(row.trim());
        if parts.len() >= columns.len() {
            return None;
        }
        blank_cells.then(|| claim_row_with_blanks(&columns, &parts))?
    };
    if Table::from_header(line).is_some()
        || (split_gaps(line.trim()).len() < columns.len() && cells_of(line).is_none())
    {
        return None;
    }
    let table = Table {
        columns: columns
            .iter()
            .map(|name| Column {
                name: name.to_string(),
                start: usize::MAX,
            })
            .collect(),
        tabs: false,
        meta_columns: Vec::new(),
    };
    let end = table_end(&part.lines, i - 1);
    for j in i..end {
        let cells = table
            .cut_on_gaps(part.lines[j])
            .or_else(|| cells_of(part.lines[j]));
        let row = cells.as_ref().map(|cells| Row {
            table: &table,
            cells,
            part,
            index: j,
            command: Some(command),
        });
        if !row.is_some_and(|row| row.ingest(command.listed_kind(), sink)) {
            sink.unrecognised(part, j);
        }
    }
    Some(end)
}

/// The cells of a `kubectl get nodeclaims` row that a filter left without its header and
/// whose blank cells (no node yet, no Ready condition yet, a claim not launched yet) left no
/// gap to count: each cell goes to the column whose values it looks like, blanks where a
/// column may be blank. `None` unless exactly one assignment fits, and only for NodeClaim
/// columns (`NAME TYPE CAPACITY ZONE NODE READY AGE`, `-o wide`: `ID NODEPOOL NODECLASS`).
fn claim_row_with_blanks(columns: &[&str], parts: &[&str]) -> Option<Vec<String>> {
    const CLAIM_COLUMNS: &[&str] = &[
        "NAME",
        "TYPE",
        "CAPACITY",
        "ZONE",
        "NODE",
        "READY",
        "AGE",
        "ID",
        "NODEPOOL",
        "NODECLASS",
    ];
    if columns.len() < 7 || columns != &CLAIM_COLUMNS[..columns.len()] {
        return None;
    }
    let capacity = |c: &str| matches!(c, "spot" | "on-demand" | "reserved");
    let ready = |c: &str| matches!(c, "True" | "False" | "Unknown");
    // `m5.large`, `p4d.24xlarge`, `u-6tb1.metal`: one dot.
    let instance_type = |c: &str| {
        c.split_once('.').is_some_and(|(family, size)| {
            !family.is_empty()
                && !size.is_empty()
                && !size.contains('.')
                && c.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        })
    };
    // `us-east-1a`, `us-gov-west-1b`, a Local Zone `us-west-2-lax-1a`.
    let zone = |c: &str| {
        let mut words = c.split('-');
        words
            .next()
            .is_some_and(|w| w.len() == 2 && w.bytes().all(|b| b.is_ascii_lowercase()))
            && c.ends_with(|ch: char| ch.is_ascii_lowercase())
            && c.bytes().any(|b| b.is_ascii_digit())
            && c.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && words.count() >= 2
    };
    let typed = |c: &str| capacity(c) || ready(c) || instance_type(c) || zone(c) || age(c);
    let fits = |column: &str, c: &str| match column {
        "TYPE" => instance_type(c),
        "CAPACITY" => capacity(c),
        "ZONE" => zone(c),
        "READY" => ready(c),
        "AGE" => age(c),
        "ID" => c.contains("://"),
        // A node, NodePool or NodeClass name: anything no typed column would take.
        _ => !typed(c),
    };
    // Blank until the claim launches, registers, or reports Ready; the name, age, NodePool
    // label and NodeClass reference are always set.
    let may_be_blank = |column: &str| !matches!(column, "NAME" | "AGE" | "NODEPOOL" | "NODECLASS");
    /// Every assignment of `parts` to `columns` in order, up to two.
    fn assign(
        columns: &[&str],
        parts: &[&str],
        fits: &dyn Fn(&str, &str) -> bool,
        may_be_blank: &dyn Fn(&str) -> bool,
        cells: &mut Vec<String>,
        found: &mut Vec<Vec<String>>,
    ) {
        if found.len() > 1 {
            return;
        }
        let Some((column, rest)) = columns.split_first() else {
            if parts.is_empty() {
                found.push(cells.clone());
            }
            return;
        };
        if let Some((part, more)) = parts.split_first() {
            if fits(column, part) {
                cells.push(part.to_string());
                assign(rest, more, fits, may_be_blank, cells, found);
                cells.pop();
            }
        }
        if may_be_blank(column) && parts.len() < columns.len() {
            cells.push(String::new());
            assign(rest, parts, fits, may_be_blank, cells, found);
            cells.pop();
        }
    }
    let mut found = Vec::new();
    assign(
        columns,
        parts,
        &fits,
        &may_be_blank,
        &mut Vec::with_capacity(columns.len()),
        &mut found,
    );
    match found.len() {
        1 => found.pop(),
        _ => None,
    }
}

/// A kubectl age: `8s`, `21m`, `2d3h`, `3m12s`, `110d`.
fn age(c: &str) -> bool {
    let mut digits = false;
    let mut units = 0;
    for b in c.bytes() {
        if b.is_ascii_digit() {
            digits = true;
        } else if digits && matches!(b, b's' | b'm' | b'h' | b'd' | b'y') {
            digits = false;
            units += 1;
        } else {
            return false;
        }
    }
    units > 0 && !digits
}

fn table_end(lines: &[&str], header: usize) -> usize {
    // A log line pasted right under the table ends it, unless the table's rows themselves
    // start with a time (`kubectl get events -o custom-columns=TIME:...`).
    let rows_start_with_time = Table::from_header(lines[header]).is_some_and(|t| {
        t.columns.first().is_some_and(|c| {
            // `LAST SEEN` holds ages (`5m`); custom columns may hold times.
            [
                "TIME",
                "LASTSEEN",
                "TIMESTAMP",
                "FIRSTSEEN",
                "LASTTIMESTAMP",
            ]
            .contains(&c.name.as_str())
        })
    });
    let mut j = header + 1;
    while j < lines.len() {
        let line = lines[j];
        if segment::is_blank(line)
            || (!rows_start_with_time && super::logs::starts_with_log_time(line))
            || super::segment::command_line(line).is_some()
            || segment::is_events_heading(line)
            || super::scan::quick_level(line.as_bytes()).is_some()
            || super::scan::header_label(line.as_bytes()).is_some()
            || segment::starts_describe(line)
            // A YAML document pasted right after the table, without a blank line.
            || line.trim_end() == "---"
            || line.starts_with("apiVersion:")
            || (j > header + 1 && Table::from_header(line).is_some())
        {
            break;
        }
        j += 1;
    }
    j
}

struct Row<'r, 'p> {
    table: &'r Table,
    cells: &'r [String],
    part: &'r Part<'p>,
    index: usize,
    command: Option<&'r Command>,
}

impl Row<'_, '_> {
    fn cell(&self, name: &str) -> Option<&str> {
        self.table
            .cell(self.cells, name)
            .filter(|c| !matches!(*c, "<none>" | "<unknown>" | "N/A"))
    }

    fn meta(&self, name: &str, namespaced: bool) -> Meta {
        let known_namespace = self
            .cell("NAMESPACE")
            .map(str::to_string)
            .or_else(|| self.command.and_then(|c| c.namespace.clone()));
        let namespace_assumed = namespaced && known_namespace.is_none();
        let namespace = if namespaced {
            known_namespace.or_else(|| Some("default".to_string()))
        } else {
            None
        };
        // `--show-labels`: `app=api,pod-template-hash=7b9c6d5f4` (a key without a value is
        // printed bare).
        let labels = self
            .cell("LABELS")
            .map(|l| {
                l.split(',')
                    .filter(|kv| !kv.is_empty())
                    .map(|kv| match kv.split_once('=') {
                        Some((k, v)) => (k.to_string(), v.to_string()),
                        None => (kv.to_string(), String::new()),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut meta = Meta {
            name: name.to_string(),
            namespace,
            labels,
            evidence: Some(self.part.evidence(self.index)),
            from_table: true,
            namespace_assumed,
            table_age: self.cell("AGE").map(str::to_string),
            ..Meta::default()
        };
        // `-L karpenter.sh/nodepool`: a column named by the key's last segment (NODEPOOL).
        for key in self
            .command
            .map(|c| c.label_columns.as_slice())
            .unwrap_or_default()
        {
            let header = key.rsplit('/').next().unwrap_or(key).to_ascii_uppercase();
            if let Some(value) = self.cell(&header) {
                meta.labels.insert(key.clone(), value.to_string());
            }
        }
        for (column, annotation, key) in &self.table.meta_columns {
            let value = self.cells.get(*column).map(String::as_str);
            if let Some(value) = value.filter(|v| !v.is_empty() && *v != "<none>") {
                let map = if *annotation {
                    &mut meta.annotations
                } else {
                    &mut meta.labels
                };
                map.insert(key.clone(), value.to_string());
            }
        }
        meta
    }

    fn ready_condition(&self, status: &str) -> Condition {
        Condition {
            condition_type: "Ready".to_string(),
            status: status.to_string(),
            reason: None,
            message: None,
            evidence: Some(self.part.evidence(self.index)),
        }
    }

    /// Turns the row into an object; false when the table's kind is unknown.
    fn ingest(&self, listed: Option<&'static str>, sink: &mut Sink) -> bool {
        let Some(raw_name) = self.cell("NAME").filter(|n| is_object_name(n)) else {
            return false;
        };
        // A word typed under the table (`thanks`) fills the first cell alone; kubectl fills
        // more (a row's age, status or ready count is never blank).
        if self.table.columns.len() > 2 && self.cells.iter().filter(|c| !c.is_empty()).count() < 2 {
            return false;
        }
        let (kind, name) = match raw_name.split_once('/') {
            Some((k, n)) => (canonical_kind(k), n),
            None => (self.kind_from_header().or(listed), raw_name),
        };
        let Some(kind) = kind else {
            if self.table.has("CHART") {
                self.helm_release(sink);
                return true;
            }
            return false;
        };
        match kind {
            "Pod" => self.pod(name, sink),
            "Node" => self.node(name, sink),
            // `kubectl get machines` (before v0.32) prints the NodeClaim columns.
            "NodeClaim" => self.nodeclaim(name, listed == Some("Machine"), sink),
            "Machine" => self.nodeclaim(name, true, sink),
            "NodePool" => self.nodepool(name, false, sink),
            // `kubectl get provisioners` (v1alpha5): a NodePool fact marked as such, as its YAML.
            "Provisioner" => self.nodepool(name, true, sink),
            "EC2NodeClass" => self.nodeclass(name, sink),
            "PodDisruptionBudget" => self.pdb(name, sink),
            "StorageClass" => self.storage_class(name, sink),
            "PersistentVolumeClaim" => self.pvc(name, sink),
            "PersistentVolume" => self.pv(name, sink),
            "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" => {
                self.workload(kind, name, sink)
            }
            _ => return false,
        }
        true
    }

    fn kind_from_header(&self) -> Option<&'static str> {
        let t = self.table;
        Some(if t.has("NODECLASS") && t.has("NODES") {
            "NodePool"
        } else if t.has("ZONE") && t.has("NODE") && (t.has("CAPACITY") || t.has("TYPE")) {
            "NodeClaim"
        } else if t.has("ROLES") && t.has("VERSION") {
            "Node"
        } else if t.has("RESTARTS") && t.has("STATUS") {
            "Pod"
        } else if t.has("PROVISIONER") && t.has("RECLAIMPOLICY") {
            "StorageClass"
        } else if t.has("VOLUME") && t.has("STORAGECLASS") && t.has("ACCESS MODES") {
            // `kubectl get pvc` (a PersistentVolume's table has CLAIM, not VOLUME).
            "PersistentVolumeClaim"
        } else if t.has("CLAIM") && t.has("RECLAIM POLICY") {
            "PersistentVolume"
        } else if t.has("ALLOWED DISRUPTIONS") || t.has("MIN AVAILABLE") {
            "PodDisruptionBudget"
        } else if t.has("UP-TO-DATE") && t.has("AVAILABLE") && !t.has("DESIRED") {
            "Deployment"
        } else if t.has("DESIRED") && t.has("NODE SELECTOR") {
            "DaemonSet"
        } else {
            return None;
        })
    }

    fn pod(&self, name: &str, sink: &mut Sink) {
        let mut pod = Pod {
            meta: self.meta(name, true),
            node_name: self.cell("NODE").map(str::to_string),
            nominated_node: self.cell("NOMINATED NODE").map(str::to_string),
            // `12 (2m ago)`: the count, then when the last restart was.
            restarts: self
                .cell("RESTARTS")
                .and_then(|r| r.split_whitespace().next())
                .and_then(|n| n.parse().ok()),
            ..Pod::default()
        };
        // READY `1/2`: a container is not ready, so the pod does not count as healthy (for a
        // PodDisruptionBudget, among others).
        if let Some((ready, total)) = self
            .cell("READY")
            .and_then(|r| r.split_once('/'))
            .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
        {
            let mut condition = self.ready_condition(if ready == total { "True" } else { "False" });
            if ready < total {
                condition.reason = Some("ContainersNotReady".to_string());
                condition.message = Some(format!("{ready}/{total} containers ready"));
            }
            pod.conditions.push(condition);
        }
        if let Some(status) = self.cell("STATUS") {
            pod.phase = pod_phase(status).map(str::to_string);
            let healthy = matches!(status, "Running" | "Completed" | "Pending");
            if !healthy {
                sink.message(Message {
                    origin: MessageOrigin::ObjectField,
                    text: status.to_string(),
                    evidence: self.part.evidence(self.index),
                    object: Some(pod.object_ref()),
                    reason: Some(status.to_string()),
                    ..Message::default()
                });
            }
        }
        sink.deferred.pods.push(pod);
    }

    fn node(&self, name: &str, sink: &mut Sink) {
        let mut node = Node {
            meta: self.meta(name, false),
            ..Node::default()
        };
        if let Some(status) = self.cell("STATUS") {
            let ready = status.split(',').next().unwrap_or_default();
            let condition = match ready {
                "Ready" => "True",
                "NotReady" => "False",
                _ => "Unknown",
            };
            node.conditions.push(self.ready_condition(condition));
            node.unschedulable = status.contains("SchedulingDisabled");
        }
        if let Some(roles) = self.cell("ROLES") {
            for role in roles.split(',') {
                node.meta
                    .labels
                    .insert(format!("node-role.kubernetes.io/{role}"), String::new());
            }
        }
        sink.collected(Collected::Nodes);
        sink.deferred.nodes.push(node);
    }

    fn nodeclaim(&self, name: &str, is_machine: bool, sink: &mut Sink) {
        let mut claim = NodeClaim {
            meta: self.meta(name, false),
            instance_type: self.cell("TYPE").map(str::to_string),
            capacity_type: self.cell("CAPACITY").map(str::to_string),
            zone: self.cell("ZONE").map(str::to_string),
            node_name: self.cell("NODE").map(str::to_string),
            nodepool: self.cell("NODEPOOL").map(str::to_string),
            nodeclass_ref: self.cell("NODECLASS").map(str::to_string),
            provider_id: self.cell("ID").map(str::to_string),
            is_machine,
            ..NodeClaim::default()
        };
        if let Some(ready) = self.cell("READY") {
            claim.conditions.push(self.ready_condition(ready));
        }
        sink.collected(Collected::NodeClaims);
        sink.deferred.nodeclaims.push(claim);
    }

    fn nodepool(&self, name: &str, is_provisioner: bool, sink: &mut Sink) {
        let mut pool = NodePool {
            meta: self.meta(name, false),
            is_provisioner,
            nodeclass_ref: self.cell("NODECLASS").map(str::to_string),
            weight: self.cell("WEIGHT").and_then(|w| w.parse().ok()),
            ..NodePool::default()
        };
        if let Some(ready) = self.cell("READY") {
            pool.conditions.push(self.ready_condition(ready));
        }
        // `status.nodes`, as `status.resources.nodes` of the YAML: KW407 sizes a percentage
        // disruption budget by it.
        if let Some(nodes) = self.cell("NODES").filter(|n| n.parse::<u64>().is_ok()) {
            pool.usage.insert("nodes".to_string(), nodes.to_string());
        }
        sink.collected(Collected::NodePools);
        sink.deferred.nodepools.push(pool);
    }

    fn nodeclass(&self, name: &str, sink: &mut Sink) {
        let mut class = NodeClass {
            meta: self.meta(name, false),
            role: self.cell("ROLE").map(str::to_string),
            ..NodeClass::default()
        };
        if let Some(ready) = self.cell("READY") {
            class.conditions.push(self.ready_condition(ready));
        }
        sink.collected(Collected::NodeClasses);
        sink.deferred.nodeclasses.push(class);
    }

    /// A `kubectl get pvc` row: STATUS is the phase, or `Terminating` when the claim has a
    /// deletionTimestamp (kubectl prints that instead of the phase).
    fn pvc(&self, name: &str, sink: &mut Sink) {
        let status = self.cell("STATUS");
        let terminating = status == Some("Terminating");
        sink.deferred.pvcs.push(PersistentVolumeClaim {
            meta: self.meta(name, true),
            storage_class: self.cell("STORAGECLASS").map(str::to_string),
            volume_name: self.cell("VOLUME").map(str::to_string),
            phase: status.filter(|_| !terminating).map(str::to_string),
            terminating,
            ..PersistentVolumeClaim::default()
        });
    }

    /// A `kubectl get pv` row: `NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM
    /// STORAGECLASS [VOLUMEATTRIBUTESCLASS] REASON AGE`. The zone is not a column: it shows
    /// only as a label (`-L topology.kubernetes.io/zone`, `--show-labels`), which in-tree and
    /// migrated volumes carry; a CSI volume's is in its node affinity, in the YAML.
    fn pv(&self, name: &str, sink: &mut Sink) {
        let meta = self.meta(name, false);
        let zones = PV_ZONE_LABELS
            .iter()
            .find_map(|k| meta.label(k))
            .map(|z| vec![z.to_string()])
            .unwrap_or_default();
        let claim = self.cell("CLAIM").and_then(|c| {
            let (namespace, name) = c.split_once('/')?;
            Some(ObjectRef::new(
                "PersistentVolumeClaim",
                Some(namespace),
                name,
            ))
        });
        sink.deferred.pvs.push(PersistentVolume {
            storage_class: self.cell("STORAGECLASS").map(str::to_string),
            phase: self.cell("STATUS").map(str::to_string),
            zones,
            claim,
            meta,
            ..PersistentVolume::default()
        });
    }

    fn pdb(&self, name: &str, sink: &mut Sink) {
        let pdb = Pdb {
            meta: self.meta(name, true),
            min_available: self.cell("MIN AVAILABLE").map(str::to_string),
            max_unavailable: self.cell("MAX UNAVAILABLE").map(str::to_string),
            disruptions_allowed: self
                .cell("ALLOWED DISRUPTIONS")
                .and_then(|d| d.parse().ok()),
            ..Pdb::default()
        };
        sink.collected(Collected::Pdbs);
        sink.deferred.pdbs.push(pdb);
    }

    /// `gp2 (default)   kubernetes.io/aws-ebs   Delete   WaitForFirstConsumer   false   2y`.
    fn storage_class(&self, name: &str, sink: &mut Sink) {
        let is_default = name.ends_with("(default)");
        let name = name.trim_end_matches("(default)").trim_end();
        sink.deferred.storage_classes.push(StorageClass {
            meta: self.meta(name, false),
            is_default,
            provisioner: self.cell("PROVISIONER").map(str::to_string),
            volume_binding_mode: self.cell("VOLUMEBINDINGMODE").map(str::to_string),
            ..StorageClass::default()
        });
    }

    fn workload(&self, kind: &str, name: &str, sink: &mut Sink) {
        let (ready, replicas) = match self.cell("READY").and_then(|r| r.split_once('/')) {
            Some((r, d)) => (r.parse().ok(), d.parse().ok()),
            None => (
                self.cell("READY").and_then(|r| r.parse().ok()),
                self.cell("DESIRED").and_then(|d| d.parse().ok()),
            ),
        };
        let images: Vec<&str> = self
            .cell("IMAGES")
            .map(|i| i.split(',').collect())
            .unwrap_or_default();
        let names: Vec<&str> = self
            .cell("CONTAINERS")
            .map(|c| c.split(',').collect())
            .unwrap_or_default();
        let containers = images
            .iter()
            .enumerate()
            .map(|(k, image)| Container {
                name: names.get(k).copied().unwrap_or_default().to_string(),
                image: Some(image.to_string()),
                ..Container::default()
            })
            .collect();
        let workload = Workload {
            kind: kind.to_string(),
            meta: self.meta(name, true),
            replicas,
            ready_replicas: ready,
            selector: self
                .cell("SELECTOR")
                .map(parse_selector)
                .unwrap_or_default(),
            containers,
            ..Workload::default()
        };
        if workload.meta.name == "karpenter" {
            sink.collected(Collected::KarpenterDeployment);
        }
        sink.deferred.workloads.push(workload);
    }

    fn helm_release(&self, sink: &mut Sink) {
        let chart = self.cell("CHART");
        if let Some(version) = chart
            .and_then(|c| c.strip_prefix("karpenter-crd-"))
            .and_then(segment::version_number)
        {
            sink.facts.crd_chart_version.get_or_insert(version);
        }
        if let Some(version) = chart.and_then(segment::karpenter_version_in) {
            sink.facts.karpenter_version.get_or_insert(version);
        }
        // The controller chart's release (`karpenter-1.6.3`, not `karpenter-crd-1.6.3`) is in
        // the namespace the controller runs in: fix commands then address it instead of
        // trying the usual namespaces in turn.
        let controller_chart = chart
            .and_then(|c| c.strip_prefix("karpenter-"))
            .is_some_and(|v| {
                v.trim_start_matches('v')
                    .starts_with(|c: char| c.is_ascii_digit())
            });
        if controller_chart && sink.facts.karpenter_namespace.is_none() {
            sink.facts.karpenter_namespace = self.cell("NAMESPACE").map(str::to_string);
        }
    }
}

/// The labels that tell a PersistentVolume's zone, newest first.
pub const PV_ZONE_LABELS: &[&str] = &[
    "topology.kubernetes.io/zone",
    "topology.ebs.csi.aws.com/zone",
    "failure-domain.beta.kubernetes.io/zone",
];

/// A name `kubectl get` prints: no blank in it (a sentence typed under a table is not a row),
/// but for the `(default)` kubectl appends to the default StorageClass's.
fn is_object_name(name: &str) -> bool {
    let name = name.strip_suffix(" (default)").unwrap_or(name);
    !name.is_empty()
        && !name.contains(char::is_whitespace)
        && !name.ends_with(['?', '!', ',', ':', ';'])
}

/// The pod phase a `kubectl get pods` STATUS implies, when it does.
fn pod_phase(status: &str) -> Option<&'static str> {
    Some(match status {
        "Running" | "CrashLoopBackOff" | "Terminating" | "NotReady" => "Running",
        "Completed" | "Succeeded" => "Succeeded",
        "Error" | "Evicted" | "Failed" | "OOMKilled" | "ContainerStatusUnknown" => "Failed",
        "Pending"
        | "ContainerCreating"
        | "ImagePullBackOff"
        | "ErrImagePull"
        | "PodInitializing"
        | "CreateContainerConfigError"
        | "InvalidImageName"
        | "ErrImageNeverPull" => "Pending",
        s if s.starts_with("Init:") => "Pending",
        _ => return None,
    })
}

/// `a=b,c=d` (kubectl's selector column and describe's `Selector:`).
pub fn parse_selector(text: &str) -> LabelSelector {
    let mut selector = LabelSelector::default();
    for pair in text.split(',') {
        if let Some((k, v)) = pair.split_once('=') {
            selector
                .match_labels
                .insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    selector
}

/// `No resources found`, `No resources found in <ns> namespace.`, `No events found`: an empty
/// list of the resource the command asked for.
pub fn no_resources(part: &Part<'_>, i: usize, cx: &Context, sink: &mut Sink) -> Option<usize> {
    let line = part.lines[i].trim();
    let rest = line
        .strip_prefix("No resources found")
        .or_else(|| line.strip_prefix("No events found"))?;
    let rest = rest.trim().trim_end_matches('.');
    let namespace = rest
        .strip_prefix("in ")
        .and_then(|r| r.strip_suffix(" namespace"))
        .map(str::to_string);
    if !(rest.is_empty() || namespace.is_some()) {
        return None;
    }
    let command = cx.command.as_ref();
    let resource = if line.starts_with("No events found") {
        Some("events".to_string())
    } else {
        command
            .filter(|c| c.verb.as_deref() == Some("get"))
            .and_then(|c| c.resource.clone())
    };
    let namespace = namespace.or_else(|| command.and_then(|c| c.namespace.clone()));
    for r in resource.iter().flat_map(|r| r.split(',')) {
        let collected = match canonical_kind(r) {
            Some("NodeClaim") => Some(Collected::NodeClaims),
            Some("NodePool") => Some(Collected::NodePools),
            Some("EC2NodeClass") => Some(Collected::NodeClasses),
            Some("PodDisruptionBudget") => Some(Collected::Pdbs),
            Some("Node") => Some(Collected::Nodes),
            Some("Event") => Some(Collected::PodEvents),
            _ => None,
        };
        if let Some(c) = collected {
            sink.collected(c);
        }
    }
    sink.facts.empty_lists.push(EmptyList {
        resource,
        namespace,
        evidence: part.evidence(i),
    });
    Some(i + 1)
}

/// Objects seen only as table rows, added once every document is read unless a fuller
/// description of the same object exists.
#[derive(Debug, Default)]
pub struct Deferred {
    pods: Vec<Pod>,
    nodes: Vec<Node>,
    nodeclaims: Vec<NodeClaim>,
    nodepools: Vec<NodePool>,
    nodeclasses: Vec<NodeClass>,
    pdbs: Vec<Pdb>,
    pvcs: Vec<PersistentVolumeClaim>,
    pvs: Vec<PersistentVolume>,
    workloads: Vec<Workload>,
    storage_classes: Vec<StorageClass>,
}

impl Deferred {
    pub fn apply(self, facts: &mut crate::facts::Facts) {
        /// Adds the rows not known yet; a row repeating a known object (another table of the
        /// same objects: `-o wide`, then `--show-labels`) lends it the labels it lacks.
        fn merge<T>(into: &mut Vec<T>, rows: Vec<T>, meta: impl Fn(&mut T) -> &mut Meta) {
            // Positions by (namespace, name) and by name: `kubectl get pods -A` of a big
            // cluster has thousands of rows, and a search per row would be quadratic.
            use std::collections::BTreeMap;
            type Key = (Option<String>, String);
            let mut by_key: BTreeMap<Key, usize> = BTreeMap::new();
            let mut by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
            fn index(
                by_key: &mut BTreeMap<Key, usize>,
                by_name: &mut BTreeMap<String, Vec<usize>>,
                i: usize,
                m: &Meta,
            ) {
                by_key
                    .entry((m.namespace.clone(), m.name.clone()))
                    .or_insert(i);
                by_name.entry(m.name.clone()).or_default().push(i);
            }
            for (i, o) in into.iter_mut().enumerate() {
                index(&mut by_key, &mut by_name, i, meta(o));
            }
            for mut row in rows {
                let (namespace, name) = {
                    let m = meta(&mut row);
                    (m.namespace.clone(), m.name.clone())
                };
                let assumed = meta(&mut row).namespace_assumed;
                let same = by_key.get(&(namespace, name.clone())).copied();
                // `kubectl get pods` in the context's namespace, next to `kubectl describe pod
                // -n shop`: the one object of that name is the one the row lists.
                let same = same.or_else(|| match by_name.get(&name).map(Vec::as_slice) {
                    Some([i]) if assumed => Some(*i),
                    _ => None,
                });
                match same {
                    Some(i) => {
                        let labels = std::mem::take(&mut meta(&mut row).labels);
                        let known = meta(&mut into[i]);
                        for (k, v) in labels {
                            known.labels.entry(k).or_insert(v);
                        }
                    }
                    None => {
                        index(&mut by_key, &mut by_name, into.len(), meta(&mut row));
                        into.push(row);
                    }
                }
            }
        }
        // Before the rows merge: a row naming the header-less claim then joins it.
        super::describe::name_unnamed_claim(facts, &self.nodeclaims);
        merge(&mut facts.pods, self.pods, |p| &mut p.meta);
        merge(&mut facts.nodes, self.nodes, |n| &mut n.meta);
        merge(&mut facts.nodeclaims, self.nodeclaims, |n| &mut n.meta);
        // A NodePool's YAML pasted without its status still gets the row's node count.
        for row in &self.nodepools {
            if let (Some(nodes), Some(known)) = (
                row.usage.get("nodes"),
                facts
                    .nodepools
                    .iter_mut()
                    .find(|p| p.meta.name == row.meta.name),
            ) {
                known
                    .usage
                    .entry("nodes".to_string())
                    .or_insert(nodes.clone());
            }
        }
        merge(&mut facts.nodepools, self.nodepools, |n| &mut n.meta);
        merge(&mut facts.nodeclasses, self.nodeclasses, |n| &mut n.meta);
        merge(&mut facts.pdbs, self.pdbs, |p| &mut p.meta);
        merge(&mut facts.storage_classes, self.storage_classes, |s| {
            &mut s.meta
        });
        merge(&mut facts.pvcs, self.pvcs, |p| &mut p.meta);
        merge(&mut facts.persistent_volumes, self.pvs, |p| &mut p.meta);
        // A row of a workload known already (its object, or a row of the same table pasted
        // twice) adds nothing.
        for w in self.workloads {
            let known = facts.workloads.iter().any(|f| {
                f.kind == w.kind
                    && f.meta.name == w.meta.name
                    && f.meta.namespace == w.meta.namespace
            });
            if !known {
                facts.workloads.push(w);
            }
        }
    }
}

/// The object a row names, for events of old kubectl versions (`KIND` and `NAME` columns).
pub fn kind_and_name(kind: &str, name: &str, namespace: Option<&str>) -> Option<ObjectRef> {
    segment::object_ref(&format!("{kind}/{name}"), namespace)
}
