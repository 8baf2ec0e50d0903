/** tools-coding options and what every tool receives from the plugin. */
import { Type, type Static } from "typebox";
import { DEFAULT_BASH_TIMEOUT_S, DEFAULT_KILL_GRACE_MS, MAX_BASH_TIMEOUT_S } from "./limits.js";
import type { Operations } from "./local-operations.js";

export const TOOL_NAMES = ["read", "bash", "edit", "write"] as const;

export const CodingOptions = Type.Object({
  /** Which tools to register (default: all four). */
  tools: Type.Array(
    Type.Union([Type.Literal("read"), Type.Literal("bash"), Type.Literal("edit"), Type.Literal("write")]),
    {
      default: [...TOOL_NAMES],
      uniqueItems: true,
    },
  ),
  /** Return images read from disk as image content; false returns a text note instead. */
  images: Type.Boolean({ default: true }),
  bash: Type.Object(
    {
      /** Seconds a command may run when the call gives no `timeout`. */
      defaultTimeout: Type.Number({ exclusiveMinimum: 0, default: DEFAULT_BASH_TIMEOUT_S }),
      /** Upper bound for a call's `timeout`, in seconds. */
      maxTimeout: Type.Number({ exclusiveMinimum: 0, default: MAX_BASH_TIMEOUT_S }),
      /** Shell executable (default: $SHELL when POSIX-compatible, else bash, else /bin/sh). */
      shell: Type.Optional(Type.String({ minLength: 1 })),
      /** Milliseconds between SIGTERM and SIGKILL when a command is timed out or aborted. */
      killGraceMs: Type.Integer({ minimum: 0, default: DEFAULT_KILL_GRACE_MS }),
      /** Run bash calls one at a time (a batch containing bash runs sequentially). */
      sequential: Type.Boolean({ default: true }),
    },
    { default: {} },
  ),
});
export type CodingOptions = Static<typeof CodingOptions>;

/** What a tool needs from the plugin: the working directory, the backend (looked up per call) and options. */
export interface ToolEnv {
  cwd: string;
  ops(): Operations;
  options: CodingOptions;
  /** True when commands run without a backend that confines them (the first call also says so once). */
  unconfined?(): boolean;
  /** Variables bash commands get on top of coil's environment (Claude Code hooks' `CLAUDE_ENV_FILE`). */
  shellEnv?(): Record<string, string> | undefined;
}
