import type { StateModule } from './types.js';
import { sharedChannels, sharedUserTopics } from './shared.js';
import { foldersInRealm, realmDomainRows } from '../store/channel-extras.js';
import { presentChannelFolder } from '../presenters/channel-folder.js';
import { mutedTopicTriples, presentUserTopic } from '../domain/actions/user-topics.js';
import { EMPTY_TOPIC_FALLBACK_NAME } from '../domain/rules/limits.js';

type Dict = Record<string, any>;

/** `channel_folders`: every folder, archived ones included, by order (as Zulip's get_channel_folders_in_realm(.., True)). */
export const channelFoldersModule: StateModule = {
  fetchTypes: ['channel_folders'],
  async fetch(ctx) {
    return { channel_folders: (await foldersInRealm(ctx.app.db, ctx.user.realmId)).map(presentChannelFolder) };
  },
  eventTypes: ['channel_folder'],
  apply(state, e) {
    const folders = state.channel_folders as Dict[];
    if (e.op === 'add') {
      folders.push(structuredClone(e.channel_folder as Dict));
      folders.sort((a, b) => a.order - b.order || a.id - b.id);
    } else if (e.op === 'update') {
      for (const f of folders) if (f.id === e.channel_folder_id) Object.assign(f, e.data as Dict);
    } else if (e.op === 'reorder') {
      const order = e.order as number[];
      for (const f of folders) f.order = order.indexOf(f.id);
      folders.sort((a, b) => a.order - b.order);
    }
  },
};

/** `user_topics`, in creation order; the empty topic is "general chat" for clients without empty_topic_name. */
export const userTopicsModule: StateModule = {
  fetchTypes: ['user_topic'],
  async fetch(ctx) {
    const [rows, channels] = await Promise.all([sharedUserTopics(ctx), sharedChannels(ctx)]);
    const active = new Set(channels.filter((c) => !c.deactivated).map((c) => c.id));
    return {
      user_topics: rows
        .filter((r) => active.has(r.channel_id))
        .map((r) => {
          const t = presentUserTopic(r);
          if (t.topic_name === '' && !ctx.capabilities.empty_topic_name) t.topic_name = EMPTY_TOPIC_FALLBACK_NAME;
          return t;
        }),
    };
  },
  eventTypes: ['user_topic'],
  apply(state, e, view) {
    const list = state.user_topics as Dict[];
    let topic = e.topic_name as string;
    if (topic === '' && !view.capabilities.empty_topic_name) topic = EMPTY_TOPIC_FALLBACK_NAME;
    const idx = list.findIndex((t) => t.stream_id === e.stream_id && String(t.topic_name).toLowerCase() === topic.toLowerCase());
    if (e.visibility_policy === 0) {
      if (idx >= 0) list.splice(idx, 1);
      return;
    }
    const entry = { stream_id: e.stream_id, topic_name: topic, last_updated: e.last_updated, visibility_policy: e.visibility_policy };
    if (idx >= 0) list[idx] = { ...entry, topic_name: list[idx]!.topic_name };
    else list.push(entry);
  },
};

/** The legacy `muted_topics` triples, for clients that do not ask for user_topic. */
export const mutedTopicsModule: StateModule = {
  fetchTypes: ['muted_topics'],
  async fetch(ctx) {
    // Zulip: clients that list user_topic get the legacy key only from older servers.
    // (want() answers true for everything when no fetch types were given at all.)
    const everything = ctx.want('\u0000no such type');
    if (!everything && ctx.want('user_topic')) return {};
    return { muted_topics: await mutedTopicTriples(ctx.app.db, ctx.user.id) };
  },
  eventTypes: ['muted_topics'],
  apply(state, e) {
    if (!('muted_topics' in state)) return;
    state.muted_topics = structuredClone(e.muted_topics);
  },
};

/** `realm_domains`: the allowed email domains. */
export const realmDomainsModule: StateModule = {
  fetchTypes: ['realm_domains'],
  async fetch(ctx) {
    const rows = await realmDomainRows(ctx.app.db, ctx.user.realmId);
    return { realm_domains: rows.map((r) => ({ domain: r.domain, allow_subdomains: r.allow_subdomains === 1 })) };
  },
  eventTypes: ['realm_domains'],
  apply(state, e) {
    const list = state.realm_domains as Dict[];
    if (e.op === 'add') {
      list.push({ ...(e.realm_domain as Dict) });
      list.sort((a, b) => (a.domain < b.domain ? -1 : 1));
    } else if (e.op === 'change') {
      for (const d of list) if (d.domain === (e.realm_domain as Dict).domain) d.allow_subdomains = (e.realm_domain as Dict).allow_subdomains;
    } else if (e.op === 'remove') state.realm_domains = list.filter((d) => d.domain !== e.domain);
  },
};
