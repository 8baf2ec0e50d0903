/**
 * What a fleet job carries and what it hands back, and how a preset becomes self-contained job data.
 */
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import type { Usage } from "../../api/index.js";
import type { ResolvedPreset } from "../../sdk/index.js";

/** Where a job's files come from: a directory on a shared file system, or a git repository (URL or path) and ref. */
export type JobSource = { kind: "dir"; dir: string; ref?: string } | { kind: "git"; repo: string; ref?: string };

/** Per-job budgets, applied through the guards plugin's options. */
export interface JobGuards {
  maxTurns?: number;
  maxTokens?: number;
  maxCost?: number;
}

export interface FleetJobData {
  prompt: string;
  /** The resolved preset as a preset document (JSON, which is YAML): workers need no shared config. */
  preset: { name: string; document: Record<string, unknown> };
  model?: string;
  source: JobSource;
  guards: JobGuards;
  /** Per-attempt time limit; the job fails (no retry) when it is hit. */
  timeoutMs?: number;
  submittedAt: number;
  /** The last failed attempt's result (provider errors, timeouts), for `coil fleet results`. */
  lastAttempt?: FleetJobResult;
}

/** One time a worker took the job. BullMQ is at-least-once: more than one run can mean side effects ran twice. */
export interface JobRun {
  /** 1, 2, ... in the order workers took the job. */
  run: number;
  worker: string;
  startedAt: number;
  finishedAt?: number;
  /**
   * `running`, `completed`, `failed: <why>`, `handed back to the queue`, or `interrupted: ...` when its
   * worker stopped renewing the job's lock (killed, crashed, cut off) and another worker took the job.
   */
  outcome: string;
}

export interface FleetJobResult {
  finalText: string;
  /** The run's stop reason (`stop`, `halted`, `error`, `aborted`, ...). */
  stopReason: string;
  reason?: string;
  error?: string;
  /** What `coil -p` would exit with: 0 success, 1 error or abort, 3 halted by a guard. */
  exitStatus: number;
  usage: Usage;
  /** USD, the same as usage.cost.total. */
  cost: number;
  turns: number;
  session?: { id: string; file?: string; redisKey?: string; copy?: string };
  /** `git diff --binary` of everything the agent changed, against the job's starting commit. */
  patch: string;
  worker: string;
  /** Wall time of the attempt, and the part spent inside the agent's run. */
  durationMs: number;
  agentMs: number;
  overheadMs: number;
  /** Every run of the job, this one last (`completed`): more than one means it was started again. */
  runs?: JobRun[];
}

/** Option names that hold credentials; such values never travel in a job. */
const SECRET_KEY = /^(.*api[-_]?key|.*secret.*|.*password|.*token|authorization|auth|cookie)$/i;
const SECRET_VALUE = /^(sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{8,})/;

/** A resolved preset entry, as `coil/sdk`'s `resolvePreset` gives it. */
export type PresetEntryLike = ResolvedPreset["entries"][number];

/**
 * The resolved preset as one self-contained document: relative option paths made absolute against the file
 * that set them, the scripted provider's `script` file inlined as `replies`, per-job guards merged into the
 * guards plugin. Throws when an option holds a credential (keys come from each worker's environment).
 */
export function embedPreset(
  settings: Record<string, unknown>,
  entries: readonly PresetEntryLike[],
  guards: JobGuards,
): Record<string, unknown> {
  const plugins: unknown[] = [];
  let guardsSeen = false;
  for (const e of entries) {
    findSecret(e, e.options, "");
    let options = absolutize(e.options, e.baseDir) as Record<string, unknown>;
    if (e.key === "provider-scripted" && typeof options.script === "string") options = inlineScript(options);
    if (e.key === "guards") {
      guardsSeen = true;
      options = { ...options, ...defined(guards) };
    }
    const name = e.kind === "path" ? e.key : e.ref;
    plugins.push(Object.keys(options).length ? { [name]: options } : name);
  }
  if (!guardsSeen && Object.keys(defined(guards)).length) plugins.push({ guards: defined(guards) });
  const doc: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(settings)) if (v !== undefined && k !== "description") doc[k] = v;
  doc.plugins = plugins;
  return doc;
}

function findSecret(e: PresetEntryLike, value: unknown, path: string): void {
  if (typeof value === "string") {
    const name = path.split(".").pop() ?? "";
    if ((SECRET_KEY.test(name) && value !== "") || SECRET_VALUE.test(value)) {
      const setIn = Object.entries(e.optionSources).find(
        ([k]) => path === k || path.startsWith(`${k}.`) || path.startsWith(`${k}[`),
      )?.[1];
      throw new Error(
        `plugin '${e.ref}' option '${path}' holds a credential (set in ${setIn ?? `${e.source.file}${e.source.line ? `:${e.source.line}` : ""}`}); ` +
          `jobs never carry secrets: remove it from the preset and give each worker the key in its environment or with \`coil auth\``,
      );
    }
  } else if (Array.isArray(value))
    value.forEach((v, i) => {
      findSecret(e, v, `${path}[${i}]`);
    });
  else if (value && typeof value === "object")
    for (const [k, v] of Object.entries(value)) findSecret(e, v, path ? `${path}.${k}` : k);
}

/** `./x` and `../x` string values become absolute paths against `base`. */
function absolutize(value: unknown, base: string): unknown {
  if (typeof value === "string") return /^\.\.?\//.test(value) ? resolve(base, value) : value;
  if (Array.isArray(value)) return value.map((v) => absolutize(v, base));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, absolutize(v, base)]));
  return value;
}

function inlineScript(options: Record<string, unknown>): Record<string, unknown> {
  const { script, ...rest } = options as { script: string };
  if (!isAbsolute(script) || !existsSync(script))
    throw new Error(`provider-scripted: cannot read the script ${script} to embed it in the job`);
  const text = readFileSync(script, "utf8");
  const parsed = script.endsWith(".json") ? JSON.parse(text) : parseYaml(text);
  if (Array.isArray(parsed)) return { ...rest, replies: parsed };
  const { replies, conversations } = (parsed ?? {}) as { replies?: unknown; conversations?: unknown };
  return { ...rest, ...(replies ? { replies } : {}), ...(conversations ? { conversations } : {}) };
}

const defined = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
