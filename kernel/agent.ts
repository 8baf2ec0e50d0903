/**
 * The stateful agent around the loop: one run at a time, queues for steering and follow-ups,
 * abort that hands queued messages back, and a state snapshot for front ends.
 */
import { CoilError } from "./errors.js";
import { ContextTally, DEFAULT_RESERVE_TOKENS, estimateMessageTokens, freezeMessage, userMessage } from "./messages.js";
import { compact as runCompact, runLoop, runToolCall, type LoopState, type RunOutcome } from "./loop.js";
import type { PluginHost } from "./host.js";
import type { SlashCommand } from "./plugin.js";
import type { ReadonlyRegistry } from "./registry.js";
import type {
  AgentEvent,
  AgentMessage,
  AssistantMessage,
  CompactResult,
  ModelInfo,
  Provider,
  RequestOptions,
  SystemBlock,
  ToolDefinition,
  ToolResultMessage,
} from "./types.js";

export interface AgentOptions {
  /** Provider id (must be registered) and the model to use. */
  provider: string;
  model: ModelInfo;
  /** History to start from (a resumed session). */
  messages?: readonly AgentMessage[];
  system?: readonly SystemBlock[];
  toolExecution?: "parallel" | "sequential";
  /** Tokens kept free below the context window before compaction runs (at most a quarter of the window). Default 16,384. */
  reserveTokens?: number;
  requestOptions?: RequestOptions;
}

export interface RunResult extends RunOutcome {
  /** Messages this run added to history. */
  messages: readonly AgentMessage[];
  /** Queued steering/follow-up messages the run did not deliver, handed back to the caller. */
  unsent: readonly AgentMessage[];
}

export interface AgentState {
  readonly messages: readonly AgentMessage[];
  readonly provider: string;
  readonly model: ModelInfo;
  readonly isRunning: boolean;
  /** The assistant message being streamed right now. */
  readonly streaming?: AssistantMessage;
  readonly pendingToolCalls: readonly string[];
  readonly queued: { readonly steering: readonly AgentMessage[]; readonly followUp: readonly AgentMessage[] };
}

/** What plugins and front ends may read through an agent: the registered providers, commands, tools and services. */
export interface AgentView {
  readonly providers: ReadonlyRegistry<Provider>;
  readonly commands: ReadonlyRegistry<SlashCommand>;
  readonly tools: ReadonlyRegistry<ToolDefinition>;
  readonly services: ReadonlyRegistry<unknown>;
}

export type PromptInput = string | AgentMessage | readonly AgentMessage[];

export class Agent {
  /** The loop's state lives across runs; a run swaps in its own signal. */
  private readonly s: LoopState;
  private controller?: AbortController;
  private running?: Promise<RunResult>;

  constructor(
    private readonly host: PluginHost,
    options: AgentOptions,
  ) {
    host.close();
    const messages = (options.messages ?? []).map((m) => freezeMessage(m));
    this.s = {
      host,
      provider: this.providerFor(options.provider),
      model: options.model,
      config: {
        toolExecution: options.toolExecution ?? "parallel",
        reserveTokens: options.reserveTokens ?? DEFAULT_RESERVE_TOKENS,
        system: Object.freeze([...(options.system ?? [])]),
        requestOptions: Object.freeze({ ...(options.requestOptions ?? {}) }),
      },
      signal: new AbortController().signal,
      messages,
      usageFloor: 0,
      tally: new ContextTally(messages, 0),
      steering: [],
      followUp: [],
      pendingTools: new Set(),
      added: [],
    };
  }

  get state(): AgentState {
    const s = this.s;
    return {
      messages: Object.freeze(s.messages.slice()),
      provider: s.provider.id,
      model: s.model,
      isRunning: this.running !== undefined,
      streaming: s.streaming,
      pendingToolCalls: [...s.pendingTools],
      queued: { steering: s.steering.slice(), followUp: s.followUp.slice() },
    };
  }

  get isRunning(): boolean {
    return this.running !== undefined;
  }

  /**
   * Request options (thinking level, max tokens, ...) for the next requests; merged over the current ones.
   * Returns the options now in effect, so `setRequestOptions({})` reads them (a front end's thinking level).
   */
  setRequestOptions(options: RequestOptions): Readonly<RequestOptions> {
    this.s.config = {
      ...this.s.config,
      requestOptions: Object.freeze({ ...this.s.config.requestOptions, ...options }),
    };
    return this.s.config.requestOptions;
  }

  /** Observe every event. Returns the unsubscribe function. */
  subscribe(listener: (event: AgentEvent) => void): () => void {
    return this.host.subscribe("*", listener);
  }

  /** Start a run with new input. Rejects with AGENT_BUSY while a run is going: use steer() or followUp(). */
  prompt(input: PromptInput): Promise<RunResult> {
    return this.start(toMessages(input));
  }

  /** Run again from the current history without new input (after an error, or a resumed session). */
  continue(): Promise<RunResult> {
    return this.start([]);
  }

  /** Queue a message delivered before the next model call of the current run. */
  steer(input: PromptInput): void {
    this.s.steering.push(...toMessages(input));
  }

  /** Queue a message delivered when the current run would otherwise stop. */
  followUp(input: PromptInput): void {
    this.s.followUp.push(...toMessages(input));
  }

  /** Abort the run (stream and running tools). Returns the queued messages, which are removed from the queue. */
  abort(): AgentMessage[] {
    const queued = this.takeQueued();
    this.controller?.abort();
    return queued;
  }

  /** Resolves when no run is going. */
  async waitForIdle(): Promise<void> {
    while (this.running) await this.running.catch(() => undefined);
  }

  /** Compact now (`/compact`). Throws NO_COMPACTION when no strategy handles it. */
  async compact(instructions?: string): Promise<CompactResult | undefined> {
    this.idle("compact");
    this.s.signal = new AbortController().signal;
    return runCompact(this.s, "manual", instructions);
  }

  /**
   * Have the compaction strategies summarise `messages` (a branch being left) without touching history:
   * the compact hook's result, or undefined if none handled it. Throws NO_COMPACTION without a strategy.
   */
  async summarize(
    messages: readonly AgentMessage[],
    options: { instructions?: string; signal?: AbortSignal } = {},
  ): Promise<CompactResult | undefined> {
    if (!this.host.taps.some((t) => t.hook === "compact"))
      throw new CoilError("NO_COMPACTION", "no compaction strategy in this preset", {
        hint: "add a compaction plugin to the preset",
      });
    const { model } = this.s;
    const tokens = messages.reduce((n, m) => n + estimateMessageTokens(m), 0);
    return this.host.hooks.compact.promise({
      messages: Object.freeze(messages.slice()),
      tokens,
      contextWindow: model.contextWindow,
      reason: "manual",
      model,
      instructions: options.instructions,
      signal: options.signal ?? new AbortController().signal,
    });
  }

  /**
   * Run one tool call as if the model had made it (a front end's `!cmd`): validation, the `tool_call`
   * gates (permission rules, plan mode), execution and `tool_result`, with the usual tool events. The
   * result is returned, not added to history: the caller decides what the model gets to see.
   */
  runTool(
    call: { id?: string; name: string; arguments: Record<string, unknown> },
    signal: AbortSignal = new AbortController().signal,
  ): Promise<ToolResultMessage> {
    return runToolCall(
      { ...this.s, signal },
      { type: "toolCall", id: call.id ?? `user-${Date.now()}`, name: call.name, arguments: call.arguments },
    );
  }

  /** A read-only view of the host's registries (the host itself stays the kernel's). */
  get view(): AgentView {
    return this.host;
  }

  /** Switch model (and provider) for the next request. */
  setModel(providerId: string, model: ModelInfo): void {
    this.s.provider = this.providerFor(providerId);
    this.s.model = model;
    this.s.compactHold = undefined; // another window: compaction decides afresh
  }

  /** Replace history (session resume, branch navigation). Not while running. */
  replaceMessages(messages: readonly AgentMessage[]): void {
    this.idle("replace history");
    this.s.messages = messages.map((m) => freezeMessage(m));
    this.s.usageFloor = 0;
    this.s.tally = new ContextTally(this.s.messages, 0);
    this.s.compactHold = undefined;
  }

  private idle(what: string): void {
    if (this.running) throw new CoilError("AGENT_BUSY", `cannot ${what} while a run is going; wait for it or abort it`);
  }

  private takeQueued(): AgentMessage[] {
    return [...this.s.steering.splice(0), ...this.s.followUp.splice(0)];
  }

  private providerFor(id: string): Provider {
    const provider = this.host.providers.get(id);
    if (provider) return provider;
    const known = this.host.providers.names();
    throw new CoilError("PROVIDER_MISSING", `provider '${id}' is not registered by any plugin in this preset`, {
      hint: known.length ? `registered providers: ${known.join(", ")}` : "add a provider plugin to the preset",
    });
  }

  private start(input: AgentMessage[]): Promise<RunResult> {
    if (this.running) {
      return Promise.reject(
        new CoilError("AGENT_BUSY", "a run is already going", {
          hint: "use steer() or followUp() to queue a message, or abort() it",
        }),
      );
    }
    const controller = new AbortController();
    this.controller = controller;
    Object.assign(this.s, { signal: controller.signal, added: [], streaming: undefined });
    this.host.emit({ type: "agent_start" });
    const run = (async (): Promise<RunResult> => {
      try {
        const outcome = await runLoop(this.s, input);
        const result: RunResult = { ...outcome, messages: this.s.added, unsent: this.takeQueued() };
        this.host.emit({
          type: "agent_end",
          stopReason: outcome.stopReason,
          reason: outcome.reason ?? outcome.error,
          messages: result.messages,
          unsent: result.unsent,
        });
        return result;
      } finally {
        this.s.pendingTools.clear();
        this.controller = undefined;
        this.running = undefined;
      }
    })();
    this.running = run;
    return run;
  }
}

function toMessages(input: PromptInput): AgentMessage[] {
  if (typeof input === "string") return [userMessage(input)];
  if (Array.isArray(input)) return [...input];
  return [input as AgentMessage];
}

/**
 * The host an agent runs on, for the one plugin that builds child agents on a copy of it (subagents).
 * Everything else reads `agent.view`. Named so each use can be found; the layout test allows only subagents.
 */
export function hostOf(agent: Agent): PluginHost {
  return agent["host"];
}
