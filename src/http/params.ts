import { z } from 'zod';
import { badRequest, confusingArguments, missingArgument, notFound } from '../domain/errors.js';

/**
 * Zulip's wire types, declared once per endpoint. A declaration says how a
 * parameter arrives (raw string or JSON-encoded), its zod schema, whether it is
 * required, its default and aliases. parseParams() decodes a request, reports
 * the first problem in Zulip's wording, and records which keys were read so the
 * success response can list the rest in ignored_parameters_unsupported.
 */
export type Wire = 'raw' | 'json';

export class Param<T> {
  constructor(
    readonly wire: Wire,
    readonly schema: z.ZodType,
    readonly required: boolean,
    readonly defaultValue: unknown,
    readonly aliases: readonly string[] = [],
    /** zulip-js joins integer lists with commas in query strings; accept "1,2" too. */
    readonly commaList = false,
    /** Parameter comes from the URL path (never counted as ignored). */
    readonly inPath = false,
    /**
     * A row id (or a list of them) taken from the request: declared with
     * p.id / p.idList / p.pathId so that test/security/id-bounds.test.ts finds
     * it and sends it hostile values (0, -1, 2^31, 2^53, 1e3, "abc", 300 digits).
     * Handlers look such ids up only through isPossibleId (domain/rules/ids.ts),
     * usually inside the access helper, so that an id no row can have gets the
     * resource's "does not exist" error and never reaches PostgreSQL.
     */
    readonly idKind: 'id' | 'idList' | undefined = undefined,
  ) {}
  /** Optional with no default: undefined when absent. */
  optional(): Param<T | undefined> {
    return new Param<T | undefined>(this.wire, this.schema, false, undefined, this.aliases, this.commaList, this.inPath, this.idKind);
  }
  /** Optional with a default used when absent. */
  default(value: T): Param<T> {
    return new Param<T>(this.wire, this.schema, false, value, this.aliases, this.commaList, this.inPath, this.idKind);
  }
  /** Other names the parameter may arrive under (e.g. subject for topic). */
  alias(...names: string[]): Param<T> {
    return new Param<T>(this.wire, this.schema, this.required, this.defaultValue, [...this.aliases, ...names], this.commaList, this.inPath, this.idKind);
  }
}

export type ParamDefs = Record<string, Param<any>>;
export type Infer<P extends ParamDefs> = { [K in keyof P]: P[K] extends Param<infer T> ? T : never };

const json = <S extends z.ZodType>(schema: S): Param<z.output<S>> => new Param('json', schema, true, undefined);

/** Declarations for the wire types Zulip uses. */
export const p = {
  /** A raw string (sent unencoded). */
  str: (schema: z.ZodType<string> = z.string()): Param<string> => new Param<string>('raw', schema, true, undefined),
  /** A raw string that must be one of these values ("Invalid {var}"). */
  oneOf: <const T extends readonly [string, ...string[]]>(values: T): Param<T[number]> => new Param('raw', z.enum(values), true, undefined),
  /** A JSON-encoded value checked by the schema. */
  json,
  bool: (): Param<boolean> => json(z.boolean()),
  int: (): Param<number> => json(z.int()),
  /** A JSON integer restricted to a set, with Zulip's custom-validator message. */
  intIn: (values: readonly number[]): Param<number> =>
    json(z.int().refine((v) => values.includes(v), { message: 'Invalid {var}: Value error, Not in the list of possible values' })),
  intList: (): Param<number[]> => {
    const base = json(z.array(z.int()));
    return new Param<number[]>('json', base.schema, true, undefined, [], true);
  },
  /** An integer path segment that is not a row id. */
  pathInt: (): Param<number> => new Param<number>('json', z.int(), true, undefined, [], false, true),
  /** A row id from the URL path (digits only, else an unknown URL). */
  pathId: (): Param<number> => new Param<number>('json', z.int(), true, undefined, [], false, true, 'id'),
  /** A JSON-encoded row id. */
  id: (schema: z.ZodType<number> = z.int()): Param<number> => new Param<number>('json', schema, true, undefined, [], false, false, 'id'),
  /** A JSON list of row ids (also "1,2" in query strings, as zulip-js sends them). */
  idList: (): Param<number[]> => new Param<number[]>('json', z.array(z.int()), true, undefined, [], true, false, 'idList'),
  /** A JSON-encoded row id that may be null (e.g. "no folder"). */
  nullableId: (): Param<number | null> => new Param<number | null>('json', z.int().nullable(), true, undefined, [], false, false, 'id'),
  pathStr: (): Param<string> => new Param<string>('raw', z.string(), true, undefined, [], false, true),
};

function varPath(name: string, path: readonly PropertyKey[]): string {
  let out = name;
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : `[${JSON.stringify(String(seg))}]`;
  return out;
}

/** Turns the first zod issue into Zulip's message for it. */
export function issueMessage(name: string, issue: z.core.$ZodIssue): string {
  const v = varPath(name, issue.path);
  switch (issue.code) {
    case 'invalid_type': {
      if ((issue as { input?: unknown }).input === undefined && issue.path.length > 0) return `${v} field is missing`;
      switch (issue.expected) {
        case 'boolean':
          return `${v} is not a boolean`;
        case 'number':
        case 'int':
        case 'bigint':
          return `${v} is not an integer`;
        case 'string':
          return `${v} is not a string`;
        case 'array':
        case 'tuple':
          return `${v} is not a list`;
        case 'object':
        case 'record':
        case 'map':
          return `${v} is not a dict`;
        case 'date':
          return `${v} is not a date`;
        default:
          return `Invalid ${v}`;
      }
    }
    case 'too_big':
      if (issue.origin === 'string') return `${v} is too long (limit: ${String(issue.maximum)} characters)`;
      if (issue.origin === 'array') return `${v} is too long (limit: ${String(issue.maximum)} items)`;
      return `${v} is too large`;
    case 'too_small':
      if (issue.origin === 'string') return Number(issue.minimum) === 1 ? `${v} cannot be blank` : `${v} is too short.`;
      if (issue.origin === 'array') return `${v} is too short.`;
      return `${v} is too small`;
    case 'unrecognized_keys':
      return `Argument "${issue.keys[0]}" at ${v} is unexpected`;
    case 'invalid_format':
      return `${v} has invalid format`;
    case 'custom':
      return issue.message && issue.message.includes('{var}') ? issue.message.replaceAll('{var}', v) : issue.message && issue.message !== 'Invalid input' ? issue.message : `Invalid ${v}`;
    default:
      return `Invalid ${v}`;
  }
}

/** A request's parameters: form or multipart body fields, query string and path. */
export interface ParamSource {
  readonly body: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  readonly path: Readonly<Record<string, string>>;
}

export interface Parsed<T> {
  readonly values: T;
  /** Sorted keys present in the request that no declaration read. */
  readonly ignored: string[];
}

function decodeJson(name: string, raw: string, commaList: boolean): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    if (commaList && /^\s*-?\d+(\s*,\s*-?\d+)*\s*$/.test(raw)) return raw.split(',').map((s) => Number(s.trim()));
    throw badRequest(`${name} is not valid JSON`);
  }
}

/**
 * A parser for one endpoint's declarations, prepared once when the route is
 * mounted: the declarations' names and aliases are listed up front, so a
 * request allocates only its values (and, when some were sent, the ignored
 * keys). The same answers as parseParams, in the same order of checks.
 */
export function paramParser<P extends ParamDefs>(defs: P): (src: ParamSource) => Parsed<Infer<P>> {
  const entries = Object.entries(defs).map(([name, def]) => ({ name, def, names: [name, ...def.aliases] as readonly string[] }));
  const read = new Set<string>();
  for (const e of entries) if (!e.def.inPath) for (const n of e.names) read.add(n);
  return (src) => {
    const values: Record<string, unknown> = {};
    for (let i = 0; i < entries.length; i++) {
      const { name, def, names } = entries[i]!;
      if (def.inPath) {
        const raw = src.path[name];
        // Zulip's URL patterns only match digits for integer ids; anything else is an unknown URL.
        if (raw === undefined || (def.wire === 'json' && !/^\d{1,15}$/.test(raw))) throw notFound();
        // A NUL byte names nothing (and PostgreSQL refuses it in text): an unknown URL.
        if (raw.includes('\0')) throw notFound();
        values[name] = def.wire === 'json' ? Number(raw) : raw;
        continue;
      }
      let key: string | undefined;
      for (const candidate of names) {
        if (candidate in src.body || candidate in src.query) {
          if (key !== undefined) throw confusingArguments(key, candidate);
          key = candidate;
        }
      }
      if (key === undefined) {
        if (def.required) throw missingArgument(name);
        values[name] = def.defaultValue;
        continue;
      }
      const raw = key in src.body ? src.body[key]! : src.query[key]!;
      const decoded = def.wire === 'json' ? decodeJson(key, raw, def.commaList) : raw;
      const result = def.schema.safeParse(decoded, { reportInput: true });
      if (!result.success) throw badRequest(issueMessage(key, result.error.issues[0]!));
      values[name] = result.data;
    }
    return { values: values as Infer<P>, ignored: ignoredKeys(read, src) };
  };
}

const NONE_IGNORED = Object.freeze([]) as unknown as string[];

/** Sorted keys of the body and query string that no declaration read (shared empty list when none). */
function ignoredKeys(read: ReadonlySet<string>, src: ParamSource): string[] {
  let ignored: Set<string> | undefined;
  for (const k in src.body) if (!read.has(k)) (ignored ??= new Set()).add(k);
  for (const k in src.query) if (!read.has(k)) (ignored ??= new Set()).add(k);
  return ignored ? [...ignored].sort() : NONE_IGNORED;
}

export function parseParams<P extends ParamDefs>(defs: P, src: ParamSource): Parsed<Infer<P>> {
  return paramParser(defs)(src);
}
