// Flux's page, part 1 of 3: DOM helpers, the API (keys kept for this tab), service status, Server-Sent Events.
// Plain scripts loaded in order (flux-io.js, flux-answer.js, flux.js); nothing is fetched from elsewhere. Every
// value from the service goes on the page as text (textContent), never as HTML: answers may quote documents.
"use strict";

const KEY_STORE = "flux-api-key";  // sessionStorage: this tab only
const STORE_NAMES = { postgres: "Postgres", neo4j: "Neo4j", redis: "Redis" };
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
