import { badRequest } from '../domain/errors.js';
import { at, list, str, type Integration, type WebhookResult } from './types.js';

/**
 * Prometheus Alertmanager, after Zulip's zerver/webhooks/alertmanager/view.py:
 * alerts are grouped by the `name` label or annotation (URL parameter `name`,
 * default "instance"; "(unknown)" when absent), which is the topic, and by
 * status; one message per group: ":alert: **FIRING** <desc> ([graph](<url>))"
 * or ":squared_ok: **Resolved** ...", a bullet list when several. The
 * description is the `desc` label/annotation (default "alertname"). The
 * generator URL's "tab=1" becomes "tab=0". No event names (no filtering).
 */
function field(p: unknown, i: number, name: string, fallback: string): string {
  for (const where of ['labels', 'annotations'] as const) {
    if (at(p, 'alerts', i, where, name) !== undefined) return str(p, 'alerts', i, where, name);
  }
  return fallback;
}

export const alertmanagerIntegration: Integration = {
  name: 'alertmanager',
  displayName: 'Alertmanager',
  ownParams: ['name', 'desc'],
  events: [],
  handle: ({ payload: p, params }): WebhookResult => {
    const nameField = params.name ?? 'instance';
    const descField = params.desc ?? 'alertname';
    const topics = new Map<string, { firing: string[]; resolved: string[] }>();
    list(p, 'alerts').forEach((_a, i) => {
      const name = field(p, i, nameField, '(unknown)');
      const desc = field(p, i, descField, `<missing field: ${descField}>`);
      const url = str(p, 'alerts', i, 'generatorURL').replaceAll('tab=1', 'tab=0');
      const status = str(p, 'alerts', i, 'status');
      if (!topics.has(name)) topics.set(name, { firing: [], resolved: [] });
      const group = topics.get(name)!;
      // Zulip indexes by the status string; anything else is a bad payload (400, not a crash).
      if (status !== 'firing' && status !== 'resolved') throw badRequest(`Invalid payload["alerts"][${i}]["status"]`);
      group[status].push(`${desc} ([graph](${url}))`);
    });
    const messages: { topic: string; content: string }[] = [];
    for (const [topic, statuses] of topics) {
      for (const status of ['firing', 'resolved'] as const) {
        const items = statuses[status];
        if (items.length === 0) continue;
        const head = status === 'firing' ? ':alert: **FIRING**' : ':squared_ok: **Resolved**';
        messages.push({ topic, content: items.length === 1 ? `${head} ${items[0]}` : `${head}\n${items.map((m) => `* ${m}`).join('\n')}` });
      }
    }
    return { kind: 'messages', messages };
  },
};
