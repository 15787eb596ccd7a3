// The API key of a provider request. Credentials live encrypted in chrome.storage.local
// and no query returns a secret, so the key comes from `panelot.revealSecret` (the one
// call besides send/query the panel makes); callers hold it only for the one request.

/** Decrypt the secret of a credential reference ("cred:…"): `panelot.revealSecret`. */
export async function revealKey(ref) {
  return window.panelot.revealSecret(ref);
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
