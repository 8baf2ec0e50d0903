/**
 * Pi extensions (#34): `resources_discover` through the built CLI against the validating Anthropic mock. The
 * skill and prompt-template paths an extension returns join coil's skills (the prompt's index, `/skill:name`,
 * `/skills`) and prompt templates (`/name args`, `/templates`); theme paths are reported, once. The extension is written
 * here to Pi's documented API.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RpcClient } from "../../../sdk/rpc-client/index.js";
import { BIN, coil, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { text } from "../../support/mock-anthropic.js";
import { useMockAnthropic } from "../../support/provider-mocks.js";

const KEY = "sk-ant-pi-resources-test-0123456789";
const MODEL = ["--model", "anthropic/claude-sonnet-4-5"];
const mock = useMockAnthropic(KEY);

/** Contributes a folder of skills, one skill file, a prompt template (relative: from the working directory) and a theme. */
const RESOURCES = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

export default function (pi: ExtensionAPI) {
  pi.on("resources_discover", async (event) => {
    if (event.reason !== "startup" || !event.cwd) return;
    return {
      skillPaths: [join(here, "ext-skills"), join(here, "single", "SKILL.md")],
      promptPaths: ["prompts"],
      themePaths: [join(here, "dark.json")],
    };
  });
}
`;

const skill = (name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;

function sandbox() {
  const base = tempDir("coil-pi-resources-");
  const project = join(base, "project");
  writeFiles(project, {
    ".git/HEAD": "ref: refs/heads/main\n",
    "prompts/riskscan.md": "---\ndescription: list a file's risks\n---\nReview $1 carefully and list the risks.\n",
    // coil has a built-in /review: the earlier place wins and this one is reported
    "prompts/review.md": "---\ndescription: shadowed\n---\nSHADOWED\n",
  });
  writeFiles(base, {
    "res.ts": RESOURCES,
    "ext-skills/deploy/SKILL.md": skill("deploy", "Deploy the service to staging", "DEPLOY-STEPS: run make deploy."),
    "single/SKILL.md": skill("triage", "Triage a failing test", "TRIAGE-STEPS: read the log first."),
    "dark.json": "{}",
  });
  const env = sandboxEnv(base, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url });
  return { base, project, env, ext: ["-e", join(base, "res.ts")] };
}

const systemOf = (body: Record<string, unknown>) => JSON.stringify(body.system);
const lastUser = (body: Record<string, unknown>) =>
  JSON.stringify((body.messages as { role: string; content: unknown }[]).filter((m) => m.role === "user").at(-1));

describe("Pi extensions: resources_discover", () => {
  it("the skills it returns are in the prompt's index and answer /skill:<name>; its prompt template is a command", async () => {
    const s = sandbox();
    mock.requests.length = 0;
    mock.push(text("ok"));
    const plain = await coil(s.project, [...MODEL, ...s.ext, "-p", "hello"], s.env);
    expect(plain.code, plain.stderr).toBe(0);
    const system = systemOf(mock.requests[0]!.body);
    expect(system).toContain("deploy");
    expect(system).toContain("Deploy the service to staging");
    expect(system).toContain("triage");
    // themes do not map: said once, naming the extension
    expect(plain.stderr).toContain("Pi extension res: themePaths from resources_discover is not supported in coil");
    expect(plain.stderr.split("themePaths").length - 1).toBe(1);
    expect(plain.stderr).toMatch(/prompt template \S+review\.md not loaded: \/review is already defined by \S+/);

    mock.push(text("deploying"));
    const viaSkill = await coil(s.project, [...MODEL, ...s.ext, "-p", "/skill:deploy to staging now"], s.env);
    expect(viaSkill.code, viaSkill.stderr).toBe(0);
    expect(lastUser(mock.requests[1]!.body)).toContain("DEPLOY-STEPS: run make deploy.");
    expect(lastUser(mock.requests[1]!.body)).toContain("to staging now");

    mock.push(text("reviewed"));
    const viaTemplate = await coil(s.project, [...MODEL, ...s.ext, "-p", "/riskscan src/app.ts"], s.env);
    expect(viaTemplate.code, viaTemplate.stderr).toBe(0);
    expect(lastUser(mock.requests[2]!.body)).toContain("Review src/app.ts carefully and list the risks.");
    expect(JSON.stringify(mock.requests.map((r) => r.body))).not.toContain("SHADOWED");
    expect(mock.rejected()).toEqual([]);
  });

  it("/skills and /templates name the places the extension added; without the extension neither is there", async () => {
    const s = sandbox();
    const skills = await coil(s.project, [...MODEL, ...s.ext, "-p", "/skills"], s.env);
    expect(skills.code, skills.stderr).toBe(0);
    expect(skills.stdout).toMatch(/ext-skills\s+\[extension, added by Pi extension res\]\s+1 skill/);
    expect(skills.stdout).toMatch(/deploy\s+\[extension\]/);
    const templates = await coil(s.project, [...MODEL, ...s.ext, "-p", "/templates"], s.env);
    expect(templates.stdout).toContain("/riskscan");

    const before = mock.requests.length;
    const without = await coil(s.project, [...MODEL, "-p", "/skills"], s.env);
    expect(without.code, without.stderr).toBe(0);
    expect(without.stdout).not.toContain("deploy");
    const noTemplate = await coil(s.project, [...MODEL, "-p", "/templates"], s.env);
    expect(noTemplate.stdout).not.toContain("/riskscan");
    expect(mock.requests.length).toBe(before); // commands only: nothing was sent
  });
  it("after a session switch the extension, loaded again, discovers them again: the template and the skill still answer (RPC)", async () => {
    const s = sandbox();
    const client = await RpcClient.start({
      bin: BIN,
      cwd: s.project,
      env: s.env,
      args: [...MODEL, ...s.ext],
      timeoutMs: 20_000,
    });
    try {
      await client.newSession();
      mock.requests.length = 0;
      mock.push(text("reviewed again"), text("deployed again"));
      expect((await client.run("/riskscan lib/x.ts")).stopReason).toBe("stop");
      expect(lastUser(mock.requests[0]!.body)).toContain("Review lib/x.ts carefully and list the risks.");
      expect((await client.run("/skill:deploy again")).stopReason).toBe("stop");
      expect(lastUser(mock.requests[1]!.body)).toContain("DEPLOY-STEPS: run make deploy.");
    } finally {
      await client.close();
    }
    expect(mock.rejected()).toEqual([]);
  });
});
