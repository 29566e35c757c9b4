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
  const scanner = new JsonScanner(text);
  try {
    scanner.document();
    return undefined;
  } catch (problem) {
    if (problem instanceof JsonSyntaxError) return { offset: problem.offset, message: problem.message };
    throw problem;
  }
}

/** The first syntax error of a text, where the scanner met it. */
class JsonSyntaxError extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

/** A strict JSON reader that keeps only where it is (`i`), so its first error has an offset. */
class JsonScanner {
  private i = 0;

  constructor(private readonly text: string) {}

  /** The whole text: one value (after a byte order mark), and nothing after it but whitespace. */
  document(): void {
    if (this.text.charCodeAt(0) === 0xfeff) this.i = 1;
    this.value(0);
    this.ws();
    if (this.i < this.text.length) this.fail(`${this.describe()} after the end of the JSON value`);
  }

  private fail(message: string, at = this.i): never {
    throw new JsonSyntaxError(at, message);
  }

  private ws(): void {
    const { text } = this;
    while (this.i < text.length) {
      const c = text[this.i];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') this.i++;
      else break;
    }
  }

  /** What is at the current spot, for a message. */
  private describe(): string {
    return this.i >= this.text.length ? 'unexpected end of file' : `unexpected ${JSON.stringify(this.text[this.i])}`;
  }

  private value(depth: number): void {
    if (depth > 512) this.fail('nesting too deep');
    this.ws();
    const c = this.text[this.i];
    if (c === '{') return this.object(depth);
    if (c === '[') return this.array(depth);
    if (c === '"') return this.string();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
    for (const word of ['true', 'false', 'null']) {
      if (this.text.startsWith(word, this.i)) {
        this.i += word.length;
        return;
      }
    }
    this.fail(`${this.describe()}, expected a value`);
  }

  private object(depth: number): void {
    const { text } = this;
    this.i++;
    this.ws();
    if (text[this.i] === '}') {
      this.i++;
      return;
    }
    for (;;) {
      this.ws();
      if (text[this.i] !== '"') this.fail(`${this.describe()}, expected a property name in double quotes`);
      this.string();
      this.ws();
      if (text[this.i] !== ':') this.fail(`${this.describe()}, expected ':' after property name`);
      this.i++;
      this.value(depth + 1);
      if (this.listGoesOn('}')) continue;
      return;
    }
  }

  private array(depth: number): void {
    this.i++;
    this.ws();
    if (this.text[this.i] === ']') {
      this.i++;
      return;
    }
    for (;;) {
      this.value(depth + 1);
      if (this.listGoesOn(']')) continue;
      return;
    }
  }

  /** After an element of an object or array: true at a comma (and not a trailing one), false at the closing `close`. */
  private listGoesOn(close: '}' | ']'): boolean {
    const { text } = this;
    this.ws();
    if (text[this.i] === ',') {
      this.i++;
      this.ws();
      if (text[this.i] === close) this.fail(`trailing comma before '${close}'`);
      return true;
    }
    if (text[this.i] === close) {
      this.i++;
      return false;
    }
    return this.fail(`${this.describe()}, expected ',' or '${close}'`);
  }

  private string(): void {
    const { text } = this;
    this.i++;
    while (this.i < text.length) {
      const c = text[this.i];
      if (c === '"') {
        this.i++;
        return;
      }
      if (c === '\\') {
        const n = text[this.i + 1];
        if (n === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(this.i + 2, this.i + 6))) this.fail('bad \\u escape in string');
          this.i += 6;
        } else if (n !== undefined && '"\\/bfnrt'.includes(n)) this.i += 2;
        else this.fail('bad escape in string');
      } else if (c.charCodeAt(0) < 0x20) this.fail('control character in string (newlines must be written \\n)');
      else this.i++;
    }
    this.fail('unterminated string');
  }

  private number(): void {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.i, this.i + 400));
    if (!m || m[0].length === 0) this.fail(`${this.describe()}, expected a value`);
    this.i += m![0].length;
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
