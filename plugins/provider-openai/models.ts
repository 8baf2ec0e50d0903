/**
 * OpenAI models (served through the Responses API) and the OpenAI-compatible cloud providers coil
 * knows out of the box. The first model of a list is the provider's default; fuzzy `--model`
 * matching picks the first match. Prices are US dollars per million tokens as OpenAI listed them in
 * 2026 (`cacheRead` is the cached-input price). Add or override entries in `$COIL_HOME/models.yaml`.
 */
import type { ApiKind, CatalogModel, Prices, PriceTier } from "../../lib/provider-kit/catalog.js";
import type { Compat } from "../../lib/provider-kit/config.js";

const EFFORTS_51 = ["none", "low", "medium", "high", "xhigh"];
const EFFORTS_5 = ["minimal", "low", "medium", "high"];
const EFFORTS_O = ["low", "medium", "high"];

function gpt(id: string, name: string, contextWindow: number, maxOutput: number, cost: Prices, extra: { efforts?: string[]; tiers?: PriceTier[]; reasoning?: boolean } = {}): CatalogModel {
  const reasoning = extra.reasoning ?? true;
  return {
    id,
    provider: "openai",
    name,
    api: "openai-responses",
    contextWindow,
    maxOutput,
    reasoning,
    input: ["text", "image"],
    cost,
    thinking: reasoning ? "effort" : undefined,
    efforts: reasoning ? (extra.efforts ?? EFFORTS_51) : undefined,
    tiers: extra.tiers,
  };
}

/** Prompts over 272K input tokens on the 1.05M-context models cost 2x input and 1.5x output for the whole request. */
function longContext(p: Prices): PriceTier[] {
  return [{ above: 272_000, input: p.input * 2, output: p.output * 1.5, cacheRead: p.cacheRead * 2, cacheWrite: p.cacheWrite * 2 }];
}

const P54 = { input: 2.5, output: 15, cacheRead: 0.25, cacheWrite: 0 };
const P55 = { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0 };

export const OPENAI_MODELS: readonly CatalogModel[] = [
  gpt("gpt-5.4", "GPT-5.4", 1_050_000, 128_000, P54, { tiers: longContext(P54) }),
  gpt("gpt-5.5", "GPT-5.5", 1_050_000, 128_000, P55, { tiers: longContext(P55) }),
  gpt("gpt-5.4-mini", "GPT-5.4 mini", 400_000, 128_000, { input: 0.75, output: 4.5, cacheRead: 0.075, cacheWrite: 0 }),
  gpt("gpt-5.2", "GPT-5.2", 400_000, 128_000, { input: 1.75, output: 14, cacheRead: 0.175, cacheWrite: 0 }),
  gpt("gpt-5.1", "GPT-5.1", 400_000, 128_000, { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 }, { efforts: ["none", "low", "medium", "high"] }),
  gpt("gpt-5", "GPT-5", 400_000, 128_000, { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 }, { efforts: EFFORTS_5 }),
  gpt("gpt-5-mini", "GPT-5 mini", 400_000, 128_000, { input: 0.25, output: 2, cacheRead: 0.025, cacheWrite: 0 }, { efforts: EFFORTS_5 }),
  gpt("gpt-5-nano", "GPT-5 nano", 400_000, 128_000, { input: 0.05, output: 0.4, cacheRead: 0.005, cacheWrite: 0 }, { efforts: EFFORTS_5 }),
  gpt("o4-mini", "o4-mini", 200_000, 100_000, { input: 1.1, output: 4.4, cacheRead: 0.275, cacheWrite: 0 }, { efforts: EFFORTS_O }),
  gpt("o3", "o3", 200_000, 100_000, { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 0 }, { efforts: EFFORTS_O }),
  gpt("gpt-4.1", "GPT-4.1", 1_047_576, 32_768, { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 0 }, { reasoning: false }),
  gpt("gpt-4.1-mini", "GPT-4.1 mini", 1_047_576, 32_768, { input: 0.4, output: 1.6, cacheRead: 0.1, cacheWrite: 0 }, { reasoning: false }),
  gpt("gpt-4o", "GPT-4o", 128_000, 16_384, { input: 2.5, output: 10, cacheRead: 1.25, cacheWrite: 0 }, { reasoning: false }),
  gpt("gpt-4o-mini", "GPT-4o mini", 128_000, 16_384, { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0 }, { reasoning: false }),
];

export const OPENAI_DEFAULT_LIMITS = { contextWindow: 128_000, maxOutput: 16_384 };

/** Switches for the reference servers. */
export const COMPAT_OPENAI: Required<Compat> = {
  maxTokensField: "max_completion_tokens",
  systemRole: "developer",
  streamUsage: true,
  reasoningEffort: true,
  toolCallIdMaxLength: 40,
  cacheControl: false,
  store: true,
};
/** What most OpenAI-compatible servers (Ollama, vLLM, LM Studio, llama.cpp, ...) accept. */
export const COMPAT_GENERIC: Required<Compat> = {
  maxTokensField: "max_tokens",
  systemRole: "system",
  streamUsage: true,
  reasoningEffort: false,
  toolCallIdMaxLength: 40,
  cacheControl: false,
  store: false,
};

export interface BuiltinProvider {
  id: string;
  name: string;
  api: ApiKind;
  baseUrl: string;
  apiKeyEnv: string;
  compat: Compat;
  models: CatalogModel[];
  limits: { contextWindow: number; maxOutput: number };
}

function compatModel(provider: string, id: string, name: string, contextWindow: number, maxOutput: number, cost: Prices, reasoning = false): CatalogModel {
  return { id, provider, name, api: "openai-completions", contextWindow, maxOutput, reasoning, input: ["text"], cost };
}

/** OpenAI-compatible clouds registered when their key variable is set (or stored with `coil auth set`). */
export const COMPATIBLE_PROVIDERS: readonly BuiltinProvider[] = [
  {
    id: "openrouter",
    name: "OpenRouter",
    api: "openai-completions",
    baseUrl: "https://openrouter.ai/api/v1",
    apiKeyEnv: "OPENROUTER_API_KEY",
    compat: {},
    models: [],
    limits: { contextWindow: 128_000, maxOutput: 16_384 },
  },
  {
    id: "deepseek",
    name: "DeepSeek",
    api: "openai-completions",
    baseUrl: "https://api.deepseek.com/v1",
    apiKeyEnv: "DEEPSEEK_API_KEY",
    compat: {},
    models: [
      compatModel("deepseek", "deepseek-chat", "DeepSeek Chat", 128_000, 8_192, { input: 0.28, output: 0.42, cacheRead: 0.028, cacheWrite: 0 }),
      compatModel("deepseek", "deepseek-reasoner", "DeepSeek Reasoner", 128_000, 64_000, { input: 0.28, output: 0.42, cacheRead: 0.028, cacheWrite: 0 }, true),
    ],
    limits: { contextWindow: 128_000, maxOutput: 8_192 },
  },
  {
    id: "groq",
    name: "Groq",
    api: "openai-completions",
    baseUrl: "https://api.groq.com/openai/v1",
    apiKeyEnv: "GROQ_API_KEY",
    compat: { maxTokensField: "max_completion_tokens" },
    models: [],
    limits: { contextWindow: 128_000, maxOutput: 32_768 },
  },
  {
    id: "together",
    name: "Together AI",
    api: "openai-completions",
    baseUrl: "https://api.together.xyz/v1",
    apiKeyEnv: "TOGETHER_API_KEY",
    compat: {},
    models: [],
    limits: { contextWindow: 128_000, maxOutput: 16_384 },
  },
  {
    id: "xai",
    name: "xAI",
    api: "openai-completions",
    baseUrl: "https://api.x.ai/v1",
    apiKeyEnv: "XAI_API_KEY",
    compat: {},
    models: [],
    limits: { contextWindow: 256_000, maxOutput: 32_768 },
  },
];
