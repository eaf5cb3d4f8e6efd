// The inline pass, modelled on how Zulip's Python-Markdown applies inline patterns:
// patterns run one after another in priority order over the whole text; a match is
// replaced by a placeholder, so later patterns never look inside it; the inner text of
// an element a pattern builds (e.g. **strong**) is processed only by the patterns of
// *lower* priority. This ordering is what makes `**https://x.io**` stay unlinked and
// keeps mentions and link labels free of emphasis, exactly as Zulip renders them.
import { escapeText } from './html.js';
import type { RenderState } from './types.js';

/** What a pattern produces for a match. */
export type InlineNode =
  | { kind: 'html'; html: string } // final, already-escaped HTML (code, KaTeX, emoji...)
  | { kind: 'text'; text: string } // atomic text: escaped on output, never re-processed
  | { kind: 'element'; open: string; inner: string; close: string }; // inner is processed further

export interface PatternMatch {
  index: number;
  end: number;
  groups: (string | undefined)[];
  named: Record<string, string | undefined>;
}

export interface HandleResult {
  node: InlineNode;
  /** Replace [start, end) instead of the whole match (defaults to the match). */
  start?: number;
  end?: number;
}

export interface InlinePattern {
  name: string;
  /** Finds the next candidate at or after `from`. */
  find(text: string, from: number): PatternMatch | null;
  /** Returns null when the candidate is not a match after all (text stays untouched). */
  handle(m: PatternMatch, text: string, run: InlineRun): HandleResult | null;
}

/** Wraps a regular expression (compiled with the "g" flag) as a finder. */
export function regexFinder(re: RegExp, precheck?: RegExp): InlinePattern['find'] {
  return (text, from) => {
    if (precheck && !precheck.test(text)) return null;
    re.lastIndex = from;
    const m = re.exec(text);
    if (!m) return null;
    return { index: m.index, end: m.index + m[0].length, groups: [...m], named: m.groups ?? {} };
  };
}

const PLACEHOLDER_RE = /\u0002klzzwxh:(\d{4,})\u0003/g;

/** One inline run: the stash of nodes plus the render state, for one block's text. */
export class InlineRun {
  private readonly stash: InlineNode[] = [];
  constructor(
    readonly state: RenderState,
    private readonly patterns: readonly InlinePattern[],
  ) {}

  /** Renders `source` (raw Markdown of one paragraph, heading, cell...) to HTML. */
  render(source: string): string {
    return this.expand(this.process(source, 0));
  }

  /** Applies the patterns from `startIndex` on; returns text with placeholders. */
  process(source: string, startIndex: number): string {
    let data = source;
    for (let p = startIndex; p < this.patterns.length; p++) {
      const pattern = this.patterns[p]!;
      let from = 0;
      while (from <= data.length) {
        const m = pattern.find(data, from);
        if (!m) break;
        const r = pattern.handle(m, data, this);
        if (!r) {
          from = m.end > m.index ? m.end : m.index + 1;
          continue;
        }
        let node = r.node;
        if (node.kind === 'element') {
          node = { ...node, inner: this.process(node.inner, p + 1) };
        }
        const placeholder = this.store(node);
        const start = r.start ?? m.index;
        const end = r.end ?? m.end;
        data = data.slice(0, start) + placeholder + data.slice(end);
        from = start + placeholder.length;
      }
    }
    return data;
  }

  /** Stashes a node; the returned placeholder stands for it in the text. */
  store(node: InlineNode): string {
    this.stash.push(node);
    return `\u0002klzzwxh:${String(this.stash.length - 1).padStart(4, '0')}\u0003`;
  }

  /** Turns processed text into HTML: text is escaped, placeholders become their nodes. */
  expand(data: string): string {
    let out = '';
    let last = 0;
    PLACEHOLDER_RE.lastIndex = 0;
    for (let m = PLACEHOLDER_RE.exec(data); m; m = PLACEHOLDER_RE.exec(data)) {
      out += escapeText(data.slice(last, m.index));
      out += this.expandNode(Number(m[1]));
      last = m.index + m[0].length;
      PLACEHOLDER_RE.lastIndex = last;
    }
    return out + escapeText(data.slice(last));
  }

  private expandNode(id: number): string {
    const node = this.stash[id];
    if (!node) return '';
    switch (node.kind) {
      case 'html':
        return node.html;
      case 'text':
        return escapeText(node.text);
      case 'element':
        return node.open + this.expand(node.inner) + node.close;
    }
  }
}
