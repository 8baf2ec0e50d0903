// Builds dist/: esbuild bundles the CLI, the kernel entry and every built-in plugin with code
// splitting (shared modules such as the kernel and TypeBox live once, in dist/chunks), copies the
// plugins' manifest.json files, then tsc
// writes the .d.ts files plugin authors type against. Start-up loads a few files instead of ~700.
import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { isDeepStrictEqual } from "node:util";

const root = new URL("..", import.meta.url).pathname;
const REQUIRE_BANNER = {
  js: "import { createRequire as __coilRequire } from 'node:module'; const require = __coilRequire(import.meta.url);",
};
/** A throwaway ESM bundle of build-time code from the sources (run once below, then removed). */
const buildScratch = (outfile, contents) =>
  build({
    absWorkingDir: root,
    stdin: { contents, resolveDir: root, loader: "ts" },
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    banner: REQUIRE_BANNER,
    logLevel: "warning",
  });
// The provider SDKs build every request's headers with the global `Headers` and test each body against the
// global `FormData`, which are Node's undici: touching either loads and compiles undici (~100 ms, 12 MB)
// although coil hands them a fetch on node:http. In the bundle, their free `Headers` and `FormData` are
// coil's (lib/provider-kit/http-fetch.ts; docs/decisions.md, issue 37).
const headersModule = join(root, "lib", "provider-kit", "http-fetch.ts");
const sdkHeaders = {
  name: "sdk-headers",
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/](@anthropic-ai[\\/]sdk|openai)[\\/].*\.mjs$/ }, async (args) => {
      const contents = await readFile(args.path, "utf8");
      const code = contents.replace(/\/\/.*|\/\*[\s\S]*?\*\//g, "");
      const names = ["Headers", "FormData"].filter((n) => new RegExp(`(?<![.\\w$])${n}\\b`).test(code));
      if (names.length === 0) return undefined;
      const imports = names.map((n) => `Fetch${n} as ${n}`).join(", ");
      return { contents: `import { ${imports} } from ${JSON.stringify(headersModule)};\n${contents}`, loader: "js" };
    });
  },
};
// `yaml` and `picomatch` are required on first use from files of their own (dist/vendor/<name>.cjs, through
// scripts/<name>-lazy.mjs), not imported by every run.
const LAZY = ["yaml", "picomatch"];
const lazyVendor = {
  name: "lazy-vendor",
  setup(b) {
    b.onResolve({ filter: new RegExp(`^(${LAZY.join("|")})$`) }, (args) =>
      args.importer.endsWith(`${args.path}-lazy.mjs`)
        ? undefined
        : { path: join(root, "scripts", `${args.path}-lazy.mjs`) },
    );
  },
};
// commander requires node:child_process when it loads (for subcommands that are executables, which coil has
// none of); in the bundle it gets lib/child-process.ts, whose `spawn` loads the module on first use.
const lazyChildProcess = {
  name: "lazy-child-process",
  setup(b) {
    b.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      args.importer.includes("/node_modules/commander/") ? { path: join(root, "lib", "child-process.ts") } : undefined,
    );
  },
};
rmSync(join(root, "dist"), { recursive: true, force: true });
const plugins = readdirSync(join(root, "plugins"), { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(root, "plugins", d.name, "index.ts")))
  .map((d) => `plugins/${d.name}/index.ts`);
// The Claude Code plugin installer: the packages plugin imports it on demand, by file, when it is there.
if (existsSync(join(root, "plugins", "packages", "claude", "index.ts")))
  plugins.push("plugins/packages/claude/index.ts");

await build({
  absWorkingDir: root,
  entryPoints: [
    "bin/coil.ts",
    "api/index.ts",
    "cli/main.ts",
    "sdk/index.ts",
    "sdk/testing/index.ts",
    "sdk/rpc-client/index.ts",
    ...plugins,
  ],
  outdir: "dist",
  outbase: ".",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  chunkNames: "chunks/[name]-[hash]",
  // Every runtime dependency is bundled (each into a chunk its plugin imports on first use), so the installed
  // package carries only dist/: resolving and compiling ~320 files of @anthropic-ai/sdk from node_modules
  // cost more than the run itself, and an npm install of them weighed 150 MB (issue 31). Outside stay jiti
  // (loads .ts plugins; a dependency), typescript (a dependency that only `coil plugin check` imports), the
  // optional peers a run installs only when it needs them (the Bedrock and Vertex SDKs with Google's auth
  // library, BullMQ and ioredis for the fleet: package.json's peerDependencies, loaded through
  // lib/optional-dependency.ts), and koffi, which pi-tui loads only on Windows (its absence is handled there).
  external: [
    "jiti",
    "typescript",
    "@anthropic-ai/bedrock-sdk",
    "@anthropic-ai/vertex-sdk",
    "google-auth-library",
    "bullmq",
    "ioredis",
    "koffi",
  ],
  // CommonJS dependencies (yaml) call require(); give the ESM bundle one.
  banner: REQUIRE_BANNER,
  plugins: [sdkHeaders, lazyVendor, lazyChildProcess],
  logLevel: "warning",
});
for (const name of LAZY)
  await build({
    absWorkingDir: root,
    stdin: { contents: `module.exports = require(${JSON.stringify(name)});`, resolveDir: root, loader: "js" },
    outfile: `dist/vendor/${name}.cjs`,
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    logLevel: "warning",
  });
chmodSync(join(root, "dist", "bin", "coil.js"), 0o755);
// A plugin's manifest.json (which modes and subcommands it serves) is read without importing the plugin.
for (const entry of plugins) {
  const manifest = join(root, entry.replace(/index\.ts$/, "manifest.json"));
  if (existsSync(manifest)) copyFileSync(manifest, join(root, "dist", entry.replace(/index\.ts$/, "manifest.json")));
}
// The built-in presets, loaded once here and written as JSON: a run on them parses no YAML (boot/preset.ts).
const compiler = join(root, "dist", "compile-presets.mjs");
await buildScratch(compiler, "export { compileBuiltinPresets } from './boot/preset.ts';");
writeFileSync(join(root, "dist", "presets.json"), (await import(compiler)).compileBuiltinPresets());
rmSync(compiler);
// The built-in presets' options for the built-in plugins, and each plugin's no options, as validateOptions
// fills in and checks them: a run on them skips TypeBox's cold Value.Default/Value.Check (boot/options.ts).
const checker = join(root, "dist", "check-options.mjs");
await buildScratch(
  checker,
  "export { validateOptions, precheckedKey, loadOptionChecks } from './boot/options.ts'; export { resolvePreset, builtinPresetNames } from './boot/preset.ts';",
);
{
  const { validateOptions, precheckedKey, loadOptionChecks, resolvePreset, builtinPresetNames } = await import(checker);
  await loadOptionChecks();
  const scratch = mkdtempSync(join(tmpdir(), "coil-build-"));
  const given = new Map(); // plugin id → the option objects the built-in presets give it
  for (const entry of plugins) given.set(entry.split("/")[1], [{}]);
  for (const name of builtinPresetNames()) {
    const preset = resolvePreset({
      preset: name,
      cwd: scratch,
      home: scratch,
      trust: false,
      builtinOnly: true,
      env: {},
    });
    for (const e of preset.entries) {
      const raw = e.options === undefined || e.options === null || e.options === true ? {} : e.options;
      if (e.kind === "name" && given.has(e.key)) given.get(e.key).push(raw);
    }
  }
  rmSync(scratch, { recursive: true, force: true });
  const values = {};
  // A schema with a function as a default gives a new value each run: never prechecked.
  const fnDefault = (s) =>
    s && typeof s === "object" && (typeof s.default === "function" || Object.values(s).some(fnDefault));
  for (const [id, list] of given) {
    const file = join(root, "dist", "plugins", id, "index.js");
    if (!existsSync(file)) continue;
    const plugin = (await import(pathToFileURL(file).href)).default;
    if (!plugin?.options || fnDefault(plugin.options)) continue;
    for (const raw of list) {
      let value;
      try {
        value = validateOptions(plugin, structuredClone(raw));
      } catch {
        continue; // the run reports it, with the preset's file and line
      }
      const text = JSON.stringify(value);
      if (isDeepStrictEqual(JSON.parse(text), value)) values[precheckedKey(id, raw)] = text;
    }
  }
  writeFileSync(join(root, "dist", "options.json"), JSON.stringify(values));
}
rmSync(checker);
execFileSync(
  process.execPath,
  [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json", "--emitDeclarationOnly"],
  { cwd: root, stdio: "inherit" },
);
