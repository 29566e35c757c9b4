import { createRequire } from 'node:module';
import { actingOwner, type CommandOutput, type GlobalOptions } from '../context.js';

/**
 * `tasks mcp`: the todo tool's stdio MCP server (@dotasks/agent's
 * runMcpServer, which loads the SDK: nothing else does). Resolves (exit 0)
 * when the client closes stdin.
 */
export async function mcp(options: GlobalOptions): Promise<CommandOutput> {
  const { runMcpServer } = await import('@dotasks/agent');
  const version = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
  await runMcpServer({
    dir: options.dir,
    cwd: options.cwd,
    owner: actingOwner(options),
    version,
    onError: (error) => process.stderr.write(`tasks mcp: ${error.message}\n`),
  });
  return {};
}
