// `kairo serve`'s /v1/responses driven by the official OpenAI SDK's client.responses: stateless responses, plain and
// streamed. Run through run_openai_e2e.sh, which starts the server and sets KAIRO_URL / KAIRO_EXE / KAIRO_MODEL.
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { withTemplateServer } from "./template_server.mjs";

const client = new OpenAI({ baseURL: process.env.KAIRO_URL, apiKey: "unused", maxRetries: 0 });
const MODEL = "e2e-model";
const input = "Tell me a dream.";

test("responses.create: a Response whose output_text is chat's at temperature 0", async () => {
  const r = await client.responses.create({ model: MODEL, input, max_output_tokens: 16, temperature: 0 });
  assert.equal(r.object, "response");
  assert.match(r.id, /^resp_/);
  assert.equal(r.model, MODEL);
  assert.ok(["completed", "incomplete"].includes(r.status), r.status);
  assert.equal(r.output[0].type, "message");
  assert.equal(r.output[0].content[0].type, "output_text");
  const chat = await client.chat.completions.create({ model: MODEL, max_tokens: 16, temperature: 0,
    messages: [{ role: "user", content: input }] });
  assert.equal(r.output_text, chat.choices[0].message.content);
  assert.equal(r.usage.input_tokens, chat.usage.prompt_tokens);
  assert.equal(r.usage.output_tokens, chat.usage.completion_tokens);
  assert.equal(r.status === "incomplete", chat.choices[0].finish_reason === "length");
});

test("instructions, and input that replays earlier output: stateless, nothing is stored", async () => {
  const withInstructions = await client.responses.create({ model: MODEL, instructions: "You dream.", input,
    max_output_tokens: 4, temperature: 0 });
  assert.equal(withInstructions.instructions, "You dream.");
  const chat = await client.chat.completions.create({ model: MODEL, max_tokens: 4, temperature: 0,
    messages: [{ role: "system", content: "You dream." }, { role: "user", content: input }] });
  assert.equal(withInstructions.usage.input_tokens, chat.usage.prompt_tokens);
  // The demo model's context is 128 tokens: a short first turn, so the replay fits.
  const first = await client.responses.create({ model: MODEL, input, max_output_tokens: 4, temperature: 0 });
  const again = await client.responses.create({ model: MODEL, max_output_tokens: 4, temperature: 0, store: true,
    input: [{ role: "user", content: input }, ...first.output,
      { role: "user", content: [{ type: "input_text", text: "More." }] }] });
  assert.equal(again.store, false);
  assert.equal(again.output[0].type, "message");
  assert.ok(again.usage.input_tokens > first.usage.input_tokens);
});

test("responses.create with stream: numbered events that spell the same text", async () => {
  const full = await client.responses.create({ model: MODEL, input, max_output_tokens: 16, temperature: 0 });
  const stream = await client.responses.create({ model: MODEL, input, max_output_tokens: 16, temperature: 0,
    stream: true });
  const types = [];
  let text = "";
  let last = null;
  for await (const event of stream) {
    assert.equal(event.sequence_number, types.length);
    types.push(event.type);
    if (event.type === "response.output_text.delta") text += event.delta;
    last = event;
  }
  assert.deepEqual(types.slice(0, 4), ["response.created", "response.in_progress", "response.output_item.added",
    "response.content_part.added"]);
  assert.deepEqual(types.slice(-4, -1), ["response.output_text.done", "response.content_part.done",
    "response.output_item.done"]);
  assert.equal(last.type, full.status === "completed" ? "response.completed" : "response.incomplete");
  assert.equal(text, full.output_text);
  assert.equal(last.response.output[0].content[0].text, text);
  assert.deepEqual(last.response.usage, full.usage);
});

test("responses.stream: text deltas and finalResponse()", async () => {
  const full = await client.responses.create({ model: MODEL, input, max_output_tokens: 12, temperature: 0 });
  let text = "";
  const stream = client.responses.stream({ model: MODEL, input, max_output_tokens: 12, temperature: 0 });
  stream.on("response.output_text.delta", (e) => { text += e.delta; });
  const final = await stream.finalResponse();
  assert.equal(text, full.output_text);
  assert.equal(final.output[0].content[0].text, text);
});

test("stateful requests are refused with the SDK's typed errors", async () => {
  await assert.rejects(client.responses.create({ model: MODEL, input, previous_response_id: "resp_123" }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === "previous_response_id" && /stateless/.test(e.message));
  await assert.rejects(client.responses.create({ model: "gpt-nope", input }),
    (e) => e instanceof OpenAI.NotFoundError && e.code === "model_not_found");
});

// tool_choice "required" through the Hermes template: a function_call item, then its output goes back as a
// function_call_output item and the reply is a message.
test("tools: function_call items and function_call_output round trip (--chat-template-file)", async () => {
  await withTemplateServer(MODEL, async (root) => {
    const c = new OpenAI({ baseURL: `${root}/v1`, apiKey: "unused", maxRetries: 0 });
    const tools = [{ type: "function", name: "weather", description: "Weather in a city", strict: true,
      parameters: { type: "object", properties: { city: { type: "string", enum: ["Oslo", "Rome"] } },
        required: ["city"], additionalProperties: false } }];
    const r = await c.responses.create({ model: MODEL, input: "Oslo?", tools, tool_choice: "required",
      parallel_tool_calls: false, temperature: 1, max_output_tokens: 100, user: "e2e" });
    const calls = r.output.filter((item) => item.type === "function_call");
    assert.equal(calls.length, 1, JSON.stringify(r.output));
    assert.equal(calls[0].name, "weather");
    assert.ok(["Oslo", "Rome"].includes(JSON.parse(calls[0].arguments).city), calls[0].arguments);
    assert.match(calls[0].call_id, /^call_/);
    const back = await c.responses.create({ model: MODEL, tools, tool_choice: "none", temperature: 0,
      max_output_tokens: 8, input: [{ role: "user", content: "Oslo?" }, ...r.output,
        { type: "function_call_output", call_id: calls[0].call_id, output: "sunny" }] });
    assert.equal(back.output[0].type, "message");
    const stream = await c.responses.create({ model: MODEL, input: "Oslo?", tools, temperature: 1,
      max_output_tokens: 100, stream: true, tool_choice: { type: "function", name: "weather" },
      parallel_tool_calls: false });  // one call fits in 100 tokens; a second may not
    let args = "";
    let done = null;
    for await (const event of stream) {
      if (event.type === "response.function_call_arguments.delta") args += event.delta;
      if (event.type === "response.completed") done = event.response;
    }
    assert.ok(["Oslo", "Rome"].includes(JSON.parse(args).city), args);
    assert.equal(done.output.find((item) => item.type === "function_call").arguments, args);
  });
});
