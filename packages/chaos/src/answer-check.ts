const FOUND = /^Here is what I found: ([\s\S]*?)\.(?: Some of it is missing because [\s\S]*)?$/;
const RESULT = /([A-Za-z0-9_-]+ returned ")/g;

/**
 * What a completed run's answer must look like, given the answer of a fault-free run of the same subject. With the
 * simulated model's default brain that answer lists what each tool returned (`<tool> returned "<result>"`): a
 * complete answer names every one of those tools as having returned (in any order, since a call corrected after a
 * fault answers later, and a failed first attempt may be mentioned too; results may differ, such as a ticket number
 * made from the call's idempotency key) and ends as the fault-free answer ends (an answer cut at the output limit
 * does not). Any other fault-free answer must be matched exactly.
 *
 * @example
 *   const complete = answerCheck('Here is what I found: get_weather returned "sunny".');
 *   complete('Here is what I found: get_weather returned "rain". Some of it is missing because x failed: "y".'); // true
 *   complete('Here is what I found: get_weather returned "su'); // false: cut at the output limit
 */
export function answerCheck(cleanAnswer: string): (answer: string | undefined) => boolean {
  const found = FOUND.exec(cleanAnswer)?.[1];
  if (found === undefined) return (answer) => answer === cleanAnswer;
  const returned = [...found.matchAll(RESULT)].map((match) => match[1]!);
  const ending = cleanAnswer.slice(-2);
  return (answer) =>
    answer?.startsWith('Here is what I found: ') === true &&
    answer.endsWith(ending) &&
    returned.every((part) => answer.includes(part));
}
