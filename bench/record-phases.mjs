// Preloaded with `node --import` by bench/harness.mjs (which sets COIL_BENCH_PHASES, the switch of boot/marks.ts): at exit, writes the run's `coil:*` performance marks
// (bin/coil.ts, boot/assemble.ts, cli/main.ts) to $COIL_BENCH_PHASES as JSON, each with its time since the
// epoch, and the process's CPU time (user + system), so the harness can line them up with the mock's own clock (request arrival, response end).
import { writeFileSync } from "node:fs";

process.on("exit", () => {
  const marks = performance
    .getEntriesByType("mark")
    .filter((m) => m.name.startsWith("coil:"))
    .map((m) => ({ name: m.name, detail: m.detail, at: performance.timeOrigin + m.startTime, since: m.startTime }));
  const cpu = process.cpuUsage();
  const out = {
    origin: performance.timeOrigin,
    exitAt: performance.timeOrigin + performance.now(),
    cpuMs: (cpu.user + cpu.system) / 1000,
    marks,
  };
  writeFileSync(process.env.COIL_BENCH_PHASES, JSON.stringify(out));
});
