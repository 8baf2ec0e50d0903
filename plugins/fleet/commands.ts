/**
 * `coil fleet submit | status | wait | results | cancel | logs | session`: talk to the queue in Redis.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { CliStreams } from "../../api/index.js";
import {
  embedPreset,
  type FleetJobData,
  type FleetJobResult,
  type JobGuards,
  type JobRun,
  type JobSource,
} from "./job.js";
import { connectionHint, keys, loadBull, redisClient, type Job, type Queue, type RedisClient } from "./redis.js";

export class UsageError extends Error {}

export interface Common {
  redis: string;
  queue: string;
}

/** Open the queue; the caller closes both. */
export async function openQueue(
  c: Common,
): Promise<{ queue: Queue<FleetJobData, FleetJobResult>; redis: RedisClient; close(): Promise<void> }> {
  const { Queue } = await loadBull();
  const redis = await redisClient(c.redis);
  try {
    await redis.ping();
  } catch {
    redis.disconnect();
    throw new Error(connectionHint(c.redis));
  }
  const queue = new Queue<FleetJobData, FleetJobResult>(c.queue, { connection: redis });
  return {
    queue,
    redis,
    async close() {
      await queue.close().catch(() => undefined);
      await redis.quit().catch(() => undefined);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// submit

export interface SubmitOptions extends Common {
  cwd?: string;
  repo?: string;
  ref?: string;
  preset?: string;
  model?: string;
  prompt?: string;
  prompts?: string;
  guards: JobGuards;
  maxFleetCost?: number;
  timeoutS?: number;
  attempts: number;
  backoffMs: number;
  json: boolean;
}

interface PromptLine {
  prompt: string;
  cwd?: string;
  repo?: string;
  ref?: string;
  model?: string;
}

export async function submit(o: SubmitOptions, io: CliStreams): Promise<number> {
  if (!o.prompt === !o.prompts) throw new UsageError("give exactly one of --prompt <text> or --prompts <file.jsonl>");
  const lines: PromptLine[] = o.prompt ? [{ prompt: o.prompt }] : readPrompts(resolve(io.cwd, o.prompts!));
  const { resolvePreset } = await import("../../sdk/index.js");
  const { coilHome } = await import("../../lib/paths.js");
  const presetName = o.preset ?? "default";
  const resolved = resolvePreset({ preset: presetName, cwd: io.cwd, home: coilHome(io.env), trust: false });
  const document = embedPreset(resolved.settings as Record<string, unknown>, resolved.entries, o.guards);
  const jobs = lines.map((line, i) => {
    const data: FleetJobData = {
      prompt: line.prompt,
      preset: { name: presetName, document },
      ...((line.model ?? o.model) ? { model: line.model ?? o.model } : {}),
      source: sourceOf(
        line.repo ?? o.repo,
        line.ref ?? o.ref,
        line.cwd ?? o.cwd,
        io.cwd,
        `${o.prompts ?? "--prompt"}${o.prompts ? `:${i + 1}` : ""}`,
      ),
      guards: o.guards,
      ...(o.timeoutS ? { timeoutMs: Math.round(o.timeoutS * 1000) } : {}),
      submittedAt: Date.now(),
    };
    return { name: "coil", data, opts: { attempts: o.attempts, backoff: { type: "exponential", delay: o.backoffMs } } };
  });
  const q = await openQueue(o);
  try {
    if (o.maxFleetCost !== undefined) await q.redis.set(keys.cap(o.queue), String(o.maxFleetCost));
    const added = await q.queue.addBulk(jobs);
    const ids = added.map((j) => String(j.id));
    io.stdout.write(
      o.json ? JSON.stringify({ queue: o.queue, jobs: ids }) + "\n" : ids.map((id) => `${id}\n`).join(""),
    );
    return 0;
  } finally {
    await q.close();
  }
}

function readPrompts(file: string): PromptLine[] {
  if (!existsSync(file)) throw new UsageError(`--prompts: ${file} does not exist`);
  const out: PromptLine[] = [];
  readFileSync(file, "utf8")
    .split("\n")
    .forEach((text, i) => {
      if (!text.trim()) return;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (e) {
        throw new UsageError(
          `${file}:${i + 1}: not JSON (${(e as Error).message}); each line is {"prompt": "...", "cwd"?, "repo"?, "ref"?, "model"?} or a JSON string`,
        );
      }
      if (typeof value === "string") value = { prompt: value };
      const line = value as PromptLine;
      if (!line || typeof line.prompt !== "string" || !line.prompt.trim())
        throw new UsageError(`${file}:${i + 1}: needs a non-empty "prompt"`);
      out.push(line);
    });
  if (!out.length) throw new UsageError(`--prompts: ${file} has no prompts`);
  return out;
}

function sourceOf(
  repo: string | undefined,
  ref: string | undefined,
  cwd: string | undefined,
  here: string,
  where: string,
): JobSource {
  if (repo) {
    // A local path travels as an absolute path (it must be reachable from every worker); URLs as written.
    const local = !/^[a-z][a-z0-9+.-]*:\/\//i.test(repo) && !/^[^/]+@[^:]+:/.test(repo);
    return { kind: "git", repo: local ? resolve(here, repo) : repo, ...(ref ? { ref } : {}) };
  }
  const dir = resolve(here, cwd ?? ".");
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UsageError(`${where}: --cwd ${dir} is not a directory`);
  return { kind: "dir", dir, ...(ref ? { ref } : {}) };
}

// ---------------------------------------------------------------------------------------------
// status / wait

const ACTIVE_STATES = ["waiting", "active", "delayed", "prioritized", "waiting-children"] as const;

export interface Counts {
  done: number;
  failed: number;
  running: number;
  waiting: number;
  cost: number;
  cap?: number;
}

export async function counts(queue: Queue, redis: RedisClient, name: string): Promise<Counts> {
  const c = await queue.getJobCounts("completed", "failed", ...ACTIVE_STATES);
  const [cost, cap] = await redis.mget(keys.cost(name), keys.cap(name));
  return {
    done: c.completed ?? 0,
    failed: c.failed ?? 0,
    running: c.active ?? 0,
    waiting: (c.waiting ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0) + (c["waiting-children"] ?? 0),
    cost: Number(cost ?? 0),
    ...(cap !== null ? { cap: Number(cap) } : {}),
  };
}

export function progressLine(c: Counts, width = 30): string {
  const total = c.done + c.failed + c.running + c.waiting;
  const filled = total ? Math.round(((c.done + c.failed) / total) * width) : 0;
  const bar = `[${"#".repeat(filled)}${"-".repeat(width - filled)}]`;
  return `${bar} ${c.done + c.failed}/${total}  done ${c.done} · running ${c.running} · failed ${c.failed} · waiting ${c.waiting} · $${c.cost.toFixed(4)}${c.cap !== undefined ? ` of $${c.cap}` : ""}`;
}

export async function status(o: Common & { json: boolean }, io: CliStreams): Promise<number> {
  const q = await openQueue(o);
  try {
    const c = await counts(q.queue, q.redis, o.queue);
    io.stdout.write(o.json ? JSON.stringify({ queue: o.queue, ...c }) + "\n" : `${o.queue}: ${progressLine(c)}\n`);
    return 0;
  } finally {
    await q.close();
  }
}

/** Wait until no job is waiting or running: 0 when none failed, 1 when some did, 124 on --timeout. */
export async function wait(o: Common & { timeoutS?: number; json: boolean }, io: CliStreams): Promise<number> {
  const q = await openQueue(o);
  const tty = Boolean((io.stderr as { isTTY?: boolean }).isTTY);
  const deadline = o.timeoutS !== undefined ? Date.now() + o.timeoutS * 1000 : Infinity;
  try {
    for (;;) {
      const c = await counts(q.queue, q.redis, o.queue);
      if (tty) io.stderr.write(`\r\x1b[2K${progressLine(c)}`);
      const finished = c.running + c.waiting === 0;
      if (finished || Date.now() >= deadline) {
        if (tty) io.stderr.write("\n");
        const line = o.json
          ? JSON.stringify({ queue: o.queue, finished, ...c })
          : `${finished ? "finished" : `timed out after ${o.timeoutS}s`}: ${progressLine(c)}`;
        io.stdout.write(line + "\n");
        return finished ? (c.failed ? 1 : 0) : 124;
      }
      await new Promise((r) => setTimeout(r, Math.min(250, Math.max(0, deadline - Date.now()))));
    }
  } finally {
    await q.close();
  }
}

// ---------------------------------------------------------------------------------------------
// results / cancel / logs / session

export interface JobReport {
  id: string;
  state: string;
  prompt: string;
  attempts: number;
  worker?: string;
  /** When the job was submitted, last started and finished (ms since the epoch). */
  submittedAt: number;
  startedAt?: number;
  finishedAt?: number;
  result?: FleetJobResult;
  error?: string;
  lastAttempt?: FleetJobResult;
  /** Every time a worker took the job (more than one: it was started again; side effects may have run twice). */
  runs?: JobRun[];
}

async function report(job: Job<FleetJobData, FleetJobResult>, redis: RedisClient, queue: string): Promise<JobReport> {
  const state = await job.getState();
  const runs = (await redis.lrange(keys.runs(queue, String(job.id)), 0, -1)).map((r) => JSON.parse(r) as JobRun);
  return {
    id: String(job.id),
    state,
    prompt: job.data.prompt,
    attempts: job.attemptsMade,
    ...(job.processedBy ? { worker: job.processedBy } : {}),
    submittedAt: job.timestamp,
    ...(job.processedOn ? { startedAt: job.processedOn } : {}),
    ...(job.finishedOn ? { finishedAt: job.finishedOn } : {}),
    ...(state === "completed" && job.returnvalue ? { result: job.returnvalue } : {}),
    ...(job.failedReason ? { error: job.failedReason } : {}),
    ...(state !== "completed" && job.data.lastAttempt ? { lastAttempt: job.data.lastAttempt } : {}),
    ...(runs.length ? { runs } : {}),
  };
}

export async function results(o: Common & { json: boolean; ids: string[] }, io: CliStreams): Promise<number> {
  const q = await openQueue(o);
  try {
    const jobs = o.ids.length
      ? await Promise.all(o.ids.map(async (id) => (await q.queue.getJob(id)) ?? missing(id, o.queue)))
      : await q.queue.getJobs(["completed", "failed", ...ACTIVE_STATES], 0, -1, true);
    const reports = await Promise.all(jobs.map((job) => report(job, q.redis, o.queue)));
    reports.sort((a, b) => Number(a.id) - Number(b.id) || a.id.localeCompare(b.id));
    if (o.json) {
      io.stdout.write(JSON.stringify(reports, null, 2) + "\n");
      return 0;
    }
    for (const r of reports) {
      const res = r.result;
      const head = `${r.id}  ${r.state.padEnd(9)} ${res ? `exit ${res.exitStatus} ${res.stopReason}  $${res.cost.toFixed(4)}  ${res.turns} turn(s)  ${res.patch ? `patch ${res.patch.split("\n").length} lines` : "no changes"}` : (r.error ?? "")}`;
      const reran =
        (r.runs?.length ?? 0) > 1
          ? `  started ${r.runs!.length} times: ${r.runs!.map((x) => `${x.worker} ${x.outcome.split(":")[0]}`).join(", ")} (side effects outside its checkout may have happened more than once)\n`
          : "";
      io.stdout.write(
        `${head}\n  prompt: ${oneLine(r.prompt)}\n${res ? `  ${oneLine(res.finalText) || "(no text)"}\n` : ""}${reran}`,
      );
    }
    if (!reports.length) io.stdout.write(`no jobs in queue '${o.queue}'\n`);
    return 0;
  } finally {
    await q.close();
  }
}

function missing(id: string, queue: string): never {
  throw new UsageError(`no job ${id} in queue '${queue}' (coil fleet results lists them)`);
}

const oneLine = (s: string) => (s.length > 160 ? `${s.slice(0, 160)}…` : s).replace(/\s+/g, " ").trim();

export async function cancel(o: Common & { ids: string[] }, io: CliStreams): Promise<number> {
  if (!o.ids.length) throw new UsageError("cancel needs job ids: coil fleet cancel <id...>");
  const q = await openQueue(o);
  let code = 0;
  try {
    for (const id of o.ids) {
      const job = await q.queue.getJob(id);
      if (!job) {
        io.stderr.write(`coil fleet: no job ${id} in queue '${o.queue}'\n`);
        code = 1;
        continue;
      }
      const state = await job.getState();
      if (state === "completed" || state === "failed") {
        io.stdout.write(`${id}: already ${state}\n`);
        continue;
      }
      // Mark it first so a worker that takes it right now still sees the cancel.
      await q.redis.set(keys.cancel(o.queue, id), "1", "EX", 7 * 24 * 3600);
      if (state === "active") {
        await q.redis.publish(keys.cancelChannel(o.queue), id);
        io.stdout.write(`${id}: cancelling (running; its worker aborts it)\n`);
      } else {
        await job.remove().catch(async () => {
          await q.redis.publish(keys.cancelChannel(o.queue), id);
        });
        io.stdout.write(`${id}: removed (was ${state})\n`);
      }
    }
    return code;
  } finally {
    await q.close();
  }
}

export async function logs(o: Common & { ids: string[] }, io: CliStreams): Promise<number> {
  if (o.ids.length !== 1) throw new UsageError("logs needs one job id: coil fleet logs <id>");
  const q = await openQueue(o);
  try {
    const id = o.ids[0]!;
    if (!(await q.queue.getJob(id))) missing(id, o.queue);
    const { logs: lines } = await q.queue.getJobLogs(id, 0, -1, true);
    for (const line of lines) io.stdout.write(line + "\n");
    return 0;
  } finally {
    await q.close();
  }
}

export async function session(o: Common & { ids: string[] }, io: CliStreams): Promise<number> {
  if (o.ids.length !== 1) throw new UsageError("session needs one job id: coil fleet session <id>");
  const q = await openQueue(o);
  try {
    const text = await q.redis.get(keys.session(o.queue, o.ids[0]!));
    if (text === null) {
      io.stderr.write(
        `coil fleet: no session stored for job ${o.ids[0]} in queue '${o.queue}' (it has not finished, or ran with --no-session)\n`,
      );
      return 1;
    }
    io.stdout.write(text);
    return 0;
  } finally {
    await q.close();
  }
}
