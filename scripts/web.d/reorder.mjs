// Reorders the functions of a wasm module by name, then drops the name and producers
// sections:  node scripts/web.d/reorder.mjs in.wasm out.wasm
// (It also refuses a module that links the standard float printer or parser: see below.)
//
// Why: gzip (DEFLATE) only finds repeats within 32 KB. The linker emits functions in LLVM's
// order, so the dozens of near-identical copies of a generic function (every `Map::fold`,
// every stable sort, every `BTreeMap` node routine) lie far apart; sorted by name they sit
// side by side and the served module is about 15 KB smaller gzipped. The code itself is
// untouched: only function indices change, in calls, `ref.func`, exports, the start function
// and table elements. Needs the name section (wasm-bindgen run without
// --remove-name-section); functions without a name keep their relative order at the end.
import { readFileSync, writeFileSync } from "node:fs";

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error("usage: node scripts/web.d/reorder.mjs in.wasm out.wasm");
  process.exit(2);
}
const bytes = readFileSync(input);

class Reader {
  constructor(buf, pos = 0, end = buf.length) {
    this.buf = buf;
    this.pos = pos;
    this.end = end;
  }
  byte() {
    if (this.pos >= this.end) throw new Error("unexpected end of section");
    return this.buf[this.pos++];
  }
  u32() {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (b < 0x80) return result;
    }
  }
  // Signed LEB128 (i32/i64 constants, block types): only skipped, never decoded.
  skipLeb() {
    while (this.byte() & 0x80);
  }
  skip(n) {
    this.pos += n;
    if (this.pos > this.end) throw new Error("unexpected end of section");
  }
  bytes(n) {
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.skip(n);
    return out;
  }
  name() {
    return new TextDecoder().decode(this.bytes(this.u32()));
  }
  done() {
    return this.pos >= this.end;
  }
}

function leb(n) {
  const out = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return Buffer.from(out);
}

function withSize(buf) {
  return Buffer.concat([leb(buf.length), buf]);
}

if (bytes.readUInt32LE(0) !== 0x6d736100 || bytes.readUInt32LE(4) !== 1) {
  throw new Error(`${input} is not a wasm module`);
}
const sections = [];
{
  const r = new Reader(bytes, 8);
  while (!r.done()) {
    const id = r.byte();
    const size = r.u32();
    const start = r.pos;
    r.skip(size);
    let name = null;
    if (id === 0) name = new Reader(bytes, start, start + size).name();
    sections.push({ id, name, body: bytes.subarray(start, start + size) });
  }
}
const section = (id) => sections.find((s) => s.id === id);

let importedFunctions = 0;
if (section(2)) {
  const r = new Reader(section(2).body);
  for (let n = r.u32(); n > 0; n--) {
    r.name();
    r.name();
    const kind = r.byte();
    if (kind === 0) {
      r.u32();
      importedFunctions++;
    } else if (kind === 1) {
      r.byte();
      const flags = r.byte();
      r.u32();
      if (flags & 1) r.u32();
    } else if (kind === 2) {
      const flags = r.byte();
      r.u32();
      if (flags & 1) r.u32();
    } else if (kind === 3) {
      r.byte();
      r.byte();
    } else {
      throw new Error(`unknown import kind ${kind}`);
    }
  }
}

const types = [];
{
  const r = new Reader(section(3).body);
  for (let n = r.u32(); n > 0; n--) types.push(r.u32());
}
const bodies = [];
{
  const r = new Reader(section(10).body);
  for (let n = r.u32(); n > 0; n--) bodies.push(r.bytes(r.u32()));
}
if (bodies.length !== types.length) throw new Error("function and code sections disagree");

const names = new Map();
const nameSection = sections.find((s) => s.id === 0 && s.name === "name");
if (nameSection) {
  const r = new Reader(nameSection.body);
  r.name();
  while (!r.done()) {
    const sub = r.byte();
    const size = r.u32();
    const end = r.pos + size;
    if (sub === 1) {
      const s = new Reader(r.buf, r.pos, end);
      for (let n = s.u32(); n > 0; n--) names.set(s.u32(), s.name());
    }
    r.pos = end;
  }
}
if (names.size === 0) throw new Error(`${input} has no function names to sort by`);

// The float printer (`flt2dec`: `{:.3}` or `{}` of an f64) and parser (`dec2flt`:
// `str::parse::<f64>`) cost about 22 KB of the gzipped module between them; core has
// integer and `number::is_f64` replacements. Fail the build rather than let one creep back.
const floatCode = [...names.values()].filter((n) => /dec2flt|flt2dec/.test(n));
if (floatCode.length > 0) {
  console.error(
    `reorder.mjs: the module links the standard float printer or parser (${floatCode.length} functions, e.g. ${floatCode[0]}): ` +
      "format numbers with integers and test numbers with core's ingest::objects::number instead",
  );
  process.exit(1);
}

// The sort key: the name without its hash and crate disambiguators, so that instantiations of
// one generic function sort together, then the original position for a stable order.
const key = (i) =>
  (names.get(importedFunctions + i) ?? "\u{10ffff}")
    .replace(/::h[0-9a-f]{16}$/, "")
    .replace(/\[[0-9a-f]+\]/g, "");
const order = bodies.map((_, i) => i);
const keys = order.map(key);
order.sort((a, b) => (keys[a] < keys[b] ? -1 : keys[a] > keys[b] ? 1 : a - b));
const newIndex = new Array(importedFunctions + bodies.length);
for (let i = 0; i < importedFunctions; i++) newIndex[i] = i;
order.forEach((old, pos) => {
  newIndex[importedFunctions + old] = importedFunctions + pos;
});
const remap = (f) => {
  const to = newIndex[f];
  if (to === undefined) throw new Error(`function index ${f} out of range`);
  return to;
};

// Copies instructions from `r` to `out` up to the `end` that closes the expression, with every
// function index remapped. Throws on an opcode it does not know rather than guess its size.
function rewriteExpr(r, out) {
  let depth = 0;
  let from = r.pos;
  const flush = () => {
    out.push(r.buf.subarray(from, r.pos));
  };
  const memarg = () => {
    const align = r.u32();
    if (align & 0x40) r.u32();
    r.u32();
  };
  for (;;) {
    const op = r.byte();
    switch (op) {
      case 0x10: // call
      case 0x12: // return_call
      case 0xd2: {
        // ref.func: copied up to and including the opcode, then the new index.
        flush();
        out.push(leb(remap(r.u32())));
        from = r.pos;
        break;
      }
      case 0x02:
      case 0x03:
      case 0x04: {
        const b = r.buf[r.pos];
        if (b === 0x40 || (b >= 0x6f && b <= 0x7f)) r.byte();
        else r.skipLeb();
        depth++;
        break;
      }
      case 0x0b:
        if (depth === 0) {
          flush();
          return;
        }
        depth--;
        break;
      case 0x00:
      case 0x01:
      case 0x05:
      case 0x0f:
      case 0x1a:
      case 0x1b:
      case 0xd1:
        break;
      case 0x0c:
      case 0x0d:
      case 0x20:
      case 0x21:
      case 0x22:
      case 0x23:
      case 0x24:
      case 0x25:
      case 0x26:
      case 0x3f:
      case 0x40:
        r.u32();
        break;
      case 0x0e:
        for (let n = r.u32(); n >= 0; n--) r.u32();
        break;
      case 0x11:
      case 0x13:
        r.u32();
        r.u32();
        break;
      case 0x1c:
        r.skip(r.u32());
        break;
      case 0x41:
      case 0x42:
        r.skipLeb();
        break;
      case 0x43:
        r.skip(4);
        break;
      case 0x44:
        r.skip(8);
        break;
      case 0xd0:
        r.byte();
        break;
      case 0xfc: {
        const sub = r.u32();
        if (sub <= 7) break;
        if ([8, 10, 12, 14].includes(sub)) {
          r.u32();
          r.u32();
        } else if (sub <= 17) {
          r.u32();
        } else throw new Error(`unknown 0xfc opcode ${sub}`);
        break;
      }
      case 0xfd: {
        const sub = r.u32();
        if (sub <= 11 || sub === 92 || sub === 93) memarg();
        else if (sub === 12 || sub === 13) r.skip(16);
        else if (sub >= 21 && sub <= 34) r.byte();
        else if (sub >= 84 && sub <= 91) {
          memarg();
          r.byte();
        } else if (sub > 0x113) throw new Error(`unknown 0xfd opcode ${sub}`);
        break;
      }
      default:
        if (op >= 0x28 && op <= 0x3e) memarg();
        else if (op >= 0x45 && op <= 0xc4) break;
        else throw new Error(`unknown opcode 0x${op.toString(16)} at ${r.pos - 1}`);
    }
  }
}

function rewriteBody(body) {
  const r = new Reader(body);
  for (let n = r.u32(); n > 0; n--) {
    r.u32();
    const t = r.byte();
    if (t === 0x63 || t === 0x64) throw new Error("typed function references are not supported");
  }
  const out = [body.subarray(0, r.pos)];
  rewriteExpr(r, out);
  if (!r.done()) throw new Error("function body continues after its end");
  return Buffer.concat(out);
}

function vecOfIndices(r, out) {
  const n = r.u32();
  out.push(leb(n));
  for (let i = 0; i < n; i++) out.push(leb(remap(r.u32())));
}

function vecOfExprs(r, out) {
  const n = r.u32();
  out.push(leb(n));
  for (let i = 0; i < n; i++) rewriteExpr(r, out);
}

function rewriteElements(body) {
  const r = new Reader(body);
  const out = [];
  const n = r.u32();
  out.push(leb(n));
  for (let i = 0; i < n; i++) {
    const flags = r.u32();
    out.push(leb(flags));
    const copy = (f) => {
      const from = r.pos;
      f();
      out.push(r.buf.subarray(from, r.pos));
    };
    if (flags === 2 || flags === 6) copy(() => r.u32());
    if (flags === 0 || flags === 2 || flags === 4 || flags === 6) rewriteExpr(r, out);
    if ([1, 2, 3, 5, 6, 7].includes(flags)) copy(() => r.byte());
    if (flags <= 3) vecOfIndices(r, out);
    else if (flags <= 7) vecOfExprs(r, out);
    else throw new Error(`unknown element segment kind ${flags}`);
  }
  return Buffer.concat(out);
}

function rewriteExports(body) {
  const r = new Reader(body);
  const out = [];
  const n = r.u32();
  out.push(leb(n));
  for (let i = 0; i < n; i++) {
    const from = r.pos;
    r.name();
    const kind = r.byte();
    out.push(r.buf.subarray(from, r.pos));
    const index = r.u32();
    out.push(leb(kind === 0 ? remap(index) : index));
  }
  return Buffer.concat(out);
}

function rewriteGlobals(body) {
  const r = new Reader(body);
  const out = [];
  const n = r.u32();
  out.push(leb(n));
  for (let i = 0; i < n; i++) {
    out.push(r.bytes(2));
    rewriteExpr(r, out);
  }
  return Buffer.concat(out);
}

const rewritten = [];
for (const s of sections) {
  let body = s.body;
  if (s.id === 0 && (s.name === "name" || s.name === "producers")) continue;
  if (s.id === 3) body = Buffer.concat([leb(types.length), ...order.map((i) => leb(types[i]))]);
  if (s.id === 6) body = rewriteGlobals(body);
  if (s.id === 7) body = rewriteExports(body);
  if (s.id === 8) body = leb(remap(new Reader(body).u32()));
  if (s.id === 9) body = rewriteElements(body);
  if (s.id === 10) {
    body = Buffer.concat([leb(bodies.length), ...order.map((i) => withSize(rewriteBody(bodies[i])))]);
  }
  rewritten.push(Buffer.from([s.id]), withSize(body));
}
const result = Buffer.concat([bytes.subarray(0, 8), ...rewritten]);
// Throws with the reason when a rewrite went wrong.
new WebAssembly.Module(result);
writeFileSync(output, result);
