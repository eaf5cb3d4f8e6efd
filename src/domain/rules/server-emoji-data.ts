import { createHash } from 'node:crypto';
import { emojiCodepointToName, emojiNamesForCode } from './emoji.js';

/**
 * The Unicode emoji data clients download from `server_emoji_data_url`
 * (Zulip's static/generated/emoji/emoji_api.json, feature level 140): one
 * object, {"code_to_names": {code: [canonical name, ...aliases]}}, codes
 * "unqualified" (FE0F dropped) as in our emoji table. The mobile app decodes
 * it as ServerEmojiData (zulip-flutter lib/api/route/realm.dart) for its
 * emoji picker and autocomplete. Built once from the same table the Markdown
 * renderer and reactions use; its content hash is part of the URL so the
 * file can be cached for ever.
 */

function build(): { body: string; hash: string } {
  const codeToNames: Record<string, string[]> = {};
  for (const code of [...emojiCodepointToName().keys()].sort()) codeToNames[code] = emojiNamesForCode(code);
  const body = JSON.stringify({ code_to_names: codeToNames });
  return { body, hash: createHash('sha256').update(body).digest('hex').slice(0, 20) };
}

let built: { body: string; hash: string } | undefined;
const data = (): { body: string; hash: string } => (built ??= build());

/** The JSON document served at serverEmojiDataPath(). */
export const serverEmojiDataBody = (): string => data().body;

/** Path (under the realm URL) of the emoji data, with its content hash, as Zulip's emoji_api.<hash>.json. */
export const serverEmojiDataPath = (): string => `/static/generated/emoji/emoji_api.${data().hash}.json`;
