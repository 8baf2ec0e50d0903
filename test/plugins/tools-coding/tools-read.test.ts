/** tools-coding: the read tool on real files in temp directories. */
import { execFileSync } from "node:child_process";
import { chmodSync, closeSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import toolsCoding, { formatSize, MAX_BYTES, MAX_IMAGE_BYTES, MAX_LINES } from "../../../plugins/tools-coding/index.js";
import { definePlugin, type ProviderRequest } from "../../../api/index.js";
import { gif, jpegHeader, png, webp } from "../../fixtures/tools/images.js";
import { agentIn, cleanTemps, runAsNobody, tempDir, textOf, toolHost } from "../../support/tools.js";

afterAll(cleanTemps);

const lines = (n: number, make = (i: number) => `line ${i}`) =>
  Array.from({ length: n }, (_, i) => make(i + 1)).join("\n") + "\n";

function setup(files: Record<string, string | Uint8Array>, options: Record<string, unknown> = {}) {
  const dir = tempDir(files);
  return { dir, ...toolHost(dir, [[toolsCoding, options]]) };
}

describe("read: text", () => {
  it("returns a small file whole, without notice", async () => {
    const { call } = setup({ "a.txt": "alpha\nbeta\n" });
    const out = await call("read", { path: "a.txt" });
    expect(out.isError).toBeFalsy();
    expect(textOf(out)).toBe("alpha\nbeta");
    expect(out.details).toMatchObject({ kind: "text", startLine: 1, endLine: 2, totalLines: 2 });
  });

  it(`keeps the head at ${MAX_LINES} lines and names the range, the total and the offset to continue`, async () => {
    const { call } = setup({ "big.txt": lines(5000) });
    const first = await call("read", { path: "big.txt" });
    const text = textOf(first);
    expect(text.endsWith(`\n\n[Showing lines 1-${MAX_LINES} of 5000. Use offset=${MAX_LINES + 1} to continue.]`)).toBe(
      true,
    );
    expect(text.split("\n").slice(0, MAX_LINES)).toEqual(lines(MAX_LINES).trimEnd().split("\n"));

    const second = await call("read", { path: "big.txt", offset: 2001 });
    expect(textOf(second).split("\n")[0]).toBe("line 2001");
    expect(textOf(second)).toContain("[Showing lines 2001-4000 of 5000. Use offset=4001 to continue.]");

    const last = await call("read", { path: "big.txt", offset: 4001 });
    expect(textOf(last).split("\n")).toHaveLength(1000);
    expect(textOf(last).split("\n").at(-1)).toBe("line 5000");
    expect(textOf(last)).not.toContain("[Showing");
  });

  it(`stops at ${formatSize(MAX_BYTES)} on whole lines and says so`, async () => {
    const { call } = setup({ "wide.txt": lines(1000, (i) => String(i).padStart(100, "x")) });
    const out = await call("read", { path: "wide.txt" });
    const text = textOf(out);
    const shown = 1 + Math.floor((MAX_BYTES - 100) / 101); // first line 100 bytes, then 101 with its newline
    expect(text).toContain(
      `[Showing lines 1-${shown} of 1000 (${formatSize(MAX_BYTES)} limit). Use offset=${shown + 1} to continue.]`,
    );
    const body = text.slice(0, text.indexOf("\n\n["));
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_BYTES);
    expect(body.split("\n").at(-1)).toBe(String(shown).padStart(100, "x"));
  });

  it("honours offset and limit and points to the next line", async () => {
    const { call } = setup({ "big.txt": lines(5000) });
    const out = await call("read", { path: "big.txt", offset: 10, limit: 5 });
    expect(textOf(out)).toBe(
      "line 10\nline 11\nline 12\nline 13\nline 14\n\n[Showing lines 10-14 of 5000. Use offset=15 to continue.]",
    );
    const end = await call("read", { path: "big.txt", offset: 4998, limit: 10 });
    expect(textOf(end)).toBe("line 4998\nline 4999\nline 5000");
  });

  it("refuses an offset past the end, naming the line count", async () => {
    const { call } = setup({ "short.txt": "one\ntwo\n" });
    const out = await call("read", { path: "short.txt", offset: 3 });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toContain("offset 3 is past the end of short.txt, which has 2 lines");
  });

  it("gives a hint for a single line longer than the limit", async () => {
    const { call } = setup({ "min.js": "a\n" + "x".repeat(120_000) + "\nb\n" });
    const out = await call("read", { path: "min.js", offset: 2 });
    expect(out.isError).toBeFalsy();
    expect(textOf(out)).toMatch(
      /^\[Line 2 of min\.js is 117 KB, more than the 50 KB read can show at once\. See part of it with bash: sed -n '2p' min\.js \| head -c 51200\]$/,
    );
    // reading from the top stops before the long line and continues at it
    const top = await call("read", { path: "min.js" });
    expect(textOf(top)).toBe(
      `a\n\n[Showing lines 1-1 of 3 (${formatSize(MAX_BYTES)} limit). Use offset=2 to continue.]`,
    );
  });

  it("shows CRLF files without carriage returns and drops a BOM", async () => {
    const { call } = setup({ "win.txt": "\uFEFFfirst\r\nsecond\r\nthird" });
    const out = await call("read", { path: "win.txt" });
    expect(textOf(out)).toBe("first\nsecond\nthird");
    expect(out.details.totalLines).toBe(3);
  });

  it("reports an empty file", async () => {
    const { call } = setup({ "empty.txt": "" });
    const out = await call("read", { path: "empty.txt" });
    expect(out.isError).toBeFalsy();
    expect(textOf(out)).toBe("(empty.txt is empty)");
  });

  it("resolves ~, absolute paths, and file_path sent by mistake", async () => {
    const { dir, call, tool } = setup({ "home/notes.md": "from home\n", "abs.txt": "absolute\n" });
    const home = process.env.HOME;
    process.env.HOME = join(dir, "home");
    try {
      expect(textOf(await call("read", { path: "~/notes.md" }))).toBe("from home");
    } finally {
      process.env.HOME = home;
    }
    expect(textOf(await call("read", { path: join(dir, "abs.txt") }))).toBe("absolute");
    expect(tool("read").prepareArguments!({ file_path: "abs.txt" })).toEqual({ path: "abs.txt" });
  });

  it("streams a 100 MB file read at an offset: memory stays far below the file size", async () => {
    const dir = tempDir();
    const file = join(dir, "huge.log");
    const fd = openSync(file, "w");
    const line = (i: number) => `${String(i).padStart(10, "0")} ${"y".repeat(88)}\n`; // 100 bytes
    const block: string[] = [];
    for (let i = 1; i <= 1_000_000; i++) {
      block.push(line(i));
      if (block.length === 10_000) writeSync(fd, block.splice(0).join(""));
    }
    closeSync(fd);
    const { call } = toolHost(dir, [[toolsCoding, {}]]);
    const base = process.memoryUsage().rss;
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
    const out = await call("read", { path: "huge.log", offset: 900_000, limit: 3 });
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    expect(textOf(out)).toBe(
      `${line(900_000)}${line(900_001)}${line(900_002)}`.trimEnd() +
        "\n\n[Showing lines 900000-900002 of 1000000. Use offset=900003 to continue.]",
    );
    expect(peak - base).toBeLessThan(60 * 1024 * 1024);
  });

  it("reads the file as it is at each call: an edit of the same size between two reads is seen", async () => {
    const { dir, call } = setup({ "a.txt": "first\n" });
    expect(textOf(await call("read", { path: "a.txt" }))).toBe("first");
    writeFileSync(join(dir, "a.txt"), "again\n");
    expect(textOf(await call("read", { path: "a.txt" }))).toBe("again");
    writeFileSync(join(dir, "a.txt"), "grown\nby a line\n");
    expect(textOf(await call("read", { path: "a.txt" }))).toBe("grown\nby a line");
  });

  it("joins a line that spans two reads of the file", async () => {
    // 101-byte lines: line 649 covers bytes 65,448–65,548, across the 64 KiB read boundary
    const { call } = setup({ "wide.txt": lines(1000, (i) => String(i).padStart(100, "x")) });
    const out = await call("read", { path: "wide.txt", offset: 649, limit: 2 });
    expect(textOf(out)).toBe(
      `${"649".padStart(100, "x")}\n${"650".padStart(100, "x")}\n\n[Showing lines 649-650 of 1000. Use offset=651 to continue.]`,
    );
  });

  it.runIf(process.platform !== "win32")("refuses a named pipe at once instead of waiting for a writer", async () => {
    const { dir, call } = setup({});
    execFileSync("mkfifo", [join(dir, "pipe")]);
    const out = await call("read", { path: "pipe" });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toBe("pipe is not a regular file (a device, socket or pipe); read only reads files.");
  });

  it("reads through an operations service when one provides the file calls", async () => {
    const dir = tempDir({ "r.txt": "local\n" });
    const seen: string[] = [];
    const remote = definePlugin({
      id: "remote-files",
      setup(ctx) {
        ctx.services.provide("operations", {
          stat: async (p: string) => {
            seen.push(`stat ${p}`);
            return { kind: "file" as const, size: 7, mtimeMs: 0, mode: 0o644 };
          },
          async *readStream(p: string) {
            seen.push(`readStream ${p}`);
            yield new TextEncoder().encode("remote\n");
          },
        });
      },
    });
    const { call } = toolHost(dir, [[remote], [toolsCoding, {}]]);
    expect(textOf(await call("read", { path: "r.txt" }))).toBe("remote");
    expect(seen).toContain(`readStream ${join(dir, "r.txt")}`);
  });

  it("states its limits in the description from the same constants", async () => {
    const { tool } = setup({});
    const read = tool("read");
    expect(read.description).toContain(`${MAX_LINES} lines or ${formatSize(MAX_BYTES)}`);
    expect(read.description).toContain(formatSize(MAX_IMAGE_BYTES));
    expect(read.promptSnippet).toMatch(/^read: /);
    expect(read.promptGuidelines!.join("\n")).toContain(String(MAX_LINES));
  });
});

describe("read: images", () => {
  it.each([
    ["shot.png", png(3, 2), "image/png", "3x2"],
    ["anim.gif", gif(), "image/gif", "1x1"],
    ["pic.webp", webp(), "image/webp", "1x1"],
    ["photo.jpg", jpegHeader(4, 3), "image/jpeg", "4x3"],
  ])("returns %s as image content", async (name, bytes, mimeType, dims) => {
    const { call } = setup({ [name]: bytes });
    const out = await call("read", { path: name });
    expect(out.isError).toBeFalsy();
    expect(out.content[0]).toEqual({
      type: "text",
      text: `Read image ${name} (${mimeType}, ${dims}, ${formatSize(bytes.length)})`,
    });
    expect(out.content[1]).toEqual({ type: "image", mimeType, data: bytes.toString("base64") });
  });

  it("detects images by content, not by extension", async () => {
    const { call } = setup({ "looks-like-text.txt": png(), "fake.png": "I am text\n" });
    expect((await call("read", { path: "looks-like-text.txt" })).content[1]).toMatchObject({
      type: "image",
      mimeType: "image/png",
    });
    expect(textOf(await call("read", { path: "fake.png" }))).toBe("I am text");
  });

  it("returns a text note instead when the images option is off", async () => {
    const { call } = setup({ "shot.png": png(3, 2) }, { images: false });
    const out = await call("read", { path: "shot.png" });
    expect(out.content).toHaveLength(1);
    expect(textOf(out)).toContain("shot.png is an image (image/png, 3x2");
    expect(textOf(out)).toContain("images: false");
  });

  it("refuses an image too large to send, with a way out", async () => {
    const big = Buffer.concat([png(), Buffer.alloc(MAX_IMAGE_BYTES)]);
    const { call } = setup({ "huge.png": big });
    const out = await call("read", { path: "huge.png" });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toContain(`larger than the ${formatSize(MAX_IMAGE_BYTES)}`);
  });

  it("replaces the image with a note for a model that takes no images, and keeps it for one that does", async () => {
    for (const input of [["text"], ["text", "image"]]) {
      const dir = tempDir({ "shot.png": png() });
      const seen: ProviderRequest[] = [];
      const { agent } = agentIn(
        dir,
        [[toolsCoding, {}]],
        [
          { toolCalls: [{ name: "read", arguments: { path: "shot.png" } }] },
          (request) => {
            seen.push(request);
            return { text: "done" };
          },
        ],
        { input },
      );
      await agent.prompt("look at the screenshot");
      const result = seen[0]!.messages.find((m) => m.role === "toolResult")!;
      const kinds = (result.content as { type: string }[]).map((c) => c.type);
      if (input.includes("image")) expect(kinds).toEqual(["text", "image"]);
      else {
        expect(kinds).toEqual(["text", "text"]);
        expect(textOf(result as never)).toContain("does not accept image input");
      }
    }
  });
});

describe("read: what it refuses", () => {
  it("refuses binary files with a command that helps", async () => {
    const { call } = setup({
      "blob.bin": Buffer.from([1, 2, 0, 3, 4, 0, 255, 254, 7]),
      "doc.pdf": "%PDF-1.7\n%\u00e2\u00e3\n1 0 obj\n",
    });
    const blob = await call("read", { path: "blob.bin" });
    expect(blob.isError).toBe(true);
    expect(textOf(blob)).toMatch(
      /blob\.bin is a binary file, 9 B; read shows text and images only\. Inspect it with bash instead, e\.g\. `file blob\.bin && xxd blob\.bin \| head -50`/,
    );
    const pdf = await call("read", { path: "doc.pdf" });
    expect(textOf(pdf)).toContain("(PDF document)");
    expect(textOf(pdf)).toContain("pdftotext doc.pdf -");
  });

  it("refuses a directory and points to ls", async () => {
    const { call } = setup({ "src/a.ts": "x" });
    const out = await call("read", { path: "src" });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toBe("src is a directory, not a file. Use ls to list it, or find to search in it.");
  });

  it("reports a missing file with similar names, or a missing directory", async () => {
    const { dir, call } = setup({ "src/Config.ts": "x", "src/config.json": "{}" });
    const out = await call("read", { path: "src/config.ts" });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toBe(
      `File not found: src/config.ts (resolved to ${join(dir, "src/config.ts")}). Similar names in src: Config.ts, config.json. Check the path, or locate the file with find or ls.`,
    );
    expect(textOf(await call("read", { path: "nope/x.ts" }))).toContain("Its directory nope does not exist either.");
  });

  it("reports permission denied for an unreadable file", async () => {
    const dir = tempDir({ "secret.txt": "top secret\n" });
    chmodSync(join(dir, "secret.txt"), 0o000);
    if (process.getuid?.() !== 0) {
      const { call } = toolHost(dir, [[toolsCoding, {}]]);
      const out = await call("read", { path: "secret.txt" });
      expect(out.isError).toBe(true);
      expect(textOf(out)).toContain("Permission denied: cannot read secret.txt.");
      return;
    }
    // root reads everything: run the tool in a child process as an unprivileged user
    chmodSync(dir, 0o755);
    const [result] = await runAsNobody(dir, [["read", { path: "secret.txt" }]]);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Permission denied: cannot read secret.txt.");
  });
});
