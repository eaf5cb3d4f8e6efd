import net from 'node:net';
import os from 'node:os';
import tls from 'node:tls';

/**
 * A small SMTP client (RFC 5321) for the few mails Parley sends: connect
 * (smtps:// with TLS from the start, smtp:// upgraded with STARTTLS when the
 * server offers it), EHLO, AUTH PLAIN when the URL has credentials, one
 * message, QUIT. Every reply is checked; any failure rejects.
 */

export interface MailMessage {
  readonly from: string;
  readonly to: readonly string[];
  readonly subject: string;
  readonly text: string;
}

type Socket = net.Socket | tls.TLSSocket;

class Conversation {
  private buffer = '';
  private waiting: ((line: string) => void) | null = null;
  private lines: string[] = [];
  private failure: Error | null = null;

  constructor(private socket: Socket) {
    this.listen(socket);
  }

  private listen(socket: Socket): void {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      let i: number;
      while ((i = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, i).replace(/\r$/, '');
        this.buffer = this.buffer.slice(i + 1);
        if (this.waiting) {
          const w = this.waiting;
          this.waiting = null;
          w(line);
        } else this.lines.push(line);
      }
    });
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('SMTP connection closed')));
  }

  private fail(err: Error): void {
    this.failure ??= err;
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w('');
    }
  }

  private nextLine(): Promise<string> {
    const queued = this.lines.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting = (line) => (this.failure && line === '' ? reject(this.failure) : resolve(line));
    });
  }

  /** Reads one (possibly multi-line) reply and checks its code. */
  async reply(expect: number): Promise<string[]> {
    const out: string[] = [];
    for (;;) {
      const line = await this.nextLine();
      out.push(line.slice(4));
      if (line.length < 4 || line[3] !== '-') {
        const code = Number(line.slice(0, 3));
        if (code !== expect) throw new Error(`SMTP: expected ${expect}, got "${line}"`);
        return out;
      }
    }
  }

  async command(cmd: string, expect: number): Promise<string[]> {
    this.socket.write(cmd + '\r\n');
    return this.reply(expect);
  }

  /** STARTTLS: the same conversation continues over TLS. */
  async upgrade(host: string): Promise<void> {
    const plain = this.socket;
    plain.removeAllListeners('data');
    plain.removeAllListeners('close');
    plain.removeAllListeners('error');
    const secure = await new Promise<tls.TLSSocket>((resolve, reject) => {
      const s = tls.connect({ socket: plain, servername: host }, () => resolve(s));
      s.once('error', reject);
    });
    this.socket = secure;
    this.buffer = '';
    this.listen(secure);
  }

  end(): void {
    this.socket.end();
  }
}

function connect(url: URL): Promise<Socket> {
  const host = url.hostname;
  const secure = url.protocol === 'smtps:';
  const port = Number(url.port) || (secure ? 465 : 25);
  return new Promise((resolve, reject) => {
    const s: Socket = secure ? tls.connect({ host, port, servername: host }, () => resolve(s)) : net.connect({ host, port }, () => resolve(s));
    s.setTimeout(30_000, () => s.destroy(new Error('SMTP timeout')));
    s.once('error', reject);
  });
}

/** Quoted-printable-free message: headers plus a UTF-8 body, dot-stuffed. */
export function formatMessage(m: MailMessage, date = new Date()): string {
  const encodedSubject = /^[\x20-\x7e]*$/.test(m.subject) ? m.subject : `=?UTF-8?B?${Buffer.from(m.subject).toString('base64')}?=`;
  const headers = [
    `From: ${m.from}`,
    `To: ${m.to.join(', ')}`,
    `Subject: ${encodedSubject}`,
    `Date: ${date.toUTCString()}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 8bit',
  ];
  const body = m.text.replace(/\r?\n/g, '\r\n').replace(/^\./gm, '..');
  return headers.join('\r\n') + '\r\n\r\n' + body + '\r\n';
}

export async function sendSmtp(smtpUrl: string, m: MailMessage): Promise<void> {
  const url = new URL(smtpUrl);
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new Error(`unsupported mail URL scheme ${url.protocol}`);
  const conv = new Conversation(await connect(url));
  try {
    await conv.reply(220);
    const me = os.hostname() || 'localhost';
    let features = await conv.command(`EHLO ${me}`, 250);
    if (url.protocol === 'smtp:' && features.some((f) => f.toUpperCase() === 'STARTTLS')) {
      await conv.command('STARTTLS', 220);
      await conv.upgrade(url.hostname);
      features = await conv.command(`EHLO ${me}`, 250);
    }
    if (url.username) {
      const user = decodeURIComponent(url.username);
      const pass = decodeURIComponent(url.password);
      await conv.command(`AUTH PLAIN ${Buffer.from(`\0${user}\0${pass}`).toString('base64')}`, 235);
    }
    await conv.command(`MAIL FROM:<${m.from}>`, 250);
    for (const to of m.to) await conv.command(`RCPT TO:<${to}>`, 250);
    await conv.command('DATA', 354);
    await conv.command(formatMessage(m) + '.', 250);
    await conv.command('QUIT', 221).catch(() => undefined);
  } finally {
    conv.end();
  }
}
