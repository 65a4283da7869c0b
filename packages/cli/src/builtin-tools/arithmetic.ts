import { KeelError } from '@keel/core';

/**
 * Evaluates an arithmetic expression (numbers, + - * / % ^, unary minus, parentheses) with a recursive-descent
 * parser: no `eval`, no identifiers, bounded nesting. Errors are `tool.invalid_input` saying where the problem is.
 */
export function evaluateArithmetic(expression: string): number {
  let position = 0;
  let depth = 0;
  const fail = (problem: string): never => {
    throw new KeelError('tool.invalid_input', `${problem} at position ${position} of "${expression}"`, {
      guidance: 'Use numbers, + - * / % ^ and parentheses only, such as (2 + 3) * 4',
    });
  };
  const skipSpaces = () => {
    while (expression[position] === ' ') position++;
  };
  const peek = () => {
    skipSpaces();
    return expression[position];
  };
  const parseNumber = (): number => {
    const match = /^\d+(\.\d+)?([eE][+-]?\d+)?/.exec(expression.slice(position));
    if (match === null) return fail('Expected a number');
    position += match[0].length;
    return Number(match[0]);
  };
  const parsePrimary = (): number => {
    const next = peek();
    if (next === '(') {
      if (++depth > 50) fail('Too deeply nested');
      position++;
      const value = parseSum();
      if (peek() !== ')') fail('Expected ")"');
      position++;
      depth--;
      return value;
    }
    if (next === '-') {
      position++;
      return -parsePrimary();
    }
    return parseNumber();
  };
  const parsePower = (): number => {
    const base = parsePrimary();
    if (peek() === '^') {
      position++;
      return base ** parsePower();
    }
    return base;
  };
  const parseProduct = (): number => {
    let value = parsePower();
    for (let next = peek(); next === '*' || next === '/' || next === '%'; next = peek()) {
      position++;
      const right = parsePower();
      if ((next === '/' || next === '%') && right === 0) fail('Division by zero');
      value = next === '*' ? value * right : next === '/' ? value / right : value % right;
    }
    return value;
  };
  const parseSum = (): number => {
    let value = parseProduct();
    for (let next = peek(); next === '+' || next === '-'; next = peek()) {
      position++;
      const right = parseProduct();
      value = next === '+' ? value + right : value - right;
    }
    return value;
  };
  if (expression.length > 500) fail('The expression is too long');
  const value = parseSum();
  if (peek() !== undefined) fail(`Unexpected "${expression[position]}"`);
  if (!Number.isFinite(value)) fail('The result is not a finite number');
  return value;
}
