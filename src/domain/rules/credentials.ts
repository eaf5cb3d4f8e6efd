import { randomBytes, timingSafeEqual } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';

// Algorithm.Argon2id; the package exports it as an ambient const enum.
const ARGON2ID = 2;

const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 32 characters from [A-Za-z0-9], drawn from a cryptographic source without modulo bias. */
export function generateApiKey(): string {
  let out = '';
  while (out.length < 32) {
    for (const b of randomBytes(48)) {
      // 248 = 62 * 4: values at or above it would bias the alphabet.
      if (b < 248 && out.length < 32) out += KEY_ALPHABET[b % 62];
    }
  }
  return out;
}

export const isWellFormedApiKey = (key: string): boolean => /^[A-Za-z0-9]{32}$/.test(key);

/** Constant-time comparison of two API keys. */
export function apiKeysEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}

export type HashCost = 'default' | 'fast';

// argon2id with the OWASP-recommended floor (19 MiB, t=2). The "fast" profile is
// for the test suite only, where hundreds of fixture users are created.
const PARAMS: Record<HashCost, { memoryCost: number; timeCost: number; parallelism: number }> = {
  default: { memoryCost: 19456, timeCost: 2, parallelism: 1 },
  fast: { memoryCost: 1024, timeCost: 1, parallelism: 1 },
};

export function hashPassword(password: string, cost: HashCost): Promise<string> {
  return hash(password, { algorithm: ARGON2ID, ...PARAMS[cost] });
}

export async function verifyPassword(hashed: string | null, password: string): Promise<boolean> {
  if (!hashed) return false;
  try {
    return await verify(hashed, password);
  } catch {
    return false;
  }
}

/** A random password for the first owner when none is configured. */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}

const COMMON = new Set([
  'password', 'password1', '123456', '1234567', '12345678', '123456789', '1234567890', 'qwerty',
  'qwertyuiop', 'abc123', '111111', '000000', 'letmein', 'iloveyou', 'admin', 'welcome', 'monkey',
  'dragon', 'football', 'baseball', 'sunshine', 'princess', 'zulip', 'parley', 'changeme', 'secret',
]);

/**
 * Zulip requires at least 6 characters and an estimated 10,000 guesses
 * (zxcvbn). We estimate guesses as alphabet^length over the character classes
 * used, after refusing well-known passwords and single repeated characters.
 */
export function isStrongPassword(password: string): boolean {
  if (password.length < 6) return false;
  if (COMMON.has(password.toLowerCase())) return false;
  if (/^(.)\1*$/.test(password)) return false;
  let alphabet = 0;
  if (/[a-z]/.test(password)) alphabet += 26;
  if (/[A-Z]/.test(password)) alphabet += 26;
  if (/[0-9]/.test(password)) alphabet += 10;
  if (/[^A-Za-z0-9]/.test(password)) alphabet += 33;
  const distinct = new Set(password).size;
  return Math.pow(Math.min(alphabet, distinct * 4), password.length) >= 10_000;
}
