import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Uploaded avatars on disk: {dataDir}/user_avatars/{realm_id}/{stem}.png and
 * {stem}-medium.png. The stem is random per upload, so a new upload never
 * overwrites the files the current avatar URL points to.
 */
const STEM = /^[0-9a-f]{32}$/;

export const avatarDir = (dataDir: string, realmId: number): string => path.join(dataDir, 'user_avatars', String(realmId));

export async function writeAvatarFiles(dataDir: string, realmId: number, stem: string, files: { default: Buffer; medium: Buffer }): Promise<void> {
  if (!STEM.test(stem)) throw new Error('bad avatar stem');
  const dir = avatarDir(dataDir, realmId);
  await fs.mkdir(dir, { recursive: true });
  for (const [suffix, data] of [['', files.default], ['-medium', files.medium]] as const) {
    const target = path.join(dir, `${stem}${suffix}.png`);
    const tmp = `${target}.${process.pid}.tmp`;
    await fs.writeFile(tmp, data);
    await fs.rename(tmp, target);
  }
}

export async function removeAvatarFiles(dataDir: string, realmId: number, stem: string | null): Promise<void> {
  if (!stem || !STEM.test(stem)) return;
  const dir = avatarDir(dataDir, realmId);
  await Promise.all([`${stem}.png`, `${stem}-medium.png`].map((f) => fs.rm(path.join(dir, f), { force: true })));
}

/** The file behind /user_avatars/{realm}/{name}, or null for any name we never write. */
export function avatarFilePath(dataDir: string, realmId: string, name: string): string | null {
  if (!/^\d{1,15}$/.test(realmId) || !/^[0-9a-f]{32}(-medium)?\.png$/.test(name)) return null;
  return path.join(dataDir, 'user_avatars', String(Number(realmId)), name);
}
