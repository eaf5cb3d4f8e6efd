// Serialises markdown-it's block tokens the way Python-Markdown's ElementTree output
// looks (spec §1): every block element is followed by "\n" inside its parent; a
// container whose first child is a block gets "\n" right after its opening tag; a tight
// list item's text sits directly after <li> ("<li>a<ul>\n...</ul>\n</li>").
import type Token from 'markdown-it/lib/token.mjs';
import { renderCodeBlock } from './code.js';
import { element, openTag } from './html.js';
import { InlineRun, type InlinePattern } from './inline-engine.js';
import { renderDisplayMath } from './math.js';
import type { PreviewBlock } from './previews.js';
import type { RenderState } from './types.js';

interface Item { block: boolean; html: string }

export class BlockRenderer {
  /** Paragraphs whose links may get previews; their HTML holds "\u0001<n>\u0001" markers. */
  readonly previewBlocks: PreviewBlock[] = [];

  constructor(
    private readonly state: RenderState,
    private readonly patterns: readonly InlinePattern[],
  ) {}

  renderInline(content: string): string {
    return new InlineRun(this.state, this.patterns).render(content);
  }

  /** Top level: blocks separated by single newlines, no trailing newline. */
  renderDocument(tokens: Token[]): string {
    const { items } = this.renderSiblings(tokens, 0);
    return items.map((i) => i.html).join('\n');
  }

  private container(open: string, items: Item[], close: string): string {
    let out = open;
    if (items[0]?.block) out += '\n';
    for (const it of items) out += it.block ? it.html + '\n' : it.html;
    return out + close;
  }

  /** Renders tokens from `i` until the closing token of the enclosing container. */
  private renderSiblings(tokens: Token[], i: number): { items: Item[]; next: number } {
    const items: Item[] = [];
    while (i < tokens.length && tokens[i]!.nesting !== -1) {
      const r = this.renderOne(tokens, i);
      if (r.item) items.push(r.item);
      i = r.next;
    }
    return { items, next: i + 1 };
  }

  private renderChildren(tokens: Token[], i: number, open: string, close: string): { item: Item; next: number } {
    const { items, next } = this.renderSiblings(tokens, i + 1);
    return { item: { block: true, html: this.container(open, items, close) }, next };
  }

  private renderOne(tokens: Token[], i: number): { item?: Item; next: number } {
    const t = tokens[i]!;
    switch (t.type) {
      case 'paragraph_open': {
        const content = tokens[i + 1]!.content;
        const collect = this.state.ctx.inlineImagePreview && this.state.quoteDepth === 0;
        this.state.previewLinks = collect ? [] : null;
        const inline = this.renderInline(content);
        let html = t.hidden ? inline : `<p>${inline}</p>`;
        const links = this.state.previewLinks;
        this.state.previewLinks = null;
        if (links && links.length) {
          const bareUrlOnly = links.length === 1 && links[0]!.label === undefined && /^\S+$/.test(content.trim());
          this.previewBlocks.push({ html, bareUrlOnly, candidates: links, kind: t.hidden ? 'li' : 'p' });
          html = `\u0001${this.previewBlocks.length - 1}\u0001`;
        }
        return { item: { block: !t.hidden, html }, next: i + 3 };
      }
      case 'heading_open':
        return { item: { block: true, html: element(t.tag, undefined, this.renderInline(tokens[i + 1]!.content)) }, next: i + 3 };
      case 'hr':
        return { item: { block: true, html: '<hr>' }, next: i + 1 };
      case 'code_block':
        return { item: { block: true, html: renderCodeBlock(t.content.replace(/\s+$/, ''), '') }, next: i + 1 };
      case 'fence':
        return { item: { block: true, html: renderCodeBlock(t.content, t.info) }, next: i + 1 };
      case 'zmath':
        return { item: { block: true, html: renderDisplayMath(t.content).join('\n') }, next: i + 1 };
      case 'blockquote_open': {
        this.state.quoteDepth++;
        try {
          return this.renderChildren(tokens, i, '<blockquote>', '</blockquote>');
        } finally {
          this.state.quoteDepth--;
        }
      }
      case 'zspoiler_open': {
        const header = t.info ? `<p>${this.renderInline(t.info)}</p>\n` : '';
        const { items, next } = this.renderSiblings(tokens, i + 1);
        const body = items.map((it) => it.html + '\n').join('');
        const html = `<div class="spoiler-block"><div class="spoiler-header">\n${header}</div>`
          + `<div class="spoiler-content" aria-hidden="true">\n${body}</div></div>`;
        return { item: { block: true, html }, next };
      }
      case 'bullet_list_open':
        return this.renderChildren(tokens, i, '<ul>', '</ul>');
      case 'ordered_list_open': {
        const start = t.attrGet('start');
        return this.renderChildren(tokens, i, start ? openTag('ol', { start }) : '<ol>', '</ol>');
      }
      case 'list_item_open':
        return this.renderChildren(tokens, i, '<li>', '</li>');
      case 'table_open':
        return this.renderTable(tokens, i);
      default:
        return { next: i + 1 };
    }
  }

  /** Tables always have <thead> and <tbody>; alignment becomes "text-align: x;". */
  private renderTable(tokens: Token[], i: number): { item: Item; next: number } {
    const head: string[] = [];
    const body: string[] = [];
    let rows = head;
    let cells: Item[] = [];
    let j = i + 1;
    for (; j < tokens.length && tokens[j]!.type !== 'table_close'; j++) {
      const t = tokens[j]!;
      if (t.type === 'tbody_open') rows = body;
      else if (t.type === 'tr_open') cells = [];
      else if (t.type === 'tr_close') rows.push(this.container('<tr>', cells, '</tr>'));
      else if (t.type === 'th_open' || t.type === 'td_open') {
        const align = /text-align:(\w+)/.exec(t.attrGet('style') ?? '')?.[1];
        const attrs = align ? { style: `text-align: ${align};` } : undefined;
        cells.push({ block: true, html: element(t.tag, attrs, this.renderInline(tokens[j + 1]!.content)) });
        j += 2;
      }
    }
    const section = (tag: string, r: string[]) => this.container(`<${tag}>`, r.map((html) => ({ block: true, html })), `</${tag}>`);
    const html = this.container('<table>', [{ block: true, html: section('thead', head) }, { block: true, html: section('tbody', body) }], '</table>');
    return { item: { block: true, html }, next: j + 1 };
  }
}
