/** Markdown files with YAML front matter (`---` … `---`), as skills and prompt templates use them. */
import { parse as parseYaml } from "yaml";

export interface FrontMatter {
  /** The mapping; undefined when the file has no front matter (or it could not be read at all). */
  data?: Record<string, unknown>;
  body: string;
  /** Why the front matter could not be read; the file should be refused. */
  error?: string;
  /** The front matter was not valid YAML but was read line by line (see below); worth a warning. */
  note?: string;
}

const KEY_LINE = /^([A-Za-z0-9_][\w.-]*)[ \t]*:(?:[ \t]+(.*))?$/;

/**
 * Front matter that is not valid YAML but is plain `key: value` lines, as Claude Code files often are
 * (`argument-hint: [issue] [priority]`): each line on its own, its value parsed as YAML when it parses
 * alone (so `true` stays a boolean), else kept as the text written. Undefined when some line is not of
 * that shape (an indented continuation, a list item), so a really broken file is still refused.
 */
function lineByLine(yaml: string): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const line of yaml.split(/\r?\n/)) {
    if (!line.trim() || line.trimStart().startsWith("#")) continue;
    const m = KEY_LINE.exec(line.trimEnd());
    if (!m) return undefined;
    const raw = (m[2] ?? "").trim();
    let value: unknown = raw;
    try {
      const parsed = parseYaml(`v: ${raw}`) as { v?: unknown } | null;
      value = parsed?.v ?? (raw ? raw : null);
    } catch {
      value = raw;
    }
    out[m[1]!] = value;
  }
  return out;
}

/** Split `---\n yaml \n---\n body`. `data` is undefined when the file has no front matter. */
export function splitFrontMatter(text: string): FrontMatter {
  const src = text.replace(/^\uFEFF/, "");
  const open = /^---[ \t]*\r?\n/.exec(src);
  if (!open) return { body: src };
  const rest = src.slice(open[0].length);
  const close = /^---[ \t]*$/m.exec(rest);
  if (!close) return { body: src, error: "front matter starts with '---' but has no closing '---' line" };
  const yaml = rest.slice(0, close.index);
  const body = rest.slice(close.index + close[0].length).replace(/^\r?\n/, "");
  let data: unknown;
  try {
    data = yaml.trim() ? parseYaml(yaml) : {};
  } catch (error) {
    const why = String((error as Error).message).split("\n")[0];
    const lines = lineByLine(yaml);
    if (lines) return { data: lines, body, note: `front matter is not valid YAML (${why}); read line by line, values as written` };
    return { body, error: `front matter is not valid YAML: ${why}` };
  }
  if (data === null || data === undefined) data = {};
  if (typeof data !== "object" || Array.isArray(data)) return { body, error: "front matter must be a YAML mapping (key: value lines)" };
  return { data: data as Record<string, unknown>, body };
}
