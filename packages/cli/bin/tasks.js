#!/usr/bin/env node
// CommonJS (see package.json here). The everyday commands run from the bundle (dist/bundle, built by
// scripts/build-bundle.mjs), one CommonJS file and a chunk per command; anything else loads the ES modules
// from dist/main.js, synchronously where Node can (require of an ES module, Node >= 20.19).
// The bundle hands over its parse of argv (fast-path.ts), so the ES modules do not parse it again.
'use strict';
const argv = process.argv.slice(2);
const handed = require('../dist/bundle/tasks.cjs').runBundled(argv);
if (handed !== true) {
  if (process.features.require_module) require('../dist/main.js').runMain(argv, handed);
  else import('../dist/main.js').then((main) => main.runMain(argv, handed));
}
