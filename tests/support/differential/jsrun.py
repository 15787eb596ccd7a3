"""The Dexie side of the differential suite: the same DSL as ``pyrun``, run on Dexie 4.4.7.

``JS_INSTALL`` defines ``window.__differential`` in the harness page (imports Dexie
from ``/vendor/dexie.mjs``); ``JS_PHASE1`` seeds the databases, runs the queries and
the write sequences, ``JS_PHASE2`` reads back what both sides stored and deletes
everything. Tagged JSON as in ``pyrun``.
"""

from __future__ import annotations

JS_INSTALL = r"""async () => {
  if (window.__differential) return true;
  const D = await import("/vendor/dexie.mjs");
  const { Dexie } = D;

  const hex = (u8) => Array.from(u8, (b) => b.toString(16).padStart(2, "0")).join("");
  const unhex = (s) => new Uint8Array(s.match(/../g)?.map((h) => parseInt(h, 16)) ?? []);

  function decode(v) {
    if (Array.isArray(v)) return v.map(decode);
    if (v !== null && typeof v === "object") {
      if ("$n" in v) return { "-0": -0, NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity }[v.$n];
      if ("$b" in v) return unhex(v.$b);
      if ("$d" in v) return new Date(v.$d);
      if ("$k" in v) return v.$k === "min" ? Dexie.minKey : Dexie.maxKey;
      if ("$op" in v) {
        if (v.$op === "replacePrefix") return D.replacePrefix(v.a, v.b);
        return D[v.$op](decode(v.v));
      }
      const out = {};
      for (const [k, x] of Object.entries(v)) out[k] = decode(x);
      return out;
    }
    return v;
  }

  function encode(v) {
    if (v === undefined || v === null) return null;
    if (typeof v === "number") {
      if (Number.isNaN(v)) return { $n: "NaN" };
      if (v === Infinity) return { $n: "Infinity" };
      if (v === -Infinity) return { $n: "-Infinity" };
      if (Object.is(v, -0)) return { $n: "-0" };
      return v;
    }
    if (typeof v === "string" || typeof v === "boolean") return v;
    if (v instanceof Uint8Array) return { $b: hex(v) };
    if (v instanceof ArrayBuffer) return { $b: hex(new Uint8Array(v)) };
    if (ArrayBuffer.isView(v)) return { $b: hex(new Uint8Array(v.buffer, v.byteOffset, v.byteLength)) };
    if (v instanceof Date) return { $d: v.getTime() };
    if (Array.isArray(v)) return v.map(encode);
    if (typeof v === "object") {
      const out = {};
      for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = encode(x);
      return out;
    }
    return { $unknown: typeof v };
  }

  const MISSING = Symbol("missing");
  function get(record, path) {
    let v = record;
    for (const part of path.split(".")) {
      if (v === null || typeof v !== "object" || Array.isArray(v) || v instanceof Date ||
          ArrayBuffer.isView(v) || !Object.prototype.hasOwnProperty.call(v, part)) return MISSING;
      v = v[part];
    }
    return v;
  }
  const num = (x) => typeof x === "number";
  function eq(a, b) {
    if (num(a) && num(b)) return a === b;
    if (typeof a === "boolean" && typeof b === "boolean") return a === b;
    if (typeof a === "string" && typeof b === "string") return a === b;
    return a === null && b === null;
  }
  function pred(p) {
    const field = p.field, op = p.op, value = decode(p.value === undefined ? null : p.value);
    return (record) => {
      const a = get(record, field);
      if (op === "exists") return a !== MISSING;
      if (a === MISSING) return false;
      switch (op) {
        case "==": return eq(a, value);
        case "!=": return !eq(a, value);
        case ">": return num(a) && num(value) && a > value;
        case "<": return num(a) && num(value) && a < value;
        case "startsWith": return typeof a === "string" && typeof value === "string" && a.startsWith(value);
        case "has": return Array.isArray(a) && a.some((x) => eq(x, value));
      }
      throw new Error("unknown predicate op " + op);
    };
  }

  function clause(where, name, args, opts) {
    if (name === "inAnyRange") return where.inAnyRange(args[0], opts ?? {});
    return where[name](...args);
  }

  function collection(db, spec) {
    const t = db.table(spec.table);
    const src = spec.source;
    let c;
    if ("where" in src) {
      if (src.where !== null && typeof src.where === "object" && !Array.isArray(src.where)) {
        c = t.where(decode(src.where));
      } else {
        c = clause(t.where(src.where), src.clause, decode(src.args), src.opts);
      }
    } else if ("orderBy" in src) {
      c = t.orderBy(src.orderBy);
    } else {
      c = t.toCollection();
    }
    for (const step of spec.chain ?? []) {
      const op = step[0];
      if (op === "reverse" || op === "distinct") c = c[op]();
      else if (op === "offset" || op === "limit") c = c[op](step[1]);
      else if (op === "filter" || op === "and") c = c[op](pred(step[1]));
      else if (op === "until") c = c.until(pred(step[1]), step[2]);
      else if (op === "or") c = clause(c.or(step[1]), step[2], decode(step[3]), step[4]);
      else throw new Error("unknown chain step " + op);
    }
    return c;
  }

  async function runQuery(db, spec) {
    if ("op" in spec) {
      const t = db.table(spec.table);
      if (spec.op === "get") return await t.get(decode(spec.key));
      if (spec.op === "bulkGet") return await t.bulkGet(decode(spec.keys));
      if (spec.op === "tcount") return await t.count();
      throw new Error("unknown table read " + spec.op);
    }
    const c = collection(db, spec);
    if (spec.run === "each") {
      const seen = [];
      await c.each((value) => { seen.push(value); });
      return seen;
    }
    if (spec.run === "sortBy") return await c.sortBy(spec.keyPath);
    return await c[spec.run]();
  }

  // Dexie's ModifyError sets no name of its own (it reads "Error"): name it by its class.
  const errorName = (e) => (e instanceof Dexie.ModifyError ? "ModifyError" : e?.name ?? "Error");
  const error = (e) => ({ error: errorName(e), message: String(e?.message ?? e).slice(0, 300) });

  async function runQueries(db, specs) {
    const out = [];
    for (const spec of specs) {
      try {
        out.push({ ok: encode(await runQuery(db, spec)) });
      } catch (e) {
        out.push(error(e));
      }
    }
    return out;
  }

  async function write(db, op) {
    if (op.op === "modify" || op.op === "delete") {
      const c = collection(db, op.query);
      if (op.op === "delete") return await c.delete();
      return await c.modify(decode(op.changes));
    }
    const t = db.table(op.table);
    switch (op.op) {
      case "put": case "add":
        return "key" in op ? await t[op.op](decode(op.value), decode(op.key)) : await t[op.op](decode(op.value));
      case "bulkPut": case "bulkAdd":
        return "keys" in op ? await t[op.op](decode(op.values), decode(op.keys)) : await t[op.op](decode(op.values));
      case "update": case "upsert":
        return await t[op.op](decode(op.key), decode(op.changes));
      case "bulkUpdate":
        return await t.bulkUpdate(op.updates.map((u) => ({ key: decode(u.key), changes: decode(u.changes) })));
      case "tdelete": return await t.delete(decode(op.key));
      case "bulkDelete": return await t.bulkDelete(decode(op.keys));
      case "clear": return await t.clear();
    }
    throw new Error("unknown write " + op.op);
  }

  const writeTable = (op) => (op.query ? op.query.table : op.table);

  async function dump(db, tables) {
    const out = {};
    for (const name of tables) {
      const c = db.table(name).toCollection();
      const keys = await c.primaryKeys();
      const values = await db.table(name).toCollection().toArray();
      out[name] = encode(keys.map((k, i) => [k, values[i]]));
    }
    return out;
  }

  function open(name, schema) {
    const db = new Dexie(name);
    db.version(1).stores(schema);
    return db;
  }

  async function seed(db, data) {
    for (const [name, rows] of Object.entries(data)) {
      const values = decode(rows.values);
      if ("keys" in rows) await db.table(name).bulkAdd(values, decode(rows.keys));
      else await db.table(name).bulkAdd(values);
    }
  }

  async function phase1({ schema, job }) {
    const out = { writes: [], ms: {} };
    let t0 = performance.now();
    let db = open(job.query_db, schema);
    try {
      await seed(db, job.data);
      out.ms.seed = performance.now() - t0;
      out.queries = await runQueries(db, job.queries);
      out.ms.queries = performance.now() - t0 - out.ms.seed;
    } finally {
      db.close();
    }
    t0 = performance.now();
    for (const [i, ops] of job.writes.entries()) {
      for (const name of [job.write_dbs[i], job.py_write_dbs[i]]) {
        db = open(name, schema);
        try { await seed(db, job.data); } finally { db.close(); }
      }
      db = open(job.write_dbs[i], schema);
      try {
        const results = [];
        for (const op of ops) {
          let r;
          try {
            r = { ok: encode(await write(db, op)) };
          } catch (e) {
            r = error(e);
          }
          r.state = await dump(db, [writeTable(op)]);
          results.push(r);
        }
        out.writes.push(results);
      } finally {
        db.close();
      }
    }
    out.ms.writes = performance.now() - t0;
    return out;
  }

  async function phase2({ schema, names, remove }) {
    const tables = Object.keys(schema);
    const out = {};
    for (const name of names) {
      const db = open(name, schema);
      try { out[name] = await dump(db, tables); } finally { db.close(); }
    }
    for (const name of remove) await Dexie.delete(name);
    return out;
  }

  // JSON text both ways: Playwright's own serialization of deep results is far slower.
  const text = (fn) => async (args) => JSON.stringify(await fn(JSON.parse(args)));
  window.__differential = { phase1: text(phase1), phase2: text(phase2), decode, encode };
  return true;
}"""

JS_PHASE1 = "(args) => window.__differential.phase1(args)"
JS_PHASE2 = "(args) => window.__differential.phase2(args)"
