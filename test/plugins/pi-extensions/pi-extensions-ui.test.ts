/**
 * Pi extensions that draw (#34): `ctx.ui.custom` (in the editor's place and as an overlay), message renderers
 * for `pi.sendMessage`'s custom messages, and shortcut notices that name the extension. Extensions written
 * here to Pi's documented API, through the built CLI against the validating Anthropic mock: the TUI in tmux,
 * and print, JSON and RPC modes, where there is no terminal to draw in.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RpcClient } from "../../../sdk/rpc-client/index.js";
import { BIN, coil, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { reply, text } from "../../support/mock-anthropic.js";
import { mockPane, useMockAnthropic } from "../../support/provider-mocks.js";
import { useTmux } from "../../support/tmux.js";

const KEY = "sk-ant-pi-ui-test-0123456789";
const MODEL = ["--model", "anthropic/claude-sonnet-4-5"];
const mock = useMockAnthropic(KEY);
const tmux = useTmux();

/**
 * /pick: a list drawn by the extension, keys j/k and Enter (through the injected key bindings), Escape
 * cancels. /peek: an overlay in the top-right corner, closed by any key. A tool that sends a custom message
 * with a renderer of its own. Ctrl+L is the TUI's model picker: the extension's claim on it is refused.
 */
const UIEXT = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { Text, matchesKey } from "@mariozechner/pi-tui";

const FRUITS = ["apple", "banana", "cherry"];

export default function (pi: ExtensionAPI) {
  pi.registerCommand("pick", {
    description: "Pick a fruit",
    handler: async (_args, ctx) => {
      const picked = await ctx.ui.custom<string | undefined>((tui, theme, keybindings, done) => {
        let at = 0;
        return {
          render: (width: number) => [
            theme.bold("custom picker (j/k, Enter)"),
            ...FRUITS.map((f, i) => (i === at ? "> " : "  ") + f + (i === at ? " <" : "")),
          ].map((l) => l.slice(0, width)),
          invalidate() {},
          handleInput(data: string) {
            if (data === "j") at = Math.min(FRUITS.length - 1, at + 1);
            else if (data === "k") at = Math.max(0, at - 1);
            else if (keybindings.matches(data, "tui.select.confirm")) done(FRUITS[at]);
            else if (keybindings.matches(data, "tui.select.cancel")) done(undefined);
            tui.requestRender();
          },
        };
      });
      ctx.ui.notify("picked " + String(picked), "info");
    },
  });
  pi.registerCommand("peek", {
    description: "An overlay",
    handler: async (_args, ctx) => {
      let shown = false;
      const key = await ctx.ui.custom<string>(
        (_tui, _theme, _kb, done) => {
          const box = new Text("[ overlay: press x ]", 0, 0);
          return {
            render: (w: number) => box.render(w),
            invalidate: () => box.invalidate(),
            handleInput: (data: string) => {
              if (matchesKey(data, "x")) done("x");
            },
          };
        },
        { overlay: true, overlayOptions: { anchor: "top-right", width: 24 }, onHandle: () => { shown = true; } },
      );
      ctx.ui.notify("overlay closed with " + key + (shown ? " (handle given)" : ""), "info");
    },
  });
  pi.registerTool({
    name: "announce",
    label: "Announce",
    description: "Announce something",
    parameters: Type.Object({ what: Type.String() }),
    async execute(_id, params) {
      pi.sendMessage({ customType: "announce", content: "plain announcement: " + params.what, display: true, details: { what: params.what } });
      return { content: [{ type: "text", text: "announced" }], details: {} };
    },
  });
  pi.registerMessageRenderer("announce", (message, options, theme) =>
    new Text(theme.fg("accent", "📣 " + String(message.details.what).toUpperCase() + (options.expanded ? " (expanded)" : "")), 0, 0),
  );
  pi.on("session_start", async (_event, ctx) => ctx.ui.notify("hello from session_start", "info"));
  pi.registerCommand("memo", {
    description: "Post a memo while idle",
    handler: async (args) => {
      pi.sendMessage({ customType: "announce", content: "memo " + args, display: true, details: { what: "memo " + args } });
    },
  });
  pi.registerShortcut("ctrl+l", { description: "steal the model picker", handler: async () => {} });
  pi.registerShortcut("alt+m", {
    description: "say yes",
    handler: async (ctx) => ctx.ui.notify("yes from the shortcut", "info"),
  });
}
`;

function sandbox() {
  const base = tempDir("coil-pi-ui-");
  const project = join(base, "project");
  writeFiles(project, { ".git/HEAD": "ref: refs/heads/main\n" });
  const home = join(base, "home");
  writeFiles(home, { ".pi/agent/extensions/uiext.ts": UIEXT });
  mkdirSync(join(base, "coil-home"), { recursive: true });
  const env = sandboxEnv(base, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url });
  return { base, project, home, env };
}

const toolUse = (name: string, input: Record<string, unknown>, id = "toolu_1") =>
  reply([{ tool: { id, name, input } }], { stop: "tool_use" });

describe("Pi extensions that draw", () => {
  it("TUI (tmux): ctx.ui.custom takes the keys until done, as the editor's stand-in and as an overlay; a message renderer draws sendMessage's message; shortcut notices and /help name the extension", async () => {
    const s = sandbox();
    mock.requests.length = 0;
    mock.push(toolUse("announce", { what: "lunch" }), text("Announced."));
    const t = mockPane(tmux, s, MODEL.join(" "), { cols: 110, rows: 34 });
    // the refused claim on Ctrl+L names the extension and its file, not the plugin that hosts it
    const start = await t.waitFor((sc) => sc.includes("ctrl+l") && sc.includes("already has it"));
    expect(start.replace(/\s+/g, " ")).toContain(
      "the shortcut ctrl+l of Pi extension uiext (~/.pi/agent/extensions/uiext.ts) is not bound",
    );
    // a notice given in session_start, before the screen was drawn, is on it
    await t.waitFor("hello from session_start");

    t.type("/pick");
    t.keys("Enter");
    const picker = await t.waitFor((sc) => sc.includes("custom picker (j/k, Enter)") && sc.includes("> apple <"));
    expect(picker).toContain("  banana");
    t.type("j");
    await t.waitFor("> banana <");
    t.type("j");
    await t.waitFor("> cherry <");
    t.keys("Enter");
    const picked = await t.waitFor((sc) => sc.includes("picked cherry") && !sc.includes("custom picker"));
    expect(picked).not.toContain("> cherry <");
    // the editor has the keys again
    t.type("/peek");
    t.keys("Enter");
    const overlay = await t.waitFor((sc) => sc.includes("[ overlay: press x ]"));
    // top-right: the overlay's line ends at the right edge, on one of the first rows
    const row = overlay.split("\n").findIndex((l) => l.includes("[ overlay: press x ]"));
    expect(row).toBeLessThan(3);
    expect(overlay.split("\n")[row]!.indexOf("[ overlay")).toBeGreaterThan(110 - 30);
    t.type("q"); // not its key: the overlay keeps the keyboard, the editor gets nothing
    t.type("x");
    const closed = await t.waitFor((sc) => sc.includes("overlay closed with x (handle given)"));
    expect(closed).not.toContain("[ overlay: press x ]");
    expect(closed).not.toMatch(/│\s*q/);

    t.type("announce lunch");
    t.keys("Enter");
    const drawn = await t.waitFor((sc) => sc.includes("Announced.") && sc.includes("📣 LUNCH"));
    expect(drawn).not.toContain("plain announcement: lunch");
    t.keys("C-o");
    await t.waitFor("📣 LUNCH (expanded)");
    // sent while idle (from a command): drawn at once, with its renderer
    t.type("/memo tea");
    t.keys("Enter");
    await t.waitFor("📣 MEMO TEA");

    t.type("/help");
    t.keys("Enter");
    const help = await t.waitFor((sc) => sc.includes("say yes"));
    expect(help.replace(/\s+/g, " ")).toContain("say yes · Pi extension uiext (~/.pi/agent/extensions/uiext.ts)");
    t.keys("M-m");
    await t.waitFor("yes from the shortcut");
    expect(mock.rejected()).toEqual([]);
  });

  it("print and JSON modes: custom resolves to undefined and says so; the renderer is not reported, the message keeps its text", async () => {
    const s = sandbox();
    const ran = await coil(s.project, [...MODEL, "-p", "/pick"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout.trim()).toBe("picked undefined");
    expect(ran.stderr).toContain(
      "Pi extension uiext: ctx.ui.custom() draws only in the TUI; without a UI it resolves to undefined (as in Pi's print mode)",
    );
    expect(ran.stderr).not.toContain("registerMessageRenderer");

    mock.push(toolUse("announce", { what: "tea" }), text("Announced tea."));
    const json = await coil(s.project, [...MODEL, "--mode", "json", "announce tea"], s.env);
    expect(json.code, json.stderr).toBe(0);
    const custom = json.stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l))
      .find((e) => e.type === "message_end" && e.message.role === "custom");
    expect(custom.message).toMatchObject({
      customType: "announce",
      content: "plain announcement: tea",
      details: { what: "tea" },
    });
    const doctor = await coil(s.project, ["doctor"], s.env);
    expect(doctor.stdout).toMatch(/uiext \(user, .*uiext\.ts\): tools announce; commands \/pick, \/peek/);
    expect(doctor.stdout).not.toContain("registerMessageRenderer");
    expect(doctor.stdout).not.toContain("ctx.ui.custom");
  });

  it("RPC: custom resolves to undefined (Pi's RPC mode has no custom components either) and says so", async () => {
    const s = sandbox();
    const client = await RpcClient.start({ bin: BIN, cwd: s.project, env: s.env, args: MODEL, timeoutMs: 20_000 });
    try {
      const notes: string[] = [];
      const said: string[] = [];
      client.on("diagnostic", (e: { message: string }) => said.push(e.message));
      client.on("ui_request", (req: { method: string; params: { message?: string } }) => {
        if (req.method === "notify") notes.push(String(req.params.message));
      });
      const picked = new Promise<void>((resolve) =>
        client.on("ui_request", (req: { params: { message?: string } }) => {
          if (req.params.message === "picked undefined") resolve();
        }),
      );
      await client.prompt("/pick");
      await picked;
      expect(notes).toContain("picked undefined");
      // RPC sends coil's warnings as diagnostic events
      expect(said.join("\n")).toContain(
        "Pi extension uiext: ctx.ui.custom() draws only in the TUI; in --mode rpc it resolves to undefined (as in Pi's RPC mode)",
      );
    } finally {
      await client.close();
    }
  });
});
