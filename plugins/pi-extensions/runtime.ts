/**
 * Pi's `ExtensionAPI`, mapped onto coil's hooks, services and UI API. One runtime serves every extension of
 * a run; each extension gets its own `pi` object, so what it calls is attributed to it. A call coil has no
 * counterpart for is reported once per extension (at load time, or when it is first made) and listed in
 * `coil doctor`; it never throws into the extension unless Pi's own call would return something coil
 * cannot make up.
 */
import { execFile } from "../../lib/child-process.js";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { resolve as resolvePath } from "node:path";
import { isDeepStrictEqual } from "node:util";
import {
  lastAssistantText,
  textOf,
  type Agent,
  type AgentMessage,
  type CompactRequest,
  type CompactResult,
  type ModelInfo,
  type ModelRequest,
  type PluginContext,
  type SlashCommand,
  type ToolDefinition,
  type ToolResultMessage,
  type UiService,
} from "coil";
import type { SessionChange, UserShellAnswer } from "../../lib/front-end.js";
import { PROJECT_TRUST, type TrustAnswer, type TrustQuestion } from "../../lib/project-trust.js";
import { coilHome, readAuth, storedKey } from "../../lib/provider-kit/config.js";
import type {} from "../../lib/provider-kit/driver.js"; // types the `provider-responses` service
import type {} from "../models/api.js"; // types the `thinking` and `provider-cli` services
import type {} from "../prompt-templates/api.js"; // types the `prompt-templates` service (resources_discover)
import type {} from "../skills/api.js"; // types the `skills` service (resources_discover)
import type { UiMessageRenderer } from "../../lib/ui.js";
import type { SessionService } from "../session-jsonl/api.js";
import type { FoundExtension } from "./discover.js";
import { PiTuiNotReady, piModules } from "./modules.js";
import { localBashOperations, userBashAnswer } from "./shell.js";
import { registerPiProvider, type PiProviderConfig } from "./providers.js";
import { customFor, extensionSource, messageRenderer } from "./ui.js";

type Handler = (event: Record<string, unknown>, ctx: unknown) => unknown;

interface LoadedExtension {
  found: FoundExtension;
  /** `call: why`, in the order first seen. */
  unsupported: Map<string, string>;
  error?: string;
  /** Imported again when a run starts (pi-tui used while loading, top-level await): registers only then. */
  deferred?: boolean;
  tools: string[];
  commands: string[];
  flags: string[];
  providers: string[];
  /** Its `pi.events` listeners, taken off the bus when it is loaded again. */
  listeners: [name: string, fn: (data: unknown) => void][];
}

/** Pi's events and how coil delivers them (everything else an extension subscribes to is reported). */
const EVENTS = new Set([
  "session_start",
  "session_shutdown",
  "before_agent_start",
  "context",
  "input",
  "turn_start",
  "turn_end",
  "tool_call",
  "tool_result",
  "tool_execution_start",
  "tool_execution_update",
  "tool_execution_end",
  "message_start",
  "message_update",
  "message_end",
  "agent_start",
  "agent_end",
  "session_compact",
  "session_before_compact",
  "model_select",
  "thinking_level_select",
  "before_provider_request",
  "session_before_switch",
  "session_before_fork",
  "session_before_tree",
  "session_tree",
  "resources_discover",
  "after_provider_response",
  "user_bash",
  "project_trust",
]);

/** The fields of before_provider_request's payload that map onto coil's request. */
const PAYLOAD_KEYS = new Set([
  "model",
  "system",
  "messages",
  "tools",
  "temperature",
  "maxTokens",
  "max_tokens",
  "thinking",
]);

/** A coil model as Pi's `Model` reads (`maxTokens` for coil's `maxOutput`). */
const piModel = (m: ModelInfo) => ({ ...m, maxTokens: m.maxOutput });

/** The command ctx's call for each session change. */
const CHANGE_CALL = { new: "newSession", resume: "switchSession", fork: "fork", tree: "navigateTree" } as const;

const THINKING = new Set(["off", "minimal", "low", "medium", "high", "xhigh"]);

const PI_LEVEL: Record<string, "info" | "warn" | "error"> = { info: "info", warning: "warn", error: "error" };

/** coil's front-end modes as Pi's `ctx.mode` names them (`text` and any other: `"print"`). */
const PI_MODE: Record<string, "tui" | "rpc" | "json"> = { interactive: "tui", rpc: "rpc", json: "json" };

type Jiti = ((id: string) => unknown) & { import(id: string): Promise<unknown> };

export class PiRuntime {
  readonly extensions: LoadedExtension[] = [];
  private readonly handlers = new Map<string, { ext: LoadedExtension; fn: Handler }[]>();
  private readonly lateTools: ToolDefinition[] = [];
  /** The tools extensions registered in setup, by name, so that registering one again replaces it. */
  private readonly setupTools = new Map<string, { ext: LoadedExtension; tool: ToolDefinition }>();
  private readonly setupCommands = new Map<string, { ext: LoadedExtension; command: SlashCommand }>();
  private readonly lateCommands: SlashCommand[] = [];
  private readonly flagDefaults = new Map<string, unknown>();
  /** The keys of providers extensions registered (pi.registerProvider), for ctx.modelRegistry. */
  private readonly providerKeys = new Map<string, () => string | undefined>();
  private readonly verdicts = new Map<string, { reason: string; ext: string }>();
  private readonly bus = new Map<string, Set<(data: unknown) => void>>();
  private readonly pendingUi: ((ui: UiService) => void)[] = [];
  private readonly deferred: LoadedExtension[] = [];
  private readonly waiting: Promise<unknown>[] = [];
  private open = true;
  private agent: Agent | undefined;
  private mode = "text";
  private uiStarted = false;
  /** While extensions are loaded again for a new session (reload). */
  private reloading = false;
  /** The handlers of the shortcuts extensions registered in setup, by extension file and key (reload replaces them). */
  private readonly shortcutHandlers = new Map<string, (ctx: unknown) => unknown>();
  /** Set by agent_end until the next agent_start: the run is finishing and takes no more steering. */
  private runEnded = false;
  private systemPrompt = "";
  private runMessages: AgentMessage[] = [];
  private runSystem: string | undefined;
  /** `pi.setActiveTools`: the tools the model is offered (undefined: all). */
  private activeTools: Set<string> | undefined;
  /** The model and thinking level the last request used, for model_select / thinking_level_select. */
  private lastModel: ModelInfo | undefined;
  private lastThinking: string | undefined;
  /** Set while an extension's compaction is applied, so session_compact says fromExtension. */
  private compactionFromExtension = false;
  /** The leaf a /tree move leaves, for session_tree. */
  private treeFrom: string | null | undefined;
  /** While a command handler runs: its notifications (text output without a UI) and the prompt it sends. */
  private command: { notes: string[]; prompts: AgentMessage[] } | undefined;
  private readonly modules: ReturnType<typeof piModules>;
  private jiti: Jiti | undefined;
  private tuiLoad: Promise<void> | undefined;
  private typeboxLoad: Promise<void> | undefined;

  constructor(private readonly ctx: PluginContext) {
    let current: LoadedExtension | undefined;
    this.modules = piModules(
      () => (call, why) => current && this.report(current, call, why),
      localBashOperations(() => ctx.services.get("operations")),
      // TypeBox's compiler or value functions used while an extension loads (before the runtime starts and binds
      // coil's copy): the installed package, through jiti, which loads it synchronously.
      (specifier) => {
        this.jiti ??= this.createJiti();
        return this.jiti(createRequire(import.meta.url).resolve(specifier)) as Record<string, unknown>;
      },
    );
    this.setCurrent = (ext) => {
      current = ext;
    };
  }

  private readonly setCurrent: (ext: LoadedExtension | undefined) => void;

  // ---- loading ----

  /** Load every extension found (in setup): their factories register synchronously what they can. */
  load(found: readonly FoundExtension[]): void {
    for (const f of found) {
      const ext: LoadedExtension = {
        found: f,
        unsupported: new Map(),
        tools: [],
        commands: [],
        flags: [],
        providers: [],
        listeners: [],
      };
      this.extensions.push(ext);
      this.run(ext);
    }
    // before tap()'s relays, so that an agent_end handler already sees the run as ending
    this.ctx.on("agent_start", () => {
      this.runEnded = false;
    });
    this.ctx.on("agent_end", () => {
      this.runEnded = true;
    });
    this.tap();
    this.ctx.services.provide("input", { filter: (text, source) => this.filterInput(text, source) });
    this.ctx.services.provide("provider-responses", {
      seen: async (response) => {
        if (!this.handlers.get("after_provider_response")?.length) return;
        await this.emit("after_provider_response", { status: response.status, headers: response.headers });
      },
    });
    this.ctx.services.provide("user-shell", { intercept: (command, o) => this.userBash(command, o) });
    this.ctx.services.provide(PROJECT_TRUST, { decide: (question) => this.projectTrust(question) });
    this.ctx.services.provide("session-guard", {
      before: (change) => this.beforeSessionChange(change),
      after: (change, previous) => this.afterSessionChange(change, previous),
    });
  }

  /** TypeBox's compiler and value functions, for extensions: bound before any extension code runs after setup. */
  private loadTypebox(): Promise<void> {
    this.typeboxLoad ??= Promise.all([import("typebox/compile"), import("typebox/value")]).then(([c, v]) =>
      this.modules.bindTypebox(c as unknown as Record<string, unknown>, v as unknown as Record<string, unknown>),
    );
    return this.typeboxLoad;
  }

  private loadTui(): Promise<void> {
    this.tuiLoad ??= import("@mariozechner/pi-tui").then(
      (m) => this.modules.bindTui(m as unknown as Record<string, unknown>),
      () => undefined,
    );
    return this.tuiLoad;
  }

  /** Import it synchronously (in setup) and call its factory; what cannot load so is loaded again in onStart. */
  private run(ext: LoadedExtension): void {
    this.setCurrent(ext);
    let mod: unknown;
    try {
      this.jiti ??= this.createJiti();
      mod = this.jiti(ext.found.file);
    } catch (error) {
      // pi-tui used while it loads, or what jiti's synchronous mode cannot run (top-level await): import it
      // again, asynchronously, once coil's pi-tui is there (onStart).
      this.deferred.push(ext);
      ext.deferred = true;
      if (error instanceof PiTuiNotReady || (error as { cause?: unknown })?.cause instanceof PiTuiNotReady)
        void this.loadTui();
      this.setCurrent(undefined);
      return;
    }
    try {
      this.invoke(ext, mod);
    } finally {
      this.setCurrent(undefined);
    }
  }

  private async runLate(ext: LoadedExtension): Promise<void> {
    let mod: unknown;
    try {
      this.jiti ??= this.createJiti();
      mod = await this.jiti.import(ext.found.file);
    } catch (error) {
      this.fail(ext, `cannot load: ${msg(error)}`);
      return;
    }
    this.setCurrent(ext);
    try {
      this.invoke(ext, mod);
    } finally {
      this.setCurrent(undefined);
    }
  }

  private invoke(ext: LoadedExtension, loaded: unknown): void {
    const mod = loaded as { default?: unknown } | ((pi: unknown) => unknown) | undefined;
    const factory = typeof mod === "function" ? mod : typeof mod?.default === "function" ? mod.default : undefined;
    if (typeof factory !== "function") {
      this.fail(ext, "does not default-export a function (export default function (pi: ExtensionAPI) { ... })");
      return;
    }
    try {
      const result = (factory as (pi: unknown) => unknown)(this.api(ext));
      if (result && typeof (result as Promise<unknown>).then === "function")
        this.waiting.push(
          (result as Promise<unknown>).catch((error) => this.fail(ext, `its factory failed: ${msg(error)}`)),
        );
    } catch (error) {
      this.fail(ext, `its factory failed: ${msg(error)}`);
    }
  }

  private createJiti(): Jiti {
    const { createJiti } = createRequire(import.meta.url)("jiti") as {
      createJiti(from: string, options: Record<string, unknown>): Jiti;
    };
    return createJiti(import.meta.url, {
      moduleCache: false,
      interopDefault: true,
      virtualModules: this.modules.modules,
    });
  }

  private fail(ext: LoadedExtension, why: string): void {
    ext.error = why;
    this.ctx.log.error(`Pi extension ${ext.found.name} (${ext.found.file}) ${why}; coil goes on without it`);
  }

  /** Report a call coil cannot map, once per extension and call. */
  report(ext: LoadedExtension, call: string, why: string): void {
    if (ext.unsupported.has(call)) return;
    ext.unsupported.set(call, why);
    this.ctx.log.warn(
      `Pi extension ${ext.found.name}: ${call} is not supported in coil (${why}); the extension goes on without it`,
    );
  }

  /** Once the agent exists: async factories and deferred loads finish, then session_start. */
  async start(agent: Agent, mode: string): Promise<void> {
    this.agent = agent;
    this.mode = mode;
    this.open = false;
    await this.loadTypebox();
    if (this.deferred.length) {
      await this.loadTui();
      for (const ext of this.deferred.splice(0)) await this.runLate(ext);
    }
    await Promise.all(this.waiting.splice(0));
    this.syncLate();
    if (this.handlers.has("session_start") || this.extensions.length) void this.loadTui();
    await this.emit("session_start", { reason: "startup" });
    await this.discoverResources();
  }

  /**
   * project_trust, asked by the command line while the project is undecided (its host was assembled without
   * trust, so only your extensions and `-e`'s are loaded). The first "yes" or "no" decides; "undecided" (or
   * nothing) passes. Its ctx is Pi's trust context: cwd, mode, hasUI and the terminal's questions.
   */
  private async projectTrust(question: TrustQuestion): Promise<TrustAnswer | undefined> {
    await this.loadTypebox(); // asked before start
    for (const { ext, fn } of this.handlers.get("project_trust") ?? []) {
      const ctx = {
        cwd: question.dir,
        mode: question.mode === "print" ? "print" : "interactive",
        hasUI: question.hasUI,
        ui: question.ui,
      };
      let answer: { trusted?: unknown; remember?: unknown } | undefined;
      try {
        answer = (await fn({ type: "project_trust", cwd: question.dir }, ctx)) as typeof answer;
      } catch (error) {
        this.ctx.log.error(`Pi extension ${ext.found.name}: its project_trust handler failed: ${msg(error)}`);
        continue;
      }
      const trusted = answer?.trusted;
      if (trusted === "yes" || trusted === "no")
        return {
          trusted: trusted === "yes",
          remember: answer?.remember === true,
          by: `Pi extension ${ext.found.name}`,
        };
      if (trusted !== "undecided")
        this.ctx.log.warn(
          `Pi extension ${ext.found.name}: project_trust returned ${JSON.stringify(answer)}; it must return { trusted: "yes" | "no" | "undecided" }, so it did not decide`,
        );
    }
    return undefined;
  }

  /** user_bash (the TUI's `!cmd`): the first handler that answers decides; a bad answer runs nothing. */
  private async userBash(command: string, o: { excludeFromContext: boolean; cwd: string }): Promise<UserShellAnswer> {
    for (const { ext, fn } of this.handlers.get("user_bash") ?? []) {
      const by = `Pi extension ${ext.found.name}`;
      try {
        const answer = userBashAnswer(by, await fn({ type: "user_bash", command, ...o }, this.context(ext)));
        if (answer) return answer;
      } catch (error) {
        const why = `${by}: its user_bash handler failed: ${msg(error)}`;
        this.ctx.log.error(why);
        return { by, result: { output: `${why}; the command was not run`, exitCode: 1, cancelled: true } };
      }
    }
    return undefined;
  }

  /**
   * resources_discover, after each session_start as in Pi: the skill and prompt-template paths each extension
   * returns join coil's skills and prompt templates (searched after every other place; relative paths from the
   * working directory). Themes do not map: coil's TUI has one theme.
   */
  private async discoverResources(): Promise<void> {
    const found = new Map<LoadedExtension, { skills: string[]; prompts: string[] }>();
    const list = (value: unknown) =>
      Array.isArray(value)
        ? value
            .filter((p): p is string => typeof p === "string" && p.trim() !== "")
            .map((p) => resolvePath(this.ctx.cwd, p.trim().replace(/^~(?=$|\/)/, process.env.HOME || homedir())))
        : [];
    for (const { ext, value } of await this.emit("resources_discover", { cwd: this.ctx.cwd, reason: "startup" })) {
      const result = value as { skillPaths?: unknown; promptPaths?: unknown; themePaths?: unknown } | undefined;
      if (!result || typeof result !== "object") continue;
      const into = found.get(ext) ?? { skills: [], prompts: [] };
      into.skills.push(...list(result.skillPaths));
      into.prompts.push(...list(result.promptPaths));
      found.set(ext, into);
      if (list(result.themePaths).length)
        this.report(
          ext,
          "themePaths from resources_discover",
          "coil's TUI has one theme; the theme files are not loaded",
        );
    }
    const skills = this.ctx.services.get("skills");
    const templates = this.ctx.services.get("prompt-templates");
    for (const [ext, { skills: s, prompts: p }] of found) {
      const by = `Pi extension ${ext.found.name}`;
      if (s.length && !skills)
        this.report(ext, "skillPaths from resources_discover", "this preset has no skills plugin");
      else if (s.length) skills!.addPlaces(by, s);
      if (p.length && !templates)
        this.report(ext, "promptPaths from resources_discover", "this preset has no prompt-templates plugin");
      else if (p.length) templates!.addPlaces(by, p);
    }
  }

  async stop(): Promise<void> {
    await this.emit("session_shutdown", { reason: "quit" });
  }

  uiStart(): void {
    this.uiStarted = true;
    const ui = this.ui();
    if (ui) for (const fn of this.pendingUi.splice(0)) fn(ui);
  }

  private syncLate(): void {
    if (this.open) return;
    if (this.lateTools.length) this.ctx.tools.sync(this.lateTools);
    if (this.lateCommands.length) this.ctx.commands.sync(this.lateCommands);
  }

  // ---- events ----

  /** Every handler of `type`, in order; what each returned, with its extension (a handler that threw is reported and left out). */
  private async emit(
    type: string,
    event: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<{ ext: LoadedExtension; value: unknown }[]> {
    const out: { ext: LoadedExtension; value: unknown }[] = [];
    for (const { ext, fn } of this.handlers.get(type) ?? []) {
      try {
        out.push({ ext, value: await fn({ type, ...event }, this.context(ext, signal)) });
      } catch (error) {
        this.ctx.log.error(`Pi extension ${ext.found.name}: its ${type} handler failed: ${msg(error)}`);
      }
    }
    return out;
  }

  private tap(): void {
    const ctx = this.ctx;
    const has = (t: string) => (this.handlers.get(t)?.length ?? 0) > 0;
    // tool_call: the handlers run once, in the rewrite step, on a copy of the arguments they may change
    // (Pi's mutable event.input); a block they return is the gate's verdict on the final arguments.
    ctx.tap(
      "tool_call",
      async (info) => {
        if (!has("tool_call")) return undefined;
        const input = structuredClone(info.args) as Record<string, unknown>;
        for (const { ext, fn } of this.handlers.get("tool_call") ?? []) {
          let verdict: { block?: boolean; reason?: string } | undefined;
          try {
            verdict = (await fn(
              { type: "tool_call", toolName: info.call.name, toolCallId: info.call.id, input },
              this.context(ext, info.signal),
            )) as typeof verdict;
          } catch (error) {
            verdict = {
              block: true,
              reason: `the tool_call handler of Pi extension ${ext.found.name} failed: ${msg(error)}`,
            };
          }
          if (verdict?.block) {
            this.verdicts.set(info.call.id, { reason: verdict.reason ?? "blocked", ext: ext.found.name });
            break;
          }
        }
        return isDeepStrictEqual(input, info.args) ? undefined : { args: input };
      },
      { step: "rewrite" },
    );
    ctx.tap("tool_call", (info) => {
      const verdict = this.verdicts.get(info.call.id);
      if (!verdict) {
        // pi.setActiveTools: a tool the model is no longer offered does not run either.
        if (this.activeTools && info.agent.depth === 0 && !this.activeTools.has(info.call.name))
          return {
            block: true,
            reason: `${info.call.name} is not an active tool (a Pi extension's pi.setActiveTools left it out)`,
          };
        return undefined;
      }
      this.verdicts.delete(info.call.id);
      return { block: true, reason: `${verdict.reason} (Pi extension ${verdict.ext})` };
    });
    ctx.tap("tool_result", async (result, info) => {
      if (!has("tool_result")) return undefined;
      let current: ToolResultMessage = result;
      for (const { ext, fn } of this.handlers.get("tool_result") ?? []) {
        try {
          const patch = (await fn(
            {
              type: "tool_result",
              toolName: info.call.name,
              toolCallId: info.call.id,
              input: info.args,
              content: current.content,
              details: current.details,
              isError: current.isError,
            },
            this.context(ext, info.signal),
          )) as Partial<Pick<ToolResultMessage, "content" | "details" | "isError">> | undefined;
          if (patch && typeof patch === "object") {
            current = {
              ...current,
              ...(patch.content ? { content: patch.content } : {}),
              ...("details" in patch ? { details: patch.details } : {}),
              ...(typeof patch.isError === "boolean" ? { isError: patch.isError } : {}),
            };
          }
        } catch (error) {
          ctx.log.error(`Pi extension ${ext.found.name}: its tool_result handler failed: ${msg(error)}`);
        }
      }
      return current === result ? undefined : current;
    });
    // session_before_compact: before coil's compaction strategy (a cancel or a supplied summary ends there).
    if (has("session_before_compact")) ctx.tap("compact", (request) => this.beforeCompact(request), { stage: "EARLY" });
    ctx.tap("before_request", async (request, turn) => {
      let messages = request.messages;
      let system = request.system;
      let tools = request.tools;
      let options = request.options;
      this.systemPrompt = system.map((b) => b.text).join("\n\n");
      if (turn.agent.depth === 0) await this.selections(request);
      if (turn.turn === 0 && turn.attempt === 0) {
        this.runMessages = [];
        this.runSystem = undefined;
        const last = [...messages].reverse().find((m) => m.role === "user");
        if (has("before_agent_start")) {
          let prompt = this.systemPrompt;
          for (const { ext, fn } of this.handlers.get("before_agent_start") ?? []) {
            try {
              const r = (await fn(
                { type: "before_agent_start", prompt: last ? textOf(last) : "", images: [], systemPrompt: prompt },
                this.context(ext, turn.signal),
              )) as { message?: { customType?: string; content?: unknown }; systemPrompt?: string } | undefined;
              if (typeof r?.systemPrompt === "string") prompt = r.systemPrompt;
              if (r?.message?.content !== undefined) {
                const content = r.message.content as string;
                this.runMessages.push({ role: "user", content, timestamp: Date.now() } as AgentMessage);
              }
            } catch (error) {
              ctx.log.error(`Pi extension ${ext.found.name}: its before_agent_start handler failed: ${msg(error)}`);
            }
          }
          if (prompt !== this.systemPrompt) this.runSystem = prompt;
        }
      }
      if (this.runSystem !== undefined) system = [{ id: "pi-extensions", text: this.runSystem }];
      if (this.runMessages.length) messages = [...messages, ...this.runMessages];
      if (this.activeTools) {
        const active = this.activeTools;
        tools = tools.filter((t) => active.has(t.name));
      }
      if (has("context")) {
        let copy = structuredClone(messages) as AgentMessage[];
        for (const { value } of await this.emit("context", { messages: copy }, turn.signal)) {
          const res = value as { messages?: AgentMessage[] } | undefined;
          if (Array.isArray(res?.messages)) copy = res.messages;
        }
        messages = copy;
      }
      if (has("before_provider_request")) {
        const changed = await this.providerRequest({ ...request, messages, system, tools, options }, turn.signal);
        messages = changed.messages;
        system = changed.system;
        tools = changed.tools;
        options = changed.options;
      }
      if (
        messages === request.messages &&
        system === request.system &&
        tools === request.tools &&
        options === request.options
      )
        return undefined;
      return { ...request, messages, system, tools, options };
    });
    ctx.tap("turn_end", async (record) => {
      if (!has("turn_end")) return;
      await this.emit("turn_end", { turnIndex: record.turn, message: record.message, toolResults: record.toolResults });
    });
    const relay = (coilType: string, map: (e: Record<string, unknown>) => Record<string, unknown>, piType = coilType) =>
      ctx.on(coilType as "agent_start", (e) => {
        if (has(piType)) void this.emit(piType, map(e as unknown as Record<string, unknown>));
      });
    relay("agent_start", () => ({}));
    relay("agent_end", (e) => ({ messages: e.messages }));
    relay("turn_start", (e) => ({ turnIndex: e.turn, timestamp: Date.now() }));
    relay("message_start", (e) => ({ message: e.message }));
    relay("message_update", (e) => ({ message: e.message, assistantMessageEvent: e.event }));
    relay("message_end", (e) => ({ message: e.message }));
    relay("tool_execution_start", (e) => ({ toolCallId: e.toolCallId, toolName: e.toolName, args: e.args }));
    relay("tool_execution_update", (e) => ({
      toolCallId: e.toolCallId,
      toolName: e.toolName,
      partialResult: e.partial,
    }));
    relay("tool_execution_end", (e) => {
      this.verdicts.delete(e.toolCallId as string);
      const result = e.result as ToolResultMessage;
      return { toolCallId: e.toolCallId, toolName: e.toolName, result, isError: result?.isError === true };
    });
    relay(
      "compaction",
      (e) => {
        const fromExtension = this.compactionFromExtension;
        this.compactionFromExtension = false;
        const entry = [...(this.session()?.path() ?? [])].reverse().find((x) => x.type === "compaction");
        return { reason: e.reason, tokensBefore: e.tokensBefore, compactionEntry: entry, fromExtension };
      },
      "session_compact",
    );
  }

  /** model_select and thinking_level_select: coil notices a change when the next request goes out. */
  private async selections(request: ModelRequest): Promise<void> {
    const model = request.model;
    const previous = this.lastModel;
    this.lastModel = model;
    if (previous && (previous.provider !== model.provider || previous.id !== model.id))
      await this.emit("model_select", { model: piModel(model), previousModel: piModel(previous), source: "set" });
    const level = typeof request.options.thinking === "string" ? request.options.thinking : "off";
    const before = this.lastThinking;
    this.lastThinking = level;
    if (before !== undefined && before !== level)
      await this.emit("thinking_level_select", { level, previousLevel: before });
  }

  /**
   * before_provider_request, on coil's provider-neutral request (not the provider's wire JSON, which only the
   * provider plugin builds): `{ model, system, messages, tools, temperature, maxTokens, thinking }`. A handler
   * that returns an object replaces it for the next handler and the request; keys with no counterpart are
   * reported.
   */
  private async providerRequest(request: ModelRequest, signal: AbortSignal): Promise<ModelRequest> {
    const { model, system, messages, tools, options } = request;
    let payload: Record<string, unknown> = structuredClone({
      ...options,
      model: `${model.provider}/${model.id}`,
      system: system.map((b) => b.text).join("\n\n"),
      messages,
      tools: tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    });
    const original = structuredClone(payload);
    for (const { ext, fn } of this.handlers.get("before_provider_request") ?? []) {
      try {
        const r = await fn(
          { type: "before_provider_request", payload: structuredClone(payload) },
          this.context(ext, signal),
        );
        if (r && typeof r === "object" && !Array.isArray(r)) {
          payload = r as Record<string, unknown>;
          for (const key of Object.keys(payload))
            if (!PAYLOAD_KEYS.has(key) && !isDeepStrictEqual(payload[key], original[key]))
              this.report(
                ext,
                `before_provider_request payload key "${key}"`,
                "coil's request has no such field (it is provider-neutral: model, system, messages, tools, temperature, maxTokens, thinking)",
              );
        }
      } catch (error) {
        this.ctx.log.error(`Pi extension ${ext.found.name}: its before_provider_request handler failed: ${msg(error)}`);
      }
    }
    if (isDeepStrictEqual(payload, original)) return request;
    const next = { ...request };
    if (!isDeepStrictEqual(payload.system, original.system))
      next.system =
        typeof payload.system === "string" && payload.system ? [{ id: "pi-extensions", text: payload.system }] : [];
    if (Array.isArray(payload.messages) && !isDeepStrictEqual(payload.messages, original.messages))
      next.messages = payload.messages as AgentMessage[];
    if (Array.isArray(payload.tools) && !isDeepStrictEqual(payload.tools, original.tools)) {
      const byName = new Map(tools.map((t) => [t.name, t]));
      next.tools = (payload.tools as { name?: string; description?: string; parameters?: unknown }[])
        .filter((t) => typeof t?.name === "string" && (byName.has(t.name) || t.parameters))
        .map((t) => ({ ...byName.get(t.name!), ...t }) as ModelRequest["tools"][number]);
    }
    const knobs: Record<string, unknown> = {};
    for (const key of ["temperature", "maxTokens", "thinking"])
      if (!isDeepStrictEqual(payload[key], original[key])) knobs[key] = payload[key];
    if (payload.max_tokens !== undefined && payload.max_tokens !== original.max_tokens)
      knobs.maxTokens = payload.max_tokens;
    if (Object.keys(knobs).length) next.options = { ...options, ...knobs };
    return next;
  }

  /**
   * session_before_compact, as a `compact` strategy that runs before coil's: `{ cancel: true }` keeps the
   * context as it is; `{ compaction: { summary, firstKeptEntryId } }` is the compaction (a summary message,
   * then the messages from that entry on), recorded in the session like coil's own.
   */
  private async beforeCompact(request: CompactRequest): Promise<CompactResult | undefined> {
    if (request.agent.depth > 0 || !(this.handlers.get("session_before_compact")?.length ?? 0)) return undefined;
    const s = this.session();
    const messages = request.messages;
    // Pi's preparation: coil's strategy plans its own cut, so the one offered here keeps the newest prompt's turn.
    let keepFrom = messages.length;
    for (let i = messages.length - 1; i > 0; i--) {
      if (messages[i]!.role === "user" && s?.entryIdOf(messages[i]!)) {
        keepFrom = i;
        break;
      }
    }
    const firstKeptEntryId = keepFrom < messages.length ? s?.entryIdOf(messages[keepFrom]!) : undefined;
    const preparation = {
      firstKeptEntryId,
      messagesToSummarize: messages.slice(0, keepFrom),
      turnPrefixMessages: [],
      isSplitTurn: false,
      tokensBefore: request.tokens,
      previousSummary: undefined,
      fileOps: { read: [], written: [], edited: [] },
      settings: {
        enabled: true,
        reserveTokens: request.contextWindow - (request.targetTokens ?? request.contextWindow),
        keepRecentTokens: 0,
      },
    };
    for (const { ext, fn } of this.handlers.get("session_before_compact") ?? []) {
      let r:
        | { cancel?: boolean; compaction?: { summary?: string; firstKeptEntryId?: string; details?: unknown } }
        | undefined;
      try {
        r = (await fn(
          {
            type: "session_before_compact",
            preparation,
            branchEntries: [...(s?.path() ?? [])],
            customInstructions: request.instructions,
            signal: request.signal,
          },
          this.context(ext, request.signal),
        )) as typeof r;
      } catch (error) {
        this.ctx.log.error(`Pi extension ${ext.found.name}: its session_before_compact handler failed: ${msg(error)}`);
        continue;
      }
      if (r?.cancel) {
        this.ctx.log.warn(`Pi extension ${ext.found.name} cancelled the compaction (session_before_compact)`);
        return { messages };
      }
      const summary = r?.compaction?.summary;
      if (typeof summary !== "string" || !summary.trim()) continue;
      const wanted = r?.compaction?.firstKeptEntryId;
      const at = wanted ? messages.findIndex((m) => s?.entryIdOf(m) === wanted) : -1;
      const kept = at >= 0 ? messages.slice(at) : wanted === undefined ? [] : messages.slice(keepFrom);
      const message: AgentMessage = {
        role: "user",
        content: `The conversation before this point was compacted into this summary:\n\n<summary>\n${summary.trim()}\n</summary>`,
        timestamp: Date.now(),
      };
      const result = [message, ...kept];
      // One that does not shrink the context is refused by coil (and named); only a smaller one is recorded.
      if (JSON.stringify(result).length >= JSON.stringify(messages).length) return { messages: result };
      const first = kept[0] && s?.entryIdOf(kept[0]);
      this.compactionFromExtension = true;
      try {
        s?.appendCompaction({
          summary,
          messages: first ? [message] : result,
          firstKeptEntryId: first,
          tokensBefore: request.tokens,
          by: `${this.ctx.id} (${ext.found.name})`,
          details: r?.compaction?.details,
        });
      } catch (error) {
        this.ctx.log.warn(`could not record the compaction of Pi extension ${ext.found.name}: ${msg(error)}`);
      }
      return { messages: result };
    }
    return undefined;
  }

  /**
   * The `session-guard` service: session_before_switch (/new, /resume), session_before_fork (/fork, /clone)
   * and session_before_tree (/tree); the first `{ cancel: true }` stops the change. A switch or fork that
   * goes on is a session_shutdown for the session left (then session_start for the new one, after it).
   */
  private async beforeSessionChange(change: SessionChange): Promise<{ cancelled: string } | { summary?: string }> {
    const s = this.session();
    let type: string;
    let event: Record<string, unknown>;
    if (change.kind === "new" || change.kind === "resume") {
      type = "session_before_switch";
      event = { reason: change.kind, ...(change.kind === "resume" ? { targetSessionFile: change.target } : {}) };
    } else if (change.kind === "fork") {
      type = "session_before_fork";
      event = { entryId: change.entryId, position: change.position };
    } else {
      type = "session_before_tree";
      const target = new Set((s?.path(change.targetId) ?? []).map((e) => e.id));
      const old = s?.path() ?? [];
      const common = [...old].reverse().find((e) => target.has(e.id));
      event = {
        preparation: {
          targetId: change.targetId,
          oldLeafId: s?.leafId ?? null,
          commonAncestorId: common?.id ?? null,
          entriesToSummarize: old.filter((e) => !target.has(e.id)),
          userWantsSummary: change.summarize,
        },
        signal: new AbortController().signal,
      };
    }
    let summary: string | undefined;
    for (const { ext, fn } of this.handlers.get(type) ?? []) {
      let r: { cancel?: boolean; summary?: { summary?: unknown } } | undefined;
      try {
        r = (await fn({ type, ...event }, this.context(ext))) as typeof r;
      } catch (error) {
        this.ctx.log.error(`Pi extension ${ext.found.name}: its ${type} handler failed: ${msg(error)}`);
        continue;
      }
      if (r?.cancel) return { cancelled: `Cancelled by Pi extension ${ext.found.name} (${type}).` };
      if (typeof r?.summary?.summary === "string" && summary === undefined) summary = r.summary.summary;
    }
    if (change.kind !== "tree") {
      const reason = change.kind === "resume" ? "resume" : change.kind;
      await this.emit("session_shutdown", {
        reason,
        targetSessionFile: change.kind === "resume" ? change.target : undefined,
      });
    } else this.treeFrom = s?.leafId ?? null;
    return summary === undefined ? {} : { summary };
  }

  private async afterSessionChange(change: SessionChange, previous: string | undefined): Promise<void> {
    if (change.kind === "tree") {
      const s = this.session();
      const leaf = s?.leafId ?? null;
      const entry = leaf ? s?.entry(leaf) : undefined;
      await this.emit("session_tree", {
        newLeafId: leaf,
        oldLeafId: this.treeFrom ?? null,
        summaryEntry: entry?.type === "branch_summary" ? entry : undefined,
        fromExtension: false,
      });
      return;
    }
    await this.reload();
    await this.emit("session_start", { reason: change.kind, previousSessionFile: previous });
    await this.discoverResources();
  }

  /**
   * As Pi does on /new, /resume and /fork: every extension is imported again and its factory runs afresh (a new
   * instance with its own state; the old one heard session_shutdown). Its handlers and `pi.events` listeners are
   * the new instance's; tools, commands and shortcuts it registers again replace the old ones in place; flags and
   * providers stay as registered at start-up (coil registers those once). One the new instance no longer
   * registers stays, as coil cannot take a tool or command back after start-up.
   */
  private async reload(): Promise<void> {
    this.reloading = true;
    try {
      for (const ext of this.extensions) {
        if (ext.error) continue;
        for (const [type, list] of this.handlers)
          this.handlers.set(
            type,
            list.filter((h) => h.ext !== ext),
          );
        for (const [name, fn] of ext.listeners.splice(0)) this.bus.get(name)?.delete(fn);
        await this.runLate(ext);
      }
      await Promise.all(this.waiting.splice(0));
      this.syncLate();
    } finally {
      this.reloading = false;
    }
  }

  /** ctx.newSession / fork / navigateTree / switchSession (commands): coil's /new, /fork, /tree, /resume. */
  private async changeSession(
    ext: LoadedExtension,
    change: SessionChange,
    run: (s: SessionService) => unknown,
    withSession?: (ctx: unknown) => unknown,
  ): Promise<{ cancelled: boolean }> {
    const s = this.session();
    if (!s) {
      this.report(ext, `ctx.${CHANGE_CALL[change.kind]}()`, "no session plugin in this preset");
      return { cancelled: true };
    }
    if (this.agent?.state.isRunning) await this.agent.waitForIdle();
    const verdict = await this.beforeSessionChange(change);
    if ("cancelled" in verdict) return { cancelled: true };
    const previous = s.file;
    await run(s);
    await this.afterSessionChange(change, previous);
    if (withSession) await withSession(this.context(ext, undefined, true));
    return { cancelled: false };
  }

  /** The `input` service: Pi's input event for what the user typed (transforms chain; the first handled wins). */
  private async filterInput(
    text: string,
    source: string,
  ): Promise<{ text: string } | { handled: true; output?: string }> {
    if (!(this.handlers.get("input")?.length ?? 0)) return { text };
    const outer = this.command;
    const mine = { notes: [] as string[], prompts: [] as AgentMessage[] };
    this.command = mine;
    let current = text;
    try {
      for (const { ext, fn } of this.handlers.get("input") ?? []) {
        let r: { action?: string; text?: unknown; images?: unknown } | undefined;
        try {
          r = (await fn({ type: "input", text: current, images: [], source }, this.context(ext))) as typeof r;
        } catch (error) {
          this.ctx.log.error(`Pi extension ${ext.found.name}: its input handler failed: ${msg(error)}`);
          continue;
        }
        if (r?.action === "handled") return { handled: true, output: mine.notes.join("\n") };
        if (r?.action === "transform" && typeof r.text === "string") current = r.text;
        if (r?.action === "transform" && Array.isArray(r.images) && r.images.length)
          this.report(ext, "input handler { action: 'transform', images }", "coil keeps the typed prompt's images");
      }
    } finally {
      this.command = outer;
    }
    for (const note of mine.notes) this.ctx.log.info(note);
    return { text: current };
  }

  // ---- the services an extension reaches ----

  private ui(): UiService | undefined {
    return this.ctx.services.get("ui");
  }

  private session(): SessionService | undefined {
    return this.ctx.services.get("session") as SessionService | undefined;
  }

  private get hasUI(): boolean {
    return this.mode === "interactive" || this.mode === "rpc";
  }

  /** A UI call that only shows something: now if the UI is up, else when it starts (in a mode that has one). */
  private show(fn: (ui: UiService) => void): void {
    const ui = this.uiStarted ? this.ui() : undefined;
    if (ui) fn(ui);
    else if (!this.agent || this.hasUI) this.pendingUi.push(fn);
  }

  private uiFor(ext: LoadedExtension): unknown {
    const ui = () => (this.uiStarted ? this.ui() : undefined);
    const api = {
      notify: (message: string, type = "info") => {
        const level = PI_LEVEL[type] ?? "info";
        if (this.command && !ui()) {
          this.command.notes.push(String(message));
          return;
        }
        if (ui() || (this.hasUI && !this.uiStarted)) this.show((u) => u.notify(String(message), level));
        else this.ctx.log[level](`${ext.found.name}: ${message}`);
      },
      confirm: async (title: string, message: string, opts?: { signal?: AbortSignal }) =>
        (await ui()?.confirm(title, message, opts?.signal)) ?? false,
      select: async (title: string, options: readonly string[], opts?: { signal?: AbortSignal }) =>
        ui()?.select(title, options, opts?.signal),
      input: async (title: string, placeholder?: string, opts?: { signal?: AbortSignal }) =>
        ui()?.input(title, placeholder, opts?.signal),
      setStatus: (key: string, text: string | undefined) => this.show((u) => u.setStatus?.(key, text)),
      setWidget: (key: string, content: unknown, options?: { placement?: "aboveEditor" | "belowEditor" }) =>
        this.show((u) => u.setWidget?.(key, content as never, options)),
      setFooter: (factory: unknown) => this.show((u) => u.setFooter?.(factory as never)),
      setTitle: (title: string) => this.show((u) => u.setTitle?.(title)),
      setEditorText: (text: string) => this.show((u) => u.setEditorText?.(text)),
      getEditorText: () => ui()?.getEditorText?.() ?? "",
      getToolsExpanded: () => ui()?.getToolsExpanded?.() ?? false,
      setToolsExpanded: (b: boolean) => this.show((u) => u.setToolsExpanded?.(b)),
      get theme() {
        return ui()?.theme ?? PLAIN_THEME;
      },
      custom: customFor({ ui, mode: () => this.mode, warn: (m) => this.ctx.log.warn(m) }, ext.found),
      // Pi's theme switching: coil's TUI themes (/settings theme) are not open to extensions. Reported, and
      // answered with Pi's own shapes (no themes, a failed switch) so `getAllThemes().length` does not throw.
      getAllThemes: () => {
        this.report(ext, "ctx.ui.getAllThemes()", NO_THEMES);
        return [];
      },
      getTheme: (_name: string) => {
        this.report(ext, "ctx.ui.getTheme()", NO_THEMES);
        return undefined;
      },
      setTheme: (_theme: unknown) => {
        this.report(ext, "ctx.ui.setTheme()", NO_THEMES);
        return { success: false, error: NO_THEMES };
      },
    };
    return this.guarded(ext, api, "ctx.ui");
  }

  /** An object whose other members are reported (and are no-ops returning undefined). */
  private guarded<T extends object>(ext: LoadedExtension, target: T, prefix: string): T {
    return new Proxy(target, {
      get: (t, key, receiver) => {
        if (typeof key !== "string" || key in t || key === "then" || key === "toJSON")
          return Reflect.get(t, key, receiver);
        return (..._args: unknown[]) => {
          this.report(ext, `${prefix}.${key}()`, "coil has no counterpart");
          return undefined;
        };
      },
    });
  }

  private sessionManager(ext: LoadedExtension): unknown {
    const s = () => this.session();
    return this.guarded(
      ext,
      {
        getEntries: () => [...(s()?.entries() ?? [])],
        getBranch: () => [...(s()?.path() ?? [])],
        getLeafId: () => s()?.leafId ?? null,
        getEntry: (id: string) => s()?.entry(id),
        getLabel: (id: string) => s()?.labels().get(id),
        getHeader: () => s()?.header,
        getSessionFile: () => s()?.file,
        getSessionId: () => s()?.id,
        getSessionName: () => s()?.name,
        getCwd: () => this.ctx.cwd,
      },
      "ctx.sessionManager",
    );
  }

  /**
   * `ctx.modelRegistry`: coil's providers and their models. Keys come as coil's providers find them
   * (`--api-key`, models.yaml, `<PROVIDER>_API_KEY`, `coil auth`); subscription logins are not handed out.
   */
  private modelRegistry(ext: LoadedExtension): unknown {
    const providers = () => this.agent?.view.providers.values() ?? [];
    const all = () => providers().flatMap((p) => (p.models ?? []).map((m) => ({ ...piModel(m), provider: p.id })));
    const provider = (id: string) => this.agent?.view.providers.get(id);
    const key = (id: string): string | undefined => {
      const registered = this.providerKeys.get(id);
      if (registered) return registered();
      const flag = this.ctx.flags.get("api-key");
      const selected = this.ctx.services.get("provider-cli")?.selected;
      if (typeof flag === "string" && flag && (!selected || selected === id)) return flag;
      const env = process.env[`${id.toUpperCase().replace(/[^A-Z0-9]+/g, "_")}_API_KEY`];
      if (env) return env;
      try {
        return storedKey(readAuth(coilHome()), id) ?? undefined;
      } catch {
        return undefined;
      }
    };
    return this.guarded(
      ext,
      {
        getAll: all,
        getAvailable: () => all().filter((m) => provider(m.provider)?.isConfigured?.() !== false),
        find: (providerId: string, modelId: string) => {
          const p = provider(providerId);
          const m = p?.models?.find((x) => x.id === modelId) ?? p?.resolveModel?.(modelId);
          return m ? { ...piModel(m), provider: providerId } : undefined;
        },
        hasConfiguredAuth: (model: { provider: string }) => provider(model?.provider)?.isConfigured?.() !== false,
        getApiKeyForProvider: async (providerId: string) => key(providerId),
        getApiKey: async (model: { provider: string }) => key(model?.provider),
        getApiKeyAndHeaders: async (model: { provider: string }) => {
          const k = key(model?.provider);
          return k
            ? { ok: true, apiKey: k, headers: {} }
            : { ok: false, error: `no API key for ${model?.provider} in coil (coil auth set ${model?.provider})` };
        },
        getProviderDisplayName: (providerId: string) => providerId,
        isUsingOAuth: () => false,
        getError: () => undefined,
        refresh: () => undefined,
      },
      "ctx.modelRegistry",
    );
  }

  private context(ext: LoadedExtension, signal?: AbortSignal, command = false): unknown {
    const agent = () => this.agent;
    const base = {
      ui: this.uiFor(ext),
      hasUI: this.hasUI,
      /** Pi's run mode: extensions open `ctx.ui.custom()` panels only when it is `"tui"`. */
      mode: PI_MODE[this.mode] ?? "print",
      cwd: this.ctx.cwd,
      sessionManager: this.sessionManager(ext),
      modelRegistry: this.modelRegistry(ext),
      signal,
      get model() {
        const m = agent()?.state.model;
        return m ? { ...m, maxTokens: m.maxOutput } : undefined;
      },
      isIdle: () => !agent()?.state.isRunning,
      abort: () => void agent()?.abort(),
      hasPendingMessages: () => {
        const q = agent()?.state.queued;
        return !!q && q.steering.length + q.followUp.length > 0;
      },
      getSystemPrompt: () => this.systemPrompt,
      isProjectTrusted: () => this.ctx.projectTrusted,
      /** Pi's models scope (`--models`, Ctrl+P's cycle): coil has none, so every model is in scope. */
      scopedModels: [],
      compact: (o?: { customInstructions?: string; onComplete?(r: unknown): void; onError?(e: Error): void }) => {
        const a = agent();
        if (!a) return;
        a.compact(o?.customInstructions).then(
          (r) => o?.onComplete?.(r),
          (e: Error) => o?.onError?.(e),
        );
      },
      ...(command ? this.commandContext(ext) : {}),
    };
    return this.guarded(ext, base, "ctx");
  }

  /** What only a command's ctx has (Pi's ExtensionCommandContext): waiting for the agent, changing the session. */
  private commandContext(ext: LoadedExtension): Record<string, unknown> {
    type After = { withSession?(ctx: unknown): unknown };
    return {
      waitForIdle: async () => {
        // In Pi a command's sendUserMessage starts its turn at once, and a handler that waits sees it through
        // (pi-prompt-template-model's chains). coil sends the command's prompt when the handler returns; one
        // the handler waits for runs now instead, its reply part of the command's output where there is no UI.
        const a = this.agent;
        const c = this.command;
        if (a && c?.prompts.length && !a.state.isRunning) {
          const result = await a.prompt(c.prompts.splice(0));
          const text = lastAssistantText(result.messages);
          if (text && !(this.uiStarted && this.ui())) c.notes.push(text);
        }
        await a?.waitForIdle();
      },
      newSession: async (o: After & { setup?(sm: unknown): unknown; parentSession?: string } = {}) =>
        this.changeSession(
          ext,
          { kind: "new" },
          async (s) => {
            s.newSession();
            const appendMessage = (m: AgentMessage) => s.appendMessage(m);
            if (o.setup) await o.setup({ ...(this.sessionManager(ext) as object), appendMessage });
          },
          o.withSession,
        ),
      fork: async (entryId: string, o: After & { position?: "before" | "at" } = {}) => {
        const position = o.position ?? "before";
        return this.changeSession(
          ext,
          { kind: "fork", entryId, position },
          (s) => {
            const entry = s.entry(entryId);
            const message = entry?.type === "message" ? (entry as { message?: AgentMessage }).message : undefined;
            const user = message?.role === "user" ? message : undefined;
            // "before" forks before a user message and puts its text back in the editor, as /fork does.
            if (position === "before" && user) {
              s.fork(entry!.parentId ?? null);
              this.show((u) => u.setEditorText?.(textOf(user)));
            } else s.fork(entryId);
          },
          o.withSession,
        );
      },
      navigateTree: async (
        targetId: string,
        o: { summarize?: boolean; customInstructions?: string; label?: string } = {},
      ) =>
        this.changeSession(ext, { kind: "tree", targetId, summarize: o.summarize === true }, async (s) => {
          await s.branch(targetId, { summarize: o.summarize === true, instructions: o.customInstructions });
          if (o.label) s.setLabel(targetId, o.label);
        }),
      switchSession: async (sessionPath: string, o: After = {}) =>
        this.changeSession(ext, { kind: "resume", target: sessionPath }, (s) => s.open(sessionPath), o.withSession),
    };
  }

  // ---- the pi object ----

  private api(ext: LoadedExtension): unknown {
    const ctx = this.ctx;
    const pi = {
      on: (event: string, handler: Handler) => {
        if (!EVENTS.has(event)) {
          this.report(ext, `pi.on("${event}")`, "coil has no such event");
          return;
        }
        const list = this.handlers.get(event) ?? [];
        list.push({ ext, fn: handler });
        this.handlers.set(event, list);
      },
      registerTool: (def: PiTool) => this.registerTool(ext, def),
      registerCommand: (name: string, options: PiCommand) => this.registerCommand(ext, name, options),
      registerShortcut: (key: string, options: { description?: string; handler(ctx: unknown): unknown }) => {
        // While extensions load in setup, the key goes to coil's own ctx.registerShortcut (bound by the TUI,
        // conflicts reported with both owners). An extension loaded later (the async fallback) can no longer
        // register one, so its key rides on a command `/<extension>-<key>` bound the same way.
        const id = `${ext.found.file}\n${key}`;
        if (this.shortcutHandlers.has(id)) {
          this.shortcutHandlers.set(id, options.handler); // registered again (reload): the new instance's
          return;
        }
        if (this.open) {
          try {
            this.ctx.registerShortcut(key, {
              description: options.description ?? `shortcut ${key}`,
              source: extensionSource(ext.found),
              handler: async () => {
                await this.shortcutHandlers.get(id)?.(this.context(ext));
              },
            });
            this.shortcutHandlers.set(id, options.handler);
          } catch (error) {
            this.report(ext, `pi.registerShortcut("${key}")`, msg(error));
          }
          return;
        }
        const name = `${ext.found.name}-${key}`.toLowerCase().replace(/[^a-z0-9]+/g, "-");
        this.registerCommand(
          ext,
          name,
          { description: options.description ?? `shortcut ${key}`, handler: (_args, c) => options.handler(c) },
          key,
        );
      },
      registerFlag: (name: string, options: { description?: string; type?: string; default?: unknown }) => {
        const flag = name.replace(/^--?/, "");
        if (this.reloading && ext.flags.includes(flag)) return; // registered at start-up, by its first instance
        this.flagDefaults.set(flag, options.default);
        if (!this.open) {
          this.report(ext, `pi.registerFlag("${flag}")`, "flags are registered while extensions load, not later");
          return;
        }
        try {
          ctx.flags.register({
            name: flag,
            description: `${options.description ?? ""} (Pi extension ${ext.found.name})`.trim(),
            type: options.type === "string" ? "string" : options.type === "number" ? "number" : "boolean",
          });
          ext.flags.push(flag);
        } catch (error) {
          this.report(ext, `pi.registerFlag("${flag}")`, msg(error));
        }
      },
      registerMessageRenderer: (customType: string, renderer: UiMessageRenderer) =>
        this.show((u) => u.registerMessageRenderer?.(customType, messageRenderer(ext.found, renderer))),
      registerProvider: (name: string, config: PiProviderConfig) => this.registerProvider(ext, name, config),
      unregisterProvider: (name: string) =>
        this.report(ext, `pi.unregisterProvider("${name}")`, "coil's providers are fixed once start-up is done"),
      getFlag: (name: string) => {
        const flag = name.replace(/^--?/, "");
        return ctx.flags.get(flag) ?? this.flagDefaults.get(flag);
      },
      appendEntry: (customType: string, data?: unknown) => {
        const s = this.session();
        if (!s) this.report(ext, "pi.appendEntry()", "no session plugin in this preset");
        else s.appendCustom(customType, data);
      },
      sendMessage: (
        message: { customType: string; content: string; display?: boolean; details?: unknown },
        options?: { triggerTurn?: boolean; deliverAs?: string },
      ) => {
        const s = this.session();
        if (!s) {
          this.report(ext, "pi.sendMessage()", "no session plugin in this preset");
          return;
        }
        const a = this.agent;
        const deliver = () => {
          const idle = !a?.state.isRunning;
          const added = s.appendCustomMessage({
            customType: message.customType,
            content: message.content,
            display: message.display,
            details: message.details,
          });
          // Steered into a run, the TUI draws it when the run takes it; appended while idle, it is drawn now.
          if (idle && message.display !== false) this.show((u) => u.showMessage?.(added));
          if (options?.triggerTurn && a && !a.state.isRunning) void a.continue().catch(() => undefined);
        };
        // From a command without a UI (print mode), a message to show is part of the command's output.
        if (this.command && !(this.uiStarted && this.ui()) && message.display !== false)
          this.command.notes.push(
            typeof message.content === "string"
              ? message.content
              : textOf({ role: "user", content: message.content, timestamp: 0 } as AgentMessage),
          );
        // After agent_end the run takes no more steering: the message waits for it to finish instead.
        if (a?.state.isRunning && this.runEnded) void a.waitForIdle().then(deliver, deliver);
        else deliver();
      },
      sendUserMessage: (content: unknown, options?: { deliverAs?: "steer" | "followUp" }) => {
        const message = { role: "user", content, timestamp: Date.now() } as AgentMessage;
        const a = this.agent;
        if (this.command && !a?.state.isRunning) {
          this.command.prompts.push(message); // several: sent together, none lost
          return;
        }
        if (!a) return;
        if (a.state.isRunning) {
          if (options?.deliverAs === "followUp") a.followUp(message);
          else a.steer(message);
        } else void a.prompt(message).catch((error) => ctx.log.error(`${ext.found.name}: ${msg(error)}`));
      },
      setSessionName: (name: string) => void this.session()?.setName(name),
      getSessionName: () => this.session()?.name,
      setLabel: (entryId: string, label?: string) => void this.session()?.setLabel(entryId, label),
      exec: (
        command: string,
        args: string[] = [],
        options: { signal?: AbortSignal; timeout?: number; cwd?: string } = {},
      ) =>
        new Promise((resolve) => {
          execFile(
            command,
            args,
            {
              cwd: options.cwd ?? ctx.cwd,
              signal: options.signal,
              timeout: options.timeout,
              maxBuffer: 64 * 1024 * 1024,
            },
            (error, stdout, stderr) => {
              const e = error as (Error & { code?: unknown; killed?: boolean }) | null;
              resolve({
                stdout: String(stdout),
                stderr: String(stderr),
                code: e ? (typeof e.code === "number" ? e.code : 1) : 0,
                killed: e?.killed ?? false,
              });
            },
          );
        }),
      getAllTools: () =>
        (this.agent?.view.tools.entries() ?? []).map(([name, t]) => {
          const by = t.owner === ctx.id ? this.extensions.find((e) => e.tools.includes(name)) : undefined;
          return {
            name,
            description: t.value.description,
            parameters: t.value.parameters,
            sourceInfo: by
              ? { path: by.found.file, source: by.found.name, scope: by.found.scope }
              : { path: `<plugin:${t.owner}>`, source: "builtin", scope: "user" },
          };
        }),
      getActiveTools: () => {
        const all = this.agent?.view.tools.names() ?? [];
        const active = this.activeTools;
        return active ? all.filter((n) => active.has(n)) : all;
      },
      setActiveTools: (names: readonly string[]) => {
        // The model is offered only these from the next request on; a call to another one is blocked.
        this.activeTools = new Set(Array.isArray(names) ? names.filter((n) => typeof n === "string") : []);
      },
      getThinkingLevel: () => {
        const a = this.agent;
        if (!a) return "off";
        return this.ctx.services.get("thinking")?.level(a) ?? a.setRequestOptions({}).thinking ?? "off";
      },
      setThinkingLevel: (level: string) => {
        const a = this.agent;
        if (!a || !THINKING.has(level)) return;
        const thinking = this.ctx.services.get("thinking");
        if (thinking) thinking.set(a, level as never);
        else a.setRequestOptions({ thinking: level as never });
      },
      getCommands: () =>
        (this.agent?.view.commands.entries() ?? []).map(([name, c]) => ({
          name,
          description: c.value.description,
          source: c.owner === ctx.id ? "extension" : "prompt",
        })),
      setModel: async (model: { provider: string; id: string }) => {
        const provider = this.agent?.view.providers.get(model?.provider);
        const info = provider?.models?.find((m) => m.id === model.id) ?? provider?.resolveModel?.(model.id);
        if (!this.agent || !provider || !info || provider.isConfigured?.() === false) return false;
        this.agent.setModel(provider.id, info);
        return true;
      },
      events: {
        on: (name: string, fn: (data: unknown) => void) => {
          const set = this.bus.get(name) ?? new Set();
          set.add(fn);
          this.bus.set(name, set);
          ext.listeners.push([name, fn]);
          return () => set.delete(fn);
        },
        emit: (name: string, data?: unknown) => {
          for (const fn of this.bus.get(name) ?? []) fn(data);
        },
      },
    };
    void this;
    return this.guarded(ext, pi, "pi");
  }

  /** `pi.registerProvider`: providers.ts builds it while extensions load; later it is reported. */
  private registerProvider(ext: LoadedExtension, name: string, config: PiProviderConfig): void {
    const call = `pi.registerProvider("${name}")`;
    if (this.reloading && ext.providers.includes(name)) return; // registered at start-up, by its first instance
    if (!this.open) return void this.report(ext, call, "providers are registered while extensions load, not later");
    const host = {
      ctx: this.ctx,
      extension: ext.found.name,
      report: (c: string, why: string) => this.report(ext, c, why),
    };
    const key = registerPiProvider(host, name, config);
    if (!key) return;
    ext.providers.push(name);
    this.providerKeys.set(name, key);
  }

  private registerTool(ext: LoadedExtension, def: PiTool): void {
    const tool: ToolDefinition = {
      name: def.name,
      label: def.label,
      description: def.description,
      parameters: def.parameters ?? { type: "object", properties: {} },
      promptSnippet: def.promptSnippet,
      promptGuidelines: def.promptGuidelines,
      prepareArguments: def.prepareArguments,
      executionMode: def.executionMode,
      execute: async (args, run) => {
        const out = (await def.execute(
          run.toolCallId,
          args,
          run.signal,
          (partial: { content?: unknown; details?: unknown }) =>
            run.update({ content: (partial?.content ?? []) as never, details: partial?.details }),
          this.context(ext, run.signal),
        )) as { content?: unknown; details?: unknown; isError?: boolean } | undefined;
        return {
          content: (Array.isArray(out?.content) ? out.content : []) as never,
          details: out?.details,
          ...(out?.isError ? { isError: true } : {}),
        };
      },
      ...(def.renderCall ? { renderCall: def.renderCall as never } : {}),
      ...(def.renderResult ? { renderResult: def.renderResult as never } : {}),
    };
    // Pi replaces a tool its extension registers again under the same name (pi-mcp-adapter re-syncs its
    // proxies on every connect); one registered in setup cannot leave coil's registry, so it is updated in place.
    const held = this.setupTools.get(def.name);
    if (held?.ext === ext) {
      for (const key of Object.keys(held.tool)) delete (held.tool as unknown as Record<string, unknown>)[key];
      Object.assign(held.tool, tool);
      return;
    }
    if (this.open) {
      try {
        this.ctx.tools.register(tool);
        ext.tools.push(def.name);
        this.setupTools.set(def.name, { ext, tool });
      } catch (error) {
        this.report(ext, `pi.registerTool("${def.name}")`, msg(error));
      }
      return;
    }
    const at = this.lateTools.findIndex((t) => t.name === tool.name);
    if (at < 0 && this.ctx.tools.get(tool.name)) {
      // another's tool: left out and reported, not kept to make every later sync fail
      const owner = held ? `Pi extension ${held.ext.found.name}` : "coil or one of its plugins";
      this.report(ext, `pi.registerTool("${def.name}")`, `${owner} already has a tool named ${def.name}`);
      return;
    }
    if (at >= 0) this.lateTools[at] = tool;
    else this.lateTools.push(tool);
    if (!ext.tools.includes(def.name)) ext.tools.push(def.name);
    if (this.agent) this.syncLate();
  }

  private registerCommand(ext: LoadedExtension, name: string, options: PiCommand, shortcut?: string): void {
    const command: SlashCommand = {
      name,
      description: options.description ?? `${name} (Pi extension ${ext.found.name})`,
      source: extensionSource(ext.found),
      ...(shortcut ? { shortcut } : {}),
      run: async (args) => {
        const outer = this.command;
        const mine = { notes: [] as string[], prompts: [] as AgentMessage[] };
        this.command = mine;
        try {
          await options.handler(args, this.context(ext, undefined, true));
        } finally {
          this.command = outer;
        }
        if (mine.prompts.length) return { prompt: mine.prompts.length === 1 ? mine.prompts[0]! : mine.prompts };
        return mine.notes.length ? mine.notes.join("\n") : undefined;
      },
    };
    // As for tools: registered again, it replaces its earlier self; a late name coil holds is reported, not
    // thrown into the extension's handler (pi-prompt-template-model registers its templates in session_start).
    const held = this.setupCommands.get(name);
    if (held?.ext === ext) {
      Object.assign(held.command, command);
      return;
    }
    if (this.open) {
      try {
        this.ctx.commands.register(command);
        ext.commands.push(name);
        this.setupCommands.set(name, { ext, command });
      } catch (error) {
        this.report(ext, `pi.registerCommand("${name}")`, msg(error));
      }
      return;
    }
    const at = this.lateCommands.findIndex((c) => c.name === name);
    if (at < 0 && this.ctx.commands.get(name)) {
      const owner = held ? `Pi extension ${held.ext.found.name}` : "coil or one of its plugins";
      this.report(ext, `pi.registerCommand("${name}")`, `${owner} already has a command /${name}`);
      return;
    }
    if (at >= 0) this.lateCommands[at] = command;
    else this.lateCommands.push(command);
    if (!ext.commands.includes(name)) ext.commands.push(name);
    if (this.agent) this.syncLate();
  }
}

interface PiTool {
  name: string;
  label?: string;
  description: string;
  parameters?: ToolDefinition["parameters"];
  promptSnippet?: string;
  promptGuidelines?: string[];
  prepareArguments?(args: Record<string, unknown>): Record<string, unknown>;
  executionMode?: "parallel" | "sequential";
  execute(id: string, params: unknown, signal: AbortSignal, onUpdate: unknown, ctx: unknown): Promise<unknown>;
  renderCall?: unknown;
  renderResult?: unknown;
}

interface PiCommand {
  description?: string;
  handler(args: string, ctx: unknown): unknown;
  getArgumentCompletions?: unknown;
}

const NO_THEMES = "coil's TUI themes (/settings theme, --theme) cannot be listed or switched by an extension";

/** The theme a renderer gets when no TUI runs: text unchanged. */
const PLAIN_THEME = {
  fg: (_r: string, t: string) => t,
  bg: (_r: string, t: string) => t,
  bold: (t: string) => t,
  italic: (t: string) => t,
  underline: (t: string) => t,
  strikethrough: (t: string) => t,
  inverse: (t: string) => t,
  level: 0,
};

const msg = (error: unknown) => (error instanceof Error ? error.message : String(error));
