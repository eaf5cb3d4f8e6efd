// File uploads from the compose box (issue 15, point 5): the paperclip, drag and
// drop, and paste all end here. The behaviour follows Zulip's web app
// (web/src/upload.ts in zulip/zulip, read for the facts only):
//  - while a file uploads, the message holds "[Uploading <name>…]()" on a line
//    of its own, at the caret; several files give one line each;
//  - on success that placeholder becomes "[<name>](<url>)", <name> being the
//    server's `filename` with "[" and "]" removed (they would end the link text);
//  - a file over the realm's max_file_upload_size_mib is refused before any
//    request, in Zulip's words "'<name>' exceeds the maximum file size for
//    attachments (<n> MB)."; a limit of 0 means "File and image uploads have
//    been disabled for this organization.";
//  - a refused or failed upload shows the server's msg (or the network error)
//    and its placeholder is removed;
//  - sending is refused while uploads are under way ("Cannot send message while
//    files are being uploaded.", Zulip's compose_validate).
// Zulip's own web app sends files over tus; we use the API's one-file multipart
// POST /user_uploads (through the /json mirror), as its other clients do.
import { useRef, useState } from 'preact/hooks';
import { ApiError, call } from './api';
import { PaperclipIcon } from './icons';
import { showError, st } from './store';
import { ui } from './ui';

let inFlight = 0;
/** True while any compose upload is under way. */
export function uploading(): boolean {
  return inFlight > 0;
}
export const UPLOADING_MSG = 'Cannot send message while files are being uploaded.';

export function uploadPlaceholder(name: string): string {
  return `[Uploading ${name}…]()`;
}

/** Where the upload writes: the live textarea when it shows the compose text, and a hook run after each change. */
export interface UploadTarget {
  area: () => HTMLTextAreaElement | null;
  afterChange: () => void;
}

/**
 * Rewrites the compose text. When the textarea is on screen its value is set
 * first (so Preact, finding the DOM already right, leaves the caret alone) and
 * the caret put where `edit` says; otherwise only the stored text changes.
 */
function rewrite(t: UploadTarget, edit: (text: string, start: number, end: number) => [string, number] | null): void {
  const c = ui.compose;
  const el = t.area();
  const live = el && el.isConnected && el.value === c.content ? el : null;
  const start = live ? live.selectionStart : c.content.length;
  const end = live ? live.selectionEnd : c.content.length;
  const r = edit(c.content, start, end);
  if (!r) return;
  c.content = r[0];
  if (live) {
    live.value = r[0];
    live.setSelectionRange(r[1], r[1]);
  }
  t.afterChange();
}

/** Inserts `syntax` at the caret on a line of its own (Zulip's "block" insertion). */
function insertBlock(t: UploadTarget, syntax: string): void {
  rewrite(t, (text, start, end) => {
    const before = text.slice(0, start);
    const after = text.slice(end);
    const lead = before && !before.endsWith('\n') ? '\n' : '';
    const trail = after && !after.startsWith('\n') ? '\n' : '';
    return [before + lead + syntax + trail + after, start + lead.length + syntax.length];
  });
}

/** Replaces the first `from` by `to`; an empty `to` also takes one line break with it, so no blank line is left. */
function replaceText(t: UploadTarget, from: string, to: string): boolean {
  let found = false;
  rewrite(t, (text, caret) => {
    let i = text.indexOf(from);
    if (i < 0) return null;
    found = true;
    let j = i + from.length;
    if (!to) {
      if (text[j] === '\n') j++;
      else if (i > 0 && text[i - 1] === '\n') i--;
    }
    const moved = caret >= j ? caret - (j - i) + to.length : caret > i ? i + to.length : caret;
    return [text.slice(0, i) + to + text.slice(j), moved];
  });
  return found;
}

/** The refusal of a file before any request, or null when it may be sent. */
export function refusal(file: File, maxMib: number): string | null {
  if (maxMib === 0) return 'File and image uploads have been disabled for this organization.';
  if (file.size > maxMib * 1024 * 1024) return `'${file.name}' exceeds the maximum file size for attachments (${maxMib} MB).`;
  return null;
}

/** Uploads each file and links it in the compose text; errors are shown as toasts. */
export function uploadFiles(files: Iterable<File>, t: UploadTarget): Promise<void> {
  const raw = st().realm.max_file_upload_size_mib;
  const maxMib = typeof raw === 'number' ? raw : 25;
  const all = [...files];
  if (maxMib === 0 && all.length) {
    showError({ msg: refusal(all[0]!, 0) });
    return Promise.resolve();
  }
  const jobs: Promise<void>[] = [];
  for (const file of all) {
    const no = refusal(file, maxMib);
    if (no) {
      showError({ msg: no });
      continue;
    }
    jobs.push(uploadOne(file, t));
  }
  return Promise.all(jobs).then(() => undefined);
}

async function uploadOne(file: File, t: UploadTarget): Promise<void> {
  const holder = uploadPlaceholder(file.name);
  insertBlock(t, holder);
  inFlight++;
  try {
    const form = new FormData();
    // The server URL-decodes the name it is given (as Django's upload view
    // does), so the name goes encoded and comes back exactly as it was.
    form.append('file', file, encodeURIComponent(file.name));
    const r = await call<{ url: string; filename?: string }>('POST', 'user_uploads', {}, { form });
    const name = (r.filename ?? file.name).replace(/[[\]]/g, '');
    const link = `[${name}](${r.url})`;
    if (!replaceText(t, holder, link)) insertBlock(t, link);
  } catch (e) {
    replaceText(t, holder, '');
    const err = e as ApiError;
    showError(err instanceof ApiError && err.status === 0 ? { msg: `Failed to upload '${file.name}'. ${err.msg}` } : e);
  } finally {
    inFlight--;
  }
}

/** The files a paste or drop carries (pasted screenshots come as items of kind "file"). */
export function filesOf(data: DataTransfer | null): File[] {
  if (!data) return [];
  if (data.files.length) return [...data.files];
  const out: File[] = [];
  for (const item of data.items) {
    const f = item.kind === 'file' ? item.getAsFile() : null;
    if (f) out.push(f);
  }
  return out;
}

/** True when a drag carries files (and not, say, selected text). */
function dragHasFiles(e: DragEvent): boolean {
  return !!e.dataTransfer && [...e.dataTransfer.types].includes('Files');
}

/** Drop handlers for an element that takes files, and whether files are being dragged over it (for a visual hint). */
export function useFileDrop(onFiles: (files: File[]) => void) {
  const [over, setOver] = useState(false);
  const handlers = {
    onDragOver: (e: DragEvent) => {
      if (!dragHasFiles(e)) return;
      e.preventDefault();
      if (!over) setOver(true);
    },
    onDragLeave: (e: DragEvent) => {
      if (!(e.currentTarget as Node).contains(e.relatedTarget as Node | null)) setOver(false);
    },
    onDrop: (e: DragEvent) => {
      const files = filesOf(e.dataTransfer);
      setOver(false);
      if (!files.length) return;
      e.preventDefault();
      onFiles(files);
    },
  };
  return [over, handlers] as const;
}

/** The paperclip: a button that opens the (hidden, labelled) file chooser. */
export function AttachButton({ onFiles }: { onFiles: (files: File[]) => void }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <button type="button" class="icon" aria-label="Upload files" title="Upload files" data-testid="compose-attach" onClick={() => input.current?.click()}>
        <PaperclipIcon />
      </button>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        aria-label="Files to upload"
        data-testid="compose-file-input"
        onChange={(e) => {
          const files = [...(e.currentTarget.files ?? [])];
          // Cleared, so that choosing the same file again is a change too.
          e.currentTarget.value = '';
          if (files.length) onFiles(files);
        }}
      />
    </>
  );
}
