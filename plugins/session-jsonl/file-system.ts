/**
 * The operations layer: every file operation the session store makes goes through this object, so
 * tests (and embedders) can inject failures such as a full disk. The shape is the subset of
 * `node:fs`'s synchronous API the store uses; `{ ...nodeOps, writeSync: myWrite }` overrides one.
 *
 * Synchronous on purpose: an entry is written while the event that produced it is being delivered,
 * so entries land in the file in the order they happened, and a crash loses at most the line being
 * written.
 */
import * as fs from "node:fs";

export interface SessionOps {
  openSync(path: string, flags: string, mode?: number): number;
  /** Write at the end of the file (the store opens it with `a`); returns the bytes written. */
  writeSync(fd: number, data: Uint8Array): number;
  fsyncSync(fd: number): void;
  /** fsync on libuv's thread pool (a turn in the middle of a tool loop); without it, the store syncs in line. */
  fsync?(fd: number, done: (error: Error | null) => void): void;
  closeSync(fd: number): void;
  readSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number | null): number;
  fstatSync(fd: number): { size: number };
  statSync(path: string): { size: number; mtimeMs: number; isFile(): boolean };
  readdirSync(path: string): string[];
  mkdirSync(path: string, options: { recursive: true }): unknown;
  readFileSync(path: string, encoding: "utf8"): string;
  unlinkSync(path: string): void;
  existsSync(path: string): boolean;
}

export const nodeOps: SessionOps = {
  openSync: (path, flags, mode) => fs.openSync(path, flags, mode),
  writeSync: (fd, data) => fs.writeSync(fd, data),
  fsyncSync: (fd) => fs.fsyncSync(fd),
  fsync: (fd, done) => fs.fsync(fd, done),
  closeSync: (fd) => fs.closeSync(fd),
  readSync: (fd, buffer, offset, length, position) => fs.readSync(fd, buffer, offset, length, position),
  fstatSync: (fd) => fs.fstatSync(fd),
  statSync: (path) => fs.statSync(path),
  readdirSync: (path) => fs.readdirSync(path),
  mkdirSync: (path, options) => fs.mkdirSync(path, options),
  readFileSync: (path, encoding) => fs.readFileSync(path, encoding),
  unlinkSync: (path) => fs.unlinkSync(path),
  existsSync: (path) => fs.existsSync(path),
};

/** Error code of a failed fs call (`ENOSPC`, `EACCES` ...), if any. */
export function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" ? code : undefined;
}
