/** The scripted reply format: parsing, validation and turning one reply into provider events. */
import { readFileSync } from "node:fs";
import { Type, type Static } from "typebox";
import {
  CoilError,
  emptyUsage,
  messageOf,
  type AssistantMessage,
  type ProviderEvent,
  type ProviderRequest,
  type StopReason,
  type ToolCall,
} from "../../api/index.js";

export const ScriptedToolCall = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /** Raw argument text, for replies whose JSON is broken on purpose. */
    rawArguments: Type.Optional(Type.String()),
    id: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const ScriptedReply = Type.Object(
  {
    text: Type.Optional(Type.String()),
    thinking: Type.Optional(Type.String()),
    toolCalls: Type.Optional(Type.Array(ScriptedToolCall)),
    stopReason: Type.Optional(
      Type.Union([
        Type.Literal("stop"),
        Type.Literal("toolUse"),
        Type.Literal("length"),
        Type.Literal("refusal"),
        Type.Literal("pause"),
        Type.Literal("error"),
      ]),
    ),
    error: Type.Optional(Type.String()),
    errorCode: Type.Optional(Type.String()),
    usage: Type.Optional(
      Type.Object(
        {
          input: Type.Optional(Type.Number()),
          output: Type.Optional(Type.Number()),
          cacheRead: Type.Optional(Type.Number()),
          cacheWrite: Type.Optional(Type.Number()),
        },
        { additionalProperties: false },
      ),
    ),
    delayMs: Type.Optional(Type.Number({ minimum: 0 })),
    chunkDelayMs: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { additionalProperties: false },
);
export type ScriptedReply = Static<typeof ScriptedReply>;

/** A step: a reply, or a function of the request (tests assert on what the model saw). */
export type ScriptStep =
  | ScriptedReply
  | ((request: ProviderRequest, index: number) => ScriptedReply | Promise<ScriptedReply>);

let Value: typeof import("typebox/value").Value | undefined;

/**
 * Check replies against the format; errors name the reply index and the file. TypeBox's value functions are
 * imported on the first check, so a run that never uses the scripted provider does not compile them.
 */
export async function checkReplies(replies: unknown, where: string): Promise<ScriptedReply[]> {
  const obj = replies as { replies?: unknown; conversations?: unknown } | undefined;
  const list = Array.isArray(replies)
    ? replies
    : obj?.replies === undefined && obj?.conversations !== undefined
      ? []
      : obj?.replies;
  if (!Array.isArray(list)) {
    throw new CoilError(
      "CONFIG_INVALID",
      `script ${where} must be a list of replies, or an object with a 'replies' list`,
      { plugin: "provider-scripted" },
    );
  }
  if (list.some((reply) => typeof reply !== "function")) Value ??= (await import("typebox/value")).Value;
  list.forEach((reply, i) => {
    if (typeof reply === "function") return;
    const all = Value!.Errors(ScriptedReply, reply);
    // Keep the errors a person can act on: no "schema is false" echo of an unknown key, no anyOf noise.
    const errors: typeof all = all.filter((e) => e.keyword !== "boolean" && e.keyword !== "anyOf");
    if (all.length > 0) {
      if (errors.length === 0) errors.push(all[0]!);
      const what = errors.map((e) =>
        e.keyword === "additionalProperties"
          ? `unknown key ${(e.params as { additionalProperties: string[] }).additionalProperties.map((k) => `'${k}'`).join(", ")}`
          : e.keyword === "const" && e.instancePath === "/stopReason"
            ? "stopReason must be one of stop, toolUse, length, refusal, pause, error"
            : `${e.instancePath.slice(1).replace(/\//g, ".") || "reply"} ${e.message}`,
      );
      throw new CoilError("CONFIG_INVALID", `reply ${i + 1} of ${where}: ${[...new Set(what)].join("; ")}`, {
        plugin: "provider-scripted",
        hint: "a reply has: text, thinking, toolCalls [{ name, arguments, id }], stopReason, error, errorCode, usage, delayMs, chunkDelayMs",
      });
    }
  });
  return list as ScriptedReply[];
}

/**
 * The `conversations` of a script object: for each key, the replies of the conversations whose first user
 * message starts with it (a sub-agent's brief, say), in their own order whatever order the requests come in.
 */
export async function checkConversations(script: unknown, where: string): Promise<Record<string, ScriptedReply[]>> {
  const raw =
    !Array.isArray(script) && script && typeof script === "object"
      ? (script as { conversations?: unknown }).conversations
      : undefined;
  if (raw === undefined) return {};
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) {
    throw new CoilError(
      "CONFIG_INVALID",
      `'conversations' in ${where} must map the start of a conversation's first message to its replies`,
      { plugin: "provider-scripted" },
    );
  }
  const checked = Object.entries(raw).map(
    async ([key, list]) => [key, await checkReplies(list, `${where}, conversation '${key}'`)] as const,
  );
  return Object.fromEntries(await Promise.all(checked));
}

/** A script file: the main replies and the per-conversation ones. */
export async function readScript(
  file: string,
): Promise<{ replies: ScriptedReply[]; conversations: Record<string, ScriptedReply[]> }> {
  const value = await parseScriptFile(file);
  return { replies: await checkReplies(value, file), conversations: await checkConversations(value, file) };
}

async function parseScriptFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (cause) {
    throw new CoilError("CONFIG_INVALID", `cannot read script ${file}: ${messageOf(cause)}`, {
      plugin: "provider-scripted",
      cause,
    });
  }
  if (file.endsWith(".json")) return JSON.parse(text);
  const yaml = await import("yaml");
  const parseDocument = yaml.parseDocument ?? (yaml as unknown as { default: typeof yaml }).default.parseDocument; // CJS interop when bundled
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const pos = e.linePos?.[0];
    throw new CoilError(
      "CONFIG_INVALID",
      `malformed script: ${e.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "")}`,
      { plugin: "provider-scripted", file, line: pos?.line, column: pos?.col },
    );
  }
  return doc.toJS();
}

function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(!signal.aborted);
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve(!signal.aborted);
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** Stream one reply as the kernel's provider events. Never throws. */
export async function* streamReply(
  reply: ScriptedReply,
  meta: { provider: string; model: string; callPrefix: string; chunkSize: number },
  signal: AbortSignal,
): AsyncGenerator<ProviderEvent> {
  const message: AssistantMessage = {
    role: "assistant",
    content: [],
    provider: meta.provider,
    model: meta.model,
    usage: emptyUsage(),
    stopReason: "stop",
    timestamp: Date.now(),
  };
  const snapshot = (): AssistantMessage => ({ ...message, content: message.content.map((c) => ({ ...c })) });
  const aborted = (): ProviderEvent => ({
    type: "error",
    message: {
      ...snapshot(),
      content: snapshot().content.filter((c) => c.type !== "toolCall"),
      stopReason: "aborted",
      errorMessage: "aborted",
    },
  });
  if (!(await sleep(reply.delayMs ?? 0, signal))) return yield aborted();
  yield { type: "start", partial: snapshot() };
  const pace = reply.chunkDelayMs ?? 0;

  if (reply.thinking !== undefined) {
    const index = message.content.push({ type: "thinking", thinking: "" }) - 1;
    for (const delta of chunks(reply.thinking, meta.chunkSize)) {
      if (!(await sleep(pace, signal))) return yield aborted();
      (message.content[index] as { thinking: string }).thinking += delta;
      yield { type: "thinking_delta", contentIndex: index, delta, partial: snapshot() };
    }
  }
  if (reply.text !== undefined) {
    const index = message.content.push({ type: "text", text: "" }) - 1;
    for (const delta of chunks(reply.text, meta.chunkSize)) {
      if (!(await sleep(pace, signal))) return yield aborted();
      (message.content[index] as { text: string }).text += delta;
      yield { type: "text_delta", contentIndex: index, delta, partial: snapshot() };
    }
  }
  for (const [i, call] of (reply.toolCalls ?? []).entries()) {
    const raw = call.rawArguments ?? JSON.stringify(call.arguments ?? {});
    const tc: ToolCall = { type: "toolCall", id: call.id ?? `${meta.callPrefix}_${i}`, name: call.name, arguments: {} };
    const index = message.content.push(tc) - 1;
    for (const delta of chunks(raw, meta.chunkSize)) {
      if (!(await sleep(pace, signal))) return yield aborted();
      yield { type: "toolcall_delta", contentIndex: index, delta, partial: snapshot() };
    }
    try {
      tc.arguments = JSON.parse(raw) as Record<string, unknown>;
    } catch (e) {
      tc.parseError = (e as Error).message;
    }
  }
  const u = reply.usage ?? {};
  message.usage = {
    ...emptyUsage(),
    input: u.input ?? 0,
    output: u.output ?? 0,
    cacheRead: u.cacheRead ?? 0,
    cacheWrite: u.cacheWrite ?? 0,
  };
  if (reply.error !== undefined || reply.stopReason === "error") {
    message.stopReason = "error";
    message.errorMessage = reply.error ?? "scripted error";
    if (reply.errorCode) message.errorCode = reply.errorCode;
    return yield { type: "error", message: snapshot() };
  }
  const stopReason: StopReason = reply.stopReason ?? (reply.toolCalls?.length ? "toolUse" : "stop");
  message.stopReason = stopReason;
  yield { type: "done", message: snapshot() };
}
