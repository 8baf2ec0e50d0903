/**
 * The lsp plugin's contract (types only): what it adds to an edit's or write's result `details`, for
 * front ends that show diagnostics under the diff, and the `lsp` service. Others `import type` from here.
 */

export type Severity = "error" | "warning" | "info" | "hint";

/** One diagnostic as coil shows it: `file:line:column severity message [rule]`. */
export interface DiagnosticItem {
  /** As results name files: relative to the working directory when inside it. */
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
  severity: Severity;
  message: string;
  /** The server's code for the rule (`TS2322`, `reportAssignmentType`), when it gives one. */
  rule?: string;
  /** The server that reported it (`typescript`, `python`, a configured name). */
  server: string;
}

/** `details.diagnostics` of an edit or write result (and of bash, with `afterBash`). */
export interface DiagnosticsDetails {
  /** New errors and warnings: in the changed files first, then in other open files. At most `maxDiagnostics`. */
  items: DiagnosticItem[];
  /** New ones not listed (over the cap). */
  omitted: number;
  /** Errors and warnings this change removed. */
  resolved: number;
  /** Why the check is incomplete (a server still starting, a time-out), when it is. */
  note?: string;
  /** ms spent waiting for the servers. */
  waitedMs: number;
}

export interface ServerState {
  name: string;
  /** The folder it runs in. */
  root: string;
  state: "starting" | "running" | "restarting" | "failed" | "stopped";
  pid?: number;
  restarts: number;
  /** Open documents. */
  documents: number;
  /** The last failure (exit, start-up error, stderr tail). */
  error?: string;
  /** How diagnostics are read: `pull`, `tsserver` or `push`. */
  diagnostics?: string;
}

export interface LspService {
  /** Servers started in this session (none until a file of their language is read or edited). */
  status(): ServerState[];
}

declare module "coil" {
  interface Services {
    lsp: LspService;
  }
}
