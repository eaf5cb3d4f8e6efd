// <time:...> parsing. Zulip hands the text to python-dateutil (plus common time-zone
// abbreviations) and falls back to a Unix timestamp. We accept the forms people
// actually type (ISO 8601, "Mar 14 2025 3:30pm", "14 March 2025 15:30 CET",
// timestamps); naive times are UTC, as in Zulip. Output: "YYYY-MM-DDTHH:MM:SS[.ffffff]Z".

const MONTHS: Record<string, number> = {
  jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, sept: 9, oct: 10, nov: 11, dec: 12,
  january: 1, february: 2, march: 3, april: 4, june: 6, july: 7, august: 8, september: 9,
  october: 10, november: 11, december: 12,
};
const WEEKDAYS = new Set(['mon', 'tue', 'tues', 'wed', 'thu', 'thur', 'thurs', 'fri', 'sat', 'sun',
  'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday']);
// Offsets in minutes for the abbreviations people use most.
const ZONES: Record<string, number> = {
  utc: 0, gmt: 0, z: 0, ut: 0, est: -300, edt: -240, cst: -360, cdt: -300, mst: -420, mdt: -360,
  pst: -480, pdt: -420, akst: -540, akdt: -480, hst: -600, bst: 60, ist: 330, cet: 60, cest: 120,
  eet: 120, eest: 180, wet: 0, west: 60, msk: 180, jst: 540, kst: 540, hkt: 480, sgt: 480,
  aest: 600, aedt: 660, acst: 570, awst: 480, nzst: 720, nzdt: 780,
};

function iso(ms: number, micros: number): string | null {
  const d = new Date(ms);
  if (Number.isNaN(d.getTime()) || d.getUTCFullYear() < 1 || d.getUTCFullYear() > 9999) return null;
  const base = d.toISOString().slice(0, 19);
  return micros ? `${base}.${String(micros).padStart(6, '0')}Z` : `${base}Z`;
}

function fromParts(y: number, mo: number, day: number, h: number, mi: number, s: number, micros: number, offsetMin: number): string | null {
  if (mo < 1 || mo > 12 || day < 1 || day > 31 || h > 23 || mi > 59 || s > 59) return null;
  const ms = Date.UTC(y, mo - 1, day, h, mi, s);
  const check = new Date(ms);
  if (check.getUTCDate() !== day) return null; // 31 February and friends
  return iso(ms - offsetMin * 60_000, micros);
}

function parseOffset(tok: string): number | null {
  const m = /^(?:utc|gmt)?([+-])(\d{1,2})(?::?(\d{2}))?$/.exec(tok);
  if (m) return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0));
  return tok in ZONES ? ZONES[tok]! : null;
}

/** Returns the UTC ISO form of a global time, or null when it cannot be understood. */
export function parseGlobalTime(input: string): string | null {
  const text = input.trim();
  if (text === '') return null;
  // Compact digit forms dateutil reads as dates come first, then Unix timestamps.
  let m = /^(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2})?)?$/.exec(text);
  if (m && (text.length === 8 || text.length === 12 || text.length === 14)) {
    return fromParts(+m[1]!, +m[2]!, +m[3]!, +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0), 0, 0);
  }
  if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(text)) {
    const secs = Number(text);
    const ms = Math.floor(secs * 1000);
    const micros = Math.round((secs - Math.floor(secs)) * 1e6) % 1e6;
    return iso(ms, micros);
  }
  // ISO 8601-ish: 2025-03-14[T ]15:30[:00[.123]][Z|+01:00| UTC]
  m = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6}))?)?)?\s*(z|[+-]\d{2}(?::?\d{2})?|[a-z]{1,5})?$/i.exec(text);
  if (m) {
    const offset = m[8] ? parseOffset(m[8].toLowerCase()) : 0;
    if (offset === null) return null;
    const micros = m[7] ? Number(m[7].padEnd(6, '0')) : 0;
    return fromParts(+m[1]!, +m[2]!, +m[3]!, +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0), micros, offset);
  }
  return parseFreeForm(text.toLowerCase());
}

/** Word-by-word reading of forms like "Mar 14, 2025 3:30 pm EST" or "14 March 2025 15:30". */
function parseFreeForm(text: string): string | null {
  const tokens = text.replace(/,/g, ' ').replace(/(\d)(am|pm)\b/g, '$1 $2').split(/\s+/).filter(Boolean);
  let year: number | undefined;
  let month: number | undefined;
  let day: number | undefined;
  let hour = 0;
  let minute = 0;
  let second = 0;
  let sawTime = false;
  let offset = 0;
  const numbers: number[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!.replace(/\.$/, '');
    const t = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(tok);
    if (t) {
      hour = +t[1]!; minute = +t[2]!; second = +(t[3] ?? 0); sawTime = true;
      continue;
    }
    if (tok === 'am' || tok === 'pm') {
      if (!sawTime && numbers.length) { hour = numbers.pop()!; sawTime = true; }
      if (hour > 12 || hour === 0 && !sawTime) return null;
      if (tok === 'pm' && hour < 12) hour += 12;
      if (tok === 'am' && hour === 12) hour = 0;
      continue;
    }
    if (tok in MONTHS && month === undefined) { month = MONTHS[tok]; continue; }
    if (WEEKDAYS.has(tok) || tok === 'at' || tok === 'on' || tok === 'of') continue;
    const ord = /^(\d{1,2})(?:st|nd|rd|th)$/.exec(tok);
    if (ord) { day = +ord[1]!; continue; }
    if (/^\d{4}$/.test(tok)) { year = +tok; continue; }
    if (/^\d{1,2}$/.test(tok)) { numbers.push(+tok); continue; }
    const off = parseOffset(tok);
    if (off !== null) { offset = off; continue; }
    const slash = /^(\d{1,2})\/(\d{1,2})\/(\d{2}|\d{4})$/.exec(tok);
    if (slash) { month = +slash[1]!; day = +slash[2]!; year = +slash[3]! + (slash[3]!.length === 2 ? 2000 : 0); continue; }
    return null;
  }
  if (day === undefined && numbers.length) day = numbers.shift();
  if (numbers.length) return null;
  if (month === undefined && day === undefined && year === undefined) {
    if (!sawTime) return null;
    // A bare time means "today", as dateutil does.
    const now = new Date();
    return fromParts(now.getUTCFullYear(), now.getUTCMonth() + 1, now.getUTCDate(), hour, minute, second, 0, offset);
  }
  const now = new Date();
  return fromParts(year ?? now.getUTCFullYear(), month ?? now.getUTCMonth() + 1, day ?? 1, hour, minute, second, 0, offset);
}
