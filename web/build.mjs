#!/usr/bin/env node
// Builds the web app (issue 14) into dist/web, which the server serves:
//   dist/web/index.html           the page, referencing the hashed assets (no inline script, for the CSP)
//   dist/web/static/<name>-<hash>.<ext>, each with .gz and .br copies (the server sends them as they are)
//   dist/web/manifest.json        the first-load files and their sizes (read by bench/w1-web.mjs)
// Run by `npm run build` (so by `npm ci` through `prepare`, and by `npm start`) and before the browser tests.
// PARLEY_WEB_OUT writes elsewhere; --quiet prints only the one-line summary; --dev skips minifying and adds source maps (for profiling).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.resolve(process.env.PARLEY_WEB_OUT ?? path.join(root, 'dist', 'web'));
const entry = path.join(root, 'web', 'src', 'main.tsx');
const template = path.join(root, 'web', 'index.html');
const quiet = process.argv.includes('--quiet');
const dev = process.argv.includes('--dev');

if (!fs.existsSync(entry)) {
  console.error(`web/build.mjs: ${path.relative(root, entry)} is missing; nothing to build`);
  process.exit(1);
}

// Built next to the target, then swapped in, so a server never reads half a build.
const tmp = `${outDir}.tmp-${process.pid}`;
fs.rmSync(tmp, { recursive: true, force: true });
const staticDir = path.join(tmp, 'static');

const result = await esbuild.build({
  entryPoints: { app: entry },
  bundle: true,
  minify: !dev,
  sourcemap: dev ? 'linked' : false,
  format: 'esm',
  splitting: false,
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  chunkNames: 'chunk-[hash]',
  outdir: staticDir,
  publicPath: '/static/',
  // Fonts (KaTeX's) and images the CSS refers to become hashed files of their own.
  loader: { '.woff2': 'file', '.woff': 'file', '.ttf': 'file', '.png': 'file', '.svg': 'file', '.gif': 'file' },
  define: { 'process.env.NODE_ENV': '"production"' },
  // Licence texts of bundled packages (Preact's MIT notice) go to a file of their own next to the bundle.
  legalComments: 'linked',
  charset: 'utf8',
  metafile: true,
  logLevel: 'warning',
  absWorkingDir: root,
});

const outputs = Object.entries(result.metafile.outputs);
const [jsOut, jsMeta] = outputs.find(([, o]) => o.entryPoint !== undefined && o.entryPoint.endsWith('main.tsx')) ?? [];
if (!jsOut) throw new Error('esbuild produced no entry bundle');
const urlOf = (file) => '/static/' + path.relative(staticDir, path.resolve(root, file)).split(path.sep).join('/');
const jsUrl = urlOf(jsOut);
const cssUrl = jsMeta.cssBundle ? urlOf(jsMeta.cssBundle) : undefined;

const tags = [cssUrl ? `<link rel="stylesheet" href="${cssUrl}">` : '', `<script type="module" src="${jsUrl}"></script>`].join('');
let html;
if (fs.existsSync(template)) {
  html = fs.readFileSync(template, 'utf8');
  if (/<script\b(?![^>]*\bsrc=)[^>]*>/i.test(html)) throw new Error('web/index.html has an inline <script>: the Content-Security-Policy forbids it');
  html = html.includes('<!-- parley:assets -->') ? html.replace('<!-- parley:assets -->', tags) : html.replace('</head>', `${tags}</head>`);
} else {
  html =
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark">' +
    `<title>Parley</title>${tags}</head>` +
    '<body><div id="app"></div><noscript>Parley\'s web app needs JavaScript.</noscript></body></html>\n';
}
fs.writeFileSync(path.join(tmp, 'index.html'), html);

// Fixed-name files that other code refers to by path (the inaccessible-user avatar, the
// thumbnail-pending image of rendered messages): copied as they are from web/public.
const publicDir = path.join(root, 'web', 'public');
if (fs.existsSync(publicDir)) fs.cpSync(publicDir, staticDir, { recursive: true });

// Precompressed copies: the server never compresses on the fly.
const COMPRESSIBLE = /\.(js|css|html|svg|json|map|txt|ttf)$/;
const sizes = {};
const compressAll = (dir) => {
  for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, ent.name);
    if (ent.isDirectory()) {
      compressAll(p);
      continue;
    }
    const body = fs.readFileSync(p);
    const gz = zlib.gzipSync(body, { level: 9 });
    const br = zlib.brotliCompressSync(body, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    });
    // Already-compressed formats (woff2, png) gain nothing: those are sent as they are.
    if (COMPRESSIBLE.test(ent.name)) {
      fs.writeFileSync(p + '.gz', gz);
      fs.writeFileSync(p + '.br', br);
    }
    sizes[path.relative(tmp, p).split(path.sep).join('/')] = { raw: body.length, gzip: gz.length, brotli: br.length };
  }
};
compressAll(tmp);

const firstLoad = [jsUrl, cssUrl].filter(Boolean).map((u) => 'static/' + u.slice('/static/'.length));
const total = (k) => firstLoad.reduce((n, f) => n + sizes[f][k], 0);
const manifest = {
  js: jsUrl,
  css: cssUrl ?? null,
  firstLoad: { files: firstLoad, raw: total('raw'), gzip: total('gzip'), brotli: total('brotli') },
  files: sizes,
};
fs.writeFileSync(path.join(tmp, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');

fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(path.dirname(outDir), { recursive: true });
fs.renameSync(tmp, outDir);

const kb = (n) => (n / 1024).toFixed(1) + ' KB';
if (!quiet) {
  for (const f of firstLoad) console.log(`  ${f.padEnd(40)} ${kb(sizes[f].raw).padStart(9)}  gzip ${kb(sizes[f].gzip).padStart(8)}  br ${kb(sizes[f].brotli).padStart(8)}`);
}
console.log(`web app built into ${path.relative(process.cwd(), outDir) || '.'}: first load (JS + CSS) ${kb(manifest.firstLoad.raw)}, gzip ${kb(manifest.firstLoad.gzip)}, brotli ${kb(manifest.firstLoad.brotli)}`);
