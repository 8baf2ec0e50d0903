/**
 * ui-showcase: every call of coil's plugin UI API in one small plugin (docs/plugins.md#the-plugin-ui-api).
 *
 * - at start (`ui_start`): a footer status entry, a widget above the editor, the terminal title;
 * - the `todo_list` tool draws its own call and result (`renderCall`/`renderResult`), compact until Ctrl+O;
 * - `/showcase` (also Alt+S, the command's `shortcut`) toggles a live widget below the editor and a footer
 *   of its own, flips Ctrl+O's state, and puts a draft in the editor;
 * - `/showcase ask` asks through the dialogs (input, select, confirm) and reports with `notify`;
 * - Alt+M (`ctx.registerShortcut`, Pi's name and shape) counts the session's messages into a status entry.
 *
 * In print and JSON modes there is no `ui` service, so every call is skipped (`?.`); over RPC the status,
 * widget lines, title and editor text arrive as events (docs/rpc.md).
 * Run it: coil --plugin ./examples/ui-showcase/plugin.ts --provider scripted --script ./examples/ui-showcase/replies.yaml
 */
import { definePlugin, Type, type UiService } from "coil";
import type { UiComponent, UiTheme } from "coil/ui"; // also types ctx.registerShortcut

const TodoParams = Type.Object({
  title: Type.String({ description: "What the list is for" }),
  items: Type.Array(Type.String(), { description: "The steps" }),
});

export default definePlugin({
  id: "ui-showcase",
  description: "Shows every plugin UI call: status, widgets, footer, title, tool renderers, shortcuts, dialogs",
  setup(ctx) {
    const ui = (): UiService | undefined => ctx.services.get("ui");
    let on = false;
    let toggles = 0;

    ctx.on("ui_start", () => {
      const u = ui();
      const accent = (s: string) => u?.theme?.fg("accent", s) ?? s;
      u?.setStatus?.("showcase", accent("◆ showcase ready"));
      u?.setWidget?.("showcase-tip", [
        u.theme?.fg("dim", "showcase: Alt+S or /showcase toggles; /showcase ask asks") ?? "",
      ]);
      u?.setTitle?.("coil · showcase");
    });

    ctx.registerShortcut("alt+m", {
      description: "showcase: count the session's messages",
      handler: ({ agent, ui: u }) => {
        u.setStatus?.("showcase-count", u.theme?.fg("muted", `◆ ${agent.state.messages.length} messages so far`));
      },
    });

    ctx.tools.register({
      name: "todo_list",
      label: "Todo list",
      description: "Show the user a short list of steps.",
      parameters: TodoParams,
      async execute(args) {
        return {
          content: [{ type: "text", text: args.items.map((item, i) => `${i + 1}. ${item}`).join("\n") }],
          details: { items: args.items },
        };
      },
      renderCall(args, theme: UiTheme) {
        const count = Array.isArray(args.items) ? args.items.length : 0;
        return `${theme.bold(theme.fg("toolTitle", "☐ todo_list"))} ${theme.fg("muted", `${args.title ?? ""} · ${count} items`)}`;
      },
      renderResult(result, { expanded, isPartial }, theme: UiTheme) {
        if (isPartial) return theme.fg("warning", "writing the list…");
        const items = (result.details as { items?: string[] } | undefined)?.items ?? [];
        if (!expanded) return theme.fg("success", `✓ ${items.length} items (Ctrl+O shows them)`);
        return items.map((item, i) => `${theme.fg("accent", `${i + 1}.`)} ${item}`);
      },
    });

    ctx.commands.register({
      name: "showcase",
      description: "toggle the showcase widget and footer; '/showcase ask' asks three questions",
      argumentHint: "[ask]",
      shortcut: "alt+s",
      async run(args) {
        const u = ui();
        if (!u) return "The showcase needs an interactive front end (the TUI, or RPC for the text parts).";
        if (args.trim() === "ask") {
          const name = await u.input("Your name?", "type it, Enter");
          const colour = await u.select("Favourite colour?", ["red", "green", "blue"]);
          const sure = await u.confirm("Sure?", `${name ?? "(none)"} likes ${colour ?? "(none)"}`);
          u.notify(
            `showcase answers: ${name ?? "-"} / ${colour ?? "-"} / ${sure ? "yes" : "no"}`,
            sure ? "info" : "warn",
          );
          return;
        }
        on = !on;
        toggles++;
        if (on) {
          const live = (_tui: unknown, theme: UiTheme): UiComponent => ({
            render: (width) => [theme.fg("accent", `▌ showcase widget · toggled ${toggles}× · ${width} columns`)],
          });
          u.setWidget?.("showcase-live", live, { placement: "belowEditor" });
          u.setFooter?.((_tui, theme) => ({
            render: () => [theme.fg("warning", "showcase footer (Alt+S brings the built-in one back)")],
          }));
        } else {
          u.setWidget?.("showcase-live", undefined);
          u.setFooter?.(undefined);
        }
        u.setStatus?.("showcase", u.theme?.fg("accent", on ? "◆ showcase on" : "◆ showcase off"));
        u.setToolsExpanded?.(on ? true : !(u.getToolsExpanded?.() ?? true));
        const before = u.getEditorText?.() ?? "";
        u.setEditorText?.(`draft from the showcase (the editor had ${before.length} characters)`);
        u.notify(`showcase ${on ? "on" : "off"}`);
      },
    });
  },
});
