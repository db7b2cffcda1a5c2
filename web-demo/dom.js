// DOM helpers. Every piece of user or report text goes in through textContent, never
// innerHTML: a pasted log cannot inject markup into the page.

/** Creates an element: h('p', {class: 'x', onclick: fn}, 'text', child, [more]). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else if (key === 'dataset') {
      Object.assign(el.dataset, value);
    } else if (value === true) {
      el.setAttribute(key, '');
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/**
 * The rule docs are markdown (headings, paragraphs, lists, fenced code, inline code). This
 * presents them as DOM nodes; it is not a report renderer: report wording comes from core.
 */
export function markdownDocs(markdown) {
  const root = document.createDocumentFragment();
  const lines = markdown.replace(/\r\n/g, '\n').split('\n');
  let paragraph = [];
  let list = null;
  const flush = () => {
    if (paragraph.length) root.append(h('p', {}, inline(paragraph.join(' '))));
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = line.match(/^\s*```/);
    if (fence) {
      flush();
      list = null;
      const code = [];
      for (i++; i < lines.length && !/^\s*```/.test(lines[i]); i++) code.push(lines[i]);
      root.append(codeBlock(code.join('\n')));
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    if (heading) {
      flush();
      list = null;
      // Rule docs start at level 2; inside the page they sit below the rule's own heading.
      const level = Math.min(6, heading[1].length + 2);
      root.append(h(`h${level}`, {}, inline(heading[2])));
      continue;
    }
    const item = line.match(/^\s*(?:[-*]|\d+\.)\s+(.*)$/);
    if (item) {
      flush();
      if (!list) {
        list = h(/^\s*\d/.test(line) ? 'ol' : 'ul');
        root.append(list);
      }
      list.append(h('li', {}, inline(item[1])));
      continue;
    }
    if (!line.trim()) {
      flush();
      list = null;
      continue;
    }
    if (list && /^\s+\S/.test(line)) {
      list.lastElementChild.append(' ', inline(line.trim()));
      continue;
    }
    list = null;
    paragraph.push(line.trim());
  }
  flush();
  return root;
}

/** Inline code spans and bold; the rest is text. */
function inline(text) {
  const parts = [];
  const pattern = /`([^`]+)`|\*\*([^*]+)\*\*/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push(match[1] !== undefined ? h('code', {}, match[1]) : h('strong', {}, match[2]));
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

/** A command or YAML block with a one-click copy button. */
export function codeBlock(code, label = 'Copy') {
  return h('div', { class: 'code-block' },
    h('pre', {}, h('code', {}, code)),
    h('button', { type: 'button', class: 'copy-button', dataset: { copy: code }, 'aria-label': `${label} to the clipboard` }, 'Copy'));
}
