/**
 * Text for a terminal, as its own entry, `@dotasks/core/terminal`: the one
 * sanitizer (printable.ts) and the one width function (display-width.ts)
 * that everything shown on a terminal passes through. The width function
 * loads string-width and its Unicode tables, so it is not in the read path's
 * entry (read.ts has the sanitizer alone) nor in the internal one, which the
 * everyday commands' bundle loads.
 */
export { printable, printableLines, printableTask, printableValue, type PrintableFields } from './views/printable.js';
export { displayWidth, fitWidth } from './views/display-width.js';
export { cutGraphemes, graphemes } from './views/graphemes.js';
