/**
 * Claude on Amazon Bedrock and Google Vertex AI through the shipped CLI and the clouds' own Anthropic
 * SDKs, against local servers that check what the clouds check: a recomputed AWS SigV4 signature or a
 * Bedrock API key, an STS token exchange for a Google external-account credential, each cloud's body
 * shape, and the Messages API validation. Credentials come from the environment, as in Claude Code.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { coil as run, type Ran } from "../../support/ecosystem.js";
import { childEnv } from "../../support/env.js";
import { startMockBedrock, startMockVertex, type MockCloud } from "../../support/mock-clouds.js";

const REGION = "eu-west-3";
const ACCESS = "AKIAMOCKBEDROCK00001";
const SECRET = "mock/Secret+Key/for/bedrock/0123456789abcd";
const BEARER = "ABSKmockbedrockapikey0123456789";
const temps: string[] = [];
let bedrock: MockCloud;
let bedrockKey: MockCloud;
let vertex: MockCloud & { tokenUrl: string };

beforeAll(async () => {
  bedrock = await startMockBedrock({ region: REGION, accessKey: ACCESS, secretKey: SECRET });
  bedrockKey = await startMockBedrock({ region: REGION, bearer: BEARER });
  vertex = await startMockVertex({
    project: "coil-test-project",
    region: "us-east5",
    subjectToken: "subject-token-from-file",
  });
});
afterAll(async () => {
  await Promise.all([bedrock.close(), bedrockKey.close(), vertex.close()]);
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), "coil-clouds-"));
  temps.push(dir);
  mkdirSync(join(dir, ".home"));
  writeFileSync(join(dir, "notes.txt"), "cloud notes\n");
  return dir;
}

function coil(cwd: string, args: string[], env: Record<string, string>): Promise<Ran> {
  return run(cwd, args, childEnv({ COIL_HOME: join(cwd, ".home"), ...env }));
}

describe("provider bedrock (Amazon Bedrock)", () => {
  const env = (url: string) => ({
    AWS_REGION: REGION,
    AWS_ACCESS_KEY_ID: ACCESS,
    AWS_SECRET_ACCESS_KEY: SECRET,
    ANTHROPIC_BEDROCK_BASE_URL: url,
  });

  it("runs a tool loop with SigV4-signed requests and event-stream replies; prices come from the Claude model in the id", async () => {
    const dir = project();
    bedrock.push(
      { blocks: [{ text: "Reading." }, { tool: { id: "toolu_b1", name: "read", input: { path: "notes.txt" } } }] },
      { blocks: [{ text: "The notes say: cloud notes." }] },
    );
    const model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
    const r = await coil(
      dir,
      ["--model", `bedrock/${model}`, "--mode", "json", "-p", "what do the notes say?"],
      env(bedrock.url),
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(bedrock.rejected()).toEqual([]);
    expect(bedrock.requests.map((q) => q.path)).toEqual(Array(2).fill(`/model/${model}/invoke-with-response-stream`));
    const second = bedrock.requests[1]!.body;
    expect(second.messages.at(-1).content[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_b1" });
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const end = events.at(-1);
    expect(end.type).toBe("agent_end");
    expect(events.filter((e: { type: string }) => e.type === "message_end").at(-1).message.content[0].text).toBe(
      "The notes say: cloud notes.",
    );
    // claude-sonnet-4-5's catalog price ($3/M in) applies to the Bedrock id
    const usage = events
      .filter(
        (e: { type: string; message?: { role: string } }) =>
          e.type === "message_end" && e.message?.role === "assistant",
      )
      .map((e: { message: { usage: { cost: { total: number } } } }) => e.message.usage.cost.total);
    expect(usage.every((c: number) => c > 0)).toBe(true);
  });

  it("uses a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) as a bearer token", async () => {
    const dir = project();
    bedrockKey.push({ blocks: [{ text: "hello from bedrock" }] });
    const r = await coil(dir, ["--model", "bedrock/sonnet-4-5", "-p", "hi"], {
      AWS_REGION: REGION,
      AWS_BEARER_TOKEN_BEDROCK: BEARER,
      ANTHROPIC_BEDROCK_BASE_URL: bedrockKey.url,
    });
    expect(r.stderr).toBe("");
    expect([r.code, r.stdout.trim()]).toEqual([0, "hello from bedrock"]);
    expect(bedrockKey.requests.at(-1)!.path).toBe("/model/anthropic.claude-sonnet-4-5-v1/invoke-with-response-stream");
  });

  it("a wrong secret key is the cloud's error, with the secret never shown", async () => {
    const dir = project();
    const r = await coil(dir, ["--model", "bedrock/anthropic.claude-haiku-4-5-v1", "-p", "hi"], {
      ...env(bedrock.url),
      AWS_SECRET_ACCESS_KEY: "wrong-secret-key-value-0000",
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("signature we calculated does not match");
    expect(r.stderr).not.toContain("wrong-secret-key-value-0000");
  });

  it("without AWS settings it says what to set", async () => {
    const dir = project();
    const r = await coil(dir, ["--model", "bedrock/anthropic.claude-haiku-4-5-v1", "-p", "hi"], {});
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("AWS_REGION");
    // `coil models` says how to set it up, and lists its models once it is
    const unset = await coil(dir, ["models"], {});
    expect(unset.stdout).toMatch(/bedrock: set AWS_REGION/);
    expect(unset.stdout).not.toMatch(/bedrock\/anthropic\./);
    const set = await coil(dir, ["models", "bedrock"], { AWS_REGION: REGION, AWS_PROFILE: "coil-test" });
    expect(set.stdout).toMatch(/bedrock\/anthropic\.claude-sonnet-4-5-v1 .*Claude Sonnet 4\.5 \(Amazon Bedrock\)/);
  });
});

describe("provider vertex (Google Vertex AI)", () => {
  it("exchanges an external-account credential for a token and streams from streamRawPredict", async () => {
    const dir = project();
    writeFileSync(join(dir, "subject.txt"), "subject-token-from-file");
    const credentials = join(dir, "gcp.json");
    writeFileSync(
      credentials,
      JSON.stringify({
        type: "external_account",
        audience: "//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/coil/providers/test",
        subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
        token_url: vertex.tokenUrl,
        credential_source: { file: join(dir, "subject.txt") },
      }),
    );
    vertex.push(
      { blocks: [{ text: "Reading." }, { tool: { id: "toolu_v1", name: "read", input: { path: "notes.txt" } } }] },
      { blocks: [{ text: "vertex read: cloud notes" }] },
    );
    const r = await coil(dir, ["--model", "vertex/claude-sonnet-4-5@20250929", "-p", "read the notes"], {
      CLOUD_ML_REGION: "us-east5",
      ANTHROPIC_VERTEX_PROJECT_ID: "coil-test-project",
      GOOGLE_APPLICATION_CREDENTIALS: credentials,
      ANTHROPIC_VERTEX_BASE_URL: `${vertex.url}/v1`,
    });
    expect(r.stderr).toBe("");
    expect([r.code, r.stdout.trim()]).toEqual([0, "vertex read: cloud notes"]);
    expect(vertex.rejected()).toEqual([]);
    const calls = vertex.requests.filter((q) => q.path.includes("streamRawPredict"));
    expect(calls.map((q) => q.path)).toEqual(
      Array(2).fill(
        "/v1/projects/coil-test-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
      ),
    );
    expect(vertex.requests.filter((q) => q.path === "/token").length).toBeGreaterThanOrEqual(1);
  });
});
