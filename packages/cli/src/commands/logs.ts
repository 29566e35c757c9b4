import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { getJob, isErrnoException, jobLogPath, parseJobId } from '@dotasks/core/internal';
import { openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';

/** What `tasks logs` takes, as declared in the command table. */
export interface LogsOptions extends CommandArgs<'logs'>, GlobalOptions {
  /** Where output goes (default stdout); logs stream, so they are written, not returned. */
  write?: (chunk: Buffer) => void;
}

/** Reads the bytes of `path` from `offset`; returns the new offset. */
function drain(path: string, offset: number, write: (chunk: Buffer) => void): number {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return offset;
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    while (offset < size) {
      const buf = Buffer.alloc(Math.min(64 * 1024, size - offset));
      const n = readSync(fd, buf, 0, buf.length, offset);
      if (n === 0) break;
      write(buf.subarray(0, n));
      offset += n;
    }
    return offset;
  } finally {
    closeSync(fd);
  }
}

/** Prints a job's output; with --follow, keeps printing until the job has finished. */
export async function logs(options: LogsOptions): Promise<CommandOutput> {
  const { isFinished, viewJob } = await import('@dotasks/agent');
  const store = openStore(options);
  const id = parseJobId(options.job);
  getJob(store, id); // E_NOT_FOUND for an unknown job
  const path = jobLogPath(store, id);
  const write = options.write ?? ((chunk: Buffer) => process.stdout.write(chunk));
  let offset = drain(path, 0, write);
  if (!options.follow) return {};
  for (;;) {
    const view = viewJob(getJob(store, id));
    const done = isFinished(view) || view.state === 'lost';
    offset = drain(path, offset, write);
    if (done) return {};
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
