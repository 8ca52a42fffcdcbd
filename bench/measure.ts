/**
 * Running one command and measuring it: wall time from the parent (monotonic clock around the spawn), and
 * peak resident set size and CPU time from GNU time (`/usr/bin/time -f '%e %M %U %S'`: the child's
 * ru_maxrss in KiB, user and system seconds). stdout goes
 * to /dev/null (both tools pay the same for it); stderr is kept for error messages.
 */
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

export interface Cmd {
  /** Who runs: "olmpub", "opm", "crane", ... */
  tool: string;
  argv: string[];
  env?: NodeJS.ProcessEnv;
  /** Exit codes that count as success (default [0]). */
  ok?: number[];
}

export interface Sample {
  wallMs: number;
  rssKiB: number;
  /** User + system CPU time of the process (GNU time %U + %S, 10 ms resolution). */
  cpuMs: number;
}

export const TIME = '/usr/bin/time';

let counter = 0;

export async function measure(cmd: Cmd, tmp: string): Promise<Sample> {
  const timeFile = join(tmp, `time-${process.pid}-${counter++}.txt`);
  const stderr: Buffer[] = [];
  let stderrBytes = 0;
  const start = process.hrtime.bigint();
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn(TIME, ['-f', '%e %M %U %S', '-o', timeFile, ...cmd.argv], { stdio: ['ignore', 'ignore', 'pipe'], env: cmd.env ?? process.env });
    child.stderr.on('data', (d: Buffer) => {
      if (stderrBytes < 64 * 1024) stderr.push(d);
      stderrBytes += d.length;
    });
    child.on('error', reject);
    child.on('close', (c, signal) => resolve(c ?? (signal ? 128 : 1)));
  });
  const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
  const timeOut = await readFile(timeFile, 'utf8').catch(() => '');
  await rm(timeFile, { force: true });
  if (!(cmd.ok ?? [0]).includes(code)) {
    const text = Buffer.concat(stderr).toString('utf8').trim().split('\n').slice(-20).join('\n');
    throw new Error(`${cmd.argv.join(' ')} exited with ${code}:\n${text}`);
  }
  // GNU time prints "Command exited with non-zero status N" before the format line when the child fails.
  const last = timeOut.trim().split('\n').pop() ?? '';
  const [, rss, user, sys] = last.split(' ').map(Number);
  if (!Number.isFinite(rss) || !Number.isFinite(user) || !Number.isFinite(sys)) throw new Error(`could not read the peak RSS and CPU time of ${cmd.argv[0]} from ${TIME}: "${timeOut.trim()}"`);
  return { wallMs, rssKiB: rss!, cpuMs: (user! + sys!) * 1000 };
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
