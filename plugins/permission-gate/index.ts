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
import { expandPath, resolveTypedPath, type PathLookup } from "../../lib/typed-path.js";
import { isReadOnlyCommand, READ_ONLY_COMMANDS } from "./readonly.js";
import { withholdResults } from "./results.js";
import { parseRule, READING_TOOLS, ruleMatches, subjectOf, type Rule, type Subject } from "./rules.js";

export { splitCommand } from "./shell.js";
export { isReadOnlyCommand, READ_ONLY_COMMANDS } from "./readonly.js";
export { globToRegExp, parseRule, pathSubject, realPathOf, ruleMatches, subjectOf } from "./rules.js";

const MODES = ["default", "accept-edits", "plan", "yolo"] as const;
type Mode = (typeof MODES)[number];

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

/** What a session service offers that the gate uses (see plugins/session-jsonl). */
interface SessionLike {
  appendCustom(customType: string, data?: unknown): unknown;
  entries(): readonly { type: string; customType?: string; data?: unknown }[];
}

type Verdict = { verdict: "allow" | "ask" | "deny"; rule?: string; item?: string; why: string };
interface Recorded { tool: string; items: string[]; decision: "allow" | "deny"; by: "rule" | "mode" | "user" | "no-ui"; scope?: "once" | "session"; rule?: string; message?: string }

/**
 * "No objection". The kernel's tap wrapper currently reads `.block` of whatever a tool_call tap returns,
 * so a plain `undefined` throws there and fails closed; `null` is treated as undefined before that check.
 */
const NO_OPINION = null as unknown as undefined;

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
    let mode: Mode = o.mode as Mode;
    /** "Allow for this session" answers: `bash:<command>` or `tool:<name>`. */
    const remembered = new Set<string>();
    let restored = false;
    const session = () => ctx.services.get("session") as SessionLike | undefined;

    ctx.flags.register({ name: "permission-mode", description: `permission mode for this run: ${MODES.join(", ")}`, type: "string", valueName: "mode" });
    ctx.onStart(() => {
      const flag = ctx.flags.get("permission-mode");
      if (flag === undefined) return;
      if (!MODES.includes(flag as Mode)) throw ctx.error("CONFIG_INVALID", `--permission-mode must be one of ${MODES.join(", ")}, got '${flag}'`);
      mode = flag as Mode;
    });

    const keyOf = (tool: string, item?: string) => (tool === "bash" && item !== undefined ? `bash:${item}` : `tool:${tool}`);
    const readOnly = (tool: string, item?: string) =>
      o.readOnlyTools.includes(tool) || (tool === "bash" && item !== undefined && item !== "" && isReadOnlyCommand(item, o.readOnlyCommands));

    function modeDefault(tool: string, subject: Subject, item?: string): Verdict {
      if (readOnly(tool, item)) return { verdict: "allow", why: "read-only" };
      if (mode === "yolo") return { verdict: "allow", why: "yolo mode" };
      if (mode === "accept-edits" && (tool === "edit" || tool === "write") && subject.kind === "path" && subject.inside) return { verdict: "allow", why: "accept-edits mode" };
      return { verdict: "ask", why: `${mode} mode asks before ${tool === "bash" ? "running commands" : `using ${tool}`}` };
    }

    /** deny → (plan mode) → ask → allow → session answers → the mode's default. */
    function decideOne(tool: string, subject: Subject, item?: string): Verdict {
      const hit = (list: "deny" | "ask" | "allow") => rules[list].find((r) => ruleMatches(r, tool, subject, item, list));
      const deny = hit("deny");
      if (deny) return { verdict: "deny", rule: deny.text, item, why: `denied by the rule ${deny.text}` };
      if (mode === "plan" && !readOnly(tool, item)) return { verdict: "deny", item, why: "plan mode is read-only" };
      const ask = hit("ask");
      if (ask) return { verdict: "ask", rule: ask.text, item, why: `the rule ${ask.text} asks` };
      const allow = hit("allow");
      if (allow) return { verdict: "allow", rule: allow.text, item, why: `allowed by ${allow.text}` };
      if (remembered.has(keyOf(tool, item))) return { verdict: "allow", item, why: "allowed for this session" };
      return { ...modeDefault(tool, subject, item), item };
    }

    /** Every bash command must pass; the worst verdict wins. */
    function decide(tool: string, subject: Subject): { worst: Verdict; asking: Verdict[] } {
      const items = subject.kind === "commands" ? (subject.items.length ? subject.items : [""]) : [undefined];
      const all = items.map((item) => decideOne(tool, subject, item));
      const asking = all.filter((v) => v.verdict === "ask");
      return { worst: all.find((v) => v.verdict === "deny") ?? asking[0] ?? all[0]!, asking };
    }

    function record(entry: Recorded): void {
      const s = session();
      if (!s) return;
      try {
        s.appendCustom("permission-gate", { ...entry, mode });
      } catch (e) {
        ctx.log.warn(`could not record the decision in the session: ${(e as Error).message}`);
      }
    }

    function restore(): void {
      if (restored) return;
      const s = session();
      if (!s) return;
      restored = true;
      try {
        for (const e of s.entries()) {
          const d = e.data as Recorded | undefined;
          if (e.type === "custom" && e.customType === "permission-gate" && d?.decision === "allow" && d.scope === "session") {
            for (const item of d.items.length ? d.items : [undefined]) remembered.add(keyOf(d.tool, item));
          }
        }
      } catch {
        restored = false; // the session is not open yet
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
          const fs = (ctx.services.get("operations") as Partial<PathLookup> | undefined) ?? {};
          const reached = await resolveTypedPath(typed, ctx.cwd, { stat: fs.stat?.bind(fs) ?? stat, readdir: fs.readdir?.bind(fs) ?? ((dir: string) => readdir(dir, { withFileTypes: true })) });
          if (reached !== expandPath(typed, ctx.cwd)) subject = subjectOf(tool, { path: reached }, ctx.cwd);
        }
        const { worst, asking } = decide(tool, subject);
        const items = asking.map((v) => v.item).filter((i): i is string => i !== undefined);
        if (worst.verdict === "allow") return NO_OPINION;
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
          if (scope === "session") for (const v of asking) remembered.add(keyOf(tool, v.item));
          record({ tool, items, decision: "allow", by: "user", scope, rule: worst.rule });
          return NO_OPINION;
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
        const covered = (path: string) => {
          const subject = subjectOf(info.call.name, { path }, ctx.cwd);
          return (["deny", "ask"] as const).map((list) => rules[list].find((r) => ruleMatches(r, info.call.name, subject, undefined, list))).find(Boolean)?.text;
        };
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
          mode = value as Mode;
          return `permission mode: ${mode}`;
        }
        const list = (name: string, l: Rule[]) => `${name}: ${l.map((r) => r.text).join(", ") || "(none)"}`;
        return [`permission mode: ${mode}`, list("deny", rules.deny), list("ask", rules.ask), list("allow", rules.allow), `allowed for this session: ${[...remembered].join(", ") || "(none)"}`].join("\n");
      },
    });
  },
});
