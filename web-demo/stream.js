// Hands documents to the engine a piece at a time. Two ways: `streamDocuments` encodes and
// feeds in one thread (the worker's warm-up; the browser tests call it with small pieces to
// check that where a piece ends never changes the report), `encodeDocuments` (the encoder
// worker) only encodes, and `feedPiece` (the engine worker) feeds what it encoded.

const encoder = new TextEncoder();

// UTF-16 units encoded per piece: small enough that a piece's UTF-8 (and the scanner's
// lower-cased copy of it) is still in the CPU cache when the scanner reads it (a little faster
// than 1 MB pieces in Chromium).
export const PIECE_UNITS = 1 << 18;

/**
 * The [from, to) ranges of UTF-16 units, at most `units` long, that `text` is encoded in. A
 * range never ends between the two halves of a surrogate pair, which encoded apart would each
 * become U+FFFD.
 */
export function* pieceRanges(text, units) {
  for (let from = 0; from < text.length;) {
    let to = Math.min(text.length, from + units);
    const last = text.charCodeAt(to - 1);
    if (to < text.length && last >= 0xd800 && last <= 0xdbff) to += 1;
    yield [from, to];
    from = to;
  }
}

/**
 * Streams the documents into the engine (see `streamDocument`): each piece is encoded with
 * `encodeInto` straight into the engine's one piece buffer (room for 3 bytes per unit, the
 * most UTF-8 needs) and fed to the scanner, so the engine's memory never holds the whole
 * paste.
 */
export function streamDocuments(engine, memory, documents, { keepText = false, units = PIECE_UNITS } = {}) {
  engine.streamClear();
  for (const { label, text } of documents) {
    engine.streamDocument(label, keepText);
    for (const [from, to] of pieceRanges(text, units)) {
      const room = (to - from) * 3;
      const offset = engine.streamBuffer(room);
      const { written } = encoder.encodeInto(text.substring(from, to), new Uint8Array(memory.buffer, offset, room));
      engine.streamFeed(written);
    }
  }
}

/**
 * Encodes the documents for `feedPiece` in another thread: `post(message, transfer)` gets
 * `{type: 'document', label}` before each document's pieces and `{type: 'piece', piece,
 * units}` for each piece (its UTF-8 bytes, their buffer to transfer).
 */
export function encodeDocuments(documents, post, units = PIECE_UNITS) {
  for (const { label, text } of documents) {
    post({ type: 'document', label }, []);
    for (const [from, to] of pieceRanges(text, units)) {
      const piece = encoder.encode(text.substring(from, to));
      post({ type: 'piece', piece, units: to - from }, [piece.buffer]);
    }
  }
}

/** Feeds one piece of UTF-8 bytes to the last streamed document. */
export function feedPiece(engine, memory, piece) {
  const offset = engine.streamBuffer(piece.length);
  new Uint8Array(memory.buffer, offset, piece.length).set(piece);
  engine.streamFeed(piece.length);
}
