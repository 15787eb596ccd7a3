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
// entry) falls back to the file: the copy only ever saves time.

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
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${name}: HTTP ${response.status}`);
  let kept = await response.arrayBuffer();
  const keep = async () => {
    const bytes = kept;
    kept = null; // once: the ~20 MB are not held after
    if (!cache || bytes === null) return;
    try {
      for (const old of await cache.keys()) {
        if (old.url !== key && old.url.endsWith(`/${name}`)) await cache.delete(old);
      }
      await cache.put(key, new Response(bytes)); // the Response copies the bytes
    } catch {
      // no room, or storage cleared meanwhile: the next start reads the file again
    }
  };
  return { buffer: kept, source: "file", keep, drop: async () => false };
}
