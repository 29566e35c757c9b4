#!/usr/bin/env node
// Functions longer than a limit (default 80 lines) in packages/*/src and
// packages/web/page, longest first, read with the TypeScript compiler's
// parser: `node scripts/function-lengths.mjs [limit]`. The lint fails on one
// over 80 lines that is not in KNOWN_LONG (docs/decisions.md, "Long work as
// named steps").
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// Required, not imported: an ES import of the compiler's 9 MB CommonJS file has Node scan all of it twice (for its
// module format and for its named exports) before running it, 0.55 s of the lint's 0.6 s on a small tree.
const ts = createRequire(import.meta.url)('typescript');

/** The line count past which long work is cut into named steps. */
export const FUNCTION_LINES = 80;

/**
 * Functions over FUNCTION_LINES written before the check, by name: each is
 * to be cut into named steps, and its name taken off this list then. A new
 * one is cut before it is committed. Every one has been cut.
 */
export const KNOWN_LONG = new Set([]);

const root = fileURLToPath(new URL('..', import.meta.url));

function sourceFiles(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts') && !/\.test\.tsx?$/.test(name)) out.push(path);
  }
  return out;
}

/** The name a function goes by: its own, or the variable, property or method it is assigned to. */
function functionName(node) {
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))) return parent.name.getText();
  return '(anonymous)';
}

/** Every function longer than `limit` lines: `{ lines, file, line, name }`, longest first. */
export function longFunctions(limit = FUNCTION_LINES, base = root) {
  const found = [];
  for (const pkg of readdirSync(join(base, 'packages'))) {
    for (const sub of ['src', 'page']) {
      const dir = join(base, 'packages', pkg, sub);
      if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) continue;
      for (const file of sourceFiles(dir)) {
        const kind = file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
        const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, kind);
        const visit = (node) => {
          if (ts.isFunctionLike(node) && 'body' in node && node.body) {
            const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
            const lines = source.getLineAndCharacterOfPosition(node.getEnd()).line - start + 1;
            if (lines > limit) found.push({ lines, file: relative(base, file), line: start + 1, name: functionName(node) });
          }
          ts.forEachChild(node, visit);
        };
        visit(source);
      }
    }
  }
  return found.sort((a, b) => b.lines - a.lines);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const limit = Number(process.argv[2] ?? FUNCTION_LINES);
  for (const f of longFunctions(limit))
    console.log(
      `${String(f.lines).padStart(4)}  ${f.file}:${f.line}  ${f.name}${f.lines > FUNCTION_LINES && !KNOWN_LONG.has(f.name) ? '  (not in KNOWN_LONG: the lint fails)' : ''}`,
    );
}
