#!/usr/bin/env node
// The build's fingerprint: a SHA-256 over the path and bytes of every input of
// `npm run build` (the server's TypeScript, the web app's sources, the build
// scripts and configuration, the lockfile). `npm run build` ends with
// `node tools/build-stamp.mjs write`, which stores it in dist/.build-stamp;
// tools/start.mjs compares it with the sources to decide whether dist/ is
// current. A failed build writes no stamp, so the next start builds again.
//   node tools/build-stamp.mjs write   store the fingerprint of the current sources
//   node tools/build-stamp.mjs check   exit 0 when dist/ is current, 1 when stale
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const STAMP = path.join(ROOT, 'dist', '.build-stamp');

/** Directories whose files are inputs (walked recursively), and single input files. */
const INPUT_DIRS = ['src', 'web/src', 'web/public'];
const INPUT_FILES = ['tsconfig.json', 'web/tsconfig.json', 'web/build.mjs', 'web/index.html', 'tools/build-stamp.mjs', 'tools/bundle-server.mjs', 'tools/warm-code-cache.mjs', 'package.json', 'package-lock.json'];

function walk(dir, out) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile()) out.push(p);
  }
}

/** Hex SHA-256 of the build's inputs (a file's path and content; a missing file counts as missing). */
export function fingerprint(root = ROOT) {
  const files = [];
  for (const d of INPUT_DIRS) walk(path.join(root, d), files);
  for (const f of INPUT_FILES) files.push(path.join(root, f));
  files.sort();
  const h = crypto.createHash('sha256');
  for (const f of files) {
    h.update(path.relative(root, f) + '\0');
    try {
      h.update(fs.readFileSync(f));
    } catch {
      h.update('(missing)');
    }
    h.update('\0');
  }
  return h.digest('hex');
}

/** True when dist/ was built from exactly the current sources. */
export function isCurrent(root = ROOT) {
  let stored;
  try {
    stored = fs.readFileSync(path.join(root, 'dist', '.build-stamp'), 'utf8').trim();
  } catch {
    return false;
  }
  return stored === fingerprint(root);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const cmd = process.argv[2];
  if (cmd === 'write') {
    fs.mkdirSync(path.dirname(STAMP), { recursive: true });
    fs.writeFileSync(STAMP, fingerprint() + '\n');
  } else if (cmd === 'check') {
    process.exit(isCurrent() ? 0 : 1);
  } else {
    process.stderr.write('usage: node tools/build-stamp.mjs write|check\n');
    process.exit(2);
  }
}
