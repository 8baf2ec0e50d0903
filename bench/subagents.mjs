// Sub-agent benchmark (figures, not assertions): the harness overhead of starting a child agent — the
// time of a `task` call minus the time its child spent in model calls — with the plugins a default run
// has (tools, system prompt, sessions, cost audit, guards), on the scripted provider. Uses dist/.
//   node bench/subagents.mjs        (after `npm run build`)
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

const root = new URL("..", import.meta.url).pathname;
const dist = (...p) => pathToFileURL(join(root, "dist", ...p)).href;
if (!existsSync(join(root, "dist", "plugins", "subagents", "index.js")))
  throw new Error("run `npm run build` first (npm run bench does)");
const work = mkdtempSync(join(tmpdir(), "coil-bench-subagents-"));
process.env.COIL_HOME = join(work, "home");
const kernel = await import(dist("api", "index.js"));
const sdk = await import(dist("sdk", "index.js"));
const plugin = async (id) => (await import(dist("plugins", id, "index.js"))).default;

const RUNS = 60;
const host = new sdk.PluginHost({ cwd: work });
host.install(await plugin("provider-scripted"), { chunkSize: 1000 });
// The same replies, timed: how long each model call of a child takes.
const childModelMs = new Map();
host.install(
  kernel.definePlugin({
    id: "bench-timed",
    setup(ctx) {
      ctx.providers.register({
        id: "timed",
        async *stream(request, signal) {
          const t0 = performance.now();
          const first = request.messages.find((m) => m.role === "user");
          const child =
            typeof first?.content === "string" && first.content.startsWith("CHILD ") ? first.content : undefined;
          for await (const e of ctx.providers.get("scripted").stream(request, signal)) {
            if ((e.type === "done" || e.type === "error") && child)
              childModelMs.set(child, (childModelMs.get(child) ?? 0) + performance.now() - t0);
            yield e;
          }
        },
      });
    },
  }),
);
for (const id of [
  "tools-coding",
  "tools-search",
  "session-jsonl",
  "system-prompt",
  "cost-audit",
  "subagents",
  "guards",
])
  host.install(await plugin(id));
const scripted = host.services.get("scripted");
for (let i = 0; i < RUNS; i++) {
  scripted.push({
    toolCalls: [{ id: `t${i}`, name: "task", arguments: { description: `job ${i}`, prompt: `CHILD ${i}` } }],
  });
  scripted.push({ text: `child ${i} done` });
}
scripted.push({ text: "all done" });
const agent = new kernel.Agent(host, {
  provider: "timed",
  model: { id: "bench", provider: "timed", contextWindow: 10_000_000, maxOutput: 1000 },
});
const io = new PassThrough();
io.end();
await sdk.startPlugins(
  host,
  agent,
  { cwd: work, env: process.env, stdin: io, stdout: new PassThrough().resume(), stderr: new PassThrough().resume() },
  { mode: "sdk", modelFromCli: false },
);
const started = new Map();
const overhead = [];
host.subscribe("tool_execution_start", (e) => e.toolName === "task" && started.set(e.toolCallId, performance.now()));
host.subscribe("tool_execution_end", (e) => {
  if (e.toolName !== "task") return;
  const i = Number(e.toolCallId.slice(1));
  overhead.push(performance.now() - started.get(e.toolCallId) - (childModelMs.get(`CHILD ${i}`) ?? 0));
});
const run = await agent.prompt("go");
await sdk.stopPlugins(host);
if (run.stopReason !== "stop" || overhead.length !== RUNS)
  throw new Error(`bench run ended ${run.stopReason} after ${overhead.length} tasks`);
const sorted = [...overhead].sort((a, b) => a - b);
const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
console.log(
  `## Sub-agent start overhead (${RUNS} task calls, one scripted reply each; tools, system prompt, sessions, cost audit, guards)\n`,
);
console.log("| | ms beyond the child's model calls |\n|---|---:|");
console.log(`| first (cold) | ${overhead[0].toFixed(2)} |`);
console.log(`| median | ${at(0.5).toFixed(2)} |`);
console.log(`| p90 | ${at(0.9).toFixed(2)} |`);
rmSync(work, { recursive: true, force: true });
