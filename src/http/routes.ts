import type { AnyEndpoint } from './endpoint.js';
import { fetchApiKey } from './endpoints/auth.js';
import { getServerSettings } from './endpoints/server-settings.js';
import * as users from './endpoints/users.js';

/**
 * THE route table: every method + path of the API once. Endpoint files
 * declare; this file mounts. Each resource contributes one block.
 */
export const routes: readonly AnyEndpoint[] = [
  // server and authentication
  getServerSettings,
  fetchApiKey,
  // users
  users.listUsers,
  users.createUser,
  users.getOwnUser,
  users.deactivateOwnUser,
  users.getUser,
  users.updateUser,
  users.deactivateUser,
  users.reactivateUser,
  users.createBot,
];
