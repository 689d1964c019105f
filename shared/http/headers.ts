/** A header's value whatever its casing: API Gateway passes header names as the client sent them. */
export function headerValue(headers: Record<string, string | undefined> | null | undefined, name: string): string | undefined {
  const wanted = name.toLowerCase();
  const entry = Object.entries(headers ?? {}).find(([key]) => key.toLowerCase() === wanted);
  return entry?.[1];
}
