/**
 * Connections and key names. BullMQ and ioredis load only when a `coil fleet` subcommand runs.
 * BullMQ's ESM build cannot load ioredis by itself, so every connection is an ioredis client made here.
 */
import type { Queue, QueueEvents, Worker, Job } from "bullmq";
import type { Redis as RedisClient } from "ioredis";
import { importOptional } from "../../lib/optional-dependency.js";

export type Bull = typeof import("bullmq");
export type { Queue, QueueEvents, Worker, Job, RedisClient };

export async function loadBull(): Promise<Bull> {
  return importOptional("bullmq", "coil fleet", () => import("bullmq"));
}

/** A new ioredis client for `url` (redis://host:port/db); BullMQ wants `maxRetriesPerRequest: null` for workers. */
export async function redisClient(url: string, forWorker = false): Promise<RedisClient> {
  const mod = (await importOptional("ioredis", "coil fleet", () => import("ioredis"))) as unknown as {
    default: new (url: string, opts: object) => RedisClient;
  };
  const Redis = mod.default;
  const client = new Redis(url, {
    maxRetriesPerRequest: forWorker ? null : 3,
    enableOfflineQueue: true,
    // Fail a command-line tool fast when Redis is not there; workers keep retrying.
    retryStrategy: forWorker
      ? (times: number) => Math.min(times * 200, 2000)
      : (times: number) => (times > 3 ? null : 200),
  });
  client.on("error", () => {
    /* reported by the command that fails */
  });
  return client;
}

/** Fleet keys beside BullMQ's own (`bull:<queue>:*`). */
export const keys = {
  /** Running total of what the queue's jobs spent (USD, a float string). */
  cost: (queue: string) => `coil-fleet:${queue}:cost`,
  /** The fleet-wide cost cap set on submit (USD). */
  cap: (queue: string) => `coil-fleet:${queue}:cap`,
  /** A job's session file (JSONL), uploaded by the worker. */
  session: (queue: string, id: string) => `coil-fleet:${queue}:session:${id}`,
  /** Set by `coil fleet cancel` for a job that is running; the worker aborts it. */
  cancel: (queue: string, id: string) => `coil-fleet:${queue}:cancel:${id}`,
  /** Pub/sub channel: running jobs to cancel. */
  cancelChannel: (queue: string) => `coil-fleet:${queue}:cancel`,
  /** Every time a worker took the job (a list of JSON `JobRun`s): a re-run is visible in its result. */
  runs: (queue: string, id: string) => `coil-fleet:${queue}:runs:${id}`,
};

/** `redis://host:port` with a hint when Redis cannot be reached. */
export function connectionHint(url: string): string {
  return `cannot reach Redis at ${url}: start redis-server, or pass --redis redis://host:port (or set COIL_FLEET_REDIS)`;
}
