/** context-files' contract (types only): the `context-files` service the system prompt reads. */

export interface ContextFile {
  path: string;
  /** The text the model gets (with a truncation note when it was cut). */
  content: string;
  truncated: boolean;
  /** Size of the file on disk. */
  bytes: number;
}

export interface ContextFilesService {
  /** The files in order: `$COIL_HOME` first, then from the repository root down to the working directory. */
  files(): readonly ContextFile[];
}

declare module "coil" {
  interface Services {
    "context-files": ContextFilesService;
  }
}
