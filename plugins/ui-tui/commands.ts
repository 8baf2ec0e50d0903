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
} from "../../kernel/index.js";
import { providerDefault } from "../../lib/models.js";
import { subagentRunOf } from "../../lib/subagent-usage.js";
import { coilHome, writeAuthKey } from "../../lib/provider-kit/config.js";
import type { MessageEntry, SessionEntry, SessionService } from "../session-jsonl/api.js";
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
    const tools = m.content.filter((p) => p.type === "toolCall").map((p) => (p as { name: string }).name);
    return `· ${text || (tools.length ? `[${tools.join(", ")}]` : "(empty)")}`;
  }
  const child = subagentRunOf(m);
  if (child)
    return `↳ sub-agent ${child.agent}: ${child.description} (${child.session ? `session ${child.session.id.slice(0, 8)}` : "no session"})`;
  return undefined; // other tool results and custom messages would drown the tree
}

/** The session tree as picker rows, in file order, indented by branch depth. */
export function treeItems(session: SessionService, width = 70): PickItem[] {
  const entries = session.entries();
  const onPath = new Set(session.path().map((e) => e.id));
  const labels = session.labels();
  const firstChild = new Map<string | null, string>();
  for (const e of entries) if (!firstChild.has(e.parentId)) firstChild.set(e.parentId, e.id);
  const depth = new Map<string, number>();
  // Entries in file order: a parent's depth is known before its children's. A later sibling opens a branch, one level deeper.
  const depthOf = (e: SessionEntry): number => {
    const parent = e.parentId ? (depth.get(e.parentId) ?? 0) : 0;
    const d = parent + (firstChild.get(e.parentId) === e.id ? 0 : 1);
    depth.set(e.id, d);
    return d;
  };
  const current = [...session.path()].reverse().find((e) => entryText(e) !== undefined)?.id;
  const items: PickItem[] = [];
  for (const e of entries) {
    const level = depthOf(e);
    const text = entryText(e);
    if (text === undefined) continue;
    const mark = e.id === current ? "◆" : onPath.has(e.id) ? "•" : " ";
    const label = labels.get(e.id);
    items.push({
      value: e.id,
      label: `${"  ".repeat(Math.min(level, 8))}${mark} ${oneLine(text, width - 2 * Math.min(level, 8) - 2)}`,
      description: label ? `[${label}]` : undefined,
    });
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
export function firstRunHelp(agent: Agent): string {
  const keyed = keyedProviders(agent);
  const hints = keyed.slice(0, 2).map((id) => `  ${id}: ${agent.view.providers.get(id)!.setupHint}`);
  return [
    `No model provider is set up yet (${agent.state.provider} has no API key), so nothing can answer a prompt. To set one up:`,
    `· /login <provider> stores a key in ${join(coilHome(), "auth.json")} (mode 0600), as \`coil auth set\` does${keyed.length ? `; providers: ${keyed.join(", ")}` : ""}`,
    "· or set the provider's key variable and start coil again:",
    ...hints,
    "· /demo plays a short scripted demo offline (no key needed): replies from a script, real tool calls",
  ].join("\n");
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
        const items = treeItems(s);
        if (!items.length) return "The session is empty.";
        target = await bridge.app.dialogs.pick("Session tree (◆ current, • active path). Enter: go there", items, {
          selected: s.leafId ?? undefined,
        });
        if (!target) return;
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
      await s.branch(to, { summarize });
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
      const info = s.fork(edit !== undefined ? entry.parentId : entry.id);
      rebuild();
      if (edit !== undefined) bridge.app?.setEditorText(edit);
      return `Forked into ${info.file ?? `session ${info.id} (in memory)`}.`;
    },
    "[entry id]",
  );

  reg("clone", "copy the active branch into a new session and switch to it", () => {
    const info = session().clone();
    rebuild();
    return `Cloned into ${info.file ?? `session ${info.id} (in memory)`}.`;
  });

  reg("new", "start a new session", () => {
    const info = session().newSession();
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
      const info = s.open(ref);
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
    "write the conversation as Markdown (or copy the session file with a .jsonl name)",
    (args, agent) => {
      const s = ctx.services.get("session");
      const id = (s?.id ?? "session").slice(0, 8);
      const name = args.trim() || `coil-${id}.md`;
      const file = isAbsolute(name) ? name : join(ctx.cwd, name);
      try {
        if (file.endsWith(".jsonl")) {
          if (!s?.file) return "This session has no file to copy (in memory, or nothing written yet).";
          copyFileSync(s.file, file);
        } else writeFileSync(file, toMarkdown(agent.state.messages));
      } catch (error) {
        return `Cannot write ${file}: ${messageOf(error)}`;
      }
      return `Exported to ${file}.`;
    },
    "[file]",
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
    "store an API key for a provider ($COIL_HOME/auth.json, mode 0600, as coil auth set does)",
    async (args, agent) => {
      const keyed = keyedProviders(agent);
      if (!bridge.app)
        return `Outside the interactive UI: printf %s "$KEY" | coil auth set <provider>  (providers: ${keyed.join(", ") || "none"})`;
      const id = args.trim() || (await bridge.app.dialogs.select("Store an API key for which provider?", keyed));
      if (!id) return;
      const provider = agent.view.providers.get(id);
      if (!provider)
        return `No provider '${id}' in this preset (providers that take a key: ${keyed.join(", ") || "none"}).`;
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
      const done = `Stored the key for ${id} in ${file} (mode 0600).`;
      // Still on a provider that cannot run (the first start): move to the one just set up, at its default model.
      if (!providerUnusable(agent))
        return agent.state.provider === id ? `${done} Ready: ${id}/${agent.state.model.id}.` : done;
      // The provider's balanced default (or models.yaml's `default:`), as a start without --model picks it.
      const model = providerDefault(provider);
      if (!model || agent.isRunning || !agent.view.commands.has("model")) return done;
      const out = await agent.view.commands.get("model")!.run(`${id}/${model.id}`, agent);
      return `${done} ${typeof out === "string" ? out : ""}`.trim();
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
    return [...cmds, "", ...KEYS_HELP].join("\n");
  });

  reg("quit", "quit coil", () => {
    if (!bridge.app) return "Nothing to quit outside the interactive UI.";
    bridge.app.quit();
  });
}
