// coil next to its peers (issue 37): one-turn `-p` runs of coil, Pi and OpenAI's Codex CLI, each against the
// project's local mocks (test/support/mock-anthropic.ts, mock-openai.ts, compiled here with esbuild), interleaved
// round by round on this machine, with ratios. Figures, not assertions.   node bench/peers.mjs  (after `npm run build`)
//
// Nothing here is installed by the project; point the bench at the peers you have (outside the checkout):
//   COIL_BENCH_PI=<dir>      a Pi install: the folder holding node_modules/@earendil-works/pi-coding-agent (the newest,
//                            Node ≥ 22.19) or node_modules/@mariozechner/pi-coding-agent, or the package folder itself
//   COIL_BENCH_CODEX=<file>  the `codex` executable (`npm i @openai/codex` in a scratch folder: node_modules/.bin/codex)
//   COIL_BENCH_NODE=<node>   the Node that runs coil, Pi and `node -e 0` (default: the one running this file)
//   COIL_BENCH_PEER_RUNS=<n> rounds (default 9, after 2 warm-up rounds)
// A peer that is not given, or whose Node requirement this Node does not meet, is skipped with a line saying so.
// Pi talks to the Anthropic mock (its models.json overrides anthropic's baseUrl); Codex speaks only the OpenAI
// Responses API, so it talks to the OpenAI mock, and coil is measured against that mock too.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const bin = join(root, "dist", "bin", "coil.js");
if (!existsSync(bin)) throw new Error("run `npm run build` first (npm run bench does)");
const say = (s = "") => console.log(s);
const NODE = process.env.COIL_BENCH_NODE || process.execPath;
const nodeVersion = spawnSync(NODE, ["--version"], { encoding: "utf8" }).stdout.trim();
say(`## Peers: one \`-p\` turn against the local mocks (Node ${nodeVersion})\n`);

/** The Pi package folder and its CLI, from COIL_BENCH_PI. */
function findPi(dir) {
  const candidates = [
    dir,
    join(dir, "node_modules", "@earendil-works", "pi-coding-agent"),
    join(dir, "node_modules", "@mariozechner", "pi-coding-agent"),
  ];
  const pkgDir = candidates.find((d) => existsSync(join(d, "package.json")) && /pi-coding-agent/.test(readPkg(d).name));
  if (!pkgDir) return { problem: `COIL_BENCH_PI=${dir} holds no @earendil-works/ or @mariozechner/pi-coding-agent` };
  const pkg = readPkg(pkgDir);
  const binPath = typeof pkg.bin === "string" ? pkg.bin : pkg.bin?.pi;
  const need = pkg.engines?.node?.match(/>=\s*(\d+)\.(\d+)(?:\.(\d+))?/);
  if (
    need &&
    olderThan(
      nodeVersion.slice(1).split(".").map(Number),
      need.slice(1).map((n) => Number(n ?? 0)),
    )
  )
    return {
      problem: `${pkg.name} ${pkg.version} needs Node ${pkg.engines.node}, this is ${nodeVersion} (point COIL_BENCH_NODE at a newer Node, or COIL_BENCH_PI at an older Pi)`,
    };
  return { cli: join(pkgDir, binPath), label: `${pkg.name.split("/")[0]} pi ${pkg.version}` };
}
/** Whether version a (major, minor, patch) is older than b. */
function olderThan(a, b) {
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== b[i]) return (a[i] ?? 0) < b[i];
  return false;
}
function readPkg(d) {
  return JSON.parse(readFileSync(join(d, "package.json"), "utf8"));
}

const pi = process.env.COIL_BENCH_PI ? findPi(process.env.COIL_BENCH_PI) : { problem: "COIL_BENCH_PI is not set" };
const codexBin = process.env.COIL_BENCH_CODEX;
const codex = !codexBin
  ? { problem: "COIL_BENCH_CODEX is not set" }
  : !existsSync(codexBin)
    ? { problem: `COIL_BENCH_CODEX=${codexBin} does not exist` }
    : { bin: codexBin, label: `codex ${spawnSync(codexBin, ["--version"], { encoding: "utf8" }).stdout.trim()}` };
if (pi.problem) say(`Pi skipped: ${pi.problem}.`);
if (codex.problem) say(`Codex CLI skipped: ${codex.problem}.`);
if (pi.problem && codex.problem) {
  say("\nNo peer to measure against (see the top of bench/peers.mjs for the variables).");
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), "coil-bench-peers-"));
const cwd = join(work, "project");
mkdirSync(cwd, { recursive: true });
const mocks = join(work, "mocks.mjs");
await build({
  stdin: {
    contents: `export * from ${JSON.stringify(join(root, "test", "support", "mock-anthropic.ts"))};
export { startMockOpenAI, responses } from ${JSON.stringify(join(root, "test", "support", "mock-openai.ts"))};`,
    resolveDir: root,
    loader: "ts",
  },
  outfile: mocks,
  bundle: true,
  format: "esm",
  platform: "node",
  logLevel: "warning",
});
const { startMockAnthropic, startMockOpenAI, text, responses } = await import(pathToFileURL(mocks).href);
const KEY = "sk-ant-bench-0123456789";
const OKEY = "sk-bench-openai-0123456789";
const anthropic = await startMockAnthropic({ key: KEY });
const openai = await startMockOpenAI({ key: OKEY });

// Every run starts from the same clean environment: no keys or settings of the machine's user, no CA bundle.
const base = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => !/^(ANTHROPIC_|OPENAI_|COIL_|PI_|CODEX_|NODE_EXTRA_CA_CERTS$|NODE_OPTIONS$)/.test(k),
  ),
);
base.HOME = join(work, "home");
mkdirSync(base.HOME, { recursive: true });
const piDir = join(work, "pi-agent");
mkdirSync(piDir, { recursive: true });
writeFileSync(join(piDir, "models.json"), JSON.stringify({ providers: { anthropic: { baseUrl: anthropic.url } } }));
const codexHome = join(work, "codex-home");
mkdirSync(codexHome, { recursive: true });

const commands = [
  { label: "node -e 0", argv: [NODE, "-e", "0"], env: {} },
  {
    label: "coil -p, Anthropic mock",
    coil: true,
    argv: [NODE, bin, "--model", "anthropic/claude-sonnet-4-5", "-p", "hi"],
    env: { COIL_HOME: join(work, "coil-home"), ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: anthropic.url },
    push: () => anthropic.push(text("hello")),
  },
];
if (!pi.problem)
  commands.push({
    label: `${pi.label} -p, Anthropic mock`,
    peer: "pi",
    argv: [NODE, pi.cli, "--provider", "anthropic", "--model", "claude-sonnet-4-5", "-p", "hi"],
    // offline: no version check, no telemetry (coil does neither)
    env: { PI_CODING_AGENT_DIR: piDir, ANTHROPIC_API_KEY: KEY, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1" },
    push: () => anthropic.push(text("hello")),
  });
if (!codex.problem) {
  commands.push({
    label: "coil -p, OpenAI Responses mock",
    coil: true,
    argv: [NODE, bin, "--model", "openai/gpt-5.4", "-p", "hi"],
    env: { COIL_HOME: join(work, "coil-home"), OPENAI_API_KEY: OKEY, OPENAI_BASE_URL: openai.url },
    push: () => openai.push(responses([{ text: "hello" }])),
  });
  commands.push({
    label: `${codex.label} exec, OpenAI Responses mock`,
    peer: "codex",
    argv: [
      codex.bin,
      "exec",
      "--skip-git-repo-check",
      "-m",
      "gpt-5.4",
      "-c",
      "model_provider=mock",
      "-c",
      "model_providers.mock.name=mock",
      "-c",
      `model_providers.mock.base_url=${JSON.stringify(openai.url)}`,
      "-c",
      'model_providers.mock.wire_api="responses"',
      "-c",
      'model_providers.mock.env_key="OPENAI_API_KEY"',
      "hi",
    ],
    env: { CODEX_HOME: codexHome, OPENAI_API_KEY: OKEY },
    push: () => openai.push(responses([{ text: "hello" }])),
  });
}

// GNU time gives each run's CPU time (user + system) and peak RSS; without it, wall time only.
const timeBin = ["/usr/bin/time", "/bin/time"].find((f) => existsSync(f));
const timeFile = join(work, "time.txt");
function once(c) {
  c.push?.();
  return new Promise((resolve, reject) => {
    const argv = timeBin ? [timeBin, "-f", "%U %S %M", "-o", timeFile, ...c.argv] : c.argv;
    const t0 = performance.now();
    const child = spawn(argv[0], argv.slice(1), { cwd, env: { ...base, ...c.env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("close", (code) => {
      const ms = performance.now() - t0;
      if (code !== 0) return reject(new Error(`${c.label} exited ${code}: ${err.slice(-2000)}`));
      if (c.push && !out.includes("hello"))
        return reject(new Error(`${c.label} did not print the mock's reply: ${out}`));
      const [u, s, kb] = timeBin ? readFileSync(timeFile, "utf8").trim().split("\n").at(-1).split(/\s+/) : [];
      resolve({
        ms,
        cpu: timeBin ? (Number(u) + Number(s)) * 1000 : undefined,
        rss: timeBin ? Number(kb) / 1024 : undefined,
      });
    });
  });
}

const RUNS = Number(process.env.COIL_BENCH_PEER_RUNS) || 9;
const samples = commands.map(() => []);
for (let round = 0; round < RUNS + 2; round++)
  for (const [i, c] of commands.entries()) {
    const r = await once(c);
    if (round >= 2) samples[i].push(r);
  }
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fig = samples.map((s) => ({
  ms: median(s.map((r) => r.ms)),
  cpu: timeBin ? median(s.map((r) => r.cpu)) : undefined,
  rss: timeBin ? median(s.map((r) => r.rss)) : undefined,
}));
say(
  `Median of ${RUNS} interleaved rounds (2 warm-up rounds first); load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores${timeBin ? "; CPU time is user + system, from GNU time" : "; GNU time not found, so wall time only"}.\n`,
);
say("| command | wall ms | CPU ms | peak RSS MB |\n|---|---:|---:|---:|");
for (const [i, c] of commands.entries())
  say(`| ${c.label} | ${fig[i].ms.toFixed(0)} | ${fig[i].cpu?.toFixed(0) ?? "–"} | ${fig[i].rss?.toFixed(0) ?? "–"} |`);
const at = (pred) => commands.findIndex(pred);
const ratio = (a, b) =>
  `${(fig[a].ms / fig[b].ms).toFixed(2)}× wall${timeBin ? `, ${(fig[a].cpu / fig[b].cpu).toFixed(2)}× CPU` : ""}`;
const coilA = at((c) => c.coil && c.label.includes("Anthropic"));
say("");
if (!pi.problem) {
  const p = at((c) => c.peer === "pi");
  say(
    `- coil / Pi (Anthropic mock): ${ratio(coilA, p)} — goal: ahead of the newest Pi (< 1.00× wall) — ${fig[coilA].ms < fig[p].ms ? "met" : "**not met**"}`,
  );
}
if (!codex.problem) {
  const x = at((c) => c.peer === "codex");
  const coilO = at((c) => c.coil && c.label.includes("OpenAI"));
  say(
    `- coil (Anthropic mock) / Codex CLI (OpenAI mock): ${ratio(coilA, x)} — goal ≤ 0.90× wall — ${fig[coilA].ms <= 0.9 * fig[x].ms ? "met" : "**not met**"}`,
  );
  say(`- coil / Codex CLI, both on the OpenAI Responses mock: ${ratio(coilO, x)}`);
}
await anthropic.close();
await openai.close();
rmSync(work, { recursive: true, force: true });
