// Flux's page: ask, watch the steps stream, read the cited answer, follow up, export.
// Plain JavaScript on the service's own endpoints; nothing is fetched from elsewhere. Every value from the service
// is put on the page as text (textContent), never as HTML: answers may quote documents.
"use strict";

const KEY_STORE = "flux-api-key";  // sessionStorage: this tab only
const HEALTH_EVERY_MS = 20000;
const EXAMPLES = [
  ["members", "Which genes belong to the KEGG pathway 'Mismatch repair'?"],
  ["gene pathways", "Which pathways contain both MLH1 and MSH2?"],
  ["counterpart", "Which KEGG pathway corresponds to Reactome's glycolysis?"],
  ["shared genes", "Which genes do the KEGG and Reactome mismatch repair pathways share?"],
  ["compare", "Compare KEGG glycolysis and Reactome glycolysis"],
  ["hierarchy", "What are the sub-pathways of Reactome's glucose metabolism?"],
  ["literature", "What does TP53 do in apoptosis?"],
];
const STORE_NAMES = { postgres: "Postgres", neo4j: "Neo4j", redis: "Redis" };
const state = { conversationId: null, turns: 0, busy: false };
const $ = (id) => document.getElementById(id);

// --- small DOM helpers -------------------------------------------------------------------------------------
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "text") node.textContent = value;
    else if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value);
  }
  node.append(...children);
  return node;
}

function announce(message) {
  const live = $("announcer");
  live.textContent = "";
  window.setTimeout(() => { live.textContent = message; }, 50);
}

// --- the API ------------------------------------------------------------------------------------------------
class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function errorDetail(response) {
  try {
    const body = await response.json();
    return typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
  } catch {
    return `${response.status} ${response.statusText}`;
  }
}

async function api(path, init = {}) {
  const headers = new Headers(init.headers || {});
  const key = sessionStorage.getItem(KEY_STORE);
  if (key) headers.set("Authorization", `Bearer ${key}`);
  const response = await fetch(path, { ...init, headers });
  if (response.status === 401) {
    const detail = await errorDetail(response);
    sessionStorage.removeItem(KEY_STORE);
    if (await askForKey(detail)) return api(path, init);
    throw new ApiError(401, detail);
  }
  if (!response.ok) {
    const detail = await errorDetail(response);
    if (response.status === 503) refreshHealth();
    throw new ApiError(response.status, detail);
  }
  return response;
}

function askForKey(message) {
  const dialog = $("key-dialog");
  const form = $("key-form");
  dialog.querySelector("p").textContent = `${message}. The key is kept in this browser tab only.`;
  $("api-key").value = "";
  return new Promise((resolve) => {
    const done = (ok) => {
      form.removeEventListener("submit", onSubmit);
      $("key-cancel").removeEventListener("click", onCancel);
      dialog.close();
      resolve(ok);
    };
    const onSubmit = (event) => {
      event.preventDefault();
      sessionStorage.setItem(KEY_STORE, $("api-key").value.trim());
      done(true);
    };
    const onCancel = () => done(false);
    form.addEventListener("submit", onSubmit);
    $("key-cancel").addEventListener("click", onCancel);
    dialog.showModal();
  });
}

// --- service status -----------------------------------------------------------------------------------------
async function refreshHealth() {
  const banner = $("status-banner");
  let report;
  try {
    report = await (await fetch("/health", { cache: "no-store" })).json();
  } catch {
    showBanner("down", "The Flux service cannot be reached.", []);
    return;
  }
  const broken = Object.entries(report.services || {})
    .filter(([, store]) => !store.ok || (store.detail && store.index === null))
    .map(([name, store]) => `${STORE_NAMES[name] || name}: ${store.detail || "unavailable"}`);
  if (report.status === "ok") {
    banner.hidden = true;
    banner.dataset.status = "ok";
  } else if (report.status === "degraded") {
    showBanner("degraded", "Answers still come, from the stores that are up.", broken);
  } else {
    showBanner("down", "Questions cannot be answered now.", broken);
  }
}

function showBanner(status, headline, details) {
  const banner = $("status-banner");
  banner.replaceChildren(el("strong", { text: status === "down" ? "Down. " : "Degraded. " }), headline,
    details.length ? el("ul", {}, details.map((d) => el("li", { text: d }))) : null);
  banner.dataset.status = status;
  banner.hidden = false;
}

// --- Server-Sent Events over fetch (EventSource cannot POST) -----------------------------------------------
function parseEvent(block) {
  let event = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;  // keep-alive comment
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  return data.length ? { event, data: JSON.parse(data.join("\n")) } : null;
}

async function* events(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer = (buffer + value).replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const parsed = parseEvent(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (parsed) yield parsed;
    }
  }
}

// --- one question and its answer -----------------------------------------------------------------------------
function stepText(step) {
  const n = (x) => (typeof x === "number" ? x.toFixed(2) : "–");
  switch (step.step) {
    case "intent": return `Question kind: ${step.kind} (${step.reason})`;
    case "route": return `Route: ${step.strategy} (${step.reason}); queries: ${step.queries.join(" | ")}`;
    case "cache": return `Answer cache: ${step.hit} hit`;
    case "retrieve":
      return `Retrieved for "${step.query}": ${step.chunks} text chunks, ${step.graph} graph facts, `
        + `${step.new} new${step.cached ? " (from cache)" : ""}`;
    case "judge": {
      const label = step.attempt > 0 ? `Judge after re-retrieval ${step.attempt}` : "Judge";
      const missing = step.missing && step.missing.length ? `; missing: ${step.missing.join("; ")}` : "";
      return `${label}: ${step.verdict || "no verdict"}, confidence ${n(step.confidence)}${missing}`;
    }
    case "refused": return `Refused: ${step.reason}`;
    default: return `${step.step}: ${JSON.stringify(step)}`;
  }
}

function startTurn(question) {
  state.turns += 1;
  const id = `turn-${state.turns}`;
  const steps = el("ol", { class: "steps", "aria-label": "Steps" });
  const status = el("p", { class: "turn-status", role: "status", text: "Working…" });
  const body = el("div", { class: "turn-body" });
  const article = el("article", { class: "turn", id, "aria-labelledby": `${id}-q`, "aria-busy": "true" },
    el("h3", { id: `${id}-q`, text: question }),
    el("details", { class: "steps-box", open: true }, el("summary", { text: "Steps" }), steps),
    status, body);
  $("turns").prepend(article);
  $("history-empty").hidden = true;
  $("history").append(el("li", {}, el("a", { href: `#${id}`, text: question })));
  return { id, article, steps, status, body, evidence: new Map() };
}

function finishTurn(turn, message) {
  turn.status.textContent = message;
  turn.article.setAttribute("aria-busy", "false");
}

async function ask(question, mode) {
  if (state.busy) return;
  state.busy = true;
  $("ask-button").disabled = true;
  const turn = startTurn(question);
  try {
    const body = { question, mode };
    if (state.conversationId) body.conversation_id = state.conversationId;
    const response = await api("/query/stream", {
      method: "POST", headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(body),
    });
    for await (const { event, data } of events(response)) {
      if (event === "step") turn.steps.append(el("li", { "data-step": data.step, text: stepText(data) }));
      else if (event === "evidence") {
        for (const item of data) turn.evidence.set(item.id, item);
        turn.steps.append(el("li", { "data-step": "evidence", text: `Evidence: ${data.length} items` }));
      } else if (event === "answer") renderAnswer(turn, data);
      else if (event === "error") finishTurn(turn, `Failed: ${data.detail}`);
      else if (event === "done") {
        if (turn.article.getAttribute("aria-busy") === "true") finishTurn(turn, "Answered");
        turn.answerTotalMs = data.total_ms;
        const total = turn.body.querySelector(".total-ms");
        if (total) total.textContent = `${data.total_ms} ms`;
      }
    }
  } catch (error) {
    finishTurn(turn, `Failed: ${error.message}`);
  } finally {
    state.busy = false;
    $("ask-button").disabled = false;
  }
}

// --- rendering an answer ---------------------------------------------------------------------------------------
function citationButton(citation, number, turn) {
  return el("button", {
    type: "button", class: "cite", "aria-label": `Citation ${number}: ${citation.title || citation.id}`,
    onclick: () => openEvidence(citation, number, turn), text: `[${number}]`,
  });
}

function answerParagraph(answer, numbers, turn) {
  const paragraph = el("p", { class: "answer-text" });
  let found = false;
  let last = 0;
  for (const match of answer.answer.matchAll(/\[([^[\]]+)\]/g)) {
    const citation = numbers.get(match[1]);
    if (!citation) continue;
    paragraph.append(answer.answer.slice(last, match.index), citationButton(citation.c, citation.n, turn));
    last = match.index + match[0].length;
    found = true;
  }
  paragraph.append(answer.answer.slice(last));
  if (!found) {  // cited only in claims: number them after the text
    const cited = new Set(answer.claims.flatMap((claim) => claim.citations));
    for (const [id, { c, n }] of numbers) if (cited.has(id)) paragraph.append(" ", citationButton(c, n, turn));
  }
  return paragraph;
}

function renderAnswer(turn, answer) {
  const numbers = new Map(answer.citations.map((c, i) => [c.id, { c, n: i + 1 }]));
  const badges = el("p", { class: "badges" },
    el("span", { class: "badge", text: `kind: ${answer.kind}` }),
    el("span", { class: "badge", text: `confidence ${answer.confidence.toFixed(2)}` }),
    el("span", { class: "badge", text: `evidence judged: ${answer.retrieval_quality}` }),
    answer.cached ? el("span", { class: "badge", text: `cached (${answer.cached})` }) : null,
    answer.refused ? el("span", { class: "badge warn", text: "refused" }) : null);
  const parts = [badges, answerParagraph(answer, numbers, turn)];
  if (answer.asked_as && answer.asked_as !== answer.question) {
    parts.push(el("p", { class: "muted", text: `Answered as: ${answer.asked_as}` }));
  }
  if (answer.warnings.length) {
    parts.push(el("div", { class: "warnings", role: "note" }, el("strong", { text: "Warnings" }),
      el("ul", {}, answer.warnings.map((w) => el("li", { text: w })))));
  }
  const table = dataTable(answer.data);
  if (table) parts.push(table);
  if (answer.citations.length) {
    parts.push(el("h4", { text: "Sources" }), el("ol", { class: "sources" }, answer.citations.map((c, i) =>
      el("li", {}, citationButton(c, i + 1, turn), ` ${c.title || c.id} `,
        el("span", { class: "muted", text: `(${c.kind}, ${c.source || "graph"})` })))));
  }
  const seeds = graphSeeds(answer);
  if (seeds.length) parts.push(graphSection(seeds));
  parts.push(exportButtons(answer), detailsPanel(answer));
  turn.body.replaceChildren(...parts);
  if (answer.conversation_id) {
    state.conversationId = answer.conversation_id;
    $("conversation-label").textContent = `Conversation ${answer.conversation_id.slice(0, 8)}: follow-ups continue it`;
  }
  finishTurn(turn, answer.refused ? "Refused" : "Answered");
  announce(`Answer ready: ${answer.citations.length} sources`);
}

function openEvidence(citation, number, turn) {
  const item = turn.evidence.get(citation.id);
  const body = $("evidence-body");
  const row = (term, ...value) => [el("dt", { text: term }), el("dd", {}, ...value)];
  body.replaceChildren(
    ...row("Citation", `[${number}] ${citation.id}`),
    ...row("Title", citation.title || "–"),
    ...row("Source", `${citation.source || "graph"} (${citation.kind})`),
    ...row("Snippet", el("blockquote", { text: item ? item.text : citation.snippet })),
    ...row("Open", citation.url
      ? el("a", { href: citation.url, target: "_blank", rel: "noopener noreferrer", text: citation.url })
      : "no public page"),
  );
  const panel = $("evidence-panel");
  panel.hidden = false;
  panel.focus();
}

// --- structured data as sortable, copyable tables ---------------------------------------------------------------
function tableSpec(data) {
  const name = (node) => `${node.name || node.id}`;
  const fixed = (x) => (typeof x === "number" ? x.toFixed(2) : "");
  switch (data.kind) {
    case "members":
      return [`Genes of ${name(data.pathway)} (${data.genes.length} of ${data.total})`, ["symbol", "HGNC id", "name"],
        data.genes.map((g) => [g.symbol, g.id, g.name])];
    case "gene_pathways":
      return [`Pathways (${data.pathways.length} of ${data.total})`, ["id", "name", "source", "genes"],
        data.pathways.map((p) => [p.id, p.name, p.source, p.size ?? ""])];
    case "counterpart":
      return [`Counterparts of ${name(data.pathway)} in ${data.target_source}`,
        ["id", "name", "relation", "confidence", "Jaccard", "shared genes"],
        data.counterparts.map((m) => [m.pathway.id, m.pathway.name, `${m.relation} ${m.direction}`.trim(),
          fixed(m.confidence), fixed(m.jaccard), m.shared_genes.length])];
    case "shared_genes":
      return [`Shared genes (${data.shared.length} of ${data.total})`, ["symbol", "HGNC id", "name"],
        data.shared.map((g) => [g.symbol, g.id, g.name])];
    case "hierarchy":
      return [`Hierarchy of ${name(data.pathway)}`, ["relation", "id", "name", "source"],
        [...data.parents.map((p) => ["parent", p.id, p.name, p.source]),
          ...data.children.map((p) => ["child", p.id, p.name, p.source])]];
    case "compare":
      return [`${name(data.left)} compared with ${name(data.right)}`, ["in", data.subject === "pathways" ? "gene" : "pathway"],
        [...data.shared.map((x) => ["both", x]), ...data.only_left.map((x) => [`only ${name(data.left)}`, x]),
          ...data.only_right.map((x) => [`only ${name(data.right)}`, x])]];
    default:
      return null;
  }
}

function dataTable(data) {
  const spec = data ? tableSpec(data) : null;
  if (!spec) return null;
  const [caption, headers, rows] = spec;
  const tbody = el("tbody");
  const fill = (list) => tbody.replaceChildren(...list.map((r) => el("tr", {}, r.map((v) => el("td", { text: v })))));
  const order = { column: -1, ascending: true };
  const ths = headers.map((header, column) => el("th", { scope: "col", "aria-sort": "none" },
    el("button", { type: "button", text: header, onclick: () => sortBy(column) })));
  function sortBy(column) {
    order.ascending = order.column === column ? !order.ascending : true;
    order.column = column;
    const numeric = rows.every((r) => r[column] === "" || !Number.isNaN(Number(r[column])));
    const sorted = [...rows].sort((a, b) => {
      const [x, y] = [a[column], b[column]];
      const diff = numeric ? Number(x) - Number(y) : String(x).localeCompare(String(y));
      return order.ascending ? diff : -diff;
    });
    ths.forEach((th, i) => th.setAttribute("aria-sort", i !== column ? "none"
      : order.ascending ? "ascending" : "descending"));
    fill(sorted);
    announce(`Sorted by ${headers[column]}, ${order.ascending ? "ascending" : "descending"}`);
  }
  fill(rows);
  const copy = el("button", {
    type: "button", class: "copy", text: "Copy table",
    onclick: async () => {
      const tsv = [headers, ...[...tbody.rows].map((tr) => [...tr.cells].map((td) => td.textContent))]
        .map((r) => r.join("\t")).join("\n");
      try {
        await navigator.clipboard.writeText(tsv);
        announce(`Copied ${tbody.rows.length} rows`);
        copy.textContent = `Copied ${tbody.rows.length} rows`;
      } catch {
        announce("Copy is not allowed here; select the table instead");
      }
    },
  });
  return el("div", { class: "data" },
    el("table", {}, el("caption", { text: caption }), el("thead", {}, el("tr", {}, ths)), tbody), copy);
}

// --- the graph neighbourhood -----------------------------------------------------------------------------------
function graphSeeds(answer) {
  const ids = [];
  const add = (id) => { if (id && !ids.includes(id)) ids.push(id); };
  const d = answer.data;
  if (d) {
    [d.pathway, d.left, d.right, ...(d.pathways || [])].forEach((n) => n && typeof n === "object" && add(n.id));
    (d.counterparts || []).forEach((m) => add(m.pathway.id));
    if (d.kind === "gene_pathways") d.genes.forEach((g) => add(g.id));
  }
  answer.citations.filter((c) => c.kind === "graph").forEach((c) => add(c.id));
  return ids.filter((id) => /^(R-HSA-\d+|hsa\d{5}|HGNC:\d+)$/.test(id)).slice(0, 4);
}

function graphSection(seeds) {
  const box = el("figure", { class: "graph" }, el("figcaption", { text: "Graph neighbourhood (loading…)" }));
  const query = seeds.map((id) => `ids=${encodeURIComponent(id)}`).join("&");
  api(`/graph/neighbourhood?${query}`).then((r) => r.json()).then((graph) => drawGraph(box, graph))
    .catch((error) => { box.querySelector("figcaption").textContent = `Graph neighbourhood unavailable: ${error.message}`; });
  return box;
}

function drawGraph(box, graph) {
  const W = 640, H = 360, cx = W / 2, cy = H / 2;
  const seeds = graph.nodes.filter((n) => n.seed);
  const others = graph.nodes.filter((n) => !n.seed);
  const at = new Map();
  seeds.forEach((n, i) => {
    const a = (2 * Math.PI * i) / seeds.length;
    at.set(n.id, seeds.length === 1 ? [cx, cy] : [cx + 70 * Math.cos(a), cy + 55 * Math.sin(a)]);
  });
  others.forEach((n, i) => {
    const a = (2 * Math.PI * i) / Math.max(others.length, 1) - Math.PI / 2;
    at.set(n.id, [cx + 250 * Math.cos(a), cy + 145 * Math.sin(a)]);
  });
  const lines = graph.edges.filter((e) => at.has(e.source) && at.has(e.target)).map((e) => {
    const [[x1, y1], [x2, y2]] = [at.get(e.source), at.get(e.target)];
    return svg("line", { x1, y1, x2, y2, class: `edge ${e.type.toLowerCase()}` },
      svg("title", { text: `${e.source} ${e.type} ${e.target}` }));
  });
  const nodes = graph.nodes.map((n) => {
    const [x, y] = at.get(n.id);
    const question = n.kind === "gene" ? `Which pathways contain ${n.label}?` : `Which genes belong to ${n.id}?`;
    const shape = n.kind === "gene"
      ? svg("rect", { x: x - 7, y: y - 7, width: 14, height: 14 })
      : svg("circle", { cx: x, cy: y, r: n.seed ? 11 : 8 });
    const label = n.label.length > 28 ? `${n.label.slice(0, 27)}…` : n.label;
    const go = () => { $("question").value = question; ask(question, mode()); };
    return svg("g", {
      class: `node ${n.kind}${n.seed ? " seed" : ""}`, tabindex: "0", role: "button",
      "aria-label": `${n.kind} ${n.label} (${n.id}): ask "${question}"`,
      onclick: go, onkeydown: (event) => { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); go(); } },
    }, shape, svg("text", { x, y: y + 22, "text-anchor": "middle", text: label }),
    svg("title", { text: `${n.label} (${n.id})${n.more ? `, ${n.more} more not drawn` : ""}` }));
  });
  const picture = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "group", "aria-label": "Graph neighbourhood" },
    ...lines, ...nodes);
  const missing = graph.missing.length ? ` Not in the graph: ${graph.missing.join(", ")}.` : "";
  box.replaceChildren(picture, el("figcaption", {
    text: `Graph neighbourhood: ${graph.nodes.length} nodes. Circles are pathways, squares genes; solid lines `
      + `membership, dashed lines Reactome ↔ KEGG relations and sub-pathways. Select a node to ask about it.${missing}`,
  }));
}

// --- export and details ----------------------------------------------------------------------------------------
async function download(answer, format) {
  const path = `/answers/${encodeURIComponent(answer.answer_id)}${format === "md" ? "?format=md" : ""}`;
  const blob = await (await api(path)).blob();
  const link = el("a", { href: URL.createObjectURL(blob), download: `flux-answer-${answer.answer_id}.${format}` });
  document.body.append(link);
  link.click();
  link.remove();
  window.setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

function exportButtons(answer) {
  if (!answer.answer_id) return el("p", { class: "muted", text: "This answer was not stored; nothing to export." });
  return el("p", { class: "export" },
    el("button", { type: "button", text: "Export Markdown", onclick: () => download(answer, "md") }),
    el("button", { type: "button", text: "Export JSON", onclick: () => download(answer, "json") }));
}

function detailsPanel(answer) {
  const row = (term, value) => [el("dt", { text: term }), el("dd", { text: value || "–" })];
  const timings = Object.entries(answer.timings_ms || {}).map(([stage, ms]) => row(`${stage} (ms)`, String(ms)));
  return el("details", { class: "details" }, el("summary", { text: "Versions and timings" }),
    el("dl", {},
      ...row("Dataset", answer.dataset_version), ...row("Index", answer.index_version),
      ...row("Pipeline", answer.pipeline_version), ...row("Dagster run", answer.dagster_run_id),
      ...row("Mode / route", `${answer.mode} / ${answer.route}`), ...row("Reranker", answer.reranker),
      ...row("Provider", answer.provider), ...row("Re-retrievals", String(answer.attempts)),
      ...timings, el("dt", { text: "Total (ms)" }), el("dd", { class: "total-ms", text: "–" })));
}

// --- wiring -----------------------------------------------------------------------------------------------------
function mode() {
  return document.querySelector('input[name="mode"]:checked').value;
}

function newConversation() {
  state.conversationId = null;
  $("conversation-label").textContent = "";
  $("history").replaceChildren();
  $("history-empty").hidden = false;
  $("turns").replaceChildren();
  announce("New conversation");
}

document.addEventListener("DOMContentLoaded", () => {
  document.body.append(el("div", { id: "announcer", class: "visually-hidden", "aria-live": "polite" }));
  $("examples").replaceChildren(...EXAMPLES.map(([kind, question]) => el("li", {},
    el("button", { type: "button", class: "example", onclick: () => { $("question").value = question; ask(question, mode()); } },
      el("span", { class: "kind", text: kind }), ` ${question}`))));
  $("ask-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const question = $("question").value.trim();
    if (question) ask(question, mode());
  });
  $("question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) $("ask-form").requestSubmit();
  });
  $("new-conversation").addEventListener("click", newConversation);
  document.querySelector(".skip").addEventListener("click", (event) => { event.preventDefault(); $("question").focus(); });
  $("evidence-close").addEventListener("click", () => { $("evidence-panel").hidden = true; $("question").focus(); });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !$("evidence-panel").hidden) $("evidence-panel").hidden = true;
  });
  refreshHealth();
  window.setInterval(refreshHealth, HEALTH_EVERY_MS);
});
