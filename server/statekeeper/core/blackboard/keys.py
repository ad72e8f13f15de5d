"""Board and key names, and the prefix and glob selectors over keys.

A selector only ever filters keys inside one (tenant, board): stores bind the
tenant and the board as parameters and use the selector's literal `prefix`
as a key range, so no pattern character can widen a query beyond them.

Globs are matched by a bit-parallel NFA (one integer operation per key
character), never by a backtracking regex: a pattern like `**a**a**a**b`
stays linear in the key length, so a hostile pattern cannot stall the server.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from statekeeper.core.blackboard.models import BlackboardLimits
from statekeeper.core.errors import InvalidArgumentError, LimitExceededError

_MAX_CODE_POINT = 0x10FFFF
_SURROGATES = range(0xD800, 0xE000)
# Cache of per-character masks per matcher; keys draw from few characters.
_MASK_CACHE_LIMIT = 4096


def check_board(field_name: str, board: str, limits: BlackboardLimits) -> None:
    _check_name(field_name, board, limits.max_board_bytes)


def check_key(field_name: str, key: str, limits: BlackboardLimits) -> None:
    _check_name(field_name, key, limits.max_key_bytes)


def _check_name(field_name: str, value: str, max_bytes: int) -> None:
    if not value:
        raise InvalidArgumentError(field_name, "is required")
    if "\x00" in value:
        raise InvalidArgumentError(field_name, "must not contain NUL")
    size = len(value.encode())
    if size > max_bytes:
        raise LimitExceededError(field_name, max_bytes, f"is {size} bytes")


def prefix_end(prefix: str) -> str | None:
    """The smallest string greater than every string starting with `prefix`
    (in code point order, which is UTF-8 byte order), or None if there is
    none (every key from `prefix` on matches)."""
    chars = list(prefix)
    while chars:
        point = ord(chars[-1]) + 1
        if point in _SURROGATES:
            point = _SURROGATES.stop
        if point <= _MAX_CODE_POINT:
            chars[-1] = chr(point)
            return "".join(chars)
        chars.pop()
    return None


@dataclass(frozen=True)
class _Token:
    """One glob element: a single character from a set, or a star."""

    star: bool = False
    crosses_slash: bool = False
    literal: str = ""
    ranges: tuple[tuple[str, str], ...] = ()
    any_but_slash: bool = False

    def accepts(self, char: str) -> bool:
        if self.star:
            return self.crosses_slash or char != "/"
        if self.any_but_slash:
            return char != "/"
        if char in self.literal:
            return True
        return any(low <= char <= high for low, high in self.ranges)


@dataclass
class KeyMatcher:
    """Selects keys of one board: by literal prefix, and by glob if any.

    `prefix` is always a literal: for a glob it is the part before the first
    wildcard. Stores narrow by the key range [prefix, prefix_end(prefix))
    and then apply `matches`.
    """

    prefix: str = ""
    pattern: str | None = None
    _tokens: tuple[_Token, ...] = ()
    _star_mask: int = 0
    _masks: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def end(self) -> str | None:
        return prefix_end(self.prefix)

    def matches(self, key: str) -> bool:
        if not key.startswith(self.prefix):
            return False
        if self.pattern is None:
            return True
        return self._glob_matches(key)

    def _glob_matches(self, key: str) -> bool:
        accept = 1 << len(self._tokens)
        states = self._closure(1)
        for char in key:
            step, loop = self._char_masks(char)
            states = self._closure(((states << 1) & step) | (states & loop))
            if not states:
                return False
        return bool(states & accept)

    def _closure(self, states: int) -> int:
        """Adds the states reachable by letting stars match nothing."""
        while True:
            grown = states | ((states << 1) & self._star_mask)
            if grown == states:
                return states
            states = grown

    def _char_masks(self, char: str) -> tuple[int, int]:
        """(states entered by consuming `char`, star states that stay)."""
        cached = self._masks.get(char)
        if cached is not None:
            return cached
        step = loop = 0
        for index, token in enumerate(self._tokens, start=1):
            if not token.accepts(char):
                continue
            if token.star:
                loop |= 1 << index
            else:
                step |= 1 << index
        if len(self._masks) < _MASK_CACHE_LIMIT:
            self._masks[char] = (step, loop)
        return step, loop


def selector(
    prefix: str | None, pattern: str | None, limits: BlackboardLimits, field_prefix: str = ""
) -> KeyMatcher:
    """The matcher for a request's `prefix` or `pattern` (neither: all keys)."""
    if pattern is not None:
        return compile_glob(f"{field_prefix}pattern", pattern, limits)
    value = prefix or ""
    name = f"{field_prefix}prefix"
    if "\x00" in value:
        raise InvalidArgumentError(name, "must not contain NUL")
    size = len(value.encode())
    if size > limits.max_key_bytes:
        raise LimitExceededError(name, limits.max_key_bytes, f"is {size} bytes")
    return KeyMatcher(prefix=value)


def compile_glob(field_name: str, pattern: str, limits: BlackboardLimits) -> KeyMatcher:
    """Parses a glob: `*` any run without "/", `**` any run, `?` one
    character but "/", `[abc]` and `[a-z]` one character of the class, `\\`
    escapes the next character."""
    if not pattern:
        raise InvalidArgumentError(field_name, "must not be empty (omit it to match every key)")
    if "\x00" in pattern:
        raise InvalidArgumentError(field_name, "must not contain NUL")
    size = len(pattern.encode())
    if size > limits.max_pattern_bytes:
        raise LimitExceededError(field_name, limits.max_pattern_bytes, f"is {size} bytes")
    tokens = _parse(field_name, pattern)
    prefix = ""
    for token in tokens:
        if token.star or token.any_but_slash or token.ranges or len(token.literal) != 1:
            break
        prefix += token.literal
    star_mask = 0
    for index, token in enumerate(tokens, start=1):
        if token.star:
            star_mask |= 1 << index
    return KeyMatcher(prefix=prefix, pattern=pattern, _tokens=tuple(tokens), _star_mask=star_mask)


def _parse(field_name: str, pattern: str) -> list[_Token]:
    tokens: list[_Token] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            if index + 1 == len(pattern):
                raise InvalidArgumentError(field_name, "ends with an unfinished escape")
            tokens.append(_Token(literal=pattern[index + 1]))
            index += 2
        elif char == "*":
            double = pattern.startswith("**", index)
            tokens.append(_Token(star=True, crosses_slash=double))
            index += 2 if double else 1
        elif char == "?":
            tokens.append(_Token(any_but_slash=True))
            index += 1
        elif char == "[":
            token, index = _parse_class(field_name, pattern, index + 1)
            tokens.append(token)
        else:
            tokens.append(_Token(literal=char))
            index += 1
    return tokens


def _parse_class(field_name: str, pattern: str, index: int) -> tuple[_Token, int]:
    """Parses a class body starting after "["; returns it and the index after "]"."""
    members: list[str] = []
    ranges: list[tuple[str, str]] = []
    while index < len(pattern) and pattern[index] != "]":
        low, index = _class_char(field_name, pattern, index)
        if index + 1 < len(pattern) and pattern[index] == "-" and pattern[index + 1] != "]":
            high, index = _class_char(field_name, pattern, index + 1)
            if high < low:
                raise InvalidArgumentError(field_name, f"has an empty range {low}-{high}")
            ranges.append((low, high))
        else:
            members.append(low)
    if index >= len(pattern):
        raise InvalidArgumentError(field_name, "has an unclosed [ class")
    if not members and not ranges:
        raise InvalidArgumentError(field_name, "has an empty [] class")
    return _Token(literal="".join(members), ranges=tuple(ranges)), index + 1


def _class_char(field_name: str, pattern: str, index: int) -> tuple[str, int]:
    if pattern[index] == "\\":
        if index + 1 >= len(pattern):
            raise InvalidArgumentError(field_name, "ends with an unfinished escape")
        return pattern[index + 1], index + 2
    return pattern[index], index + 1
