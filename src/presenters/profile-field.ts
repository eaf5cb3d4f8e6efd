import type { ProfileFieldRow } from '../store/profile-fields.js';

/** A custom profile field as GET /realm/profile_fields, /register and custom_profile_fields events show it. */
export function presentProfileField(f: ProfileFieldRow): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: f.id,
    name: f.name,
    type: f.field_type,
    hint: f.hint,
    field_data: f.field_data,
    order: f.sort_order,
    required: f.required === 1,
    editable_by_user: f.editable_by_user === 1,
  };
  // Zulip sends the flag only when it is set.
  if (f.display_in_profile_summary) out.display_in_profile_summary = true;
  return out;
}
