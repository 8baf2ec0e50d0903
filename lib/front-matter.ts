/** Markdown files with YAML front matter (`---` … `---`), as skills and prompt templates use them. */
import { parse as parseYaml } from "yaml";

/** Split `---\n yaml \n---\n body`. `data` is undefined when the file has no front matter. */
export function splitFrontMatter(text: string): { data?: Record<string, unknown>; body: string; error?: string } {
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
    return { body, error: `front matter is not valid YAML: ${String((error as Error).message).split("\n")[0]}` };
  }
  if (data === null || data === undefined) data = {};
  if (typeof data !== "object" || Array.isArray(data)) return { body, error: "front matter must be a YAML mapping (key: value lines)" };
  return { data: data as Record<string, unknown>, body };
}
