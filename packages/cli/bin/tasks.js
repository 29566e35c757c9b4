#!/usr/bin/env node
// CommonJS (see package.json here): Node then loads the entry and the everyday commands synchronously
// (require of an ES module, Node >= 20.19), which is faster than the asynchronous ES module loader.
'use strict';
if (process.features.require_module) require('../dist/main.js');
else import('../dist/main.js');
