/**
 * Issue 29: the subscription providers read `$COIL_HOME` from the host's `locations` service (one answer
 * for every plugin), through lib/provider-kit/oauth.ts's loginPlace, not from a variable of their own.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { computeLocations } from "../../../lib/locations.js";
import { writeAuthEntry } from "../../../lib/provider-kit/config.js";
import copilot from "../../../plugins/provider-github-copilot/index.js";
import codex from "../../../plugins/provider-openai-codex/index.js";
import { testHost } from "../../support/host.js";

const temps: string[] = [];
const saved = process.env.COIL_HOME;
afterAll(() => {
  if (saved === undefined) delete process.env.COIL_HOME;
  else process.env.COIL_HOME = saved;
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});
const temp = () => {
  const dir = mkdtempSync(join(tmpdir(), "coil-login-place-"));
  temps.push(dir);
  return dir;
};

describe("subscription logins are found under the locations service's $COIL_HOME", () => {
  it("github-copilot and openai-codex see a login stored there, not under the process's COIL_HOME", () => {
    const elsewhere = temp();
    const home = temp();
    process.env.COIL_HOME = elsewhere;
    const later = Date.now() + 3_600_000;
    writeAuthEntry(home, "github-copilot", { type: "oauth", refresh: "gho_refresh", access: "tid=1", expires: later });
    writeAuthEntry(home, "openai-codex", { type: "oauth", refresh: "rt_refresh", access: "at", expires: later });
    const cwd = temp();
    const locations = computeLocations({ cwd, trusted: false, coilHome: home });
    const host = testHost({ cwd, services: { locations } });
    host.install(copilot, { compat: { pi: false } });
    host.install(codex, { compat: { pi: false } });
    expect(host.providers.get("github-copilot")!.isConfigured!()).toBe(true);
    expect(host.providers.get("openai-codex")!.isConfigured!()).toBe(true);

    // and a host whose locations name an empty $COIL_HOME has no login, whatever the process's variable says
    process.env.COIL_HOME = home;
    const empty = testHost({ cwd, services: { locations: { ...locations, coilHome: elsewhere } } });
    empty.install(copilot, { compat: { pi: false } });
    expect(empty.providers.get("github-copilot")!.isConfigured!()).toBe(false);
  });
});
