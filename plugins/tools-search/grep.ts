/**
 * grep: search file contents with a regular expression. ripgrep when it is on PATH (and the
 * `ripgrep` option allows), otherwise a built-in search with the same output; both honour
 * .gitignore, include hidden files and skip `.git` and binary files.
 */
import { relative, sep } from "node:path";
import { Type, type Static } from "typebox";
import { defineTool, messageOf, type ToolDefinition, type ToolOutput } from "../../kernel/index.js";
import { globMatcher } from "./glob.js";
import { DEFAULT_GREP_LIMIT, formatSize, MAX_BYTES, MAX_LINE_CHARS, MAX_SEARCH_FILE_BYTES } from "./limits.js";
import type { SearchEnv } from "./options.js";
import type { SearchOperations } from "./operations.js";
import { budget, codeOf, displayPath, fail, locatePath, shellQuote, similarHint } from "./util.js";
import { walk, type WalkStats } from "./walk.js";

export const GrepParams = Type.Object({
  pattern: Type.String({ minLength: 1, description: "Regular expression to search for (a plain string with literal: true)" }),
  path: Type.Optional(Type.String({ description: "Directory or file to search (default: the working directory)" })),
  glob: Type.Optional(Type.String({ description: "Only files matching this glob: '*.ts' matches names at any depth, 'src/**/*.tsx' paths below the search directory" })),
  ignoreCase: Type.Optional(Type.Boolean({ description: "Match case-insensitively" })),
  literal: Type.Optional(Type.Boolean({ description: "Treat pattern as a plain string, not a regular expression" })),
  context: Type.Optional(Type.Integer({ minimum: 0, maximum: 50, description: "Lines of context before and after each match" })),
  limit: Type.Optional(Type.Integer({ minimum: 1, description: `Most matching lines to return (default ${DEFAULT_GREP_LIMIT})` })),
});
type GrepArgs = Static<typeof GrepParams>;

export interface GrepDetails {
  engine: "ripgrep" | "builtin";
  matches: number;
  limitReached: boolean;
  /** Lines cut to MAX_LINE_CHARS. */
  clippedLines: number;
  /** Files the built-in search skipped for size. */
  skippedLargeFiles?: number;
}

interface Hit {
  file: string;
  line: number;
  text: string;
  match: boolean;
  /** Character index of the first match in `text`, for cutting long lines around it. */
  column?: number;
}

export function createGrepTool(env: SearchEnv): ToolDefinition<typeof GrepParams, GrepDetails> {
  return defineTool({
    name: "grep",
    label: "Grep",
    description:
      `Search file contents for a regular expression (ripgrep syntax; set literal: true for a plain string). Searches the working directory or the given path, recursively, ` +
      `honouring .gitignore and skipping binary files and .git. Returns matching lines as path:line: text (context lines as path-line- text), ` +
      `at most ${DEFAULT_GREP_LIMIT} matches unless limit says otherwise, each line cut to ${MAX_LINE_CHARS} characters, the whole result within ${formatSize(MAX_BYTES)}.`,
    parameters: GrepParams,
    executionMode: "parallel",
    promptSnippet: "grep: search file contents by regular expression (respects .gitignore)",
    promptGuidelines: ["Use grep to search code instead of grep or rg in bash; narrow it with path and glob."],
    async execute(args, run) {
      const ops = env.ops();
      const root = await locatePath(args.path, env.cwd, ops);
      let kind: "file" | "directory" | "other";
      try {
        kind = (await ops.stat(root)).kind;
      } catch (error) {
        const shown = displayPath(root, env.cwd);
        return fail(codeOf(error) === "ENOENT" ? `Path not found: ${shown}.${await similarHint(root, env.cwd, ops)} Check it with ls or find.` : `Cannot search ${shown}: ${messageOf(error)}`);
      }
      const limit = args.limit ?? DEFAULT_GREP_LIMIT;
      const useRg = env.options.ripgrep && (await ops.which("rg")) !== undefined;
      let found: { hits: Hit[]; matches: number; limitReached: boolean; skippedLarge?: number; error?: string };
      if (useRg) {
        found = await searchRipgrep(ops, env.cwd, root, kind, args, limit, run.signal);
      } else {
        const regex = buildRegex(args);
        if (typeof regex === "string") return fail(regex);
        found = await searchBuiltin(ops, root, kind, args, regex, limit, run.signal);
      }
      if (found.error) return fail(found.error);
      const details: GrepDetails = { engine: useRg ? "ripgrep" : "builtin", matches: found.matches, limitReached: found.limitReached, clippedLines: 0 };
      if (found.skippedLarge) details.skippedLargeFiles = found.skippedLarge;
      if (found.matches === 0) {
        const skipped = found.skippedLarge ? ` (${found.skippedLarge} files over ${formatSize(MAX_SEARCH_FILE_BYTES)} were not searched)` : "";
        return { content: [{ type: "text", text: `No matches for ${JSON.stringify(args.pattern)} in ${displayPath(root, env.cwd)}${skipped}.` }], details };
      }

      const lines: string[] = [];
      let previous: Hit | undefined;
      for (const hit of found.hits) {
        if (args.context && previous && (previous.file !== hit.file || previous.line + 1 !== hit.line)) lines.push("--");
        const text = clip(hit.text, hit.column);
        if (text !== hit.text) details.clippedLines++;
        lines.push(`${displayPath(hit.file, env.cwd)}${hit.match ? ":" : "-"}${hit.line}${hit.match ? ":" : "-"} ${text}`);
        previous = hit;
      }
      const notices: string[] = [];
      if (found.limitReached) notices.push(`[${limit} matches limit reached; there may be more. Use limit=${limit * 2} for more, or narrow the pattern, path or glob.]`);
      if (details.clippedLines) notices.push(`[${details.clippedLines} line${details.clippedLines === 1 ? " was" : "s were"} longer than ${MAX_LINE_CHARS} characters and cut; use read to see them whole.]`);
      if (found.skippedLarge) notices.push(`[Skipped ${found.skippedLarge} file${found.skippedLarge === 1 ? "" : "s"} larger than ${formatSize(MAX_SEARCH_FILE_BYTES)}; search those with bash.]`);
      return { content: [{ type: "text", text: budget(lines, notices).text }], details } satisfies ToolOutput<GrepDetails>;
    },
  });
}

/** A long line cut to MAX_LINE_CHARS, around the match when it lies far in. */
function clip(text: string, column = 0): string {
  if (text.length <= MAX_LINE_CHARS) return text;
  const start = column > MAX_LINE_CHARS - 100 ? Math.min(column - 100, text.length - MAX_LINE_CHARS) : 0;
  return `${start > 0 ? "…" : ""}${text.slice(start, start + MAX_LINE_CHARS)}… [line has ${text.length} characters]`;
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
): Promise<{ hits: Hit[]; matches: number; limitReached: boolean; skippedLarge: number }> {
  const hits: Hit[] = [];
  let matches = 0;
  let skippedLarge = 0;
  const context = args.context ?? 0;
  const wanted = args.glob ? globMatcher(args.glob) : undefined;
  const stats: WalkStats = { unreadable: 0 };

  const searchFile = async (abs: string): Promise<boolean> => {
    try {
      if ((await ops.stat(abs)).size > MAX_SEARCH_FILE_BYTES) {
        skippedLarge++;
        return false;
      }
      const bytes = await ops.readFile(abs);
      if (bytes.subarray(0, 8192).indexOf(0) >= 0) return false; // binary
      const lines = Buffer.from(bytes).toString("utf8").split("\n");
      if (lines[lines.length - 1] === "") lines.pop();
      const matched: { index: number; column: number }[] = [];
      for (let i = 0; i < lines.length && matches + matched.length < limit; i++) {
        const line = lines[i]!.endsWith("\r") ? lines[i]!.slice(0, -1) : lines[i]!;
        lines[i] = line;
        const m = regex.exec(line);
        if (m) matched.push({ index: i, column: m.index });
      }
      const byIndex = new Map(matched.map((m) => [m.index, m.column]));
      let next = 0; // first line index not yet emitted
      for (const m of matched) {
        const from = Math.max(next, m.index - context);
        const to = Math.min(lines.length - 1, m.index + context);
        for (let i = from; i <= to; i++) {
          const column = byIndex.get(i);
          // a context line past this match that is itself a match is emitted by its own turn
          if (i > m.index && column !== undefined) break;
          hits.push({ file: abs, line: i + 1, text: lines[i]!.endsWith("\r") ? lines[i]!.slice(0, -1) : lines[i]!, match: column !== undefined, column });
          next = i + 1;
        }
      }
      matches += matched.length;
      return matches >= limit;
    } catch {
      return false; // unreadable files are skipped, as ripgrep does
    }
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
  return { hits, matches, limitReached: matches >= limit, skippedLarge };
}

type RgText = { text?: string; bytes?: string };
const rgText = (t: RgText | undefined) => (t?.text ?? (t?.bytes ? Buffer.from(t.bytes, "base64").toString("utf8") : ""));

async function searchRipgrep(
  ops: Required<SearchOperations>,
  cwd: string,
  root: string,
  kind: "file" | "directory" | "other",
  args: GrepArgs,
  limit: number,
  signal: AbortSignal,
): Promise<{ hits: Hit[]; matches: number; limitReached: boolean; error?: string }> {
  const flags = ["--json", "--hidden", "--no-require-git", "--sort", "path", "--glob", "!.git"];
  if (args.ignoreCase) flags.push("--ignore-case");
  if (args.literal) flags.push("--fixed-strings");
  if (args.context) flags.push("--context", String(args.context));
  // ripgrep's --glob overrides .gitignore (a whitelisted *.log would bring ignored logs back), so the
  // glob filters rg's results with the matcher the built-in search uses. A name-only glob is also
  // given to rg as a file type, which narrows the search but, unlike --glob, keeps ignore rules.
  const wanted = args.glob && kind === "directory" ? globMatcher(args.glob) : undefined;
  if (wanted && /^[\w.*?{},@+-]+$/.test(args.glob!.trim())) flags.push("--type-add", `coilglob:${args.glob!.trim()}`, "--type", "coilglob");
  const command = ["rg", ...flags, "--regexp", args.pattern, "--", root].map(shellQuote).join(" ");

  const hits: Hit[] = [];
  let matches = 0;
  let full = false;
  let stderr = "";
  let pending = "";
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  const handle = (line: string) => {
    if (!line.trim() || controller.signal.aborted) return;
    let message: { type: string; data?: { path?: RgText; lines?: RgText; line_number?: number; submatches?: { start: number }[] } };
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    if (message.type !== "match" && message.type !== "context" && message.type !== "begin") return;
    if (full && message.type !== "context") return controller.abort(); // keep trailing context of the last match only
    if (message.type === "begin") return;
    const data = message.data!;
    if (wanted && !wanted(relative(root, rgText(data.path)).split(sep).join("/"), false)) return;
    let text = rgText(data.lines).replace(/\r?\n$/, "");
    let column: number | undefined;
    if (message.type === "match") {
      const start = data.submatches?.[0]?.start ?? 0;
      column = Buffer.from(text, "utf8").subarray(0, start).toString("utf8").length;
      matches++;
      if (matches >= limit) full = true;
    }
    if (text.endsWith("\r")) text = text.slice(0, -1);
    hits.push({ file: rgText(data.path), line: data.line_number ?? 0, text, match: message.type === "match", column });
  };
  let result;
  try {
    result = await ops.exec(command, {
      cwd,
      signal: controller.signal,
      onData: (chunk, stream) => {
        const text = Buffer.from(chunk).toString("utf8");
        if (stream === "stderr") {
          if (stderr.length < 4096) stderr += text;
          return;
        }
        pending += text;
        let nl;
        while ((nl = pending.indexOf("\n")) >= 0) {
          handle(pending.slice(0, nl));
          pending = pending.slice(nl + 1);
        }
      },
    });
  } catch (error) {
    return { hits, matches, limitReached: false, error: `Cannot run ripgrep: ${messageOf(error)}` };
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  handle(pending);
  if (result.exitCode === 2 && matches === 0 && !controller.signal.aborted) {
    const reason = stderr.trim() || "ripgrep failed";
    return { hits, matches, limitReached: false, error: `grep failed: ${reason}${/regex/i.test(reason) ? "\nFix the pattern, or pass literal: true to search for the text as is." : ""}` };
  }
  return { hits, matches, limitReached: full };
}
