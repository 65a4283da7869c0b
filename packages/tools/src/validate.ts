import { optionError } from '@keel/core/adapter';

/** `value` when it is a string record (each key passing `checkKey`), `{}` when undefined; a bad entry is named by its path. */
export function stringRecordOption(
  value: unknown,
  check: { where: string; option: string; checkKey?: (key: string) => boolean },
): Record<string, string> {
  const { where, option, checkKey = () => true } = check;
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw optionError({ where, option, message: `${option} must be an object of strings` });
  }
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string') {
      throw optionError({ where, option, path: [option, key], message: `${option}.${key} must be a string` });
    }
    if (!checkKey(key)) {
      throw optionError({
        where,
        option,
        path: [option, key],
        message: `${option} has an invalid name ${JSON.stringify(key)}`,
      });
    }
  }
  return { ...(value as Record<string, string>) };
}
