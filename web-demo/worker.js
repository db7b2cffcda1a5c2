// The engine runs here, off the main thread, so that a 50 MB paste never freezes the page.
// Messages in:  {type: 'analyze', seq, documents: [{label, text}], now, redact}
// Messages out: {type: 'ready', version, rules}
//               {type: 'result', seq, report, markdown, markdownRedacted, ms, bytes}
//               {type: 'error', seq, message}
import init, * as engine from './pkg/karpenter_why_wasm.js';
import { streamDocuments } from './stream.js';

let memory;

const ready = init().then(
  (exports) => {
    memory = exports.memory;
    postMessage({ type: 'ready', version: engine.version(), rules: engine.rules() });
    // The first analysis builds the engine's signal matcher (tens of ms): done now, while the
    // user is still pasting, so that their first diagnosis does not wait for it.
    try {
      engine.analyze('{"level":"ERROR","message":"warm-up"}\n');
    } catch {
      // Left for the user's own analysis to report.
    }
  },
  (error) => {
    postMessage({ type: 'error', seq: 0, message: `The engine could not start: ${error}` });
    throw error;
  },
);

onmessage = async (event) => {
  const message = event.data;
  if (message.type !== 'analyze') return;
  try {
    await ready;
    const { documents, now } = message;
    const bytes = documents.reduce((sum, d) => sum + d.text.length, 0);
    const started = performance.now();
    // One analysis gives both the report (shown as cards) and core's markdown rendering of
    // it (copied for a ticket): the page never re-words the report itself.
    streamDocuments(engine, memory, documents, { keepText: message.redact });
    const { report, markdown } = engine.diagnoseStreamed({ now });
    const ms = performance.now() - started;
    // The redacted copy is the report of the redacted documents, as the CLI would print it
    // for a `collect --redact` file; only computed while the toggle is on.
    const markdownRedacted = message.redact ? engine.diagnoseStreamed({ now, redact: true }).markdown : null;
    engine.streamClear();
    postMessage({ type: 'result', seq: message.seq, report, markdown, markdownRedacted, ms, bytes });
  } catch (error) {
    postMessage({ type: 'error', seq: message.seq, message: String((error && error.message) || error) });
  }
};
