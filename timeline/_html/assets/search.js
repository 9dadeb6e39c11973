// What a word is for search, as timeline.model.search_text reads it (the stores' meaning),
// for the page's search box: a query becomes the terms the page's blocks are listed by.
// The stop words are the Python module's, written in when the page is made.
const TimelineSearch = (() => {
  "use strict";
  const STOP = new Set("__STOP_WORDS__".split(" "));
  const MAX_TERM = 64;
  const TOKEN = /\p{Nd}+(?:\.\p{Nd}+)+|[\p{L}\p{N}_]+(?:\p{M}+[\p{L}\p{N}_]*)*/gu;
  const HEX = /^[0-9a-f]+$/;
  const VOWELS = new Set(["a", "e", "i", "o", "u"]);

  function unspaced(ch) {
    const cp = ch.codePointAt(0);
    return (cp >= 0x3040 && cp <= 0x30ff) || (cp >= 0x3400 && cp <= 0x4dbf)
      || (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0xf900 && cp <= 0xfaff)
      || (cp >= 0x20000 && cp <= 0x2ffff) || (cp >= 0x31f0 && cp <= 0x31ff)
      || (cp >= 0x0e00 && cp <= 0x0eff) || (cp >= 0x1000 && cp <= 0x109f)
      || (cp >= 0x1780 && cp <= 0x17ff);
  }

  const ascii = (s) => /^[\x00-\x7f]*$/.test(s);
  const isDigit = (ch) => /^\p{Nd}$/u.test(ch);

  // Case folded; accents of Latin letters dropped; compatibility forms unified.
  function fold(text) {
    if (ascii(text)) return text.toLowerCase();
    const folded = text.normalize("NFKC").toLowerCase()
      .replace(/ß/g, "ss").replace(/ς/g, "σ").replace(/ſ/g, "s");
    const out = [];
    let latin = false;
    for (const ch of folded.normalize("NFKD")) {
      if (/^\p{Mn}$/u.test(ch)) {
        if (latin) continue;
      } else {
        latin = ch < "\u0250" || (ch >= "\u1e00" && ch <= "\u1eff");
      }
      out.push(ch);
    }
    return Array.from(out.join("").normalize("NFC"))
      .filter((c) => !ascii(c) || /[A-Za-z0-9._]/.test(c)).join("");
  }

  // -- the Porter stemmer, as timeline.model.porter ----------------------------------
  function consonant(w, i) {
    const ch = w[i];
    if (VOWELS.has(ch)) return false;
    if (ch === "y") return i === 0 || !consonant(w, i - 1);
    return true;
  }
  function measure(s) {
    let m = 0, i = 0;
    const n = s.length;
    while (i < n && consonant(s, i)) i++;
    while (i < n) {
      while (i < n && !consonant(s, i)) i++;
      if (i >= n) break;
      while (i < n && consonant(s, i)) i++;
      m++;
    }
    return m;
  }
  const hasVowel = (s) => Array.from(s).some((_, i) => !consonant(s, i));
  const doubleC = (w) => w.length >= 2 && w.at(-1) === w.at(-2) && consonant(w, w.length - 1);
  function cvc(w) {
    const n = w.length;
    if (n < 3 || "wxy".includes(w[n - 1])) return false;
    return consonant(w, n - 3) && !consonant(w, n - 2) && consonant(w, n - 1);
  }
  function tidy(w) {
    if (w.endsWith("at") || w.endsWith("bl") || w.endsWith("iz")) return w + "e";
    if (doubleC(w) && !"lsz".includes(w.at(-1))) return w.slice(0, -1);
    if (measure(w) === 1 && cvc(w)) return w + "e";
    return w;
  }
  function step1ab(w) {
    if (w.endsWith("sses") || w.endsWith("ies")) w = w.slice(0, -2);
    else if (w.endsWith("s") && !w.endsWith("ss")) w = w.slice(0, -1);
    if (w.endsWith("eed")) return measure(w.slice(0, -3)) > 0 ? w.slice(0, -1) : w;
    for (const suffix of ["ed", "ing"]) {
      if (w.endsWith(suffix) && hasVowel(w.slice(0, -suffix.length))) {
        return tidy(w.slice(0, -suffix.length));
      }
    }
    return w;
  }
  const STEP2 = [["ational", "ate"], ["tional", "tion"], ["enci", "ence"], ["anci", "ance"],
    ["izer", "ize"], ["abli", "able"], ["alli", "al"], ["entli", "ent"], ["eli", "e"],
    ["ousli", "ous"], ["ization", "ize"], ["ation", "ate"], ["ator", "ate"], ["alism", "al"],
    ["iveness", "ive"], ["fulness", "ful"], ["ousness", "ous"], ["aliti", "al"],
    ["iviti", "ive"], ["biliti", "ble"]];
  const STEP3 = [["icate", "ic"], ["ative", ""], ["alize", "al"], ["iciti", "ic"],
    ["ical", "ic"], ["ful", ""], ["ness", ""]];
  const STEP4 = ["al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment",
    "ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize"];
  function replace(w, rules, least) {
    for (const [suffix, by] of rules) {
      if (w.endsWith(suffix)) {
        const s = w.slice(0, -suffix.length);
        return measure(s) > least ? s + by : w;
      }
    }
    return w;
  }
  function step4(w) {
    for (const suffix of STEP4) {
      if (w.endsWith(suffix)) {
        const s = w.slice(0, -suffix.length);
        if (suffix === "ion" && !(s.endsWith("s") || s.endsWith("t"))) return w;
        return measure(s) > 1 ? s : w;
      }
    }
    return w;
  }
  function step5(w) {
    if (w.endsWith("e")) {
      const s = w.slice(0, -1);
      const m = measure(s);
      if (m > 1 || (m === 1 && !cvc(s))) w = s;
    }
    if (w.endsWith("ll") && measure(w) > 1) w = w.slice(0, -1);
    return w;
  }
  function stem(w) {
    if (w.length <= 2 || !/^[a-z]+$/.test(w)) return w;
    w = step1ab(w);
    if (w.endsWith("y") && hasVowel(w.slice(0, -1))) w = w.slice(0, -1) + "i";
    return step5(step4(replace(replace(w, STEP2, 0), STEP3, 0)));
  }

  // -- words into terms -------------------------------------------------------------
  const kind = (ch) => (ch === "_" ? "_" : isDigit(ch) ? "9" : unspaced(ch) ? "c" : "a");

  function parts(chars) {
    const spans = [];
    let start = 0;
    const n = chars.length;
    for (let i = 1; i <= n; i++) {
      if (i < n) {
        const a = chars[i - 1], b = chars[i];
        const ka = kind(a), kb = kind(b);
        let split = ka !== kb;
        if (!split && ka === "a") {
          const after = chars.slice(i + 1, i + 3).join("");
          const lower = (c) => /^\p{Ll}$/u.test(c), upper = (c) => /^\p{Lu}$/u.test(c);
          split = (lower(a) && upper(b)) || (upper(a) && upper(b) && after.length === 2
            && /^\p{L}+$/u.test(after) && after === after.toLowerCase()
            && after !== after.toUpperCase());
        }
        if (!split) continue;
      }
      if (chars[start] !== "_") spans.push([start, i]);
      start = i;
    }
    return spans;
  }

  function simple(part) {
    const chars = Array.from(part);
    if (unspaced(chars[0])) {
      const folded = Array.from(fold(part));
      if (folded.length !== chars.length) return [folded.join("")];
      const grams = folded.slice();
      for (let i = 0; i + 1 < folded.length; i++) grams.push(folded[i] + folded[i + 1]);
      return grams;
    }
    const folded = fold(part);
    if (/^\p{Nd}+$/u.test(folded)) return [folded.replace(/^0+/, "") || "0"];
    if (!folded || STOP.has(folded) || (folded.length === 1 && ascii(folded))) return [];
    return [Array.from(stem(folded)).slice(0, MAX_TERM).join("")];
  }

  function analyse(word) {
    const chars = Array.from(word);
    if (word.includes(".")) {
      return [word.split(".").map((p) => p.replace(/^0+/, "") || "0").join(".")];
    }
    if (chars.length > MAX_TERM) {
      const whole = Array.from(fold(word)).slice(0, MAX_TERM).join("");
      return whole ? [whole] : [];
    }
    const lower = word.toLowerCase();
    if (chars.length >= 6 && HEX.test(lower) && !/^\d+$/.test(lower) && !/^[a-z]+$/.test(lower)) {
      return [lower];
    }
    const spans = parts(chars);
    if (spans.length === 1 && spans[0][0] === 0 && spans[0][1] === chars.length) {
      return simple(word);
    }
    const out = [];
    if (spans.length > 1 || word.includes("_")) {
      const whole = fold(word);
      if (whole.replace(/_/g, "")) out.push(whole);
    }
    for (const [s, e] of spans) out.push(...simple(chars.slice(s, e).join("")));
    return out;
  }

  // The distinct terms of a query, in order: what it is searched by.
  function queryTerms(text) {
    const seen = new Set();
    for (const word of text.match(TOKEN) || []) {
      for (const term of analyse(word)) seen.add(term);
    }
    return Array.from(seen);
  }

  // Which rows a query finds, as the stores find them: the rows holding any term of the
  // query (the stores rank them, every word counting). `wanted` is the query's terms as
  // the rows name them (undefined: no row holds that term); the answer is a test of one
  // row's terms (a Set).
  function finder(wanted) {
    const known = wanted.filter((t) => t !== undefined);
    return (row) => known.some((t) => row.has(t));
  }

  return { queryTerms, finder };
})();
