// labile web app: plain JavaScript, no framework, no network beyond this server.
// Every request names the namespace chosen in the header; the server refuses any
// namespace it was not started for, so nothing here can reach another one.
// Memory text is only ever inserted as text (never as HTML).
"use strict";

const state = { ns: null, token: sessionStorage.getItem("labile-token") || "",
                result: null, allowPurge: false };

// -- small helpers ---------------------------------------------------------------------
function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  }
  return node;
}
const $ = (sel) => document.querySelector(sel);
const day = (iso) => (iso ? iso.slice(0, 10) : "?");
const when = (iso) => (iso ? iso.slice(0, 16).replace("T", " ") : "?");

function status(text, isError) {
  const s = $("#status");
  s.textContent = text || "";
  s.className = isError ? "error" : "";
}

async function api(path, options) {
  const opts = Object.assign({ headers: {} }, options || {});
  if (state.token) opts.headers.Authorization = "Bearer " + state.token;
  if (opts.json !== undefined) {
    opts.method = opts.method || "POST";
    opts.headers["content-type"] = "application/json";
    opts.body = JSON.stringify(opts.json);
  }
  const sep = path.includes("?") ? "&" : "?";
  const url = state.ns ? `${path}${sep}namespace=${encodeURIComponent(state.ns)}` : path;
  const res = await fetch(url, opts);
  if (res.status === 401) {
    $("#token-box").hidden = false;
    throw new Error("this server needs its bearer token (enter it above)");
  }
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
  return body;
}

function guarded(fn) {
  return async (...args) => {
    try { status(""); await fn(...args); } catch (err) { status(err.message, true); }
  };
}

// -- namespaces --------------------------------------------------------------------------
async function loadNamespaces() {
  const saved = state.ns;
  state.ns = null;  // the namespace list itself takes none
  const data = await api("/api/namespaces");
  state.allowPurge = data.allow_purge;
  const select = $("#ns-select");
  select.replaceChildren(...data.namespaces.map((n) => el("option", { value: n.name },
    `${n.name} (${n.observations} turns, ${n.visible_nodes} memories, ${n.edges} edges)`)));
  const names = data.namespaces.map((n) => n.name);
  state.ns = names.includes(saved) ? saved : names[0];
  select.value = state.ns;
  const cur = data.namespaces.find((n) => n.name === state.ns);
  $("#ns-counts").textContent = cur ? `${cur.nodes - cur.visible_nodes} archived` : "";
}

// -- search ------------------------------------------------------------------------------
function datesOf(hit) {
  const out = [];
  const said = hit.dates.said;
  if (said.length) {
    const a = day(said[0]), b = day(said[said.length - 1]);
    out.push(el("span", { class: "badge said", title: "when the source turns were said" },
      "said " + (a === b ? a : `${a} – ${b}`)));
  }
  const about = hit.dates.about;
  if (about) {
    const a = day(about.start), b = about.end ? day(about.end) : a;
    out.push(el("span", { class: "badge about", title: "what time the memory is about" },
      "about " + (a === b ? a : `${a} – ${b}`)));
  }
  return out;
}

function validityBadge(v) {
  if (v.current) return el("span", { class: "badge current" }, "current");
  const by = v.superseded_by.length ? ` by ${v.superseded_by.join(", ")}` : "";
  return el("span", { class: "badge superseded" }, `superseded ${day(v.valid_to)}${by}`);
}

function renderHit(hit) {
  const rel = hit.relative_score === null ? "" : ` (${Math.round(hit.relative_score * 100)}% of top)`;
  const sources = hit.sources.map((s) => el("li", { class: "source" },
    el("b", {}, s.speaker || s.role || "?"), ` · ${when(s.time)} · `, s.text,
    el("span", { class: "muted" }, `  [${s.id}]`)));
  if (hit.missing_sources.length) {
    sources.push(el("li", { class: "muted" }, "no longer stored: " + hit.missing_sources.join(", ")));
  }
  const turnIds = hit.sources.map((s) => s.id);
  return el("li", { class: "hit" + (hit.validity.current ? "" : " superseded"),
                    dataset: { id: hit.id } },
    el("div", { class: "text" }, `${hit.rank}. `, hit.text),
    el("div", { class: "meta" }, el("span", { class: "badge" }, hit.kind), ...datesOf(hit),
      validityBadge(hit.validity), `score ${hit.score.toFixed(3)}${rel}`),
    el("div", { class: "why" }, "why: ", hit.reached.why),
    el("ul", { class: "sources" }, sources),
    el("div", { class: "actions" },
      el("button", { class: "neighbourhood-btn", onclick: guarded(() => showNeighbourhood(hit.id)) },
        "Neighbourhood"),
      turnIds.length ? el("button", { class: "danger forget-btn",
        onclick: guarded(() => forgetTurns(turnIds)) }, "Forget its source turns") : null));
}

async function runSearch(ev) {
  if (ev) ev.preventDefault();
  const q = $("#q").value.trim();
  if (!q) return;
  const params = new URLSearchParams({ q, k: $("#k").value || "5" });
  const asOf = $("#as-of").value;
  if (asOf) params.set("as_of", asOf);
  const data = await api("/api/search?" + params);
  state.result = data;
  $("#search-meta").textContent = `${data.hits.length} hit(s) in ${data.ms.total.toFixed(1)} ms ` +
    `(as of ${when(data.as_of)}; schema ${data.schema})`;
  $("#hits").replaceChildren(...data.hits.map(renderHit));
  $("#show-subgraph").hidden = data.hits.length === 0;
}

async function forgetTurns(ids) {
  if (!window.confirm(`Forget ${ids.length} turn(s) (${ids.join(", ")}) and every memory built ` +
                      `only from them? This cannot be undone.`)) return;
  const out = await api("/api/forget", { json: { ids } });
  status(`forgotten: ${Object.entries(out.removed).map(([k, v]) => `${k} ${v}`).join(", ")}`);
  await loadNamespaces();
  await runSearch();
}

// -- graph ---------------------------------------------------------------------------------
const PALETTE = ["#2f6fde", "#e0732c", "#2e9e5b", "#b83280", "#7a5af8", "#c4a000", "#0e9384",
                 "#667085"];
const kindColour = {};
function colour(kind) {
  if (!(kind in kindColour)) kindColour[kind] = PALETTE[Object.keys(kindColour).length % PALETTE.length];
  return kindColour[kind];
}

// A small force layout: repulsion between all pairs, springs along edges, a pull to the
// centre; run a fixed number of steps, then draw once (deterministic, readable at 200 nodes).
function layout(nodes, edges, width, height) {
  const pos = nodes.map((_, i) => {
    const a = (2 * Math.PI * i) / Math.max(1, nodes.length);
    const r = Math.min(width, height) * 0.35;
    return { x: width / 2 + r * Math.cos(a), y: height / 2 + r * Math.sin(a), dx: 0, dy: 0 };
  });
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const links = edges.map((e) => [index.get(e.src), index.get(e.dst)]);
  const ideal = Math.min(140, Math.max(40, Math.sqrt((width * height) / Math.max(1, nodes.length)) * 0.8));
  const cutoff = 9 * ideal * ideal;
  for (let step = 0, t = ideal; step < 250; step++, t *= 0.985) {
    for (const p of pos) { p.dx = 0; p.dy = 0; }
    for (let i = 0; i < pos.length; i++) {
      for (let j = i + 1; j < pos.length; j++) {
        let dx = pos[i].x - pos[j].x, dy = pos[i].y - pos[j].y;
        const d2 = Math.max(dx * dx + dy * dy, 0.01);
        // No push beyond a few ideal lengths: unconnected parts stay near each other.
        if (d2 > cutoff) continue;
        const f = (ideal * ideal) / d2;
        dx *= f; dy *= f;
        pos[i].dx += dx; pos[i].dy += dy; pos[j].dx -= dx; pos[j].dy -= dy;
      }
    }
    for (const [a, b] of links) {
      const dx = pos[a].x - pos[b].x, dy = pos[a].y - pos[b].y;
      const d = Math.sqrt(dx * dx + dy * dy) || 0.01, f = d / ideal;
      pos[a].dx -= dx * f; pos[a].dy -= dy * f; pos[b].dx += dx * f; pos[b].dy += dy * f;
    }
    for (const p of pos) {
      p.dx += (width / 2 - p.x) * 0.2; p.dy += (height / 2 - p.y) * 0.2;
      const d = Math.sqrt(p.dx * p.dx + p.dy * p.dy) || 1, move = Math.min(d, t);
      p.x += (p.dx / d) * move; p.y += (p.dy / d) * move;
    }
  }
  return fit(pos, width, height);
}

// Scale and move the laid-out points into the drawing, leaving room for labels.
function fit(pos, width, height) {
  if (!pos.length) return pos;
  const xs = pos.map((p) => p.x), ys = pos.map((p) => p.y);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const margin = 40, right = 220;
  const sx = (width - margin - right) / Math.max(1, x1 - x0);
  const sy = (height - 2 * margin) / Math.max(1, y1 - y0);
  const s = Math.min(sx, sy, 1.5);
  const ox = margin + ((width - margin - right) - s * (x1 - x0)) / 2;
  const oy = margin + ((height - 2 * margin) - s * (y1 - y0)) / 2;
  return pos.map((p) => ({ x: ox + (p.x - x0) * s, y: oy + (p.y - y0) * s }));
}

function svg(tag, props, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function drawGraph(graph, title) {
  showView("graph");
  $("#graph-title").textContent = title;
  const box = $("#graph"), width = box.clientWidth || 900, height = box.clientHeight || 640;
  const pos = layout(graph.nodes, graph.edges, width, height);
  const index = new Map(graph.nodes.map((n, i) => [n.id, i]));
  const few = graph.nodes.length <= 60;
  const edges = graph.edges.map((e) => {
    const a = pos[index.get(e.src)], b = pos[index.get(e.dst)];
    const line = svg("line", { class: "edge", x1: a.x, y1: a.y, x2: b.x, y2: b.y,
      "stroke-width": 0.5 + (few ? 3 : 1.2) * e.weight,
      "stroke-opacity": e.active ? (few ? 0.8 : 0.45) : 0.2,
      "marker-end": "url(#arrow)", "data-id": e.id, onclick: guarded(() => showEdge(e.id)) },
      svg("title", {}, `${e.predicate} (weight ${e.weight.toFixed(2)})`));
    const label = few ? svg("text", { class: "edge-label", x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 },
      `${e.predicate.replace(/^[a-z]+\./, "")} ${e.weight.toFixed(2)}`) : null;
    return [line, label];
  }).flat().filter(Boolean);
  const nodes = graph.nodes.map((n, i) => {
    const p = pos[i], isHit = n.hit_rank || n.id === graph.center;
    const circle = svg("circle", { cx: p.x, cy: p.y, r: isHit ? 9 : 6, fill: colour(n.kind),
      class: (isHit ? "hit-node " : "") + (n.visible ? "" : "archived"), "data-id": n.id,
      onclick: guarded(() => showNode(n.id)) },
      svg("title", {}, `${n.kind}: ${n.label}`));
    const label = (few || isHit) ? svg("text", { class: "node-label", x: p.x + 10, y: p.y + 3 },
      (n.hit_rank ? `#${n.hit_rank} ` : "") + n.label.slice(0, 40)) : null;
    return [circle, label];
  }).flat().filter(Boolean);
  const defs = svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 20, refY: 5,
    markerUnits: "userSpaceOnUse", markerWidth: 9, markerHeight: 9, orient: "auto-start-reverse" },
    svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#98a2b3" })));
  box.setAttribute("viewBox", `0 0 ${width} ${height}`);
  box.replaceChildren(defs, ...edges, ...nodes);
  const kinds = [...new Set(graph.nodes.map((n) => n.kind))];
  $("#legend").replaceChildren(...kinds.map((k) => el("span", {}, el("i", { style: `background:${colour(k)}` }), k)),
    el("span", { class: "muted" }, `${graph.nodes.length} nodes, ${graph.edges.length} edges; ` +
      "thicker edges weigh more; dashed nodes are archived"));
}

async function showSubgraph() {
  const r = state.result;
  const graph = await api(`/api/results/${encodeURIComponent(r.result_id)}/subgraph`);
  drawGraph(graph, `Activated subgraph of “${r.query}”`);
}

async function showNeighbourhood(id) {
  const graph = await api(`/api/node/neighbourhood?id=${encodeURIComponent(id)}&hops=2`);
  drawGraph(graph, `Neighbourhood of ${id} (2 hops)`);
  await showNode(id);
}

async function showNode(id) {
  const d = await api(`/api/node?id=${encodeURIComponent(id)}`);
  const n = d.node;
  $("#detail").replaceChildren(
    el("h3", {}, n.kind), el("p", { class: "node-text" }, n.text),
    el("p", {}, validityBadge(n), n.time_start ? el("span", { class: "badge about" }, "about " + day(n.time_start)) : null,
      n.visible ? null : el("span", { class: "badge" }, "archived")),
    el("h4", {}, "Source turns"),
    el("ul", { class: "sources" }, d.sources.map((s) => el("li", {}, el("b", {}, s.speaker || "?"),
      ` · said ${when(s.time)} · `, s.text))),
    el("h4", {}, `Edges (${d.edges.length})`),
    el("ul", {}, d.edges.slice(0, 100).map((e) => el("li", {},
      el("a", { href: "#", onclick: (ev) => { ev.preventDefault(); guarded(showEdge)(e.id); } },
        `${e.src === n.id ? "→" : "←"} ${e.predicate} ${e.weight.toFixed(2)}`),
      " ", el("span", { class: "muted" }, e.src === n.id ? e.dst : e.src),
      e.history.length ? el("span", { class: "badge" }, `${e.history.length} edit(s)`) : null))),
    el("button", { onclick: guarded(() => showNeighbourhood(n.id)) }, "Open its neighbourhood"));
}

async function showEdge(id) {
  const e = await api(`/api/edge?id=${encodeURIComponent(id)}`);
  const rows = e.history.map((h) => el("tr", {}, el("td", {}, when(h.at)), el("td", {}, h.by),
    el("td", {}, h.decision), el("td", {}, `${h.old_weight ?? "new"} → ${h.new_weight}`),
    el("td", {}, h.reason || "")));
  $("#detail").replaceChildren(
    el("h3", {}, `${e.predicate} ${e.weight.toFixed(3)}`),
    el("p", { class: "muted" }, `${e.src} → ${e.dst} · ${e.origin}${e.active ? "" : " · inactive"}`),
    el("h4", {}, "Reconsolidation edits"),
    rows.length ? el("table", { class: "audit" }, el("tr", {}, ...["when", "by", "decision", "weight", "why"]
      .map((h) => el("th", {}, h))), ...rows) : el("p", { class: "muted" }, "never edited"),
    e.undoable ? el("button", { class: "danger undo-btn", onclick: guarded(async () => {
      if (!window.confirm("Undo this edge's latest edit?")) return;
      await api(`/api/edge/undo?id=${encodeURIComponent(id)}`, { method: "POST" });
      await showEdge(id);
    }) }, "Undo the latest edit") : null);
}

// -- timeline, archived ------------------------------------------------------------------------
async function showTimeline() {
  const t = await api("/api/timeline");
  $("#timeline").replaceChildren(
    el("h3", {}, `Sessions (${t.sessions.length})`),
    el("table", {}, el("tr", {}, el("th", {}, "session"), el("th", {}, "turns"), el("th", {}, "from"), el("th", {}, "to")),
      ...t.sessions.map((s) => el("tr", {}, el("td", {}, s.session), el("td", {}, s.turns),
        el("td", {}, when(s.first)), el("td", {}, when(s.last))))),
    el("h3", {}, `Memories by the date they are about (${t.shown} of ${t.dated_memories})`),
    ...t.days.map((d) => el("div", { class: "day" }, el("h3", {}, d.date),
      el("ul", {}, d.memories.map((m) => el("li", {}, el("span", { class: "badge" }, m.kind),
        el("a", { href: "#", onclick: (ev) => { ev.preventDefault(); guarded(showNeighbourhood)(m.id); } }, m.label),
        m.current ? "" : el("span", { class: "badge superseded" }, "superseded")))))));
}

async function showArchived() {
  const a = await api("/api/archived");
  $("#archived").replaceChildren(
    el("h3", {}, `Archived units (${a.units.length} of ${a.total})`),
    a.units.length ? el("table", {}, el("tr", {}, el("th", {}, "unit"), el("th", {}, "text"), el("th", {}, "replaced by")),
      ...a.units.map((u) => el("tr", {}, el("td", {}, u.id), el("td", {}, u.text),
        el("td", {}, u.replaced_by.map((r) => el("div", {}, `${r.predicate} ← `,
          el("a", { href: "#", onclick: (ev) => { ev.preventDefault(); guarded(showNeighbourhood)(r.from); } }, r.from)))))))
      : el("p", { class: "muted" }, "Nothing archived: consolidation has not replaced any unit."));
}

// -- views ------------------------------------------------------------------------------------
function showView(name) {
  for (const v of document.querySelectorAll(".view")) v.hidden = v.id !== "view-" + name;
  for (const b of document.querySelectorAll(".tab")) b.classList.toggle("active", b.dataset.view === name);
}

for (const b of document.querySelectorAll(".tab")) {
  b.addEventListener("click", guarded(async () => {
    showView(b.dataset.view);
    if (b.dataset.view === "timeline") await showTimeline();
    if (b.dataset.view === "archived") await showArchived();
  }));
}
$("#search-form").addEventListener("submit", guarded(runSearch));
$("#show-subgraph").addEventListener("click", guarded(showSubgraph));
$("#ns-select").addEventListener("change", guarded(async (ev) => {
  state.ns = ev.target.value; state.result = null;
  $("#hits").replaceChildren(); $("#show-subgraph").hidden = true;
  await loadNamespaces();
}));
$("#token-form").addEventListener("submit", guarded(async (ev) => {
  ev.preventDefault();
  state.token = $("#token").value;
  sessionStorage.setItem("labile-token", state.token);
  $("#token-box").hidden = true;
  await loadNamespaces();
}));
guarded(loadNamespaces)().then(() => document.body.setAttribute("data-ready", "1"));
