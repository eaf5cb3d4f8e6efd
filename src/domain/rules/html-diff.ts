/**
 * content_html_diff of the edit history, in the style of lxml's htmldiff
 * (which Zulip uses): the new HTML with words that were added wrapped in
 * <span class="highlight_text_inserted"> and words that went away put back,
 * wrapped in <span class="highlight_text_deleted">, at the place they left;
 * the whole wrapped in a <div>. Tokens are words with their trailing
 * whitespace; tags travel with the words. Inserted words come before the
 * deleted ones they replace, and whitespace stays outside the spans.
 */
type Token = { kind: 'tag'; text: string } | { kind: 'word'; word: string; trail: string };

function tokenize(html: string): Token[] {
  const out: Token[] = [];
  const re = /(<[^>]*>)|([^<\s]+)(\s*)|(\s+)/g;
  for (let m = re.exec(html); m; m = re.exec(html)) {
    if (m[1]) out.push({ kind: 'tag', text: m[1] });
    else if (m[2]) out.push({ kind: 'word', word: m[2], trail: m[3] ?? '' });
    else if (m[4]) {
      const last = out[out.length - 1];
      if (last && last.kind === 'word') last.trail += m[4];
      else out.push({ kind: 'word', word: '', trail: m[4] });
    }
  }
  return out;
}

/** Longest common subsequence of the two word lists: pairs of matching indexes. */
function lcs(a: readonly string[], b: readonly string[]): [number, number][] {
  const n = a.length;
  const m = b.length;
  const dp: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) dp[i]![j] = a[i] === b[j] ? dp[i + 1]![j + 1]! + 1 : Math.max(dp[i + 1]![j]!, dp[i]![j + 1]!);
  }
  const pairs: [number, number][] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      pairs.push([i, j]);
      i++;
      j++;
    } else if (dp[i + 1]![j]! >= dp[i]![j + 1]!) i++;
    else j++;
  }
  return pairs;
}

const INS = (s: string): string => `<span class="highlight_text_inserted">${s}</span>`;
const DEL = (s: string): string => `<span class="highlight_text_deleted">${s}</span>`;

/** Wraps a run of words: the span ends before the run's trailing whitespace. */
function wrapRun(words: readonly { word: string; trail: string }[], wrap: (s: string) => string): string {
  const text = words.map((w) => w.word + w.trail).join('');
  const trimmed = text.replace(/\s+$/, '');
  if (trimmed === '') return text;
  return wrap(trimmed) + text.slice(trimmed.length);
}

export function htmlDiff(before: string, after: string): string {
  const oldWords = tokenize(before).filter((t): t is Extract<Token, { kind: 'word' }> => t.kind === 'word' && t.word !== '');
  const newTokens = tokenize(after);
  const newWordIdx: number[] = [];
  newTokens.forEach((t, i) => {
    if (t.kind === 'word' && t.word !== '') newWordIdx.push(i);
  });
  const pairs = lcs(
    oldWords.map((w) => w.word),
    newWordIdx.map((i) => (newTokens[i] as { word: string }).word),
  );
  // For each new word: matched or inserted; deleted old words go before the next matched new word.
  const matchedNew = new Map<number, number>(pairs.map(([o, n]) => [n, o]));
  const deletedBefore = new Map<number, { word: string; trail: string }[]>();
  let oi = 0;
  for (const [o, n] of [...pairs, [oldWords.length, newWordIdx.length] as [number, number]]) {
    if (o > oi) deletedBefore.set(n, oldWords.slice(oi, o));
    oi = o + 1;
  }
  let out = '';
  let inserted: { word: string; trail: string }[] = [];
  const flushInserted = (): void => {
    if (inserted.length) out += wrapRun(inserted, INS);
    inserted = [];
  };
  let wordCounter = 0;
  const emitDeleted = (n: number): void => {
    const del = deletedBefore.get(n);
    if (del?.length) out += wrapRun(del, DEL);
  };
  for (const t of newTokens) {
    if (t.kind === 'tag') {
      flushInserted();
      out += t.text;
      continue;
    }
    if (t.word === '') {
      flushInserted();
      out += t.trail;
      continue;
    }
    const n = wordCounter++;
    if (matchedNew.has(n)) {
      flushInserted();
      emitDeleted(n);
      out += t.word + t.trail;
    } else inserted.push(t);
  }
  flushInserted();
  emitDeleted(newWordIdx.length);
  return `<div>${out}</div>`;
}
