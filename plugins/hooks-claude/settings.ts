/** Claude Code hook definitions: the supported events, reading settings files, and matchers. */
import { readSettingsFile } from "../../lib/claude-settings.js";

export const EVENTS = [
  "PreToolUse",
  "PermissionRequest",
  "PostToolUse",
  "PostToolUseFailure",
  "UserPromptSubmit",
  "Notification",
  "Stop",
  "SessionStart",
  "SessionEnd",
  "PreCompact",
  "SubagentStart",
  "SubagentStop",
] as const;
export type HookEvent = (typeof EVENTS)[number];

export interface HookDef {
  event: HookEvent;
  matcher?: string;
  command: string;
  timeoutMs: number;
  source: string;
  /** Extra environment for this hook's process (a hook source's, e.g. `CLAUDE_PLUGIN_ROOT`). */
  env?: Record<string, string>;
}

/** Hook definitions from a settings-shaped object; unknown events are reported, non-command handlers skipped. */
export function parseHooks(
  hooks: unknown,
  source: string,
  defaultTimeout: number,
  warn: (m: string) => void,
): HookDef[] {
  if (!hooks || typeof hooks !== "object") return [];
  const out: HookDef[] = [];
  for (const [event, groups] of Object.entries(hooks as Record<string, unknown>)) {
    if (!EVENTS.includes(event as HookEvent)) {
      warn(`${source}: hook event '${event}' is not supported by coil (supported: ${EVENTS.join(", ")}); skipped`);
      continue;
    }
    for (const group of Array.isArray(groups) ? groups : []) {
      for (const h of Array.isArray(group?.hooks) ? group.hooks : []) {
        if ((h?.type ?? "command") !== "command" || typeof h?.command !== "string") {
          warn(`${source}: ${event} hook of type '${h?.type}' is not supported (only "command"); skipped`);
          continue;
        }
        const seconds = typeof h.timeout === "number" && h.timeout > 0 ? h.timeout : defaultTimeout;
        out.push({
          event: event as HookEvent,
          matcher: typeof group.matcher === "string" ? group.matcher : undefined,
          command: h.command,
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
