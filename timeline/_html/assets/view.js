(() => {
  "use strict";
  // The page's only script (allowed by hash in its Content-Security-Policy): loads the
  // earlier history on demand, searches, and jumps between turns and compactions.
  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
  const box = $("#history-box");
  const holder = $("#history-entries");
  const data = $("#history-data");
  let entries = null;
  let loading = null;

  async function decode(text) {
    const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return JSON.parse(await new Response(stream).text());
  }

  function entryElement(entry, index) {
    const el = document.createElement("details");
    el.className = "entry " + entry.k;
    el.dataset.index = String(index);
    if (entry.k === "turn") el.dataset.turn = entry.id;
    else el.dataset.summary = entry.id;
    const head = document.createElement("summary");
    head.textContent = entry.h;
    el.append(head);
    el.addEventListener("toggle", () => { if (el.open) fill(el); });
    return el;
  }

  function load() {
    if (loading) return loading;
    loading = (async () => {
      const raw = data ? data.textContent.trim() : "";
      if (!raw || !holder) { entries = []; return entries; }
      if (typeof DecompressionStream === "undefined") {
        holder.textContent = "This browser cannot decompress the history; use timeline search.";
        entries = [];
        return entries;
      }
      const list = await decode(raw);
      const frag = document.createDocumentFragment();
      list.forEach((entry, i) => frag.append(entryElement(entry, i)));
      holder.append(frag);
      entries = list;
      return entries;
    })();
    return loading;
  }

  function fill(el) {
    if (el.dataset.filled || !entries) return;
    const rows = document.createElement("div");
    rows.className = "rows";
    rows.innerHTML = entries[Number(el.dataset.index)].b; // escaped by the page's writer
    el.append(rows);
    el.dataset.filled = "1";
  }

  async function openHistory() {
    if (!box) return [];
    box.open = true;
    return load();
  }

  if (box) box.addEventListener("toggle", () => { if (box.open) load(); });

  // -- search ---------------------------------------------------------------------
  const q = $("#q");
  const count = $("#q-count");
  let matches = [];
  let at = -1;
  let timer = 0;
  let generation = 0;

  // Search finds blocks as the stores do (timeline.model.search_text): by terms, not
  // substrings. Each row lists the numbers of its terms (data-t, base 36) in the page's
  // term list; the query is analysed the same way and rows are chosen by the stores' rule
  // (search.js: every term, else any).
  let numbers = null;
  const entryRows = new Map();

  function termNumbers() {
    if (!numbers) {
      const el = $("#search-terms");
      const list = el ? JSON.parse(el.textContent) : [];
      numbers = new Map(list.map((term, i) => [term, i.toString(36)]));
    }
    return numbers;
  }

  const termsOf = (listed) => new Set(listed ? listed.split(" ") : []);

  // The terms of each row of an entry (read from its HTML, before it is made into DOM).
  function rowsOf(index) {
    let rows = entryRows.get(index);
    if (rows === undefined) {
      rows = Array.from(entries[index].b.matchAll(/data-t="([^"]*)"/g), (m) => termsOf(m[1]));
      entryRows.set(index, rows);
    }
    return rows;
  }

  function mark(block, finds, found) {
    const hit = finds(termsOf(block.dataset.t));
    block.classList.toggle("hit", hit);
    if (hit) found.push(block);
    return hit;
  }

  async function search() {
    const text = q.value.trim();
    const mine = ++generation;
    $$(".hit, .miss, .current").forEach((el) => el.classList.remove("hit", "miss", "current"));
    document.body.classList.toggle("searching", text !== "");
    matches = [];
    at = -1;
    if (!text) { count.textContent = ""; return; }
    if (data) await openHistory();
    if (mine !== generation) return;
    const known = termNumbers();
    const wanted = TimelineSearch.queryTerms(text).map((term) => known.get(term));
    const live = $$("#live .block");
    const finds = TimelineSearch.finder(wanted);
    const found = [];
    live.forEach((b) => mark(b, finds, found));
    $$("#live .turn, #live .compaction").forEach((s) => s.classList.toggle("miss", !$(".hit", s)));
    $$("#history-entries > .entry").forEach((el) => {
      const hit = rowsOf(Number(el.dataset.index)).some(finds);
      el.classList.toggle("miss", !hit);
      if (!hit) return;
      fill(el);
      el.open = true;
      $$(".block", el).forEach((b) => mark(b, finds, found));
    });
    matches = found;
    count.textContent = found.length ? `${found.length} matching blocks` : "no match";
  }

  function step(dir) {
    if (!matches.length) return;
    if (at >= 0) matches[at].classList.remove("current");
    at = (at + dir + matches.length) % matches.length;
    const el = matches[at];
    el.classList.add("current");
    el.scrollIntoView({ block: "center" });
    $("summary", el).focus({ preventScroll: true });
    count.textContent = `${at + 1} of ${matches.length} matching blocks`;
  }

  if (q) {
    q.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(search, 150); });
    q.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") { ev.preventDefault(); step(ev.shiftKey ? -1 : 1); }
      if (ev.key === "Escape") { q.value = ""; search(); q.blur(); }
    });
  }

  // -- jumps ----------------------------------------------------------------------
  const TURNS = "#live .turn, #history-entries > .entry.turn";
  const COMPACTIONS = "#live .compaction, #history-entries > .entry.compaction";

  function offset() {
    const top = $(".top");
    return top ? top.getBoundingClientRect().bottom + 4 : 0;
  }

  function scrollTo(el) {
    window.scrollTo({ top: el.getBoundingClientRect().top + window.scrollY - offset() });
  }

  function go(el) {
    if (el.tagName === "DETAILS" && el.classList.contains("entry")) { fill(el); el.open = true; }
    scrollTo(el);
    const focus = $("summary, h3", el);
    if (!focus) return;
    if (focus.tagName !== "SUMMARY" && !focus.hasAttribute("tabindex")) focus.tabIndex = -1;
    focus.focus({ preventScroll: true });
  }

  function visible(el) { return el.offsetParent !== null; }

  async function jump(selector, dir) {
    const pick = () => {
      const top = offset();
      const list = $$(selector).filter(visible);
      if (dir > 0) return list.find((el) => el.getBoundingClientRect().top > top + 2);
      return list.reverse().find((el) => el.getBoundingClientRect().top < top - 2);
    };
    let target = pick();
    if (!target && dir > 0 && box && (!box.open || !entries)) {
      await openHistory();
      target = pick();
    }
    if (target) go(target);
  }

  async function toTurn(value) {
    let id = value.trim();
    if (!id) return;
    if (/^\d+$/.test(id)) id = "t" + id;
    const find = () => $$(TURNS).find((el) => el.dataset.turn === id);
    let target = find();
    if (!target && box) { await openHistory(); target = find(); }
    if (target) go(target);
    const field = $("#turn");
    if (field) field.setCustomValidity(target ? "" : `no turn ${id}`);
    if (field && !target) field.reportValidity();
  }

  const on = (id, fn) => { const el = document.getElementById(id); if (el) el.addEventListener("click", fn); };
  on("q-next", () => step(1));
  on("q-prev", () => step(-1));
  on("turn-next", () => jump(TURNS, 1));
  on("turn-prev", () => jump(TURNS, -1));
  on("cmp-next", () => jump(COMPACTIONS, 1));
  on("cmp-prev", () => jump(COMPACTIONS, -1));
  const turnField = $("#turn");
  if (turnField) {
    turnField.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") { ev.preventDefault(); toTurn(turnField.value); }
    });
    turnField.addEventListener("input", () => turnField.setCustomValidity(""));
  }

  document.addEventListener("keydown", (ev) => {
    const tag = ev.target && ev.target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const keys = {
      "/": () => q && q.focus(),
      n: () => step(1),
      N: () => step(-1),
      j: () => jump(TURNS, 1),
      k: () => jump(TURNS, -1),
      "]": () => jump(COMPACTIONS, 1),
      "[": () => jump(COMPACTIONS, -1),
    };
    const fn = keys[ev.key];
    if (fn) { ev.preventDefault(); fn(); }
  });
})();
