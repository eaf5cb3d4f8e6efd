import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAKE_EMAIL_DOMAIN, loadConfig } from '../../src/config.js';
import { expectSuccess, startTestServer, type TestServer } from '../support/server.js';

/**
 * Issue 18 regression: on a server whose host cannot form an email address
 * (an IP address, such as the default 127.0.0.1), POST /bots failed with "Bad
 * name or username". As Zulip's get_fake_email_domain, bot and dummy emails
 * then use the fake email domain (PARLEY_FAKE_EMAIL_DOMAIN); a host that can
 * form an address (a name, or localhost) is used as is.
 */

const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

async function botEmailOn(overrides: Parameters<typeof startTestServer>[0]): Promise<{ email: string; botDomain: string }> {
  const t = await startTestServer(overrides);
  servers.push(t);
  const body = expectSuccess(await t.post('/bots', { full_name: 'Deploy Bot', short_name: 'deploy' }, 'hamlet'));
  const bot = expectSuccess(await t.get(`/users/${body.user_id}`, {}, 'hamlet')).user;
  const reg = expectSuccess(await t.post('/register', { fetch_event_types: ['realm'] }, 'hamlet'));
  return { email: bot.email, botDomain: reg.realm_bot_domain };
}

describe('the fake email domain', () => {
  it('an IP host (the default 127.0.0.1) falls back to PARLEY_FAKE_EMAIL_DOMAIN, default parley.invalid', async () => {
    const { email, botDomain } = await botEmailOn({ externalHost: '127.0.0.1:9991', fakeEmailDomain: DEFAULT_FAKE_EMAIL_DOMAIN });
    expect(email).toBe('deploy-bot@parley.invalid');
    expect(botDomain).toBe('parley.invalid');
  });

  it('a configured fallback is used for an IP host', async () => {
    const { email } = await botEmailOn({ externalHost: '10.1.2.3', fakeEmailDomain: 'bots.example.org' });
    expect(email).toBe('deploy-bot@bots.example.org');
  });

  it('localhost and a host name form addresses themselves', async () => {
    expect((await botEmailOn({ externalHost: 'localhost:9991' })).email).toBe('deploy-bot@localhost');
    expect((await botEmailOn({ externalHost: 'chat.example.com' })).email).toBe('deploy-bot@chat.example.com');
  });

  it('PARLEY_FAKE_EMAIL_DOMAIN is read from the environment and must be a domain', () => {
    expect(loadConfig({}).fakeEmailDomain).toBe('parley.invalid');
    expect(loadConfig({ PARLEY_FAKE_EMAIL_DOMAIN: 'fake.example.net' }).fakeEmailDomain).toBe('fake.example.net');
    expect(() => loadConfig({ PARLEY_FAKE_EMAIL_DOMAIN: '127.0.0.1' })).toThrow('PARLEY_FAKE_EMAIL_DOMAIN: "127.0.0.1" is not a valid email domain');
  });
});
