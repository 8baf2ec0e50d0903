/** Running one Claude Code command hook: JSON on stdin, a timeout, and its exit code, stdout and stderr. */
import { spawn } from "node:child_process";

/**
 * A hook's JSON output (Claude Code's shape) as parsed, never checked: every value is `unknown`. The
 * nested objects coil reads through are typed as objects; optional chaining reads them safely whatever
 * the hook printed.
 */
export interface HookJson {
  continue?: unknown;
  stopReason?: unknown;
  systemMessage?: unknown;
  decision?: unknown;
  reason?: unknown;
  additionalContext?: unknown;
  hookSpecificOutput?: {
    additionalContext?: unknown;
    permissionDecision?: unknown;
    permissionDecisionReason?: unknown;
    updatedInput?: unknown;
    decision?: { behavior?: unknown; message?: unknown; updatedInput?: unknown; [key: string]: unknown };
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export interface HookOutcome {
  command: string;
  /** Exit code; undefined when it timed out, was aborted or could not start. */
  code?: number;
  stdout: string;
  stderr: string;
  timedOut?: boolean;
  /** stdout parsed as a JSON object, when it is one. */
  json?: HookJson;
  error?: string;
}

export function runHook(
  command: string,
  input: unknown,
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; signal?: AbortSignal },
): Promise<HookOutcome> {
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let settled = false;
    // Its own process group, so a timeout ends the whole pipeline (sh and what it started).
    const child = spawn(command, {
      shell: true,
      cwd: opts.cwd,
      env: opts.env,
      stdio: ["pipe", "pipe", "pipe"],
      detached: process.platform !== "win32",
    });
    const killAll = () => {
      try {
        if (child.pid && process.platform !== "win32") process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
        // already gone
      }
    };
    const finish = (outcome: Omit<HookOutcome, "command" | "stdout" | "stderr">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      const out: HookOutcome = { command, stdout, stderr, ...outcome };
      const text = stdout.trim();
      if (text.startsWith("{")) {
        try {
          const parsed = JSON.parse(text);
          if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) out.json = parsed;
        } catch {
          // plain text output
        }
      }
      resolve(out);
    };
    const timer = setTimeout(() => {
      killAll();
      finish({ timedOut: true, error: `timed out after ${opts.timeoutMs / 1000} s` });
    }, opts.timeoutMs);
    const onAbort = () => {
      killAll();
      finish({ error: "aborted" });
    };
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.on("error", (e) => finish({ error: `cannot run: ${e.message}` }));
    child.on("close", (code) => finish({ code: code ?? undefined }));
    child.stdin.on("error", () => undefined); // a hook that ignores stdin may close it early
    child.stdin.end(JSON.stringify(input));
  });
}
