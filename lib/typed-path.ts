/**
 * Paths as people and models type them. A path that does not exist as typed is retried with the
 * spellings a person means: without a leading `@` (how chat UIs mention files), and name by name
 * with the variants that look the same on screen — NFC vs NFD, U+00A0 / U+202F and other Unicode
 * spaces vs a plain space (macOS writes `Screenshot 2024-01-01 at 10.00.00\u202FAM.png`), curly vs
 * straight quotes, and `am`/`pm` in either case. A variant is used only when exactly one directory
 * entry fits. The "similar names" hint for a missing file compares names through the same folding.
 *
 * Used by every path-taking tool (read, edit, write in tools-coding; grep, find, ls in tools-search).
 */
import { homedir } from "node:os";
import { basename, dirname, extname, isAbsolute, join, parse, resolve, sep } from "node:path";

/** What the resolver needs from a file backend (the tools' `operations` service fits). */
export interface PathLookup {
  /** Resolves for an existing path, rejects otherwise. */
  stat(path: string): Promise<unknown>;
  readdir(path: string): Promise<readonly { name: string }[]>;
}

/** `~` and `~/x` expand to the home directory; relative paths resolve against `cwd`. No file access. */
export function expandPath(path: string, cwd: string): string {
  let p = path.trim();
  if (p === "~") p = homedir();
  else if (p.startsWith("~/") || p.startsWith(`~${sep}`)) p = resolve(homedir(), p.slice(2));
  return isAbsolute(p) ? resolve(p) : resolve(cwd, p);
}

/** Characters people and screenshots put where ASCII ones are meant (also the edit tool's tolerant match). */
export const LOOKALIKES = {
  spaces: "\u00A0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200A\u202F\u205F\u3000",
  singleQuotes: "\u2018\u2019\u201A\u201B\u2032",
  doubleQuotes: "\u201C\u201D\u201E\u201F\u2033",
} as const;
const SPACES = new RegExp(`[${LOOKALIKES.spaces}]`, "g");
const SINGLE_QUOTES = new RegExp(`[${LOOKALIKES.singleQuotes}]`, "g");
const DOUBLE_QUOTES = new RegExp(`[${LOOKALIKES.doubleQuotes}]`, "g");
const MERIDIEM = / (am|pm)(?=[ .]|$)/gi;

/** The key two spellings of one file name share: NFC, Unicode spaces as spaces, straight quotes, `AM`/`PM` upper-case. */
export function nameKey(name: string): string {
  return name
    .normalize("NFC")
    .replace(SPACES, " ")
    .replace(SINGLE_QUOTES, "'")
    .replace(DOUBLE_QUOTES, '"')
    .replace(MERIDIEM, (m) => m.toUpperCase());
}

const exists = (fs: PathLookup, path: string) =>
  fs.stat(path).then(
    () => true,
    () => false,
  );

/**
 * `abs` walked name by name, each name that does not exist replaced by the one entry with the same
 * folded spelling. `complete` when every name was found; otherwise the names from the first one
 * without a single fit on are kept as typed (so a new file lands in the directory that exists).
 */
async function matchByName(abs: string, fs: PathLookup): Promise<{ path: string; complete: boolean }> {
  const { root } = parse(abs);
  const names = abs.slice(root.length).split(sep).filter(Boolean);
  let current = root;
  for (const [i, name] of names.entries()) {
    const direct = join(current, name);
    if (await exists(fs, direct)) {
      current = direct;
      continue;
    }
    const key = nameKey(name);
    const entries = await fs.readdir(current).catch(() => [] as readonly { name: string }[]);
    const fits = entries.filter((e) => e.name !== name && nameKey(e.name) === key);
    if (fits.length !== 1) return { path: join(current, ...names.slice(i)), complete: false };
    current = join(current, fits[0]!.name);
  }
  return { path: current, complete: true };
}

/**
 * The absolute path a typed path means: as typed when it exists; otherwise the one existing variant
 * (see the module comment); otherwise the path as typed, with the directories that exist under
 * another spelling spelled as on disk, so a new file is created where the user sees its directory
 * and a missing one is reported there.
 */
export async function resolveTypedPath(typed: string, cwd: string, fs: PathLookup): Promise<string> {
  const abs = expandPath(typed, cwd);
  if (await exists(fs, abs)) return abs;
  const trimmed = typed.trim();
  if (trimmed.startsWith("@") && trimmed.length > 1) {
    const bare = await matchByName(expandPath(trimmed.slice(1), cwd), fs);
    if (bare.complete) return bare.path;
  }
  return (await matchByName(abs, fs)).path;
}

/** Names in the directory of `abs` that look like what was asked for: same folded name in any case, same stem, or containing the stem. */
export async function similarNames(fs: PathLookup, abs: string, max = 5): Promise<string[]> {
  const fold = (name: string) => nameKey(name).toLowerCase();
  try {
    const wanted = fold(basename(abs));
    const stem = basename(wanted, extname(wanted));
    const entries = await fs.readdir(dirname(abs));
    return entries
      .map((e) => e.name)
      .filter((name) => {
        const folded = fold(name);
        return (
          folded === wanted || basename(folded, extname(folded)) === stem || (stem.length >= 3 && folded.includes(stem))
        );
      })
      .sort()
      .slice(0, max);
  } catch {
    return [];
  }
}
