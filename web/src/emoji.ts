// A small built-in emoji table (Zulip's names for the common ones) for the picker,
// the :emoji: typeahead and reactions; custom realm emoji come from /register.
// Codes are Zulip's: lower-case hex code points joined by "-".
const LIST = `+1:1f44d -1:1f44e smile:1f642 grinning:1f600 smiley:1f603 big_smile:1f604 laughing:1f606 joy:1f602
rolling_on_the_floor_laughing:1f923 wink:1f609 blush:1f60a heart_eyes:1f60d heart_kiss:1f618
stuck_out_tongue:1f61b thinking:1f914 neutral:1f610 expressionless:1f611 rolling_eyes:1f644
smirk:1f60f grimacing:1f62c relieved:1f60c sleeping:1f634 sick:1f912 cowboy:1f920 sunglasses:1f60e
nerd:1f913 confused:1f615 worried:1f61f frown:1f641 astonished:1f632 flushed:1f633
pleading_face:1f97a cry:1f622 sob:1f62d scream:1f631 angry:1f620 rage:1f621 exploding_head:1f92f
partying_face:1f973 silence:1f910 hug:1f917 shushing_face:1f92b upside_down:1f643 money_face:1f911
skull:1f480 ghost:1f47b alien:1f47d robot:1f916 poop:1f4a9 clown:1f921 heart:2764
orange_heart:1f9e1 yellow_heart:1f49b green_heart:1f49a blue_heart:1f499 purple_heart:1f49c
broken_heart:1f494 sparkling_heart:1f496 fire:1f525 sparkles:2728 star:2b50 glowing_star:1f31f
zap:26a1 boom:1f4a5 tada:1f389 confetti:1f38a balloon:1f388 gift:1f381 trophy:1f3c6 medal:1f3c5
clap:1f44f wave:1f44b raised_hands:1f64c pray:1f64f muscle:1f4aa ok:1f44c point_up:1f446
point_right:1f449 point_left:1f448 point_down:1f447 fist:270a writing:270d eyes:1f440 brain:1f9e0
check:2705 cross_mark:274c warning:26a0 question:2753 exclamation:2757 hundred:1f4af
working_on_it:1f6e0 rocket:1f680 bulb:1f4a1 locked:1f512 key:1f511 bell:1f514 push_pin:1f4cc
link:1f517 calendar:1f4c5 clock:1f557 hourglass:23f3 memo:1f4dd book:1f4d6 email:2709 phone:260e
computer:1f4bb bug:1f41b gear:2699 hammer:1f528 wrench:1f527 chart:1f4c8 money:1f4b0 coffee:2615
tea:1f375 beer:1f37a wine:1f377 pizza:1f355 cake:1f370 cookie:1f36a apple:1f34e taco:1f32e
sunny:2600 cloud:2601 umbrella:2602 snowflake:2744 rainbow:1f308 moon:1f319 earth_americas:1f30e
tree:1f333 flower:1f337 rose:1f339 dog:1f415 cat:1f408 octopus:1f419 unicorn:1f984 turtle:1f422
penguin:1f427 tiger:1f405 bear:1f43b panda:1f43c soccer:26bd basketball:1f3c0 music:1f3b5
guitar:1f3b8 art:1f3a8 camera:1f4f7 car:1f697 airplane:2708 house:1f3e0 office:1f3e2
white_flag:1f3f3 checkered_flag:1f3c1 speech_bubble:1f5e8 thought:1f4ad zzz:1f4a4 sweat_smile:1f605
innocent:1f607 melting_face:1fae0 salute:1fae1 handshake:1f91d fingers_crossed:1f91e
thumbs_up:1f44d thumbs_down:1f44e heart_hands:1faf6 plus:2795 minus:2796 octagonal_sign:1f6d1
x:274e red_circle:1f534 green_circle:1f7e2 yellow_circle:1f7e1 blue_circle:1f535`;

export const EMOJI: ReadonlyArray<{ name: string; code: string }> = LIST.split(/\s+/)
  .filter(Boolean)
  .map((pair) => {
    const i = pair.lastIndexOf(':');
    return { name: pair.slice(0, i), code: pair.slice(i + 1) };
  });

const byName = new Map(EMOJI.map((e) => [e.name, e.code]));

export function codeForName(name: string): string | undefined {
  return byName.get(name);
}

/** The native character(s) for a Zulip unicode emoji code such as "1f44d" or "1f468-200d-1f4bb". */
export function charForCode(code: string): string {
  try {
    return String.fromCodePoint(...code.split('-').map((h) => Number.parseInt(h, 16)));
  } catch {
    return '';
  }
}

/** The server's image of a Unicode emoji (emoji-datasource-google, Zulip's path). */
export function emojiUrl(code: string): string {
  return `/static/generated/emoji/images-google-64/${code}.png`;
}

/**
 * When an emoji image is missing: the image set names some emoji with a trailing
 * variation selector ("2764-fe0f"), so try that once, then fall back to the character.
 */
export function onEmojiImageError(img: HTMLImageElement, code: string): void {
  if (!img.dataset.retried && !code.endsWith('-fe0f')) {
    img.dataset.retried = '1';
    img.src = emojiUrl(code + '-fe0f');
    return;
  }
  img.replaceWith(document.createTextNode(charForCode(code)));
}

/** An <img> element for an emoji code (used on server-rendered HTML, outside Preact). */
export function emojiImg(code: string, name: string): HTMLImageElement {
  const img = document.createElement('img');
  img.className = 'emoji-img';
  img.alt = `:${name}:`;
  img.src = emojiUrl(code);
  img.addEventListener('error', () => onEmojiImageError(img, code));
  return img;
}
