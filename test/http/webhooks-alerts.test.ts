import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, startTestServer, type TestServer } from '../support/server.js';
import { expectChannelMessage, expectNoMessage, messagesSentBy, postHook, setupHook, type Hook } from '../support/webhooks.js';

/**
 * Grafana (alerting and legacy) and Prometheus Alertmanager payloads shaped
 * as their documentation shows them, with the topics and Markdown of Zulip's
 * integrations (zerver/webhooks/grafana, zerver/webhooks/alertmanager).
 */
let t: TestServer;
let hook: Hook;
beforeAll(async () => {
  t = await startTestServer();
  hook = await setupHook(t, 'alertshook', 'alerts');
});
afterAll(async () => t.close());

const grafanaAlert = (over: Record<string, unknown> = {}) => ({
  status: 'firing',
  labels: { alertname: 'TestAlert', instance: 'Grafana' },
  annotations: { summary: 'Notification test' },
  startsAt: '2022-08-31T05:54:04.52289368Z',
  endsAt: '0001-01-01T00:00:00Z',
  generatorURL: 'https://grafana.example.com/alerting/1afz29v7z/edit',
  ...over,
});
const grafana = (status: string, alerts: unknown[], over: Record<string, unknown> = {}) => ({ receiver: 'zulip', status, alerts, groupLabels: {}, truncatedAlerts: 0, title: `[${status.toUpperCase()}:${alerts.length}]`, message: '**Firing**\n\nValue: 1', ...over });

describe('Grafana integration', () => {
  it('a firing alert', async () => {
    await expectChannelMessage(t, hook, 'grafana', {}, grafana('firing', [grafanaAlert()]), {}, '[FIRING:1]',
      ':alert: **FIRING**\n\n**Firing**\n\nValue: 1\n\n---\n**Alert 1**: TestAlert.\n\nThis alert was fired at <time:2022-08-31T05:54:04.52289368Z>.\nLabels:\n- alertname: TestAlert\n- instance: Grafana\n\nAnnotations:\n- summary: Notification test');
  });

  it('two resolved alerts with end times, no message, truncated alerts counted', async () => {
    const alerts = [grafanaAlert({ status: 'resolved', endsAt: '2022-08-31T06:00:00Z', annotations: {} }), grafanaAlert({ status: 'resolved', labels: { instance: 'db' }, endsAt: '2022-08-31T06:01:00Z', annotations: {} })];
    await expectChannelMessage(t, hook, 'grafana', {}, grafana('resolved', alerts, { message: '', truncatedAlerts: 3 }), {}, '[RESOLVED:2]',
      ':checkbox: **RESOLVED**\n\n\n---\n**Alert 1**: TestAlert.\n\nThis alert was fired at <time:2022-08-31T05:54:04.52289368Z>.\n\nThis alert was resolved at <time:2022-08-31T06:00:00Z>.\n\nLabels:\n- alertname: TestAlert\n- instance: Grafana\n\n\n---\n**Alert 2**\n\nThis alert was fired at <time:2022-08-31T05:54:04.52289368Z>.\n\nThis alert was resolved at <time:2022-08-31T06:01:00Z>.\n\nLabels:\n- instance: db\n\n3 alert(s) truncated.');
  });

  it('legacy alerting and ok alerts, with metrics and a visualization', async () => {
    const legacy = { title: '[Alerting] Test notification', ruleId: 0, ruleName: 'Test notification', ruleUrl: 'https://grafana.example.com/', state: 'alerting', imageUrl: 'https://grafana.com/assets/img/blog/mixed_styles.png', message: 'Someone is testing the alert notification within grafana.', evalMatches: [{ value: 100, metric: 'High value', tags: null }, { value: 200, metric: 'Higher Value', tags: null }] };
    await expectChannelMessage(t, hook, 'grafana', {}, legacy, {}, '[Alerting] Test notification',
      ':alert: **ALERTING**\n\n[Test notification](https://grafana.example.com/)\n\nSomeone is testing the alert notification within grafana.\n\n**High value:** 100\n**Higher Value:** 200\n\n[Click to view visualization](https://grafana.com/assets/img/blog/mixed_styles.png)');
    await expectChannelMessage(t, hook, 'grafana', {}, { title: '[OK] CPU', ruleName: 'CPU', ruleUrl: 'https://grafana.example.com/d/1', state: 'ok', evalMatches: [] }, {}, '[OK] CPU', ':squared_ok: **OK**\n\n[CPU](https://grafana.example.com/d/1)');
  });

  it('only_events filters by status or state; bad payloads are 400s', async () => {
    await expectNoMessage(t, hook, 'grafana', { only_events: '["resolved"]' }, grafana('firing', [grafanaAlert()]), {});
    const q = { api_key: hook.key, stream: hook.channel };
    expectError(await postHook(t, 'grafana', q, grafana('exploded', [grafanaAlert()])), 400, 'BAD_REQUEST', 'Invalid payload["status"]');
    expectError(await postHook(t, 'grafana', q, { title: 'x' }), 400, 'BAD_REQUEST', 'payload["state"] is missing');
    expectError(await postHook(t, 'grafana', q, '[{'), 400, 'INVALID_JSON', 'Malformed JSON');
  });
});

const amAlert = (status: string, labels: Record<string, string>, annotations: Record<string, string> = {}) => ({
  status,
  labels,
  annotations,
  startsAt: '2018-01-01T00:00:00Z',
  generatorURL: `http://prometheus.example.com:9090/graph?g0.expr=up&g0.tab=1&i=${labels.alertname ?? ''}`,
});

describe('Alertmanager integration', () => {
  it('one message per instance and status; bullet lists for several alerts', async () => {
    const payload = {
      receiver: 'zulip',
      status: 'firing',
      alerts: [
        amAlert('firing', { alertname: 'InstanceDown', instance: 'host1' }),
        amAlert('firing', { alertname: 'HighLoad', instance: 'host1' }),
        amAlert('resolved', { alertname: 'DiskFull', instance: 'host1' }),
        amAlert('firing', { alertname: 'InstanceDown', instance: 'host2' }),
        amAlert('firing', { alertname: 'Orphan' }),
      ],
    };
    const graph = (n: string) => `http://prometheus.example.com:9090/graph?g0.expr=up&g0.tab=0&i=${n}`;
    const { res, sent } = await messagesSentBy(t, () => postHook(t, 'alertmanager', { api_key: hook.key, stream: hook.channel }, payload));
    expect(res.body).toEqual({ result: 'success', msg: '' });
    expect(sent.map((m) => [m.channel, m.topic, m.content])).toEqual([
      ['alerts', 'host1', `:alert: **FIRING**\n* InstanceDown ([graph](${graph('InstanceDown')}))\n* HighLoad ([graph](${graph('HighLoad')}))`],
      ['alerts', 'host1', `:squared_ok: **Resolved** DiskFull ([graph](${graph('DiskFull')}))`],
      ['alerts', 'host2', `:alert: **FIRING** InstanceDown ([graph](${graph('InstanceDown')}))`],
      ['alerts', '(unknown)', `:alert: **FIRING** Orphan ([graph](${graph('Orphan')}))`],
    ]);
  });

  it('name and desc parameters pick the topic and description fields (labels or annotations)', async () => {
    const payload = { alerts: [amAlert('resolved', { alertname: 'X', job: 'api' }, { description: 'API is back' })] };
    await expectChannelMessage(t, hook, 'alertmanager', { name: 'job', desc: 'description' }, payload, {}, 'api', ':squared_ok: **Resolved** API is back ([graph](http://prometheus.example.com:9090/graph?g0.expr=up&g0.tab=0&i=X))');
    await expectChannelMessage(t, hook, 'alertmanager', { name: 'job', desc: 'summary' }, payload, {}, 'api', ':squared_ok: **Resolved** <missing field: summary> ([graph](http://prometheus.example.com:9090/graph?g0.expr=up&g0.tab=0&i=X))');
  });

  it('a topic override applies to every message; bad payloads are 400s', async () => {
    const payload = { alerts: [amAlert('firing', { alertname: 'A', instance: 'h1' }), amAlert('firing', { alertname: 'B', instance: 'h2' })] };
    const { sent } = await messagesSentBy(t, () => postHook(t, 'alertmanager', { api_key: hook.key, stream: hook.channel, topic: 'prod' }, payload));
    expect(sent.map((m) => m.topic)).toEqual(['prod', 'prod']);
    const q = { api_key: hook.key, stream: hook.channel };
    expectError(await postHook(t, 'alertmanager', q, { receiver: 'x' }), 400, 'BAD_REQUEST', 'payload["alerts"] is missing');
    expectError(await postHook(t, 'alertmanager', q, { alerts: [{ ...amAlert('firing', {}), status: 'weird' }] }), 400, 'BAD_REQUEST', 'Invalid payload["alerts"][0]["status"]');
  });
});
