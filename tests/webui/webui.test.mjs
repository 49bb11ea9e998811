// The web chat UI in a real browser (Debian's chromium, headless, driven by puppeteer-core) against a real
// `kairo serve` started by run_webui_test.sh with an API key, a LoRA adapter (so /v1/models lists two models) and a
// template under which the demo model writes text. In order, on one page: the page loads without the key and asks
// for it when the API answers 401; a reply streams in; Stop ends a long reply mid-way and the server counts the
// request as aborted; the server's error message is shown; reasoning shows collapsed and model output renders as
// markdown without becoming markup; conversations survive a reload and can be switched and deleted. No console
// errors anywhere but those a step expects (the 401s of the key prompt, the 400 of the error step). A screenshot is
// saved at the end.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import puppeteer from "puppeteer-core";

const BASE = process.env.KAIRO_URL;          // http://127.0.0.1:PORT/
const KEY = process.env.KAIRO_API_KEY;
const CHROMIUM = process.env.CHROMIUM;
const SCREENSHOT = process.env.WEBUI_SCREENSHOT;
const TIMEOUT = 10000;

let browser;
let page;
const problems = [];        // console errors, page errors, failed requests
const allowed = [];         // the ones a step expects, moved out of `problems` by allow()

function allow(pattern, count) {
  const hits = problems.filter((p) => pattern.test(p));
  assert.equal(hits.length, count, `expected ${count} x ${pattern}, got: ${JSON.stringify(problems)}`);
  for (const h of hits) {
    problems.splice(problems.indexOf(h), 1);
    allowed.push(h);
  }
}

// The requests /metrics counts as aborted (its line has a model_name label too).
async function abortedRequests() {
  const text = await (await fetch(new URL("metrics", BASE), { headers: { Authorization: `Bearer ${KEY}` } })).text();
  const line = text.split("\n")
    .find((l) => l.startsWith("kairo:request_success_total{") && l.includes('finished_reason="abort"'));
  assert.ok(line, "/metrics has the aborted-requests counter");
  return Number(line.split(" ").pop());
}

async function idle() {
  await page.waitForSelector("#send:not([hidden])", { timeout: TIMEOUT });
}

async function setSetting(selector, value) {
  await page.$eval(selector, (node, v) => {
    node.value = v;
    node.dispatchEvent(new Event("change"));
  }, value);
}

async function send(text) {
  await page.type("#input", text);
  await page.keyboard.press("Enter");
}

before(async () => {
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // --no-sandbox: CI runs as root, where chromium's sandbox cannot start.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--window-size=1280,800"],
    defaultViewport: { width: 1280, height: 800 },
  });
  page = await browser.newPage();
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()} (${m.location()?.url ?? ""})`);
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`));
});

after(async () => {
  if (browser) await browser.close();
});

test("the page loads without a key, then asks for one when the API answers 401", async () => {
  const resp = await page.goto(BASE, { waitUntil: "load" });
  assert.equal(resp.status(), 200);
  assert.match(resp.headers()["content-security-policy"], /script-src 'self'/);
  await page.waitForSelector("html[data-ready=true]", { timeout: TIMEOUT });
  assert.equal(await page.title(), "kairo");

  await page.waitForSelector("#key-dialog[open]", { timeout: TIMEOUT });
  assert.match(await page.$eval("#key-reason", (n) => n.textContent), /missing or invalid API key/);
  await page.type("#key-input", "sk-wrong");
  await page.click("#key-save");
  await page.waitForFunction(() => /refused the key/.test(document.querySelector("#key-reason").textContent),
    { timeout: TIMEOUT });
  assert.ok(await page.$("#key-dialog[open]"));
  await page.type("#key-input", KEY);
  await page.click("#key-save");
  await page.waitForSelector("#key-dialog:not([open])", { timeout: TIMEOUT });

  // Two models (the base and the adapter): the picker shows both.
  await page.waitForSelector("#model:not([hidden])", { timeout: TIMEOUT });
  const models = await page.$$eval("#model option", (os) => os.map((o) => o.value));
  assert.deepEqual(models, ["webui-model", "webui-lora"]);
  await page.select("#model", "webui-model");
  assert.equal(await page.evaluate(() => localStorage.getItem("kairo.apiKey")), KEY);
  // Chromium logs each 401 as a failed resource load: the key prompt is about exactly these two.
  allow(/status of 401/, 2);
  assert.deepEqual(problems, []);
});

test("a reply streams in", async () => {
  await page.click("#toggle-settings");
  await setSetting("#setting-max-tokens", "40");
  await setSetting("#setting-temperature", "0.8");
  await setSetting("#setting-extra", '{"seed": 7}');
  await page.click("#toggle-settings");
  // Count the renders of the reply while it streams.
  await page.evaluate(() => {
    window.__renders = new Set();
    new MutationObserver(() => {
      const pending = document.querySelector(".message.assistant.pending .content");
      if (pending && pending.textContent) window.__renders.add(pending.textContent);
    }).observe(document.getElementById("messages"), { childList: true, subtree: true, characterData: true });
  });
  // The reply's bytes reach the page at 20 kB/s (about 100 events a second), so however fast the server is, the
  // reply cannot arrive within one frame: several renders show that it streamed.
  await page.emulateNetworkConditions({ download: 20000, upload: -1, latency: 0 });
  try {
    await send("Once upon a time");
    await page.waitForSelector(".message.assistant.pending", { timeout: TIMEOUT });
    await idle();
  } finally {
    await page.emulateNetworkConditions(null);
  }
  const reply = await page.$eval(".message.assistant:last-child", (n) => ({
    text: n.querySelector(".content").textContent,
    meta: n.querySelector(".meta")?.textContent ?? "",
    error: n.querySelector(".error")?.textContent ?? "",
  }));
  assert.equal(reply.error, "");
  assert.ok(reply.text.trim().length > 0, "the reply has text");
  assert.match(reply.meta, /\d+ tokens/);
  const renders = await page.evaluate(() => [...window.__renders]);
  assert.ok(renders.length >= 2, `the reply grew in ${renders.length} render(s)`);
  for (let i = 1; i < renders.length; i++) assert.ok(renders[i].length >= renders[i - 1].length);
  assert.deepEqual(await page.$$eval("#conversations li button.open", (bs) => bs.map((b) => b.textContent)),
    ["Once upon a time"]);
  assert.equal(await page.$eval("#chat-title", (n) => n.textContent), "Once upon a time");
  assert.deepEqual(problems, []);
});

test("Stop ends a long reply mid-way and the server cancels it", async () => {
  // The demo model's whole context is 128 tokens: a reply that fills it, with end-of-text ignored, is the longest.
  await setSetting("#setting-max-tokens", "110");
  await setSetting("#setting-extra", '{"ignore_eos": true}');
  const aborted = await abortedRequests();
  // Click Stop the moment the first text shows. The demo model is fast, so a reply may still finish first:
  // then try again (a finished reply is told apart by its token count). Each try in a new conversation, so the
  // prompt leaves room for the 110 tokens.
  let stopped = false;
  for (let attempt = 0; attempt < 5 && !stopped; attempt++) {
    await page.click("#new-chat");
    await page.evaluate(() => {
      const observer = new MutationObserver(() => {
        const pending = document.querySelector(".message.assistant.pending .content");
        if (pending && pending.textContent.trim()) {
          observer.disconnect();
          document.getElementById("stop").click();
        }
      });
      observer.observe(document.getElementById("messages"), { childList: true, subtree: true, characterData: true });
    });
    await send("The dragon");
    await idle();
    const meta = await page.$eval(".message.assistant:last-child .meta", (n) => n.textContent);
    stopped = /stopped/.test(meta);
    if (!stopped) assert.match(meta, /110 tokens/);
  }
  assert.ok(stopped, "Stop ended a reply before it finished");
  const text = await page.$eval(".message.assistant:last-child .content", (n) => n.textContent);
  assert.ok(text.trim().length > 0, "the stopped reply keeps what had arrived");
  // The browser closed the connection; the server cancels the request and counts it.
  const deadline = Date.now() + 5000;
  while ((await abortedRequests()) <= aborted) {
    assert.ok(Date.now() < deadline, "the server counted no aborted request");
    await new Promise((r) => setTimeout(r, 50));
  }
  allow(/requestfailed: .*v1\/chat\/completions net::ERR_ABORTED/, 1);
  assert.deepEqual(problems, []);
  // The composer works again.
  assert.equal(await page.$eval("#stop", (n) => n.hidden), true);
});

test("the server's error message is shown with the reply", async () => {
  await page.click("#new-chat");
  await setSetting("#setting-max-tokens", "500");  // beyond the demo model's 128-token context: the server says 400
  await send("Too long");
  await idle();
  const error = await page.$eval(".message.assistant:last-child .error", (n) => n.textContent);
  assert.match(error, /context/);
  allow(/status of 400/, 1);
  assert.deepEqual(problems, []);
  await setSetting("#setting-max-tokens", "110");
});

test("reasoning shows collapsed; model output renders as markdown and never as markup", async () => {
  await page.click("#new-chat");
  assert.equal(await page.$$eval("#messages .message", (ms) => ms.length), 0);
  // A canned stream in the server's format: reasoning_content deltas, then content with markdown and hostile HTML.
  const content = "# Plan\n\nHere is **bold** and `code`.\n\n```js\nconst x = 1 < 2;\n```\n\n- one\n- two\n\n" +
    '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> [bad](javascript:window.__pwned=3) ' +
    "[good](https://example.com)";
  const chunk = (delta, extra = {}) => `data: ${JSON.stringify({ object: "chat.completion.chunk",
    choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
  const body = chunk({ role: "assistant", content: "" }) +
    chunk({ reasoning_content: "The user wants a plan. ", reasoning: "The user wants a plan. " }) +
    chunk({ reasoning_content: "<b>thinking</b>", reasoning: "<b>thinking</b>" }) +
    content.match(/[\s\S]{1,25}/g).map((piece) => chunk({ content: piece })).join("") +
    `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 42, total_tokens: 47 } })}\n\n` +
    "data: [DONE]\n\n";
  await page.setRequestInterception(true);
  const onRequest = (req) => {
    if (req.url().endsWith("/v1/chat/completions")) {
      req.respond({ status: 200, contentType: "text/event-stream", body });
    } else {
      req.continue();
    }
  };
  page.on("request", onRequest);
  try {
    await send("Make a plan");
    await idle();
  } finally {
    page.off("request", onRequest);
    await page.setRequestInterception(false);
  }
  const got = await page.$eval(".message.assistant:last-child", (n) => ({
    reasoningOpen: n.querySelector("details.reasoning")?.open,
    summary: n.querySelector("details.reasoning summary")?.textContent,
    reasoning: n.querySelector(".reasoning-text")?.textContent,
    h1: n.querySelector(".content h1")?.textContent,
    strong: n.querySelector(".content strong")?.textContent,
    code: n.querySelector(".content pre code")?.textContent,
    items: [...n.querySelectorAll(".content li")].map((li) => li.textContent),
    links: [...n.querySelectorAll(".content a")].map((a) => a.getAttribute("href")),
    elements: [...n.querySelectorAll(".content *")].map((e) => e.tagName.toLowerCase()),
    text: n.querySelector(".content").textContent,
    meta: n.querySelector(".meta")?.textContent,
  }));
  assert.equal(got.reasoningOpen, false);
  assert.equal(got.summary, "Thought");
  assert.equal(got.reasoning, "The user wants a plan. <b>thinking</b>");
  assert.equal(got.h1, "Plan");
  assert.equal(got.strong, "bold");
  assert.equal(got.code, "const x = 1 < 2;");
  assert.deepEqual(got.items, ["one", "two"]);
  assert.deepEqual(got.links, ["https://example.com"]);
  for (const tag of ["img", "script", "b", "iframe"]) assert.ok(!got.elements.includes(tag), `a <${tag}> in the reply`);
  assert.match(got.text, /<img src=x onerror="window.__pwned=1"><script>/);
  assert.match(got.meta, /42 tokens/);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(problems, []);
});

test("conversations are kept in the browser: switch, reload, delete", async () => {
  const titles = () => page.$$eval("#conversations li button.open", (bs) => bs.map((b) => b.textContent));
  const before = await titles();  // newest first; one "The dragon" per try of the Stop test
  assert.equal(before[0], "Make a plan");
  assert.equal(before.at(-1), "Once upon a time");
  assert.equal(before[1], "Too long");
  assert.ok(before.slice(2, -1).length >= 1 && before.slice(2, -1).every((t) => t === "The dragon"), before.join());
  await page.click("#conversations li:last-child button.open");
  assert.equal(await page.$$eval("#messages .message", (ms) => ms.length), 2);
  await page.reload({ waitUntil: "load" });
  await page.waitForSelector("html[data-ready=true]", { timeout: TIMEOUT });
  await page.waitForSelector("#model:not([hidden])", { timeout: TIMEOUT });  // the saved key: no prompt this time
  assert.equal(await page.$("#key-dialog[open]"), null);
  assert.deepEqual(await titles(), before);
  assert.equal(await page.$eval("#chat-title", (n) => n.textContent), "Once upon a time");
  assert.equal(await page.$$eval("#messages .message", (ms) => ms.length), 2);
  assert.equal(await page.$eval("#setting-max-tokens", (n) => n.value), "110");
  await page.click("#conversations li:nth-child(1) button.delete");
  assert.deepEqual(await titles(), before.slice(1));
  assert.equal(await page.$eval("#chat-title", (n) => n.textContent), "Once upon a time");
  assert.deepEqual(problems, []);
  if (SCREENSHOT) {
    await page.click("#toggle-settings");  // the picture shows the settings too
    await page.waitForSelector("#settings:not([hidden])", { timeout: TIMEOUT });
    await page.screenshot({ path: SCREENSHOT });
  }
});
