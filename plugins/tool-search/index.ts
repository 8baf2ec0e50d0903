/**
 * tool-search: deferred tools. Above a threshold (bytes or count of the definitions of deferrable tools:
 * MCP tools, and tools that set `deferLoading` or match the `defer` option), their definitions are left
 * out of requests and the model gets `tool_search`, whose description names them. A search (keywords
 * ranked with BM25, a regular expression, or `select:<name>`) loads the matches: from the next request on
 * their full definitions are in `tools`. Tools found or used stay loaded for the session (resume included).
 * The tap runs after the plugins that narrow the tool list (plan mode, allowed-tools, a sub-agent's own
 * registry), so a search finds only what the request could have offered. `ENABLE_TOOL_SEARCH` (Claude
 * Code's variable) sets the mode. See docs/mcp.md#tool-search.
 */
import picomatch from "picomatch";
import {
  Type,
  definePlugin,
  type AgentMessage,
  type AgentScope,
  type ModelInfo,
  type ModelRequest,
  type Static,
  type ToolOutput,
  type ToolSpec,
} from "../../api/index.js";
import { addDoctorSection } from "../../lib/doctor.js";
import type {} from "../session-jsonl/api.js"; // types the `session` service
import type {} from "../skills/api.js"; // types the `skills` service
import type {} from "../mcp/api.js"; // types the `mcp` service
import type { ToolSearchService, ToolSearchStatus } from "./api.js";
import { find, splitMcpName, toolEntry, type Entry } from "./catalog.js";

export type { ToolSearchService, ToolSearchStatus } from "./api.js";
export { find, normalize, splitMcpName, toolEntry, type Entry } from "./catalog.js";

export const SEARCH_TOOL = "tool_search";

export const ToolSearchOptions = Type.Object({
  /** `auto`: defer above the thresholds; `always`: defer whenever there is a deferrable tool; `never`. */
  mode: Type.Union([Type.Literal("auto"), Type.Literal("always"), Type.Literal("never")], { default: "auto" }),
  /** In `auto` mode, defer when the deferrable tools' definitions take more than this many bytes (JSON). */
  thresholdBytes: Type.Integer({ minimum: 0, default: 20_000 }),
  /** ... or when there are more than this many deferrable tools (0: no count limit). */
  thresholdTools: Type.Integer({ minimum: 0, default: 40 }),
  /** Tools always sent in full, never deferred: names or globs (`mcp__github__create_issue`, `mcp__memory__*`). */
  pin: Type.Array(Type.String(), { default: [] }),
  /** More tools to defer besides MCP tools and those that set `deferLoading`: names or globs. */
  defer: Type.Array(Type.String(), { default: [] }),
  /** Tools a search loads at most (the model may ask for up to 20). */
  maxResults: Type.Integer({ minimum: 1, maximum: 20, default: 5 }),
  /** Bytes of deferred tool names the search tool's description lists; past it, servers with their tool counts. */
  listBytes: Type.Integer({ minimum: 0, default: 4096 }),
  /** Also search the installed skills' full descriptions when the skills index had to shorten them. */
  skills: Type.Boolean({ default: true }),
});
type Options = Static<typeof ToolSearchOptions>;
type Mode = Options["mode"];

const SearchParams = Type.Object({
  query: Type.Optional(
    Type.String({
      description:
        "Words for what you need (e.g. `create github issue`), a tool or server name; +word requires a word; `select:name1,name2` loads tools by exact name",
    }),
  ),
  pattern: Type.Optional(
    Type.String({ description: "Instead of query: a regular expression over tool names and descriptions" }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, description: "Most tools to load" })),
});

/** One conversation's tools: the main agent's in a session, or one sub-agent's. */
interface Conversation {
  /** Deferrable tools found by a search or called: sent in full from then on. */
  loaded: Set<string>;
  /** What was loaded since the previous request (the cost audit's cause). */
  changes: string[];
  /** The deferrable tools the latest request could have offered: what a search looks through. */
  offered: readonly ToolSpec[];
  /** Tool names and the search tool's text of the latest request; a change is a cache miss. */
  signature?: string;
  active?: boolean;
  reason: string;
  /** Names of the latest request's tools, and of the deferrable ones among what it could offer. */
  sent: readonly string[];
  candidates: readonly string[];
}

/** Claude Code's `ENABLE_TOOL_SEARCH`: true, false, auto, auto:N (N% of the context window). */
export function parseEnableToolSearch(
  value: string | undefined,
): { mode: Mode; percent?: number } | { error: string } | undefined {
  const v = value?.trim().toLowerCase();
  if (!v) return undefined;
  if (v === "true" || v === "1") return { mode: "always" };
  if (v === "false" || v === "0") return { mode: "never" };
  if (v === "auto") return { mode: "auto" };
  const m = /^auto:(\d+(?:\.\d+)?)$/.exec(v);
  if (m && Number(m[1]) <= 100) return { mode: "auto", percent: Number(m[1]) };
  return { error: `ENABLE_TOOL_SEARCH=${value} is not one of true, false, auto, auto:N (N from 0 to 100)` };
}

const fmt = (n: number) => n.toLocaleString("en-US");
const first = (text: string, max: number) => {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1).trimEnd()}…` : line;
};

export default definePlugin({
  id: "tool-search",
  description: "Deferred tools: MCP tools behind a search when there are many (tool_search); /tools",
  options: ToolSearchOptions,
  setup(ctx) {
    const o = ctx.options;
    const env = parseEnableToolSearch(process.env.ENABLE_TOOL_SEARCH);
    const envError = env && "error" in env ? env.error : undefined;
    const fromEnv = env && !("error" in env) ? env : undefined;
    const mode: Mode = fromEnv?.mode ?? o.mode;
    const modeSource = fromEnv ? `ENABLE_TOOL_SEARCH=${process.env.ENABLE_TOOL_SEARCH}` : "the mode option";
    if (envError) ctx.onStart(() => ctx.log.warn(`${envError}; using the tool-search mode option (${o.mode})`));
    const pinned = o.pin.length ? picomatch(o.pin) : () => false;
    const deferred = o.defer.length ? picomatch(o.defer) : () => false;
    const deferrable = (name: string) =>
      name !== SEARCH_TOOL && !pinned(name) && (deferred(name) || ctx.tools.get(name)?.deferLoading === true);

    // Bytes of a definition, cached by its schema object (the registry hands over the same one each request).
    const sizes = new WeakMap<object, number>();
    const bytesOf = (t: ToolSpec) => {
      let n = sizes.get(t.parameters);
      if (n === undefined) {
        n = Buffer.byteLength(JSON.stringify(t.parameters));
        sizes.set(t.parameters, n);
      }
      return n + Buffer.byteLength(t.name) + Buffer.byteLength(t.description);
    };
    const decide = (tools: readonly ToolSpec[], model: ModelInfo): { active: boolean; reason: string } => {
      if (tools.length === 0) return { active: false, reason: "no deferrable tools" };
      const bytes = tools.reduce((n, t) => n + bytesOf(t), 0);
      const what = `${tools.length} deferrable tools, ${fmt(bytes)} bytes`;
      if (mode === "never") return { active: false, reason: `${what}: off (${modeSource})` };
      if (mode === "always") return { active: true, reason: `${what}: always on (${modeSource})` };
      if (fromEnv?.percent !== undefined) {
        const limit = Math.floor((model.contextWindow * 4 * fromEnv.percent) / 100);
        const over = bytes > limit;
        return {
          active: over,
          reason: `${what}: ${over ? "over" : "within"} ${fromEnv.percent}% of the context window (${fmt(limit)} bytes, ${modeSource})`,
        };
      }
      const over = bytes > o.thresholdBytes || (o.thresholdTools > 0 && tools.length > o.thresholdTools);
      return {
        active: over,
        reason: `${what}: ${over ? "over" : "within"} the threshold of ${fmt(o.thresholdBytes)} bytes${o.thresholdTools > 0 ? ` or ${o.thresholdTools} tools` : ""}`,
      };
    };

    // ─── conversations: the main agent's per session, and each sub-agent's ───
    const conversations = new Map<string, Conversation>();
    const sessionId = () => {
      try {
        return ctx.services.get("session")?.id ?? "";
      } catch {
        return "";
      }
    };
    /** The main agent's conversation is keyed by its session; a child agent's by its id too. */
    const MAIN: AgentScope = { id: "main", depth: 0 };
    const keyOf = (agent: AgentScope) => `${sessionId()}|${agent.depth > 0 ? agent.id : ""}`;
    const usedIn = (messages: Iterable<AgentMessage>, into: Set<string>) => {
      for (const m of messages) {
        if (m.role === "assistant") {
          for (const c of m.content) if (c.type === "toolCall" && c.name !== SEARCH_TOOL) into.add(c.name);
        } else if (m.role === "toolResult" && m.toolName === SEARCH_TOOL) {
          const loaded = (m.details as { loaded?: unknown } | undefined)?.loaded;
          if (Array.isArray(loaded)) for (const n of loaded) if (typeof n === "string") into.add(n);
        }
      }
    };
    /** The conversation's state; a resumed session's tools found or used before are loaded again. */
    const conversation = (agent: AgentScope, messages?: readonly AgentMessage[]): Conversation => {
      const key = keyOf(agent);
      let conv = conversations.get(key);
      if (conv) return conv;
      const loaded = restored(agent.depth > 0);
      if (messages) usedIn(messages, loaded);
      conv = { loaded, changes: [], offered: [], reason: "no request yet", sent: [], candidates: [] };
      if (conversations.size > 500) conversations.delete(conversations.keys().next().value!);
      conversations.set(key, conv);
      return conv;
    };
    /** What a new conversation starts with loaded: its parent's (a sub-agent), or its session's history. */
    const restored = (child: boolean): Set<string> => {
      const loaded = new Set<string>();
      if (child) {
        // A sub-agent starts with what its parent found: its brief is usually about the same tools.
        for (const n of conversations.get(keyOf(MAIN))?.loaded ?? []) loaded.add(n);
      } else {
        try {
          const path = ctx.services.get("session")?.path() ?? [];
          usedIn(
            path.flatMap((e) => (e.type === "message" ? [(e as { message: AgentMessage }).message] : [])),
            loaded,
          );
        } catch {
          // no open session: the messages below are all there is
        }
      }
      return loaded;
    };

    // ─── the search tool's description: what is deferred, by server ───
    const listing = (tools: readonly ToolSpec[]): string => {
      const groups = new Map<string, string[]>();
      for (const t of tools) {
        const mcp = splitMcpName(t.name);
        const key = mcp ? mcp.server : "";
        const list = groups.get(key) ?? [];
        list.push(mcp ? mcp.tool : t.name);
        groups.set(key, list);
      }
      const mcp = [...groups].filter(([k]) => k);
      const other = groups.get("");
      const full = [
        ...(mcp.length
          ? ["MCP tools (call them as mcp__<server>__<tool>):", ...mcp.map(([s, l]) => `${s}: ${l.join(", ")}`)]
          : []),
        ...(other ? [`Other tools: ${other.join(", ")}`] : []),
      ].join("\n");
      if (Buffer.byteLength(full) <= o.listBytes) return full;
      return `Deferred tools by MCP server (search to see their names): ${[...groups].map(([s, l]) => `${s || "other"} (${l.length})`).join(", ")}`;
    };
    const skillSearch = () => {
      if (!o.skills) return false;
      try {
        const index = ctx.services.get("skills")?.index();
        return Boolean(index && index.level !== "full");
      } catch {
        return false;
      }
    };
    const specs = new Map<string, ToolSpec>();
    const searchSpec = (base: ToolSpec, waiting: readonly ToolSpec[], skills: boolean): ToolSpec => {
      const skillLine = skills
        ? "It also searches the installed skills' full descriptions (the skills index shortens them) and gives the SKILL.md to read."
        : "";
      const description = waiting.length
        ? [
            `Load tools that are not in your tool list yet: ${waiting.length} tools are deferred to keep requests small. Search with words for what you need, a tool or server name, or \`select:<name>,<name>\` for exact names (\`pattern\` takes a regular expression instead). Up to ${o.maxResults} matches are loaded: you can call them from your next reply on, and they stay loaded. ${skillLine}`.trim(),
            listing(waiting),
          ].join("\n\n")
        : `Search the installed skills by words for the task or by name: gives each match's full description and the SKILL.md to read (the skills index in the system prompt shortens their descriptions).`;
      let spec = specs.get(description);
      if (!spec) {
        spec = { name: base.name, description, parameters: base.parameters };
        if (specs.size > 20) specs.clear();
        specs.set(description, spec);
      }
      return spec;
    };

    let changedBy: string | undefined;
    const before = (request: ModelRequest, agent: AgentScope): ModelRequest | undefined => {
      const child = agent.depth > 0;
      if (!child) changedBy = undefined;
      const conv = conversation(agent, request.messages);
      const search = request.tools.find((t) => t.name === SEARCH_TOOL);
      const candidates = request.tools.filter((t) => deferrable(t.name));
      const verdict = decide(candidates, request.model);
      // Without the search tool (an allowed-tools list, a sub-agent's own list) nothing can be deferred.
      const active = Boolean(search) && verdict.active;
      const skills = Boolean(search) && skillSearch();
      const waiting = active ? candidates.filter((t) => !conv.loaded.has(t.name)) : [];
      const tools = request.tools.flatMap((t): ToolSpec[] => {
        if (t.name === SEARCH_TOOL) return active || skills ? [searchSpec(t, waiting, skills)] : [];
        return active && !conv.loaded.has(t.name) && deferrable(t.name) ? [] : [t];
      });
      conv.offered = active ? candidates : [];
      conv.reason = search
        ? verdict.reason
        : `${verdict.reason}; ${SEARCH_TOOL} is not offered here, so nothing is deferred`;
      conv.sent = tools.map((t) => t.name);
      conv.candidates = candidates.map((t) => t.name);
      const signature = JSON.stringify(tools.map((t) => (t.name === SEARCH_TOOL ? t.description : t.name)));
      if (conv.signature !== undefined && conv.signature !== signature) {
        const causes = [...conv.changes];
        if (conv.active !== active) causes.unshift(`tool search turned ${active ? "on" : "off"}: ${verdict.reason}`);
        if (!child && causes.length) changedBy = causes.join("; ");
      }
      conv.changes = [];
      conv.signature = signature;
      conv.active = active;
      const same = tools.length === request.tools.length && tools.every((t, i) => t === request.tools[i]);
      return same ? undefined : { ...request, tools };
    };
    // After the plugins that narrow the tools (plan mode, allowed-tools: DEFAULT and -50) and before
    // system-prompt (LATE), so the prompt describes the tools the provider receives.
    ctx.tap("before_request", (request, turn) => before(request, turn.agent), { stage: 90 });
    ctx.tap("turn_end", (turn) => {
      const conv = conversation(turn.agent);
      for (const c of turn.message.content) {
        if (c.type !== "toolCall" || c.name === SEARCH_TOOL || conv.loaded.has(c.name) || !deferrable(c.name)) continue;
        conv.loaded.add(c.name);
        conv.changes.push(`${c.name} was called without a search`);
      }
    });

    const skillEntries = (): Entry[] => {
      if (!skillSearch()) return [];
      return (ctx.services.get("skills")?.list() ?? [])
        .filter((s) => !s.disableModelInvocation)
        .map((s) => ({ kind: "skill", name: s.name, description: s.description, params: "", location: s.file }));
    };

    // Which agent a search call is for (a tool's run context does not say): noted when the call is gated.
    const callers = new Map<string, AgentScope>();
    ctx.tap(
      "tool_call",
      (info) => {
        if (info.call.name === SEARCH_TOOL) {
          if (callers.size > 200) callers.clear();
          callers.set(info.call.id, info.agent);
        }
        return undefined;
      },
      { stage: "FALLBACK" },
    );

    async function runSearch(args: Static<typeof SearchParams>, callId: string): Promise<ToolOutput> {
      const agent = callers.get(callId) ?? MAIN;
      callers.delete(callId);
      const conv = conversation(agent);
      const limit = Math.min(args.limit ?? o.maxResults, 20);
      const pool = [...conv.offered.map(toolEntry), ...skillEntries()];
      if (pool.length === 0)
        return {
          content: [
            {
              type: "text",
              text: "No deferred tools or skills to search here: every tool you can use is already in your tool list.",
            },
          ],
        };
      const found = await find(pool, { query: args.query, pattern: args.pattern, limit });
      const tools = found.matches.filter((e) => e.kind === "tool");
      const skills = found.matches.filter((e) => e.kind === "skill");
      const fresh = tools.filter((t) => !conv.loaded.has(t.name));
      for (const t of fresh) {
        conv.loaded.add(t.name);
        conv.changes.push(`${SEARCH_TOOL} loaded ${t.name}`);
      }
      // Tools that match but that this request could not offer (plan mode, allowed-tools, this agent's list).
      const offered = new Set(conv.offered.map((t) => t.name));
      const elsewhere = ctx.tools
        .names()
        .filter((n) => deferrable(n) && !offered.has(n))
        .map((n) => ctx.tools.get(n)!)
        .map((t) => toolEntry({ name: t.name, description: t.description, parameters: t.parameters }));
      const hidden = elsewhere.length
        ? ((await find(elsewhere, { ...args, limit: 20 }).catch(() => undefined))?.matches.length ?? 0)
        : 0;
      const lines: string[] = [];
      if (tools.length)
        lines.push(
          `${fresh.length ? `Loaded ${fresh.length} tool${fresh.length === 1 ? "" : "s"}: call ${fresh.length === 1 ? "it" : "them"} from your next reply on (the full definitions are then in your tools).` : "These tools are already loaded."}`,
          ...tools.map(
            (t) =>
              `- ${t.name}${conv.loaded.has(t.name) && !fresh.includes(t) ? " (already loaded)" : ""}: ${first(t.description, 300)}`,
          ),
        );
      if (found.more && tools.length)
        lines.push(`(${found.more} more match: narrow the search, or load one with select:<name>.)`);
      if (skills.length)
        lines.push(
          "Skills (read the SKILL.md before you start, and follow it):",
          ...skills.map((s) => `- ${s.name}: ${first(s.description, 1100)} (${s.location})`),
        );
      if (!found.matches.length)
        lines.push(
          `Nothing matches ${args.pattern !== undefined ? `the pattern ${args.pattern}` : `"${args.query ?? ""}"`}. Try other words, a server name, or a shorter pattern.`,
        );
      if (hidden)
        lines.push(
          `${hidden} more tool${hidden === 1 ? " matches" : "s match"} that ${hidden === 1 ? "is" : "are"} not available here (plan mode, the command's allowed-tools or this agent's tool list leave ${hidden === 1 ? "it" : "them"} out).`,
        );
      return {
        content: [{ type: "text", text: lines.join("\n") }],
        details: { loaded: tools.map((t) => t.name), skills: skills.map((s) => s.name), more: found.more },
      };
    }

    ctx.tools.register({
      name: SEARCH_TOOL,
      label: "Tool search",
      description: "Load deferred tools by searching their names and descriptions.",
      promptSnippet: `${SEARCH_TOOL}: find and load tools that are not in your tool list yet (MCP tools when there are many)`,
      parameters: SearchParams,
      readOnly: true,
      execute: (args, run) => runSearch(args, run.toolCallId),
    });

    const status = (): ToolSearchStatus => {
      const conv = conversations.get(keyOf(MAIN));
      const sent = new Set(conv?.sent ?? []);
      return {
        mode,
        active: conv?.active ?? false,
        reason: conv?.reason ?? "no request yet",
        deferred: (conv?.candidates ?? []).filter((n) => !sent.has(n)),
        loaded: (conv?.candidates ?? []).filter((n) => sent.has(n)),
      };
    };
    const service: ToolSearchService = {
      skillSearch: o.skills ? SEARCH_TOOL : undefined,
      status,
      toolsChangedBy: () => changedBy,
    };
    ctx.services.provide("tool-search", service);

    const describe = async (): Promise<string> => {
      const s = status();
      const lines = [
        `tool search: ${s.active ? "on" : "off"} (${s.mode}${fromEnv ? `, from ${modeSource}` : ""}) — ${s.reason}`,
      ];
      if (!conversations.has(keyOf(MAIN))) {
        // Before the first request MCP tools are not in the tool list yet: say what will join it.
        const servers = ((await ctx.services.get("mcp")?.status()) ?? []).filter((x) => x.tools.length);
        const count = servers.reduce((n, x) => n + x.tools.length, 0);
        lines.push(
          count
            ? `the first request decides: ${count} MCP tools join the tool list then — ${servers.map((x) => `${x.name} (${x.tools.length})`).join(", ")}; run /tools again after it`
            : "the first request decides; run /tools again after it",
        );
      }
      if (s.active) {
        lines.push(
          `sent in full: ${s.loaded.length ? s.loaded.join(", ") : "none of them yet"} (found by ${SEARCH_TOOL}, or called)`,
        );
        const byServer = new Map<string, number>();
        for (const n of s.deferred) {
          const server = splitMcpName(n)?.server ?? "other";
          byServer.set(server, (byServer.get(server) ?? 0) + 1);
        }
        lines.push(
          `deferred (the model finds them with ${SEARCH_TOOL}): ${s.deferred.length} tools — ${[...byServer].map(([k, v]) => `${k} (${v})`).join(", ")}`,
        );
      }
      if (o.pin.length) lines.push(`pinned, always sent in full: ${o.pin.join(", ")}`);
      if (o.defer.length) lines.push(`deferred besides MCP tools: ${o.defer.join(", ")}`);
      if (envError) lines.push(`ignored: ${envError}`);
      return lines.join("\n");
    };
    ctx.commands.register({
      name: "tools",
      description: "which tools requests send in full and which wait behind tool search",
      run: () => describe(),
    });
    addDoctorSection(ctx, {
      title: "tool search",
      report: () =>
        [
          `mode: ${mode}${fromEnv ? ` (${modeSource})` : ""}; defers MCP tools${o.defer.length ? ` and ${o.defer.join(", ")}` : ""} above ${fmt(o.thresholdBytes)} bytes${o.thresholdTools ? ` or ${o.thresholdTools} tools` : ""} of definitions`,
          ...(o.pin.length ? [`pinned: ${o.pin.join(", ")}`] : []),
          ...(envError ? [`problem: ${envError}`] : []),
        ].join("\n"),
    });
  },
});
