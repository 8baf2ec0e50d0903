/**
 * guards: limits for one run (one prompt): turns, tokens and cost; the same failing tool call repeated
 * (guidance to the model first, then a stop); and a done-gate that runs a verify command when the model
 * would stop, feeding a failure back as a follow-up. Taps `should_stop` at the GUARD stage. See docs/safety.md.
 */
import { spawn } from "../../lib/child-process.js";
import {
  definePlugin,
  Stage,
  Type,
  usageTotal,
  type Static,
  type ToolCall,
  type UserMessage,
} from "../../api/index.js";

export const GuardsOptions = Type.Object({
  /** Model calls per run; 0 (the default, as in Claude Code and Pi) means no limit. */
  maxTurns: Type.Integer({ minimum: 0, default: 0 }),
  /** Tokens billed per run (input + output + cache read + cache write of every reply); 0 means no limit. */
  maxTokens: Type.Integer({ minimum: 0, default: 0 }),
  /** US dollars per run (from the provider's cost figures); 0 means no limit. */
  maxCost: Type.Number({ minimum: 0, default: 0 }),
  repeatedFailures: Type.Object(
    {
      /** At this many failures of the same call (same tool, same arguments) the result carries guidance. */
      warnAfter: Type.Integer({ minimum: 1, default: 2 }),
      /** At this many the run stops. */
      stopAfter: Type.Integer({ minimum: 1, default: 4 }),
    },
    { default: {} },
  ),
  /** Done-gate: run `command` in the working directory when the model would stop. */
  verify: Type.Optional(
    Type.Object({
      command: Type.String({ minLength: 1 }),
      /** Failed checks fed back before the run stops with the failure. */
      attempts: Type.Integer({ minimum: 1, default: 3 }),
      /** Seconds before the command's process group is killed. */
      timeout: Type.Number({ exclusiveMinimum: 0, default: 600 }),
    }),
  ),
});
export type GuardsOptions = Static<typeof GuardsOptions>;

/** Characters of verify output sent back to the model (its tail). */
const OUTPUT_TAIL = 8000;

/** A stable key for "the same call": tool name and arguments with sorted keys. */
export function callKey(name: string, args: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.entries(v)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([k, x]) => [k, sort(x)]),
          )
        : v;
  return `${name} ${JSON.stringify(sort(args))}`;
}

export interface VerifyOutcome {
  code: number | null;
  output: string;
  timedOut: boolean;
}

/** Run `command` through `sh -c` in `cwd`, in its own process group, killed on timeout or abort. */
export function runVerify(
  command: string,
  cwd: string,
  timeoutS: number,
  signal?: AbortSignal,
): Promise<VerifyOutcome> {
  return new Promise((resolve) => {
    const child = spawn("/bin/sh", ["-c", command], { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    let timedOut = false;
    const take = (d: Buffer) => (output = (output + d.toString()).slice(-4 * OUTPUT_TAIL));
    child.stdout!.on("data", take);
    child.stderr!.on("data", take);
    const kill = () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutS * 1000);
    signal?.addEventListener("abort", kill, { once: true });
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ code: null, output: `cannot run /bin/sh: ${e.message}`, timedOut: false });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", kill);
      resolve({ code, output, timedOut });
    });
  });
}

export default definePlugin({
  id: "guards",
  description: "Run budgets (turns, tokens, cost), repeated-failure detection and a verify done-gate",
  options: GuardsOptions,
  setup(ctx) {
    const o = ctx.options;
    let tokens = 0;
    let cost = 0;
    let verifyRuns = 0;
    /** Failures of each call (by callKey) in this run; a success clears its count. */
    const failures = new Map<string, number>();
    let signal: AbortSignal | undefined;

    ctx.on("agent_start", () => {
      tokens = 0;
      cost = 0;
      verifyRuns = 0;
      failures.clear();
    });
    ctx.tap("before_request", (_request, turn) => {
      signal = turn.signal;
      return undefined;
    });

    // Guidance on the result itself, so the model reads it where it looks.
    ctx.tap("tool_result", (result, info) => {
      if (!result.isError) return undefined;
      const n = (failures.get(callKey(info.call.name, info.args)) ?? 0) + 1;
      if (n < o.repeatedFailures.warnAfter) return undefined;
      const text = `[guards] This exact ${info.call.name} call has now failed ${n} times with the same arguments. Do not repeat it: read the error, change the arguments or the approach, or stop and explain what blocks you. At ${o.repeatedFailures.stopAfter} failures the run is stopped.`;
      return { ...result, content: [...result.content, { type: "text", text }] };
    });

    ctx.tap("turn_end", (turn) => {
      const u = turn.message.usage;
      tokens += usageTotal(u);
      cost += u.cost.total;
      const calls = turn.message.content.filter((c): c is ToolCall => c.type === "toolCall");
      for (const r of turn.toolResults) {
        const call = calls.find((c) => c.id === r.toolCallId);
        if (!call) continue;
        const key = callKey(call.name, call.arguments);
        if (r.isError) failures.set(key, (failures.get(key) ?? 0) + 1);
        else failures.delete(key);
      }
    });

    ctx.tap(
      "should_stop",
      async (query) => {
        const message = query.turn.message;
        const continuing = message.content.some((c) => c.type === "toolCall") || query.steering > 0;
        const over =
          o.maxTurns > 0 && query.turns >= o.maxTurns
            ? `reached the limit of ${o.maxTurns} turns for one run (guards maxTurns: raise it in your preset, \`- guards: { maxTurns: N }\`, 0 for no limit)`
            : o.maxTokens > 0 && tokens >= o.maxTokens
              ? `used ${tokens} tokens, over the limit of ${o.maxTokens} for one run (guards maxTokens)`
              : o.maxCost > 0 && cost >= o.maxCost
                ? `spent $${cost.toFixed(4)}, over the limit of $${o.maxCost} for one run (guards maxCost)`
                : undefined;
        const repeated = [...failures.entries()].find(([, n]) => n >= o.repeatedFailures.stopAfter);
        if (repeated)
          return {
            stop: true,
            reason: `the same failing call was repeated ${repeated[1]} times: ${repeated[0].slice(0, 200)} (guards repeatedFailures)`,
          };
        if (over && continuing) return { stop: true, reason: over };
        // The done-check is the main agent's: a child agent (the subagents plugin's) finishing is not the run finishing.
        const child = query.agent.depth > 0;
        if (over || continuing || !o.verify || message.stopReason !== "stop" || child) return undefined;

        // The model would stop: the done-gate decides.
        const v = o.verify;
        verifyRuns++;
        const result = await runVerify(v.command, ctx.cwd, v.timeout, signal);
        if (result.code === 0 && !result.timedOut) {
          ctx.log.info(`verify passed: ${v.command}`);
          return undefined;
        }
        const how = result.timedOut
          ? `timed out after ${v.timeout} s`
          : result.code === null
            ? "was killed"
            : `exited with code ${result.code}`;
        if (verifyRuns >= v.attempts)
          return {
            stop: true,
            reason: `the done check \`${v.command}\` still fails after ${verifyRuns} attempt(s) (${how}) (guards verify)`,
          };
        const tail =
          result.output.length > OUTPUT_TAIL ? `[…cut…]\n${result.output.slice(-OUTPUT_TAIL)}` : result.output;
        const followUp: UserMessage = {
          role: "user",
          content: `[guards] You are not done: the check \`${v.command}\` ${how} (attempt ${verifyRuns} of ${v.attempts}). Fix the cause, then finish again. Its output:\n\`\`\`\n${tail.trimEnd() || "(no output)"}\n\`\`\``,
          timestamp: Date.now(),
        };
        return { stop: false, reason: `verify failed (${how})`, followUp: [followUp] };
      },
      { stage: Stage.GUARD },
    );
  },
});
