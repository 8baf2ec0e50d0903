/**
 * .gitignore (and .ignore) rules for the built-in walker: last matching rule wins, `!` re-includes,
 * a trailing `/` matches directories only, a pattern with a `/` is relative to its file's directory.
 */
import { dirname, join } from "node:path";
import { globSource } from "./glob.js";
import type { SearchOperations } from "./search-backend.js";

export const IGNORE_FILES = [".gitignore", ".ignore"] as const;

interface Rule {
  /** Directory of the ignore file (absolute, no trailing slash). */
  base: string;
  re: RegExp;
  negate: boolean;
  dirOnly: boolean;
}

export function parseIgnore(text: string, base: string): Rule[] {
  const rules: Rule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, "");
    if (line === "" || line.startsWith("#")) continue;
    let negate = false;
    if (line.startsWith("!")) {
      negate = true;
      line = line.slice(1);
    } else if (line.startsWith("\\!") || line.startsWith("\\#")) {
      line = line.slice(1);
    }
    const dirOnly = line.endsWith("/");
    if (dirOnly) line = line.slice(0, -1);
    if (line === "") continue;
    const anchored = line.includes("/");
    if (line.startsWith("/")) line = line.slice(1);
    const source = globSource(line, false);
    rules.push({ base, re: new RegExp(anchored ? `^${source}$` : `^(?:.*/)?${source}$`), negate, dirOnly });
  }
  return rules;
}

export class IgnoreRules {
  constructor(private readonly rules: readonly Rule[] = []) {}

  with(more: readonly Rule[]): IgnoreRules {
    return more.length ? new IgnoreRules([...this.rules, ...more]) : this;
  }

  ignored(abs: string, isDir: boolean): boolean {
    for (let i = this.rules.length - 1; i >= 0; i--) {
      const rule = this.rules[i]!;
      if (rule.dirOnly && !isDir) continue;
      if (!abs.startsWith(rule.base + "/") && !(rule.base === "/" && abs.startsWith("/"))) continue;
      const rel = abs.slice(rule.base === "/" ? 1 : rule.base.length + 1);
      if (rule.re.test(rel)) return !rule.negate;
    }
    return false;
  }
}

/** Rules found in `dir` itself. */
export async function rulesIn(ops: SearchOperations, dir: string, names: readonly string[]): Promise<Rule[]> {
  const rules: Rule[] = [];
  for (const file of IGNORE_FILES) {
    if (!names.includes(file)) continue;
    try {
      rules.push(...parseIgnore(Buffer.from(await ops.readFile(join(dir, file))).toString("utf8"), dir));
    } catch {
      // unreadable ignore file: nothing from it
    }
  }
  return rules;
}

/** Rules from the directories above `root` up to its git work tree's top (none outside a repository). */
export async function ancestorRules(ops: SearchOperations, root: string): Promise<Rule[]> {
  const chain: string[] = [];
  let top: string | undefined;
  for (let dir = root; ; dir = dirname(dir)) {
    chain.push(dir);
    const hasGit = await ops.stat(join(dir, ".git")).then(
      () => true,
      () => false,
    );
    if (hasGit) {
      top = dir;
      break;
    }
    if (dirname(dir) === dir) break;
  }
  if (!top) return [];
  const rules: Rule[] = [];
  for (const dir of chain.slice(1).reverse()) {
    const names = await ops.readdir(dir).then(
      (entries) => entries.map((e) => e.name),
      () => [] as string[],
    );
    rules.push(...(await rulesIn(ops, dir, names)));
  }
  return rules;
}
