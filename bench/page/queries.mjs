// Query workloads of Dexie's where-clause vocabulary: where_mix and or_distinct.
//
// 10,000 skills records whose names mix cases ("Lorem ipsum", "LOREM dolor", ...). The
// Python side (bench/page/workloads.py) runs the same queries through panelot.idb. The
// check is order-free (sorted ids per query), so the raw IndexedDB implementation may
// get the same records the plain way: read everything, filter in JS. The names are
// ASCII, where lower-casing and Dexie's case-insensitive walk agree.
import { int, pick, uuid } from "./data.mjs";

const WORDS = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod".split(" ");
const BASE_TS = 1_700_000_000_000;

function casing(rng, word) {
  const r = rng();
  if (r < 0.4) return word;
  if (r < 0.6) return word.toUpperCase();
  if (r < 0.9) return word[0].toUpperCase() + word.slice(1);
  return [...word].map((c) => (rng() < 0.5 ? c.toUpperCase() : c)).join("");
}

function makeSkills(rng, size) {
  const skills = [];
  for (let i = 0; i < size; i++) {
    skills.push({
      id: uuid(rng),
      name: `${casing(rng, pick(rng, WORDS))} ${casing(rng, pick(rng, WORDS))} ${i % 97}`,
      enabled: int(rng, 0, 1),
      sourceRef: `src-${int(rng, 1, 40)}`,
      updatedAt: BASE_TS + i * 1000,
    });
  }
  return skills;
}

function data(size, rng) {
  const skills = makeSkills(rng, size);
  const names = skills.map((s) => s.name);
  const ids = Array.from({ length: 50 }, (_, i) => skills[(i * 197) % size].id);
  return {
    seed: { skills },
    args: {
      prefix: "do",
      exact: names[17].toLowerCase(),
      anyOf: [names[3].toUpperCase(), names[500 % size].toLowerCase(), "nothing here"],
      startsWithAnyOf: ["Lorem", "DO", "sit"],
      ranges: [["AMET", "Amet"], ["do", "dolor"], ["sed", "sit"]],
      ids,
      notEqual: names[9],
      noneOf: [names[1], names[2], names[4]],
      orSource: "src-7",
    },
  };
}

const sortedIds = (rows) => rows.map((r) => r.id).sort();
const lower = (s) => s.toLowerCase();

/** Dexie: the fixed mix of clauses, each read whole (or counted). */
async function dexieMix(db, a) {
  const w = (i) => db.skills.where(i);
  return [
    await w("name").startsWithIgnoreCase(a.prefix).toArray(),
    await w("name").equalsIgnoreCase(a.exact).toArray(),
    await w("name").anyOfIgnoreCase(a.anyOf).toArray(),
    await w("name").startsWithAnyOf(a.startsWithAnyOf).toArray(),
    await w("name").inAnyRange(a.ranges).toArray(),
    await w("id").anyOf(a.ids).toArray(),
    await w("name").notEqual(a.notEqual).limit(200).toArray(),
    await w("name").noneOf(a.noneOf).count(),
    await w("sourceRef").startsWithAnyOfIgnoreCase(["SRC-1", "src-3"]).count(),
  ];
}

/** Plain IndexedDB: every record read once, each clause applied in JS. */
/** Every skill, in the order of `index` (or of the primary key). */
function readAll(db, index) {
  return new Promise((ok, fail) => {
    const store = db.transaction("skills", "readonly").objectStore("skills");
    const req = (index ? store.index(index) : store).getAll();
    req.onsuccess = () => ok(req.result);
    req.onerror = () => fail(req.error);
  });
}

async function rawMix(db, a) {
  const all = await readAll(db, "name");
  const inRanges = (t) => a.ranges.some(([lo, hi]) => t >= lo && t < hi);  // JS string order
  const lowAny = a.anyOf.map(lower);
  return [
    all.filter((s) => lower(s.name).startsWith(a.prefix)),
    all.filter((s) => lower(s.name) === a.exact),
    all.filter((s) => lowAny.includes(lower(s.name))),
    all.filter((s) => a.startsWithAnyOf.some((p) => s.name.startsWith(p))),
    all.filter((s) => inRanges(s.name)),
    all.filter((s) => a.ids.includes(s.id)),
    all.filter((s) => s.name !== a.notEqual).slice(0, 200),
    all.filter((s) => !a.noneOf.includes(s.name)).length,
    all.filter((s) => ["src-1", "src-3"].some((p) => lower(s.sourceRef).startsWith(p))).length,
  ];
}

/** What every implementation must agree on: counts, and the ids of each result sorted. */
export function mixCheck(results) {
  return results.map((r) => (typeof r === "number" ? r : sortedIds(r)));
}

async function dexieOr(db, a) {
  return db.skills
    .where("name")
    .startsWithIgnoreCase(a.prefix)
    .or("sourceRef")
    .equals(a.orSource)
    .or("id")
    .anyOf(a.ids)
    .or("name")
    .startsWithAnyOf(a.startsWithAnyOf)
    .distinct()
    .toArray();
}

async function rawOr(db, a) {
  const all = await readAll(db, null);
  return all.filter(
    (s) =>
      lower(s.name).startsWith(a.prefix) ||
      s.sourceRef === a.orSource ||
      a.ids.includes(s.id) ||
      a.startsWithAnyOf.some((p) => s.name.startsWith(p)),
  );
}

export const QUERY_WORKLOADS = [
  {
    name: "where_mix",
    unit: "records",
    sizes: { full: 10_000, quick: 400 },
    data,
    dexie: { run: dexieMix, check: (db, args, out) => mixCheck(out) },
    raw: { run: rawMix, check: (db, args, out) => mixCheck(out) },
  },
  {
    name: "or_distinct",
    unit: "records",
    sizes: { full: 10_000, quick: 400 },
    data,
    dexie: { run: dexieOr, check: (db, args, out) => sortedIds(out) },
    raw: { run: rawOr, check: (db, args, out) => sortedIds(out) },
  },
];


