/**
 * cost-audit: per model request, the prompt tokens, cache reads and writes, output and cost, and how
 * many prompt tokens missed the cache compared with the request before, with the reason (model
 * change, system prompt or tool change, compaction, idle past the cache lifetime). Records are stored
 * in the session as plugin state; `/cost` and `coil sessions stats <id>` print them (docs/context.md).
 */
import { Type, definePlugin, usageTotal, type AgentMessage, type ModelRequest } from "../../api/index.js";
import type {} from "../session-jsonl/api.js"; // types the `session` service
import type {} from "../mcp/api.js";
import type {} from "../tool-search/api.js"; // types the `tool-search` service
import { subagentRunOf, subagentTotals } from "../../lib/subagent-usage.js";
import {
  AUDIT_TYPE,
  audit,
  formatReport,
  formatSubagents,
  lastRecord,
  recordsFrom,
  snapshot,
  type EntryLike,
  type Snapshot,
  type TurnAudit,
} from "./audit.js";

export type { CostAuditService, SessionStatsService } from "./api.js";
export { audit, snapshot, recordsFrom, lastRecord, formatReport, AUDIT_TYPE, type TurnAudit } from "./audit.js";

export const CostAuditOptions = Type.Object({
  /** How long the provider keeps a prompt cache without use (Anthropic's default is 5 minutes). */
  cacheTtlSeconds: Type.Integer({ minimum: 1, default: 300 }),
});

export default definePlugin({
  id: "cost-audit",
  description: "Per-request cache and cost audit: /cost, coil sessions stats",
  options: CostAuditOptions,
  setup(ctx) {
    const ttl = ctx.options.cacheTtlSeconds * 1000;
    const records: TurnAudit[] = [];
    let pending: Snapshot | undefined;
    let compacted = false;
    let prev: TurnAudit | undefined;
    let loaded = false;
    const session = () => ctx.services.get("session");
    const sessionPath = (): readonly EntryLike[] | undefined => {
      try {
        return session()?.path();
      } catch {
        return undefined; // not open (no session in this run)
      }
    };

    // After every other tap: the hashes describe what the provider really receives.
    ctx.tap(
      "before_request",
      (request: ModelRequest) => {
        // MCP servers' tool lists and tool search's loaded set are what change the tools between requests.
        const causes = [ctx.services.get("mcp")?.toolsChangedBy(), ctx.services.get("tool-search")?.toolsChangedBy()];
        const toolsCause = causes.filter(Boolean).join("; ") || undefined;
        pending = { ...snapshot(request), toolsCause };
        return undefined;
      },
      { stage: 10_000 },
    );
    ctx.on("compaction", () => {
      compacted = true;
    });
    ctx.tap("turn_end", (turn) => {
      const m = turn.message;
      const u = m.usage;
      if ((m.stopReason === "error" || m.stopReason === "aborted") && usageTotal(u) === 0) return;
      if (!loaded) {
        loaded = true;
        // A resumed session: compare the first request with the last one recorded before.
        const path = sessionPath();
        if (path) prev = lastRecord(path, ttl, m);
      }
      const snap = pending ?? { at: m.timestamp, provider: m.provider, model: m.model, systemHash: "", toolsHash: "" };
      pending = undefined;
      const rec = audit(snap, m, prev, { compacted, cacheTtlMs: ttl });
      compacted = false;
      prev = rec;
      records.push(rec);
      const s = session();
      if (!s) return;
      try {
        s.appendCustom(AUDIT_TYPE, rec);
      } catch {
        // no open session (e.g. tests without one): the record stays in memory
      }
    });

    const render = (entries: readonly EntryLike[], o: { json?: boolean; title?: string; width?: number } = {}) => {
      const list = recordsFrom(entries, ttl);
      const total = (k: "prompt" | "cacheRead" | "cacheWrite" | "output" | "cost" | "missed") =>
        list.reduce((s, r) => s + r[k], 0);
      // Sub-agents' usage rides on the task results (their requests are in their own sessions).
      const children = subagentTotals(
        entries.map((e) => (e.type === "message" ? (e.message as AgentMessage) : undefined)),
      );
      if (!o.json) return formatReport(list, o.title, o.width) + formatSubagents(children, total("cost"));
      const totals = {
        requests: list.length,
        prompt: total("prompt"),
        cacheRead: total("cacheRead"),
        cacheWrite: total("cacheWrite"),
        output: total("output"),
        cost: total("cost"),
        missed: total("missed"),
      };
      if (children.size === 0) return JSON.stringify({ requests: list, totals }, null, 2);
      const childCost = [...children.values()].reduce((s, t) => s + t.usage.cost.total, 0);
      return JSON.stringify(
        {
          requests: list,
          totals: { ...totals, costWithSubagents: totals.cost + childCost },
          subagents: Object.fromEntries(children),
        },
        null,
        2,
      );
    };
    ctx.services.provide("session-stats", { render });
    ctx.services.provide("cost-audit", { records: () => records });

    ctx.commands.register({
      name: "cost",
      description: "tokens, cache use and cost of each request in this session, and why the cache missed",
      run(_args, agent) {
        const path = sessionPath();
        const children = agent.state.messages
          .filter((m) => subagentRunOf(m))
          .map((message) => ({ type: "message", message }));
        const entries: readonly EntryLike[] = path ?? [
          ...records.map((r) => ({ type: "custom", customType: AUDIT_TYPE, data: r })),
          ...children,
        ];
        // in a terminal (the TUI), the table fits its width
        const width = process.stdout.isTTY ? process.stdout.columns : undefined;
        return render(entries, { title: path ? `session ${session()!.id}` : "this run (no session)", width });
      },
    });
  },
});
