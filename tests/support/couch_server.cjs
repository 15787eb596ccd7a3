// A CouchDB-compatible server for the sync tests: express-pouchdb over PouchDB's
// in-memory adapter, on 127.0.0.1 and a free port. It prints one line,
// `{"port": N}`, once it listens, and serves until it is killed.
//
// Usage: node couch_server.cjs [user password]   (or COUCH_USER / COUCH_PASSWORD)
// With a user, every request but CORS preflights needs `Authorization: Basic` with
// that user and password (a 401 otherwise). CORS is permissive so the plain-page
// harness, on another origin, can fetch.
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
app.get("/:db/_changes", (req, res, next) => {
  if (req.query.feed !== "longpoll") {
    next();
    return;
  }
  const db = new Memory(req.params.db);
  const since = req.query.since ?? 0;
  const deadline = Date.now() + Math.min(Number(req.query.timeout ?? 60000) || 0, 60000);
  let gone = false;
  req.on("close", () => {
    gone = true;
  });
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
