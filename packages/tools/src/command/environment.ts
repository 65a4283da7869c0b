/**
 * The variables a command inherits from keel's process by default: where programs are, who and where the user is,
 * language and time zone. Nothing else: API keys, tokens and cloud credentials in keel's environment never reach a
 * command unless its tool lists them in `inheritEnv` or sets them in `env`.
 */
export const DEFAULT_INHERITED_ENV: readonly string[] = Object.freeze([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'LC_MESSAGES',
  'TZ',
  'TMPDIR',
  'TERM',
]);

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** True when `name` is a portable environment variable name. */
export function isVariableName(name: string): boolean {
  return VARIABLE_NAME.test(name);
}

/**
 * A command's environment: the `inherit` names copied from `parent` when set there, then `set` on top. Built anew at
 * each call, so a variable keel's process sets later is seen (if inherited) and one it removes is gone.
 */
export function commandEnvironment(
  parent: Readonly<Record<string, string | undefined>>,
  inherit: readonly string[],
  set: Readonly<Record<string, string>>,
): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const name of inherit) {
    const value = parent[name];
    if (value !== undefined) environment[name] = value;
  }
  return Object.assign(environment, set);
}
