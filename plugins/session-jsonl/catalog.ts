/**
 * Finding sessions on disk: the folder of a working directory, the latest session there, a session
 * by path or id prefix, and one-line summaries for `coil sessions list` and resume pickers.
 */
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { textOf, type AgentMessage } from "../../api/index.js";
import type { SessionHeader } from "./format.js";
import { codeOf, type SessionOps } from "./file-system.js";
import { forEachLine, readHeader } from "./reader.js";

export interface SessionSummary {
  file: string;
  id: string;
  cwd: string;
  /** ISO creation time (from the header). */
  created: string;
  /** Last change of the file (ms since the epoch). */
  modified: number;
  name?: string;
  /** Message entries in the file (all branches). */
  messages: number;
  /** Text of the first user message, shortened. */
  firstMessage?: string;
  version: number;
  parentSession?: SessionHeader["parentSession"];
}

/** `$COIL_HOME/sessions` (or the plugin's `dir` option). */
export function sessionsRoot(env: NodeJS.ProcessEnv, option?: string, baseDir?: string): string {
  if (option) return expandHome(option, baseDir);
  return join(env.COIL_HOME || join(homedir(), ".coil"), "sessions");
}

export function expandHome(path: string, baseDir = process.cwd()): string {
  if (path === "~" || path.startsWith("~/")) return join(homedir(), path.slice(1));
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

function jsonlFiles(ops: SessionOps, dir: string): string[] {
  try {
    return ops
      .readdirSync(dir)
      .filter((n) => n.endsWith(".jsonl"))
      .map((n) => join(dir, n));
  } catch (error) {
    if (codeOf(error) === "ENOENT" || codeOf(error) === "ENOTDIR") return [];
    throw error;
  }
}

/** Sub-folders of the sessions root (one per working directory). */
function cwdDirs(ops: SessionOps, root: string): string[] {
  try {
    return ops
      .readdirSync(root)
      .map((n) => join(root, n))
      .filter((d) => {
        try {
          return !ops.statSync(d).isFile();
        } catch {
          return false;
        }
      });
  } catch {
    return [];
  }
}

/** Summaries of the sessions in `dirs`, newest first. Files that are not sessions are left out. */
export function listSessions(ops: SessionOps, dirs: readonly string[]): SessionSummary[] {
  const out: SessionSummary[] = [];
  for (const dir of dirs) {
    for (const file of jsonlFiles(ops, dir)) {
      const summary = summarize(ops, file);
      if (summary) out.push(summary);
    }
  }
  return out.sort((a, b) => b.modified - a.modified);
}

/** All sessions under the root, every working directory. */
export function listAll(ops: SessionOps, root: string): SessionSummary[] {
  return listSessions(ops, cwdDirs(ops, root));
}

/**
 * One pass over the file without parsing every line: only lines that can change the summary
 * (the header, session names, the first user message) are parsed.
 */
export function summarize(ops: SessionOps, file: string): SessionSummary | undefined {
  let header: SessionHeader | undefined;
  let messages = 0;
  let name: string | undefined;
  let firstMessage: string | undefined;
  let modified = 0;
  try {
    modified = ops.statSync(file).mtimeMs;
    forEachLine(ops, file, (text, line) => {
      if (line === 1) {
        try {
          const h = JSON.parse(text) as SessionHeader;
          if (h?.type === "session" && typeof h.id === "string")
            header = { ...h, version: typeof h.version === "number" ? h.version : 1 };
        } catch {
          // not a session file
        }
        return header ? undefined : false;
      }
      if (text.startsWith('{"type":"message"')) {
        messages++;
        if (firstMessage === undefined && text.includes('"role":"user"')) {
          try {
            const m = (JSON.parse(text) as { message: AgentMessage }).message;
            if (m.role === "user") firstMessage = oneLine(textOf(m), 80);
          } catch {
            // a torn line
          }
        }
      } else if (text.startsWith('{"type":"session_info"')) {
        try {
          const n = (JSON.parse(text) as { name?: unknown }).name;
          name = typeof n === "string" && n ? n : undefined;
        } catch {
          // a torn line
        }
      }
      return undefined;
    });
  } catch {
    return undefined;
  }
  if (!header) return undefined;
  return {
    file,
    id: header.id,
    cwd: header.cwd,
    created: header.timestamp,
    modified,
    name,
    messages,
    firstMessage,
    version: header.version,
    parentSession: header.parentSession,
  };
}

export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The most recently changed session in `dir` that holds at least one entry. */
export function latestSession(ops: SessionOps, dir: string): string | undefined {
  const files = jsonlFiles(ops, dir)
    .map((file) => {
      try {
        return { file, mtime: ops.statSync(file).mtimeMs };
      } catch {
        return undefined;
      }
    })
    .filter((f): f is { file: string; mtime: number } => f !== undefined)
    .sort((a, b) => b.mtime - a.mtime);
  for (const { file } of files) {
    let lines = 0;
    try {
      forEachLine(ops, file, (text) => {
        if (text.trim()) lines++;
        return lines >= 2 ? false : undefined;
      });
    } catch {
      continue;
    }
    if (lines >= 2 && readHeader(ops, file)) return file;
  }
  return undefined;
}

export type ResolvedRef = { file: string; exists: boolean } | { error: string };

/**
 * `--session <path or id prefix>`. A path (has a slash or ends in .jsonl) may name a new file;
 * an id prefix is looked up in `dir` first, then in every folder under `root`.
 */
export function resolveSessionRef(ops: SessionOps, ref: string, cwd: string, dir: string, root: string): ResolvedRef {
  if (/[/\\]/.test(ref) || ref.endsWith(".jsonl") || ref.startsWith("~")) {
    const file = expandHome(ref, cwd);
    return { file, exists: ops.existsSync(file) };
  }
  const find = (dirs: string[]) => {
    const hits: string[] = [];
    for (const d of dirs) {
      for (const file of jsonlFiles(ops, d)) {
        const named = file.slice(file.lastIndexOf("_") + 1, -".jsonl".length);
        const id = named.startsWith(ref) ? named : readHeader(ops, file)?.id;
        if (id?.startsWith(ref)) hits.push(file);
      }
    }
    return hits;
  };
  let hits = find([dir]);
  if (hits.length === 0) hits = find(cwdDirs(ops, root).filter((d) => resolve(d) !== resolve(dir)));
  if (hits.length === 1) return { file: hits[0]!, exists: true };
  if (hits.length === 0)
    return { error: `no session matches '${ref}' (looked in ${dir} and under ${root}); see \`coil sessions list\`` };
  return {
    error: `'${ref}' matches ${hits.length} sessions; give more of the id:\n${hits.map((h) => `  ${h}`).join("\n")}`,
  };
}
