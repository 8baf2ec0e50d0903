/**
 * The layout's rules, checked on the source (ARCHITECTURE §7): the kernel does no I/O and imports only
 * its own files and its two libraries; it stays under its line bar as Biome formats it; boot/ and cli/ name
 * no particular plugin; nothing outside the kernel uses a back door into the host; a plugin reaches another
 * plugin only through `import type` of that plugin's api.ts, and coil only through its public surface (api/index.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { definePlugin, type PluginContext } from "../../api/index.js";
import { testHost } from "../support/host.js";
import { packageRoot } from "../../lib/paths.js";
import {
  biomeFormat,
  longLines,
  countCodeLines,
  KERNEL_LINE_BAR,
  kernelReport,
  LINE_WIDTH,
} from "../../scripts/kernel-lines.mjs";

const root = packageRoot();
const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? walk(join(dir, d.name)) : /\.(ts|mts|tsx)$/.test(d.name) ? [join(dir, d.name)] : [],
  );

interface ImportSite {
  spec: string;
  typeOnly: boolean;
  line: number;
}

/** Every module a file names: imports, re-exports, dynamic import(), `declare module` augmentations. */
function importsOf(file: string, text = readFileSync(file, "utf8")): ImportSite[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const out: ImportSite[] = [];
  const at = (n: ts.Node) => source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const c = node.importClause;
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : undefined;
      const typeOnly = Boolean(
        c && (c.isTypeOnly || (!c.name && named && named.length > 0 && named.every((e) => e.isTypeOnly))),
      );
      out.push({ spec: node.moduleSpecifier.text, typeOnly, line: at(node) });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      out.push({ spec: node.moduleSpecifier.text, typeOnly: node.isTypeOnly, line: at(node) });
    } else if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name)) {
      out.push({ spec: node.name.text, typeOnly: true, line: at(node) });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      out.push({ spec: node.arguments[0].text, typeOnly: false, line: at(node) });
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      out.push({ spec: node.argument.literal.text, typeOnly: true, line: at(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

const rel = (file: string) => relative(root, file);

/** Which built-in plugin a file belongs to (undefined outside plugins/). */
const pluginOf = (file: string): string | undefined => {
  const parts = relative(join(root, "plugins"), file).split(sep);
  return parts.length > 1 && parts[0] !== ".." ? parts[0] : undefined;
};

/**
 * Runtime imports between plugins that exist today and are still to be removed (issue #14, part 2):
 * "<importing file> -> <imported file>". Shrink this list; never grow it.
 */
const CROSS_PLUGIN_ALLOWLIST = new Set<string>([]);

/**
 * Back doors into the host, found line by line in code outside kernel/: reading a tapable hook's or the
 * host's private tap list, redefining a host's or agent's members, taking an agent's host, and registering
 * a service past registration (the services registry's register/sync; plugins provide in setup, through
 * `ctx.services.provide`, a fallback if another plugin may own the name). Only the kernel calls hooks,
 * and nothing assigns `host.ui`.
 */
const BACK_DOORS: [RegExp, string][] = [
  [/\bhooks\??\.\w+(\.\w+)?\??\.(promise|callAsync|call)\(/, "calls a hook directly (only the loop calls hooks)"],
  [/\.taps\b/, "reads a tap list (tapable's private `.taps`, or the host's): fork an agent with agent.fork()"],
  [
    /Object\.define(Property|Properties)\(\s*[\w.]*(host|agent|hooks)\b/i,
    "redefines a member of a host or an agent (ask the kernel for an API instead)",
  ],
  [/\bhostOf\b/, "takes an agent's host with hostOf() (read agent.view; make children with agent.fork())"],
  [
    /\bagent\??(\.host\b|\[\s*["'`]host["'`]\s*\])/,
    "reads agent.host (read agent.view; make children with agent.fork())",
  ],
  [
    /\bservices\??\.(register|sync)\(/,
    "registers a service on the registry itself, outside setup (provide it in setup)",
  ],
  [/\.ui\s*=[^=].*host|host.*\.ui\s*=[^=]/, "assigns host.ui (register the front end with its ui instead)"],
];

/**
 * The plugin host (boot/host.ts) owns the services registry: it registers what `ctx.services.provide` is given
 * in setup, and the services its creator offers. Every other back door holds for it too.
 */
const SERVICES_OWNER = join("boot", "host.ts");

/** Back doors in one file's text (outside kernel/). */
function backDoorViolations(file: string, text: string): string[] {
  const problems: string[] = [];
  const doors = rel(file) === SERVICES_OWNER ? BACK_DOORS.filter(([p]) => !p.source.includes("services")) : BACK_DOORS;
  text.split("\n").forEach((line, i) => {
    const code = line.replace(/^\s*(\/\/|\*).*$/, "");
    for (const [pattern, what] of doors) if (pattern.test(code)) problems.push(`${rel(file)}:${i + 1} ${what}`);
  });
  return problems;
}

/** A plugin's imports of boot/, cli/ or the kernel's internals (anything in kernel/ or api/ but api/index.ts). */
function pluginImportViolations(file: string, text: string): string[] {
  const problems: string[] = [];
  for (const site of importsOf(file, text)) {
    if (!site.spec.startsWith(".")) continue;
    const target = relative(root, resolve(dirname(file), site.spec)).split(sep);
    const where = `${rel(file)}:${site.line} imports ${site.spec}`;
    if (target[0] === "boot" || target[0] === "cli")
      problems.push(`${where}: a plugin never imports ${target[0]}/ (ask for a service the host provides)`);
    else if (target[0] === "kernel" || (target[0] === "api" && target.slice(1).join("/") !== "index.js"))
      problems.push(`${where}: a plugin imports coil's public surface only (api/index.js, "coil")`);
  }
  return problems;
}

/** The kernel's rules for one file's text; returns the violations found. */
function kernelViolations(file: string, text: string): string[] {
  const problems: string[] = [];
  for (const site of importsOf(file, text)) {
    const where = `${rel(file)}:${site.line}`;
    if (site.spec.startsWith(".")) {
      const target = resolve(dirname(file), site.spec);
      if (!target.startsWith(join(root, "kernel") + sep))
        problems.push(`${where} imports ${site.spec}, outside kernel/`);
    } else if (site.spec.startsWith("node:")) problems.push(`${where} imports ${site.spec}: the kernel does no I/O`);
    else if (!/^(typebox(\/[a-z]+)?|tapable)$/.test(site.spec))
      problems.push(`${where} imports package ${site.spec}: the kernel uses only typebox and tapable`);
  }
  text.split("\n").forEach((line, i) => {
    const code = line.replace(/\/\/.*$/, "");
    if (/\bprocess\.|\bglobalThis\.process\b|\brequire\(/.test(code) && !/^\s*\*/.test(line))
      problems.push(`${rel(file)}:${i + 1} uses process/require: the kernel does no I/O (pass it in from boot/)`);
  });
  return problems;
}

/** A plugin file's imports that reach another plugin at runtime, or anything of it but its api.ts. */
function crossPluginViolations(file: string, text: string): string[] {
  const own = pluginOf(file);
  const problems: string[] = [];
  for (const site of importsOf(file, text)) {
    if (!site.spec.startsWith(".")) continue;
    const target = resolve(dirname(file), site.spec);
    const other = pluginOf(target);
    if (!other || other === own) continue;
    const isApi = /^api\.(js|ts)$/.test(relative(join(root, "plugins", other), target));
    if (site.typeOnly && isApi) continue;
    const key = `${rel(file)} -> ${rel(target)}`;
    if (CROSS_PLUGIN_ALLOWLIST.has(key)) continue;
    problems.push(
      `${rel(file)}:${site.line} imports ${site.spec} from plugin '${other}'${site.typeOnly ? " (only its api.ts may be imported, as types)" : " at runtime: use its service, typed with `import type` from its api.ts"}`,
    );
  }
  return problems;
}

describe("layout: kernel/", () => {
  it("imports no node: module, nothing outside kernel/ but typebox and tapable, and never touches process", () => {
    const problems = walk(join(root, "kernel")).flatMap((f) => kernelViolations(f, readFileSync(f, "utf8")));
    expect(problems).toEqual([]);
  });

  it("the checks catch a node: import, a reach outside kernel/ and process.env", () => {
    const file = join(root, "kernel", "probe.ts");
    const found = kernelViolations(
      file,
      `import { readFileSync } from "node:fs";\nimport { x } from "../boot/paths.js";\nconst a = await import("../plugins/x/index.js");\nexport const e = process.env.HOME;\n`,
    );
    expect(found.map((p) => p.split(" ")[0])).toEqual([
      "kernel/probe.ts:1",
      "kernel/probe.ts:2",
      "kernel/probe.ts:3",
      "kernel/probe.ts:4",
    ]);
  });
});

/**
 * coil's public surface (api/) for one file: it stands on the kernel alone (and typebox), so `import "coil"`
 * loads no boot/, no plugin and does no I/O, like the kernel.
 */
function apiViolations(file: string, text: string): string[] {
  const problems: string[] = [];
  for (const site of importsOf(file, text)) {
    const where = `${rel(file)}:${site.line}`;
    if (site.spec.startsWith(".")) {
      const top = relative(root, resolve(dirname(file), site.spec)).split(sep)[0];
      if (top !== "api" && top !== "kernel")
        problems.push(`${where} imports ${site.spec}: api/ stands on kernel/ alone`);
    } else if (site.spec !== "typebox" && !site.spec.startsWith("typebox/"))
      problems.push(`${where} imports ${site.spec}: api/ uses only typebox besides the kernel`);
  }
  return problems;
}

describe("layout: api/, what coil gives plugins", () => {
  it("imports nothing but api/, kernel/ and typebox", () => {
    const problems = walk(join(root, "api")).flatMap((f) => apiViolations(f, readFileSync(f, "utf8")));
    expect(problems).toEqual([]);
  });

  it("the check catches boot/, lib/ and node: imports", () => {
    const found = apiViolations(
      join(root, "api", "probe.ts"),
      `import { x } from "../boot/host.js";\nimport type { Y } from "../lib/ui.js";\nimport { readFileSync } from "node:fs";\nimport { Agent } from "../kernel/agent.js";\n`,
    );
    expect(found.map((p) => p.split(" ")[0])).toEqual(["api/probe.ts:1", "api/probe.ts:2", "api/probe.ts:3"]);
  });
});

describe("layout: kernel/ size, counted as the formatter writes it (scripts/kernel-lines.mjs)", () => {
  let report: ReturnType<typeof kernelReport>;
  beforeAll(() => {
    report = kernelReport();
  });

  it("every kernel file is as Biome formats it", () => {
    expect(report.files.filter((f) => !f.formatted).map((f) => f.file)).toEqual([]);
  });

  it(`no kernel line is over ${LINE_WIDTH} columns (long strings and comments are rewrapped)`, () => {
    expect(report.files.filter((f) => f.long.length).map((f) => `${f.file}: ${f.long.join(", ")}`)).toEqual([]);
  });

  it(`has at most ${KERNEL_LINE_BAR} code lines as formatted (non-blank, non-comment)`, () => {
    expect(report.total).toBeGreaterThan(500);
    expect(report.total).toBeLessThanOrEqual(KERNEL_LINE_BAR);
  });

  it("counts what Biome writes: packed statements count once each, and a long line is found", () => {
    const packed = "export function f(a: number) { const b = a + 1; if (b > 2) { return b; } return a; }\n";
    expect(countCodeLines(packed)).toBe(1);
    const probe = join(root, "kernel", "probe.ts");
    expect(biomeFormat(probe, packed)).not.toBe(packed); // such a file is reported as not formatted
    expect(countCodeLines(biomeFormat(probe, packed))).toBe(7);
    const wide = `export const s = "${"x".repeat(130)}";\n`;
    expect(longLines(biomeFormat(probe, wide))).toHaveLength(1);
  });
});

describe("layout: boot/ and cli/", () => {
  it("name no particular plugin: no import from plugins/ and no built-in plugin's module path", () => {
    const problems: string[] = [];
    for (const f of [...walk(join(root, "boot")), ...walk(join(root, "cli"))]) {
      const text = readFileSync(f, "utf8");
      for (const site of importsOf(f, text))
        if (site.spec.includes("plugins/")) problems.push(`${rel(f)}:${site.line} imports ${site.spec}`);
      text.split("\n").forEach((line, i) => {
        if (/builtinModule\(\s*"plugins"\s*,\s*"/.test(line))
          problems.push(`${rel(f)}:${i + 1} names a built-in plugin's module`);
      });
    }
    expect(problems).toEqual([]);
  });
});

/** The top-level folders a file's relative imports reach (kernel, boot, cli, lib, plugins, sdk ...). */
const layersOf = (file: string, text: string): Map<string, number> => {
  const layers = new Map<string, number>();
  for (const site of importsOf(file, text)) {
    if (!site.spec.startsWith(".") || site.typeOnly) continue;
    const top = relative(root, resolve(dirname(file), site.spec)).split(sep)[0]!;
    if (!layers.has(top)) layers.set(top, site.line);
  }
  return layers;
};

/**
 * Plugins that still import sdk/ at runtime: "<file>". The fleet worker runs whole agents in process
 * with createAgent, and `coil fleet submit` resolves the preset it embeds. Shrink this list; never grow it.
 */
const PLUGIN_SDK_ALLOWLIST = new Set<string>(["plugins/fleet/commands.ts", "plugins/fleet/worker.ts"]);

/** The entry-point layer's rules for one file (ARCHITECTURE §7): sdk/ alone stands on both boot/ and plugins/. */
function entryPointViolations(file: string, text: string): string[] {
  const where = rel(file);
  const top = where.split(sep)[0];
  const layers = layersOf(file, text);
  const problems: string[] = [];
  if (top !== "sdk" && layers.has("boot") && layers.has("plugins"))
    problems.push(
      `${where}:${layers.get("plugins")} imports both boot/ and plugins/: only sdk/ (the entry points) may`,
    );
  if (top === "lib")
    for (const above of ["plugins", "cli", "sdk"])
      if (layers.has(above))
        problems.push(`${where}:${layers.get(above)} imports ${above}/: lib/ is the layer below the plugins`);
  if (top === "plugins" && layers.has("sdk") && !PLUGIN_SDK_ALLOWLIST.has(where))
    problems.push(`${where}:${layers.get("sdk")} imports sdk/: a plugin asks for a service instead`);
  return problems;
}

/**
 * What only a plugin does, found line by line in lib/: defining a plugin, registering on a plugin's
 * context (tools, providers, flags, subcommands, slash commands, front ends), tapping a hook, or
 * running at start or stop. lib/ is one layer below the plugins: it registers nothing. (A kit may
 * create a shared list the first plugin that needs it provides: the `doctor` sections, the login flows.)
 */
const REGISTERS: [RegExp, string][] = [
  [/\bdefinePlugin\s*\(/, "defines a plugin"],
  [/\bctx\.(tools|providers|flags|subcommands|commands|frontEnds)\.register\(/, "registers on a plugin's context"],
  [/\bctx\.(tap|onStart|onStop)\(/, "taps a hook or runs at start/stop"],
];

function libRegisters(file: string, text: string): string[] {
  const problems: string[] = [];
  text.split("\n").forEach((line, i) => {
    const code = line.replace(/^\s*(\/\/|\*).*$/, "");
    for (const [pattern, what] of REGISTERS)
      if (pattern.test(code))
        problems.push(`${rel(file)}:${i + 1} ${what}: lib/ registers nothing (move it into the plugin that owns it)`);
  });
  return problems;
}

describe("layout: lib/ registers nothing", () => {
  it("no file in lib/ defines a plugin, registers on a plugin's context, taps a hook or runs at start", () => {
    const problems = walk(join(root, "lib")).flatMap((f) => libRegisters(f, readFileSync(f, "utf8")));
    expect(problems).toEqual([]);
  });

  it("the check catches each way of registering", () => {
    const file = join(root, "lib", "probe.ts");
    for (const line of [
      'export default definePlugin({ id: "x", setup() {} });',
      'ctx.flags.register({ name: "api-key", type: "string" });',
      'ctx.subcommands.register({ name: "models", run });',
      'ctx.commands.register({ name: "model", run });',
      'ctx.tap("before_request", (r) => r);',
      "ctx.onStart((agent) => {});",
    ])
      expect(libRegisters(file, line), line).toEqual([expect.stringContaining("lib/ registers nothing")]);
    expect(libRegisters(file, "this.flags.register(flag.name, flag, plugin.id);\n// ctx.flags.register(x)")).toEqual(
      [],
    );
  });
});

describe("layout: sdk/, the public entry points", () => {
  it("sdk/ is the only place importing both boot/ and plugins/; lib/ imports neither plugins/, cli/ nor sdk/", () => {
    const problems = ["bin", "boot", "cli", "kernel", "lib", "plugins"].flatMap((dir) =>
      walk(join(root, dir)).flatMap((f) => entryPointViolations(f, readFileSync(f, "utf8"))),
    );
    expect(problems).toEqual([]);
    // and sdk/ really is that place: its files stand on both
    const sdkLayers = new Set(walk(join(root, "sdk")).flatMap((f) => [...layersOf(f, readFileSync(f, "utf8")).keys()]));
    expect([...sdkLayers]).toEqual(expect.arrayContaining(["boot", "plugins"]));
  });

  it("the check catches a file outside sdk/ on both layers, and lib/ reaching up", () => {
    const both = 'import { assemble } from "../boot/assemble.js";\nimport p from "../plugins/models/index.js";\n';
    expect(entryPointViolations(join(root, "cli", "probe.ts"), both)).toEqual([expect.stringContaining("only sdk/")]);
    expect(entryPointViolations(join(root, "sdk", "probe.ts"), both)).toEqual([]);
    const up = 'import { x } from "../plugins/models/cli.js";\nimport { createAgent } from "../sdk/index.js";\n';
    expect(entryPointViolations(join(root, "lib", "probe.ts"), up)).toHaveLength(2);
    const plugin = 'import { createAgent } from "../../sdk/index.js";\n';
    expect(entryPointViolations(join(root, "plugins", "probe", "index.ts"), plugin)).toEqual([
      expect.stringContaining("imports sdk/"),
    ]);
  });
});

describe("layout: no back doors", () => {
  it("outside kernel/, nothing calls hooks, reads tap lists, redefines host members, takes an agent's host or registers services late", () => {
    const problems = ["boot", "cli", "lib", "plugins", "sdk"].flatMap((dir) =>
      walk(join(root, dir)).flatMap((f) => backDoorViolations(f, readFileSync(f, "utf8"))),
    );
    expect(problems).toEqual([]);
  });

  it("no plugin imports boot/, cli/ or the kernel's internals", () => {
    const problems = walk(join(root, "plugins")).flatMap((f) => pluginImportViolations(f, readFileSync(f, "utf8")));
    expect(problems).toEqual([]);
  });

  it("the checks catch each back door (issue #29 item 4)", () => {
    const file = join(root, "plugins", "probe", "index.ts");
    const probes: [string, string][] = [
      ["const taps = (parent.hooks.tool_call as any).taps;", "reads a tap list"],
      ["for (const t of host.taps) copy(t);", "reads a tap list"],
      ['Object.defineProperty(host, "bailedBy", { value: () => "x" });', "redefines a member"],
      ["const host = hostOf(agent);", "hostOf()"],
      ['const host = agent["host"];', "reads agent.host"],
      ["const services = agent.host.services;", "reads agent.host"],
      ['host.services.sync("ui-acp", [["operations", ops]]);', "registers a service"],
      ['fe.host.services.register("operations", ops, "ui-acp");', "registers a service"],
      ["await host.hooks.tool_call.gate.promise(info);", "calls a hook directly"],
      ["fe.host.ui = dialogs;", "assigns host.ui"],
    ];
    for (const [line, what] of probes)
      expect(backDoorViolations(file, line), line).toEqual([expect.stringContaining(what)]);
    expect(
      backDoorViolations(
        file,
        'const view = agent.view;\nctx.services.provide("operations", ops, { fallback: true });',
      ),
    ).toEqual([]);
    const imports = pluginImportViolations(
      file,
      [
        'import { loadPlugin } from "../../boot/load.js";',
        'import type { CliIO } from "../../cli/main.js";',
        'import { PluginHost } from "../../kernel/host.js";',
        'import type { HostContext } from "../../api/plugin.js";',
        'import { definePlugin } from "../../api/index.js";',
      ].join("\n"),
    );
    expect(imports.map((p) => p.split(" ")[0])).toEqual([
      "plugins/probe/index.ts:1",
      "plugins/probe/index.ts:2",
      "plugins/probe/index.ts:3",
      "plugins/probe/index.ts:4",
    ]);
  });

  it("providing a service after registration closed is REGISTRATION_CLOSED, naming the plugin", () => {
    let late: PluginContext | undefined;
    const host = testHost();
    const keep = (ctx: PluginContext) => {
      late = ctx;
    };
    host.install(definePlugin({ id: "late-provider", setup: keep }));
    host.close();
    expect(() => late!.services.provide("operations", {})).toThrow(
      expect.objectContaining({ code: "REGISTRATION_CLOSED", plugin: "late-provider" }),
    );
  });
});

describe("layout: plugins/", () => {
  it('no plugin fakes a "no opinion" answer (`as unknown as undefined`): the tap wrapper takes undefined as one', () => {
    const problems = walk(join(root, "plugins")).flatMap((f) =>
      readFileSync(f, "utf8")
        .split("\n")
        .flatMap((line, i) => (/as unknown as undefined/.test(line) ? [`${rel(f)}:${i + 1}`] : [])),
    );
    expect(problems).toEqual([]);
  });

  it("a plugin imports another plugin only as `import type` from its api.ts", () => {
    const problems = walk(join(root, "plugins")).flatMap((f) => crossPluginViolations(f, readFileSync(f, "utf8")));
    expect(problems).toEqual([]);
  });

  it("the check catches a runtime import of another plugin and a type import of a file other than api.ts", () => {
    const file = join(root, "plugins", "probe", "index.ts");
    const found = crossPluginViolations(
      file,
      `import type { A } from "../mcp/api.js";\nimport { b } from "../mcp/api.js";\nimport type { C } from "../mcp/index.js";\nimport { own } from "./own.js";\n`,
    );
    expect(found.map((p) => p.split(" ")[0])).toEqual(["plugins/probe/index.ts:2", "plugins/probe/index.ts:3"]);
  });
});

/**
 * The provider kit drives a request (lib/provider-kit/driver.ts, issue #29 item 5): a plugin hands it an
 * adapter and never runs a step of the sequence itself. These kit files are the driver's own; a plugin
 * imports none of them (values.ts only for its types: the driver resolves `${NAME}` and `!command` values).
 */
const DRIVER_PARTS: Record<string, string> = {
  "run.ts": "retries a request",
  "retry.ts": "backs off between attempts",
  "keys.ts": "looks up the API key",
  "history.ts": "repairs the history",
  "fetch.ts": "hands the SDK its fetch",
  "http-fetch.ts": "hands the SDK its fetch",
  "sdk-log.ts": "routes the SDK's logging",
};

function providerDrivingViolations(file: string, text: string): string[] {
  const kit = join(root, "lib", "provider-kit");
  const problems: string[] = [];
  for (const site of importsOf(file, text)) {
    if (!site.spec.startsWith(".")) continue;
    const target = resolve(dirname(file), site.spec).replace(/\.js$/, ".ts");
    if (dirname(target) !== kit) continue;
    const name = relative(kit, target);
    const what = DRIVER_PARTS[name] ?? (name === "values.ts" && !site.typeOnly ? "resolves config values" : undefined);
    if (what)
      problems.push(
        `${rel(file)}:${site.line} imports lib/provider-kit/${name}: the plugin ${what} itself (give kitProvider an adapter; the driver does it)`,
      );
  }
  return problems;
}

describe("layout: the provider kit drives the adapter", () => {
  it("no plugin drives a provider request itself: no retries, keys, history repair, fetch or SDK logging of its own", () => {
    const problems = walk(join(root, "plugins")).flatMap((f) => providerDrivingViolations(f, readFileSync(f, "utf8")));
    expect(problems).toEqual([]);
  });

  it("the check catches each part of the sequence, and lets the driver, the error readings and value types through", () => {
    const file = join(root, "plugins", "probe", "index.ts");
    const parts = [
      'import { runWithRetries } from "../../lib/provider-kit/run.js";',
      'import { backoffMs } from "../../lib/provider-kit/retry.js";',
      'import { lookupKey } from "../../lib/provider-kit/keys.js";',
      'import { prepareHistory } from "../../lib/provider-kit/history.js";',
      'import { providerFetch } from "../../lib/provider-kit/fetch.js";',
      'import { routeConsole } from "../../lib/provider-kit/sdk-log.js";',
      'import { resolveHeaders } from "../../lib/provider-kit/values.js";',
    ];
    for (const line of parts)
      expect(providerDrivingViolations(file, line), line).toEqual([expect.stringContaining("kitProvider")]);
    const allowed = [
      'import { kitProvider, type ProviderAdapter } from "../../lib/provider-kit/driver.js";',
      'import { messages, type Failure } from "../../lib/provider-kit/errors.js";',
      'import type { ConfigValue } from "../../lib/provider-kit/values.js";',
      'import { findModel } from "../../lib/provider-kit/catalog.js";',
    ].join("\n");
    expect(providerDrivingViolations(file, allowed)).toEqual([]);
  });
});
