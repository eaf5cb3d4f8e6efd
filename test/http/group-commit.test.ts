import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { announceGroupCommit, groupCommit } from '../../src/domain/group-commit.js';
import type { Tx } from '../../src/domain/context.js';
import { startTestServer, storeKind, type TestServer } from '../support/server.js';

/**
 * The group commit (src/domain/group-commit.ts) on the store under test. Units submitted
 * together share one transaction; a failed batch is retried unit by unit, so a unit fails
 * only its own caller and leaves nothing behind; events go out after the commit. SQLite's
 * batch waits for units still being checked; PostgreSQL's starts at once.
 */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

/** A unit that renames a fixture user's row (a write we can read back) and records the transaction it ran in. */
function renameUnit(userId: number, name: string, seen: Tx[], fail = false) {
  return async (tx: Tx): Promise<string> => {
    seen.push(tx);
    await tx.db.updateTable('users').set({ full_name: name }).where('id', '=', userId).execute();
    tx.emit(t.realmId, { type: 'test_unit', name } as never, [userId]);
    if (fail) throw new Error(`unit ${name} failed`);
    return name;
  };
}

const fullName = async (id: number): Promise<string> =>
  (await t.app.ctx.db.selectFrom('users').select('full_name').where('id', '=', id).executeTakeFirstOrThrow()).full_name;

describe('group commit', () => {
  it('runs units submitted in the same turn in one transaction, and publishes their events after it', async () => {
    const seen: Tx[] = [];
    const hamlet = t.users.hamlet.id;
    const cordelia = t.users.cordelia.id;
    const events = await t.captureEvents(async () => {
      const out = await Promise.all([groupCommit(t.app.ctx, renameUnit(hamlet, 'Hamlet A', seen)), groupCommit(t.app.ctx, renameUnit(cordelia, 'Cordelia A', seen))]);
      expect(out).toEqual(['Hamlet A', 'Cordelia A']);
    });
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(seen[1]);
    expect(events.map((d) => [d.event.type, (d.event as unknown as { name: string }).name, d.userIds])).toEqual([
      ['test_unit', 'Hamlet A', [hamlet]],
      ['test_unit', 'Cordelia A', [cordelia]],
    ]);
    expect([await fullName(hamlet), await fullName(cordelia)]).toEqual(['Hamlet A', 'Cordelia A']);
  });

  it('retries a failed batch unit by unit: the failing unit rejects alone, writes nothing and sends no event', async () => {
    const seen: Tx[] = [];
    const hamlet = t.users.hamlet.id;
    const cordelia = t.users.cordelia.id;
    const before = await fullName(cordelia);
    let results: PromiseSettledResult<string>[] = [];
    const events = await t.captureEvents(async () => {
      results = await Promise.allSettled([
        groupCommit(t.app.ctx, renameUnit(hamlet, 'Hamlet B', seen)),
        groupCommit(t.app.ctx, renameUnit(cordelia, 'Cordelia B', seen, true)),
      ]);
    });
    expect(results[0]).toEqual({ status: 'fulfilled', value: 'Hamlet B' });
    expect(results[1]!.status).toBe('rejected');
    expect(((results[1] as PromiseRejectedResult).reason as Error).message).toBe('unit Cordelia B failed');
    // The batch (both units), then each unit alone.
    expect(seen).toHaveLength(4);
    expect(seen[0]).toBe(seen[1]);
    expect(new Set(seen).size).toBe(3);
    expect(events.map((d) => (d.event as unknown as { name: string }).name)).toEqual(['Hamlet B']);
    expect([await fullName(hamlet), await fullName(cordelia)]).toEqual(['Hamlet B', before]);
  });

  it(
    storeKind() === 'postgres'
      ? 'PostgreSQL: a batch starts at once, without waiting for a unit still being checked'
      : 'SQLite: a batch waits for a unit still being checked, which then joins it',
    async () => {
      // SQLite's wait is bounded (4 ms of wall time): a turn of the event loop slowed by other work
      // (the suite's other projects share the cores) leaves the run inconclusive, and it is repeated.
      for (let attempt = 0; attempt < 20; attempt++) {
        const seen: Tx[] = [];
        const released = announceGroupCommit(t.app.ctx);
        const first = groupCommit(t.app.ctx, renameUnit(t.users.hamlet.id, `Hamlet C${attempt}`, seen));
        // The announced unit finishes its checks a turn later.
        const start = performance.now();
        await turn();
        const slow = performance.now() - start > 2;
        const second = groupCommit(t.app.ctx, renameUnit(t.users.cordelia.id, `Cordelia C${attempt}`, seen), released);
        expect(await Promise.all([first, second])).toEqual([`Hamlet C${attempt}`, `Cordelia C${attempt}`]);
        expect(seen).toHaveLength(2);
        if (storeKind() === 'postgres') {
          expect(seen[0]).not.toBe(seen[1]);
          return;
        }
        if (slow) continue;
        expect(seen[0]).toBe(seen[1]);
        return;
      }
      throw new Error('every turn of the event loop took over 2 ms');
    },
  );
});

describe('group commit: a unit that writes with one statement', () => {
  it(
    storeKind() === 'postgres'
      ? 'PostgreSQL: runs alone, without BEGIN and COMMIT, and publishes its events after the statement'
      : 'SQLite: joins the batch of the units submitted with it',
    async () => {
      const seen: Tx[] = [];
      const stats = t.app.ctx.store.stats;
      const before = stats.queries;
      const events = await t.captureEvents(async () => {
        const out = await Promise.all([
          groupCommit(t.app.ctx, renameUnit(t.users.hamlet.id, 'Hamlet D', seen), undefined, { oneStatement: true }),
          groupCommit(t.app.ctx, renameUnit(t.users.cordelia.id, 'Cordelia D', seen), undefined, { oneStatement: true }),
        ]);
        expect(out).toEqual(['Hamlet D', 'Cordelia D']);
      });
      const statements = stats.queries - before;
      expect(events.map((d) => (d.event as unknown as { name: string }).name).sort()).toEqual(['Cordelia D', 'Hamlet D']);
      expect([await fullName(t.users.hamlet.id), await fullName(t.users.cordelia.id)]).toEqual(['Hamlet D', 'Cordelia D']);
      if (storeKind() === 'postgres') {
        // Two updates, nothing else: no BEGIN, no COMMIT.
        expect(statements).toBe(2);
        expect(seen[0]).not.toBe(seen[1]);
        expect(seen.map((tx) => tx.db.isTransaction)).toEqual([false, false]);
      } else {
        // BEGIN, two updates, COMMIT.
        expect(statements).toBe(4);
        expect(seen[0]).toBe(seen[1]);
        expect(seen[0]!.db.isTransaction).toBe(true);
      }
    },
  );

  it('that fails writes nothing and sends nothing; the other unit is unaffected', async () => {
    const seen: Tx[] = [];
    const before = await fullName(t.users.cordelia.id);
    let results: PromiseSettledResult<string>[] = [];
    const events = await t.captureEvents(async () => {
      results = await Promise.allSettled([
        groupCommit(t.app.ctx, renameUnit(t.users.hamlet.id, 'Hamlet E', seen), undefined, { oneStatement: true }),
        // A statement the database refuses (a missing table), after the unit queued its event.
        groupCommit(
          t.app.ctx,
          async (tx) => {
            tx.emit(t.realmId, { type: 'test_unit', name: 'never' } as never, [t.users.cordelia.id]);
            await sql`UPDATE no_such_table SET x = 1`.execute(tx.db);
            return 'never';
          },
          undefined,
          { oneStatement: true },
        ),
      ]);
    });
    expect(results[0]).toEqual({ status: 'fulfilled', value: 'Hamlet E' });
    expect(results[1]!.status).toBe('rejected');
    expect(events.map((d) => (d.event as unknown as { name: string }).name)).toEqual(['Hamlet E']);
    expect([await fullName(t.users.hamlet.id), await fullName(t.users.cordelia.id)]).toEqual(['Hamlet E', before]);
  });

  it.runIf(storeKind() === 'postgres')('PostgreSQL: a second statement is refused before it runs', async () => {
    const before = await fullName(t.users.cordelia.id);
    await expect(
      groupCommit(
        t.app.ctx,
        async (tx) => {
          await tx.db.updateTable('users').set({ full_name: 'Hamlet F' }).where('id', '=', t.users.hamlet.id).execute();
          await tx.db.updateTable('users').set({ full_name: 'Cordelia F' }).where('id', '=', t.users.cordelia.id).execute();
          return 'both';
        },
        undefined,
        { oneStatement: true },
      ),
    ).rejects.toThrow('oneStatement: the unit issued a second statement');
    expect(await fullName(t.users.cordelia.id)).toBe(before);
  });
});
