/**
 * Coded errors. Each names what failed (code), where (plugin id, hook or phase, file:line:column),
 * and carries the original `cause`. A plugin error is wrapped once: wrapping a CoilError returns it.
 */

/**
 * SCREAMING_SNAKE codes. The kernel's own: CONFIG_INVALID, PRESET_NOT_FOUND, PRESET_INVALID, PLUGIN_NOT_FOUND,
 * PLUGIN_LOAD_FAILED, PLUGIN_INVALID, PLUGIN_OPTIONS_INVALID, PLUGIN_SETUP_FAILED, PLUGIN_START_FAILED,
 * PLUGIN_STOP_FAILED, PLUGIN_DUPLICATE, PLUGIN_HOOK_FAILED, REGISTRY_DUPLICATE, REGISTRATION_CLOSED,
 * SERVICE_MISSING, PROVIDER_MISSING, MODEL_NOT_FOUND, NO_COMPACTION, AGENT_BUSY, KERNEL_ERROR. Plugins add theirs.
 */
export type ErrorCode = string;

export type Phase = "resolve" | "import" | "options" | "setup" | "start" | "stop";

export interface CoilErrorOptions {
  plugin?: string;
  hook?: string;
  phase?: Phase;
  file?: string;
  line?: number;
  column?: number;
  cause?: unknown;
  /** What the user can do about it. */
  hint?: string;
  /** A plugin error that must end the run (e.g. the session store could not write). */
  fatal?: boolean;
  /** The npm spec (`pkg@^1`) of a missing package, which the CLI can install on first use. */
  npmSpec?: string;
}

const WHERE = ["plugin", "hook", "phase", "file", "line", "column", "hint", "fatal", "npmSpec"] as const;

export class CoilError extends Error {
  override name = "CoilError";
  readonly plugin?: string;
  readonly hook?: string;
  readonly phase?: Phase;
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
  readonly hint?: string;
  readonly fatal?: boolean;
  readonly npmSpec?: string;

  /** `detail` is the message without the location prefix. */
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    options: CoilErrorOptions = {},
  ) {
    const at = options.file
      ? ` (${[options.file, options.line, options.line && options.column].filter(Boolean).join(":")})`
      : "";
    const stage = options.hook ?? options.phase;
    super(
      `${options.plugin ? `[plugin ${options.plugin}] ` : ""}${stage ? `${stage}: ` : ""}${code} ${detail}${at}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    for (const key of WHERE) if (options[key] !== undefined) (this as Record<string, unknown>)[key] = options[key];
  }

  /** Wrap anything thrown by plugin code, once. A CoilError naming its plugin and hook/phase is returned as is. */
  static wrap(cause: unknown, code: ErrorCode, where: CoilErrorOptions): CoilError {
    if (!(cause instanceof CoilError)) return new CoilError(code, messageOf(cause), { ...where, cause });
    if (cause.plugin && (cause.hook || cause.phase)) return cause;
    const own = Object.fromEntries(WHERE.filter((k) => cause[k] !== undefined).map((k) => [k, cause[k]]));
    return new CoilError(cause.code, cause.detail, { ...where, ...own, cause: cause.cause });
  }
}

export function messageOf(cause: unknown): string {
  if (cause instanceof Error) return cause.message;
  if (typeof cause === "string") return cause;
  try {
    return JSON.stringify(cause) ?? String(cause);
  } catch {
    return String(cause);
  }
}
