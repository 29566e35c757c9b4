import { openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import { printable } from '../core-read.js';

/** Lists background jobs, oldest first. */
export async function jobs(options: GlobalOptions): Promise<CommandOutput> {
  const { listJobViews } = await import('@dotasks/agent');
  const views = listJobViews(openStore(options));
  const lines = views.map((j) => {
    const outcome = j.exitCode !== undefined && j.exitCode !== null ? ` exit ${j.exitCode}` : j.signal ? ` ${j.signal}` : '';
    return printable(`${j.id}  ${(j.state + outcome).padEnd(14)} #${j.task}  ${j.owner}  ${j.seconds}s  ${j.command.join(' ')}`);
  });
  return { text: lines.join('\n') || "(no jobs yet: start one with 'tasks run ID -- CMD')", json: { jobs: views } };
}
