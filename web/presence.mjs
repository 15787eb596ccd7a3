// What the open pages show, and what a panel will reopen: the threads retention (and the
// attachment budget) must spare. Shared by the pages and the service worker.
//
// Open threads: a page holds a shared Web Lock named `panelot-open:<threadId>` while it
// shows that thread (showThread), released when it shows another or none. A page that
// goes away (closed, reloaded, crashed) loses its locks with it, so the registry never
// keeps a dead page's entry. navigator.locks.query() lists the locks every context of
// the origin holds or waits for: any panel, and the service worker, can read it.
//
// The thread to reopen: the panel reopens the conversation it showed last after a
// reload or a browser restart. It is kept in chrome.storage.local (REOPEN_KEY), which
// survives a restart (chrome.storage.session does not) and which the service worker can
// read (localStorage it cannot). One key for the whole profile, as the panel had with
// localStorage: every panel reopens the thread that was shown last in any of them. A
// plain page without chrome.storage (the web harness) keeps it in localStorage.

/** Name prefix of the Web Lock a page holds on the thread it shows. */
export const OPEN_LOCK_PREFIX = "panelot-open:";
/** chrome.storage.local key (localStorage outside the extension): the thread to reopen. */
export const REOPEN_KEY = "panelot.reopenThreadId";

const local = () => globalThis.chrome?.storage?.local ?? null;
const locks = () => globalThis.navigator?.locks ?? null;

let shown = null; // {threadId, release, granted}: this page's lock

/**
 * Hold the open-thread lock of `threadId` (null: of none), releasing the one held so far.
 * Resolves once the lock is granted (at once when nothing changed).
 */
export function showThread(threadId) {
  if ((shown?.threadId ?? null) === (threadId ?? null)) return shown?.granted ?? Promise.resolve();
  shown?.release();
  shown = null;
  const manager = locks();
  if (!threadId || !manager) return Promise.resolve();
  let release;
  let granted;
  const held = new Promise((resolve) => (release = resolve));
  const ready = new Promise((resolve) => (granted = resolve));
  manager
    .request(`${OPEN_LOCK_PREFIX}${threadId}`, { mode: "shared" }, () => {
      granted();
      return held; // kept until release(), or until the page goes away
    })
    .catch((error) => {
      console.warn("could not record the open thread", error);
      granted();
    });
  shown = { threadId, release, granted: ready };
  return ready;
}

/** Ids of the threads some context holds (or waits for) an open-thread lock on. */
export async function openThreadIds() {
  const manager = locks();
  if (!manager) return [];
  const { held = [], pending = [] } = await manager.query();
  const ids = [...held, ...pending]
    .map((lock) => lock.name ?? "")
    .filter((name) => name.startsWith(OPEN_LOCK_PREFIX))
    .map((name) => name.slice(OPEN_LOCK_PREFIX.length));
  return [...new Set(ids)];
}

/** Remember `threadId` (null: none) as the thread the panel reopens. */
export async function setReopen(threadId) {
  const store = local();
  if (store) {
    if (threadId) await store.set({ [REOPEN_KEY]: threadId });
    else await store.remove(REOPEN_KEY);
    return;
  }
  try {
    if (threadId) localStorage.setItem(REOPEN_KEY, threadId);
    else localStorage.removeItem(REOPEN_KEY);
  } catch {
    /* storage refused: the panel opens on the list next time */
  }
}

/** The thread the panel will reopen, or null. */
export async function reopenThreadId() {
  const store = local();
  let id = null;
  if (store) id = (await store.get([REOPEN_KEY]))?.[REOPEN_KEY];
  else {
    try {
      id = globalThis.localStorage?.getItem(REOPEN_KEY);
    } catch {
      id = null;
    }
  }
  return typeof id === "string" && id ? id : null;
}

/** Every thread retention must spare now: the open ones and the one to reopen, sorted. */
export async function sparedThreadIds() {
  const [open, reopen] = await Promise.all([openThreadIds(), reopenThreadId().catch(() => null)]);
  return [...new Set([...open, ...(reopen ? [reopen] : [])])].sort();
}
