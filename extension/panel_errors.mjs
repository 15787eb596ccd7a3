// Errors in words for the user. explainError turns anything the panel can catch into
// `{text, detail}`: `text` is a short plain sentence (what happened, what to do), never a
// type name, an id or a raw list; `detail` is the technical message, for the "Details"
// disclosure of panel_ui.mjs errorView and for bug reports.

const STORAGE_FULL =
  "Storage is full, so nothing was saved. Free space (Settings → Clean up attachments, or delete old conversations), then retry.";
const STORAGE_FAILED = "Storage failed, so the action did not complete. Try again; if it keeps failing, reload the panel.";
const GENERIC = "Something went wrong, so the action did not complete.";
const NETWORK = "The network request failed: check the connection, then try again.";
const MAX_DETAIL = 4000;

/** NotFoundError by the (last) field it names. */
const GONE = {
  threadId: "This conversation no longer exists.",
  nodeId: "This message no longer exists.",
  parentId: "This message no longer exists.",
  leafId: "This message no longer exists.",
  userNodeId: "This message no longer exists.",
  attachmentId: "This attachment is no longer stored; it may have been cleaned up to save space.",
  ref: "The stored API key is missing: enter it again in Settings.",
  runId: "This run no longer exists.",
};

/** ValidationError and DataError by the (last) field they name. */
const REFUSED = {
  title: "The title was not accepted.",
  tags: "The tags were not accepted.",
  folderId: "The folder name was not accepted.",
  secret: "The API key was not accepted.",
  baseUrl: "The base URL was not accepted.",
  days: "The number of days was not accepted.",
  content: "The message was not accepted.",
  text: "The message was not accepted.",
  data: "The file was not accepted.",
};

const STORAGE_NAMES = [
  "UnknownError",
  "TransactionInactiveError",
  "PrematureCommitError",
  "InvalidStateError",
  "DatabaseClosedError",
  "OpenFailedError",
  "VersionError",
  "ConstraintError",
  "DataCloneError",
  "ReadOnlyError",
  "InvalidTableError",
  "SchemaError",
  "BulkError",
  "AbortError",
];

/** The names in a field path, innermost first: "payload.tags[3]" → ["tags", "payload"]. */
function fieldNames(field) {
  return String(field ?? "")
    .split(".")
    .map((part) => part.replace(/\[\d+\]$/, ""))
    .filter(Boolean)
    .reverse();
}

function byField(field, table) {
  const name = fieldNames(field).find((n) => Object.hasOwn(table, n));
  return name ? table[name] : null;
}

function refused(field) {
  return byField(field, REFUSED) ?? "Some of the input was not accepted.";
}

/** Text for a runtime error (`{name, message, field}`), by its name; null if unknown. */
const BY_NAME = {
  QuotaExceededError: () => STORAGE_FULL,
  NotFoundError: (e) => byField(e.field, GONE) ?? "This item no longer exists; it may have been deleted elsewhere.",
  ValidationError: (e) => refused(e.field),
  DataError: (e) => refused(e.field),
  ImportError: () => "This file cannot be imported: it is not a valid Panelot export. Nothing was imported.",
  AdmissionError: () => "This conversation is being deleted, so nothing more can be added to it.",
  ConflictError: () => "This request clashed with an earlier one, so it was not run. Try again.",
  UnknownCommandError: () => "This version of Panelot cannot do that.",
  TransitionError: () => "This cannot be done in the current state.",
  AlreadyResolvedError: () => "This was already handled, so nothing changed.",
};

/** " It said: “…”" with the provider's own words, shortened and ending in punctuation. */
function quoted(said) {
  const short = said.length > 200 ? `${said.slice(0, 200)}…` : said;
  return ` It said: “${/[.!?…]$/.test(short) ? short : `${short}.`}”`;
}

function httpText(status) {
  if (status === 401) return `The provider refused the request (HTTP 401): check the API key in Settings.`;
  if (status === 403) return `The provider refused the request (HTTP 403): check the API key and its access in Settings.`;
  if (status === 404) return `The provider does not know this address or model (HTTP 404): check the base URL and the model in Settings.`;
  if (status === 429) return `The provider is limiting requests (HTTP 429): wait a moment, then retry.`;
  if ([408, 504, 524].includes(status)) return `The provider timed out (HTTP ${status}). Try again later.`;
  if (status >= 500) return `The provider had a problem (HTTP ${status}). Try again later.`;
  return `The provider refused the request (HTTP ${status}).`;
}

/** Text for a ProviderError (panel_provider.mjs), by its kind. */
function providerText(error) {
  const said = error.providerMessage ? String(error.providerMessage) : "";
  switch (error.kind) {
    case "http":
      return httpText(error.status) + (said ? quoted(said) : "");
    case "unreachable":
      return `${error.message} Check the base URL in Settings and the network connection.`;
    case "timeout-first-byte":
      return `${error.message} Check the provider in Settings, or try again later.`;
    case "timeout-total":
      return `${error.message} Try again.`;
    case "provider":
      return `The provider reported an error.${said ? quoted(said) : ""}`;
    case "stream":
      return `${error.message} Try again.`;
    default:
      return error.message || GENERIC;
  }
}

function describeTechnically(error) {
  if (error === null || error === undefined) return "";
  if (typeof error !== "object") return String(error);
  const name = error.name ?? "Error";
  const where = error.field ? ` [${error.field}]` : "";
  const kind = error.kind ? ` (${error.kind}${error.status ? ` ${error.status}` : ""})` : "";
  const message = error.detail ?? error.message ?? JSON.stringify(error);
  return `${name}${kind}${where}: ${message}`;
}

function plainText(error) {
  if (!error || typeof error !== "object") return GENERIC;
  if (error.name === "ProviderError") return providerText(error);
  if (error instanceof DOMException) {
    if (error.name === "AbortError") return "Stopped.";
    if (error.name === "TimeoutError") return "The request took too long, so it was stopped.";
    if (error.name === "NetworkError") return NETWORK;
  }
  if (error instanceof TypeError && /fetch|network/i.test(error.message ?? "")) return NETWORK;
  const named = BY_NAME[error.name];
  if (named) return named(error);
  if (STORAGE_NAMES.includes(error.name)) return STORAGE_FAILED;
  return GENERIC;
}

/**
 * `{text, detail}` for any error the panel meets: a StoreError or a runtime error
 * object (`{name, message, field}`), a ProviderError, a DOMException (a Stop, a timeout,
 * a quota error), a network TypeError, or anything else thrown.
 */
export function explainError(error) {
  const detail = describeTechnically(error);
  return {
    text: plainText(error),
    detail: detail.length > MAX_DETAIL ? `${detail.slice(0, MAX_DETAIL)}…` : detail,
  };
}
