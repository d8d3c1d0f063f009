// Finds the element with a bid, diving into the iframes that its prefix
// names, and through shadow roots. Returns the element, or a string that
// says why it cannot.
(function (bid) {
  function deepFind(root, value) {
    const sel = '[bid="' + CSS.escape(value) + '"]';
    const el = root.querySelector(sel);
    if (el) return el;
    for (const host of root.querySelectorAll("*")) {
      if (host.shadowRoot) {
        const found = deepFind(host.shadowRoot, value);
        if (found) return found;
      }
    }
    return null;
  }
  const notFound = 'Could not find element with bid "' + bid + '"';
  let doc = document;
  let i = 0;
  // Same walk as BrowserGym: each run of letters (lower case, then upper
  // case) before the numeric tail names one more nested frame.
  while (i < bid.length && !/^[0-9]+$/.test(bid.slice(i))) {
    i++;
    while (i < bid.length && /[A-Z]/.test(bid[i])) i++;
    const frame = deepFind(doc, bid.slice(0, i));
    if (!frame) return notFound;
    let sub = null;
    try { sub = frame.contentDocument; } catch (e) { sub = null; }
    if (!sub) return notFound;
    doc = sub;
  }
  return deepFind(doc, bid) || notFound;
})
