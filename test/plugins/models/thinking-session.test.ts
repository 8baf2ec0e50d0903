/** The thinking level is the session's: `/resume` (the session service's `open`) comes back to the level that session had (#22). */
import { rmSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import models from "../../../plugins/models/index.js";
import { currentLevel } from "../../../plugins/models/thinking.js";
import { startRig, tempDirs } from "../../support/session-jsonl.js";

const dirs = tempDirs("coil-thinking-session-");
afterAll(() => rmSync(dirs.root, { recursive: true, force: true }));

describe("thinking level in the session", () => {
  it("/resume restores the level the session ran with; a new session keeps the current one", async () => {
    const rig = await startRig({ ...dirs, plugins: [[models]], script: [{ text: "a" }, { text: "b" }, { text: "c" }] });
    const thinking = rig.host.commands.get("thinking")!;
    try {
      expect(await thinking.run("high", rig.agent)).toMatch(/^thinking: high/);
      await rig.agent.prompt("first session");
      const first = rig.session.file!;
      rig.session.newSession();
      expect(currentLevel(rig.agent)).toBe("high");
      await thinking.run("low", rig.agent);
      await rig.agent.prompt("second session");
      expect(rig.scripted.requests.map((r) => r.options.thinking)).toEqual(["high", "low"]);
      rig.session.open(first);
      expect(currentLevel(rig.agent)).toBe("high");
      await rig.agent.prompt("back in the first");
      expect(rig.scripted.requests.at(-1)!.options.thinking).toBe("high");
      expect(await thinking.run("", rig.agent)).toMatch(/^thinking: high .*does not reason/);
      expect(await thinking.run("loud", rig.agent)).toBe(
        "'loud' is not a thinking level. Levels: off, minimal, low, medium, high, xhigh",
      );
    } finally {
      await rig.stop();
    }
  });
});
