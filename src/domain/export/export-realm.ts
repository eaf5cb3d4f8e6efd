import { createHash, randomBytes, randomInt } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { avatarDir } from '../../store/avatar-files.js';
import { emojiDir } from '../../store/emoji-files.js';
import type { AppCtx } from '../context.js';
import { apiEmail } from '../../presenters/user.js';
import { fakeEmailDomain } from '../../config.js';
import { realmSettings } from '../rules/realm-settings.js';
import { REALM_GROUP_SETTING_DEFAULTS } from '../rules/realm-group-settings.js';
import { USER_SETTING_DEFAULTS, userSettings } from '../rules/user-settings.js';
import { EMAIL_VISIBLE_NOBODY } from '../rules/users.js';
import { CHANNEL_COLORS } from '../rules/channels.js';
import { bufferSource, type TarSource } from '../../files/tar.js';
import { systemBotRows } from '../actions/system-bots.js';
import {
  ATTACHMENT_SPEC,
  EXPORT_FULL_WITH_CONSENT,
  MESSAGE_SPEC,
  REACTION_SPEC,
  REALM_TABLES,
  RECIPIENT_HUDDLE,
  toZulip,
  USER_BOOLS,
  USER_DROP,
  USER_MESSAGE_SPEC,
  USER_RENAME,
  type Row,
} from './format.js';

/**
 * Builds an organization export (format.ts) from the database and the
 * upload storage. What a public export holds follows Zulip's rules: channel
 * metadata, users and subscriptions of everyone, but messages only from
 * public (not invite-only) channels, so no private-channel messages and no
 * direct messages. A full export with consent adds, for each user who
 * allowed it (allow_private_data_export), the private messages they have:
 * a UserMessage row goes in when its message is in a public channel or its
 * user consented; a message goes in when one of its rows does.
 */

const BATCH = 1000;

function floatTimes(row: Row, cols: readonly string[]): Row {
  for (const c of cols) if (typeof row[c] === 'number') row[c] = Number(row[c]);
  return row;
}

async function tableRows(app: AppCtx, table: string, realmId: number): Promise<Row[]> {
  const db = app.db as any;
  const hasRealm = await hasColumn(app, table, 'realm_id');
  let q = db.selectFrom(table).selectAll();
  if (hasRealm) q = q.where('realm_id', '=', realmId);
  else if (await hasColumn(app, table, 'user_id')) q = q.where('user_id', 'in', (eb: any) => eb.selectFrom('users').select('id').where('realm_id', '=', realmId));
  const rows = (await q.execute()) as Row[];
  return rows;
}

/** Our columns of each table, read once per database (the importer keeps only real columns). */
const columnCache = new WeakMap<object, Map<string, Set<string>>>();
export async function tableColumns(app: Pick<AppCtx, 'db'>, table: string): Promise<Set<string>> {
  let byTable = columnCache.get(app.db);
  if (!byTable) {
    byTable = new Map();
    for (const t of await app.db.introspection.getTables()) {
      if (t.schema && t.schema !== 'public') continue;
      byTable.set(t.name, new Set(t.columns.map((c) => c.name)));
    }
    columnCache.set(app.db, byTable);
  }
  return byTable.get(table) ?? new Set();
}
async function hasColumn(app: AppCtx, table: string, col: string): Promise<boolean> {
  return (await tableColumns(app, table)).has(col);
}

export interface ExportResult {
  /** The tarball's files; uploads are read from storage only when the tarball is written. */
  readonly entries: TarSource[];
  readonly stats: Record<string, number>;
}

export async function buildRealmExport(app: AppCtx, realmId: number, exportType: number, dirName: string): Promise<ExportResult> {
  const db = app.db;
  const realm = await db.selectFrom('realms').selectAll().where('id', '=', realmId).executeTakeFirstOrThrow();
  const domain = fakeEmailDomain(app.config);
  const users = await db.selectFrom('users').selectAll().where('realm_id', '=', realmId).orderBy('id').execute();
  // Whose private data goes out: nobody's in a public export; in a full export with consent, the
  // users who allowed it and the bots they own (Zulip's exportable_user_ids).
  const consenting = new Set(users.filter((u) => exportType === EXPORT_FULL_WITH_CONSENT && !u.is_bot && userSettings(u.settings).allow_private_data_export === true).map((u) => u.id));
  for (const u of users) if (u.is_bot && u.bot_owner_id !== null && consenting.has(u.bot_owner_id)) consenting.add(u.id);
  const data: Record<string, Row[]> = {};

  const settings = realmSettings(realm.settings);
  const groupSettings: Row = {};
  for (const k of Object.keys(REALM_GROUP_SETTING_DEFAULTS)) if (typeof (settings as Row)[k] === 'number') groupSettings[k] = (settings as Row)[k];
  data.zerver_realm = [
    {
      ...settings,
      ...groupSettings,
      id: realm.id,
      string_id: realm.string_id,
      name: realm.name,
      description: realm.description,
      date_created: Number(realm.date_created),
      deactivated: realm.deactivated === 1,
    },
  ];
  // Zulip's custom_fetch_user_profile: a user whose private data stays home keeps only the
  // organization's default settings (but their email visibility); one who hides their email
  // even from administrators gets a dummy address; in a full export with consent an active
  // non-consenting user becomes a mirror dummy (deactivated; may sign up again to reclaim it),
  // in a public export only the hidden-email ones do.
  data.zerver_userprofile = [];
  data.zerver_userprofile_mirrordummy = [];
  for (const u of users) {
    const settings = userSettings(u.settings);
    const row: Row = {
      ...settings,
      ...toZulip({ rename: USER_RENAME, drop: USER_DROP, bools: USER_BOOLS }, u as Row),
      email: apiEmail(u, domain),
      date_joined: Number(u.date_joined),
      is_mirror_dummy: false,
    };
    if (!consenting.has(u.id)) {
      Object.assign(row, USER_SETTING_DEFAULTS, { email_address_visibility: settings.email_address_visibility });
      if (exportType === EXPORT_FULL_WITH_CONSENT && u.is_active === 1) Object.assign(row, { is_mirror_dummy: true, is_active: false });
      if (settings.email_address_visibility === EMAIL_VISIBLE_NOBODY) {
        row.delivery_email = `exported-user-${randomBytes(16).toString('hex')}@${domain}`;
        if (exportType !== EXPORT_FULL_WITH_CONSENT) Object.assign(row, { is_mirror_dummy: true, is_active: false });
      }
    }
    (row.is_mirror_dummy ? data.zerver_userprofile_mirrordummy : data.zerver_userprofile).push(row);
  }
  // The system bots live in the internal organization, as Zulip's cross-realm bots do; their messages reference these ids.
  data.zerver_userprofile_crossrealm = (await systemBotRows(app)).map((b) => ({ id: b.id, email: b.delivery_email, email_domain: b.delivery_email.split('@')[1] ?? '' }));

  // Groups: every group is a UserGroup; named ones also a NamedUserGroup (Zulip's split).
  const groups = await db.selectFrom('user_groups').selectAll().where('realm_id', '=', realmId).orderBy('id').execute();
  data.zerver_usergroup = groups.map((g) => ({ id: g.id, realm: g.realm_id }));
  data.zerver_namedusergroup = groups
    .filter((g) => g.name !== null)
    .map((g) => ({
      usergroup_ptr: g.id,
      realm_for_sharding: g.realm_id,
      name: g.name,
      description: g.description,
      is_system_group: g.is_system_group === 1,
      creator: g.creator_id,
      date_created: Number(g.date_created),
      deactivated: g.deactivated === 1,
      can_add_members_group: g.can_add_members_group,
      can_join_group: g.can_join_group,
      can_leave_group: g.can_leave_group,
      can_manage_group: g.can_manage_group,
      can_mention_group: g.can_mention_group,
      can_remove_members_group: g.can_remove_members_group,
    }));

  const recipients = await db.selectFrom('recipients').selectAll().where('realm_id', '=', realmId).execute();
  for (const spec of REALM_TABLES) {
    let rows = await tableRows(app, spec.table, realmId);
    if (spec.privateBy) rows = rows.filter((r) => consenting.has(Number(r[spec.privateBy!])));
    data[spec.key] = rows.map((r, i) => {
      const z = toZulip(spec, r);
      if (!('id' in z)) z.id = i + 1;
      return z;
    });
  }
  // Zulip's custom_process_subscription_in_realm_config: others' subscriptions keep only what
  // makes them work; their colors are picked anew, the rest takes the defaults.
  data.zerver_subscription = data.zerver_subscription!.map((z) =>
    consenting.has(Number(z.user_profile))
      ? z
      : { id: z.id, user_profile: z.user_profile, recipient: z.recipient, active: z.active, color: CHANNEL_COLORS[randomInt(CHANNEL_COLORS.length)], is_muted: false, pin_to_top: false, desktop_notifications: null, audible_notifications: null, push_notifications: null, email_notifications: null, wildcard_mentions_notify: null },
  );
  // Zulip keeps the members of a direct-message group as Subscription rows to its recipient.
  const groupRecipients = new Map(recipients.filter((r) => r.type === RECIPIENT_HUDDLE).map((r) => [r.type_id, r.id]));
  let nextSubId = Math.max(0, ...data.zerver_subscription!.map((s) => Number(s.id))) + 1;
  for (const g of data.zerver_huddle!) {
    const key = String(g.user_ids_key);
    g.huddle_hash = createHash('sha1').update(key).digest('hex');
    const rid = groupRecipients.get(Number(g.id));
    if (rid === undefined) continue;
    for (const uid of key.split(',').map(Number)) {
      data.zerver_subscription!.push({ id: nextSubId++, user_profile: uid, recipient: rid, active: true, is_muted: false, pin_to_top: false, color: '#c2c2c2' });
    }
  }
  data.zerver_client = [];
  data.zerver_realmauditlog = [];
  data.zerver_realmuserdefault = [];
  data.zerver_defaultstreamgroup = [];
  data.zerver_userpresence = [];
  data.zerver_userstatus = [];

  // Messages: public channels always; private ones through consenting users' rows.
  const publicRecipients = new Set(
    (await db.selectFrom('channels').select('recipient_id').where('realm_id', '=', realmId).where('invite_only', '=', 0).execute()).map((c) => c.recipient_id),
  );
  const clients = new Map<string, number>();
  const messages: Row[] = [];
  const userMessages: Row[] = [];
  const messageIds = new Set<number>();
  let umId = 1;
  let after = 0;
  for (;;) {
    const batch = await db.selectFrom('messages').selectAll().where('realm_id', '=', realmId).where('id', '>', after).orderBy('id').limit(BATCH).execute();
    if (batch.length === 0) break;
    after = batch[batch.length - 1]!.id;
    const ums = await db.selectFrom('user_messages').selectAll().where('message_id', 'in', batch.map((m) => m.id)).orderBy('message_id').orderBy('user_id').execute();
    const byMsg = new Map<number, typeof ums>();
    for (const um of ums) {
      const list = byMsg.get(um.message_id) ?? [];
      list.push(um);
      byMsg.set(um.message_id, list);
    }
    for (const m of batch) {
      const isPublic = publicRecipients.has(m.recipient_id);
      const rows = (byMsg.get(m.id) ?? []).filter((um) => isPublic || consenting.has(um.user_id));
      if (!isPublic && rows.length === 0) continue;
      messageIds.add(m.id);
      let client = clients.get(m.sending_client);
      if (client === undefined) {
        client = clients.size + 1;
        clients.set(m.sending_client, client);
      }
      const z = floatTimes(toZulip(MESSAGE_SPEC, m as Row), ['date_sent', 'last_edit_time']);
      z.sending_client = client;
      z.type = 1;
      z.is_channel_message = m.stream_id !== null;
      z.rendered_content_version = 1;
      messages.push(z);
      for (const um of rows) userMessages.push({ ...toZulip(USER_MESSAGE_SPEC, um as Row), id: umId++ });
    }
  }
  data.zerver_client = [...clients].map(([name, id]) => ({ id, name }));

  const exportedIds = [...messageIds];
  const reactions: Row[] = [];
  for (let i = 0; i < exportedIds.length; i += BATCH) {
    const rows = await db.selectFrom('reactions').selectAll().where('message_id', 'in', exportedIds.slice(i, i + BATCH)).orderBy('id').execute();
    reactions.push(...rows.map((r) => toZulip(REACTION_SPEC, r as Row)));
  }
  data.zerver_reaction = reactions;

  // Uploads: those linked from an exported message (Zulip's rule for exports).
  const links = exportedIds.length
    ? await (async () => {
        const out: { attachment_id: number; message_id: number }[] = [];
        for (let i = 0; i < exportedIds.length; i += BATCH) {
          out.push(...(await db.selectFrom('attachment_messages').selectAll().where('message_id', 'in', exportedIds.slice(i, i + BATCH)).execute()));
        }
        return out;
      })()
    : [];
  const linked = new Map<number, number[]>();
  for (const l of links) linked.set(l.attachment_id, [...(linked.get(l.attachment_id) ?? []), l.message_id]);
  const linkedRows = linked.size ? await db.selectFrom('attachments').selectAll().where('id', 'in', [...linked.keys()]).orderBy('id').execute() : [];
  const attachments: typeof linkedRows = [];
  const entries: TarSource[] = [];
  const records: Row[] = [];
  for (const a of linkedRows) {
    // An upload whose file is gone is left out whole (row and file), so the tarball stays importable.
    const f = await app.files.storage.open(a.path_id);
    if (!f) continue;
    f.stream.destroy();
    attachments.push(a);
    entries.push({
      name: `${dirName}/uploads/${a.path_id}`,
      size: f.size,
      open: async () => {
        const again = await app.files.storage.open(a.path_id);
        if (!again) throw new Error(`upload ${a.path_id} vanished during the export`);
        return again.stream;
      },
    });
    records.push({
      path: a.path_id,
      s3_path: a.path_id,
      realm_id: a.realm_id,
      user_profile_id: a.owner_id,
      user_profile_email: apiEmail(users.find((u) => u.id === a.owner_id) ?? { id: a.owner_id, settings: '{}', is_bot: 0, delivery_email: '' }, domain),
      content_type: a.content_type,
      size: Number(a.size),
      last_modified: Number(a.create_time),
    });
  }
  const attachmentRows = attachments.map((a) => ({ ...floatTimes(toZulip(ATTACHMENT_SPEC, a as Row), ['create_time']), messages: (linked.get(a.id) ?? []).sort((x, y) => x - y), scheduled_messages: [] }));

  // Avatars and custom emoji, in Zulip's layout: avatars/<realm>/<name>.png, emoji/<realm>/emoji/images/<file>.
  const readOrNull = async (file: string): Promise<Buffer | null> => fs.readFile(file).catch(() => null);
  const avatarRecords: Row[] = [];
  for (const u of users) {
    if (u.avatar_source !== 'U' || !u.avatar_file) continue;
    const dir = avatarDir(app.config.dataDir, realmId);
    for (const suffix of ['', '-medium']) {
      const data = await readOrNull(path.join(dir, `${u.avatar_file}${suffix}.png`));
      if (!data) continue;
      const rel = `${realmId}/${u.avatar_file}${suffix}.png`;
      entries.push(bufferSource(`${dirName}/avatars/${rel}`, data));
      avatarRecords.push({ path: rel, s3_path: rel, realm_id: realmId, user_profile_id: u.id, user_profile_email: apiEmail(u, domain), content_type: 'image/png', size: data.length, last_modified: Number(u.date_joined) });
    }
  }
  const emojiRecords: Row[] = [];
  for (const e of await db.selectFrom('realm_emoji').selectAll().where('realm_id', '=', realmId).orderBy('id').execute()) {
    const dir = emojiDir(app.config.dataDir, realmId);
    const stem = e.file_name.replace(/\.[a-z]+$/, '');
    for (const [file, rel] of [
      [path.join(dir, e.file_name), `${realmId}/emoji/images/${e.file_name}`],
      ...(e.is_animated === 1 ? [[path.join(dir, 'still', `${stem}.png`), `${realmId}/emoji/images/still/${stem}.png`]] : []),
    ] as [string, string][]) {
      const data = await readOrNull(file);
      if (!data) continue;
      entries.push(bufferSource(`${dirName}/emoji/${rel}`, data));
      emojiRecords.push({ id: e.id, realm_id: realmId, author: e.author_id, file_name: e.file_name, name: e.name, deactivated: e.deactivated === 1, path: rel, s3_path: rel });
    }
  }

  // Zulip leaves ImageAttachment out and thumbnails again on import; we keep the facts (and whether thumbnails exist).
  const imageRows = attachments
    .filter((a) => a.image_width !== null)
    .map((a) => ({ id: a.id, realm: a.realm_id, path_id: a.path_id, original_width_px: a.image_width, original_height_px: a.image_height, frames: a.image_frames ?? 1, content_type: a.content_type, thumbnail_metadata: [], thumbnail_state: a.thumbnail_state }));
  const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v, null, 1));
  entries.unshift(
    bufferSource(`${dirName}/realm.json`, json(data)),
    bufferSource(`${dirName}/messages-000001.json`, json({ zerver_message: messages, zerver_usermessage: userMessages })),
    bufferSource(`${dirName}/attachment.json`, json({ zerver_attachment: attachmentRows, zerver_imageattachment: imageRows })),
    bufferSource(`${dirName}/uploads/records.json`, json(records)),
    bufferSource(`${dirName}/avatars/records.json`, json(avatarRecords)),
    bufferSource(`${dirName}/emoji/records.json`, json(emojiRecords)),
    bufferSource(`${dirName}/realm_icons/records.json`, json([])),
  );
  const stats = { users: users.length, messages: messages.length, user_messages: userMessages.length, reactions: reactions.length, uploads: records.length, avatars: avatarRecords.length, emoji: emojiRecords.length };
  entries.push(bufferSource(`${dirName}/stats.json`, json(stats)));
  return { entries, stats };
}
