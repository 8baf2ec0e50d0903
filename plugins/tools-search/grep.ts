/**
 * grep: search file contents with a regular expression. ripgrep when it is on PATH (and the
 * `ripgrep` option allows), otherwise a built-in search with the same output; both honour
 * .gitignore, include hidden files and skip `.git` and binary files.
 *
 * Longer than ~350 lines on purpose: the two backends share one output format (paths, context lines,
 * limits, truncation notes) and are kept side by side so they cannot drift apart.
 */
import { relative, sep } from "node:path";
import { Type, type Static } from "typebox";
import { defineTool, messageOf, type ToolDefinition, type ToolOutput } from "../../api/index.js";
import { globMatcher } from "./glob.js";
import {
  DEFAULT_GREP_LIMIT,
  formatSize,
  LONG_LINE_BYTES,
  MAX_BYTES,
  MAX_LINE_CHARS,
  SEARCH_OVERLAP_BYTES,
  SEARCH_WINDOW_BYTES,
} from "./limits.js";
import type { SearchEnv } from "./options.js";
import type { SearchOperations } from "./search-backend.js";
import { budget, codeOf, displayPath, fail, locatePath, shellQuote, similarHint } from "./util.js";
import { walk, type WalkStats } from "./walk.js";

export const GrepParams = Type.Object({
  pattern: Type.String({ minLength: 1 }),
  path: Type.Optional(Type.String({ description: "Folder or file (default: working directory)" })),
  glob: Type.Optional(Type.String({ description: "'*.ts': names at any depth; 'src/**/*.tsx': paths" })),
  ignoreCase: Type.Optional(Type.Boolean()),
  literal: Type.Optional(Type.Boolean({ description: "pattern is a plain string" })),
  context: Type.Optional(Type.Integer({ minimum: 0, maximum: 50, description: "Lines around each match" })),
  limit: Type.Optional(Type.Integer({ minimum: 1 })),
});
type GrepArgs = Static<typeof GrepParams>;

export interface GrepDetails {
  engine: "ripgrep" | "builtin";
  matches: number;
  limitReached: boolean;
  /** Lines cut to MAX_LINE_CHARS. */
  clippedLines: number;
}

interface Hit {
  file: string;
  line: number;
  /** The line, or its first LONG_LINE_BYTES when `cut`. */
  text: string;
  match: boolean;
  /** The line is longer than LONG_LINE_BYTES and `text` is only its start. */
  cut?: boolean;
  /** Byte offset of the first match in the whole line. */
  matchByte?: number;
}

export function createGrepTool(env: SearchEnv): ToolDefinition<typeof GrepParams, GrepDetails> {
  return defineTool({
    name: "grep",
    label: "Grep",
    description:
      `Search file contents by regular expression (ripgrep syntax), recursively, honouring .gitignore. Returns path:line: text, ` +
      `at most ${DEFAULT_GREP_LIMIT} matches (or limit), lines cut to ${MAX_LINE_CHARS} characters, within ${formatSize(MAX_BYTES)}. Use it instead of grep or rg in bash.`,
    parameters: GrepParams,
    executionMode: "parallel",
    promptSnippet: "grep: search file contents by regular expression (respects .gitignore)",
    async execute(args, run) {
      const ops = env.ops();
      const root = await locatePath(args.path, env.cwd, ops);
      let kind: "file" | "directory" | "other";
      try {
        kind = (await ops.stat(root)).kind;
      } catch (error) {
        const shown = displayPath(root, env.cwd);
        return fail(
          codeOf(error) === "ENOENT"
            ? `Path not found: ${shown}.${await similarHint(root, env.cwd, ops)} Check it with ls or find.`
            : `Cannot search ${shown}: ${messageOf(error)}`,
        );
      }
      const limit = args.limit ?? DEFAULT_GREP_LIMIT;
      const useRg = env.options.ripgrep && (await ops.which("rg")) !== undefined;
      let found: { hits: Hit[]; matches: number; limitReached: boolean; error?: string };
      if (useRg) {
        found = await searchRipgrep(ops, env.cwd, root, kind, args, limit, run.signal);
      } else {
        const regex = buildRegex(args);
        if (typeof regex === "string") return fail(regex);
        found = await searchBuiltin(ops, root, kind, args, regex, limit, run.signal);
      }
      if (found.error) return fail(found.error);
      const details: GrepDetails = {
        engine: useRg ? "ripgrep" : "builtin",
        matches: found.matches,
        limitReached: found.limitReached,
        clippedLines: 0,
      };
      if (found.matches === 0) {
        return {
          content: [
            { type: "text", text: `No matches for ${JSON.stringify(args.pattern)} in ${displayPath(root, env.cwd)}.` },
          ],
          details,
        };
      }

      const lines: string[] = [];
      let previous: Hit | undefined;
      for (const hit of found.hits) {
        if (args.context && previous && (previous.file !== hit.file || previous.line + 1 !== hit.line))
          lines.push("--");
        const shown = displayPath(hit.file, env.cwd);
        const text = clip(hit, shown);
        if (text !== hit.text) details.clippedLines++;
        lines.push(`${shown}${hit.match ? ":" : "-"}${hit.line}${hit.match ? ":" : "-"} ${text}`);
        previous = hit;
      }
      const notices: string[] = [];
      if (found.limitReached)
        notices.push(
          `[${limit} matches limit reached; there may be more. Use limit=${limit * 2} for more, or narrow the pattern, path or glob.]`,
        );
      if (details.clippedLines)
        notices.push(
          `[${details.clippedLines} line${details.clippedLines === 1 ? " was" : "s were"} longer than ${MAX_LINE_CHARS} characters and cut; use read to see them whole.]`,
        );
      return {
        content: [{ type: "text", text: budget(lines, notices).text }],
        details,
      } satisfies ToolOutput<GrepDetails>;
    },
  });
}

/**
 * A line as shown: cut to MAX_LINE_CHARS around its first match when it lies far in. Of a line
 * longer than LONG_LINE_BYTES only the start is known; a match past it gets a command that shows it.
 */
function clip(hit: Hit, shown: string): string {
  const { text } = hit;
  if (text.length <= MAX_LINE_CHARS && !hit.cut) return text; // most lines: no need to find the match's column
  const column = hit.matchByte === undefined ? 0 : charIndex(text, hit.matchByte);
  const long = hit.cut ? `line longer than ${formatSize(LONG_LINE_BYTES)}` : `line has ${text.length} characters`;
  if (hit.cut && hit.matchByte !== undefined && (column === undefined || column + 100 > text.length)) {
    const at = hit.matchByte + 1;
    const see = `sed -n '${hit.line}p' ${shellQuote(shown)} | cut -b ${Math.max(1, at - 200)}-${at + 300}`;
    return `${text.slice(0, 200)}… [${long}; the match at byte ${at} is past the part kept. See it with bash: ${see}]`;
  }
  const c = column ?? 0;
  const start = c > MAX_LINE_CHARS - 100 ? Math.min(c - 100, text.length - MAX_LINE_CHARS) : 0;
  return `${start > 0 ? "…" : ""}${text.slice(start, start + MAX_LINE_CHARS)}… [${long}]`;
}

/** Characters of `text` (UTF-8) before byte `byte`, or undefined when `byte` lies past it. */
function charIndex(text: string, byte: number): number | undefined {
  if (byte <= 0) return 0;
  const bytes = Buffer.from(text, "utf8");
  return byte > bytes.length ? undefined : bytes.subarray(0, byte).toString("utf8").length;
}

function buildRegex(args: GrepArgs): RegExp | string {
  let source = args.literal ? args.pattern.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&") : args.pattern;
  let flags = args.ignoreCase ? "i" : "";
  if (!args.literal && source.startsWith("(?i)")) {
    source = source.slice(4);
    flags = "i";
  }
  try {
    return new RegExp(source, flags + "u");
  } catch {
    try {
      return new RegExp(source, flags);
    } catch (error) {
      return `Invalid regular expression ${JSON.stringify(args.pattern)}: ${messageOf(error)}. Fix it, or pass literal: true to search for the text as is.`;
    }
  }
}

async function searchBuiltin(
  ops: Required<SearchOperations>,
  root: string,
  kind: "file" | "directory" | "other",
  args: GrepArgs,
  regex: RegExp,
  limit: number,
  signal: AbortSignal,
): Promise<{ hits: Hit[]; matches: number; limitReached: boolean }> {
  const hits: Hit[] = [];
  let matches = 0;
  const wanted = args.glob ? globMatcher(args.glob) : undefined;
  const stats: WalkStats = { unreadable: 0 };
  const global = new RegExp(regex.source, regex.flags.includes("g") ? regex.flags : regex.flags + "g");

  const searchFile = async (abs: string): Promise<boolean> => {
    try {
      matches += await searchStream(ops.readStream(abs), abs, global, args.context ?? 0, limit - matches, signal, hits);
    } catch {
      // unreadable files are skipped, as ripgrep does
    }
    return matches >= limit;
  };

  if (kind === "file") {
    await searchFile(root);
  } else {
    for await (const entry of walk(ops, root, signal, stats)) {
      if (entry.kind !== "file") continue;
      if (wanted && !wanted(entry.rel, false)) continue;
      if (await searchFile(entry.abs)) break;
    }
  }
  return { hits, matches, limitReached: matches >= limit };
}

/**
 * One file, line by line as it streams: at most `room` matching lines, with `context` lines around
 * them, appended to `hits`. A line is kept for display only up to LONG_LINE_BYTES and searched in
 * overlapping parts of SEARCH_WINDOW_BYTES, so memory does not grow with the line. Returns the matches.
 */
async function searchStream(
  stream: AsyncIterable<Uint8Array>,
  file: string,
  regex: RegExp,
  context: number,
  room: number,
  signal: AbortSignal,
  hits: Hit[],
): Promise<number> {
  let found = 0;
  let lineNo = 1;
  let preview: Uint8Array[] = []; // the line's first LONG_LINE_BYTES
  let previewBytes = 0;
  let lineBytes = 0;
  let window: Uint8Array[] = []; // the part of the line not searched yet (plus the overlap)
  let windowBytes = 0;
  let windowStart = 0; // byte offset of `window` in the line
  let matchByte: number | undefined;
  let before: Hit[] = [];
  let after = 0;
  let sniffed = false;
  let head: Uint8Array[] = [];
  let headBytes = 0;

  /**
   * Search the window for the line's first match (set `matchByte`). Unless it is the line's last part,
   * only matches that start before the overlap kept for the next part and end before the cut count.
   */
  const searchWindow = (last: boolean) => {
    const bytes = Buffer.concat(window, windowBytes);
    let text = bytes.toString("utf8");
    if (last && text.endsWith("\r")) text = text.slice(0, -1);
    let from = windowBytes; // where the next part starts: the overlap, on a character boundary
    if (!last) {
      from = windowBytes - SEARCH_OVERLAP_BYTES;
      while (from < windowBytes && (bytes[from]! & 0xc0) === 0x80) from++;
    }
    const nextStart = last ? text.length : bytes.subarray(0, from).toString("utf8").length;
    regex.lastIndex = windowStart > 0 ? 1 : 0; // the window's first character is not a line start
    for (let m = regex.exec(text); m; m = regex.exec(text)) {
      if (m.index > nextStart) break; // the next part sees it whole
      if (last || m.index + m[0].length < text.length) {
        matchByte = windowStart + Buffer.byteLength(text.slice(0, m.index), "utf8");
        break;
      }
      if (m[0].length === 0) regex.lastIndex++;
    }
    if (!last) {
      window = [bytes.subarray(from)];
      windowStart += from;
      windowBytes -= from;
    }
  };

  const lineHit = (match: boolean): Hit => {
    const cut = lineBytes > LONG_LINE_BYTES;
    let text = Buffer.concat(preview, previewBytes).toString("utf8");
    if (!cut && text.endsWith("\r")) text = text.slice(0, -1);
    return { file, line: lineNo, text, match, cut, matchByte: match ? matchByte : undefined };
  };

  const endLine = () => {
    const searching = found < room;
    if (searching && matchByte === undefined) searchWindow(true);
    if (searching && matchByte !== undefined) {
      hits.push(...before);
      before = [];
      hits.push(lineHit(true));
      found++;
      after = context;
    } else if (after > 0) {
      hits.push(lineHit(false));
      after--;
    } else if (context > 0) {
      before.push(lineHit(false));
      if (before.length > context) before.shift();
    }
    lineNo++;
    preview = [];
    previewBytes = 0;
    lineBytes = 0;
    window = [];
    windowBytes = 0;
    windowStart = 0;
    matchByte = undefined;
  };

  const take = (piece: Uint8Array) => {
    if (previewBytes < LONG_LINE_BYTES) {
      const part = piece.subarray(0, LONG_LINE_BYTES - previewBytes);
      preview.push(part);
      previewBytes += part.length;
    }
    lineBytes += piece.length;
    if (found >= room || matchByte !== undefined) return; // only context is collected now, or the line already matched
    window.push(piece);
    windowBytes += piece.length;
    if (windowBytes >= SEARCH_WINDOW_BYTES) searchWindow(false);
  };

  const feed = (chunk: Uint8Array): boolean => {
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(10, pos);
      const end = nl < 0 ? chunk.length : nl;
      if (end > pos) take(chunk.subarray(pos, end));
      if (nl < 0) break;
      endLine();
      if (found >= room && after === 0) return false;
      pos = nl + 1;
    }
    return true;
  };

  for await (const chunk of stream) {
    if (signal.aborted) break;
    if (!sniffed) {
      // binary files (a NUL in the first 8 KB) are skipped, as ripgrep does
      head.push(chunk);
      headBytes += chunk.length;
      if (headBytes < 8192) continue;
      sniffed = true;
      const start = Buffer.concat(head, headBytes);
      head = [];
      if (start.subarray(0, 8192).indexOf(0) >= 0) return 0;
      if (!feed(start)) return found;
      continue;
    }
    if (!feed(chunk)) return found;
  }
  if (!sniffed) {
    const start = Buffer.concat(head, headBytes);
    if (start.indexOf(0) >= 0) return 0;
    if (!feed(start)) return found;
  }
  if (lineBytes > 0) endLine();
  return found;
}

// ripgrep prints lines as `path\0line:column:text` (matches) and `path\0line-text` (context); a line
// longer than LONG_LINE_BYTES comes as its start and one of these suffixes.
const RG_MATCH = /^(\d+):(\d+):/;
const RG_CONTEXT = /^(\d+)-/;
const RG_CUT = / \[\.\.\. (?:omitted end of long line|\d+ more matche?s?)\]$/;

async function searchRipgrep(
  ops: Required<SearchOperations>,
  cwd: string,
  root: string,
  kind: "file" | "directory" | "other",
  args: GrepArgs,
  limit: number,
  signal: AbortSignal,
): Promise<{ hits: Hit[]; matches: number; limitReached: boolean; error?: string }> {
  const flags = ["--null", "--line-number", "--column", "--no-heading", "--with-filename", "--color", "never"];
  flags.push("--max-columns", String(LONG_LINE_BYTES), "--max-columns-preview");
  flags.push("--hidden", "--no-require-git", "--sort", "path", "--glob", "!.git");
  if (args.ignoreCase) flags.push("--ignore-case");
  if (args.literal) flags.push("--fixed-strings");
  if (args.context) flags.push("--context", String(args.context));
  // ripgrep's --glob overrides .gitignore (a whitelisted *.log would bring ignored logs back), so the
  // glob filters rg's results with the matcher the built-in search uses. A name-only glob is also
  // given to rg as a file type, which narrows the search but, unlike --glob, keeps ignore rules.
  const wanted = args.glob && kind === "directory" ? globMatcher(args.glob) : undefined;
  if (wanted && /^[\w.*?{},@+-]+$/.test(args.glob!.trim()))
    flags.push("--type-add", `coilglob:${args.glob!.trim()}`, "--type", "coilglob");
  const command = ["rg", ...flags, "--regexp", args.pattern, "--", root].map(shellQuote).join(" ");

  const hits: Hit[] = [];
  let matches = 0;
  let full = false;
  let lastMatchFile: string | undefined;
  let stderr = "";
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  const handle = (raw: Buffer) => {
    if (controller.signal.aborted) return;
    const nul = raw.indexOf(0);
    if (nul < 0) return; // "--" between groups, or a note such as "binary file matches"
    const file = raw.subarray(0, nul).toString("utf8");
    let rest = raw.subarray(nul + 1);
    const head = rest.subarray(0, 48).toString("latin1");
    const match = RG_MATCH.exec(head);
    const ctx = match ? undefined : RG_CONTEXT.exec(head);
    if (!match && !ctx) return;
    if (full && (match || file !== lastMatchFile)) return controller.abort(); // keep trailing context of the last match only
    if (wanted && !wanted(relative(root, file).split(sep).join("/"), false)) return;
    rest = rest.subarray((match ?? ctx)![0].length);
    let text = rest.toString("utf8");
    let cut = false;
    const suffix = RG_CUT.exec(text);
    if (suffix && rest.length - Buffer.byteLength(suffix[0]) >= LONG_LINE_BYTES - 3) {
      cut = true;
      text = text.slice(0, suffix.index);
    }
    if (!cut && text.endsWith("\r")) text = text.slice(0, -1);
    const line = Number((match ?? ctx)![1]);
    if (match) {
      matches++;
      lastMatchFile = file;
      if (matches >= limit) full = true;
    }
    hits.push({ file, line, text, match: !!match, cut, matchByte: match ? Number(match[2]) - 1 : undefined });
  };
  let result: Awaited<ReturnType<SearchOperations["exec"]>>;
  try {
    result = await ops.exec(command, {
      cwd,
      signal: controller.signal,
      onData: (chunk, stream) => {
        if (stream === "stderr") {
          if (stderr.length < 4096) stderr += Buffer.from(chunk).toString("utf8");
          return;
        }
        let pos = 0;
        while (pos < chunk.length) {
          const nl = chunk.indexOf(10, pos);
          const end = nl < 0 ? chunk.length : nl;
          // rg keeps lines short (--max-columns); anything longer is not a line we parse
          if (pendingBytes < 4 * LONG_LINE_BYTES) {
            pending.push(chunk.subarray(pos, end));
            pendingBytes += end - pos;
          }
          if (nl < 0) break;
          handle(Buffer.concat(pending, pendingBytes));
          pending = [];
          pendingBytes = 0;
          pos = nl + 1;
        }
      },
    });
  } catch (error) {
    return { hits, matches, limitReached: false, error: `Cannot run ripgrep: ${messageOf(error)}` };
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  if (pendingBytes > 0) handle(Buffer.concat(pending, pendingBytes));
  if (result.exitCode === 2 && matches === 0 && !controller.signal.aborted) {
    const reason = stderr.trim() || "ripgrep failed";
    return {
      hits,
      matches,
      limitReached: false,
      error: `grep failed: ${reason}${/regex/i.test(reason) ? "\nFix the pattern, or pass literal: true to search for the text as is." : ""}`,
    };
  }
  return { hits, matches, limitReached: full };
}
