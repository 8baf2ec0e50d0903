/**
 * Azure OpenAI: the `azure` provider, through the `AzureOpenAI` client of the `openai` SDK. The
 * resource comes from `AZURE_OPENAI_ENDPOINT` (https://<resource>.openai.azure.com), the key from
 * `AZURE_OPENAI_API_KEY` (sent as `api-key`), the API version from `OPENAI_API_VERSION`. Model ids are
 * deployment names: a deployment named like a catalog model (gpt-5.4) gets that model's limits, prices
 * and API (Responses); any other name is served over Chat Completions (`/deployments/{name}/...`).
 */
import type OpenAI from "openai";

/** The API version used when `OPENAI_API_VERSION` is not set (one that serves both Responses and Chat Completions). */
export const AZURE_API_VERSION = "2025-04-01-preview";

export const AZURE_HINT =
  "set AZURE_OPENAI_ENDPOINT (https://<resource>.openai.azure.com) and AZURE_OPENAI_API_KEY, and OPENAI_API_VERSION if your resource needs another than " +
  AZURE_API_VERSION;

export const azureEndpoint = (): string | undefined => process.env.AZURE_OPENAI_ENDPOINT || undefined;

export async function azureClient(
  key: string | undefined,
  common: { timeout?: number; fetch?: typeof fetch; defaultHeaders?: Record<string, string>; logger?: unknown },
): Promise<OpenAI> {
  const { AzureOpenAI } = await import("openai");
  return new AzureOpenAI({
    ...(common as object),
    endpoint: azureEndpoint(),
    apiKey: key,
    apiVersion: process.env.OPENAI_API_VERSION || AZURE_API_VERSION,
    maxRetries: 0,
  });
}
