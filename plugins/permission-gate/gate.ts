/**
 * The gate's decisions at run time: the compiled rules and policy, asking through the `ui` service,
 * remembered answers restored from the session, and `/permissions`. The plugin's setup only registers
 * these methods.
 */
import { statSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { resolve } from "node:path";
import type { PluginContext, SlashResult, ToolCallInfo, ToolResult, ToolRewrite } from "../../api/index.js";
import type {} from "../session-jsonl/api.js"; // types the `session` service
import type {} from "../tools-coding/api.js"; // types the `operations` service
import type { PermissionAnswer } from "../hooks-claude/api.js"; // and the `claude-hooks` service
import { expandPath, resolveTypedPath } from "../../lib/typed-path.js";
import type { GateOptions } from "./index.js";
import { MODES, Policy, type Mode } from "./policy.js";
import { withholdResults } from "./results.js";
import { expandHome, parseRule, READING_TOOLS, realPathOf, subjectOf, type Rule, type Subject } from "./rules.js";
import { Territory } from "./territory.js";
import { claudePermissions, type ClaudePermissions } from "./claude.js";
import { claudeSettingsFiles } from "../../lib/claude-settings.js";
import { locationsOf } from "../../lib/locations.js";

interface Recorded {
  tool: string;
  items: string[];
  decision: "allow" | "deny";
  by: "rule" | "mode" | "user" | "no-ui" | "hook";
  scope?: "once" | "session";
  rule?: string;
  message?: string;
}

const CHOICES = ["Allow once", "Allow for this session", "Deny", "Deny and tell the model why"] as const;

const describe = (tool: string, subject: Subject, items: (string | undefined)[]) =>
  subject.kind === "commands"
    ? `bash: ${items.join(" ; ")}`
    : subject.kind === "path"
      ? `${tool} ${subject.rel ?? subject.abs}`
      : tool;

export class Gate {
  private readonly rules: { deny: Rule[]; ask: Rule[]; allow: Rule[] };
  private readonly policy: Policy;
  private readonly territory: Territory;
  private readonly claude: ClaudePermissions | undefined;
  /** Where the mode came from (for /permissions). */
  private modeFrom: string;
  /** Claude Code's `dontAsk`: what would ask is refused. */
  private refuseAsks: boolean;
  /** The session the remembered answers belong to: another session (/new, /resume, an editor's session) starts afresh. */
  private restoredFor: string | undefined;
  /** PermissionRequest hooks' answers from the rewrite step, by call id, with the arguments they were given. */
  private readonly hookAnswers = new Map<string, { seen: string; answer: PermissionAnswer }>();

  constructor(private readonly ctx: PluginContext<GateOptions>) {
    const o = ctx.options;
    const home = locationsOf(ctx).coilHome;
    const compile = (list: string[], name: string): Rule[] =>
      list.map((text) => {
        try {
          return parseRule(text, home);
        } catch (e) {
          throw ctx.error("CONFIG_INVALID", `${name}: ${(e as Error).message}`);
        }
      });
    this.rules = { deny: compile(o.deny, "deny"), ask: compile(o.ask, "ask"), allow: compile(o.allow, "allow") };
    // Claude Code's permissions join the preset's rules (deny wins whatever the list order).
    this.claude = o.claudeSettings
      ? claudePermissions(claudeSettingsFiles(ctx.cwd), locationsOf(ctx).projectRoot, ctx.projectTrusted)
      : undefined;
    if (this.claude)
      for (const list of ["deny", "ask", "allow"] as const) this.rules[list].push(...this.claude.rules[list]);
    this.territory = new Territory(ctx.cwd, [
      ...o.directories.map((d) => resolve(ctx.baseDir, expandHome(d))),
      ...(this.claude?.directories.map((d) => expandHome(d.path)) ?? []),
    ]);
    this.policy = new Policy(
      {
        rules: this.rules,
        readOnlyTools: o.readOnlyTools,
        readOnlyCommands: o.readOnlyCommands,
        territory: this.territory,
      },
      (this.claude?.mode?.mode ?? o.mode) as Mode,
    );
    this.modeFrom = this.claude?.mode ? `defaultMode in ${this.claude.mode.file}` : "the preset";
    this.refuseAsks = this.claude?.mode?.refuseAsks === true;
  }

  /** Said once per run: Claude Code rules coil cannot apply, and what an untrusted project's files asked for. */
  announce(): void {
    const c = this.claude;
    if (!c) return;
    for (const p of c.problems) this.ctx.log.warn(p);
    if (c.skipped.length)
      this.ctx.log.warn(
        `the project's Claude Code settings ask for ${c.skipped.join(", ")}; not applied: the project is not trusted (coil trust ${locationsOf(this.ctx).projectRoot}). Its deny and ask rules apply.`,
      );
  }

  /** `--permission-mode`, read at start-up. */
  applyFlag(): void {
    const flag = this.ctx.flags.get("permission-mode");
    if (flag === undefined) return;
    if (!MODES.includes(flag as Mode))
      throw this.ctx.error("CONFIG_INVALID", `--permission-mode must be one of ${MODES.join(", ")}, got '${flag}'`);
    this.policy.mode = flag as Mode;
    this.modeFrom = "--permission-mode";
    this.refuseAsks = false;
  }

  private record(entry: Recorded): void {
    const s = this.ctx.services.get("session");
    if (!s) return;
    try {
      s.appendCustom("permission-gate", { ...entry, mode: this.policy.mode });
    } catch (e) {
      this.ctx.log.warn(`could not record the decision in the session: ${(e as Error).message}`);
    }
  }

  private restore(): void {
    const s = this.ctx.services.get("session");
    if (!s || this.restoredFor === (s.id ?? "")) return;
    if (this.restoredFor !== undefined) this.policy.remembered.clear();
    this.restoredFor = s.id ?? "";
    try {
      for (const e of s.entries()) {
        if (e.type !== "custom" || e.customType !== "permission-gate") continue;
        const d = e.data as Recorded | undefined;
        if (d?.decision === "allow" && d.scope === "session") {
          for (const item of d.items.length ? d.items : [undefined]) this.policy.remember(d.tool, item);
        }
      }
    } catch {
      this.restoredFor = undefined; // the session is not open yet
    }
  }

  /** The rules' and the mode's verdict on a call's arguments. */
  private async verdict(info: ToolCallInfo) {
    const tool = info.call.name;
    let subject = subjectOf(tool, info.args, this.ctx.cwd);
    // Judge the file the tool will reach: tools take `@.env` or an NFD / curly-quote spelling as the existing file.
    const typed =
      typeof info.args.path === "string"
        ? info.args.path
        : typeof info.args.file_path === "string"
          ? info.args.file_path
          : undefined;
    if (subject.kind === "path" && typed !== undefined) {
      const fs = this.ctx.services.get("operations") ?? {};
      // The local stat is synchronous: one call, not a round trip through libuv's thread pool per tool call.
      const reached = await resolveTypedPath(typed, this.ctx.cwd, {
        stat: fs.stat?.bind(fs) ?? (async (path: string) => statSync(path)),
        readdir: fs.readdir?.bind(fs) ?? ((dir: string) => readdir(dir, { withFileTypes: true })),
      });
      if (reached !== expandPath(typed, this.ctx.cwd)) subject = subjectOf(tool, { path: reached }, this.ctx.cwd);
    }
    return { tool, subject, ...this.policy.decide(tool, subject) };
  }

  /**
   * tool_call's rewrite step (last of the rewrites): a call the rules would ask about goes to Claude Code
   * PermissionRequest hooks first, whose `allow` may carry new arguments (`updatedInput`). The answer is
   * used by the gate step (`check`) if the arguments are still the ones the hooks saw.
   */
  async rewrite(info: ToolCallInfo): Promise<ToolRewrite | undefined> {
    const hooks = this.ctx.services.get("claude-hooks");
    if (!hooks) return undefined;
    this.restore();
    const { worst } = await this.verdict(info);
    if (worst.verdict !== "ask") return undefined;
    const answer = await hooks.permissionRequest(info, worst.why);
    if (!answer) return undefined;
    // A call a gate before this one blocks never reaches `check`: keep only the latest answers.
    if (this.hookAnswers.size >= 64) this.hookAnswers.delete(this.hookAnswers.keys().next().value!);
    this.hookAnswers.set(info.call.id, { seen: JSON.stringify(info.args), answer });
    return answer.behavior === "allow" && answer.args ? { args: answer.args } : undefined;
  }

  /** The PermissionRequest hooks' answer for the arguments that will run: the rewrite step's, or asked now. */
  private async hookAnswer(info: ToolCallInfo, why: string): Promise<PermissionAnswer | undefined> {
    const kept = this.hookAnswers.get(info.call.id);
    this.hookAnswers.delete(info.call.id);
    if (kept && (kept.seen === JSON.stringify(info.args) || info.rewrittenBy?.at(-1) === this.ctx.id))
      return kept.answer;
    const answer = await this.ctx.services.get("claude-hooks")?.permissionRequest(info, why);
    if (answer?.behavior !== "allow" || !answer.args || JSON.stringify(answer.args) === JSON.stringify(info.args))
      return answer;
    const message = `it would change the arguments after ${info.rewrittenBy?.join(", ")} rewrote them`;
    return { behavior: "deny", message };
  }

  /** tool_call's gate step: allow (undefined), deny with the reason, or ask the user, on the final arguments. */
  async check(info: ToolCallInfo): Promise<{ block: true; reason: string } | undefined> {
    this.restore();
    const { tool, subject, worst, asking } = await this.verdict(info);
    const items = asking.map((v) => v.item).filter((i): i is string => i !== undefined);
    if (worst.verdict === "allow") return undefined;
    if (worst.verdict === "deny") {
      const what = worst.item ? `\`${worst.item}\`` : tool;
      this.record({
        tool,
        items: worst.item ? [worst.item] : [],
        decision: "deny",
        by: worst.rule ? "rule" : "mode",
        rule: worst.rule,
      });
      return {
        block: true,
        reason: `${what} is not allowed: ${worst.why}. Do not retry it; find another way or ask the user.`,
      };
    }
    const what = describe(
      tool,
      subject,
      asking.map((v) => v.item),
    );
    // Claude Code PermissionRequest hooks may answer before anyone is asked.
    const hooks = this.ctx.services.get("claude-hooks");
    const hooked = hooks && (await this.hookAnswer(info, worst.why));
    if (hooked)
      this.record({
        tool,
        items,
        decision: hooked.behavior,
        by: "hook",
        rule: worst.rule,
        message: hooked.behavior === "deny" ? hooked.message : undefined,
      });
    if (hooked?.behavior === "allow") return undefined; // with its `updatedInput`, applied in the rewrite step
    if (hooked?.behavior === "deny")
      return {
        block: true,
        reason: `a PermissionRequest hook denied ${what}${hooked.message ? `: ${hooked.message}` : ""}`,
      };
    const ui = this.refuseAsks ? undefined : this.ctx.services.get("ui");
    if (!ui) {
      this.record({ tool, items, decision: "deny", by: "no-ui", rule: worst.rule });
      const suggest =
        tool === "bash"
          ? `bash(${items[0] ?? ""})`
          : subject.kind === "path"
            ? `${tool}(${subject.rel ?? subject.abs})`
            : tool;
      if (this.refuseAsks) {
        this.ctx.log.warn(`blocked ${what}: it needs approval and ${this.modeFrom} is dontAsk (${worst.why})`);
        return {
          block: true,
          reason: `${what} needs approval (${worst.why}), and Claude Code's dontAsk mode (${this.modeFrom}) refuses what is not allowed by a rule; it was not run. Continue without it, or tell the user it needs an allow rule such as ${suggest}.`,
        };
      }
      this.ctx.log.warn(`blocked ${what}: it needs approval and there is no UI to ask (${worst.why})`);
      return {
        block: true,
        reason: `${what} needs approval (${worst.why}), and no one can approve in print mode; it was not run. Continue without it, or tell the user it needs an allow rule such as ${suggest} in the permission-gate options, --permission-mode yolo for the run, or an interactive session.`,
      };
    }
    hooks?.notify(`coil needs your permission: ${what}`, "permission_prompt");
    const choice = await ui.select(`Allow ${what}? (${worst.why})`, CHOICES, info.signal);
    if (choice === CHOICES[0] || choice === CHOICES[1]) {
      const scope = choice === CHOICES[1] ? "session" : "once";
      if (scope === "session") for (const v of asking) this.policy.remember(tool, v.item);
      this.record({ tool, items, decision: "allow", by: "user", scope, rule: worst.rule });
      return undefined;
    }
    const message =
      choice === CHOICES[3]
        ? (await ui.input("Message to the model", "why not, or what to do instead", info.signal))?.trim()
        : undefined;
    this.record({ tool, items, decision: "deny", by: "user", rule: worst.rule, message: message || undefined });
    return {
      block: true,
      reason: `the user denied ${what}${message ? `: ${message}` : ". Do not retry it; ask the user what to do instead"}`,
    };
  }

  /** tool_result: grep, find and ls read what they return; results a deny or ask rule covers are withheld. */
  withhold(result: ToolResult, info: ToolCallInfo): ToolResult | undefined {
    if (!READING_TOOLS.includes(info.call.name) || result.isError) return undefined;
    const covered = (path: string) =>
      this.policy.covering(info.call.name, subjectOf(info.call.name, { path }, this.ctx.cwd));
    return withholdResults(result, info.call.name, info.args, this.ctx.cwd, covered);
  }

  /** The `permissions` service: the deny rule covering a read of `path`. */
  readDenied(path: string): string | undefined {
    return this.policy.denying("read", subjectOf("read", { path }, this.ctx.cwd));
  }

  /** The `permissions` service: whether `path` (its real path) is inside the project. */
  inProject(path: string): boolean {
    return this.territory.inside(realPathOf(resolve(this.ctx.cwd, expandHome(path))));
  }

  /** `coil doctor`: the mode and where it came from, the rules by source, Claude Code's rules as mapped, what is inside. */
  doctor(): string {
    const lines = [
      `mode: ${this.policy.mode} (from ${this.modeFrom}${this.refuseAsks ? "; dontAsk: what would ask is refused" : ""})`,
    ];
    const own = (l: Rule[]) =>
      l.filter(
        (r) =>
          !this.claude?.rules.deny.includes(r) &&
          !this.claude?.rules.ask.includes(r) &&
          !this.claude?.rules.allow.includes(r),
      ).length;
    lines.push(
      `preset rules: deny ${own(this.rules.deny)}, ask ${own(this.rules.ask)}, allow ${own(this.rules.allow)} (/permissions lists them)`,
    );
    lines.push(`inside the project: ${this.territory.roots.join(", ")}`);
    if (!this.claude) lines.push("Claude Code permissions: not read (claudeSettings: false)");
    else {
      const files = claudeSettingsFiles(this.ctx.cwd);
      lines.push("Claude Code permissions:");
      for (const f of files) {
        const rules = this.claude.mapped.filter((m) => m.file === f.path);
        const state = !f.exists ? "not found" : f.error ? `unreadable: ${f.error}` : rules.length ? "" : "no rules";
        lines.push(`  ${f.path}${state ? `: ${state}` : ""}`);
        for (const m of rules) {
          const how = !m.rule
            ? `not applied: ${m.note}`
            : `→ ${m.coil}${m.applied ? "" : " (not applied: the project is not trusted)"}${m.note ? ` (${m.note})` : ""}`;
          lines.push(`    ${m.list} ${m.claude} ${how}`);
        }
      }
      if (this.claude.mode) lines.push(`  defaultMode → ${this.claude.mode.mode} (${this.claude.mode.file})`);
      for (const d of this.claude.directories) lines.push(`  additionalDirectories: ${d.path} (${d.file})`);
      for (const p of this.claude.problems.filter((x) => !/ rule .* is not applied: /.test(x))) lines.push(`  ${p}`);
      if (this.claude.skipped.length)
        lines.push(`  not applied, the project is not trusted: ${this.claude.skipped.join(", ")}`);
    }
    return lines.join("\n");
  }

  /** `/permissions [mode <mode>]`. */
  command(args: string): SlashResult {
    const { policy, rules } = this;
    const [word, value] = args.trim().split(/\s+/);
    if (word === "mode") {
      if (!MODES.includes(value as Mode)) return `permission modes: ${MODES.join(", ")}`;
      policy.mode = value as Mode;
      return `permission mode: ${policy.mode}`;
    }
    const list = (name: string, l: Rule[]) => `${name}: ${l.map((r) => r.text).join(", ") || "(none)"}`;
    return [
      `permission mode: ${policy.mode} (from ${this.modeFrom}${this.refuseAsks ? ", dontAsk: what would ask is refused" : ""})`,
      list("deny", rules.deny),
      list("ask", rules.ask),
      list("allow", rules.allow),
      `allowed for this session: ${[...policy.remembered].join(", ") || "(none)"}`,
    ].join("\n");
  }
}
