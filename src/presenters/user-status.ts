/** A user's status as GET /users/{id}/status and the user_status state show it: only the parts that are set. */
export function presentUserStatus(
  row: { status_text: string; emoji_name: string; emoji_code: string; reaction_type: string },
  presenceEnabled: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // "away" is the deprecated mirror of presence_enabled = false.
  if (!presenceEnabled) out.away = true;
  if (row.status_text) out.status_text = row.status_text;
  if (row.emoji_name) {
    out.emoji_name = row.emoji_name;
    out.emoji_code = row.emoji_code;
    out.reaction_type = row.reaction_type;
  }
  return out;
}
