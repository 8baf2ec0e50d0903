/**
 * Preset loading: read YAML presets, resolve `extends`, merge the layers (base → user → project → cli)
 * and remember which file set every entry, option and setting. Synchronous; reading preset files is
 * its only I/O. Plugin references are classified here but not loaded (the plugin loader does that).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { Document, isMap, isScalar, isSeq, LineCounter, parseDocument, YAMLMap, YAMLSeq, type Node } from "yaml";
import { CoilError } from "../errors.js";
import { packageRoot } from "./paths.js";

export interface PresetSource { file: string; line?: number; column?: number }
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
export interface PresetSettings { provider?: string; model?: string; thinking?: string; toolExecution?: "parallel" | "sequential"; reserveTokens?: number; description?: string }
export interface PresetLayer { name: "base" | "user" | "project" | "cli"; file?: string; skipped?: string }
export interface ResolvedPreset {
  /** Enabled entries, in order. */
  entries: PresetEntry[];
  settings: PresetSettings;
  settingSources: Record<string, string>;
  layers: PresetLayer[];
}
export interface ResolveOptions {
  /** Built-in preset name or path to a YAML file (relative to cwd). Default `default`. */
  preset?: string;
  cwd: string;
  /** coil's home (`$COIL_HOME`, default `~/.coil`). */
  home: string;
  trust: boolean;
  cli?: { plugins?: string[]; settings?: PresetSettings };
}

const SETTING_RULES: Record<keyof PresetSettings, "string" | "positive integer" | readonly string[]> = {
  description: "string",
  provider: "string",
  model: "string",
  thinking: ["off", "minimal", "low", "medium", "high", "xhigh"],
  toolExecution: ["parallel", "sequential"],
  reserveTokens: "positive integer",
};
const KNOWN_KEYS = ["description", "extends", "plugins", "provider", "model", "thinking", "toolExecution", "reserveTokens"];
const ENTRY_HINT = "write `- name`, `- name: { option: value }`, or `- name: false` to remove it";

/** An entry while merging: `removed` is a tombstone (`false`), `fresh` re-adds after a removal. */
interface Item extends PresetEntry { removed?: boolean; fresh?: boolean }
interface State { entries: Item[]; settings: PresetSettings; settingSources: Record<string, string> }
/** A parsed file, for positions in errors. */
interface Where { file: string; lc: LineCounter }

const empty = (): State => ({ entries: [], settings: {}, settingSources: {} });
const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export function resolvePreset(options: ResolveOptions): ResolvedPreset {
  const { cwd, home } = options;
  const baseFile = findPreset(options.preset ?? "default", cwd, home);
  let state = loadFile(baseFile, home, []);
  const layers: PresetLayer[] = [{ name: "base", file: baseFile }];
  const userFile = join(home, "preset.yaml");
  if (existsSync(userFile)) {
    state = merge(state, loadFile(userFile, home, []));
    layers.push({ name: "user", file: userFile });
  }
  const projectFile = join(cwd, ".coil", "preset.yaml");
  if (projectFile !== userFile && existsSync(projectFile)) {
    if (options.trust) state = merge(state, loadFile(projectFile, home, []));
    layers.push({ name: "project", file: projectFile, ...(options.trust ? {} : { skipped: "untrusted project: pass --trust to load it" }) });
  }
  const cli = cliLayer(options);
  if (cli.entries.length || Object.keys(cli.settings).length) {
    state = merge(state, cli);
    layers.push({ name: "cli" });
  }
  const entries = state.entries.filter((e) => !e.removed).map(({ removed: _r, fresh: _f, ...entry }) => entry);
  return { entries, settings: state.settings, settingSources: state.settingSources, layers };
}

export function builtinPresetNames(): string[] {
  const dir = join(packageRoot(), "presets");
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => f.endsWith(".yaml")).map((f) => f.slice(0, -5)).sort();
}

// ---------------------------------------------------------------------------------------------
// Reading one file (with its `extends`)

function loadFile(file: string, home: string, stack: readonly string[], via?: [Where, unknown]): State {
  const pos = via ? at(...via) : {};
  if (stack.includes(file)) {
    const chain = [...stack.slice(stack.indexOf(file)), file].map(label).join(" → ");
    throw new CoilError("PRESET_INVALID", `extends cycle: ${chain}`, { ...pos, hint: "remove one of the extends links" });
  }
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (cause) {
    throw new CoilError("PRESET_NOT_FOUND", `cannot read preset ${file}`, { ...pos, cause });
  }
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: true });
  const w: Where = { file, lc };
  const bad = doc.errors[0];
  if (bad) {
    const detail = bad.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
    const p = bad.linePos?.[0];
    throw new CoilError("PRESET_INVALID", `malformed YAML: ${detail}`, { file, line: p?.line, column: p?.col, cause: bad });
  }
  const root = doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) return empty();
  if (!isMap(root)) throw invalid(w, root, "a preset must be a YAML mapping (keys: " + KNOWN_KEYS.join(", ") + ")");

  const own = empty();
  let parents: State = empty();
  let pluginsNode: unknown;
  for (const pair of root.items) {
    const key = isScalar(pair.key) ? pair.key.value : undefined;
    if (typeof key !== "string" || !KNOWN_KEYS.includes(key)) {
      const near = typeof key === "string" ? nearest(key, KNOWN_KEYS) : undefined;
      throw invalid(w, pair.key, `unknown key "${String(key)}"; known keys: ${KNOWN_KEYS.join(", ")}`, near && `did you mean "${near}"?`);
    }
    if (key === "plugins") pluginsNode = pair.value;
    else if (key === "extends") {
      for (const [ref, node] of stringList(w, pair.value, "extends")) {
        const parent = loadFile(findPreset(ref, dirname(file), home, [w, node]), home, [...stack, file], [w, node]);
        parents = merge(parents, parent);
      }
    } else {
      const v = pair.value == null ? null : isScalar(pair.value) ? pair.value.value : (pair.value as Node).toJS(doc);
      const problem = checkSetting(key, v);
      if (problem) throw invalid(w, pair.value ?? pair.key, problem);
      (own.settings as Record<string, unknown>)[key] = v;
      own.settingSources[key] = file;
    }
  }
  if (pluginsNode != null && !(isScalar(pluginsNode) && pluginsNode.value === null)) {
    if (!isSeq(pluginsNode)) throw invalid(w, pluginsNode, "plugins must be a list", ENTRY_HINT);
    for (const node of pluginsNode.items) own.entries = mergeEntries(own.entries, [parseEntry(w, doc, node)]);
  }
  return merge(parents, own);
}

/** One `plugins:` list item. */
function parseEntry(w: Where, doc: Document, node: unknown): Item {
  let refNode = node;
  let valueNode: unknown;
  if (isMap(node)) {
    if (node.items.length !== 1) throw invalid(w, node, `a plugin entry must have exactly one key, found ${node.items.length}`, ENTRY_HINT);
    refNode = node.items[0]!.key;
    valueNode = node.items[0]!.value;
  }
  const ref = isScalar(refNode) ? refNode.value : undefined;
  if (typeof ref !== "string" || !ref.trim()) throw invalid(w, refNode ?? node, "a plugin reference must be a non-empty string", ENTRY_HINT);
  const value = valueNode == null ? null : (valueNode as Node).toJS(doc);
  if (value !== null && value !== true && value !== false && !isPlain(value)) {
    throw invalid(w, valueNode, `options of "${ref}" must be a mapping, true, false or empty; got ${JSON.stringify(value)}`, ENTRY_HINT);
  }
  const item = makeEntry(ref, dirname(w.file), isPlain(value) ? value : {}, at(w, refNode), w.file);
  return value === false ? { ...item, removed: true } : item;
}

function makeEntry(ref: string, dir: string, options: Record<string, unknown>, source: PresetSource, setBy: string): Item {
  const { kind, key } = classify(ref, dir);
  const optionSources = Object.fromEntries(leaves(options).map((path) => [path, setBy]));
  return { ref, kind, key, options, source, baseDir: dir, optionSources };
}

/** Syntactic classification of a plugin reference. */
function classify(ref: string, dir: string): Pick<PresetEntry, "kind" | "key"> {
  if (/^(\.\.?\/|~\/)/.test(ref) || isAbsolute(ref) || /\.(m?ts|m?js)$/.test(ref)) {
    return { kind: "path", key: resolve(dir, ref.startsWith("~/") ? join(homedir(), ref.slice(2)) : ref) };
  }
  if (ref.startsWith("npm:")) return { kind: "npm", key: ref.slice(4) };
  return ref.startsWith("@") ? { kind: "npm", key: ref } : { kind: "name", key: ref };
}

function checkSetting(key: string, value: unknown): string | undefined {
  const rule = SETTING_RULES[key as keyof PresetSettings];
  if (!rule) return `unknown setting "${key}"; known settings: ${Object.keys(SETTING_RULES).join(", ")}`;
  const ok =
    rule === "string" ? typeof value === "string" && value !== ""
    : rule === "positive integer" ? Number.isInteger(value) && (value as number) > 0
    : rule.includes(value as string);
  if (ok) return undefined;
  const want = rule === "string" ? "a non-empty string" : rule === "positive integer" ? "a positive integer" : `one of ${rule.join(", ")}`;
  return `${key} must be ${want}, got ${JSON.stringify(value) ?? "nothing"}`;
}

/** `extends: name` or `extends: [a, b]` → [[ref, node]]. */
function stringList(w: Where, node: unknown, what: string): [string, unknown][] {
  if (node == null || (isScalar(node) && node.value === null)) return [];
  const items = isSeq(node) ? node.items : [node];
  return items.map((item) => {
    if (!isScalar(item) || typeof item.value !== "string" || !item.value) throw invalid(w, item, `${what} must be a preset name or a list of them`);
    return [item.value, item];
  });
}

// ---------------------------------------------------------------------------------------------
// Finding presets: built-in name, path, or npm package

function findPreset(ref: string, dir: string, home: string, via?: [Where, unknown]): string {
  const pos = via ? at(...via) : {};
  if (ref.startsWith("npm:") || ref.startsWith("@")) return npmPreset(ref.replace(/^npm:/, ""), dir, home, pos);
  if (/^(\.\.?\/|~\/)/.test(ref) || isAbsolute(ref) || /\.ya?ml$/.test(ref) || ref.includes("/")) {
    const file = resolve(dir, ref.startsWith("~/") ? join(homedir(), ref.slice(2)) : ref);
    if (!existsSync(file)) throw new CoilError("PRESET_NOT_FOUND", `preset file ${file} does not exist`, pos);
    return file;
  }
  const names = builtinPresetNames();
  if (names.includes(ref)) return join(packageRoot(), "presets", `${ref}.yaml`);
  const near = nearest(ref, names);
  throw new CoilError("PRESET_NOT_FOUND", `unknown preset "${ref}"${near ? ` (did you mean "${near}"?)` : ""}; built-in presets: ${names.join(", ")}`, {
    ...pos,
    hint: "name a built-in preset, a path to a YAML file (./team.yaml), or an npm package (npm:name)",
  });
}

/** `pkg` or `pkg/sub/file.yaml`, looked up in node_modules above `dir`, then in coil's home. */
function npmPreset(spec: string, dir: string, home: string, pos: Partial<PresetSource>): string {
  const parts = spec.split("/");
  const n = spec.startsWith("@") ? 2 : 1;
  const pkg = parts.slice(0, n).join("/");
  const sub = parts.slice(n).join("/");
  for (let d = dir, up = ""; d !== up; up = d, d = dirname(d)) {
    const found = presetInPackage(join(d, "node_modules", pkg), sub);
    if (found) return found;
  }
  const found = presetInPackage(join(home, "node_modules", pkg), sub);
  if (found) return found;
  throw new CoilError("PRESET_NOT_FOUND", `npm package "${pkg}" with a preset${sub ? ` ${sub}` : ""} not found (searched node_modules above ${dir} and in ${home})`, {
    ...pos,
    hint: `install it (npm install ${pkg}); its package.json "coil.preset" names the YAML file (default preset.yaml)`,
  });
}

function presetInPackage(pkgDir: string, sub: string): string | undefined {
  if (!existsSync(join(pkgDir, "package.json"))) return undefined;
  if (sub) return existsSync(join(pkgDir, sub)) ? join(pkgDir, sub) : undefined;
  const manifest = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { coil?: { preset?: string } };
  const file = join(pkgDir, manifest.coil?.preset ?? "preset.yaml");
  return existsSync(file) ? file : undefined;
}

// ---------------------------------------------------------------------------------------------
// Merging

function merge(parent: State, child: State): State {
  return {
    entries: mergeEntries(parent.entries, child.entries),
    settings: { ...parent.settings, ...child.settings },
    settingSources: { ...parent.settingSources, ...child.settingSources },
  };
}

/** Parent order kept; same key merges; `false` removes; new keys and re-added removed keys append. */
function mergeEntries(parent: Item[], child: Item[]): Item[] {
  const out = [...parent];
  for (const c of child) {
    const i = out.findIndex((e) => e.key === c.key);
    const p = out[i];
    if (!p) out.push(c);
    else if (c.removed || p.removed || c.fresh) {
      out.splice(i, 1);
      out.push(c.removed ? c : { ...c, fresh: true });
    } else {
      const options = deepMerge(p.options, c.options);
      const optionSources = Object.fromEntries(leaves(options).map((k) => [k, c.optionSources[k] ?? p.optionSources[k]!]));
      out[i] = { ...p, options, optionSources, baseDir: Object.keys(c.options).length ? c.baseDir : p.baseDir };
    }
  }
  return out;
}

function deepMerge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = isPlain(out[k]) && isPlain(v) ? deepMerge(out[k], v) : v;
  return out;
}

/** Dotted paths of option leaves (arrays, scalars and empty objects are leaves). */
function leaves(obj: Record<string, unknown>, prefix = ""): string[] {
  return Object.entries(obj).flatMap(([k, v]) =>
    isPlain(v) && Object.keys(v).length ? leaves(v, `${prefix}${k}.`) : [`${prefix}${k}`],
  );
}

function cliLayer(options: ResolveOptions): State {
  const state = empty();
  for (const ref of options.cli?.plugins ?? []) {
    if (!ref.trim()) throw new CoilError("CONFIG_INVALID", "--plugin needs a plugin name, path or npm package");
    state.entries = mergeEntries(state.entries, [makeEntry(ref, options.cwd, {}, { file: "cli" }, "cli")]);
  }
  for (const [key, value] of Object.entries(options.cli?.settings ?? {})) {
    if (value === undefined) continue;
    const problem = checkSetting(key, value);
    if (problem) throw new CoilError("CONFIG_INVALID", problem, { hint: "check the command-line flags" });
    (state.settings as Record<string, unknown>)[key] = value;
    state.settingSources[key] = "cli";
  }
  return state;
}

// ---------------------------------------------------------------------------------------------
// Helpers: positions, names, output

function at(w: Where, node: unknown): PresetSource {
  const offset = (node as Node | null | undefined)?.range?.[0];
  if (offset === undefined) return { file: w.file };
  const { line, col } = w.lc.linePos(offset);
  return { file: w.file, line, column: col };
}

function invalid(w: Where, node: unknown, detail: string, hint?: string): CoilError {
  return new CoilError("PRESET_INVALID", detail, { ...at(w, node), ...(hint ? { hint } : {}) });
}

/** The closest candidate by edit distance (adjacent swaps count once), or undefined if none is close. */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  const limit = w.length <= 3 ? 1 : Math.max(2, Math.floor(w.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    const d = distance(w, candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

/** Levenshtein distance where swapping two adjacent letters counts as one edit (optimal string alignment). */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i && j ? 0 : i + j)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const swap = i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1] ? d[i - 2]![j - 2]! + 1 : Infinity;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1), swap);
    }
  }
  return d[a.length]![b.length]!;
}

/** A file for people: `builtin:<name>` for built-in presets, else the path. */
function label(file: string): string {
  const rel = relative(join(packageRoot(), "presets"), file);
  return !rel.startsWith("..") && !rel.includes(sep) && rel.endsWith(".yaml") ? `builtin:${rel.slice(0, -5)}` : file;
}

const where = (s: PresetSource): string => `${label(s.file)}${s.line ? `:${s.line}` : ""}`;

export function formatPreset(preset: ResolvedPreset, format: "yaml" | "json"): string {
  const plugins = preset.entries.map(({ ref, key, kind, options, source, optionSources }) => ({ ref, key, kind, options, source, optionSources }));
  if (format === "json") {
    const { layers, settings, settingSources } = preset;
    return JSON.stringify({ layers, settings, settingSources, plugins }, null, 2) + "\n";
  }
  const doc = new Document({});
  const root = doc.contents as YAMLMap;
  doc.commentBefore = [
    " coil preset, resolved. Layers, lowest first:",
    ...preset.layers.map((l) => `   ${l.name.padEnd(8)}${l.file ? label(l.file) : "command-line flags"}${l.skipped ? `  (skipped: ${l.skipped})` : ""}`),
    " Each value's comment names the file (or cli) that set it.",
  ].join("\n");
  for (const key of Object.keys(SETTING_RULES)) {
    const value = (preset.settings as Record<string, unknown>)[key];
    if (value === undefined) continue;
    const node = doc.createNode(value);
    node.comment = ` ${label(preset.settingSources[key] ?? "?")}`;
    root.add(doc.createPair(key, node));
  }
  const seq = new YAMLSeq();
  for (const e of preset.entries) {
    const name = e.kind === "path" ? e.key : e.ref; // printed so that the output is itself a valid preset
    const pair = Object.keys(e.options).length ? (doc.createNode({ [name]: e.options }) as YAMLMap).items[0] : undefined;
    const node = pair ? new YAMLMap() : doc.createNode(name);
    ((pair?.key ?? node) as Node).comment = ` ${where(e.source)}`;
    if (pair) {
      (node as YAMLMap).items.push(pair);
      annotate(pair.value as YAMLMap, e.optionSources, "");
    }
    seq.items.push(node);
  }
  root.add(doc.createPair("plugins", seq));
  return doc.toString({ lineWidth: 0 });
}

/** Put `# <file>` after every option leaf; arrays are printed inline so the comment trails them. */
function annotate(map: YAMLMap, sources: Record<string, string>, prefix: string): void {
  for (const pair of map.items) {
    const path = `${prefix}${String((pair.key as Node & { value?: unknown }).value)}`;
    const value = pair.value as Node;
    if (isMap(value) && value.items.length) annotate(value, sources, `${path}.`);
    else {
      if (isSeq(value) || isMap(value)) value.flow = true;
      if (sources[path]) value.comment = ` ${label(sources[path])}`;
    }
  }
}
