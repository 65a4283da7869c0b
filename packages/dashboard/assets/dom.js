// Builds the page from data without ever parsing data as HTML: text goes in through text nodes, attributes through
// setAttribute. No page script parses strings as HTML (a test checks it), so a run's content cannot become markup.

/**
 * Makes an element. `attributes` are set with setAttribute, except `on` (an object of event listeners) and
 * `className`; children are nodes, or values turned into text nodes; null, undefined and false are skipped.
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'on') {
      for (const [event, listener] of Object.entries(value)) element.addEventListener(event, listener);
    } else if (name === 'className') {
      element.className = value;
    } else if (/^on/i.test(name)) {
      throw new Error(`h(): inline handler ${name} refused; use { on: { event: listener } }`);
    } else {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else if (child instanceof Node) element.append(child);
    else element.append(document.createTextNode(String(child)));
  }
}

/** Replaces the children of `element` with `children`. */
export function replace(element, ...children) {
  element.replaceChildren();
  append(element, children);
}

/** A JSON value as indented text in a <pre>: shown exactly as stored. */
export function jsonBlock(value, className = 'json') {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return h('pre', { className }, text);
}
