/**
 * `coil fleet worker`: a BullMQ worker that runs each job as a headless coil agent (coil/sdk) in its own
 * checkout, streams the run to the job's progress and log, and hands back the result.
 *
 * Failure policy: a provider error (the run ends with stopReason `error`) throws, so BullMQ retries it with
 * the job's backoff; a finished run is a result whatever its stop reason (a model that gives up or a guard
 * that halts is not retried); a timeout, a cancel or a broken job fails at once (UnrecoverableError).
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import {
  emptyUsage,
  lastAssistantText,
  textOf,
  usageTotal,
  type AgentEvent,
  type CliStreams,
  type Usage,
} from "../../api/index.js";
import { exitCodeFor } from "../../lib/front-end.js";
import { addUsage } from "../../lib/subagent-usage.js";
import type { FleetJobData, FleetJobResult, JobRun } from "./job.js";
import { keys, loadBull, redisClient, type Job } from "./redis.js";
import { prepareWorkspace } from "./workspace.js";

export interface WorkerOptions {
  redis: string;
  queue: string;
  concurrency: number;
  stallMs: number;
  /** After SIGTERM, how long running jobs may take to finish before they are handed back to the queue. */
  graceMs: number;
  workdir: string;
  resultsDir?: string;
  name: string;
}

interface Running {
  abort(why: "timeout" | "cancel" | "handback"): void;
}

export async function runWorker(opts: WorkerOptions, io: CliStreams): Promise<number> {
  const { Worker, UnrecoverableError, WaitingError } = await loadBull();
  const { createAgent } = await import("../../sdk/index.js");
  const connection = await redisClient(opts.redis, true);
  const subscriber = await redisClient(opts.redis, true);
  const running = new Map<string, Running>();
  let handingBack = false;
  sweepDeadWorkdirs();
  mkdirSync(opts.workdir, { recursive: true });
  const say = (line: string) => io.stderr.write(`coil fleet worker ${opts.name}: ${line}\n`);

  await subscriber.subscribe(keys.cancelChannel(opts.queue));
  subscriber.on("message", (_channel: string, id: string) => running.get(id)?.abort("cancel"));

  /**
   * Record this run of `job` in its runs list (an earlier run still marked `running` was interrupted: its
   * worker lost the job's lock), and return the way to record how it ended.
   */
  async function startRun(job: Job<FleetJobData, FleetJobResult>) {
    const key = keys.runs(opts.queue, String(job.id));
    const earlier = (await connection.lrange(key, 0, -1)).map((r) => JSON.parse(r) as JobRun);
    for (const [i, r] of earlier.entries())
      if (r.outcome === "running") {
        r.outcome =
          "interrupted: its worker stopped renewing the job's lock (killed, crashed or cut off), so the job was started again";
        await connection.lset(key, i, JSON.stringify(r));
      }
    const own: JobRun = { run: earlier.length + 1, worker: opts.name, startedAt: Date.now(), outcome: "running" };
    const index = (await connection.rpush(key, JSON.stringify(own))) - 1;
    let last: JobRun | undefined;
    const ended = (outcome: string): JobRun => {
      if (last?.outcome !== outcome) last = { ...own, finishedAt: Date.now(), outcome };
      return last;
    };
    return {
      /** Every run, this one as it ends with `outcome` (the result carries what the runs list keeps). */
      list: (outcome: string): JobRun[] => [...earlier, ended(outcome)],
      finish: async (outcome: string) => {
        await connection.lset(key, index, JSON.stringify(ended(outcome)));
      },
    };
  }

  const processor = async (job: Job<FleetJobData, FleetJobResult>, token?: string): Promise<FleetJobResult> => {
    const runs = await startRun(job);
    let outcome = "completed";
    try {
      return await attempt(job, token, runs.list);
    } catch (e) {
      outcome = e instanceof WaitingError ? "handed back to the queue" : `failed: ${(e as Error).message}`;
      throw e;
    } finally {
      await runs.finish(outcome).catch(() => undefined);
    }
  };

  const attempt = async (
    job: Job<FleetJobData, FleetJobResult>,
    token: string | undefined,
    runsAt: (outcome: string) => JobRun[],
  ): Promise<FleetJobResult> => {
    const started = Date.now();
    const id = String(job.id);
    const data = job.data;
    if (await connection.exists(keys.cancel(opts.queue, id)))
      throw new UnrecoverableError("cancelled by coil fleet cancel");
    const [spentText, capText] = await connection.mget(keys.cost(opts.queue), keys.cap(opts.queue));
    const spent = Number(spentText ?? 0);
    const cap = capText === null ? undefined : Number(capText);
    if (cap !== undefined && spent >= cap)
      throw new UnrecoverableError(
        `fleet cost cap reached: $${spent.toFixed(4)} spent of $${cap} (set with coil fleet submit --max-fleet-cost)`,
      );

    const dir = join(opts.workdir, `${opts.queue}-${id}-${job.attemptsMade}-${process.pid}-${Date.now().toString(36)}`);
    const workspace = await prepareWorkspace(data.source, dir).catch((e: Error) => {
      throw new UnrecoverableError(`job ${id}: cannot prepare its checkout: ${e.message}`);
    });
    const presetFile = `${dir}.preset.yaml`;
    // The per-job guard's cost budget never exceeds what is left of the fleet's cap.
    const document = structuredClone(data.preset.document);
    if (cap !== undefined) capGuard(document, cap - spent);
    writeFileSync(presetFile, JSON.stringify(document, null, 2));

    let why: "timeout" | "cancel" | "handback" | undefined;
    const logs: Promise<unknown>[] = [];
    const log = (line: string) => logs.push(job.log(line).catch(() => undefined));
    let coil: Awaited<ReturnType<typeof createAgent>> | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      try {
        coil = await createAgent({
          cwd: workspace.cwd,
          preset: presetFile,
          model: data.model,
          env: io.env,
          mode: "fleet",
          stderr: new LineSink(log),
        });
      } catch (e) {
        throw new UnrecoverableError(`job ${id}: the agent could not start: ${(e as Error).message}`);
      }
      const agent = coil;
      running.set(id, {
        abort(w) {
          why ??= w;
          agent.agent.abort();
        },
      });
      if (handingBack) running.get(id)!.abort("handback");
      // A cancel published while the checkout was being made had no run to abort yet.
      if (await connection.exists(keys.cancel(opts.queue, id))) running.get(id)!.abort("cancel");
      if (data.timeoutMs) timer = setTimeout(() => running.get(id)?.abort("timeout"), data.timeoutMs);
      const progress = new Progress(job, log);
      const unsubscribe = agent.subscribe((e) => progress.on(e));
      const agentStart = Date.now();
      log(`attempt ${job.attemptsMade + 1} on ${opts.name} in ${workspace.cwd}`);
      const outcome = await agent.prompt(data.prompt);
      const agentMs = Date.now() - agentStart;
      clearTimeout(timer);
      unsubscribe();
      await progress.flush();
      const usage = outcome.messages.reduce<Usage>(
        (u, m) => (m.role === "assistant" && m.usage ? addUsage(u, m.usage) : u),
        emptyUsage(),
      );
      const session = agent.service("session") as { id: string; file?: string } | undefined;
      const sessionInfo = session ? { id: session.id, file: session.file } : undefined;
      await agent.close();
      coil = undefined;
      const result: FleetJobResult = {
        finalText: lastAssistantText(outcome.messages),
        stopReason: why === "timeout" ? "timeout" : why === "cancel" ? "cancelled" : outcome.stopReason,
        ...(outcome.reason ? { reason: outcome.reason } : {}),
        ...(outcome.error ? { error: outcome.error } : {}),
        exitStatus: exitCodeFor(outcome.stopReason),
        usage,
        cost: usage.cost.total,
        turns: outcome.messages.filter((m) => m.role === "assistant").length,
        session: await keepSession(sessionInfo, id),
        patch: await workspace.patch(),
        worker: opts.name,
        durationMs: 0,
        agentMs,
        overheadMs: 0,
      };
      result.durationMs = Date.now() - started;
      result.overheadMs = result.durationMs - agentMs;
      if (usage.cost.total > 0) await connection.incrbyfloat(keys.cost(opts.queue), usage.cost.total);
      await Promise.all(logs);

      if (why === "handback") {
        await job.moveToWait(token);
        say(`job ${id} handed back to the queue`);
        throw new WaitingError();
      }
      if (why === "timeout" || why === "cancel" || outcome.stopReason === "error") {
        await job.updateData({ ...data, lastAttempt: result });
        if (why === "timeout")
          throw new UnrecoverableError(
            `timed out after ${Math.round(data.timeoutMs! / 1000)}s (coil fleet submit --timeout)`,
          );
        if (why === "cancel") throw new UnrecoverableError("cancelled by coil fleet cancel");
        // A provider error: BullMQ retries with the job's backoff until its attempts run out.
        throw new Error(`provider error: ${outcome.error ?? outcome.reason ?? "the run ended with an error"}`);
      }
      log(`done: ${result.stopReason}, exit ${result.exitStatus}, $${result.cost.toFixed(4)}`);
      await Promise.all(logs);
      result.runs = runsAt("completed");
      return result;
    } finally {
      clearTimeout(timer);
      running.delete(id);
      await coil?.close().catch(() => undefined);
      await workspace.remove().catch(() => undefined);
      rmSync(presetFile, { force: true });
    }
  };

  /** Upload the session into Redis (and copy it to --results-dir) so it outlives this worker. */
  async function keepSession(
    info: { id: string; file?: string } | undefined,
    id: string,
  ): Promise<FleetJobResult["session"]> {
    if (!info) return undefined;
    if (!info.file || !existsSync(info.file)) return { id: info.id };
    const redisKey = keys.session(opts.queue, id);
    await connection.set(redisKey, readFileSync(info.file, "utf8"));
    let copy: string | undefined;
    if (opts.resultsDir) {
      mkdirSync(opts.resultsDir, { recursive: true });
      copy = join(opts.resultsDir, `${opts.queue}-${id}.jsonl`);
      copyFileSync(info.file, copy);
    }
    return { id: info.id, file: info.file, redisKey, ...(copy ? { copy } : {}) };
  }

  const worker = new Worker<FleetJobData, FleetJobResult>(opts.queue, processor, {
    connection,
    concurrency: opts.concurrency,
    name: opts.name,
    lockDuration: opts.stallMs,
    stalledInterval: opts.stallMs,
    maxStalledCount: 2,
  });
  worker.on("error", (e) => say(`error: ${e.message}`));
  worker.on("failed", (job, e) => say(`job ${job?.id} failed: ${e.message}`));
  worker.on("completed", (job) => say(`job ${job.id} completed`));
  await worker.waitUntilReady();
  say(`ready on queue '${opts.queue}' (${opts.redis}), concurrency ${opts.concurrency}`);

  return new Promise<number>((resolveExit) => {
    let stopping = false;
    const handBack = () => {
      handingBack = true;
      for (const r of running.values()) r.abort("handback");
    };
    const stop = (signal: string) => {
      if (stopping) {
        say(`${signal} again: handing back ${running.size} running job(s)`);
        handBack();
        return;
      }
      stopping = true;
      say(
        `${signal}: taking no new jobs; finishing ${running.size} running job(s) (up to ${opts.graceMs} ms, then they go back to the queue)`,
      );
      const grace = setTimeout(handBack, opts.graceMs);
      void worker.close().then(async () => {
        clearTimeout(grace);
        await subscriber.quit().catch(() => undefined);
        await connection.quit().catch(() => undefined);
        // The default work directory is this process's own; a --workdir stays.
        try {
          rmdirSync(opts.workdir);
        } catch {
          /* not empty, or given with --workdir and shared */
        }
        say("stopped");
        for (const s of ["SIGTERM", "SIGINT"] as const) process.off(s, onSignal);
        resolveExit(0);
      });
    };
    const onSignal = (signal: NodeJS.Signals) => stop(signal);
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  });
}

/** Rewrite the guards entry's maxCost to at most `left` dollars. */
function capGuard(document: Record<string, unknown>, left: number): void {
  const plugins = document.plugins as unknown[];
  const budget = Math.max(left, 0);
  const at = plugins.findIndex((p) => p === "guards" || (typeof p === "object" && p !== null && "guards" in p));
  const current =
    at >= 0 && typeof plugins[at] === "object"
      ? ((plugins[at] as { guards: Record<string, unknown> }).guards ?? {})
      : {};
  const own = typeof current.maxCost === "number" && current.maxCost > 0 ? current.maxCost : Infinity;
  const entry = { guards: { ...current, maxCost: Math.min(own, budget) } };
  if (at >= 0) plugins[at] = entry;
  else plugins.push(entry);
}

/** Job progress (BullMQ progress events) and log lines from the agent's events, progress throttled. */
class Progress {
  private state = { turns: 0, tools: 0, lastTool: "", tokens: 0, cost: 0, text: "" };
  private timer: NodeJS.Timeout | undefined;
  private pending: Promise<unknown> = Promise.resolve();
  constructor(
    private job: Job,
    private log: (line: string) => void,
  ) {}
  on(e: AgentEvent): void {
    if (e.type === "turn_end") {
      this.state.turns++;
      const u = e.message.usage;
      if (u) {
        this.state.tokens += usageTotal(u);
        this.state.cost += u.cost?.total ?? 0;
      }
      const text = textOf(e.message);
      if (text) {
        this.state.text = text.slice(-200);
        this.log(`turn ${this.state.turns}: ${text.length > 300 ? `${text.slice(0, 300)}…` : text}`);
      }
      this.schedule();
    } else if (e.type === "tool_execution_start") {
      this.state.tools++;
      this.state.lastTool = e.toolName;
      this.log(`tool ${e.toolName} ${JSON.stringify(e.args).slice(0, 300)}`);
      this.schedule();
    } else if (e.type === "tool_execution_end" && e.result.isError) {
      this.log(`tool ${e.toolName} failed: ${textOf(e.result).slice(0, 300)}`);
    } else if (e.type === "retry") {
      this.log(`provider retry ${e.attempt} in ${e.delayMs} ms: ${e.reason}`);
    } else if (e.type === "agent_end") {
      this.log(`run ended: ${e.stopReason}${e.reason ? ` (${e.reason})` : ""}`);
    }
  }
  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.pending = this.job.updateProgress({ ...this.state }).catch(() => undefined);
    }, 200);
  }
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.pending;
    await this.job.updateProgress({ ...this.state, done: true }).catch(() => undefined);
  }
}

/** Plugins' messages during a job go to the job's log, line by line. */
class LineSink extends Writable {
  private buf = "";
  constructor(private log: (line: string) => void) {
    super();
  }
  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: () => void): void {
    this.buf += chunk.toString();
    const lines = this.buf.split("\n");
    this.buf = lines.pop() ?? "";
    for (const l of lines) if (l.trim()) this.log(l);
    done();
  }
}

export function defaultWorkerName(): string {
  return `${hostname()}:${process.pid}`;
}

export function defaultWorkdir(): string {
  return join(tmpdir(), `coil-fleet-${process.pid}`);
}

/**
 * The default work directories of workers on this machine that died without cleaning up (kill -9): their
 * checkouts are removed. A `--workdir` may be shared by machines whose pids this one cannot see: left alone.
 */
function sweepDeadWorkdirs(): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^coil-fleet-(\d+)$/.exec(name)?.[1]);
    if (!pid || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ESRCH") rmSync(join(tmpdir(), name), { recursive: true, force: true });
    }
  }
}
