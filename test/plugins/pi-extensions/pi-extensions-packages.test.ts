/**
 * Pi extensions (#34): what published Pi packages were seen to do, written here to Pi's documented API and
 * run through the built CLI against the validating Anthropic mock. A tool registered again under its name
 * replaces the earlier one (as Pi's registry does), in setup and after it; a late tool whose name another
 * owner holds is reported and left out without breaking the extension's later registrations.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { coil, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { reply, text } from "../../support/mock-anthropic.js";
import { useMockAnthropic } from "../../support/provider-mocks.js";

const KEY = "sk-ant-pi-packages-test-0123456789";
const MODEL = ["--model", "anthropic/claude-sonnet-4-5"];
const mock = useMockAnthropic(KEY);

function sandbox(files: Record<string, string> = {}) {
  const base = tempDir("coil-pi-pkg-");
  const project = join(base, "project");
  writeFiles(project, { ".git/HEAD": "ref: refs/heads/main\n" });
  const home = join(base, "home");
  writeFiles(home, files);
  const env = sandboxEnv(base, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url });
  return { base, project, home, env };
}

const toolUse = (name: string, input: Record<string, unknown>, id = "toolu_1") =>
  reply([{ tool: { id, name, input } }], { stop: "tool_use" });

/**
 * Registers `proxy` in setup, then again (a new description and execute) when `connect` runs, as an MCP
 * adapter re-syncs its proxy tools once a server has answered; `connect` also registers a late tool
 * named like coil's `read`, and then `connected`, which must still arrive.
 */
const RESYNC = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";

export default function (pi: ExtensionAPI) {
  const proxy = (version: number) => ({
    name: "proxy",
    label: "Proxy",
    description: "proxy version " + version,
    parameters: Type.Object({}),
    async execute() {
      return { content: [{ type: "text" as const, text: "proxy v" + version + " ran" }], details: {} };
    },
  });
  pi.registerTool(proxy(1));
  pi.registerTool(proxy(2));
  pi.registerTool({
    name: "connect",
    label: "Connect",
    description: "connect and re-sync",
    parameters: Type.Object({}),
    async execute() {
      pi.registerTool(proxy(3));
      pi.registerTool({ ...proxy(9), name: "read" });
      pi.registerTool({ ...proxy(4), name: "connected", description: "registered after connecting" });
      return { content: [{ type: "text" as const, text: "connected" }], details: {} };
    },
  });
}
`;

const resultText = (body: Record<string, any>) => JSON.stringify(body.messages.at(-1).content);
const toolNamed = (body: Record<string, any>, name: string) =>
  body.tools.find((t: { name: string }) => t.name === name);

describe("Pi packages' patterns through the CLI", () => {
  it("a tool registered again replaces the earlier one, in setup and from a running tool; a late name another owner holds is reported, and later registrations still arrive", async () => {
    const s = sandbox({ ".pi/agent/extensions/resync.ts": RESYNC });
    mock.requests.length = 0;
    mock.push(
      toolUse("proxy", {}, "toolu_a"),
      toolUse("connect", {}, "toolu_b"),
      toolUse("proxy", {}, "toolu_c"),
      toolUse("connected", {}, "toolu_d"),
      text("all done"),
    );
    const ran = await coil(s.project, [...MODEL, "-p", "connect and call"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout.trim()).toBe("all done");
    expect(mock.rejected()).toEqual([]);
    const [first, second, third, fourth, fifth] = mock.requests.map((r) => r.body);
    // the second setup registration replaced the first, with no duplicate error
    expect(toolNamed(first!, "proxy").description).toBe("proxy version 2");
    expect(resultText(second!)).toContain("proxy v2 ran");
    expect(resultText(third!)).toContain("connected");
    // the registration from the running tool replaced it again: the model sees it, the call runs it
    expect(toolNamed(third!, "proxy").description).toBe("proxy version 3");
    expect(resultText(fourth!)).toContain("proxy v3 ran");
    expect(toolNamed(fourth!, "connected")?.description).toBe("registered after connecting");
    expect(resultText(fifth!)).toContain("proxy v4 ran");
    // coil's read stays coil's, and the clash is reported once
    expect(toolNamed(fifth!, "read").description).not.toBe("proxy version 9");
    expect(ran.stderr).toContain('Pi extension resync: pi.registerTool("read") is not supported in coil');
    expect(ran.stderr).not.toContain("REGISTRY_DUPLICATE");

    const doctor = await coil(s.project, ["doctor"], s.env);
    expect(doctor.stdout).toMatch(/resync \(user, .*resync\.ts\): tools proxy, connect\n/);
  });
});
