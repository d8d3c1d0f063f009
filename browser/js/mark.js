// Gives every element of the page, of its shadow roots and of its same-origin
// iframes a stable "bid" attribute, and reports what the observation needs
// from the live page. Bids already set are kept, so they stay stable across
// steps. Elements of an iframe get the iframe's bid as a prefix; iframes get
// letters (a, b, ..., z, aA, ...) and other elements numbers, per document.
//
// Argument: whether to compute the set-of-marks candidates (costly).
// Result: {focused: bid of the focused element or "", som: [bids],
// vw, vh: the viewport size}.
(function (withSom) {
  const ATTR = "bid";
  // Prefix of the aria-description that carries a canvas's bid; the
  // accessibility tree reader takes it out again.
  const DESC_MARK = "browsergym_id_";
  const STATE = Symbol.for("actionserver.bids");
  const SOM_TAGS = new Set(["input", "textarea", "select", "button", "a", "iframe", "video", "li", "td", "option"]);
  const som = [];

  function frameLetters(n) {
    // n = 0 -> "a", 25 -> "z", 26 -> "aA", 27 -> "aB", 52 -> "bA": the first
    // letter is lower case, the ones after it upper case.
    const chars = "abcdefghijklmnopqrstuvwxyz";
    const digits = [];
    let x = n;
    do {
      digits.push(x % 26);
      x = Math.floor(x / 26) - 1;
    } while (x >= 0);
    let out = "";
    for (let i = digits.length - 1; i >= 0; i--) {
      const c = chars[digits[i]];
      out += i === digits.length - 1 ? c : c.toUpperCase();
    }
    return out;
  }

  function state(win) {
    if (!win[STATE]) {
      Object.defineProperty(win, STATE, { value: { elems: 0, frames: 0 }, enumerable: false });
    }
    return win[STATE];
  }

  function centerOwner(doc, el) {
    const r = el.getBoundingClientRect();
    let d = doc, last = null, hit = null;
    do {
      last = hit;
      hit = d.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
      d = hit && hit.shadowRoot;
    } while (d && hit !== last);
    return hit === el || (hit && el.contains(hit));
  }

  function markDocument(doc, win, prefix) {
    const st = state(win);
    const seen = new Set();
    const frames = [];
    const somButtons = [];
    const visit = (el) => {
      let bid = el.getAttribute(ATTR);
      if (bid === null || seen.has(bid)) {
        const tag = el.tagName.toLowerCase();
        const local = (tag === "iframe" || tag === "frame") ? frameLetters(st.frames++) : String(st.elems++);
        bid = prefix + local;
        el.setAttribute(ATTR, bid);
      }
      seen.add(bid);
      const tag = el.tagName.toLowerCase();
      // Chromium leaves a canvas without content (as those made by
      // scripts) out of the accessibility tree unless it has something
      // interesting, such as a description. BrowserGym describes every
      // element with its bid and so lists such canvases as "Canvas ''";
      // describing only canvases keeps the rest of the tree as it is.
      if (tag === "canvas") {
        const desc = el.getAttribute("aria-description");
        if ((desc === null || desc.startsWith(DESC_MARK)) && desc !== DESC_MARK + bid) {
          el.setAttribute("aria-description", DESC_MARK + bid);
        }
      }
      if (tag === "iframe" || tag === "frame") frames.push(el);
      if (withSom && (SOM_TAGS.has(tag) || el.onclick != null || win.getComputedStyle(el).cursor === "pointer")) {
        const r = el.getBoundingClientRect();
        if ((r.right - r.left) * (r.bottom - r.top) >= 20 && centerOwner(doc, el) &&
            somButtons.every((b) => !b.contains(el))) {
          som.push(bid);
          if (el.matches('button, a, input[type="button"], div[role="button"]')) somButtons.push(el);
        }
      }
    };
    const walk = (root) => {
      for (const el of root.querySelectorAll("*")) {
        visit(el);
        if (el.shadowRoot) walk(el.shadowRoot);
      }
    };
    walk(doc);
    for (const f of frames) {
      let sub = null;
      try { sub = f.contentDocument; } catch (e) { sub = null; }
      if (sub && f.contentWindow) markDocument(sub, f.contentWindow, f.getAttribute(ATTR));
    }
  }

  function focusedBid() {
    let doc = document, bid = "";
    for (;;) {
      let el = doc.activeElement;
      while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
      if (!el) return bid;
      bid = el.getAttribute(ATTR) || "";
      let sub = null;
      try { sub = el.contentDocument; } catch (e) { sub = null; }
      if (!sub) return bid;
      doc = sub;
    }
  }

  markDocument(document, window, "");
  return { focused: focusedBid(), som: som, vw: window.innerWidth, vh: window.innerHeight };
})
