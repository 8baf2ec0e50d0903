// Provider plugins: (1) start-up with both provider plugins loaded, against `node -e 0` measured in
// the same run; (2) which provider SDKs a run imports (only the one whose provider it uses);
// (3) adapter overhead per streamed event: the SDK alone vs the SDK plus coil's adapter, against
// the same local server in the same run, and the mapping alone on pre-parsed events.
// Figures, not assertions. Run `npm run build` first.
import { spawn, spawnSync } from "node:child_process";
import { createServer } from "node:http";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const root = new URL("..", import.meta.url).pathname;
const bin = join(root, "dist", "bin", "coil.js");
if (!existsSync(bin)) throw new Error("run `npm run build` first");
const require = createRequire(join(root, "package.json"));
const work = mkdtempSync(join(tmpdir(), "coil-bench-providers-"));
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(ANTHROPIC_|OPENAI_)/.test(k)));
env.COIL_HOME = join(work, "home");
writeFileSync(join(work, "reply.yaml"), "- text: hello\n");
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// ───────────────── a local server speaking both wire formats ─────────────────
const DELTAS = 20_000;
function anthropicSse(n, text = "x") {
  const f = (event, data) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
  let out = f("message_start", {
    type: "message_start",
    message: {
      id: "msg",
      type: "message",
      role: "assistant",
      model: "m",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
    },
  });
  out += f("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
  const delta = f("content_block_delta", {
    type: "content_block_delta",
    index: 0,
    delta: { type: "text_delta", text },
  });
  out += delta.repeat(n);
  out += f("content_block_stop", { type: "content_block_stop", index: 0 });
  out += f("message_delta", {
    type: "message_delta",
    delta: { stop_reason: "end_turn", stop_sequence: null },
    usage: { output_tokens: n },
  });
  return out + f("message_stop", { type: "message_stop" });
}
function chatSse(n, text = "x") {
  const chunk = (delta, finish = null) =>
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  return (
    chunk({ role: "assistant", content: "" }) +
    chunk({ content: text }).repeat(n) +
    chunk({}, "stop") +
    "data: [DONE]\n\n"
  );
}
const bodies = {
  anthropic: anthropicSse(DELTAS),
  chat: chatSse(DELTAS),
  small: { anthropic: anthropicSse(3, "hello "), chat: chatSse(3, "hello ") },
};
let big = true;
const server = createServer(async (req, res) => {
  for await (const _ of req);
  res.writeHead(200, { "content-type": "text/event-stream" });
  if (req.url.endsWith("/messages")) res.end(big ? bodies.anthropic : bodies.small.anthropic);
  else res.end(big ? bodies.chat : bodies.small.chat);
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${server.address().port}`;

// ───────────────── 1. start-up ─────────────────
// Commands run round-robin, so drift in machine load affects them all alike.
function timeAll(commands, runs = 9) {
  const samples = commands.map(() => []);
  for (let i = 0; i < runs + 2; i++) {
    commands.forEach(([, args], c) => {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, args, { cwd: work, env, encoding: "utf8" });
      const ms = performance.now() - t0;
      if (r.status !== 0) throw new Error(`${args.join(" ")} failed: ${r.stderr}`);
      if (i >= 2) samples[c].push(ms); // two warm-up rounds fill the OS file cache
    });
  }
  return commands.map(([name], c) => [name, median(samples[c])]);
}
const both = ["--plugin", "provider-anthropic", "--plugin", "provider-openai"];
const rows = timeAll([
  ["node -e 0", ["-e", "0"]],
  [
    "coil -p, scripted provider (no provider plugins)",
    [bin, "--provider", "scripted", "--script", "reply.yaml", "-p", "hi"],
  ],
  [
    "coil -p, scripted provider, both provider plugins loaded",
    [bin, ...both, "--provider", "scripted", "--script", "reply.yaml", "-p", "hi"],
  ],
  ["coil models (both provider plugins)", [bin, ...both, "models"]],
  ["node: import @anthropic-ai/sdk", ["-e", `import(${JSON.stringify(require.resolve("@anthropic-ai/sdk"))})`]],
  ["node: import openai", ["-e", `import(${JSON.stringify(require.resolve("openai"))})`]],
]);
const base = rows[0][1];
console.log("## Provider plugins: start-up (median of 9 runs, this machine)\n");
console.log("| command | ms | × node -e 0 |\n|---|---:|---:|");
for (const [name, ms] of rows) console.log(`| ${name} | ${ms.toFixed(1)} | ${(ms / base).toFixed(2)} |`);

// ───────────────── 2. which SDKs a run imports ─────────────────
big = false;
function loads(args, extraEnv = {}) {
  const file = join(work, `loads-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(file, "");
  return new Promise((resolve, reject) => {
    // No stdin: an open pipe is a print run's input, and coil -p would wait for its end.
    const child = spawn(process.execPath, ["--import", join(root, "bench", "record-loads.mjs"), bin, ...args], {
      cwd: work,
      env: { ...env, ...extraEnv, COIL_BENCH_LOADS: file },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`${args.join(" ")} failed (${code}): ${err}`));
      const urls = readFileSync(file, "utf8");
      resolve(["@anthropic-ai/sdk", "openai"].filter((p) => urls.includes(`/node_modules/${p}/`)));
    });
  });
}
const sdkRows = [
  ["coil models", await loads([...both, "models"])],
  [
    "coil -p on the scripted provider",
    await loads([...both, "--provider", "scripted", "--script", "reply.yaml", "-p", "hi"]),
  ],
  [
    "coil -p --model anthropic/claude-sonnet-5-5",
    await loads([...both, "--model", "anthropic/claude-sonnet-5-5", "-p", "hi"], {
      ANTHROPIC_API_KEY: "k",
      ANTHROPIC_BASE_URL: url,
    }),
  ],
  [
    "coil -p --model openai/local-model (Chat Completions)",
    await loads([...both, "--model", "openai/local-model", "-p", "hi"], {
      OPENAI_API_KEY: "k",
      OPENAI_BASE_URL: `${url}/v1`,
    }),
  ],
];
console.log("\n## Provider SDKs imported (both provider plugins in the preset)\n");
console.log("| run | SDKs imported |\n|---|---|");
for (const [name, sdks] of sdkRows) console.log(`| ${name} | ${sdks.length ? sdks.join(", ") : "none"} |`);

// ───────────────── 3. adapter overhead per streamed event ─────────────────
big = true;
const sdk = await import(join(root, "dist", "sdk", "index.js"));
const anthropicMod = await import(join(root, "dist", "plugins", "provider-anthropic", "index.js"));
const openaiMod = await import(join(root, "dist", "plugins", "provider-openai", "index.js"));
const { default: Anthropic } = await import(require.resolve("@anthropic-ai/sdk"));
const { default: OpenAI } = await import(require.resolve("openai"));
process.env.ANTHROPIC_API_KEY = "k";
process.env.OPENAI_API_KEY = "k";
process.env.COIL_HOME = env.COIL_HOME;
const host = new sdk.PluginHost({ cwd: work });
host.install(anthropicMod.default, { baseUrl: url });
host.install(openaiMod.default, { baseUrl: `${url}/v1` });
const request = (provider, id) => ({
  model: host.providers.get(provider).resolveModel(id),
  system: [],
  messages: [{ role: "user", content: "go", timestamp: 0 }],
  tools: [],
  options: {},
});

// SDK-alone and SDK-plus-adapter runs alternate, after a warm-up of each, so JIT and load drift hit both.
async function measurePair(sdkRun, adapterRun, runs = 7) {
  const a = [];
  const b = [];
  for (let i = 0; i < runs + 1; i++) {
    for (const [fn, into] of [
      [sdkRun, a],
      [adapterRun, b],
    ]) {
      const t0 = performance.now();
      const n = await fn();
      if (n < DELTAS) throw new Error(`only ${n} events`);
      if (i >= 1) into.push(performance.now() - t0);
    }
  }
  return [median(a), median(b)];
}
const anthropicSdk = new Anthropic({ apiKey: "k", baseURL: url, maxRetries: 0 });
const openaiSdk = new OpenAI({ apiKey: "k", baseURL: `${url}/v1`, maxRetries: 0 });
const count = async (iterable) => {
  let n = 0;
  for await (const _ of iterable) n++;
  return n;
};
const viaProvider = (p, id) => async () => {
  let n = 0;
  for await (const e of host.providers.get(p).stream(request(p, id), new AbortController().signal)) {
    if (e.type === "text_delta") n++;
    if (e.type === "error") throw new Error(e.message.errorMessage);
  }
  return n;
};
const [sdkA, adaA] = await measurePair(
  async () =>
    count(
      await anthropicSdk.messages.create({
        model: "claude-sonnet-5-5",
        max_tokens: 10,
        messages: [{ role: "user", content: "go" }],
        stream: true,
      }),
    ),
  viaProvider("anthropic", "claude-sonnet-5-5"),
);
const [sdkO, adaO] = await measurePair(
  async () =>
    count(
      await openaiSdk.chat.completions.create({
        model: "local",
        messages: [{ role: "user", content: "go" }],
        stream: true,
      }),
    ),
  viaProvider("openai", "local-model"),
);

// The mapping alone: pre-parsed events through the stream reader and message builder, no I/O.
const parsedA = bodies.anthropic
  .split("\n\n")
  .filter(Boolean)
  .map((f) => JSON.parse(f.split("\ndata: ")[1]));
const parsedO = bodies.chat
  .split("\n\n")
  .filter((f) => f && !f.includes("[DONE]"))
  .map((f) => JSON.parse(f.slice(6)));
async function* replay(events) {
  for (const e of events) yield e;
}
async function mapping(read, events, model) {
  const samples = [];
  for (let i = 0; i < 8; i++) {
    const builder = new anthropicMod.MessageBuilder("bench", model);
    const t0 = performance.now();
    const gen = read(replay(events), builder);
    for (let r = await gen.next(); !r.done; r = await gen.next());
    if (i >= 1) samples.push(performance.now() - t0);
  }
  return median(samples);
}
const mapA = await mapping(anthropicMod.readStream, parsedA, anthropicMod.ANTHROPIC_MODELS[0]);
const mapO = await mapping(openaiMod.readCompletions, parsedO, openaiMod.OPENAI_MODELS[0]);
// The loop alone: a reader that drains the events and ends the way an adapter's generator does
// (its first next() is done, with the stop reason), mapping nothing.
const loopOnly = await mapping(
  (events) => ({
    async next() {
      for await (const _ of events);
      return { done: true, value: "stop" };
    },
  }),
  parsedA,
  anthropicMod.ANTHROPIC_MODELS[0],
);

const us = (ms) => ((ms * 1000) / DELTAS).toFixed(2);
console.log(
  `\n## Adapter overhead per streamed event (${DELTAS.toLocaleString("en")} text deltas from a local server, median of 7)\n`,
);
console.log(
  "| path | SDK alone, ms | SDK + coil adapter, ms | overhead per event, µs | adapter / SDK |\n|---|---:|---:|---:|---:|",
);
console.log(
  `| Anthropic Messages | ${sdkA.toFixed(1)} | ${adaA.toFixed(1)} | ${us(adaA - sdkA)} | ${(adaA / sdkA).toFixed(2)} |`,
);
console.log(
  `| OpenAI Chat Completions | ${sdkO.toFixed(1)} | ${adaO.toFixed(1)} | ${us(adaO - sdkO)} | ${(adaO / sdkO).toFixed(2)} |`,
);
console.log(
  `\nMapping alone (pre-parsed events → provider events, no I/O): Anthropic ${us(mapA)} µs/event, Chat Completions ${us(mapO)} µs/event; an empty async loop over the same events costs ${us(loopOnly)} µs/event.`,
);

server.close();
rmSync(work, { recursive: true, force: true });
