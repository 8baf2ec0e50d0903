/**
 * The TUI's own slash commands, registered like any plugin's. Session commands go through the
 * `session` service (docs/sessions.md); pickers need the running TUI, and without it the commands
 * take their target as an argument.
 */
import { writeFileSync, copyFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { messageOf, textOf, type Agent, type AgentMessage, type PluginContext, type SlashResult } from "../../kernel/index.js";
import { subagentRunOf } from "../../lib/subagent-usage.js";
import type { MessageEntry, SessionEntry, SessionService } from "../session-jsonl/api.js";
import type { Bridge, PickItem } from "./types.js";

export function oneLine(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The message an entry holds (entries of unknown types carry none). */
const messageIn = (e: SessionEntry): AgentMessage | undefined => (e.type === "message" ? (e as MessageEntry).message : undefined);
/** The user's message an entry holds, if it holds one. */
const userMessageIn = (e: SessionEntry): AgentMessage | undefined => (messageIn(e)?.role === "user" ? messageIn(e) : undefined);

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
  if (child) return `↳ sub-agent ${child.agent}: ${child.description} (${child.session ? `session ${child.session.id.slice(0, 8)}` : "no session"})`;
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
    const parent = e.parentId ? depth.get(e.parentId) ?? 0 : 0;
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
    items.push({ value: e.id, label: `${"  ".repeat(Math.min(level, 8))}${mark} ${oneLine(text, width - 2 * Math.min(level, 8) - 2)}`, description: label ? `[${label}]` : undefined });
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
    } else if (m.role === "toolResult") out.push(`<details><summary>${m.toolName} result${m.isError ? " (error)" : ""}</summary>`, "", "```", textOf(m as never), "```", "", "</details>", "");
    else if (m.display) out.push(`> ${typeof m.content === "string" ? m.content : ""}`.replace(/\n/g, "\n> "), "");
  }
  return out.join("\n");
}

export const KEYS_HELP = [
  "Enter send · Shift+Enter, Alt+Enter or \\ then Enter: new line · Up/Down history",
  "While running: Enter steers, Alt+Enter queues a follow-up, Esc aborts (queued text returns to the editor)",
  "Ctrl+C clears the editor, twice quits · Ctrl+D on an empty editor quits",
  "Ctrl+O expands tool output · Ctrl+T shows thinking · Shift+Tab cycles the thinking level · Tab completes paths · @ attaches a file",
  "/model picks a model (type to filter; recent ones first) · Ctrl+P switches to the next favourite (or recent) model",
  "!cmd runs a shell command and adds its output to the context · !!cmd runs it without adding it",
  "Esc Esc on an empty editor: rewind files and conversation to an earlier prompt (checkpoints, /rewind)",
];

export function registerCommands(ctx: PluginContext, bridge: Bridge): void {
  const session = (): SessionService => {
    const s = ctx.services.get("session");
    if (!s) throw ctx.error("SERVICE_MISSING", "this needs a session store: add session-jsonl to the preset");
    return s;
  };
  const rebuild = () => bridge.app?.rebuild();
  const reg = (name: string, description: string, run: (args: string, agent: Agent) => Promise<SlashResult> | SlashResult, argumentHint?: string) =>
    ctx.commands.register({ name, description, argumentHint, run });

  reg("tree", "navigate the session tree (optionally leaving a summary of the branch you leave)", async (args) => {
    const s = session();
    let target = args.trim() || undefined;
    if (!target) {
      if (!bridge.app) return treeItems(s, 100).map((i) => `${i.value}  ${i.label}${i.description ? ` ${i.description}` : ""}`).join("\n") || "(the session is empty)";
      const items = treeItems(s);
      if (!items.length) return "The session is empty.";
      target = await bridge.app.dialogs.pick("Session tree (◆ current, • active path). Enter: go there", items, { selected: s.leafId ?? undefined });
      if (!target) return;
    }
    const entry = s.entry(target);
    if (!entry) return `No entry '${target}' in this session.`;
    // Going to a user message means "edit and re-send it": continue from its parent with its text in the editor.
    const edit = userMessageIn(entry) ? textOf(userMessageIn(entry)) : undefined;
    const to = edit !== undefined ? entry.parentId : entry.id;
    let summarize = false;
    if (bridge.app && to !== s.leafId) {
      const how = await bridge.app.dialogs.select("Leave a summary of the branch you are leaving?", ["No summary", "Summarize it"]);
      if (how === undefined) return;
      summarize = how === "Summarize it";
    }
    await s.branch(to, { summarize });
    rebuild();
    if (edit !== undefined) bridge.app?.setEditorText(edit);
    return `Moved to ${to ?? "the start"}${summarize ? " (branch summarized)" : ""}.`;
  }, "[entry id]");

  reg("fork", "start a new session from an earlier user message (its text goes back to the editor)", async (args) => {
    const s = session();
    let target = args.trim() || undefined;
    if (!target) {
      const users = s.path().filter((e) => userMessageIn(e));
      if (!users.length) return "Nothing to fork from yet.";
      if (!bridge.app) return users.map((e) => `${e.id}  ${oneLine(textOf(userMessageIn(e)), 70)}`).join("\n");
      target = await bridge.app.dialogs.pick("Fork from which message?", users.map((e) => ({ value: e.id, label: oneLine(textOf(userMessageIn(e)), 70) })).reverse());
      if (!target) return;
    }
    const entry = s.entry(target);
    if (!entry) return `No entry '${target}' in this session.`;
    const edit = userMessageIn(entry) ? textOf(userMessageIn(entry)) : undefined;
    const info = s.fork(edit !== undefined ? entry.parentId : entry.id);
    rebuild();
    if (edit !== undefined) bridge.app?.setEditorText(edit);
    return `Forked into ${info.file ?? `session ${info.id} (in memory)`}.`;
  }, "[entry id]");

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

  reg("resume", "switch to another session of this directory (picker)", async (args) => {
    const s = session();
    let ref = args.trim() || undefined;
    if (!ref) {
      const list = s.list().filter((x) => x.id !== s.id);
      if (!list.length) return "No other sessions in this directory.";
      const items = list.map((x) => ({ value: x.file, label: oneLine(x.name ?? x.firstMessage ?? "(no messages)", 50), description: `${new Date(x.modified).toLocaleString()} · ${x.messages} msgs` }));
      if (!bridge.app) return list.map((x) => `${x.id.slice(0, 8)}  ${oneLine(x.name ?? x.firstMessage ?? "", 60)}`).join("\n");
      ref = await bridge.app.dialogs.pick("Resume which session?", items);
      if (!ref) return;
    }
    const info = s.open(ref);
    rebuild();
    return `Resumed ${info.file ?? info.id}.`;
  }, "[id or file]");

  reg("session", "show the session file, id, name and totals", (_args, agent) => {
    const s = ctx.services.get("session");
    const msgs = agent.state.messages;
    const lines = [
      `session  ${s ? s.id : "(no session store in this preset)"}`,
      ...(s ? [`file     ${s.file ?? "(in memory)"}`, `name     ${s.name ?? "(none: /name sets one)"}`, `entries  ${s.entries().length}`] : []),
      `messages ${msgs.length} (${msgs.filter((m) => m.role === "user").length} from you)`,
      `model    ${agent.state.provider}/${agent.state.model.id}`,
    ];
    return lines.join("\n");
  });

  reg("name", "name this session (shown in the footer and in coil sessions list)", (args) => {
    const s = session();
    if (!args.trim()) return s.name ? `This session is named '${s.name}'.` : "Usage: /name <name>";
    s.setName(args.trim());
    return `Named '${args.trim()}'.`;
  }, "<name>");

  reg("label", "bookmark the latest message for /tree (no text: remove the label)", (args) => {
    const s = session();
    const target = [...s.path()].reverse().find((e) => e.type === "message")?.id;
    if (!target) return "Nothing to label yet.";
    s.setLabel(target, args.trim() || undefined);
    return args.trim() ? `Labelled ${target} '${args.trim()}'.` : `Removed the label of ${target}.`;
  }, "[label]");

  reg("export", "write the conversation as Markdown (or copy the session file with a .jsonl name)", (args, agent) => {
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
  }, "[file]");

  reg("reload", "reload plugins, skills and templates (restarts coil on this session)", (_args, agent) => {
    if (!bridge.app) return "Plugins, skills and prompt templates load at start-up: run coil again (coil -c continues the latest session).";
    if (agent.isRunning) return "A run is going: wait for it to finish (or press Esc), then /reload.";
    const s = ctx.services.get("session");
    const kept = s?.persistent ? "this session continues" : "this session is in memory only, so the new process starts empty";
    bridge.app.notify(`Reloading plugins, skills and templates: restarting coil (${kept})…`);
    bridge.reload = true;
    const app = bridge.app;
    // let the notice reach the screen before the TUI stops
    setTimeout(() => app.quit(), 60);
  });

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
