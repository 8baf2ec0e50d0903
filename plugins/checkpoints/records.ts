/** What checkpoints records in the session, and the arguments of `/rewind`. */

/** The session entry type that ties a prompt to its checkpoints. */
export const CHECKPOINT_ENTRY = "checkpoint";

/** The session entry a conversation rewind leaves on the new branch (it is the branch's leaf until the next prompt). */
export const REWIND_ENTRY = "checkpoint-rewind";

/** What a rewind records: the point, the leaf it left, and for the files the commits before and after. */
export interface RewindRecord {
  point: number;
  entry: string;
  from: string | null;
  conversation: boolean;
  code?: { kept: string; restored: string };
}

/** What the session records for one prompt that changed files (the newest record of a prompt wins). */
export interface CheckpointRecord {
  /** The user prompt's session entry. */
  entry: string;
  /** Commit in the shadow repository: the files before the prompt's first change. */
  before: string;
  /** Commit: the files as the agent left them at the end of its latest turn with changes. */
  after?: string;
  time: number;
  /** Files changed from `before` to `after`, each with what changed it (`edit`, `write`, `bash`, an MCP tool, ...). */
  changed: Record<string, string>;
  /** Left out of the snapshot: files over the size limit, folders that are git repositories of their own, ignored folders. */
  large: string[];
  nested?: string[];
  ignored: string[];
  /** Found from the shadow repository: the run ended (killed) before its first turn was recorded. */
  unfinished?: boolean;
}

/** One prompt on the active path, numbered from 1. */
export interface RewindPoint {
  n: number;
  entry: string;
  parentId: string | null;
  time: string;
  prompt: string;
  record?: CheckpointRecord;
}

export function parseRewindArgs(args: string): {
  point?: number;
  code: boolean;
  conversation: boolean;
  force: boolean;
  pick: boolean;
} {
  const words = args.split(/\s+/).filter(Boolean);
  const flags = new Set(words.filter((w) => w.startsWith("--")));
  for (const f of flags)
    if (!["--code", "--conversation", "--force", "--pick"].includes(f))
      throw new Error(`unknown option ${f}; use --code, --conversation or --force`);
  const rest = words.filter((w) => !w.startsWith("--"));
  if (rest.length > 1 || (rest[0] !== undefined && !/^\d+$/.test(rest[0])))
    throw new Error(`expected a point number, got '${rest.join(" ")}'; /rewind lists the points`);
  const onlyCode = flags.has("--code");
  const onlyConversation = flags.has("--conversation");
  return {
    point: rest[0] !== undefined ? Number(rest[0]) : undefined,
    code: onlyCode || !onlyConversation,
    conversation: onlyConversation || !onlyCode,
    force: flags.has("--force"),
    pick: flags.has("--pick"),
  };
}
