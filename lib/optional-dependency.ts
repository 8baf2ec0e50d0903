/**
 * coil's optional dependencies: heavy npm packages that only some runs need (the Bedrock and Vertex SDKs
 * with Google's auth library, BullMQ and ioredis for the fleet). They are package.json's optional
 * `peerDependencies`, so `npm i -g coil-agent` does not install them; a clone has them as dev dependencies.
 * A loading site imports one through `importOptional`, which turns "cannot find package" into an error that
 * names the package, the feature that needs it, and the command that installs it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_NAME, packageRoot } from "./paths.js";

/** coil's optional peers and their ranges (package.json peerDependencies); empty if it cannot be read. */
function declared(): Record<string, string> {
  try {
    const pkg = JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as {
      peerDependencies?: Record<string, string>;
    };
    return pkg.peerDependencies ?? {};
  } catch {
    return {};
  }
}

const declaredRange = (name: string): string | undefined => declared()[name];

/** What needs each optional dependency, for `coil doctor`. */
const FEATURES: Record<string, string> = {
  "@anthropic-ai/bedrock-sdk": "Amazon Bedrock (bedrock/<model>)",
  "@anthropic-ai/vertex-sdk": "Google Vertex AI (vertex/<model>)",
  "google-auth-library": "Google Vertex AI (vertex/<model>)",
  bullmq: "coil fleet",
  ioredis: "coil fleet",
};

/**
 * `coil doctor`'s lines: each optional dependency, whether Node finds it from coil's own files (resolving
 * only, nothing is loaded), what needs it, and the install command when it is missing.
 */
export function optionalDependencyReport(): string[] {
  return Object.entries(declared()).map(([name, range]) => {
    let found = true;
    try {
      import.meta.resolve(name);
    } catch {
      found = false;
    }
    const feature = FEATURES[name] ?? "an optional part of coil";
    return found
      ? `${name}: installed, for ${feature}`
      : `${name}: not installed; ${feature} needs it: npm i -g ${name}@${range}`;
  });
}

/** True when `error` is Node failing to find the package `name` itself (not a module inside it failing). */
function isMissing(error: unknown, name: string): boolean {
  const e = error as { code?: string; message?: string };
  return (
    (e?.code === "ERR_MODULE_NOT_FOUND" || e?.code === "MODULE_NOT_FOUND") && (e.message ?? "").includes(`'${name}'`)
  );
}

export class MissingDependencyError extends Error {
  constructor(
    readonly packageName: string,
    readonly feature: string,
  ) {
    const range = declaredRange(packageName);
    const spec = range ? `${packageName}@${range}` : packageName;
    super(
      `${feature} needs the npm package ${packageName}, which is not installed (an optional dependency of ${PACKAGE_NAME}, ` +
        `left out of the default install). Install it next to coil: \`npm i -g ${spec}\` for a global coil, ` +
        `or \`npm ci\` in a clone of coil.`,
    );
    this.name = "MissingDependencyError";
  }
}

/**
 * `load()` (a literal `import("<name>")`, so the bundler keeps it external), or a MissingDependencyError
 * naming `name` and `feature` when the package is not installed. Other failures pass through unchanged.
 */
export async function importOptional<T>(name: string, feature: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isMissing(error, name)) throw new MissingDependencyError(name, feature);
    throw error;
  }
}
