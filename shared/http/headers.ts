/** A header's value whatever its casing: API Gateway passes header names as the client sent them. */
export function headerValue(
  headers: Record<string, string | undefined> | null | undefined,
  name: string,
): string | undefined {
  const wanted = name.toLowerCase();
  const entry = Object.entries(headers ?? {}).find(([key]) => key.toLowerCase() === wanted);
  return entry?.[1];
}

/**
 * Every value of a header, whatever the casing of each line: API Gateway's multiValueHeaders keys
 * names as sent, so one header sent under two spellings is two keys (a single-value lookup, or a
 * normalizer that lower-cases keys, keeps only one of them).
 */
export function headerValues(
  multiValueHeaders: Record<string, string[] | undefined> | null | undefined,
  name: string,
): string[] {
  const wanted = name.toLowerCase();
  const found: string[] = [];
  for (const key in multiValueHeaders) if (key.toLowerCase() === wanted) found.push(...(multiValueHeaders[key] ?? []));
  return found;
}

/**
 * The distinct values of a header a request carries on its lines, any spelling: from
 * multiValueHeaders where API Gateway gives them, else from the single-value map.
 */
export function distinctHeaderValues(
  event: {
    headers?: Record<string, string | undefined> | null;
    multiValueHeaders?: Record<string, string[] | undefined> | null;
  },
  name: string,
): string[] {
  const lines = headerValues(event.multiValueHeaders, name);
  const values =
    lines.length > 0
      ? lines
      : Object.entries(event.headers ?? {})
          .filter(([key]) => key.toLowerCase() === name.toLowerCase())
          .map(([, v]) => v ?? '');
  return [...new Set(values)];
}

/** The same headers keyed by lower-cased name, each with every value sent under any spelling. */
export function mergeSpellings(multiValueHeaders: Record<string, string[] | undefined>): Record<string, string[]> {
  const merged: Record<string, string[]> = Object.create(null);
  for (const [name, values] of Object.entries(multiValueHeaders)) {
    const lower = name.toLowerCase();
    merged[lower] = [...(merged[lower] ?? []), ...(values ?? [])];
  }
  return merged;
}
