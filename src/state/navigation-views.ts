import type { ParleyEvent } from '../events/types.js';
import { presentNavigationView, type NavigationViewObject } from '../domain/actions/navigation-views.js';
import { viewsOfUser } from '../store/navigation-views.js';
import type { StateModule } from './types.js';

/** `navigation_views` in /register, kept in step by navigation_view events. */
export const navigationViewsModule: StateModule = {
  fetchTypes: ['navigation_views'],
  async fetch(ctx) {
    return { navigation_views: (await viewsOfUser(ctx.app.db, ctx.user.id)).map(presentNavigationView) };
  },
  eventTypes: ['navigation_view'],
  apply(state: Record<string, unknown>, event: ParleyEvent) {
    const views = state.navigation_views as NavigationViewObject[] | undefined;
    if (!views) return;
    if (event.op === 'add') views.push(structuredClone(event.navigation_view as NavigationViewObject));
    else if (event.op === 'update') {
      const v = views.find((x) => x.fragment === event.fragment);
      if (v) Object.assign(v, event.data as Partial<NavigationViewObject>);
    } else if (event.op === 'remove') {
      const i = views.findIndex((x) => x.fragment === event.fragment);
      if (i >= 0) views.splice(i, 1);
    }
  },
};
