/**
 * Per-user settings with their defaults. A user row stores only the settings
 * that were explicitly set (JSON), so "already edited" is known per setting
 * (PATCH /settings target_users with skip_if_already_edited).
 */
export const USER_SETTING_DEFAULTS: Record<string, boolean | number | string | null> = {
  email_address_visibility: 1,
};

export function userSettings(json: string): Record<string, boolean | number | string | null> {
  return { ...USER_SETTING_DEFAULTS, ...(JSON.parse(json) as Record<string, boolean | number | string | null>) };
}
