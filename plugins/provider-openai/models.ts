/**
 * OpenAI models (served through the Responses API) and the OpenAI-compatible cloud providers coil
 * knows out of the box. The first model of a list is the provider's default; fuzzy `--model`
 * matching picks the first match. Prices are US dollars per million tokens as OpenAI listed them in
 * 2026 (`cacheRead` is the cached-input price). Add or override entries in `$COIL_HOME/models.yaml`.
 */
import type { ApiKind, CatalogModel, Prices, PriceTier } from "../../lib/provider-kit/catalog.js";
import type { Compat, ResolvedCompat } from "../../lib/provider-kit/config.js";

const EFFORTS_51 = ["none", "low", "medium", "high", "xhigh"];
const EFFORTS_5 = ["minimal", "low", "medium", "high"];
const EFFORTS_O = ["low", "medium", "high"];

function gpt(
  id: string,
  name: string,
  contextWindow: number,
  maxOutput: number,
  cost: Prices,
  extra: { efforts?: string[]; tiers?: PriceTier[]; reasoning?: boolean } = {},
): CatalogModel {
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
  return [
    {
      above: 272_000,
      input: p.input * 2,
      output: p.output * 1.5,
      cacheRead: p.cacheRead * 2,
      cacheWrite: p.cacheWrite * 2,
    },
  ];
}

const P54 = { input: 2.5, output: 15, cacheRead: 0.25, cacheWrite: 0 };
const P55 = { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0 };

export const OPENAI_MODELS: readonly CatalogModel[] = [
  // The default for a run that names no model: the balanced one (GPT-5.5 costs twice as much).
  { ...gpt("gpt-5.4", "GPT-5.4", 1_050_000, 128_000, P54, { tiers: longContext(P54) }), default: "provider" },
  gpt("gpt-5.5", "GPT-5.5", 1_050_000, 128_000, P55, { tiers: longContext(P55) }),
  gpt("gpt-5.4-mini", "GPT-5.4 mini", 400_000, 128_000, { input: 0.75, output: 4.5, cacheRead: 0.075, cacheWrite: 0 }),
  gpt("gpt-5.2", "GPT-5.2", 400_000, 128_000, { input: 1.75, output: 14, cacheRead: 0.175, cacheWrite: 0 }),
  gpt(
    "gpt-5.1",
    "GPT-5.1",
    400_000,
    128_000,
    { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 },
    { efforts: ["none", "low", "medium", "high"] },
  ),
  gpt(
    "gpt-5",
    "GPT-5",
    400_000,
    128_000,
    { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 },
    { efforts: EFFORTS_5 },
  ),
  gpt(
    "gpt-5-mini",
    "GPT-5 mini",
    400_000,
    128_000,
    { input: 0.25, output: 2, cacheRead: 0.025, cacheWrite: 0 },
    { efforts: EFFORTS_5 },
  ),
  gpt(
    "gpt-5-nano",
    "GPT-5 nano",
    400_000,
    128_000,
    { input: 0.05, output: 0.4, cacheRead: 0.005, cacheWrite: 0 },
    { efforts: EFFORTS_5 },
  ),
  gpt(
    "o4-mini",
    "o4-mini",
    200_000,
    100_000,
    { input: 1.1, output: 4.4, cacheRead: 0.275, cacheWrite: 0 },
    { efforts: EFFORTS_O },
  ),
  gpt("o3", "o3", 200_000, 100_000, { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 0 }, { efforts: EFFORTS_O }),
  gpt(
    "gpt-4.1",
    "GPT-4.1",
    1_047_576,
    32_768,
    { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 0 },
    { reasoning: false },
  ),
  gpt(
    "gpt-4.1-mini",
    "GPT-4.1 mini",
    1_047_576,
    32_768,
    { input: 0.4, output: 1.6, cacheRead: 0.1, cacheWrite: 0 },
    { reasoning: false },
  ),
  gpt(
    "gpt-4o",
    "GPT-4o",
    128_000,
    16_384,
    { input: 2.5, output: 10, cacheRead: 1.25, cacheWrite: 0 },
    { reasoning: false },
  ),
  gpt(
    "gpt-4o-mini",
    "GPT-4o mini",
    128_000,
    16_384,
    { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0 },
    { reasoning: false },
  ),
];

export const OPENAI_DEFAULT_LIMITS = { contextWindow: 128_000, maxOutput: 16_384 };

/** Switches for the reference servers. */
export const COMPAT_OPENAI: ResolvedCompat = {
  maxTokensField: "max_completion_tokens",
  systemRole: "developer",
  streamUsage: true,
  reasoningEffort: true,
  thinkingFormat: "openai",
  toolCallIdMaxLength: 40,
  requiresMistralToolIds: false,
  requiresToolResultName: false,
  requiresAssistantAfterToolResult: false,
  supportsStrictMode: true,
  cacheControl: false,
  stateless: true,
};
/** What most OpenAI-compatible servers (Ollama, vLLM, LM Studio, llama.cpp, ...) accept. */
export const COMPAT_GENERIC: ResolvedCompat = {
  maxTokensField: "max_tokens",
  systemRole: "system",
  streamUsage: true,
  reasoningEffort: false,
  thinkingFormat: "openai",
  toolCallIdMaxLength: 40,
  requiresMistralToolIds: false,
  requiresToolResultName: false,
  requiresAssistantAfterToolResult: false,
  supportsStrictMode: false,
  cacheControl: false,
  stateless: false,
};

export interface BuiltinProvider {
  id: string;
  name: string;
  api: ApiKind;
  baseUrl: string;
  /** Unset for local servers, which take no key. */
  apiKeyEnv?: string;
  compat: Compat;
  models: CatalogModel[];
  limits: { contextWindow: number; maxOutput: number };
}

function compatModel(
  provider: string,
  id: string,
  name: string,
  contextWindow: number,
  maxOutput: number,
  cost: Prices,
  extra: { reasoning?: boolean; images?: boolean; default?: boolean; tiers?: PriceTier[] } = {},
): CatalogModel {
  return {
    id,
    provider,
    name,
    api: "openai-completions",
    contextWindow,
    maxOutput,
    reasoning: extra.reasoning ?? false,
    input: extra.images ? ["text", "image"] : ["text"],
    cost,
    ...(extra.reasoning ? { thinking: "effort" as const } : {}),
    ...(extra.tiers ? { tiers: extra.tiers } : {}),
    ...(extra.default ? { default: "provider" as const } : {}),
  };
}

const p = (input: number, output: number, cacheRead = 0): Prices => ({ input, output, cacheRead, cacheWrite: 0 });

/**
 * OpenAI-compatible services, registered always and usable once their key variable is set (or a key
 * is stored with `coil auth set <id>`); the local servers (ollama, lmstudio, vllm) once models.yaml
 * names them. The model marked `default` is the one a run starts with when it names no model: the
 * provider's balanced choice, not its most expensive. Prices and limits are those the services
 * published in 2025 and the first half of 2026; they were not re-checked on 2026-12-01 (where a figure
 * is less certain, the entry says so). Correct them in models.yaml.
 */
export const COMPATIBLE_PROVIDERS: readonly BuiltinProvider[] = [
  {
    id: "openrouter",
    name: "OpenRouter",
    api: "openai-completions",
    baseUrl: "https://openrouter.ai/api/v1",
    apiKeyEnv: "OPENROUTER_API_KEY",
    compat: { thinkingFormat: "openrouter", reasoningEffort: true },
    // OpenRouter serves hundreds of ids (`vendor/model`); these are listed for their limits and prices.
    models: [
      compatModel(
        "openrouter",
        "anthropic/claude-sonnet-4.5",
        "Claude Sonnet 4.5 (OpenRouter)",
        1_000_000,
        64_000,
        p(3, 15, 0.3),
        { reasoning: true, images: true, default: true },
      ),
      compatModel("openrouter", "openai/gpt-5", "GPT-5 (OpenRouter)", 400_000, 128_000, p(1.25, 10, 0.125), {
        reasoning: true,
        images: true,
      }),
      compatModel("openrouter", "openai/gpt-5-mini", "GPT-5 mini (OpenRouter)", 400_000, 128_000, p(0.25, 2, 0.025), {
        reasoning: true,
        images: true,
      }),
      compatModel(
        "openrouter",
        "google/gemini-2.5-flash",
        "Gemini 2.5 Flash (OpenRouter)",
        1_048_576,
        65_535,
        p(0.3, 2.5, 0.075),
        { reasoning: true, images: true },
      ),
    ],
    limits: { contextWindow: 128_000, maxOutput: 16_384 },
  },
  {
    id: "gemini",
    name: "Google Gemini (OpenAI-compatible endpoint)",
    api: "openai-completions",
    baseUrl: "https://generativelanguage.googleapis.com/v1beta/openai",
    apiKeyEnv: "GEMINI_API_KEY",
    compat: { reasoningEffort: true },
    models: [
      compatModel("gemini", "gemini-2.5-flash", "Gemini 2.5 Flash", 1_048_576, 65_536, p(0.3, 2.5, 0.075), {
        reasoning: true,
        images: true,
        default: true,
      }),
      // Prompts over 200K tokens cost $2.50/$15 per million for the whole request.
      compatModel("gemini", "gemini-2.5-pro", "Gemini 2.5 Pro", 1_048_576, 65_536, p(1.25, 10, 0.31), {
        reasoning: true,
        images: true,
        tiers: [{ above: 200_000, ...p(2.5, 15, 0.625) }],
      }),
      compatModel("gemini", "gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", 1_048_576, 65_536, p(0.1, 0.4, 0.025), {
        reasoning: true,
        images: true,
      }),
    ],
    limits: { contextWindow: 1_048_576, maxOutput: 65_536 },
  },
  {
    id: "groq",
    name: "Groq",
    api: "openai-completions",
    baseUrl: "https://api.groq.com/openai/v1",
    apiKeyEnv: "GROQ_API_KEY",
    compat: { maxTokensField: "max_completion_tokens" },
    models: [
      compatModel("groq", "openai/gpt-oss-120b", "GPT-OSS 120B (Groq)", 131_072, 65_536, p(0.15, 0.6, 0.075), {
        reasoning: true,
        default: true,
      }),
      compatModel("groq", "moonshotai/kimi-k2-instruct-0905", "Kimi K2 (Groq)", 262_144, 16_384, p(1, 3, 0.5)),
      compatModel("groq", "llama-3.3-70b-versatile", "Llama 3.3 70B (Groq)", 131_072, 32_768, p(0.59, 0.79)),
    ],
    limits: { contextWindow: 128_000, maxOutput: 32_768 },
  },
  {
    id: "cerebras",
    name: "Cerebras",
    api: "openai-completions",
    baseUrl: "https://api.cerebras.ai/v1",
    apiKeyEnv: "CEREBRAS_API_KEY",
    compat: { maxTokensField: "max_completion_tokens" },
    models: [
      // Context is 131K on paid tiers (smaller on the free tier); the gpt-oss-120b price is the least certain figure here.
      compatModel("cerebras", "gpt-oss-120b", "GPT-OSS 120B (Cerebras)", 131_072, 40_000, p(0.35, 0.75), {
        reasoning: true,
        default: true,
      }),
      compatModel("cerebras", "qwen-3-32b", "Qwen 3 32B (Cerebras)", 131_072, 16_384, p(0.4, 0.8)),
    ],
    limits: { contextWindow: 131_072, maxOutput: 16_384 },
  },
  {
    id: "mistral",
    name: "Mistral",
    api: "openai-completions",
    baseUrl: "https://api.mistral.ai/v1",
    apiKeyEnv: "MISTRAL_API_KEY",
    // Mistral wants the tool's name on tool results, and tool-call ids of exactly 9 letters and digits.
    compat: { requiresToolResultName: true, requiresMistralToolIds: true },
    models: [
      compatModel("mistral", "mistral-medium-latest", "Mistral Medium", 131_072, 32_768, p(0.4, 2), {
        images: true,
        default: true,
      }),
      compatModel("mistral", "devstral-medium-latest", "Devstral Medium", 131_072, 32_768, p(0.4, 2)),
      compatModel("mistral", "mistral-large-latest", "Mistral Large", 262_144, 32_768, p(0.5, 1.5), { images: true }),
      compatModel("mistral", "codestral-latest", "Codestral", 262_144, 32_768, p(0.3, 0.9)),
    ],
    limits: { contextWindow: 131_072, maxOutput: 32_768 },
  },
  {
    id: "xai",
    name: "xAI",
    api: "openai-completions",
    baseUrl: "https://api.x.ai/v1",
    apiKeyEnv: "XAI_API_KEY",
    // Grok 4 reasons always and rejects `reasoning_effort`.
    compat: { reasoningEffort: false },
    models: [
      compatModel("xai", "grok-code-fast-1", "Grok Code Fast 1", 256_000, 32_768, p(0.2, 1.5, 0.02), {
        reasoning: true,
        default: true,
      }),
      compatModel("xai", "grok-4-fast-reasoning", "Grok 4 Fast", 2_000_000, 32_768, p(0.2, 0.5, 0.05), {
        reasoning: true,
        images: true,
      }),
      compatModel("xai", "grok-4", "Grok 4", 256_000, 32_768, p(3, 15, 0.75), { reasoning: true, images: true }),
    ],
    limits: { contextWindow: 256_000, maxOutput: 32_768 },
  },
  {
    id: "deepseek",
    name: "DeepSeek",
    api: "openai-completions",
    baseUrl: "https://api.deepseek.com/v1",
    apiKeyEnv: "DEEPSEEK_API_KEY",
    compat: {},
    models: [
      compatModel("deepseek", "deepseek-chat", "DeepSeek Chat", 128_000, 8_192, p(0.28, 0.42, 0.028), {
        default: true,
      }),
      compatModel("deepseek", "deepseek-reasoner", "DeepSeek Reasoner", 128_000, 64_000, p(0.28, 0.42, 0.028), {
        reasoning: true,
      }),
    ],
    limits: { contextWindow: 128_000, maxOutput: 8_192 },
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
  // Local servers: no key, no price; they serve whatever ids are loaded (`coil --model ollama/qwen3:32b`).
  {
    id: "ollama",
    name: "Ollama",
    api: "openai-completions",
    baseUrl: "http://localhost:11434/v1",
    compat: {},
    models: [],
    limits: { contextWindow: 32_768, maxOutput: 8_192 },
  },
  {
    id: "lmstudio",
    name: "LM Studio",
    api: "openai-completions",
    baseUrl: "http://localhost:1234/v1",
    compat: {},
    models: [],
    limits: { contextWindow: 32_768, maxOutput: 8_192 },
  },
  {
    id: "vllm",
    name: "vLLM",
    api: "openai-completions",
    baseUrl: "http://localhost:8000/v1",
    compat: {},
    models: [],
    limits: { contextWindow: 32_768, maxOutput: 8_192 },
  },
];
