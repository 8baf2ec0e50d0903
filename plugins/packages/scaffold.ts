/**
 * `coil plugin new <name>`: a TypeScript plugin project with one tool and a passing test that uses
 * `coil/testing` (the scripted provider plus a temporary workspace). No build step: coil loads `.ts`.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { CliStreams } from "../../kernel/index.js";

function coilVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dirname(dir) !== dir; dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
      if (pkg.name === "coil") return pkg.version ?? "0.1.0";
    }
  }
  return "0.1.0";
}

export function scaffoldFiles(name: string, version = coilVersion()): Record<string, string> {
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
        scripts: { test: "vitest run" },
        peerDependencies: { coil: `>=${version}` },
        devDependencies: { coil: `^${version}`, vitest: "^4.0.0" },
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
    "test/index.test.ts": `import { describe, expect, it } from "vitest";
import { createTestKit } from "coil/testing";
import plugin from "../index.ts";

describe("${base}", () => {
  it("the model calls ${tool} and gets the text reversed", async () => {
    const kit = createTestKit({
      plugins: [plugin],
      // One reply per model request: first a tool call, then the answer after the result.
      replies: [{ toolCalls: [{ name: "${tool}", arguments: { text: "stressed" } }] }, { text: "It reads desserts." }],
    });
    try {
      const result = await kit.run("reverse 'stressed'");
      expect(result.stopReason).toBe("stop");
      const [call] = kit.toolResults("${tool}");
      expect(call?.isError).toBe(false);
      expect(kit.text(call)).toBe("desserts");
      // The second request carried the tool result back to the model.
      expect(kit.requests[1]?.messages.at(-1)).toMatchObject({ role: "toolResult", toolName: "${tool}" });
      expect(kit.text()).toBe("It reads desserts.");
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
      expect(call?.isError).toBe(true);
      expect(kit.text(call)).toContain("longer than 3");
    } finally {
      kit.dispose();
    }
  });
});
`,
    "tsconfig.json": JSON.stringify(
      { compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, allowImportingTsExtensions: true, skipLibCheck: true, types: ["node"] }, include: ["*.ts", "test"] },
      null,
      2,
    ) + "\n",
    ".gitignore": "node_modules/\n",
    "README.md": `# ${name}

A [coil](https://www.npmjs.com/package/coil) plugin with one tool, \`${tool}\`.

\`\`\`sh
npm install          # coil and vitest, for the tests
npm test             # runs test/index.test.ts against the scripted provider, offline
coil --plugin ./index.ts -p "reverse 'stressed'"
coil install .       # or publish it and: coil install ${name}
\`\`\`

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
