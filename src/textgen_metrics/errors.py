"""The errors of a user's mistake, by class: what the front ends recognise them by (the command
line's exit status 2, the Spaces' "Row 2, references: ..." and "Options: ..." sentences), never by
their wording.

- :class:`InputError` (a ``ValueError``): a value of an input; ``argument`` names it, ``index``
  the example (from 0) and ``item`` the text in that example's list, where they apply.
  :class:`InputTypeError` is also a ``TypeError``: a value of the wrong type.
- :class:`CellError` (an ``InputError``): a cell of a file, named as an editor shows it: the
  file, its line (CSV/TSV: the header is line 1; JSONL: the record's line; a JSON list,
  Parquet or a datasets folder: "row N" from 1) and its column (the field).
- :class:`OptionError` (a ``ValueError``): an option's value, or an option the metric does not
  take; ``option`` names it where one does. :class:`OptionTypeError` is also a ``TypeError``.

The message is ``argument[index][item]: reason`` (``option: reason``), as every error of the
package has always read.
"""

from __future__ import annotations

__all__ = ["InputError", "InputTypeError", "CellError", "OptionError", "OptionTypeError"]


class InputError(ValueError):
    """A value of an input that cannot be scored: ``argument``, ``index``, ``item``, ``reason``."""

    def __init__(self, reason: str, argument: str | None = None, index: int | None = None,
                 item: int | None = None) -> None:
        self.reason, self.argument, self.index, self.item = reason, argument, index, item
        label = (argument or "") + ("" if index is None else f"[{index}]") + ("" if item is None else f"[{item}]")
        super().__init__(f"{label}: {reason}" if label else reason)


class InputTypeError(InputError, TypeError):
    """An input value of the wrong type."""


class CellError(InputError):
    """A cell of a file that cannot be scored: ``source`` (the file), ``location`` (``"line 3"``,
    or ``"row 3"`` where the file has no lines), ``field`` (the column), ``reason``; and as an
    ``InputError``, the ``argument`` (the metric's input), ``index`` (the row, from 0) and
    ``item`` (the text in the cell's list, from 0). The message reads
    ``source: line 3, column 'references', item 2: reason``."""

    def __init__(self, reason: str, source: str, location: str, field: str, argument: str | None = None,
                 index: int | None = None, item: int | None = None) -> None:
        super().__init__(reason, argument, index, item)
        self.source, self.location, self.field = source, location, field
        which = "" if item is None else f", item {item + 1}"
        self.args = (f"{source}: {location}, column {field!r}{which}: {reason}",)


class OptionError(ValueError):
    """An option's value that the metric does not take (or an option it does not have)."""

    def __init__(self, message: str, option: str | None = None) -> None:
        self.option = option
        super().__init__(message)


class OptionTypeError(OptionError, TypeError):
    """An option's value of the wrong type."""
