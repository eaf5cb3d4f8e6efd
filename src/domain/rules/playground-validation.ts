import { urlTemplateVariables } from './linkifier-validation.js';

/**
 * Code playground validation as Zulip does it.
 *
 * The view (zerver/views/realm_playgrounds.py, check_pygments_language) first
 * caps pygments_language at 40 characters and checks it against
 * `^[ a-zA-Z0-9_+-./#]*$` ("Invalid characters in pygments language", a plain
 * error). The action then runs Django's full_clean of RealmPlayground
 * (zerver/models/realm_playgrounds.py) and reports a ValidationFailureError:
 * msg = the first message, `errors` = Django's message_dict. full_clean
 * order: field validators in model field order (url_template: "This field
 * cannot be blank." / "Invalid URL template."; name; pygments_language),
 * then clean() (skipped for an invalid template: the template must use the
 * variable "code" and only it), then the unique_together check of (realm,
 * pygments_language, name), only when those fields are valid.
 */
export const MAX_PYGMENTS_LANGUAGE_LENGTH = 40;

/** The view's check (the `+-.` range inside the class is the same as Python's). */
export const VIEW_LANGUAGE = /^[ a-zA-Z0-9_+\-./#]*$/;
/** The model's validator: FENCED_CODE_LANGUAGE_REGEX, whole value, no spaces. */
const MODEL_LANGUAGE = /^[a-zA-Z0-9_+-./#]+$/;

export type PlaygroundErrors = Record<string, string[]>;

export async function playgroundErrors(
  fields: { name: string; pygments_language: string; url_template: string },
  taken: () => Promise<boolean>,
): Promise<PlaygroundErrors | null> {
  const errors: PlaygroundErrors = {};
  const add = (key: string, msg: string): void => {
    (errors[key] ??= []).push(msg);
  };
  const blank = 'This field cannot be blank.';
  let vars: string[] | null = null;
  if (!fields.url_template) add('url_template', blank);
  else if ((vars = urlTemplateVariables(fields.url_template)) === null) add('url_template', 'Invalid URL template.');
  if (!fields.name) add('name', blank);
  if (!fields.pygments_language) add('pygments_language', blank);
  else if (!MODEL_LANGUAGE.test(fields.pygments_language)) add('pygments_language', 'Invalid characters in pygments language');
  if (vars !== null) {
    if (!vars.includes('code')) add('__all__', 'Missing the required variable "code" in the URL template');
    else if (vars.length !== 1) add('__all__', '"code" should be the only variable present in the URL template');
  }
  if (!errors.name && !errors.pygments_language && (await taken())) add('__all__', 'Realm playground with this Realm, Pygments language and Name already exists.');
  return Object.keys(errors).length ? errors : null;
}

/** Django's ValidationError.messages[0] for the dict: fields in insertion order. */
export const firstPlaygroundError = (errors: PlaygroundErrors): string => Object.values(errors)[0]![0]!;
