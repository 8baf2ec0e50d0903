// Installed size: what `npm i -g` of coil's tarball puts on disk, against the goal (issue 31: ≤ 60 MB and
// ≤ 80 packages for the default install). Packs the built checkout (`npm pack --ignore-scripts`: dist/ is
// already built), installs the tarball into a temporary prefix, and measures coil's folder with everything
// it pulled in. npm may use the registry (or its cache) for the dependencies the tarball does not carry.
//
//   node bench/install-size.mjs            the table
//   node bench/install-size.mjs --largest  also the 15 largest installed packages
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const GOAL_MB = 60;
const GOAL_PACKAGES = 80;

if (!existsSync(join(root, "dist", "bin", "coil.js"))) {
  console.error("install-size: dist/ is missing: run `npm run build` first");
  process.exit(1);
}

/** Bytes under `path` (files and links, not following links); `blocks`: allocated on disk, as `du` counts. */
function bytes(path, blocks = false) {
  const st = lstatSync(path);
  const own = blocks ? st.blocks * 512 : st.size;
  if (!st.isDirectory()) return own;
  let sum = blocks ? own : 0;
  for (const entry of readdirSync(path)) sum += bytes(join(path, entry), blocks);
  return sum;
}

/** Every installed package under `nodeModules` (nested ones too): `[name, bytes of its own files]`. */
function packages(nodeModules, out = []) {
  if (!existsSync(nodeModules)) return out;
  for (const entry of readdirSync(nodeModules)) {
    if (entry.startsWith(".")) continue;
    if (entry.startsWith("@")) {
      for (const sub of readdirSync(join(nodeModules, entry)))
        add(join(nodeModules, entry, sub), `${entry}/${sub}`, out);
    } else add(join(nodeModules, entry), entry, out);
  }
  return out;
}
function add(dir, name, out) {
  if (!existsSync(join(dir, "package.json"))) return;
  const nested = join(dir, "node_modules");
  const total = bytes(dir);
  const inner = existsSync(nested) ? bytes(nested) : 0;
  out.push([name, total - inner]);
  packages(nested, out);
}

const work = mkdtempSync(join(tmpdir(), "coil-install-size-"));
try {
  const npmEnv = { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false" };
  const tgz = execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", work], {
    cwd: root,
    env: npmEnv,
    encoding: "utf8",
  })
    .trim()
    .split("\n")
    .at(-1);
  const tarball = join(work, tgz);
  const prefix = join(work, "prefix");
  execFileSync("npm", ["install", "-g", "--prefix", prefix, "--prefer-offline", "--no-audit", tarball], {
    cwd: work,
    env: npmEnv,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const coil = join(prefix, "lib", "node_modules", "coil-agent");
  const installed = bytes(coil);
  const deps = packages(join(coil, "node_modules"));
  const mb = installed / 1e6;
  const verdict = (ok) => (ok ? "met" : "not met");
  console.log("## Installed size (`npm pack` + `npm i -g` of the tarball)\n");
  console.log("| | this build | goal | |\n|---|---:|---:|---|");
  console.log(`| tarball | ${(lstatSync(tarball).size / 1e6).toFixed(1)} MB | | |`);
  console.log(`| installed | ${mb.toFixed(1)} MB | ≤ ${GOAL_MB} MB | ${verdict(mb <= GOAL_MB)} |`);
  console.log(`| on disk (\`du\`) | ${(bytes(coil, true) / 1e6).toFixed(1)} MB | | |`);
  console.log(
    `| packages (coil and its dependencies) | ${deps.length + 1} | ≤ ${GOAL_PACKAGES} | ${verdict(deps.length + 1 <= GOAL_PACKAGES)} |`,
  );
  console.log(`| coil's own files | ${((installed - bytes(join(coil, "node_modules"))) / 1e6).toFixed(1)} MB | | |`);
  if (process.argv.includes("--largest")) {
    console.log("\nlargest installed packages:");
    for (const [name, size] of deps.sort((a, b) => b[1] - a[1]).slice(0, 15))
      console.log(`  ${(size / 1e6).toFixed(1).padStart(6)} MB  ${name}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
