// A small example realm (users, groups, channels, a custom emoji, two linkifiers) used by
// the unit tests and the bench; it mirrors the examples in the Markdown spec.
import { emptyMarkdownContext } from './index.js';
import type { MarkdownContext } from './types.js';

export const REALM = 'http://127.0.0.1:9991';

const users = [
  { id: 31, fullName: 'Full Name', isActive: true },
  { id: 32, fullName: 'Iago', isActive: true },
  { id: 33, fullName: 'Gone User', isActive: false },
  { id: 34, fullName: 'Zoë Ünïcode', isActive: true },
];
const groups = [
  { id: 17, name: 'group name' },
  { id: 18, name: 'old team', deactivated: true },
  { id: 19, name: 'Administrators', isSystemGroup: true },
];
const channels = [
  { id: 9, name: 'ops' },
  { id: 10, name: 'R&D' },
  { id: 11, name: 'café talk' },
];

export function exampleMarkdownContext(overrides: Partial<MarkdownContext> = {}): MarkdownContext {
  return {
    ...emptyMarkdownContext(REALM),
    sender: { id: 32, translateEmoticons: false },
    users: {
      byId: (id) => users.find((u) => u.id === id),
      byName: (name) => users.filter((u) => u.fullName.toLowerCase() === name.toLowerCase()),
    },
    groups: {
      byName: (name) =>
        groups.find((g) => g.name.toLowerCase() === name.toLowerCase() || (g.isSystemGroup && name === 'role:administrators')),
    },
    channels: {
      byName: (name) => channels.find((c) => c.name === name),
      byId: (id) => channels.find((c) => c.id === id),
    },
    customEmoji: {
      byName: (name) => (name === 'party_parrot' ? { id: '7', name, sourceUrl: '/user_avatars/2/emoji/images/7.gif' } : undefined),
    },
    linkifiers: [
      { id: 1, pattern: '#(?P<id>[0-9]+)', urlTemplate: 'https://trac.example.com/ticket/{id}' },
      { id: 2, pattern: 'ZUL-(?P<id>[0-9]+)', urlTemplate: 'https://jira.example.com/browse/ZUL-{id}' },
    ],
    ...overrides,
  };
}
