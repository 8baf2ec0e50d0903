/**
 * The stateful agent around the loop: one run at a time, queues for steering and follow-ups,
 * abort that hands queued messages back, a state snapshot for front ends, and child agents (`fork`).
 */
import { DEFAULT_RESERVE_TOKENS, History, compact } from "./compaction.js";
import { CoilError } from "./errors.js";
import type { ForkHostOptions, KernelHost } from "./host.js";
import { type LoopConfig, type LoopInputs, type Queues, type RunOutcome, type RunState, runLoop } from "./loop.js";
import { userMessage } from "./messages.js";
import type { ReadonlyRegistry } from "./registry.js";
import { runToolCall } from "./tools.js";
import type {
  AgentEvent,
  AgentMessage,
  AgentScope,
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
  /** Tokens kept free below the context window before compaction runs (at most a quarter of it). Default 16,384. */
  reserveTokens?: number;
  requestOptions?: RequestOptions;
}

/**
 * A child agent: its id (in every hook input, with the depth) and what differs from the parent. Provider,
 * model and request options default to the parent's current ones.
 */
export interface ForkOptions extends ForkHostOptions, Partial<AgentOptions> {
  id: string;
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

/** What plugins and front ends may read through an agent: the registered providers, commands and tools. */
export interface AgentView {
  readonly providers: ReadonlyRegistry<Provider>;
  readonly commands: ReadonlyRegistry<SlashCommand>;
  readonly tools: ReadonlyRegistry<ToolDefinition>;
}

export type PromptInput = string | AgentMessage | readonly AgentMessage[];

/** A `/name` command (`ctx.commands`): front ends run it with the agent. */
export interface SlashCommand {
  name: string;
  description: string;
  argumentHint?: string;
  /** Runs the command. Text is shown to the user; `{ prompt }` is sent to the model as the user's turn. */
  run(args: string, agent: Agent): Promise<SlashResult> | SlashResult;
}

/** `void`: the command printed what it had to say itself (a function that returns nothing is typed `void`). */
export type SlashResult = string | void | { prompt: PromptInput };

const MAIN: AgentScope = Object.freeze({ id: "main", depth: 0 });

export class Agent {
  /** Replaced, never changed in place (the loop reads the one in effect at each request). */
  private config: LoopConfig;
  private readonly history: History;
  private readonly queues: Queues = { steering: [], followUp: [] };
  private readonly pending = new Set<string>();
  private run?: RunState;
  private controller?: AbortController;
  private running?: Promise<RunResult>;

  /**
   * `scope` is set by `fork()`: which agent this is, carried in every hook input (a guard learns from it
   * that it runs in a child).
   */
  constructor(
    private readonly host: KernelHost,
    options: AgentOptions,
    readonly scope: AgentScope = MAIN,
  ) {
    host.close();
    this.history = new History(options.messages ?? []);
    this.config = Object.freeze({
      provider: this.providerFor(options.provider),
      model: options.model,
      toolExecution: options.toolExecution ?? "parallel",
      reserveTokens: options.reserveTokens ?? DEFAULT_RESERVE_TOKENS,
      system: Object.freeze([...(options.system ?? [])]),
      requestOptions: Object.freeze({ ...(options.requestOptions ?? {}) }),
    });
  }

  get state(): AgentState {
    return {
      messages: Object.freeze(this.history.messages.slice()),
      provider: this.config.provider.id,
      model: this.config.model,
      isRunning: this.running !== undefined,
      streaming: this.run?.streaming,
      pendingToolCalls: [...this.pending],
      queued: { steering: this.queues.steering.slice(), followUp: this.queues.followUp.slice() },
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
    const requestOptions = Object.freeze({ ...this.config.requestOptions, ...options });
    this.config = Object.freeze({ ...this.config, requestOptions });
    return requestOptions;
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
    this.queues.steering.push(...toMessages(input));
  }

  /** Queue a message delivered when the current run would otherwise stop. */
  followUp(input: PromptInput): void {
    this.queues.followUp.push(...toMessages(input));
  }

  /** Abort the run (stream and running tools). Returns the queued messages, which are removed from the queue. */
  abort(): AgentMessage[] {
    const queued = this.takeQueued();
    this.controller?.abort();
    return queued;
  }

  /** Take the queued steering and follow-up messages back, undelivered (the TUI's Alt+Up); the run goes on. */
  dequeue(): AgentMessage[] {
    return this.takeQueued();
  }

  /** Resolves when no run is going. */
  async waitForIdle(): Promise<void> {
    while (this.running) await this.running.catch(() => undefined);
  }

  /** Compact now (`/compact`). Throws NO_COMPACTION when no strategy handles it. */
  async compact(instructions?: string): Promise<CompactResult | undefined> {
    this.idle("compact");
    return compact(this.inputs(new AbortController().signal), new AbortController().signal, "manual", instructions);
  }

  /**
   * Run one tool call as if the model had made it (a front end's `!cmd`): validation, the `tool_call`
   * steps (rewrites, then permission rules and plan mode), execution and `tool_result`, with the usual
   * tool events. The result is returned, not added to history: the caller decides what the model sees.
   * `run`, if given, answers in the tool's place once the gates let the call through (a plugin's own runner).
   */
  runTool(
    call: { id?: string; name: string; arguments: Record<string, unknown> },
    signal: AbortSignal = new AbortController().signal,
    run?: ToolDefinition["execute"],
  ): Promise<ToolResultMessage> {
    const id = call.id ?? `user-${Date.now()}`;
    return runToolCall(this.inputs(signal), { type: "toolCall", id, name: call.name, arguments: call.arguments }, run);
  }

  /**
   * A child agent (the subagents plugin's `task`): a host of its own with this agent's providers, the given
   * tools and this agent's taps, copied through the one tap wrapper (every tool_call and tool_result tap;
   * the conversation-level ones unless their plugin is in `isolate`), then `taps`, attributed to `by`. Its
   * hooks see `{ id, depth }` one level deeper; its diagnostics reach this agent's listeners, after `label`.
   */
  fork(options: ForkOptions): Agent {
    const { config } = this;
    const child = {
      provider: options.provider ?? config.provider.id,
      model: options.model ?? config.model,
      toolExecution: options.toolExecution ?? config.toolExecution,
      reserveTokens: options.reserveTokens ?? config.reserveTokens,
      system: options.system,
      requestOptions: options.requestOptions ?? config.requestOptions,
    };
    return new Agent(this.host.fork(options), child, Object.freeze({ id: options.id, depth: this.scope.depth + 1 }));
  }

  /** A read-only view of the host's registries (the host itself stays the kernel's). */
  get view(): AgentView {
    return this.host;
  }

  /** Switch model (and provider) for the next request. */
  setModel(providerId: string, model: ModelInfo): void {
    this.config = Object.freeze({ ...this.config, provider: this.providerFor(providerId), model });
    this.history.hold = undefined; // another window: compaction decides afresh
  }

  /** Replace history (session resume, branch navigation). Not while running. */
  replaceMessages(messages: readonly AgentMessage[]): void {
    this.idle("replace history");
    this.history.replace(messages);
  }

  /** The loop's inputs for a run (or one call, one compaction) on `signal`. */
  private inputs(signal: AbortSignal): LoopInputs {
    const run: RunState = { signal, added: [], pending: this.pending };
    const config = () => this.config;
    return { host: this.host, agent: this.scope, config, history: this.history, queues: this.queues, run };
  }

  private idle(what: string): void {
    if (this.running) throw new CoilError("AGENT_BUSY", `cannot ${what} while a run is going; wait for it or abort it`);
  }

  private takeQueued(): AgentMessage[] {
    return [...this.queues.steering.splice(0), ...this.queues.followUp.splice(0)];
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
    const inputs = this.inputs(controller.signal);
    this.run = inputs.run;
    this.host.emit({ type: "agent_start" });
    const run = (async (): Promise<RunResult> => {
      try {
        const outcome = await runLoop(inputs, input);
        const result: RunResult = { ...outcome, messages: inputs.run.added, unsent: this.takeQueued() };
        this.host.emit({
          type: "agent_end",
          stopReason: outcome.stopReason,
          reason: outcome.reason ?? outcome.error,
          messages: result.messages,
          unsent: result.unsent,
        });
        return result;
      } finally {
        this.pending.clear();
        this.controller = undefined;
        this.running = undefined;
        this.run = undefined;
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
