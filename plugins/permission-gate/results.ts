/**
 * grep, find and ls read what they return, so their results pass the same rules as `read`: a line
 * naming a file that a deny or ask rule covers is withheld, and a notice says how many and which rule.
 * The result formats are those of plugins/tools-search: `path:N: text` / `path-N- text` lines (and `--`
 * between groups) for grep, one path per line for find, one name per line for ls; notices follow a
 * blank line.
 */
import { join } from "node:path";
import type { ToolResult } from "../../api/index.js";

/** The paths a result line may name: for grep every prefix before a `:N:` or `-N-` (a file name may hold one). */
function pathsOf(tool: string, line: string, dir: string): string[] {
  if (tool === "find") return [line.replace(/\/$/, "")];
  if (tool === "ls") return [join(dir, line.replace(/\/$/, ""))];
  const out: string[] = [];
  for (const m of line.matchAll(/([:-])\d+\1 /g)) out.push(line.slice(0, m.index));
  return out;
}

/**
 * The result without the lines `covered` objects to (it returns the rule's text), or undefined when
 * nothing is withheld.
 */
export function withholdResults(
  result: ToolResult,
  tool: string,
  args: Record<string, unknown>,
  _cwd: string,
  covered: (path: string) => string | undefined,
): ToolResult | undefined {
  const dir = typeof args.path === "string" ? args.path : ".";
  let withheld = 0;
  const rules = new Set<string>();
  const content = result.content.map((part) => {
    if (part.type !== "text") return part;
    const cut = part.text.indexOf("\n\n");
    const body = cut < 0 ? part.text : part.text.slice(0, cut);
    const tail = cut < 0 ? "" : part.text.slice(cut);
    const kept: string[] = [];
    for (const line of body.split("\n")) {
      const rule = line === "--" || line === "" ? undefined : pathsOf(tool, line, dir).map(covered).find(Boolean);
      if (rule === undefined) kept.push(line);
      else {
        withheld++;
        rules.add(rule);
      }
    }
    // separators left around withheld groups
    const lines = kept.filter((l, i) => l !== "--" || (i > 0 && i < kept.length - 1 && kept[i - 1] !== "--"));
    return { ...part, text: lines.join("\n") + tail };
  });
  if (withheld === 0) return undefined;
  const what = tool === "grep" ? "line" : "entr";
  const count =
    tool === "grep"
      ? `${withheld} ${what}${withheld === 1 ? "" : "s"}`
      : `${withheld} ${what}${withheld === 1 ? "y" : "ies"}`;
  const note = `[${count} withheld: ${withheld === 1 ? "it names a file" : "they name files"} the permission rule${rules.size === 1 ? "" : "s"} ${[...rules].join(", ")} cover${rules.size === 1 ? "s" : ""} (permission-gate).]`;
  const first = content.findIndex((c) => c.type === "text");
  if (first >= 0) {
    const part = content[first] as { type: "text"; text: string };
    const text = part.text.startsWith("\n\n") || part.text === "" ? `(nothing left to show)${part.text}` : part.text;
    content[first] = { ...part, text: `${text}${text.includes("\n\n[") ? "\n" : "\n\n"}${note}` };
  } else content.push({ type: "text", text: note });
  return { ...result, content };
}
