/** Path handling shared by the tools: what the model may pass, and how results name files. */
import { dirname, isAbsolute, relative, resolve } from "node:path";
import { resolveTypedPath } from "../../lib/typed-path.js";
import type { Operations } from "./local-operations.js";

/** The file a typed path means (lib/typed-path.ts): as typed, or the one existing variant (NFC/NFD, Unicode spaces, quotes, a leading @). */
export const locatePath = (path: string, cwd: string, ops: Operations): Promise<string> =>
  resolveTypedPath(path, cwd, ops);

/** How results name a file: relative to `cwd` when inside it, absolute otherwise. */
export function displayPath(abs: string, cwd: string): string {
  const rel = relative(cwd, abs);
  if (rel === "") return ".";
  return rel.startsWith("..") || isAbsolute(rel) ? abs : rel;
}

/**
 * The key mutating calls serialise on: the real path (symlinks resolved). For a file that does not
 * exist yet, the real path of its nearest existing ancestor plus the rest.
 */
export async function canonicalPath(abs: string, ops: Operations): Promise<string> {
  let head = abs;
  const rest: string[] = [];
  for (;;) {
    try {
      const real = await ops.realpath(head);
      return rest.length ? resolve(real, ...rest.reverse()) : real;
    } catch {
      const parent = dirname(head);
      if (parent === head) return abs;
      rest.push(head.slice(parent.length).replace(/^[\\/]+/, ""));
      head = parent;
    }
  }
}

/** Models trained on other harnesses send `file_path`; accept it as `path`. */
export function acceptFilePath(args: Record<string, unknown>): Record<string, unknown> {
  if (args.path === undefined && typeof args.file_path === "string") {
    const { file_path, ...rest } = args;
    return { ...rest, path: file_path };
  }
  return args;
}

/** A Node-style error code, if any. */
export function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}
