/**
 * `coil plugin new <name>`: a TypeScript plugin project with one tool and a passing test that uses
 * `coil/testing` (the scripted provider plus a temporary workspace). No build step: coil loads `.ts`.
 * The project depends on the coil that made it, by path (`file:`), and tests with `node --test`, so
 * `npm install && npm test` needs nothing from the registry (the npm name `coil` is another package).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { CliStreams } from "../../kernel/index.js";
import { packageRoot } from "../../lib/paths.js";

/** This coil: its package folder (what the scaffold depends on) and its version. */
function thisCoil(): { root: string; version: string } {
  const root = packageRoot();
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: string };
  return { root, version: pkg.version ?? "0.1.0" };
}

export function scaffoldFiles(name: string, coil = thisCoil()): Record<string, string> {
  const base = name.replace(/^@[^/]+\//, "");
  const tool = base.replace(/^coil-(plugin-)?/, "").replace(/[^a-zA-Z0-9]+/g, "_").replace(/^_|_$/g, "").toLowerCase() || "tool";
  return {
    "package.json": JSON.stringify(
      {
        name,
        version: "0.1.0",
        description: `A coil plugin: the ${tool} tool`,
        type: "module",
        keywords: ["coil-package"],
        files: ["index.ts", "README.md"],
        coil: { plugins: ["./index.ts"] },
        scripts: { test: "node --test" },
        // coil provides itself at run time; optional, so installing this package never fetches a `coil` from npm.
        peerDependencies: { coil: `>=${coil.version}` },
        peerDependenciesMeta: { coil: { optional: true } },
        // For the tests (coil/testing): the coil that made this project, by path.
        devDependencies: { coil: `file:${coil.root}` },
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
    "tsconfig.json": JSON.stringify(
      { compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, allowImportingTsExtensions: true, skipLibCheck: true, types: [] }, include: ["*.ts"] },
      null,
      2,
    ) + "\n",
    ".gitignore": "node_modules/\n",
    "README.md": `# ${name}

A coil plugin with one tool, \`${tool}\`.

\`\`\`sh
npm install          # links the coil that made this project (package.json: "coil": "file:${coil.root}")
npm test             # node --test: test/index.test.mjs against the scripted provider, offline
coil --plugin ./index.ts -p "reverse 'stressed'"
coil install .       # or publish it and: coil install ${name}
\`\`\`

If coil moves (another install, another machine), point \`devDependencies.coil\` at its folder:
\`npm root -g\` shows where a global install lives.

In a preset: \`plugins: [ ${name.startsWith("@") ? name : `npm:${name}`} ]\` once installed, or \`- ./path/to/index.ts\`.
`,
  };
}

export function scaffoldCommand(argv: string[], io: CliStreams): number {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { dir: { type: "string" }, trust: { type: "boolean" } } });
  } catch (error) {
    io.stderr.write(`coil plugin: ${(error as Error).message}\n`);
    return 2;
  }
  const [verb, name] = parsed.positionals;
  if (verb !== "new" || !name) {
    io.stderr.write("coil plugin: usage: coil plugin new <name> [--dir <path>]\n");
    return 2;
  }
  if (!/^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/.test(name)) {
    io.stderr.write(`coil plugin: '${name}' is not a valid npm package name (lower case letters, digits, '-', '.', '_'; optionally @scope/)\n`);
    return 2;
  }
  const dir = resolve(io.cwd, parsed.values.dir ?? name.replace(/^@[^/]+\//, ""));
  if (existsSync(dir) && existsSync(join(dir, "package.json"))) {
    io.stderr.write(`coil plugin: ${dir} already has a package.json; choose another --dir\n`);
    return 2;
  }
  for (const [rel, text] of Object.entries(scaffoldFiles(name))) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  io.stdout.write(`created ${dir}:\n${Object.keys(scaffoldFiles(name)).map((f) => `  ${f}`).join("\n")}\nnext: cd ${dir} && npm install && npm test\n`);
  return 0;
}
