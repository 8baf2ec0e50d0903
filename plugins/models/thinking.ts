/**
 * The thinking level: `--thinking <level>`, `/thinking [level]`, and the `thinking` service front ends
 * use (the TUI's Shift+Tab and footer). The level is the kernel's `RequestOptions.thinking`; each provider
 * maps it for its model as it maps a preset's `thinking:` (Anthropic: a thinking budget or an adaptive
 * effort; OpenAI: the reasoning effort). A model without reasoning keeps the level for the models that
 * have it, and the user is told so; nothing fails. Each change is recorded in the session
 * (`thinking_level_change`), which session-jsonl restores on `-c`, `--session`, `/resume` and `/reload`.
 * The `models` plugin registers all of it; the service's type is in api.ts.
 */
import type { Agent, ModelRequest, PluginContext } from "../../api/index.js";
import type { ThinkingLevel, ThinkingService } from "./api.js";

export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"] as const;
export const THINKING_SERVICE = "thinking";

export const isThinkingLevel = (value: unknown): value is ThinkingLevel =>
  THINKING_LEVELS.includes(value as ThinkingLevel);

/** The slice of the `session` service this needs (plugins do not import each other). */
interface SessionLike {
  appendThinkingLevelChange(level: string): unknown;
  state(): { thinkingLevel?: string };
}

/** The level the agent's next request carries. */
export function currentLevel(agent: Agent): ThinkingLevel | undefined {
  const level = agent.setRequestOptions({}).thinking;
  return isThinkingLevel(level) ? level : undefined;
}

function unusedNote(agent: Agent): string | undefined {
  const { provider, model } = agent.state;
  return model.reasoning
    ? undefined
    : `${provider}/${model.id} does not reason, so the level has no effect on it; it applies when you switch to a model that does`;
}

/** Register `--thinking`, `/thinking` and the `thinking` service; `piThinking` gives Pi's default level, if any. */
export function registerThinking(ctx: PluginContext<unknown>, piThinking?: () => string | undefined): ThinkingService {
  const session = () => ctx.services.get("session") as SessionLike | undefined;
  /** The level last seen recorded in the session (saves reading the session's state on every request). */
  let recorded: string | undefined;
  const record = (level: ThinkingLevel) => {
    const s = session();
    if (!s || recorded === level) return;
    recorded = level;
    if (s.state().thinkingLevel !== level) s.appendThinkingLevelChange(level);
  };
  const service: ThinkingService = {
    level: currentLevel,
    unused: unusedNote,
    set(agent, level) {
      agent.setRequestOptions({ thinking: level });
      record(level);
      const note = unusedNote(agent);
      return `thinking: ${level}${note ? ` (${note})` : ""}`;
    },
    cycle(agent) {
      const now = currentLevel(agent);
      const next =
        THINKING_LEVELS[(now === undefined ? 0 : THINKING_LEVELS.indexOf(now) + 1) % THINKING_LEVELS.length]!;
      return service.set(agent, next);
    },
  };
  ctx.services.provide(THINKING_SERVICE, service);
  ctx.flags.register({
    name: "thinking",
    description: `thinking level: ${THINKING_LEVELS.join(", ")} (mapped per model; a model without reasoning ignores it)`,
    type: "string",
    valueName: "level",
  });
  ctx.onStart((agent) => {
    const flag = ctx.flags.get("thinking");
    if (flag === undefined) {
      // Pi's settings.json `defaultThinkingLevel`, when nothing else (the preset, a resumed session) set a level.
      const pi = piThinking?.();
      if (pi && currentLevel(agent) === undefined && isThinkingLevel(pi)) agent.setRequestOptions({ thinking: pi });
      return;
    }
    if (!isThinkingLevel(flag))
      throw ctx.error("CONFIG_INVALID", `--thinking '${String(flag)}' is not a thinking level`, {
        hint: `use one of: ${THINKING_LEVELS.join(", ")}`,
      });
    agent.setRequestOptions({ thinking: flag });
    const note = unusedNote(agent);
    if (note) ctx.log.warn(`--thinking ${flag}: ${note}`);
  });
  // The level a run starts with (the preset's, --thinking) goes into the session with its first request.
  ctx.tap(
    "before_request",
    (request: ModelRequest) => void (isThinkingLevel(request.options.thinking) && record(request.options.thinking)),
    { stage: "LATE" },
  );
  ctx.commands.register({
    name: "thinking",
    description: `show or set the thinking level (${THINKING_LEVELS.join(", ")})`,
    argumentHint: "[level]",
    run(args, agent) {
      const want = args.trim().toLowerCase();
      if (!want) {
        const level = currentLevel(agent);
        const note = unusedNote(agent);
        return `thinking: ${level ?? "not set (the provider's default)"}${note ? ` (${note})` : ""}. Levels: ${THINKING_LEVELS.join(", ")}`;
      }
      if (!isThinkingLevel(want)) return `'${want}' is not a thinking level. Levels: ${THINKING_LEVELS.join(", ")}`;
      return service.set(agent, want);
    },
  });
  return service;
}
