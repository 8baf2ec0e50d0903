// Language servers (the lsp plugin): what the plugin costs when no server is involved, and the time from
// an edit to its diagnostics against the real servers installed as devDependencies
// (typescript-language-server + typescript, pyright). Figures, not assertions.   node bench/lsp.mjs
//   1. one-turn `coil -p` that edits a Markdown file: default preset vs `- lsp: false`
//   2. kernel time per turn, in process, over turns that each edit a .txt file: with and without lsp
//   3. edit → diagnostics in a small project: the first edit (server start and project load) and warm edits
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const root = new URL("..", import.meta.url).pathname;
const bin = join(root, "dist", "bin", "coil.js");
if (!existsSync(bin)) throw new Error("run `npm run build` first (npm run bench does)");
const work = mkdtempSync(join(tmpdir(), "coil-bench-lsp-"));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const dist = (p) => import(join(root, "dist", p));

// 1. Start-up and one turn, with and without the plugin.
const project = join(work, "md");
mkdirSync(project);
writeFileSync(join(project, "notes.md"), "# notes\n\nold\n");
writeFileSync(
  join(project, "s.yaml"),
  '- toolCalls: [{ name: edit, arguments: { path: notes.md, edits: [{ oldText: "old", newText: "new" }] } }]\n- toolCalls: [{ name: edit, arguments: { path: notes.md, edits: [{ oldText: "new", newText: "old" }] } }]\n- text: done\n',
);
const homes = { with: join(work, "home-with"), without: join(work, "home-without") };
mkdirSync(homes.with);
mkdirSync(homes.without);
writeFileSync(join(homes.without, "preset.yaml"), "plugins:\n  - lsp: false\n");
const once = (home) => {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [bin, "--provider", "scripted", "--script", "s.yaml", "-p", "go"], {
    cwd: project,
    env: { ...process.env, COIL_HOME: home },
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`coil failed: ${r.stderr}`);
  return performance.now() - t0;
};
const RUNS = 11;
const startup = {};
for (const k of ["without", "with"]) startup[k] = [];
for (let i = 0; i < RUNS + 1; i++)
  for (const k of ["without", "with"]) {
    const ms = once(homes[k]);
    if (i > 0) startup[k].push(ms); // one warm-up round
  }
console.log(
  `## Language servers (lsp plugin)\n\n### Unused: a project with no configured language (median of ${RUNS} runs, interleaved)\n`,
);
console.log("| coil -p, two edits of a Markdown file | ms |\n|---|---:|");
console.log(`| preset without lsp (\`- lsp: false\`) | ${median(startup.without).toFixed(1)} |`);
console.log(`| default preset (lsp loaded, no server) | ${median(startup.with).toFixed(1)} |`);

// 2. Kernel time per turn with the plugin's taps on every edit (no language involved).
const kernel = await dist("api/index.js");
// The host embedders build (options validated as boot does) and the plugins' start/stop callbacks.
const sdk = await dist("sdk/index.js");
const scripted = (await dist("plugins/provider-scripted/index.js")).default;
const tools = (await dist("plugins/tools-coding/index.js")).default;
const lsp = (await dist("plugins/lsp/index.js")).default;
let round = 0;
async function perTurn(withLsp, turns = 300) {
  const dir = join(work, `turns-${round++}`);
  mkdirSync(dir);
  writeFileSync(join(dir, "a.txt"), "v0\n");
  process.env.COIL_HOME = join(dir, ".home");
  const host = new sdk.PluginHost({ cwd: dir });
  host.install(scripted, { chunkSize: 1000 });
  host.install(tools, {});
  if (withLsp) host.install(lsp, {});
  const s = host.services.get("scripted");
  for (let i = 0; i < turns; i++)
    s.push({
      toolCalls: [{ name: "edit", arguments: { path: "a.txt", edits: [{ oldText: `v${i}`, newText: `v${i + 1}` }] } }],
    });
  s.push({ text: "done" });
  const agent = new kernel.Agent(host, {
    provider: "scripted",
    model: { id: "bench", provider: "scripted", contextWindow: 10_000_000, maxOutput: 1000 },
  });
  const t0 = performance.now();
  const r = await agent.prompt("go");
  const ms = (performance.now() - t0) / turns;
  await sdk.stopPlugins(host);
  if (r.stopReason !== "stop") throw new Error(`per-turn run ended ${r.stopReason}`);
  return ms;
}
const turns = { without: [], with: [] };
for (let i = 0; i < 5; i++) {
  turns.without.push(await perTurn(false));
  turns.with.push(await perTurn(true));
}
console.log("\n| in process, 300 turns each editing a .txt file | ms per turn |\n|---|---:|");
console.log(`| tools-coding | ${median(turns.without).toFixed(3)} |`);
console.log(`| tools-coding + lsp | ${median(turns.with).toFixed(3)} |`);

// 3. Edit → diagnostics against real servers.
const binDir = join(root, "node_modules", ".bin");
const servers = [
  {
    name: "typescript-language-server",
    command: join(binDir, "typescript-language-server"),
    options: (cmd) => ({ servers: { typescript: { command: cmd } } }),
    files: {
      "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, noEmit: true, types: [], lib: ["es2022"] } }),
      "src/a.ts": "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
      "src/b.ts": 'import { add } from "./a";\nexport const total: number = add(1, 2);\n',
    },
    file: "src/b.ts",
    good: "total: number",
    bad: "total: string",
  },
  {
    name: "pyright",
    command: join(binDir, "pyright-langserver"),
    options: (cmd) => ({ servers: { python: { command: cmd } } }),
    files: {
      "pyproject.toml": "[project]\nname = 'b'\nversion = '0'\n",
      "m.py": "def add(a: int, b: int) -> int:\n    return a + b\n",
      "u.py": "from m import add\ntotal: int = add(1, 2)\n",
    },
    file: "u.py",
    good: "total: int",
    bad: "total: str",
  },
];
console.log("\n### Edit → diagnostics, small project (in process, real servers)\n");
console.log(
  "| server | first edit (start + load) ms | warm edit, median of 10 (ms) | wait for diagnostics, warm (ms) |\n|---|---:|---:|---:|",
);
for (const srv of servers) {
  if (!existsSync(srv.command)) {
    console.log(`| ${srv.name} | skipped: not installed | | |`);
    continue;
  }
  const dir = join(work, srv.name);
  for (const [rel, text] of Object.entries(srv.files)) {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  process.env.COIL_HOME = join(dir, ".home");
  const host = new sdk.PluginHost({ cwd: dir, projectTrusted: true });
  host.install(scripted, { chunkSize: 1000 });
  host.install(tools, {});
  host.install(lsp, { ...srv.options(srv.command), wait: 60_000 });
  const s = host.services.get("scripted");
  const agent = new kernel.Agent(host, {
    provider: "scripted",
    model: { id: "bench", provider: "scripted", contextWindow: 10_000_000, maxOutput: 1000 },
  });
  const timed = [];
  const waited = [];
  let state = false;
  const edit = async () => {
    const [from, to] = state ? [srv.bad, srv.good] : [srv.good, srv.bad];
    state = !state;
    s.push(
      { toolCalls: [{ name: "edit", arguments: { path: srv.file, edits: [{ oldText: from, newText: to }] } }] },
      { text: "ok" },
    );
    let start = 0;
    let end = 0;
    let result;
    const off = agent.subscribe((e) => {
      if (e.type === "tool_execution_start") start = performance.now();
      if (e.type === "tool_execution_end") {
        end = performance.now();
        result = e.result;
      }
    });
    await agent.prompt("edit");
    off();
    const d = result?.details?.diagnostics;
    if (!d || d.note || d.items.length !== (state ? 1 : 0))
      throw new Error(`${srv.name}: unexpected diagnostics ${JSON.stringify(d)}`);
    return { ms: end - start, waited: d.waitedMs };
  };
  const first = await edit();
  for (let i = 0; i < 10; i++) {
    const r = await edit();
    timed.push(r.ms);
    waited.push(r.waited);
  }
  await sdk.stopPlugins(host);
  console.log(`| ${srv.name} | ${first.ms.toFixed(0)} | ${median(timed).toFixed(1)} | ${median(waited).toFixed(1)} |`);
}
console.log(
  "\nThe first edit includes starting the server and loading the project; a read of the file before the edit starts it earlier. Warm: the edit tool call from start to result, diagnostics included.",
);
rmSync(work, { recursive: true, force: true });
