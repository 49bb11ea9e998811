// Three models behind one `kairo serve`, under a memory budget (--mem-budget-gb) that holds any two of them but not
// all three, by the planner's own numbers (`kairo plan --json` for each, at the server's context and concurrency).
// Through the official openai client: requests to all three succeed, the least recently used idle model is unloaded
// to make room, a model streaming a reply is not, and /metrics reports each switch (kairo:model_load_seconds).
import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { withKairoServer } from "./template_server.mjs";

const context = 128;
const concurrency = 2;
const device = process.env.KAIRO_DEVICE ?? "cpu";
const key = "sk-multi-model";  // --api-key-file: the server's settings hold with several models as with one

function synth(path, seed, dim) {
  const tokenizer = new URL("../../models/aidreams260K.gguf", import.meta.url).pathname;
  execFileSync(process.env.KAIRO_EXE, ["synth", path, "--arch", "llama", "--dim", String(dim), "--layers", "2",
    "--heads", "4", "--kv-heads", "2", "--ffn", String(dim * 2), "--vocab", "512", "--context", "256", "--type",
    "F16", "--seed", String(seed), "--tokenizer-from", tokenizer], { stdio: "ignore" });
}

function plannedBytes(path) {
  // --mem-budget-gb is counted as `kairo plan --device cpu` counts it, whatever the device (serve --help). The
  // bandwidth and compute given spare plan measuring the CPU; the memory it reports does not depend on them.
  const plan = JSON.parse(execFileSync(process.env.KAIRO_EXE, ["plan", "--model", path, "--device", "cpu",
    "--bandwidth-gbs", "50", "--tflops", "1", "--context", String(context), "--concurrency", String(concurrency),
    "--json"], { encoding: "utf8" }));
  return plan.memory.total_bytes;
}

async function metric(base, name, model) {
  const text = await (await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${key}` } })).text();
  const m = new RegExp(`^${name}\\{model_name="${model}"\\} (\\S+)$`, "m").exec(text);
  assert.ok(m, `${name} for ${model} in /metrics`);
  return Number(m[1]);
}

test("three models under a budget for two", async () => {
  const dir = mkdtempSync(join(tmpdir(), "kairo-models-"));
  try {
    const files = { demo: new URL("../../models/aidreams260K.gguf", import.meta.url).pathname,
      small: join(dir, "small.gguf"), wide: join(dir, "wide.gguf") };
    synth(files.small, 1, 64);
    synth(files.wide, 2, 128);
    const bytes = Object.values(files).map(plannedBytes);
    const total = bytes.reduce((a, b) => a + b, 0);
    const budget = total - Math.min(...bytes) / 2;  // any two fit, three do not
    writeFileSync(join(dir, "keys.txt"), `${key}\n`);
    const args = ["--api-key-file", join(dir, "keys.txt"), "--device", device, "--max-model-len", String(context), "--max-num-seqs", String(concurrency),
      "--mem-budget-gb", (budget / 2 ** 30).toFixed(12)];
    for (const [name, path] of Object.entries(files)) args.push("--model", `${name}=${path}`);

    await withKairoServer(args, async (base) => {
      assert.equal((await fetch(`${base}/v1/models`)).status, 401, "the key file's key is required");
      const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: key });
      const listed = (await client.models.list()).data.map((m) => m.id);
      assert.deepEqual(listed, ["demo", "small", "wide"]);
      // Loaded at startup: the first two, in the order given.
      assert.equal(await metric(base, "kairo:model_loaded", "demo"), 1);
      assert.equal(await metric(base, "kairo:model_loaded", "small"), 1);
      assert.equal(await metric(base, "kairo:model_loaded", "wide"), 0);

      const ask = async (model) => {
        const r = await client.completions.create({ model, prompt: "Once upon a time", max_tokens: 8,
          temperature: 0 });
        assert.equal(r.model, model);
        assert.ok(r.choices[0].text.length > 0, `${model} answered`);
        return r.choices[0].text;
      };
      const demoFirst = await ask("demo");
      await ask("small");
      await ask("wide");  // needs room: demo is the least recently used
      assert.equal(await metric(base, "kairo:model_loaded", "demo"), 0);
      assert.equal(await metric(base, "kairo:model_unloads_total", "demo"), 1);
      assert.equal(await metric(base, "kairo:model_loaded", "wide"), 1);
      assert.equal(await metric(base, "kairo:model_load_seconds_count", "wide"), 1);
      assert.ok(await metric(base, "kairo:model_load_seconds_sum", "wide") > 0);

      // Back to demo with a stream on small open: small is the most recently used (and busy while it streams), so
      // wide goes, and small's reply arrives whole.
      const stream = await client.completions.create({ model: "small", prompt: "Once upon a time", max_tokens: 48,
        temperature: 0, stream: true });
      const iterator = stream[Symbol.asyncIterator]();
      let streamed = (await iterator.next()).value.choices[0].text;
      assert.equal(await ask("demo"), demoFirst, "reloaded, the same greedy reply");
      for (let r = await iterator.next(); !r.done; r = await iterator.next()) streamed += r.value.choices[0]?.text ?? "";
      assert.equal(await metric(base, "kairo:model_loaded", "small"), 1);
      assert.equal(await metric(base, "kairo:model_loaded", "wide"), 0);
      assert.equal(await metric(base, "kairo:model_unloads_total", "small"), 0);
      const whole = await client.completions.create({ model: "small", prompt: "Once upon a time", max_tokens: 48,
        temperature: 0 });
      assert.equal(streamed, whole.choices[0].text, "the streamed reply survived the switch");

      const missing = await client.completions.create({ model: "nope", prompt: "a", max_tokens: 1 })
        .catch((e) => e);
      assert.equal(missing.status, 404);
      assert.match(missing.message, /"demo", "small", "wide"/);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
