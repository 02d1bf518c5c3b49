// What an unknown thrown value says, without casting it to Error.
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
