import { fakeEmailDomain } from '../config.js';
import type { AppCtx } from './context.js';
import type { PresenceEntry } from './rules/presence.js';
import { userSettings } from './rules/user-settings.js';
import { apiEmail } from '../presenters/user.js';
import {
  allPresences,
  allPresenceSequences,
  presenceDirectoryRows,
  upsertPresences,
  upsertPresenceSequences,
  type PresenceRow,
} from '../store/presence.js';

/**
 * Presence served from memory. Clients report presence every minute and
 * read everyone's with the same request, so it is the most frequent request
 * a chat server gets: here it costs no SQL at all. Each realm's entries and
 * sequence live in memory; changes are written through to the database in
 * batches (every FLUSH_INTERVAL_MS and on shutdown) and read back at start.
 * A crash loses at most one interval of presence, which clients resend
 * within a minute anyway.
 *
 * What presence needs about users (API email, date_joined, bot, active,
 * presence_enabled) is a per-realm directory read with one query and
 * dropped whenever anything writes to the users table (the same write
 * watcher as the auth cache) or a user event is published after commit.
 *
 * Several processes (PARLEY_REDIS_URL) share presence through Redis
 * (scale/redis-presence.ts): update ids come from one sequence there, and
 * every read or report first asks Redis for the entries changed since this
 * process last looked (current()), so a report to one process is seen by
 * the very next request to any other, with the same update ids and events
 * as in one process. Each process writes through the entries it stored.
 */

export const FLUSH_INTERVAL_MS = 5000;

export interface PresenceUser {
  readonly id: number;
  /** The API email (the real one only when visible to everyone). */
  readonly email: string;
  readonly dateJoined: number;
  readonly isBot: boolean;
  readonly botType: number | null;
  readonly isActive: boolean;
  readonly presenceEnabled: boolean;
}

export interface PresenceDirectory {
  readonly byId: ReadonlyMap<number, PresenceUser>;
  /** Lower-cased API email -> user. */
  readonly byEmail: ReadonlyMap<string, PresenceUser>;
  /** Active users, bots included (presence events go to all of them). */
  readonly activeIds: readonly number[];
}

/** Presence held in Redis for several processes (scale/redis-presence.ts). */
export interface SharedPresenceChanges {
  /** The realm's last update id. */
  readonly seq: number;
  /** Entries whose update id is above the one asked about. */
  readonly entries: readonly (readonly [number, PresenceEntry])[];
}
export interface SharedPresence {
  /** null: the realm has no shared state yet (seed it). */
  changes(realmId: number, since: number): Promise<SharedPresenceChanges | null>;
  /** Stores the entry under the realm's next update id; null when the realm has no shared state. */
  put(realmId: number, userId: number, entry: PresenceEntry): Promise<number | null>;
  /** Creates the realm's shared state unless some process already did. */
  seed(realmId: number, seq: number, entries: readonly (readonly [number, PresenceEntry])[]): Promise<void>;
}

export interface RealmPresence {
  /** Last update id handed out (Zulip's PresenceSequence). */
  seq: number;
  readonly entries: Map<number, PresenceEntry>;
}

/** Event types after which the directory may be stale (user changes, committed). */
const USER_EVENTS = new Set(['realm_user', 'realm_bot', 'user_settings']);

export class PresenceState {
  private readonly realms = new Map<number, RealmPresence>();
  private readonly dirtyUsers = new Map<number, number>();
  private readonly dirtyRealms = new Set<number>();
  private readonly dirs = new Map<number, PresenceDirectory>();
  private dirVersion = 0;
  private restored: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private stopped = false;
  private shared: SharedPresence | undefined;
  /** Shared mode: every update id up to this one is in the replica, per realm. */
  private readonly synced = new Map<number, number>();
  /** The clock presence uses (unix seconds); tests move it. */
  now: () => number = () => Date.now() / 1000;

  constructor(private readonly app: AppCtx) {
    app.store.userWrites.onWrite(() => this.invalidateDirectory());
    this.unsubscribe = app.bus.subscribe((deliveries) => {
      if (deliveries.some((d) => USER_EVENTS.has(d.event.type))) this.invalidateDirectory();
    });
  }

  /** Reads the flushed state once (at start, or on first use). */
  ready(): Promise<void> {
    this.restored ??= this.restore();
    return this.restored;
  }

  private async restore(): Promise<void> {
    const [rows, seqs] = await Promise.all([allPresences(this.app.db), allPresenceSequences(this.app.db)]);
    for (const s of seqs) this.realm(s.realm_id).seq = Math.max(this.realm(s.realm_id).seq, s.last_update_id);
    for (const r of rows) {
      const realm = this.realm(r.realm_id);
      // Reports that arrived before the restore finished are newer: keep them.
      if (realm.entries.has(r.user_id)) continue;
      realm.entries.set(r.user_id, { lastActive: r.last_active_time, lastConnected: r.last_connected_time, lastUpdateId: r.last_update_id });
      realm.seq = Math.max(realm.seq, r.last_update_id);
    }
  }

  /** Shares presence with other processes (Redis mode; called once, before any request). */
  share(shared: SharedPresence): void {
    this.shared = shared;
  }

  /**
   * The realm's presence as every process sees it: in one process, the
   * memory state; with Redis, the replica after taking in what other
   * processes stored since this one last looked (one round trip).
   */
  async current(realmId: number): Promise<RealmPresence> {
    await this.ready();
    if (this.shared) await this.sync(realmId, this.shared);
    return this.realm(realmId);
  }

  /**
   * The highest update id up to which this process holds every entry: an answer never reports a
   * presence_last_update_id above it. In one process that is the realm's last id. With Redis, a
   * report stored here can take an id above ids another process handed out that this replica has
   * not taken in yet (until its next sync); a client told that id would never be sent those.
   */
  complete(realmId: number): number {
    return this.shared ? (this.synced.get(realmId) ?? -1) : this.realm(realmId).seq;
  }

  private async sync(realmId: number, shared: SharedPresence): Promise<void> {
    const since = this.synced.get(realmId);
    let got = await shared.changes(realmId, since ?? -1);
    if (got === null) {
      // No process has shared this realm yet (or Redis lost its data): seed it from what the database had.
      const realm = this.realm(realmId);
      await shared.seed(realmId, realm.seq, [...realm.entries]);
      got = await shared.changes(realmId, -1);
      if (got === null) throw new Error('presence: the shared state disappeared while seeding');
      this.replace(realmId, got);
      return;
    }
    if (since === undefined || got.seq < since) {
      // First look, or Redis was reset and reseeded: its state replaces the replica.
      if (since !== undefined) got = (await shared.changes(realmId, -1)) ?? got;
      this.replace(realmId, got);
      return;
    }
    const realm = this.realm(realmId);
    for (const [userId, e] of got.entries) {
      const cur = realm.entries.get(userId);
      if (!cur || cur.lastUpdateId < e.lastUpdateId) realm.entries.set(userId, e);
    }
    if (got.seq > realm.seq) realm.seq = got.seq;
    if (got.seq > (this.synced.get(realmId) ?? -1)) this.synced.set(realmId, got.seq);
  }

  /** A new replica object (cached views compare its entries map, so they recompute). */
  private replace(realmId: number, got: SharedPresenceChanges): void {
    this.realms.set(realmId, { seq: got.seq, entries: new Map(got.entries.map(([id, e]) => [id, { ...e }])) });
    this.synced.set(realmId, got.seq);
  }

  /** Starts the periodic write-through (the HTTP server's onReady). */
  async start(): Promise<void> {
    await this.ready();
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => void this.flush().catch((err) => this.app.log.error({ err }, 'presence flush failed')), FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stops the timer and writes what is pending (the HTTP server's onClose, before the store closes). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    await this.flush();
  }

  realm(realmId: number): RealmPresence {
    let r = this.realms.get(realmId);
    if (!r) this.realms.set(realmId, (r = { seq: 0, entries: new Map() }));
    return r;
  }

  /** Stores a changed entry under the realm's next update id; returns that id. */
  async put(realmId: number, userId: number, entry: PresenceEntry): Promise<number> {
    if (this.shared) {
      let id = await this.shared.put(realmId, userId, entry);
      if (id === null) {
        await this.sync(realmId, this.shared);
        id = await this.shared.put(realmId, userId, entry);
        if (id === null) throw new Error('presence: no shared state for the realm');
      }
      entry.lastUpdateId = id;
      const realm = this.realm(realmId);
      const cur = realm.entries.get(userId);
      if (!cur || cur.lastUpdateId < id) realm.entries.set(userId, entry);
      if (id > realm.seq) realm.seq = id;
      if (this.synced.get(realmId) === id - 1) this.synced.set(realmId, id);
    } else {
      const realm = this.realm(realmId);
      entry.lastUpdateId = ++realm.seq;
      realm.entries.set(userId, entry);
    }
    this.dirtyUsers.set(userId, realmId);
    this.dirtyRealms.add(realmId);
    return entry.lastUpdateId;
  }

  /** Number of entries waiting to be written. */
  get pending(): number {
    return this.dirtyUsers.size;
  }

  /** Writes every changed entry and sequence in one transaction; failures stay pending. */
  flush(): Promise<void> {
    const run = this.flushing.then(() => this.flushOnce());
    this.flushing = run.catch(() => {});
    return run;
  }

  private async flushOnce(): Promise<void> {
    if (this.dirtyUsers.size === 0 && this.dirtyRealms.size === 0) return;
    const users = [...this.dirtyUsers];
    const realmIds = [...this.dirtyRealms];
    this.dirtyUsers.clear();
    this.dirtyRealms.clear();
    const rows: PresenceRow[] = [];
    for (const [userId, realmId] of users) {
      const e = this.realm(realmId).entries.get(userId);
      if (e) rows.push({ user_id: userId, realm_id: realmId, last_active_time: e.lastActive, last_connected_time: e.lastConnected, last_update_id: e.lastUpdateId });
    }
    const seqs = realmIds.map((id) => ({ realm_id: id, last_update_id: this.realm(id).seq }));
    try {
      await this.app.db.transaction().execute(async (trx) => {
        await upsertPresenceSequences(trx, seqs);
        await upsertPresences(trx, rows);
      });
    } catch (err) {
      // Put them back unless a newer change already did.
      for (const [userId, realmId] of users) if (!this.dirtyUsers.has(userId)) this.dirtyUsers.set(userId, realmId);
      for (const id of realmIds) this.dirtyRealms.add(id);
      throw err;
    }
  }

  private invalidateDirectory(): void {
    this.dirVersion++;
    this.dirs.clear();
  }

  /** The realm's users as presence sees them (cached; one query after users change). */
  async directory(realmId: number): Promise<PresenceDirectory> {
    const cached = this.dirs.get(realmId);
    if (cached) return cached;
    const version = this.dirVersion;
    const rows = await presenceDirectoryRows(this.app.db, realmId);
    const domain = fakeEmailDomain(this.app.config);
    const byId = new Map<number, PresenceUser>();
    const byEmail = new Map<string, PresenceUser>();
    const activeIds: number[] = [];
    for (const r of rows) {
      const u: PresenceUser = {
        id: r.id,
        email: apiEmail(r, domain),
        dateJoined: r.date_joined,
        isBot: r.is_bot === 1,
        botType: r.bot_type,
        isActive: r.is_active === 1,
        presenceEnabled: userSettings(r.settings).presence_enabled !== false,
      };
      byId.set(u.id, u);
      byEmail.set(u.email.toLowerCase(), u);
      if (u.isActive) activeIds.push(u.id);
    }
    const dir: PresenceDirectory = { byId, byEmail, activeIds };
    // A write that raced with the read may not be in it: use it, but do not keep it.
    if (version === this.dirVersion) this.dirs.set(realmId, dir);
    return dir;
  }
}

const states = new WeakMap<AppCtx, PresenceState>();

/** The process's presence state for this app (created on first use). */
export function presenceOf(app: AppCtx): PresenceState {
  let s = states.get(app);
  if (!s) states.set(app, (s = new PresenceState(app)));
  return s;
}
