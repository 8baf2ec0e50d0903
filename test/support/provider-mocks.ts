/**
 * The preambles of CLI test files: local servers started before the file's tests and closed after, a
 * project folder per test (its own `.home` as COIL_HOME) and the built CLI run in it; the two validating
 * provider mocks; one Anthropic mock.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { cleanTemps, coil, requireBuild, type Ran } from "./ecosystem.js";
import { coilInProcess } from "./cli-in-process.js";
import { childEnv } from "./env.js";
import { startMockAnthropic, type MockAnthropic } from "./mock-anthropic.js";
import { startMockOpenAI, type MockOpenAI } from "./mock-openai.js";
import type { Tmux, TmuxSuite } from "./tmux.js";

/** A multiply tool (`calc.ts` in a project): the plugin the provider and subscription CLI tests' tool loops call. */
export const CALC_TOOL = `import { definePlugin, Type } from "coil";
export default definePlugin({
  id: "calc-tool",
  setup(ctx) {
    ctx.tools.register({
      name: "multiply",
      description: "Multiply two numbers",
      parameters: Type.Object({ a: Type.Number(), b: Type.Number() }),
      async execute(args) {
        return { content: [{ type: "text", text: String(args.a * args.b) }] };
      },
    });
  },
});
`;

export interface CliProjects {
  /** A temp project folder with files (binary allowed) and an empty `.home`. */
  project(files?: Record<string, string | Buffer>): string;
  /** The built CLI in `cwd`, COIL_HOME `cwd/.home`, no real provider variables, plus `env`; `input` on stdin. */
  coil(cwd: string, args: string[], env?: Record<string, string>, input?: string): Promise<Ran>;
  /** The same run in this process (test/support/cli-in-process.ts): for what the command line says and returns. */
  inProcess(cwd: string, args: string[], env?: Record<string, string>, input?: string): Promise<Ran>;
}

/**
 * The preamble of a file of CLI tests against local servers: before its tests the build is checked and
 * `start` runs (it starts the file's servers and returns them); after them the servers are closed, last
 * started first, and the projects removed.
 */
export function useCliProjects(name: string, start?: () => Promise<{ close(): Promise<void> }[]>): CliProjects {
  const temps: string[] = [];
  let servers: { close(): Promise<void> }[] = [];
  beforeAll(async () => {
    requireBuild();
    servers = (await start?.()) ?? [];
  });
  afterAll(async () => {
    for (const s of servers.reverse()) await s.close();
    for (const d of temps) rmSync(d, { recursive: true, force: true });
  });
  return {
    project: (files = {}) => {
      const dir = mkdtempSync(join(tmpdir(), `coil-${name}-`));
      temps.push(dir);
      mkdirSync(join(dir, ".home"));
      for (const [file, body] of Object.entries(files)) writeFileSync(join(dir, file), body);
      return dir;
    },
    coil: (cwd, args, env = {}, input) => coil(cwd, args, childEnv({ COIL_HOME: join(cwd, ".home"), ...env }), input),
    inProcess: (cwd, args, env = {}, input) =>
      coilInProcess(cwd, args, childEnv({ COIL_HOME: join(cwd, ".home"), ...env }), input),
  };
}

export interface ProviderMocks extends CliProjects {
  anthropic: MockAnthropic;
  openai: MockOpenAI;
  /** Keys the mocks accept. */
  keys: { anthropic: string; openai: string };
}

export function useProviderMocks(name: string): ProviderMocks {
  const keys = { anthropic: `sk-ant-${name}-test-0123456789`, openai: `sk-proj-${name}-test-0123456789` };
  const m = { keys } as ProviderMocks;
  Object.assign(
    m,
    useCliProjects(name, async () => {
      m.anthropic = await startMockAnthropic({ key: keys.anthropic });
      m.openai = await startMockOpenAI({ key: keys.openai });
      return [m.anthropic, m.openai];
    }),
  );
  return m;
}

/**
 * One validating Anthropic mock for a file's CLI tests (the preamble they shared): the build is checked and
 * the mock started before the file's tests; after them the mock is closed and `ecosystem.ts`'s temp dirs
 * removed. The handle answers as the started mock does, from the first test or hook on.
 */
export function useMockAnthropic(key: string): MockAnthropic {
  let started: MockAnthropic | undefined;
  const mock = (): MockAnthropic => {
    if (!started) throw new Error("useMockAnthropic: the mock starts in beforeAll; use it inside a test or hook");
    return started;
  };
  beforeAll(async () => {
    requireBuild();
    started = await startMockAnthropic({ key });
  });
  afterAll(async () => {
    await started?.close();
    cleanTemps();
  });
  return {
    get url() {
      return mock().url;
    },
    get requests() {
      return mock().requests;
    },
    rejected: () => mock().rejected(),
    push: (...steps) => mock().push(...steps),
    remaining: () => mock().remaining(),
    clear: () => mock().clear(),
    close: () => mock().close(),
  };
}

/**
 * `coil <args>` in a tmux pane against the Anthropic mock, in a sandbox (`base` its temp folder, `project` the
 * working directory, `env` from `sandboxEnv`): the pane gets only what it needs of that environment.
 */
export function mockPane(
  tmux: TmuxSuite,
  sandbox: { base: string; project: string; env: NodeJS.ProcessEnv },
  args: string,
  size: { cols: number; rows: number } = { cols: 100, rows: 30 },
): Tmux {
  const env = Object.fromEntries(
    ["COIL_HOME", "HOME", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"].map((k) => [k, String(sandbox.env[k])]),
  );
  return tmux.start({ dir: sandbox.base, cwd: sandbox.project, ...size, env, command: tmux.coil(args) });
}
