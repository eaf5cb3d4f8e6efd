// Browser notifications and the unread count in the tab title, per the user's
// settings (enable_desktop_notifications for DMs and mentions,
// enable_stream_desktop_notifications / a channel's desktop_notifications for channels).
import { channelName } from './store';
import type { State } from './store';
import type { Message, NarrowTerm } from './types';
import { dmPeers, routeToHash } from './narrow';
import type { NameLookup } from './narrow';

/** Just enough of a name lookup to build a link (names only decorate the hash). */
function lookupFor(s: State): NameLookup {
  return {
    myId: s.myId,
    channelName: (id) => channelName(s, id),
    userName: (id) => s.users.get(id)?.full_name,
    userEmail: (id) => s.users.get(id)?.email,
    channelId: () => undefined,
    userId: () => undefined,
  };
}

function textOf(html: string): string {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  return (doc.body.textContent ?? '').trim().slice(0, 200);
}

export function maybeNotify(s: State, m: Message): void {
  if (m.sender_id === s.myId || m.flags.includes('read')) return;
  if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
  if (document.hasFocus()) return;
  const mentioned = m.flags.some((f) => f === 'mentioned' || f === 'has_alert_word' || (f.includes('wildcard') && s.settings.wildcard_mentions_notify));
  let want: boolean;
  if (m.type === 'private' || mentioned) want = s.settings.enable_desktop_notifications;
  else {
    const sub = s.subs.get(m.stream_id!);
    want = (sub?.desktop_notifications ?? s.settings.enable_stream_desktop_notifications) === true;
  }
  if (!want) return;
  const title = m.type === 'private' ? m.sender_full_name : `${m.sender_full_name} (#${channelName(s, m.stream_id)} > ${m.subject})`;
  const showBody = m.type !== 'private' || s.settings.pm_content_in_desktop_notifications;
  try {
    const n = new Notification(title, { body: showBody ? textOf(m.content) : 'New direct message', tag: String(m.id) });
    n.onclick = () => {
      window.focus();
      n.close();
      const narrow: NarrowTerm[] =
        m.type === 'private'
          ? [{ operator: 'dm', operand: dmPeers(m, s.myId) }]
          : [{ operator: 'channel', operand: m.stream_id! }, { operator: 'topic', operand: m.subject }];
      location.hash = routeToHash({ view: 'feed', narrow, near: m.id }, lookupFor(s));
    };
  } catch {
    // Some browsers only allow notifications from a service worker; nothing to do then.
  }
}

/** Asks for permission; must be called from a click (a user gesture). */
export async function askNotificationPermission(): Promise<string> {
  if (typeof Notification === 'undefined') return 'unsupported';
  return Notification.requestPermission();
}
