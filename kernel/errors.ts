/**
 * Coded errors. Each names what failed (code), where (plugin id, hook or phase, file:line:column),
 * and carries the original `cause`. A plugin error is wrapped once: wrapping a CoilError returns it.
 */

export type ErrorCode =
  | "CONFIG_INVALID"
  | "PRESET_NOT_FOUND"
  | "PRESET_INVALID"
  | "PLUGIN_NOT_FOUND"
  | "PLUGIN_LOAD_FAILED"
  | "PLUGIN_INVALID"
  | "PLUGIN_OPTIONS_INVALID"
  | "PLUGIN_SETUP_FAILED"
  | "PLUGIN_DUPLICATE"
  | "PLUGIN_HOOK_FAILED"
  | "REGISTRY_DUPLICATE"
  | "REGISTRATION_CLOSED"
  | "SERVICE_MISSING"
  | "PROVIDER_MISSING"
  | "MODEL_NOT_FOUND"
  | "NO_COMPACTION"
  | "AGENT_BUSY"
  | "PLUGIN_START_FAILED"
  | "PLUGIN_STOP_FAILED"
  | (string & {});

export type Phase = "resolve" | "import" | "options" | "setup" | "start" | "stop";

export interface ErrorWhere {
  plugin?: string;
  hook?: string;
  phase?: Phase;
  file?: string;
  line?: number;
  column?: number;
}

export interface CoilErrorOptions extends ErrorWhere {
  cause?: unknown;
  /** What the user can do about it. */
  hint?: string;
  /** A plugin error that must end the run (e.g. the session store could not write). */
  fatal?: boolean;
}

export class CoilError extends Error {
  override name = "CoilError";
  readonly code: ErrorCode;
  readonly plugin?: string;
  readonly hook?: string;
  readonly phase?: Phase;
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
  readonly hint?: string;
  readonly fatal: boolean;
  /** The message without the location prefix. */
  readonly detail: string;

  constructor(code: ErrorCode, detail: string, options: CoilErrorOptions = {}) {
    super(formatMessage(code, detail, options), options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.detail = detail;
    this.plugin = options.plugin;
    this.hook = options.hook;
    this.phase = options.phase;
    this.file = options.file;
    this.line = options.line;
    this.column = options.column;
    this.hint = options.hint;
    this.fatal = options.fatal ?? false;
  }

  /** Wrap anything thrown by plugin code, once. A CoilError that already names a plugin is returned as is. */
  static wrap(cause: unknown, code: ErrorCode, where: CoilErrorOptions): CoilError {
    if (cause instanceof CoilError) {
      if (cause.plugin && (cause.hook || cause.phase)) return cause;
      return new CoilError(cause.code, cause.detail, { ...where, ...definedOf(cause), cause: cause.cause, hint: cause.hint ?? where.hint });
    }
    return new CoilError(code, messageOf(cause), { ...where, cause });
  }
}

function definedOf(e: CoilError): CoilErrorOptions {
  const out: CoilErrorOptions = { fatal: e.fatal };
  for (const key of ["plugin", "hook", "phase", "file", "line", "column"] as const) {
    if (e[key] !== undefined) (out as Record<string, unknown>)[key] = e[key];
  }
  return out;
}

function formatMessage(code: ErrorCode, detail: string, where: CoilErrorOptions): string {
  const prefix = where.plugin ? `[plugin ${where.plugin}] ` : "";
  const stage = where.hook ?? where.phase;
  const at = where.file ? ` (${where.file}${where.line ? `:${where.line}${where.column ? `:${where.column}` : ""}` : ""})` : "";
  return `${prefix}${stage ? `${stage}: ` : ""}${code} ${detail}${at}`;
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

/** Multi-line text for a terminal: message, cause chain, hint. */
export function formatError(error: unknown): string {
  const lines = [messageOf(error)];
  let cause = error instanceof Error ? error.cause : undefined;
  for (let depth = 0; cause !== undefined && depth < 5; depth++) {
    lines.push(`  cause: ${messageOf(cause)}`);
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  if (error instanceof CoilError && error.hint) lines.push(`  hint: ${error.hint}`);
  return lines.join("\n");
}
