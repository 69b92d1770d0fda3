// Flux's page, part 3 of 3: asking (a question streamed turn by turn, follow-ups in one conversation) and wiring.
"use strict";

const HEALTH_EVERY_MS = 20000;
const EXAMPLES = [
  ["members", "Which genes belong to the KEGG pathway 'Mismatch repair'?"],
  ["gene pathways", "Which pathways contain both MLH1 and MSH2?"],
  ["counterpart", "Which KEGG pathway corresponds to Reactome's glycolysis?"],
  ["shared genes", "Which genes do the KEGG and Reactome mismatch repair pathways share?"],
  ["compare", "Compare KEGG glycolysis and Reactome glycolysis"],
  ["hierarchy", "What are the sub-pathways of Reactome's glucose metabolism?"],
  ["gene facts", "What is the official symbol of APAF-1?"],
  ["count", "How many genes are in KEGG's cell cycle?"],
  ["compounds", "Which pathways use pyruvate (C00022)?"],
  ["difference", "Which genes are in KEGG cell cycle but not in Reactome's Cell Cycle, Mitotic?"],
  ["release changes", "What changed in KEGG's cell cycle pathway since the previous release?"],
  ["yes/no", "Is Glycolysis part of Metabolism?"],
  ["connection", "What connects Apoptosis and the p53 signaling pathway?"],
  ["not held", "Which drugs target the MAPK signaling pathway?"],
  ["literature", "What does TP53 do in apoptosis?"],
];
const CHANGE_LABELS = {
  pathway_added: "pathways added", pathway_removed: "pathways removed", pathway_renamed: "pathways renamed",
  members_changed: "pathways whose genes changed", gene_added: "genes added", gene_removed: "genes removed",
  gene_renamed: "genes renamed",
};
const state = { conversationId: null, turns: 0, busy: false };

// --- one question and its answer -----------------------------------------------------------------------------
function stepText(step) {
  const n = (x) => (typeof x === "number" ? x.toFixed(2) : "–");
  switch (step.step) {
    case "plan": return `Question read as ${step.kind}: ${step.plan}`;
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
    case "llm_call": {
      const tokens = step.tokens_out == null ? "" : `, ${step.tokens_out} tokens out`;
      return `LLM ${step.llm_step}: ${step.outcome} in ${(step.ms / 1000).toFixed(1)} s${tokens}`
        + (step.detail ? ` (${step.detail})` : "");
    }
    case "llm_wait": return `LLM ${step.llm_step}: waiting for the endpoint (${step.ahead} ahead)`;
    case "offline_answer": return "The offline answer stands in for the LLM's";
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

// --- what the last refresh changed (loaded when opened: it needs the API key) ----------------------------------
function releaseBlock(item) {
  const head = el("h3", { text: `${item.source}: ${item.release}` });
  if (!item.previous_release) {
    return el("div", { class: "release" }, head, el("p", { class: "muted", text: "No earlier release is kept." }));
  }
  const counts = Object.entries(item.counts).map(([kind, n]) => `${n} ${CHANGE_LABELS[kind] || kind}`);
  const moves = item.largest.map((m) => el("li", { text: `${m.pathway_id} ${m.name}: +${m.gained} / −${m.lost} genes` }));
  return el("div", { class: "release" }, head,
    el("p", { text: `Since ${item.previous_release}: ${counts.length ? counts.join(", ") : "nothing changed"}.` }),
    ...(moves.length ? [el("ul", { "aria-label": "Largest member changes" }, ...moves)] : []));
}

async function loadReleaseChanges() {
  try {
    const response = await api("/releases/changes");
    const data = await response.json();
    $("releases-body").replaceChildren(...data.sources.map(releaseBlock));
  } catch (error) {
    $("releases-body").replaceChildren(el("p", { class: "muted", text: `Not available: ${error.message}` }));
  }
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
  $("releases-box").addEventListener("toggle", () => { if ($("releases-box").open) loadReleaseChanges(); });
  refreshHealth();
  window.setInterval(refreshHealth, HEALTH_EVERY_MS);
});
