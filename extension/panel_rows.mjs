// A row of the conversation list, drawn the same way by the live list (sidepanel.mjs) and
// by the first paint before the store is ready (sidepanel_paint.mjs).
import { h, ago } from "./panel_dom.mjs";
import { icon } from "./panel_icons.mjs";

/** `value` as JSON with every object's keys sorted: the same for equal records. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * What the row of thread `t` shows (`current`: the open one), as a string: a row whose
 * key is unchanged is kept as it is. The whole record, whatever its keys' order (a
 * record read from IndexedDB by the first paint and the same one from `thread.list`
 * give the same key), so the row's buttons, which act on the `t` they were drawn with,
 * never act on a stale one.
 */
export function rowKey(t, current) {
  return canonical([t, Boolean(current)]);
}

/**
 * The list's row of thread `t` (a `thread.list` row): its title, time, folder, the turns
 * its branch shows, tags; `current` marks the open conversation; `actions` are what its
 * buttons do (`open`, `patch`, `edit`, `remove`, each given `t`).
 */
export function threadItem(t, current, actions) {
  // What the current branch shows (`shown`, counted in Python); absent: not known.
  const turns = t.shown?.turns;
  const parts = [
    h("span", { class: "thread-time", text: ago(t.updatedAt) }),
    t.folderId ? h("span", { class: "folder" }, icon("folder", { size: 11 }), ` ${t.folderId}`) : null,
    // No leaf but turns written: retention removed the messages and kept a summary.
    t.leafId === null && t.stats?.turns
      ? h("span", { class: "thread-turns", text: "summarized" })
      : turns
        ? h("span", { class: "thread-turns", text: `${turns} turn${turns === 1 ? "" : "s"}` })
        : null,
    t.tags?.length ? h("span", { class: "tags" }, (t.tags ?? []).map((tag) => h("span", { class: "tag", text: tag }))) : null,
    t.archived ? h("span", { text: "archived" }) : null,
  ].filter(Boolean);
  const sub = h(
    "span",
    { class: "thread-sub" },
    t.pinned ? h("span", { class: "pin-mark", title: "Pinned" }, icon("star", { filled: true, size: 11 })) : null,
    parts.flatMap((part, i) => (i ? [" · ", part] : [part])),
  );
  const act = (name, title, fn, filled = false) =>
    h("button", {
      class: "icon",
      type: "button",
      title,
      attrs: { "aria-label": title },
      dataset: { action: title.toLowerCase().split(" ")[0] },
      on: {
        click: (event) => {
          event.stopPropagation();
          fn();
        },
      },
    }, icon(name, { filled, size: 15 }));
  return h(
    "li",
    {
      class: `thread-item${current ? " current" : ""}`,
      dataset: { threadId: t.id },
    },
    h(
      "button",
      { class: "thread-open", type: "button", on: { click: () => actions.open(t) } },
      h("span", { class: "thread-title", text: t.title || "Untitled" }),
      sub,
    ),
    h(
      "span",
      { class: "thread-actions" },
      act("star", t.pinned ? "Unpin" : "Pin", () => actions.patch(t, { pinned: !t.pinned }), t.pinned),
      act("edit", "Rename", () => actions.edit(t)),
      act(t.archived ? "unarchive" : "archive", t.archived ? "Unarchive" : "Archive", () =>
        actions.patch(t, { archived: !t.archived }),
      ),
      act("trash", "Delete", () => actions.remove(t)),
    ),
  );
}
