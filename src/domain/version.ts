/** The Zulip API level Parley implements (api.md describes up to feature level 496). */
export const ZULIP_FEATURE_LEVEL = 496;
export const ZULIP_VERSION = '12.0-dev+parley';
export const ZULIP_MERGE_BASE = '12.0-dev';
export const PARLEY_VERSION = '0.1.0';
