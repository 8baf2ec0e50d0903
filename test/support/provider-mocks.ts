/**
 * The two validating provider mocks a CLI test talks to, started before the file's tests and closed
 * after, with a project folder per test (its own `.home` as COIL_HOME) and the built CLI run in it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { cleanTemps, coil, requireBuild, type Ran } from "./ecosystem.js";
import { childEnv } from "./env.js";
import { startMockAnthropic, type MockAnthropic } from "./mock-anthropic.js";
import { startMockOpenAI, type MockOpenAI } from "./mock-openai.js";

export interface ProviderMocks {
  anthropic: MockAnthropic;
  openai: MockOpenAI;
  /** Keys the mocks accept. */
  keys: { anthropic: string; openai: string };
  /** A temp project folder with files (binary allowed) and an empty `.home`. */
  project(files?: Record<string, string | Buffer>): string;
  /** The built CLI in `cwd`, COIL_HOME `cwd/.home`, no real provider variables, plus `env`. */
  coil(cwd: string, args: string[], env?: Record<string, string>): Promise<Ran>;
}

export function useProviderMocks(name: string): ProviderMocks {
  const temps: string[] = [];
  const keys = { anthropic: `sk-ant-${name}-test-0123456789`, openai: `sk-proj-${name}-test-0123456789` };
  const m = { keys } as ProviderMocks;
  beforeAll(async () => {
    requireBuild();
    m.anthropic = await startMockAnthropic({ key: keys.anthropic });
    m.openai = await startMockOpenAI({ key: keys.openai });
  });
  afterAll(async () => {
    await m.anthropic?.close();
    await m.openai?.close();
    for (const d of temps) rmSync(d, { recursive: true, force: true });
  });
  m.project = (files = {}) => {
    const dir = mkdtempSync(join(tmpdir(), `coil-${name}-`));
    temps.push(dir);
    mkdirSync(join(dir, ".home"));
    for (const [file, body] of Object.entries(files)) writeFileSync(join(dir, file), body);
    return dir;
  };
  m.coil = (cwd, args, env = {}) => coil(cwd, args, childEnv({ COIL_HOME: join(cwd, ".home"), ...env }));
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
