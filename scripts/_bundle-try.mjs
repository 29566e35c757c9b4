import { build } from 'rolldown';
const fmt = process.argv[2];
await build({
  input: '/work/main/packages/cli/dist/main.js',
  platform: 'node',
  external: (id) =>
    /^node:/.test(id) || /(^|\/)cli\.js$/.test(id) || ['yargs', 'chokidar', 'proper-lockfile'].includes(id) || id.startsWith('@modelcontextprotocol'),
  output: { file: `/work/main/packages/cli/dist/main-b.${fmt === 'cjs' ? 'cjs' : 'mjs'}`, format: fmt, inlineDynamicImports: true },
  logLevel: 'warn',
});
