/**
 * `coil/testing`: the plugin author's test kit. A real `PluginHost` and `Agent` on the scripted provider
 * (the "model" replays the replies you give it and records every request), in a temporary workspace.
 * Offline, no API key, works with any test runner (the scaffolded plugin uses `node --test`).
 *
 *   const myPlugin = await importPlugin(new URL("../index.ts", import.meta.url)); // a .ts plugin, loaded as coil loads it
 *   const kit = createTestKit({ plugins: [myPlugin], replies: [{ toolCalls: [{ name: "my_tool", arguments: {} }] }, { text: "done" }] });
 *   await kit.run("use my tool");
 *   kit.toolResults()[0]  // what the model got back
 *   kit.dispose();
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { loadPlugin } from "../../boot/load.js";
import { useOptionChecks, validateOptions } from "../../boot/options.js";
import { Value } from "typebox/value";
import { coilHome } from "../../boot/paths.js";
import { CommandLine } from "../../lib/command-line.js";
import {
  Agent,
  lastAssistantText,
  textOf,
  type AgentEvent,
  type AgentOptions,
  type Plugin,
  type ProviderRequest,
  type RunResult,
  type ToolResultMessage,
} from "../../api/index.js";
import { PluginHost } from "../../boot/host.js";
import scriptedPlugin, { type ScriptedService } from "../../plugins/provider-scripted/index.js";
import type { ScriptedReply, ScriptStep } from "../../plugins/provider-scripted/script.js";

import type { TestUi } from "./ui.js";

// Hosts built here install synchronously, with any options: TypeBox's value functions are there first.
useOptionChecks(Value);

export type { ScriptedReply, ScriptStep, ScriptedService };
export { createTestUi, renderTool, type TestUi, type TestUiDialog, type TestUiOptions } from "./ui.js";
export { scriptedPlugin };

/** A temporary directory with files in it; `dispose()` deletes it. */
export interface Workspace {
  readonly dir: string;
  path(relative: string): string;
  write(relative: string, text: string): string;
  read(relative: string): string;
  exists(relative: string): boolean;
  dispose(): void;
}

export function createWorkspace(files: Record<string, string> = {}, prefix = "coil-test-"): Workspace {
  return workspaceIn(realpathSync(mkdtempSync(join(tmpdir(), prefix))), files, true);
}

/** A workspace over `dir` with `files` written into it; `dispose()` deletes it only when `owned`. */
function workspaceIn(dir: string, files: Record<string, string>, owned: boolean): Workspace {
  const path = (rel: string) => resolve(dir, rel);
  const ws: Workspace = {
    dir,
    path,
    write(rel, text) {
      mkdirSync(dirname(path(rel)), { recursive: true });
      writeFileSync(path(rel), text);
      return path(rel);
    },
    read: (rel) => readFileSync(path(rel), "utf8"),
    exists: (rel) => existsSync(path(rel)),
    dispose: () => (owned ? rmSync(dir, { recursive: true, force: true }) : undefined),
  };
  for (const [rel, text] of Object.entries(files)) ws.write(rel, text);
  return ws;
}

/**
 * Load a plugin file the way coil does (`.ts` through jiti, no build step; `.js` natively), bound to
 * this coil's kernel. For test runners that cannot import TypeScript themselves (`node --test`).
 */
export async function importPlugin(file: string | URL): Promise<Plugin> {
  const path = resolve(typeof file === "string" ? file : fileURLToPath(file));
  const [plugin] = await loadPlugin(
    { ref: path, kind: "path", key: path, baseDir: dirname(path) },
    { home: coilHome() },
  );
  return plugin!;
}

export interface TestKitOptions {
  /** Plugins under test, installed in order after the scripted provider: a plugin, or `[plugin, options]`. */
  plugins?: (Plugin | [Plugin, unknown])[];
  /** What the "model" replies, one entry per model request (see docs/scripted-provider.md). */
  replies?: ScriptStep[];
  /** Files to create in the workspace. */
  files?: Record<string, string>;
  /** Run in this directory instead of a fresh temporary workspace. */
  cwd?: string;
  /** Agent options (model, system blocks, tool execution ...). */
  agent?: Partial<AgentOptions>;
  /** Options for the scripted provider (chunkSize, contextWindow ...). */
  scripted?: Record<string, unknown>;
  /** Values of plugin flags by long name, as the CLI would parse them: `{ plan: true }`. */
  flags?: Record<string, unknown>;
  /**
   * A `ui` service for the plugins (createTestUi()): served as the TUI's would be, with a `ui_start` event
   * once the plugins are installed. Without it there is no `ui`, as in print mode.
   */
  ui?: TestUi;
}

export interface TestKit {
  readonly host: PluginHost;
  /** The flags and subcommands the plugins registered, and the flag values (`commandLine.values`). */
  readonly commandLine: CommandLine;
  readonly agent: Agent;
  readonly workspace: Workspace;
  /** Every event, in order. */
  readonly events: AgentEvent[];
  /** Every request the "model" received. */
  readonly requests: ProviderRequest[];
  /** Add replies at the end of the script. */
  reply(...steps: ScriptStep[]): void;
  /** Prompt the agent and wait for the run to end. */
  run(prompt: string): Promise<RunResult>;
  /** Tool results in history, in order (optionally only one tool's). */
  toolResults(toolName?: string): ToolResultMessage[];
  /** Text of a tool result, or of the last assistant message when no result is given. */
  text(result?: ToolResultMessage): string;
  diagnostics(): Extract<AgentEvent, { type: "diagnostic" }>[];
  /**
   * Run the handler the first plugin registered for `key` (`ctx.registerShortcut`), with the agent and the
   * kit's `ui`, as the TUI does on that key press. Throws when no plugin registered the key, or the kit has
   * no `ui`. (Conflicts with the TUI's own keys are the TUI's business: see docs/tui.md#keys.)
   */
  pressShortcut(key: string): Promise<void>;
  /** Delete the workspace (when the kit created it). */
  dispose(): void;
}

export function createTestKit(options: TestKitOptions = {}): TestKit {
  // A given cwd is the caller's: files are written into it, and dispose() leaves it.
  const workspace = options.cwd ? workspaceIn(options.cwd, options.files ?? {}, false) : createWorkspace(options.files);
  const ui = options.ui;
  const commandLine = new CommandLine();
  commandLine.values = { ...options.flags };
  const host = new PluginHost({
    cwd: workspace.dir,
    validate: validateOptions,
    ui: ui ? () => ui : undefined,
    declare: commandLine.declarations,
  });
  const events: AgentEvent[] = [];
  host.subscribe("*", (e) => void events.push(e));
  host.install(scriptedPlugin, { chunkSize: 64, ...options.scripted }, { ref: "provider-scripted" });
  for (const item of options.plugins ?? []) {
    const [plugin, opts] = Array.isArray(item) ? item : [item, {}];
    host.install(plugin, opts ?? {}, { ref: plugin.id });
  }
  const scripted = host.services.get("scripted") as ScriptedService;
  scripted.push(...(options.replies ?? []));
  const model = { id: "scripted", provider: "scripted", contextWindow: 200_000, maxOutput: 32_000 };
  const agent = new Agent(host, { provider: "scripted", model, ...options.agent });
  const history = () => agent.state.messages;
  if (ui) host.emit({ type: "ui_start", mode: "interactive" });
  return {
    host,
    commandLine,
    agent,
    workspace,
    events,
    requests: scripted.requests,
    reply: (...steps) => scripted.push(...steps),
    run: (prompt) => agent.prompt(prompt),
    toolResults: (name) =>
      history().filter((m): m is ToolResultMessage => m.role === "toolResult" && (!name || m.toolName === name)),
    text: (result) => (result ? textOf(result) : lastAssistantText(history())),
    diagnostics: () => events.filter((e): e is Extract<AgentEvent, { type: "diagnostic" }> => e.type === "diagnostic"),
    pressShortcut: async (key) => {
      const all = commandLine.shortcuts.list();
      const shortcut = all.find((s) => s.key === key.toLowerCase());
      if (!shortcut)
        throw new Error(
          `pressShortcut('${key}'): no plugin registered that key (registered: ${all.map((s) => s.key).join(", ") || "none"})`,
        );
      if (!ui)
        throw new Error(`pressShortcut('${key}'): the kit has no ui; pass createTestKit({ ui: createTestUi() })`);
      await shortcut.handler({ agent, ui });
    },
    dispose: () => workspace.dispose(),
  };
}
