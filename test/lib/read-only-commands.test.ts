/** lib/shell: the words of a command, and the read-only judgement plan mode and the permission gate share (issue 36.2). */
import { describe, expect, it } from "vitest";
import { notReadOnly, readOnlyRefusal } from "../../lib/shell/read-only-commands.js";
import { parseSimpleCommand } from "../../lib/shell/words.js";
import { cdTarget, writeTargets } from "../../lib/shell/writes.js";

const ok = (c: string) => expect(readOnlyRefusal(c), c).toBeUndefined();
const refused = (c: string, why: RegExp) => expect(readOnlyRefusal(c), c).toMatch(why);

describe("the words of a simple command", () => {
  it("removes quotes, keeps redirections apart, and says which words the shell may still change", () => {
    const { words, redirects } = parseSimpleCommand(`sort -k2 'a b' "x$y" c\\ d *.txt {a,b} ~/x 2>/dev/null >out`);
    expect(words.map((w) => w.value)).toEqual(["sort", "-k2", "a b", "x$y", "c d", "*.txt", "{a,b}", "~/x"]);
    expect(words.map((w) => w.expands)).toEqual([false, false, false, true, false, true, true, false]);
    expect(redirects.map((r) => [r.op, r.target?.value])).toEqual([
      ["2>", "/dev/null"],
      [">", "out"],
    ]);
    expect(parseSimpleCommand("ls 2>&1 a>b").redirects.map((r) => [r.op, r.target?.value])).toEqual([
      ["2>&", "&1"],
      [">", "b"],
    ]);
    expect(parseSimpleCommand("cat <<EOF").redirects).toEqual([{ op: "<<" }]);
    expect(parseSimpleCommand("echo '{}' \\* # c").words.map((w) => [w.value, w.expands])).toEqual([
      ["echo", false],
      ["{}", false],
      ["*", false],
    ]);
  });
});

describe("read-only commands", () => {
  it("accepts what only looks", () => {
    for (const c of [
      "ls -la src",
      "cat a.txt",
      "grep -rn --include='*.ts' TODO .",
      "head -5 a",
      "tail -n 20 -f log",
      "sort -rn -k2,2 -t, data.csv",
      "sort --key=2 --field-separator=: a",
      "uniq -c a.txt",
      "find . -name '*.ts' -type f -maxdepth 3 -print",
      "find src \\( -name a -o -name b \\) -prune",
      "tree -L 2 -a",
      "rg -n --hidden -g '*.md' foo",
      "git status -s -uno",
      "git --no-pager log --oneline -n 5 --stat -- src",
      "git log -20 --format=%H --author=me",
      "git diff --cached --name-only HEAD~1",
      "git diff --stat=80 -M90% HEAD",
      "git show HEAD:a.ts",
      "git branch",
      "git branch -a -v",
      "git branch --list 'feat/*'",
      "git branch --contains HEAD~3",
      "git blame -L 1,20 a.ts",
      "git rev-parse --show-toplevel",
      "git ls-files -z --others",
      "echo done 2>&1",
      "diff -u a b > /dev/null",
    ])
      ok(c);
  });

  it("never accepts an environment assignment in front of a command", () => {
    for (const c of [
      "PATH=.:$PATH ls",
      "LD_PRELOAD=./evil.so cat a.txt",
      "GIT_CONFIG_PARAMETERS=\"'core.fsmonitor=./x'\" git status",
      "GIT_EXTERNAL_DIFF=./x git diff",
      "GIT_DIR=/elsewhere git log",
      "X+=1 ls",
    ])
      refused(c, /environment assignment/);
    ok("'A=1' ls".replace("'A=1' ", "")); // a plain ls
    refused('"A=1" ls', /not on the read-only list/); // a quoted word is a program name, not an assignment
  });

  it("sort, uniq and git take only the options on their lists", () => {
    refused("sort --compress-program=./x big", /--compress-program` runs a program/);
    refused("sort --comp=./x big", /--comp` is not on the read-only list/); // getopt abbreviations too
    refused("sort -oFILE a", /-o` writes its output to a file/);
    refused("sort -ro out a", /-o` writes/);
    refused("sort -T /tmp a", /-T` writes temporary files/);
    refused("uniq a.txt out", /with 2 operands writes to the last one/);
    refused("uniq -c a b", /writes to the last one/);
    refused("git branch new-feature", /creates a branch/);
    refused("git branch -D main", /-D` is not on the read-only list/);
    refused("git branch -m a b", /-m`/);
    refused("git diff --ext-diff", /runs an external diff program/);
    refused("git diff --output=x", /writes its output to a file/);
    refused("git log --output x", /writes its output/);
    refused("git show --textconv HEAD", /text conversion/);
    refused("git -c core.fsmonitor=./x status", /not on the read-only list/);
    refused("git -C ../other status", /not on the read-only list/);
    refused("git --git-dir=/x log", /not on the read-only list/);
    refused("git log --show-signature", /runs gpg/);
    refused("rg --pre ./x foo", /--pre` runs a program/);
    refused("file -C -m magic", /compiles/);
    refused("tree -o out", /-o`/);
    refused("find . -delete", /runs, deletes or writes/);
    refused("find . -exec rm {} ;", /runs, deletes or writes/);
    refused("find . -fprint out", /runs, deletes or writes/);
    refused("find . -newerXY x", /not on its read-only list/);
  });

  it("a word the shell may expand is not accepted where options matter", () => {
    refused("sort *", /may expand/); // a file named --compress-program=./x
    refused("uniq {a,b}", /may expand/);
    refused("sort $OPTS a", /may expand/);
    refused("git diff $(…)", /may expand/);
    refused("find . -name *.ts", /may expand/);
    ok("cat *.txt"); // cat has no option that writes or runs anything
    ok("grep -r foo $(…)");
  });

  it("refuses output redirections and commands that are not on the list", () => {
    refused("cat a > b", /redirects output to `b`/);
    refused("echo x >> ~/.bashrc", /redirects output/);
    refused("ls &> out", /redirects output/);
    refused("cat <> f", /redirects output/);
    refused("> f", /redirects output/);
    refused("./ls", /`\.\/ls` is not on the read-only list/);
    refused("lsblk", /not on the read-only list/);
    refused("env ls", /not on the read-only list/);
    ok("cat < a.txt");
    ok("grep x <<< 'text'");
  });

  it("a preset's own entries accept any option, and any entry that accepts a command will do", () => {
    expect(readOnlyRefusal("make -j4 test", ["make"])).toBeUndefined();
    expect(readOnlyRefusal("git branch x", ["git", "git branch"])).toBeUndefined();
    expect(readOnlyRefusal("git branch x", ["git branch"])).toMatch(/creates a branch/);
    expect(readOnlyRefusal("FOO=1 make", ["make"])).toMatch(/environment assignment/);
  });

  it("a whole line (plan mode) is refused for substitutions and redirections, then judged part by part", () => {
    expect(notReadOnly("git log --oneline | head -5")).toBeUndefined();
    expect(notReadOnly("ls && git status -s; pwd")).toBeUndefined();
    expect(notReadOnly("grep 'a|b && c' src")).toBeUndefined();
    expect(notReadOnly("ls | sort -o out")).toMatch(/writes its output/);
    expect(notReadOnly("ls; PATH=. ls")).toMatch(/environment assignment/);
    expect(notReadOnly("cat $(rm x)")).toMatch(/substitution/);
    expect(notReadOnly("cat a > b")).toMatch(/redirection/);
  });
});

describe("the files a command writes (project mode)", () => {
  const w = (c: string) => writeTargets(c);
  it("reads redirections and the operands of writing programs", () => {
    expect(w("echo x >> ~/.bashrc 2>/dev/null").paths).toEqual(["~/.bashrc"]);
    expect(w("echo x | tee -a a b").paths).toEqual([]); // splitCommand gives `tee -a a b` on its own
    expect(w("tee -a a b").paths).toEqual(["a", "b"]);
    expect(w("cp -r src ../out").paths).toEqual(["../out"]);
    expect(w("cp -t /dest a b").paths).toEqual(["/dest"]);
    expect(w("mv a.txt ../outside/").paths).toEqual(["a.txt", "../outside/"]);
    expect(w("sed -i 's/a/b/' ~/.bashrc").paths).toEqual(["~/.bashrc"]);
    expect(w("sed -e s/a/b/ -i f1 f2").paths).toEqual(["f1", "f2"]);
    expect(w("curl -o /tmp/x https://e").paths).toEqual(["/tmp/x"]);
    expect(w("curl --output=/x https://e").paths).toEqual(["/x"]);
    expect(w("dd if=/dev/zero of=/dev/sda").paths).toEqual(["/dev/sda"]);
    expect(w("FOO=1 touch ~/x").paths).toEqual(["~/x"]);
    expect(w("cat a b").paths).toEqual([]);
    expect(w("echo x > $OUT").unknown).toBe(true);
    expect(w("echo x > $HOME/.profile")).toEqual({ paths: ["$HOME/.profile"], unknown: false });
    expect(w("rm -rf $DIR").unknown).toBe(true);
  });
  it("follows cd", () => {
    expect(cdTarget("cd ~/x")).toEqual({ dir: "~/x", unknown: false });
    expect(cdTarget("cd")).toEqual({ dir: "~", unknown: false });
    expect(cdTarget("cd $D")).toEqual({ unknown: true });
    expect(cdTarget("ls")).toBeUndefined();
  });
});
