import type Nodemailer from 'nodemailer';
import type { Transporter } from 'nodemailer';
import { lazyRequire } from '../lazy.js';
import type { AppCtx } from '../domain/context.js';
import type { Config } from '../config.js';

/**
 * Outgoing mail through nodemailer: MIME with a plain-text and (when given)
 * an HTML part, non-ASCII names and subjects encoded by nodemailer, STARTTLS
 * and AUTH from the PARLEY_SMTP_* settings, pooled connections and
 * time-outs. With no PARLEY_SMTP_URL the mail is logged instead (subject,
 * recipients and text, so an operator can act on a confirmation link).
 * Delivery failures are logged, never thrown: the action that triggered the
 * mail has already committed.
 */

export interface MailMessage {
  readonly to: readonly string[];
  readonly subject: string;
  readonly text: string;
  readonly html?: string;
}

// Loaded on the first mail actually sent over SMTP (most starts send none).
const nodemailer = lazyRequire<typeof Nodemailer>('nodemailer');

const transports = new WeakMap<Config, Transporter>();

/** nodemailer options from the configuration (exported for the tests of the mapping). */
export function transportOptions(config: Config): Record<string, unknown> {
  const url = new URL(config.smtpUrl!);
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new Error(`PARLEY_SMTP_URL: unsupported scheme ${url.protocol}`);
  const secure = url.protocol === 'smtps:';
  const opts: Record<string, unknown> = {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: Number(url.port) || (secure ? 465 : 587),
    secure,
    // smtp://: upgrade with STARTTLS when offered ("auto"), insist on it ("require"), or never ("never").
    requireTLS: !secure && config.smtpStartTls === 'require',
    ignoreTLS: !secure && config.smtpStartTls === 'never',
    tls: { rejectUnauthorized: config.smtpTlsVerify, servername: url.hostname },
    connectionTimeout: config.smtpTimeoutMs,
    greetingTimeout: config.smtpTimeoutMs,
    socketTimeout: config.smtpTimeoutMs,
    pool: config.smtpPoolSize > 0,
    maxConnections: Math.max(1, config.smtpPoolSize),
  };
  if (url.username) opts.auth = { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) };
  return opts;
}

function transport(config: Config): Transporter {
  let t = transports.get(config);
  if (!t) {
    t = nodemailer().createTransport(transportOptions(config) as never);
    transports.set(config, t);
  }
  return t;
}

export async function sendMail(app: AppCtx, m: MailMessage): Promise<void> {
  if (!app.config.smtpUrl) {
    app.log.info({ to: m.to, subject: m.subject, text: m.text }, 'mail (no PARLEY_SMTP_URL configured)');
    return;
  }
  try {
    await transport(app.config).sendMail({
      from: app.config.smtpFrom,
      to: [...m.to],
      subject: m.subject,
      text: m.text,
      ...(m.html !== undefined ? { html: m.html } : {}),
    });
  } catch (err) {
    app.log.error({ err, to: m.to, subject: m.subject }, 'could not send mail');
  }
}

/** Closes pooled SMTP connections (server shutdown). */
export function closeMail(config: Config): void {
  transports.get(config)?.close();
  transports.delete(config);
}
