/**
 * `!cmd` in the editor: the user's own shell command, run in the working directory with the user's
 * shell. Output is handed over as it arrives (the newest 500 KB once it passes 1 MB).
 */
import { spawn } from "node:child_process";
import { messageOf } from "../../kernel/index.js";

/** Resolves with the exit code (127 when the shell could not start, null when a signal ended it). */
export function runShellCommand(command: string, cwd: string, onOutput: (soFar: string) => void): Promise<number | null> {
  let output = "";
  return new Promise<number | null>((done) => {
    const child = spawn(process.env.SHELL || "/bin/sh", ["-c", command], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.length > 1_000_000) output = output.slice(-500_000);
      onOutput(output);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("error", (e) => {
      output += messageOf(e);
      onOutput(output);
      done(127);
    });
    child.on("close", (exit) => done(exit));
  });
}
