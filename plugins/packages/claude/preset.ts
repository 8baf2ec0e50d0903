/**
 * A team preset that needs Claude Code marketplaces and plugins: the `packages` plugin's options
 * `marketplaces` (name → git URL or folder) and `claudePlugins` (specs). What is missing is found at
 * setup (file checks only); the CLI installs it on first use at user level, asking first on a terminal
 * or at once with `--yes`, like a missing npm package (lib/package-installer.ts).
 */
import type { CliStreams } from "../../../api/index.js";
import { readClaudeLock, scopeDirs } from "../../../lib/claude-plugins.js";
import type { PendingInstall } from "../../../lib/package-installer.js";
import { sourceKind } from "./fetch.js";
import { formatReport, installClaudePlugin } from "./install.js";
import { addMarketplace, readStore } from "./marketplace.js";

export interface PresetNeeds {
  marketplaces: Record<string, string>;
  claudePlugins: string[];
}

/** A spec as written in the preset, with folders and tarballs made absolute against the preset's folder. */
const absolute = (spec: string, baseDir: string) => {
  const src = sourceKind(spec, baseDir);
  return src && src.kind !== "git" ? src.location : spec;
};

/** What the preset names that is not there yet; undefined when nothing is missing. */
export function pendingFromPreset(
  needs: PresetNeeds,
  o: { home: string; baseDir: string; cwd: string },
): PendingInstall | undefined {
  const store = readStore(o.home);
  const lock = readClaudeLock(scopeDirs(o.home, o.cwd, false).lockDir);
  const marketplaces = Object.entries(needs.marketplaces).filter(([name]) => !store[name]);
  const plugins = needs.claudePlugins
    .map((spec) => absolute(spec, o.baseDir))
    .filter((spec) => {
      const ref = /^([A-Za-z0-9][A-Za-z0-9._-]*)@([A-Za-z0-9][A-Za-z0-9._-]*)$/.exec(spec);
      if (ref && (store[ref[2]!] || needs.marketplaces[ref[2]!])) return !lock[ref[1]!];
      return !Object.values(lock).some((e) => e.spec === spec);
    });
  if (!marketplaces.length && !plugins.length) return undefined;
  return {
    describe: [
      ...marketplaces.map(([name, src]) => `Claude Code marketplace ${name} (${src})`),
      ...plugins.map((p) => `Claude Code plugin ${p}`),
    ],
    async install(io: CliStreams): Promise<boolean> {
      let ok = true;
      for (const [name, src] of marketplaces) {
        try {
          const added = await addMarketplace(absolute(src, o.baseDir), o.home, o.baseDir, io.env);
          if (added.name !== name)
            io.stderr.write(
              `coil: warning: the preset calls marketplace ${src} '${name}', but its marketplace.json names it '${added.name}'\n`,
            );
          io.stderr.write(`coil: added marketplace ${added.name}\n`);
        } catch (error) {
          ok = false;
          io.stderr.write(`coil: cannot add marketplace ${name} (${src}): ${(error as Error).message}\n`);
        }
      }
      for (const spec of plugins) {
        try {
          io.stderr.write(
            `coil: ${formatReport(await installClaudePlugin(spec, { home: o.home, project: false, cwd: o.cwd, io }))}\n`,
          );
        } catch (error) {
          ok = false;
          io.stderr.write(`coil: cannot install Claude Code plugin ${spec}: ${(error as Error).message}\n`);
        }
      }
      return ok;
    },
  };
}
