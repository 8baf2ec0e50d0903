/**
 * `coil plugin new <name>`: a TypeScript plugin project with one tool and a passing test that uses
 * `coil/testing` (the scripted provider plus a temporary workspace). No build step: coil loads `.ts`.
 * The project imports coil as `coil` (the loader serves that name at run time) and gets it for its tests
 * as a dev dependency under that name: the npm alias `npm:coil-agent@^<version>` when the running coil came
 * from the registry and the registry has that version, else a `file:` link to the running coil's folder
 * (a git checkout, a tarball install, no network), so `npm install && npm test` passes offline. The test
 * runs with `node --test`; `npm run typecheck` runs `coil plugin check` (check.ts), which uses the TypeScript
 * and Node types coil ships, so the project needs no TypeScript of its own.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { CliStreams } from "../../api/index.js";
import { PACKAGE_NAME, packageRoot } from "../../lib/paths.js";
import { runNpm } from "./npm.js";

/** The running coil: its package folder and version, and how a scaffold depends on it (`coil` in devDependencies). */
export interface CoilSource {
  root: string;
  version: string;
  dependency: string;
}

/** This coil's folder and version. */
function thisCoil(): { root: string; version: string } {
  const root = packageRoot();
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: string };
  return { root, version: pkg.version ?? "0.1.0" };
}

/** Installed by npm (`npm i -g coil-agent`, `npx coil-agent`): the folder is `node_modules/coil-agent`. */
export const fromRegistryInstall = (root: string): boolean =>
  basename(dirname(realpathSync(root))) === "node_modules" && basename(realpathSync(root)) === PACKAGE_NAME;

/**
 * How the scaffold depends on the running coil: `npm:coil-agent@^<version>` when coil was installed from
 * npm and the registry (or npm's cache) answers for that version within 10 s; otherwise `file:<root>`.
 */
export async function coilDependency(io: CliStreams, coil = thisCoil()): Promise<CoilSource> {
  const linked = { ...coil, dependency: `file:${coil.root}` };
  if (!fromRegistryInstall(coil.root)) return linked;
  const asked = runNpm(["view", `${PACKAGE_NAME}@${coil.version}`, "version", "--prefer-offline"], {
    cwd: io.cwd,
    env: io.env,
  });
  const answer = await Promise.race([
    asked,
    new Promise<undefined>((done) => setTimeout(() => done(undefined), 10_000).unref()),
  ]);
  return answer?.code === 0 && answer.stdout.trim().split("\n").includes(coil.version)
    ? { ...coil, dependency: `npm:${PACKAGE_NAME}@^${coil.version}` }
    : linked;
}

export function scaffoldFiles(name: string, coil: CoilSource): Record<string, string> {
  const linked = coil.dependency.startsWith("file:");
  const base = name.replace(/^@[^/]+\//, "");
  const tool =
    base
      .replace(/^coil-(plugin-)?/, "")
      .replace(/[^a-zA-Z0-9]+/g, "_")
      .replace(/^_|_$/g, "")
      .toLowerCase() || "tool";
  return {
    "package.json":
      JSON.stringify(
        {
          name,
          version: "0.1.0",
          description: `A coil plugin: the ${tool} tool`,
          type: "module",
          keywords: ["coil-package"],
          files: ["index.ts", "README.md"],
          coil: { plugins: ["./index.ts"] },
          scripts: { test: "node --test", typecheck: "coil plugin check" },
          // coil provides itself at run time; optional, so installing this package never fetches coil.
          peerDependencies: { [PACKAGE_NAME]: `>=${coil.version}` },
          peerDependenciesMeta: { [PACKAGE_NAME]: { optional: true } },
          // For the tests (coil/testing), `npm run typecheck` (coil's bin, its TypeScript and Node types) and
          // the editor's types: coil under the name plugins import it by.
          devDependencies: { coil: coil.dependency },
        },
        null,
        2,
      ) + "\n",
    "index.ts": `/**
 * ${name}: one tool, \`${tool}\`, that reverses a text. Replace it with yours; see coil's docs/plugins.md.
 */
import { definePlugin, Type } from "coil";

export default definePlugin({
  id: "${base}",
  description: "The ${tool} tool",
  options: Type.Object({
    /** Longest text accepted. */
    maxChars: Type.Integer({ minimum: 1, default: 10_000 }),
  }),
  setup(ctx) {
    ctx.tools.register({
      name: "${tool}",
      label: "${tool}",
      description: "Reverse a text, character by character.",
      parameters: Type.Object({ text: Type.String({ description: "The text to reverse" }) }),
      async execute(args) {
        if (args.text.length > ctx.options.maxChars) {
          // An error result: the model sees it and can try again.
          return { content: [{ type: "text", text: \`text is longer than \${ctx.options.maxChars} characters\` }], isError: true };
        }
        const reversed = [...args.text].reverse().join("");
        return { content: [{ type: "text", text: reversed }], details: { length: reversed.length } };
      },
    });
  },
});
`,
    "test/index.test.mjs": `import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createTestKit, importPlugin } from "coil/testing";

// coil loads the TypeScript plugin itself, as it does in a run: no build step, no TypeScript runner.
const plugin = await importPlugin(new URL("../index.ts", import.meta.url));

describe("${base}", () => {
  it("the model calls ${tool} and gets the text reversed", async () => {
    const kit = createTestKit({
      plugins: [plugin],
      // One reply per model request: first a tool call, then the answer after the result.
      replies: [{ toolCalls: [{ name: "${tool}", arguments: { text: "stressed" } }] }, { text: "It reads desserts." }],
    });
    try {
      const result = await kit.run("reverse 'stressed'");
      assert.equal(result.stopReason, "stop");
      const [call] = kit.toolResults("${tool}");
      assert.equal(call?.isError, false);
      assert.equal(kit.text(call), "desserts");
      // The second request carried the tool result back to the model.
      const last = kit.requests[1]?.messages.at(-1);
      assert.equal(last?.role, "toolResult");
      assert.equal(last?.toolName, "${tool}");
      assert.equal(kit.text(), "It reads desserts.");
    } finally {
      kit.dispose();
    }
  });

  it("answers with an error result when the text is too long", async () => {
    const kit = createTestKit({
      plugins: [[plugin, { maxChars: 3 }]],
      replies: [{ toolCalls: [{ name: "${tool}", arguments: { text: "too long" } }] }, { text: "Too long." }],
    });
    try {
      await kit.run("reverse 'too long'");
      const [call] = kit.toolResults("${tool}");
      assert.equal(call?.isError, true);
      assert.match(kit.text(call), /longer than 3/);
    } finally {
      kit.dispose();
    }
  });
});
`,
    "tsconfig.json":
      JSON.stringify(
        {
          compilerOptions: {
            target: "ES2022",
            module: "NodeNext",
            moduleResolution: "NodeNext",
            strict: true,
            noEmit: true,
            allowImportingTsExtensions: true,
            skipLibCheck: true,
            types: ["node"],
            // Node's types: the project's own, else the copy coil ships (no @types/node needed here).
            typeRoots: ["./node_modules/@types", "./node_modules/coil/node_modules/@types"],
          },
          include: ["*.ts"],
        },
        null,
        2,
      ) + "\n",
    ".gitignore": "node_modules/\n",
    "README.md": `# ${name}

A coil plugin with one tool, \`${tool}\`.

\`\`\`sh
npm install          # ${linked ? "links the coil that made this project" : `coil from npm, under the name plugins import: ${PACKAGE_NAME}`} (package.json: "coil": "${coil.dependency}")
npm test             # node --test: test/index.test.mjs against the scripted provider, offline
npm run typecheck    # coil plugin check: coil's own TypeScript and Node types, offline
coil --plugin ./index.ts -p "reverse 'stressed'"
coil install .       # or publish it and: coil install ${name}
\`\`\`

${
  linked
    ? `\`devDependencies.coil\` links the coil folder that made this project. On another machine, or once coil is
installed from npm (\`npm i -g ${PACKAGE_NAME}\`), use \`"coil": "npm:${PACKAGE_NAME}@^${coil.version}"\` instead.`
    : `\`devDependencies.coil\` is the npm alias of coil's package, ${PACKAGE_NAME}, so \`import ... from "coil"\` type-checks.`
}

\`npm run typecheck\` type-checks with the TypeScript and Node types that coil ships (\`coil plugin check\`), so
the project needs neither as a dependency; \`tsconfig.json\` finds Node's types in coil's folder. To use
\`tsc\` instead, \`npm i -D typescript @types/node\` and set the script to \`tsc -p .\`.

In a preset: \`plugins: [ ${name.startsWith("@") ? name : `npm:${name}`} ]\` once installed, or \`- ./path/to/index.ts\`.
`,
  };
}

/** `coil plugin new <name> [--dir <path>]` (the command line has parsed the arguments). */
export async function scaffoldCommand(name: string, options: { dir?: string }, io: CliStreams): Promise<number> {
  if (!/^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/.test(name)) {
    io.stderr.write(
      `coil plugin: '${name}' is not a valid npm package name (lower case letters, digits, '-', '.', '_'; optionally @scope/)\n`,
    );
    return 2;
  }
  const dir = resolve(io.cwd, options.dir ?? name.replace(/^@[^/]+\//, ""));
  if (existsSync(dir) && existsSync(join(dir, "package.json"))) {
    io.stderr.write(`coil plugin: ${dir} already has a package.json; choose another --dir\n`);
    return 2;
  }
  const files = scaffoldFiles(name, await coilDependency(io));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  io.stdout.write(
    `created ${dir}:\n${Object.keys(files)
      .map((f) => `  ${f}`)
      .join("\n")}\nnext: cd ${dir} && npm install && npm test\n`,
  );
  return 0;
}
