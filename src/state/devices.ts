import { clientDeviceIdsOfUser as clientDeviceIds } from '../store/devices.js';
import type { StateModule } from './types.js';

/**
 * `devices` in /register (Zulip feature level 468): the user's registered
 * client devices by id, each with its push registration. Without a push
 * service no device ever gets a push key or token, so every field is null.
 * device events: add (a new device, nothing registered yet) and remove.
 */
const emptyDevice = () => ({
  push_key_id: null,
  push_token_id: null,
  pending_push_token_id: null,
  push_token_last_updated_timestamp: null,
  push_registration_error_code: null,
});

export const devicesModule: StateModule = {
  fetchTypes: ['device'],
  eventTypes: ['device'],
  async fetch({ app, user }) {
    const devices: Record<string, unknown> = {};
    for (const id of await clientDeviceIds(app.db, user.id)) devices[String(id)] = emptyDevice();
    return { devices };
  },
  apply(state, event) {
    const devices = (state.devices ?? {}) as Record<string, unknown>;
    const id = String(event.device_id);
    if (event.op === 'add') devices[id] = emptyDevice();
    else if (event.op === 'remove') delete devices[id];
    state.devices = devices;
  },
};
