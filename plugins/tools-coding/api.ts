/**
 * tools-coding's contract (types only): the `operations` service, the file and process backend the
 * coding tools (and tools-search, the TUI's `!cmd`) use. A sandbox or remote plugin provides it, all
 * methods or only some. Failures reject with an Error whose `code` is a Node-style errno name
 * (`ENOENT`, `EACCES`, `EISDIR`, `ENOTDIR` ...). Other plugins `import type` from here.
 */

export interface FileInfo {
  /** What the path is after following symlinks. */
  kind: "file" | "directory" | "other";
  size: number;
  mtimeMs: number;
  /** Permission bits (`mode & 0o7777`). */
  mode: number;
}

export interface DirEntry {
  name: string;
  /** The entry itself, not followed: a symlink is `symlink`. */
  kind: "file" | "directory" | "symlink" | "other";
}

export interface ExecOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  /** Shell executable; the command runs as `<shell> -c <command>`. */
  shell?: string;
  /** Aborting terminates the whole process tree: SIGTERM, then SIGKILL after `killGraceMs`. */
  signal?: AbortSignal;
  killGraceMs?: number;
  /** Output as it arrives. Called synchronously; a slow consumer slows the command (bounded memory). */
  onData(chunk: Uint8Array, stream: "stdout" | "stderr"): void;
}

export interface ExecResult {
  /** Exit code, or null when the shell was ended by a signal. */
  exitCode: number | null;
  signal: string | null;
}

export interface Operations {
  /** Follows symlinks. */
  stat(path: string): Promise<FileInfo>;
  readFile(path: string): Promise<Uint8Array>;
  /** Chunks of the file from byte `start` (default 0) to `end` inclusive (default: the end). Breaking out of the loop closes it. */
  readStream(path: string, options?: { start?: number; end?: number }): AsyncIterable<Uint8Array>;
  writeFile(path: string, data: string | Uint8Array): Promise<void>;
  /** Creates the directory and its parents; an existing directory is fine. */
  mkdir(path: string): Promise<void>;
  /** Resolves symlinks; rejects (ENOENT) for a path that does not exist. */
  realpath(path: string): Promise<string>;
  readdir(path: string): Promise<DirEntry[]>;
  /** Runs a shell command with stdin closed, in its own process group. Rejects only when it cannot start. */
  exec(command: string, options: ExecOptions): Promise<ExecResult>;
}

/** Optional: a backend that confines commands says how, for `coil doctor`. */
export interface OperationsStatus {
  /** `ok` false when the backend cannot confine commands as promised; `report` is printed as it is. */
  doctor?(env: Record<string, string | undefined>): Promise<{ ok: boolean; report: string }>;
}

/** How commands are confined, for `coil doctor` (the doctor plugin prints it after the project line). */
export interface ConfinementService {
  /** The backend's own report when it has one, otherwise the plain statement that commands run unconfined. */
  report(env: Record<string, string | undefined>): Promise<{ ok: boolean; report: string }>;
}

declare module "coil" {
  interface Services {
    /** tools-coding's: whether the commands its bash tool runs are confined. */
    confinement: ConfinementService;
    /** File and process backend for the coding tools (partial implementations are filled from the local one). */
    operations: Partial<Operations> & OperationsStatus;
  }
}
