import { readFileSync } from 'node:fs';

/**
 * Checks a JSON answer against the field lists of the Zulip mobile app's
 * decoders (test/support/flutter-fields.json: which keys each zulip-flutter
 * class reads without a null check, their JSON types and accepted enum
 * values). A problem here is a key whose absence or type would make the app's
 * decoder throw, i.e. the app shows an error instead of the organization.
 */
interface FieldSpec {
  readonly type: string;
  readonly required: boolean;
  readonly nullable?: boolean;
  readonly items?: string;
  readonly itemEnum?: readonly (string | number)[];
  readonly values?: string;
  readonly intKeys?: boolean;
  readonly class?: string;
  readonly enum?: readonly (string | number)[];
  readonly unknownOk?: boolean;
  readonly format?: string;
  readonly byProperty?: Record<string, string>;
  /** Keys of the enclosing object the app copies into this one before decoding it. */
  readonly mergeFromParent?: readonly string[];
}
type ClassSpec = Record<string, FieldSpec> & { _dispatch?: { key: string; map: Record<string, string> } };
interface FieldsFile {
  readonly classes: Record<string, ClassSpec>;
  readonly events: Record<string, string | Record<string, string>>;
}

export const flutterFields: FieldsFile = JSON.parse(readFileSync(new URL('./flutter-fields.json', import.meta.url), 'utf8'));

const PRIMITIVES = new Set(['int', 'strictInt', 'number', 'string', 'boolean', 'any', 'hexcolor', 'group_setting', 'string[]']);

function checkPrimitive(type: string, v: unknown): boolean {
  switch (type) {
    // Generated decoders read `(x as num).toInt()`: any JSON number decodes.
    case 'int': return typeof v === 'number' && Number.isFinite(v);
    // Hand-written ones read `x as int`: a fraction throws.
    case 'strictInt': return typeof v === 'number' && Number.isInteger(v);
    case 'number': return typeof v === 'number';
    case 'string': return typeof v === 'string';
    case 'boolean': return typeof v === 'boolean';
    case 'hexcolor': return typeof v === 'string' && /^#[0-9a-f]{6}$/.test(v);
    case 'any': return true;
    case 'string[]': return Array.isArray(v) && v.every((x) => typeof x === 'string');
    case 'group_setting':
      return (typeof v === 'number' && Number.isInteger(v)) ||
        (isObject(v) && Array.isArray(v.direct_members) && Array.isArray(v.direct_subgroups) &&
          [...v.direct_members, ...v.direct_subgroups].every((x) => typeof x === 'number'));
    default: throw new Error(`unknown primitive ${type}`);
  }
}

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every problem found decoding `value` as zulip-flutter's class `cls`; [] when it decodes. */
export function decodeProblems(cls: string, value: unknown, path = cls): string[] {
  if (PRIMITIVES.has(cls)) return checkPrimitive(cls, value) ? [] : [`${path}: expected ${cls}, got ${JSON.stringify(value)}`];
  const spec = flutterFields.classes[cls];
  if (!spec) throw new Error(`no field list for ${cls}`);
  if (!isObject(value)) return [`${path}: expected an object for ${cls}`];
  if (spec._dispatch) {
    const target = spec._dispatch.map[String(value[spec._dispatch.key])];
    return target ? decodeProblems(target, value, path) : [`${path}.${spec._dispatch.key}: unexpected ${JSON.stringify(value[spec._dispatch.key])}`];
  }
  const problems: string[] = [];
  for (const [key, f] of Object.entries(spec) as [string, FieldSpec][]) {
    if (key.startsWith('_')) continue;
    const v = value[key];
    const p = `${path}.${key}`;
    if (v === undefined || v === null) {
      if (f.required) problems.push(`${p}: missing (required ${f.type})`);
      continue;
    }
    problems.push(...fieldProblems(f, v, p, value));
  }
  return problems;
}

function fieldProblems(f: FieldSpec, v: unknown, p: string, parent: Record<string, any>): string[] {
  if (f.enum) {
    if (!f.unknownOk && !f.enum.includes(v as string | number)) return [`${p}: ${JSON.stringify(v)} not among ${JSON.stringify(f.enum)}`];
  }
  if (f.byProperty) {
    const t = f.byProperty[String(parent.property)];
    if (!t) return [];
    if (t.endsWith('?') && v === null) return [];
    return decodeProblems(t.replace(/\?$/, ''), v, p);
  }
  if (f.format === 'hexcolor') return checkPrimitive('hexcolor', v) ? [] : [`${p}: expected #rrggbb, got ${JSON.stringify(v)}`];
  if (f.class) {
    const merged = f.mergeFromParent && isObject(v) ? { ...v, ...Object.fromEntries(f.mergeFromParent.map((k) => [k, parent[k]])) } : v;
    return decodeProblems(f.class, merged, p);
  }
  switch (f.type) {
    case 'array': {
      if (!Array.isArray(v)) return [`${p}: expected an array`];
      const out: string[] = [];
      v.forEach((item, i) => {
        if (f.itemEnum) {
          if (!f.unknownOk && !f.itemEnum.includes(item)) out.push(`${p}[${i}]: ${JSON.stringify(item)} not accepted`);
        } else if (f.items && f.items !== 'enum') out.push(...decodeProblems(f.items, item, `${p}[${i}]`));
      });
      return out;
    }
    case 'object': {
      if (!isObject(v)) return [`${p}: expected an object`];
      const out: string[] = [];
      for (const [k, item] of Object.entries(v)) {
        if (f.intKeys && !/^\d+$/.test(k)) out.push(`${p}: key ${k} is not an integer`);
        if (f.values) out.push(...decodeProblems(f.values === 'List' ? 'string[]' : f.values, item, `${p}.${k}`));
      }
      return out;
    }
    case 'Object': return [];
    default:
      return checkPrimitive(f.type, v) ? [] : [`${p}: expected ${f.type}, got ${JSON.stringify(v)}`];
  }
}

/** Problems decoding one event as the app's Event.fromJson would (unknown types decode as UnexpectedEvent). */
export function eventProblems(event: Record<string, any>): string[] {
  const p = `event(${event.type}${event.op ? '/' + event.op : ''})`;
  if (!Number.isInteger(event.id)) return [`${p}.id: missing`];
  if (typeof event.type !== 'string') return [`${p}.type: missing`];
  const entry = flutterFields.events[event.type];
  if (entry === undefined) return [];
  if (typeof entry === 'string') return decodeProblems(entry, event, p);
  if (typeof event.op !== 'string') return [`${p}.op: missing`];
  const cls = entry[event.op];
  return cls ? decodeProblems(cls, event, p) : [];
}

/** The app's decoder class for an event, or undefined when it decodes as UnexpectedEvent. */
export function eventClass(event: { type: string; op?: string }): string | undefined {
  const entry = flutterFields.events[event.type];
  if (entry === undefined || typeof entry === 'string') return entry;
  return event.op === undefined ? undefined : entry[event.op];
}
