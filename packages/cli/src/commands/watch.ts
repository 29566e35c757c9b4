import type { WatchEvent } from '@dotasks/watch';
import { openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import { waitForSignal } from '../signals.js';
import { openStoreToSync } from '../sync-output.js';
import type { CommandArgs } from '../command-table.js';
import { printable } from '../core-read.js';

/** What `tasks watch` takes, as declared in the command table. */
export interface WatchOptions extends CommandArgs<'watch'>, GlobalOptions {}

/** Where a streaming command writes as it goes (only these commands print before returning). */
export interface StreamOutput {
  out(line: string): void;
  err(line: string): void;
}

const processOutput: StreamOutput = {
  out: (line) => process.stdout.write(line + '\n'),
  err: (line) => process.stderr.write(line + '\n'),
};

function clock(at: string): string {
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? at : d.toTimeString().slice(0, 8);
}

/** One line for people about something the watcher did. */
export function formatWatchEvent(e: WatchEvent): string {
  return printable(formatEvent(e));
}

function formatEvent(e: WatchEvent): string {
  const time = clock(e.at);
  const task = e.task !== undefined ? `#${e.task}` : '';
  switch (e.type) {
    case 'unblocked':
      return `${time} unblocked ${task}${e.by !== undefined ? ` (#${e.by} is done)` : ''}`;
    case 'repaired': {
      const change = e.added !== undefined ? `added #${e.added} to` : `removed #${e.removed} from`;
      return `${time} repaired ${task}: ${change} ${String(e.field)}${e.source ? ` (to match ${String(e.source)})` : ''}`;
    }
    case 'invalid': {
      const where = [e.file, e.line, e.column].filter((x) => x !== undefined).join(':');
      const problem = String(e.problem);
      // Said once: the core's own refusals (a cycle, a write that would not read back) already say it.
      return `${time} invalid ${where}: ${problem}${/nothing (was )?written/.test(problem) ? '' : ' (nothing written)'}`;
    }
    case 'reaped':
      return `${time} reaped ${task} from ${String(e.previousOwner ?? '?')} (${e.reason === 'process_gone' ? 'its process is gone' : 'lease expired'})`;
    case 'watch.error':
      return `${time} error${task ? ` on ${task}` : ''} (${String(e.action)}): ${String(e.message)}`;
    default:
      return `${time} ${e.type}${task ? ` ${task}` : ''}`;
  }
}

/**
 * `tasks watch`: keeps the board consistent until SIGINT/SIGTERM, printing
 * each thing it does (a line for people, or one JSON event per line).
 */
export async function watch(options: WatchOptions, io: StreamOutput = processOutput): Promise<CommandOutput> {
  const { store, notes } = options.sync ? await openStoreToSync(options) : { store: openStore(options), notes: [] as string[] };
  for (const note of notes) io.err(`tasks watch: ${note}`);
  const { watchBoard } = await import('@dotasks/watch');
  const signals = waitForSignal();
  const watcher = watchBoard(store.dir, {
    onEvent: (e) => io.out(options.json ? JSON.stringify(e) : formatWatchEvent(e)),
    onNotice: (m) => io.err(`tasks watch: ${m}`),
    reconcileIntervalMs: options.reconcileInterval === undefined ? undefined : options.reconcileInterval * 1000,
    reapIntervalMs: options.reapInterval === undefined ? undefined : options.reapInterval * 1000,
    // TASKS_DEBUG: a line for each periodic pass that found nothing moved (how a test sees that an idle board is not read).
    trace: process.env.TASKS_DEBUG ? () => io.err('tasks watch: periodic pass: nothing moved') : undefined,
  });
  let syncLoop: { close(): Promise<void> } | undefined;
  let lastSyncError: string | undefined;
  let lastSkipped = '';
  try {
    await watcher.ready;
    io.err(`tasks watch: watching ${store.dir} (pid ${process.pid}); Ctrl-C stops`);
    if (options.sync) {
      const { startSyncLoop } = await import('@dotasks/core/internal');
      syncLoop = startSyncLoop(store, {
        intervalMs: (options.syncInterval ?? 10) * 1000,
        onReport: (r) => {
          lastSyncError = undefined;
          for (const n of r.notes) io.err(`tasks watch: ${printable(n)}`);
          // Entries that cannot be read are skipped by every sync until someone repairs them: said when they change.
          const skipped = r.skipped.map((k) => `tasks watch: skipped ${printable(k.entry)}: ${printable(k.problem)}`);
          if (skipped.join('\n') !== lastSkipped) for (const line of skipped) io.err(line);
          lastSkipped = skipped.join('\n');
          if (r.incoming.length + r.outgoing.length + r.reaped.length + r.withdrawn.length === 0) return;
          const e = {
            at: new Date().toISOString(),
            type: 'synced',
            remote: r.remote,
            branch: r.branch,
            incoming: r.incoming,
            outgoing: r.outgoing,
            reaped: r.reaped,
            withdrawn: r.withdrawn,
          };
          io.out(
            options.json
              ? JSON.stringify(e)
              : printable(
                  `${clock(e.at)} synced with ${r.remote}/${r.branch}: ${r.incoming.length} in, ${r.outgoing.length} out${r.reaped.length ? `, reaped ${r.reaped.map((x) => `#${x.id}`).join(', ')}` : ''}`,
                ),
          );
          for (const w of r.warnings) io.err(`tasks watch: ${w}`);
        },
        onError: (error) => {
          // Said once while it stays the same (a board branch that was deleted keeps refusing every interval).
          const message = error instanceof Error ? error.message : String(error);
          if (message !== lastSyncError) io.err(`tasks watch: sync failed: ${printable(message)} (trying again every ${options.syncInterval ?? 10} s)`);
          lastSyncError = message;
        },
      });
    }
    const signal = await signals.signalled;
    await syncLoop?.close();
    await watcher.close();
    io.err(`tasks watch: stopped (${signal})`);
    return {};
  } finally {
    signals.dispose();
  }
}
