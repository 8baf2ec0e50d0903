/**
 * Esc Esc while idle opens the checkpoints plugin's rewind picker (`/rewind --pick`: choose a prompt, what to
 * restore, see the diff, confirm). Kept out of app.ts: the app only reports Esc presses here. When the
 * conversation went back, the rewound prompt's text goes back into the editor (as with /tree).
 */
import { textOf, type Agent } from "../../api/index.js";
import { findCommand } from "../../lib/front-end.js";
import type { MessageEntry, SessionService } from "../session-jsonl/api.js";

/** Two presses within `windowMs`. */
export class DoublePress {
  private last = 0;
  constructor(private readonly windowMs: number) {}
  /** True on the second press of a pair (the pair is then used up). */
  press(now = Date.now()): boolean {
    const second = now - this.last < this.windowMs;
    this.last = second ? 0 : now;
    return second;
  }
}

/** Run the picker: what to show, and the prompt to put back in the editor. Undefined when no plugin offers /rewind. */
export async function openRewindPicker(
  agent: Agent,
  session: SessionService | undefined,
): Promise<{ notice: string; editorText?: string } | undefined> {
  const slash = findCommand(agent.view, "/rewind --pick");
  if (!slash) return undefined;
  const leaf = session?.leafId;
  const out = await slash.command.run(slash.args, agent);
  const notice = typeof out === "string" ? out : "";
  const now = session?.leafId;
  const last = session && now && now !== leaf ? session.entry(now) : undefined;
  // The checkpoints plugin leaves a `checkpoint-rewind` entry naming the prompt it went back before.
  const prompt =
    last?.type === "custom" && last.customType === "checkpoint-rewind"
      ? (last.data as { entry?: string } | undefined)?.entry
      : undefined;
  const entry = prompt ? session!.entry(prompt) : undefined;
  const message = entry?.type === "message" ? (entry as MessageEntry).message : undefined;
  return { notice, editorText: message?.role === "user" ? textOf(message) : undefined };
}
