import fs from 'node:fs';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { buildApp, bootstrapRealm } from '../app.js';
import { loadConfig } from '../config.js';
import { transact } from '../domain/context.js';
import { doCreateUser, doSetPasswordHash } from '../domain/actions/users.js';
import { generatePassword, hashPassword, isStrongPassword } from '../domain/rules/credentials.js';
import { checkFullName, isValidEmail, ROLES } from '../domain/rules/users.js';
import { userByEmail } from '../store/users.js';
import { runCluster } from './cluster.js';
import { ImportError, importRealm } from '../domain/export/import-realm.js';

const USAGE = `Usage: parley <command> [options]

Commands:
  migrate                               apply database migrations (and create the organization if empty)
  create-user --email E --full-name N [--role 100|200|300|400|600] [--password P] [--can-create-users]
                                        create a user; prints its id, password and API key
  set-password --email E [--password P] set a user's password (generated when omitted)
  api-key --email E                     print a user's API key
  import <tarball>                      load an organization export (Zulip's format: Zulip's
                                        ./manage.py export, or Parley's POST /export/realm) into an
                                        EMPTY database, in one transaction
  cluster --workers N                   run N server processes on one port (needs PARLEY_REDIS_URL when N > 1;
                                        see docs/scaling.md)

Configuration comes from the same PARLEY_* environment variables as the server.`;

function fail(msg: string): never {
  process.stderr.write(`parley: ${msg}\n`);
  process.exit(2);
}

export async function runCli(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === 'help') {
    process.stdout.write(USAGE + '\n');
    return;
  }
  if (command === 'cluster') {
    const { values: c } = parseArgs({ args: rest, options: { workers: { type: 'string', short: 'w' } }, strict: true });
    await runCluster(Number(c.workers ?? 2));
    return;
  }
  if (command === 'import') {
    const file = rest[0];
    if (!file || rest.length !== 1) fail('usage: parley import <tarball>');
    let gz: Buffer;
    try {
      gz = fs.readFileSync(file);
    } catch (e) {
      fail(`cannot read ${file}: ${(e as Error).message}`);
    }
    const config = loadConfig();
    const app = await buildApp(config, { logger: pino({ level: 'warn' }) });
    try {
      const summary = await importRealm(app.ctx, gz);
      const c = summary.counts;
      process.stdout.write(
        `imported the organization: ${c.users ?? 0} users, ${c.channels ?? 0} channels, ${c.subscriptions ?? 0} subscriptions, ` +
          `${c.messages ?? 0} messages, ${c.reactions ?? 0} reactions, ${c.uploads ?? 0} uploads\n` +
          'passwords are not carried: set them with `parley set-password --email E` (or the password-reset page); API keys are new\n',
      );
    } catch (e) {
      if (e instanceof ImportError) fail(e.message);
      throw e;
    } finally {
      await app.close();
    }
    return;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      email: { type: 'string' },
      'full-name': { type: 'string' },
      role: { type: 'string' },
      password: { type: 'string' },
      'can-create-users': { type: 'boolean' },
    },
    strict: true,
  });
  const config = loadConfig();
  const app = await buildApp(config, { logger: pino({ level: 'warn' }) });
  try {
    const { realmId } = await bootstrapRealm(app.ctx, { announce: true });
    switch (command) {
      case 'migrate':
        process.stdout.write('migrations applied\n');
        break;
      case 'create-user': {
        const email = values.email ?? fail('--email is required');
        if (!isValidEmail(email)) fail(`invalid email: ${email}`);
        const fullName = checkFullName(values['full-name'] ?? fail('--full-name is required'));
        const role = values.role ? Number(values.role) : 400;
        if (!(ROLES as readonly number[]).includes(role)) fail(`role must be one of ${ROLES.join(', ')}`);
        if (await userByEmail(app.ctx.db, realmId, email)) fail(`a user with email ${email} already exists`);
        const password = values.password ?? generatePassword();
        if (!isStrongPassword(password)) fail('the password is too weak');
        const hash = await hashPassword(password, config.passwordHashCost);
        const user = await transact(app.ctx, (tx) =>
          doCreateUser(app.ctx, tx, realmId, { email, fullName, passwordHash: hash, role, canCreateUsers: values['can-create-users'] ?? false }),
        );
        process.stdout.write(`user_id=${user.id}\nemail=${user.delivery_email}\npassword=${password}\napi_key=${user.api_key}\n`);
        break;
      }
      case 'set-password': {
        const user = await userByEmail(app.ctx.db, realmId, values.email ?? fail('--email is required'));
        if (!user) fail('no such user');
        const password = values.password ?? generatePassword();
        if (!isStrongPassword(password)) fail('the password is too weak');
        const hash = await hashPassword(password, config.passwordHashCost);
        await transact(app.ctx, (tx) => doSetPasswordHash(tx, user, hash));
        process.stdout.write(`password=${password}\n`);
        break;
      }
      case 'api-key': {
        const user = await userByEmail(app.ctx.db, realmId, values.email ?? fail('--email is required'));
        if (!user) fail('no such user');
        process.stdout.write(`${user.api_key}\n`);
        break;
      }
      default:
        fail(`unknown command '${command}'\n\n${USAGE}`);
    }
  } finally {
    await app.close();
  }
}

runCli(process.argv.slice(2)).catch((err: unknown) => {
  const msg = err instanceof Error ? err.message : String(err);
  process.stderr.write(`parley: ${msg}\n`);
  process.exit(1);
});
