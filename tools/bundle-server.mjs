#!/usr/bin/env node
// Bundles the compiled server (dist/src/main.js and everything it imports) into
// one file, dist/src/server.mjs, which `npm start` runs. Loading some 300 of
// our modules and several hundred package files one by one (resolution,
// a read and a compile each) is most of a cold start; one file is read and
// compiled once (docs/performance.md, "Start").
// Stays outside the bundle: native addons (better-sqlite3, argon2, sharp) and
// the packages loaded on first use through src/lazy.ts (pg, ioredis, katex,
// highlight.js, nodemailer, the AWS SDK), which are found in node_modules
// when needed. The bundle lives in dist/src so that paths computed from
// import.meta.url (the web app directory, the cluster's worker entry) are the
// same as for dist/src/main.js.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const EXTERNAL = [
  'better-sqlite3',
  '@node-rs/argon2',
  'sharp',
  'pg',
  'pg-native',
  'ioredis',
  'katex',
  'highlight.js',
  'nodemailer',
  '@aws-sdk/*',
];

await esbuild.build({
  entryPoints: [path.join(root, 'dist/src/main.js')],
  outfile: path.join(root, 'dist/src/server.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: EXTERNAL,
  // Bundled CommonJS packages call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as __parleyCreateRequire } from 'node:module'; const require = __parleyCreateRequire(import.meta.url);" },
  sourcemap: 'linked',
  legalComments: 'none',
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  absWorkingDir: root,
});
