/**
 * Finding deferred tools (and skills) for a search: `select:a,b` by exact name, a regular expression over
 * names and descriptions, or keywords ranked with BM25 (MiniSearch) over the name's words, the MCP
 * server, the description and the parameters, `+word` for a word that must appear. MiniSearch is loaded
 * on the first keyword search.
 */
import type { TSchema, ToolSpec } from "../../api/index.js";

export interface Entry {
  kind: "tool" | "skill";
  name: string;
  /** The MCP server of an `mcp__<server>__<tool>` tool. */
  server?: string;
  description: string;
  /** Parameter names and their descriptions, as searchable text. */
  params: string;
  /** A skill's SKILL.md. */
  location?: string;
}

/** `mcp__<server>__<tool>` → server and tool; undefined for other names. */
export function splitMcpName(name: string): { server: string; tool: string } | undefined {
  const m = /^mcp__(.+?)__(.+)$/.exec(name);
  return m ? { server: m[1]!, tool: m[2]! } : undefined;
}

export function toolEntry(spec: ToolSpec): Entry {
  const props = (spec.parameters as TSchema & { properties?: Record<string, { description?: unknown }> }).properties;
  const params = Object.entries(props ?? {})
    .map(([key, p]) => `${key} ${typeof p?.description === "string" ? p.description : ""}`)
    .join(" ");
  return {
    kind: "tool",
    name: spec.name,
    server: splitMcpName(spec.name)?.server,
    description: spec.description,
    params,
  };
}

/** Words of a name or text: `create_entities`, `API-post-search`, `readFile` → their parts. */
const SPLIT = /[\W_]+|(?<=[a-z])(?=[A-Z])/;
/** Lower case, and plurals folded (entities → entity, files → file, boxes → box). */
export function normalize(word: string): string {
  const w = word.toLowerCase();
  if (w.length > 4 && w.endsWith("ies")) return `${w.slice(0, -3)}y`;
  if (w.length > 4 && /(ss|sh|ch|x)es$/.test(w)) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith("s") && !w.endsWith("ss")) return w.slice(0, -1);
  return w;
}
const words = (text: string) => text.split(SPLIT).filter(Boolean).map(normalize);

export interface Query {
  query?: string;
  pattern?: string;
  limit: number;
}

export interface Found {
  matches: Entry[];
  /** How many more matched past `limit`. */
  more: number;
}

/** The best matches first. Throws an Error with a message for the model on a bad pattern or an empty query. */
export async function find(entries: readonly Entry[], q: Query): Promise<Found> {
  const cut = (list: Entry[]): Found => ({ matches: list.slice(0, q.limit), more: Math.max(0, list.length - q.limit) });
  if (q.pattern?.trim()) {
    let re: RegExp;
    try {
      re = new RegExp(q.pattern, "i");
    } catch (error) {
      throw new Error(`pattern is not a valid regular expression: ${(error as Error).message}`);
    }
    // Name matches before server, description and parameter matches; registry order within each.
    const rank = (e: Entry) =>
      re.test(e.name) ? 0 : e.server && re.test(e.server) ? 1 : re.test(e.description) ? 2 : re.test(e.params) ? 3 : 4;
    return cut(
      entries
        .map((e, i) => ({ e, i, r: rank(e) }))
        .filter((x) => x.r < 4)
        .sort((a, b) => a.r - b.r || a.i - b.i)
        .map((x) => x.e),
    );
  }
  const text = q.query?.trim() ?? "";
  if (!text) throw new Error("give a query (words, a tool name, or select:<name>) or a pattern");
  const select = /^select:(.*)$/is.exec(text);
  if (select) {
    const wanted = select[1]!
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const picked: Entry[] = [];
    for (const w of wanted) {
      const exact = entries.find((e) => e.name === w);
      // `create_entities` or `memory__create_entities` name a tool when only one ends so.
      const ends = entries.filter((e) => e.name.endsWith(`__${w}`));
      const hit = exact ?? (ends.length === 1 ? ends[0] : undefined);
      if (hit && !picked.includes(hit)) picked.push(hit);
    }
    return { matches: picked, more: 0 };
  }
  const required = text
    .split(/\s+/)
    .filter((t) => t.startsWith("+") && t.length > 1)
    .flatMap((t) => words(t.slice(1)));
  const exact = entries.find((e) => e.name === text);
  const { default: MiniSearch } = await import("minisearch");
  const index = new MiniSearch<Entry & { id: number }>({
    fields: ["name", "server", "description", "params"],
    tokenize: (s) => s.split(SPLIT).filter(Boolean),
    processTerm: (t) => normalize(t),
    searchOptions: {
      boost: { name: 3, server: 2, description: 1, params: 0.5 },
      prefix: (term) => term.length >= 3,
      fuzzy: (term) => (term.length >= 6 ? 0.2 : false),
    },
  });
  index.addAll(entries.map((e, id) => ({ ...e, id })));
  const hits = index.search(text.replace(/(^|\s)\+/g, "$1"));
  const has = (e: Entry, w: string) =>
    words(`${e.name} ${e.server ?? ""} ${e.description} ${e.params}`).some((x) => x.startsWith(w));
  const ranked = hits.map((h) => entries[h.id as number]!).filter((e) => required.every((w) => has(e, w)));
  if (exact) return cut([exact, ...ranked.filter((e) => e !== exact)]);
  return cut(ranked);
}
