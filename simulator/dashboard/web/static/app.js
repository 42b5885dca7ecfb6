// The simulator's dashboard (issue 30): plain JavaScript, no library, no
// build step. Every text from the server goes in through textContent (el),
// never as HTML. Reads and changes go to /ui/api/..., which hands them to
// the control API; changes carry the page's CSRF token.
"use strict";

const csrf = document.querySelector('meta[name="csrf-token"]').content;
const statusLine = document.getElementById("status");

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// api calls /ui/api + path and answers the JSON; a refusal throws an Error
// whose message is the control API's own.
async function api(method, path, body) {
  const init = { method, credentials: "same-origin", headers: {} };
  if (method !== "GET") init.headers["X-CSRF-Token"] = csrf;
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch("/ui/api" + path, init);
  if (res.status === 401) { location.href = "/ui/login"; throw new Error("log in again"); }
  let data = null;
  try { data = await res.json(); } catch (_) { /* not JSON */ }
  if (!res.ok) throw new Error((data && data.error) || res.status + " " + res.statusText);
  return data;
}

function say(node, text, cls) { node.textContent = text; node.className = cls || ""; }
function fail(err) { say(statusLine, err.message, "error"); }
function shortId(id) { return id && id.length > 18 ? id.slice(0, 18) + "…" : id; }
function secs(ms) { return (ms / 1000).toFixed(1) + " s"; }
function time(t) { return new Date(t).toISOString().replace("T", " ").replace("Z", " UTC"); }
function sectionLink(sec) {
  const id = String(sec || "").replace("§", "");
  return el("a", { href: "/ui/spec#s-" + id, title: "Spec section " + id }, sec);
}
function accountLabel(a) { return a.name ? a.name + " (" + shortId(a.accountId) + ")" : a.accountId; }

async function fillAccounts(select, keepFirst) {
  const ov = await api("GET", "/overview");
  if (!keepFirst) select.replaceChildren();
  for (const a of ov.accounts) select.append(el("option", { value: a.accountId }, accountLabel(a)));
  return ov;
}

document.getElementById("logout").addEventListener("click", async () => {
  await fetch("/ui/logout", { method: "POST", credentials: "same-origin", headers: { "X-CSRF-Token": csrf } });
  location.href = "/ui/login";
});

// ---- Overview ----
function chart(counts, limit) {
  const w = 150, h = 36, bw = w / counts.length;
  const top = Math.max(limit, ...counts, 1);
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`); svg.setAttribute("width", w); svg.setAttribute("height", h);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "Requests per minute, oldest first: " + counts.join(", "));
  const line = document.createElementNS(svg.namespaceURI, "line");
  const ly = h - (limit / top) * (h - 2);
  Object.entries({ x1: 0, x2: w, y1: ly, y2: ly, stroke: "#a4161a", "stroke-dasharray": "3 2" }).forEach(([k, v]) => line.setAttribute(k, v));
  counts.forEach((c, i) => {
    const r = document.createElementNS(svg.namespaceURI, "rect");
    const bh = (c / top) * (h - 2);
    Object.entries({ x: i * bw + 1, y: h - bh, width: bw - 2, height: bh, fill: c > limit ? "#a4161a" : "#0b4f9c" }).forEach(([k, v]) => r.setAttribute(k, v));
    svg.append(r);
  });
  svg.append(line);
  return el("div", { class: "chart" }, svg, el("div", { class: "muted" }, "this minute: " + counts[counts.length - 1] + " (limit " + limit + ")"));
}

function faultText(f) {
  const extra = f.status ? " " + f.status : f.retryAfter !== undefined && f.kind === "rate-limit" ? " retry " + f.retryAfter + "s" : f.delay ? " " + f.delay : "";
  return f.kind + extra + " on " + f.operation + " ×" + f.remaining;
}

async function overview() {
  const body = document.querySelector("#accounts tbody");
  const refresh = async () => {
    try {
      const ov = await api("GET", "/overview");
      const rows = ov.accounts.map((a) => {
        const full = a.remaining === 0;
        const budget = el("div", { class: "budget", "data-account": a.accountId },
          el("div", { class: "meter" + (full ? " full" : ""), role: "meter", "aria-valuemin": 0, "aria-valuemax": a.limit, "aria-valuenow": a.used, "aria-label": "Budget used" },
            el("span", { style: `width:${Math.min(100, (100 * a.used) / a.limit)}%` })),
          el("strong", { class: "used" }, a.used + " / " + a.limit),
          full ? el("div", { class: "refused" }, "limit reached: next request allowed in " + secs(a.freesInMs)) : null,
          a.used > 0 ? el("div", { class: "muted" }, "window empty in " + secs(a.emptyInMs)) : null,
          el("div", { class: "muted" }, "clock " + time(a.clock)));
        const findings = a.findings.length === 0 ? el("span", { class: "ok" }, "report clean") :
          el("ul", { class: "findings" }, a.findings.map((f) => el("li", { class: "sev-" + f.severity },
            sectionLink(f.section), " ", el("a", { href: "/ui/report?account=" + encodeURIComponent(a.accountId) }, f.title), " ×" + f.count)));
        const faults = a.faults.length === 0 ? el("span", { class: "muted" }, "no fault pending") :
          el("ul", { class: "findings" }, a.faults.map((f) => el("li", {}, faultText(f))));
        return el("tr", { "data-account": a.accountId },
          el("th", { scope: "row" }, el("div", {}, a.name || "(unnamed)"), el("code", {}, a.accountId),
            el("div", { class: "muted" }, (a.throwaway ? "throwaway" : "configured") + " · plays " + a.profile)),
          el("td", {}, budget), el("td", {}, chart(a.perMinute, a.limit)), el("td", { class: "account-findings" }, findings), el("td", {}, faults));
      });
      body.replaceChildren(...rows);
      const g = document.getElementById("global-faults");
      g.textContent = ov.globalFaults.length ? "Faults for every account: " + ov.globalFaults.map(faultText).join("; ") : "";
      say(statusLine, "");
    } catch (err) { fail(err); }
  };
  await refresh();
  setInterval(refresh, 2000);
}

// ---- Journal ----
async function journal() {
  const body = document.querySelector("#journal tbody");
  const fAccount = document.getElementById("f-account"), fOp = document.getElementById("f-operation"), fStatus = document.getElementById("f-status");
  const streamState = document.getElementById("stream-state");
  const ov = await fillAccounts(fAccount, true);
  for (const op of ov.operations) fOp.append(el("option", { value: op }, op));
  const entries = new Map(); // requestId -> entry
  const matches = (e) => {
    const acc = e.accountId || e.attributedTo || "";
    if (fAccount.value && acc !== fAccount.value) return false;
    if (fOp.value && e.operation !== fOp.value) return false;
    const s = fStatus.value;
    if (s === "429") return e.status === 429;
    if (s) return String(e.status)[0] === s;
    return true;
  };
  const row = (e, fresh) => el("tr", { class: fresh ? "new" : "", "data-request-id": e.requestId, "data-status": e.status, "data-operation": e.operation || "" },
    el("td", { class: "mono" }, new Date(e.time).toISOString().slice(11, 23)),
    el("td", {}, shortId(e.accountId || (e.attributedTo ? e.attributedTo + " (attributed)" : "—"))),
    el("td", {}, el("button", { type: "button", class: "link", onclick: () => open(e.requestId) }, e.method + " " + (e.operation || e.path))),
    el("td", { class: "status-" + (e.status === 429 ? "429" : String(e.status)[0]) }, e.status),
    el("td", { class: "mono" }, Number(e.latencyMs).toFixed(1)),
    el("td", {}, e.fault || ""));
  const redraw = () => {
    const list = [...entries.values()].filter(matches).reverse();
    body.replaceChildren(...list.map((e) => row(e, false)));
  };
  [fAccount, fOp, fStatus].forEach((s) => s.addEventListener("change", redraw));
  const detail = document.getElementById("entry"), detailBody = document.getElementById("entry-body");
  // pretty shows a body: JSON indented when it is JSON, as sent otherwise.
  const pretty = (m) => {
    if (!m.truncated && m.body) { try { return JSON.stringify(JSON.parse(m.body), null, 2); } catch (_) { /* not JSON */ } }
    return m.body;
  };
  const headerLines = (hs) => hs.map((h) => h.name + ": " + h.value);
  // body shows one side's body, or says there was none, and why part of it is missing.
  const bodyOf = (m, id) => [
    m.body ? el("h4", {}, "Body, " + m.bodyBytes + " bytes" + (m.truncated ? " (part kept)" : "")) : null,
    m.body ? el("pre", { id, class: "body" }, pretty(m)) : m.note ? null : el("p", { id, class: "muted" }, "No body."),
    m.note ? el("p", { id: id + "-note", class: "muted note" }, "Body " + m.note + ".") : null,
  ];
  let opening = 0;
  async function open(id) {
    const mine = ++opening;
    let e = entries.get(id), d = null, gone = "";
    try { d = await api("GET", "/journal/" + encodeURIComponent(id)); } catch (err) { gone = err.message; }
    if (mine !== opening) return; // another row was chosen meanwhile
    if (!e && d && d.entry) e = d.entry;
    if (!e) { say(statusLine, "Request " + id + " is no longer in the journal (it keeps the latest requests only).", "error"); return; }
    body.querySelectorAll("tr.selected").forEach((r) => r.classList.remove("selected"));
    const r = body.querySelector(`tr[data-request-id="${CSS.escape(id)}"]`);
    if (r) r.classList.add("selected");
    let parts;
    if (d) {
      parts = [
        el("h3", {}, "Request"), el("pre", { id: "entry-request" }, e.method + " " + e.path + "\n" + headerLines(d.request.headers).join("\n")),
        bodyOf(d.request, "entry-request-body"),
        el("h3", {}, "Answer"), el("pre", { id: "entry-answer" }, "HTTP " + e.status + "\n" + headerLines(d.answer.headers).join("\n")),
        bodyOf(d.answer, "entry-answer-body"),
      ];
    } else {
      // Only the journal's entry is left: the request line, the credential
      // headers as it keeps them, the status.
      const reqHeaders = [
        "X-Api-Key: " + (e.apiKey || "(none sent)") + "   (masked by the simulator)",
        "X-Api-Secret: ******** (never kept)",
        "X-Account-Id: " + (e.accountId || (e.attributedTo ? "(did not match; attributed to " + e.attributedTo + ")" : "(none matched)")),
      ];
      parts = [
        el("p", { id: "entry-gone", class: "refused" }, "Headers and bodies no longer kept. " + gone),
        el("h3", {}, "Request"), el("pre", { id: "entry-request" }, e.method + " " + e.path + "\n" + reqHeaders.join("\n")),
        el("h3", {}, "Answer"), el("pre", { id: "entry-answer" }, "HTTP " + e.status + "\nX-Request-Id: " + e.requestId),
      ];
    }
    detailBody.replaceChildren(...[
      ...parts.flat(),
      el("p", {}, "Received " + time(e.time) + ", answered in " + Number(e.latencyMs).toFixed(2) + " ms."),
      e.fault ? el("p", { class: "refused" }, "Answered by injected fault " + e.fault + " (" + e.faultId + ").") : null,
      el("p", { class: "muted" }, "The simulator keeps the headers and bodies of its latest requests (the key masked, the secret never, either wherever it appears), and the journal's line of many more."),
    ].filter(Boolean));
    detail.hidden = false;
    document.getElementById("entry-title").textContent = "Request " + e.requestId;
    history.replaceState(null, "", "#req=" + encodeURIComponent(id));
  }
  const wanted = () => { const m = location.hash.match(/^#req=(.+)$/); return m ? decodeURIComponent(m[1]) : ""; };
  // The ring's content first, so a link from a finding finds its request.
  try {
    const j = await api("GET", "/journal?limit=1000");
    for (const e of j.entries.reverse()) entries.set(e.requestId, e);
    redraw();
    if (wanted()) open(wanted());
  } catch (err) { fail(err); }
  const src = new EventSource("/ui/events");
  src.addEventListener("open", () => say(streamState, "live", "ok"));
  src.addEventListener("error", () => say(streamState, "reconnecting…", "error"));
  src.addEventListener("dropped", (ev) => say(streamState, "live; " + JSON.parse(ev.data).dropped + " entries skipped while the page was behind", "error"));
  src.addEventListener("entry", (ev) => {
    const e = JSON.parse(ev.data);
    if (entries.has(e.requestId)) return;
    entries.set(e.requestId, e);
    if (entries.size > 2000) entries.delete(entries.keys().next().value);
    if (matches(e)) {
      body.prepend(row(e, true));
      while (body.rows.length > 2000) body.deleteRow(-1);
    }
  });
}

// ---- Client report ----
async function report() {
  const sel = document.getElementById("r-account"), out = document.getElementById("report");
  await fillAccounts(sel, false);
  const want = new URLSearchParams(location.search).get("account");
  if (want) sel.value = want;
  const show = async () => {
    try {
      const r = await api("GET", "/accounts/" + encodeURIComponent(sel.value) + "/report");
      const parts = [el("p", {}, r.requests + " requests since " + time(r.since) + ". Limit " + r.rateLimit + " per " + r.rateWindow + ". ",
        r.clean ? el("strong", { class: "ok" }, "Clean: no finding.") : el("strong", { class: "refused" }, r.findings.length + " findings."))];
      if (r.findings.length) {
        parts.push(el("div", { class: "scroll" }, el("table", { id: "findings" },
          el("thead", {}, el("tr", {}, ["§", "Finding", "Count", "Advice", "Example"].map((h) => el("th", { scope: "col" }, h)))),
          el("tbody", {}, r.findings.map((f) => el("tr", { class: "sev-" + f.severity, "data-kind": f.kind, "data-section": f.section },
            el("td", {}, sectionLink(f.section)),
            el("td", {}, el("strong", {}, f.title), f.detail ? el("div", { class: "muted" }, f.detail) : null, el("div", { class: "muted" }, f.severity)),
            el("td", {}, f.count),
            el("td", {}, f.advice),
            el("td", {}, f.exampleRequestId ? el("a", { href: "/ui/journal#req=" + encodeURIComponent(f.exampleRequestId) }, f.exampleRequestId) : "")))))));
      }
      if (r.specPace) parts.push(el("p", { id: "pace-note", class: "muted" }, el("strong", {}, "Pace under the spec's limit: "), r.specPace.note));
      out.replaceChildren(...parts);
      say(statusLine, "");
    } catch (err) { fail(err); }
  };
  sel.addEventListener("change", () => { history.replaceState(null, "", "?account=" + encodeURIComponent(sel.value)); show(); });
  await show();
  setInterval(show, 3000);
}

// ---- Faults and clock ----
async function faults() {
  const ov = await api("GET", "/overview");
  const opSel = document.getElementById("fault-operation"), kindSel = document.getElementById("fault-kind");
  for (const op of ov.operations) opSel.append(el("option", { value: op }, op));
  for (const k of ov.faultKinds) kindSel.append(el("option", { value: k }, k));
  for (const id of ["fault-account", "clock-account"]) {
    for (const a of ov.accounts) document.getElementById(id).append(el("option", { value: a.accountId }, accountLabel(a)));
  }
  const list = document.querySelector("#faults tbody");
  const clockNow = document.getElementById("clock-now"), clockDetail = document.getElementById("clock-detail");
  const refresh = async () => {
    try {
      const [fs, c] = await Promise.all([api("GET", "/faults"), api("GET", "/clock")]);
      list.replaceChildren(...fs.faults.map((f) => el("tr", { "data-fault": f.id },
        el("td", { class: "mono" }, f.id), el("td", {}, f.operation), el("td", {}, f.accountId ? shortId(f.accountId) : "every account"),
        el("td", {}, f.kind), el("td", {}, f.remaining),
        el("td", {}, [f.status ? "status " + f.status : "", f.kind === "rate-limit" ? "retry after " + f.retryAfter + "s" : "", f.delay ? "delay " + f.delay : "",
          f.probability !== undefined && f.probability !== 1 ? "probability " + f.probability : ""].filter(Boolean).join(", ")),
        el("td", {}, el("button", { type: "button", onclick: () => api("DELETE", "/faults/" + encodeURIComponent(f.id)).then(refresh, fail), "aria-label": "Remove fault " + f.id }, "Remove")))));
      clockNow.textContent = time(c.now);
      clockDetail.textContent = "(offset " + c.offset + (c.frozen ? ", frozen" : "") + ")";
    } catch (err) { fail(err); }
  };
  document.getElementById("fault-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = ev.target, req = { operation: f.operation.value, kind: f.kind.value };
    if (f.accountId.value) req.accountId = f.accountId.value;
    for (const n of ["count", "status", "retryAfter"]) if (f[n].value !== "") req[n] = Number(f[n].value);
    if (f.probability.value !== "") req.probability = Number(f.probability.value);
    if (f.delay.value !== "") req.delay = f.delay.value;
    const out = document.getElementById("fault-result");
    try {
      const added = await api("POST", "/faults", req);
      say(out, "Added fault " + added.id + ": " + faultText(added) + ".", "ok");
      refresh();
    } catch (err) { say(out, "Refused: " + err.message, "error"); }
  });
  document.getElementById("faults-clear").addEventListener("click", () => api("DELETE", "/faults").then(refresh, fail));
  document.getElementById("clock-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = ev.target, req = { advance: f.advance.value };
    if (f.accountId.value) req.accountId = f.accountId.value;
    const out = document.getElementById("clock-result");
    try {
      const c = await api("POST", "/clock", req);
      say(out, "Advanced by " + req.advance + (c.accountId ? " for " + c.accountId : "") + ": now " + time(c.now) + ".", "ok");
      refresh();
    } catch (err) { say(out, "Refused: " + err.message, "error"); }
  });
  document.getElementById("reset").addEventListener("click", async () => {
    const out = document.getElementById("reset-result");
    try { await api("POST", "/reset"); say(out, "Reset done.", "ok"); refresh(); } catch (err) { say(out, "Refused: " + err.message, "error"); }
  });
  await refresh();
  setInterval(refresh, 3000);
}

// ---- Profiles ----
async function profiles() {
  const out = document.getElementById("profiles"), all = document.getElementById("show-all");
  const data = await api("GET", "/profiles");
  const draw = () => out.replaceChildren(...data.accounts.map((a) => {
    const rows = a.comparison.rows.filter((r) => all.checked || r.verdict === "differ");
    const show = (v) => (v === null || v === undefined ? "unknown" : JSON.stringify(v));
    return el("section", { class: "profile", "data-account": a.accountId },
      el("h2", {}, accountLabel(a)),
      el("p", {}, "Plays ", el("strong", {}, a.profile || "(unnamed)"), a.digest ? el("code", {}, " " + a.digest) : "",
        ". ", a.differ === 0 ? el("span", { class: "ok" }, "Every choice as the default (" + data.default + ").") :
          el("span", { class: "refused" }, a.differ + (a.differ === 1 ? " choice differs" : " choices differ") + " from the default (" + data.default + ").")),
      rows.length ? el("div", { class: "scroll" }, el("table", {},
        el("thead", {}, el("tr", {}, ["Choice", "§", "Default", "This account", "Verdict"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, rows.map((r) => el("tr", {},
          el("td", {}, el("code", {}, r.choice), el("div", { class: "muted" }, r.title)),
          el("td", {}, sectionLink(r.section)),
          el("td", { class: "mono" }, show(r.a)), el("td", { class: "mono" }, show(r.b)),
          el("td", { class: "verdict-" + r.verdict }, r.verdict)))))) : null);
  }));
  all.addEventListener("change", draw);
  draw();
}

// ---- Spec sections ----
async function specSections() {
  const data = await api("GET", "/spec");
  document.getElementById("sections").replaceChildren(...data.sections.flatMap((s) => [
    el("dt", { id: "s-" + s.id, tabindex: "-1" }, "§" + s.id + " " + s.title),
    el("dd", {},
      el("p", {}, s.normative ? "States rules: the conformance suite checks them (docs/spec-sections.md says what they are)." : "Says no rule of its own: " + (s.why || "") + "."),
      s.findings.length ? el("p", {}, "What the client report holds a client to here:") : null,
      s.findings.length ? el("ul", {}, s.findings.map((f) => el("li", { class: "sev-" + f.severity }, el("strong", {}, f.title), ": ", el("span", { class: "muted" }, f.advice)))) : null),
  ]));
  if (location.hash) { const t = document.getElementById(location.hash.slice(1)); if (t) { t.scrollIntoView(); t.focus(); } }
}

const pages = { overview, journal, report, faults, profile: profiles, spec: specSections };
(pages[document.body.dataset.page] || (async () => {}))().catch(fail);
