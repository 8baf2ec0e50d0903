/**
 * The SDK and its testing kit load without a top-level await, so a CommonJS project can `require()` them where
 * Node loads ES modules that way (22.12 and newer; Node 20 with --experimental-require-module): a module graph
 * with a top-level await fails there with ERR_REQUIRE_ASYNC_MODULE.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../lib/paths.js";
import { requireBuild } from "../support/ecosystem.js";

describe("the SDK from CommonJS", () => {
  it("require() gives createAgent and the testing kit", () => {
    requireBuild();
    const dist = join(packageRoot(), "dist");
    const script = `const sdk = require(${JSON.stringify(join(dist, "sdk", "index.js"))});
const kit = require(${JSON.stringify(join(dist, "sdk", "testing", "index.js"))});
console.log(typeof sdk.createAgent, Object.keys(kit).length > 0);`;
    const flags = Number(process.versions.node.split(".")[0]) < 22 ? ["--experimental-require-module"] : [];
    const r = spawnSync(process.execPath, [...flags, "--no-warnings", "-e", script], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("function true");
  });
});
