import type { AppCtx } from '../domain/context.js';
import { sendSmtp, type MailMessage } from './smtp.js';

/**
 * Sends a mail through PARLEY_SMTP_URL, or logs it (subject, recipients and
 * body, so an operator can act on a confirmation link) when no SMTP server
 * is configured. Delivery failures are logged, never thrown: the action that
 * triggered the mail has already committed.
 */
export async function sendMail(app: AppCtx, m: Omit<MailMessage, 'from'>): Promise<void> {
  const msg: MailMessage = { ...m, from: app.config.smtpFrom };
  if (!app.config.smtpUrl) {
    app.log.info({ to: msg.to, subject: msg.subject, text: msg.text }, 'mail (no PARLEY_SMTP_URL configured)');
    return;
  }
  try {
    await sendSmtp(app.config.smtpUrl, msg);
  } catch (err) {
    app.log.error({ err, to: msg.to, subject: msg.subject }, 'could not send mail');
  }
}
