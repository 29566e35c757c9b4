/**
 * Finds where JSON text goes wrong, as a 1-based line and column, so errors can
 * point at the spot. Only used after JSON.parse has failed or a field did not
 * validate: the fast path stays JSON.parse.
 */

export interface TextPosition {
  line: number;
  column: number;
}

/** Line and column (1-based) of a character offset. */
export function positionAt(text: string, offset: number): TextPosition {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

interface SyntaxProblem {
  offset: number;
  message: string;
}

/** Scans JSON text and returns the first syntax error, or undefined if it is valid. */
export function findJsonSyntaxError(text: string): SyntaxProblem | undefined {
  let i = 0;
  const fail = (message: string, at = i): never => {
    throw { offset: at, message } satisfies SyntaxProblem;
  };
  const ws = () => {
    while (i < text.length) {
      const c = text[i];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') i++;
      else break;
    }
  };
  const describe = () => (i >= text.length ? 'unexpected end of file' : `unexpected ${JSON.stringify(text[i])}`);
  const str = () => {
    i++;
    while (i < text.length) {
      const c = text[i];
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') {
        const n = text[i + 1];
        if (n === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('bad \\u escape in string');
          i += 6;
        } else if (n !== undefined && '"\\/bfnrt'.includes(n)) i += 2;
        else fail('bad escape in string');
      } else if (c.charCodeAt(0) < 0x20) fail('control character in string (newlines must be written \\n)');
      else i++;
    }
    fail('unterminated string');
  };
  const num = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m || m[0].length === 0) fail(`${describe()}, expected a value`);
    i += m![0].length;
  };
  const value = (depth: number): void => {
    if (depth > 512) fail('nesting too deep');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`${describe()}, expected a property name in double quotes`);
        str();
        ws();
        if (text[i] !== ':') fail(`${describe()}, expected ':' after property name`);
        i++;
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          ws();
          if (text[i] === '}') fail("trailing comma before '}'");
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail(`${describe()}, expected ',' or '}'`);
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          ws();
          if (text[i] === ']') fail("trailing comma before ']'");
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail(`${describe()}, expected ',' or ']'`);
      }
    }
    if (c === '"') return str();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return num();
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    }
    fail(`${describe()}, expected a value`);
  };
  try {
    if (text.charCodeAt(0) === 0xfeff) i = 1;
    value(0);
    ws();
    if (i < text.length) fail(`${describe()} after the end of the JSON value`);
    return undefined;
  } catch (problem) {
    if (typeof problem === 'object' && problem !== null && 'offset' in problem) return problem as SyntaxProblem;
    throw problem;
  }
}

/**
 * Offset of a top-level key's name in an object's JSON text (the opening
 * quote), or of the value for `valueOf`. Falls back to 0 when not found.
 */
export function findTopLevelKey(text: string, key: string): number {
  // A light scan that tracks depth and strings; good enough for locating keys
  // in text that JSON.parse already accepted.
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const start = i;
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\') i++;
        i++;
      }
      if (depth === 1) {
        const raw = text.slice(start, i + 1);
        let j = i + 1;
        while (j < text.length && /\s/.test(text[j])) j++;
        if (text[j] === ':') {
          try {
            if (JSON.parse(raw) === key) return start;
          } catch {
            // not a key we can read; keep scanning
          }
        }
      }
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return 0;
}

/** Offset of element `index` of the top-level array `key` (or of the key when not found). */
export function findArrayElement(text: string, key: string, index: number): number {
  const keyAt = findTopLevelKey(text, key);
  let i = text.indexOf('[', keyAt);
  if (keyAt === 0 && text[0] !== '"') return 0;
  if (i < 0) return keyAt;
  i++;
  let depth = 0;
  let element = 0;
  let atStart = true;
  for (; i < text.length; i++) {
    const c = text[i];
    if (/\s/.test(c)) continue;
    if (atStart && depth === 0) {
      if (element === index) return i;
      atStart = false;
    }
    if (c === '"') {
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\') i++;
        i++;
      }
    } else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') {
      if (depth === 0) break;
      depth--;
    } else if (c === ',' && depth === 0) {
      element++;
      atStart = true;
    }
  }
  return keyAt;
}
