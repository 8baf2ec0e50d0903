/**
 * Plugin options against the plugin's schema: defaults filled in, unknown keys and wrong types rejected
 * with errors that name the plugin, the key and the preset file (the layer) that set it. boot/ hands this
 * to every host it builds (`HostOptions.validate`); the kernel installs what it is given.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { TSchema } from "typebox";
import { CoilError } from "../kernel/errors.js";
import type { InstallSource, Plugin } from "../api/plugin.js";
import { packageRoot } from "../lib/paths.js";
import { fileOf } from "./load.js";

/**
 * The built-in presets' options for the built-in plugins (and each one's no options), filled in and checked at
 * build time: scripts/build.mjs writes what `validateOptions` returns for them to dist/options.json, keyed by
 * plugin id and the options as given. A run on them then skips TypeBox's `Value.Default` and `Value.Check`, whose
 * cold start was ~30 ms of a one-turn run (docs/decisions.md). Used only for a plugin imported from dist/ and not
 * changed since the build; anything else (other options, path and npm plugins, the sources) is checked as usual.
 */
let prechecked: { mtime: number; values: Record<string, string> } | null | undefined;

export const precheckedKey = (id: string, given: unknown): string => `${id} ${JSON.stringify(given)}`;

function precheckedOptions(plugin: Plugin, given: unknown): unknown {
  const file = fileOf(plugin);
  // Only a plugin imported from dist/ can have been checked at build time; asking first also keeps a bundle of
  // the sources (which has no package.json above it) from looking for coil's package root at all.
  if (!file?.endsWith(join("dist", "plugins", plugin.id, "index.js"))) return undefined;
  if (prechecked === undefined) {
    const built = join(packageRoot(), "dist", "options.json");
    try {
      prechecked = { mtime: statSync(built).mtimeMs, values: JSON.parse(readFileSync(built, "utf8")) };
    } catch {
      prechecked = null; // not built: check as usual
    }
  }
  const hit = prechecked?.values[precheckedKey(plugin.id, given)];
  if (hit === undefined) return undefined;
  if (file !== join(packageRoot(), "dist", "plugins", plugin.id, "index.js")) return undefined;
  return builtSince(file) ? undefined : JSON.parse(hit);
}

/** Whether a plugin file changed after dist/options.json was written; asked once per file (boot asks twice). */
const changed = new Map<string, boolean>();
function builtSince(file: string): boolean {
  let answer = changed.get(file);
  if (answer === undefined) {
    try {
      answer = statSync(file).mtimeMs > prechecked!.mtime;
    } catch {
      answer = true;
    }
    changed.set(file, answer);
  }
  return answer;
}

/** Reject unknown keys at every object level that declares its properties. */
function strict(schema: TSchema): TSchema {
  const s = schema as Record<string, unknown>;
  if (!s || typeof s !== "object") return schema;
  const out: Record<string, unknown> = { ...s };
  if (s.type === "object" && s.properties && s.additionalProperties === undefined && s.patternProperties === undefined)
    out.additionalProperties = false;
  if (s.properties)
    out.properties = Object.fromEntries(
      Object.entries(s.properties as Record<string, TSchema>).map(([k, v]) => [k, strict(v)]),
    );
  if (s.items && typeof s.items === "object" && !Array.isArray(s.items)) out.items = strict(s.items as TSchema);
  for (const key of ["anyOf", "oneOf", "allOf"])
    if (Array.isArray(s[key])) out[key] = (s[key] as TSchema[]).map(strict);
  return out as TSchema;
}

const givenOf = (raw: unknown): unknown => (raw === undefined || raw === null || raw === true ? {} : raw);
let Value: typeof import("typebox/value").Value | undefined;

/**
 * TypeBox's value functions (with its schema compiler, 0.27 MB of JavaScript), which `validateOptions` needs for
 * any options not checked at build time. Await this before installing: given what will be installed, it imports
 * them only when one of those needs them, so a run on the built-in presets never compiles them.
 */
export async function loadOptionChecks(installs?: readonly { plugin: Plugin; options: unknown }[]): Promise<void> {
  const needed = (i: { plugin: Plugin; options: unknown }) =>
    i.plugin.options !== undefined && precheckedOptions(i.plugin, givenOf(i.options)) === undefined;
  if (!Value && (!installs || installs.some(needed))) Value = (await import("typebox/value")).Value;
}

/** For hosts that install synchronously with any options (the SDK's): hand over TypeBox's value functions. */
export function useOptionChecks(value: typeof import("typebox/value").Value): void {
  Value ??= value;
}

/** Fill defaults and validate; errors name the plugin, the key and the preset file. `loadOptionChecks` first. */
export function validateOptions(plugin: Plugin, raw: unknown, source: InstallSource = {}): unknown {
  const where = {
    plugin: plugin.id,
    phase: "options" as const,
    file: source.file,
    line: source.line,
    column: source.column,
  };
  const given = givenOf(raw);
  if (!plugin.options) {
    if (typeof given === "object" && given && Object.keys(given).length > 0) {
      throw new CoilError(
        "PLUGIN_OPTIONS_INVALID",
        `takes no options, but got ${Object.keys(given)
          .map((k) => `'${k}'`)
          .join(", ")}`,
        where,
      );
    }
    return {};
  }
  const known = precheckedOptions(plugin, given);
  if (known !== undefined) return known;
  if (!Value) throw new Error(`options of '${plugin.id}' validated before loadOptionChecks() (a bug in coil)`);
  const schema = strict(plugin.options);
  // Defaults come from the schema as written (TypeBox skips them under additionalProperties: false).
  const value = Value.Default(plugin.options, structuredClone(given));
  const errors = Value.Check(schema, value) ? [] : Value.Errors(schema, value); // Check is several times faster at start-up
  if (errors.length === 0) return value;
  const from = (key: string) => {
    const file =
      source.optionSources?.[key] ??
      Object.entries(source.optionSources ?? {}).find(([k]) => k.startsWith(`${key}.`) || key.startsWith(`${k}.`))?.[1];
    return file && file !== source.file ? ` (set in ${file})` : "";
  };
  const lines = errors
    .filter((e) => e.keyword !== "boolean" || !errors.some((o) => o.keyword === "additionalProperties"))
    .map((e) => {
      if (e.keyword === "additionalProperties") {
        const keys = (e.params as { additionalProperties: string[] }).additionalProperties.map((k) =>
          pathOf(e.instancePath, k),
        );
        const known = Object.keys(((e.instancePath ? {} : schema) as { properties?: object }).properties ?? {});
        return `unknown option ${keys.map((k) => `'${k}'${from(k)}`).join(", ")}${known.length ? ` (known: ${known.join(", ")})` : ""}`;
      }
      const key = e.instancePath.slice(1).replace(/\//g, ".");
      return `option '${key || "(root)"}' ${e.message}${from(key)}`;
    });
  throw new CoilError("PLUGIN_OPTIONS_INVALID", [...new Set(lines)].join("; "), where);
}

function pathOf(instancePath: string, key: string): string {
  const base = instancePath.slice(1).replace(/\//g, ".");
  return base ? `${base}.${key}` : key;
}
