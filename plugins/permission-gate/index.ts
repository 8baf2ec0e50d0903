/**
 * permission-gate: decides, before each tool call runs, whether it may. Rules from the preset are
 * evaluated deny → ask → allow (first match wins within a list), then the mode's default. Bash command
 * lines are split into their simple commands and every one must pass. "ask" goes through the `ui`
 * service; without one (print and JSON modes) it means deny, and the model is told why. Decisions are
 * recorded in the session as `custom` entries of type `permission-gate`. Paths are judged as typed and
 * resolved (symlinks followed). grep, find and ls results that deny or ask rules cover are withheld.
 * See docs/safety.md.
 */
import { readdir, stat } from "node:fs/promises";
import { definePlugin, Stage, Type, type Static, type ToolCallInfo, type ToolResult } from "../../kernel/index.js";
import { coilHome } from "../../lib/paths.js";
import type { SessionService } from "../session-jsonl/api.js";
import type {} from "../tools-coding/api.js"; // types the `operations` service
import { expandPath, resolveTypedPath } from "../../lib/typed-path.js";
import { READ_ONLY_COMMANDS } from "./read-only-command.js";
import { MODES, Policy, type Mode } from "./policy.js";
import { withholdResults } from "./results.js";
import { parseRule, READING_TOOLS, subjectOf, type Rule, type Subject } from "./rules.js";

export { splitCommand } from "./shell.js";
export { isReadOnlyCommand, READ_ONLY_COMMANDS } from "./read-only-command.js";
export { MODES, Policy, type Mode, type Verdict } from "./policy.js";
export { globToRegExp, parseRule, pathSubject, realPathOf, ruleMatches, subjectOf } from "./rules.js";

export const GateOptions = Type.Object({
  mode: Type.Union(MODES.map((m) => Type.Literal(m)), { default: "default" }),
  allow: Type.Array(Type.String(), { default: [] }),
  ask: Type.Array(Type.String(), { default: [] }),
  deny: Type.Array(Type.String(), { default: [] }),
  /** Tools that only look (allowed in every mode unless a rule says otherwise). */
  readOnlyTools: Type.Array(Type.String(), { default: ["read", "grep", "find", "ls", "write_plan", "task"] }),
  /** Programs a bash command may start with in plan mode. */
  readOnlyCommands: Type.Array(Type.String(), { default: READ_ONLY_COMMANDS }),
});
export type GateOptions = Static<typeof GateOptions>;

interface Recorded { tool: string; items: string[]; decision: "allow" | "deny"; by: "rule" | "mode" | "user" | "no-ui"; scope?: "once" | "session"; rule?: string; message?: string }

const CHOICES = ["Allow once", "Allow for this session", "Deny", "Deny and tell the model why"] as const;

export default definePlugin({
  id: "permission-gate",
  description: "Allow, ask or deny each tool call by rules and a mode",
  options: GateOptions,
  setup(ctx) {
    const o = ctx.options;
    const home = coilHome();
    const compile = (list: string[], name: string): Rule[] =>
      list.map((text) => {
        try {
          return parseRule(text, home);
        } catch (e) {
          throw ctx.error("CONFIG_INVALID", `${name}: ${(e as Error).message}`);
        }
      });
    const rules = { deny: compile(o.deny, "deny"), ask: compile(o.ask, "ask"), allow: compile(o.allow, "allow") };
    const policy = new Policy({ rules, readOnlyTools: o.readOnlyTools, readOnlyCommands: o.readOnlyCommands }, o.mode as Mode);
    /** The session the remembered answers belong to: another session (/new, /resume, an editor's session) starts afresh. */
    let restoredFor: string | undefined;
    const session = () => ctx.services.get("session");

    ctx.flags.register({ name: "permission-mode", description: `permission mode for this run: ${MODES.join(", ")}`, type: "string", valueName: "mode" });
    ctx.onStart(() => {
      const flag = ctx.flags.get("permission-mode");
      if (flag === undefined) return;
      if (!MODES.includes(flag as Mode)) throw ctx.error("CONFIG_INVALID", `--permission-mode must be one of ${MODES.join(", ")}, got '${flag}'`);
      policy.mode = flag as Mode;
    });

    function record(entry: Recorded): void {
      const s = session();
      if (!s) return;
      try {
        s.appendCustom("permission-gate", { ...entry, mode: policy.mode });
      } catch (e) {
        ctx.log.warn(`could not record the decision in the session: ${(e as Error).message}`);
      }
    }

    function restore(): void {
      const s = session();
      if (!s || restoredFor === (s.id ?? "")) return;
      if (restoredFor !== undefined) policy.remembered.clear();
      restoredFor = s.id ?? "";
      try {
        for (const e of s.entries()) {
          if (e.type !== "custom" || e.customType !== "permission-gate") continue;
          const d = e.data as Recorded | undefined;
          if (d?.decision === "allow" && d.scope === "session") {
            for (const item of d.items.length ? d.items : [undefined]) policy.remember(d.tool, item);
          }
        }
      } catch {
        restoredFor = undefined; // the session is not open yet
      }
    }

    const describe = (tool: string, subject: Subject, items: (string | undefined)[]) =>
      subject.kind === "commands" ? `bash: ${items.join(" ; ")}` : subject.kind === "path" ? `${tool} ${subject.rel ?? subject.abs}` : tool;

    ctx.tap(
      "tool_call",
      async (info: ToolCallInfo) => {
        restore();
        const tool = info.call.name;
        let subject = subjectOf(tool, info.args, ctx.cwd);
        // Judge the file the tool will reach: tools take `@.env` or an NFD / curly-quote spelling as the existing file.
        const typed = typeof info.args.path === "string" ? info.args.path : typeof info.args.file_path === "string" ? info.args.file_path : undefined;
        if (subject.kind === "path" && typed !== undefined) {
          const fs = ctx.services.get("operations") ?? {};
          const reached = await resolveTypedPath(typed, ctx.cwd, { stat: fs.stat?.bind(fs) ?? stat, readdir: fs.readdir?.bind(fs) ?? ((dir: string) => readdir(dir, { withFileTypes: true })) });
          if (reached !== expandPath(typed, ctx.cwd)) subject = subjectOf(tool, { path: reached }, ctx.cwd);
        }
        const { worst, asking } = policy.decide(tool, subject);
        const items = asking.map((v) => v.item).filter((i): i is string => i !== undefined);
        if (worst.verdict === "allow") return undefined;
        if (worst.verdict === "deny") {
          const what = worst.item ? `\`${worst.item}\`` : tool;
          record({ tool, items: worst.item ? [worst.item] : [], decision: "deny", by: worst.rule ? "rule" : "mode", rule: worst.rule });
          return { block: true, reason: `${what} is not allowed: ${worst.why}. Do not retry it; find another way or ask the user.` };
        }
        const what = describe(tool, subject, asking.map((v) => v.item));
        const ui = ctx.services.get("ui");
        if (!ui) {
          record({ tool, items, decision: "deny", by: "no-ui", rule: worst.rule });
          const suggest = tool === "bash" ? `bash(${items[0] ?? ""})` : subject.kind === "path" ? `${tool}(${subject.rel ?? subject.abs})` : tool;
          ctx.log.warn(`blocked ${what}: it needs approval and there is no UI to ask (${worst.why})`);
          return {
            block: true,
            reason: `${what} needs approval (${worst.why}), and no one can approve in print mode; it was not run. Continue without it, or tell the user it needs an allow rule such as ${suggest} in the permission-gate options, or an interactive session.`,
          };
        }
        const choice = await ui.select(`Allow ${what}? (${worst.why})`, CHOICES, info.signal);
        if (choice === CHOICES[0] || choice === CHOICES[1]) {
          const scope = choice === CHOICES[1] ? "session" : "once";
          if (scope === "session") for (const v of asking) policy.remember(tool, v.item);
          record({ tool, items, decision: "allow", by: "user", scope, rule: worst.rule });
          return undefined;
        }
        const message = choice === CHOICES[3] ? (await ui.input("Message to the model", "why not, or what to do instead", info.signal))?.trim() : undefined;
        record({ tool, items, decision: "deny", by: "user", rule: worst.rule, message: message || undefined });
        return { block: true, reason: `the user denied ${what}${message ? `: ${message}` : ". Do not retry it; ask the user what to do instead"}` };
      },
      { stage: Stage.GUARD },
    );

    // grep, find and ls read what they return: results a deny or ask rule covers are withheld.
    ctx.tap(
      "tool_result",
      async (result: ToolResult, info: ToolCallInfo) => {
        if (!READING_TOOLS.includes(info.call.name) || result.isError) return undefined;
        const covered = (path: string) => policy.covering(info.call.name, subjectOf(info.call.name, { path }, ctx.cwd));
        return withholdResults(result, info.call.name, info.args, ctx.cwd, covered);
      },
      { stage: Stage.GUARD },
    );

    ctx.commands.register({
      name: "permissions",
      description: "show the permission mode and rules; `/permissions mode <mode>` switches the mode",
      argumentHint: "[mode <default|accept-edits|plan|yolo>]",
      run(args) {
        const [word, value] = args.trim().split(/\s+/);
        if (word === "mode") {
          if (!MODES.includes(value as Mode)) return `permission modes: ${MODES.join(", ")}`;
          policy.mode = value as Mode;
          return `permission mode: ${policy.mode}`;
        }
        const list = (name: string, l: Rule[]) => `${name}: ${l.map((r) => r.text).join(", ") || "(none)"}`;
        return [`permission mode: ${policy.mode}`, list("deny", rules.deny), list("ask", rules.ask), list("allow", rules.allow), `allowed for this session: ${[...policy.remembered].join(", ") || "(none)"}`].join("\n");
      },
    });
  },
});
