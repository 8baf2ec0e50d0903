/**
 * What grep, find and ls need from the file and process backend. They use the `operations` service
 * when a plugin provides one (tools-coding documents the full interface; a sandbox may provide it),
 * method by method, and this small local implementation otherwise.
 */
import { spawn } from "../../lib/child-process.js";
import { accessSync, constants, createReadStream } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { delimiter, join } from "node:path";

export interface SearchOperations {
  stat(path: string): Promise<{ kind: "file" | "directory" | "other"; size: number }>;
  readFile(path: string): Promise<Uint8Array>;
  /** The file in chunks (grep reads files this way, so a huge file or line is never held whole). */
  readStream?(path: string): AsyncIterable<Uint8Array>;
  readdir(path: string): Promise<{ name: string; kind: "file" | "directory" | "symlink" | "other" }[]>;
  exec(
    command: string,
    options: { cwd: string; signal?: AbortSignal; onData(chunk: Uint8Array, stream: "stdout" | "stderr"): void },
  ): Promise<{ exitCode: number | null; signal: string | null }>;
  /** Full path of an executable on PATH, if there is one. */
  which?(name: string): Promise<string | undefined>;
}

export const localSearchOperations: Required<SearchOperations> = {
  async stat(path) {
    const s = await stat(path);
    return { kind: s.isFile() ? "file" : s.isDirectory() ? "directory" : "other", size: s.size };
  },
  readFile: (path) => readFile(path),
  readStream: (path) => createReadStream(path, { highWaterMark: 64 * 1024 }),
  async readdir(path) {
    const entries = await readdir(path, { withFileTypes: true });
    return entries.map((e) => ({
      name: e.name,
      kind: e.isSymbolicLink() ? "symlink" : e.isDirectory() ? "directory" : e.isFile() ? "file" : "other",
    }));
  },
  exec(command, o) {
    return new Promise((resolve, reject) => {
      const child = spawn("/bin/sh", ["-c", command], {
        cwd: o.cwd,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      const onAbort = () => {
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          // already gone
        }
      };
      child.stdout.on("data", (d: Buffer) => o.onData(d, "stdout"));
      child.stderr.on("data", (d: Buffer) => o.onData(d, "stderr"));
      child.on("error", (e) => {
        o.signal?.removeEventListener("abort", onAbort);
        reject(e);
      });
      child.on("close", (code, signal) => {
        o.signal?.removeEventListener("abort", onAbort);
        resolve({ exitCode: code, signal });
      });
      if (o.signal?.aborted) onAbort();
      else o.signal?.addEventListener("abort", onAbort, { once: true });
    });
  },
  async which(name) {
    for (const dir of (process.env.PATH ?? "").split(delimiter)) {
      if (!dir) continue;
      try {
        accessSync(join(dir, name), constants.X_OK);
        return join(dir, name);
      } catch {
        // not here
      }
    }
    return undefined;
  },
};

/** The service's methods where provided, the local ones otherwise; `which` goes through a provided exec. */
export function resolveSearchOperations(service: Partial<SearchOperations> | undefined): Required<SearchOperations> {
  if (!service) return localSearchOperations;
  const pick = <K extends keyof SearchOperations>(key: K) =>
    typeof service[key] === "function"
      ? ((service[key] as (...a: unknown[]) => unknown).bind(service) as Required<SearchOperations>[K])
      : localSearchOperations[key];
  const exec = pick("exec");
  const which =
    typeof service.which === "function" || typeof service.exec !== "function"
      ? pick("which")
      : async (name: string) => {
          let out = "";
          const r = await exec(`command -v ${name}`, {
            cwd: "/",
            onData: (c) => (out += Buffer.from(c).toString("utf8")),
          }).catch(() => undefined);
          return r?.exitCode === 0 && out.trim() ? out.trim() : undefined;
        };
  // A backend that reads files but does not stream them is read through its readFile, never around it.
  const readFileOf = pick("readFile");
  const readStream =
    typeof service.readStream === "function" || typeof service.readFile !== "function"
      ? pick("readStream")
      : async function* (path: string) {
          yield await readFileOf(path);
        };
  return { stat: pick("stat"), readFile: readFileOf, readStream, readdir: pick("readdir"), exec, which };
}
