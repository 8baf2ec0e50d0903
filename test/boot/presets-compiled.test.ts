import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { builtinPresetNames, compileBuiltinPresets } from "../../boot/preset.js";

const root = join(import.meta.dirname, "..", "..");

describe("built-in presets compiled at build time", () => {
  it("dist/presets.json holds every built-in preset, loaded as the YAML says (so a run parses no YAML for them)", () => {
    const file = join(root, "dist", "presets.json");
    expect(existsSync(file), "npm run build writes dist/presets.json").toBe(true);
    const built = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    const fresh = JSON.parse(compileBuiltinPresets()) as Record<string, unknown>;
    expect(Object.keys(built).sort()).toEqual(builtinPresetNames().map((n) => `${n}.yaml`));
    expect(built, "dist/presets.json is older than presets/ or boot/preset.ts: run npm run build").toEqual(fresh);
    expect(JSON.stringify(built)).not.toContain(root); // no build machine paths: the package is installed elsewhere
  });
});
