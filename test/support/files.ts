import fs from 'node:fs';
import path from 'node:path';
import { basicAuth, type FixtureName, type Res, type TestServer, type TestUser } from './server.js';
import { multipartRequest } from './uploads.js';

type Who = TestUser | FixtureName;
const userOf = (t: TestServer, who: Who): TestUser => (typeof who === 'string' ? t.users[who] : who);

/** POST /user_uploads with one file, as `who`. */
export function uploadFile(t: TestServer, who: Who, filename: string, data: Buffer | string, contentType = 'application/octet-stream'): Promise<Res> {
  return multipartRequest(t, 'POST', '/user_uploads', [{ field: 'file', filename, contentType, data: Buffer.from(data) }], {}, who);
}

/** GET a root-level URL (e.g. /user_uploads/...) with `who`'s API key, or no credentials. */
export async function fetchUrl(t: TestServer, url: string, who: Who | null) {
  const headers: Record<string, string> = {};
  if (who !== null) headers.authorization = basicAuth(userOf(t, who));
  return t.app.http.inject({ method: 'GET', url, headers });
}

/** Every file under a folder, relative paths, sorted (to prove what was written where). */
export function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) walk(full);
      else out.push(path.relative(dir, full));
    }
  };
  walk(dir);
  return out.sort();
}
