import type { TestServer } from './server.js';

/** A browser-like client for the server-rendered pages: keeps cookies, reads CSRF fields. */
export interface PageRes {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, unknown>;
}

export class PageClient {
  private cookies = new Map<string, string>();
  constructor(private readonly t: TestServer) {}

  private remember(headers: Record<string, unknown>): void {
    const set = headers['set-cookie'];
    for (const c of Array.isArray(set) ? set : set ? [set] : []) {
      const [pair] = String(c).split(';');
      const i = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
  }

  private cookieHeader(): Record<string, string> {
    return this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
  }

  async get(url: string): Promise<PageRes> {
    const res = await this.t.app.http.inject({ method: 'GET', url, headers: this.cookieHeader() });
    this.remember(res.headers);
    return { status: res.statusCode, body: res.body, headers: res.headers };
  }

  async post(url: string, form: Record<string, string>): Promise<PageRes> {
    const res = await this.t.app.http.inject({
      method: 'POST',
      url,
      headers: { ...this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(form).toString(),
    });
    this.remember(res.headers);
    return { status: res.statusCode, body: res.body, headers: res.headers };
  }

  /** The value of a hidden input in a page. */
  static hidden(body: string, name: string): string {
    const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(body);
    if (!m) throw new Error(`no hidden field ${name} in page`);
    return m[1]!.replace(/&#(\d+);/g, (_x, d: string) => String.fromCharCode(Number(d)));
  }

  /** Fetches a form page and posts it with the given fields (and its CSRF token and hidden fields). */
  async submit(pageUrl: string, action: string, fields: Record<string, string>, hiddenNames: readonly string[] = []): Promise<PageRes> {
    const form = await this.get(pageUrl);
    if (form.status !== 200) throw new Error(`form page ${pageUrl}: ${form.status} ${form.body}`);
    const hidden: Record<string, string> = { csrfmiddlewaretoken: PageClient.hidden(form.body, 'csrfmiddlewaretoken') };
    for (const n of hiddenNames) hidden[n] = PageClient.hidden(form.body, n);
    return this.post(action, { ...hidden, ...fields });
  }
}

/** The first link to this server in a text. */
export function linkIn(text: string, pathPrefix: string): string {
  const m = new RegExp(`https?://[^\\s/]+(${pathPrefix.replace(/[/]/g, '\\/')}[^\\s"<]*)`).exec(text);
  if (!m) throw new Error(`no ${pathPrefix} link in: ${text}`);
  return m[1]!;
}
