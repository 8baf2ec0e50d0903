/** Turning file-system failures into messages that tell the model what to do instead. */
import { dirname } from "node:path";
import { messageOf } from "../../api/index.js";
import { similarNames } from "../../lib/typed-path.js";
import type { Operations } from "./local-operations.js";
import { codeOf, displayPath } from "./paths.js";

/** The message for a failed file operation (`verb` is "read", "write" ...). */
export async function describeFsError(
  error: unknown,
  abs: string,
  verb: string,
  ops: Operations,
  cwd: string,
): Promise<string> {
  const shown = displayPath(abs, cwd);
  switch (codeOf(error)) {
    case "ENOENT": {
      const similar = await similarNames(ops, abs);
      const parentMissing = await ops.stat(dirname(abs)).then(
        () => false,
        () => true,
      );
      const hint = similar.length
        ? ` Similar names in ${displayPath(dirname(abs), cwd)}: ${similar.join(", ")}.`
        : parentMissing
          ? ` Its directory ${displayPath(dirname(abs), cwd)} does not exist either.`
          : "";
      return `File not found: ${shown} (resolved to ${abs}).${hint} Check the path, or locate the file with find or ls.`;
    }
    case "EACCES":
    case "EPERM":
      return `Permission denied: cannot ${verb} ${shown}. The agent runs as a user without access to it; ask the user to change its permissions if you need it, or work without it.`;
    case "ENOTDIR":
      return `Cannot ${verb} ${shown}: a part of the path is a file, not a directory.`;
    case "EISDIR":
      return `Cannot ${verb} ${shown}: it is a directory. Use ls to list it.`;
    case "ENAMETOOLONG":
      return `Cannot ${verb} ${shown}: the path is too long.`;
    case "ELOOP":
      return `Cannot ${verb} ${shown}: too many levels of symbolic links (a symlink loop).`;
    case "ENOSPC":
      return `Cannot ${verb} ${shown}: no space left on the device.`;
    case "EROFS":
      return `Cannot ${verb} ${shown}: the file system is read-only.`;
    default:
      return `Cannot ${verb} ${shown}: ${messageOf(error)}`;
  }
}
