/**
 * Model catalog helpers shared by the provider plugins: the catalog entry type, fuzzy model
 * resolution, default limits for unknown ids, and cost (with long-context price tiers).
 * Part of lib/provider-kit, the library both provider plugins import (see lib/README.md).
 */
import type { ModelInfo, Provider, Usage } from "../../api/index.js";
import type { Compat } from "./config.js";
import type { ConfigValue } from "./values.js";

export type ApiKind = "anthropic-messages" | "openai-completions" | "openai-responses";
export const API_KINDS: readonly ApiKind[] = ["anthropic-messages", "openai-completions", "openai-responses"];

/** US dollars per million tokens. */
export interface Prices {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** Prices that apply to the whole request once its prompt is longer than `above` tokens. */
export interface PriceTier extends Prices {
  /** Prompt tokens (input + cache reads + cache writes) above which this tier applies. */
  above: number;
}

/** How a model takes the kernel's `thinking` setting. */
export type ThinkingStyle =
  /** Anthropic `thinking: { type: "enabled", budget_tokens }`. */
  | "budget"
  /** Anthropic adaptive thinking with an effort level; thinking can be switched off. */
  | "adaptive"
  /** Anthropic adaptive thinking that cannot be switched off (`off` becomes the lowest effort). */
  | "always"
  /** OpenAI `reasoning_effort` / `reasoning.effort`. */
  | "effort";

export interface CatalogModel extends ModelInfo {
  api: ApiKind;
  cost: Prices;
  /** Long-context price tiers, ascending by `above`. */
  tiers?: readonly PriceTier[];
  thinking?: ThinkingStyle;
  /** Effort values the API accepts (the kernel's levels are mapped onto the nearest one). */
  efforts?: readonly string[];
  /** The model rejects sampling parameters (temperature, top_p). */
  fixedSampling?: boolean;
  /** Headers for this model's requests, on top of the provider's (models.yaml / Pi models.json). */
  headers?: readonly ConfigValue[];
  /** Switches for this model, on top of the provider's. */
  compat?: Compat;
  /** Fields merged into this model's request bodies, on top of the provider's. */
  params?: Record<string, unknown>;
  /** Where coil learned of it: `built-in`, `models.yaml`, `pi models.json`. */
  source?: string;
  /**
   * `provider`: the provider's balanced default (a run that names no model starts with it);
   * `user`: the `default:` of models.yaml, which comes before every provider's own default.
   */
  default?: "provider" | "user";
  /** Where a `user` default was set, when not models.yaml (Pi's settings.json). */
  defaultFrom?: string;
}

const ZERO: Prices = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

/** Limits for an id the catalog does not know (a local model, a brand-new release). */
export function defaultModel(
  provider: string,
  id: string,
  api: ApiKind,
  limits: { contextWindow: number; maxOutput: number },
): CatalogModel {
  return {
    id,
    provider,
    name: id,
    api,
    contextWindow: limits.contextWindow,
    maxOutput: limits.maxOutput,
    input: ["text", "image"],
    cost: { ...ZERO },
  };
}

const DATE_SUFFIX = /-(\d{8}|\d{4}-\d{2}-\d{2})$/;

function tokens(id: string): string[] {
  return id
    .toLowerCase()
    .split(/[-._\s/:]+/)
    .filter(Boolean);
}

/** Whether every query token appears in order in the id's tokens (a query token may be a prefix). */
function tokensMatch(query: string[], id: string[]): boolean {
  let at = 0;
  for (const q of query) {
    while (at < id.length && !id[at]!.startsWith(q)) at++;
    if (at === id.length) return false;
    at++;
  }
  return true;
}

/**
 * Find a catalog entry for `id`: exact (case-insensitive) → a dated snapshot of a listed id
 * (keeps the dated id, takes the listed limits) → fuzzy tokens in order, first in catalog order
 * (catalogs list the newest model of a family first). Undefined when nothing matches.
 */
export function findModel(models: readonly CatalogModel[], id: string): CatalogModel | undefined {
  const want = id.trim();
  const lower = want.toLowerCase();
  const exact = models.find((m) => m.id.toLowerCase() === lower);
  if (exact) return exact;
  const undated = lower.replace(DATE_SUFFIX, "");
  if (undated !== lower) {
    const base = models.find((m) => m.id.toLowerCase() === undated);
    if (base) return { ...base, id: want };
  }
  const query = tokens(want);
  if (query.length === 0) return undefined;
  return models.find((m) => tokensMatch(query, tokens(m.id)) || tokensMatch(query, tokens(m.name ?? "")));
}

/** Cost of one reply from its token counts. A tier whose threshold the prompt exceeds prices every token. */
export function computeCost(
  usage: Pick<Usage, "input" | "output" | "cacheRead" | "cacheWrite">,
  model: { cost?: Prices; tiers?: readonly PriceTier[] },
): Usage["cost"] {
  const prompt = usage.input + usage.cacheRead + usage.cacheWrite;
  let prices: Prices = model.cost ?? ZERO;
  for (const tier of model.tiers ?? []) if (prompt > tier.above) prices = tier;
  const part = (tokensUsed: number, price: number) => (tokensUsed * price) / 1_000_000;
  const cost = {
    input: part(usage.input, prices.input),
    output: part(usage.output, prices.output),
    cacheRead: part(usage.cacheRead, prices.cacheRead),
    cacheWrite: part(usage.cacheWrite, prices.cacheWrite),
    total: 0,
  };
  cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
  return cost;
}

/** One line per model for `coil models`. */
export function describePrice(model: ModelInfo): string {
  const c = model.cost;
  if (!c || (c.input === 0 && c.output === 0)) return "-";
  const money = (n: number) => `$${Number(n.toFixed(3))}`;
  return `${money(c.input)}/${money(c.output)}`;
}

/**
 * Mark `id` on `provider` as the models.yaml `default:`: a listed id, else its fuzzy match, else the id
 * itself (added to the list with the provider's default limits, so `coil models` shows it).
 */
export function markUserDefault(provider: Provider, id: string, from?: string): void {
  const models = provider.models as CatalogModel[] | undefined;
  if (!models) return;
  const found = models.find((m) => m.id === id) ?? findModel(models, id);
  const at = found ? models.findIndex((m) => m.id === found.id) : -1;
  if (found && at >= 0) models[at] = { ...found, default: "user", ...(from ? { defaultFrom: from } : {}) };
  else {
    const resolved = (provider.resolveModel?.(id) ?? {
      id,
      provider: provider.id,
      contextWindow: 128_000,
      maxOutput: 16_384,
    }) as CatalogModel;
    models.push({ ...resolved, default: "user", ...(from ? { defaultFrom: from } : {}) });
  }
}
