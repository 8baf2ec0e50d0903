/** Claude Code hook definitions: the supported events, reading settings files, matchers and `if` rules. */
import { HOOK_EVENTS, TOOL_HOOK_EVENTS, UNSUPPORTED_HOOK_EVENTS } from "../../lib/claude-plugins.js";
import { readSettingsFile } from "../../lib/claude-settings.js";

export { HOOK_EVENTS as EVENTS, TOOL_HOOK_EVENTS as TOOL_EVENTS, UNSUPPORTED_HOOK_EVENTS as UNSUPPORTED_EVENTS };
export type HookEvent = (typeof HOOK_EVENTS)[number];

export interface HookDef {
  event: HookEvent;
  matcher?: string;
  /** `command` runs a program; `prompt` asks the session's model (Claude Code's prompt hooks). */
  type: "command" | "prompt";
  /** The shell command (`command` hooks), or the prompt's text for messages. */
  command: string;
  /** `prompt` hooks: the text sent, `$ARGUMENTS` replaced by the hook's input. */
  prompt?: string;
  /** `prompt` hooks: a model other than the session's. */
  model?: string;
  /** Only for tool calls matching this permission rule (`Bash(git commit:*)`, `Edit(*.ts)`). */
  if?: string;
  /** Runs in the background; its output reaches the model at the next request. */
  async?: boolean;
  /** Runs in the background and, when it exits with 2, wakes the agent with its stderr (`rewakeMessage` first). */
  asyncRewake?: boolean;
  rewakeMessage?: string;
  /** Runs once per session. */
  once?: boolean;
  timeoutMs: number;
  source: string;
  /** Extra environment for this hook's process (a hook source's, e.g. `CLAUDE_PLUGIN_ROOT`). */
  env?: Record<string, string>;
}

/** A hook coil does not run, and why (for the warning, `coil doctor` and the install report). */
export interface SkippedHook {
  source: string;
  event: string;
  what: string;
  why: string;
}

/** Default timeouts in seconds by handler type, as Claude Code's (command: the plugin's `timeout` option). */
const PROMPT_TIMEOUT = 30;

/**
 * Hook definitions from a settings-shaped object. Events coil does not have, handler types it does not run
 * (`agent`, `http`) and an `if` on a non-tool event (which Claude Code 2.1 never runs) are skipped: each is
 * warned about and added to `skipped`.
 */
export function parseHooks(
  hooks: unknown,
  source: string,
  defaultTimeout: number,
  warn: (m: string) => void,
  skipped: SkippedHook[] = [],
): HookDef[] {
  if (!hooks || typeof hooks !== "object") return [];
  const out: HookDef[] = [];
  const skip = (event: string, what: string, why: string) => {
    skipped.push({ source, event, what, why });
    warn(`${source}: ${event} ${what} ${what === "hooks" ? "are" : "is"} not run: ${why}`);
  };
  for (const [event, groups] of Object.entries(hooks as Record<string, unknown>)) {
    if (!HOOK_EVENTS.includes(event as HookEvent)) {
      const known = (UNSUPPORTED_HOOK_EVENTS as readonly string[]).includes(event);
      skip(
        event,
        "hooks",
        known
          ? "coil has no such event (it is Claude Code's; coil runs these events: " + HOOK_EVENTS.join(", ") + ")"
          : `'${event}' is not a hook event (coil runs these events: ${HOOK_EVENTS.join(", ")})`,
      );
      continue;
    }
    for (const group of Array.isArray(groups) ? groups : []) {
      for (const h of Array.isArray(group?.hooks) ? group.hooks : []) {
        const type = h?.type ?? "command";
        const text = type === "prompt" ? h?.prompt : h?.command;
        if ((type !== "command" && type !== "prompt") || typeof text !== "string" || !text) {
          skip(
            event,
            `hook of type '${type}'${typeof h?.command === "string" ? ` (${h.command})` : ""}`,
            type === "command" || type === "prompt"
              ? `it has no ${type === "prompt" ? "prompt" : "command"}`
              : `coil runs "command" and "prompt" hooks, not "${type}"`,
          );
          continue;
        }
        if (typeof h.if === "string" && !TOOL_HOOK_EVENTS.includes(event as HookEvent)) {
          skip(
            event,
            `hook \`${text}\``,
            `it has an "if" rule, which applies to tool events only; Claude Code never runs such a hook either`,
          );
          continue;
        }
        const fallback = type === "prompt" ? PROMPT_TIMEOUT : defaultTimeout;
        const seconds = typeof h.timeout === "number" && h.timeout > 0 ? h.timeout : fallback;
        out.push({
          event: event as HookEvent,
          matcher: typeof group.matcher === "string" ? group.matcher : undefined,
          type,
          command: text,
          ...(type === "prompt" ? { prompt: text } : {}),
          ...(type === "prompt" && typeof h.model === "string" && h.model ? { model: h.model } : {}),
          ...(typeof h.if === "string" && h.if.trim() ? { if: h.if.trim() } : {}),
          ...(h.async === true ? { async: true } : {}),
          ...(h.asyncRewake === true ? { asyncRewake: true } : {}),
          ...(typeof h.rewakeMessage === "string" ? { rewakeMessage: h.rewakeMessage } : {}),
          ...(h.once === true ? { once: true } : {}),
          timeoutMs: seconds * 1000,
          source,
        });
      }
    }
  }
  return out;
}

/** Claude Code matchers: empty or `*` matches everything; otherwise a regular expression over the whole name. */
export function matches(matcher: string | undefined, ...names: string[]): boolean {
  if (!matcher || matcher === "*") return true;
  try {
    const re = new RegExp(`^(?:${matcher})$`);
    return names.some((n) => re.test(n));
  } catch {
    return names.includes(matcher);
  }
}

/**
 * The `hooks` of a settings file or a plugin's hooks.json (read through lib/claude-settings.ts, the one
 * reader of Claude Code's settings files); a missing file is reported when `required`.
 */
export function readSettings(file: string, warn: (m: string) => void, required = false): unknown {
  const read = readSettingsFile(file);
  if (!read.exists) {
    if (required) warn(`hook file ${file} does not exist; its hooks are skipped`);
    return undefined;
  }
  if (read.error) {
    warn(`cannot read hooks from ${file}: ${read.error}; its hooks are skipped`);
    return undefined;
  }
  return read.data?.hooks;
}
