/**
 * Esc Esc while idle opens the checkpoints plugin's rewind picker (`/rewind --pick`: choose a prompt, what to
 * restore, see the diff, confirm). Kept out of app.ts: the app only reports Esc presses here.
 */
import { findCommand, type Agent } from "../../kernel/index.js";

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

/** Run the picker; resolves to what to show (undefined when no plugin offers /rewind). */
export async function openRewindPicker(agent: Agent): Promise<string | undefined> {
  const slash = findCommand(agent.host, "/rewind --pick");
  if (!slash) return undefined;
  const out = await slash.command.run(slash.args, agent);
  return typeof out === "string" ? out : undefined;
}
