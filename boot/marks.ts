/**
 * Start-up phase marks (`coil:*` performance marks) for the breakdown in bench/harness.mjs, which sets
 * COIL_BENCH_PHASES and preloads bench/record-phases.mjs to write them out. Without it, nothing: not even
 * Node's perf_hooks is loaded.
 */
export const mark: (name: string, detail?: string) => void = process.env.COIL_BENCH_PHASES
  ? (name, detail) => {
      performance.mark(name, { detail });
    }
  : () => {};
