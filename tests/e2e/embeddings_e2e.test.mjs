// POST /v1/embeddings with the official openai client: its default request (base64, decoded by the client), floats,
// a batch, `dimensions`, on the device run_openai_e2e.sh names. The model is the random-weight embedding model (last-
// token pooling) of tests/data/reference/embeddings-synth-llama.json, which `kairo synth` writes again from its seed:
// the vectors are checked against llama.cpp's there.
import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { withKairoServer } from "./template_server.mjs";

const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const cosine = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0) / (norm(a) * norm(b));
const reference = JSON.parse(readFileSync(
  new URL("../data/reference/embeddings-synth-llama.json", import.meta.url).pathname, "utf8"));

test("embeddings through the openai client", async () => {
  const dir = mkdtempSync(join(tmpdir(), "kairo-embeddings-"));
  const model = join(dir, "embedder.gguf");
  const tokenizer = new URL("../../models/aidreams260K.gguf", import.meta.url).pathname;
  try {
    execFileSync(process.env.KAIRO_EXE, ["synth", model, "--arch", "llama", "--dim", "64", "--layers", "2",
      "--heads", "4", "--kv-heads", "2", "--ffn", "160", "--vocab", "512", "--context", "256", "--type", "F16",
      "--seed", "7", "--pooling", "last", "--tokenizer-from", tokenizer], { stdio: "ignore" });
    await withKairoServer(["--model", model, "--device", process.env.KAIRO_DEVICE ?? "cpu",
      "--served-model-name", "embedder"], async (base) => {
      const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "none" });
      const text = "Once upon a time there was a little girl";

      const byDefault = await client.embeddings.create({ model: "embedder", input: text });
      assert.equal(byDefault.object, "list");
      assert.equal(byDefault.data.length, 1);
      const v = byDefault.data[0].embedding;
      assert.equal(v.length, 64);
      assert.ok(Math.abs(norm(v) - 1) < 1e-5, `unit length, got ${norm(v)}`);
      assert.ok(byDefault.usage.prompt_tokens > 1);

      const floats = await client.embeddings.create({ model: "embedder", input: text, encoding_format: "float" });
      assert.deepEqual(floats.data[0].embedding, v, "the same vector as base64 and as floats");

      const batch = await client.embeddings.create({ model: "embedder", input: [text, "The cat", "a"],
        dimensions: 16, encoding_format: "float" });
      assert.deepEqual(batch.data.map((d) => d.index), [0, 1, 2]);
      for (const d of batch.data) {
        assert.equal(d.embedding.length, 16);
        assert.ok(Math.abs(norm(d.embedding) - 1) < 1e-5);
      }
      assert.notDeepEqual(batch.data[1].embedding, batch.data[2].embedding);

      const cases = reference.cases.filter((c) => c.pooling === "last");
      const theirs = await client.embeddings.create({ model: "embedder", input: cases.map((c) => c.text) });
      cases.forEach((c, i) => {
        const cos = cosine(theirs.data[i].embedding, c.embedding);
        assert.ok(cos >= 0.9999, `"${c.text}": cosine ${cos} against llama.cpp's vector`);
      });

      await assert.rejects(client.embeddings.create({ model: "embedder", input: text, dimensions: 65 }),
        (e) => e.status === 400 && /at most 64/.test(e.message));
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
