/**
 * Formats path segments as a JSON path: `['stops', 2, 'name']` becomes `$.stops[2].name`; keys that are not
 * identifiers are quoted (`$["first name"]`).
 */
export function formatJsonPath(segments: readonly PropertyKey[]): string {
  let path = '$';
  for (const segment of segments) path = appendPath(path, segment);
  return path;
}

/** `path` with one more segment: `.name`, `[2]` or `["first name"]`. */
export function appendPath(path: string, segment: PropertyKey): string {
  if (typeof segment === 'number') return `${path}[${segment}]`;
  const key = typeof segment === 'symbol' ? segment.toString() : segment;
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}
