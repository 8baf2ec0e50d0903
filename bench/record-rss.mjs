// Preload (node --import): writes this process's peak resident set size in MB to $COIL_BENCH_RSS at exit.
import { writeFileSync } from "node:fs";

process.on("exit", () => {
  if (process.env.COIL_BENCH_RSS)
    writeFileSync(process.env.COIL_BENCH_RSS, String(process.resourceUsage().maxRSS / 1024));
});
