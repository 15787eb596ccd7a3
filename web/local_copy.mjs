// A copy of the runtime's large start-up file (the memory snapshot) in the origin's Cache
// Storage, read instead of the extension's own file from the second start on.
//
// Chromium serves an extension's files slowly: on the 2-core test machine, reading the
// 19.6 MB snapshot from chrome-extension:// took ~230 ms under load, from Cache Storage
// ~85 ms (docs/performance.md, start-up). The copy is keyed by the file's SHA-256 (from
// the build's manifest), so a new build never reads an old copy: the first start of a
// build reads the file and stores it; older copies are deleted then. Cache Storage
// refuses chrome-extension:// URLs as keys, so the key is an https URL under the reserved
// `.invalid` domain, never fetched. Any failure of the cache (absent API, quota, a broken
// entry) falls back to the file: the copy only ever saves time. The extension's service
// worker also stores the copy when the extension is installed or updated (prepareCopy),
// so that even the first panel of a build reads it.

/** The cache that holds the copies. */
export const CACHE_NAME = "panelot-runtime";

const KEY_ROOT = "https://panelot.invalid/runtime/";

/** The cache key of the file `name` whose SHA-256 is `sha256`. */
export function copyKey(name, sha256) {
  return `${KEY_ROOT}${sha256}/${name}`;
}

async function openCache() {
  try {
    return globalThis.caches ? await caches.open(CACHE_NAME) : null;
  } catch {
    return null; // e.g. storage disabled: no copy, the file is read
  }
}

/**
 * The local copy of the file `name` of SHA-256 `sha256` as a Response (its body not yet
 * read), or null when there is none; `drop()` removes it. For a file its reader streams,
 * such as the wasm Pyodide compiles.
 */
export async function matchCopy(name, sha256) {
  const cache = sha256 ? await openCache() : null;
  if (!cache) return null;
  const key = copyKey(name, sha256);
  try {
    const hit = await cache.match(key);
    return hit ? { response: hit, drop: () => cache.delete(key).catch(() => false) } : null;
  } catch {
    return null;
  }
}

/**
 * The bytes of the file at `url` (named `name`, of SHA-256 `sha256`): from the local copy
 * when there is one, else from `url`. Resolves with `{buffer, source, keep, drop}`:
 * `source` is "copy" or "file"; `keep()` stores the bytes read from the file as the copy,
 * once, after removing the copies of other builds (call it when the start-up no longer
 * needs the machine: it writes ~20 MB; it never rejects); `drop()` removes a copy that
 * proved broken.
 */
export async function readWithCopy(url, name, sha256) {
  const cache = sha256 ? await openCache() : null;
  const key = sha256 ? copyKey(name, sha256) : null;
  if (cache) {
    try {
      const hit = await cache.match(key);
      if (hit) {
        return {
          buffer: await hit.arrayBuffer(),
          source: "copy",
          keep: async () => {},
          drop: () => cache.delete(key).catch(() => false),
        };
      }
    } catch {
      // an unreadable copy: read the file
    }
  }
  let kept = await readFile(url, name);
  const keep = async () => {
    const bytes = kept;
    kept = null; // once: the ~20 MB are not held after
    if (cache && bytes !== null) await store(cache, key, name, bytes);
  };
  return { buffer: kept, source: "file", keep, drop: async () => false };
}

async function readFile(url, name) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${name}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

/**
 * A copy is only a cache: it is stored only while the origin's free quota is at least
 * this many times its size, so it never takes the room the data needs (an extension
 * holding `unlimitedStorage` has gigabytes; a page of a small quota keeps no copy).
 */
export const ROOM = 4;

async function roomFor(size) {
  try {
    const { quota, usage } = await navigator.storage.estimate();
    return !(quota >= 0 && usage >= 0) || quota - usage >= ROOM * size;
  } catch {
    return true; // no estimate: the put itself fails when there is no room
  }
}

/**
 * Store `bytes` as the copy under `key`, after removing other builds' copies of `name`;
 * true when it was stored.
 */
async function store(cache, key, name, bytes) {
  try {
    for (const old of await cache.keys()) {
      if (old.url !== key && old.url.endsWith(`/${name}`)) await cache.delete(old);
    }
    if (!(await roomFor(bytes.byteLength))) return false;
    await cache.put(key, new Response(bytes)); // the Response copies the bytes
    return true;
  } catch {
    return false; // no room, or storage cleared meanwhile: the next start reads the file
  }
}

/** The SHA-256 of `bytes` (an ArrayBuffer or a view) as lowercase hex, by WebCrypto. */
export async function sha256Hex(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  let hex = "";
  for (const byte of digest) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/**
 * Store the file at `url` (named `name`, of SHA-256 `sha256`) as the local copy ahead of
 * any start, unless this build's copy is there. Only bytes whose SHA-256 is `sha256` are
 * stored (nothing has restored them yet). Resolves with what it did: "kept", "present",
 * "mismatch" (the file's digest is not `sha256`: nothing stored), "no room" (see ROOM, or
 * the cache refused it), "no cache" (no Cache Storage, or no hash to key the copy by) or
 * "failed: <reason>"; never rejects.
 */
export async function prepareCopy(url, name, sha256) {
  const cache = sha256 ? await openCache() : null;
  if (!cache) return "no cache";
  const key = copyKey(name, sha256);
  try {
    if (await cache.match(key)) return "present"; // a Response: its body is not read
    const bytes = await readFile(url, name);
    if ((await sha256Hex(bytes)) !== sha256) return "mismatch";
    return (await store(cache, key, name, bytes)) ? "kept" : "no room";
  } catch (error) {
    return `failed: ${error?.message ?? error}`;
  }
}
