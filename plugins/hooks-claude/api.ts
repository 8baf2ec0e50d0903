/**
 * hooks-claude's contract (types only): the `claude-hooks` service. The permission gate asks it before it
 * asks the user (Claude Code's PermissionRequest hooks may answer), and anything that makes coil wait for
 * the user tells it (Notification hooks). Import it with `import type {} from "../hooks-claude/api.js"`.
 * The service exists only when some hook is configured: callers use `services.get("claude-hooks")?.…`.
 */
import type { ToolCallInfo } from "../../api/index.js";

/** What PermissionRequest hooks decided: allow (optionally with new arguments), deny (with a message for the model), or nothing. */
export type PermissionAnswer =
  | { behavior: "allow"; args?: Record<string, unknown> }
  | { behavior: "deny"; message?: string };

export interface ClaudeHooksService {
  /** coil waits for the user (`permission_prompt`, `idle_prompt`, ...): Notification hooks run in the background. */
  notify(message: string, type: string): void;
  /** The permission gate is about to ask about `info` because of `why`: the hooks' answer, or undefined (ask as usual). */
  permissionRequest(info: ToolCallInfo, why: string): Promise<PermissionAnswer | undefined>;
  /**
   * Variables the bash tool adds to its commands' environment: what SessionStart hooks wrote to their
   * `CLAUDE_ENV_FILE` (Claude Code sources those files before each Bash command); undefined when none.
   */
  shellEnv?(): Record<string, string> | undefined;
}

declare module "coil" {
  interface Services {
    "claude-hooks": ClaudeHooksService;
  }
}
