/**
 * `coil preset show`: the resolved preset as annotated YAML (each value's comment names the layer file
 * that set it) or JSON. Resolution itself is boot/preset.ts.
 */
import { Document, isMap, isSeq, type Node, type Pair, type Scalar, type YAMLMap, type YAMLSeq } from "yaml";
import { label, SETTING_KEYS, type PresetEntry, type ResolvedPreset } from "../boot/preset.js";

export function formatPreset(preset: ResolvedPreset, format: "yaml" | "json"): string {
  const { layers, settings, settingSources, entries } = preset;
  if (format === "json") return JSON.stringify({ layers, settings, settingSources, plugins: entries.map(({ baseDir: _, ...e }) => e) }, null, 2) + "\n";
  // A path entry is printed as its absolute key, so that the output is itself a valid preset.
  const name = (e: PresetEntry) => (e.kind === "path" ? e.key : e.ref);
  const doc = new Document({
    ...Object.fromEntries(SETTING_KEYS.filter((k) => k in settings).map((k) => [k, settings[k]])),
    plugins: entries.map((e) => (Object.keys(e.options).length ? { [name(e)]: e.options } : name(e))),
  }, { aliasDuplicateObjects: false });
  const header = layers.map((l) => `   ${l.name.padEnd(8)}${l.file ? label(l.file) : "command-line flags"}${l.skipped ? `  (skipped: ${l.skipped})` : ""}`);
  doc.commentBefore = [" coil preset, resolved. Layers, lowest first:", ...header, " Each value's comment names the file (or cli) that set it."].join("\n");
  annotate(doc.contents as YAMLMap, settingSources);
  (doc.get("plugins") as YAMLSeq<Node>).items.forEach((node, i) => {
    const { source, optionSources } = entries[i]!;
    const pair = isMap(node) ? (node.items[0] as Pair<Node, YAMLMap>) : undefined;
    (pair?.key ?? node).comment = ` ${label(source.file)}${source.line ? `:${source.line}` : ""}`;
    if (pair) annotate(pair.value!, optionSources);
  });
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
