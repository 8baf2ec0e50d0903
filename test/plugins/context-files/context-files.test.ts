import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { testHost } from "../../support/host.js";
import contextFiles, { folderChain, type ContextFilesService } from "../../../plugins/context-files/index.js";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});
const savedHome = process.env.COIL_HOME;
const savedUserHome = process.env.HOME;
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "coil-context-"));
  temps.push(root);
  process.env.COIL_HOME = join(root, "home");
  process.env.HOME = join(root, "user");
});
afterEach(() => {
  if (savedHome === undefined) delete process.env.COIL_HOME;
  else process.env.COIL_HOME = savedHome;
  process.env.HOME = savedUserHome;
});

function write(path: string, text: string) {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

function service(cwd: string, options: Record<string, unknown> = {}) {
  const host = testHost({ cwd });
  host.install(contextFiles, options);
  return host.services.get("context-files") as ContextFilesService;
}

describe("context-files", () => {
  it("reads $COIL_HOME, then each folder from the repository root down to the working directory; AGENTS.md and a different CLAUDE.md both load", () => {
    const repo = join(root, "outer", "repo");
    mkdirSync(join(repo, ".git"), { recursive: true });
    write(join(root, "outer", "AGENTS.md"), "outside the repository: never read");
    write(join(root, "home", "AGENTS.md"), "home rules");
    write(join(repo, "AGENTS.md"), "repo rules");
    write(join(repo, "CLAUDE.md"), "claude rules, different from AGENTS.md");
    write(join(repo, "pkg", "CLAUDE.md"), "pkg rules");
    const cwd = join(repo, "pkg", "src");
    mkdirSync(cwd, { recursive: true });
    const files = service(cwd).files();
    expect(files.map((f) => [f.path, f.content])).toEqual([
      [join(root, "home", "AGENTS.md"), "home rules"],
      [join(repo, "AGENTS.md"), "repo rules"],
      [join(repo, "CLAUDE.md"), "claude rules, different from AGENTS.md"],
      [join(repo, "pkg", "CLAUDE.md"), "pkg rules"],
    ]);
  });

  it("outside a repository the chain starts at the filesystem root", () => {
    expect(folderChain(join(root, "a", "b"))).toEqual([
      "/",
      ...join(root, "a", "b")
        .split("/")
        .filter(Boolean)
        .map((_, i, parts) => "/" + parts.slice(0, i + 1).join("/")),
    ]);
  });

  it("caps the size with a visible note; the file nearest the working directory gets the budget first", () => {
    const cwd = join(root, "r", "sub");
    mkdirSync(join(root, "r", ".git"), { recursive: true });
    write(join(root, "r", "AGENTS.md"), "R".repeat(3000));
    write(join(cwd, "AGENTS.md"), "S".repeat(1500));
    const files = service(cwd, { home: false, maxBytesPerFile: 2000, maxBytesTotal: 2500 }).files();
    expect(files[1]).toMatchObject({ content: "S".repeat(1500), truncated: false });
    expect(files[0]!.truncated).toBe(true);
    expect(files[0]!.content).toBe(
      `${"R".repeat(1000)}\n\n[coil: ${join(root, "r", "AGENTS.md")} is 3000 bytes; only the first 1000 are shown (size cap). Read the file for the rest.]`,
    );
  });
});
