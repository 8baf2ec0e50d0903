import { describe, it, expect, beforeEach, afterEach } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse } from "yaml";
import { CoilError } from "../../kernel/errors.js";
import { packageRoot } from "../../boot/paths.js";
import { builtinPresetNames, nearest, resolvePreset, type ResolveOptions } from "../../boot/preset.js";
import { formatPreset } from "../../cli/preset-show.js";

let tmp: string;
let cwd: string;
let home: string;

beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "coil-preset-")));
  cwd = path.join(tmp, "project");
  home = path.join(tmp, "home");
  fs.mkdirSync(cwd, { recursive: true });
  fs.mkdirSync(home, { recursive: true });
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Write a file under the temp dir; returns its absolute path. */
function write(rel: string, text: string): string {
  const file = path.join(tmp, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

function resolve(preset: string, extra: Partial<ResolveOptions> = {}) {
  return resolvePreset({ preset, cwd, home, trust: false, ...extra });
}

function thrown(fn: () => unknown): CoilError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(CoilError);
    return error as CoilError;
  }
  throw new Error("expected an error");
}

const keys = (r: ReturnType<typeof resolve>) => r.entries.map((e) => e.key);
const entry = (r: ReturnType<typeof resolve>, key: string) => r.entries.find((e) => e.key === key)!;
/** The built-in default's plugin ids, read from the file itself so the tests follow the preset. */
const DEFAULT = () =>
  resolvePreset({ preset: "default", cwd: "/nonexistent", home: "/nonexistent", trust: false }).entries.map(
    (e) => e.key,
  );

describe("parsing entries", () => {
  it("accepts every entry form and classifies references", () => {
    const file = write(
      "p/a.yaml",
      [
        "plugins:",
        "  - ui-print",
        "  - provider-scripted: { chunkSize: 8 }",
        "  - enabled-null:",
        "  - enabled-true: true",
        "  - ./plugins/jira-tool.ts: { baseUrl: https://jira.example.com }",
        "  - ../up/thing.mjs",
        "  - local.js",
        "  - ~/tools/mine.ts",
        "  - /abs/x.ts",
        '  - "@acme/coil-plugin-lint"',
        "  - npm:coil-plugin-foo",
        "  - plan-mode: false",
      ].join("\n"),
    );
    const r = resolve(file);
    const dir = path.dirname(file);
    expect(r.entries.map((e) => [e.ref, e.kind, e.key])).toEqual([
      ["ui-print", "name", "ui-print"],
      ["provider-scripted", "name", "provider-scripted"],
      ["enabled-null", "name", "enabled-null"],
      ["enabled-true", "name", "enabled-true"],
      ["./plugins/jira-tool.ts", "path", path.join(dir, "plugins/jira-tool.ts")],
      ["../up/thing.mjs", "path", path.join(tmp, "up/thing.mjs")],
      ["local.js", "path", path.join(dir, "local.js")],
      ["~/tools/mine.ts", "path", path.join(os.homedir(), "tools/mine.ts")],
      ["/abs/x.ts", "path", "/abs/x.ts"],
      ["@acme/coil-plugin-lint", "npm", "@acme/coil-plugin-lint"],
      ["npm:coil-plugin-foo", "npm", "coil-plugin-foo"],
    ]);
    expect(entry(r, "provider-scripted").options).toEqual({ chunkSize: 8 });
    expect(entry(r, "ui-print").options).toEqual({});
    expect(entry(r, "enabled-null").options).toEqual({});
    expect(entry(r, path.join(dir, "plugins/jira-tool.ts")).options).toEqual({ baseUrl: "https://jira.example.com" });
    expect(entry(r, "ui-print").baseDir).toBe(dir);
  });

  it("accepts top-level settings and an empty file", () => {
    const file = write(
      "s.yaml",
      "provider: scripted\nmodel: scripted/default\nthinking: high\ntoolExecution: sequential\nreserveTokens: 16384\n",
    );
    expect(resolve(file).settings).toEqual({
      provider: "scripted",
      model: "scripted/default",
      thinking: "high",
      toolExecution: "sequential",
      reserveTokens: 16384,
    });
    const blank = write("blank.yaml", "# nothing here\n");
    expect(resolve(blank).entries).toEqual([]);
  });

  it.each([
    ["two keys", "plugins:\n  - a: {}\n    b: {}\n", 2, 5, /exactly one key/],
    ["a number", "plugins:\n  - a\n  - 42\n", 3, 5, /non-empty string/],
    ["options a string", "plugins:\n  - a: fast\n", 2, 8, /options of "a" must be a mapping/],
    ["options a list", "plugins:\n  - a: [1, 2]\n", 2, 8, /must be a mapping/],
    ["a nested list", "plugins:\n  - [a, b]\n", 2, 5, /non-empty string/],
    ["plugins not a list", "plugins: ui-print\n", 1, 10, /plugins must be a list/],
  ])("rejects a bad entry shape: %s", (_name, text, line, column, message) => {
    const file = write("bad.yaml", text);
    const error = thrown(() => resolve(file));
    expect(error.code).toBe("PRESET_INVALID");
    expect(error.message).toMatch(message);
    expect([error.file, error.line, error.column]).toEqual([file, line, column]);
  });

  it("rejects an unknown top-level key with file:line:col and the known keys", () => {
    const file = write("bad.yaml", "provider: scripted\nmodle: x\n");
    const error = thrown(() => resolve(file));
    expect(error.code).toBe("PRESET_INVALID");
    expect([error.file, error.line, error.column]).toEqual([file, 2, 1]);
    expect(error.message).toContain('unknown key "modle"');
    expect(error.message).toContain(
      "known keys: description, extends, plugins, provider, model, thinking, toolExecution, reserveTokens",
    );
    expect(error.message).toContain(`${file}:2:1`);
    expect(error.hint).toBe('did you mean "model"?');
  });

  it.each([
    ["thinking: huge\n", /thinking must be one of off, minimal, low, medium, high, xhigh/, 1, 11],
    ["toolExecution: maybe\n", /toolExecution must be one of parallel, sequential/, 1, 16],
    ["reserveTokens: -5\n", /reserveTokens must be a positive integer/, 1, 16],
    ["reserveTokens: 1.5\n", /reserveTokens must be a positive integer/, 1, 16],
    ["model: [a]\n", /model must be a non-empty string/, 1, 8],
    ["description: 3\n", /description must be a non-empty string/, 1, 14],
    ["extends: 3\n", /extends must be a preset name/, 1, 10],
    ["model:\n", /model must be a non-empty string, got null/, 1, 7],
    ["provider: ''\n", /provider must be a non-empty string/, 1, 11],
    ["- a\n- b\n", /must be a YAML mapping/, 1, 1],
  ])("validates value types: %j", (text, message, line, column) => {
    const file = write("bad.yaml", text);
    const error = thrown(() => resolve(file));
    expect(error.code).toBe("PRESET_INVALID");
    expect(error.message).toMatch(message);
    expect([error.file, error.line, error.column]).toEqual([file, line, column]);
  });

  it("reports malformed YAML with file, line and column", () => {
    const file = write("broken.yaml", "provider: scripted\nplugins:\n  - a: { x: 1\n  - b\n");
    const error = thrown(() => resolve(file));
    expect(error.code).toBe("PRESET_INVALID");
    expect(error.file).toBe(file);
    expect(error.line).toBeGreaterThanOrEqual(3);
    expect(error.column).toBeGreaterThanOrEqual(1);
    expect(error.message).toMatch(/malformed YAML/);
    expect(error.message).toContain(`${file}:${error.line}:${error.column}`);

    const dup = write("dup.yaml", "model: a\nmodel: b\n");
    const e2 = thrown(() => resolve(dup));
    expect([e2.file, e2.line, e2.column]).toEqual([dup, 2, 1]);
    expect(e2.message).toMatch(/unique/);
  });
});

describe("merging", () => {
  it("deep-merges options, replaces arrays and scalars, keeps parent order, appends new ids", () => {
    write(
      "parent.yaml",
      [
        "model: a/one",
        "plugins:",
        "  - first",
        "  - gate:",
        "      mode: default",
        "      deny: [x, y]",
        "      nested: { a: 1, b: { c: 2 } }",
        "  - last",
      ].join("\n"),
    );
    const child = write(
      "child.yaml",
      [
        "extends: ./parent.yaml",
        "model: b/two",
        "plugins:",
        "  - newcomer",
        "  - gate:",
        "      deny: [z]",
        "      nested: { b: { d: 3 } }",
        "      extra: true",
      ].join("\n"),
    );
    const r = resolve(child);
    expect(keys(r)).toEqual(["first", "gate", "last", "newcomer"]);
    expect(entry(r, "gate").options).toEqual({
      mode: "default",
      deny: ["z"],
      nested: { a: 1, b: { c: 2, d: 3 } },
      extra: true,
    });
    expect(r.settings.model).toBe("b/two");
  });

  it("removes with false, keeps parent options for `true`, and appends a re-added plugin at the end", () => {
    write("parent.yaml", "plugins:\n  - a: { x: 1 }\n  - b\n  - c: { y: 2 }\n");
    write("middle.yaml", "extends: ./parent.yaml\nplugins:\n  - a: false\n  - c: true\n");
    const child = write("child.yaml", "extends: ./middle.yaml\nplugins:\n  - a: { z: 3 }\n");
    expect(keys(resolve(path.join(tmp, "middle.yaml")))).toEqual(["b", "c"]);
    expect(entry(resolve(path.join(tmp, "middle.yaml")), "c").options).toEqual({ y: 2 });
    const r = resolve(child);
    expect(keys(r)).toEqual(["b", "c", "a"]);
    expect(entry(r, "a").options).toEqual({ z: 3 }); // the removed options do not come back
  });

  it("removing something nobody added is harmless", () => {
    const file = write("x.yaml", "plugins:\n  - ghost: false\n  - a\n");
    expect(keys(resolve(file))).toEqual(["a"]);
  });

  it("a removal in a higher layer removes an entry from a lower layer", () => {
    const base = write("base.yaml", "plugins:\n  - a\n  - b: { k: 1 }\n");
    write("home/preset.yaml", "plugins:\n  - b: false\n");
    expect(keys(resolve(base))).toEqual(["a"]);
  });

  it("within one file, `x: false` then `x` replaces x fresh at the end, also across layers", () => {
    const base = write("base.yaml", "plugins:\n  - a: { old: 1 }\n  - b\n");
    write("home/preset.yaml", "plugins:\n  - a: false\n  - a: { new: 2 }\n");
    const r = resolve(base);
    expect(keys(r)).toEqual(["b", "a"]);
    expect(entry(r, "a").options).toEqual({ new: 2 });
  });

  it("merges a path entry with the same file written differently", () => {
    write("lib/parent.yaml", "plugins:\n  - ../tools/t.ts: { a: 1 }\n");
    const child = write("child.yaml", "extends: lib/parent.yaml\nplugins:\n  - ./tools/t.ts: { b: 2 }\n");
    const r = resolve(child);
    expect(r.entries).toHaveLength(1);
    expect(r.entries[0]!.key).toBe(path.join(tmp, "tools/t.ts"));
    expect(r.entries[0]!.ref).toBe("../tools/t.ts");
    expect(r.entries[0]!.options).toEqual({ a: 1, b: 2 });
    expect(r.entries[0]!.baseDir).toBe(tmp); // the child set options last
  });
});

describe("extends", () => {
  it("extends a built-in preset by name", () => {
    const file = write("x.yaml", "extends: default\nplugins:\n  - extra\n");
    expect(keys(resolve(file))).toEqual([...DEFAULT(), "extra"]);
  });

  it("resolves a list depth-first in order, then this file", () => {
    write("a.yaml", "model: from/a\nprovider: a\nplugins:\n  - one: { v: a }\n  - two\n");
    write("sub/b.yaml", "extends: ../c.yaml\nmodel: from/b\nplugins:\n  - one: { v: b }\n  - three\n");
    write("c.yaml", "thinking: low\nprovider: c\nplugins:\n  - zero\n");
    const file = write("top.yaml", "extends: [./a.yaml, ./sub/b.yaml]\nthinking: high\nplugins:\n  - four\n");
    const r = resolve(file);
    expect(keys(r)).toEqual(["one", "two", "zero", "three", "four"]);
    expect(entry(r, "one").options).toEqual({ v: "b" });
    expect(r.settings).toEqual({ model: "from/b", provider: "c", thinking: "high" });
    expect(r.settingSources).toEqual({
      model: path.join(tmp, "sub/b.yaml"),
      provider: path.join(tmp, "c.yaml"),
      thinking: file,
    });
  });

  it("detects cycles and names the chain", () => {
    write("a.yaml", "extends: ./b.yaml\n");
    write("b.yaml", "plugins: []\nextends: ./c.yaml\n");
    write("c.yaml", "extends: [default, ./a.yaml]\n");
    const error = thrown(() => resolve(path.join(tmp, "a.yaml")));
    expect(error.code).toBe("PRESET_INVALID");
    expect(error.message).toContain(`extends cycle: ${tmp}/a.yaml → ${tmp}/b.yaml → ${tmp}/c.yaml → ${tmp}/a.yaml`);
    expect([error.file, error.line, error.column]).toEqual([path.join(tmp, "c.yaml"), 1, 20]);
  });

  it("self-extension is a cycle", () => {
    const file = write("self.yaml", "extends: self.yaml\n");
    expect(thrown(() => resolve(file)).message).toMatch(/extends cycle/);
  });

  it("a diamond is not a cycle", () => {
    write("l.yaml", "extends: default\nplugins:\n  - l\n");
    write("r.yaml", "extends: default\nplugins:\n  - r\n");
    const file = write("d.yaml", "extends: [./l.yaml, ./r.yaml]\n");
    expect(keys(resolve(file))).toEqual([...DEFAULT(), "l", "r"]);
  });

  it("names the nearest built-in preset for an unknown name, and lists them", () => {
    const file = write("x.yaml", "description: typo\nextends: defualt\n");
    const error = thrown(() => resolve(file));
    expect(error.code).toBe("PRESET_NOT_FOUND");
    expect(error.message).toContain('unknown preset "defualt" (did you mean "default"?)');
    expect(error.message).toContain(`built-in presets: ${builtinPresetNames().join(", ")}`);
    expect([error.file, error.line, error.column]).toEqual([file, 2, 10]);

    const base = thrown(() => resolve("readonyl"));
    expect(base.code).toBe("PRESET_NOT_FOUND");
    expect(base.message).toContain('did you mean "readonly"?');
    expect(thrown(() => resolve("zzzzzzzzzz")).message).not.toContain("did you mean");
  });

  it("reports a missing extends path at its position", () => {
    const file = write("x.yaml", "extends:\n  - default\n  - ./nope.yaml\n");
    const error = thrown(() => resolve(file));
    expect(error.code).toBe("PRESET_NOT_FOUND");
    expect([error.file, error.line, error.column]).toEqual([file, 3, 5]);
  });

  it("extends an npm package preset (package root, coil.preset, subpath)", () => {
    write(
      "node_modules/@acme/coil-preset/package.json",
      JSON.stringify({ name: "@acme/coil-preset", coil: { preset: "presets/team.yaml" } }),
    );
    write("node_modules/@acme/coil-preset/presets/team.yaml", "model: acme/model\nplugins:\n  - acme-tool\n");
    write("node_modules/plain-preset/package.json", JSON.stringify({ name: "plain-preset" }));
    write("node_modules/plain-preset/preset.yaml", "plugins:\n  - plain\n");
    write("node_modules/plain-preset/other.yaml", "plugins:\n  - other\n");
    const file = write(
      "deep/dir/x.yaml",
      'extends: ["@acme/coil-preset", npm:plain-preset, npm:plain-preset/other.yaml]\n',
    );
    const r = resolve(file);
    expect(keys(r)).toEqual(["acme-tool", "plain", "other"]);
    expect(r.settingSources.model).toBe(path.join(tmp, "node_modules/@acme/coil-preset/presets/team.yaml"));
    const missing = write("m.yaml", "extends: npm:not-installed\n");
    const error = thrown(() => resolve(missing));
    expect(error.code).toBe("PRESET_NOT_FOUND");
    expect(error.message).toContain('npm package "not-installed"');
  });
});

describe("layers", () => {
  it("applies base → user → project (trusted) → cli, in that order", () => {
    write(
      "home/preset.yaml",
      "model: user/model\nprovider: user\nplugins:\n  - user-plugin: { who: user }\n  - shared: { from: user, keep: 1 }\n",
    );
    write(
      "project/.coil/preset.yaml",
      "model: project/model\nplugins:\n  - shared: { from: project }\n  - ui-print: false\n",
    );
    const r = resolve("default", {
      trust: true,
      cli: { plugins: ["cli-plugin", "shared"], settings: { model: "cli/model", provider: undefined } },
    });
    expect(r.layers).toEqual([
      { name: "base", file: path.join(packageRoot(), "presets/default.yaml") },
      { name: "user", file: path.join(home, "preset.yaml") },
      { name: "project", file: path.join(cwd, ".coil/preset.yaml") },
      { name: "cli" },
    ]);
    expect(keys(r)).toEqual([...DEFAULT().filter((k) => k !== "ui-print"), "user-plugin", "shared", "cli-plugin"]);
    expect(entry(r, "shared").options).toEqual({ from: "project", keep: 1 });
    expect(entry(r, "shared").optionSources).toEqual({
      from: path.join(cwd, ".coil/preset.yaml"),
      keep: path.join(home, "preset.yaml"),
    });
    expect(entry(r, "shared").baseDir).toBe(path.join(cwd, ".coil"));
    expect(r.settings.model).toBe("cli/model");
    expect(r.settings.provider).toBe("user");
    expect(r.settingSources).toMatchObject({ model: "cli", provider: path.join(home, "preset.yaml") });
  });

  it("skips an untrusted project layer and says why", () => {
    write("project/.coil/preset.yaml", "model: project/model\n");
    const r = resolve("default");
    expect(r.settings.model).toBeUndefined();
    expect(r.layers).toEqual([
      { name: "base", file: path.join(packageRoot(), "presets/default.yaml") },
      {
        name: "project",
        file: path.join(cwd, ".coil/preset.yaml"),
        skipped: "untrusted project: pass --trust to load it",
      },
    ]);
    expect(formatPreset(r, "yaml")).toContain("skipped: untrusted project: pass --trust to load it");
  });

  it("a layer file with extends is merged as a whole", () => {
    write("home/team.yaml", "plugins:\n  - team-a\n  - ui-print: { color: false }\n");
    write("home/preset.yaml", "extends: ./team.yaml\nplugins:\n  - mine\n");
    const r = resolve("default");
    expect(keys(r)).toEqual([...DEFAULT(), "team-a", "mine"]);
    expect(entry(r, "ui-print").options).toEqual({ color: false });
    expect(entry(r, "ui-print").optionSources).toEqual({ color: path.join(home, "team.yaml") });
  });

  it("resolves --plugin paths against cwd and keeps existing options", () => {
    const base = write("base.yaml", "plugins:\n  - ./project/tool.ts: { a: 1 }\n");
    const r = resolve(base, { cli: { plugins: ["./tool.ts", "../other.mjs", "npm:@x/y", "ui-print"] } });
    expect(r.entries.map((e) => [e.key, e.kind])).toEqual([
      [path.join(cwd, "tool.ts"), "path"],
      [path.join(tmp, "other.mjs"), "path"],
      ["@x/y", "npm"],
      ["ui-print", "name"],
    ]);
    expect(r.entries[0]!.options).toEqual({ a: 1 });
    expect(r.entries[0]!.source).toEqual({ file: base, line: 2, column: 5 });
    expect(r.entries[1]!.source).toEqual({ file: "cli" });
    expect(r.entries[1]!.baseDir).toBe(cwd);
  });

  it("takes a base preset path relative to cwd", () => {
    write("project/team/p.yaml", "plugins:\n  - only\n");
    expect(keys(resolve("team/p.yaml"))).toEqual(["only"]);
    expect(thrown(() => resolve("./missing.yaml")).code).toBe("PRESET_NOT_FOUND");
  });

  it("validates CLI settings", () => {
    const error = thrown(() => resolve("default", { cli: { settings: { thinking: "loud" } } }));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toMatch(/thinking must be one of/);
    expect(thrown(() => resolve("default", { cli: { settings: { bogus: 1 } as never } })).code).toBe("CONFIG_INVALID");
  });
});

describe("provenance", () => {
  it("records entry source lines, option leaf sources and setting sources", () => {
    const parent = write(
      "parent.yaml",
      "description: parent\nplugins:\n  - a:\n      x: { y: 1, z: [1, 2] }\n      w: 1\n  - b\n",
    );
    const child = write(
      "child.yaml",
      "extends: ./parent.yaml\nprovider: scripted\nplugins:\n  - c\n  - a: { x: { y: 2 }, v: {} }\n",
    );
    const r = resolve(child);
    expect(entry(r, "a").source).toEqual({ file: parent, line: 3, column: 5 });
    expect(entry(r, "b").source).toEqual({ file: parent, line: 6, column: 5 });
    expect(entry(r, "c").source).toEqual({ file: child, line: 4, column: 5 });
    expect(entry(r, "a").optionSources).toEqual({ "x.y": child, "x.z": parent, w: parent, v: child });
    expect(r.settingSources).toEqual({ description: parent, provider: child });
  });

  it("drops stale leaf sources when a child replaces an object with a scalar", () => {
    write("parent.yaml", "plugins:\n  - a: { x: { y: 1 } }\n");
    const child = write("child.yaml", "extends: ./parent.yaml\nplugins:\n  - a: { x: 5 }\n");
    expect(entry(resolve(child), "a").optionSources).toEqual({ x: child });
  });
});

describe("formatPreset", () => {
  it("prints YAML with a layer header and a file comment on every entry, option and setting", () => {
    write(
      "home/preset.yaml",
      "model: user/model\nplugins:\n  - gate: { mode: ask, deny: [a, b], nested: { deep: 1 } }\n",
    );
    const r = resolve("default", { cli: { settings: { provider: "scripted" } } });
    const text = formatPreset(r, "yaml");
    const user = path.join(home, "preset.yaml");
    expect(text).toContain("#   base    builtin:default");
    expect(text).toContain(`#   user    ${user}`);
    expect(text).toContain("#   cli     command-line flags");
    expect(text).toContain("description: The default coil setup");
    expect(text).toMatch(/description: .* # builtin:default/);
    expect(text).toContain(`model: user/model # ${user}`);
    expect(text).toContain("provider: scripted # cli");
    expect(text).toContain("- provider-scripted # builtin:default:");
    expect(text).toContain(`- gate: # ${user}:3`);
    expect(text).toContain(`mode: ask # ${user}`);
    expect(text).toContain(`deny: [ a, b ] # ${user}`);
    expect(text).toContain(`deep: 1 # ${user}`);
    // the printed preset is itself a valid preset with the same entries
    const copy = write("copy.yaml", text);
    const again = resolve(copy);
    expect(again.entries.map((e) => [e.key, e.options])).toEqual(r.entries.map((e) => [e.key, e.options]));
    expect(again.settings).toEqual(r.settings);
    expect(parse(text).plugins).toHaveLength(DEFAULT().length + 1);
  });

  it("prints JSON that parses", () => {
    const r = resolve("default", { cli: { plugins: ["./x.ts"] } });
    const json = JSON.parse(formatPreset(r, "json"));
    expect(Object.keys(json)).toEqual(["layers", "settings", "settingSources", "plugins"]);
    expect(json.plugins.map((p: { key: string }) => p.key)).toEqual([...DEFAULT(), path.join(cwd, "x.ts")]);
    expect(json.plugins.at(-1)).toEqual({
      ref: "./x.ts",
      key: path.join(cwd, "x.ts"),
      kind: "path",
      options: {},
      source: { file: "cli" },
      optionSources: {},
    });
    expect(formatPreset(r, "json")).toMatch(/^\{\n {2}"layers"/);
  });
});

describe("built-in presets", () => {
  it("lists default, print and readonly", () => {
    expect(builtinPresetNames()).toEqual(expect.arrayContaining(["default", "print", "readonly"]));
  });

  it.each(builtinPresetNames())("%s resolves and names only existing built-in plugins", (name) => {
    const r = resolve(name);
    expect(r.entries.length).toBeGreaterThan(0);
    expect(r.settings.description).toBeTruthy();
    for (const e of r.entries) {
      expect(e.kind).toBe("name");
      expect(fs.existsSync(path.join(packageRoot(), "plugins", e.key))).toBe(true);
    }
  });

  it("readonly keeps only read-only tools", () => {
    const r = resolve("readonly");
    expect(entry(r, "tools-coding").options).toEqual({ tools: ["read"] });
    expect(keys(r)).toContain("tools-search");
  });
});

describe("nearest", () => {
  it("finds close names and ignores far ones", () => {
    expect(nearest("defualt", ["default", "print", "readonly"])).toBe("default");
    expect(nearest("prnt", ["default", "print", "readonly"])).toBe("print");
    expect(nearest("Print", ["default", "print"])).toBe("print");
    expect(nearest("provider-scriptd", ["provider-scripted", "ui-print"])).toBe("provider-scripted");
    expect(nearest("xyz", ["default", "print"])).toBeUndefined();
    expect(nearest("anything", [])).toBeUndefined();
  });
});
