/**
 * fleet: many coil agents as jobs on BullMQ (Redis). `coil fleet submit` queues prompts with a resolved,
 * embedded preset; `coil fleet worker` runs them headless, each in its own checkout; `status`, `wait`,
 * `results`, `cancel`, `logs` and `session` watch and steer the queue. See docs/fleet.md.
 * BullMQ and ioredis load only when a fleet subcommand runs.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { definePlugin, type CliStreams } from "../../kernel/index.js";

const USAGE = `coil fleet <command> [--redis <url>] [--queue <name>]

  submit   --prompt <text> | --prompts <file.jsonl>  [--cwd <dir> | --repo <git url|path> [--ref <ref>]]
           [--preset p] [--model m] [--max-turns N] [--max-tokens N] [--max-cost usd] [--max-fleet-cost usd]
           [--timeout s] [--attempts N] [--backoff-ms N] [--json]            → job ids
  worker   [--concurrency N] [--stall-ms N] [--grace-ms N] [--workdir dir] [--results-dir dir] [--name n]
  status   [--json]                      counts and cost so far
  wait     [--timeout s] [--json]        progress bar until the queue is drained (exit 1 if a job failed, 124 on timeout)
  results  [id...] [--json]              each job's result or error
  cancel   <id...>                       remove a waiting job, abort a running one
  logs     <id>                          the job's event log
  session  <id>                          the job's session (JSONL), as uploaded by its worker

--redis defaults to $COIL_FLEET_REDIS or redis://127.0.0.1:6379, --queue to $COIL_FLEET_QUEUE or coil.
API keys never travel in jobs: each worker uses its own environment or \`coil auth\`.`;

type Spec = NonNullable<ParseArgsConfig["options"]>;
const common: Spec = {
  redis: { type: "string" },
  queue: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
};
const specs: Record<string, Spec> = {
  submit: {
    cwd: { type: "string" },
    repo: { type: "string" },
    ref: { type: "string" },
    preset: { type: "string" },
    model: { type: "string" },
    prompt: { type: "string" },
    prompts: { type: "string" },
    "max-turns": { type: "string" },
    "max-tokens": { type: "string" },
    "max-cost": { type: "string" },
    "max-fleet-cost": { type: "string" },
    timeout: { type: "string" },
    attempts: { type: "string" },
    "backoff-ms": { type: "string" },
  },
  worker: {
    concurrency: { type: "string" },
    "stall-ms": { type: "string" },
    "grace-ms": { type: "string" },
    workdir: { type: "string" },
    "results-dir": { type: "string" },
    name: { type: "string" },
  },
  status: {},
  wait: { timeout: { type: "string" } },
  results: {},
  cancel: {},
  logs: {},
  session: {},
};

export async function fleetCommand(argv: string[], io: CliStreams): Promise<number> {
  const cmd = argv[0];
  if (!cmd || cmd === "help" || cmd === "--help" || cmd === "-h") {
    (cmd ? io.stdout : io.stderr).write(USAGE + "\n");
    return cmd ? 0 : 2;
  }
  // `coil fleet results | head`: a closed pipe ends the output, not the process with a stack trace.
  io.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") throw e;
  });
  const commands = await import("./commands.js");
  try {
    const spec = specs[cmd];
    if (!spec) throw new commands.UsageError(`unknown command '${cmd}' (one of: ${Object.keys(specs).join(", ")})`);
    let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
    try {
      parsed = parseArgs({
        args: argv.slice(1),
        options: { ...common, ...spec },
        allowPositionals: true,
        strict: true,
      }) as typeof parsed;
    } catch (e) {
      throw new commands.UsageError((e as Error).message);
    }
    const v = parsed.values;
    if (v.help) {
      io.stdout.write(USAGE + "\n");
      return 0;
    }
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
    const ids = parsed.positionals;
    if (cmd !== "results" && cmd !== "cancel" && cmd !== "logs" && cmd !== "session" && ids.length)
      throw new commands.UsageError(`${cmd} takes no arguments, got '${ids.join(" ")}'`);
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
    io.stderr.write(`coil fleet ${cmd}: ${(e as Error).message}${usage ? "\n  (coil fleet help)" : ""}\n`);
    return usage ? 2 : 1;
  }
}

export default definePlugin({
  id: "fleet",
  description:
    "coil fleet: run many agents as jobs on BullMQ/Redis (submit, worker, status, wait, results, cancel, logs)",
  setup(ctx) {
    ctx.subcommands.register({
      name: "fleet",
      description: "run many agents as jobs on BullMQ/Redis workers (docs/fleet.md)",
      usage: "submit|worker|status|wait|results|cancel|logs|session [options]",
      run: (argv, io) => fleetCommand(argv, io),
    });
  },
});
