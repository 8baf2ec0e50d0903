// Start a throwaway redis-server for the fleet tests and bench: 127.0.0.1 only, a free port, no
// persistence, a temp directory; `stop()` ends it and removes the directory. Used by
// test/plugins/fleet*.test.ts and bench/fleet.mjs.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The redis-server on PATH, or undefined. */
export function redisServerPath() {
  const r = spawnSync("sh", ["-c", "command -v redis-server"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function ping(port) {
  return new Promise((resolve) => {
    const c = createConnection({ host: "127.0.0.1", port });
    c.once("error", () => resolve(false));
    c.once("connect", () => c.write("PING\r\n"));
    c.once("data", (d) => {
      c.destroy();
      resolve(d.toString().startsWith("+PONG"));
    });
  });
}

export async function startRedis({ timeoutMs = 10_000 } = {}) {
  const bin = redisServerPath();
  if (!bin) throw new Error("redis-server is not installed (apt-get install redis-server)");
  const dir = mkdtempSync(join(tmpdir(), "coil-redis-"));
  const port = await freePort();
  const child = spawn(
    bin,
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
      "--protected-mode",
      "yes",
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const deadline = Date.now() + timeoutMs;
  while (!(await ping(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`redis-server did not start on 127.0.0.1:${port}: ${output.slice(-500)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null) {
        const gone = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await Promise.race([gone, new Promise((r) => setTimeout(r, 5000))]);
        if (child.exitCode === null) child.kill("SIGKILL");
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
