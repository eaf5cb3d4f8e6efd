// The sign-in page: realm name and icon from GET /json/server_settings, then
// POST /accounts/login (which sets the session and CSRF cookies).
import { useEffect, useState } from 'preact/hooks';
import { ApiError, call, login } from './api';

interface ServerSettings {
  realm_name?: string;
  realm_icon?: string;
  realm_description?: string;
}

export function LoginPage({ onSignedIn, notice }: { onSignedIn: () => void; notice?: string }) {
  const [settings, setSettings] = useState<ServerSettings>({});
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState(notice ?? '');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    call<ServerSettings>('GET', 'server_settings', {}, { quiet401: true })
      .then((s) => {
        setSettings(s);
        if (s.realm_name) document.title = `Log in · ${s.realm_name}`;
      })
      .catch((e: ApiError) => setError(`Could not load the organization's settings: ${e.msg}`));
  }, []);

  async function submit(e: Event) {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    setError('');
    try {
      await login(username.trim(), password);
      setPassword('');
      onSignedIn();
    } catch (err) {
      setError(err instanceof ApiError ? err.msg : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="login" aria-labelledby="login-title">
      <form class="login-card" onSubmit={submit} data-testid="login-form" noValidate>
        <div class="login-realm">
          {settings.realm_icon && new URL(settings.realm_icon, location.href).origin === location.origin && <img src={settings.realm_icon} alt="" width={48} height={48} onError={(e) => ((e.currentTarget as HTMLElement).style.display = 'none')} />}
          <h1 id="login-title">{settings.realm_name ? `Log in to ${settings.realm_name}` : 'Log in'}</h1>
        </div>
        <label>
          Email
          <input
            type="email"
            name="username"
            autoComplete="username"
            required
            data-testid="login-username"
            value={username}
            onInput={(e) => setUsername(e.currentTarget.value)}
            autoFocus
          />
        </label>
        <label>
          Password
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            data-testid="login-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        {error && (
          <p class="login-error" role="alert" data-testid="login-error">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy} data-testid="login-submit">
          {busy ? 'Logging in…' : 'Log in'}
        </button>
      </form>
    </main>
  );
}
