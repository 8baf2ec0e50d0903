/**
 * doctor: `coil doctor`, the setup check. It prints coil's and Node's versions and $COIL_HOME, the
 * project and whether it is trusted, how commands are confined (tools-coding's `confinement` service),
 * then every section other plugins add to the `doctor` list (lib/doctor.ts: providers, MCP servers,
 * skills, context files, templates ...). It exits 1 when the confinement a backend promised does not hold.
 */
import { definePlugin } from "../../api/index.js";
import { doctorService, formatSections, reportSections } from "../../lib/doctor.js";
import { coilHome, coilVersion } from "../../lib/paths.js";
import { gitRoot } from "../../lib/locations.js";
import { locationsOf } from "../../lib/locations.js";
import type {} from "../tools-coding/api.js"; // types the `confinement` service

/** What is said when no plugin in the preset runs commands (tools-coding is left out). */
const NO_CONFINEMENT = { ok: true, report: "bash: not in this preset; no tool here runs commands." };

export default definePlugin({
  id: "doctor",
  description: "coil doctor: versions, project trust, how commands are confined, and every plugin's section",
  setup(ctx) {
    const sections = doctorService(ctx);
    ctx.subcommands.register({
      name: "doctor",
      description:
        "check the setup: versions, project trust, how commands are confined, providers and keys, MCP servers, skills, context files, templates",
      options: [{ name: "json", description: "print JSON: versions, project, confinement and each section's report" }],
      run: async (_args, io, options) => {
        const root = locationsOf(ctx).projectRoot;
        const git = Boolean(gitRoot(ctx.cwd));
        const confinement = (await ctx.services.get("confinement")?.report(io.env)) ?? NO_CONFINEMENT;
        const code = confinement.ok ? 0 : 1;
        if (options.json === true) {
          const report = {
            coil: coilVersion(),
            node: process.version,
            platform: `${process.platform} ${process.arch}`,
            home: coilHome(io.env),
            project: { root, git, trusted: ctx.projectTrusted },
            confinement,
            sections: await reportSections(sections.sections()),
          };
          io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
          return code;
        }
        io.stdout.write(
          `coil ${coilVersion()} (node ${process.version}, ${process.platform} ${process.arch}); $COIL_HOME ${coilHome(io.env)}\n`,
        );
        io.stdout.write(
          `project: ${root}${git ? " (git root)" : " (no git repository: the working directory)"}, ${ctx.projectTrusted ? "trusted: its .coil/ preset, hooks, .mcp.json servers, plugins and node_modules/.bin load" : "not trusted: its .coil/ preset, hooks, .mcp.json servers, plugins and node_modules/.bin do not load (coil trust)"}\n`,
        );
        io.stdout.write(`${confinement.report}\n`);
        io.stdout.write(await formatSections(sections.sections()));
        return code;
      },
    });
  },
});
