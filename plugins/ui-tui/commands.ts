/**
 * The TUI's own slash commands, registered like any plugin's. Session commands go through the
 * `session` service (docs/sessions.md); pickers need the running TUI, and without it the commands
 * take their target as an argument.
 */
import { writeFileSync, copyFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import {
  messageOf,
  textOf,
  type Agent,
  type AgentMessage,
  type PluginContext,
  type SlashResult,
} from "../../api/index.js";
import { guardSession } from "../../lib/front-end.js";
import { providerDefault } from "../../lib/models.js";
import { subagentRunOf } from "../../lib/subagent-usage.js";
import { coilHome, writeAuthKey } from "../../lib/provider-kit/config.js";
import { loginFlows, runLogin } from "../../lib/provider-kit/oauth.js";
import type { MessageEntry, SessionEntry, SessionService } from "../session-jsonl/api.js";
import { readSettings, writeSettings } from "./settings.js";
import { summarizeArgs } from "./summary.js";
import { loadTheme, themeNames } from "./theme.js";
import type { Bridge, PickItem } from "./types.js";

export function oneLine(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The message an entry holds (entries of unknown types carry none). */
const messageIn = (e: SessionEntry): AgentMessage | undefined =>
  e.type === "message" ? (e as MessageEntry).message : undefined;
/** The user's message an entry holds, if it holds one. */
const userMessageIn = (e: SessionEntry): AgentMessage | undefined =>
  messageIn(e)?.role === "user" ? messageIn(e) : undefined;

function entryText(e: SessionEntry): string | undefined {
  if (e.type === "branch_summary") return `[branch summary] ${e.summary ?? ""}`;
  if (e.type === "compaction") return `[compaction] ${e.summary ?? ""}`;
  const m = messageIn(e);
  if (!m) return undefined;
  if (m.role === "user") return `› ${textOf(m)}`;
  if (m.role === "assistant") {
    const text = textOf(m);
    // each call with what it was asked: `[read src/a.ts, bash $ npm test]`
    const tools = m.content
      .filter((p) => p.type === "toolCall")
      .map((p) => {
        const call = p as { name: string; arguments: Record<string, unknown> };
        return `${call.name} ${summarizeArgs(call.name, call.arguments)}`.trim();
      });
    const calls = tools.length ? `[${tools.join(", ")}]` : "";
    return `· ${[text, calls].filter(Boolean).join(" ") || "(empty)"}`;
  }
  const child = subagentRunOf(m);
  if (child)
    return `↳ sub-agent ${child.agent}: ${child.description} (${child.session ? `session ${child.session.id.slice(0, 8)}` : "no session"})`;
  return undefined; // other tool results and custom messages would drown the tree
}

/** A row of the /tree picker: its depth in the drawing and the row it hangs under (for folding). */
export interface TreeItem extends PickItem {
  depth: number;
  parent?: string;
  children: number;
}

/** The entry /tree opens at: the last shown entry on the active path (where you are). */
export function treeCurrent(session: SessionService): string | undefined {
  return [...session.path()].reverse().find((e) => entryText(e) !== undefined)?.id;
}

/**
 * The session tree as picker rows, each child under its parent: a conversation's next message stays at its
 * parent's depth, a later branch from the same point is one level deeper. Entries /tree does not show (tool
 * results, custom entries) are skipped, their children hang under the nearest shown ancestor.
 */
export function treeItems(session: SessionService, width = 70): TreeItem[] {
  const entries = session.entries();
  const byId = new Map(entries.map((e) => [e.id, e]));
  const onPath = new Set(session.path().map((e) => e.id));
  const labels = session.labels();
  const shown = (e: SessionEntry) => entryText(e) !== undefined;
  const shownParent = (e: SessionEntry): string | undefined => {
    let p = e.parentId ? byId.get(e.parentId) : undefined;
    while (p && !shown(p)) p = p.parentId ? byId.get(p.parentId) : undefined;
    return p?.id;
  };
  const kids = new Map<string | undefined, SessionEntry[]>();
  for (const e of entries) {
    if (!shown(e)) continue;
    const parent = shownParent(e);
    kids.set(parent, [...(kids.get(parent) ?? []), e]);
  }
  const current = treeCurrent(session);
  const items: TreeItem[] = [];
  // depth-first, with an explicit stack: a long conversation is a long chain
  const stack: [SessionEntry, number, string | undefined][] = (kids.get(undefined) ?? [])
    .map((root, i): [SessionEntry, number, string | undefined] => [root, i === 0 ? 0 : 1, undefined])
    .reverse();
  while (stack.length) {
    const [e, depth, parent] = stack.pop()!;
    const text = entryText(e)!;
    const mark = e.id === current ? "◆" : onPath.has(e.id) ? "•" : " ";
    const label = labels.get(e.id);
    const indent = Math.min(depth, 8);
    const children = kids.get(e.id) ?? [];
    items.push({
      value: e.id,
      label: `${"  ".repeat(indent)}${mark} ${oneLine(text, width - 2 * indent - 2)}`,
      description: label ? `[${label}]` : undefined,
      depth,
      parent,
      children: children.length,
    });
    // the first child continues the conversation at this depth; later ones are branches, one deeper
    for (let i = children.length - 1; i >= 0; i--) stack.push([children[i]!, depth + (i === 0 ? 0 : 1), e.id]);
  }
  return items;
}

/** History as Markdown (for /export). */
export function toMarkdown(messages: readonly AgentMessage[]): string {
  const out: string[] = ["# coil session", ""];
  for (const m of messages) {
    if (m.role === "user") out.push("## User", "", textOf(m), "");
    else if (m.role === "assistant") {
      out.push("## Assistant", "");
      for (const p of m.content) {
        if (p.type === "text") out.push(p.text, "");
        else if (p.type === "toolCall") out.push(`**${p.name}** \`${JSON.stringify(p.arguments)}\``, "");
      }
    } else if (m.role === "toolResult")
      out.push(
        `<details><summary>${m.toolName} result${m.isError ? " (error)" : ""}</summary>`,
        "",
        "```",
        textOf(m as never),
        "```",
        "",
        "</details>",
        "",
      );
    else if (m.display) out.push(`> ${typeof m.content === "string" ? m.content : ""}`.replace(/\n/g, "\n> "), "");
  }
  return out.join("\n");
}

export const KEYS_HELP = [
  "Enter send · Shift+Enter, Alt+Enter or \\ then Enter: new line · Up/Down history",
  "While running: Enter steers, Alt+Enter queues a follow-up, Esc aborts (queued text returns to the editor)",
  "Ctrl+C clears the editor, twice quits · Ctrl+D on an empty editor quits",
  "Ctrl+O expands tool output · Ctrl+T shows thinking · Tab completes paths · @ attaches a file",
  "Shift+Tab thinking level · Ctrl+P next favourite model · Ctrl+V or a pasted image path: attach an image",
  "!cmd runs a shell command and adds its output to the context · !!cmd runs it without adding it",
  "Esc Esc on an empty editor: rewind files and conversation to an earlier prompt (checkpoints, /rewind)",
];

/** Providers that take an API key stored by `coil auth set` (their setup hint says so). */
/** After a login or a stored key: still on a provider that cannot run (the first start), move to the one just set up. */
async function switchToLogin(agent: Agent, id: string, done: string): Promise<string> {
  const provider = agent.view.providers.get(id);
  if (!providerUnusable(agent))
    return agent.state.provider === id ? `${done} Ready: ${id}/${agent.state.model.id}.` : done;
  // The provider's balanced default (or models.yaml's `default:`), as a start without --model picks it.
  const model = provider && providerDefault(provider);
  if (!model || agent.isRunning || !agent.view.commands.has("model")) return done;
  const out = await agent.view.commands.get("model")!.run(`${id}/${model.id}`, agent);
  return `${done} ${typeof out === "string" ? out : ""}`.trim();
}

export function keyedProviders(agent: Agent): string[] {
  return agent.view.providers
    .values()
    .filter((p) => p.setupHint?.includes(`coil auth set ${p.id}`))
    .map((p) => p.id);
}

/** The provider the agent would talk to cannot run (no key): the TUI opened anyway to help set one up. */
export function providerUnusable(agent: Agent): boolean {
  const p = agent.view.providers.get(agent.state.provider);
  return Boolean(p?.isConfigured && !p.isConfigured());
}

/** What the TUI says when no provider can run: how to add a key, and the offline demo. */
export function firstRunHelp(agent: Agent, logins: readonly { provider: string; title: string }[] = []): string {
  const keyed = keyedProviders(agent);
  const hints = keyed.slice(0, 2).map((id) => `  ${id}: ${agent.view.providers.get(id)!.setupHint}`);
  const plans = logins.filter((l) => agent.view.providers.get(l.provider));
  return [
    `No model provider is set up yet (${agent.state.provider} has no API key), so nothing can answer a prompt. To set one up:`,
    `· /login <provider> stores a key in ${join(coilHome(), "auth.json")} (mode 0600), as \`coil auth set\` does${keyed.length ? `; providers: ${keyed.join(", ")}` : ""}`,
    ...(plans.length
      ? [
          `· or use a subscription you already pay for, no key needed: ${plans.map((l) => `/login ${l.provider} (${l.title})`).join(", ")}`,
        ]
      : []),
    "· or set the provider's key variable and start coil again:",
    ...hints,
    "· /demo plays a short scripted demo offline (no key needed): replies from a script, real tool calls",
  ].join("\n");
}

/** The one line said instead of the whole help once it has been shown (issue 27 item 10). */
export function firstRunReminder(agent: Agent): string {
  return `Not sent: no provider is set up (${agent.state.provider} has no API key). /login <provider> adds a key, /demo plays offline; your text is back in the editor.`;
}

/** What `/demo` plays on the scripted provider: a real tool call between scripted words. */
const DEMO_STEPS = [
  {
    thinking: "A tour, then. I will look at the folder first, with a real tool call.",
    text: "This is coil's offline demo: these words come from a script (the scripted provider), not from a model, but the tool call below really runs. First, what is in this folder:",
    toolCalls: [{ name: "ls", arguments: { path: "." } }],
  },
  {
    text: "That was the `ls` tool, run by coil and shown as the model would see it. With a real model, coil reads, edits and runs code the same way.\n\nNext: `/login <provider>` stores an API key (or set ANTHROPIC_API_KEY / OPENAI_API_KEY and start coil again), `/model` picks a model, `/help` lists the commands and keys.",
  },
];

export function registerCommands(ctx: PluginContext, bridge: Bridge): void {
  const session = (): SessionService => {
    const s = ctx.services.get("session");
    if (!s) throw ctx.error("SERVICE_MISSING", "this needs a session store: add session-jsonl to the preset");
    return s;
  };
  const rebuild = () => bridge.app?.rebuild();
  // A plugin may refuse a session change (Pi extensions' session_before_*), and hears of it after.
  const guard = () => ctx.services.get("session-guard");
  const reg = (
    name: string,
    description: string,
    run: (args: string, agent: Agent) => Promise<SlashResult> | SlashResult,
    argumentHint?: string,
  ) => ctx.commands.register({ name, description, argumentHint, run });

  reg(
    "tree",
    "navigate the session tree (optionally leaving a summary of the branch you leave)",
    async (args) => {
      const s = session();
      let target = args.trim() || undefined;
      if (!target) {
        if (!bridge.app)
          return (
            treeItems(s, 100)
              .map((i) => `${i.value}  ${i.label}${i.description ? ` ${i.description}` : ""}`)
              .join("\n") || "(the session is empty)"
          );
        const items = treeItems(s, 200);
        if (!items.length) return "The session is empty.";
        let selected = treeCurrent(s);
        for (;;) {
          const app = bridge.app;
          if (!app) return;
          const chosen = await app.dialogs.pickTree("Session tree (◆ you are here, • active path)", treeItems(s, 200), {
            selected,
          });
          if (!chosen) return;
          if (typeof chosen === "string") {
            target = chosen;
            break;
          }
          // Alt+L: label the row, then back to the tree at it
          const label = await app.dialogs.input(
            `Label for ${chosen.label} (empty: remove it)`,
            s.labels().get(chosen.label) ?? "",
          );
          if (label !== undefined) s.setLabel(chosen.label, label.trim() || undefined);
          selected = chosen.label;
        }
      }
      const entry = s.entry(target);
      if (!entry) return `No entry '${target}' in this session.`;
      // Going to a user message means "edit and re-send it": continue from its parent with its text in the editor.
      const edit = userMessageIn(entry) ? textOf(userMessageIn(entry)) : undefined;
      const to = edit !== undefined ? entry.parentId : entry.id;
      let summarize = false;
      if (bridge.app && to !== s.leafId) {
        const how = await bridge.app.dialogs.select("Leave a summary of the branch you are leaving?", [
          "No summary",
          "Summarize it",
        ]);
        if (how === undefined) return;
        summarize = how === "Summarize it";
      }
      const change = { kind: "tree", targetId: to, summarize } as const;
      const verdict = await guardSession(guard(), change);
      if (verdict.cancelled) return verdict.cancelled;
      await s.branch(to, verdict.summary ? { summary: verdict.summary } : { summarize });
      await guard()?.after(change, s.file);
      rebuild();
      if (edit !== undefined) bridge.app?.setEditorText(edit);
      return `Moved to ${to ?? "the start"}${summarize ? " (branch summarized)" : ""}.`;
    },
    "[entry id]",
  );

  reg(
    "fork",
    "start a new session from an earlier user message (its text goes back to the editor)",
    async (args) => {
      const s = session();
      let target = args.trim() || undefined;
      if (!target) {
        const users = s.path().filter((e) => userMessageIn(e));
        if (!users.length) return "Nothing to fork from yet.";
        if (!bridge.app) return users.map((e) => `${e.id}  ${oneLine(textOf(userMessageIn(e)), 70)}`).join("\n");
        target = await bridge.app.dialogs.pick(
          "Fork from which message?",
          users.map((e) => ({ value: e.id, label: oneLine(textOf(userMessageIn(e)), 70) })).reverse(),
        );
        if (!target) return;
      }
      const entry = s.entry(target);
      if (!entry) return `No entry '${target}' in this session.`;
      const edit = userMessageIn(entry) ? textOf(userMessageIn(entry)) : undefined;
      const change = { kind: "fork", entryId: entry.id, position: "before" } as const;
      const verdict = await guardSession(guard(), change);
      if (verdict.cancelled) return verdict.cancelled;
      const previous = s.file;
      const info = s.fork(edit !== undefined ? entry.parentId : entry.id);
      await guard()?.after(change, previous);
      rebuild();
      if (edit !== undefined) bridge.app?.setEditorText(edit);
      return `Forked into ${info.file ?? `session ${info.id} (in memory)`}.`;
    },
    "[entry id]",
  );

  reg("clone", "copy the active branch into a new session and switch to it", async () => {
    const s = session();
    const change = { kind: "fork", entryId: s.leafId, position: "at" } as const;
    const verdict = await guardSession(guard(), change);
    if (verdict.cancelled) return verdict.cancelled;
    const previous = s.file;
    const info = s.clone();
    await guard()?.after(change, previous);
    rebuild();
    return `Cloned into ${info.file ?? `session ${info.id} (in memory)`}.`;
  });

  reg("new", "start a new session", async () => {
    const s = session();
    const verdict = await guardSession(guard(), { kind: "new" });
    if (verdict.cancelled) return verdict.cancelled;
    const previous = s.file;
    const info = s.newSession();
    await guard()?.after({ kind: "new" }, previous);
    rebuild();
    return `New session ${info.id}.`;
  });

  reg(
    "resume",
    "switch to another session of this directory (picker)",
    async (args) => {
      const s = session();
      let ref = args.trim() || undefined;
      if (!ref) {
        const list = s.list().filter((x) => x.id !== s.id);
        if (!list.length) return "No other sessions in this directory.";
        const items = list.map((x) => ({
          value: x.file,
          label: oneLine(x.name ?? x.firstMessage ?? "(no messages)", 50),
          description: `${new Date(x.modified).toLocaleString()} · ${x.messages} msgs`,
        }));
        if (!bridge.app)
          return list.map((x) => `${x.id.slice(0, 8)}  ${oneLine(x.name ?? x.firstMessage ?? "", 60)}`).join("\n");
        ref = await bridge.app.dialogs.pick("Resume which session?", items);
        if (!ref) return;
      }
      const change = { kind: "resume", target: ref } as const;
      const verdict = await guardSession(guard(), change);
      if (verdict.cancelled) return verdict.cancelled;
      const previous = s.file;
      const info = s.open(ref);
      await guard()?.after(change, previous);
      rebuild();
      return `Resumed ${info.file ?? info.id}.`;
    },
    "[id or file]",
  );

  reg("session", "show the session file, id, name and totals", (_args, agent) => {
    const s = ctx.services.get("session");
    const msgs = agent.state.messages;
    const lines = [
      `session  ${s ? s.id : "(no session store in this preset)"}`,
      ...(s
        ? [
            `file     ${s.file ?? "(in memory)"}`,
            `name     ${s.name ?? "(none: /name sets one)"}`,
            `entries  ${s.entries().length}`,
          ]
        : []),
      `messages ${msgs.length} (${msgs.filter((m) => m.role === "user").length} from you)`,
      `model    ${agent.state.provider}/${agent.state.model.id}`,
    ];
    return lines.join("\n");
  });

  reg(
    "name",
    "name this session (shown in the footer and in coil sessions list)",
    (args) => {
      const s = session();
      if (!args.trim()) return s.name ? `This session is named '${s.name}'.` : "Usage: /name <name>";
      s.setName(args.trim());
      return `Named '${args.trim()}'.`;
    },
    "<name>",
  );

  reg(
    "label",
    "bookmark the latest message for /tree (no text: remove the label)",
    (args) => {
      const s = session();
      const target = [...s.path()].reverse().find((e) => e.type === "message")?.id;
      if (!target) return "Nothing to label yet.";
      s.setLabel(target, args.trim() || undefined);
      return args.trim() ? `Labelled ${target} '${args.trim()}'.` : `Removed the label of ${target}.`;
    },
    "[label]",
  );

  reg(
    "export",
    "write the conversation as HTML with the Markdown rendered (.md: Markdown, .jsonl: the session file)",
    async (args, agent) => {
      const s = ctx.services.get("session");
      const id = (s?.id ?? "session").slice(0, 8);
      const name = args.trim() || `coil-${id}.html`;
      const file = isAbsolute(name) ? name : join(ctx.cwd, name);
      try {
        if (file.endsWith(".jsonl")) {
          if (!s?.file) return "This session has no file to copy (in memory, or nothing written yet).";
          copyFileSync(s.file, file);
        } else if (file.endsWith(".md")) writeFileSync(file, toMarkdown(agent.state.messages));
        else {
          const { toHtml } = await import("./html.js");
          writeFileSync(
            file,
            await toHtml(agent.state.messages, `coil session ${s?.name ?? id} · ${new Date().toLocaleString()}`),
          );
        }
      } catch (error) {
        return `Cannot write ${file}: ${messageOf(error)}`;
      }
      return `Exported to ${file}.`;
    },
    "[file]",
  );

  reg("copy", "copy the last answer to the clipboard", async () => {
    const app = bridge.app;
    const text = app?.lastAnswer();
    if (!app) return "/copy needs the interactive UI (the clipboard is the terminal's).";
    if (!text) return "No answer to copy yet.";
    const { copyText } = await import("./clipboard.js");
    const how = await copyText(text, (data) => process.stdout.write(data));
    return `Copied the last answer (${text.length} characters) ${how}.`;
  });

  reg(
    "settings",
    "TUI settings: the theme (kept in $COIL_HOME/settings.json)",
    async (args) => {
      const home = coilHome();
      const [key, ...rest] = args.trim().split(/\s+/);
      const current = readSettings(home).theme ?? "dark";
      let value = key === "theme" ? rest.join(" ") : undefined;
      if (key && key !== "theme") return `No setting '${key}'. Settings: theme (${themeNames(home).join(", ")}).`;
      if (!value) {
        if (!bridge.app)
          return `theme: ${current} (themes: ${themeNames(home).join(", ")}). Change it with /settings theme <name>, or --theme.`;
        const setting = await bridge.app.dialogs.select("Settings", [`Theme: ${current}`]);
        if (!setting) return;
        value = await bridge.app.dialogs.pick(
          "Theme",
          themeNames(home).map((n) => ({ value: n, label: n, description: n === current ? "current" : undefined })),
          { selected: current },
        );
        if (!value) return;
      }
      try {
        const name = bridge.app ? bridge.app.useTheme(value) : loadTheme(value, home, ctx.cwd, 0).name;
        const file = writeSettings(home, { theme: value });
        return `Theme ${name}${bridge.app ? "" : " from the next start"} (saved in ${file}).`;
      } catch (error) {
        return messageOf(error);
      }
    },
    "[theme <name>]",
  );

  reg(
    "reload",
    "reload plugins, skills and templates (rebuilds coil in this process, on this session)",
    (_args, agent) => {
      if (!bridge.app || !ctx.services.get("reload"))
        return "Plugins, skills and prompt templates load at start-up: run coil again (coil -c continues the latest session).";
      if (agent.isRunning) return "A run is going: wait for it to finish (or press Esc), then /reload.";
      const s = ctx.services.get("session");
      const kept = s?.persistent
        ? "this session continues"
        : "this session is in memory only, so the rebuilt coil starts empty";
      bridge.app.notify(`Reloading plugins, skills and templates: rebuilding coil (${kept})…`);
      bridge.reload = true;
      const app = bridge.app;
      // let the notice reach the screen before the TUI stops
      setTimeout(() => app.quit(), 60);
    },
  );

  reg(
    "login",
    "log in with a subscription (github-copilot, openai-codex) or store an API key for a provider ($COIL_HOME/auth.json, mode 0600)",
    async (args, agent) => {
      const flows = loginFlows(ctx);
      const keyed = [...flows.keys(), ...keyedProviders(agent)];
      if (!bridge.app)
        return `Outside the interactive UI: coil login <provider> (${[...flows.keys()].join(", ") || "none"}), or printf %s "$KEY" | coil auth set <provider>  (providers: ${keyed.join(", ") || "none"})`;
      const [want, ...rest] = args.trim().split(/\s+/).filter(Boolean);
      const id =
        want || (await bridge.app.dialogs.select("Log in to, or store an API key for, which provider?", keyed));
      if (!id) return;
      const provider = agent.view.providers.get(id);
      if (!provider)
        return `No provider '${id}' in this preset (providers that take a login or a key: ${keyed.join(", ") || "none"}).`;
      const flow = flows.get(id);
      if (flow) {
        // A subscription: the flow's lines (a code to enter, a URL to open) appear as notices; Esc in a question cancels.
        const app = bridge.app;
        const abort = new AbortController();
        let done: string;
        try {
          done = (
            await runLogin(
              flow,
              {
                signal: abort.signal,
                show: (text) => app.notify(text),
                ask: (question, stop) =>
                  app.dialogs.input(question, undefined, stop ? AbortSignal.any([abort.signal, stop]) : abort.signal),
              },
              rest,
              coilHome(),
            )
          ).text;
        } catch (error) {
          const e = error as { detail?: string; hint?: string };
          return `Login to ${flow.title} failed: ${e.detail ?? messageOf(error)}${e.hint ? `; ${e.hint}` : ""}`;
        }
        return switchToLogin(agent, id, done);
      }
      const key = (
        await bridge.app.dialogs.secret(`API key for ${id}`, `stored in ${join(coilHome(), "auth.json")} (mode 0600)`)
      )?.trim();
      if (!key) return "No key stored.";
      if (/\s/.test(key)) return "That has spaces in it, so it is not an API key; nothing stored.";
      let file: string;
      try {
        file = writeAuthKey(coilHome(), id, key);
      } catch (error) {
        return `Cannot store the key: ${messageOf(error)}`;
      }
      return switchToLogin(agent, id, `Stored the key for ${id} in ${file} (mode 0600).`);
    },
    "[provider]",
  );

  reg(
    "demo",
    "try coil offline: the scripted provider plays a short demo with a real tool call",
    async (_args, agent) => {
      const scripted = ctx.services.get("scripted") as { push(...steps: unknown[]): void } | undefined;
      const provider = agent.view.providers.get("scripted");
      const model = provider?.models?.[0];
      if (!scripted || !model) return "The demo needs the scripted provider: add provider-scripted to the preset.";
      if (agent.isRunning) return "A run is going: wait for it to finish (or press Esc), then /demo.";
      scripted.push(...DEMO_STEPS);
      if (agent.state.provider !== provider!.id) {
        if (agent.view.commands.has("model"))
          await agent.view.commands.get("model")!.run(`${provider!.id}/${model.id}`, agent);
        else agent.setModel(provider!.id, model);
      }
      bridge.app?.notify(`Demo on ${provider!.id}/${model.id}; /model switches back once a provider is set up.`);
      return { prompt: "Show me what coil can do in this folder." };
    },
  );

  reg("help", "list commands and keys", (_args, agent) => {
    const cmds = agent.view.commands
      .entries()
      .map(([name, c]) => `/${name}${c.value.argumentHint ? ` ${c.value.argumentHint}` : ""} — ${c.value.description}`)
      .sort();
    const keys = bridge.app?.shortcutHelp() ?? [];
    return [...cmds, "", ...KEYS_HELP, ...(keys.length ? ["", "Plugins' keys:", ...keys] : [])].join("\n");
  });

  reg("quit", "quit coil", () => {
    if (!bridge.app) return "Nothing to quit outside the interactive UI.";
    bridge.app.quit();
  });
}
