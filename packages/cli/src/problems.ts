import { renderProblem, type BoardSnapshot, type RenderStyle, printable } from './core-read.js';
import type { CommandOutput } from './context.js';

/** Bad task files as warning lines, and exit status 1 while there are any (lists never skip them silently). */
export function reportProblems(snapshot: BoardSnapshot, style?: RenderStyle): Pick<CommandOutput, 'warnings' | 'exitCode'> {
  return {
    warnings: snapshot.problems.map((p) => renderProblem({ ...p, file: printable(p.file), message: printable(p.message) }, style)),
    exitCode: snapshot.problems.length ? 1 : 0,
  };
}
