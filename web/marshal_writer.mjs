// CPython marshal writer for large plain results read from IndexedDB (used by
// wiring.mjs). Transport only: no storage logic.
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
  TRUE,
  UNICODE,
} from "./marshal_format.mjs";
const { getPrototypeOf } = Object;
const OBJECT = Object.prototype;

// Large plain results cross as CPython marshal data (kind MARSHAL): one JS pass writes
// it (and checks that the value is plain), and Python's marshal.loads builds the objects
// several times faster than its JSON scanner (measured in Pyodide: 7 MB of records,
// ~3x). The codes written (format version 4, read by every CPython since 3.4): None N,
// True T, False F, int32 i, long l (15-bit digits), float g (binary double), str z/a
// (ASCII) or u (UTF-8, surrogatepass: lone surrogates survive as JSON carries them),
// list [, dict { ... 0. A safe integer (-0 too) is an int, any other number a float:
// Python takes an int beyond 2**53 - 1 for one JS would round, and refuses to store it,
// so a number read there must come back as the float it is (see unsafeIntegers). A
// value JSON cannot carry is reported raw.
// Object keys are written once per result, as interned strings flagged for reference
// (FLAG_REF), and by reference (r) after that: 10,000 records with the same eight keys
// make eight key strings in Python, not 80,000, and their dicts hash them once. Short
// string values that repeat under a key are referenced the same way (see writeKey).

const MAX_DEPTH = 500; // deeper values take the JSON path (Python's decoder recurses too)
const SMALL_BUFFER = 1 << 16;
let mBuf;
let mView;
useBuffer(new Uint8Array(SMALL_BUFFER));
let mLen = 0;
let keyRefs = new Map(); // key string -> its KeyEntry, per result
let nextRef = 0; // the next marshal reference index (keys and repeated values share them)
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** How many integral numbers beyond ±(2**53 - 1) the last result held (written as floats:
 * JSON text would make them Python ints, so a result holding one must cross as marshal). */
export let unsafeIntegers = 0;

/** Write into `bytes` from now on (mBuf and its DataView always change together). */
function useBuffer(bytes) {
  mBuf = bytes;
  mView = new DataView(bytes.buffer);
}

function reserve(extra) {
  if (mLen + extra <= mBuf.length) return;
  let size = mBuf.length * 2;
  while (size < mLen + extra) size *= 2;
  const next = new Uint8Array(size);
  next.set(mBuf.subarray(0, mLen));
  useBuffer(next);
}

function writeInt32(x) {
  mView.setInt32(mLen, x, true);
  mLen += 4;
}

const utf8 = new TextEncoder();
/** Non-ASCII strings at least this long are encoded natively (TextEncoder) when well formed. */
const NATIVE_TEXT = 64;

function writeString(s) {
  const len = s.length;
  reserve(len * 3 + 5);
  const start = mLen;
  if (len < 256) {
    mBuf[mLen++] = SHORT_ASCII;
    mBuf[mLen++] = len;
  } else {
    mBuf[mLen++] = ASCII;
    writeInt32(len);
  }
  // ASCII is copied by this loop: for a few hundred characters it beats encodeInto
  // (measured in Chromium: ~0.8 µs against ~1.5-3 µs per 300-character string).
  const buf = mBuf; // locals: the loop would otherwise reload the module's variables
  const at = mLen;
  let i = 0;
  for (; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c > 127) break;
    buf[at + i] = c;
  }
  if (i === len) {
    mLen = at + len;
    return;
  }
  // not ASCII: u, UTF-8 (lone surrogates encoded as themselves, as surrogatepass does)
  if (len >= NATIVE_TEXT && s.isWellFormed()) {
    // One native pass. TextEncoder would replace a lone surrogate, hence the check;
    // such strings take the loop below, which keeps them. The destination is bounded:
    // encodeInto into the rest of a large buffer was measured twice as slow.
    const { written } = utf8.encodeInto(s, mBuf.subarray(start + 5, start + 5 + len * 3));
    mBuf[start] = UNICODE;
    mView.setInt32(start + 1, written, true);
    mLen = start + 5 + written;
    return;
  }
  buf[start] = UNICODE;
  let p = start + 5; // a local cursor, as above
  for (i = 0; i < len; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) buf[p++] = c;
    else if (c < 0x800) {
      buf[p++] = 0xc0 | (c >> 6);
      buf[p++] = 0x80 | (c & 63);
    } else {
      if (c >= 0xd800 && c < 0xdc00 && i + 1 < len) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d < 0xe000) {
          i++;
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          buf[p++] = 0xf0 | (c >> 18);
          buf[p++] = 0x80 | ((c >> 12) & 63);
          buf[p++] = 0x80 | ((c >> 6) & 63);
          buf[p++] = 0x80 | (c & 63);
          continue;
        }
      }
      buf[p++] = 0xe0 | (c >> 12);
      buf[p++] = 0x80 | ((c >> 6) & 63);
      buf[p++] = 0x80 | (c & 63);
    }
  }
  mView.setInt32(start + 1, p - start - 5, true);
  mLen = p;
}

const INTERNED_CODE = { [SHORT_ASCII]: SHORT_ASCII_INTERNED, [ASCII]: ASCII_INTERNED, [UNICODE]: INTERNED };

// Short string values repeat under the same key across records (a thread id, a node
// type, a model name): each key keeps the first few distinct short values it had, and a
// repeat is written by reference, so Python builds (and later frees) one string, not
// thousands. A key that keeps meeting new values (an id) stops being looked at.
const SHORT_VALUE = 40; // longer string values are always written out
const VALUES_PER_KEY = 16; // distinct values remembered per key; past that, none

/** A key's marshal reference and the short values remembered under it. */
class KeyEntry {
  constructor(ref) {
    this.ref = ref;
    this.values = new Map(); // value -> its reference; null once the key stops looking
  }
}

/** Writes a reference (r) to the object flagged `ref`-th in this result. */
function writeRef(ref) {
  reserve(5);
  mBuf[mLen++] = REF;
  writeInt32(ref);
}

/** Writes an object key (the first time as an interned string kept for reference). */
function writeKey(key) {
  const entry = keyRefs.get(key);
  if (entry !== undefined) {
    writeRef(entry.ref);
    return entry;
  }
  const fresh = new KeyEntry(nextRef++);
  keyRefs.set(key, fresh);
  const at = mLen;
  writeString(key);
  mBuf[at] = INTERNED_CODE[mBuf[at]] | FLAG_REF;
  return fresh;
}

/** Writes a short string value under `entry`'s key: by reference when it repeats. */
function writeKeyedString(entry, s) {
  const values = entry.values;
  const ref = values.get(s);
  if (ref !== undefined) {
    writeRef(ref);
    return;
  }
  if (values.size >= VALUES_PER_KEY) {
    entry.values = null;
    writeString(s);
    return;
  }
  values.set(s, nextRef++);
  const at = mLen;
  writeString(s);
  mBuf[at] |= FLAG_REF;
}

function writeNumber(x) {
  reserve(32);
  if (Number.isInteger(x) && Math.abs(x) <= MAX_SAFE) {
    if (x >= -2147483648 && x <= 2147483647) {
      mBuf[mLen++] = INT;
      writeInt32(x | 0);
      return;
    }
    mBuf[mLen++] = LONG;
    let a = Math.abs(x);
    const countAt = mLen;
    mLen += 4;
    let digits = 0; // at most 4: a safe integer has 53 bits
    while (a > 0) {
      mView.setUint16(mLen, a % 32768, true); // exact: a is an integral double
      mLen += 2;
      a = Math.floor(a / 32768);
      digits++;
    }
    mView.setInt32(countAt, x < 0 ? -digits : digits, true);
    return;
  }
  if (x > MAX_SAFE || x < -MAX_SAFE) unsafeIntegers++; // (finite: every such double is integral)
  mBuf[mLen++] = BINARY_FLOAT;
  mView.setFloat64(mLen, x, true);
  mLen += 8;
}

/** Writes `v`; false when JSON cannot carry it, null when nested too deep. */
function writeValue(v, depth) {
  const type = typeof v;
  if (type === "string") writeString(v);
  else if (type === "number") {
    if (!Number.isFinite(v)) return false;
    writeNumber(v);
  } else if (type === "boolean" || v === null) {
    reserve(1);
    mBuf[mLen++] = v === null ? NONE : v ? TRUE : FALSE;
  } else if (type !== "object") return false; // undefined, bigint, function, symbol
  else if (depth > MAX_DEPTH) return null;
  else if (Array.isArray(v)) {
    reserve(5);
    mBuf[mLen++] = LIST;
    writeInt32(v.length);
    for (let i = 0; i < v.length; i++) {
      const ok = writeValue(v[i], depth + 1);
      if (ok !== true) return ok;
    }
  } else {
    const proto = getPrototypeOf(v);
    if (proto !== OBJECT && proto !== null) return false; // Date, Blob, typed arrays, Map...
    reserve(1);
    mBuf[mLen++] = DICT;
    for (const key in v) {
      const entry = writeKey(key);
      const item = v[key];
      if (typeof item === "string" && item.length <= SHORT_VALUE && entry.values !== null) {
        writeKeyedString(entry, item);
        continue;
      }
      const ok = writeValue(item, depth + 1);
      if (ok !== true) return ok;
    }
    reserve(1);
    mBuf[mLen++] = NULL;
  }
  return true;
}

// The buffer is reused. Growing a fresh one to a large result's size (doubling from
// 64 KiB to 8 MiB for 10,000 nodes) took about a third of the writer's time in Chromium,
// measured: the copies and the new allocations, which also bring V8's collector on. A
// large buffer is kept while large results keep coming, and dropped after KEEP_MS
// without one; one larger than KEEP_AT_MOST is never kept.
const KEEP_MS = 30_000;
const KEEP_AT_MOST = 1 << 25;
let lastLarge = 0; // Date.now() of the last result that needed the large buffer
let releaseTimer = null;

function releaseIdle() {
  const idle = Date.now() - lastLarge;
  if (idle < KEEP_MS) {
    releaseTimer = setTimeout(releaseIdle, KEEP_MS - idle);
    return;
  }
  releaseTimer = null;
  useBuffer(new Uint8Array(SMALL_BUFFER));
}

/**
 * Marshal bytes of a plain value, false when JSON cannot carry it, null when too deep.
 *
 * The bytes are a view of the writer's buffer: they are valid until the next call,
 * so the caller hands them on at once (Python copies them in its success handler).
 */
export function marshalValue(value) {
  mLen = 0;
  nextRef = 0;
  unsafeIntegers = 0;
  if (keyRefs.size > 0) keyRefs = new Map();
  const ok = writeValue(value, 0);
  const out = ok === true ? mBuf.subarray(0, mLen) : ok;
  if (mBuf.length > SMALL_BUFFER * 16) {
    if (mBuf.length > KEEP_AT_MOST) {
      useBuffer(new Uint8Array(SMALL_BUFFER)); // `out` keeps the old one alive meanwhile
    } else {
      lastLarge = Date.now();
      if (releaseTimer === null) releaseTimer = setTimeout(releaseIdle, KEEP_MS);
    }
  }
  return out;
}
