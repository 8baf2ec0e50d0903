/**
 * The MCP connections: one SDK `Client` per server, connected in parallel with a per-server start-up
 * timeout; tools, prompts and resources as coil tools and slash commands. Loaded (with the SDK) only
 * when at least one server is configured.
 *
 * Longer than ~350 lines on purpose: one class owns each server's whole life (connect, time out,
 * list changes, reconnect, close) over state those steps share; the schema and result conversions
 * are already apart in their own files.
 */
import { join } from "node:path";
import { Compile } from "typebox/compile";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  McpError,
  PromptListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type Prompt,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import {
  CoilError,
  messageOf,
  type ImageContent,
  type PromptInput,
  type SlashCommand,
  type TextContent,
  type ToolDefinition,
  type ToolOutput,
  type TSchema,
  Type,
} from "../../api/index.js";
import { callSignal } from "../../lib/abort.js";
import { DEFAULT_STARTUP_MS, packageRunner, type ServerConfig, startupTimeoutOf } from "./config.js";
import { mapContent, resourceBlock, toToolOutput, withinBudget } from "./results.js";
import { GroupStdioTransport } from "./stdio.js";
import type { ServerStatus } from "./api.js";
import type {} from "../tool-search/api.js"; // types ToolDefinition.deferLoading

export interface ManagerOptions {
  servers: readonly ServerConfig[];
  cwd: string;
  /** The servers' environment; `MCP_TIMEOUT` in it sets the start-up timeout. */
  env: NodeJS.ProcessEnv;
  /** Directory for the servers' stderr logs. */
  logDir: string;
  /** The plugin's `startupTimeout` option (ms), when set (see startupTimeoutOf). */
  startupTimeout?: number;
  toolTimeout: number;
  version: string;
  /** A server's tools or prompts changed (at connect, reconnect or `list_changed`). */
  onChange(server: string, what: "tools" | "prompts", cause: string): void;
  /** `notice`: good news the user waits for (a late server connected), shown also where info is not. */
  report(level: "warn" | "error" | "info" | "notice", message: string): void;
}

interface Conn {
  config: ServerConfig;
  status: ServerStatus["status"];
  client?: Client;
  transport?: Transport;
  tools: Tool[];
  prompts: Prompt[];
  error?: string;
  stderr: string;
  transportUsed?: string;
  /** Tools already reported as unusable (reported once). */
  reported: Set<string>;
  /** Bumped by each connect and disconnect: a start-up that timed out must not go on connecting. */
  generation: number;
}

const STDERR_TAIL = 2000;
/** The longest a package runner may take to start (and, should coil die meanwhile, to finish installing). */
const RUNNER_GRACE_S = 300;

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/** `mcp__<server>__<name>`, with anything a provider API rejects replaced by `_`, at most 64 characters. */
export function mcpName(server: string, name: string): string {
  const clean = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, "_");
  return `mcp__${clean(server)}__${clean(name)}`.slice(0, 64);
}

export class McpManager {
  private readonly conns = new Map<string, Conn>();
  /** Tool lists being fetched again after `list_changed`. */
  private readonly refreshing = new Set<Promise<void>>();

  constructor(private readonly o: ManagerOptions) {
    for (const config of o.servers)
      this.conns.set(config.name, {
        config,
        status: "pending",
        tools: [],
        prompts: [],
        stderr: "",
        generation: 0,
        reported: new Set(),
      });
  }

  /** Connect every server in parallel; failures are reported once each and never thrown. */
  async startAll(): Promise<void> {
    await Promise.all([...this.conns.values()].map((c) => this.connect(c)));
  }

  /** Add (or replace, by name) servers after start-up and connect them; failures are reported, never thrown. */
  async add(configs: readonly ServerConfig[]): Promise<void> {
    const added: Conn[] = [];
    for (const config of configs) {
      const old = this.conns.get(config.name);
      if (old) await this.disconnect(old);
      const c: Conn = {
        config,
        status: "pending",
        tools: [],
        prompts: [],
        stderr: "",
        generation: (old?.generation ?? 0) + 1,
        reported: new Set(),
      };
      this.conns.set(config.name, c);
      added.push(c);
    }
    await Promise.all(added.map((c) => this.connect(c)));
  }

  async reconnect(name: string): Promise<string> {
    const c = this.conns.get(name);
    if (!c) return `no MCP server named '${name}' (configured: ${[...this.conns.keys()].join(", ") || "none"})`;
    await this.disconnect(c);
    await this.connect(c);
    return c.status === "connected"
      ? `${name}: reconnected, ${c.tools.length} tools, ${c.prompts.length} prompts`
      : `${name}: ${c.error}`;
  }

  private async connect(c: Conn): Promise<void> {
    const { config } = c;
    const { ms: timeout, from } = startupTimeoutOf(config, this.o.env, this.o.startupTimeout);
    const runner = packageRunner(config.transport);
    c.status = "connecting";
    c.error = undefined;
    c.stderr = "";
    const generation = ++c.generation;
    const began = Date.now();
    const starting = this.open(c, generation, runner ? RUNNER_GRACE_S * 1000 : timeout).then(() =>
      this.initialized(c, generation),
    );
    try {
      await withTimeout(starting, timeout);
    } catch (error) {
      if (!(error instanceof StartupTimeout) || !runner || c.generation !== generation) {
        starting.catch(() => undefined);
        await this.failed(c, generation, error, timeout, from);
        return;
      }
      // A package runner that is not ready may still be downloading: killing it mid-install can leave its
      // cache broken for good (npx's ERR_MODULE_NOT_FOUND on every later start). It goes on in the background.
      c.error = `still starting after ${seconds(timeout)}: it may still be downloading (${runner}); it connects when it is ready`;
      this.o.report(
        "warn",
        `MCP server '${config.name}' did not finish start-up within ${seconds(timeout)} (${from}); it may still be downloading (${runner}). coil lets it finish in the background and connects it when it is ready (MCP_TIMEOUT=<ms> waits longer at start).`,
      );
      starting.then(
        () =>
          this.o.report(
            "notice",
            `MCP server '${config.name}' connected after ${seconds(Date.now() - began)}: its ${c.tools.length} tools join at the next request`,
          ),
        (late) =>
          this.failed(c, generation, late, RUNNER_GRACE_S * 1000, "the longest coil waits for a package runner"),
      );
    }
  }

  /** After `initialize`: list tools and prompts, watch for changes, and mark the server connected. */
  private async initialized(c: Conn, generation: number): Promise<void> {
    const { config } = c;
    if (c.generation !== generation) throw new Error("start-up was abandoned");
    const client = c.client!;
    const caps = client.getServerCapabilities() ?? {};
    c.tools = caps.tools ? await this.listTools(client) : [];
    c.prompts = caps.prompts ? await this.listPrompts(client) : [];
    if (c.generation !== generation) throw new Error("start-up was abandoned");
    c.status = "connected";
    c.error = undefined;
    if (c.transport instanceof GroupStdioTransport) c.transport.connected();
    client.onclose = () => {
      if (c.client !== client || c.status !== "connected") return; // closed by us
      c.status = "failed";
      c.error = this.ending(c, "during the session");
      this.o.report(
        "error",
        `MCP server '${config.name}' stopped: ${c.error}. Its tools fail until /mcp reconnect ${config.name}.`,
      );
    };
    if (caps.tools?.listChanged) {
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        const refresh = this.listTools(client).then(
          (tools) => {
            c.tools = tools;
            this.o.onChange(config.name, "tools", "notifications/tools/list_changed");
          },
          (error) =>
            this.o.report(
              "warn",
              `server '${config.name}': could not refresh its tools after list_changed: ${mcpMessage(error)}`,
            ),
        );
        this.refreshing.add(refresh);
        void refresh.finally(() => this.refreshing.delete(refresh));
      });
    }
    if (caps.prompts?.listChanged) {
      client.setNotificationHandler(PromptListChangedNotificationSchema, async () => {
        c.prompts = await this.listPrompts(client).catch(() => c.prompts);
        this.o.onChange(config.name, "prompts", "notifications/prompts/list_changed");
      });
    }
    this.o.onChange(config.name, "tools", "connected");
    this.o.onChange(config.name, "prompts", "connected");
  }

  /** How a server's connection ended, `when` (`during the session`, `during this call`), with its last stderr line. */
  private ending(c: Conn, when: string, transport = c.transport): string {
    const t = transport instanceof GroupStdioTransport ? transport : undefined;
    if (t?.failure) return t.failure;
    const tail =
      c.stderr.trim() && c.config.transport.type === "stdio"
        ? `; its last stderr line: ${c.stderr.trim().split("\n").at(-1)} (log: ${this.logFile(c.config.name)})`
        : "";
    return `the ${c.config.transport.type === "stdio" ? `server ${t?.ended ?? "exited"}` : "connection closed"} ${when}${tail}`;
  }

  /** A start-up that failed (or timed out): reported once with the stderr tail, the server stopped. */
  private async failed(c: Conn, generation: number, error: unknown, timeout: number, from: string): Promise<void> {
    if (c.generation !== generation) return;
    const { config } = c;
    const t = c.transport instanceof GroupStdioTransport ? c.transport : undefined;
    const ended = t?.ended;
    const failure = t?.failure;
    await this.disconnect(c);
    c.status = "failed";
    const tail =
      c.stderr.trim() && config.transport.type === "stdio"
        ? `\n  stderr (last lines; full log ${this.logFile(config.name)}):\n${c.stderr
            .trim()
            .split("\n")
            .slice(-10)
            .map((l) => `    ${l}`)
            .join("\n")}`
        : "";
    if (failure) c.error = failure;
    else if (error instanceof StartupTimeout)
      c.error = `did not finish start-up within ${seconds(timeout)} (${from}); raise startupTimeout in its configuration, or set MCP_TIMEOUT=<ms>, if it is just slow`;
    else if (ended && /Connection closed/i.test(messageOf(error)))
      c.error = `the server ${ended} during start-up; see its stderr`;
    else c.error = describeError(error);
    this.o.report("error", `MCP server '${config.name}' (${config.source}) is not available: ${c.error}${tail}`);
  }

  private logFile(name: string): string {
    return join(this.o.logDir, `${name.replace(/[^A-Za-z0-9_.-]/g, "_")}.log`);
  }

  /** Open the transport and run `initialize`; http falls back to SSE when Streamable HTTP is refused. */
  private async open(c: Conn, generation: number, initTimeout: number): Promise<void> {
    const t = c.config.transport;
    const client = () => new Client({ name: "coil", version: this.o.version }, { capabilities: {} });
    if (t.type === "stdio") {
      const runner = packageRunner(t);
      const transport = new GroupStdioTransport(t, {
        cwd: this.o.cwd,
        env: this.o.env,
        logFile: this.logFile(c.config.name),
        onStderr: (text) => {
          c.stderr = (c.stderr + text).slice(-STDERR_TAIL);
        },
        onWarning: (message) => this.o.report("warn", `MCP server '${c.config.name}' ${message}`),
        // Should coil die while a package runner installs, the download may finish before the group is stopped.
        graceSeconds: runner ? RUNNER_GRACE_S : 0,
      });
      c.transport = transport;
      c.client = client();
      c.transportUsed = "stdio";
      await c.client.connect(transport, { timeout: initTimeout });
      return;
    }
    const url = new URL(t.url);
    const requestInit = { headers: t.headers };
    const sse = async () => {
      if (c.generation !== generation) throw new Error("start-up was abandoned"); // timed out meanwhile
      c.transport = new SSEClientTransport(url, {
        requestInit,
        eventSourceInit: {
          fetch: (u, init) =>
            fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), ...t.headers } }),
        },
      });
      c.client = client();
      c.transportUsed = "sse";
      await c.client.connect(c.transport, { timeout: initTimeout });
    };
    if (t.type === "sse") return sse();
    try {
      c.transport = new StreamableHTTPClientTransport(url, { requestInit });
      c.client = client();
      c.transportUsed = "http";
      await c.client.connect(c.transport, { timeout: initTimeout });
    } catch (streamable) {
      await c.client?.close().catch(() => undefined);
      try {
        await sse();
      } catch (legacy) {
        c.transportUsed = "http";
        throw new Error(
          `Streamable HTTP failed (${describeError(streamable)}), and so did the legacy SSE transport (${describeError(legacy)})`,
        );
      }
    }
  }

  private async listTools(client: Client): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, {
        timeout: this.o.startupTimeout ?? DEFAULT_STARTUP_MS,
      });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  private async listPrompts(client: Client): Promise<Prompt[]> {
    const prompts: Prompt[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listPrompts(cursor ? { cursor } : undefined, {
        timeout: this.o.startupTimeout ?? DEFAULT_STARTUP_MS,
      });
      prompts.push(...page.prompts);
      cursor = page.nextCursor;
    } while (cursor);
    return prompts;
  }

  /**
   * Close the connection and stop the server. With `release`, a package runner that is still starting is
   * left to finish its download instead (see GroupStdioTransport.release).
   */
  private async disconnect(c: Conn, o: { release?: boolean } = {}): Promise<void> {
    const { client, transport } = c;
    const installing = c.status === "connecting" && packageRunner(c.config.transport) !== undefined;
    c.generation++;
    c.client = undefined;
    c.transport = undefined;
    c.tools = [];
    c.prompts = [];
    if (o.release && installing && transport instanceof GroupStdioTransport) transport.release();
    else {
      await client?.close().catch(() => undefined);
      await transport?.close().catch(() => undefined);
    }
    if (c.status !== "failed") c.status = "closed";
  }

  /** Resolves when the tool lists asked for after `list_changed` have arrived (or after `ms`). */
  async settled(ms: number): Promise<void> {
    if (this.refreshing.size === 0) return;
    await withTimeout(Promise.all(this.refreshing), ms).catch(() => undefined);
  }

  /** Close every connection and kill every stdio server's process group (a package runner still installing is left to finish). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.conns.values()].map((c) => this.disconnect(c, { release: true })));
  }

  status(): ServerStatus[] {
    return [...this.conns.values()].map((c) => ({
      name: c.config.name,
      source: c.config.source,
      transport: c.transportUsed ?? c.config.transport.type,
      status: c.status,
      tools: c.tools.map((t) => mcpName(c.config.name, t.name)),
      prompts: c.prompts.map((p) => mcpName(c.config.name, p.name)),
      error: c.error,
    }));
  }

  /**
   * Every connected server's tools as coil tools, in configuration order, and `mcp_read_resource` when a
   * connected server offers resources (a tool the model could only fail with is not offered).
   */
  toolDefinitions(): ToolDefinition[] {
    const out = this.serverTools();
    const withResources = [...this.conns.values()]
      .filter((c) => c.status === "connected" && c.client?.getServerCapabilities()?.resources)
      .map((c) => c.config.name);
    if (withResources.length) out.push(this.resourceTool(withResources));
    return out;
  }

  private resourceTool(servers: string[]): ToolDefinition {
    return {
      name: "mcp_read_resource",
      label: "MCP resource",
      description: `Read a resource from an MCP server by its URI, or list a server's resources when uri is left out. Servers: ${servers.join(", ")}.`,
      parameters: Type.Object({
        server: Type.String({ description: "The MCP server's name" }),
        uri: Type.Optional(Type.String({ description: "The resource URI; leave out to list the server's resources" })),
      }),
      readOnly: true,
      execute: (args, run) => {
        const { server, uri } = args as { server: string; uri?: string };
        return this.readResource(server, uri, run.signal);
      },
    };
  }

  private serverTools(): ToolDefinition[] {
    const out: ToolDefinition[] = [];
    const seen = new Set<string>();
    for (const c of this.conns.values()) {
      for (const tool of c.tools) {
        const name = mcpName(c.config.name, tool.name);
        if (seen.has(name)) {
          this.o.report(
            "warn",
            `server '${c.config.name}': tool '${tool.name}' has the same coil name as another tool (${name}); it is left out`,
          );
          continue;
        }
        const unusable = schemaProblem(tool.inputSchema);
        if (unusable) {
          if (!c.reported.has(name))
            this.o.report(
              "warn",
              `server '${c.config.name}': tool '${tool.name}' is left out: its input schema cannot be used (${unusable})`,
            );
          c.reported.add(name);
          continue;
        }
        seen.add(name);
        out.push(this.toolFor(c, tool, name));
      }
    }
    return out;
  }

  private toolFor(c: Conn, tool: Tool, name: string): ToolDefinition {
    const server = c.config.name;
    const timeout = c.config.toolTimeout ?? this.o.toolTimeout;
    return {
      name,
      label: `${server} · ${tool.title ?? tool.annotations?.title ?? tool.name}`,
      description: tool.description?.trim() || `Tool '${tool.name}' of the MCP server '${server}'.`,
      parameters: tool.inputSchema as unknown as TSchema,
      readOnly: tool.annotations?.readOnlyHint === true,
      // Behind tool search when there are many (the tool-search plugin), unless the server is `alwaysLoad`.
      deferLoading: c.config.alwaysLoad !== true,
      execute: async (args, run): Promise<ToolOutput> => {
        const client = c.client;
        const transport = c.transport;
        if (!client || c.status !== "connected") {
          throw new Error(
            `the MCP server '${server}' is not connected (${c.error ?? c.status}); the user can try /mcp reconnect ${server}`,
          );
        }
        // The SDK adds an abort listener to the signal it is given and never removes it: give it one of
        // this call's own, so a run's signal does not collect a listener per call (MaxListenersExceededWarning).
        const scope = callSignal(run.signal);
        try {
          const result = await client.callTool(
            { name: tool.name, arguments: args as Record<string, unknown> },
            undefined,
            {
              signal: scope.signal,
              timeout,
              onprogress: (p) => {
                const of = p.total ? `${p.progress}/${p.total}` : `${p.progress}`;
                run.update({
                  content: [{ type: "text", text: `progress ${of}${p.message ? `: ${p.message}` : ""}` }],
                  details: { progress: p.progress, total: p.total, message: p.message },
                });
              },
            },
          );
          return toToolOutput(result as Record<string, unknown>, server, tool.name);
        } catch (error) {
          if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
            throw new Error(
              `${name} timed out after ${timeout / 1000} s (MCP server '${server}'); the request was cancelled. Try a smaller request; the user can raise toolTimeout for this server.`,
            );
          }
          const stdio = transport instanceof GroupStdioTransport ? transport : undefined;
          // The server went away (or coil stopped it) while this call was waiting: say so, not "during start-up".
          if (stdio?.failure || (error instanceof McpError && error.code === ErrorCode.ConnectionClosed))
            throw new Error(
              `${name} (MCP server '${server}') failed: ${this.ending(c, "during this call", transport)}. The user can restart it with /mcp reconnect ${server}.`,
            );
          throw new Error(`${name} (MCP server '${server}') failed: ${describeError(error)}`);
        } finally {
          scope.release();
        }
      },
    };
  }

  /** Every connected server's prompts as `/mcp__<server>__<prompt> args` commands. */
  promptCommands(): SlashCommand[] {
    const out: SlashCommand[] = [];
    for (const c of this.conns.values()) {
      for (const prompt of c.prompts) {
        const args = prompt.arguments ?? [];
        out.push({
          name: mcpName(c.config.name, prompt.name),
          description: `${prompt.description ?? prompt.title ?? prompt.name} (MCP prompt of ${c.config.name})`,
          argumentHint: args.map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)).join(" ") || undefined,
          run: async (text) => {
            if (!c.client) return `MCP server '${c.config.name}' is not connected: /mcp reconnect ${c.config.name}`;
            const given = parseArgs(
              text,
              args.map((a) => a.name),
            );
            const command = mcpName(c.config.name, prompt.name);
            const missing = args.filter((a) => a.required && !given[a.name]).map((a) => a.name);
            // A usage error, like any other: print mode exits 2, the TUI and editors show the message.
            if (missing.length)
              throw new CoilError(
                "MCP_PROMPT_USAGE",
                `/${command} needs ${missing.join(", ")}: /${command} ${args.map((a) => `${a.name}=...`).join(" ")}`,
                { plugin: "mcp" },
              );
            const result = await c.client
              .getPrompt({ name: prompt.name, arguments: given }, { timeout: this.o.toolTimeout })
              .catch((error: unknown) => {
                const invalid = error instanceof McpError && error.code === ErrorCode.InvalidParams;
                throw new CoilError(
                  invalid ? "MCP_PROMPT_USAGE" : "MCP_PROMPT_FAILED",
                  `/${command} (MCP server '${c.config.name}'): ${mcpMessage(error)}`,
                  { plugin: "mcp" },
                );
              });
            return { prompt: promptInput(result.messages as { role: string; content: { type: string } }[]) };
          },
        });
      }
    }
    return out;
  }

  /** `resources/read`, or the server's resource list when `uri` is empty. */
  async readResource(server: string, uri: string | undefined, signal: AbortSignal): Promise<ToolOutput> {
    const scope = callSignal(signal); // as in a tool call: the SDK's listeners go with this call
    try {
      return await this.readResourceWith(server, uri, scope.signal);
    } finally {
      scope.release();
    }
  }

  private async readResourceWith(server: string, uri: string | undefined, signal: AbortSignal): Promise<ToolOutput> {
    const c = this.conns.get(server);
    if (!c) throw new Error(`no MCP server named '${server}' (servers: ${[...this.conns.keys()].join(", ")})`);
    if (!c.client || c.status !== "connected")
      throw new Error(`the MCP server '${server}' is not connected (${c.error ?? c.status})`);
    if (!c.client.getServerCapabilities()?.resources) throw new Error(`the MCP server '${server}' offers no resources`);
    if (!uri) {
      const { resources } = await c.client.listResources(undefined, { signal, timeout: this.o.toolTimeout });
      const templates = await c.client.listResourceTemplates(undefined, { signal, timeout: this.o.toolTimeout }).then(
        (r) => r.resourceTemplates,
        () => [],
      );
      const lines = [
        ...resources.map(
          (r) =>
            `${r.uri}  ${r.name}${r.mimeType ? ` (${r.mimeType})` : ""}${r.description ? ` — ${r.description}` : ""}`,
        ),
        ...templates.map((t) => `${t.uriTemplate}  ${t.name} (template)${t.description ? ` — ${t.description}` : ""}`),
      ];
      return {
        content: withinBudget(
          [{ type: "text", text: lines.length ? lines.join("\n") : `${server} lists no resources` }],
          "Read a resource by its URI.",
        ).content,
      };
    }
    const result = await c.client.readResource({ uri }, { signal, timeout: this.o.toolTimeout });
    const content = result.contents.map((r) =>
      resourceBlock(r as { uri: string; text?: string; blob?: string; mimeType?: string }),
    );
    return {
      content: withinBudget(
        content.length ? content : [{ type: "text", text: `${uri} is empty` }],
        "The resource is larger than a tool result may be.",
      ).content,
      details: { server, uri },
    };
  }

  /** Text and images of `@server:uri` mentions, for the editor. */
  async mention(server: string, uri: string): Promise<(TextContent | ImageContent)[]> {
    return (await this.readResource(server, uri, new AbortController().signal)).content;
  }

  servers(): string[] {
    return [...this.conns.keys()];
  }
}

/** `a=1 b="two words"` pairs, else positional values in the prompt's argument order (the last takes the rest). */
export function parseArgs(text: string, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const pairs = [...text.matchAll(/(\w[\w-]*)=(?:"([^"]*)"|(\S+))/g)];
  if (pairs.length && pairs.every((m) => names.includes(m[1]!))) {
    for (const m of pairs) out[m[1]!] = m[2] ?? m[3] ?? "";
    return out;
  }
  const words = text.trim() ? text.trim().split(/\s+/) : [];
  names.forEach((name, i) => {
    const value = i === names.length - 1 ? words.slice(i).join(" ") : words[i];
    if (value) out[name] = value;
  });
  return out;
}

function promptInput(messages: { role: string; content: { type: string } }[]): PromptInput {
  const content = messages.flatMap((m) =>
    mapContent([m.content as { type: string }]).map((c) =>
      m.role === "assistant" && c.type === "text" ? { ...c, text: `(assistant) ${c.text}` } : c,
    ),
  );
  if (content.every((c) => c.type === "text")) return content.map((c) => (c as TextContent).text).join("\n\n");
  return { role: "user", content, timestamp: Date.now() };
}

/**
 * An MCP error's text without the SDK's doubled prefix: a server built on the SDK already writes
 * `MCP error -32602: ...` into its message, and the client's McpError adds it again.
 */
export function mcpMessage(error: unknown): string {
  return messageOf(error).replace(/(MCP error -?\d+: )(?:MCP error -?\d+: )+/g, "$1");
}

function describeError(error: unknown): string {
  let text = mcpMessage(error);
  // fetch() hides the reason (ECONNREFUSED, a DNS failure) in its cause.
  const cause = (error as { cause?: unknown })?.cause;
  if (cause instanceof Error && !text.includes(cause.message)) text = `${text}: ${cause.message}`;
  if (/Connection closed/i.test(text) && !/during start-up/.test(text))
    return `the server closed the connection during start-up (${text}); see its stderr`;
  return text;
}

/** Why coil cannot validate arguments against this schema (e.g. an invalid `pattern`), or undefined. */
function schemaProblem(schema: unknown): string | undefined {
  try {
    Compile(schema as TSchema);
    return undefined;
  } catch (error) {
    return messageOf(error);
  }
}

class StartupTimeout extends Error {}

/** `promise`, or a StartupTimeout after `ms`. */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new StartupTimeout(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
