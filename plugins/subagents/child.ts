/**
 * What a child agent is made of besides what `agent.fork()` copies (the parent's providers and taps: every
 * tool_call and tool_result tap, so a child is never less guarded than its parent; the conversation-level
 * ones except those of `isolate` plugins, which keep the parent's conversation state): the stages of the
 * child's own taps, and the model an agent type asks for.
 */
import { type AgentView, type ModelInfo, type Provider, Stage } from "../../api/index.js";

export const CHILD_STAGE = { gate: Stage.GUARD - 1, prompt: 50_000 } as const;

/**
 * The model an agent type asks for: `inherit` (or nothing), `provider/id`, or an alias (`haiku`,
 * `sonnet`, `opus`, or any model id) looked up in the parent's provider first, then in the others.
 */
export function resolveAgentModel(
  host: Pick<AgentView, "providers">,
  spec: string | undefined,
  inherit: { provider: string; model: ModelInfo },
): { provider: string; model: ModelInfo } {
  if (!spec || spec === "inherit") return inherit;
  const usable = (p: Provider | undefined): p is Provider => Boolean(p && (!p.isConfigured || p.isConfigured()));
  const lookup = (p: Provider, id: string): ModelInfo | undefined =>
    p.models?.find((m) => m.id === id) ?? p.models?.find((m) => m.id.includes(id)) ?? p.resolveModel?.(id);
  if (spec.includes("/")) {
    const [head, ...rest] = spec.split("/");
    const provider = host.providers.get(head!);
    if (!usable(provider))
      throw new Error(
        `model '${spec}': provider '${head}' is ${provider ? "not configured" : `not registered (known: ${host.providers.names().join(", ")})`}`,
      );
    const model = lookup(provider, rest.join("/"));
    if (!model) throw new Error(`model '${spec}': provider '${head}' has no model '${rest.join("/")}'`);
    return { provider: provider.id, model };
  }
  const first = host.providers.get(inherit.provider);
  const ordered = [first, ...host.providers.values().filter((p) => p !== first)].filter(usable);
  for (const p of ordered) {
    const listed = p.models?.find((m) => m.id === spec) ?? p.models?.find((m) => m.id.includes(spec));
    if (listed) return { provider: p.id, model: listed };
  }
  const resolved = usable(first) ? first.resolveModel?.(spec) : undefined;
  if (resolved) return { provider: first!.id, model: resolved };
  throw new Error(
    `model '${spec}' is not known to any configured provider (${ordered.map((p) => p.id).join(", ") || "none"}); use inherit, an alias such as sonnet or haiku, or provider/id`,
  );
}
