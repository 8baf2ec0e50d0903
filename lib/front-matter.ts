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
 * (`argument-hint: [issue] [priority]`, `description: Review code: carefully`): each top-level line on its
 * own, its value parsed as YAML when it parses alone (so `true` stays a boolean), else kept as the text
 * written. A key's indented lines below it (a nested `hooks:` mapping, a list) are read as that key's YAML.
 * Undefined when some part is neither (an indented block that does not parse, a line before any key), so
 * a really broken file is still refused.
 */
function lineByLine(yaml: string): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  const groups: { key: string; raw: string; block: string[] }[] = [];
  for (const line of yaml.split(/\r?\n/)) {
    if (!line.trim() || line.trimStart().startsWith("#")) continue;
    const m = /^\s/.test(line) ? null : KEY_LINE.exec(line.trimEnd());
    if (m) groups.push({ key: m[1]!, raw: (m[2] ?? "").trim(), block: [] });
    else if (/^\s/.test(line) && groups.length) groups.at(-1)!.block.push(line);
    else return undefined;
  }
  for (const { key, raw, block } of groups) {
    if (block.length) {
      try {
        const parsed = parseYaml(`v:${raw ? ` ${raw}` : ""}\n${block.join("\n")}`) as { v?: unknown } | null;
        out[key] = parsed?.v ?? null;
      } catch {
        return undefined;
      }
      continue;
    }
    let value: unknown = raw;
    try {
      const parsed = parseYaml(`v: ${raw}`) as { v?: unknown } | null;
      value = parsed?.v ?? (raw ? raw : null);
    } catch {
      value = raw;
    }
    out[key] = value;
  }
  return out;
}

const SIMPLE_LINE = /^( *)([A-Za-z_][\w.-]*):(?: +(.*?))? *$/;
const SPECIAL_WORD = /^(?:true|True|TRUE|false|False|FALSE|null|Null|NULL)$/;

/** A value YAML reads as this very string (a plain word run, or quotes without escapes); undefined when unsure. */
function simpleScalar(raw: string): string | undefined {
  const quoted = /^"([^"\\]*)"$/.exec(raw) ?? /^'([^']*)'$/.exec(raw);
  if (quoted) return quoted[1];
  return /^[A-Za-z][^#\t]*$/.test(raw) && !raw.includes(": ") && !raw.endsWith(":") && !SPECIAL_WORD.test(raw)
    ? raw
    : undefined;
}

/**
 * Front matter of string-valued `key: value` lines (one level of nesting, as `metadata:` in a skill),
 * the shape of the built-in skills and prompt templates, read without the YAML parser: parsing them
 * cold cost about 6 ms of every start. Undefined for anything else, which the YAML parser reads.
 */
function simpleMapping(yaml: string): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  let parent: Record<string, unknown> | undefined;
  let indent = "";
  for (const line of yaml.split(/\r?\n/)) {
    if (!line.trim() || line.startsWith("#")) continue;
    const m = SIMPLE_LINE.exec(line);
    if (!m || m[2] === "__proto__" || SPECIAL_WORD.test(m[2]!)) return undefined;
    const [, pad, key, raw] = m as unknown as [string, string, string, string | undefined];
    const target = pad ? parent : out;
    if (!target || (pad && indent && pad !== indent) || Object.hasOwn(target, key)) return undefined;
    if (pad) [indent, parent] = [pad, target];
    else if (raw === undefined) {
      const child: Record<string, unknown> = {};
      out[key] = child;
      [parent, indent] = [child, ""];
      continue;
    } else parent = undefined;
    const value = raw === undefined ? undefined : simpleScalar(raw);
    if (value === undefined) return undefined;
    target[key] = value;
  }
  // `key:` with nothing under it is null in YAML
  for (const [key, value] of Object.entries(out))
    if (typeof value === "object" && Object.keys(value as object).length === 0) out[key] = null;
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
    data = yaml.trim() ? (simpleMapping(yaml) ?? parseYaml(yaml)) : {};
  } catch (error) {
    const why = String((error as Error).message).split("\n")[0];
    const lines = lineByLine(yaml);
    if (lines)
      return {
        data: lines,
        body,
        note: `front matter is not valid YAML (${why}); read line by line, values as written`,
      };
    return { body, error: `front matter is not valid YAML: ${why}` };
  }
  if (data === null || data === undefined) data = {};
  if (typeof data !== "object" || Array.isArray(data))
    return { body, error: "front matter must be a YAML mapping (key: value lines)" };
  return { data: data as Record<string, unknown>, body };
}
