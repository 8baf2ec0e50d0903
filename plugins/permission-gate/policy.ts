/**
 * The gate's decision, pure: no files, no UI, no session. Given the compiled rules, the mode and the
 * answers remembered for this session, each tool call gets allow, ask or deny with the reason. The
 * plugin (index.ts) feeds it, asks the user when it says "ask" and records what happened.
 */
import { readOnlyRefusal } from "./read-only-command.js";
import { ruleMatches, type Rule, type Subject } from "./rules.js";
import type { Territory } from "./territory.js";

export const MODES = ["default", "project", "accept-edits", "plan", "yolo"] as const;
export type Mode = (typeof MODES)[number];

export type Verdict = { verdict: "allow" | "ask" | "deny"; rule?: string; item?: string; why: string };

export interface PolicyConfig {
  rules: { deny: Rule[]; ask: Rule[]; allow: Rule[] };
  readOnlyTools: readonly string[];
  readOnlyCommands: readonly string[];
  /** Where the project is (inside, temp folders, guarded paths); without it `inside` is the path subject's own. */
  territory?: Territory;
}

/** The key of an "Allow for this session" answer: `bash:<command>` or `tool:<name>`. */
export const rememberKey = (tool: string, item?: string) =>
  tool === "bash" && item !== undefined ? `bash:${item}` : `tool:${tool}`;

export class Policy {
  /** "Allow for this session" answers (see `rememberKey`). */
  readonly remembered = new Set<string>();

  constructor(
    private readonly config: PolicyConfig,
    public mode: Mode,
  ) {}

  remember(tool: string, item?: string): void {
    this.remembered.add(rememberKey(tool, item));
  }

  /** Every bash command must pass; the worst verdict wins. `asking` lists the items that need an answer. */
  decide(tool: string, subject: Subject): { worst: Verdict; asking: Verdict[] } {
    const items = subject.kind === "commands" ? (subject.items.length ? subject.items : [""]) : [undefined];
    const all = items.map((item) => this.decideOne(tool, subject, item));
    const asking = all.filter((v) => v.verdict === "ask");
    return { worst: all.find((v) => v.verdict === "deny") ?? asking[0] ?? all[0]!, asking };
  }

  /** The deny rule that covers this call, if any (its text). */
  denying(tool: string, subject: Subject): string | undefined {
    return this.config.rules.deny.find((r) => ruleMatches(r, tool, subject, undefined, "deny"))?.text;
  }

  /** The deny or ask rule that covers a path a reading tool returned, if any (its text). */
  covering(tool: string, subject: Subject): string | undefined {
    return (["deny", "ask"] as const)
      .map((list) => this.config.rules[list].find((r) => ruleMatches(r, tool, subject, undefined, list)))
      .find(Boolean)?.text;
  }

  /** deny → (plan mode) → ask → allow → session answers → the mode's default. */
  private decideOne(tool: string, subject: Subject, item?: string): Verdict {
    const hit = (list: "deny" | "ask" | "allow") =>
      this.config.rules[list].find((r) => ruleMatches(r, tool, subject, item, list));
    const deny = hit("deny");
    if (deny) return { verdict: "deny", rule: deny.text, item, why: `denied by the rule ${deny.text}` };
    if (this.mode === "plan" && !this.readOnly(tool, item))
      return { verdict: "deny", item, why: "plan mode is read-only" };
    const ask = hit("ask");
    if (ask) return { verdict: "ask", rule: ask.text, item, why: `the rule ${ask.text} asks` };
    const allow = hit("allow");
    if (allow) return { verdict: "allow", rule: allow.text, item, why: `allowed by ${allow.text}` };
    if (this.remembered.has(rememberKey(tool, item)))
      return { verdict: "allow", item, why: "allowed for this session" };
    return { ...this.modeDefault(tool, subject, item), item };
  }

  private readOnly(tool: string, item?: string): boolean {
    return (
      this.config.readOnlyTools.includes(tool) ||
      (tool === "bash" &&
        item !== undefined &&
        item !== "" &&
        readOnlyRefusal(item, this.config.readOnlyCommands) === undefined)
    );
  }

  private modeDefault(tool: string, subject: Subject, item?: string): Verdict {
    if (this.readOnly(tool, item)) return { verdict: "allow", why: "read-only" };
    if (this.mode === "yolo") return { verdict: "allow", why: "yolo mode" };
    const t = this.config.territory;
    const edits = (tool === "edit" || tool === "write") && subject.kind === "path";
    if (edits && (this.mode === "accept-edits" || this.mode === "project")) {
      const real = subject.real;
      if (t?.guarded(real))
        return {
          verdict: "ask",
          why: `${this.mode} mode asks before writing ${subject.rel ?? real}: a git hook or config runs later, as you, outside coil`,
        };
      const inside = t ? t.inside(real) : subject.inside;
      if (inside || (this.mode === "project" && t?.scratch(real)))
        return { verdict: "allow", why: `${this.mode} mode` };
      return {
        verdict: "ask",
        why: `${this.mode} mode asks before ${tool === "write" ? "writing" : "editing"} ${subject.abs}, which is outside the project (${(t?.roots ?? []).join(", ") || "the working directory"})`,
      };
    }
    if (this.mode === "project") {
      if (tool === "bash" && item && subject.kind === "commands" && t) {
        const outside = t.outsideWrite(item, subject, true);
        if (outside)
          return {
            verdict: "ask",
            why: `project mode asks before a command writes outside the project: \`${item}\` writes ${outside}`,
          };
      }
      return { verdict: "allow", why: "project mode" };
    }
    const notReadOnly = tool === "bash" && item ? readOnlyRefusal(item, this.config.readOnlyCommands) : undefined;
    return {
      verdict: "ask",
      why: `${this.mode} mode asks before ${tool === "bash" ? "running commands" : `using ${tool}`}${notReadOnly && !/is not on the read-only list/.test(notReadOnly) ? ` (not read-only: ${notReadOnly})` : ""}`,
    };
  }
}
