// `kairo serve`'s /v1/messages driven by the official Anthropic SDK: what Anthropic clients do must work unchanged.
// Run through run_openai_e2e.sh, which starts the server and sets KAIRO_URL / KAIRO_EXE / KAIRO_MODEL.
import { test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { withTemplateServer } from "./template_server.mjs";

const ROOT = process.env.KAIRO_URL.replace(/\/v1$/, "");  // the SDK adds /v1/messages itself
const client = new Anthropic({ baseURL: ROOT, apiKey: "unused", maxRetries: 0 });
const openai = new OpenAI({ baseURL: process.env.KAIRO_URL, apiKey: "unused", maxRetries: 0 });
const MODEL = "e2e-model";
// The last turn is the assistant's: a prefill, which the reply continues (without it the demo model's greedy reply
// to this ChatML prompt is only newlines).
const messages = [{ role: "user", content: "Tell me a dream." }, { role: "assistant", content: "Once" }];

test("messages.create: a Message whose text is chat's at temperature 0", async () => {
  const m = await client.messages.create({ model: MODEL, max_tokens: 16, temperature: 0, messages });
  assert.equal(m.type, "message");
  assert.equal(m.role, "assistant");
  assert.equal(m.model, MODEL);
  assert.match(m.id, /^msg_/);
  assert.equal(m.content[0].type, "text");
  assert.ok(["max_tokens", "end_turn"].includes(m.stop_reason), m.stop_reason);
  // The same conversation through /v1/chat/completions (continuing the final message): the same prompt, so the same
  // greedy reply.
  const chat = await openai.chat.completions.create({ model: MODEL, max_tokens: 16, temperature: 0, messages,
    continue_final_message: true, add_generation_prompt: false });
  assert.equal(m.content[0].text, chat.choices[0].message.content);
  assert.equal(m.usage.input_tokens, chat.usage.prompt_tokens);
  assert.equal(m.usage.output_tokens, chat.usage.completion_tokens);
  const counted = await client.messages.countTokens({ model: MODEL, messages });
  assert.equal(counted.input_tokens, m.usage.input_tokens);
});

test("messages.create with stream: Anthropic's event sequence, the same text", async () => {
  const full = await client.messages.create({ model: MODEL, max_tokens: 16, temperature: 0, messages });
  const stream = await client.messages.create({ model: MODEL, max_tokens: 16, temperature: 0, messages, stream: true });
  const types = [];
  let text = "";
  let stopReason = null;
  let outputTokens = null;
  for await (const event of stream) {
    types.push(event.type);
    if (event.type === "content_block_delta" && event.delta.type === "text_delta") text += event.delta.text;
    if (event.type === "message_delta") {
      stopReason = event.delta.stop_reason;
      outputTokens = event.usage.output_tokens;
    }
  }
  // The SDK passes ping events by; the rest is exactly Anthropic's order.
  assert.deepEqual(types.slice(0, 2), ["message_start", "content_block_start"]);
  assert.deepEqual(types.slice(-3), ["content_block_stop", "message_delta", "message_stop"]);
  assert.ok(types.slice(2, -3).every((t) => t === "content_block_delta"), types.join(","));
  assert.equal(text, full.content[0].text);
  assert.equal(stopReason, full.stop_reason);
  assert.equal(outputTokens, full.usage.output_tokens);
});

test("messages.stream: text events and finalMessage()", async () => {
  const full = await client.messages.create({ model: MODEL, max_tokens: 12, temperature: 0, messages,
    system: "You dream." });
  let text = "";
  const stream = client.messages.stream({ model: MODEL, max_tokens: 12, temperature: 0, messages,
    system: "You dream." });
  stream.on("text", (delta) => { text += delta; });
  const final = await stream.finalMessage();
  assert.equal(text, full.content[0].text);
  assert.deepEqual(final.content, full.content);
  assert.equal(final.stop_reason, full.stop_reason);
  assert.equal(final.usage.output_tokens, full.usage.output_tokens);
});

test("stop_sequences end the text before them with stop_reason stop_sequence", async () => {
  const full = await client.messages.create({ model: MODEL, max_tokens: 24, temperature: 0, messages });
  const text = full.content[0].text;
  const stop = text.slice(6, 9);
  assert.ok(text.indexOf(stop) > 0, JSON.stringify(text));
  const m = await client.messages.create({ model: MODEL, max_tokens: 24, temperature: 0, messages,
    stop_sequences: [stop] });
  assert.equal(m.stop_reason, "stop_sequence");
  assert.equal(m.stop_sequence, stop);
  assert.equal(m.content[0].text, text.slice(0, text.indexOf(stop)));
});

test("invalid requests raise the SDK's typed errors with Anthropic's error types", async () => {
  await assert.rejects(client.messages.create({ model: "claude-nope", max_tokens: 8, messages }),
    (e) => e instanceof Anthropic.NotFoundError && e.error.error.type === "not_found_error");
  await assert.rejects(client.messages.create({ model: MODEL, messages }),
    (e) => e instanceof Anthropic.BadRequestError && e.error.error.type === "invalid_request_error" &&
      /max_tokens/.test(e.message));
  await assert.rejects(client.messages.create({ model: MODEL, max_tokens: 8,
    messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://x/y.png" } }] }] }),
  (e) => e instanceof Anthropic.BadRequestError && /kairo serves text models/.test(e.message));
});

// tool_choice "any" through the Hermes template: a tool_use block, stop_reason tool_use, then the tool_result goes
// back and the reply is text; streamed, the input arrives as input_json_delta and finalMessage() parses it.
test("tools: tool_use blocks and tool_result round trip (--chat-template-file)", async () => {
  await withTemplateServer(MODEL, async (root) => {
    const c = new Anthropic({ baseURL: root, apiKey: "unused", maxRetries: 0 });
    const tools = [{ name: "weather", description: "Weather in a city", input_schema: { type: "object",
      properties: { city: { type: "string", enum: ["Oslo", "Rome"] } }, required: ["city"] } }];
    const ask = [{ role: "user", content: "Oslo?" }];
    const m = await c.messages.create({ model: MODEL, max_tokens: 100, temperature: 1, tools, messages: ask,
      tool_choice: { type: "any", disable_parallel_tool_use: true }, metadata: { user_id: "e2e" } });
    assert.equal(m.stop_reason, "tool_use", JSON.stringify(m.content));
    const uses = m.content.filter((b) => b.type === "tool_use");
    assert.equal(uses.length, 1);
    assert.equal(uses[0].name, "weather");
    assert.ok(["Oslo", "Rome"].includes(uses[0].input.city), JSON.stringify(uses[0].input));
    assert.ok(uses[0].id.length > 0);
    const back = await c.messages.create({ model: MODEL, max_tokens: 8, temperature: 0, tools,
      tool_choice: { type: "none" }, messages: [...ask, { role: "assistant", content: m.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: uses[0].id, content: "sunny" }] }] });
    assert.equal(back.content[0].type, "text");
    assert.notEqual(back.stop_reason, "tool_use");
    const stream = c.messages.stream({ model: MODEL, max_tokens: 100, temperature: 1, tools, messages: ask,
      tool_choice: { type: "tool", name: "weather", disable_parallel_tool_use: true } });  // a second call may not fit
    let json = "";
    stream.on("inputJson", (delta) => { json += delta; });
    const final = await stream.finalMessage();
    const use = final.content.find((b) => b.type === "tool_use");
    assert.equal(final.stop_reason, "tool_use");
    assert.equal(use.name, "weather");
    assert.deepEqual(use.input, JSON.parse(json));
    assert.ok(["Oslo", "Rome"].includes(use.input.city), json);
  });
});
