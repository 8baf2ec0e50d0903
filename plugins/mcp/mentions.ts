/**
 * `@server:uri` in a user message (Claude Code's resource mention, e.g.
 * `@docs:file:///guide/intro.md`): the resource is read once and attached to that message in the
 * requests (history keeps what the user typed). The result is cached per message, so every later
 * request carries the same bytes and the prompt cache keeps working.
 */
import type { AgentMessage, ImageContent, TextContent, UserMessage } from "../../api/index.js";

type Read = (server: string, uri: string) => Promise<(TextContent | ImageContent)[]>;

const MENTION = /(?:^|\s)@([A-Za-z0-9_.-]+):([a-z][a-z0-9+.-]*:\/\/[^\s]+)/gi;

/** Mentions of known servers in `text`, in order, without repeats. */
export function findMentions(text: string, servers: readonly string[]): { server: string; uri: string }[] {
  const out: { server: string; uri: string }[] = [];
  for (const m of text.matchAll(MENTION)) {
    const server = m[1]!;
    const uri = m[2]!.replace(/[.,;:!?)\]]+$/, "");
    if (servers.includes(server) && !out.some((o) => o.server === server && o.uri === uri)) out.push({ server, uri });
  }
  return out;
}

export class Mentions {
  private readonly cache = new WeakMap<object, Promise<UserMessage>>();

  constructor(
    private readonly servers: () => readonly string[],
    private readonly read: Read,
  ) {}

  /** The messages with mentioned resources attached; the same array when there are none. */
  async expand(messages: readonly AgentMessage[]): Promise<readonly AgentMessage[]> {
    let changed = false;
    let servers: readonly string[] | undefined; // looked up once, and only when some message has an `@`
    const out = await Promise.all(
      messages.map(async (m) => {
        if (m.role !== "user") return m;
        const text =
          typeof m.content === "string"
            ? m.content
            : m.content
                .filter((c): c is TextContent => c.type === "text")
                .map((c) => c.text)
                .join("\n");
        if (!text.includes("@")) return m;
        servers ??= this.servers();
        const found = findMentions(text, servers);
        if (found.length === 0) return m;
        changed = true;
        let expanded = this.cache.get(m);
        if (!expanded) {
          expanded = this.attach(m, found);
          this.cache.set(m, expanded);
        }
        return expanded;
      }),
    );
    return changed ? out : messages;
  }

  private async attach(m: UserMessage, found: { server: string; uri: string }[]): Promise<UserMessage> {
    const base = typeof m.content === "string" ? [{ type: "text" as const, text: m.content }] : [...m.content];
    for (const { server, uri } of found) {
      try {
        base.push(...(await this.read(server, uri)));
      } catch (error) {
        base.push({ type: "text", text: `[could not read @${server}:${uri}: ${(error as Error).message}]` });
      }
    }
    return { ...m, content: base };
  }
}
