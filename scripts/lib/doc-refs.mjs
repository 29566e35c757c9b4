// The docs name only files and sections the repository has (scripts/lint.mjs
// runs this). In every Markdown file (README.md, CHANGELOG.md, docs/*.md,
// packages/*/README.md) and in the comments of scripts/:
// - a relative link `[text](path#anchor)` reaches a file, and its anchor a
//   heading of that file (slugged as GitHub slugs headings);
// - a repository path in backticks (`packages/…`, `docs/…`, `scripts/…`,
//   with an optional `:LINE`) exists, and so does the line;
// - a section cited by its name, `(docs/protocol.md, "Claims")` as the
//   protocol asks source comments to cite it, is a heading of that file or a
//   decision's bold opening words, or their first words (`"Writes"` for
//   "Writes: atomic, locked, never lost");
// - nothing cites an issue tracker the repository does not hold: the word
//   issue, PR or pull request before a number, or a number after # alone in
//   parentheses. Another project's issue names the project before the #
//   (proper-lockfile's #121). Code and tests are held to the words too
//   (in code, #N in parentheses is as often a task's id).
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** The word issue(s), PR(s) or pull request(s) before a number (with or without #). */
const TRACKER_WORDS = /\b(?:issues?|PRs?|pull requests?)\s+#?\d+/gi;
/** The same, or #N alone in parentheses: in prose, where a task's id is not written so. */
const TRACKER_REFERENCE = new RegExp(`${TRACKER_WORDS.source}|\\(#\\d+\\)`, 'gi');
/** `packages/…`, `docs/…` or `scripts/…`, then an optional `#anchor` or `:LINE`; globs and placeholders are not paths. */
const REPOSITORY_PATH = /^((?:packages|docs|scripts)\/[^\s`*<>{}#:…]+)(?:#([^\s`]+)|:(\d+))?$/;
/** `[text](href)` or `![alt](href)`, with an optional title; the href is group 3. */
const LINK = /(!?)\[((?:[^\][]|\[[^\]]*\])*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;

/** The Markdown files the check reads, relative to `root`. */
function markdownFiles(root) {
  const top = ['README.md', 'CHANGELOG.md'].filter((f) => existsSync(join(root, f)));
  const docs = existsSync(join(root, 'docs')) ? readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')) : [];
  const packages = existsSync(join(root, 'packages')) ? readdirSync(join(root, 'packages')) : [];
  return [...top, ...docs.map((f) => `docs/${f}`), ...packages.map((p) => `packages/${p}/README.md`).filter((f) => existsSync(join(root, f)))];
}

/** The files under `dir` whose name passes `test`, relative to `root`; dependencies, builds and test fixtures left out. */
function walk(root, dir, test, out = []) {
  if (!existsSync(join(root, dir))) return out;
  for (const name of readdirSync(join(root, dir)).sort()) {
    if (name === 'node_modules' || name === 'dist' || name === 'fixtures') continue;
    const path = `${dir}/${name}`;
    if (statSync(join(root, path)).isDirectory()) walk(root, path, test, out);
    else if (test(name)) out.push(path);
  }
  return out;
}

/** The lines of a Markdown file outside fenced code blocks, with their numbers. */
function proseLines(text) {
  const out = [];
  let fence;
  text.split('\n').forEach((line, i) => {
    const opens = /^\s*(```+|~~~+)/.exec(line);
    if (opens && !fence) fence = opens[1];
    else if (opens && line.trim().startsWith(fence)) fence = undefined;
    else if (!fence) out.push({ line, number: i + 1 });
  });
  return out;
}

/**
 * The comments of a script (`//` to the end of the line, and block comments),
 * line by line: a scan that skips strings, template literals and escaped
 * characters, so a `//` inside a string is no comment. Regular expressions
 * are not told apart: a quote in one opens a string to the end of its line.
 */
function commentLines(text) {
  const out = [];
  let state = 'code'; // or 'block', or the quote that opened a string
  text.split('\n').forEach((line, i) => {
    let comment = '';
    if (state === "'" || state === '"') state = 'code'; // such a string ends with its line
    for (let at = 0; at < line.length; at++) {
      const c = line[at];
      if (state === 'block') {
        if (!line.startsWith('*/', at)) comment += c;
        else {
          state = 'code';
          at++;
        }
      } else if (state !== 'code') {
        if (c === '\\') at++;
        else if (c === state) state = 'code';
      } else if (line.startsWith('//', at)) {
        comment += line.slice(at + 2);
        break;
      } else if (line.startsWith('/*', at)) {
        state = 'block';
        at++;
      } else if (c === '\\') at++;
      else if (c === "'" || c === '"' || c === '`') state = c;
    }
    if (comment.trim()) out.push({ line: comment, number: i + 1 });
  });
  return out;
}

/** Markdown inline text without its markup: a link's text, code without backticks, no emphasis or HTML. */
function plainText(markdown) {
  return markdown
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|__|\*|\b_|_\b|~~)/g, '');
}

/** A heading's anchor as GitHub makes it: its text without markup, lower-cased, punctuation dropped, spaces as hyphens. */
function slugOf(heading) {
  return plainText(heading)
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown file: one per heading (repeats get -1, -2 …), and explicit `<a id>`/`<a name>`. */
function anchorsOf(text) {
  const anchors = new Set();
  const seen = new Map();
  for (const { line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const slug = slugOf(heading[1]);
      const times = seen.get(slug) ?? 0;
      seen.set(slug, times + 1);
      anchors.add(times ? `${slug}-${times}` : slug);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  }
  return anchors;
}

/** A section cited by name: `docs/protocol.md, "Claims"` or `protocol.md, "Claims"`, the name maybe wrapped over lines. */
const SECTION_CITATION = /((?:[\w.-]+\/)*[\w.-]+\.md),\s+"([^"]+)"/g;

/** The names a file's sections go by: its headings and the bold words that open a paragraph, without markup. */
function sectionsOf(text) {
  const names = [];
  for (const { line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line) ?? /^\*\*(.+?)\*\*/.exec(line);
    if (heading) names.push(plainText(heading[1]).toLowerCase());
  }
  return names;
}

/** The file a section citation names: a path from the top, or a name beside the citing file or in docs/. */
function citedFile(root, file, cited) {
  const candidates = cited.includes('/') ? [cited] : [join(dirname(file), cited), `docs/${cited}`];
  return candidates.find((path) => existsSync(join(root, path)));
}

/** Checks the section citations of a text made of `lines` (prose or comments), joined so a wrapped name reads whole. */
function checkSectionCitations(root, file, lines, problems, sectionCache) {
  const text = lines.map((l) => l.line).join('\n');
  const starts = []; // where each line begins in text
  let at = 0;
  for (const l of lines) {
    starts.push(at);
    at += l.line.length + 1;
  }
  for (const m of text.matchAll(SECTION_CITATION)) {
    const where = `${file}:${lines[starts.findLastIndex((at) => at <= m.index)].number}`;
    const name = m[2].replace(/\s*\n\s*\*?\s*/g, ' ').trim();
    const target = citedFile(root, file, m[1]);
    if (!target) {
      problems.push(`${where}: ${m[1]}, "${name}" cites a file that does not exist`);
      continue;
    }
    if (!sectionCache.has(target)) sectionCache.set(target, sectionsOf(readFileSync(join(root, target), 'utf8')));
    const wanted = plainText(name).toLowerCase();
    // The whole name, or its first words: a citation may shorten a long title.
    const found = sectionCache
      .get(target)
      .some((section) => section === wanted || (section.startsWith(wanted) && /^[\s:.,]/.test(section.slice(wanted.length))));
    if (!found) problems.push(`${where}: ${m[1]}, "${name}": ${target} has no section of that name`);
  }
}

/** Checks one line's links, backticked paths and tracker references; pushes what is wrong. */
function checkLine(root, file, { line, number }, problems, anchorCache) {
  const where = `${file}:${number}`;
  const anchors = (target) => {
    if (!anchorCache.has(target)) anchorCache.set(target, anchorsOf(readFileSync(join(root, target), 'utf8')));
    return anchorCache.get(target);
  };
  const code = line.replace(/`[^`]*`/g, (m) => ' '.repeat(m.length)); // links inside code spans are text
  for (const m of code.matchAll(LINK)) {
    const href = m[3];
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) continue; // http:, mailto:, another site
    const [path, anchor] = href.split('#');
    const target = path ? relative(root, resolve(root, dirname(file), decodeURI(path))) : file;
    if (target.startsWith('..') || !existsSync(join(root, target))) {
      problems.push(`${where}: the link to ${href} names a file that does not exist (${target})`);
      continue;
    }
    if (anchor !== undefined) {
      if (!target.endsWith('.md')) problems.push(`${where}: the link to ${href} has an anchor into a file that is not Markdown`);
      else if (!anchors(target).has(anchor)) problems.push(`${where}: the link to ${href}: ${target} has no heading #${anchor}`);
    }
  }
  for (const m of line.matchAll(/`([^`\n]+)`/g)) {
    const ref = REPOSITORY_PATH.exec(m[1]);
    if (!ref) continue;
    const [, path, anchor, lineNumber] = ref;
    if (!existsSync(join(root, path))) problems.push(`${where}: \`${m[1]}\` names a file that does not exist`);
    else if (anchor && !(path.endsWith('.md') && anchors(path).has(anchor))) problems.push(`${where}: \`${m[1]}\`: ${path} has no heading #${anchor}`);
    else if (lineNumber && readFileSync(join(root, path), 'utf8').split('\n').length < Number(lineNumber))
      problems.push(`${where}: \`${m[1]}\`: ${path} has no line ${lineNumber}`);
  }
  checkTrackerReferences(where, line, problems, TRACKER_REFERENCE);
}

/** Pushes every match of `pattern`, a tracker reference, in `text`. */
function checkTrackerReferences(where, text, problems, pattern) {
  for (const m of text.matchAll(pattern))
    problems.push(`${where}: "${m[0]}" cites an issue tracker the repository does not hold; say what it means (another project's: "name #N")`);
}

/** Every problem of the docs' references under `root`, as `path:line: what`. */
export function checkDocReferences(root) {
  const problems = [];
  const anchorCache = new Map();
  const sectionCache = new Map();
  for (const file of markdownFiles(root)) {
    const lines = proseLines(readFileSync(join(root, file), 'utf8'));
    for (const line of lines) checkLine(root, file, line, problems, anchorCache);
    checkSectionCitations(root, file, lines, problems, sectionCache);
  }
  for (const file of walk(root, 'scripts', (name) => /\.(mjs|ts)$/.test(name))) {
    const comments = commentLines(readFileSync(join(root, file), 'utf8'));
    for (const line of comments) checkLine(root, file, line, problems, anchorCache);
    checkSectionCitations(root, file, comments, problems, sectionCache);
  }
  // Code and tests: no tracker numbers either, in comments or in test names.
  for (const file of walk(root, 'packages', (name) => /\.(ts|tsx|mts|mjs)$/.test(name) && !name.endsWith('.d.ts')))
    readFileSync(join(root, file), 'utf8')
      .split('\n')
      .forEach((line, i) => checkTrackerReferences(`${file}:${i + 1}`, line, problems, TRACKER_WORDS));
  return problems;
}
