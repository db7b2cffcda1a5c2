// The engine runs here, off the main thread, so that a 50 MB paste never freezes the page.
// The encoder worker (encoder.js) sends it the documents as UTF-8 pieces over a MessageChannel.
// Messages in:  {type: 'port', port} from the page, then on that port
//               {type: 'begin', seq, now, redact, readErrors, started, units}, {type: 'document', label},
//               {type: 'piece', piece, units}..., {type: 'end'}
// Messages out: {type: 'ready', version, rules}
//               {type: 'progress', seq, done, units} (large inputs)
//               {type: 'result', seq, report, markdown, markdownRedacted, ms, bytes}
//               {type: 'error', seq, message}
import init, * as engine from './pkg/karpenter_why_wasm.js';
import { streamDocuments, feedPiece } from './stream.js';

let memory;

// The browser first runs the engine's code from a quick baseline compilation and optimises a
// function only once it has run a while, in the background; a call already running keeps its
// code. Left alone, a first 50 MB paste would run much of its scan and analysis in baseline
// code. So once the worker has been idle a moment after loading, a synthetic Karpenter log
// (INFO noise, signal lines, an error) goes through the whole pipeline, 128 KB per task (tens
// of ms): a real request waits for one piece at most. Measured in headless Chromium: the
// worker's CPU time for a first 50 MB paste about 15% lower.
const WARM_UP_PIECES = 16;
const WARM_UP_IDLE_MS = 100;
// Mostly INFO noise, as a real log; one line in five is kept, which the analysis then reads
// (every kept line costs far more than a dropped one, and a piece must stay short).
const WARM_UP_LOG = [
  ...Array(6).fill([
    '{"level":"INFO","time":"2024-05-01T10:00:00.000Z","logger":"controller","message":"Starting workers","commit":"a1b2c3d","controller":"nodeclaim.disruption","worker count":10}',
    '{"level":"INFO","time":"2024-05-01T10:00:00.400Z","logger":"controller","message":"initialized nodeclaim","commit":"a1b2c3d","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"default-x7k2p"},"allocatable":{"cpu":"1930m","memory":"7291Mi","pods":"29"}}',
  ]).flat(),
  '{"level":"INFO","time":"2024-05-01T10:00:00.100Z","logger":"controller","message":"found provisionable pod(s)","commit":"a1b2c3d","controller":"provisioner","Pods":"shop/web-0, shop/web-1","duration":"12.3ms"}',
  '2024-05-01T10:00:00.300Z\tINFO\tcontroller.provisioner\tcreated nodeclaim\t{"commit": "a1b2c3d", "NodePool": {"name":"default"}, "requests": {"cpu":"1","pods":"3"}}',
  '{"level":"ERROR","time":"2024-05-01T10:00:00.500Z","logger":"controller","message":"Reconciler error","commit":"a1b2c3d","controller":"nodeclaim.lifecycle","error":"launching nodeclaim, creating instance, insufficient capacity"}',
].join('\n');
let warmUpPiece = 0;
let warmUpTimer = 0;

function scheduleWarmUp(delay) {
  clearTimeout(warmUpTimer);
  if (warmUpPiece < WARM_UP_PIECES) warmUpTimer = setTimeout(warmUp, delay);
}

function warmUp() {
  warmUpPiece += 1;
  try {
    const text = `${WARM_UP_LOG}\n`.repeat(Math.ceil((128 << 10) / WARM_UP_LOG.length));
    streamDocuments(engine, memory, [{ label: 'warm-up', text }], { units: 64 << 10 });
    engine.diagnoseStreamed({});
    engine.streamClear();
    scheduleWarmUp(0);
  } catch {
    // Left for the user's own analysis to report.
  }
}

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
    scheduleWarmUp(WARM_UP_IDLE_MS);
  },
  (error) => {
    postMessage({ type: 'error', seq: 0, message: `The engine could not start: ${error}` });
    throw error;
  },
);

// Above this many UTF-16 units an analysis reports its progress, about every PROGRESS_UNITS.
const PROGRESS_FROM = 1 << 20;
const PROGRESS_UNITS = 1 << 21;

// The analysis whose pieces are arriving: {seq, now, redact, readErrors, started, units, done, reported,
// failure}. A failure (input the engine refuses) skips the rest of its pieces and is
// reported at its end.
let run = null;

function onPortMessage({ data }) {
  if (data.type === 'begin') {
    clearTimeout(warmUpTimer);
    run = { ...data, done: 0, reported: 0, failure: null };
    engine.streamClear();
    return;
  }
  if (!run) return;
  try {
    if (run.failure) {
      // Skipped: the analysis has already failed.
    } else if (data.type === 'document') {
      engine.streamDocument(data.label, false);
    } else if (data.type === 'piece') {
      feedPiece(engine, memory, data.piece);
      run.done += data.units;
      if (run.units > PROGRESS_FROM && run.done - run.reported >= PROGRESS_UNITS) {
        run.reported = run.done;
        postMessage({ type: 'progress', seq: run.seq, done: run.done, units: run.units });
      }
    }
  } catch (error) {
    run.failure = error;
  }
  if (data.type === 'end') finishRun();
}

function finishRun() {
  const { seq, now, redact, readErrors, started, units, failure } = run;
  run = null;
  try {
    if (failure) throw failure;
    // One analysis gives both the report (shown as cards) and core's markdown rendering of
    // it (copied for a ticket): the page never re-words the report itself.
    const { report, markdown } = engine.diagnoseStreamed({ now, readErrors });
    const ms = performance.timeOrigin + performance.now() - started;
    // The redacted copy is this markdown masked, exactly what `analyze -o markdown --redact`
    // prints: the analysis saw the real names (a masked hostname no longer tells its zone),
    // and the masks are numbered in the order the report shows them.
    const markdownRedacted = redact ? engine.redact(markdown) : null;
    postMessage({ type: 'result', seq, report, markdown, markdownRedacted, ms, bytes: units });
  } catch (error) {
    postMessage({ type: 'error', seq, message: String((error && error.message) || error) });
  }
  engine.streamClear();
  scheduleWarmUp(WARM_UP_IDLE_MS);
}

onmessage = async (event) => {
  if (event.data.type !== 'port') return;
  await ready;
  event.data.port.onmessage = onPortMessage;
};
