"""What a word is for search, everywhere: the stores' indexes, their queries, snippets, and
any in-memory search over blocks (:mod:`timeline._model.ranking`).

A text becomes *terms*:

- words are runs of letters, digits, marks and ``_``; a number with decimal points
  (``3.14``, ``10.0.0.1``) is one term, leading zeros dropped (``007`` is ``7``);
- case is folded, and so are the accents of Latin letters (``Ünïcödé`` is ``unicode``);
- an identifier is found by its parts and as a whole: ``retry_with_backoff`` gives
  ``retry_with_backoff``, ``retri``, ``backoff``; ``getUserName`` gives ``getusername``,
  ``get``, ``user``, ``name``; ``worker3`` gives ``worker3``, ``worker``, ``3``. Paths and
  dotted names are their words (``src/worker_3.py``: ``src``, ``worker_3``, ``worker``,
  ``3``, ``py``). A long hex string (a hash, an id) is one term;
- scripts written without spaces (Chinese, Japanese, Thai...) give each character and
  each pair of neighbouring characters, so a question finds a word inside a sentence;
- English stop words (``what``, ``did``, ``the``...) and single Latin letters are left
  out, so a question is searched by its content words;
- English words are stemmed (:mod:`timeline._model.porter`): ``researching`` and
  ``research`` are one term.

Changing any of this changes every stored index: a store's migration must index its
rows again.
"""

from __future__ import annotations

import contextlib
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any, Final

import msgspec

from timeline._model._marks import MARKS
from timeline._model.block import Block
from timeline._model.porter import stem

__all__ = [
    "MAX_TERM_CHARS",
    "STOP_WORDS",
    "block_counts",
    "query_terms",
    "search_text",
    "shown_words",
    "term_counts",
    "term_spans",
    "terms",
    "word_term",
]

MAX_TERM_CHARS: Final = 64
"""A longer word is searched by its first this many characters (and not by its parts)."""

_STOP_WORDS: Final = """
    a about above after again against all am an and any are aren arent as at be because
    been before being below between both but by can cannot could couldn couldnt d did didn
    didnt do does doesn doesnt doing don dont down during each few for from further had
    hadn hadnt has hasn hasnt have haven havent having he hed hell hes her here heres hers
    herself him himself his how hows i id ill im ive if in into is isn isnt it its itself
    just ll lets m me more most mustn mustnt my myself no nor not now o of off on once only
    or other ought our ours ourselves out over own re s same shan shant she shed shell shes
    should shouldn shouldnt so some such t than that thats the their theirs them themselves
    then there theres these they theyd theyll theyre theyve this those through to too under
    until up ve very was wasn wasnt we wed well were weren werent weve what whats when
    whens where wheres which while who whom whos why whys will with won wont would wouldn
    wouldnt y you youd youll your youre yours yourself yourselves youve"""
STOP_WORDS: Final = frozenset(_STOP_WORDS.split())
"""English words a question is made of but an answer is not found by."""

_NUMBER = r"\d+(?:\.\d+)+"
_HEX: Final = frozenset("0123456789abcdef")
_CACHE_LIMIT: Final = 4_096
"""Words held in each of the analysis cache's two generations: when the newer one is
full it becomes the older one, and a word found there is moved back into the newer one,
so the words in use stay analysed while the cache stays small (a session's vocabulary
grows without end: every path, identifier and number is a word)."""
_words: dict[str, tuple[tuple[int, int, str], ...]] = {}
"""Each word seen lately (as written) -> its terms with their spans inside it."""
_terms: dict[str, tuple[str, ...]] = {}
"""Each word seen lately -> its terms (what counting needs)."""
_older_words: dict[str, tuple[tuple[int, int, str], ...]] = {}
_older_terms: dict[str, tuple[str, ...]] = {}
"""The older generation of :data:`_words` and :data:`_terms`."""
_ASCII: Final = re.compile(f"{_NUMBER}|\\w+")
"""Numbers and words of an ASCII text (which holds no combining mark)."""


@cache
def _token() -> re.Pattern[str]:
    """Numbers and words; a word is ``\\w`` characters and the combining marks among them
    (which ``\\w`` leaves out, splitting Hindi or Thai words). Compiled on first use."""
    return re.compile(f"{_NUMBER}|\\w+(?:(?=[^\\x00-\\x7f])[{MARKS}]+\\w*)*")


_PIECE: Final = 1 << 15
"""Characters of a long text split into words at once (:func:`_word_counts`)."""


def _words_of(text: str) -> list[str]:
    return (_ASCII if text.isascii() else _token()).findall(text)


def _word_counts(text: str) -> Counter[str]:
    """How often each word occurs in ``text``: a long text is read a piece at a time,
    cut at a space or a line break (which no word or number holds), so what it costs
    grows with its distinct words, not with its length."""
    if len(text) <= _PIECE:
        return Counter(_words_of(text))
    pattern = _ASCII if text.isascii() else _token()
    counts: Counter[str] = Counter()
    start, n = 0, len(text)
    while start < n:
        end = start + _PIECE
        if end >= n:
            end = n
        else:
            cut = max(text.rfind(" ", start, end), text.rfind("\n", start, end))
            if cut > start:
                end = cut
            else:  # no break in the piece: up to the next one
                breaks = [i for i in (text.find(" ", end), text.find("\n", end)) if i >= 0]
                end = min(breaks) if breaks else n
        counts.update(pattern.findall(text, start, end))
        start = end
    return counts


def _unspaced(ch: str) -> bool:
    """A character of a script written without spaces between words."""
    cp = ord(ch)
    return (
        0x3040 <= cp <= 0x30FF  # hiragana, katakana
        or 0x3400 <= cp <= 0x4DBF
        or 0x4E00 <= cp <= 0x9FFF
        or 0xF900 <= cp <= 0xFAFF
        or 0x20000 <= cp <= 0x2FFFF  # han
        or 0x31F0 <= cp <= 0x31FF
        or 0x0E00 <= cp <= 0x0EFF  # thai, lao
        or 0x1000 <= cp <= 0x109F  # myanmar
        or 0x1780 <= cp <= 0x17FF  # khmer
    )


def _fold(text: str) -> str:
    """Case folded; accents of Latin letters dropped; compatibility forms unified."""
    if text.isascii():
        return text.lower()
    out: list[str] = []
    latin = False
    for ch in unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold()):
        if unicodedata.combining(ch):
            if latin:
                continue
        else:
            latin = ch < "\u0250" or "\u1e00" <= ch <= "\u1eff"
        out.append(ch)
    folded = unicodedata.normalize("NFC", "".join(out))
    # what a folded form may hold that the stores' tokenizers would split
    return "".join(c for c in folded if not c.isascii() or c.isalnum() or c in "._")


def _kind(ch: str) -> str:
    if ch == "_":
        return "_"
    if ch.isdigit():
        return "9"
    if _unspaced(ch):
        return "c"
    return "a"


def _parts(word: str) -> list[tuple[int, int]]:
    """Spans of the parts of ``word``: split at ``_``, between letters and digits, at a
    change of script, and at camelCase (``getUserName``, ``HTTPServer``; not ``IDs``)."""
    spans: list[tuple[int, int]] = []
    start = 0
    n = len(word)
    for i in range(1, n + 1):
        if i < n:
            a, b = word[i - 1], word[i]
            ka, kb = _kind(a), _kind(b)
            split = ka != kb
            if not split and ka == "a":
                after = word[i + 1 : i + 3]
                split = (a.islower() and b.isupper()) or (
                    a.isupper()
                    and b.isupper()
                    and len(after) == 2
                    and after.isalpha()
                    and after.islower()
                )
            if not split:
                continue
        if word[start] != "_":
            spans.append((start, i))
        start = i
    return spans


def _simple(part: str) -> list[tuple[int, int, str]]:
    """The terms of one part (no ``_``, one kind of character), spans inside it."""
    if _unspaced(part[0]):
        folded = _fold(part)
        if len(folded) != len(part):  # a character that folds to more: as one term
            return [(0, len(part), folded)]
        grams = [(i, i + 1, folded[i]) for i in range(len(folded))]
        grams += [(i, i + 2, folded[i : i + 2]) for i in range(len(folded) - 1)]
        return grams
    folded = _fold(part)
    if folded.isdigit():
        return [(0, len(part), folded.lstrip("0") or "0")]
    if not folded or folded in STOP_WORDS or (len(folded) == 1 and folded.isascii()):
        return []
    return [(0, len(part), stem(folded)[:MAX_TERM_CHARS])]


def _analyse(word: str) -> tuple[tuple[int, int, str], ...]:
    if "." in word:  # a number with decimal points
        return ((0, len(word), ".".join(p.lstrip("0") or "0" for p in word.split("."))),)
    if len(word) > MAX_TERM_CHARS:
        whole = _fold(word)[:MAX_TERM_CHARS]
        return ((0, len(word), whole),) if whole else ()
    lower = word.lower()
    if len(word) >= 6 and set(lower) <= _HEX and not lower.isdigit() and not lower.isalpha():
        return ((0, len(word), lower),)
    spans = _parts(word)
    if len(spans) == 1 and spans[0] == (0, len(word)):
        return tuple(_simple(word))
    out: list[tuple[int, int, str]] = []
    if len(spans) > 1 or "_" in word:
        whole = _fold(word)
        if whole.strip("_"):
            out.append((0, len(word), whole))
    for start, end in spans:
        out += [(start + a, start + b, t) for a, b, t in _simple(word[start:end])]
    return tuple(out)


def _word_terms(word: str) -> tuple[tuple[int, int, str], ...]:
    found = _words.get(word)
    if found is None:
        found = _older_words.get(word)
        names = _older_terms.get(word) if found is not None else None
        if found is None:
            found = _analyse(word)
        if len(_words) >= _CACHE_LIMIT:
            _older_words.clear()
            _older_words.update(_words)
            _words.clear()
            _older_terms.clear()
            _older_terms.update(_terms)
            _terms.clear()
        _words[word] = found
        _terms[word] = names if names is not None else tuple(t for _, _, t in found)
    return found


def _word_term_names(word: str) -> tuple[str, ...]:
    found = _terms.get(word)
    if found is None:
        _word_terms(word)
        found = _terms[word]
    return found


def terms(text: str) -> list[str]:
    """Every term of ``text``, in order, repeats included."""
    return [t for word in _words_of(text) for t in _word_term_names(word)]


def term_counts(text: str, into: dict[str, int] | None = None) -> dict[str, int]:
    """How often each term occurs in ``text`` (added to ``into`` when given)."""
    counts: dict[str, int] = {} if into is None else into
    get = counts.get
    known = _terms.get
    for word, n in _word_counts(text).items():
        for term in known(word) or _word_term_names(word):
            counts[term] = get(term, 0) + n
    return counts


_SEPARATORS: Final = str.maketrans({c: " " for c in string.punctuation if c != "_"})


def shown_words(text: str) -> frozenset[str]:
    """The distinct words of ``text``, quickly: lower case, split at white space and
    ASCII punctuation (``_`` joins a word; a number with decimals gives its parts). For
    telling whether two texts name the same things (with :func:`word_term`), not for an
    index."""
    return frozenset(text.lower().translate(_SEPARATORS).split())


def word_term(word: str) -> str:
    """The term a whole word is searched by: its stem, an identifier or a number as a
    whole (``retry_with_backoff``, not its parts); ``""`` for a stop word."""
    return next((t for a, b, t in _word_terms(word) if a == 0 and b == len(word)), "")


def query_terms(text: str) -> list[str]:
    """The distinct terms of a query, in order: what it is searched by."""
    return list(dict.fromkeys(terms(text)))


def term_spans(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int, str]]:
    """Each term of ``text[start:end]`` with its span in ``text`` (a part of a word, or
    the word): what a snippet marks."""
    for match in _token().finditer(text, start, len(text) if end is None else end):
        base = match.start()
        for a, b, term in _word_terms(match.group()):
            yield base + a, base + b, term


def search_text(block: Block) -> str:
    """The text a block is found by: its tool's name and its text (a JSON text by its
    values, so escapes and keys add no words)."""
    text = block.text
    if block.mime == "application/json" and text[:1] in "{[":
        with contextlib.suppress(msgspec.DecodeError):
            text = " ".join(_values(msgspec.json.decode(text)))
    return f"{block.tool_id}\n{text}" if block.tool_id else text


def block_counts(block: Block, call: Block | None = None) -> dict[str, int]:
    """The term counts a block is searched by: its :func:`search_text`, and for a tool
    result its ``call``'s too (so a question naming the command finds its output)."""
    counts = term_counts(search_text(block))
    if call is not None:
        term_counts(search_text(call), counts)
    return counts


def _values(value: Any) -> Iterable[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _values(item)
    elif isinstance(value, list):
        for item in value:
            yield from _values(item)
    elif value is not None and not isinstance(value, bool):
        yield str(value)
