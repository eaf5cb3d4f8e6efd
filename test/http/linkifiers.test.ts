import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkifiersForRealm } from '../../src/domain/access/linkifiers.js';
import { parseLinkifierPattern, urlTemplateVariables } from '../../src/domain/rules/linkifier-validation.js';
import { topicLinks } from '../../src/domain/rules/markdown/index.js';
import { expectStateConsistent, getEvents, registerQueue, withoutIds } from '../support/events.js';
import { expectError, expectSuccess, startTestServer, type FixtureName, type Res, type TestServer } from '../support/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const ALL: FixtureName[] = ['owner', 'iago', 'shiva', 'hamlet', 'cordelia', 'othello', 'polonius', 'bot'];
const allIds = () => ALL.map((n) => t.users[n].id).sort((a, b) => a - b);
const rows = () => t.app.ctx.db.selectFrom('realm_linkifiers').selectAll().orderBy('id').execute();
const list = async () => expectSuccess(await t.get('/realm/linkifiers', {}, 'polonius')).linkifiers;
const add = (pattern: string, url_template: string, as: FixtureName = 'iago') => t.post('/realm/filters', { pattern, url_template }, as);
const CAPS = { notification_settings_null: false, linkifier_url_template: true };

async function refused(fn: () => Promise<Res>, msg: string, extra: Record<string, unknown> = {}, code = 'BAD_REQUEST'): Promise<void> {
  const before = await rows();
  let res!: Res;
  const deliveries = await t.captureEvents(async () => {
    res = await fn();
  });
  expectError(res, 400, code, msg, extra);
  expect(deliveries).toEqual([]);
  expect(await rows()).toEqual(before);
}

describe('linkifier validation (as Zulip\'s tests check it)', () => {
  it('refuses with the first error, and the errors dict by field', async () => {
    const tpl = 'https://realm.com/my_realm_filter/{id}';
    await refused(() => add('', tpl), 'This field cannot be blank.', {
      errors: { pattern: ['This field cannot be blank.'], __all__: ["Group 'id' in URL template is not present in linkifier pattern."] },
    });
    await refused(() => add('(foo', tpl), 'Bad regular expression: missing ): (foo', { errors: { __all__: ['Bad regular expression: missing ): (foo'] } });
    await refused(() => add('ZUL-(?P<id>\\d????)', tpl), 'Bad regular expression: bad repetition operator: ????', {
      errors: { __all__: ['Bad regular expression: bad repetition operator: ????'] },
    });
    await refused(() => add('ZUL-(?P<id>\\d+)', '$fgfg'), "Group 'id' in linkifier pattern is not present in URL template.", {
      errors: { __all__: ["Group 'id' in linkifier pattern is not present in URL template."] },
    });
    await refused(() => add('ZUL-(?P<id>\\d+)', 'https://realm.com/my_realm_filter/{hello}'), "Group 'hello' in URL template is not present in linkifier pattern.", {
      errors: { __all__: ["Group 'hello' in URL template is not present in linkifier pattern."] },
    });
    await refused(() => add('ZUL-(?P<id>\\d+)-(?P<hello>\\d+)', 'https://realm.com/{hello}'), "Group 'id' in linkifier pattern is not present in URL template.", {
      errors: { __all__: ["Group 'id' in linkifier pattern is not present in URL template."] },
    });
    await refused(() => add('#(?P<id>[123])', '{id'), 'Invalid URL template.', { errors: { url_template: ['Invalid URL template.'] } });
    await refused(() => add('#(?P<id>[123])', '   '), 'This field cannot be blank.', { errors: { url_template: ['This field cannot be blank.'] } });
    await refused(() => add('x(?=y)(?P<id>1)', tpl), 'Bad regular expression: invalid or unsupported Perl syntax: (?=', {
      errors: { __all__: ['Bad regular expression: invalid or unsupported Perl syntax: (?='] },
    });
    await refused(() => add('(?P<id>a)\\1', tpl), 'Bad regular expression: invalid escape sequence: \\1', {
      errors: { __all__: ['Bad regular expression: invalid escape sequence: \\1'] },
    });
    await refused(() => t.post('/realm/filters', { pattern: 'x' }, 'iago'), "Missing 'url_template' argument", { var_name: 'url_template' }, 'REQUEST_VARIABLE_MISSING');
  });

  it('patterns and templates Zulip accepts', async () => {
    const ok: [string, string][] = [
      ['ZUL-(?P<id>\\d+)', 'https://realm.com/my_realm_filter/#hashtag/{id}'],
      ['ZUL2-(?P<id>\\d+)', 'https://realm.com/my_realm_filter/?value={id}'],
      ['_code=(?P<id>[0-9a-zA-Z]+)', 'https://example.com/product/{id}/details'],
      ['PR (?P<id>[0-9]+)', 'https://example.com/~user/web#view_type=type&model=model&action=12345&id={id}'],
      ['!(?P<id>[0-9]+)', 'https://realm.com/index.pl?Action=AgentTicketZoom;TicketNumber={id}'],
      ['ZULZ-(?P<hello>\\d+)-(?P<world>\\d+)', 'https://realm.com/my_realm_filter/{hello}/{world}'],
      ['ZUL-URL-(?P<id>\\d+)', 'https://example.com/%ba/{id}'],
      ['(?P<org>[a-zA-Z0-9_-]+)/(?P<repo>[a-zA-Z0-9_-]+)#(?P<id>[0-9]+)', 'https://github.com/{org}/{repo}/issue/{id}'],
      [
        'FOO_(?P<id>[a-f]{5});(?P<zone>[a-f]);(?P<domain>[a-z]+);(?P<location>[a-z]+);(?P<name>[a-z]{2,8});(?P<chapter>[0-9]{2,3});(?P<fragment>[a-z]{2,8})',
        'https://zone_{zone}{.domain}.net/ticket{/location}{/id}{?name,chapter}{#fragment:5}',
      ],
    ];
    for (const [pattern, tpl] of ok) expect(typeof expectSuccess(await add(pattern, tpl)).id).toBe('number');
    for (const u of ['https://example.com/%%(foo)s', 'https://example.com{/foo,bar,baz}', 'https://example.com/{?foo*}', 'https://example.com/{+foo,bar}', '$not_a_url$', 'https://example.com/foo[bar]']) {
      expect(urlTemplateVariables(u)).not.toBeNull();
    }
    for (const u of ['https://example.com/{foo', 'https://example.com/{{}', 'https://example.com/{//foo}', 'https://example.com/{bar++}']) expect(urlTemplateVariables(u)).toBeNull();
    expect(parseLinkifierPattern('(?i)#(?P<id>[0-9]+)(?:x|y)?')).toEqual(['id']);
    await refused(() => add('ZUL-(?P<id>\\d+)', 'https://other.example/{id}'), 'Realm filter with this Realm and Pattern already exists.', {
      errors: { __all__: ['Realm filter with this Realm and Pattern already exists.'] },
    });
  });
});

describe('linkifiers: endpoints and events', () => {
  it('administrators only', async () => {
    await refused(() => add('#(?P<id>1)', 'https://x/{id}', 'hamlet'), 'Must be an organization administrator', {}, 'UNAUTHORIZED_PRINCIPAL');
    await refused(() => t.patch('/realm/filters/1', { pattern: 'a', url_template: 'b' }, 'shiva'), 'Must be an organization administrator', {}, 'UNAUTHORIZED_PRINCIPAL');
    await refused(() => t.delete('/realm/filters/1', {}, 'polonius'), 'Must be an organization administrator', {}, 'UNAUTHORIZED_PRINCIPAL');
    await refused(() => t.patch('/realm/linkifiers', { ordered_linkifier_ids: [] }, 'hamlet'), 'Must be an organization administrator', {}, 'UNAUTHORIZED_PRINCIPAL');
  });

  it('create, update, remove and reorder: each sends the whole ordered list to every active user', async () => {
    for (const r of await rows()) expectSuccess(await t.delete(`/realm/filters/${r.id}`, {}, 'iago'));
    let res!: Res;
    let deliveries = await t.captureEvents(async () => {
      res = await add('  #(?P<id>[0-9]+) ', ' https://trac.example.com/ticket/{id} ');
    });
    const a = expectSuccess(res).id as number;
    expect(res.body).toEqual({ result: 'success', msg: '', id: a });
    const first = { pattern: '#(?P<id>[0-9]+)', url_template: 'https://trac.example.com/ticket/{id}', id: a };
    expect(deliveries.map((d) => ({ event: d.event, userIds: [...d.userIds].sort((x, y) => x - y) }))).toEqual([
      { event: { type: 'realm_linkifiers', realm_linkifiers: [first] }, userIds: allIds() },
    ]);
    const b = expectSuccess(await add('GH-(?P<id>[0-9]+)', 'https://github.com/zulip/zulip/issues/{id}')).id as number;
    const second = { pattern: 'GH-(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}', id: b };
    expect(await list()).toEqual([first, second]);

    deliveries = await t.captureEvents(async () =>
      expect((await t.patch(`/realm/filters/${a}`, { pattern: '#(?P<num>[0-9a-f]{40})', url_template: 'https://trac.example.com/commit/{num}' }, 'iago')).body).toEqual({ result: 'success', msg: '' }),
    );
    const changed = { pattern: '#(?P<num>[0-9a-f]{40})', url_template: 'https://trac.example.com/commit/{num}', id: a };
    expect(deliveries.map((d) => d.event)).toEqual([{ type: 'realm_linkifiers', realm_linkifiers: [changed, second] }]);
    await refused(() => t.patch(`/realm/filters/${b + 100}`, { pattern: 'x', url_template: 'y' }, 'iago'), 'Linkifier not found.');
    await refused(() => t.patch(`/realm/filters/${a}`, { pattern: 'ZUL-(?P<id>\\d????)', url_template: 'https://x/{id}' }, 'iago'), 'Bad regular expression: bad repetition operator: ????', {
      errors: { __all__: ['Bad regular expression: bad repetition operator: ????'] },
    });

    await refused(() => t.patch('/realm/linkifiers', { ordered_linkifier_ids: [b, b, a] }, 'iago'), 'The ordered list must not contain duplicated linkifiers');
    await refused(() => t.patch('/realm/linkifiers', { ordered_linkifier_ids: [b] }, 'iago'), 'The ordered list must enumerate all existing linkifiers exactly once');
    await refused(() => t.patch('/realm/linkifiers', { ordered_linkifier_ids: [b, a + b + 1] }, 'iago'), 'The ordered list must enumerate all existing linkifiers exactly once');
    deliveries = await t.captureEvents(() => t.patch('/realm/linkifiers', { ordered_linkifier_ids: [b, a] }, 'iago'));
    expect(deliveries.map((d) => d.event)).toEqual([{ type: 'realm_linkifiers', realm_linkifiers: [second, changed] }]);
    expect(await list()).toEqual([second, changed]);
    // A new one goes last.
    const c = expectSuccess(await add('JIRA-(?P<id>[0-9]+)', 'https://jira.example/{id}')).id as number;
    expect((await list()).map((l: { id: number }) => l.id)).toEqual([b, a, c]);

    await refused(() => t.delete(`/realm/filters/${c + 1}`, {}, 'iago'), 'Linkifier not found.');
    // Beyond a 32-bit row id: the same error, never a database error (found by the fuzz test).
    await refused(() => t.delete('/realm/filters/4294967297', {}, 'iago'), 'Linkifier not found.');
    await refused(() => t.patch('/realm/filters/4294967297', { pattern: 'x', url_template: 'y' }, 'iago'), 'Linkifier not found.');
    deliveries = await t.captureEvents(async () => expect((await t.delete(`/realm/filters/${c}`, {}, 'iago')).body).toEqual({ result: 'success', msg: '' }));
    expect(deliveries.map((d) => d.event)).toEqual([{ type: 'realm_linkifiers', realm_linkifiers: [second, changed] }]);
  });

  it('/register: realm_linkifiers for clients with linkifier_url_template, [] otherwise; realm_filters always []', async () => {
    const modern = await registerQueue(t, 'hamlet', { fetch_event_types: ['realm_linkifiers', 'realm_filters'], event_types: ['realm_linkifiers'], client_capabilities: CAPS });
    expect(modern.realm_linkifiers).toEqual(await list());
    expect(modern.realm_filters).toEqual([]);
    const old = await registerQueue(t, 'hamlet', { fetch_event_types: ['realm_linkifiers', 'realm_filters'], event_types: ['realm_linkifiers'] });
    expect(old.realm_linkifiers).toEqual([]);
    expect(old.realm_filters).toEqual([]);
    const id = expectSuccess(await add('T-(?P<id>[0-9]+)', 'https://t.example/{id}')).id;
    expect(withoutIds(await getEvents(t, 'hamlet', modern.queue_id))).toEqual([{ type: 'realm_linkifiers', realm_linkifiers: await list() }]);
    // Old clients know only URL format strings: no event for them.
    expect(await getEvents(t, 'hamlet', old.queue_id)).toEqual([]);
    expectSuccess(await t.delete(`/realm/filters/${id}`, {}, 'iago'));
  });

  for (const [label, caps] of [
    ['with linkifier_url_template', CAPS],
    ['without it', undefined],
  ] as const) {
    it(`stale state + events == fresh state (${label})`, async () => {
      const params = { fetch_event_types: ['realm_linkifiers', 'realm_filters'], event_types: ['realm_linkifiers'], ...(caps ? { client_capabilities: caps } : {}) };
      await expectStateConsistent(
        t,
        'othello',
        async () => {
          const id = expectSuccess(await add(`C${label.length}-(?P<id>[0-9]+)`, 'https://c.example/{id}')).id;
          expectSuccess(await t.patch(`/realm/filters/${id}`, { pattern: `D${label.length}-(?P<id>[0-9]+)`, url_template: 'https://d.example/{id}' }, 'iago'));
        },
        params,
      );
    });
  }

  it('linkifiersForRealm feeds the renderer and topic_links', async () => {
    const ls = await linkifiersForRealm(t.app.ctx.db, t.realmId);
    expect(ls.map((l) => l.id)).toEqual((await list()).map((l: { id: number }) => l.id));
    expect(topicLinks('see GH-123', ls)).toEqual([{ text: 'GH-123', url: 'https://github.com/zulip/zulip/issues/123' }]);
    const before = t.app.ctx.store.stats.queries;
    await linkifiersForRealm(t.app.ctx.db, t.realmId);
    expect(t.app.ctx.store.stats.queries).toBe(before);
  });
});
