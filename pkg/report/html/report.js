// The hilrun HTML report: unpacks the embedded data and draws it lazily,
// so that the page holds a few thousand elements however long the run was.
"use strict";
(function () {
  const PAGE = 100;        // top-level steps per page of the step tree
  const CHILDREN = 200;    // children shown per group before "more"
  const ROW = 20;          // height of a waterfall row, px
  const OVERSCAN = 100;    // waterfall rows drawn beyond the visible ones
  const ICON = { passed: "✓", failed: "✗", error: "!", skipped: "–", interrupted: "!" };

  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    if (attrs) for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "text") el.textContent = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const kid of kids.flat()) {
      if (kid === null || kid === undefined || kid === false) continue;
      el.append(kid instanceof Node ? kid : String(kid));
    }
    return el;
  }
  const fmtMS = (ms) => ms >= 1000 ? (ms / 1000).toFixed(3) + " s" : ms >= 10 ? ms.toFixed(1) + " ms" : ms.toFixed(3) + " ms";
  const fmtBytes = (n) => n >= 1 << 20 ? (n / 1048576).toFixed(1) + " MiB" : n >= 1024 ? (n / 1024).toFixed(1) + " KiB" : n + " B";
  // consoleLabel: "console dut", or just "console" for a console named so.
  const consoleLabel = (name) => (name === "console" || !name ? "console" : "console " + name);
  const isProblem = (s) => s === "failed" || s === "error" || s === "interrupted";
  const num = (x) => typeof x === "number" ? x : Number(x);

  async function load() {
    const el = document.getElementById("hilrun-data");
    const bin = atob(el.textContent.trim());
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function picture(i) {
    const el = document.getElementById("pic-" + i);
    if (!el || el.dataset.missing) return null;
    return { name: el.dataset.name, src: "data:" + el.dataset.type + ";base64," + el.textContent.trim() };
  }

  // ---- summary ----------------------------------------------------------
  function summary(D) {
    const tot = { total: 0, passed: 0, failed: 0, error: 0, skipped: 0, interrupted: 0 };
    let dur = 0;
    for (const s of D.sequences) {
      for (const k of Object.keys(tot)) tot[k] += s.counts[k] || 0;
      dur += s.duration_ms;
    }
    const word = D.passed ? "passed" : D.interrupted ? "interrupted" : "failed";
    const info = D.info || {};
    const kv = h("dl", { class: "kv" },
      h("dt", null, "sequences"), h("dd", null, D.sequences.length + " (" + D.sequences.filter((s) => s.status === "passed").length + " passed)"),
      h("dt", null, "duration"), h("dd", null, fmtMS(dur)),
      info.started ? [h("dt", null, "started"), h("dd", null, info.started)] : null,
      h("dt", null, "hilrun"), h("dd", null, info.version || "unknown version"),
      info.command ? [h("dt", null, "command"), h("dd", { class: "mono" }, info.command.join(" "))] : null,
      h("dt", null, "report made"), h("dd", null, D.generated));
    // Steps as written, and the executions apart when repeats made more,
    // as every hilrun report counts them.
    const written = D.sequences.reduce((n, s) => n + (s.counts.steps || s.counts.total || 0), 0);
    const counts = h("div", { class: "counts", id: "counts", "data-steps": written, "data-total": tot.total, "data-passed": tot.passed, "data-failed": tot.failed, "data-error": tot.error + tot.interrupted },
      h("div", { class: "c-total" }, h("b", null, written), written === 1 ? "step" : "steps"),
      tot.total > written ? h("div", { class: "c-total" }, h("b", null, tot.total), tot.total === 1 ? "execution" : "executions") : null,
      ...["passed", "failed", "error", "skipped"].map((k) => h("div", { class: "c-" + k }, h("b", null, k === "error" ? tot.error + tot.interrupted : tot[k]), k)));
    let bench = null;
    if (info.bench && info.bench.length) {
      bench = h("div", null, h("h3", null, "Bench"), h("table", null,
        h("tr", null, h("th", null, "sequence"), h("th", null, "kind"), h("th", null, "name"), h("th", null, "bound to")),
        info.bench.map((b) => h("tr", null, h("td", null, b.sequence), h("td", null, b.kind), h("td", null, b.name), h("td", { class: "mono" }, b.target)))));
    }
    const probs = (D.problems || []).map((p) => h("p", { class: "warn" }, p));
    return h("section", { class: "panel", id: "summary" },
      h("h1", null, h("span", { class: "badge " + word, id: "outcome" }, word.toUpperCase()), "hilrun report"),
      counts, kv, bench, probs);
  }

  // ---- benches: the climbs of their recovery ladders, and the bad ones ---
  function benches(D) {
    const recs = D.recoveries || [], bad = D.bad_benches || [];
    if (!recs.length && !bad.length) return null;
    const mark = (ok) => h("span", { class: "st " + (ok ? "passed" : "failed") }, ok ? "✓" : "✗");
    const said = (c) => (ICON[c.status] || "?") + " " + c.status + (c.message ? ": " + c.message : "");
    return h("section", { class: "panel", id: "benches" }, h("h2", null, "Benches"),
      bad.length ? [h("h3", null, "Bad benches: they took no more work"), h("table", null,
        h("tr", null, h("th", null, "bench"), h("th", null, "why")),
        bad.map((b) => h("tr", { class: "bad-bench", "data-bench": b.bench }, h("td", null, mark(false), " " + b.bench), h("td", null, b.reason))))] : null,
      recs.length ? h("h3", null, "Recoveries") : null,
      recs.map((r) => h("details", { class: "recovery", open: !r.recovered || undefined, "data-bench": r.bench, "data-recovered": String(r.recovered) },
        h("summary", null, mark(r.recovered), ` bench ${r.bench}: ${r.why} — ${r.outcome} · ${fmtMS(r.duration_ms)}`),
        h("table", null,
          h("tr", null, h("th", null, "rung"), h("th", null, "what"), h("th", null, "ran"), h("th", null, "health check after it")),
          r.check ? h("tr", null, h("td", null, "–"), h("td", null, "health check first"), h("td", null, ""), h("td", null, said(r.check))) : null,
          (r.rungs || []).map((g) => h("tr", { class: "rung", "data-worked": String(g.health.status === "passed") },
            h("td", null, g.index), h("td", null, g.label, h("div", { class: "muted mono" }, `${g.file}:${g.line}:${g.column}`)),
            h("td", null, said(g) + " · " + fmtMS(g.duration_ms)), h("td", null, said(g.health))))))));
  }

  // ---- step tree --------------------------------------------------------
  // parentOf is the path of the container a step is in, null at the top: a
  // group's before_retry steps are its own, a sequence's and its finally
  // steps are at the top, as are the steps inside repeat iterations that
  // the page lists.
  function parentOf(path) {
    if (/^(finally|before_retry)\.\d+$/.test(path)) return null;
    const dot = path.lastIndexOf(".");
    if (dot <= 0) return null;
    // A group's before_retry steps are its own, as are a branch's finally
    // steps.
    const parent = path.slice(0, dot).replace(/\.(before_retry|finally)$/, "");
    return parent.includes("#") ? null : parent;
  }

  // tree builds the step tree from the steps in finishing order: a group
  // finishes after its children, so each run of a container takes the
  // steps that finished since it started, and a step that ran again (in
  // another attempt of a group or sequence with retries) is a node of its
  // own. A container whose own step is not listed (cut short, or left out
  // of the page) is a node without one.
  function tree(steps) {
    const open = new Map();
    const top = [];
    const place = (n) => {
      const p = parentOf(n.path);
      if (p === null) top.push(n); else container(p).kids.push(n);
    };
    const container = (path) => {
      let n = open.get(path);
      if (!n) {
        n = { path, step: null, kids: [], problem: false };
        open.set(path, n);
        place(n);
      }
      return n;
    };
    for (const st of steps) {
      const n = open.get(st.path);
      if (n) {
        open.delete(st.path);
        n.step = st;
      } else place({ path: st.path, step: st, kids: [], problem: false });
    }
    // A parallel step's branches in the order written, not as they ended.
    const order = (n) => {
      n.kids.forEach(order);
      const names = n.step && n.step.kind === "parallel" && n.step.data && n.step.data.branches;
      if (!names) return;
      const rank = (k) => { const i = names.indexOf(k.path.slice(n.path.length + 1)); return i < 0 ? names.length : i; };
      n.kids.sort((a, b) => rank(a) - rank(b));
    };
    top.forEach(order);
    const mark = (n) => {
      n.problem = (n.step && isProblem(n.step.status)) || false;
      for (const k of n.kids) if (mark(k)) n.problem = true;
      return n.problem;
    };
    top.forEach(mark);
    return top;
  }

  // attemptOf is the attempt of its sequence or group with retries a node
  // ran in, 0 outside any.
  function attemptOf(n) {
    if (n.step) return n.step.attempt || 0;
    return n.kids.length ? attemptOf(n.kids[0]) : 0;
  }

  // byAttempt sorts the nodes that ran in a sequence or group with
  // retries into its attempts, each an item {attempt, nodes}; nodes that
  // ran in none (a sequence's finally steps) follow as they are.
  function byAttempt(nodes, attempts) {
    const items = attempts.map((a) => ({ attempt: a, nodes: [] }));
    const rest = [];
    for (const n of nodes) {
      const it = items.find((i) => i.attempt.attempt === attemptOf(n));
      if (it) it.nodes.push(n); else rest.push(n);
    }
    return items.filter((i) => i.nodes.length || i.attempt.output || i.attempt.message).concat(rest);
  }

  // attemptBlock shows one attempt: its status, timing and message, what
  // the consoles printed during it, and the steps it ran.
  function attemptBlock(seq, it) {
    const a = it.attempt;
    const failed = a.status !== "passed";
    const det = h("details", { class: "attempt " + a.status, "data-attempt": a.attempt, "data-status": a.status, open: failed || undefined },
      h("summary", null, `${ICON[a.status] || "·"} attempt ${a.attempt} of ${a.of}: ${a.status}, +${fmtMS(a.started_ms)} · ${fmtMS(a.duration_ms)}` + (a.message ? " — " + a.message : "")));
    let filled = false;
    const fill = () => {
      if (filled) return;
      filled = true;
      if (a.output) det.append(h("div", { class: "ctx" }, h("b", null, "consoles during this attempt"), h("pre", { class: "received excerpt" }, a.output)));
      det.append(...it.nodes.map((k) => stepNode(seq, k)));
    };
    if (failed) fill();
    det.addEventListener("toggle", () => { if (det.open) fill(); });
    return det;
  }

  // item draws an entry of a list of steps: a step, or an attempt.
  const item = (seq, x) => (x.attempt ? attemptBlock(seq, x) : stepNode(seq, x));

  // sentDuring returns what the consoles were sent while st ran, from
  // their timelines (a send step's expanded text), or "".
  function sentDuring(seq, st) {
    if (!/^send/.test(st.kind)) return "";
    const from = st.started_ms - 0.001, to = st.started_ms + st.duration_ms + 0.001;
    let out = "";
    for (const c of seq.consoles || []) {
      for (const recs of [c.head || [], c.tail || []]) {
        let lo = 0, hi = recs.length;
        while (lo < hi) { const mid = (lo + hi) >> 1; if (recs[mid][0] < from) lo = mid + 1; else hi = mid; }
        for (let i = lo; i < recs.length && recs[i][0] <= to; i++) if (recs[i][1] === "tx") out += recs[i][4] || "";
      }
    }
    return out;
  }

  function stepBody(seq, st) {
    const body = h("div", { class: "body" });
    const sent = sentDuring(seq, st);
    if (sent) body.append(h("div", null, h("b", null, "sent "), h("span", { class: "mono sent" }, sent)));
    if (st.message) body.append(h("div", null, h("b", null, "message "), h("span", { class: "mono" }, st.message)));
    if (st.expected) body.append(h("div", null, h("b", null, "expected"), h("pre", { class: "expected" }, st.expected)));
    if (st.received) body.append(h("div", null, h("b", null, "received"), h("pre", { class: "received" }, st.received)));
    if (st.file) body.append(h("div", { class: "muted mono" }, st.file + (st.line ? ":" + st.line + (st.column ? ":" + st.column : "") : "")));
    for (const c of seq.consoles || []) {
      for (const x of c.contexts || []) {
        if (x.path !== st.path) continue;
        body.append(h("div", { class: "ctx" }, h("b", null, consoleLabel(c.name) + " around this step"), contextPre(x)));
      }
    }
    if (st.repeat) body.append(repeatBody(seq, st));
    for (const a of st.attachments || []) {
      const p = picture(Number(a.slice(1)));
      if (p) body.append(pictureFigure(p, Number(a.slice(1)), (st.data && st.data.checks) || []));
    }
    const extra = {};
    if (st.data) extra.data = st.data;
    if (st.saved) extra.saved = st.saved;
    if (Object.keys(extra).length) body.append(h("details", null, h("summary", null, "data"), h("pre", null, JSON.stringify(extra, null, 2))));
    return body;
  }

  // attemptsBody lists the attempts of a sequence or group with retries:
  // each one's status, timing, message and console output.
  function attemptsBody(list) {
    return h("div", { class: "attempts" }, h("b", null, "attempts"), list.map((a) =>
      h("details", { class: "attempt " + a.status, open: a.status !== "passed" || undefined },
        h("summary", null, `${ICON[a.status] || "·"} attempt ${a.attempt} of ${a.of}: ${a.status}, +${fmtMS(a.started_ms)} · ${fmtMS(a.duration_ms)}` + (a.message ? " — " + a.message : "")),
        a.output ? h("pre", { class: "received" }, a.output) : null)));
  }

  // contextPre shows the console bytes around a step, scrolled to where the
  // step began.
  function contextPre(x) {
    const pre = h("pre", { class: "ctx" }, h("span", { class: "before" }, x.before), h("span", { class: "during" }, x.during));
    requestAnimationFrame(() => { pre.scrollTop = pre.scrollHeight; });
    return pre;
  }

  function repeatBody(seq, st) {
    const r = st.repeat;
    const div = h("div", null,
      h("div", null, `${r.iterations} iterations: ${r.passed} passed, ${r.failed} failed, ${r.error} error; ` +
        `iteration min ${fmtMS(r.min_ms)}, median ${fmtMS(r.median_ms)}, p99 ${fmtMS(r.p99_ms)}, max ${fmtMS(r.max_ms)}` +
        (r.quantiles_exact ? "" : " (within 1%)")));
    const list = (title, its) => {
      if (!its.length) return;
      const d = h("details", { open: its === r.failures || undefined }, h("summary", null, title));
      let shown = 0;
      const more = () => {
        for (const it of its.slice(shown, shown + 20)) {
          d.append(h("div", { class: "iter" }, h("b", null, `iteration ${it.index} `), h("span", { class: "st " + it.status }, ICON[it.status] || "?"),
            ` at ${fmtMS(it.started_ms)}, ${fmtMS(it.duration_ms)}, ${it.steps} steps`,
            (it.detail || []).map((s) => h("div", { class: "mono" }, h("span", { class: "st " + s.status }, ICON[s.status] || "?"), ` ${s.path} ${s.kind} ${s.name || ""} ${s.message || ""}`,
              s.expected ? h("div", null, "expected: " + s.expected) : null,
              (seq.consoles || []).flatMap((c) => (c.contexts || []).filter((x) => x.path === s.path).map(contextPre))))));
        }
        shown += 20;
        if (shown < its.length) d.append(h("button", { onclick: (e) => { e.target.remove(); more(); } }, `${its.length - shown} more`));
      };
      more();
      div.append(d);
    };
    list(`failing iterations (${r.failures ? r.failures.length : 0}${r.more_failures ? ", and " + r.more_failures + " more" : ""})`, r.failures || []);
    list("first and last iterations", [r.first, r.last].filter(Boolean));
    return div;
  }

  function stepNode(seq, n) {
    const st = n.step || { path: n.path, kind: "group", name: "", status: "", duration_ms: 0, started_ms: 0 };
    const status = st.status || (n.problem ? "failed" : "");
    const det = h("details", { class: "step " + status, "data-path": st.path, "data-status": status, open: n.problem || undefined });
    det.append(h("summary", null,
      h("span", { class: "st " + status }, ICON[status] || "·"),
      h("span", { class: "path mono" }, st.path),
      h("span", { class: "kind" }, st.kind),
      h("span", { class: "name" }, st.name || ""),
      st.flaky ? h("span", { class: "badge flaky" }, "FLAKY") : null,
      st.attempt ? h("span", { class: "muted" }, "attempt " + st.attempt) : null,
      h("span", { class: "msg mono" }, (() => { const t = sentDuring(seq, st); return (t ? "→ " + t + " " : "") + (st.message || ""); })()),
      h("span", { class: "dur" }, "+" + fmtMS(st.started_ms) + " · " + fmtMS(st.duration_ms))));
    let filled = false;
    const fill = () => {
      if (filled) return;
      filled = true;
      if (n.step) det.append(stepBody(seq, st));
      // A group with retries lists its steps by attempt, each with what
      // the consoles printed during it.
      const kids = st.attempts && st.attempts.length ? byAttempt(n.kids, st.attempts) : n.kids;
      let shown = 0;
      const more = () => {
        for (const k of kids.slice(shown, shown + CHILDREN)) det.append(item(seq, k));
        shown += CHILDREN;
        if (shown < kids.length) det.append(h("button", { onclick: (e) => { e.target.remove(); more(); } }, `${kids.length - shown} more steps`));
      };
      more();
    };
    if (n.problem) fill();
    det.addEventListener("toggle", () => { if (det.open) fill(); });
    return det;
  }

  function stepTree(seq) {
    // A sequence with retries lists its steps by attempt.
    const nodes = tree(seq.steps);
    const top = seq.attempts && seq.attempts.length ? byAttempt(nodes, seq.attempts) : nodes;
    for (const x of top) if (x.attempt) x.problem = x.attempt.status !== "passed";
    const wrap = h("div", { id: "steps" });
    const list = h("div");
    const pages = Math.max(1, Math.ceil(top.length / PAGE));
    // Open on the page of the first problem.
    let page = Math.max(0, Math.floor(top.findIndex((n) => n.problem) / PAGE));
    const pager = h("div", { class: "pager" });
    const show = () => {
      list.replaceChildren(...top.slice(page * PAGE, (page + 1) * PAGE).map((x) => item(seq, x)));
      pager.replaceChildren(
        h("button", { disabled: page === 0 || undefined, onclick: () => { page--; show(); } }, "‹"),
        `page ${page + 1} of ${pages}`,
        h("button", { disabled: page >= pages - 1 || undefined, onclick: () => { page++; show(); } }, "›"),
        h("span", { class: "muted" }, `${seq.steps_seen} steps outside repeats` + (seq.steps_left_out ? `; ${seq.steps_left_out} passing steps in the middle are left out (the JSON report and the event file have them)` : "")));
    };
    show();
    wrap.append(pages > 1 ? pager : h("div", { class: "muted" }, `${seq.steps_seen} steps outside repeats`), list);
    return wrap;
  }

  // ---- console waterfall ------------------------------------------------
  function failOnPattern(st) {
    const m = /output matched fail_on pattern (?:"((?:[^"\\]|\\.)*)"|\/(.*?)\/)/.exec(st.message || "");
    if (!m) return null;
    return m[1] !== undefined ? { lit: m[1].replace(/\\(.)/g, "$1") } : { re: m[2] };
  }

  function waterfall(seq) {
    const consoles = (seq.consoles || []).filter((c) => c.head);
    const panel = h("div", { id: "waterfall" });
    for (const c of seq.consoles || []) {
      if (c.head) continue;
      panel.append(h("div", null, h("h3", null, consoleLabel(c.name) + (c.error ? "" : " (no timeline: run with --log-dir for one)")),
        c.error ? h("p", { class: "warn" }, c.error) : null, h("pre", null, c.transcript || "")));
    }
    if (!consoles.length) {
      if (!panel.childNodes.length) panel.append(h("p", { class: "muted" }, "No console in this sequence."));
      return panel;
    }
    // Rows: every record of every console and every step start, in time order.
    const rows = [];
    consoles.forEach((c, lane) => {
      const add = (r) => rows.push({ t: r[0], dir: r[1], off: r[2], n: r[3], text: r[4] || "", lane, c });
      c.head.forEach(add);
      if (c.gap.records) rows.push({ t: c.tail.length ? c.tail[0][0] - 1e-6 : Infinity, dir: "gap", lane, c, text: `… ${c.gap.records} records (${fmtBytes(c.gap.bytes)}) left out here: see ${c.log}` });
      c.tail.forEach(add);
    });
    const failOns = [];
    const stepRows = [];
    const addStep = (st) => {
      if (st.kind === "group" || st.kind === "repeat") return;
      stepRows.push({ t: st.started_ms, dir: "step", st, text: `${ICON[st.status] || "·"} ${st.path} ${st.kind} ${st.name || ""}` });
      const p = failOnPattern(st);
      if (p) failOns.push({ from: st.started_ms, to: st.started_ms + st.duration_ms, p });
    };
    for (const st of seq.steps) {
      addStep(st);
      if (st.repeat) for (const it of [...(st.repeat.failures || []), st.repeat.first, st.repeat.last].filter(Boolean)) (it.detail || []).forEach(addStep);
    }
    rows.push(...stepRows);
    rows.sort((a, b) => a.t - b.t || (a.dir === "step" ? -1 : 0) - (b.dir === "step" ? -1 : 0));
    // Expect matches and fail_on hits, by stream offset.
    for (const r of rows) {
      if (r.dir !== "rx") continue;
      for (const e of r.c.expects || []) {
        if (e[0] < r.off + r.n && e[0] + e[1] > r.off) (r.marks = r.marks || []).push([Math.max(0, e[0] - r.off), Math.min(r.n, e[0] + e[1] - r.off), "expect " + e[2]]);
      }
      for (const f of failOns) {
        if (r.t < f.from - 1 || r.t > f.to + 1) continue;
        const hit = f.p.lit !== undefined ? r.text.includes(f.p.lit) : (() => { try { return new RegExp(f.p.re).test(r.text); } catch (e) { return false; } })();
        if (hit) { r.failon = f.p.lit !== undefined ? f.p.lit : f.p.re; }
      }
    }
    const head = h("div", { class: "wf-head" });
    for (const c of consoles) {
      head.append(h("span", { class: "wf-count", "data-console": c.name, "data-tx": c.counts.tx, "data-rx": c.counts.rx, "data-tx-bytes": c.counts.tx_bytes, "data-rx-bytes": c.counts.rx_bytes },
        h("b", null, c.name + ": "), h("span", { class: "tx" }, `tx ${c.counts.tx} (${fmtBytes(c.counts.tx_bytes)})`), " · ",
        h("span", { class: "rx" }, `rx ${c.counts.rx} (${fmtBytes(c.counts.rx_bytes)})`),
        c.counts.events ? ` · ${c.counts.events} events` : "", c.text_left_out ? h("span", { class: "warn" }, " (text cut: see " + c.log + ")") : ""));
    }
    const search = h("input", { type: "search", placeholder: "search the consoles (Enter: next)", "aria-label": "search the consoles" });
    const only = h("input", { type: "checkbox", id: "wf-only" });
    const found = h("span", { class: "muted" });
    head.append(search, h("label", null, only, " only matching rows"), found);
    const lanes = h("div", { class: "wf-lanes" }, h("span", null, "ms"), h("span", { class: "dirh" }, ""), consoles.map((c) => h("span", { class: "lane" }, c.name)));
    const box = h("div", { class: "wf", tabindex: "0", "data-rows": rows.length });
    const spacer = h("div", { style: "position:relative" });
    box.append(spacer);
    const detail = h("pre", { class: "wf-detail", hidden: true });
    let view = rows;
    let selected = -1;
    const visible = (text) => text.replace(/\r\n|\n/g, "↵").replace(/\r/g, "␍");
    const rowEl = (r, i) => {
      const el = h("div", { class: "wf-row " + r.dir + (r.failon ? " hit" : "") + (r.st && isProblem(r.st.status) ? " " + r.st.status : "") + (i === selected ? " sel" : ""), style: `top:${i * ROW}px`, "data-i": i });
      el.append(h("span", { class: "t" }, r.t.toFixed(3)));
      if (r.dir === "step" || r.dir === "gap") {
        el.append(h("span", { class: "lane" }, r.text));
        return el;
      }
      el.append(h("span", { class: "dir" }, r.dir === "event" ? "ev" : r.dir));
      consoles.forEach((c, lane) => {
        const cell = h("span", { class: "lane" + (lane === r.lane ? " on" : "") });
        if (lane === r.lane) {
          let text = r.text;
          if (r.marks && r.marks.length) {
            let at = 0;
            for (const [a, b, title] of r.marks) {
              if (a < at) continue;
              cell.append(visible(text.slice(at, a)), h("mark", { title }, visible(text.slice(a, b))));
              at = b;
            }
            cell.append(visible(text.slice(at)));
          } else cell.append(visible(text));
          if (r.failon) cell.prepend(h("mark", { class: "failon", title: "fail_on " + r.failon }, "⚠ fail_on"), " ");
        }
        el.append(cell);
      });
      return el;
    };
    const draw = () => {
      spacer.style.height = view.length * ROW + "px";
      const first = Math.max(0, Math.floor(box.scrollTop / ROW) - OVERSCAN);
      const last = Math.min(view.length, Math.ceil((box.scrollTop + box.clientHeight) / ROW) + OVERSCAN);
      const frag = [];
      for (let i = first; i < last; i++) frag.push(rowEl(view[i], i));
      spacer.replaceChildren(...frag);
    };
    box.addEventListener("scroll", () => requestAnimationFrame(draw));
    box.addEventListener("click", (e) => {
      const el = e.target.closest(".wf-row");
      if (!el) return;
      selected = Number(el.dataset.i);
      const r = view[selected];
      detail.hidden = false;
      detail.textContent = r.dir === "step" ? JSON.stringify(r.st, null, 2) :
        `${r.c ? r.c.name + " " : ""}${r.dir} at ${r.t.toFixed(3)} ms` + (r.off !== undefined ? `, stream offset ${r.off}, ${r.n} bytes` : "") + "\n" + r.text;
      draw();
    });
    let hitAt = -1;
    const query = () => search.value.toLowerCase();
    const match = (r) => r.text.toLowerCase().includes(query());
    const apply = () => {
      const q = query();
      view = q && only.checked ? rows.filter(match) : rows;
      found.textContent = q ? `${rows.filter(match).length} matching rows` : "";
      box.dataset.rows = view.length;
      selected = -1;
      draw();
    };
    search.addEventListener("input", () => { hitAt = -1; apply(); });
    only.addEventListener("change", apply);
    search.addEventListener("keydown", (e) => {
      if (e.key !== "Enter" || !query()) return;
      for (let k = 1; k <= view.length; k++) {
        const i = (hitAt + k) % view.length;
        if (match(view[i])) {
          hitAt = selected = i;
          box.scrollTop = Math.max(0, i * ROW - box.clientHeight / 2);
          draw();
          return;
        }
      }
    });
    panel.append(head, lanes, box, detail);
    // Start where the first step that did not pass is.
    const bad = rows.findIndex((r) => r.dir === "step" && isProblem(r.st.status));
    requestAnimationFrame(() => {
      if (bad >= 0) box.scrollTop = Math.max(0, bad * ROW - box.clientHeight / 2);
      draw();
    });
    draw();
    return panel;
  }

  // ---- canvases -----------------------------------------------------------
  function canvas(width, height) {
    const c = h("canvas");
    const dpr = window.devicePixelRatio || 1;
    c.width = width * dpr;
    c.height = height * dpr;
    c.style.width = width + "px";
    c.style.height = height + "px";
    const g = c.getContext("2d");
    g.scale(dpr, dpr);
    g.font = "11px system-ui, sans-serif";
    return [c, g];
  }
  const COLOR = { passed: "#2da44e", failed: "#cf222e", error: "#bf8700", interrupted: "#bf8700", skipped: "#8c959f" };
  let tip;
  function showTip(e, text) {
    if (!tip) { tip = h("div", { class: "tip" }); document.body.append(tip); }
    if (!text) { tip.style.display = "none"; return; }
    tip.textContent = text;
    tip.style.display = "block";
    tip.style.left = e.clientX + 12 + "px";
    tip.style.top = e.clientY + 12 + "px";
  }

  // niceStep is the smallest of 1, 2 and 5 times a power of ten that is at
  // least ms, so that the axis ticks fall on round times.
  function niceStep(ms) {
    const p = Math.pow(10, Math.floor(Math.log10(Math.max(ms, 1e-3))));
    for (const m of [1, 2, 5, 10]) if (m * p >= ms) return m * p;
    return 10 * p;
  }

  function gantt(seq, width) {
    // Rows: the steps in tree order, each at its depth.
    const rows = [];
    const walk = (n, depth) => {
      if (n.step) rows.push({ st: n.step, depth });
      for (const k of n.kids) walk(k, depth + 1);
    };
    tree(seq.steps).forEach((n) => walk(n, 0));
    const wrap = h("div", { class: "gantt-wrap", id: "gantt" });
    const RH = 16, LABEL = 260, H = 420;
    const [c, g] = canvas(width, H);
    const spacer = h("div", { style: `height:${rows.length * RH + 24}px` });
    wrap.append(c, spacer);
    const end = rows.reduce((m, r) => Math.max(m, r.st.started_ms + r.st.duration_ms), Math.max(seq.duration_ms, 1));
    const x = (ms) => LABEL + (ms / end) * (width - LABEL - 10);
    const draw = () => {
      const top = wrap.scrollTop;
      g.clearRect(0, 0, width, H);
      g.fillStyle = "#fff";
      g.fillRect(0, 0, width, H);
      g.strokeStyle = "#e3e6eb";
      g.fillStyle = "#667085";
      // Ticks at round times, as many as their labels fit, each label
      // centred on its line and kept inside the axis.
      const roomy = g.measureText(fmtMS(end * 0.999)).width + 16;
      const step = niceStep(end / Math.max(1, Math.floor((width - LABEL - 10) / roomy)));
      const placed = [];
      for (let ms = 0; ms <= end; ms += step) {
        g.beginPath(); g.moveTo(x(ms), 18); g.lineTo(x(ms), H); g.stroke();
        const label = fmtMS(ms), w = g.measureText(label).width;
        const at = Math.min(Math.max(x(ms) - w / 2, LABEL - 4), width - w - 4);
        g.fillText(label, at, 12);
        placed.push([at, at + w]);
      }
      // Where the labels went, for the page's own tests.
      c.dataset.axis = JSON.stringify({ width, labels: placed });
      const first = Math.floor(top / RH);
      for (let i = first; i < Math.min(rows.length, first + Math.ceil(H / RH)); i++) {
        const r = rows[i], y = 22 + (i - first) * RH;
        g.fillStyle = "#1d2330";
        g.fillText((" ".repeat(r.depth * 2) + r.st.path + " " + r.st.kind + " " + (r.st.name || "")).slice(0, 44), 4, y + 10);
        g.fillStyle = COLOR[r.st.status] || "#8c959f";
        if (r.st.kind === "group" || r.st.kind === "repeat") g.globalAlpha = 0.35;
        g.fillRect(x(r.st.started_ms), y + 2, Math.max(1.5, x(r.st.started_ms + r.st.duration_ms) - x(r.st.started_ms)), RH - 5);
        g.globalAlpha = 1;
      }
    };
    wrap.addEventListener("scroll", () => requestAnimationFrame(draw));
    c.addEventListener("mousemove", (e) => {
      const rect = c.getBoundingClientRect();
      const i = Math.floor(wrap.scrollTop / RH) + Math.floor((e.clientY - rect.top - 22) / RH);
      const r = rows[i];
      showTip(e, r ? `${r.st.path} ${r.st.kind} ${r.st.name || ""}: +${fmtMS(r.st.started_ms)}, ${fmtMS(r.st.duration_ms)}, ${r.st.status}` : "");
    });
    c.addEventListener("mouseleave", (e) => showTip(e, ""));
    draw();
    return wrap;
  }

  // lanes draws each parallel: step as one lane per branch over the
  // step's time: its branches' steps as bars on the run's one clock, and
  // each barrier crossing as a line across the lanes at the time the
  // branches left it.
  function lanes(seq, width) {
    const pars = (seq.steps || []).filter((st) => st.kind === "parallel");
    if (!pars.length) return null;
    const box = h("section", { class: "panel", id: "lanes" }, h("h2", null, "Parallel branches"));
    const LH = 22, LABEL = 140, TOP = 30;
    for (const p of pars) {
      const names = (p.data && p.data.branches) || [];
      const rows = names.map((name) => ({
        name,
        steps: seq.steps.filter((st) => st.path.startsWith(p.path + "." + name + ".") && st.kind !== "group" && st.kind !== "branch"),
      }));
      const marks = new Map();
      for (const r of rows) {
        for (const st of r.steps) {
          const d = st.data || {};
          if (st.kind === "barrier" && d.released_ms != null) marks.set(d.barrier + "#" + d.crossing, { ms: d.released_ms, name: d.barrier });
        }
      }
      const H = TOP + rows.length * LH + 8;
      const [c, g] = canvas(width, H);
      const t0 = p.started_ms, span = Math.max(p.duration_ms, 0.001);
      const x = (ms) => LABEL + ((ms - t0) / span) * (width - LABEL - 10);
      g.fillStyle = "#fff"; g.fillRect(0, 0, width, H);
      g.fillStyle = "#667085";
      g.fillText(`+${fmtMS(t0)}`, LABEL, 12);
      const end = `+${fmtMS(t0 + span)}`;
      g.fillText(end, width - 10 - g.measureText(end).width, 12);
      rows.forEach((r, i) => {
        const y = TOP + i * LH;
        g.fillStyle = i % 2 ? "#f6f8fa" : "#fff";
        g.fillRect(LABEL, y, width - LABEL - 10, LH);
        g.fillStyle = "#1d2330";
        g.fillText(r.name.slice(0, 20), 4, y + 14);
        for (const st of r.steps) {
          g.fillStyle = COLOR[st.status] || "#8c959f";
          if (st.kind === "repeat") g.globalAlpha = 0.35;
          g.fillRect(x(st.started_ms), y + 4, Math.max(1.5, x(st.started_ms + st.duration_ms) - x(st.started_ms)), LH - 8);
          g.globalAlpha = 1;
        }
      });
      g.strokeStyle = "#6f42c1";
      g.fillStyle = "#6f42c1";
      g.setLineDash([4, 3]);
      for (const m of marks.values()) {
        g.beginPath(); g.moveTo(x(m.ms), TOP - 6); g.lineTo(x(m.ms), H - 4); g.stroke();
        g.fillText(m.name, x(m.ms) + 3, TOP - 8);
      }
      g.setLineDash([]);
      c.dataset.path = p.path;
      c.dataset.lanes = String(rows.length);
      c.dataset.barriers = String(marks.size);
      c.addEventListener("mousemove", (e) => {
        const rect = c.getBoundingClientRect();
        const r = rows[Math.floor((e.clientY - rect.top - TOP) / LH)];
        const ms = t0 + ((e.clientX - rect.left - LABEL) / (width - LABEL - 10)) * span;
        const st = r && r.steps.find((s) => ms >= s.started_ms && ms <= s.started_ms + s.duration_ms);
        showTip(e, st ? `[${r.name}] ${st.path} ${st.kind} ${st.name || ""}: +${fmtMS(st.started_ms)}, ${fmtMS(st.duration_ms)}, ${st.status}` : "");
      });
      c.addEventListener("mouseleave", (e) => showTip(e, ""));
      box.append(h("div", { class: "lanes", "data-path": p.path },
        h("h3", null, `step ${p.path} ${p.name || "parallel"}`), c));
    }
    return box;
  }

  function histogram(j, width) {
    const H = 180;
    const [c, g] = canvas(width, H);
    const maxC = Math.max(...j.bins, 1);
    const x = (ms) => 40 + ((ms - j.lo_ms) / (j.width_ms * j.bins.length)) * (width - 50);
    g.fillStyle = "#fff"; g.fillRect(0, 0, width, H);
    g.fillStyle = "#0b63c5";
    j.bins.forEach((n, i) => {
      if (!n) return;
      const bh = (n / maxC) * (H - 40);
      const x0 = x(j.lo_ms + i * j.width_ms);
      g.fillRect(x0, H - 20 - bh, Math.max(1, x(j.lo_ms + (i + 1) * j.width_ms) - x0 - 1), bh);
    });
    g.fillStyle = "#667085";
    for (let i = 0; i <= 4; i++) {
      const ms = j.lo_ms + (j.width_ms * j.bins.length * i) / 4;
      g.fillText(ms.toFixed(3), x(ms) - 14, H - 6);
    }
    g.fillText(String(maxC), 4, 24);
    if (j.period_ms) {
      g.strokeStyle = "#cf222e"; g.beginPath(); g.moveTo(x(j.period_ms), 10); g.lineTo(x(j.period_ms), H - 20); g.stroke();
      g.fillStyle = "#cf222e"; g.fillText("every " + j.period_ms + " ms", x(j.period_ms) + 4, 14);
    }
    return c;
  }

  function jitters(seq, width) {
    if (!(seq.jitter || []).length) return null;
    return h("section", { class: "panel", id: "jitter" }, h("h2", null, "Periods of timed repeats"),
      h("div", { class: "grid2" }, seq.jitter.map((j) => {
        const dev = (v) => j.period_ms ? ` (${v - j.period_ms >= 0 ? "+" : ""}${(v - j.period_ms).toFixed(3)})` : "";
        return h("div", { class: "jitter", "data-path": j.path },
          h("h3", null, `repeat ${j.path} ${j.name || ""}: every ${j.period_ms ? j.period_ms + " ms" : "?"}`),
          histogram(j, Math.min(620, width)),
          h("table", null,
            h("tr", null, ["periods", "min", "p50", "p90", "p99", "max", "latest start"].map((t) => h("th", null, t))),
            h("tr", null, h("td", null, j.n), [j.min_ms, j.p50_ms, j.p90_ms, j.p99_ms, j.max_ms].map((v) => h("td", { class: "mono" }, v.toFixed(3) + dev(v))),
              h("td", { class: "mono" }, j.max_late_us !== undefined ? j.max_late_us + " µs late" : ""))),
          h("div", { class: "muted" }, "ms from one iteration's start to the next" + (j.exact ? "" : `; percentiles to ${j.width_ms.toFixed(3)} ms`)));
      })));
  }

  function plot(s, width, end) {
    const H = 170;
    const [c, g] = canvas(width, H);
    const pts = s.points;
    const lo = s.min, hi = s.max === s.min ? s.min + 1 : s.max;
    const t0 = 0, t1 = Math.max(end, pts.length ? pts[pts.length - 1][0] : 1);
    const x = (t) => 80 + ((t - t0) / (t1 - t0 || 1)) * (width - 90);
    const y = (v) => H - 20 - ((v - lo) / (hi - lo)) * (H - 40);
    g.fillStyle = "#fff"; g.fillRect(0, 0, width, H);
    g.fillStyle = "#667085";
    const hex = (v) => "0x" + Math.round(v).toString(16);
    g.fillText(hex(s.max), 4, y(hi) + 4); g.fillText(hex(s.min), 4, y(lo));
    g.fillText(fmtMS(t0), x(t0), H - 4); g.fillText(fmtMS(t1), x(t1) - 40, H - 4);
    g.strokeStyle = "#0b63c5"; g.lineWidth = 1.5; g.beginPath();
    pts.forEach(([t, v], i) => {
      if (i === 0) g.moveTo(x(t), y(v));
      else { g.lineTo(x(t), y(pts[i - 1][1])); g.lineTo(x(t), y(v)); }
    });
    g.stroke();
    g.fillStyle = "#0b63c5";
    if (pts.length <= 200) pts.forEach(([t, v]) => g.fillRect(x(t) - 2, y(v) - 2, 4, 4));
    return c;
  }

  // measurePlot draws a measurement's values in the order measured, its
  // limits dashed; on a merged page, bounds are the shards, each from
  // the ordinal of its first value, drawn as boundaries.
  function measurePlot(m, width, bounds) {
    const H = 170;
    const [c, g] = canvas(width, H);
    const pts = m.points || [];
    let lo = m.min, hi = m.max;
    if (m.limit_min !== undefined) lo = Math.min(lo, m.limit_min);
    if (m.limit_max !== undefined) hi = Math.max(hi, m.limit_max);
    if (hi === lo) hi = lo + 1;
    const n = Math.max(m.n - 1, 1);
    const x = (i) => 80 + (i / n) * (width - 90);
    const y = (v) => H - 20 - ((v - lo) / (hi - lo)) * (H - 40);
    g.fillStyle = "#fff"; g.fillRect(0, 0, width, H);
    g.fillStyle = "#667085";
    g.fillText(String(+hi.toPrecision(6)), 4, y(hi) + 4); g.fillText(String(+lo.toPrecision(6)), 4, y(lo));
    g.fillText("1", x(0), H - 4); g.fillText(String(m.n), x(n) - 30, H - 4);
    g.strokeStyle = "#c01b1b"; g.setLineDash([4, 3]);
    for (const l of [m.limit_min, m.limit_max]) {
      if (l === undefined) continue;
      g.beginPath(); g.moveTo(80, y(l)); g.lineTo(width - 10, y(l)); g.stroke();
    }
    g.strokeStyle = "#98a2b3";
    for (const b of bounds || []) {
      g.beginPath(); g.moveTo(x(b.from), 10); g.lineTo(x(b.from), H - 16); g.stroke();
      // A label that would leave the canvas goes left of its line.
      const w = g.measureText(b.label).width;
      g.fillText(b.label, x(b.from) + 3 + w > width ? x(b.from) - 3 - w : x(b.from) + 3, 10);
    }
    g.setLineDash([]);
    g.strokeStyle = "#0b63c5"; g.lineWidth = 1.5; g.beginPath();
    pts.forEach(([i, v], k) => { if (k === 0) g.moveTo(x(i), y(v)); else g.lineTo(x(i), y(v)); });
    g.stroke();
    g.fillStyle = "#0b63c5";
    if (pts.length <= 200) pts.forEach(([i, v]) => g.fillRect(x(i) - 2, y(v) - 2, 4, 4));
    return c;
  }

  function measurements(seq, width) {
    const ms = seq.measurements || [];
    if (!ms.length) return null;
    const num = (v) => String(+v.toPrecision(12));
    const unit = (m, v) => v === undefined ? "" : num(v) + (m.unit ? " " + m.unit : "");
    return h("section", { class: "panel", id: "measurements" }, h("h2", null, "Measurements"),
      h("table", { class: "measurements" },
        h("tr", null, ["measurement", "limits", "values", "passed", "failed", "min", "max", "last"].map((t) => h("th", null, t))),
        ms.map((m) => h("tr", { "data-measurement": m.name, class: m.failed ? "bad" : "" },
          h("td", null, m.name), h("td", { class: "mono" }, m.limits || ""), h("td", null, m.count), h("td", null, m.passed), h("td", null, m.failed),
          h("td", { class: "mono" }, m.n ? unit(m, m.min) : ""), h("td", { class: "mono" }, m.n ? unit(m, m.max) : ""),
          h("td", { class: "mono" }, m.last + (m.unit && m.n ? " " + m.unit : ""))))),
      h("div", { class: "grid2" }, ms.filter((m) => m.n >= 2).map((m) => h("div", { class: "series", "data-measurement": m.name, "data-n": m.n },
        h("h3", null, `${m.name}${m.unit ? " (" + m.unit + ")" : ""}: ${m.n} values in the order measured` + (m.stride > 1 ? `, every ${m.stride}th shown` : "")),
        measurePlot(m, Math.min(620, width))))));
  }

  // shardMeasurements shows, on a page merged from shards, each
  // measurement over the whole run: its values per shard, and a plot of
  // them in shard order (repeat iterations in the order measured) with
  // the shards' boundaries.
  function shardMeasurements(D, width) {
    const ms = D.shard_measurements || [];
    if (!D.merged) return null;
    const num = (v) => v === undefined ? "" : String(+v.toPrecision(12));
    const unit = (m, v) => v === undefined ? "" : num(v) + (m.unit ? " " + m.unit : "");
    const from = D.merged.map((r) => r.file + " (" + (r.shard ? "shard " + r.shard + ", " : "") + r.sequences + (r.sequences === 1 ? " sequence)" : " sequences)"));
    return h("section", { class: "panel", id: "shard-measurements" }, h("h2", null, "Measurements over shards"),
      h("div", { class: "muted" }, `merged from ${D.merged.length} ${D.merged.length === 1 ? "report" : "reports"}: ${from.join(", ")}`),
      ms.length ? h("table", { class: "measurements" },
        h("tr", null, ["measurement", "shard", "limits", "values", "passed", "failed", "min", "max"].map((t) => h("th", null, t))),
        ms.flatMap((m) => (m.shards || []).map((sp, k) => h("tr", { "data-measurement": m.name, "data-shard": sp.label, class: sp.failed ? "bad" : "" },
          h("td", null, k === 0 ? m.name : ""), h("td", null, sp.label), h("td", { class: "mono" }, m.limits || ""), h("td", null, sp.count),
          h("td", null, sp.passed), h("td", null, sp.failed), h("td", { class: "mono" }, unit(m, sp.min)), h("td", { class: "mono" }, unit(m, sp.max)))))) :
        h("p", { class: "muted" }, "No sequence measured anything."),
      h("div", { class: "grid2" }, ms.filter((m) => m.n >= 2).map((m) => h("div", { class: "series", "data-measurement": m.name, "data-n": m.n, "data-shards": (m.shards || []).length },
        h("h3", null, `${m.name}${m.unit ? " (" + m.unit + ")" : ""}: ${m.n} values over ${(m.shards || []).length} ${(m.shards || []).length === 1 ? "shard" : "shards"}, in shard order` + (m.stride > 1 ? `, every ${m.stride}th shown` : "")),
        measurePlot(m, Math.min(620, width), m.shards)))));
  }

  function memory(seq, width) {
    if (!(seq.series || []).length) return null;
    return h("section", { class: "panel", id: "memory" }, h("h2", null, "Memory values over time"),
      h("div", { class: "grid2" }, seq.series.map((s) => h("div", { class: "series", "data-address": s.address, "data-n": s.n },
        h("h3", null, `${s.label || s.address} (${s.address}, ${s.kind}): ${s.n} values` + (s.stride > 1 ? `, every ${s.stride}th shown` : "")),
        plot(s, Math.min(620, width), seq.duration_ms)))));
  }

  function pictureFigure(p, i, checks) {
    const img = h("img", { src: p.src, alt: p.name });
    const box = h("div", { class: "picbox" }, img);
    const fig = h("figure", { class: "pic", "data-picture": i }, box);
    const mine = checks.filter((c) => c.picture === i);
    const cap = h("figcaption", null, p.name, mine.map((c) => h("div", null,
      `region ${c.region.join(",")}: brightness ${c.brightness}, colour ${c.color}` + (c.color_distance !== undefined ? ` (distance ${c.color_distance})` : "") + (c.passed === false ? " ✗" : " ✓"))));
    fig.append(cap);
    const overlay = () => {
      if (!mine.length) return;
      const ns = "http://www.w3.org/2000/svg";
      const svg = document.createElementNS(ns, "svg");
      svg.setAttribute("viewBox", `0 0 ${img.naturalWidth} ${img.naturalHeight}`);
      svg.setAttribute("preserveAspectRatio", "none");
      // Image pixels per pixel on the page: labels keep their size.
      const k = img.naturalWidth / (img.clientWidth || img.naturalWidth);
      for (const c of mine) {
        const [rx, ry, rw, rh] = c.region;
        const colour = c.passed === false ? "#ff3b3b" : "#ffd400";
        const r = document.createElementNS(ns, "rect");
        Object.entries({ x: rx, y: ry, width: rw, height: rh, fill: "none", stroke: colour, "stroke-width": 2, "vector-effect": "non-scaling-stroke" })
          .forEach(([a, v]) => r.setAttribute(a, v));
        const t = document.createElementNS(ns, "text");
        Object.entries({ x: rx, y: Math.max(13 * k, ry - 4 * k), fill: colour, "font-size": 13 * k, "paint-order": "stroke", stroke: "#000", "stroke-width": 3 * k })
          .forEach(([a, v]) => t.setAttribute(a, v));
        t.textContent = `${c.brightness} ${c.color}`;
        svg.append(r, t);
      }
      box.append(svg);
    };
    if (img.complete && img.naturalWidth) overlay(); else img.addEventListener("load", overlay);
    return fig;
  }

  function pictures(seq) {
    const figs = [];
    for (const st of seq.steps) {
      for (const a of st.attachments || []) {
        const i = Number(a.slice(1));
        const p = picture(i);
        if (p) figs.push(h("div", null, h("div", { class: "muted" }, `${st.path} ${st.name || st.kind}`), pictureFigure(p, i, (st.data && st.data.checks) || [])));
      }
    }
    if (!figs.length) return null;
    return h("section", { class: "panel", id: "pictures" }, h("h2", null, "Pictures"), figs);
  }

  function builds(seq) {
    const rows = seq.steps.filter((s) => (s.kind === "build" || s.kind === "upload" || s.kind === "clean") && s.data);
    if (!rows.length) return null;
    const bar = (used, total, pct) => total ? h("span", null, h("span", { class: "bar" }, h("i", { style: `width:${Math.min(100, pct)}%` })), ` ${used}/${total} B (${pct.toFixed(1)}%)`) : used !== undefined ? `${used} B` : "";
    return h("section", { class: "panel", id: "builds" }, h("h2", null, "Builds"), rows.map((s) => {
      const d = s.data, diag = d.diagnostic || {};
      return h("div", { class: "build" },
        h("h3", null, h("span", { class: "st " + s.status }, ICON[s.status] || "?"), ` ${s.path} ${s.kind} ${s.name || ""} — ${d.summary || ""}`),
        h("dl", { class: "kv" },
          h("dt", null, "result"), h("dd", null, (d.ok ? "ok" : "failed: " + d.class) + `, exit ${d.exit_code}, ${fmtMS(num(d.duration_ms) || 0)}`),
          d.flash_bytes !== undefined ? [h("dt", null, "flash"), h("dd", null, bar(d.flash_bytes, d.flash_total, num(d.flash_percent) || 0))] : null,
          d.ram_bytes !== undefined ? [h("dt", null, "ram"), h("dd", null, bar(d.ram_bytes, d.ram_total, num(d.ram_percent) || 0))] : null,
          d.text !== undefined ? [h("dt", null, "sections"), h("dd", { class: "mono" }, `text ${d.text}, data ${d.data}, bss ${d.bss}`)] : null,
          diag.message ? [h("dt", null, "diagnostic"), h("dd", { class: "mono" }, `${diag.file || ""}${diag.line ? ":" + diag.line : ""}${diag.column ? ":" + diag.column : ""} ${diag.message}`)] : null,
          d.command ? [h("dt", null, "command"), h("dd", { class: "mono" }, [].concat(d.command).join(" "))] : null),
        d.tail ? h("details", { open: !d.ok || undefined }, h("summary", null, "output (end)"), h("pre", null, d.tail)) : null);
    }));
  }

  // ---- a sequence ---------------------------------------------------------
  function sequence(seq) {
    const width = Math.max(400, Math.min(1360, document.getElementById("app").clientWidth - 40));
    const head = h("section", { class: "panel", id: "sequence", "data-status": seq.status },
      h("h2", null, h("span", { class: "badge " + (seq.interrupted ? "interrupted" : seq.status) }, seq.interrupted ? "INTERRUPTED" : seq.status.toUpperCase()), " ", seq.name),
      h("div", { class: "muted mono" }, seq.file),
      h("div", null, `${seq.counted || seq.counts.total + " steps"}: ${seq.counts.passed} passed, ${seq.counts.failed} failed, ${seq.counts.error + seq.counts.interrupted} error, ${seq.counts.skipped} skipped in ${fmtMS(seq.duration_ms)}; started ${seq.started_at}`),
      seq.error ? h("pre", { class: "warn" }, seq.error) : null,
      seq.flaky ? h("div", null, h("span", { class: "badge flaky", id: "flaky" }, "FLAKY"), " passed only after a retry") : null,
      seq.attempts ? attemptsBody(seq.attempts) : null);
    return [head,
      h("section", { class: "panel" }, h("h2", null, "Steps"), stepTree(seq)),
      h("section", { class: "panel" }, h("h2", null, "Consoles"), waterfall(seq)),
      h("section", { class: "panel" }, h("h2", null, "Timeline"), gantt(seq, width - 34)),
      lanes(seq, width - 34), jitters(seq, width), measurements(seq, width), memory(seq, width), pictures(seq), builds(seq)];
  }

  function render(D) {
    const app = document.getElementById("app");
    const body = h("div", { id: "seq" });
    const tabs = h("div", { class: "tabs" });
    const pick = (i) => {
      [...tabs.children].forEach((b, k) => b.classList.toggle("on", k === i));
      body.replaceChildren(...sequence(D.sequences[i]).filter(Boolean));
    };
    D.sequences.forEach((s, i) => tabs.append(h("button", { onclick: () => pick(i), "data-status": s.status }, h("span", { class: "st " + s.status }, ICON[s.status] || "?"), " " + s.name)));
    const width = Math.max(400, Math.min(1360, app.clientWidth - 40));
    app.replaceChildren(summary(D), benches(D) || "", shardMeasurements(D, width) || "", D.sequences.length > 1 ? tabs : "", body);
    if (D.sequences.length) pick(Math.max(0, D.sequences.findIndex((s) => s.status !== "passed" && s.status !== "skipped")));
    else body.append(h("p", { class: "panel" }, "No sequence ran."));
  }

  window.hilrunReady = load().then((D) => {
    window.hilrunData = D;
    render(D);
    document.body.dataset.state = "ready";
    return true;
  }).catch((e) => {
    document.body.dataset.state = "error";
    document.getElementById("app").replaceChildren(h("p", { class: "warn" }, "The report could not be shown: " + e));
    console.error("hilrun report:", e);
    return false;
  });
})();
