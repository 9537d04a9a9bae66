#!/usr/bin/env node
// End-to-end check of hilrun's MCP server through the official MCP
// TypeScript SDK client, against hilrun's virtual board (--sim).
//
// Usage:
//   node client.mjs stdio HILRUN_BINARY   spawns `HILRUN_BINARY mcp --sim` itself
//   node client.mjs http URL TOKEN        talks to a running `hilrun mcp --sim --http ... --token TOKEN`
//
// Environment:
//   HILRUN_E2E_PROBE       probe name used by the memory steps (default "yellow";
//                          under --sim hilrun binds every probe name to the board)
//   HILRUN_E2E_TIMEOUT_MS  watchdog for the whole run (default 50000)
//
// Prints one JSON summary line on standard output: {"ok": true, ...} and exits
// 0, or {"ok": false, "error": ...} and exits 1 (2 for bad usage). Progress
// goes to standard error.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const REQUIRED_TOOLS = [
  "serial_sequence",
  "serial_write",
  "serial_expect",
  "mem_read",
  "mem_write",
  "list_ports",
  "validate_sequence",
];

const GPIO_ODR = "0x48000014";
const GPIO_BSRR = "0x48000018";
const LED_BIT = 1n << 5n;

const PROBE = process.env.HILRUN_E2E_PROBE || "yellow";
const TIMEOUT_MS = Number(process.env.HILRUN_E2E_TIMEOUT_MS || 50000);

// HEARTBEAT is the --heartbeat hilrun runs with (the Go test passes the
// same under HTTP): well below the client timeout of the heartbeat check.
const HEARTBEAT = "200ms";

const checks = [];
const protocolErrors = [];
let mode = "";

function log(msg) {
  process.stderr.write(`hilrun-mcp-e2e: ${msg}\n`);
}

function pass(name, detail) {
  checks.push(name);
  log(`ok   ${name}${detail ? ` (${detail})` : ""}`);
}

class CheckError extends Error {}

function fail(msg) {
  throw new CheckError(msg);
}

function check(cond, msg) {
  if (!cond) fail(msg);
}

function short(v, n = 600) {
  let s;
  try {
    s = typeof v === "string" ? v : JSON.stringify(v);
  } catch {
    s = String(v);
  }
  if (s === undefined) s = String(v);
  return s.length > n ? `${s.slice(0, n)}...` : s;
}

function finish(ok, extra) {
  const line = JSON.stringify({ ok, transport: mode, checks, ...extra });
  process.stdout.write(`${line}\n`);
  process.exitCode = ok ? 0 : 1;
}

function usage() {
  process.stderr.write(
    "usage: node client.mjs stdio HILRUN_BINARY\n" +
      "       node client.mjs http URL TOKEN\n",
  );
  process.exit(2);
}

// Reads a register value out of a step's data, whatever shape the server
// gives it: {values: [32]}, {values: ["0x00000020"]}, {value: ...}, or a
// string such as "gpio: 0x00000020".
function firstValue(data) {
  const toBig = (x) => {
    if (typeof x === "bigint") return x;
    if (typeof x === "number" && Number.isInteger(x)) return BigInt(x);
    if (typeof x === "string") {
      const m = x.match(/0x[0-9a-fA-F]+|\b\d+\b/);
      if (m) return BigInt(m[0]);
    }
    return undefined;
  };
  if (data === null || data === undefined) return undefined;
  if (typeof data !== "object") return toBig(data);
  if (Array.isArray(data)) return data.length ? firstValue(data[0]) : undefined;
  for (const key of ["values", "value", "words", "data"]) {
    if (key in data) {
      const v = firstValue(data[key]);
      if (v !== undefined) return v;
    }
  }
  return undefined;
}

function schemaAllows(schema, type) {
  if (!schema || typeof schema !== "object") return true; // no schema: assume it does
  if (schema.type === undefined && !schema.anyOf && !schema.oneOf) return true;
  const types = [].concat(schema.type || []);
  if (types.includes(type)) return true;
  for (const alt of [...(schema.anyOf || []), ...(schema.oneOf || [])]) {
    if (schemaAllows(alt, type)) return true;
  }
  return false;
}

function textOf(result) {
  return (result.content || [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

async function callTool(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) {
    fail(`tool ${name} returned an error: ${short(textOf(result) || result)}`);
  }
  return result;
}

// resources/read on uri: returns the text of all its contents.
async function readResourceText(client, uri) {
  const res = await client.readResource({ uri });
  check(Array.isArray(res.contents) && res.contents.length > 0, `resource ${uri} has no contents: ${short(res)}`);
  return res.contents
    .map((c) => (typeof c.text === "string" ? c.text : c.blob ? Buffer.from(c.blob, "base64").toString("utf8") : ""))
    .join("");
}

async function checkUnauthorized(url, token) {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "hilrun-mcp-e2e-unauthorized", version: "0.0.0" },
    },
  });
  const headers = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
  };
  const none = await fetch(url, { method: "POST", headers, body });
  await none.text().catch(() => "");
  check(none.status === 401, `POST ${url} without a token: want HTTP 401, got ${none.status}`);
  pass("http: no token -> 401");

  const wrong = await fetch(url, {
    method: "POST",
    headers: { ...headers, Authorization: `Bearer not-${token}` },
    body,
  });
  await wrong.text().catch(() => "");
  check(wrong.status === 401, `POST ${url} with a wrong token: want HTTP 401, got ${wrong.status}`);
  pass("http: wrong token -> 401");
}

// checkHTTPRules checks the rules of the streamable HTTP transport that the
// SDK itself does not exercise: a foreign Origin is refused, the bearer
// scheme name is case-insensitive, and a session ended with DELETE (the
// SDK's terminateSession) is gone.
async function checkHTTPRules(transport, url, token) {
  const sid = transport.sessionId;
  check(typeof sid === "string" && sid !== "", `the SDK transport has no session id: ${short(sid)}`);
  const listTools = (headers) =>
    fetch(url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "Mcp-Protocol-Version": transport.protocolVersion || "2025-06-18",
        "Mcp-Session-Id": sid,
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 900, method: "tools/list" }),
    }).then(async (r) => ({ status: r.status, text: await r.text().catch(() => "") }));

  const lower = await listTools({ Authorization: `bearer ${token}` });
  check(lower.status === 200, `tools/list with "Authorization: bearer TOKEN": want HTTP 200, got ${lower.status}: ${lower.text}`);
  pass("http: lower-case bearer -> 200");

  const foreign = await listTools({ Authorization: `Bearer ${token}`, Origin: "https://evil.example" });
  check(foreign.status === 403, `tools/list with Origin https://evil.example: want HTTP 403, got ${foreign.status}: ${foreign.text}`);
  pass("http: foreign Origin -> 403");

  await transport.terminateSession();
  check(transport.sessionId === undefined, `the SDK kept session ${transport.sessionId} after terminateSession`);
  const gone = await listTools({ Authorization: `Bearer ${token}` });
  check(gone.status === 404, `tools/list in session ${sid} after DELETE: want HTTP 404, got ${gone.status}: ${gone.text}`);
  pass("http: DELETE ends the session -> 404");
}

async function run(argv) {
  mode = argv[0];
  let transport;
  if (mode === "stdio") {
    if (argv.length !== 2) usage();
    const env = { ...process.env };
    transport = new StdioClientTransport({
      command: argv[1],
      args: ["mcp", "--sim", "--heartbeat", HEARTBEAT],
      env,
      stderr: "inherit",
    });
  } else if (mode === "http") {
    if (argv.length !== 3) usage();
    const url = argv[1];
    const token = argv[2];
    await checkUnauthorized(url, token);
    transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
  } else {
    usage();
  }

  const client = new Client({ name: "hilrun-mcp-e2e", version: "0.0.0" });
  // The SDK reports here what it cannot match: a progress notification
  // after its call's result, a response to a call it cancelled.
  client.onerror = (err) => protocolErrors.push(err?.message || String(err));
  const summary = {};
  try {
    await client.connect(transport);
    recordWire(transport);
    const server = client.getServerVersion();
    summary.server = server;
    pass("initialize", `${server?.name} ${server?.version}`);
    const caps = client.getServerCapabilities() || {};
    check(caps.tools, `server does not advertise the tools capability: ${short(caps)}`);
    check(caps.resources, `server does not advertise the resources capability: ${short(caps)}`);

    // tools/list, following pages.
    const tools = new Map();
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      for (const t of page.tools) tools.set(t.name, t);
      cursor = page.nextCursor;
    } while (cursor);
    summary.tools = [...tools.keys()].sort();
    for (const name of REQUIRED_TOOLS) {
      const t = tools.get(name);
      check(t, `tool ${name} is missing; the server lists: ${summary.tools.join(", ")}`);
      check(t.inputSchema && t.inputSchema.type === "object", `tool ${name} has no object inputSchema: ${short(t.inputSchema)}`);
      check(t.outputSchema && t.outputSchema.type === "object", `tool ${name} has no object outputSchema: ${short(t.outputSchema)}`);
      check(typeof t.description === "string" && t.description.length > 0, `tool ${name} has no description`);
    }
    pass("tools/list", `${tools.size} tools, ${REQUIRED_TOOLS.length} required ones with input and output schemas`);

    // serial_sequence with the seed-compatible step list: serial and memory
    // steps, in the exact JSON forms other MCP debug servers use.
    const seq = tools.get("serial_sequence");
    const stepsSchema = seq.inputSchema.properties?.steps;
    check(stepsSchema, `serial_sequence's inputSchema has no steps property: ${short(seq.inputSchema)}`);
    const steps = [
      { send: "", expect: "sim> ", read_timeout: 20.0, line_ending: "lf" },
      { mem_write: true, address: GPIO_BSRR, value: "0x20", probe: PROBE, width: 32 },
      { send: "status", expect: "led: on", read_timeout: 20.0, line_ending: "lf" },
      { mem_read: true, address: GPIO_ODR, count: 1, probe: PROBE, width: 32, label: "gpio" },
      { delay_ms: 50 },
      { mem_write: true, address: GPIO_BSRR, value: "0x200000", probe: PROBE, width: 32 },
      { send: "status", expect: "led: off", read_timeout: 20.0, line_ending: "lf" },
    ];
    const asArray = schemaAllows(stepsSchema, "array");
    const seqResult = await callTool(client, "serial_sequence", {
      steps: asArray ? steps : JSON.stringify(steps),
      on_failure: "stop",
    });
    const sc = seqResult.structuredContent;
    check(sc && typeof sc === "object", `serial_sequence returned no structuredContent: ${short(seqResult)}`);
    const report = textOf(seqResult);
    check(report.length > 0, `serial_sequence returned no text content: ${short(seqResult)}`);
    check(report.includes(`passed ${steps.length}/${steps.length}`), `serial_sequence's text report has no summary line "passed ${steps.length}/${steps.length}":\n${report}`);
    if (sc.passed !== true) {
      const failed = (sc.steps || []).filter((s) => s.status !== "passed");
      fail(`serial_sequence did not pass: status ${sc.status}; failing steps: ${short(failed)}; report:\n${report}`);
    }
    check(Array.isArray(sc.steps), `structuredContent.steps is not an array: ${short(sc)}`);
    check(sc.steps.length === steps.length, `want ${steps.length} step results, got ${sc.steps.length}: ${short(sc.steps)}`);
    for (const s of sc.steps) {
      check(s.status === "passed", `step ${s.index} (${s.kind}) is ${s.status}: ${s.message || ""}`);
    }
    const gpio =
      sc.steps.find((s) => s.data && s.data.label === "gpio") ||
      sc.steps.find((s) => s.label === "gpio" || s.name === "gpio") ||
      sc.steps[3];
    check(gpio && gpio.kind === "mem_read", `cannot find the gpio mem_read step in ${short(sc.steps)}`);
    const odr = firstValue(gpio.data);
    check(odr !== undefined, `the gpio mem_read step has no value in its data: ${short(gpio)}`);
    check((odr & LED_BIT) !== 0n, `GPIO ODR read 0x${odr.toString(16)} after BSRR 0x20: LED bit 5 is not set`);
    summary.gpio_odr = `0x${odr.toString(16).padStart(8, "0")}`;
    pass(`serial_sequence (steps as ${asArray ? "array" : "JSON string"})`, `passed, gpio ${summary.gpio_odr}, ${sc.steps.length} steps`);

    // The console log resource holds what the board printed.
    const logs = sc.log_resources || [];
    check(Array.isArray(logs) && logs.length > 0, `structuredContent.log_resources is empty: ${short(sc)}`);
    const consoleURI = logs.find((u) => /\.log$/.test(u) && !/timeline/.test(u)) || logs[0];
    const consoleText = await readResourceText(client, consoleURI);
    check(consoleText.includes("led: on"), `console log ${consoleURI} does not contain "led: on": ${short(consoleText)}`);
    check(consoleText.includes("led: off"), `console log ${consoleURI} does not contain "led: off": ${short(consoleText)}`);
    check(consoleText.includes("sim> "), `console log ${consoleURI} does not contain the prompt: ${short(consoleText)}`);
    const listed = [];
    let rcursor;
    do {
      const page = await client.listResources(rcursor ? { cursor: rcursor } : {});
      listed.push(...page.resources.map((r) => r.uri));
      rcursor = page.nextCursor;
    } while (rcursor);
    check(listed.includes(consoleURI), `resources/list does not list ${consoleURI}: ${short(listed)}`);
    summary.console_log = consoleURI;
    pass("resources/read console log", consoleURI);

    if (sc.report_resource) {
      const rep = await readResourceText(client, sc.report_resource);
      check(rep.length > 0, `report resource ${sc.report_resource} is empty`);
      try {
        const doc = JSON.parse(rep);
        check(doc.passed === true, `report resource ${sc.report_resource} says passed=${doc.passed}`);
      } catch (e) {
        if (e instanceof CheckError) throw e;
        // not JSON: a text report is fine too
      }
      summary.report = sc.report_resource;
      pass("resources/read run report", sc.report_resource);
    }

    // The steps may come as a JSON string too, as other MCP debug servers
    // take them, when the schema allows it.
    if (schemaAllows(stepsSchema, "string")) {
      const again = await callTool(client, "serial_sequence", {
        steps: JSON.stringify([
          { send: "status", expect: "led: off", read_timeout: 20.0, line_ending: "lf" },
          { mem_read: true, address: GPIO_ODR, count: 1, probe: PROBE, width: 32, label: "gpio_after" },
        ]),
      });
      const sc2 = again.structuredContent;
      check(sc2 && sc2.passed === true, `serial_sequence with steps as a JSON string did not pass: ${short(sc2 || again)}`);
      const after = firstValue(sc2.steps?.[1]?.data);
      check(after !== undefined && (after & LED_BIT) === 0n, `GPIO ODR after BSRR 0x200000: want bit 5 clear, got ${short(sc2.steps?.[1])}`);
      pass("serial_sequence (steps as JSON string)", `gpio_after 0x${after.toString(16)}`);
    }

    // A camera capture in the seed's form: the virtual board's camera,
    // read by ffmpeg, comes back as image content the agent can look at,
    // and the image check follows the LED the probe switched on.
    {
      const cam = await callTool(client, "serial_sequence", {
        steps: [
          { mem_write: true, address: GPIO_BSRR, value: "0x20", probe: PROBE, width: 32 },
          { capture: true, label: "led_e2e", device_index: 0 },
          { expect_image: { region: [224, 112, 32, 32], brightness: ">0.6" } },
        ],
        finally: [{ mem_write: true, address: GPIO_BSRR, value: "0x200000", probe: PROBE, width: 32 }],
      });
      const csc = cam.structuredContent;
      check(csc && csc.passed === true, `serial_sequence with a camera capture did not pass: ${short(csc || cam)}\n${textOf(cam)}`);
      const images = (cam.content || []).filter((c) => c.type === "image");
      check(images.length === 2, `want 2 image content items (one per picture), got ${images.length}: ${short(cam.content)}`);
      const png = Buffer.from(images[0].data, "base64");
      check(images[0].mimeType === "image/png" && png.subarray(1, 4).toString() === "PNG", `image content is not a PNG: ${images[0].mimeType} ${short(png.subarray(0, 8))}`);
      check(Array.isArray(csc.pictures) && csc.pictures[0].endsWith("led_e2e.png"), `structuredContent.pictures: ${short(csc.pictures)}`);
      summary.picture_bytes = png.length;
      pass("serial_sequence camera capture", `${images.length} PNG image content items, ${png.length} bytes`);
    }

    // validate_sequence: a bad step list is reported with its position.
    const bad = await callTool(client, "validate_sequence", {
      content: JSON.stringify([{ send: "status", expct: "led: on" }], null, 2),
    });
    const bsc = bad.structuredContent;
    check(bsc && bsc.valid === false, `validate_sequence accepted a step with the unknown key "expct": ${short(bsc || bad)}`);
    check(Array.isArray(bsc.errors) && bsc.errors.length > 0, `validate_sequence gave no errors: ${short(bsc)}`);
    check(bsc.errors.some((e) => /expct/.test(e.message) && e.line > 0), `validate_sequence's errors do not name "expct" with a line: ${short(bsc.errors)}`);
    const good = await callTool(client, "validate_sequence", { content: JSON.stringify(steps) });
    check(good.structuredContent?.valid === true, `validate_sequence rejected the step list that ran: ${short(good.structuredContent || good)}`);
    pass("validate_sequence", `${bsc.errors.length} error(s) for the bad list, valid for the good one`);

    // A failing step is a result, not a tool error.
    const failing = await callTool(client, "serial_sequence", {
      steps: [{ send: "status", expect: "this is never printed", read_timeout: 0.3, line_ending: "lf" }],
      on_failure: "stop",
    });
    const fsc = failing.structuredContent;
    check(fsc && fsc.passed === false, `serial_sequence with an expect that cannot match did not fail: ${short(fsc || failing)}`);
    check(fsc.steps?.[0]?.status === "failed", `the unmatched expect's step is ${fsc.steps?.[0]?.status}, want failed: ${short(fsc.steps)}`);
    pass("serial_sequence failing step", `${fsc.status}: ${fsc.steps[0].message || ""}`);

    await protocolChecks(client, summary);
    await primitives(client, summary);
    if (mode === "http") await checkHTTPRules(transport, argv[1], argv[2]);

    finish(true, summary);
  } finally {
    await client.close().catch(() => {});
  }
}

// wire is every progress notification and response, in the order the
// transport delivered them. The SDK hands notifications to their handlers
// a microtask later than responses, so over stdio a progress notification
// that came just before its result, in the same read, still reaches the
// SDK after it ("Received a progress notification for an unknown token",
// typescript-sdk issue 2580); only the wire tells the order the server
// sent.
const wire = [];

function recordWire(transport) {
  const deliver = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    if (msg.method === "notifications/progress") {
      wire.push({ kind: "progress", token: msg.params?.progressToken, message: msg.params?.message });
    } else if (msg.id !== undefined && (msg.result !== undefined || msg.error !== undefined)) {
      wire.push({ kind: "response", id: msg.id });
    }
    deliver?.call(transport, msg, extra);
  };
}

// The SDK uses a call's message id as its progress token.
function progressAfterResult() {
  const answered = new Set();
  const late = [];
  for (const ev of wire) {
    if (ev.kind === "response") answered.add(ev.id);
    else if (answered.has(ev.token)) late.push(ev);
  }
  return late;
}

// sdkErrors are the SDK's errors but for unknown progress tokens whose
// progress came before the result on the wire (the SDK's own race, see
// wire) or belonged to a call the client cancelled.
function sdkErrors(cancelledTokens = new Set()) {
  return protocolErrors.filter((m) => {
    const tok = /unknown token: (\{.*\})/.exec(m);
    if (!tok) return true;
    let token;
    try {
      token = JSON.parse(tok[1]).params?.progressToken;
    } catch {
      return true;
    }
    return !cancelledTokens.has(token) && progressAfterResult().some((ev) => ev.token === token);
  });
}

// protocolChecks checks progress, cancellation and errors as the MCP
// specification has them: no progress after a call's result; a step longer
// than the client's timeout succeeds when the timeout restarts on progress
// (the server's heartbeat); a cancelled call gets no response and its port
// is free for the very next call; an unknown resource is -32002.
async function protocolChecks(client, summary) {
  const seqSteps = [
    { send: "", expect: "sim> ", read_timeout: 20.0, line_ending: "lf" },
    { send: "status", expect: "led: ", read_timeout: 20.0, line_ending: "lf" },
    { delay_ms: 1 },
  ];
  const before = wire.length;
  for (let i = 0; i < 20; i++) {
    const res = await client.callTool({ name: "serial_sequence", arguments: { steps: seqSteps } }, undefined, {
      onprogress: () => {},
    });
    check(!res.isError && res.structuredContent?.passed === true, `serial_sequence with progress did not pass: ${short(res)}`);
  }
  await client.listTools();
  const late = progressAfterResult();
  check(late.length === 0, `progress arrived after the result: ${short(late)}`);
  const seen = wire.slice(before).filter((ev) => ev.kind === "progress").length;
  check(seen > 0, "no progress notification arrived for 20 sequences with a progress token");
  pass("progress before the result", `${seen} progress notifications for 20 calls, none after a result`);

  // One step of 4 s against a 2 s timeout that restarts on progress.
  let beats = 0;
  const hb = await client.callTool({ name: "serial_sequence", arguments: { steps: [{ delay_ms: 4000 }] } }, undefined, {
    timeout: 2000,
    resetTimeoutOnProgress: true,
    onprogress: (p) => {
      if (/ running /.test(p.message || "")) beats++;
    },
  });
  check(!hb.isError && hb.structuredContent?.passed === true, `a 4 s step with timeout 2000 and resetTimeoutOnProgress failed: ${short(hb)}`);
  check(beats > 0, "no heartbeat progress while the 4 s step ran");
  summary.heartbeats = beats;
  pass("heartbeat keeps a timeout that restarts on progress alive", `${beats} heartbeats during a 4 s step, timeout 2 s`);

  // Cancel mid-step, then use the same console at once.
  const ac = new AbortController();
  const cancelledTokens = new Set();
  let running;
  const started = new Promise((resolve) => (running = resolve));
  const cancelled = client.callTool(
    { name: "serial_sequence", arguments: { steps: [seqSteps[0], { delay_ms: 60000 }] } },
    undefined,
    {
      signal: ac.signal,
      onprogress: () => {
        const last = wire.findLast((ev) => ev.kind === "progress");
        if (last) cancelledTokens.add(last.token);
        running();
      },
    },
  );
  const outcome = cancelled.then(
    () => "answered",
    (err) => err,
  );
  await Promise.race([started, outcome]);
  ac.abort("hilrun e2e cancels the call");
  const err = await outcome;
  check(err !== "answered", "the call to cancel ended before it was cancelled");
  const after = await client.callTool({ name: "serial_sequence", arguments: { steps: [seqSteps[1]] } });
  check(!after.isError && after.structuredContent?.passed === true, `the call right after a cancellation failed: ${short(textOf(after) || after)}`);
  await client.listTools();
  const answeredErrors = protocolErrors.filter((m) => /unknown message ID/i.test(m));
  check(answeredErrors.length === 0, `the cancelled call got a response: ${short(answeredErrors)}`);
  const cancelledAnswer = wire.filter((ev) => ev.kind === "response" && cancelledTokens.has(ev.id));
  check(cancelledAnswer.length === 0, `the cancelled call got a response on the wire: ${short(cancelledAnswer)}`);
  pass("cancel mid-step, then a call at once", "no response to the cancelled call, the port free");

  try {
    await client.readResource({ uri: "hilrun://runs/r999/report.json" });
    fail("resources/read of an unknown run succeeded");
  } catch (e) {
    if (e instanceof CheckError) throw e;
    check(e.code === -32002, `resources/read of an unknown run: want error -32002, got ${e.code}: ${e.message}`);
  }
  pass("unknown resource -> -32002");
  const errs = sdkErrors(cancelledTokens);
  check(errs.length === 0, `the SDK reported errors: ${short(errs)}`);
}

// primitives drives the one-shot tools against the virtual board: the
// serial console through list_ports, serial_open, serial_write,
// serial_expect, serial_status and serial_close, the GPIO through mem_write
// and mem_read, and the connection's log resource.
async function primitives(client, summary) {
  const lp = await callTool(client, "list_ports", {});
  const ports = lp.structuredContent?.ports;
  check(Array.isArray(ports) && ports.length > 0, `list_ports found no port under --sim: ${short(lp.structuredContent || lp)}`);
  const board = ports.find((p) => p.board) || ports[0];
  summary.port = board.path;
  pass("list_ports", `${ports.length} port(s), the board at ${board.path}`);

  const opened = await callTool(client, "serial_open", { port: board.path, baud: 115200, label: "dut" });
  const id = opened.structuredContent?.connection_id;
  check(typeof id === "string" && id !== "", `serial_open returned no connection_id: ${short(opened.structuredContent || opened)}`);
  try {
    const say = async (command, want) => {
      const w = await callTool(client, "serial_write", { connection: id, data: command, encoding: "utf8", newline: true });
      const cursor = w.structuredContent?.cursor;
      check(Number.isInteger(cursor), `serial_write returned no cursor: ${short(w.structuredContent || w)}`);
      const e = await callTool(client, "serial_expect", { connection: id, pattern: want, cursor, timeout_ms: 20000 });
      const esc = e.structuredContent;
      check(esc && esc.matched === true && esc.timed_out === false, `serial_expect ${JSON.stringify(want)} after ${JSON.stringify(command)}: ${short(esc || e)}`);
      check(typeof esc.cursor === "number" && esc.cursor > cursor, `serial_expect's cursor ${esc.cursor} is not past the write's ${cursor}`);
      return esc;
    };
    await say("status", "led: off");
    pass("serial_open/serial_write/serial_expect", `connection ${id}, led: off`);

    await callTool(client, "mem_write", { probe: PROBE, address: GPIO_BSRR, value: "0x20", width: 32 });
    const rd = await callTool(client, "mem_read", { probe: PROBE, address: GPIO_ODR, width: 32, count: 1 });
    const on = firstValue(rd.structuredContent);
    check(on !== undefined && (on & LED_BIT) !== 0n, `mem_read ODR after mem_write BSRR 0x20: want bit 5 set, got ${short(rd.structuredContent || rd)}`);
    await say("status", "led: on");
    await callTool(client, "mem_write", { probe: PROBE, address: GPIO_BSRR, value: "0x200000", width: 32 });
    const rd2 = await callTool(client, "mem_read", { probe: PROBE, address: GPIO_ODR, width: 32, count: 1 });
    const off = firstValue(rd2.structuredContent);
    check(off !== undefined && (off & LED_BIT) === 0n, `mem_read ODR after mem_write BSRR 0x200000: want bit 5 clear, got ${short(rd2.structuredContent || rd2)}`);
    await say("status", "led: off");
    pass("mem_write/mem_read", `ODR 0x${on.toString(16)} then 0x${off.toString(16)}, seen on the console`);

    const miss = await callTool(client, "serial_expect", { connection: id, pattern: "this is never printed", timeout_ms: 200 });
    check(miss.structuredContent?.matched === false && miss.structuredContent?.timed_out === true, `serial_expect of text never printed: want matched false, timed_out true: ${short(miss.structuredContent || miss)}`);
    pass("serial_expect timeout");

    const st = await callTool(client, "serial_status", { connection: id });
    check(JSON.stringify(st.structuredContent || {}).includes(id), `serial_status does not show connection ${id}: ${short(st.structuredContent || st)}`);
    pass("serial_status");
  } finally {
    await client.callTool({ name: "serial_close", arguments: { connection: id } }).catch(() => {});
  }

  const logURI = opened.structuredContent.log_resource;
  if (logURI) {
    const text = await readResourceText(client, logURI);
    check(text.includes("led: on") && text.includes("led: off"), `connection log ${logURI} lacks what the board printed: ${short(text)}`);
    pass("serial_close and its log resource", logURI);
  }
}

const watchdog = setTimeout(() => {
  finish(false, { error: `timed out after ${TIMEOUT_MS} ms` });
  log(`FAIL timed out after ${TIMEOUT_MS} ms`);
  process.exit(1);
}, TIMEOUT_MS);
watchdog.unref();

run(process.argv.slice(2)).then(
  () => clearTimeout(watchdog),
  (err) => {
    clearTimeout(watchdog);
    const msg = err instanceof CheckError ? err.message : err?.stack || String(err);
    log(`FAIL ${msg}`);
    finish(false, { error: err instanceof Error ? err.message : String(err) });
  },
);
