import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tasks, tempBoard } from '../helpers.js';

// The README's console sessions are run for real: every command must
// succeed (or exit as the comment says) and print the lines shown under it.
const readme = readFileSync(fileURLToPath(new URL('../../../../README.md', import.meta.url)), 'utf8');

/** Splits `$ tasks …` into argv, honouring double quotes. */
function argvOf(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]);
}

function sessions(): { title: string; steps: { args: string[]; exit: number; expected: string[] }[] }[] {
  const out = [];
  for (const m of readme.matchAll(/### ([^\n]+)\n(?:(?!###|```)[^\n]*\n)*```console\n([\s\S]*?)```/g)) {
    const steps: { args: string[]; exit: number; expected: string[] }[] = [];
    for (const line of m[2].split('\n')) {
      if (line.startsWith('$ tasks ')) {
        const [command, comment] = line.slice('$ tasks '.length).split(/\s+#\s*/);
        steps.push({ args: argvOf(command), exit: comment?.match(/exit (\d+)/) ? Number(comment.match(/exit (\d+)/)![1]) : 0, expected: [] });
      } else if (line.trim() && steps.length) {
        const [text, comment] = line.split(/\s{2,}#\s*/);
        steps.at(-1)!.expected.push(text);
        if (comment?.match(/exit (\d+)/)) steps.at(-1)!.exit = Number(comment.match(/exit (\d+)/)![1]);
      }
    }
    out.push({ title: m[1], steps });
  }
  return out;
}

describe('the README tour', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('has console sessions to check', () => {
    expect(sessions().map((s) => s.title)).toEqual(expect.arrayContaining(['A person', 'Several agents']));
  });

  // One story: every session continues on the board the sessions before it left, in the README's order.
  it('runs as written, from the first command to the last, on one board', () => {
    const t = tempBoard({ init: false });
    cleanup = t.cleanup;
    for (const session of sessions())
      for (const step of session.steps) {
        const r = tasks(t.root, step.args, { TASKS_OWNER: 'ann' });
        const where = `${session.title}: tasks ${step.args.join(' ')}`;
        expect(r.code, `${where}: ${r.stderr}`).toBe(step.exit);
        const printed = (r.stdout + r.stderr).replaceAll(t.root, '/repo');
        for (const line of step.expected) {
          // Timestamps differ from run to run.
          const pattern = new RegExp(
            line
              .split(/\d{4}-\d\d-\d\dT[\d:.]+Z/)
              .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
              .join('[\\dT:.Z-]+'),
          );
          expect(printed, where).toMatch(pattern);
        }
      }
  });
});
