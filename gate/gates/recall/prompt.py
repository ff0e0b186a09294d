"""Recall gate: one prompt, analysed once (hot path, standard library only).

A prompt's content terms (gate.textproc: stemmed, stopwords out, identifiers split through their parts, pasted
paths cut to their last components, the project's and the rules' noise words out), whether it is trivial (an
acknowledgement, a choice by number, a slash command), its raw query terms, the readable words behind its
stems, and the two things around it that the verdict and the query both read (the terms of the reply it answers,
the topic terms of the files the last turn touched): PromptText holds them for the shift verdict (topic.py), the
query (query.py) and the pair filter (fire.py), which read its fields and call nothing back here; the prompt and
the reply are tokenized once whichever of them run. Word lists and limits: rules/topic_shift.toml.
"""

from __future__ import annotations

from gate.literals import CompiledOnUse
from gate.memo import cache  # functools.cache without functools (gate/memo.py)
from gate.rule_reading import rule_number, rule_section
from gate.textproc import CAMEL, expand_identifiers, terms

TYPE_CHECKING = False  # typing and dataclasses cost the hook milliseconds to import; annotations are strings
if TYPE_CHECKING:
    import re
    from collections.abc import Iterable, Mapping
    from typing import Any

    Rules = Mapping[str, Any]

# Words as the user wrote them, to map a stem back to a readable surface form.
_WORD = CompiledOnUse(r"[A-Za-z][A-Za-z0-9]*(?:['’][a-z]+)?")
# The regexes below compile on first use, and only when a cheap check says they could match: compiling one
# costs a hook process 50-300 µs, and most prompts need none of them.
_SLASH_COMMAND = r"^/[A-Za-z][\w:.-]*(?:\s|$)"
_NUMBERS = r"^[\s\d.,;:#()\-+/&]*(?:and|or)?[\s\d.,;:#()\-+/&]*$"
_NUMBERS_ASCII = " \t\n\r\f\v\x1c\x1d\x1e\x1f0123456789.,;:#()-+/&"  # _NUMBERS' classes, ASCII part
_NOT_WORD = r"[^\w\s'/’]"
_SLASH_COMMAND_RE, _NUMBERS_RE, _NOT_WORD_RE = (CompiledOnUse(p) for p in (_SLASH_COMMAND, _NUMBERS, _NOT_WORD))
_CAMEL_RE = CompiledOnUse(CAMEL)
# ASCII characters that _NOT_WORD matches (neither \w, whitespace, quote nor slash) -> space
_ASCII_NOT_WORD = {
    code: " " for code in range(128)
    if not (chr(code).isalnum() or chr(code).isspace() or chr(code) in "_'/")
}
_PATH_SPLIT = CompiledOnUse(r"[\\/]+")
_PATH_PART = CompiledOnUse(r"[._\-\s]+")


# ---------------------------------------------------------------------------------------------------------
# rules


@cache
def _stem_set(words: tuple[str, ...]) -> frozenset[str]:
    out: set[str] = set()
    out.update(terms(" ".join(words)))  # one pass: the same stems as word by word
    return frozenset(out)


def weak_terms(rules: Rules) -> frozenset[str]:
    """The stems of the rules' weak words: they match every memory (cached per list)."""
    return _stem_set(tuple(str(w) for w in rule_section(rules, "terms").get("weak", [])))


def noise_terms(rules: Rules) -> frozenset[str]:
    """The stems of the rules' noise words (file extensions): they stand in every prompt (cached per list)."""
    return _stem_set(tuple(str(w) for w in rule_section(rules, "terms").get("noise", [])))


@cache
def _stem_word(word: str) -> tuple[str, ...]:
    """terms() of one word: its stem, or nothing for a stopword (cached: prompts repeat their words)."""
    return tuple(terms(word))


# ---------------------------------------------------------------------------------------------------------
# trivial prompts


def _normalise(prompt: str) -> str:
    """Lowercase, punctuation (but ' and /) to spaces, whitespace runs to one space."""
    lowered = prompt.lower()
    spaced = lowered.translate(_ASCII_NOT_WORD) if lowered.isascii() else _NOT_WORD_RE.sub(" ", lowered)
    return " ".join(spaced.split())


def _only_numbers(text: str) -> bool:
    """_NUMBERS.match(text), answered without the regex when the text is ASCII."""
    rest = text.strip(_NUMBERS_ASCII)
    if rest in ("", "and", "or"):
        return True
    return not rest.isascii() and _NUMBERS_RE.match(text) is not None


def is_trivial(prompt: str, rules: Rules) -> bool:
    """An acknowledgement, a choice by number, or a slash command: no topic of its own."""
    return trivial_kind(prompt, rules) is not None


def trivial_kind(prompt: str, rules: Rules) -> str | None:
    """Why a prompt has no topic of its own: "command" (a slash command, or written by a program: nothing to
    answer from memory) or "answer" (an acknowledgement, a choice by number: it answers the reply before it,
    whose subject is the session's); None for a prompt with content."""
    text = (prompt or "").strip()
    if not text or (text.startswith("/") and _SLASH_COMMAND_RE.match(text)):
        return "command"
    if text.startswith("<") and text.startswith(tuple(rule_section(rules, "trivial").get("prefixes", []))):
        return "command"  # written by a program (a task notification), not by the user
    if _only_numbers(text):
        return "answer"
    section = rule_section(rules, "trivial")
    normal = _normalise(text)
    if len(normal.replace(" ", "")) <= int(section.get("max_chars", 2)):
        return "answer"
    phrases = {_normalise(str(p)) for p in section.get("phrases", [])}
    if normal in phrases:
        return "answer"
    words = normal.split()
    vocabulary = {str(w).lower() for w in section.get("words", [])}
    if len(words) <= int(section.get("max_words", 8)) and all(w in vocabulary or w.isdigit() for w in words):
        return "answer"
    return None


# ---------------------------------------------------------------------------------------------------------
# terms of a prompt and of paths


def _is_identifier(word: str) -> bool:
    """A word textproc splits (camelCase): decided by textproc itself so both agree."""
    return expand_identifiers(word) != word


# A file path written in a prompt (POSIX or Windows, two separators or more): only its last few components
# name the subject; the rest (drive, home, the project's own folders) is the same in every prompt.
_PROMPT_PATH = r"(?:[A-Za-z]:)?(?:[\\/][^\s\\/:*?\"<>|]+){2,}[\\/]?"
_PROMPT_PATH_RE = CompiledOnUse(_PROMPT_PATH)


def _last_components(match: re.Match[str], keep: int) -> str:
    parts = [p for p in _PATH_SPLIT.split(match.group(0)) if p]
    return " " + " ".join(parts[-keep:]) + " "


def without_long_paths(text: str, keep: int = 3) -> str:
    """The text with each file path cut to its last `keep` components."""
    if "/" not in text and "\\" not in text:
        return text
    return _PROMPT_PATH_RE.sub(lambda m: _last_components(m, keep), text)


def _prompt_terms(prompt: str, rules: Rules, noise: frozenset[str] = frozenset()) -> list[str]:
    """The prompt's terms; a split identifier counts through its parts only ("reserveAccount" is
    "reserve" + "account"), so it neither weighs triple nor looks new when its words are known. Paths are cut
    to their last components; `noise` (the project's own folder names, words every memory shares) and the
    rules' noise words are left out: they stand in every prompt and say nothing about its subject."""
    text = _cut_prompt(prompt, rules)
    return _content_of(text, terms(text), rules, noise)


def _cut_prompt(prompt: str, rules: Rules) -> str:
    """The prompt as its terms are read: at most max_prompt_chars, a pasted log by its error lines
    (gate/pasted.py), pasted paths cut to their last components."""
    limit = int(rule_number(rules, "shift", "max_prompt_chars", 6000))
    if "\n" in prompt:
        from gate.pasted import searchable
        from gate.rules import load_rules

        prompt = searchable(prompt, load_rules("text"))
    return without_long_paths(prompt[:limit], int(rule_number(rules, "files", "components", 3)))


def _content_of(text: str, all_terms: list[str], rules: Rules, noise: frozenset[str]) -> list[str]:
    wholes = {stem for word in _WORD.findall(text) if _is_identifier(word) for stem in _stem_word(word.lower())}
    dropped = noise_terms(rules) | noise
    return [t for t in all_terms if t not in wholes and t not in dropped]


def query_terms(
    prompt: str | PromptText, rules: Rules, noise: frozenset[str] = frozenset(), limit: int = 32
) -> list[str]:
    """What the recall gate searches memory for: the prompt's distinct terms, paths cut short, the project's
    noise and the rules' weak words left out (they match every memory and crowd out the ones that matter)."""
    weak = weak_terms(rules)
    seen: dict[str, None] = {}
    for term in content_terms(prompt, rules, noise):
        if term not in weak:
            seen.setdefault(term, None)
    return list(seen)[:limit]


_UNKNOWN = "?"  # PromptText's `trivial` not given


class PromptText:
    """One prompt, analysed once per hook run: the shift check, the record update, the pair filter and the
    search read its fields; the prompt and the reply it answers are tokenized once, whichever of them run."""

    __slots__ = ("_cut", "_terms", "content", "noise", "raw", "reply_terms", "rules_noise", "surface_words",
                 "text", "touched", "trivial", "weak")

    def __init__(
        self,
        text: str,
        rules: Rules,
        noise: frozenset[str] = frozenset(),
        trivial: str | None = _UNKNOWN,
        reply: str = "",
        touched: Iterable[str] = (),
    ) -> None:
        """`trivial`: trivial_kind(text, rules) when the caller already asked it. `reply`: the end of the reply
        the prompt answers, as far as it is read; `touched`: the files the last turn touched."""
        self.text = text
        self.noise = noise
        self.weak = weak_terms(rules)  # the rules' weak words: they match every memory
        self.rules_noise = noise_terms(rules)  # the rules' noise words (file extensions): in every prompt
        # None, "answer" or "command"
        self.trivial = trivial_kind(text, rules) if trivial == _UNKNOWN else trivial
        self._terms: list[str] = []
        self._cut: str | None = None  # the text the terms were read from
        # content terms with repeats, in order: paths cut short, identifiers through their parts, noise out
        self.content: list[str] = []
        if self.trivial != "command":
            cut = self._cut = _cut_prompt(text, rules)
            self._terms = terms(cut)
            self.content = _content_of(cut, self._terms, rules, noise)
        # the raw query: the prompt's distinct terms, only the rules' noise words and weak words out (the
        # project's words and the words most memories share are kept: cleaning them measured worse)
        dropped = self.rules_noise | self.weak
        self.raw = list(dict.fromkeys(t for t in self._terms if t not in dropped))
        # the readable words behind the stems, for the verdict's terms: only a prompt with a topic gets one
        self.surface_words: tuple[dict[str, str], list[str | None]] | None = (
            surface_map(text, rules) if self.trivial is None and self.content else None
        )
        self.reply_terms: list[str] = terms(reply) if reply else []  # with repeats, in order
        self.touched: list[str] = sorted(path_terms(touched, rules))  # sorted: a set's order follows the hash seed

    def terms_of(self, text: str) -> list[str]:
        """terms(text), without tokenizing again when `text` is what this prompt's terms were read from (a
        prompt within the length limit and with no long path to cut short: most of them)."""
        return list(self._terms) if text == self._cut else terms(text)


def content_terms(prompt: str | PromptText, rules: Rules, noise: frozenset[str]) -> list[str]:
    """The prompt's content terms with repeats (PromptText.content, or computed for a plain string)."""
    return prompt.content if isinstance(prompt, PromptText) else _prompt_terms(prompt, rules, noise)


@cache
def project_words(root: str) -> frozenset[str]:
    """Terms of the project's own path (home directory included): in every path a prompt pastes, never a
    subject ("C:\\Users\\me\\work\\shop\\addons\\sale" is about "sale")."""
    words: set[str] = set()
    for part in _PATH_SPLIT.split(root):
        words.update(terms(_PATH_PART.sub(" ", part)))
    return frozenset(words)


def path_terms(paths: Iterable[str], rules: Rules) -> set[str]:
    """Topic terms of file paths: the last few components, extensions and generic parts dropped."""
    section = rule_section(rules, "files")
    keep = int(section.get("components", 3))
    ignore = {str(w).lower() for w in section.get("ignore", [])}
    out: set[str] = set()
    for path in paths:
        parts = [p for p in _PATH_SPLIT.split(str(path)) if p][-keep:]
        for part in parts:
            stem = part.rsplit(".", 1)[0] if "." in part[1:] else part
            for piece in _PATH_PART.split(stem):
                if piece and piece.lower() not in ignore:
                    out.update(t for t in terms(piece) if t not in ignore)
    return out


def surface_map(prompt: str, rules: Rules) -> tuple[dict[str, str], list[str | None]]:
    """stem -> the first word the prompt used for it, and the prompt's word sequence as stems.

    The sequence keeps None for words that are not content (stopwords), so adjacency means adjacency in
    the prompt ("reserve account" is a phrase; "reserve the account" is not).
    """
    limit = int(rule_number(rules, "shift", "max_prompt_chars", 6000))
    surface: dict[str, str] = {}
    sequence: list[str | None] = []
    for match in _WORD.finditer(prompt[:limit]):
        word = match.group(0)
        for piece in _CAMEL_RE.sub(" ", word).split() if _is_identifier(word) else [word]:
            stem = _stem_word(piece.lower())
            if stem:
                surface.setdefault(stem[0], piece.lower())
            sequence.append(stem[0] if stem else None)
    return surface, sequence
