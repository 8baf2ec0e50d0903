/**
 * Azure OpenAI through the shipped CLI and the `AzureOpenAI` client of the `openai` SDK, against a
 * local server that answers only Azure's routes (deployment paths, `api-version`, the `api-key` header).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { coil as run, type Ran } from "../../support/ecosystem.js";
import { childEnv } from "../../support/env.js";
import { chat, responses, startMockOpenAI, type MockOpenAI } from "../../support/mock-openai.js";

const KEY = "azure-mock-key-0123456789abcdef";
const VERSION = "2025-04-01-preview";
const temps: string[] = [];
let azure: MockOpenAI;

beforeAll(async () => {
  azure = await startMockOpenAI({ azure: { apiVersion: VERSION, key: KEY } });
});
afterAll(async () => {
  await azure.close();
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function coil(args: string[], env: Record<string, string>): Promise<Ran> {
  const dir = mkdtempSync(join(tmpdir(), "coil-azure-"));
  temps.push(dir);
  mkdirSync(join(dir, ".home"));
  return run(dir, args, childEnv({ COIL_HOME: join(dir, ".home"), ...env }));
}

describe("provider azure (Azure OpenAI)", () => {
  const endpoint = () => azure.url.replace(/\/v1$/, "");

  it("serves a deployment of its own name over Chat Completions and a catalog model over Responses", async () => {
    azure.requests.length = 0;
    azure.push(chat({ text: "from my deployment" }), responses([{ text: "from gpt-5.4" }]));
    const env = { AZURE_OPENAI_ENDPOINT: endpoint(), AZURE_OPENAI_API_KEY: KEY };
    const a = await coil(["--model", "azure/team-gpt-prod", "-p", "hi"], env);
    expect(a.stderr).toBe("");
    expect([a.code, a.stdout.trim()]).toEqual([0, "from my deployment"]);
    const b = await coil(["--model", "azure/gpt-5.4", "-p", "hi"], env);
    expect(b.stderr).toBe("");
    expect([b.code, b.stdout.trim()]).toEqual([0, "from gpt-5.4"]);
    expect(azure.rejected()).toEqual([]);
    expect(azure.requests.map((r) => [r.path, r.deployment])).toEqual([
      ["/v1/chat/completions", "team-gpt-prod"],
      ["/v1/responses", undefined],
    ]);
    expect(azure.requests.every((r) => r.headers["api-key"] === KEY && !r.headers.authorization)).toBe(true);
  });

  it("OPENAI_API_VERSION picks the version; a wrong key is Azure's 401, with the key never shown", async () => {
    azure.requests.length = 0;
    const wrongVersion = await coil(["--model", "azure/team-gpt-prod", "-p", "hi"], {
      AZURE_OPENAI_ENDPOINT: endpoint(),
      AZURE_OPENAI_API_KEY: KEY,
      OPENAI_API_VERSION: "2024-02-01",
    });
    expect(wrongVersion.code).toBe(1);
    expect(wrongVersion.stderr).toContain("API version 2024-02-01 is not supported");
    const wrongKey = await coil(["--model", "azure/team-gpt-prod", "-p", "hi"], {
      AZURE_OPENAI_ENDPOINT: endpoint(),
      AZURE_OPENAI_API_KEY: "not-the-right-azure-key-000",
    });
    expect(wrongKey.code).not.toBe(0);
    expect(wrongKey.stderr).toContain("Access denied");
    expect(wrongKey.stderr).not.toContain("not-the-right-azure-key-000");
  });

  it("without the endpoint it says what to set", async () => {
    const r = await coil(["--model", "azure/gpt-5.4", "-p", "hi"], { AZURE_OPENAI_API_KEY: KEY });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("AZURE_OPENAI_ENDPOINT");
  });
});
