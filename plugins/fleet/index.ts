/**
 * fleet: many coil agents as jobs on BullMQ (Redis). `coil fleet submit` queues prompts with a resolved,
 * embedded preset; `coil fleet worker` runs them headless, each in its own checkout; `status`, `wait`,
 * `results`, `cancel`, `logs` and `session` watch and steer the queue. See docs/fleet.md.
 * BullMQ and ioredis load only when a fleet subcommand runs.
 */
import { definePlugin, type CliStreams } from "../../api/index.js";
import type { Subcommand, SubcommandOption } from "../../lib/command-line.js";

const NOTES = `--redis defaults to $COIL_FLEET_REDIS or redis://127.0.0.1:6379, --queue to $COIL_FLEET_QUEUE or coil.
API keys never travel in jobs: each worker uses its own environment or \`coil auth\`. See docs/fleet.md.`;

const value = (name: string, valueName: string, description: string): SubcommandOption => ({
  name,
  type: "string",
  valueName,
  description,
});
const common: SubcommandOption[] = [
  value("redis", "url", "the Redis server ($COIL_FLEET_REDIS, else redis://127.0.0.1:6379)"),
  value("queue", "name", "the queue ($COIL_FLEET_QUEUE, else coil)"),
];
const json: SubcommandOption = { name: "json", description: "print JSON" };

/** Each `coil fleet <command>`: its arguments, options and what it does. */
const COMMANDS: { name: string; description: string; arguments?: string; options: SubcommandOption[] }[] = [
  {
    name: "submit",
    description: "queue prompts as jobs, each with the resolved preset embedded; prints the job ids",
    options: [
      value("prompt", "text", "one job with this prompt"),
      value("prompts", "file.jsonl", 'one job per line: { "prompt": ..., "cwd"?, "repo"?, "ref"? }'),
      value("cwd", "dir", "run the job in this directory"),
      value("repo", "git url|path", "run the job in a fresh checkout of this repository"),
      value("ref", "ref", "the branch, tag or commit of --repo to check out"),
      value("preset", "name|path", "the preset the job runs with (resolved now, embedded in the job)"),
      value("model", "id", "the model the job runs with"),
      value("max-turns", "N", "stop a job after N turns"),
      value("max-tokens", "N", "stop a job past N tokens"),
      value("max-cost", "usd", "stop a job past this cost"),
      value("max-fleet-cost", "usd", "refuse jobs once the queue's jobs together cost this much"),
      value("timeout", "s", "fail a job that runs longer"),
      value("attempts", "N", "tries of a job whose provider fails (default 3)"),
      value("backoff-ms", "N", "wait before a retry, doubling (default 2000)"),
      json,
    ],
  },
  {
    name: "worker",
    description: "run queued jobs headless, each in its own checkout, until stopped",
    options: [
      value("concurrency", "N", "jobs at a time (default 1)"),
      value("stall-ms", "N", "a job whose worker is silent this long is handed to another (default 30000)"),
      value("grace-ms", "N", "after SIGTERM, how long running jobs may take to finish (default 60000)"),
      value("workdir", "dir", "where checkouts are made"),
      value("results-dir", "dir", "also write each result (and its session) here"),
      value("name", "name", "this worker's name in status and results"),
    ],
  },
  { name: "status", description: "counts and cost so far", options: [json] },
  {
    name: "wait",
    description: "a progress bar until the queue is drained (exit 1 if a job failed, 124 on timeout)",
    options: [value("timeout", "s", "give up after this long"), json],
  },
  { name: "results", arguments: "[id...]", description: "each job's result or error", options: [json] },
  { name: "cancel", arguments: "<id...>", description: "remove a waiting job, abort a running one", options: [] },
  { name: "logs", arguments: "<id>", description: "the job's event log", options: [] },
  {
    name: "session",
    arguments: "<id>",
    description: "the job's session (JSONL), as uploaded by its worker",
    options: [],
  },
];

/** `coil fleet`, its commands and their options (the command line parses them). */
export const fleetSubcommand: Subcommand = {
  name: "fleet",
  description: "run many agents as jobs on BullMQ/Redis workers (docs/fleet.md)",
  help: NOTES,
  commands: COMMANDS.map((c) => ({
    ...c,
    options: [...c.options, ...common],
    help: NOTES,
    run: (ids: string[], io: CliStreams, options: Readonly<Record<string, unknown>>) =>
      fleetCommand(c.name, ids, options, io),
  })),
};

export async function fleetCommand(
  cmd: string,
  ids: string[],
  v: Readonly<Record<string, unknown>>,
  io: CliStreams,
): Promise<number> {
  // `coil fleet results | head`: a closed pipe ends the output, not the process with a stack trace.
  io.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") throw e;
  });
  const commands = await import("./commands.js");
  try {
    const str = (k: string) => v[k] as string | undefined;
    const num = (k: string, opts: { int?: boolean; min?: number } = {}): number | undefined => {
      const raw = str(k);
      if (raw === undefined) return undefined;
      const n = Number(raw);
      if (!Number.isFinite(n) || (opts.int && !Number.isInteger(n)) || n < (opts.min ?? 0))
        throw new commands.UsageError(
          `--${k} wants a ${opts.int ? "whole " : ""}number ≥ ${opts.min ?? 0}, got '${raw}'`,
        );
      return n;
    };
    const base = {
      redis: str("redis") ?? io.env.COIL_FLEET_REDIS ?? "redis://127.0.0.1:6379",
      queue: str("queue") ?? io.env.COIL_FLEET_QUEUE ?? "coil",
      json: Boolean(v.json),
    };
    switch (cmd) {
      case "submit":
        return await commands.submit(
          {
            ...base,
            cwd: str("cwd"),
            repo: str("repo"),
            ref: str("ref"),
            preset: str("preset"),
            model: str("model"),
            prompt: str("prompt"),
            prompts: str("prompts"),
            guards: {
              maxTurns: num("max-turns", { int: true }),
              maxTokens: num("max-tokens", { int: true }),
              maxCost: num("max-cost"),
            },
            maxFleetCost: num("max-fleet-cost"),
            timeoutS: num("timeout"),
            attempts: num("attempts", { int: true, min: 1 }) ?? 3,
            backoffMs: num("backoff-ms", { int: true }) ?? 2000,
          },
          io,
        );
      case "worker": {
        const { runWorker, defaultWorkdir, defaultWorkerName } = await import("./worker.js");
        const { resolve } = await import("node:path");
        return await runWorker(
          {
            redis: base.redis,
            queue: base.queue,
            concurrency: num("concurrency", { int: true, min: 1 }) ?? 1,
            stallMs: num("stall-ms", { int: true, min: 100 }) ?? 30_000,
            graceMs: num("grace-ms", { int: true }) ?? 60_000,
            workdir: str("workdir") ? resolve(io.cwd, str("workdir")!) : defaultWorkdir(),
            ...(str("results-dir") ? { resultsDir: resolve(io.cwd, str("results-dir")!) } : {}),
            name: str("name") ?? defaultWorkerName(),
          },
          io,
        );
      }
      case "status":
        return await commands.status(base, io);
      case "wait":
        return await commands.wait({ ...base, timeoutS: num("timeout") }, io);
      case "results":
        return await commands.results({ ...base, ids }, io);
      case "cancel":
        return await commands.cancel({ ...base, ids }, io);
      case "logs":
        return await commands.logs({ ...base, ids }, io);
      default:
        return await commands.session({ ...base, ids }, io);
    }
  } catch (e) {
    const usage = e instanceof commands.UsageError;
    io.stderr.write(`coil fleet ${cmd}: ${(e as Error).message}${usage ? `\n  (coil fleet ${cmd} --help)` : ""}\n`);
    return usage ? 2 : 1;
  }
}

export default definePlugin({
  id: "fleet",
  description:
    "coil fleet: run many agents as jobs on BullMQ/Redis (submit, worker, status, wait, results, cancel, logs)",
  setup(ctx) {
    ctx.subcommands.register(fleetSubcommand);
  },
});
