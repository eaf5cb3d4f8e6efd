import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Writable } from 'node:stream';
import { sendMail, transportOptions } from '../../src/mail/send.js';
import { loadConfig } from '../../src/config.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

/** Delivery through nodemailer to an SMTP server started on loopback. */
describe('outgoing mail', () => {
  let smtp: TestSmtp;
  let t: TestServer;
  beforeAll(async () => {
    smtp = await startTestSmtp({ users: { 'mailer@parley.test': 'sécret pass' } });
    t = await startTestServer({
      smtpUrl: `smtp://mailer%40parley.test:s%C3%A9cret%20pass@127.0.0.1:${smtp.port}`,
      smtpFrom: 'Parley Ünïcode <noreply@zulip.testserver>',
      smtpStartTls: 'require',
      smtpTlsVerify: false,
      smtpTimeoutMs: 5000,
    });
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('STARTTLS, AUTH, non-ASCII names and subject, a text and an HTML part', async () => {
    await sendMail(t.app.ctx, { to: ['Zoë <zoe@example.com>'], subject: 'Grüße aus Parley ✓', text: 'line one\n.hidden dot\nend', html: '<p>Hello <b>Zoë</b></p>' });
    const [m] = await smtp.waitFor(1);
    expect(m!.secure).toBe(true);
    expect(m!.user).toBe('mailer@parley.test');
    expect(m!.envelopeFrom).toBe('noreply@zulip.testserver');
    expect(m!.envelopeTo).toEqual(['zoe@example.com']);
    expect(m!.parsed.subject).toBe('Grüße aus Parley ✓');
    expect(m!.parsed.from?.value).toEqual([{ address: 'noreply@zulip.testserver', name: 'Parley Ünïcode' }]);
    expect(m!.parsed.to && !Array.isArray(m!.parsed.to) ? m!.parsed.to.value : null).toEqual([{ address: 'zoe@example.com', name: 'Zoë' }]);
    expect(m!.parsed.text).toBe('line one\n.hidden dot\nend');
    expect(m!.parsed.html).toBe('<p>Hello <b>Zoë</b></p>');
    // The subject travels encoded: never raw 8-bit in a header.
    expect(m!.raw).toMatch(/^Subject: =\?UTF-8\?/m);
    expect(m!.raw).toMatch(/^Content-Type: multipart\/alternative/m);
  });

  it('a refused login is logged, not thrown', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'error' }, new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }));
    const ctx = { ...t.app.ctx, log, config: { ...t.app.ctx.config, smtpUrl: `smtp://mailer%40parley.test:wrong@127.0.0.1:${smtp.port}` } };
    const before = smtp.mails.length;
    await sendMail(ctx, { to: ['a@example.com'], subject: 'x', text: 'y' });
    expect(smtp.mails.length).toBe(before);
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['could not send mail']);
  });

  it('without PARLEY_SMTP_URL the mail is logged with its text', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'info' }, new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }));
    const ctx = { ...t.app.ctx, log, config: { ...t.app.ctx.config, smtpUrl: undefined } };
    await sendMail(ctx, { to: ['a@example.com'], subject: 'Hello', text: 'the link' });
    const entry = JSON.parse(lines[0]!);
    expect([entry.msg, entry.to, entry.subject, entry.text]).toEqual(['mail (no PARLEY_SMTP_URL configured)', ['a@example.com'], 'Hello', 'the link']);
  });

  it('maps the PARLEY_SMTP_* settings onto the transport', () => {
    const c = loadConfig({
      PARLEY_SMTP_URL: 'smtps://u%40x:p@mail.example.com',
      PARLEY_SMTP_TIMEOUT_MS: '1234',
      PARLEY_SMTP_POOL_SIZE: '0',
      PARLEY_SMTP_TLS_VERIFY: '0',
    });
    expect(transportOptions(c)).toEqual({
      host: 'mail.example.com',
      port: 465,
      secure: true,
      requireTLS: false,
      ignoreTLS: false,
      tls: { rejectUnauthorized: false, servername: 'mail.example.com' },
      connectionTimeout: 1234,
      greetingTimeout: 1234,
      socketTimeout: 1234,
      pool: false,
      maxConnections: 1,
      auth: { user: 'u@x', pass: 'p' },
    });
    const plain = transportOptions(loadConfig({ PARLEY_SMTP_URL: 'smtp://relay:2525', PARLEY_SMTP_STARTTLS: 'never' }));
    expect([plain.port, plain.secure, plain.ignoreTLS, plain.requireTLS, plain.pool, plain.maxConnections, plain.auth]).toEqual([2525, false, true, false, true, 2, undefined]);
  });
});
