/**
 * Prompt templates: markdown files with optional front matter (`description`, `argument-hint`)
 * that become `/name args` commands, and the argument forms they expand.
 */
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { splitFrontMatter } from "../../lib/front-matter.js";
import { packageDirs as sharedPackageDirs } from "../../lib/package-dirs.js";

export interface PromptTemplate {
  name: string;
  description: string;
  argumentHint?: string;
  body: string;
  file: string;
  source: string;
  /** A Claude Code plugin's installed folder: `${CLAUDE_PLUGIN_ROOT}` in the body becomes it. */
  pluginRoot?: string;
}

export interface TemplateProblem {
  file: string;
  reason: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;


export function parseTemplate(file: string, text: string, source: string): PromptTemplate | TemplateProblem {
  const name = file.replace(/^.*[\\/]/, "").replace(/\.md$/i, "");
  if (!NAME.test(name)) return { file, reason: `'${name}' cannot be a command name (letters, digits, '.', '_' and '-')` };
  const { data = {}, body, error } = splitFrontMatter(text);
  if (error) return { file, reason: error };
  const description = typeof data.description === "string" && data.description.trim() ? data.description.trim() : firstLine(body);
  const hint = data["argument-hint"];
  return { name, description, ...(typeof hint === "string" && hint ? { argumentHint: hint } : {}), body: body.trim(), file, source };
}

function firstLine(body: string): string {
  const line = body.split("\n").map((l) => l.replace(/^#+\s*/, "").trim()).find(Boolean) ?? "";
  return line.length > 80 ? `${line.slice(0, 77)}...` : line;
}

/** Split arguments like a shell does: whitespace separates, "double" and 'single' quotes group. */
export function splitArgs(text: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let m: RegExpExecArray | null; (m = re.exec(text)); ) {
    out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (m[2] ?? m[3]!));
  }
  return out;
}

/**
 * Expand `$1`…`$9` (and higher), `$@` and `$ARGUMENTS` (all arguments), `${@:N}` (from the Nth on) and
 * `${@:N:L}` (L arguments from the Nth). Missing arguments expand to nothing. Inserted text is never
 * expanded again. A template with no placeholder gets the arguments appended as a last paragraph.
 */
export function expandTemplate(body: string, rawArgs: string): string {
  const args = splitArgs(rawArgs);
  let used = false;
  const out = body.replace(/\$\{@:(\d+)(?::(\d+))?\}|\$ARGUMENTS\b|\$@|\$(\d+)/g, (match, from?: string, len?: string, n?: string) => {
    used = true;
    if (n !== undefined) return args[Number(n) - 1] ?? "";
    if (from !== undefined) {
      const start = Math.max(0, Number(from) - 1);
      return args.slice(start, len !== undefined ? start + Number(len) : undefined).join(" ");
    }
    return match === "$@" ? args.join(" ") : rawArgs.trim();
  });
  return !used && rawArgs.trim() ? `${out}\n\n${rawArgs.trim()}` : out;
}



/** Folders contributed by packages under `$COIL_HOME/packages/node_modules` (`coil.promptTemplates`, else `prompt-templates/`). */
export const packageDirs = (home: string): string[] => sharedPackageDirs(home, "promptTemplates", "prompt-templates");

/** `*.md` files of one folder (README.md excluded), sorted. */
export function templateFiles(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => (e.isFile() || e.isSymbolicLink()) && /\.md$/i.test(e.name) && !/^readme\.md$/i.test(e.name))
      .map((e) => join(dir, e.name))
      .sort();
  } catch {
    return [];
  }
}

export { coilHome, packageRoot } from "../../lib/paths.js";
export { splitFrontMatter };
