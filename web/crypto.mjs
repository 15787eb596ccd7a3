// Credential encryption plumbing, registered into Pyodide as `panelot_crypto`.
// AES-GCM (256-bit) under ONE non-extractable CryptoKey, generated on first use and
// kept (structured-cloned) in its own IndexedDB database `panelot_keys`, object store
// `keys`, out-of-line key "credentials-aes-gcm-v1". It is separate from panelot_v1 so
// that Dexie's schema of panelot_v1 is never touched. The key can encrypt and decrypt
// but can never be exported (extractable: false). Python keeps all credential logic;
// these functions only move bytes: base64 in and out, the credential reference bound
// as AES-GCM additional data so a ciphertext cannot be replayed under another reference.

const DB_NAME = "panelot_keys";
const STORE = "keys";
export const KEY_ID = "credentials-aes-gcm-v1";

let keyPromise = null;

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = (event) => {
      event.preventDefault();
      reject(req.error);
    };
  });
}

function openKeys() {
  const req = indexedDB.open(DB_NAME, 1);
  req.onupgradeneeded = () => req.result.createObjectStore(STORE);
  return request(req);
}

function inStore(db, mode, issue) {
  const tx = db.transaction(STORE, mode);
  const done = request(issue(tx.objectStore(STORE)));
  return done.then((value) => new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve(value);
    tx.onabort = () => reject(tx.error);
  }));
}

async function loadOrCreate() {
  const db = await openKeys();
  try {
    const existing = await inStore(db, "readonly", (s) => s.get(KEY_ID));
    if (existing) return existing;
    const key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, [
      "encrypt",
      "decrypt",
    ]);
    try {
      await inStore(db, "readwrite", (s) => s.add(key, KEY_ID));
      return key;
    } catch (error) {
      if (error?.name !== "ConstraintError") throw error;
      return await inStore(db, "readonly", (s) => s.get(KEY_ID)); // another context won
    }
  } finally {
    db.close();
  }
}

function theKey() {
  keyPromise ??= loadOrCreate().catch((error) => {
    keyPromise = null;
    throw error;
  });
  return keyPromise;
}

const toB64 = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes)));
const fromB64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

/** Encrypt `plaintext` bound to `ref`; resolves with JSON {keyId, iv, data} (base64). */
export async function encrypt(plaintext, ref) {
  const key = await theKey();
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(ref) },
    key,
    new TextEncoder().encode(plaintext),
  );
  return JSON.stringify({ keyId: KEY_ID, iv: toB64(iv), data: toB64(data) });
}

/** Decrypt what `encrypt` made for `ref`; rejects (OperationError) if anything changed. */
export async function decrypt(iv, data, ref) {
  const key = await theKey();
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromB64(iv), additionalData: new TextEncoder().encode(ref) },
    key,
    fromB64(data),
  );
  return new TextDecoder().decode(plain);
}

/** JSON {keyId, extractable, algorithm, usages} of the key (never its material). */
export async function keyInfo() {
  const key = await theKey();
  return JSON.stringify({
    keyId: KEY_ID,
    extractable: key.extractable,
    algorithm: key.algorithm.name,
    usages: key.usages,
  });
}
