/**
 * Plan mode's state and behaviour: whether it is on, the plan being written and the approved one, kept
 * in the session (a `plan-mode` custom entry on each change), and what each hook and command does with
 * them. The plugin's setup (index.ts) only registers these methods.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import type {
  ModelRequest,
  PluginContext,
  SlashResult,
  ToolCallInfo,
  ToolOutput,
  ToolRunContext,
} from "../../api/index.js";
import type { SessionEntry, SessionService } from "../session-jsonl/api.js";
import { notReadOnly } from "../../lib/shell/read-only-commands.js";
import type { PlanOptions } from "./index.js";

/** The session entry type that holds plan mode's state. */
export const PLAN_STATE_ENTRY = "plan-mode";

/** What plan mode keeps in the session (absolute plan file paths). */
export interface PlanState {
  active: boolean;
  file?: string;
  approved?: string;
}

/** Checkbox progress of a plan's Markdown. */
export function progress(markdown: string): { done: number; total: number } {
  const boxes = [...markdown.matchAll(/^\s*[-*] \[([ xX])\]/gm)];
  return { done: boxes.filter((m) => m[1] !== " ").length, total: boxes.length };
}

const PLAN_PROMPT = `You are in plan mode. Explore with the read-only tools (bash runs only read-only commands such as ls, cat, grep, git status/log/diff). Do not change anything. When you understand the task, call write_plan with a Markdown plan: a short goal, then the steps as checkboxes ("- [ ] step"), naming files and how you will verify the result. The user reviews it; once approved, all tools come back and you carry it out.`;

/** The newest plan state on the session's active path, if any (undefined: no session open, or none recorded). */
function recordedState(session: SessionService | undefined): PlanState | null | undefined {
  let path: readonly SessionEntry[] | undefined;
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

export class PlanMode {
  private readonly state: PlanState & { lastDone?: number } = { active: false };
  readonly plansDir: string;
  // The session holds the state: the newest `plan-mode` entry on its active path. `unsaved` is a change
  // not written yet (--plan at start-up waits for the first request, so a run that never starts leaves no session).
  private unsaved = false;
  private written = "";

  constructor(private readonly ctx: PluginContext<PlanOptions>) {
    this.plansDir = resolve(ctx.cwd, ctx.options.dir);
  }

  private session() {
    return this.ctx.services.get("session");
  }

  private snapshot(): PlanState {
    const { state } = this;
    return {
      active: state.active,
      ...(state.file ? { file: state.file } : {}),
      ...(state.approved ? { approved: state.approved } : {}),
    };
  }

  private save(): void {
    const data = this.snapshot();
    const text = JSON.stringify(data);
    this.unsaved = false;
    if (text === this.written) return;
    const s = this.session();
    if (!s) return;
    try {
      s.appendCustom(PLAN_STATE_ENTRY, data);
      this.written = text;
    } catch {
      this.unsaved = true; // not open yet: written with the next request
    }
  }

  /** Follow the session (resumed, switched, or moved to another branch); a pending change is written instead. */
  private sync(): void {
    if (this.unsaved) {
      this.save();
      return;
    }
    const recorded = recordedState(this.session());
    if (recorded === undefined) return;
    const next = recorded ?? { active: false };
    const { state } = this;
    this.written = recorded ? JSON.stringify(recorded) : "";
    if (next.approved !== state.approved)
      state.lastDone = next.approved ? progress(readPlan(next.approved) ?? "").done : undefined;
    state.active = next.active;
    state.file = next.file;
    state.approved = next.approved;
  }

  private rel(f: string): string {
    return relative(this.ctx.cwd, f).startsWith("..") ? f : relative(this.ctx.cwd, f);
  }

  private allowedInPlan(name: string): boolean {
    return (
      name === "write_plan" ||
      name === "bash" ||
      this.ctx.options.readOnlyTools.includes(name) ||
      this.ctx.tools.get(name)?.readOnly === true
    );
  }

  private latestPlan(): string | undefined {
    try {
      const names = readdirSync(this.plansDir)
        .filter((n) => n.endsWith(".md"))
        .sort();
      return names.length ? join(this.plansDir, names.at(-1)!) : undefined;
    } catch {
      return undefined;
    }
  }

  private enter(): void {
    this.state.active = true;
    this.state.file = undefined;
  }

  private approve(file: string): void {
    this.state.active = false;
    this.state.approved = file;
    this.state.lastDone = progress(readPlan(file) ?? "").done;
    this.save();
  }

  private status(): string {
    const { state } = this;
    const file = state.approved ?? state.file ?? this.latestPlan();
    const head = state.active ? "plan mode: on (read-only tools)" : "plan mode: off";
    if (!file) return `${head}\nno plan yet`;
    const text = readPlan(file) ?? "";
    const p = progress(text);
    const steps = text.split("\n").filter((l) => /^\s*[-*] \[[ xX]\]/.test(l));
    const label = file === state.approved ? "approved plan" : "plan (not approved)";
    return [head, `${label}: ${this.rel(file)} — ${p.done} of ${p.total} steps done`, ...steps].join("\n");
  }

  /** At start-up: follow the session, and `--plan` turns plan mode on (written with the first request). */
  start(): void {
    this.sync();
    if (this.ctx.flags.get("plan") === true && !this.state.active) {
      this.enter();
      this.unsaved = true;
    }
  }

  /** A change not written yet is kept when coil stops with a session on disk (e.g. /reload). */
  stop(): void {
    const file = this.unsaved ? this.session()?.file : undefined;
    if (file && existsSync(file)) this.save();
  }

  /** The `write_plan` tool: save the plan and ask the user to approve it. */
  async writePlan(
    args: { plan: string },
    run: ToolRunContext,
  ): Promise<ToolOutput<{ file: string; approved: boolean }>> {
    const { state, ctx } = this;
    if (!state.active) throw new Error("write_plan works only in plan mode (the user turns it on with /plan)");
    state.file ??= join(this.plansDir, `${new Date().toISOString().replace(/[:.]/g, "-")}.md`);
    mkdirSync(this.plansDir, { recursive: true });
    writeFileSync(state.file, args.plan.endsWith("\n") ? args.plan : `${args.plan}\n`);
    this.save();
    const where = this.rel(state.file);
    const ui = ctx.services.get("ui");
    if (!ui) {
      return {
        content: [
          {
            type: "text",
            text: `Plan saved to ${where}. It is not approved: no one can approve in print mode, so plan mode stays on and nothing may be changed. Finish by telling the user the plan is in ${where}; they can approve it with /plan approve.`,
          },
        ],
        details: { file: state.file, approved: false },
      };
    }
    const p = progress(args.plan);
    const ok = await ui.confirm(`Approve this plan? (${where}, ${p.total} steps)`, args.plan, run.signal);
    if (!ok) {
      const feedback = (
        await ui.input("What should change in the plan?", "leave empty to just keep planning", run.signal)
      )?.trim();
      return {
        content: [
          {
            type: "text",
            text: `The user did not approve the plan; plan mode stays on.${feedback ? ` Their feedback: ${feedback}` : " Ask what to change, or revise it."}`,
          },
        ],
        details: { file: state.file, approved: false },
      };
    }
    this.approve(state.file);
    ui.notify(`plan approved: ${where}`, "info");
    return {
      content: [
        {
          type: "text",
          text: `The user approved the plan (${where}). Plan mode is off and all tools are available. Carry out the plan step by step; after finishing a step, mark it done in ${where} ("- [x]") with the edit tool.`,
        },
      ],
      details: { file: state.file, approved: true },
    };
  }

  /** before_request: only the plan-mode tools while planning, and the approved plan while executing. */
  request(request: ModelRequest): ModelRequest {
    this.sync();
    const { state } = this;
    if (state.active) {
      return {
        ...request,
        tools: request.tools.filter((t) => this.allowedInPlan(t.name)),
        system: [...request.system, { id: "plan-mode", text: PLAN_PROMPT }],
      };
    }
    const tools = request.tools.filter((t) => t.name !== "write_plan");
    const text = state.approved && readPlan(state.approved);
    if (!text) return { ...request, tools };
    const p = progress(text);
    const block = {
      id: "plan",
      text: `The user approved this plan (${this.rel(state.approved!)}; ${p.done} of ${p.total} steps done). Follow it, and mark each step done in the file ("- [x]") when it is finished:\n\n${text}`,
    };
    return { ...request, tools, system: [...request.system, block] };
  }

  /** tool_call, defence in depth: a call the model should not have made is refused. */
  gate(info: ToolCallInfo): { block: true; reason: string } | undefined {
    const name = info.call.name;
    if (!this.state.active)
      return name === "write_plan" ? { block: true, reason: "write_plan works only in plan mode" } : undefined;
    if (!this.allowedInPlan(name))
      return {
        block: true,
        reason: `plan mode is read-only: ${name} is not available until the user approves a plan (write it with write_plan)`,
      };
    if (name !== "bash") return undefined;
    const why = notReadOnly(String(info.args.command ?? ""), this.ctx.options.readOnlyCommands);
    return why ? { block: true, reason: `plan mode allows only read-only bash commands: ${why}` } : undefined;
  }

  /** turn_end: report progress when the approved plan's ticked steps changed. */
  turnEnd(): void {
    const { state } = this;
    if (!state.approved) return;
    const p = progress(readPlan(state.approved) ?? "");
    if (p.done === state.lastDone) return;
    state.lastDone = p.done;
    const line = `plan progress: ${p.done} of ${p.total} steps done`;
    this.ctx.services.get("ui")?.notify(line, "info");
    this.ctx.log.info(line);
  }

  /** `/plan [task | status | approve [file] | off]`. */
  command(args: string): SlashResult {
    this.sync();
    const { state, ctx } = this;
    const [word = "", ...rest] = args.trim().split(/\s+/);
    if (word === "status") return this.status();
    if (word === "off") {
      state.active = false;
      this.save();
      return "plan mode: off (all tools available)";
    }
    if (word === "approve") {
      const given = rest.join(" ");
      const file = given ? (isAbsolute(given) ? given : resolve(ctx.cwd, given)) : (state.file ?? this.latestPlan());
      const text = file && readPlan(file);
      if (!file || !text) return given ? `no plan at ${given}` : `no plan to approve in ${this.rel(this.plansDir)}`;
      this.approve(file);
      return {
        prompt: `I approve the plan in ${this.rel(file)}. Carry it out step by step, marking each step done in the file ("- [x]") as you finish it.`,
      };
    }
    this.enter();
    this.save();
    if (args.trim()) return { prompt: args.trim() };
    return "plan mode: on. Tools are read-only until you approve a plan; describe the task.";
  }
}

function readPlan(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
