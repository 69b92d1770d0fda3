// Flux's page, part 2 of 3: an answer with its citations, data tables, graph neighbourhood, export and details.
"use strict";

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

// The plan the question was read as, one line: "check part_of R-HSA-70171 → R-HSA-1430728".
function planText(plan) {
  const names = (entities) => entities.map((e) => e.name && e.name !== e.id ? `${e.id} (${e.name})` : e.id).join(", ");
  return [plan.operation, plan.relation || "", names(plan.subjects), plan.objects.length ? `→ ${names(plan.objects)}` : "",
    plan.returns ? `returns ${plan.returns}` : "", plan.scope ? `not held: ${plan.scope}` : ""]
    .filter(Boolean).join(" ");
}

function renderAnswer(turn, answer) {
  const numbers = new Map(answer.citations.map((c, i) => [c.id, { c, n: i + 1 }]));
  const badges = el("p", { class: "badges" },
    el("span", { class: "badge", text: `kind: ${answer.kind}` }),
    el("span", { class: "badge", text: `confidence ${answer.confidence.toFixed(2)}` }),
    el("span", { class: "badge", text: `evidence judged: ${answer.retrieval_quality}` }),
    answer.scope ? el("span", { class: "badge warn", text: `not held: ${answer.scope.replace("_", " ")}` }) : null,
    answer.cached ? el("span", { class: "badge", text: `cached (${answer.cached})` }) : null,
    answer.refused ? el("span", { class: "badge warn", text: "refused" }) : null);
  const parts = [badges, answerParagraph(answer, numbers, turn)];
  if (answer.asked_as && answer.asked_as !== answer.question) {
    parts.push(el("p", { class: "muted", text: `Answered as: ${answer.asked_as}` }));
  }
  if (answer.plan) parts.push(el("p", { class: "muted plan", text: `Read as: ${planText(answer.plan)}` }));
  if (answer.warnings.length) {
    parts.push(el("div", { class: "warnings", role: "note" }, el("strong", { text: "Warnings" }),
      el("ul", {}, answer.warnings.map((w) => el("li", { text: w })))));
  }
  const table = dataTable(answer.table);
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

// --- structured data as sortable, copyable tables (each kind builds its table server-side) ----------------------
function dataTable(spec) {
  if (!spec || !spec.rows.length) return null;
  const { caption, columns: headers, rows } = spec;
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
  if (answer.plan) [...answer.plan.subjects, ...answer.plan.objects].forEach((e) => add(e.id));
  if (d) {
    [d.pathway, d.left, d.right, ...(d.pathways || [])].forEach((n) => n && typeof n === "object" && add(n.id));
    (d.counterparts || []).forEach((m) => add(m.pathway.id));
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
