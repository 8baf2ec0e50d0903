/**
 * Issue 36.3 and 28.6, through the built CLI against the mock Anthropic server (what reaches the provider is
 * what the test reads):
 * - a project's CLAUDE.md `@import` of a credential a deny rule covers (`@~/.ssh/id_rsa`, also through a link
 *   inside the project) never reaches the provider, in the default and the safe preset;
 * - an import from outside the project needs your approval once: in print mode it is left out with a notice
 *   naming the file and `--allow-imports`; `--allow-imports` approves it and the answer is remembered for the
 *   project; over RPC coil asks once, and a "no" is remembered too;
 * - `@AGENTS.md` inside CLAUDE.md (and a file two instruction files import) reaches the model once.
 */
import { readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RpcClient } from "../../../sdk/rpc-client/index.js";
import { BIN, cleanTemps, coil, requireBuild, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { startMockAnthropic, text, type MockAnthropic } from "../../support/mock-anthropic.js";

beforeAll(requireBuild);
afterAll(cleanTemps);

const KEY = "sk-ant-imports-key-000000000000000000";
const SECRET = "ssh-key-material-7f3a9c";
const OUTSIDE = "outside-note-5521";
const INSIDE = "inside-rule-3308";

let mock: MockAnthropic;
beforeAll(async () => {
  mock = await startMockAnthropic({ key: KEY });
});
afterAll(() => mock.close());
beforeEach(() => {
  mock.requests.length = 0;
});

/** A home with a key and notes outside the project, and a git project whose CLAUDE.md imports them. */
function world(claudeMd: string, files: Record<string, string> = {}) {
  const base = tempDir("coil-imports-");
  const home = writeFiles(join(base, "home"), {
    ".ssh/id_rsa": `${SECRET}\n`,
    ".aws/credentials": "[default]\naws_secret_access_key = aws-material-118\n",
    "notes/outside.md": `${OUTSIDE}\n`,
  });
  const dir = writeFiles(join(base, "project"), {
    ".git/HEAD": "ref: refs/heads/main\n",
    "CLAUDE.md": claudeMd,
    "docs/inside.md": `${INSIDE}\n`,
    ...files,
  });
  const env = sandboxEnv(base, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url });
  return { base, home, dir, env };
}

/** The system prompt of each request since the last call. */
function systems(): string[] {
  const out = mock.requests.map((q) => JSON.stringify(q.body.system));
  mock.requests.length = 0;
  return out;
}

const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;

describe("instruction-file imports (36.3)", () => {
  it("print mode: a denied file is never imported, an outside one waits for --allow-imports, which is remembered", async () => {
    const w = world("Project rules.\n\n@~/.ssh/id_rsa\n@keys.md\n@~/notes/outside.md\n@docs/inside.md\n");
    symlinkSync(join(w.home, ".ssh", "id_rsa"), join(w.dir, "keys.md"));

    for (const preset of ["default", "safe"]) {
      mock.push(text("ok"));
      const r = await coil(w.dir, ["--preset", preset, "-p", "hi"], w.env);
      expect(r.code, r.stderr).toBe(0);
      const [system] = systems();
      expect(system).toContain(INSIDE);
      expect(system).not.toContain(SECRET);
      expect(system).not.toContain(OUTSIDE);
      // the model is told what was left out and why; the user gets a notice naming the file and the way in
      expect(system).toContain("@~/.ssh/id_rsa not imported: the deny rule *(~/.ssh/**) covers it");
      expect(system).toContain("@keys.md not imported: the deny rule *(~/.ssh/**) covers it");
      expect(system).toContain("@~/notes/outside.md not imported: it is outside the project and not approved yet");
      expect(r.stderr).toContain(
        `${join(w.dir, "CLAUDE.md")} imports ${join(w.home, "notes", "outside.md")}, outside the project; not imported`,
      );
      expect(r.stderr).toContain("--allow-imports");
    }

    mock.push(text("ok"), text("ok"));
    const allowed = await coil(w.dir, ["--allow-imports", "-p", "hi"], w.env);
    expect(allowed.code, allowed.stderr).toBe(0);
    const again = await coil(w.dir, ["-p", "hi"], w.env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain("outside the project");
    for (const system of systems()) {
      expect(system).toContain(OUTSIDE);
      expect(system).not.toContain(SECRET);
    }
    const store = JSON.parse(readFileSync(join(w.base, "coil-home", "imports.json"), "utf8"));
    expect(store.projects[w.dir].approved).toEqual([join(w.home, "notes", "outside.md")]);

    const doctor = await coil(w.dir, ["doctor"], w.env);
    expect(doctor.stdout).toContain(
      `imports from outside the project you approved: ${join(w.home, "notes", "outside.md")}`,
    );
    expect(doctor.stdout).toMatch(/@~\/\.ssh\/id_rsa not imported: the deny rule/);
  });

  it("a denied file is not loaded as an instruction file either (CLAUDE.local.md linked to a credential)", async () => {
    const w = world("Project rules.\n");
    symlinkSync(join(w.home, ".aws", "credentials"), join(w.dir, "CLAUDE.local.md"));
    mock.push(text("ok"));
    const r = await coil(w.dir, ["-p", "hi"], w.env);
    expect(r.code, r.stderr).toBe(0);
    expect(systems()[0]).not.toContain("aws-material-118");
    expect(r.stderr).toContain(`${join(w.dir, "CLAUDE.local.md")} not loaded: the deny rule *(~/.aws/**) covers it`);
  });

  it("RPC: coil asks once before the first request; yes imports and is remembered, no is remembered too", async () => {
    const answer = async (w: ReturnType<typeof world>, choice: string) => {
      const client = await RpcClient.start({ bin: BIN, cwd: w.dir, env: w.env, timeoutMs: 15_000 });
      const dialogs: { method: string; params: Record<string, unknown> }[] = [];
      client.onUi((req) => {
        dialogs.push(req);
        return req.method === "select" ? choice : undefined;
      });
      try {
        mock.push(text("one"), text("two"));
        await client.run("first");
        await client.run("second");
      } finally {
        await client.close();
      }
      return dialogs;
    };

    const yes = world("@~/notes/outside.md\n@~/.ssh/id_rsa\n");
    const asked = await answer(yes, "Import them (remembered for this project)");
    expect(asked).toHaveLength(1);
    expect(asked[0]!.method).toBe("select");
    expect(asked[0]!.params.title).toContain(join(yes.home, "notes", "outside.md"));
    expect(asked[0]!.params.title).not.toContain("id_rsa");
    for (const system of systems()) {
      expect(system).toContain(OUTSIDE);
      expect(system).not.toContain(SECRET);
    }
    mock.push(text("ok"));
    const later = await coil(yes.dir, ["-p", "hi"], yes.env);
    expect(later.code, later.stderr).toBe(0);
    expect(systems()[0]).toContain(OUTSIDE);

    const no = world("@~/notes/outside.md\n");
    expect(await answer(no, "Do not import them (remembered)")).toHaveLength(1);
    for (const system of systems()) expect(system).not.toContain(OUTSIDE);
    expect(await answer(no, "Import them (remembered for this project)")).toHaveLength(0);
    for (const system of systems()) {
      expect(system).not.toContain(OUTSIDE);
      expect(system).toContain("you declined importing it");
    }
  });
});

describe("each instruction file reaches the model once (28.6)", () => {
  it("@AGENTS.md inside CLAUDE.md, and a file both CLAUDE.md files import, appear once", async () => {
    const w = world("Claude notes.\n\n@AGENTS.md\n@docs/inside.md\n", {
      "AGENTS.md": "agents-mark-4410\n",
      ".claude/CLAUDE.md": "More notes.\n\n@../docs/inside.md\n@../AGENTS.md\n",
    });
    mock.push(text("ok"));
    const r = await coil(w.dir, ["-p", "hi"], w.env);
    expect(r.code, r.stderr).toBe(0);
    const [system] = systems();
    expect(count(system!, "agents-mark-4410")).toBe(1);
    expect(count(system!, INSIDE)).toBe(1);
    expect(system).toContain("Claude notes.");
    expect(system).toContain("More notes.");
    const doctor = await coil(w.dir, ["doctor"], w.env);
    expect(doctor.stdout).toContain("@AGENTS.md is already in the context (an instruction file); not repeated");
    expect(doctor.stdout).toContain(
      `@../docs/inside.md is already in the context (imported by ${join(w.dir, "CLAUDE.md")}); not repeated`,
    );
  });
});
