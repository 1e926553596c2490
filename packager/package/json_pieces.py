"""A JSON document parsed from its bytes a piece at a time, never held whole.

The standard library's parser reads one whole string; the plan JSON of 100,000 tensors is 50 MB
of it. Here every value that fits in a window of the text is parsed by the standard library
itself (json.JSONDecoder.raw_decode, with the caller's object_hook), and only a container too
large for the window is walked here: its brackets, keys, commas and colons, each of its values
parsed the same way. So the result, and every object the hook sees (in the same order), are
json.loads's, and what is held is the window and the parsed values.

`runs` sees the arrays: each run of an array's elements parsed at once (a whole array, or a
few thousand elements of one too large for the window) is given to it, in the order of the
text, and what it returns stands for those elements. So a caller can check or compact the many
entries of a large plan a run at a time, comparing whole columns, and what is held stays small.
"""

from __future__ import annotations

import codecs
import json
import re
from json.decoder import scanstring
from typing import Callable, Iterable, Iterator

WINDOW = 1 << 20  # characters read ahead, about; a value of a walked object is first tried on WINDOW / 16
_SPACES = re.compile(r"[ \t\n\r]*")  # JSON's whitespace, and only it
_SEPARATOR = re.compile(r"[ \t\n\r]*([,\]}])")
_END_OF_SCALAR = re.compile(r"[ \t\n\r,\]}:]")


class _Incomplete(Exception):
    """The window ends inside the value being read: read more, then read it again."""


class _Text:
    """The decoded text, a window of it at a time; `pos` indexes `buf`."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self.buf, self.pos, self.eof = "", 0, False
        self.reads = 0  # pieces read so far
        self.failed_batch = (-1, -1)  # (reads, pos) where _batch last found no run of elements

    def more(self) -> bool:
        """Read the next piece; False at the end of the bytes."""
        if self.eof:
            return False
        self.reads += 1
        if self.pos > WINDOW:  # what was read is dropped
            self.buf, self.pos = self.buf[self.pos:], 0
        while True:
            chunk = next(self._chunks, None)
            if chunk is None:
                self.buf += self._decoder.decode(b"", final=True)
                self.eof = True
                return True
            text = self._decoder.decode(bytes(chunk))
            if text:
                self.buf += text
                return True

    def ahead(self) -> int:
        return len(self.buf) - self.pos

    def fill(self) -> None:
        """Read on until a value's worth is ahead (_reach), or to the end: a value cut off by the
        end of the window costs a failed parse, and json's error counts the window's lines."""
        while self.ahead() < _reach() and self.more():
            pass

    def skip_space(self) -> None:
        while True:
            self.pos = _SPACES.match(self.buf, self.pos).end()
            if self.pos < len(self.buf) or not self.more():
                return

    def peek(self) -> str:
        self.skip_space()
        return self.buf[self.pos] if self.pos < len(self.buf) else ""


Runs = Callable[[list], list]


class _Decoder(json.JSONDecoder):
    """The standard library's decoder (its scan_once parses), carrying `runs` beside the hook."""

    def __init__(self, object_hook: Callable[[dict], object] | None, runs: Runs | None) -> None:
        super().__init__(object_hook=object_hook)
        self.runs = runs


def loads_in_pieces(chunks: Iterable[bytes], object_hook: Callable[[dict], object] | None = None,
                    undo: Callable[[], Callable[[], None]] | None = None, runs: Runs | None = None) -> object:
    """json.loads(b"".join(chunks), object_hook=object_hook) for UTF-8 text (ValueError where it
    raises one; a byte order mark is refused, as in a str). `undo`: called before a value is
    tried, returns what puts the hook's state back if that value has to be read again. `runs`:
    given each run of an array's elements once they are parsed for good (never a value tried
    again), what it returns stands for them (see arrays_replaced; the arrays inside an element
    too large for the window are given as it is read, before the run of it)."""
    text = _Text(chunks)
    decoder = _Decoder(object_hook=object_hook, runs=runs)
    value = _value(text, decoder, undo, probe=True)
    text.skip_space()
    if text.ahead():
        raise ValueError("extra data after the JSON document")
    return value


def _value(text: _Text, decoder: _Decoder, undo, probe: bool = False) -> object:
    """The next value. An object or array that does not end in the text read so far is walked
    (_container); `probe`: it is likely large (a value of a walked object), so it is first tried
    on a slice of the text only, not parsed up to the end of the window before it is walked."""
    text.skip_space()
    if text.pos < len(text.buf) and text.buf[text.pos] not in '{["':
        # a number or literal: read on to what ends it ("2." would parse as 2)
        while not text.eof and not _END_OF_SCALAR.search(text.buf, text.pos):
            text.more()
    scan = decoder.scan_once  # what raw_decode calls
    text.fill()
    while True:
        container = text.pos < len(text.buf) and text.buf[text.pos] in "{["
        restore = undo() if undo else None
        try:
            reach = _reach()
            if probe and container and text.ahead() > reach:
                value, end = scan(text.buf[text.pos:text.pos + reach], 0)
                end += text.pos
            else:
                value, end = scan(text.buf, text.pos)
                if end == len(text.buf) and not text.eof:
                    raise _Incomplete  # a number may go on in the next piece
            text.pos = end
            return arrays_replaced(value, decoder.runs)
        except (ValueError, StopIteration, _Incomplete):
            if restore:
                restore()
            if container:  # not ended within what was tried: walked here (and refused there if wrong)
                return _container(text, decoder, undo)
            if text.eof:
                raise ValueError("not JSON") from None
            text.more()


def _container(text: _Text, decoder: _Decoder, undo) -> object:
    """An object or array longer than the window, walked here; its values parsed by _value."""
    is_object = text.buf[text.pos] == "{"
    close = "}" if is_object else "]"
    text.pos += 1
    out: dict | list = {} if is_object else []
    if text.peek() == close:
        text.pos += 1
        return _hooked(out, decoder) if is_object else out
    while True:
        if is_object:
            key = _key(text)
            if text.peek() != ":":
                raise ValueError("':' expected")
            text.pos += 1
            out[key] = _value(text, decoder, undo, probe=True)
        else:
            batch = _batch(text, decoder, undo) if out else None  # once an element was read
            if batch is None:
                out.extend(_element(text, decoder, undo))
            else:
                out.extend(arrays_replaced(batch, decoder.runs))
        found = _SEPARATOR.match(text.buf, text.pos)  # the usual case: ",", "]" or "}" is read already
        if found:
            sep, text.pos = found.group(1), found.end()
        else:
            sep = text.peek()
            text.pos += 1
        if sep == close:
            return _hooked(out, decoder) if is_object else out
        if sep != ",":
            raise ValueError("',' expected")


def _reach() -> int:
    """Characters a value of a walked object is first tried on (and read ahead before a value)."""
    return max(16, WINDOW >> 4)


BATCH = 1 << 12  # characters: fewer left in the window are read an element at a time


def _batch(text: _Text, decoder: _Decoder, undo) -> list | None:
    """The elements of a walked array that end in the text read, parsed at once: its text up to
    the last "}" read, in brackets. None where that is not a run of whole elements (the "}" ends
    an object inside an element, or a string, or there is an error): the caller reads one
    element then. A prefix of the array's text that parses in brackets is a run of its first
    elements, as JSON is read left to right without looking back."""
    buf = text.buf
    pos = _SPACES.match(buf, text.pos).end()
    if pos >= len(buf) or buf[pos] != "{":
        return None
    cut = buf.rfind("}", pos) + 1
    if cut - pos < BATCH:
        return None
    if text.failed_batch == (text.reads, pos):
        return None  # tried at this place already
    restore = undo() if undo else None
    try:
        values, end = decoder.scan_once("[" + buf[pos:cut] + "]", 0)
        # ended by the "]" put after it, or by the array's own "]" (then these are its last elements)
        text.pos = cut if end == cut - pos + 2 else pos + end - 2
        return values
    except (ValueError, StopIteration):
        pass
    if restore:
        restore()
    text.failed_batch = (text.reads, pos)
    return None


def _element(text: _Text, decoder: _Decoder, undo) -> list:
    """An element of a walked array, as a run of one (given to `runs`): _value, with the usual
    case (an object that ends in the text read) taken first."""
    text.fill()
    buf = text.buf
    pos = _SPACES.match(buf, text.pos).end()
    if pos < len(buf) and buf[pos] == "{":
        restore = undo() if undo else None
        try:
            value, text.pos = decoder.scan_once(buf, pos)  # its "}" ends it: no number runs on
            return arrays_replaced([value], decoder.runs)
        except (ValueError, StopIteration):
            if restore:
                restore()
            text.pos = pos
            value = _container(text, decoder, undo)  # as _value would, without trying it again
    else:
        text.pos = pos
        value = _value(text, decoder, undo)
    # its own arrays were given to `runs` as it was read: the run of it only
    return [value] if decoder.runs is None else decoder.runs([value])


def _key(text: _Text) -> str:
    if text.peek() != '"':
        raise ValueError("a key expected")
    text.fill()
    while True:
        try:
            key, end = scanstring(text.buf, text.pos + 1, True)
            text.pos = end
            return key
        except ValueError:
            if text.eof:
                raise
            text.more()


def _hooked(obj: dict, decoder: _Decoder) -> object:
    return decoder.object_hook(obj) if decoder.object_hook else obj


def arrays_replaced(value: object, runs: Runs | None) -> object:
    """`value` (parsed whole) with each of its arrays given to `runs` as one run, outer arrays
    first, in the order of the text: what `runs` returns stands for the array's elements; only
    an array it returns as it was (the same list) has its elements' arrays given in turn."""
    if runs is None:
        return value
    if type(value) is list:
        replaced = runs(value)
        if replaced is value:
            for i, element in enumerate(value):
                if type(element) is list or type(element) is dict:
                    value[i] = arrays_replaced(element, runs)
        return replaced
    if type(value) is dict:
        for key, element in value.items():
            if type(element) is list or type(element) is dict:
                value[key] = arrays_replaced(element, runs)
    return value
