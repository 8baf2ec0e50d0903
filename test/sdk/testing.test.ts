/** The shipped `coil/testing` kit's own contract (the rest of the suite exercises it through its use). */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createTestKit } from "../../sdk/testing/index.js";

const made: string[] = [];
const savedTmp = process.env.TMPDIR;
afterEach(() => {
  process.env.TMPDIR = savedTmp;
  if (savedTmp === undefined) delete process.env.TMPDIR;
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("createTestKit", () => {
  it("with a cwd, writes the files there, makes no temporary directory, and dispose() leaves the cwd alone", () => {
    const cwd = mkdtempSync(join(tmpdir(), "coil-kit-cwd-"));
    const scratch = mkdtempSync(join(tmpdir(), "coil-kit-tmp-"));
    made.push(cwd, scratch);
    process.env.TMPDIR = scratch; // os.tmpdir() follows it: any directory the kit made would land here
    const kit = createTestKit({ cwd, files: { "a/b.txt": "hi" } });
    expect(kit.workspace.dir).toBe(cwd);
    expect(readFileSync(join(cwd, "a/b.txt"), "utf8")).toBe("hi");
    expect(readdirSync(scratch)).toEqual([]);
    kit.dispose();
    expect(existsSync(join(cwd, "a/b.txt"))).toBe(true);
  });

  it("without a cwd, works in a fresh workspace that dispose() deletes", async () => {
    const kit = createTestKit({ files: { "x.txt": "1" }, replies: [{ text: "done" }] });
    expect(kit.workspace.read("x.txt")).toBe("1");
    await kit.run("go");
    expect(kit.text()).toBe("done");
    kit.dispose();
    expect(existsSync(kit.workspace.dir)).toBe(false);
  });
});
