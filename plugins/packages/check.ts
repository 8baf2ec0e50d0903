/**
 * `coil plugin check [dir]`: type-checks a plugin project (its tsconfig.json) with the TypeScript that coil
 * ships as a dependency, so a scaffold's `npm run typecheck` needs no TypeScript of its own and no network.
 * The compiler is imported only by this command. Node's types come from coil's own `@types/node`: the
 * scaffold's tsconfig lists `node_modules/coil/node_modules/@types` among its `typeRoots`.
 */
import { existsSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import type { Diagnostic } from "typescript";
import type { CliStreams } from "../../api/index.js";

/** `coil plugin check [dir]` (the command line has parsed the arguments): 0 no type errors, 1 errors, 2 no tsconfig. */
export async function checkCommand(target: string | undefined, io: CliStreams): Promise<number> {
  const given = resolve(io.cwd, target ?? ".");
  const config = existsSync(given) && statSync(given).isFile() ? given : join(given, "tsconfig.json");
  if (!existsSync(config)) {
    io.stderr.write(
      `coil plugin check: no tsconfig.json in ${given}; run it in a plugin project (\`coil plugin new <name>\` writes one), or name the folder or the tsconfig file\n`,
    );
    return 2;
  }
  let ts: typeof import("typescript");
  try {
    ts = (await import("typescript")).default;
  } catch (error) {
    io.stderr.write(
      `coil plugin check: cannot load TypeScript, a dependency of coil (${(error as Error).message}); reinstall coil\n`,
    );
    return 1;
  }
  const unrecoverable: Diagnostic[] = [];
  const parsed = ts.getParsedCommandLineOfConfigFile(
    config,
    { noEmit: true },
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => unrecoverable.push(d) },
  );
  let diagnostics: readonly Diagnostic[] = unrecoverable;
  if (parsed) {
    const program = ts.createProgram({
      rootNames: parsed.fileNames,
      options: parsed.options,
      projectReferences: parsed.projectReferences,
      configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(parsed),
    });
    diagnostics = ts.getPreEmitDiagnostics(program);
  }
  const shown = relative(io.cwd, config) || config;
  const errors = diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (diagnostics.length > 0) {
    io.stderr.write(
      ts.formatDiagnostics(diagnostics, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => io.cwd,
        getNewLine: () => "\n",
      }),
    );
  }
  if (errors.some((d) => d.code === 2307 && ts.flattenDiagnosticMessageText(d.messageText, "\n").includes("'coil"))) {
    io.stderr.write(
      "coil plugin check: the project does not have coil installed (package.json's devDependencies.coil): run `npm install`\n",
    );
  }
  const files = parsed?.fileNames.length ?? 0;
  if (errors.length > 0) {
    io.stderr.write(
      `coil plugin check: ${errors.length} type error${errors.length === 1 ? "" : "s"} (${shown}, TypeScript ${ts.version})\n`,
    );
    return 1;
  }
  io.stdout.write(
    `coil plugin check: no type errors in ${files} file${files === 1 ? "" : "s"} (${shown}, TypeScript ${ts.version})\n`,
  );
  return 0;
}
