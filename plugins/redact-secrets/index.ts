/**
 * redact-secrets: values of known secrets never leave a tool result. Taps `tool_result` last (so the
 * session stores the redacted result and the next request sends it) and `before_request` last (so
 * results stored before, or added by other plugins, are redacted on the wire too). Each value is
 * replaced by `[redacted]`. See docs/safety.md.
 */
import { statSync } from "node:fs";
import { definePlugin, Stage, Type, type AgentMessage, type Static, type ToolResult } from "../../api/index.js";
import { coilHome } from "../../lib/paths.js";
import { authFile, readAuth, redactShapes } from "../../lib/provider-kit/config.js";
import { piAuthFile, piLogins } from "../../lib/provider-kit/oauth.js";
import { redactor, secretsInAuth, secretsInEnv } from "./secrets.js";

export { REDACTED, redactor, secretsInAuth, secretsInEnv } from "./secrets.js";

export const RedactOptions = Type.Object({
  /** Literal values to redact besides those found (keep these in your user preset, not a project's). */
  secrets: Type.Array(Type.String(), { default: [] }),
  /** Variables whose values are secrets although their names do not say so. */
  env: Type.Array(Type.String(), { default: [] }),
  /** Values shorter than this are not redacted (they would match ordinary text). */
  minLength: Type.Integer({ minimum: 1, default: 8 }),
});
export type RedactOptions = Static<typeof RedactOptions>;

type Text = { type: "text"; text: string };

/** Every string inside `value`, replaced (objects and arrays copied only where something changed). */
function mapStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === "string") return f(value);
  if (Array.isArray(value)) {
    const next = value.map((v) => mapStrings(v, f));
    return next.some((v, i) => v !== value[i]) ? next : value;
  }
  if (value && typeof value === "object") {
    const entries = Object.entries(value);
    const next = entries.map(([k, v]) => [k, mapStrings(v, f)] as const);
    return next.some(([, v], i) => v !== entries[i]![1]) ? Object.fromEntries(next) : value;
  }
  return value;
}

export default definePlugin({
  id: "redact-secrets",
  description: "Replace the values of API keys and other secrets in tool output with [redacted]",
  options: RedactOptions,
  setup(ctx) {
    const o = ctx.options;
    let env: Record<string, string | undefined> = process.env;
    let home = coilHome();
    let cache: { stamp: string; apply: ((text: string) => string) | undefined } | undefined;

    ctx.onStart((_agent, io) => {
      env = io.env;
      home = coilHome(io.env);
      cache = undefined;
    });

    // auth.json and Pi's are stat'ed once a turn (the request's before_request; the turn's tool results
    // reuse it) and read again when they change. A key stored mid-turn is redacted from the next turn on;
    // tokens of known shapes are redacted always (redactShapes).
    let checked = false;
    ctx.on("turn_end", () => {
      checked = false;
    });
    /** The replacer for the current secrets; auth.json is read again when it changes. */
    function current(): ((text: string) => string) | undefined {
      if (checked && cache) return cache.apply;
      checked = true;
      const authPath = authFile(home);
      const stat = statSync(authPath, { throwIfNoEntry: false });
      const piPath = piAuthFile(env);
      const piStat = statSync(piPath, { throwIfNoEntry: false });
      const flag = ctx.flags.get("api-key");
      const stamp = `${stat?.mtimeMs ?? 0}:${stat?.size ?? 0}:${piStat?.mtimeMs ?? 0}:${typeof flag === "string" ? flag.length : 0}`;
      if (cache?.stamp === stamp) return cache.apply;
      let stored: string[] = [];
      try {
        stored = stat ? secretsInAuth(readAuth(home)) : [];
      } catch (e) {
        ctx.log.warn(`cannot read ${authPath} to redact its keys: ${(e as Error).message}`);
      }
      // Pi's subscription logins (coil can use them), read only.
      if (piStat) stored.push(...secretsInAuth(piLogins(env)));
      const values = [
        ...secretsInEnv(env, o.env),
        ...stored,
        ...o.secrets,
        ...(typeof flag === "string" ? [flag] : []),
      ];
      const known = redactor(values, o.minLength);
      // Tokens of known shapes (GitHub, Copilot, JWTs, sk- keys) are redacted even when coil did not store them.
      const apply = (text: string) => redactShapes(known ? known(text) : text);
      cache = { stamp, apply };
      return cache.apply;
    }

    const redactParts = <T extends { type: string }>(
      parts: readonly T[],
      f: (s: string) => string,
    ): T[] | undefined => {
      let changed = false;
      const next = parts.map((p) => {
        if (p.type !== "text") return p;
        const text = f((p as unknown as Text).text);
        if (text === (p as unknown as Text).text) return p;
        changed = true;
        return { ...p, text };
      });
      return changed ? next : undefined;
    };

    function redactResult(result: ToolResult, f: (s: string) => string): ToolResult | undefined {
      const content = redactParts(result.content, f);
      const details = result.details === undefined ? undefined : mapStrings(result.details, f);
      if (!content && details === result.details) return undefined;
      return { ...result, content: content ?? result.content, details };
    }

    ctx.tap(
      "tool_result",
      async (result) => {
        const f = current();
        return f ? redactResult(result, f) : undefined;
      },
      { stage: Stage.FALLBACK },
    );

    /** Each history message as sent, for the current replacer: a message is scanned once, not on every request. */
    let sent = {
      f: undefined as ((text: string) => string) | undefined,
      map: new WeakMap<AgentMessage, AgentMessage>(),
    };
    const redactMessage = (m: AgentMessage, f: (text: string) => string): AgentMessage => {
      if (m.role === "toolResult") return redactResult(m, f) ?? m;
      if (m.role !== "user") return m;
      const content = typeof m.content === "string" ? f(m.content) : redactParts(m.content, f);
      return content !== undefined && content !== m.content ? { ...m, content } : m;
    };

    // Results already in the history (a resumed session, other plugins' messages) are redacted on the wire.
    ctx.tap(
      "before_request",
      async (request) => {
        const f = current();
        if (!f) return undefined;
        if (sent.f !== f) sent = { f, map: new WeakMap() };
        let changed = false;
        const messages = request.messages.map((m): AgentMessage => {
          let next = sent.map.get(m);
          if (!next) {
            next = redactMessage(m, f);
            sent.map.set(m, next);
          }
          if (next !== m) changed = true;
          return next;
        });
        return changed ? { ...request, messages } : undefined;
      },
      { stage: Stage.FALLBACK },
    );
  },
});
