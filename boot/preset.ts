/**
 * Preset loading: read YAML presets, resolve `extends`, merge the layers (base → user → project → cli)
 * and remember which file set every entry, option and setting. Synchronous; reading preset files is
 * its only I/O. Plugin references are classified here but not loaded (the plugin loader does that).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node, type Scalar } from "yaml";
import { CoilError } from "../kernel/errors.js";
import { claudeModel } from "../lib/claude-settings.js";
import { npmSpec } from "../lib/npm-spec.js";
import { nodeModules, packageRoot, projectRoot } from "./paths.js";

export interface PresetSource {
  file: string;
  line?: number;
  column?: number;
}
export interface PresetEntry {
  /** As written. */
  ref: string;
  kind: "name" | "path" | "npm";
  /** Merge identity: the absolute path for paths, the (`npm:`-stripped) name otherwise. */
  key: string;
  options: Record<string, unknown>;
  /** Where the entry was introduced. */
  source: PresetSource;
  /** The directory relative option paths resolve against (the file that last set its options; cwd for CLI). */
  baseDir: string;
  /** Dotted option path → the file (or `cli`) that set it. */
  optionSources: Record<string, string>;
}
export interface PresetSettings {
  provider?: string;
  model?: string;
  thinking?: string;
  toolExecution?: "parallel" | "sequential";
  reserveTokens?: number;
  description?: string;
}
export interface PresetLayer {
  name: "base" | "user" | "project" | "cli";
  file?: string;
  skipped?: string;
}
/** `entries`: the enabled entries, in order. */
export interface ResolvedPreset {
  entries: PresetEntry[];
  settings: PresetSettings;
  settingSources: Record<string, string>;
  layers: PresetLayer[];
  /**
   * The model came from Claude Code (`ANTHROPIC_MODEL`, or `model` in its settings files) because no
   * layer named one: a fallback that gives way when this run cannot use it (boot/assemble.ts).
   */
  modelFromClaude?: { source: string; note?: string };
}
/**
 * `preset`: a built-in preset name or a path to a YAML file (relative to `cwd`), default `default`.
 * `home`: coil's home (`$COIL_HOME`, default `~/.coil`).
 */
export interface ResolveOptions {
  preset?: string;
  cwd: string;
  home: string;
  trust: boolean;
  /** Only the base preset and the cli layer: no user (~/.coil) or project (.coil/) layer. */
  builtinOnly?: boolean;
  cli?: { plugins?: string[]; settings?: PresetSettings };
  /** The environment (`ANTHROPIC_MODEL`, `HOME` for ~/.claude); default process.env. */
  env?: Record<string, string | undefined>;
}

/** Each setting's check, and what it wants (for the error). */
const nonEmpty = { want: "a non-empty string", ok: (v: unknown) => typeof v === "string" && v !== "" };
const oneOf = (...values: string[]) => ({
  want: `one of ${values.join(", ")}`,
  ok: (v: unknown) => values.includes(v as string),
});
const SETTING_RULES: Record<keyof PresetSettings, { want: string; ok: (value: unknown) => boolean }> = {
  description: nonEmpty,
  provider: nonEmpty,
  model: nonEmpty,
  thinking: oneOf("off", "minimal", "low", "medium", "high", "xhigh"),
  toolExecution: oneOf("parallel", "sequential"),
  reserveTokens: { want: "a positive integer", ok: (v) => Number.isInteger(v) && (v as number) > 0 },
};
/** The settings a preset may set, in the order `coil preset show` prints them. */
export const SETTING_KEYS = Object.keys(SETTING_RULES) as (keyof PresetSettings)[];
const KNOWN_KEYS = [
  "description",
  "extends",
  "plugins",
  "provider",
  "model",
  "thinking",
  "toolExecution",
  "reserveTokens",
];
const ENTRY_HINT = "write `- name`, `- name: { option: value }`, or `- name: false` to remove it";

/** An entry while merging: `removed` is a tombstone (`false`), `fresh` re-adds after a removal. */
interface Item extends PresetEntry {
  removed?: boolean;
  fresh?: boolean;
}
interface State {
  entries: Item[];
  settings: PresetSettings;
  settingSources: Record<string, string>;
}
/** A parsed file, for positions in errors. */
interface Where {
  file: string;
  lc: LineCounter;
}

const empty = (): State => ({ entries: [], settings: {}, settingSources: {} });
const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
/** A missing or empty YAML value. */
const isNull = (node: unknown): boolean => node == null || (isScalar(node) && node.value === null);
/** Relative (`./`, `../`), home (`~/`) and absolute references are paths, and so is any name `ext` matches. */
const isPathRef = (ref: string, ext: RegExp): boolean => /^(\.\.?\/|~\/)/.test(ref) || isAbsolute(ref) || ext.test(ref);
/** A path reference made absolute against `dir` (`~/` is the user's home). */
const expand = (ref: string, dir: string): string =>
  resolve(dir, ref.startsWith("~/") ? join(homedir(), ref.slice(2)) : ref);

export function resolvePreset(options: ResolveOptions): ResolvedPreset {
  const { cwd, home } = options;
  const userFile = join(home, "preset.yaml");
  // Started in a subdirectory, the project is still its git root (lib/project.ts).
  const projectFile = join(projectRoot(cwd), ".coil", "preset.yaml");
  const layers: PresetLayer[] = [{ name: "base", file: findPreset(options.preset ?? "default", cwd, home) }];
  if (!options.builtinOnly && existsSync(userFile)) layers.push({ name: "user", file: userFile });
  if (!options.builtinOnly && projectFile !== userFile && existsSync(projectFile)) {
    layers.push({
      name: "project",
      file: projectFile,
      ...(options.trust ? {} : { skipped: "untrusted project: pass --trust to load it" }),
    });
  }
  const files = layers.filter((l) => !l.skipped).map((l) => loadFile(l.file!, home, []));
  const cli = cliLayer(options);
  if (cli.entries.length || Object.keys(cli.settings).length) layers.push({ name: "cli" });
  const state = [...files, cli].reduce(merge);
  // No layer names a model: Claude Code's (ANTHROPIC_MODEL, or its settings' `model`) for an Anthropic run.
  const claude =
    !options.builtinOnly &&
    !state.settings.model &&
    (!state.settings.provider || state.settings.provider === "anthropic")
      ? claudeModel(cwd, options.env)
      : undefined;
  if (claude) {
    state.settings.model = claude.model;
    state.settingSources.model = claude.source;
  }
  return {
    ...state,
    entries: state.entries.filter((e) => !e.removed).map(({ removed: _r, fresh: _f, ...entry }) => entry),
    layers,
    ...(claude ? { modelFromClaude: { source: claude.source, ...(claude.note ? { note: claude.note } : {}) } } : {}),
  };
}

export function builtinPresetNames(): string[] {
  return readdirSync(join(packageRoot(), "presets"))
    .filter((f) => f.endsWith(".yaml"))
    .map((f) => f.slice(0, -5))
    .sort();
}

// ---------------------------------------------------------------------------------------------
// Reading one file (with its `extends`)

function loadFile(file: string, home: string, stack: readonly string[], pos: Partial<PresetSource> = {}): State {
  const cycle = stack.includes(file) && [...stack.slice(stack.indexOf(file)), file].map(label).join(" → ");
  if (cycle)
    throw new CoilError("PRESET_INVALID", `extends cycle: ${cycle}`, {
      ...pos,
      hint: "remove one of the extends links",
    });
  const compiled = compiledBuiltin(file);
  if (compiled) return compiled;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (cause) {
    throw new CoilError("PRESET_NOT_FOUND", `cannot read preset ${file}`, { ...pos, cause });
  }
  const w: Where = { file, lc: new LineCounter() };
  const doc = parseDocument(text, { lineCounter: w.lc, prettyErrors: true });
  const bad = doc.errors[0];
  if (bad) {
    const detail = bad.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
    throw new CoilError("PRESET_INVALID", `malformed YAML: ${detail}`, {
      file,
      line: bad.linePos?.[0].line,
      column: bad.linePos?.[0].col,
      cause: bad,
    });
  }
  const root = doc.contents;
  if (isNull(root)) return empty();
  if (!isMap(root)) throw invalid(w, root, `a preset must be a YAML mapping (keys: ${KNOWN_KEYS.join(", ")})`);

  const own = empty();
  let parents = empty();
  for (const { key: keyNode, value } of root.items) {
    const key = String(isScalar(keyNode) ? keyNode.value : undefined);
    if (!KNOWN_KEYS.includes(key)) {
      const near = nearest(key, KNOWN_KEYS);
      throw invalid(
        w,
        keyNode,
        `unknown key "${key}"; known keys: ${KNOWN_KEYS.join(", ")}`,
        near && `did you mean "${near}"?`,
      );
    }
    if (key === "extends") {
      // `extends: name` or `extends: [a, b]`: check every name before loading any.
      const refs = isNull(value) ? [] : isSeq(value) ? value.items : [value];
      const wrong = refs.findIndex((node) => !isScalar(node) || typeof node.value !== "string" || !node.value);
      if (wrong >= 0) throw invalid(w, refs[wrong], "extends must be a preset name or a list of them");
      for (const node of refs as Scalar<string>[]) {
        parents = merge(
          parents,
          loadFile(findPreset(node.value, dirname(file), home, at(w, node)), home, [...stack, file], at(w, node)),
        );
      }
    } else if (key !== "plugins") {
      setSetting(own, key, value == null ? null : (value as Node).toJS(doc), file, (problem) =>
        invalid(w, value ?? keyNode, problem),
      );
    }
  }
  // Plugins last, after every other key has been checked and every `extends` loaded.
  const plugins = root.get("plugins", true);
  if (!isNull(plugins) && !isSeq(plugins)) throw invalid(w, plugins, "plugins must be a list", ENTRY_HINT);
  if (isSeq(plugins))
    own.entries = mergeEntries(
      [],
      plugins.items.map((node) => parseEntry(w, doc, node)),
    );
  return merge(parents, own);
}

// Built-in presets are compiled at build time (scripts/build.mjs writes dist/presets.json): each one's
// loaded state, its folder written as a placeholder. A run on built-in presets parses no YAML (the cold
// yaml parser cost ~13 ms of a one-turn run). A YAML file newer than the JSON is read as YAML.
const PRESETS_DIR = "<coil-presets>";
let compiledPresets: { mtime: number; states: Record<string, State> } | null | undefined;

function compiledBuiltin(file: string): State | undefined {
  const dir = join(packageRoot(), "presets");
  if (dirname(file) !== dir) return undefined;
  if (compiledPresets === undefined) {
    const json = join(packageRoot(), "dist", "presets.json");
    try {
      const text = readFileSync(json, "utf8").replaceAll(PRESETS_DIR, JSON.stringify(dir).slice(1, -1));
      compiledPresets = { mtime: statSync(json).mtimeMs, states: JSON.parse(text) as Record<string, State> };
    } catch {
      compiledPresets = null; // not built (tests on the sources): read the YAML
    }
  }
  const state = compiledPresets?.states[basename(file)];
  return state && statSync(file).mtimeMs <= compiledPresets!.mtime ? structuredClone(state) : undefined;
}

/** Every built-in preset's loaded state as JSON, keyed by file name, the presets folder as a placeholder (for the build). */
export function compileBuiltinPresets(): string {
  const [dir, saved] = [join(packageRoot(), "presets"), compiledPresets];
  compiledPresets = null;
  try {
    const states = Object.fromEntries(
      builtinPresetNames().map((name) => [`${name}.yaml`, loadFile(join(dir, `${name}.yaml`), "", [])]),
    );
    return JSON.stringify(states).replaceAll(JSON.stringify(dir).slice(1, -1), PRESETS_DIR);
  } finally {
    compiledPresets = saved;
  }
}

/** One `plugins:` list item. */
function parseEntry(w: Where, doc: Document, node: unknown): Item {
  if (isMap(node) && node.items.length !== 1)
    throw invalid(w, node, `a plugin entry must have exactly one key, found ${node.items.length}`, ENTRY_HINT);
  const [refNode, valueNode] = isMap(node) ? [node.items[0]!.key, node.items[0]!.value] : [node, null];
  const ref = isScalar(refNode) ? refNode.value : undefined;
  if (typeof ref !== "string" || !ref.trim())
    throw invalid(w, refNode ?? node, "a plugin reference must be a non-empty string", ENTRY_HINT);
  const value = valueNode == null ? null : (valueNode as Node).toJS(doc);
  if (value !== null && typeof value !== "boolean" && !isPlain(value)) {
    throw invalid(
      w,
      valueNode,
      `options of "${ref}" must be a mapping, true, false or empty; got ${JSON.stringify(value)}`,
      ENTRY_HINT,
    );
  }
  return {
    ...makeEntry(ref, dirname(w.file), isPlain(value) ? value : {}, at(w, refNode), w.file),
    removed: value === false,
  };
}

/** An entry, with its reference classified syntactically: a path, an npm package (`npm:x`, `@scope/x`) or a name. */
function makeEntry(
  ref: string,
  dir: string,
  options: Record<string, unknown>,
  source: PresetSource,
  setBy: string,
): Item {
  const path = isPathRef(ref, /\.(m?ts|m?js)$/);
  const kind = path ? "path" : ref.startsWith("npm:") || ref.startsWith("@") ? "npm" : "name";
  const optionSources = Object.fromEntries(leaves(options).map((leaf) => [leaf, setBy]));
  return {
    ref,
    key: path ? expand(ref, dir) : kind === "npm" ? npmName(ref) : ref,
    kind,
    options,
    source,
    baseDir: dir,
    optionSources,
  };
}

/** Check a setting (`fail` makes the error) and record it in `state`. */
function setSetting(
  state: State,
  key: string,
  value: unknown,
  setBy: string,
  fail: (problem: string) => CoilError,
): void {
  const rule = SETTING_RULES[key as keyof PresetSettings];
  if (!rule) throw fail(`unknown setting "${key}"; known settings: ${Object.keys(SETTING_RULES).join(", ")}`);
  if (!rule.ok(value)) throw fail(`${key} must be ${rule.want}, got ${JSON.stringify(value) ?? "nothing"}`);
  (state.settings as Record<string, unknown>)[key] = value;
  state.settingSources[key] = setBy;
}

// ---------------------------------------------------------------------------------------------
// Finding presets: built-in name, path, or npm package

function findPreset(ref: string, dir: string, home: string, pos: Partial<PresetSource> = {}): string {
  if (ref.startsWith("npm:") || ref.startsWith("@")) return npmPreset(ref, dir, home, pos);
  if (isPathRef(ref, /\.ya?ml$/) || ref.includes("/")) {
    const file = expand(ref, dir);
    if (!existsSync(file)) throw notFound(`preset file ${file} does not exist`, pos);
    return file;
  }
  const names = builtinPresetNames();
  if (names.includes(ref)) return join(packageRoot(), "presets", `${ref}.yaml`);
  const near = nearest(ref, names);
  const detail = `unknown preset "${ref}"${near ? ` (did you mean "${near}"?)` : ""}; built-in presets: ${names.join(", ")}`;
  throw notFound(
    detail,
    pos,
    "name a built-in preset, a path to a YAML file (./team.yaml), or an npm package (npm:name)",
  );
}

const npmName = (ref: string): string => npmSpec(ref).name;

/** `pkg[@range]` or `pkg[@range]/sub/file.yaml`, looked up in node_modules above `dir`, then in coil's home. */
function npmPreset(ref: string, dir: string, home: string, pos: Partial<PresetSource>): string {
  const { spec, name: pkg } = npmSpec(ref);
  const sub = ref.replace(/^npm:/, "").slice(spec.length + 1);
  for (const pkgDir of [...nodeModules(pkg, dir), join(home, "packages", "node_modules", pkg)]) {
    const manifest = join(pkgDir, "package.json");
    if (!existsSync(manifest)) continue;
    const file = join(pkgDir, sub || (JSON.parse(readFileSync(manifest, "utf8")).coil?.preset ?? "preset.yaml"));
    if (existsSync(file)) return file;
  }
  const detail = `npm package "${pkg}" with a preset${sub ? ` ${sub}` : ""} not found (searched node_modules above ${dir} and in ${join(home, "packages", "node_modules")})`;
  throw notFound(
    detail,
    pos,
    `install it (coil install ${spec}); its package.json "coil.preset" names the YAML file (default preset.yaml)`,
    spec,
  );
}

// ---------------------------------------------------------------------------------------------
// Merging

function merge(parent: State, child: State): State {
  const entries = mergeEntries(parent.entries, child.entries);
  return {
    entries,
    settings: { ...parent.settings, ...child.settings },
    settingSources: { ...parent.settingSources, ...child.settingSources },
  };
}

/** Parent order kept; same key merges; `false` removes; new keys and re-added removed keys append. */
function mergeEntries(parent: Item[], child: Item[]): Item[] {
  const out = [...parent];
  for (const c of child) {
    const p = out.find((e) => e.key === c.key);
    if (p && !c.removed && !p.removed && !c.fresh) {
      const options = deepMerge(p.options, c.options);
      const optionSources = Object.fromEntries(
        leaves(options).map((k) => [k, c.optionSources[k] ?? p.optionSources[k]!]),
      );
      out[out.indexOf(p)] = {
        ...p,
        options,
        optionSources,
        baseDir: Object.keys(c.options).length ? c.baseDir : p.baseDir,
      };
    } else {
      if (p) out.splice(out.indexOf(p), 1);
      out.push(p && !c.removed ? { ...c, fresh: true } : c);
    }
  }
  return out;
}

function deepMerge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  return {
    ...a,
    ...Object.fromEntries(Object.entries(b).map(([k, v]) => [k, isPlain(a[k]) && isPlain(v) ? deepMerge(a[k], v) : v])),
  };
}

/** Dotted paths of option leaves (arrays, scalars and empty objects are leaves). */
function leaves(obj: Record<string, unknown>, prefix = ""): string[] {
  return Object.entries(obj).flatMap(([k, v]) =>
    isPlain(v) && Object.keys(v).length ? leaves(v, `${prefix}${k}.`) : [`${prefix}${k}`],
  );
}

function cliLayer({ cli, cwd }: ResolveOptions): State {
  const refs = cli?.plugins ?? [];
  if (refs.some((ref) => !ref.trim()))
    throw new CoilError("CONFIG_INVALID", "--plugin needs a plugin name, path or npm package");
  const state: State = {
    ...empty(),
    entries: mergeEntries(
      [],
      refs.map((ref) => makeEntry(ref, cwd, {}, { file: "cli" }, "cli")),
    ),
  };
  for (const [key, value] of Object.entries(cli?.settings ?? {}).filter(([, v]) => v !== undefined)) {
    setSetting(
      state,
      key,
      value,
      "cli",
      (problem) => new CoilError("CONFIG_INVALID", problem, { hint: "check the command-line flags" }),
    );
  }
  return state;
}

// ---------------------------------------------------------------------------------------------
// Helpers: positions, names, output

function at(w: Where, node: unknown): PresetSource {
  const offset = (node as Node | null | undefined)?.range?.[0];
  return offset === undefined
    ? { file: w.file }
    : { file: w.file, line: w.lc.linePos(offset).line, column: w.lc.linePos(offset).col };
}

const invalid = (w: Where, node: unknown, detail: string, hint?: string) =>
  new CoilError("PRESET_INVALID", detail, { ...at(w, node), hint });
const notFound = (detail: string, pos: Partial<PresetSource>, hint?: string, npmSpec?: string) =>
  new CoilError("PRESET_NOT_FOUND", detail, { ...pos, hint, npmSpec });

/** The closest candidate by edit distance (adjacent swaps count once), or undefined if none is close. */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  const limit = w.length <= 3 ? 1 : Math.max(2, Math.floor(w.length / 3));
  const close = candidates.map((c) => ({ c, d: distance(w, c.toLowerCase()) })).filter(({ d }) => d <= limit);
  return close.sort((a, b) => a.d - b.d)[0]?.c; // a stable sort: the first of equally close candidates wins
}

/** Levenshtein distance where swapping two adjacent letters counts as one edit (optimal string alignment). */
export function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i && j ? 0 : i + j)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const swap = i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1] ? d[i - 2]![j - 2]! + 1 : Infinity;
      d[i]![j] = Math.min(
        d[i - 1]![j]! + 1,
        d[i]![j - 1]! + 1,
        d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
        swap,
      );
    }
  }
  return d[a.length]![b.length]!;
}

/** A file for people: `builtin:<name>` for built-in presets, else the path. */
export function label(file: string): string {
  const rel = relative(join(packageRoot(), "presets"), file);
  return !rel.startsWith("..") && !rel.includes(sep) && rel.endsWith(".yaml") ? `builtin:${rel.slice(0, -5)}` : file;
}
