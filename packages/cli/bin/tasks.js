#!/usr/bin/env node
// CommonJS (see package.json here). The everyday commands run from the bundle (dist/bundle, built by
// scripts/build-bundle.mjs), one CommonJS file and a chunk per command; anything else loads the ES modules
// from dist/main.js, synchronously where Node can (require of an ES module, Node >= 20.19).
'use strict';
if (!require('../dist/bundle/tasks.cjs').runBundled(process.argv.slice(2))) {
  if (process.features.require_module) require('../dist/main.js');
  else import('../dist/main.js');
}
