/**
 * Install means active: an installed package is enabled in the scope's own preset file
 * (`$COIL_HOME/preset.yaml`, or `.coil/preset.yaml` with --project), and the user is told what that made
 * active. The preset file is the one record of enabled state (lib/preset-file.ts).
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { messageOf } from "../../api/index.js";
import { contentDirs } from "../../lib/package-dirs.js";
import type { PluginInspector } from "../../lib/plugin-inspector.js";
import { refOf } from "../../lib/preset-file.js";
import { readJson } from "./npm.js";

/** What installing or enabling an npm package made active: one list per kind of contribution (empty kinds left out). */
export interface PackageReport {
  /** The npm package name. */
  name: string;
  version?: string;
  /** Where it was installed. */
  dir: string;
  active: Partial<Record<"plugins" | "tools" | "presets" | "skills" | "templates" | "agents", string[]>>;
  /** Anything the user should know (a plugin that did not set up, an untrusted project). */
  notes?: string[];
}

/** The preset file a scope's enabled state lives in. */
export const presetFileOf = (home: string, cwd: string, project: boolean): string =>
  project ? join(cwd, ".coil", "preset.yaml") : join(home, "preset.yaml");

const mdNames = (dir: string): string[] => {
  try {
    return readdirSync(dir)
      .filter((f) => /\.md$/i.test(f) && !/^readme\.md$/i.test(f))
      .map((f) => f.slice(0, -3))
      .sort();
  } catch {
    return [];
  }
};
const skillNames = (dir: string): string[] => {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && existsSync(join(dir, e.name, "SKILL.md")))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
};

/**
 * What the npm package `name`, installed in `packagesDir`, offers once enabled. Its plugins are set up on a
 * throwaway host (boot's `plugin-inspector` service) to list their tools (a setup that fails is a note, not
 * an error: the run will report it).
 */
export async function describePackage(
  name: string,
  packagesDir: string,
  home: string,
  presetDir: string,
  loadCode: boolean,
  inspector: PluginInspector | undefined,
): Promise<PackageReport> {
  const dir = join(packagesDir, "node_modules", name);
  const pkg = readJson<{ version?: string; coil?: Record<string, unknown> }>(join(dir, "package.json")) ?? {};
  const coil = pkg.coil && typeof pkg.coil === "object" ? pkg.coil : {};
  const report: PackageReport = { name, version: pkg.version, dir, active: {}, notes: [] };
  const put = (kind: keyof PackageReport["active"], items: string[]) => {
    if (items.length) report.active[kind] = items;
  };
  put("plugins", Array.isArray(coil.plugins) ? coil.plugins.map(String) : []);
  const presets = Array.isArray(coil.presets)
    ? coil.presets.map(String)
    : typeof coil.preset === "string"
      ? [coil.preset]
      : [];
  const main = typeof coil.preset === "string" ? coil.preset : "preset.yaml";
  put(
    "presets",
    presets.filter((p) => existsSync(join(dir, p))).map((p) => (p === main ? refOf(name) : `${refOf(name)}/${p}`)),
  );
  const content = {
    skills: contentDirs(dir, coil, "skills", "skills").flatMap(skillNames),
    templates: contentDirs(dir, coil, "promptTemplates", "prompt-templates")
      .flatMap(mdNames)
      .map((t) => `/${t}`),
    agents: contentDirs(dir, coil, "agents", "agents").flatMap(mdNames),
  };
  // The skills, prompt-templates and subagents plugins read the user's packages, and a trusted project's (lib/package-dirs.ts).
  for (const [kind, items] of Object.entries(content)) put(kind as "skills", items);
  if (packagesDir !== join(home, "packages") && !loadCode && Object.values(content).some((items) => items.length)) {
    report.notes!.push("its skills, prompt templates and agents are read once the project is trusted (coil trust)");
  }
  if (!loadCode) {
    if (report.active.plugins)
      report.notes!.push(
        "its tools are not listed: this project is not trusted, so its code is not loaded (coil trust)",
      );
    return report;
  }
  if (!inspector) {
    if (report.active.plugins) report.notes!.push("its tools are not listed: this host cannot load plugin code");
    return report;
  }
  try {
    const { tools, notes } = await inspector.inspect(name, presetDir);
    put("tools", tools);
    report.notes!.push(...notes);
  } catch (error) {
    report.notes!.push(`its plugins could not be loaded: ${messageOf(error)}`);
  }
  return report;
}

const LABELS: Record<keyof PackageReport["active"], string> = {
  plugins: "plugins",
  tools: "tools",
  presets: "presets (not applied; run with --preset <name>)",
  skills: "skills",
  templates: "prompt templates",
  agents: "sub-agent types",
};

/** The report for people: one line per kind of contribution. */
export function formatReport(report: PackageReport, verb: string): string {
  const kinds = (Object.keys(LABELS) as (keyof PackageReport["active"])[]).filter((k) => report.active[k]);
  const lines = kinds.map((kind) => `  ${LABELS[kind]}: ${report.active[kind]!.join(", ")}`);
  const head = `${verb} ${report.name}${report.version ? `@${report.version}` : ""}${lines.length ? "; active now:" : " (it offers coil nothing that becomes active)"}`;
  return [head, ...lines, ...(report.notes ?? []).map((n) => `  note: ${n}`)].join("\n");
}
