import { describe, expect, it } from 'vitest';
import { newPathId, parsePathId, sanitizeName, uploadUrl } from '../../src/files/names.js';
import { detectContentType } from '../../src/files/content-type.js';
import { isValidKey } from '../../src/files/storage.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]);

describe('upload names', () => {
  it("sanitizes like Zulip's sanitize_name (after Django keeps only the base name)", () => {
    expect(sanitizeName('my file (1).txt')).toBe('my-file-1.txt');
    expect(sanitizeName('Ünïcødé  — name.PDF')).toBe('Ünïcødé-name.PDF');
    expect(sanitizeName('../../etc/passwd')).toBe('passwd');
    expect(sanitizeName('..\\..\\win.ini')).toBe('win.ini');
    for (const bad of ['', '.', '..', '....', '???', '/']) expect(sanitizeName(bad), bad).toBe('uploaded-file');
    expect(Buffer.byteLength(sanitizeName('a'.repeat(500) + '.png'))).toBeLessThanOrEqual(200);
    expect(sanitizeName('a'.repeat(500) + '.png').endsWith('.png')).toBe(true);
  });

  it('path ids: four segments, realm first; anything else is refused', () => {
    const id = newPathId(7, 'x y.png');
    expect(id).toMatch(/^7\/[0-9a-f]{2}\/[A-Za-z0-9_-]{24}\/x-y\.png$/);
    expect(parsePathId(id)).toEqual({ realmId: 7, pathId: id });
    for (const bad of ['7/ab/tok', '7/ab/tok/../x', '7/ab/../x', 'x/ab/tok/n', '7/zz/tok/n', '7/ab/tok/a/b', '7/ab/tok/..', '7/ab/tok/a\\b', '7/ab/tok/a\0b']) {
      expect(parsePathId(bad), bad).toBeNull();
    }
    expect(uploadUrl('7/ab/tok/é x.txt')).toBe('/user_uploads/7/ab/tok/%C3%A9%20x.txt');
    for (const bad of ['../x', '/etc/passwd', '7/ab/tok/..', 'thumbnail/../../x', '7/ab/tok/n/../../..']) expect(isValidKey(bad), bad).toBe(false);
    expect(isValidKey(id)).toBe(true);
    expect(isValidKey(`thumbnail/${id}/840x560.webp`)).toBe(true);
  });
});

describe('content types', () => {
  it('decided by bytes for renderable types, by extension otherwise', () => {
    expect(detectContentType('a.png', PNG)).toBe('image/png');
    expect(detectContentType('a.bin', PNG)).toBe('image/png');
    expect(detectContentType('a.png', Buffer.from('<script>'))).toBe('application/octet-stream');
    expect(detectContentType('a.jpg', PNG)).toBe('image/png');
    expect(detectContentType('a.svg', Buffer.from('<svg>'))).toBe('image/svg+xml');
    expect(detectContentType('a.html', Buffer.from('<html>'))).toBe('text/html');
    expect(detectContentType('a.txt', Buffer.from('hello'))).toBe('text/plain');
    expect(detectContentType('a.txt', Buffer.from([0, 1, 2]))).toBe('application/octet-stream');
    expect(detectContentType('a.pdf', Buffer.from('%PDF-1.7'))).toBe('application/pdf');
    expect(detectContentType('noext', Buffer.from('text'))).toBe('application/octet-stream');
  });
});
