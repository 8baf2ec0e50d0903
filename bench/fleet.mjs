// Fleet benchmark (figures, not assertions): jobs per minute for 50 scripted jobs with 1 and 2 worker
// processes on a throwaway redis-server, and the per-job overhead beyond the agent's own run (checkout,
// agent start-up, patch, session upload, queue round trips). Needs redis-server and dist/.
//   node bench/fleet.mjs        (after `npm run build`; bench/run.mjs calls it when redis-server is installed)
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { redisServerPath, startRedis } from "./redis-server.mjs";

const root = new URL("..", import.meta.url).pathname;
const bin = join(root, "dist", "bin", "coil.js");
if (!existsSync(join(root, "dist", "plugins", "fleet", "index.js")))
  throw new Error("run `npm run build` first (npm run bench does)");
if (!redisServerPath()) {
  console.log("## Fleet\n\nskipped: redis-server is not installed (apt-get install redis-server)");
  process.exit(0);
}

const JOBS = 50;
const work = mkdtempSync(join(tmpdir(), "coil-bench-fleet-"));
const env = { ...process.env, COIL_HOME: join(work, "home") };
const repo = join(work, "repo");
mkdirSync(repo);
writeFileSync(join(repo, "README.md"), "bench\n");
for (const args of [
  ["init", "-q"],
  ["add", "."],
  ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base"],
])
  execFileSync("git", args, { cwd: repo });
// Each job: one tool call that writes a file, then a final answer (two model requests, 50 ms each).
const preset = join(work, "bench.yaml");
writeFileSync(
  preset,
  `extends: default
provider: scripted
plugins:
  - provider-scripted:
      replies:
        - { delayMs: 50, toolCalls: [{ name: write, arguments: { path: out.txt, content: "x\\n" } }] }
        - { delayMs: 50, text: done }
`,
);
writeFileSync(
  join(work, "prompts.jsonl"),
  Array.from({ length: JOBS }, (_, i) => JSON.stringify({ prompt: `job ${i}` })).join("\n") + "\n",
);

const redis = await startRedis();
const cli = (args) =>
  execFileSync(process.execPath, [bin, "fleet", ...args, "--redis", redis.url], {
    cwd: repo,
    env,
    encoding: "utf8",
    timeout: 600_000,
  });

async function round(queue, workers) {
  cli(["submit", "--queue", queue, "--preset", preset, "--prompts", join(work, "prompts.jsonl"), "--cwd", repo]);
  const t0 = performance.now();
  const children = Array.from({ length: workers }, (_, i) =>
    spawn(
      process.execPath,
      [
        bin,
        "fleet",
        "worker",
        "--redis",
        redis.url,
        "--queue",
        queue,
        "--name",
        `bench-${workers}-${i}`,
        "--workdir",
        join(work, "wd"),
      ],
      { cwd: repo, env, stdio: "ignore" },
    ),
  );
  cli(["wait", "--queue", queue, "--timeout", "600"]);
  const wallMs = performance.now() - t0;
  for (const c of children) c.kill("SIGTERM");
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r() : c.once("exit", r)))));
  const reports = JSON.parse(cli(["results", "--queue", queue, "--json"]));
  const done = reports.filter((r) => r.state === "completed");
  if (done.length !== JOBS) throw new Error(`${queue}: ${done.length} of ${JOBS} jobs completed`);
  const mean = (k) => done.reduce((s, r) => s + r.result[k], 0) / done.length;
  return {
    workers,
    wallMs,
    perMinute: (JOBS / wallMs) * 60_000,
    agentMs: mean("agentMs"),
    overheadMs: mean("overheadMs"),
    durationMs: mean("durationMs"),
  };
}

try {
  const one = await round("bench1", 1);
  const two = await round("bench2", 2);
  console.log(
    `## Fleet: ${JOBS} scripted jobs (one write tool call, 2 × 50 ms model replies), redis-server on loopback, ${cpus().length} cores\n`,
  );
  console.log(
    "| workers | wall s | jobs/min | mean agent ms | mean job ms (in worker) | overhead ms beyond the agent |",
  );
  console.log("|---:|---:|---:|---:|---:|---:|");
  for (const r of [one, two]) {
    console.log(
      `| ${r.workers} | ${(r.wallMs / 1000).toFixed(1)} | ${r.perMinute.toFixed(0)} | ${r.agentMs.toFixed(0)} | ${r.durationMs.toFixed(0)} | ${r.overheadMs.toFixed(0)} |`,
    );
  }
  console.log(`\n2 workers / 1 worker throughput: ${(two.perMinute / one.perMinute).toFixed(2)}×`);
  console.log(
    "(overhead: checkout as a shared git clone, agent start-up from the embedded preset, patch, session upload, progress and log writes)",
  );
} finally {
  await redis.stop();
  rmSync(work, { recursive: true, force: true });
}
