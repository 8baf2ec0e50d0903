/**
 * A child agent's host: a `PluginHost` with the parent's providers, the child's tools only, and the
 * parent's taps. Gates (`tool_call`, `tool_result`) are always shared, so a child is never less guarded
 * than its parent (permission gate, plan mode, sandbox, hooks). Conversation-level taps (`before_request`,
 * `turn_end`, `should_stop`, `compact`) are shared too, except those of `isolate` plugins, which keep the
 * parent's conversation state (its session file, its cost audit, its UI).
 */
import {
  HOOK_NAMES,
  PluginHost,
  Stage,
  type HookName,
  type ModelInfo,
  type Provider,
  type TapFn,
  type ToolDefinition,
} from "../../kernel/index.js";

/** Hooks every tap of the parent is copied to, whatever `isolate` says. */
const GATES: ReadonlySet<HookName> = new Set(["tool_call", "tool_result"]);

interface RawTap {
  name: string;
  stage?: number;
  fn: (...args: unknown[]) => Promise<unknown>;
}

export interface ChildHostOptions {
  tools: readonly ToolDefinition[];
  /** Plugins whose conversation-level taps stay with the parent. */
  isolate: ReadonlySet<string>;
  /** Taps the child adds after the copied ones (`plugin` names them in reports). */
  extra?: { hook: HookName; fn: TapFn<HookName>; stage: number; plugin: string }[];
}

export function childHost(parent: PluginHost, options: ChildHostOptions): PluginHost {
  const host = new PluginHost({ cwd: parent.cwd, projectTrusted: parent.projectTrusted, ui: () => parent.ui });
  for (const [name, owned] of parent.providers.entries())
    host.providers.register(name, owned.value, owned.owner, owned.source);
  for (const tool of options.tools) host.tools.register(tool.name, tool, parent.tools.owner(tool.name) ?? "subagents");
  for (const hook of HOOK_NAMES) {
    const taps = (parent.hooks[hook] as unknown as { taps: RawTap[] }).taps;
    const target = host.hooks[hook] as unknown as {
      tapPromise(o: { name: string; stage: number }, f: RawTap["fn"]): void;
    };
    for (const tap of taps) {
      if (!GATES.has(hook) && options.isolate.has(tap.name)) continue;
      // The parent's tap is already wrapped in its failure policy; reports name the plugin in the parent.
      target.tapPromise({ name: tap.name, stage: tap.stage ?? 0 }, tap.fn);
      host.taps.push({ hook, plugin: tap.name, stage: tap.stage ?? 0 });
    }
  }
  for (const extra of options.extra ?? []) {
    const target = host.hooks[extra.hook] as unknown as {
      tapPromise(o: { name: string; stage: number }, f: RawTap["fn"]): void;
    };
    target.tapPromise({ name: extra.plugin, stage: extra.stage }, async (...args) => {
      const out = await (extra.fn as (...a: unknown[]) => unknown)(...args);
      return out === null || out === false ? undefined : out;
    });
    host.taps.push({ hook: extra.hook, plugin: extra.plugin, stage: extra.stage });
  }
  // Verdicts of copied taps are recorded by the parent's wrappers: ask the parent who bailed.
  const own = host.bailedBy.bind(host);
  Object.defineProperty(host, "bailedBy", { value: (v: object) => own(v) ?? parent.bailedBy(v) });
  host.close();
  return host;
}

export const CHILD_STAGE = { gate: Stage.GUARD - 1, prompt: 50_000 } as const;

/**
 * The model an agent type asks for: `inherit` (or nothing), `provider/id`, or an alias (`haiku`,
 * `sonnet`, `opus`, or any model id) looked up in the parent's provider first, then in the others.
 */
export function resolveAgentModel(
  host: PluginHost,
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
