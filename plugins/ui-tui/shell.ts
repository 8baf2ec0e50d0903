/**
 * `!cmd` in the editor: the user's own shell command, run in the working directory. It goes through
 * the `operations` service when a plugin provides one (sandbox-bwrap confines it like the model's
 * bash calls), else through the user's shell directly. Output is handed over as it arrives (the
 * newest 500 KB once it passes 1 MB).
 */
import { spawn } from "node:child_process";
import { messageOf } from "../../kernel/index.js";
import type { Operations } from "../tools-coding/api.js";

/** Resolves with the exit code (127 when the command could not start, null when a signal ended it). */
export async function runShellCommand(command: string, cwd: string, onOutput: (soFar: string) => void, exec?: Operations["exec"]): Promise<number | null> {
  let output = "";
  const decoder = new TextDecoder();
  const add = (text: string) => {
    output += text;
    if (output.length > 1_000_000) output = output.slice(-500_000);
    onOutput(output);
  };
  if (exec) {
    try {
      const result = await exec(command, { cwd, shell: process.env.SHELL || undefined, onData: (chunk) => add(decoder.decode(chunk, { stream: true })) });
      return result.exitCode;
    } catch (error) {
      add(messageOf(error));
      return 127;
    }
  }
  return new Promise<number | null>((done) => {
    const child = spawn(process.env.SHELL || "/bin/sh", ["-c", command], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    const onData = (chunk: Buffer) => add(chunk.toString());
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("error", (e) => {
      add(messageOf(e));
      done(127);
    });
    child.on("close", (exit) => done(exit));
  });
}
