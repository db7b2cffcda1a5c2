// The page: documents in (paste, files, samples), the engine in a Web Worker, the report
// presented as cards. All report wording comes from the engine (core); this file only lays
// the JSON report out.
import { h, markdownDocs, codeBlock } from './dom.js';
import { SAMPLES } from './pkg/samples.js';

const PASTE = 'paste';
// Inputs above this size get a longer debounce and a progress bar; a document above it is
// shown in the input as a window of VIEW_LINES lines (laying out a 50 MB textarea freezes a
// browser tab for many seconds), while the engine always analyses the whole text.
const LARGE_INPUT = 1 << 20;
const VIEW_LINES = 2000;

const $ = (id) => document.getElementById(id);
const ui = {
  input: $('input'),
  largeNotice: $('large-notice'),
  tabs: $('doc-tabs'),
  dropZone: $('drop-zone'),
  fileInput: $('file-input'),
  status: $('status'),
  statusText: $('status-text'),
  progress: $('progress'),
  report: $('report'),
  engineError: $('engine-error'),
  inputErrors: $('input-errors'),
  empty: $('empty-state'),
  subject: $('subject'),
  noFindings: $('no-findings'),
  diagnoses: $('diagnoses'),
  checklistSection: $('checklist-section'),
  checklist: $('checklist'),
  missingExtra: $('missing-extra'),
  copyMarkdown: $('copy-markdown'),
  redact: $('redact'),
  copyFeedback: $('copy-feedback'),
  rulesDialog: $('rules-dialog'),
  ruleSearch: $('rule-search'),
  ruleList: $('rule-list'),
  ruleDoc: $('rule-doc'),
  version: $('engine-version'),
};

const state = {
  docs: [{ label: PASTE, text: '' }],
  active: 0,
  rules: [],
  ready: false,
  seq: 0,
  busy: false,
  queued: null,
  shownSeq: 0,
  markdown: '',
  markdownRedacted: '',
  debounce: 0,
  // Archives that broke off mid-way: {source, line: 0, message}, reported with the documents.
  archiveErrors: [],
};

// ---------------------------------------------------------------------------------------------
// The engine worker

// Two workers: the engine, and an encoder that turns the documents into UTF-8 pieces for it
// (encoder.js), so that one piece is scanned while the next is encoded. They talk over their
// own channel; the page sends requests to the encoder and gets results from the engine.
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
const encoder = new Worker(new URL('./encoder.js', import.meta.url), { type: 'module' });
const channel = new MessageChannel();
worker.postMessage({ type: 'port', port: channel.port1 }, [channel.port1]);
encoder.postMessage({ type: 'port', port: channel.port2 }, [channel.port2]);
worker.onmessage = (event) => {
  const message = event.data;
  if (message.type === 'ready') {
    state.ready = true;
    state.rules = message.rules;
    ui.version.textContent = `karpenter-why ${message.version}`;
    document.documentElement.dataset.engine = 'ready';
    // Milliseconds since navigation: read by the browser tests to report start-up time.
    document.documentElement.dataset.readyAt = performance.now().toFixed(0);
    renderRuleList();
    setStatus('Ready. Paste or drop something to diagnose.');
    requestAnalysis(0);
  } else if (message.type === 'result') {
    finishRun();
    if (message.seq >= state.shownSeq) {
      state.shownSeq = message.seq;
      showReport(message);
    }
  } else if (message.type === 'progress') {
    ui.progress.max = message.units;
    ui.progress.value = message.done;
  } else if (message.type === 'error') {
    finishRun();
    showEngineError(message.message);
  }
};
worker.onerror = (event) => {
  finishRun();
  showEngineError(`The engine stopped: ${event.message || 'unknown error'}. Reload the page to restart it.`);
};
encoder.onerror = (event) => {
  finishRun();
  showEngineError(`The page's text encoder stopped: ${event.message || 'unknown error'}. Reload the page to restart it.`);
};

function totalBytes() {
  return state.docs.reduce((sum, d) => sum + d.text.length, 0);
}

/** Schedules an analysis of every document after `delay` ms of quiet. */
function requestAnalysis(delay = totalBytes() > LARGE_INPUT ? 700 : 250) {
  clearTimeout(state.debounce);
  state.debounce = setTimeout(startAnalysis, delay);
}

function startAnalysis() {
  if (!state.ready) return;
  const documents = state.docs.filter((d) => d.text.length > 0).map(({ label, text }) => ({ label, text }));
  if (documents.length === 0) {
    showEmpty();
    return;
  }
  const readErrors = [
    ...state.archiveErrors,
    ...state.docs.filter((d) => d.readError).map((d) => ({ source: d.label, ...d.readError })),
  ];
  const request = {
    type: 'analyze', seq: ++state.seq, documents, readErrors, now: new Date().toISOString(), redact: ui.redact.checked,
  };
  // One run at a time: while the worker is busy only the newest request waits; older
  // intermediate states of the text are never analysed.
  if (state.busy) {
    state.queued = request;
    return;
  }
  send(request);
}

function send(request) {
  state.busy = true;
  const bytes = request.documents.reduce((sum, d) => sum + d.text.length, 0);
  document.documentElement.dataset.engine = 'busy';
  if (bytes > LARGE_INPUT) {
    ui.progress.hidden = false;
    ui.progress.removeAttribute('value');
    setStatus(`Analysing ${formatBytes(bytes)}…`);
  } else {
    setStatus('Analysing…');
  }
  encoder.postMessage(request);
}

function finishRun() {
  state.busy = false;
  ui.progress.hidden = true;
  document.documentElement.dataset.engine = 'ready';
  if (state.queued) {
    const next = state.queued;
    state.queued = null;
    send(next);
  }
}

function setStatus(text) {
  ui.statusText.textContent = text;
}

function formatBytes(n) {
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${n} bytes`;
}

// ---------------------------------------------------------------------------------------------
// Documents: the paste area, files, samples

function renderTabs() {
  ui.tabs.replaceChildren(...state.docs.map((doc, index) => {
    const selected = index === state.active;
    const tab = h('button', {
      type: 'button', role: 'tab', class: 'doc-tab', id: `doc-tab-${index}`,
      'aria-selected': String(selected), 'aria-controls': 'input', tabindex: selected ? '0' : '-1',
      dataset: { label: doc.label },
      onclick: () => selectDocument(index),
    }, doc.label, doc.text ? h('span', { class: 'doc-size' }, ` ${formatBytes(doc.text.length)}`) : null);
    const remove = index > 0
      ? h('button', { type: 'button', class: 'doc-remove', 'aria-label': `Remove ${doc.label}`, onclick: () => removeDocument(index) }, '×')
      : null;
    return h('span', { class: 'doc-tab-wrap', role: 'presentation' }, tab, remove);
  }));
  ui.tabs.hidden = state.docs.length < 2;
  ui.input.setAttribute('aria-labelledby', `doc-tab-${state.active}`);
}

ui.tabs.addEventListener('keydown', (event) => {
  const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
  if (!step) return;
  event.preventDefault();
  const index = (state.active + step + state.docs.length) % state.docs.length;
  selectDocument(index);
  $(`doc-tab-${index}`).focus();
});

function selectDocument(index) {
  state.active = index;
  showWindow(state.docs[index], 1);
  renderTabs();
}

function isLarge(doc) {
  return doc.text.length > LARGE_INPUT;
}

/** Offsets of the start of every line of a large document, computed once. */
function lineStarts(doc) {
  if (!doc.lineStarts) {
    const starts = [0];
    for (let i = doc.text.indexOf('\n'); i !== -1; i = doc.text.indexOf('\n', i + 1)) starts.push(i + 1);
    doc.lineStarts = starts;
  }
  return doc.lineStarts;
}

/**
 * Puts the document in the input: all of it, or for a large one the VIEW_LINES lines from
 * `firstLine` (read-only, with a notice saying which lines are shown).
 */
function showWindow(doc, firstLine) {
  if (!isLarge(doc)) {
    doc.firstLine = 1;
    ui.input.readOnly = false;
    ui.input.value = doc.text;
    ui.largeNotice.hidden = true;
    return;
  }
  const starts = lineStarts(doc);
  const total = starts.length;
  const first = Math.max(1, Math.min(firstLine, total - VIEW_LINES + 1));
  const last = Math.min(total, first + VIEW_LINES - 1);
  const end = last < total ? starts[last] - 1 : doc.text.length;
  doc.firstLine = first;
  ui.input.readOnly = true;
  ui.input.value = doc.text.slice(starts[first - 1], end);
  ui.largeNotice.hidden = false;
  ui.largeNotice.textContent = `${doc.label}: ${formatBytes(doc.text.length)}, ${total.toLocaleString('en')} lines, all analysed. `
    + `Showing lines ${first.toLocaleString('en')}–${last.toLocaleString('en')} (read-only); evidence links jump to their line.`;
}

/** Inserts pasted text into the active document (at the selection, as a paste does). */
function insertText(text) {
  const doc = state.docs[state.active];
  const whole = ui.input.readOnly || !doc.text
    || (ui.input.selectionStart === 0 && ui.input.selectionEnd === ui.input.value.length);
  doc.text = whole
    ? text
    : doc.text.slice(0, ui.input.selectionStart) + text + doc.text.slice(ui.input.selectionEnd);
  doc.lineStarts = null;
  showWindow(doc, 1);
  renderTabs();
  requestAnalysis();
}

// A large paste never goes into the textarea itself: the page keeps it and shows a window.
ui.input.addEventListener('paste', (event) => {
  const text = event.clipboardData?.getData('text/plain') ?? '';
  const doc = state.docs[state.active];
  if (text.length <= LARGE_INPUT && !isLarge(doc)) return;
  event.preventDefault();
  insertText(text);
});

function removeDocument(index) {
  state.docs.splice(index, 1);
  if (state.active >= index) state.active = Math.max(0, state.active - 1);
  selectDocument(state.active);
  requestAnalysis();
}

function setDocuments(docs) {
  if (!docs.length) state.archiveErrors = [];
  state.docs = docs.length && docs[0].label === PASTE ? docs : [{ label: PASTE, text: '' }, ...docs];
  const firstWithText = state.docs.findIndex((d) => d.text);
  selectDocument(firstWithText < 0 ? 0 : firstWithText);
  requestAnalysis(0);
}

ui.input.addEventListener('input', () => {
  const doc = state.docs[state.active];
  if (ui.input.readOnly) return;
  doc.text = ui.input.value;
  doc.lineStarts = null;
  if (isLarge(doc)) showWindow(doc, 1);
  renderTabs();
  requestAnalysis();
});

$('clear-input').addEventListener('click', () => {
  setDocuments([]);
  ui.input.focus();
});

// `file.text()` always decodes UTF-8; Windows PowerShell 5 saves `kubectl logs > file` as
// UTF-16 with a byte-order mark, which would arrive as NULs between the letters. A gzipped
// log (`karpenter.log.gz`) is decompressed in the browser first, as the CLI does. One cut
// short keeps what decompressed, and the report says where reading stopped (`readError`), as
// the CLI's does; if nothing decompressed, its bytes go to the engine, which says it is
// compressed. A tar archive (the EKS log collector's bundle) gives one document per file,
// named `<archive>/<path>`, as the CLI names them.
async function fileDocuments(file) {
  return bytesDocuments(file.name, new Uint8Array(await file.arrayBuffer()));
}

async function bytesDocuments(label, bytes) {
  let cutShort = null;
  if (bytes[0] === 0x1f && bytes[1] === 0x8b && typeof DecompressionStream === 'function') {
    const { data, error } = await gunzip(bytes);
    if (data.length > 0) {
      bytes = data;
      cutShort = error && `gzip data: ${error}`;
    }
  }
  if (isTarHeader(bytes)) {
    const { files, error } = untar(bytes);
    const docs = (await Promise.all(files.map((f) => bytesDocuments(`${label}/${f.path}`, f.data)))).flat();
    const broken = cutShort || error;
    if (broken) {
      // Where the archive breaks is no line of any document: the archive itself is named.
      docs.push({ label, archiveError: { line: 0, message: `the archive breaks off after ${files.length} file(s) (${broken}); those were analysed` } });
    }
    return docs;
  }
  const [a, b] = bytes;
  const encoding = a === 0xff && b === 0xfe ? 'utf-16le' : a === 0xfe && b === 0xff ? 'utf-16be' : 'utf-8';
  const text = new TextDecoder(encoding).decode(bytes);
  if (!cutShort) return [{ label, text }];
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  return [{ label, text, readError: { line: lines, message: `reading stopped here (${cutShort})` } }];
}

const TAR_BLOCK = 512;
const latin1 = new TextDecoder('latin1');
const utf8 = new TextDecoder();

/** A ustar (POSIX, GNU) header: `ustar` at offset 257 and a checksum that adds up. */
function isTarHeader(bytes) {
  if (bytes.length < TAR_BLOCK || latin1.decode(bytes.subarray(257, 262)) !== 'ustar') return false;
  const stored = parseInt(latin1.decode(bytes.subarray(148, 156)).replace(/[\0 ]/g, ''), 8);
  let sum = 0;
  for (let i = 0; i < TAR_BLOCK; i += 1) sum += i >= 148 && i < 156 ? 32 : bytes[i];
  return stored === sum;
}

/**
 * The regular, non-empty files of a tar archive: `{files: [{path, data}], error}`, with GNU
 * long names (`L`) and PAX paths (`x`); `error` says why it stopped early.
 */
function untar(bytes) {
  const files = [];
  let at = 0;
  let longPath = null;
  while (at + TAR_BLOCK <= bytes.length) {
    const header = bytes.subarray(at, at + TAR_BLOCK);
    if (header.every((b) => b === 0)) return { files, error: null };
    if (!isTarHeader(header)) return { files, error: 'a damaged header' };
    const field = (offset, length) => utf8.decode(header.subarray(offset, offset + length)).replace(/\0[\s\S]*$/, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = header[156] === 0 ? '0' : String.fromCharCode(header[156]);
    const start = at + TAR_BLOCK;
    if (!Number.isFinite(size) || start + size > bytes.length) return { files, error: 'a file cut short' };
    const data = bytes.subarray(start, start + size);
    at = start + Math.ceil(size / TAR_BLOCK) * TAR_BLOCK;
    if (type === 'L') {
      longPath = utf8.decode(data).replace(/\0[\s\S]*$/, '');
    } else if (type === 'x') {
      const pax = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(utf8.decode(data));
      if (pax) longPath = pax[1];
    } else if (type !== 'g') {
      const prefix = field(345, 155);
      const path = longPath || (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
      longPath = null;
      if (type === '0' && size > 0) files.push({ path: path.replace(/^\.\//, ''), data });
    }
  }
  return { files, error: at < bytes.length ? 'a file cut short' : null };
}

/** Decompresses gzip bytes; on corrupt or cut-short data, the bytes decompressed until then. */
async function gunzip(bytes) {
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip')).getReader();
  const chunks = [];
  let error = null;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
  } catch (e) {
    error = (e && e.message) || String(e);
  }
  const data = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    data.set(chunk, at);
    at += chunk.length;
  }
  return { data, error };
}

async function addFiles(fileList) {
  const files = [...fileList];
  if (!files.length) return;
  setStatus(`Reading ${files.length} file${files.length > 1 ? 's' : ''}…`);
  const all = (await Promise.all(files.map(fileDocuments))).flat();
  const read = all.filter((d) => !d.archiveError);
  const archives = new Set(files.map((f) => f.name));
  state.archiveErrors = [
    ...state.archiveErrors.filter((e) => !archives.has(e.source)),
    ...all.filter((d) => d.archiveError).map((d) => ({ source: d.label, ...d.archiveError })),
  ];
  if (!read.length) {
    requestAnalysis(0);
    return;
  }
  const docs = state.docs.filter((d) => d.label === PASTE || !read.some((r) => r.label === d.label));
  setDocuments([...docs, ...read]);
  const first = state.docs.findIndex((d) => d.label === read[0].label);
  selectDocument(first);
}

ui.fileInput.addEventListener('change', () => {
  addFiles(ui.fileInput.files);
  ui.fileInput.value = '';
});

for (const type of ['dragenter', 'dragover']) {
  ui.dropZone.addEventListener(type, (event) => {
    if (![...event.dataTransfer.types].includes('Files')) return;
    event.preventDefault();
    ui.dropZone.classList.add('dragging');
  });
}
ui.dropZone.addEventListener('dragleave', () => ui.dropZone.classList.remove('dragging'));
ui.dropZone.addEventListener('drop', (event) => {
  ui.dropZone.classList.remove('dragging');
  if (!event.dataTransfer.files.length) return;
  event.preventDefault();
  addFiles(event.dataTransfer.files);
});

function renderSamples() {
  $('samples').replaceChildren(...SAMPLES.map((sample) => h('button', {
    type: 'button', class: 'button sample', dataset: { sample: sample.name },
    title: sample.description,
    onclick: () => {
      setDocuments([{ label: PASTE, text: sample.text }]);
      ui.input.scrollTop = 0;
    },
  }, sample.title)));
}

// ---------------------------------------------------------------------------------------------
// The report

function showEmpty() {
  clearReport();
  ui.empty.hidden = false;
  setStatus('Ready. Paste or drop something to diagnose.');
}

function clearReport() {
  for (const el of [ui.inputErrors, ui.subject, ui.noFindings, ui.checklistSection]) el.hidden = true;
  ui.diagnoses.replaceChildren();
  ui.copyMarkdown.disabled = true;
  state.markdown = state.markdownRedacted = '';
  delete ui.report.dataset.seq;
}

function showEngineError(message) {
  ui.engineError.hidden = false;
  ui.engineError.textContent = message;
  setStatus('The engine reported an error.');
}

function showReport({ report, markdown, markdownRedacted, ms, bytes, seq }) {
  clearReport();
  ui.engineError.hidden = true;
  ui.empty.hidden = true;
  state.markdown = markdown;
  state.markdownRedacted = markdownRedacted || '';
  ui.copyMarkdown.disabled = false;

  renderInputErrors(report.inputErrors || []);
  if (report.subject) {
    const s = report.subject;
    ui.subject.hidden = false;
    const several = s.objects && s.objects.length > 1;
    const what = several
      ? `${s.objects.length} ${s.kind}${s.namespace ? ` in ${s.namespace}` : ''}: ${s.name}`
      : `${s.kind} ${s.namespace ? `${s.namespace}/` : ''}${s.name}`;
    ui.subject.replaceChildren('About: ', h('strong', {}, what));
  }
  if (report.diagnoses.length === 0) {
    ui.noFindings.hidden = false;
    ui.noFindings.textContent = 'No known problem found in this input. The checklist shows what was looked at and what to collect next.';
  }
  ui.diagnoses.replaceChildren(...report.diagnoses.map(renderDiagnosis));
  renderChecklist(report.checklist || [], report.missing || []);

  const counts = ['error', 'warning', 'info']
    .map((sev) => [sev, report.diagnoses.filter((d) => d.severity === sev).length])
    .filter(([, n]) => n > 0)
    .map(([sev, n]) => `${n} ${sev}${n > 1 ? 's' : ''}`);
  const speed = ms > 0 && bytes > LARGE_INPUT ? ` (${(bytes / (1 << 20) / (ms / 1000)).toFixed(0)} MB/s)` : '';
  setStatus(`${counts.length ? counts.join(', ') : 'No diagnosis'} · ${formatBytes(bytes)} analysed in ${ms.toFixed(0)} ms${speed}.`);
  Object.assign(ui.report.dataset, {
    seq: String(seq), ms: ms.toFixed(1), bytes: String(bytes), renderedAt: performance.now().toFixed(0),
  });
}

function renderInputErrors(errors) {
  if (!errors.length) return;
  ui.inputErrors.hidden = false;
  ui.inputErrors.replaceChildren(
    h('h3', {}, errors.length === 1 ? 'Part of the input could not be read' : `${errors.length} parts of the input could not be read`),
    h('ul', {}, errors.map((e) => h('li', { class: 'input-error' },
      // Line 0: the whole input (an archive that broke off), no line to show.
      e.line > 0 ? evidenceButton(e.source, e.line, `${e.source}:${e.line}`) : h('span', { class: 'evidence-item' }, e.source),
      ' ', h('span', { class: 'input-error-message' }, e.message)))),
    h('p', {}, 'The rest of the input was analysed.'),
  );
}

function renderDiagnosis(d, index) {
  const titleId = `diagnosis-${index}`;
  const refName = (o) => `${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
  // One cause shared by several pods (or NodePools) names them all in `objects` / `nodePools`.
  const objectText = d.objects && d.objects.length
    ? `${d.objects[0].kind}s ${d.objects.map(refName).join(', ')}`
    : (d.object ? `${d.object.kind} ${refName(d.object)}` : null);
  const poolText = d.nodePool || (d.nodePools && d.nodePools.length ? d.nodePools.join(', ') : null);
  // `nodePoolKind` says whether the pool is a NodePool or a pre-v0.32 Provisioner.
  const poolKind = d.nodePoolKind === 'Provisioner' ? 'Provisioner' : 'NodePool';
  const poolLabel = d.nodePool ? `${poolKind}: ` : `${poolKind}s: `;
  return h('article', { class: `card severity-${d.severity}`, 'aria-labelledby': titleId, dataset: { id: d.id } },
    h('header', { class: 'card-header' },
      h('span', { class: `severity-badge severity-${d.severity}` }, d.severity),
      h('button', { type: 'button', class: 'rule-id link', onclick: () => openRules(d.id), 'aria-label': `${d.id}: read the rule's documentation` }, d.id),
      h('h3', { id: titleId, class: 'card-title' }, d.title),
      d.confidence && d.confidence !== 'high' ? h('span', { class: 'confidence' }, `${d.confidence} confidence`) : null),
    h('p', { class: 'summary' }, d.summary),
    objectText || poolText
      ? h('p', { class: 'card-meta' },
        objectText ? [d.objects && d.objects.length ? 'Objects: ' : 'Object: ', h('code', {}, objectText)] : null,
        objectText && poolText ? ' · ' : null,
        poolText ? [poolLabel, h('code', {}, poolText)] : null)
      : null,
    d.evidence.length ? [
      h('h4', {}, 'Evidence'),
      h('ul', { class: 'evidence' }, d.evidence.map((e) => h('li', {},
        evidenceButton(e.source, e.line, h('span', { class: 'evidence-text' },
          h('span', { class: 'evidence-location' }, `${e.source}:${e.line}`),
          h('code', {}, e.text),
          e.count > 1 ? h('span', { class: 'evidence-count' }, ` ×${e.count}${e.firstSeen && e.lastSeen && e.firstSeen !== e.lastSeen ? ` (${e.firstSeen} … ${e.lastSeen})` : ''}`) : null))))),
    ] : null,
    d.remediation.length ? [
      h('h4', {}, 'How to fix'),
      h('ol', { class: 'remediation' }, d.remediation.map((r) => h('li', {},
        h('p', {}, r.text),
        r.command ? codeBlock(r.command, 'Copy the command') : null,
        r.yaml ? codeBlock(r.yaml, 'Copy the YAML') : null))),
    ] : null,
    h('p', { class: 'card-footer' },
      h('code', {}, d.docs),
      d.related && d.related.length ? [' · Related: ', d.related.map((id, i) => [i ? ', ' : '', h('button', { type: 'button', class: 'link', onclick: () => openRules(id) }, id)])] : null));
}

function evidenceButton(source, line, content) {
  return h('button', {
    type: 'button', class: 'evidence-item', dataset: { source, line: String(line) },
    title: `Show line ${line} of ${source} in the input`,
    onclick: () => showLine(source, line),
  }, content);
}

function renderChecklist(steps, missing) {
  if (!steps.length && !missing.length) return;
  ui.checklistSection.hidden = false;
  // Core lists one `missing` entry per step not collected, in step order; any further entries
  // (a fact live collection could not fetch) are listed after the checklist.
  const pending = [...missing];
  ui.checklist.replaceChildren(...steps.map((step) => {
    const notCollected = step.status === 'not-collected';
    const next = notCollected ? pending.shift() : null;
    return h('li', { class: `step status-${step.status}`, dataset: { step: String(step.step) } },
      h('span', { class: `status-badge status-${step.status}` }, step.status.replace('-', ' ')),
      h('strong', { class: 'step-name' }, step.name),
      step.signal ? h('span', { class: 'step-signal' }, step.signal) : null,
      next ? h('div', { class: 'next-command' },
        h('p', {}, `Run this and paste the output to collect ${next.what}:`),
        next.reason ? h('p', { class: 'missing-reason' }, next.reason) : null,
        codeBlock(next.command, 'Copy the command')) : null);
  }));
  ui.missingExtra.replaceChildren(...(pending.length ? [
    h('h4', {}, 'Also missing'),
    h('ul', {}, pending.map((m) => h('li', {},
      h('p', {}, m.what),
      m.reason ? h('p', { class: 'missing-reason' }, m.reason) : null,
      codeBlock(m.command, 'Copy the command')))),
  ] : []));
}

// ---------------------------------------------------------------------------------------------
// Evidence: scroll to and highlight the quoted line in its document

function showLine(source, line) {
  let index = state.docs.findIndex((d) => d.label === source);
  if (index < 0) index = state.active;
  if (index !== state.active) selectDocument(index);
  const doc = state.docs[index];
  // A large document shows a window: move it so the line sits in its middle.
  if (isLarge(doc) && (line < doc.firstLine || line >= doc.firstLine + VIEW_LINES)) {
    showWindow(doc, line - VIEW_LINES / 2);
  }
  const lineInView = isLarge(doc) ? line - doc.firstLine + 1 : line;
  const text = ui.input.value;
  let start = 0;
  for (let n = 1; n < lineInView && start !== -1; n++) {
    start = text.indexOf('\n', start);
    if (start !== -1) start += 1;
  }
  if (start === -1) start = text.length;
  let end = text.indexOf('\n', start);
  if (end === -1) end = text.length;
  const area = ui.input;
  area.focus({ preventScroll: true });
  area.setSelectionRange(start, end, 'forward');
  // The text does not wrap, so a line sits (line - 1) line heights down; centre it.
  const lineHeight = parseFloat(getComputedStyle(area).lineHeight) || 18;
  area.scrollTop = Math.max(0, (lineInView - 1) * lineHeight - area.clientHeight / 2 + lineHeight);
  area.scrollLeft = 0;
  area.classList.remove('flash');
  void area.offsetWidth;
  area.classList.add('flash');
  ui.dropZone.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  setStatus(`Showing ${source} line ${line}.`);
}

// ---------------------------------------------------------------------------------------------
// Copy buttons, markdown, theme

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Without clipboard permission (some embedded browsers) fall back to a selection copy.
    const area = h('textarea', { class: 'visually-hidden', readonly: true });
    area.value = text;
    document.body.append(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    return ok;
  }
}

function feedback(text) {
  ui.copyFeedback.textContent = text;
  clearTimeout(feedback.timer);
  feedback.timer = setTimeout(() => { ui.copyFeedback.textContent = ''; }, 4000);
}

document.addEventListener('click', async (event) => {
  const button = event.target.closest('.copy-button');
  if (!button) return;
  const ok = await copyText(button.dataset.copy);
  button.textContent = ok ? 'Copied' : 'Copy failed';
  button.classList.toggle('copied', ok);
  setTimeout(() => { button.textContent = 'Copy'; button.classList.remove('copied'); }, 2000);
});

ui.redact.addEventListener('change', () => {
  if (ui.redact.checked && state.markdown && !state.markdownRedacted) {
    ui.copyMarkdown.disabled = true;
    requestAnalysis(0);
  }
});

ui.copyMarkdown.addEventListener('click', async () => {
  const redacted = ui.redact.checked;
  const text = redacted ? state.markdownRedacted : state.markdown;
  if (!text) {
    feedback('The redacted report is being prepared; try again in a moment.');
    return;
  }
  const ok = await copyText(text);
  feedback(ok
    ? `Report copied as markdown${redacted ? ', redacted' : ''}.`
    : 'Could not write to the clipboard.');
});

const THEMES = ['auto', 'light', 'dark'];
function applyTheme(theme) {
  if (theme === 'auto') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
  const button = $('theme-toggle');
  button.textContent = `Theme: ${theme}`;
  button.setAttribute('aria-label', `Theme: ${theme}. Switch theme`);
}
let theme = localStorage.getItem('karpenter-why-theme') || 'auto';
applyTheme(theme);
$('theme-toggle').addEventListener('click', () => {
  theme = THEMES[(THEMES.indexOf(theme) + 1) % THEMES.length];
  localStorage.setItem('karpenter-why-theme', theme);
  applyTheme(theme);
});

// ---------------------------------------------------------------------------------------------
// Rule browser

function openRules(id) {
  if (!ui.rulesDialog.open) ui.rulesDialog.showModal();
  if (id) {
    ui.ruleSearch.value = '';
    renderRuleList();
    showRule(id);
  } else {
    ui.ruleSearch.focus();
  }
}

function renderRuleList() {
  const query = ui.ruleSearch.value.trim().toLowerCase();
  const words = query.split(/\s+/).filter(Boolean);
  const matching = state.rules.filter((r) => {
    const haystack = `${r.id} ${r.slug} ${r.title} ${r.docs}`.toLowerCase();
    return words.every((w) => haystack.includes(w));
  });
  // The catalogue's ranges (workloads, credentials, provisioning...) head their rules.
  const items = matching.flatMap((r, i) => [
    i === 0 || matching[i - 1].group !== r.group ? h('li', { class: 'rule-group', role: 'presentation' }, r.group) : null,
    h('li', {}, h('button', {
      type: 'button', class: `rule-item severity-${r.severity}`, dataset: { rule: r.id },
      onclick: () => showRule(r.id),
    }, h('span', { class: 'rule-item-id' }, r.id), ' ', r.title)),
  ].filter(Boolean));
  ui.ruleList.replaceChildren(...(items.length
    ? items
    : [h('li', { class: 'rule-none' }, state.rules.length ? `No rule matches “${query}”.` : 'Loading the catalogue…')]));
}

function showRule(id) {
  const rule = state.rules.find((r) => r.id === id);
  if (!rule) {
    ui.ruleDoc.replaceChildren(h('p', {}, `${id} is not in this version's catalogue.`));
    return;
  }
  for (const item of ui.ruleList.querySelectorAll('.rule-item')) {
    item.setAttribute('aria-current', String(item.dataset.rule === id));
  }
  ui.ruleDoc.replaceChildren(
    h('h3', {}, `${rule.id} ${rule.title}`),
    h('p', { class: 'rule-meta' }, h('span', { class: `severity-badge severity-${rule.severity}` }, rule.severity), ' ', h('code', {}, rule.slug)),
    markdownDocs(rule.docs),
    h('p', { class: 'rule-meta' }, 'In a terminal: ', h('code', {}, `kubectl karpenter-why explain ${rule.id}`)));
  ui.ruleDoc.scrollTop = 0;
  ui.ruleDoc.focus({ preventScroll: true });
}

$('open-rules').addEventListener('click', () => openRules());
$('close-rules').addEventListener('click', () => ui.rulesDialog.close());
ui.ruleSearch.addEventListener('input', renderRuleList);
// Escape in the search field would only clear it; it closes the catalogue as everywhere else.
ui.rulesDialog.addEventListener('keydown', (event) => {
  if (event.key === 'Escape') {
    event.preventDefault();
    ui.rulesDialog.close();
  }
});
ui.rulesDialog.addEventListener('click', (event) => {
  // A click on the backdrop (outside the dialog's box) closes it.
  if (event.target === ui.rulesDialog) ui.rulesDialog.close();
});

renderTabs();
renderSamples();
renderRuleList();
