/**
 * Claude models the Messages API serves, newest of each family first (fuzzy `--model` matching
 * picks the first match). Prices are US dollars per million tokens as listed on Anthropic's pricing
 * pages in November 2026 (`cacheWrite` is the 5-minute write). Override or add models in
 * `$COIL_HOME/models.yaml`; see docs/providers.md.
 */
import type { CatalogModel, Prices, PriceTier, ThinkingStyle } from "../../lib/provider-kit/catalog.js";

function claude(
  id: string,
  name: string,
  contextWindow: number,
  maxOutput: number,
  thinking: ThinkingStyle,
  cost: Prices,
  extra: { tiers?: PriceTier[]; fixedSampling?: boolean } = {},
): CatalogModel {
  return {
    id,
    provider: "anthropic",
    name,
    api: "anthropic-messages",
    contextWindow,
    maxOutput,
    reasoning: true,
    input: ["text", "image"],
    cost,
    thinking,
    efforts: thinking === "budget" ? undefined : ["low", "medium", "high", "xhigh", "max"],
    ...extra,
  };
}

const M = 1_000_000;

export const ANTHROPIC_MODELS: readonly CatalogModel[] = [
  claude("claude-opus-5-5", "Claude Opus 5.5", M, 128_000, "always", {
    input: 4,
    output: 20,
    cacheRead: 0.2,
    cacheWrite: 5,
  }),
  // The default for a run that names no model: Sonnet, the balanced one (not Opus or Fable).
  {
    ...claude("claude-sonnet-5-5", "Claude Sonnet 5.5", M, 128_000, "adaptive", {
      input: 2,
      output: 10,
      cacheRead: 0.1,
      cacheWrite: 2.5,
    }),
    default: "provider",
  },
  claude(
    "claude-haiku-5-5",
    "Claude Haiku 5.5",
    M,
    128_000,
    "adaptive",
    { input: 0.1, output: 0.5, cacheRead: 0.01, cacheWrite: 0.125 },
    {
      // Prompts over 100K tokens are billed at the higher rates for every token of the request.
      tiers: [{ above: 100_000, input: 0.5, output: 2.5, cacheRead: 0.05, cacheWrite: 0.625 }],
    },
  ),
  claude("claude-fable-5-1", "Claude Fable 5.1", M, 128_000, "always", {
    input: 10,
    output: 50,
    cacheRead: 0.25,
    cacheWrite: 12.5,
  }),
  claude("claude-opus-5", "Claude Opus 5", M, 128_000, "adaptive", {
    input: 5,
    output: 25,
    cacheRead: 0.5,
    cacheWrite: 6.25,
  }),
  claude(
    "claude-sonnet-5",
    "Claude Sonnet 5",
    M,
    128_000,
    "adaptive",
    { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 },
    { fixedSampling: true },
  ),
  claude("claude-opus-4-8", "Claude Opus 4.8", M, 128_000, "adaptive", {
    input: 5,
    output: 25,
    cacheRead: 0.5,
    cacheWrite: 6.25,
  }),
  claude("claude-opus-4-7", "Claude Opus 4.7", M, 128_000, "adaptive", {
    input: 5,
    output: 25,
    cacheRead: 0.5,
    cacheWrite: 6.25,
  }),
  claude("claude-opus-4-6", "Claude Opus 4.6", 200_000, 128_000, "adaptive", {
    input: 5,
    output: 25,
    cacheRead: 0.5,
    cacheWrite: 6.25,
  }),
  claude("claude-sonnet-4-6", "Claude Sonnet 4.6", M, 64_000, "adaptive", {
    input: 3,
    output: 15,
    cacheRead: 0.3,
    cacheWrite: 3.75,
  }),
  claude("claude-opus-4-5", "Claude Opus 4.5", 200_000, 64_000, "budget", {
    input: 5,
    output: 25,
    cacheRead: 0.5,
    cacheWrite: 6.25,
  }),
  claude(
    "claude-sonnet-4-5",
    "Claude Sonnet 4.5",
    200_000,
    64_000,
    "budget",
    { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    {
      // With the 1M-context beta, prompts over 200K tokens are billed at these rates.
      tiers: [{ above: 200_000, input: 6, output: 22.5, cacheRead: 0.6, cacheWrite: 7.5 }],
    },
  ),
  claude("claude-haiku-4-5", "Claude Haiku 4.5", 200_000, 64_000, "budget", {
    input: 1,
    output: 5,
    cacheRead: 0.1,
    cacheWrite: 1.25,
  }),
];

/** Limits for an id the catalog does not list. */
export const ANTHROPIC_DEFAULT_LIMITS = { contextWindow: 200_000, maxOutput: 64_000 };
