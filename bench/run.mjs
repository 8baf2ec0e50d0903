// coil benchmarks: start-up against `node -e 0` measured in the same run, what start-up loads,
// and the kernel's time per turn over a long scripted run. Figures, not assertions.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const root = new URL("..", import.meta.url).pathname;
const bin = join(root, "dist", "bin", "coil.js");
if (!existsSync(bin)) throw new Error("run `npm run build` first (npm run bench does)");
const work = mkdtempSync(join(tmpdir(), "coil-bench-"));
const env = { ...process.env, COIL_HOME: join(work, "home") };
writeFileSync(join(work, "reply.yaml"), "- text: hello\n");

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function time(args, runs = 15) {
  const samples = [];
  for (let i = 0; i < runs + 2; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, args, { cwd: work, env, encoding: "utf8" });
    const ms = performance.now() - t0;
    if (r.status !== 0) throw new Error(`${args.join(" ")} failed: ${r.stderr}`);
    if (i >= 2) samples.push(ms); // two warm-up runs fill the OS file cache
  }
  return median(samples);
}

const rows = [];
const base = time(["-e", "0"]);
rows.push(["node -e 0", base]);
rows.push(["coil --version", time([bin, "--version"])]);
rows.push(["coil --help", time([bin, "--help"])]);
rows.push(["coil -p (one scripted turn)", time([bin, "--provider", "scripted", "--script", "reply.yaml", "-p", "hi"])]);

console.log("## Start-up (median of 15 runs, this machine)\n");
console.log("| command | ms | × node -e 0 |\n|---|---:|---:|");
for (const [name, ms] of rows) console.log(`| ${name} | ${ms.toFixed(1)} | ${(ms / base).toFixed(2)} |`);

// What a one-turn run loads: no provider SDK, no jiti, no TUI library.
const loads = join(work, "loads.txt");
writeFileSync(loads, "");
execFileSync(
  process.execPath,
  [
    "--import",
    join(root, "bench", "record-loads.mjs"),
    bin,
    "--provider",
    "scripted",
    "--script",
    "reply.yaml",
    "-p",
    "hi",
  ],
  {
    cwd: work,
    env: { ...env, COIL_BENCH_LOADS: loads },
  },
);
const urls = readFileSync(loads, "utf8").trim().split("\n").filter(Boolean);
const files = new Set(urls.filter((u) => u.startsWith("file:")));
const heavy = [
  "jiti",
  "@anthropic-ai/sdk",
  "openai",
  "@mariozechner/pi-tui",
  "ink",
  "typescript",
  "@modelcontextprotocol/sdk",
  "@agentclientprotocol/sdk",
  "highlight.js",
  "bullmq",
];
// A dependency is loaded from node_modules, or from a dist/ chunk it is bundled into (esbuild marks each
// bundled module with a `// node_modules/<package>/...` comment).
const bundled = [...files]
  .filter((u) => u.includes("/dist/"))
  .map((u) => readFileSync(new URL(u), "utf8"))
  .join("\n");
const loaded = heavy.filter(
  (h) => [...files].some((u) => u.includes(`/node_modules/${h}/`)) || bundled.includes(`// node_modules/${h}/`),
);
console.log(
  `\n## What \`coil -p\` loads\n\n${files.size} module files; heavy dependencies loaded: ${loaded.length ? loaded.join(", ") : "none"} (checked: ${heavy.join(", ")})`,
);

// Kernel time per turn over a 1,000-turn scripted run (scripted provider + a no-op tool, in process).
const kernel = await import(join(root, "dist", "api", "index.js"));
const sdk = await import(join(root, "dist", "sdk", "index.js"));
const scripted = (await import(join(root, "dist", "plugins", "provider-scripted", "index.js"))).default;
const TURNS = 1000;
const host = new sdk.PluginHost({ cwd: work });
host.install(scripted, { chunkSize: 1000 });
host.install(
  kernel.definePlugin({
    id: "bench-noop",
    setup(ctx) {
      ctx.tools.register({
        name: "noop",
        description: "does nothing",
        parameters: kernel.Type.Object({ i: kernel.Type.Integer() }),
        execute: async () => ({ content: [{ type: "text", text: "ok" }] }),
      });
    },
  }),
);
const service = host.services.get("scripted");
for (let i = 0; i < TURNS - 1; i++)
  service.push({ text: `step ${i}`, toolCalls: [{ name: "noop", arguments: { i } }] });
service.push({ text: "done" });
const stamps = [];
host.subscribe("turn_end", () => stamps.push(performance.now()));
const agent = new kernel.Agent(host, {
  provider: "scripted",
  model: { id: "bench", provider: "scripted", contextWindow: 10_000_000, maxOutput: 1000 },
});
const t0 = performance.now();
const run = await agent.prompt("go");
const total = performance.now() - t0;
if (run.stopReason !== "stop" || stamps.length !== TURNS)
  throw new Error(`bench run ended ${run.stopReason} after ${stamps.length} turns`);
const window = (from, to) => (stamps[to - 1] - (from === 0 ? t0 : stamps[from - 1])) / (to - from);
console.log(`\n## Kernel time per turn (${TURNS} turns: scripted reply with one tool call, no-op tool)\n`);
console.log("| turns | ms per turn |\n|---|---:|");
for (const [a, b] of [
  [0, 100],
  [100, 200],
  [450, 550],
  [800, 900],
  [900, 1000],
])
  console.log(`| ${a + 1}–${b} | ${window(a, b).toFixed(3)} |`);
console.log(`| all ${TURNS} | ${(total / TURNS).toFixed(3)} |`);
console.log(
  `\nhistory: ${agent.state.messages.length} messages; heap used: ${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB`,
);

for (const extra of [
  "install-size.mjs",
  "harness.mjs",
  "peers.mjs",
  "sessions.mjs",
  "providers.mjs",
  "tui.mjs",
  "subagents.mjs",
  "mcp.mjs",
  "context.mjs",
  "checkpoints.mjs",
  "lsp.mjs",
]) {
  const file = join(root, "bench", extra);
  if (existsSync(file)) {
    console.log("");
    execFileSync(process.execPath, [file], { stdio: "inherit", cwd: root });
  }
}
// The fleet bench needs a redis-server (it starts its own on loopback).
const { redisServerPath } = await import(join(root, "bench", "redis-server.mjs"));
console.log("");
if (redisServerPath())
  execFileSync(process.execPath, [join(root, "bench", "fleet.mjs")], { stdio: "inherit", cwd: root });
else
  console.log("## Fleet\n\nskipped: redis-server is not installed (apt-get install redis-server; .ci/run installs it)");
rmSync(work, { recursive: true, force: true });
