import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../src');

/**
 * A module of src/ (one that imports only node's modules) written as a plain ES module into a
 * fresh temporary directory, so that a child node process, which has no TypeScript loader, can
 * import it. `remove()` deletes the directory.
 */
export function standaloneModule(srcFile: string, prefix: string): { dir: string; file: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-${prefix}-`));
  const file = path.join(dir, srcFile.replace(/\.ts$/, '.mjs'));
  fs.writeFileSync(file, esbuild.transformSync(fs.readFileSync(path.join(SRC, srcFile), 'utf8'), { loader: 'ts', format: 'esm' }).code);
  return { dir, file, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
