import type { BudgetLimit } from '@keel/core';
import { isMap, isSeq, type Node } from 'yaml';
import type { FieldReader } from './reader.js';

/**
 * The `budgets` field of an agent file: token and cost budgets the agent reserves each model call against (see the
 * core README's "Cost and budgets"). The fields are the agent's `budgets` option's, the store aside: `keel worker`
 * keeps the counters in the fleet's Redis, `keel run` in its own memory. Each budget's values are checked when the
 * agent is made.
 */
export interface BudgetsEntry {
  limits: BudgetLimit[];
  onStoreUnavailable?: 'closed' | 'open';
  defaultOutputTokens?: number;
  minOutputTokens?: number;
  cheaperFallbacks?: boolean;
}

const BUDGET_FIELDS = [
  'limits',
  'onStoreUnavailable',
  'defaultOutputTokens',
  'minOutputTokens',
  'cheaperFallbacks',
] as const;
const LIMIT_FIELDS = ['name', 'scope', 'maxTokens', 'maxCostUsd', 'period'] as const;

/** Reads `budgets` at `node`: a mapping with a list of `limits`. */
export function readBudgets(reader: FieldReader, node: Node): BudgetsEntry {
  if (!isMap(node)) return reader.fail(node, 'budgets', 'must be a mapping with a list of limits');
  reader.rejectUnknownFields(node, BUDGET_FIELDS, 'budgets.');
  const limitsNode = reader.node(node, 'limits', 'budgets.limits');
  if (!isSeq(limitsNode) || limitsNode.items.length === 0) {
    return reader.fail(
      limitsNode ?? node,
      'budgets.limits',
      'must be a non-empty list of budgets, such as [{ name: daily, scope: tenant, maxCostUsd: 5, period: day }]',
    );
  }
  const limits = limitsNode.items.map((item, index) => {
    const field = `budgets.limits[${index}]`;
    if (!isMap(item))
      return reader.fail(
        item as Node,
        field,
        'must be a mapping with name, scope and maxTokens or maxCostUsd',
      );
    reader.rejectUnknownFields(item, LIMIT_FIELDS, `${field}.`);
    return reader.value(item) as BudgetLimit;
  });
  const entry: BudgetsEntry = { limits };
  const rule = reader.string(node, 'onStoreUnavailable', 'budgets.onStoreUnavailable', false);
  if (rule !== undefined) {
    if (rule !== 'closed' && rule !== 'open') {
      reader.fail(
        node.get('onStoreUnavailable', true) as Node,
        'budgets.onStoreUnavailable',
        'must be closed or open',
      );
    }
    entry.onStoreUnavailable = rule as 'closed' | 'open';
  }
  const defaultOutputTokens = reader.positiveInteger(
    node,
    'defaultOutputTokens',
    'budgets.defaultOutputTokens',
  );
  if (defaultOutputTokens !== undefined) entry.defaultOutputTokens = defaultOutputTokens;
  const minOutputTokens = reader.positiveInteger(node, 'minOutputTokens', 'budgets.minOutputTokens');
  if (minOutputTokens !== undefined) entry.minOutputTokens = minOutputTokens;
  const cheaperFallbacks = reader.boolean(node, 'cheaperFallbacks', 'budgets.cheaperFallbacks');
  if (cheaperFallbacks !== undefined) entry.cheaperFallbacks = cheaperFallbacks;
  return entry;
}
