/**
 * What the command line says when it does not know a word: an option that a built-in plugin this preset
 * leaves out would add (`coil --plan` in the default preset: plan-mode, in the `safe` preset), and a
 * `/name` in print mode that names no command (the nearest ones).
 */
import { builtinPluginIds } from "../boot/paths.js";
import { loadPlugin } from "../boot/load.js";
import { loadOptionChecks, validateOptions } from "../boot/options.js";
import { builtinPresetNames, distance, resolvePreset } from "../boot/preset.js";
import { PluginHost } from "../boot/host.js";
import { CommandLine } from "../lib/command-line.js";

/**
 * The built-in plugin, not set up in this run, whose flag `option` is (`--plan`, `-x`, `--no-x`), and the
 * built-in presets that include it; undefined when no built-in plugin has it. Sets each candidate up on a
 * host of its own (setup registers only), so it costs a moment, on this error path only.
 */
export async function pluginWithFlag(
  option: string,
  loaded: ReadonlySet<string>,
  where: { cwd: string; home: string },
): Promise<{ plugin: string; presets: string[] } | undefined> {
  const long = option.startsWith("--") ? option.slice(2).split("=")[0]! : undefined;
  const short = long === undefined ? option.slice(1, 2) : undefined;
  for (const id of builtinPluginIds().filter((i) => !loaded.has(i))) {
    const commandLine = new CommandLine();
    try {
      const [plugin] = await loadPlugin({ ref: id, kind: "name", key: id, baseDir: where.cwd }, { home: where.home });
      await loadOptionChecks([{ plugin: plugin!, options: {} }]);
      const host = new PluginHost({ cwd: where.cwd, validate: validateOptions, declare: commandLine.declarations });
      host.install(plugin!, {}, { ref: id });
    } catch {
      // a plugin that does not set up without options registers what it registered until then
    }
    const has = commandLine.flags
      .values()
      .some((f) => f.name === long || `no-${f.name}` === long || (short !== undefined && f.short === short));
    if (has) return { plugin: id, presets: presetsWith(id, where) };
  }
  return undefined;
}

function presetsWith(id: string, where: { cwd: string; home: string }): string[] {
  return builtinPresetNames().filter((name) => {
    try {
      const preset = resolvePreset({ preset: name, cwd: where.cwd, home: where.home, trust: false, builtinOnly: true });
      return preset.entries.some((e) => e.key === id);
    } catch {
      return false;
    }
  });
}

/** The message for an option a built-in plugin would add. */
export function flagHint(option: string, found: { plugin: string; presets: string[] }, preset: string): string {
  const presets = found.presets.filter((p) => p !== preset);
  const use = presets.length
    ? `, or use a built-in preset that has it: ${presets.map((p) => `--preset ${p}`).join(", ")}`
    : "";
  return `${option} is a flag of the built-in plugin ${found.plugin}, which the preset '${preset}' does not include: add the plugin for this run with --plugin ${found.plugin}${use}, or add it to your preset (docs/presets.md)`;
}

/** Up to three names nearest to `name`, closest first (none when nothing is close). */
export function nearestNames(name: string, names: readonly string[]): string[] {
  const w = name.toLowerCase();
  const limit = w.length <= 3 ? 1 : Math.max(2, Math.floor(w.length / 3));
  return names
    .map((n) => ({ n, d: distance(w, n.toLowerCase()) }))
    .filter(({ n, d }) => d <= limit || n.toLowerCase().startsWith(w) || (w.length >= 3 && n.includes(w)))
    .sort((a, b) => a.d - b.d)
    .slice(0, 3)
    .map(({ n }) => n);
}
