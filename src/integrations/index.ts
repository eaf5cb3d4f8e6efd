import { alertmanagerIntegration } from './alertmanager.js';
import { githubIntegration } from './github.js';
import { gitlabIntegration } from './gitlab.js';
import { grafanaIntegration } from './grafana.js';
import { jsonIntegration } from './json.js';
import { sentryIntegration } from './sentry.js';
import type { Integration } from './types.js';

/** Every incoming-webhook integration; each becomes POST /api/v1/external/{name}. */
export const INTEGRATIONS: readonly Integration[] = [jsonIntegration, githubIntegration, gitlabIntegration, grafanaIntegration, alertmanagerIntegration, sentryIntegration];
