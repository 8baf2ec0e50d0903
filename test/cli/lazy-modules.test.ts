/**
 * What a one-turn `coil -p` through the Anthropic provider compiles (issue 37, start-up): the SDK's client with
 * only its Messages resource (not the files, skills, models, organization and beta resources the SDK's default
 * export wires), and TypeBox without its compiler and value functions until a tool call is validated. The shipped
 * CLI against the validating mock; bench/record-loads.mjs records every module the run loaded. A Claude Code hook in
 * ~/.claude/settings.json brings the hooks' run-time side in, and it runs.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../lib/paths.js";
import { loadedPackage, loadedSource } from "../support/loads.js";
import { reply, text } from "../support/mock-anthropic.js";
import { useProviderMocks } from "../support/provider-mocks.js";

const mocks = useProviderMocks("lazy");
const RECORD = join(packageRoot(), "bench", "record-loads.mjs");

async function loadsOf(dir: string, args: string[], env: Record<string, string> = {}) {
  const loads = join(dir, "loads.txt");
  writeFileSync(loads, "");
  // Node's own modules the run loaded, from its module list at exit
  const builtins = join(dir, "builtins.json");
  const probe = join(dir, "probe.mjs");
  writeFileSync(
    probe,
    `import { writeFileSync } from "node:fs";\nprocess.on("exit", () => writeFileSync(${JSON.stringify(builtins)}, JSON.stringify(process.moduleLoadList)));\n`,
  );
  const r = await mocks.coil(dir, ["--model", "anthropic/sonnet", "--no-session", ...args], {
    ANTHROPIC_API_KEY: mocks.keys.anthropic,
    ANTHROPIC_BASE_URL: mocks.anthropic.url,
    COIL_BENCH_LOADS: loads,
    NODE_OPTIONS: `--import=${RECORD} --import=${probe}`,
    ...env,
  });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const node = (JSON.parse(readFileSync(builtins, "utf8")) as string[]).map((m) => m.replace(/^NativeModule /, ""));
  return { stdout: r.stdout.trim(), loads: readFileSync(loads, "utf8"), node };
}

describe("a print run compiles what it uses", () => {
  it("a text reply: the SDK's Messages client only; no TypeBox compiler or value functions, no globs, no hooks' run-time side", async () => {
    const dir = mocks.project();
    mocks.anthropic.push(text("hello"));
    const r = await loadsOf(dir, ["-p", "hi"]);
    expect(r.stdout).toBe("hello");
    expect(loadedPackage(r.loads, "@anthropic-ai/sdk/resources/messages")).toBe(true);
    // Resources coil never calls; the SDK's default export would have compiled them all.
    const unused = [
      "models",
      "completions",
      "beta/messages/messages",
      "beta/files",
      "beta/agents/agents",
      "beta/sessions/sessions",
    ];
    for (const name of unused.map((r) => `resources/${r}`))
      expect(loadedPackage(r.loads, `@anthropic-ai/sdk/${name}`), name).toBe(false);
    expect(loadedPackage(r.loads, "typebox/build/type")).toBe(true);
    expect(loadedPackage(r.loads, "typebox/build/compile")).toBe(false);
    expect(loadedPackage(r.loads, "typebox/build/value")).toBe(false);
    // tool-search's globs (only its pin and defer options use them) and the Claude Code hooks' run-time side
    // (only when a hook is configured) stay out too
    expect(loadedPackage(r.loads, "picomatch")).toBe(false);
    expect(loadedSource(r.loads, "plugins/hooks-claude/load.ts")).toBe(true);
    expect(loadedSource(r.loads, "plugins/hooks-claude/hooks.ts")).toBe(false);
    // nor Node's child_process (no process was started), https (the mock is plain http), zlib (not compressed) or
    // readline (nothing asked)
    for (const name of ["child_process", "https", "tls", "zlib", "readline"]) expect(r.node, name).not.toContain(name);
    expect(r.node).toContain("http");
    expect(mocks.anthropic.rejected()).toEqual([]);
  });

  it("a tool call: its arguments are validated (TypeBox's compiler loads then), converted, and a bad one refused", async () => {
    const dir = mocks.project({ "a.txt": "one\ntwo\nthree\n" });
    mocks.anthropic.push(
      // `limit` as a string is converted to the number the schema asks for; `limit: "many"` cannot be and is refused
      reply([{ tool: { id: "toolu_1", name: "read", input: { path: "a.txt", limit: "2" } } }], { stop: "tool_use" }),
      reply([{ tool: { id: "toolu_2", name: "read", input: { path: "a.txt", limit: "many" } } }], { stop: "tool_use" }),
      text("done"),
    );
    const seen = mocks.anthropic.requests.length;
    const r = await loadsOf(dir, ["-p", "read it"]);
    expect(r.stdout).toBe("done");
    expect(loadedPackage(r.loads, "typebox/build/compile")).toBe(true);
    expect(r.node).not.toContain("child_process"); // read runs in the process
    const results = mocks.anthropic.requests
      .slice(seen + 1)
      .map((q) => JSON.stringify((q.body as { messages: unknown[] }).messages.at(-1)));
    expect(results[0]).toContain("one\\ntwo");
    expect(results[0]).not.toContain("three");
    expect(results[1]).toContain("Invalid arguments for tool 'read'");
  });

  it("a Claude Code hook configured: the hooks' run-time side loads, and the hook decides", async () => {
    const dir = mocks.project({ "a.txt": "one\n" });
    const home = join(dir, "user");
    mkdirSync(join(home, ".claude"), { recursive: true });
    const deny = { type: "command", command: "echo 'no reading today' >&2; exit 2" };
    writeFileSync(
      join(home, ".claude", "settings.json"),
      JSON.stringify({ hooks: { PreToolUse: [{ matcher: "Read", hooks: [deny] }] } }),
    );
    mocks.anthropic.push(
      reply([{ tool: { id: "toolu_1", name: "read", input: { path: "a.txt" } } }], { stop: "tool_use" }),
      text("blocked then"),
    );
    const seen = mocks.anthropic.requests.length;
    const r = await loadsOf(dir, ["-p", "read it"], { HOME: home });
    expect(r.stdout).toBe("blocked then");
    expect(loadedSource(r.loads, "plugins/hooks-claude/hooks.ts")).toBe(true);
    expect(r.node).toContain("child_process"); // loaded when the hook's command was started
    const result = JSON.stringify(
      (mocks.anthropic.requests[seen + 1]!.body as { messages: unknown[] }).messages.at(-1),
    );
    expect(result).toContain("no reading today");
  });
});
