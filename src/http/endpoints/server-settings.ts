import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_GUESSES, PASSWORD_MIN_LENGTH } from '../../domain/actions/signup.js';
import { createHash } from 'node:crypto';
import { realmUrl } from '../../config.js';
import { realmSettings } from '../../domain/rules/realm-settings.js';
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from '../../domain/version.js';
import { defaultRealm } from '../../store/realms.js';
import { endpoint } from '../endpoint.js';

/**
 * GET /server_settings ignores credentials entirely: the official Python
 * client calls it first, with Basic auth attached, even when the key is wrong.
 */
export const getServerSettings = endpoint({
  method: 'GET',
  path: '/server_settings',
  auth: 'none',
  params: {},
  handler: async ({ app }) => {
    const realm = await defaultRealm(app.db);
    const settings = realmSettings(realm?.settings ?? '{}');
    const url = realmUrl(app.config);
    const password = settings.password_auth_enabled;
    return {
      authentication_methods: {
        password,
        dev: false,
        email: password,
        ldap: false,
        remoteuser: false,
        github: false,
        azuread: false,
        gitlab: false,
        apple: false,
        google: false,
        saml: false,
        'openid connect': false,
      },
      external_authentication_methods: [],
      zulip_feature_level: ZULIP_FEATURE_LEVEL,
      zulip_version: ZULIP_VERSION,
      zulip_merge_base: ZULIP_MERGE_BASE,
      push_notifications_enabled: false,
      is_incompatible: false,
      email_auth_enabled: password,
      require_email_format_usernames: true,
      realm_url: url,
      realm_uri: url,
      realm_name: realm?.name ?? app.config.realmName,
      realm_icon: `https://secure.gravatar.com/avatar/${createHash('md5').update(realm?.string_id ?? '').digest('hex')}?d=identicon&version=1`,
      realm_description: realm?.description ?? '',
      realm_web_public_access_enabled: Boolean(settings.enable_spectator_access),
      // The sign-up and password-reset forms' rules (Zulip's settings.PASSWORD_MIN_LENGTH etc.).
      password_min_length: PASSWORD_MIN_LENGTH,
      password_min_guesses: PASSWORD_MIN_GUESSES,
      password_max_length: PASSWORD_MAX_LENGTH,
    };
  },
});
