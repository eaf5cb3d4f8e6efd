/**
 * A /register value already serialized (performance.md P3): the JSON text of
 * a state key, built from per-realm parts serialized once per realm
 * generation. A module returns one only when the registration asked for
 * fragments (RegisterContext.jsonFragments: the POST /register endpoint);
 * anything that needs the value as objects (events raced in at registration,
 * module tests) gets JSON.parse of the same text, which is the same value in
 * the same key order.
 */
export class JsonFragment {
  constructor(readonly json: string) {}
}

/** The value of a state key as objects (a fragment parsed, anything else as is). */
export function materialize(v: unknown): unknown {
  return v instanceof JsonFragment ? JSON.parse(v.json) : v;
}

/** Replaces every fragment of a state by its value, in place (keys keep their order). */
export function materializeState(state: Record<string, unknown>): void {
  for (const k of Object.keys(state)) {
    const v = state[k];
    if (v instanceof JsonFragment) state[k] = JSON.parse(v.json);
  }
}

/** The fragment, or its value when the registration did not ask for fragments. */
export function fragmentOr(jsonFragments: boolean | undefined, json: string): unknown {
  return jsonFragments ? new JsonFragment(json) : JSON.parse(json);
}

/**
 * JSON.stringify(obj) for a flat object whose values may be fragments: the
 * same text, with each fragment's JSON spliced in. Keys whose value
 * JSON.stringify leaves out (undefined, functions, symbols) are left out.
 */
export function stringifyWithFragments(obj: Record<string, unknown>): string {
  let out = '{';
  let first = true;
  for (const k of Object.keys(obj)) {
    const v = obj[k];
    const text = v instanceof JsonFragment ? v.json : JSON.stringify(v);
    if (text === undefined) continue;
    out += (first ? '' : ',') + JSON.stringify(k) + ':' + text;
    first = false;
  }
  return out + '}';
}
