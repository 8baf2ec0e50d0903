/**
 * Pi extensions (#34): `project_trust`. While a project is undecided (not trusted, nothing stored, not asked),
 * your extensions and `-e`'s decide before coil asks: "yes" loads the project's own code (its `.pi/extensions`)
 * for this run, or for good with `remember`; "no" skips it without asking; "undecided" leaves it to coil. A
 * project trusted already is not put to them. Through the built CLI in print mode; the extensions are
 * written here to Pi's documented API.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { coil, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { useMockAnthropic } from "../../support/provider-mocks.js";

const KEY = "sk-ant-pi-trust-test-0123456789";
const MODEL = ["--model", "anthropic/claude-sonnet-4-5"];
const mock = useMockAnthropic(KEY);

const DECIDER = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { appendFileSync } from "node:fs";

export default function (pi: ExtensionAPI) {
  pi.on("project_trust", async (event, ctx) => {
    appendFileSync(process.env.PI_TRUST_LOG!, "asked " + event.cwd + " hasUI " + ctx.hasUI + " mode " + ctx.mode + "\\n");
    return { trusted: process.env.PI_TRUST_VERDICT ?? "undecided", remember: process.env.PI_TRUST_REMEMBER === "1" };
  });
}
`;

const PROJECT_EXT = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerCommand("projcmd", { description: "the project's own", handler: async (_a, ctx) => ctx.ui.notify("project extension loaded") });
}
`;

function sandbox() {
  const base = tempDir("coil-pi-trust-");
  const project = join(base, "project");
  writeFiles(project, { ".git/HEAD": "ref: refs/heads/main\n", ".pi/extensions/proj.ts": PROJECT_EXT });
  writeFiles(join(base, "home"), { ".pi/agent/extensions/decider.ts": DECIDER });
  const log = join(base, "trust.log");
  const env = sandboxEnv(base, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url, PI_TRUST_LOG: log });
  const asked = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []);
  const store = join(String(env.COIL_HOME), "trust.json");
  return { base, project, env, asked, store };
}

describe("Pi extensions: project_trust", () => {
  it("yes loads the project's extensions for this run, no skips them without asking, undecided leaves it to coil", async () => {
    const s = sandbox();
    const dir = realpathSync(s.project);
    const run = (verdict?: string) =>
      coil(s.project, [...MODEL, "-p", "/projcmd"], { ...s.env, ...(verdict ? { PI_TRUST_VERDICT: verdict } : {}) });

    const yes = await run("yes");
    expect(yes.code, yes.stderr).toBe(0);
    expect(yes.stdout.trim()).toBe("project extension loaded");
    expect(yes.stderr).toContain(`coil: Pi extension decider trusted project ${dir} for this run`);
    expect(s.asked()).toEqual([`asked ${dir} hasUI false mode print`]);
    expect(existsSync(s.store)).toBe(false); // not remembered

    const no = await run("no");
    expect(no.stdout).not.toContain("project extension loaded");
    expect(no.stderr).toContain(
      `coil: Pi extension decider declined to trust project ${dir}; its code is not loaded (coil trust ${dir}, or --trust for one run)`,
    );

    const undecided = await run();
    expect(undecided.stdout).not.toContain("project extension loaded");
    expect(undecided.stderr).not.toContain("Pi extension decider");
    expect(s.asked()).toHaveLength(3);
    expect(mock.requests).toHaveLength(0); // /projcmd (or its absence) sent nothing
  });

  it("remember keeps a yes in coil's trust store; a trusted project is not put to the extensions again", async () => {
    const s = sandbox();
    const dir = realpathSync(s.project);
    const first = await coil(s.project, [...MODEL, "-p", "/projcmd"], {
      ...s.env,
      PI_TRUST_VERDICT: "yes",
      PI_TRUST_REMEMBER: "1",
    });
    expect(first.stdout.trim()).toBe("project extension loaded");
    expect(first.stderr).toContain("(kept: coil untrust undoes it)");
    expect(Object.keys(JSON.parse(readFileSync(s.store, "utf8")).projects)).toEqual([dir]);

    const again = await coil(s.project, [...MODEL, "-p", "/projcmd"], { ...s.env, PI_TRUST_VERDICT: "no" });
    expect(again.stdout.trim()).toBe("project extension loaded");
    expect(s.asked()).toHaveLength(1);
    // --trust decides without them too
    const flagged = await coil(s.project, [...MODEL, "--trust", "-p", "/projcmd"], {
      ...s.env,
      PI_TRUST_VERDICT: "no",
    });
    expect(flagged.stdout.trim()).toBe("project extension loaded");
    expect(s.asked()).toHaveLength(1);
  });
});
