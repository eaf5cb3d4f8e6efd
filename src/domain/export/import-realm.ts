import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { removeAvatarFiles, writeAvatarFiles } from '../../store/avatar-files.js';
import { removeEmojiFiles, writeEmojiFiles } from '../../store/emoji-files.js';
import { sql } from 'kysely';
import type { AppCtx } from '../context.js';
import { readTarGz, type TarEntry } from '../../files/tar.js';
import { isValidKey } from '../../files/storage.js';
import { THUMBNAIL_DONE } from '../../store/attachments.js';
import { generateApiKey } from '../rules/credentials.js';
import { INTERNAL_REALM_STRING_ID, SYSTEM_BOTS } from '../actions/system-bots.js';
import { REALM_SETTING_DEFAULTS } from '../rules/realm-settings.js';
import { REALM_GROUP_SETTING_DEFAULTS } from '../rules/realm-group-settings.js';
import { USER_SETTING_DEFAULTS } from '../rules/user-settings.js';
import { topicKey } from '../rules/topics.js';
import { CHANNEL_PERMISSION_SETTINGS } from '../rules/channels.js';
import { tableColumns } from './export-realm.js';
import {
  ATTACHMENT_SPEC,
  fromZulip,
  MESSAGE_SPEC,
  REACTION_SPEC,
  REALM_TABLES,
  RECIPIENT_HUDDLE,
  RECIPIENT_PERSONAL,
  RECIPIENT_STREAM,
  USER_BOOLS,
  USER_MESSAGE_SPEC,
  USER_RENAME,
  type Row,
  type TableSpec,
} from './format.js';

/**
 * `parley import <tarball>`: loads an organization export in Zulip's format
 * (ours or Zulip's `./manage.py export`) into an EMPTY database, in one
 * transaction: a failure anywhere leaves nothing behind (files already put
 * into storage are removed again).
 *
 * Ids: the database is empty, so every object keeps the id it had in the
 * export (the remapping is the identity). This keeps the rendered HTML of
 * messages right as it is (mentions carry data-user-id, channel links and
 * upload URLs carry ids), so rendered_content is kept, not re-rendered.
 * PostgreSQL identity sequences are moved past the imported ids.
 *
 * As in Zulip's import, passwords are not carried (users set one with
 * `parley set-password` or the password-reset page) and every API key is new.
 */

export class ImportError extends Error {}

const fail = (msg: string): never => {
  throw new ImportError(msg);
};

function parseJson(entries: Map<string, Buffer>, name: string, required: boolean): any {
  const buf = entries.get(name);
  if (!buf) return required ? fail(`malformed export: ${name} is missing`) : undefined;
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch {
    return fail(`malformed export: ${name} is not valid JSON`);
  }
}

const list = (data: any, key: string): Row[] => {
  const v = data?.[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((r) => typeof r !== 'object' || r === null)) fail(`malformed export: ${key} is not a list of rows`);
  return v as Row[];
};

const num = (v: unknown, what: string): number => {
  const n = typeof v === 'string' && /^\d+(\.\d+)?$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) fail(`malformed export: ${what} is not a number`);
  return n as number;
};
const int = (v: unknown, what: string): number => Math.floor(num(v, what));
const intOrNull = (v: unknown, what: string): number | null => (v === null || v === undefined ? null : int(v, what));
const b = (v: unknown): number => (v === true || v === 1 ? 1 : 0);

export interface ImportSummary {
  readonly realmId: number;
  readonly counts: Record<string, number>;
}

/** Reads an export tarball; throws ImportError when it is not one. */
export function readExport(gz: Buffer): { files: Map<string, Buffer>; realm: any; messages: any[]; attachments: any; records: Row[] } {
  let raw: TarEntry[];
  try {
    raw = readTarGz(gz);
  } catch (e) {
    return fail(`malformed export: ${(e as Error).message}`);
  }
  const realmEntry = raw.find((e) => e.name === 'realm.json' || /^[^/]+\/realm\.json$/.test(e.name));
  if (!realmEntry) fail('malformed export: no realm.json in the tarball');
  const prefix = realmEntry!.name.slice(0, -'realm.json'.length);
  const files = new Map(raw.filter((e) => e.name.startsWith(prefix)).map((e) => [e.name.slice(prefix.length), e.data]));
  const realm = parseJson(files, 'realm.json', true);
  const messages = [...files.keys()]
    .filter((n) => /^messages-\d{6}\.json$/.test(n))
    .sort()
    .map((n) => parseJson(files, n, true));
  const attachments = parseJson(files, 'attachment.json', false) ?? { zerver_attachment: [] };
  const recordsRaw = parseJson(files, 'uploads/records.json', false) ?? [];
  if (!Array.isArray(recordsRaw)) fail('malformed export: uploads/records.json is not a list');
  if (list(realm, 'zerver_realm').length !== 1) fail('malformed export: zerver_realm must hold exactly one organization');
  if (list(realm, 'zerver_userprofile').length === 0) fail('malformed export: zerver_userprofile is empty');
  return { files, realm, messages, attachments, records: recordsRaw as Row[] };
}

/** Keeps only our table's columns; fills NOT NULL columns the file does not have. */
function shape(row: Row, cols: Set<string>, defaults: Row = {}): Row {
  const out: Row = {};
  for (const c of cols) {
    if (c === 'search_tsv') continue;
    if (row[c] !== undefined) out[c] = row[c];
    else if (defaults[c] !== undefined) out[c] = defaults[c];
  }
  return out;
}

async function insertAll(tx: any, table: string, rows: Row[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 200) await tx.insertInto(table).values(rows.slice(i, i + 200)).execute();
}

export async function importRealm(app: AppCtx, gz: Buffer): Promise<ImportSummary> {
  const { files, realm: data, messages: messageFiles, attachments, records } = readExport(gz);
  const existing = await app.db.selectFrom('realms').select('id').limit(1).execute();
  if (existing.length) fail('the database already holds an organization: import needs an empty database (a new PARLEY_DATABASE_URL or data directory)');

  const z = data.zerver_realm[0] as Row;
  const realmId = int(z.id, 'zerver_realm.id');
  const counts: Record<string, number> = {};
  const written: string[] = [];
  const emojiWrites: { stem: string; ext: string; data: Buffer; still: Buffer | null }[] = [];
  const writtenEmoji: string[] = [];
  const writtenAvatars: string[] = [];
  const userColumns = await tableColumns(app, 'users');

  // Settings: what the file says, for settings we know, kept when it differs from the default.
  const realmStored: Row = {};
  for (const [k, d] of Object.entries(REALM_SETTING_DEFAULTS)) if (z[k] !== undefined && typeof z[k] === typeof d && z[k] !== d) realmStored[k] = z[k];
  for (const k of Object.keys(REALM_GROUP_SETTING_DEFAULTS)) if (typeof z[k] === 'number') realmStored[k] = z[k];

  try {
    await app.db.transaction().execute(async (tx) => {
      const t = tx as any;
      await t
        .insertInto('realms')
        .values({ id: realmId, string_id: String(z.string_id ?? ''), name: String(z.name ?? ''), description: String(z.description ?? ''), date_created: int(z.date_created ?? 0, 'date_created'), deactivated: b(z.deactivated), settings: JSON.stringify(realmStored) })
        .execute();

      // Cross-realm system bots (Notification Bot, Welcome Bot, ...) go to the internal organization,
      // as ensureSystemBots keeps them, under the ids the export's messages use.
      const crossRealm = list(data, 'zerver_userprofile_crossrealm');
      const internalId = realmId + 1;
      await t
        .insertInto('realms')
        .values({ id: internalId, string_id: INTERNAL_REALM_STRING_ID, name: 'System bot realm', description: '', date_created: int(z.date_created ?? 0, 'date_created'), deactivated: 0, settings: '{}' })
        .execute();
      const known = new Map<string, string>(Object.values(SYSTEM_BOTS).map((b) => [b.email, b.fullName]));
      const bots = crossRealm.map((u) => {
        const email = String(u.email ?? '').toLowerCase();
        if (!email) fail('malformed export: a cross-realm bot has no email');
        return shape(
          { id: int(u.id, 'crossrealm.id'), realm_id: internalId, delivery_email: email, email_lower: email, full_name: known.get(email) ?? email.split('@')[0], password_hash: null, api_key: generateApiKey(), role: 400, is_active: 1, is_bot: 1, bot_type: 1, bot_owner_id: null, date_joined: int(z.date_created ?? 0, 'date_created'), timezone: '', avatar_source: 'G', avatar_file: null, avatar_version: 1, default_sending_stream_id: null, default_events_register_stream_id: null, default_all_public_streams: 0, is_imported_stub: 0, can_create_users: 0, tos_version: 0, settings: '{}' },
          userColumns,
        );
      });
      await insertAll(t, 'users', bots);
      counts.system_bots = bots.length;

      // Mirror dummies (users whose data stayed home) come back deactivated, marked as imported stubs.
      const profiles: Row[] = [...list(data, 'zerver_userprofile'), ...list(data, 'zerver_userprofile_mirrordummy').map((u) => ({ ...u, is_active: false, is_imported_stub: true }))];
      const later: { id: number; bot_owner_id: number | null; default_sending_stream_id: number | null; default_events_register_stream_id: number | null }[] = [];
      const userRows = profiles.map((p) => {
        const r = fromZulip({ rename: USER_RENAME, bools: USER_BOOLS }, p);
        const email = String(p.delivery_email ?? p.email ?? '');
        if (!email) fail('malformed export: a user has no email');
        const settings: Row = {};
        for (const [k, d] of Object.entries(USER_SETTING_DEFAULTS)) if (p[k] !== undefined && typeof p[k] === typeof d && p[k] !== d) settings[k] = p[k];
        const id = int(r.id, 'zerver_userprofile.id');
        later.push({ id, bot_owner_id: intOrNull(r.bot_owner_id, 'bot_owner'), default_sending_stream_id: intOrNull(r.default_sending_stream_id, 'default_sending_stream'), default_events_register_stream_id: intOrNull(r.default_events_register_stream_id, 'default_events_register_stream') });
        return shape(
          {
            ...r,
            id,
            realm_id: realmId,
            delivery_email: email,
            email_lower: email.toLowerCase(),
            password_hash: null,
            api_key: generateApiKey(),
            role: int(r.role ?? 400, 'role'),
            date_joined: int(r.date_joined ?? 0, 'date_joined'),
            // Avatar images are not carried: Gravatar until the user uploads one again.
            avatar_source: 'G',
            avatar_file: null,
            tos_version: typeof r.tos_version === 'number' ? r.tos_version : 0,
            timezone: typeof r.timezone === 'string' ? r.timezone : '',
            settings: JSON.stringify(settings),
            bot_owner_id: null,
            default_sending_stream_id: null,
            default_events_register_stream_id: null,
          },
          userColumns,
          { is_active: 1, is_bot: 0, bot_type: null, avatar_version: 1, is_imported_stub: 0, can_create_users: 0, full_name: '', default_all_public_streams: 0 },
        );
      });
      await insertAll(t, 'users', userRows);
      counts.users = userRows.length;

      // Groups: settings point at other groups, set once all exist.
      const named = new Map(list(data, 'zerver_namedusergroup').map((g) => [int(g.usergroup_ptr ?? g.id, 'usergroup_ptr'), g]));
      const groupSettings = ['can_add_members_group', 'can_join_group', 'can_leave_group', 'can_manage_group', 'can_mention_group', 'can_remove_members_group'];
      const groupRows = list(data, 'zerver_usergroup').map((g) => {
        const id = int(g.id, 'zerver_usergroup.id');
        const n = named.get(id);
        return {
          id,
          realm_id: realmId,
          name: n ? String(n.name) : null,
          description: n ? String(n.description ?? '') : '',
          is_system_group: b(n?.is_system_group),
          creator_id: intOrNull(n?.creator, 'creator'),
          date_created: int(n?.date_created ?? z.date_created ?? 0, 'date_created'),
          deactivated: b(n?.deactivated),
        };
      });
      await insertAll(t, 'user_groups', groupRows);
      counts.user_groups = groupRows.length;

      const systemGroups = new Map(groupRows.filter((g) => g.is_system_group === 1 && g.name !== null).map((g) => [g.name!, g.id]));
      const recipients = list(data, 'zerver_recipient').map((r) => ({ id: int(r.id, 'recipient.id'), type: int(r.type, 'recipient.type'), type_id: int(r.type_id, 'recipient.type_id') }));
      const recipientById = new Map(recipients.map((r) => [r.id, r]));
      // Direct-message groups: members from the key we write, else from Zulip's subscriptions to the group.
      const subs = list(data, 'zerver_subscription');
      const groupMembers = new Map<number, number[]>();
      for (const s of subs) {
        const r = recipientById.get(int(s.recipient, 'subscription.recipient'));
        if (r?.type === RECIPIENT_HUDDLE) groupMembers.set(r.type_id, [...(groupMembers.get(r.type_id) ?? []), int(s.user_profile, 'subscription.user_profile')]);
      }
      const dmGroupKey = new Map<number, string>();
      for (const g of list(data, 'zerver_huddle')) {
        const id = int(g.id, 'huddle.id');
        const key = typeof g.user_ids_key === 'string' ? g.user_ids_key : [...new Set(groupMembers.get(id) ?? [])].sort((x, y) => x - y).join(',');
        dmGroupKey.set(id, key);
        g.user_ids_key = key;
        g.group_size = g.group_size ?? key.split(',').length;
      }
      const recipientKey = new Map<number, { stream: number | null; dmKey: (sender: number) => string | null }>();
      for (const r of recipients) {
        if (r.type === RECIPIENT_STREAM) recipientKey.set(r.id, { stream: r.type_id, dmKey: () => null });
        else if (r.type === RECIPIENT_PERSONAL) recipientKey.set(r.id, { stream: null, dmKey: (s) => [...new Set([s, r.type_id])].sort((x, y) => x - y).join(',') });
        else recipientKey.set(r.id, { stream: null, dmKey: () => dmGroupKey.get(r.type_id) ?? fail('malformed export: a direct-message group is missing') });
      }

      const derive: Record<string, (row: Row) => Row | null> = {
        recipients: (r) => ({ ...r, realm_id: realmId }),
        channel_folders: (r) => ({ ...r, realm_id: realmId, name_lower: String(r.name).toLowerCase() }),
        channels: (r) => {
          // Exports from Zulip versions without a permission setting get the setting's default system group.
          const filled: Row = { ...r, realm_id: realmId, name_lower: String(r.name).toLowerCase(), topics_policy: r.topics_policy ?? 'inherit', is_recently_active: r.is_recently_active ?? 1 };
          for (const [name, spec] of Object.entries(CHANNEL_PERMISSION_SETTINGS)) {
            if (filled[`${name}_id`] !== undefined && filled[`${name}_id`] !== null) continue;
            const groupName = spec.defaultGroup === 'channel_creator' ? 'role:administrators' : spec.defaultGroup;
            filled[`${name}_id`] = systemGroups.get(groupName) ?? fail(`malformed export: the system group ${groupName} is missing`);
          }
          return filled;
        },
        subscriptions: (r) => {
          const rec = recipientById.get(int(r.recipient_id, 'subscription.recipient'));
          if (rec?.type !== RECIPIENT_STREAM) return null;
          return { ...r, realm_id: realmId, channel_id: rec.type_id };
        },
        direct_message_groups: (r) => ({ ...r, realm_id: realmId }),
        user_group_members: (r) => ({ ...r, realm_id: realmId }),
        user_group_subgroups: (r) => ({ ...r, realm_id: realmId }),
        custom_profile_field_values: (r) => ({ ...r, realm_id: realmId }),
        user_topics: (r) => ({ ...r, realm_id: realmId, topic_lower: String(r.topic_name).toLowerCase() }),
        realm_emoji: (r) => {
          // The image goes where our emoji route serves it; a name we would not write gets a new one.
          const fileName = String(r.file_name ?? '');
          const data = files.get(`emoji/${z.id}/emoji/images/${fileName}`);
          if (!data) return { ...r, realm_id: realmId };
          const m = /^(.*)\.(png|gif|webp|jpg|jpeg)$/i.exec(fileName);
          const ok = /^[0-9a-f]{16}\.(png|gif|webp|jpg)$/.test(fileName);
          const stem = ok ? m![1]! : randomBytes(8).toString('hex');
          const ext = ok ? m![2]! : (m?.[2]?.toLowerCase().replace('jpeg', 'jpg') ?? 'png');
          const still = files.get(`emoji/${z.id}/emoji/images/still/${(m?.[1] ?? fileName)}.png`) ?? null;
          emojiWrites.push({ stem, ext, data, still });
          return { ...r, realm_id: realmId, file_name: `${stem}.${ext}` };
        },
      };
      const insertSpec = async (spec: TableSpec, rows: Row[], extra: (r: Row) => Row | null = (r) => r): Promise<void> => {
        const cols = await tableColumns(app, spec.table);
        const shaped: Row[] = [];
        for (const raw of rows) {
          const r = extra(fromZulip(spec, raw));
          if (r === null) continue;
          if (cols.has('realm_id') && r.realm_id === undefined) r.realm_id = realmId;
          shaped.push(shape(r, cols));
        }
        await insertAll(t, spec.table, shaped);
        counts[spec.table] = shaped.length;
      };
      // Recipients first: channels point at them.
      for (const spec of REALM_TABLES) {
        const rows = list(data, spec.key);
        if (spec.table === 'recipients') {
          await insertAll(t, 'recipients', recipients.map((r) => ({ ...r, realm_id: realmId })));
          counts.recipients = recipients.length;
          continue;
        }
        await insertSpec(spec, rows, derive[spec.table]);
      }

      // Messages and their per-user rows.
      const clients = new Map(list(data, 'zerver_client').map((c) => [int(c.id, 'client.id'), String(c.name)]));
      const msgCols = await tableColumns(app, 'messages');
      const umCols = await tableColumns(app, 'user_messages');
      let nMsg = 0;
      let nUm = 0;
      for (const mf of messageFiles) {
        const msgs = list(mf, 'zerver_message').map((raw) => {
          const r = fromZulip(MESSAGE_SPEC, raw);
          const sender = int(r.sender_id, 'message.sender');
          const key = recipientKey.get(int(r.recipient_id, 'message.recipient')) ?? fail('malformed export: a message has an unknown recipient');
          const topic = String(r.topic ?? '');
          const client = typeof raw.sending_client === 'number' ? clients.get(raw.sending_client) : raw.sending_client;
          return shape(
            {
              ...r,
              id: int(r.id, 'message.id'),
              realm_id: realmId,
              sender_id: sender,
              topic,
              topic_key: topicKey(topic),
              stream_id: key.stream,
              dm_key: key.dmKey(sender),
              date_sent: int(r.date_sent, 'date_sent'),
              last_edit_time: intOrNull(r.last_edit_time, 'last_edit_time'),
              edit_history: typeof r.edit_history === 'string' || r.edit_history === null ? r.edit_history : JSON.stringify(r.edit_history),
              sending_client: typeof client === 'string' ? client : 'Internal',
              rendered_content: String(r.rendered_content ?? ''),
            },
            msgCols,
            { is_me_message: 0, has_link: 0, has_image: 0, has_attachment: 0 },
          );
        });
        await insertAll(t, 'messages', msgs);
        nMsg += msgs.length;
        const ums = list(mf, 'zerver_usermessage').map((raw) => {
          const r = fromZulip(USER_MESSAGE_SPEC, raw);
          return shape({ ...r, flags: int(r.flags ?? 0, 'flags_mask') }, umCols);
        });
        await insertAll(t, 'user_messages', ums);
        nUm += ums.length;
      }
      counts.messages = nMsg;
      counts.user_messages = nUm;
      await insertSpec(REACTION_SPEC, list(data, 'zerver_reaction'), (r) => ({ ...r, realm_id: realmId }));

      // Uploads: rows, message links, then the files themselves.
      const attRows = list(attachments, 'zerver_attachment');
      const images = new Map(list(attachments, 'zerver_imageattachment').map((i) => [String(i.path_id), i]));
      await insertSpec(ATTACHMENT_SPEC, attRows, (r) => {
        const pathId = String(r.path_id);
        if (!isValidKey(pathId)) fail(`malformed export: bad upload path ${pathId}`);
        if (!files.has(`uploads/${pathId}`)) fail(`malformed export: the file of upload ${pathId} is missing`);
        const img = images.get(pathId);
        return {
          ...r,
          realm_id: realmId,
          create_time: int(r.create_time, 'create_time'),
          content_type: r.content_type ?? 'application/octet-stream',
          image_width: img ? int(img.original_width_px, 'original_width_px') : null,
          image_height: img ? int(img.original_height_px, 'original_height_px') : null,
          image_frames: img ? int(img.frames ?? 1, 'frames') : null,
          // Zulip's rows say nothing of thumbnails: an image with facts gets them made below.
          thumbnail_state: img ? (typeof img.thumbnail_state === 'number' ? img.thumbnail_state : THUMBNAIL_DONE) : 0,
        };
      });
      const links = attRows.flatMap((a) => (Array.isArray(a.messages) ? a.messages : []).map((m) => ({ attachment_id: int(a.id, 'attachment.id'), message_id: int(m, 'attachment.messages') })));
      await insertAll(t, 'attachment_messages', links);
      for (const a of attRows) {
        const pathId = String(a.path_id);
        const data = files.get(`uploads/${pathId}`)!;
        const rec = records.find((x) => x.path === pathId || x.s3_path === pathId);
        written.push(pathId);
        await app.files.storage.put(pathId, Readable.from([data]), data.length, String(a.content_type ?? rec?.content_type ?? 'application/octet-stream'));
      }

      for (const e of emojiWrites) {
        writtenEmoji.push(`${e.stem}.${e.ext}`);
        await writeEmojiFiles(app.config.dataDir, realmId, e.stem, e.ext, e.data, e.still);
      }
      // Uploaded avatars: the default image and its medium size, under a new name.
      const avatarRecords = parseJson(files, 'avatars/records.json', false) ?? [];
      if (!Array.isArray(avatarRecords)) fail('malformed export: avatars/records.json is not a list');
      for (const rec of avatarRecords as Row[]) {
        const rel = String(rec.path ?? '');
        if (!/\.png$/.test(rel) || /-medium\.png$/.test(rel) || rec.user_profile_id === undefined) continue;
        const data = files.get(`avatars/${rel}`);
        if (!data) continue;
        const medium = files.get(`avatars/${rel.replace(/\.png$/, '-medium.png')}`) ?? data;
        const base = rel.split('/').pop()!.replace(/\.png$/, '');
        const stem = /^[0-9a-f]{32}$/.test(base) ? base : randomBytes(16).toString('hex');
        writtenAvatars.push(stem);
        await writeAvatarFiles(app.config.dataDir, realmId, stem, { default: data, medium });
        await t.updateTable('users').set({ avatar_source: 'U', avatar_file: stem }).where('id', '=', int(rec.user_profile_id, 'avatar user')).execute();
      }
      counts.avatars = writtenAvatars.length;
      counts.emoji_files = emojiWrites.length;

      // Forward references, now that everything exists.
      for (const u of later) {
        if (u.bot_owner_id === null && u.default_sending_stream_id === null && u.default_events_register_stream_id === null) continue;
        await t.updateTable('users').set({ bot_owner_id: u.bot_owner_id, default_sending_stream_id: u.default_sending_stream_id, default_events_register_stream_id: u.default_events_register_stream_id }).where('id', '=', u.id).execute();
      }
      for (const [id, n] of named) {
        const set: Row = {};
        for (const s of groupSettings) if (n[s] !== undefined) set[s] = intOrNull(n[s], s);
        if (Object.keys(set).length) await t.updateTable('user_groups').set(set).where('id', '=', id).execute();
      }

      if (app.store.dialect === 'postgres') {
        const tables = await app.db.introspection.getTables();
        for (const tb of tables) {
          if (!tb.columns.some((c) => c.name === 'id' && c.isAutoIncrementing)) continue;
          await sql`SELECT setval(pg_get_serial_sequence(${tb.name}, 'id'), (SELECT COALESCE(MAX(id), 0) + 1 FROM ${sql.table(tb.name)}), false)`.execute(tx);
        }
      }
    });
  } catch (e) {
    if (written.length) await app.files.storage.remove(written).catch(() => undefined);
    for (const f of writtenEmoji) await removeEmojiFiles(app.config.dataDir, realmId, f).catch(() => undefined);
    for (const stem of writtenAvatars) await removeAvatarFiles(app.config.dataDir, realmId, stem).catch(() => undefined);
    if (e instanceof ImportError) throw e;
    throw new ImportError(`import failed, nothing was written: ${(e as Error).message}`);
  }
  counts.uploads = written.length;
  // Thumbnails are made again from the originals (Zulip's import queues the same work).
  const thumbed = await app.db.selectFrom('attachments').selectAll().where('realm_id', '=', realmId).where('thumbnail_state', '=', THUMBNAIL_DONE).execute();
  let thumbs = 0;
  for (const row of thumbed) if (await app.files.rewriteThumbnails(row)) thumbs++;
  counts.thumbnails = thumbs;
  return { realmId, counts };
}
