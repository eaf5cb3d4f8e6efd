import type { StateModule } from './types.js';

/**
 * Every resource's /register state, in the order keys appear in the
 * response. Each resource appends its module here (one line), as routes.ts
 * lists endpoints.
 */
export const stateModules: StateModule[] = [];
