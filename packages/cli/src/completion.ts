import { basename } from 'node:path';
import { findBoard, isClosed, loadBoardSnapshot, printable } from './core-read.js';
import { COMMAND_LIST, findCommand, optionsOf, type CommandArgs, type OptionSpec } from './command-table.js';
import type { CommandOutput } from './context.js';

/**
 * Shell completion, read from the command table: commands, their flags, the
 * choices of a flag or positional, and task ids with their subjects where
 * the table says a positional takes one. The scripts ask
 * `tasks --get-yargs-completions WORD…` (the words after `tasks`, the last
 * one being completed) and get one candidate a line.
 */

export type Shell = 'bash' | 'zsh' | 'fish';

interface Candidate {
  value: string;
  description?: string;
}

/** The shell to write for: the one asked for, else the one in SHELL, else bash. */
export function shellOf(asked: string | undefined, env: NodeJS.ProcessEnv = process.env): Shell {
  const name = asked ?? basename(env.SHELL ?? '');
  return name === 'zsh' || name === 'fish' ? name : 'bash';
}

const SCRIPTS: Record<Shell, string> = {
  bash: `# tasks completion for bash (tasks completion --shell bash >> ~/.bashrc)
_tasks_yargs_completions() {
  local IFS=$'\\n'
  COMPREPLY=($(TASKS_COMPLETION_SHELL=bash "\${COMP_WORDS[0]}" --get-yargs-completions "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o bashdefault -o default -F _tasks_yargs_completions tasks
`,
  zsh: `#compdef tasks
# tasks completion for zsh (tasks completion --shell zsh >> ~/.zshrc, after compinit)
_tasks() {
  local -a candidates
  candidates=("\${(@f)$(TASKS_COMPLETION_SHELL=zsh "\${words[1]}" --get-yargs-completions "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  if [[ -n "\${candidates[1]}" ]]; then
    _describe 'tasks' candidates
  else
    _files
  fi
}
compdef _tasks tasks
`,
  fish: `# tasks completion for fish (tasks completion --shell fish > ~/.config/fish/completions/tasks.fish)
function __tasks_complete
    set -l words (commandline -opc) (commandline -ct)
    env TASKS_COMPLETION_SHELL=fish $words[1] --get-yargs-completions $words[2..-1] 2>/dev/null
end
complete -c tasks -f -a '(__tasks_complete)'
`,
};

/** `tasks completion [--shell bash|zsh|fish]`: the script to source. */
export async function completionCommand(options: CommandArgs<'completion'>): Promise<CommandOutput> {
  const script = SCRIPTS[shellOf(options.shell)];
  return { text: script.trimEnd(), json: { shell: shellOf(options.shell), script } };
}

/** The option a word like `--lease`, `-a` or `--lease=5` names. */
function optionNamed(options: Record<string, OptionSpec>, word: string): OptionSpec | undefined {
  const name = word.replace(/^--?/, '').replace(/=.*$/, '');
  return options[name] ?? Object.values(options).find((o) => o.alias === name);
}

/** Task ids (open ones, or every task but the deleted) with their subjects; none when there is no board. */
function taskIds(which: 'open-ids' | 'ids', dir: string | undefined): Candidate[] {
  let snapshot;
  try {
    snapshot = loadBoardSnapshot(findBoard({ dir }));
  } catch {
    return [];
  }
  return snapshot.tasks
    .filter((t) => t.status !== 'deleted' && (which === 'ids' || !isClosed(t.status)))
    .map((t) => ({ value: String(t.id), description: t.subject }));
}

/** The candidates for the last of `words` (the words after `tasks`). */
export function complete(words: string[]): Candidate[] {
  const current = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const starting = (c: Candidate) => c.value.startsWith(current);
  const help: Candidate = { value: '--help', description: 'show help' };
  if (before.length === 0) {
    if (current.startsWith('-'))
      return [
        ...Object.entries(optionsOf({ name: '', describe: '', examples: [] })).map(([n, o]) => ({ value: `--${n}`, description: o.describe })),
        help,
        { value: '--version', description: 'show the version' },
      ].filter(starting);
    return COMMAND_LIST.flatMap((c) => [c.name, ...(c.aliases ?? [])].map((value) => ({ value, description: c.describe }))).filter(starting);
  }
  const spec = findCommand(before[0]);
  if (!spec) return [];
  const options = optionsOf(spec);
  let dir: string | undefined;
  let positionals = 0;
  let afterDashDash = false;
  for (let i = 1; i < before.length; i++) {
    const word = before[i];
    if (afterDashDash || word === '-' || !word.startsWith('-')) {
      positionals++;
      continue;
    }
    if (word === '--') {
      afterDashDash = true;
      continue;
    }
    const option = optionNamed(options, word);
    if (option && option.type !== 'boolean' && !word.includes('=')) {
      if (word === '--dir') dir = before[i + 1];
      i++; // its value
    } else if (word.startsWith('--dir=')) dir = word.slice('--dir='.length);
  }
  const previous = before.length > 1 ? before.at(-1)! : '';
  const valueOf = previous.startsWith('-') && !previous.includes('=') ? optionNamed(options, previous) : undefined;
  if (valueOf && valueOf.type !== 'boolean' && !afterDashDash) return (valueOf.choices ?? []).map((value) => ({ value })).filter(starting);
  if (current.startsWith('-') && !afterDashDash)
    return [...Object.entries(options).map(([n, o]) => ({ value: `--${n}`, description: o.describe })), help].filter(starting);
  const declared = spec.positionals ?? [];
  const positional = declared[positionals] ?? (declared.at(-1)?.variadic ? declared.at(-1) : undefined);
  if (!positional || positional.variadic) return [];
  if (positional.choices) return positional.choices.map((value) => ({ value })).filter(starting);
  if (positional.completes) return taskIds(positional.completes, dir).filter(starting);
  return [];
}

/** One candidate a line, spelled for the shell: `id` (bash), `id:subject` (zsh), `id<TAB>subject` (fish). */
export function formatCandidates(candidates: Candidate[], shell: Shell): string {
  const lines = candidates.map(({ value, description }) => {
    const text = description === undefined ? undefined : printable(description);
    if (shell === 'zsh') return text ? `${value.replace(/:/g, '\\:')}:${text.replace(/:/g, '\\:')}` : value.replace(/:/g, '\\:');
    if (shell === 'fish') return text ? `${value}\t${text}` : value;
    return value;
  });
  return lines.length ? lines.join('\n') + '\n' : '';
}

/**
 * Answers `tasks --get-yargs-completions WORD…`. Scripts written by older
 * versions (yargs') pass the program itself first; it is dropped. The shell
 * comes from TASKS_COMPLETION_SHELL (our scripts set it), else from SHELL.
 */
export function answerCompletion(words: string[], env: NodeJS.ProcessEnv = process.env): string {
  if (words.length > 1 && !findCommand(words[0]) && /^tasks(\.js)?$/.test(basename(words[0]))) words = words.slice(1);
  const asked = env.TASKS_COMPLETION_SHELL ?? (env.ZSH_NAME ? 'zsh' : undefined);
  return formatCandidates(complete(words), shellOf(asked, env));
}
