#!/usr/bin/env node
// End-to-end check of hilrun's console tools under smon's names
// (serial_send, serial_snapshot, console_release, console_hold, console_list,
// log_search) and the Rust serial server's serial_open arguments, through
// the official MCP TypeScript SDK client, against the virtual board.
//
// Usage:
//   node seed_client.mjs stdio HILRUN_BINARY   spawns `HILRUN_BINARY mcp --sim`
//   node seed_client.mjs http URL TOKEN        talks to a running `hilrun mcp --sim --http ... --token TOKEN`
//
// Prints one JSON summary line on standard output, as client.mjs does.

import fs from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const TIMEOUT_MS = Number(process.env.HILRUN_E2E_TIMEOUT_MS || 50000);
const checks = [];
let mode = "";

class CheckError extends Error {}

function log(msg) {
  process.stderr.write(`hilrun-mcp-seed-e2e: ${msg}\n`);
}

function pass(name, detail) {
  checks.push(name);
  log(`ok   ${name}${detail ? ` (${detail})` : ""}`);
}

function check(cond, msg) {
  if (!cond) throw new CheckError(msg);
}

function short(v, n = 600) {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s && s.length > n ? `${s.slice(0, n)}...` : s;
}

function textOf(result) {
  return (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

function finish(ok, extra) {
  process.stdout.write(`${JSON.stringify({ ok, transport: mode, checks, ...extra })}\n`);
  process.exitCode = ok ? 0 : 1;
}

async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  check(!result.isError, `tool ${name} returned an error: ${short(textOf(result))}`);
  check(result.structuredContent && typeof result.structuredContent === "object", `tool ${name} returned no structuredContent: ${short(result)}`);
  return result.structuredContent;
}

// flocked reports whether a process holds flock on port, as hilrun does
// on the board's pty while a console has it; undefined without /proc/locks.
function flocked(port) {
  let locks;
  try {
    locks = fs.readFileSync("/proc/locks", "utf8");
  } catch {
    return undefined;
  }
  // "1: FLOCK  ADVISORY  WRITE 4711 00:19:9 0 EOF": the file system's
  // device in hex, then the inode.
  const st = fs.statSync(port, { bigint: true });
  const major = ((st.dev >> 8n) & 0xfffn) | ((st.dev >> 32n) & ~0xfffn);
  const minor = (st.dev & 0xffn) | ((st.dev >> 12n) & ~0xffn);
  return locks.split("\n").some((line) => {
    const f = line.trim().split(/\s+/);
    if (f.length < 6 || f[1] !== "FLOCK") return false;
    const [ma, mi, ino] = f[5].split(":");
    return BigInt("0x" + ma) === major && BigInt("0x" + mi) === minor && BigInt(ino) === st.ino;
  });
}

async function seed(client, summary) {
  const tools = new Set();
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    for (const t of page.tools) tools.add(t.name);
    cursor = page.nextCursor;
  } while (cursor);
  for (const name of ["console_list", "serial_send", "serial_send_ctrl", "serial_snapshot", "log_info", "log_search", "console_release", "console_hold"]) {
    check(tools.has(name), `tool ${name} is missing: ${[...tools].sort().join(", ")}`);
  }
  pass("tools/list has smon's console tools");

  const lp = await call(client, "list_ports", {});
  const port = (lp.ports.find((p) => p.board) || lp.ports[0]).path;
  // The Rust serial server's open arguments: data_bits as a string.
  const opened = await call(client, "serial_open", { port, baud_rate: 115200, data_bits: "8", stop_bits: "1", parity: "none", flow_control: "none" });
  const id = opened.connection_id;
  summary.port = port;
  pass("serial_open with data_bits \"8\"", `${id} on ${port}`);
  try {
    const banner = await call(client, "serial_expect", { console: id, pattern: "sim> ", cursor: 0, timeout_ms: 20000 });
    check(banner.matched, `no prompt from the board: ${short(banner)}`);

    // serial_send submits the line: newline is true by default.
    const sent = await call(client, "serial_send", { console: id, text: "echo seed-e2e" });
    const reply = await call(client, "serial_expect", { console: id, pattern: "seed-e2e\r\nsim> ", cursor: sent.cursor, timeout_ms: 20000 });
    check(reply.matched, `no reply to serial_send: ${short(reply)}`);
    pass("serial_send", `cursor ${sent.cursor}`);

    const snap = await call(client, "serial_snapshot", { console: id, lines: 2 });
    // The reply follows the prompt the command was typed at.
    check(snap.text === "sim> seed-e2e\r\nsim> " && snap.lines === 2 && snap.cursor - snap.start === snap.text.length, `serial_snapshot lines 2: ${short(snap)}`);
    pass("serial_snapshot");

    // console_release: the port is closed and unlocked, another program
    // opens it.
    const stop = reply.cursor;
    const locks = flocked(port) !== undefined;
    if (locks) check(flocked(port), `${port} is not locked (flock) while hilrun has it`);
    const rel = await call(client, "console_release", { console: id });
    check(rel.released === true && rel.connected === false && rel.lease_state === "released" && rel.cursor === stop, `console_release: ${short(rel)}`);
    if (locks) check(!flocked(port), `${port} stays locked (flock) after console_release`);
    const fd = fs.openSync(port, fs.constants.O_RDWR | fs.constants.O_NOCTTY | fs.constants.O_NONBLOCK);
    fs.closeSync(fd);
    const refused = await client.callTool({ name: "serial_send", arguments: { console: id, text: "echo lost" } });
    check(refused.isError && /released/.test(textOf(refused)), `serial_send while released: ${short(refused)}`);
    pass("console_release", locks ? "flock released, port opened by another program" : "port opened by another program");

    const held = await call(client, "console_hold", { console: id });
    check(held.released === false && held.connected === true && held.cursor === stop && held.gaps.length === 1, `console_hold: ${short(held)}`);
    check(held.gaps[0].offset === stop && held.gaps[0].from && held.gaps[0].until, `the gap: ${short(held.gaps)}`);
    if (locks) check(flocked(port), `${port} is not locked (flock) after console_hold`);
    const again = await call(client, "serial_send", { console: id, text: "echo back" });
    check(again.cursor === stop, `the cursor after console_hold is ${again.cursor}, want ${stop}`);
    const back = await call(client, "serial_expect", { console: id, pattern: "back\r\nsim> ", cursor: stop, timeout_ms: 20000 });
    check(back.matched && back.data === "back\r\nsim> ", `output after console_hold from the old cursor: ${short(back)}`);
    pass("console_hold", `cursor goes on at ${stop}, gap ${held.gaps[0].from} .. ${held.gaps[0].until}`);

    const list = await call(client, "console_list", {});
    check(list.consoles.length === 1 && list.consoles[0].connection_id === id && list.consoles[0].released === false, `console_list: ${short(list)}`);
    const found = await call(client, "log_search", { console: id, pattern: "seed-e2e" });
    check(found.matches.length === 1 && found.matches[0].text === "sim> seed-e2e", `log_search: ${short(found)}`);
    pass("console_list and log_search");
    if (mode === "http") await sessionEnd(client, id);
  } finally {
    await client.callTool({ name: "serial_close", arguments: { connection: id } }).catch(() => {});
  }
}

// sessionEnd checks that the end of a streamable HTTP session (DELETE)
// ends its leases: a console it released can be taken back by the next
// session, which could not while the first one lived.
async function sessionEnd(client, id) {
  const [url, token] = process.argv.slice(3, 5);
  const connect = async (name) => {
    const c = new Client({ name, version: "0.0.0" });
    const t = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    await c.connect(t);
    return [c, t];
  };
  const [other] = await connect("hilrun-mcp-seed-e2e-other");
  try {
    await call(client, "console_release", { console: id });
    const refused = await other.callTool({ name: "console_hold", arguments: { console: id } });
    check(refused.isError && /only that session may release or hold its console/.test(textOf(refused)), `console_hold by another session: ${short(refused)}`);
    await client.transport.terminateSession();
    const held = await call(other, "console_hold", { console: id });
    check(held.released === false && held.gaps.length === 2, `console_hold after the releasing session ended: ${short(held)}`);
    await call(other, "serial_close", { console: id });
    pass("session end drops its leases", "DELETE, then another session takes the port back");
  } finally {
    await other.close().catch(() => {});
  }
}

async function run(argv) {
  mode = argv[0];
  let transport;
  if (mode === "stdio" && argv.length === 2) {
    transport = new StdioClientTransport({ command: argv[1], args: ["mcp", "--sim"], env: { ...process.env }, stderr: "inherit" });
  } else if (mode === "http" && argv.length === 3) {
    transport = new StreamableHTTPClientTransport(new URL(argv[1]), { requestInit: { headers: { Authorization: `Bearer ${argv[2]}` } } });
  } else {
    process.stderr.write("usage: node seed_client.mjs stdio HILRUN_BINARY | http URL TOKEN\n");
    process.exit(2);
  }
  const client = new Client({ name: "hilrun-mcp-seed-e2e", version: "0.0.0" });
  const summary = {};
  try {
    await client.connect(transport);
    await seed(client, summary);
    finish(true, summary);
  } finally {
    await client.close().catch(() => {});
  }
}

const watchdog = setTimeout(() => {
  finish(false, { error: `timed out after ${TIMEOUT_MS} ms` });
  process.exit(1);
}, TIMEOUT_MS);
watchdog.unref();

run(process.argv.slice(2)).then(
  () => clearTimeout(watchdog),
  (err) => {
    clearTimeout(watchdog);
    log(`FAIL ${err instanceof CheckError ? err.message : err?.stack || String(err)}`);
    finish(false, { error: err instanceof Error ? err.message : String(err) });
  },
);
