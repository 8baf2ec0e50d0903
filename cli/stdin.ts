/**
 * Piped stdin in print modes (`git diff | coil -p "write a commit message"`): read to its end, then added
 * to the prompt after it, on a line of its own (as Claude Code does); alone, it is the prompt. Text only, at
 * most `STDIN_MAX_BYTES`: binary input and input over the cap are refused with a message, never cut or dropped.
 */
import { sniffBinary, SNIFF_BYTES } from "../lib/sniff.js";

/** The most piped stdin a prompt takes (10 MB, Claude Code's cap). */
export const STDIN_MAX_BYTES = 10 * 1024 * 1024;

/** Seconds without a byte or the end of stdin before coil says what it waits for. */
const QUIET_NOTE_MS = 3000;

export type Piped = { text: string } | { problem: string };

/** Read `stdin` to its end: its text, or why it cannot be a prompt. */
export async function readPiped(
  stdin: NodeJS.ReadableStream,
  stderr: NodeJS.WritableStream,
  max = STDIN_MAX_BYTES,
): Promise<Piped> {
  const chunks: Buffer[] = [];
  let size = 0;
  let noted = false;
  const note = () => {
    noted = true;
    stderr.write("coil: reading the prompt's input from stdin until it ends (pass </dev/null if there is none)\n");
  };
  let timer = setTimeout(note, QUIET_NOTE_MS);
  try {
    for await (const chunk of stdin) {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
      size += bytes.length;
      if (size > max)
        return {
          problem: `piped stdin is over ${formatBytes(max)}, more than a prompt takes: save it to a file and name the file in the prompt (the model reads it with its tools)`,
        };
      chunks.push(bytes);
      clearTimeout(timer);
      if (!noted) timer = setTimeout(note, QUIET_NOTE_MS);
    }
  } finally {
    clearTimeout(timer);
  }
  const all = Buffer.concat(chunks);
  const binary = sniffBinary(all.subarray(0, SNIFF_BYTES), "file");
  if (binary)
    return {
      problem: `piped stdin is binary${binary.what ? ` (${binary.what})` : ""}, not text: coil adds only text to a prompt; pipe a text form of it (e.g. \`xxd file | head -50\`), or name the file in the prompt`,
    };
  return { text: all.toString("utf8") };
}

/** The prompt with piped text after it (`explain` + `ERROR: disk full` → `explain\nERROR: disk full`). */
export function mergePiped(prompt: string | undefined, piped: string): string | undefined {
  const text = piped.replace(/\s+$/, "");
  if (!text.trim()) return prompt;
  return prompt ? `${prompt}\n${text}` : text;
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round(n / (1024 * 1024))} MB` : `${Math.round(n / 1024)} KB`;
}
