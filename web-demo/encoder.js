// Encodes the page's documents to UTF-8, a piece at a time, for the engine worker. In one
// thread, encoding a 50 MB paste took about a quarter of its analysis time (measured in
// headless Chromium: ~50 ms encoding, ~150 ms scanning); here the engine scans a piece while
// this worker encodes the next. The pieces go straight to the engine over the MessageChannel
// the page gave both workers, their buffers transferred, never copied.
// Messages in:  {type: 'port', port}, then
//               {type: 'analyze', seq, documents: [{label, text}], readErrors, now, redact}
// Messages out (on the port): {type: 'begin', seq, now, redact, readErrors, started, units}, for each
//   document {type: 'document', label} and its {type: 'piece', piece, units}, then {type: 'end'}
import { encodeDocuments } from './stream.js';

let engine;

onmessage = ({ data }) => {
  if (data.type === 'port') {
    engine = data.port;
    return;
  }
  if (data.type !== 'analyze') return;
  // The analysis time the page reports runs from here: the engine's clock has another
  // origin, so this is sent as an absolute time.
  const started = performance.timeOrigin + performance.now();
  const { documents, seq, now, redact, readErrors } = data;
  const units = documents.reduce((sum, d) => sum + d.text.length, 0);
  engine.postMessage({ type: 'begin', seq, now, redact, readErrors, started, units });
  encodeDocuments(documents, (message, transfer) => engine.postMessage(message, transfer));
  engine.postMessage({ type: 'end' });
};
