import { message, pythonJsonDumps, type Integration } from './types.js';

/**
 * Zulip's generic JSON integration (zerver/webhooks/json/view.py): any JSON
 * body, posted as a ```json code block of json.dumps(payload, indent=2)
 * under the topic "JSON".
 */
export const jsonIntegration: Integration = {
  name: 'json',
  displayName: 'JSON',
  ownParams: [],
  events: [],
  handle: ({ payload }) => message('JSON', '```json\n' + pythonJsonDumps(payload) + '\n```'),
};
