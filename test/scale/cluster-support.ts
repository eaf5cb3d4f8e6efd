import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildDir, buildOnce as build, freePort, spawnServer, waitForAnswer } from '../support/built-server.js';

/**
 * Several real Parley processes (`node <build>/src/main.js`) for the
 * scale-out tests. The build goes to its own directory under
 * node_modules/.cache, so it never races the dist/ build of the restart test
 * (packages still resolve from the repository's node_modules).
 */

export { ROOT, freePort } from '../support/built-server.js';
export const BUILD_DIR = buildDir('parley-scale-build');
export const MAIN = path.join(BUILD_DIR, 'src/main.js');

/** Builds into `dir` (default BUILD_DIR); a test file running in parallel with another uses its own dir. Returns its main.js. */
export const buildOnce = (dir: string = BUILD_DIR): string => build(dir);

export interface Node {
  readonly name: string;
  readonly port: number;
  readonly base: string;
  readonly dataDir: string;
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
}

export async function startNode(name: string, env: Record<string, string>, main: string = MAIN): Promise<Node> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-scale-${name}-`));
  const { child, exited } = spawnServer(main, { PARLEY_PORT: String(port), PARLEY_DATA_DIR: dataDir, ...env });
  const base = `http://127.0.0.1:${port}`;
  await waitForAnswer(child, `${base}/ready`, 50, 30_000).catch((err: Error) => {
    throw new Error(`${name}: ${err.message}`);
  });
  return { name, port, base, dataDir, child, exited };
}

export async function stopNode(n: Node): Promise<void> {
  if (n.child.exitCode === null && n.child.signalCode === null) {
    n.child.kill('SIGKILL');
    await n.exited;
  }
  fs.rmSync(n.dataDir, { recursive: true, force: true });
}

export const basic = (email: string, key: string): string => 'Basic ' + Buffer.from(`${email}:${key}`).toString('base64');

export interface ApiRes {
  readonly status: number;
  readonly body: any;
}

/** A Zulip API call on one node: params JSON-encoded as clients do. */
export async function api(node: Node, method: string, url: string, params: Record<string, unknown> = {}, auth?: string, signal?: AbortSignal): Promise<ApiRes> {
  const enc = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  const full = `${node.base}/api/v1${url}` + (method === 'GET' && enc.size ? `?${enc}` : '');
  const res = await fetch(full, {
    method,
    headers: { ...(auth ? { authorization: auth } : {}), ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
    body: method === 'GET' ? undefined : enc.toString(),
    signal,
  });
  return { status: res.status, body: await res.json() };
}

/** The owner's credentials from the zuliprc the first process wrote. */
export function ownerFromZuliprc(dataDir: string): { email: string; key: string } {
  const rc = fs.readFileSync(path.join(dataDir, 'zuliprc'), 'utf8');
  return { email: /email=(.*)/.exec(rc)![1]!.trim(), key: /key=(.*)/.exec(rc)![1]!.trim() };
}

/**
 * Creates `<name>@<domain>` users through `creator` (as the owner) and fetches each API key
 * through `keyFrom`, so the user exists for both processes; refuses anything but 200.
 */
export async function createUsers<N extends string>(creator: Node, keyFrom: Node, owner: string, names: readonly N[], password: string, domain: string): Promise<Record<N, { id: number; email: string; auth: string }>> {
  const users = {} as Record<N, { id: number; email: string; auth: string }>;
  for (const name of names) {
    const email = `${name}@${domain}`;
    const created = await api(creator, 'POST', '/users', { email, password, full_name: name }, owner);
    if (created.status !== 200) throw new Error(`POST /users ${email}: ${created.status} ${JSON.stringify(created.body)}`);
    const key = await api(keyFrom, 'POST', '/fetch_api_key', { username: email, password });
    if (key.status !== 200) throw new Error(`fetch_api_key ${email}: ${key.status} ${JSON.stringify(key.body)}`);
    users[name] = { id: created.body.user_id, email, auth: basic(email, key.body.api_key) };
  }
  return users;
}
