/**
 * Which instruction files exist where, and their text with `@path` imports expanded. No state: index.ts
 * caches what these return and decides when to look again.
 */
import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { Compat } from "../../lib/compat.js";

/** One place an instruction file may be, in the order the model sees them. */
export interface Place {
  path: string;
  /** Why it is looked for: `user`, `project`, and the family when `compat` gates it. */
  kind: string;
  family?: keyof Compat;
}

/** The folders to look in: the repository root (a folder holding `.git`) or `/`, down to `cwd`. */
export function folderChain(cwd: string): string[] {
  const up: string[] = [];
  let repo: number | undefined;
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    up.push(dir);
    if (repo === undefined && exists(join(dir, ".git"))) repo = up.length;
    if (dirname(dir) === dir) break;
  }
  return up.slice(0, repo ?? up.length).reverse();
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The user-level files: `$COIL_HOME`'s, then Claude Code's, Codex's and Pi's, each as `compat` allows. */
export function userPlaces(
  coilHome: string,
  userHome: string,
  names: readonly string[],
  compat: Compat,
  home: boolean,
): Place[] {
  const out: Place[] = [];
  if (home) for (const n of names) out.push({ path: join(coilHome, n), kind: "user", ...familyOf(n) });
  if (compat.claude) out.push({ path: join(userHome, ".claude", "CLAUDE.md"), kind: "user", family: "claude" });
  if (compat.agents) out.push({ path: join(userHome, ".codex", "AGENTS.md"), kind: "user", family: "agents" });
  if (compat.pi) out.push({ path: join(userHome, ".pi", "agent", "AGENTS.md"), kind: "user", family: "pi" });
  return out.filter((p) => !p.family || compat[p.family]);
}

/** `CLAUDE.*` names belong to the claude family (so `compat.claude: false` turns them off too). */
function familyOf(name: string): { family?: keyof Compat } {
  return /^CLAUDE\b/i.test(name) ? { family: "claude" } : {};
}

/**
 * The files of one folder: `AGENTS.override.md` (agents; it stands in for AGENTS.md, as in Codex), the
 * `names` (AGENTS.md, CLAUDE.md), `.claude/CLAUDE.md`, `.claude/rules/*.md` and `CLAUDE.local.md` (claude).
 */
export function folderPlaces(dir: string, names: readonly string[], compat: Compat): Place[] {
  const out: Place[] = [];
  const override = compat.agents && exists(join(dir, "AGENTS.override.md"));
  if (override) out.push({ path: join(dir, "AGENTS.override.md"), kind: "project", family: "agents" });
  for (const n of names) {
    if (override && n === "AGENTS.md") continue;
    out.push({ path: join(dir, n), kind: "project", ...familyOf(n) });
  }
  if (compat.claude) {
    out.push({ path: join(dir, ".claude", "CLAUDE.md"), kind: "project", family: "claude" });
    let rules: string[] = [];
    try {
      rules = readdirSync(join(dir, ".claude", "rules"))
        .filter((f) => f.endsWith(".md"))
        .sort();
    } catch {
      rules = [];
    }
    for (const r of rules) out.push({ path: join(dir, ".claude", "rules", r), kind: "project", family: "claude" });
    out.push({ path: join(dir, "CLAUDE.local.md"), kind: "project", family: "claude" });
  }
  return out.filter((p) => !p.family || compat[p.family]);
}

/** At most this many levels of `@path` imports are followed (as Claude Code does). */
export const IMPORT_DEPTH = 5;

/** Markdown without fenced code blocks and inline code spans (imports inside them are text, not imports). */
function outsideCode(text: string): string {
  const lines: string[] = [];
  let fence: string | undefined;
  for (const line of text.split("\n")) {
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence !== undefined) {
      if (m && m[1]![0] === fence[0] && m[1]!.length >= fence.length) fence = undefined;
      lines.push("");
    } else if (m) {
      fence = m[1]!;
      lines.push("");
    } else lines.push(line.replace(/(`+)[^`]*?\1/g, ""));
  }
  return lines.join("\n");
}

/** `@path` references: after a space or at a line start; trailing punctuation is not part of the path. */
export function importsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of outsideCode(text).matchAll(/(?:^|[\s(])@([^\s`'"<>()]+)/gm)) {
    const ref = m[1]!.replace(/[.,;:!?)\]]+$/, "");
    if (ref && !out.includes(ref)) out.push(ref);
  }
  return out;
}

/** A reference that plainly means a file (`./x`, `~/x`, `/x`, `x/y.md`, `x.md`); an unresolved `@name` is left as text. */
const looksLikePath = (ref: string) => /^(\.{1,2}\/|~\/|\/)/.test(ref) || /\.[A-Za-z0-9]+$/.test(ref);

export interface Expanded {
  /** The file's text followed by what it imports, each import under a heading. */
  text: string;
  /** Every file read (the file itself first), for change detection. */
  files: string[];
  /** Cycles, missing files, the depth limit and imports left out, one line each (the model sees them too). */
  notes: string[];
  /** For `coil doctor` only: imports not repeated because the file is in the context already. */
  info: string[];
  /** Outside imports waiting for the user's approval (absolute real paths). */
  pending: string[];
}

/** Whether an import may be read: a deny rule, or a file outside the project the user has not approved. */
export type ImportCheck = (
  target: string,
  real: string,
) => { ok: true } | { ok: false; reason: string; pending?: boolean };

export interface ImportContext {
  /** Real paths already in the context (files loaded and what they imported), and who brought each in. */
  seen: Map<string, string>;
  check?: ImportCheck;
}

/**
 * The text of an instruction file with its `@path` imports appended (relative to the importing file,
 * `~/` the user's home), recursively up to IMPORT_DEPTH levels. Each file reaches the model once: one
 * already in the context (`seen`: an AGENTS.md loaded on its own, or imported before) is not repeated.
 * `check` may leave an import out (a deny rule, an outside file not approved). A cycle, a missing file,
 * the depth limit or a file left out gives a note, shown to the model and by `coil doctor`.
 */
export function expandImports(
  path: string,
  text: string,
  userHome: string,
  read: (path: string) => string | undefined,
  context: ImportContext = { seen: new Map() },
): Expanded {
  const files = [path];
  const notes: string[] = [];
  const info: string[] = [];
  const pending: string[] = [];
  const parts: string[] = [text];
  const { seen, check } = context;
  seen.set(realOf(path), path);
  const walk = (from: string, body: string, depth: number, chain: string[]) => {
    for (const ref of importsOf(body)) {
      const target = ref.startsWith("~/")
        ? join(userHome, ref.slice(2))
        : isAbsolute(ref)
          ? ref
          : resolve(dirname(from), ref);
      const real = realOf(target);
      if (chain.includes(real)) {
        notes.push(`${from}: @${ref} imports a file that imports it (a cycle); not expanded again`);
        continue;
      }
      const already = seen.get(real);
      if (already !== undefined) {
        if (already !== from)
          info.push(
            `${from}: @${ref} is already in the context (${realOf(already) === real ? "an instruction file" : `imported by ${already}`}); not repeated`,
          );
        continue;
      }
      if (depth >= IMPORT_DEPTH) {
        notes.push(`${from}: @${ref} not expanded: imports are followed ${IMPORT_DEPTH} levels deep`);
        continue;
      }
      if (!isFile(target)) {
        if (looksLikePath(ref)) notes.push(`${from}: @${ref} not found (looked for ${target})`);
        continue;
      }
      // judged before it is read: a denied file's bytes never enter coil's memory
      const verdict = check?.(target, real) ?? { ok: true };
      if (!verdict.ok) {
        notes.push(`${from}: @${ref} not imported: ${verdict.reason}`);
        if (verdict.pending && !pending.includes(real)) pending.push(real);
        continue;
      }
      const got = read(target);
      if (got === undefined) continue;
      seen.set(real, from);
      files.push(target);
      parts.push(`### Imported by ${from}: @${ref} (${target})\n\n${got.trim()}`);
      walk(target, got, depth + 1, [...chain, real]);
    }
  };
  walk(path, text, 0, [realOf(path)]);
  if (notes.length) parts.push(notes.map((n) => `[coil: ${n}]`).join("\n"));
  return { text: parts.join("\n\n"), files, notes, info, pending };
}

export function realOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The text of a regular file, or undefined (missing, a folder, unreadable). */
export function readIfFile(path: string): string | undefined {
  try {
    return statSync(path).isFile() ? readFileSync(path, "utf8") : undefined;
  } catch {
    return undefined;
  }
}
