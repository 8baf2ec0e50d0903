/**
 * coil fleet against a real redis-server (started here on a free loopback port) with real worker processes
 * (`node dist/bin/coil.js fleet worker`), agents on the scripted provider. Every wait is bounded.
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { QueueEvents } from "bullmq";
import { packageRoot } from "../../../boot/paths.js";
import { startRedis, type RedisServer } from "../../../bench/redis-server.mjs";
import type { JobReport } from "../../../plugins/fleet/commands.js";
import { childEnv } from "../../support/env.js";
import { chat, startMockOpenAI } from "../../support/mock-openai.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");
let redis: RedisServer;
let work: string;
let env: NodeJS.ProcessEnv;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  if (!existsSync(join(packageRoot(), "dist", "plugins", "fleet", "index.js")))
    throw new Error("dist/ has no fleet plugin: run `npm run build`");
  redis = await startRedis();
  work = mkdtempSync(join(tmpdir(), "coil-fleet-test-"));
  env = childEnv({ COIL_HOME: join(work, "home") });
  delete env.COIL_FLEET_REDIS;
  delete env.COIL_FLEET_QUEUE;
}, 20_000);

afterAll(async () => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill("SIGKILL");
  await redis?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
}, 20_000);

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `coil fleet ...` as a child process, killed after `ms`. */
function fleet(args: string[], opts: { cwd?: string; ms?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "fleet", ...args], { cwd: opts.cwd ?? work, env: opts.env ?? env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.ms ?? 30_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const q = (queue: string) => ["--redis", redis.url, "--queue", queue];

interface Worker {
  child: ChildProcess;
  name: string;
  output(): string;
  exited: Promise<number | null>;
}

async function startWorker(queue: string, name: string, extra: string[] = [], workerEnv = env): Promise<Worker> {
  const child = spawn(
    process.execPath,
    [BIN, "fleet", "worker", ...q(queue), "--name", name, "--workdir", join(work, "wd", name), ...extra],
    { cwd: work, env: workerEnv },
  );
  workers.push(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  await until(
    () => out.includes("ready on queue"),
    15_000,
    () => `worker ${name} did not start: ${out}`,
  );
  return { child, name, output: () => out, exited };
}

async function until(check: () => boolean | Promise<boolean>, ms: number, what: () => string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms: ${what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stopWorker(w: Worker): Promise<void> {
  if (w.child.exitCode !== null || w.child.signalCode !== null) return;
  w.child.kill("SIGTERM");
  const code = await Promise.race([w.exited, new Promise<"hung">((r) => setTimeout(() => r("hung"), 15_000))]);
  if (code === "hung") {
    w.child.kill("SIGKILL");
    throw new Error(`worker ${w.name} did not stop on SIGTERM: ${w.output()}`);
  }
}

/** A preset file extending default with inline scripted replies. */
function preset(name: string, script: unknown, extra = ""): string {
  const file = join(work, `${name}.yaml`);
  writeFileSync(
    file,
    `extends: default\nprovider: scripted\nplugins:\n  - provider-scripted: ${JSON.stringify(script)}\n${extra}`,
  );
  return file;
}

/** What `coil fleet results --json` prints per job: the plugin's own report type. */
type Report = JobReport;

async function results(queue: string, ids: string[] = []): Promise<Report[]> {
  const r = await fleet(["results", ...ids, "--json", ...q(queue)]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Report[];
}

async function waitDone(queue: string, seconds = 30): Promise<Ran> {
  return fleet(["wait", "--timeout", String(seconds), ...q(queue)], { ms: (seconds + 10) * 1000 });
}

async function submit(queue: string, args: string[], cwd = work): Promise<string[]> {
  const r = await fleet(["submit", ...q(queue), ...args], { cwd });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim().split("\n");
}

function gitRepo(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "README.md"), "base\n");
  const git = (...a: string[]) => execFileSync("git", a, { cwd: dir, stdio: "pipe" });
  git("init", "-q");
  git("add", ".");
  git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base");
  return dir;
}

describe("coil fleet on real Redis", () => {
  it("runs N scripted jobs on two worker processes, each exactly once, with the documented result shape", async () => {
    const repo = gitRepo("many");
    const requests = join(work, "many-requests.jsonl");
    const p = preset("many", {
      recordTo: requests,
      replies: [{ text: "job done", delayMs: 300, usage: { input: 10, output: 5 } }],
    });
    const N = 8;
    const prompts = join(work, "many.jsonl");
    writeFileSync(
      prompts,
      Array.from({ length: N }, (_, i) => JSON.stringify({ prompt: `task ${i}` })).join("\n") + "\n",
    );
    const ids = await submit("many", ["--preset", p, "--prompts", prompts, "--cwd", repo]);
    expect(ids).toHaveLength(N);
    // Progress streams as BullMQ progress events, which any QueueEvents listener sees.
    const eventsConnection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const events = new QueueEvents("many", { connection: eventsConnection });
    const progress = new Map<string, { turns: number; done?: boolean }[]>();
    events.on("progress", ({ jobId, data }) =>
      progress.set(jobId, [...(progress.get(jobId) ?? []), data as { turns: number }]),
    );
    await events.waitUntilReady();
    const [a, b] = await Promise.all([startWorker("many", "wa"), startWorker("many", "wb")]);
    const done = await waitDone("many");
    expect(done.code, done.stdout + done.stderr).toBe(0);
    expect(done.stdout).toContain(`done ${N}`);

    const reports = await results("many");
    expect(reports.map((r) => r.state)).toEqual(Array(N).fill("completed"));
    expect(reports.map((r) => r.prompt).sort()).toEqual(Array.from({ length: N }, (_, i) => `task ${i}`).sort());
    // Exactly once: one model request per job reached the provider, one attempt each.
    expect(readFileSync(requests, "utf8").trim().split("\n")).toHaveLength(N);
    expect(reports.every((r) => r.attempts === 1)).toBe(true);
    expect(new Set(reports.map((r) => r.result!.worker))).toEqual(new Set(["wa", "wb"]));

    const r = reports[0]!.result!;
    expect(r).toMatchObject({ finalText: "job done", stopReason: "stop", exitStatus: 0, turns: 1, cost: 0, patch: "" });
    expect(r.usage).toMatchObject({ input: 10, output: 5, cacheRead: 0, cacheWrite: 0 });
    expect(r.durationMs).toBeGreaterThanOrEqual(r.agentMs);
    expect(r.overheadMs).toBe(r.durationMs - r.agentMs);
    expect(r.session?.redisKey).toBe(`coil-fleet:many:session:${reports[0]!.id}`);
    // The session survives the worker: it is in Redis.
    const s = await fleet(["session", reports[0]!.id, ...q("many")]);
    expect(s.code, s.stderr).toBe(0);
    const entries = s.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(entries.some((e) => JSON.stringify(e).includes("job done"))).toBe(true);

    const logs = await fleet(["logs", reports[0]!.id, ...q("many")]);
    expect(logs.stdout).toMatch(/attempt 1 on w[ab]/);
    expect(logs.stdout).toContain("done: stop, exit 0");

    await until(
      () => ids.every((id) => progress.get(id)?.some((p) => p.done)),
      5000,
      () => JSON.stringify([...progress]),
    );
    expect(progress.get(ids[0]!)!.at(-1)).toMatchObject({ done: true, turns: 1, tools: 0, tokens: 15 });
    await events.close();
    eventsConnection.disconnect();

    const status = await fleet(["status", "--json", ...q("many")]);
    expect(JSON.parse(status.stdout)).toMatchObject({ queue: "many", done: N, failed: 0, running: 0, waiting: 0 });
    await Promise.all([stopWorker(a), stopWorker(b)]);
  }, 90_000);

  it("finishes a SIGKILLed worker's job on the other worker (stalled-job recovery)", async () => {
    const p = preset("kill", { replies: [{ text: "survived", delayMs: 3000 }] });
    const [id] = await submit("kill", ["--preset", p, "--prompt", "slow job", "--cwd", gitRepo("kill")]);
    const a = await startWorker("kill", "victim", ["--stall-ms", "1000"]);
    await until(
      async () => (await results("kill", [id!]))[0]!.state === "active",
      15_000,
      () => a.output(),
    );
    a.child.kill("SIGKILL");
    await a.exited;
    const b = await startWorker("kill", "rescuer", ["--stall-ms", "1000"]);
    const done = await waitDone("kill", 40);
    expect(done.code, done.stdout + b.output()).toBe(0);
    const [report] = await results("kill", [id!]);
    expect(report).toMatchObject({ state: "completed", worker: "rescuer", attempts: 1 });
    expect(report!.result).toMatchObject({ finalText: "survived", worker: "rescuer" });
    await stopWorker(b);
  }, 90_000);

  it("a job re-run after its worker was SIGKILLed: a fresh checkout, both runs in the result, nothing left registered in the user's repository", async () => {
    const repo = gitRepo("rerun");
    // A side effect outside the checkout happens once per run (BullMQ is at-least-once); one inside the
    // checkout must show once in the patch, since every run starts from a checkout of its own.
    const outside = join(work, "rerun-side-effects.txt");
    const p = preset("rerun", {
      replies: [
        {
          toolCalls: [
            { name: "bash", arguments: { command: `echo run >> runs.txt && echo run >> ${outside} && sleep 4` } },
          ],
        },
        { text: "finished" },
      ],
    });
    const [id] = await submit("rerun", ["--preset", p, "--prompt", "do it", "--cwd", repo]);
    const a = await startWorker("rerun", "victim", ["--stall-ms", "1000"]);
    await until(
      () => existsSync(outside),
      20_000,
      () => a.output(),
    );
    // The victim's checkout is there, its own; then it dies without a word.
    a.child.kill("SIGKILL");
    await a.exited;
    const b = await startWorker("rerun", "rescuer", ["--stall-ms", "2000"]);
    const done = await waitDone("rerun", 60);
    expect(done.code, done.stdout + b.output()).toBe(0);
    const [report] = await results("rerun", [id!]);
    expect(report).toMatchObject({ state: "completed", worker: "rescuer" });
    const r = report!.result!;
    expect(r.finalText).toBe("finished");
    // Every run is in the result: the one that died and the one that finished (on a loaded machine the
    // rescuer may itself miss a lock renewal and run it once more: at least once, as documented).
    const runs = r.runs!;
    expect(runs[0]).toMatchObject({ run: 1, worker: "victim", outcome: expect.stringMatching(/^interrupted/) });
    expect(runs.at(-1)).toMatchObject({ run: runs.length, worker: "rescuer", outcome: "completed" });
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs[1]!.startedAt).toBeGreaterThan(runs[0]!.startedAt);
    expect(report!.runs).toEqual(runs);
    // The last run did not see an earlier run's files: its patch has one line, not two.
    expect(r.patch.match(/^\+run$/gm)).toHaveLength(1);
    // Outside the checkout the effect happened once per run, as docs/fleet.md says it can.
    expect(readFileSync(outside, "utf8")).toBe("run\n".repeat(runs.length));
    // No checkout of the killed worker stays registered in the user's repository.
    expect(execFileSync("git", ["worktree", "list"], { cwd: repo, encoding: "utf8" }).trim().split("\n")).toHaveLength(
      1,
    );
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: repo, encoding: "utf8" })).toBe("");
    await stopWorker(b);
  }, 120_000);

  it("retries a provider error with backoff, then fails with the error in the result; a guard halt is not retried", async () => {
    const failing = preset("fail", { replies: [{ error: "529 overloaded_error" }] });
    const [bad] = await submit("fail", [
      "--preset",
      failing,
      "--prompt",
      "x",
      "--attempts",
      "3",
      "--backoff-ms",
      "100",
      "--cwd",
      gitRepo("fail"),
    ]);
    const halting = preset("halt", {
      replies: [{ toolCalls: [{ name: "ls", arguments: {} }] }, { toolCalls: [{ name: "ls", arguments: {} }] }],
    });
    const [halted] = await submit("fail", [
      "--preset",
      halting,
      "--prompt",
      "loop",
      "--max-turns",
      "1",
      "--attempts",
      "3",
      "--cwd",
      gitRepo("halt"),
    ]);
    const w = await startWorker("fail", "wf");
    const done = await waitDone("fail");
    expect(done.code).toBe(1); // a job failed
    const [failed, stopped] = await results("fail", [bad!, halted!]);
    expect(failed).toMatchObject({ state: "failed", attempts: 3 });
    expect(failed!.error).toContain("529 overloaded_error");
    expect(failed!.lastAttempt).toMatchObject({ stopReason: "error" });
    expect(failed!.lastAttempt!.error).toContain("529 overloaded_error");
    const logs = await fleet(["logs", bad!, ...q("fail")]);
    expect(logs.stdout.match(/^attempt \d on wf/gm)).toEqual(["attempt 1 on wf", "attempt 2 on wf", "attempt 3 on wf"]);
    // The model's failure (halted by the per-job turn guard) is a result, tried once.
    expect(stopped).toMatchObject({ state: "completed", attempts: 1 });
    expect(stopped!.result).toMatchObject({ stopReason: "halted", exitStatus: 3 });
    await stopWorker(w);
  }, 90_000);

  it("cancels a waiting job (removed) and a running one (aborted, not retried)", async () => {
    const slow = preset("cancel", { replies: [{ text: "never", delayMs: 30_000 }] });
    const repo = gitRepo("cancel");
    const [running, waiting] = await submit("cancel", [
      "--preset",
      slow,
      "--prompts",
      writePrompts("cancel", ["first", "second"]),
      "--cwd",
      repo,
      "--attempts",
      "3",
    ]);
    const w = await startWorker("cancel", "wc");
    await until(
      async () => (await results("cancel", [running!]))[0]!.state === "active",
      15_000,
      () => w.output(),
    );
    const c1 = await fleet(["cancel", waiting!, ...q("cancel")]);
    expect(c1.stdout).toContain(`${waiting}: removed (was waiting)`);
    const t0 = Date.now();
    const c2 = await fleet(["cancel", running!, ...q("cancel")]);
    expect(c2.stdout).toContain(`${running}: cancelling`);
    await until(
      async () => (await results("cancel", [running!]))[0]!.state === "failed",
      15_000,
      () => w.output(),
    );
    expect(Date.now() - t0).toBeLessThan(15_000);
    const [report] = await results("cancel", [running!]);
    expect(report).toMatchObject({ attempts: 1, error: "cancelled by coil fleet cancel" });
    expect((await results("cancel")).map((r) => r.id)).toEqual([running]);
    await stopWorker(w);
  }, 60_000);

  it("fails a job that outlives its --timeout, without retrying it", async () => {
    const slow = preset("timeout", { replies: [{ text: "too late", delayMs: 30_000 }] });
    const [id] = await submit("timeout", [
      "--preset",
      slow,
      "--prompt",
      "x",
      "--timeout",
      "1",
      "--attempts",
      "3",
      "--cwd",
      gitRepo("timeout"),
    ]);
    const w = await startWorker("timeout", "wt");
    const t0 = Date.now();
    const done = await waitDone("timeout");
    expect(done.code).toBe(1);
    expect(Date.now() - t0).toBeLessThan(15_000);
    const [report] = await results("timeout", [id!]);
    expect(report).toMatchObject({
      state: "failed",
      attempts: 1,
      error: "timed out after 1s (coil fleet submit --timeout)",
    });
    expect(report!.lastAttempt).toMatchObject({ stopReason: "timeout" });
    await stopWorker(w);
  }, 60_000);

  it("gives parallel jobs their own worktree: two jobs write the same path in one repository", async () => {
    const repo = gitRepo("iso");
    const write = (who: string) => [
      { toolCalls: [{ name: "write", arguments: { path: "same.txt", content: `${who}\n` } }], delayMs: 200 },
      { text: `${who} wrote`, delayMs: 800 },
    ];
    const p = preset("iso", { conversations: { "JOB-A": write("from A"), "JOB-B": write("from B") } });
    const ids = await submit("iso", [
      "--preset",
      p,
      "--prompts",
      writePrompts("iso", ["JOB-A write", "JOB-B write"]),
      "--cwd",
      repo,
    ]);
    const w = await startWorker("iso", "wi", ["--concurrency", "2"]);
    const done = await waitDone("iso");
    expect(done.code, done.stdout + w.output()).toBe(0);
    const [a, b] = await results("iso", ids);
    expect(a!.result!.finalText).toBe("from A wrote");
    expect(a!.result!.patch).toContain("+from A");
    expect(a!.result!.patch).not.toContain("from B");
    expect(b!.result!.patch).toContain("+from B");
    expect(b!.result!.patch).not.toContain("from A");
    // The jobs overlapped, and the shared checkout was never touched.
    expect(a!.startedAt!).toBeLessThan(b!.finishedAt!);
    expect(b!.startedAt!).toBeLessThan(a!.finishedAt!);
    expect(existsSync(join(repo, "same.txt"))).toBe(false);
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: repo, encoding: "utf8" })).toBe("");
    expect(execFileSync("git", ["worktree", "list"], { cwd: repo, encoding: "utf8" }).trim().split("\n")).toHaveLength(
      1,
    );
    // The patch applies to the repository.
    writeFileSync(join(work, "a.patch"), a!.result!.patch);
    execFileSync("git", ["apply", join(work, "a.patch")], { cwd: repo });
    expect(readFileSync(join(repo, "same.txt"), "utf8")).toBe("from A\n");
    await stopWorker(w);
  }, 60_000);

  it("clones a --repo at --ref for each job, and copies sessions to --results-dir", async () => {
    const repo = gitRepo("src");
    const git = (...a: string[]) => execFileSync("git", a, { cwd: repo, stdio: "pipe" });
    git("checkout", "-q", "-b", "feature");
    writeFileSync(join(repo, "f.txt"), "old\n");
    git("add", ".");
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "feature");
    git("checkout", "-q", "-");
    const p = preset("clone", {
      replies: [
        { toolCalls: [{ name: "edit", arguments: { path: "f.txt", edits: [{ oldText: "old", newText: "new" }] } }] },
        { text: "edited" },
      ],
    });
    const [id] = await submit(
      "clone",
      ["--preset", p, "--prompt", "edit f.txt", "--repo", repo, "--ref", "feature"],
      join(work),
    );
    const out = join(work, "results");
    const w = await startWorker("clone", "wr", ["--results-dir", out]);
    const done = await waitDone("clone");
    expect(done.code, done.stdout + w.output()).toBe(0);
    const [r] = await results("clone", [id!]);
    expect(r!.result!.patch).toContain("-old\n+new");
    // f.txt exists only on the ref, and the source repository is untouched.
    expect(existsSync(join(repo, "f.txt"))).toBe(false);
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: repo, encoding: "utf8" })).toBe("");
    const copy = join(out, `clone-${id}.jsonl`);
    expect(r!.result!.session).toMatchObject({ copy });
    expect(readFileSync(copy, "utf8")).toContain("edited");
    await stopWorker(w);
  }, 60_000);

  it("on SIGTERM finishes the running job within the grace time, else hands it back to the queue", async () => {
    const repo = gitRepo("term");
    const quick = preset("term-quick", { replies: [{ text: "finished", delayMs: 1500 }] });
    const [first] = await submit("term", ["--preset", quick, "--prompt", "x", "--cwd", repo]);
    const w1 = await startWorker("term", "wterm1");
    await until(
      async () => (await results("term", [first!]))[0]!.state === "active",
      15_000,
      () => w1.output(),
    );
    w1.child.kill("SIGTERM");
    expect(await w1.exited).toBe(0);
    expect((await results("term", [first!]))[0]).toMatchObject({ state: "completed", worker: "wterm1" });

    const slow = preset("term-slow", { replies: [{ text: "second worker", delayMs: 20_000 }] });
    const [second] = await submit("term", ["--preset", slow, "--prompt", "y", "--cwd", repo]);
    const w2 = await startWorker("term", "wterm2", ["--grace-ms", "300"]);
    await until(
      async () => (await results("term", [second!]))[0]!.state === "active",
      15_000,
      () => w2.output(),
    );
    const t0 = Date.now();
    w2.child.kill("SIGTERM");
    expect(await w2.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(w2.output()).toContain(`job ${second} handed back to the queue`);
    const [back] = await results("term", [second!]);
    expect(back).toMatchObject({ state: "waiting", attempts: 0 });
  }, 60_000);

  it("keeps secrets out of jobs and enforces the fleet-wide cost cap", async () => {
    const leaky = join(work, "leaky.yaml");
    writeFileSync(
      leaky,
      "extends: default\nplugins:\n  - provider-openai: { headers: { Authorization: Bearer abcdef123456 } }\n",
    );
    const r = await fleet(["submit", ...q("sec"), "--preset", leaky, "--prompt", "x"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("plugin 'provider-openai' option 'headers.Authorization' holds a credential");
    expect(r.stderr).toContain(leaky);

    // A key in the submitter's environment never reaches Redis.
    const p = preset("sec", { replies: [{ text: "ok" }] });
    const secret = "sk-ant-fleet-test-0123456789";
    const sub = await fleet(["submit", ...q("sec"), "--preset", p, "--prompt", "x", "--max-fleet-cost", "0"], {
      env: { ...env, ANTHROPIC_API_KEY: secret },
    });
    expect(sub.code, sub.stderr).toBe(0);
    const client = new Redis(redis.url);
    try {
      const data = await client.hget(`bull:sec:${sub.stdout.trim()}`, "data");
      expect(data).toContain('"prompt":"x"');
      expect(data).not.toContain(secret);
    } finally {
      client.disconnect();
    }
    // The cap (here $0) is spent: the worker refuses the job instead of running it.
    const w = await startWorker("sec", "ws");
    const done = await waitDone("sec");
    expect(done.code).toBe(1);
    const [report] = await results("sec");
    expect(report!.error).toContain("fleet cost cap reached: $0.0000 spent of $0");
    await stopWorker(w);
  }, 60_000);

  it("stops starting jobs once the fleet-wide cost cap is spent (priced model on a local OpenAI-compatible server)", async () => {
    // $1 per input token: each job's one request of 1 prompt token costs $1.
    const server = await startMockOpenAI({
      steps: Array.from({ length: 5 }, () => chat({ text: "paid answer", usage: { prompt: 1, completion: 0 } })),
    });
    try {
      const home = join(work, "priced-home");
      mkdirSync(home, { recursive: true });
      writeFileSync(
        join(home, "models.yaml"),
        `providers:\n  ollama:\n    baseUrl: ${server.url}\n    models:\n      - id: m1\n        cost: { input: 1000000, output: 0 }\n`,
      );
      const pricedEnv = { ...env, COIL_HOME: home };
      const r = await fleet(
        [
          "submit",
          ...q("cap"),
          "--prompts",
          writePrompts("cap", ["1", "2", "3", "4", "5"]),
          "--model",
          "ollama/m1",
          "--max-fleet-cost",
          "2.5",
          "--cwd",
          gitRepo("cap"),
        ],
        { env: pricedEnv },
      );
      expect(r.code, r.stderr).toBe(0);
      const w = await startWorker("cap", "wcap", [], pricedEnv);
      const done = await waitDone("cap");
      expect(done.code).toBe(1);
      const reports = await results("cap");
      const completed = reports.filter((x) => x.state === "completed");
      // Jobs run one at a time: $1, $2 (under the cap), $3 (started under it); the rest are refused.
      expect(completed).toHaveLength(3);
      expect(completed.map((x) => x.result!.cost)).toEqual([1, 1, 1]);
      const refused = reports.filter((x) => x.state === "failed");
      expect(refused.map((x) => x.error)).toEqual(
        Array(2).fill("fleet cost cap reached: $3.0000 spent of $2.5 (set with coil fleet submit --max-fleet-cost)"),
      );
      expect(server.requests).toHaveLength(3);
      const status = await fleet(["status", "--json", ...q("cap")]);
      expect(JSON.parse(status.stdout)).toMatchObject({ done: 3, failed: 2, cost: 3, cap: 2.5 });
      await stopWorker(w);
    } finally {
      await server.close();
    }
  }, 60_000);

  it("says what to do when Redis is not there, and rejects bad arguments", async () => {
    const down = await fleet(["status", "--redis", "redis://127.0.0.1:1", "--queue", "x"]);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain("cannot reach Redis at redis://127.0.0.1:1: start redis-server");
    const bad = await fleet(["submit", ...q("x")]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("give exactly one of --prompt <text> or --prompts <file.jsonl>");
  }, 30_000);
});

function writePrompts(name: string, prompts: string[]): string {
  const file = join(work, `${name}-prompts.jsonl`);
  writeFileSync(file, prompts.map((prompt) => JSON.stringify({ prompt })).join("\n") + "\n");
  return file;
}
