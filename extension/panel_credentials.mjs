// The API key of a provider request. Credentials live encrypted in chrome.storage.local
// and no query returns a secret, so the key is decrypted by the Python credentials
// service directly (the one place the panel does not go through send/query); callers
// hold it only for the one request.

/** Decrypt the secret of a credential reference ("cred:…") through Pyodide. */
export async function revealKey(ref) {
  const settings = window.panelot.py.pyimport("panelot.settings");
  const services = settings.services();
  const credentials = services.credentials;
  try {
    return String(await credentials.reveal(ref));
  } finally {
    credentials.destroy();
    services.destroy();
    settings.destroy();
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
