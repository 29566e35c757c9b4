import { afterEach, describe, expect, it } from 'vitest';
import { COMMAND_LIST } from '../../src/command-table.js';
import { tasks, tempBoard } from '../helpers.js';

// What a person meets when something goes wrong: one line that says what and what to do (README, "Exit statuses").

let cleanup = () => {};
afterEach(() => cleanup());

function board(): ReturnType<typeof tempBoard> {
  const t = tempBoard();
  cleanup = t.cleanup;
  return t;
}

/** The lines a run printed on stderr. */
const lines = (stderr: string): string[] => stderr.split('\n').filter((l) => l !== '');

describe('usage errors are one line, with a suggestion', () => {
  it('a mistyped command names the nearest one', () => {
    const t = board();
    const r = tasks(t.root, ['lsit']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(lines(r.stderr)).toEqual(["tasks: unknown command 'lsit'; did you mean 'list'? (tasks --help lists the commands)"]);
  });

  it('a word that is no command and like none says so', () => {
    const t = board();
    const r = tasks(t.root, ['frobnicate']);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual(["tasks: unknown command 'frobnicate' (tasks --help lists the commands)"]);
  });

  it('no command at all: one line too', () => {
    const t = board();
    const r = tasks(t.root, []);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual(["tasks: name a command, e.g. 'tasks list' (tasks --help lists the commands)"]);
  });

  it('a mistyped flag names the nearest flag of that command', () => {
    const t = board();
    const r = tasks(t.root, ['list', '--stauts', 'x']);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual(["tasks: unknown flag --stauts for 'tasks list'; did you mean --status? (tasks list --help lists its flags)"]);
  });

  it('a missing argument is named in our words', () => {
    const t = board();
    const r = tasks(t.root, ['create']);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual(["tasks: 'tasks create' needs <subject> (one-line title): tasks create <subject> (tasks create --help for more)"]);
  });

  it('a value outside the choices lists them', () => {
    const t = board();
    const r = tasks(t.root, ['update', '1', '--status', 'done']);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual([
      "tasks: --status of 'tasks update' takes pending, in_progress, completed or deleted, got 'done' (tasks update --help for more)",
    ]);
  });

  it('a word too many is named', () => {
    const t = board();
    const r = tasks(t.root, ['show', '1', '2']);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual(["tasks: unexpected '2': tasks show <id> (tasks show --help for more)"]);
  });

  // Every command of the table: a missing required argument and an unknown flag, each one line on stderr, exit 2.
  for (const spec of COMMAND_LIST) {
    const required = (spec.positionals ?? []).filter((p) => !p.optional && !p.variadic);
    if (required.length > 0)
      it(`tasks ${spec.name} without its arguments`, () => {
        const t = board();
        const r = tasks(t.root, [spec.name]);
        expect(r.code, r.stderr).toBe(2);
        const [line, ...rest] = lines(r.stderr);
        expect(rest, r.stderr).toEqual([]);
        expect(line).toMatch(new RegExp(`^tasks: 'tasks ${spec.name}' needs <${required[0].name}>`));
        expect(line).toContain(`(tasks ${spec.name} --help for more)`);
      });
    it(`tasks ${spec.name} with an unknown flag`, () => {
      const t = board();
      const words = required.map((p) => p.choices?.[0] ?? '1');
      const r = tasks(t.root, [spec.name, ...words, '--frobnicate']);
      expect(r.code, r.stderr).toBe(2);
      expect(lines(r.stderr)).toEqual([`tasks: unknown flag --frobnicate for 'tasks ${spec.name}' (tasks ${spec.name} --help lists its flags)`]);
    });
    const own = Object.keys(spec.options ?? {}).find((name) => name.length >= 4);
    if (own)
      it(`tasks ${spec.name} with --${own} mistyped`, () => {
        const t = board();
        const typo = own.slice(0, 1) + own.slice(2); // a letter left out
        const words = required.map((p) => p.choices?.[0] ?? '1');
        const r = tasks(t.root, [spec.name, ...words, `--${typo}`]);
        expect(r.code, r.stderr).toBe(2);
        expect(lines(r.stderr)).toEqual([
          `tasks: unknown flag --${typo} for 'tasks ${spec.name}'; did you mean --${own}? (tasks ${spec.name} --help lists its flags)`,
        ]);
      });
  }
});
