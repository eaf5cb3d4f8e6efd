#!/usr/bin/env node
// Bundles the compiled server (dist/src/main.js and everything it imports) into
// one file, dist/src/server.cjs, which `npm start` runs through dist/src/server.mjs
// (src/code-cache.ts: V8's code cache for the bundle). Loading some 300 of
// our modules and several hundred package files one by one (resolution,
// a read and a compile each) is most of a cold start; one file is read and
// compiled once (docs/performance.md, "Start").
// Stays outside the bundle: native addons (better-sqlite3, argon2, sharp) and
// the packages loaded on first use through src/lazy.ts (pg, ioredis, katex,
// highlight.js, nodemailer, the AWS SDK), which are found in node_modules
// when needed. The bundle lives in dist/src so that paths computed from
// import.meta.url (the web app directory, the cluster's worker entry) are the
// same as for dist/src/main.js. It is CommonJS because only a script (not an
// ES module) can be compiled with V8's cached data in Node 20; the loader
// passes it import.meta.url.
import fs from 'node:fs';
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

// Node built-ins that two bundled packages require when they load but use only in features
// Parley never turns on: Fastify's lib/server.js (node:https and node:http2, for its own
// https/http2 servers; Parley passes a serverFactory; node:dns, to listen on every address of
// "localhost") and prom-client's pushgateway (https).
// Loading them, with TLS, was 2-3% of a cold start (P10, docs/performance.md). Each such
// require becomes an object that loads the module at its first property read. The build
// fails if a package no longer has the line, so an upgrade cannot silently undo this.
const LAZY_BUILTINS = [
  // node:dns: Fastify looks a host up only to listen on every address of "localhost".
  { file: 'node_modules/fastify/lib/server.js', requires: ["const https = require('node:https')", "const http2 = require('node:http2')", "const dns = require('node:dns')"] },
  { file: 'node_modules/prom-client/lib/pushgateway.js', requires: ["const https = require('https')"] },
];
const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(build) {
    for (const { file, requires } of LAZY_BUILTINS) {
      const full = path.join(root, file);
      build.onLoad({ filter: new RegExp(`^${full.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`) }, async () => {
        let code = await fs.promises.readFile(full, 'utf8');
        for (const line of requires) {
          if (!code.includes(line)) throw new Error(`${file} no longer has: ${line}`);
          const [, name, id] = /^const (\w+) = require\('([^']+)'\)$/.exec(line);
          code = code.replace(line, `const ${name} = lazyBuiltin(${JSON.stringify(id)})`);
        }
        code += `\nfunction lazyBuiltin (id) {\n  let mod\n  return new Proxy({}, { get: (_, key) => (mod ??= require(id))[key] })\n}\n`;
        return { contents: code, loader: 'js' };
      });
    }
  },
};

await esbuild.build({
  plugins: [lazyBuiltins],
  entryPoints: [path.join(root, 'dist/src/main.js')],
  outfile: path.join(root, 'dist/src/server.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: EXTERNAL,
  // The file is one function expression, which the loader (src/code-cache.ts runBundle)
  // compiles as it is (a wrapper added at run time would hold a second copy of the source)
  // and calls with CommonJS's arguments and the bundle's own URL for import.meta.url.
  banner: { js: '(function (exports, require, module, __filename, __dirname, __parleyImportMetaUrl) {' },
  footer: { js: '})' },
  define: { 'import.meta.url': '__parleyImportMetaUrl' },
  // import() of a package outside the bundle (sharp) becomes require(): in a vm.Script,
  // import() needs an experimental loader hook that prints a warning when first used.
  supported: { 'dynamic-import': false },
  sourcemap: 'linked',
  legalComments: 'none',
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  absWorkingDir: root,
});

// esbuild escapes non-ASCII characters except in regular expression literals (two in
// markdown-it). One such character makes V8 hold the whole source as a two-byte string:
// 6.4 MB instead of 3.2 MB of heap for as long as the server runs. \uXXXX means the same
// character in a regular expression, as in a string.
const bundleFile = path.join(root, 'dist/src/server.cjs');
const code = fs.readFileSync(bundleFile, 'utf8');
if (/[^\x00-\x7f]/.test(code)) fs.writeFileSync(bundleFile, code.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));

// The entry point: runs the bundle with the code cache (written next to it by the first start).
fs.writeFileSync(
  path.join(root, 'dist/src/server.mjs'),
  `// Generated by tools/bundle-server.mjs.
import { fileURLToPath } from 'node:url';
import { runBundle } from './code-cache.js';

runBundle(fileURLToPath(new URL('./server.cjs', import.meta.url)));
`,
);
// A cache from an earlier bundle would be ignored (its hash differs); remove it rather than keep it around.
fs.rmSync(path.join(root, 'dist/src/server.cjs.cache'), { force: true });
fs.rmSync(path.join(root, 'dist/src/server.mjs.map'), { force: true });
