/**
 * The sample plugin examples/ui-showcase uses every call of the plugin UI API; here the built coil runs it
 * in tmux and each call is checked on screen (capture-pane, with colours where they matter), and the same
 * plugin is driven without a terminal through the test kit's UI helper.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../boot/paths.js";
import { createTestKit, createTestUi, importPlugin, renderTool } from "../../sdk/testing/index.js";
import { BIN, editorText, hasTmux, useTmux } from "../support/tmux.js";

const ROOT = packageRoot();
const EXAMPLE = join(ROOT, "examples", "ui-showcase");
const tmux = useTmux();

describe.skipIf(!hasTmux)("examples/ui-showcase in the TUI", () => {
  it("status, widgets above and below, title, its own footer, tool renderers collapsed and expanded, both shortcuts, dialogs", async () => {
    const dir = tmux.tempDir("coil-showcase-");
    const t = tmux.start({
      dir,
      cwd: dir,
      cols: 90,
      rows: 32,
      env: { COIL_HOME: join(dir, "home") },
      command: `${process.execPath} ${BIN} --plugin ${join(EXAMPLE, "plugin.ts")} --provider scripted --script ${join(EXAMPLE, "replies.yaml")} --no-session`,
    });
    // at start: the status entry (in the theme's accent), the tip widget above the editor, the title
    const start = await t.waitFor((s) => s.includes("◆ showcase ready") && s.includes("Enter to send"));
    const lines = start.split("\n");
    const tip = lines.findIndex((l) => l.includes("showcase: Alt+S or /showcase toggles"));
    const editorTop = lines.findIndex((l, i) => i > tip && /^─{10,}/.test(l));
    expect(tip).toBeGreaterThan(0);
    expect(editorTop).toBe(tip + 1);
    expect(t.colors()).toMatch(/\x1b\[38;5;81m◆ showcase ready/);
    expect(t.title()).toBe("coil · showcase");
    expect(start).not.toContain("is not bound"); // both of its keys are free

    // the tool draws its own call and a compact result; Ctrl+O shows every item
    t.type("plan the release");
    await t.waitFor((s) => editorText(s) === "plan the release");
    t.keys("Enter");
    const done = await t.waitFor("Press Ctrl+O to see every step.");
    expect(done).toMatch(/● ☐ todo_list release · 3 items/);
    expect(done).toContain("✓ 3 items (Ctrl+O shows them)");
    expect(done).not.toContain("tag the version");
    t.keys("C-o");
    const expanded = await t.waitFor("2. tag the version");
    expect(expanded).toContain("3. publish");
    // Alt+M: the key the plugin registered with ctx.registerShortcut
    t.keys("M-m");
    await t.waitFor("◆ 4 messages so far");

    // Alt+S runs /showcase: a live widget below the editor, the plugin's footer instead of the figures,
    // Ctrl+O's state flipped by the plugin, a draft in the editor, a notification
    t.keys("M-s");
    const on = await t.waitFor((s) => s.includes("showcase footer") && s.includes("▌ showcase widget"));
    const onLines = on.split("\n");
    const rules = onLines.map((l, i) => (/^─{10,}/.test(l) ? i : -1)).filter((i) => i >= 0);
    const widgetAt = onLines.findIndex((l) => l.includes("▌ showcase widget · toggled 1× · 90 columns"));
    expect(widgetAt).toBeGreaterThan(rules.at(-1)!);
    expect(on).not.toMatch(/ctx \d/);
    expect(on).toContain("◆ showcase on");
    expect(on).toContain("showcase on");
    expect(editorText(on)).toBe("draft from the showcase (the editor had 0 characters)");
    expect(on).toContain("2. tag the version");
    // again: the built-in footer and no widget
    t.keys("C-u"); // clear the draft (Ctrl+C twice within 1.5 s would quit)
    await t.waitFor((s) => editorText(s) === "");
    t.keys("M-s");
    const off = await t.waitFor((s) => s.includes("◆ showcase off") && /ctx \d/.test(s));
    expect(off).not.toContain("▌ showcase widget");
    expect(off).not.toContain("showcase footer");

    // the dialogs, answered in the TUI
    t.keys("C-u"); // clear the draft (Ctrl+C twice within 1.5 s would quit)
    await t.waitFor((s) => editorText(s) === "");
    t.type("/showcase ask");
    await t.waitFor((s) => editorText(s) === "/showcase ask");
    t.keys("Enter");
    await t.waitFor("Your name?");
    t.type("Ada");
    t.keys("Enter");
    await t.waitFor("Favourite colour?");
    t.keys("Down", "Down", "Enter");
    await t.waitFor("Sure?");
    t.keys("Enter");
    await t.waitFor("showcase answers: Ada / blue / yes");
  });
});

describe("examples/ui-showcase through the test kit's UI helper", () => {
  it("records the status, widgets, footer, title and dialogs, and renders the tool without a terminal", async () => {
    const plugin = await importPlugin(join(EXAMPLE, "plugin.ts"));
    const ui = createTestUi();
    const kit = createTestKit({
      plugins: [plugin],
      ui,
      replies: [{ toolCalls: [{ name: "todo_list", arguments: { title: "t", items: ["a", "b"] } }] }, { text: "ok" }],
    });
    try {
      expect(ui.statuses.get("showcase")).toBe("◆ showcase ready");
      expect(ui.widgetLines("showcase-tip")).toEqual(["showcase: Alt+S or /showcase toggles; /showcase ask asks"]);
      expect(ui.title).toBe("coil · showcase");
      await kit.run("go");
      const tool = kit.agent.view.tools.get("todo_list")!;
      const [result] = kit.toolResults("todo_list");
      expect(renderTool(tool, { title: "t", items: ["a", "b"] }, result)).toEqual({
        call: ["☐ todo_list t · 2 items"],
        result: ["✓ 2 items (Ctrl+O shows them)"],
      });
      expect(renderTool(tool, { title: "t", items: ["a", "b"] }, result, { expanded: true }).result).toEqual([
        "1. a",
        "2. b",
      ]);
      await kit.pressShortcut("alt+m");
      expect(ui.statuses.get("showcase-count")).toBe("◆ 4 messages so far");
      const showcase = kit.agent.view.commands.get("showcase")!;
      expect(showcase.shortcut).toBe("alt+s");
      await showcase.run("", kit.agent);
      expect(ui.widgetLines("showcase-live", 40)).toEqual(["▌ showcase widget · toggled 1× · 40 columns"]);
      expect(ui.widgets.get("showcase-live")?.placement).toBe("belowEditor");
      expect(ui.footerLines()).toEqual(["showcase footer (Alt+S brings the built-in one back)"]);
      expect(ui.toolsExpanded).toBe(true);
      expect(ui.editorText).toBe("draft from the showcase (the editor had 0 characters)");
      ui.answer("Grace", "green", false);
      await showcase.run("ask", kit.agent);
      expect(ui.dialogs.map((d) => [d.method, d.answer])).toEqual([
        ["input", "Grace"],
        ["select", "green"],
        ["confirm", false],
      ]);
      expect(ui.notifications.at(-1)).toEqual({ message: "showcase answers: Grace / green / no", level: "warn" });
    } finally {
      kit.dispose();
    }
  });
});
