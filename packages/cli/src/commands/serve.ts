import { spawn } from 'node:child_process';
import { TasksError } from '@dotasks/core';
import { actingOwner, openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import { waitForSignal } from '../signals.js';
import type { StreamOutput } from './watch.js';

export interface ServeOptions extends GlobalOptions {
  port?: number;
  host?: string;
  /** More names to answer to in the Host header (`--allow-host`, repeatable). */
  allowHost?: string[];
  /** Open the page in the default browser (xdg-open, open). */
  open?: boolean;
}

const processOutput: StreamOutput = {
  out: (line) => process.stdout.write(line + '\n'),
  err: (line) => process.stderr.write(line + '\n'),
};

/** Opens `url` with the platform's opener, if there is one; says so when there is none. */
function openInBrowser(url: string, io: StreamOutput): void {
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
  child.on('error', () => io.err(`tasks serve: could not run ${opener}; open the URL above yourself`));
  child.unref();
}

/**
 * `tasks serve`: the board in a browser until SIGINT/SIGTERM. Prints the
 * page's URL (with this run's write token) on stdout, or `{url, host, port}`
 * with --json. The page and its server (@dotasks/web) load only here.
 */
export async function serve(options: ServeOptions, io: StreamOutput = processOutput): Promise<CommandOutput> {
  const store = openStore(options);
  const actor = actingOwner(options);
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new TasksError('E_USAGE', `--port takes a port number (0-65535), got '${String(options.port)}'`);
  const { startServer, isLoopback, DEFAULT_HOST } = await import('@dotasks/web');
  const host = options.host ?? DEFAULT_HOST;
  const signals = waitForSignal();
  try {
    // TASKS_DEBUG: a line for each read of the board and each idle poll (how a test sees that an idle board is not read).
    const trace = process.env.TASKS_DEBUG
      ? (what: 'read' | 'idle') => io.err(`tasks serve: ${what === 'read' ? 'read the board' : 'poll: nothing moved'}`)
      : undefined;
    const server = await startServer({ store, actor, host, port, allowHosts: options.allowHost ?? [], trace });
    if (!isLoopback(host))
      io.err(
        `tasks serve: warning: listening on ${host}, not only on this machine; anyone who can reach it and has the URL's token can change the board. ` +
          `It answers to Host ${server.hosts.join(', ')} on port ${server.port} (--allow-host NAME adds a name); any other Host is refused`,
      );
    io.out(options.json ? JSON.stringify({ url: server.url, host: server.host, port: server.port }) : server.url);
    io.err(`tasks serve: serving ${store.dir} as ${actor} (pid ${process.pid}); Ctrl-C stops`);
    if (options.open) openInBrowser(server.url, io);
    const signal = await signals.signalled;
    await server.close();
    io.err(`tasks serve: stopped (${signal})`);
    return {};
  } finally {
    signals.dispose();
  }
}
