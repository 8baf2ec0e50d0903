/**
 * Plugin options checked at build time: dist/options.json holds what validateOptions returns for the built-in
 * presets' options of each built-in plugin (and for no options), so a run skips TypeBox's cold Value.Default and
 * Value.Check. Each entry is compared with what the sources give now, and the shortcut is taken only for a
 * plugin module loaded from dist/ with exactly those options.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadPlugin } from "../../boot/load.js";
import { loadOptionChecks, precheckedKey, validateOptions } from "../../boot/options.js";
import { builtinPresetNames, resolvePreset } from "../../boot/preset.js";
import { CoilError } from "../../kernel/errors.js";
import type { Plugin } from "../../api/plugin.js";

const root = join(import.meta.dirname, "..", "..");
const file = join(root, "dist", "options.json");
await loadOptionChecks();

describe("plugin options prechecked at build time", () => {
  it("dist/options.json gives, for each built-in preset entry, what validateOptions gives from the sources", async () => {
    expect(existsSync(file), "npm run build writes dist/options.json").toBe(true);
    const built = JSON.parse(readFileSync(file, "utf8")) as Record<string, string>;
    const wanted = new Set<string>();
    for (const name of builtinPresetNames()) {
      const preset = resolvePreset({ preset: name, cwd: root, home: root, trust: false, builtinOnly: true, env: {} });
      for (const e of preset.entries) {
        const plugin = (await import(join(root, "dist", "plugins", e.key, "index.js"))).default as Plugin;
        if (!plugin.options) continue;
        const given = e.options ?? {};
        wanted.add(precheckedKey(e.key, given));
        wanted.add(precheckedKey(e.key, {}));
      }
    }
    // every built-in preset entry with options is there (no plugin of theirs has a function as a default)
    expect([...wanted].filter((k) => !(k in built))).toEqual([]);
    for (const [key, text] of Object.entries(built)) {
      const id = key.slice(0, key.indexOf(" "));
      const given = JSON.parse(key.slice(id.length + 1));
      const plugin = (await import(join(root, "plugins", id, "index.ts"))).default as Plugin;
      expect(JSON.parse(text), `${key}: dist/options.json is older than the sources, run npm run build`).toEqual(
        validateOptions(plugin, structuredClone(given)),
      );
    }
  });

  it("a built-in plugin loaded from dist/ gets the prechecked value for those options only; other options are checked", async () => {
    const dist = join(root, "dist", "plugins", "mcp", "index.js");
    const [plugin] = await loadPlugin({ ref: dist, kind: "path", key: dist, baseDir: root }, { home: root });
    const built = JSON.parse(readFileSync(file, "utf8")) as Record<string, string>;
    const prechecked = validateOptions(plugin!, {});
    expect(prechecked).toEqual(JSON.parse(built[precheckedKey("mcp", {})]!));
    // the same plugin object, not loaded through boot (no file known): checked by TypeBox, same result
    expect(validateOptions({ ...plugin! }, {})).toEqual(prechecked);
    expect(validateOptions(plugin!, { toolTimeout: 5 })).toMatchObject({ toolTimeout: 5, servers: {} });
    let error: unknown;
    try {
      validateOptions(plugin!, { toolTimeout: "soon" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CoilError);
    expect((error as CoilError).code).toBe("PLUGIN_OPTIONS_INVALID");
  });
});
