// Settings panel: profile (name, avatar), password, display and notification settings
// (PATCH /settings; color_scheme applies at once through the user_settings event),
// muted topics (POST /user_topics to unmute).
import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from './api';
import { askNotificationPermission } from './notify';
import { changed, channelName, showError, st, toast } from './store';
import { ui } from './ui';
import { Avatar } from './message';

type Tab = 'profile' | 'password' | 'display' | 'notifications' | 'muted';

function patchSetting(name: string, value: unknown): void {
  const s = st();
  const old = s.settings[name];
  s.settings = { ...s.settings, [name]: value }; // optimistic; the event confirms
  changed();
  call('PATCH', 'settings', { [name]: value }).catch((e) => {
    st().settings = { ...st().settings, [name]: old };
    changed();
    showError(e);
  });
}

function Check({ name, label }: { name: string; label: string }) {
  const s = st();
  return (
    <label class="check">
      <input type="checkbox" data-testid={`setting-${name}`} checked={s.settings[name] === true} onChange={(e) => patchSetting(name, e.currentTarget.checked)} />
      {label}
    </label>
  );
}

function Select({ name, label, options }: { name: string; label: string; options: [string | number, string][] }) {
  const s = st();
  const cur = s.settings[name];
  return (
    <label class="field">
      {label}
      <select
        data-testid={`setting-${name}`}
        value={String(cur)}
        onChange={(e) => {
          const raw = e.currentTarget.value;
          patchSetting(name, typeof options[0]![0] === 'number' ? Number(raw) : raw);
        }}
      >
        {options.map(([v, l]) => (
          <option key={v} value={String(v)}>{l}</option>
        ))}
      </select>
    </label>
  );
}

function Profile() {
  const s = st();
  const me = s.users.get(s.myId);
  const [name, setName] = useState(me?.full_name ?? '');
  const file = useRef<HTMLInputElement>(null);
  return (
    <div>
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          call('PATCH', 'settings', { full_name: name.trim() })
            .then(() => toast('Name saved.', 'info'))
            .catch(showError);
        }}
      >
        <label class="field">
          Full name
          <input data-testid="settings-full-name" value={name} maxLength={100} onInput={(e) => setName(e.currentTarget.value)} required />
        </label>
        <button type="submit" class="primary" data-testid="settings-save-name">Save name</button>
      </form>
      <div class="stack">
        <span class="field-label">Avatar</span>
        <Avatar url={me?.avatar_url} name={me?.full_name ?? ''} size={80} />
        <label class="field">
          Upload a new avatar (image, at most {String(s.realm.max_avatar_file_size_mib ?? 5)} MiB)
          <input
            ref={file}
            type="file"
            accept="image/*"
            data-testid="settings-avatar"
            onChange={() => {
              const f = file.current?.files?.[0];
              if (!f) return;
              const form = new FormData();
              form.append('file', f);
              call('POST', 'users/me/avatar', {}, { form })
                .then(() => toast('Avatar updated.', 'info'))
                .catch(showError);
            }}
          />
        </label>
      </div>
    </div>
  );
}

function Password() {
  const [oldPw, setOld] = useState('');
  const [newPw, setNew] = useState('');
  return (
    <form
      class="stack"
      onSubmit={(e) => {
        e.preventDefault();
        call('PATCH', 'settings', { old_password: oldPw, new_password: newPw })
          .then(() => {
            setOld('');
            setNew('');
            toast('Password changed.', 'info');
          })
          .catch(showError);
      }}
    >
      <label class="field">
        Current password
        <input type="password" autoComplete="current-password" data-testid="settings-old-password" value={oldPw} onInput={(e) => setOld(e.currentTarget.value)} required />
      </label>
      <label class="field">
        New password
        <input type="password" autoComplete="new-password" data-testid="settings-new-password" value={newPw} onInput={(e) => setNew(e.currentTarget.value)} required />
      </label>
      <button type="submit" class="primary" data-testid="settings-change-password">Change password</button>
    </form>
  );
}

function Muted() {
  const s = st();
  const muted = [...s.userTopics.values()].filter((t) => t.visibility_policy === 1);
  if (!muted.length) return <p class="empty">No muted topics.</p>;
  return (
    <ul class="rows">
      {muted.map((t) => (
        <li key={`${t.stream_id}:${t.topic_name}`} data-testid="muted-topic">
          <span>#{channelName(s, t.stream_id)} › {t.topic_name}</span>{' '}
          <button
            type="button"
            onClick={() => call('POST', 'user_topics', { stream_id: t.stream_id, topic: t.topic_name, visibility_policy: 0 }).catch(showError)}
          >
            Unmute
          </button>
        </li>
      ))}
    </ul>
  );
}

/** Keeps Tab inside the modal dialog; Esc closes it. */
function trapFocus(e: KeyboardEvent, close: () => void): void {
  if (e.key === 'Escape') return close();
  if (e.key !== 'Tab') return;
  const box = e.currentTarget as HTMLElement;
  const items = [...box.querySelectorAll<HTMLElement>('button, input, select, textarea, [tabindex="0"]')].filter((el) => !(el as HTMLButtonElement).disabled);
  const first = items[0];
  const last = items[items.length - 1];
  if (e.shiftKey && document.activeElement === first) {
    e.preventDefault();
    last?.focus();
  } else if (!e.shiftKey && document.activeElement === last) {
    e.preventDefault();
    first?.focus();
  }
}

export function SettingsPanel() {
  const [tab, setTab] = useState<Tab>('profile');
  const [perm, setPerm] = useState(typeof Notification === 'undefined' ? 'unsupported' : Notification.permission);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => box.current?.querySelector<HTMLElement>('[role=tab][aria-selected=true]')?.focus(), []);
  const close = () => {
    ui.settingsOpen = false;
    changed();
    document.querySelector<HTMLElement>('[data-testid=settings]')?.focus();
  };
  const tabs: [Tab, string][] = [['profile', 'Profile'], ['password', 'Password'], ['display', 'Display'], ['notifications', 'Notifications'], ['muted', 'Muted topics']];
  return (
    <div class="overlay" onClick={close}>
      <div class="dialog" role="dialog" aria-modal="true" aria-labelledby="settings-title" data-testid="settings-panel" ref={box} onClick={(e) => e.stopPropagation()} onKeyDown={(e) => trapFocus(e, close)}>
        <div class="dialog-head">
          <h2 id="settings-title">Settings</h2>
          <button type="button" class="icon" aria-label="Close settings" data-testid="settings-close" onClick={close}>✕</button>
        </div>
        <div class="tabs" role="tablist" aria-label="Settings sections">
          {tabs.map(([id, label]) => (
            <button key={id} type="button" role="tab" id={`tab-${id}`} aria-selected={tab === id} aria-controls="settings-tabpanel" data-testid={`settings-tab-${id}`} onClick={() => setTab(id)}>
              {label}
            </button>
          ))}
        </div>
        <div class="tabpanel" role="tabpanel" id="settings-tabpanel" aria-labelledby={`tab-${tab}`}>
          {tab === 'profile' && <Profile />}
          {tab === 'password' && <Password />}
          {tab === 'display' && (
            <div class="stack">
              <Select name="color_scheme" label="Theme" options={[[1, 'Automatic (follow the system)'], [3, 'Light'], [2, 'Dark']]} />
              <Select name="web_home_view" label="Home view" options={[['inbox', 'Inbox'], ['recent', 'Recent conversations'], ['all_messages', 'Combined feed']]} />
              <Select name="web_font_size_px" label="Font size" options={[[14, '14 px'], [15, '15 px'], [16, '16 px (default)'], [17, '17 px'], [18, '18 px'], [20, '20 px']]} />
              <Select name="web_line_height_percent" label="Line spacing" options={[[120, 'Compact (120 %)'], [140, 'Normal (140 %)'], [160, 'Roomy (160 %)']]} />
              <Select name="user_list_style" label="User list style" options={[[1, 'Compact'], [2, 'With status'], [3, 'With avatar and status']]} />
              <Check name="twenty_four_hour_time" label="Use 24-hour time" />
              <Check name="display_emoji_reaction_users" label="Show who reacted instead of a count (3 reactions or fewer)" />
              <Check name="starred_message_counts" label="Show the number of starred messages" />
              <Check name="enable_drafts_synchronization" label="Save drafts on the server" />
              <Check name="send_stream_typing_notifications" label="Let others see when I am typing in channels" />
              <Check name="send_private_typing_notifications" label="Let others see when I am typing direct messages" />
            </div>
          )}
          {tab === 'notifications' && (
            <div class="stack">
              <p>
                Browser permission: <strong data-testid="notification-permission">{perm}</strong>{' '}
                {perm === 'default' && (
                  <button type="button" data-testid="enable-notifications" onClick={() => askNotificationPermission().then(setPerm).catch(showError)}>
                    Allow browser notifications
                  </button>
                )}
              </p>
              <Check name="enable_desktop_notifications" label="Desktop notifications for direct messages and mentions" />
              <Check name="pm_content_in_desktop_notifications" label="Include message content in direct-message notifications" />
              <Check name="enable_stream_desktop_notifications" label="Desktop notifications for channel messages" />
              <Check name="enable_sounds" label="Sounds for direct messages and mentions" />
              <Check name="enable_stream_audible_notifications" label="Sounds for channel messages" />
              <Check name="wildcard_mentions_notify" label="Notify for @all / @channel mentions" />
              <Check name="enable_offline_email_notifications" label="Email me direct messages and mentions when offline" />
              <Check name="enable_offline_push_notifications" label="Mobile notifications when offline" />
              <Check name="enable_digest_emails" label="Digest emails when I am away" />
            </div>
          )}
          {tab === 'muted' && <Muted />}
        </div>
      </div>
    </div>
  );
}
