// Binds a <textarea> to a Y.Text on the page (main thread): local edits become the smallest
// insert/delete (common prefix and suffix kept), remote edits update the textarea while the
// caret and selection stay on the same characters.

import type * as Y from 'yjs';

const LOCAL = Symbol('textarea');

/** Smallest single splice turning `a` into `b`. */
export function diff(a: string, b: string): { index: number; remove: number; insert: string } {
  let start = 0;
  const max = Math.min(a.length, b.length);
  while (start < max && a.charCodeAt(start) === b.charCodeAt(start)) start++;
  let end = 0;
  while (end < max - start && a.charCodeAt(a.length - 1 - end) === b.charCodeAt(b.length - 1 - end)) end++;
  return { index: start, remove: a.length - start - end, insert: b.slice(start, b.length - end) };
}

export function bindTextarea(text: Y.Text, area: HTMLTextAreaElement): () => void {
  area.value = text.toString();
  const onInput = (): void => {
    const d = diff(text.toString(), area.value);
    if (d.remove === 0 && d.insert === '') return;
    text.doc!.transact(() => {
      if (d.remove) text.delete(d.index, d.remove);
      if (d.insert) text.insert(d.index, d.insert);
    }, LOCAL);
  };
  const onChange = (ev: Y.YTextEvent, tr: Y.Transaction): void => {
    if (tr.origin === LOCAL) return;
    let s = area.selectionStart;
    let e = area.selectionEnd;
    let pos = 0;
    for (const op of ev.delta) {
      if (op.retain !== undefined) pos += op.retain;
      else if (typeof op.insert === 'string') {
        const n = op.insert.length;
        if (pos <= s) s += n;
        if (pos < e) e += n;
        pos += n;
      } else if (op.delete !== undefined) {
        const n = op.delete;
        if (pos < s) s -= Math.min(n, s - pos);
        if (pos < e) e -= Math.min(n, e - pos);
      }
    }
    area.value = text.toString();
    if (document.activeElement === area || area.getRootNode() instanceof ShadowRoot) area.setSelectionRange(s, e);
  };
  area.addEventListener('input', onInput);
  text.observe(onChange);
  return () => {
    area.removeEventListener('input', onInput);
    text.unobserve(onChange);
  };
}
