/**
 * Claude through the clouds that host it: Amazon Bedrock and Google Vertex AI. Each is a provider of
 * its own (`bedrock`, `vertex`) served by its Anthropic SDK (`@anthropic-ai/bedrock-sdk`,
 * `@anthropic-ai/vertex-sdk`, imported on the first request), with credentials from the cloud's
 * standard environment, the same variables Claude Code reads. The wire mapping (thinking, caching,
 * tools, images) is the Messages API's; only the transport and authentication differ.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type { CatalogModel } from "../../lib/provider-kit/catalog.js";
import { importOptional } from "../../lib/optional-dependency.js";

type Env = NodeJS.ProcessEnv;

/** What the SDK clients of both clouds share with coil's own client settings. */
export interface ClientCommon {
  timeout?: number;
  /** coil's fetch (the body as UTF-8 bytes: lib/provider-kit/fetch.ts). */
  fetch?: typeof fetch;
  defaultHeaders?: Record<string, string>;
  logger: NonNullable<ConstructorParameters<typeof Anthropic>[0]>["logger"];
}

export interface Cloud {
  id: "bedrock" | "vertex";
  name: string;
  /** What is missing from the environment to use it, or undefined when it is usable. */
  missing(env: Env): string | undefined;
  /** How to set it up (the error for a missing credential, `coil models`). */
  hint: string;
  /** The cloud's id for a catalog model (`claude-sonnet-5-5` → `anthropic.claude-sonnet-5-5-v1` on Bedrock). */
  modelId(catalogId: string): string;
  /** The catalog id inside one of the cloud's model ids, to find prices and limits. */
  catalogId(cloudId: string): string;
  client(common: ClientCommon, env: Env): Promise<Anthropic>;
}

const first = (env: Env, ...names: string[]) => names.map((n) => env[n]).find((v) => v !== undefined && v !== "");

/** The AWS credential sources the default provider chain reads without a network call or a prompt. */
const AWS_CREDENTIALS = [
  "AWS_BEARER_TOKEN_BEDROCK",
  "AWS_ACCESS_KEY_ID",
  "AWS_PROFILE",
  "AWS_WEB_IDENTITY_TOKEN_FILE",
  "AWS_CONTAINER_CREDENTIALS_FULL_URI",
  "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
];

export const BEDROCK: Cloud = {
  id: "bedrock",
  name: "Amazon Bedrock",
  hint: "set AWS_REGION and AWS credentials (AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK); ANTHROPIC_BEDROCK_BASE_URL points at a proxy",
  missing(env) {
    if (!first(env, "AWS_REGION", "AWS_DEFAULT_REGION")) return "AWS_REGION is not set";
    if (!first(env, ...AWS_CREDENTIALS) && env.CLAUDE_CODE_USE_BEDROCK !== "1")
      return "no AWS credentials in the environment";
    return undefined;
  },
  modelId: (id) => `anthropic.${id}-v1`,
  // us.anthropic.claude-sonnet-4-5-20250929-v1:0 → claude-sonnet-4-5-20250929 (findModel drops the date)
  catalogId: (id) => id.replace(/^(?:[a-z]{2,6}\.)?anthropic\./, "").replace(/-v\d+(?::\d+)?$/, ""),
  async client(common, env) {
    const { AnthropicBedrock } = await importOptional(
      "@anthropic-ai/bedrock-sdk",
      "Amazon Bedrock",
      () => import("@anthropic-ai/bedrock-sdk"),
    );
    const region = first(env, "AWS_REGION", "AWS_DEFAULT_REGION");
    const bearer = first(env, "AWS_BEARER_TOKEN_BEDROCK");
    const [access, secret] = [first(env, "AWS_ACCESS_KEY_ID"), first(env, "AWS_SECRET_ACCESS_KEY")];
    // Static keys when both are set; otherwise the SDK's default chain (profile, SSO, web identity, container).
    const creds = bearer
      ? { apiKey: bearer }
      : access && secret
        ? { awsAccessKey: access, awsSecretKey: secret, awsSessionToken: first(env, "AWS_SESSION_TOKEN") ?? null }
        : {};
    return new AnthropicBedrock({
      ...common,
      ...creds,
      awsRegion: region,
      baseURL: first(env, "ANTHROPIC_BEDROCK_BASE_URL"),
      maxRetries: 0,
    } as never) as unknown as Anthropic;
  },
};

export const VERTEX: Cloud = {
  id: "vertex",
  name: "Google Vertex AI",
  hint: "set CLOUD_ML_REGION (e.g. us-east5 or global) and ANTHROPIC_VERTEX_PROJECT_ID, with Google credentials (GOOGLE_APPLICATION_CREDENTIALS or `gcloud auth application-default login`); ANTHROPIC_VERTEX_BASE_URL points at a proxy",
  missing(env) {
    if (!first(env, "CLOUD_ML_REGION")) return "CLOUD_ML_REGION is not set";
    if (!first(env, "ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT"))
      return "ANTHROPIC_VERTEX_PROJECT_ID is not set";
    return undefined;
  },
  modelId: (id) => id,
  // claude-sonnet-4-5@20250929 → claude-sonnet-4-5
  catalogId: (id) => id.replace(/@\d{8}$/, ""),
  async client(common, env) {
    const [{ AnthropicVertex }, { GoogleAuth }] = await Promise.all([
      importOptional("@anthropic-ai/vertex-sdk", "Google Vertex AI", () => import("@anthropic-ai/vertex-sdk")),
      importOptional("google-auth-library", "Google Vertex AI", () => import("google-auth-library")),
    ]);
    const projectId = first(env, "ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT");
    return new AnthropicVertex({
      ...common,
      region: first(env, "CLOUD_ML_REGION"),
      projectId,
      // Application Default Credentials, told the project so they do not look it up over the network.
      googleAuth: new GoogleAuth({ scopes: "https://www.googleapis.com/auth/cloud-platform", projectId }),
      baseURL: first(env, "ANTHROPIC_VERTEX_BASE_URL"),
      maxRetries: 0,
    } as never) as unknown as Anthropic;
  },
};

export const CLOUDS: readonly Cloud[] = [BEDROCK, VERTEX];

/** The Claude catalog under a cloud's model ids (the catalog id stays findable by fuzzy `--model`). */
export function cloudModels(cloud: Cloud, catalog: readonly CatalogModel[]): CatalogModel[] {
  return catalog.map((m) => ({
    ...m,
    id: cloud.modelId(m.id),
    provider: cloud.id,
    name: `${m.name ?? m.id} (${cloud.name})`,
  }));
}
