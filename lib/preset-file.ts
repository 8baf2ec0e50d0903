/**
 * A user's or project's own preset file (`$COIL_HOME/preset.yaml`, `.coil/preset.yaml`) as the place
 * where installed packages are switched on and off. An npm package is *enabled* when the file's
 * `plugins:` list names it (`- npm:<name>`, `- @scope/name`, with or without options) and *disabled*
 * when it names it with `false` (`- npm:<name>: false`, which also removes it when a preset below
 * names it). Edits go through the `yaml` Document API, so the user's comments, order and layout stay.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { isMap, isScalar, isSeq, parseDocument, type Document, type Node, type YAMLSeq } from "yaml";
import { npmSpec } from "./npm-spec.js";

/** What a preset file says about a package: enabled (`true`), disabled (`false`), or nothing (`undefined`). */
export type PackageState = boolean | undefined;

/**
 * The npm package an entry reference names, or undefined for a built-in id or a path:
 * `npm:@acme/x@^1` → `@acme/x`, `@acme/x/sub` → `@acme/x`, `npm:x` → `x`.
 */
export function packageOfRef(ref: string): string | undefined {
  return ref.startsWith("npm:") || ref.startsWith("@") ? npmSpec(ref).name : undefined;
}

/** The reference coil writes for a package: `npm:<name>` (`npm:@scope/x` needs no YAML quotes). */
export const refOf = (name: string): string => `npm:${name}`;

function load(file: string): Document {
  const doc = parseDocument(existsSync(file) ? readFileSync(file, "utf8") : "");
  const bad = doc.errors[0];
  if (bad) {
    const line = bad.linePos?.[0].line;
    throw new Error(
      `${file}${line ? `:${line}` : ""}: malformed YAML (${bad.message.split("\n")[0]}); fix the file, then try again`,
    );
  }
  if (doc.contents !== null && !isMap(doc.contents))
    throw new Error(`${file}: a preset must be a YAML mapping; fix the file, then try again`);
  const plugins = isMap(doc.contents) ? doc.contents.get("plugins", true) : undefined;
  if (plugins != null && !isSeq(plugins) && !(isScalar(plugins) && plugins.value === null))
    throw new Error(`${file}: plugins must be a list; fix the file, then try again`);
  return doc;
}

/** Each `plugins:` item with the package it names and its value (`false` when disabled). */
function entries(doc: Document): { index: number; name: string; value: unknown }[] {
  const seq = isMap(doc.contents) ? doc.contents.get("plugins", true) : undefined;
  if (!isSeq(seq)) return [];
  return seq.items.flatMap((node, index) => {
    const [ref, value] =
      isMap(node) && node.items.length === 1 ? [node.items[0]!.key, node.items[0]!.value] : [node, null];
    const name = isScalar(ref) && typeof ref.value === "string" ? packageOfRef(ref.value) : undefined;
    return name ? [{ index, name, value: isScalar(value) ? value.value : value }] : [];
  });
}

/** Every package the file names, enabled (`true`) or disabled (`false`); the last mention wins. A missing file names none. */
export function packageStates(file: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  if (!existsSync(file)) return out;
  for (const e of entries(load(file))) out.set(e.name, e.value !== false);
  return out;
}

/** Packages the file disables; an unreadable or malformed file disables none (loading the preset reports it). */
export function disabledPackages(file: string): Set<string> {
  try {
    return new Set([...packageStates(file)].filter(([, on]) => !on).map(([name]) => name));
  } catch {
    return new Set();
  }
}

const HEADER =
  "# Your own coil preset, merged over the preset you run (docs/presets.md).\n# `coil install`, `coil enable`, `coil disable` and `coil remove` edit the plugins list.\n";

/**
 * Enable (`true`), disable (`false`) or forget (`undefined`) a package in a preset file, creating the file
 * (and its `plugins:` list) when needed. An enabled entry keeps its options. Returns whether the file changed.
 */
export function setPackageState(file: string, name: string, state: PackageState): boolean {
  const doc = load(file);
  const found = entries(doc);
  const before = doc.toString();
  if (!isMap(doc.contents)) doc.contents = doc.createNode({}) as never;
  const map = doc.contents as unknown as { get(k: string, keep: true): unknown; set(k: string, v: unknown): void };
  let seq = map.get("plugins", true);
  if (!isSeq(seq)) {
    if (state === undefined) return false;
    seq = doc.createNode([]);
    map.set("plugins", seq);
  }
  const items = (seq as YAMLSeq).items as Node[];
  const mine = found.filter((e) => e.name === name);
  const replace = (index: number, node: Node) => {
    const old = items[index]!;
    node.commentBefore = old.commentBefore;
    node.comment = old.comment;
    items[index] = node;
  };
  if (state === undefined) {
    for (const e of [...mine].reverse()) items.splice(e.index, 1);
  } else if (state) {
    const off = mine.filter((e) => e.value === false);
    for (const e of off) replace(e.index, doc.createNode(refOf(name)));
    if (!mine.length) items.push(doc.createNode(refOf(name)));
  } else {
    for (const e of mine) if (e.value !== false) replace(e.index, doc.createNode({ [refOf(name)]: false }));
    if (!mine.length) items.push(doc.createNode({ [refOf(name)]: false }));
  }
  const text = doc.toString();
  if (text === before && existsSync(file)) return false;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, existsSync(file) ? text : HEADER + text);
  renameSync(`${file}.tmp`, file);
  return true;
}
