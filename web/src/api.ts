// The one way the app talks to the server: /json/<path> (the cookie-authenticated
// mirror of /api/v1/<path>), with the CSRF token on every non-GET request and
// bodies form-encoded with JSON-encoded non-string values, as Zulip's own clients do.

export type Params = Record<string, unknown>;

/** An error the server (or the network) gave; `msg` is always words a person can read. */
export class ApiError extends Error {
  constructor(
    readonly msg: string,
    readonly code: string,
    readonly status: number,
    readonly body: Record<string, unknown> = {},
  ) {
    super(msg);
  }
}

let onSignedOut: () => void = () => {};
/** Called when any request answers 401: the session is gone, show the login page. */
export function setSignedOutHandler(fn: () => void): void {
  onSignedOut = fn;
}

export function csrfToken(): string {
  const m = /(?:^|;\s*)csrftoken=([^;]*)/.exec(document.cookie);
  return m ? decodeURIComponent(m[1]!) : '';
}

/** Form/query encoding: strings as-is, everything else JSON (lists, objects, numbers, booleans). */
export function encodeParams(params: Params): URLSearchParams {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    out.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  }
  return out;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** A multipart body (avatar upload); replaces the form encoding. */
  form?: FormData;
  /** Do not treat 401 as signed out (used by the login page itself). */
  quiet401?: boolean;
}

/** Calls `/json/<path>`; resolves with the JSON body on success, rejects with ApiError otherwise. */
export async function call<T = Record<string, unknown>>(
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  params: Params = {},
  opts: CallOptions = {},
): Promise<T> {
  return request<T>(method, `/json/${path.replace(/^\//, '')}`, params, opts);
}

export async function request<T>(method: string, url: string, params: Params, opts: CallOptions): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  let body: BodyInit | undefined;
  const encoded = encodeParams(params);
  if (method === 'GET') {
    const qs = encoded.toString();
    if (qs) url += `?${qs}`;
  } else {
    headers['X-CSRFToken'] = csrfToken();
    if (opts.form) body = opts.form;
    else {
      body = encoded;
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
    }
  }
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body, credentials: 'same-origin', signal: opts.signal });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError('Cannot reach the server. Check your connection; retrying may help.', 'NETWORK_ERROR', 0);
  }
  let json: Record<string, unknown> = {};
  try {
    json = (await res.json()) as Record<string, unknown>;
  } catch {
    // A proxy error page or an empty body: described below from the status.
  }
  if (res.ok && json.result === 'success') return json as T;
  if (res.status === 401 && !opts.quiet401) onSignedOut();
  const msg =
    typeof json.msg === 'string' && json.msg
      ? json.msg
      : res.status >= 500
        ? `The server had a problem (HTTP ${res.status}). Try again in a moment.`
        : `The request failed (HTTP ${res.status}).`;
  throw new ApiError(msg, typeof json.code === 'string' ? json.code : 'HTTP_' + res.status, res.status, json);
}

export async function login(username: string, password: string): Promise<void> {
  await request('POST', '/accounts/login', { username, password }, { quiet401: true });
}

export async function logout(): Promise<void> {
  await request('POST', '/accounts/logout', {}, { quiet401: true });
}
