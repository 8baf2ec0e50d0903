/**
 * plan-mode: `/plan` and `--plan` switch to read-only tools (read, grep, find, ls, and bash limited to
 * read-only commands); the model explores and writes a plan with `write_plan` to `.coil/plans/<time>.md`.
 * The user approves it through the ui service (or `/plan approve`); then all tools come back and the plan
 * stays in the context as a system block, re-read from its file each request, so ticked checkboxes
 * (`- [x]`) show progress; `/plan status` prints it. The mode and the approved plan are kept in the session
 * (a `plan-mode` custom entry on each change), so `-c`, `--session`, `/resume` and `/reload` come back to
 * them. See docs/safety.md.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { definePlugin, Stage, Type, type Static } from "../../kernel/index.js";
import type { SessionService } from "../session-jsonl/api.js";
import { notReadOnly, READ_ONLY_COMMANDS } from "../../lib/shell/read-only-commands.js";

export { notReadOnly, READ_ONLY_COMMANDS } from "../../lib/shell/read-only-commands.js";

export const PlanOptions = Type.Object({
  /** Where plans are written, relative to the working directory. */
  dir: Type.String({ default: ".coil/plans" }),
  /** Tools available in plan mode besides `bash` (limited) and `write_plan`. */
  /** `task` is here because a child goes through the same gates: in plan mode it is read-only too. */
  readOnlyTools: Type.Array(Type.String(), { default: ["read", "grep", "find", "ls", "task"] }),
  /** Programs a bash command may start with in plan mode. */
  readOnlyCommands: Type.Array(Type.String(), { default: READ_ONLY_COMMANDS }),
});
export type PlanOptions = Static<typeof PlanOptions>;

const PLAN_PROMPT = `You are in plan mode. Explore with the read-only tools (bash runs only read-only commands such as ls, cat, grep, git status/log/diff). Do not change anything. When you understand the task, call write_plan with a Markdown plan: a short goal, then the steps as checkboxes ("- [ ] step"), naming files and how you will verify the result. The user reviews it; once approved, all tools come back and you carry it out.`;

/** The session entry type that holds plan mode's state. */
export const PLAN_STATE_ENTRY = "plan-mode";

/** What plan mode keeps in the session (absolute plan file paths). */
export interface PlanState {
  active: boolean;
  file?: string;
  approved?: string;
}

/** The newest plan state on the session's active path, if any (undefined: no session open, or none recorded). */
function recordedState(session: SessionService | undefined): PlanState | null | undefined {
  let path;
  try {
    path = session?.path();
  } catch {
    return undefined; // the session is not open yet
  }
  if (!path) return undefined;
  const entry = [...path].reverse().find((e) => e.type === "custom" && e.customType === PLAN_STATE_ENTRY);
  const data = (entry?.type === "custom" ? entry.data : undefined) as Partial<PlanState> | undefined;
  if (!data || typeof data !== "object") return null;
  const str = (v: unknown) => (typeof v === "string" && v ? v : undefined);
  return { active: data.active === true, file: str(data.file), approved: str(data.approved) };
}

/** Checkbox progress of a plan's Markdown. */
export function progress(markdown: string): { done: number; total: number } {
  const boxes = [...markdown.matchAll(/^\s*[-*] \[([ xX])\]/gm)];
  return { done: boxes.filter((m) => m[1] !== " ").length, total: boxes.length };
}

export default definePlugin({
  id: "plan-mode",
  description: "Plan mode: read-only exploration, a plan file, approval, then execution with progress",
  options: PlanOptions,
  setup(ctx) {
    const o = ctx.options;
    const plansDir = resolve(ctx.cwd, o.dir);
    const state: PlanState & { lastDone?: number } = { active: false };
    const session = () => ctx.services.get("session");
    // The session holds the state: the newest `plan-mode` entry on its active path. `unsaved` is a change
    // not written yet (--plan at start-up waits for the first request, so a run that never starts leaves no session).
    let unsaved = false;
    let written = "";
    const snapshot = (): PlanState => ({ active: state.active, ...(state.file ? { file: state.file } : {}), ...(state.approved ? { approved: state.approved } : {}) });
    const save = () => {
      const data = snapshot();
      const text = JSON.stringify(data);
      unsaved = false;
      if (text === written) return;
      const s = session();
      if (!s) return;
      try {
        s.appendCustom(PLAN_STATE_ENTRY, data);
        written = text;
      } catch {
        unsaved = true; // not open yet: written with the next request
      }
    };
    /** Follow the session (resumed, switched, or moved to another branch); a pending change is written instead. */
    const sync = () => {
      if (unsaved) return save();
      const recorded = recordedState(session());
      if (recorded === undefined) return;
      const next = recorded ?? { active: false };
      written = recorded ? JSON.stringify(recorded) : "";
      if (next.approved !== state.approved) state.lastDone = next.approved ? progress(readPlan(next.approved) ?? "").done : undefined;
      state.active = next.active;
      state.file = next.file;
      state.approved = next.approved;
    };
    const rel = (f: string) => (relative(ctx.cwd, f).startsWith("..") ? f : relative(ctx.cwd, f));
    const allowedInPlan = (name: string) => name === "write_plan" || name === "bash" || o.readOnlyTools.includes(name) || ctx.tools.get(name)?.readOnly === true;
    const readPlan = (file: string) => {
      try {
        return readFileSync(file, "utf8");
      } catch {
        return undefined;
      }
    };
    const latestPlan = () => {
      try {
        const names = readdirSync(plansDir).filter((n) => n.endsWith(".md")).sort();
        return names.length ? join(plansDir, names.at(-1)!) : undefined;
      } catch {
        return undefined;
      }
    };
    const enter = () => {
      state.active = true;
      state.file = undefined;
    };
    const approve = (file: string) => {
      state.active = false;
      state.approved = file;
      state.lastDone = progress(readPlan(file) ?? "").done;
      save();
    };
    const status = (): string => {
      const file = state.approved ?? state.file ?? latestPlan();
      const head = state.active ? "plan mode: on (read-only tools)" : "plan mode: off";
      if (!file) return `${head}\nno plan yet`;
      const text = readPlan(file) ?? "";
      const p = progress(text);
      const steps = text.split("\n").filter((l) => /^\s*[-*] \[[ xX]\]/.test(l));
      const label = file === state.approved ? "approved plan" : "plan (not approved)";
      return [head, `${label}: ${rel(file)} — ${p.done} of ${p.total} steps done`, ...steps].join("\n");
    };

    ctx.flags.register({ name: "plan", description: "start in plan mode: read-only tools until you approve a plan", type: "boolean" });
    ctx.onStart(() => {
      sync();
      if (ctx.flags.get("plan") === true && !state.active) {
        enter();
        unsaved = true;
      }
    });
    // A change not written yet is kept when coil stops with a session on disk (e.g. /reload).
    ctx.onStop(() => {
      const file = unsaved ? session()?.file : undefined;
      if (file && existsSync(file)) save();
    });

    ctx.tools.register({
      name: "write_plan",
      label: "Write plan",
      description: `Plan mode only: save your plan (Markdown, steps as "- [ ] ..." checkboxes) to ${o.dir}/ and ask the user to approve it. Calling it again replaces the plan. After approval all tools are available.`,
      parameters: Type.Object({ plan: Type.String({ minLength: 1, description: "The plan in Markdown" }) }),
      executionMode: "sequential",
      async execute(args, run) {
        if (!state.active) throw new Error("write_plan works only in plan mode (the user turns it on with /plan)");
        state.file ??= join(plansDir, `${new Date().toISOString().replace(/[:.]/g, "-")}.md`);
        mkdirSync(plansDir, { recursive: true });
        writeFileSync(state.file, args.plan.endsWith("\n") ? args.plan : `${args.plan}\n`);
        save();
        const where = rel(state.file);
        const ui = ctx.services.get("ui");
        if (!ui) {
          return {
            content: [{ type: "text", text: `Plan saved to ${where}. It is not approved: no one can approve in print mode, so plan mode stays on and nothing may be changed. Finish by telling the user the plan is in ${where}; they can approve it with /plan approve.` }],
            details: { file: state.file, approved: false },
          };
        }
        const p = progress(args.plan);
        const ok = await ui.confirm(`Approve this plan? (${where}, ${p.total} steps)`, args.plan, run.signal);
        if (!ok) {
          const feedback = (await ui.input("What should change in the plan?", "leave empty to just keep planning", run.signal))?.trim();
          return {
            content: [{ type: "text", text: `The user did not approve the plan; plan mode stays on.${feedback ? ` Their feedback: ${feedback}` : " Ask what to change, or revise it."}` }],
            details: { file: state.file, approved: false },
          };
        }
        approve(state.file);
        ui.notify(`plan approved: ${where}`, "info");
        return {
          content: [{ type: "text", text: `The user approved the plan (${where}). Plan mode is off and all tools are available. Carry out the plan step by step; after finishing a step, mark it done in ${where} ("- [x]") with the edit tool.` }],
          details: { file: state.file, approved: true },
        };
      },
    });

    // The model sees only the plan-mode tools while planning, and the approved plan while executing.
    ctx.tap("before_request", (request) => {
      sync();
      if (state.active) {
        return { ...request, tools: request.tools.filter((t) => allowedInPlan(t.name)), system: [...request.system, { id: "plan-mode", text: PLAN_PROMPT }] };
      }
      const tools = request.tools.filter((t) => t.name !== "write_plan");
      const text = state.approved && readPlan(state.approved);
      if (!text) return { ...request, tools };
      const p = progress(text);
      const block = { id: "plan", text: `The user approved this plan (${rel(state.approved!)}; ${p.done} of ${p.total} steps done). Follow it, and mark each step done in the file ("- [x]") when it is finished:\n\n${text}` };
      return { ...request, tools, system: [...request.system, block] };
    });

    // Defence in depth: a call the model should not have made is refused.
    ctx.tap(
      "tool_call",
      (info) => {
        const name = info.call.name;
        if (!state.active) return name === "write_plan" ? { block: true, reason: "write_plan works only in plan mode" } : undefined;
        if (!allowedInPlan(name)) return { block: true, reason: `plan mode is read-only: ${name} is not available until the user approves a plan (write it with write_plan)` };
        if (name !== "bash") return undefined;
        const why = notReadOnly(String(info.args.command ?? ""), o.readOnlyCommands);
        return why ? { block: true, reason: `plan mode allows only read-only bash commands: ${why}` } : undefined;
      },
      { stage: Stage.GUARD },
    );

    ctx.tap("turn_end", () => {
      if (!state.approved) return;
      const p = progress(readPlan(state.approved) ?? "");
      if (p.done === state.lastDone) return;
      state.lastDone = p.done;
      const line = `plan progress: ${p.done} of ${p.total} steps done`;
      ctx.services.get("ui")?.notify(line, "info");
      ctx.log.info(line);
    });

    ctx.commands.register({
      name: "plan",
      description: "plan mode: `/plan [task]` turns it on, `/plan status`, `/plan approve [file]`, `/plan off`",
      argumentHint: "[task | status | approve [file] | off]",
      run(args) {
        sync();
        const [word = "", ...rest] = args.trim().split(/\s+/);
        if (word === "status") return status();
        if (word === "off") {
          state.active = false;
          save();
          return "plan mode: off (all tools available)";
        }
        if (word === "approve") {
          const given = rest.join(" ");
          const file = given ? (isAbsolute(given) ? given : resolve(ctx.cwd, given)) : (state.file ?? latestPlan());
          const text = file && readPlan(file);
          if (!file || !text) return given ? `no plan at ${given}` : `no plan to approve in ${rel(plansDir)}`;
          approve(file);
          return { prompt: `I approve the plan in ${rel(file)}. Carry it out step by step, marking each step done in the file ("- [x]") as you finish it.` };
        }
        enter();
        save();
        if (args.trim()) return { prompt: args.trim() };
        return "plan mode: on. Tools are read-only until you approve a plan; describe the task.";
      },
    });
  },
});
