// kairo's chat page: conversations in localStorage, replies streamed from /v1/chat/completions (SSE), a stop
// button that aborts the request (the server cancels it when the connection closes), settings, the API key when
// the server asks for one, and a model picker when /v1/models lists several.
// Model output reaches the DOM only as text (textContent) or through the markdown renderer, which escapes first;
// the page's Content-Security-Policy lets innerHTML take nothing but this file's Trusted Types policy.
import { renderMarkdown } from "./markdown.js";

const STORE = {
  conversations: "kairo.conversations",
  current: "kairo.current",
  settings: "kairo.settings",
  apiKey: "kairo.apiKey",
};
// max_tokens 0: not sent, so the server lets a reply run to the end of the context.
const DEFAULT_SETTINGS = { system: "", temperature: 0.7, top_p: 1, max_tokens: 0, extra: "", model: "" };

const $ = (id) => document.getElementById(id);
const el = {
  app: $("app"),
  newChat: $("new-chat"),
  conversations: $("conversations"),
  title: $("chat-title"),
  model: $("model"),
  modelLabel: $("model-label"),
  toggleSidebar: $("toggle-sidebar"),
  toggleSettings: $("toggle-settings"),
  settings: $("settings"),
  system: $("setting-system"),
  temperature: $("setting-temperature"),
  topP: $("setting-top-p"),
  maxTokens: $("setting-max-tokens"),
  extra: $("setting-extra"),
  keyState: $("key-state"),
  forgetKey: $("forget-key"),
  thread: $("thread"),
  messages: $("messages"),
  empty: $("empty"),
  banner: $("banner"),
  composer: $("composer"),
  input: $("input"),
  send: $("send"),
  stop: $("stop"),
  keyDialog: $("key-dialog"),
  keyForm: $("key-form"),
  keyReason: $("key-reason"),
  keyInput: $("key-input"),
  keyCancel: $("key-cancel"),
};

// The one way HTML enters the page (CSP: require-trusted-types-for 'script'; trusted-types kairo-markdown).
const htmlPolicy = window.trustedTypes
  ? window.trustedTypes.createPolicy("kairo-markdown", { createHTML: (text) => renderMarkdown(text) })
  : { createHTML: (text) => renderMarkdown(text) };
function setMarkdown(node, text) {
  node.innerHTML = htmlPolicy.createHTML(text);
}

// ---- storage ----

function load(key, fallback) {
  try {
    const v = localStorage.getItem(key);
    return v === null ? fallback : JSON.parse(v);
  } catch {
    return fallback;
  }
}
function store(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch (e) {
    showBanner(`Could not save to the browser's storage: ${e.message}`);
  }
}

const state = {
  conversations: load(STORE.conversations, []).filter((c) => c && Array.isArray(c.messages)),
  currentId: load(STORE.current, null),
  settings: { ...DEFAULT_SETTINGS, ...load(STORE.settings, {}) },
  apiKey: localStorage.getItem(STORE.apiKey) || "",
  models: [],
  controller: null,  // the AbortController of the reply being streamed
  streaming: null,   // { conversation, message } while a reply streams
};

function saveConversations() {
  store(STORE.conversations, state.conversations);
  store(STORE.current, state.currentId);
}
function current() {
  return state.conversations.find((c) => c.id === state.currentId) || null;
}
function newId() {
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

// ---- API ----

function apiHeaders() {
  const h = { "Content-Type": "application/json" };
  if (state.apiKey) h.Authorization = `Bearer ${state.apiKey}`;
  return h;
}

// The server's own words for a failed response: OpenAI's {"error": {"message"}} or the raw text.
async function errorText(resp) {
  const text = await resp.text().catch(() => "");
  try {
    const j = JSON.parse(text);
    if (j && j.error) return typeof j.error === "string" ? j.error : j.error.message || JSON.stringify(j.error);
  } catch {
    // not JSON
  }
  return text.trim() || `${resp.status} ${resp.statusText}`;
}

// fetch() that asks for the API key when the server answers 401, then tries again with it. Null: the user
// cancelled the prompt (the 401's message is returned as an error then).
async function apiFetch(path, init = {}) {
  for (;;) {
    const resp = await fetch(path, { ...init, headers: apiHeaders() });
    if (resp.status !== 401) return resp;
    const message = await errorText(resp);
    const key = await askForKey(state.apiKey ? `The server refused the key: ${message}` : message);
    if (key === null) throw new Error(`${message} (no API key given)`);
    setApiKey(key);
  }
}

function askForKey(reason) {
  return new Promise((resolve) => {
    el.keyReason.textContent = reason;
    el.keyInput.value = "";
    const finish = (value) => {
      el.keyForm.removeEventListener("submit", onSubmit);
      el.keyCancel.removeEventListener("click", onCancel);
      el.keyDialog.removeEventListener("cancel", onCancel);
      el.keyDialog.close();
      resolve(value);
    };
    const onSubmit = (e) => {
      e.preventDefault();
      const key = el.keyInput.value.trim();
      if (key) finish(key);
    };
    const onCancel = (e) => {
      e.preventDefault();
      finish(null);
    };
    el.keyForm.addEventListener("submit", onSubmit);
    el.keyCancel.addEventListener("click", onCancel);
    el.keyDialog.addEventListener("cancel", onCancel);
    el.keyDialog.showModal();
    el.keyInput.focus();
  });
}

function setApiKey(key) {
  state.apiKey = key;
  if (key) localStorage.setItem(STORE.apiKey, key);
  else localStorage.removeItem(STORE.apiKey);
  renderKeyState();
}

async function loadModels() {
  for (let attempt = 0; ; attempt++) {
    let resp;
    try {
      resp = await apiFetch("v1/models");
    } catch (e) {
      showBanner(`Cannot list the models: ${e.message}`);
      return;
    }
    if (resp.status === 503 && attempt < 600) {  // still loading the model: /health turns 200 when ready
      showBanner("The server is loading the model…");
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    if (!resp.ok) {
      showBanner(`Cannot list the models: ${await errorText(resp)}`);
      return;
    }
    const body = await resp.json();
    state.models = (body.data || []).map((m) => m.id).filter((id) => typeof id === "string");
    hideBanner();
    renderModels();
    return;
  }
}

// ---- server-sent events ----

// Calls onEvent(json) for each `data:` event of the stream until [DONE] or its end.
async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer = (buffer + value).replace(/\r\n/g, "\n");
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
      if (!data) continue;
      if (data === "[DONE]") return;
      try {
        onEvent(JSON.parse(data));
      } catch (e) {
        reader.cancel().catch(() => {});  // an error event (or bad JSON) ends the reply: close the stream too
        throw e;
      }
    }
  }
}

// ---- chat ----

function requestBody(conversation) {
  const s = state.settings;
  const messages = [];
  if (s.system.trim()) messages.push({ role: "system", content: s.system });
  for (const m of conversation.messages) {
    if (m.pending || m.error || (m.role === "assistant" && !m.content)) continue;
    messages.push({ role: m.role, content: m.content });
  }
  const body = { messages, stream: true, stream_options: { include_usage: true } };
  if (state.settings.model) body.model = state.settings.model;
  if (Number.isFinite(s.temperature)) body.temperature = s.temperature;
  if (Number.isFinite(s.top_p)) body.top_p = s.top_p;
  if (Number.isFinite(s.max_tokens) && s.max_tokens > 0) body.max_tokens = s.max_tokens;
  if (s.extra.trim()) {
    let extra;
    try {
      extra = JSON.parse(s.extra);
    } catch (e) {
      throw new Error(`The extra request fields in Settings are not valid JSON: ${e.message}`);
    }
    if (!extra || typeof extra !== "object" || Array.isArray(extra)) {
      throw new Error("The extra request fields in Settings must be a JSON object");
    }
    Object.assign(body, extra);
  }
  return body;
}

async function sendMessage(text) {
  if (state.streaming || !text.trim()) return;
  let conversation = current();
  if (!conversation) {
    conversation = { id: newId(), title: "", created: Date.now(), messages: [] };
    state.conversations.unshift(conversation);
    state.currentId = conversation.id;
  }
  if (!conversation.title) conversation.title = text.trim().split("\n")[0].slice(0, 60);
  conversation.messages.push({ role: "user", content: text });
  const reply = { role: "assistant", content: "", reasoning: "", pending: true, model: state.settings.model };
  conversation.messages.push(reply);
  saveConversations();
  renderConversations();
  renderMessages();

  state.streaming = { conversation, message: reply };
  state.controller = new AbortController();
  setBusy(true);
  const started = performance.now();
  let firstToken = 0;
  try {
    const body = requestBody(conversation);
    const resp = await apiFetch("v1/chat/completions", {
      method: "POST",
      body: JSON.stringify(body),
      signal: state.controller.signal,
    });
    if (!resp.ok) throw new Error(await errorText(resp));
    await readEvents(resp.body, (event) => {
      if (event.error) throw new Error(event.error.message || JSON.stringify(event.error));
      const choice = event.choices && event.choices[0];
      if (choice) {
        const delta = choice.delta || {};
        const reasoning = delta.reasoning_content ?? delta.reasoning;
        if (reasoning) reply.reasoning += reasoning;
        if (delta.content) reply.content += delta.content;
        if ((reasoning || delta.content) && !firstToken) firstToken = performance.now();
        if (choice.finish_reason) reply.finish = choice.finish_reason;
      }
      if (event.usage) reply.usage = event.usage;
      scheduleRender(reply);
    });
  } catch (e) {
    if (e.name === "AbortError") reply.stopped = true;
    else reply.error = e.message || String(e);
  } finally {
    delete reply.pending;
    if (firstToken && reply.usage && reply.usage.completion_tokens > 1) {
      const seconds = (performance.now() - firstToken) / 1000;
      reply.tokensPerSecond = (reply.usage.completion_tokens - 1) / Math.max(seconds, 1e-3);
    }
    reply.seconds = (performance.now() - started) / 1000;
    state.streaming = null;
    state.controller = null;
    saveConversations();
    renderMessages();
    setBusy(false);
    el.input.focus();
  }
}

function stopReply() {
  if (state.controller) state.controller.abort();
}

// ---- rendering ----

let renderQueued = null;
function scheduleRender(message) {
  if (renderQueued) return;
  renderQueued = requestAnimationFrame(() => {
    renderQueued = null;
    // Follow the reply only while the reader is at the bottom; scrolling up to read stops the following.
    const t = el.thread;
    const follow = t.scrollHeight - t.scrollTop - t.clientHeight < 80;
    const node = el.messages.querySelector(".message.pending");
    if (node) fillAssistant(node, message);
    else renderMessages();
    if (follow) t.scrollTop = t.scrollHeight;
  });
}

function make(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function fillAssistant(node, m) {
  node.replaceChildren();
  node.classList.toggle("pending", Boolean(m.pending));
  if (m.reasoning) {
    const details = make("details", "reasoning");
    const summary = make("summary", "", m.pending && !m.content ? "Thinking…" : "Thought");
    details.append(summary, make("div", "reasoning-text", m.reasoning));
    node.append(details);
  }
  const content = make("div", "content");
  setMarkdown(content, m.content);
  node.append(content);
  if (m.pending && !m.content && !m.reasoning) node.append(make("div", "typing", "…"));
  const meta = [];
  if (m.stopped) meta.push("stopped");
  if (m.usage) meta.push(`${m.usage.completion_tokens} tokens`);
  if (m.tokensPerSecond) meta.push(`${m.tokensPerSecond.toFixed(1)} tok/s`);
  if (m.finish === "length") meta.push("max_tokens reached");
  if (m.model && state.models.length > 1) meta.push(m.model);
  if (meta.length) node.append(make("div", "meta", meta.join(" · ")));
  if (m.error) node.append(make("div", "error", m.error));
}

function renderMessages() {
  const conversation = current();
  el.messages.replaceChildren();
  const messages = conversation ? conversation.messages : [];
  el.empty.hidden = messages.length > 0;
  el.title.textContent = conversation?.title || "New chat";
  for (const m of messages) {
    const node = make("div", `message ${m.role === "user" ? "user" : "assistant"}`);
    if (m.role === "user") node.append(make("div", "content", m.content));
    else fillAssistant(node, m);
    el.messages.append(node);
  }
  el.thread.scrollTop = el.thread.scrollHeight;
}

function renderConversations() {
  el.conversations.replaceChildren();
  for (const c of state.conversations) {
    const li = make("li", c.id === state.currentId ? "active" : "");
    const open = make("button", "open", c.title || "New chat");
    open.type = "button";
    open.title = c.title || "New chat";
    open.addEventListener("click", () => switchTo(c.id));
    const del = make("button", "delete", "×");
    del.type = "button";
    del.title = "Delete this conversation";
    del.setAttribute("aria-label", `Delete ${c.title || "conversation"}`);
    del.addEventListener("click", () => deleteConversation(c.id));
    li.append(open, del);
    el.conversations.append(li);
  }
}

function renderModels() {
  const models = state.models;
  if (!models.includes(state.settings.model)) state.settings.model = models[0] || "";
  el.model.replaceChildren(...models.map((id) => {
    const o = make("option", "", id);
    o.value = id;
    return o;
  }));
  el.model.value = state.settings.model;
  // One model: nothing to pick; its name is shown instead.
  el.model.hidden = models.length <= 1;
  el.modelLabel.hidden = models.length !== 1;
  el.modelLabel.textContent = models[0] || "";
  store(STORE.settings, state.settings);
}

function renderSettings() {
  const s = state.settings;
  el.system.value = s.system;
  el.temperature.value = s.temperature;
  el.topP.value = s.top_p;
  el.maxTokens.value = s.max_tokens || "";
  el.extra.value = s.extra;
  renderKeyState();
}

function renderKeyState() {
  el.keyState.textContent = state.apiKey ? "An API key is saved in this browser." : "No API key saved.";
  el.forgetKey.hidden = !state.apiKey;
}

function setBusy(busy) {
  el.send.hidden = busy;
  el.stop.hidden = !busy;
  el.app.classList.toggle("busy", busy);
}

function showBanner(text) {
  el.banner.textContent = text;
  el.banner.hidden = false;
}
function hideBanner() {
  el.banner.hidden = true;
}

// ---- actions ----

function switchTo(id) {
  if (state.streaming) stopReply();
  state.currentId = id;
  saveConversations();
  renderConversations();
  renderMessages();
  el.app.classList.remove("sidebar-open");
}

function newConversation() {
  if (state.streaming) stopReply();
  state.currentId = null;
  saveConversations();
  renderConversations();
  renderMessages();
  el.input.focus();
}

function deleteConversation(id) {
  if (state.streaming && state.streaming.conversation.id === id) stopReply();
  state.conversations = state.conversations.filter((c) => c.id !== id);
  if (state.currentId === id) state.currentId = null;
  saveConversations();
  renderConversations();
  renderMessages();
}

function readNumber(input, fallback) {
  const v = input.value.trim();
  if (v === "") return fallback;
  const n = Number(v);
  return Number.isFinite(n) ? n : fallback;
}

function saveSettings() {
  state.settings.system = el.system.value;
  state.settings.temperature = readNumber(el.temperature, DEFAULT_SETTINGS.temperature);
  state.settings.top_p = readNumber(el.topP, DEFAULT_SETTINGS.top_p);
  state.settings.max_tokens = Math.trunc(readNumber(el.maxTokens, 0));
  state.settings.extra = el.extra.value;
  store(STORE.settings, state.settings);
}

el.composer.addEventListener("submit", (e) => {
  e.preventDefault();
  const text = el.input.value;
  if (!text.trim() || state.streaming) return;
  el.input.value = "";
  autoGrow();
  sendMessage(text);
});
el.input.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    el.composer.requestSubmit();
  }
});
function autoGrow() {
  el.input.style.height = "auto";
  el.input.style.height = `${Math.min(el.input.scrollHeight, 240)}px`;
}
el.input.addEventListener("input", autoGrow);
el.stop.addEventListener("click", stopReply);
el.newChat.addEventListener("click", newConversation);
el.toggleSidebar.addEventListener("click", () => el.app.classList.toggle("sidebar-open"));
el.toggleSettings.addEventListener("click", () => {
  el.settings.hidden = !el.settings.hidden;
  el.toggleSettings.setAttribute("aria-expanded", String(!el.settings.hidden));
});
for (const input of [el.system, el.temperature, el.topP, el.maxTokens, el.extra]) {
  input.addEventListener("change", saveSettings);
}
el.model.addEventListener("change", () => {
  state.settings.model = el.model.value;
  store(STORE.settings, state.settings);
});
el.forgetKey.addEventListener("click", () => setApiKey(""));
el.banner.addEventListener("click", hideBanner);
el.messages.addEventListener("click", (e) => {
  const button = e.target.closest("button.copy-code");
  if (!button) return;
  const code = button.closest(".code-block")?.querySelector("code");
  if (!code || !navigator.clipboard) return;
  navigator.clipboard.writeText(code.textContent).then(() => {
    button.textContent = "Copied";
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  }, () => {});
});

// Replies cut off by a reload stay, marked as stopped.
for (const c of state.conversations) {
  for (const m of c.messages) {
    if (m.pending) {
      delete m.pending;
      m.stopped = true;
    }
  }
}
if (!current()) state.currentId = null;
renderSettings();
renderConversations();
renderMessages();
setBusy(false);
document.documentElement.dataset.ready = "true";  // for tests: the page's script ran
loadModels();
el.input.focus();
