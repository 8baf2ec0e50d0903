/**
 * Where language servers come from: the built-ins, an installed Claude Code plugin's `.lsp.json` (and
 * plugin.json `lspServers`), the preset in Claude Code's or opencode's shape; what `coil doctor` and a
 * run say when a server's binary is missing. `coil doctor` and `coil -p` run as the built CLI.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadServers } from "../../../plugins/lsp/config.js";
import permissionGate from "../../../plugins/permission-gate/index.js";
import { childEnv } from "../../support/env.js";
import { cleanTemps, tempDir } from "../../support/tools.js";
import { call, ROOT, startHost, statusOf, textOf, TS_SERVER } from "./lsp-support.js";

const COIL = join(ROOT, "dist", "bin", "coil.js");
beforeAll(() => {
  if (!existsSync(COIL)) throw new Error(`${COIL} is missing: run \`npm run build\``);
});
afterAll(cleanTemps);

/** Install a Claude Code plugin folder into `home` as `coil install` leaves it (folder + lock entry). */
function installClaudePlugin(home: string, name: string, files: Record<string, string>): string {
  const root = join(home, "claude-plugins", name);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(root, rel, ".."), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  mkdirSync(join(home, "packages"), { recursive: true });
  const entry = { spec: root, source: "dir", version: "1.0.0", resolved: root, integrity: "sha256-x", enabled: true };
  writeFileSync(join(home, "packages", "coil-lock.json"), JSON.stringify({ claudePlugins: { [name]: entry } }));
  return root;
}

const base = (home: string, cwd: string) => ({
  preset: {},
  baseDir: cwd,
  home,
  cwd,
  trusted: true,
  claudePlugins: true,
});

describe("lsp configuration", () => {
  it("reads an installed Claude Code plugin's .lsp.json: its server takes the extensions it claims from the built-in", () => {
    const cwd = realpathSync(tempDir({}, "coil-lsp-conf-"));
    const home = join(cwd, ".home");
    const root = installClaudePlugin(home, "vtsls-lsp", {
      ".claude-plugin/plugin.json": JSON.stringify({ name: "vtsls-lsp" }),
      ".lsp.json": JSON.stringify({
        vtsls: {
          command: "vtsls",
          args: ["--stdio"],
          extensionToLanguage: { ".ts": "typescript", ".tsx": "typescriptreact" },
          env: { VTSLS_HOME: "${CLAUDE_PLUGIN_ROOT}/data" },
          initializationOptions: { vtsls: { autoUseWorkspaceTsdk: true } },
          startupTimeout: 5000,
          maxRestarts: 1,
        },
      }),
    });
    const c = loadServers(base(home, cwd));
    expect(c.problems).toEqual([]);
    const vtsls = c.servers.find((s) => s.name === "vtsls")!;
    expect(vtsls).toMatchObject({
      command: "vtsls",
      args: ["--stdio"],
      extensions: { ".ts": "typescript", ".tsx": "typescriptreact" },
      env: { CLAUDE_PLUGIN_ROOT: root, VTSLS_HOME: `${root}/data` },
      initializationOptions: { vtsls: { autoUseWorkspaceTsdk: true } },
      startupTimeout: 5000,
      maxRestarts: 1,
      source: { kind: "claude-plugin", plugin: "vtsls-lsp", file: join(root, ".lsp.json") },
    });
    // The built-in keeps the JavaScript extensions only.
    const ts = c.servers.find((s) => s.name === "typescript")!;
    expect(Object.keys(ts.extensions)).toEqual([".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"]);
    // Turned off by the user's own option: the plugin's server is ignored.
    expect(loadServers({ ...base(home, cwd), claudePlugins: false }).servers.map((s) => s.name)).toEqual([
      "typescript",
      "python",
    ]);
  });

  it("reads plugin.json lspServers given inline, and says what it cannot use", () => {
    const cwd = realpathSync(tempDir({}, "coil-lsp-conf-"));
    const home = join(cwd, ".home");
    installClaudePlugin(home, "go-lsp", {
      ".claude-plugin/plugin.json": JSON.stringify({
        name: "go-lsp",
        lspServers: {
          gopls: { command: "gopls", args: ["serve"], extensionToLanguage: { ".go": "go" } },
          remote: { command: "x", transport: "socket", extensionToLanguage: { ".x": "x" } },
        },
      }),
    });
    const c = loadServers(base(home, cwd));
    expect(c.servers.find((s) => s.name === "gopls")).toMatchObject({ command: "gopls", extensions: { ".go": "go" } });
    expect(c.servers.some((s) => s.name === "remote")).toBe(false);
    expect(c.problems).toEqual([
      expect.objectContaining({
        server: "remote",
        message: "transport 'socket' is not supported: coil talks to language servers over stdio only",
      }),
    ]);
  });

  it("takes preset entries in opencode's shape and Claude Code's, refines a built-in, and turns one off", () => {
    const cwd = realpathSync(tempDir({}, "coil-lsp-conf-"));
    const c = loadServers({
      ...base(join(cwd, ".home"), cwd),
      preset: {
        // opencode: the command with its arguments, extensions without language ids, `initialization`.
        ruff: {
          command: ["ruff", "server"],
          extensions: [".py"],
          initialization: { lineLength: 100 },
          env: { A: "1" },
        },
        // A built-in refined: only the binary changes; its arguments and extensions stay.
        typescript: { command: "./bin/tsls", rootMarkers: ["deno.json"] },
        python: false,
        broken: { command: "b", extensionToLanguage: { ".b": "b" }, colour: "red" },
      },
    });
    expect(c.servers.map((s) => s.name)).toEqual(["typescript", "ruff"]);
    expect(c.servers[0]).toMatchObject({
      command: join(cwd, "bin", "tsls"),
      args: ["--stdio"],
      rootMarkers: ["deno.json"],
      source: { kind: "preset" },
    });
    expect(c.servers[1]).toMatchObject({
      command: "ruff",
      args: ["server"],
      extensions: { ".py": "python" },
      initializationOptions: { lineLength: 100 },
      env: { A: "1" },
    });
    expect(c.disabled).toEqual([{ name: "python", source: { kind: "preset" } }]);
    expect(c.problems).toEqual([
      expect.objectContaining({ server: "broken", message: expect.stringMatching(/^unknown key 'colour' \(known: /) }),
    ]);
  });
});

describe("coil doctor and a run without the server's binary", () => {
  const env = (home: string) => childEnv({ COIL_HOME: home, PATH: "/usr/bin:/bin" });

  it("coil doctor lists each server, where it was configured, and what to install when it is missing", () => {
    const cwd = realpathSync(tempDir({ "tsconfig.json": "{}" }, "coil-lsp-doctor-"));
    const home = join(cwd, ".home");
    mkdirSync(home);
    writeFileSync(
      join(home, "preset.yaml"),
      `plugins:\n  - lsp: { servers: { typescript: { command: ${JSON.stringify(TS_SERVER)} } } }\n`,
    );
    const doctor = (args: string[]) => {
      const r = spawnSync(process.execPath, [COIL, ...args], { cwd, env: env(home), encoding: "utf8" });
      return r.stdout.slice(r.stdout.indexOf("Language servers:"));
    };
    // Not trusted (a project with nothing in .coil/ is not trusted by that alone): PATH only, and it says why.
    const section = doctor(["doctor"]);
    expect(section).toContain(`  typescript  .ts .tsx .mts .cts .js .jsx .mjs .cjs  ${TS_SERVER} --stdio  (preset)\n`);
    expect(section).toContain(
      "  python  .py .pyi  missing: 'pyright-langserver or basedpyright-langserver' not found on PATH (the project is not trusted, so its node_modules/.bin and virtualenvs were not searched: coil trust); " +
        "install it: npm install --save-dev pyright, or pip install pyright (or basedpyright)  (built-in)\n",
    );
    expect(doctor(["--trust", "doctor"])).toContain(
      "  python  .py .pyi  missing: 'pyright-langserver or basedpyright-langserver' not found (looked in " +
        `${join(cwd, "node_modules", ".bin")}, virtualenvs and PATH); install it: npm install --save-dev pyright, or pip install pyright (or basedpyright)  (built-in)\n`,
    );
  });

  it("the first read of a file whose server is missing says once which package to install; the result is unchanged", () => {
    const cwd = realpathSync(
      tempDir(
        {
          "m.py": "x = 1\n",
          "s.yaml":
            "- toolCalls: [{ name: read, arguments: { path: m.py } }]\n- toolCalls: [{ name: edit, arguments: { path: m.py, edits: [{ oldText: 'x = 1', newText: 'x = 2' }] } }]\n- text: done\n",
        },
        "coil-lsp-missing-",
      ),
    );
    const home = join(cwd, ".home");
    const r = spawnSync(process.execPath, [COIL, "--provider", "scripted", "--script", "s.yaml", "-p", "go"], {
      cwd,
      env: env(home),
      encoding: "utf8",
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("done\n");
    const warnings = r.stderr.split("\n").filter((l) => l.includes("language server"));
    expect(warnings).toEqual([
      "coil: warn: [plugin lsp] no diagnostics for .py files: language server 'python' (built-in): 'pyright-langserver or basedpyright-langserver' not found " +
        "on PATH (the project is not trusted, so its node_modules/.bin and virtualenvs were not searched: coil trust); install it: npm install --save-dev pyright, or pip install pyright (or basedpyright)",
    ]);
  });
});

describe("a project without a configured language", () => {
  it("gets no lsp tool and starts nothing; the tool joins at the request after a TypeScript file was read", async () => {
    const cwd = realpathSync(
      tempDir({ "notes.md": "# notes\n", "scripts/x.ts": "export const x = 1;\n" }, "coil-lsp-none-"),
    );
    const t = await startHost(cwd, { servers: { typescript: { command: TS_SERVER } } });
    try {
      const edit = await call(t, "edit", { path: "notes.md", edits: [{ oldText: "# notes", newText: "# Notes" }] });
      expect(edit.details).not.toHaveProperty("diagnostics");
      expect(t.scripted.requests.map((r) => r.tools.some((x) => x.name === "lsp"))).toEqual([false, false]);
      expect(statusOf(t)).toEqual([]);
      await call(t, "read", { path: "scripts/x.ts" });
      expect(statusOf(t)).toEqual([expect.objectContaining({ name: "typescript", root: cwd })]);
      // The tool joins at a request boundary: the registry's change shows from the request after it.
      t.scripted.push({ text: "next" });
      await t.agent.prompt("again");
      expect(t.scripted.requests.slice(2).map((r) => r.tools.some((x) => x.name === "lsp"))).toEqual([
        false,
        false,
        true,
      ]);
    } finally {
      await t.stop();
    }
  }, 30_000);
});

describe("the lsp tool and the permission gate", () => {
  it("is read-only: plan mode lets it run (and blocks the edit)", async () => {
    const cwd = realpathSync(tempDir({ "tsconfig.json": "{}", "README.md": "# r\n" }, "coil-lsp-plan-"));
    const t = await startHost(cwd, { servers: { typescript: { command: TS_SERVER } } }, [
      [permissionGate, { mode: "plan" }],
    ]);
    try {
      const ask = await call(t, "lsp", { action: "diagnostics", path: "README.md" });
      expect(textOf(ask)).toMatch(/^No language server is configured for README\.md/);
      const edit = await call(t, "edit", { path: "README.md", edits: [{ oldText: "# r", newText: "# R" }] });
      expect(textOf(edit)).toMatch(/^Blocked: edit is not allowed: plan mode is read-only/);
      expect(statusOf(t)).toEqual([]);
    } finally {
      await t.stop();
    }
  });
});
