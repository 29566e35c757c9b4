import { relative, isAbsolute } from 'node:path';
import { diagnoseBoard, repairBoard, type DoctorChange, type DoctorFinding } from '@dotasks/core';
import { openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { printable } from '../core-read.js';

/** What `tasks doctor` takes, as declared in the command table. */
export interface DoctorOptions extends CommandArgs<'doctor'>, GlobalOptions {}

/** A path as people want to read it: relative to where they stand when that is shorter. */
function shown(path: string | undefined, cwd: string): string {
  if (!path) return '';
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

function findingLines(f: DoctorFinding, cwd: string): string[] {
  const where = f.file ? `${shown(f.file, cwd)}${f.line !== undefined ? `:${f.line}:${f.column}` : ''}: ` : '';
  return [printable(`${where}${f.message} [${f.code}]`), `  fix: ${printable(f.fix)}`];
}

function changeLine(c: DoctorChange, cwd: string): string {
  return printable(`fixed ${shown(c.file, cwd)}: ${c.message}`);
}

/** Checks the board (and with --fix repairs what is safe to repair); exits 1 while anything remains. */
export async function doctor(options: DoctorOptions): Promise<CommandOutput> {
  const store = openStore(options);
  const cwd = options.cwd ?? process.cwd();
  const lines: string[] = [];
  let findings: DoctorFinding[];
  let changes: DoctorChange[] | undefined;
  let files: number | undefined;
  if (options.fix) {
    const report = await repairBoard(store, { cwd });
    changes = report.changes;
    findings = report.remaining;
    for (const c of changes) lines.push(changeLine(c, cwd));
    if (changes.length === 0) lines.push('nothing to fix automatically');
  } else {
    const report = diagnoseBoard(store, { cwd });
    findings = report.findings;
    files = report.files;
  }
  for (const f of findings) lines.push(...findingLines(f, cwd));
  const fixable = findings.filter((f) => f.fixable).length;
  if (findings.length === 0) lines.push(options.fix ? 'the board is healthy now' : `the board is healthy (${files} task file${files === 1 ? '' : 's'})`);
  else {
    const n = `${findings.length} problem${findings.length === 1 ? '' : 's'}`;
    lines.push(
      options.fix
        ? `${n} left for a person (see each fix above)`
        : fixable
          ? `${n}; ${fixable === findings.length ? 'all' : fixable} fixable with 'tasks doctor --fix'`
          : `${n}, none of them safe to fix automatically (see each fix above)`,
    );
  }
  return {
    text: lines.join('\n'),
    json: { ok: findings.length === 0, ...(changes ? { changes } : {}), findings },
    exitCode: findings.length ? 1 : 0,
  };
}
