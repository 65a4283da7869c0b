// Word handling for the default brain: just enough language to pick tools and fill arguments deterministically.

const STOPWORDS = new Set(
  (
    'a an the and or but nor not no yes so if then than as at by for from in into of on onto out over to up with ' +
    'about above after again against all also any are be been being before below between both can could did do ' +
    'does doing down during each few further had has have having here how i is it its itself just let lets me more ' +
    'most my myself now off once only other our ours own same she he her him his should some such that their them ' +
    'there these they this those through too under until very was we were what whats when where which while who ' +
    'whom why will would you your yours please tell show give find get gets got fetch look lookup know need want ' +
    'like make current currently given using use used return returns tool call data info information value values ' +
    'thing things something today right us okay ok hi hello thanks thank'
  ).split(' '),
);

/** Lowercase words of `text` (letters and digits), apostrophe suffixes dropped. */
export function words(text: string): string[] {
  return (text.match(/[\p{L}\p{N}]+/gu) ?? []).map((word) => word.toLowerCase());
}

/** A crude stem, so `cities` meets `city` and `forecasts` meets `forecast`. */
export function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/** The stems of `text`'s meaningful words: no stopwords, nothing shorter than three letters. */
export function keywords(text: string): Set<string> {
  const result = new Set<string>();
  for (const word of words(text)) {
    if (word.length >= 3 && !STOPWORDS.has(word)) result.add(stem(word));
  }
  return result;
}

/** Splits an identifier such as `get_weather`, `getWeather` or `web-search` into words. */
export function identifierWords(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_\-.]+/g, ' ');
}

/**
 * Proper nouns of `text`, best first: runs of capitalised words ("New York"), those inside a sentence before
 * those that open one (a capital at a sentence start proves nothing), stopwords never.
 */
export function properNouns(text: string): string[] {
  const inner: string[] = [];
  const initial: string[] = [];
  const pattern = /[\p{L}\p{N}][\p{L}\p{N}'’-]*|[.!?\n]/gu;
  let run: string[] = [];
  let runAtStart = false;
  let sentenceStart = true;
  const flush = () => {
    const add = (list: string[], phrase: string) => {
      if (!list.includes(phrase)) list.push(phrase);
    };
    if (run.length > 0 && runAtStart) {
      // "Compare Paris and Lyon": the opening word is most likely a verb, so "Paris" ranks before "Compare Paris".
      if (run.length > 1) add(inner, run.slice(1).join(' '));
      add(initial, run.join(' '));
    } else if (run.length > 0) add(inner, run.join(' '));
    run = [];
  };
  for (const match of text.matchAll(pattern)) {
    const token = match[0];
    if (/^[.!?\n]$/.test(token)) {
      flush();
      sentenceStart = true;
      continue;
    }
    const capitalised = /^\p{Lu}/u.test(token) && !STOPWORDS.has(token.toLowerCase().replace(/['’].*$/u, ''));
    if (capitalised) {
      if (run.length === 0) runAtStart = sentenceStart;
      run.push(token.replace(/['’]s$/u, ''));
    } else {
      flush();
    }
    sentenceStart = false;
  }
  flush();
  return [...inner, ...initial];
}
