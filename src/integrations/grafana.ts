import { badRequest } from '../domain/errors.js';
import { at, int, list, message, str, type Integration, type WebhookResult } from './types.js';

/**
 * Grafana, after Zulip's zerver/webhooks/grafana/view.py. Grafana alerting
 * (payload with `alerts`): topic "[FIRING:<n>]" / "[RESOLVED:<n>]", a status
 * line, the message, then per alert "---\n**Alert i**: <alertname>.", fired
 * and resolved times as <time:...>, labels and annotations as lists, and
 * "N alert(s) truncated."; event = the status. Legacy alerts (no `alerts`):
 * topic = title, "<icon> **STATE**" then "[ruleName](ruleUrl)", message,
 * evalMatches and the visualization link; event = the state.
 */
function oneOf(p: unknown, key: string, allowed: readonly string[]): string {
  const v = str(p, key);
  if (!allowed.includes(v)) throw badRequest(`Invalid payload["${key}"]`);
  return v;
}

function dictLines(p: unknown, ...path: (string | number)[]): string {
  const obj = at(p, ...path) as Record<string, unknown>;
  return Object.keys(obj).map((k) => `- ${k}: ${str(p, ...path, k)}\n`).join('');
}

function isNonEmptyDict(v: unknown): boolean {
  return v !== null && typeof v === 'object' && Object.keys(v).length > 0;
}

function alerting(p: unknown): WebhookResult {
  const status = oneOf(p, 'status', ['firing', 'resolved']);
  const alerts = list(p, 'alerts');
  const topic = `[${status.toUpperCase()}:${alerts.length}]`;
  let body = `${status === 'firing' ? ':alert:' : ':checkbox:'} **${status.toUpperCase()}**\n\n`;
  if (at(p, 'message') === undefined) throw badRequest('payload["message"] is missing');
  if (at(p, 'message')) body += str(p, 'message') + '\n';
  alerts.forEach((_a, idx) => {
    body += `\n---\n**Alert ${idx + 1}**`;
    if (at(p, 'alerts', idx, 'labels', 'alertname')) body += `: ${str(p, 'alerts', idx, 'labels', 'alertname')}.`;
    body += `\n\nThis alert was fired at <time:${str(p, 'alerts', idx, 'startsAt')}>.\n`;
    const end = str(p, 'alerts', idx, 'endsAt');
    if (end !== '0001-01-01T00:00:00Z') body += `\nThis alert was resolved at <time:${end}>.\n\n`;
    if (isNonEmptyDict(at(p, 'alerts', idx, 'labels'))) body += `Labels:\n${dictLines(p, 'alerts', idx, 'labels')}\n`;
    if (isNonEmptyDict(at(p, 'alerts', idx, 'annotations'))) body += `Annotations:\n${dictLines(p, 'alerts', idx, 'annotations')}\n`;
  });
  if (at(p, 'truncatedAlerts') === undefined) throw badRequest('payload["truncatedAlerts"] is missing');
  if (at(p, 'truncatedAlerts')) body += `${int(p, 'truncatedAlerts')} alert(s) truncated.\n`;
  return message(topic, body, status);
}

function legacy(p: unknown): WebhookResult {
  const topic = str(p, 'title');
  let evalMatches = '';
  const matches = at(p, 'evalMatches');
  if (Array.isArray(matches)) {
    matches.forEach((_m, i) => {
      const v = at(p, 'evalMatches', i, 'value');
      if (v !== null && typeof v !== 'number') throw badRequest(`payload["evalMatches"][${i}]["value"] is not a number`);
      evalMatches += `**${str(p, 'evalMatches', i, 'metric')}:** ${v === null ? 'None' : String(v)}\n`;
    });
  }
  const messageText = at(p, 'message') !== undefined ? str(p, 'message') + '\n\n' : '';
  const state = oneOf(p, 'state', ['no_data', 'paused', 'alerting', 'ok', 'pending', 'unknown']);
  const icon = state === 'alerting' ? ':alert:' : state === 'ok' ? ':squared_ok:' : ':info:';
  let body = `${icon} **${state.toUpperCase()}**\n\n[${str(p, 'ruleName')}](${str(p, 'ruleUrl')})\n\n${messageText}${evalMatches}`;
  if (at(p, 'imageUrl') !== undefined) body += `\n[Click to view visualization](${str(p, 'imageUrl')})`;
  return message(topic, body.trim(), state);
}

export const grafanaIntegration: Integration = {
  name: 'grafana',
  displayName: 'Grafana',
  ownParams: [],
  events: ['firing', 'resolved', 'ok', 'pending', 'alerting', 'paused'],
  handle: ({ payload }) => (at(payload, 'alerts') !== undefined ? alerting(payload) : legacy(payload)),
};
