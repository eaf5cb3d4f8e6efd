import type { KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

/**
 * Watches every statement for writes (INSERT/UPDATE/DELETE) to the given
 * tables and counts them. Caches derived from those tables (the auth cache)
 * compare the counter around a transaction and drop their entries when it
 * moved, so no write path can forget to invalidate them.
 */
export class WriteWatchPlugin implements KyselyPlugin {
  /** Increases on every watched write; read it before and after a unit of work. */
  writes = 0;
  private readonly listeners: (() => void)[] = [];
  /** Per raw statement's fragments (held weakly: sql.raw makes a new array each time). */
  private readonly rawSeen = new WeakMap<readonly string[], boolean>();
  constructor(private readonly tables: ReadonlySet<string>) {}

  onWrite(fn: () => void): void {
    this.listeners.push(fn);
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node;
    if (node.kind === 'InsertQueryNode' || node.kind === 'UpdateQueryNode' || node.kind === 'DeleteQueryNode') {
      if (this.touches(node)) this.bump();
    } else if (node.kind === 'RawNode' && this.rawTouches(node)) this.bump();
    return node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }

  /** A write made by another process (cross-process invalidation): the same effect as a local one. */
  notify(): void {
    this.bump();
  }

  private bump(): void {
    this.writes++;
    for (const l of this.listeners) l();
  }

  /**
   * A raw statement (sql`...`: the batch insert of a send's user_messages rows
   * is one, and on PostgreSQL a send's message and rows are one WITH statement)
   * writes a watched table when its text has INSERT INTO / UPDATE / DELETE FROM
   * that table anywhere, a data-modifying CTE included. A match inside a string
   * literal only drops a cache entry too many, never one too few.
   */
  private rawTouches(node: RootOperationNode): boolean {
    const fragments = (node as unknown as { sqlFragments: readonly string[] }).sqlFragments;
    // The fragments of a sql`...` call site are one frozen array for the life of the process
    // (Kysely keeps the template's array), so the answer is found once per statement text and
    // remembered: the expression below was about 1% of the server's CPU under P8's sends.
    let touches = this.rawSeen.get(fragments);
    if (touches === undefined) {
      touches = false;
      for (const m of fragments.join(' ').matchAll(/\b(?:insert\s+(?:or\s+\w+\s+)?into|update|delete\s+from)\s+"?(\w+)/gi)) {
        if (this.tables.has(m[1]!.toLowerCase())) {
          touches = true;
          break;
        }
      }
      this.rawSeen.set(fragments, touches);
    }
    return touches;
  }

  private touches(node: RootOperationNode): boolean {
    const names: string[] = [];
    const collect = (n: OperationNode | undefined): void => {
      if (!n) return;
      if (n.kind === 'TableNode') names.push((n as unknown as { table: { identifier: { name: string } } }).table.identifier.name);
      else if (n.kind === 'AliasNode') collect((n as unknown as { node: OperationNode }).node);
    };
    if (node.kind === 'InsertQueryNode') collect((node as unknown as { into: OperationNode }).into);
    if (node.kind === 'UpdateQueryNode') collect((node as unknown as { table: OperationNode }).table);
    if (node.kind === 'DeleteQueryNode') for (const f of (node as unknown as { from: { froms: OperationNode[] } }).from.froms) collect(f);
    return names.some((n) => this.tables.has(n));
  }
}
