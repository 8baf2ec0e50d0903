/**
 * What checkpoints does at run time: snapshot before a prompt's first change and after each turn with
 * changes, record them in the session, and rewind files and conversation (`/rewind`, the TUI's picker);
 * plus `coil checkpoints`. The plugin's setup (index.ts) only registers the handlers built here.
 */
import { relative, resolve } from "node:path";
import {
  textOf,
  type Agent,
  type AgentMessage,
  type CliStreams,
  type PluginContext,
  type ToolCallInfo,
} from "../../api/index.js";
import { coilHome } from "../../lib/paths.js";
import { notReadOnly } from "../../lib/shell/read-only-commands.js";
import type { MessageEntry, SessionEntry } from "../session-jsonl/api.js";
import type { CheckpointOptions } from "./index.js";
import {
  CHECKPOINT_ENTRY,
  REWIND_ENTRY,
  parseRewindArgs,
  type CheckpointRecord,
  type RewindPoint,
  type RewindRecord,
} from "./records.js";
import { ShadowRepo, type Change } from "./shadow.js";

/** The user message an entry holds, if it is one. */
const userMessage = (e: SessionEntry) =>
  e.type === "message" && (e as MessageEntry).message.role === "user" ? (e as MessageEntry).message : undefined;

/** Lines of diff the picker shows before it asks. */
const PREVIEW_LINES = 40;

interface Run {
  user?: AgentMessage;
  before?: Promise<{ commit: string; tree: string; large: string[]; nested: string[]; ignored: string[] } | undefined>;
  /** Files named by non-bash tools, with the tool. */
  byTool: Map<string, string>;
  bash: boolean;
  dirty: boolean;
}

const short = (text: string, n = 60) => {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
};

/** The handlers setup registers, sharing one run's state. */
export function createCheckpoints(ctx: PluginContext<CheckpointOptions>) {
  const o = ctx.options;
  let repo: ShadowRepo | undefined;
  const shadow = () => (repo ??= new ShadowRepo(ctx.cwd, coilHome(), o.maxFileSize));
  const session = () => ctx.services.get("session");
  let mode = "text";
  let run: Run = { byTool: new Map(), bash: false, dirty: false };
  let pending: Promise<unknown> = Promise.resolve();
  let pruned = false;
  /** Set once git turned out to be missing: said once, not at every prompt. */
  let noGit = false;
  const warn = (message: string) => {
    ctx.log.warn(message);
    ctx.services.get("ui")?.notify(message, "warn");
  };

  const mutating = (info: ToolCallInfo): boolean => {
    const name = info.call.name;
    if (name === "bash") return notReadOnly(String(info.args.command ?? ""), o.readOnlyCommands) !== undefined;
    return !(info.tool.readOnly === true || o.readOnlyTools.includes(name));
  };
  const relPath = (p: string) => {
    const rel = relative(ctx.cwd, resolve(ctx.cwd, p.replace(/^~(?=\/|$)/, process.env.HOME ?? "~")));
    return rel.startsWith("..") ? undefined : rel;
  };
  const userEntry = () => (run.user ? session()?.entryIdOf(run.user) : undefined);

  // After a turn that changed something: snapshot what the agent left, and record the prompt's checkpoint.

  /**
   * The prompts on the active path, with their newest checkpoint record. A prompt whose run was killed before
   * its turn ended has no record in the session, but its "before" snapshot names it: that one is used.
   */
  const points = async (): Promise<RewindPoint[]> => {
    const s = session();
    if (!s)
      throw ctx.error(
        "CHECKPOINT_NO_SESSION",
        "/rewind needs the session-jsonl plugin (it keeps the conversation and which checkpoint belongs to which prompt)",
      );
    const path = s.path();
    const records = new Map<string, CheckpointRecord>();
    for (const e of path)
      if (
        e.type === "custom" &&
        e.customType === CHECKPOINT_ENTRY &&
        e.data &&
        typeof (e.data as CheckpointRecord).entry === "string"
      )
        records.set((e.data as CheckpointRecord).entry, e.data as CheckpointRecord);
    const out: RewindPoint[] = [];
    for (const e of path) {
      const message = userMessage(e);
      if (!message) continue;
      out.push({
        n: out.length + 1,
        entry: e.id,
        parentId: e.parentId,
        time: e.timestamp,
        prompt: textOf(message),
        record: records.get(e.id),
      });
    }
    if (out.some((p) => !p.record) && shadow().exists) {
      const orphans = new Map(
        (await shadow().list())
          .filter((c) => c.kind === "before" && c.session === s.id && c.entry)
          .map((c) => [c.entry!, c]),
      );
      for (const p of out) {
        const found = !p.record && orphans.get(p.entry);
        if (found)
          p.record = {
            entry: p.entry,
            before: found.commit,
            time: found.time,
            changed: {},
            large: [],
            ignored: [],
            unfinished: true,
          };
      }
    }
    return out;
  };

  const describeChanges = (r: CheckpointRecord | undefined): string => {
    if (!r) return "no file changes";
    if (r.unfinished) return "not recorded: coil stopped before the turn ended (the files from before it are kept)";
    const files = Object.entries(r.changed);
    if (!files.length) return "no file changes";
    const byWhat = new Map<string, string[]>();
    for (const [path, what] of files) byWhat.set(what, [...(byWhat.get(what) ?? []), path]);
    const parts = [...byWhat].map(
      ([what, paths]) =>
        `${what}: ${paths.slice(0, 8).join(", ")}${paths.length > 8 ? ` (+${paths.length - 8} more)` : ""}`,
    );
    return parts.join("; ");
  };

  const listing = async (): Promise<string> => {
    const all = await points();
    if (!all.length) return "No prompts yet: nothing to rewind.";
    const lines = ["Rewind points (the files and the conversation as they were just before each prompt):"];
    for (const p of all) {
      const time = new Date(p.time).toLocaleTimeString("en-GB", { hour12: false });
      lines.push(
        `  ${String(p.n).padStart(2)}  ${time}  "${short(p.prompt)}"`,
        `        changed after it: ${describeChanges(p.record)}`,
      );
      const skipped = [
        ...(p.record?.large ?? []).map((f) => `${f} (over ${o.maxFileSize} bytes)`),
        ...(p.record?.nested ?? []).map((f) => `${f}/ (a git repository of its own)`),
        ...(p.record?.ignored ?? []).slice(0, 5).map((f) => `${f} (ignored)`),
      ];
      if (skipped.length)
        lines.push(
          `        not in the checkpoint: ${skipped.join(", ")}${(p.record?.ignored.length ?? 0) > 5 ? ", …" : ""}`,
        );
    }
    lines.push(
      "",
      "/rewind <n> restores the files and the conversation; add --code or --conversation for one of them, --force to overwrite your own later edits.",
    );
    return lines.join("\n");
  };

  interface Plan {
    point: RewindPoint;
    /** Tree to restore, the current tree, and the changes between; undefined: the agent changed no files since. */
    target?: { tree: string; commit: string; current: string; changes: Change[]; conflicts: string[] };
  }

  /** What rewinding to point n would do to the files: the changes, and the files the user changed after the agent. */
  const plan = async (n: number, code: boolean): Promise<Plan> => {
    await pending;
    const all = await points();
    const point = all.find((p) => p.n === n);
    if (!point)
      throw ctx.error(
        "CHECKPOINT_UNKNOWN_POINT",
        `there is no point ${n}: ${all.length ? `points are 1 to ${all.length}` : "no prompts yet"}; /rewind lists them`,
      );
    if (!code) return { point };
    // The agent's spans from this point on: a prompt's checkpoints (files before, files it left), and code rewinds.
    const spans: { start?: string; end?: string; rewind?: boolean }[] = [];
    for (const e of session()!.path()) {
      if (userMessage(e)) {
        const p = all.find((q) => q.entry === e.id);
        if (p?.record && (spans.length || p.n >= n)) spans.push({ start: p.record.before, end: p.record.after });
      } else if (spans.length && e.type === "custom" && e.customType === REWIND_ENTRY) {
        const r = e.data as RewindRecord | undefined;
        if (r?.code) spans.push({ start: r.code.kept, end: r.code.restored, rewind: true });
      }
    }
    if (!spans.length) return { point };
    const repo = shadow();
    const tree = await repo.treeOf(spans[0]!.start!);
    if (!tree)
      throw ctx.error(
        "CHECKPOINT_PRUNED",
        `the checkpoint of point ${n} is gone from ${repo.gitDir} (pruned?); rewind the conversation only with /rewind ${n} --conversation`,
      );
    const { tree: current } = await repo.stage();
    const changes = await repo.diff(current, tree);
    // Your edits: what changed between the end of one span and the start of the next, and since the last one
    // (counted from the latest code rewind, which already overwrote what came before it).
    const edited = new Set<string>();
    const from = Math.max(
      0,
      spans.findLastIndex((x) => x.rewind),
    );
    for (let i = from; i < spans.length; i++) {
      const end = spans[i]!.end && (await repo.treeOf(spans[i]!.end!));
      const next = i + 1 < spans.length ? spans[i + 1]!.start && (await repo.treeOf(spans[i + 1]!.start!)) : current;
      if (end && next) for (const c of await repo.diff(end, next)) edited.add(c.path);
    }
    const conflicts = changes.map((c) => c.path).filter((p) => edited.has(p));
    return { point, target: { tree, commit: spans[0]!.start!, current, changes, conflicts } };
  };

  const apply = async (p: Plan, conversation: boolean): Promise<string> => {
    const lines: string[] = [];
    const repo = shadow();
    let code: RewindRecord["code"];
    if (p.target?.changes.length) {
      const keep = await repo.snapshot(
        { session: session()?.id ?? "", kind: "rewind", prompt: `before /rewind ${p.point.n}` },
        false,
      );
      await repo.restore(p.target.tree, p.target.changes);
      code = { kept: keep.commit, restored: p.target.commit };
      const verb = { A: "restored", D: "deleted", M: "restored" } as const;
      lines.push(`Files back to before prompt ${p.point.n}: ${p.target.changes.length} changed`);
      for (const c of p.target.changes.slice(0, 30)) lines.push(`  ${verb[c.status]} ${c.path}`);
      if (p.target.changes.length > 30) lines.push(`  … and ${p.target.changes.length - 30} more`);
      lines.push(`(the files as they were are kept as ${keep.ref} in ${repo.gitDir})`);
    } else if (p.target) lines.push(`Files: already as they were before prompt ${p.point.n}.`);
    else
      lines.push(
        `Files: no checkpoint at or after prompt ${p.point.n} (the agent changed no files since): nothing to restore.`,
      );
    const s = session()!;
    const from = s.path().at(-1)?.id ?? null;
    const record: RewindRecord = {
      point: p.point.n,
      entry: p.point.entry,
      from,
      conversation,
      ...(code ? { code } : {}),
    };
    if (!conversation) {
      if (code) s.appendCustom(REWIND_ENTRY, record);
    } else {
      await s.branch(p.point.parentId);
      // On the new branch: it makes it the leaf a later `-c` or /resume continues from.
      s.appendCustom(REWIND_ENTRY, record);
      lines.push(
        `Conversation: back to just before prompt ${p.point.n} ("${short(p.point.prompt)}"), as a new branch; /tree goes back to the old one.`,
      );
    }
    return lines.join("\n");
  };

  const conflictText = (conflicts: string[]) =>
    `You changed ${conflicts.length === 1 ? "this file" : "these files"} after the agent did; rewinding overwrites ${conflicts.length === 1 ? "it" : "them"}:\n${conflicts.map((c) => `  ${c}`).join("\n")}`;

  const rewind = async (args: string, agent: Agent): Promise<string> => {
    let opts: ReturnType<typeof parseRewindArgs>;
    try {
      opts = parseRewindArgs(args);
    } catch (error) {
      throw ctx.error("CHECKPOINT_USAGE", `/rewind: ${(error as Error).message}`);
    }
    const ui = mode === "interactive" ? ctx.services.get("ui") : undefined;
    if (opts.pick) return pick(agent);
    if (opts.point === undefined) {
      await pending;
      return await listing();
    }
    if (agent.isRunning)
      throw ctx.error("CHECKPOINT_BUSY", "a run is going: wait for it to end (or abort it), then /rewind");
    const p = await plan(opts.point, opts.code);
    if (p.target?.conflicts.length && !opts.force) {
      if (!ui)
        throw ctx.error(
          "CHECKPOINT_CONFLICT",
          `${conflictText(p.target.conflicts)}\nNothing was changed. Run /rewind ${opts.point}${opts.code && !opts.conversation ? " --code" : ""} --force to overwrite them.`,
        );
      if (!(await ui.confirm("Overwrite your changes?", conflictText(p.target.conflicts))))
        return "Rewind cancelled: nothing was changed.";
    }
    return apply(p, opts.conversation);
  };

  /** The TUI's picker (Esc Esc): choose a point and what to restore, see the diff, confirm. */
  const pick = async (agent: Agent): Promise<string> => {
    const ui = ctx.services.get("ui");
    if (!ui) return await listing();
    if (agent.isRunning) return "A run is going: wait for it to end (or press Esc), then rewind.";
    await pending;
    const all = await points();
    if (!all.length) return "No prompts yet: nothing to rewind.";
    const labels = [...all]
      .reverse()
      .map((p) => `${p.n}. "${short(p.prompt, 50)}" — ${short(describeChanges(p.record), 60)}`);
    const chosen = await ui.select("Rewind to just before which prompt?", labels);
    if (!chosen) return "";
    const n = Number(chosen.slice(0, chosen.indexOf(".")));
    const what = await ui.select(`Rewind to before prompt ${n}: restore what?`, [
      "Files and conversation",
      "Files only",
      "Conversation only",
    ]);
    if (!what) return "";
    const code = what !== "Conversation only";
    const conversation = what !== "Files only";
    const p = await plan(n, code);
    let preview = p.target
      ? p.target.changes.length
        ? await shadow().patch(p.target.current, p.target.tree)
        : "The files are already as they were."
      : code
        ? "The agent changed no files since this prompt."
        : "";
    const lines = preview.split("\n");
    if (lines.length > PREVIEW_LINES)
      preview = [...lines.slice(0, PREVIEW_LINES), `… ${lines.length - PREVIEW_LINES} more lines of diff`].join("\n");
    const warning = p.target?.conflicts.length ? `${conflictText(p.target.conflicts)}\n\n` : "";
    if (!(await ui.confirm(`Rewind to before prompt ${n} (${what.toLowerCase()})?`, `${warning}${preview}`)))
      return "Rewind cancelled: nothing was changed.";
    return apply(p, conversation);
  };

  return {
    /** At start-up: the mode says whether /rewind may ask. */
    start(mode_: string): void {
      mode = mode_;
    },
    /** A run starts: a fresh record of what it changes. */
    runStarted(): void {
      run = { byTool: new Map(), bash: false, dirty: false };
    },
    /** The run's prompt is its first user message. */
    message(message: AgentMessage): void {
      if (message.role === "user" && !run.user) run.user = message;
    },
    /** tool_call: before the prompt's first mutating call, snapshot the files (observe only). */
    async toolCall(info: ToolCallInfo): Promise<undefined> {
      if (!mutating(info)) return undefined;
      run.dirty = true;
      if (info.call.name === "bash") run.bash = true;
      else {
        const p = info.args.path ?? info.args.file_path;
        const rel = typeof p === "string" ? relPath(p) : undefined;
        if (rel) run.byTool.set(rel, info.call.name);
      }
      if (!run.before) {
        const prompt = short(run.user ? textOf(run.user) : "", 120);
        run.before = shadow()
          .snapshot({ session: session()?.id ?? "", entry: userEntry(), kind: "before", prompt })
          .then(
            (s) => s,
            (error: Error) => {
              if (/was not found on PATH/.test(error.message)) {
                if (!noGit) warn(`checkpoints: ${error.message}`);
                noGit = true;
              } else
                warn(`checkpoints: no checkpoint for this prompt, /rewind cannot restore its files: ${error.message}`);
              return undefined;
            },
          );
        pending = run.before;
      }
      await run.before;
      if (!pruned && !noGit) {
        pruned = true;
        pending = shadow()
          .prune({ maxAgeDays: o.maxAgeDays, maxCount: o.maxCount })
          .catch((error: Error) => warn(`checkpoints: pruning old checkpoints failed: ${error.message}`));
      }
      return undefined;
    },
    /** turn_end: after a turn that changed something, snapshot what the agent left and record the prompt's checkpoint. */
    async turnEnd(): Promise<void> {
      if (!run.dirty || !run.before) return;
      run.dirty = false;
      const before = await run.before;
      const entry = userEntry();
      if (!before) return;
      const work = (async () => {
        const repo = shadow();
        const after = await repo.snapshot({ session: session()?.id ?? "", entry, kind: "after" }, false);
        const changed: Record<string, string> = {};
        for (const c of await repo.diff(before.tree, after.tree))
          changed[c.path] = run.byTool.get(c.path) ?? (run.bash ? "bash" : "a tool");
        const record: CheckpointRecord = {
          entry: entry ?? "",
          before: before.commit,
          after: after.commit,
          time: Date.now(),
          changed,
          large: before.large,
          nested: before.nested,
          ignored: before.ignored,
        };
        if (entry) session()?.appendCustom(CHECKPOINT_ENTRY, record);
      })().catch((error: Error) => warn(`checkpoints: cannot record the files the agent left: ${error.message}`));
      pending = work;
      await work;
    },
    /** When coil stops: let the last snapshot finish. */
    async stop(): Promise<void> {
      await pending;
    },
    rewind,
  };
}

/** `coil checkpoints list [--json]`. */
export async function listCheckpoints(
  ctx: PluginContext<CheckpointOptions>,
  io: CliStreams,
  json: boolean,
): Promise<number> {
  const repo = new ShadowRepo(io.cwd, coilHome(io.env), ctx.options.maxFileSize);
  const rows = await repo.list();
  if (json) {
    io.stdout.write(`${JSON.stringify({ project: io.cwd, gitDir: repo.gitDir, checkpoints: rows }, null, 2)}\n`);
    return 0;
  }
  if (!rows.length) {
    io.stdout.write(`No checkpoints for ${io.cwd}.\n`);
    return 0;
  }
  io.stdout.write(`Checkpoints of ${io.cwd} (${repo.gitDir}):\n`);
  for (const r of rows)
    io.stdout.write(
      `${new Date(r.time).toISOString()}  ${r.kind.padEnd(6)}  session ${r.session.slice(0, 8) || "-"}  ${r.commit.slice(0, 10)}  ${r.prompt ? `"${short(r.prompt)}"` : ""}\n`,
    );
  return 0;
}

/** `coil checkpoints prune [--older-than <days>] [--keep <n>]`; unset, the plugin's maxAgeDays and maxCount. */
export async function pruneCheckpoints(
  ctx: PluginContext<CheckpointOptions>,
  io: CliStreams,
  olderThan: number | undefined,
  keep: number | undefined,
): Promise<number> {
  const o = ctx.options;
  for (const [flag, v] of [
    ["--older-than", olderThan],
    ["--keep", keep],
  ] as const)
    if (v !== undefined && v < 0) {
      io.stderr.write(`coil checkpoints prune: ${flag} needs a number of at least 0, got ${v}\n`);
      return 2;
    }
  const repo = new ShadowRepo(io.cwd, coilHome(io.env), o.maxFileSize);
  const maxAgeDays = olderThan ?? o.maxAgeDays;
  const maxCount = keep ?? o.maxCount;
  const gone = await repo.prune({ maxAgeDays, maxCount });
  io.stdout.write(
    `Pruned ${gone.length} checkpoint${gone.length === 1 ? "" : "s"} (older than ${maxAgeDays} days, or beyond the newest ${maxCount}).\n`,
  );
  return 0;
}
