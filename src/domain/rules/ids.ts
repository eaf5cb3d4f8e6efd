/**
 * Row ids are 32-bit integers on PostgreSQL; a larger value in a lookup
 * would be a database error there (a 500), so access helpers treat it as
 * "does not exist" before querying.
 */
export const MAX_ROW_ID = 2_147_483_647;
export const isPossibleId = (id: number): boolean => Number.isSafeInteger(id) && id > 0 && id <= MAX_ROW_ID;
