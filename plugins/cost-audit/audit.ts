/**
 * Per-turn cache and cost records, and why prompt tokens missed the cache compared with the turn
 * before: another model, a changed system prompt or tool set, a compaction, or an idle gap longer
 * than the provider's cache lifetime.
 */
import { createHash } from "node:crypto";
import { emptyUsage, usageTotal, type AssistantMessage, type ModelRequest } from "../../api/index.js";
import { addUsage } from "../../lib/subagent-usage.js";

export const AUDIT_TYPE = "cost-audit";

export interface TurnAudit {
  v: 1;
  /** When the request was sent (ms since the epoch). */
  at: number;
  provider: string;
  model: string;
  systemHash: string;
  toolsHash: string;
  /** Prompt tokens: input + cache read + cache write. */
  prompt: number;
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  /** US dollars (from the provider's usage.cost.total). */
  cost: number;
  /** Prompt tokens the previous turn made cacheable that this turn did not read from the cache. */
  missed: number;
  /** Why, when something that invalidates the cache happened since the previous turn. */
  reasons: string[];
  /** A compaction happened between the previous turn and this one. */
  compacted?: boolean;
}

export interface Snapshot {
  at: number;
  provider: string;
  model: string;
  systemHash: string;
  toolsHash: string;
  /** What changed the tools for this request, when a plugin says (e.g. an MCP server's list_changed). */
  toolsCause?: string;
}

const hashText = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 16);

/**
 * A list's hash, by the array it was computed from (the system prompt plugin hands over the same blocks while
 * nothing changed), of the JSON text `json` gives for it.
 */
const hashed = new WeakMap<object, string>();
const hashOf = <T>(list: readonly T[], json: (list: readonly T[]) => string): string => {
  let h = hashed.get(list);
  if (h === undefined) {
    h = hashText(json(list));
    hashed.set(list, h);
  }
  return h;
};

/**
 * A tool schema's JSON, made once per schema object: the registry hands over the same one each request, while the
 * list of tools is a new array every time (so `hashed` misses), and stringifying every schema for every request
 * was a tenth of a turn's time in coil.
 */
const schemaJson = new WeakMap<object, string>();
const toolJson = (t: ModelRequest["tools"][number]): string => {
  let json = schemaJson.get(t.parameters);
  if (json === undefined) {
    json = JSON.stringify(t.parameters);
    schemaJson.set(t.parameters, json);
  }
  return `[${JSON.stringify(t.name)},${JSON.stringify(t.description)},${json}]`;
};

export function snapshot(request: ModelRequest, at = Date.now()): Snapshot {
  return {
    at,
    provider: request.model.provider,
    model: request.model.id,
    systemHash: hashOf(request.system, (blocks) => JSON.stringify(blocks.map((b) => [b.id, b.text]))),
    // the text JSON.stringify(tools.map((t) => [t.name, t.description, t.parameters])) gives, so hashes stay comparable
    toolsHash: hashOf(request.tools, (tools) => `[${tools.map(toolJson).join(",")}]`),
  };
}

/** The record for one reply, compared with the previous turn's record. */
export function audit(
  snap: Snapshot,
  message: AssistantMessage,
  prev: TurnAudit | undefined,
  o: { compacted: boolean; cacheTtlMs: number },
): TurnAudit {
  const u = message.usage;
  const prompt = u.input + u.cacheRead + u.cacheWrite;
  const reasons: string[] = [];
  let missed = 0;
  if (!prev) reasons.push("first request: nothing cached yet");
  else {
    if (prev.provider !== snap.provider || prev.model !== snap.model)
      reasons.push(`model changed (${prev.provider}/${prev.model} → ${snap.provider}/${snap.model})`);
    if (prev.systemHash !== snap.systemHash) reasons.push("system prompt changed");
    if (prev.toolsHash !== snap.toolsHash)
      reasons.push(snap.toolsCause ? `tools changed (${snap.toolsCause})` : "tools changed");
    if (o.compacted) reasons.push("compaction replaced the history");
    const idle = snap.at - prev.at;
    if (idle > o.cacheTtlMs)
      reasons.push(`idle ${formatDuration(idle)}, past the ${formatDuration(o.cacheTtlMs)} cache lifetime`);
    missed = Math.max(0, Math.min(prompt, prev.prompt) - u.cacheRead);
    // A few tokens short of the previous prompt is normal (where the provider puts its cache breakpoint).
    if (missed >= Math.max(100, prev.prompt * 0.05) && reasons.length === 0) {
      reasons.push(
        u.cacheRead === 0 && u.cacheWrite === 0
          ? "the provider reported no cache use"
          : "unexplained: the provider evicted the cache, or earlier history changed",
      );
    }
  }
  return {
    v: 1,
    at: snap.at,
    provider: snap.provider,
    model: snap.model,
    systemHash: snap.systemHash,
    toolsHash: snap.toolsHash,
    prompt,
    input: u.input,
    cacheRead: u.cacheRead,
    cacheWrite: u.cacheWrite,
    output: u.output,
    cost: u.cost?.total ?? 0,
    missed,
    reasons,
    ...(o.compacted ? { compacted: true } : {}),
  };
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60 ? `${s % 60}s` : ""}`;
  return `${Math.floor(m / 60)}h${m % 60 ? `${m % 60}m` : ""}`;
}

const n = (v: number) => v.toLocaleString("en-US");
const plural = (count: number, word: string) => `${n(count)} ${word}${count === 1 ? "" : "s"}`;
const usd = (v: number) => `$${v.toFixed(v > 0 && v < 0.01 ? 4 : 2)}`;

/** Minimal entry shape (a session entry, or a synthetic one for an in-memory run). */
export interface EntryLike {
  type: string;
  customType?: unknown;
  data?: unknown;
  message?: unknown;
}

/** Audit records from entries; for replies without one (recorded without this plugin), a record from usage alone. */
export function recordsFrom(entries: readonly EntryLike[], cacheTtlMs: number): TurnAudit[] {
  const out: TurnAudit[] = [];
  let pendingAssistant: AssistantMessage | undefined;
  let compacted = false;
  const flushBare = () => {
    if (!pendingAssistant) return;
    const m = pendingAssistant;
    pendingAssistant = undefined;
    const snap: Snapshot = { at: m.timestamp, provider: m.provider, model: m.model, systemHash: "", toolsHash: "" };
    const prev = out.at(-1);
    const rec = audit(snap, m, prev && { ...prev, systemHash: "", toolsHash: "" }, { compacted, cacheTtlMs });
    compacted = false;
    out.push(rec);
  };
  for (const e of entries) {
    if (e.type === "message" && (e.message as { role?: string })?.role === "assistant") {
      flushBare();
      pendingAssistant = e.message as AssistantMessage;
    } else if (e.type === "custom" && e.customType === AUDIT_TYPE && (e.data as TurnAudit)?.v === 1) {
      pendingAssistant = undefined; // this reply has its real record
      out.push(e.data as TurnAudit);
      compacted = false;
    } else if (e.type === "compaction") {
      flushBare();
      compacted = true;
    }
  }
  flushBare();
  return out;
}

/**
 * The newest record of these entries, found from the end (what a resumed session's first request is
 * compared with): its real record, or one from the newest reply's usage. `skip`: a message to pass over.
 */
export function lastRecord(entries: readonly EntryLike[], cacheTtlMs: number, skip?: unknown): TurnAudit | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.type === "message" && e.message === skip) continue;
    const record = e.type === "custom" && e.customType === AUDIT_TYPE && (e.data as TurnAudit)?.v === 1;
    if (record || (e.type === "message" && (e.message as { role?: string })?.role === "assistant"))
      return recordsFrom([e], cacheTtlMs).at(-1);
  }
  return undefined;
}

/**
 * The table `/cost` and `coil sessions stats` print. With a `width` (the terminal's), a table wider than
 * that moves each row's reasons to the lines under it, drops a provider every row shares into the title, and
 * then shortens the model names, so the columns stay aligned in a narrow terminal.
 */
export function formatReport(records: readonly TurnAudit[], title?: string, width?: number): string {
  if (records.length === 0) return `${title ? `${title}\n` : ""}no model requests recorded yet`;
  const full = tableOf(records, title, false, undefined);
  if (!width || full.split("\n").every((l) => l.length <= width)) return full;
  const providers = new Set(records.map((r) => r.provider));
  const shared = providers.size === 1 ? [...providers][0] : undefined;
  const narrow = tableOf(records, shared ? `${title ? `${title} · ` : ""}provider ${shared}` : title, true, shared);
  // the table's own lines (header and rows); the totals below are prose and wrap
  const widest = Math.max(...narrow.split("\n").map((l) => (/^(turn|\d+) /.test(l) ? l.length : 0)));
  if (widest <= width) return wrapWhy(narrow, width);
  // still too wide: shorten the model column by what is missing
  const model = (r: TurnAudit) => (shared ? r.model : `${r.provider}/${r.model}`);
  const longest = Math.max(5, ...records.map((r) => model(r).length));
  const keep = Math.max(8, longest - (widest - width));
  return wrapWhy(
    tableOf(records, shared ? `${title ? `${title} · ` : ""}provider ${shared}` : title, true, shared, keep),
    width,
  );
}

/** The reasons' lines (`    why: ...`) wrapped at `width`, continued under their start. */
function wrapWhy(text: string, width: number): string {
  return text
    .split("\n")
    .flatMap((line) => {
      if (!line.startsWith("    why: ") || line.length <= width) return [line];
      const out: string[] = [];
      let rest = line;
      while (rest.length > width) {
        const cut = rest.lastIndexOf(" ", width);
        const at = cut > 9 ? cut : width;
        out.push(rest.slice(0, at));
        rest = `         ${rest.slice(at).trimStart()}`;
      }
      return [...out, rest];
    })
    .join("\n");
}

function tableOf(
  records: readonly TurnAudit[],
  title: string | undefined,
  whyBelow: boolean,
  sharedProvider: string | undefined,
  modelWidth?: number,
): string {
  const modelOf = (r: TurnAudit) => {
    const name = sharedProvider ? r.model : `${r.provider}/${r.model}`;
    return modelWidth && name.length > modelWidth ? `${name.slice(0, modelWidth - 1)}…` : name;
  };
  const rows = records.map((r, i) => [
    String(i + 1),
    modelOf(r),
    n(r.prompt),
    n(r.cacheRead),
    n(r.cacheWrite),
    n(r.output),
    usd(r.cost),
    r.missed ? n(r.missed) : "-",
    r.reasons.join("; "),
  ]);
  const head = ["turn", "model", "prompt", "cache read", "cache write", "output", "cost", "missed", "why"];
  if (whyBelow) head.pop();
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, c) => (head[c] === "why" ? cell : c <= 1 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
      .join("  ")
      .trimEnd();
  const sum = (k: "prompt" | "cacheRead" | "cacheWrite" | "output" | "cost" | "missed") =>
    records.reduce((s, r) => s + r[k], 0);
  const prompt = sum("prompt");
  const read = sum("cacheRead");
  const why = new Map<string, number>();
  for (const r of records) {
    if (r.missed === 0) continue;
    for (const reason of r.reasons) {
      const key = reason.replace(/ \(.*\)$/, "").replace(/^idle .*/, "idle past the cache lifetime");
      why.set(key, (why.get(key) ?? 0) + 1);
    }
  }
  const lines = [
    ...(title ? [title] : []),
    line(head),
    ...rows.flatMap((row) =>
      whyBelow ? [line(row.slice(0, -1)), ...(row.at(-1) ? [`    why: ${row.at(-1)}`] : [])] : [line(row)],
    ),
    "",
    `total: ${plural(records.length, "request")}, ${n(prompt)} prompt tokens (${n(read)} read from the cache${prompt ? `, ${Math.round((read / prompt) * 100)}%` : ""}; ${n(sum("cacheWrite"))} written), ${n(sum("output"))} output tokens, ${usd(sum("cost"))}`,
  ];
  const missed = sum("missed");
  if (missed > 0)
    lines.push(
      `cache misses: ${n(missed)} prompt tokens in ${plural(records.filter((r) => r.missed > 0).length, "request")}${why.size ? `; ${[...why].map(([k, v]) => `${k} (${v})`).join(", ")}` : ""}`,
    );
  return lines.join("\n");
}

/** Sub-agents' usage by agent type (from the `task` results in the session), below the request table. */
export function formatSubagents(
  children: ReadonlyMap<string, { runs: number; requests: number; usage: AssistantMessage["usage"] }>,
  ownCost: number,
): string {
  if (children.size === 0) return "";
  const row = (name: string, t: { runs: number; requests: number; usage: AssistantMessage["usage"] }) =>
    `${name}: ${plural(t.runs, "run")}, ${plural(t.requests, "request")}, ${n(usageTotal(t.usage))} tokens (${n(t.usage.cacheRead)} from the cache), ${n(t.usage.output)} output, ${usd(t.usage.cost.total)}`;
  const all = [...children.values()].reduce(
    (a, t) => ({ runs: a.runs + t.runs, requests: a.requests + t.requests, usage: addUsage(a.usage, t.usage) }),
    { runs: 0, requests: 0, usage: emptyUsage() },
  );
  return [
    "",
    row("sub-agents", all),
    ...[...children].sort(([a], [b]) => a.localeCompare(b)).map(([name, t]) => `  ${row(name, t)}`),
    `total with sub-agents: ${usd(ownCost + all.usage.cost.total)}`,
  ].join("\n");
}
