#!/usr/bin/env node
// `npm start`: build only if dist/ is stale (tools/ensure-built.mjs), then run
// the bundled server (dist/src/server.mjs, tools/bundle-server.mjs) in this
// very process, so a built checkout serves within a second.
import { ensureBuilt } from './ensure-built.mjs';

ensureBuilt();
await import('../dist/src/server.mjs');
