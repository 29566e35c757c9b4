#!/usr/bin/env node
// House rules that the compiler does not check (docs/style.md):
// - packages/core imports no CLI, watcher, MCP or chokidar code;
// - only the CLI entry exits the process (commands throw);
// - file names are kebab-case;
// - every proper-lockfile lock passes onCompromised and realpath: false;
// - no circle of imports among the packages' src files;
// - no new function over 80 lines (scripts/function-lengths.mjs);
// - no source file of packages/*/src or packages/web/page over 500 lines, but the tables named in LONG_FILES;
// - the docs name only files and sections the repository has, and no issue
//   tracker it does not hold (scripts/lib/doc-refs.mjs).
// `node scripts/lint.mjs [ROOT]` lints another tree (the lint's own test does).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
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
    else if (/\.(tsx?|mts|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

// Files that fit in a head (docs/decisions.md, "Rooms that fit in a head"): a source file (tests aside, which are lists
// of cases) over FILE_LINES lines is cut along its seams. The exceptions are named here, each with why it stays whole.
const FILE_LINES = 500;
const LONG_FILES = new Map([
  ['packages/cli/src/command-table.ts', 'a table: every command declared once, read by the fast path, yargs, --help and completion'],
]);

function checkFileLength(rel, text) {
  if (!/^packages\/[^/]+\/(src|page)\//.test(rel) || /\.test\.tsx?$/.test(rel)) return;
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (LONG_FILES.has(rel)) {
    if (lines <= FILE_LINES) problems.push(`${rel}: ${lines} lines, no longer over ${FILE_LINES}: take it off LONG_FILES in scripts/lint.mjs`);
  } else if (lines > FILE_LINES)
    problems.push(
      `${rel}: ${lines} lines; cut it along its seams into files of at most ${FILE_LINES}, each with one job (docs/decisions.md, "Rooms that fit in a head")`,
    );
}

const EXIT_ALLOWED = /packages\/cli\/src\/(main|cli|run)\.ts$|\/bin\/|supervisor|worker-process|mcp-server/;
for (const file of walk(join(root, 'packages'))) {
  const rel = relative(root, file);
  const text = readFileSync(file, 'utf8');
  const isTest = /\.test\.ts$|\/test\//.test(rel);
  const base = rel
    .split('/')
    .pop()
    .replace(/\.(test\.)?(tsx?|mts|mjs)$/, '');
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(base)) problems.push(`${rel}: file names are kebab-case`);
  checkFileLength(rel, text);
  if (rel.startsWith('packages/core/src/') && /from ['"](@dotasks\/(cli|watch|agent)|dotasks|chokidar|@modelcontextprotocol\/sdk|yargs)/.test(text))
    problems.push(`${rel}: the core must not import CLI, watcher, agent or MCP code`);
  if (!isTest && rel.includes('/src/') && /process\.exit\(/.test(text) && !EXIT_ALLOWED.test(rel))
    problems.push(`${rel}: only the CLI entry exits; throw a TasksError instead`);
  if (!isTest && /lockfile\.lock\(/.test(text) && (!/onCompromised/.test(text) || !/realpath:\s*false/.test(text)))
    problems.push(`${rel}: proper-lockfile locks need onCompromised and realpath: false`);
}

// No circle of imports among packages/*/src files (docs/decisions.md, "The write engine's rooms"): every
// relative import counts, type-only ones and import() of a literal path included, since each is a file
// that must be read to understand the other. A circle is a strongly connected group of files (Tarjan).
const IMPORT = /(?:^|[\n;])\s*(?:import|export)\s(?:[^;'"]*?\sfrom\s*)?['"](\.{1,2}\/[^'"]+)['"]/g;
const DYNAMIC = /\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;
const sources = [];
for (const pkg of readdirSync(join(root, 'packages'))) {
  const src = join(root, 'packages', pkg, 'src');
  if (existsSync(src)) sources.push(...walk(src).filter((f) => /\.tsx?$/.test(f) && !/\.test\.tsx?$/.test(f)));
}
function importedFile(from, spec) {
  const base = resolve(dirname(from), spec).replace(/\.js$/, '');
  return [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((f) => existsSync(f));
}
const imports = new Map();
for (const file of sources) {
  const text = readFileSync(file, 'utf8');
  const to = new Set();
  for (const m of [...text.matchAll(IMPORT), ...text.matchAll(DYNAMIC)]) {
    const target = importedFile(file, m[1]);
    if (target) to.add(target);
  }
  imports.set(file, [...to]);
}
const order = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
function visit(file) {
  order.set(file, order.size);
  low.set(file, order.get(file));
  stack.push(file);
  onStack.add(file);
  for (const next of imports.get(file) ?? []) {
    if (!order.has(next)) {
      visit(next);
      low.set(file, Math.min(low.get(file), low.get(next)));
    } else if (onStack.has(next)) low.set(file, Math.min(low.get(file), order.get(next)));
  }
  if (low.get(file) !== order.get(file)) return;
  const group = [];
  let member;
  do {
    member = stack.pop();
    onStack.delete(member);
    group.push(relative(root, member));
  } while (member !== file);
  if (group.length > 1 || imports.get(file).includes(file))
    problems.push(`${group.sort().join(', ')}: a circle of imports; move what they share into a file both import`);
}
for (const file of sources) if (!order.has(file)) visit(file);

for (const f of longFunctions(FUNCTION_LINES, root))
  if (!KNOWN_LONG.has(f.name))
    problems.push(
      `${f.file}:${f.line}: ${f.name} is ${f.lines} lines; cut it into named steps of at most ${FUNCTION_LINES} (docs/decisions.md, "Long work as named steps")`,
    );
problems.push(...checkDocReferences(root));
for (const p of problems) console.error(p);
console.log(problems.length ? `${problems.length} problem(s)` : 'lint: clean');
process.exitCode = problems.length ? 1 : 0;
