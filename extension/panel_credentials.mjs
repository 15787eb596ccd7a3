// The API key of a provider request. Credentials live encrypted in chrome.storage.local
// and no query returns a secret, so the key comes from `panelot.revealSecret` (the one
// call besides send/query the panel makes); callers hold it only for the one request.
import { StoreError, q } from "./panel_store.mjs";

/**
 * Decrypt the secret of a credential reference ("cred:…"): `panelot.revealSecret`.
 * A credential that is gone rejects with a StoreError (NotFoundError on `ref`).
 */
export async function revealKey(ref) {
  try {
    return await window.panelot.revealSecret(ref);
  } catch (error) {
    throw error instanceof Error ? error : new StoreError(error);
  }
}

/**
 * The API key for a request to `provider` (`{credentialRef}`, may be null): the secret
 * of its stored credential when the build has a credential store (`credentials`), else
 * `sessionKey`, the key a build without one keeps in memory (null when there is none).
 */
export async function providerApiKey(provider, { credentials, sessionKey }) {
  if (provider?.credentialRef && credentials) return revealKey(provider.credentialRef);
  return sessionKey ?? null;
}

/**
 * Whether `provider` names a stored credential that is gone (`credential.status`): a
 * restored backup holds no keys, and another window may remove one. False when it
 * names none, the build has no credential store, or the answer cannot be had (the
 * request then says why itself).
 */
export async function keyMissing(provider, { credentials }) {
  if (!provider?.credentialRef || !credentials) return false;
  try {
    return !(await q("credential.status", { ref: provider.credentialRef })).exists;
  } catch (error) {
    console.warn("credential.status failed", error);
    return false;
  }
}
