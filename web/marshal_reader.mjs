// CPython marshal reader for values Python writes (used by wiring.mjs). Transport
// only: no storage logic.
//
// Python snapshots the values of a write with marshal.dumps, which walks them in C and
// so costs a fraction of a Python-level deep copy (measured in Pyodide: 10,000 records,
// ~8 ms against ~120 ms for the copy, plus ~50-90 ms for json.dumps). This reader builds
// the JS objects from those bytes and checks on the way what Python did not: it refuses
// anything a plain record cannot hold. A refused value makes Python take its exact path
// (a deep copy that names the offending field), so the reader need not say why.
//
// Accepted (format versions 4 and 5, as marshal.dumps writes them): None, True, False,
// int32 (i), long (l) within JS's safe integer range, binary float (g), bytes (s, as a
// Uint8Array), str (u/t UTF-8 with lone surrogates kept, a/A/z/Z ASCII), list ([),
// tuple ((, ), as an array), dict ({ with str keys) and references (r) to scalars.
// Refused: other types, non-str keys, unsafe integers, values nested deeper than Python
// allows (MAX_DEPTH), and references to containers (a value holding the same list or
// dict twice, or itself: Python's copy separates the first and refuses the second).
import {
  ASCII,
  ASCII_INTERNED,
  BINARY_FLOAT,
  DICT,
  FALSE,
  FLAG_REF,
  INT,
  INTERNED,
  LIST,
  LONG,
  NONE,
  NULL,
  REF,
  SHORT_ASCII,
  SHORT_ASCII_INTERNED,
  SMALL_TUPLE,
  STRING,
  TRUE,
  TUPLE,
  UNICODE,
} from "./marshal_format.mjs";

const MAX_DEPTH = 200; // as panelot.idb.values: containers nested deeper are refused
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const REFUSED = Symbol("refused");
const CONTAINER = Symbol("container"); // the reference slot of a list, tuple or dict

const strict = new TextDecoder("utf-8", { fatal: true });
/** UTF-8 strings at least this long are decoded natively (TextDecoder). */
const NATIVE_TEXT = 48;
/** ASCII strings at least this long are slices of `whole` (V8 shares, not copies, them). */
const SLICED = 13;

let buf = new Uint8Array(0);
let view = new DataView(buf.buffer);
let at = 0;
let refs = [];
let whole = null; // the data as one ASCII string, built for the first long ASCII string

/**
 * The data as a string of one character per byte, for slicing ASCII strings out of it.
 * Bytes above 127 are masked first: decoding them (windows-1252) could make a two-byte
 * string, whose slices IndexedDB would then store at twice the size.
 */
function wholeText() {
  const copy = buf.slice();
  for (let i = 0; i < copy.length; i++) copy[i] &= 127;
  return new TextDecoder("utf-8").decode(copy);
}

function int32() {
  const x = view.getInt32(at, true);
  at += 4;
  return x;
}

/** Moves past the next `n` bytes (refusing data cut short); returns where they start. */
function skip(n) {
  const start = at;
  at += n;
  if (n < 0 || at > buf.length) throw REFUSED;
  return start;
}

function asciiString(n) {
  const start = skip(n);
  if (n >= SLICED) {
    if (whole === null) whole = wholeText();
    return whole.slice(start, at);
  }
  let s = "";
  for (let i = start; i < at; i++) s += String.fromCharCode(buf[i]);
  return s;
}

function utf8String(n) {
  const start = skip(n);
  if (n >= NATIVE_TEXT) {
    try {
      return strict.decode(buf.subarray(start, at));
    } catch {
      // a lone surrogate (surrogatepass): decoded by the loop below, which keeps it
    }
  }
  let s = "";
  let i = start;
  while (i < at) {
    const b = buf[i++];
    let c;
    if (b < 0x80) c = b;
    else if (b < 0xe0) c = ((b & 31) << 6) | (buf[i++] & 63);
    else if (b < 0xf0) c = ((b & 15) << 12) | ((buf[i++] & 63) << 6) | (buf[i++] & 63);
    else {
      c = ((b & 7) << 18) | ((buf[i++] & 63) << 12) | ((buf[i++] & 63) << 6) | (buf[i++] & 63);
      c -= 0x10000;
      s += String.fromCharCode(0xd800 + (c >> 10), 0xdc00 + (c & 1023));
      continue;
    }
    s += String.fromCharCode(c);
  }
  return s;
}

function long() {
  const n = int32();
  const digits = Math.abs(n);
  let x = 0;
  let scale = 1;
  for (let i = 0; i < digits; i++) {
    x += view.getUint16(at, true) * scale;
    at += 2;
    scale *= 32768;
  }
  if (x > MAX_SAFE) throw REFUSED; // exact below 2**53, and rounding keeps larger ones larger
  return n < 0 ? -x : x;
}

function items(n, depth) {
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = read(depth + 1);
  return out;
}

function container(code, flagged, depth) {
  if (depth > MAX_DEPTH) throw REFUSED;
  if (flagged) refs.push(CONTAINER); // its slot comes before those of its items
  if (code === LIST || code === TUPLE) return items(int32(), depth);
  if (code === SMALL_TUPLE) return items(buf[at++], depth);
  const obj = {};
  for (;;) {
    // { dict: key/value pairs up to the null code 0
    if (buf[at] === NULL) {
      at++;
      return obj;
    }
    const key = read(depth + 1);
    if (typeof key !== "string") throw REFUSED;
    obj[key] = read(depth + 1);
  }
}

function read(depth) {
  if (at >= buf.length) throw REFUSED;
  const byte = buf[at++];
  const flagged = (byte & FLAG_REF) !== 0;
  const code = byte & ~FLAG_REF;
  let v;
  switch (code) {
    case NONE:
      v = null;
      break;
    case TRUE:
      v = true;
      break;
    case FALSE:
      v = false;
      break;
    case INT:
      v = int32();
      break;
    case LONG:
      v = long();
      break;
    case BINARY_FLOAT:
      v = view.getFloat64(at, true);
      at += 8;
      break;
    case SHORT_ASCII:
    case SHORT_ASCII_INTERNED:
      v = asciiString(buf[at++]);
      break;
    case ASCII:
    case ASCII_INTERNED:
      v = asciiString(int32());
      break;
    case UNICODE:
    case INTERNED:
      v = utf8String(int32());
      break;
    case STRING: {
      // s: bytes
      const n = int32();
      const start = skip(n);
      v = buf.slice(start, at);
      break;
    }
    case REF: {
      // r: a reference to an earlier scalar
      v = refs[int32()];
      if (v === undefined || v === CONTAINER) throw REFUSED;
      return v;
    }
    case LIST:
    case TUPLE:
    case SMALL_TUPLE:
    case DICT:
      return container(code, flagged, depth);
    default:
      throw REFUSED; // set, frozenset, complex, code, slice, Ellipsis, ...
  }
  if (flagged) refs.push(v);
  return v;
}

/**
 * The JS array of values in marshal `data` (Python's marshal.dumps of a list), or
 * undefined (None in Python, where null would be jsnull) when it holds anything a plain
 * record cannot (see above).
 */
export function unmarshalValues(data) {
  buf = data;
  view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  at = 0;
  refs = [];
  try {
    const out = read(-1);
    return Array.isArray(out) && at === data.length ? out : undefined;
  } catch (e) {
    if (e === REFUSED || e instanceof RangeError) return undefined; // RangeError: truncated
    throw e;
  } finally {
    buf = new Uint8Array(0);
    refs = [];
    whole = null;
  }
}
