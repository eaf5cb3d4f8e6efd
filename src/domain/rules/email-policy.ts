import type { AppCtx } from '../context.js';
import { realmDomains } from '../../state/user-extras.js';
import { realmById } from '../../store/realms.js';
import { realmSettings } from './realm-settings.js';
import { emailDomain, isDisposableEmailDomain } from './users.js';

/**
 * Zulip's realm email validator for an address joining or moving into the
 * realm: with emails_restricted_to_domains, no "+" in the local part and a
 * domain (or, where allowed, a subdomain) from the realm's list; otherwise,
 * when the realm refuses them, no disposable addresses. Returns Zulip's
 * message, or null when the address is allowed.
 */
export async function realmEmailProblem(app: AppCtx, realmId: number, email: string): Promise<string | null> {
  const realm = await realmById(app.db, realmId);
  if (!realm) return 'Outside your domain.';
  const settings = realmSettings(realm.settings);
  const domain = emailDomain(email);
  if (!settings.emails_restricted_to_domains) {
    return settings.disallow_disposable_email_addresses && isDisposableEmailDomain(domain) ? 'Please use your real email address.' : null;
  }
  if (email.slice(0, email.lastIndexOf('@')).includes('+')) return 'Email addresses containing + are not allowed.';
  const allowed = await realmDomains(app, realmId);
  const ok = allowed.some((d) => domain === d.domain || (d.allow_subdomains && domain.endsWith('.' + d.domain)));
  return ok ? null : 'Outside your domain.';
}
