import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  readFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { Type } from "typebox";
import { Value } from "typebox/value";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { loadPlugin, optionsTarget, type PluginRef } from "../../boot/load.js";
import { builtinPluginIds, packageRoot } from "../../boot/paths.js";
import { CoilError } from "../../kernel/errors.js";
import { testHost } from "../support/host.js";

const temps: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "coil-load-"));
  temps.push(dir);
  return dir;
}
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function write(file: string, text: string): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

const home = tempDir();
const source = { file: "/proj/.coil/preset.yaml", line: 7, column: 3 };
const pathRef = (file: string): PluginRef => ({
  ref: `./${file.split("/").pop()}`,
  kind: "path",
  key: file,
  source,
  baseDir: dirname(file),
});

async function failure(promise: Promise<unknown>): Promise<CoilError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CoilError);
  return error as CoilError;
}

/** Load a reference that names exactly one plugin. */
async function loadOne(ref: PluginRef, options: { home: string }) {
  const plugins = await loadPlugin(ref, options);
  expect(plugins).toHaveLength(1);
  return plugins[0]!;
}

const jsPlugin = (id: string) => `export default { id: ${JSON.stringify(id)}, setup() {} };\n`;

describe("loadPlugin: paths", () => {
  it("loads a TypeScript plugin outside the repo that imports coil and typebox, sharing the host's modules", async () => {
    const dir = tempDir();
    expect(relative(packageRoot(), dir).startsWith("..")).toBe(true);
    const file = write(
      join(dir, "greeter.ts"),
      `import { definePlugin, Type, CoilError } from "coil";
import { Type as T2 } from "typebox";
import { Value } from "typebox/value";

interface Greeting { text: string; loud?: boolean }
const options = T2.Object({ greeting: T2.String({ default: "hello" }) });
const greet = (text: string, name: string): Greeting => ({ text: text + ", " + name });

const plugin = definePlugin({
  id: "ts-greeter",
  options,
  setup(ctx) {
    const greeting: string = ctx.options.greeting;
    ctx.tools.register({
      name: "greet",
      description: "Greets someone",
      parameters: Type.Object({ name: Type.String() }),
      async execute(args: { name: string }) {
        return { content: [{ type: "text", text: greet(greeting, args.name).text }] } as any;
      },
    });
  },
});
(plugin as any).probe = { Type, T2, Value, CoilError, checked: Value.Check(options, { greeting: "x" }) };
export default plugin;
`,
    );
    const plugin = await loadOne(pathRef(file), { home });
    expect(plugin.id).toBe("ts-greeter");
    const probe = (plugin as unknown as { probe: Record<string, unknown> }).probe;
    expect(probe.checked).toBe(true);
    expect(probe.Type).toBe(Type);
    expect(probe.T2).toBe(Type);
    expect(probe.Value).toBe(Value);
    expect(probe.CoilError).toBe(CoilError);

    const host = testHost({ cwd: dir });
    host.install(plugin, { greeting: "x" });
    const tool = host.tools.get("greet")!;
    expect(Value.Check(tool.parameters, { name: "Ada" })).toBe(true);
    expect(Value.Check(tool.parameters, { name: 1 })).toBe(false);
    const out = await tool.execute({ name: "Ada" } as never, {} as never);
    expect(JSON.stringify(out)).toContain("x, Ada");
    expect(() => testHost().install(plugin, { greeting: 1 })).toThrow(/greeting/);
    expect(() => testHost().install(plugin, { bogus: 1 })).toThrow(/unknown option 'bogus'/);
  });

  it("loads an ESM .js plugin natively, and an .mjs one", async () => {
    const dir = tempDir();
    const js = write(join(dir, "p.js"), jsPlugin("js-plugin"));
    write(join(dir, "package.json"), `{ "type": "module" }`);
    const mjs = write(join(dir, "q.mjs"), jsPlugin("mjs-plugin"));
    expect((await loadOne(pathRef(js), { home })).id).toBe("js-plugin");
    expect((await loadOne(pathRef(mjs), { home })).id).toBe("mjs-plugin");
  });

  it("accepts a module that is itself a plugin (named id and setup), and a CJS module.exports", async () => {
    const dir = tempDir();
    const named = write(join(dir, "named.mjs"), `export const id = "named"; export function setup() {}\n`);
    const cjs = write(join(dir, "c.cjs"), `module.exports = { id: "cjs-plugin", setup() {} };\n`);
    expect((await loadOne(pathRef(named), { home })).id).toBe("named");
    expect((await loadOne(pathRef(cjs), { home })).id).toBe("cjs-plugin");
  });
});

describe("loadPlugin: npm packages", () => {
  it("resolves an ESM package with an import-only exports map from baseDir (walking up)", async () => {
    const project = tempDir();
    const pkg = join(project, "node_modules", "coil-plugin-esm");
    write(
      join(pkg, "package.json"),
      JSON.stringify({ name: "coil-plugin-esm", type: "module", exports: { ".": { import: "./lib/main.js" } } }),
    );
    write(join(pkg, "lib", "main.js"), jsPlugin("esm-pkg"));
    const baseDir = join(project, ".coil", "presets");
    mkdirSync(baseDir, { recursive: true });
    const plugin = await loadOne({ ref: "coil-plugin-esm", kind: "npm", key: "coil-plugin-esm", baseDir }, { home });
    expect(plugin.id).toBe("esm-pkg");
    // an unscoped name that is not a built-in falls back to npm
    expect(
      (await loadOne({ ref: "coil-plugin-esm", kind: "name", key: "coil-plugin-esm", baseDir }, { home })).id,
    ).toBe("esm-pkg");
  });

  it("loads every file listed under coil.plugins, in order, from scoped packages", async () => {
    const project = tempDir();
    const pkg = join(project, "node_modules", "@acme", "coil-tools");
    write(
      join(pkg, "package.json"),
      JSON.stringify({
        name: "@acme/coil-tools",
        type: "module",
        main: "./index.js",
        coil: { plugins: ["./dist/plugin.js", "./dist/other"] },
      }),
    );
    write(join(pkg, "index.js"), `export const notAPlugin = true;\n`);
    write(join(pkg, "dist", "plugin.js"), jsPlugin("acme-tools"));
    write(join(pkg, "dist", "other.js"), jsPlugin("acme-other"));
    const plugins = await loadPlugin(
      { ref: "@acme/coil-tools", kind: "npm", key: "@acme/coil-tools", baseDir: project },
      { home },
    );
    expect(plugins.map((p) => p.id)).toEqual(["acme-tools", "acme-other"]);
    // options of the entry go to the plugin named like the package, else to the first
    expect(optionsTarget(plugins, "@acme/coil-tools")).toBe(0);
    expect(optionsTarget(plugins, "acme-other")).toBe(1);
  });

  it("a package listing two plugins sets both up; the entry's options reach only the one named like the package", async () => {
    const project = tempDir();
    const pkg = join(project, "node_modules", "coil-pair");
    write(
      join(pkg, "package.json"),
      JSON.stringify({ name: "coil-pair", type: "module", coil: { plugins: ["./a.js", "./b.js"] } }),
    );
    // the helper takes no options (options given to it would fail the install); the main plugin records its own
    write(
      join(pkg, "a.js"),
      `export default { id: "pair-helper", setup(ctx) { (globalThis.__pair ??= []).push(["pair-helper", ctx.options]); } };\n`,
    );
    write(
      join(pkg, "b.js"),
      `export default { id: "coil-pair", options: { type: "object", properties: { greeting: { type: "string" } } }, setup(ctx) { (globalThis.__pair ??= []).push(["coil-pair", ctx.options]); } };\n`,
    );
    write(join(project, "team.yaml"), "plugins:\n  - provider-scripted\n  - coil-pair: { greeting: hi }\n");
    write(join(project, "replies.yaml"), "- text: ok\n");
    const g = globalThis as { __pair?: unknown[] };
    delete g.__pair;
    const { createAgent } = await import("../../sdk/index.js");
    const coil = await createAgent({
      cwd: project,
      home,
      trust: true,
      preset: "team.yaml",
      provider: "scripted",
      flags: { script: "replies.yaml" },
    });
    await coil.close();
    expect(g.__pair).toEqual([
      ["pair-helper", {}],
      ["coil-pair", { greeting: "hi" }],
    ]);
  });

  it("finds a package only installed in $COIL_HOME/packages/node_modules", async () => {
    const coilHome = tempDir();
    const pkg = join(coilHome, "packages", "node_modules", "coil-home-only");
    write(join(pkg, "package.json"), JSON.stringify({ name: "coil-home-only", main: "main.mjs" }));
    write(join(pkg, "main.mjs"), jsPlugin("home-only"));
    const plugin = await loadOne(
      { ref: "coil-home-only", kind: "npm", key: "coil-home-only", baseDir: tempDir() },
      { home: coilHome },
    );
    expect(plugin.id).toBe("home-only");
  });

  it("a missing package is PLUGIN_NOT_FOUND with an install hint", async () => {
    const error = await failure(
      loadPlugin({ ref: "coil-nope", kind: "npm", key: "coil-nope", baseDir: tempDir(), source }, { home }),
    );
    expect(error.code).toBe("PLUGIN_NOT_FOUND");
    expect(error.phase).toBe("resolve");
    expect(error.message).toContain("coil-nope");
    expect(error.message).toContain("preset.yaml:7");
    expect(error.hint).toContain("npm install coil-nope");
  });
});

describe("loadPlugin: built-ins", () => {
  it("an unknown name is PLUGIN_NOT_FOUND suggesting the nearest built-in id", async () => {
    const ids = builtinPluginIds();
    const target = ids.includes("ui-print") ? "ui-print" : ids[0];
    const typo = target ? `${target}t` : "ui-printt";
    const error = await failure(
      loadPlugin({ ref: typo, kind: "name", key: typo, baseDir: tempDir(), source }, { home }),
    );
    expect(error.code).toBe("PLUGIN_NOT_FOUND");
    expect(error.message).toContain(`'${typo}'`);
    expect(error.message).toContain("preset.yaml:7");
    if (target) {
      expect(error.message).toContain(`did you mean '${target}'?`);
      expect(error.hint).toContain(target);
    }
  });

  it.runIf(existsSync(join(packageRoot(), "plugins", "provider-scripted", "index.ts")))(
    "loads provider-scripted by id",
    async () => {
      const plugin = await loadOne(
        { ref: "provider-scripted", kind: "name", key: "provider-scripted", baseDir: tempDir() },
        { home },
      );
      expect(plugin.id).toBe("provider-scripted");
    },
  );
});

describe("loadPlugin: errors", () => {
  it("a missing path names the file and the preset line", async () => {
    const file = join(tempDir(), "missing.ts");
    const error = await failure(loadPlugin(pathRef(file), { home }));
    expect(error.code).toBe("PLUGIN_NOT_FOUND");
    expect(error.message).toContain(file);
    expect(error.message).toContain("/proj/.coil/preset.yaml:7:3");
    expect(error.file).toBe(source.file);
    expect(error.line).toBe(7);
  });

  it("a TypeScript syntax error is PLUGIN_LOAD_FAILED naming the file and position, keeping the cause", async () => {
    const file = write(
      join(tempDir(), "broken.ts"),
      `import { definePlugin } from "coil";\nconst x: number = ;\nexport default definePlugin({ id: "b", setup() {} });\n`,
    );
    const error = await failure(loadPlugin(pathRef(file), { home }));
    expect(error.code).toBe("PLUGIN_LOAD_FAILED");
    expect(error.phase).toBe("import");
    expect(error.file).toBe(file);
    expect(error.line).toBe(2);
    expect(error.message).toContain(file);
    expect(error.message).toContain("preset.yaml:7");
    expect(error.cause).toBeInstanceOf(Error);
  });

  it("a JavaScript syntax error is PLUGIN_LOAD_FAILED", async () => {
    const file = write(join(tempDir(), "broken.mjs"), `export default {\n  id: "b",,\n};\n`);
    const error = await failure(loadPlugin(pathRef(file), { home }));
    expect(error.code).toBe("PLUGIN_LOAD_FAILED");
    expect(error.message).toContain(file);
    expect(error.cause).toBeInstanceOf(Error); // a SyntaxError under plain node; vitest parses imports itself
  });

  it("a module that throws at import is PLUGIN_LOAD_FAILED with the original message", async () => {
    const dir = tempDir();
    for (const name of ["throws.ts", "throws.mjs"]) {
      const file = write(
        join(dir, name),
        `const n: number = 1;\nif (n) throw new Error("kaboom at import");\nexport default {};\n`.replace(
          ": number",
          name.endsWith(".ts") ? ": number" : "",
        ),
      );
      const error = await failure(loadPlugin(pathRef(file), { home }));
      expect(error.code).toBe("PLUGIN_LOAD_FAILED");
      expect(error.message).toContain("kaboom at import");
      expect(error.file).toBe(file);
      expect((error.cause as Error).message).toBe("kaboom at import");
    }
  });

  it("a module without a plugin default export is PLUGIN_INVALID; a factory function is refused", async () => {
    const dir = tempDir();
    const none = write(join(dir, "none.mjs"), `export const helper = 1;\n`);
    const factory = write(join(dir, "factory.ts"), `export default () => ({ id: "f", setup() {} });\n`);
    const e1 = await failure(loadPlugin(pathRef(none), { home }));
    expect(e1.code).toBe("PLUGIN_INVALID");
    expect(e1.message).toContain("does not default-export definePlugin({ id, setup })");
    expect(e1.file).toBe(none);
    const e2 = await failure(loadPlugin(pathRef(factory), { home }));
    expect(e2.code).toBe("PLUGIN_INVALID");
    expect(e2.message).toContain("function returning a plugin is not accepted");
  });
});

describe("loadPlugin: start-up laziness", () => {
  it("does not load jiti until a TypeScript plugin is loaded", () => {
    // Transpile the kernel into a temp "dist" (as the shipped CLI runs) and run it in a fresh node process.
    const root = tempDir();
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
        d.isDirectory() ? walk(join(dir, d.name)) : d.name.endsWith(".ts") ? [join(dir, d.name)] : [],
      );
    const sources = [
      // api/ is what the loader serves as "coil"; boot/ imports what a plugin is from it
      ...walk(join(packageRoot(), "api")),
      ...walk(join(packageRoot(), "kernel")),
      ...walk(join(packageRoot(), "boot")),
      // all of lib/: boot imports more of it as it grows (a hand-kept list missed lib/claude-settings.ts)
      ...walk(join(packageRoot(), "lib")),
    ];
    for (const file of sources) {
      const { outputText } = ts.transpileModule(readFileSync(file, "utf8"), {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
        fileName: file,
      });
      write(join(root, "dist", relative(packageRoot(), file).replace(/\.ts$/, ".js")), outputText);
    }
    write(join(root, "package.json"), JSON.stringify({ name: "coil-agent", type: "module" }));
    symlinkSync(join(packageRoot(), "node_modules"), join(root, "node_modules"));
    const plugins = tempDir();
    const js = write(join(plugins, "p.mjs"), jsPlugin("lazy-js"));
    const tsFile = write(
      join(plugins, "p.ts"),
      `import { definePlugin } from "coil";\nexport default definePlugin({ id: "lazy-ts", setup(): void {} });\n`,
    );
    const script = write(
      join(root, "probe.mjs"),
      `import { createRequire } from "node:module";
const { loadPlugin } = await import("./dist/boot/load.js");
const cache = createRequire(import.meta.url).cache;
const jitiLoaded = () => Object.keys(cache).some((k) => k.includes("/node_modules/jiti/"));
const ref = (key) => ({ ref: key, kind: "path", key, baseDir: ${JSON.stringify(plugins)} });
const a = await loadPlugin(ref(${JSON.stringify(js)}), { home: ${JSON.stringify(home)} });
const before = jitiLoaded();
const b = await loadPlugin(ref(${JSON.stringify(tsFile)}), { home: ${JSON.stringify(home)} });
console.log(JSON.stringify({ ids: [a[0].id, b[0].id], before, after: jitiLoaded() }));
`,
    );
    const out = JSON.parse(execFileSync(process.execPath, [script], { encoding: "utf8" }).trim().split("\n").pop()!);
    expect(out).toEqual({ ids: ["lazy-js", "lazy-ts"], before: false, after: true });
  });
});
