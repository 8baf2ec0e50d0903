/**
 * `coil preset show`: the resolved preset as annotated YAML (each value's comment names the layer file
 * that set it) or JSON. Resolution itself is boot/preset.ts.
 */
import { Document, isMap, isSeq, type Node, type Pair, type Scalar, type YAMLMap, type YAMLSeq } from "yaml";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { label, SETTING_KEYS, type PresetEntry, type ResolvedPreset } from "../boot/preset.js";
import { projectRoot } from "../boot/paths.js";
import { claudeSettingsFiles } from "../lib/claude-settings.js";
import { compatOf, contextFilePatterns, skillPlaces, type Compat } from "../lib/compat.js";

/** Where the run looks for the project and for other tools' files (`--json`: `places`). */
export interface Where {
  cwd: string;
  env: Record<string, string | undefined>;
  /** `$COIL_HOME`. */
  home: string;
}

/**
 * The places a run reads besides the preset: the project root, skill folders and instruction files,
 * with the `compat` option as the preset sets it (plugins' `coil doctor` sections say what was found).
 */
export function placesOf(
  preset: ResolvedPreset,
  where: Where,
): {
  projectRoot: string;
  compat: Compat;
  skills: { dir: string; exists: boolean; family?: string }[];
  contextFiles: { user: string[]; eachFolder: string[] };
  claudeSettings: ClaudeSettingsSummary[];
} {
  const set = preset.entries.map((e) => e.options.compat).find((c) => c && typeof c === "object") as
    | Partial<Compat>
    | undefined;
  const compat = compatOf(set);
  const skills = skillPlaces(where.cwd, compat, where.home, where.env.HOME || homedir(), {}, where.env).map((p) => ({
    dir: p.dir,
    exists: existsSync(p.dir),
    ...(p.family ? { family: p.family } : {}),
  }));
  return {
    projectRoot: projectRoot(where.cwd),
    compat,
    skills,
    contextFiles: contextFilePatterns(compat),
    claudeSettings: claudeSettingsSummary(where.cwd, where.env.HOME || homedir()),
  };
}

/** A Claude Code settings file as `preset show` lists it: its permission rules, env names and model. */
export interface ClaudeSettingsSummary {
  file: string;
  scope: string;
  exists: boolean;
  error?: string;
  permissions?: Partial<Record<"allow" | "ask" | "deny" | "additionalDirectories", string[]>> & {
    defaultMode?: string;
  };
  env?: string[];
  model?: string;
}

function claudeSettingsSummary(cwd: string, home: string): ClaudeSettingsSummary[] {
  return claudeSettingsFiles(cwd, home).map((f) => {
    const p = (f.data?.permissions ?? {}) as Record<string, unknown>;
    const strings = (v: unknown) =>
      Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : undefined;
    const permissions = Object.fromEntries(
      [
        ...(["deny", "ask", "allow", "additionalDirectories"] as const).map((k) => [k, strings(p[k])] as const),
        ["defaultMode", typeof p.defaultMode === "string" ? p.defaultMode : undefined] as const,
      ].filter(([, v]) => v !== undefined && (!Array.isArray(v) || v.length)),
    );
    const env = f.data?.env && typeof f.data.env === "object" ? Object.keys(f.data.env) : undefined;
    return {
      file: f.path,
      scope: f.scope,
      exists: f.exists,
      ...(f.error ? { error: f.error } : {}),
      ...(Object.keys(permissions).length ? { permissions } : {}),
      ...(env?.length ? { env } : {}),
      ...(typeof f.data?.model === "string" ? { model: f.data.model } : {}),
    };
  });
}

export function formatPreset(preset: ResolvedPreset, format: "yaml" | "json", where?: Where): string {
  const { layers, settings, settingSources, entries } = preset;
  const places = where ? placesOf(preset, where) : undefined;
  if (format === "json")
    return (
      JSON.stringify(
        {
          layers,
          settings,
          settingSources,
          plugins: entries.map(({ baseDir: _, ...e }) => e),
          ...(places ? { places } : {}),
        },
        null,
        2,
      ) + "\n"
    );
  // A path entry is printed as its absolute key, so that the output is itself a valid preset.
  const name = (e: PresetEntry) => (e.kind === "path" ? e.key : e.ref);
  const doc = new Document(
    {
      ...Object.fromEntries(SETTING_KEYS.filter((k) => k in settings).map((k) => [k, settings[k]])),
      plugins: entries.map((e) => (Object.keys(e.options).length ? { [name(e)]: e.options } : name(e))),
    },
    { aliasDuplicateObjects: false },
  );
  const header = layers.map(
    (l) =>
      `   ${l.name.padEnd(8)}${l.file ? label(l.file) : "command-line flags"}${l.skipped ? `  (skipped: ${l.skipped})` : ""}`,
  );
  doc.commentBefore = [
    " coil preset, resolved. Layers, lowest first:",
    ...header,
    " Each value's comment names the file (or cli) that set it.",
  ].join("\n");
  annotate(doc.contents as YAMLMap, settingSources);
  (doc.get("plugins") as YAMLSeq<Node>).items.forEach((node, i) => {
    const { source, optionSources } = entries[i]!;
    const pair = isMap(node) ? (node.items[0] as Pair<Node, YAMLMap>) : undefined;
    (pair?.key ?? node).comment = ` ${label(source.file)}${source.line ? `:${source.line}` : ""}`;
    if (pair) annotate(pair.value!, optionSources);
  });
  if (places) {
    doc.comment = [
      ` project root: ${places.projectRoot} (its .coil/, .claude/settings*.json, .mcp.json)`,
      ` compat: ${Object.entries(places.compat)
        .map(([k, v]) => `${k} ${v ? "on" : "off"}`)
        .join(", ")}`,
      " skill folders, first name wins (coil doctor and /skills say what loaded):",
      ...places.skills.map((s) => `   ${s.dir}${s.family ? `  [${s.family}]` : ""}${s.exists ? "" : "  (none)"}`),
      ` instruction files: ${places.contextFiles.user.join(", ")};`,
      `   in each folder from the repository root down: ${places.contextFiles.eachFolder.join(", ")}`,
      " Claude Code settings (permission-gate applies their permissions; env and model: docs/migrating.md):",
      ...places.claudeSettings.flatMap((c) => [
        `   ${c.file}${c.exists ? (c.error ? `  (unreadable: ${c.error})` : "") : "  (none)"}`,
        ...Object.entries(c.permissions ?? {}).map(
          ([k, v]) => `     permissions.${k}: ${Array.isArray(v) ? v.join(", ") : v}`,
        ),
        ...(c.env ? [`     env: ${c.env.join(", ")}`] : []),
        ...(c.model ? [`     model: ${c.model}`] : []),
      ]),
    ].join("\n");
  }
  return doc.toString({ lineWidth: 0 });
}

/** Put `# <file>` after every value `sources` names (by dotted path); collections are printed inline so the comment trails them. */
function annotate(map: YAMLMap, sources: Record<string, string>, prefix = ""): void {
  for (const { key, value } of map.items as Pair<Scalar, Node>[]) {
    const path = `${prefix}${String(key.value)}`;
    if (isMap(value) && value.items.length) annotate(value, sources, `${path}.`);
    else if (sources[path]) {
      if (isSeq(value) || isMap(value)) value.flow = true;
      value!.comment = ` ${label(sources[path])}`;
    }
  }
}
