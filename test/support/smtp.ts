import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';

/** A mail received by the loopback SMTP server, parsed. */
export interface ReceivedMail {
  readonly envelopeFrom: string;
  readonly envelopeTo: string[];
  readonly user: string | undefined;
  readonly secure: boolean;
  readonly raw: string;
  readonly parsed: ParsedMail;
}

export interface TestSmtp {
  readonly port: number;
  readonly mails: ReceivedMail[];
  /** Resolves when `n` mails have arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/** An SMTP server on 127.0.0.1 (smtp-server's built-in self-signed certificate for STARTTLS). */
export async function startTestSmtp(opts: Partial<SMTPServerOptions> & { users?: Record<string, string> } = {}): Promise<TestSmtp> {
  const mails: ReceivedMail[] = [];
  const waiters: (() => void)[] = [];
  const { users, ...rest } = opts;
  const server = new SMTPServer({
    authOptional: !users,
    disabledCommands: [],
    logger: false,
    onAuth(auth, _session, cb) {
      if (users && users[auth.username ?? ''] === auth.password) cb(null, { user: auth.username });
      else cb(new Error('Invalid username or password'));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        simpleParser(raw).then((parsed) => {
          mails.push({
            envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            envelopeTo: session.envelope.rcptTo.map((r) => r.address),
            user: session.user as string | undefined,
            secure: session.secure,
            raw,
            parsed,
          });
          for (const w of waiters.splice(0)) w();
          cb();
        }, cb);
      });
    },
    ...rest,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.server.address();
  if (!addr || typeof addr === 'string') throw new Error('SMTP server not listening');
  return {
    port: addr.port,
    mails,
    async waitFor(n, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (mails.length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} mails, got ${mails.length}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
      return mails.slice(0, n);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
