import { compilePattern, MAX_PATTERN_SUBJECT_LENGTH } from './schema-pattern.js';

/** What is wrong with a string under `minLength`, `maxLength` and `pattern`; empty when nothing is. */
export function checkString(schema: { readonly [key: string]: unknown }, value: string): string[] {
  const problems: string[] = [];
  const { minLength, maxLength, pattern } = schema;
  if (typeof minLength === 'number' || typeof maxLength === 'number') {
    const length = countCodePoints(value);
    if (typeof minLength === 'number' && length < minLength) {
      problems.push(`must be at least ${minLength} characters long (is ${length})`);
    }
    if (typeof maxLength === 'number' && length > maxLength) {
      problems.push(`must be at most ${maxLength} characters long (is ${length})`);
    }
  }
  if (typeof pattern === 'string') {
    const expression = compilePattern(pattern);
    if (typeof expression === 'string')
      problems.push(`cannot be checked: the schema's pattern ${expression}`);
    else if (value.length > MAX_PATTERN_SUBJECT_LENGTH) {
      problems.push(
        `is too long to be checked against pattern (over ${MAX_PATTERN_SUBJECT_LENGTH} characters)`,
      );
    } else if (!expression.test(value)) problems.push(`must match pattern ${pattern}`);
  }
  return problems;
}

function countCodePoints(value: string): number {
  let count = 0;
  for (let index = 0; index < value.length; index++) {
    const code = value.charCodeAt(index);
    // A surrogate pair is one character.
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = value.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index++;
    }
    count++;
  }
  return count;
}

/** What is wrong with a number under `minimum`, `maximum`, their exclusive forms and `multipleOf`. */
export function checkNumber(schema: { readonly [key: string]: unknown }, value: number): string[] {
  const problems: string[] = [];
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = schema;
  if (typeof minimum === 'number') {
    if (exclusiveMinimum === true ? value <= minimum : value < minimum) {
      problems.push(`must be ${exclusiveMinimum === true ? 'greater than' : 'at least'} ${minimum}`);
    }
  }
  if (typeof maximum === 'number') {
    if (exclusiveMaximum === true ? value >= maximum : value > maximum) {
      problems.push(`must be ${exclusiveMaximum === true ? 'less than' : 'at most'} ${maximum}`);
    }
  }
  if (typeof exclusiveMinimum === 'number' && value <= exclusiveMinimum) {
    problems.push(`must be greater than ${exclusiveMinimum}`);
  }
  if (typeof exclusiveMaximum === 'number' && value >= exclusiveMaximum) {
    problems.push(`must be less than ${exclusiveMaximum}`);
  }
  if (typeof multipleOf === 'number' && multipleOf > 0) {
    const quotient = value / multipleOf;
    if (Math.abs(quotient - Math.round(quotient)) > 1e-9)
      problems.push(`must be a multiple of ${multipleOf}`);
  }
  return problems;
}
