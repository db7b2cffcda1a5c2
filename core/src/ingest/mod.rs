//! Ingest: documents -> facts. Splits a mixed paste into segments, recognises each format and
//! fills the fact model, keeping evidence (label, line, exact text) for everything.
//!
//! A document arriving in a wrapper (terminal colour codes, a `> ` quote, an indented Markdown
//! code block) is unwrapped first, line for line (see `unwrap`). The segmenter walks the lines
//! of each document once. Karpenter log lines go through the
//! prefilter of [`scan`] first (noise is counted, not parsed); every other line starts a
//! segment of the first format that claims it:
//!
//! | first line                                   | segment                         | module          |
//! |----------------------------------------------|---------------------------------|-----------------|
//! | `==> LABEL <==`                              | new document part (label, lines)| here            |
//! | `$ kubectl ...` prompt                        | context for what follows        | `segment`       |
//! | JSON / console log line (prefixed, wrapped)  | log record (console: multi-line)| `logs`          |
//! | journal / klog line                          | kubelet message                 | `kubelet`       |
//! | `No resources found...`                      | empty list                      | `tables`        |
//! | `Name:` at column 0                          | `kubectl describe` block        | `describe*`     |
//! | `Events:` at column 0                        | a describe Events table alone   | `events_table`  |
//! | upper-case column header                     | `kubectl get` table / events    | `tables`        |
//! | `apiVersion:` / `kind:` / `---` / helm values | YAML objects                    | `objects`       |
//! | `{` / `[` opening a multi-line value          | JSON objects, exports, or text  | `objects`, here |
//! | `time=... type=... reason=...`, event rows    | events                          | `events_table`  |
//! | anything else                                | `Unrecognised` message          | here            |

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

use crate::document::{Document, Evidence, InputError};
use crate::facts::{Absorb, Collected, Facts, LogRecord, Message, MessageOrigin, ObjectRef};
use crate::rules::text::is_unnumbered_mask;

mod describe;
mod describe_misc;
mod describe_node;
mod describe_pod;
pub(crate) mod events_table;
mod gutter;
mod kubelet;
pub mod logs;
pub mod objects;
pub mod scan;
mod segment;
mod tables;
mod unwrap;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub use karpenter_why_scan::wasm_teddy;

use objects::Segment;
use scan::{Decision, LogLineFilter};
use segment::{command_line, Command};

/// Ingests every document into one set of facts.
pub fn ingest(documents: &[Document]) -> Facts {
    let mut sink = Sink::default();
    for doc in documents {
        let unwrapped = unwrap::unwrapped(&doc.text).map(|u| Document {
            line_numbers: match &u.origin {
                // Joined lines keep the number of their first piece.
                Some(origin) => Some(origin.iter().map(|&k| doc.original_line(k)).collect()),
                None => doc.line_numbers.clone(),
            },
            text: u.text,
            label: doc.label.clone(),
            omitted_log_lines: doc.omitted_log_lines.clone(),
            omitted_other_log_lines: doc.omitted_other_log_lines,
        });
        let doc = unwrapped.as_ref().unwrap_or(doc);
        sink.facts.other_component_log_lines += doc.omitted_other_log_lines;
        for (level, count) in &doc.omitted_log_lines {
            *sink
                .facts
                .log_lines_by_level
                .entry(level.clone())
                .or_insert(0) += count;
            sink.facts.collected.insert(Collected::KarpenterLogs);
            if level == "DEBUG" {
                sink.facts.collected.insert(Collected::DebugLogs);
            }
        }
        if let Some((first, last)) = own_report_range(doc) {
            sink.facts.own_report.push((doc.label.clone(), first, last));
        }
        for part in split_parts(doc) {
            let part = Part::new(&part, &mut sink);
            ingest_part(&part, &mut sink);
        }
    }
    sink.finish()
}

/// Where parsed facts go, plus what can only be settled once every document is read.
#[derive(Default)]
pub(crate) struct Sink {
    pub facts: Facts,
    pub deferred: tables::Deferred,
    /// The one object the current command prints (`kubectl get nodepool x -o yaml | sed
    /// -n '/^status/,$p'`): the text no format claims is about it.
    pub printed_object: Option<ObjectRef>,
    /// Every [`Block`] read so far: (text hash, context hash), and the text hashes alone.
    seen_blocks: HashSet<(u64, u64)>,
    seen_block_texts: HashSet<u64>,
    /// Hashes of the timestamped log lines the prefilter dropped: a block pasted twice counts
    /// its noise lines once, as [`drop_repeated_log_lines`] does for the records.
    dropped_log_lines: HashSet<u64>,
}

/// A run of input lines between blank lines and prompts (one command's output, one document
/// pasted whole) and the lengths of the fact lists before it was read.
struct Block {
    start: usize,
    /// Hash of the prompt the run is the output of; 0 when it follows none.
    context: u64,
    mark: FactsMark,
}

/// A line that starts a document of its own (a describe, a JSON value, a YAML object, a
/// table), so a [`Block`]: two copies of one output pasted without a blank line between
/// are still two blocks.
fn starts_document(line: &str) -> bool {
    segment::starts_describe(line)
        || segment::is_events_heading(line)
        || line.starts_with(['{', '['])
        || line.starts_with("apiVersion:")
        || line.trim_end() == "---"
        || tables::Table::from_header(line).is_some()
}

/// Lengths of the fact lists at one point of the reading, to take back what came after.
struct FactsMark([usize; 20]);

impl FactsMark {
    fn of(f: &Facts) -> Self {
        // Every field named, so a fact list added to `Facts` must be placed here or below.
        // Kept as they are: what the repeat says again anyway (the commands typed, the
        // collected kinds, versions and namespace, aws-auth, which merges) and what is
        // derived after reading (`now`, the indexes, the own-report ranges).
        let Facts {
            messages,
            events,
            logs,
            pods,
            nodes,
            nodeclaims,
            nodepools,
            nodeclasses,
            pdbs,
            workloads,
            storage_classes,
            persistent_volumes,
            pvcs,
            settings,
            crds,
            aws_auth: _,
            security_group_policies,
            service_accounts,
            empty_lists,
            event_field_paths,
            commands: _,
            own_report: _,
            karpenter_version: _,
            crd_chart_version: _,
            karpenter_namespace: _,
            collected: _,
            input_errors,
            now: _,
            log_lines_by_level: _,
            other_component_log_lines: _,
            log_index: _,
            claim_nodepool_index: _,
        } = f;
        FactsMark([
            messages.len(),
            events.len(),
            logs.len(),
            pods.len(),
            nodes.len(),
            nodeclaims.len(),
            nodepools.len(),
            nodeclasses.len(),
            pdbs.len(),
            workloads.len(),
            storage_classes.len(),
            persistent_volumes.len(),
            pvcs.len(),
            settings.len(),
            crds.len(),
            security_group_policies.len(),
            service_accounts.len(),
            empty_lists.len(),
            event_field_paths.len(),
            input_errors.len(),
        ])
    }

    /// Takes back every fact added since the mark; the log lines it read no longer count.
    fn roll_back(&self, f: &mut Facts) {
        let [messages, events, logs, pods, nodes, nodeclaims, nodepools, nodeclasses, pdbs, workloads, storage_classes, persistent_volumes, pvcs, settings, crds, sgps, accounts, empty_lists, field_paths, errors] =
            self.0;
        let dropped = f.logs.split_off(logs.min(f.logs.len()));
        for record in &dropped {
            uncount_log_line(f, record);
        }
        f.messages.truncate(messages);
        f.events.truncate(events);
        f.pods.truncate(pods);
        f.nodes.truncate(nodes);
        f.nodeclaims.truncate(nodeclaims);
        f.nodepools.truncate(nodepools);
        f.nodeclasses.truncate(nodeclasses);
        f.pdbs.truncate(pdbs);
        f.workloads.truncate(workloads);
        f.storage_classes.truncate(storage_classes);
        f.persistent_volumes.truncate(persistent_volumes);
        f.pvcs.truncate(pvcs);
        f.settings.truncate(settings);
        f.crds.truncate(crds);
        f.security_group_policies.truncate(sgps);
        f.service_accounts.truncate(accounts);
        f.empty_lists.truncate(empty_lists);
        f.event_field_paths.truncate(field_paths);
        f.input_errors.truncate(errors);
    }
}

/// Takes back the count of a log record's line ([`Sink::count_log_line`]).
fn uncount_log_line(f: &mut Facts, record: &LogRecord) {
    if crate::facts::foreign_log_line(&record.evidence.text) {
        f.other_component_log_lines = f.other_component_log_lines.saturating_sub(1);
    } else if let Some(n) = f.log_lines_by_level.get_mut(&record.level) {
        *n = n.saturating_sub(1);
    }
}

/// A hash of lines, each without its trailing blanks; compared only within one reading.
fn text_hash<'a>(lines: impl IntoIterator<Item = &'a str>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    for line in lines {
        line.trim_end().hash(&mut hasher);
    }
    hasher.finish()
}

/// One fact per object: a second full description of an object (describe and YAML of it, one
/// paste twice) joins the first ([`Absorb::absorb`]), where the first was. Same kind (for
/// workloads), namespace and name make the same object; a name an anonymiser masked without
/// a number (`<redacted>`, `<nodeclaim>` for a header-less describe) cannot tell objects
/// apart, so such objects stay apart.
fn merge_duplicates<T: Absorb>(objects: &mut Vec<T>) {
    let mut out: Vec<T> = Vec::with_capacity(objects.len());
    let mut seen: HashMap<(String, Option<String>, String), usize> =
        HashMap::with_capacity(objects.len());
    for object in objects.drain(..) {
        let meta = object.meta();
        if meta.name.is_empty() || is_unnumbered_mask(&meta.name) {
            out.push(object);
            continue;
        }
        let key = (
            object.kind().to_string(),
            meta.namespace.clone(),
            meta.name.clone(),
        );
        match seen.get(&key) {
            Some(&i) => out[i].absorb(object),
            None => {
                seen.insert(key, out.len());
                out.push(object);
            }
        }
    }
    *objects = out;
}

/// One message per condition of an object: an object described twice (describe and YAML,
/// one paste twice) wrote each of its conditions twice, and the report would show the
/// condition "seen 2 times" when it was seen once. The first, as read first, stays. Objects
/// masked alike (`<redacted>`) cannot be told apart, so their conditions all stay.
fn drop_repeated_conditions(messages: &mut Vec<Message>) {
    let mut seen: std::collections::HashSet<(ObjectRef, String, Option<String>)> =
        std::collections::HashSet::new();
    messages.retain(|m| {
        let Some(object) = &m.object else {
            return true;
        };
        if m.origin != MessageOrigin::Condition || is_unnumbered_mask(&object.name) {
            return true;
        }
        seen.insert((object.clone(), m.text.clone(), m.reason.clone()))
    });
}

/// One event per row of an object's Events: a describe pasted twice wrote each of its rows
/// twice, and the report would show `(x19 over 40m)` "seen 38 times". A row is a repeat when
/// it reads the same (the same line, count and last time, about the same object): two Event
/// objects of one message differ in their times. Its message goes with it.
/// Objects masked alike cannot be told apart, so their rows all stay.
fn drop_repeated_events(facts: &mut Facts) {
    type Row = (ObjectRef, String, usize, Option<String>);
    let mut seen: std::collections::HashSet<Row> = std::collections::HashSet::new();
    let mut dropped: std::collections::HashSet<(String, usize)> = std::collections::HashSet::new();
    facts.events.retain(|e| {
        let Some(object) = &e.object else {
            return true;
        };
        if is_unnumbered_mask(&object.name)
            || seen.insert((
                object.clone(),
                e.evidence.text.clone(),
                e.count,
                e.age.clone(),
            ))
        {
            return true;
        }
        dropped.insert((e.evidence.source.clone(), e.evidence.line));
        false
    });
    if dropped.is_empty() {
        return;
    }
    facts.messages.retain(|m| {
        m.origin != MessageOrigin::Event
            || !dropped.contains(&(m.evidence.source.clone(), m.evidence.line))
    });
}

/// One record per log line: the same record met again (a log pasted twice, two overlapping
/// `--since` windows, a line of a stern output also in a CloudWatch export) is one record
/// read twice, not a repeat, since each carries its own time (Karpenter's to the
/// millisecond, klog's to the microsecond). Records without a time cannot be told from a
/// repeat and all stay. Their messages go with them.
fn drop_repeated_log_lines(facts: &mut Facts) {
    let at = |e: &Evidence| (e.source.clone(), e.line);
    // Per (time, message): the records kept.
    let mut kept: HashMap<(String, String), Vec<LogRecord>> = HashMap::new();
    let mut dropped: HashSet<(String, usize)> = HashSet::new();
    let mut records = std::mem::take(&mut facts.logs);
    records.retain(|r| {
        let Some(time) = &r.time else {
            return true;
        };
        let same = kept.entry((time.clone(), r.message.clone())).or_default();
        if same
            .iter()
            .any(|k| at(&k.evidence) != at(&r.evidence) && same_record(k, r))
        {
            uncount_log_line(facts, r);
            dropped.insert(at(&r.evidence));
            return false;
        }
        same.push(r.clone());
        true
    });
    facts.logs = records;
    let mut journal: HashMap<String, (String, usize)> = HashMap::new();
    facts.messages.retain(|m| match m.origin {
        MessageOrigin::KarpenterLog => !dropped.contains(&at(&m.evidence)),
        MessageOrigin::Kubelet if m.time.is_some() => {
            let first = journal
                .entry(m.evidence.text.clone())
                .or_insert_with(|| at(&m.evidence));
            *first == at(&m.evidence)
        }
        _ => true,
    });
}

/// Two records of one line, whatever wrapped it: the pod an export or stern names is left
/// out, since a stern prefix and a CloudWatch stream name both say it.
fn same_record(a: &LogRecord, b: &LogRecord) -> bool {
    let fields = |r: &LogRecord| {
        r.fields
            .iter()
            .filter(|(k, _)| k.as_str() != logs::EXPORTER_POD_FIELD)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    };
    a.level == b.level
        && a.logger == b.logger
        && a.controller == b.controller
        && a.error == b.error
        && a.error_causes == b.error_causes
        && fields(a) == fields(b)
}

impl Sink {
    fn finish(mut self) -> Facts {
        drop_repeated_log_lines(&mut self.facts);
        // Before the table rows join them: a row joins the one object of its name.
        merge_duplicates(&mut self.facts.pods);
        merge_duplicates(&mut self.facts.nodes);
        merge_duplicates(&mut self.facts.nodeclaims);
        merge_duplicates(&mut self.facts.nodepools);
        merge_duplicates(&mut self.facts.nodeclasses);
        merge_duplicates(&mut self.facts.pdbs);
        merge_duplicates(&mut self.facts.workloads);
        let deferred = std::mem::take(&mut self.deferred);
        deferred.apply(&mut self.facts);
        // After the header-less claims got their names: their repeats are then one object's.
        drop_repeated_conditions(&mut self.facts.messages);
        drop_repeated_events(&mut self.facts);
        detect_version(&mut self.facts);
        if self.facts.karpenter_namespace.is_none() {
            self.facts.karpenter_namespace = segment::karpenter_namespace(&self.facts.commands);
        }
        if self.facts.karpenter_namespace.is_none() {
            // A log export naming the Karpenter pod that wrote the lines.
            self.facts.karpenter_namespace = self.facts.logs.iter().find_map(|r| {
                r.field_name(logs::EXPORTER_POD_FIELD)
                    .and_then(|p| {
                        p.split_once('/')
                            .map(|(ns, pod)| (ns.to_string(), pod.to_string()))
                    })
                    .filter(|(_, pod)| pod.starts_with("karpenter"))
                    .map(|(ns, _)| ns)
            });
        }
        self.facts
    }

    /// Ends the block of lines `block.start..end`: one read before (the same output pasted
    /// twice, or once with its prompt and once without) says nothing new, and what it added
    /// is taken back, so that its records, rows and lines do not count twice. Its objects
    /// would join the first ones anyway ([`merge_duplicates`]).
    fn close_block(&mut self, part: &Part<'_>, block: Option<Block>, end: usize) {
        let Some(block) = block.filter(|b| b.start < end) else {
            return;
        };
        let lines = (block.start..end).filter(|&k| !part.log[k]);
        let text = text_hash(lines.map(|k| part.lines[k]));
        let repeated = self.seen_blocks.contains(&(text, block.context))
            || (block.context == 0 && self.seen_block_texts.contains(&text));
        if repeated {
            block.mark.roll_back(&mut self.facts);
        } else {
            self.seen_blocks.insert((text, block.context));
            self.seen_block_texts.insert(text);
        }
    }

    pub fn message(&mut self, message: Message) {
        self.facts.messages.push(message);
    }

    /// Text no format claimed: kept, and still scanned for signals.
    pub fn unrecognised(&mut self, part: &Part<'_>, index: usize) {
        let text = part.lines[index].trim();
        if text.is_empty() {
            return;
        }
        self.message(Message {
            origin: MessageOrigin::Unrecognised,
            text: text.to_string(),
            evidence: part.evidence(index),
            ..Message::default()
        });
        let last = self.facts.messages.len() - 1;
        self.about_printed_object(last);
    }

    /// The text kept from messages `first..` that no format claimed is about the object the
    /// command prints, when it prints one. Only its name: a slice of the object says nothing
    /// of the fields it leaves out.
    fn about_printed_object(&mut self, first: usize) {
        let Some(object) = &self.printed_object else {
            return;
        };
        let nodepool = (object.kind == "NodePool" || object.kind == "Provisioner")
            .then(|| object.name.clone());
        for m in self.facts.messages.iter_mut().skip(first) {
            if m.origin == MessageOrigin::Unrecognised && m.object.is_none() {
                m.object = Some(object.clone());
                m.nodepool = m.nodepool.take().or_else(|| nodepool.clone());
            }
        }
    }

    pub fn error(&mut self, part: &Part<'_>, index: usize, message: impl Into<String>) {
        self.facts.input_errors.push(InputError {
            source: part.doc.label.clone(),
            line: part.line_no(index),
            message: message.into(),
        });
    }

    pub fn collected(&mut self, what: Collected) {
        self.facts.collected.insert(what);
    }
}

/// The lines of one document part (a document, or the text after a `==> LABEL <==` header)
/// that passed the log prefilter: noise log lines are counted and left out here, exactly as
/// the streaming scanner leaves them out, so the segmenter sees the same lines either way.
pub(crate) struct Part<'a> {
    pub doc: &'a Document,
    pub lines: Vec<&'a str>,
    /// For each kept line, its index among the document's lines.
    index: Vec<usize>,
    /// For each kept line, whether the prefilter classified it as a log line.
    log: Vec<bool>,
}

impl<'a> Part<'a> {
    fn new(doc: &'a Document, sink: &mut Sink) -> Self {
        let matcher = scan::rule_matcher();
        let signal_lines = scan::signal_line_starts(matcher, doc.text.as_bytes());
        let mut next_signal = 0;
        let mut filter = LogLineFilter::default();
        let mut part = Part {
            doc,
            lines: Vec::new(),
            index: Vec::new(),
            log: Vec::new(),
        };
        // INFO/DEBUG lines kept for their signal: (position in `part`, signal).
        let mut for_signal: Vec<(usize, u32)> = Vec::new();
        let mut offset = 0;
        for (n, raw) in doc.text.split('\n').enumerate() {
            let line_start = offset;
            offset += raw.len() + 1;
            if offset > doc.text.len() + 1 || (raw.is_empty() && offset > doc.text.len()) {
                break;
            }
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            while signal_lines
                .get(next_signal)
                .is_some_and(|&(s, _)| s < line_start)
            {
                next_signal += 1;
            }
            let signal = signal_lines
                .get(next_signal)
                .filter(|(s, _)| *s == line_start)
                .map(|&(_, id)| id);
            let log = match filter.decide(line.as_bytes(), || signal.is_some()) {
                Decision::Drop(level) => {
                    let repeat = scan::has_time_of_day(line.as_bytes())
                        && !sink.dropped_log_lines.insert(text_hash([line]));
                    if !repeat {
                        sink.count_log_line(&level.upper(), level.is_other_component());
                    }
                    continue;
                }
                Decision::KeepSignal(level) => {
                    sink.count_log_line(&level.upper(), level.is_other_component());
                    for_signal.push((part.lines.len(), signal.unwrap_or_default()));
                    true
                }
                Decision::KeepLog(level) => {
                    if level.is_noise() && scan::has_time_of_day(line.as_bytes()) {
                        sink.dropped_log_lines.insert(text_hash([line]));
                    }
                    sink.count_log_line(&level.upper(), level.is_other_component());
                    true
                }
                Decision::NotLog => false,
            };
            part.lines.push(line);
            part.index.push(n);
            part.log.push(log);
        }
        part.keep_recent_signal_lines(&for_signal);
        part
    }

    /// Leaves out all but the [`scan::RECENT_PER_SIGNAL`] last lines of each signal (the
    /// streaming scanner keeps the same ones).
    fn keep_recent_signal_lines(&mut self, for_signal: &[(usize, u32)]) {
        let mut per_signal: BTreeMap<u32, usize> = BTreeMap::new();
        let mut drop = vec![false; self.lines.len()];
        let mut any = false;
        for &(position, signal) in for_signal.iter().rev() {
            let seen = per_signal.entry(signal).or_insert(0);
            *seen += 1;
            if *seen > scan::RECENT_PER_SIGNAL {
                drop[position] = true;
                any = true;
            }
        }
        if !any {
            return;
        }
        fn keep<T>(v: &mut Vec<T>, drop: &[bool]) {
            let mut k = 0;
            v.retain(|_| {
                k += 1;
                !drop[k - 1]
            });
        }
        keep(&mut self.lines, &drop);
        keep(&mut self.index, &drop);
        keep(&mut self.log, &drop);
    }

    /// The original line number of the kept line at `index`.
    pub fn line_no(&self, index: usize) -> usize {
        let n = self.index.get(index).copied().unwrap_or(index);
        self.doc.original_line(n)
    }

    /// Evidence quoting the line at `index`.
    pub fn evidence(&self, index: usize) -> Evidence {
        self.evidence_text(index, self.lines.get(index).copied().unwrap_or_default())
    }

    pub fn evidence_text(&self, index: usize, text: &str) -> Evidence {
        Evidence::new(&self.doc.label, self.line_no(index), text.trim())
    }

    /// Runs `f` on the lines `start..end` as a segment for the objects module: a slice of
    /// the document when no line was left out in between, else a copy of the kept lines
    /// with their original numbers.
    pub fn with_segment<R>(&self, start: usize, end: usize, f: impl FnOnce(Segment<'_>) -> R) -> R {
        let end = end.min(self.lines.len());
        if start >= end {
            return f(Segment {
                doc: self.doc,
                first_index: self.index.get(start).copied().unwrap_or(0),
                text: "",
            });
        }
        if self.index[end - 1] - self.index[start] == end - 1 - start {
            let base = self.doc.text.as_ptr() as usize;
            let from = self.lines[start].as_ptr() as usize - base;
            let to = self.lines[end - 1].as_ptr() as usize - base + self.lines[end - 1].len();
            return f(Segment {
                doc: self.doc,
                first_index: self.index[start],
                text: &self.doc.text[from..to],
            });
        }
        let mut copy = Document::new(self.doc.label.clone(), self.lines[start..end].join("\n"));
        copy.line_numbers = Some((start..end).map(|k| self.line_no(k)).collect());
        f(Segment {
            doc: &copy,
            first_index: 0,
            text: &copy.text,
        })
    }
}

/// The document itself, or one document per `==> LABEL <==` section (the text before the
/// first header keeps the document's label). Line numbers in a section count from its header.
fn split_parts(doc: &Document) -> Vec<Cow<'_, Document>> {
    let lines: Vec<&str> = doc.text.lines().collect();
    let headers: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| scan::header_label(l.as_bytes()).is_some())
        .map(|(i, _)| i)
        .collect();
    if headers.is_empty() {
        return vec![Cow::Borrowed(doc)];
    }
    let mut parts = Vec::new();
    let section = |label: String, range: std::ops::Range<usize>, base: Option<usize>| {
        let mut text = String::new();
        let mut numbers = Vec::with_capacity(range.len());
        for i in range {
            text.push_str(lines[i]);
            text.push('\n');
            let original = doc.original_line(i);
            numbers.push(match base {
                Some(b) => original.saturating_sub(doc.original_line(b)),
                None => original,
            });
        }
        let mut part = Document::new(label, text);
        part.line_numbers = Some(numbers);
        part
    };
    if lines[..headers[0]].iter().any(|l| !l.trim().is_empty()) {
        parts.push(Cow::Owned(section(doc.label.clone(), 0..headers[0], None)));
    }
    for (k, &h) in headers.iter().enumerate() {
        let end = headers.get(k + 1).copied().unwrap_or(lines.len());
        let label = scan::header_label(lines[h].as_bytes())
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .unwrap_or_default();
        parts.push(Cow::Owned(section(label, h + 1..end, Some(h))));
    }
    parts
}

/// What the segmenter knows while walking a part.
pub(crate) struct Context {
    /// The last shell command the paste showed (`$ kubectl describe pod web-0 -n shop`).
    pub command: Option<Command>,
    /// The end of the last block [`describe::headless`] looked at and refused: a key line
    /// inside it starts no headless block either (its keys are a subset), so it is not
    /// scanned again (which would make a long run of `Key: value` lines quadratic).
    pub headless_refused_until: usize,
}

fn ingest_part(part: &Part<'_>, sink: &mut Sink) {
    let mut cx = Context {
        command: None,
        headless_refused_until: 0,
    };
    sink.printed_object = None;
    let mut garbage_from: Option<usize> = None;
    let mut block: Option<Block> = None;
    let mut prompt_line = "";
    let mut i = 0;
    while i < part.lines.len() {
        let line = part.lines[i];
        if line.trim().is_empty() {
            sink.close_block(part, block.take(), i);
            // A command's output ends at a blank line, unless another table of the same
            // command follows (`kubectl get deploy,pods` prints one table per kind).
            let next = (i..part.lines.len()).find(|&k| !part.lines[k].trim().is_empty());
            if next.is_none_or(|k| tables::Table::from_header(part.lines[k]).is_none()) {
                cx.command = None;
                sink.printed_object = None;
            }
            i = next.unwrap_or(part.lines.len());
            continue;
        }
        if segment::is_garbage(line) {
            garbage_from.get_or_insert(i);
            sink.unrecognised_cleaned(part, i);
            i += 1;
            continue;
        }
        if let Some(from) = garbage_from.take() {
            sink.error(
                part,
                from,
                garbage_message(part.lines[from], part.lines[0], from, i),
            );
        }
        let is_prompt = !part.log[i] && command_line(line).is_some();
        if is_prompt || part.log[i] || starts_document(line) {
            // Log lines are told apart one by one ([`drop_repeated_log_lines`]): the noise
            // lines the prefilter leaves out of a block differ between two copies of it.
            sink.close_block(part, block.take(), i);
            if is_prompt {
                prompt_line = line;
            }
        }
        if !is_prompt && !part.log[i] && block.is_none() {
            // The output under a prompt means what the prompt says it is (a jsonpath value of
            // one NodePool): the same text under another command is another fact.
            let context = match cx.command {
                Some(_) => text_hash(std::iter::once(prompt_line)),
                None => 0,
            };
            block = Some(Block {
                start: i,
                context,
                mark: FactsMark::of(&sink.facts),
            });
        }
        if part.log[i] {
            if let Some(next) = log_segment(part, i, sink, true) {
                i = next;
                continue;
            }
        }
        i = dispatch(part, i, &mut cx, sink);
    }
    sink.close_block(part, block.take(), part.lines.len());
    if let Some(from) = garbage_from {
        sink.error(
            part,
            from,
            garbage_message(part.lines[from], part.lines[0], from, part.lines.len()),
        );
    }
}

/// The image format of a file by its magic bytes (as lossy UTF-8): a screenshot of a terminal
/// dropped on the page instead of its text.
fn image_format(first: &str) -> Option<&'static str> {
    let head_end = first.char_indices().nth(16).map_or(first.len(), |(i, _)| i);
    let head = &first[..head_end];
    if first.starts_with("\u{fffd}PNG") {
        Some("PNG")
    } else if first.starts_with("\u{fffd}\u{fffd}\u{fffd}")
        && (head.contains("JFIF") || head.contains("Exif"))
    {
        Some("JPEG")
    } else if first.starts_with("GIF87a") || first.starts_with("GIF89a") {
        Some("GIF")
    } else if first.starts_with("RIFF") && head.contains("WEBP") {
        Some("WebP")
    } else {
        None
    }
}

/// What a run of binary lines is, starting with `first`: an archive by its magic bytes (as
/// lossy UTF-8: gzip's `1f 8b 08`, zip's `PK 03 04`), which the user must unpack first.
/// `top` is the part's first line: an image's signature line (`\x89PNG`) can read as text.
fn garbage_message(first: &str, top: &str, from: usize, to: usize) -> String {
    let n = to - from;
    if first.starts_with("\u{1f}\u{fffd}\u{8}") {
        "a gzip-compressed file, not text: decompress it first (`gunzip -c FILE`) and analyse that"
            .to_string()
    } else if first.starts_with("PK\u{3}\u{4}") {
        "a zip archive, not text: unzip it and analyse the files inside".to_string()
    } else if let Some(format) = image_format(first).or(image_format(top).filter(|_| from <= 1)) {
        format!("a {format} image, not text: a screenshot cannot be read; paste the text it shows (the command's output) instead")
    } else if n == 1 {
        "binary data (NUL or control bytes) instead of text; its printable text was still scanned"
            .to_string()
    } else {
        format!("{n} lines of binary data (NUL or control bytes) instead of text; their printable text was still scanned")
    }
}

impl Sink {
    /// Counts one log line: Karpenter's by level, another component's (`other`) apart, so
    /// that neither says Karpenter's logs (or its debug level) were collected.
    fn count_log_line(&mut self, level: &str, other: bool) {
        if other {
            self.facts.other_component_log_lines += 1;
            return;
        }
        *self
            .facts
            .log_lines_by_level
            .entry(level.to_string())
            .or_insert(0) += 1;
        self.collected(Collected::KarpenterLogs);
        if level == "DEBUG" {
            self.collected(Collected::DebugLogs);
        }
    }

    /// A garbage line's printable characters, kept as an unrecognised message.
    fn unrecognised_cleaned(&mut self, part: &Part<'_>, index: usize) {
        let cleaned: String = part.lines[index]
            .chars()
            .map(|c| if c.is_control() && c != '\t' { ' ' } else { c })
            .collect();
        let cleaned = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
        if cleaned.chars().filter(|c| c.is_alphanumeric()).count() < 4 {
            return;
        }
        self.message(Message {
            origin: MessageOrigin::Unrecognised,
            evidence: part.evidence_text(index, &cleaned),
            text: cleaned,
            ..Message::default()
        });
    }
}

/// A log line at `i` (and a console record's continuation lines): the next index, or `None`
/// when the line is not a log line after all.
fn log_segment(part: &Part<'_>, i: usize, sink: &mut Sink, quick: bool) -> Option<usize> {
    let line = part.lines[i];
    match logs::parse_line(line, part.evidence(i)) {
        logs::LogParse::Record(mut record) => {
            let mut next = i + 1;
            if let Some((end, message, fields)) = console_continuation(part, i) {
                let head = logs::console_head(line)?;
                let evidence_text = part.lines[i..=end]
                    .iter()
                    .map(|l| l.trim())
                    .collect::<Vec<_>>()
                    .join("\n");
                *record = logs::console_record(
                    &head,
                    message,
                    Some(fields),
                    part.evidence_text(i, &evidence_text),
                );
                next = end + 1;
            }
            push_log_record(sink, *record, quick);
            Some(next)
        }
        logs::LogParse::Malformed(why) => match hard_wrapped_json(part, i) {
            Some((end, record)) => {
                push_log_record(sink, *record, quick);
                Some(end + 1)
            }
            None => {
                sink.error(part, i, why);
                sink.unrecognised(part, i);
                Some(i + 1)
            }
        },
        logs::LogParse::NotLog => None,
    }
}

fn push_log_record(sink: &mut Sink, record: LogRecord, quick: bool) {
    let other = crate::facts::foreign_log_line(&record.evidence.text);
    if !quick {
        sink.count_log_line(&record.level, other);
    }
    if !other {
        if record.level == "DEBUG" {
            sink.collected(Collected::DebugLogs);
        }
        sink.collected(Collected::KarpenterLogs);
    }
    sink.message(logs::record_message(&record));
    sink.facts.logs.push(record);
}

/// A JSON log line that a terminal, `screen` or a mail client cut into lines of a fixed width:
/// `(last index, record)` once the pieces, joined back without a separator (a hard wrap loses
/// no character), parse. The pieces must follow each other in the input and none may start a
/// log line of its own.
fn hard_wrapped_json(part: &Part<'_>, i: usize) -> Option<(usize, Box<LogRecord>)> {
    const MAX_PIECES: usize = 64;
    const MAX_BYTES: usize = 64 * 1024;
    let mut joined = part.lines[i].trim_end_matches('\r').to_string();
    for j in i + 1..part.lines.len().min(i + MAX_PIECES) {
        let piece = part.lines[j].trim_end_matches('\r');
        if piece.trim().is_empty()
            || part.line_no(j) != part.line_no(j - 1) + 1
            || scan::quick_level(piece.as_bytes()).is_some()
            || command_line(piece).is_some()
            || joined.len() + piece.len() > MAX_BYTES
        {
            return None;
        }
        joined.push_str(piece);
        if let logs::LogParse::Record(record) =
            logs::parse_line(&joined, part.evidence_text(i, &joined))
        {
            return Some((j, record));
        }
    }
    None
}

/// A console record whose message runs over several lines (an error with newlines) ends with
/// a line carrying the JSON fields: `(last index, whole message, fields)`.
fn console_continuation(
    part: &Part<'_>,
    i: usize,
) -> Option<(usize, String, serde_json::Map<String, serde_json::Value>)> {
    let head = logs::console_head(part.lines[i])?;
    if logs::split_fields(head.rest).1.is_some() {
        return None;
    }
    let mut message = head.rest.trim_end().to_string();
    for j in i + 1..part.lines.len().min(i + 64) {
        let line = part.lines[j];
        if line.trim().is_empty()
            || scan::quick_level(line.as_bytes()).is_some()
            || logs::console_head(line).is_some()
            || command_line(line).is_some()
        {
            return None;
        }
        let (text, fields) = logs::split_fields(line);
        message.push('\n');
        message.push_str(text.trim());
        if let Some(fields) = fields {
            return Some((j, message, fields));
        }
    }
    None
}

/// Everything but the log prefilter: finds the segment starting at `i`, ingests it and
/// returns the index after it.
fn dispatch(part: &Part<'_>, i: usize, cx: &mut Context, sink: &mut Sink) -> usize {
    let line = part.lines[i];
    if let Some(command) = command_line(&continued_command(&part.lines, i)) {
        let record = segment::shell_command(&command, part.evidence(i));
        sink.facts.commands.push(record);
        sink.printed_object = command.printed_object();
        cx.command = Some(command);
        return i + 1;
    }
    if segment::is_cut_mark(line) {
        return i + 1;
    }
    if let Some(next) = log_segment(part, i, sink, false) {
        return next;
    }
    if let Some(next) = kubelet::ingest(part, i, sink) {
        return next;
    }
    if let Some(next) = tables::no_resources(part, i, cx, sink) {
        return next;
    }
    if segment::starts_describe(line) {
        let end = segment::describe_end(&part.lines, i);
        describe::ingest(part, i, end, cx, sink);
        return end;
    }
    if let Some(end) = describe::headless(part, i, cx) {
        describe::ingest(part, i, end, cx, sink);
        return end;
    }
    if segment::is_events_heading(line) {
        let end = segment::section_end(&part.lines, i);
        let object = cx.command.as_ref().and_then(Command::described_object);
        events_table::ingest_section(part, i, end, object.as_ref(), sink);
        if object.as_ref().is_some_and(|o| o.kind == "Pod") {
            sink.collected(Collected::PodEvents);
        }
        return end;
    }
    if let Some(described) = cx.command.as_ref().and_then(Command::described_object) {
        if let Some(end) = events_table::ingest_headingless(part, i, &described, sink) {
            return end;
        }
    }
    if let Some(table) = tables::Table::custom_columns(line, cx.command.as_ref())
        .or_else(|| tables::Table::from_header(line))
    {
        return tables::ingest(part, i, table, cx, sink);
    }
    if let Some(end) = tables::headerless(part, i, cx, sink) {
        return end;
    }
    if let Some(end) = printed_fragment(part, i, cx, sink) {
        return end;
    }
    if let Some((start, end)) = segment::yaml_block(part, i, cx) {
        if start > i || end > start {
            let first = sink.facts.messages.len();
            part.with_segment(start, end, |s| {
                objects::ingest_structured(s, &mut sink.facts)
            });
            sink.about_printed_object(first);
        }
        return end.max(i + 1);
    }
    if let Some(next) = json_segment(part, i, sink) {
        return next;
    }
    if let Some(next) = events_table::ingest_line(part, i, sink) {
        return next;
    }
    sink.unrecognised(part, i);
    i + 1
}

/// The path of a jsonpath output of one field (`{.spec.disruption}` -> `spec`,
/// `disruption`); `None` for a template that prints more (ranges, several fields, filters,
/// text around the braces).
fn single_jsonpath(output: &str) -> Option<Vec<String>> {
    let template = output
        .strip_prefix("jsonpath=")
        .or_else(|| output.strip_prefix("jsonpath:"))?
        .trim_matches(['\'', '"']);
    // A newline printed after the value (`{.spec.disruption}{"\n"}`) adds nothing.
    let template = template
        .strip_suffix(r#"{"\n"}"#)
        .or_else(|| template.strip_suffix(r"{'\n'}"))
        .unwrap_or(template);
    let inner = template.strip_prefix("{.")?.strip_suffix('}')?;
    let keys: Vec<String> = inner.split('.').map(str::to_string).collect();
    let plain = |k: &String| {
        !k.is_empty()
            && k.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    keys.iter().all(plain).then_some(keys)
}

/// `kubectl get nodepool <name> -o jsonpath='{.spec.disruption}'`: the value printed right
/// under the prompt is that field of that NodePool, read into it. The NodePool holds only the
/// fields the value shows: its labels and annotations are unknown, and so are its
/// requirements unless the value shows them (`from_table`, which rules read as "its
/// requirements are not shown"). A full description of the NodePool elsewhere in the input
/// joins it. The same for a Node, NodeClaim or Pod (`{.metadata.annotations}` of a node,
/// `{.status.conditions}` of a claim, `{.spec.terminationGracePeriodSeconds}` of a pod),
/// known as a table row is: its other fields unknown. Other kinds are left as text: rules
/// read their empty fields as "none".
fn printed_fragment(part: &Part<'_>, i: usize, cx: &Context, sink: &mut Sink) -> Option<usize> {
    let command = cx.command.as_ref()?;
    if i == 0 || command_line(part.lines[i - 1]).is_none() {
        return None;
    }
    let object = command.printed_object()?;
    let nodeclass = matches!(object.kind.as_str(), "EC2NodeClass" | "AWSNodeTemplate");
    // `| grep -A4 disruption` of a NodePool too: its consolidation policy and budgets. A
    // NodePool's status slice stays text about it (its conditions are read from there).
    let first = part.lines[i].trim_start();
    let pool_spec = object.kind == "NodePool"
        && !first.starts_with("status:")
        && !first.starts_with("conditions:");
    if (nodeclass || pool_spec) && part.lines[i - 1].contains('|') {
        return printed_yaml_piece(part, i, &object, sink);
    }
    let readable = nodeclass
        || matches!(
            object.kind.as_str(),
            "NodePool" | "Node" | "NodeClaim" | "Pod"
        );
    // Right under the prompt, and not piped (`| jq .`, `| grep`) into another shape.
    if part.lines[i - 1].contains('|') || !readable {
        return None;
    }
    let path = single_jsonpath(command.output.as_deref()?)?;
    let keys: Vec<&str> = path.iter().map(String::as_str).collect();
    let annotations = keys == ["metadata", "annotations"];
    if !(matches!(keys.first(), Some(&("spec" | "status")))
        || annotations
        || keys == ["metadata", "labels"])
    {
        return None;
    }
    let segment = objects::Segment {
        doc: part.doc,
        first_index: part.index[i],
        text: part.lines[i],
    };
    let before = sink.facts.nodepools.len();
    let classes_before = sink.facts.nodeclasses.len();
    let others_before = (
        sink.facts.nodes.len(),
        sink.facts.nodeclaims.len(),
        sink.facts.pods.len(),
    );
    if !objects::ingest_fragment(segment, &object, &path, &mut sink.facts) {
        return None;
    }
    shows_part_of(&mut sink.facts.nodeclasses[classes_before..]);
    let f = &mut sink.facts;
    let metas = f.nodes[others_before.0..]
        .iter_mut()
        .map(|n| &mut n.meta)
        .chain(
            f.nodeclaims[others_before.1..]
                .iter_mut()
                .map(|c| &mut c.meta),
        )
        .chain(f.pods[others_before.2..].iter_mut().map(|p| &mut p.meta));
    for meta in metas {
        meta.from_table = true;
        meta.annotations_cut = !annotations;
    }
    let requirements = ["spec", "template", "spec", "requirements"];
    let shows_requirements = path.len() <= requirements.len()
        && requirements
            .iter()
            .zip(&path)
            .all(|(want, key)| want == key);
    for pool in sink.facts.nodepools.iter_mut().skip(before) {
        pool.meta.from_table = !shows_requirements;
        pool.meta.annotations_cut = true;
    }
    Some(i + 1)
}

/// `kubectl get ec2nodeclass <name> -o yaml | grep -A10 status` (or `sed`, `head`): the
/// YAML right under the prompt, up to a blank line or grep's `--`, is a piece of that
/// EC2NodeClass ([`objects::ingest_yaml_piece`]); the same for a NodePool. A piece that is not
/// YAML stays text.
fn printed_yaml_piece(
    part: &Part<'_>,
    i: usize,
    object: &ObjectRef,
    sink: &mut Sink,
) -> Option<usize> {
    // A line indented less than the first is past the piece (`sed -n '/requirements:/,/status:/p'`
    // prints the `status:` that ends the range).
    let indent = |line: &str| line.len() - line.trim_start().len();
    let first_indent = indent(part.lines[i]);
    let end = (i..part.lines.len())
        .find(|&k| {
            let line = part.lines[k].trim();
            line.is_empty()
                || line == "--"
                || indent(part.lines[k]) < first_indent
                || command_line(part.lines[k]).is_some()
        })
        .unwrap_or(part.lines.len());
    let before = sink.facts.nodeclasses.len();
    let pools_before = sink.facts.nodepools.len();
    let read = part.with_segment(i, end, |s| {
        objects::ingest_yaml_piece(s, &object.kind, &object.name, &mut sink.facts)
    });
    if !read {
        return None;
    }
    shows_part_of(&mut sink.facts.nodeclasses[before..]);
    for pool in sink.facts.nodepools.iter_mut().skip(pools_before) {
        // Requirements the piece shows are known; else they are not shown.
        pool.meta.from_table = pool.requirements.is_empty();
        pool.meta.annotations_cut = true;
    }
    // Its lines stay text too, as before it was read: rules quote a spec line they match
    // (`kmsKeyID: ...`) as evidence.
    for k in i..end {
        sink.unrecognised(part, k);
    }
    Some(end)
}

/// NodeClasses read from a piece of their printout: the fields it leaves out are unknown, not
/// empty (see [`crate::facts::Meta::from_table`]).
fn shows_part_of(nodeclasses: &mut [crate::facts::NodeClass]) {
    for class in nodeclasses {
        class.meta.from_table = true;
        class.meta.annotations_cut = true;
    }
}

/// The prompt line at `i` with its shell continuation lines (`helm upgrade ... \` then
/// `--namespace karpenter \`) joined, so flags on later lines count. The continuation lines
/// are still ingested on their own afterwards (they may hold signals, like `--set
/// logLevel=debug`).
fn continued_command(lines: &[&str], i: usize) -> String {
    let mut joined = lines[i].trim_end().to_string();
    let mut next = i + 1;
    while joined.ends_with('\\') && next < lines.len() && next - i <= 20 {
        joined.pop();
        joined.push(' ');
        joined.push_str(lines[next].trim());
        next += 1;
    }
    joined
}

/// A JSON value at `i`: one line or several (bracket-matched). Kubernetes objects go to the
/// objects module, log exports become log records, exporter events become events, and other
/// JSON (AWS CLI output, jsonpath output) is kept line by line as text.
fn json_segment(part: &Part<'_>, i: usize, sink: &mut Sink) -> Option<usize> {
    let first = part.lines[i].trim_start();
    if !(first.starts_with('{') || first.starts_with('[')) {
        return None;
    }
    // `{Type:Ready Status:False}` (a Go value) opens with a brace too: only text shaped like
    // JSON is an error when it does not parse.
    let t = first.trim_end();
    let json_shaped = matches!(t, "{" | "[")
        || ["{\"", "{ \"", "[{", "[\"", "[ {", "[ \""]
            .iter()
            .any(|p| t.starts_with(p));
    let end = match segment::json_end(&part.lines, i) {
        Some(end) => end,
        None => {
            if let Some((end, record)) = hard_wrapped_json(part, i) {
                push_log_record(sink, *record, false);
                return Some(end + 1);
            }
            if json_shaped {
                sink.error(
                    part,
                    i,
                    "a JSON value starts here but is never closed (truncated?)",
                );
            }
            sink.unrecognised(part, i);
            return Some(i + 1);
        }
    };
    let parsed = part.with_segment(i, end, |segment| {
        serde_json::from_str::<serde_json::Value>(segment.text)
    });
    let value = match parsed {
        Ok(v) => v,
        Err(e) => {
            if json_shaped {
                sink.error(part, i, format!("malformed JSON: {e}"));
            }
            for k in i..end {
                sink.unrecognised(part, k);
            }
            return Some(end);
        }
    };
    if segment::is_kubernetes_json(&value) {
        part.with_segment(i, end, |s| objects::ingest_structured(s, &mut sink.facts));
        return Some(end);
    }
    if events_table::ingest_json(part, i, end, &value, sink) {
        return Some(end);
    }
    if json_log_export(part, i, end, &value, sink) {
        return Some(end);
    }
    for k in i..end {
        sink.unrecognised(part, k);
    }
    Some(end)
}

/// A pretty-printed export of log records (`[{"@timestamp": ..., "@message": "{...}"}, ...]`,
/// or the AWS CLI's CloudWatch output): one record per item, evidence at the item's first line.
fn json_log_export(
    part: &Part<'_>,
    i: usize,
    end: usize,
    value: &serde_json::Value,
    sink: &mut Sink,
) -> bool {
    use serde_json::Value;
    // The AWS CLI wraps CloudWatch records: `aws logs filter-log-events` / `get-log-events`
    // print `{"events": [{"message": "<record>", ...}]}`, Logs Insights `get-query-results`
    // prints `{"results": [[{"field": "@message", "value": "<record>"}, ...]]}`. An
    // Elasticsearch / OpenSearch search response holds its records in `hits.hits[]._source`.
    let insights_rows: Vec<Value> = match value.get("results") {
        Some(Value::Array(rows)) => rows
            .iter()
            .filter_map(|row| {
                let fields = row.as_array()?.iter().filter_map(|f| {
                    Some((
                        f.get("field")?.as_str()?.to_string(),
                        f.get("value")?.clone(),
                    ))
                });
                Some(Value::Object(fields.collect()))
            })
            .collect(),
        _ => Vec::new(),
    };
    let (items, starts): (Vec<&Value>, Vec<usize>) = match value {
        Value::Array(items) => (
            items.iter().collect(),
            segment::json_item_lines(&part.lines, i, end, true),
        ),
        // Datadog's log search API answers `{"data": [{"attributes": {...}}]}`.
        Value::Object(map) => match map.get("events").or_else(|| map.get("data")) {
            Some(Value::Array(events)) if !events.is_empty() => (
                events.iter().collect(),
                segment::json_lines_at_depth(&part.lines, i, end, 2),
            ),
            _ if map
                .get("hits")
                .and_then(|h| h.get("hits"))
                .and_then(Value::as_array)
                .is_some_and(|hits| !hits.is_empty()) =>
            {
                let hits = map["hits"]["hits"].as_array().map(Vec::as_slice);
                (
                    hits.unwrap_or_default().iter().collect(),
                    segment::json_lines_at_depth(&part.lines, i, end, 3),
                )
            }
            _ if !insights_rows.is_empty() => (
                insights_rows.iter().collect(),
                segment::json_lines_at_depth(&part.lines, i, end, 2),
            ),
            _ => (vec![value], vec![i]),
        },
        other => (vec![other], vec![i]),
    };
    let mut records = Vec::new();
    for (n, item) in items.iter().enumerate() {
        // The evidence is the item's longest line: pretty-printed, that is the record itself
        // rather than the `{` that opens the item.
        let first = starts.get(n).copied().unwrap_or(i);
        let last = starts.get(n + 1).copied().unwrap_or(end).max(first + 1);
        let line = (first..last.min(part.lines.len()))
            .max_by_key(|&k| (part.lines[k].len(), std::cmp::Reverse(k)))
            .unwrap_or(first);
        let text = item.to_string();
        match logs::parse_line(&text, part.evidence(line)) {
            logs::LogParse::Record(record) => records.push(record),
            _ => return false,
        }
    }
    if records.is_empty() {
        return false;
    }
    for record in records {
        sink.count_log_line(
            &record.level,
            crate::facts::foreign_log_line(&record.evidence.text),
        );
        sink.message(logs::record_message(&record));
        sink.facts.logs.push(*record);
    }
    true
}

/// The Karpenter version, when the input reveals it: a log record's `version` field, the
/// controller image tag or the helm chart seen in any text.
fn detect_version(facts: &mut Facts) {
    if facts.karpenter_version.is_some() {
        return;
    }
    let from_logs = facts.logs.iter().find_map(|r| {
        r.fields
            .get("version")
            .and_then(|v| v.as_str())
            .and_then(segment::version_number)
    });
    let from_images = || {
        facts
            .workloads
            .iter()
            .flat_map(|w| w.containers.iter())
            .filter_map(|c| c.image.as_deref())
            .chain(facts.messages.iter().map(|m| m.text.as_str()))
            .find_map(segment::karpenter_version_in)
    };
    facts.karpenter_version = from_logs.or_else(from_images);
}

#[cfg(test)]
mod tests;

/// The 1-based first and last line of karpenter-why's own report (text or markdown) pasted into
/// a document: from its first heading (`karpenter-why: <subject>`, a diagnosis header
/// `error[KW201]` / `## error KW201`, `Checklist`, `Missing facts: ...`) to the end of the block
/// under its last one (indented lines, list items, fences, table rows, blank lines). Only a
/// document showing one of the report's own phrases has one.
fn own_report_range(doc: &Document) -> Option<(usize, usize)> {
    let strong = |t: &str| {
        t.contains("Missing facts: collect these and run again")
            || t.contains("kubectl karpenter-why explain KW")
    };
    if !strong(&doc.text) {
        return None;
    }
    let heading = |t: &str| {
        let t = t.trim_start_matches(['#', ' ']);
        t.starts_with("karpenter-why: ")
            || t.starts_with("Missing facts: collect these and run again")
            || t.trim_end() == "Checklist"
            || ["error", "warning", "info"].iter().any(|s| {
                t.strip_prefix(s)
                    .is_some_and(|r| r.starts_with("[KW") || r.starts_with(" KW"))
            })
    };
    let lines: Vec<&str> = doc.text.lines().collect();
    let number = |i: usize| {
        doc.line_numbers
            .as_ref()
            .and_then(|n| n.get(i).copied())
            .unwrap_or(i + 1)
    };
    let first = lines.iter().position(|t| heading(t) || strong(t))?;
    let mut last = lines.iter().rposition(|t| heading(t) || strong(t))?;
    while let Some(t) = lines.get(last + 1) {
        let continues = t.starts_with([' ', '\t', '|'])
            || t.starts_with("- ")
            || t.starts_with("```")
            || t.trim().is_empty();
        if !continues {
            break;
        }
        last += 1;
    }
    Some((number(first), number(last)))
}
