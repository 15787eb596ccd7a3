// A CouchDB-compatible server for the sync tests: express-pouchdb over PouchDB's
// in-memory adapter, on 127.0.0.1 and a free port. It prints one line,
// `{"port": N}`, once it listens, and serves until it is killed.
//
// Usage: node couch_server.cjs [user password]   (or COUCH_USER / COUCH_PASSWORD)
// With a user, every request but CORS preflights needs `Authorization: Basic` with
// that user and password (a 401 otherwise). CORS is permissive so the plain-page
// harness, on another origin, can fetch.
//
// Faults, for the sync fault cases (tests/behavior/sync/cases_faults.py): an admin
// route, open without auth and never itself faulted.
//   POST   /_panelot_fault {path, method?, kind, times?, after?, status?, body?, raw?, bytes?}
//          adds a fault: the requests whose `METHOD /url` matches the regular expression
//          `path` (and `method`, when given) skip `after` matches (default 0), then the
//          next `times` (default 1) get `kind`:
//            "500" | "401"  that status with a CouchDB error body;
//            "drop"         the connection closed, no answer;
//            "cut"          the real answer, its headers (with the full Content-Length)
//                           and only the first half of its body, then the connection closed;
//            "slow"         no answer until the client gives up (closes the connection);
//            "drip"         200 and a body of one space every 100 ms, until the client
//                           gives up (each read is quick: only a deadline on the whole
//                           call ends it);
//            "body"         `status` (default 200) with the JSON `body`, or the text `raw`;
//            "big"          200 with a JSON object of `bytes` bytes (a long string field).
//   GET    /_panelot_fault  {faults: [...left...], hits: N} (N: faults served so far)
//   DELETE /_panelot_fault  clears every fault (the hit count stays).
//   GET    /_panelot_polls  {open: {db: N}}: the `feed=longpoll` requests held now, by
//          database (one whose client went away no longer counts): a test sees one end.
// CORS preflights are never faulted.
"use strict";

const express = require("express");
const PouchDB = require("pouchdb-core")
  .plugin(require("pouchdb-adapter-memory"))
  .plugin(require("pouchdb-adapter-http"))
  .plugin(require("pouchdb-mapreduce"))
  .plugin(require("pouchdb-replication"));

const user = process.argv[2] ?? process.env.COUCH_USER ?? "";
const password = process.argv[3] ?? process.env.COUCH_PASSWORD ?? "";

const app = express();

app.use((req, res, next) => {
  const origin = req.headers.origin;
  if (origin) {
    res.setHeader("Access-Control-Allow-Origin", origin);
    res.setHeader("Access-Control-Allow-Credentials", "true");
    res.setHeader("Vary", "Origin");
  }
  if (req.method === "OPTIONS") {
    res.setHeader("Access-Control-Allow-Methods", "GET, PUT, POST, DELETE, HEAD, OPTIONS");
    res.setHeader(
      "Access-Control-Allow-Headers",
      req.headers["access-control-request-headers"] ?? "Content-Type, Authorization",
    );
    res.setHeader("Access-Control-Max-Age", "600");
    res.status(204).end();
    return;
  }
  next();
});

let faults = [];
let hits = 0;
app.post("/_panelot_fault", express.json({ limit: "64mb" }), (req, res) => {
  const fault = { after: 0, times: 1, ...req.body };
  new RegExp(fault.path); // a bad pattern is a 500 here, not later
  faults.push(fault);
  res.json({ ok: true, faults: faults.length });
});
app.get("/_panelot_fault", (req, res) => res.json({ faults, hits }));
app.delete("/_panelot_fault", (req, res) => {
  faults = [];
  res.json({ ok: true, hits });
});

function cut(res) {
  // Holds the real answer's body, then sends its headers and half of it and hangs up.
  const parts = [];
  const write = res.write.bind(res);
  res.write = (chunk, encoding) => {
    if (chunk) parts.push(Buffer.from(chunk, typeof encoding === "string" ? encoding : undefined));
    return true;
  };
  res.end = (chunk, encoding) => {
    if (chunk && typeof chunk !== "function") {
      parts.push(Buffer.from(chunk, typeof encoding === "string" ? encoding : undefined));
    }
    const whole = Buffer.concat(parts);
    if (!res.headersSent) {
      res.removeHeader("Transfer-Encoding");
      res.setHeader("Content-Length", String(whole.length));
    }
    write(whole.subarray(0, Math.floor(whole.length / 2)), () => res.socket?.destroy());
    return res;
  };
}

app.use((req, res, next) => {
  const line = `${req.method} ${req.originalUrl}`;
  const fault = faults.find(
    (f) => new RegExp(f.path).test(line) && (!f.method || f.method === req.method),
  );
  if (!fault) {
    next();
    return;
  }
  if (fault.after > 0) {
    fault.after -= 1;
    next();
    return;
  }
  fault.times -= 1;
  if (fault.times <= 0) faults = faults.filter((f) => f !== fault);
  hits += 1;
  switch (fault.kind) {
    case "500":
      res.status(500).json({ error: "internal_server_error", reason: "injected fault" });
      return;
    case "401":
      res.status(401).json({ error: "unauthorized", reason: "Name or password is incorrect." });
      return;
    case "drop":
      req.socket.destroy();
      return;
    case "slow":
      return; // the client's timeout closes the connection
    case "drip": {
      res.status(200).type("application/json");
      res.write(" ");
      const timer = setInterval(() => res.write(" "), 100);
      req.on("close", () => clearInterval(timer));
      res.on("close", () => clearInterval(timer));
      return;
    }
    case "body":
      if (typeof fault.raw === "string") {
        res.status(fault.status ?? 200).type("application/json").send(fault.raw);
      } else {
        res.status(fault.status ?? 200).json(fault.body);
      }
      return;
    case "big": {
      const size = Math.max(Number(fault.bytes) || 0, 16);
      const text = `{"pad":"${"x".repeat(size - 10)}"}`;
      res.status(200).type("application/json").send(text);
      return;
    }
    case "cut":
      cut(res);
      next();
      return;
    default:
      res.status(400).json({ error: "bad_fault", reason: String(fault.kind) });
  }
});

app.use((req, res, next) => {
  if (user) {
    const expected = "Basic " + Buffer.from(`${user}:${password}`).toString("base64");
    if (req.headers.authorization !== expected) {
      res.status(401).json({ error: "unauthorized", reason: "Name or password is incorrect." });
      return;
    }
  }
  next();
});

// express-pouchdb ignores a long-poll's `timeout` (it sends a heartbeat every 6 s and
// holds the request until a change): this answers `feed=longpoll` as CouchDB does, with
// the first change after `since`, or no change once `timeout` ms have passed.
const Memory = PouchDB.defaults({ adapter: "memory" });
const openPolls = {};
app.get("/_panelot_polls", (req, res) => res.json({ open: openPolls }));
app.get("/:db/_changes", (req, res, next) => {
  if (req.query.feed !== "longpoll") {
    next();
    return;
  }
  const db = new Memory(req.params.db);
  const since = req.query.since ?? 0;
  const deadline = Date.now() + Math.min(Number(req.query.timeout ?? 60000) || 0, 60000);
  let gone = false;
  const name = req.params.db;
  openPolls[name] = (openPolls[name] ?? 0) + 1;
  const ended = () => {
    if (!gone) openPolls[name] -= 1;
    gone = true;
  };
  req.on("close", ended);
  res.on("finish", ended);
  const poll = () => {
    if (gone) return;
    db.changes({ since, limit: Number(req.query.limit ?? 1) || 1, style: "all_docs" }).then(
      (answer) => {
        if (gone) return;
        if (answer.results.length || Date.now() >= deadline) {
          res.json({ results: answer.results, last_seq: answer.last_seq });
        } else {
          setTimeout(poll, 50);
        }
      },
      (error) => {
        if (!gone) res.status(error.status ?? 500).json({ error: error.name, reason: error.message });
      },
    );
  };
  poll();
});

app.use(
  "/",
  require("express-pouchdb")(PouchDB.defaults({ adapter: "memory" }), {
    mode: "minimumForPouchDB",
    inMemoryConfig: true,
    logPath: require("os").tmpdir() + `/panelot-couch-${process.pid}.log`,
  }),
);

const server = app.listen(0, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + "\n");
});
