/** context-files' contract (types only): the `context-files` service the system prompt reads. */

export interface ContextFile {
  path: string;
  /** The text the model gets: the file, what it imports (`@path`), and a truncation note when it was cut. */
  content: string;
  truncated: boolean;
  /** Size of the file on disk. */
  bytes: number;
}

/** A place looked at, for `coil doctor`: loaded, or why not. */
export interface ContextPlace {
  path: string;
  status: "loaded" | "skipped";
  /** For skipped files: why (same content as another, compat off ...); for loaded ones: import notes. */
  reason?: string;
}

export interface ContextFilesService {
  /**
   * The files in order: the user's (`$COIL_HOME`, `~/.claude/CLAUDE.md`, `~/.codex/AGENTS.md`,
   * `~/.pi/agent/AGENTS.md`), then each folder's from the repository root down to the working directory.
   * Read at start-up and again at most once per run.
   */
  files(): readonly ContextFile[];
  /** What was loaded and what was skipped and why, including folders below the working directory loaded on first use. */
  places(): readonly ContextPlace[];
}

declare module "coil" {
  interface Services {
    "context-files": ContextFilesService;
  }
}
