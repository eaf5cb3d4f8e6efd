import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { getEvents, registerQueue, withoutIds } from '../support/events.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const words = async (who: 'hamlet' | 'cordelia' | 'othello') => expectSuccess(await t.get('/users/me/alert_words', {}, who)).alert_words;

describe('alert words', () => {
  it('GET starts empty; POST adds (stripped, case-insensitively distinct) and returns the list; the user alone gets the event', async () => {
    expect(await words('hamlet')).toEqual([]);
    const deliveries = await t.captureEvents(async () => {
      const body = expectSuccess(await t.post('/users/me/alert_words', { alert_words: ['  Lunch ', 'meeting', '', 'LUNCH', 'deploy'] }, 'hamlet'));
      expect(body).toEqual({ result: 'success', msg: '', alert_words: ['LUNCH', 'meeting', 'deploy'] });
    });
    expect(deliveries).toEqual([{ realmId: t.realmId, userIds: [t.users.hamlet.id], event: { type: 'alert_words', alert_words: ['LUNCH', 'meeting', 'deploy'] } }]);
    // Words already present in any case are not added again; the event is sent all the same.
    const again = await t.captureEvents(async () => {
      expect(expectSuccess(await t.post('/users/me/alert_words', { alert_words: ['lunch', 'Release'] }, 'hamlet')).alert_words).toEqual(['LUNCH', 'meeting', 'deploy', 'Release']);
    });
    expect(again.map((d) => d.event)).toEqual([{ type: 'alert_words', alert_words: ['LUNCH', 'meeting', 'deploy', 'Release'] }]);
    expect(await words('hamlet')).toEqual(['LUNCH', 'meeting', 'deploy', 'Release']);
    expect(await words('cordelia')).toEqual([]);
  });

  it('DELETE removes case-insensitively and returns the list', async () => {
    const q = await registerQueue(t, 'othello', { event_types: ['alert_words'] });
    expectSuccess(await t.post('/users/me/alert_words', { alert_words: ['One', 'Two', 'Three'] }, 'othello'));
    const body = expectSuccess(await t.delete('/users/me/alert_words', { alert_words: ['one', 'THREE', 'absent'] }, 'othello'));
    expect(body).toEqual({ result: 'success', msg: '', alert_words: ['Two'] });
    expect(withoutIds(await getEvents(t, 'othello', q.queue_id, -1))).toEqual([
      { type: 'alert_words', alert_words: ['One', 'Two', 'Three'] },
      { type: 'alert_words', alert_words: ['Two'] },
    ]);
    expect(await words('othello')).toEqual(['Two']);
  });

  it('/register carries alert_words', async () => {
    const body = await registerQueue(t, 'othello', { fetch_event_types: ['alert_words'] });
    expect(body.alert_words).toEqual(['Two']);
  });

  it('errors change nothing and send nothing', async () => {
    const cases: [string, Record<string, unknown>, number, string, string, Record<string, unknown>?][] = [
      ['POST', {}, 400, 'REQUEST_VARIABLE_MISSING', "Missing 'alert_words' argument", { var_name: 'alert_words' }],
      ['POST', { alert_words: 'lunch' }, 400, 'BAD_REQUEST', 'alert_words is not valid JSON'],
      ['POST', { alert_words: '"lunch"' }, 400, 'BAD_REQUEST', 'alert_words is not a list'],
      ['POST', { alert_words: [1] }, 400, 'BAD_REQUEST', 'alert_words[0] is not a string'],
      ['POST', { alert_words: ['ok', 'x'.repeat(101)] }, 400, 'BAD_REQUEST', 'alert_words[1] is too long (limit: 100 characters)'],
      ['DELETE', {}, 400, 'REQUEST_VARIABLE_MISSING', "Missing 'alert_words' argument", { var_name: 'alert_words' }],
      ['DELETE', { alert_words: '{}' }, 400, 'BAD_REQUEST', 'alert_words is not a list'],
    ];
    for (const [method, params, status, code, msg, extra] of cases) {
      let res!: Awaited<ReturnType<TestServer['post']>>;
      const deliveries = await t.captureEvents(async () => {
        res = await t.request(method, '/users/me/alert_words', params, 'cordelia');
      });
      expectError(res, status, code, msg, extra ?? {});
      expect(deliveries).toEqual([]);
    }
    expect(await words('cordelia')).toEqual([]);
    expectError(await t.get('/users/me/alert_words', {}, null), 401, 'UNAUTHORIZED', 'Not logged in: API authentication or user session required');
  });
});
