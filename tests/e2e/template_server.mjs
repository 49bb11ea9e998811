// Second `kairo serve` processes for the e2e tests that need another model or template than run_openai_e2e.sh's.
// withKairoServer(args, fn) starts `kairo serve ARGS` on a free port, calls fn(baseURL) with its
// http://127.0.0.1:<port>, then stops it.
// withTemplateServer(model, fn): the demo model under a chat template (--chat-template-file hermes_tools.jinja) that
// writes Hermes-style tool calls, for the tool tests of the Messages and Responses APIs: the demo model has no template
// of its own. It is a random model, so only a grammar (a forced tool choice) makes it call a tool; what the tests
// check is the protocol.
import { spawn } from "node:child_process";

export async function withKairoServer(args, fn) {
  const server = spawn(process.env.KAIRO_EXE, ["serve", "--port", "0", "--no-access-log", ...args],
    { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  const port = await new Promise((resolve, reject) => {
    server.stderr.on("data", (d) => {
      log += d;
      const m = /listening on http:\/\/[^:]*:(\d+)/.exec(log);
      if (m && log.includes("kairo serve: ready")) resolve(Number(m[1]));
    });
    server.on("exit", (code) => reject(new Error(`kairo serve exited (${code}): ${log}`)));
  });
  try {
    await fn(`http://127.0.0.1:${port}`);
  } finally {
    server.kill("SIGTERM");
  }
}

export async function withTemplateServer(model, fn) {
  const template = new URL("./hermes_tools.jinja", import.meta.url).pathname;
  return withKairoServer(["--model", process.env.KAIRO_MODEL, "--device", process.env.KAIRO_DEVICE ?? "cpu",
    "--served-model-name", model, "--chat-template-file", template], fn);
}
