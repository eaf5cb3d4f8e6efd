import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Custom emoji images on disk, as Zulip lays them out:
 * {dataDir}/user_avatars/{realm_id}/emoji/images/{stem}.{ext} and, for
 * animated emoji, .../images/still/{stem}.png. The stem is random, so names
 * cannot be guessed and a re-upload never overwrites a file in use.
 * Deactivated emoji keep their files: old messages and reactions show them.
 */
const STEM = /^[0-9a-f]{16}$/;
const FILE = /^([0-9a-f]{16})\.(png|gif|webp|jpg)$/;

export const emojiDir = (dataDir: string, realmId: number): string => path.join(dataDir, 'user_avatars', String(realmId), 'emoji', 'images');

async function writeAtomically(target: string, data: Buffer): Promise<void> {
  const tmp = `${target}.${process.pid}.tmp`;
  await fs.writeFile(tmp, data);
  await fs.rename(tmp, target);
}

export async function writeEmojiFiles(dataDir: string, realmId: number, stem: string, ext: string, data: Buffer, still: Buffer | null): Promise<void> {
  if (!STEM.test(stem) || !FILE.test(`${stem}.${ext}`)) throw new Error('bad emoji file name');
  const dir = emojiDir(dataDir, realmId);
  await fs.mkdir(dir, { recursive: true });
  await writeAtomically(path.join(dir, `${stem}.${ext}`), data);
  if (still) {
    await fs.mkdir(path.join(dir, 'still'), { recursive: true });
    await writeAtomically(path.join(dir, 'still', `${stem}.png`), still);
  }
}

export async function removeEmojiFiles(dataDir: string, realmId: number, fileName: string): Promise<void> {
  const m = FILE.exec(fileName);
  if (!m) return;
  const dir = emojiDir(dataDir, realmId);
  await Promise.all([fs.rm(path.join(dir, fileName), { force: true }), fs.rm(path.join(dir, 'still', `${m[1]}.png`), { force: true })]);
}

/** The file behind /user_avatars/{realm}/emoji/images/[still/]{name}, or null for names we never write. */
export function emojiFilePath(dataDir: string, realmId: string, name: string, still: boolean): { file: string; type: string } | null {
  if (!/^\d{1,15}$/.test(realmId)) return null;
  const m = FILE.exec(name);
  if (!m || (still && m[2] !== 'png')) return null;
  const type = { png: 'image/png', gif: 'image/gif', webp: 'image/webp', jpg: 'image/jpeg' }[m[2] as 'png'];
  const dir = emojiDir(dataDir, Number(realmId));
  return { file: still ? path.join(dir, 'still', name) : path.join(dir, name), type };
}
