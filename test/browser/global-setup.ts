import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Builds the web app once before the browser tests, into a directory of its
 * own (PARLEY_WEB_OUT), so the tests always drive the current web/src and never
 * touch the dist/web a running server may be serving.
 */
export const BROWSER_WEB_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test-results/web-build');

export default function setup(): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  execFileSync(process.execPath, [path.join(root, 'web/build.mjs'), '--quiet'], { cwd: root, env: { ...process.env, PARLEY_WEB_OUT: BROWSER_WEB_DIR }, stdio: 'inherit' });
}
