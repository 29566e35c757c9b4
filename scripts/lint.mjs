#!/usr/bin/env node
// House rules that the compiler does not check (docs/style.md):
// - packages/core imports no CLI, watcher, MCP or chokidar code;
// - only the CLI entry exits the process (commands throw);
// - file names are kebab-case;
// - every proper-lockfile lock passes onCompromised and realpath: false;
// - no new function over 80 lines (scripts/function-lengths.mjs);
// - the docs name only files and sections the repository has, and no issue
//   tracker it does not hold (scripts/lib/doc-refs.mjs).
// `node scripts/lint.mjs [ROOT]` lints another tree (the lint's own test does).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FUNCTION_LINES, KNOWN_LONG, longFunctions } from './function-lengths.mjs';
import { checkDocReferences } from './lib/doc-refs.mjs';

const root = process.argv[2] ? resolve(process.argv[2]) : fileURLToPath(new URL('..', import.meta.url));
const problems = [];

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (/\.(ts|mts|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const EXIT_ALLOWED = /packages\/cli\/src\/(main|cli|run)\.ts$|\/bin\/|supervisor|worker-process|mcp-server/;
for (const file of walk(join(root, 'packages'))) {
  const rel = relative(root, file);
  const text = readFileSync(file, 'utf8');
  const isTest = /\.test\.ts$|\/test\//.test(rel);
  const base = rel
    .split('/')
    .pop()
    .replace(/\.(test\.)?(ts|mts|mjs)$/, '');
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(base)) problems.push(`${rel}: file names are kebab-case`);
  if (rel.startsWith('packages/core/src/') && /from ['"](@dotasks\/(cli|watch|agent)|dotasks|chokidar|@modelcontextprotocol\/sdk|yargs)/.test(text))
    problems.push(`${rel}: the core must not import CLI, watcher, agent or MCP code`);
  if (!isTest && rel.includes('/src/') && /process\.exit\(/.test(text) && !EXIT_ALLOWED.test(rel))
    problems.push(`${rel}: only the CLI entry exits; throw a TasksError instead`);
  if (!isTest && /lockfile\.lock\(/.test(text) && (!/onCompromised/.test(text) || !/realpath:\s*false/.test(text)))
    problems.push(`${rel}: proper-lockfile locks need onCompromised and realpath: false`);
}
for (const f of longFunctions(FUNCTION_LINES, root))
  if (!KNOWN_LONG.has(f.name))
    problems.push(
      `${f.file}:${f.line}: ${f.name} is ${f.lines} lines; cut it into named steps of at most ${FUNCTION_LINES} (docs/decisions.md, "Long work as named steps")`,
    );
problems.push(...checkDocReferences(root));
for (const p of problems) console.error(p);
console.log(problems.length ? `${problems.length} problem(s)` : 'lint: clean');
process.exitCode = problems.length ? 1 : 0;
