// What a thrown value says. `catch (e)` gives `unknown`: a library, a worker or a user's code can
// throw a string, a number or null, so nothing here casts it to Error.

/** The message of an Error, else the thrown value as text. */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === 'object' && e !== null && typeof (e as { message?: unknown }).message === 'string') return (e as { message: string }).message;
  return String(e);
}

/** An errno code ('ENOENT', 'EACCES', …) when the thrown value carries one. */
export function errnoCode(e: unknown): string | undefined {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** The error's name ('AbortError', …) when it has one. */
export function errorName(e: unknown): string | undefined {
  const name = typeof e === 'object' && e !== null ? (e as { name?: unknown }).name : undefined;
  return typeof name === 'string' ? name : undefined;
}

/** A thrown value as an Error (a non-Error throw wrapped, its text as the message). */
export function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(errorMessage(e));
}

/** The stack when there is one (for an internal error's report), else the message. */
export function errorStack(e: unknown): string {
  return e instanceof Error && e.stack ? e.stack : errorMessage(e);
}
