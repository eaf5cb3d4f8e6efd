// The generated Unicode emoji name table (spec §13; behaviour-b §14 reactions).
import { describe, expect, it } from 'vitest';
import {
  emojiCodeForName, emojiNameForCode, emojiNamesForCode, emojiStringToCode, isValidEmojiCode, EMOTICON_CONVERSIONS,
} from '../../src/domain/rules/emoji.js';

describe('emoji name table', () => {
  it.each([
    ['smile', '1f642'], ['big_smile', '1f604'], ['smiling_face', '263a'], ['+1', '1f44d'], ['thumbs_up', '1f44d'],
    ['like', '1f44d'], ['folded_hands', '1f64f'], ['oh_no', '1f615'], ['confused', '1f615'], ['holiday_tree', '1f384'],
    ['poop', '1f4a9'], ['astonished', '1f632'], ['heart', '2764'], ['hash', '0023-20e3'], ['woman_shrugging', '1f937-200d-2640'],
    ['time', '1f557'], ['octopus', '1f419'],
  ])('%s -> %s', (name, code) => {
    expect(emojiCodeForName(name)).toBe(code);
  });

  it('knows canonical names by code', () => {
    expect(emojiNameForCode('1f44d')).toBe('+1');
    expect(emojiNameForCode('1f642')).toBe('smile');
    expect(emojiNamesForCode('1f44d')).toEqual(['+1', 'thumbs_up', 'like']);
  });

  it('rejects iamcal-only names, skin tones, clock faces and unknown codes', () => {
    for (const name of ['slightly_smiling_face', 'hankey', 'skin-tone-2', 'clock1', 'zulip', 'constructor', '__proto__']) {
      expect(emojiCodeForName(name)).toBeUndefined();
    }
    expect(isValidEmojiCode('1f3fb')).toBe(false);
    expect(isValidEmojiCode('1f550')).toBe(false);
    expect(isValidEmojiCode('zzzz')).toBe(false);
    expect(isValidEmojiCode('1f632')).toBe(true);
  });

  it('gives every name exactly one code and every code a name', () => {
    for (const code of ['1f600', '1f973', '1f1fa-1f1f8']) expect(emojiNameForCode(code)).toBeTruthy();
  });

  it('writes codes the Zulip way', () => {
    expect(emojiStringToCode('#️⃣')).toBe('0023-20e3');
    expect(emojiStringToCode('🤷‍♀️')).toBe('1f937-200d-2640');
    expect(emojiStringToCode('❤️')).toBe('2764');
  });

  it('carries the emoticon conversions', () => {
    expect(EMOTICON_CONVERSIONS[':)']).toBe(':smile:');
    expect(EMOTICON_CONVERSIONS['<3']).toBe(':heart:');
    expect(Object.keys(EMOTICON_CONVERSIONS)).toHaveLength(12);
  });
});
