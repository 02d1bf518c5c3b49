// The one test that a decoded JSON value (a message, a saved file, a profile) is a plain object
// whose fields may then be read one by one: not null, not an array.
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
