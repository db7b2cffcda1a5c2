// Hands documents to the engine a piece at a time (the worker; the browser tests call it
// with small pieces to check that where a piece ends never changes the report).

const encoder = new TextEncoder();

// UTF-16 units encoded per piece: small enough that a piece's UTF-8 (and the scanner's
// lower-cased copy of it) is still in the CPU cache when the scanner reads it (a little faster
// than 1 MB pieces in Chromium).
const PIECE_UNITS = 1 << 18;

/**
 * Streams the documents into the engine (see `streamDocument`): each piece of at most `units`
 * UTF-16 units is encoded with `encodeInto` straight into the engine's one piece buffer (room
 * for 3 bytes per unit, the most UTF-8 needs) and fed to the scanner, so the engine's memory
 * never holds the whole paste. A piece never ends between the two halves of a surrogate pair,
 * which encoded apart would each become U+FFFD.
 */
export function streamDocuments(engine, memory, documents, { keepText = false, units = PIECE_UNITS } = {}) {
  engine.streamClear();
  for (const { label, text } of documents) {
    engine.streamDocument(label, keepText);
    for (let from = 0; from < text.length;) {
      let to = Math.min(text.length, from + units);
      const last = text.charCodeAt(to - 1);
      if (to < text.length && last >= 0xd800 && last <= 0xdbff) to += 1;
      const room = (to - from) * 3;
      const offset = engine.streamBuffer(room);
      const { written } = encoder.encodeInto(text.substring(from, to), new Uint8Array(memory.buffer, offset, room));
      engine.streamFeed(written);
      from = to;
    }
  }
}
