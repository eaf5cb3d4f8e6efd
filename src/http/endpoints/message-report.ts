import { z } from 'zod';
import { MAX_REPORT_DESCRIPTION_LENGTH, REPORT_TYPES, reportMessage } from '../../domain/actions/message-report.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';

/** POST /messages/{message_id}/report (Zulip's report_message_backend); see domain/actions/message-report.ts. */
export const reportMessageEndpoint = endpoint({
  method: 'POST',
  path: '/messages/:message_id/report',
  auth: 'user',
  params: {
    message_id: p.pathId(),
    report_type: p.oneOf(REPORT_TYPES),
    description: p.str(z.string().max(MAX_REPORT_DESCRIPTION_LENGTH)).default(''),
  },
  handler: async (ctx, { message_id, report_type, description }) => {
    await reportMessage(ctx.app, ctx.userRow, ctx.user, message_id, report_type, description);
    return {};
  },
});
