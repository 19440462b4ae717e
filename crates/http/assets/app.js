// recd status page: polls /api/overview and renders sessions, topics, controls and incidents.
// No frameworks; DOM is built with createElement/textContent only (topic names are untrusted).
"use strict";

const POLL_MS = 1000;
const FETCH_TIMEOUT_MS = 5000;
const TOKEN_KEY = "recd-token";
const SVG_NS = "http://www.w3.org/2000/svg";
const SPARK_W = 120, SPARK_H = 24;

const $ = (id) => document.getElementById(id);
let token = sessionStorage.getItem(TOKEN_KEY) || "";
const cards = new Map(); // session name -> {card, info, controls, topics}
let presetKey = null;    // preset names currently in the <select>
let timer = null, polling = false, pollAgain = false;

// ---------- small helpers ----------

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function humanBytes(n) {
  if (n === null || n === undefined || !isFinite(n)) return "?";
  const units = ["B", "kB", "MB", "GB", "TB", "PB"];
  let i = 0;
  while (Math.abs(n) >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return (i === 0 ? n.toFixed(0) : n.toFixed(n < 10 ? 2 : 1)) + " " + units[i];
}

function duration(s) {
  s = Math.max(0, Math.floor(s || 0));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  const pad = (v) => String(v).padStart(2, "0");
  return (h ? h + ":" + pad(m) : String(m)) + ":" + pad(sec);
}

const rate = (v) => (v || 0).toFixed((v || 0) >= 100 ? 0 : 1);

const clockTime = (d) => [d.getHours(), d.getMinutes(), d.getSeconds()].map((v) => String(v).padStart(2, "0")).join(":");

function age(ns) {
  if (ns === null || ns === undefined) return "–";
  const s = Math.max(0, (Date.now() - ns / 1e6) / 1000);
  if (s < 10) return s.toFixed(1) + " s ago";
  if (s < 120) return s.toFixed(0) + " s ago";
  if (s < 7200) return (s / 60).toFixed(0) + " min ago";
  return (s / 3600).toFixed(0) + " h ago";
}

function setBanner(text) {
  const b = $("banner");
  b.textContent = text || "";
  b.hidden = !text;
}

function setMessage(text, ok) {
  const m = $("message");
  m.textContent = text;
  m.classList.toggle("error", !ok);
  m.classList.toggle("ok", !!ok);
}

// ---------- token handling ----------

function saveToken(t) {
  token = (t || "").trim();
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
  $("token-state").textContent = token ? "token set" : "no token";
}

function tokenFromFragment() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  if (!params.has("token")) return;
  saveToken(params.get("token"));
  history.replaceState(null, "", location.pathname + location.search);
}

function headers(json) {
  const h = {};
  if (token) h.Authorization = "Bearer " + token;
  if (json) h["Content-Type"] = "application/json";
  return h;
}

// fetch with a timeout so a hung request never stops the poll loop
async function request(path, opts) {
  const ctl = new AbortController();
  const t = setTimeout(() => ctl.abort(), FETCH_TIMEOUT_MS);
  try { return await fetch(path, Object.assign({ cache: "no-store", signal: ctl.signal }, opts)); }
  finally { clearTimeout(t); }
}

// ---------- polling ----------

async function poll() {
  clearTimeout(timer);
  if (polling) { pollAgain = true; return; }
  polling = true;
  try {
    const res = await request("/api/overview", { headers: headers(false) });
    if (res.status === 401) setBanner("This recd needs a token to read");
    else if (!res.ok) setBanner("recd answered " + res.status + " to /api/overview");
    else {
      const data = await res.json();
      setBanner("");
      $("status-line").textContent = "updated " + clockTime(new Date());
      $("status-line").classList.remove("stale");
      render(data);
    }
  } catch (e) {
    // a bug in render must not look like a network problem
    if (e instanceof TypeError && /fetch/i.test(e.message) || e.name === "AbortError") setBanner("recd not reachable");
    else console.error(e);
    $("status-line").classList.add("stale");
  } finally {
    polling = false;
    timer = setTimeout(poll, pollAgain ? 0 : POLL_MS);
    pollAgain = false;
  }
}

// ---------- control actions ----------

const DONE = { start: "Started", stop: "Stopped", pause: "Paused", resume: "Resumed", mark: "Marked", trigger: "Triggered" };

async function act(button, action, body, label) {
  button.disabled = true;
  try {
    const res = await request("/api/" + action, {
      method: "POST", headers: headers(true), body: JSON.stringify(body),
    });
    const data = await res.json().catch(() => null);
    if (res.ok) {
      const incident = data && data.incident;
      setMessage(DONE[action] + " " + label + (incident ? ": incident " + incident.id : ""), true);
      poll();
    } else {
      const why = (data && (data.message || data.error)) || res.statusText || "request failed";
      setMessage(res.status + ": " + why, false);
    }
  } catch (e) {
    setMessage(action + " failed: recd not reachable", false);
  } finally {
    button.disabled = false;
  }
}

function button(text, action, onClick) {
  const b = el("button", "btn btn-" + action, text);
  b.type = "button";
  b.dataset.action = action;
  b.addEventListener("click", () => onClick(b));
  return b;
}

// ---------- header ----------

function renderHeader(o) {
  $("hostname").textContent = o.hostname || "";
  $("version").textContent = o.version ? "v" + o.version : "";
  document.title = "recd " + (o.hostname || "");

  const d = o.disk || {};
  const disk = $("disk");
  const known = d.free_bytes !== null && d.free_bytes !== undefined;
  disk.textContent = "disk " + (d.data_dir || "") + ": " +
    (known ? humanBytes(d.free_bytes) + " free" : "free space unknown") +
    (d.min_free_space ? " (minimum " + humanBytes(d.min_free_space) + ")" : "");
  disk.classList.toggle("warn", known && d.free_bytes < 2 * (d.min_free_space || 0));

  const clock = $("clock");
  clock.hidden = !o.clock_sync;
  clock.textContent = o.clock_sync ? "clock: " + o.clock_sync : "";
  clock.classList.toggle("warn", !!o.clock_sync && o.clock_sync.startsWith("unknown"));

  renderBacklog(o.backlog);

  const up = $("uploads"), u = o.uploads;
  up.hidden = !u;
  up.replaceChildren();
  if (!u) return;
  up.append(el("span", null, "uploads " + (u.enabled ? "→ " : "(disabled) → ") + (u.destination || "") +
    ": " + (u.uploaded_files || 0) + " files, " + humanBytes(u.uploaded_bytes || 0) +
    ", " + humanBytes(u.bytes_per_s || 0) + "/s"));
  if (u.yielding) up.append(el("span", "warn", " · yielding: " + u.yielding));
  if (u.error) up.append(el("span", "bad", " · error: " + u.error));
}

function humanAge(seconds) {
  const s = Math.floor(seconds);
  if (s < 60) return s + " s";
  if (s < 3600) return Math.floor(s / 60) + " min " + (s % 60) + " s";
  return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
}

// What waits to be finished and uploaded, what retention deleted first, and how much of
// the time background work gets (docs/operations.md, "Background work on a busy vehicle").
function renderBacklog(b) {
  const line = $("backlog");
  line.hidden = !b || (!b.finish_waiting && !b.upload_waiting && !b.deleted_unfinished &&
    !b.deleted_unuploaded && (!b.background_mode || b.background_mode === "running"));
  line.replaceChildren();
  if (line.hidden) return;
  const waited = (n, what, age) => n + " to " + what + (age != null ? " (oldest " + humanAge(age) + ")" : "");
  const parts = [];
  if (b.finish_waiting) parts.push(waited(b.finish_waiting, "finish", b.finish_oldest_s));
  if (b.upload_waiting) parts.push(waited(b.upload_waiting, "upload", b.upload_oldest_s));
  line.append(el("span", null, "background " + (b.background_mode || "") +
    (parts.length ? ": " + parts.join(", ") : "")));
  line.title = b.background || "";
  const late = b.max_delay_s != null &&
    Math.max(b.finish_oldest_s || 0, b.upload_oldest_s || 0) > b.max_delay_s;
  line.classList.toggle("warn", late || b.background_mode === "backed off");
  if (b.deleted_unfinished || b.deleted_unuploaded) {
    line.append(el("span", "bad", " · deleted by retention before finished " +
      b.deleted_unfinished + ", before uploaded " + b.deleted_unuploaded));
  }
}

// ---------- start form (built once, rebuilt only when the preset list changes) ----------

function renderStart(o) {
  const area = $("start");
  if (!o.control) { area.replaceChildren(); presetKey = null; return; }
  const presets = o.presets || [];
  const key = JSON.stringify(presets.map((p) => p.name));
  if (key === presetKey && area.firstChild) return;
  presetKey = key;

  const old = area.querySelector("select");
  const selected = old ? old.value : null;
  const form = el("form", "row start-form");
  form.id = "start-form";
  const label = el("label", null, "Preset");
  const select = el("select");
  select.id = "preset";
  label.htmlFor = "preset";
  for (const p of presets) {
    const opt = el("option", null, p.name + (p.pre_trigger ? " (pre-trigger)" : ""));
    opt.value = p.name;
    select.append(opt);
  }
  if (selected !== null && presets.some((p) => p.name === selected)) select.value = selected;
  const start = button("Start", "start", (b) => {
    if (select.value) act(b, "start", { preset: select.value }, select.value);
    else setMessage("no preset to start", false);
  });
  start.disabled = presets.length === 0;
  form.addEventListener("submit", (e) => { e.preventDefault(); start.click(); });
  form.append(label, select, start);
  area.replaceChildren(form);
}

// ---------- sessions ----------

function badge(s) {
  if (s.write_error) return ["write error", "bad"];
  if (s.disk_full) return ["disk full", "bad"];
  if (s.paused) return ["paused", "warn"];
  if (s.buffer && (!s.current_files || s.current_files.length === 0)) return ["buffering", "info"];
  return ["recording", "good"];
}

function renderInfo(s, o, startedFrom) {
  const [state, tone] = badge(s);
  const head = el("div", "card-head");
  const b = el("span", "badge badge-" + tone, state);
  b.dataset.state = state;
  head.append(el("h2", null, s.name), b);
  if (startedFrom) head.append(el("span", "muted", "preset " + startedFrom));

  const topics = s.topics || [];
  const loss = topics.reduce((n, t) => n + (t.dropped || 0) + (t.lost || 0), 0);
  const stats = el("div", "stats");
  stats.append(
    el("span", "elapsed", duration(s.elapsed_s)),
    el("span", "mbps", ((s.bytes_per_s || 0) / 1e6).toFixed(2) + " MB/s"),
    el("span", "written", humanBytes(s.bytes_written || 0) + " written"));
  const l = el("span", "loss" + (loss > 0 ? " bad" : ""), "dropped+lost " + loss);
  l.dataset.loss = String(loss);
  stats.append(l);

  const parts = [head, stats];
  const sizes = o.file_sizes || {};
  for (const f of s.current_files || []) {
    parts.push(el("div", "file", f + (f in sizes ? " (" + humanBytes(sizes[f]) + ")" : "")));
  }
  if (s.buffer) {
    const bu = s.buffer;
    parts.push(el("div", "buffer muted", "buffer " + (bu.span_s || 0).toFixed(1) + " / " + bu.duration_s +
      " s, " + humanBytes(bu.bytes || 0) + " of " + humanBytes(bu.capacity_bytes || 0)));
  }
  for (const r of s.required || []) {
    if (r.state === "missing") parts.push(el("div", "required bad", "required topic missing: " + r.pattern));
  }
  if (s.write_error) parts.push(el("div", "bad", "write error: " + s.write_error));
  if (s.disk_full) parts.push(el("div", "bad", "disk full: " + humanBytes(s.disk_full.free) + " free, minimum " + humanBytes(s.disk_full.minimum)));
  for (const p of s.problems || []) parts.push(el("div", "problem warn", p[0] + ": " + p[1]));
  return parts;
}

// Controls are built once per card so typed mark text and focus survive re-renders.
function buildControls(name) {
  const c = el("div", "controls row");
  const mark = el("input", "mark-text");
  mark.type = "text";
  mark.placeholder = "marker text";
  mark.setAttribute("aria-label", "marker text for " + name);
  const markBtn = button("Mark", "mark", (b) =>
    act(b, "mark", { session: name, text: mark.value.trim() || "mark from web page" }, name));
  mark.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); markBtn.click(); } });
  const stop = button("Stop", "stop", (b) => act(b, "stop", { session: name }, name));
  // one button that toggles between pause and resume
  const pr = button("Pause", "pause", (b) => act(b, b.dataset.action, { session: name }, name));
  const trig = button("Trigger", "trigger", (b) => act(b, "trigger", { session: name }, name));
  c.append(stop, pr, mark, markBtn);
  return { c, pr, trig };
}

function updateControls(entry, s) {
  const { pr, trig, c } = entry.controls;
  const action = s.paused ? "resume" : "pause";
  if (pr.dataset.action !== action) {
    pr.dataset.action = action;
    pr.textContent = s.paused ? "Resume" : "Pause";
    pr.className = "btn btn-" + action;
  }
  // a pre-trigger session writes its buffer's window; one on disk makes an incident
  if (!trig.isConnected) c.append(trig);
}

function sparkline(values) {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("class", "spark");
  svg.setAttribute("width", SPARK_W);
  svg.setAttribute("height", SPARK_H);
  svg.setAttribute("viewBox", "0 0 " + SPARK_W + " " + SPARK_H);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("aria-hidden", "true");
  const v = (values || []).slice(-60);
  if (v.length === 0) return svg;
  const max = Math.max(1, ...v);
  const step = SPARK_W / 60; // one value per second, newest at the right edge
  const pts = v.map((y, i) => {
    const x = SPARK_W - (v.length - 1 - i) * step;
    return x.toFixed(1) + "," + (SPARK_H - 1 - (y / max) * (SPARK_H - 2)).toFixed(1);
  });
  if (pts.length === 1) pts.unshift((SPARK_W - step).toFixed(1) + "," + pts[0].split(",")[1]);
  const line = document.createElementNS(SVG_NS, "polyline");
  line.setAttribute("points", pts.join(" "));
  svg.append(line);
  return svg;
}

function topicRow(t, hist) {
  const state = (t.health && t.health.state) || "unchecked";
  const row = el("div", "topic health-" + state);
  row.dataset.topic = t.name;
  row.dataset.health = state;
  const loss = el("span", "t-loss" + ((t.dropped || 0) + (t.lost || 0) > 0 || t.unknown_loss ? " bad" : ""),
    (t.dropped || 0) + " / " + (t.lost || 0) + (t.unknown_loss ? " unknown loss" : ""));
  row.append(
    el("span", "t-name", t.name),
    sparkline(hist),
    el("span", "t-rate", rate(t.messages_per_s) + " msg/s"),
    loss,
    el("span", "t-health", state),
    el("span", "t-age", age(t.last_sample_ns)));
  return row;
}

function topicHeader() {
  const h = el("div", "topic topic-head muted");
  for (const t of ["topic", "last 60 s", "rate", "dropped / lost", "health", "last sample"]) h.append(el("span", null, t));
  return h;
}

function renderSessions(o) {
  const box = $("sessions");
  const sessions = o.sessions || [];
  const seen = new Set(sessions.map((s) => s.name));
  for (const [name, entry] of cards) {
    if (!seen.has(name)) { entry.card.remove(); cards.delete(name); }
  }
  const empty = box.querySelector(".empty");
  if (sessions.length === 0) {
    if (!empty) box.append(el("p", "empty", "No session is recording."));
    return;
  }
  if (empty) empty.remove();

  sessions.forEach((s, i) => {
    let entry = cards.get(s.name);
    if (!entry) {
      const card = el("section", "card");
      card.dataset.session = s.name;
      entry = { card, info: el("div", "info"), topics: el("div", "topics"), controls: null };
      card.append(entry.info, entry.topics);
      cards.set(s.name, entry);
    }
    // controls appear/disappear with the control flag, but are otherwise kept in place
    if (o.control && !entry.controls) {
      entry.controls = buildControls(s.name);
      entry.card.insertBefore(entry.controls.c, entry.topics);
    } else if (!o.control && entry.controls) {
      entry.controls.c.remove();
      entry.controls = null;
    }
    if (entry.controls) updateControls(entry, s);

    entry.info.replaceChildren(...renderInfo(s, o, (o.started_from || {})[s.name]));
    const hist = (o.history || {})[s.name] || {};
    const rows = (s.topics || []).map((t) => topicRow(t, hist[t.name]));
    entry.topics.replaceChildren(...(rows.length ? [topicHeader(), ...rows] : [el("p", "muted", "no topics yet")]));

    // keep the given order without moving cards needlessly (moving would drop focus)
    if (box.children[i] !== entry.card) box.insertBefore(entry.card, box.children[i] || null);
  });
}

// ---------- incidents ----------

// What became of an incident: released, or how far its cut and its upload have come.
function incidentState(i) {
  if (i.released) return ["released (" + i.released.why + ")", "muted"];
  if (i.cut === "failed") return ["cut failed: " + (i.cut_error || ""), "bad"];
  if (i.cut === "waiting") return ["pinned, waiting to cut", "warn"];
  const uploads = (i.cut_files || []).map((f) => f.upload).filter(Boolean);
  const what = i.cut === "buffer" ? "written" : "cut";
  if (uploads.length === 0) return [what + ", pinned", "good"];
  const done = uploads.filter((u) => u === "uploaded").length;
  if (done === uploads.length) return [what + ", uploaded", "good"];
  if (uploads.includes("failed")) return [what + ", upload failed", "bad"];
  return [what + ", uploading " + done + "/" + uploads.length, "muted"];
}

function renderIncidents(o) {
  const box = $("incidents"), inc = o.incidents;
  const newest = (inc && inc.newest) || [];
  box.hidden = !inc || (newest.length === 0 && !Object.keys(inc.refused || {}).length);
  if (box.hidden) return;
  const refused = Object.values(inc.refused || {}).reduce((n, v) => n + v, 0);
  const summary = $("incidents-summary");
  summary.textContent = inc.pinned + " pinned (" + humanBytes(inc.pinned_bytes) + " of " +
    humanBytes(inc.pinned_bytes_limit) + ")" + (inc.waiting_to_cut ? ", " + inc.waiting_to_cut + " waiting to cut" : "") +
    (refused ? ", " + refused + " refused" : "");
  summary.classList.toggle("bad", refused > 0);
  $("incidents-rows").replaceChildren(...newest.map((i) => {
    const [state, tone] = incidentState(i);
    const row = el("tr", "incident");
    row.dataset.id = i.id;
    row.dataset.session = i.session;
    row.dataset.origin = i.origin;
    row.dataset.cut = i.cut;
    const t = el("td", "i-time", clockTime(new Date(i.time_ns / 1e6)));
    t.title = new Date(i.time_ns / 1e6).toISOString() + ", window " +
      ((i.time_ns - i.start_ns) / 1e9).toFixed(1) + " s before, " + ((i.end_ns - i.time_ns) / 1e9).toFixed(1) +
      " s after; " + i.pinned_files + " files pinned";
    // A rule's incident names its rule, and shows the values it read on hovering.
    const origin = el("td", "i-origin", i.rule ? "rule " + i.rule.rule : i.origin);
    if (i.rule) {
      row.dataset.rule = i.rule.rule;
      origin.title = i.rule.topic + ": " + JSON.stringify(i.rule.values);
    }
    row.append(el("td", "i-id", i.id), el("td", "i-session", i.session), origin,
      el("td", "i-note", i.note), t, el("td", "i-state " + tone, state));
    return row;
  }));
}

function render(o) {
  renderHeader(o);
  renderStart(o);
  renderSessions(o);
  renderIncidents(o);
}

// ---------- start up ----------

document.addEventListener("DOMContentLoaded", () => {
  tokenFromFragment();
  saveToken(token);
  // a token pasted into the address bar of an open page arrives as a hash change
  window.addEventListener("hashchange", () => { tokenFromFragment(); poll(); });
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    saveToken($("token").value);
    $("token").value = "";
    setMessage(token ? "Token set" : "Token cleared", true);
    poll();
  });
  poll();
});
