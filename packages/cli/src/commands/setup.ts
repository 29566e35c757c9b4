import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { TasksError, atomicWriteFile, shellQuote } from '@dotasks/core/internal';
import type { CommandArgs } from '../command-table.js';
import type { CommandOutput, GlobalOptions } from '../context.js';
import { SETUP_CLIENTS, planFor, type ClientPlan, type FilePlan, type SetupClient } from '../setup/clients.js';
import { BadFileError, applyPlan, driftOf, removePlan, type Drift } from '../setup/file-edits.js';
import { tasksCommandForAgent } from './guard.js';

/** What `tasks setup` takes, as declared in the command table. */
export interface SetupOptions extends CommandArgs<'setup'>, GlobalOptions {
  /** The words that run tasks in what setup writes; default: as the guard finds them for the agent's shell. */
  tasksCommand?: readonly string[];
}

/** What happened, or would happen, to one file. */
export interface SetupFileReport {
  path: string;
  /** `created`, `updated`, `unchanged`, `removed` (setup had created it), `restored` (our part taken out), `absent`. */
  action: 'created' | 'updated' | 'unchanged' | 'removed' | 'restored' | 'absent';
  /** What was missing or differed before (for --check: what still is). */
  drift: Drift[];
}

/** The top of the checkout setup writes into: the git work tree of the current folder, else the folder itself. */
function projectRoot(cwd: string): string {
  try {
    return execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || cwd;
  } catch {
    return cwd;
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Removes the folders setup made for a file (`.claude/`), once nothing is left in them. */
function removeEmptyFolders(root: string, relative: string): void {
  let dir = dirname(relative);
  while (dir !== '.' && dir !== '') {
    const full = join(root, dir);
    if (!existsSync(full) || readdirSync(full).length > 0) return;
    rmdirSync(full);
    dir = dirname(dir);
  }
}

interface FileStep {
  plan: FilePlan;
  full: string;
  before: string | undefined;
  after: string | undefined;
  drift: Drift[];
}

/** Reads and checks every file first, so a bad one stops the command before anything is written. */
function stepsFor(plan: ClientPlan, root: string, remove: boolean): FileStep[] {
  const bad: string[] = [];
  const steps: FileStep[] = [];
  for (const file of plan.files) {
    const full = join(root, file.path);
    const before = readText(full);
    try {
      const drift = driftOf(file, before);
      const after = remove ? (before === undefined ? undefined : removePlan(file, before)) : applyPlan(file, before);
      steps.push({ plan: file, full, before, after, drift });
    } catch (error) {
      if (!(error instanceof BadFileError)) throw error;
      bad.push(error.message);
    }
  }
  if (bad.length > 0) throw new TasksError('E_INVALID', `tasks setup ${plan.client}: nothing written: ${bad.join('; ')}`);
  return steps;
}

function actionOf(step: FileStep, remove: boolean): SetupFileReport['action'] {
  if (step.before === step.after) return step.before === undefined ? 'absent' : 'unchanged';
  if (remove) return step.after === undefined ? 'removed' : 'restored';
  return step.before === undefined ? 'created' : 'updated';
}

function write(step: FileStep, root: string): void {
  if (step.before === step.after) return;
  if (step.after === undefined) {
    unlinkSync(step.full);
    removeEmptyFolders(root, step.plan.path);
    return;
  }
  mkdirSync(dirname(step.full), { recursive: true });
  atomicWriteFile(step.full, step.after);
}

/** How each action is said, done and (--dry-run) to be done. */
const ACTION_WORDS: Record<SetupFileReport['action'], readonly [string, string]> = {
  created: ['created', 'would create'],
  updated: ['updated', 'would update'],
  unchanged: ['unchanged', 'unchanged'],
  removed: ['removed', 'would remove'],
  restored: ['took dotasks out of', 'would take dotasks out of'],
  absent: ['not there:', 'not there:'],
};

function describeDrift(drift: Drift[]): string {
  return drift.map((d) => `${d.label} ${d.state === 'missing' ? 'is missing' : 'differs from what setup writes'}`).join('; ');
}

/**
 * `tasks setup CLIENT`: writes the client's MCP server entry, hooks and
 * instructions section into this repository, merged into what is there.
 * `--check` reports drift (exit 1), `--remove` takes it out again,
 * `--dry-run` says what would change. A second run changes nothing.
 */
export async function setup(options: SetupOptions): Promise<CommandOutput> {
  const client = options.client as SetupClient;
  if (!SETUP_CLIENTS.includes(client)) throw new TasksError('E_USAGE', `tasks setup takes a client: ${SETUP_CLIENTS.join(', ')}`);
  if ([options.check, options.remove, options.dryRun].filter(Boolean).length > 1 && !(options.remove && options.dryRun))
    throw new TasksError('E_USAGE', '--check goes alone; --remove may take --dry-run');
  const root = projectRoot(options.cwd ?? process.cwd());
  const owner = options.owner?.trim() || client;
  const plan = planFor(client, { tasks: options.tasksCommand ?? tasksCommandForAgent(), owner, quote: shellQuote });
  const remove = options.remove === true;
  const steps = stepsFor(plan, root, remove);

  if (options.check) {
    const drifted = steps.filter((s) => s.drift.length > 0);
    const files = steps.map((s) => ({ path: s.plan.path, action: 'unchanged' as const, drift: s.drift }));
    const json = { client, root, owner, ok: drifted.length === 0, files };
    if (drifted.length === 0) return { text: `${plan.title}: the setup is in place (${steps.map((s) => s.plan.path).join(', ')})`, json };
    const lines = drifted.map((s) => `${s.plan.path}: ${describeDrift(s.drift)}`);
    lines.push(`run 'tasks setup ${client}' to put it back`);
    return { text: lines.join('\n'), json, exitCode: 1 };
  }

  const dryRun = options.dryRun === true;
  if (!dryRun) for (const step of steps) write(step, root);
  const files: SetupFileReport[] = steps.map((s) => ({ path: s.plan.path, action: actionOf(s, remove), drift: s.drift }));
  const lines = files
    .filter((f) => f.action !== 'absent')
    .map((f) => {
      const what = !remove && f.drift.length > 0 ? `: ${f.drift.map((d) => d.label).join(', ')}` : '';
      return `${ACTION_WORDS[f.action][dryRun ? 1 : 0]} ${f.path}${what}`;
    });
  if (lines.length === 0) lines.push(`nothing of the ${plan.title} setup is here`);
  // The one step left to a person, said when setup wrote something (a second run stays quiet).
  if (!remove && !dryRun && files.some((f) => f.action === 'created' || f.action === 'updated')) lines.push(...plan.notes);
  return { text: lines.join('\n'), json: { client, root, owner, dryRun, files } };
}
