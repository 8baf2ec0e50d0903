// Session benchmarks (figures, not assertions): append cost as the file grows, and resuming synthetic
// sessions of 1,000, 10,000 and 50,000 turns (3 entries a turn), in time and memory, next to
// `node -e 0` measured in the same run. Uses the compiled plugin in dist/ and the shipped CLI.
//   node bench/sessions.mjs            (after `npm run build`)
//   node bench/sessions.mjs --quick    (1,000 and 10,000 turns only)
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

const root = new URL("..", import.meta.url).pathname;
const pluginFile = join(root, "dist", "plugins", "session-jsonl", "index.js");
const bin = join(root, "dist", "bin", "coil.js");
if (!existsSync(pluginFile)) throw new Error("run `npm run build` first (npm run bench does)");
const plugin = await import(pathToFileURL(pluginFile).href);

// ─── child mode: open one session and report time and memory, in a fresh process ───
if (process.argv[2] === "--child-resume") {
  const file = process.argv[3];
  const baseline = process.resourceUsage().maxRSS;
  const t0 = performance.now();
  const store = plugin.SessionStore.open(file);
  const context = store.context();
  const ms = performance.now() - t0;
  if (store.warnings.length) throw new Error(store.warnings.join("\n"));
  const used = process.memoryUsage();
  process.stdout.write(
    JSON.stringify({
      ms,
      entries: store.entries.length,
      messages: context.length,
      maxRssMB: process.resourceUsage().maxRSS / 1024,
      baselineRssMB: baseline / 1024,
      heapMB: used.heapUsed / 2 ** 20,
    }),
  );
  process.exit(0);
}

const quick = process.argv.includes("--quick");
const SIZES = quick ? [1_000, 10_000] : [1_000, 10_000, 50_000];
const work = mkdtempSync(join(tmpdir(), "coil-bench-sessions-"));
const cwd = join(work, "project");
mkdirSync(cwd, { recursive: true });
const env = { ...process.env, COIL_HOME: join(work, "home") };
writeFileSync(join(cwd, "reply.yaml"), "- text: resumed\n");

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function timeSpawn(args, runs, options = {}) {
  const samples = [];
  for (let i = 0; i < runs + 1; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, args, { cwd, env, encoding: "utf8", ...options });
    const ms = performance.now() - t0;
    if (r.status !== 0) throw new Error(`${args.join(" ")} failed: ${r.stderr}`);
    if (i > 0) samples.push(ms); // the first run fills the OS file cache
  }
  return median(samples);
}

const usage = {
  input: 1200,
  output: 150,
  cacheRead: 0,
  cacheWrite: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const filler = (n, seed) => `${seed} `.repeat(Math.ceil(n / (seed.length + 1))).slice(0, n);

/** One turn = 3 entries: a user message, an assistant reply with a tool call, the tool's result. */
function* turn(i) {
  const ts = 1_780_000_000_000 + i * 1000;
  yield { role: "user", content: `Step ${i}: ${filler(160, "please continue with the refactor")}`, timestamp: ts };
  yield {
    role: "assistant",
    content: [
      { type: "text", text: filler(320, `reading file ${i}`) },
      {
        type: "toolCall",
        id: `call_${i}`,
        name: "read",
        arguments: { path: `src/module-${i % 97}.ts`, offset: 1, limit: 200 },
      },
    ],
    provider: "scripted",
    model: "scripted",
    usage,
    stopReason: "toolUse",
    timestamp: ts + 10,
  };
  yield {
    role: "toolResult",
    toolCallId: `call_${i}`,
    toolName: "read",
    content: [{ type: "text", text: filler(900, `export const value${i} = 1;`) }],
    isError: false,
    timestamp: ts + 20,
  };
}

/** Write a session with `turns` turns through the store; returns append timings in µs per entry by position. */
function generate(turns) {
  const store = plugin.SessionStore.create(cwd, join(work, "sessions"));
  const windowSize = 3000;
  const windows = [];
  let t0 = performance.now();
  let n = 0;
  for (let i = 0; i < turns; i++) {
    for (const m of turn(i)) {
      store.appendMessage(m);
      if (++n % windowSize === 0) {
        const t = performance.now();
        windows.push(((t - t0) * 1000) / windowSize);
        t0 = t;
      }
    }
  }
  store.close();
  return { file: store.file, entries: n, windows };
}

/** Append + fsync per turn (what a real run does) on a file that is already `file`. */
function appendWithSync(file, turns) {
  const store = plugin.SessionStore.open(file);
  // Flush what generating the file left in the page cache, so only the per-turn syncs are timed.
  for (const m of turn(999_999)) store.appendMessage(m);
  store.sync();
  const t0 = performance.now();
  for (let i = 0; i < turns; i++) {
    for (const m of turn(1_000_000 + i)) store.appendMessage(m);
    store.sync();
  }
  const ms = performance.now() - t0;
  store.close();
  return (ms * 1000) / (turns * 3);
}

const base = timeSpawn(["-e", "0"], 9);
console.log(`# Session benchmarks (this machine; node -e 0 = ${base.toFixed(1)} ms, median of 9)\n`);

const rows = [];
for (const turns of SIZES) {
  const gen = generate(turns);
  const bytes = statSync(gen.file).size;
  // medians of the first and last five windows of 3,000 appends: one slow window is noise, a trend is not
  const first = median(gen.windows.slice(0, 5));
  const last = median(gen.windows.slice(-5));
  const synced = appendWithSync(gen.file, 200);
  const resumes = [];
  for (let i = 0; i < 3; i++) {
    const r = spawnSync(process.execPath, [new URL(import.meta.url).pathname, "--child-resume", gen.file], {
      encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(r.stderr);
    resumes.push(JSON.parse(r.stdout));
  }
  const resume = resumes.sort((a, b) => a.ms - b.ms)[1];
  const cli = timeSpawn(
    [bin, "--plugin", "session-jsonl", "--session", gen.file, "--script", "reply.yaml", "-p", "go on"],
    3,
  );
  rows.push({ turns, entries: gen.entries + 603, mb: bytes / 2 ** 20, first, last, synced, resume, cli });
}
const fresh = timeSpawn([bin, "--plugin", "session-jsonl", "--no-session", "--script", "reply.yaml", "-p", "hi"], 5);

console.log("## Appending (µs per entry; one write of one line, no rewrite)\n");
console.log(
  "Early/late: median of the first and of the last five windows of 3,000 appends while the file was generated.\n",
);
console.log("| turns | entries | file MB | early appends | late appends | late/early | with fsync per turn |");
console.log("|---:|---:|---:|---:|---:|---:|---:|");
for (const r of rows) {
  console.log(
    `| ${r.turns.toLocaleString("en")} | ${r.entries.toLocaleString("en")} | ${r.mb.toFixed(1)} | ${r.first.toFixed(1)} | ${r.last.toFixed(1)} | ${(r.last / r.first).toFixed(2)} | ${r.synced.toFixed(0)} |`,
  );
}

console.log("\n## Resuming (open + read + context, fresh process, median of 3)\n");
console.log(
  "| turns | entries | context messages | ms | × node -e 0 | max RSS MB | RSS over an idle process MB | heap MB | ms growth vs 1,000 turns | CLI `coil --session … -p` ms | × node -e 0 |",
);
console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const r of rows) {
  const x = r.resume;
  console.log(
    `| ${r.turns.toLocaleString("en")} | ${x.entries.toLocaleString("en")} | ${x.messages.toLocaleString("en")} | ${x.ms.toFixed(0)} | ${(x.ms / base).toFixed(1)} | ${x.maxRssMB.toFixed(0)} | ${(x.maxRssMB - x.baselineRssMB).toFixed(0)} | ${x.heapMB.toFixed(0)} | ${(x.ms / rows[0].resume.ms).toFixed(1)}× | ${r.cli.toFixed(0)} | ${(r.cli / base).toFixed(1)} |`,
  );
}
console.log(
  `\nCLI run with --no-session for comparison: ${fresh.toFixed(0)} ms (${(fresh / base).toFixed(1)} × node -e 0).`,
);
console.log("Targets (issue): resuming 10,000 turns under 500 ms and under 200 MB; appending constant per entry.");
rmSync(work, { recursive: true, force: true });
