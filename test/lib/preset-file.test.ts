/** lib/preset-file.ts: enabling, disabling and forgetting packages in a user's preset file keeps the rest of the file as written. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { disabledPackages, packageStates, setPackageState } from "../../lib/preset-file.js";

const dirs: string[] = [];
const fileWith = (text?: string) => {
  const dir = mkdtempSync(join(tmpdir(), "coil-preset-file-"));
  dirs.push(dir);
  const file = join(dir, "preset.yaml");
  if (text !== undefined) writeFileSync(file, text);
  return file;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("preset file: package states", () => {
  it("creates the file with a header, then toggles an entry in place keeping comments, options and order", () => {
    const file = fileWith();
    expect(setPackageState(file, "@acme/tools", true)).toBe(true);
    expect(readFileSync(file, "utf8")).toMatch(/^# Your own coil preset[\s\S]*\nplugins:\n {2}- npm:@acme\/tools\n$/);

    const text =
      "# mine\nmodel: x # pinned\nplugins:\n  - tools-coding # first\n  # the demo bundle\n  - npm:demo@^1: { level: 2 }\n  - ./local.ts\n";
    const own = fileWith(text);
    expect(packageStates(own)).toEqual(new Map([["demo", true]]));
    expect(setPackageState(own, "demo", true)).toBe(false); // already enabled, options kept
    setPackageState(own, "demo", false);
    expect(readFileSync(own, "utf8")).toBe(
      "# mine\nmodel: x # pinned\nplugins:\n  - tools-coding # first\n  # the demo bundle\n  - npm:demo: false\n  - ./local.ts\n",
    );
    expect([...disabledPackages(own)]).toEqual(["demo"]);
    setPackageState(own, "demo", true);
    expect(readFileSync(own, "utf8")).toBe(
      "# mine\nmodel: x # pinned\nplugins:\n  - tools-coding # first\n  # the demo bundle\n  - npm:demo\n  - ./local.ts\n",
    );
    setPackageState(own, "demo", undefined);
    expect(readFileSync(own, "utf8")).toBe(
      "# mine\nmodel: x # pinned\nplugins:\n  - tools-coding # first\n  - ./local.ts\n",
    );
  });

  it("disabling a package the file does not name adds a `false` entry (it also removes it from presets below)", () => {
    const file = fileWith("model: x\n");
    setPackageState(file, "demo", false);
    expect(readFileSync(file, "utf8")).toBe("model: x\nplugins:\n  - npm:demo: false\n");
  });

  it("refuses a malformed file with its name and line, and reads it as disabling nothing", () => {
    const file = fileWith("plugins:\n  - a\n - b: [\n");
    expect(() => setPackageState(file, "demo", true)).toThrow(new RegExp(`${file}:\\d+: malformed YAML`));
    expect(disabledPackages(file).size).toBe(0);
    expect(() => setPackageState(fileWith("plugins: demo\n"), "demo", true)).toThrow("plugins must be a list");
  });
});
